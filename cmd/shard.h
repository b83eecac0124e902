/* shard.h: splitting a sweep's grid over machines and joining the parts.
 *
 * Contract: shard I of N (0 <= I < N) owns the grid cells c with c % N == I: a stable
 * assignment that depends only on the grid, not on timing or the machine. A part is two
 * files: PART, the unsharded CSV's header and this shard's rows only (a plain CSV: any CSV
 * reader takes it with its defaults), and its sidecar PART.meta (SHARD_META_EXT), a CSV of
 * one row under the header SHARD_META_HEADER:
 *   shard,n_shards,cells,sweep,part
 *   I,N,T,FP,SUM
 * (N at most SHARD_MAX, in a part as on the command line; FP 16 hex digits, the sweep's
 * fingerprint: shard_fp of the scenario file's bytes, of every file it names
 * (shard_fp_inputs) and of every flag that shapes the rows, so grid, --steps, --warmup, --seed,
 * --set, --calib, ...; not -o, --shard, --jobs, --quiet;
 * SUM 16 hex digits, shard_fp of PART's bytes, which binds the sidecar to its own part).
 * shard_write writes both (the part first: a part whose sidecar did not follow, or that
 * another run replaced, fails SUM). shard_merge reads N parts (any order) with their
 * sidecars, checks that each sidecar is its part's (SUM) and that they are one sweep's parts
 * (same FP, N, T and CSV header), each shard exactly once with exactly its row count, and
 * writes the CSV the unsharded sweep writes, byte for byte (rows back in grid order). Any
 * problem is one "file:line:col: ..." message in err and nothing written.
 */
#ifndef TPSIM_SHARD_H
#define TPSIM_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define SHARD_MAX 4096
#define SHARD_META_EXT ".meta"
#define SHARD_META_HEADER "shard,n_shards,cells,sweep,part"

/* Parses "I/N". */
int shard_parse(const char *text, long *shard, long *n_shards, tp_err *err);
/* FNV-1a 64 of n bytes, continued from *fp (start from SHARD_FP_INIT). */
#define SHARD_FP_INIT 0xcbf29ce484222325ull
void shard_fp(uint64_t *fp, const void *bytes, size_t n);
/* The fingerprint's parts: a flag (name and value, value NULL for a switch); the scenario
 * file's bytes and every file the process has read so far (rfile.h: the scenario and every
 * file it names: model, hardware, calibrations, grids, host files), by the fingerprint of its
 * bytes, so parts made across an edit of any of them are two sweeps (0, or -1 with err set
 * when the scenario cannot be read). */
void shard_fp_flag(uint64_t *fp, const char *name, const char *value);
int shard_fp_inputs(uint64_t *fp, const char *path, tp_err *err);
/* The part csv[0..len) to path and its sidecar to path.meta, each whole or not at all
 * (ofile.h); 0, or -1 with one line in err. */
int shard_write(const char *path, const char *csv, size_t len, long shard, long n_shards,
                size_t cells, uint64_t fp, tp_err *err);
/* merge's output check (ofile_refuse_inputs) against every part and every sidecar. */
int shard_refuse_out(const char *out, const char *const *parts, int n_parts, tp_err *err);
int shard_merge(FILE *out, const char *const *parts, int n_parts, tp_err *err);

#endif
