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
for c in "${cmds[@]}"; do
    n=$("$TPSIM" help "$c" | sed -n 's/^  \(-[A-Za-z0-9], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p' |
        tee -a "$TMP/flags" | sed "s/^/$c /" | tee -a "$TMP/pairs" | wc -l)
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
miss=$(cat "$TMP/cmdpairs" "$TMP/pairs" | missing /dev/stdin | tr '\n' ' ')
check "completes every command and every flag ($(cat "$TMP/cmdpairs" "$TMP/pairs" | wc -l) pairs): $miss" \
    test -z "$miss"
check "completes trace's subcommands" test "$(complete_words tpsim trace c)" = compare
check "completes help's topics" grep -qx plan <(complete_words tpsim help pl)
check "a file after a command" grep -qx scenarios/eager-host-dispatch.yaml \
    <(complete_words tpsim run scenarios/eager-host-d)
finish
