/* protocol.c: validation protocols (within, loo, transfer A:B), options and the names of
 * verdicts and roles; see validate.h. */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "par.h"
#include "val_impl.h"

/* ------------------------------------------------------------ protocols ----------- */

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

int val_protocol_parse(const char *text, val_protocol *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (!strcmp(text, "within")) return out->kind = VAL_WITHIN, 0;
    if (!strcmp(text, "loo")) return out->kind = VAL_LOO, 0;
    const char *spec = text;
    if (!strncmp(text, "transfer ", 9)) spec = text + 9;
    const char *colon = strchr(spec, ':');
    if (!colon || (spec == text && !isdigit((unsigned char)text[0])))
        return tp_err_set(err, "protocol '%s', expected within, loo or transfer A:B (e.g. transfer 2:4)",
                          text);
    out->kind = VAL_TRANSFER;
    if (val_tp_list(spec, (size_t)(colon - spec), out->from, &out->n_from, err) ||
        val_tp_list(colon + 1, strlen(colon + 1), out->to, &out->n_to, err))
        return -1;
    for (int i = 0; i < out->n_from; i++)
        for (int j = 0; j < out->n_to; j++)
            if (out->from[i] == out->to[j])
                return tp_err_set(err, "transfer %s: TP-%ld is on both sides, expected the degrees "
                                  "fitted on and the degrees judged to be disjoint", spec, out->from[i]);
    return 0;
}

static void val_tps(const long *v, int n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%ld", i ? "," : "", v[i]);
}

void val_protocol_name(const val_protocol *p, char *out, size_t cap)
{
    if (p->kind != VAL_TRANSFER) {
        snprintf(out, cap, "%s", p->kind == VAL_WITHIN ? "within" : "loo");
        return;
    }
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

