/* plot_files.c: the bottom of the plotter: the strings, gnuplot script head and tail, files,
 * figure sets (staging directory, checks, install) and gnuplot runs the figures and drivers
 * share; see plot_impl.h and plot.h. It calls no other part of the plotter. */
#include "plot.h"

#include "ofile.h"
#include "rfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "plot_impl.h"

/* ---------------------------------------------------------------- strings ---------- */

/* A gnuplot double-quoted string literal. */
void plot_qs(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f), fputc(*s, f);
        else if (*s == '\n') fputs("\\n", f);
        else if (*s == '\r' || *s == '\t') fputc(' ', f);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* A data-file string column: double-quoted, no quotes or newlines inside. */
void plot_dat_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : (*s == '\n' || *s == '\r') ? ' ' : *s, f);
    fputc('"', f);
}

void plot_grid_name(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!base[0]) base = "grid";
    size_t len = strlen(base);
    if (len >= n) len = n - 1;
    memcpy(out, base, len);
    out[len] = '\0';
    if (len > 4 && !strcmp(out + len - 4, ".csv")) out[len - 4] = '\0';
}

/* "TP-2 b1" (or "H100 TP-2 b1" when configs share a tp), " ctx 2048" when ctx varies. */
void plot_cell_label(const plot_ctx *c, const grid_cell *g, char *out, size_t n)
{
    char ctx[32] = "";
    if (c->multi_ctx) snprintf(ctx, sizeof ctx, " ctx %ld", g->ctx);
    if (c->tp_unique) snprintf(out, n, "TP-%ld b%ld%s", g->tp, g->batch, ctx);
    else snprintf(out, n, "%s b%ld%s", g->config, g->batch, ctx);
}

int plot_config_index(const val_report *r, const char *config)
{
    for (int i = 0; i < r->n_configs; i++)
        if (!strcmp(r->configs[i].config, config)) return i;
    return r->n_configs;
}

/* "offset_ms = -3.300" for each fitted parameter, and the calibration cells. */
void plot_fit_note(const plot_ctx *c, char *out, size_t n)
{
    const val_report *r = c->r;
    size_t used = 0;
    out[0] = '\0';
    if (r->n_fit == 0) {
        snprintf(out, n, "no free parameters (nothing fitted)");
        return;
    }
    used += (size_t)snprintf(out + used, n - used, "fitted ");
    for (int i = 0; i < r->n_fit && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s = %.3f", i ? ", " : "",
                                 r->scn.fit_params[i].key, r->fitted[i]);
    int first = 1;
    for (size_t i = 0; i < r->n_cells && used < n; i++) {
        if (!r->cells[i].calibration) continue;
        char lab[96];
        plot_cell_label(c, r->cells[i].g, lab, sizeof lab);
        used += (size_t)snprintf(out + used, n - used, "%s%s", first ? " on " : ", ", lab);
        first = 0;
    }
}

/* -------------------------------------------------------------- files ------------ */

FILE *plot_open(plot_ctx *c, const char *name)
{
    char path[PLOT_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", c->stage, name);
    FILE *f = fopen(path, "w");
    if (!f) tp_err_set(c->err, "plot: %s/%s: cannot create: %s", c->dir, name, strerror(errno));
    return f;
}

int plot_close(plot_ctx *c, FILE *f, const char *name)
{
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) return tp_err_set(c->err, "plot: %s/%s: write failed", c->dir, name);
    return 0;
}

/* ---------------------------------------------------------------- the set --------- */

static const char *const plot_exts[] = {NULL /* data_ext */, "gp", "png", "svg"};
#define PLOT_N_EXT 4

static const char *plot_ext(const plot_ctx *c, int e)
{
    return e == 0 ? c->data_ext : plot_exts[e];
}

/* mkdir -p DIR, recording (and guarding) each level made here, outermost first */
static int plot_mkdirs(plot_ctx *c, const char *dir)
{
    char p[PLOT_PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char keep = *s;
        *s = '\0';
        struct stat sb;
        if (stat(p, &sb) != 0) { /* a level to make */
            int slot;
            if (c->n_made == PLOT_MAX_MADE)
                return tp_err_set(c->err, "plot: %s: would create more than %d new folders; "
                                          "expected an output folder nearer an existing one",
                                  dir, PLOT_MAX_MADE);
            if (ofile_mkdir_guarded(p, 0777, &slot) == 0) {
                c->made_len[c->n_made] = (int)(s - p);
                c->made_slot[c->n_made++] = slot;
                if (slot < 0) return tp_err_set(c->err, "plot: %s: too many files guarded at "
                                                        "once", p);
            } else if (errno != EEXIST) {
                return tp_err_set(c->err, "plot: %s: cannot create directory: %s", p,
                                  strerror(errno));
            }
        }
        *s = keep;
        if (!keep) break;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tp_err_set(c->err, "plot: %s: not a directory", dir);
    return 0;
}

/* Room for n more leaves, moved in with the signals held (the guard reads them). */
static int plot_leaves_reserve(plot_ctx *c, size_t n)
{
    sigset_t before;
    ofile_signals_hold(&before);
    void *grown = realloc(c->leaves, (c->n_leaves + n) * sizeof *c->leaves);
    if (grown) {
        c->leaves = grown;
        ofile_guard_files_update(c->files_slot, c->leaves[0], c->n_leaves);
    }
    ofile_signals_restore(&before);
    return grown ? 0 : tp_err_set(c->err, "out of memory");
}

int plot_set_begin(plot_ctx *c, const char *dir, const char *data_ext, char *gnuplot)
{
    c->dir = dir;
    c->data_ext = data_ext;
    c->stage_slot = c->files_slot = -1;
    if (plot_check(dir, c->err)) return -1;
    if (plot_find_gnuplot(gnuplot, PLOT_PATH_MAX))
        return tp_err_set(c->err, "plot: gnuplot not found on PATH; install gnuplot-nox");
    if (plot_mkdirs(c, dir)) return plot_set_end(c, -1);
    char stage[PLOT_PATH_MAX];
    snprintf(stage, sizeof stage, "%s/.plot.XXXXXX", dir);
    if (!ofile_mkdtemp_guarded(stage, &c->stage_slot)) {
        tp_err_set(c->err, "plot: %s: cannot create a staging directory: %s", dir,
                   strerror(errno));
        return plot_set_end(c, -1);
    }
    memcpy(c->stage, stage, sizeof stage);
    /* the files are registered before they exist: a signal while drawing removes them */
    if (!(c->leaves = malloc(sizeof *c->leaves))) {
        tp_err_set(c->err, "out of memory");
        return plot_set_end(c, -1);
    }
    snprintf(c->leaves[0], sizeof c->leaves[0], "%s", PLOT_LOG);
    c->n_leaves = 1;
    c->files_slot = ofile_guard_files(c->stage, c->leaves[0], sizeof c->leaves[0], 1);
    if (c->stage_slot < 0 || c->files_slot < 0) {
        tp_err_set(c->err, "plot: %s: too many files guarded at once", dir);
        return plot_set_end(c, -1);
    }
    return 0;
}

plot_ctx *plot_stage_open(const char *dir, const char *data_ext, char *gnuplot, tp_err *err)
{
    plot_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        tp_err_set(err, "out of memory");
        return NULL;
    }
    c->err = err;
    if (plot_set_begin(c, dir, data_ext, gnuplot)) {
        free(c);
        return NULL;
    }
    return c;
}

int plot_stage_fail(plot_ctx *c)
{
    plot_set_end(c, -1);
    free(c);
    return -1;
}

int plot_set_add(plot_ctx *c, const char *fig)
{
    if (strlen(fig) >= PLOT_FIG_MAX)
        return tp_err_set(c->err, "plot: figure name %s is too long", fig);
    void *grown = realloc(c->figs, (c->n_figs + 1) * sizeof *c->figs);
    if (!grown) return tp_err_set(c->err, "out of memory");
    c->figs = grown;
    if (plot_leaves_reserve(c, PLOT_N_EXT)) return -1;
    memcpy(c->figs[c->n_figs++], fig, strlen(fig) + 1);
    for (int e = 0; e < PLOT_N_EXT; e++)
        snprintf(c->leaves[c->n_leaves + e], sizeof c->leaves[0], "%s.%s", fig, plot_ext(c, e));
    c->n_leaves += PLOT_N_EXT;
    ofile_guard_files_update(c->files_slot, c->leaves[0], c->n_leaves);
    return 0;
}

/* Every image is checked in the stage before any file moves: a figure gnuplot did not write
 * fails the whole set, and the old figures stay as they were, never mixed with new ones. */
int plot_set_check(plot_ctx *c)
{
    for (int e = 2; e < PLOT_N_EXT; e++)
        for (size_t i = 0; i < c->n_figs; i++) {
            char from[PLOT_PATH_MAX + 200];
            snprintf(from, sizeof from, "%s/%s.%s", c->stage, c->figs[i], plot_ext(c, e));
            struct stat sb;
            if (stat(from, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0)
                return tp_err_set(c->err, "plot: gnuplot wrote no %s.%s; the figures in %s "
                                          "are unchanged", c->figs[i], plot_ext(c, e), c->dir);
        }
    /* a folder named like a figure would stop the renames half way (a file cannot replace
     * it): refused while nothing has moved */
    for (int e = 0; e < PLOT_N_EXT; e++)
        for (size_t i = 0; i < c->n_figs; i++) {
            char to[PLOT_PATH_MAX + 200];
            snprintf(to, sizeof to, "%s/%s.%s", c->dir, c->figs[i], plot_ext(c, e));
            struct stat sb;
            if (lstat(to, &sb) == 0 && S_ISDIR(sb.st_mode))
                return tp_err_set(c->err, "plot: %s: is a directory, expected a figure file "
                                          "or nothing; the figures in %s are unchanged",
                                  to, c->dir);
            /* as -o (ofile_open): a file this run read is never replaced by a figure that has
             * its name (a grid kept as DIR/objective.csv) */
            if (stat(to, &sb) == 0 && rfile_is_input(&sb))
                return tp_err_set(c->err, "plot: %s: is one of this run's inputs, refusing to "
                                          "overwrite it; expected another folder; the figures "
                                          "in %s are unchanged", to, c->dir);
        }
    /* installed only when the whole command succeeded so far: its report reached stdout */
    return ofile_stdout_ok(c->err) ? -1 : 0;
}

/* The set moves in, each file by rename(2) within one file system, images last; from the
 * first rename on, a signal waits for plot_set_end: the set goes in whole. */
int plot_set_move(plot_ctx *c)
{
    ofile_signals_hold(&c->held_from);
    c->held = 1;
    for (int e = 0; e < PLOT_N_EXT; e++)
        for (size_t i = 0; i < c->n_figs; i++) {
            char from[PLOT_PATH_MAX + 200], to[PLOT_PATH_MAX + 200];
            snprintf(from, sizeof from, "%s/%s.%s", c->stage, c->figs[i], plot_ext(c, e));
            snprintf(to, sizeof to, "%s/%s.%s", c->dir, c->figs[i], plot_ext(c, e));
            if (rename(from, to) != 0)
                return tp_err_set(c->err, "plot: %s: cannot write: %s", to, strerror(errno));
        }
    return 0;
}

int plot_set_install(plot_ctx *c)
{
    return plot_set_check(c) || plot_set_move(c) ? -1 : 0;
}

int plot_set_end(plot_ctx *c, int rc)
{
    /* held throughout: the guard must never see the stage half removed or its name cleared
     * while its entries are live */
    sigset_t before;
    if (!c->held) ofile_signals_hold(&before);
    if (c->stage[0]) {
        DIR *d = opendir(c->stage);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                char p[PLOT_PATH_MAX + 300];
                snprintf(p, sizeof p, "%s/%s", c->stage, e->d_name);
                unlink(p);
            }
            closedir(d);
        }
        rmdir(c->stage);
        c->stage[0] = '\0';
    }
    ofile_guard_files_release(c->files_slot);
    ofile_guard_release(c->stage_slot);
    c->files_slot = c->stage_slot = -1;
    /* the folders made here, innermost first: a failed set leaves DIR as it found it */
    for (int i = c->n_made - 1; i >= 0; i--) {
        if (rc) {
            char p[PLOT_PATH_MAX];
            snprintf(p, sizeof p, "%.*s", c->made_len[i], c->dir);
            rmdir(p);
        }
        ofile_guard_release(c->made_slot[i]);
    }
    c->n_made = 0;
    free(c->figs);
    free(c->leaves);
    c->figs = NULL;
    c->leaves = NULL;
    c->n_figs = c->n_leaves = 0;
    ofile_signals_restore(c->held ? &c->held_from : &before);
    c->held = 0;
    return rc;
}

/* The gnuplot executable on PATH (as execvp would search it), or -1. */
int plot_find_gnuplot(char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) snprintf(out, n, "./gnuplot");
        else snprintf(out, n, "%.*s/gnuplot", (int)len, p);
        struct stat sb;
        if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0) return 0;
        if (!end) break;
        p = end + 1;
    }
    return -1;
}

/* The last meaningful line gnuplot printed (its error), or "". */
static void plot_log_line(const char *stage, char *out, size_t n)
{
    char p[PLOT_PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/%s", stage, PLOT_LOG);
    out[0] = '\0';
    FILE *f = fopen(p, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *s = line, *e = line + strlen(line);
        while (*s == ' ' || *s == '\t') s++;
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        if (!*s || strspn(s, "^ ") == strlen(s)) continue; /* blank, or gnuplot's caret line */
        snprintf(out, n, "%s", s);
    }
    fclose(f);
}

/* Run `gnuplot NAME.gp` in the staging directory, with a bounded wait. */
int plot_run_gnuplot(plot_ctx *c, const char *gnuplot, const char *fig)
{
    char script[PLOT_FIG_MAX + 8];
    snprintf(script, sizeof script, "%s.gp", fig);
    fflush(NULL);
    pid_t pid = ofile_fork_guarded();
    if (pid < 0) return tp_err_set(c->err, "plot: cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(c->stage) != 0) _exit(126);
        int in = open("/dev/null", O_RDONLY);
        int log = open(PLOT_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || log < 0) _exit(126);
        dup2(in, 0);
        dup2(log, 1);
        dup2(log, 2);
        close(in);
        close(log);
        char *argv[] = {(char *)"gnuplot", script, NULL};
        execv(gnuplot, argv);
        _exit(127);
    }
    /* each reap and ofile_child_done happen with the signals held: the guard must never
     * SIGKILL a pid that was reaped and may have been reused */
    int status = 0;
    struct timespec tick = {0, 10 * 1000 * 1000};
    long waited_ms = 0;
    for (;;) {
        sigset_t before;
        ofile_signals_hold(&before);
        pid_t w = waitpid(pid, &status, WNOHANG);
        int e = errno;
        int timed_out = w == 0 && waited_ms >= PLOT_TIMEOUT_S * 1000L;
        if (timed_out) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        }
        int over = w == pid || timed_out || (w < 0 && e != EINTR);
        if (over) ofile_child_done();
        ofile_signals_restore(&before);
        if (timed_out)
            return tp_err_set(c->err, "plot: gnuplot did not finish %s within %d s; killed it",
                              script, PLOT_TIMEOUT_S);
        if (w < 0 && e != EINTR)
            return tp_err_set(c->err, "plot: waiting for gnuplot: %s", strerror(e));
        if (over) break;
        nanosleep(&tick, NULL);
        waited_ms += 10;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char msg[400];
    plot_log_line(c->stage, msg, sizeof msg);
    if (WIFSIGNALED(status))
        return tp_err_set(c->err, "plot: gnuplot was killed by signal %d drawing %s%s%s",
                          WTERMSIG(status), script, msg[0] ? ": " : "", msg);
    if (WEXITSTATUS(status) == 127 && !msg[0])
        return tp_err_set(c->err, "plot: cannot run %s; install gnuplot-nox", gnuplot);
    return tp_err_set(c->err, "plot: gnuplot failed drawing %s/%s: %s", c->dir, fig,
                      msg[0] ? msg : "no message");
}

/* ------------------------------------------------------------- scripts ------------ */

/* The head every gnuplot script of ours starts with; cmd is the command that wrote it
 * ("validate", "plan"), named in the script so a reader knows how to remake it. */
void plot_gp_png(FILE *f, const char *fig, int w, int h)
{
    fprintf(f,
            "set encoding utf8\n"
            "W = %d; H = %d\n"
            "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "    set terminal pngcairo size W,H noenhanced font \"DejaVu Sans,11\" "
            "background rgb \"white\"\n"
            "} else {\n"
            "    set terminal png size W,H noenhanced background rgb \"white\"\n"
            "}\n"
            "set output \"%s.png\"\n",
            w, h, fig);
}

void plot_gp_head(FILE *f, const char *cmd, const char *fig, const char *about, int w, int h)
{
    fprintf(f,
            "# %s.gp: %s\n"
            "# Written by tpsim %s --plot with %s.dat. Re-draw or restyle in this "
            "directory:\n"
            "#   gnuplot %s.gp\n",
            fig, about, cmd, fig, fig);
    plot_gp_png(f, fig, w, h);
    fprintf(f, "set border lw 1.2\n"
               "set grid back lt 1 lc rgb \"#e3e3e3\" lw 1\n"
               "set tics nomirror out\n");
}

void plot_gp_tail(FILE *f, const char *fig)
{
    fprintf(f,
            "set output\n"
            "set terminal svg size W,H dynamic noenhanced font \"DejaVu Sans,11\" "
            "background rgb \"white\"\n"
            "set output \"%s.svg\"\n"
            "replot\n"
            "set output\n",
            fig);
}

/* ---------------------------------------------------------------- checks, commits ---- */

int plot_check(const char *dir, tp_err *err)
{
    char gnuplot[PLOT_PATH_MAX];
    if (!dir || !dir[0]) return tp_err_set(err, "plot: empty output directory name");
    if (strlen(dir) > PLOT_PATH_MAX - 64) return tp_err_set(err, "plot: %s: path too long", dir);
    /* the deepest part of DIR that exists must be a folder this run may write in */
    char p[PLOT_PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    int missing = 0; /* the levels to make */
    for (;;) {
        struct stat sb;
        if (stat(p, &sb) == 0) {
            if (!S_ISDIR(sb.st_mode) && !strcmp(p, dir))
                return tp_err_set(err, "plot: %s: not a directory, expected a folder for the "
                                       "figures", dir);
            if (!S_ISDIR(sb.st_mode))
                return tp_err_set(err, "plot: %s: %s is not a directory, expected a folder "
                                       "for the figures", dir, p);
            if (access(p, W_OK | X_OK) != 0)
                return tp_err_set(err, "plot: %s: cannot write in %s: %s", dir, p,
                                  strerror(errno));
            break;
        }
        if ((errno != ENOENT && errno != ENOTDIR) || !strcmp(p, ".") || !strcmp(p, "/"))
            return tp_err_set(err, "plot: %s: %s", dir, strerror(errno));
        char *slash = strrchr(p, '/');
        const char *leaf = slash ? slash + 1 : p;
        if (leaf[0] && strcmp(leaf, ".") && strcmp(leaf, "..")) missing++;
        while (slash && slash > p && slash[-1] == '/') slash--;
        if (!slash) snprintf(p, sizeof p, ".");
        else if (slash == p) p[1] = '\0';
        else *slash = '\0';
    }
    if (missing > PLOT_MAX_MADE)
        return tp_err_set(err, "plot: %s: would create %d new folders, at most %d; expected an "
                               "output folder nearer an existing one", dir, missing,
                          PLOT_MAX_MADE);
    if (plot_find_gnuplot(gnuplot, sizeof gnuplot))
        return tp_err_set(err, "plot: gnuplot not found on PATH; install gnuplot-nox");
    return 0;
}

int plot_commit_with(plot_stage **sets, int n, int rc, int (*also)(void *), void *arg)
{
    for (int i = 0; i < n && !rc; i++)
        if (sets[i] && plot_set_check(sets[i])) rc = -1;
    /* from here to the last end a signal waits: `also` and the moves happen together */
    sigset_t before;
    ofile_signals_hold(&before);
    if (!rc && also && also(arg)) rc = -1;
    for (int i = 0; i < n && !rc; i++)
        if (sets[i] && plot_set_move(sets[i])) rc = -1;
    /* in reverse: each set's end gives back the signal mask its move found */
    for (int i = n - 1; i >= 0; i--) {
        if (!sets[i]) continue;
        plot_set_end(sets[i], rc);
        free(sets[i]);
        sets[i] = NULL;
    }
    ofile_signals_restore(&before);
    return rc;
}

int plot_commit(plot_stage **sets, int n, int rc)
{
    return plot_commit_with(sets, n, rc, NULL, NULL);
}
