/* model.h: a transformer's architecture as the decode step sees it (models/NAME.yaml).
 *
 * Contract: model_load reads and validates one model file into a caller-owned value
 * (no pointers inside). model_check_tp says whether a TP degree can shard it: heads and
 * intermediate must divide by k; KV heads divide by k, or are replicated when k > kv_heads
 * (then k must be a multiple of kv_heads), as vLLM does.
 */
#ifndef TPSIM_MODEL_H
#define TPSIM_MODEL_H

#include "err.h"

typedef struct model_arch {
    char name[64];
    long layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, dtype_bytes;
} model_arch;

int model_load(const char *path, model_arch *out, tp_err *err);
int model_check_tp(const model_arch *m, long tp, tp_err *err);
/* KV heads each rank holds at TP k (replicated when k > kv_heads). */
long model_kv_heads_per_rank(const model_arch *m, long tp);

#endif
