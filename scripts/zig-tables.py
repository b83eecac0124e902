#!/usr/bin/python3
"""Writes sim/zig_tab.c, the tables of sim/zig.h's ziggurat normal sampler (Marsaglia and
Tsang, "The Ziggurat Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000),
for ZIG_LAYERS = 256 layers of f(x) = exp(-x^2/2), each of area v.

  x[1] = r, x[i+1] = f^-1(v / x[i] + f(x[i])), x[256] = 0; x[0] = v / f(r), the base
  layer's width (its rectangle [0, x[0]] x [0, f(r)] stands for [0, r] x [0, f(r)] plus the
  tail beyond r, whose area is sqrt(pi/2) erfc(r / sqrt 2)); r solves "the top layer ends
  exactly at f = 1", found by bisection (the paper's r = 3.6541528853610088, v = 0.00492867323399).
  k[i] = floor(x[i+1] / x[i] * 2^52), exact: a 52-bit uniform below it lands under the curve.
  w[i] = x[i] / 2^52, f[i] = f(x[i]) (f[256] = 1).
Usage: scripts/zig-tables.py > sim/zig_tab.c   (tests/test_zig.c checks the tables' defining
properties and the sampler's distribution)."""
import math
from fractions import Fraction

N = 256


def f(x):
    return math.exp(-0.5 * x * x)


def finv(y):
    return math.sqrt(-2.0 * math.log(y))


def tail(r):
    return math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))


def top_gap(r):
    """f at the top of the last layer minus 1, for base edge r (0 when r is right)."""
    v = r * f(r) + tail(r)
    x = r
    for _ in range(1, N - 1):
        y = v / x + f(x)
        if y >= 1:
            return 1.0
        x = finv(y)
    return v / x + f(x) - 1.0


def main():
    lo, hi = 3.0, 4.0
    for _ in range(200):  # a wider r makes v smaller and the layers end below f = 1
        mid = (lo + hi) / 2
        if top_gap(mid) > 0:
            lo = mid
        else:
            hi = mid
    r = (lo + hi) / 2
    v = r * f(r) + tail(r)
    x = [v / f(r), r]
    for i in range(1, N - 1):
        x.append(finv(v / x[i] + f(x[i])))
    x.append(0.0)
    # exactly, from the double edges: never above the true share, so an accepted point is
    # always under the curve
    k = [math.floor(Fraction(x[i + 1]) / Fraction(x[i]) * 2**52) for i in range(N)]
    w = [x[i] / 2.0**52 for i in range(N)]
    fv = [f(x[i]) for i in range(N)] + [1.0]
    print("/* zig_tab.c: the ziggurat tables of zig.h, written by scripts/zig-tables.py (do not")
    print(" * edit; see that script for their definition). r = %s, v = %s. */" % (repr(r), repr(v)))
    print('#include "zig.h"\n')
    print("const double zig_r = %s; /* %s */" % (r.hex(), repr(r)))
    print("const double zig_v = %s; /* %s */\n" % (v.hex(), repr(v)))
    print("const uint64_t zig_k[ZIG_LAYERS] = {")
    for i in range(0, N, 4):
        print("    " + " ".join("0x%013xu," % q for q in k[i:i + 4]))
    print("};\n")
    for name, vals in (("zig_w", w), ("zig_f", fv)):
        n = "ZIG_LAYERS + 1" if name == "zig_f" else "ZIG_LAYERS"
        print("const double %s[%s] = {" % (name, n))
        for i in range(0, len(vals), 3):
            print("    " + " ".join("%s," % q.hex() for q in vals[i:i + 3]))
        print("};")
        if name == "zig_w":
            print()


if __name__ == "__main__":
    main()
