/* fpseal.c: see fprint.h: a YAML document's fingerprint, checked (fp_verify) and written
 * (fp_seal). */
#include "fprint.h"

#include <stdlib.h>
#include <string.h>

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

uint64_t fp_tree_except(const cfg_node *root, const char *key)
{
    if (root->kind != CFG_MAP) return fp_tree(root);
    uint64_t h = FP_SEED;
    size_t kept = 0;
    for (size_t i = 0; i < root->n; i++) {
        if (!strcmp(root->keys[i], key)) continue;
        h = fp_walk(root->vals[i], h);
        kept++;
    }
    return fp_mix(h, (uint64_t)kept); /* as fp_walk ends a map: its entries' count */
}

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
