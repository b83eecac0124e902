/* measured.h: a trace calibration (kind: trace-calibration, written by `tpsim trace import
 * -o`) loaded into a scenario: the scenario key `measured: FILE` or the flag --measured FILE.
 *
 * Contract: measured_load reads and checks the file strictly (unknown keys, another kind, a
 * value out of range: one "file:line:col: ..." line in err, -1). It reads the structured
 * values, not the file's `apply:` list: host.launch, host.collective, host.step and
 * host.phases.NAME (dist, mean_us, cv, and per_seq_us 0: the trace's value is the phase at
 * the trace's batch, not a term added to the scenario's per-sequence one),
 * gpu.kernel_fixed_us and gpu.hbm_efficiency. A part marked `unmeasured: true`,
 * or absent, sets nothing: the scenario keeps its value and the note says so.
 * measured_open applies a file to a scenario document before the user's --set flags, so the
 * order is scenario file < measured file < --set; each value it writes keeps its position in
 * the measured file (messages point there). The flag replaces the scenario's key. It
 * rewrites the document's `measured` key to the resolved path, which measured_bind reads
 * back to say, per key, what was set and whether a later override replaced it.
 * `device:` (the trace's GPU name) or, without it, `hardware:` (the hardware file the import
 * read) says which GPU was measured: a scenario on another GPU takes the file only as it
 * takes a foreign all-reduce calibration (scenario_check_measured).
 * Plain values, no allocation kept; no state.
 */
#ifndef TPSIM_MEASURED_H
#define TPSIM_MEASURED_H

#include "cfg.h"
#include "err.h"
#include "fprint.h"

#define MEASURED_PATH_MAX 512
#define MEASURED_SOURCE_MAX 320
#define MEASURED_MAX_KEYS 4

typedef enum measured_state {
    MEASURED_SET,        /* the file measured it: its keys are set */
    MEASURED_UNMEASURED, /* the file says unmeasured: true */
    MEASURED_ABSENT,     /* the file does not have it */
    MEASURED_PRICED      /* a GPU knob the scenario's kernels: calibration makes moot: not set */
} measured_state;

typedef enum measured_part {
    MEASURED_LAUNCH, MEASURED_COLLECTIVE, MEASURED_STEP, MEASURED_KERNEL_FIXED,
    MEASURED_HBM_EFFICIENCY,
    /* host.phases.NAME (phase.h's order): the phases the trace's Python functions timed */
    MEASURED_PHASE_SCHEDULE, MEASURED_PHASE_BROADCAST, MEASURED_PHASE_PREPARE_INPUTS,
    MEASURED_PHASE_SAMPLER_SYNC, MEASURED_PHASE_OUTPUT_PROCESSING, MEASURED_PARTS
} measured_part;

typedef struct measured_group {
    const char *name;                   /* scenario key of the part: "host.launch" */
    measured_state state;
    char source[MEASURED_SOURCE_MAX];   /* the file's source:, on one line */
    int n_keys;
    const char *keys[MEASURED_MAX_KEYS]; /* scenario keys it sets: "host.launch.mean_us" */
    char values[MEASURED_MAX_KEYS][32];  /* their values as applied */
    int line[MEASURED_MAX_KEYS], col[MEASURED_MAX_KEYS]; /* where the file states them */
    char overridden_by[MEASURED_MAX_KEYS][64]; /* measured_bind: "" if the value holds, else
                                                  who replaced it ("--set", a fit's file) */
} measured_group;

typedef struct measured_cal {
    char path[MEASURED_PATH_MAX]; /* "" when the scenario has none */
    fp_check fp;                  /* its fingerprint (fprint.h), FP_NONE for a hand-written one */
    char fp_why[200];             /* "" unless its numbers differ from those trace import
                                     wrote: then every value it sets is assumed */
    char named_by[MEASURED_PATH_MAX + 32]; /* "--measured" or "file:line:col" of measured: */
    char device[128];   /* the GPU the trace recorded (device:), "" if it did not */
    char hardware[MEASURED_PATH_MAX]; /* the hardware file the import used (hardware:), or "" */
    int hw_line, hw_col;              /* where device: (else hardware:) is stated */
    measured_group parts[MEASURED_PARTS];
} measured_cal;

int measured_load(const char *path, measured_cal *out, tp_err *err);
/* flag_path: --measured's file (NULL: the document's own `measured:` key, if any). A --set
 * on the `measured` key itself is refused: the file is named by the key or the flag. */
int measured_open(cfg_doc *doc, const char *flag_path, const char *const *sets, int n_sets,
                  tp_err *err);
/* After measured_open and the overrides: what the file set, into out (path "" if none). */
int measured_bind(cfg_doc *doc, measured_cal *out, tp_err *err);

#endif
