/* arfit_parse.c: parse all-reduce sweeps (nccl-tests output or CSV) and pick their time
 * column; see arfit.h. The fits are in arfit.c. */
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
void arfit_copy_plain(char *dst, size_t len, const char *src)
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
    if (bracket && !st->s->gpu[0]) arfit_copy_plain(st->s->gpu, sizeof st->s->gpu, bracket + 1);
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
        arfit_copy_plain(st->s->gpu, sizeof st->s->gpu, value);
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
    if (st->ip_time_col >= 0 && check_time(st, field[st->ip_time_col], col[st->ip_time_col],
                                           "in-place time", &ip, err) != 0)
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
    arfit_copy_plain(out->file, sizeof out->file, file ? file : "sweep");
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
