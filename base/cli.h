/* cli.h: the command-line layer: flags (one getopt_long pass per command) and strict parsing
 * of their values.
 *
 * Flags: a command lists its flags in a table; cli_next returns them one at a time in the
 * user's order, with the operands (arguments that are not flags) in between. It accepts
 * `--name value`, `--name=value`, a unique prefix of a long name, `-o value`/`-ovalue` for a
 * one-letter form, and `--` to end the flags (everything after it is an operand). An unknown
 * flag, a flag missing its value and a value given to a flag that takes none each fill err
 * with one line. getopt_long's state is process-wide: parse one command line at a time.
 *
 * Values: each parser takes the flag name (for the message) and its text, and either
 * stores a fully-parsed, in-range value or fills err with one line
 * ("--tp: 'x' is not an integer, expected 1..1024") and returns -1. cli_list parses a
 * comma-separated list of integers ("1,2,4,8") into a caller array; cli_modes a --mode
 * list ("eager,graphs") into modes[0..1] (0 eager, 1 graphs), each at most once.
 */
#ifndef TPSIM_CLI_H
#define TPSIM_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

int cli_long(const char *flag, const char *text, long lo, long hi, long *out, tp_err *err);
int cli_u64(const char *flag, const char *text, uint64_t *out, tp_err *err);
int cli_double(const char *flag, const char *text, double lo, double hi, double *out, tp_err *err);
int cli_list(const char *flag, const char *text, long lo, long hi, long *out, size_t cap,
             size_t *n, tp_err *err);
int cli_modes(const char *text, int modes[2], int *n, tp_err *err);
/* A message size: whole bytes, or with a K/M/G suffix in powers of 1024 ("32K", "256MiB"). */
int cli_size(const char *what, const char *text, double *bytes, tp_err *err);

/* One flag of a command. A table ends with an entry whose name is NULL. The table is the one
 * place a flag is declared: the parser reads it, and cli_help prints --help's flag list from
 * it (and the man page is --help's text, scripts/gen-man.sh), so the three cannot differ. */
typedef struct cli_flag {
    const char *name; /* long name without the dashes: "tp" for --tp */
    char letter;      /* one-letter form ('o' for -o), or 0 */
    int takes_value;  /* 1: --name VALUE; 0: a switch */
    const char *arg;  /* the value's name in --help ("K", "FILE"); NULL for a switch */
    const char *help; /* what it does, one line (a '\n' continues it); never NULL */
} cli_flag;
#define CLI_END {NULL, 0, 0, NULL, NULL}

#define CLI_MAX_FLAGS 40

enum { CLI_DONE = -1, CLI_OPERAND = -2, CLI_ERROR = -3 };

/* One pass over a command line; argv[0] is the command. Filled by cli_begin. */
typedef struct cli_args {
    const char *cmd;  /* "run": prefixes the unknown-flag message; NULL for none */
    const char *help; /* "tpsim run --help": where that message sends the user */
    const cli_flag *flags;
    int argc;
    char **argv;
    int after_dashes; /* "--" seen: only operands remain */
    char shown[72];   /* the last flag returned, as the user would write it: "--tp" or "-o" */
    char letters[2 * CLI_MAX_FLAGS + 4];
    struct option opts[CLI_MAX_FLAGS + 1];
} cli_args;

/* Start a pass; -1 (with err set) when the table is too large or a flag has no help text. */
int cli_begin(cli_args *p, const char *cmd, const char *help, const cli_flag *flags, int argc,
              char **argv, tp_err *err);
/* The next item: the index of a flag in the table (*value its value, or NULL for a switch),
 * CLI_OPERAND (*value the operand), CLI_DONE, or CLI_ERROR with err set. */
int cli_next(cli_args *p, const char **value, tp_err *err);
/* A command's --help: usage (its "usage: tpsim CMD OPERANDS [flags]" line or lines), one line
 * per flag of the table ("  --tp K" and its help, aligned), then text (what it does, exit
 * status). */
void cli_help(FILE *f, const char *usage, const cli_flag *flags, const char *text);
/* "-" as an output path means standard output. */
int cli_is_stdout(const char *path);

#endif
