/* ktile.c -- the `ktile` command-line tool (DESIGN.md "The ktile command
   line"; that section is a contract: tests and users script it).

       ktile help [COMMAND]        ktile --help        ktile COMMAND --help
       ktile cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0
                  [--devices N] [--dtype-bytes 4] [--json]
       ktile zoo [--print SPEC] [--json]
       ktile plan (--model SPEC | --model-file F) --devices N [--factors a,b]
                  [--strategy NAME] [--objective bytes|time] [--topology SPEC]
                  [--memory-cap SIZE] [--svg FILE] [--json]
       ktile eval (--model SPEC | --model-file F) --plan PLAN.json
                  [--devices N] [--factors a,b] [--objective bytes|time]
                  [--topology SPEC] [--svg FILE] [--json]

   With --json a command prints exactly one JSON object on stdout.  Errors
   go to stderr as "ktile: <message>"; the exit status is 2 for bad input
   and 1 for an internal failure.

   A subcommand is a function `int cmd_NAME(int argc, char **argv)` (argv[0]
   is the command name) that returns the exit status, plus one row in
   `commands` below.  The helpers in "options" and "values" (option
   parsing, shapes, sizes with K/M/G suffixes, factors/devices), "models"
   (--model/--model-file) and "plan reports" (the JSON and text every
   plan-shaped result prints) are shared by all of them. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KT_IMPLEMENTATION
#include "../tiling.h"

enum { EXIT_BAD_INPUT = 2, EXIT_INTERNAL = 1 };

/* The CLI refuses more devices than this: a placement holds one box per
   device and a conversion compares every pair, so far beyond it a typo
   would only exhaust memory. */
#define KTILE_MAX_DEVICES (INT64_C(1) << 20)

/* ------------------------------------------------------------- reporting */

static int fail(int status, const char *fmt, ...) {
    va_list ap;
    fputs("ktile: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

/* Bad input is the caller's to fix (2); running out of memory or a bug in
   ktile is not (1). */
static int status_exit(kt_status s) {
    return s == KT_ERR_NOMEM || s == KT_ERR_INTERNAL ? EXIT_INTERNAL
                                                      : EXIT_BAD_INPUT;
}

static int fail_kt(const char *what, const kt_error *err) {
    if (what) return fail(status_exit(err->status), "%s: %s", what, err->message);
    return fail(status_exit(err->status), "%s", err->message);
}

/* --------------------------------------------------------------- options */

typedef struct cli_opt {
    const char *name;   /* without the leading "--"                       */
    int takes_value;    /* 0 for a flag such as --json                    */
    const char *value;  /* NULL when absent; "" for a flag that is present */
} cli_opt;

enum { CLI_OK = 0, CLI_HELP = -1 };

/* Parses "--name value", "--name=value" and flags into opts.  Returns
   CLI_OK, CLI_HELP for --help/-h, or an exit status after reporting. */
static int cli_parse(const char *cmd, int argc, char **argv, cli_opt *opts,
                     int nopts) {
    int i, j;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *eq, *value = NULL;
        size_t len;
        cli_opt *o = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return CLI_HELP;
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
            return fail(EXIT_BAD_INPUT,
                        "%s: unexpected argument '%s' (see 'ktile help %s')",
                        cmd, a, cmd);
        a += 2;
        eq = strchr(a, '=');
        len = eq ? (size_t)(eq - a) : strlen(a);
        for (j = 0; j < nopts; j++)
            if (strlen(opts[j].name) == len &&
                strncmp(opts[j].name, a, len) == 0)
                o = &opts[j];
        if (!o)
            return fail(EXIT_BAD_INPUT,
                        "%s: unknown option '--%.*s' (see 'ktile help %s')",
                        cmd, (int)len, a, cmd);
        if (!o->takes_value) {
            if (eq)
                return fail(EXIT_BAD_INPUT, "%s: --%s takes no value", cmd,
                            o->name);
            o->value = "";
            continue;
        }
        if (eq) value = eq + 1;
        else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
            value = argv[++i];
        if (!value || !*value)
            return fail(EXIT_BAD_INPUT, "%s: --%s needs a value", cmd,
                        o->name);
        o->value = value; /* the last one given wins */
    }
    return CLI_OK;
}

/* ---------------------------------------------------------------- values */

/* A non-negative decimal integer with an optional K, M or G suffix (powers
   of 1024, either case), e.g. "512", "64K", "16G".  Returns 0 on success,
   -1 when malformed or above max. */
static int parse_size(const char *text, int64_t max, int64_t *out) {
    const char *p = text;
    int64_t v = 0, mult = 1;
    if (!text || *p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - (*p - '0')) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    switch (*p) {
    case 'K': case 'k': mult = INT64_C(1) << 10; p++; break;
    case 'M': case 'm': mult = INT64_C(1) << 20; p++; break;
    case 'G': case 'g': mult = INT64_C(1) << 30; p++; break;
    default: break;
    }
    if (*p != '\0') return -1;
    if (v > INT64_MAX / mult || v * mult > max) return -1;
    *out = v * mult;
    return 0;
}

/* A plain decimal integer in [min, max]. */
static int parse_int(const char *text, int64_t min, int64_t max,
                     int64_t *out) {
    const char *p = text;
    int64_t v = 0;
    if (!text || *p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - (*p - '0')) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    if (*p != '\0' || v < min || v > max) return -1;
    *out = v;
    return 0;
}

/* "8x6", "13x11x7x9", "1Kx512": one extent >= 1 per dimension. */
static int parse_shape(const char *text, int *rank, int64_t *shape) {
    const char *p = text;
    int n = 0;
    for (;;) {
        char part[32];
        const char *x = strchr(p, 'x');
        size_t len = x ? (size_t)(x - p) : strlen(p);
        if (n == KT_MAX_DIMS)
            return fail(EXIT_BAD_INPUT,
                        "--shape '%s': more than %d dimensions", text,
                        KT_MAX_DIMS);
        if (len == 0)
            return fail(EXIT_BAD_INPUT,
                        "--shape '%s': dimension %d is empty (write the "
                        "extents joined by 'x', e.g. 8x6)", text, n);
        if (len < sizeof part) {
            memcpy(part, p, len);
            part[len] = '\0';
        }
        if (len >= sizeof part ||
            parse_size(part, INT64_C(1) << 50, &shape[n]) != 0)
            return fail(EXIT_BAD_INPUT,
                        "--shape '%s': dimension %d ('%.*s') is not a size "
                        "such as 300 or 4K", text, n, (int)len, p);
        if (shape[n] < 1)
            return fail(EXIT_BAD_INPUT,
                        "--shape '%s': dimension %d is 0; every extent must "
                        "be at least 1", text, n);
        n++;
        if (!x) break;
        p = x + 1;
    }
    *rank = n;
    return 0;
}

/* The cut factors from --factors and/or --devices (DESIGN.md "Tilings":
   by default the prime factors of the device count, largest first). */
static int parse_factors(const char *factors, const char *devices,
                         kt_factors *f) {
    kt_error err;
    int64_t n = 0;
    if (devices && parse_int(devices, 1, KTILE_MAX_DEVICES, &n) != 0)
        return fail(EXIT_BAD_INPUT,
                    "--devices '%s': expected a whole number from 1 to %lld",
                    devices, (long long)KTILE_MAX_DEVICES);
    if (factors) {
        if (kt_factors_parse(factors, f, &err) != KT_OK)
            return fail_kt(NULL, &err); /* the message names the factors */
        if (kt_factors_devices(f) > KTILE_MAX_DEVICES)
            return fail(EXIT_BAD_INPUT,
                        "--factors '%s': %lld devices, more than the %lld "
                        "ktile accepts", factors,
                        (long long)kt_factors_devices(f),
                        (long long)KTILE_MAX_DEVICES);
        if (devices && kt_factors_devices(f) != n)
            return fail(EXIT_BAD_INPUT,
                        "--factors '%s' make %lld devices but --devices is "
                        "%lld", factors, (long long)kt_factors_devices(f),
                        (long long)n);
        return 0;
    }
    if (!devices)
        return fail(EXIT_BAD_INPUT, "give --factors (e.g. 2,2) or --devices");
    if (kt_factors_default(n, f, &err) != KT_OK)
        return fail_kt("--devices", &err);
    return 0;
}

/* A tiling as DESIGN.md writes it ("S0.S1", "R.S0", "P"); "-" is the
   tiling of one device, which has no cuts. */
static int parse_tiling(const char *option, const char *text, kt_tiling *t) {
    kt_error err;
    if (strcmp(text, "-") == 0) {
        memset(t, 0, sizeof *t);
        return 0;
    }
    if (kt_tiling_parse(text, t, &err) != KT_OK) return fail_kt(option, &err);
    return 0;
}

static void format_shape(int rank, const int64_t *shape, char *buf,
                         size_t cap) {
    size_t n = 0;
    int d;
    buf[0] = '\0';
    for (d = 0; d < rank && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "x" : "",
                              (long long)shape[d]);
}

static void format_factors(const kt_factors *f, char *buf, size_t cap) {
    size_t n = 0;
    int i;
    buf[0] = '\0';
    if (f->count == 0) snprintf(buf, cap, "(none)");
    for (i = 0; i < f->count && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%d", i ? "," : "", f->k[i]);
}

/* ------------------------------------------------------------------ cost */

static const char cost_usage[] =
    "usage: ktile cost --shape DIMS (--factors K1,K2,... | --devices N)\n"
    "                  --from TILING --to TILING [--dtype-bytes B] [--json]\n"
    "\n"
    "Bytes the devices must receive to convert one tensor from one tiling\n"
    "to another (DESIGN.md \"Conversion cost\"), exact for uneven splits.\n"
    "\n"
    "  --shape DIMS      extents joined by 'x': 8x6, 13x11x7x9, 1Kx512\n"
    "  --factors LIST    cut factors, product = device count: 2,2\n"
    "  --devices N       device count; without --factors its prime factors,\n"
    "                    largest first\n"
    "  --from TILING     one of S<dim>, R, P per cut, cut 1 first: S0.S1, P.R\n"
    "  --to TILING       the same without P: R.S0\n"
    "  --dtype-bytes B   bytes per element, 1..8 (default 4)\n"
    "  --json            print {\"bytes\": N} only\n"
    "\n"
    "example: ktile cost --shape 4x4 --factors 2 --from P --to R --json\n"
    "         {\"bytes\": 128}\n";

static int cmd_cost(int argc, char **argv) {
    enum { O_SHAPE, O_FACTORS, O_DEVICES, O_FROM, O_TO, O_DTYPE, O_JSON, O_N };
    cli_opt o[O_N] = {
        {"shape", 1, NULL},   {"factors", 1, NULL}, {"devices", 1, NULL},
        {"from", 1, NULL},    {"to", 1, NULL},      {"dtype-bytes", 1, NULL},
        {"json", 0, NULL}};
    static const char *const required[] = {"shape", "from", "to"};
    int64_t shape[KT_MAX_DIMS], elem = 4, elements = 1, bytes = 0, ndev;
    int64_t *received;
    int rank = 0, rc, i, d;
    kt_factors f;
    kt_tiling from, to;
    kt_error err;
    kt_status s;

    rc = cli_parse("cost", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        fputs(cost_usage, stdout);
        return 0;
    }
    if (rc != CLI_OK) return rc;
    for (i = 0; i < 3; i++) {
        int k = i == 0 ? O_SHAPE : i == 1 ? O_FROM : O_TO;
        if (!o[k].value)
            return fail(EXIT_BAD_INPUT,
                        "cost: missing --%s (see 'ktile help cost')",
                        required[i]);
    }
    if ((rc = parse_shape(o[O_SHAPE].value, &rank, shape)) != 0) return rc;
    if ((rc = parse_factors(o[O_FACTORS].value, o[O_DEVICES].value, &f)) != 0)
        return rc;
    if (o[O_DTYPE].value && parse_int(o[O_DTYPE].value, 1, 8, &elem) != 0)
        return fail(EXIT_BAD_INPUT,
                    "--dtype-bytes '%s': expected a whole number from 1 to 8",
                    o[O_DTYPE].value);
    if ((rc = parse_tiling("--from", o[O_FROM].value, &from)) != 0) return rc;
    if ((rc = parse_tiling("--to", o[O_TO].value, &to)) != 0) return rc;
    if (kt_tiling_check(&from, "--from", rank, shape, &f, 1, &err) != KT_OK)
        return fail_kt(NULL, &err);
    if (kt_tiling_check(&to, "--to", rank, shape, &f, 0, &err) != KT_OK)
        return fail_kt(NULL, &err);

    /* Each element costs at most (q - 1) + |T| < 2 * devices receptions:
       keep bytes, and every intermediate product, inside int64. */
    ndev = kt_factors_devices(&f);
    for (d = 0; d < rank; d++) {
        if (elements > INT64_MAX / (16 * ndev) / shape[d])
            return fail(EXIT_BAD_INPUT,
                        "--shape '%s': too many elements to cost on %lld "
                        "devices", o[O_SHAPE].value, (long long)ndev);
        elements *= shape[d];
    }

    received = (int64_t *)calloc((size_t)ndev, sizeof *received);
    if (!received)
        return fail(EXIT_INTERNAL, "out of memory for %lld devices",
                    (long long)ndev);
    s = kt_tiling_conversion_cost(rank, shape, (int)elem, &f, &from, &to,
                                  &bytes, received, &err);
    if (s != KT_OK) {
        free(received);
        return fail_kt("cost", &err);
    }

    if (o[O_JSON].value) {
        printf("{\"bytes\": %lld}\n", (long long)bytes);
    } else {
        char sh[KT_MAX_DIMS * 24], fa[KT_MAX_CUTS * 12];
        char tf[8 * KT_MAX_CUTS + 8], tt[8 * KT_MAX_CUTS + 8];
        int64_t dev, shown = ndev < 64 ? ndev : 64, size = elements * elem;
        format_shape(rank, shape, sh, sizeof sh);
        format_factors(&f, fa, sizeof fa);
        kt_tiling_format(&from, tf, sizeof tf);
        kt_tiling_format(&to, tt, sizeof tt);
        printf("tensor   %s, %lld elements of %lld bytes (%lld bytes)\n", sh,
               (long long)elements, (long long)elem, (long long)size);
        printf("factors  %s (%lld device%s)\n", fa, (long long)ndev,
               ndev == 1 ? "" : "s");
        printf("from     %s\nto       %s\n", tf, tt);
        printf("cost     %lld bytes (%.4g x the tensor)\n", (long long)bytes,
               (double)bytes / (double)size);
        printf("\n  device  coordinates   bytes received\n");
        for (dev = 0; dev < shown; dev++) {
            int coords[KT_MAX_CUTS];
            char c[KT_MAX_CUTS * 12 + 4];
            size_t n = 0;
            kt_device_coords(&f, dev, coords);
            n += (size_t)snprintf(c, sizeof c, "(");
            for (i = 0; i < f.count; i++)
                n += (size_t)snprintf(c + n, sizeof c - n, "%s%d",
                                      i ? "," : "", coords[i]);
            snprintf(c + n, sizeof c - n, ")");
            printf("  %6lld  %-12s  %14lld\n", (long long)dev, c,
                   (long long)received[dev]);
        }
        if (shown < ndev)
            printf("  ... and %lld more devices\n", (long long)(ndev - shown));
    }
    free(received);
    if (fflush(stdout) != 0 || ferror(stdout))
        return fail(EXIT_INTERNAL, "cannot write the result");
    return 0;
}

/* ------------------------------------------------------------------ help */

static int cmd_help(int argc, char **argv);

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage; /* full text for `ktile help NAME`, NULL: summary */
} command;

static const command commands[] = {
    {"cost", cmd_cost, "bytes to convert a tensor between two tilings",
     cost_usage},
    {"help", cmd_help, "this text, or the usage of one command", NULL},
};

static const int ncommands = (int)(sizeof commands / sizeof commands[0]);

static void print_overview(FILE *out) {
    int i;
    fputs("usage: ktile COMMAND [OPTIONS]   (ktile help COMMAND for its "
          "options)\n\ncommands:\n", out);
    for (i = 0; i < ncommands; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\nEvery command takes --json and then prints one JSON object on "
          "stdout.\nErrors go to stderr; exit status 2 for bad input, 1 for "
          "an internal failure.\n", out);
}

static const command *find_command(const char *name) {
    int i;
    for (i = 0; i < ncommands; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static int cmd_help(int argc, char **argv) {
    const command *c;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        print_overview(stdout);
        return 0;
    }
    if (argc > 2)
        return fail(EXIT_BAD_INPUT, "help: takes at most one command name");
    if (!(c = find_command(argv[1])))
        return fail(EXIT_BAD_INPUT, "help: unknown command '%s' (try 'ktile "
                    "help')", argv[1]);
    if (c->usage) fputs(c->usage, stdout);
    else printf("ktile %s: %s\n", c->name, c->summary);
    return 0;
}

int main(int argc, char **argv) {
    const command *c;
    if (argc < 2)
        return fail(EXIT_BAD_INPUT, "no command given (try 'ktile help')");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_overview(stdout);
        return 0;
    }
    if (!(c = find_command(argv[1])))
        return fail(EXIT_BAD_INPUT, "unknown command '%s' (try 'ktile help')",
                    argv[1]);
    return c->run(argc - 1, argv + 1);
}
