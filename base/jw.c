/* jw.c: see jw.h. */
#include "jw.h"

#include <inttypes.h>
#include <math.h>

void jw_init(jw *w, FILE *f, int pretty)
{
    w->f = f;
    w->depth = 0;
    w->count[0] = 0;
    w->after_key = 0;
    w->pretty = pretty;
}

static void jw_indent(jw *w)
{
    if (!w->pretty) return;
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

/* Before any value: a comma between siblings, nothing right after a key. */
static void jw_value_prefix(jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (w->count[w->depth]++) fputc(',', w->f);
        jw_indent(w);
    }
}

static void jw_open(jw *w, char c)
{
    jw_value_prefix(w);
    fputc(c, w->f);
    if (w->depth + 1 < JW_MAX_DEPTH) w->depth++;
    w->count[w->depth] = 0;
}

static void jw_close(jw *w, char c)
{
    int had = w->count[w->depth];
    if (w->depth > 0) w->depth--;
    if (had) jw_indent(w);
    fputc(c, w->f);
}

void jw_obj(jw *w) { jw_open(w, '{'); }
void jw_arr(jw *w) { jw_open(w, '['); }
void jw_end_obj(jw *w) { jw_close(w, '}'); }
void jw_end_arr(jw *w) { jw_close(w, ']'); }

static void jw_escaped(jw *w, const char *s)
{
    fputc('"', w->f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(w->f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(w->f, "\\u%04x", *p);
        else
            fputc(*p, w->f);
    }
    fputc('"', w->f);
}

void jw_key(jw *w, const char *key)
{
    jw_value_prefix(w);
    jw_escaped(w, key);
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = 1;
}

void jw_str(jw *w, const char *s)
{
    jw_value_prefix(w);
    if (s) jw_escaped(w, s);
    else fputs("null", w->f);
}

void jw_num(jw *w, double v)
{
    jw_value_prefix(w);
    if (isfinite(v))
        fprintf(w->f, "%.10g", v == 0 ? 0.0 : v); /* no "-0" */
    else
        fputs("null", w->f);
}

void jw_int(jw *w, int64_t v)
{
    jw_value_prefix(w);
    fprintf(w->f, "%" PRId64, v);
}

void jw_uint(jw *w, uint64_t v)
{
    jw_value_prefix(w);
    fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(jw *w, int v)
{
    jw_value_prefix(w);
    fputs(v ? "true" : "false", w->f);
}

void jw_kstr(jw *w, const char *key, const char *s) { jw_key(w, key), jw_str(w, s); }
void jw_knum(jw *w, const char *key, double v) { jw_key(w, key), jw_num(w, v); }
void jw_kint(jw *w, const char *key, int64_t v) { jw_key(w, key), jw_int(w, v); }
void jw_kuint(jw *w, const char *key, uint64_t v) { jw_key(w, key), jw_uint(w, v); }
void jw_kbool(jw *w, const char *key, int v) { jw_key(w, key), jw_bool(w, v); }
void jw_done(jw *w) { fputc('\n', w->f); }
