/* shard.c: see shard.h. */
#include "shard.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rfile.h"

#define SHARD_FILE_MAX (256u << 20) /* 256 MiB: a part of the largest grid is ~100 KB */

int shard_parse(const char *text, long *shard, long *n_shards, tp_err *err)
{
    char buf[64];
    const char *slash = strchr(text, '/');
    if (!slash || (size_t)(slash - text) >= sizeof buf)
        return tp_err_set(err, "--shard: '%s', expected I/N with 0 <= I < N", text);
    memcpy(buf, text, (size_t)(slash - text));
    buf[slash - text] = '\0';
    if (cli_long("--shard N", slash + 1, 1, SHARD_MAX, n_shards, err) ||
        cli_long("--shard I", buf, 0, *n_shards - 1, shard, err))
        return -1;
    return 0;
}

void shard_fp(uint64_t *fp, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++) *fp = (*fp ^ b[i]) * 0x100000001b3ull;
}

void shard_fp_flag(uint64_t *fp, const char *name, const char *value)
{
    shard_fp(fp, name, strlen(name) + 1);
    if (value) shard_fp(fp, value, strlen(value) + 1);
}

int shard_fp_file(uint64_t *fp, const char *path, tp_err *err)
{
    char *buf;
    size_t len;
    if (rfile_read(path, (size_t)64 << 20, "a YAML file", &buf, &len, err)) return -1;
    shard_fp(fp, buf, len);
    free(buf);
    return 0;
}

static int shard_cmp_fp(const void *a, const void *b)
{
    return strcmp(((const rfile_input *)a)->fp, ((const rfile_input *)b)->fp);
}

void shard_fp_inputs(uint64_t *fp)
{
    static _Thread_local rfile_input in[RFILE_MAX_INPUTS];
    int n = rfile_inputs_read(in, RFILE_MAX_INPUTS);
    /* by fingerprint, not by path or order: the same files under another folder on another
     * machine are the same sweep; a changed byte in any of them is another */
    qsort(in, (size_t)n, sizeof in[0], shard_cmp_fp);
    for (int i = 0; i < n; i++)
        if (in[i].fp[0]) shard_fp(fp, in[i].fp, strlen(in[i].fp) + 1);
}

void shard_header(FILE *f, long shard, long n_shards, size_t cells, uint64_t fp)
{
    fprintf(f, "# tpsim sweep part %ld/%ld of %zu cells, sweep %016llx\n", shard, n_shards, cells,
            (unsigned long long)fp);
}

typedef struct shard_part {
    const char *path;
    long shard, n_shards;
    unsigned long cells;
    char fp[17];
    char *header;
    char **rows;
    size_t n_rows;
} shard_part;

static void part_free(shard_part *p)
{
    free(p->header);
    for (size_t i = 0; i < p->n_rows; i++) free(p->rows[i]);
    free(p->rows);
}

/* The next line of buf (from *pos) without its newline, as a fresh string; NULL at the
 * end. A line cut short (no newline: a part still being written, or truncated) or holding
 * a NUL byte is refused. */
static char *next_line(const char *buf, size_t len, size_t *pos, const char *path, int line,
                       int *bad, tp_err *err)
{
    if (*pos >= len) return NULL;
    const char *start = buf + *pos, *nl = memchr(start, '\n', len - *pos);
    size_t n = nl ? (size_t)(nl - start) : len - *pos;
    if (!nl || memchr(start, '\0', n)) {
        *bad = 1;
        tp_err_at(err, path, line, nl ? 1 : (int)n + 1,
                  nl ? "a NUL byte, expected a tpsim sweep part"
                     : "line cut short (no newline at the end of the file), expected a whole "
                       "tpsim sweep part");
        return NULL;
    }
    char *out = malloc(n + 1);
    if (!out) {
        *bad = 1;
        tp_err_set(err, "out of memory");
        return NULL;
    }
    memcpy(out, start, n);
    out[n] = '\0';
    *pos += n + 1;
    return out;
}

static int part_read(shard_part *p, tp_err *err)
{
    char *buf;
    size_t len, pos = 0;
    if (rfile_read(p->path, SHARD_FILE_MAX, "a tpsim sweep part", &buf, &len, err)) return -1;
    int bad = 0, rc = -1;
    char *first = next_line(buf, len, &pos, p->path, 1, &bad, err), tail;
    if (bad) goto out;
    if (!first || sscanf(first, "# tpsim sweep part %ld/%ld of %lu cells, sweep %16[0-9a-f]%c",
                         &p->shard, &p->n_shards, &p->cells, p->fp, &tail) != 4 ||
        strlen(p->fp) != 16 || p->n_shards < 1 || p->shard < 0 || p->shard >= p->n_shards) {
        tp_err_at(
            err, p->path, 1, 1,
            "not a tpsim sweep part, expected a first line "
            "'# tpsim sweep part I/N of T cells, sweep FP' (made by tpsim sweep --shard I/N)");
        free(first);
        goto out;
    }
    free(first);
    if (p->n_shards > SHARD_MAX) { /* as --shard bounds N: merge allocates one entry per shard */
        tp_err_at(err, p->path, 1, 1, "%ld shards, expected at most %d (tpsim sweep --shard's N)",
                  p->n_shards, SHARD_MAX);
        goto out;
    }
    if (!(p->header = next_line(buf, len, &pos, p->path, 2, &bad, err))) {
        if (!bad) tp_err_at(err, p->path, 2, 1, "no CSV header, expected the sweep's header line");
        goto out;
    }
    size_t want = p->cells > (unsigned long)p->shard
                      ? (p->cells - (unsigned long)p->shard + (unsigned long)p->n_shards - 1) /
                            (unsigned long)p->n_shards
                      : 0;
    if (want > len || !(p->rows = calloc(want + 1, sizeof *p->rows))) { /* a row is >= 1 byte */
        tp_err_at(err, p->path, 1, 1, "%lu cells is more than the file holds, expected a "
                  "tpsim sweep part", p->cells);
        goto out;
    }
    char *row;
    while ((row = next_line(buf, len, &pos, p->path, (int)p->n_rows + 3, &bad, err))) {
        if (p->n_rows == want) {
            free(row);
            tp_err_at(err, p->path, (int)p->n_rows + 3, 1, "more rows than shard %ld/%ld of %lu "
                      "cells has (%zu)", p->shard, p->n_shards, p->cells, want);
            goto out;
        }
        p->rows[p->n_rows++] = row;
    }
    if (bad) goto out;
    if (p->n_rows != want) {
        tp_err_at(err, p->path, (int)p->n_rows + 3, 1,
                  "%zu rows, expected %zu for shard %ld/%ld "
                  "of %lu cells (a part cut short?)",
                  p->n_rows, want, p->shard, p->n_shards, p->cells);
        goto out;
    }
    rc = 0;
out:
    free(buf);
    return rc;
}

int shard_merge(FILE *out, const char *const *paths, int n, tp_err *err)
{
    shard_part *p = calloc((size_t)n, sizeof *p);
    shard_part **by_shard = NULL;
    int rc = -1;
    if (!p) return tp_err_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        p[i].path = paths[i];
        if (part_read(&p[i], err)) goto out;
        if (p[i].n_shards != p[0].n_shards || p[i].cells != p[0].cells) {
            tp_err_at(err, p[i].path, 1, 1, "part %ld/%ld of %lu cells, but %s is a part of %ld "
                      "of %lu cells: not one sweep", p[i].shard, p[i].n_shards, p[i].cells,
                      p[0].path, p[0].n_shards, p[0].cells);
            goto out;
        }
        if (strcmp(p[i].fp, p[0].fp)) {
            tp_err_at(err, p[i].path, 1, 1, "sweep %s, but %s is a part of sweep %s: not one sweep "
                      "(another scenario, a file it names changed, grid, --steps, --seed or "
                      "--set), expected the parts of one tpsim sweep command", p[i].fp, p[0].path,
                      p[0].fp);
            goto out;
        }
        if (strcmp(p[i].header, p[0].header)) {
            tp_err_at(err, p[i].path, 2, 1, "CSV header differs from %s's: not one sweep",
                      p[0].path);
            goto out;
        }
    }
    long N = p[0].n_shards;
    if (!(by_shard = calloc((size_t)N, sizeof *by_shard))) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (by_shard[p[i].shard]) {
            tp_err_at(err, p[i].path, 1, 1, "shard %ld/%ld repeated (also in %s), expected each "
                      "shard once", p[i].shard, N, by_shard[p[i].shard]->path);
            goto out;
        }
        by_shard[p[i].shard] = &p[i];
    }
    for (long s = 0; s < N; s++)
        if (!by_shard[s]) {
            tp_err_set(err, "merge: shard %ld/%ld is missing: %d of %ld parts given", s, N, n, N);
            goto out;
        }
    fprintf(out, "%s\n", p[0].header);
    for (unsigned long c = 0; c < p[0].cells; c++)
        fprintf(out, "%s\n", by_shard[c % (unsigned long)N]->rows[c / (unsigned long)N]);
    rc = 0;
out:
    for (int i = 0; i < n; i++) part_free(&p[i]);
    free(p);
    free(by_shard);
    return rc;
}
