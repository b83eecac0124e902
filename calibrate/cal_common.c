/* cal_common.c: see cal_common.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep, mkstemp, gethostname */
#endif
#include "cal_common.h"

#include "cli.h"
#include "num.h"
#include "ofile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *tool_name = "tpsim-calibrate";

void cal_set_tool(const char *name)
{
    tool_name = name;
}

void cal_fail(const char *fmt, ...)
{
    tp_err err; /* one line, escaped, whatever a driver string holds (err.h) */
    va_list ap;
    va_start(ap, fmt);
    tp_err_vset(&err, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", tool_name, err.msg);
    exit(CAL_EXIT_FAIL);
}

void cal_check_cuda(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) cal_fail("%s: %s", what, cudaGetErrorString(err));
}

long cal_parse_long(const char *flag, const char *text, long lo, long hi)
{
    long v;
    if (num_long(text, lo, hi, &v) != NUM_OK)
        cal_fail("%s '%s' is not a whole number in %ld..%ld", flag, text, lo, hi);
    return v;
}

double cal_parse_double(const char *flag, const char *text, double lo, double hi)
{
    double v;
    if (num_double(text, lo, hi, &v) != NUM_OK)
        cal_fail("%s '%s' is not a number in %g..%g", flag, text, lo, hi);
    return v;
}

size_t cal_parse_size(const char *flag, const char *text)
{
    tp_err err;
    double bytes;
    if (cli_size(flag, text, &bytes, &err)) cal_fail("%s", err.msg);
    return (size_t)bytes;
}

double cal_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pause_briefly(void)
{
    /* 20 us: short against the waits it polls, long enough not to spin a core flat out */
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

void cal_wait_event(cudaEvent_t ev, double timeout_s, const char *what)
{
    double deadline = cal_now() + timeout_s;
    for (;;) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) cal_fail("%s: %s", what, cudaGetErrorString(e));
        if (cal_now() > deadline) cal_fail("%s: timed out after %.0f s", what, timeout_s);
        pause_briefly();
    }
}

void cal_wait_stream(cudaStream_t s, double timeout_s, const char *what)
{
    double deadline = cal_now() + timeout_s;
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) cal_fail("%s: %s", what, cudaGetErrorString(e));
        if (cal_now() > deadline) cal_fail("%s: timed out after %.0f s", what, timeout_s);
        pause_briefly();
    }
}

int cal_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        cal_fail("no CUDA device (cudaGetDeviceCount: %s)", cudaGetErrorString(e));
    if (n <= 0) cal_fail("no CUDA device (cudaGetDeviceCount found none)");
    return n;
}

void cal_cuda_version_string(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

void cal_host(char *buf, size_t len)
{
    char raw[256] = "unknown";
    if (gethostname(raw, sizeof raw - 1) != 0) snprintf(raw, sizeof raw, "unknown");
    raw[sizeof raw - 1] = '\0';
    cal_plain(buf, len, raw);
}

void cal_date(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cal_plain(char *dst, size_t len, const char *src)
{
    size_t j = 0;
    while (*src == ' ') src++;
    for (; *src && j + 1 < len; src++) {
        unsigned char c = (unsigned char)*src;
        int keep = isalnum(c) || c == ' ' || c == '.' || c == '_' || c == '-' || c == '(' ||
                   c == ')' || c == '/' || c == '+' || c == '=';
        dst[j++] = keep ? (char)c : ' ';
    }
    while (j > 0 && dst[j - 1] == ' ') j--;
    dst[j] = '\0';
}

void cal_printf(cal_text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) cal_fail("formatting the output failed");
        if (t->data && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap - t->len <= (size_t)n) cap *= 2;
        char *p = realloc(t->data, cap);
        if (!p) cal_fail("out of memory");
        t->data = p;
        t->cap = cap;
    }
}

void cal_text_free(cal_text *t)
{
    free(t->data);
    t->data = NULL;
    t->len = t->cap = 0;
}

void cal_write_output(const cal_text *t, const char *path)
{
    if (!path) {
        if (fwrite(t->data, 1, t->len, stdout) != t->len || fflush(stdout) != 0)
            cal_fail("writing to stdout failed");
        return;
    }
    /* tpsim's own output module: whole or nothing, devices in place, symlinks written through */
    ofile of;
    tp_err err;
    if (ofile_open(&of, path, &err)) cal_fail("%s", err.msg);
    if (fwrite(t->data, 1, t->len, of.f) != t->len) {
        ofile_abort(&of);
        cal_fail("%s: cannot write: %s", path, strerror(errno));
    }
    if (ofile_commit(&of, &err)) cal_fail("%s", err.msg);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cal_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cal_next_flag(cli_args *ca, const char *usage, const char *text, const char **v)
{
    tp_err err;
    int f = cli_next(ca, v, &err);
    if (f == CLI_ERROR) cal_fail("%s", err.msg);
    if (f == CLI_OPERAND) cal_fail("unexpected argument '%s' (see --help)", *v);
    if (f == 0) { /* help: the flag list from the table, as tpsim's commands print it */
        cli_help(stdout, usage, ca->flags, text);
        exit(fflush(stdout) == 0 ? 0 : CAL_EXIT_FAIL);
    }
    return f;
}
