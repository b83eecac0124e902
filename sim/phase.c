/* phase.c: see phase.h. */
#include "phase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const phase_names[PHASE_N + 1] = {"schedule", "broadcast", "prepare_inputs",
                                              "sampler_sync", "output_processing", NULL};

dist phase_at(const phase_model *m, int i, long batch)
{
    const dist *b = &m->base[i];
    return dist_make(b->kind, b->mean + m->per_seq_s[i] * (double)batch, b->cv);
}

void phase_fill(const phase_model *m, long batch, engine_host *h)
{
    for (int i = 0; i < PHASE_N; i++) h->phases[i] = phase_at(m, i, batch);
}

double phase_total_s(const phase_model *m, long batch)
{
    double t = 0;
    for (int i = 0; i < PHASE_N; i++) t += m->base[i].mean + m->per_seq_s[i] * (double)batch;
    return t;
}

const char *phase_mode_name(int overlap) { return overlap ? "overlapped" : "serialised"; }

const char *phase_graph_mode_name(int mode)
{
    return mode == PHASE_GRAPH_PIECEWISE ? "piecewise" : "full";
}

/* ------------------------------------------------------------- host-phase files ---- */

static const char *const pf_root_keys[] = {"kind", "name", "description", "source", "phases",
                                           "sourced", "assumed", "vllm", "host_phases",
                                           "graph_mode", NULL};
/* the keys only an engine file has */
static const char *const pf_engine_keys[] = {"vllm", "host_phases", "graph_mode", NULL};
static const char *const pf_phase_keys[] = {"dist", "mean_us", "cv", "per_seq_us", NULL};

static int pf_is_number(const cfg_node *n)
{
    if (n->kind != CFG_SCALAR || n->quoted || !n->text[0]) return 0;
    char *end;
    strtod(n->text, &end);
    return *end == '\0';
}

/* The phases map: known names and keys only, scalars only; each becomes an item. */
static int pf_items(const cfg_node *ph, phase_file *out, tp_err *err)
{
    if (cfg_expect_map(ph, phase_names, err)) return -1;
    if (ph->n == 0) return cfg_error(ph, err, "no phase, expected at least one of schedule, "
                                     "broadcast, prepare_inputs, sampler_sync, output_processing");
    for (size_t i = 0; i < ph->n; i++) {
        const cfg_node *p = ph->vals[i];
        if (cfg_expect_map(p, pf_phase_keys, err) || !cfg_need(p, "dist", err)) return -1;
        for (size_t j = 0; j < p->n; j++) {
            const cfg_node *v = p->vals[j];
            if (v->kind != CFG_SCALAR) return cfg_error(v, err, "expected a scalar");
            if (strlen(v->text) >= sizeof out->items[0].text)
                return cfg_error(v, err, "too long, expected a number or a dist name");
            phase_item *it = &out->items[out->n_items++];
            snprintf(it->key, sizeof it->key, "host.phases.%s.%s", ph->keys[i], p->keys[j]);
            snprintf(it->text, sizeof it->text, "%s", v->text);
            it->line = v->line;
            it->col = v->col;
        }
    }
    return 0;
}

/* sourced: / assumed:, each entry naming one number under phases, once. */
static int pf_decls(const cfg_node *root, int assumed, phase_file *out, tp_err *err)
{
    static const char *const src_keys[] = {"key", "source", NULL};
    static const char *const why_keys[] = {"key", "why", NULL};
    const char *field = assumed ? "why" : "source";
    const cfg_node *list = cfg_get(root, assumed ? "assumed" : "sourced");
    if (!list) return 0;
    if (list->kind != CFG_SEQ) return cfg_error(list, err, "expected a list of {key, %s}", field);
    if (out->n_decls + list->n > PHASE_FILE_ITEMS) /* each names one of the numbers, once */
        return cfg_error(list, err, "%zu declarations, expected at most %d in all (one per number "
                         "under phases)", out->n_decls + list->n, PHASE_FILE_ITEMS);
    for (size_t i = 0; i < list->n; i++) {
        const cfg_node *e = list->vals[i], *kn;
        const char *key, *note;
        if (cfg_expect_map(e, assumed ? why_keys : src_keys, err) ||
            cfg_string(e, "key", 1, &key, err) || cfg_string(e, field, 1, &note, err))
            return -1;
        kn = cfg_get(e, "key");
        const cfg_node *v = strncmp(key, "phases.", 7) ? NULL : cfg_find(root, key);
        if (!v || !pf_is_number(v))
            return cfg_error(kn, err, "'%s' names no number under phases, expected a dotted key "
                             "like phases.schedule.mean_us", key);
        if (!note[0] || strlen(note) >= sizeof out->decls[0].note)
            return cfg_error(cfg_get(e, field), err, "expected 1 to %zu characters",
                             sizeof out->decls[0].note - 1);
        char skey[sizeof out->decls[0].key];
        snprintf(skey, sizeof skey, "host.%s", key);
        for (int d = 0; d < out->n_decls; d++)
            if (!strcmp(out->decls[d].key, skey))
                return cfg_error(kn, err, "'%s' is already declared (line %d), expected each "
                                 "number declared once", key, out->decls[d].line);
        phase_decl *d = &out->decls[out->n_decls++];
        snprintf(d->key, sizeof d->key, "%s", skey);
        snprintf(d->note, sizeof d->note, "%s", note);
        d->assumed = assumed;
        d->line = kn->line;
        d->col = kn->col;
    }
    return 0;
}

/* Every number under phases is sourced or assumed: the file is the model's provenance. */
static int pf_all_declared(const cfg_node *root, const phase_file *out, tp_err *err)
{
    for (int i = 0; i < out->n_items; i++) {
        const cfg_node *v = cfg_find(root, out->items[i].key + 5); /* "host." dropped */
        int seen = !pf_is_number(v);
        for (int d = 0; d < out->n_decls && !seen; d++)
            seen = !strcmp(out->decls[d].key, out->items[i].key);
        if (!seen)
            return cfg_error(v, err, "a number neither sourced nor assumed, expected it under "
                             "sourced: {key: %s, source} or assumed: {key: %s, why}",
                             out->items[i].key + 5, out->items[i].key + 5);
    }
    return 0;
}

/* An engine file's own keys: its name, how its phases meet the GPU, its CUDA-graph mode. */
static int pf_engine(const cfg_node *r, phase_file *out, tp_err *err)
{
    static const char *const overlap[] = {"serialised", "overlapped", NULL};
    static const char *const graph[] = {"full", "piecewise", NULL};
    const char *name, *ver;
    const cfg_node *hp, *gm;
    if (cfg_string_fits(r, "name", 1, sizeof out->name, &name, err) ||
        cfg_string(r, "vllm", 0, &ver, err) || !(hp = cfg_need(r, "host_phases", err)) ||
        cfg_as_choice(hp, overlap, &out->overlap, err) || !(gm = cfg_need(r, "graph_mode", err)) ||
        cfg_as_choice(gm, graph, &out->graph_mode, err))
        return -1;
    if (!name[0] || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-._") != strlen(name))
        return cfg_error(cfg_get(r, "name"), err, "'%s', expected a name of lower-case letters, "
                         "digits, '-', '.' and '_' (every output prints it)", name);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->line = hp->line;
    out->col = hp->col;
    return 0;
}

int phase_file_load(const char *path, phase_file *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (strlen(path) >= sizeof out->path) return tp_err_set(err, "%s: path too long", path);
    snprintf(out->path, sizeof out->path, "%s", path);
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    cfg_node *r = cfg_root(doc), *ph;
    const char *kind, *text;
    int rc = -1;
    if (cfg_expect_map(r, pf_root_keys, err) || cfg_string(r, "kind", 1, &kind, err) ||
        cfg_string(r, "name", 0, &text, err) || cfg_string(r, "description", 0, &text, err) ||
        cfg_source(r, 0, err))
        goto out;
    out->engine = !strcmp(kind, "engine");
    if (strcmp(kind, "host-phases") && !out->engine) {
        cfg_error(cfg_get(r, "kind"), err, "'%s', expected host-phases (a file of per-step host "
                  "phases) or engine (a vLLM engine's host model, sim/phase.h)", kind);
        goto out;
    }
    for (int i = 0; !out->engine && pf_engine_keys[i]; i++)
        if (cfg_get(r, pf_engine_keys[i])) {
            cfg_error(cfg_get(r, pf_engine_keys[i]), err, "'%s' belongs to an engine file, "
                      "expected kind: engine or no %s", pf_engine_keys[i], pf_engine_keys[i]);
            goto out;
        }
    if (out->engine && pf_engine(r, out, err)) goto out;
    if (!(ph = cfg_need(r, "phases", err)) || pf_items(ph, out, err) || pf_decls(r, 0, out, err) ||
        pf_decls(r, 1, out, err) || pf_all_declared(r, out, err))
        goto out;
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}
