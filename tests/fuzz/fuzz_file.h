/* fuzz_file.h: what the libFuzzer harnesses share: a private scratch directory (removed at
 * exit) beside links to the repository's models/ and validate/, so a fuzzed scenario's
 * "../models/..." references resolve as they do from scenarios/, and fuzz_file_write, which
 * puts the fuzzer's bytes in a file there for loaders that take a path. The harnesses run
 * from the repository root (make fuzz does). Header-only: each harness is one program. */
#ifndef TPSIM_FUZZ_FILE_H
#define TPSIM_FUZZ_FILE_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_dir[64];

static void fuzz_dir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz: could not remove %s\n", fuzz_dir);
}

static void fuzz_link(const char *repo_dir, const char *name)
{
    char target[PATH_MAX], link[128];
    if (!realpath(repo_dir, target)) {
        fprintf(stderr, "fuzz: run from the repository root (no %s/ here)\n", repo_dir);
        abort();
    }
    snprintf(link, sizeof link, "%s/%s", fuzz_dir, name);
    if (symlink(target, link) != 0) abort();
}

/* The scratch directory, created on first use: DIR/scenarios/, DIR/models -> models/,
 * DIR/validate -> validate/. */
static const char *fuzz_scratch(void)
{
    if (fuzz_dir[0]) return fuzz_dir;
    /* tmpfs where there is one: rewriting a file on a disk file system costs milliseconds
     * (ext4 flushes a truncated file), a hundred times the parse */
    snprintf(fuzz_dir, sizeof fuzz_dir, "/dev/shm/tpsim-fuzz.XXXXXX");
    if (!mkdtemp(fuzz_dir)) {
        snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/tpsim-fuzz.XXXXXX");
        if (!mkdtemp(fuzz_dir)) abort();
    }
    atexit(fuzz_dir_remove);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/scenarios", fuzz_dir);
    if (mkdir(sub, 0700) != 0) abort();
    fuzz_link("models", "models");
    fuzz_link("validate", "validate");
    return fuzz_dir;
}

/* Write the bytes to SCRATCH/rel and return that path (static storage). */
static const char *fuzz_file_write(const char *rel, const uint8_t *data, size_t size)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", fuzz_scratch(), rel);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    return path;
}

#endif
