/* vdomain.c: see vdomain.h. */
#include "vdomain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "coll.h"
#include "domain.h"
#include "fprint.h"
#include "ofile.h"
#include "phase.h"
#include "rfile.h"
#include "scnfit.h"

/* ---- what the first protocol's report says of the domain ----------------------------- */

/* The grid's TP degrees (ascending, each once) and its batch and context ranges. */
static int vdom_cells(scenario_domain *d, const grid *g, tp_err *err)
{
    for (size_t i = 0; i < g->n; i++) {
        const grid_cell *c = &g->cells[i];
        if (!i || c->batch < d->batch_lo) d->batch_lo = c->batch;
        if (!i || c->batch > d->batch_hi) d->batch_hi = c->batch;
        if (!i || c->ctx < d->ctx_lo) d->ctx_lo = c->ctx;
        if (!i || c->ctx > d->ctx_hi) d->ctx_hi = c->ctx;
        int k = 0;
        while (k < d->n_tp && d->tp[k] < c->tp) k++;
        if (k < d->n_tp && d->tp[k] == c->tp) continue;
        if (d->n_tp == SCN_DOMAIN_TP_MAX)
            return tp_err_set(err, "%s: more than %d TP degrees, a validated: block holds at "
                              "most %d", g->path, SCN_DOMAIN_TP_MAX, SCN_DOMAIN_TP_MAX);
        memmove(&d->tp[k + 1], &d->tp[k], (size_t)(d->n_tp - k) * sizeof d->tp[0]);
        d->tp[k] = c->tp;
        d->n_tp++;
    }
    return 0;
}

/* The held-out error of the report's protocol: every held-out cell, all configs pooled. */
static void vdom_heldout(scenario_domain *d, const val_report *r)
{
    double sum = 0, sq = 0;
    long n = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *c = &r->cells[i];
        if (c->role != VAL_HELDOUT || isnan(c->error_pct)) continue;
        sum += fabs(c->error_pct);
        sq += c->error_pct * c->error_pct;
        n++;
    }
    val_protocol_name(&r->protocol, d->heldout_protocol, sizeof d->heldout_protocol);
    d->heldout_cells = n;
    d->heldout_mape_pct = n ? sum / (double)n : NAN;
    d->heldout_rms_pct = n ? sqrt(sq / (double)n) : NAN;
}

static int vdom_first(scenario_domain *d, const val_report *r, tp_err *err)
{
    const scenario *s = &r->scn;
    memset(d, 0, sizeof *d);
    if (vdom_cells(d, r->g, err)) return -1;
    d->graphs = s->graphs;
    d->eager = !s->graphs;
    snprintf(d->hardware, sizeof d->hardware, "%s", s->hw.name);
    snprintf(d->model, sizeof d->model, "%s", s->model.name);
    snprintf(d->engine, sizeof d->engine, "%s", s->engine);
    domain_precision(s, d->weights, d->kv_cache);
    snprintf(d->allreduce, sizeof d->allreduce, "%s", coll_model_names[s->allreduce_model]);
    snprintf(d->host_phases, sizeof d->host_phases, "%s", phase_mode_name(s->phases.overlap));
    if (s->graphs) snprintf(d->graph_mode, sizeof d->graph_mode, "%s", scenario_graph_mode(s, 1));
    d->queue_depth = s->queue_depth;
    d->kill_switch_pct = r->kill_switch_pct;
    if (domain_relpath(s->path, r->g->path, d->grid, sizeof d->grid))
        return tp_err_set(err, "%s: cannot resolve its path relative to %s", r->g->path, s->path);
    vdom_heldout(d, r);
    /* the files the predictions read, then the grid the verdict rests on */
    if (domain_inputs(s, NULL, d->inputs, SCN_DOMAIN_INPUTS - 1, &d->n_inputs, err)) return -1;
    scenario_input *gi = &d->inputs[d->n_inputs];
    snprintf(gi->path, sizeof gi->path, "%s", d->grid);
    if (fp_file(r->g->path, gi->fp, err)) return -1;
    d->n_inputs++;
    d->present = d->written = 1;
    return 0;
}

/* ---- the verdict: one clause per protocol -------------------------------------------- */

/* One config of a clause: "H100 TP-2 (6.06%)", with the best baseline where the verdict turns
 * on it ("(8.79%, constant 11.21%)"). */
static size_t vdom_config(const val_config *c, char *out, size_t cap)
{
    if (isnan(c->heldout_mape_pct)) return (size_t)snprintf(out, cap, "%s", c->config);
    int vs = (c->verdict == VAL_PASS_NO_SKILL || c->verdict == VAL_SUPPORTED) &&
             !isnan(c->best_baseline_pct);
    if (vs)
        return (size_t)snprintf(out, cap, "%s (%.2f%%, %s %.2f%%)", c->config,
                                c->heldout_mape_pct, c->best_baseline, c->best_baseline_pct);
    return (size_t)snprintf(out, cap, "%s (%.2f%%)", c->config, c->heldout_mape_pct);
}

/* "within: MISFIT at H100 TP-2 (6.06%) and H100 TP-4 (3.14%)": the judged configs grouped by
 * verdict, in the order each verdict first appears. 0, or -1 when it does not fit in cap. */
static int vdom_clause(const val_report *r, char *out, size_t cap)
{
    char pn[96];
    val_protocol_name(&r->protocol, pn, sizeof pn);
    size_t len = (size_t)snprintf(out, cap, "%s: ", pn);
    int done[VAL_MAX_CONFIGS] = {0}, groups = 0;
    for (int k = 0; k < r->n_configs && len < cap; k++) {
        const val_config *c = &r->configs[k];
        if (!c->judged || done[k]) continue;
        int n_same = 0;
        for (int j = k; j < r->n_configs; j++)
            n_same += r->configs[j].judged && !done[j] && r->configs[j].verdict == c->verdict;
        len += (size_t)snprintf(out + len, cap - len, "%s%s at ", groups++ ? ", " : "",
                                val_verdict_name(c->verdict));
        for (int j = k, i = 0; j < r->n_configs && len < cap; j++) {
            const val_config *o = &r->configs[j];
            if (!o->judged || done[j] || o->verdict != c->verdict) continue;
            done[j] = 1;
            if (i++) len += (size_t)snprintf(out + len, cap - len, i == n_same ? " and " : ", ");
            if (len < cap) len += vdom_config(o, out + len, cap - len);
        }
    }
    if (!groups && len < cap) len += (size_t)snprintf(out + len, cap - len, "nothing judged");
    if (r->n_unverified && len < cap)
        len += (size_t)snprintf(out + len, cap - len, " (on an edited file's numbers)");
    return len < cap ? 0 : -1;
}

int vdom_add(vdom *v, const val_report *r, tp_err *err)
{
    if (!v->n_protocols && vdom_first(&v->d, r, err)) return -1;
    char clause[sizeof v->d.verdict];
    int whole = vdom_clause(r, clause, sizeof clause) == 0;
    size_t len = strlen(v->d.verdict);
    int n = snprintf(v->d.verdict + len, sizeof v->d.verdict - len, "%s%s",
                     v->n_protocols ? "; " : "", clause);
    if (!whole || n < 0 || (size_t)n >= sizeof v->d.verdict - len)
        return tp_err_set(err, "--write-domain: the verdict of %d protocols is longer than %zu "
                          "characters, expected fewer protocols", v->n_protocols + 1,
                          sizeof v->d.verdict - 1);
    v->n_protocols++;
    return 0;
}

/* ---- the block's text and its place in the file -------------------------------------- */

/* s in YAML double quotes */
static void vdom_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A scalar as YAML: plain where it cannot read as anything but that string, else quoted. */
static void vdom_scalar(FILE *f, const char *s)
{
    static const char *const words[] = {"true", "false", "null", "yes", "no", "on", "off", "~"};
    int plain = s[0] && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789 ._/+-") == strlen(s) &&
                !strchr(" -+", s[0]) && s[strlen(s) - 1] != ' ';
    char *end;
    strtod(s, &end);
    if (end != s && !*end) plain = 0; /* a number */
    for (size_t i = 0; plain && i < sizeof words / sizeof words[0]; i++)
        if (!strcasecmp(s, words[i])) plain = 0;
    if (plain) fputs(s, f);
    else vdom_quoted(f, s);
}

static void vdom_key(FILE *f, const char *key, const char *value)
{
    fprintf(f, "  %s: ", key);
    vdom_scalar(f, value);
    fputc('\n', f);
}

static void vdom_block(FILE *f, const scenario_domain *d)
{
    fprintf(f, "%s\nvalidated:\n  tp: [", VDOM_COMMENT);
    for (int i = 0; i < d->n_tp; i++) fprintf(f, "%s%ld", i ? ", " : "", d->tp[i]);
    fprintf(f, "]\n  modes: [%s]\n", d->graphs ? "graphs" : "eager");
    fprintf(f, "  batch: [%ld, %ld]\n  ctx: [%ld, %ld]\n", d->batch_lo, d->batch_hi, d->ctx_lo,
            d->ctx_hi);
    vdom_key(f, "hardware", d->hardware);
    vdom_key(f, "model", d->model);
    vdom_key(f, "engine", d->engine);
    fprintf(f, "  precision: {weights: %s, kv_cache: %s}\n", d->weights, d->kv_cache);
    vdom_key(f, "allreduce", d->allreduce);
    vdom_key(f, "host_phases", d->host_phases);
    if (d->graph_mode[0]) vdom_key(f, "graph_mode", d->graph_mode);
    fprintf(f, "  queue_depth: %ld\n", d->queue_depth);
    vdom_key(f, "grid", d->grid);
    fprintf(f, "  kill_switch_pct: %g\n  verdict: ", d->kill_switch_pct);
    vdom_quoted(f, d->verdict);
    fputc('\n', f);
    vdom_key(f, "heldout_protocol", d->heldout_protocol);
    fprintf(f, "  heldout_cells: %ld\n", d->heldout_cells);
    if (d->heldout_cells)
        fprintf(f, "  heldout_mape_pct: %.2f\n  heldout_rms_pct: %.2f\n", d->heldout_mape_pct,
                d->heldout_rms_pct);
    fprintf(f, "  inputs:\n");
    for (int i = 0; i < d->n_inputs; i++) {
        fprintf(f, "    - {file: ");
        vdom_scalar(f, d->inputs[i].path);
        fprintf(f, ", fp: \"%s\"}\n", d->inputs[i].fp);
    }
}

/* The line at text + at: its length with the newline. */
static size_t vdom_line(const char *text, size_t len, size_t at)
{
    const char *nl = memchr(text + at, '\n', len - at);
    return nl ? (size_t)(nl - (text + at)) + 1 : len - at;
}

/* Where the block stands in text: [*from, *to) covers the top-level `validated:` line, the
 * indented (or blank) lines under it less trailing blank ones, and the comment line this
 * writer puts above it. 1 when found, 0 when the text has none (*from = *to = len). */
static int vdom_find(const char *text, size_t len, size_t *from, size_t *to)
{
    size_t prev = len, at = 0;
    *from = *to = len;
    for (; at < len; prev = at, at += vdom_line(text, len, at)) {
        size_t n = vdom_line(text, len, at);
        if (n < 10 || strncmp(text + at, "validated:", 10) || !strchr(" \t\r\n#", text[at + 10]))
            continue;
        *from = at;
        if (prev < len && !strncmp(text + prev, VDOM_COMMENT, strlen(VDOM_COMMENT))) *from = prev;
        size_t end = at + n, last = end;
        while (end < len) {
            size_t m = vdom_line(text, len, end);
            int blank = strspn(text + end, " \t\r\n") >= m;
            if (!blank && text[end] != ' ' && text[end] != '\t') break;
            end += m;
            if (!blank) last = end;
        }
        *to = last;
        return 1;
    }
    return 0;
}

/* The scenario's bytes now are those validate read (rfile.h's record of them). */
static int vdom_unchanged(const char *path, const char *text, size_t len, tp_err *err)
{
    rfile_input *in = malloc(RFILE_MAX_INPUTS * sizeof *in);
    if (!in) return tp_err_set(err, "out of memory");
    int n = rfile_inputs_read(in, RFILE_MAX_INPUTS), rc = 0;
    char now[FP_HEX];
    fp_hex(fp_bytes(FP_SEED, text, len), now);
    for (int i = 0; i < n; i++)
        if (!strcmp(in[i].path, path) && in[i].fp[0] && strcmp(in[i].fp, now))
            rc = tp_err_set(err, "%s: changed while tpsim validate ran (fingerprint %s, read as "
                            "%s), expected it unchanged; run it again", path, now, in[i].fp);
    free(in);
    return rc;
}

/* The new text binds: its validated: block as scnfit reads it, its content apart from the
 * block the fingerprint recorded for it. */
static int vdom_check(const char *path, const char *text, size_t len, const vdom *v,
                      tp_err *err)
{
    cfg_doc *doc = cfg_load_string(path, text, len, err);
    if (!doc) return -1;
    const cfg_node *b = cfg_get(cfg_root(doc), "validated");
    scenario_domain *d = calloc(1, sizeof *d);
    int rc = -1;
    if (!d) {
        tp_err_set(err, "out of memory");
    } else if (!b) {
        tp_err_set(err, "%s: the written text has no validated: block", path);
    } else if (!scnfit_bind_domain(b, d, err)) {
        char fp[FP_HEX];
        fp_hex(fp_tree_except(cfg_root(doc), "validated"), fp);
        if (strcmp(fp, v->d.inputs[0].fp))
            tp_err_set(err, "%s: its content apart from validated: is not what validate read "
                       "(fingerprint %s, read %s)", path, fp, v->d.inputs[0].fp);
        else
            rc = 0;
    }
    free(d);
    cfg_free(doc);
    return rc;
}

/* out names the scenario's own file (device and inode): then it is rewritten on purpose. */
static int vdom_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int vdom_write(const vdom *v, const char *path, const char *out, tp_err *err)
{
    char *text = NULL, *block = NULL, *whole = NULL;
    size_t len = 0, blen = 0, wlen = 0;
    int rc = -1;
    ofile of = {0};
    if (rfile_read(path, CFG_MAX_BYTES, "a scenario (YAML)", &text, &len, err) ||
        vdom_unchanged(path, text, len, err))
        goto out;
    FILE *b = open_memstream(&block, &blen);
    if (!b) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    vdom_block(b, &v->d);
    FILE *w = fclose(b) ? NULL : open_memstream(&whole, &wlen);
    if (!w) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    size_t from, to;
    if (vdom_find(text, len, &from, &to)) {
        fwrite(text, 1, from, w);
        fwrite(block, 1, blen, w);
        fwrite(text + to, 1, len - to, w);
    } else { /* appended, on a line of its own */
        fwrite(text, 1, len, w);
        if (len && text[len - 1] != '\n') fputc('\n', w);
        fwrite(block, 1, blen, w);
    }
    if (fclose(w)) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    if (vdom_check(path, whole, wlen, v, err)) goto out;
    if ((vdom_same_file(path, out) ? ofile_open_update(&of, out, err)
                                       : ofile_open(&of, out, err)))
        goto out;
    fwrite(whole, 1, wlen, of.f);
    rc = ofile_commit(&of, err);
out:
    if (rc) ofile_abort(&of);
    free(text);
    free(block);
    free(whole);
    return rc;
}
