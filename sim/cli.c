/* cli.c: see cli.h. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* strtol and friends skip leading space and take a '+': a flag's number is written plainly. */
static int cli_plain(const char *text)
{
    return isdigit((unsigned char)text[0]) ||
           ((text[0] == '-' || text[0] == '.') && (isdigit((unsigned char)text[1]) || text[1] == '.'));
}

int cli_long(const char *flag, const char *text, long lo, long hi, long *out, tp_err *err)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!cli_plain(text) || *end || errno == ERANGE)
        return tp_err_set(err, "%s: '%s' is not an integer, expected %ld..%ld", flag, text, lo, hi);
    if (v < lo || v > hi)
        return tp_err_set(err, "%s: %ld is out of range, expected %ld..%ld", flag, v, lo, hi);
    *out = v;
    return 0;
}

int cli_u64(const char *flag, const char *text, uint64_t *out, tp_err *err)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)text[0]))
        return tp_err_set(err, "%s: '%s' is not a non-negative integer", flag, text);
    unsigned long long v = strtoull(text, &end, 10);
    if (*end || errno == ERANGE)
        return tp_err_set(err, "%s: '%s' is not a non-negative integer below 2^64", flag, text);
    *out = (uint64_t)v;
    return 0;
}

int cli_double(const char *flag, const char *text, double lo, double hi, double *out, tp_err *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (strpbrk(text, "xXpP") || !cli_plain(text)) end = (char *)text; /* decimal, as written */
    if (!text[0] || *end || errno == ERANGE || !isfinite(v))
        return tp_err_set(err, "%s: '%s' is not a number, expected %g..%g", flag, text, lo, hi);
    if (v < lo || v > hi)
        return tp_err_set(err, "%s: %g is out of range, expected %g..%g", flag, v, lo, hi);
    *out = v;
    return 0;
}

int cli_list(const char *flag, const char *text, long lo, long hi, long *out, size_t cap,
             size_t *n, tp_err *err)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item)
            return tp_err_set(err, "%s: '%s' is not a list like 1,2,4,8", flag, text);
        memcpy(item, p, len);
        item[len] = '\0';
        if (*n == cap) return tp_err_set(err, "%s: more than %zu values", flag, cap);
        if (cli_long(flag, item, lo, hi, &out[*n], err)) return -1;
        for (size_t j = 0; j < *n; j++)
            if (out[j] == out[*n]) return tp_err_set(err, "%s: %ld is listed twice", flag, out[j]);
        (*n)++;
        if (!comma) return 0;
        p = comma + 1;
    }
}

const char *cli_value(int argc, char **argv, int *i, tp_err *err)
{
    if (*i + 1 >= argc) {
        tp_err_set(err, "%s: missing value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_size(const char *what, const char *text, double *bytes, tp_err *err)
{
    const char *p = text;
    char *end;
    if (!p || !isdigit((unsigned char)*p))
        return tp_err_set(err, "%s '%s' is not a size (bytes, or with K/M/G: 32K, 256M)", what,
                          p ? p : "");
    errno = 0;
    double v = strtod(p, &end);
    if (strpbrk(p, "xXpP")) end = (char *)p; /* decimal sizes only, as nccl-tests writes them */
    double unit = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': unit = 1024.0; end++; break;
    case 'M': unit = 1024.0 * 1024; end++; break;
    case 'G': unit = 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (unit > 1 && (end[0] == 'i' || end[0] == 'I') && toupper((unsigned char)end[1]) == 'B')
        end += 2;
    else if (toupper((unsigned char)*end) == 'B')
        end++;
    v *= unit;
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return tp_err_set(err, "%s '%s' is not a size (bytes, or with K/M/G: 32K, 256M)", what,
                          text);
    if (v <= 0 || v != floor(v) || v > 1e15)
        return tp_err_set(err, "%s '%s' is not a positive whole number of bytes", what, text);
    *bytes = v;
    return 0;
}
