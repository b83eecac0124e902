/* report_json.h: `tpsim validate --format json`: one validation report as JSON on stdout.
 *
 * Contract: vjson_print writes the whole report r (scenario, grid, protocol, fitted values,
 * folds, cells, configs, evidence) as one JSON object in docs/json.md's vocabulary
 * (docs/schema/validate.json); it reads r and allocates nothing. Split from cmd_validate.c,
 * which keeps the text forms.
 */
#ifndef TPSIM_REPORT_JSON_H
#define TPSIM_REPORT_JSON_H

#include "validate.h"

void vjson_print(const val_report *r);
/* The fingerprint check of the calibration file at `path` that scenario s read (kernels,
 * all-reduce, measured: fprint.h's fp_state), or -1 when path is none of them. */
int vjson_calib_state(const scenario *s, const char *path);
/* That state in words for reports: "verified", "EDITED", "not sealed" ("" for -1) */
const char *vjson_state_name(int state);

#endif
