/* shard.c: see shard.h. */
#include "shard.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ofile.h"
#include "rfile.h"

#include <errno.h>
#include <sys/stat.h>

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

static int shard_cmp_fp(const void *a, const void *b)
{
    return strcmp(((const rfile_input *)a)->fp, ((const rfile_input *)b)->fp);
}

int shard_fp_inputs(uint64_t *fp, const char *path, tp_err *err)
{
    char *buf;
    size_t len;
    if (rfile_read(path, (size_t)64 << 20, "a YAML file", &buf, &len, err)) return -1;
    shard_fp(fp, buf, len);
    free(buf);
    rfile_input *in = malloc(RFILE_MAX_INPUTS * sizeof *in);
    if (!in) return tp_err_set(err, "out of memory");
    int n = rfile_inputs_read(in, RFILE_MAX_INPUTS);
    /* by fingerprint, not by path or order: the same files under another folder on another
     * machine are the same sweep; a changed byte in any of them is another */
    qsort(in, (size_t)n, sizeof in[0], shard_cmp_fp);
    for (int i = 0; i < n; i++)
        if (in[i].fp[0]) shard_fp(fp, in[i].fp, strlen(in[i].fp) + 1);
    free(in);
    return 0;
}

int shard_write(const char *path, const char *csv, size_t len, long shard, long n_shards,
                size_t cells, uint64_t fp, tp_err *err)
{
    char meta[OFILE_PATH_MAX + sizeof SHARD_META_EXT];
    if (snprintf(meta, sizeof meta, "%s%s", path, SHARD_META_EXT) >= (int)sizeof meta)
        return tp_err_set(err, "%s: path too long for its sidecar %s", path, SHARD_META_EXT);
    uint64_t sum = SHARD_FP_INIT;
    shard_fp(&sum, csv, len);
    ofile part = {0}, side = {0};
    if (ofile_open(&part, path, err) || ofile_open(&side, meta, err)) goto fail;
    fwrite(csv, 1, len, part.f);
    fprintf(side.f, "%s\n%ld,%ld,%zu,%016llx,%016llx\n", SHARD_META_HEADER, shard, n_shards,
            cells, (unsigned long long)fp, (unsigned long long)sum);
    /* the part first: a sidecar that did not follow leaves a part whose sum no sidecar has */
    if (ofile_commit(&part, err) || ofile_commit(&side, err)) goto fail;
    return 0;
fail:
    ofile_abort(&part);
    ofile_abort(&side);
    return -1;
}

int shard_refuse_out(const char *out, const char *const *parts, int n, tp_err *err)
{
    const char **all = calloc((size_t)n * 2 + 1, sizeof *all);
    char (*metas)[OFILE_PATH_MAX + sizeof SHARD_META_EXT] = calloc((size_t)n + 1, sizeof *metas);
    int rc = -1;
    if (!all || !metas) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        snprintf(metas[i], sizeof metas[i], "%s%s", parts[i], SHARD_META_EXT);
        all[2 * i] = parts[i];
        all[2 * i + 1] = metas[i];
    }
    rc = ofile_refuse_inputs(out, all, 2 * n, err);
out:
    free(all);
    free(metas);
    return rc;
}

typedef struct shard_part {
    const char *path;
    long shard, n_shards;
    unsigned long cells;
    char fp[17], sum[17];
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

/* PATH.meta, the part's sidecar (shard.h): its one row into p. */
static int meta_read(shard_part *p, char *meta, size_t cap, tp_err *err)
{
    if (snprintf(meta, cap, "%s%s", p->path, SHARD_META_EXT) >= (int)cap)
        return tp_err_set(err, "%s: path too long for its sidecar %s", p->path, SHARD_META_EXT);
    struct stat sb;
    if (stat(meta, &sb) != 0 && errno == ENOENT)
        return tp_err_set(err, "%s: no sidecar %s beside it, expected a tpsim sweep part (tpsim "
                          "sweep --shard I/N -o FILE writes FILE and FILE%s)", p->path, meta,
                          SHARD_META_EXT);
    char *buf;
    size_t len;
    if (rfile_read(meta, 4096, "a tpsim sweep part's sidecar", &buf, &len, err)) return -1;
    int rc = -1;
    size_t hl = strlen(SHARD_META_HEADER);
    char tail;
    if (len < hl + 1 || memcmp(buf, SHARD_META_HEADER "\n", hl + 1)) {
        tp_err_at(err, meta, 1, 1, "not a tpsim sweep part's sidecar, expected the header '%s'",
                  SHARD_META_HEADER);
    } else if (memchr(buf, '\0', len) || len == 0 || buf[len - 1] != '\n' ||
               memchr(buf + hl + 1, '\n', len - hl - 1) != buf + len - 1 ||
               sscanf(buf + hl + 1, "%ld,%ld,%lu,%16[0-9a-f],%16[0-9a-f]%c", &p->shard,
                      &p->n_shards, &p->cells, p->fp, p->sum, &tail) != 6 ||
               tail != '\n' || strlen(p->fp) != 16 || strlen(p->sum) != 16 || p->n_shards < 1 ||
               p->shard < 0 || p->shard >= p->n_shards || buf[hl + 1] == '-' ||
               buf[hl + 1] == ' ') {
        tp_err_at(err, meta, 2, 1, "expected one row 'I,N,T,FP,SUM' (shard I of N, T cells, the "
                  "sweep's and the part's 16-hex-digit fingerprints), as tpsim sweep --shard "
                  "I/N writes it");
    } else if (p->n_shards > SHARD_MAX) { /* as --shard bounds N: merge allocates one per shard */
        tp_err_at(err, meta, 2, 1, "%ld shards, expected at most %d (tpsim sweep --shard's N)",
                  p->n_shards, SHARD_MAX);
    } else {
        rc = 0;
    }
    free(buf);
    return rc;
}

static int part_read(shard_part *p, char *meta, size_t cap, tp_err *err)
{
    char *buf;
    size_t len, pos = 0;
    if (rfile_read(p->path, SHARD_FILE_MAX, "a tpsim sweep part", &buf, &len, err)) return -1;
    int bad = 0, rc = -1;
    if (meta_read(p, meta, cap, err)) goto out;
    uint64_t sum = SHARD_FP_INIT;
    shard_fp(&sum, buf, len);
    char got[17];
    snprintf(got, sizeof got, "%016llx", (unsigned long long)sum);
    if (strcmp(got, p->sum)) {
        tp_err_set(err, "%s: not the part its sidecar %s describes (its bytes' fingerprint is "
                   "%s, the sidecar's %s), expected the part written with it", p->path, meta,
                   got, p->sum);
        goto out;
    }
    if (!(p->header = next_line(buf, len, &pos, p->path, 1, &bad, err))) {
        if (!bad) tp_err_at(err, p->path, 1, 1, "no CSV header, expected the sweep's header line");
        goto out;
    }
    size_t want = p->cells > (unsigned long)p->shard
                      ? (p->cells - (unsigned long)p->shard + (unsigned long)p->n_shards - 1) /
                            (unsigned long)p->n_shards
                      : 0;
    if (want > len || !(p->rows = calloc(want + 1, sizeof *p->rows))) { /* a row is >= 1 byte */
        tp_err_at(err, meta, 2, 1, "%lu cells is more than %s holds, expected a tpsim sweep "
                  "part's sidecar", p->cells, p->path);
        goto out;
    }
    char *row;
    while ((row = next_line(buf, len, &pos, p->path, (int)p->n_rows + 2, &bad, err))) {
        if (p->n_rows == want) {
            free(row);
            tp_err_at(err, p->path, (int)p->n_rows + 2, 1, "more rows than shard %ld/%ld of %lu "
                      "cells has (%zu)", p->shard, p->n_shards, p->cells, want);
            goto out;
        }
        p->rows[p->n_rows++] = row;
    }
    if (bad) goto out;
    if (p->n_rows != want) {
        tp_err_at(err, p->path, (int)p->n_rows + 2, 1,
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
    char (*meta)[OFILE_PATH_MAX + sizeof SHARD_META_EXT] = calloc((size_t)n + 1, sizeof *meta);
    int rc = -1;
    if (!p || !meta) {
        free(p);
        free(meta);
        return tp_err_set(err, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        p[i].path = paths[i];
        if (part_read(&p[i], meta[i], sizeof meta[i], err)) goto out;
        if (p[i].n_shards != p[0].n_shards || p[i].cells != p[0].cells) {
            tp_err_at(err, meta[i], 2, 1, "part %ld/%ld of %lu cells, but %s is a part of %ld "
                      "of %lu cells: not one sweep", p[i].shard, p[i].n_shards, p[i].cells,
                      p[0].path, p[0].n_shards, p[0].cells);
            goto out;
        }
        if (strcmp(p[i].fp, p[0].fp)) {
            tp_err_at(err, meta[i], 2, 1, "sweep %s, but %s is a part of sweep %s: not one sweep "
                      "(another scenario, a file it names changed, grid, --steps, --seed or "
                      "--set), expected the parts of one tpsim sweep command", p[i].fp, p[0].path,
                      p[0].fp);
            goto out;
        }
        if (strcmp(p[i].header, p[0].header)) {
            tp_err_at(err, p[i].path, 1, 1, "CSV header differs from %s's: not one sweep",
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
            tp_err_at(err, meta[i], 2, 1, "shard %ld/%ld repeated (also in %s), expected each "
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
    free(meta);
    free(by_shard);
    return rc;
}
