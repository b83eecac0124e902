/* csv.c: see csv.h. */
#include "csv.h"

#include <string.h>

static int csv_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Step over one character, keeping the line and column of the next one. */
static void csv_step(csv_reader *r)
{
    if (*r->p == '\n') r->line++, r->col = 1;
    else r->col++;
    r->p++;
}

static void csv_skip_blanks(csv_reader *r)
{
    while (r->p < r->end && csv_blank(*r->p)) csv_step(r);
}

/* At a line end: "\n", "\r\n", or the end of the text. */
static int csv_at_eol(const csv_reader *r)
{
    return r->p >= r->end || *r->p == '\n' ||
           (*r->p == '\r' && r->p + 1 < r->end && r->p[1] == '\n');
}

static void csv_skip_line(csv_reader *r)
{
    while (r->p < r->end && *r->p != '\n') csv_step(r);
    if (r->p < r->end) csv_step(r);
}

void csv_init(csv_reader *r, const char *path, char *text, size_t len)
{
    r->path = path;
    r->p = text;
    r->end = text + len;
    r->line = r->col = 1;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) r->p += 3; /* a byte order mark */
}

static int csv_nul(csv_reader *r, tp_err *err)
{
    return tp_err_at(err, r->path, r->line, r->col, "a NUL byte, expected text");
}

/* A field in quotes, r->p at the opening quote; unquoted into *w onward. */
static int csv_quoted(csv_reader *r, char **w, int line, int col, tp_err *err)
{
    csv_step(r);
    for (;;) {
        if (r->p >= r->end)
            return tp_err_at(err, r->path, line, col,
                             "a quoted field that never ends, expected a closing '\"'");
        char c = *r->p;
        if (c == '\0') return csv_nul(r, err);
        if (c == '"') {
            csv_step(r);
            if (r->p < r->end && *r->p == '"') {
                *(*w)++ = '"';
                csv_step(r);
                continue;
            }
            break;
        }
        *(*w)++ = c;
        csv_step(r);
    }
    csv_skip_blanks(r);
    if (!csv_at_eol(r) && *r->p != ',')
        return tp_err_at(err, r->path, r->line, r->col,
                         "'%c' after a closing quote, expected ',' or the line's end", *r->p);
    return 0;
}

static int csv_plain(csv_reader *r, char *field, char **w, tp_err *err)
{
    while (!csv_at_eol(r) && *r->p != ',') {
        char c = *r->p;
        if (c == '\0') return csv_nul(r, err);
        if (c == '"')
            return tp_err_at(err, r->path, r->line, r->col,
                             "a '\"' inside an unquoted field, expected the whole field in quotes "
                             "with '\"' doubled");
        *(*w)++ = c;
        csv_step(r);
    }
    while (*w > field && csv_blank((*w)[-1])) (*w)--;
    return 0;
}

int csv_next(csv_reader *r, char **fields, int *lines, int *cols, int cap, tp_err *err)
{
    for (;;) { /* blank lines and comments between records */
        csv_skip_blanks(r);
        if (r->p >= r->end) return 0;
        if (*r->p == '#' || csv_at_eol(r)) {
            csv_skip_line(r);
            continue;
        }
        break;
    }
    for (int n = 0;;) {
        csv_skip_blanks(r);
        if (n == cap)
            return tp_err_at(err, r->path, r->line, r->col,
                             "more than %d fields, expected at most %d", cap, cap);
        int line = r->line, col = r->col;
        /* fields are written over the text they came from: never longer, never ahead */
        char *field = r->p, *w = r->p;
        if (r->p < r->end && *r->p == '"') {
            if (csv_quoted(r, &w, line, col, err)) return -1;
        } else if (csv_plain(r, field, &w, err)) {
            return -1;
        }
        char term = r->p < r->end ? *r->p : '\0';
        *w = '\0';
        fields[n] = field, lines[n] = line, cols[n] = col;
        n++;
        if (term == ',') {
            r->p++, r->col++;
            continue;
        }
        if (term == '\r') r->p++, r->col++;
        if (r->p < r->end) { /* the '\n' */
            r->p++;
            r->line++, r->col = 1;
        }
        return n;
    }
}

int csv_unique(const char *path, char *const *fields, const int *lines, const int *cols, int n,
               tp_err *err)
{
    /* n is a header's width, a few dozen at most (the reader's cap): pairwise is enough */
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(fields[i], fields[j])) {
                char sb[TP_SHORT_MAX];
                return tp_err_at(err, path, lines[i], cols[i],
                                 "duplicate column '%s' (also field %d at line %d column %d), "
                                 "expected each column named once", tp_shorten(fields[i], sb),
                                 j + 1, lines[j], cols[j]);
            }
    return 0;
}

int csv_header(csv_reader *r, char **fields, int *lines, int *cols, int cap, tp_err *err)
{
    int n = csv_next(r, fields, lines, cols, cap, err);
    if (n > 0 && csv_unique(r->path, fields, lines, cols, n, err)) return -1;
    return n;
}

void csv_put(FILE *f, const char *s)
{
    size_t n = strlen(s);
    int quote = n && (csv_blank(s[0]) || csv_blank(s[n - 1]) || s[0] == '#');
    quote |= strpbrk(s, ",\"\r\n") != NULL;
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void csv_float(FILE *f, double v, int digits)
{
    char b[64];
    snprintf(b, sizeof b, "%.*g", digits, v);
    fputs(b, f);
    if (!strpbrk(b, ".eEni")) fputs(".0", f); /* not 1e+20, inf or nan */
}
