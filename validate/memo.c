/* memo.c: see memo.h. Open addressing on a 64-bit FNV-1a hash of the key's words; a key is
 * n parameter bit patterns then n_cal cell indices, stored with its lengths. */
#include "memo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct vmemo_entry {
    uint64_t *key; /* NULL: empty slot */
    int n, n_cal;
    uint64_t hash;
    double value;
} vmemo_entry;

struct vmemo {
    vmemo_entry *slot;
    size_t cap, used, hits; /* cap a power of two, used <= cap / 2 */
};

vmemo *vmemo_new(void) { return calloc(1, sizeof(vmemo)); }

void vmemo_free(vmemo *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) free(m->slot[i].key);
    free(m->slot);
    free(m);
}

static void vmemo_words(const double *x, int n, const size_t *cal, int n_cal, uint64_t *w)
{
    for (int i = 0; i < n; i++) memcpy(&w[i], &x[i], sizeof w[i]);
    for (int i = 0; i < n_cal; i++) w[n + i] = (uint64_t)cal[i];
}

static uint64_t vmemo_hash(const uint64_t *w, size_t nw, int n)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (size_t i = 0; i < nw; i++)
        for (int b = 0; b < 64; b += 8) h = (h ^ ((w[i] >> b) & 0xff)) * 1099511628211ULL;
    return h;
}

/* the slot holding the key, or the empty slot where it would go */
static vmemo_entry *vmemo_find(const vmemo *m, const uint64_t *w, int n, int n_cal, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        vmemo_entry *e = &m->slot[i];
        if (!e->key) return e;
        if (e->hash == h && e->n == n && e->n_cal == n_cal &&
            !memcmp(e->key, w, (size_t)(n + n_cal) * sizeof *w))
            return e;
    }
}

int vmemo_get(vmemo *m, const double *x, int n, const size_t *cal, int n_cal, double *value)
{
    if (!m || !m->used) return 0;
    uint64_t stack[64],
        *w = (size_t)(n + n_cal) <= 64 ? stack : malloc((size_t)(n + n_cal) * sizeof *w);
    if (!w) return 0;
    vmemo_words(x, n, cal, n_cal, w);
    const vmemo_entry *e = vmemo_find(m, w, n, n_cal, vmemo_hash(w, (size_t)(n + n_cal), n));
    if (w != stack) free(w);
    if (!e->key) return 0;
    *value = e->value;
    m->hits++;
    return 1;
}

static int vmemo_grow(vmemo *m)
{
    size_t cap = m->cap ? 2 * m->cap : 256;
    vmemo_entry *old = m->slot, *slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    size_t old_cap = m->cap;
    m->slot = slot;
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key) *vmemo_find(m, old[i].key, old[i].n, old[i].n_cal, old[i].hash) = old[i];
    free(old);
    return 0;
}

int vmemo_put(vmemo *m, const double *x, int n, const size_t *cal, int n_cal, double value)
{
    if (!m) return 0;
    if ((m->used + 1) * 2 > m->cap && vmemo_grow(m)) return -1;
    size_t nw = (size_t)(n + n_cal);
    uint64_t *w = malloc((nw ? nw : 1) * sizeof *w);
    if (!w) return -1;
    vmemo_words(x, n, cal, n_cal, w);
    uint64_t h = vmemo_hash(w, nw, n);
    vmemo_entry *e = vmemo_find(m, w, n, n_cal, h);
    if (e->key) { /* already there (the same inputs give the same value) */
        free(w);
        return 0;
    }
    *e = (vmemo_entry){w, n, n_cal, h, value};
    m->used++;
    return 0;
}

size_t vmemo_hits(const vmemo *m) { return m ? m->hits : 0; }
size_t vmemo_size(const vmemo *m) { return m ? m->used : 0; }
