/* test_csv.c: RFC 4180 reading (quotes, doubled quotes, line breaks and commas in fields,
 * CRLF, a byte order mark, comments) with positions in messages, and quoting on write that
 * reads back to the same fields. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

#define CAP 8

typedef struct rec {
    int n;
    char *f[CAP];
    int line[CAP], col[CAP];
} rec;

/* A mutable, NUL-terminated copy, as rfile_read gives; freed by the caller. */
static char *text_of(const char *s, size_t len)
{
    char *t = malloc(len + 1);
    assert_non_null(t);
    memcpy(t, s, len);
    t[len] = '\0';
    return t;
}

static int next(csv_reader *r, rec *x, tp_err *err)
{
    x->n = csv_next(r, x->f, x->line, x->col, CAP, err);
    return x->n;
}

static void test_plain_and_quoted(void **state)
{
    (void)state;
    static const char in[] = "a,b , c\n\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\"\n";
    char *t = text_of(in, sizeof in - 1);
    csv_reader r;
    rec x;
    tp_err err;
    csv_init(&r, "g.csv", t, sizeof in - 1);
    assert_int_equal(next(&r, &x, &err), 3);
    assert_string_equal(x.f[0], "a");
    assert_string_equal(x.f[1], "b");
    assert_string_equal(x.f[2], "c");
    assert_int_equal(x.col[2], 7); /* the field's first character: after "a,b , " */
    assert_int_equal(next(&r, &x, &err), 3);
    assert_string_equal(x.f[0], "x,y");
    assert_string_equal(x.f[1], "say \"hi\"");
    assert_string_equal(x.f[2], "two\nlines");
    assert_int_equal(x.line[0], 2);
    assert_int_equal(x.col[1], 7);
    assert_int_equal(next(&r, &x, &err), 0);
    free(t);
}

static void test_crlf_bom_comments(void **state)
{
    (void)state;
    static const char in[] =
        "\xEF\xBB\xBF# provenance\r\n\r\nconfig,tp\r\n  # note\r\nH100 TP-2,2\r\n";
    char *t = text_of(in, sizeof in - 1);
    csv_reader r;
    rec x;
    tp_err err;
    csv_init(&r, "g.csv", t, sizeof in - 1);
    assert_int_equal(next(&r, &x, &err), 2);
    assert_string_equal(x.f[0], "config"); /* not "\xEF\xBB\xBFconfig" */
    assert_string_equal(x.f[1], "tp");     /* not "tp\r" */
    assert_int_equal(x.line[0], 3);
    assert_int_equal(next(&r, &x, &err), 2);
    assert_string_equal(x.f[0], "H100 TP-2");
    assert_string_equal(x.f[1], "2");
    assert_int_equal(x.line[1], 5);
    assert_int_equal(x.col[1], 11);
    assert_int_equal(next(&r, &x, &err), 0);
    free(t);
}

static void test_empty_fields_and_last_line(void **state)
{
    (void)state;
    static const char in[] = ",\"\",x"; /* no line end at all */
    char *t = text_of(in, sizeof in - 1);
    csv_reader r;
    rec x;
    tp_err err;
    csv_init(&r, "g.csv", t, sizeof in - 1);
    assert_int_equal(next(&r, &x, &err), 3);
    assert_string_equal(x.f[0], "");
    assert_string_equal(x.f[1], "");
    assert_string_equal(x.f[2], "x");
    assert_int_equal(next(&r, &x, &err), 0);
    free(t);
}

static void expect_error(const char *in, size_t len, const char *msg)
{
    char *t = text_of(in, len);
    csv_reader r;
    rec x;
    tp_err err = {{0}};
    csv_init(&r, "g.csv", t, len);
    int n;
    while ((n = next(&r, &x, &err)) > 0) {}
    assert_int_equal(n, -1);
    if (!strstr(err.msg, msg)) fail_msg("got '%s', expected '%s'", err.msg, msg);
    free(t);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("a,b\n\"open,x\ny\n", 14, "g.csv:2:1: a quoted field that never ends");
    expect_error("a,\"b\"c\n", 7, "g.csv:1:6: 'c' after a closing quote");
    expect_error("a,b\"c\n", 6, "g.csv:1:4: a '\"' inside an unquoted field");
    expect_error("a,b\0c\n", 6, "g.csv:1:4: a NUL byte");
    expect_error("1,2,3,4,5,6,7,8,9\n", 18, "g.csv:1:17: more than 8 fields");
}

/* A header naming a column twice, even quoted or with blanks around it, is refused at the
 * second; distinct names and a repeated value in a data row are not headers' business. */
static void test_duplicate_header(void **state)
{
    (void)state;
    const char *in = "a, b ,\"c\"\n1,1,1\n";
    char *t = text_of(in, strlen(in));
    csv_reader r;
    rec x;
    tp_err err = {{0}};
    csv_init(&r, "g.csv", t, strlen(in));
    assert_int_equal(csv_header(&r, x.f, x.line, x.col, CAP, &err), 3);
    assert_int_equal(next(&r, &x, &err), 3);
    free(t);
    const char *dup = "# note\nx,\"y\",z, y\n";
    t = text_of(dup, strlen(dup));
    csv_init(&r, "g.csv", t, strlen(dup));
    assert_int_equal(csv_header(&r, x.f, x.line, x.col, CAP, &err), -1);
    const char *want = "g.csv:2:10: duplicate column 'y' (also field 2 at line 2 column 3)";
    if (!strstr(err.msg, want)) fail_msg("got '%s', expected '%s'", err.msg, want);
    free(t);
}

/* What csv_put writes reads back as the same fields. */
static void test_write_reads_back(void **state)
{
    (void)state;
    const char *fields[] = {"plain",      "H100 SXM", "a,b", "say \"x\"",
                            "two\nlines", " pad ",    "#x",  ""};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    for (int i = 0; i < 8; i++) {
        if (i) fputc(',', f);
        csv_put(f, fields[i]);
    }
    fputc('\n', f);
    fclose(f);
    /* exactly the RFC's quoting, by hand */
    assert_string_equal(
        buf, "plain,H100 SXM,\"a,b\",\"say \"\"x\"\"\",\"two\nlines\",\" pad \",\"#x\",\n");
    csv_reader r;
    rec x;
    tp_err err;
    csv_init(&r, "mem", buf, len);
    assert_int_equal(next(&r, &x, &err), 8);
    for (int i = 0; i < 8; i++) assert_string_equal(x.f[i], fields[i]);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_quoted),
        cmocka_unit_test(test_crlf_bom_comments),
        cmocka_unit_test(test_empty_fields_and_last_line),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_duplicate_header),
        cmocka_unit_test(test_write_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
