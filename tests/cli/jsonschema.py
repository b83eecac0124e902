#!/usr/bin/env python3
"""jsonschema.py: the part of JSON Schema (2020-12) that docs/schema/*.json use, checked with
the standard library only (PyPI is not reachable from the build machines).

  jsonschema.py check SCHEMA FILE...   each FILE (JSON) against SCHEMA: every error on stderr
                                       as `FILE: PATH: what`, status 1 if any
  jsonschema.py vocab SCHEMADIR DOC    the shared vocabulary: a key has one type wherever a
                                       schema in SCHEMADIR names it, and a key that two output
                                       schemas share has a row in DOC's table with that type

Keywords: type (a name or a list; "integer" is a whole number, "number" any number, a boolean
is neither), properties, required, additionalProperties (false: an unknown key is an error; a
schema: every other key's value), items, enum, $ref (local "#/$defs/NAME"), $defs,
description; two annotations for the vocabulary check: "x-echo": true on an object whose keys
echo an input file's own (the scenario's validated: block), left out; "x-names": true on an
object whose keys are names (op classes, phases), not vocabulary: its values are checked.

The vocabulary rule: a key in DOC's table has that type (a schema may narrow it: a place that
never writes null or a string leaves it out); a key not in the table has one type everywhere.
"""
import json
import os
import re
import sys

TYPES = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def resolve(root, s):
    while "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/"):
            raise SystemExit(f"jsonschema.py: only local $ref are supported, got {ref}")
        s2 = root
        for part in ref[2:].split("/"):
            s2 = s2[part]
        s = s2
    return s


def check(root, s, v, path, errs):
    s = resolve(root, s)
    t = s.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        for n in names:
            if n not in TYPES:
                raise SystemExit(f"jsonschema.py: unknown type {n!r} at {path}")
        if not any(TYPES[n](v) for n in names):
            errs.append(f"{path or '.'}: {json.dumps(v)[:60]} is not {' or '.join(names)}")
            return
    if "enum" in s and v not in s["enum"]:
        errs.append(f"{path or '.'}: {json.dumps(v)[:60]} is not one of {s['enum']}")
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", []):
            if k not in v:
                errs.append(f"{path or '.'}: missing key '{k}'")
        extra = s.get("additionalProperties", True)
        for k, x in v.items():
            if k in props:
                check(root, props[k], x, f"{path}.{k}", errs)
            elif extra is False:
                errs.append(f"{path or '.'}: unknown key '{k}'")
            elif isinstance(extra, dict):
                check(root, extra, x, f"{path}.{k}", errs)
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v):
            check(root, s["items"], x, f"{path}[{i}]", errs)


def base_types(root, s):
    """The non-null type names of a property's schema (null only says a value may be absent)."""
    s = resolve(root, s)
    t = s.get("type", [])
    names = t if isinstance(t, list) else [t]
    names = {n for n in names if n != "null"}
    if "integer" in names and "number" in names:
        names.discard("integer")
    return frozenset(names)


def keys_of(root, s, where, out, seen):
    """Every named property under s: out[key] = [(types, where), ...]."""
    if id(s) in seen:
        return
    seen.add(id(s))
    s = resolve(root, s)
    if s.get("x-echo"):
        return
    for k, p in s.get("properties", {}).items():
        if not s.get("x-names"):
            out.setdefault(k, []).append((base_types(root, p), f"{where}.{k}"))
        keys_of(root, p, f"{where}.{k}", out, seen)
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        keys_of(root, extra, f"{where}.*", out, seen)
    if isinstance(s.get("items"), dict):
        keys_of(root, s["items"], f"{where}[]", out, seen)


def vocab(schema_dir, doc):
    bad = []
    per_key = {}  # key -> {types: [where, ...]}
    for f in sorted(os.listdir(schema_dir)):
        if not f.endswith(".json"):
            continue
        root = json.load(open(os.path.join(schema_dir, f)))
        found = {}
        keys_of(root, root, f[:-5], found, set())
        for k, uses in found.items():
            for types, where in uses:
                per_key.setdefault(k, {}).setdefault(types, []).append(where)
    # docs/json.md's table: | `key` | type | unit | meaning |
    table = {}
    for line in open(doc):
        m = re.match(r"^\| `([a-z0-9_]+)` \| ([a-z\\|]+) \|", line)  # a|b written a\|b
        if m:
            names = m.group(2).replace("\\|", "|").split("|")
            table[m.group(1)] = frozenset(t for t in names if t != "null")
    def shown(types):
        return "/".join(sorted(types)) or "null"
    for k, by_type in sorted(per_key.items()):
        files = {re.split(r"[.\[]", w)[0] for ws in by_type.values() for w in ws}
        if k in table:
            for types, ws in by_type.items():
                if not types <= table[k] and not (types == {"integer"} and "number" in table[k]):
                    bad.append(f"key '{k}' is {shown(types)} at {ws[0]}, "
                               f"{doc} says {shown(table[k])}")
        elif len(by_type) > 1:
            uses = "; ".join(f"{shown(t)} at {w[0]}" for t, w in by_type.items())
            bad.append(f"key '{k}' has more than one type: {uses}")
        elif len(files) > 1:
            bad.append(f"key '{k}' is in {', '.join(sorted(files))} but not in {doc}'s table")
    for k in sorted(table):
        if k not in per_key:
            bad.append(f"{doc} lists '{k}', which no schema has")
    for b in bad:
        print(f"jsonschema.py vocab: {b}", file=sys.stderr)
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "check":
        root = json.load(open(argv[1]))
        status = 0
        for f in argv[2:]:
            errs = []
            try:
                v = json.load(open(f))
            except ValueError as e:
                errs.append(f"not JSON: {e}")
            else:
                check(root, root, v, "", errs)
            for e in errs[:20]:
                print(f"{f}: {e}", file=sys.stderr)
            status |= bool(errs)
        return status
    if len(argv) == 3 and argv[0] == "vocab":
        return vocab(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
