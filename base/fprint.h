/* fprint.h: fingerprints of files and of the numbers a calibration file holds.
 *
 * Contract: a fingerprint is 64 bits written as 16 lowercase hex digits. fp_bytes hashes bytes
 * eight at a time (a multiply-xorshift mix of each 64-bit word, then of the length): a
 * check that a file is the one it claims to be, against edits and mix-ups, not against
 * someone who recomputes it on purpose (it is not a cryptographic hash and has no key).
 * fp_tree hashes a YAML document's content: every scalar's dotted path and text, in document
 * order, except the value of `fingerprint.numbers` itself; comments, spacing and quoting
 * style do not count, so a number edited by hand changes it and a reflowed comment does not.
 * fp_tree_except leaves one top-level key out (a block a tool rewrites in the file).
 * A file tpsim writes as a calibration ends with
 *   fingerprint:
 *     inputs:            # the data it was fitted on, each file's bytes (fp_bytes)
 *       - {file: PATH, fp: HEX}
 *     numbers: HEX       # fp_tree of the whole document
 * fp_seal appends that block to a document's text; fp_verify recomputes it. No state, no
 * allocation but fp_seal's scratch (freed before it returns).
 */
#ifndef TPSIM_FPRINT_H
#define TPSIM_FPRINT_H

#include <stdint.h>
#include <stdio.h>

#include "cfg.h"
#include "err.h"

#define FP_HEX 17 /* 16 hex digits and the NUL */
#define FP_SEED UINT64_C(0x9e3779b97f4a7c15)

typedef enum fp_state {
    FP_NONE,     /* no fingerprint: a hand-written file, sourced by its source: text */
    FP_MATCH,    /* the numbers are those tpsim wrote */
    FP_MISMATCH  /* the numbers were changed after tpsim wrote them */
} fp_state;

typedef struct fp_check {
    fp_state state;
    char recorded[FP_HEX]; /* the file's fingerprint.numbers, "" when none */
    char computed[FP_HEX]; /* fp_tree of the file as it is */
} fp_check;

/* One 64-bit word into the state h (a bijection of h for each w). */
uint64_t fp_mix(uint64_t h, uint64_t w);
/* The hash of n bytes, continuing from h (FP_SEED to start). */
uint64_t fp_bytes(uint64_t h, const void *p, size_t n);
void fp_hex(uint64_t h, char out[FP_HEX]);
/* The fingerprint of a whole file's bytes into out; 0, or -1 and one line. */
int fp_file(const char *path, char out[FP_HEX], tp_err *err);
/* The content hash of the document under root (fingerprint.numbers left out). */
uint64_t fp_tree(const cfg_node *root);
/* fp_tree of the document with root's top-level entry `key` left out, as if it were not
 * written: a scenario's content apart from the validated: block tpsim writes into it (the
 * same value as fp_tree of the file without that key). */
uint64_t fp_tree_except(const cfg_node *root, const char *key);
/* Recompute root's fingerprint: out->state as above; a malformed fingerprint: block (not a
 * mapping of inputs and numbers, numbers not 16 hex digits) is one line and -1. */
int fp_verify(const cfg_node *root, fp_check *out, tp_err *err);
/* Write text (a whole YAML document, `name` for messages) to f with the fingerprint block
 * appended: the inputs' byte fingerprints (each path as given, up to an '@') and the
 * numbers' fingerprint of the result. 0, or -1 and one line (an input unreadable, the text
 * not YAML, a write error). */
int fp_seal(FILE *f, const char *name, const char *text, size_t len,
            const char *const *inputs, int n_inputs, tp_err *err);

#endif
