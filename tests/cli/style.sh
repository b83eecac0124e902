#!/usr/bin/env bash
# style.sh: no C line over 100 columns, and no function body over 80 lines without a reason
# (CONTRIBUTING.md, Style). In every C source and header under base/, sim/, calibrate/,
# validate/, cmd/ and tests/, a function whose body runs over 80 lines must carry a comment
# containing "long because" in the comment block directly above its signature. It also checks that a planted long function is caught, and that the
# marker and short functions pass.
. "$(dirname "$0")/lib.sh"

# long_functions FILE...: prints "FILE:LINE: NAME: body of N lines" for each function over 80
# lines with no marker. The heuristic, for the repository's style (braces of a function on
# their own line, K&R elsewhere): a function starts at a line that is "{" at column 0 right
# after a line ending in ")" (its signature's last line), and ends at the next "}" at column 0;
# its body is the lines between. The signature starts at the last line before the "{" that
# begins at column 0 (continuation lines are indented; a return type on the line above joins
# it); the comment block directly above that line (lines starting "/*", " *" or "//", no
# blank line between) is searched for the marker.
long_functions() {
    awk -v max=80 '
    FNR == 1 { inb = 0; delete text }
    { text[FNR] = $0 }
    !inb && /^\{/ && FNR > 1 && text[FNR - 1] ~ /\)[ \t]*(\/\*.*\*\/)?[ \t]*$/ {
        inb = 1; start = FNR
        sig = FNR - 1
        while (sig > 1 && text[sig] ~ /^[ \t]/) sig--
        # a return type on a line of its own ("static int" above "name(...)")
        while (sig > 1 && text[sig - 1] ~ /^[A-Za-z_]/ && text[sig - 1] !~ /[;{}]/) sig--
        marked = 0
        for (l = sig - 1; l >= 1 && text[l] ~ /^[ \t]*(\/\*|\*|\/\/)/; l--)
            if (text[l] ~ /long because/) marked = 1
        for (l = sig; l < FNR && text[l] !~ /\(/; l++) ;
        name = text[l]; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
        next
    }
    inb && /^\}/ {
        inb = 0
        body = FNR - start - 1
        if (body > max && !marked)
            printf "%s:%d: %s: body of %d lines (over %d, and no \"long because\" " \
                   "comment above it)\n", FILENAME, sig, name, body, max
    }' "$@"
}

# long_lines FILE...: "FILE:LINE: N columns" for each line over 100 columns (tabs count as one:
# the tree indents with spaces). scripts/wrap-long-lines.sh wraps them.
long_lines() {
    awk 'length > 100 { printf "%s:%d: %d columns\n", FILENAME, FNR, length }' "$@"
}

files=$(find base sim calibrate validate cmd tests -name '*.[ch]' -o -name '*.cu' | sort)
wide=$(long_lines $files)
check "no C line over 100 columns (scripts/wrap-long-lines.sh wraps them)${wide:+:
$wide}" test -z "$wide"
printf '%s\n' "$(printf 'x%.0s' $(seq 100))" "$(printf 'y%.0s' $(seq 101))" >"$TMP/wide.c"
check "a planted 101-column line is named, a 100-column one is not" \
    test "$(long_lines "$TMP/wide.c")" = "$TMP/wide.c:2: 101 columns"

long=$(long_functions $files)
check "no function over 80 lines without a 'long because' comment${long:+:
$long}" test -z "$long"

# the check itself: a planted 81-line body is named; 80 lines, or the marker, pass
plant() { # plant FILE BODY_LINES [COMMENT]: a function of that many body lines
    { [ -n "${3:-}" ] && printf '%s\n' "$3"
      printf 'static int\nplanted(int a,\n        int b)\n{\n'
      for ((i = 0; i < $2; i++)); do printf '    a += b;\n'; done
      printf '    return a;\n}\n'; } >"$1"
}
plant "$TMP/long.c" 80 # the return makes 81 body lines
got=$(long_functions "$TMP/long.c")
want="$TMP/long.c:1: planted: body of 81 lines (over 80, and no \"long because\" comment above it)"
check "a planted 81-line function is named (got: $got)" test "$got" = "$want"
plant "$TMP/short.c" 79
check "an 80-line body passes" test -z "$(long_functions "$TMP/short.c")"
plant "$TMP/marked.c" 200 '/* one table read top to bottom: long because a split hides the order */'
check "a long function with the marker passes" test -z "$(long_functions "$TMP/marked.c")"
plant "$TMP/apart.c" 200 '/* long because ... */'
sed -i '1a\\' "$TMP/apart.c" # a blank line between the comment and the function
check "a marker separated by a blank line does not count" test -n "$(long_functions "$TMP/apart.c")"

finish
