#!/bin/bash
# run-test.sh STAMP NAME CMD...: one test of make check / make test. CMD's output goes to
# STAMP.log, never to the terminal, so tests run side by side (make -jN) do not interleave;
# prints one line, "ok   NAME  (C s CPU)", or "FAIL NAME" followed by the log's last 80 lines.
# Exit status: CMD's.
set -u
stamp=$1 name=$2
shift 2
mkdir -p "$(dirname "$stamp")"
log=$stamp.log
TIMEFORMAT='%U %S'
{ time "$@" >"$log" 2>&1; } 2>"$stamp.time"
rc=$?
# `time` reports a failed command's status as its own; its line is the last one written
cpu=$(tail -n 1 "$stamp.time" | awk '{ printf "%.1f", $1 + $2 }')
if [ $rc -eq 0 ]; then
    printf 'ok   %-52s (%s s CPU)\n' "$name" "$cpu"
    exit 0
fi
printf 'FAIL %s (status %d; log: %s)\n' "$name" "$rc" "$log"
tail -n 80 "$log" | sed 's/^/    /'
exit $rc
