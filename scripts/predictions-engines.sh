#!/usr/bin/env bash
# scripts/predictions-engines.sh TPSIM DIR: the predictions registered on 2026-12-03 (make
# predictions), written from scenarios/vllm-measured.yaml as it stands, before any end-to-end
# benchmark of these cells was looked at. Two files in DIR:
#   predictions-2026-12-03-engines.csv  the cells registered before (docs/predictions.csv:
#       Llama-3.1-70B BF16 under CUDA graphs, TP-4, 4xH100 SXM at batch 1 and 16 x context
#       192..3072, 4xH200 at batch 8, context 96), re-predicted on the measured GPU models
#       (AIConfigurator's kernel tables per GPU, the measured all-reduce per GPU and TP degree)
#       under each engine file (vllm-v0, vllm-v1, vllm-v1-async);
#   predictions-2026-12-03-tp8.csv  TP-8 on 8xH100 SXM and 8xH200 SXM, batch 1, 8 and 32,
#       context 2048, eager and CUDA graphs (the engine's graph mode, full), each engine.
# predicted_ms: the scenario with --set engine=E; on H200 the hardware, kernel and all-reduce
# files swapped for H200's (models/hw/h200.yaml, models/kernels/h200-sxm.yaml,
# models/allreduce/h200-sxm-tp*.yaml). The host time per eager launch (the scenario's one
# free parameter) is fitted under each engine on the study's eager H100 grid (tpsim validate,
# its fit.cells), its value and 95% profile in the launch columns; the H200 rows keep the
# H100 value: ASSUMED (the same host and software per launch, nothing GPU-side).
# Interval: the same cell at the ends of the ranges the sources leave open, all at once (a
# range, not a confidence level):
#   lo: every kernel class's time times (1 - its held-out MAPE) (grid classes: every measured
#       time in the table, and the fallback law's coefficients), schedule and broadcast at 0,
#       the launch cost at its profile's low end;
#   hi: every class times (1 + its held-out MAPE), schedule and broadcast at 1.74 ms each (the
#       bound vLLM #6854's ~4 ms V0 host bubble leaves, as docs/predictions.csv; V1's own phases
#       are smaller, so it bounds them too), the launch cost at its profile's high end.
# One token per sequence per decode step, so ms per output token is the step time.
# Deterministic: `make predictions` rewrites both files byte for byte. PRED_ENGINES (for the
# test only) limits the engines, and then writes only those rows.
set -euo pipefail
tpsim=${1:?usage: scripts/predictions-engines.sh TPSIM DIR}
dir=${2:?usage: scripts/predictions-engines.sh TPSIM DIR}
scn=scenarios/vllm-measured.yaml
read -r -a engines <<<"${PRED_ENGINES:-vllm-v0 vllm-v1 vllm-v1-async}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# the kernel calibrations at both ends: k-GPU-{lo,hi}.yaml with their grids beside them
python3 - "$stage" models/kernels/h100-sxm-aic.yaml:h100 models/kernels/h200-sxm.yaml:h200 <<'PY'
import os, re, sys
stage = sys.argv[1]
def split_fields(body):  # "k: v, k: "a, b", ..." -> [(k, v)], commas inside quotes kept
    out, cur, quoted = [], "", False
    for ch in body:
        if ch == '"': quoted = not quoted
        if ch == "," and not quoted:
            out.append(cur.strip()); cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [f.split(": ", 1) for f in out]
for spec in sys.argv[2:]:
    kfile, gpu = spec.split(":")
    lines = open(kfile).read().split("\n")
    start = lines.index("classes:")
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    entry = re.compile(r"^  (\w+): \{(.*)\}$")
    cls = {}
    for i in range(start + 1, end):
        if not lines[i].strip() or lines[i].lstrip().startswith("#"):
            continue
        m = entry.match(lines[i])
        assert m, lines[i]
        cls[m.group(1)] = (i, split_fields(m.group(2)))
    def err_pct(name):
        f = dict(cls[name][1])
        if "from" in f:
            f = dict(cls[f["from"]][1])
        return float(f.get("heldout_mape_pct", f["mape_pct"]))
    for end_, sign in (("lo", -1), ("hi", 1)):
        out = list(lines)
        for name, (i, kvs) in cls.items():
            f = 1 + sign * err_pct(name) / 100
            new = []
            for k, v in kvs:
                if k in ("t0_us", "seq_us"):
                    v = repr(float(v) * f)
                elif k in ("gbps", "tflops", "row_gflops"):
                    v = repr(float(v) / f)
                elif k == "grid":  # every measured time of the table times f
                    src = os.path.join(os.path.dirname(kfile), v)
                    v = f"{gpu}-{end_}.{name}.csv"
                    rows = open(src).read().split("\n")
                    assert rows[0].split(",")[-1] == "us", (src, rows[0])
                    with open(os.path.join(stage, v), "w") as g:
                        for j, r in enumerate(rows):
                            if j and r and not r.startswith("#"):
                                a, t = r.rsplit(",", 1)
                                r = f"{a},{float(t) * f!r}"
                            g.write(r + ("\n" if j < len(rows) - 1 else ""))
                elif k == "grid_fp":
                    continue  # the grid is rescaled here: its fingerprint no longer holds
                else:
                    assert k in ("law", "from", "q", "tile_m", "n", "r2", "mape_pct", "fallback",
                                 "heldout_mape_pct", "fallback_heldout_mape_pct", "source"), (name, k)
                new.append(f"{k}: {v}")
            out[i] = f"  {name}: {{{', '.join(new)}}}"
        open(f"{stage}/k-{gpu}-{end_}.yaml", "w").write("\n".join(out))
PY
h200=(--set hardware=../models/hw/h200.yaml --set kernels=../models/kernels/h200-sxm.yaml
      --set allreduce.0=../models/allreduce/h200-sxm-tp2.yaml
      --set allreduce.1=../models/allreduce/h200-sxm-tp4.yaml
      --set allreduce.2=../models/allreduce/h200-sxm-tp8.yaml)
ph=(host.phases.schedule.mean_us host.phases.broadcast.mean_us)
for e in "${engines[@]}"; do
    "$tpsim" validate "$scn" --set "engine=$e" --format json --jobs 1 >"$stage/fit-$e.json"
    read -r mid lo hi < <(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["folds"][0]
k = "host.launch.mean_us"
print(repr(f["fitted"][k]), *map(repr, f["fitted_95"][k]))' "$stage/fit-$e.json")
    echo "$e $mid $lo $hi" >>"$stage/launch.txt"
    for end in mid lo hi; do
        extra=(--set "engine=$e") k100=() k200=()
        case $end in
            mid) extra+=(--set "host.launch.mean_us=$mid") ;;
            lo) extra+=(--set "host.launch.mean_us=$lo" --set "${ph[0]}=0" --set "${ph[1]}=0")
                k100=(--set "kernels=$stage/k-h100-lo.yaml") k200=(--set "kernels=$stage/k-h200-lo.yaml") ;;
            hi) extra+=(--set "host.launch.mean_us=$hi" --set "${ph[0]}=1740" --set "${ph[1]}=1740")
                k100=(--set "kernels=$stage/k-h100-hi.yaml") k200=(--set "kernels=$stage/k-h200-hi.yaml") ;;
        esac
        sw=("$tpsim" sweep "$scn" --quiet --jobs 1)
        "${sw[@]}" --tp 4 --batch 1,16 --ctx 192,384,768,1536,3072 --mode graphs "${extra[@]}" \
            "${k100[@]}" -o "$stage/old-h100-$e-$end.csv"
        "${sw[@]}" --tp 4 --batch 8 --ctx 96 --mode graphs "${h200[@]}" "${extra[@]}" "${k200[@]}" \
            -o "$stage/old-h200-$e-$end.csv"
        "${sw[@]}" --tp 8 --batch 1,8,32 --ctx 2048 --mode eager,graphs "${extra[@]}" "${k100[@]}" \
            -o "$stage/tp8-h100-$e-$end.csv"
        "${sw[@]}" --tp 8 --batch 1,8,32 --ctx 2048 --mode eager,graphs "${h200[@]}" "${extra[@]}" \
            "${k200[@]}" -o "$stage/tp8-h200-$e-$end.csv"
    done
done
python3 - "$stage" "$dir" "${engines[@]}" <<'PY'
import csv, sys
stage, dst, engines = sys.argv[1], sys.argv[2], sys.argv[3:]
launch = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(f"{stage}/launch.txt")}
head = ["scenario", "serving_engine", "engine_settings", "hardware", "kernel_calibration",
        "calibration", "mode", "graph_mode", "tp", "batch", "ctx", "host_launch_us",
        "host_launch_lo_us", "host_launch_hi_us", "predicted_ms_per_token", "interval_lo_ms",
        "interval_hi_ms"]
for name, parts in (("engines", ("old-h100", "old-h200")), ("tp8", ("tp8-h100", "tp8-h200"))):
    rows = []
    for e in engines:
        for part in parts:
            tabs = {}
            for end in ("mid", "lo", "hi"):
                with open(f"{stage}/{part}-{e}-{end}.csv", newline="") as f:
                    tabs[end] = list(csv.DictReader(f))
            for mid, lo, hi in zip(tabs["mid"], tabs["lo"], tabs["hi"]):
                key = lambda r: (r["mode"], r["tp"], r["batch"], r["ctx"], r["serving_engine"])
                assert key(mid) == key(lo) == key(hi) and mid["serving_engine"] == e, (mid, lo, hi)
                assert mid["fits_in_hbm"] == "true", mid
                p, a, b = (float(r["step_ms_mean"]) for r in (mid, lo, hi))
                assert a <= p <= b, (a, p, b)
                m, l, h = launch[e]
                where = ("H100 launch cost (assumed on H200)" if "h200" in part else "launch cost fitted on the study's eager H100 grid")
                settings = (f"{e} host phases; collective.allreduce auto; measured kernels and all-reduce; "
                            f"{where}")
                rows.append([mid["scenario"], e, settings, mid["hardware"], mid["kernel_calibration"],
                             mid["calibration"], mid["mode"], mid["graph_mode"], mid["tp"],
                             mid["batch"], mid["ctx"], f"{m:.2f}", f"{l:.2f}", f"{h:.2f}",
                             f"{p:.3f}", f"{a:.3f}", f"{b:.3f}"])
    with open(f"{stage}/{name}.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        w.writerows(rows)
PY
mv "$stage/engines.csv" "$dir/predictions-2026-12-03-engines.csv"
mv "$stage/tp8.csv" "$dir/predictions-2026-12-03-tp8.csv"
