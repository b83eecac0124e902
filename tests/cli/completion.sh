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
for c in "${cmds[@]}"; do
    check "completes command $c" grep -qx -- "$c" <(complete_words tpsim "${c:0:2}")
    mapfile -t flags < <("$TPSIM" help "$c" |
        sed -n 's/^  \(-[A-Za-z0-9], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p')
    check "$c has flags" test "${#flags[@]}" -ge 1
    for f in "${flags[@]}"; do
        check "completes $c $f" grep -qx -- "$f" <(complete_words tpsim "$c" "${f:0:4}")
    done
done
check "completes trace's subcommands" test "$(complete_words tpsim trace c)" = compare
check "completes help's topics" grep -qx plan <(complete_words tpsim help pl)
check "a file after a command" grep -qx scenarios/eager-host-dispatch.yaml \
    <(complete_words tpsim run scenarios/eager-host-d)
finish
