/* err.h: one-line error reports for user-facing input checks.
 *
 * Contract: every function that validates user input takes a `tp_err *` and, on failure,
 * fills it with exactly one line ("file:line:col: what is wrong, what is expected", no
 * trailing newline) and returns -1. Callers print err.msg and exit with status 2.
 * A tp_err is a plain value: nothing to free. Messages are made safe to print: control
 * characters, terminal escapes (ESC, C1 codes) and bytes that are not UTF-8 are shown as
 * \xNN, so a newline in a value cannot split the line nor an escape code drive the
 * terminal. A message longer than TP_ERR_MAX - 1 bytes keeps its start (the location) and
 * its end (the reason) and says how much of the middle it cut: "…(N bytes cut)…".
 * Long values quoted in a message go through tp_shorten first, which marks the cut too.
 */
#ifndef TPSIM_ERR_H
#define TPSIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define TP_ERR_MAX 1024
#define TP_SHORT_MAX 96 /* a buffer for tp_shorten */

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
int tp_err_vat(tp_err *err, const char *file, int line, int col, const char *fmt, va_list ap);

/* vsnprintf into a new malloc'd string of the right size (the caller frees it), or NULL. */
char *tp_vformat(const char *fmt, va_list ap);

/* `s` itself when it is at most 64 bytes, else its first ~48 bytes (whole UTF-8
 * characters) followed by "…(N bytes)", written into buf (TP_SHORT_MAX bytes). */
const char *tp_shorten(const char *s, char buf[TP_SHORT_MAX]);

#endif
