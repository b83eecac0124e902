#!/usr/bin/env bash
# csv_pandas.sh: every CSV tpsim writes, and every CSV it ships, read with pandas' defaults
# (pandas.read_csv(path), nothing set): parsed whole, its header the file's first line, and no
# column typed int64 that holds a float anywhere: a float prints as one in every row (a float
# zero written "0" made pandas type the whole column as integers). Debian's python3-pandas
# (make deps installs it); without it the test says so and passes. Left out: tests/fuzz seeds,
# the deliberately broken fixtures, and the inputs whose formats carry '#' lines that tpsim
# reads (tpsim-nccl-sweep's logs, AIConfigurator's tables under tests/data/aic/, the XLA table
# in their layout under tests/data/xla-h100/). The CSVs
# written, docs/*.csv and validate/*.csv are read with Python's csv defaults too.
. tests/cli/lib.sh
S=scenarios/eager-host-dispatch.yaml
B200=tests/data/TraceLens__b200__vllm_tp8_eager_step.json.gz
W=$TMP/w
mkdir -p "$W"

# what tpsim writes: sweep (both modes, TP-1 with no all-reduce: zero columns), plan with and
# without intervals, sweep and plan parts (--shard) and their sidecars, a merged sweep, trace
# import --kernels, validate --scan (through 0);
# fit-kernels' measured grids are the shipped models/kernels/*.csv (the bundled subsets of
# tests/data/aic choose no grid)
expect_ok "sweep" "$TPSIM" sweep $S --tp 1,2 --mode eager,graphs --steps 2 --quiet -o "$W/sweep.csv"
expect_ok "plan" "$TPSIM" plan $S --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 4 --steps 2 \
    --warmup 0 --quiet --format csv -o "$W/plan.csv"
expect_ok "plan, no intervals" "$TPSIM" plan $S --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 4 \
    --steps 2 --warmup 0 --quiet --no-intervals --format csv -o "$W/plan-ni.csv"
for i in 0 1; do
    expect_ok "sweep part $i" "$TPSIM" sweep $S --tp 1,2,4 --steps 2 --quiet --shard $i/2 \
        -o "$TMP/part$i.csv"
done
expect_ok "merge" "$TPSIM" merge "$W/merged.csv" "$TMP/part0.csv" "$TMP/part1.csv"
expect_ok "trace import --kernels" "$TPSIM" trace import "$B200" --kernels "$W/kernels.csv"
expect_ok "validate --scan" "$TPSIM" validate $S --scan "$W/scan" --quiet
expect_ok "validate --scan, 1 parameter" "$TPSIM" validate scenarios/paper-additive.yaml \
    --scan "$W/scan1" --quiet
expect_ok "plan part" "$TPSIM" plan $S --gpus 8 --tpot-ms 30 --tp 4,8 --batch-max 4 --steps 2 \
    --warmup 0 --quiet --format csv --shard 1/2 -o "$W/plan-part1.csv"
# the parts themselves (and their sidecars, CSVs too) as a user would read them before merging
cp "$TMP/part0.csv" "$W/sweep-part0.csv"; cp "$TMP/part0.csv.meta" "$W/sweep-part0.meta.csv"
cp "$W/plan-part1.csv.meta" "$W/plan-part1.meta.csv"
written=("$W"/*.csv "$W"/scan/*.csv "$W"/scan1/*.csv)
shipped=($(git ls-files '*.csv' | grep -v -e '^tests/fuzz/' -e '^tests/data/arfit-bad-' \
    -e '^tests/data/aic/' -e '^tests/data/aic-allreduce' -e '^tests/data/xla-h100/'))
check "some shipped CSVs found (${#shipped[@]})" test "${#shipped[@]}" -gt 10
# with Python's csv defaults too (this check was tests/cli/json_schema.sh's, on the same kinds of
# file): the written ones, docs/*.csv and validate/*.csv
pyq "every CSV has a header row and rows of its width, no comment lines" \
    "${written[@]}" docs/*.csv validate/*.csv <<'PY'
import csv, sys
for f in sys.argv[1:]:
    rows = list(csv.reader(open(f, newline="")))
    assert len(rows) >= 2, (f, "no data rows")
    head = rows[0]
    assert all(h and not h.startswith("#") for h in head), (f, head)
    assert len(set(head)) == len(head), (f, "duplicate column")
    for i, r in enumerate(rows[1:], 2):
        assert len(r) == len(head), (f, i, len(r), len(head))
        assert not r[0].startswith("#"), (f, i)
PY
pyq "pandas reads every CSV written (${#written[@]}) and shipped, floats as floats" \
    "${written[@]}" "${shipped[@]}" <<'PY'
import csv, re, sys
try:
    import pandas
except ImportError:
    print("csv_pandas.sh: pandas is not installed (apt-get install python3-pandas): skipped",
          file=sys.stderr)
    sys.exit(0)
FLOAT = re.compile(r"-?[0-9]*\.[0-9]+([eE][-+]?[0-9]+)?|-?[0-9]+[eE][-+]?[0-9]+|-?inf|nan")
INT = re.compile(r"-?[0-9]+")
bad = []
for path in sys.argv[1:]:
    try:
        d = pandas.read_csv(path)
    except Exception as e:
        bad.append(f"{path}: {type(e).__name__}: {e}")
        continue
    head = next(csv.reader(open(path, newline="")))
    if head and head[0].startswith("#"):
        bad.append(f"{path}: a '#' line where the header should be (pandas takes it as one)")
        continue
    if list(d.columns) != head:
        bad.append(f"{path}: pandas' columns {list(d.columns)[:4]}... are not the header {head[:4]}...")
        continue
    rows = [r for r in csv.reader(open(path, newline="")) if r][1:]
    if len(d) != len(rows):
        bad.append(f"{path}: pandas read {len(d)} rows of {len(rows)}")
    for j, col in enumerate(head):
        vals = [r[j] for r in rows if j < len(r) and r[j] != ""]
        fl = [v for v in vals if FLOAT.fullmatch(v)]
        whole = [v for v in vals if INT.fullmatch(v)]
        if fl and whole:
            bad.append(f"{path}: column {col}: floats ({fl[0]}) and whole numbers ({whole[0]})")
        if fl and str(d[col].dtype).startswith("int"):
            bad.append(f"{path}: column {col} typed {d[col].dtype}")
print("\n".join(bad), file=sys.stderr)
assert not bad, f"{len(bad)} problems (listed above)"
PY

finish
