/* scenario.h: a scenario file (scenarios/NAME.yaml): which model, hardware and all-reduce
 * calibrations to use, the GPU cost knobs, and the host-cost hypothesis under test.
 *
 * Contract: scenario_load reads the file, applies the --set overrides in order, and binds
 * the result into a caller-owned value (no pointers into the YAML; the referenced files,
 * paths relative to the scenario, are loaded and validated too). The one thing it holds on
 * the heap is its kernel calibration's measured grids (kcal.h: shared, counted): free a bound
 * scenario with scenario_free; a plain struct copy borrows them from the bound one, which
 * must outlive it and is the one freed. Bind only into a scenario that holds none. Every bad
 * value is refused with one "file:line:col: ..." line. scenario_open/scenario_bind split the same
 * work for callers that re-bind one document under different overrides (fitting).
 * `kernels:` names a kernel calibration (kcal.h; models/kernels/NAME.yaml): every GPU op then
 * costs its law and the gpu: efficiencies are unused (fitting them is refused).
 * Times in the file are microseconds (*_us) or milliseconds (*_ms); here they are seconds.
 */
#ifndef TPSIM_SCENARIO_H
#define TPSIM_SCENARIO_H

#include <stdint.h>

#include "arcal.h"
#include "cfg.h"
#include "coll.h"
#include "dist.h"
#include "err.h"
#include "fprint.h"
#include "hw.h"
#include "kcal.h"
#include "measured.h"
#include "phase.h"
#include "model.h"
#include "prog.h"

#define SCN_MAX_CALS 16
#define SCN_MAX_FIT 2
#define SCN_PATH_MAX 512

#define SCN_MAX_FIT_KEYS 4
#define SCN_MAX_FIT_CELLS 8  /* calibration cells a fit may name */
#define SCN_MAX_DECLS 24     /* sourced: and assumed: entries */
/* The engine of a scenario that names no engine file: its host model is its own host: block */
#define SCN_ENGINE_CUSTOM "custom"

typedef struct scenario_fit_param {
    char key[128];                       /* its name: the first dotted key it sets */
    char keys[SCN_MAX_FIT_KEYS][128];    /* every scenario key it sets to the same value */
    int key_line[SCN_MAX_FIT_KEYS], key_col[SCN_MAX_FIT_KEYS]; /* where each key is named */
    int n_keys;
    double lo, hi;
    char physical_lo[160], physical_hi[160]; /* why min / max is a physical limit, "" if not */
} scenario_fit_param;

typedef struct scenario_fit_cell {
    long tp, batch, ctx;
    int line, col;
} scenario_fit_cell;

/* A number declared as not fitted (validate refuses a number the grid could inform that is
 * neither fitted nor declared): `sourced:` (an independent measurement, datasheet or
 * citation; `fitted_on` cells when it was copied from another scenario's fit) or
 * `assumed:` (chosen, printed with its sensitivity). */
/* validated: what tpsim validate judged the scenario on (domain.h). A block tpsim validate
 * --write-domain wrote (written 1) also states every input that changes a prediction and
 * each file's fingerprint; a hand-written one holds only the fields up to verdict. */
#define SCN_DOMAIN_TP_MAX 8
#define SCN_DOMAIN_INPUTS 32     /* files a validated: block may name */
#define SCN_DOMAIN_FILE_MAX 256  /* a file's path there, relative to the scenario's folder */
typedef struct scenario_input {
    char path[SCN_DOMAIN_FILE_MAX]; /* relative to the scenario's folder */
    char fp[17];                    /* fprint.h: the bytes' fingerprint; the scenario's own:
                                       its content without validated: (fp_tree_except) */
} scenario_input;

typedef struct scenario_domain {
    int present;
    long tp[SCN_DOMAIN_TP_MAX];
    int n_tp;
    int eager, graphs;          /* the modes judged */
    long batch_lo, batch_hi, ctx_lo, ctx_hi;
    char hardware[64];
    char model[64];             /* the model it was judged with (its name:, model.h) */
    char engine[64];            /* the serving engine it was judged under, "" if not stated */
    char grid[256];             /* the grid it was judged on, as written */
    char verdict[512];          /* the verdict it got, as written */
    /* written by tpsim validate --write-domain (written 1), else all empty */
    int written;
    char weights[8], kv_cache[8]; /* the precision of the weights and the KV cache */
    char allreduce[32];         /* the collective model (coll.h's name) */
    char host_phases[16];       /* serialised or overlapped (phase.h) */
    char graph_mode[16];        /* full or piecewise when graphs were judged, else "" */
    long queue_depth;
    double kill_switch_pct;
    char heldout_protocol[64];  /* the protocol the held-out figures are from */
    long heldout_cells;         /* its held-out cells, over every judged config */
    double heldout_mape_pct, heldout_rms_pct; /* their mean and root-mean-square relative
                                                 error, %; NAN when heldout_cells is 0 */
    scenario_input inputs[SCN_DOMAIN_INPUTS]; /* every file the predictions read, the grid
                                                 and the scenario itself */
    int n_inputs;
} scenario_domain;

/* The validated: block's inputs against the files as they are now (domain_inputs_check,
 * which the commands' scn_opts_load runs): each difference in words, for domain_check. */
#define SCN_INPUT_MARKS 8
#define SCN_INPUT_MARK_MAX 200
typedef struct scenario_input_marks {
    int checked;                /* 0: not compared (a bind alone: validate's, a test's) */
    int n;
    char marks[SCN_INPUT_MARKS][SCN_INPUT_MARK_MAX];
} scenario_input_marks;

typedef struct scenario_decl {
    char key[128];
    int assumed;       /* 1: assumed:, 0: sourced: */
    int borrowed;      /* sourced from another fit: its fitted_on cells calibrate */
    char note[256];    /* the source, or why it is assumed */
    int line, col;     /* where the key is named */
} scenario_decl;

typedef struct scenario {
    char path[SCN_PATH_MAX];
    char name[64];
    model_arch model;
    hw_spec hw;
    arcal cals[SCN_MAX_CALS];
    int n_cals;
    int cal_from_flag[SCN_MAX_CALS]; /* 1: cals[i] came from --calib (scenario_add_allreduce) */
    coll_model allreduce_model;     /* collective.allreduce (coll.h); nccl-fit by default */
    char calibration_from[64];      /* the hardware whose calibrations it borrows, "" if none */
    int allow_foreign_calib;        /* --allow-foreign-calib: any hardware's calibrations */
    /* GPU cost knobs (scenario value, else the hardware file's) */
    double hbm_eff, flops_eff, kernel_fixed_s, launch_latency_s;
    prog_opts program;
    /* host-cost hypothesis */
    dist launch, collective, step, driver;
    int collective_measured;  /* host.collective: measured (run_collective_dispatch) */
    double driver_per_peer_s; /* added to rank 0's driver cost per extra rank */
    int broadcast_wait;
    long queue_depth;
    long slow_rank;           /* -1: none */
    char slow_rank_at[SCN_PATH_MAX + 32]; /* "file:line:col" of slow_rank.rank, for messages */
    double slow_extra_step_s, slow_launch_factor;
    phase_model phases;       /* host.phases, execution.host_phases (phase.h); all 0 if none */
    char phases_path[SCN_PATH_MAX]; /* the host-phase file (phases:), "" if none */
    char engine[64];          /* the engine that prices the step: an engine file's name (engine:),
                                 else SCN_ENGINE_CUSTOM */
    char engine_path[SCN_PATH_MAX]; /* that engine file (from models/host/ on when it lies in
                                       such a folder), "" if none */
    int graph_default;        /* what execution.mode graphs means: the engine's graph_mode
                                 (phase_graph_mode; full without an engine) */
    int piecewise;            /* with graphs: vLLM's PIECEWISE graphs (attention launched eagerly
                                 between the pieces), else FULL (one graph per step) */
    /* execution mode; graph costs default to docs/sources.md#host-costs's 15 us + 0.6 us/node */
    int graphs;
    dist graph_launch;
    double graph_node_s;
    double offset_s;          /* added to each step's reported time (the study's R0) */
    long tp, batch, ctx, steps, warmup;
    uint64_t seed;
    /* pre-registered fit: free parameters and the cells that calibrate them */
    int n_fit_params, n_fit_cells;
    scenario_fit_param fit_params[SCN_MAX_FIT];
    scenario_fit_cell fit_cells[SCN_MAX_FIT_CELLS];
    char fit_protocol[64];    /* fit.protocol as written ("within", "transfer 2:4", "loo"), or "" */
    int fit_protocol_line, fit_protocol_col;
    /* declared numbers and the cells borrowed values were fitted on */
    scenario_decl decls[SCN_MAX_DECLS];
    int n_decls;
    scenario_fit_cell borrowed_cells[SCN_MAX_FIT_CELLS];
    int n_borrowed_cells;
    scenario_domain domain;   /* validated: (domain.h); present 0 if none */
    scenario_input_marks input_marks; /* domain_inputs_check's; checked 0 after a bind */
    char model_path[SCN_PATH_MAX]; /* the files model: and hardware: resolved to */
    char hw_path[SCN_PATH_MAX];
    char host_path[SCN_PATH_MAX];  /* the engine or host-phase file (engine:, phases:), "" if
                                      none */
    measured_cal measured;    /* measured: / --measured (measured.h); path "" if none */
    int has_kernels;          /* kernels: names a kernel calibration (kcal.h) */
    kcal kernels;             /* every GPU op's time from it; the gpu: efficiencies unused */
    int kernel_err_sign;      /* not from the file: -1/+1 moves every class by its calibration
                                 error (held-out MAPE, else in-sample), for validate's bands */
} scenario;

int scenario_load(const char *path, const char *const *sets, int n_sets, scenario *out,
                  tp_err *err);
cfg_doc *scenario_open(const char *path, const char *const *sets, int n_sets, tp_err *err);
/* scenario_open with a trace calibration (--measured FILE, or NULL) applied before the sets. */
cfg_doc *scenario_open_measured(const char *path, const char *measured, const char *const *sets,
                                int n_sets, tp_err *err);
int scenario_bind(cfg_doc *doc, scenario *out, tp_err *err);
/* Release what a load or bind filled (its kernel calibration's grids); safe on an all-zero
 * scenario and twice. */
void scenario_free(scenario *s);
/* A cache of the files a scenario names (model, hardware, kernel and all-reduce calibrations),
 * each parsed once per resolved path and copied out at later binds: validate binds one
 * document hundreds of times and would otherwise re-read and re-parse them each time. The
 * caller owns it (one per validation run) and passes it to every bind; it is safe to share
 * between threads (a mutex). Only files that loaded are kept, so a bad file is re-read and
 * refused with the same line at every bind. The files must not change while it lives. */
typedef struct scenario_cache scenario_cache;
scenario_cache *scenario_cache_new(void); /* NULL when out of memory */
void scenario_cache_free(scenario_cache *c);
/* scenario_bind, the named files taken from the cache (NULL: read each one, as scenario_bind);
 * the result is the same. */
int scenario_bind_cached(cfg_doc *doc, scenario_cache *cache, scenario *out, tp_err *err);
/* The fingerprint of the file at path (fprint.h), kept in the cache like the files: of its
 * bytes (fp_file), or with tree of its YAML content with the top-level validated: block left
 * out (fp_tree_except: a scenario's own, which tpsim validate --write-domain rewrites). 0, or
 * -1 and one line (unreadable; not YAML). */
int scenario_file_fp(scenario_cache *cache, const char *path, int tree, char hex[FP_HEX],
                     tp_err *err);
/* The CUDA-graph mode a step of this scenario runs in mode `graphs` (0 eager): "eager", "full"
 * or "piecewise", as vLLM's cudagraph_mode names them. */
const char *scenario_graph_mode(const scenario *s, int graphs);
/* The calibration for k ranks, or NULL. */
const arcal *scenario_allreduce(const scenario *s, long tp);
/* The calibration for k ranks, refused (-1, one line) when it was measured on other
 * hardware and the scenario does not borrow it (calibration_from: HW or
 * --allow-foreign-calib). *how_borrowed is NULL for its own hardware's, else
 * "calibration_from" or "--allow-foreign-calib". */
int scenario_calibration(const scenario *s, long tp, const arcal **out, const char **how_borrowed,
                         tp_err *err);
/* The same for the trace calibration (measured.h): refused when its device: (or the
 * hardware file it was imported with) is another GPU than the scenario's, unless the scenario
 * borrows it (calibration_from naming that GPU, or --allow-foreign-calib). *how_borrowed as
 * for scenario_calibration; NULL also when the file states no GPU or there is none. */
int scenario_check_measured(const scenario *s, const char **how_borrowed, tp_err *err);
/* The kernel calibration (NULL when the scenario has none), refused like scenario_calibration
 * when it was measured on other hardware and is not borrowed. */
int scenario_kernels(const scenario *s, const kcal **out, const char **how_borrowed, tp_err *err);
/* The kernel calibration for the scenario's hardware: when the one it names was measured on
 * another GPU and the scenario does not borrow it (calibration_from), the first file in
 * models/kernels (locate.h) whose hardware: is the scenario's GPU replaces it (--set
 * hardware=h200 runs on H200's own kernel measurements); none: left as it is (and
 * scenario_kernels refuses it unless --allow-foreign-calib). scn_opts_apply calls it when
 * the command line set hardware= and not kernels=. 0, or -1 when that file is bad. */
int scenario_pick_kernels(scenario *s, tp_err *err);
/* The all-reduce calibrations for the scenario's hardware: each one measured on another GPU,
 * neither borrowed by the scenario (calibration_from) nor given by --calib, is replaced by the
 * first file in models/allreduce (by name, locate.h) whose hardware: is the scenario's GPU and
 * whose tp: is the same (--set hardware=h200 runs on H200's own all-reduce measurements); a
 * TP degree with no such file is left as it is (and scenario_calibration refuses it unless
 * --allow-foreign-calib). scn_opts_apply calls it when the command line set hardware=. 0, or
 * -1 (out of memory). */
int scenario_pick_allreduce(scenario *s, tp_err *err);
/* Add (or replace, same k) a calibration file given on the command line. */
int scenario_add_allreduce(scenario *s, const char *path, tp_err *err);
/* Refused (-1, one line) when a --calib file's tp: is none of the n TP degrees the command
 * runs: the file would be ignored without a word. */
int scenario_check_flag_calibs(const scenario *s, const long *tps, int n, tp_err *err);

#endif
