/* shard.h: splitting a sweep's grid over machines and joining the parts.
 *
 * Contract: shard I of N (0 <= I < N) owns the grid cells c with c % N == I: a stable
 * assignment that depends only on the grid, not on timing or the machine. A part is the
 * unsharded CSV with its own rows only, headed by one line
 *   # tpsim sweep part I/N of T cells
 * (N at most SHARD_MAX, in a part as on the command line). shard_merge reads N parts (any
 * order), checks that they are one grid's parts (same N, T and CSV header), each shard
 * exactly once with exactly its row count, and writes the CSV the unsharded sweep writes,
 * byte for byte (rows back in grid order). Any problem is one "file:line:col: ..." message
 * in err and nothing written.
 */
#ifndef TPSIM_SHARD_H
#define TPSIM_SHARD_H

#include <stdio.h>

#include "err.h"

#define SHARD_MAX 4096

/* Parses "I/N". */
int shard_parse(const char *text, long *shard, long *n_shards, tp_err *err);
void shard_header(FILE *f, long shard, long n_shards, size_t cells);
int shard_merge(FILE *out, const char *const *parts, int n_parts, tp_err *err);

#endif
