#!/usr/bin/env bash
# engine_fields.sh: a field of engine_config that a back end neither honours nor refuses is a
# build error (engine.h ENGINE_CONFIG_FIELDS, engine_rules.h ENGINE_BACKEND_FIELDS). Each case
# edits a copy of sim/ (and base/'s headers) and compiles the two back ends, engine_events.c and maxplus.c, with the
# Makefile's warnings; the copy as it is must build, so the failures below are the check's.
. "$(dirname "$0")/lib.sh"

FLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -fsyntax-only"
# builds COPY FILE: compiles FILE (engine_events.c or maxplus.c) of the copy; errors in COPY.FILE.err
builds() { ${CC:-cc} $FLAGS "$TMP/$1/$2" 2>"$TMP/$1.$2.err"; }
# fails_naming COPY FILE FIELD: FILE does not build, and the error names FIELD's enumerator
fails_naming() { ! builds "$1" "$2" && grep -q "engine_field_listed_$3" "$TMP/$1.$2.err"; }
# fails_mentioning COPY FILE WORD: FILE does not build, and an error names WORD
fails_mentioning() { ! builds "$1" "$2" && grep -q "error.*$3" "$TMP/$1.$2.err"; }
# copy COPY: a fresh copy of base/'s and sim/'s headers and the two back ends
copy() { mkdir -p "$TMP/$1" && cp base/*.h sim/*.h sim/engine_events.c sim/maxplus.c "$TMP/$1/"; }
# edit COPY FILE SED: applies SED to the copy's FILE; fails unless the file changed
edit() {
    cp "$TMP/$1/$2" "$TMP/$1/$2.orig" && sed -i "$3" "$TMP/$1/$2" &&
        ! cmp -s "$TMP/$1/$2" "$TMP/$1/$2.orig"
}
add_field='s/^\(    X(void \*, on_step_ctx)\)$/\1 X(int, dummy)/'

copy ok
check "the event engine builds as it is" builds ok engine_events.c
check "the recursion builds as it is" builds ok maxplus.c

# a new field that neither back end lists
copy new
check "a dummy field is added to ENGINE_CONFIG_FIELDS" edit new engine.h "$add_field"
check "the event engine does not build, naming the field" fails_naming new engine_events.c dummy
check "the recursion does not build, naming the field" fails_naming new maxplus.c dummy

# honoured by the event engine only: the recursion still does not build
copy ev
edit ev engine.h "$add_field"
check "the dummy is added to EV_HONOURS" edit ev engine_events.c 's/^#define EV_HONOURS(X) /&X(dummy) /'
check "the event engine builds once it honours the field" builds ev engine_events.c
check "the recursion still does not build" fails_naming ev maxplus.c dummy

# refused by the recursion: it builds (maxplus_refusal then tests the field)
copy mp
edit mp engine.h "$add_field"
check "the dummy is added to MP_REFUSES" \
    edit mp maxplus.c 's/^#define MP_REFUSES(X) /&X(dummy, "a dummy") /'
check "the recursion builds once it refuses the field" builds mp maxplus.c

# a listed name that is no field, and a field listed twice
copy stale
check "a stale name is added to MP_HONOURS" \
    edit stale maxplus.c 's/^#define MP_HONOURS(X) /&X(nosuch) /'
check "a listed name that is no field does not build, naming it" \
    fails_mentioning stale maxplus.c nosuch
copy twice
check "trace is listed a second time in EV_HONOURS" \
    edit twice engine_events.c 's/^#define EV_HONOURS(X) /&X(trace) /'
check "a field listed twice does not build, naming it" fails_naming twice engine_events.c trace

finish
