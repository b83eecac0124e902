/* model.c: see model.h. */
#include "model.h"

#include <stdio.h>
#include <string.h>

#include "cfg.h"

static const char *const model_keys[] = {"name",     "layers",       "hidden", "heads",
                                         "kv_heads", "head_dim",     "intermediate",
                                         "vocab",    "dtype_bytes",  "source", NULL};

int model_load(const char *path, model_arch *out, tp_err *err)
{
    cfg_doc *doc = cfg_load(path, err);
    if (!doc) return -1;
    cfg_node *r = cfg_root(doc);
    const char *name = NULL;
    model_arch m = {0};
    int rc = -1;
    if (cfg_expect_map(r, model_keys, err) || cfg_string_fits(r, "name", 1, sizeof m.name, &name, err) ||
        cfg_long(r, "layers", 1, 1, 1000, &m.layers, err) ||
        cfg_long(r, "hidden", 1, 1, 1L << 20, &m.hidden, err) ||
        cfg_long(r, "heads", 1, 1, 4096, &m.heads, err) ||
        cfg_long(r, "kv_heads", 1, 1, 4096, &m.kv_heads, err) ||
        cfg_long(r, "head_dim", 1, 1, 4096, &m.head_dim, err) ||
        cfg_long(r, "intermediate", 1, 1, 1L << 22, &m.intermediate, err) ||
        cfg_long(r, "vocab", 1, 1, 1L << 24, &m.vocab, err) ||
        cfg_long(r, "dtype_bytes", 1, 1, 8, &m.dtype_bytes, err) || cfg_source(r, 1, err))
        goto out;
    if (m.heads % m.kv_heads != 0) {
        cfg_error(cfg_get(r, "kv_heads"), err, "%ld does not divide heads (%ld)", m.kv_heads,
                  m.heads);
        goto out;
    }
    snprintf(m.name, sizeof m.name, "%s", name);
    *out = m;
    rc = 0;
out:
    cfg_free(doc);
    return rc;
}

int model_check_tp(const model_arch *m, long tp, tp_err *err)
{
    if (tp < 1) return tp_err_set(err, "tp %ld: expected a TP degree >= 1", tp);
    if (m->heads % tp || m->intermediate % tp || m->vocab % tp)
        return tp_err_set(err,
                          "tp %ld does not shard %s: heads (%ld), intermediate (%ld) and vocab "
                          "(%ld) must divide by it",
                          tp, m->name, m->heads, m->intermediate, m->vocab);
    if (m->kv_heads % tp && tp % m->kv_heads)
        return tp_err_set(err, "tp %ld does not shard %s's %ld KV heads: expected a divisor or a "
                          "multiple of it", tp, m->name, m->kv_heads);
    return 0;
}

long model_kv_heads_per_rank(const model_arch *m, long tp)
{
    return m->kv_heads >= tp ? m->kv_heads / tp : 1;
}
