/* scnfit.h: a scenario's statements about its own numbers, bound from its YAML: the fit block
 * (which keys validate may fit, within what bounds, on which cells), the sourced: and assumed:
 * declarations, and the validated: domain.
 *
 * Contract: each binder fills the caller's scenario (or domain) from one node of the scenario's
 * document `root`; every key a fit or a declaration names must be a number written in that
 * document, and no key is fitted or declared twice (scnfit_declared tells where it was). Any bad
 * value is one "file:line:col: what, expected" in err and -1. No allocation; scenario.c calls
 * these while binding (scenario_bind).
 */
#ifndef TPSIM_SCNFIT_H
#define TPSIM_SCNFIT_H

#include "cfg.h"
#include "err.h"
#include "scenario.h"

/* fit: {params: [{key, also?, min, max, physical_min?, physical_max?}], cells, protocol?} */
int scnfit_bind_fit(const cfg_node *root, const cfg_node *fit, scenario *s, tp_err *err);
/* validated: {tp, modes, batch, ctx, hardware, model, grid, verdict}, every key required,
 * engine optional; the keys tpsim validate --write-domain adds (precision, allreduce,
 * host_phases, graph_mode, queue_depth, kill_switch_pct, heldout_*, inputs) all or none
 * (written 1 with them, docs/domain.md) */
int scnfit_bind_domain(const cfg_node *v, scenario_domain *d, tp_err *err);
/* sourced: (assumed 0) or assumed: (assumed 1), appended to s->decls */
int scnfit_bind_decls(const cfg_node *root, const cfg_node *list, int assumed, scenario *s,
                      tp_err *err);
/* 1 (and *line) when `key` is already fitted or declared in s, else 0 */
int scnfit_declared(const scenario *s, const char *key, int *line);

#endif
