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
    local name=$1 pat=$2 raw= nl line; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
    # builtins only (no wc, grep): a fork costs milliseconds here, and this runs 430-odd times
    IFS= read -r -d '' raw <"$TMP/err"
    nl=${raw//[!$'\n']/}
    line=${raw%$'\n'}
    if [ "$rc" -ne 2 ]; then bad "$name: exit $rc, expected 2 (${raw:0:300})"; return; fi
    if [ "${#nl}" -ne 1 ]; then bad "$name: stderr has ${#nl} lines, expected 1: ${raw:0:300}"; return; fi
    if ! [[ $line =~ $pat ]]; then bad "$name: stderr '$line' does not match /$pat/"; return; fi
    if [ -s "$TMP/out" ]; then bad "$name: wrote to stdout on error"; return; fi
    ok
}

# expect_ok NAME CMD...: CMD exits 0; its stdout is left in $TMP/out.
expect_ok() {
    local name=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
    if [ "$rc" -ne 0 ]; then
        local raw=
        IFS= read -r -d '' raw <"$TMP/err"
        bad "$name: exit $rc: ${raw:0:400}"
        return 1
    fi
    ok
}

# check NAME COND...: a shell condition that must hold.
check() {
    local name=$1; shift
    if "$@"; then ok; else bad "$name"; fi
}

# Conditions on a file's text for `check`, in the shell itself: a grep is a process, a few
# milliseconds of CPU here, and the tests ran 800-odd. Each is the grep named beside it.
# not COND...: COND fails (for check: `check NAME not has FILE TEXT`)
not() { ! "$@"; }
# has FILE TEXT: a line of FILE contains TEXT (grep -qF TEXT FILE; TEXT of one line)
has() {
    local c
    c=$(<"$1") && [[ $c == *"$2"* ]]
}
# has_line FILE LINE: a line of FILE is LINE (grep -qxF LINE FILE)
has_line() {
    local c
    c=$(<"$1") && [[ $'\n'$c$'\n' == *$'\n'"$2"$'\n'* ]]
}
# match FILE ERE: a line of FILE matches ERE (grep -Eq ERE FILE: bash's =~ is the same POSIX
# extended regex, tried here line by line as grep does; for small files, as each line costs a
# compile of ERE)
match() {
    local -a lines
    local l
    mapfile -t lines <"$1" || return 1
    for l in "${lines[@]}"; do [[ $l =~ $2 ]] && return 0; done
    return 1
}
# count_matches VAR FILE ERE: VAR = the number of lines of FILE that match ERE (grep -Ec)
# (VAR is set by name: the locals have names no caller uses)
count_matches() {
    local -a _cm_lines
    local _cm_l _cm_n=0
    mapfile -t _cm_lines <"$2" || { printf -v "$1" %s unreadable; return 1; }
    for _cm_l in "${_cm_lines[@]}"; do [[ $_cm_l =~ $3 ]] && _cm_n=$((_cm_n + 1)); done
    printf -v "$1" %d "$_cm_n"
}
# line_count VAR FILE: VAR = the number of newlines in FILE (wc -l <FILE)
line_count() {
    local -a _lc_lines
    [ -r "$2" ] && mapfile _lc_lines <"$2" || { printf -v "$1" %s unreadable; return 1; }
    local _lc_n=${#_lc_lines[@]}
    [ "$_lc_n" -eq 0 ] || [[ ${_lc_lines[_lc_n - 1]} == *$'\n' ]] || _lc_n=$((_lc_n - 1))
    printf -v "$1" %d "$_lc_n"
}

# _glob_all ARRAY DIR GLOB: ARRAY = DIR's entries GLOB matches, dot files included, none when
# nothing does (dotglob and nullglob set for the expansion alone)
_glob_all() {
    local _ga_dot=0 _ga_null=0
    shopt -q dotglob && _ga_dot=1
    shopt -q nullglob && _ga_null=1
    shopt -s dotglob nullglob
    eval "$1=(\"\$2\"/\$3)"
    [ "$_ga_dot" = 1 ] || shopt -u dotglob
    [ "$_ga_null" = 1 ] || shopt -u nullglob
}

# entries VAR DIR: VAR = the number of entries in DIR, dot files included (ls -A DIR | wc -l)
entries() {
    local -a _en_f
    _glob_all _en_f "$2" '*'
    printf -v "$1" %d "${#_en_f[@]}"
}

# has_entry DIR GLOB: an entry of DIR, dot files included, has a name GLOB matches
# (ls -A DIR | grep -q RE, for the RE that GLOB spells)
has_entry() {
    local -a _he_f
    _glob_all _he_f "$1" "$2"
    [ "${#_he_f[@]}" -gt 0 ]
}

# pyq NAME ARGS... <<'PY' ... PY: a check written in Python (its code on stdin, ARGS its
# sys.argv[1:]), queued; pyq_run runs every queued check in one Python process
# (tests/cli/pyq.py) and counts each as `check` would. A Python start costs ~35 ms of CPU, as
# much as a small simulation, and the tests ran 300-odd. The files a queued check reads must
# stay as they are until pyq_run (copy $TMP/out aside first); finish runs what is left.
PYQ_N=0
pyq() {
    local code=
    [ "$PYQ_N" -gt 0 ] || { [ -d "$TMP/pyq" ] || mkdir "$TMP/pyq"; }
    PYQ_N=$((PYQ_N + 1))
    IFS= read -r -d '' code || true
    printf '%s' "$code" >"$TMP/pyq/$PYQ_N.py"
    printf '%s\0' "$@" >"$TMP/pyq/$PYQ_N.args"
}
pyq_run() {
    [ "$PYQ_N" -gt 0 ] || return 0
    local i=0 line name
    : >"$TMP/pyq/results"
    python3 tests/cli/pyq.py "$TMP/pyq" "$PYQ_N" || bad "tests/cli/pyq.py failed"
    while IFS= read -r line; do
        i=$((i + 1))
        IFS= read -r -d '' name <"$TMP/pyq/$i.args"
        if [ "$line" = ok ]; then ok; else bad "$name: ${line#FAIL }"; fi
    done <"$TMP/pyq/results"
    [ "$i" -eq "$PYQ_N" ] || bad "pyq: $PYQ_N checks queued, $i reported"
    PYQ_N=0
}

finish() {
    pyq_run
    printf '%s: %d passed, %d failed\n' "${0##*/}" "$PASS" "$FAIL"
    [ "$FAIL" -eq 0 ]
}
