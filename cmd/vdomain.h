/* vdomain.h: `tpsim validate --write-domain`: the scenario's validated: block written from
 * validate's own result.
 *
 * Contract: vdom_add takes each protocol's report in the order run; the first sets the
 * domain (the grid's TP degrees, batch and context ranges; the scenario's mode, hardware,
 * model, engine, weights and KV-cache precision, collective model, host-phase timing, graph
 * mode, queue depth; the kill-switch), the held-out error (heldout_protocol, heldout_cells,
 * heldout_mape_pct and heldout_rms_pct: the mean and root-mean-square of |error| over every
 * held-out cell of that protocol, all configs pooled) and the files the predictions read with
 * their fingerprints (domain.h's domain_inputs, and the grid's bytes); each adds its clause to
 * the verdict ("within: MISFIT at H100 TP-2 (6.06%) and H100 TP-4 (3.14%)"; a PASS-NO-SKILL or
 * SUPPORTED config with its best baseline). Paths are relative to the scenario's folder, as
 * every path a scenario names. vdom_write rewrites the scenario's text with the block: the
 * block (and the comment line above it that says who wrote it) replaced where it stands, or
 * appended when there is none; every other byte of the file as it was. It writes to `out`
 * (the scenario itself through ofile_open_update, or another file through ofile_open), after
 * checking that the scenario's bytes are those validate read, that the new text binds as a
 * validated: block and that its content apart from the block is unchanged. 0, or -1 and one
 * line (nothing written). Prefix vdom_; the state is the caller's vdom, no allocation kept.
 */
#ifndef TPSIM_VDOMAIN_H
#define TPSIM_VDOMAIN_H

#include "validate.h"

#define VDOM_COMMENT                                                                           \
    "# written by `tpsim validate --write-domain` from its own result: not to be edited by hand"

typedef struct vdom {
    int n_protocols;
    scenario_domain d; /* the block so far (d.verdict gathers each protocol's clause) */
} vdom;

int vdom_add(vdom *v, const val_report *r, tp_err *err);
/* path: the scenario's path as validate read it; out: where the new text goes (the same
 * file, or another) */
int vdom_write(const vdom *v, const char *path, const char *out, tp_err *err);

#endif
