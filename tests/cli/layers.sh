#!/usr/bin/env bash
# layers.sh: the include layering the build enforces (docs/DESIGN.md). Bottom to top: base/
# (the ground), sim/ (the step model), calibrate/ and validate/ (siblings: neither includes the
# other), cmd/ (the commands and main). Each #include "X" of a folder must name a header of
# its own layer or one below. The Makefile compiles each folder with only those include paths,
# so an upward include also fails the build; this test names the offending line. It also
# checks the fake violation it plants is caught, and that the Makefile's include paths are the
# ones listed here.
. "$(dirname "$0")/lib.sh"

# upward ALLOWED_FOLDERS... : every quoted include of the files given on stdin resolves in one
# of the allowed folders (or beside the file); prints FILE:LINE: include "X" for each that does not
upward() {
    local f n h ok d
    while IFS=: read -r f n h; do
        h=${h#*\"}
        h=${h%%\"*}
        ok=0
        for d in "${f%/*}" "$@"; do [ -f "$d/$h" ] && { ok=1; break; }; done
        [ $ok -eq 1 ] || echo "$f:$n: include \"$h\""
    done < <(xargs -r grep -Hn '^#include "')
}

# layer FOLDER BELOW...: FOLDER's sources include only FOLDER's headers and BELOW's, and the
# Makefile compiles FOLDER with exactly those include paths
layer() {
    local folder=$1 up inc d
    shift
    up=$(ls "$folder"/*.[ch] "$folder"/*.cu 2>/dev/null | upward "$@")
    check "$folder/ includes only ${*:+$*/ and }$folder/${up:+: $up}" test -z "$up"
    inc=""
    for d in "$@" "$folder"; do inc="$inc -I$d"; done
    check "the Makefile compiles $folder/ with$inc" \
        grep -qE "^INC_$folder +:=$inc\$" Makefile
}
layer base
layer sim base
layer calibrate base sim
layer validate base sim
layer cmd base sim calibrate validate
# every C source of the binary is in one of the five folders
stray=$(find . -path ./build -prune -o -path ./tests -prune -o -path ./.git -prune -o \
    -name '*.c' -print | grep -vE '^\./(base|sim|calibrate|validate|cmd)/[^/]*\.c$')
check "no C source outside the five layers and tests/${stray:+: $stray}" test -z "$stray"
# main() lives on top, with the command table
check "main is in cmd/" match cmd/main.c '^int main\('
mains=$(grep -l '^int main(' base/*.c sim/*.c validate/*.c 2>/dev/null)
check "no main below cmd/${mains:+: $mains}" test -z "$mains"

# the plotter is layered too: plot_files.c calls no other part of it, the figures (plot_mvp.c,
# plot_bars.c, plot_plan.c, plot_xy.c) call only plot_files.c, plot.c drives them all
defined() { sed -n 's/^[a-z][a-z_ *]* \**\(plot_[a-z_]*\)(.*/\1/p' "$@" | sort -u; }
calls() { # calls FILE FUNCS...: the FUNCS that FILE calls (grep -E "\bFUNC\(" finds it: here
    # one grep lists every word a "(" follows, the whole word, so FUNC is one iff \bFUNC\( is)
    local f=$1 fn t; shift
    local -A called=()
    while IFS= read -r t; do called[${t%(}]=1; done < <(grep -oE '[[:alnum:]_]+\(' "$f")
    for fn in "$@"; do [ -n "${called[$fn]:-}" ] && echo "$fn"; done
    return 0
}
figures="validate/plot_mvp.c validate/plot_bars.c validate/plot_plan.c validate/plot_xy.c"
up=$(calls validate/plot_files.c $(defined $figures validate/plot.c) | tr '\n' ' ')
check "plot_files.c calls no other part of the plotter${up:+: $up}" test -z "$up"
for f in $figures; do
    others=$(for g in $figures validate/plot.c; do [ "$g" = "$f" ] || echo "$g"; done)
    up=$(calls "$f" $(defined $others) | tr '\n' ' ')
    check "$f calls only plot_files.c${up:+: $up}" test -z "$up"
done
check "the plotter's functions are found (plot_check in plot_files.c)" \
    grep -qx plot_check <(defined validate/plot_files.c)

mkdir -p "$TMP/fake/sim"
printf '#include "err.h"\n#include "validate.h"\n' > "$TMP/fake/sim/x.c"
: > "$TMP/fake/sim/err.h"
planted=$(cd "$TMP/fake" && echo sim/x.c | upward base sim)
check "a planted upward include is named (got: $planted)" test "$planted" = 'sim/x.c:2: include "validate.h"'
planted=$(echo validate/x.c | (mkdir -p "$TMP/fake2/validate" &&
    printf '#include "kfit.h"\n' > "$TMP/fake2/validate/x.c" && cd "$TMP/fake2" &&
    ln -s "$OLDPWD/base" base && ln -s "$OLDPWD/sim" sim && upward base sim))
check "a sibling include (validate/ -> calibrate/) is named (got: $planted)" \
    test "$planted" = 'validate/x.c:1: include "kfit.h"'
# the build itself refuses one: sim/ compiles without validate/ on its include path
check "the build refuses an upward include in sim/" bash -c "
    printf '#include \"validate.h\"\n' > '$TMP/up.c'
    ! ${CC:-cc} -fsyntax-only -Ibase -Isim '$TMP/up.c' 2>/dev/null"

finish
