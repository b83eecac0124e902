/* fprint.c: see fprint.h: the hash of bytes and files (no YAML: the GPU tools link it through
 * rfile.c); fpseal.c holds the document fingerprints. */
#include "fprint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One 64-bit word into the state: a multiply by an odd constant and a xorshift, each a
 * bijection, so two inputs that differ in one word always leave different states. */
uint64_t fp_mix(uint64_t h, uint64_t w)
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
     * block's words, the last block's tail, then the total length. The block is the call's
     * own (not thread-local: static TLS is zeroed at every process and thread start). */
    enum { FP_BLOCK = 1 << 16 };
    unsigned char *block = malloc(FP_BLOCK);
    if (!block) {
        fclose(f);
        return tp_err_set(err, "out of memory");
    }
    uint64_t h = FP_SEED;
    size_t total = 0, got;
    while ((got = fread(block, 1, FP_BLOCK, f)) > 0) {
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
        if (got < FP_BLOCK) break;
    }
    int bad = ferror(f);
    fclose(f);
    free(block);
    if (bad) return tp_err_set(err, "%s: cannot read", path);
    fp_hex(fp_mix(h, (uint64_t)total), out);
    return 0;
}

