/* test_err.c: messages stay one printable line: control characters, terminal escapes, C1
 * codes and non-UTF-8 bytes are shown as \xNN (valid UTF-8 kept); a long message keeps its
 * start and its reason and marks the cut; tp_shorten marks a shortened value with its size. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static void test_escapes(void **state)
{
    (void)state;
    tp_err e;
    assert_int_equal(tp_err_set(&e, "%s: cannot open", "a\x1b[31mred\x1b[0m\n\r\t.yaml"), -1);
    assert_string_equal(e.msg, "a\\x1b[31mred\\x1b[0m\\x0a\\x0d\\x09.yaml: cannot open");
    tp_err_set(&e, "caf\xc3\xa9 \xe2\x80\xa6 ok"); /* UTF-8 kept as written */
    assert_string_equal(e.msg, "caf\xc3\xa9 \xe2\x80\xa6 ok");
    tp_err_set(&e, "c1 \xc2\x9b csi, bad \xff\xfe, cut \xe2\x80, del \x7f");
    assert_string_equal(e.msg, "c1 \\xc2\\x9b csi, bad \\xff\\xfe, cut \\xe2\\x80, del \\x7f");
    tp_err_at(&e, "f\x1b.yaml", 3, 4, "v '%s'", "\x07");
    assert_string_equal(e.msg, "f\\x1b.yaml:3:4: v '\\x07'");
    tp_err_at(&e, "f.yaml", 3, 0, "no column");
    assert_string_equal(e.msg, "f.yaml:3: no column");
}

static void test_long_message_keeps_reason(void **state)
{
    (void)state;
    size_t n = 3000;
    char *path = malloc(n + 1);
    assert_non_null(path);
    for (size_t i = 0; i < n; i++) path[i] = i % 100 == 0 ? '/' : (char)('a' + i % 26);
    path[n] = '\0';
    tp_err e;
    tp_err_at(&e, path, 12, 5, "cannot open: No such file or directory");
    size_t len = strlen(e.msg);
    assert_true(len < TP_ERR_MAX);
    assert_true(len > TP_ERR_MAX - 64); /* the room is used, not wasted */
    assert_int_equal(strncmp(e.msg, path, 150), 0); /* the start of the path */
    const char *reason = ":12:5: cannot open: No such file or directory";
    assert_string_equal(e.msg + len - strlen(reason), reason); /* the reason, whole */
    const char *mark = strstr(e.msg, "\xe2\x80\xa6(");
    assert_non_null(mark);
    size_t cut = strtoul(mark + 4, NULL, 10);
    /* what is shown plus what was cut is the whole message */
    size_t whole = n + strlen(reason);
    size_t marker =
        strlen("\xe2\x80\xa6()\xe2\x80\xa6 bytes cut") + (size_t)snprintf(NULL, 0, "%zu", cut);
    assert_int_equal(len - marker + cut, whole);
    free(path);
}

static void test_shorten(void **state)
{
    (void)state;
    char buf[TP_SHORT_MAX];
    const char *s = "short";
    assert_ptr_equal(tp_shorten(s, buf), s);
    char sixty4[65];
    memset(sixty4, 'y', 64);
    sixty4[64] = '\0';
    assert_ptr_equal(tp_shorten(sixty4, buf), sixty4); /* 64 bytes: shown whole */
    char *big = malloc(100001);
    assert_non_null(big);
    memset(big, 'x', 100000);
    big[100000] = '\0';
    const char *out = tp_shorten(big, buf);
    assert_int_equal(strncmp(out, big, 48), 0);
    assert_string_equal(out + 48, "\xe2\x80\xa6(100000 bytes)");
    /* never splits a UTF-8 character: 47 ASCII bytes then a 2-byte 'é' across byte 48 */
    memset(big, 'x', 47);
    memcpy(big + 47, "\xc3\xa9", 2);
    out = tp_shorten(big, buf);
    assert_int_equal(strncmp(out + 47, "\xe2\x80\xa6(", 4), 0);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_long_message_keeps_reason),
        cmocka_unit_test(test_shorten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
