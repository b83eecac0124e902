#!/usr/bin/env bash
# commits.sh: scripts/check-commits.sh, CONTRIBUTING.md's commit-message rule, against commits
# built here whose verdicts are known by construction, then against this repository's own
# commits since the rule was first checked.
. "$(dirname "$0")/lib.sh"
chk=$PWD/scripts/check-commits.sh

repo=$TMP/repo
git init -q "$repo" && git -C "$repo" config user.email t@t && git -C "$repo" config user.name t
commit() { # commit MESSAGE: an empty commit with exactly that message
    printf '%s' "$1" >"$TMP/m"; git -C "$repo" commit -q --allow-empty --cleanup=verbatim -F "$TMP/m"
}
commit $'base\n\nthe first commit'
base=$(git -C "$repo" rev-parse HEAD)
s72=$(printf 'x%.0s' $(seq 72))
commit "$s72"$'\n\nexactly 72 characters is allowed'
good=$(git -C "$repo" rev-parse --short HEAD)
( cd "$repo" && "$chk" "$base..HEAD" ) >"$TMP/out" 2>&1
check "a 72-character subject with a body passes" test $? -eq 0
commit "${s72}y"$'\n\nthe body is fine'
long=$(git -C "$repo" rev-parse --short HEAD)
commit 'no body at all'
nobody=$(git -C "$repo" rev-parse --short HEAD)
commit $'subject\nsecond line not blank\nmore'
noblank=$(git -C "$repo" rev-parse --short HEAD)
( cd "$repo" && "$chk" "$base..HEAD" ) >"$TMP/out" 2>&1; rc=$?
check "offenders give status 1" test "$rc" -eq 1
check "73 characters is named" grep -q "^$long: subject is 73 characters, expected at most 72" "$TMP/out"
check "a missing body is named" grep -q "^$nobody: no body" "$TMP/out"
check "a second line that is not blank is named" grep -q "^$noblank: second line is not blank" "$TMP/out"
check "a good commit is not named" sh -c "! grep -q '^$good' '$TMP/out'"
check "one line per problem (3 offenders, 3 problems)" test "$(wc -l <"$TMP/out")" -eq 3

# the hook mode: git's comment lines are not part of the message
printf 'subject\n\nwhy it changed\n# Please enter the commit message\n' >"$TMP/msg"
expect_ok "--msg on a good message" "$chk" --msg "$TMP/msg"
printf 'subject\n\n# only comments below the subject\n' >"$TMP/msg"
"$chk" --msg "$TMP/msg" >/dev/null 2>&1
check "--msg: comments are not a body" test $? -eq 1
( cd "$repo" && "$chk" nonsense..HEAD ) >/dev/null 2>&1
check "an unknown range is status 2" test $? -eq 2

# this repository's own commits since the rule was checked (skipped outside a git clone)
if git rev-parse --git-dir >/dev/null 2>&1 && git cat-file -e 374d2e6f2d74d0506e43ac8d6435258c74c00f46 2>/dev/null; then
    expect_ok "this repository's commits follow the rule" "$chk"
    [ -s "$TMP/out" ] && cat "$TMP/out" >&2
fi
finish
