#!/usr/bin/env bash
# check-commits.sh: CONTRIBUTING.md's commit-message rule, checked.
#   scripts/check-commits.sh [RANGE]     every non-merge commit in RANGE (git rev-list syntax);
#                                        default: the commits after CHECKED_SINCE up to HEAD
#   scripts/check-commits.sh --msg FILE  one message (a commit-msg hook: `make hooks` installs it)
# The rule: a subject of at most 72 characters, a blank second line, then a body (at least one
# non-blank line) saying why. Lines starting with '#' are git's comments and are ignored.
# Each offending commit gets one line "SHA: what is wrong"; the status is 1 if any, 2 on misuse.
set -uo pipefail

# The last commit before the rule was checked (the history before it keeps its long subjects).
CHECKED_SINCE=374d2e6f2d74d0506e43ac8d6435258c74c00f46

# check_msgs: reads messages on stdin, each after a line "\001NAME"; prints one line per
# problem, prefixed with its NAME; status 1 if any. One awk for the whole history: a process
# per commit made this the slowest of the tests. Lengths are characters (UTF-8 continuation
# bytes are not counted), as git and the hook's editor show them.
check_msgs() {
    LC_ALL=C awk '
        function check(   subj, n, bad) {
            if (name == "") return
            subj = line[1]; gsub(/[\200-\277]/, "", subj); n = length(subj)
            if (n == 0) { print name ": empty subject, expected a line saying what changed"; bad = 1 }
            if (n > 72) { print name ": subject is " n " characters, expected at most 72"; bad = 1 }
            if (nl >= 2 && line[2] != "") {
                print name ": second line is not blank, expected a blank line after the subject"; bad = 1
            }
            if (body == 0) { print name ": no body, expected a body saying why"; bad = 1 }
            if (bad) status = 1
        }
        /^\001/ { check(); name = substr($0, 2); nl = 0; body = 0; next }
        /^#/ { next }
        { sub(/[ \t\r]+$/, ""); line[++nl] = $0; if (nl >= 3 && $0 ~ /[^ \t]/) body++ }
        END { check(); exit status }'
}

if [ "${1-}" = --msg ]; then
    [ $# -eq 2 ] && [ -r "$2" ] || { echo "usage: check-commits.sh --msg FILE" >&2; exit 2; }
    { printf '\001%s\n' "$2"; cat "$2"; } | check_msgs; exit $?
fi
[ $# -le 1 ] || { echo "usage: check-commits.sh [RANGE] | --msg FILE" >&2; exit 2; }
range=${1:-$CHECKED_SINCE..HEAD}
git rev-list --no-merges "$range" >/dev/null 2>&1 ||
    { echo "check-commits.sh: '$range' is not a commit range git knows" >&2; exit 2; }
git log --no-merges --format='%x01%h%n%B' "$range" | check_msgs
