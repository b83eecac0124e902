/* decl.h: the numbers an input file (hardware, all-reduce calibration, model, kernel
 * calibration) declares as assumed rather than sourced.
 *
 * Contract: a file's top-level `source:` (datasheet, measurement log, trace) makes every
 * number in it sourced, except the keys its top-level `assumed:` list names: [{key, why}],
 * each key a number of that same file (a dotted path, "kernel_fixed_us" or
 * "custom.one_stage.latency_us"). decl_read checks the list (one "file:line:col: ..." line,
 * -1, for a key that is not a number of the file, a repeated key, a missing why) and copies
 * it into a caller-owned value: no pointers into the YAML. The callers that run a
 * prediction (validate) print those numbers as assumptions with their sensitivity, as the
 * scenario's own `assumed:` ones. Any loader may call it; one list per file.
 */
#ifndef TPSIM_DECL_H
#define TPSIM_DECL_H

#include "cfg.h"
#include "err.h"

#define DECL_MAX 8

typedef struct decl_item {
    char key[96];      /* the number's dotted key in its file */
    char why[256];     /* why it is assumed */
    double value;      /* the file's value */
    int line, col;     /* where the value is */
} decl_item;

typedef struct decl_list {
    char file[256];    /* the file's path, for messages; "" when it declares nothing */
    int n;
    decl_item items[DECL_MAX];
} decl_list;

/* Read root's optional `assumed:` list into out (out->n 0 when absent). */
int decl_read(const cfg_node *root, decl_list *out, tp_err *err);
/* The item for `key`, or NULL. */
const decl_item *decl_find(const decl_list *l, const char *key);

#endif
