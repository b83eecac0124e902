/* rfile.c: see rfile.h. */
#include "rfile.h"
#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fprint.h"
#include "locate.h"

static struct rfile_id {
    dev_t dev;
    ino_t ino;
    rfile_input what; /* its path as first read, its fingerprint */
} rfile_inputs[RFILE_MAX_INPUTS];
static size_t rfile_n_inputs;
/* Worker threads may load scenarios concurrently: the record takes a spin lock (held for a
 * scan of at most RFILE_MAX_INPUTS entries). */
static atomic_flag rfile_lock = ATOMIC_FLAG_INIT;

static void rfile_lock_take(void)
{
    while (atomic_flag_test_and_set_explicit(&rfile_lock, memory_order_acquire)) {}
}

static void rfile_lock_give(void) { atomic_flag_clear_explicit(&rfile_lock, memory_order_release); }

static int rfile_known(const struct stat *st)
{
    for (size_t i = 0; i < rfile_n_inputs; i++)
        if (rfile_inputs[i].dev == st->st_dev && rfile_inputs[i].ino == st->st_ino) return 1;
    return 0;
}

static void rfile_remember(const struct stat *st, const char *path, const char *buf, size_t len)
{
    rfile_lock_take();
    for (size_t i = 0; i < rfile_n_inputs && buf; i++) /* checked first, read now: its bytes */
        if (rfile_inputs[i].dev == st->st_dev && rfile_inputs[i].ino == st->st_ino &&
            !rfile_inputs[i].what.fp[0])
            fp_hex(fp_bytes(FP_SEED, buf, len), rfile_inputs[i].what.fp);
    if (!rfile_known(st) && rfile_n_inputs < RFILE_MAX_INPUTS) {
        struct rfile_id *r = &rfile_inputs[rfile_n_inputs++];
        memset(r, 0, sizeof *r);
        r->dev = st->st_dev, r->ino = st->st_ino;
        snprintf(r->what.path, sizeof r->what.path, "%s", path);
        r->what.bytes = (size_t)st->st_size;
        if (buf) fp_hex(fp_bytes(FP_SEED, buf, len), r->what.fp); /* streamed: "" */
    }
    rfile_lock_give();
}

int rfile_inputs_read(rfile_input *out, int cap)
{
    rfile_lock_take();
    int n = 0;
    for (size_t i = 0; i < rfile_n_inputs && n < cap; i++) out[n++] = rfile_inputs[i].what;
    rfile_lock_give();
    return n;
}

int rfile_is_input(const struct stat *st)
{
    if (!S_ISREG(st->st_mode)) return 0;
    rfile_lock_take();
    int known = rfile_known(st);
    rfile_lock_give();
    return known;
}

void rfile_forget_inputs(void)
{
    rfile_lock_take();
    rfile_n_inputs = 0;
    rfile_lock_give();
}

/* "64 MiB" or "1000 bytes", for messages. */
static const char *rfile_size_text(size_t cap, char *out, size_t n)
{
    if (cap >= ((size_t)1 << 20) && cap % ((size_t)1 << 20) == 0)
        snprintf(out, n, "%zu MiB", cap >> 20);
    else
        snprintf(out, n, "%zu bytes", cap);
    return out;
}

static long rfile_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read fd to end of input into *buf; regular files block, others are polled against an idle
 * deadline (RFILE_TIMEOUT_MS since the last bytes). Returns 0, or -1 with err set. */
static int rfile_slurp(int fd, int regular, const char *path, size_t cap, const char *what,
                       char **buf, size_t *len, tp_err *err)
{
    size_t size = 0, room = 8192;
    char *data = malloc(room + 1);
    long deadline = rfile_now_ms() + RFILE_TIMEOUT_MS;
    /* A FIFO reads 0 bytes (end of input) while no writer has opened it yet: for anything
     * not regular, end of input counts only when poll(2) has said so since the last read. */
    int polled = regular;
    if (!data) return tp_err_set(err, "%s: out of memory", path);
    for (;;) {
        if (size == room) {
            size_t bigger = room * 2 > cap + 1 ? cap + 1 : room * 2;
            char *grown = bigger > room ? realloc(data, bigger + 1) : NULL;
            if (!grown) {
                free(data);
                return tp_err_set(err, "%s: out of memory", path);
            }
            data = grown;
            room = bigger;
        }
        ssize_t got = read(fd, data + size, room - size);
        if (got > 0) {
            polled = regular;
            /* an idle limit, not a total: a live writer that is slow is not cut off */
            deadline = rfile_now_ms() + RFILE_TIMEOUT_MS;
            size += (size_t)got;
            if (size > cap) {
                char sz[32];
                free(data);
                return tp_err_set(err, "%s: more than %s of input, expected %s", path,
                                  rfile_size_text(cap, sz, sizeof sz), what);
            }
            continue;
        }
        if (got == 0 && polled) break;
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && (regular || errno != EAGAIN)) {
            int e = errno;
            free(data);
            return tp_err_set(err, "%s: cannot read: %s", path, strerror(e));
        }
        long left = deadline - rfile_now_ms();
        struct pollfd p = {fd, POLLIN, 0};
        polled = 1;
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            free(data);
            return tp_err_set(err,
                              "%s: no input for %d s (a FIFO nobody writes to?), "
                              "expected %s",
                              path, RFILE_TIMEOUT_MS / 1000, what);
        }
    }
    data[size] = '\0';
    *buf = data;
    *len = size;
    return 0;
}

static int rfile_cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A file that does not exist: "; did you mean DIR/NAME?" when its folder holds a file whose
 * name is close to it (locate_closest: a unique prefix or a small edit distance, on the file
 * name only), else "". At most 256 names are looked at. */
static const char *rfile_hint(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (errno != ENOENT) return buf;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char dir[1024];
    int dl = slash ? (int)(slash - path) : 0;
    if (dl >= (int)sizeof dir) return buf;
    snprintf(dir, sizeof dir, "%.*s", dl, slash == path ? "/" : path);
    DIR *d = opendir(slash ? (dl ? dir : "/") : ".");
    char (*names)[256] = d && base[0] ? malloc(256 * sizeof *names) : NULL;
    if (!names) {
        if (d) closedir(d);
        errno = ENOENT;
        return buf;
    }
    const char *ptrs[256];
    int n = 0;
    struct dirent *e;
    while (n < 256 && (e = readdir(d)))
        if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof names[0]) {
            snprintf(names[n], sizeof names[n], "%s", e->d_name);
            ptrs[n] = names[n];
            n++;
        }
    closedir(d);
    qsort(ptrs, (size_t)n, sizeof ptrs[0], rfile_cmp_name); /* one answer, any readdir order */
    int best = locate_closest(base, ptrs, n);
    if (best >= 0 && strcmp(ptrs[best], base))
        snprintf(buf, cap, "; did you mean %.200s%s%.200s?", slash ? dir : "", slash ? "/" : "",
                 ptrs[best]);
    free(names);
    errno = ENOENT;
    return buf;
}

int rfile_read(const char *path, size_t cap, const char *what, char **buf, size_t *len,
               tp_err *err)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    char hint[512];
    if (fd < 0) {
        int e = errno;
        rfile_hint(path, hint, sizeof hint);
        return tp_err_set(err, "%s: cannot open: %s%s", path, strerror(e), hint);
    }
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) != 0) {
        tp_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        tp_err_set(err, "%s: cannot open: is a directory, expected %s", path, what);
    } else if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > cap) {
        char sz[32];
        tp_err_set(err, "%s: larger than %s, expected %s", path,
                   rfile_size_text(cap, sz, sizeof sz), what);
    } else {
        int regular = S_ISREG(st.st_mode);
        /* a regular file reads as it always does; O_NONBLOCK only matters for the others */
        if (regular) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        rc = rfile_slurp(fd, regular, path, cap, what, buf, len, err);
        if (rc == 0 && regular) rfile_remember(&st, path, *buf, *len);
    }
    close(fd);
    return rc;
}

int rfile_check_regular(const char *path, size_t cap, const char *what, tp_err *err)
{
    struct stat st;
    char sz[32];
    if (stat(path, &st) != 0) {
        char hint[512];
        int e = errno;
        rfile_hint(path, hint, sizeof hint);
        return tp_err_set(err, "%s: cannot open: %s%s", path, strerror(e), hint);
    }
    if (S_ISDIR(st.st_mode))
        return tp_err_set(err, "%s: cannot open: is a directory, expected %s", path, what);
    if (!S_ISREG(st.st_mode))
        return tp_err_set(err, "%s: not a regular file (a FIFO, device or socket), expected %s",
                          path, what);
    if ((uintmax_t)st.st_size > cap)
        return tp_err_set(err, "%s: larger than %s, expected %s", path,
                          rfile_size_text(cap, sz, sizeof sz), what);
    rfile_remember(&st, path, NULL, 0);
    return 0;
}
