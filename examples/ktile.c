/* ktile.c -- the `ktile` command-line tool (DESIGN.md "The ktile command
   line"; that section is a contract: tests and users script it).

       ktile help [COMMAND]        ktile --help        ktile COMMAND --help
       ktile cost --shape 8x6 --factors 2,2 --from S0.S1 --to R.S0
                  [--devices N] [--dtype-bytes 4] [--json]
       ktile zoo [--print SPEC] [--json]
       ktile plan (--model SPEC | --model-file F) --devices N [--factors a,b]
                  [--strategy NAME] [--objective bytes|time]
                  [--topology SPEC|FILE | --topology-file F]
                  [--memory-cap SIZE] [--svg FILE] [--json]
       ktile eval (--model SPEC | --model-file F) --plan PLAN.json
                  [--devices N] [--factors a,b] [--objective bytes|time]
                  [--topology SPEC|FILE | --topology-file F] [--svg FILE]
                  [--json]
       ktile sim (--model SPEC | --model-file F) --devices N [--factors a,b]
                 [--plan PLAN.json] [--objective bytes|time]
                 [--topology SPEC|FILE | --topology-file F]
                 [--timeline FILE.svg] [--json]
       ktile swap (--model SPEC | --model-file F) [--devices N] [--factors a,b]
                  --memory SIZE[,SIZE...] [--search ga|none|odswap|geeps]
                  [--seconds S | --generations N] [--seed N]
                  [--population N] [--mutation P] [--pressure X] [--cold]
                  [--recent N] [--host-bw BW] [--progress] [--json]
       ktile verify (--model SPEC | --model-file F) --devices N
                    [--factors a,b] [--plan PLAN.json] [--backend cpu]
                    [--memory SIZE [--search ga|none] [--generations N]
                    [--cold]] [--seed N] [--tol X] [--eps X] [--reference]
                    [--threads N] [--json]

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
#include "../swap.h"
#include "../backend_cpu.h"

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

/* Whether everything printed to stdout reached it: 0, or 1 after saying
   so (a full disk or a closed pipe is not a success). */
static int stdout_written(void) {
    if (fflush(stdout) != 0 || ferror(stdout))
        return fail(EXIT_INTERNAL, "cannot write the result");
    return 0;
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
        /* a second value would silently win over the first: refused, as
           a typo's most likely fruit (a flag given twice is harmless) */
        if (o->value)
            return fail(EXIT_BAD_INPUT, "%s: --%s given twice ('%s', then "
                        "'%s')", cmd, o->name, o->value, value);
        o->value = value;
    }
    return CLI_OK;
}

/* ---------------------------------------------------------------- values */

/* A non-negative decimal integer with an optional K, M, G or T suffix (powers
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
    case 'T': case 't': mult = INT64_C(1) << 40; p++; break;
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

/* 1 when text is written as a decimal number (kt__decimal_text), a minus
   allowed first so that a negative value gets its range's message. */
static int decimal_text(const char *text) {
    if (text && text[0] == '-') text++;
    return text && kt__decimal_text(text, strlen(text));
}

/* 1 when all of text is one decimal number, in range of a double. */
static int read_number(const char *text, double *out) {
    char *end;
    if (!decimal_text(text)) return 0;
    errno = 0;
    *out = strtod(text, &end);
    return end != text && !*end && !errno;
}

/* A finite number >= 0 for --OPTION. */
static int parse_real(const char *option, const char *text, double *out) {
    if (!read_number(text, out) || !isfinite(*out) || *out < 0)
        return fail(EXIT_BAD_INPUT, "--%s '%s': expected a number >= 0",
                    option, text);
    return 0;
}

/* A number in (0, max] for --OPTION, described as `what` when it is not. */
static int parse_above_zero(const char *option, const char *text, double max,
                            const char *what, double *out) {
    if (!read_number(text, out) || !(*out > 0 && *out <= max)) {
        /* the limit as the help writes it: 1e6, not printf's 1e+06 */
        char limit[32], *plus;
        snprintf(limit, sizeof limit, "%g", max);
        if ((plus = strstr(limit, "e+")) != NULL) {
            char *digits = plus + 2;
            while (*digits == '0' && digits[1]) digits++;
            memmove(plus + 1, digits, strlen(digits) + 1);
        }
        return fail(EXIT_BAD_INPUT, "--%s '%s': expected %s above 0, at most "
                    "%s", option, text, what, limit);
    }
    return 0;
}

/* --seed N of plan (mcmc), swap and verify: the library's seeds are
   uint64_t, so any whole number from 0 to 2^64 - 1. */
static int parse_seed(const char *text, uint64_t *seed) {
    const char *p;
    char *end;
    unsigned long long v;
    for (p = text; *p >= '0' && *p <= '9'; p++) continue;
    errno = 0;
    v = p > text && !*p ? strtoull(text, &end, 10) : 0;
    if (p == text || *p || errno != 0 || v > UINT64_MAX)
        return fail(EXIT_BAD_INPUT, "--seed '%s': expected a whole number "
                    "from 0 to %llu", text, (unsigned long long)UINT64_MAX);
    *seed = (uint64_t)v;
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

/* The largest divisor of n no greater than its square root (1 for a
   prime): n / d, d is the two-cut factorisation closest to square, the
   example a refusal of too many cuts suggests. */
static long long largest_divisor_to_sqrt(long long n) {
    long long d, best = 1;
    for (d = 2; d <= n / d; d++)
        if (n % d == 0) best = d;
    return best;
}

/* The cut factors from --factors and/or --devices (DESIGN.md "Tilings":
   by default the prime factors of the device count, largest first; plan
   and sim put them in the order of a topology's levels when one is
   given, kt_machine_factors). */
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
    if (kt_factors_default(n, f, &err) != KT_OK) {
        if (err.status == KT_ERR_LIMIT) { /* one cut per prime factor */
            long long d = largest_divisor_to_sqrt(n);
            return fail(EXIT_BAD_INPUT, "--devices %lld: one cut per prime "
                        "factor would make more than %d cuts; give fewer, "
                        "larger factors with --factors (e.g. --factors "
                        "%lld,%lld)", (long long)n, KT_MAX_CUTS,
                        (long long)n / d, d);
        }
        return fail_kt("--devices", &err);
    }
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
        return stdout_written();
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
        printf("tensor   %s, %lld element%s of %lld bytes (%lld bytes)\n",
               sh, (long long)elements, elements == 1 ? "" : "s",
               (long long)elem, (long long)size);
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
    return stdout_written();
}

/* -------------------------------------------------------------- JSON out */

/* s as a JSON string: quotes, backslashes and control characters escaped,
   other bytes (UTF-8) as they are. */
static void json_string(FILE *out, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (*p < 0x20) fprintf(out, "\\u%04x", (unsigned)*p);
            else fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* A figure to `digits` significant digits.  JSON has no infinity or
   NaN: such a figure is printed as null (the library's range checks keep
   every figure finite; a 0 would be a lie). */
static void json_number(FILE *out, double v, int digits) {
    if (isfinite(v)) fprintf(out, "%.*g", digits, v);
    else fputs("null", out);
}

static void json_double(FILE *out, double v) { json_number(out, v, 9); }

/* --------------------------------------------------------------- JSON in */

/* A small JSON reader for the plans `eval` takes (RFC 8259: objects,
   arrays, strings with every escape, numbers, true, false, null).  It
   builds a tree; a malformed text is refused with the line and column of
   the first fault.  Not supported: "\u0000" inside a string (the values
   are C strings), nesting deeper than JSON_MAX_DEPTH. */

typedef enum jv_type {
    JV_NULL, JV_FALSE, JV_TRUE, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT
} jv_type;

typedef struct jv {
    jv_type type;
    size_t pos;        /* byte offset of the value in the text          */
    char *text;        /* STRING: decoded; NUMBER: the literal          */
    size_t n;          /* ARRAY, OBJECT: members                        */
    struct jv *item;   /* ARRAY, OBJECT: n values                       */
    char **key;        /* OBJECT: n keys                                */
} jv;

#define JSON_MAX_DEPTH 128

typedef struct jparser {
    const char *s;
    size_t len, pos;
    int depth;
    size_t err_pos;
    char msg[160];     /* the first fault; empty while there is none */
    int nomem;         /* that fault is running out of memory (not the
                          text's: exit status 1, not 2)                */
} jparser;

static int jfail(jparser *p, size_t at, const char *fmt, ...) {
    va_list ap;
    if (p->msg[0]) return -1;
    p->err_pos = at;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static int jnomem(jparser *p, size_t at) {
    if (!p->msg[0]) p->nomem = 1;
    return jfail(p, at, "out of memory");
}

static void jv_free(jv *v) {
    size_t i;
    for (i = 0; i < v->n; i++) {
        jv_free(&v->item[i]);
        if (v->key) free(v->key[i]);
    }
    free(v->item);
    free(v->key);
    free(v->text);
    memset(v, 0, sizeof *v);
}

static void jskip(jparser *p) {
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

/* "'x'" for a printable byte, "byte 0xNN" otherwise, "end of input". */
static const char *jwhat(const jparser *p, char *buf, size_t cap) {
    unsigned char c;
    if (p->pos >= p->len) return "the end of the input";
    c = (unsigned char)p->s[p->pos];
    if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
    return buf;
}

typedef struct jbuf {
    char *b;
    size_t n, cap;
} jbuf;

static int jbuf_put(jbuf *b, char c) {
    if (b->n + 1 >= b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 32;
        char *nb = (char *)realloc(b->b, nc);
        if (!nb) return -1;
        b->b = nb;
        b->cap = nc;
    }
    b->b[b->n++] = c;
    b->b[b->n] = '\0';
    return 0;
}

static int jhex4(jparser *p, unsigned *out) {
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = p->pos < p->len ? p->s[p->pos] : '\0';
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return jfail(p, p->pos, "\\u needs four hexadecimal digits");
        p->pos++;
    }
    *out = v;
    return 0;
}

/* A string at p->pos (the opening quote); *out is malloc'ed. */
static int jstring(jparser *p, char **out) {
    size_t start = p->pos;
    jbuf b = {NULL, 0, 0};
    p->pos++;
    if (jbuf_put(&b, '\0') != 0) goto nomem; /* "" needs a buffer too */
    b.n = 0;
    for (;;) {
        unsigned char c;
        if (p->pos >= p->len) {
            free(b.b);
            return jfail(p, start, "unterminated string");
        }
        c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            *out = b.b;
            return 0;
        }
        if (c < 0x20) {
            free(b.b);
            return jfail(p, p->pos, "control character 0x%02x inside a "
                         "string (write it as an escape)", (unsigned)c);
        }
        if (c != '\\') {
            if (jbuf_put(&b, (char)c) != 0) goto nomem;
            p->pos++;
            continue;
        }
        p->pos++;
        c = p->pos < p->len ? (unsigned char)p->s[p->pos] : 0;
        p->pos++;
        switch (c) {
        case '"': case '\\': case '/':
            if (jbuf_put(&b, (char)c) != 0) goto nomem;
            break;
        case 'b': if (jbuf_put(&b, '\b') != 0) goto nomem; break;
        case 'f': if (jbuf_put(&b, '\f') != 0) goto nomem; break;
        case 'n': if (jbuf_put(&b, '\n') != 0) goto nomem; break;
        case 'r': if (jbuf_put(&b, '\r') != 0) goto nomem; break;
        case 't': if (jbuf_put(&b, '\t') != 0) goto nomem; break;
        case 'u': {
            unsigned cp, lo;
            size_t at = p->pos - 2;
            int k;
            char u[4];
            if (jhex4(p, &cp) != 0) {
                free(b.b);
                return -1;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(b.b);
                return jfail(p, at, "\\u%04X is a lone low surrogate", cp);
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (p->pos + 1 >= p->len || p->s[p->pos] != '\\' ||
                    p->s[p->pos + 1] != 'u') {
                    free(b.b);
                    return jfail(p, at, "\\u%04X (a high surrogate) must be "
                                 "followed by a \\u low surrogate", cp);
                }
                p->pos += 2;
                if (jhex4(p, &lo) != 0) {
                    free(b.b);
                    return -1;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(b.b);
                    return jfail(p, at, "\\u%04X\\u%04X is not a surrogate "
                                 "pair", cp, lo);
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) {
                free(b.b);
                return jfail(p, at, "\\u0000 inside a string is not "
                             "supported");
            }
            /* UTF-8 */
            if (cp < 0x80) {
                u[0] = (char)cp;
                k = 1;
            } else if (cp < 0x800) {
                u[0] = (char)(0xC0 | (cp >> 6));
                u[1] = (char)(0x80 | (cp & 0x3F));
                k = 2;
            } else if (cp < 0x10000) {
                u[0] = (char)(0xE0 | (cp >> 12));
                u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                u[2] = (char)(0x80 | (cp & 0x3F));
                k = 3;
            } else {
                u[0] = (char)(0xF0 | (cp >> 18));
                u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                u[3] = (char)(0x80 | (cp & 0x3F));
                k = 4;
            }
            {
                int i;
                for (i = 0; i < k; i++)
                    if (jbuf_put(&b, u[i]) != 0) goto nomem;
            }
            break;
        }
        default:
            free(b.b);
            return jfail(p, p->pos - 2, "unknown escape in a string (use "
                         "\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
        }
    }
nomem:
    free(b.b);
    return jnomem(p, start);
}

static int jdigits(jparser *p) {
    size_t at = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
        p->pos++;
    return p->pos > at;
}

static int jnumber(jparser *p, jv *v) {
    size_t start = p->pos, n;
    if (p->s[p->pos] == '-') p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '0') p->pos++;
    else if (!jdigits(p))
        return jfail(p, start, "malformed number (expected a digit after "
                     "'-')");
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        if (!jdigits(p))
            return jfail(p, start, "malformed number (expected a digit after "
                         "'.')");
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (!jdigits(p))
            return jfail(p, start, "malformed number (expected a digit in "
                         "the exponent)");
    }
    n = p->pos - start;
    if (!(v->text = (char *)malloc(n + 1)))
        return jnomem(p, start);
    memcpy(v->text, p->s + start, n);
    v->text[n] = '\0';
    v->type = JV_NUMBER;
    return 0;
}

static int jvalue(jparser *p, jv *v);

/* Makes room for one more member and returns it, zeroed. */
static jv *jgrow(jparser *p, jv *v, size_t *cap, int with_key) {
    if (v->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        jv *ni = (jv *)realloc(v->item, nc * sizeof *ni);
        if (!ni) {
            jnomem(p, p->pos);
            return NULL;
        }
        v->item = ni;
        if (with_key) {
            char **nk = (char **)realloc(v->key, nc * sizeof *nk);
            if (!nk) {
                jnomem(p, p->pos);
                return NULL;
            }
            v->key = nk;
        }
        *cap = nc;
    }
    memset(&v->item[v->n], 0, sizeof v->item[0]);
    if (with_key) v->key[v->n] = NULL;
    return &v->item[v->n++];
}

static int jarray(jparser *p, jv *v) {
    size_t cap = 0;
    char w[16];
    v->type = JV_ARRAY;
    p->pos++;
    jskip(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return 0;
    }
    for (;;) {
        jv *item = jgrow(p, v, &cap, 0);
        if (!item || jvalue(p, item) != 0) return -1;
        jskip(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return 0;
        }
        return jfail(p, p->pos, "expected ',' or ']' in an array, found %s",
                     jwhat(p, w, sizeof w));
    }
}

/* The keys of one object seen so far, as indices into v->key: open
   addressing, at most half full.  Comparing each key with every earlier
   one made an object of n keys cost n^2 / 2 strcmp calls (50,000 keys,
   600 KB: 5.7 s). */
typedef struct jkeys {
    size_t *slot; /* index + 1; 0: empty */
    size_t cap;
} jkeys;

static size_t jkey_hash(const char *k) {
    size_t h = 5381;
    while (*k) h = h * 33 + (unsigned char)*k++;
    return h;
}

/* The slot of key k among v's keys: where it is, or the empty slot where
   it would go. */
static size_t jkeys_find(const jkeys *t, const jv *v, const char *k) {
    size_t i = jkey_hash(k) & (t->cap - 1);
    while (t->slot[i] && strcmp(v->key[t->slot[i] - 1], k) != 0)
        i = (i + 1) & (t->cap - 1);
    return i;
}

/* Room for v->n + 1 keys; -1 when out of memory. */
static int jkeys_room(jkeys *t, const jv *v) {
    size_t nc = t->cap ? t->cap : 16, i;
    size_t *ns;
    if (2 * (v->n + 1) <= t->cap) return 0;
    while (2 * (v->n + 1) > nc) nc *= 2;
    if (!(ns = (size_t *)calloc(nc, sizeof *ns))) return -1;
    free(t->slot);
    t->slot = ns;
    t->cap = nc;
    for (i = 0; i < v->n; i++) t->slot[jkeys_find(t, v, v->key[i])] = i + 1;
    return 0;
}

static int jobject_members(jparser *p, jv *v, jkeys *keys) {
    size_t cap = 0, at, slot;
    char w[16];
    for (;;) {
        char *key = NULL;
        jv *item;
        jskip(p);
        at = p->pos;
        if (p->pos >= p->len || p->s[p->pos] != '"')
            return jfail(p, p->pos, "expected a string key in an object, "
                         "found %s", jwhat(p, w, sizeof w));
        if (jstring(p, &key) != 0) return -1;
        if (jkeys_room(keys, v) != 0) {
            free(key);
            return jnomem(p, at);
        }
        if (keys->slot[slot = jkeys_find(keys, v, key)]) {
            jfail(p, at, "key \"%.60s\" appears twice in one object", key);
            free(key);
            return -1;
        }
        if (!(item = jgrow(p, v, &cap, 1))) {
            free(key);
            return -1;
        }
        v->key[v->n - 1] = key;
        keys->slot[slot] = v->n;
        jskip(p);
        if (p->pos >= p->len || p->s[p->pos] != ':')
            return jfail(p, p->pos, "expected ':' after a key, found %s",
                         jwhat(p, w, sizeof w));
        p->pos++;
        if (jvalue(p, item) != 0) return -1;
        jskip(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return 0;
        }
        return jfail(p, p->pos, "expected ',' or '}' in an object, found %s",
                     jwhat(p, w, sizeof w));
    }
}

static int jobject(jparser *p, jv *v) {
    jkeys keys = {NULL, 0};
    int rc;
    v->type = JV_OBJECT;
    p->pos++;
    jskip(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return 0;
    }
    rc = jobject_members(p, v, &keys);
    free(keys.slot);
    return rc;
}

static int jliteral(jparser *p, jv *v, const char *word, jv_type type) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return jfail(p, p->pos, "unexpected %.*s (a value is an object, "
                     "array, string, number, true, false or null)",
                     (int)(p->len - p->pos < 12 ? p->len - p->pos : 12),
                     p->s + p->pos);
    p->pos += n;
    v->type = type;
    return 0;
}

static int jvalue(jparser *p, jv *v) {
    char w[16];
    int rc;
    jskip(p);
    v->pos = p->pos;
    if (p->pos >= p->len)
        return jfail(p, p->pos, "unexpected end of the input, expected a "
                     "value");
    if (++p->depth > JSON_MAX_DEPTH)
        return jfail(p, p->pos, "nested deeper than %d levels",
                     JSON_MAX_DEPTH);
    switch (p->s[p->pos]) {
    case '{': rc = jobject(p, v); break;
    case '[': rc = jarray(p, v); break;
    case '"':
        v->type = JV_STRING;
        rc = jstring(p, &v->text);
        break;
    case 't': rc = jliteral(p, v, "true", JV_TRUE); break;
    case 'f': rc = jliteral(p, v, "false", JV_FALSE); break;
    case 'n': rc = jliteral(p, v, "null", JV_NULL); break;
    default:
        if (p->s[p->pos] == '-' ||
            (p->s[p->pos] >= '0' && p->s[p->pos] <= '9'))
            rc = jnumber(p, v);
        else
            rc = jfail(p, p->pos, "unexpected %s, expected a value",
                       jwhat(p, w, sizeof w));
    }
    p->depth--;
    return rc;
}

/* Parses the whole text into *root.  On a fault writes "line L, column C:
   what" to msg and returns -1 (root is then empty), -2 when the fault is
   running out of memory. */
static int json_parse(const char *text, size_t len, jv *root, char *msg,
                      size_t cap) {
    jparser p;
    memset(&p, 0, sizeof p);
    memset(root, 0, sizeof *root);
    p.s = text;
    p.len = len;
    if (jvalue(&p, root) == 0) {
        jskip(&p);
        if (p.pos < p.len)
            jfail(&p, p.pos, "unexpected text after the JSON value");
    }
    if (p.msg[0]) {
        size_t i, line = 1, col = 1;
        for (i = 0; i < p.err_pos && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        snprintf(msg, cap, "line %lu, column %lu: %s", (unsigned long)line,
                 (unsigned long)col, p.msg);
        jv_free(root);
        return p.nomem ? -2 : -1;
    }
    return 0;
}

static const jv *jv_get(const jv *obj, const char *key) {
    size_t i;
    if (obj->type != JV_OBJECT) return NULL;
    for (i = 0; i < obj->n; i++)
        if (strcmp(obj->key[i], key) == 0) return &obj->item[i];
    return NULL;
}

/* Whether a JSON number literal with a fraction or an exponent is a
   whole number, read from its digits (a double would round 3.99...9 to
   4): the fraction's digits that are not trailing zeros must be moved
   left of the point by the exponent, or else all the digits be zeros. */
static int json_literal_whole(const char *text) {
    const char *p = text, *frac;
    long frac_digits = 0, exponent = 0, int_zeros = 0;
    int any_nonzero = 0;
    if (*p == '-') p++;
    for (; *p >= '0' && *p <= '9'; p++) { /* the integer part's last zeros */
        any_nonzero |= *p != '0';
        int_zeros = *p == '0' ? int_zeros + 1 : 0;
    }
    if (*p == '.') /* up to the fraction's last non-zero digit */
        for (frac = ++p; *p >= '0' && *p <= '9'; p++)
            if (*p != '0') {
                any_nonzero = 1;
                frac_digits = (long)(p - frac) + 1;
            }
    if (*p == 'e' || *p == 'E') {
        exponent = strtol(p + 1, NULL, 10); /* saturates at LONG_MIN/MAX */
        if (exponent < -100000) exponent = -100000;
    }
    if (!any_nonzero) return 1;
    if (frac_digits > 0) return exponent >= frac_digits;
    return exponent >= 0 || -exponent <= int_zeros;
}

/* A whole number that fits int64.  JSON does not tell 6 from 6.0 (a
   Python float prints so), so a fraction or exponent is taken when the
   literal is a whole number below 2^53 in size, where a double holds it
   exactly (and strtod, correctly rounded, gives it). */
static int jv_int64(const jv *v, int64_t *out) {
    const char *q;
    char *end;
    long long x;
    if (v->type != JV_NUMBER) return -1;
    for (q = v->text; *q; q++)
        if (*q == '.' || *q == 'e' || *q == 'E') {
            double d = strtod(v->text, &end);
            if (*end || !json_literal_whole(v->text) ||
                !(fabs(d) < 9007199254740992.0))
                return -1;
            *out = (int64_t)d;
            return 0;
        }
    errno = 0;
    x = strtoll(v->text, &end, 10);
    if (errno != 0 || *end) return -1;
    *out = (int64_t)x;
    return 0;
}

static const char *jv_type_name(jv_type t) {
    static const char *const names[] = {"null",   "false", "true",  "a number",
                                        "a string", "an array", "an object"};
    return names[t];
}

/* ----------------------------------------------------------------- files */

/* Reads a whole file into a NUL-terminated buffer (1 GiB at most). */
static int read_text_file(const char *option, const char *path, char **text,
                          size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    *text = NULL;
    *len = 0;
    if (!f) /* (a file the system had no memory to open is not bad input) */
        return fail(errno == ENOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT,
                    "%s %s: cannot open: %s", option, path, strerror(errno));
    for (;;) {
        size_t got;
        if (cap - n < 2) {
            size_t nc = cap ? 2 * cap : 65536;
            char *nb;
            if (nc > ((size_t)1 << 30)) {
                free(buf);
                fclose(f);
                return fail(EXIT_BAD_INPUT, "%s %s: larger than 1 GiB",
                            option, path);
            }
            if (!(nb = (char *)realloc(buf, nc))) {
                free(buf);
                fclose(f);
                return fail(EXIT_INTERNAL, "%s %s: out of memory", option,
                            path);
            }
            buf = nb;
            cap = nc;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return fail(EXIT_BAD_INPUT, "%s %s: cannot read", option, path);
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* ---------------------------------------------------------------- models */

/* --model SPEC / --model-file FILE, shared by every command that plans. */
typedef struct model_args {
    const char *spec, *file;
} model_args;

static const char model_options_help[] =
    "  --model SPEC        a built-in model, name:key=value,... (see 'ktile "
    "zoo')\n"
    "  --model-file FILE   a model file (README.md \"Model files and TDL\");"
    " with a\n"
    "                      `loss` line the backward pass and the weight "
    "updates\n"
    "                      are generated, without one it is used as written\n";

static int load_model(const char *cmd, const model_args *a, kt_graph **g) {
    kt_error err;
    *g = NULL;
    if (a->spec && a->file)
        return fail(EXIT_BAD_INPUT, "%s: give --model or --model-file, not "
                    "both", cmd);
    if (!a->spec && !a->file)
        return fail(EXIT_BAD_INPUT, "%s: missing --model SPEC or --model-file "
                    "FILE (see 'ktile help %s')", cmd, cmd);
    if (a->spec) {
        kt_graph *m = NULL;
        if (kt_zoo_build(a->spec, &m, &err) != KT_OK) {
            char what[160];
            snprintf(what, sizeof what, "--model '%.100s'", a->spec);
            return fail_kt(what, &err);
        }
        if (!m) return fail(EXIT_INTERNAL, "--model '%s': no graph", a->spec);
        *g = m;
        return 0;
    }
    if (kt_graph_load_file(g, a->file, &err) != KT_OK) {
        *g = NULL;
        return fail_kt(NULL, &err); /* the message names the file */
    }
    /* DESIGN.md "Graph and operator descriptions": a `loss` line asks for
       the backward pass and the update; without it the file is planned
       exactly as written. */
    if (kt_graph_loss(*g) >= 0 && kt_graph_autodiff(*g, NULL, &err) != KT_OK) {
        kt_graph_destroy(*g);
        *g = NULL;
        return fail_kt(a->file, &err);
    }
    return 0;
}

/* What the plan reports call the model. */
static void model_label(const model_args *a, char *buf, size_t cap) {
    if (a->spec) snprintf(buf, cap, "%s", a->spec);
    else snprintf(buf, cap, "%s", a->file);
}

/* The topology options of plan, eval and sim: --topology VALUE is a
   spec (flat:..., nodes:...; every spec has a colon) or else a file;
   --topology-file FILE is always a file, so a path with a colon can be
   named.  At most one of the two. */
typedef struct topology_arg {
    const char *value; /* NULL: neither given                              */
    int file;          /* 1: read value as a topology file                 */
    const char *flag;  /* the option it came from, for messages            */
} topology_arg;

static int get_topology_arg(const char *cmd, const char *spec,
                            const char *file, topology_arg *a) {
    if (spec && file)
        return fail(EXIT_BAD_INPUT, "%s: give --topology or "
                    "--topology-file, not both", cmd);
    a->value = file ? file : spec;
    a->file = file != NULL || (spec && !strchr(spec, ':'));
    a->flag = file ? "--topology-file" : "--topology";
    return 0;
}

/* Reads the topology a names (a->value set); a file may name device
   kinds. */
static kt_status load_topology(const topology_arg *a, kt_topology *t,
                               kt_error *err) {
    if (!a->file) return kt_topology_parse(a->value, t, err);
    return kt_topology_load_file(a->value, t, err);
}

/* --objective bytes|time (NULL: bytes). */
static int parse_objective(const char *text, kt_objective *obj) {
    *obj = KT_OBJECTIVE_BYTES;
    if (!text || strcmp(text, "bytes") == 0) return 0;
    if (strcmp(text, "time") == 0) {
        *obj = KT_OBJECTIVE_TIME;
        return 0;
    }
    return fail(EXIT_BAD_INPUT, "--objective '%s': expected bytes or time",
                text);
}

/* --objective and the topology (plan, eval and sim).  *machine_set says
   whether *m (and *topo, when not NULL) hold a parsed topology.  Factors
   that are only the default for their device count (factors_given 0)
   are replaced by the topology's (kt_machine_factors: no cut straddles
   two levels). */
static int parse_time_options(const char *objective,
                              const topology_arg *topology, kt_factors *f,
                              int factors_given, kt_objective *obj,
                              kt_machine *m, kt_topology *topo,
                              int *machine_set) {
    kt_error err;
    *machine_set = 0;
    if (parse_objective(objective, obj) != 0) return EXIT_BAD_INPUT;
    if (topology->value) {
        /* spec or file, read as sim reads it: its levels, and the slowest
           of its device kinds (a spec has one) */
        kt_topology t;
        if (load_topology(topology, &t, &err) != KT_OK)
            return fail_kt(NULL, &err); /* it names the spec or file */
        if (f && t.ndev != kt_factors_devices(f))
            return fail(EXIT_BAD_INPUT, "%s %s has %lld devices but the plan "
                        "is for %lld", topology->flag, topology->value,
                        (long long)t.ndev, (long long)kt_factors_devices(f));
        *m = kt_topology_machine(&t);
        if (topo) *topo = t;
        *machine_set = 1;
        if (f && !factors_given &&
            kt_machine_factors(m, t.ndev, f, &err) != KT_OK)
            return fail_kt("--devices", &err);
    }
    return 0;
}

/* ---------------------------------------------------------- plan reports */

/* 1536 -> "1.50 KiB": powers of 1024, like the K/M/G of sizes. */
static void format_bytes(int64_t b, char *buf, size_t cap) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                       "PiB", "EiB"};
    double v = (double)b;
    int u = 0;
    while ((v >= 1024 || v <= -1024) && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, cap, "%lld B", (long long)b);
    else if (v >= 100) snprintf(buf, cap, "%.0f %s", v, unit[u]);
    else if (v >= 10) snprintf(buf, cap, "%.1f %s", v, unit[u]);
    else snprintf(buf, cap, "%.2f %s", v, unit[u]);
}

static void format_seconds(double s, char *buf, size_t cap) {
    if (!isfinite(s)) snprintf(buf, cap, "?");
    else if (s >= 1 || s == 0) snprintf(buf, cap, "%.4g s", s);
    else if (s >= 1e-3) snprintf(buf, cap, "%.4g ms", s * 1e3);
    else if (s >= 1e-6) snprintf(buf, cap, "%.4g us", s * 1e6);
    else snprintf(buf, cap, "%.4g ns", s * 1e9);
}

static const char *kind_name(kt_tensor_kind k) {
    switch (k) {
    case KT_INPUT: return "input";
    case KT_WEIGHT: return "weight";
    case KT_ACTIVATION: return "activation";
    case KT_GRADIENT: return "gradient";
    case KT_OPTSTATE: return "state";
    }
    return "?";
}

/* What a plan-shaped result prints besides the plan itself. */
typedef struct plan_report {
    const char *cmd;       /* "plan" or "eval"                          */
    const char *model;     /* the spec or the model file                 */
    const char *strategy;  /* NULL for a given plan                      */
    const char *plan_file; /* eval: the --plan file it was given          */
    kt_objective objective;
    const char *topology;  /* NULL: kt_machine_default()                 */
    int show_time;         /* --objective time or --topology: step time  */
    int simulated;         /* mcmc: simulated_seconds holds the step the
                              simulator gave the plan (what mcmc
                              minimised), beside the modelled one         */
    double simulated_seconds;
    const char *profile;   /* mcmc --profile: the file of compute times  */
    const char *start;     /* mcmc: what the first chain started from    */
    int64_t tried;         /* --strategy mcmc: proposals tried and       */
    int64_t accepted;      /*   accepted; -1 for the other searches      */
    int chains;            /*   and chains run                            */
} plan_report;

/* DESIGN.md "The ktile command line": the keys of `plan --json`, in this
   order; "step_seconds" (always kt_plan_step_seconds' model, so that a
   plan and its eval agree) follows "memory_bytes" when time is asked
   for, and MCMC adds "simulated_step_seconds" (what it minimised),
   "proposals_tried", "proposals_accepted" and "chains" (its chains can
   stall before the budget ends, and a budget can end before the last
   chain). */
static void print_plan_json(FILE *out, const kt_graph *g, const kt_plan *p,
                            const plan_report *r) {
    int i, t, o, d;
    fprintf(out, "{\"devices\": %lld, \"factors\": [",
            (long long)kt_factors_devices(&p->f));
    for (i = 0; i < p->f.count; i++)
        fprintf(out, "%s%d", i ? ", " : "", p->f.k[i]);
    fprintf(out, "], \"total_bytes\": %lld, \"cut_bytes\": [",
            (long long)p->total_bytes);
    for (i = 0; i < p->f.count; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)p->cut_bytes[i]);
    fputs("], \"search_seconds\": ", out);
    json_double(out, p->search_seconds);
    fprintf(out, ", \"memory_bytes\": %lld", (long long)p->memory_bytes);
    if (r->show_time) {
        fputs(", \"step_seconds\": ", out);
        json_double(out, p->step_seconds);
    }
    if (r->simulated) {
        fputs(", \"simulated_step_seconds\": ", out);
        json_double(out, r->simulated_seconds);
    }
    if (r->tried >= 0)
        fprintf(out, ", \"proposals_tried\": %lld, \"proposals_accepted\": "
                "%lld, \"chains\": %d", (long long)r->tried,
                (long long)r->accepted, r->chains);
    fputs(", \"tensors\": [", out);
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        char tiling[8 * KT_MAX_CUTS + 8];
        kt_tiling_format(&p->tiling[t], tiling, sizeof tiling);
        fputs(t ? ", {\"name\": " : "{\"name\": ", out);
        json_string(out, x->name);
        fputs(", \"shape\": [", out);
        for (d = 0; d < x->rank; d++)
            fprintf(out, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
        fputs("], \"tiling\": ", out);
        json_string(out, tiling);
        fprintf(out, ", \"bytes_per_device\": %lld}",
                (long long)kt_plan_tensor_bytes(g, p, t));
    }
    fputs("], \"ops\": [", out);
    for (o = 0; o < kt_graph_op_count(g); o++) {
        char split[KT_MAX_CUTS * (KT_NAME_MAX + 1) + 2];
        kt_plan_format_split(g, p, o, split, sizeof split);
        fputs(o ? ", {\"name\": " : "{\"name\": ", out);
        json_string(out, kt_graph_op(g, o)->name);
        fputs(", \"strategy\": ", out);
        json_string(out, split);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

static void print_plan_text(FILE *out, const kt_graph *g, const kt_plan *p,
                            const plan_report *r) {
    char b1[64], b2[64], fa[KT_MAX_CUTS * 12];
    int64_t ndev = kt_factors_devices(&p->f);
    int nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g);
    int i, t, o, wname = 8, wshape = 5, wtiling = 6;

    format_factors(&p->f, fa, sizeof fa);
    fprintf(out, "model     %s (%d tensors, %d operators)\n", r->model, nt,
            no);
    if (r->strategy && r->simulated)
        /* MCMC prices every plan by simulation; the objective only
           chooses the DP plan that --start dp refines */
        fprintf(out, "strategy  %s, objective simulated time, from %s\n",
                r->strategy, r->start);
    else if (r->strategy)
        fprintf(out, "strategy  %s, objective %s\n", r->strategy,
                r->objective == KT_OBJECTIVE_TIME ? "time" : "bytes");
    else
        fprintf(out, "plan      given (%s)\n", r->plan_file);
    fprintf(out, "devices   %lld (factors %s)\n", (long long)ndev, fa);
    format_bytes(p->total_bytes, b1, sizeof b1);
    fprintf(out, "total     %s moved per step (%lld bytes)\n", b1,
            (long long)p->total_bytes);
    for (i = 0; i < p->f.count; i++) {
        format_bytes(p->cut_bytes[i], b1, sizeof b1);
        fprintf(out, "  cut %-2d  %-10s (factor %d, %lld bytes)\n", i + 1, b1,
                p->f.k[i], (long long)p->cut_bytes[i]);
    }
    if (r->strategy) {
        format_seconds(p->search_seconds, b1, sizeof b1);
        if (r->tried >= 0)
            fprintf(out, "search    %s (%lld proposals tried, %lld "
                    "accepted, %d chain%s)\n", b1, (long long)r->tried,
                    (long long)r->accepted, r->chains,
                    r->chains == 1 ? "" : "s");
        else
            fprintf(out, "search    %s\n", b1);
    }
    format_bytes(p->memory_bytes, b1, sizeof b1);
    fprintf(out, "memory    %s per device (each tensor's fullest device, "
            "summed)\n", b1);
    if (r->show_time) {
        format_seconds(p->step_seconds, b1, sizeof b1);
        fprintf(out, "step      %s modelled on %s\n", b1,
                r->topology ? r->topology : "the default machine (450 GB/s "
                                            "links)");
    }
    if (r->simulated) {
        format_seconds(r->simulated_seconds, b1, sizeof b1);
        fprintf(out, "          %s simulated there (what mcmc minimised)\n",
                b1);
        if (r->profile) /* the modelled step above is the roofline's */
            fprintf(out, "          compute times from the profile %s\n",
                    r->profile);
    }

    for (t = 0; t < nt; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        int n = (int)strlen(x->name);
        if (n > wname) wname = n;
        format_shape(x->rank, x->shape, b2, sizeof b2);
        if ((n = (int)strlen(b2)) > wshape) wshape = n;
        if ((n = kt_tiling_format(&p->tiling[t], NULL, 0)) > wtiling)
            wtiling = n;
    }
    for (o = 0; o < no; o++) {
        int n = (int)strlen(kt_graph_op(g, o)->name);
        if (n > wname) wname = n;
    }
    fprintf(out, "\n%-*s  %-10s  %-*s  %-*s  %s\n", wname, "tensor", "kind",
            wshape, "shape", wtiling, "tiling", "bytes/device");
    for (t = 0; t < nt; t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        char tiling[8 * KT_MAX_CUTS + 8];
        int64_t bytes = kt_plan_tensor_bytes(g, p, t);
        format_shape(x->rank, x->shape, b2, sizeof b2);
        if (x->rank == 0) snprintf(b2, sizeof b2, "scalar");
        kt_tiling_format(&p->tiling[t], tiling, sizeof tiling);
        format_bytes(bytes, b1, sizeof b1);
        fprintf(out, "%-*s  %-10s  %-*s  %-*s  %lld (%s)\n", wname, x->name,
                kind_name(x->kind), wshape, b2, wtiling, tiling,
                (long long)bytes, b1);
    }
    fprintf(out, "\n%-*s  %s\n", wname, "operator", "strategy (variable "
            "split at each cut; * computes the cut's share redundantly)");
    for (o = 0; o < no; o++) {
        char split[KT_MAX_CUTS * (KT_NAME_MAX + 1) + 2];
        kt_plan_format_split(g, p, o, split, sizeof split);
        fprintf(out, "%-*s  %s\n", wname, kt_graph_op(g, o)->name, split);
    }
}

/* ------------------------------------------------------------------- svg */

/* Tofu Figure 11: every input, weight and activation drawn as its grid of
   tiles, each tile coloured by the device that holds it.  Gradients and
   optimizer state are left out: they would double the picture and a
   gradient is usually tiled like its tensor.

   Each tensor is one 2-D box with dimension 0 running down and the other
   dimensions across.  For rank > 2, dimensions 1..r-1 are folded into the
   horizontal axis in tile order, dimension 1 major: a column is one
   combination of tiles of those dimensions, as wide as its share of their
   elements, so every tile is exactly one rectangle whatever the rank.  A
   rank-1 tensor is one row, a scalar one cell.  Box proportions follow
   the square root of the extents' ratio, clamped to 1:3, so that thin
   tensors keep room for their tiles.

   A tile held by several devices (an R cut) has the colour of the lowest
   of them, a hatch, and the label "xN" for N copies; its <title> lists
   the devices.  Colours step around the hue circle by the golden angle,
   so neighbouring devices differ clearly for up to ~64 devices. */

#define SVG_MAX_DEVICES 4096

/* Fails (reported) past the devices a drawing shows: asked as soon as the
   device count is known, before a search that could take a while. */
static int svg_check_devices(int64_t ndev) {
    if (ndev <= SVG_MAX_DEVICES) return 0;
    return fail(EXIT_BAD_INPUT, "--svg: a drawing shows at most %d devices, "
                "the plan has %lld", SVG_MAX_DEVICES, (long long)ndev);
}
#define SVG_COLS 6
#define SVG_MARGIN 20
#define SVG_PANEL_W 200
#define SVG_PANEL_H 200
#define SVG_BOX_W 176.0
#define SVG_BOX_H 120.0
#define SVG_LEGEND_PER_ROW 16
#define SVG_LEGEND_MAX 256

/* XML character data / attribute value; bytes XML cannot hold and
   non-ASCII bytes (which may not be UTF-8) become '?'. */
static void svg_text(FILE *out, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default: fputc(c < 0x20 || c >= 0x7f ? '?' : (int)c, out);
        }
    }
}

static void device_colour(int64_t d, char *buf, size_t cap) {
    double h = fmod((double)d * 137.50776, 360.0) / 60.0;
    double s = 0.65, l = d % 2 ? 0.72 : 0.55;
    double c = (1 - fabs(2 * l - 1)) * s;
    double x = c * (1 - fabs(fmod(h, 2.0) - 1)), m = l - c / 2;
    double rgb[3] = {0, 0, 0};
    int sector = (int)h, i;
    unsigned v[3];
    switch (sector) {
    case 0: rgb[0] = c; rgb[1] = x; break;
    case 1: rgb[0] = x; rgb[1] = c; break;
    case 2: rgb[1] = c; rgb[2] = x; break;
    case 3: rgb[1] = x; rgb[2] = c; break;
    case 4: rgb[0] = x; rgb[2] = c; break;
    default: rgb[0] = c; rgb[2] = x; break;
    }
    for (i = 0; i < 3; i++) {
        double q = (rgb[i] + m) * 255 + 0.5;
        v[i] = q < 0 ? 0 : q > 255 ? 255 : (unsigned)q;
    }
    snprintf(buf, cap, "#%02x%02x%02x", v[0], v[1], v[2]);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int svg_drawn(const kt_tensor *x) {
    return x->kind == KT_INPUT || x->kind == KT_WEIGHT ||
           x->kind == KT_ACTIVATION;
}

typedef struct svg_scratch {
    kt_box *box;      /* ndev: the region each device holds          */
    int64_t *lo;      /* KT_MAX_DIMS * ndev: tile starts per dim     */
    int64_t *head;    /* ndev: first device of each tile, -1: none   */
    int64_t *next;    /* ndev: next device holding the same tile     */
    int64_t *count;   /* ndev: devices holding each tile             */
} svg_scratch;

static void svg_tensor(FILE *out, const kt_graph *g, const kt_plan *p, int t,
                       double px, double py, const svg_scratch *sc) {
    const kt_tensor *x = kt_graph_tensor(g, t);
    int64_t ndev = kt_factors_devices(&p->f), dev, nd[KT_MAX_DIMS], ntiles = 1;
    int d, c0 = x->rank >= 2 ? 1 : 0;
    double rows = x->rank >= 2 ? (double)x->shape[0] : 1, cols = 1, aspect;
    double bw, bh, bx = px, by = py + 20;
    char sh[KT_MAX_DIMS * 24], tiling[8 * KT_MAX_CUTS + 8], bytes[64];
    char name[40];
    int64_t i;

    for (d = c0; d < x->rank; d++) cols *= (double)x->shape[d];
    aspect = sqrt(rows / cols);
    if (aspect > 3) aspect = 3;
    if (aspect < 1.0 / 3) aspect = 1.0 / 3;
    if (SVG_BOX_W * aspect <= SVG_BOX_H) {
        bw = SVG_BOX_W;
        bh = SVG_BOX_W * aspect;
    } else {
        bh = SVG_BOX_H;
        bw = SVG_BOX_H / aspect;
    }

    /* Tiles: distinct block starts per dimension give the grid; a device's
       tile is its block index per dimension, mixed-radix. */
    for (dev = 0; dev < ndev; dev++)
        kt_tiling_device_box(&p->tiling[t], x->rank, x->shape, &p->f, dev,
                             &sc->box[dev], NULL);
    for (d = 0; d < x->rank; d++) {
        int64_t *lo = sc->lo + (size_t)d * (size_t)ndev, n = 0;
        for (dev = 0; dev < ndev; dev++) lo[dev] = sc->box[dev].r[d].lo;
        qsort(lo, (size_t)ndev, sizeof *lo, cmp_i64);
        for (dev = 0; dev < ndev; dev++)
            if (n == 0 || lo[dev] != lo[n - 1]) lo[n++] = lo[dev];
        nd[d] = n;
        ntiles *= n; /* <= ndev: a tile grid has ndev / replicas tiles */
    }
    for (i = 0; i < ntiles && i < ndev; i++) {
        sc->head[i] = -1;
        sc->count[i] = 0;
    }
    for (dev = ndev - 1; dev >= 0; dev--) {
        int64_t idx = 0;
        for (d = 0; d < x->rank; d++) {
            const int64_t *lo = sc->lo + (size_t)d * (size_t)ndev;
            const int64_t *at = (const int64_t *)bsearch(
                &sc->box[dev].r[d].lo, lo, (size_t)nd[d], sizeof *lo,
                cmp_i64);
            idx = idx * nd[d] + (at ? at - lo : 0);
        }
        if (idx >= ndev) idx = ndev - 1; /* cannot happen; stay in bounds */
        sc->next[dev] = sc->head[idx];
        sc->head[idx] = dev;
        sc->count[idx]++;
    }

    /* name, box, tiles, captions */
    if (strlen(x->name) < sizeof name) {
        memcpy(name, x->name, strlen(x->name) + 1);
    } else {
        memcpy(name, x->name, sizeof name - 4);
        memcpy(name + sizeof name - 4, "...", 4);
    }
    fprintf(out, "<g><title>");
    svg_text(out, x->name);
    fprintf(out, "</title>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
            "font-weight=\"bold\">", px, py + 13);
    svg_text(out, name);
    fputs("</text>\n", out);
    for (i = 0; i < ntiles && i < ndev; i++) {
        const kt_box *b;
        double fx = 0, fw = 1, fy = 0, fh = 1, rx, ry, rw, rh;
        char col[8], label[48];
        int64_t dv, k;
        if (sc->head[i] < 0) continue;
        b = &sc->box[sc->head[i]];
        if (x->rank >= 2) {
            fy = (double)b->r[0].lo / (double)x->shape[0];
            fh = (double)(b->r[0].hi - b->r[0].lo) / (double)x->shape[0];
        }
        for (d = c0; d < x->rank; d++) {
            fx += fw * (double)b->r[d].lo / (double)x->shape[d];
            fw *= (double)(b->r[d].hi - b->r[d].lo) / (double)x->shape[d];
        }
        rx = bx + fx * bw;
        ry = by + fy * bh;
        rw = fw * bw;
        rh = fh * bh;
        device_colour(sc->head[i], col, sizeof col);
        fprintf(out, "<rect class=\"tile\" x=\"%.2f\" y=\"%.2f\" "
                "width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"#ffffff\" "
                "stroke-width=\"0.6\"><title>", rx, ry, rw, rh, col);
        svg_text(out, x->name);
        for (d = 0; d < x->rank; d++)
            fprintf(out, "%s%lld:%lld", d ? ", " : " [",
                    (long long)b->r[d].lo, (long long)b->r[d].hi);
        fputs(x->rank ? "] on device" : " on device", out);
        if (sc->count[i] > 1) fputc('s', out);
        for (dv = sc->head[i], k = 0; dv >= 0 && k < 16;
             dv = sc->next[dv], k++)
            fprintf(out, "%s%lld", k ? ", " : " ", (long long)dv);
        if (sc->count[i] > 16) fputs(", ...", out);
        fputs("</title></rect>\n", out);
        if (sc->count[i] > 1)
            fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                    "height=\"%.2f\" fill=\"url(#hatch)\"/>\n", rx, ry, rw,
                    rh);
        if (sc->count[i] > 1)
            snprintf(label, sizeof label, "d%lld x%lld",
                     (long long)sc->head[i], (long long)sc->count[i]);
        else
            snprintf(label, sizeof label, "d%lld", (long long)sc->head[i]);
        if (rw < 5.6 * (double)strlen(label) + 3 && sc->count[i] > 1)
            snprintf(label, sizeof label, "x%lld", (long long)sc->count[i]);
        if (rw >= 5.6 * (double)strlen(label) + 3 && rh >= 11)
            fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"9\" "
                    "text-anchor=\"middle\">%s</text>\n", rx + rw / 2,
                    ry + rh / 2 + 3, label);
    }
    fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
            "fill=\"none\" stroke=\"#222222\" stroke-width=\"1\"/>\n", bx, by,
            bw, bh);
    format_shape(x->rank, x->shape, sh, sizeof sh);
    if (x->rank == 0) snprintf(sh, sizeof sh, "scalar");
    kt_tiling_format(&p->tiling[t], tiling, sizeof tiling);
    format_bytes(kt_plan_tensor_bytes(g, p, t), bytes, sizeof bytes);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s  %s</text>"
            "\n", px, by + bh + 14, sh, tiling);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
            "fill=\"#555555\">%s, %s/device</text>\n</g>\n", px,
            by + bh + 27, kind_name(x->kind), bytes);
}

static int write_svg(const char *path, const kt_graph *g, const kt_plan *p,
                     const plan_report *r) {
    int64_t ndev = kt_factors_devices(&p->f), d, shown;
    int nt = kt_graph_tensor_count(g), t, drawn = 0, legend_rows, rows;
    double width = 2 * SVG_MARGIN + SVG_COLS * SVG_PANEL_W, height, top;
    double entry_w = (width - 2 * SVG_MARGIN) / SVG_LEGEND_PER_ROW;
    char fa[KT_MAX_CUTS * 12], b1[64], b2[64];
    svg_scratch sc;
    FILE *out;
    int bad;

    if (svg_check_devices(ndev) != 0) return EXIT_BAD_INPUT;
    for (t = 0; t < nt; t++) drawn += svg_drawn(kt_graph_tensor(g, t));
    shown = ndev < SVG_LEGEND_MAX ? ndev : SVG_LEGEND_MAX;
    legend_rows = (int)((shown + SVG_LEGEND_PER_ROW - 1) / SVG_LEGEND_PER_ROW);
    rows = (drawn + SVG_COLS - 1) / SVG_COLS;
    top = 76 + legend_rows * 18 + (shown < ndev ? 18 : 0) + 12;
    height = top + rows * SVG_PANEL_H + SVG_MARGIN;

    memset(&sc, 0, sizeof sc);
    sc.box = (kt_box *)calloc((size_t)ndev, sizeof *sc.box);
    sc.lo = (int64_t *)calloc((size_t)ndev * KT_MAX_DIMS, sizeof *sc.lo);
    sc.head = (int64_t *)calloc((size_t)ndev, sizeof *sc.head);
    sc.next = (int64_t *)calloc((size_t)ndev, sizeof *sc.next);
    sc.count = (int64_t *)calloc((size_t)ndev, sizeof *sc.count);
    if (!sc.box || !sc.lo || !sc.head || !sc.next || !sc.count) {
        free(sc.box); free(sc.lo);
        free(sc.head); free(sc.next); free(sc.count);
        return fail(EXIT_INTERNAL, "--svg: out of memory");
    }
    if (!(out = fopen(path, "w"))) {
        int e = errno;
        free(sc.box); free(sc.lo);
        free(sc.head); free(sc.next); free(sc.count);
        return fail(EXIT_BAD_INPUT, "--svg %s: cannot write: %s", path,
                    strerror(e));
    }

    format_factors(&p->f, fa, sizeof fa);
    format_bytes(p->total_bytes, b1, sizeof b1);
    format_bytes(p->memory_bytes, b2, sizeof b2);
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>"
            "\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"Helvetica, Arial, sans-serif\">\n<title>ktile %s: ",
            width, height, width, height, r->cmd);
    svg_text(out, r->model);
    fprintf(out, " on %lld device%s</title>\n", (long long)ndev,
            ndev == 1 ? "" : "s");
    fputs("<defs><pattern id=\"hatch\" patternUnits=\"userSpaceOnUse\" "
          "width=\"6\" height=\"6\" patternTransform=\"rotate(45)\">"
          "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#000000\" "
          "stroke-opacity=\"0.35\" stroke-width=\"1.5\"/></pattern></defs>\n",
          out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n", width, height);
    fprintf(out, "<text x=\"%d\" y=\"28\" font-size=\"16\" "
            "font-weight=\"bold\">", SVG_MARGIN);
    svg_text(out, r->model);
    fprintf(out, ": %lld device%s, factors %s%s%s</text>\n", (long long)ndev,
            ndev == 1 ? "" : "s", fa, r->strategy ? ", strategy " : "",
            r->strategy ? r->strategy : "");
    fprintf(out, "<text x=\"%d\" y=\"48\" font-size=\"12\">%s moved per "
            "step, %s of tensors per device. Each tile has the colour of the "
            "device holding it; hatched tiles are held by several (xN: N "
            "copies).</text>\n", SVG_MARGIN, b1, b2);
    fprintf(out, "<text x=\"%d\" y=\"68\" font-size=\"12\" "
            "font-weight=\"bold\">devices</text>\n", SVG_MARGIN);
    for (d = 0; d < shown; d++) {
        char col[8];
        double lx = SVG_MARGIN + (double)(d % SVG_LEGEND_PER_ROW) * entry_w;
        double ly = 76 + (double)(d / SVG_LEGEND_PER_ROW) * 18;
        device_colour(d, col, sizeof col);
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
                "fill=\"%s\" stroke=\"#222222\" stroke-width=\"0.5\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">d%lld</text>\n",
                lx, ly, col, lx + 16, ly + 10, (long long)d);
    }
    if (shown < ndev)
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\">... and "
                "%lld more devices (colours by golden-angle hue steps)</text>"
                "\n", SVG_MARGIN, 76 + legend_rows * 18.0 + 10,
                (long long)(ndev - shown));
    for (t = 0, drawn = 0; t < nt; t++) {
        if (!svg_drawn(kt_graph_tensor(g, t))) continue;
        svg_tensor(out, g, p, t,
                   SVG_MARGIN + (double)(drawn % SVG_COLS) * SVG_PANEL_W,
                   top + (double)(drawn / SVG_COLS) * SVG_PANEL_H, &sc);
        drawn++;
    }
    fputs("</svg>\n", out);
    bad = ferror(out);
    if (fclose(out) != 0) bad = 1;
    free(sc.box); free(sc.lo);
    free(sc.head); free(sc.next); free(sc.count);
    if (bad) return fail(EXIT_INTERNAL, "--svg %s: write failed", path);
    return 0;
}

/* Writes the SVG when asked and prints the plan; the exit status. */
static int finish_plan(const kt_graph *g, const kt_plan *p,
                       const plan_report *r, const char *svg, int json) {
    int rc;
    if (svg && (rc = write_svg(svg, g, p, r)) != 0) return rc;
    if (json) print_plan_json(stdout, g, p, r);
    else print_plan_text(stdout, g, p, r);
    return stdout_written();
}

/* ------------------------------------------------------------ strategies */

/* --strategy names (DESIGN.md "Search") and the kt_strategy each runs.
   A search tiling.h does not offer yet is STRATEGY_MISSING and refused;
   when it lands, its enum value goes here and nothing else changes. */
#define STRATEGY_MISSING (-1)
/* FlexFlow's MCMC lives in sched.h (it prices plans by simulation). */
#define STRATEGY_MCMC (-3)

static const struct strategy_name {
    const char *name;
    int strategy;        /* a kt_strategy, or STRATEGY_MISSING */
    const char *about;
} strategies[] = {
    {"dp", KT_STRATEGY_DP, "level DP at every cut (SOYBEAN 4.2-4.3, Tofu 5)"},
    {"data", KT_STRATEGY_DATA, "data parallelism (SOYBEAN 4.1)"},
    {"model", KT_STRATEGY_MODEL, "model parallelism (SOYBEAN 4.1)"},
    {"greedy", KT_STRATEGY_GREEDY, "AllRow-greedy"},
    {"spartan", KT_STRATEGY_SPARTAN, "Spartan greedy tiling"},
    {"equalchop", KT_STRATEGY_EQUALCHOP, "equal chop of every tensor"},
    {"bruteforce", KT_STRATEGY_BRUTEFORCE,
     "every tiling at every cut (small graphs only)"},
    {"mcmc", STRATEGY_MCMC,
     "FlexFlow MCMC: random op or tensor moves priced by simulation on the "
     "topology (1000 proposals, seed 1); also reports the simulated step"},
};

static const int nstrategies =
    (int)(sizeof strategies / sizeof strategies[0]);

static void print_strategies(FILE *out) {
    int i;
    fputs("\nstrategies:\n", out);
    for (i = 0; i < nstrategies; i++)
        fprintf(out, "  %-11s %s%s\n", strategies[i].name,
                strategies[i].about,
                strategies[i].strategy == STRATEGY_MISSING
                    ? " (not implemented yet)" : "");
}

/* ------------------------------------------------------------------- zoo */

static const char zoo_usage[] =
    "usage: ktile zoo [--json]\n"
    "       ktile zoo --print SPEC [--json]\n"
    "\n"
    "Lists the built-in models, their parameters with defaults and what they\n"
    "are.  A spec is name:key=value,... (e.g. mlp:layers=5,hidden=300,\n"
    "batch=400); it is what --model takes.  The convolution models take\n"
    "image (pixels), width (the unit of their channel counts), classes\n"
    "and (alexnet, vgg16) fc, the hidden fully connected width, so a\n"
    "small copy runs on a CPU, e.g.\n"
    "  ktile verify --model alexnet:batch=8,image=39,width=2,fc=16,"
    "classes=10\n"
    "An image too small for the conv/pool stack is refused with the\n"
    "smallest that works.  Every model also takes infer=1 (no backward).\n"
    "\n"
    "  --print SPEC   print the model file text of a spec (what --model "
    "builds,\n"
    "                 before the backward pass is generated)\n"
    "  --json         {\"models\": [{\"name\", \"params\", \"about\"}]}; with "
    "--print\n"
    "                 {\"spec\", \"training\", \"text\"}\n";

static int cmd_zoo(int argc, char **argv) {
    enum { O_PRINT, O_JSON, O_N };
    cli_opt o[O_N] = {{"print", 1, NULL}, {"json", 0, NULL}};
    int rc, i, json, width = 4;
    rc = cli_parse("zoo", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        fputs(zoo_usage, stdout);
        return stdout_written();
    }
    if (rc != CLI_OK) return rc;
    json = o[O_JSON].value != NULL;
    if (o[O_PRINT].value) {
        char *text = NULL, what[160];
        int training = 0;
        size_t n;
        kt_error err;
        if (kt_zoo_text(o[O_PRINT].value, &text, &training, &err) != KT_OK) {
            snprintf(what, sizeof what, "--print '%.100s'", o[O_PRINT].value);
            return fail_kt(what, &err);
        }
        if (!text)
            return fail(EXIT_INTERNAL, "--print '%s': no text",
                        o[O_PRINT].value);
        if (json) {
            fputs("{\"spec\": ", stdout);
            json_string(stdout, o[O_PRINT].value);
            printf(", \"training\": %s, \"text\": ",
                   training ? "true" : "false");
            json_string(stdout, text);
            fputs("}\n", stdout);
        } else {
            fputs(text, stdout);
            n = strlen(text);
            if (n && text[n - 1] != '\n') fputc('\n', stdout);
        }
        KT_FREE(text);
    } else if (json) {
        fputs("{\"models\": [", stdout);
        for (i = 0; kt_zoo_name(i); i++) {
            const char *params = kt_zoo_params(i), *about = kt_zoo_about(i);
            fputs(i ? ", {\"name\": " : "{\"name\": ", stdout);
            json_string(stdout, kt_zoo_name(i));
            fputs(", \"params\": ", stdout);
            json_string(stdout, params ? params : "");
            fputs(", \"about\": ", stdout);
            json_string(stdout, about ? about : "");
            fputc('}', stdout);
        }
        fputs("]}\n", stdout);
    } else {
        for (i = 0; kt_zoo_name(i); i++)
            if ((int)strlen(kt_zoo_name(i)) > width)
                width = (int)strlen(kt_zoo_name(i));
        if (!kt_zoo_name(0)) puts("no built-in models in this build");
        else printf("%-*s  parameters (defaults)\n", width, "name");
        for (i = 0; kt_zoo_name(i); i++) {
            const char *params = kt_zoo_params(i), *about = kt_zoo_about(i);
            printf("%-*s  %s\n", width, kt_zoo_name(i),
                   params && *params ? params : "(none)");
            if (about && *about) printf("%-*s  %s\n", width, "", about);
        }
        if (kt_zoo_name(0))
            puts("\nuse as --model name:key=value,... e.g. --model "
                 "mlp:layers=5,hidden=300,batch=400");
    }
    return stdout_written();
}

/* ------------------------------------------------------------------ plan */

static const char plan_usage[] =
    "usage: ktile plan (--model SPEC | --model-file FILE)\n"
    "                  (--devices N [--factors K1,K2,...] | --factors "
    "K1,K2,...)\n"
    "                  [--strategy NAME] [--objective bytes|time]\n"
    "                  [--topology SPEC | --topology-file FILE] "
    "[--memory-cap SIZE]\n"
    "                  [--svg FILE] [--json]\n"
    "\n"
    "Searches a tiling of every tensor and a strategy for every operator on\n"
    "N devices and prints what the plan costs (DESIGN.md \"Search\").\n"
    "\n"
    "%s"
    "  --devices N         device count; the cut factors are its prime "
    "factors,\n"
    "                      largest first, unless --factors gives them; with\n"
    "                      --topology or --topology-file, each level's in "
    "turn,\n"
    "                      in the order listed (slowest first), so that no "
    "cut\n"
    "                      spans two levels: nodes:2x3 gives 2,3\n"
    "  --factors LIST      cut factors, cut 1 first: 4,2 (product = "
    "--devices)\n"
    "  --strategy NAME     the search (default dp; list below)\n"
    "  --objective OBJ     bytes (default): bytes moved per step;\n"
    "                      time: modelled step time on the topology\n"
    "                      (mcmc always searches the simulated step time)\n"
    "  --topology SPEC     flat:N:BW or nodes:MxG:INTRA_BW:INTER_BW, "
    "bandwidths\n"
    "                      in bytes/s with K, M, G, T (powers of 1000, "
    "either case)\n"
    "                      or bits/s with b or bit (400Gb, 400gbps, "
    "50GB/s);\n"
    "                      its device count must be N.\n"
    "                      Cut 1 goes on the slowest level.  Default: one "
    "level of\n"
    "                      450 GB/s links.  A value without ':' is a "
    "topology\n"
    "                      file (see 'ktile help sim'); with device kinds "
    "the\n"
    "                      time objective prices compute on the slowest "
    "kind.\n"
    "                      With --objective time or --topology (and with\n"
    "                      mcmc) the result includes step_seconds, the\n"
    "                      modelled step ('ktile eval' gives the same)\n"
    "  --topology-file F   a topology file, also one whose path has a ':'\n"
    "  --memory-cap SIZE   most tensor bytes per device (K, M, G: powers of "
    "1024);\n"
    "                      exit status 2 when no plan fits\n"
    "  --svg FILE          draw the tiles of every input, weight and "
    "activation,\n"
    "                      coloured by device (Tofu Figure 11)\n"
    "  --seconds S, --proposals N, --seed N, --beta B, --restarts N\n"
    "                      --strategy mcmc only: budget in CPU seconds or in\n"
    "                      proposals (both: whichever ends first; default\n"
    "                      1000 proposals), seed (default 1), Metropolis beta\n"
    "                      (default 40 times the op count: a proposal t%%\n"
    "                      slower is accepted with probability exp(-beta\n"
    "                      t/100)), chains (default 2: from data\n"
    "                      parallelism, then from random plans;\n"
    "                      each gets an equal share of the budget left and\n"
    "                      ends early when its best has not improved for the\n"
    "                      last half of its proposals, FlexFlow 6.2)\n"
    "  --start data|dp     --strategy mcmc: the first chain starts from data\n"
    "                      parallelism (default) or refines the level DP's plan\n"
    "                      (searched for --objective)\n"
    "  --profile FILE      --strategy mcmc: simulate with measured compute times\n"
    "                      (as 'ktile sim --profile'; sub-operators not listed\n"
    "                      keep the roofline)\n"
    "  --json              print one JSON object:\n"
    "      {\"devices\", \"factors\", \"total_bytes\", \"cut_bytes\", "
    "\"search_seconds\",\n"
    "       \"memory_bytes\", [\"step_seconds\",] [mcmc: "
    "\"simulated_step_seconds\",\n"
    "       \"proposals_tried\", \"proposals_accepted\", \"chains\",] "
    "\"tensors\":\n"
    "       [{\"name\", \"shape\", \"tiling\", \"bytes_per_device\"}], "
    "\"ops\": [{\"name\",\n"
    "       \"strategy\"}]}\n"
    "      memory_bytes sums each tensor's bytes on its fullest device; an "
    "op's\n"
    "      strategy names the variable split at each cut (\"i.j\"), \"*\" "
    "for a cut\n"
    "      it computes redundantly, \"-\" on one device\n"
    "\n"
    "example: ktile plan --model-file mlp.txt --devices 4 --json > "
    "plan.json\n";

static void plan_help(FILE *out) {
    fprintf(out, plan_usage, model_options_help);
    print_strategies(out);
}

/* --seconds S, --proposals N, --seed N, --beta B, --restarts N of
   --strategy mcmc.  Without --seconds and --proposals: 1000 proposals
   (a budget in proposals, unlike one in seconds, gives the same plan on
   every machine); seed 1. */
static int parse_mcmc_options(const char *seconds, const char *proposals,
                              const char *seed, const char *beta,
                              const char *restarts, kt_mcmc_options *mo) {
    int64_t v;
    memset(mo, 0, sizeof *mo);
    mo->seed = 1;
    if (seconds && parse_above_zero("seconds", seconds, 1e6,
                                    "a time budget in seconds",
                                    &mo->seconds) != 0)
        return EXIT_BAD_INPUT;
    if (proposals) {
        if (parse_int(proposals, 1, INT64_C(1) << 40, &v) != 0)
            return fail(EXIT_BAD_INPUT, "--proposals '%s': expected a count "
                        "of at least 1", proposals);
        mo->proposals = v;
    }
    if (!seconds && !proposals) mo->proposals = 1000;
    if (seed && parse_seed(seed, &mo->seed) != 0) return EXIT_BAD_INPUT;
    if (beta && parse_above_zero("beta", beta, 1e9, "a number", &mo->beta) != 0)
        return EXIT_BAD_INPUT;
    if (restarts) {
        if (parse_int(restarts, 1, 1000, &v) != 0)
            return fail(EXIT_BAD_INPUT, "--restarts '%s': expected 1 to 1000 "
                        "chains", restarts);
        mo->restarts = (int)v;
    }
    return 0;
}

/* What kt_plan_mcmc's first chain started from, in words: the level
   DP's plan given with --start dp (searched for --objective), else what
   the library reports -- data parallelism, or the DP plan by bytes where
   data parallelism does not apply (a batch smaller than the devices). */
static const char *mcmc_start_name(const kt_mcmc_result *r,
                                   kt_objective objective) {
    switch (r->first_start) {
    case KT_MCMC_FROM_START:
        return objective == KT_OBJECTIVE_TIME ? "the DP plan by time"
                                              : "the DP plan by bytes";
    case KT_MCMC_FROM_DATA: return "data parallelism";
    case KT_MCMC_FROM_DP: break;
    }
    return "the DP plan by bytes (data parallelism does not apply)";
}

/* plan --strategy mcmc (FlexFlow 6): the chains on `given` (the
   --topology one), else on flat:N:450G, whose spec is written into spec;
   the first from data parallelism or, with --start dp, from the level
   DP's plan for opt's objective; compute times from prof (read from
   mc[6], --profile) when not NULL, else the roofline.  mc[0..5] are the
   --seconds, --proposals, --seed, --beta, --restarts and --start
   options.  Fills r's mcmc fields and *machine with the topology's
   roofline. */
static int plan_by_mcmc(const kt_graph *g, const kt_factors *f,
                        kt_search_options *opt, const kt_topology *given,
                        const kt_profile *prof, const cli_opt *mc,
                        char *spec, size_t spec_size, kt_machine *machine,
                        kt_plan *p, plan_report *r) {
    const char *start = mc[5].value;
    kt_topology topo;
    kt_mcmc_options mo;
    kt_plan dp;
    kt_mcmc_result res;
    kt_error err;
    int rc;
    if (given) {
        topo = *given; /* read once, by parse_time_options */
    } else {
        snprintf(spec, spec_size, "flat:%lld:450G",
                 (long long)kt_factors_devices(f));
        if (kt_topology_parse(spec, &topo, &err) != KT_OK)
            return fail_kt("plan", &err);
    }
    if (prof) { /* measured compute times for the chains' simulations */
        if (kt_profile_check_kinds(prof, &topo, &err) != KT_OK)
            return fail_kt(mc[6].value, &err);
        topo.profile = prof;
    }
    if (start && strcmp(start, "data") != 0 && strcmp(start, "dp") != 0)
        return fail(EXIT_BAD_INPUT, "--start '%s': expected data or dp",
                    start);
    if ((rc = parse_mcmc_options(mc[0].value, mc[1].value, mc[2].value,
                                 mc[3].value, mc[4].value, &mo)) != 0)
        return rc;
    if (start && strcmp(start, "dp") == 0) {
        /* refine the level DP's plan (for the same objective) */
        *machine = kt_topology_machine(&topo);
        opt->strategy = KT_STRATEGY_DP;
        opt->machine = machine;
        if (kt_plan_search(g, f, opt, &dp, &err) != KT_OK)
            return fail_kt("plan", &err);
        mo.start = &dp;
    }
    rc = kt_plan_mcmc(g, f, &topo, &mo, p, &res, &err) != KT_OK;
    if (mo.start) kt_plan_free(&dp);
    if (rc) return fail_kt("plan", &err);
    *machine = kt_topology_machine(&topo);
    r->simulated = 1;
    r->simulated_seconds = res.step_seconds;
    r->start = mcmc_start_name(&res, opt->objective);
    r->tried = res.tried;
    r->accepted = res.accepted;
    r->chains = res.chains;
    return 0;
}

static int cmd_plan(int argc, char **argv) {
    enum {
        O_MODEL, O_MODEL_FILE, O_DEVICES, O_FACTORS, O_STRATEGY, O_OBJECTIVE,
        O_TOPOLOGY, O_TOPOLOGY_FILE, O_MEMCAP, O_SVG, O_JSON, O_SECONDS,
        O_PROPOSALS, O_SEED, O_BETA, O_RESTARTS, O_START, O_PROFILE, O_N
    }; /* mcmc's options, O_SECONDS to O_PROFILE in this order
          (plan_by_mcmc reads them) */
    cli_opt o[O_N] = {
        {"model", 1, NULL},     {"model-file", 1, NULL},
        {"devices", 1, NULL},   {"factors", 1, NULL},
        {"strategy", 1, NULL},  {"objective", 1, NULL},
        {"topology", 1, NULL},  {"topology-file", 1, NULL},
        {"memory-cap", 1, NULL},
        {"svg", 1, NULL},       {"json", 0, NULL},
        {"seconds", 1, NULL},   {"proposals", 1, NULL},
        {"seed", 1, NULL},      {"beta", 1, NULL},
        {"restarts", 1, NULL},  {"start", 1, NULL},
        {"profile", 1, NULL}};
    const char *sname;
    kt_profile prof;
    topology_arg ta;
    model_args ma;
    kt_search_options opt;
    kt_machine machine;
    kt_topology topology; /* the one --topology names, when given */
    kt_factors f;
    kt_graph *g = NULL;
    kt_plan p;
    kt_error err;
    plan_report r;
    char label[512], mc_spec[64]; /* mcmc's default topology */
    int rc, i, machine_set = 0, strategy = -2;
    int64_t cap = 0;

    rc = cli_parse("plan", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        plan_help(stdout);
        return stdout_written();
    }
    if (rc != CLI_OK) return rc;
    sname = o[O_STRATEGY].value ? o[O_STRATEGY].value : "dp";
    for (i = 0; i < nstrategies; i++)
        if (strcmp(strategies[i].name, sname) == 0)
            strategy = strategies[i].strategy;
    if (strategy == -2)
        return fail(EXIT_BAD_INPUT, "--strategy '%s': unknown (dp, data, "
                    "model, greedy, spartan, equalchop, bruteforce or mcmc)",
                    sname);
    if (strategy == STRATEGY_MISSING)
        return fail(EXIT_BAD_INPUT, "strategy %s is not implemented yet",
                    sname);
    for (i = O_SECONDS; i <= O_PROFILE; i++)
        if (o[i].value && strategy != STRATEGY_MCMC)
            return fail(EXIT_BAD_INPUT, "plan: --%s is an option of "
                        "--strategy mcmc", o[i].name);
    if (o[O_MEMCAP].value &&
        (parse_size(o[O_MEMCAP].value, INT64_MAX, &cap) != 0 || cap < 1))
        return fail(EXIT_BAD_INPUT, "--memory-cap '%s': expected a size of "
                    "at least 1 byte such as 512M or 16G", o[O_MEMCAP].value);
    if (!o[O_DEVICES].value && !o[O_FACTORS].value)
        return fail(EXIT_BAD_INPUT, "plan: missing --devices N (or --factors "
                    "K1,K2,...)");
    if ((rc = parse_factors(o[O_FACTORS].value, o[O_DEVICES].value, &f)) != 0)
        return rc;
    if (o[O_SVG].value && svg_check_devices(kt_factors_devices(&f)) != 0)
        return EXIT_BAD_INPUT;
    memset(&opt, 0, sizeof opt);
    if ((rc = get_topology_arg("plan", o[O_TOPOLOGY].value,
                               o[O_TOPOLOGY_FILE].value, &ta)) != 0 ||
        (rc = parse_time_options(o[O_OBJECTIVE].value, &ta, &f,
                                 o[O_FACTORS].value != NULL,
                                 &opt.objective, &machine, &topology,
                                 &machine_set)) != 0)
        return rc;
    ma.spec = o[O_MODEL].value;
    ma.file = o[O_MODEL_FILE].value;
    if ((rc = load_model("plan", &ma, &g)) != 0) return rc;

    opt.strategy = (kt_strategy)strategy;
    opt.machine = machine_set ? &machine : NULL;
    opt.memory_cap = cap;
    memset(&r, 0, sizeof r);
    r.tried = r.accepted = -1;
    if (strategy == STRATEGY_MCMC) {
        if (cap) {
            kt_graph_destroy(g);
            return fail(EXIT_BAD_INPUT, "plan: --memory-cap is not "
                        "supported by --strategy mcmc");
        }
        /* mcmc minimises simulated time; bytes can only choose the DP
           plan that --start dp refines, so without it they would be
           ignored */
        if (opt.objective == KT_OBJECTIVE_BYTES && o[O_OBJECTIVE].value &&
            (!o[O_START].value || strcmp(o[O_START].value, "data") == 0)) {
            kt_graph_destroy(g);
            return fail(EXIT_BAD_INPUT, "plan: --objective bytes would be "
                        "ignored: --strategy mcmc minimises simulated time, "
                        "and bytes only choose the DP plan that --start dp "
                        "refines");
        }
        memset(&prof, 0, sizeof prof);
        if (o[O_PROFILE].value &&
            kt_profile_load_file(g, o[O_PROFILE].value, &prof, &err) !=
                KT_OK) {
            kt_graph_destroy(g);
            return fail_kt(NULL, &err); /* the message names the file */
        }
        rc = plan_by_mcmc(g, &f, &opt, machine_set ? &topology : NULL,
                          o[O_PROFILE].value ? &prof : NULL, &o[O_SECONDS],
                          mc_spec, sizeof mc_spec, &machine, &p, &r);
        r.profile = o[O_PROFILE].value;
        kt_profile_free(&prof);
        if (rc != 0) {
            kt_graph_destroy(g);
            return rc;
        }
        /* step_seconds means one thing for every search and for eval:
           the model's, on the same machine; the simulated step that
           mcmc minimised is reported beside it */
        machine_set = 1;
    } else if (kt_plan_search(g, &f, &opt, &p, &err) != KT_OK) {
        kt_graph_destroy(g);
        return fail_kt("plan", &err);
    }
    p.step_seconds =
        kt_plan_step_seconds(g, &p, machine_set ? &machine : NULL);
    p.memory_bytes = kt_plan_memory(g, &p);

    model_label(&ma, label, sizeof label);
    r.cmd = "plan";
    r.model = label;
    r.strategy = sname;
    r.plan_file = NULL;
    r.objective = opt.objective;
    r.topology = strategy == STRATEGY_MCMC && !ta.value
                     ? mc_spec /* what it simulated on */
                     : ta.value;
    r.show_time = opt.objective == KT_OBJECTIVE_TIME || machine_set ||
                  strategy == STRATEGY_MCMC; /* mcmc always simulates */
    rc = finish_plan(g, &p, &r, o[O_SVG].value, o[O_JSON].value != NULL);
    kt_plan_free(&p);
    kt_graph_destroy(g);
    return rc;
}

/* ------------------------------------------------------------------ eval */

static const char eval_usage[] =
    "usage: ktile eval (--model SPEC | --model-file FILE) --plan PLAN.json\n"
    "                  [--devices N] [--factors K1,K2,...] "
    "[--objective bytes|time]\n"
    "                  [--topology SPEC | --topology-file FILE] [--svg "
    "FILE] [--json]\n"
    "\n"
    "Prices a given plan exactly (DESIGN.md \"Conversion cost\") and prints "
    "the\n"
    "same keys as 'ktile plan', with search_seconds 0.\n"
    "\n"
    "%s"
    "  --plan FILE         a plan in the form 'ktile plan --json' prints, "
    "possibly\n"
    "                      edited.  Read from it: \"factors\" (they define "
    "the cuts;\n"
    "                      \"devices\", when present, must be their "
    "product),\n"
    "                      \"tensors\": [{\"name\", \"tiling\"}] and "
    "\"ops\": [{\"name\",\n"
    "                      \"strategy\"}]; \"shape\", when present, must "
    "match the\n"
    "                      model; other keys are ignored.  Every tensor and "
    "every\n"
    "                      operator of the model must appear exactly once: "
    "an\n"
    "                      unknown, repeated or missing name is an error\n"
    "  --devices N         when given, must equal the plan's device count\n"
    "  --factors LIST      when given, must equal the plan's factors\n"
    "  --objective OBJ     time: also report step_seconds\n"
    "  --topology SPEC     as for plan; step_seconds on that machine\n"
    "  --topology-file F   as for plan\n"
    "  --svg FILE          draw the plan's tiles (see 'ktile help plan')\n"
    "  --json              print one JSON object (see 'ktile help plan')\n"
    "\n"
    "example: ktile plan --model-file m.txt --devices 4 --json > p.json\n"
    "         ktile eval --model-file m.txt --plan p.json --json\n";

static void eval_help(FILE *out) {
    fprintf(out, eval_usage, model_options_help);
}

/* Up to 8 names for a message, then a count. */
typedef struct name_list {
    char text[600];
    int count;
} name_list;

static void name_list_add(name_list *l, const char *name) {
    size_t n = strlen(l->text);
    if (l->count < 8)
        snprintf(l->text + n, sizeof l->text - n, "%s%.60s",
                 l->count ? ", " : "", name);
    else if (l->count == 8)
        snprintf(l->text + n, sizeof l->text - n, ", ...");
    l->count++;
}

/* The plan's factors from the file: "factors" (required) and "devices". */
static int plan_file_factors(const char *path, const jv *root, kt_factors *f) {
    const jv *fa = jv_get(root, "factors"), *dv = jv_get(root, "devices");
    int64_t ndev = 1, k, n;
    size_t i;
    memset(f, 0, sizeof *f);
    if (!fa || fa->type != JV_ARRAY)
        return fail(EXIT_BAD_INPUT, "--plan %s: needs \"factors\": an array "
                    "of cut factors such as [2, 2]", path);
    if (fa->n > KT_MAX_CUTS)
        return fail(EXIT_BAD_INPUT, "--plan %s: %lu factors, more than %d "
                    "cuts", path, (unsigned long)fa->n, KT_MAX_CUTS);
    for (i = 0; i < fa->n; i++) {
        if (jv_int64(&fa->item[i], &k) != 0 || k < 2)
            return fail(EXIT_BAD_INPUT, "--plan %s: factor %lu is %s; a cut "
                        "factor is a whole number from 2 up", path,
                        (unsigned long)i + 1,
                        fa->item[i].type == JV_NUMBER
                            ? fa->item[i].text
                            : jv_type_name(fa->item[i].type));
        if (k > KTILE_MAX_DEVICES || ndev * k > KTILE_MAX_DEVICES)
            return fail(EXIT_BAD_INPUT, "--plan %s: factors 1..%lu make more "
                        "than %lld devices", path, (unsigned long)i + 1,
                        (long long)KTILE_MAX_DEVICES);
        f->k[f->count++] = (int)k;
        ndev *= k;
    }
    if (dv && (jv_int64(dv, &n) != 0 || n != ndev))
        return fail(EXIT_BAD_INPUT, "--plan %s: \"devices\" is %s; it must "
                    "be %lld, the product of its factors", path,
                    dv->type == JV_NUMBER ? dv->text : jv_type_name(dv->type),
                    (long long)ndev);
    return 0;
}

static int factors_equal(const kt_factors *a, const kt_factors *b) {
    int i;
    if (a->count != b->count) return 0;
    for (i = 0; i < a->count; i++)
        if (a->k[i] != b->k[i]) return 0;
    return 1;
}

/* A member of "tensors" or "ops": an object with string `name` and
   string `field`. */
static int plan_entry(const char *path, const char *list, size_t i,
                      const jv *e, const char *field, const char **name,
                      const char **value) {
    const jv *n = jv_get(e, "name"), *v = jv_get(e, field);
    if (e->type != JV_OBJECT || !n || n->type != JV_STRING || !v ||
        v->type != JV_STRING)
        return fail(EXIT_BAD_INPUT, "--plan %s: \"%s\" entry %lu must be an "
                    "object with string \"name\" and \"%s\"", path, list,
                    (unsigned long)i + 1, field);
    *name = n->text;
    *value = v->text;
    return 0;
}

/* Fills p (initialised for g and the file's factors) from the plan file's
   "tensors" and "ops". */
static int plan_from_json(const char *path, const jv *root, const kt_graph *g,
                          kt_plan *p) {
    const jv *ts = jv_get(root, "tensors"), *os = jv_get(root, "ops");
    int nt = kt_graph_tensor_count(g), no = kt_graph_op_count(g), t, o, d;
    char *seen;
    name_list unknown, missing, twice;
    kt_error err;
    size_t i;
    int rc = 0;

    if (!ts || ts->type != JV_ARRAY)
        return fail(EXIT_BAD_INPUT, "--plan %s: needs \"tensors\": an array "
                    "of {\"name\", \"tiling\"}", path);
    if (!os || os->type != JV_ARRAY)
        return fail(EXIT_BAD_INPUT, "--plan %s: needs \"ops\": an array of "
                    "{\"name\", \"strategy\"}", path);
    seen = (char *)calloc((size_t)(nt > no ? nt : no) + 1, 1);
    if (!seen) return fail(EXIT_INTERNAL, "out of memory");

    /* tensors */
    memset(&unknown, 0, sizeof unknown);
    memset(&twice, 0, sizeof twice);
    for (i = 0; i < ts->n && rc == 0; i++) {
        const char *name, *tiling;
        const jv *shape;
        if ((rc = plan_entry(path, "tensors", i, &ts->item[i], "tiling",
                             &name, &tiling)) != 0)
            break;
        if ((t = kt_graph_find_tensor(g, name)) < 0) {
            name_list_add(&unknown, name);
            continue;
        }
        if (seen[t]++) {
            name_list_add(&twice, name);
            continue;
        }
        if ((shape = jv_get(&ts->item[i], "shape")) != NULL) {
            const kt_tensor *x = kt_graph_tensor(g, t);
            int same = shape->type == JV_ARRAY && shape->n == (size_t)x->rank;
            for (d = 0; same && d < x->rank; d++) {
                int64_t e;
                same = jv_int64(&shape->item[d], &e) == 0 && e == x->shape[d];
            }
            if (!same) {
                char sh[KT_MAX_DIMS * 24];
                format_shape(x->rank, x->shape, sh, sizeof sh);
                rc = fail(EXIT_BAD_INPUT, "--plan %s: tensor %s: \"shape\" "
                          "does not match the model's %s", path, name,
                          x->rank ? sh : "scalar");
                break;
            }
        }
        if (kt_tiling_parse(tiling, &p->tiling[t], &err) != KT_OK) {
            char what[600];
            snprintf(what, sizeof what, "--plan %s: tensor %s", path, name);
            rc = fail_kt(what, &err);
        }
    }
    if (rc == 0 && unknown.count)
        rc = fail(EXIT_BAD_INPUT, "--plan %s: %d tensor%s not in the model: "
                  "%s", path, unknown.count, unknown.count == 1 ? "" : "s",
                  unknown.text);
    if (rc == 0 && twice.count)
        rc = fail(EXIT_BAD_INPUT, "--plan %s: tensor%s listed more than "
                  "once: %s", path, twice.count == 1 ? "" : "s", twice.text);
    if (rc == 0) {
        memset(&missing, 0, sizeof missing);
        for (t = 0; t < nt; t++)
            if (!seen[t]) name_list_add(&missing, kt_graph_tensor(g, t)->name);
        if (missing.count)
            rc = fail(EXIT_BAD_INPUT, "--plan %s: %d tensor%s of the model "
                      "%s missing from the plan: %s", path, missing.count,
                      missing.count == 1 ? "" : "s",
                      missing.count == 1 ? "is" : "are", missing.text);
    }

    /* ops */
    memset(seen, 0, (size_t)(nt > no ? nt : no) + 1);
    memset(&unknown, 0, sizeof unknown);
    memset(&twice, 0, sizeof twice);
    for (i = 0; i < os->n && rc == 0; i++) {
        const char *name, *split;
        if ((rc = plan_entry(path, "ops", i, &os->item[i], "strategy", &name,
                             &split)) != 0)
            break;
        /* (by name in O(1): a scan per entry made a 30,000-op plan's
           reading 77% of `ktile eval`) */
        if ((o = kt_graph_find_op(g, name)) < 0) {
            name_list_add(&unknown, name);
            continue;
        }
        if (seen[o]++) {
            name_list_add(&twice, name);
            continue;
        }
        /* one device: no cuts, written "-" as kt_plan_format_split does */
        if (p->f.count == 0 && strcmp(split, "-") == 0) continue;
        if (kt_plan_parse_split(g, p, o, split, &err) != KT_OK) {
            char what[600];
            snprintf(what, sizeof what, "--plan %s", path);
            rc = fail_kt(what, &err); /* the message names the op */
        }
    }
    if (rc == 0 && unknown.count)
        rc = fail(EXIT_BAD_INPUT, "--plan %s: %d op%s not in the model: %s",
                  path, unknown.count, unknown.count == 1 ? "" : "s",
                  unknown.text);
    if (rc == 0 && twice.count)
        rc = fail(EXIT_BAD_INPUT, "--plan %s: op%s listed more than once: %s",
                  path, twice.count == 1 ? "" : "s", twice.text);
    if (rc == 0) {
        memset(&missing, 0, sizeof missing);
        for (o = 0; o < no; o++)
            if (!seen[o]) name_list_add(&missing, kt_graph_op(g, o)->name);
        if (missing.count)
            rc = fail(EXIT_BAD_INPUT, "--plan %s: %d op%s of the model "
                      "%s missing from the plan: %s", path, missing.count,
                      missing.count == 1 ? "" : "s",
                      missing.count == 1 ? "is" : "are", missing.text);
    }
    free(seen);
    return rc;
}

/* --plan FILE, read as `eval` and `sim` read it: the file parsed into
   *root (a JSON object; empty after a failure, so jv_free is always safe)
   and its factors into *f, checked against --factors / --devices when
   they are given.  Returns 0 or the exit status after reporting. */
static int plan_file_open(const char *path, const char *factors,
                          const char *devices, jv *root, kt_factors *f) {
    char *text = NULL, msg[256];
    size_t len = 0;
    int rc;
    memset(root, 0, sizeof *root);
    if ((rc = read_text_file("--plan", path, &text, &len)) != 0) return rc;
    if ((rc = json_parse(text, len, root, msg, sizeof msg)) != 0) {
        free(text);
        if (rc == -2)
            return fail(EXIT_INTERNAL, "--plan %s: out of memory reading it",
                        path);
        return fail(EXIT_BAD_INPUT, "--plan %s: not valid JSON: %s", path,
                    msg);
    }
    free(text);
    if (root->type != JV_OBJECT) {
        rc = fail(EXIT_BAD_INPUT, "--plan %s: expected a JSON object (the "
                  "output of 'ktile plan --json'), found %s", path,
                  jv_type_name(root->type));
        goto bad;
    }
    if ((rc = plan_file_factors(path, root, f)) != 0) goto bad;
    if (devices || factors) {
        kt_factors given;
        char a[KT_MAX_CUTS * 12], b[KT_MAX_CUTS * 12];
        if ((rc = parse_factors(factors, devices, &given)) != 0) goto bad;
        format_factors(f, a, sizeof a);
        format_factors(&given, b, sizeof b);
        if (kt_factors_devices(&given) != kt_factors_devices(f)) {
            rc = fail(EXIT_BAD_INPUT, "--plan %s is for %lld devices "
                      "(factors %s), not %lld", path,
                      (long long)kt_factors_devices(f), a,
                      (long long)kt_factors_devices(&given));
            goto bad;
        }
        if (factors && !factors_equal(f, &given)) {
            rc = fail(EXIT_BAD_INPUT, "--plan %s has factors %s, not %s",
                      path, a, b);
            goto bad;
        }
    }
    return 0;
bad:
    jv_free(root);
    return rc;
}

/* The plan of file `path` (opened by plan_file_open) for g: every tensor's
   tiling and every op's strategy from the file, priced exactly by
   kt_plan_eval, search_seconds 0.  On failure p is freed. */
static int plan_file_build(const char *cmd, const char *path, const jv *root,
                           const kt_graph *g, const kt_factors *f,
                           kt_plan *p) {
    kt_error err;
    int rc;
    if (kt_plan_init(p, g, f, &err) != KT_OK) return fail_kt(cmd, &err);
    if ((rc = plan_from_json(path, root, g, p)) != 0) {
        kt_plan_free(p);
        return rc;
    }
    if (kt_plan_eval(g, p, &err) != KT_OK) {
        char what[600];
        snprintf(what, sizeof what, "--plan %s", path);
        kt_plan_free(p);
        return fail_kt(what, &err);
    }
    p->search_seconds = 0;
    return 0;
}

/* The model (--model or --model-file) and its plan: the --plan file when
   `path` is given, else the DP plan for factors f under `objective`, on
   `machine` (NULL: the default one).  The graph and plan are the caller's
   to free: *g as soon as it is set, p only when this returns 0. */
static int load_model_and_plan(const char *cmd, const model_args *ma,
                               const char *path, const jv *root,
                               const kt_factors *f, kt_objective objective,
                               const kt_machine *machine, kt_graph **g,
                               kt_plan *p) {
    kt_search_options opt;
    kt_error err;
    int rc;
    if ((rc = load_model(cmd, ma, g)) != 0) return rc;
    if (path) return plan_file_build(cmd, path, root, *g, f, p);
    memset(&opt, 0, sizeof opt);
    opt.strategy = KT_STRATEGY_DP;
    opt.objective = objective;
    opt.machine = machine;
    if (kt_plan_search(*g, f, &opt, p, &err) != KT_OK) return fail_kt(cmd, &err);
    return 0;
}

static int cmd_eval(int argc, char **argv) {
    enum {
        O_MODEL, O_MODEL_FILE, O_DEVICES, O_FACTORS, O_PLAN, O_OBJECTIVE,
        O_TOPOLOGY, O_TOPOLOGY_FILE, O_SVG, O_JSON, O_N
    };
    cli_opt o[O_N] = {
        {"model", 1, NULL},     {"model-file", 1, NULL},
        {"devices", 1, NULL},   {"factors", 1, NULL},
        {"plan", 1, NULL},      {"objective", 1, NULL},
        {"topology", 1, NULL},  {"topology-file", 1, NULL},
        {"svg", 1, NULL},       {"json", 0, NULL}};
    const char *path;
    topology_arg ta;
    model_args ma;
    kt_objective objective;
    kt_machine machine;
    kt_factors f;
    kt_graph *g = NULL;
    kt_plan p;
    plan_report r;
    jv root;
    char label[512];
    int rc, machine_set = 0;

    memset(&root, 0, sizeof root);
    rc = cli_parse("eval", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        eval_help(stdout);
        return stdout_written();
    }
    if (rc != CLI_OK) return rc;
    if (!(path = o[O_PLAN].value))
        return fail(EXIT_BAD_INPUT, "eval: missing --plan PLAN.json (the "
                    "output of 'ktile plan --json')");
    if (!o[O_MODEL].value && !o[O_MODEL_FILE].value)
        return fail(EXIT_BAD_INPUT, "eval: missing --model SPEC or "
                    "--model-file FILE (see 'ktile help eval')");

    if ((rc = plan_file_open(path, o[O_FACTORS].value, o[O_DEVICES].value,
                             &root, &f)) != 0)
        goto done;
    if ((rc = get_topology_arg("eval", o[O_TOPOLOGY].value,
                               o[O_TOPOLOGY_FILE].value, &ta)) != 0 ||
        (rc = parse_time_options(o[O_OBJECTIVE].value, &ta, &f, 1,
                                 &objective, &machine, NULL,
                                 &machine_set)) != 0)
        goto done;
    ma.spec = o[O_MODEL].value;
    ma.file = o[O_MODEL_FILE].value;
    if ((rc = load_model("eval", &ma, &g)) != 0) goto done;
    if ((rc = plan_file_build("eval", path, &root, g, &f, &p)) != 0)
        goto done;
    p.memory_bytes = kt_plan_memory(g, &p);
    p.step_seconds =
        kt_plan_step_seconds(g, &p, machine_set ? &machine : NULL);

    model_label(&ma, label, sizeof label);
    r.cmd = "eval";
    r.model = label;
    r.strategy = NULL;
    r.plan_file = path;
    r.objective = objective;
    r.topology = ta.value;
    r.show_time = objective == KT_OBJECTIVE_TIME || machine_set;
    r.simulated = 0;
    r.simulated_seconds = 0;
    r.start = NULL;
    r.tried = r.accepted = -1;
    r.chains = 0;
    rc = finish_plan(g, &p, &r, o[O_SVG].value, o[O_JSON].value != NULL);
    kt_plan_free(&p);
done:
    jv_free(&root);
    if (g) kt_graph_destroy(g);
    return rc;
}

/* ------------------------------------------------------------------- sim */

static const char sim_usage[] =
    "usage: ktile sim (--model SPEC | --model-file FILE)\n"
    "                 (--devices N [--factors K1,K2,...] | --factors "
    "K1,K2,... |\n"
    "                  --plan PLAN.json) [--objective bytes|time]\n"
    "                 [--topology SPEC | --topology-file FILE] "
    "[--timeline FILE.svg]\n"
    "                 [--profile FILE] [--write-profile FILE] [--order FILE]\n"
    "                 [--json]\n"
    "\n"
    "Lowers a plan into per-device tasks and transfers (sched.h) and "
    "simulates\n"
    "one step on a topology (FlexFlow 5: compute on devices, transfers on "
    "links,\n"
    "overlapping).  Prints the step time, the bytes moved, every device's "
    "busy\n"
    "and idle time and the critical path.\n"
    "\n"
    "%s"
    "  --devices N         device count (see 'ktile help plan'); with --plan, "
    "when\n"
    "                      given, it must equal the plan's\n"
    "  --factors LIST      cut factors, cut 1 first (product = --devices)\n"
    "  --plan FILE         simulate this plan (the output of 'ktile plan "
    "--json',\n"
    "                      read as 'ktile eval' reads it); without it the DP "
    "plan\n"
    "                      is searched\n"
    "  --objective OBJ     what the DP minimises (not with --plan): bytes "
    "(default) or\n"
    "                      time (modelled on the topology when one is given)\n"
    "  --topology SPEC     flat:N:BW or nodes:MxG:INTRA_BW:INTER_BW, "
    "bandwidths in\n"
    "                      bytes/s with K, M, G, T (powers of 1000, either "
    "case)\n"
    "                      or bits/s with b or bit (400Gb, 400gbps, "
    "50GB/s).\n"
    "                      Default flat:N:450G.  Its device count must be "
    "the\n"
    "                      plan's.  A value without ':' is read as "
    "--topology-file\n"
    "  --topology-file F   a topology file: lines 'level FANOUT BANDWIDTH "
    "[LATENCY]'\n"
    "                      (slowest first; LATENCY in s, default 5e-6 on the "
    "first of\n"
    "                      several levels, 1e-6 on the others), 'device "
    "flops PEAK'\n"
    "                      or 'device membw BYTES_PER_S', '#' comments.  "
    "Devices of\n"
    "                      several kinds:\n"
    "                      'kind NAME flops PEAK membw BYTES_PER_S' lines and\n"
    "                      'devices LIST NAME' (LIST: all, D, D1-D2, joined by\n"
    "                      commas) giving every device one kind.  'links ports':\n"
    "                      a device's sends over a level queue on one port\n"
    "                      (default 'links pairs': a link per device pair)\n"
    "  --profile FILE      measured compute times: lines 'OP EXTENTS SECONDS\n"
    "                      [KIND]' (EXTENTS: the op's index-variable extents "
    "on\n"
    "                      one device, joined by x; KIND: the device kind it\n"
    "                      was measured on, none: any); sub-operators not\n"
    "                      listed keep the roofline time (FlexFlow 5.1)\n"
    "  --write-profile F   write every distinct sub-operator of the plan in\n"
    "                      that form with the time used: a table to measure\n"
    "  --order FILE        the order every device runs the ops in: their names\n"
    "                      (the statements' outputs, e.g. h1, dW1, W1.update),\n"
    "                      blank- or newline-separated, # comments; it must\n"
    "                      list every op once and respect the data (default:\n"
    "                      the graph's order, the \"ops\" of 'ktile plan --json',\n"
    "                      which lists the generated backward ops too)\n"
    "  --timeline FILE     write an SVG Gantt chart of the step: a row per "
    "device\n"
    "                      and per link carrying transfers (at most 200: those\n"
    "                      on the critical path, then the busiest), tasks\n"
    "                      coloured by operator (a palette of 12), transfers "
    "lighter,\n"
    "                      the critical path outlined\n";
/* (the rest of sim_usage: C99 compilers need take only 4095 characters
   in one string literal) */
static const char sim_usage_json[] =
    "  --json              print one JSON object:\n"
    "      {\"step_seconds\", \"bytes\", \"devices\": [{\"busy_seconds\", "
    "\"idle_seconds\"}],\n"
    "       \"critical_path_tasks\", \"critical_path\": [{\"op\", \"task\": "
    "compute,\n"
    "       \"device\" | \"task\": transfer, \"src\", \"dst\", \"bytes\", "
    "\"tensor\",\n"
    "       \"conversion\": input|output, \"xfer\": copy|reduce; "
    "\"start_seconds\",\n"
    "       \"end_seconds\"}]}\n"
    "      with named device kinds every device also has \"kind\"\n"
    "      bytes: all transfers of the lowered program (= the plan's "
    "total_bytes);\n"
    "      idle_seconds = step_seconds - busy_seconds, device 0 first\n"
    "\n"
    "example: ktile sim --model mlp:layers=4,hidden=1024,batch=64 --devices "
    "8 \\\n"
    "             --topology nodes:2x4:300G:25G --timeline step.svg\n";

static void sim_help(FILE *out) {
    fprintf(out, sim_usage, model_options_help);
    fputs(sim_usage_json, out);
}

/* %.17g: the figure reads back as the same double, so that the sums the
   contract promises (busy + idle = step) hold for the printed values. */
static void json_double_exact(FILE *out, double v) {
    json_number(out, v, 17);
}

/* 450e9 -> "450 GB/s": powers of 1000, as topology specs write them. */
static void format_rate(double bps, char *buf, size_t cap) {
    static const char *const unit[] = {"B/s", "KB/s", "MB/s", "GB/s",
                                       "TB/s", "PB/s"};
    int u = 0;
    while (bps >= 1000 && u < 5) {
        bps /= 1000;
        u++;
    }
    snprintf(buf, cap, "%.4g %s", bps, unit[u]);
}

/* "2 x 25 GB/s, 4 x 300 GB/s": the levels, slowest first. */
static void describe_topology(const kt_topology *t, char *buf, size_t cap) {
    size_t n = 0;
    int l;
    buf[0] = '\0';
    for (l = 0; l < t->nlevels && n < cap; l++) {
        char r[32];
        format_rate(t->bandwidth[l], r, sizeof r);
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld x %s", l ? ", " : "",
                              (long long)t->fanout[l], r);
    }
    /* named kinds: "; kinds h200 x4 (989 Tflop/s, 4.8 TB/s), ..." */
    for (l = 0; l < t->nkinds && t->kind[0].name[0] && n < cap; l++) {
        char r[32];
        int64_t count = 0;
        int i;
        for (i = 0; i < t->nkind_ranges; i++)
            if (t->kind_range[i].kind == l)
                count += t->kind_range[i].devices.hi -
                         t->kind_range[i].devices.lo;
        format_rate(t->kind[l].mem_bw, r, sizeof r);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s x%lld (%.4g Tflop/s, "
                              "%s)", l ? ", " : "; kinds ", t->kind[l].name,
                              (long long)count, t->kind[l].peak_flops / 1e12,
                              r);
    }
}

/* The kind of device d when the topology names kinds, else NULL. */
static const char *device_kind_name(const kt_topology *t, int64_t d) {
    const char *name = t->kind[kt_topology_device_kind(t, d)].name;
    return name[0] ? name : NULL;
}

static const char *sim_op_name(const kt_graph *g, int op) {
    if (op < 0 || op >= kt_graph_op_count(g)) return "?";
    return kt_graph_op(g, op)->name;
}

/* ------------------------------------------------------ sim: timeline */

/* An SVG 1.1 Gantt chart of one simulated step: a row per compute device
   ("d3"), then a row per link that carries a transfer ("d0->d5"), time
   running right.  Each task is a rect from its start to its end, coloured
   by its operator (a hash of the op index into a palette; transfers a
   lighter shade of their op's colour), with a <title> tooltip; the tasks
   of the critical path are outlined in black and drawn last.  More than
   TL_MAX_LINK_ROWS links: only the busiest are drawn, and the caption
   says so. */

#define TL_MAX_DEVICES 4096
#define TL_MAX_LINK_ROWS 200
#define TL_MARGIN 20
#define TL_LABEL_W 100
#define TL_PLOT_W 1100.0
#define TL_ROW_H 16
#define TL_BAR_H 12
#define TL_TOP 96 /* title, captions and the time axis above the rows */

static const char *const tl_palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#bcbd22", "#8c6d31"};

/* A stable hash of the op index (lowbias32), so that neighbouring ops get
   unrelated colours and a colour does not depend on the platform. */
static uint32_t tl_hash(uint32_t x) {
    x ^= x >> 16;
    x *= UINT32_C(0x7feb352d);
    x ^= x >> 15;
    x *= UINT32_C(0x846ca68b);
    x ^= x >> 16;
    return x;
}

static unsigned tl_hex(char c) {
    return c >= 'a' ? (unsigned)(c - 'a' + 10) : (unsigned)(c - '0');
}

static void tl_colour(int op, int light, char *buf, size_t cap) {
    size_t np = sizeof tl_palette / sizeof tl_palette[0];
    const char *hex = tl_palette[tl_hash((uint32_t)op) % np];
    unsigned v[3];
    int i;
    for (i = 0; i < 3; i++) {
        unsigned c = tl_hex(hex[1 + 2 * i]) * 16 + tl_hex(hex[2 + 2 * i]);
        if (light) c = c + (255 - c) * 11 / 20; /* 55% toward white */
        v[i] = c;
    }
    snprintf(buf, cap, "#%02x%02x%02x", v[0], v[1], v[2]);
}

typedef struct tl_link {
    int64_t link, src, dst; /* link: tl_link_key */
    int level;     /* with ports: the port's level; -1: a pair's link */
    double busy;   /* seconds of transfers on it */
    int64_t row;   /* its row, -1 when not drawn */
    int critical;  /* 1: carries a transfer of the critical path */
} tl_link;

static int tl_by_link(const void *a, const void *b) {
    int64_t x = ((const tl_link *)a)->link, y = ((const tl_link *)b)->link;
    return x < y ? -1 : x > y;
}

/* busiest first; ties by link */
/* The links that get a row first: those on the critical path, then the
   busiest. */
static int tl_by_busy(const void *a, const void *b) {
    const tl_link *x = (const tl_link *)a, *y = (const tl_link *)b;
    if (x->critical != y->critical) return y->critical - x->critical;
    if (x->busy != y->busy) return x->busy > y->busy ? -1 : 1;
    return x->link < y->link ? -1 : x->link > y->link;
}

/* The row a transfer is drawn in: its link, the device pair's, or with
   ports (kt_topology.ports) its sender's port on the pair's level. */
static int64_t tl_link_key(const kt_sim *s, const kt_topology *topo,
                           const kt_sim_task *t) {
    if (topo && topo->ports)
        return t->src * KT_MAX_CUTS + kt_topology_level(topo, t->src, t->dst);
    return t->src * s->ndev + t->dst;
}

static int64_t tl_row(const kt_sim *s, const kt_topology *topo,
                      const kt_sim_task *t, const tl_link *links,
                      int64_t nlinks) {
    tl_link key;
    const tl_link *hit;
    if (t->kind == KT_TASK_COMPUTE)
        return t->device >= 0 && t->device < s->ndev ? t->device : -1;
    key.link = tl_link_key(s, topo, t);
    hit = (const tl_link *)bsearch(&key, links, (size_t)nlinks, sizeof key,
                                   tl_by_link);
    return hit ? hit->row : -1;
}

/* A tick step of 1, 2 or 5 times a power of ten, about 8 per span. */
static double tl_tick(double span) {
    double raw = span / 8, mag = pow(10, floor(log10(raw))), n = raw / mag;
    return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

static void tl_task(FILE *out, const kt_graph *g, const kt_sim *s, int i,
                    int64_t row, double scale, int critical) {
    const kt_sim_task *t = &s->task[i];
    double start = s->start[i], end = s->end[i];
    char col[8], b1[32], b2[32], b3[32], by[32];
    double x = TL_MARGIN + TL_LABEL_W + start * scale;
    double w = (end - start) * scale;
    double y = TL_TOP + (double)row * TL_ROW_H + (TL_ROW_H - TL_BAR_H) / 2.0;
    if (!(w >= 1)) w = 1; /* a task of (almost) no time still shows */
    tl_colour(t->op, t->kind == KT_TASK_TRANSFER, col, sizeof col);
    /* a hairline of white parts neighbours of one colour; thin tasks
       would vanish under it */
    fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
            "fill=\"%s\"%s><title>", x, y, w, TL_BAR_H, col,
            critical ? " stroke=\"#000000\" stroke-width=\"1.5\""
            : w >= 3 ? " stroke=\"#ffffff\" stroke-width=\"0.5\"" : "");
    svg_text(out, sim_op_name(g, t->op));
    format_seconds(start, b1, sizeof b1);
    format_seconds(end, b2, sizeof b2);
    format_seconds(end - start, b3, sizeof b3);
    if (t->kind == KT_TASK_COMPUTE) {
        fprintf(out, " (op %d): compute on d%lld", t->op,
                (long long)t->device);
    } else {
        format_bytes(t->bytes, by, sizeof by);
        fprintf(out, " (op %d): transfer d%lld-&gt;d%lld, %s (%lld bytes)",
                t->op, (long long)t->src, (long long)t->dst, by,
                (long long)t->bytes);
    }
    fprintf(out, "; %s to %s (%s)%s</title></rect>\n", b1, b2, b3,
            critical ? "; critical path" : "");
}

/* The chart's layout: which links get a row, and the time scale. */
typedef struct tl_layout {
    const kt_topology *topo; /* the links' kind (pairs or ports)         */
    tl_link *links;       /* every link that carries a transfer, by link */
    int64_t nlinks, nshown, hidden_xfers, ncompute, nxfer, nrows;
    int64_t ncritical_links; /* links carrying critical-path transfers */
    double span, scale, tick, unit, width, height;
    const char *uname;
} tl_layout;

/* The links that carry transfers, each with its busy time, in link order;
   when there are more than TL_MAX_LINK_ROWS, only those on the critical
   path and then the busiest get a row (after the devices'), and the
   transfers of the others are counted. */
static void tl_place_links(const kt_sim *s, tl_layout *l) {
    int64_t i, r, ndev = s->ndev;
    tl_link *links = l->links;
    l->nlinks = l->nshown = l->hidden_xfers = l->ncompute = l->nxfer = 0;
    l->ncritical_links = 0;
    for (i = 0; i < s->ntask; i++) {
        const kt_sim_task *t = &s->task[i];
        if (!isfinite(l->span) || s->end[i] > l->span) l->span = s->end[i];
        if (t->kind == KT_TASK_COMPUTE) {
            l->ncompute++;
            continue;
        }
        l->nxfer++;
        links[l->nlinks].link = tl_link_key(s, l->topo, t);
        links[l->nlinks].src = t->src;
        links[l->nlinks].dst = t->dst;
        links[l->nlinks].level =
            l->topo && l->topo->ports
                ? kt_topology_level(l->topo, t->src, t->dst)
                : -1;
        links[l->nlinks].busy = s->end[i] - s->start[i];
        links[l->nlinks].critical = 0;
        l->nlinks++;
    }
    qsort(links, (size_t)l->nlinks, sizeof *links, tl_by_link);
    for (i = 0, r = 0; i < l->nlinks; i++) {
        if (r > 0 && links[r - 1].link == links[i].link) {
            links[r - 1].busy += links[i].busy;
            continue;
        }
        links[r++] = links[i];
    }
    l->nlinks = r;
    for (i = 0; i < s->ncritical; i++) {
        const kt_sim_task *t = &s->task[s->critical[i]];
        tl_link key, *hit;
        if (t->kind != KT_TASK_TRANSFER) continue;
        key.link = tl_link_key(s, l->topo, t);
        hit = (tl_link *)bsearch(&key, links, (size_t)l->nlinks, sizeof key,
                                 tl_by_link);
        if (hit && !hit->critical) {
            hit->critical = 1;
            l->ncritical_links++;
        }
    }
    if (l->nlinks > TL_MAX_LINK_ROWS) {
        qsort(links, (size_t)l->nlinks, sizeof *links, tl_by_busy);
        for (i = 0; i < l->nlinks; i++)
            links[i].row = i < TL_MAX_LINK_ROWS ? 0 : -1;
        qsort(links, (size_t)l->nlinks, sizeof *links, tl_by_link);
    }
    for (i = 0; i < l->nlinks; i++)
        if (links[i].row == 0) links[i].row = ndev + l->nshown++;
    for (i = 0; i < s->ntask; i++)
        if (s->task[i].kind == KT_TASK_TRANSFER &&
            tl_row(s, l->topo, &s->task[i], links, l->nlinks) < 0)
            l->hidden_xfers++;
}

/* The time scale: the step over TL_PLOT_W pixels, ticks in the unit that
   suits them, and the picture's size. */
static void tl_scale(const kt_sim *s, tl_layout *l) {
    if (!(l->span > 0) || !isfinite(l->span)) l->span = 1e-9;
    l->nrows = s->ndev + l->nshown;
    l->scale = TL_PLOT_W / l->span;
    l->tick = tl_tick(l->span);
    if (l->tick >= 1) { l->unit = 1; l->uname = "s"; }
    else if (l->tick >= 1e-3) { l->unit = 1e-3; l->uname = "ms"; }
    else if (l->tick >= 1e-6) { l->unit = 1e-6; l->uname = "us"; }
    else { l->unit = 1e-9; l->uname = "ns"; }
    l->width = 2 * TL_MARGIN + TL_LABEL_W + TL_PLOT_W;
    l->height = TL_TOP + (double)l->nrows * TL_ROW_H + (l->nshown ? 4 : 0) +
                TL_MARGIN;
}

/* The SVG header, background, title and caption. */
static void tl_write_title(FILE *out, const kt_sim *s, const tl_layout *l,
                           const char *label) {
    int64_t ndev = s->ndev;
    char b1[64];
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>"
            "\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"Helvetica, Arial, sans-serif\">\n<title>ktile sim: ",
            l->width, l->height, l->width, l->height);
    svg_text(out, label);
    fprintf(out, " on %lld device%s</title>\n", (long long)ndev,
            ndev == 1 ? "" : "s");
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n", l->width, l->height);
    format_seconds(s->step_seconds, b1, sizeof b1);
    fprintf(out, "<text x=\"%d\" y=\"26\" font-size=\"15\" "
            "font-weight=\"bold\">", TL_MARGIN);
    svg_text(out, label);
    fprintf(out, ": one step on %lld device%s, %s</text>\n", (long long)ndev,
            ndev == 1 ? "" : "s", b1);
    fprintf(out, "<text x=\"%d\" y=\"44\" font-size=\"11\">%lld compute "
            "tasks, %lld transfers on %lld %s. Colour: the operator, "
            "from a palette of 12 (solid: compute, light: its transfers); "
            "black outline: the critical path (%d tasks). Hover a task for "
            "its operator and times.</text>\n",
            TL_MARGIN, (long long)l->ncompute, (long long)l->nxfer,
            (long long)l->nlinks,
            l->topo && l->topo->ports ? "ports" : "links", s->ncritical);
    if (l->nshown < l->nlinks)
        fprintf(out, "<text x=\"%d\" y=\"60\" font-size=\"11\" "
                "fill=\"#b00000\">Showing %lld of %lld links (%s, then the "
                "busiest); the %lld transfers on the other links are not "
                "drawn.</text>\n", TL_MARGIN, (long long)l->nshown,
                (long long)l->nlinks,
                l->ncritical_links <= TL_MAX_LINK_ROWS
                    ? "every link on the critical path"
                    : "the busiest links of the critical path",
                (long long)l->hidden_xfers);
}

/* The rows: shading, a label per device ("d3", then its kind when the
   topology names kinds) and per shown link, and the line between. */
static void tl_write_rows(FILE *out, const kt_sim *s, const kt_topology *t,
                          const tl_layout *l) {
    int64_t r, i, ndev = s->ndev;
    for (r = 0; r < l->nrows; r++) {
        double y = TL_TOP + (double)r * TL_ROW_H;
        if (r % 2 == 0)
            fprintf(out, "<rect x=\"%d\" y=\"%.0f\" width=\"%.0f\" "
                    "height=\"%d\" fill=\"#f2f2f2\"/>\n", TL_MARGIN, y,
                    TL_LABEL_W + TL_PLOT_W, TL_ROW_H);
    }
    for (r = 0; r < ndev; r++) {
        const char *kind = device_kind_name(t, r);
        fprintf(out, "<text x=\"%d\" y=\"%.0f\" font-size=\"10\">d%lld",
                TL_MARGIN + 4, TL_TOP + (double)r * TL_ROW_H + TL_ROW_H - 4,
                (long long)r);
        if (kind) {
            fputs("<tspan dx=\"5\" fill=\"#555555\">", out);
            svg_text(out, kind);
            fputs("</tspan>", out);
        }
        fputs("</text>\n", out);
    }
    for (i = 0; i < l->nlinks; i++) {
        const tl_link *k = &l->links[i];
        if (k->row < 0) continue;
        fprintf(out, "<text x=\"%d\" y=\"%.0f\" font-size=\"10\" "
                "fill=\"#555555\">", TL_MARGIN + 4,
                TL_TOP + (double)k->row * TL_ROW_H + TL_ROW_H - 4);
        if (k->level >= 0) /* a port: every send of d over the level */
            fprintf(out, "d%lld port L%d</text>\n", (long long)k->src,
                    k->level + 1);
        else
            fprintf(out, "d%lld-&gt;d%lld</text>\n", (long long)k->src,
                    (long long)k->dst);
    }
    if (l->nshown)
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                "stroke=\"#888888\" stroke-width=\"1\"/>\n", TL_MARGIN,
                TL_TOP + (double)ndev * TL_ROW_H, l->width - TL_MARGIN,
                TL_TOP + (double)ndev * TL_ROW_H);
}

/* The time axis: its unit, ticks, labels and grid lines. */
static void tl_write_axis(FILE *out, const tl_layout *l) {
    double k;
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" "
            "fill=\"#555555\">time (%s)</text>\n", TL_MARGIN + 4, TL_TOP - 8,
            l->uname);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" "
            "stroke=\"#333333\" stroke-width=\"1\"/>\n",
            TL_MARGIN + TL_LABEL_W, TL_TOP - 2,
            TL_MARGIN + TL_LABEL_W + TL_PLOT_W, TL_TOP - 2);
    for (k = 0; k <= l->span * (1 + 1e-9) && k / l->tick < 1000;
         k += l->tick) {
        double x = TL_MARGIN + TL_LABEL_W + k * l->scale;
        fprintf(out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.0f\" "
                "stroke=\"#cccccc\" stroke-width=\"0.5\"/>"
                "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" "
                "text-anchor=\"middle\">%g</text>\n", x, TL_TOP - 6, x,
                TL_TOP + (double)l->nrows * TL_ROW_H, x, TL_TOP - 10,
                k / l->unit);
    }
}

/* sim --timeline PATH: every device's compute and the busiest links'
   transfers over one step, as an SVG (see "tl_" above). */
static int write_timeline(const char *path, const kt_graph *g,
                          const kt_sim *s, const kt_topology *t,
                          const char *label) {
    tl_layout l;
    char *crit = NULL;
    FILE *out;
    int64_t i;
    int bad, pass;

    if (s->ndev > TL_MAX_DEVICES)
        return fail(EXIT_BAD_INPUT, "--timeline: a chart shows at most %d "
                    "devices, the plan has %lld", TL_MAX_DEVICES,
                    (long long)s->ndev);
    memset(&l, 0, sizeof l);
    l.topo = t;
    l.span = s->step_seconds;
    l.links = (tl_link *)calloc((size_t)s->ntask + 1, sizeof *l.links);
    crit = (char *)calloc((size_t)s->ntask + 1, 1);
    if (!l.links || !crit) {
        free(l.links);
        free(crit);
        return fail(EXIT_INTERNAL, "--timeline: out of memory");
    }
    for (i = 0; i < s->ncritical; i++)
        if (s->critical[i] >= 0 && s->critical[i] < s->ntask)
            crit[s->critical[i]] = 1;
    tl_place_links(s, &l);
    tl_scale(s, &l);
    if (!(out = fopen(path, "w"))) {
        int e = errno;
        free(l.links);
        free(crit);
        return fail(EXIT_BAD_INPUT, "--timeline %s: cannot write: %s", path,
                    strerror(e));
    }
    tl_write_title(out, s, &l, label);
    tl_write_rows(out, s, t, &l);
    tl_write_axis(out, &l);
    /* tasks: the critical path last, so its outlines stay on top */
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < s->ntask; i++) {
            int64_t row;
            if (crit[i] != pass) continue;
            if ((row = tl_row(s, t, &s->task[i], l.links, l.nlinks)) < 0)
                continue;
            tl_task(out, g, s, (int)i, row, l.scale, crit[i]);
        }
    fputs("</svg>\n", out);
    bad = ferror(out);
    if (fclose(out) != 0) bad = 1;
    free(l.links);
    free(crit);
    if (bad) return fail(EXIT_INTERNAL, "--timeline %s: write failed", path);
    return 0;
}

/* ------------------------------------------------------- sim: command */

/* What transfer task `task` of s moves: the tensor, whether it converts an
   input of its op or the op's output, and copy or reduce.  kt_sim_build
   makes one task per (op, role, stage, relay, kind, src, dst), an op's
   tasks in that order, so among the op's lowered transfers between the
   same two devices, grouped by that key and sorted, the task's group is
   the one ranked as the task among the op's tasks between them.  (Bytes
   alone are ambiguous: two inputs often move equal shares.)  A group
   whose bytes are not the task's -- a program not from kt_sim_build --
   prints nothing. */
typedef struct xfer_group {
    int role, stage, relay, copy;
    int64_t bytes;
} xfer_group;

/* The key's order: qsort's comparison, 0 for one group. */
static int xfer_group_cmp(const void *pa, const void *pb) {
    const xfer_group *a = (const xfer_group *)pa, *b = (const xfer_group *)pb;
    if (a->role != b->role) return a->role < b->role ? -1 : 1;
    if (a->stage != b->stage) return a->stage < b->stage ? -1 : 1;
    if (a->relay != b->relay) return a->relay < b->relay ? -1 : 1;
    return a->copy - b->copy; /* reductions first */
}

static void print_transfer_json(FILE *out, const kt_graph *g,
                                const kt_program *prog, const kt_sim *s,
                                int task) {
    const kt_sim_task *t = &s->task[task];
    const kt_op *op = kt_graph_op(g, t->op);
    xfer_group *grp;
    int64_t i, n = 0, k, rank = 0;
    int j;
    if (!op) return;
    for (j = task - 1; j >= 0 && s->task[j].kind == KT_TASK_TRANSFER &&
                       s->task[j].op == t->op;
         j--)
        rank += s->task[j].src == t->src && s->task[j].dst == t->dst;
    grp = (xfer_group *)calloc((size_t)(prog->xfer_first[t->op + 1] -
                                        prog->xfer_first[t->op]) + 1,
                               sizeof *grp);
    if (!grp) return; /* (out of memory: the entry without them) */
    for (i = prog->xfer_first[t->op]; i < prog->xfer_first[t->op + 1]; i++) {
        const kt_transfer *x = &prog->xfer[i];
        xfer_group key;
        if (x->src != t->src || x->dst != t->dst) continue;
        key.role = x->role;
        key.stage = x->stage;
        key.relay = x->relay;
        key.copy = x->kind != KT_XFER_REDUCE;
        key.bytes = 0;
        for (k = 0; k < n && xfer_group_cmp(&grp[k], &key) != 0; k++) {}
        if (k == n) grp[n++] = key;
        grp[k].bytes += x->bytes;
    }
    qsort(grp, (size_t)n, sizeof *grp, xfer_group_cmp);
    if (rank < n && grp[rank].bytes == t->bytes && grp[rank].role >= 0 &&
        grp[rank].role <= op->ninputs) {
        int role = grp[rank].role;
        fputs(", \"tensor\": ", out);
        json_string(out, kt_graph_tensor(g, role < op->ninputs
                                                ? op->input[role]
                                                : op->output)->name);
        fprintf(out, ", \"conversion\": \"%s\", \"xfer\": \"%s\"",
                role < op->ninputs ? "input" : "output",
                grp[rank].copy ? "copy" : "reduce");
    }
    free(grp);
}

/* The critical path as JSON, first task first: each compute task's op
   and device, each transfer's op, link, bytes and what it moves, and
   both's times. */
static void print_critical_json(FILE *out, const kt_graph *g,
                                const kt_program *prog, const kt_sim *s) {
    int i;
    fputs(", \"critical_path\": [", out);
    for (i = 0; i < s->ncritical; i++) {
        int k = s->critical[i];
        const kt_sim_task *t = &s->task[k];
        const kt_op *op = kt_graph_op(g, t->op);
        fputs(i ? ", {\"op\": " : "{\"op\": ", out);
        json_string(out, op ? op->name : "?");
        if (t->kind == KT_TASK_COMPUTE) {
            fprintf(out, ", \"task\": \"compute\", \"device\": %lld",
                    (long long)t->device);
        } else {
            fprintf(out, ", \"task\": \"transfer\", \"src\": %lld, "
                    "\"dst\": %lld, \"bytes\": %lld", (long long)t->src,
                    (long long)t->dst, (long long)t->bytes);
            print_transfer_json(out, g, prog, s, k);
        }
        fputs(", \"start_seconds\": ", out);
        json_double_exact(out, s->start[k]);
        fputs(", \"end_seconds\": ", out);
        json_double_exact(out, s->end[k]);
        fputc('}', out);
    }
    fputc(']', out);
}

static void print_sim_json(FILE *out, const kt_graph *g,
                           const kt_program *prog, const kt_sim *s,
                           const kt_topology *t) {
    int64_t bytes = prog->total_bytes;
    int64_t d;
    fputs("{\"step_seconds\": ", out);
    json_double_exact(out, s->step_seconds);
    fprintf(out, ", \"bytes\": %lld, \"devices\": [", (long long)bytes);
    for (d = 0; d < s->ndev; d++) {
        fputs(d ? ", {\"busy_seconds\": " : "{\"busy_seconds\": ", out);
        json_double_exact(out, s->busy[d]);
        fputs(", \"idle_seconds\": ", out);
        json_double_exact(out, s->step_seconds - s->busy[d]);
        if (device_kind_name(t, d)) /* a name: letters, digits, _ . - */
            fprintf(out, ", \"kind\": \"%s\"", device_kind_name(t, d));
        fputc('}', out);
    }
    fprintf(out, "], \"critical_path_tasks\": %d", s->ncritical);
    print_critical_json(out, g, prog, s);
    fputs("}\n", out);
}

typedef struct sim_report {
    const char *model;     /* the spec or the model file            */
    const char *plan;      /* the --plan file, NULL: searched         */
    kt_objective objective;
    const char *topology;  /* the spec or file as given               */
    int topology_default;
} sim_report;

static void print_sim_text(FILE *out, const kt_graph *g, const kt_plan *p,
                           const kt_topology *t, const kt_program *prog,
                           const kt_sim *s, const sim_report *r) {
    char b1[64], b2[64], b3[32], fa[KT_MAX_CUTS * 12], lv[KT_MAX_CUTS * 48 + KT_MAX_DEVICE_KINDS * 80];
    int64_t d, ncompute = 0, nxfer = 0, ccomp = 0, cxfer = 0;
    double scomp = 0, sxfer = 0;
    int i, wdev;

    for (i = 0; i < s->ntask; i++) {
        if (s->task[i].kind == KT_TASK_COMPUTE) ncompute++;
        else nxfer++;
    }
    for (i = 0; i < s->ncritical; i++) {
        const kt_sim_task *ct;
        if (s->critical[i] < 0 || s->critical[i] >= s->ntask) continue;
        ct = &s->task[s->critical[i]];
        if (ct->kind == KT_TASK_COMPUTE) {
            ccomp++;
            scomp += s->end[s->critical[i]] - s->start[s->critical[i]];
        } else {
            cxfer++;
            sxfer += s->end[s->critical[i]] - s->start[s->critical[i]];
        }
    }
    format_factors(&p->f, fa, sizeof fa);
    describe_topology(t, lv, sizeof lv);
    fprintf(out, "model     %s (%d tensors, %d operators)\n", r->model,
            kt_graph_tensor_count(g), kt_graph_op_count(g));
    if (r->plan) fprintf(out, "plan      given (%s)\n", r->plan);
    else
        fprintf(out, "plan      dp, objective %s\n",
                r->objective == KT_OBJECTIVE_TIME ? "time" : "bytes");
    fprintf(out, "devices   %lld (factors %s)\n", (long long)s->ndev, fa);
    fprintf(out, "topology  %s%s (%s)\n", r->topology,
            r->topology_default ? ", the default" : "", lv);
    format_seconds(s->step_seconds, b1, sizeof b1);
    fprintf(out, "step      %s simulated\n", b1);
    format_bytes(prog->total_bytes, b1, sizeof b1);
    fprintf(out, "bytes     %s moved per step (%lld bytes)\n", b1,
            (long long)prog->total_bytes);
    fprintf(out, "tasks     %lld compute, %lld transfers\n",
            (long long)ncompute, (long long)nxfer);

    snprintf(b3, sizeof b3, "d%lld", (long long)(s->ndev - 1));
    wdev = (int)strlen(b3) > 6 ? (int)strlen(b3) : 6;
    fprintf(out, "\n%-*s  %-12s  %-12s  %s%s\n", wdev, "device", "busy",
            "idle", "utilisation", device_kind_name(t, 0) ? "  kind" : "");
    for (d = 0; d < s->ndev; d++) {
        double busy = s->busy[d], idle = s->step_seconds - busy;
        const char *kind = device_kind_name(t, d);
        snprintf(b3, sizeof b3, "d%lld", (long long)d);
        format_seconds(busy, b1, sizeof b1);
        format_seconds(idle, b2, sizeof b2);
        fprintf(out, "%-*s  %-12s  %-12s  %5.1f%%%s%s\n", wdev, b3, b1, b2,
                s->step_seconds > 0 ? 100 * busy / s->step_seconds : 0.0,
                kind ? "       " : "", kind ? kind : "");
    }
    format_seconds(scomp, b1, sizeof b1);
    format_seconds(sxfer, b2, sizeof b2);
    fprintf(out, "\ncritical path  %d tasks: %lld compute (%s), %lld "
            "transfer%s (%s)\n", s->ncritical, (long long)ccomp, b1,
            (long long)cxfer, cxfer == 1 ? "" : "s", b2);
}

/* sim --write-profile PATH: every sub-operator's simulated time, in the
   profile format --profile reads (kt_profile_write). */
static int write_profile_file(const char *path, const kt_graph *g,
                              const kt_program *prog, const kt_topology *topo) {
    FILE *pf = fopen(path, "w");
    kt_error err;
    kt_status ps;
    if (!pf)
        return fail(EXIT_BAD_INPUT, "--write-profile %s: cannot write: %s",
                    path, strerror(errno));
    ps = kt_profile_write(g, prog, topo, pf, &err);
    /* opened but not written (the library's KT_ERR_IO, or the close):
       an internal failure, like --svg's and stdout's */
    if (ps == KT_ERR_IO) {
        fclose(pf);
        return fail(EXIT_INTERNAL, "--write-profile %s: write failed (%s)",
                    path, err.message);
    }
    if ((ferror(pf) | fclose(pf)) != 0 && ps == KT_OK)
        return fail(EXIT_INTERNAL, "--write-profile %s: write failed", path);
    return ps == KT_OK ? 0 : fail_kt("sim", &err);
}

static int cmd_sim(int argc, char **argv) {
    enum {
        O_MODEL, O_MODEL_FILE, O_DEVICES, O_FACTORS, O_PLAN, O_OBJECTIVE,
        O_TOPOLOGY, O_TOPOLOGY_FILE, O_TIMELINE, O_JSON, O_PROFILE,
        O_WRITE_PROFILE, O_ORDER, O_N
    };
    cli_opt o[O_N] = {
        {"model", 1, NULL},     {"model-file", 1, NULL},
        {"devices", 1, NULL},   {"factors", 1, NULL},
        {"plan", 1, NULL},      {"objective", 1, NULL},
        {"topology", 1, NULL},  {"topology-file", 1, NULL},
        {"timeline", 1, NULL},  {"json", 0, NULL},
        {"profile", 1, NULL},   {"write-profile", 1, NULL},
        {"order", 1, NULL}};
    kt_profile prof;
    int *order = NULL;
    const char *path;
    topology_arg ta;
    model_args ma;
    kt_objective objective = KT_OBJECTIVE_BYTES;
    kt_machine machine;
    kt_topology topo;
    kt_factors f;
    kt_graph *g = NULL;
    kt_plan p;
    kt_program prog;
    kt_sim sim;
    kt_error err;
    sim_report r;
    jv root;
    char label[512], defspec[64];
    int64_t ndev;
    int rc, machine_set, have_plan = 0, have_prog = 0, have_sim = 0;

    memset(&root, 0, sizeof root);
    memset(&prof, 0, sizeof prof);
    rc = cli_parse("sim", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        sim_help(stdout);
        return stdout_written();
    }
    if (rc != CLI_OK) return rc;
    if (!o[O_MODEL].value && !o[O_MODEL_FILE].value)
        return fail(EXIT_BAD_INPUT, "sim: missing --model SPEC or "
                    "--model-file FILE (see 'ktile help sim')");
    if (parse_objective(o[O_OBJECTIVE].value, &objective) != 0)
        return EXIT_BAD_INPUT;
    if ((rc = get_topology_arg("sim", o[O_TOPOLOGY].value,
                               o[O_TOPOLOGY_FILE].value, &ta)) != 0)
        return rc;
    if (o[O_PLAN].value && o[O_OBJECTIVE].value)
        return fail(EXIT_BAD_INPUT, "sim: --objective chooses what the DP "
                    "plan minimises; with --plan nothing is searched, so it "
                    "would be ignored (give one of them)");

    /* the factors: from the plan file, or from --devices / --factors */
    if ((path = o[O_PLAN].value) != NULL) {
        if ((rc = plan_file_open(path, o[O_FACTORS].value,
                                 o[O_DEVICES].value, &root, &f)) != 0)
            return rc;
    } else {
        if (!o[O_DEVICES].value && !o[O_FACTORS].value)
            return fail(EXIT_BAD_INPUT, "sim: missing --devices N (or "
                        "--factors K1,K2,..., or --plan PLAN.json)");
        if ((rc = parse_factors(o[O_FACTORS].value, o[O_DEVICES].value,
                                &f)) != 0)
            return rc;
    }
    ndev = kt_factors_devices(&f);
    if (o[O_TIMELINE].value && ndev > TL_MAX_DEVICES) {
        rc = fail(EXIT_BAD_INPUT, "--timeline: a chart shows at most %d "
                  "devices, the plan has %lld", TL_MAX_DEVICES,
                  (long long)ndev);
        goto done;
    }

    /* the topology (default flat:N:450G), with as many devices as the
       plan; without --factors or a plan the cuts follow its levels
       (kt_machine_factors, SOYBEAN 5.1: cut 1 on the slowest) */
    memset(&topo, 0, sizeof topo);
    if (!ta.value) {
        snprintf(defspec, sizeof defspec, "flat:%lld:450G", (long long)ndev);
        ta.value = defspec;
    }
    if ((rc = parse_time_options(o[O_OBJECTIVE].value, &ta, &f,
                                 path || o[O_FACTORS].value, &objective,
                                 &machine, &topo, &machine_set)) != 0)
        goto done;

    /* the plan */
    ma.spec = o[O_MODEL].value;
    ma.file = o[O_MODEL_FILE].value;
    if ((rc = load_model_and_plan("sim", &ma, path, &root, &f, objective,
                                  o[O_TOPOLOGY].value ||
                                          o[O_TOPOLOGY_FILE].value
                                      ? &machine
                                      : NULL,
                                  &g, &p)) != 0)
        goto done;
    have_plan = 1;
    if (o[O_PROFILE].value) {
        if (kt_profile_load_file(g, o[O_PROFILE].value, &prof, &err) !=
            KT_OK) {
            rc = fail_kt(NULL, &err); /* the message names the file */
            goto done;
        }
        if (kt_profile_check_kinds(&prof, &topo, &err) != KT_OK) {
            rc = fail_kt(o[O_PROFILE].value, &err);
            goto done;
        }
        topo.profile = &prof;
    }

    if (o[O_ORDER].value) { /* every device runs the ops in this order */
        order = (int *)calloc((size_t)kt_graph_op_count(g) + 1, sizeof *order);
        if (!order) {
            rc = fail(EXIT_INTERNAL, "out of memory");
            goto done;
        }
        if (kt_schedule_load_file(g, o[O_ORDER].value, order, &err) !=
            KT_OK) {
            rc = fail_kt(NULL, &err); /* the message names the file */
            goto done;
        }
    }

    /* lowering and simulation */
    if (kt_lower_on(g, &p, &topo, &prog, &err) != KT_OK) {
        rc = fail_kt("sim: lowering the plan", &err);
        goto done;
    }
    have_prog = 1;
    memset(&sim, 0, sizeof sim);
    if (kt_sim_build_ordered(g, &p, &prog, &topo, order, &sim, &err) !=
        KT_OK) {
        rc = fail_kt("sim: building the task graph", &err);
        goto done;
    }
    have_sim = 1;
    if (kt_sim_run(&sim, &err) != KT_OK) {
        rc = fail_kt("sim: simulating", &err);
        goto done;
    }
    if (o[O_WRITE_PROFILE].value &&
        (rc = write_profile_file(o[O_WRITE_PROFILE].value, g, &prog,
                                 &topo)) != 0)
        goto done;

    model_label(&ma, label, sizeof label);
    if (o[O_TIMELINE].value &&
        (rc = write_timeline(o[O_TIMELINE].value, g, &sim, &topo, label)) !=
            0)
        goto done;
    if (o[O_JSON].value) {
        print_sim_json(stdout, g, &prog, &sim, &topo);
    } else {
        r.model = label;
        r.plan = path;
        r.objective = objective;
        r.topology = ta.value;
        r.topology_default = ta.value == defspec;
        print_sim_text(stdout, g, &p, &topo, &prog, &sim, &r);
    }
    if (stdout_written() != 0) rc = EXIT_INTERNAL;
done:
    if (have_sim) kt_sim_free(&sim);
    if (have_prog) kt_program_free(&prog);
    if (have_plan) kt_plan_free(&p);
    if (g) kt_graph_destroy(g);
    kt_profile_free(&prof);
    free(order);
    jv_free(&root);
    return rc;
}

/* ------------------------------------------------------------------ swap */

static const char swap_usage[] =
    "usage: ktile swap (--model SPEC | --model-file FILE)\n"
    "                  [--devices N [--factors K1,K2,...] | --factors "
    "K1,K2,...]\n"
    "                  --memory SIZE[,SIZE...] [--search "
    "ga|none|odswap|geeps]\n"
    "                  [--seconds S | --generations N] [--seed N]\n"
    "                  [--population N] [--mutation P] [--pressure X]\n"
    "                  [--cold] [--recent N] [--host-bw BW] [--progress] "
    "[--json]\n"
    "\n"
    "Plans what to swap between device and host memory when a step does not "
    "fit\n"
    "(swap.h, SwapAdvisor: Huang thesis ch. 4) and simulates the step with "
    "the\n"
    "compute, swap-in and swap-out streams side by side.  With --devices N "
    "the\n"
    "model is first partitioned with the DP plan and one device's share "
    "(every\n"
    "tensor at its tile size, every op at its slowest sub-operator) is "
    "swapped.\n"
    "\n"
    "%s"
    "  --devices N         partition on N devices first (see 'ktile help "
    "plan')\n"
    "  --factors LIST      cut factors, cut 1 first (product = --devices; "
    "alone:\n"
    "                      their product is the device count)\n"
    "  --memory SIZE       device memory for tensors, K/M/G/T suffixes "
    "(powers of\n"
    "                      1024); several joined by commas print a table, "
    "N/A\n"
    "                      where nothing fits\n"
    "  --search KIND       ga (default): genetic search over schedule and "
    "memory\n"
    "                      pool (thesis 4.4); none: op order and a pool "
    "sized\n"
    "                      from the peak; odswap: on-demand LRU swapping "
    "with\n"
    "                      prefetch (thesis 5.1); geeps: GeePS placement "
    "(Zhang\n"
    "                      thesis Algorithm 4)\n"
    "  --seconds S         GA CPU-time budget per memory size (default 10)\n"
    "  --generations N     GA generation budget instead: the same seed gives "
    "the\n"
    "                      same plan\n"
    "  --seed N            GA seed (default 1)\n"
    "  --population N      GA individuals per generation, 2 to 4096 "
    "(default 32)\n"
    "  --mutation P        GA mutation probability, above 0 up to 1 "
    "(default 0.1)\n"
    "  --pressure X        GA selection pressure, the softmax's scale on "
    "each\n"
    "                      plan's step relative to the best, above 0 up to "
    "1e6\n"
    "                      (default 100; the thesis's is 1)\n"
    "                      (--seconds to --pressure and --progress go with "
    "--search ga)\n"
    "  --cold              one step from an empty device (inference; "
    "parameters in\n"
    "                      host memory, nothing kept for a next step); "
    "default:\n"
    "                      the steady state of training\n"
    "  --recent N          ga and none: a swap-in's victim is, when others "
    "can go,\n"
    "                      not a tensor the last N ops used (the threshold "
    "of\n"
    "                      thesis 4.3.2; default 0: furthest next use "
    "alone)\n"
    "  --host-bw BW        host link bytes/s per direction, K/M/G/T powers "
    "of 1000,\n"
    "                      b or bit for bits, as in topology specs (400gbps, "
    "50GB/s;\n"
    "                      default 50G)\n"
    "  --progress          the GA's best/average/worst per generation on "
    "stderr\n"
    "  --json              print one JSON object:\n"
    "      {\"step_seconds\", \"ideal_seconds\", \"swapped_bytes\", "
    "\"peak_bytes\",\n"
    "       \"pool_bytes\", \"memory\", \"search\", \"devices\", "
    "\"evaluations\"}\n"
    "      with several sizes {\"rows\": [that object per size]}; where "
    "nothing\n"
    "      fits, step_seconds, swapped_bytes, peak_bytes, pool_bytes and\n"
    "      evaluations are null\n"
    "\n"
    "example: ktile swap --model wresnet:depth=152,widen=1,batch=16,infer=1 "
    "--cold \\\n"
    "             --memory 128M,256M,512M --search ga --seconds 5\n";

static void swap_help(FILE *out) {
    fprintf(out, swap_usage, model_options_help);
}

static const char *const swap_search_names[] = {"ga", "none", "odswap",
                                                "geeps"};

static void swap_progress(void *ctx, int gen, double best, double avg,
                          double worst, int64_t evaluations, double secs) {
    (void)ctx;
    fprintf(stderr, "generation %d: best %.6g s, average %.6g s, worst %.6g "
            "s (%lld plans, %.1f s)\n", gen, best, avg, worst,
            (long long)evaluations, secs);
}

/* A bandwidth as topology specs write it (kt__parse_rate: K/M/G/T powers
   of 1000, b for bits): at least 1 byte/s, as specs have it -- a slower
   link makes run times past what the simulator takes. */
static int parse_rate(const char *text, double *out) {
    return kt__parse_rate(text, strlen(text), KT__MAX_BANDWIDTH, out) ? 0
                                                                       : -1;
}

static void swap_row_json(FILE *out, const kt_swap_result *r, int fits,
                          int64_t memory, const char *search,
                          int64_t devices, double ideal) {
    /* where nothing fits there is no plan: its figures are null, not 0 */
    fprintf(out, "{\"step_seconds\": ");
    if (fits) json_double_exact(out, r->step_seconds);
    else fprintf(out, "null");
    fprintf(out, ", \"ideal_seconds\": ");
    json_double_exact(out, ideal);
    if (fits)
        fprintf(out, ", \"swapped_bytes\": %lld, \"peak_bytes\": %lld, "
                "\"pool_bytes\": %lld", (long long)r->swapped_bytes,
                (long long)r->peak_bytes, (long long)r->plan.pool_bytes);
    else
        fprintf(out, ", \"swapped_bytes\": null, \"peak_bytes\": null, "
                "\"pool_bytes\": null");
    fprintf(out, ", \"memory\": %lld, \"search\": \"%s\", \"devices\": "
            "%lld, \"evaluations\": ", (long long)memory, search,
            (long long)devices);
    if (fits) fprintf(out, "%lld}", (long long)r->evaluations);
    else fprintf(out, "null}");
}

#define SWAP_MAX_SIZES 64 /* sizes one --memory list may give */

/* The search at each memory size into res[i] (fits[i] 1) or, where the
   step does not fit (KT_ERR_INVALID: every search says so with it, and
   the options were checked before), fits[i] 0 -- a null row in a table
   of sizes; a single size that does not fit is an error naming the
   search's reason and, when the size is below it, the least pool the
   step needs (kt_swap_alloc_minimal; a search may need more: GeePS
   double-buffers).  Any other failure is reported as itself.  On
   failure nothing is left allocated. */
static int swap_search_all(const kt_swap_model *m, kt_swap_search_kind kind,
                           kt_swap_options *opt, const int64_t *mem,
                           int nmem, kt_swap_result *res, int *fits) {
    kt_swap_alloc least_pool;
    kt_error err, lerr;
    int64_t least = -1;
    int i, j;
    for (i = 0; i < nmem; i++) {
        kt_status st;
        opt->memory = mem[i];
        st = kt_swap_search(m, kind, opt, &res[i], &err);
        fits[i] = st == KT_OK;
        if (st == KT_OK || (st == KT_ERR_INVALID && nmem > 1)) continue;
        for (j = 0; j < i; j++)
            if (fits[j]) kt_swap_result_free(&res[j]);
        if (st == KT_ERR_INVALID) {
            char b[2][32];
            /* the least pool only for the message: a DP over class maps
               that a table of sizes does not need */
            if (kt_swap_alloc_minimal(m, &least_pool, &least, &lerr) ==
                KT_OK)
                kt_swap_alloc_free(&least_pool);
            format_bytes(mem[i], b[0], sizeof b[0]);
            format_bytes(least, b[1], sizeof b[1]);
            if (least >= 0 && mem[i] < least)
                return fail(EXIT_BAD_INPUT, "--memory %s: nothing fits: %s "
                            "(the least memory that runs this step is %s)",
                            b[0], err.message, b[1]);
            return fail(EXIT_BAD_INPUT, "--memory %s: nothing fits: %s",
                        b[0], err.message);
        }
        return fail_kt("swap", &err);
    }
    return 0;
}

/* --memory 64M,128M,...: up to SWAP_MAX_SIZES positive sizes. */
static int parse_memory_list(const char *text, int64_t *mem, int *nmem) {
    const char *p = text;
    *nmem = 0;
    for (;;) {
        char part[64];
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (*nmem == SWAP_MAX_SIZES)
            return fail(EXIT_BAD_INPUT, "--memory: at most %d sizes",
                        SWAP_MAX_SIZES);
        if (len == 0 || len >= sizeof part)
            return fail(EXIT_BAD_INPUT, "--memory '%s': expected sizes "
                        "such as 512M or 16G joined by commas", text);
        memcpy(part, p, len);
        part[len] = '\0';
        if (parse_size(part, INT64_C(1) << 60, &mem[*nmem]) != 0 ||
            mem[*nmem] <= 0)
            return fail(EXIT_BAD_INPUT, "--memory '%s': '%s' is not a "
                        "size from 1 byte to 2^60 such as 512M or 16G", text,
                        part);
        (*nmem)++;
        if (!c) return 0;
        p = c + 1;
    }
}

/* --generations N: the GA's generation budget, 1 to 1,000,000. */
static int parse_generations(const char *text, int64_t *generations) {
    if (parse_int(text, 1, 1000000, generations) != 0)
        return fail(EXIT_BAD_INPUT, "--generations '%s': expected a whole "
                    "number from 1 to 1000000", text);
    return 0;
}

/* The GA's options of `swap` (NULL: not given) into opt: its budget
   (--seconds, or --generations, else 10 s), seed (default 1), and the
   population, mutation rate and selection pressure (kt_swap_search's
   defaults when not given). */
static int parse_ga_options(const char *population, const char *mutation,
                            const char *pressure, const char *seconds,
                            const char *generations, const char *seed,
                            kt_swap_options *opt) {
    int64_t v;
    int rc;
    if (population) {
        if (parse_int(population, 2, KT_SWAP_MAX_POPULATION, &v))
            return fail(EXIT_BAD_INPUT, "--population '%s': expected a whole "
                        "number from 2 to %d", population,
                        KT_SWAP_MAX_POPULATION);
        opt->population = (int)v;
    }
    if (mutation && (rc = parse_above_zero("mutation", mutation, 1,
                                           "a probability",
                                           &opt->mutation)) != 0)
        return rc;
    if (pressure && (rc = parse_above_zero("pressure", pressure,
                                           KT_SWAP_MAX_PRESSURE, "a number",
                                           &opt->pressure)) != 0)
        return rc;
    if (seconds && generations)
        return fail(EXIT_BAD_INPUT, "swap: give --seconds or --generations, "
                    "not both");
    if (seconds) {
        if (parse_above_zero("seconds", seconds, 1e6, "a number of seconds",
                             &opt->seconds) != 0)
            return EXIT_BAD_INPUT;
    } else if (generations) {
        if ((rc = parse_generations(generations, &v)) != 0) return rc;
        opt->generations = (int)v;
    } else {
        opt->seconds = 10;
    }
    opt->seed = 1;
    if (seed && parse_seed(seed, &opt->seed) != 0) return EXIT_BAD_INPUT;
    return 0;
}

/* What `swap` plans for: the whole graph, or with --factors/--devices one
   device's share of the DP plan (every tensor at its tile size). */
static int swap_model_of(const kt_graph *g, const char *factors,
                         const char *devices_text, kt_swap_model *m,
                         int64_t *devices) {
    kt_factors f;
    kt_search_options so;
    kt_plan p;
    kt_error err;
    int rc;
    *devices = 1;
    if (!factors && !devices_text) {
        if (kt_swap_model_from_graph(g, NULL, m, &err) != KT_OK)
            return fail_kt("swap", &err);
        return 0;
    }
    if ((rc = parse_factors(factors, devices_text, &f)) != 0) return rc;
    *devices = kt_factors_devices(&f);
    memset(&so, 0, sizeof so);
    so.strategy = KT_STRATEGY_DP;
    if (kt_plan_search(g, &f, &so, &p, &err) != KT_OK)
        return fail_kt("swap: partitioning", &err);
    rc = kt_swap_model_from_plan(g, &p, NULL, m, &err) != KT_OK
             ? fail_kt("swap: one device's share", &err)
             : 0;
    kt_plan_free(&p);
    return rc;
}

/* swap --json: one row object, or {"rows": [...]} for several sizes. */
static void print_swap_json(const kt_swap_model *m, kt_swap_search_kind kind,
                            const int64_t *mem, int nmem,
                            const kt_swap_result *res, const int *fits,
                            int64_t devices) {
    int i;
    if (nmem > 1) printf("{\"rows\": [");
    for (i = 0; i < nmem; i++) {
        if (i > 0) printf(", ");
        swap_row_json(stdout, &res[i], fits[i], mem[i],
                      swap_search_names[kind], devices,
                      kt_swap_ideal_seconds(m));
    }
    printf(nmem > 1 ? "]}\n" : "\n");
}

/* swap's text: a sentence for one size, a table for several (N/A where
   nothing fits). */
static void print_swap_text(const kt_swap_model *m, kt_swap_search_kind kind,
                            const kt_swap_options *opt, const int64_t *mem,
                            int nmem, const kt_swap_result *res,
                            const int *fits, int64_t devices,
                            const char *label) {
    int i;
    if (nmem > 1) {
        printf("%s%s, %lld device%s, search %s, host link %.3g GB/s per "
               "direction\n", label, opt->cold ? " (cold)" : "",
               (long long)devices, devices == 1 ? "" : "s",
               swap_search_names[kind], m->h2d_bw / 1e9);
        printf("%10s  %12s  %12s  %12s  %12s\n", "memory", "step",
               "ideal", "swapped", "peak");
    }
    for (i = 0; i < nmem; i++) {
        const kt_swap_result *r = &res[i];
        char b[5][32];
        format_bytes(mem[i], b[0], sizeof b[0]);
        format_seconds(kt_swap_ideal_seconds(m), b[2], sizeof b[2]);
        if (fits[i]) {
            format_seconds(r->step_seconds, b[1], sizeof b[1]);
            format_bytes(r->swapped_bytes, b[3], sizeof b[3]);
            format_bytes(r->peak_bytes, b[4], sizeof b[4]);
        } else {
            snprintf(b[1], sizeof b[1], "N/A");
            snprintf(b[3], sizeof b[3], "-");
            snprintf(b[4], sizeof b[4], "-");
        }
        if (nmem > 1) {
            printf("%10s  %12s  %12s  %12s  %12s\n", b[0], b[1], b[2], b[3],
                   b[4]);
            continue;
        }
        printf("%s%s, %lld device%s, search %s\n", label,
               opt->cold ? " (cold)" : "", (long long)devices,
               devices == 1 ? "" : "s", swap_search_names[kind]);
        printf("memory %s: step %s (ideal %s), swapped %s, peak %s", b[0],
               b[1], b[2], b[3], b[4]);
        if (kind == KT_SWAP_SEARCH_GA)
            printf(", %lld plans in %.1f s", (long long)r->evaluations,
                   r->search_seconds);
        printf("\n");
    }
}

static int cmd_swap(int argc, char **argv) {
    enum {
        O_MODEL, O_MODEL_FILE, O_DEVICES, O_FACTORS, O_MEMORY, O_SEARCH,
        O_SECONDS, O_GENERATIONS, O_SEED, O_POPULATION, O_MUTATION,
        O_PRESSURE, O_PROGRESS, O_COLD, O_HOST_BW, O_RECENT, O_JSON, O_N
    };
    /* the GA's own options, O_SECONDS to O_PROGRESS in this order */
    cli_opt o[O_N] = {
        {"model", 1, NULL},       {"model-file", 1, NULL},
        {"devices", 1, NULL},     {"factors", 1, NULL},
        {"memory", 1, NULL},      {"search", 1, NULL},
        {"seconds", 1, NULL},     {"generations", 1, NULL},
        {"seed", 1, NULL},        {"population", 1, NULL},
        {"mutation", 1, NULL},    {"pressure", 1, NULL},
        {"progress", 0, NULL},    {"cold", 0, NULL},
        {"host-bw", 1, NULL},     {"recent", 1, NULL},
        {"json", 0, NULL}};
    model_args ma;
    kt_graph *g = NULL;
    kt_swap_model m;
    kt_swap_options opt;
    kt_swap_search_kind kind = KT_SWAP_SEARCH_GA;
    int64_t mem[SWAP_MAX_SIZES], devices = 1;
    kt_swap_result res[SWAP_MAX_SIZES];
    int fits[SWAP_MAX_SIZES];
    int nmem = 0, rc = 0, i, have_model = 0, searched = 0;
    double host_bw = 0;
    char label[512];

    memset(&m, 0, sizeof m);
    rc = cli_parse("swap", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        swap_help(stdout);
        return stdout_written();
    }
    if (rc != CLI_OK) return rc;
    memset(&opt, 0, sizeof opt);
    if (!o[O_MEMORY].value)
        return fail(EXIT_BAD_INPUT, "swap: missing --memory SIZE (e.g. 8G; "
                    "see 'ktile help swap')");
    if ((rc = parse_memory_list(o[O_MEMORY].value, mem, &nmem)) != 0)
        return rc;
    if (o[O_SEARCH].value) {
        for (i = 0; i < 4; i++)
            if (strcmp(o[O_SEARCH].value, swap_search_names[i]) == 0)
                kind = (kt_swap_search_kind)i;
        if (strcmp(o[O_SEARCH].value, swap_search_names[kind]) != 0)
            return fail(EXIT_BAD_INPUT, "--search '%s': expected ga, none, "
                        "odswap or geeps", o[O_SEARCH].value);
    }
    /* the other searches are rules, not searches: a GA option with them
       would be ignored, so it is refused */
    for (i = O_SECONDS; kind != KT_SWAP_SEARCH_GA && i <= O_PROGRESS; i++)
        if (o[i].value)
            return fail(EXIT_BAD_INPUT, "swap: --%s goes with --search ga, "
                        "not %s", o[i].name, swap_search_names[kind]);
    if ((rc = parse_ga_options(o[O_POPULATION].value, o[O_MUTATION].value,
                               o[O_PRESSURE].value, o[O_SECONDS].value,
                               o[O_GENERATIONS].value, o[O_SEED].value,
                               &opt)) != 0)
        return rc;
    if (o[O_HOST_BW].value && parse_rate(o[O_HOST_BW].value, &host_bw) != 0)
        return fail(EXIT_BAD_INPUT, "--host-bw '%s': expected a bandwidth "
                    "from 1 byte/s to 1e18 bytes/s, such as 25G",
                    o[O_HOST_BW].value);
    opt.cold = o[O_COLD].value != NULL;
    if (o[O_PROGRESS].value) opt.progress = swap_progress;
    if (o[O_RECENT].value) {
        int64_t recent;
        /* the pool planner's victim rule: the baselines choose their own */
        if (kind != KT_SWAP_SEARCH_GA && kind != KT_SWAP_SEARCH_NONE)
            return fail(EXIT_BAD_INPUT, "swap: --recent goes with --search "
                        "ga or none, not %s", swap_search_names[kind]);
        if (parse_int(o[O_RECENT].value, 0, 1000000, &recent) != 0)
            return fail(EXIT_BAD_INPUT, "--recent '%s': expected a whole "
                        "number of ops from 0 to 1000000", o[O_RECENT].value);
        opt.recent_steps = (int)recent;
    }

    ma.spec = o[O_MODEL].value;
    ma.file = o[O_MODEL_FILE].value;
    if ((rc = load_model("swap", &ma, &g)) != 0) return rc;
    if ((rc = swap_model_of(g, o[O_FACTORS].value, o[O_DEVICES].value, &m,
                            &devices)) != 0)
        goto done;
    have_model = 1;
    if (host_bw > 0) {
        m.h2d_bw = m.d2h_bw = host_bw;
    }

    model_label(&ma, label, sizeof label);
    if ((rc = swap_search_all(&m, kind, &opt, mem, nmem, res, fits)) != 0)
        goto done;
    searched = 1;
    /* printed once every search has succeeded, so that an error leaves
       no half-written table or JSON */
    if (o[O_JSON].value)
        print_swap_json(&m, kind, mem, nmem, res, fits, devices);
    else
        print_swap_text(&m, kind, &opt, mem, nmem, res, fits, devices, label);
    if (stdout_written() != 0) rc = EXIT_INTERNAL;
done:
    if (searched)
        for (i = 0; i < nmem; i++)
            if (fits[i]) kt_swap_result_free(&res[i]);
    if (have_model) kt_swap_model_free(&m);
    if (g) kt_graph_destroy(g);
    return rc;
}

/* ---------------------------------------------------------------- verify */

static const char verify_usage[] =
    "usage: ktile verify (--model SPEC | --model-file FILE)\n"
    "                    (--devices N [--factors K1,K2,...] | --factors "
    "K1,K2,... |\n"
    "                     --plan PLAN.json) [--backend cpu] [--seed N]\n"
    "                    [--memory SIZE [--search ga|none] [--generations N] "
    "[--cold]]\n"
    "                    [--topology SPEC|FILE | --topology-file FILE]\n"
    "                    [--tol X] [--eps X] [--reference] [--threads N] "
    "[--json]\n"
    "\n"
    "Runs one training step twice on the CPU backend (backend_cpu.h) on the "
    "same\n"
    "fresh random inputs: serially, and partitioned as the plan says (every "
    "device\n"
    "with its own buffers, the lowered program's transfers copying regions "
    "between\n"
    "them, the devices shared among worker threads).  Every tensor on "
    "every\n"
    "device -- outputs, gradients, updated weights -- must equal the "
    "serial value\nwithin "
    "tol + |ref| * eps, and the bytes moved must equal the plan's cost.\n"
    "Exit status 0 when both hold, 1 when not, 2 for bad input.\n"
    "\n"
    "%s"
    "  --devices N         device count; with --plan, when given, it must "
    "equal\n"
    "                      the plan's\n"
    "  --factors LIST      cut factors, cut 1 first (product = --devices)\n"
    "  --plan FILE         verify this plan (the output of 'ktile plan "
    "--json');\n"
    "                      without it the DP plan is searched\n"
    "  --topology SPEC     run the program sim simulates on this topology "
    "(as\n"
    "                      'ktile sim' reads it): the factors follow its "
    "levels\n"
    "                      unless given, and each conversion is lowered on "
    "them\n"
    "                      (kt_lower_on); without it, a tree level per cut\n"
    "                      (kt_lower)\n"
    "  --topology-file F   the same, F always read as a topology file\n"
    "  --backend NAME      cpu (the default; the only backend built so far)\n"
    "  --seed N            seed of the input values (default 1)\n"
    "  --tol X, --eps X    absolute and relative tolerance (default 1e-9 and "
    "1e-7:\n"
    "                      the values are float64, partitioned sums differ "
    "only by\n"
    "                      their order); both 0: bit-for-bit equality.  tol "
    "is\n"
    "                      absolute: for a model whose values are far below "
    "1,\n"
    "                      lower it (or give 0: relative to each value alone)"
    "\n"
    "  --reference         run every op with the generic evaluator (no "
    "matrix-\n"
    "                      product fast path): slower, the plain semantics\n"
    "  --threads N         worker threads of the partitioned run, 1 to 4096 "
    "(default:\n"
    "                      one per processor, at most one per device); the "
    "values\n"
    "                      are the same for every N\n"
    "  --memory SIZE       run under a memory cap (K/M/G/T suffixes): the step "
    "is\n"
    "                      swap-planned for one device's share (swap.h, with "
    "the\n"
    "                      transfers' receive and result buffers) and every "
    "device\n"
    "                      runs it in ONE arena of SIZE bytes with host "
    "memory\n"
    "                      beside it; the executor checks every tensor lies "
    "inside\n"
    "                      its object and the arena, no two overlap, the "
    "objects\n"
    "                      in use never exceed SIZE, and the bytes swapped "
    "are the\n"
    "                      plan's.  Without --devices/--factors/--plan: one "
    "device\n"
    "  --search KIND       with --memory: ga (default; --generations, default "
    "10,\n"
    "                      seeded by --seed) or none (op order, the pool sized "
    "from\n"
    "                      the peak)\n"
    "  --generations N     with --memory and --search ga\n"
    "  --cold              with --memory: one step from an empty device "
    "(default:\n"
    "                      the steady state of training)\n"
    "  --json              print one JSON object:\n";

/* The rest of verify's usage (one string would pass the 4095 characters
   C99 promises). */
static const char verify_usage_json[] =
    "      {\"ok\", \"max_rel_error\", \"bytes_moved\", \"predicted_bytes\", "
    "\"devices\",\n"
    "       \"values_ok\", \"bytes_ok\", \"max_abs_error\", \"compared\", "
    "\"mismatches\",\n"
    "       \"unchecked\", \"worst_tensor\", \"first_mismatches\": "
    "[{\"tensor\", \"device\",\n"
    "       \"index\", \"got\", \"want\"}]}\n"
    "      with --memory also {\"capacity\", \"pool_bytes\", \"search\", "
    "\"swap_ok\",\n"
    "       \"swapped_in_bytes\", \"swapped_out_bytes\", "
    "\"planned_in_bytes\",\n"
    "       \"planned_out_bytes\", \"plan_swapped_bytes\", "
    "\"peak_arena_bytes\",\n"
    "       \"plan_peak_bytes\", \"step_seconds\", \"swap_devices\": "
    "[{\"in_bytes\",\n"
    "       \"out_bytes\", \"planned_in_bytes\", \"planned_out_bytes\", "
    "\"peak_bytes\",\n"
    "       \"high_water\"}]}: bytes in the tensors' declared sizes, "
    "executed and\n"
    "      planned (the plan's copies at each device's tile sizes)\n"
    "      with --topology also {\"topology\", \"transfers\", "
    "\"stages\"}: the program's\n"
    "      kt_transfers and the stages of its collectives\n"
    "      max_rel_error = max |got - ref| / (|ref| + tol/eps), so with eps > "
    "0\n"
    "      the values agree iff it is <= eps and unchecked is 0; 1e308\n"
    "      when an element is NaN on one side only; unchecked: elements NaN "
    "in the\n"
    "      serial run itself (the model makes NaN of these inputs), which "
    "fail\n"
    "\n"
    "example: ktile verify --model transformer:layers=1,dmodel=64,heads=4,"
    "ffn=256,\\\n"
    "             seq=16,batch=4 --devices 4 --json\n";

static void verify_help(FILE *out) {
    fprintf(out, verify_usage, model_options_help);
    fputs(verify_usage_json, out);
}

/* Always a JSON number with a fraction or exponent ("0.0", not "0"), so
   readers get a float whatever the value. */
static void json_error(FILE *out, double v) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", isfinite(v) ? v : 1e308);
    fputs(buf, out);
    if (!strpbrk(buf, ".e")) fputs(".0", out);
}

/* What --topology adds to verify's report: the program run is the one
   sim simulates on that topology (kt_lower_on: collectives level by
   level), not one tree level per cut. */
typedef struct verify_lowering {
    const char *topology; /* NULL: kt_lower's program                    */
    int64_t transfers;
    int stages;           /* 1 + the largest kt_transfer.stage          */
} verify_lowering;

static void verify_lowering_of(const kt_program *prog, const char *topology,
                               verify_lowering *l) {
    int i;
    l->topology = topology;
    l->transfers = prog->nxfer;
    l->stages = 0;
    for (i = 0; i < prog->nxfer; i++)
        if (prog->xfer[i].stage + 1 > l->stages)
            l->stages = prog->xfer[i].stage + 1;
}

/* What a run under --memory adds to verify's report. */
typedef struct verify_swap {
    const kt_cpu_swap_report *rep;
    const char *search;
    double step_seconds; /* simulated (swap.h), one device's share */
} verify_swap;

static void print_verify_swap_json(FILE *out, const verify_swap *v) {
    const kt_cpu_swap_report *s = v->rep;
    int64_t d;
    fprintf(out, ", \"capacity\": %lld, \"pool_bytes\": %lld, \"search\": "
            "\"%s\", \"swap_ok\": %s, \"swapped_in_bytes\": %lld, "
            "\"swapped_out_bytes\": %lld, \"planned_in_bytes\": %lld, "
            "\"planned_out_bytes\": %lld, \"plan_swapped_bytes\": %lld, "
            "\"peak_arena_bytes\": %lld, \"plan_peak_bytes\": %lld, "
            "\"step_seconds\": ", (long long)s->capacity,
            (long long)s->pool_bytes, v->search, s->ok ? "true" : "false",
            (long long)s->swapped_in_bytes, (long long)s->swapped_out_bytes,
            (long long)s->planned_in_bytes, (long long)s->planned_out_bytes,
            (long long)s->plan_swapped_bytes, (long long)s->peak_bytes,
            (long long)s->plan_peak_bytes);
    json_double_exact(out, v->step_seconds);
    fputs(", \"swap_devices\": [", out);
    for (d = 0; d < s->ndev; d++) {
        const kt_cpu_swap_device *x = &s->device[d];
        fprintf(out, "%s{\"in_bytes\": %lld, \"out_bytes\": %lld, "
                "\"planned_in_bytes\": %lld, \"planned_out_bytes\": %lld, "
                "\"peak_bytes\": %lld, \"high_water\": %lld}", d ? ", " : "",
                (long long)x->in_bytes, (long long)x->out_bytes,
                (long long)x->planned_in_bytes,
                (long long)x->planned_out_bytes, (long long)x->peak_bytes,
                (long long)x->high_water);
    }
    fputs("]", out);
}

static void print_verify_json(FILE *out, const kt_graph *g,
                              const kt_cpu_report *r, const verify_swap *v,
                              const verify_lowering *l) {
    int i, d;
    fprintf(out, "{\"ok\": %s, \"max_rel_error\": ", r->ok ? "true" : "false");
    json_error(out, r->max_rel_error);
    fprintf(out, ", \"bytes_moved\": %lld, \"predicted_bytes\": %lld, "
            "\"devices\": %lld, \"values_ok\": %s, \"bytes_ok\": %s, "
            "\"max_abs_error\": ", (long long)r->bytes_moved,
            (long long)r->predicted_bytes, (long long)r->ndev,
            r->values_ok ? "true" : "false", r->bytes_ok ? "true" : "false");
    json_error(out, r->max_abs_error);
    fprintf(out, ", \"compared\": %lld, \"mismatches\": %lld, "
            "\"unchecked\": %lld, \"worst_tensor\": ", (long long)r->compared,
            (long long)r->mismatches, (long long)r->unchecked);
    if (r->worst_tensor >= 0)
        json_string(out, kt_graph_tensor(g, r->worst_tensor)->name);
    else
        fputs("null", out);
    fputs(", \"first_mismatches\": [", out);
    for (i = 0; i < r->nreported; i++) {
        const kt_cpu_mismatch *m = &r->first[i];
        const kt_tensor *x = kt_graph_tensor(g, m->tensor);
        if (!x) continue;
        fprintf(out, "%s{\"tensor\": ", i ? ", " : "");
        json_string(out, x->name);
        fprintf(out, ", \"device\": %lld, \"index\": [", (long long)m->device);
        for (d = 0; d < x->rank; d++)
            fprintf(out, "%s%lld", d ? ", " : "", (long long)m->index[d]);
        fputs("], \"got\": ", out);
        if (isfinite(m->got)) fprintf(out, "%.17g", m->got);
        else fputs("null", out);
        fputs(", \"want\": ", out);
        if (isfinite(m->want)) fprintf(out, "%.17g", m->want);
        else fputs("null", out);
        fputs("}", out);
    }
    fputs("]", out);
    if (l->topology) {
        fputs(", \"topology\": ", out);
        json_string(out, l->topology);
        fprintf(out, ", \"transfers\": %lld, \"stages\": %d",
                (long long)l->transfers, l->stages);
    }
    if (v) print_verify_swap_json(out, v);
    fputs("}\n", out);
}

static void print_verify_text(FILE *out, const kt_graph *g,
                              const kt_cpu_report *r, const char *label,
                              double tol, double eps, const verify_swap *v,
                              const verify_lowering *l) {
    int i, d;
    char b1[32], b2[32];
    format_bytes(r->bytes_moved, b1, sizeof b1);
    format_bytes(r->predicted_bytes, b2, sizeof b2);
    fprintf(out, "verify %s on %lld device%s (cpu backend): %s\n", label,
            (long long)r->ndev, r->ndev == 1 ? "" : "s",
            r->ok ? "OK" : "FAILED");
    fprintf(out, "  values       %lld elements compared on every device, %lld "
            "outside %g + |ref| * %g\n", (long long)r->compared,
            (long long)r->mismatches, tol, eps);
    if (r->unchecked > 0)
        fprintf(out, "  unchecked    %lld elements are NaN in the serial run "
                "itself (first in %s): the model computes NaN from these "
                "inputs, so they cannot be compared\n",
                (long long)r->unchecked,
                kt_graph_tensor(g, r->first_unchecked)->name);
    fprintf(out, "  largest error  relative %.3g, absolute %.3g%s%s\n",
            r->max_rel_error, r->max_abs_error,
            r->worst_tensor >= 0 ? ", in " : "",
            r->worst_tensor >= 0 ? kt_graph_tensor(g, r->worst_tensor)->name
                                 : "");
    fprintf(out, "  bytes moved  %lld (%s), the plan predicts %lld (%s)%s\n",
            (long long)r->bytes_moved, b1, (long long)r->predicted_bytes, b2,
            r->bytes_ok ? "" : "  MISMATCH");
    if (l->topology)
        fprintf(out, "  lowered on   %s, the program sim simulates: %lld "
                "transfers in %d stage%s\n", l->topology,
                (long long)l->transfers, l->stages, l->stages == 1 ? "" : "s");
    if (v) {
        const kt_cpu_swap_report *s = v->rep;
        char b3[32], b4[32], b5[32];
        format_bytes(s->capacity, b1, sizeof b1);
        format_bytes(s->pool_bytes, b2, sizeof b2);
        format_bytes(s->peak_bytes, b3, sizeof b3);
        fprintf(out, "  memory       one arena of %s per device, pool %s, "
                "peak %s in use (plan: %s)%s\n", b1, b2, b3,
                s->peak_bytes == s->plan_peak_bytes ? "the same" : "DIFFERENT",
                s->peak_bytes <= s->capacity ? "" : "  OVER");
        format_bytes(s->swapped_in_bytes, b1, sizeof b1);
        format_bytes(s->swapped_out_bytes, b2, sizeof b2);
        format_bytes(s->planned_in_bytes, b3, sizeof b3);
        format_bytes(s->planned_out_bytes, b4, sizeof b4);
        format_bytes(s->plan_swapped_bytes, b5, sizeof b5);
        fprintf(out, "  swapped      in %s, out %s on all devices; planned in "
                "%s, out %s%s\n", b1, b2, b3, b4,
                s->ok ? "" : "  MISMATCH");
        fprintf(out, "  swap plan    %s search, %s per device at the fullest "
                "tiles, simulated step %.3g s\n", v->search, b5,
                v->step_seconds);
    }
    for (i = 0; i < r->nreported; i++) {
        const kt_cpu_mismatch *m = &r->first[i];
        const kt_tensor *x = kt_graph_tensor(g, m->tensor);
        if (!x) continue;
        fprintf(out, "  mismatch %s[", x->name);
        for (d = 0; d < x->rank; d++)
            fprintf(out, "%s%lld", d ? "," : "", (long long)m->index[d]);
        fprintf(out, "] on device %lld: %.17g, serial %.17g\n",
                (long long)m->device, m->got, m->want);
    }
}

/* verify --memory: model one device's share of the lowered program with
   the executor's buffers, plan the swaps, run them in arenas of
   so->memory bytes.  Memory too small for any pool: bad input, naming the
   least that works. */
static int verify_under_memory(const kt_graph *g, const kt_plan *p,
                               const kt_program *prog,
                               kt_swap_search_kind kind,
                               const kt_swap_options *so,
                               const kt_cpu_verify_options *vo,
                               kt_cpu_report *r, kt_cpu_swap_report *srep,
                               double *step_seconds) {
    kt_swap_model m;
    kt_swap_result res;
    kt_error err;
    kt_status st;
    int rc = 0, have_model = 0;
    if (kt_swap_model_from_program(g, p, prog, NULL, &m, &err) != KT_OK) {
        rc = fail_kt("verify: swap model", &err);
        goto out;
    }
    have_model = 1;
    st = kt_swap_search(&m, kind, so, &res, &err);
    if (st == KT_ERR_INVALID) {
        kt_swap_alloc a;
        kt_error search_err = err;
        int64_t least = 0;
        int too_small = 0;
        char b1[32], b2[32];
        format_bytes(so->memory, b1, sizeof b1);
        /* "too small" only when it is: other invalid input keeps the
           search's own message */
        if (kt_swap_alloc_minimal(&m, &a, &least, &err) == KT_OK) {
            kt_swap_alloc_free(&a);
            too_small = least > so->memory;
        }
        if (too_small) {
            format_bytes(least, b2, sizeof b2);
            rc = fail(EXIT_BAD_INPUT, "--memory %s: too small for this step "
                      "on %lld device%s; the smallest memory that runs it is "
                      "%lld bytes (%s): the least pool in which every op "
                      "finds all its tensors and buffers at once", b1,
                      (long long)prog->ndev, prog->ndev == 1 ? "" : "s",
                      (long long)least, b2);
        } else {
            rc = fail_kt("verify: swap plan", &search_err);
        }
        goto out;
    }
    if (st != KT_OK) {
        rc = fail_kt("verify: swap plan", &err);
        goto out;
    }
    *step_seconds = res.step_seconds;
    st = kt_cpu_verify_swap(g, p, prog, &m, &res.plan, so->memory, vo, r,
                            srep, &err);
    kt_swap_result_free(&res);
    if (st != KT_OK) rc = fail_kt("verify: swapped run", &err);
out:
    if (have_model) kt_swap_model_free(&m);
    return rc;
}

static int cmd_verify(int argc, char **argv) {
    enum {
        O_MODEL, O_MODEL_FILE, O_DEVICES, O_FACTORS, O_PLAN, O_MEMORY,
        O_BACKEND, O_SEED, O_TOL, O_EPS, O_REFERENCE, O_JSON, O_SEARCH,
        O_GENERATIONS, O_COLD, O_TOPOLOGY, O_TOPOLOGY_FILE, O_THREADS, O_N
    };
    cli_opt o[O_N] = {
        {"model", 1, NULL},   {"model-file", 1, NULL}, {"devices", 1, NULL},
        {"factors", 1, NULL}, {"plan", 1, NULL},       {"memory", 1, NULL},
        {"backend", 1, NULL}, {"seed", 1, NULL},       {"tol", 1, NULL},
        {"eps", 1, NULL},     {"reference", 0, NULL},  {"json", 0, NULL},
        {"search", 1, NULL},  {"generations", 1, NULL}, {"cold", 0, NULL},
        {"topology", 1, NULL}, {"topology-file", 1, NULL},
        {"threads", 1, NULL}};
    verify_swap vs, *vp = NULL;
    verify_lowering vl;
    topology_arg ta;
    kt_topology topo;
    kt_machine machine;
    kt_objective objective = KT_OBJECTIVE_BYTES;
    kt_program prog;
    kt_cpu_swap_report srep;
    kt_swap_options so;
    kt_swap_search_kind kind = KT_SWAP_SEARCH_GA;
    int64_t memory = 0, gens = 10, threads = 0;
    const char *path;
    model_args ma;
    kt_cpu_verify_options vo;
    kt_cpu_report r;
    kt_factors f;
    kt_graph *g = NULL;
    kt_plan p;
    kt_error err;
    jv root;
    char label[512];
    int rc, have_plan = 0, machine_set = 0;

    memset(&root, 0, sizeof root);
    memset(&prog, 0, sizeof prog);
    rc = cli_parse("verify", argc, argv, o, O_N);
    if (rc == CLI_HELP) {
        verify_help(stdout);
        return stdout_written();
    }
    if (rc != CLI_OK) return rc;
    if (!o[O_MODEL].value && !o[O_MODEL_FILE].value)
        return fail(EXIT_BAD_INPUT, "verify: missing --model SPEC or "
                    "--model-file FILE (see 'ktile help verify')");
    if (o[O_BACKEND].value && strcmp(o[O_BACKEND].value, "cpu") != 0) {
        if (strcmp(o[O_BACKEND].value, "cuda") == 0)
            return fail(EXIT_BAD_INPUT, "--backend cuda: this ktile has no "
                        "CUDA backend (backend_cuda.h is not built yet); use "
                        "--backend cpu");
        return fail(EXIT_BAD_INPUT, "--backend '%s': expected cpu or cuda",
                    o[O_BACKEND].value);
    }
    if (o[O_MEMORY].value &&
        (parse_size(o[O_MEMORY].value, INT64_C(1) << 50, &memory) != 0 ||
         memory <= 0))
        return fail(EXIT_BAD_INPUT, "--memory '%s': expected a size from 1 "
                    "byte to 2^50 such as 512M or 16G", o[O_MEMORY].value);
    if (!o[O_MEMORY].value &&
        (o[O_SEARCH].value || o[O_GENERATIONS].value || o[O_COLD].value))
        return fail(EXIT_BAD_INPUT, "verify: --search, --generations and "
                    "--cold go with --memory SIZE");
    if (o[O_SEARCH].value) {
        if (strcmp(o[O_SEARCH].value, "none") == 0)
            kind = KT_SWAP_SEARCH_NONE;
        else if (strcmp(o[O_SEARCH].value, "ga") != 0)
            return fail(EXIT_BAD_INPUT, "--search '%s': expected ga or none "
                        "(the executor runs pool plans; odswap and geeps "
                        "allocate dynamically)", o[O_SEARCH].value);
    }
    if (kind == KT_SWAP_SEARCH_NONE && o[O_GENERATIONS].value)
        return fail(EXIT_BAD_INPUT, "verify: --generations goes with "
                    "--search ga, not none");
    if ((rc = get_topology_arg("verify", o[O_TOPOLOGY].value,
                               o[O_TOPOLOGY_FILE].value, &ta)) != 0)
        return rc;
    if (ta.value && !o[O_DEVICES].value && !o[O_FACTORS].value &&
        !o[O_PLAN].value)
        return fail(EXIT_BAD_INPUT, "verify: %s goes with --devices N (or "
                    "--factors K1,K2,..., or --plan PLAN.json)", ta.flag);
    if (o[O_GENERATIONS].value &&
        (rc = parse_generations(o[O_GENERATIONS].value, &gens)) != 0)
        return rc;
    kt_cpu_verify_defaults(&vo);
    if (o[O_SEED].value && parse_seed(o[O_SEED].value, &vo.seed) != 0)
        return EXIT_BAD_INPUT;
    if (o[O_TOL].value && (rc = parse_real("tol", o[O_TOL].value, &vo.tol)))
        return rc;
    if (o[O_EPS].value && (rc = parse_real("eps", o[O_EPS].value, &vo.eps)))
        return rc;
    vo.run.reference_only = o[O_REFERENCE].value != NULL;
    if (o[O_THREADS].value &&
        parse_int(o[O_THREADS].value, 1, KT_CPU_MAX_THREADS, &threads) != 0)
        return fail(EXIT_BAD_INPUT, "--threads '%s': expected a whole number "
                    "from 1 to %d", o[O_THREADS].value, KT_CPU_MAX_THREADS);
    vo.run.threads = (int)threads;

    if ((path = o[O_PLAN].value) != NULL) {
        if ((rc = plan_file_open(path, o[O_FACTORS].value,
                                 o[O_DEVICES].value, &root, &f)) != 0)
            return rc;
    } else {
        if (!o[O_DEVICES].value && !o[O_FACTORS].value && !memory)
            return fail(EXIT_BAD_INPUT, "verify: missing --devices N (or "
                        "--factors K1,K2,..., or --plan PLAN.json)");
        /* under a memory cap one device is the default: swapping alone */
        if ((rc = parse_factors(o[O_FACTORS].value,
                                o[O_DEVICES].value || o[O_FACTORS].value
                                    ? o[O_DEVICES].value
                                    : "1",
                                &f)) != 0)
            return rc;
    }
    /* a topology: the factors and plan sim would use, and the program
       lowered on its levels (kt_lower_on), the one sim simulates */
    if (ta.value &&
        (rc = parse_time_options(NULL, &ta, &f, path || o[O_FACTORS].value,
                                 &objective, &machine, &topo, &machine_set)) !=
            0)
        goto done;
    ma.spec = o[O_MODEL].value;
    ma.file = o[O_MODEL_FILE].value;
    if ((rc = load_model_and_plan("verify", &ma, path, &root, &f, objective,
                                  machine_set ? &machine : NULL, &g, &p)) != 0)
        goto done;
    have_plan = 1;
    if ((machine_set ? kt_lower_on(g, &p, &topo, &prog, &err)
                     : kt_lower(g, &p, &prog, &err)) != KT_OK) {
        rc = fail_kt("verify: lowering", &err);
        goto done;
    }
    verify_lowering_of(&prog, machine_set ? ta.value : NULL, &vl);
    memset(&so, 0, sizeof so);
    so.memory = memory;
    so.cold = o[O_COLD].value != NULL;
    so.generations = (int)gens;
    so.seed = vo.seed;
    if (memory) {
        if ((rc = verify_under_memory(g, &p, &prog, kind, &so, &vo, &r, &srep,
                                      &vs.step_seconds)) != 0)
            goto done;
        vs.rep = &srep;
        vs.search = kind == KT_SWAP_SEARCH_GA ? "ga" : "none";
        vp = &vs;
    } else if (kt_cpu_verify_program(g, &p, &prog, &vo, &r, &err) != KT_OK) {
        rc = fail_kt("verify", &err);
        goto done;
    }
    model_label(&ma, label, sizeof label);
    if (o[O_JSON].value) print_verify_json(stdout, g, &r, vp, &vl);
    else print_verify_text(stdout, g, &r, label, vo.tol, vo.eps, vp, &vl);
    if (stdout_written() != 0) rc = EXIT_INTERNAL;
    else if (!r.ok)
        rc = EXIT_INTERNAL; /* the check failed: 1, unlike bad input (2) */
done:
    if (vp) kt_cpu_swap_report_free(&srep);
    kt_program_free(&prog);
    if (have_plan) kt_plan_free(&p);
    if (g) kt_graph_destroy(g);
    jv_free(&root);
    return rc;
}

/* ------------------------------------------------------------------ help */

static int cmd_help(int argc, char **argv);

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage; /* full text for `ktile help NAME`, NULL: summary */
    void (*print_usage)(FILE *out); /* instead of usage when not NULL */
} command;

static const command commands[] = {
    {"cost", cmd_cost, "bytes to convert a tensor between two tilings",
     cost_usage, NULL},
    {"zoo", cmd_zoo, "list the built-in models, or print one's model file",
     zoo_usage, NULL},
    {"plan", cmd_plan, "search a plan for a model on N devices", NULL,
     plan_help},
    {"eval", cmd_eval, "price a given plan (the JSON plan prints)", NULL,
     eval_help},
    {"sim", cmd_sim, "simulate one step of a plan on a topology", NULL,
     sim_help},
    {"swap", cmd_swap, "plan swapping to host memory when a step does not fit",
     NULL, swap_help},
    {"verify", cmd_verify, "run a plan on the CPU backend and check it "
     "against the serial step", NULL, verify_help},
    {"help", cmd_help, "this text, or the usage of one command", NULL, NULL},
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

/* Command c's usage text, or the summary of one without any. */
static void print_command_usage(FILE *out, const command *c) {
    if (c->print_usage) c->print_usage(out);
    else if (c->usage) fputs(c->usage, out);
    else fprintf(out, "ktile %s: %s\n", c->name, c->summary);
}

/* `help --json` (DESIGN.md: every command takes --json): the commands
   and their summaries, or one command's usage as a string. */
static int print_help_json(FILE *out, const command *c) {
    int i;
    if (!c) {
        fputs("{\"commands\": [", out);
        for (i = 0; i < ncommands; i++) {
            fputs(i ? ", {\"name\": " : "{\"name\": ", out);
            json_string(out, commands[i].name);
            fputs(", \"summary\": ", out);
            json_string(out, commands[i].summary);
            fputc('}', out);
        }
        fputs("]}\n", out);
    } else {
        /* the usage goes through a temporary file: the printers write to
           a FILE, and C99 has no memory stream */
        FILE *tmp = tmpfile();
        long n;
        char *text;
        if (!tmp) return fail(EXIT_INTERNAL, "help: no temporary file");
        print_command_usage(tmp, c);
        n = ftell(tmp);
        text = n >= 0 ? (char *)malloc((size_t)n + 1) : NULL;
        if (!text || ferror(tmp) || fseek(tmp, 0, SEEK_SET) != 0 ||
            fread(text, 1, (size_t)n, tmp) != (size_t)n) {
            free(text);
            fclose(tmp);
            return fail(EXIT_INTERNAL, "help: cannot hold the usage text");
        }
        fclose(tmp);
        text[n] = '\0';
        fputs("{\"name\": ", out);
        json_string(out, c->name);
        fputs(", \"summary\": ", out);
        json_string(out, c->summary);
        fputs(", \"usage\": ", out);
        json_string(out, text);
        fputs("}\n", out);
        free(text);
    }
    return 0;
}

static int cmd_help(int argc, char **argv) {
    const command *c = NULL;
    int i, json = 0, rc;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            continue; /* help on help: the overview, or the command named */
        else if (argv[i][0] == '-')
            return fail(EXIT_BAD_INPUT, "help: unknown option '%s' (it takes "
                        "a command name and --json)", argv[i]);
        else if (c)
            return fail(EXIT_BAD_INPUT, "help: takes at most one command "
                        "name");
        else if (!(c = find_command(argv[i])))
            return fail(EXIT_BAD_INPUT, "help: unknown command '%s' (try "
                        "'ktile help')", argv[i]);
    }
    if (json) {
        if ((rc = print_help_json(stdout, c)) != 0) return rc;
    } else if (c) {
        print_command_usage(stdout, c);
    } else {
        print_overview(stdout);
    }
    return stdout_written();
}

/* Does the command line from argv[from] on ask for help as JSON (--help
   or -h, and --json)?  "Every command takes --json and then prints one
   JSON object", help included: such a line is `ktile help CMD --json`. */
static int asks_json_help(int argc, char **argv, int from) {
    int i, help = 0, json = 0;
    for (i = from; i < argc; i++) {
        help |= strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
        json |= strcmp(argv[i], "--json") == 0;
    }
    return help && json;
}

int main(int argc, char **argv) {
    const command *c;
    if (argc < 2)
        return fail(EXIT_BAD_INPUT, "no command given (try 'ktile help')");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (asks_json_help(argc, argv, 1)) {
            int rc = print_help_json(stdout, NULL);
            return rc != 0 ? rc : stdout_written();
        }
        print_overview(stdout);
        return stdout_written();
    }
    if (!(c = find_command(argv[1])))
        return fail(EXIT_BAD_INPUT, "unknown command '%s' (try 'ktile help')",
                    argv[1]);
    if (c->run != cmd_help && asks_json_help(argc, argv, 2)) {
        int rc = print_help_json(stdout, c);
        return rc != 0 ? rc : stdout_written();
    }
    return c->run(argc - 1, argv + 1);
}
