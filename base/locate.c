/* locate.c: see locate.h. */
#include "locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <dirent.h>
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

/* path without its "./" parts and "NAME/.." pairs, in place, when that names the same file
 * (the same device and inode: a NAME that is a symbolic link keeps its ".."), so a bundled
 * scenario's "../models/x.yaml" prints as "models/x.yaml", not "scenarios/../models/x.yaml" */
static void tidy_path(char *path, const struct stat *same)
{
    char t[4096];
    size_t n = 0;
    int abs = path[0] == '/';
    const char *p = path;
    size_t starts[256];
    int depth = 0, ups = 0; /* parts kept, and leading ".." kept */
    while (*p) {
        while (*p == '/') p++;
        size_t len = strcspn(p, "/");
        if (!len) break;
        if (len == 1 && p[0] == '.') {
        } else if (len == 2 && p[0] == '.' && p[1] == '.' && depth > ups) {
            n = starts[--depth];
        } else {
            if (depth == 256 || n + len + 2 >= sizeof t) return;
            if (len == 2 && p[0] == '.' && p[1] == '.') ups++;
            starts[depth++] = n;
            if (n || abs) t[n++] = '/';
            memcpy(t + n, p, len);
            n += len;
        }
        p += len;
    }
    if (!n) t[n++] = abs ? '/' : '.';
    t[n] = '\0';
    struct stat st;
    if (stat(t, &st) == 0 && st.st_dev == same->st_dev && st.st_ino == same->st_ino)
        memcpy(path, t, n + 1);
}

/* dir/rel into out if it fits and exists (tidied: tidy_path). */
static int try_path(const char *dir, size_t dir_len, const char *rel, char *out, size_t cap)
{
    int w = dir_len ? snprintf(out, cap, "%.*s/%s", (int)dir_len, dir, rel)
                    : snprintf(out, cap, "%s", rel);
    struct stat st;
    if (!(w > 0 && (size_t)w < cap && stat(out, &st) == 0)) return 0;
    tidy_path(out, &st);
    return 1;
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

/* The names (files ending in ext, without it) a folder holds, added to names[] once each
 * and kept sorted; hidden files skipped. */
static void names_add_dir(const char *dir, const char *ext, char names[][LOCATE_NAME_MAX], int *n)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && *n < LOCATE_MAX_NAMES) {
        size_t len = strlen(e->d_name), el = strlen(ext);
        if (e->d_name[0] == '.' || len <= el || len - el >= LOCATE_NAME_MAX ||
            !ends_with(e->d_name, ext))
            continue;
        char name[LOCATE_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(len - el), e->d_name);
        int at = 0, dup = 0;
        while (at < *n && !(dup = !strcmp(names[at], name)) && strcmp(names[at], name) < 0) at++;
        if (dup) continue;
        memmove(names[at + 1], names[at], (size_t)(*n - at) * LOCATE_NAME_MAX);
        snprintf(names[at], LOCATE_NAME_MAX, "%s", name);
        (*n)++;
    }
    closedir(d);
}

/* Edit distance of a and b with case folded, capped at 9 (only small ones matter). */
static int name_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return 9;
    int row[64], prev;
    for (size_t j = 0; j <= m; j++) row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            prev = row[j];
            row[j] = sub < best ? sub : best;
        }
    }
    return row[m] > 9 ? 9 : row[m];
}

int locate_closest(const char *ref, const char *const *names, int n)
{
    size_t len = strlen(ref);
    int prefixed = -1, n_prefixed = 0;
    for (int i = 0; i < n && len; i++)
        if (!strncasecmp(names[i], ref, len)) prefixed = i, n_prefixed++;
    if (n_prefixed == 1) return prefixed; /* "a100": a100-sxm4-80gb, not b200 two edits off */
    int best = -1, best_d = 9, limit = (int)len / 4 > 2 ? (int)len / 4 : 2;
    for (int i = 0; i < n; i++) {
        int d = name_distance(ref, names[i]);
        if (d < best_d) best_d = d, best = i;
    }
    return best >= 0 && best_d <= limit ? best : -1;
}

/* "; did you mean h200? (there: a100, b200, h200)" for a name not found: the closest existing
 * name (locate_closest), and every name that exists. */
static void names_hint(const places *p, const char *kind, const char *ext, const char *ref,
                       char *buf, size_t cap)
{
    char names[LOCATE_MAX_NAMES][LOCATE_NAME_MAX], dir[1024];
    int n = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->n; i++) {
        int w = p->len[i] ? snprintf(dir, sizeof dir, "%.*s/%s", (int)p->len[i], p->dir[i], kind)
                          : snprintf(dir, sizeof dir, "%s", kind);
        if (w > 0 && (size_t)w < sizeof dir) names_add_dir(dir, ext, names, &n);
    }
    if (!n) return;
    const char *ptrs[LOCATE_MAX_NAMES] = {0};
    for (int i = 0; i < n; i++) ptrs[i] = names[i];
    int best = locate_closest(ref, ptrs, n);
    size_t used = 0;
    int w = best >= 0 ? snprintf(buf, cap, "; did you mean %s?", names[best]) : 0;
    if (w > 0) used = (size_t)w < cap ? (size_t)w : cap - 1;
    w = snprintf(buf + used, cap - used, " (%s there: ", kind);
    for (int i = 0; i < n && w > 0 && (used += (size_t)w) < cap; i++)
        w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", names[i]);
    if (w > 0 && (used += (size_t)w) < cap) snprintf(buf + used, cap - used, ")");
}

int locate_names(const char *kind, const char *ext, char names[][LOCATE_NAME_MAX])
{
    places p;
    places_fill(&p, "");
    char dir[1024];
    int n = 0;
    for (int i = 0; i < p.n; i++) {
        int w = p.len[i] ? snprintf(dir, sizeof dir, "%.*s/%s", (int)p.len[i], p.dir[i], kind)
                         : snprintf(dir, sizeof dir, "%s", kind);
        if (w > 0 && (size_t)w < sizeof dir) names_add_dir(dir, ext, names, &n);
    }
    return n;
}

int locate_file(const char *kind, const char *ext, const char *ref, const char *from, char *out,
                size_t cap, tp_err *err)
{
    if (ref[0] == '/') {
        if (snprintf(out, cap, "%s", ref) >= (int)cap)
            return tp_err_set(err, "%s: path too long", ref);
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
        char hint[600];
        names_hint(&p, kind, ext, ref, hint, sizeof hint);
        return tp_err_set(err, "'%s' not found: looked for %s in %s%s", ref, rel, list, hint);
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
