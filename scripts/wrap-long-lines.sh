#!/usr/bin/env bash
# wrap-long-lines.sh [FILE...]: wraps the lines over 100 columns (CONTRIBUTING.md, Style) in C
# sources and headers with clang-format, touching those lines only (--lines), so the rest of
# each file keeps its hand layout. The style is .clang-format at the top of the tree.
# Default: every tracked .c, .h and .cu file. Review the result: a string broken mid-phrase
# reads better broken by hand at a space.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
if ! command -v clang-format >/dev/null; then
    echo "wrap-long-lines.sh: needs clang-format (apt-get install clang-format)" >&2
    exit 2
fi
[ $# -gt 0 ] || set -- $(git ls-files '*.c' '*.h' '*.cu')
for f in "$@"; do
    lines=$(awk 'length > 100 { printf "--lines=%d:%d ", NR, NR }' "$f")
    # shellcheck disable=SC2086 # one --lines flag per long line
    [ -z "$lines" ] || clang-format -i $lines "$f"
done
