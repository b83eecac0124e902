# lib.sh: shared helpers for the CLI tests in tests/cli/*.sh (sourced, not run).
# Each test script runs from the repository root with TPSIM set to the binary under test.
# Helpers count passes and failures; `finish` prints "N passed, N failed" and sets the status.
set -u
: "${TPSIM:=build/tpsim}"
# The tests' Python is Debian's (standard library only; `make deps` installs it): a python3
# found first on PATH may be a version manager's shim, which costs ten times Debian's start-up
# (0.5 s of CPU against 0.05 s here) on every one of the tests' 170-odd calls.
[ -x /usr/bin/python3 ] && PATH=/usr/bin:$PATH
PASS=0
FAIL=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok()   { PASS=$((PASS + 1)); }
bad()  { FAIL=$((FAIL + 1)); printf 'FAIL %s: %s\n' "${0##*/}" "$*" >&2; }

# expect_fail2 NAME PATTERN CMD...: CMD exits 2, its stderr is exactly one line, matching PATTERN
# (an extended regex), and stdout is empty.
expect_fail2() {
    local name=$1 pat=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
    local lines; lines=$(wc -l <"$TMP/err")
    if [ "$rc" -ne 2 ]; then bad "$name: exit $rc, expected 2 ($(head -c 300 "$TMP/err"))"; return; fi
    if [ "$lines" -ne 1 ]; then bad "$name: stderr has $lines lines, expected 1: $(head -c 300 "$TMP/err")"; return; fi
    if ! grep -Eq -- "$pat" "$TMP/err"; then bad "$name: stderr '$(cat "$TMP/err")' does not match /$pat/"; return; fi
    if [ -s "$TMP/out" ]; then bad "$name: wrote to stdout on error"; return; fi
    ok
}

# expect_ok NAME CMD...: CMD exits 0; its stdout is left in $TMP/out.
expect_ok() {
    local name=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
    if [ "$rc" -ne 0 ]; then bad "$name: exit $rc: $(head -c 400 "$TMP/err")"; return 1; fi
    ok
}

# check NAME COND...: a shell condition that must hold.
check() {
    local name=$1; shift
    if "$@"; then ok; else bad "$name"; fi
}

finish() {
    printf '%s: %d passed, %d failed\n' "${0##*/}" "$PASS" "$FAIL"
    [ "$FAIL" -eq 0 ]
}
