/* cal_common.h: what the two calibration tools (tpsim-nccl-sweep, tpsim-probe) share.
 *
 * Contract: every failure a user can cause or meet (bad flag, no GPU, a CUDA or NCCL error, a
 * wait that runs past its deadline) ends the tool through cal_fail: one line on stderr naming
 * the tool and the cause, exit status 2, no output file written. Waits on the GPU are always
 * polled against a deadline (cal_wait_event, cal_wait_stream), never blocking, so a wedged GPU
 * or a peer that never joins turns into an error instead of a hang. Output is collected in
 * memory and written at the end, whole, through tpsim's output module (base/ofile.h).
 * Flags go through tpsim's flag layer (base/cli.h). No globals other than the tool name used in
 * messages (set once by cal_set_tool).
 */
#ifndef TPSIM_CAL_COMMON_H
#define TPSIM_CAL_COMMON_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "cli.h"

#define CAL_EXIT_FAIL 2

/* Name printed before every message ("tpsim-probe: ..."). */
void cal_set_tool(const char *name);

/* Print "tool: message" on one line to stderr and exit 2. */
void cal_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* cal_fail if err is not cudaSuccess: "what: CUDA error string". */
void cal_check_cuda(cudaError_t err, const char *what);

/* The next flag of a tool's table (whose entry 0 must be "help"), or CLI_DONE. A flag error
 * or an operand ends the tool through cal_fail; --help prints `usage`, the table's flags
 * (cli_help) and `text`, and exits 0. */
int cal_next_flag(cli_args *ca, const char *usage, const char *text, const char **v);
/* Whole numbers and sizes (bytes, or K/M/G in powers of 1024); cal_fail naming the flag. */
long cal_parse_long(const char *flag, const char *text, long lo, long hi);
double cal_parse_double(const char *flag, const char *text, double lo, double hi);
size_t cal_parse_size(const char *flag, const char *text);

/* Monotonic seconds. */
double cal_now(void);

/* Poll until the event (or every op on the stream) completes; cal_fail after timeout_s or on a
 * CUDA error. `what` names the wait in the message. */
void cal_wait_event(cudaEvent_t ev, double timeout_s, const char *what);
void cal_wait_stream(cudaStream_t s, double timeout_s, const char *what);

/* Exit with "no CUDA device" when none is usable, else return the device count. */
int cal_device_count(void);

/* "13.0" from a CUDA version number like 13000. */
void cal_cuda_version_string(int v, char *buf, size_t len);

/* Host name and UTC date (ISO 8601), for provenance. */
void cal_host(char *buf, size_t len);
void cal_date(char *buf, size_t len);

/* Keep only characters that are safe in a plain YAML scalar or a `# key: value` line. */
void cal_plain(char *dst, size_t len, const char *src);

/* A growing text buffer; cal_fail on out of memory. */
typedef struct cal_text {
    char *data;
    size_t len, cap;
} cal_text;
void cal_printf(cal_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cal_text_free(cal_text *t);

/* Write t to path through ofile.h (whole or not at all), or to stdout when path is NULL;
 * cal_fail on any error, leaving no partial file. */
void cal_write_output(const cal_text *t, const char *path);

/* Median of n values (sorts them in place). */
double cal_median(double *v, size_t n);

#endif
