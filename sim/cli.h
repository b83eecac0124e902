/* cli.h: strict parsing of command-line values.
 *
 * Contract: each parser takes the flag name (for the message) and its text, and either
 * stores a fully-parsed, in-range value or fills err with one line
 * ("--tp: 'x' is not an integer, expected 1..1024") and returns -1. cli_list parses a
 * comma-separated list of integers ("1,2,4,8") into a caller array.
 */
#ifndef TPSIM_CLI_H
#define TPSIM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

int cli_long(const char *flag, const char *text, long lo, long hi, long *out, tp_err *err);
int cli_u64(const char *flag, const char *text, uint64_t *out, tp_err *err);
int cli_double(const char *flag, const char *text, double lo, double hi, double *out, tp_err *err);
int cli_list(const char *flag, const char *text, long lo, long hi, long *out, size_t cap,
             size_t *n, tp_err *err);
/* A message size: whole bytes, or with a K/M/G suffix in powers of 1024 ("32K", "256MiB"). */
int cli_size(const char *what, const char *text, double *bytes, tp_err *err);
/* The value after argv[*i] (advancing *i), or an error naming the flag. */
const char *cli_value(int argc, char **argv, int *i, tp_err *err);

#endif
