#!/usr/bin/env bash
# conventions.sh: the command-line conventions users expect: --opt=value and --opt value,
# `--` ending the flags, `-o -` for stdout, one line and status 2 for an unknown flag or a
# missing value, `tpsim help CMD`, the `tpsim:` prefix on every fit-allreduce error.
source tests/cli/lib.sh
BIN=$(cd "$(dirname "$TPSIM")" && pwd)/$(basename "$TPSIM")
S=scenarios/paper-additive.yaml
LOG=tests/data/h100-8gpu-ring-all_reduce_perf.out

# --- --opt=value and --opt value give the same run ---------------------------------------------
expect_ok "run --tp 4 --steps 3" "$TPSIM" run "$S" --tp 4 --steps 3 --format json && cp "$TMP/out" "$TMP/spaced"
expect_ok "run --tp=4 --steps=3" "$TPSIM" run "$S" --tp=4 --steps=3 --format=json && cp "$TMP/out" "$TMP/equals"
check "--opt=value is --opt value" cmp -s "$TMP/spaced" "$TMP/equals"
check "the flags took effect" grep -Eq '"tp": ?4,' "$TMP/equals"
check "the flags took effect (steps)" grep -Eq '"steps": ?3,' "$TMP/equals"
expect_ok "flags before the scenario" "$TPSIM" run --tp=4 --steps 3 --format json "$S"
check "flags before the scenario: same run" cmp -s "$TMP/spaced" "$TMP/out"
expect_ok "--set=key=value" "$TPSIM" run "$S" --tp 4 --steps 3 --format json --set=offset_ms=0
check "--set=key=value took effect" grep -Eq '"offset": ?0([,}]|$)' "$TMP/out"

# --- `--` ends the flags: a scenario whose file name starts with a dash -------------------------
mkdir -p "$TMP/d"
sed "s#\.\./models/#$PWD/models/#" "$S" >"$TMP/d/-dash.yaml"
(cd "$TMP/d" && "$BIN" run --steps 2 --format json -- -dash.yaml >"$TMP/out" 2>"$TMP/err"); rc=$?
check "-- ends the flags (exit $rc: $(head -c 200 "$TMP/err"))" test "$rc" -eq 0
check "-- ends the flags: the scenario ran" grep -q '"scenario": *"paper-additive"' "$TMP/out"
(cd "$TMP/d" && "$BIN" run --steps 2 -dash.yaml >"$TMP/out" 2>"$TMP/err"); rc=$?
check "without --, -dash.yaml is a flag" test "$rc" -eq 2
expect_fail2 "after --, --tp is an operand" "^tpsim: run: a second scenario '--tp', expected one" \
    "$TPSIM" run -- "$S" --tp

# --- unknown flags, missing values, values given to switches: one line, status 2 -----------------
for cmd in run validate sweep; do
    expect_fail2 "$cmd unknown flag" "^tpsim: $cmd: unknown option '--bogus' \(see tpsim $cmd --help\)$" \
        "$TPSIM" "$cmd" "$S" --bogus=1
    expect_fail2 "$cmd unknown short flag" "^tpsim: $cmd: unknown option '-q'" "$TPSIM" "$cmd" "$S" -q
    expect_fail2 "$cmd missing value" "^tpsim: --set: missing value$" "$TPSIM" "$cmd" "$S" --set
    expect_fail2 "$cmd value to a switch" "^tpsim: --help takes no value$" "$TPSIM" "$cmd" "$S" --help=yes
done
expect_fail2 "fit unknown flag" "^tpsim: fit-allreduce: unknown option '--bogus'" "$TPSIM" fit-allreduce "$LOG" --bogus
expect_fail2 "fit missing value" "^tpsim: --max: missing value$" "$TPSIM" fit-allreduce "$LOG" --max
expect_fail2 "sweep -o missing value" "^tpsim: -o: missing value$" "$TPSIM" sweep "$S" -o
expect_fail2 "ambiguous prefix" "^tpsim: run: '--s' is ambiguous: --steps, --seed, --set$" "$TPSIM" run "$S" --s 3
expect_ok "a unique prefix is the flag" "$TPSIM" run "$S" --tp 4 --ste 3 --form json
check "a unique prefix: same run" cmp -s "$TMP/spaced" "$TMP/out"

# --- -o - is stdout ---------------------------------------------------------------------------
expect_ok "sweep -o -" "$TPSIM" sweep "$S" --tp 2,4 --steps 2 -o -
check "sweep -o -: header on stdout" grep -q '^scenario,' "$TMP/out"
check "sweep -o -: a row per cell" test "$(grep -c '^paper-additive,' "$TMP/out")" -eq 2
check "sweep -o -: no file named -" test ! -e ./-
(cd "$TMP" && "$BIN" fit-allreduce "$OLDPWD/$LOG" -o - >"$TMP/out" 2>"$TMP/err"); rc=$?
check "fit-allreduce -o - exits 0" test "$rc" -eq 0
check "fit-allreduce -o -: the calibration on stdout" grep -qx 'kind: allreduce-calibration' "$TMP/out"
check "fit-allreduce -o -: nothing else on stdout" bash -c "! grep -q '^all-reduce fit' '$TMP/out'"
check "fit-allreduce -o -: no file named -" test ! -e "$TMP/-"
expect_ok "fit-allreduce --output=FILE" "$TPSIM" fit-allreduce "$LOG" --output="$TMP/cal.yaml"
check "--output=FILE wrote the file" grep -qx 'kind: allreduce-calibration' "$TMP/cal.yaml"
# the file from -o - is the file from -o FILE
"$TPSIM" fit-allreduce "$LOG" -o - >"$TMP/stdout.yaml" 2>/dev/null
check "-o - writes what -o FILE writes" cmp -s "$TMP/stdout.yaml" "$TMP/cal.yaml"

# --- tpsim help CMD is tpsim CMD --help ------------------------------------------------------
for cmd in run validate sweep fit-allreduce; do
    expect_ok "help $cmd" "$TPSIM" help "$cmd" && cp "$TMP/out" "$TMP/help"
    expect_ok "$cmd --help" "$TPSIM" "$cmd" --help
    check "help $cmd is $cmd --help" cmp -s "$TMP/help" "$TMP/out"
    check "help $cmd names the command" grep -q "usage: tpsim $cmd" "$TMP/help"
done
expect_fail2 "help for an unknown command" "^tpsim: help: unknown command 'nope'" "$TPSIM" help nope
expect_ok "help alone" "$TPSIM" help
check "help alone lists help COMMAND" grep -q 'help COMMAND' "$TMP/out"

# --- every fit-allreduce error starts with tpsim: ---------------------------------------------
printf 'not a sweep\n' >"$TMP/junk.out"
expect_fail2 "fit bad input prefixed" "^tpsim: $TMP/junk\.out" "$TPSIM" fit-allreduce "$TMP/junk.out"
expect_fail2 "fit missing file prefixed" "^tpsim: .*cannot open" "$TPSIM" fit-allreduce "$TMP/none.out"
expect_fail2 "fit no file prefixed" "^tpsim: fit-allreduce: no sweep file" "$TPSIM" fit-allreduce
expect_fail2 "fit bad tp prefixed" "^tpsim: fit-allreduce: --tp 'x'" "$TPSIM" fit-allreduce "$LOG" --tp x

finish
