#!/bin/bash
# cpu-seconds.sh [--tee] NAME BUDGET LOG CMD...: runs CMD (its output to LOG; with --tee to the
# terminal too) and prints one line
#   NAME: CPU (user U + system S; budget BUDGET s: within|OVER), wall W s at load average L
# CPU is the user + system seconds of CMD and every process it waited for (the shell's
# `times`, children's line), the figure that does not depend on how many other jobs share
# the cores; the wall time and the load average are printed beside it, not judged.
# Exit status: CMD's when it fails (then LOG says why), else 0. `make bench` times `make run`.
set -u
tee=0
[ "$1" = --tee ] && { tee=1; shift; }
name=$1 budget=$2 log=$3
shift 3
mkdir -p "$(dirname "$log")"
t0=$(date +%s.%N)
if [ $tee -eq 1 ]; then
    # the command's times reach this shell's children's line through the pipeline's subshell
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
else
    "$@" >"$log" 2>&1
    rc=$?
fi
t1=$(date +%s.%N)
[ $rc -eq 0 ] || { echo "$name: '$*' failed (status $rc), see $log"; exit $rc; }
tfile=$(mktemp)
times >"$tfile" # a redirection, not a pipe: a pipe's subshell would report its own zero times
load=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v name="$name" -v budget="$budget" -v a="$t0" -v b="$t1" -v load="$load" '
    function sec(t) { sub(/s$/, "", t); split(t, p, "m"); return 60 * p[1] + p[2] }
    NR == 2 { u = sec($1); s = sec($2); c = u + s
              printf "%s: %.2f (user %.2f + system %.2f; budget %s s: %s), wall %.1f s at load average %s\n",
                     name, c, u, s, budget, c <= budget ? "within" : "OVER", b - a, load }' "$tfile"
rm -f "$tfile"
