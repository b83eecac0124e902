#!/usr/bin/env bash
# gen-man.sh TPSIM < docs/tpsim.1 > NEW: the man page's COMMAND USAGE section regenerated from
# the commands' --help, whose flag list cli_help prints from the same flag table the parser
# reads (base/cli.h), so the manual, --help and the flags accepted cannot differ: every command
# in the dispatch table (`tpsim help --list`; a new one is picked up with no change here) gets
# `tpsim help COMMAND` between the two marker lines: its usage lines as they are, each line of
# the flag list (cli_help's fixed layout: "  -o, --name ARG" from column 3, the help from
# column 29, continuations indented to it) as a .TP entry, the text after it verbatim; the
# rest of the page passes through unchanged. `make man` writes docs/tpsim.1;
# tests/cli/conventions.sh fails when it is stale.
set -euo pipefail
TPSIM=$1
begin='.\" BEGIN GENERATED USAGE (scripts/gen-man.sh; do not edit by hand)'
end='.\" END GENERATED USAGE'
# the command names: the dispatch table itself (tpsim help --list), so a new command is here
# as soon as it can be run
mapfile -t cmds < <("$TPSIM" help --list)
[ "${#cmds[@]}" -gt 0 ] || { echo "gen-man.sh: no commands from '$TPSIM help --list'" >&2; exit 1; }
awkfile=$(dirname "$0")/man-usage.awk
usage() {
    printf '%s\n' "$begin"
    printf '.SH COMMAND USAGE\n'
    printf 'Each command'"'"'s usage and flags, generated from the flag table its parser '
    printf 'reads, as\n.B tpsim help\n.I COMMAND\nprints them.\n'
    for c in "${cmds[@]}"; do
        printf '.SS %s\n' "$c"
        "$TPSIM" help "$c" | awk -f "$awkfile"
    done
    printf '%s\n' "$end"
}
# (through the environment: awk -v would read the backslashes as escapes)
GEN=$(usage) B=$begin E=$end awk '
    $0 == ENVIRON["B"] { print ENVIRON["GEN"]; skip = 1; found = 1; next }
    $0 == ENVIRON["E"] { skip = 0; next }
    !skip { print }
    END { if (!found) exit 3 }' || { echo "gen-man.sh: no '$begin' line in the page" >&2; exit 1; }
