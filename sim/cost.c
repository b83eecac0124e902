/* cost.c: see cost.h. */
#include "cost.h"

#include <stdint.h>
#include <string.h>

/* The few distinct ops of a step: a dense decoder repeats one layer's ~15 ops 80 times, so
 * pricing each distinct op once (a law's two pow calls, a grid's interpolation, the collective
 * model) and copying its time is most of cost_apply's work saved. Direct-mapped: a collision
 * only prices an op again, with the same result. */
#define COST_MEMO_SLOTS 256

typedef struct cost_memo_slot {
    double bytes, flops, x[KG_MAX_DIMS];
    double gpu_s;
    uint8_t kind, name, graphable, fp8, used;
} cost_memo_slot;

static uint64_t cost_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Ops equal in every field the price reads (kind, name, flags, bytes, FLOPs, grid shape). */
static int cost_memo_same(const cost_memo_slot *m, const prog_op *op, const double *x)
{
    return m->used && m->kind == op->kind && m->name == op->name &&
           m->graphable == op->graphable && m->fp8 == op->fp8 &&
           cost_bits(m->bytes) == cost_bits(op->bytes) &&
           cost_bits(m->flops) == cost_bits(op->flops) &&
           memcmp(m->x, x, sizeof m->x) == 0;
}

/* Ops that differ differ in bytes or name almost always; the rest is compared in full. */
static size_t cost_memo_slot_of(const prog_op *op)
{
    uint64_t h = (cost_bits(op->bytes) ^ (uint64_t)op->name << 3 ^ op->kind) *
                 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 56) % COST_MEMO_SLOTS;
}

/* One op's GPU time from the calibration's class for it. */
static int cost_kernel_calibrated(const prog *p, size_t i, const cost_params *c, double *out,
                                  tp_err *err)
{
    const prog_op *op = &p->ops[i];
    int k = kcal_class_of(op->name);
    if (k < 0 || k >= KC_COUNT || !c->kernels->cls[k].valid)
        return tp_err_set(err, "%s: tpsim's op '%s' has no kernel class in it", c->kernels->path,
                          prog_op_name(op));
    /* an FP8 GEMM from the measured FP8 class where the calibration has one */
    int fp8_cls = op->fp8 && k == KC_GEMM && c->kernels->cls[KC_GEMM_FP8].valid;
    double fl = op->fp8 && !fp8_cls && c->fp8_peak_flops > 0
                    ? op->flops * c->peak_flops / c->fp8_peak_flops
                    : op->flops;
    if (fp8_cls) k = KC_GEMM_FP8;
    const double *gx = p->shape && p->shape[i].x[0] > 0 ? p->shape[i].x : NULL;
    if (gx && kcal_need(c->kernels, k, err)) return -1; /* its grid, parsed once */
    double s = kcal_time(c->kernels, k, op->bytes, fl, (double)p->batch, gx);
    if (c->kernel_err_sign)
        s *= 1.0 + c->kernel_err_sign * kcal_error_pct(c->kernels, k) / 100.0;
    *out = s + (op->graphable ? c->graph_node_s : 0.0);
    return 0;
}

/* One op's GPU time: cost.h's contract. */
static int cost_op(const prog *p, size_t i, const cost_params *c, double *out, tp_err *err)
{
    const prog_op *op = &p->ops[i];
    if (c->kernels && !prog_is_collective(op)) return cost_kernel_calibrated(p, i, c, out, err);
    double hbm = c->hbm_bw * c->hbm_eff, flops = c->peak_flops * c->flops_eff;
    double fp8_flops = (c->fp8_peak_flops > 0 ? c->fp8_peak_flops : c->peak_flops) * c->flops_eff;
    double s;
    switch (op->kind) {
    case PROG_KERNEL: {
        double mem = op->bytes / hbm, math = op->flops / (op->fp8 ? fp8_flops : flops);
        s = (mem > math ? mem : math) + c->kernel_fixed_s;
        break;
    }
    case PROG_H2D:
    case PROG_D2H: s = op->bytes / c->pcie_bw + c->kernel_fixed_s; break;
    case PROG_ALLREDUCE: s = coll_allreduce(&c->allreduce, op->bytes, c->graphs).total_s; break;
    default: s = arcal_allgather_time(c->allreduce.cal, op->bytes); break;
    }
    *out = s + (op->graphable ? c->graph_node_s : 0.0);
    return 0;
}

int cost_apply(prog *p, const cost_params *c, cost_totals *totals, tp_err *err)
{
    const arcal *cal = c->allreduce.cal;
    if (p->n_collectives && (!cal || cal->tp != p->tp))
        return tp_err_set(err, "no all-reduce calibration for tp %ld", p->tp);
    if (p->n_collectives && coll_check(&c->allreduce, err)) return -1;
    static const double no_shape[KG_MAX_DIMS];
    cost_memo_slot memo[COST_MEMO_SLOTS];
    for (size_t j = 0; j < COST_MEMO_SLOTS; j++) memo[j].used = 0;
    cost_totals t = {0, 0};
    for (size_t i = 0; i < p->n; i++) {
        prog_op *op = &p->ops[i];
        const double *x = p->shape ? p->shape[i].x : no_shape;
        cost_memo_slot *m = &memo[cost_memo_slot_of(op)];
        if (cost_memo_same(m, op, x)) {
            op->gpu_s = m->gpu_s;
        } else {
            if (cost_op(p, i, c, &op->gpu_s, err)) return -1;
            *m = (cost_memo_slot){.bytes = op->bytes, .flops = op->flops, .gpu_s = op->gpu_s,
                                  .kind = op->kind, .name = op->name,
                                  .graphable = op->graphable, .fp8 = op->fp8, .used = 1};
            memcpy(m->x, x, sizeof m->x);
        }
        if (prog_is_collective(op))
            t.collective_s += op->gpu_s;
        else
            t.compute_s += op->gpu_s;
    }
    if (totals) *totals = t;
    return 0;
}
