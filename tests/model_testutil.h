/* model_testutil.h: helpers shared by the model tests (test_models.c, test_hfarch.c): a
 * temporary config.json, an op of a program, a refused config. Header-only (static inline),
 * for tests alone; a file including it includes cmocka.h, model.h and prog.h first. */
#ifndef TPSIM_MODEL_TESTUTIL_H
#define TPSIM_MODEL_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* got within 1e-12 of want, relative (absolute where want is 0) */
static inline void mtu_assert_near(double got, double want)
{
    double rel = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1.0);
    if (rel >= 1e-12) fail_msg("got %.17g, want %.17g", got, want);
}

/* Write `text` to a temporary /tmp/tpsim-test-TAG-PID-NAME.json (the name matters: it names
 * the model); the caller unlinks it. */
static inline void mtu_write_json(char *path, size_t cap, const char *tag, const char *name,
                                  const char *text)
{
    snprintf(path, cap, "/tmp/tpsim-test-%s-%ld-%s.json", tag, (long)getpid(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The first op of this name in layer `layer` (or outside the layers at -1). */
static inline const prog_op *mtu_find_op(const prog *p, int name, int layer)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->ops[i].name == name && p->ops[i].layer == layer) return &p->ops[i];
    fail_msg("no op %d in layer %d", name, layer);
    return NULL;
}

/* The config `json`, written as NAME.json, is refused in one line holding want1 and want2. */
static inline void mtu_expect_refused(const char *tag, const char *name, const char *json,
                                      const char *want1, const char *want2)
{
    char path[256];
    model_arch m;
    tp_err err = {{0}};
    mtu_write_json(path, sizeof path, tag, name, json);
    int rc = model_load(path, &m, &err);
    unlink(path);
    assert_int_equal(rc, -1);
    if (!strstr(err.msg, want1) || !strstr(err.msg, want2))
        fail_msg("'%s' lacks '%s' or '%s'", err.msg, want1, want2);
    assert_null(strchr(err.msg, '\n'));
}

#endif
