/* scnopt.c: see scnopt.h. */
#include "scnopt.h"

#include <stdio.h>
#include <string.h>

#include "domain.h"
#include "locate.h"

int scn_opts_sets(const scn_opts *o, const char **sets)
{
    int n = o->n_sets;
    memcpy(sets, o->sets, (size_t)n * sizeof *sets);
    if (o->model_set[0]) sets[n++] = o->model_set;
    if (o->mode_set[0]) sets[n++] = o->mode_set;
    return n;
}

int scn_opts_apply(const scn_opts *o, scenario *s, tp_err *err)
{
    for (int i = 0; i < o->n_calibs; i++) {
        char buf[SCN_PATH_MAX]; /* a calibration given by name: models/allreduce/NAME.yaml */
        const char *path =
            locate_arg("models/allreduce", ".yaml", o->calibs[i], buf, sizeof buf, err);
        if (!path || scenario_add_allreduce(s, path, err)) return -1;
    }
    s->allow_foreign_calib = o->allow_foreign_calib;
    /* the GPU changed from the command line (--set hardware=, plan --hardware): its own kernel
     * and all-reduce measurements, unless kernels= (--calib) named them; a scenario file's own
     * pairing is its word */
    int hw_set = 0, k_set = 0;
    for (int i = 0; i < o->n_sets; i++) {
        hw_set |= !strncmp(o->sets[i], "hardware=", 9);
        k_set |= !strncmp(o->sets[i], "kernels=", 8);
    }
    if (hw_set && scenario_pick_allreduce(s, err)) return -1;
    return hw_set && !k_set ? scenario_pick_kernels(s, err) : 0;
}

/* --model travels as the set after the user's: its errors say --model, not "--set:N:7". */
static void scn_opts_model_error(const scn_opts *o, tp_err *err)
{
    char pre[32], rest[TP_ERR_MAX];
    int k = snprintf(pre, sizeof pre, "--set:%d:", o->n_sets + 1);
    if (!o->model_set[0] || strncmp(err->msg, pre, (size_t)k)) return;
    const char *r = err->msg + k;
    while (*r >= '0' && *r <= '9') r++;
    if (!strncmp(r, ": model: ", 9))
        r += 9;
    else if (!strncmp(r, ": ", 2))
        r += 2;
    snprintf(rest, sizeof rest, "%s", r);
    tp_err_set(err, "--model: %s", rest);
}

cfg_doc *scn_opts_open(const char *path, const scn_opts *o, tp_err *err)
{
    const char *sets[SCN_OPTS_MAX_SETS + 2];
    cfg_doc *doc = scenario_open_measured(path, o->measured, sets, scn_opts_sets(o, sets), err);
    if (!doc) scn_opts_model_error(o, err);
    return doc;
}

int scn_opts_load(const char *path, const scn_opts *o, scenario *out, tp_err *err)
{
    return scn_opts_load_cached(path, o, NULL, out, err);
}

int scn_opts_load_cached(const char *path, const scn_opts *o, scenario_cache *cache,
                         scenario *out, tp_err *err)
{
    cfg_doc *doc = scn_opts_open(path, o, err);
    if (!doc) return -1;
    int rc = scenario_bind_cached(doc, cache, out, err);
    cfg_free(doc);
    if (rc) scn_opts_model_error(o, err);
    if (rc) return -1;
    /* the validated: block's files against those read now, once per load (domain.h) */
    if (!scn_opts_apply(o, out, err) && !domain_inputs_check(out, cache, err)) return 0;
    scenario_free(out); /* a failed load holds nothing */
    return -1;
}
