#!/usr/bin/env bash
# csv_columns.sh: scripts/csv-columns.sh (make run's what-if table) on CSV whose quoting is
# known by construction, and on a real sweep.
. "$(dirname "$0")/lib.sh"
cc=scripts/csv-columns.sh
printf 'a,b,c\n1,"x, y",3\n22,"say ""hi""",\n' >"$TMP/q.csv"
expect_ok "quoted fields" "$cc" "$TMP/q.csv" c b a
# by hand: widths 1 (c), 10 (say "hi"), 2 (a); two spaces between columns; the last unpadded
printf 'c  b         a\n3  x, y      1\n   say "hi"  22\n' >"$TMP/want"
check "a comma inside quotes stays in its field, doubled quotes become one" cmp -s "$TMP/out" "$TMP/want"
expect_fail2 "a column the header lacks" "no column nope" "$cc" "$TMP/q.csv" a nope
expect_ok "a sweep" "$TPSIM" sweep scenarios/eager-host-dispatch.yaml --tp 8 --batch 1 --quiet -o "$TMP/s.csv"
expect_ok "its domain marks" "$cc" "$TMP/s.csv" tp domain_marks
check "the mark's comma is kept (TP {2, 4})" match "$TMP/out" '^8   TP-8 is outside the validated TP \{2, 4\}$'
finish
