#!/bin/bash
# run-test.sh STAMP NAME CMD...: one test of make check / make test. CMD's output goes to
# STAMP.log, never to the terminal, so tests run side by side (make -jN) do not interleave;
# prints one line, "ok   NAME  (C s CPU)", or "FAIL NAME" followed by the log's last 80 lines.
# Exit status: CMD's.
set -u
stamp=$1 name=$2
shift 2
# (builtins only: this runs once per test, and a process costs milliseconds here)
[ -d "${stamp%/*}" ] || mkdir -p "${stamp%/*}"
log=$stamp.log
TIMEFORMAT='%3U %3S'
{ time "$@" >"$log" 2>&1; } 2>"$stamp.time"
rc=$?
# `time` reports a failed command's status as its own; its line is the last one written
u=0 s=0
while read -r a b; do [[ $a =~ ^[0-9]+\.[0-9]{3}$ ]] && u=$a s=$b; done <"$stamp.time"
ms=$((10#${u/./} + 10#${s/./}))
t=$(((ms + 50) / 100)) # tenths, rounded
cpu=$((t / 10)).$((t % 10))
if [ $rc -eq 0 ]; then
    printf 'ok   %-52s (%s s CPU)\n' "$name" "$cpu"
    exit 0
fi
printf 'FAIL %s (status %d; log: %s)\n' "$name" "$rc" "$log"
tail -n 80 "$log" | sed 's/^/    /'
exit $rc
