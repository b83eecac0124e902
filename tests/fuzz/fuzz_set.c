/* fuzz_set.c: libFuzzer harness for `--set dotted.key=value` overrides: each line of the
 * input (at most 8; a NUL ends a line too, as argv would) is one --set applied to the
 * bundled paper-additive scenario, which is then bound and checked as tpsim run does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_SETS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *sets[FUZZ_MAX_SETS];
    int n = 0;
    for (char *p = text; n < FUZZ_MAX_SETS && p < text + size;) {
        size_t len = strcspn(p, "\n");
        p[len] = '\0';
        if (*p) sets[n++] = p; /* the flag layer refuses an empty --set before this */
        p += len + 1;
    }
    static scenario s;
    tp_err err = {{0}};
    int rc = scenario_load("scenarios/paper-additive.yaml", sets, n, &s, &err);
    scenario_free(&s);
    if (rc != 0 && (!err.msg[0] || strchr(err.msg, '\n'))) __builtin_trap();
    free(text);
    return 0;
}
