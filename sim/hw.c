/* hw.c: see hw.h. */
#include "hw.h"

#include <stdio.h>

#include "cfg.h"

static const char *const hw_keys[] = {
    "kind",         "name",          "sms",          "hbm_gb",          "hbm_gbps",
    "bf16_tflops",  "fp8_tflops",    "pcie_gbps",     "kernel_fixed_us", "launch_latency_us",
    "hbm_efficiency", "flops_efficiency", "measured", "source", NULL};

int hw_load(const char *path, hw_spec *out, tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    cfg_node *r = cfg_root(doc);
    hw_spec h = {.hbm_efficiency = -1, .flops_efficiency = -1};
    const char *name = NULL;
    int kind = 0, rc = -1;
    static const char *const kinds[] = {"hardware", NULL};
    double hbm_gb = 0, hbm_gbps = 0, tflops = 0, fp8_tflops = 0, pcie = 0, fixed_us = 0, lat_us = 0;
    cfg_node *kn = cfg_need(r, "kind", err);
    if (cfg_expect_map(r, hw_keys, err) || !kn || cfg_as_choice(kn, kinds, &kind, err) ||
        cfg_string_fits(r, "name", 1, sizeof h.name, &name, err) || cfg_long(r, "sms", 1, 1, 100000, &h.sms, err) ||
        cfg_double(r, "hbm_gb", 1, 0.001, 1e6, &hbm_gb, err) ||
        cfg_double(r, "hbm_gbps", 1, 1, 1e6, &hbm_gbps, err) ||
        cfg_double(r, "bf16_tflops", 1, 0.001, 1e6, &tflops, err) ||
        cfg_double(r, "fp8_tflops", 0, 0.001, 1e6, &fp8_tflops, err) ||
        cfg_double(r, "pcie_gbps", 1, 0.001, 1e5, &pcie, err) ||
        cfg_double(r, "kernel_fixed_us", 1, 0, 1e6, &fixed_us, err) ||
        cfg_double(r, "launch_latency_us", 1, 0, 1e6, &lat_us, err) ||
        cfg_double(r, "hbm_efficiency", 0, 1e-3, 1, &h.hbm_efficiency, err) ||
        cfg_double(r, "flops_efficiency", 0, 1e-3, 1, &h.flops_efficiency, err) ||
        cfg_source(r, 1, err))
        goto out;
    cfg_node *measured = cfg_get(r, "measured");
    if (measured) {
        if (measured->kind != CFG_MAP) {
            cfg_error(measured, err, "expected a mapping of measured values");
            goto out;
        }
        for (size_t i = 0; i < measured->n; i++) {
            double v;
            if (cfg_as_double(measured->vals[i], -1e300, 1e300, &v, err)) goto out;
        }
    }
    snprintf(h.name, sizeof h.name, "%s", name);
    h.hbm_bytes = hbm_gb * 1e9;
    h.hbm_bw = hbm_gbps * 1e9;
    h.peak_flops = tflops * 1e12;
    h.fp8_peak_flops = fp8_tflops * 1e12;
    h.pcie_bw = pcie * 1e9;
    h.kernel_fixed_s = fixed_us * 1e-6;
    h.launch_latency_s = lat_us * 1e-6;
    *out = h;
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}
