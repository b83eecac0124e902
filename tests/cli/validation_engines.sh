# validation_engines.sh: docs/validation-engines.md (make validation-engines) is what
# scripts/validation-engines.sh writes: every block is there, one sampled block regenerates
# row for row (the whole page takes about 14 CPU s), and the digest counts its rows.
source tests/cli/lib.sh
PAGE=docs/validation-engines.md
check "one block per scenario x engine x calibration set, six rows each" python3 - $PAGE <<'PY'
import collections, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| ") and l.count("|") == 12]
rows = [[f.strip() for f in l.strip().strip("|").split("|")] for l in rows[1:]]  # past the header
blocks = collections.Counter((r[0], r[1], r[2]) for r in rows)
want = {(s, e, c) for s in ("paper-additive", "eager-host-dispatch", "eager-straggler", "eager-broadcast")
        for e in ("vllm-v0", "vllm-v1", "vllm-v1-async") for c in ("stated", "measured")}
want |= {("eager-sourced", e, "measured") for e in ("vllm-v0", "vllm-v1", "vllm-v1-async")}
assert set(blocks) == want, set(blocks) ^ want
assert all(n == 6 for n in blocks.values()), blocks
# the digest: each engine and set's verdict counts are its rows'
digest = [l for l in open(sys.argv[1]) if l.startswith("| vllm-")]
assert len(digest) == 6, digest
for l in digest:
    f = [x.strip() for x in l.strip().strip("|").split("|")]
    mine = [r for r in rows if r[1] == f[0] and r[2] == f[1]]
    assert int(f[2]) == len(mine), (f, len(mine))
    for i, v in enumerate(("SUPPORTED", "PASS-NO-SKILL", "FAIL", "MISFIT", "UNIDENTIFIED")):
        assert int(f[3 + i]) == sum(r[8] == v for r in mine), (f, v)
PY
expect_ok "a sampled block" scripts/validation-engines.sh "$TPSIM" - eager-host-dispatch vllm-v1 measured
check "the sampled block regenerates row for row" python3 - "$TMP/out" $PAGE <<'PY'
import sys
got = open(sys.argv[1]).read().splitlines()
page = [l for l in open(sys.argv[2]).read().splitlines()
        if l.startswith("| eager-host-dispatch | vllm-v1 | measured | ")]
assert len(got) == 6 and got == page, (got, page)
PY
finish
