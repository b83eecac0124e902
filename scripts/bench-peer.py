#!/usr/bin/python3
"""make bench-peer: tpsim's speed side by side with the two peers in ../shared/peer/ (a SimPy
model and a hand-written max-plus floor of the same TP-8 70B decode step, lognormal launch
jitter cv 0.3), measured in one run, one tool at a time, best of --reps runs each.

The peers are run from their folder, never copied: the floor is compiled from its source
there into build/peer/floor; SimPy runs under Debian's /usr/bin/python3 (python3-simpy3).
Each tool reports the wall time of its simulation alone (SimPy: environment + env.run();
floor: op table + recursion; tpsim: program build, cost model, engine and summary), so
start-up is left out of all three alike.

Speed is compared per rank-op (one op on one rank's stream, its host launch included):
tpsim's step has 1,138 ops per rank at TP-8 (vLLM's launch list), the peers' 963.
Prints a table and the two ratios the issue asks for:
  tpsim / SimPy (>= 100 wanted) and floor / tpsim (<= 1.5 wanted).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best(cmd, reps, parse):
    runs = [parse(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(reps)]
    return min(runs, key=lambda r: r["wall_s"])


def peer_json(out):
    d = json.loads(out)
    d["rank_ops"] = d["steps"] * d["tp"] * d.get("ops_per_rank_step", 963)
    return d


def bench_kv(out):
    d = {}
    for line in out.splitlines():
        key, _, val = line.partition(": ")
        try:
            d[key] = float(val)
        except ValueError:
            d[key] = val
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "peer"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "peer", "floor"))
    ap.add_argument("--simpy-steps", type=int, default=200)
    ap.add_argument("--steps", type=int, default=20000, help="floor and tpsim steps")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    common = ["--tp", "8", "--batch", "1", "--ctx", "2048", "--seed", "1", "--cv", "0.3"]
    simpy = best(["/usr/bin/python3", os.path.join(a.peer, "simpy_step.py")] + common +
                 ["--steps", str(a.simpy_steps)], a.reps, peer_json)
    floor = best([a.floor] + common + ["--steps", str(a.steps)], a.reps, peer_json)
    tpsim = best([a.bench, "--scenario", os.path.join(ROOT, "tests", "bench", "peer-tp8.yaml"),
                  "--steps", str(a.steps), "--reps", "1"], a.reps, bench_kv)
    rows = [("SimPy (peer)", simpy["steps"], 963, simpy["rank_ops"], simpy["wall_s"], simpy["step_ms_mean"]),
            ("floor (peer)", floor["steps"], 963, floor["rank_ops"], floor["wall_s"], floor["step_ms_mean"]),
            ("tpsim (%s)" % tpsim["engine"], tpsim["rank_ops"] / 8 / tpsim["ops_per_step_per_rank"],
             int(tpsim["ops_per_step_per_rank"]), tpsim["rank_ops"], tpsim["wall_s"],
             tpsim["simulated_step_ms"])]
    print("TP-8 Llama-3.1-70B decode step, batch 1, ctx 2048, lognormal launch jitter cv 0.3")
    print("%-16s %8s %12s %12s %10s %14s %10s" % ("tool", "steps", "ops/rank", "rank_ops",
                                                  "wall_s", "rank_ops_per_s", "step_ms"))
    speed = {}
    for name, steps, ops, rank_ops, wall, ms in rows:
        speed[name.split()[0]] = rank_ops / wall
        print("%-16s %8d %12d %12d %10.4f %14.4g %10.4f" % (name, steps, ops, rank_ops, wall,
                                                            rank_ops / wall, ms))
    vs_simpy = speed["tpsim"] / speed["SimPy"]
    vs_floor = speed["floor"] / speed["tpsim"]
    print("tpsim_vs_simpy: %.1f  (tpsim rank_ops/s over SimPy's; goal >= 100)" % vs_simpy)
    print("floor_vs_tpsim: %.3f  (floor rank_ops/s over tpsim's; goal <= 1.5)" % vs_floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
