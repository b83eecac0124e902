/* test_protocol.c: the validation protocols are the entries of val_protocols[] (validate.h):
 * each parses and names itself, the messages list every entry, and the folds, roles and
 * judged configs each entry gives a four-cell grid are the ones the contract in validate.h
 * states, worked out by hand below for fit.cells {TP-2 b1, TP-4 b1}. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "val_impl.h"
#include "validate.h"

/* cells 0, 1: config "H100 TP-2" batch 1, 2; cells 2, 3: "H100 TP-4" batch 1, 2; ctx 2048 */
typedef struct fixture {
    grid g;
    grid_cell cells[4];
    scenario *spec;
    val_report r;
} fixture;

static void fixture_init(fixture *fx, const char *protocol, int n_fit_cells)
{
    memset(fx, 0, sizeof *fx);
    for (int i = 0; i < 4; i++) {
        grid_cell *c = &fx->cells[i];
        c->tp = i < 2 ? 2 : 4;
        c->batch = i % 2 + 1;
        c->ctx = 2048;
        c->measured_ms = 20;
        snprintf(c->config, sizeof c->config, "H100 TP-%ld", c->tp);
    }
    snprintf(fx->g.path, sizeof fx->g.path, "four.csv");
    fx->g.cells = fx->cells;
    fx->g.n = 4;
    fx->spec = calloc(1, sizeof *fx->spec);
    assert_non_null(fx->spec);
    for (int k = 0; k < n_fit_cells; k++)
        fx->spec->fit_cells[k] = (scenario_fit_cell){2 + 2 * k, 1, 2048, 1, 1};
    fx->spec->n_fit_cells = n_fit_cells;
    tp_err err = {{0}};
    fx->r.g = &fx->g;
    assert_int_equal(val_protocol_parse(protocol, &fx->r.protocol, &err), 0);
    for (int i = 0; i < 4; i++) assert_non_null(val_config_for(&fx->r, &fx->cells[i], &err));
}

static void fixture_folds(fixture *fx)
{
    tp_err err = {{0}};
    assert_int_equal(val_make_folds(&fx->r, fx->spec, &err), 0);
    for (int k = 0; k < fx->r.n_configs; k++) fx->r.configs[k].fold = val_home_fold(&fx->r, k);
}

static void fixture_free(fixture *fx)
{
    for (int f = 0; f < fx->r.n_folds; f++) free(fx->r.folds[f].cal);
    free(fx->r.folds);
    free(fx->spec);
}

/* roles of the four cells, each in its config's fold; cal: the folds' calibration cells */
static void expect_roles(const fixture *fx, const val_role want[4])
{
    for (size_t i = 0; i < 4; i++) {
        int k = fx->cells[i].tp == 2 ? 0 : 1;
        assert_int_equal(val_role_of(&fx->r, fx->r.configs[k].fold, i), want[i]);
    }
}

static void expect_cal(const val_fold *fd, int n, size_t a, size_t b)
{
    assert_int_equal(fd->n_cal, n);
    if (n > 0) assert_int_equal(fd->cal[0], a);
    if (n > 1) assert_int_equal(fd->cal[1], b);
}

static void names_round_trip(void **state)
{
    (void)state;
    static const char *const texts[][2] = {{"within", "within"},
                                           {"loo", "loo"},
                                           {"transfer 2:4", "transfer 2:4"},
                                           {"4:2", "transfer 4:2"},
                                           {"2,4:8", "transfer 2,4:8"}};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        val_protocol p;
        tp_err err = {{0}};
        char name[96];
        assert_int_equal(val_protocol_parse(texts[i][0], &p, &err), 0);
        val_protocol_name(&p, name, sizeof name);
        assert_string_equal(name, texts[i][1]);
    }
    /* every entry: a switch parses from its name, one with a value from its example */
    for (int i = 0; i < val_n_protocols; i++) {
        const val_protocol_def *d = &val_protocols[i];
        val_protocol p;
        tp_err err = {{0}};
        assert_non_null(d->help);
        assert_true(!d->value || d->example);
        assert_int_equal(val_protocol_parse(d->value ? d->example : d->name, &p, &err), 0);
        assert_int_equal(p.index, i);
        assert_ptr_equal(val_protocol_of(&p), d);
    }
    val_protocol zero;
    memset(&zero, 0, sizeof zero);
    char name[96];
    val_protocol_name(&zero, name, sizeof name);
    assert_string_equal(name, "within"); /* the default */
}

static void messages_list_every_protocol(void **state)
{
    (void)state;
    val_protocol p;
    tp_err err = {{0}};
    assert_int_equal(val_protocol_parse("sideways", &p, &err), -1);
    assert_string_equal(
        err.msg, "protocol 'sideways', expected within, loo or transfer A:B (e.g. transfer 2:4)");
    assert_int_equal(val_protocol_parse("transfer loo", &p, &err), -1);
    assert_int_equal(val_protocol_parse("2:2", &p, &err), -1);
    assert_non_null(strstr(err.msg, "TP-2 is on both sides"));
    char flags[256];
    val_protocol_flags(flags, sizeof flags);
    assert_string_equal(flags, "--within, --transfer A:B, --loo");
}

static void within_folds(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, "within", 2);
    fixture_folds(&fx);
    assert_int_equal(fx.r.n_folds, 1);
    assert_string_equal(fx.r.folds[0].label, "all configs");
    expect_cal(&fx.r.folds[0], 2, 0, 2);
    const val_role want[4] = {VAL_CALIBRATION, VAL_HELDOUT, VAL_CALIBRATION, VAL_HELDOUT};
    expect_roles(&fx, want);
    assert_true(val_judges_config(&fx.r, 0) && val_judges_config(&fx.r, 1));
    fixture_free(&fx);
}

static void transfer_folds(void **state)
{
    (void)state;
    fixture fx;
    /* 2:4: TP-4 b1 is a fit cell but not of degree 2, so only TP-2 b1 calibrates */
    fixture_init(&fx, "transfer 2:4", 2);
    fixture_folds(&fx);
    assert_int_equal(fx.r.n_folds, 1);
    expect_cal(&fx.r.folds[0], 1, 0, 0);
    assert_int_equal(fx.r.folds[0].cal_all_of_from, 0);
    const val_role want[4] = {VAL_CALIBRATION, VAL_UNUSED, VAL_HELDOUT, VAL_HELDOUT};
    expect_roles(&fx, want);
    assert_false(val_judges_config(&fx.r, 0));
    assert_true(val_judges_config(&fx.r, 1));
    fixture_free(&fx);
    /* no fit cell: every cell of degree 2 calibrates */
    fixture_init(&fx, "transfer 2:4", 0);
    fixture_folds(&fx);
    expect_cal(&fx.r.folds[0], 2, 0, 1);
    assert_int_equal(fx.r.folds[0].cal_all_of_from, 1);
    fixture_free(&fx);
    /* a degree the grid lacks */
    fixture_init(&fx, "transfer 2:8", 2);
    tp_err err = {{0}};
    assert_int_equal(val_make_folds(&fx.r, fx.spec, &err), -1);
    assert_string_equal(err.msg, "transfer 2:8: the grid four.csv has no cell of the TP degree(s) "
                                 "judged, expected degrees it measured");
    fixture_free(&fx);
}

static void loo_folds(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, "loo", 2);
    fixture_folds(&fx);
    assert_int_equal(fx.r.n_folds, 2);
    assert_string_equal(fx.r.folds[0].label, "without H100 TP-2");
    assert_string_equal(fx.r.folds[1].label, "without H100 TP-4");
    expect_cal(&fx.r.folds[0], 1, 2, 0); /* without TP-2: TP-4 b1 */
    expect_cal(&fx.r.folds[1], 1, 0, 0); /* without TP-4: TP-2 b1 */
    assert_int_equal(fx.r.configs[0].fold, 0);
    assert_int_equal(fx.r.configs[1].fold, 1);
    const val_role want[4] = {VAL_HELDOUT, VAL_HELDOUT, VAL_HELDOUT, VAL_HELDOUT};
    expect_roles(&fx, want);
    /* in the other config's fold a cell is not judged */
    assert_int_equal(val_role_of(&fx.r, 1, 1), VAL_UNUSED);
    assert_true(val_judges_config(&fx.r, 0) && val_judges_config(&fx.r, 1));
    fixture_free(&fx);
    fixture_init(&fx, "loo", 0); /* no fit cell: all the other config's cells */
    fixture_folds(&fx);
    expect_cal(&fx.r.folds[0], 2, 2, 3);
    assert_int_equal(fx.r.folds[0].cal_all_of_from, 1);
    fixture_free(&fx);
    /* one config */
    fixture_init(&fx, "loo", 1);
    fx.r.n_configs = 1;
    fx.g.n = 2;
    tp_err err = {{0}};
    assert_int_equal(val_make_folds(&fx.r, fx.spec, &err), -1);
    assert_string_equal(err.msg, "loo: the grid four.csv has one config, expected at least two");
    fixture_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_round_trip),
        cmocka_unit_test(messages_list_every_protocol),
        cmocka_unit_test(within_folds),
        cmocka_unit_test(transfer_folds),
        cmocka_unit_test(loo_folds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
