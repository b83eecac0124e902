/* shard.h: splitting a sweep's grid over machines and joining the parts.
 *
 * Contract: shard I of N (0 <= I < N) owns the grid cells c with c % N == I: a stable
 * assignment that depends only on the grid, not on timing or the machine. A part is the
 * unsharded CSV with its own rows only, headed by one line
 *   # tpsim sweep part I/N of T cells, sweep FP
 * (N at most SHARD_MAX, in a part as on the command line; FP 16 hex digits, the sweep's
 * fingerprint: shard_fp of the scenario file's bytes, of every file it names (shard_fp_inputs)
 * and of every flag that shapes the rows,
 * so grid, --steps, --warmup, --seed, --set, --calib, ...; not -o, --shard, --jobs, --quiet).
 * shard_merge reads N parts (any order), checks that they are one sweep's parts (same FP,
 * N, T and CSV header), each shard
 * exactly once with exactly its row count, and writes the CSV the unsharded sweep writes,
 * byte for byte (rows back in grid order). Any problem is one "file:line:col: ..." message
 * in err and nothing written.
 */
#ifndef TPSIM_SHARD_H
#define TPSIM_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define SHARD_MAX 4096

/* Parses "I/N". */
int shard_parse(const char *text, long *shard, long *n_shards, tp_err *err);
/* FNV-1a 64 of n bytes, continued from *fp (start from SHARD_FP_INIT). */
#define SHARD_FP_INIT 0xcbf29ce484222325ull
void shard_fp(uint64_t *fp, const void *bytes, size_t n);
void shard_header(FILE *f, long shard, long n_shards, size_t cells, uint64_t fp);
/* The fingerprint's parts: a flag (name and value, value NULL for a switch), and a file's
 * bytes (0, or -1 with err set when it cannot be read). */
void shard_fp_flag(uint64_t *fp, const char *name, const char *value);
int shard_fp_file(uint64_t *fp, const char *path, tp_err *err);
/* Every file the process has read so far (rfile.h: the scenario and every file it names:
 * model, hardware, calibrations, grids, host files), by the fingerprint of its bytes: parts
 * made across an edit of any of them are two sweeps. */
void shard_fp_inputs(uint64_t *fp);
int shard_merge(FILE *out, const char *const *parts, int n_parts, tp_err *err);

#endif
