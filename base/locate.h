/* locate.h: finding a file that a scenario or the command line names.
 *
 * Contract: locate_file turns `ref` into a path that exists, looking in these places in
 * order: `from` (the naming scenario's folder, "" for the current one; NULL to skip),
 * then each folder of $TPSIM_PATH (colon-separated, empty entries skipped), then the share
 * folder (locate_share, fixed at build time: the installed share/tpsim, or the source tree
 * for a build that is not installed). An absolute ref is taken as it is. A bare name (no '/'
 * and no extension, like "llama-3.1-70b") is looked up as KIND/NAME.EXT in each place
 * (`kind` "models", `ext` ".yaml": models/llama-3.1-70b.yaml). Any other ref is a path: tried
 * under each place as written, and, outside `from`, also without its leading "../" parts (so
 * a bundled scenario's "../models/x.yaml" still resolves once the scenario is copied away).
 * The first candidate that exists wins. When none does, err gets one line naming what was
 * sought and every folder looked in, and -1 is returned; for a name, the line also lists the
 * names that exist in those KIND folders and the closest one ("did you mean h200?"). Reads the
 * environment; no state.
 */
#ifndef TPSIM_LOCATE_H
#define TPSIM_LOCATE_H

#include <stddef.h>

#include "err.h"

#define LOCATE_MAX_NAMES 64
#define LOCATE_NAME_MAX 96

/* The share folder compiled in (TPSIM_SHARE). */
const char *locate_share(void);
/* 1 if ref is a bare name: no '/', not "." or "..", and not ending in ext (or ".yml" when ext
 * is ".yaml"). "llama-3.1-70b" is a name; "llama-3.1-70b.yaml" and "./x" are paths. */
int locate_is_name(const char *ref, const char *ext);
int locate_file(const char *kind, const char *ext, const char *ref, const char *from, char *out,
                size_t cap, tp_err *err);

/* The index in names[0..n) a mistyped ref most likely meant, or -1: the one name ref begins
 * (ignoring case), else the nearest by edit distance on the name alone, within 2 edits or 1 per
 * 4 characters of ref. */
int locate_closest(const char *ref, const char *const *names, int n);
/* The names (files KIND/NAME.EXT, without folder and ext) in the current folder, $TPSIM_PATH
 * and the share folder, sorted, each once, at most LOCATE_MAX_NAMES; returns how many. */
int locate_names(const char *kind, const char *ext, char names[][LOCATE_NAME_MAX]);

/* A file named on the command line (SCENARIO, --calib, --grid): arg itself when it exists or
 * is a path (its loader reports it if it cannot be read); a bare name that is not a file here
 * is looked up as KIND/NAME.EXT in the current folder, $TPSIM_PATH and the share folder,
 * into buf. NULL with err set when that finds nothing. */
const char *locate_arg(const char *kind, const char *ext, const char *arg, char *buf, size_t cap,
                       tp_err *err);

#endif
