/* nccl_tuning.c: see nccl_tuning.h. */
#include "nccl_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "num.h"
#include "rfile.h"

#define NT_MAX_COLS 64
#define NT_MAX_CELL 64

/* Split at '|' into trimmed cells (in place); returns the count. */
static int ntr_cells(char *s, char **cell, int cap)
{
    int n = 0;
    for (char *p = s; n < cap;) {
        char *bar = strchr(p, '|');
        if (bar) *bar = '\0';
        while (*p == ' ' || *p == '\t') p++;
        char *end = p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) *--end = '\0';
        cell[n++] = p;
        if (!bar) break;
        p = bar + 1;
    }
    return n;
}

static int ntr_algo_of(const char *name)
{
    if (!strcasecmp(name, "Tree")) return NT_TREE;
    if (!strcasecmp(name, "Ring")) return NT_RING;
    if (!strcasecmp(name, "NVLS")) return NT_NVLS;
    return -1; /* CollNet, NVLSTree, PAT: not modelled */
}

static int ntr_proto_of(const char *name)
{
    if (!strcasecmp(name, "LL")) return NT_LL;
    if (!strcasecmp(name, "LL128")) return NT_LL128;
    if (!strcasecmp(name, "Simple")) return NT_SIMPLE;
    return -1;
}

/* "N coll channels" and "nRanks K": whitespace tokens after "NCCL INFO". */
static int ntr_scan_tokens(char *body, ntr_tuning *t, const char *path, int line, tp_err *err)
{
    char *tok[32], *save;
    int n = 0;
    for (char *w = strtok_r(body, " \t,", &save); w && n < 32; w = strtok_r(NULL, " \t,", &save))
        tok[n++] = w;
    for (int i = 0; i + 1 < n; i++) {
        long v;
        if (i + 2 < n && !strcmp(tok[i + 1], "coll") && !strncmp(tok[i + 2], "channels", 8)) {
            if (num_long(tok[i], 1, 64, &v) != NUM_OK)
                return tp_err_at(err, path, line, 0, "'%s coll channels', expected 1..64", tok[i]);
            if (!t->channels) t->channels = v;
        }
        if (!strcmp(tok[i], "nRanks")) {
            if (num_long(tok[i + 1], 1, 1 << 20, &v) != NUM_OK)
                return tp_err_at(err, path, line, 0, "'nRanks %s', expected a rank count",
                                 tok[i + 1]);
            if (!t->k) t->k = v;
        }
    }
    return 0;
}

static int ntr_parse(char *text, const char *path, ntr_tuning *t, tp_err *err)
{
    int algo_of[NT_MAX_COLS], proto_of[NT_MAX_COLS], n_cols = 0, have_algos = 0, line = 0;
    for (int a = 0; a < NT_NALGO; a++)
        for (int p = 0; p < NT_NPROTO; p++) t->lat_us[a][p] = t->algbw[a][p] = -1;
    for (char *ln = text, *next; ln && *ln; ln = next) {
        next = strchr(ln, '\n');
        if (next) *next++ = '\0';
        line++;
        char *info = strstr(ln, "NCCL INFO");
        if (!info) continue;
        char *body = info + strlen("NCCL INFO");
        if (!strchr(body, '|')) {
            char copy[512];
            snprintf(copy, sizeof copy, "%s", body);
            if (ntr_scan_tokens(copy, t, path, line, err)) return -1;
            continue;
        }
        if (t->have_table) continue; /* the first table only */
        char *cell[NT_MAX_COLS + 2];
        int n = ntr_cells(body, cell, NT_MAX_COLS + 2) - 1; /* cells after the row name */
        if (n > 0 && !cell[n][0]) n--;                      /* the trailing '|' */
        if (n <= 0) continue;
        if (!strcmp(cell[0], "Algorithm")) {
            for (int c = 0; c < n && c * NT_NPROTO + 2 < NT_MAX_COLS; c++)
                for (int p = 0; p < NT_NPROTO; p++)
                    algo_of[c * NT_NPROTO + p] = ntr_algo_of(cell[1 + c]);
            have_algos = n;
        } else if (!strcmp(cell[0], "Protocol")) {
            if (!have_algos || n != have_algos * NT_NPROTO || n > NT_MAX_COLS)
                return tp_err_at(err, path, line, 0,
                                 "Protocol row with %d columns, expected %d "
                                 "(3 per algorithm of the Algorithm row)",
                                 n, have_algos * NT_NPROTO);
            for (int c = 0; c < n; c++) {
                proto_of[c] = ntr_proto_of(cell[1 + c]);
                if (proto_of[c] < 0)
                    return tp_err_at(err, path, line, 0,
                                     "protocol '%s', expected LL, LL128 or Simple", cell[1 + c]);
            }
            n_cols = n;
        } else if (!strcmp(cell[0], "AllReduce")) {
            if (!n_cols || n != n_cols)
                return tp_err_at(err, path, line, 0, "AllReduce row with %d columns, expected the "
                                 "Protocol row's %d", n, n_cols);
            for (int c = 0; c < n; c++) {
                char *slash = strchr(cell[1 + c], '/'), *bw;
                double lat, alg;
                if (!slash)
                    return tp_err_at(err, path, line, 0, "'%s', expected latency/bandwidth",
                                     cell[1 + c]);
                *slash = '\0';
                for (bw = slash + 1; *bw == ' '; bw++) {}
                if (num_double(cell[1 + c], 0, 1e9, &lat) != NUM_OK ||
                    num_double(bw, 0, 1e9, &alg) != NUM_OK)
                    return tp_err_at(err, path, line, 0,
                                     "'%s/%s', expected two non-negative numbers "
                                     "(us / GB/s)",
                                     cell[1 + c], bw);
                if (algo_of[c] >= 0) {
                    t->lat_us[algo_of[c]][proto_of[c]] = lat;
                    t->algbw[algo_of[c]][proto_of[c]] = alg;
                }
            }
            t->have_table = 1;
            t->table_line = line;
        }
    }
    if (!t->have_table)
        return tp_err_set(
            err,
            "%s: no NCCL tuning table (an 'AllReduce |' row under 'Algorithm |' "
            "and 'Protocol |'): run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING",
            path);
    if (!t->channels)
        return tp_err_set(err, "%s: no 'N coll channels' line (NCCL_DEBUG_SUBSYS needs INIT)",
                          path);
    return 0;
}

int ntr_tuning_read(const char *path, ntr_tuning *out, tp_err *err)
{
    char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    if (rfile_read(path, (size_t)64 << 20, "an NCCL log", &buf, &len, err)) return -1;
    int rc = ntr_parse(buf, path, out, err);
    free(buf);
    return rc;
}

int ntr_tuning_inputs(const ntr_tuning *t, const char *path, const char *version, nt_inputs *in,
                      double *max_lat_diff_us, tp_err *err)
{
    long k = in->k;
    if (t->k && t->k != k)
        return tp_err_set(err, "%s: the NCCL log is of nRanks %ld, the sweep of k %ld", path, t->k,
                          k);
    double ring = t->algbw[NT_RING][NT_SIMPLE];
    if (!(ring > 0))
        return tp_err_set(err, "%s:%d: Ring/Simple has no bandwidth in the tuning table: the "
                          "channels' bandwidth cannot be read", path, t->table_line);
    const nt_table *tab = nt_find(version);
    *in = (nt_inputs){tab, k, (double)t->channels, ring * 2.0 * (double)(k - 1) / (double)k /
                      (double)t->channels, 0, 0};
    for (int a = 0; a < NT_NALGO; a++)
        for (int p = 0; p < NT_NPROTO; p++)
            if (t->algbw[a][p] > 0) in->algos |= NT_ALGO_BIT(a);
    if (t->algbw[NT_NVLS][NT_SIMPLE] > 0)
        in->nvls_busbw_gbps =
            t->algbw[NT_NVLS][NT_SIMPLE] /
            (tab->nvls_busbw_per_rank ? (double)k / (2.0 * (double)(k - 1)) : 5.0 / 6.0);
    *max_lat_diff_us = 0;
    for (int a = NT_TREE; a <= NT_RING; a++)
        for (int p = 0; p < NT_NPROTO; p++) {
            double lat;
            if (!(t->algbw[a][p] > 0) || nt_time(in, a, p, 0, &lat) < 0) continue;
            double d = lat > t->lat_us[a][p] ? lat - t->lat_us[a][p] : t->lat_us[a][p] - lat;
            if (d > *max_lat_diff_us) *max_lat_diff_us = d;
        }
    return 0;
}
