/* kcal.h: kernel cost calibrations (models/kernels/NAME.yaml, written by `tpsim fit-kernels`):
 * the GPU time of every non-collective op, per op class, from a law fitted on measured
 * per-operator profiles.
 *
 * Contract: one file calibrates one GPU (`hardware:`; a scenario on other hardware must borrow
 * it explicitly, scenario.h). `classes:` holds one entry per kcal_class, each a law
 *   t = t0 + seq * B + flops / (B * row_gf) + combine(bytes / bw, flops / F)
 * (row term: flops / (B * row_gf), one token's share of the work, which grows with the row's
 * width and not with B; not bytes / B, whose batch-independent bytes (a norm's weight) would
 * make the time fall as the batch grows)
 * where combine is max for `roofline`, the sum for `sum` (t0 + bytes/bw + flops/F), and for
 * `smooth` and `tiled` the q-norm (m^q + c^q)^(1/q) of the two sides (q >= 1: q = 1 is the sum,
 * q -> infinity the roofline's max; memory and math overlap only partly near the ridge);
 * `tiled` also counts the math of a batch padded up to a multiple of tile_m rows (tensor-core
 * tiles quantise the GEMM's M, KCAL_TILE_M). `floor` is qnorm(t0, bytes / bw, q): a small
 * kernel costs its latency floor t0 until its bytes take longer than that (no additive t0). A term
 * whose parameter the law does not use is absent (kcal_law_names lists the laws and their terms).
 * `from: CLASS` marks a class the profiles did not measure, priced with CLASS's law (its numbers
 * say so, term for term; CLASS is measured itself: no chain, no cycle). Every rate and time is
 * in phys.h's physical range. Every op kind prog emits maps to one class (kcal_class_of; -1 for one
 * that does not, which kcal_check_names reports by name). Values are caller-owned but for the
 * measured grids, shared on the heap (kcal_grids: kcal_free drops a kcal's hold); times in seconds,
 * rates in bytes/s and FLOP/s. The fit quality (n, r2, mape_pct, heldout_mape_pct) is carried for
 * reports and intervals: a measured class must have n, r2 and mape_pct (heldout_mape_pct
 * where there were folds); a `from:` class has none of them (it takes its source's).
 * `law: grid` (kgrid.h) prices an op from the measured grid in the CSV file `grid:` names
 * (relative to the calibration's folder; a header of the class's axes and `us`, `#` comment
 * lines its provenance) when the op has the class's shape (prog.h's shapes), else by the
 * fitted law `fallback:` names, whose terms the entry carries as any law's;
 * fallback_heldout_mape_pct is that law's held-out error. The GEMM and decode-attention
 * classes may have grids.
 * Fingerprint (fprint.h): fit-kernels seals the file (its numbers, the profiles it read) and
 * writes each grid's byte fingerprint as the class's grid_fp; kcal_load recomputes the first,
 * the grid's read (kcal_need) the second (kcal_grids_vouch reports it). A
 * file whose numbers or grids differ loads (its values are still valid values), with fp_why
 * saying how: its numbers are then assumed, never sourced (validate names each one with its
 * sensitivity and marks the verdict).
 */
#ifndef TPSIM_KCAL_H
#define TPSIM_KCAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "decl.h"
#include "err.h"
#include "fprint.h"
#include "kgrid.h"

typedef enum kcal_class {
    KC_GEMM, KC_ATTENTION, KC_NORM, KC_ROPE, KC_ACTIVATION, KC_ADD, KC_EMBEDDING, KC_SAMPLER,
    KC_COPY, KC_GEMM_FP8, KC_PREFILL_ATTN, KC_COUNT
} kcal_class;

/* Classes no op needs: gemm_fp8 prices the FP8 GEMMs (op.fp8) where present (else gemm's law
 * at the FP8 peak), prefill_attention is kept for later serving work. */
#define KCAL_OPTIONAL(k) ((k) == KC_GEMM_FP8 || (k) == KC_PREFILL_ATTN)

typedef enum kcal_law_kind {
    KL_CONST, KL_LINEAR, KL_ROW, KL_SEQ, KL_ROOFLINE, KL_SUM, KL_SMOOTH, KL_TILED, KL_FLOOR,
    KL_GRID, KL_COUNT
} kcal_law_kind;

extern const char *const kcal_class_names[KC_COUNT + 1];
extern const char *const kcal_law_names[KL_COUNT + 1];

/* Coefficients: a term is absent when its coefficient is 0. */
typedef struct kcal_law {
    int kind;           /* kcal_law_kind */
    double t0_s;
    double s_per_byte;  /* 1 / bw */
    double s_per_flop;  /* 1 / F */
    double s_per_seq;   /* per sequence of the batch */
    double s_per_row_flop; /* per FLOP of one token's row (flops / B): the row's width */
    double q;           /* smooth, tiled: the norm's exponent */
    double tile_m;      /* tiled: rows of the M tile the batch is padded to */
} kcal_law;

/* Hopper's tensor-core instruction (wgmma.mma_async) works on M = 64 rows per warpgroup
 * (docs/sources.md#wgmma-tile): a GEMM of B tokens does the math of ceil(B / 64) * 64. */
#define KCAL_TILE_M 64.0

typedef struct kcal_entry {
    int valid;
    kcal_law law;       /* the fitted law (with a grid: `fallback:`, for ops of no grid shape) */
    int from;           /* the class whose law it copies (not measured itself), -1 if measured */
    int grid;           /* law: grid: its grid in kcal.grids->grid, else -1 */
    double n, r2, mape_pct, heldout_mape_pct;
    double fallback_heldout_mape_pct; /* the fitted law's, with a grid; -1 when none */
} kcal_entry;

#define KCAL_MAX_GRIDS 4
/* A bound on the cells of one grid (a file asking for more is refused): H100's GEMM (bf16
 * and FP8, 74 x 22 x 22 each), decode attention (35,904) and prefill attention (74,052) with
 * room to spare. */
#define KCAL_POOL 196608

enum { KCAL_GRID_PENDING, KCAL_GRID_READY, KCAL_GRID_FAILED };

/* One measured grid. kcal_load checks its CSV is a readable file of bounded size; the first
 * kcal_need of its class reads it (its bytes fingerprinted against grid_fp) and parses the
 * rows into cells, once, under the grids' lock. A run that never prices its class (an FP8
 * grid in a bf16 run, prefill attention in a decode step) never pays for it; a bad row is
 * reported by the kcal_need that reads it, before any op is priced. */
typedef struct kcal_grid {
    int cls;
    char path[512];
    char want[FP_HEX];     /* the grid_fp fit-kernels wrote, "" when none */
    char now[FP_HEX];      /* the bytes' fingerprint, once read */
    atomic_int state;      /* KCAL_GRID_PENDING, _READY or _FAILED */
    kg_grid g;
    float *cells;          /* g's cells once ready */
    char fail[TP_ERR_MAX]; /* the parse's one line, when it failed */
} kcal_grid;

/* The measured grids of one calibration file, on the heap and shared: kcal_load makes one
 * (one reference, its kcal's), kcal_share adds a holder and kcal_free drops one; the last
 * holder's kcal_free frees it. Threads may price from it at once (the count is atomic, a
 * grid is parsed under `lock` and read-only once ready). A plain struct copy of a kcal
 * borrows the grids of the original, which must outlive it and is the one freed. */
typedef struct kcal_grids {
    atomic_int refs;
    pthread_mutex_t lock;
    int n;
    kcal_grid grid[KCAL_MAX_GRIDS];
} kcal_grids;

typedef struct kcal {
    char path[256];
    char named_at[320];
    char hardware[64];
    kcal_entry cls[KC_COUNT];
    decl_list assumed;  /* the file's numbers it assumes rather than sources (decl.h): the
                           classes no profile measured (from:) */
    kcal_grids *grids;  /* NULL when no class has a grid; owned as the type says */
    char grid_files[KCAL_MAX_GRIDS][512]; /* the grids' CSV files, as read */
    int n_grid_files;
    fp_check fp;        /* the file's fingerprint (fprint.h): FP_NONE for a hand-written one */
    char fp_why[400];   /* "" when the numbers (and every grid_fp's grid) are those
                           fit-kernels wrote, or the file has no fingerprint; else why not:
                           then every number of the file is assumed, not sourced */
} kcal;

/* The law's time for an op moving `bytes` and doing `flops` at batch B. */
double kcal_law_time(const kcal_law *l, double bytes, double flops, double batch);
/* (a^q + b^q)^(1/q) for a, b >= 0, q >= 1 (0 when both are 0). */
double kcal_qnorm(double a, double b, double q);
/* The FLOPs the law's math term counts: `tiled` pads the batch to its tile, else `flops`. */
double kcal_padded_flops(const kcal_law *l, double flops, double batch);
/* Class cls's grid parsed, when it has one (a no-op after the first call, or with none): 0,
 * or -1 and the parse's one line (`file:line: what, expected`), every call alike. Call it
 * before pricing a class by its grid; kcal_need_all parses every grid (fit-kernels' check of
 * a file it is given, validate's inputs). */
int kcal_need(const kcal *c, int cls, tp_err *err);
int kcal_need_all(const kcal *c, tp_err *err);
/* After kcal_need_all: c->fp_why says so when a grid's bytes are not those its grid_fp
 * records (the file's numbers then assumed, as an edited number makes them); kept when it
 * already says why. */
void kcal_grids_vouch(kcal *c);
/* The time (s) of class cls's op: its grid at gx (the class's kg_class_dims axes) when the
 * class has one and gx is given, else its law (kcal_law_time). A grid kcal_need could not
 * parse gives NaN. */
double kcal_time(const kcal *c, int cls, double bytes, double flops, double batch,
                 const double *gx);
/* The class of a prog op name (prog_name), -1 when none. */
int kcal_class_of(int prog_name);
/* 0 when every prog op name maps to a class the calibration has; else one line naming the
 * first op that does not, and -1. */
int kcal_check_names(const kcal *c, tp_err *err);
/* Fill *out from the file (its grids with one reference, out's); free it with kcal_free. */
int kcal_load(const char *path, kcal *out, tp_err *err);
/* The same with numbers of the file overridden ("classes.gemm.t0_us=1.2", and the classes
 * that copy its law, which must say the same): validate's sensitivity to a number the file's
 * fingerprint no longer vouches for. */
int kcal_load_set(const char *path, const char *const *assign, int n_assign, kcal *out,
                  tp_err *err);
/* *dst becomes a copy of *src holding its own reference to src's grids. */
void kcal_share(kcal *dst, const kcal *src);
/* Drop c's reference to its grids (freed with the last) and clear it; a kcal with none (all
 * zero, or freed already) is left as it is. */
void kcal_free(kcal *c);
/* The parameters law kind fits (0 for grid: its fallback's count binds). A measured class needs
 * one row more than its law's parameters (kcal_load refuses fewer, kf_fit_law fits on no
 * fewer): with as many rows as parameters the fit passes through each, error 0. */
int kcal_law_params(int kind);
/* A class's relative error, %: its held-out MAPE, else its in-sample MAPE, of the class whose
 * law it copies (from:) when it was not measured itself. */
double kcal_error_pct(const kcal *c, int cls);

#endif
