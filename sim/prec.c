/* prec.c: see prec.h. */
#include "prec.h"

#include <math.h>
#include <string.h>

static const char *const prec_names[] = {"model", "bf16", "fp8", "int4"};

int prec_parse(const char *text)
{
    for (int k = PREC_BF16; k <= PREC_INT4; k++)
        if (!strcmp(text, prec_names[k])) return k;
    return -1;
}

double prec_elem_bytes(int kind, long model_dtype_bytes)
{
    switch (kind) {
    case PREC_BF16: return 2.0;
    case PREC_FP8: return 1.0;
    case PREC_INT4: return 0.5;
    default: return (double)model_dtype_bytes;
    }
}

double prec_matrix_bytes(int kind, long model_dtype_bytes, double in, double out)
{
    double values = prec_elem_bytes(kind, model_dtype_bytes) * in * out;
    if (kind == PREC_FP8) return values + 4.0;
    if (kind == PREC_INT4) return values + 2.0 * ceil(in / PREC_INT4_GROUP) * out;
    return values;
}
