/* cfg.h: strict YAML configuration trees (libyaml) with source positions.
 *
 * Contract: cfg_load parses one YAML document whose root is a mapping into a tree of
 * cfg_nodes owned by the cfg_doc (freed together by cfg_free). Every node remembers
 * file:line:col and its dotted path ("host.launch.mean_us"), so each check below reports
 * exactly one line, "file:line:col: path: what is wrong, what is expected", into a tp_err
 * and returns -1. Refused at load: syntax errors, duplicate keys, non-scalar keys, more
 * than one document, a root that is not a mapping, nesting deeper than CFG_MAX_DEPTH,
 * more than CFG_MAX_NODES nodes or CFG_MAX_BYTES of data (alias bombs), a mapping of more
 * than CFG_MAX_KEYS keys (the duplicate check is quadratic). Numbers must be plain (unquoted)
 * scalars. cfg_set applies a command-line override "a.b.c=value" to a scalar, creating missing
 * mapping keys; the override is then checked by the same getters as the file's values.
 */
#ifndef TPSIM_CFG_H
#define TPSIM_CFG_H

#include <stddef.h>

#include "err.h"

#define CFG_MAX_DEPTH 32
#define CFG_MAX_NODES 100000
#define CFG_MAX_KEYS 4096
#define CFG_MAX_BYTES ((size_t)256 << 20)

typedef enum cfg_kind { CFG_SCALAR, CFG_MAP, CFG_SEQ } cfg_kind;

typedef struct cfg_node cfg_node;
struct cfg_node {
    cfg_kind kind;
    const char *file; /* source name, owned by the doc */
    int line, col;    /* 1-based */
    const char *path; /* dotted path from the root ("" for the root) */
    const char *text; /* CFG_SCALAR: its text */
    int quoted;       /* CFG_SCALAR: written in quotes, so always a string */
    size_t n;         /* CFG_MAP/CFG_SEQ: number of entries */
    size_t cap;
    const char **keys;   /* CFG_MAP: entry keys */
    int *key_line, *key_col;
    cfg_node **vals;     /* CFG_MAP values, CFG_SEQ items */
};

typedef struct cfg_doc cfg_doc;

cfg_doc *cfg_load(const char *path, tp_err *err);
/* Parse from memory; `name` is used in messages. */
cfg_doc *cfg_load_string(const char *name, const char *text, size_t len, tp_err *err);
void cfg_free(cfg_doc *doc);
cfg_node *cfg_root(cfg_doc *doc);
const char *cfg_file(const cfg_doc *doc);

/* Override a scalar: assignment is "dotted.path=value"; `index` (1-based) numbers the
 * --set flag in messages ("--set:INDEX:COL"). Sequence items are addressed by number. */
int cfg_set(cfg_doc *doc, const char *assignment, int index, tp_err *err);
/* The same, with the value's position given: messages about it then read "src:line:col". */
int cfg_set_at(cfg_doc *doc, const char *assignment, const char *src, int line, int col,
               tp_err *err);
/* The node at a dotted path (sequence items by number), or NULL; an empty part or a trailing
 * "." names nothing, so each number has one spelling. */
cfg_node *cfg_find(const cfg_node *root, const char *dotted);

/* Lookup; NULL if absent (map must be a CFG_MAP). */
cfg_node *cfg_get(const cfg_node *map, const char *key);
/* Checks that `node` is a mapping whose keys are all in `allowed` (NULL-terminated). */
int cfg_expect_map(const cfg_node *node, const char *const *allowed, tp_err *err);
/* The entry or a "missing key" error pointing at the mapping. */
cfg_node *cfg_need(const cfg_node *map, const char *key, tp_err *err);

/* Typed reads of one node. */
int cfg_as_double(const cfg_node *n, double lo, double hi, double *out, tp_err *err);
int cfg_as_long(const cfg_node *n, long lo, long hi, long *out, tp_err *err);
int cfg_as_bool(const cfg_node *n, int *out, tp_err *err);
int cfg_as_string(const cfg_node *n, const char **out, tp_err *err);
/* One of `choices` (NULL-terminated); *out gets its index. */
int cfg_as_choice(const cfg_node *n, const char *const *choices, int *out, tp_err *err);

/* Field reads of a mapping: absent + optional leaves *out unchanged and returns 0. */
int cfg_double(const cfg_node *map, const char *key, int required, double lo, double hi,
               double *out, tp_err *err);
int cfg_long(const cfg_node *map, const char *key, int required, long lo, long hi, long *out,
             tp_err *err);
int cfg_bool(const cfg_node *map, const char *key, int required, int *out, tp_err *err);
int cfg_string(const cfg_node *map, const char *key, int required, const char **out,
               tp_err *err);
/* cfg_string, refusing a string that would not fit a char[cap] (a name kept in a struct). */
int cfg_string_fits(const cfg_node *map, const char *key, int required, size_t cap,
                    const char **out, tp_err *err);

/* An error located at a node: "file:line:col: path: message". */
int cfg_error(const cfg_node *n, tp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A provenance field ("source:"): a non-empty string, or a mapping whose values are all
 * scalars. Required where `required` is set: every bundled number says where it came from. */
int cfg_source(const cfg_node *map, int required, tp_err *err);

#endif
