#!/usr/bin/env python3
"""docs_commands.py [--per-page] TPSIM WORKDIR PAGE...: every command a page shows runs and prints what the
page says it prints.

A page shows a command in a fenced block whose info string is `console`:

    ```console
    $ tpsim run cuda-graphs --tp 8
    tpsim run cuda-graphs: Llama-3.1-70B on H100 SXM, TP-8, batch 1, ctx 2048, CUDA-graph mode
    step time  12.574 ms mean ...
    ...
    verdict: GPU-bound: ...
    ```

- `$ ` starts a command; a line ending in `\\` continues it. The lines after it, up to the next
  `$ ` or the fence, are its output as the page shows it.
- Each shown line must be a whole line of the real output (stdout and stderr together, trailing
  blanks ignored), and the shown lines must come in the real output's order, one after another.
- A line `...` alone elides any number of lines. Without one first, the shown output starts at
  the real output's first line; without one last, it ends at its last line. A command shown with
  no output must print nothing.
- A line ending in ` ...` shows only the start of a longer line: the real line must begin with
  the text before it.
- The command runs in bash (`set -o pipefail`) from WORKDIR, a folder holding the repository's
  top-level folders (so `tests/data/...` and `scenarios/...` resolve as they do from the
  repository root, and a file a command writes lands in WORKDIR), with `tpsim` meaning TPSIM.
  It must exit 0: a page shows a failure as `$ tpsim ...; echo "exit $?"`.
- A block whose info string is `console skip REASON` is not run (a command too slow for the test
  suite, or one that needs a GPU or a file only a user has); its commands are counted and listed.
  README.md may not skip any.
- Every `tpsim` command a page shows in a fenced block is in a console block, and every relative
  link of a page names a file that exists and, after a `#`, an anchor of that page (a heading,
  as GitHub spells its anchor, or an `<a id="...">`).

The same command text runs once (its output is kept for the next page that shows it), so pages
must not write one file name with two contents. Prints one line per failure and a summary;
exit status 1 on any failure. --per-page (the test of the checker itself) also prints, for each
page, "PAGE: N failures, K skipped"."""
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```(\S*)\s*(.*)$")
LINK = re.compile(r"\]\(([^)\s]+)\)")
TPSIM_LINE = re.compile(r"^\s*(\$\s+)?(build/)?tpsim\s")
ANCHOR_ID = re.compile(r'<a id="([^"]+)"')


def anchors(path):
    """the anchors of a markdown page: its headings as GitHub spells them, and <a id="...">"""
    found, fenced = set(ANCHOR_ID.findall(open(path, encoding="utf-8").read())), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            found.add(slug)
    return found


def blocks(path, text):
    """yields (line number of the fence, info words, body lines) for each fenced block"""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, info = i + 1, (m.group(1) + " " + m.group(2)).split()
        body = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"{path}:{start}: a fenced block that never closes")
        yield start, info, body
        i += 1


def commands(start, body):
    """(line number, command text, shown output lines) for each `$ ` command of a block"""
    out, i = [], 0
    while i < len(body):
        line = body[i]
        if not line.startswith("$ "):
            raise ValueError(f"{start + 1 + i}: output before any command: {line!r}")
        at, cmd = start + 1 + i, line[2:]
        while cmd.endswith("\\"):
            i += 1
            if i == len(body):
                raise ValueError(f"{at}: a command continued past the block's end")
            cmd = cmd[:-1] + "\n" + body[i]
        i += 1
        shown = []
        while i < len(body) and not body[i].startswith("$ "):
            shown.append(body[i].rstrip())
            i += 1
        out.append((at, cmd, shown))
    return out


def line_matches(shown, real):
    if shown.endswith(" ...") and shown != "...":
        return real.startswith(shown[:-4].rstrip())
    return real == shown


def match(shown, real):
    """None when the shown output is in the real one as the rules say, else why not"""
    if not shown:
        return None if not real else "the page shows no output, the command printed some"
    lead, trail = shown[0] == "...", shown[-1] == "..."
    segs, cur = [], []
    for s in shown:
        if s == "...":
            if cur:
                segs.append(cur)
            cur = []
        else:
            cur.append(s)
    if cur:
        segs.append(cur)
    pos = 0
    for k, seg in enumerate(segs):
        anchored = k == 0 and not lead
        found = None
        for p in range(pos, len(real) - len(seg) + 1):
            if all(line_matches(s, real[p + j]) for j, s in enumerate(seg)):
                found = p
                break
            if anchored:
                break
        if found is None:
            where = "as the first lines" if anchored else "in order after the lines before it"
            return f"not found {where}: {seg[0]!r}" + (f" (+{len(seg) - 1} lines)" if len(seg) > 1 else "")
        pos = found + len(seg)
    if segs and not trail and pos != len(real):
        return f"the output goes on after the last line shown ({len(real) - pos} more; end with '...')"
    return None


def run(tpsim, workdir, cmd):
    script = f'set -o pipefail\ntpsim() {{ "{tpsim}" "$@"; }}\n{cmd}\n'
    p = subprocess.run(["bash", "-c", script], cwd=workdir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    text = p.stdout.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return p.returncode, [l.rstrip() for l in lines]


class Checker:
    """the pages' failures, skipped commands and command outputs (each command text run once)"""

    def __init__(self, tpsim, workdir):
        self.tpsim, self.workdir = tpsim, workdir
        self.fails, self.skipped, self.outputs, self.checked = [], [], {}, 0

    def links(self, page, text):
        for m in LINK.finditer(text):
            target, _, frag = m.group(1).partition("#")
            if re.match(r"^[a-z]+:", target):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(page), target)) if target else page
            if not os.path.exists(path):
                self.fails.append(f"{page}: a link to {m.group(1)}, which does not exist")
            elif frag and path.endswith(".md") and frag not in anchors(path):
                self.fails.append(f"{page}: a link to {m.group(1)}, an anchor {path} lacks")

    def command(self, page, at, cmd, shown):
        if cmd not in self.outputs:
            self.outputs[cmd] = run(self.tpsim, self.workdir, cmd)
        rc, real = self.outputs[cmd]
        self.checked += 1
        first = cmd.splitlines()[0]
        if rc != 0:
            self.fails.append(f"{page}:{at}: `{first}` exited {rc}:\n    " + "\n    ".join(real[-15:]))
            return
        why = match(shown, real)
        if why:
            self.fails.append(f"{page}:{at}: `{first}`: {why}; it printed:\n    " +
                              "\n    ".join(real[:60]))

    def page(self, page):
        text = open(page, encoding="utf-8").read()
        self.links(page, text)
        readme = os.path.normpath(page) == "README.md"
        for start, info, body in blocks(page, text):
            if (info[0] if info else "") != "console":
                for j, line in enumerate(body):
                    if TPSIM_LINE.match(line):
                        self.fails.append(f"{page}:{start + 1 + j}: a tpsim command outside a "
                                          "console block")
                continue
            try:
                cmds = commands(start, body)
            except ValueError as e:
                self.fails.append(f"{page}:{e}")
                continue
            if len(info) > 1 and info[1] == "skip":
                why = " ".join(info[2:]) or "no reason given"
                if readme:
                    self.fails.append(f"{page}:{start}: README.md skips a block ({why}): its "
                                      "commands must run")
                for at, cmd, _ in cmds:
                    self.skipped.append(f"{page}:{at}: {cmd.splitlines()[0]}  ({why})")
                continue
            for at, cmd, shown in cmds:
                self.command(page, at, cmd, shown)


def main():
    args = sys.argv[1:]
    per_page = bool(args) and args[0] == "--per-page"
    args = args[1:] if per_page else args
    c = Checker(os.path.abspath(args[0]), args[1])
    tally = []
    for page in args[2:]:
        before = (len(c.fails), len(c.skipped))
        c.page(page)
        tally.append(f"{page}: {len(c.fails) - before[0]} failures, "
                     f"{len(c.skipped) - before[1]} skipped")
    for f in c.fails:
        print("FAIL " + f)
    print(f"docs_commands: {c.checked} commands checked ({len(c.outputs)} run) in "
          f"{len(args) - 2} pages; {len(c.skipped)} skipped")
    for s in c.skipped:
        print("  skipped " + s)
    if per_page:
        print("\n".join(tally))
    return 1 if c.fails else 0


if __name__ == "__main__":
    sys.exit(main())
