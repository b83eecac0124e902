/* num.c: see num.h. strtod/strtol do the conversion; the grammar is checked first because
 * they also accept leading spaces, '+', hex, "inf" and "nan". */
#include "num.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static int num_digit(char c) { return c >= '0' && c <= '9'; }

/* 1 if text is [-]digits[.digits][e[+-]digits] with at least one mantissa digit
 * (fraction and exponent only when `real`). */
static int num_plain(const char *p, int real, int sign)
{
    if (*p == '-' && sign) p++;
    int digits = 0;
    while (num_digit(*p)) p++, digits++;
    if (real && *p == '.') {
        p++;
        while (num_digit(*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (real && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '-' || *p == '+') p++;
        if (!num_digit(*p)) return 0;
        while (num_digit(*p)) p++;
    }
    return *p == '\0';
}

/* A plain decimal [-]digits[.digits] whose digits, read as an integer M, stay within 2^53
 * and whose fraction has at most 22 digits is M / 10^f exactly rounded: M and 10^f are both
 * exact doubles, so the one division rounds once, as strtod would (Clinger's fast path,
 * "How to read floating point numbers accurately", PLDI 1990). 1 and *out set when text is
 * one; 0 leaves it to strtod (an exponent, more digits). A measured table's millions of
 * "4.346667"s are read here, at a tenth of strtod's cost. */
static int num_fast(const char *p, double *out)
{
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int neg = *p == '-';
    p += neg;
    uint64_t m = 0;
    int frac = -1;
    for (;; p++) {
        if (num_digit(*p)) {
            m = 10 * m + (uint64_t)(*p - '0');
            if (m > (UINT64_C(1) << 53)) return 0;
            if (frac >= 0 && ++frac > 22) return 0;
        } else if (*p == '.' && frac < 0) {
            frac = 0;
        } else {
            break;
        }
    }
    if (*p) return 0; /* an exponent: strtod's */
    double v = (double)m / pow10[frac > 0 ? frac : 0];
    *out = neg ? -v : v;
    return 1;
}

num_status num_double(const char *text, double lo, double hi, double *out)
{
    if (!text || !num_plain(text, 1, 1)) return NUM_SYNTAX;
    errno = 0;
    double v;
    if (!num_fast(text, &v)) v = strtod(text, NULL);
    /* ERANGE: beyond double (or below its smallest normal): not the value written */
    if (errno == ERANGE || !isfinite(v) || v < lo || v > hi) return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

num_status num_long(const char *text, long lo, long hi, long *out)
{
    if (!text || !num_plain(text, 0, 1)) return NUM_SYNTAX;
    errno = 0;
    long v = strtol(text, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi) return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

num_status num_u64(const char *text, uint64_t *out)
{
    if (!text || !num_plain(text, 0, 0)) return NUM_SYNTAX;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE) return NUM_RANGE; /* above 2^64 - 1 */
    *out = (uint64_t)v;
    return NUM_OK;
}
