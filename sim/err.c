/* err.c: see err.h. */
#include "err.h"

#include <stdio.h>
#include <string.h>

int tp_err_vset(tp_err *err, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        /* One line, always: a stray newline from a user string would break the contract. */
        for (char *p = err->msg; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
    }
    return -1;
}

int tp_err_set(tp_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tp_err_vset(err, fmt, ap);
    va_end(ap);
    return -1;
}

int tp_err_at(tp_err *err, const char *file, int line, int col, const char *fmt, ...)
{
    if (!err) return -1;
    char body[TP_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (col > 0)
        return tp_err_set(err, "%s:%d:%d: %s", file, line, col, body);
    return tp_err_set(err, "%s:%d: %s", file, line, body);
}
