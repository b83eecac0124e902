/* cmd.c: see cmd.h. */
#include "cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jw.h"
#include "locate.h"
#include "run.h"

void cmd_notes(const scenario *s)
{
    if (s->model.note[0]) fprintf(stderr, "tpsim: note: %s\n", s->model.note);
}

int cmd_fail(const tp_err *err)
{
    fprintf(stderr, "tpsim: %s\n", err->msg);
    return 2;
}

int cmd_scn_flag(scn_opts *o, const char *name, const char *v, tp_err *err)
{
    if (strcmp(name, "set") == 0) {
        if (o->n_sets == SCN_OPTS_MAX_SETS)
            return tp_err_set(err, "--set: more than %d", SCN_OPTS_MAX_SETS);
        if (!strchr(v, '=')) return tp_err_set(err, "--set %s: expected dotted.key=value", v);
        o->sets[o->n_sets++] = v;
        return 1;
    }
    if (strcmp(name, "calib") == 0) {
        if (o->n_calibs == SCN_OPTS_MAX_CALIBS)
            return tp_err_set(err, "--calib: more than %d", SCN_OPTS_MAX_CALIBS);
        o->calibs[o->n_calibs++] = v;
        return 1;
    }
    if (strcmp(name, "model") == 0) {
        if (o->model_set[0]) return tp_err_set(err, "--model %s: a second model, expected one", v);
        /* a file is named from the current folder (a --set model= path from the scenario's),
         * even one that is not there: its error then names the path the user meant */
        char abs[SCN_PATH_MAX], cwd[SCN_PATH_MAX];
        const char *ref = v;
        if (v[0] != '/' &&
            (strchr(v, '/') || access(v, F_OK) == 0 || !locate_is_name(v, ".yaml"))) {
            if (!getcwd(cwd, sizeof cwd))
                return tp_err_set(err, "--model %s: the current folder: %s", v, strerror(errno));
            if ((size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, v) >= sizeof abs)
                return tp_err_set(err, "--model %s: path too long, expected at most %d bytes", v,
                                  SCN_PATH_MAX - 1);
            ref = abs;
        }
        if (!*ref || strlen(ref) >= SCN_PATH_MAX)
            return tp_err_set(err, "--model: %zu bytes, expected 1..%d", strlen(ref),
                              SCN_PATH_MAX - 1);
        snprintf(o->model_set, sizeof o->model_set, "model=%s", ref);
        return 1;
    }
    if (strcmp(name, "measured") == 0) {
        if (o->measured)
            return tp_err_set(err, "--measured %s: a second measured file, expected one", v);
        o->measured = v;
        return 1;
    }
    if (strcmp(name, "allow-foreign-calib") == 0) {
        o->allow_foreign_calib = 1;
        return 1;
    }
    if (strcmp(name, "mode") == 0) {
        if (strcmp(v, "eager") && strcmp(v, "graphs"))
            return tp_err_set(err, "--mode: '%s', expected eager or graphs", v);
        snprintf(o->mode_set, sizeof o->mode_set, "execution.mode=%s", v);
        return 1;
    }
    return 0;
}

void cmd_json_breakdown(jw *w, const char *key, const run_breakdown *b)
{
    jw_key(w, key);
    jw_obj(w);
    jw_knum(w, "host", b->host * 1e3);
    jw_knum(w, "compute", b->compute * 1e3);
    jw_knum(w, "allreduce", b->allreduce * 1e3);
    jw_knum(w, "wait_peers", b->wait_peers * 1e3);
    jw_knum(w, "gpu_idle", b->gpu_idle * 1e3);
    jw_knum(w, "offset", b->offset * 1e3);
    jw_end_obj(w);
}
