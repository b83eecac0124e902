#!/usr/bin/env bash
# design.sh: docs/DESIGN.md's "Where an extension goes" rows match the code. Every file a row
# names in backquotes exists (a name with NAME or K in it stands for the file you add: its
# folder must exist), and the rows for a GPU, a hypothesis, a collective model, a protocol, a
# command and a model feature are there. It also checks that a planted missing file is caught.
. "$(dirname "$0")/lib.sh"

# missing DESIGN: every backquoted path of its extension table that does not exist
missing() {
    sed -n '/^## Where an extension goes/,$p' "$1" | grep '^|' |
        grep -oE '`[A-Za-z0-9_./*-]+`' | tr -d '`' |
        grep -E '^(base|sim|calibrate|validate|cmd|tests|models|scenarios|scripts|docs)/' |
        sort -u | while read -r p; do
            case $p in
            *NAME* | *-tpK*) d=$(dirname "$p"); [ -d "$d" ] || echo "$p (folder $d)" ;;
            *'*'*) compgen -G "$p" >/dev/null || echo "$p" ;;
            */) [ -d "$p" ] || echo "$p" ;;
            *) [ -e "$p" ] || echo "$p" ;;
            esac
        done
}

m=$(missing docs/DESIGN.md | tr '\n' ' ')
check "every file DESIGN.md's rows name exists${m:+: missing $m}" test -z "$m"
n=$(sed -n '/^## Where an extension goes/,$p' docs/DESIGN.md | grep -oE '`[a-z]+/[A-Za-z0-9_./*-]+`' |
    sort -u | wc -l)
check "the rows name files (found $n)" test "$n" -ge 60
for row in "a GPU" "a hypothesis" "a collective model" "a validation protocol" "a command" \
    "a model architecture or feature"; do
    check "a row for $row" grep -q "^| $row |" docs/DESIGN.md
done
# a planted row naming a file that is not there is caught
{ cat docs/DESIGN.md; echo '| a thing | `sim/no_such_file.c` |'; } >"$TMP/D.md"
check "a missing file is named" test "$(missing "$TMP/D.md")" = "sim/no_such_file.c"

finish
