#!/usr/bin/env bash
# completion.sh: the bash completion (docs/tpsim.bash) is what scripts/gen-completion.sh makes
# from the command and flag tables now, and completes every command and every flag of each:
# the names come from `tpsim help --list` and each `tpsim help COMMAND`, not from the script.
source tests/cli/lib.sh
check "docs/tpsim.bash is current (make completion)" \
    cmp -s docs/tpsim.bash <(scripts/gen-completion.sh "$TPSIM")
mapfile -t cmds < <("$TPSIM" help --list)
check "commands listed" test "${#cmds[@]}" -ge 9
# complete LINE...: what _tpsim offers for the words given, the last being completed
complete_words() {
    bash -c 'source docs/tpsim.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tpsim
             printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
# every "COMMAND WORD" pair (WORD: a flag of it, from its --help) completed in one bash, which
# prints each pair whose flag is not among the completions of its first four characters
# (a flag line's flag, as sed -n 's/^  \(-[A-Za-z0-9], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p' prints it,
# read by bash's =~, the same regex)
for c in "${cmds[@]}"; do
    "$TPSIM" help "$c" >"$TMP/help"
    n=0
    while IFS= read -r l; do
        [[ $l =~ ^\ \ (-[A-Za-z0-9],\ )?(--[a-z0-9-]*) ]] || continue
        printf '%s %s\n' "$c" "${BASH_REMATCH[2]}" >>"$TMP/pairs"
        n=$((n + 1))
    done <"$TMP/help"
    check "$c has flags" test "$n" -ge 1
    printf '%s %s\n' "$c" "$c" >>"$TMP/cmdpairs"
done
missing() { # FILE: the pairs "A B" for which _tpsim offers no B after "tpsim A <prefix of B>"
    bash -c 'source docs/tpsim.bash
        while read -r a b; do
            if [ "$a" = "$b" ]; then COMP_WORDS=(tpsim "${b:0:2}"); COMP_CWORD=1
            else COMP_WORDS=(tpsim "$a" "${b:0:4}"); COMP_CWORD=2; fi
            _tpsim
            [[ " ${COMPREPLY[*]} " == *" $b "* ]] || echo "$a $b"
        done <"$1"' _ "$1"
}
mapfile -t all_pairs < <(cat "$TMP/cmdpairs" "$TMP/pairs")
printf '%s\n' "${all_pairs[@]}" >"$TMP/all-pairs"
mapfile -t miss < <(missing "$TMP/all-pairs")
check "completes every command and every flag (${#all_pairs[@]} pairs): ${miss[*]}" \
    test "${#miss[@]}" -eq 0
check "completes trace's subcommands" test "$(complete_words tpsim trace c)" = compare
complete_words tpsim help pl >"$TMP/cw-help"
check "completes help's topics" has_line "$TMP/cw-help" plan
complete_words tpsim run scenarios/eager-host-d >"$TMP/cw-file"
check "a file after a command" has_line "$TMP/cw-file" scenarios/eager-host-dispatch.yaml
finish
