/* cmd_merge.c: `tpsim merge OUT PARTS...`: the parts of a sharded sweep joined into the
 * CSV the unsharded sweep writes (shard.h checks and joins; this is the command layer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include "cmd.h"
#include "ofile.h"
#include "shard.h"

static const char merge_usage[] = "usage: tpsim merge OUT PART... [flags]\n";
static const char merge_help_text[] =
    "  joins the parts written by tpsim sweep --shard I/N -o PART (every shard exactly once,\n"
    "  in any order; each PART with its sidecar PART.meta beside it) into OUT (- for stdout),\n"
    "  exactly the CSV the sweep writes without --shard.\n";

int tpsim_cmd_merge(int argc, char **argv)
{
    tp_err err = {{0}};
    static const cli_flag flags[] = {{"help", 'h', 0, NULL, "this help"}, CLI_END};
    const char **operands = calloc((size_t)argc + 1, sizeof *operands), *v;
    int n = 0, f, status = 2;
    cli_args ca;
    if (!operands) {
        tp_err_set(&err, "out of memory");
        return cmd_fail(&err);
    }
    if (cli_begin(&ca, "merge", "tpsim merge --help", flags, argc, argv, &err)) goto out;
    while ((f = cli_next(&ca, &v, &err)) != CLI_DONE) {
        if (f == CLI_ERROR) goto out;
        if (f == CLI_OPERAND) {
            operands[n++] = v;
        } else { /* --help */
            cli_help(stdout, merge_usage, flags, merge_help_text);
            status = 0;
            goto done;
        }
    }
    if (n < 2) {
        tp_err_set(&err, "merge: expected OUT and at least one PART (see tpsim merge --help)");
        goto out;
    }
    ofile of = {0};
    FILE *out = stdout;
    if (shard_refuse_out(operands[0], operands + 1, n - 1, &err)) goto out;
    if (!cli_is_stdout(operands[0])) {
        if (ofile_open(&of, operands[0], &err)) goto out;
        out = of.f;
    }
    if (shard_merge(out, operands + 1, n - 1, &err) || (out != stdout && ofile_commit(&of, &err))) {
        if (out != stdout) ofile_abort(&of);
        goto out;
    }
    status = 0;
    goto done;
out:
    cmd_fail(&err);
done:
    free(operands);
    return status;
}
