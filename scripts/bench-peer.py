#!/usr/bin/python3
"""make bench-peer: tpsim's speed side by side with the two peers in ../shared/peer/ (a SimPy
model and a hand-written max-plus floor of the same TP-8 70B decode step, lognormal launch
jitter cv 0.3).

The peers are run from their folder, never copied: the floor is compiled from its source
there into build/peer/floor; SimPy runs under Debian's /usr/bin/python3 (python3-simpy3).
The floor is measured twice: as written (build/peer/floor: its PCG32, Marsaglia's polar
normal, glibc's exp) and like for like (build/peer/floor-like: the same source with tpsim's
ziggurat normal in place of the polar method, tests/bench/floor_like.h). The polar method
costs the floor more than tpsim's ziggurat costs tpsim, so the ratio to the floor as written
measures the normal generators as much as the engines; the ratio to the like-for-like floor
measures the engine.

How it measures, and why:
  * CPU time, not wall time: the machines this runs on are shared (two cores, several
    builds), and a process's wall time is then mostly its wait for a core. Each run's user +
    system CPU seconds come from the kernel (os.wait4's rusage of that child alone).
  * Whole processes alike: start-up is in every tool's run (SimPy's interpreter and imports,
    the floor's op table, tpsim's scenario load); each tool's start-up is measured the same
    way (one step; printed) and is under 1% of the floors' and tpsim's runs at 4,000 steps.
  * Interleaved rounds: each round runs every tool once, the order alternating (the two
    floors, tpsim, SimPy; then SimPy, tpsim, the two floors), so a change in load lands on
    all of them alike rather than on one tool's block. The ratio to each floor is taken within each round (paired)
    and its median over the rounds is the headline; the medians and minima of each tool are
    printed beside it.
  * Per rank-op (one op on one rank's stream, its host launch included): each tool prints
    its own ops per rank and step (tpsim's launch list at TP-8 with this scenario, the
    peers' 963), and the rank-ops are steps x ranks x that.
Prints a table, the load average before and after, and three ratios:
  tpsim_vs_simpy:       SimPy's CPU seconds per rank-op over tpsim's (>= 100 wanted)
  floor_like_vs_tpsim:  tpsim's CPU seconds per rank-op over the like-for-like floor's
                        (<= 1.1 wanted; the engine against the floor)
  floor_polar_vs_tpsim: tpsim's over the floor's as written (the polar method's cost in it)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_run(cmd):
    """Runs cmd; returns (stdout, CPU seconds of that process: user + system)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench-peer: %s exited with %d" % (cmd[0], p.returncode))
    return out, ru.ru_utime + ru.ru_stime


def peer_parse(out):
    d = json.loads(out)
    return {"steps": d["steps"], "ops": d["ops_per_rank_step"], "ranks": d["tp"],
            "step_ms": d["step_ms_mean"]}


def bench_parse(out):
    d = {}
    for line in out.splitlines():
        key, _, val = line.partition(": ")
        d[key] = val
    # bench simulates steps + warmup; its rank_ops counts them all
    ranks = int(d["workload"].split(" x ")[-1].split()[0])
    ops = int(d["ops_per_step_per_rank"])
    return {"steps": round(float(d["rank_ops"]) / ranks / ops), "ops": ops, "ranks": ranks,
            "step_ms": float(d["simulated_step_ms"]), "engine": d["engine"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "peer"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "peer", "floor"))
    ap.add_argument("--floor-like", default=os.path.join(ROOT, "build", "peer", "floor-like"))
    ap.add_argument("--simpy-steps", type=int, default=200)
    ap.add_argument("--steps", type=int, default=4000, help="floor and tpsim steps")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-simpy", action="store_true", help="floor and tpsim only")
    a = ap.parse_args()
    common = ["--tp", "8", "--batch", "1", "--ctx", "2048", "--seed", "1", "--cv", "0.3"]
    scen = os.path.join(ROOT, "tests", "bench", "peer-tp8.yaml")

    def simpy_cmd(n):
        return ["/usr/bin/python3", os.path.join(a.peer, "simpy_step.py")] + common + ["--steps", str(n)]

    def floor_cmd(n):
        return [a.floor] + common + ["--steps", str(n)]

    def floor_like_cmd(n):
        return [a.floor_like] + common + ["--steps", str(n)]

    def tpsim_cmd(n):
        # bench runs n steps after one warmup step (tests/bench.c); all n + 1 are counted
        return [a.bench, "--scenario", scen, "--steps", str(n), "--reps", "1"]

    tools = [("floor-polar", floor_cmd, peer_parse, a.steps),
             ("floor-like", floor_like_cmd, peer_parse, a.steps),
             ("tpsim", tpsim_cmd, bench_parse, a.steps)]
    if not a.no_simpy:
        tools.append(("SimPy", simpy_cmd, peer_parse, a.simpy_steps))
    load0 = os.getloadavg()
    startup = {name: cpu_run(cmd(1))[1] for name, cmd, _, _ in tools}
    runs = {name: [] for name, _, _, _ in tools}  # CPU ns per rank-op, one per round
    info = {}
    for rnd in range(a.rounds):
        order = tools if rnd % 2 == 0 else tools[::-1]
        for name, cmd, parse, steps in order:
            out, cpu = cpu_run(cmd(steps))
            d = parse(out)
            d["rank_ops"] = d["steps"] * d["ranks"] * d["ops"]
            info[name] = d
            runs[name].append(cpu / d["rank_ops"] * 1e9)
    load1 = os.getloadavg()

    print("TP-8 Llama-3.1-70B decode step, batch 1, ctx 2048, lognormal launch jitter cv 0.3")
    print("CPU time per rank-op, %d interleaved rounds (order alternating); load average "
          "before %.2f %.2f %.2f, after %.2f %.2f %.2f" % ((a.rounds,) + load0 + load1))
    print("%-19s %7s %9s %11s %11s %11s %10s %10s" % (
        "tool", "steps", "ops/rank", "rank_ops", "ns_median", "ns_min", "startup_s", "step_ms"))
    for name, _, _, _ in tools:
        d = info[name]
        label = name + (" (%s)" % d["engine"] if "engine" in d else " (peer)")
        print("%-19s %7d %9d %11d %11.3f %11.3f %10.4f %10.4f" % (
            label, d["steps"], d["ops"], d["rank_ops"], statistics.median(runs[name]),
            min(runs[name]), startup[name], d["step_ms"]))
    for floor, what, goal in (("floor-like", "the like-for-like floor's (tpsim's ziggurat)",
                               "; goal <= 1.1"),
                              ("floor-polar", "the floor's as written (polar normal)", "")):
        paired = [t / f for t, f in zip(runs["tpsim"], runs[floor])]
        print("%s_vs_tpsim: %.3f  (tpsim CPU per rank-op over %s, median of the %d paired "
              "rounds; min %.3f, max %.3f; ratio of medians %.3f, of minima %.3f%s)"
              % (floor.replace("-", "_"), statistics.median(paired), what, a.rounds,
                 min(paired), max(paired),
                 statistics.median(runs["tpsim"]) / statistics.median(runs[floor]),
                 min(runs["tpsim"]) / min(runs[floor]), goal))
    if not a.no_simpy:
        ps = [s / t for s, t in zip(runs["SimPy"], runs["tpsim"])]
        print("tpsim_vs_simpy: %.1f  (SimPy CPU per rank-op over tpsim's, median of the %d "
              "paired rounds; min %.1f, max %.1f; goal >= 100)"
              % (statistics.median(ps), a.rounds, min(ps), max(ps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
