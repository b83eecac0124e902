/* coll.c: see coll.h. vLLM's rules: docs/sources.md#vllm-custom-ar and
 * docs/sources.md#vllm-ar-sizes. */
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nccltune.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define VLLM_CA_MAX_SIZE (8 * MIB) /* CustomAllreduce max_size default, 8192 * 1024 */

const char *const coll_model_names[] = {"nccl-fit", "nccl-tuner", "vllm-custom", "auto", NULL};

int coll_sm_of(const char *hw)
{
    static const struct { const char *prefix; int sm; } known[] = {
        {"H100", 90}, {"H200", 90}, {"H800", 90}, {"H20", 90}, {"GB200", 100},
        {"B200", 100}, {"B300", 103}, {"A100", 80}, {"A800", 80},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strncmp(hw, known[i].prefix, strlen(known[i].prefix))) return known[i].sm;
    return 0;
}

static int coll_vllm_ws(long k) { return k == 2 || k == 4 || k == 6 || k == 8; }

double coll_vllm_custom_max(long k, int sm, int with_symm_mem_cap)
{
    /* all_reduce_utils.py CUSTOM_ALL_REDUCE_MAX_SIZES, columns ws 2, 4, 6, 8 */
    static const struct { int sm; double cap[4]; } caps[] = {
        {90, {64 * MIB, 32 * MIB, 512 * KIB, 256 * KIB}},
        {100, {2 * MIB, 2 * MIB, 1 * MIB, 1 * MIB}},
        {103, {4 * MIB, 4 * MIB, 8 * MIB, 4 * MIB}},
    };
    double max = VLLM_CA_MAX_SIZE;
    if (with_symm_mem_cap && coll_vllm_ws(k))
        for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
            if (caps[i].sm == sm && caps[i].cap[k / 2 - 1] < max) max = caps[i].cap[k / 2 - 1];
    return max;
}

int coll_vllm_one_stage(long k, double bytes)
{
    return k == 2 || (k <= 4 && bytes < 512 * KIB) || (k <= 8 && bytes < 256 * KIB);
}

double coll_vllm_symm_max(long k, int sm)
{
    /* all_reduce_utils.py SYMM_MEM_ALL_REDUCE_MAX_SIZES, columns ws 2, 4, 6, 8 */
    static const struct { int sm; double cap[4]; } caps[] = {
        {90, {64 * MIB, 32 * MIB, 64 * MIB, 64 * MIB}},
        {100, {8 * MIB, 32 * MIB, 128 * MIB, 128 * MIB}},
        {103, {4 * MIB, 32 * MIB, 32 * MIB, 64 * MIB}},
    };
    if (!coll_vllm_ws(k)) return 0;
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (caps[i].sm == sm) return caps[i].cap[k / 2 - 1];
    return 0;
}

coll_path coll_vllm_path(long k, int sm, double bytes, int symm_mem)
{
    double symm_max = symm_mem ? coll_vllm_symm_max(k, sm) : 0;
    /* custom_all_reduce.py: the symm-mem cap applies when the symm-mem communicator is on */
    if (coll_vllm_ws(k) && fmod(bytes, 16.0) == 0 &&
        bytes < coll_vllm_custom_max(k, sm, symm_max > 0))
        return coll_vllm_one_stage(k, bytes) ? COLL_PATH_ONE_STAGE : COLL_PATH_TWO_STAGE;
    /* symm_mem.py should_use_symm_mem: bf16, bytes % 4 == 0, bytes <= max_size; multimem for
     * the world sizes _WORLD_SIZES_MULTIMEM lists (9.0: 4, 6, 8; 10.x: 6, 8), two-shot else */
    if (symm_max > 0 && fmod(bytes, 4.0) == 0 && bytes <= symm_max)
        return (sm == 90 ? k >= 4 : k >= 6) ? COLL_PATH_SYMM_MULTIMEM : COLL_PATH_SYMM_TWO_SHOT;
    return COLL_PATH_NCCL;
}

static nt_inputs coll_tuner_inputs(const arcal *c)
{
    return (nt_inputs){nt_find(c->tuner.nccl_version), c->tp, c->tuner.channels,
                       c->tuner.bw_per_channel_gbps, c->tuner.nvls_busbw_gbps, c->tuner.algos};
}

/* Each model's check: what its calibration must carry. */
static int coll_check_none(const coll_setup *s, tp_err *err) { return 0; }

static int coll_check_tuner(const coll_setup *s, tp_err *err)
{
    if (s->cal->tuner.valid) return 0;
    return tp_err_set(err,
                      "%s: collective.allreduce is nccl-tuner but the calibration has no "
                      "tuner block (channels, bw_per_channel_gbps: tpsim fit-allreduce --tuner)",
                      s->cal->named_at);
}

/* the lines the model's rule reaches at k, each from the smallest size it takes: one-stage
 * from 16 B, two-stage from 256 KiB (k 6, 8) or 512 KiB (k 4), symm-mem from the custom cap */
static int coll_check_lines(const coll_setup *s, int symm_mem, tp_err *err)
{
    static const char *const names[] = {"one_stage", "two_stage", "symm_mem"};
    const arcal *c = s->cal;
    double from[3] = {16, c->tp <= 4 ? 512 * KIB : 256 * KIB,
                      coll_vllm_custom_max(c->tp, s->sm, symm_mem)};
    for (int i = 0; i < 3; i++) {
        coll_path p = coll_vllm_path(c->tp, s->sm, from[i], symm_mem);
        int line = p == COLL_PATH_ONE_STAGE ? 0 : p == COLL_PATH_TWO_STAGE ? 1 : 2;
        if (p == COLL_PATH_NCCL || line != i || c->custom[i].valid) continue;
        return tp_err_set(err,
                          "%s: collective.allreduce is %s, which runs %s at tp %ld from %g "
                          "bytes, but the calibration has no custom %s {latency_us, gbps}",
                          c->named_at, coll_model_names[s->model],
                          i == 2 ? "torch's symmetric-memory all-reduce"
                                 : "vLLM's custom all-reduce",
                          c->tp, from[i], names[i]);
    }
    return 0;
}

static int coll_check_custom(const coll_setup *s, tp_err *err)
{
    const arcal *c = s->cal;
    if (!coll_vllm_ws(c->tp))
        return tp_err_set(err,
                          "%s: collective.allreduce is vllm-custom but vLLM's custom all-reduce "
                          "runs at tp 2, 4, 6 or 8, not %ld; use nccl-fit, nccl-tuner or auto",
                          c->named_at, c->tp);
    return coll_check_lines(s, 0, err);
}

static int coll_check_auto(const coll_setup *s, tp_err *err)
{
    const arcal *c = s->cal;
    if (coll_vllm_ws(c->tp) && !s->sm)
        return tp_err_set(err, "%s: collective.allreduce is auto, whose custom all-reduce size "
                          "limit depends on the GPU, but its hardware file has no "
                          "compute_capability; expected e.g. compute_capability: 9.0",
                          c->named_at);
    return coll_check_lines(s, 1, err);
}

int coll_check(const coll_setup *s, tp_err *err)
{
    return coll_models[s->model].check(s, err);
}

static coll_cost coll_nccl(const arcal *c, double bytes, int graphs, int use_tuner)
{
    if (use_tuner && c->tuner.valid) {
        nt_inputs in = coll_tuner_inputs(c);
        nt_choice ch = nt_pick(&in, bytes);
        double over =
            graphs && c->tuner.graph_launch_s >= 0 ? c->tuner.graph_launch_s : c->tuner.launch_s;
        double lat = ch.lat_us * 1e-6 + over, total = ch.time_us * 1e-6 + over;
        return (coll_cost){coll_model_names[COLL_NCCL_TUNER], COLL_NCCL_TUNER,
                           nt_algo_name(ch.algo), nt_proto_name(ch.proto), 0, lat, total - lat,
                           total, graphs && c->tuner.graph_launch_s < 0};
    }
    double lam = arcal_allreduce_lambda(c, bytes), body = arcal_allreduce_time(c, bytes) - lam;
    if (graphs && c->has_graph_lambda) lam = c->graph_lambda_s;
    return (coll_cost){coll_model_names[COLL_NCCL_FIT], COLL_NCCL_FIT,
                       c->piecewise ? "ring-fit-piecewise" : "ring-fit", "-", 0, lam, body,
                       lam + body, graphs && !c->has_graph_lambda};
}

static coll_cost coll_price_fit(const coll_setup *s, double bytes, int graphs)
{
    return coll_nccl(s->cal, bytes, graphs, 0);
}

static coll_cost coll_price_tuner(const coll_setup *s, double bytes, int graphs)
{
    return coll_nccl(s->cal, bytes, graphs, 1);
}

/* vllm-custom and auto: vLLM's rule (coll_vllm_path; auto with its symm-mem communicator on,
 * as VLLM_ALLREDUCE_USE_SYMM_MEM defaults), priced by the calibration's line for what it runs */
static coll_cost coll_price_custom(const coll_setup *s, double bytes, int graphs)
{
    static const char *const algos[] = {"one-stage", "two-stage", "symm-mem-multimem",
                                        "symm-mem-two-shot"};
    const arcal *c = s->cal;
    coll_path p = coll_vllm_path(c->tp, s->sm, bytes, s->model == COLL_AUTO);
    if (p == COLL_PATH_NCCL) return coll_nccl(c, bytes, graphs, 1);
    int symm = p == COLL_PATH_SYMM_MULTIMEM || p == COLL_PATH_SYMM_TWO_SHOT;
    const arcal_line *l = &c->custom[symm ? 2 : p == COLL_PATH_ONE_STAGE ? 0 : 1];
    double body = bytes / l->bw;
    /* symm-mem copies in and out inside its measured line: no separate eager copy */
    return (coll_cost){coll_model_names[COLL_VLLM_CUSTOM], COLL_VLLM_CUSTOM, algos[p], "-",
                       !graphs && !symm, l->latency_s, body, l->latency_s + body, 0};
}

coll_cost coll_allreduce(const coll_setup *s, double bytes, int graphs)
{
    return coll_models[s->model].price(s, bytes, graphs);
}

static void coll_upper(char *out, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) out[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    out[i] = '\0';
}

/* NCCL's kernel: ncclDevKernel_AllReduce_Sum_<type>_<ALGO>_<PROTO>; a fitted ring is RING LL */
static void coll_kernel_nccl(const coll_cost *c, long tp, double elem_bytes, char *out,
                             size_t cap)
{
    const char *t = elem_bytes == 4 ? "f32" : elem_bytes == 1 ? "f8e4m3" : "bf16";
    char algo[16] = "RING", proto[16] = "LL";
    if (c->algo && c->proto && strcmp(c->algo, "-") && strcmp(c->proto, "-")) {
        coll_upper(algo, sizeof algo, c->algo);
        coll_upper(proto, sizeof proto, c->proto);
    }
    snprintf(out, cap, "ncclDevKernel_AllReduce_Sum_%s_%s_%s(ncclDevKernelArgsStorage<4096ul>)", t,
             algo, proto);
}

/* vLLM's kernel: vllm::cross_device_reduce_{1,2}stage<T, ngpus> (custom_all_reduce.cuh);
 * torch's symm-mem kernels by their function names in CUDASymmetricMemoryOps.cu */
static void coll_kernel_custom(const coll_cost *c, long tp, double elem_bytes, char *out,
                               size_t cap)
{
    const char *t = elem_bytes == 4 ? "float" : "__nv_bfloat16";
    if (c->algo && !strncmp(c->algo, "symm-mem", 8)) {
        snprintf(out, cap, "%s_all_reduce_kernel",
                 strstr(c->algo, "multimem") ? "multimem" : "two_shot");
        return;
    }
    snprintf(out, cap,
             "void vllm::cross_device_reduce_%s<%s, %ld>(vllm::RankData*, vllm::RankSignals, "
             "vllm::Signal*, %s*, int, int)",
             c->algo && strstr(c->algo, "two") ? "2stage" : "1stage", t, tp, t);
}

const coll_model_def coll_models[COLL_N] = {
    {"nccl-fit", "the calibration's lambda + 2(k-1)/k * b / beta (a ring fitted to nccl-tests)",
     coll_check_none, coll_price_fit, coll_kernel_nccl, 0},
    {"nccl-tuner", "NCCL's own cost model on the calibration's channels and bandwidth",
     coll_check_tuner, coll_price_tuner, coll_kernel_nccl, 1},
    {"vllm-custom", "vLLM's custom all-reduce (one or two stages), NCCL above its size limit",
     coll_check_custom, coll_price_custom, coll_kernel_custom, 1},
    {"auto", "what vLLM picks: custom all-reduce below the GPU's cap, torch symm-mem, NCCL",
     coll_check_auto, coll_price_custom, NULL, 1},
};
