/* ofile.c: see ofile.h. */
#include "ofile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ofile_open(ofile *o, const char *path, tp_err *err)
{
    memset(o, 0, sizeof *o);
    if (!path[0]) return tp_err_set(err, "empty output path, expected a file name");
    if (strlen(path) >= sizeof o->path) return tp_err_set(err, "%s: path too long", path);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return tp_err_set(err, "%s: is a directory, expected a file name", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) return tp_err_set(err, "%s: cannot create: %s", path, strerror(errno));
    fchmod(fd, 0644);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        return tp_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    }
    return 0;
}

int ofile_commit(ofile *o, tp_err *err)
{
    int bad = ferror(o->f);
    if (fclose(o->f) != 0) bad = 1;
    o->f = NULL;
    if (bad) {
        unlink(o->tmp);
        return tp_err_set(err, "%s: write failed", o->path);
    }
    if (rename(o->tmp, o->path) != 0) {
        int e = errno;
        unlink(o->tmp);
        return tp_err_set(err, "%s: cannot write: %s", o->path, strerror(e));
    }
    return 0;
}

void ofile_abort(ofile *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
}
