/* csv.h: CSV as RFC 4180 writes it, read and written.
 *
 * Reading: csv_init takes a file's whole text, mutable and NUL-terminated at text[len] (as
 * rfile_read returns it), and csv_next hands back one record at a time, its fields unquoted
 * in place: no allocation, the fields point into the text. Accepted: fields in double quotes
 * holding commas, doubled quotes ("") and line breaks; LF or CRLF line ends; a UTF-8 byte
 * order mark at the start. Also, for hand-written grids: lines whose first non-blank
 * character is '#' outside any record are comments, blank lines are skipped, and blanks
 * around an unquoted field or around quotes are dropped. Refused with one
 * "file:line:col: ..." line: an unterminated quoted field, text after a closing quote, a
 * quote inside an unquoted field, a NUL byte, more fields than the caller's room; and, read
 * through csv_header, a header naming a column twice.
 *
 * Writing: csv_put writes one field, in quotes (inner quotes doubled) when it holds a comma,
 * a quote, a line break, leading or trailing blanks or a leading '#', else as it is.
 * csv_float writes a float in %.*g that always reads back as one: a whole value keeps a
 * ".0" (0.0, 12.0, not 0 and 12, which pandas would type as integers).
 */
#ifndef TPSIM_CSV_H
#define TPSIM_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

typedef struct csv_reader {
    const char *path; /* for messages */
    char *p, *end;    /* the unread text */
    int line, col;    /* where p is, 1-based */
} csv_reader;

void csv_init(csv_reader *r, const char *path, char *text, size_t len);
/* The next record: its n fields in fields[0..n-1], each field's line and column (of its first
 * character, or of its opening quote) in lines[] and cols[]. Returns n (>= 1), 0 at the end
 * of the text, -1 with err set. */
int csv_next(csv_reader *r, char **fields, int *lines, int *cols, int cap, tp_err *err);
/* A header record: csv_next, then csv_unique on its fields. Same returns as csv_next. */
int csv_header(csv_reader *r, char **fields, int *lines, int *cols, int cap, tp_err *err);
/* Refuses a header naming a column twice: a reader that looks columns up by name would
 * otherwise take the first silently and never read the second. The message is
 * "file:line:col: duplicate column 'x' (...)" at the second one. 0, or -1 with err set. */
int csv_unique(const char *path, char *const *fields, const int *lines, const int *cols, int n,
               tp_err *err);

/* One field, quoted when it must be. */
void csv_put(FILE *f, const char *field);
/* A float of `digits` significant digits (%.*g), with ".0" when that prints a whole number. */
void csv_float(FILE *f, double v, int digits);

#endif
