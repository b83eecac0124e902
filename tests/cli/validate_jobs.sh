# validate_jobs.sh: `tpsim validate --jobs N` writes the same bytes whatever N. With threads the
# fitter evaluates ahead where they outnumber a point's cells (the whole coarse grid at once, a
# simplex step's candidates, a compass step's tries together; --jobs 9 does so in every fit)
# and binds each point on its own thread's copy of the scenario; none of that may show in the
# report: the fit, its evaluation count, intervals, sensitivity, --scan files and --summary rows
# across protocols sharing the memo.
source tests/cli/lib.sh
ES=scenarios/eager-straggler.yaml      # two free parameters, jittered: simplex and compass
PA=scenarios/paper-additive.yaml       # one free parameter: grid and golden section
EHD=scenarios/eager-host-dispatch.yaml

# same_bytes NAME ARGS...: validate ARGS with --jobs 1, 2 and 9 (JOBS overrides), byte for byte
same_bytes() {
    local name=$1; shift
    local j
    for j in ${JOBS:-1 2 9}; do
        if ! "$TPSIM" validate "$@" --jobs $j --quiet >"$TMP/j$j" 2>"$TMP/e$j"; then
            bad "$name --jobs $j: $(head -c 300 "$TMP/e$j")"; return
        fi
    done
    [ -e "$TMP/j2" ] && check "$name: --jobs 1 and 2, same bytes" cmp -s "$TMP/j1" "$TMP/j2"
    check "$name: --jobs 1 and 9, same bytes" cmp -s "$TMP/j1" "$TMP/j9"
    rm -f "$TMP/j2"
    check "$name: a report" test -s "$TMP/j1"
}

same_bytes "eager-straggler within json" $ES --format json
cp "$TMP/j9" "$TMP/es.json" # --jobs 9's report, for the fit's checks below
# 2 threads (no read-ahead) once, above: the other protocols at 1 and 9
JOBS="1 9" same_bytes "eager-straggler loo json" $ES --loo --format json
JOBS="1 9" same_bytes "eager-straggler transfer 4:2 text" $ES --transfer 4:2
# the one-parameter fits: 1 and 9 threads (2 threads without read-ahead is the straggler's above)
JOBS="1 9" same_bytes "paper-additive within json" $PA --format json
JOBS="1 9" same_bytes "three protocols, one memo" $PA --within --transfer 2:4 --transfer 4:2 --loo --summary
JOBS="1 9" same_bytes "eager-host-dispatch transfer 2:4 json" $EHD --transfer 2:4 --format json

# the fit did walk past its 9 x 9 grid (a simplex and a compass search, which --jobs 9
# evaluates ahead), and stopped by its convergence rule, not its cap (fit.h)
pyq "eager-straggler's fit walks past its grid and converges" "$TMP/es.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["fit_evaluations"] > 9 * 9, d["fit_evaluations"]
assert d["fit_stop"] == "step", d["fit_stop"]
assert all(f["stop"] == "step" for f in d["folds"]), [f["stop"] for f in d["folds"]]
PY

# --scan: the objective files
for j in 1 2; do
    "$TPSIM" validate $EHD --transfer 2:4 --scan "$TMP/scan$j" --jobs $j --quiet >/dev/null 2>&1 ||
        bad "--scan --jobs $j failed"
done
check "--scan files, same bytes" diff -r "$TMP/scan1" "$TMP/scan2"

finish
