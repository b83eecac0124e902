/* pline.c: see pline.h. */
#include "pline.h"

#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double pline_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pline_start(pline *p, const char *label)
{
    p->label = label && isatty(STDERR_FILENO) ? label : NULL;
    p->t0 = p->label ? pline_now() : 0;
    p->shown = 0;
    p->unit = NULL;
}

void pline_show(pline *p, double done, double total, const char *unit)
{
    if (!p->label) return;
    double now = pline_now();
    if (p->shown > 0 && now - p->shown < 0.25 && unit == p->unit) return;
    p->shown = now;
    p->unit = unit;
    if (total > 0) {
        /* a fraction below 10 keeps a decimal: 0.4/1.2 MB, not 0/1 MB (2/11 classes stay whole) */
        int digits = total < 10 && (total != floor(total) || done != floor(done));
        fprintf(stderr, "\r%s: %.*f/%.*f %s", p->label, digits, done, digits, total, unit);
        if (done > 0 && done < total)
            fprintf(stderr, "  ETA %.0fs   ", (now - p->t0) / done * (total - done));
        else
            fputs("            ", stderr);
    } else {
        fprintf(stderr, "\r%s: %.0f %s   ", p->label, done, unit);
    }
    fflush(stderr);
}

void pline_end(pline *p)
{
    if (!p->label || p->shown <= 0) return;
    fputs("\r                                                            \r", stderr);
    fflush(stderr);
    p->shown = 0;
}
