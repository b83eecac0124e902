# man-usage.awk: one command's --help as man page source: the usage lines, then each flag of
# cli_help's list (the spec from column 3, the help from column 29, a continuation line
# indented to it) as a .TP entry with the flag and its value in bold, then the text after the
# list as it is (.nf). Backslashes, dashes and a leading dot or quote are escaped for troff.
# Run by scripts/gen-man.sh.
function esc(t) {
    gsub(/\\/, "\\e", t); gsub(/-/, "\\-", t)
    return t ~ /^[.']/ ? "\\&" t : t
}
BEGIN { state = "usage" }
state == "usage" && (/^usage: / || /^       tpsim /) {
    print ".nf"; print esc($0); print ".fi"; next
}
state == "usage" { state = "flags" }
state == "flags" && /^  (-[a-z], )?--[a-z]/ {
    spec = substr($0, 3, 26); help = substr($0, 29)
    sub(/ +$/, "", spec)
    print ".TP"; print ".B \"" esc(spec) "\""
    if (help != "") print esc(help)
    next
}
state == "flags" && /^                            [^ ]/ { print esc(substr($0, 29)); next }
state == "flags" { state = "text"; print ".PP"; print ".nf" }
{ print esc($0) }
END { if (state == "text") print ".fi" }
