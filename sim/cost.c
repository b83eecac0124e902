/* cost.c: see cost.h. */
#include "cost.h"

int cost_apply(prog *p, const cost_params *c, cost_totals *totals, tp_err *err)
{
    const arcal *cal = c->allreduce.cal;
    if (p->n_collectives && (!cal || cal->tp != p->tp))
        return tp_err_set(err, "no all-reduce calibration for tp %ld", p->tp);
    if (p->n_collectives && coll_check(&c->allreduce, err)) return -1;
    double hbm = c->hbm_bw * c->hbm_eff, flops = c->peak_flops * c->flops_eff;
    double fp8_flops = (c->fp8_peak_flops > 0 ? c->fp8_peak_flops : c->peak_flops) * c->flops_eff;
    cost_totals t = {0, 0};
    for (size_t i = 0; i < p->n; i++) {
        prog_op *op = &p->ops[i];
        double s;
        if (c->kernels && !prog_is_collective(op)) {
            int k = kcal_class_of(op->name);
            if (k < 0 || k >= KC_COUNT || !c->kernels->cls[k].valid)
                return tp_err_set(err, "%s: tpsim's op '%s' has no kernel class in it",
                                  c->kernels->path, prog_op_name(op));
            /* an FP8 GEMM from the measured FP8 class where the calibration has one */
            int fp8_cls = op->fp8 && k == KC_GEMM && c->kernels->cls[KC_GEMM_FP8].valid;
            double fl = op->fp8 && !fp8_cls && c->fp8_peak_flops > 0
                            ? op->flops * c->peak_flops / c->fp8_peak_flops
                            : op->flops;
            if (fp8_cls) k = KC_GEMM_FP8;
            const double *gx = p->shape && p->shape[i].x[0] > 0 ? p->shape[i].x : NULL;
            if (gx && kcal_need(c->kernels, k, err)) return -1; /* its grid, parsed once */
            s = kcal_time(c->kernels, k, op->bytes, fl, (double)p->batch, gx);
            if (c->kernel_err_sign)
                s *= 1.0 + c->kernel_err_sign * kcal_error_pct(c->kernels, k) / 100.0;
            op->gpu_s = s + (op->graphable ? c->graph_node_s : 0.0);
            t.compute_s += op->gpu_s;
            continue;
        }
        switch (op->kind) {
        case PROG_KERNEL: {
            double mem = op->bytes / hbm, math = op->flops / (op->fp8 ? fp8_flops : flops);
            s = (mem > math ? mem : math) + c->kernel_fixed_s;
            break;
        }
        case PROG_H2D:
        case PROG_D2H: s = op->bytes / c->pcie_bw + c->kernel_fixed_s; break;
        case PROG_ALLREDUCE: s = coll_allreduce(&c->allreduce, op->bytes, c->graphs).total_s; break;
        default: s = arcal_allgather_time(cal, op->bytes); break;
        }
        op->gpu_s = s + (op->graphable ? c->graph_node_s : 0.0);
        if (prog_is_collective(op))
            t.collective_s += op->gpu_s;
        else
            t.compute_s += op->gpu_s;
    }
    if (totals) *totals = t;
    return 0;
}
