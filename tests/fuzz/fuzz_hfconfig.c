/* fuzz_hfconfig.c: libFuzzer harness for the Hugging Face config.json reader (jansson, the
 * field mapping, the key locator that positions messages) and the step program built from
 * whatever it accepts (vLLM sharding, MoE, precisions). Any input must load or be refused
 * with one line; an accepted model must build, or refuse, its TP-1/2/8 programs. */
#define _XOPEN_SOURCE 700 /* realpath in fuzz_file.h */
#include <stdint.h>
#include <string.h>

#include "fuzz_file.h"
#include "model.h"
#include "prog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tp_err err = {{0}};
    model_arch m;
    const char *path = fuzz_file_write("fuzz.json", data, size);
    int rc = model_load(path, &m, &err);
    if (rc != 0 && (!err.msg[0] || strchr(err.msg, '\n'))) __builtin_trap();
    /* keep programs small: a huge accepted model would only measure realloc */
    if (rc == 0 && m.layers <= 4) {
        prog_opts o = {.input_copies = 1, .sampling_kernels = 1, .prec_weights = size % 4,
                       .w8a8 = (int)(size % 2)};
        long tps[] = {1, 2, 8};
        for (int i = 0; i < 3; i++) {
            prog p;
            if (prog_build(&p, &m, &o, tps[i], 3, 17, &err) == 0) prog_free(&p);
            else if (!err.msg[0] || strchr(err.msg, '\n')) __builtin_trap();
        }
    }
    return 0;
}
