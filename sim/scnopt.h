/* scnopt.h: the overrides a caller applies to a scenario file as it loads.
 *
 * Contract: a scn_opts holds borrowed strings (argv, or a caller's store) that must outlive
 * it: `--set dotted.key=value` overrides in the user's order, extra all-reduce calibration
 * files, a trace calibration (--measured, applied before the sets), the --model override and
 * an execution-mode override applied after the sets (so the numbers of the
 * user's --set flags in messages are their own). It owns no memory. The command layer
 * fills it from flags; the engine and the validation core only read it.
 */
#ifndef TPSIM_SCNOPT_H
#define TPSIM_SCNOPT_H

#include "err.h"
#include "scenario.h"

#define SCN_OPTS_MAX_SETS 64
#define SCN_OPTS_MAX_CALIBS 16

typedef struct scn_opts {
    const char *sets[SCN_OPTS_MAX_SETS + 1];
    int n_sets;
    const char *calibs[SCN_OPTS_MAX_CALIBS];
    int n_calibs;
    char mode_set[64]; /* "execution.mode=...", applied after the --set flags; "" for none */
    char model_set[SCN_PATH_MAX + 8]; /* --model: "model=PATH|NAME", a file made absolute (the
                                         command line's paths are the current folder's), applied
                                         after the --set flags; "" for none */
    int allow_foreign_calib; /* --allow-foreign-calib */
    const char *measured;    /* --measured FILE: a trace calibration (measured.h), or NULL */
    /* not overrides: how a command runs its independent cells (par.h) */
    int jobs;          /* threads; <= 0: one per core */
    int quiet;         /* no progress line on stderr */
} scn_opts;

/* The overrides in the order they apply: the sets, --model, then the mode. Returns the count;
 * `sets` needs SCN_OPTS_MAX_SETS + 2 entries. */
int scn_opts_sets(const scn_opts *o, const char **sets);
/* Apply the command-line calibrations and --allow-foreign-calib to a bound scenario. */
int scn_opts_apply(const scn_opts *o, scenario *s, tp_err *err);
/* The scenario document with --measured and the sets applied (scenario_open_measured). */
cfg_doc *scn_opts_open(const char *path, const scn_opts *o, tp_err *err);
/* scenario_load with every override and calibration applied, and its validated: block's
 * files compared with those it reads now (domain_inputs_check). 0, or -1 with err set. */
int scn_opts_load(const char *path, const scn_opts *o, scenario *out, tp_err *err);
/* The same, its files through cache (scenario_cache_new; NULL: read each one): a command
 * that binds a scenario several times reads its model, hardware and calibrations once. */
int scn_opts_load_cached(const char *path, const scn_opts *o, scenario_cache *cache,
                         scenario *out, tp_err *err);

#endif
