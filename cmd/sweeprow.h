/* sweeprow.h: the columns of one `tpsim sweep` row, shared by every command that writes a
 * simulated cell (sweep, plan) so that their CSV headers and JSON keys are the same names.
 *
 * Contract: sweeprow_values fills SWEEPROW_COLS values (name, kind, value) in column order
 * from a scenario, its execution mode and a run summary; it borrows the strings (scenario
 * and model names, calibration paths; the domain marks live in the caller's buffer) and
 * allocates nothing. sweeprow_csv writes one value as
 * sweep's CSV does (RFC 4180 quoting, ms and GB with %.6f, true/false, a NULL string empty);
 * sweeprow_json writes it as a JSON key/value (a NULL string as null).
 */
#ifndef TPSIM_SWEEPROW_H
#define TPSIM_SWEEPROW_H

#include <stdio.h>

#include "domain.h"
#include "run.h"
#include "scenario.h"

struct jw;

enum { SWEEPROW_STR, SWEEPROW_INT, SWEEPROW_MS, SWEEPROW_BOOL, SWEEPROW_GB };
typedef struct sweeprow_val {
    const char *name;
    int kind;
    const char *s;
    unsigned long long u; /* SWEEPROW_INT, SWEEPROW_BOOL */
    double ms;            /* SWEEPROW_MS: milliseconds; SWEEPROW_GB: gigabytes (1e9 bytes) */
} sweeprow_val;
#define SWEEPROW_COLS 34
/* room for a row's domain marks (domain.h), joined by "; ", and the scenario's validated
 * domain statement after them */
#define SWEEPROW_MARKS_MAX (DOMAIN_MAX_MARKS * DOMAIN_MARK_MAX + DOMAIN_STATEMENT_MAX)

/* graphs: the row's execution mode (0 eager, 1 graphs); marks: the caller's buffer that the
 * domain columns point into (in_domain and domain_marks: the cell against the scenario's
 * validated domain; validated_domain: that domain and its verdict, domain_statement's words,
 * NULL when the scenario was never validated) */
void sweeprow_values(const scenario *s, int graphs, const run_summary *r, sweeprow_val *v,
                     char marks[SWEEPROW_MARKS_MAX]);
void sweeprow_csv(FILE *f, const sweeprow_val *v);
void sweeprow_json(struct jw *w, const sweeprow_val *v);

#endif
