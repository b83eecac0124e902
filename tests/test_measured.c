/* test_measured.c: a trace calibration read into a scenario document (sim/measured.h): the
 * structured values, not the apply: list, go in between the scenario's own values and the
 * --set flags; unmeasured parts set nothing; bad files get one line at the right place. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "measured.h"

static char tm_path[64];

/* Writes text to a fresh file and returns its path. */
static const char *tm_file(const char *text)
{
    snprintf(tm_path, sizeof tm_path, "/tmp/tpsim-test-measured-%ld.yaml", (long)getpid());
    FILE *f = fopen(tm_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return tm_path;
}

/* measured by hand: launch 10 us lognormal cv 0.5; the step unmeasured; no collective */
static const char tm_good[] =
    "kind: trace-calibration\n"
    "host:\n"
    "  launch:\n"
    "    dist: lognormal\n"
    "    mean_us: 10.5\n"
    "    cv: 0.5\n"
    "    source: {files: \"x.json (rank 0)\", steps: 3}\n"
    "  step:\n"
    "    unmeasured: true\n"
    "gpu:\n"
    "  kernel_fixed_us: 2.25\n"
    "  kernel_fixed_source: by hand\n"
    "  achieved_gbps: {}\n"
    "apply:\n"
    "  - host.launch.mean_us=10.5\n";

static void test_load_reads_the_values(void **state)
{
    (void)state;
    measured_cal m;
    tp_err err = {{0}};
    assert_int_equal(measured_load(tm_file(tm_good), &m, &err), 0);
    const measured_group *l = &m.parts[MEASURED_LAUNCH];
    assert_int_equal(l->state, MEASURED_SET);
    assert_int_equal(l->n_keys, 3);
    assert_string_equal(l->keys[1], "host.launch.mean_us");
    assert_string_equal(l->values[0], "lognormal");
    assert_string_equal(l->values[1], "10.5");
    assert_string_equal(l->values[2], "0.5");
    assert_int_equal(l->line[1], 5);
    assert_int_equal(l->col[1], 14);
    assert_string_equal(l->source, "files: x.json (rank 0), steps: 3");
    assert_int_equal(m.parts[MEASURED_STEP].state, MEASURED_UNMEASURED);
    assert_int_equal(m.parts[MEASURED_STEP].n_keys, 0);
    assert_int_equal(m.parts[MEASURED_COLLECTIVE].state, MEASURED_ABSENT);
    assert_int_equal(m.parts[MEASURED_HBM_EFFICIENCY].state, MEASURED_ABSENT);
    assert_string_equal(m.parts[MEASURED_KERNEL_FIXED].values[0], "2.25");
    unlink(tm_path);
}

/* scenario < measured < --set, and measured_bind tells which values held */
static void test_order_and_bind(void **state)
{
    (void)state;
    char scn[256];
    tp_err err = {{0}};
    const char *mpath = tm_file(tm_good);
    snprintf(
        scn, sizeof scn,
        "host:\n  launch: {dist: constant, mean_us: 26}\n  step: {dist: constant, mean_us: 7}\n"
        "measured: %s\n",
        mpath);
    cfg_doc *doc = cfg_load_string("s.yaml", scn, strlen(scn), &err);
    assert_non_null(doc);
    const char *sets[] = {"host.launch.cv=0.25"};
    assert_int_equal(measured_open(doc, NULL, sets, 1, &err), 0);
    assert_int_equal(cfg_set(doc, sets[0], 1, &err), 0);
    cfg_node *r = cfg_root(doc);
    assert_string_equal(cfg_find(r, "host.launch.mean_us")->text, "10.5"); /* measured */
    assert_string_equal(cfg_find(r, "host.launch.dist")->text, "lognormal");
    assert_string_equal(cfg_find(r, "host.launch.cv")->text, "0.25");      /* --set */
    assert_string_equal(cfg_find(r, "host.step.mean_us")->text, "7");      /* unmeasured: kept */
    measured_cal m;
    assert_int_equal(measured_bind(doc, &m, &err), 0);
    assert_string_equal(m.path, mpath);
    assert_string_equal(m.named_by, "s.yaml:4:11");
    assert_string_equal(m.parts[MEASURED_LAUNCH].overridden_by[1], "");
    assert_string_equal(m.parts[MEASURED_LAUNCH].overridden_by[2], "--set");
    cfg_free(doc);
    unlink(tm_path);
}

static void expect_refused(const char *text, const char *where, const char *what)
{
    measured_cal m;
    tp_err err = {{0}};
    char prefix[128];
    assert_int_equal(measured_load(tm_file(text), &m, &err), -1);
    snprintf(prefix, sizeof prefix, "%s:%s", tm_path, where);
    if (strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, what) || strchr(err.msg, '\n'))
        fail_msg("'%s' is not one line at %s saying '%s'", err.msg, prefix, what);
    unlink(tm_path);
}

static void test_bad_files(void **state)
{
    (void)state;
    expect_refused("kind: hardware\nhost: {}\n", "1:7:", "expected trace-calibration");
    expect_refused("kind: trace-calibration\nhost: {}\nextra: 1\n", "3:1:", "extra");
    expect_refused(
        "kind: trace-calibration\nhost:\n  launch: {dist: constant, mean_us: nan, source: x}\n",
        "3:37:", "not a number");
    expect_refused("kind: trace-calibration\nhost:\n  launch: {dist: constant, mean_us: 1, cv: "
                   "0.2, source: x}\n",
                   "3:44:", "a constant has no cv");
    expect_refused("kind: trace-calibration\nhost:\n  step: {unmeasured: false}\n",
                   "3:22:", "expected true");
    expect_refused("kind: trace-calibration\nhost: {}\ngpu: {hbm_efficiency: 0.5}\n", "3:23:",
                   "hbm_efficiency_source");
    expect_refused(
        "kind: trace-calibration\nhost: {}\ngpu: {hbm_efficiency: 0, hbm_efficiency_source: x}\n",
        "3:23:", "out of range");
    expect_refused("kind: trace-calibration\nhost: {}\napply: [nothing]\n", "3:9:", "key=value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_reads_the_values),
        cmocka_unit_test(test_order_and_bind),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
