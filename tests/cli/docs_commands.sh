# docs_commands.sh: every command README.md and docs/*.md show in a ```console block runs and
# prints what the page says (the rules: tests/cli/docs_commands.py), every relative link of a
# page names a file that exists, the generated tables of docs/results.md that need no
# simulation are what their sources make, and the checker fails where it should.
source tests/cli/lib.sh
# the commands run from a folder that holds the repository's top-level folders, so a file a
# page's command writes (-o what-if.csv, --trace sim.json) lands there, not in the tree
mkdir "$TMP/work" "$TMP/p"
for f in docs models scenarios scripts tests validate; do ln -s "$PWD/$f" "$TMP/work/$f"; done
if python3 tests/cli/docs_commands.py "$TPSIM" "$TMP/work" README.md docs/*.md >"$TMP/docs"; then
    ok
else
    bad "a page shows a command that does not print what it says"
fi
cat "$TMP/docs"
# the generated tables of docs/results.md whose sources are files (make docs rewrites all four;
# the validation and what-if tables take seconds of simulation, too slow for this suite)
check "docs/results.md's engines digest and atlas table are their sources' (make docs)" \
    scripts/docs-tables.sh --check "$TPSIM" engines-digest atlas-table

# --- the checker itself, on planted pages: each one's verdict by the rules, by hand ----------
# page NAME LINE...: a page holding one console block of LINEs
page() { local n=$1; shift; printf '%s\n' '```console' "$@" '```' >"$TMP/p/$n.md"; }
version=$("$TPSIM" version)
usage='usage: tpsim COMMAND [ARGS]   (tpsim COMMAND --help: its flags)'
page whole '$ tpsim version' "$version"
page extra '$ tpsim version' "$version" "a line it never prints"
page prefix '$ tpsim version' "${version:0:5} ..."
page unended '$ tpsim --help' "$usage"
page elided '$ tpsim --help' '...' "$usage" '...'
page unanchored '$ tpsim --help' "$usage" '...' '  --help, -h'
page order '$ tpsim --help' '...' '  --help, -h' '...' "$usage" '...'
page status '$ tpsim run no-such-scenario'
page shown-status '$ tpsim run no-such-scenario; echo "exit $?"' '...' 'exit 2'
printf '%s\n' '```sh' 'tpsim run cuda-graphs' '```' >"$TMP/p/outside.md"
printf '%s\n' '```console skip needs a GPU' '$ tpsim run cuda-graphs' '```' >"$TMP/p/skipped.md"
printf '%s\n' '[a page](no-such-page.md)' >"$TMP/p/link.md"
printf '%s\n' '# A heading: `with code`' '[here](#a-heading-with-code) [there](#no-such-heading)' >"$TMP/p/anchor.md"
python3 tests/cli/docs_commands.py --per-page "$TPSIM" "$TMP/work" "$TMP"/p/*.md >"$TMP/v" 2>&1
want() { # want NAME FAILURES SKIPPED
    check "planted page $1: $2 failures, $3 skipped" has_line "$TMP/v" "$TMP/p/$1.md: $2 failures, $3 skipped"
}
want whole 0 0
want extra 1 0
want prefix 0 0
want unended 1 0
want elided 0 0
want unanchored 1 0
want order 1 0
want status 1 0
want shown-status 0 0
want outside 1 0
want skipped 0 1
want link 1 0
want anchor 1 0
finish
