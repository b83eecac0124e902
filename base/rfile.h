/* rfile.h: every input file (scenario, model, hardware, calibration, grid, sweep log, trace)
 * is read whole through here, bounded in size and in time.
 *
 * Contract: rfile_read reads `path` into a new NUL-terminated buffer (*buf, *len; the caller
 * frees it) or fills err with one line and returns -1. `what` names the expected content in
 * messages ("a YAML file"). A directory is refused ("cannot open: is a directory"). A regular
 * file larger than `cap` bytes is refused before it is read. Anything else (FIFO, pipe,
 * character device, socket) is opened non-blocking, so a FIFO with no writer does not hang
 * in open(2), and read with poll(2) until end of input: past `cap` bytes or RFILE_TIMEOUT_MS
 * without a byte (an idle limit, not a total: a slow live writer is read to its end) it is refused
 * (so /dev/zero, /dev/urandom and a FIFO nobody writes to all end with one line).
 *
 * Inputs are remembered: each regular file read is recorded (device, inode) for the life of
 * the process, and rfile_is_input says whether a file is one of them, so an output about
 * to replace an input can be refused (ofile.h). This record is the module's one piece of
 * process-wide state (thread-safe); it holds RFILE_MAX_INPUTS distinct files (more are not
 * recorded). Each record keeps the path the file was first read by and the fingerprint of
 * the bytes read (fprint.h's fp_bytes; "" for a file checked by rfile_check_regular, which a
 * reader streams itself or reads later: rfile_read then fills it in), so a command can list
 * every file its answer rests on.
 */
#ifndef TPSIM_RFILE_H
#define TPSIM_RFILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "err.h"

#define RFILE_TIMEOUT_MS 5000
#define RFILE_MAX_INPUTS 256

typedef struct rfile_input {
    char path[512];
    char fp[17];   /* fp_bytes of the bytes read, 16 hex digits; "" when streamed */
    size_t bytes;
} rfile_input;

int rfile_read(const char *path, size_t cap, const char *what, char **buf, size_t *len,
               tp_err *err);
/* For readers that stream a file themselves (zlib, SQLite): 0 if path is a regular file of
 * at most `cap` bytes (then recorded as an input, as rfile_read does), else one line in err
 * and -1: a FIFO, device, socket or directory is refused, since such a reader could block
 * on it or read it without bound. */
int rfile_check_regular(const char *path, size_t cap, const char *what, tp_err *err);
/* 1 if st (from stat(2)) is a regular file this process has read through rfile_read. */
int rfile_is_input(const struct stat *st);
/* Forgets every recorded input. For a process that outlives its inputs (a test deleting its
 * fixtures): the file system may give a deleted input's inode to a new file, which would
 * then be refused as an input. */
void rfile_forget_inputs(void);
/* The recorded inputs, in the order first read, copied into out (at most cap); their count. */
int rfile_inputs_read(rfile_input *out, int cap);

#endif
