/* locate.c: see locate.h. */
#include "locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TPSIM_SHARE
#error "TPSIM_SHARE (the share folder) is set by the Makefile"
#endif

#define LOCATE_MAX_PLACES 32

const char *locate_share(void)
{
    return TPSIM_SHARE;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int locate_is_name(const char *ref, const char *ext)
{
    if (!ref[0] || strchr(ref, '/') || !strcmp(ref, ".") || !strcmp(ref, "..")) return 0;
    if (ends_with(ref, ext)) return 0;
    return !(strcmp(ext, ".yaml") == 0 && ends_with(ref, ".yml"));
}

typedef struct places {
    const char *dir[LOCATE_MAX_PLACES];
    size_t len[LOCATE_MAX_PLACES]; /* a $TPSIM_PATH entry is not NUL-terminated */
    int n, n_from;                 /* n_from: 1 when dir[0] is `from` */
} places;

/* An empty folder is the current one: its candidates are the ref as written. */
static void places_add(places *p, const char *dir, size_t len)
{
    if (p->n < LOCATE_MAX_PLACES) p->dir[p->n] = dir, p->len[p->n++] = len;
}

static void places_fill(places *p, const char *from)
{
    p->n = 0;
    if (from) places_add(p, from, strlen(from));
    p->n_from = p->n;
    const char *env = getenv("TPSIM_PATH");
    for (const char *s = env; s && *s;) {
        size_t len = strcspn(s, ":");
        if (len) places_add(p, s, len);
        s += len;
        if (*s == ':') s++;
    }
    places_add(p, locate_share(), strlen(locate_share()));
}

/* dir/rel into out if it fits and exists. */
static int try_path(const char *dir, size_t dir_len, const char *rel, char *out, size_t cap)
{
    int w = dir_len ? snprintf(out, cap, "%.*s/%s", (int)dir_len, dir, rel)
                    : snprintf(out, cap, "%s", rel);
    struct stat st;
    return w > 0 && (size_t)w < cap && stat(out, &st) == 0;
}

/* "A, B, C" for the message, from place `first` on. */
static void places_list(const places *p, int first, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = first; i < p->n && used < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%.*s", i > first ? ", " : "",
                         p->len[i] ? (int)p->len[i] : 1, p->len[i] ? p->dir[i] : ".");
        if (w < 0) break;
        used += (size_t)w;
    }
}

int locate_file(const char *kind, const char *ext, const char *ref, const char *from, char *out,
                size_t cap, tp_err *err)
{
    if (ref[0] == '/') {
        if (snprintf(out, cap, "%s", ref) >= (int)cap) return tp_err_set(err, "%s: path too long", ref);
        return 0;
    }
    places p;
    places_fill(&p, from);
    char list[400];
    if (locate_is_name(ref, ext)) {
        char rel[512];
        if (snprintf(rel, sizeof rel, "%s/%s%s", kind, ref, ext) >= (int)sizeof rel)
            return tp_err_set(err, "'%s': name too long", ref);
        for (int i = 0; i < p.n; i++)
            if (try_path(p.dir[i], p.len[i], rel, out, cap)) return 0;
        places_list(&p, 0, list, sizeof list);
        return tp_err_set(err, "'%s' not found: looked for %s in %s", ref, rel, list);
    }
    const char *bare = ref; /* without leading "./" and "../" */
    while (!strncmp(bare, "./", 2) || !strncmp(bare, "../", 3)) bare += bare[1] == '/' ? 2 : 3;
    for (int i = 0; i < p.n; i++) {
        if (try_path(p.dir[i], p.len[i], ref, out, cap)) return 0;
        if (i >= p.n_from && bare != ref && try_path(p.dir[i], p.len[i], bare, out, cap)) return 0;
    }
    places_list(&p, p.n_from, list, sizeof list);
    if (from && from[0]) {
        char first[1024];
        snprintf(first, sizeof first, "%s/%s", from, ref);
        return tp_err_set(err, "%s: cannot open: no such file (also looked in %s)", first, list);
    }
    return tp_err_set(err, "%s: cannot open: no such file (also looked in %s)", ref, list);
}

const char *locate_arg(const char *kind, const char *ext, const char *arg, char *buf, size_t cap,
                       tp_err *err)
{
    struct stat st;
    if (!locate_is_name(arg, ext) || stat(arg, &st) == 0) return arg;
    return locate_file(kind, ext, arg, "", buf, cap, err) ? NULL : buf;
}
