/* test_cli.c: the flag layer returns flags and operands in the user's order, takes
 * --name=value, --name value, -o value, -ovalue, unique prefixes and `--`, and refuses an
 * unknown flag, a missing value, a value to a switch and an ambiguous prefix with one line;
 * a second pass in the same process starts afresh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"

enum { F_HELP, F_TP, F_STEPS, F_SEED, F_SET, F_OUT };
static const cli_flag flags[] = {{"help", 'h', 0, NULL, "this help"},
                                 {"tp", 0, 1, "K", "tensor-parallel degree"},
                                 {"steps", 0, 1, "N", "steps"},
                                 {"seed", 0, 1, "S", "the seed"},
                                 {"set", 0, 1, "KEY=VALUE", "a key\nrepeatable"},
                                 {"output", 'o', 1, "FILE", "where"},
                                 CLI_END};

/* Parse argv; write "code:value;" per item into out (F_* as a digit, O for an operand). */
static int trace(int argc, char **argv, char *out, size_t cap, tp_err *err)
{
    cli_args ca;
    const char *v;
    int f;
    out[0] = '\0';
    assert_int_equal(cli_begin(&ca, "run", "tpsim run --help", flags, argc, argv, err), 0);
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        if (f == CLI_ERROR) return -1;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%c:%s;", f == CLI_OPERAND ? 'O' : '0' + f, v ? v : "-");
    }
    return 0;
}

static void test_order_and_forms(void **state)
{
    (void)state;
    char *argv[] = {"run", "--set", "a=1", "S.yaml", "--tp=4", "--set=b=2", "--ste", "3",
                    "-o", "-", "-oFILE", "--output=x", "-h", NULL};
    char out[512];
    tp_err err;
    assert_int_equal(trace(13, argv, out, sizeof out, &err), 0);
    assert_string_equal(out, "4:a=1;O:S.yaml;1:4;4:b=2;2:3;5:-;5:FILE;5:x;0:-;");
}

static void test_double_dash(void **state)
{
    (void)state;
    char *argv[] = {"run", "--tp", "2", "--", "-dash.yaml", "--tp", "-", NULL};
    char out[256];
    tp_err err;
    assert_int_equal(trace(7, argv, out, sizeof out, &err), 0);
    assert_string_equal(out, "1:2;O:-dash.yaml;O:--tp;O:-;");
}

static void test_value_that_looks_like_a_flag(void **state)
{
    (void)state;
    char *argv[] = {"run", "--seed", "-1", "--tp", "--steps", NULL};
    char out[256];
    tp_err err;
    /* a flag that takes a value takes the next word, whatever it looks like */
    assert_int_equal(trace(5, argv, out, sizeof out, &err), 0);
    assert_string_equal(out, "3:-1;1:--steps;");
}

static void expect_refused(int argc, char **argv, const char *msg)
{
    char out[256];
    tp_err err = {{0}};
    assert_int_equal(trace(argc, argv, out, sizeof out, &err), -1);
    assert_string_equal(err.msg, msg);
}

static void test_refusals(void **state)
{
    (void)state;
    char *unknown[] = {"run", "S", "--bogus=3", NULL};
    expect_refused(3, unknown, "run: unknown option '--bogus' (see tpsim run --help)");
    char *short_unknown[] = {"run", "-x", NULL};
    expect_refused(2, short_unknown, "run: unknown option '-x' (see tpsim run --help)");
    char *missing[] = {"run", "S", "--tp", NULL};
    expect_refused(3, missing, "--tp: missing value");
    char *missing_short[] = {"run", "-o", NULL};
    expect_refused(2, missing_short, "-o: missing value");
    char *to_switch[] = {"run", "--help=1", NULL};
    expect_refused(2, to_switch, "--help takes no value");
    char *ambiguous[] = {"run", "--s", "1", NULL};
    expect_refused(3, ambiguous, "run: '--s' is ambiguous: --steps, --seed, --set");
}

static void test_second_pass_starts_afresh(void **state)
{
    (void)state;
    char *a[] = {"run", "--tp", "2", "x", NULL};
    char *b[] = {"run", "y", "--tp", "8", NULL};
    char out[256];
    tp_err err;
    assert_int_equal(trace(4, a, out, sizeof out, &err), 0);
    assert_string_equal(out, "1:2;O:x;");
    assert_int_equal(trace(4, b, out, sizeof out, &err), 0);
    assert_string_equal(out, "O:y;1:8;");
}

static void test_stdout_dash(void **state)
{
    (void)state;
    assert_true(cli_is_stdout("-"));
    assert_false(cli_is_stdout("-x"));
    assert_false(cli_is_stdout("out.csv"));
    assert_false(cli_is_stdout(NULL));
}

/* --help's flag list is the table: every entry once, in order, with its value's name and its
 * help (a continuation line in the help's column), between the usage and the text. */
static void test_help_lists_the_table(void **state)
{
    (void)state;
    char buf[2048] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    cli_help(f, "usage: tpsim run SCENARIO [flags]\n", flags, "TEXT\n");
    fclose(f);
    const char *want = "usage: tpsim run SCENARIO [flags]\n"
                       "  -h, --help                this help\n"
                       "  --tp K                    tensor-parallel degree\n"
                       "  --steps N                 steps\n"
                       "  --seed S                  the seed\n"
                       "  --set KEY=VALUE           a key\n"
                       "                            repeatable\n"
                       "  -o, --output FILE         where\n"
                       "TEXT\n";
    assert_string_equal(buf, want);
}

/* A flag the help could not list is refused when the command starts, so every use fails. */
static void test_flag_without_help_refused(void **state)
{
    (void)state;
    static const cli_flag bare[] = {{"tp", 0, 1, "K", "degree"}, {"quiet", 0, 0, NULL, NULL},
                                    CLI_END};
    static const cli_flag no_arg[] = {{"tp", 0, 1, NULL, "degree"}, CLI_END};
    char *argv[] = {"run", NULL};
    cli_args ca;
    tp_err err = {{0}};
    assert_int_equal(cli_begin(&ca, "run", NULL, bare, 1, argv, &err), -1);
    assert_string_equal(err.msg, "run: --quiet has no help text in its flag table");
    assert_int_equal(cli_begin(&ca, "run", NULL, no_arg, 1, argv, &err), -1);
    assert_int_equal(cli_begin(&ca, "run", NULL, flags, 1, argv, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_forms),
        cmocka_unit_test(test_double_dash),
        cmocka_unit_test(test_value_that_looks_like_a_flag),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_second_pass_starts_afresh),
        cmocka_unit_test(test_stdout_dash),
        cmocka_unit_test(test_help_lists_the_table),
        cmocka_unit_test(test_flag_without_help_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
