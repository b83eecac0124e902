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

# check_msg NAME: reads a message on stdin; prints one line per problem, prefixed with NAME.
check_msg() {
    local name=$1 subject second body
    local msg; msg=$(grep -v '^#' | sed -e 's/[[:space:]]*$//')
    subject=$(printf '%s\n' "$msg" | sed -n 1p)
    second=$(printf '%s\n' "$msg" | sed -n 2p)
    body=$(printf '%s\n' "$msg" | sed -n '3,$p' | grep -c '[^[:space:]]')
    local n=${#subject} bad=0
    if [ "$n" -eq 0 ]; then echo "$name: empty subject, expected a line saying what changed"; bad=1; fi
    if [ "$n" -gt 72 ]; then
        echo "$name: subject is $n characters, expected at most 72"; bad=1
    fi
    if [ -n "$second" ]; then echo "$name: second line is not blank, expected a blank line after the subject"; bad=1; fi
    if [ "$body" -eq 0 ]; then echo "$name: no body, expected a body saying why"; bad=1; fi
    return $bad
}

if [ "${1-}" = --msg ]; then
    [ $# -eq 2 ] && [ -r "$2" ] || { echo "usage: check-commits.sh --msg FILE" >&2; exit 2; }
    check_msg "$2" <"$2"; exit $?
fi
[ $# -le 1 ] || { echo "usage: check-commits.sh [RANGE] | --msg FILE" >&2; exit 2; }
range=${1:-$CHECKED_SINCE..HEAD}
shas=$(git rev-list --no-merges "$range" 2>/dev/null) ||
    { echo "check-commits.sh: '$range' is not a commit range git knows" >&2; exit 2; }
status=0
for sha in $shas; do
    git log -1 --format=%B "$sha" | check_msg "$(git log -1 --format=%h "$sha")" || status=1
done
exit $status
