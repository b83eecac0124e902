/* pline.h: a progress line for a command that can take more than a couple of seconds
 * (trace import's bytes read, fit-kernels' rows and classes): "label: done/total unit  ETA Ns"
 * redrawn in place on stderr, at most four times a second, and erased at the end.
 *
 * Contract: pline_start with a NULL label, or with stderr not a terminal, turns the line off:
 * every later call is then a no-op, so a pipe or a log never sees it. pline_show draws the
 * first time it is called, when its unit changes (a new phase: fit-kernels' profiles read,
 * then classes fitted), and otherwise at most every 0.25 s (done and total in the caller's
 * unit, total <= 0 for none known); pline_end erases what was drawn. No allocation; one pline per
 * thread (it is drawn from the caller's).
 */
#ifndef TPSIM_PLINE_H
#define TPSIM_PLINE_H

typedef struct pline {
    const char *label; /* NULL: off */
    double t0, shown;  /* start; last drawn (monotonic s), 0: nothing on screen */
    const char *unit;  /* the last drawn line's unit: a new one (a new phase) draws at once */
} pline;

void pline_start(pline *p, const char *label);
void pline_show(pline *p, double done, double total, const char *unit);
void pline_end(pline *p);

#endif
