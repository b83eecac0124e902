/* ofile.h: output files that appear whole or not at all, and never clobber what they must not.
 *
 * Contract: ofile_open prepares PATH; the caller writes to o->f, then ofile_commit finishes
 * (0 on success) or ofile_abort gives up. By what PATH is:
 *   - absent or a regular file: the output goes to "PATH.tmp.XXXXXX" beside it; commit
 *     flushes, fsyncs, renames it over PATH and fsyncs the directory, so PATH holds the old
 *     content or the whole new one, never a part. A replaced file keeps its permission bits
 *     (one the user may not write is refused); a new one gets 0666 less the umask.
 *   - a symlink to a file: the same on the file it resolves to; the link stays a link.
 *   - a device, FIFO or socket (/dev/null, /dev/full, a pipe): written in place, never
 *     replaced; a FIFO with no reader is refused, not waited on.
 *   - a directory, a dangling symlink, or one of this run's inputs (rfile.h: same device
 *     and inode, e.g. `sweep S -o S`): refused.
 * Errors: one line in err, -1, and no file left behind. While a temporary file exists it is
 * registered with a signal guard (installed by the first ofile_open; signals the process
 * ignores stay ignored): SIGINT, SIGTERM, SIGHUP and SIGXFSZ remove it, then the signal is
 * re-raised with its default action, so the exit status is the signal's (SIGXFSZ first
 * prints one line). The guard's registry (OFILE_MAX_LIVE paths) is process-wide state.
 */
#ifndef TPSIM_OFILE_H
#define TPSIM_OFILE_H

#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include "err.h"

#define OFILE_PATH_MAX 4096
#define OFILE_MAX_LIVE 32
#define OFILE_MAX_SETS 4   /* folders guarded by their files' leaf names (ofile_guard_files) */
#define OFILE_LEAF_MAX 256 /* a leaf name's bytes, with its NUL */

typedef struct ofile {
    FILE *f;
    int in_place; /* a device/FIFO/socket written directly */
    int slot;     /* the signal guard's slot for tmp, -1 if none */
    char path[OFILE_PATH_MAX];       /* as the user wrote it, for messages */
    char target[OFILE_PATH_MAX];     /* the file replaced: path, or what its symlink names */
    char tmp[OFILE_PATH_MAX + 16];   /* "" when in place */
} ofile;

int ofile_open(ofile *o, const char *path, tp_err *err);
/* ofile_open for a file the command rewrites on purpose (validate --write-domain: the
 * scenario it read): the same, except that PATH may be one of this run's inputs. */
int ofile_open_update(ofile *o, const char *path, tp_err *err);
int ofile_commit(ofile *o, tp_err *err);
/* The bytes written so far pushed out (flushed; a file also fsynced), nothing published: for
 * a caller that commits with signals held (plot_commit_with), so a slow reader or disk
 * blocks before the hold, not inside it. 0, or -1 and one line (then ofile_abort). */
int ofile_flush(ofile *o, tp_err *err);
/* Safe on a zeroed ofile and after commit (does nothing then). */
void ofile_abort(ofile *o);

/* The one check that no output is an input, for every command with -o or an output operand,
 * called with the command's input operands before any work (so before an input is read and
 * before the output is opened): -1 and one line when `out` names the same file (device and
 * inode, so through symlinks and hard links) as any of inputs[0..n). "-" (stdout), a path
 * that does not exist yet, and a device/FIFO are never inputs. ofile_open refuses in the same
 * way every file the run has read through rfile (inputs a scenario names). */
int ofile_refuse_inputs(const char *out, const char *const *inputs, int n, tp_err *err);

/* A command's outputs are installed only when the whole command succeeded: ofile_commit (and
 * the figure sets of plot.h) first flushes stdout and refuses to replace anything when the
 * report written there so far failed (a full disk, /dev/full, a closed pipe), so a command
 * writes its stdout report before committing its files. 0, or -1 and one line. */
int ofile_stdout_ok(tp_err *err);

/* The same signal guard for scratch paths written outside ofile (validate --plot's staging
 * directory and its files): on a signal every registered file is removed, then every
 * registered directory (once empty). Returns a slot for ofile_guard_release, or -1 when the
 * registry is full (the path is then not guarded). */
int ofile_guard(const char *path);
void ofile_guard_release(int slot);

/* mkdir(2) and mkdtemp(3) with no signal between creating the directory and guarding it, as
 * ofile_open does for its temporary file: *slot gets the guard's slot (-1 when nothing was
 * made or the registry is full). mkdir: 0, or -1 with errno (EEXIST: it was there already).
 * A directory registered after one inside it is still removed (the handler makes passes). */
int ofile_mkdir_guarded(const char *path, mode_t mode, int *slot);
char *ofile_mkdtemp_guarded(char *tmpl, int *slot);

/* Many files of one folder guarded as one entry (a figure set, whose size the registry's
 * slots cannot bound): on a signal the handler unlinks DIR/LEAF for each of the n leaves,
 * NUL-terminated strings `stride` bytes apart from `leaves`. The caller owns DIR and the
 * leaves; it may move or grow them only through ofile_guard_files_update, which swaps them
 * in with the signals held. -1 when all OFILE_MAX_SETS entries are taken. */
int ofile_guard_files(const char *dir, const char *leaves, size_t stride, size_t n);
void ofile_guard_files_update(int slot, const char *leaves, size_t n);
void ofile_guard_files_release(int slot);

/* The guarded signals held (delivered on restore): for a caller whose several steps must
 * not be split by the guard, e.g. moving a set into place and then releasing its guards. */
void ofile_signals_hold(sigset_t *before);
void ofile_signals_restore(const sigset_t *before);

/* A child process that writes into guarded paths (plot's gnuplot), one at a time:
 * ofile_fork_guarded is fork(2) with the guarded signals held, so the guard knows the child
 * from its first instant; on a signal the guard kills (SIGKILL) and reaps it before removing
 * anything, so no file appears after the cleanup. The child starts with the caller's signal
 * mask and default dispositions. Call ofile_child_done once the child is reaped. */
pid_t ofile_fork_guarded(void);
void ofile_child_done(void);

#endif
