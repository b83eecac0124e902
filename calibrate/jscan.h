/* jscan.h: a streaming scanner for one JSON document too large to hold (a multi-GB Chrome
 * trace), read through zlib so that .json and .json.gz are one path.
 *
 * Contract: jscan_open opens PATH; the caller then walks the document's top-level structure
 * itself (jscan_peek / jscan_expect for punctuation) and asks jscan_value for the extent of
 * each value it meets: the value is buf[pos .. pos + len) in a sliding window, found by
 * tracking strings and nesting only, so the caller hands the bytes to a real JSON parser
 * (jansson) only for the values it needs, then advances pos past them. The window keeps the
 * largest single value (refused over JSCAN_MAX_VALUE). Errors are one line in err,
 * "file:line:col: what, expected what" (jscan_fail for the caller's own). jscan_close frees
 * the window and closes the file; it is safe after a failed jscan_open.
 */
#ifndef TPSIM_JSCAN_H
#define TPSIM_JSCAN_H

#include <stddef.h>
#include <zlib.h>

#include "err.h"
#include "pline.h"

#define JSCAN_CHUNK (1u << 20)
#define JSCAN_MAX_VALUE ((size_t)1 << 30) /* one value larger than this is refused */

typedef struct jscan {
    gzFile gz;
    const char *path;
    char *buf;
    size_t len, cap, pos; /* buf[pos..len) is unread */
    int eof;
    long line;            /* line number of buf[0] */
    long col0;            /* column of buf[0] (bytes since the last newline, 0-based) */
    tp_err *err;
    pline *progress;      /* jscan_progress's, NULL for none */
    double size;          /* the file's bytes on disk, for the progress line */
} jscan;

/* A value's extent, and its depth-1 "cat" member when it is an object (Chrome trace
 * events are skipped by category without a parse). */
typedef struct jscan_val {
    size_t len;
    size_t cat_off, cat_len; /* depth-1 "cat" string value, relative to the value start */
    int has_cat, escaped;    /* escaped: a depth-1 key or the cat value holds a backslash */
} jscan_val;

int jscan_open(jscan *k, const char *path, tp_err *err);
/* After jscan_open: each read redraws p (pline.h) with the megabytes of the file read so far
 * (compressed ones for a .gz) of its size on disk. */
void jscan_progress(jscan *k, pline *p);
void jscan_close(jscan *k);
/* Skip whitespace; the next byte, or -1 at the end (-2 on a read error, err set). */
int jscan_peek(jscan *k);
/* The next byte (after whitespace) must be c: consumed, 0; else -1 and one line. */
int jscan_expect(jscan *k, char c, const char *what);
/* The extent of the value at pos (which must not be whitespace): 0 and *v, or -1. */
int jscan_value(jscan *k, jscan_val *v);
/* One "file:line:col: what" line for window offset off; returns -1. */
int jscan_fail(jscan *k, size_t off, const char *what);

#endif
