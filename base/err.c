/* err.c: see err.h. */
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TP_ERR_HEAD 200 /* bytes kept before a cut: the location, most of a long path */

/* Length of the valid UTF-8 sequence at p (1..4) that is not a C1 control, or 0. */
static size_t tp_utf8_len(const unsigned char *p)
{
    size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (p[0] >= 0xf8) n = 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) return 0; /* U+0080..U+009F: C1 controls */
    if (n == 3 && p[0] == 0xe0 && p[1] < 0xa0) return 0;  /* overlong */
    if (n == 3 && p[0] == 0xed && p[1] >= 0xa0) return 0; /* surrogates */
    if (n == 4 && p[0] == 0xf0 && p[1] < 0x90) return 0;
    if (n == 4 && p[0] == 0xf4 && p[1] >= 0x90) return 0;
    return n;
}

/* The text with every unsafe byte as \xNN; malloc'd, or NULL. */
static char *tp_escape(const char *text)
{
    size_t len = strlen(text);
    char *out = malloc(4 * len + 1), *o = out;
    if (!out) return NULL;
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        if (*p >= 0x20 && *p < 0x7f) {
            *o++ = (char)*p++;
            continue;
        }
        size_t n = *p >= 0x80 ? tp_utf8_len(p) : 0;
        if (n) {
            memcpy(o, p, n);
            o += n, p += n;
        } else {
            o += sprintf(o, "\\x%02x", *p++);
        }
    }
    *o = '\0';
    return out;
}

/* Back up from text + at to the start of a UTF-8 character. */
static size_t tp_char_start(const char *text, size_t at)
{
    while (at > 0 && ((unsigned char)text[at] & 0xc0) == 0x80) at--;
    return at;
}

/* Copy a safe message into err->msg, cutting its middle when too long. */
static void tp_err_store(tp_err *err, const char *safe)
{
    size_t len = strlen(safe);
    if (len < sizeof err->msg) {
        memcpy(err->msg, safe, len + 1);
        return;
    }
    char marker[48];
    size_t head = tp_char_start(safe, TP_ERR_HEAD);
    /* the tail fills the rest, so the reason at the end survives whole */
    size_t room = sizeof err->msg - 1 - head - (sizeof marker - 1);
    size_t tail = tp_char_start(safe, len - room);
    snprintf(marker, sizeof marker, "\xe2\x80\xa6(%zu bytes cut)\xe2\x80\xa6", tail - head);
    snprintf(err->msg, sizeof err->msg, "%.*s%s%s", (int)head, safe, marker, safe + tail);
}

char *tp_vformat(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

int tp_err_vset(tp_err *err, const char *fmt, va_list ap)
{
    if (!err) return -1;
    char *text = tp_vformat(fmt, ap);
    char *safe = text ? tp_escape(text) : NULL;
    if (safe) tp_err_store(err, safe);
    else snprintf(err->msg, sizeof err->msg, "out of memory while reporting an error");
    free(safe);
    free(text);
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

int tp_err_vat(tp_err *err, const char *file, int line, int col, const char *fmt, va_list ap)
{
    if (!err) return -1;
    char *body = tp_vformat(fmt, ap);
    if (!body) return tp_err_set(err, "%s:%d: out of memory while reporting an error", file, line);
    if (col > 0) tp_err_set(err, "%s:%d:%d: %s", file, line, col, body);
    else tp_err_set(err, "%s:%d: %s", file, line, body);
    free(body);
    return -1;
}

int tp_err_at(tp_err *err, const char *file, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tp_err_vat(err, file, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

const char *tp_shorten(const char *s, char buf[TP_SHORT_MAX])
{
    size_t len = strlen(s);
    if (len <= 64) return s;
    size_t keep = tp_char_start(s, 48);
    snprintf(buf, TP_SHORT_MAX, "%.*s\xe2\x80\xa6(%zu bytes)", (int)keep, s, len);
    return buf;
}
