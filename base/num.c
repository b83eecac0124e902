/* num.c: see num.h. strtod/strtol do the conversion; the grammar is checked first because
 * they also accept leading spaces, '+', hex, "inf" and "nan". */
#include "num.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
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

num_status num_double(const char *text, double lo, double hi, double *out)
{
    if (!text || !num_plain(text, 1, 1)) return NUM_SYNTAX;
    errno = 0;
    double v = strtod(text, NULL);
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
