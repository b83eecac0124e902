/* protocol.c: the validation protocols, one entry each in val_protocols[] (validate.h): the
 * name and flag, the parser of the flag's value, which cells may calibrate and which are
 * judged in each fold, the grid checks and the report's name. folds.c, validate.c and the
 * command (cmd_validate.c: flags, usage, messages) are driven by the table. Also the
 * options and the names of verdicts and roles. */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "val_impl.h"

/* ------------------------------------------------------ transfer A:B ------------- */

static int val_tp_list(const char *s, size_t len, long *out, int *n, tp_err *err)
{
    *n = 0;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        long v = 0;
        while (j < len && isdigit((unsigned char)s[j]) && v <= 1024) v = v * 10 + (s[j++] - '0');
        if (j == i || v < 1 || v > 1024 || (j < len && s[j] != ','))
            return tp_err_set(err, "'%.*s' is not a list of TP degrees, expected e.g. 2 or 2,4",
                              (int)len, s);
        for (int k = 0; k < *n; k++)
            if (out[k] == v) return tp_err_set(err, "TP degree %ld is listed twice", v);
        if (*n == VAL_MAX_TP) return tp_err_set(err, "more than %d TP degrees", VAL_MAX_TP);
        out[(*n)++] = v;
        i = j + (j < len);
        if (j < len && i == len)
            return tp_err_set(err, "'%.*s' ends with a comma, expected a TP degree", (int)len, s);
    }
    if (!*n) return tp_err_set(err, "an empty list of TP degrees, expected e.g. 2");
    return 0;
}

/* "transfer A:B" or just "A:B" */
static int val_transfer_parse(const char *text, val_protocol *out, tp_err *err)
{
    const char *spec = text;
    if (!strncmp(text, "transfer ", 9)) spec = text + 9;
    const char *colon = strchr(spec, ':');
    if (!colon || (spec == text && !isdigit((unsigned char)text[0]))) return 1;
    if (val_tp_list(spec, (size_t)(colon - spec), out->from, &out->n_from, err) ||
        val_tp_list(colon + 1, strlen(colon + 1), out->to, &out->n_to, err))
        return -1;
    for (int i = 0; i < out->n_from; i++)
        for (int j = 0; j < out->n_to; j++)
            if (out->from[i] == out->to[j])
                return tp_err_set(err,
                                  "transfer %s: TP-%ld is on both sides, expected the degrees "
                                  "fitted on and the degrees judged to be disjoint",
                                  spec, out->from[i]);
    return 0;
}

static void val_tps(const long *v, int n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%ld", i ? "," : "", v[i]);
}

static void val_transfer_name(const val_protocol *p, char *out, size_t cap)
{
    char a[64], b[64];
    val_tps(p->from, p->n_from, a, sizeof a);
    val_tps(p->to, p->n_to, b, sizeof b);
    snprintf(out, cap, "transfer %s:%s", a, b);
}

int val_tp_in(long tp, const long *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] == tp) return 1;
    return 0;
}

static int val_transfer_check(const val_report *r, tp_err *err)
{
    const grid *g = r->g;
    char pn[96];
    val_protocol_name(&r->protocol, pn, sizeof pn);
    int have_from = 0, have_to = 0;
    for (size_t i = 0; i < g->n; i++) {
        have_from |= val_tp_in(g->cells[i].tp, r->protocol.from, r->protocol.n_from);
        have_to |= val_tp_in(g->cells[i].tp, r->protocol.to, r->protocol.n_to);
    }
    if (!have_from || !have_to)
        return tp_err_set(err, "%s: the grid %s has no cell of the TP degree(s) %s, expected "
                          "degrees it measured", pn, g->path, have_from ? "judged" : "fitted on");
    return 0;
}

/* only degrees A calibrate; every cell of degrees B is judged */
static int val_transfer_calibrates(const val_report *r, int fold, size_t i)
{
    return val_tp_in(r->g->cells[i].tp, r->protocol.from, r->protocol.n_from);
}

static int val_transfer_judges(const val_report *r, int fold, size_t i)
{
    return val_tp_in(r->g->cells[i].tp, r->protocol.to, r->protocol.n_to);
}

/* --------------------------------------------------------------- loo ------------- */

static int val_loo_check(const val_report *r, tp_err *err)
{
    if (r->n_configs < 2)
        return tp_err_set(err, "loo: the grid %s has one config, expected at least two",
                          r->g->path);
    return 0;
}

/* fold k leaves config k out: it calibrates on the others and judges config k */
static int val_loo_calibrates(const val_report *r, int fold, size_t i)
{
    return strcmp(r->g->cells[i].config, r->configs[fold].config) != 0;
}

static int val_loo_judges(const val_report *r, int fold, size_t i)
{
    return !val_loo_calibrates(r, fold, i);
}

/* ------------------------------------------------------------ the table ---------- */

/* The order is the flags' and the usage's; the first entry is the default (a zeroed
 * val_protocol). */
const val_protocol_def val_protocols[] = {
    {.name = "within",
     .help = "within (the scenario's fit.cells; default unless fit.protocol says otherwise)"},
    {.name = "transfer", .value = "A:B", .example = "transfer 2:4",
     .help = "--transfer A:B (fit on TP degrees A only, judge every cell of B, e.g. 2:4)",
     .parse = val_transfer_parse, .report_name = val_transfer_name, .check = val_transfer_check,
     .calibrates = val_transfer_calibrates, .judges = val_transfer_judges, .all_when_none = 1},
    {.name = "loo", .help = "--loo (leave each config out in turn)", .check = val_loo_check,
     .fold_per_config = 1, .calibrates = val_loo_calibrates, .judges = val_loo_judges,
     .all_when_none = 1},
};
const int val_n_protocols = (int)(sizeof val_protocols / sizeof val_protocols[0]);

const val_protocol_def *val_protocol_of(const val_protocol *p)
{
    return &val_protocols[p->index];
}

/* "within, loo or transfer A:B (e.g. transfer 2:4)": the plain names, then the forms with a
 * value, then their examples */
static void val_protocol_expected(char *out, size_t cap)
{
    size_t used = 0;
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < val_n_protocols && used < cap; i++) {
            const val_protocol_def *d = &val_protocols[i];
            if (!d->value != !pass) continue;
            const char *sep = !n++ ? "" : n == val_n_protocols ? " or " : ", ";
            used += (size_t)snprintf(out + used, cap - used, "%s%s%s%s", sep, d->name,
                                     d->value ? " " : "", d->value ? d->value : "");
        }
    int k = 0;
    for (int i = 0; i < val_n_protocols && used < cap; i++)
        if (val_protocols[i].example)
            used += (size_t)snprintf(out + used, cap - used, "%s%s", k++ ? ", " : " (e.g. ",
                                     val_protocols[i].example);
    if (k && used < cap) snprintf(out + used, cap - used, ")");
}

int val_protocol_parse(const char *text, val_protocol *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < val_n_protocols; i++) {
        const val_protocol_def *d = &val_protocols[i];
        int rc = d->parse ? d->parse(text, out, err) : strcmp(text, d->name) != 0;
        if (rc <= 0) return out->index = i, rc;
        memset(out, 0, sizeof *out);
    }
    char expected[256];
    val_protocol_expected(expected, sizeof expected);
    return tp_err_set(err, "protocol '%s', expected %s", text, expected);
}

void val_protocol_name(const val_protocol *p, char *out, size_t cap)
{
    const val_protocol_def *d = val_protocol_of(p);
    if (d->report_name) d->report_name(p, out, cap);
    else snprintf(out, cap, "%s", d->name);
}

void val_protocol_flags(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < val_n_protocols && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s--%s%s%s", i ? ", " : "",
                                 val_protocols[i].name, val_protocols[i].value ? " " : "",
                                 val_protocols[i].value ? val_protocols[i].value : "");
}

/* ---------------------------------------------------- options and names ---------- */

val_options val_default_options(void)
{
    val_options o;
    memset(&o, 0, sizeof o);
    o.kill_switch_pct = 15.0;
    o.meas_cv = 0.01;
    o.intervals = 1;
    o.sensitivity = 1;
    return o;
}

const char *val_verdict_name(val_verdict v)
{
    static const char *const names[] = {"UNTESTED",  "MISFIT",    "FAIL",
                                        "PASS-NO-SKILL", "SUPPORTED", "UNIDENTIFIED"};
    return names[v];
}

const char *val_role_name(val_role r)
{
    static const char *const names[] = {"unused", "calibration", "held-out"};
    return names[r];
}
