/* trace_names.c: see trace_names.h. */
#include "trace_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "phase.h"

static const char *const tr_class_names[TRC_COUNT] = {
    [TRC_GEMM] = "gemm", [TRC_ATTENTION] = "attention", [TRC_NORM] = "norm",
    [TRC_ELEMENTWISE] = "elementwise", [TRC_COLLECTIVE] = "collective", [TRC_COPY] = "copy",
};

const char *tr_class_name(tr_class c) { return tr_class_names[c]; }

static int tr_has(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i]) i++;
        if (i == n) return 1;
    }
    return 0;
}

static int tr_has_any(const char *s, const char *const *needles)
{
    for (; *needles; needles++)
        if (tr_has(s, *needles)) return 1;
    return 0;
}

/* Name fragments (lower case) by class, checked in this order: a name saying "copy" is
 * never a collective (vLLM's all_reduce copy-in), then collectives (vLLM's
 * custom all-reduce is "cross_device_reduce_*", PyTorch symmetric memory
 * "multimem_all_reduce_kernel" / "one_shot_all_reduce_kernel" / "two_shot_*"), then
 * attention (its split-KV kernels say "splitk" too), norms, then GEMM libraries. */
static const char *const tr_coll[] = {
    "nccl",      "rccl",           "cross_device_reduce", "all_reduce", "allreduce", "all_gather",
    "allgather", "reduce_scatter", "reducescatter",       "multimem",   NULL};
static const char *const tr_attn[] = {"attention", "attn", "flash", "fmha", "mha_", "paged", NULL};
static const char *const tr_norm[] = {"norm", NULL};
static const char *const tr_gemm[] = {
    "gemm",   "gemv", "cutlass", "xmma",  "nvjet",   "cublas", "cijk_", "matmul",
    "splitk", "_mm_", "wvsplit", "_proj", "lm_head", NULL}; /* the last two: tpsim's own op names */

tr_class tr_classify(const char *name, tr_gpu_kind kind)
{
    if (kind != TR_KERNEL) return TRC_COPY;
    if (!tr_has(name, "copy") && tr_has_any(name, tr_coll)) return TRC_COLLECTIVE;
    if (tr_has_any(name, tr_attn)) return TRC_ATTENTION;
    if (tr_has_any(name, tr_norm)) return TRC_NORM;
    if (tr_has_any(name, tr_gemm)) return TRC_GEMM;
    return TRC_ELEMENTWISE;
}

/* The Python functions (vLLM V0 and V1) whose events time a host phase; `in` must occur in
 * the event's file path. Names end the event name after "): ". Phase indices: phase.h. */
static const struct {
    const char *in, *fn;
    int phase;
} tr_phase_fns[] = {
    {"sched", "schedule", 0},
    {"", "broadcast_tensor_dict", 1},
    {"model_runner", "_update_states", 2},
    {"model_runner", "_prepare_inputs", 2},
    {"model_runner", "prepare_model_input", 2},
    {"", "_process_model_outputs", 4},
    {"sched", "update_from_output", 4},
};
#define TR_PHASE_FNS (sizeof tr_phase_fns / sizeof tr_phase_fns[0])

int tr_phase_of(const char *name)
{
    const char *sep = strstr(name, "): ");
    if (!sep) return -1;
    for (size_t i = 0; i < TR_PHASE_FNS; i++)
        if (!strcmp(sep + 3, tr_phase_fns[i].fn) && strstr(name, tr_phase_fns[i].in) &&
            strstr(name, tr_phase_fns[i].in) < sep)
            return tr_phase_fns[i].phase;
    return -1;
}

int tr_phase_maybe(const char *raw, size_t len)
{
    for (size_t i = 0; i < TR_PHASE_FNS; i++) {
        char pat[64];
        int n = snprintf(pat, sizeof pat, "): %s\"", tr_phase_fns[i].fn);
        for (size_t j = 0; n > 0 && j + (size_t)n <= len; j++)
            if (raw[j] == ')' && !memcmp(raw + j, pat, (size_t)n)) return 1;
    }
    return 0;
}

const char *tr_phase_functions(int phase)
{
    static const char *const fns[PHASE_N] = {"scheduler schedule", "broadcast_tensor_dict",
                                             "_update_states, _prepare_inputs, prepare_model_input",
                                             "", "_process_model_outputs, update_from_output"};
    return phase >= 0 && phase < PHASE_N ? fns[phase] : "";
}
