/* test_fprint.c: fingerprints (fprint.h). Expectations are properties derived by hand from the
 * definition, not values the program printed: a one-byte edit anywhere changes the hash; a
 * file hashes as its bytes do, whatever the read blocks; comments and spacing leave a document's
 * hash alone and a changed number does not; a sealed text verifies and an edited copy does
 * not. */
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
#include "fprint.h"

static void test_every_byte_counts(void **state)
{
    (void)state;
    unsigned char buf[67]; /* 8 words and a 3-byte tail */
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7 + 1);
    uint64_t h0 = fp_bytes(FP_SEED, buf, sizeof buf);
    for (size_t i = 0; i < sizeof buf; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (unsigned char)(1u << bit);
            if (fp_bytes(FP_SEED, buf, sizeof buf) == h0)
                fail_msg("byte %zu bit %d unseen", i, bit);
            buf[i] ^= (unsigned char)(1u << bit);
        }
    /* a trailing zero byte is not padding: the length counts */
    unsigned char z[4] = {'a', 'b', 0, 0};
    assert_true(fp_bytes(FP_SEED, z, 2) != fp_bytes(FP_SEED, z, 3));
    char hex[FP_HEX];
    fp_hex(UINT64_C(0x00000000000000ff), hex);
    assert_string_equal(hex, "00000000000000ff");
}

static void test_file_as_bytes(void **state)
{
    (void)state;
    /* bigger than fp_file's 64 KiB block and not a multiple of 8 */
    size_t n = (1u << 16) * 2 + 13;
    unsigned char *b = malloc(n);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 31 + (i >> 9));
    char path[] = "/tmp/test_fprint_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, n), (ssize_t)n);
    close(fd);
    char a[FP_HEX], want[FP_HEX];
    tp_err err = {{0}};
    assert_int_equal(fp_file(path, a, &err), 0);
    fp_hex(fp_bytes(FP_SEED, b, n), want);
    assert_string_equal(a, want);
    unlink(path);
    free(b);
}

static uint64_t tree_of(const char *text)
{
    tp_err err = {{0}};
    cfg_doc *d = cfg_load_string("t.yaml", text, strlen(text), &err);
    if (!d) fail_msg("%s", err.msg);
    uint64_t h = fp_tree(cfg_root(d));
    cfg_free(d);
    return h;
}

static void test_tree_numbers_not_comments(void **state)
{
    (void)state;
    uint64_t a = tree_of("a: 1\nb: {c: 2.5, d: [1, 2]}\n");
    assert_true(a == tree_of("# a comment\na:   1\nb:\n  c: 2.5   # another\n  d:\n"
                             "    - 1\n    - 2\n"));
    assert_true(a != tree_of("a: 1\nb: {c: 2.6, d: [1, 2]}\n"));
    assert_true(a != tree_of("a: 1\nb: {c: 2.5, d: [1, 2, 3]}\n"));
    assert_true(a != tree_of("a: 1\nb: {e: 2.5, d: [1, 2]}\n")); /* the key counts */
    /* the recorded fingerprint itself is left out */
    assert_true(tree_of("a: 1\nfingerprint: {numbers: \"0000000000000000\"}\n") ==
                tree_of("a: 1\nfingerprint: {numbers: \"ffffffffffffffff\"}\n"));
}

static uint64_t except_of(const char *text)
{
    tp_err err = {{0}};
    cfg_doc *d = cfg_load_string("t.yaml", text, strlen(text), &err);
    if (!d) fail_msg("%s", err.msg);
    uint64_t h = fp_tree_except(cfg_root(d), "validated");
    cfg_free(d);
    return h;
}

/* A scenario's content less its validated: block: the block's presence, place and content do
 * not count, any other number does. */
static void test_tree_except(void **state)
{
    (void)state;
    uint64_t a = tree_of("a: 1\nb: {c: 2.5}\n");
    assert_true(a == except_of("a: 1\nb: {c: 2.5}\n"));
    assert_true(a == except_of("a: 1\nvalidated: {tp: [2, 4]}\nb: {c: 2.5}\n"));
    assert_true(a == except_of("a: 1\nb: {c: 2.5}\nvalidated: {tp: [8], verdict: x}\n"));
    assert_true(a != except_of("a: 1\nb: {c: 2.6}\nvalidated: {tp: [2, 4]}\n"));
    assert_true(a != except_of("a: 1\nb: {c: 2.5}\nvalid: {tp: [2, 4]}\n"));
    /* only the top level's key: one of that name deeper counts */
    assert_true(a != except_of("a: 1\nb: {c: 2.5, validated: 1}\n"));
}

static void test_seal_verify(void **state)
{
    (void)state;
    const char *text = "kind: x\nt0_us: 4.8252\n";
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    tp_err err = {{0}};
    assert_int_equal(fp_seal(m, "t.yaml", text, strlen(text), NULL, 0, &err), 0);
    fclose(m);
    cfg_doc *d = cfg_load_string("t.yaml", out, len, &err);
    assert_non_null(d);
    fp_check c;
    assert_int_equal(fp_verify(cfg_root(d), &c, &err), 0);
    assert_int_equal(c.state, FP_MATCH);
    cfg_free(d);
    char *edited = strdup(out), *at = strstr(edited, "4.8252");
    assert_non_null(at);
    memcpy(at, "1.0000", 6);
    d = cfg_load_string("t.yaml", edited, strlen(edited), &err);
    assert_int_equal(fp_verify(cfg_root(d), &c, &err), 0);
    assert_int_equal(c.state, FP_MISMATCH);
    cfg_free(d);
    d = cfg_load_string("t.yaml", text, strlen(text), &err); /* never sealed */
    assert_int_equal(fp_verify(cfg_root(d), &c, &err), 0);
    assert_int_equal(c.state, FP_NONE);
    cfg_free(d);
    const char *bad = "a: 1\nfingerprint: {numbers: \"xyz\"}\n";
    d = cfg_load_string("t.yaml", bad, strlen(bad), &err);
    assert_int_equal(fp_verify(cfg_root(d), &c, &err), -1);
    assert_non_null(strstr(err.msg, "16 lowercase hex digits"));
    cfg_free(d);
    free(edited);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_counts), cmocka_unit_test(test_file_as_bytes),
        cmocka_unit_test(test_tree_numbers_not_comments),
        cmocka_unit_test(test_tree_except), cmocka_unit_test(test_seal_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
