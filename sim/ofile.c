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
#include <unistd.h>

#include "rfile.h"

/* ---- the signal guard: live temporary files, removed by the handler ------------------ */

static char ofile_live[OFILE_MAX_LIVE][OFILE_PATH_MAX + 16];
static volatile sig_atomic_t ofile_live_used[OFILE_MAX_LIVE];
static const int ofile_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
#define OFILE_N_SIGNALS ((int)(sizeof ofile_signals / sizeof ofile_signals[0]))

/* Async-signal-safe only: unlink, rmdir, write, signal, raise. */
static void ofile_on_signal(int sig)
{
    for (int i = 0; i < OFILE_MAX_LIVE; i++)
        if (ofile_live_used[i]) unlink(ofile_live[i]);
    /* directories, now that their files are gone, the last registered first: a folder
     * registered before the staging folder inside it is removed after it */
    for (int i = OFILE_MAX_LIVE - 1; i >= 0; i--)
        if (ofile_live_used[i]) rmdir(ofile_live[i]);
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

int ofile_open(ofile *o, const char *path, tp_err *err)
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
        if (rfile_is_input(&st))
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
    ofile_guard_install();
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", o->target);
    /* no signal between creating the temporary file and registering it */
    sigset_t guarded, before;
    sigemptyset(&guarded);
    for (int i = 0; i < OFILE_N_SIGNALS; i++) sigaddset(&guarded, ofile_signals[i]);
    sigprocmask(SIG_BLOCK, &guarded, &before);
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
