#!/usr/bin/env bash
# install.sh: make install and uninstall into a temporary PREFIX (and under DESTDIR), the
# installed tpsim run from another folder with its files from share/tpsim, and plain make
# naming a missing library's Debian package. It builds its own tpsim (make install), so it runs
# once, whatever TPSIM is.
. "$(dirname "$0")/lib.sh"
S=scenarios/paper-additive.yaml
# the installed binary's step is this tree's build's
build/tpsim run "$S" --tp 4 --steps 3 --format json >"$TMP/ref.json" 2>/dev/null
step_of() { grep -Eo '"mean": ?[0-9.]+' "$1" | head -1; }

# --- make install / uninstall into a temporary PREFIX; the installed tpsim runs from elsewhere ----
P="$TMP/prefix"
if make -s install PREFIX="$P" >"$TMP/make.out" 2>&1; then ok; else bad "make install: $(tail -c 400 "$TMP/make.out")"; fi
check "installed: bin/tpsim" test -x "$P/bin/tpsim"
check "installed: the man page" test -f "$P/share/man/man1/tpsim.1"
for f in models/llama-3.1-70b.yaml models/hw/h100-sxm.yaml models/allreduce/h100-sxm-tp4.yaml \
         scenarios/eager-host-dispatch.yaml validate/h100-ctx2048.csv; do
    check "installed: share/tpsim/$f is the tree's" cmp -s "$f" "$P/share/tpsim/$f"
done
installed=("$P/share/tpsim/scenarios"/*) bundled=(scenarios/*.yaml)
check "installed: every scenario" test "${#installed[@]}" -eq "${#bundled[@]}"
if command -v man >/dev/null; then
    check "the man page renders" bash -c "man -l '$P/share/man/man1/tpsim.1' 2>/dev/null | grep -q 'TPSIM_PATH'"
fi
mkdir -p "$TMP/elsewhere"
# from another folder, with nothing on $TPSIM_PATH: the scenario by name, its files from share/tpsim
(cd "$TMP/elsewhere" && env -u TPSIM_PATH "$P/bin/tpsim" run paper-additive --tp 4 --steps 3 --format json \
    >"$TMP/out" 2>"$TMP/err"); rc=$?
check "installed tpsim runs a scenario by name (exit $rc: $(head -c 200 "$TMP/err"))" test "$rc" -eq 0
check "installed: the same step" test "$(step_of "$TMP/out")" = "$(step_of "$TMP/ref.json")"
check "installed: its calibration from share/tpsim" has "$TMP/out" "\"$P/share/tpsim/models/allreduce/h100-sxm-tp4.yaml\""
(cd "$TMP/elsewhere" && env -u TPSIM_PATH "$P/bin/tpsim" validate paper-additive --format json >"$TMP/out" 2>"$TMP/err"); rc=$?
check "installed: validate finds its default grid (exit $rc)" grep -q "\"grid\": *\"$P/share/tpsim/validate/h100-ctx2048.csv\"" "$TMP/out"
"$P/bin/tpsim" help run >"$TMP/help-run"
check "installed: tpsim help run" has "$TMP/help-run" 'usage: tpsim run'
if make -s uninstall PREFIX="$P" >"$TMP/make.out" 2>&1; then ok; else bad "make uninstall: $(tail -c 400 "$TMP/make.out")"; fi
check "uninstall leaves nothing ($(find "$P" -mindepth 1 2>/dev/null | head -3 | tr '\n' ' '))" \
    test -z "$(find "$P" -mindepth 1 2>/dev/null)"
# a folder that was there before install (an empty bin/, as /usr/local/bin can be) stays
# (the PREFIX above again, emptied by its uninstall: the binary linked for it is reused)
P2=$P; mkdir -p "$P2/bin"
make -s install PREFIX="$P2" >/dev/null 2>&1 && make -s install PREFIX="$P2" >/dev/null 2>&1 \
    && make -s uninstall PREFIX="$P2" >/dev/null 2>&1
check "uninstall keeps a folder it did not create" test -d "$P2/bin"
check "uninstall removes the folders it created" test -z "$(find "$P2" -mindepth 1 ! -path "$P2/bin")"
# DESTDIR stages under another root; uninstall with the same DESTDIR removes what it staged
if make -s install PREFIX=/opt/tpsim DESTDIR="$TMP/stage" >"$TMP/make.out" 2>&1; then ok; else bad "make install DESTDIR: $(tail -c 400 "$TMP/make.out")"; fi
check "DESTDIR: staged under the root" test -x "$TMP/stage/opt/tpsim/bin/tpsim" -a -f "$TMP/stage/opt/tpsim/share/tpsim/validate/h100-ctx2048.csv"
check "DESTDIR: the binary looks in PREFIX, not the staging root" grep -q "/opt/tpsim/share/tpsim" "$TMP/stage/opt/tpsim/bin/tpsim"
make -s uninstall PREFIX=/opt/tpsim DESTDIR="$TMP/stage" >/dev/null 2>&1
check "DESTDIR: uninstall leaves nothing" test -z "$(find "$TMP/stage" -type f)"

# --- plain make names a missing library's Debian package instead of a bare compiler error
make --no-print-directory BUILD="$TMP/b" HDR_PKGS="tpsim-no-such-header.h:libtpsim-nosuch-dev zlib.h:zlib1g-dev" \
    "$TMP/b/.headers-ok" >"$TMP/make.out" 2>&1
check "make names the missing package" match "$TMP/make.out" "missing the Debian package\(s\) libtpsim-nosuch-dev .*make deps"

finish
