/* trace_nsys.c: see trace_nsys.h. */
#include "trace_nsys.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_nsys_is_sqlite(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char head[16];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, "SQLite format 3", 16) == 0;
}

typedef struct nsys {
    sqlite3 *db;
    tr_trace *t;
    const char *path;
    tp_err *err;
    size_t first; /* index of this file's first rank in t */
    tr_idmap by_pid; /* globalPid -> rank index */
    int oom;
} nsys;

static int nsys_has_table(nsys *n, const char *table)
{
    sqlite3_stmt *st;
    int has = 0;
    if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1,
                           &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    has = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return has;
}

static int nsys_fail(nsys *n, const char *what)
{
    return tp_err_set(n->err, "%s: %s: %s, expected an nsys export --type sqlite file", n->path,
                      what, sqlite3_errmsg(n->db));
}

/* The rank of a process id, adding one the first time it is seen. */
static tr_rank *nsys_rank(nsys *n, int64_t pid, int add)
{
    long i = tr_idmap_get(&n->by_pid, pid);
    if (i >= 0) return &n->t->ranks[i];
    if (!add) return NULL;
    if (tr_idmap_put(&n->by_pid, pid, n->t->n_ranks)) return NULL;
    tr_rank *r = tr_add_rank(n->t, n->path);
    if (r) r->rank = (long)(n->t->n_ranks - 1);
    return r;
}

/* A name without the runtime's "_vNNNN" API-version suffix. */
static size_t nsys_base_len(const char *s)
{
    size_t len = strlen(s), i = len;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    if (i < len && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_') return i - 2;
    return len;
}

/* Both ends inside +-TR_TIME_MAX (trace_data.h), so end - start is defined; 0 or -1 with the
 * error set (the statement is the caller's to finalize). */
static int nsys_times(nsys *n, int64_t start, int64_t end, const char *what)
{
    if (start < -TR_TIME_MAX || start > TR_TIME_MAX || end < -TR_TIME_MAX || end > TR_TIME_MAX)
        return tp_err_set(n->err,
                          "%s: %s at %lld..%lld ns, beyond +-2^61 ns, expected the times of "
                          "one recording",
                          n->path, what, (long long)start, (long long)end);
    return 0;
}

/* The process bits of a globalTid (its low 24 bits are the thread), without shifting a
 * negative number. */
static int64_t nsys_pid_of(int64_t tid) { return (int64_t)((uint64_t)tid & ~(uint64_t)0xffffff); }

static int nsys_gpu(nsys *n, const char *sql, tr_gpu_kind kind)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
        return nsys_fail(n, "cannot query GPU activity");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || end < start) {
            sqlite3_finalize(st);
            return tp_err_set(
                n->err,
                "%s: a GPU activity with end before start (or no start), expected start <= end",
                n->path);
        }
        if (nsys_times(n, start, end, "a GPU activity")) {
            sqlite3_finalize(st);
            return -1;
        }
        tr_rank *r = nsys_rank(n, sqlite3_column_int64(st, 3), 1);
        const unsigned char *name = sqlite3_column_text(st, 6);
        const char *nm = name ? (const char *)name : (kind == TR_MEMCPY ? "Memcpy" : "Memset");
        uint32_t id = r ? tr_intern(n->t, nm, strlen(nm)) : UINT32_MAX;
        tr_gpu g = {start,
                    end - start,
                    sqlite3_column_int64(st, 2),
                    0,
                    sqlite3_column_int64(st, 4),
                    sqlite3_column_double(st, 5),
                    id,
                    (uint32_t)sqlite3_column_int64(st, 4),
                    0,
                    (uint8_t)kind};
        if (id == UINT32_MAX || tr_push_gpu(r, &g)) {
            sqlite3_finalize(st);
            return tp_err_set(n->err, "%s: %s", n->path, tr_oom_why(n->t));
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : nsys_fail(n, "cannot read GPU activity");
}

static int nsys_calls(nsys *n)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT r.start, r.end, r.correlationId, r.globalTid, s.value FROM "
                      "CUPTI_ACTIVITY_KIND_RUNTIME r "
                      "LEFT JOIN StringIds s ON s.id = r.nameId ORDER BY r.correlationId, r.start";
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
        return nsys_fail(n, "cannot query runtime calls");
    int rc;
    int64_t last_corr = -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t corr = sqlite3_column_int64(st, 2), tid = sqlite3_column_int64(st, 3);
        /* the export repeats a call under its versioned name inside the outer one: keep the outer
         */
        if (corr != 0 && corr == last_corr) continue;
        last_corr = corr;
        tr_rank *r = nsys_rank(n, nsys_pid_of(tid), 0); /* globalTid carries the globalPid's bits */
        if (!r) continue;                               /* a process without GPU work */
        const unsigned char *name = sqlite3_column_text(st, 4);
        const char *nm = name ? (const char *)name : "";
        int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        if (nsys_times(n, start, end, "a runtime call")) {
            sqlite3_finalize(st);
            return -1;
        }
        uint32_t id = tr_intern(n->t, nm, nsys_base_len(nm));
        tr_call c = {start, end > start ? end - start : 0, corr, 0, tid, id, 0};
        if (id == UINT32_MAX || tr_push_call(r, &c)) {
            sqlite3_finalize(st);
            return tp_err_set(n->err, "%s: out of memory", n->path);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : nsys_fail(n, "cannot read runtime calls");
}

static int nsys_ranges(nsys *n)
{
    sqlite3_stmt *st;
    const char *sql =
        "SELECT n.start, n.end, n.globalTid, COALESCE(n.text, s.value) FROM NVTX_EVENTS n "
        "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.end IS NOT NULL";
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
        return nsys_fail(n, "cannot query NVTX ranges");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        tr_rank *r = nsys_rank(n, nsys_pid_of(sqlite3_column_int64(st, 2)), 0);
        const unsigned char *name = sqlite3_column_text(st, 3);
        if (!r || !name) continue;
        int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        if (nsys_times(n, start, end, "an NVTX range")) {
            sqlite3_finalize(st);
            return -1;
        }
        uint32_t id = tr_intern(n->t, (const char *)name, strlen((const char *)name));
        tr_span s = {start, end > start ? end - start : 0, id, 0};
        if (id == UINT32_MAX || tr_push_span(r, &s)) {
            sqlite3_finalize(st);
            return tp_err_set(n->err, "%s: out of memory", n->path);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : nsys_fail(n, "cannot read NVTX ranges");
}

int tr_nsys_read(tr_trace *t, const char *path, tp_err *err)
{
    nsys n = {NULL, t, path, err, t->n_ranks, {0}, 0};
    if (sqlite3_open_v2(path, &n.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        tp_err_set(err, "%s: cannot open as SQLite: %s, expected an nsys export --type sqlite file",
                   path, n.db ? sqlite3_errmsg(n.db) : "out of memory");
        sqlite3_close(n.db);
        return -1;
    }
    int rc = -1;
    if (!nsys_has_table(&n, "CUPTI_ACTIVITY_KIND_KERNEL") || !nsys_has_table(&n, "StringIds")) {
        tp_err_set(err,
                   "%s: no CUPTI_ACTIVITY_KIND_KERNEL or StringIds table, expected an nsys export "
                   "--type sqlite "
                   "of a run with CUDA tracing",
                   path);
        goto out;
    }
    /* globalPid: the process bits of globalTid; kernels are named by demangledName */
    if (nsys_gpu(&n,
                 "SELECT k.start, k.end, k.correlationId, k.globalPid, k.streamId, 0.0, s.value "
                 "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = "
                 "k.demangledName ORDER BY k.globalPid, k.start",
                 TR_KERNEL))
        goto out;
    if (nsys_has_table(&n, "CUPTI_ACTIVITY_KIND_MEMCPY") &&
        nsys_gpu(&n,
                 "SELECT start, end, correlationId, globalPid, streamId, bytes, NULL FROM "
                 "CUPTI_ACTIVITY_KIND_MEMCPY",
                 TR_MEMCPY))
        goto out;
    if (nsys_has_table(&n, "CUPTI_ACTIVITY_KIND_MEMSET") &&
        nsys_gpu(&n,
                 "SELECT start, end, correlationId, globalPid, streamId, bytes, NULL FROM "
                 "CUPTI_ACTIVITY_KIND_MEMSET",
                 TR_MEMSET))
        goto out;
    if (nsys_has_table(&n, "CUPTI_ACTIVITY_KIND_RUNTIME") && nsys_calls(&n)) goto out;
    if (nsys_has_table(&n, "NVTX_EVENTS") && nsys_ranges(&n)) goto out;
    rc = 0;
out:
    tr_idmap_free(&n.by_pid);
    if (rc) tr_truncate(t, n.first);
    sqlite3_close(n.db);
    return rc;
}
