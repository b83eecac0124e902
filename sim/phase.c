/* phase.c: see phase.h. */
#include "phase.h"

const char *const phase_names[PHASE_N + 1] = {"schedule", "broadcast", "prepare_inputs",
                                              "sampler_sync", "output_processing", NULL};

dist phase_at(const phase_model *m, int i, long batch)
{
    const dist *b = &m->base[i];
    return dist_make(b->kind, b->mean + m->per_seq_s[i] * (double)batch, b->cv);
}

void phase_fill(const phase_model *m, long batch, engine_host *h)
{
    for (int i = 0; i < PHASE_N; i++) h->phases[i] = phase_at(m, i, batch);
}

double phase_total_s(const phase_model *m, long batch)
{
    double t = 0;
    for (int i = 0; i < PHASE_N; i++) t += m->base[i].mean + m->per_seq_s[i] * (double)batch;
    return t;
}

const char *phase_mode_name(int overlap) { return overlap ? "overlapped" : "serialised"; }
