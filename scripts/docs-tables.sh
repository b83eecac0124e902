#!/usr/bin/env bash
# scripts/docs-tables.sh [--check] TPSIM [NAME...]: the generated tables of docs/results.md
# (make docs), each written between its markers
#   <!-- BEGIN generated: NAME ... -->  and  <!-- END generated: NAME -->
# from the script or file that makes it, so a table on the page is never typed by hand:
#   validation-table  validate/table.sh (every hypothesis, four protocols: what make run prints)
#   engines-digest    the digest of docs/validation-engines.md (make validation-engines)
#   whatif-table      scripts/whatif-table.sh (one tpsim run per row, eager and graphs)
#   atlas-table       docs/atlas.csv's step times, eager / graphs, per model, GPU and TP degree
# NAMEs default to all four. --check writes nothing: it says which tables differ from what
# their source makes now (exit 1), for a test; engines-digest and atlas-table run no tpsim.
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
tpsim=${1:?usage: scripts/docs-tables.sh [--check] TPSIM [NAME...]}
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(validation-table engines-digest whatif-table atlas-table)
case $tpsim in /*) ;; *) tpsim=$PWD/$tpsim ;; esac
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for n in "${names[@]}"; do
    case $n in
    validation-table) validate/table.sh "$tpsim" "$tmp/validation" >"$tmp/$n" ;;
    whatif-table) scripts/whatif-table.sh "$tpsim" >"$tmp/$n" ;;
    engines-digest)
        sed -n '/^## Digest/,/^## Every row/p' docs/validation-engines.md | grep '^|' >"$tmp/$n" ;;
    atlas-table)
        python3 - docs/atlas.csv >"$tmp/$n" <<'PY'
import csv, sys
cells = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    key = (r["model"], r["hardware"])
    cells.setdefault(key, {}).setdefault(r["tp"], {})[r["mode"]] = float(r["step_ms_mean"])
print("| model on GPU | TP-1 | TP-2 | TP-4 | TP-8 |")
print("|---|---|---|---|---|")
for (model, gpu), by_tp in cells.items():
    row = []
    for tp in ("1", "2", "4", "8"):
        m = by_tp.get(tp)
        row.append(f"{m['eager']:.2f} / {m['graphs']:.2f}" if m else "does not fit")
    print(f"| {model} on {gpu} | " + " | ".join(row) + " |")
PY
        ;;
    *) echo "docs-tables.sh: no table named $n" >&2; exit 2 ;;
    esac
    [ -s "$tmp/$n" ] || { echo "docs-tables.sh: $n came out empty" >&2; exit 1; }
done

python3 - "$check" docs/results.md "$tmp" "${names[@]}" <<'PY'
import os, sys
check, page, tmp, names = sys.argv[1] == "1", sys.argv[2], sys.argv[3], sys.argv[4:]
lines = open(page, encoding="utf-8").read().split("\n")
differ = []
for n in names:
    begin = [i for i, l in enumerate(lines) if l.startswith(f"<!-- BEGIN generated: {n} ")]
    end = [i for i, l in enumerate(lines) if l == f"<!-- END generated: {n} -->"]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        sys.exit(f"docs-tables.sh: {page} has no one pair of markers for {n}")
    # blank lines around the table: a markdown table directly beside an HTML comment may
    # not be read as one
    new = [""] + open(os.path.join(tmp, n), encoding="utf-8").read().rstrip("\n").split("\n") + [""]
    if lines[begin[0] + 1:end[0]] != new:
        differ.append(n)
        lines[begin[0] + 1:end[0]] = new
if check:
    for n in differ:
        print(f"docs-tables.sh: {page}'s {n} is not what its source makes now (make docs)")
    sys.exit(1 if differ else 0)
with open(page + ".tmp", "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
os.replace(page + ".tmp", page)
print(f"docs-tables.sh: {page}: " + (", ".join(differ) + " rewritten" if differ else "unchanged"))
PY
