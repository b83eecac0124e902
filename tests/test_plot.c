/* test_plot.c: the validation figures on the bundled study grid, drawn by the real gnuplot
 * (skipped where there is none), and the failure paths: no gnuplot on PATH, a gnuplot that
 * fails. A failed draw must leave the output directory as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "validate.h"

static const char *const figures[] = {"measured_vs_predicted", "step_vs_tp", "breakdown"};

typedef struct fixture {
    grid g;
    val_report r;
    char tmp[256];
    char *saved_path;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    tp_err err = {{0}};
    scn_opts opts;
    memset(&opts, 0, sizeof opts);
    if (grid_load("validate/h100-ctx2048.csv", &fx->g, &err)) {
        fprintf(stderr, "grid_load: %s\n", err.msg);
        free(fx);
        return -1;
    }
    if (val_run("scenarios/paper-additive.yaml", &opts, &fx->g, 15, &fx->r, &err)) {
        fprintf(stderr, "val_run: %s\n", err.msg);
        grid_free(&fx->g);
        free(fx);
        return -1;
    }
    snprintf(fx->tmp, sizeof fx->tmp, "/tmp/tpsim-test-plot.XXXXXX");
    if (!mkdtemp(fx->tmp)) {
        val_free(&fx->r);
        grid_free(&fx->g);
        free(fx);
        return -1;
    }
    const char *p = getenv("PATH");
    fx->saved_path = strdup(p ? p : "/usr/local/bin:/usr/bin:/bin");
    *state = fx;
    return 0;
}

static void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int teardown(void **state)
{
    fixture *fx = *state;
    setenv("PATH", fx->saved_path, 1);
    rm_rf(fx->tmp);
    free(fx->saved_path);
    val_free(&fx->r);
    grid_free(&fx->g);
    free(fx);
    return 0;
}

static void subdir(const fixture *fx, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", fx->tmp, name);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* The file's first `cap` bytes (NUL-terminated); its size, or -1. */
static long read_head(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t got = fread(buf, 1, cap - 1, f);
    buf[got] = '\0';
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return size;
}

static void assert_one_line(const tp_err *err)
{
    assert_true(err->msg[0] != '\0');
    assert_null(strchr(err->msg, '\n'));
}

static void assert_no_images(const char *dir)
{
    static const char *const ext[] = {"png", "svg"};
    for (int i = 0; i < 3; i++)
        for (int e = 0; e < 2; e++) {
            char p[1024];
            snprintf(p, sizeof p, "%s/%s.%s", dir, figures[i], ext[e]);
            if (access(p, F_OK) == 0) fail_msg("%s exists after a failed draw", p);
        }
}

static void test_report_is_the_study(void **state)
{
    fixture *fx = *state;
    /* the figures' numbers: TP-2 passes, TP-4 fails, the step barely shrinks */
    assert_int_equal(fx->r.n_cells, 8);
    assert_int_equal(fx->r.n_configs, 2);
    assert_true(fx->r.configs[0].pass);
    assert_false(fx->r.configs[1].pass);
    assert_int_equal(fx->r.shrink_from_tp, 2);
    assert_int_equal(fx->r.shrink_to_tp, 4);
    assert_true(fx->r.shrink_measured < 1.2);
    assert_true(fx->r.shrink_predicted > 1.8);
}

/* A figure set leaves the signal mask as it found it: plot_set_install holds the guarded
 * signals while the set moves in, and plot_set_end must give them back on every path. */
static void assert_signals_unblocked(void)
{
    sigset_t m;
    assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &m), 0);
    assert_false(sigismember(&m, SIGINT));
    assert_false(sigismember(&m, SIGTERM));
    assert_false(sigismember(&m, SIGHUP));
}

static void test_draws_all_figures(void **state)
{
    fixture *fx = *state;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) skip();
    char dir[512];
    subdir(fx, "figs/nested", dir, sizeof dir); /* created if missing, parents too */
    tp_err err = {{0}};
    int rc = plot_validation(&fx->r, dir, &err);
    if (rc) fail_msg("plot_validation: %s", err.msg);
    assert_signals_unblocked();
    for (int i = 0; i < 3; i++) {
        char p[1024], head[256];
        snprintf(p, sizeof p, "%s/%s.png", dir, figures[i]);
        long size = read_head(p, head, sizeof head);
        if (size <= 8) fail_msg("%s: missing or empty (%ld bytes)", p, size);
        assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
        snprintf(p, sizeof p, "%s/%s.svg", dir, figures[i]);
        size = read_head(p, head, sizeof head);
        if (size <= 0) fail_msg("%s: missing or empty", p);
        if (strncmp(head, "<?xml", 5) != 0 && !strstr(head, "<svg"))
            fail_msg("%s: not SVG: %.40s", p, head);
        /* the data and the script that drew it are kept */
        snprintf(p, sizeof p, "%s/%s.dat", dir, figures[i]);
        assert_true(read_head(p, head, sizeof head) > 0);
        snprintf(p, sizeof p, "%s/%s.gp", dir, figures[i]);
        assert_true(read_head(p, head, sizeof head) > 0);
    }
    /* the figures name each judged config's verdict as the text and JSON do (not pass/FAIL) */
    for (int i = 0; i < 2; i++) {
        static char text[1 << 16];
        char p[1024], want[64];
        snprintf(p, sizeof p, "%s/%s.gp", dir, i ? "breakdown" : "measured_vs_predicted");
        assert_true(read_head(p, text, sizeof text) > 0);
        for (int k = 0; k < fx->r.n_configs; k++) {
            if (!fx->r.configs[k].n_heldout) continue;
            snprintf(want, sizeof want, i ? "(%s)" : ", %s",
                     val_verdict_name(fx->r.configs[k].verdict));
            if (!strstr(text, want)) fail_msg("%s does not name the verdict %s", p, want);
        }
        assert_null(strstr(text, "(pass)"));
        assert_null(strstr(text, ", pass\""));
    }
    /* 12 files and no leftovers (no staging directory, no log, no temp images) */
    assert_int_equal(count_entries(dir), 12);

    /* the kept script re-draws its figure where it lies */
    char cmd[1200], png[1024];
    snprintf(png, sizeof png, "%s/breakdown.png", dir);
    unlink(png);
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot breakdown.gp >/dev/null 2>&1", dir);
    assert_int_equal(system(cmd), 0);
    char head[16];
    assert_true(read_head(png, head, sizeof head) > 8);

    /* drawing again over existing figures works */
    rc = plot_validation(&fx->r, dir, &err);
    if (rc) fail_msg("second plot_validation: %s", err.msg);
    assert_int_equal(count_entries(dir), 12);
}

static void test_no_gnuplot(void **state)
{
    fixture *fx = *state;
    char empty[512], dir[512], fresh[512];
    subdir(fx, "emptybin", empty, sizeof empty);
    subdir(fx, "nognuplot", dir, sizeof dir);
    subdir(fx, "never-made", fresh, sizeof fresh);
    assert_int_equal(mkdir(empty, 0755), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(setenv("PATH", empty, 1), 0);
    tp_err err = {{0}};
    int rc = plot_validation(&fx->r, dir, &err);
    setenv("PATH", fx->saved_path, 1);
    assert_int_equal(rc, -1);
    assert_one_line(&err);
    assert_non_null(strstr(err.msg, "gnuplot"));
    assert_no_images(dir);
    assert_int_equal(count_entries(dir), 0);

    /* nor is a missing output directory created */
    assert_int_equal(setenv("PATH", empty, 1), 0);
    rc = plot_validation(&fx->r, fresh, &err);
    setenv("PATH", fx->saved_path, 1);
    assert_int_equal(rc, -1);
    assert_int_equal(access(fresh, F_OK), -1);
}

/* A gnuplot that fails: its message comes back as the one line; old figures stay. */
static void test_gnuplot_fails(void **state)
{
    fixture *fx = *state;
    char bin[512], dir[512], fake[600], old[1024];
    subdir(fx, "fakebin", bin, sizeof bin);
    subdir(fx, "failing", dir, sizeof dir);
    assert_int_equal(mkdir(bin, 0755), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(fake, sizeof fake, "%s/gnuplot", bin);
    FILE *f = fopen(fake, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n"
          "echo 'plot x'\n"
          "echo '     ^' >&2\n"
          "echo '\"'\"$1\"'\" line 7: simulated gnuplot failure' >&2\n"
          "exit 1\n",
          f);
    fclose(f);
    assert_int_equal(chmod(fake, 0755), 0);
    snprintf(old, sizeof old, "%s/breakdown.png", dir);
    f = fopen(old, "w");
    assert_non_null(f);
    fputs("old figure", f);
    fclose(f);

    assert_int_equal(setenv("PATH", bin, 1), 0);
    tp_err err = {{0}};
    int rc = plot_validation(&fx->r, dir, &err);
    setenv("PATH", fx->saved_path, 1);
    assert_int_equal(rc, -1);
    assert_signals_unblocked();
    assert_one_line(&err);
    if (!strstr(err.msg, "simulated gnuplot failure") || !strstr(err.msg, "gnuplot"))
        fail_msg("message does not carry gnuplot's error: %s", err.msg);
    /* the old figure is untouched, nothing else is left behind */
    char head[32];
    assert_int_equal(read_head(old, head, sizeof head), 10);
    assert_string_equal(head, "old figure");
    assert_int_equal(count_entries(dir), 1);
}

/* A gnuplot that exits 0 but writes only some figures (here: the first PNG): the set fails
 * as a whole with one line, and the old set stays complete and unmixed. */
static void test_gnuplot_writes_nothing(void **state)
{
    fixture *fx = *state;
    static const char *const names[] = {"measured_vs_predicted", "step_vs_tp", "breakdown"};
    static const char *const exts[] = {"dat", "gp", "png", "svg"};
    char bin[512], dir[512], fake[600], p[1024];
    subdir(fx, "silentbin", bin, sizeof bin);
    subdir(fx, "silent", dir, sizeof dir);
    assert_int_equal(mkdir(bin, 0755), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(fake, sizeof fake, "%s/gnuplot", bin);
    FILE *f = fopen(fake, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n"
          "case \"$1\" in measured_vs_predicted.gp) echo png > measured_vs_predicted.png;; esac\n"
          "exit 0\n",
          f);
    fclose(f);
    assert_int_equal(chmod(fake, 0755), 0);
    for (int i = 0; i < 3; i++)
        for (int e = 0; e < 4; e++) {
            snprintf(p, sizeof p, "%s/%s.%s", dir, names[i], exts[e]);
            f = fopen(p, "w");
            assert_non_null(f);
            fputs("old figure", f);
            fclose(f);
        }
    assert_int_equal(setenv("PATH", bin, 1), 0);
    tp_err err = {{0}};
    int rc = plot_validation(&fx->r, dir, &err);
    setenv("PATH", fx->saved_path, 1);
    assert_int_equal(rc, -1);
    assert_one_line(&err);
    if (!strstr(err.msg, "gnuplot wrote no") || !strstr(err.msg, "unchanged"))
        fail_msg("unexpected message: %s", err.msg);
    for (int i = 0; i < 3; i++)
        for (int e = 0; e < 4; e++) {
            char head[32];
            snprintf(p, sizeof p, "%s/%s.%s", dir, names[i], exts[e]);
            assert_int_equal(read_head(p, head, sizeof head), 10);
            if (strcmp(head, "old figure")) fail_msg("%s was replaced", p);
        }
    assert_int_equal(count_entries(dir), 12); /* the old set, no staging directory left */
}

/* A folder named like one of the figures: refused before anything moves (a file cannot
 * replace a folder, so the renames would stop half way), the old set left whole. */
static void test_figure_name_taken_by_folder(void **state)
{
    fixture *fx = *state;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) skip();
    char dir[512], p[1024];
    subdir(fx, "taken", dir, sizeof dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(p, sizeof p, "%s/breakdown.svg", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/breakdown.dat", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("old data", f);
    fclose(f);
    tp_err err = {{0}};
    assert_int_equal(plot_validation(&fx->r, dir, &err), -1);
    assert_signals_unblocked();
    assert_one_line(&err);
    if (!strstr(err.msg, "breakdown.svg: is a directory")) fail_msg("message: %s", err.msg);
    char head[32];
    assert_int_equal(read_head(p, head, sizeof head), 8);
    assert_string_equal(head, "old data");
    assert_int_equal(count_entries(dir), 2);
}

static void test_refuses_empty_report(void **state)
{
    fixture *fx = *state;
    val_report empty;
    memset(&empty, 0, sizeof empty);
    char dir[512];
    subdir(fx, "emptyreport", dir, sizeof dir);
    tp_err err = {{0}};
    assert_int_equal(plot_validation(&empty, dir, &err), -1);
    assert_one_line(&err);
    assert_int_equal(access(dir, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_is_the_study),
        cmocka_unit_test(test_draws_all_figures),
        cmocka_unit_test(test_no_gnuplot),
        cmocka_unit_test(test_gnuplot_fails),
        cmocka_unit_test(test_figure_name_taken_by_folder),
        cmocka_unit_test(test_gnuplot_writes_nothing),
        cmocka_unit_test(test_refuses_empty_report),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
