/* arfit.c: parse all-reduce sweeps and fit Equation 1 to them; see arfit.h. */
#include "arfit.h"

#include "num.h"
#include "rfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LINE_MAX_CHARS 4096
#define MAX_FIELDS 32

static const char CSV_HEADER[] = "bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps";

/* ---------------------------------------------------------------------------------------------
 * Small text helpers
 * ------------------------------------------------------------------------------------------- */

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

static void trim_right(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Copy into a fixed buffer, keeping only characters that are safe in a one-line report and a
 * plain YAML scalar: anything else (':', '#', quotes, control bytes) becomes a space. */
static void copy_plain(char *dst, size_t len, const char *src)
{
    size_t j = 0;
    for (const char *p = skip_space(src); *p && j + 1 < len; p++) {
        unsigned char c = (unsigned char)*p;
        int keep = isalnum(c) || c == ' ' || c == '.' || c == '_' || c == '-' || c == '(' ||
                   c == ')' || c == '/' || c == '+';
        dst[j++] = keep ? (char)c : ' ';
    }
    dst[j] = '\0';
    trim_right(dst);
}

/* A whole token as a finite double (plain decimal: see num.h). */
static int parse_double(const char *tok, double *out)
{
    return num_double(tok, -HUGE_VAL, HUGE_VAL, out) == NUM_OK ? 0 : -1;
}

/* A whole token of decimal digits (a byte count or element count). */
static int parse_count(const char *tok, double *out)
{
    uint64_t v = 0;
    *out = 0;
    if (strlen(tok) > 18 || num_u64(tok, &v) != NUM_OK) return -1;
    *out = (double)v;
    return 0;
}

/* Split `line` in place at runs of whitespace (sep == 0) or at each `sep`, trimming fields.
 * Records each field's 1-based column for messages. Returns the field count, or -1 when there
 * are more than MAX_FIELDS. */
static int split_fields(char *line, char sep, char **field, int *col)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (sep == 0) {
            while (*p == ' ' || *p == '\t') p++;
            if (!*p) break;
        } else {
            while (*p == ' ' || *p == '\t') p++;
        }
        if (n == MAX_FIELDS) return -1;
        field[n] = p;
        col[n] = (int)(p - line) + 1;
        n++;
        if (sep == 0) {
            while (*p && *p != ' ' && *p != '\t') p++;
        } else {
            while (*p && *p != sep) p++;
        }
        int at_end = (*p == '\0');
        if (!at_end) *p++ = '\0';
        trim_right(field[n - 1]);
        if (at_end) break;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Parsing
 * ------------------------------------------------------------------------------------------- */

typedef enum { FMT_UNKNOWN = -1 } fmt_unknown;

typedef struct arfit_rank {
    char host[96];
    long device;
    int line;
} arfit_rank;

typedef struct parse_state {
    arfit_sweep *s;
    size_t cap;
    int fmt; /* FMT_UNKNOWN or an arfit_format */
    int line;
    /* nccl-tests */
    int ranks;        /* ranks in the listing so far */
    int rank_line;    /* first line of the listing */
    int time_col;     /* out-of-place time column, -1 before the header */
    int ip_time_col;  /* in-place time column, -1 if none */
    int redop_col;    /* -1 if none */
    int wrong_col[2]; /* the #wrong columns, -1 if none */
    int n_cols;
    long n_threads, n_gpus; /* "# nThread T nGpus G": ranks per process, 0 if not stated */
    int threads_line;
    arfit_rank *rank_ids;   /* host and device of each listed rank, for duplicates */
    size_t rank_cap;
    /* CSV */
    int meta_tp, meta_tp_line;
} parse_state;

static int add_point(parse_state *st, double bytes, double time_us, double ip_time_us,
                     tp_err *err)
{
    arfit_sweep *s = st->s;
    if (s->n > 0 && bytes <= s->points[s->n - 1].bytes)
        return tp_err_at(err, s->file, st->line, 0,
                         "size %.0f is not larger than the previous row's (line %d): one "
                         "increasing sweep per file",
                         bytes, s->points[s->n - 1].line);
    if (s->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 32;
        arfit_point *p = realloc(s->points, cap * sizeof *p);
        if (!p) return tp_err_at(err, s->file, st->line, 0, "out of memory");
        s->points = p;
        st->cap = cap;
    }
    s->points[s->n++] = (arfit_point){.bytes = bytes, .time_us = time_us, .line = st->line,
                                      .oop_us = time_us, .ip_us = ip_time_us};
    return 0;
}

/* Both formats: a time must be a positive number. */
static int check_time(parse_state *st, const char *tok, int col, const char *what, double *t,
                      tp_err *err)
{
    const char *word = tok + (*tok == '-' || *tok == '+');
    if (!strcasecmp(word, "nan") || !strcasecmp(word, "inf") || !strcasecmp(word, "infinity"))
        return tp_err_at(err, st->s->file, st->line, col,
                         "%s '%s' is not finite: a failed or overflowed measurement, expected "
                         "a time in us", what, tok);
    if (parse_double(tok, t) != 0)
        return tp_err_at(err, st->s->file, st->line, col, "%s '%s' is not a number", what, tok);
    if (*t <= 0)
        return tp_err_at(err, st->s->file, st->line, col, "%s %s is not positive", what, tok);
    return 0;
}

static int check_size(parse_state *st, const char *tok, int col, double *bytes, tp_err *err)
{
    if (parse_count(tok, bytes) != 0 || *bytes <= 0)
        return tp_err_at(err, st->s->file, st->line, col,
                         "size '%s' is not a positive whole number of bytes", tok);
    return 0;
}

/* "#  Rank  3 Group  0 Pid 1595114 on host device  3 [0000:3b:00] NVIDIA H100 80GB HBM3" */
static int parse_rank_line(parse_state *st, const char *body, tp_err *err)
{
    const char *p = skip_space(body + strlen("Rank"));
    char num[24] = "";
    size_t len = strspn(p, "0123456789");
    long rank = -1;
    if (len < sizeof num) {
        memcpy(num, p, len);
        num[len] = '\0';
    }
    if (num_long(num, 0, 1 << 20, &rank) != NUM_OK)
        return tp_err_at(err, st->s->file, st->line, 0, "rank line without a rank number");
    if (st->s->n > 0 || (rank == 0 && st->ranks > 0))
        return tp_err_at(err, st->s->file, st->line, 0,
                         "a second rank listing (the first starts at line %d): mixed k, one "
                         "run per file",
                         st->rank_line);
    if (rank != st->ranks)
        return tp_err_at(err, st->s->file, st->line, 0, "rank %ld out of order, expected %d",
                         rank, st->ranks);
    if (st->ranks == 0) st->rank_line = st->line;
    /* "... Pid P on HOST device D [bus] NAME": two ranks on one device of one host, or a
     * listing longer than the header's nThread x nGpus per process, is not one run */
    arfit_rank id = {.device = -1, .line = st->line};
    const char *on = strstr(p, " on "), *dev = strstr(p, " device ");
    if (on && dev && dev > on) {
        size_t host_len = (size_t)(dev - (on + 4));
        if (host_len >= sizeof id.host) host_len = sizeof id.host - 1;
        snprintf(id.host, sizeof id.host, "%.*s", (int)host_len, on + 4);
        const char *d = skip_space(dev + strlen(" device "));
        size_t dlen = strspn(d, "0123456789");
        char dnum[24] = "";
        if (dlen < sizeof dnum) memcpy(dnum, d, dlen), dnum[dlen] = '\0';
        if (num_long(dnum, 0, 1 << 20, &id.device) != NUM_OK) id.device = -1;
    }
    for (int i = 0; i < st->ranks && id.device >= 0; i++)
        if (st->rank_ids[i].device == id.device && !strcmp(st->rank_ids[i].host, id.host))
            return tp_err_at(err, st->s->file, st->line, 0,
                             "rank %ld is on host %s device %ld, as rank %d (line %d): rank lines "
                             "inconsistent with one run, expected one rank per device",
                             rank, id.host, id.device, i, st->rank_ids[i].line);
    if ((size_t)st->ranks == st->rank_cap) {
        size_t cap = st->rank_cap ? 2 * st->rank_cap : 16;
        arfit_rank *grown = cap <= 65536 ? realloc(st->rank_ids, cap * sizeof *grown) : NULL;
        if (!grown) return tp_err_at(err, st->s->file, st->line, 0, "too many rank lines");
        st->rank_ids = grown;
        st->rank_cap = cap;
    }
    st->rank_ids[st->ranks++] = id;
    const char *bracket = strrchr(p, ']');
    if (bracket && !st->s->gpu[0]) copy_plain(st->s->gpu, sizeof st->s->gpu, bracket + 1);
    return 0;
}

/* "# Collective test starting: all_reduce_perf": only all-reduce sweeps calibrate it. */
static int parse_collective_line(parse_state *st, const char *body, tp_err *err)
{
    const char *name = skip_space(body + strlen("Collective test starting:"));
    if (!starts_with(name, "all_reduce_perf"))
        return tp_err_at(err, st->s->file, st->line, 0,
                         "collective test '%s' is not all_reduce_perf: only all-reduce sweeps "
                         "calibrate the all-reduce, expected nccl-tests all_reduce_perf output",
                         name);
    return 0;
}

/* "# nThread 1 nGpus 8 minBytes ...": the ranks each process lists. */
static int parse_threads_line(parse_state *st, const char *body, tp_err *err)
{
    char buf[128], *field[MAX_FIELDS];
    int col[MAX_FIELDS];
    snprintf(buf, sizeof buf, "%s", body);
    int n = split_fields(buf, 0, field, col);
    if (n < 4 || strcmp(field[2], "nGpus") ||
        num_long(field[1], 1, 1 << 20, &st->n_threads) != NUM_OK ||
        num_long(field[3], 1, 1 << 20, &st->n_gpus) != NUM_OK)
        return tp_err_at(err, st->s->file, st->line, 0,
                         "malformed 'nThread T nGpus G' line, expected two positive counts");
    st->threads_line = st->line;
    return 0;
}

/* A footer or error line of a failed run. */
static int parse_failure_line(parse_state *st, const char *body, tp_err *err)
{
    if (starts_with(body, "Out of bounds values")) {
        const char *colon = strchr(body, ':');
        char buf[128], *field[MAX_FIELDS];
        int col[MAX_FIELDS], n = 0;
        long bad = -1;
        if (colon) {
            snprintf(buf, sizeof buf, "%s", colon + 1);
            n = split_fields(buf, 0, field, col);
        }
        if (n != 2 || num_long(field[0], 0, 0, &bad) != NUM_OK || strcmp(field[1], "OK"))
            return tp_err_at(err, st->s->file, st->line, 0,
                             "the run reports out-of-bounds values ('%s'): its times are not "
                             "of a correct all-reduce, expected '0 OK'", body);
    } else if (strstr(body, "FAILED") || strstr(body, "failure")) {
        return tp_err_at(err, st->s->file, st->line, 0,
                         "the run reports a failure ('%.80s'), expected a clean run", body);
    }
    return 0;
}

/* "#       size         count      type   redop    root     time   algbw ..." : the first
 * "time" is the out-of-place one (nccl-tests prints out-of-place, then in-place). */
static int parse_nccl_header(parse_state *st, char *body, tp_err *err)
{
    char *field[MAX_FIELDS];
    int col[MAX_FIELDS];
    int n = split_fields(body, 0, field, col);
    if (st->time_col >= 0)
        return tp_err_at(err, st->s->file, st->line, 0,
                         "a second column header (the first is at line %d): one run per file",
                         st->s->header_line);
    int n_wrong = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(field[i], "time") == 0) {
            if (st->time_col < 0) st->time_col = i;
            else if (st->ip_time_col < 0) st->ip_time_col = i;
        } else if (strcmp(field[i], "redop") == 0) {
            st->redop_col = i;
        } else if (strcmp(field[i], "#wrong") == 0 && n_wrong < 2) {
            st->wrong_col[n_wrong++] = i;
        }
    }
    if (st->time_col < 0)
        return tp_err_at(err, st->s->file, st->line, 0, "column header without a 'time' column");
    st->n_cols = n;
    st->s->header_line = st->line;
    return 0;
}

static int is_nccl_header(const char *body)
{
    body = skip_space(body);
    return starts_with(body, "size") && strstr(body, "time") && strstr(body, "busbw");
}

static int is_nccl_marker(const char *body)
{
    body = skip_space(body);
    return starts_with(body, "nccl-tests") || starts_with(body, "Collective test starting") ||
           starts_with(body, "Using devices") || starts_with(body, "Rank ") ||
           is_nccl_header(body);
}

/* "# key: value" metadata of our CSV: tp and the GPU name matter here. */
static int parse_csv_meta(parse_state *st, const char *body, tp_err *err)
{
    body = skip_space(body);
    const char *colon = strchr(body, ':');
    if (!colon) return 0;
    size_t klen = (size_t)(colon - body);
    const char *value = skip_space(colon + 1);
    if (klen == 2 && strncmp(body, "tp", 2) == 0) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", value);
        trim_right(buf);
        double v;
        if (parse_count(buf, &v) != 0 || v < 1 || v > 4096)
            return tp_err_at(err, st->s->file, st->line, 0,
                             "tp '%s' is not a positive whole number", buf);
        if (st->meta_tp && st->meta_tp != (int)v)
            return tp_err_at(err, st->s->file, st->line, 0,
                             "tp %d here but %d at line %d: mixed k, one sweep per file",
                             (int)v, st->meta_tp, st->meta_tp_line);
        st->meta_tp = (int)v;
        st->meta_tp_line = st->line;
    } else if (klen == 3 && strncmp(body, "gpu", 3) == 0) {
        copy_plain(st->s->gpu, sizeof st->s->gpu, value);
    }
    return 0;
}

static int parse_comment(parse_state *st, char *body, tp_err *err)
{
    const char *b = skip_space(body);
    if (st->fmt == FMT_UNKNOWN && is_nccl_marker(b)) st->fmt = ARFIT_FORMAT_NCCL_TESTS;
    if (st->fmt == ARFIT_FORMAT_NCCL_TESTS) {
        if (starts_with(b, "Rank ")) return parse_rank_line(st, b, err);
        if (is_nccl_header(b)) return parse_nccl_header(st, body, err);
        if (starts_with(b, "Collective test starting:")) return parse_collective_line(st, b, err);
        if (starts_with(b, "nThread ")) return parse_threads_line(st, b, err);
        return parse_failure_line(st, b, err);
    }
    return parse_csv_meta(st, b, err);
}

static int parse_nccl_row(parse_state *st, char *line, tp_err *err)
{
    /* With NCCL_DEBUG set, NCCL's own log lines land in the same stdout. */
    if (strstr(line, " NCCL INFO ") || strstr(line, " NCCL WARN ")) return 0;
    if (st->time_col < 0)
        return tp_err_at(err, st->s->file, st->line, 0,
                         "data row before the column header (size count type ... time ...)");
    char *field[MAX_FIELDS];
    int col[MAX_FIELDS];
    int n = split_fields(line, 0, field, col);
    if (n != st->n_cols)
        return tp_err_at(err, st->s->file, st->line, 0,
                         "malformed row: %d fields, the column header (line %d) has %d",
                         n < 0 ? MAX_FIELDS : n, st->s->header_line, st->n_cols);
    double bytes, t, ip = -1, wrong;
    if (check_size(st, field[0], col[0], &bytes, err) != 0) return -1;
    if (st->redop_col >= 0 && !strcmp(field[st->redop_col], "none"))
        return tp_err_at(err, st->s->file, st->line, col[st->redop_col],
                         "redop 'none': not an all-reduce row, expected a reduction (sum, ...)");
    for (int w = 0; w < 2; w++) {
        int c = st->wrong_col[w];
        if (c < 0 || !strcmp(field[c], "N/A")) continue; /* N/A: validation was off */
        if (parse_double(field[c], &wrong) != 0 || wrong != 0)
            return tp_err_at(err, st->s->file, st->line, col[c],
                             "#wrong '%s' in the %s columns: the all-reduce gave wrong results, "
                             "expected 0", field[c], w ? "in-place" : "out-of-place");
    }
    if (check_time(st, field[st->time_col], col[st->time_col], "out-of-place time", &t, err) != 0)
        return -1;
    if (st->ip_time_col >= 0 &&
        check_time(st, field[st->ip_time_col], col[st->ip_time_col], "in-place time", &ip, err) != 0)
        return -1;
    return add_point(st, bytes, t, ip, err);
}

static int parse_csv_row(parse_state *st, char *line, tp_err *err)
{
    if (strcmp(line, CSV_HEADER) == 0)
        return tp_err_at(err, st->s->file, st->line, 0,
                         "a second header row (the first is at line %d): one sweep per file",
                         st->s->header_line);
    char *field[MAX_FIELDS];
    int col[MAX_FIELDS];
    int n = split_fields(line, ',', field, col);
    if (n != 6)
        return tp_err_at(err, st->s->file, st->line, 0,
                         "malformed row: %d fields, expected 6 (%s)", n < 0 ? MAX_FIELDS : n,
                         CSV_HEADER);
    double bytes, count, t, other;
    if (check_size(st, field[0], col[0], &bytes, err) != 0) return -1;
    if (parse_count(field[1], &count) != 0)
        return tp_err_at(err, st->s->file, st->line, col[1],
                         "count '%s' is not a whole number", field[1]);
    if (check_time(st, field[2], col[2], "time_us_mean", &t, err) != 0) return -1;
    if (check_time(st, field[3], col[3], "time_us_min", &other, err) != 0) return -1;
    for (int i = 4; i < 6; i++)
        if (parse_double(field[i], &other) != 0 || other < 0)
            return tp_err_at(err, st->s->file, st->line, col[i],
                             "bandwidth '%s' is not a non-negative number", field[i]);
    return add_point(st, bytes, t, -1, err);
}

static int parse_line(parse_state *st, char *line, tp_err *err)
{
    trim_right(line);
    char *body = (char *)skip_space(line);
    if (!*body) return 0;
    if (*body == '#') return parse_comment(st, body + 1, err);
    if (st->fmt == FMT_UNKNOWN) {
        if (strcmp(body, CSV_HEADER) != 0)
            return tp_err_at(err, st->s->file, st->line, 0,
                             "unknown format: expected nccl-tests all_reduce_perf output or a "
                             "tpsim-nccl-sweep CSV (header row '%s')",
                             CSV_HEADER);
        st->fmt = ARFIT_FORMAT_CSV;
        st->s->header_line = st->line;
        return 0;
    }
    if (st->fmt == ARFIT_FORMAT_NCCL_TESTS) return parse_nccl_row(st, body, err);
    return parse_csv_row(st, body, err);
}

/* After the last line: settle k from the file and the caller's tp. */
static int resolve_k(parse_state *st, int tp, tp_err *err)
{
    arfit_sweep *s = st->s;
    int file_k = st->fmt == ARFIT_FORMAT_NCCL_TESTS ? st->ranks : st->meta_tp;
    int k_line = st->fmt == ARFIT_FORMAT_NCCL_TESTS ? st->rank_line : st->meta_tp_line;
    const char *how = st->fmt == ARFIT_FORMAT_NCCL_TESTS ? "rank lines" : "'# tp:'";
    if (file_k && tp && file_k != tp)
        return tp_err_at(err, s->file, k_line, 0,
                         "the file states k=%d (%s) but --tp %d was given: mixed k", file_k, how,
                         tp);
    if (!file_k && !tp)
        return tp_err_at(err, s->file, s->header_line, 0,
                         "number of ranks unknown: the file has no %s; pass --tp K", how);
    s->k = file_k ? file_k : tp;
    s->k_line = file_k ? k_line : 0;
    if (s->k < 2)
        return tp_err_at(err, s->file, file_k ? k_line : s->header_line, 0,
                         "k=%d: an all-reduce needs at least 2 ranks", s->k);
    return 0;
}

static int finish_parse(parse_state *st, int tp, tp_err *err)
{
    arfit_sweep *s = st->s;
    if (st->fmt == FMT_UNKNOWN)
        return tp_err_at(err, s->file, st->line, 0,
                         "unknown format: no nccl-tests output and no CSV header row");
    if (st->fmt == ARFIT_FORMAT_NCCL_TESTS && st->time_col < 0)
        return tp_err_at(err, s->file, st->line, 0,
                         "nccl-tests output without the column header (size count ... time)");
    if (s->n == 0)
        return tp_err_at(err, s->file, s->header_line, 0, "no data rows after the header");
    long per_process = st->n_threads * st->n_gpus;
    if (st->fmt == ARFIT_FORMAT_NCCL_TESTS && per_process && st->ranks % per_process != 0)
        return tp_err_at(err, s->file, st->rank_line ? st->rank_line : st->threads_line, 0,
                         "%d rank lines, but line %d says nThread %ld x nGpus %ld per process: "
                         "rank lines inconsistent with the listing, expected a multiple of %ld",
                         st->ranks, st->threads_line, st->n_threads, st->n_gpus, per_process);
    s->format = (arfit_format)st->fmt;
    return resolve_k(st, tp, err);
}

int arfit_parse(const char *text, const char *file, int tp, arfit_sweep *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    copy_plain(out->file, sizeof out->file, file ? file : "sweep");
    if (tp < 0) return tp_err_set(err, "%s: --tp %d is not positive", out->file, tp);
    parse_state st = {.s = out, .fmt = FMT_UNKNOWN, .time_col = -1, .ip_time_col = -1,
                      .redop_col = -1, .wrong_col = {-1, -1}};
    char line[LINE_MAX_CHARS];
    const char *p = text;
    int rc = 0;
    while (rc == 0 && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        st.line++;
        if (len >= sizeof line) {
            rc = tp_err_at(err, out->file, st.line, 0, "line longer than %d characters",
                           LINE_MAX_CHARS - 1);
            break;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        if (memchr(line, '\0', len))
            rc = tp_err_at(err, out->file, st.line, 0, "binary data (a NUL byte)");
        else
            rc = parse_line(&st, line, err);
        p = nl ? nl + 1 : p + len;
    }
    if (rc == 0) rc = finish_parse(&st, tp, err);
    free(st.rank_ids);
    if (rc != 0) arfit_sweep_free(out);
    return rc;
}

int arfit_parse_file(const char *path, int tp, arfit_sweep *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t n;
    if (rfile_read(path, (size_t)64 << 20, "an all-reduce sweep", &buf, &n, err)) return -1;
    /* a UTF-8 byte order mark, as a spreadsheet saves a CSV, is not part of the first line */
    size_t bom = n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    int rc = memchr(buf, '\0', n) ? tp_err_set(err, "%s: binary data, not a sweep", path)
                                  : arfit_parse(buf + bom, path, tp, out, err);
    free(buf);
    return rc;
}

void arfit_sweep_free(arfit_sweep *s)
{
    if (!s) return;
    free(s->points);
    s->points = NULL;
    s->n = 0;
}

/* ---------------------------------------------------------------------------------------------
 * Model and fits
 * ------------------------------------------------------------------------------------------- */

/* Bus factor of a ring all-reduce: each rank sends and receives 2(k-1)/k of the message. */
static double bus_factor(int k)
{
    return 2.0 * (k - 1) / k;
}

double arfit_line_time_us(arfit_line line, int k, double bytes)
{
    /* beta GB/s = beta * 1e3 bytes per us */
    return line.lambda_us + bus_factor(k) * bytes / (line.beta_gbps * 1e3);
}

double arfit_piecewise_time_us(const arfit_piecewise_fit *fit, double bytes)
{
    int i = 0;
    while (i + 1 < fit->n_pieces && bytes >= fit->pieces[i + 1].from_bytes) i++;
    return arfit_line_time_us(fit->pieces[i].line, fit->k, bytes);
}

arfit_opts arfit_default_opts(void)
{
    return (arfit_opts){ARFIT_DEFAULT_MIN_BYTES, ARFIT_DEFAULT_MAX_BYTES, ARFIT_WEIGHT_ABS,
                        ARFIT_COLUMN_OOP};
}

double arfit_r2(const double *measured, const double *model, size_t n)
{
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (size_t i = 0; i < n; i++) mean += measured[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        ss_tot += (measured[i] - mean) * (measured[i] - mean);
        ss_res += (measured[i] - model[i]) * (measured[i] - model[i]);
    }
    if (ss_tot == 0) return ss_res == 0 ? 1.0 : 0.0;
    return 1.0 - ss_res / ss_tot;
}

static double weight_of(arfit_weight w, double t)
{
    /* rel: the residual divided by the time, squared, so a 40 us point counts as much as a
     * 1 ms one and the small messages a decode step sends are not drowned out. */
    return w == ARFIT_WEIGHT_REL ? 1.0 / (t * t) : 1.0;
}

/* Weighted least squares of t = a + s * x, x = bus_factor * bytes, on p[0..n). Returns -1 when
 * the slope is not positive (no physical bandwidth), the intercept is negative (no physical
 * latency) or the sizes do not vary. */
static int fit_segment(const arfit_point *p, size_t n, int k, arfit_weight w, arfit_line *out)
{
    double c = bus_factor(k), sw = 0, mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = weight_of(w, p[i].time_us);
        sw += wi;
        mx += wi * c * p[i].bytes;
        my += wi * p[i].time_us;
    }
    mx /= sw;
    my /= sw;
    double sxx = 0, sxy = 0; /* centred sums: the sizes span 4 decades */
    for (size_t i = 0; i < n; i++) {
        double wi = weight_of(w, p[i].time_us), dx = c * p[i].bytes - mx;
        sxx += wi * dx * dx;
        sxy += wi * dx * (p[i].time_us - my);
    }
    if (sxx <= 0) return -1;
    double slope = sxy / sxx; /* us per bus byte */
    if (!(slope > 0)) return -1;
    if (my - slope * mx < 0) return -1; /* a negative latency is no physical piece either */
    out->lambda_us = my - slope * mx;
    out->beta_gbps = 1.0 / (slope * 1e3);
    return 0;
}

/* Sum of squared relative residuals: the scale on which timing noise is roughly uniform
 * (a few percent at every size), so it is what model selection compares, whatever the
 * weighting of the fit itself. */
static double rel_rss(const arfit_point *p, size_t n, int k, arfit_line line)
{
    double rss = 0;
    for (size_t i = 0; i < n; i++) {
        double r = (p[i].time_us - arfit_line_time_us(line, k, p[i].bytes)) / p[i].time_us;
        rss += r * r;
    }
    return rss;
}

/* The points of the sweep inside [min, max]: a contiguous run, since sizes increase. */
static size_t range_points(const arfit_sweep *s, const arfit_opts *o, size_t *first)
{
    size_t i = 0, n = 0;
    while (i < s->n && s->points[i].bytes < o->min_bytes) i++;
    *first = i;
    while (i + n < s->n && s->points[i + n].bytes <= o->max_bytes) n++;
    return n;
}

static int check_range(const arfit_sweep *s, const arfit_opts *o, size_t n, tp_err *err)
{
    char lo[32], hi[32];
    arfit_format_size(o->min_bytes, lo, sizeof lo);
    arfit_format_size(o->max_bytes, hi, sizeof hi);
    if (o->min_bytes > o->max_bytes)
        return tp_err_set(err, "%s: fit range %s..%s is empty (min above max)", s->file, lo, hi);
    if (n < ARFIT_MIN_POINTS)
        return tp_err_at(err, s->file, s->header_line, 0,
                         "too few points: %zu in the fit range %s..%s, need at least %d", n, lo,
                         hi, ARFIT_MIN_POINTS);
    return 0;
}

/* BIC under multiplicative noise: n ln(RSS_rel / n) + params ln n. RSS_rel is floored at the
 * timing resolution (ARFIT_TIME_RESOLUTION per point): structure finer than repeated
 * measurements can resolve is not evidence for another piece, and without the floor an
 * exhaustive search over break positions splits even a clean straight line. */
static double bic(double rss_rel, size_t n, int params)
{
    double floor = (double)n * ARFIT_TIME_RESOLUTION * ARFIT_TIME_RESOLUTION;
    if (rss_rel < floor) rss_rel = floor;
    return (double)n * log(rss_rel / (double)n) + params * log((double)n);
}

/* R^2 over the fitted points and the band bias over all of the sweep's band points. */
static void assess(const arfit_sweep *s, const arfit_point *p, size_t n,
                   const arfit_piecewise_fit *model, arfit_quality *q)
{
    double *meas = malloc(n * sizeof *meas), *pred = malloc(n * sizeof *pred);
    q->r2 = NAN;
    if (meas && pred) {
        for (size_t i = 0; i < n; i++) {
            meas[i] = p[i].time_us;
            pred[i] = arfit_piecewise_time_us(model, p[i].bytes);
        }
        q->r2 = arfit_r2(meas, pred, n);
    }
    free(meas);
    free(pred);
    double sum = 0, sum_abs = 0;
    int m = 0;
    for (size_t i = 0; i < s->n; i++) {
        const arfit_point *pt = &s->points[i];
        if (pt->bytes < ARFIT_BAND_MIN_BYTES || pt->bytes > ARFIT_BAND_MAX_BYTES) continue;
        double e = (arfit_piecewise_time_us(model, pt->bytes) - pt->time_us) / pt->time_us;
        sum += e * 100.0;
        sum_abs += fabs(e) * 100.0;
        m++;
    }
    q->band_points = m;
    q->band_bias_pct = m ? sum / m : NAN;
    q->band_mae_pct = m ? sum_abs / m : NAN;
}

static void set_piece(arfit_piece *pc, const arfit_point *p, size_t n, arfit_line line,
                      double from)
{
    pc->line = line;
    pc->from_bytes = from;
    pc->first_bytes = p[0].bytes;
    pc->last_bytes = p[n - 1].bytes;
    pc->n_points = (int)n;
}

int arfit_fit_linear(const arfit_sweep *s, const arfit_opts *o, arfit_linear_fit *out,
                     tp_err *err)
{
    memset(out, 0, sizeof *out);
    size_t first, n = range_points(s, o, &first);
    if (check_range(s, o, n, err) != 0) return -1;
    const arfit_point *p = s->points + first;
    if (fit_segment(p, n, s->k, o->weight, &out->line) != 0)
        return tp_err_at(err, s->file, p[0].line, 0,
                         "no physical fit over the range: the times give a non-positive "
                         "bandwidth or a negative latency");
    arfit_piecewise_fit one = {.n_pieces = 1, .k = s->k};
    set_piece(&one.pieces[0], p, n, out->line, 0);
    assess(s, p, n, &one, &out->q);
    out->q.bic = bic(rel_rss(p, n, s->k, out->line), n, 2);
    out->n_points = (int)n;
    out->k = s->k;
    return 0;
}

/* Break positions: piece j holds points [at[j], at[j+1]). Breaks are searched among at most
 * ARFIT_MAX_CANDIDATES positions (every position for a sweep of doubling sizes; evenly
 * spaced ones for a finely stepped sweep), and each piece's fit is computed once and kept,
 * so the search costs O(candidates^3) placements of O(1) each, not O(n^4). */
#define ARFIT_MAX_CANDIDATES 48

typedef struct cuts {
    size_t at[ARFIT_MAX_PIECES + 1];
    int pieces;
} cuts;

typedef struct seg_memo {
    signed char state; /* 0 not yet fitted, 1 fitted, -1 no physical fit */
    arfit_line line;
    double rss;
} seg_memo;

typedef struct break_search {
    const arfit_point *p;
    size_t n, n_cand;
    size_t cand[ARFIT_MAX_CANDIDATES + 2]; /* piece starts: 0, up to 48 more, then the end */
    seg_memo *memo;                         /* [(n_cand + 1)^2], by candidate index */
    int k;
    arfit_weight w;
} break_search;

static void candidates(break_search *b)
{
    size_t inner = b->n - 1; /* a piece may start at positions 1 .. n-1 */
    size_t want = inner < ARFIT_MAX_CANDIDATES ? inner : ARFIT_MAX_CANDIDATES;
    b->cand[0] = 0;
    b->n_cand = 1;
    for (size_t i = 1; i <= want; i++) {
        size_t at = 1 + (i - 1) * inner / want;
        if (at > b->cand[b->n_cand - 1]) b->cand[b->n_cand++] = at;
    }
    b->cand[b->n_cand] = b->n; /* the end, as index n_cand */
}

/* The piece from candidate i to candidate j (j == n_cand: the end), fitted once. */
static const seg_memo *segment(break_search *b, size_t i, size_t j)
{
    seg_memo *m = &b->memo[i * (b->n_cand + 1) + j];
    if (m->state == 0) {
        size_t from = b->cand[i], len = b->cand[j] - from;
        m->state = fit_segment(b->p + from, len, b->k, b->w, &m->line) == 0 ? 1 : -1;
        if (m->state == 1) m->rss = rel_rss(b->p + from, len, b->k, m->line);
    }
    return m;
}

/* Try every placement of `left` more breaks after candidate `from`; keep the best by BIC. */
static void search_breaks(break_search *b, int pieces, int placed, size_t *idx, double rss,
                          arfit_line *lines, double *best_bic, cuts *best, arfit_line *best_lines)
{
    size_t from = idx[placed];
    if (placed == pieces - 1) { /* the last piece runs to the end */
        if (b->n - b->cand[from] < ARFIT_MIN_POINTS) return;
        const seg_memo *m = segment(b, from, b->n_cand);
        if (m->state != 1) return;
        lines[placed] = m->line;
        /* each piece: lambda and beta; each break: its position */
        double score = bic(rss + m->rss, b->n, 3 * pieces - 1);
        if (score < *best_bic) {
            *best_bic = score;
            best->pieces = pieces;
            for (int j = 0; j < pieces; j++) best->at[j] = b->cand[idx[j]];
            best->at[pieces] = b->n;
            memcpy(best_lines, lines, (size_t)pieces * sizeof *lines);
        }
        return;
    }
    for (size_t next = from + 1; next < b->n_cand; next++) {
        if (b->cand[next] - b->cand[from] < ARFIT_MIN_POINTS) continue;
        const seg_memo *m = segment(b, from, next);
        if (m->state != 1) continue;
        lines[placed] = m->line;
        idx[placed + 1] = next;
        search_breaks(b, pieces, placed + 1, idx, rss + m->rss, lines, best_bic, best, best_lines);
    }
}

int arfit_fit_piecewise(const arfit_sweep *s, const arfit_opts *o, arfit_piecewise_fit *out,
                        tp_err *err)
{
    memset(out, 0, sizeof *out);
    size_t first, n = range_points(s, o, &first);
    if (check_range(s, o, n, err) != 0) return -1;
    const arfit_point *p = s->points + first;
    double best_bic = INFINITY;
    cuts best = {{0}, 0};
    arfit_line best_lines[ARFIT_MAX_PIECES], lines[ARFIT_MAX_PIECES];
    break_search b = {.p = p, .n = n, .k = s->k, .w = o->weight};
    candidates(&b);
    b.memo = calloc((b.n_cand + 1) * (b.n_cand + 1), sizeof *b.memo);
    if (!b.memo) return tp_err_set(err, "%s: out of memory", s->file);
    for (int pieces = 1; pieces <= ARFIT_MAX_PIECES; pieces++) {
        size_t idx[ARFIT_MAX_PIECES + 1] = {0};
        search_breaks(&b, pieces, 0, idx, 0.0, lines, &best_bic, &best, best_lines);
    }
    free(b.memo);
    if (best.pieces == 0)
        return tp_err_at(err, s->file, p[0].line, 0,
                         "times do not grow with size over the fit range: no positive "
                         "bandwidth fits");
    out->n_pieces = best.pieces;
    out->k = s->k;
    out->n_points = (int)n;
    for (int j = 0; j < best.pieces; j++) {
        const arfit_point *q = p + best.at[j];
        /* a break sits halfway, on a log scale, between the sizes either side of it */
        double from = j == 0 ? 0 : round(sqrt(q[-1].bytes * q[0].bytes));
        set_piece(&out->pieces[j], q, best.at[j + 1] - best.at[j], best_lines[j], from);
    }
    assess(s, p, n, out, &out->q);
    out->q.bic = best_bic;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Sizes
 * ------------------------------------------------------------------------------------------- */

void arfit_format_size(double bytes, char *buf, size_t len)
{
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        double unit = pow(1024.0, 3 - i);
        if (bytes >= unit && fmod(bytes, unit) == 0) {
            snprintf(buf, len, "%.0f%c", bytes / unit, suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%.0f", bytes);
}

/* ---------------------------------------------------------------------------------------------
 * Calibration file
 * ------------------------------------------------------------------------------------------- */

static void write_bias(FILE *f, const char *label, const arfit_quality *q)
{
    if (q->band_points)
        fprintf(f, "%s R2 %.6f, band bias %+.1f%% (mean |error| %.1f%%) over 32-256 KiB (%d points)",
                label, q->r2, q->band_bias_pct, q->band_mae_pct, q->band_points);
    else
        fprintf(f, "%s R2 %.6f, no point in 32-256 KiB", label, q->r2);
}

int arfit_write_calibration(FILE *f, const arfit_sweep *s, const arfit_opts *o,
                            const arfit_linear_fit *lin, const arfit_piecewise_fit *pw,
                            const char *fit_name, const char *hardware)
{
    int piecewise = strcmp(fit_name, "piecewise") == 0;
    char hw[ARFIT_NAME_MAX], lo[32], hi[32];
    copy_plain(hw, sizeof hw, hardware ? hardware : s->gpu);
    if (!hw[0]) snprintf(hw, sizeof hw, "unknown");
    arfit_format_size(o->min_bytes, lo, sizeof lo);
    arfit_format_size(o->max_bytes, hi, sizeof hi);

    fprintf(f, "# All-reduce cost calibration fitted by `tpsim fit-allreduce` from a measured "
               "sweep.\n");
    fprintf(f, "# t_AR(b) = lambda + 2(k-1)/k * b / beta     (the study's Equation 1)\n");
    fprintf(f, "kind: allreduce-calibration\n");
    fprintf(f, "hardware: %s\n", hw);
    fprintf(f, "tp: %d\n", s->k);
    fprintf(f, "fit: %s\n", piecewise ? "piecewise" : "linear");
    fprintf(f, "lambda_us: %.4f\n", lin->line.lambda_us);
    fprintf(f, "beta_gbps: %.3f\n", lin->line.beta_gbps);
    /* how good the fits are: informational, the engine does not use them */
    fprintf(f, "weight: %s\n", o->weight == ARFIT_WEIGHT_REL ? "rel" : "abs");
    fprintf(f, "min_bytes: %.0f\n", o->min_bytes);
    fprintf(f, "max_bytes: %.0f\n", o->max_bytes);
    fprintf(f, "n_points: %d\n", lin->n_points);
    fprintf(f, "r2: %.6f\n", lin->q.r2);
    if (lin->q.band_points) fprintf(f, "band_bias_pct: %.2f\n", lin->q.band_bias_pct);
    fprintf(f, "piecewise_r2: %.6f\n", pw->q.r2);
    if (pw->q.band_points) fprintf(f, "piecewise_band_bias_pct: %.2f\n", pw->q.band_bias_pct);
    if (piecewise) {
        fprintf(f, "# piece i applies from its from_bytes up to the next piece's from_bytes\n");
        fprintf(f, "pieces:\n");
        for (int j = 0; j < pw->n_pieces; j++) {
            const arfit_piece *pc = &pw->pieces[j];
            fprintf(f, "  - from_bytes: %.0f\n", pc->from_bytes);
            fprintf(f, "    lambda_us: %.4f\n", pc->line.lambda_us);
            fprintf(f, "    beta_gbps: %.3f\n", pc->line.beta_gbps);
        }
    }
    fprintf(f, "source:\n  how: >-\n");
    fprintf(f, "    Measured sweep fitted by tpsim fit-allreduce: least squares of Equation 1, "
               "weight %s,\n",
            o->weight == ARFIT_WEIGHT_REL ? "rel" : "abs");
    fprintf(f, "    over %s..%s bytes (%d points), k %d.", lo, hi, lin->n_points, s->k);
    write_bias(f, " Linear:", &lin->q);
    fprintf(f, ".\n    Piecewise (%d pieces, breaks by BIC):", pw->n_pieces);
    write_bias(f, "", &pw->q);
    fprintf(f, ".\n");
    char where[ARFIT_NAME_MAX];
    copy_plain(where, sizeof where, s->file);
    fprintf(f, "  where: %s (%s%s)\n", where,
            s->format == ARFIT_FORMAT_CSV ? "tpsim-nccl-sweep CSV"
                                          : "nccl-tests all_reduce_perf output, ",
            s->format == ARFIT_FORMAT_CSV ? "" : arfit_column_name(o->column));
    return ferror(f) ? -1 : 0;
}

const char *arfit_column_name(arfit_column column)
{
    return column == ARFIT_COLUMN_OOP ? "out-of-place"
           : column == ARFIT_COLUMN_IP ? "in-place"
                                       : "min of out-of-place and in-place";
}

int arfit_select_column(arfit_sweep *s, arfit_column column, tp_err *err)
{
    for (size_t i = 0; i < s->n; i++) {
        arfit_point *p = &s->points[i];
        if (column != ARFIT_COLUMN_OOP && p->ip_us < 0)
            return tp_err_at(err, s->file, p->line, 0,
                             "no in-place time column: --column %s needs nccl-tests output, "
                             "expected --column oop", column == ARFIT_COLUMN_IP ? "ip" : "min");
        p->time_us = column == ARFIT_COLUMN_OOP ? p->oop_us
                     : column == ARFIT_COLUMN_IP ? p->ip_us
                     : (p->ip_us < p->oop_us ? p->ip_us : p->oop_us);
    }
    return 0;
}
