/* ofile.h: output files that appear whole or not at all.
 *
 * Contract: ofile_open creates "PATH.tmp.XXXXXX" beside PATH; the caller writes to
 * o->f, then ofile_commit flushes, closes and renames it over PATH (0 on success), or
 * ofile_abort removes it. A failed run therefore never leaves a partial output file.
 */
#ifndef TPSIM_OFILE_H
#define TPSIM_OFILE_H

#include <stdio.h>

#include "err.h"

typedef struct ofile {
    FILE *f;
    char path[1024];
    char tmp[1040];
} ofile;

int ofile_open(ofile *o, const char *path, tp_err *err);
int ofile_commit(ofile *o, tp_err *err);
void ofile_abort(ofile *o);

#endif
