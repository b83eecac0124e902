/* scenario.c: see scenario.h. */
#include "scenario.h"

#include "locate.h"
#include "scnfit.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const scenario_keys[] = {"name",    "description", "model",     "hardware",
                                            "allreduce", "defaults",  "gpu",       "program",
                                            "host",    "execution",   "offset_ms", "fit",
                                            "source",  "collective", "calibration_from",
                                            "precision", "sourced", "assumed",
                                            "measured", /* a trace calibration (measured.h) */
                                       "kernels",  /* a kernel calibration (kcal.h) */
                                            "validated", /* the validated domain (domain.h) */
                                            "phases", /* a host-phase file (phase.h) */
                                            "phases_declared", /* its declarations, spliced */
                                            "engine", /* an engine file (phase.h) */
                                            "engine_declared", /* its name and modes, spliced */
                                            NULL};
static const char *const collective_keys[] = {"allreduce", NULL};
static const char *const defaults_keys[] = {"tp", "batch", "ctx", "steps", "warmup", "seed", NULL};
static const char *const gpu_keys[] = {"hbm_efficiency", "flops_efficiency", "kernel_fixed_us",
                                       "launch_latency_us", NULL};
static const char *const program_keys[] = {"embedding_allreduce", "logits_gather",
                                           "input_copies", "sampling_kernels",
                                           "allreduce_copy_out", NULL};
static const char *const host_keys[] = {"launch",          "collective",     "step",
                                        "driver",          "driver_per_peer_us",
                                        "broadcast_wait",  "queue_depth",    "slow_rank",
                                        "phases",          NULL};
static const char *const slow_keys[] = {"rank", "extra_step_us", "launch_factor", NULL};
static const char *const exec_keys[] = {"mode", "graph_launch", "graph_node_us", "host_phases",
                                        NULL};
static const char *const dist_keys[] = {"dist", "mean_us", "cv", NULL};
static const char *const phase_keys[] = {"dist", "mean_us", "cv", "per_seq_us", NULL};
static const char *const precision_keys[] = {"weights", "kv_cache", "activations", NULL};

/* A file the scenario names: a path from the scenario's own folder, or a name ("llama-3.1-70b")
 * looked up as KIND/NAME.yaml (a model also as models/hf/NAME.json); then $TPSIM_PATH and the
 * share folder (locate.h). */
static int scenario_resolve(const cfg_doc *doc, const cfg_node *n, const char *kind, char *out,
                            size_t cap, tp_err *err)
{
    const char *ref;
    if (cfg_as_string(n, &ref, err)) return -1;
    const char *file = cfg_file(doc), *slash = strrchr(file, '/');
    char dir[SCN_PATH_MAX];
    if (slash && (size_t)(slash - file) >= sizeof dir) return cfg_error(n, err, "path too long");
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) : 0, file);
    tp_err where, hf;
    if (locate_file(kind, ".yaml", ref, dir, out, cap, &where)) {
        /* a model name may also be a Hugging Face config.json: models/hf/NAME.json */
        if (!strcmp(kind, "models") && locate_is_name(ref, ".yaml")) {
            if (locate_file("models/hf", ".json", ref, dir, out, cap, &hf) == 0) return 0;
            /* the configs' names too, and the closest of them ("Qwen3-32b": Qwen3-32B) unless
             * a model file's name was closer */
            const char *names = strstr(where.msg, "; did you mean ") ? NULL
                                : strstr(hf.msg, "; did you mean ");
            if (!names) names = strstr(hf.msg, " (models/hf there: ");
            return cfg_error(n, err, "%s, nor models/hf/%s.json%s", where.msg, ref,
                             names ? names : "");
        }
        return cfg_error(n, err, "%s", where.msg);
    }
    return 0;
}

/* A referenced file's own errors are already "file:line:col"; a missing file is reported
 * at the line that names it. */
static int scenario_subfile_error(const cfg_node *n, tp_err *err)
{
    if (strstr(err->msg, ": cannot open: ")) {
        char inner[TP_ERR_MAX];
        snprintf(inner, sizeof inner, "%s", err->msg);
        return cfg_error(n, err, "%s", inner);
    }
    return -1;
}

static int scenario_dist_keys(const cfg_node *map, const char *key, const char *const *keys,
                              dist *out, tp_err *err)
{
    cfg_node *n = cfg_get(map, key);
    if (!n) { *out = dist_const(0.0); return 0; }
    static const char *const kinds[] = {"constant", "uniform", "normal", "lognormal", NULL};
    int kind = 0;
    double mean = 0, cv = 0;
    cfg_node *kn;
    if (cfg_expect_map(n, keys, err) || !(kn = cfg_need(n, "dist", err)) ||
        cfg_as_choice(kn, kinds, &kind, err) || cfg_double(n, "mean_us", 1, 0, 1e9, &mean, err) ||
        cfg_double(n, "cv", kind != DIST_CONSTANT, 0, 10, &cv, err))
        return -1;
    if (kind == DIST_CONSTANT && cv != 0)
        return cfg_error(cfg_get(n, "cv"), err, "a constant has no cv, expected 0 or no cv key");
    if (kind == DIST_UNIFORM && cv > DIST_UNIFORM_MAX_CV)
        return cfg_error(cfg_get(n, "cv"), err,
                         "%g is too wide for a uniform (it would go below 0), expected <= %.3f; "
                         "use a lognormal", cv, DIST_UNIFORM_MAX_CV);
    if (kind == DIST_NORMAL && cv > DIST_NORMAL_MAX_CV)
        return cfg_error(cfg_get(n, "cv"), err,
                         "%g is too wide for a normal (clamping at 0 would raise its mean), "
                         "expected <= %.2f; use a lognormal", cv, DIST_NORMAL_MAX_CV);
    *out = dist_make((dist_kind)kind, mean * 1e-6, cv);
    return 0;
}

static int scenario_dist(const cfg_node *map, const char *key, dist *out, tp_err *err)
{
    return scenario_dist_keys(map, key, dist_keys, out, err);
}

/* host.phases: a map of phase.h's named phases, each a dist with an optional per_seq_us. */
static int scenario_bind_phases(const cfg_node *ph, phase_model *m, tp_err *err)
{
    if (cfg_expect_map(ph, phase_names, err)) return -1;
    for (int i = 0; i < PHASE_N; i++) {
        double per_seq_us = 0;
        const cfg_node *n = cfg_get(ph, phase_names[i]);
        if (scenario_dist_keys(ph, phase_names[i], phase_keys, &m->base[i], err) ||
            (n && cfg_double(n, "per_seq_us", 0, 0, 1e9, &per_seq_us, err)))
            return -1;
        m->per_seq_s[i] = per_seq_us * 1e-6;
    }
    return 0;
}

static int scenario_position(const cfg_node *n, char *out, size_t cap)
{
    snprintf(out, cap, "%s:%d:%d", n->file, n->line, n->col);
    return 0;
}

static int scenario_bind_host(const cfg_node *host, scenario *s, tp_err *err)
{
    double per_peer_us = 0;
    s->queue_depth = 1024; /* CUDA's default pending-launch limit per stream is ~1024 */
    s->slow_rank = -1;
    s->slow_launch_factor = 1.0;
    /* host.collective: measured takes each call's host cost from the all-reduce calibration's
     * eager-minus-graph measurement (run_collective_dispatch) */
    const cfg_node *cn = host->kind == CFG_MAP ? cfg_get(host, "collective") : NULL;
    s->collective_measured = cn && cn->kind == CFG_SCALAR && !strcmp(cn->text, "measured");
    if (cn && cn->kind == CFG_SCALAR && !s->collective_measured)
        return cfg_error(cn, err, "'%s', expected a dist {dist, mean_us, cv} or measured (the "
                         "all-reduce calibration's eager dispatch per call)", cn->text);
    if (cfg_expect_map(host, host_keys, err) || scenario_dist(host, "launch", &s->launch, err) ||
        (!s->collective_measured && scenario_dist(host, "collective", &s->collective, err)) ||
        scenario_dist(host, "step", &s->step, err) ||
        scenario_dist(host, "driver", &s->driver, err) ||
        cfg_double(host, "driver_per_peer_us", 0, 0, 1e9, &per_peer_us, err) ||
        cfg_bool(host, "broadcast_wait", 0, &s->broadcast_wait, err) ||
        cfg_long(host, "queue_depth", 0, 1, 1L << 24, &s->queue_depth, err))
        return -1;
    cfg_node *ph = cfg_get(host, "phases");
    if (ph && scenario_bind_phases(ph, &s->phases, err)) return -1;
    s->driver_per_peer_s = per_peer_us * 1e-6;
    cfg_node *slow = cfg_get(host, "slow_rank");
    if (slow) {
        double extra_us = 0;
        if (cfg_expect_map(slow, slow_keys, err) ||
            cfg_long(slow, "rank", 1, 0, 1023, &s->slow_rank, err) ||
            scenario_position(cfg_get(slow, "rank"), s->slow_rank_at, sizeof s->slow_rank_at) ||
            cfg_double(slow, "extra_step_us", 0, 0, 1e9, &extra_us, err) ||
            cfg_double(slow, "launch_factor", 0, 0, 1e6, &s->slow_launch_factor, err))
            return -1;
        s->slow_extra_step_s = extra_us * 1e-6;
    }
    return 0;
}

static int scenario_bind_gpu(const cfg_node *gpu, scenario *s, tp_err *err)
{
    s->hbm_eff = s->hw.hbm_efficiency;
    s->flops_eff = s->hw.flops_efficiency;
    s->kernel_fixed_s = s->hw.kernel_fixed_s;
    s->launch_latency_s = s->hw.launch_latency_s;
    double fixed_us = s->kernel_fixed_s * 1e6, lat_us = s->launch_latency_s * 1e6;
    /* with a kernel calibration every GPU op's time is measured, so an analytic knob set in
     * the scenario, a measured file or --set would change nothing: refused, never ignored */
    static const char *const dead[] = {"hbm_efficiency", "flops_efficiency", "kernel_fixed_us"};
    for (size_t i = 0; gpu && s->has_kernels && i < sizeof dead / sizeof dead[0]; i++) {
        const cfg_node *k = cfg_get(gpu, dead[i]);
        if (k)
            return tp_err_at(err, k->file, k->line, k->col,
                             "gpu.%s has no effect with kernels: (every GPU op's time comes from "
                             "%s), expected it removed", dead[i], s->kernels.path);
    }
    if (gpu && (cfg_expect_map(gpu, gpu_keys, err) ||
                cfg_double(gpu, "hbm_efficiency", 0, 1e-3, 1, &s->hbm_eff, err) ||
                cfg_double(gpu, "flops_efficiency", 0, 1e-3, 1, &s->flops_eff, err) ||
                cfg_double(gpu, "kernel_fixed_us", 0, 0, 1e6, &fixed_us, err) ||
                cfg_double(gpu, "launch_latency_us", 0, 0, 1e6, &lat_us, err)))
        return -1;
    s->kernel_fixed_s = fixed_us * 1e-6;
    s->launch_latency_s = lat_us * 1e-6;
    if (!s->has_kernels && (s->hbm_eff < 0 || s->flops_eff < 0)) /* unused with kernels: */
        return tp_err_at(err, gpu ? gpu->file : s->path, gpu ? gpu->line : 1, gpu ? gpu->col : 1,
                         "gpu: %s is set neither here nor in the hardware file, expected a "
                         "fraction in (0, 1]",
                         s->hbm_eff < 0 ? "hbm_efficiency" : "flops_efficiency");
    return 0;
}

/* precision.{weights,kv_cache,activations}: each class takes the formats vLLM serves it in. */
static int scenario_bind_precision(const cfg_node *n, scenario *s, tp_err *err)
{
    static const char *const weights[] = {"bf16", "fp8", "int4", NULL};
    static const char *const kv[] = {"bf16", "fp8", NULL};
    static const char *const act[] = {"bf16", NULL};
    const char *const *choices[] = {weights, kv, act};
    int *dst[] = {&s->program.prec_weights, &s->program.prec_kv_cache,
                  &s->program.prec_activations};
    if (cfg_expect_map(n, precision_keys, err)) return -1;
    for (int i = 0; i < 3; i++) {
        cfg_node *v = cfg_get(n, precision_keys[i]);
        int idx;
        if (!v) continue;
        if (cfg_as_choice(v, choices[i], &idx, err)) return -1;
        *dst[i] = prec_parse(choices[i][idx]);
    }
    return 0;
}

/* ------------------------------------------------ the named files, parsed once ----- */

/* The kinds of file a cache entry holds: one path may be read as two kinds, so both key it.
 * The last two are fingerprints (scenario_file_fp): of the bytes, of the YAML content less
 * its validated: block. */
enum { SCN_FILE_MODEL, SCN_FILE_HW, SCN_FILE_KERNELS, SCN_FILE_ALLREDUCE, SCN_FILE_FP,
       SCN_FILE_TREE_FP };

typedef struct scenario_cache_entry {
    struct scenario_cache_entry *next;
    int kind;
    char path[SCN_PATH_MAX];
    size_t size;
    /* the loaded value as its loader wrote it, copied out at a hit; a kernel calibration's
     * shared grids are the one pointer, and the entry holds a reference to them (kcal_share) */
    _Alignas(max_align_t) unsigned char data[];
} scenario_cache_entry;

struct scenario_cache {
    pthread_mutex_t lock; /* validate's --jobs threads bind at once */
    scenario_cache_entry *head;
};

scenario_cache *scenario_cache_new(void)
{
    scenario_cache *c = calloc(1, sizeof *c);
    if (c && pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        return NULL;
    }
    return c;
}

void scenario_cache_free(scenario_cache *c)
{
    if (!c) return;
    while (c->head) {
        scenario_cache_entry *e = c->head;
        c->head = e->next;
        if (e->kind == SCN_FILE_KERNELS) kcal_free((kcal *)(void *)e->data); /* its hold */
        free(e);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The fingerprint of the file at path into out (FP_HEX bytes): its bytes (fp_file), or with
 * tree its YAML content without validated: (fp_tree_except). */
static int scenario_fp_of(const char *path, int tree, char *out, tp_err *err)
{
    if (!tree) return fp_file(path, out, err);
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    fp_hex(fp_tree_except(cfg_root(doc), "validated"), out);
    cfg_free(doc);
    return 0;
}

static int scenario_load_kind(int kind, const char *path, void *out, tp_err *err)
{
    switch (kind) {
    case SCN_FILE_FP: return scenario_fp_of(path, 0, out, err);
    case SCN_FILE_TREE_FP: return scenario_fp_of(path, 1, out, err);
    case SCN_FILE_MODEL: return model_load(path, out, err);
    case SCN_FILE_HW: return hw_load(path, out, err);
    case SCN_FILE_KERNELS: return kcal_load(path, out, err);
    default: return arcal_load(path, out, err);
    }
}

/* The file at path loaded as kind into out (size bytes): from the cache when it holds it,
 * else read and kept. A failed load is not kept (the next bind reports it again); an entry
 * that cannot be allocated is only not kept. Two threads missing at once both read the
 * file and keep one copy each; either gives the same bytes. */
static int scenario_cached_load(scenario_cache *c, int kind, const char *path, void *out,
                                size_t size, tp_err *err)
{
    if (!c) return scenario_load_kind(kind, path, out, err);
    int hit = 0;
    pthread_mutex_lock(&c->lock);
    for (const scenario_cache_entry *e = c->head; e && !hit; e = e->next)
        if (e->kind == kind && e->size == size && !strcmp(e->path, path)) {
            if (kind == SCN_FILE_KERNELS) kcal_share(out, (const kcal *)(const void *)e->data);
            else memcpy(out, e->data, size);
            hit = 1;
        }
    pthread_mutex_unlock(&c->lock);
    if (hit) return 0;
    if (scenario_load_kind(kind, path, out, err)) return -1;
    scenario_cache_entry *e = malloc(sizeof *e + size);
    if (!e) return 0;
    e->kind = kind;
    snprintf(e->path, sizeof e->path, "%s", path);
    e->size = size;
    if (kind == SCN_FILE_KERNELS) kcal_share((kcal *)(void *)e->data, out);
    else memcpy(e->data, out, size);
    pthread_mutex_lock(&c->lock);
    e->next = c->head;
    c->head = e;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int scenario_file_fp(scenario_cache *cache, const char *path, int tree, char hex[FP_HEX],
                     tp_err *err)
{
    return scenario_cached_load(cache, tree ? SCN_FILE_TREE_FP : SCN_FILE_FP, path, hex, FP_HEX,
                                err);
}

static int scenario_bind_files(cfg_doc *doc, const cfg_node *r, scenario_cache *cache,
                               scenario *s, tp_err *err)
{
    char path[SCN_PATH_MAX];
    cfg_node *mn = cfg_need(r, "model", err), *hn, *an;
    if (!mn || scenario_resolve(doc, mn, "models", path, sizeof path, err)) return -1;
    if (scenario_cached_load(cache, SCN_FILE_MODEL, path, &s->model, sizeof s->model, err))
        return scenario_subfile_error(mn, err);
    snprintf(s->model_path, sizeof s->model_path, "%s", path);
    if (!(hn = cfg_need(r, "hardware", err))) return -1;
    if (scenario_resolve(doc, hn, "models/hw", path, sizeof path, err)) {
        /* not a file: a GPU name, as plan --hardware and trace import --hardware take it (the
         * file's id or a prefix of it, its name:, an alias, the nvidia-smi name) */
        tp_err e2 = {{0}};
        if (hn->kind != CFG_SCALAR || hw_resolve(hn->text, path, sizeof path, NULL, &e2)) return -1;
        *err = (tp_err){{0}};
    }
    if (scenario_cached_load(cache, SCN_FILE_HW, path, &s->hw, sizeof s->hw, err))
        return scenario_subfile_error(hn, err);
    snprintf(s->hw_path, sizeof s->hw_path, "%s", path);
    cfg_node *kn = cfg_get(r, "kernels");
    if (kn) {
        if (scenario_resolve(doc, kn, "models/kernels", path, sizeof path, err)) return -1;
        if (scenario_cached_load(cache, SCN_FILE_KERNELS, path, &s->kernels, sizeof s->kernels,
                                 err))
            return scenario_subfile_error(kn, err);
        scenario_position(kn, s->kernels.named_at, sizeof s->kernels.named_at);
        s->has_kernels = 1;
    }
    an = cfg_get(r, "allreduce");
    if (!an) return 0;
    if (an->kind != CFG_SEQ || an->n > SCN_MAX_CALS)
        return cfg_error(an, err, "expected a list of at most %d calibration files", SCN_MAX_CALS);
    for (size_t i = 0; i < an->n; i++) {
        arcal c;
        if (scenario_resolve(doc, an->vals[i], "models/allreduce", path, sizeof path, err))
            return -1;
        if (scenario_cached_load(cache, SCN_FILE_ALLREDUCE, path, &c, sizeof c, err))
            return scenario_subfile_error(an->vals[i], err);
        if (scenario_allreduce(s, c.tp))
            return cfg_error(an->vals[i], err,
                             "a second calibration for tp %ld, expected one per k", c.tp);
        scenario_position(an->vals[i], c.named_at, sizeof c.named_at);
        s->cals[s->n_cals++] = c;
    }
    return 0;
}

/* phases: FILE (phase.h): the file resolved as models/host/NAME.yaml, like the other files a
 * scenario names; a missing or bad file is reported at the line that names it. */
static int scenario_phase_file(cfg_doc *doc, const cfg_node *pn, phase_file *pf, tp_err *err)
{
    char path[SCN_PATH_MAX];
    if (scenario_resolve(doc, pn, "models/host", path, sizeof path, err)) return -1;
    if (phase_file_load(path, pf, err)) return scenario_subfile_error(pn, err);
    return 0;
}

/* The host-phase file's declarations, as scenario_splice_phases left them in the document
 * under the reserved key phases_declared.N {key, note, assumed}, each at the file's position:
 * read back at every bind without loading the file again (validate binds once per evaluation).
 * They become the scenario's own sourced: and assumed: entries, so validate reads them as the
 * scenario's and runs a sensitivity row for each assumed phase; a key the scenario also
 * declares or fits is refused, as a key declared twice in one file. */
static int scenario_bind_phase_decls(const cfg_node *root, scenario *s, tp_err *err)
{
    const cfg_node *pd = cfg_get(root, "phases_declared");
    if (!pd) return 0;
    for (size_t i = 0; i < pd->n; i++) {
        const cfg_node *e = pd->vals[i], *kn = cfg_get(e, "key"), *nn = cfg_get(e, "note");
        const cfg_node *an = cfg_get(e, "assumed");
        int line;
        if (!kn || !nn || !an) return cfg_error(e, err, "incomplete host-phase declaration");
        if (scnfit_declared(s, kn->text, &line))
            return tp_err_at(err, kn->file, kn->line, kn->col, "'%s' is also fitted or declared by "
                             "the scenario (%s line %d), expected each number declared once",
                             kn->text, s->path, line);
        if (s->n_decls == SCN_MAX_DECLS)
            return tp_err_at(err, kn->file, kn->line, kn->col, "more than %d sourced and assumed "
                             "entries", SCN_MAX_DECLS);
        scenario_decl *d = &s->decls[s->n_decls++];
        memset(d, 0, sizeof *d);
        snprintf(d->key, sizeof d->key, "%s", kn->text);
        snprintf(d->note, sizeof d->note, "%s", nn->text);
        d->assumed = an->text[0] == '1';
        d->line = kn->line;
        d->col = kn->col;
        snprintf(s->phases_path, sizeof s->phases_path, "%s", kn->file);
    }
    return 0;
}

/* phases: FILE (a host-phase file) or engine: FILE (an engine file, phase.h) writes the file's
 * values into host.phases before the measured file and --set (so both still override a phase),
 * each at its position in the file, and its declarations under the reserved root key
 * phases_declared (scenario_bind_phase_decls), which neither the scenario nor --set may write.
 * An engine file also writes execution.host_phases (a --set still overrides it) and its name,
 * path and graph mode under the reserved key engine_declared (scenario_bind_engine). A scenario
 * that names a file and also writes host.phases (or, with an engine, execution.host_phases) is
 * refused: one host model, stated once; so is one that names both keys. A --set of phases or
 * engine itself (another host model) is applied first, so it names the file spliced. */
static int scenario_splice_phases(cfg_doc *doc, const char *const *sets, int n_sets, tp_err *err)
{
    for (int i = 0; i < n_sets; i++) {
        if (!strncmp(sets[i], "phases_declared", 15) || !strncmp(sets[i], "engine_declared", 15))
            return tp_err_at(err, "--set", i + 1, 1, "%.15s is tpsim's own record of an engine "
                             "or host-phase file, expected engine=FILE or phases=FILE instead",
                             sets[i]);
        if ((!strncmp(sets[i], "phases=", 7) || !strncmp(sets[i], "engine=", 7)) &&
            cfg_set(doc, sets[i], i + 1, err))
            return -1;
    }
    cfg_node *r = cfg_root(doc), *pn = cfg_get(r, "phases"), *en = cfg_get(r, "engine");
    cfg_node *host = cfg_get(r, "host"), *exec = cfg_get(r, "execution"), *inl;
    if ((inl = cfg_get(r, "phases_declared")) || (inl = cfg_get(r, "engine_declared")))
        return cfg_error(inl, err, "a key tpsim keeps for itself, expected engine: FILE (or "
                         "phases: FILE) and the file's own sourced: and assumed: lists");
    if (pn && en)
        return cfg_error(pn, err, "the scenario names an engine (engine:, line %d) and a "
                         "host-phase file, expected one of them (an engine file holds the "
                         "phases)", en->line);
    if (en) pn = en;
    if (!pn) return 0;
    if (host && host->kind == CFG_MAP && (inl = cfg_get(host, "phases")))
        return cfg_error(inl, err, "the scenario names a host-phase file (phases:, %s:%d) and "
                         "writes host.phases too, expected one of them", pn->file, pn->line);
    phase_file *pf = malloc(sizeof *pf);
    if (!pf) return tp_err_set(err, "out of memory");
    int rc = scenario_phase_file(doc, pn, pf, err);
    if (!rc && en && !pf->engine)
        rc = cfg_error(en, err, "%s is a host-phase file, expected an engine file (kind: engine) "
                       "or phases: %s", pf->path, en->text);
    if (!rc && !en && pf->engine)
        rc = cfg_error(pn, err, "%s is an engine file, expected engine: %s", pf->path, pn->text);
    if (!rc && en && exec && exec->kind == CFG_MAP && (inl = cfg_get(exec, "host_phases")))
        rc = cfg_error(inl, err, "the engine (engine:, %s:%d) says how its phases meet the GPU, "
                       "expected no execution.host_phases here (--set overrides it)", en->file,
                       en->line);
    char assign[sizeof pf->items[0].key + sizeof pf->decls[0].note + 32];
    for (int i = 0; !rc && i < pf->n_items; i++) {
        snprintf(assign, sizeof assign, "%s=%s", pf->items[i].key, pf->items[i].text);
        rc = cfg_set_at(doc, assign, pf->path, pf->items[i].line, pf->items[i].col, err);
    }
    for (int i = 0; !rc && i < pf->n_decls; i++) {
        const phase_decl *d = &pf->decls[i];
        static const char *const field[] = {"key", "note", "assumed"};
        const char *value[] = {d->key, d->note, d->assumed ? "1" : "0"};
        for (int f = 0; !rc && f < 3; f++) {
            snprintf(assign, sizeof assign, "phases_declared.%d.%s=%s", i, field[f], value[f]);
            rc = cfg_set_at(doc, assign, pf->path, d->line, d->col, err);
        }
    }
    if (!rc && pf->engine) {
        const char *key[] = {"execution.host_phases", "engine_declared.name",
                             "engine_declared.path", "engine_declared.graph_mode"};
        const char *val[] = {phase_mode_name(pf->overlap), pf->name, pf->path,
                             phase_graph_mode_name(pf->graph_mode)};
        char big[SCN_PATH_MAX + 64];
        for (int i = 0; !rc && i < 4; i++) {
            snprintf(big, sizeof big, "%s=%s", key[i], val[i]);
            rc = cfg_set_at(doc, big, pf->path, pf->line, pf->col, err);
        }
    }
    free(pf);
    return rc;
}

/* The engine a spliced engine file left under engine_declared (scenario_splice_phases): its
 * name, path and CUDA-graph mode; none: the scenario's own host model ("custom"), full graphs. */
static int scenario_bind_engine(const cfg_node *root, scenario *s, tp_err *err)
{
    const cfg_node *e = cfg_get(root, "engine_declared"), *n, *p, *g;
    snprintf(s->engine, sizeof s->engine, "%s", SCN_ENGINE_CUSTOM);
    s->engine_path[0] = '\0';
    s->graph_default = PHASE_GRAPH_FULL;
    if (!e) return 0;
    if (!(n = cfg_get(e, "name")) || !(p = cfg_get(e, "path")) || !(g = cfg_get(e, "graph_mode")))
        return cfg_error(e, err, "incomplete engine declaration");
    snprintf(s->engine, sizeof s->engine, "%s", n->text);
    /* a bundled engine by its place in the tree (outputs do not depend on where it lives) */
    const char *at = strstr(p->text, "models/host/");
    while (at && strstr(at + 1, "models/host/")) at = strstr(at + 1, "models/host/");
    snprintf(s->engine_path, sizeof s->engine_path, "%s", at ? at : p->text);
    snprintf(s->host_path, sizeof s->host_path, "%s", p->text); /* as read (domain.h) */
    s->graph_default = !strcmp(g->text, "piecewise") ? PHASE_GRAPH_PIECEWISE : PHASE_GRAPH_FULL;
    return 0;
}

/* defaults: the cell and run length a command uses unless its flags say otherwise */
static int scenario_bind_defaults(const cfg_node *r, scenario *s, tp_err *err)
{
    cfg_node *n;
    long seed = 1;
    if ((n = cfg_get(r, "defaults")) &&
        (cfg_expect_map(n, defaults_keys, err) || cfg_long(n, "tp", 0, 1, 1024, &s->tp, err) ||
         cfg_long(n, "batch", 0, 1, 1 << 20, &s->batch, err) ||
         cfg_long(n, "ctx", 0, 1, 1 << 24, &s->ctx, err) ||
         cfg_long(n, "steps", 0, 1, 1000000, &s->steps, err) ||
         cfg_long(n, "warmup", 0, 0, 1000000, &s->warmup, err) ||
         cfg_long(n, "seed", 0, 0, 0x7fffffffL, &seed, err)))
        return -1;
    s->seed = (uint64_t)seed;
    return 0;
}

/* program: what the step runs besides the layers (prog.h's options) */
static int scenario_bind_program(const cfg_node *r, scenario *s, tp_err *err)
{
    cfg_node *n;
    if ((n = cfg_get(r, "program")) &&
        (cfg_expect_map(n, program_keys, err) ||
         cfg_bool(n, "embedding_allreduce", 0, &s->program.embedding_allreduce, err) ||
         cfg_bool(n, "logits_gather", 0, &s->program.logits_gather, err) ||
         cfg_long(n, "input_copies", 0, 0, 1000, &s->program.input_copies, err) ||
         cfg_long(n, "sampling_kernels", 0, 0, 1000, &s->program.sampling_kernels, err) ||
         cfg_bool(n, "allreduce_copy_out", 0, &s->program.allreduce_copy_out, err)))
        return -1;
    return 0;
}

/* execution: eager or CUDA graphs, the graph replay costs, how host phases overlap */
static int scenario_bind_exec(const cfg_node *r, scenario *s, tp_err *err)
{
    cfg_node *n;
    /* CUDA-graph replay costs unless the scenario says otherwise: ~15 us per
     * cudaGraphLaunch and ~0.6 us per node (docs/sources.md#host-costs) */
    s->graph_launch = dist_const(15e-6);
    s->graph_node_s = 0.6e-6;
    if ((n = cfg_get(r, "execution"))) {
        /* vLLM's cudagraph_mode for a decode step: none (eager), FULL, PIECEWISE; graphs is
         * the engine's own (engine_declared.graph_mode; full without an engine) */
        static const char *const modes[] = {"eager", "graphs", "full", "piecewise", NULL};
        cfg_node *m = cfg_get(n, "mode");
        double node_us = s->graph_node_s * 1e6;
        int mode = 0;
        if (cfg_expect_map(n, exec_keys, err) || (m && cfg_as_choice(m, modes, &mode, err)) ||
            (cfg_get(n, "graph_launch") &&
             scenario_dist(n, "graph_launch", &s->graph_launch, err)) ||
            cfg_double(n, "graph_node_us", 0, 0, 1e6, &node_us, err))
            return -1;
        static const char *const overlap[] = {"serialised", "overlapped", NULL};
        cfg_node *hp = cfg_get(n, "host_phases");
        if (hp && cfg_as_choice(hp, overlap, &s->phases.overlap, err)) return -1;
        s->graph_node_s = node_us * 1e-6;
        s->graphs = mode != 0;
        s->piecewise = mode == 3 || (mode == 1 && s->graph_default == PHASE_GRAPH_PIECEWISE);
    }
    return 0;
}

/* collective: the all-reduce model; calibration_from: the hardware whose calibration is borrowed */
static int scenario_bind_collective(const cfg_node *r, scenario *s, tp_err *err)
{
    cfg_node *n;
    if ((n = cfg_get(r, "collective"))) {
        cfg_node *m;
        int model = 0;
        if (cfg_expect_map(n, collective_keys, err) || !(m = cfg_need(n, "allreduce", err)) ||
            cfg_as_choice(m, coll_model_names, &model, err))
            return -1;
        s->allreduce_model = (coll_model)model;
    }
    const char *from = NULL;
    if (cfg_string(r, "calibration_from", 0, &from, err)) return -1;
    if (from && (!from[0] || strlen(from) >= sizeof s->calibration_from))
        return cfg_error(cfg_get(r, "calibration_from"), err,
                         "expected the hardware name a calibration file states (hardware:)");
    if (from) snprintf(s->calibration_from, sizeof s->calibration_from, "%s", from);
    return 0;
}

int scenario_bind(cfg_doc *doc, scenario *out, tp_err *err)
{
    return scenario_bind_cached(doc, NULL, out, err);
}

/* The whole bind into *ps (zeroed first); on a failure ps holds what was bound so far. */
static int scenario_bind_into(cfg_doc *doc, scenario_cache *cache, scenario *ps, tp_err *err)
{
    memset(ps, 0, sizeof *ps);
    cfg_node *r = cfg_root(doc), *n;
    const char *name, *desc;
    double offset_ms = 0;
    snprintf(ps->path, sizeof ps->path, "%s", cfg_file(doc));
    ps->tp = 1, ps->batch = 1, ps->ctx = 2048, ps->steps = 20, ps->warmup = 1;
    /* vLLM's step unless the scenario says otherwise (docs/sources.md#vllm-eager-step): the
     * embedding all-reduce and logits gather at k > 1, ~6-10 input copies, ~6 greedy sampler
     * kernels */
    ps->program = (prog_opts){.embedding_allreduce = 1, .logits_gather = 1, .input_copies = 8,
                             .sampling_kernels = 6};
    if (cfg_expect_map(r, scenario_keys, err) ||
        cfg_string_fits(r, "name", 1, sizeof ps->name, &name, err) ||
        cfg_string(r, "description", 0, &desc, err) ||
        cfg_source(r, 0, err) || scenario_bind_files(doc, r, cache, ps, err) ||
        measured_bind(doc, &ps->measured, err))
        return -1;
    snprintf(ps->name, sizeof ps->name, "%s", name);
    if (scenario_bind_defaults(r, ps, err)) return -1;
    if (scenario_bind_gpu(cfg_get(r, "gpu"), ps, err)) return -1;
    if (scenario_bind_program(r, ps, err)) return -1;
    if ((n = cfg_get(r, "precision")) && scenario_bind_precision(n, ps, err)) return -1;
    /* FP8 weights run W8A8 on the FP8 tensor cores where the GPU has them (vLLM's
     * Fp8LinearMethod), else weight-only (Marlin W8A16) */
    ps->program.w8a8 = ps->hw.fp8_peak_flops > 0;
    if (!(n = cfg_need(r, "host", err)) || scenario_bind_host(n, ps, err)) return -1;
    if (scenario_bind_engine(r, ps, err) || scenario_bind_exec(r, ps, err)) return -1;
    if (cfg_double(r, "offset_ms", 0, -1e6, 1e6, &offset_ms, err)) return -1;
    ps->offset_s = offset_ms * 1e-3;
    if ((n = cfg_get(r, "fit")) && scnfit_bind_fit(r, n, ps, err)) return -1;
    if ((n = cfg_get(r, "validated")) && scnfit_bind_domain(n, &ps->domain, err)) return -1;
    if (scenario_bind_collective(r, ps, err)) return -1;
    if (((n = cfg_get(r, "sourced")) && scnfit_bind_decls(r, n, 0, ps, err)) ||
        ((n = cfg_get(r, "assumed")) && scnfit_bind_decls(r, n, 1, ps, err)) ||
        scenario_bind_phase_decls(r, ps, err))
        return -1;
    if (!ps->host_path[0]) snprintf(ps->host_path, sizeof ps->host_path, "%s", ps->phases_path);
    return 0;
}

int scenario_bind_cached(cfg_doc *doc, scenario_cache *cache, scenario *out, tp_err *err)
{
    scenario s;
    if (scenario_bind_into(doc, cache, &s, err)) {
        scenario_free(&s);
        return -1;
    }
    memcpy(out, &s, sizeof s); /* every byte, padding too: two binds compare equal */
    return 0;
}

void scenario_free(scenario *s)
{
    kcal_free(&s->kernels);
}

cfg_doc *scenario_open(const char *path, const char *const *sets, int n_sets, tp_err *err)
{
    return scenario_open_measured(path, NULL, sets, n_sets, err);
}

cfg_doc *scenario_open_measured(const char *path, const char *measured, const char *const *sets,
                                int n_sets, tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return NULL;
    /* scenario < phase file < measured < --set */
    if (scenario_splice_phases(doc, sets, n_sets, err) ||
        measured_open(doc, measured, sets, n_sets, err)) {
        cfg_free(doc);
        return NULL;
    }
    for (int i = 0; i < n_sets; i++)
        if (cfg_set(doc, sets[i], i + 1, err)) {
            cfg_free(doc);
            return NULL;
        }
    return doc;
}

int scenario_load(const char *path, const char *const *sets, int n_sets, scenario *out,
                  tp_err *err)
{
    cfg_doc *doc = scenario_open(path, sets, n_sets, err);
    if (!doc) return -1;
    int rc = scenario_bind(doc, out, err);
    cfg_free(doc);
    return rc;
}

const char *scenario_graph_mode(const scenario *s, int graphs)
{
    return !graphs ? "eager" : s->piecewise ? "piecewise" : "full";
}

const arcal *scenario_allreduce(const scenario *s, long tp)
{
    for (int i = 0; i < s->n_cals; i++)
        if (s->cals[i].tp == tp) return &s->cals[i];
    return NULL;
}

int scenario_calibration(const scenario *s, long tp, const arcal **out, const char **how_borrowed,
                         tp_err *err)
{
    const arcal *c = scenario_allreduce(s, tp);
    *out = c;
    *how_borrowed = NULL;
    if (!c || hw_same(&s->hw, c->hardware)) return 0;
    if (s->calibration_from[0] && hw_name_eq(c->hardware, s->calibration_from)) {
        *how_borrowed = "calibration_from";
        return 0;
    }
    if (s->allow_foreign_calib) {
        *how_borrowed = "--allow-foreign-calib";
        return 0;
    }
    char names[400];
    hw_names(&s->hw, names, sizeof names);
    return tp_err_set(err, "%s: the tp %ld all-reduce calibration was measured on %s, the scenario "
                      "runs on %s; expected a calibration for that GPU, or calibration_from: %s in "
                      "the scenario, or --allow-foreign-calib", c->named_at, tp, c->hardware,
                      names, c->hardware);
}

int scenario_check_measured(const scenario *s, const char **how_borrowed, tp_err *err)
{
    const measured_cal *m = &s->measured;
    *how_borrowed = NULL;
    if (!m->path[0] || (!m->device[0] && !m->hardware[0])) return 0;
    char stem[128];
    const char *who = m->device;
    if (!who[0]) { /* the hardware file's name: models/hw/b200.yaml is b200 */
        const char *base = strrchr(m->hardware, '/');
        base = base ? base + 1 : m->hardware;
        snprintf(stem, sizeof stem, "%.*s", (int)strcspn(base, "."), base);
        who = stem;
    }
    if (hw_same(&s->hw, who)) return 0;
    if (s->calibration_from[0] && hw_name_eq(who, s->calibration_from)) {
        *how_borrowed = "calibration_from";
        return 0;
    }
    if (s->allow_foreign_calib) {
        *how_borrowed = "--allow-foreign-calib";
        return 0;
    }
    char names[400];
    hw_names(&s->hw, names, sizeof names);
    return tp_err_at(err, m->path, m->hw_line, m->hw_col,
                     "the trace calibration was measured on "
                     "%s, the scenario runs on %s; expected a trace of that GPU, or "
                     "calibration_from: %s in the scenario, or --allow-foreign-calib",
                     who, names, who);
}

int scenario_kernels(const scenario *s, const kcal **out, const char **how_borrowed, tp_err *err)
{
    *out = s->has_kernels ? &s->kernels : NULL;
    *how_borrowed = NULL;
    if (!*out || hw_same(&s->hw, s->kernels.hardware)) return 0; /* id, name or alias */
    if (s->calibration_from[0] && hw_name_eq(s->kernels.hardware, s->calibration_from)) {
        *how_borrowed = "calibration_from";
        return 0;
    }
    if (s->allow_foreign_calib) {
        *how_borrowed = "--allow-foreign-calib";
        return 0;
    }
    return tp_err_set(err, "%s: the kernel calibration was measured on %s, the scenario runs on "
                      "%s; expected a calibration for %s, or calibration_from: %s in the scenario, "
                      "or --allow-foreign-calib", s->kernels.named_at, s->kernels.hardware,
                      s->hw.name, s->hw.name, s->kernels.hardware);
}

int scenario_pick_kernels(scenario *s, tp_err *err)
{
    const kcal *k;
    const char *how;
    tp_err foreign = {{0}};
    if (!s->has_kernels || (!scenario_kernels(s, &k, &how, &foreign) && !how)) return 0;
    if (s->calibration_from[0] && hw_name_eq(s->kernels.hardware, s->calibration_from))
        return 0; /* borrowed by the scenario's own word */
    char path[1][HW_PATH_MAX];
    if (hw_measured_files(&s->hw, "models/kernels", path, 1) != 1) return 0;
    kcal own = {0};
    if (kcal_load(path[0], &own, err)) return -1;
    snprintf(own.named_at, sizeof own.named_at, "%.200s (measured on %.40s, for %.40s)", path[0],
             own.hardware, s->hw.name);
    kcal_free(&s->kernels);
    s->kernels = own;
    return 0;
}

int scenario_pick_allreduce(scenario *s, tp_err *err)
{
    char(*paths)[HW_PATH_MAX] = malloc(LOCATE_MAX_NAMES * sizeof *paths);
    if (!paths) return tp_err_set(err, "out of memory");
    int n = hw_measured_files(&s->hw, "models/allreduce", paths, LOCATE_MAX_NAMES), rc = 0;
    for (int i = 0; i < s->n_cals && !rc; i++) {
        arcal *c = &s->cals[i];
        if (s->cal_from_flag[i] || hw_same(&s->hw, c->hardware)) continue; /* --calib: its word */
        if (s->calibration_from[0] && hw_name_eq(c->hardware, s->calibration_from)) continue;
        for (int j = 0; j < n; j++) { /* by name: the first file of this TP degree */
            arcal own;
            tp_err ignored = {{0}};
            if (arcal_load(paths[j], &own, &ignored) || own.tp != c->tp) continue;
            snprintf(own.named_at, sizeof own.named_at, "%.200s (measured on %.40s, for %.40s)",
                     paths[j], own.hardware, s->hw.name);
            *c = own;
            break;
        }
    }
    free(paths);
    return rc;
}

int scenario_add_allreduce(scenario *s, const char *path, tp_err *err)
{
    arcal c;
    if (arcal_load(path, &c, err)) return -1;
    snprintf(c.named_at, sizeof c.named_at, "--calib %s", path);
    for (int i = 0; i < s->n_cals; i++)
        if (s->cals[i].tp == c.tp) {
            s->cals[i] = c;
            s->cal_from_flag[i] = 1;
            return 0;
        }
    if (s->n_cals == SCN_MAX_CALS) return tp_err_set(err, "%s: too many calibrations", path);
    s->cal_from_flag[s->n_cals] = 1;
    s->cals[s->n_cals++] = c;
    return 0;
}

int scenario_check_flag_calibs(const scenario *s, const long *tps, int n, tp_err *err)
{
    for (int i = 0; i < s->n_cals; i++) {
        if (!s->cal_from_flag[i]) continue;
        int used = 0;
        char list[160] = "";
        size_t len = 0;
        for (int j = 0; j < n; j++) {
            used |= tps[j] == s->cals[i].tp;
            if (len < sizeof list) {
                int w = snprintf(list + len, sizeof list - len, "%s%ld", j ? ", " : "", tps[j]);
                if (w > 0) len += (size_t)w;
            }
        }
        if (!used)
            return tp_err_set(err, "%s: a calibration for tp %ld, but this runs tp %s; expected a "
                              "file measured at the TP degree it runs (its tp: key)",
                              s->cals[i].named_at, s->cals[i].tp, list);
    }
    return 0;
}
