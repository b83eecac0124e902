/* err.h: one-line error reports for user-facing input checks.
 *
 * Contract: every function that validates user input takes a `tp_err *` and, on failure,
 * fills it with exactly one line ("file:line:col: what is wrong, what is expected", no
 * trailing newline) and returns -1. Callers print err.msg and exit with status 2.
 * A tp_err is a plain value: no allocation, nothing to free.
 */
#ifndef TPSIM_ERR_H
#define TPSIM_ERR_H

#include <stdarg.h>

#define TP_ERR_MAX 512

typedef struct tp_err {
    char msg[TP_ERR_MAX];
} tp_err;

/* Format a message into err (printf-style); always returns -1 so callers can
 * `return tp_err_set(err, ...)`. err may be NULL (message dropped). */
int tp_err_set(tp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tp_err_vset(tp_err *err, const char *fmt, va_list ap);

/* Same, prefixed with "file:line:col: " (col 0 means "file:line: "). */
int tp_err_at(tp_err *err, const char *file, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
