/* ofile.c: see ofile.h. */
#define _XOPEN_SOURCE 700 /* realpath (XSI) */
#include "ofile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rfile.h"

/* ---- the signal guard: live temporary files, removed by the handler ------------------ */

static char ofile_live[OFILE_MAX_LIVE][OFILE_PATH_MAX + 16];
static volatile sig_atomic_t ofile_live_used[OFILE_MAX_LIVE];

/* Files by leaf name in one folder (ofile_guard_files): caller-owned, changed only with the
 * guarded signals held, so the handler never sees a half-updated entry. */
static struct {
    const char *dir;
    const char *leaves;
    size_t stride, n;
} ofile_sets[OFILE_MAX_SETS];
static volatile sig_atomic_t ofile_sets_used[OFILE_MAX_SETS];
static char ofile_set_path[OFILE_PATH_MAX + OFILE_LEAF_MAX + 2]; /* the handler's scratch */

/* DIR/LEAF into ofile_set_path with async-signal-safe calls only; 0 if it does not fit. */
static int ofile_set_join(const char *dir, const char *leaf)
{
    size_t d = strlen(dir), l = strnlen(leaf, OFILE_LEAF_MAX);
    if (d == 0 || d >= OFILE_PATH_MAX || l == 0 || l >= OFILE_LEAF_MAX) return 0;
    memcpy(ofile_set_path, dir, d);
    ofile_set_path[d] = '/';
    memcpy(ofile_set_path + d + 1, leaf, l);
    ofile_set_path[d + 1 + l] = '\0';
    return 1;
}
static const int ofile_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
#define OFILE_N_SIGNALS ((int)(sizeof ofile_signals / sizeof ofile_signals[0]))

/* The one child writing into guarded paths (ofile_fork_guarded), 0 when none. */
static volatile pid_t ofile_child;

/* Async-signal-safe only: kill, waitpid, unlink, rmdir, write, signal, raise. */
static void ofile_on_signal(int sig)
{
    /* the child first, and reaped: it must not write a file after the cleanup below */
    pid_t child = ofile_child;
    if (child > 0) {
        kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
    }
    for (int i = 0; i < OFILE_MAX_LIVE; i++)
        if (ofile_live_used[i]) unlink(ofile_live[i]);
    for (int i = 0; i < OFILE_MAX_SETS; i++)
        if (ofile_sets_used[i])
            for (size_t k = 0; k < ofile_sets[i].n; k++)
                if (ofile_set_join(ofile_sets[i].dir,
                                   ofile_sets[i].leaves + k * ofile_sets[i].stride))
                    unlink(ofile_set_path);
    /* directories, now that their files are gone, the last registered first: a folder
     * registered before the staging folder inside it is removed after it */
    for (int pass = 0; pass < OFILE_MAX_LIVE; pass++) {
        int removed = 0; /* a parent registered after its child goes on a later pass */
        for (int i = OFILE_MAX_LIVE - 1; i >= 0; i--)
            if (ofile_live_used[i] && rmdir(ofile_live[i]) == 0) removed = 1;
        if (!removed) break;
    }
    if (sig == SIGXFSZ) {
        static const char msg[] =
            "tpsim: output file exceeds the file size limit (SIGXFSZ, ulimit -f); "
            "the partial file was removed\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
    }
    signal(sig, SIG_DFL);
    raise(sig); /* delivered with the default action once this handler returns */
}

static void ofile_guard_install(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ofile_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < OFILE_N_SIGNALS; i++) sigaddset(&sa.sa_mask, ofile_signals[i]);
    for (int i = 0; i < OFILE_N_SIGNALS; i++) {
        struct sigaction old;
        if (sigaction(ofile_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(ofile_signals[i], &sa, NULL);
    }
}

static int ofile_guard_add(const char *tmp)
{
    if (strlen(tmp) >= sizeof ofile_live[0]) return -1;
    for (int i = 0; i < OFILE_MAX_LIVE; i++)
        if (!ofile_live_used[i]) {
            memcpy(ofile_live[i], tmp, strlen(tmp) + 1);
            ofile_live_used[i] = 1; /* after the copy: the handler sees a whole path */
            return i;
        }
    return -1;
}

static void ofile_guard_drop(ofile *o)
{
    if (o->slot >= 0) ofile_live_used[o->slot] = 0;
    o->slot = -1;
}

int ofile_guard(const char *path)
{
    ofile_guard_install();
    return ofile_guard_add(path);
}

/* The guarded signals held off while a path is created and registered, so that a signal
 * never finds it made but not yet guarded; one that arrives meanwhile is delivered after. */
static void ofile_hold_signals(sigset_t *before)
{
    ofile_guard_install();
    sigset_t guarded;
    sigemptyset(&guarded);
    for (int i = 0; i < OFILE_N_SIGNALS; i++) sigaddset(&guarded, ofile_signals[i]);
    sigprocmask(SIG_BLOCK, &guarded, before);
}

void ofile_signals_hold(sigset_t *before)
{
    ofile_hold_signals(before);
}

void ofile_signals_restore(const sigset_t *before)
{
    sigprocmask(SIG_SETMASK, before, NULL);
}

int ofile_guard_files(const char *dir, const char *leaves, size_t stride, size_t n)
{
    sigset_t before;
    int slot = -1;
    ofile_hold_signals(&before);
    for (int i = 0; i < OFILE_MAX_SETS && slot < 0; i++)
        if (!ofile_sets_used[i]) {
            ofile_sets[i].dir = dir;
            ofile_sets[i].leaves = leaves;
            ofile_sets[i].stride = stride;
            ofile_sets[i].n = n;
            ofile_sets_used[i] = 1;
            slot = i;
        }
    sigprocmask(SIG_SETMASK, &before, NULL);
    return slot;
}

void ofile_guard_files_update(int slot, const char *leaves, size_t n)
{
    if (slot < 0 || slot >= OFILE_MAX_SETS) return;
    sigset_t before;
    ofile_hold_signals(&before);
    ofile_sets[slot].leaves = leaves;
    ofile_sets[slot].n = n;
    sigprocmask(SIG_SETMASK, &before, NULL);
}

void ofile_guard_files_release(int slot)
{
    if (slot >= 0 && slot < OFILE_MAX_SETS) ofile_sets_used[slot] = 0;
}

int ofile_mkdir_guarded(const char *path, mode_t mode, int *slot)
{
    sigset_t before;
    *slot = -1;
    ofile_hold_signals(&before);
    int rc = mkdir(path, mode);
    int e = errno;
    if (rc == 0) *slot = ofile_guard_add(path);
    sigprocmask(SIG_SETMASK, &before, NULL);
    errno = e;
    return rc;
}

pid_t ofile_fork_guarded(void)
{
    sigset_t before;
    ofile_hold_signals(&before);
    pid_t pid = fork();
    int e = errno;
    if (pid == 0) {
        /* the child neither runs the guard nor inherits the held mask */
        for (int i = 0; i < OFILE_N_SIGNALS; i++) {
            struct sigaction old;
            if (sigaction(ofile_signals[i], NULL, &old) == 0 && old.sa_handler == ofile_on_signal)
                signal(ofile_signals[i], SIG_DFL);
        }
        ofile_child = 0;
    } else if (pid > 0) {
        ofile_child = pid;
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    errno = e;
    return pid;
}

void ofile_child_done(void)
{
    ofile_child = 0;
}

char *ofile_mkdtemp_guarded(char *tmpl, int *slot)
{
    sigset_t before;
    *slot = -1;
    ofile_hold_signals(&before);
    char *made = mkdtemp(tmpl);
    int e = errno;
    if (made) *slot = ofile_guard_add(made);
    sigprocmask(SIG_SETMASK, &before, NULL);
    errno = e;
    return made;
}

void ofile_guard_release(int slot)
{
    if (slot >= 0 && slot < OFILE_MAX_LIVE) ofile_live_used[slot] = 0;
}

/* ---- opening ----------------------------------------------------------------------- */

static int ofile_in_place(ofile *o, tp_err *err)
{
    /* O_NONBLOCK: a FIFO with no reader fails (ENXIO) instead of blocking in open */
    int fd = open(o->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return tp_err_set(err, "%s: cannot write: %s", o->path,
                          errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        return tp_err_set(err, "%s: cannot write: %s", o->path, strerror(e));
    }
    o->in_place = 1;
    return 0;
}

static int ofile_open_as(ofile *o, const char *path, int update, tp_err *err);

int ofile_open(ofile *o, const char *path, tp_err *err) { return ofile_open_as(o, path, 0, err); }

int ofile_open_update(ofile *o, const char *path, tp_err *err)
{
    return ofile_open_as(o, path, 1, err);
}

static int ofile_open_as(ofile *o, const char *path, int update, tp_err *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (!path[0]) return tp_err_set(err, "empty output path, expected a file name");
    if (strlen(path) >= sizeof o->path - 16) return tp_err_set(err, "%s: path too long", path);
    memcpy(o->path, path, strlen(path) + 1);
    memcpy(o->target, path, strlen(path) + 1);
    mode_t mode;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return tp_err_set(err, "%s: is a directory, expected a file name", path);
        if (!S_ISREG(st.st_mode)) return ofile_in_place(o, err);
        /* rename(2) would replace a file its owner made read-only: refuse as a write would */
        if (access(path, W_OK) != 0)
            return tp_err_set(err, "%s: cannot write: %s", path, strerror(errno));
        if (!update && rfile_is_input(&st))
            return tp_err_set(err, "%s: is one of this run's inputs, refusing to overwrite it; "
                                   "expected another output name", path);
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            char *real = realpath(path, NULL);
            if (!real || strlen(real) >= sizeof o->target - 16) {
                free(real);
                return tp_err_set(err, "%s: cannot resolve the symlink", path);
            }
            memcpy(o->target, real, strlen(real) + 1);
            free(real);
        }
        mode = st.st_mode & 07777;
    } else if (errno == ENOENT) {
        struct stat lst;
        if (lstat(path, &lst) == 0)
            return tp_err_set(err, "%s: a symlink to a missing file, expected a file name", path);
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    } else {
        return tp_err_set(err, "%s: cannot write: %s", path, strerror(errno));
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", o->target);
    sigset_t before;
    ofile_hold_signals(&before);
    int fd = mkstemp(o->tmp);
    int e = errno;
    if (fd >= 0) o->slot = ofile_guard_add(o->tmp);
    sigprocmask(SIG_SETMASK, &before, NULL);
    if (fd < 0) {
        o->tmp[0] = '\0';
        return tp_err_set(err, "%s: cannot create: %s", path, strerror(e));
    }
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        ofile_abort(o);
        return tp_err_set(err, "%s: cannot create: %s", path, strerror(e));
    }
    return 0;
}

/* ---- finishing --------------------------------------------------------------------- */

/* fsync the directory holding `file`, so the rename survives a crash (best effort: some
 * file systems refuse fsync on a directory). */
static void ofile_sync_dir(const char *file)
{
    char dir[OFILE_PATH_MAX];
    const char *slash = strrchr(file, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == file) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - file), file);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int ofile_refuse_inputs(const char *out, const char *const *inputs, int n, tp_err *err)
{
    struct stat so, si;
    if (!out || !strcmp(out, "-") || stat(out, &so) != 0 || !S_ISREG(so.st_mode)) return 0;
    for (int i = 0; i < n; i++)
        if (inputs[i] && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev &&
            si.st_ino == so.st_ino)
            return tp_err_set(err, "%s: is the input %s%s, refusing to overwrite it; expected "
                                   "another output name", out, inputs[i],
                              strcmp(out, inputs[i]) ? " (the same file)" : "");
    return 0;
}

int ofile_stdout_ok(tp_err *err)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    int e = errno;
    return tp_err_set(err, "cannot write to stdout%s%s; no output file was replaced", e ? ": " : "",
                      e ? strerror(e) : "");
}

int ofile_flush(ofile *o, tp_err *err)
{
    if (!o->f) return tp_err_set(err, "%s: not open for writing", o->path);
    errno = 0;
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (!bad && !o->in_place && fsync(fileno(o->f)) != 0) bad = 1, e = errno;
    if (bad)
        return tp_err_set(err, "%s: cannot write%s%s", o->path, e ? ": " : "",
                          e ? strerror(e) : "");
    return 0;
}

int ofile_commit(ofile *o, tp_err *err)
{
    if (!o->f) return tp_err_set(err, "%s: not open for writing", o->path);
    /* the report so far must have reached stdout before a file is replaced (ofile.h) */
    if (!o->in_place && ofile_stdout_ok(err)) {
        ofile_abort(o);
        return -1;
    }
    errno = 0;
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    /* fsync makes the data durable before the rename publishes it; a device needs none */
    if (!bad && !o->in_place && fsync(fileno(o->f)) != 0) bad = 1, e = errno;
    if (fclose(o->f) != 0 && !bad) bad = 1, e = errno;
    o->f = NULL;
    if (bad) {
        ofile_abort(o);
        return tp_err_set(err, "%s: cannot write%s%s", o->path, e ? ": " : "",
                          e ? strerror(e) : "");
    }
    if (o->in_place) return 0;
    if (rename(o->tmp, o->target) != 0) {
        e = errno;
        ofile_abort(o);
        return tp_err_set(err, "%s: cannot write: %s", o->path, strerror(e));
    }
    ofile_guard_drop(o);
    o->tmp[0] = '\0';
    ofile_sync_dir(o->target);
    return 0;
}

void ofile_abort(ofile *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) { /* a temporary file exists (and may be registered) only then */
        unlink(o->tmp);
        ofile_guard_drop(o);
        o->tmp[0] = '\0';
    }
}
