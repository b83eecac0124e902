# allreduce_graph.sh: the bundled H100 calibrations' graph-mode and tuner blocks against the
# measured logs they came from, recomputed here in python from the files themselves.
source tests/cli/lib.sh
LOG=tests/data/h100-4gpu-cudagraph-G1-all_reduce_perf.out
TORCH=tests/data/h100-4rank-torch-allreduce-eager-vs-graph.csv
CAL=models/allreduce/h100-sxm-tp4.yaml

# graph.lambda_us: the log's out-of-place times at 16..128 KiB less the file's bytes term
pyq "TP-4 graph lambda is the log's decode-band mean" "$LOG" "$TORCH" "$CAL" <<'PY'
import csv, re, sys
log, torch, cal = sys.argv[1:]
text = open(cal).read()
beta = float(re.search(r"^beta_gbps: (\S+)", text, re.M).group(1)) * 1e9
lam_eager = float(re.search(r"^lambda_us: (\S+)", text, re.M).group(1))
graph = float(re.search(r"^graph:\n  lambda_us: (\S+)", text, re.M).group(1))
t = {}
for line in open(log):
    f = line.split()
    if f and not line.startswith("#"):
        t[int(f[0])] = float(f[5])
band = [16384, 32768, 65536, 131072]
lam = sum(t[b] - 1.5 * b / beta * 1e6 for b in band) / len(band)
assert abs(lam - graph) < 0.005, (lam, graph)
assert lam < lam_eager - 8, (lam, lam_eager)          # graph replay saves > 8 us per call
rows = [r for r in csv.DictReader(l for l in open(torch) if not l.startswith("#"))
        if r["kind"] == "size_sweep" and int(r["bytes"]) in band]
saving = sum(float(r["eager_us"]) - float(r["graph_us"]) for r in rows) / len(rows)
assert 9.7 < saving < 9.9, saving                      # the torch table's like saving, 9.78 us
PY

# tuner: fitted on the same log, its graph overhead is the fit's; run the fit again
expect_ok "fit-allreduce --tuner on the graph log" "$TPSIM" fit-allreduce "$LOG" --tuner 2.27.3 -o "$TMP/g.yaml"
pyq "the bundled tuner block is that fit" "$TMP/g.yaml" "$CAL" <<'PY'
import re, sys
fit, cal = (open(p).read() for p in sys.argv[1:])
def tun(s, k):
    return float(re.search(r"^tuner:\n(?:  .*\n)*?  %s: (\S+)" % k, s, re.M).group(1))
assert tun(fit, "channels") == tun(cal, "channels") == 10
assert abs(tun(fit, "bw_per_channel_gbps") - tun(cal, "bw_per_channel_gbps")) < 1e-3
assert abs(tun(fit, "launch_us") - tun(cal, "graph_launch_us")) < 1e-3      # -G 1: graph mode
lam_e = float(re.search(r"^lambda_us: (\S+)", cal, re.M).group(1))
lam_g = float(re.search(r"^graph:\n  lambda_us: (\S+)", cal, re.M).group(1))
assert abs(tun(cal, "launch_us") - (tun(cal, "graph_launch_us") + lam_e - lam_g)) < 0.01
PY
expect_ok "nccl-tuner against the graph log" "$TPSIM" allreduce --tp 4 --model nccl-tuner --mode graphs --log "$LOG"
check "nccl-tuner within 6% of the graph log" match "$TMP/out" "^MAPE [0-5]\.[0-9]% over 22"
expect_ok "nccl-fit against the graph log" "$TPSIM" allreduce --tp 4 --model nccl-fit --mode graphs --sizes 16K..128K --log "$LOG"
check "nccl-fit graph mode within 2% in the decode band" match "$TMP/out" "^MAPE [01]\.[0-9]% over 4"

# every bundled H100 scenario runs under nccl-tuner at each degree it has a calibration for
for k in 2 4 8; do
    expect_ok "nccl-tuner runs at TP-$k" "$TPSIM" run scenarios/eager-host-dispatch.yaml --tp $k \
        --set collective.allreduce=nccl-tuner --steps 1 --warmup 0
done
finish
