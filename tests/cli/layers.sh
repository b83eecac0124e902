#!/usr/bin/env bash
# layers.sh: the include layering the build enforces (docs/DESIGN.md). sim/ includes only sim/
# headers, calibrate/ only sim/ and calibrate/, validate/ any of the three: each #include "X"
# of a folder must name a header of its own layer or one below. The Makefile compiles each
# folder with only those include paths, so an upward include also fails the build; this test
# names the offending line. It also checks the fake violation it plants is caught.
. "$(dirname "$0")/lib.sh"

# layers ALLOWED_FOLDERS... : every quoted include of the files given on stdin resolves in one
# of the allowed folders (or beside the file); prints FILE:LINE: include "X" for each that does not
upward() {
    local f n h dir ok d
    while read -r f; do
        dir=$(dirname "$f")
        while IFS=: read -r n h; do
            ok=0
            for d in "$dir" "$@"; do [ -f "$d/$h" ] && ok=1; done
            [ $ok -eq 1 ] || echo "$f:$n: include \"$h\""
        done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
    done
}

up=$(ls sim/*.[ch] | upward sim)
check "sim/ includes only sim/${up:+: $up}" test -z "$up"
up=$(ls calibrate/*.[ch] calibrate/*.cu 2>/dev/null | upward sim calibrate)
check "calibrate/ includes only sim/ and calibrate/${up:+: $up}" test -z "$up"
up=$(ls validate/*.[ch] | upward sim calibrate validate)
check "validate/ includes only sim/, calibrate/ and validate/${up:+: $up}" test -z "$up"
mkdir -p "$TMP/fake/sim"
printf '#include "err.h"\n#include "validate.h"\n' > "$TMP/fake/sim/x.c"
: > "$TMP/fake/sim/err.h"
planted=$(cd "$TMP/fake" && echo sim/x.c | upward sim)
check "a planted upward include is named (got: $planted)" test "$planted" = 'sim/x.c:2: include "validate.h"'
# the build itself refuses one: sim/ compiles without validate/ on its include path
check "the build refuses an upward include in sim/" bash -c "
    printf '#include \"validate.h\"\n' > '$TMP/up.c'
    ! ${CC:-cc} -fsyntax-only -Isim '$TMP/up.c' 2>/dev/null"
check "the Makefile compiles sim/ with -Isim only" grep -q '^INC_sim *:= -Isim$' Makefile

finish
