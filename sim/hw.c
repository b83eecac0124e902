/* hw.c: see hw.h. */
#include "hw.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cfg.h"
#include "locate.h"
#include "phys.h"

static const char *const hw_keys[] = {
    "kind",         "name",          "sms",          "hbm_gb",          "hbm_gbps",
    "bf16_tflops",  "fp8_tflops",    "pcie_gbps",     "kernel_fixed_us", "launch_latency_us",
    "hbm_efficiency", "flops_efficiency", "measured", "source", "aliases", "assumed",
    "compute_capability", "hbm_bytes", NULL};

/* one file's keys, read and checked in the order the file lists them: long because each key
 * is two lines of reading and a split would scatter the one list of what a hardware file is */
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
    double cc = 0, hbm_bytes = 0;
    cfg_node *kn = cfg_need(r, "kind", err);
    if (cfg_expect_map(r, hw_keys, err) || !kn || cfg_as_choice(kn, kinds, &kind, err) ||
        cfg_string_fits(r, "name", 1, sizeof h.name, &name, err) ||
        cfg_long(r, "sms", 1, 1, 100000, &h.sms, err) ||
        cfg_double(r, "hbm_gb", 1, 0.001, 1e6, &hbm_gb, err) ||
        cfg_double(r, "hbm_bytes", 0, 1e6, 1e15, &hbm_bytes, err) ||
        cfg_double(r, "hbm_gbps", 1, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &hbm_gbps, err) ||
        cfg_double(r, "bf16_tflops", 1, PHYS_TFLOPS_MIN, PHYS_TFLOPS_MAX, &tflops, err) ||
        cfg_double(r, "fp8_tflops", 0, PHYS_TFLOPS_MIN, PHYS_TFLOPS_MAX, &fp8_tflops, err) ||
        cfg_double(r, "pcie_gbps", 1, PHYS_GBPS_MIN, PHYS_GBPS_MAX, &pcie, err) ||
        cfg_double(r, "kernel_fixed_us", 1, 0, PHYS_TIME_US_MAX, &fixed_us, err) ||
        cfg_double(r, "launch_latency_us", 1, 0, PHYS_TIME_US_MAX, &lat_us, err) ||
        cfg_double(r, "hbm_efficiency", 0, 1e-3, 1, &h.hbm_efficiency, err) ||
        cfg_double(r, "flops_efficiency", 0, 1e-3, 1, &h.flops_efficiency, err) ||
        cfg_double(r, "compute_capability", 0, 1, 99, &cc, err) || cfg_source(r, 1, err) ||
        decl_read(r, &h.assumed, err))
        goto out;
    h.compute_capability = (int)lround(cc * 10);
    cfg_node *al = cfg_get(r, "aliases");
    if (al) {
        if (al->kind != CFG_SEQ || al->n == 0 || al->n > HW_MAX_ALIASES) {
            cfg_error(al, err,
                      "expected a list of 1 to %d device names (as nvidia-smi prints them)",
                      HW_MAX_ALIASES);
            goto out;
        }
        for (size_t i = 0; i < al->n; i++) {
            const char *a;
            if (cfg_as_string(al->vals[i], &a, err)) goto out;
            if (!a[0] || strlen(a) >= sizeof h.aliases[0]) {
                cfg_error(al->vals[i], err, "expected a device name of 1 to %zu characters",
                          sizeof h.aliases[0] - 1);
                goto out;
            }
            snprintf(h.aliases[h.n_aliases++], sizeof h.aliases[0], "%s", a);
        }
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t stem = strcspn(base, ".");
    snprintf(h.id, sizeof h.id, "%.*s", (int)(stem < sizeof h.id ? stem : sizeof h.id - 1), base);
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
    /* the capacity the GPU reports (cudaMemGetInfo's total, nvidia-smi's MiB), which vLLM's
     * gpu_memory_utilization multiplies; the datasheet's rounded GB where the file has none */
    h.hbm_bytes = hbm_bytes > 0 ? hbm_bytes : hbm_gb * 1e9;
    h.hbm_reported = hbm_bytes > 0;
    if (hbm_bytes > 0 && (hbm_bytes < 0.95 * hbm_gb * 1e9 || hbm_bytes > 1.15 * hbm_gb * 1e9)) {
        cfg_error(cfg_get(r, "hbm_bytes"), err,
                  "hbm_bytes: %.0f is %.1f GB, far from the datasheet's hbm_gb %g; expected the "
                  "capacity the GPU reports, within 0.95 to 1.15 times hbm_gb",
                  hbm_bytes, hbm_bytes / 1e9, hbm_gb);
        goto out;
    }
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

/* The next letter or digit of s from *i, lower-cased, or 0 at the end. */
static int hw_fold_next(const char *s, size_t *i)
{
    while (s[*i] && !isalnum((unsigned char)s[*i])) (*i)++;
    return s[*i] ? tolower((unsigned char)s[(*i)++]) : 0;
}

int hw_name_eq(const char *a, const char *b)
{
    size_t i = 0, j = 0;
    int ca, cb, any = 0;
    do {
        ca = hw_fold_next(a, &i);
        cb = hw_fold_next(b, &j);
        if (ca != cb) return 0;
        any |= ca;
    } while (ca);
    return any != 0; /* two names with no letter or digit name nothing */
}

int hw_same(const hw_spec *h, const char *name)
{
    if (hw_name_eq(name, h->id) || hw_name_eq(name, h->name)) return 1;
    for (int i = 0; i < h->n_aliases; i++)
        if (hw_name_eq(name, h->aliases[i])) return 1;
    return 0;
}

void hw_names(const hw_spec *h, char *out, size_t cap)
{
    size_t used = 0;
    int w = snprintf(out, cap, "%s (%s", h->name, h->id);
    if (w < 0 || (size_t)w >= cap) return;
    used = (size_t)w;
    for (int i = 0; i < h->n_aliases && used < cap; i++) {
        w = snprintf(out + used, cap - used, "%s%s", ", ", h->aliases[i]);
        if (w < 0) return;
        used += (size_t)w;
    }
    if (used < cap) snprintf(out + used, cap - used, ")");
}

int hw_resolve(const char *name, char *path, size_t cap, hw_spec *out, tp_err *err)
{
    hw_spec h, *dst = out ? out : &h;
    tp_err ignored = {{0}};
    if (!locate_is_name(name, ".yaml")) { /* a path: that file, its errors its own */
        if (snprintf(path, cap, "%s", name) >= (int)cap)
            return tp_err_set(err, "%s: path too long", name);
        return hw_load(path, dst, err);
    }
    if (locate_file("models/hw", ".yaml", name, "", path, cap, &ignored) == 0)
        return hw_load(path, dst, err);
    char names[LOCATE_MAX_NAMES][LOCATE_NAME_MAX], list[512] = "";
    char found[1024] = "", prefixed[1024] = "";
    int n = locate_names("models/hw", ".yaml", names), n_prefixed = 0;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char p[1024];
        if (locate_file("models/hw", ".yaml", names[i], "", p, sizeof p, &ignored) ||
            hw_load(p, &h, &ignored))
            continue;
        if (!found[0] && hw_same(&h, name)) snprintf(found, sizeof found, "%s", p);
        if (!strncasecmp(h.id, name, strlen(name))) {
            snprintf(prefixed, sizeof prefixed, "%s", p);
            n_prefixed++;
        }
        int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", h.id);
        if (w > 0 && (size_t)w < sizeof list - used) used += (size_t)w;
    }
    const char *pick = found[0] ? found : n_prefixed == 1 ? prefixed : NULL;
    if (pick) {
        if (snprintf(path, cap, "%s", pick) >= (int)cap)
            return tp_err_set(err, "%s: path too long", pick);
        return hw_load(path, dst, err);
    }
    if (n_prefixed > 1)
        return tp_err_set(err,
                          "hardware '%s' is ambiguous: more than one models/hw id begins with "
                          "it, expected one of %s",
                          name, list);
    return tp_err_set(err,
                      "hardware '%s': no models/hw file has that id, name or alias, expected "
                      "one of %s (or a hardware file)",
                      name, list);
}

int hw_measured_files(const hw_spec *h, const char *kind, char (*paths)[HW_PATH_MAX], int max)
{
    char names[LOCATE_MAX_NAMES][LOCATE_NAME_MAX];
    int n = locate_names(kind, ".yaml", names), found = 0;
    for (int i = 0; i < n && found < max; i++) {
        tp_err ignored = {{0}};
        const char *hw = NULL;
        if (locate_file(kind, ".yaml", names[i], "", paths[found], HW_PATH_MAX, &ignored))
            continue;
        cfg_doc *doc = cfg_load(paths[found], &ignored); /* only its hardware: is read */
        if (doc && !cfg_string(cfg_root(doc), "hardware", 1, &hw, &ignored) && hw_same(h, hw))
            found++;
        cfg_free(doc);
    }
    return found;
}
