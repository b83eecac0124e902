#!/usr/bin/env bash
# csv-columns.sh FILE COLUMN...: the named columns of a CSV file (RFC 4180 quoting, as tpsim
# writes it: a field with a comma or a quote is quoted, quotes doubled) as an aligned table,
# for reading a sweep on a terminal (make run). A column the header lacks is an error, status 2.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: csv-columns.sh FILE COLUMN..." >&2; exit 2; }
file=$1; shift
awk -v want="$*" '
# split one CSV record into f[1..n]; returns n
function csv(line, f,    n, i, c, q, cur) {
    n = 0; cur = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (q) {
            if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ }
            else if (c == "\"") q = 0
            else cur = cur c
        } else if (c == "\"") q = 1
        else if (c == ",") { f[++n] = cur; cur = "" }
        else cur = cur c
    }
    f[++n] = cur
    return n
}
NR == 1 {
    n = csv($0, h)
    m = split(want, w, " ")
    for (j = 1; j <= m; j++) {
        idx[j] = 0
        for (i = 1; i <= n; i++) if (h[i] == w[j]) idx[j] = i
        if (!idx[j]) {
            printf "csv-columns.sh: %s: no column %s\n", FILENAME, w[j] > "/dev/stderr"
            bad = 1
            exit 2
        }
        cell[NR, j] = w[j]; wid[j] = length(w[j])
    }
    next
}
{
    csv($0, f)
    for (j = 1; j <= m; j++) {
        cell[NR, j] = f[idx[j]]
        if (length(f[idx[j]]) > wid[j]) wid[j] = length(f[idx[j]])
    }
}
END {
    if (bad) exit 2
    for (r = 1; r <= NR; r++) {
        line = ""
        for (j = 1; j < m; j++) line = line sprintf("%-" wid[j] "s  ", cell[r, j])
        print line cell[r, m]
    }
}' "$file"
