/* jw.h: a minimal streaming JSON writer.
 *
 * Contract: a jw wraps a caller's FILE* and tracks nesting so commas and colons are placed
 * for the caller; keys and strings are escaped. Numbers print with %.10g (non-finite
 * values print as null), and so does a NULL string (an absent file, borrowing, ...). Output
 * for the same calls is byte-identical, which the tests rely on. No allocation.
 */
#ifndef TPSIM_JW_H
#define TPSIM_JW_H

#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

typedef struct jw {
    FILE *f;
    int depth;
    int count[JW_MAX_DEPTH]; /* items written at each level */
    int after_key;
    int pretty;
} jw;

void jw_init(jw *w, FILE *f, int pretty);
void jw_obj(jw *w);      /* { */
void jw_arr(jw *w);      /* [ */
void jw_end_obj(jw *w);  /* } */
void jw_end_arr(jw *w);  /* ] */
void jw_key(jw *w, const char *key);
void jw_str(jw *w, const char *s);
void jw_num(jw *w, double v);
void jw_int(jw *w, int64_t v);
void jw_uint(jw *w, uint64_t v); /* all of 0..2^64-1 (seeds) */
void jw_bool(jw *w, int v);
/* key + value shorthands */
void jw_kstr(jw *w, const char *key, const char *s);
void jw_knum(jw *w, const char *key, double v);
void jw_kint(jw *w, const char *key, int64_t v);
void jw_kuint(jw *w, const char *key, uint64_t v);
void jw_kbool(jw *w, const char *key, int v);
/* Ends the document with a newline. */
void jw_done(jw *w);

#endif
