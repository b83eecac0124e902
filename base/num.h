/* num.h: the one parser for numbers a user writes (flags, YAML scalars, CSV fields, logs).
 *
 * Contract: a number is plain decimal, written whole: an optional '-', digits with at most
 * one '.', at least one digit, then an optional exponent (e or E, an optional sign, digits;
 * integers take none). Refused: a leading '+', spaces anywhere, hex ("0x10", "0x1p3"),
 * "inf"/"nan", trailing text, and values the type cannot hold. The caller's bounds are
 * checked too. Each function returns NUM_OK and stores the value, NUM_SYNTAX (not such a
 * number; *out untouched) or NUM_RANGE (a number, but outside [lo, hi] or beyond the type;
 * *out untouched), so each caller words its own one-line message. Pure functions.
 */
#ifndef TPSIM_NUM_H
#define TPSIM_NUM_H

#include <stdint.h>

typedef enum num_status { NUM_OK = 0, NUM_SYNTAX, NUM_RANGE } num_status;

num_status num_double(const char *text, double lo, double hi, double *out);
num_status num_long(const char *text, long lo, long hi, long *out);
/* Non-negative only ("-0" is refused: a seed or a count has no sign). */
num_status num_u64(const char *text, uint64_t *out);

#endif
