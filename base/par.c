/* par.c: see par.h. A shared counter hands out indices under the team's one mutex; jobs
 * are whole simulations (milliseconds to minutes), so contention is nil. */
#include "par.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One batch of jobs (one par_team_map call). */
typedef struct par_pool {
    size_t n, next, done;
    par_fn fn;
    par_fn_w fn_w; /* instead of fn: told which thread runs it */
    void *ctx;
    size_t failed_at; /* lowest failing index, n if none */
    tp_err failed_err;
    const char *progress;
    double t0;
} par_pool;

/* The threads, started once: they sleep on `wake` between batches. A batch is published
 * under the lock with a new generation number; each thread works it, then counts itself in
 * `idle`; the caller (the last worker) waits on `rest` until every thread is back. */
typedef struct par_member {
    struct par_team *team;
    int index; /* the worker index its jobs are told (par_fn_w) */
} par_member;

struct par_team {
    pthread_mutex_t lock;
    pthread_cond_t wake, rest;
    pthread_t *th;
    par_member *members;
    int n_threads, idle;
    unsigned long gen;
    int quit;
    par_pool *pool; /* the batch being worked, NULL between batches */
};

static double par_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int par_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

/* Called with the lock held. */
static void par_show(par_pool *p)
{
    if (!p->progress) return;
    double el = par_now() - p->t0;
    fprintf(stderr, "\r%s: %zu/%zu", p->progress, p->done, p->n);
    if (p->done && p->done < p->n)
        fprintf(stderr, "  ETA %.0fs   ", el / (double)p->done * (double)(p->n - p->done));
    else
        fputs("            ", stderr);
    fflush(stderr);
}

/* Work the batch until its indices run out; called with the team's lock held, returns with
 * it held. */
static void par_work(par_team *t, par_pool *p, int worker)
{
    tp_err err;
    for (;;) {
        size_t i = p->next;
        if (i >= p->n || i > p->failed_at) return; /* done, or a lower index already failed */
        p->next++;
        pthread_mutex_unlock(&t->lock);
        memset(&err, 0, sizeof err);
        int rc = p->fn_w ? p->fn_w(p->ctx, i, worker, &err) : p->fn(p->ctx, i, &err);
        pthread_mutex_lock(&t->lock);
        if (rc && i < p->failed_at) {
            p->failed_at = i;
            p->failed_err = err;
        }
        p->done++;
        par_show(p);
    }
}

static void *par_thread(void *arg)
{
    par_member *me = arg;
    par_team *t = me->team;
    unsigned long seen = 0;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->quit && t->gen == seen) pthread_cond_wait(&t->wake, &t->lock);
        if (t->quit) break;
        seen = t->gen;
        par_work(t, t->pool, me->index);
        if (++t->idle == t->n_threads) pthread_cond_signal(&t->rest);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

par_team *par_team_new(int jobs)
{
    if (jobs <= 0) jobs = par_cores();
    par_team *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (pthread_mutex_init(&t->lock, NULL)) {
        free(t);
        return NULL;
    }
    pthread_cond_init(&t->wake, NULL);
    pthread_cond_init(&t->rest, NULL);
    t->th = calloc((size_t)jobs, sizeof *t->th);
    t->members = calloc((size_t)jobs, sizeof *t->members);
    if (t->th && t->members)
        for (; t->n_threads < jobs - 1; t->n_threads++) { /* the caller is the last worker */
            t->members[t->n_threads] = (par_member){t, t->n_threads};
            if (pthread_create(&t->th[t->n_threads], NULL, par_thread, &t->members[t->n_threads]))
                break;
        }
    return t;
}

void par_team_free(par_team *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->quit = 1;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->lock);
    for (int i = 0; i < t->n_threads; i++) pthread_join(t->th[i], NULL);
    free(t->th);
    free(t->members);
    pthread_cond_destroy(&t->wake);
    pthread_cond_destroy(&t->rest);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int par_team_size(const par_team *t)
{
    return t->n_threads + 1;
}

/* One batch on the team, fn or fn_w. */
static int par_team_run(par_team *t, par_pool p, tp_err *err)
{
    size_t n = p.n;
    pthread_mutex_lock(&t->lock);
    int helpers = n > 1 && t->n_threads; /* one job: the caller alone, no wake-up */
    if (helpers) {
        t->pool = &p;
        t->idle = 0;
        t->gen++;
        pthread_cond_broadcast(&t->wake);
    }
    par_work(t, &p, t->n_threads);
    while (helpers && t->idle < t->n_threads) pthread_cond_wait(&t->rest, &t->lock);
    t->pool = NULL;
    pthread_mutex_unlock(&t->lock);
    if (p.progress) {
        fprintf(stderr, "\r%60s\r", ""); /* clear the line: results follow on stdout */
        fflush(stderr);
    }
    if (p.failed_at < n) {
        *err = p.failed_err;
        return -1;
    }
    return 0;
}

int par_team_map(par_team *t, size_t n, par_fn fn, void *ctx, const char *progress, tp_err *err)
{
    par_pool p = {.n = n, .fn = fn, .ctx = ctx, .failed_at = n, .t0 = par_now()};
    p.progress = progress && isatty(2) ? progress : NULL;
    return par_team_run(t, p, err);
}

int par_team_map_w(par_team *t, size_t n, par_fn_w fn, void *ctx, tp_err *err)
{
    par_pool p = {.n = n, .fn_w = fn, .ctx = ctx, .failed_at = n, .t0 = par_now()};
    return par_team_run(t, p, err);
}

int par_map(size_t n, int jobs, par_fn fn, void *ctx, const char *progress, tp_err *err)
{
    if (jobs <= 0) jobs = par_cores();
    if ((size_t)jobs > n) jobs = n ? (int)n : 1;
    par_team *t = par_team_new(jobs);
    if (!t) return tp_err_set(err, "cannot create a thread pool");
    int rc = par_team_map(t, n, fn, ctx, progress, err);
    par_team_free(t);
    return rc;
}
