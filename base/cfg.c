/* cfg.c: see cfg.h. libyaml's document API builds its own graph; we copy it into an
 * arena-owned tree so overrides can be applied and every node knows its path. */
#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "num.h"
#include "rfile.h"

/* Limits beside cfg.h's: a mapping's duplicate-key check is quadratic in its entries, and
 * alias expansion copies text, so both are capped to keep a hostile file fast and small. */

typedef struct cfg_chunk {
    struct cfg_chunk *next;
    size_t used, size;
    max_align_t data[];
} cfg_chunk;

struct cfg_doc {
    cfg_chunk *chunks;
    const char *file;
    cfg_node *root;
    size_t nodes;
    size_t bytes;  /* arena bytes handed out, capped at CFG_MAX_BYTES */
    int full;      /* an allocation was refused by that cap */
    int reported;  /* ... and the error saying so is already in err */
    cfg_node **memo; /* during conversion: the cfg_node of each libyaml node */
    size_t memo_n;
};

/* ---- arena ---------------------------------------------------------------------- */

static void *cfg_alloc(cfg_doc *doc, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    /* Aliases are expanded by copying, so a small file can ask for gigabytes (a long
     * scalar aliased many times): refuse past a cap instead of exhausting memory. */
    if (size > CFG_MAX_BYTES - doc->bytes) {
        doc->full = 1;
        return NULL;
    }
    doc->bytes += size;
    cfg_chunk *c = doc->chunks;
    if (!c || c->size - c->used < size) {
        size_t want = size > 16384 ? size : 16384;
        c = malloc(sizeof *c + want);
        if (!c) return NULL;
        c->next = doc->chunks;
        c->used = 0;
        c->size = want;
        doc->chunks = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

static char *cfg_strdup(cfg_doc *doc, const char *s, size_t len)
{
    char *p = cfg_alloc(doc, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

static char *cfg_join_path(cfg_doc *doc, const char *parent, const char *key)
{
    size_t lp = strlen(parent), lk = strlen(key);
    char *p = cfg_alloc(doc, lp + lk + 2);
    if (!p) return NULL;
    if (lp) {
        memcpy(p, parent, lp);
        p[lp] = '.';
        memcpy(p + lp + 1, key, lk + 1);
    } else {
        memcpy(p, key, lk + 1);
    }
    return p;
}

static cfg_node *cfg_new_node(cfg_doc *doc, cfg_kind kind, const char *file, int line, int col,
                              const char *path)
{
    if (doc->nodes >= CFG_MAX_NODES) return NULL;
    cfg_node *n = cfg_alloc(doc, sizeof *n);
    if (!n) return NULL;
    doc->nodes++;
    n->kind = kind;
    n->file = file;
    n->line = line;
    n->col = col;
    n->path = path;
    return n;
}

/* Append an entry to a map or sequence, growing its arrays in the arena. */
static int cfg_append(cfg_doc *doc, cfg_node *parent, const char *key, int kline, int kcol,
                      cfg_node *val)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        cfg_node **vals = cfg_alloc(doc, cap * sizeof *vals);
        const char **keys = cfg_alloc(doc, cap * sizeof *keys);
        int *kl = cfg_alloc(doc, cap * sizeof *kl), *kc = cfg_alloc(doc, cap * sizeof *kc);
        if (!vals || !keys || !kl || !kc) return -1;
        if (parent->n) {
            memcpy(vals, parent->vals, parent->n * sizeof *vals);
            if (parent->keys) {
                memcpy(keys, parent->keys, parent->n * sizeof *keys);
                memcpy(kl, parent->key_line, parent->n * sizeof *kl);
                memcpy(kc, parent->key_col, parent->n * sizeof *kc);
            }
        }
        parent->vals = vals;
        parent->keys = parent->kind == CFG_MAP ? keys : NULL;
        parent->key_line = kl;
        parent->key_col = kc;
        parent->cap = cap;
    }
    if (parent->kind == CFG_MAP) {
        parent->keys[parent->n] = key;
        parent->key_line[parent->n] = kline;
        parent->key_col[parent->n] = kcol;
    }
    parent->vals[parent->n++] = val;
    return 0;
}

/* ---- errors --------------------------------------------------------------------- */

int cfg_error(const cfg_node *n, tp_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *body = tp_vformat(fmt, ap); /* whole: tp_err_at shortens the message, not the reason */
    va_end(ap);
    if (!body) return tp_err_at(err, n->file, n->line, n->col, "out of memory");
    if (n->path && n->path[0]) tp_err_at(err, n->file, n->line, n->col, "%s: %s", n->path, body);
    else tp_err_at(err, n->file, n->line, n->col, "%s", body);
    free(body);
    return -1;
}

/* ---- conversion from libyaml ---------------------------------------------------- */

static cfg_node *cfg_convert(cfg_doc *doc, yaml_document_t *ydoc, yaml_node_t *y,
                             const char *path, int depth, tp_err *err);

static cfg_node *cfg_convert_node(cfg_doc *doc, yaml_document_t *ydoc, yaml_node_t *y,
                                  const char *path, int depth, tp_err *err)
{
    int line = (int)y->start_mark.line + 1, col = (int)y->start_mark.column + 1;
    if (depth > CFG_MAX_DEPTH) {
        tp_err_at(err, doc->file, line, col, "nesting deeper than %d levels", CFG_MAX_DEPTH);
        return NULL;
    }
    cfg_node *n = NULL;
    switch (y->type) {
    case YAML_SCALAR_NODE:
        n = cfg_new_node(doc, CFG_SCALAR, doc->file, line, col, path);
        if (!n) break;
        n->text = cfg_strdup(doc, (const char *)y->data.scalar.value, y->data.scalar.length);
        if (!n->text) return NULL;
        if (strlen(n->text) != y->data.scalar.length) {
            tp_err_at(err, doc->file, line, col, "%s: NUL byte inside a scalar", path);
            return NULL;
        }
        n->quoted = y->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        return n;
    case YAML_SEQUENCE_NODE: {
        n = cfg_new_node(doc, CFG_SEQ, doc->file, line, col, path);
        if (!n) break;
        size_t i = 0;
        for (yaml_node_item_t *it = y->data.sequence.items.start; it < y->data.sequence.items.top;
             it++, i++) {
            char idx[32];
            snprintf(idx, sizeof idx, "%zu", i);
            const char *cpath = cfg_join_path(doc, path, idx);
            yaml_node_t *child = yaml_document_get_node(ydoc, *it);
            cfg_node *c = cpath && child ? cfg_convert(doc, ydoc, child, cpath, depth + 1, err)
                                         : NULL;
            if (!c || cfg_append(doc, n, NULL, 0, 0, c) != 0) return NULL;
        }
        return n;
    }
    case YAML_MAPPING_NODE: {
        n = cfg_new_node(doc, CFG_MAP, doc->file, line, col, path);
        if (!n) break;
        if (y->data.mapping.pairs.top - y->data.mapping.pairs.start > CFG_MAX_KEYS) {
            tp_err_at(err, doc->file, line, col, "%s%smore than %d keys in one mapping", path,
                      path[0] ? ": " : "", CFG_MAX_KEYS);
            return NULL;
        }
        for (yaml_node_pair_t *p = y->data.mapping.pairs.start; p < y->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(ydoc, p->key);
            yaml_node_t *v = yaml_document_get_node(ydoc, p->value);
            if (!k || !v) return NULL;
            int kl = (int)k->start_mark.line + 1, kc = (int)k->start_mark.column + 1;
            if (k->type != YAML_SCALAR_NODE) {
                tp_err_at(err, doc->file, kl, kc, "%s%sa mapping key must be a plain name",
                          path, path[0] ? ": " : "");
                return NULL;
            }
            const char *key = cfg_strdup(doc, (const char *)k->data.scalar.value,
                                         k->data.scalar.length);
            if (!key) return NULL;
            for (size_t j = 0; j < n->n; j++)
                if (strcmp(n->keys[j], key) == 0) {
                    char sb[TP_SHORT_MAX];
                    tp_err_at(err, doc->file, kl, kc,
                              "duplicate key '%s' (first at line %d), each key may appear once",
                              tp_shorten(key, sb), n->key_line[j]);
                    return NULL;
                }
            const char *cpath = cfg_join_path(doc, path, key);
            cfg_node *c = cpath ? cfg_convert(doc, ydoc, v, cpath, depth + 1, err) : NULL;
            if (!c || cfg_append(doc, n, key, kl, kc, c) != 0) return NULL;
        }
        return n;
    }
    default:
        tp_err_at(err, doc->file, line, col, "empty YAML node");
        return NULL;
    }
    if (!n && doc->nodes >= CFG_MAX_NODES)
        tp_err_at(err, doc->file, line, col, "more than %d YAML nodes (alias expansion?)",
                  CFG_MAX_NODES);
    return NULL;
}

/* The arena cap can refuse any allocation below; the innermost node reports it, once. */
/* An alias is the same YAML node as its anchor: convert each node once and share it, so
 * alias repetition costs nothing (no re-expansion, no repeated duplicate-key checks). */
static cfg_node cfg_in_progress;

static cfg_node *cfg_convert(cfg_doc *doc, yaml_document_t *ydoc, yaml_node_t *y,
                             const char *path, int depth, tp_err *err)
{
    size_t index = (size_t)(y - ydoc->nodes.start);
    cfg_node **memo = index < doc->memo_n ? &doc->memo[index] : NULL;
    if (memo && *memo == &cfg_in_progress) {
        tp_err_at(err, doc->file, (int)y->start_mark.line + 1, (int)y->start_mark.column + 1,
                  "%s: an alias inside its own anchor, expected a tree", path);
        return NULL;
    }
    if (memo && *memo) return *memo;
    if (memo) *memo = &cfg_in_progress;
    cfg_node *n = cfg_convert_node(doc, ydoc, y, path, depth, err);
    if (memo) *memo = n;
    if (!n && doc->full && !doc->reported) {
        doc->reported = 1;
        tp_err_at(err, doc->file, (int)y->start_mark.line + 1, (int)y->start_mark.column + 1,
                  "more than %d MiB of YAML data (alias expansion?), expected a small config",
                  (int)(CFG_MAX_BYTES >> 20));
    }
    return n;
}

static cfg_doc *cfg_new_doc(const char *name)
{
    cfg_doc *doc = calloc(1, sizeof *doc);
    if (!doc) return NULL;
    doc->file = cfg_strdup(doc, name, strlen(name));
    if (!doc->file) {
        free(doc);
        return NULL;
    }
    return doc;
}

/* Where libyaml stopped. A reader error (bad UTF-8, a control character) comes with a byte
 * offset, not a mark, so the line and column are counted from the text. */
static int cfg_yaml_error(const cfg_doc *doc, const yaml_parser_t *p, const char *text,
                          size_t len, tp_err *err)
{
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->error == YAML_READER_ERROR) {
        line = col = 1;
        for (size_t i = 0; i < p->problem_offset && i < len; i++, col++)
            if (text[i] == '\n') line++, col = 0;
    }
    size_t at = p->problem_mark.index;
    if (p->error != YAML_READER_ERROR && at < len && text[at] == '\t')
        /* libyaml's words for it ("cannot start any token") never say tab */
        return tp_err_at(err, doc->file, line, col,
                         "a tab: YAML indents with spaces only, expected spaces here");
    return tp_err_at(err, doc->file, line, col, "YAML syntax error: %s%s%s",
                     p->problem ? p->problem : "unknown", p->context ? " " : "",
                     p->context ? p->context : "");
}

/* libyaml's scanner rescans one saved simple key per open flow level on every token, so
 * loading "[[[[...]]]]" costs O(depth^2) (20 s for 100k levels) before cfg_convert could
 * refuse it. The event stream is lazy: check the depth there first, stopping at the first
 * node too deep. Syntax errors are left to the load, which reports them. */
static int cfg_check_depth(const cfg_doc *doc, const char *text, size_t len, tp_err *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int levels = 0, rc = 0, done = 0;
    if (!yaml_parser_initialize(&p)) return tp_err_set(err, "%s: out of memory", doc->file);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done && yaml_parser_parse(&p, &ev)) {
        yaml_event_type_t t = ev.type;
        int node = t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT ||
                   t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT;
        if (node && levels > CFG_MAX_DEPTH) { /* same rule as cfg_convert: depth = open parents */
            rc = tp_err_at(err, doc->file, (int)ev.start_mark.line + 1,
                           (int)ev.start_mark.column + 1, "nesting deeper than %d levels",
                           CFG_MAX_DEPTH);
            done = 1;
        }
        if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) levels++;
        if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) levels--;
        if (t == YAML_STREAM_END_EVENT) done = 1;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

static int cfg_parse(cfg_doc *doc, const char *text, size_t len, tp_err *err)
{
    yaml_parser_t parser;
    yaml_document_t ydoc;
    int rc = -1;
    if (cfg_check_depth(doc, text, len, err)) return -1;
    if (!yaml_parser_initialize(&parser)) return tp_err_set(err, "%s: out of memory", doc->file);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &ydoc)) {
        cfg_yaml_error(doc, &parser, text, len, err);
        yaml_parser_delete(&parser);
        return -1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&ydoc);
    if (!root) {
        tp_err_at(err, doc->file, 1, 1, "empty file, expected a YAML mapping");
    } else if (root->type != YAML_MAPPING_NODE) {
        tp_err_at(err, doc->file, (int)root->start_mark.line + 1,
                  (int)root->start_mark.column + 1, "the top level must be a mapping (key: value)");
    } else {
        doc->memo_n = (size_t)(ydoc.nodes.top - ydoc.nodes.start);
        doc->memo = calloc(doc->memo_n ? doc->memo_n : 1, sizeof *doc->memo);
        if (!doc->memo) tp_err_set(err, "%s: out of memory", doc->file);
        else if ((doc->root = cfg_convert(doc, &ydoc, root, "", 0, err)) != NULL) rc = 0;
        free(doc->memo);
        doc->memo = NULL;
        doc->memo_n = 0;
    }
    yaml_document_delete(&ydoc);
    if (rc == 0) { /* a second document is refused, not silently ignored */
        yaml_document_t extra;
        if (!yaml_parser_load(&parser, &extra)) {
            cfg_yaml_error(doc, &parser, text, len, err);
            rc = -1;
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&extra);
            if (r2) {
                tp_err_at(err, doc->file, (int)r2->start_mark.line + 1,
                          (int)r2->start_mark.column + 1,
                          "a second YAML document, expected exactly one");
                rc = -1;
            }
            yaml_document_delete(&extra);
        }
    }
    yaml_parser_delete(&parser);
    return rc;
}

cfg_doc *cfg_load_string(const char *name, const char *text, size_t len, tp_err *err)
{
    cfg_doc *doc = cfg_new_doc(name);
    if (!doc) {
        tp_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    if (cfg_parse(doc, text, len, err) != 0) {
        cfg_free(doc);
        return NULL;
    }
    return doc;
}

cfg_doc *cfg_load(const char *path, tp_err *err)
{
    char *buf;
    size_t len;
    /* a config bigger than 64 MiB is not a config; a directory is "cannot open", which a
     * scenario reports at the line naming the file */
    if (rfile_read(path, (size_t)64 << 20, "a YAML file", &buf, &len, err)) return NULL;
    cfg_doc *doc = cfg_load_string(path, buf, len, err);
    free(buf);
    return doc;
}

void cfg_free(cfg_doc *doc)
{
    if (!doc) return;
    for (cfg_chunk *c = doc->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(doc);
}

cfg_node *cfg_root(cfg_doc *doc) { return doc->root; }
const char *cfg_file(const cfg_doc *doc) { return doc->file; }

/* ---- overrides ------------------------------------------------------------------ */

int cfg_set(cfg_doc *doc, const char *assignment, int index, tp_err *err)
{
    const char *eq = strchr(assignment, '=');
    return cfg_set_at(doc, assignment, "--set", index, eq ? (int)(eq - assignment) + 2 : 1, err);
}

int cfg_set_at(cfg_doc *doc, const char *assignment, const char *src, int line, int vcol,
               tp_err *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return tp_err_set(err, "--set %s: expected dotted.key=value", assignment);
    const char *file = cfg_strdup(doc, src, strlen(src));
    char *path = cfg_strdup(doc, assignment, (size_t)(eq - assignment));
    if (!file || !path) return tp_err_set(err, "out of memory");
    int index = line;
    cfg_node *cur = doc->root;
    const char *walked = "";
    for (char *part = path, *dot; part; part = dot) {
        dot = strchr(part, '.');
        if (dot) *dot++ = '\0';
        if (!part[0])
            return tp_err_at(err, file, index, 1, "%s: empty key component, expected a.b.c=value",
                             assignment);
        const char *here = cfg_join_path(doc, walked, part);
        if (!here) return tp_err_set(err, "out of memory");
        int more = dot != NULL;
        if (cur->kind == CFG_SCALAR)
            return tp_err_at(err, file, index, 1, "%s: '%s' is a scalar, it has no key '%s'",
                             here, walked, part);
        cfg_node *next = NULL;
        if (cur->kind == CFG_SEQ) {
            long i;
            if (num_long(part, 0, (long)cur->n - 1, &i) != NUM_OK)
                return tp_err_at(err, file, index, 1,
                                 "%s: '%s' is a list of %zu, expected an index 0..%zu", here,
                                 walked, cur->n, cur->n ? cur->n - 1 : 0);
            next = cur->vals[i];
        } else {
            next = cfg_get(cur, part);
            if (!next) {
                next = cfg_new_node(doc, more ? CFG_MAP : CFG_SCALAR, file, index, 1, here);
                if (!next || cfg_append(doc, cur, cfg_strdup(doc, part, strlen(part)), index, 1,
                                        next) != 0)
                    return tp_err_set(err, "out of memory");
            }
        }
        cur = next;
        walked = here;
    }
    if (cur == doc->root) return tp_err_set(err, "--set %s: empty key", assignment);
    if (cur->kind != CFG_SCALAR)
        return tp_err_at(err, file, index, vcol, "%s: is a %s, --set overrides only scalars",
                         walked, cur->kind == CFG_MAP ? "mapping" : "list");
    cur->text = cfg_strdup(doc, eq + 1, strlen(eq + 1));
    if (!cur->text) return tp_err_set(err, "out of memory");
    cur->quoted = 0;
    cur->file = file;
    cur->line = index;
    cur->col = vcol;
    return 0;
}

/* ---- typed access --------------------------------------------------------------- */

cfg_node *cfg_find(const cfg_node *root, const char *dotted)
{
    char part[128];
    const cfg_node *cur = root;
    size_t n = strlen(dotted);
    /* "a.b." would otherwise name a.b: a second spelling of one number, which let a file
     * declare the same number twice */
    if (n && dotted[n - 1] == '.') return NULL;
    for (const char *p = dotted; cur && *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len == 0 || len >= sizeof part) return NULL;
        memcpy(part, p, len);
        part[len] = '\0';
        if (cur->kind == CFG_MAP) {
            cur = cfg_get(cur, part);
        } else if (cur->kind == CFG_SEQ) {
            long i;
            cur = num_long(part, 0, (long)cur->n - 1, &i) != NUM_OK ? NULL : cur->vals[i];
        } else {
            return NULL;
        }
        p = dot ? dot + 1 : p + len;
    }
    return (cfg_node *)cur;
}

cfg_node *cfg_get(const cfg_node *map, const char *key)
{
    if (!map || map->kind != CFG_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) return map->vals[i];
    return NULL;
}

static const char *cfg_kind_name(cfg_kind k)
{
    return k == CFG_MAP ? "a mapping" : k == CFG_SEQ ? "a list" : "a scalar";
}

int cfg_expect_map(const cfg_node *node, const char *const *allowed, tp_err *err)
{
    if (node->kind != CFG_MAP)
        return cfg_error(node, err, "is %s, expected a mapping", cfg_kind_name(node->kind));
    for (size_t i = 0; i < node->n; i++) {
        int known = 0;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, node->keys[i]) == 0;
        if (known) continue;
        char list[256] = "";
        size_t used = 0;
        for (const char *const *a = allowed; *a && used < sizeof list - 8; a++) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *a);
            if (w < 0) break;
            used += (size_t)w;
        }
        if (used >= sizeof list) strcpy(list + sizeof list - 5, "...");
        const char *p = node->path;
        char sb[TP_SHORT_MAX];
        return tp_err_at(err, node->vals[i]->file == node->file ? node->file : node->vals[i]->file,
                         node->key_line[i], node->key_col[i],
                         "unknown key '%s'%s%s, expected one of: %s", tp_shorten(node->keys[i], sb),
                         p[0] ? " in " : "", p, list);
    }
    return 0;
}

cfg_node *cfg_need(const cfg_node *map, const char *key, tp_err *err)
{
    cfg_node *n = cfg_get(map, key);
    if (!n) cfg_error(map, err, "missing required key '%s'", key);
    return n;
}

int cfg_as_string(const cfg_node *n, const char **out, tp_err *err)
{
    if (n->kind != CFG_SCALAR)
        return cfg_error(n, err, "is %s, expected a string", cfg_kind_name(n->kind));
    if (!n->text[0]) return cfg_error(n, err, "is empty, expected a string");
    *out = n->text;
    return 0;
}

int cfg_as_double(const cfg_node *n, double lo, double hi, double *out, tp_err *err)
{
    if (n->kind != CFG_SCALAR || n->quoted || !n->text[0])
        return cfg_error(n, err, "expected a number in [%g, %g], got %s", lo, hi,
                         n->kind != CFG_SCALAR ? cfg_kind_name(n->kind)
                         : n->text[0]          ? "a quoted string"
                                               : "nothing");
    double v;
    char sb[TP_SHORT_MAX];
    if (num_double(n->text, -HUGE_VAL, HUGE_VAL, &v) != NUM_OK)
        return cfg_error(n, err, "'%s' is not a number, expected a number in [%g, %g]",
                         tp_shorten(n->text, sb), lo, hi);
    if (v < lo || v > hi)
        return cfg_error(n, err, "%g is out of range, expected a number in [%g, %g]", v, lo, hi);
    *out = v;
    return 0;
}

int cfg_as_long(const cfg_node *n, long lo, long hi, long *out, tp_err *err)
{
    if (n->kind != CFG_SCALAR || n->quoted || !n->text[0])
        return cfg_error(n, err, "expected an integer in [%ld, %ld]", lo, hi);
    long v;
    char sb[TP_SHORT_MAX];
    if (num_long(n->text, LONG_MIN, LONG_MAX, &v) == NUM_SYNTAX)
        return cfg_error(n, err, "'%s' is not an integer, expected an integer in [%ld, %ld]",
                         tp_shorten(n->text, sb), lo, hi);
    if (num_long(n->text, lo, hi, &v) != NUM_OK)
        return cfg_error(n, err, "%s is out of range, expected an integer in [%ld, %ld]",
                         tp_shorten(n->text, sb), lo, hi);
    *out = v;
    return 0;
}

int cfg_as_bool(const cfg_node *n, int *out, tp_err *err)
{
    if (n->kind == CFG_SCALAR && !n->quoted) {
        if (strcmp(n->text, "true") == 0) return *out = 1, 0;
        if (strcmp(n->text, "false") == 0) return *out = 0, 0;
    }
    return cfg_error(n, err, "expected true or false");
}

int cfg_as_choice(const cfg_node *n, const char *const *choices, int *out, tp_err *err)
{
    const char *s;
    char sb[TP_SHORT_MAX];
    if (n->kind == CFG_SCALAR && n->text[0]) {
        s = n->text;
        for (int i = 0; choices[i]; i++)
            if (strcmp(s, choices[i]) == 0) return *out = i, 0;
    }
    char list[200] = "";
    size_t used = 0;
    for (int i = 0; choices[i] && used < sizeof list - 40; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 choices[i]);
    return cfg_error(n, err, "'%s' is not allowed, expected one of: %s",
                     n->kind == CFG_SCALAR ? tp_shorten(n->text, sb) : cfg_kind_name(n->kind),
                     list);
}

int cfg_double(const cfg_node *map, const char *key, int required, double lo, double hi,
               double *out, tp_err *err)
{
    cfg_node *n = required ? cfg_need(map, key, err) : cfg_get(map, key);
    if (!n) return required ? -1 : 0;
    return cfg_as_double(n, lo, hi, out, err);
}

int cfg_long(const cfg_node *map, const char *key, int required, long lo, long hi, long *out,
             tp_err *err)
{
    cfg_node *n = required ? cfg_need(map, key, err) : cfg_get(map, key);
    if (!n) return required ? -1 : 0;
    return cfg_as_long(n, lo, hi, out, err);
}

int cfg_bool(const cfg_node *map, const char *key, int required, int *out, tp_err *err)
{
    cfg_node *n = required ? cfg_need(map, key, err) : cfg_get(map, key);
    if (!n) return required ? -1 : 0;
    return cfg_as_bool(n, out, err);
}

int cfg_string(const cfg_node *map, const char *key, int required, const char **out,
               tp_err *err)
{
    cfg_node *n = required ? cfg_need(map, key, err) : cfg_get(map, key);
    if (!n) return required ? -1 : 0;
    return cfg_as_string(n, out, err);
}

int cfg_string_fits(const cfg_node *map, const char *key, int required, size_t cap,
                    const char **out, tp_err *err)
{
    const char *v = NULL;
    if (cfg_string(map, key, required, &v, err)) return -1;
    if (v && strlen(v) >= cap) {
        char sb[TP_SHORT_MAX];
        return cfg_error(cfg_get(map, key), err,
                         "'%s' is longer than %zu bytes, expected a short name", tp_shorten(v, sb),
                         cap - 1);
    }
    if (v) *out = v;
    return 0;
}

int cfg_source(const cfg_node *map, int required, tp_err *err)
{
    cfg_node *n = required ? cfg_need(map, "source", err) : cfg_get(map, "source");
    if (!n) return required ? -1 : 0;
    if (n->kind == CFG_SCALAR) {
        const char *s;
        return cfg_as_string(n, &s, err);
    }
    if (n->kind != CFG_MAP || n->n == 0)
        return cfg_error(n, err,
                         "expected a string or a mapping saying how and where it was measured");
    for (size_t i = 0; i < n->n; i++)
        if (n->vals[i]->kind != CFG_SCALAR)
            return cfg_error(n->vals[i], err, "is %s, expected a scalar",
                             cfg_kind_name(n->vals[i]->kind));
    return 0;
}
