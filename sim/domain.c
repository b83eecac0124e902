/* domain.c: see domain.h. */
#define _XOPEN_SOURCE 700 /* realpath (XSI) */
#include "domain.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll.h"
#include "phase.h"
#include "prec.h"

/* the note a hand-written block's statement ends with */
#define DOM_HAND_NOTE " (hand-written, not by tpsim validate --write-domain)"

static void dom_mark(domain_report *r, const char *fmt, ...)
{
    if (r->n_marks == DOMAIN_MAX_MARKS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->marks[r->n_marks++], DOMAIN_MARK_MAX, fmt, ap);
    va_end(ap);
    r->inside = 0;
}

/* A precision by name: a format the scenario chose, else the model's published quantisation,
 * else its dtype by width. */
static const char *dom_prec_name(int kind, long dtype_bytes)
{
    switch (kind) {
    case PREC_BF16: return "bf16";
    case PREC_FP8: return "fp8";
    case PREC_INT4: return "int4";
    default: break;
    }
    switch (dtype_bytes) {
    case 1: return "fp8";
    case 4: return "fp32";
    case 8: return "fp64";
    default: return "bf16"; /* a 16-bit model: vLLM serves it in bf16 */
    }
}

void domain_precision(const scenario *s, char weights[8], char kv_cache[8])
{
    int w = s->program.prec_weights ? s->program.prec_weights : s->model.weights_quant;
    snprintf(weights, 8, "%s", dom_prec_name(w, s->model.dtype_bytes));
    snprintf(kv_cache, 8, "%s", dom_prec_name(s->program.prec_kv_cache, s->model.dtype_bytes));
}

void domain_check(const scenario *s, const domain_cell *c, domain_report *out)
{
    const scenario_domain *d = &s->domain;
    memset(out, 0, sizeof *out);
    out->inside = 1;
    if (!d->present) {
        dom_mark(out, "this scenario was never validated");
        return;
    }
    int tp_ok = 0;
    char tps[96] = "";
    for (int i = 0; i < d->n_tp; i++) {
        tp_ok |= d->tp[i] == c->tp;
        size_t len = strlen(tps);
        snprintf(tps + len, sizeof tps - len, "%s%ld", i ? ", " : "", d->tp[i]);
    }
    if (!tp_ok) dom_mark(out, "TP-%ld is outside the validated TP {%s}", c->tp, tps);
    if (c->graphs && !d->graphs) dom_mark(out, "graph mode was never validated");
    if (!c->graphs && !d->eager) dom_mark(out, "eager mode was never validated");
    if (c->batch < d->batch_lo || c->batch > d->batch_hi)
        dom_mark(out, "batch %ld is outside the validated batch %ld..%ld", c->batch, d->batch_lo,
                 d->batch_hi);
    if (c->ctx < d->ctx_lo || c->ctx > d->ctx_hi)
        dom_mark(out, "context %ld is outside the validated context %ld..%ld", c->ctx, d->ctx_lo,
                 d->ctx_hi);
    /* a name as hardware files match it (hw.h: case and punctuation folded); on the scenario's
     * own GPU its id and aliases count too (validated: {hardware: h100-sxm}) */
    int same_hw = !c->hardware || hw_name_eq(c->hardware, d->hardware) ||
                  (hw_name_eq(c->hardware, s->hw.name) && hw_same(&s->hw, d->hardware));
    if (!same_hw)
        dom_mark(out, "%s was never validated (only %s)", c->hardware, d->hardware);
    /* the model by its name, case folded (a --model or --set model= run is another model) */
    if (c->model && strcasecmp(c->model, d->model))
        dom_mark(out, "model %s was never validated (only %s)", c->model, d->model);
    /* the serving engine that prices the cell, the scenario's, by its name (a --set engine=
     * run is another host model) */
    if (d->engine[0] && strcmp(s->engine, d->engine))
        dom_mark(out, "engine %s was never validated (only %s)", s->engine, d->engine);
    if (!d->written) {
        dom_mark(out, "the validated: block was not written by tpsim validate --write-domain");
        return;
    }
    /* every other input that changes a prediction, as validate ran it */
    char w[8], kv[8];
    domain_precision(s, w, kv);
    if (strcmp(w, d->weights))
        dom_mark(out, "weights in %s were never validated (only %s)", w, d->weights);
    if (strcmp(kv, d->kv_cache))
        dom_mark(out, "a KV cache in %s was never validated (only %s)", kv, d->kv_cache);
    const char *coll = coll_model_names[s->allreduce_model];
    if (strcmp(coll, d->allreduce))
        dom_mark(out, "all-reduce model %s was never validated (only %s)", coll, d->allreduce);
    const char *hp = phase_mode_name(s->phases.overlap);
    if (strcmp(hp, d->host_phases))
        dom_mark(out, "%s host phases were never validated (only %s)", hp, d->host_phases);
    const char *gm = scenario_graph_mode(s, 1);
    if (c->graphs && d->graphs && d->graph_mode[0] && strcmp(gm, d->graph_mode))
        dom_mark(out, "%s graphs were never validated (only %s)", gm, d->graph_mode);
    if (s->queue_depth != d->queue_depth)
        dom_mark(out, "queue depth %ld was never validated (only %ld)", s->queue_depth,
                 d->queue_depth);
    for (int i = 0; s->input_marks.checked && i < s->input_marks.n; i++)
        dom_mark(out, "%s", s->input_marks.marks[i]);
}

/* ---- the files ----------------------------------------------------------------------- */

/* The folder part of path ("." when none) into out. */
static void dom_dir(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, cap, ".");
    else if (slash == path) snprintf(out, cap, "/");
    else snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

int domain_relpath(const char *scenario_path, const char *file, char *out, size_t cap)
{
    char dir[PATH_MAX];
    dom_dir(scenario_path, dir, sizeof dir);
    char *from = realpath(dir, NULL), *to = realpath(file, NULL);
    int rc = -1;
    if (!from || !to) goto out;
    /* the longest common run of whole folders, then one ".." per folder of from left */
    size_t common = 0, i = 0;
    for (; from[i] && from[i] == to[i]; i++)
        if (from[i] == '/') common = i;
    if (!from[i] && (to[i] == '/' || !to[i])) common = i; /* from is a folder above to */
    if (!strcmp(from, "/")) common = 0, from[0] = '\0';  /* the root: no folder to climb */
    size_t len = 0;
    for (const char *p = from + common; *p; p++)
        if (*p == '/') {
            int k = snprintf(out + len, cap - len, "../");
            if (k < 0 || (size_t)k >= cap - len) goto out;
            len += (size_t)k;
        }
    const char *rest = to + common + (to[common] == '/');
    int k = snprintf(out + len, cap - len, "%s", rest);
    if (k < 0 || (size_t)k >= cap - len) goto out;
    rc = 0;
out:
    free(from);
    free(to);
    return rc;
}

/* What a file is to the scenario: which of the block's names it follows (domain_inputs_check
 * compares a file's presence only where the names agree). */
enum { DOM_OWN, DOM_MODEL, DOM_HW, DOM_ENGINE };

/* One file into the list (once): its path relative to the scenario and its fingerprint. */
static int dom_add(const scenario *s, scenario_cache *cache, const char *path, int tree, int role,
                   scenario_input *out, int *roles, int cap, int *n, tp_err *err)
{
    if (!path[0]) return 0;
    scenario_input x;
    if (domain_relpath(s->path, path, x.path, sizeof x.path))
        return tp_err_set(err, "%s: cannot resolve its path relative to %s", path, s->path);
    for (int i = 0; i < *n; i++)
        if (!strcmp(out[i].path, x.path)) return 0;
    if (*n == cap)
        return tp_err_set(err, "%s: more than %d input files, expected at most that many", s->path,
                          cap);
    if (scenario_file_fp(cache, path, tree, x.fp, err)) return -1;
    roles[*n] = role;
    out[(*n)++] = x;
    return 0;
}

/* domain_inputs with each file's role (roles: cap entries). */
static int dom_inputs(const scenario *s, scenario_cache *cache, scenario_input *out, int *roles,
                      int cap, int *n, tp_err *err)
{
    *n = 0;
    if (dom_add(s, cache, s->path, 1, DOM_OWN, out, roles, cap, n, err) ||
        dom_add(s, cache, s->model_path, 0, DOM_MODEL, out, roles, cap, n, err) ||
        dom_add(s, cache, s->hw_path, 0, DOM_HW, out, roles, cap, n, err))
        return -1;
    if (s->has_kernels) {
        if (dom_add(s, cache, s->kernels.path, 0, DOM_HW, out, roles, cap, n, err)) return -1;
        for (int i = 0; i < s->kernels.n_grid_files; i++)
            if (dom_add(s, cache, s->kernels.grid_files[i], 0, DOM_HW, out, roles, cap, n, err))
                return -1;
    }
    for (int i = 0; i < s->n_cals; i++)
        if (dom_add(s, cache, s->cals[i].path, 0, DOM_HW, out, roles, cap, n, err)) return -1;
    return dom_add(s, cache, s->host_path, 0, DOM_ENGINE, out, roles, cap, n, err) ||
                   dom_add(s, cache, s->measured.path, 0, DOM_OWN, out, roles, cap, n, err)
               ? -1
               : 0;
}

int domain_inputs(const scenario *s, scenario_cache *cache, scenario_input *out, int cap, int *n,
                  tp_err *err)
{
    int *roles = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *roles);
    if (!roles) return tp_err_set(err, "out of memory");
    int rc = dom_inputs(s, cache, out, roles, cap, n, err);
    free(roles);
    return rc;
}

/* The paths joined by ", " after head into one mark, cut short with ", ..." past its room. */
static void dom_list_mark(scenario_input_marks *m, const char *head, const char *const *paths,
                          int n)
{
    if (!n || m->n == SCN_INPUT_MARKS) return;
    char *buf = m->marks[m->n++];
    size_t len = (size_t)snprintf(buf, SCN_INPUT_MARK_MAX, "%s", head);
    for (int i = 0; i < n; i++) {
        size_t need = strlen(paths[i]) + 2;
        if (len + need + 5 >= SCN_INPUT_MARK_MAX) {
            snprintf(buf + len, SCN_INPUT_MARK_MAX - len, ", ...");
            return;
        }
        len += (size_t)snprintf(buf + len, SCN_INPUT_MARK_MAX - len, "%s%s", i ? ", " : "",
                                paths[i]);
    }
}

static void dom_input_mark(scenario_input_marks *m, const char *fmt, ...)
{
    if (m->n == SCN_INPUT_MARKS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->marks[m->n++], SCN_INPUT_MARK_MAX, fmt, ap);
    va_end(ap);
}

/* The block's files and those read now, both lists in hand: the marks (domain.h). */
static void dom_compare(scenario *s, scenario_cache *cache, const scenario_input *now,
                        const int *roles, int n_now)
{
    const scenario_domain *d = &s->domain;
    scenario_input_marks *m = &s->input_marks;
    /* a file's presence is compared only where the names agree: on other hardware, another
     * model or engine, other files are expected, and that name's mark says so */
    int same_hw = hw_same(&s->hw, d->hardware) || hw_name_eq(s->hw.name, d->hardware);
    int same_model = !strcasecmp(s->model.name, d->model);
    int same_engine = !strcmp(s->engine, d->engine);
    const char *unread[SCN_DOMAIN_INPUTS], *unnamed[SCN_DOMAIN_INPUTS];
    int n_unread = 0, n_unnamed = 0;
    for (int i = 0; i < d->n_inputs; i++) {
        const scenario_input *v = &d->inputs[i];
        const scenario_input *x = NULL;
        for (int j = 0; j < n_now && !x; j++)
            if (!strcmp(now[j].path, v->path)) x = &now[j];
        char fp[FP_HEX] = "";
        if (!x && !strcmp(v->path, d->grid)) { /* the grid: the verdict rests on it */
            char at[SCN_PATH_MAX + SCN_DOMAIN_FILE_MAX + 2], dir[SCN_PATH_MAX];
            dom_dir(s->path, dir, sizeof dir);
            snprintf(at, sizeof at, "%s/%s", dir, v->path);
            tp_err ignored = {{0}};
            if (scenario_file_fp(cache, at, 0, fp, &ignored)) {
                dom_input_mark(m, "%s, the grid validated on, cannot be read now", v->path);
                continue;
            }
        } else if (!x) {
            unread[n_unread++] = v->path;
            continue;
        } else {
            snprintf(fp, sizeof fp, "%s", x->fp);
        }
        if (strcmp(fp, v->fp))
            dom_input_mark(m, "%s changed since validation (fingerprint %s, validated %s)",
                           v->path, fp, v->fp);
    }
    for (int j = 0; j < n_now; j++) {
        int named = 0;
        for (int i = 0; i < d->n_inputs && !named; i++)
            named = !strcmp(now[j].path, d->inputs[i].path);
        int expected = roles[j] == DOM_OWN || (roles[j] == DOM_MODEL && same_model) ||
                       (roles[j] == DOM_HW && same_hw) || (roles[j] == DOM_ENGINE && same_engine);
        if (!named && expected) unnamed[n_unnamed++] = now[j].path;
    }
    if (same_hw && same_model && same_engine)
        dom_list_mark(m, "validated with files not read now: ", unread, n_unread);
    dom_list_mark(m, "read but never validated: ", unnamed, n_unnamed);
}

int domain_inputs_check(scenario *s, scenario_cache *cache, tp_err *err)
{
    memset(&s->input_marks, 0, sizeof s->input_marks);
    s->input_marks.checked = 1;
    if (!s->domain.present || !s->domain.written) return 0;
    scenario_input *now = malloc(SCN_DOMAIN_INPUTS * sizeof *now);
    int *roles = malloc(SCN_DOMAIN_INPUTS * sizeof *roles), n = 0;
    if (!now || !roles) {
        free(now);
        free(roles);
        return tp_err_set(err, "out of memory");
    }
    tp_err why = {{0}};
    if (dom_inputs(s, cache, now, roles, SCN_DOMAIN_INPUTS, &n, &why) == 0)
        dom_compare(s, cache, now, roles, n);
    else /* a file read at the load and unreadable now, or too many: said, not refused */
        dom_input_mark(&s->input_marks, "its inputs cannot be compared with those validated: %s",
                       why.msg);
    free(now);
    free(roles);
    return 0;
}

/* ---- the statements ------------------------------------------------------------------ */

/* The statement up to the grid ("TP {2, 4}, eager, ..., engine vllm-v0") into buf. */
static void dom_head(const scenario_domain *v, char *buf, size_t cap)
{
    char tps[96] = "";
    for (int i = 0; i < v->n_tp; i++) {
        size_t len = strlen(tps);
        snprintf(tps + len, sizeof tps - len, "%s%ld", i ? ", " : "", v->tp[i]);
    }
    snprintf(buf, cap, "TP {%s}, %s%s%s, batch %ld..%ld, ctx %ld..%ld, %s, %s%s%s", tps,
             v->eager ? "eager" : "", v->eager && v->graphs ? "/" : "", v->graphs ? "graphs" : "",
             v->batch_lo, v->batch_hi, v->ctx_lo, v->ctx_hi, v->hardware, v->model,
             v->engine[0] ? ", engine " : "", v->engine);
}

int domain_statement(const scenario *s, char *buf, size_t cap)
{
    const scenario_domain *v = &s->domain;
    if (cap) buf[0] = '\0';
    if (!v->present) return 0;
    char head[DOMAIN_STATEMENT_MAX];
    dom_head(v, head, sizeof head);
    snprintf(buf, cap, "%s; %s: %s%s", head, v->grid, v->verdict, v->written ? "" : DOM_HAND_NOTE);
    return 1;
}

int domain_statement_words(const scenario *s, char *buf, size_t cap)
{
    static const char *const words[][2] = {
        {"PASS-NO-SKILL", "passed, no better than a constant"},
        {"MISFIT", "did not fit"},
        {"UNTESTED", "untested"},
        {"PASS", "passed"},
        {"FAIL", "failed"}};
    const scenario_domain *v = &s->domain;
    if (cap) buf[0] = '\0';
    if (!v->present || !cap) return v->present;
    char head[DOMAIN_STATEMENT_MAX];
    dom_head(v, head, sizeof head);
    /* the head, then " against GRID: " and the verdict in words */
    size_t len = (size_t)snprintf(buf, cap, "%s against %s: ", head, v->grid);
    for (const char *p = v->verdict; *p && len + 1 < cap;) {
        size_t w = 0;
        int at_word = p == v->verdict || !isalnum((unsigned char)p[-1]);
        for (size_t i = 0; at_word && i < sizeof words / sizeof words[0]; i++) {
            size_t n = strlen(words[i][0]);
            if (!strncmp(p, words[i][0], n) && !isalnum((unsigned char)p[n]) && p[n] != '-') {
                int k = snprintf(buf + len, cap - len, "%s", words[i][1]);
                len += k > 0 ? (size_t)k : 0;
                w = n;
                break;
            }
        }
        if (len >= cap) break;
        if (w) {
            p += w;
        } else {
            buf[len++] = *p++;
            buf[len] = '\0';
        }
    }
    if (len + 1 < cap && !v->written)
        snprintf(buf + len, cap - len, "%s", DOM_HAND_NOTE);
    if (len >= cap) buf[cap - 1] = '\0';
    return 1;
}

void domain_join(const domain_report *r, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (int i = 0; i < r->n_marks && len < cap; i++) {
        int n = snprintf(buf + len, cap - len, "%s%s", i ? "; " : "", r->marks[i]);
        if (n < 0) break;
        len += (size_t)n;
    }
}
