/* test_locate.c: what counts as a name, and the order of the places a name or a path is
 * looked for in (the scenario's folder, $TPSIM_PATH left to right, the share folder), with
 * one line listing them when nothing is found. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "locate.h"

static char root[64];

static void touch(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(p, 0700);
        *s = '/';
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/tpsim-locate-XXXXXX");
    if (!mkdtemp(root)) return -1;
    touch("scn/models/both.yaml");
    touch("a/models/both.yaml");
    touch("a/models/only-a.yaml");
    touch("b/models/only-a.yaml");
    touch("b/models/hw/gpu.yaml");
    touch("b/models/only-b.yaml");
    touch("scn/mine.yaml");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_names(void **state)
{
    (void)state;
    assert_true(locate_is_name("llama-3.1-70b", ".yaml"));
    assert_true(locate_is_name("h100-sxm-tp4", ".yaml"));
    assert_false(locate_is_name("llama-3.1-70b.yaml", ".yaml"));
    assert_false(locate_is_name("x.yml", ".yaml"));
    assert_false(locate_is_name("../models/x", ".yaml"));
    assert_false(locate_is_name("..", ".yaml"));
    assert_false(locate_is_name("", ".yaml"));
    assert_true(locate_is_name("h100-ctx2048", ".csv"));
    assert_false(locate_is_name("h100-ctx2048.csv", ".csv"));
}

static void expect_found(const char *kind, const char *ref, const char *from, const char *want_rel)
{
    char out[512], want[512], scn[256];
    tp_err err = {{0}};
    snprintf(scn, sizeof scn, "%s/%s", root, from);
    if (locate_file(kind, ".yaml", ref, scn, out, sizeof out, &err))
        fail_msg("%s not found: %s", ref, err.msg);
    snprintf(want, sizeof want, "%s/%s", root, want_rel);
    assert_string_equal(out, want);
}

static void test_order(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/a::%s/b", root, root); /* an empty entry is skipped */
    setenv("TPSIM_PATH", path, 1);
    expect_found("models", "both", "scn", "scn/models/both.yaml"); /* the scenario's folder first */
    expect_found("models", "only-a", "scn",
                 "a/models/only-a.yaml"); /* then $TPSIM_PATH, in order */
    expect_found("models", "only-b", "scn", "b/models/only-b.yaml");
    expect_found("models/hw", "gpu", "scn", "b/models/hw/gpu.yaml");   /* the kind's folder */
    expect_found("models", "mine.yaml", "scn", "scn/mine.yaml"); /* a path: from the scenario */
    /* a path that climbs out of the scenario's folder, found elsewhere without its "../" */
    expect_found("models", "../models/only-b.yaml", "scn", "b/models/only-b.yaml");
    unsetenv("TPSIM_PATH");
}

static void test_not_found(void **state)
{
    (void)state;
    char path[256], scn[256], out[512], want[1024];
    tp_err err = {{0}};
    snprintf(path, sizeof path, "%s/a", root);
    snprintf(scn, sizeof scn, "%s/scn", root);
    setenv("TPSIM_PATH", path, 1);
    assert_int_equal(locate_file("models", ".yaml", "nope", scn, out, sizeof out, &err), -1);
    /* the names that exist follow, sorted, from every place (both and only-a are this
     * fixture's; the share folder adds the bundled models); none is near "nope" */
    snprintf(want, sizeof want, "'nope' not found: looked for models/nope.yaml in %s/scn, %s/a, %s "
             "(models there: both, ", root, root, locate_share());
    assert_int_equal(strncmp(err.msg, want, strlen(want)), 0);
    assert_non_null(strstr(err.msg, ", only-a"));
    assert_null(strstr(err.msg, "did you mean"));
    /* one letter off, and case: the closest name is offered */
    assert_int_equal(locate_file("models", ".yaml", "bth", scn, out, sizeof out, &err), -1);
    assert_non_null(strstr(err.msg, "models/bth.yaml in "));
    assert_non_null(strstr(err.msg, "; did you mean both? (models there: both, "));
    assert_int_equal(locate_file("models", ".yaml", "ONLY-A", scn, out, sizeof out, &err), -1);
    assert_non_null(strstr(err.msg, "; did you mean only-a? "));
    assert_int_equal(locate_file("models", ".yaml", "x/nope.yaml", scn, out, sizeof out, &err), -1);
    snprintf(want, sizeof want,
             "%s/scn/x/nope.yaml: cannot open: no such file (also looked in %s/a, %s)", root, root,
             locate_share());
    assert_string_equal(err.msg, want);
    unsetenv("TPSIM_PATH");
}

static void test_absolute_as_is(void **state)
{
    (void)state;
    char out[64];
    tp_err err;
    assert_int_equal(locate_file("models", ".yaml", "/no/such.yaml", "x", out, sizeof out, &err),
                     0);
    assert_string_equal(out, "/no/such.yaml"); /* its loader says it cannot open it */
}

/* A found path is printed without "./" and "NAME/.." (the bundled scenarios name
 * "../models/x.yaml": it prints as models/x.yaml), unless NAME is a symbolic link, where the
 * lexical path would be another file: then the ".." stays. */
static void test_tidy_paths(void **state)
{
    (void)state;
    char from[256], out[512], want[512], link[256], target[256];
    tp_err err;
    unsetenv("TPSIM_PATH");
    snprintf(from, sizeof from, "%s/scn", root);
    touch("models/tidy.yaml");
    assert_int_equal(locate_file("models", ".yaml", "../models/tidy.yaml", from, out,
                                 sizeof out, &err), 0);
    snprintf(want, sizeof want, "%s/models/tidy.yaml", root);
    assert_string_equal(out, want);
    assert_int_equal(locate_file("models", ".yaml", "./../scn/./mine.yaml", from, out,
                                 sizeof out, &err), 0);
    snprintf(want, sizeof want, "%s/scn/mine.yaml", root);
    assert_string_equal(out, want);
    /* lnk -> deep/er: lnk/../x.yaml is deep/x.yaml, not the x.yaml beside lnk */
    touch("deep/er/keep");
    touch("deep/x.yaml");
    touch("x.yaml");
    snprintf(link, sizeof link, "%s/lnk", root);
    snprintf(target, sizeof target, "%s/deep/er", root);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(locate_file("models", ".yaml", "lnk/../x.yaml", root, out, sizeof out,
                                 &err), 0);
    snprintf(want, sizeof want, "%s/lnk/../x.yaml", root);
    assert_string_equal(out, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_absolute_as_is),
        cmocka_unit_test(test_tidy_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
