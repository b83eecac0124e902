/* fuzz_yaml.c: libFuzzer harness for the YAML inputs: cfg (libyaml, limits, positions) and
 * the binders on top of it. The first byte picks the loader, the rest is the file:
 * 0 scenario (with its model, hardware and calibration references), 1 model,
 * 2 hardware, 3 all-reduce calibration. Any input must load or be refused with one line. */
#define _XOPEN_SOURCE 700 /* realpath in fuzz_file.h */
#include <stdint.h>
#include <string.h>

#include "arcal.h"
#include "fuzz_file.h"
#include "hw.h"
#include "model.h"
#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    tp_err err = {{0}};
    int kind = data[0] % 4, rc;
    const char *path = fuzz_file_write(kind == 0 ? "scenarios/fuzz.yaml" : "fuzz.yaml", data + 1,
                                       size - 1);
    static scenario s; /* large: kept off the stack */
    model_arch m;
    hw_spec h;
    arcal c;
    switch (kind) {
    case 0:
        rc = scenario_load(path, NULL, 0, &s, &err);
        scenario_free(&s);
        break;
    case 1: rc = model_load(path, &m, &err); break;
    case 2: rc = hw_load(path, &h, &err); break;
    default: rc = arcal_load(path, &c, &err); break;
    }
    /* the contract: success, or one non-empty line */
    if (rc != 0 && (!err.msg[0] || strchr(err.msg, '\n'))) __builtin_trap();
    return 0;
}
