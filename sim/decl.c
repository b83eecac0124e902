/* decl.c: see decl.h. */
#include "decl.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *const decl_keys[] = {"key", "why", NULL};

int decl_read(const cfg_node *root, decl_list *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    const cfg_node *list = cfg_get(root, "assumed");
    if (!list) return 0;
    if (list->kind != CFG_SEQ || list->n == 0)
        return cfg_error(list, err, "expected a list of {key, why}: the numbers of this file that "
                         "are assumed, not sourced");
    if (list->n > DECL_MAX) return cfg_error(list, err, "more than %d assumed numbers", DECL_MAX);
    snprintf(out->file, sizeof out->file, "%s", list->file);
    for (size_t i = 0; i < list->n; i++) {
        const cfg_node *e = list->vals[i];
        const char *key, *why;
        if (cfg_expect_map(e, decl_keys, err) || cfg_string(e, "key", 1, &key, err) ||
            cfg_string(e, "why", 1, &why, err))
            return -1;
        const cfg_node *kn = cfg_get(e, "key");
        if (strlen(key) >= sizeof out->items[0].key || !strcmp(key, "assumed") ||
            !strncmp(key, "assumed.", 8))
            return cfg_error(kn, err, "'%s': expected the dotted key of a number in this file",
                             key);
        if (!why[0])
            return cfg_error(cfg_get(e, "why"), err, "empty, expected why the number is assumed");
        const cfg_node *v = cfg_find(root, key);
        char *end = NULL;
        double x =
            v && v->kind == CFG_SCALAR && !v->quoted && v->text[0] ? strtod(v->text, &end) : 0;
        if (!end || *end)
            return cfg_error(kn, err,
                             "'%s' is not a number of this file, expected the dotted key of "
                             "one (a number this file states and assumes)",
                             key);
        if (decl_find(out, key))
            return cfg_error(kn, err, "'%s' is named twice, expected once", key);
        decl_item *d = &out->items[out->n++];
        snprintf(d->key, sizeof d->key, "%s", key);
        snprintf(d->why, sizeof d->why, "%s", why);
        d->value = x;
        d->line = v->line;
        d->col = v->col;
    }
    return 0;
}

const decl_item *decl_find(const decl_list *l, const char *key)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].key, key)) return &l->items[i];
    return NULL;
}
