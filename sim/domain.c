/* domain.c: see domain.h. */
#include "domain.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static void dom_mark(domain_report *r, const char *fmt, ...)
{
    if (r->n_marks == DOMAIN_MAX_MARKS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->marks[r->n_marks++], DOMAIN_MARK_MAX, fmt, ap);
    va_end(ap);
    r->inside = 0;
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
}

int domain_statement(const scenario *s, char *buf, size_t cap)
{
    const scenario_domain *v = &s->domain;
    if (cap) buf[0] = '\0';
    if (!v->present) return 0;
    char tps[96] = "";
    for (int i = 0; i < v->n_tp; i++) {
        size_t len = strlen(tps);
        snprintf(tps + len, sizeof tps - len, "%s%ld", i ? ", " : "", v->tp[i]);
    }
    snprintf(buf, cap, "TP {%s}, %s%s%s, batch %ld..%ld, ctx %ld..%ld, %s, %s%s%s; %s: %s", tps,
             v->eager ? "eager" : "", v->eager && v->graphs ? "/" : "", v->graphs ? "graphs" : "",
             v->batch_lo, v->batch_hi, v->ctx_lo, v->ctx_hi, v->hardware, v->model,
             v->engine[0] ? ", engine " : "", v->engine, v->grid, v->verdict);
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
    char stmt[DOMAIN_STATEMENT_MAX];
    if (!domain_statement(s, stmt, sizeof stmt)) return 0;
    /* the statement up to the grid, then " against GRID: " and the verdict in words */
    size_t head = strlen(stmt) - strlen(v->grid) - strlen(v->verdict) - 4; /* "; " + ": " */
    size_t len = (size_t)snprintf(buf, cap, "%.*s against %s: ", (int)head, stmt, v->grid);
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
    if (len >= cap && cap) buf[cap - 1] = '\0';
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
