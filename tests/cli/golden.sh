#!/usr/bin/env bash
# golden.sh: run, sweep, validate and plan on the bundled data (text, JSON, CSV; the commands
# are scripts/golden.sh) print byte for byte what tests/data/golden/ holds. Those files were
# written by the build before the source moved into its layer folders, so a move, a rename or
# a refactoring that changes a byte of an answer fails here. A change meant to change these
# outputs regenerates them (`make golden`) and says in its commit which and why.
. "$(dirname "$0")/lib.sh"

G=tests/data/golden
expect_ok "the golden commands run" scripts/golden.sh "$TPSIM" "$TMP/now"
n=0
for f in "$G"/*; do
    case $f in *.md) continue ;; esac
    n=$((n + 1))
    name=${f##*/}
    if cmp -s "$f" "$TMP/now/$name"; then ok
    else bad "$name differs from $G/$name: $(diff "$f" "$TMP/now/$name" 2>&1 | head -3 | tr '\n' ' ')"
    fi
done
check "every golden file has its command (14 files, found $n)" test "$n" -eq 14
extra=$(for f in "$TMP/now"/*; do [ -e "$G/${f##*/}" ] || echo "${f##*/}"; done)
check "every output has its golden file${extra:+: $extra}" test -z "$extra"

finish
