/* test_autodiff.c -- the generated backward pass computes the gradient.

   A small reference evaluator, written here and independent of the
   library's internals beyond the parsed statements, runs every statement
   over its whole index space in double precision.  For J = sum(L * dL) with
   a random dL, the gradient autodiff generated for each weight is compared
   with central finite differences of J, element by element, within
   tol + |ref| * eps (llm.c style). */
#define KT_IMPLEMENTATION
#include "../tiling.h"
#include "kt_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const kt_graph *g;
    double **val; /* per tensor, row-major */
} world;

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static double rnd(void) { /* uniform in [-1, 1), xorshift64 */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

static int64_t numel(const kt_tensor *t) {
    int64_t n = 1;
    int d;
    for (d = 0; d < t->rank; d++) n *= t->shape[d];
    return n;
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* Value of one access at the variable point `at`; 0 outside a padded read. */
static double read_access(const world *w, const kt_op *op, int a,
                          const int64_t *at) {
    const kt_access *ac = &op->access[a];
    const kt_tensor *t = kt_graph_tensor(w->g, ac->tensor);
    int64_t off = 0;
    int d, v;
    for (d = 0; d < t->rank; d++) {
        const kt_sym_interval *s = &ac->dim[d];
        int64_t x = s->lower.c;
        for (v = 0; v < op->nvars; v++)
            x += (s->lower.lo_coef[v] + s->lower.hi_coef[v]) * at[v];
        x = floordiv(x, s->divisor);
        if (x < 0 || x >= t->shape[d]) return 0; /* parser allowed: padded */
        off = off * t->shape[d] + x;
    }
    return w->val[ac->tensor][off];
}

static double eval_expr(const world *w, const kt_op *op, int node,
                        const int64_t *at) {
    const kt_expr *e = &op->expr[node];
    double a, b;
    switch (e->kind) {
    case KT_EXPR_CONST: return e->value;
    case KT_EXPR_ACCESS: return read_access(w, op, e->index, at);
    case KT_EXPR_UNARY:
        a = eval_expr(w, op, e->a, at);
        switch (e->fn) {
        case KT_FN_NEG: return -a;
        case KT_FN_RELU: return a > 0 ? a : 0;
        case KT_FN_TANH: return tanh(a);
        case KT_FN_SIGMOID: return 1 / (1 + exp(-a));
        case KT_FN_EXP: return exp(a);
        case KT_FN_LOG: return log(a);
        case KT_FN_SQRT: return sqrt(a);
        case KT_FN_STEP: return a > 0 ? 1 : 0;
        }
        return 0;
    case KT_EXPR_BINARY:
        a = eval_expr(w, op, e->a, at);
        b = eval_expr(w, op, e->b, at);
        switch (e->fn) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        default: return a / b;
        }
    }
    return 0;
}

/* One statement over its whole index space (in-place updates skipped). */
static void run_op(world *w, const kt_op *op) {
    const kt_tensor *out = kt_graph_tensor(w->g, op->output);
    int64_t n = numel(out), o;
    int nred = op->nvars - op->out_rank;
    for (o = 0; o < n; o++) {
        int64_t at[KT_MAX_VARS], rest = o, count = 1, r;
        double acc = 0;
        int v, first = 1;
        for (v = op->out_rank - 1; v >= 0; v--) {
            at[v] = rest % op->var[v].extent;
            rest /= op->var[v].extent;
        }
        for (v = op->out_rank; v < op->nvars; v++) count *= op->var[v].extent;
        for (r = 0; r < count; r++) {
            int64_t rr = r;
            double x;
            for (v = op->nvars - 1; v >= op->out_rank; v--) {
                at[v] = rr % op->var[v].extent;
                rr /= op->var[v].extent;
            }
            x = eval_expr(w, op, op->nexpr - 1, at);
            if (nred == 0 || op->reducer == KT_REDUCE_SUM) acc += x;
            else if (first || (op->reducer == KT_REDUCE_MAX ? x > acc : x < acc))
                acc = x;
            first = 0;
        }
        w->val[op->output][o] = acc;
    }
}

static void run_all(world *w) {
    int i;
    for (i = 0; i < kt_graph_op_count(w->g); i++)
        if (!kt_graph_op(w->g, i)->in_place) run_op(w, kt_graph_op(w->g, i));
}

/* J = sum over the loss tensor of L * dL. */
static double objective(world *w, int loss, int dloss) {
    int64_t n = numel(kt_graph_tensor(w->g, loss)), i;
    double j = 0;
    run_all(w);
    for (i = 0; i < n; i++) j += w->val[loss][i] * w->val[dloss][i];
    return j;
}

/* A model file parsed and differentiated (Adam or SGD); NULL and a
   failed check when either step fails. */
static kt_graph *trained(const char *text, int adam) {
    kt_graph *g = NULL;
    kt_error err;
    kt_autodiff_options opt;
    memset(&opt, 0, sizeof opt);
    opt.adam = adam;
    CHECK(kt_graph_create(&g, &err) == KT_OK);
    if (kt_graph_parse(g, text, strlen(text), &err) != KT_OK ||
        kt_graph_autodiff(g, &opt, &err) != KT_OK) {
        CHECKF(0, "%s", err.message);
        kt_graph_destroy(g);
        return NULL;
    }
    return g;
}

static void check_model(const char *name, const char *text, int adam) {
    kt_graph *g = trained(text, adam);
    world w;
    int t, loss, dloss, checked = 0, bad = 0;
    double worst = 0;
    if (!g) {
        CHECKF(0, "%s: not differentiated", name);
        return;
    }
    w.g = g;
    w.val = (double **)calloc((size_t)kt_graph_tensor_count(g), sizeof(double *));
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        int64_t i, n = numel(x);
        w.val[t] = (double *)calloc((size_t)n, sizeof(double));
        /* fresh random data, never zeros; positive where log/sqrt read */
        for (i = 0; i < n; i++)
            w.val[t][i] = x->kind == KT_OPTSTATE ? 0.5 + 0.5 * fabs(rnd())
                                                 : rnd();
    }
    loss = kt_graph_loss(g);
    dloss = -1;
    for (t = 0; t < kt_graph_tensor_count(g); t++)
        if (kt_graph_tensor(g, t)->of == loss &&
            kt_graph_tensor(g, t)->kind == KT_INPUT)
            dloss = t;
    CHECKF(dloss >= 0, "%s: no loss gradient input", name);
    if (dloss < 0) goto done;
    run_all(&w);
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *x = kt_graph_tensor(g, t);
        int64_t i, n;
        int gt;
        double *saved;
        if (x->kind != KT_WEIGHT) continue;
        /* the full gradient tensor of x */
        for (gt = 0; gt < kt_graph_tensor_count(g); gt++)
            if (kt_graph_tensor(g, gt)->of == t &&
                kt_graph_tensor(g, gt)->kind == KT_GRADIENT &&
                !strstr(kt_graph_tensor(g, gt)->name, "__"))
                break;
        CHECKF(gt < kt_graph_tensor_count(g), "%s: no gradient for %s", name,
               x->name);
        if (gt == kt_graph_tensor_count(g)) continue;
        n = numel(x);
        saved = (double *)malloc(sizeof(double) * (size_t)n);
        run_all(&w);
        memcpy(saved, w.val[gt], sizeof(double) * (size_t)n);
        for (i = 0; i < n; i++) {
            const double h = 1e-5, keep = w.val[t][i];
            double jp, jm, fd, err_abs;
            w.val[t][i] = keep + h;
            jp = objective(&w, loss, dloss);
            w.val[t][i] = keep - h;
            jm = objective(&w, loss, dloss);
            w.val[t][i] = keep;
            fd = (jp - jm) / (2 * h);
            err_abs = fabs(fd - saved[i]);
            if (err_abs > worst) worst = err_abs;
            if (err_abs > 1e-5 + 1e-4 * fabs(fd)) {
                if (bad < 5)
                    printf("%s: d%s[%lld] autodiff %.10g, finite difference "
                           "%.10g\n", name, x->name, (long long)i, saved[i], fd);
                bad++;
            }
            checked++;
        }
        free(saved);
    }
    CHECKF(bad == 0, "%s: %d of %d gradient elements differ", name, bad,
           checked);
    CHECKF(checked > 0, "%s: nothing checked", name);
    printf("%s: %d gradient elements, largest difference %.2e\n", name,
           checked, worst);
done:
    for (t = 0; t < kt_graph_tensor_count(g); t++) free(w.val[t]);
    free(w.val);
    kt_graph_destroy(g);
}

/* Many gradient names taken in one run, so that the run's table of
   names sees collisions: weights a<i> and a<i>_1 and a tensor da<i> for
   every i; a<i>'s gradient cannot be da<i> (a tensor) and becomes
   da<i>_1, which a<i>_1's gradient then cannot have: da<i>_1_1.  A table
   that looked at one slot only would miss some of the names it holds. */
static void check_many_names(void) {
    enum { N = 150 };
    size_t cap = 64 * (size_t)N * 3 + 64, n = 0;
    char *text = (char *)malloc(cap), want[64];
    kt_graph *g = NULL;
    kt_error err;
    int i, t, u, distinct = 1, found = 0;
    n += (size_t)snprintf(text + n, cap - n, "input x[2]\n");
    for (i = 0; i < N; i++)
        n += (size_t)snprintf(text + n, cap - n, "weight a%d[2]\nweight "
                              "a%d_1[2]\nweight da%d[2]\n", i, i, i);
    for (i = 0; i < N; i++) {
        char prev[32];
        if (i) snprintf(prev, sizeof prev, "y%d", i - 1);
        else snprintf(prev, sizeof prev, "x");
        n += (size_t)snprintf(text + n, cap - n, "y%d[k] = %s[k] * a%d[k] * "
                              "a%d_1[k] * da%d[k]\n", i, prev, i, i, i);
    }
    n += (size_t)snprintf(text + n, cap - n, "loss y%d\n", N - 1);
    CHECK(n < cap && kt_graph_create(&g, &err) == KT_OK);
    CHECKF(kt_graph_parse(g, text, n, &err) == KT_OK &&
               kt_graph_autodiff(g, NULL, &err) == KT_OK,
           "%s", err.message);
    for (t = 0; t < kt_graph_tensor_count(g); t++)
        for (u = t + 1; u < kt_graph_tensor_count(g); u++)
            if (strcmp(kt_graph_tensor(g, t)->name,
                       kt_graph_tensor(g, u)->name) == 0)
                distinct = 0;
    CHECK(distinct);
    for (i = 0; i < N; i++) {
        snprintf(want, sizeof want, "da%d_1_1", i);
        for (t = 0; t < kt_graph_tensor_count(g); t++)
            found += strcmp(kt_graph_tensor(g, t)->name, want) == 0;
    }
    CHECKF(found == N, "%d of %d gradients named da<i>_1_1", found, N);
    kt_graph_destroy(g);
    free(text);
}

/* A loss that is data gets no gradient: refused naming it (its gradient
   had no name, and the message named nothing). */
static void check_loss_is_input(void) {
    static const char text[] = "input x[4]\nweight w[4]\n"
                               "y[i] = x[i] * w[i]\nloss x\n";
    kt_graph *g = NULL;
    kt_error err;
    CHECK(kt_graph_create(&g, &err) == KT_OK);
    CHECK(kt_graph_parse(g, text, sizeof text - 1, &err) == KT_OK);
    CHECKF(kt_graph_autodiff(g, NULL, &err) == KT_ERR_GRAPH &&
               strstr(err.message, "loss x is an input"),
           "%s", err.message);
    kt_graph_destroy(g);
    {   /* a weight as the loss: refused too (it was accepted, its
           gradient an input and no update generated) */
        static const char wtext[] = "input x[4]\nweight w[4]\n"
                                    "y[i] = x[i] * w[i]\nloss w\n";
        g = NULL;
        CHECK(kt_graph_create(&g, &err) == KT_OK);
        CHECK(kt_graph_parse(g, wtext, sizeof wtext - 1, &err) == KT_OK);
        CHECKF(kt_graph_autodiff(g, NULL, &err) == KT_ERR_GRAPH &&
                   strstr(err.message, "loss w is a weight"),
               "%s", err.message);
        kt_graph_destroy(g);
    }
}

/* A backward statement the parser refuses is named by the user's line it
   derives from (an opaque op with a weight read outside the batch: its
   gradient's statement leaves b free). */
static void check_backward_error_line(void) {
    static const char text[] = "input a[2,3,3]\nweight w[3]\n"
                               "c[b,i,j] = opaque(chol, a[b,:,:], w[:])\n"
                               "loss c\n";
    kt_graph *g = NULL;
    kt_error err;
    CHECK(kt_graph_create(&g, &err) == KT_OK);
    CHECK(kt_graph_parse(g, text, sizeof text - 1, &err) == KT_OK);
    CHECKF(kt_graph_autodiff(g, NULL, &err) != KT_OK && err.line == 3 &&
               strstr(err.message, "line 3: the backward pass of c") &&
               strstr(err.message, "index variable b"),
           "line %d: %s", err.line, err.message);
    kt_graph_destroy(g);
}

/* Optimizer state, like data, gets no gradient: y = x * w * s has dw and
   no ds (nor dx). */
static void check_state_no_gradient(void) {
    kt_graph *g = trained("input x[3]\nweight w[3]\nstate s[3]\n"
                          "y[i] = x[i] * w[i] * s[i]\nloss y\n", 0);
    if (!g) return;
    CHECK(kt_graph_find_tensor(g, "dw") >= 0);
    CHECK(kt_graph_find_tensor(g, "ds") < 0);
    CHECK(kt_graph_find_tensor(g, "dx") < 0);
    kt_graph_destroy(g);
}

/* Partial gradients belong to their tensor (Tofu 5.1): W read twice gets
   dW__1 and dW__2, both of kind gradient and of W, like their sum dW. */
static void check_partial_gradient_kind(void) {
    kt_graph *g = trained("input x[2,2]\nweight W[2,2]\n"
                          "u[i,k] = sum(j) x[i,j] * W[j,k]\n"
                          "v[i,k] = sum(j) u[i,j] * W[j,k]\nloss v\n", 0);
    static const char *const names[] = {"dW__1", "dW__2", "dW"};
    int i, w;
    if (!g) return;
    w = kt_graph_find_tensor(g, "W");
    for (i = 0; i < 3; i++) {
        int t = kt_graph_find_tensor(g, names[i]);
        CHECKF(t >= 0 && kt_graph_tensor(g, t)->kind == KT_GRADIENT &&
                   kt_graph_tensor(g, t)->of == w,
               "%s: not a gradient of W", names[i]);
    }
    kt_graph_destroy(g);
}

/* One Adam step (Kingma and Ba's beta1 0.9, beta2 0.999, eps 1e-8; lr
   0.01; no bias correction) on y = x * w with x = 2, dy = 1, w = 1, m = 0,
   v = 1: g = dw = 2, m' = 0.1 * 2 = 0.2, v' = 0.999 + 0.001 * 4 = 1.003,
   w' = 1 - 0.01 * 0.2 / (sqrt(1.003) + 1e-8). */
static void check_adam_step(void) {
    kt_graph *g = trained("input x[1]\nweight w[1]\ny[i] = x[i] * w[i]\n"
                          "loss y\n", 1);
    world w;
    int t, i, n;
    if (!g) return;
    n = kt_graph_tensor_count(g);
    w.g = g;
    w.val = (double **)calloc((size_t)n, sizeof(double *));
    for (t = 0; t < n; t++)
        w.val[t] = (double *)calloc((size_t)numel(kt_graph_tensor(g, t)),
                                    sizeof(double));
    w.val[kt_graph_find_tensor(g, "x")][0] = 2;
    w.val[kt_graph_find_tensor(g, "dy")][0] = 1;
    w.val[kt_graph_find_tensor(g, "w")][0] = 1;
    w.val[kt_graph_find_tensor(g, "v_w")][0] = 1;
    run_all(&w);
    for (i = 0; i < kt_graph_op_count(g); i++) /* the updates, in order */
        if (kt_graph_op(g, i)->in_place) run_op(&w, kt_graph_op(g, i));
    CHECK(fabs(w.val[kt_graph_find_tensor(g, "m_w")][0] - 0.2) < 1e-12);
    CHECK(fabs(w.val[kt_graph_find_tensor(g, "v_w")][0] - 1.003) < 1e-12);
    CHECK(fabs(w.val[kt_graph_find_tensor(g, "w")][0] -
               (1 - 0.002 / (sqrt(1.003) + 1e-8))) < 1e-12);
    for (t = 0; t < n; t++) free(w.val[t]);
    free(w.val);
    kt_graph_destroy(g);
}

int main(void) {
    check_loss_is_input();
    check_backward_error_line();
    check_model("mlp with bias, relu, tanh",
                "input x[5,4]\n"
                "weight W1[4,3]\nweight b1[3]\nweight W2[3,2]\n"
                "h[i,k] = sum(j) x[i,j] * W1[j,k]\n"
                "z[i,k] = h[i,k] + b1[k]\n"
                "a[i,k] = relu(z[i,k])\n"
                "y[i,k] = sum(j) a[i,j] * W2[j,k]\n"
                "l[i,k] = tanh(y[i,k]) * y[i,k]\n"
                "loss l\n",
                0);
    check_model("shared weight, sigmoid, exp, division",
                "input x[4,3]\nweight W[3,3]\n"
                "u[i,k] = sum(j) x[i,j] * W[j,k]\n"
                "v[i,k] = sum(j) sigmoid(u[i,j]) * W[j,k]\n"
                "l[i,k] = exp(v[i,k] * 0.3) / (2 + sigmoid(u[i,k]))\n"
                "loss l\n",
                0);
    check_model("convolution with padding and stride",
                "input x[2,2,7,7]\nweight f[3,2,3,3]\nweight g[2,3,2,2]\n"
                "o[n,co,h:4,w:4] = sum(ci,kh,kw) pad(x[n,ci,h*2+kh-1,w*2+kw-1])"
                " * f[co,ci,kh,kw]\n"
                "a[n,c,h,w] = tanh(o[n,c,h,w])\n"
                "q[n,co,h,w] = sum(ci,kh,kw) a[n,ci,h+kh,w+kw] * g[co,ci,kh,kw]\n"
                "loss q\n",
                0);
    check_model("max pooling and upsampling",
                "input x[2,2,6,6]\nweight f[2,2,3,3]\nweight s[2]\n"
                "o[n,co,h:6,w:6] = sum(ci,kh,kw) pad(x[n,ci,h+kh-1,w+kw-1]) *"
                " f[co,ci,kh,kw]\n"
                "m[n,c,h,w] = max(dh:2,dw:2) o[n,c,h*2+dh,w*2+dw]\n"
                "u[n,c,h,w] = m[n,c,h/2,w/2] * s[c]\n"
                "loss u\n",
                0);
    check_model("log and sqrt of positive values",
                "input x[3,4]\nweight W[4,4]\n"
                "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                "p[i,k] = log(1.5 + y[i,k] * y[i,k]) + sqrt(2 + y[i,k])\n"
                "loss p\n",
                1);
    /* gradient names never collide: w, dw and _w all get gradients, and
       w_1's dw_1 is taken by w's (dw being a tensor), so it gets dw_1_1:
       the names taken in the run are checked too, not only the graph's */
    check_model("names that look like gradients",
                "input x[3,2]\nweight w[2,2]\nweight dw[2,2]\nweight _w[2,2]\n"
                "weight w_1[2,2]\n"
                "a[i,k] = sum(j) x[i,j] * w[j,k]\n"
                "b[i,k] = sum(j) a[i,j] * dw[j,k]\n"
                "c[i,k] = sum(j) b[i,j] * _w[j,k]\n"
                "e[i,k] = sum(j) c[i,j] * w_1[j,k]\n"
                "loss e\n",
                0);
    /* a zero-padded read with an offset (u[h+kh-1]) of a tensor that
       needs a gradient: du reads do at p - kh + 1, the offset carried
       into dY's index (found by a mutation-testing pass: the padded
       convolution above reads an input, so no pivot with an offset was
       ever substituted) */
    check_model("padded read of an activation",
                "input x[5]\nweight a[5]\nweight f[3]\n"
                "u[i] = x[i] * a[i]\n"
                "o[h:5] = sum(kh) pad(u[h+kh-1]) * f[kh]\n"
                "loss o\n",
                0);
    check_many_names();
    check_state_no_gradient();
    check_partial_gradient_kind();
    check_adam_step();
    return KT_TEST_SUMMARY();
}
