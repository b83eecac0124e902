/* test_phase.c: the per-step host phases (sim/phase.h): a phase's mean at batch B and the
 * phases' sum, by hand; a host-phase file read into its scenario keys, values and positions
 * and its declarations, and each way a file is refused (one file:line:col line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "phase.h"

static void test_batch_terms(void **state)
{
    (void)state;
    phase_model m;
    memset(&m, 0, sizeof m);
    m.base[2] = dist_const(300e-6); /* prepare_inputs 300 us + 19.125 us per sequence */
    m.per_seq_s[2] = 19.125e-6;
    m.base[4] = dist_const(96.77e-6); /* output_processing 96.77 us + 103.23 us per sequence */
    m.per_seq_s[4] = 103.23e-6;
    /* at batch 32: 300 + 612 = 912 us and 96.77 + 3303.36 = 3400.13 us, 4312.13 us in all */
    assert_true(fabs(phase_at(&m, 2, 32).mean - 912e-6) < 1e-12);
    assert_true(fabs(phase_at(&m, 4, 32).mean - 3400.13e-6) < 1e-12);
    assert_true(fabs(phase_total_s(&m, 32) - 4312.13e-6) < 1e-12);
    assert_true(fabs(phase_total_s(&m, 0) - 396.77e-6) < 1e-12);
}

/* Write text to a fresh file; its path into out. */
static void write_file(char *out, size_t cap, const char *text)
{
    snprintf(out, cap, "/tmp/test_phase_XXXXXX");
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static const char *const good =
    "kind: host-phases\n"
    "phases:\n"
    "  schedule: {dist: constant, mean_us: 870}\n"
    "  prepare_inputs: {dist: constant, mean_us: 300, per_seq_us: 19.125}\n"
    "sourced:\n"
    "  - {key: phases.prepare_inputs.mean_us, source: \"vLLM #6915\"}\n"
    "  - {key: phases.prepare_inputs.per_seq_us, source: \"a trace\"}\n"
    "assumed:\n"
    "  - {key: phases.schedule.mean_us, why: \"untimed\"}\n";

static void test_file_read(void **state)
{
    (void)state;
    char path[64];
    write_file(path, sizeof path, good);
    phase_file *pf = malloc(sizeof *pf);
    tp_err err;
    assert_int_equal(phase_file_load(path, pf, &err), 0);
    /* schedule: dist, mean_us; prepare_inputs: dist, mean_us, per_seq_us, in the file's order */
    assert_int_equal(pf->n_items, 5);
    assert_string_equal(pf->items[1].key, "host.phases.schedule.mean_us");
    assert_string_equal(pf->items[1].text, "870");
    assert_int_equal(pf->items[1].line, 3);
    assert_string_equal(pf->items[4].key, "host.phases.prepare_inputs.per_seq_us");
    assert_string_equal(pf->items[4].text, "19.125");
    assert_int_equal(pf->items[4].line, 4);
    assert_int_equal(pf->n_decls, 3);
    assert_string_equal(pf->decls[0].key, "host.phases.prepare_inputs.mean_us");
    assert_int_equal(pf->decls[0].assumed, 0);
    assert_string_equal(pf->decls[0].note, "vLLM #6915");
    assert_string_equal(pf->decls[2].key, "host.phases.schedule.mean_us");
    assert_int_equal(pf->decls[2].assumed, 1);
    assert_int_equal(pf->decls[2].line, 9);
    free(pf);
    unlink(path);
}

/* text with `from` replaced by `to` must be refused with a message containing `want` */
static void refused(const char *from, const char *to, const char *want)
{
    char text[2048], path[64];
    const char *at = strstr(good, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    write_file(path, sizeof path, text);
    phase_file *pf = malloc(sizeof *pf);
    tp_err err;
    assert_int_equal(phase_file_load(path, pf, &err), -1);
    if (!strstr(err.msg, want) || !strstr(err.msg, path)) fail_msg("%s: '%s'", want, err.msg);
    free(pf);
    unlink(path);
}

static void test_file_refused(void **state)
{
    (void)state;
    refused("kind: host-phases", "kind: hardware", ":1:7: kind: 'hardware', expected host-phases");
    refused("assumed:\n  - {key: phases.schedule.mean_us, why: \"untimed\"}\n", "",
            ":3:39: phases.schedule.mean_us: a number neither sourced nor assumed");
    refused("phases.prepare_inputs.per_seq_us, source", "phases.prepare_inputs.mean_us, source",
            ":7:11: sourced.1.key: 'phases.prepare_inputs.mean_us' is already declared (line 6)");
    refused("  schedule:", "  scheduler:", "unknown key 'scheduler'");
    refused("mean_us: 870}", "mean_us: 870, bogus: 1}", "unknown key 'bogus'");
    refused("phases.schedule.mean_us, why", "phases.schedule.dist, why",
            "names no number under phases");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_terms),
        cmocka_unit_test(test_file_read),
        cmocka_unit_test(test_file_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
