/* test_cfg.c: the strict YAML loader, --set overrides and typed getters (base/cfg.h).
 * Every refusal must be one line, "file:line:col: ...", at the right place, saying what is
 * wrong and what is expected. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfg.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static cfg_doc *load(const char *text, tp_err *err)
{
    memset(err, 0, sizeof *err);
    return cfg_load_string("t.yaml", text, strlen(text), err);
}

/* The message is one line, starts with `prefix` (the position) and contains each of the
 * NULL-terminated fragments. */
static void assert_msg(const tp_err *err, const char *prefix, ...)
{
    if (strchr(err->msg, '\n')) fail_msg("message has a newline: '%s'", err->msg);
    if (strncmp(err->msg, prefix, strlen(prefix)) != 0)
        fail_msg("message '%s' does not start with '%s'", err->msg, prefix);
    va_list ap;
    va_start(ap, prefix);
    for (const char *want; (want = va_arg(ap, const char *)) != NULL;)
        if (!strstr(err->msg, want)) {
            va_end(ap);
            fail_msg("message '%s' lacks '%s'", err->msg, want);
        }
    va_end(ap);
}

/* Loading `text` fails with a message as in assert_msg. */
#define LOAD_FAILS(text, ...)                                                                    \
    do {                                                                                         \
        tp_err e_;                                                                               \
        cfg_doc *d_ = load(text, &e_);                                                           \
        if (d_) {                                                                                \
            cfg_free(d_);                                                                        \
            fail_msg("loaded, expected a refusal: %s", text);                                    \
        }                                                                                        \
        assert_msg(&e_, __VA_ARGS__, (const char *)NULL);                                       \
    } while (0)

static cfg_doc *must_load(const char *text)
{
    tp_err e;
    cfg_doc *d = load(text, &e);
    if (!d) fail_msg("refused: %s", e.msg);
    return d;
}

/* ---------------------------------------------------------------------------------------------
 * Happy path
 * ------------------------------------------------------------------------------------------- */

static const char good[] = "# a comment\n"
                           "name: demo\n"
                           "count: 42\n"
                           "ratio: 0.25\n"
                           "neg: -3.5e2\n"
                           "on: true\n"
                           "off: false\n"
                           "kind: lognormal\n"
                           "host:\n"
                           "  launch: {dist: constant, mean_us: 5}\n"
                           "list: [a, b, c]\n"
                           "quoted: \"12\"\n";

static void test_happy_values(void **state)
{
    (void)state;
    tp_err e = {{0}};
    cfg_doc *d = must_load(good);
    cfg_node *r = cfg_root(d);
    assert_int_equal(r->kind, CFG_MAP);
    assert_string_equal(cfg_file(d), "t.yaml");
    const char *s = NULL;
    long l = 0;
    double x = 0;
    int b = -1, k = -1;
    assert_int_equal(cfg_string(r, "name", 1, &s, &e), 0);
    assert_string_equal(s, "demo");
    assert_int_equal(cfg_long(r, "count", 1, 0, 100, &l, &e), 0);
    assert_int_equal(l, 42);
    assert_int_equal(cfg_double(r, "ratio", 1, 0, 1, &x, &e), 0);
    assert_true(x == 0.25);
    assert_int_equal(cfg_double(r, "neg", 1, -1e3, 0, &x, &e), 0);
    assert_true(x == -350.0);
    assert_int_equal(cfg_bool(r, "on", 1, &b, &e), 0);
    assert_int_equal(b, 1);
    assert_int_equal(cfg_bool(r, "off", 1, &b, &e), 0);
    assert_int_equal(b, 0);
    static const char *const kinds[] = {"constant", "uniform", "normal", "lognormal", NULL};
    assert_int_equal(cfg_as_choice(cfg_get(r, "kind"), kinds, &k, &e), 0);
    assert_int_equal(k, 3);
    /* a quoted scalar is still a string */
    assert_int_equal(cfg_string(r, "quoted", 1, &s, &e), 0);
    assert_string_equal(s, "12");
    /* nested nodes know their path and position */
    cfg_node *launch = cfg_get(cfg_get(r, "host"), "launch");
    assert_non_null(launch);
    assert_string_equal(launch->path, "host.launch");
    cfg_node *mean = cfg_get(launch, "mean_us");
    assert_string_equal(mean->path, "host.launch.mean_us");
    assert_int_equal(mean->line, 10);
    assert_int_equal(mean->col, 37);
    cfg_node *list = cfg_get(r, "list");
    assert_int_equal(list->kind, CFG_SEQ);
    assert_int_equal(list->n, 3);
    assert_string_equal(list->vals[2]->path, "list.2");
    assert_string_equal(list->vals[2]->text, "c");
    /* absent + optional: unchanged, success */
    l = 7;
    assert_int_equal(cfg_long(r, "absent", 0, 0, 10, &l, &e), 0);
    assert_int_equal(l, 7);
    assert_null(cfg_get(r, "absent"));
    static const char *const allowed[] = {"name", "count", "ratio", "neg", "on", "off",
                                          "kind", "host", "list", "quoted", NULL};
    assert_int_equal(cfg_expect_map(r, allowed, &e), 0);
    cfg_free(d);
}

static void test_source_field(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("source: a paper\n");
    assert_int_equal(cfg_source(cfg_root(d), 1, &e), 0);
    cfg_free(d);
    d = must_load("source: {how: fit, where: log}\n");
    assert_int_equal(cfg_source(cfg_root(d), 1, &e), 0);
    cfg_free(d);
    d = must_load("x: 1\n");
    assert_int_equal(cfg_source(cfg_root(d), 0, &e), 0);
    assert_int_equal(cfg_source(cfg_root(d), 1, &e), -1);
    assert_msg(&e, "t.yaml:1:1: ", "missing required key 'source'", (const char *)NULL);
    cfg_free(d);
    d = must_load("source:\n  how: [a, b]\n");
    assert_int_equal(cfg_source(cfg_root(d), 1, &e), -1);
    assert_msg(&e, "t.yaml:2:8: source.how: ", "a list", "expected a scalar", (const char *)NULL);
    cfg_free(d);
}

/* ---------------------------------------------------------------------------------------------
 * Load-time refusals
 * ------------------------------------------------------------------------------------------- */

static void test_syntax_error(void **state)
{
    (void)state;
    LOAD_FAILS("a: 1\nb: [1, 2\nc: 3\n", "t.yaml:3:2: ", "YAML syntax error", "']'");
    LOAD_FAILS("a: 1\nb:\n\tc: 2\n", "t.yaml:3:1: ", "a tab: YAML indents with spaces only");
    LOAD_FAILS("a: 1\n  b: 2\n", "t.yaml:2:4: ", "YAML syntax error");
    LOAD_FAILS("a: *nope\n", "t.yaml:1:4: ", "YAML syntax error", "undefined alias");
}

/* libyaml reports bad bytes with an offset, not a line: the position is still the real one. */
static void test_reader_error_position(void **state)
{
    (void)state;
    LOAD_FAILS("a: 1\nb: 2\nc: \xff\xfe\n", "t.yaml:3:4: ", "UTF-8");
    LOAD_FAILS("a: 1\nb: x\x01y\n", "t.yaml:2:5: ", "control characters");
    /* an escaped NUL gets past libyaml: refused by the loader */
    LOAD_FAILS("a: 1\nb: \"x\\0y\"\n", "t.yaml:2:4: b: ", "NUL byte");
}

static void test_duplicate_key(void **state)
{
    (void)state;
    LOAD_FAILS("a: 1\nb: 2\na: 3\n", "t.yaml:3:1: ", "duplicate key 'a'", "first at line 1",
               "once");
    LOAD_FAILS("top:\n  x: 1\n  y: 2\n  x: 3\n", "t.yaml:4:3: ", "duplicate key 'x'",
               "first at line 2");
    /* the same name in different mappings is fine */
    cfg_free(must_load("a: {x: 1}\nb: {x: 2}\n"));
}

static void test_non_scalar_key(void **state)
{
    (void)state;
    LOAD_FAILS("top:\n  ? [a, b]\n  : 1\n", "t.yaml:2:5: top: ", "mapping key");
}

static void test_document_shape(void **state)
{
    (void)state;
    LOAD_FAILS("", "t.yaml:1:1: ", "empty file", "expected a YAML mapping");
    LOAD_FAILS("# only a comment\n\n", "t.yaml:1:1: ", "empty file");
    LOAD_FAILS("- a\n- b\n", "t.yaml:1:1: ", "top level must be a mapping");
    LOAD_FAILS("just a string\n", "t.yaml:1:1: ", "top level must be a mapping");
    LOAD_FAILS("a: 1\n---\nb: 2\n", "t.yaml:3:1: ", "second YAML document", "exactly one");
    LOAD_FAILS("a: 1\n---\nb: [\n", "t.yaml:", "YAML syntax error");
    /* an explicit start marker and an end marker alone are one document */
    cfg_free(must_load("---\na: 1\n...\n"));
}

static char *nested(int levels)
{
    char *s = malloc((size_t)levels * 2 + 16);
    assert_non_null(s);
    char *p = s + sprintf(s, "a: ");
    for (int i = 0; i < levels; i++) *p++ = '[';
    for (int i = 0; i < levels; i++) *p++ = ']';
    strcpy(p, "\n");
    return s;
}

static void test_depth_limit(void **state)
{
    (void)state;
    /* the root mapping is depth 0, a's list is depth 1: CFG_MAX_DEPTH lists nest fine */
    char *ok = nested(CFG_MAX_DEPTH);
    cfg_free(must_load(ok));
    free(ok);
    char *deep = nested(CFG_MAX_DEPTH + 1);
    char pos[64];
    snprintf(pos, sizeof pos, "t.yaml:1:%d: ", 3 + CFG_MAX_DEPTH + 1);
    LOAD_FAILS(deep, pos, "nesting deeper than 32 levels");
    free(deep);
    /* a recursive alias would be an infinitely deep tree */
    LOAD_FAILS("a: &x [*x]\n", "t.yaml:1:4: ", "an alias inside its own anchor");
}

/* 100000 levels: libyaml alone takes O(depth^2) to load this; the refusal must be fast. */
static void test_depth_limit_is_fast(void **state)
{
    (void)state;
    char *deep = nested(100000);
    LOAD_FAILS(deep, "t.yaml:1:36: ", "nesting deeper");
    free(deep);
}

/* Billion laughs: 9^10 nodes if aliases were expanded. An alias is its anchor's node, so
 * the tree shares it: the bomb loads as the 100-odd nodes it is written with. */
static void test_alias_bomb(void **state)
{
    (void)state;
    char text[2048];
    size_t used =
        (size_t)snprintf(text, sizeof text, "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
    for (char c = 'b'; c <= 'j'; c++) {
        used += (size_t)snprintf(text + used, sizeof text - used, "%c: &%c [", c, c);
        for (int i = 0; i < 9; i++)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s*%c", i ? "," : "", c - 1);
        used += (size_t)snprintf(text + used, sizeof text - used, "]\n");
    }
    assert_true(used < sizeof text - 1);
    cfg_doc *bomb = must_load(text);
    cfg_node *j = cfg_get(cfg_root(bomb), "j"), *i = cfg_get(cfg_root(bomb), "i");
    assert_int_equal(j->n, 9);
    for (size_t k = 0; k < 9; k++) assert_ptr_equal(j->vals[k], i); /* shared, not copied */
    cfg_free(bomb);
    /* an alias reads as its anchor, and messages name where the anchor is written */
    cfg_doc *d = must_load("a: &x {v: 1}\nb: *x\n");
    cfg_node *bv = cfg_get(cfg_get(cfg_root(d), "b"), "v");
    assert_non_null(bv);
    assert_string_equal(bv->path, "a.v");
    assert_int_equal(bv->line, 1);
    assert_string_equal(bv->text, "1");
    cfg_free(d);
}

/* A long scalar aliased many times: gigabytes if copied, one 1 MiB scalar when shared. */
static void test_alias_byte_bomb(void **state)
{
    (void)state;
    size_t big = 1u << 20;
    char *text = malloc(big + 1024);
    assert_non_null(text);
    size_t used = (size_t)sprintf(text, "a: &a \"");
    memset(text + used, 'x', big);
    used += big;
    used += (size_t)sprintf(text + used, "\"\n");
    for (char c = 'b'; c <= 'f'; c++) /* 8^5 = 32768 copies of 1 MiB */
        used += (size_t)sprintf(text + used, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c,
                                c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
    cfg_doc *d = must_load(text);
    cfg_node *f = cfg_get(cfg_root(d), "f");
    assert_int_equal(f->n, 8);
    assert_ptr_equal(f->vals[7], cfg_get(cfg_root(d), "e"));
    cfg_free(d);
    free(text);
}

static void test_many_keys(void **state)
{
    (void)state;
    size_t n = 50000, cap = n * 16;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, cap - used, "k%zu: 1\n", i);
    LOAD_FAILS(text, "t.yaml:1:1: ", "keys in one mapping");
    free(text);
}

/* ---------------------------------------------------------------------------------------------
 * Schema checks on a loaded tree
 * ------------------------------------------------------------------------------------------- */

static void test_unknown_key(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("gpu:\n  hbm_efficiency: 0.7\n  hbm_eff: 0.7\n");
    static const char *const allowed[] = {"hbm_efficiency", "flops_efficiency", NULL};
    assert_int_equal(cfg_expect_map(cfg_get(cfg_root(d), "gpu"), allowed, &e), -1);
    assert_msg(&e, "t.yaml:3:3: ", "unknown key 'hbm_eff'", "in gpu",
               "expected one of: hbm_efficiency, flops_efficiency", (const char *)NULL);
    static const char *const root_keys[] = {"name", NULL};
    assert_int_equal(cfg_expect_map(cfg_root(d), root_keys, &e), -1);
    assert_msg(&e, "t.yaml:1:1: ", "unknown key 'gpu'", "expected one of: name",
               (const char *)NULL);
    cfg_free(d);
}

static void test_unknown_key_long_list(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("zzz: 1\n");
    static const char *const many[] = {
        "aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccc",
        "dddddddddddddddddddd", "eeeeeeeeeeeeeeeeeeee", "ffffffffffffffffffff",
        "gggggggggggggggggggg", "hhhhhhhhhhhhhhhhhhhh", "iiiiiiiiiiiiiiiiiiii",
        "jjjjjjjjjjjjjjjjjjjj", "kkkkkkkkkkkkkkkkkkkk", "llllllllllllllllllll",
        "mmmmmmmmmmmmmmmmmmmm", "nnnnnnnnnnnnnnnnnnnn", NULL};
    assert_int_equal(cfg_expect_map(cfg_root(d), many, &e), -1);
    assert_msg(&e, "t.yaml:1:1: ", "unknown key 'zzz'", "aaaaaaaaaaaaaaaaaaaa", "...",
               (const char *)NULL);
    cfg_free(d);
}

static void test_wrong_type(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("num: {a: 1}\nhost: [1, 2]\nname: [x]\nflag: {}\nlist: 3\n");
    cfg_node *r = cfg_root(d);
    double x;
    long l;
    int b;
    const char *s;
    static const char *const none[] = {NULL};
    assert_int_equal(cfg_double(r, "num", 1, 0, 10, &x, &e), -1);
    assert_msg(&e, "t.yaml:1:6: num: ", "expected a number in [0, 10]", "got a mapping",
               (const char *)NULL);
    assert_int_equal(cfg_long(r, "num", 1, 0, 10, &l, &e), -1);
    assert_msg(&e, "t.yaml:1:6: num: ", "expected an integer in [0, 10]", (const char *)NULL);
    assert_int_equal(cfg_expect_map(cfg_get(r, "host"), none, &e), -1);
    assert_msg(&e, "t.yaml:2:7: host: ", "is a list", "expected a mapping", (const char *)NULL);
    assert_int_equal(cfg_expect_map(cfg_get(r, "list"), none, &e), -1);
    assert_msg(&e, "t.yaml:5:7: list: ", "is a scalar", "expected a mapping", (const char *)NULL);
    assert_int_equal(cfg_string(r, "name", 1, &s, &e), -1);
    assert_msg(&e, "t.yaml:3:7: name: ", "is a list", "expected a string", (const char *)NULL);
    assert_int_equal(cfg_bool(r, "flag", 1, &b, &e), -1);
    assert_msg(&e, "t.yaml:4:7: flag: ", "expected true or false", (const char *)NULL);
    static const char *const kinds[] = {"a", "b", NULL};
    int k;
    assert_int_equal(cfg_as_choice(cfg_get(r, "host"), kinds, &k, &e), -1);
    assert_msg(&e, "t.yaml:2:7: host: ", "a list", "expected one of: a, b", (const char *)NULL);
    cfg_free(d);
}

static void test_quoted_number(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("a: \"0.5\"\nb: '3'\n");
    double x = 9;
    long l = 9;
    assert_int_equal(cfg_double(cfg_root(d), "a", 1, 0, 1, &x, &e), -1);
    assert_msg(&e, "t.yaml:1:4: a: ", "expected a number", "quoted string", (const char *)NULL);
    assert_true(x == 9);
    assert_int_equal(cfg_long(cfg_root(d), "b", 1, 0, 10, &l, &e), -1);
    assert_msg(&e, "t.yaml:2:4: b: ", "expected an integer", (const char *)NULL);
    assert_int_equal(l, 9);
    cfg_free(d);
}

static void test_missing_required(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("# header\nhost:\n  launch: 1\n");
    cfg_node *host = cfg_get(cfg_root(d), "host");
    double x;
    assert_null(cfg_need(host, "step", &e));
    assert_msg(&e, "t.yaml:3:3: host: ", "missing required key 'step'", (const char *)NULL);
    assert_int_equal(cfg_double(host, "mean_us", 1, 0, 1, &x, &e), -1);
    assert_msg(&e, "t.yaml:3:3: host: ", "missing required key 'mean_us'", (const char *)NULL);
    const char *s;
    assert_int_equal(cfg_string(cfg_root(d), "name", 1, &s, &e), -1);
    assert_msg(&e, "t.yaml:2:1: ", "missing required key 'name'", (const char *)NULL);
    cfg_free(d);
}

static void test_out_of_range(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("eff: 1.5\nmean: -2\ndepth: 0\nbig: 99999999999999999999999\n");
    cfg_node *r = cfg_root(d);
    double x = 7;
    long l = 7;
    assert_int_equal(cfg_double(r, "eff", 1, 1e-3, 1, &x, &e), -1);
    assert_msg(&e, "t.yaml:1:6: eff: ", "1.5 is out of range", "[0.001, 1]", (const char *)NULL);
    assert_int_equal(cfg_double(r, "mean", 1, 0, 1e9, &x, &e), -1);
    assert_msg(&e, "t.yaml:2:7: mean: ", "-2 is out of range", (const char *)NULL);
    assert_true(x == 7);
    assert_int_equal(cfg_long(r, "depth", 1, 1, 100, &l, &e), -1);
    assert_msg(&e, "t.yaml:3:8: depth: ", "0 is out of range", "[1, 100]", (const char *)NULL);
    assert_int_equal(cfg_long(r, "big", 1, 1, 100, &l, &e), -1);
    assert_msg(&e, "t.yaml:4:6: big: ", "99999999999999999999999 is out of range", "[1, 100]",
               (const char *)NULL);
    assert_int_equal(l, 7);
    /* the bounds are inclusive */
    cfg_doc *d2 = must_load("lo: 0.001\nhi: 1\n");
    assert_int_equal(cfg_double(cfg_root(d2), "lo", 1, 1e-3, 1, &x, &e), 0);
    assert_int_equal(cfg_double(cfg_root(d2), "hi", 1, 1e-3, 1, &x, &e), 0);
    cfg_free(d2);
    cfg_free(d);
}

static void test_bad_numbers(void **state)
{
    (void)state;
    static const char *const bad[] = {"1e999", "-1e999", "nan", "NaN", "inf", "-inf", "12abc",
                                      "1.2.3", "0.5 x", "abc", "1,5", NULL};
    for (const char *const *b = bad; *b; b++) {
        char text[64], pos[32];
        snprintf(text, sizeof text, "v: %s\n", *b);
        tp_err e;
        cfg_doc *d = must_load(text);
        double x = 7;
        if (cfg_double(cfg_root(d), "v", 1, -1e300, 1e300, &x, &e) != -1)
            fail_msg("'%s' read as %g", *b, x);
        snprintf(pos, sizeof pos, "t.yaml:1:4: v: ");
        assert_msg(&e, pos, "is not a number", "expected a number", (const char *)NULL);
        assert_true(x == 7);
        long l = 7;
        if (cfg_long(cfg_root(d), "v", 1, -100, 100, &l, &e) != -1)
            fail_msg("'%s' read as integer %ld", *b, l);
        assert_msg(&e, pos, "expected an integer", (const char *)NULL);
        cfg_free(d);
    }
    /* integers refuse fractions and exponents */
    tp_err e;
    cfg_doc *d = must_load("a: 2.5\nb: 1e3\nc:\n");
    long l;
    double x;
    assert_int_equal(cfg_long(cfg_root(d), "a", 1, 0, 10, &l, &e), -1);
    assert_msg(&e, "t.yaml:1:4: a: ", "'2.5' is not an integer", (const char *)NULL);
    assert_int_equal(cfg_long(cfg_root(d), "b", 1, 0, 10000, &l, &e), -1);
    assert_msg(&e, "t.yaml:2:4: b: ", "'1e3' is not an integer", (const char *)NULL);
    /* an empty value is not zero */
    assert_int_equal(cfg_double(cfg_root(d), "c", 1, 0, 10, &x, &e), -1);
    assert_msg(&e, "t.yaml:3:", "c: ", "got nothing", (const char *)NULL);
    assert_int_equal(cfg_long(cfg_root(d), "c", 1, 0, 10, &l, &e), -1);
    assert_msg(&e, "t.yaml:3:", "c: ", "expected an integer", (const char *)NULL);
    cfg_free(d);
}

static void test_bad_bool(void **state)
{
    (void)state;
    static const char *const bad[] = {"yes", "no", "1", "0", "True", "on", "\"true\"", NULL};
    for (const char *const *b = bad; *b; b++) {
        char text[64];
        snprintf(text, sizeof text, "f: %s\n", *b);
        tp_err e;
        cfg_doc *d = must_load(text);
        int v = 7;
        if (cfg_bool(cfg_root(d), "f", 1, &v, &e) != -1) fail_msg("'%s' read as bool %d", *b, v);
        assert_msg(&e, "t.yaml:1:4: f: ", "expected true or false", (const char *)NULL);
        assert_int_equal(v, 7);
        cfg_free(d);
    }
}

static void test_bad_choice(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("host:\n  step: {dist: gamma}\nempty:\n");
    static const char *const kinds[] = {"constant", "uniform", "normal", "lognormal", NULL};
    int k = 7;
    cfg_node *n = cfg_get(cfg_get(cfg_get(cfg_root(d), "host"), "step"), "dist");
    assert_int_equal(cfg_as_choice(n, kinds, &k, &e), -1);
    assert_msg(&e, "t.yaml:2:16: host.step.dist: ", "'gamma' is not allowed",
               "expected one of: constant, uniform, normal, lognormal", (const char *)NULL);
    assert_int_equal(k, 7);
    assert_int_equal(cfg_as_choice(cfg_get(cfg_root(d), "empty"), kinds, &k, &e), -1);
    assert_msg(&e, "t.yaml:3:", "empty: ", "expected one of", (const char *)NULL);
    const char *s;
    assert_int_equal(cfg_string(cfg_root(d), "empty", 1, &s, &e), -1);
    assert_msg(&e, "t.yaml:3:", "empty: ", "is empty", (const char *)NULL);
    cfg_free(d);
}

static void test_cfg_error_format(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load("a:\n  b: 1\n");
    cfg_node *b = cfg_get(cfg_get(cfg_root(d), "a"), "b");
    assert_int_equal(cfg_error(b, &e, "bad %d\nsecond line", 5), -1);
    assert_string_equal(e.msg, "t.yaml:2:6: a.b: bad 5\\x0asecond line"); /* one line, escaped */
    assert_int_equal(cfg_error(cfg_root(d), &e, "root"), -1);
    assert_string_equal(e.msg, "t.yaml:1:1: root");
    cfg_free(d);
}

static void test_load_file(void **state)
{
    (void)state;
    tp_err e = {{0}};
    assert_null(cfg_load("tests/does-not-exist.yaml", &e));
    assert_msg(&e, "tests/does-not-exist.yaml: cannot open: ", (const char *)NULL);
    assert_null(cfg_load("tests", &e));
    assert_msg(&e, "tests: cannot open: ", "directory", (const char *)NULL);
    cfg_doc *d = cfg_load("scenarios/paper-additive.yaml", &e);
    if (!d) fail_msg("%s", e.msg);
    cfg_node *hbm = cfg_get(cfg_get(cfg_root(d), "gpu"), "hbm_efficiency");
    assert_non_null(hbm);
    assert_int_equal(hbm->line, 23);
    assert_int_equal(hbm->col, 19);
    assert_string_equal(hbm->file, "scenarios/paper-additive.yaml");
    cfg_free(d);
}

/* ---------------------------------------------------------------------------------------------
 * --set overrides
 * ------------------------------------------------------------------------------------------- */

static const char set_base[] = "name: demo\n"
                               "gpu:\n"
                               "  hbm_efficiency: 0.7\n"
                               "allreduce: [a.yaml, b.yaml]\n"
                               "label: \"5\"\n";

static void test_set_existing_scalar(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load(set_base);
    assert_int_equal(cfg_set(d, "gpu.hbm_efficiency=0.9", 1, &e), 0);
    cfg_node *n = cfg_get(cfg_get(cfg_root(d), "gpu"), "hbm_efficiency");
    assert_string_equal(n->text, "0.9");
    assert_string_equal(n->file, "--set");
    assert_int_equal(n->line, 1);
    assert_int_equal(n->col, 20);
    double x;
    assert_int_equal(cfg_as_double(n, 0, 1, &x, &e), 0);
    assert_true(x == 0.9);
    /* a bad override is refused by the getter, located at the flag and naming the key */
    assert_int_equal(cfg_set(d, "gpu.hbm_efficiency=1.5", 3, &e), 0);
    assert_int_equal(cfg_as_double(n, 1e-3, 1, &x, &e), -1);
    assert_msg(&e, "--set:3:20: gpu.hbm_efficiency: ", "1.5 is out of range", (const char *)NULL);
    assert_int_equal(cfg_set(d, "gpu.hbm_efficiency=abc", 2, &e), 0);
    assert_int_equal(cfg_as_double(n, 1e-3, 1, &x, &e), -1);
    assert_msg(&e, "--set:2:20: gpu.hbm_efficiency: ", "'abc' is not a number", (const char *)NULL);
    /* an override is plain, even over a quoted value */
    assert_int_equal(cfg_set(d, "label=6", 1, &e), 0);
    long l;
    assert_int_equal(cfg_long(cfg_root(d), "label", 1, 0, 10, &l, &e), 0);
    assert_int_equal(l, 6);
    /* everything after the first '=' is the value */
    assert_int_equal(cfg_set(d, "name=a=b", 1, &e), 0);
    assert_string_equal(cfg_get(cfg_root(d), "name")->text, "a=b");
    cfg_free(d);
}

static void test_set_new_key(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load(set_base);
    assert_int_equal(cfg_set(d, "host.launch.mean_us=5", 2, &e), 0);
    cfg_node *host = cfg_get(cfg_root(d), "host");
    assert_non_null(host);
    assert_int_equal(host->kind, CFG_MAP);
    cfg_node *m = cfg_get(cfg_get(host, "launch"), "mean_us");
    assert_non_null(m);
    assert_string_equal(m->text, "5");
    assert_string_equal(m->path, "host.launch.mean_us");
    assert_int_equal(cfg_set(d, "gpu.flops_efficiency=0.5", 3, &e), 0);
    assert_string_equal(cfg_get(cfg_get(cfg_root(d), "gpu"), "flops_efficiency")->text, "0.5");
    /* a created key that the schema does not know is reported at the flag */
    assert_int_equal(cfg_set(d, "gpu.typo=1", 4, &e), 0);
    static const char *const gpu_keys[] = {"hbm_efficiency", "flops_efficiency", NULL};
    assert_int_equal(cfg_expect_map(cfg_get(cfg_root(d), "gpu"), gpu_keys, &e), -1);
    assert_msg(&e, "--set:4:1: ", "unknown key 'typo'", "in gpu", "hbm_efficiency",
               (const char *)NULL);
    cfg_free(d);
}

static void test_set_refusals(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load(set_base);
    assert_int_equal(cfg_set(d, "gpu=1", 1, &e), -1);
    assert_msg(&e, "--set:1:5: gpu: ", "is a mapping", "only scalars", (const char *)NULL);
    assert_int_equal(cfg_set(d, "allreduce=x", 2, &e), -1);
    assert_msg(&e, "--set:2:11: allreduce: ", "is a list", (const char *)NULL);
    assert_int_equal(cfg_set(d, "name.first=x", 3, &e), -1);
    assert_msg(&e, "--set:3:1: name.first: ", "'name' is a scalar", "no key 'first'",
               (const char *)NULL);
    assert_int_equal(cfg_set(d, "gpu..hbm_efficiency=1", 4, &e), -1);
    assert_msg(&e, "--set:4:1: ", "empty key component", (const char *)NULL);
    assert_int_equal(cfg_set(d, ".name=1", 5, &e), -1);
    assert_msg(&e, "--set:5:1: ", "empty key component", (const char *)NULL);
    assert_int_equal(cfg_set(d, "gpu.=1", 6, &e), -1);
    assert_msg(&e, "--set:6:1: ", "empty key component", (const char *)NULL);
    assert_int_equal(cfg_set(d, "name", 7, &e), -1);
    assert_msg(&e, "--set name: ", "expected dotted.key=value", (const char *)NULL);
    assert_int_equal(cfg_set(d, "=5", 8, &e), -1);
    assert_msg(&e, "--set =5: ", "expected dotted.key=value", (const char *)NULL);
    /* nothing was changed by the refusals */
    assert_string_equal(cfg_get(cfg_root(d), "name")->text, "demo");
    assert_int_equal(cfg_get(cfg_root(d), "gpu")->n, 1);
    cfg_free(d);
}

static void test_set_list_index(void **state)
{
    (void)state;
    tp_err e;
    cfg_doc *d = must_load(set_base);
    assert_int_equal(cfg_set(d, "allreduce.1=c.yaml", 1, &e), 0);
    cfg_node *list = cfg_get(cfg_root(d), "allreduce");
    assert_string_equal(list->vals[1]->text, "c.yaml");
    assert_string_equal(list->vals[0]->text, "a.yaml");
    assert_int_equal(list->n, 2);
    assert_int_equal(cfg_set(d, "allreduce.2=d.yaml", 2, &e), -1);
    assert_msg(&e, "--set:2:1: allreduce.2: ", "list of 2", "index 0..1", (const char *)NULL);
    assert_int_equal(cfg_set(d, "allreduce.x=d.yaml", 3, &e), -1);
    assert_msg(&e, "--set:3:1: allreduce.x: ", "expected an index", (const char *)NULL);
    assert_int_equal(cfg_set(d, "allreduce.-1=d.yaml", 4, &e), -1);
    assert_msg(&e, "--set:4:1: ", "expected an index", (const char *)NULL);
    assert_int_equal(cfg_set(d, "allreduce.99999999999999999999999=d", 5, &e), -1);
    assert_msg(&e, "--set:5:1: ", "expected an index", (const char *)NULL);
    assert_int_equal(list->n, 2);
    cfg_free(d);
}

/* A dotted path names one node by one spelling: "a.b." and "a..b" name nothing (before, "a.b."
 * named a.b, so a file could declare one number twice under two keys). */
static void test_find_one_spelling(void **state)
{
    (void)state;
    tp_err err;
    const char *text = "a: {b: 1, c: [5, 6]}\n";
    cfg_doc *d = cfg_load_string("t.yaml", text, strlen(text), &err);
    assert_non_null(d);
    cfg_node *r = cfg_root(d);
    assert_non_null(cfg_find(r, "a.b"));
    assert_non_null(cfg_find(r, "a.c.1"));
    assert_null(cfg_find(r, "a.b."));
    assert_null(cfg_find(r, "a..b"));
    assert_null(cfg_find(r, ".a.b"));
    assert_null(cfg_find(r, "a.c.1."));
    cfg_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_happy_values),
        cmocka_unit_test(test_find_one_spelling),
        cmocka_unit_test(test_source_field),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_reader_error_position),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_non_scalar_key),
        cmocka_unit_test(test_document_shape),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_depth_limit_is_fast),
        cmocka_unit_test(test_alias_bomb),
        cmocka_unit_test(test_alias_byte_bomb),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_unknown_key_long_list),
        cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_quoted_number),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_bad_bool),
        cmocka_unit_test(test_bad_choice),
        cmocka_unit_test(test_cfg_error_format),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_set_existing_scalar),
        cmocka_unit_test(test_set_new_key),
        cmocka_unit_test(test_set_refusals),
        cmocka_unit_test(test_set_list_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
