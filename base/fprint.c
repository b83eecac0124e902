/* fprint.c: see fprint.h. */
#include "fprint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One 64-bit word into the state: a multiply by an odd constant and a xorshift, each a
 * bijection, so two inputs that differ in one word always leave different states. */
static uint64_t fp_mix(uint64_t h, uint64_t w)
{
    h ^= w;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    return h ^ (h >> 31);
}

uint64_t fp_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = fp_mix(h, w);
    }
    if (i < n) { /* the tail, zero-padded */
        uint64_t w = 0;
        for (size_t k = 0; i + k < n; k++) w |= (uint64_t)b[i + k] << (8 * k);
        h = fp_mix(h, w);
    }
    return fp_mix(h, (uint64_t)n); /* the length: "ab" and "ab\0" differ */
}

void fp_hex(uint64_t h, char out[FP_HEX]) { snprintf(out, FP_HEX, "%016" PRIx64, h); }

int fp_file(const char *path, char out[FP_HEX], tp_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return tp_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    /* read in blocks of a multiple of 8 bytes, hashed as fp_bytes hashes one buffer: every
     * block's words, the last block's tail, then the total length */
    static _Thread_local unsigned char block[1 << 16];
    uint64_t h = FP_SEED;
    size_t total = 0, got;
    while ((got = fread(block, 1, sizeof block, f)) > 0) {
        size_t whole = got - got % 8;
        for (size_t i = 0; i < whole; i += 8) {
            uint64_t w;
            memcpy(&w, block + i, 8);
            h = fp_mix(h, w);
        }
        total += got;
        if (whole < got) { /* only the last block has a tail */
            uint64_t w = 0;
            for (size_t k = 0; whole + k < got; k++) w |= (uint64_t)block[whole + k] << (8 * k);
            h = fp_mix(h, w);
        }
        if (got < sizeof block) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) return tp_err_set(err, "%s: cannot read", path);
    fp_hex(fp_mix(h, (uint64_t)total), out);
    return 0;
}

static uint64_t fp_walk(const cfg_node *n, uint64_t h)
{
    if (n->kind == CFG_SCALAR) {
        if (!strcmp(n->path, "fingerprint.numbers")) return h;
        h = fp_bytes(h, n->path, strlen(n->path));
        return fp_bytes(h, n->text, strlen(n->text));
    }
    for (size_t i = 0; i < n->n; i++) h = fp_walk(n->vals[i], h);
    return fp_mix(h, (uint64_t)n->n); /* an emptied list or map changes it too */
}

uint64_t fp_tree(const cfg_node *root) { return fp_walk(root, FP_SEED); }

int fp_verify(const cfg_node *root, fp_check *out, tp_err *err)
{
    static const char *const keys[] = {"inputs", "numbers", NULL};
    memset(out, 0, sizeof *out);
    fp_hex(fp_tree(root), out->computed);
    const cfg_node *fp = cfg_get(root, "fingerprint"), *num;
    if (!fp) return 0;
    if (fp->kind != CFG_MAP)
        return cfg_error(fp, err, "expected a mapping of inputs: and numbers: (written by tpsim)");
    if (cfg_expect_map(fp, keys, err) || !(num = cfg_need(fp, "numbers", err))) return -1;
    const char *t = num->kind == CFG_SCALAR ? num->text : "";
    if (strlen(t) != FP_HEX - 1 || strspn(t, "0123456789abcdef") != FP_HEX - 1)
        return cfg_error(num, err, "'%s', expected 16 lowercase hex digits", t);
    const cfg_node *in = cfg_get(fp, "inputs");
    if (in && in->kind != CFG_SEQ)
        return cfg_error(in, err, "expected a list of {file, fp}");
    snprintf(out->recorded, sizeof out->recorded, "%s", t);
    out->state = strcmp(out->recorded, out->computed) ? FP_MISMATCH : FP_MATCH;
    return 0;
}

/* s in YAML double quotes */
static void fp_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int fp_seal(FILE *f, const char *name, const char *text, size_t len,
            const char *const *inputs, int n_inputs, tp_err *err)
{
    char *block = NULL, *whole = NULL;
    size_t blen = 0, wlen = 0;
    FILE *b = open_memstream(&block, &blen);
    if (!b) return tp_err_set(err, "%s: out of memory", name);
    fprintf(b, "%sfingerprint:\n  inputs:%s\n", len && text[len - 1] != '\n' ? "\n" : "",
            n_inputs ? "" : " []");
    int rc = -1;
    for (int i = 0; i < n_inputs; i++) {
        char path[4096], hex[FP_HEX];
        snprintf(path, sizeof path, "%s", inputs[i]);
        char *at = strrchr(path, '@'); /* fit-kernels' FILE@CLASSES */
        FILE *probe = fopen(path, "rb");
        if (!probe && at) *at = '\0';
        else if (probe) fclose(probe);
        if (fp_file(path, hex, err)) {
            fclose(b);
            goto out;
        }
        fprintf(b, "    - {file: ");
        fp_quoted(b, path);
        fprintf(b, ", fp: \"%s\"}\n", hex);
    }
    fprintf(b, "  numbers: \"");
    if (fclose(b)) {
        tp_err_set(err, "%s: out of memory", name);
        goto out;
    }
    FILE *w = open_memstream(&whole, &wlen);
    if (!w) {
        tp_err_set(err, "%s: out of memory", name);
        goto out;
    }
    fwrite(text, 1, len, w);
    fwrite(block, 1, blen, w);
    fputs("0000000000000000\"\n", w); /* left out of the hash: any 16 digits give the same */
    if (fclose(w)) {
        tp_err_set(err, "%s: out of memory", name);
        goto out;
    }
    cfg_doc *doc = cfg_load_string(name, whole, wlen, err);
    if (!doc) goto out;
    char hex[FP_HEX];
    fp_hex(fp_tree(cfg_root(doc)), hex);
    cfg_free(doc);
    fwrite(text, 1, len, f);
    fwrite(block, 1, blen, f);
    fprintf(f, "%s\"\n", hex);
    rc = ferror(f) ? tp_err_set(err, "%s: cannot write", name) : 0;
out:
    free(block);
    free(whole);
    return rc;
}
