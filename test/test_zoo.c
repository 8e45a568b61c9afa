/* test_zoo.c -- the model zoo, and properties of the search checked on it:
     a. every zoo model builds at a small size, training and inference, and
        bad specs fail with a message that says what is wrong (too many
        layers or steps included: KT_ZOO_MAX_BLOCKS);
     b. the recursion's total (SOYBEAN Algorithm 1: the sum of what each
        cut adds) equals the flattened cost over all devices (kt_plan_eval);
     c. SOYBEAN Theorem 3 / Tofu Theorem 1 (per-cut costs never decrease),
        printed, not enforced;
     d. the DP is no worse than any baseline where it is exact (one cut);
     e. Spartan's greedy loses to the DP on the pattern of the Spartan
        thesis Figure 3.3, and the DP equals brute force there;
     f. a hand-built Megatron-LM plan of a transformer layer against the DP
        and data parallelism.

   With --megatron-json FILE it only writes the Megatron plan of (f) as a
   plan JSON (what `ktile eval --plan` reads) with the total kt_plan_eval
   gives it, for test/test_cli_megatron.sh. */
#define KT_IMPLEMENTATION
#include "../tiling.h"
#include "kt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small sizes: the whole program runs in about a second, and in under a
   minute under valgrind. */
static const char *const small_specs[] = {
    "mlp:layers=3,hidden=16,batch=8",
    "alexnet:batch=2",
    "vgg16:batch=2",
    "wresnet:depth=50,widen=1,batch=2,image=64",
    "rnn:layers=2,hidden=16,steps=3,batch=4",
    "transformer:layers=1,dmodel=16,heads=2,ffn=32,seq=4,batch=2",
};
#define NSMALL ((int)(sizeof small_specs / sizeof small_specs[0]))

static const char *small_spec(const char *name) {
    int i;
    size_t n = strlen(name);
    for (i = 0; i < NSMALL; i++)
        if (strncmp(small_specs[i], name, n) == 0 && small_specs[i][n] == ':')
            return small_specs[i];
    return NULL;
}

static kt_graph *build(const char *spec) {
    kt_graph *g = NULL;
    kt_error err;
    kt_status s = kt_zoo_build(spec, &g, &err);
    CHECKF(s == KT_OK && g != NULL, "%s: %s", spec, err.message);
    return s == KT_OK ? g : NULL;
}

static kt_status search(const kt_graph *g, const kt_factors *f,
                        kt_strategy strategy, kt_plan *p, kt_error *err) {
    kt_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.strategy = strategy;
    return kt_plan_search(g, f, &opt, p, err);
}

/* ------------------------------------------------------- a. zoo builds */

static void test_builds(void) {
    int i, infer;
    for (i = 0; kt_zoo_name(i); i++) {
        const char *name = kt_zoo_name(i), *spec = small_spec(name);
        int nops[2] = {0, 0};
        CHECKF(spec != NULL, "zoo model %s has no small spec in test_zoo.c",
               name);
        CHECK(kt_zoo_params(i) != NULL && kt_zoo_params(i)[0] != '\0');
        CHECK(kt_zoo_about(i) != NULL && kt_zoo_about(i)[0] != '\0');
        {
            /* the bare name gives the defaults (text only: cheap) */
            char *text = NULL;
            int training = -1;
            kt_error err;
            CHECKF(kt_zoo_text(name, &text, &training, &err) == KT_OK,
                   "%s: %s", name, err.message);
            CHECK(training == 1 && text != NULL && strstr(text, "\nloss "));
            KT_FREE(text);
        }
        if (!spec) continue;
        for (infer = 0; infer < 2; infer++) {
            char full[256], *text = NULL;
            int training = -1, t, ngrad = 0, nweights = 0, nupdated = 0;
            kt_error err;
            kt_graph *g;
            snprintf(full, sizeof full, "%s%s", spec, infer ? ",infer=1" : "");
            CHECKF(kt_zoo_text(full, &text, &training, &err) == KT_OK,
                   "%s: %s", full, err.message);
            CHECK(training == !infer);
            KT_FREE(text);
            if (!(g = build(full))) continue;
            for (t = 0; t < kt_graph_tensor_count(g); t++) {
                const kt_tensor *x = kt_graph_tensor(g, t);
                ngrad += x->kind == KT_GRADIENT;
                if (x->kind == KT_WEIGHT) {
                    nweights++;
                    nupdated += x->updater >= 0;
                }
            }
            nops[infer] = kt_graph_op_count(g);
            CHECKF(nweights > 0 && nops[infer] > 0, "%s", full);
            if (infer) {
                CHECKF(ngrad == 0 && nupdated == 0 && kt_graph_loss(g) < 0,
                       "%s: %d gradients, %d updates", full, ngrad,
                       nupdated);
            } else {
                CHECKF(ngrad > 0 && nupdated == nweights &&
                           kt_graph_loss(g) >= 0,
                       "%s: %d gradients, %d of %d weights updated", full,
                       ngrad, nupdated, nweights);
            }
            kt_graph_destroy(g);
        }
        CHECKF(nops[0] > nops[1], "%s: training has %d ops, inference %d",
               name, nops[0], nops[1]);
    }
    CHECK(i == NSMALL);
    CHECK(kt_zoo_name(i) == NULL && kt_zoo_name(-1) == NULL);
    CHECK(kt_zoo_params(i) == NULL && kt_zoo_about(i) == NULL);
}

static void test_bad_specs(void) {
    static const struct {
        const char *spec, *message;
    } bad[] = {
        {"nosuch:batch=2", "unknown model 'nosuch'"},
        {"", "empty"},
        {"mlp:depth=3", "unknown parameter depth"},
        /* a known key's prefix is not that key (a mutation-testing pass) */
        {"mlp:layer=3", "unknown parameter layer"},
        {"mlp:layers", "key=value"},
        {"mlp:layers=abc", "layers needs a whole number (digits only)"},
        {"mlp:layers=3x", "layers needs a whole number (digits only)"},
        {"mlp:batch=-4", "batch needs a whole number (digits only)"},
        {"mlp:layers=+2", "layers needs a whole number (digits only)"},
        {"mlp:layers= 2", "layers needs a whole number (digits only)"},
        /* the last of two used to win silently */
        {"mlp:layers=2,layers=3", "zoo mlp: layers is given twice"},
        /* past the bound: said so, not "needs a non-negative integer" */
        {"mlp:batch=2199023255553", "batch=2199023255553 is more than 2^40"},
        {"mlp:layers=0", "layers must be at least 1"},
        {"wresnet:depth=34", "depth 34 is not 26, 50, 101 or 152"},
        /* channel counts whose int64 products would overflow */
        {"wresnet:width=1099511627776,widen=1099511627776",
         "width 1099511627776 x widen 1099511627776 x 32 channels is more "
         "than 2^40"},
        {"wresnet:width=1099511627776", "x 32 channels is more than 2^40"},
        /* an image too small for the conv/pool stack names the first empty
           layer and the smallest image that works */
        {"wresnet:depth=50,image=2", "zoo wresnet: image 2 is too small: "
                                     "layer pool has no pixels left (the "
                                     "smallest image is 3)"},
        {"alexnet:image=38", "zoo alexnet: image 38 is too small: layer p5 "
                             "has no pixels left (the smallest image is 39)"},
        {"alexnet:image=10", "zoo alexnet: image 10 is too small: layer a1 "
                             "has no pixels left (the smallest image is 39)"},
        {"vgg16:image=31,width=2", "zoo vgg16: image 31 is too small: layer "
                                   "p13 has no pixels left (the smallest "
                                   "image is 32)"},
        {"alexnet:width=0", "zoo alexnet: width must be at least 1"},
        {"alexnet:fc=0", "zoo alexnet: fc must be at least 1"},
        {"vgg16:classes=0", "zoo vgg16: classes must be at least 1"},
        {"wresnet:width=0", "zoo wresnet: width must be at least 1"},
        {"wresnet:image=0", "zoo wresnet: image must be at least 1"},
        {"wresnet:fc=16", "zoo wresnet: unknown parameter fc"},
        {"alexnet:depth=8", "zoo alexnet: unknown parameter depth"},
        {"transformer:dmodel=100,heads=16", "dmodel 100 is not a multiple "
                                            "of heads 16"},
        /* a statement block per layer (and step): bounded, where 2^40
           layers ran for minutes, then took gigabytes (fuzzing) */
        {"mlp:layers=1099511627776", "zoo mlp: 1099511627776 layers, more "
                                     "than 1024 blocks (KT_ZOO_MAX_BLOCKS)"},
        {"rnn:layers=2,hidden=2,steps=513,batch=1",
         "zoo rnn: 2 layers x 513 steps, more than 1024 blocks"},
        {"rnn:layers=1099511627776,steps=1099511627776", "x 1099511627776 "
                                                         "steps, more than"},
        {"transformer:layers=1025,dmodel=2,heads=1,ffn=2,seq=2,batch=1",
         "zoo transformer: 1025 layers, more than 1024 blocks"},
        {"rnn:layers=1,hidden=2,steps=2000,batch=1",
         "zoo rnn: 1 layer x 2000 steps, more than 1024 blocks"},
        /* empty parameters (the first two were taken) and hints */
        {"mlp:", "zoo mlp: an empty parameter (nothing after ':')"},
        {"mlp:layers=3,", "zoo mlp: an empty parameter (nothing after ',')"},
        {"mlp:,,", "zoo mlp: an empty parameter"},
        {"mlp:foo=1", "(known: layers=5,hidden=300,batch=400, infer=0|1)"},
        {"net.txt", "unknown model 'net.txt' (mlp alexnet vgg16 wresnet rnn "
                    "transformer); a model file is read by "
                    "kt_graph_load_file (ktile: --model-file)"},
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static char sentinel;
        kt_graph *g = (kt_graph *)(void *)&sentinel; /* must become NULL */
        char *text = (char *)"x";
        int training = -1;
        kt_error err;
        kt_status s = kt_zoo_build(bad[i].spec, &g, &err);
        CHECKF(s != KT_OK && g == NULL, "'%s' built", bad[i].spec);
        CHECKF(s == KT_OK || strstr(err.message, bad[i].message) != NULL,
               "'%s': message '%s' lacks '%s'", bad[i].spec, err.message,
               bad[i].message);
        s = kt_zoo_text(bad[i].spec, &text, &training, &err);
        CHECKF(s != KT_OK && text == NULL, "'%s' gave a text", bad[i].spec);
    }
    /* the most blocks there may be still build */
    {
        kt_graph *g = NULL;
        kt_error err;
        CHECKF(kt_zoo_build("rnn:layers=2,hidden=2,steps=512,batch=1", &g,
                            &err) == KT_OK, "%s", err.message);
        kt_graph_destroy(g);
    }
}

/* The convolution models' size parameters: the defaults build exactly the
   graphs they built before the parameters existed (the op, tensor and
   weight counts recorded then; weight elements from the architectures,
   computed here), and small sizes have the layers the parameters say. */
static int64_t weight_elements(const kt_graph *g, int *nweights) {
    int64_t n = 0;
    int t, d;
    *nweights = 0;
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        int64_t e = 1;
        if (x->kind != KT_WEIGHT) continue;
        for (d = 0; d < x->rank; d++) e *= x->shape[d];
        n += e;
        ++*nweights;
    }
    return n;
}

static int64_t shape_of(const kt_graph *g, const char *name, int d) {
    int t = kt_graph_find_tensor(g, name);
    CHECKF(t >= 0, "no tensor %s", name);
    return t >= 0 && d < kt_graph_tensor(g, t)->rank
               ? kt_graph_tensor(g, t)->shape[d] : -1;
}

static void test_conv_params(void) {
    /* AlexNet at 227 px with 2x2 pooling: 55, 27, 27, 13, 13, 6 pixels */
    const int64_t alexnet = 96 * 3 * 121 + 256 * 96 * 25 + 384 * 256 * 9 +
                            384 * 384 * 9 + 256 * 384 * 9 +
                            256 * 6 * 6 * 4096 + 4096 * 4096 + 4096 * 1000;
    /* VGG-16 at 224 px: 7 pixels left after five poolings */
    const int64_t vgg16 = 64 * 3 * 9 + 64 * 64 * 9 + 128 * 64 * 9 +
                          128 * 128 * 9 + 256 * 128 * 9 + 2 * 256 * 256 * 9 +
                          512 * 256 * 9 + 5 * 512 * 512 * 9 +
                          512 * 7 * 7 * 4096 + 4096 * 4096 + 4096 * 1000;
    static const struct {
        const char *spec, *explicit_spec;
        int ops, tensors, weights; /* recorded before the parameters */
    } defaults[] = {
        {"alexnet", "alexnet:batch=128,image=227,width=32,fc=4096,"
                    "classes=1000", 53, 56, 8},
        {"alexnet:infer=1", NULL, 19, 29, 8},
        {"vgg16", "vgg16:batch=32,image=224,width=64,fc=4096,classes=1000",
         105, 108, 16},
        {"vgg16:infer=1", NULL, 37, 55, 16},
        {"wresnet", "wresnet:depth=50,widen=4,batch=8,image=224,width=64,"
                    "classes=1000", 351, 354, 54},
        {"wresnet:infer=1", NULL, 106, 162, 54},
        {"wresnet:depth=101,image=64", NULL, 691, 694, 105},
        {"wresnet:depth=152,widen=10", NULL, 1031, 1034, 156},
    };
    size_t i;
    kt_graph *g;
    int nw;
    for (i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        if (!(g = build(defaults[i].spec))) continue;
        CHECKF(kt_graph_op_count(g) == defaults[i].ops &&
                   kt_graph_tensor_count(g) == defaults[i].tensors,
               "%s: %d ops, %d tensors (before: %d, %d)", defaults[i].spec,
               kt_graph_op_count(g), kt_graph_tensor_count(g),
               defaults[i].ops, defaults[i].tensors);
        weight_elements(g, &nw);
        CHECK_EQ_I64(nw, defaults[i].weights);
        if (i == 0) CHECK_EQ_I64(weight_elements(g, &nw), alexnet);
        if (i == 2) CHECK_EQ_I64(weight_elements(g, &nw), vgg16);
        kt_graph_destroy(g);
        if (defaults[i].explicit_spec) {
            /* the listed defaults are the defaults */
            char *a = NULL, *b = NULL;
            int ta, tb;
            kt_error err;
            CHECK(kt_zoo_text(defaults[i].spec, &a, &ta, &err) == KT_OK);
            CHECK(kt_zoo_text(defaults[i].explicit_spec, &b, &tb, &err) ==
                  KT_OK);
            CHECKF(a && b && strcmp(a, b) == 0, "%s differs from %s",
                   defaults[i].spec, defaults[i].explicit_spec);
            KT_FREE(a);
            KT_FREE(b);
        }
    }
    /* The smallest AlexNet: 39 px leave 8, 4, 4, 2, 2, 1 pixels. */
    if ((g = build("alexnet:batch=3,image=39,width=2,fc=16,classes=10"))) {
        CHECK_EQ_I64(shape_of(g, "x", 3), 39);
        CHECK_EQ_I64(shape_of(g, "a1", 1), 6);
        CHECK_EQ_I64(shape_of(g, "a1", 2), 8);
        CHECK_EQ_I64(shape_of(g, "a5", 1), 16);
        CHECK_EQ_I64(shape_of(g, "p5", 3), 1);
        CHECK_EQ_I64(shape_of(g, "W6", 0), 16);
        CHECK_EQ_I64(shape_of(g, "W6", 3), 16);
        CHECK_EQ_I64(shape_of(g, "a8", 1), 10);
        CHECK_EQ_I64(shape_of(g, "labels", 0), 3);
        CHECK_EQ_I64(kt_graph_op_count(g), 53);
        kt_graph_destroy(g);
    }
    /* VGG-16 at 32 px: 1 pixel after the fifth pooling. */
    if ((g = build("vgg16:batch=2,image=32,width=2,fc=8,classes=5"))) {
        CHECK_EQ_I64(shape_of(g, "a1", 1), 2);
        CHECK_EQ_I64(shape_of(g, "a13", 1), 16);
        CHECK_EQ_I64(shape_of(g, "p13", 3), 1);
        CHECK_EQ_I64(shape_of(g, "W14", 0), 16);
        CHECK_EQ_I64(shape_of(g, "W15", 1), 8);
        CHECK_EQ_I64(shape_of(g, "a16", 1), 5);
        CHECK_EQ_I64(kt_graph_op_count(g), 105);
        kt_graph_destroy(g);
    }
    /* Wide ResNet-26: two blocks per stage, so a stem, 8 x 3 convolutions,
       4 projections (every stage's first block) and the classifier; 32 px
       leave 16, 8 (pool), 8, 4, 2, 1 pixels. */
    if ((g = build("wresnet:depth=26,widen=2,width=3,batch=2,image=32,"
                   "classes=7"))) {
        weight_elements(g, &nw);
        CHECK_EQ_I64(nw, 1 + 8 * 3 + 4 + 1);
        CHECK_EQ_I64(shape_of(g, "stem", 1), 6);   /* width x widen */
        CHECK_EQ_I64(shape_of(g, "b8b", 1), 48);   /* (3 << 3) x 2 */
        CHECK_EQ_I64(shape_of(g, "r8", 1), 192);
        CHECK_EQ_I64(shape_of(g, "r8", 3), 1);
        CHECK_EQ_I64(shape_of(g, "pool", 3), 8);
        CHECK_EQ_I64(shape_of(g, "Wfc", 1), 7);
        CHECK(kt_graph_find_tensor(g, "ws1") >= 0 &&
              kt_graph_find_tensor(g, "ws2") < 0 && /* identity */
              kt_graph_find_tensor(g, "ws7") >= 0);
        kt_graph_destroy(g);
    }
    /* The smallest images build (and one less is refused above). */
    if ((g = build("wresnet:depth=26,width=1,widen=1,batch=1,image=3,"
                   "classes=2"))) {
        CHECK_EQ_I64(shape_of(g, "r8", 3), 1);
        kt_graph_destroy(g);
    }
}

/* ---------------------------------- b, c, d. search properties on the zoo */

typedef struct config {
    const char *factors; /* NULL: default factors of devices */
    int devices;
} config;

static const config configs[] = {{NULL, 1}, {NULL, 2}, {NULL, 3}, {NULL, 4},
                                 {NULL, 6}, {NULL, 8}, {"4,2", 8}};
#define NCONFIGS ((int)(sizeof configs / sizeof configs[0]))

static const struct {
    kt_strategy strategy;
    const char *name;
} baselines[] = {
    {KT_STRATEGY_DATA, "data"},       {KT_STRATEGY_MODEL, "model"},
    {KT_STRATEGY_GREEDY, "greedy"},   {KT_STRATEGY_SPARTAN, "spartan"},
    {KT_STRATEGY_EQUALCHOP, "equalchop"},
};
#define NBASELINES ((int)(sizeof baselines / sizeof baselines[0]))

static void config_factors(const config *c, kt_factors *f) {
    kt_error err;
    kt_status s = c->factors ? kt_factors_parse(c->factors, f, &err)
                             : kt_factors_default(c->devices, f, &err);
    KT_ASSERT(s == KT_OK);
    (void)s;
}

static void config_name(const config *c, char *buf, size_t cap) {
    if (c->factors) snprintf(buf, cap, "%d (%s)", c->devices, c->factors);
    else snprintf(buf, cap, "%d", c->devices);
}

static void test_search_properties(void) {
    int m, c, b, i;
    int theorem_plans = 0, theorem_holds = 0, beaten = 0, multi = 0;
    int equal_plans = 0, equal_holds = 0;
    for (m = 0; m < NSMALL; m++) {
        kt_graph *g = build(small_specs[m]);
        if (!g) continue;
        for (c = 0; c < NCONFIGS; c++) {
            kt_factors f;
            kt_plan p;
            kt_error err;
            int64_t total, cut[KT_MAX_CUTS], sum = 0;
            char cname[32];
            int nondecreasing = 1;
            config_factors(&configs[c], &f);
            config_name(&configs[c], cname, sizeof cname);
            if (search(g, &f, KT_STRATEGY_DP, &p, &err) != KT_OK) {
                CHECKF(0, "%s on %s: dp: %s", small_specs[m], cname,
                       err.message);
                continue;
            }
            /* b. What the recursion adds up cut by cut is what the plan
               costs flattened over all devices. */
            total = p.total_bytes;
            memcpy(cut, p.cut_bytes, sizeof cut);
            for (i = 0; i < f.count; i++) sum += cut[i];
            CHECKF(sum == total, "%s on %s: cuts sum to %lld, total %lld",
                   small_specs[m], cname, (long long)sum, (long long)total);
            CHECKF(kt_plan_eval(g, &p, &err) == KT_OK, "%s", err.message);
            CHECKF(p.total_bytes == total, "%s on %s: search %lld, eval %lld",
                   small_specs[m], cname, (long long)total,
                   (long long)p.total_bytes);
            for (i = 0; i < f.count; i++)
                CHECKF(p.cut_bytes[i] == cut[i], "%s on %s: cut %d: search "
                       "%lld, eval %lld", small_specs[m], cname, i + 1,
                       (long long)cut[i], (long long)p.cut_bytes[i]);
            if (f.count == 0) CHECK_EQ_I64(total, 0);

            /* c. Tofu Theorem 1: delta_i <= delta_{i+1}.  The papers
               state it for cuts of 2 (SOYBEAN) or equal factors; with
               factors 3,2 or 4,2 the first cut has more groups to pay. */
            if (f.count >= 2) {
                int equal = 1;
                for (i = 0; i + 1 < f.count; i++) {
                    if (cut[i] > cut[i + 1]) nondecreasing = 0;
                    if (f.k[i] != f.k[i + 1]) equal = 0;
                }
                theorem_plans++;
                theorem_holds += nondecreasing;
                equal_plans += equal;
                equal_holds += equal && nondecreasing;
                printf("theorem 1 %-5s %-60s on %-9s cuts", nondecreasing
                       ? "holds" : "fails", small_specs[m], cname);
                for (i = 0; i < f.count; i++)
                    printf(" %lld", (long long)cut[i]);
                printf("\n");
            }

            /* d. DP against the baselines: at one cut the DP is exact, so
               it is no worse than any of them; over several cuts each cut
               is optimal given the earlier ones, which a baseline may
               beat. */
            for (b = 0; b < NBASELINES && f.count > 0; b++) {
                kt_plan q;
                if (search(g, &f, baselines[b].strategy, &q, &err) != KT_OK) {
                    /* a batch of 2 cannot be split 3 or 4 ways */
                    CHECKF(configs[c].devices != 2, "%s on %s: %s: %s",
                           small_specs[m], cname, baselines[b].name,
                           err.message);
                    printf("baseline %s on %s, %s: none (%s)\n",
                           baselines[b].name, cname, small_specs[m],
                           err.message);
                    continue;
                }
                if (f.count == 1) {
                    CHECKF(total <= q.total_bytes, "%s on %s: dp %lld > %s "
                           "%lld", small_specs[m], cname, (long long)total,
                           baselines[b].name, (long long)q.total_bytes);
                } else {
                    multi++;
                    if (q.total_bytes < total) {
                        beaten++;
                        printf("baseline %s beats dp on %s, %s: %lld < "
                               "%lld\n", baselines[b].name, cname,
                               small_specs[m], (long long)q.total_bytes,
                               (long long)total);
                    }
                }
                kt_plan_free(&q);
            }
            kt_plan_free(&p);
        }
        kt_graph_destroy(g);
    }
    printf("theorem 1 holds on %d of %d plans (%d of %d with equal "
           "factors)\n", theorem_holds, theorem_plans, equal_holds,
           equal_plans);
    printf("a baseline beats the DP on %d of %d multi-cut comparisons\n",
           beaten, multi);
}

/* ------------------------------------- e. Spartan thesis, Figure 3.3 */

/* The figure's program:  C = A + B;  D = A^T + B^T;  E = C + D, with A and
   B computed (here from inputs a0, b0 by a relu).  The transposes make C
   and D see A and B in opposite orientations, so some conversion is
   unavoidable; the best plan pays it once.

   Written as above, with the transposes inside D's statement, ktile's
   Spartan ties with the DP: D's operator reads A and B by rows, splits
   its own j and converts only its output, one conversion like the
   optimum's.  The thesis's greedy loses for two reasons: (1) a transpose
   is an operator of its own there (a view, which FindCost follows), so no
   single conversion absorbs both; (2) it decides C and D first (the most
   connected), both row-wise as each alone costs nothing that way, and then
   A's and B's transposes both conflict.  ktile's Spartan takes tensors
   largest first (Tofu 7.3's description of Spartan), ties in declaration
   order: with explicit transposes but equal sizes it decides A and B
   first and still finds the optimum.  The variant tested below therefore
   writes the transposes At, Bt as statements of their own and stores D in
   float64, the largest tensor, so the greedy starts from D as the
   thesis's starts from C and D.  D row-wise costs nothing at E (C is
   still undecided); what follows must pay on both the A and the B side:
   two f32 half-matrix conversions at k = 2 (At and Bt), or D's output
   once at 8 bytes an element, the same.  The optimum pays one f32
   conversion (C's): Spartan moves twice what the DP does. */
static const char *const fig33_fused =
    "input a0[8,8]\n"
    "input b0[8,8]\n"
    "A[i,j] = relu(a0[i,j])\n"
    "B[i,j] = relu(b0[i,j])\n"
    "C[i,j] = A[i,j] + B[i,j]\n"
    "D[i,j] = A[j,i] + B[j,i]\n"
    "E[i,j] = C[i,j] + D[i,j]\n";

static kt_graph *fig33_views(void) {
    static const char *const statements[] = {
        "A[i,j] = relu(a0[i,j])", "B[i,j] = relu(b0[i,j])",
        "C[i,j] = A[i,j] + B[i,j]", "At[i,j] = A[j,i]", "Bt[i,j] = B[j,i]",
        "D[i,j] = At[i,j] + Bt[i,j]", "E[i,j] = C[i,j] + D[i,j]"};
    const int64_t shape[2] = {8, 8};
    kt_graph *g = NULL;
    kt_error err;
    kt_status s = kt_graph_create(&g, &err);
    size_t i;
    /* D declared ahead as float64; its statement produces it later. */
    if (s == KT_OK)
        s = kt_graph_add_tensor(g, "D", 2, shape, 8, KT_ACTIVATION, &err);
    if (s == KT_OK)
        s = kt_graph_add_tensor(g, "a0", 2, shape, 4, KT_INPUT, &err);
    if (s == KT_OK)
        s = kt_graph_add_tensor(g, "b0", 2, shape, 4, KT_INPUT, &err);
    for (i = 0; s == KT_OK && i < sizeof statements / sizeof *statements; i++)
        s = kt_graph_add_op(g, statements[i], (int)i + 1, &err);
    if (s == KT_OK) s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_OK, "figure 3.3 graph: %s", err.message);
    if (s != KT_OK) {
        kt_graph_destroy(g);
        return NULL;
    }
    return g;
}

static void test_spartan_fig33(void) {
    kt_graph *fused = NULL, *views = fig33_views();
    kt_error err;
    int k, v;
    CHECKF(kt_graph_create(&fused, &err) == KT_OK &&
               kt_graph_parse(fused, fig33_fused, strlen(fig33_fused), &err)
                   == KT_OK,
           "%s", err.message);
    for (v = 0; v < 2; v++) {
        kt_graph *g = v ? views : fused;
        if (!g) continue;
        for (k = 2; k <= 3; k++) {
            kt_factors f;
            kt_plan dp, bf, sp;
            kt_tiling rows, cols;
            const int64_t shape[2] = {8, 8};
            int64_t once = -1; /* one 8x8 f32 matrix from rows to columns */
            kt_factors_default(k, &f, &err);
            kt_tiling_parse("S0", &rows, &err);
            kt_tiling_parse("S1", &cols, &err);
            if (kt_tiling_conversion_cost(2, shape, 4, &f, &rows, &cols, &once,
                                          NULL, &err) != KT_OK ||
                search(g, &f, KT_STRATEGY_DP, &dp, &err) != KT_OK ||
                search(g, &f, KT_STRATEGY_BRUTEFORCE, &bf, &err) != KT_OK ||
                search(g, &f, KT_STRATEGY_SPARTAN, &sp, &err) != KT_OK) {
                CHECKF(0, "figure 3.3, k = %d: %s", k, err.message);
                continue;
            }
            printf("spartan fig 3.3 %s, k = %d: dp %lld, bruteforce %lld, "
                   "spartan %lld\n", v ? "(transposes as views, D f64)"
                                       : "(fused transposes)", k,
                   (long long)dp.total_bytes, (long long)bf.total_bytes,
                   (long long)sp.total_bytes);
            CHECK_EQ_I64(dp.total_bytes, bf.total_bytes);
            /* The optimum converts one matrix between orientations once:
               128 bytes at k = 2, 168 at k = 3 (blocks of 2, 3, 3 rows:
               64 - 2*2 - 3*3 - 3*3 = 42 elements). */
            CHECK_EQ_I64(once, k == 2 ? 128 : 168);
            CHECK_EQ_I64(dp.total_bytes, once);
            CHECK(sp.total_bytes >= dp.total_bytes);
            if (v) CHECK_EQ_I64(sp.total_bytes, 2 * once);
            kt_plan_free(&dp);
            kt_plan_free(&bf);
            kt_plan_free(&sp);
        }
    }
    kt_graph_destroy(fused);
    kt_graph_destroy(views);
}

/* ------------------------------------------------ f. Megatron-LM */

/* One transformer layer with a wide model and few tokens: the regime
   Megatron's tensor parallelism was made for. */
#define MEGATRON_SPEC \
    "transformer:layers=1,dmodel=256,heads=8,ffn=1024,seq=4,batch=2"

/* Megatron-LM (Shoeybi et al. 2019) on the zoo's transformer, 2 devices:
   Wq/Wk/Wv[d,h,e] split by heads (dim 1, column-parallel), Wo[h,e,d] by
   heads (dim 0, row-parallel), W1[d,f] by columns, W2[f,d] by rows.  The
   attention works per head: q/k/v/at[b,s,h,e] split on h (dim 2),
   sc/mx/ex/den/pr[b,h,...] on h (dim 1); the MLP's f/g[b,s,f] on f.  The
   rest (x, the residual r, o and m after their all-reduce) is replicated.
   A gradient or optimizer tensor is tiled like the tensor it belongs to
   (kt_tensor.of).  Returns the dimension, or -1 for replicated. */
static int megatron_dim(const kt_graph *g, int t) {
    static const struct {
        const char *base;
        int dim;
    } rule[] = {{"Wq", 1}, {"Wk", 1}, {"Wv", 1}, {"Wo", 0}, {"W1_", 1},
                {"W2_", 0}, {"q", 2},  {"k", 2},  {"v", 2},  {"at", 2},
                {"sc", 1},  {"mx", 1}, {"ex", 1}, {"den", 1}, {"pr", 1},
                {"f", 2},   {"g", 2}};
    const kt_tensor *x = kt_graph_tensor(g, t);
    char base[KT_NAME_MAX];
    size_t n, i;
    while (x->of >= 0) x = kt_graph_tensor(g, x->of);
    snprintf(base, sizeof base, "%s", x->name);
    n = strlen(base);
    while (n > 0 && base[n - 1] >= '0' && base[n - 1] <= '9') base[--n] = 0;
    for (i = 0; i < sizeof rule / sizeof rule[0]; i++)
        if (strcmp(base, rule[i].base) == 0) return rule[i].dim;
    return -1;
}

/* Gives every operator, cut by cut, the split variable that makes it
   cheapest given the tensors' tilings (kt_plan_op_cost of the plan
   truncated to that cut).  Like the search, an operator computes a cut
   redundantly (KT_SPLIT_REPLICATE) only when no variable can be split,
   unless allow_replicate lets it choose to. */
static kt_status pick_op_strategies(const kt_graph *g, kt_plan *p,
                                    int allow_replicate, kt_error *err) {
    int o, i, v, j;
    for (o = 0; o < kt_graph_op_count(g); o++) {
        const kt_op *op = kt_graph_op(g, o);
        int *split = &p->split[o * KT_MAX_CUTS];
        for (i = 0; i < p->f.count; i++) {
            int best = KT_SPLIT_REPLICATE, any = 0;
            int64_t best_bytes = -1, bytes;
            for (v = -1; v < op->nvars; v++) {
                if (v >= 0) {
                    int64_t parts = p->f.k[i];
                    for (j = 0; j < i; j++)
                        if (split[j] == v) parts *= p->f.k[j];
                    if (!op->var[v].splittable || parts > op->var[v].extent)
                        continue;
                    any = 1;
                }
                kt_status s;
                split[i] = v;
                if ((s = kt_plan_op_cost(g, p, o, i + 1, &bytes, err)) != KT_OK)
                    return s;
                if (best_bytes < 0 || bytes < best_bytes ||
                    (best == KT_SPLIT_REPLICATE && !allow_replicate)) {
                    best_bytes = bytes;
                    best = v;
                }
            }
            if (!any) best = KT_SPLIT_REPLICATE;
            split[i] = best;
        }
    }
    return KT_OK;
}

/* The Megatron plan of g on factors f, priced by kt_plan_eval. */
static kt_status megatron_plan(const kt_graph *g, const kt_factors *f,
                               int allow_replicate, kt_plan *p,
                               kt_error *err) {
    int t;
    kt_status s = kt_plan_init(p, g, f, err);
    for (t = 0; s == KT_OK && t < kt_graph_tensor_count(g); t++) {
        char text[16];
        int d = megatron_dim(g, t);
        if (d < 0) snprintf(text, sizeof text, "R");
        else snprintf(text, sizeof text, "S%d", d);
        s = kt_tiling_parse(text, &p->tiling[t], err);
    }
    if (s == KT_OK) s = pick_op_strategies(g, p, allow_replicate, err);
    if (s == KT_OK) s = kt_plan_eval(g, p, err);
    if (s != KT_OK) kt_plan_free(p);
    return s;
}

static void test_megatron(void) {
    kt_graph *g = build(MEGATRON_SPEC);
    kt_factors f;
    kt_plan dp, data, mega, mega_rep;
    kt_error err;
    int t, ok;
    if (!g) return;
    kt_factors_default(2, &f, &err);
    ok = search(g, &f, KT_STRATEGY_DP, &dp, &err) == KT_OK;
    CHECKF(ok, "dp: %s", err.message);
    if (ok && search(g, &f, KT_STRATEGY_DATA, &data, &err) != KT_OK) {
        CHECKF(0, "data: %s", err.message);
        kt_plan_free(&dp);
        ok = 0;
    }
    if (ok && megatron_plan(g, &f, 0, &mega, &err) != KT_OK) {
        CHECKF(0, "megatron: %s", err.message);
        kt_plan_free(&dp);
        kt_plan_free(&data);
        ok = 0;
    }
    if (!ok) {
        kt_graph_destroy(g);
        return;
    }
    /* the rules reached the tensors they name */
    t = kt_graph_find_tensor(g, "Wq1");
    CHECK(t >= 0 && mega.tiling[t].cut[0] == 1);
    t = kt_graph_find_tensor(g, "dWo1");
    CHECK(t >= 0 && mega.tiling[t].cut[0] == 0);
    t = kt_graph_find_tensor(g, "pr1");
    CHECK(t >= 0 && mega.tiling[t].cut[0] == 1);
    t = kt_graph_find_tensor(g, "r1");
    CHECK(t >= 0 && mega.tiling[t].cut[0] == KT_CUT_R);

    printf("megatron %s on 2 devices: dp %lld, megatron %lld, data %lld\n",
           MEGATRON_SPEC, (long long)dp.total_bytes,
           (long long)mega.total_bytes, (long long)data.total_bytes);
    /* At one cut the DP is exact over tilings and split variables, and the
       Megatron plan is one of those: the DP cannot be worse. */
    CHECK(dp.total_bytes <= mega.total_bytes);
    CHECK(dp.total_bytes <= data.total_bytes);
    /* Weights dominate this layer: Megatron moves activations only, data
       parallelism all-reduces every weight gradient. */
    CHECK(mega.total_bytes < data.total_bytes);

    /* Megatron itself computes the residual adds on both devices; that is
       outside ktile's strategies (DESIGN.md: replicated computation is
       not a strategy), so it is shown, not compared. */
    if (megatron_plan(g, &f, 1, &mega_rep, &err) == KT_OK) {
        printf("megatron with replicated element-wise ops (outside the "
               "DP's space): %lld\n", (long long)mega_rep.total_bytes);
        CHECK(mega_rep.total_bytes <= mega.total_bytes);
        kt_plan_free(&mega_rep);
    } else {
        CHECKF(0, "megatron, replicated: %s", err.message);
    }
    kt_plan_free(&dp);
    kt_plan_free(&data);
    kt_plan_free(&mega);
    kt_graph_destroy(g);
}

/* Writes the Megatron plan as `ktile eval --plan` reads it, with the
   totals kt_plan_eval gave it (eval ignores keys it does not read). */
static int write_megatron_json(const char *path) {
    kt_graph *g = NULL;
    kt_factors f;
    kt_plan p;
    kt_error err;
    FILE *out;
    int t, o, rc = 0;
    if (kt_zoo_build(MEGATRON_SPEC, &g, &err) != KT_OK ||
        kt_factors_default(2, &f, &err) != KT_OK ||
        megatron_plan(g, &f, 0, &p, &err) != KT_OK) {
        fprintf(stderr, "test_zoo: %s\n", err.message);
        kt_graph_destroy(g);
        return 1;
    }
    if (!(out = fopen(path, "w"))) {
        fprintf(stderr, "test_zoo: cannot write %s\n", path);
        rc = 1;
    } else {
        char buf[KT_MAX_CUTS * (KT_NAME_MAX + 1) + 2];
        fprintf(out, "{\"spec\": \"%s\", \"devices\": 2, \"factors\": [2], "
                "\"total_bytes\": %lld, \"cut_bytes\": [%lld],\n"
                " \"tensors\": [", MEGATRON_SPEC, (long long)p.total_bytes,
                (long long)p.cut_bytes[0]);
        /* names are identifiers (and W.update): nothing to escape */
        for (t = 0; t < kt_graph_tensor_count(g); t++) {
            kt_tiling_format(&p.tiling[t], buf, sizeof buf);
            fprintf(out, "%s\n  {\"name\": \"%s\", \"tiling\": \"%s\"}",
                    t ? "," : "", kt_graph_tensor(g, t)->name, buf);
        }
        fprintf(out, "],\n \"ops\": [");
        for (o = 0; o < kt_graph_op_count(g); o++) {
            kt_plan_format_split(g, &p, o, buf, sizeof buf);
            fprintf(out, "%s\n  {\"name\": \"%s\", \"strategy\": \"%s\"}",
                    o ? "," : "", kt_graph_op(g, o)->name, buf);
        }
        fprintf(out, "]}\n");
        if (fclose(out) != 0) rc = 1;
    }
    kt_plan_free(&p);
    kt_graph_destroy(g);
    return rc;
}

/* Autodiff adds the loss gradient while the tensor array may move: a
   size at which it grows right then (found by AddressSanitizer in a
   use-after-free; `make sanitize` catches a regression). */
static void test_autodiff_growth(void) {
    kt_graph *g = NULL;
    kt_error err;
    CHECKF(kt_zoo_build("rnn:layers=1,hidden=6,steps=2,batch=5", &g, &err) ==
           KT_OK, "%s", err.message);
    kt_graph_destroy(g);
}

/* The LSTM cell (Hochreiter and Schmidhuber; Tofu 7's RNN): the input,
   forget and output gates are sigmoids, the candidate g a tanh; c = f * c'
   + i * g, h = o * tanh(c). */
static void test_lstm_cell(void) {
    static const char *const want[] = {
        "i_l1_t0[n,k] = sigmoid(zi_l1_t0[n,k])\n",
        "f_l1_t0[n,k] = sigmoid(zf_l1_t0[n,k])\n",
        "o_l1_t0[n,k] = sigmoid(zo_l1_t0[n,k])\n",
        "g_l1_t0[n,k] = tanh(zg_l1_t0[n,k])\n",
        ("c_l1_t0[n,k] = f_l1_t0[n,k] * c_l1_init[n,k] + "
         "i_l1_t0[n,k] * g_l1_t0[n,k]\n"),
        "x_l1_t0[n,k] = o_l1_t0[n,k] * tanh(c_l1_t0[n,k])\n"};
    char *text = NULL;
    int training, i;
    kt_error err;
    CHECKF(kt_zoo_text("rnn:layers=1,hidden=4,steps=1,batch=2", &text,
                       &training, &err) == KT_OK, "%s", err.message);
    for (i = 0; text && i < (int)(sizeof want / sizeof want[0]); i++)
        CHECKF(strstr(text, want[i]) != NULL, "rnn: no line %s", want[i]);
    free(text);
}

/* "training graph unless infer=1" (kt_zoo_text): infer=0 trains, its text
   keeps the loss line. */
static void test_infer_zero(void) {
    char *text = NULL;
    int training = -1;
    kt_error err;
    CHECKF(kt_zoo_text("mlp:layers=2,hidden=4,batch=2,infer=0", &text,
                       &training, &err) == KT_OK, "%s", err.message);
    CHECK(training == 1);
    CHECK(text && strstr(text, "\nloss x2\n"));
    free(text);
    /* infer is a switch: 2 or -1 were taken as 1 and 0 */
    text = NULL;
    CHECKF(kt_zoo_text("mlp:infer=2", &text, &training, &err) ==
                   KT_ERR_INVALID &&
               strstr(err.message, "infer is 0") && !text,
           "%s", err.message);
    free(text);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--megatron-json") == 0)
        return write_megatron_json(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_zoo [--megatron-json FILE]\n");
        return 2;
    }
    test_builds();
    test_autodiff_growth();
    test_lstm_cell();
    test_infer_zero();
    test_bad_specs();
    test_conv_params();
    test_search_properties();
    test_spartan_fig33();
    test_megatron();
    return KT_TEST_SUMMARY();
}
