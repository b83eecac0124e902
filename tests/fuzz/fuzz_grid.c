/* fuzz_grid.c: libFuzzer harness for the measured-grid CSV loader (validate/grid.c), read
 * through the bounded reader as `--grid FILE` is. */
#define _XOPEN_SOURCE 700 /* realpath in fuzz_file.h */
#include <stdint.h>
#include <string.h>

#include "fuzz_file.h"
#include "grid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grid g;
    tp_err err = {{0}};
    const char *path = fuzz_file_write("grid.csv", data, size);
    if (grid_load(path, &g, &err) == 0) {
        for (size_t i = 0; i < g.n; i++) /* every cell is found again by its key */
            if (grid_find(&g, g.cells[i].tp, g.cells[i].batch, g.cells[i].ctx) != &g.cells[i])
                __builtin_trap();
        grid_free(&g);
    } else if (!err.msg[0] || strchr(err.msg, '\n')) {
        __builtin_trap();
    }
    return 0;
}
