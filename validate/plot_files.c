/* plot_files.c: the strings, files, staging directory and gnuplot runs the figures share;
 * see plot_impl.h. */
#include "plot.h"

#include "ofile.h"

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
        int slot;
        if (ofile_mkdir_guarded(p, 0777, &slot) == 0) {
            c->made_len[c->n_made] = (int)(s - p);
            c->made_slot[c->n_made++] = slot;
        } else if (errno != EEXIST) {
            return tp_err_set(c->err, "plot: %s: cannot create directory: %s", p,
                              strerror(errno));
        }
        *s = keep;
        if (!keep) break;
        /* checked before the next level, so that no more than PLOT_MAX_MADE are made */
        if (c->n_made == PLOT_MAX_MADE)
            return tp_err_set(c->err, "plot: %s: would create more than %d new folders; "
                                      "expected an output folder nearer an existing one",
                              dir, PLOT_MAX_MADE);
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tp_err_set(c->err, "plot: %s: not a directory", dir);
    return 0;
}

int plot_set_begin(plot_ctx *c, const char *dir, const char *const *figs, int n_figs,
                   const char *data_ext, char *gnuplot)
{
    c->dir = dir;
    c->data_ext = data_ext;
    c->n_figs = n_figs < PLOT_MAX_FIGS ? n_figs : PLOT_MAX_FIGS;
    for (int i = 0; i < c->n_figs; i++) c->figs[i] = figs[i];
    if (plot_check(dir, c->err)) return -1;
    if (plot_find_gnuplot(gnuplot, PLOT_PATH_MAX))
        return tp_err_set(c->err, "plot: gnuplot not found on PATH; install gnuplot-nox");
    if (plot_mkdirs(c, dir)) return plot_set_end(c, -1);
    char stage[PLOT_PATH_MAX];
    snprintf(stage, sizeof stage, "%s/.plot.XXXXXX", dir);
    int slot;
    if (!ofile_mkdtemp_guarded(stage, &slot)) {
        tp_err_set(c->err, "plot: %s: cannot create a staging directory: %s", dir,
                   strerror(errno));
        return plot_set_end(c, -1);
    }
    memcpy(c->stage, stage, sizeof stage);
    c->guard[c->n_guard++] = slot;
    /* the files are registered before they exist: a signal while drawing removes them */
    for (int i = 0; i < c->n_figs; i++)
        for (int e = 0; e < PLOT_N_EXT; e++) {
            char p[PLOT_PATH_MAX + 200];
            snprintf(p, sizeof p, "%s/%s.%s", c->stage, c->figs[i], plot_ext(c, e));
            c->guard[c->n_guard++] = ofile_guard(p);
        }
    char log[PLOT_PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/%s", c->stage, PLOT_LOG);
    c->guard[c->n_guard++] = ofile_guard(log);
    return 0;
}

/* Every image is checked in the stage before any file moves: a figure gnuplot did not write
 * fails the whole set, and the old figures stay as they were, never mixed with new ones.
 * Then the set moves in, each by rename(2) within one file system, images last. */
int plot_set_install(plot_ctx *c)
{
    for (int e = 2; e < PLOT_N_EXT; e++)
        for (int i = 0; i < c->n_figs; i++) {
            char from[PLOT_PATH_MAX + 200];
            snprintf(from, sizeof from, "%s/%s.%s", c->stage, c->figs[i], plot_ext(c, e));
            struct stat sb;
            if (stat(from, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0)
                return tp_err_set(c->err, "plot: gnuplot wrote no %s.%s; the figures in %s "
                                          "are unchanged", c->figs[i], plot_ext(c, e), c->dir);
        }
    /* installed only when the whole command succeeded so far: its report reached stdout */
    if (ofile_stdout_ok(c->err)) return -1;
    for (int e = 0; e < PLOT_N_EXT; e++)
        for (int i = 0; i < c->n_figs; i++) {
            char from[PLOT_PATH_MAX + 200], to[PLOT_PATH_MAX + 200];
            snprintf(from, sizeof from, "%s/%s.%s", c->stage, c->figs[i], plot_ext(c, e));
            snprintf(to, sizeof to, "%s/%s.%s", c->dir, c->figs[i], plot_ext(c, e));
            if (rename(from, to) != 0)
                return tp_err_set(c->err, "plot: %s: cannot write: %s", to, strerror(errno));
        }
    return 0;
}

int plot_set_end(plot_ctx *c, int rc)
{
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
    for (int i = 0; i < c->n_guard; i++) ofile_guard_release(c->guard[i]);
    c->n_guard = 0;
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
    char script[96];
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
    int status = 0;
    struct timespec tick = {0, 10 * 1000 * 1000};
    long waited_ms = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            ofile_child_done();
            return tp_err_set(c->err, "plot: waiting for gnuplot: %s", strerror(errno));
        }
        if (waited_ms >= PLOT_TIMEOUT_S * 1000L) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            ofile_child_done();
            return tp_err_set(c->err, "plot: gnuplot did not finish %s within %d s; killed it",
                              script, PLOT_TIMEOUT_S);
        }
        nanosleep(&tick, NULL);
        waited_ms += 10;
    }
    ofile_child_done();
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

