/* cli.c: see cli.h. */
#include "cli.h"

#include "locate.h"
#include "num.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_long(const char *flag, const char *text, long lo, long hi, long *out, tp_err *err)
{
    num_status st = num_long(text, lo, hi, out);
    if (st == NUM_SYNTAX)
        return tp_err_set(err, "%s: '%s' is not an integer, expected %ld..%ld", flag, text, lo, hi);
    if (st == NUM_RANGE)
        return tp_err_set(err, "%s: %s is out of range, expected %ld..%ld", flag, text, lo, hi);
    return 0;
}

int cli_u64(const char *flag, const char *text, uint64_t *out, tp_err *err)
{
    num_status st = num_u64(text, out);
    if (st == NUM_SYNTAX)
        return tp_err_set(err, "%s: '%s' is not a non-negative integer", flag, text);
    if (st == NUM_RANGE)
        return tp_err_set(err, "%s: '%s' is not a non-negative integer below 2^64", flag, text);
    return 0;
}

int cli_double(const char *flag, const char *text, double lo, double hi, double *out, tp_err *err)
{
    double v;
    if (num_double(text, -HUGE_VAL, HUGE_VAL, &v) != NUM_OK)
        return tp_err_set(err, "%s: '%s' is not a number, expected %g..%g", flag, text, lo, hi);
    if (v < lo || v > hi)
        return tp_err_set(err, "%s: %g is out of range, expected %g..%g", flag, v, lo, hi);
    *out = v;
    return 0;
}

int cli_modes(const char *text, int modes[2], int *n, tp_err *err)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", text);
    *n = 0;
    for (char *p = buf, *comma; p; p = comma) {
        comma = strchr(p, ',');
        if (comma) *comma++ = '\0';
        int m = !strcmp(p, "eager") ? 0 : !strcmp(p, "graphs") ? 1 : -1;
        if (m < 0)
            return tp_err_set(err, "--mode: '%s', expected eager, graphs or eager,graphs", p);
        for (int i = 0; i < *n; i++)
            if (modes[i] == m) return tp_err_set(err, "--mode: '%s' listed twice", p);
        modes[(*n)++] = m; /* two distinct values at most: a third repeats one */
    }
    return 0;
}

int cli_list(const char *flag, const char *text, long lo, long hi, long *out, size_t cap,
             size_t *n, tp_err *err)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item)
            return tp_err_set(err, "%s: '%s' is not a list like 1,2,4,8", flag, text);
        memcpy(item, p, len);
        item[len] = '\0';
        if (*n == cap) return tp_err_set(err, "%s: more than %zu values", flag, cap);
        if (cli_long(flag, item, lo, hi, &out[*n], err)) return -1;
        for (size_t j = 0; j < *n; j++)
            if (out[j] == out[*n]) return tp_err_set(err, "%s: %ld is listed twice", flag, out[j]);
        (*n)++;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* getopt_long returns a one-letter flag as its letter, a long-only one as CLI_LONG + index. */
#define CLI_LONG 256

int cli_begin(cli_args *p, const char *cmd, const char *help, const cli_flag *flags, int argc,
              char **argv, tp_err *err)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd, p->help = help, p->flags = flags, p->argc = argc, p->argv = argv;
    /* '-': operands come back in order (code 1), so --set and operands keep the user's order;
     * ':': a missing value is told apart from an unknown flag */
    size_t nl = 0;
    p->letters[nl++] = '-';
    p->letters[nl++] = ':';
    int n = 0;
    for (; flags[n].name; n++) {
        if (n == CLI_MAX_FLAGS)
            return tp_err_set(err, "%s: more than %d flags", cmd, CLI_MAX_FLAGS);
        /* a flag --help would not list is a bug: refused on every use, so a test finds it */
        if (!flags[n].help || (flags[n].takes_value && !flags[n].arg))
            return tp_err_set(err, "%s: --%s has no help text in its flag table", cmd ? cmd : "",
                              flags[n].name);
        p->opts[n] = (struct option){flags[n].name, flags[n].takes_value ? required_argument
                                                                          : no_argument,
                                     NULL, CLI_LONG + n};
        if (flags[n].letter) {
            p->letters[nl++] = flags[n].letter;
            if (flags[n].takes_value) p->letters[nl++] = ':';
        }
    }
    p->opts[n] = (struct option){NULL, 0, NULL, 0};
    p->letters[nl] = '\0';
    optind = 0; /* glibc: a full restart, for a second pass in one process */
    opterr = 0; /* the messages are ours, one line each */
    return 0;
}

/* The table index of getopt's code (letter or CLI_LONG + index), or -1. */
static int cli_index(const cli_args *p, int code)
{
    if (code >= CLI_LONG) return code - CLI_LONG;
    for (int i = 0; code > 0 && p->flags[i].name; i++)
        if (p->flags[i].letter == code) return i;
    return -1;
}

static void cli_show(cli_args *p, int idx)
{
    const char *a = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "";
    const cli_flag *f = &p->flags[idx];
    /* as written: "-o" for the letter, "--name" for the long form (even when abbreviated) */
    if (f->letter && a[0] == '-' && a[1] != '-')
        snprintf(p->shown, sizeof p->shown, "-%c", f->letter);
    else
        snprintf(p->shown, sizeof p->shown, "--%s", f->name);
}

int cli_next(cli_args *p, const char **value, tp_err *err)
{
    *value = NULL;
    if (p->after_dashes) {
        if (optind >= p->argc) return CLI_DONE;
        *value = p->argv[optind++];
        return CLI_OPERAND;
    }
    int code = getopt_long(p->argc, p->argv, p->letters, p->opts, NULL);
    if (code == -1) { /* the end, or "--": the rest are operands */
        p->after_dashes = 1;
        return cli_next(p, value, err);
    }
    if (code == 1) {
        *value = optarg;
        return CLI_OPERAND;
    }
    int idx = cli_index(p, code == ':' || code == '?' ? optopt : code);
    if (code == ':' && idx >= 0) {
        cli_show(p, idx);
        tp_err_set(err, "%s: missing value", p->shown);
        return CLI_ERROR;
    }
    if (code == '?' && idx >= 0 && optopt >= CLI_LONG) {
        tp_err_set(err, "--%s takes no value", p->flags[idx].name);
        return CLI_ERROR;
    }
    if (code == '?' || code == ':' || idx < 0) {
        char what[80];
        const char *a = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "";
        if (optopt > 0 && optopt < CLI_LONG)
            snprintf(what, sizeof what, "-%c", optopt);
        else
            snprintf(what, sizeof what, "%.*s", (int)strcspn(a, "="), a);
        char amb[160] = "";
        size_t len = strlen(what), used = 0;
        int matches = 0;
        for (int i = 0; len > 2 && what[1] == '-' && p->flags[i].name; i++)
            if (strncmp(p->flags[i].name, what + 2, len - 2) == 0 && used < sizeof amb) {
                int w = snprintf(amb + used, sizeof amb - used, "%s--%s", matches ? ", " : "",
                                 p->flags[i].name);
                used += w > 0 ? (size_t)w : 0;
                matches++;
            }
        if (matches > 1) {
            tp_err_set(err, "%s%s'%s' is ambiguous: %s", p->cmd ? p->cmd : "", p->cmd ? ": " : "",
                       what, amb);
            return CLI_ERROR;
        }
        /* the closest flag by name (locate_closest), or one whose name the typed word
         * extends by a '-' part ("--batch-size": --batch) */
        const char *names[128];
        int n = 0, best = -1;
        size_t best_len = 0;
        for (int i = 0; p->flags[i].name && n < 128; i++) names[n++] = p->flags[i].name;
        if (len > 2 && what[1] == '-') {
            best = locate_closest(what + 2, names, n);
            for (int i = 0; best < 0 && i < n; i++) {
                size_t k = strlen(names[i]);
                if (k > best_len && !strncmp(what + 2, names[i], k) && what[2 + k] == '-')
                    best = i, best_len = k;
            }
        }
        tp_err_set(err, "%s%sunknown option '%s'%s%s%s%s%s%s", p->cmd ? p->cmd : "",
                   p->cmd ? ": " : "", what, best >= 0 ? "; did you mean --" : "",
                   best >= 0 ? names[best] : "", best >= 0 ? "?" : "", p->help ? " (see " : "",
                   p->help ? p->help : "", p->help ? ")" : "");
        return CLI_ERROR;
    }
    cli_show(p, idx);
    *value = p->flags[idx].takes_value ? optarg : NULL;
    return idx;
}

int cli_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

int cli_size(const char *what, const char *text, double *bytes, tp_err *err)
{
    /* the number, then an optional unit: digits and '.' only (no sign, no exponent) */
    char num[64];
    size_t n = text ? strspn(text, "0123456789.") : 0;
    if (!text || n == 0 || n >= sizeof num)
        return tp_err_set(err, "%s '%s' is not a size (bytes, or with K/M/G: 32K, 256M)", what,
                          text ? text : "");
    memcpy(num, text, n);
    num[n] = '\0';
    const char *end = text + n;
    double v, unit = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': unit = 1024.0; end++; break;
    case 'M': unit = 1024.0 * 1024; end++; break;
    case 'G': unit = 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (unit > 1 && (end[0] == 'i' || end[0] == 'I') && toupper((unsigned char)end[1]) == 'B')
        end += 2;
    else if (toupper((unsigned char)*end) == 'B')
        end++;
    num_status st = num_double(num, 0, 1e15, &v);
    if (*end != '\0' || st == NUM_SYNTAX)
        return tp_err_set(err, "%s '%s' is not a size (bytes, or with K/M/G: 32K, 256M)", what,
                          text);
    if (st != NUM_OK || (v *= unit) <= 0 || v != floor(v) || v > 1e15)
        return tp_err_set(err, "%s '%s' is not a positive whole number of bytes", what, text);
    *bytes = v;
    return 0;
}

/* the column where a flag's help starts in --help */
#define CLI_HELP_COL 28

void cli_help(FILE *f, const char *usage, const cli_flag *flags, const char *text)
{
    fputs(usage, f);
    for (const cli_flag *g = flags; g->name; g++) {
        char spec[96];
        int n = g->letter ? snprintf(spec, sizeof spec, "-%c, --%s", g->letter, g->name)
                          : snprintf(spec, sizeof spec, "--%s", g->name);
        if (g->takes_value && n > 0 && (size_t)n < sizeof spec)
            snprintf(spec + n, sizeof spec - (size_t)n, " %s", g->arg);
        /* a long spec takes its own line; the help starts on the next, in the column */
        if (strlen(spec) + 4 <= CLI_HELP_COL)
            fprintf(f, "  %-*s", CLI_HELP_COL - 2, spec);
        else
            fprintf(f, "  %s\n%*s", spec, CLI_HELP_COL, "");
        for (const char *p = g->help; *p; p++) {
            fputc(*p, f);
            if (*p == '\n' && p[1]) fprintf(f, "%*s", CLI_HELP_COL, "");
        }
        fputc('\n', f);
    }
    fputs(text, f);
}
