/* fuzz_trace.c: libFuzzer harness for `tpsim trace import`: the Kineto reader
 * (calibrate/trace_kineto.c: the hand scanner, jansson per event, zlib, which reads gzip or
 * plain bytes alike), then the step analysis and the JSON and calibration writers on what it
 * read. The first byte picks the step marker (0: vLLM's default, 1: any annotation, 2: none
 * matching, so idle gaps); the rest is the file. */
#define _XOPEN_SOURCE 700
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_file.h"
#include "trace_data.h"
#include "trace_kineto.h"
#include "trace_out.h"
#include "trace_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *path = fuzz_file_write("trace.json", data + 1, size - 1);
    static const char *const markers[] = {NULL, ".", "^no step marker matches this$"};
    regex_t re;
    const char *m = markers[data[0] % 3];
    if (m && regcomp(&re, m, REG_EXTENDED | REG_NOSUB)) __builtin_trap();
    tr_options o = {m ? &re : NULL};
    tr_trace t = {0};
    tp_err err = {{0}};
    if (tr_kineto_read(&t, path, &err) == 0) {
        tr_report r;
        if (tr_analyze(&t, &o, &r, &err) == 0) {
            FILE *null = fopen("/dev/null", "w");
            if (!null) __builtin_trap();
            tr_out_json(null, &t, &r);
            tr_out_text(null, &t, &r);
            tr_out_calib(null, &t, &r, data[0] & 4 ? 4.8e12 : 0.0, "hw.yaml");
            fclose(null);
            tr_report_free(&r);
        } else if (!err.msg[0] || strchr(err.msg, '\n')) {
            __builtin_trap();
        }
    } else if (!err.msg[0] || strchr(err.msg, '\n') || t.n_ranks != 0) {
        __builtin_trap(); /* one line, and nothing left behind */
    }
    tr_free(&t);
    if (m) regfree(&re);
    return 0;
}
