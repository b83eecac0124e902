/* measured.c: see measured.h. */
#include "measured.h"

#include <stdio.h>
#include <string.h>

#include "locate.h"
#include "phys.h"

static const char *const mc_root_keys[] = {"kind", "hardware", "device", "host",
                                           "gpu",  "apply",    "fingerprint", NULL};
static const char *const mc_host_keys[] = {"launch", "collective", "step", "phases", NULL};
static const char *const mc_phase_keys[] = {"schedule",          "broadcast",
                                            "prepare_inputs",    "sampler_sync",
                                            "output_processing", NULL}; /* phase.h */
static const char *const mc_dist_keys[] = {"dist", "mean_us", "cv", "call_mean_us", "source",
                                           "unmeasured", NULL};
static const char *const mc_gpu_keys[] = {"kernel_fixed_us", "kernel_fixed_source",
                                          "hbm_efficiency", "hbm_efficiency_source",
                                          "achieved_gbps", NULL};
static const char *const mc_class_keys[] = {"value", "efficiency", "source", NULL};
static const char *const mc_dists[] = {"constant", "uniform", "normal", "lognormal", NULL};

/* The scenario keys each part sets (scenario.c binds them). */
static const char *const mc_part_keys[MEASURED_PARTS][MEASURED_MAX_KEYS] = {
    [MEASURED_LAUNCH] = {"host.launch.dist", "host.launch.mean_us", "host.launch.cv"},
    [MEASURED_COLLECTIVE] = {"host.collective.dist", "host.collective.mean_us",
                             "host.collective.cv"},
    [MEASURED_STEP] = {"host.step.dist", "host.step.mean_us", "host.step.cv"},
    [MEASURED_KERNEL_FIXED] = {"gpu.kernel_fixed_us"},
    [MEASURED_HBM_EFFICIENCY] = {"gpu.hbm_efficiency"},
/* a phase also sets its per_seq_us to 0: the trace timed the phase at its own batch, so the
 * scenario's per-sequence term must not be added on top of that total */
#define MC_PHASE(P, N) [P] = {"host.phases." N ".dist", "host.phases." N ".mean_us", \
                              "host.phases." N ".cv", "host.phases." N ".per_seq_us"}
    MC_PHASE(MEASURED_PHASE_SCHEDULE, "schedule"),
    MC_PHASE(MEASURED_PHASE_BROADCAST, "broadcast"),
    MC_PHASE(MEASURED_PHASE_PREPARE_INPUTS, "prepare_inputs"),
    MC_PHASE(MEASURED_PHASE_SAMPLER_SYNC, "sampler_sync"),
    MC_PHASE(MEASURED_PHASE_OUTPUT_PROCESSING, "output_processing"),
#undef MC_PHASE
};
static const char *const mc_part_names[MEASURED_PARTS] = {
    "host.launch", "host.collective", "host.step", "gpu.kernel_fixed_us", "gpu.hbm_efficiency",
    "host.phases.schedule", "host.phases.broadcast", "host.phases.prepare_inputs",
    "host.phases.sampler_sync", "host.phases.output_processing"};

/* The shortest decimal that reads back as exactly v. */
static void mc_num_text(double v, char *out, size_t cap)
{
    for (int digits = 6; digits <= 17; digits++) {
        double back;
        snprintf(out, cap, "%.*g", digits, v);
        if (sscanf(out, "%lf", &back) == 1 && back == v) return;
    }
}

/* A source: (a string, or a mapping of scalars) on one line: "key: value, key: value". */
static void mc_source_text(const cfg_node *n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    if (n->kind == CFG_SCALAR) {
        snprintf(out, cap, "%s", n->text);
        return;
    }
    for (size_t i = 0; i < n->n && used + 1 < cap; i++) {
        int w = snprintf(out + used, cap - used, "%s%s: %s", i ? ", " : "", n->keys[i],
                         n->vals[i]->text);
        if (w < 0) break;
        used += (size_t)w;
    }
}

static void mc_add(measured_group *g, measured_part part, const char *value, const cfg_node *at)
{
    int k = g->n_keys++;
    g->keys[k] = mc_part_keys[part][k];
    snprintf(g->values[k], sizeof g->values[k], "%s", value);
    g->line[k] = at->line;
    g->col[k] = at->col;
}

/* host.launch / host.collective / host.step: measured (dist, mean_us, cv, source) or
 * `unmeasured: true`. */
static int mc_dist(const cfg_node *host, measured_part part, measured_cal *m, tp_err *err)
{
    measured_group *g = &m->parts[part];
    const char *key = strrchr(mc_part_names[part], '.') + 1;
    cfg_node *n = cfg_get(host, key), *kn;
    if (!n) return 0;
    if (cfg_expect_map(n, mc_dist_keys, err)) return -1;
    cfg_node *un = cfg_get(n, "unmeasured");
    if (un) {
        int flag;
        if (cfg_as_bool(un, &flag, err)) return -1;
        if (!flag)
            return cfg_error(un, err, "expected true (or no unmeasured key with a measured value)");
        if (n->n != 1)
            return cfg_error(n, err, "unmeasured: true and a value, expected one of them");
        g->state = MEASURED_UNMEASURED;
        return 0;
    }
    int kind;
    double mean, cv = 0, call;
    if (!(kn = cfg_need(n, "dist", err)) || cfg_as_choice(kn, mc_dists, &kind, err) ||
        cfg_double(n, "mean_us", 1, 0, PHYS_TIME_US_MAX, &mean, err) ||
        cfg_double(n, "cv", 0, 0, 10, &cv, err) ||
        cfg_double(n, "call_mean_us", 0, 0, PHYS_TIME_US_MAX, &call, err) ||
        cfg_source(n, 1, err))
        return -1;
    if (kind == 0 && cv != 0)
        return cfg_error(cfg_get(n, "cv"), err, "a constant has no cv, expected 0 or no cv key");
    char text[32];
    g->state = MEASURED_SET;
    mc_source_text(cfg_get(n, "source"), g->source, sizeof g->source);
    mc_add(g, part, mc_dists[kind], kn);
    mc_num_text(mean, text, sizeof text);
    mc_add(g, part, text, cfg_get(n, "mean_us"));
    /* a constant gets cv 0 too, so a scenario's own cv cannot make it invalid */
    mc_num_text(cv, text, sizeof text);
    mc_add(g, part, text, cfg_get(n, "cv") ? cfg_get(n, "cv") : kn);
    if (part >= MEASURED_PHASE_SCHEDULE) mc_add(g, part, "0", cfg_get(n, "mean_us"));
    return 0;
}

/* gpu.NAME with gpu.NAME_SOURCE (the writer names the source key after the value). */
static int mc_gpu_value(const cfg_node *gpu, measured_part part, const char *name,
                        const char *source_key, double lo, double hi, measured_cal *m, tp_err *err)
{
    measured_group *g = &m->parts[part];
    cfg_node *n = cfg_get(gpu, name), *src = cfg_get(gpu, source_key);
    double v;
    if (!n) {
        if (src) return cfg_error(src, err, "a source without %s, expected both or neither", name);
        return 0;
    }
    if (cfg_as_double(n, lo, hi, &v, err)) return -1;
    if (!src) return cfg_error(n, err, "no %s, expected where it was measured", source_key);
    if (src->kind == CFG_SCALAR) {
        const char *s;
        if (cfg_as_string(src, &s, err)) return -1;
    } else if (src->kind != CFG_MAP || src->n == 0) {
        return cfg_error(src, err,
                         "expected a string or a mapping saying how and where it was measured");
    } else {
        for (size_t i = 0; i < src->n; i++)
            if (src->vals[i]->kind != CFG_SCALAR)
                return cfg_error(src->vals[i], err, "expected a scalar");
    }
    char text[32];
    mc_num_text(v, text, sizeof text);
    g->state = MEASURED_SET;
    mc_source_text(src, g->source, sizeof g->source);
    mc_add(g, part, text, n);
    return 0;
}

static int mc_gpu(const cfg_node *gpu, measured_cal *m, tp_err *err)
{
    if (cfg_expect_map(gpu, mc_gpu_keys, err) ||
        mc_gpu_value(gpu, MEASURED_KERNEL_FIXED, "kernel_fixed_us", "kernel_fixed_source", 0, 1e6,
                     m, err) ||
        mc_gpu_value(gpu, MEASURED_HBM_EFFICIENCY, "hbm_efficiency", "hbm_efficiency_source", 1e-3,
                     1, m, err))
        return -1;
    cfg_node *ach = cfg_get(gpu, "achieved_gbps"); /* for people: checked, not applied */
    if (!ach) return 0;
    if (ach->kind != CFG_MAP)
        return cfg_error(ach, err, "expected a mapping of kernel class to {value, source}");
    for (size_t i = 0; i < ach->n; i++) {
        const cfg_node *c = ach->vals[i];
        double v;
        if (cfg_expect_map(c, mc_class_keys, err) || cfg_double(c, "value", 1, 0, 1e6, &v, err) ||
            cfg_double(c, "efficiency", 0, 0, 100, &v, err) || cfg_source(c, 1, err))
            return -1;
    }
    return 0;
}

int measured_load(const char *path, measured_cal *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (strlen(path) >= sizeof out->path) return tp_err_set(err, "%s: path too long", path);
    snprintf(out->path, sizeof out->path, "%s", path);
    for (int p = 0; p < MEASURED_PARTS; p++) {
        out->parts[p].name = mc_part_names[p];
        out->parts[p].state = MEASURED_ABSENT;
    }
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    cfg_node *r = cfg_root(doc), *n;
    const char *kind;
    int rc = -1;
    if (cfg_expect_map(r, mc_root_keys, err) || cfg_string(r, "kind", 1, &kind, err) ||
        fp_verify(r, &out->fp, err))
        goto out;
    if (out->fp.state == FP_MISMATCH)
        snprintf(out->fp_why, sizeof out->fp_why, "its numbers are not those trace import wrote "
                 "(fingerprint %s, now %s)", out->fp.recorded, out->fp.computed);
    if (strcmp(kind, "trace-calibration")) {
        cfg_error(cfg_get(r, "kind"), err, "'%s', expected trace-calibration (a file written by "
                  "tpsim trace import -o)", kind);
        goto out;
    }
    const char *dev = NULL, *hw = NULL;
    if (cfg_string(r, "hardware", 0, &hw, err) || cfg_string(r, "device", 0, &dev, err)) goto out;
    if (hw) snprintf(out->hardware, sizeof out->hardware, "%s", hw);
    if (dev) snprintf(out->device, sizeof out->device, "%s", dev);
    if ((n = cfg_get(r, dev ? "device" : "hardware"))) out->hw_line = n->line, out->hw_col = n->col;
    if (!(n = cfg_need(r, "host", err)) ||
        cfg_expect_map(n, mc_host_keys, err) || mc_dist(n, MEASURED_LAUNCH, out, err) ||
        mc_dist(n, MEASURED_COLLECTIVE, out, err) || mc_dist(n, MEASURED_STEP, out, err))
        goto out;
    cfg_node *ph = cfg_get(n, "phases");
    if (ph && cfg_expect_map(ph, mc_phase_keys, err)) goto out;
    for (int p = MEASURED_PHASE_SCHEDULE; ph && p <= MEASURED_PHASE_OUTPUT_PROCESSING; p++)
        if (mc_dist(ph, (measured_part)p, out, err)) goto out;
    if ((n = cfg_get(r, "gpu")) && mc_gpu(n, out, err)) goto out;
    if ((n = cfg_get(r, "apply"))) { /* the same values as --set flags, for people */
        if (n->kind != CFG_SEQ) {
            cfg_error(n, err, "expected a list of key=value overrides");
            goto out;
        }
        for (size_t i = 0; i < n->n; i++) {
            const char *s;
            if (cfg_as_string(n->vals[i], &s, err)) goto out;
            if (!strchr(s, '=')) {
                cfg_error(n->vals[i], err, "expected dotted.key=value");
                goto out;
            }
        }
    }
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}

/* The parts that set the analytic GPU cost (gpu.kernel_fixed_us, gpu.hbm_efficiency): with a
 * kernel calibration (scenario key kernels:) every GPU op's time is measured, so these would
 * change nothing, and are reported instead of set. */
static int measured_is_gpu_knob(int part)
{
    return part == MEASURED_KERNEL_FIXED || part == MEASURED_HBM_EFFICIENCY;
}

int measured_open(cfg_doc *doc, const char *flag_path, const char *const *sets, int n_sets,
                  tp_err *err)
{
    for (int i = 0; i < n_sets; i++)
        if (!strncmp(sets[i], "measured", 8) && (sets[i][8] == '=' || sets[i][8] == '.'))
            return tp_err_at(err, "--set", i + 1, 1, "measured: a measured file is named by the "
                             "scenario key measured: or by --measured FILE, not by --set");
    cfg_node *key = cfg_get(cfg_root(doc), "measured");
    char path[MEASURED_PATH_MAX], assign[MEASURED_PATH_MAX + 64];
    const char *src = "--measured";
    int line = 1, col = 1;
    if (flag_path) {
        if (strlen(flag_path) >= sizeof path) return tp_err_set(err, "--measured: path too long");
        snprintf(path, sizeof path, "%s", flag_path);
    } else if (key) {
        const char *ref, *file = cfg_file(doc), *slash = strrchr(file, '/');
        char dir[MEASURED_PATH_MAX];
        tp_err where;
        if (cfg_as_string(key, &ref, err)) return -1;
        if (slash && (size_t)(slash - file) >= sizeof dir)
            return cfg_error(key, err, "path too long");
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) : 0, file);
        if (locate_file("models/measured", ".yaml", ref, dir, path, sizeof path, &where))
            return cfg_error(key, err, "%s", where.msg);
        src = key->file, line = key->line, col = key->col;
    } else {
        return 0;
    }
    measured_cal m;
    if (measured_load(path, &m, err)) {
        if (key && !flag_path && strstr(err->msg, ": cannot open: ")) {
            char inner[TP_ERR_MAX];
            snprintf(inner, sizeof inner, "%s", err->msg);
            return cfg_error(key, err, "%s", inner);
        }
        return -1;
    }
    int priced = cfg_get(cfg_root(doc), "kernels") != NULL;
    for (int p = 0; p < MEASURED_PARTS; p++) {
        const measured_group *g = &m.parts[p];
        if (priced && measured_is_gpu_knob(p)) continue; /* measured_bind reports it */
        for (int k = 0; k < g->n_keys; k++) {
            snprintf(assign, sizeof assign, "%s=%s", g->keys[k], g->values[k]);
            if (cfg_set_at(doc, assign, m.path, g->line[k], g->col[k], err)) return -1;
        }
    }
    snprintf(assign, sizeof assign, "measured=%s", path);
    return cfg_set_at(doc, assign, src, line, col, err);
}

int measured_bind(cfg_doc *doc, measured_cal *out, tp_err *err)
{
    cfg_node *root = cfg_root(doc), *key = cfg_get(root, "measured");
    const char *path;
    memset(out, 0, sizeof *out);
    if (!key) return 0;
    if (cfg_as_string(key, &path, err) || measured_load(path, out, err)) return -1;
    if (!strcmp(key->file, "--measured"))
        snprintf(out->named_by, sizeof out->named_by, "--measured");
    else
        snprintf(out->named_by, sizeof out->named_by, "%s:%d:%d", key->file, key->line, key->col);
    int priced = cfg_get(root, "kernels") != NULL;
    for (int p = 0; p < MEASURED_PARTS; p++) {
        measured_group *g = &out->parts[p];
        if (priced && measured_is_gpu_knob(p) && g->state == MEASURED_SET) {
            g->state = MEASURED_PRICED; /* measured_open did not set it */
            continue;
        }
        for (int k = 0; k < g->n_keys; k++) {
            const cfg_node *n = cfg_find(root, g->keys[k]);
            if (n && strcmp(n->file, out->path))
                snprintf(g->overridden_by[k], sizeof g->overridden_by[k], "%s", n->file);
        }
    }
    return 0;
}
