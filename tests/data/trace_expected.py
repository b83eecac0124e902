#!/usr/bin/env python3
"""Expected counts for the shipped traces, derived without tpsim (python3 gzip/json/sqlite3).

Usage: trace_expected.py FILE [--step-marker REGEX]  -> one JSON object on stdout with
kernels, memcpys (memcpy + memset), collectives, graph_launches, steps, kernels per step,
and the mean cudaLaunchKernel duration (us) inside steps. Rules (written independently of
calibrate/trace_stats.c, from the Kineto/Nsight field meanings):
  - a collective is a kernel whose name says NCCL/RCCL or an all-reduce/all-gather/
    reduce-scatter (vLLM custom: cross_device_reduce_*, symmetric memory: multimem_*);
  - a step is a user_annotation (NVTX range) named execute_* or matching --step-marker;
  - a kernel is in a step when the runtime call with its correlation id starts inside it.
"""
import gzip, json, re, sqlite3, sys

COLL = re.compile(r"nccl|rccl|cross_device_reduce|all_reduce|allreduce|all_gather|allgather|"
                  r"reduce_scatter|reducescatter|multimem", re.I)


def kineto(path, marker):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    kern = [e for e in ev if e.get("cat") == "kernel"]
    copies = [e for e in ev if e.get("cat") in ("gpu_memcpy", "gpu_memset")]
    calls = {e["args"]["correlation"]: e for e in ev
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    steps = sorted((e for e in ev if e.get("cat") == "user_annotation" and marker.search(e["name"])),
                   key=lambda e: e["ts"])
    per_step, launch = [], []
    for s in steps:
        lo, hi = s["ts"], s["ts"] + s["dur"]
        n = 0
        for k in kern:
            c = calls.get(k.get("args", {}).get("correlation"))
            t = c["ts"] if c else k["ts"]
            n += lo <= t <= hi
        per_step.append(n)
        launch += [c["dur"] for c in calls.values() if c["name"] == "cudaLaunchKernel" and lo <= c["ts"] <= hi]
    return {
        "kernels": len(kern),
        "memcpys": len(copies),
        "collectives": sum(1 for k in kern if COLL.search(k["name"])),
        "graph_launches": sum(1 for e in ev if e.get("cat") == "cuda_runtime" and "GraphLaunch" in e["name"]),
        "steps": len(steps),
        "kernels_per_step": per_step,
        "cudaLaunchKernel_mean_us": round(sum(launch) / len(launch), 3) if launch else None,
    }


def nsys(path, marker):
    db = sqlite3.connect(path)
    q = lambda sql: db.execute(sql).fetchall()
    names = {i: v for i, v in q("SELECT id, value FROM StringIds")}
    kern = q("SELECT correlationId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL")
    calls = {}
    for start, end, corr, nid in q("SELECT start, end, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"):
        calls.setdefault(corr, (start, end, names[nid]))  # the outer (earlier) call of a correlation
    ranges = sorted((s, e) for s, e, t, tid in q("SELECT n.start, n.end, n.text, n.textId FROM NVTX_EVENTS n WHERE n.end IS NOT NULL")
                    if marker.search(t if t is not None else names.get(tid, "")))
    per_step = [sum(1 for c, _ in kern if c in calls and lo <= calls[c][0] <= hi) for lo, hi in ranges]
    launch = [e - s for s, e, n in calls.values() if n.startswith("cudaLaunchKernel")
              and any(lo <= s <= hi for lo, hi in ranges)]
    return {
        "kernels": len(kern),
        "memcpys": q("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")[0][0] + q("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0][0],
        "collectives": sum(1 for _, n in kern if COLL.search(names[n])),
        "graph_launches": sum(1 for _, _, n in calls.values() if "GraphLaunch" in n),
        "steps": len(ranges),
        "kernels_per_step": per_step,
        "cudaLaunchKernel_mean_us": round(sum(launch) / len(launch) / 1e3, 3) if launch else None,
    }


def main():
    path = sys.argv[1]
    marker = re.compile(sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--step-marker" else r"^execute_")
    with open(path, "rb") as f:
        sqlite = f.read(16) == b"SQLite format 3\x00"
    print(json.dumps((nsys if sqlite else kineto)(path, marker), sort_keys=True))


main()
