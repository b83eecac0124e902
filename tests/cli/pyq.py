#!/usr/bin/env python3
"""pyq.py DIR N: the Python checks tests/cli/lib.sh's pyq queued (DIR/I.py, its code; DIR/I.args,
its name then its arguments, NUL-terminated; I = 1..N), each run as `python3 - ARGS` would run
it (its own globals, sys.argv = ["-", ARGS...]; what it prints goes to stderr) but in this one
process: a Python start costs about 35 ms of CPU, more than most checks. Writes DIR/results,
one line per check: "ok" or "FAIL why", why on one line; exit status 0."""
import sys
import traceback
import time, os

d, n = sys.argv[1], int(sys.argv[2])
results = open(f"{d}/results", "w")
sys.stdout = sys.stderr
for i in range(1, n + 1):
    args = open(f"{d}/{i}.args", "rb").read().decode().split("\0")[:-1]
    code = open(f"{d}/{i}.py").read()
    sys.argv = ["-"] + args[1:]
    why = None
    t0 = time.process_time()
    try:
        exec(compile(code, f"<{args[0]}>", "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        if e.code not in (None, 0):
            why = f"exit {e.code}"
    except BaseException:
        why = traceback.format_exc(limit=-1).strip().splitlines()
        why = " | ".join(why[-3:])
    os.environ.get("PYQ_T") and print("PYQTIME %.3f %s" % (time.process_time() - t0, args[0]), file=sys.__stderr__)
    print("ok" if why is None else "FAIL " + why.replace("\n", " ")[:1500], file=results, flush=True)
