#!/usr/bin/python3
"""Writes sim/dist_exp_tab.c, the constants of sim/dist.h's dist_exp: the exp algorithm of
Arm's optimized-routines (math/exp.c and math/exp_data.c, Szabolcs Nagy, 2018, MIT), which
glibc has shipped as its exp since 2.28 (sysdeps/ieee754/dbl-64/e_exp.c, e_exp_data.c) and
musl since 1.1.20 (src/math/exp.c, exp_data.c).

  exp(x) = 2^(k/N) exp(r), N = 128, k = round(x N / ln2), r = x - k ln2 / N;
  2^(k/N) = 2^(k div N) 2^(j/N), j = k mod N, and 2^(j/N) ~= scale_j (1 + tail_j) with
  scale_j = 2^(j/N) rounded to the nearest double and tail_j = (2^(j/N) - scale_j) / scale_j
  rounded likewise: tab[2j] holds tail_j's bits, tab[2j+1] scale_j's bits minus j << 45 (the
  exponent k div N is added back as k << 45).
The table is derived here from that definition (decimal arithmetic at 60 digits, then the
nearest double); it equals glibc 2.36's __exp_data.tab entry for entry (checked once by
reading libm.so.6's table with gdb and libc6-dbg). The scalars are upstream's:
  invln2N = N / ln2 rounded (derived here and checked against upstream's 0x1.71547652b82fep0 N),
  negln2hiN = -0x1.62e42fefa0000p-8 (ln2/N with its low 16 bits cleared, so k * it is exact),
  negln2loN = -(ln2/N - ln2hi/N) rounded (derived here and checked),
  shift = 0x1.8p52 (adding it rounds z to an integer in the low bits),
  C2..C5 = the minimax polynomial of upstream's exp_data.c (fitted there; copied, not derived:
  0x1.ffffffffffdbdp-2, 0x1.555555555543cp-3, 0x1.55555cf172b91p-5, 0x1.1111167a4d017p-7).
Usage: scripts/exp-tables.py > sim/dist_exp_tab.c   (tests/test_dist.c checks the table's
definition and dist_exp against the C library's exp bit for bit)."""
import struct
from decimal import Decimal, getcontext

N = 128
getcontext().prec = 60
LN2 = Decimal(2).ln()


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def nearest(d):
    """The double nearest the Decimal d (float() of its string rounds correctly)."""
    return float(d)


def main():
    invln2n = nearest(N / LN2)
    assert invln2n == float.fromhex("0x1.71547652b82fep0") * N
    ln2hi = -float.fromhex("-0x1.62e42fefa0000p-8")
    assert bits(ln2hi) & 0xFFFF == 0 and abs(Decimal(ln2hi) - LN2 / N) < Decimal(2) ** -44
    negln2lo = nearest(-(LN2 / N - Decimal(ln2hi)))
    assert negln2lo == float.fromhex("-0x1.cf79abc9e3b3ap-47")
    scalars = [("invln2N", invln2n), ("negln2hiN", -ln2hi), ("negln2loN", negln2lo),
               ("shift", float.fromhex("0x1.8p52")),
               ("C2", float.fromhex("0x1.ffffffffffdbdp-2")),
               ("C3", float.fromhex("0x1.555555555543cp-3")),
               ("C4", float.fromhex("0x1.55555cf172b91p-5")),
               ("C5", float.fromhex("0x1.1111167a4d017p-7"))]
    tab = []
    for j in range(N):
        v = (LN2 * j / N).exp()
        scale = nearest(v)
        tail = nearest((v - Decimal(scale)) / Decimal(scale))
        tab += [bits(tail), (bits(scale) - (j << 45)) % 2**64]
    print("/* dist_exp_tab.c: the constants of dist.h's dist_exp, written by scripts/exp-tables.py")
    print(" * (do not edit; see that script for their definition and source). */")
    print('#include "dist.h"')
    print()
    print("const double dist_exp_c[DIST_EXP_CONSTS] = {")
    for name, v in scalars:
        print("    %s, /* %s */" % (v.hex(), name))
    print("};")
    print()
    print("const uint64_t dist_exp_tab[2 * DIST_EXP_N] = {")
    for i in range(0, len(tab), 4):
        print("    " + " ".join("0x%016xu," % t for t in tab[i:i + 4]))
    print("};")


if __name__ == "__main__":
    main()
