/* jscan.c: see jscan.h. */
#include "jscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int jscan_open(jscan *k, const char *path, tp_err *err)
{
    memset(k, 0, sizeof *k);
    k->path = path;
    k->line = 1;
    k->err = err;
    k->gz = gzopen(path, "rb");
    if (!k->gz) return tp_err_set(err, "%s: cannot open, expected a readable trace file", path);
    gzbuffer(k->gz, 1u << 18);
    return 0;
}

void jscan_progress(jscan *k, pline *p)
{
    struct stat st;
    k->progress = p;
    k->size = stat(k->path, &st) == 0 ? (double)st.st_size : 0;
}

void jscan_close(jscan *k)
{
    if (k->gz) gzclose(k->gz);
    free(k->buf);
    k->gz = NULL;
    k->buf = NULL;
}

/* Line and column (1-based) of buffer offset off. */
static void jscan_where(const jscan *k, size_t off, int *line, int *col)
{
    long l = k->line, c = k->col0;
    for (size_t i = 0; i < off && i < k->len; i++) {
        if (k->buf[i] == '\n') {
            l++;
            c = 0;
        } else {
            c++;
        }
    }
    *line = l > 2147483647L ? 2147483647 : (int)l;
    *col = c + 1 > 2147483647L ? 2147483647 : (int)(c + 1);
}

int jscan_fail(jscan *k, size_t off, const char *what)
{
    int line, col;
    jscan_where(k, off, &line, &col);
    return tp_err_at(k->err, k->path, line, col, "%s", what);
}

/* Discard buf[0..pos), then read more. 0 on data read, 1 at the end, -1 on error. */
static int jscan_more(jscan *k)
{
    if (k->pos > 0) {
        for (size_t i = 0; i < k->pos; i++) {
            if (k->buf[i] == '\n') {
                k->line++;
                k->col0 = 0;
            } else {
                k->col0++;
            }
        }
        memmove(k->buf, k->buf + k->pos, k->len - k->pos);
        k->len -= k->pos;
        k->pos = 0;
    }
    if (k->eof) return 1;
    if (k->cap - k->len < JSCAN_CHUNK / 2) {
        if (k->cap >= JSCAN_MAX_VALUE)
            return jscan_fail(k, 0, "an event over 1 GiB, expected trace events of a sane size");
        size_t cap = k->cap ? 2 * k->cap : JSCAN_CHUNK;
        char *g = realloc(k->buf, cap);
        if (!g) return tp_err_set(k->err, "%s: out of memory reading the trace", k->path);
        k->buf = g;
        k->cap = cap;
    }
    size_t want = k->cap - k->len;
    if (want > (size_t)1 << 30) want = (size_t)1 << 30;
    int n = gzread(k->gz, k->buf + k->len, (unsigned)want);
    if (n < 0) {
        int code;
        const char *msg = gzerror(k->gz, &code);
        return tp_err_set(k->err, "%s: cannot read: %s, expected a readable .json or .json.gz",
                          k->path, msg);
    }
    if (n == 0) {
        int code;
        const char *msg = gzerror(k->gz, &code);
        if (code != Z_OK && code != Z_STREAM_END)
            return tp_err_set(k->err, "%s: %s (truncated or corrupt .gz), expected a whole file",
                              k->path, msg);
        k->eof = 1;
        return 1;
    }
    k->len += (size_t)n;
    if (k->progress) pline_show(k->progress, (double)gzoffset(k->gz) / 1e6, k->size / 1e6, "MB");
    return 0;
}

/* Skip whitespace; the next byte, or -1 at the end (-2 on a read error). */
int jscan_peek(jscan *k)
{
    for (;;) {
        while (k->pos < k->len) {
            char c = k->buf[k->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return (unsigned char)c;
            k->pos++;
        }
        int m = jscan_more(k);
        if (m < 0) return -2;
        if (m > 0) return -1;
    }
}

/* jscan_value's scanner state, kept across buffer refills: i bytes of the value seen so far */
typedef struct jscan_state {
    size_t i, str_start;
    int depth, in_str, esc;
    int ks; /* key state at depth 1: 1 expect key, 2 in key, 3 after "cat", 4 in cat value */
} jscan_state;

/* A scalar (number, true, false, null) ends at a delimiter: 1 with v->len set when b[i..end)
 * holds it, else 0 (read more). */
static inline int jscan_scalar(jscan_state *s, const char *b, size_t end, jscan_val *v)
{
    size_t i = s->i;
    while (i < end) {
        char c = b[i];
        if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            v->len = i;
            return 1;
        }
        i++;
    }
    s->i = i;
    return 0;
}

/* The closing quote of a string (c the byte after it is read): the value's end at depth 0,
 * else a depth-1 key ("cat" or not) or the cat value ends. 1 when the value ended. */
static inline int jscan_str_end(jscan_state *s, const char *b, size_t i, jscan_val *v)
{
    s->in_str = 0;
    if (s->depth == 0) {
        v->len = i;
        return 1;
    }
    if (s->ks == 2) {
        size_t n = i - 1 - s->str_start;
        s->ks = (n == 3 && memcmp(b + s->str_start, "cat", 3) == 0) ? 3 : 0;
    } else if (s->ks == 4) {
        v->cat_off = s->str_start;
        v->cat_len = i - 1 - s->str_start;
        v->has_cat = 1;
        s->ks = 0;
    }
    return 0;
}

/* An object, array or string: strings and nesting tracked through b[i..end); 1 with
 * v->len set when the value closed, else 0 (read more). */
static inline int jscan_nested(jscan_state *s, const char *b, size_t end, jscan_val *v)
{
    while (s->i < end) {
        unsigned char c = (unsigned char)b[s->i++];
        if (s->in_str) {
            if (s->esc) {
                s->esc = 0;
            } else if (c == '\\') {
                s->esc = 1;
                if (s->ks == 2 || s->ks == 4) v->escaped = 1;
            } else if (c == '"') {
                if (jscan_str_end(s, b, s->i, v)) return 1;
            }
            continue;
        }
        switch (c) {
        case '"':
            s->in_str = 1;
            if (s->depth == 1 && (s->ks == 1 || s->ks == 3)) {
                s->ks = s->ks == 1 ? 2 : 4;
                s->str_start = s->i;
            }
            break;
        case '{':
        case '[':
            s->depth++;
            if (s->depth == 1) s->ks = c == '{' ? 1 : 0;
            break;
        case '}':
        case ']':
            if (--s->depth == 0) {
                v->len = s->i;
                return 1;
            }
            break;
        case ',':
            if (s->depth == 1) s->ks = 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* The extent of the JSON value at pos (which must not be whitespace), found by tracking
 * strings and nesting only; the value itself is validated later by jansson (if parsed).
 * Records the depth-1 "cat" member so skipped events need no parse. */
int jscan_value(jscan *k, jscan_val *v)
{
    memset(v, 0, sizeof *v);
    jscan_state s = {0};
    int scalar = 0;
    for (;;) {
        if (k->pos + s.i >= k->len) {
            int m = jscan_more(k);
            if (m < 0) return -1;
            if (m > 0) {
                if (scalar && s.i > 0) {
                    v->len = s.i;
                    return 0;
                }
                return jscan_fail(
                    k, k->len,
                    "unexpected end of file inside a value, expected the rest of the JSON");
            }
        }
        const char *b = k->buf + k->pos;
        size_t end = k->len - k->pos;
        if (s.i == 0) {
            char c = b[0];
            scalar = c != '{' && c != '[' && c != '"';
        }
        if (scalar ? jscan_scalar(&s, b, end, v) : jscan_nested(&s, b, end, v)) return 0;
    }
}

int jscan_expect(jscan *k, char c, const char *what)
{
    int p = jscan_peek(k);
    if (p == -2) return -1;
    if (p != (unsigned char)c) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s, expected '%c'",
                 p < 0 ? "unexpected end of file" : "unexpected character", c);
        (void)what;
        return jscan_fail(k, k->pos, msg);
    }
    k->pos++;
    return 0;
}
