/* fuzz_nccl_log.c: libFuzzer harness for the all-reduce sweep parser (nccl-tests
 * all_reduce_perf output or tpsim-nccl-sweep CSV, calibrate/arfit_parse.c) and, when a sweep
 * parses, the linear and piecewise fits `tpsim fit-allreduce` runs on it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arfit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    arfit_sweep s;
    tp_err err = {{0}};
    if (arfit_parse(text, "fuzz.out", 0, &s, &err) == 0) {
        arfit_opts o = arfit_default_opts();
        arfit_linear_fit lin;
        arfit_piecewise_fit pw;
        if (arfit_fit_linear(&s, &o, &lin, &err) == 0) arfit_fit_piecewise(&s, &o, &pw, &err);
        arfit_sweep_free(&s);
    } else if (!err.msg[0] || strchr(err.msg, '\n')) {
        __builtin_trap();
    }
    free(text);
    return 0;
}
