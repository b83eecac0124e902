/* par.c: see par.h. A shared counter hands out indices under one mutex; jobs are whole
 * simulations (milliseconds to minutes), so contention is nil. */
#include "par.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct par_pool {
    size_t n, next, done;
    par_fn fn;
    void *ctx;
    pthread_mutex_t lock;
    size_t failed_at; /* lowest failing index, n if none */
    tp_err failed_err;
    const char *progress;
    double t0;
} par_pool;

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

static void *par_worker(void *arg)
{
    par_pool *p = arg;
    tp_err err;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next;
        if (i >= p->n || i > p->failed_at) { /* done, or a lower index already failed */
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        p->next++;
        pthread_mutex_unlock(&p->lock);
        memset(&err, 0, sizeof err);
        int rc = p->fn(p->ctx, i, &err);
        pthread_mutex_lock(&p->lock);
        if (rc && i < p->failed_at) {
            p->failed_at = i;
            p->failed_err = err;
        }
        p->done++;
        par_show(p);
        pthread_mutex_unlock(&p->lock);
    }
}

int par_map(size_t n, int jobs, par_fn fn, void *ctx, const char *progress, tp_err *err)
{
    par_pool p = {.n = n, .fn = fn, .ctx = ctx, .failed_at = n, .t0 = par_now()};
    p.progress = progress && isatty(2) ? progress : NULL;
    if (jobs <= 0) jobs = par_cores();
    if ((size_t)jobs > n) jobs = n ? (int)n : 1;
    if (pthread_mutex_init(&p.lock, NULL)) return tp_err_set(err, "cannot create a lock");
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    int started = 0;
    if (th)
        for (; started < jobs - 1; started++) /* the caller's thread is the last worker */
            if (pthread_create(&th[started], NULL, par_worker, &p)) break;
    par_worker(&p);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    free(th);
    pthread_mutex_destroy(&p.lock);
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
