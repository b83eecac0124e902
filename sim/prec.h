/* prec.h: numeric precision of one tensor class (weights, KV cache, activations) and the
 * bytes a tensor takes in it.
 *
 * Contract: PREC_MODEL means "the model's own dtype" (its dtype_bytes), so a zero-initialised
 * value keeps a model as its file says. Byte counts include the scales a quantised format
 * stores beside its values:
 *   bf16  2 bytes per value, no scale
 *   fp8   1 byte per value (E4M3) + one float32 scale per weight matrix (vLLM's fp8 method:
 *         per-tensor weight scale), or per token for activations
 *   int4  0.5 byte per value + one 16-bit scale per group of PREC_INT4_GROUP input values
 *         per output column (GPTQ/AWQ symmetric, group size 128: vLLM's Marlin W4A16)
 * prec_parse maps "bf16" | "fp8" | "int4" to a value; which of them a tensor class accepts is
 * the caller's check.
 */
#ifndef TPSIM_PREC_H
#define TPSIM_PREC_H

typedef enum prec_kind { PREC_MODEL = 0, PREC_BF16, PREC_FP8, PREC_INT4 } prec_kind;

#define PREC_INT4_GROUP 128

/* "bf16", "fp8", "int4" -> PREC_*, anything else -> -1. */
int prec_parse(const char *text);
/* Bytes of one value (scales excluded); PREC_MODEL -> model_dtype_bytes. */
double prec_elem_bytes(int kind, long model_dtype_bytes);
/* Bytes of a weight matrix [in, out] (one rank's shard), scales included. */
double prec_matrix_bytes(int kind, long model_dtype_bytes, double in, double out);

#endif
