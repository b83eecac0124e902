#!/usr/bin/env python3
"""ttyrun.py OUT ERR CMD... [--- OUT ERR CMD...]...: each CMD in turn with its stdout to the
file OUT and its stderr on a new pseudo-terminal, whose text goes to the file ERR, and its exit
status to ERR.rc: what a user at a terminal sees on stderr, for the progress-line tests. One
Python for several commands (a Python start costs ~35 ms of CPU). Exit status 0."""
import os
import pty
import subprocess
import sys


def run(out, err, cmd):
    master, slave = pty.openpty()
    with open(out, "wb") as fo:
        p = subprocess.Popen(cmd, stdout=fo, stderr=slave)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the last writer closed the pty
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    p.wait()
    open(err, "wb").write(data)
    open(err + ".rc", "w").write("%d\n" % p.returncode)


args = sys.argv[1:]
while args:
    end = args.index("---") if "---" in args else len(args)
    job, args = args[:end], args[end + 1:]
    run(job[0], job[1], job[2:])
