/* test_graph.c -- the graph IR, the model-file parser, shape inference and
   the TDL symbolic interval analysis of tiling.h (Tofu section 4).

   Every bad input must come back as a non-OK status with a message that
   names the line and the tensor, variable or dimension concerned, and must
   neither leak nor crash (this program runs under ASan/UBSan and valgrind).
   Known answers: Tofu 4.2's shift_two example, conv1d's strategies (batch,
   channel-reduction with a partial output, halo along x), batch_cholesky's
   opaque batch-only strategy, shape inference of the usual layers, and the
   DESIGN.md conversion-cost rule worked by hand for a split matmul. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close, unlink */
#define KT_IMPLEMENTATION
#include "../tiling.h"
#include "kt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ utilities */

static int has(const char *msg, const char *part) {
    return strstr(msg, part) != NULL;
}

/* Parses a NUL-terminated model text into a fresh graph (which the caller
   destroys, also on failure). */
static kt_status parse(const char *text, kt_graph **g, kt_error *err) {
    kt_status s = kt_graph_create(g, err);
    if (s != KT_OK) return s;
    return kt_graph_parse(*g, text, strlen(text), err);
}

/* Parses text that must fail: status `want` (any non-OK status when
   want == KT_OK), err.line == line, and the message holding "line N" and
   the given fragments (NULL ends the list early). */
static void expect_bad(const char *what, const char *text, kt_status want,
                       int line, const char *p1, const char *p2,
                       const char *p3) {
    kt_graph *g = NULL;
    kt_error err;
    char tag[32];
    const char *parts[3];
    int i;
    kt_status s;
    memset(&err, 0, sizeof err);
    s = parse(text, &g, &err);
    parts[0] = p1;
    parts[1] = p2;
    parts[2] = p3;
    CHECKF(s != KT_OK, "%s: accepted", what);
    CHECKF(err.status == s, "%s: err.status %d, returned %d", what,
           (int)err.status, (int)s);
    if (want != KT_OK)
        CHECKF(s == want, "%s: status %s, expected %s (\"%s\")", what,
               kt_status_string(s), kt_status_string(want), err.message);
    if (line > 0) {
        snprintf(tag, sizeof tag, "line %d", line);
        CHECKF(err.line == line, "%s: err.line %d, expected %d (\"%s\")",
               what, err.line, line, err.message);
        CHECKF(has(err.message, tag), "%s: message \"%s\" lacks \"%s\"", what,
               err.message, tag);
    }
    for (i = 0; i < 3 && parts[i]; i++)
        CHECKF(has(err.message, parts[i]), "%s: message \"%s\" lacks \"%s\"",
               what, err.message, parts[i]);
    kt_graph_destroy(g);
}

/* Parses text that must succeed. */
static kt_graph *expect_ok(const char *what, const char *text) {
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    memset(&err, 0, sizeof err);
    s = parse(text, &g, &err);
    CHECKF(s == KT_OK, "%s: %s", what, err.message);
    if (s != KT_OK) {
        kt_graph_destroy(g);
        return NULL;
    }
    return g;
}

static const kt_tensor *tensor_named(const kt_graph *g, const char *name) {
    return kt_graph_tensor(g, kt_graph_find_tensor(g, name));
}

/* Checks a tensor's shape (rank = n) and element size. */
static void check_shape(const char *what, const kt_graph *g, const char *name,
                        int n, const int64_t *want, int elem_bytes) {
    const kt_tensor *t = g ? tensor_named(g, name) : NULL;
    int d, same;
    CHECKF(t != NULL, "%s: no tensor %s", what, name);
    if (!t) return;
    same = t->rank == n;
    for (d = 0; same && d < n; d++) same = t->shape[d] == want[d];
    CHECKF(same, "%s: %s has rank %d shape [%lld,%lld,%lld,%lld]", what, name,
           t->rank, (long long)t->shape[0], (long long)t->shape[1],
           (long long)t->shape[2], (long long)t->shape[3]);
    CHECKF(t->elem_bytes == elem_bytes, "%s: %s elem_bytes %d, expected %d",
           what, name, t->elem_bytes, elem_bytes);
}

/* The op producing tensor `name` (or updating it when in_place). */
static const kt_op *op_writing(const kt_graph *g, const char *name,
                               int in_place, int *index) {
    int i, t = kt_graph_find_tensor(g, name);
    for (i = 0; i < kt_graph_op_count(g); i++) {
        const kt_op *op = kt_graph_op(g, i);
        if (op->output == t && op->in_place == in_place) {
            if (index) *index = i;
            return op;
        }
    }
    if (index) *index = -1;
    return NULL;
}

static int var_named(const kt_op *op, const char *name) {
    int v;
    for (v = 0; v < op->nvars; v++)
        if (strcmp(op->var[v].name, name) == 0) return v;
    return -1;
}

static int input_named(const kt_graph *g, const kt_op *op, const char *name) {
    int j, t = kt_graph_find_tensor(g, name);
    for (j = 0; j < op->ninputs; j++)
        if (op->input[j] == t) return j;
    return -1;
}

static int range_is(kt_range r, int64_t lo, int64_t hi) {
    return r.lo == lo && r.hi == hi;
}

/* The region of input `tensor` that variable box `box` needs, dimension d. */
static kt_range need_dim(const kt_graph *g, const kt_op *op,
                         const char *tensor, const kt_range *box, int d,
                         int *empty) {
    kt_box region;
    int j = input_named(g, op, tensor);
    kt_range none = {-1, -1};
    if (j < 0) return none;
    kt_op_input_box(g, op, j, box, &region, empty);
    return region.r[d];
}

/* Writes data to a fresh temporary file; its name goes to path. */
static int write_temp(char *path, size_t cap, const char *data, size_t len) {
    int fd;
    size_t done = 0;
    snprintf(path, cap, "/tmp/kt_test_graph_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) return 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n <= 0) {
            close(fd);
            unlink(path);
            return 0;
        }
        done += (size_t)n;
    }
    close(fd);
    return 1;
}

/* ------------------------------------------------- 1. bad inputs (files) */

static void test_bad_statements(void) {
    expect_bad("unknown tensor", "input x[4]\ny[i] = relu(q[i])\n",
               KT_ERR_GRAPH, 2, "unknown tensor q", NULL, NULL);
    /* constants strtod would read as infinity or as hex */
    expect_bad("infinite constant", "input x[4]\ny[i] = x[i] * 1e400\n",
               KT_ERR_PARSE, 2, "number 1e400", "beyond a double's range",
               NULL);
    expect_bad("pad of pad", "input x[4]\ny[i:4] = pad(pad(x[i+1]))\n",
               KT_ERR_PARSE, 2, "pad(...) takes one tensor read", NULL,
               NULL); /* it said "unknown tensor pad" */
    expect_bad("hex constant", "input x[4]\ny[i] = x[i] * 0x10\n",
               KT_ERR_PARSE, 2, "number 0x10", "decimal", NULL);
    expect_bad("unknown tensor in pad", "input x[4]\ny[i] = pad(q[i])\n",
               KT_ERR_GRAPH, 2, "q", NULL, NULL);
    expect_bad("rank mismatch", "input x[10,3]\ny[i] = x[i]\n", KT_ERR_SHAPE,
               2, "tensor x", "rank 2", "1 index");
    expect_bad("rank mismatch (too many)", "input x[10]\ny[i,j] = x[i,j]\n",
               KT_ERR_SHAPE, 2, "tensor x", "rank 1", "2 indices");
    expect_bad("two extents",
               "input x[400,300]\nweight W[200,100]\n"
               "y[i,k] = sum(j) x[i,j] * W[j,k]\n",
               KT_ERR_SHAPE, 3,
               "index variable j has extent 300 from x dim 1 but 200 from W "
               "dim 0",
               NULL, NULL);
    expect_bad("explicit extent disagrees",
               "input x[10]\ny[i:8] = x[i]\n", KT_ERR_SHAPE, 2,
               "index variable i", "8", "x dim 0");
    expect_bad("declared output disagrees",
               "input x[10]\nweight W[8]\nW[i] = x[i]\n", KT_ERR_SHAPE, 3,
               "index variable i", "W dim 0", NULL);
    expect_bad("read outside, not padded",
               "input x[10]\ny[i] = x[i] + x[i+1]\n", KT_ERR_SHAPE, 2,
               "tensor x", "dim 0", "pad(");
    expect_bad("read before the start, not padded",
               "input x[10]\ny[i] = x[i] - x[i-1]\n", KT_ERR_SHAPE, 2,
               "tensor x", "dim 0", NULL);
    expect_bad("conv2d without pad",
               "input x[2,3,8,8]\nweight f[4,3,3,3]\n"
               "o[n,co,h:8,w:8] = sum(ci,kh,kw) x[n,ci,h+kh-1,w+kw-1] * "
               "f[co,ci,kh,kw]\n",
               KT_ERR_SHAPE, 3, "tensor x", "dim 2", NULL);
    /* index-expression errors must name the tensor being indexed */
    expect_bad("product of two index variables",
               "input feat[16]\n# comment\ny[i:4,j:4] = feat[i*j]\n",
               KT_ERR_PARSE, 3, "multiplies two index variables", "feat",
               NULL);
    expect_bad("division not last",
               "input feat[16]\ny[i:8] = feat[i/2+1]\n", KT_ERR_PARSE, 2,
               "division must be the last step", "feat", NULL);
    expect_bad("division then product", "input x[16]\ny[i:8] = x[i/2*2]\n",
               KT_ERR_PARSE, 2, "division must be the last step", NULL,
               NULL);
    expect_bad("division by an index variable",
               "input x[16]\ny[i:4,j:4] = x[i/j]\n", KT_ERR_PARSE, 2,
               "divides by an index variable", NULL, NULL);
    expect_bad("division by zero", "input x[16]\ny[i:4] = x[i/0]\n",
               KT_ERR_PARSE, 2, "divides by 0", NULL, NULL);
    expect_bad("':' outside opaque",
               "input feat[4,5]\ny[i] = relu(feat[i,:])\n", KT_ERR_PARSE, 2,
               "':'", "opaque", "feat");
    expect_bad("unknown function", "input x[4]\ny[i] = softplus(x[i])\n",
               KT_ERR_PARSE, 2, "unknown function softplus", NULL, NULL);
    expect_bad("reduction not first",
               "input x[4,5]\ny[i] = relu(sum(j) x[i,j])\n", KT_ERR_PARSE, 2,
               "sum(...) must come first", NULL, NULL);
    expect_bad("unknown index variable", "input x[4]\ny[i] = x[q]\n",
               KT_ERR_PARSE, 2, "index variable q", NULL, NULL);
    expect_bad("index variable twice in the output",
               "input x[4,4]\ny[i,i] = x[i,i]\n", KT_ERR_PARSE, 2,
               "index variable i appears twice", NULL, NULL);
    expect_bad("reduction variable repeats an output variable",
               "input x[4,4]\ny[i] = sum(i) x[i,i]\n", KT_ERR_PARSE, 2,
               "index variable i appears twice", NULL, NULL);
    expect_bad("extent cannot be inferred", "input x[4]\ny[i,j] = x[i]\n",
               KT_ERR_SHAPE, 2, "index variable j", "j:N", NULL);
    expect_bad("padded read alone cannot fix an extent",
               "input x[4]\ny[i] = pad(x[i+1])\n", KT_ERR_SHAPE, 2,
               "index variable i", "i:N", NULL);
    expect_bad("in-place update twice",
               "input x[4]\nweight W[4]\nW[i] = W[i] - x[i]\nW[i] = x[i]\n",
               KT_ERR_GRAPH, 4, "tensor W", "already updated in place",
               "line 3");
    expect_bad("read after in-place update",
               "input x[4]\nweight W[4]\nW[i] = W[i] - x[i]\n"
               "y[i] = W[i] * 2\n",
               KT_ERR_GRAPH, 4, "tensor W", "after its in-place update",
               "line 3");
    expect_bad("opaque without tensor", "input a[2,3,3]\n"
               "c[b:2,i:3,j:3] = opaque(cholesky)\n", KT_ERR_PARSE, 2,
               "opaque(cholesky)", NULL, NULL);
    expect_bad("no tensor read", "input x[4]\ny[i:4] = 2\n", KT_ERR_PARSE, 2,
               "y reads no tensor", NULL, NULL);
    expect_bad("trailing garbage", "input x[4]\ny[i] = x[i] ]\n",
               KT_ERR_PARSE, 2, "after the statement", NULL, NULL);
    expect_bad("non-integer index constant", "input x[4]\ny[i:2] = x[i+0.5]\n",
               KT_ERR_PARSE, 2, "integers", NULL, NULL);
    expect_bad("affine extent too small", "input x[3]\ny[i] = x[i+5]\n",
               KT_ERR_SHAPE, 2, "tensor x", "dim 0", "index variable i");
    expect_bad("name too long",
               "input x[4]\n"
               "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
               "[i] = x[i]\n",
               KT_ERR_LIMIT, 2, "longer than", NULL, NULL);
    expect_bad("unexpected character", "input x[4]\ny[i] = x[i] ; \n",
               KT_ERR_PARSE, 2, "';'", NULL, NULL);
}

static void test_bad_declarations(void) {
    expect_bad("duplicate input", "input x[4]\n\ninput x[5]\n", KT_ERR_GRAPH,
               3, "duplicate tensor name x", "line 1", NULL);
    expect_bad("leaf named like a statement output",
               "input x[4]\ny[i] = relu(x[i])\nweight y[4]\n", KT_ERR_GRAPH, 3,
               "duplicate tensor name y", "line 2", NULL);
    expect_bad("unknown dtype", "input x[4] f128\n", KT_ERR_PARSE, 1,
               "tensor x", "unknown element type f128", NULL);
    expect_bad("zero dimension", "input x[4,0]\n", KT_ERR_SHAPE, 1,
               "tensor x", "dim 1", NULL);
    expect_bad("dimension too large", "input x[4,2000000000000]\n",
               KT_ERR_SHAPE, 1, "tensor x", "dim 1", NULL);
    expect_bad("too many dimensions", "input x[1,2,3,4,5,6,7,8,9]\n",
               KT_ERR_SHAPE, 1, "tensor x", NULL, NULL);
    expect_bad("second loss",
               "input x[4]\ny[i] = relu(x[i])\nloss y\nloss y\n", KT_ERR_PARSE,
               4, "second loss", "line 3", NULL);
    expect_bad("loss of an unknown tensor",
               "input x[4]\ny[i] = relu(x[i])\nloss zz\n", KT_ERR_GRAPH, 3,
               "unknown tensor zz", NULL, NULL);
    expect_bad("read before defined",
               "input x[4]\ny[i] = relu(z[i])\nz[i] = x[i] * 2\n",
               KT_ERR_GRAPH, 2, "tensor z", "before it is defined",
               "(line 3)");
    expect_bad("read before declared",
               "input x[4]\n\ny[i] = x[i] + z[i]\n# later\ninput z[4]\n",
               KT_ERR_GRAPH, 3, "tensor z", "before it is defined",
               "(line 5)");
}

static void test_bad_files(void) {
    static const char nul_text[] = "input x[4]\ny[i] = x[i]\0\n";
    static const char ctl_text[] = "input x[4]\ny[i] = \001x[i]\n";
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    char path[64];
    char *big, *exact;
    size_t n, head;

    /* empty: len 0, and a file of comments and blank lines */
    kt_graph_create(&g, &err);
    s = kt_graph_parse(g, "", 0, &err);
    CHECKF(s == KT_ERR_PARSE && has(err.message, "empty"),
           "empty text: %s \"%s\"", kt_status_string(s), err.message);
    kt_graph_destroy(g);
    expect_bad("only comments", "# a model\n\n   # nothing here\n\t\n",
               KT_ERR_PARSE, 0, "empty", NULL, NULL);
    expect_bad("only blank lines", "\n\n\n", KT_ERR_PARSE, 0, "empty", NULL,
               NULL);

    /* not text: a NUL byte, a control byte */
    kt_graph_create(&g, &err);
    s = kt_graph_parse(g, nul_text, sizeof nul_text - 1, &err);
    CHECKF(s == KT_ERR_PARSE && err.line == 2 && has(err.message, "line 2") &&
               has(err.message, "NUL") && has(err.message, "not a text file"),
           "NUL byte: %s line %d \"%s\"", kt_status_string(s), err.line,
           err.message);
    kt_graph_destroy(g);
    kt_graph_create(&g, &err);
    s = kt_graph_parse(g, ctl_text, sizeof ctl_text - 1, &err);
    CHECKF(s == KT_ERR_PARSE && err.line == 2 && has(err.message, "line 2") &&
               has(err.message, "0x01") &&
               has(err.message, "not a text file"),
           "control byte: %s line %d \"%s\"", kt_status_string(s), err.line,
           err.message);
    kt_graph_destroy(g);
    expect_bad("DEL byte", "input x[4]\x7f\n", KT_ERR_PARSE, 1, "0x7f", NULL,
               NULL);

    /* a line of 1 MiB, in a buffer with no terminating NUL */
    n = (size_t)1 << 20;
    head = strlen("input x[4]\n");
    big = (char *)malloc(head + n + 1);
    CHECK(big != NULL);
    if (!big) return;
    memcpy(big, "input x[4]\n", head);
    memset(big + head, 'a', n);
    big[head + n] = '\n';
    kt_graph_create(&g, &err);
    s = kt_graph_parse(g, big, head + n + 1, &err);
    CHECKF(s == KT_ERR_LIMIT && err.line == 2 && has(err.message, "line 2") &&
               has(err.message, "longer than"),
           "1 MiB line: %s line %d \"%s\"", kt_status_string(s), err.line,
           err.message);
    kt_graph_destroy(g);

    /* the same through a file: the message names the path */
    if (write_temp(path, sizeof path, big, head + n + 1)) {
        s = kt_graph_load_file(&g, path, &err);
        CHECKF(s == KT_ERR_LIMIT && has(err.message, path) &&
                   has(err.message, "line 2") && err.line == 2 && g == NULL,
               "1 MiB line via %s: %s \"%s\"", path, kt_status_string(s),
               err.message);
        kt_graph_destroy(g);
        unlink(path);
    } else {
        CHECKF(0, "cannot write a temporary file");
    }
    free(big);

    /* the limit is exact: KT_MAX_LINE characters pass, one more does not
       (a comment line, so only the length matters) */
    exact = (char *)malloc(head + KT_MAX_LINE + 2);
    CHECK(exact != NULL);
    if (exact) {
        memcpy(exact, "input x[4]\n", head);
        exact[head] = '#';
        memset(exact + head + 1, 'c', KT_MAX_LINE - 1);
        kt_graph_create(&g, &err);
        s = kt_graph_parse(g, exact, head + KT_MAX_LINE, &err);
        CHECKF(s == KT_OK, "a line of KT_MAX_LINE: %s", err.message);
        kt_graph_destroy(g);
        exact[head + KT_MAX_LINE] = 'c';
        kt_graph_create(&g, &err);
        s = kt_graph_parse(g, exact, head + KT_MAX_LINE + 1, &err);
        CHECKF(s == KT_ERR_LIMIT, "a line of KT_MAX_LINE + 1: %s \"%s\"",
               kt_status_string(s), err.message);
        kt_graph_destroy(g);
        free(exact);
    }

    /* a file with an error on line 3: path and line in the message */
    {
        static const char text[] = "input x[4]\n# c\ny[i] = nope[i]\n";
        if (write_temp(path, sizeof path, text, sizeof text - 1)) {
            s = kt_graph_load_file(&g, path, &err);
            CHECKF(s == KT_ERR_GRAPH && g == NULL && has(err.message, path) &&
                       has(err.message, "line 3") &&
                       has(err.message, "unknown tensor nope") &&
                       err.line == 3,
                   "file error: %s \"%s\"", kt_status_string(s), err.message);
            kt_graph_destroy(g);
            unlink(path);
        }
    }
    /* a good file loads */
    {
        static const char text[] =
            "# mlp\r\ninput x[8,6] f16\r\nweight W[6,5] f16\r\n"
            "y[i,k] = sum(j) x[i,j] * W[j,k]\r\nloss y\r\n";
        if (write_temp(path, sizeof path, text, sizeof text - 1)) {
            s = kt_graph_load_file(&g, path, &err);
            CHECKF(s == KT_OK && g != NULL, "good file (CRLF): %s",
                   err.message);
            if (g) {
                int64_t want[2] = {8, 5};
                check_shape("CRLF file", g, "y", 2, want, 2);
                CHECK(kt_graph_loss(g) == kt_graph_find_tensor(g, "y"));
            }
            kt_graph_destroy(g);
            unlink(path);
        }
    }
    /* nothing at the path; a directory */
    s = kt_graph_load_file(&g, "/nonexistent/dir/model.kt", &err);
    CHECKF(s == KT_ERR_IO && g == NULL &&
               has(err.message, "/nonexistent/dir/model.kt"),
           "missing file: %s \"%s\"", kt_status_string(s), err.message);
    s = kt_graph_load_file(&g, "/tmp", &err);
    CHECKF(s != KT_OK && g == NULL && has(err.message, "/tmp"),
           "directory: %s \"%s\"", kt_status_string(s), err.message);
    kt_graph_destroy(g);

    /* a NULL kt_error is allowed */
    kt_graph_create(&g, NULL);
    CHECK(kt_graph_parse(g, "input x[4]\ny[i] = q[i]\n", 23, NULL) ==
          KT_ERR_GRAPH);
    kt_graph_destroy(g);
}

/* A cycle can only be built through the C builder (a file cannot read a
   tensor before its line); finalize names the tensors on it. */
static void test_cycle(void) {
    kt_graph *g = NULL;
    kt_error err;
    int64_t shape[1] = {4};
    kt_status s;
    kt_graph_create(&g, &err);
    CHECK(kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err) == KT_OK);
    CHECK(kt_graph_add_tensor(g, "a", 1, shape, 4, KT_ACTIVATION, &err) ==
          KT_OK);
    CHECK(kt_graph_add_tensor(g, "b", 1, shape, 4, KT_ACTIVATION, &err) ==
          KT_OK);
    s = kt_graph_add_op(g, "a[i] = b[i] + x[i]", 1, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    s = kt_graph_add_op(g, "b[i] = relu(a[i])", 2, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_ERR_GRAPH && has(err.message, "cycle") &&
               (has(err.message, "a -> b") || has(err.message, "b -> a")),
           "cycle: %s \"%s\"", kt_status_string(s), err.message);
    kt_graph_destroy(g);

    /* a longer cycle, with a tensor hanging off it */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "p", 1, shape, 4, KT_ACTIVATION, &err);
    kt_graph_add_tensor(g, "q", 1, shape, 4, KT_ACTIVATION, &err);
    kt_graph_add_tensor(g, "r", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "tail[i] = relu(r[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "p[i] = r[i] * x[i]", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "q[i] = tanh(p[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "r[i] = q[i] - 1", 0, &err) == KT_OK);
    s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_ERR_GRAPH && has(err.message, "p") &&
               has(err.message, "q") && has(err.message, "r") &&
               !has(err.message, "tail"),
           "3-cycle: %s \"%s\"", kt_status_string(s), err.message);
    kt_graph_destroy(g);

    /* a declared activation nobody produces */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[i] = h[i] + x[i]", 7, &err) == KT_OK);
    s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_ERR_GRAPH && err.line == 7 && has(err.message, "line 7") &&
               has(err.message, "tensor h") &&
               has(err.message, "no statement produces it"),
           "unproduced: %s \"%s\"", kt_status_string(s), err.message);
    kt_graph_destroy(g);

    /* builder errors: duplicate, bad rank, bad element size, bad name */
    kt_graph_create(&g, &err);
    CHECK(kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err) == KT_OK);
    s = kt_graph_add_tensor(g, "x", 1, shape, 4, KT_WEIGHT, &err);
    CHECKF(s == KT_ERR_GRAPH && has(err.message, "duplicate tensor name x"),
           "%s", err.message);
    s = kt_graph_add_tensor(g, "z", 0, shape, 4, KT_WEIGHT, &err);
    CHECKF(s == KT_ERR_SHAPE && has(err.message, "tensor z"), "%s",
           err.message);
    s = kt_graph_add_tensor(g, "z", 1, shape, 3, KT_WEIGHT, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "tensor z"), "%s",
           err.message);
    s = kt_graph_add_tensor(g, "9z", 1, shape, 4, KT_WEIGHT, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "9z"), "%s", err.message);
    s = kt_graph_add_op(g, "y[i] = x[i] +", 5, &err);
    CHECKF(s == KT_ERR_PARSE && has(err.message, "line 5"), "%s",
           err.message);
    s = kt_graph_add_op(g, NULL, 6, &err);
    CHECKF(s != KT_OK && has(err.message, "line 6"), "%s", err.message);
    CHECK(kt_graph_op_count(g) == 0 && kt_graph_tensor_count(g) == 1);
    kt_graph_destroy(g);
}

/* Every prefix of good statements either parses or fails cleanly. */
static void test_prefixes(void) {
    static const char *const stmts[] = {
        ("o[n,co,h:8,w:8] = sum(ci,kh,kw) pad(x[n,ci,h+kh-1,w+kw-1]) * "
         "f[co,ci,kh,kw]"),
        "m[n,c,h,w] = max(dh:2,dw:2) x[n,c,h*2+dh,w*2+dw]",
        "c[b,i,j] = opaque(cholesky, a[b,:,:])",
        "u[n,c,h,w] = -(x[n,c,(h+1)/2,w/2] * 0.5) + exp(-x[n,c,h/2,w/2])",
    };
    size_t s, len;
    int bad = 0, ok = 0, whole = 0;
    char buf[256];
    for (s = 0; s < sizeof stmts / sizeof stmts[0]; s++) {
        for (len = 0; len <= strlen(stmts[s]); len++) {
            kt_graph *g = NULL;
            kt_error err;
            kt_status st;
            int64_t xs[4] = {2, 3, 8, 8}, fs[4] = {4, 3, 3, 3},
                    as[3] = {2, 5, 5};
            memcpy(buf, stmts[s], len);
            buf[len] = '\0';
            kt_graph_create(&g, &err);
            kt_graph_add_tensor(g, "x", 4, xs, 4, KT_INPUT, &err);
            kt_graph_add_tensor(g, "f", 4, fs, 4, KT_WEIGHT, &err);
            kt_graph_add_tensor(g, "a", 3, as, 4, KT_INPUT, &err);
            st = kt_graph_add_op(g, buf, 9, &err);
            if (st == KT_OK) {
                ok++;
                if (len == strlen(stmts[s])) whole++;
                st = kt_graph_finalize(g, &err);
                CHECKF(st == KT_OK, "prefix '%s': finalize %s", buf,
                       err.message);
            } else if (!has(err.message, "line 9") || err.line != 9 ||
                       err.status != st) {
                bad++;
                CHECKF(0, "prefix '%s': \"%s\"", buf, err.message);
            }
            kt_graph_destroy(g);
        }
    }
    CHECKF(whole == 4, "%d whole statements parsed", whole);
    CHECKF(ok == 6, "%d prefixes parsed", ok); /* u = -(...) [+ ...] */
    CHECK(bad == 0);
}

/* --------------------------------------------------- 2. shape inference */

static void test_shapes(void) {
    kt_graph *g;
    {
        int64_t y[2] = {400, 200};
        g = expect_ok("mlp", "input x[400,300]\nweight W[300,200]\n"
                             "y[i,k] = sum(j) x[i,j] * W[j,k]\n");
        check_shape("mlp", g, "y", 2, y, 4);
        if (g) {
            const kt_op *op = kt_graph_op(g, 0);
            CHECK(op->reducer == KT_REDUCE_SUM && op->out_rank == 2 &&
                  op->nvars == 3 && op->var[2].reduction &&
                  op->var[2].extent == 300 && !op->var[0].reduction &&
                  op->ninputs == 2 && op->naccess == 2 && !op->in_place &&
                  op->opaque[0] == '\0' && op->line == 3);
            CHECK(strcmp(op->text, "y[i,k] = sum(j) x[i,j] * W[j,k]") == 0);
        }
        kt_graph_destroy(g);
    }
    {
        int64_t out[3] = {8, 4, 30};
        g = expect_ok("conv1d",
                      "input data[8,16,32]\nweight filters[16,4,3]\n"
                      "out[b,co,x] = sum(ci,dx) data[b,ci,x+dx] * "
                      "filters[ci,co,dx]\n");
        check_shape("conv1d", g, "out", 3, out, 4);
        kt_graph_destroy(g);
    }
    {
        int64_t o[4] = {2, 4, 8, 8};
        g = expect_ok("same conv2d",
                      "input x[2,3,8,8]\nweight f[4,3,3,3]\n"
                      "o[n,co,h:8,w:8] = sum(ci,kh,kw) "
                      "pad(x[n,ci,h+kh-1,w+kw-1]) * f[co,ci,kh,kw]\n");
        check_shape("same conv2d", g, "o", 4, o, 4);
        if (g) CHECK(kt_graph_op(g, 0)->access[0].padded == 1 &&
                     kt_graph_op(g, 0)->access[1].padded == 0);
        kt_graph_destroy(g);
    }
    {
        int64_t o[4] = {2, 4, 6, 6};
        g = expect_ok("valid conv2d",
                      "input x[2,3,8,8]\nweight f[4,3,3,3]\n"
                      "o[n,co,h,w] = sum(ci,kh,kw) x[n,ci,h+kh,w+kw] * "
                      "f[co,ci,kh,kw]\n");
        check_shape("valid conv2d", g, "o", 4, o, 4);
        kt_graph_destroy(g);
    }
    {
        int64_t m[4] = {2, 4, 4, 4}, m9[4] = {2, 4, 4, 4};
        g = expect_ok("max pool",
                      "input o[2,4,8,8]\ninput p[2,4,9,9]\n"
                      "m[n,c,h,w] = max(dh:2,dw:2) o[n,c,h*2+dh,w*2+dw]\n"
                      "m9[n,c,h,w] = max(dh:2,dw:2) p[n,c,h*2+dh,w*2+dw]\n");
        check_shape("max pool", g, "m", 4, m, 4);
        check_shape("max pool (odd)", g, "m9", 4, m9, 4);
        if (g) CHECK(kt_graph_op(g, 0)->reducer == KT_REDUCE_MAX);
        kt_graph_destroy(g);
    }
    {
        int64_t z[2] = {3, 5};
        g = expect_ok("broadcast", "input a[3,5]\ninput b[5]\n"
                                   "z[i,j] = a[i,j] + b[j]\n");
        check_shape("broadcast", g, "z", 2, z, 4);
        kt_graph_destroy(g);
    }
    {
        int64_t u[1] = {12}, u2[1] = {11}, s2[1] = {5}, r[1] = {10};
        g = expect_ok("upsample and friends",
                      "input x[6]\ninput v[10]\n"
                      "u[i] = x[i/2]\nu2[i] = x[(i+1)/2]\n"
                      "s2[i] = v[2*i]\nr[i] = v[9-i]\n");
        check_shape("upsample", g, "u", 1, u, 4);
        check_shape("upsample (i+1)/2", g, "u2", 1, u2, 4);
        check_shape("stride 2", g, "s2", 1, s2, 4);
        check_shape("reverse", g, "r", 1, r, 4);
        kt_graph_destroy(g);
    }
    {
        int64_t y[1] = {4}, v[2] = {2, 3};
        g = expect_ok("dtypes",
                      "input h[4] f16\ninput d[2,3] f64\ninput q[4] i8\n"
                      "input bb[4] bf16\ninput u[4] u8\ninput l[4] i64\n"
                      "input k[4] i32\ninput f[4] f32\n"
                      "y[i] = relu(h[i])\nv[i,j] = exp(d[i,j])\n"
                      "w[i] = q[i] * 2\n");
        check_shape("f16 activation", g, "y", 1, y, 2);
        check_shape("f64 activation", g, "v", 2, v, 8);
        check_shape("i8 activation", g, "w", 1, y, 1);
        check_shape("bf16", g, "bb", 1, y, 2);
        check_shape("u8", g, "u", 1, y, 1);
        check_shape("i64", g, "l", 1, y, 8);
        check_shape("i32", g, "k", 1, y, 4);
        check_shape("f32", g, "f", 1, y, 4);
        kt_graph_destroy(g);
    }
    {
        int64_t c[3] = {3, 5, 5};
        g = expect_ok("opaque", "input a[3,5,5]\n"
                                "c[b,i,j] = opaque(cholesky, a[b,:,:])\n");
        check_shape("opaque", g, "c", 3, c, 4);
        if (g) {
            const kt_op *op = kt_graph_op(g, 0);
            CHECK(strcmp(op->opaque, "cholesky") == 0);
            CHECK(op->var[0].splittable && !op->var[1].splittable &&
                  !op->var[2].splittable);
            CHECK(op->access[0].whole[1] && op->access[0].whole[2] &&
                  !op->access[0].whole[0]);
        }
        kt_graph_destroy(g);
    }
    {
        /* whitespace and comments where a person would put them */
        int64_t y[2] = {4, 2};
        g = expect_ok("spacing",
                      "  input x [ 4 , 3 ]   # data\n"
                      "\tweight W[3,2]\n"
                      "y [ i , k ] = sum( j ) x [ i , j ] * W[j,k]  # mm\n");
        check_shape("spacing", g, "y", 2, y, 4);
        kt_graph_destroy(g);
    }
}

/* ------------------------------------------- 3. TDL analysis (Tofu 4.2) */

static void test_analysis(void) {
    kt_graph *g;
    int vars[KT_MAX_VARS], n, v, empty;
    kt_range box[KT_MAX_VARS];

    /* shift_two: B[i] = A[i+2], i in [0,9]; halves need A[2..6], A[7..11] */
    g = expect_ok("shift_two", "input A[12]\nB[i] = A[i+2]\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        kt_range part;
        CHECK(op->var[0].extent == 10);
        n = kt_op_strategies(op, 2, NULL, vars);
        CHECK(n == 1 && vars[0] == 0);
        kt_op_var_box(op, box);
        CHECK(range_is(box[0], 0, 10));
        part = box[0];
        box[0] = kt_split_range(part, 2, 0);
        CHECK(range_is(box[0], 0, 5));
        CHECK(range_is(need_dim(g, op, "A", box, 0, &empty), 2, 7) && !empty);
        box[0] = kt_split_range(part, 2, 1);
        CHECK(range_is(box[0], 5, 10));
        CHECK(range_is(need_dim(g, op, "A", box, 0, &empty), 7, 12) &&
              !empty);
        /* an empty variable range needs nothing */
        box[0].lo = box[0].hi = 3;
        need_dim(g, op, "A", box, 0, &empty);
        CHECK(empty);
        /* more parts than elements: no strategy */
        CHECK(kt_op_strategies(op, 11, NULL, vars) == 0);
        CHECK(kt_op_strategies(op, 10, NULL, vars) == 1);
    }
    kt_graph_destroy(g);

    /* conv1d (Tofu Figure 2/3) */
    g = expect_ok("conv1d",
                  "input data[8,16,32]\nweight filters[16,4,3]\n"
                  "out[b,co,x] = sum(ci,dx) data[b,ci,x+dx] * "
                  "filters[ci,co,dx]\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        int b = var_named(op, "b"), co = var_named(op, "co"),
            x = var_named(op, "x"), ci = var_named(op, "ci"),
            dx = var_named(op, "dx");
        kt_range p0[KT_MAX_VARS], p1[KT_MAX_VARS], r0, r1;
        int d;
        CHECK(b == 0 && co == 1 && x == 2 && ci >= 3 && dx >= 3);
        CHECK(!op->var[b].reduction && !op->var[x].reduction &&
              op->var[ci].reduction && op->var[dx].reduction);
        CHECK(op->var[x].extent == 30 && op->var[dx].extent == 3 &&
              op->var[ci].extent == 16);
        n = kt_op_strategies(op, 2, NULL, vars);
        CHECKF(n == 5, "conv1d k=2: %d strategies", n);
        n = kt_op_strategies(op, 4, NULL, vars);
        CHECKF(n == 4, "conv1d k=4: %d strategies", n);
        for (v = 0; v < n; v++) CHECK(vars[v] != dx);
        n = kt_op_strategies(op, 5, NULL, vars);
        CHECKF(n == 3 && vars[0] == b && vars[1] == x && vars[2] == ci,
               "conv1d k=5: %d strategies", n);
        /* with a box: b narrowed to one element is no longer splittable */
        kt_op_var_box(op, box);
        box[b].hi = 1;
        n = kt_op_strategies(op, 2, box, vars);
        CHECK(n == 4);
        for (v = 0; v < n; v++) CHECK(vars[v] != b);

        /* split b: half of data along dim 0, all of filters */
        kt_op_var_box(op, p0);
        kt_op_var_box(op, p1);
        p0[b] = kt_split_range(p0[b], 2, 0);
        p1[b] = kt_split_range(p1[b], 2, 1);
        CHECK(range_is(need_dim(g, op, "data", p0, 0, &empty), 0, 4));
        CHECK(range_is(need_dim(g, op, "data", p1, 0, &empty), 4, 8));
        CHECK(range_is(need_dim(g, op, "data", p0, 1, &empty), 0, 16));
        CHECK(range_is(need_dim(g, op, "data", p0, 2, &empty), 0, 32));
        for (d = 0; d < 3; d++) {
            const int64_t full[3] = {16, 4, 3};
            CHECK(range_is(need_dim(g, op, "filters", p0, d, &empty), 0,
                           full[d]));
            CHECK(range_is(need_dim(g, op, "filters", p1, d, &empty), 0,
                           full[d]));
        }
        /* split ci: half of data along dim 1, half of filters along dim 0,
           a partial output */
        kt_op_var_box(op, p0);
        kt_op_var_box(op, p1);
        p0[ci] = kt_split_range(p0[ci], 2, 0);
        p1[ci] = kt_split_range(p1[ci], 2, 1);
        CHECK(range_is(need_dim(g, op, "data", p0, 0, &empty), 0, 8));
        CHECK(range_is(need_dim(g, op, "data", p0, 1, &empty), 0, 8));
        CHECK(range_is(need_dim(g, op, "data", p1, 1, &empty), 8, 16));
        CHECK(range_is(need_dim(g, op, "filters", p0, 0, &empty), 0, 8));
        CHECK(range_is(need_dim(g, op, "filters", p1, 0, &empty), 8, 16));
        CHECK(range_is(need_dim(g, op, "filters", p1, 1, &empty), 0, 4));
        {
            kt_box ob;
            kt_op_output_box(op, p1, &ob);
            CHECK(range_is(ob.r[0], 0, 8) && range_is(ob.r[1], 0, 4) &&
                  range_is(ob.r[2], 0, 30));
        }
        /* split x: a halo of width(dx) - 1 = 2 */
        kt_op_var_box(op, p0);
        kt_op_var_box(op, p1);
        p0[x] = kt_split_range(p0[x], 2, 0);
        p1[x] = kt_split_range(p1[x], 2, 1);
        r0 = need_dim(g, op, "data", p0, 2, &empty);
        r1 = need_dim(g, op, "data", p1, 2, &empty);
        CHECKF(range_is(r0, 0, 17) && range_is(r1, 15, 32),
               "[%lld,%lld) [%lld,%lld)", (long long)r0.lo, (long long)r0.hi,
               (long long)r1.lo, (long long)r1.hi);
        CHECK(r0.hi - r1.lo == 2);
        CHECK(range_is(need_dim(g, op, "filters", p0, 2, &empty), 0, 3));
        /* split dx: each part reads a window shifted by its dx range */
        kt_op_var_box(op, p0);
        p0[dx] = kt_split_range(p0[dx], 2, 1); /* dx in [1,3) */
        CHECK(range_is(need_dim(g, op, "data", p0, 2, &empty), 1, 32));
        CHECK(range_is(need_dim(g, op, "filters", p0, 2, &empty), 1, 3));
    }
    kt_graph_destroy(g);

    /* batch_cholesky: only b */
    g = expect_ok("cholesky", "input a[4,5,5]\n"
                              "c[b,i,j] = opaque(cholesky, a[b,:,:])\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        kt_range p[KT_MAX_VARS];
        n = kt_op_strategies(op, 2, NULL, vars);
        CHECK(n == 1 && vars[0] == 0);
        kt_op_var_box(op, p);
        p[0] = kt_split_range(p[0], 2, 1);
        CHECK(range_is(need_dim(g, op, "a", p, 0, &empty), 2, 4));
        CHECK(range_is(need_dim(g, op, "a", p, 1, &empty), 0, 5));
        CHECK(range_is(need_dim(g, op, "a", p, 2, &empty), 0, 5));
    }
    kt_graph_destroy(g);

    /* padded reads need only the part inside the tensor */
    g = expect_ok("padded 1-d", "input x[10]\ny[i] = x[i] + pad(x[i+1])\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        kt_range p[KT_MAX_VARS];
        CHECK(kt_graph_tensor(g, op->output)->shape[0] == 10);
        CHECK(op->ninputs == 1 && op->naccess == 2);
        kt_op_var_box(op, p);
        p[0] = kt_split_range(p[0], 2, 0);
        CHECK(range_is(need_dim(g, op, "x", p, 0, &empty), 0, 6));
        kt_op_var_box(op, p);
        p[0] = kt_split_range(p[0], 2, 1);
        CHECK(range_is(need_dim(g, op, "x", p, 0, &empty), 5, 10));
    }
    kt_graph_destroy(g);
    g = expect_ok("same conv2d halo",
                  "input x[2,3,8,8]\nweight f[4,3,3,3]\n"
                  "o[n,co,h:8,w:8] = sum(ci,kh,kw) "
                  "pad(x[n,ci,h+kh-1,w+kw-1]) * f[co,ci,kh,kw]\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        kt_range p[KT_MAX_VARS];
        int h = var_named(op, "h");
        kt_op_var_box(op, p);
        p[h] = kt_split_range(p[h], 2, 0);
        CHECK(range_is(need_dim(g, op, "x", p, 2, &empty), 0, 5));
        kt_op_var_box(op, p);
        p[h] = kt_split_range(p[h], 2, 1);
        CHECK(range_is(need_dim(g, op, "x", p, 2, &empty), 3, 8));
        CHECK(range_is(need_dim(g, op, "x", p, 3, &empty), 0, 8));
    }
    kt_graph_destroy(g);
}

/* --------------------------------------------- 4. kt_sym_interval_eval */

static void test_sym_eval(void) {
    kt_graph *g = expect_ok("pool", "input o[2,4,8,8]\n"
                                    "m[n,c,h,w] = max(dh:2,dw:2) "
                                    "o[n,c,h*2+dh,w*2+dw]\n");
    kt_range box[KT_MAX_VARS], r;
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        int h = var_named(op, "h"), dh = var_named(op, "dh"),
            w = var_named(op, "w"), dw = var_named(op, "dw");
        const kt_sym_interval *s = &op->access[0].dim[2];
        kt_op_var_box(op, box);
        box[h].lo = 1;
        box[h].hi = 3;
        r = kt_sym_interval_eval(s, op->nvars, box);
        CHECKF(range_is(r, 2, 6), "[%lld,%lld)", (long long)r.lo,
               (long long)r.hi);
        box[dh].lo = 1; /* dh in [1,2): 2*[1,2] + 1 */
        r = kt_sym_interval_eval(s, op->nvars, box);
        CHECK(range_is(r, 3, 6));
        kt_op_var_box(op, box);
        r = kt_sym_interval_eval(s, op->nvars, box);
        CHECK(range_is(r, 0, 8));
        r = kt_sym_interval_eval(&op->access[0].dim[3], op->nvars, box);
        CHECK(range_is(r, 0, 8));
        box[w].lo = 3;
        box[dw].hi = 1;
        r = kt_sym_interval_eval(&op->access[0].dim[3], op->nvars, box);
        CHECK(range_is(r, 6, 7));
        /* an empty variable range gives an empty interval */
        box[w].hi = 3;
        r = kt_sym_interval_eval(&op->access[0].dim[3], op->nvars, box);
        CHECK(r.hi <= r.lo);
        /* n and c are plain */
        kt_op_var_box(op, box);
        box[0].lo = 1;
        r = kt_sym_interval_eval(&op->access[0].dim[0], op->nvars, box);
        CHECK(range_is(r, 1, 2));
    }
    kt_graph_destroy(g);

    /* a negative coefficient reverses ranges */
    g = expect_ok("reverse", "input x[10]\ny[i] = x[9-i]\n"
                             "z[i] = x[-i+9]\nd[i] = x[(9-i)/2]\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        CHECK(op->var[0].extent == 10);
        box[0].lo = 0;
        box[0].hi = 3;
        r = kt_sym_interval_eval(&op->access[0].dim[0], 1, box);
        CHECKF(range_is(r, 7, 10), "[%lld,%lld)", (long long)r.lo,
               (long long)r.hi);
        box[0].lo = 7;
        box[0].hi = 10;
        r = kt_sym_interval_eval(&op->access[0].dim[0], 1, box);
        CHECK(range_is(r, 0, 3));
        r = kt_sym_interval_eval(&kt_graph_op(g, 1)->access[0].dim[0], 1,
                                 box);
        CHECK(range_is(r, 0, 3));
        /* (9-i)/2, i in [7,10): 9-i in [0,2] -> [0,1] */
        r = kt_sym_interval_eval(&kt_graph_op(g, 2)->access[0].dim[0], 1,
                                 box);
        CHECK(range_is(r, 0, 2));
        CHECK(kt_graph_tensor(g, kt_graph_op(g, 2)->output)->shape[0] == 10);
        /* a split of the reversed op reads the mirrored halves */
        {
            kt_range p[1];
            int empty;
            kt_op_var_box(op, p);
            p[0] = kt_split_range(p[0], 2, 0); /* i in [0,5) */
            CHECK(range_is(need_dim(g, op, "x", p, 0, &empty), 5, 10));
        }
    }
    kt_graph_destroy(g);

    /* division: x[i/2], i in [3,8) reads [1,4) */
    g = expect_ok("divide", "input x[6]\nu[i] = x[i/2]\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        box[0].lo = 3;
        box[0].hi = 8;
        r = kt_sym_interval_eval(&op->access[0].dim[0], 1, box);
        CHECK(range_is(r, 1, 4));
        CHECK(op->access[0].dim[0].divisor == 2);
    }
    kt_graph_destroy(g);

    /* a hand-built interval: (2*LO_0 + 3*HI_1 - 1) / 3 .. (5*HI_0 + 1)/3 */
    {
        kt_sym_interval s;
        kt_range b[2];
        memset(&s, 0, sizeof s);
        s.divisor = 3;
        s.lower.lo_coef[0] = 2;
        s.lower.hi_coef[1] = 3;
        s.lower.c = -1;
        s.upper.hi_coef[0] = 5;
        s.upper.c = 1;
        b[0].lo = 1;
        b[0].hi = 4; /* LO_0 = 1, HI_0 = 3 */
        b[1].lo = 0;
        b[1].hi = 1; /* HI_1 = 0 */
        r = kt_sym_interval_eval(&s, 2, b);
        CHECK(range_is(r, 0, 6)); /* floor(1/3)=0, floor(16/3)+1=6 */
        s.lower.c = -5;            /* floor(-3/3) = -1 */
        r = kt_sym_interval_eval(&s, 2, b);
        CHECK(range_is(r, -1, 6));
        s.lower.c = -6;            /* floor(-4/3) = -2: rounds down */
        r = kt_sym_interval_eval(&s, 2, b);
        CHECK(range_is(r, -2, 6));
    }
}

/* ------------------------------------------------- 5. kt_op_placements */

static void test_placements(void) {
    kt_graph *g = expect_ok("matmul", "input x[4,6]\nweight W[6,8]\n"
                                      "y[i,k] = sum(j) x[i,j] * W[j,k]\n");
    kt_factors f;
    kt_error err;
    kt_placement needed[KT_MAX_VARS], produced, target;
    int split[KT_MAX_CUTS];
    kt_status s;
    int64_t bytes, received[4], sum;
    int dev, jx, jw;
    memset(needed, 0, sizeof needed);
    memset(&produced, 0, sizeof produced);
    memset(&target, 0, sizeof target);
    if (!g) return;
    {
        const kt_op *op = kt_graph_op(g, 0);
        const kt_tensor *y = kt_graph_tensor(g, op->output);
        int i = var_named(op, "i"), j = var_named(op, "j"),
            k = var_named(op, "k");
        kt_tiling t;
        jx = input_named(g, op, "x");
        jw = input_named(g, op, "W");
        CHECK(jx >= 0 && jw >= 0);
        CHECK(kt_factors_parse("2,2", &f, &err) == KT_OK);
        split[0] = i;
        split[1] = j;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK) {
            /* device d = (c1, c2) = (d/2, d%2): i part c1, j part c2 */
            CHECK(produced.partials == 2 && produced.ndev == 4 &&
                  produced.rank == 2);
            for (dev = 0; dev < 4; dev++) {
                int64_t r0 = 2 * (dev / 2), c0 = 3 * (dev % 2);
                CHECKF(range_is(produced.box[dev].r[0], r0, r0 + 2) &&
                           range_is(produced.box[dev].r[1], 0, 8),
                       "dev %d output box", dev);
                CHECK(produced.partial_class[dev] == dev % 2);
                CHECKF(range_is(needed[jx].box[dev].r[0], r0, r0 + 2) &&
                           range_is(needed[jx].box[dev].r[1], c0, c0 + 3),
                       "dev %d needs x", dev);
                CHECKF(range_is(needed[jw].box[dev].r[0], c0, c0 + 3) &&
                           range_is(needed[jw].box[dev].r[1], 0, 8),
                       "dev %d needs W", dev);
                CHECK(needed[jx].partials == 1 && needed[jw].partials == 1);
            }
            /* P at cut 2 -> S0.R: every element of a row block is held as
               q = 2 partials by the two devices of its group and needed by
               both: (q-1) + |T| - 1 = 2 per element, 32 elements, 4 bytes */
            CHECK(kt_tiling_parse("S0.R", &t, &err) == KT_OK);
            s = kt_placement_from_tiling(&target, &t, 2, y->shape, &f, &err);
            CHECKF(s == KT_OK, "%s", err.message);
            s = kt_conversion_cost(2, y->shape, y->elem_bytes, &produced,
                                   &target, &bytes, received, &err);
            CHECKF(s == KT_OK && bytes == 2 * 32 * 4, "P -> S0.R: %lld (%s)",
                   (long long)bytes, err.message);
            sum = received[0] + received[1] + received[2] + received[3];
            CHECK_EQ_I64(sum, bytes);
            /* the same as the tiling S0.P (the matmul's output tiling) */
            {
                kt_tiling from;
                int64_t b2 = -1;
                kt_tiling_parse("S0.P", &from, &err);
                kt_tiling_conversion_cost(2, y->shape, 4, &f, &from, &t, &b2,
                                          NULL, &err);
                CHECK_EQ_I64(b2, bytes);
            }
            kt_placement_free(&target);
            /* P -> S0.S1 is a reduce-scatter: 1 per element */
            kt_tiling_parse("S0.S1", &t, &err);
            kt_placement_from_tiling(&target, &t, 2, y->shape, &f, &err);
            kt_conversion_cost(2, y->shape, 4, &produced, &target, &bytes,
                               NULL, &err);
            CHECK_EQ_I64(bytes, 32 * 4);
            kt_placement_free(&target);
            /* P -> R.R: (q-1) + 4 - 1 = 4 per element, 32 elements */
            kt_tiling_parse("R.R", &t, &err);
            kt_placement_from_tiling(&target, &t, 2, y->shape, &f, &err);
            kt_conversion_cost(2, y->shape, 4, &produced, &target, &bytes,
                               NULL, &err);
            CHECK_EQ_I64(bytes, 4 * 32 * 4);
            kt_placement_free(&target);

            /* x held as S0.S1 is exactly what is needed: free; held as
               S1.S0, devices 1 and 2 each lack a 2x3 block: 12 elements */
            {
                const kt_tensor *x = tensor_named(g, "x");
                const kt_tensor *w = tensor_named(g, "W");
                kt_tiling_parse("S0.S1", &t, &err);
                kt_placement_from_tiling(&target, &t, 2, x->shape, &f, &err);
                kt_conversion_cost(2, x->shape, 4, &target, &needed[jx],
                                   &bytes, NULL, &err);
                CHECK_EQ_I64(bytes, 0);
                kt_placement_free(&target);
                kt_tiling_parse("S1.S0", &t, &err);
                kt_placement_from_tiling(&target, &t, 2, x->shape, &f, &err);
                kt_conversion_cost(2, x->shape, 4, &target, &needed[jx],
                                   &bytes, NULL, &err);
                CHECK_EQ_I64(bytes, 12 * 4);
                kt_placement_free(&target);
                /* W as R.S0 is free; as S0.R devices 1 and 2 lack 3x8 */
                kt_tiling_parse("R.S0", &t, &err);
                kt_placement_from_tiling(&target, &t, 2, w->shape, &f, &err);
                kt_conversion_cost(2, w->shape, 4, &target, &needed[jw],
                                   &bytes, NULL, &err);
                CHECK_EQ_I64(bytes, 0);
                kt_placement_free(&target);
                kt_tiling_parse("S0.R", &t, &err);
                kt_placement_from_tiling(&target, &t, 2, w->shape, &f, &err);
                kt_conversion_cost(2, w->shape, 4, &target, &needed[jw],
                                   &bytes, NULL, &err);
                CHECK_EQ_I64(bytes, 48 * 4);
                kt_placement_free(&target);
            }
        }
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);

        /* both cuts on i: four row blocks, no partials */
        split[0] = i;
        split[1] = i;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK) {
            CHECK(produced.partials == 1);
            for (dev = 0; dev < 4; dev++)
                CHECK(range_is(produced.box[dev].r[0], dev, dev + 1) &&
                      range_is(needed[jx].box[dev].r[0], dev, dev + 1) &&
                      range_is(needed[jw].box[dev].r[0], 0, 6));
        }
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);

        /* j at both cuts: q = 4 partial classes, numbered mixed-radix */
        split[0] = j;
        split[1] = j;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK) {
            CHECK(produced.partials == 4);
            for (dev = 0; dev < 4; dev++) {
                CHECK(produced.partial_class[dev] == dev);
                CHECK(range_is(produced.box[dev].r[0], 0, 4));
            }
            /* j = 6 in four parts: [0,1) [1,3) [3,4) [4,6) */
            CHECK(range_is(needed[jx].box[0].r[1], 0, 1) &&
                  range_is(needed[jx].box[1].r[1], 1, 3) &&
                  range_is(needed[jx].box[2].r[1], 3, 4) &&
                  range_is(needed[jx].box[3].r[1], 4, 6));
        }
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);

        /* k at cut 1 of factor 3: uneven columns */
        CHECK(kt_factors_parse("3", &f, &err) == KT_OK);
        split[0] = k;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK) {
            CHECK(range_is(produced.box[0].r[1], 0, 2) &&
                  range_is(produced.box[1].r[1], 2, 5) &&
                  range_is(produced.box[2].r[1], 5, 8));
            CHECK(range_is(needed[jw].box[1].r[1], 2, 5) &&
                  range_is(needed[jx].box[1].r[1], 0, 6));
        }
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);

        /* an out-of-range variable index */
        split[0] = 7;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_ERR_INVALID && has(err.message, "line 3") &&
                   has(err.message, "variable 7"),
               "%s", err.message);
        split[0] = -2;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_ERR_INVALID && has(err.message, "variable -2"), "%s",
               err.message);
        split[0] = op->nvars;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_ERR_INVALID, "%s", err.message);
#ifdef KT_SPLIT_REPLICATE
        /* a replicated cut: every device computes all of y */
        split[0] = KT_SPLIT_REPLICATE;
        memset(needed, 0, sizeof needed);
        memset(&produced, 0, sizeof produced);
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK)
            for (dev = 0; dev < 3; dev++)
                CHECK(range_is(produced.box[dev].r[0], 0, 4) &&
                      range_is(produced.box[dev].r[1], 0, 8) &&
                      range_is(needed[jx].box[dev].r[1], 0, 6) &&
                      produced.partials == 1);
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);
#endif
        /* i (4) split into 2*3 parts */
        kt_factors_parse("2,3", &f, &err);
        split[0] = i;
        split[1] = i;
        memset(needed, 0, sizeof needed);
        memset(&produced, 0, sizeof produced);
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_ERR_SHAPE && has(err.message, "line 3") &&
                   has(err.message, "index variable i") &&
                   has(err.message, "6 parts"),
               "%s", err.message);
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);
    }
    kt_graph_destroy(g);

    /* opaque-bound variable */
    g = expect_ok("cholesky", "input a[4,5,5]\n"
                              "c[b,i,j] = opaque(cholesky, a[b,:,:])\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        kt_factors_parse("2", &f, &err);
        split[0] = var_named(op, "i");
        memset(needed, 0, sizeof needed);
        memset(&produced, 0, sizeof produced);
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_ERR_INVALID && has(err.message, "line 2") &&
                   has(err.message, "i of opaque(cholesky)"),
               "%s", err.message);
        kt_placement_free(&needed[0]);
        kt_placement_free(&produced);
        split[0] = 0;
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK)
            CHECK(range_is(needed[0].box[1].r[0], 2, 4) &&
                  range_is(needed[0].box[1].r[1], 0, 5) &&
                  produced.partials == 1);
        kt_placement_free(&needed[0]);
        kt_placement_free(&produced);
    }
    kt_graph_destroy(g);

    /* conv1d: dx (3) into 4 parts */
    g = expect_ok("conv1d", "input data[8,16,32]\nweight filters[16,4,3]\n"
                            "out[b,co,x] = sum(ci,dx) data[b,ci,x+dx] * "
                            "filters[ci,co,dx]\n");
    if (g) {
        const kt_op *op = kt_graph_op(g, 0);
        kt_factors_parse("4", &f, &err);
        split[0] = var_named(op, "dx");
        memset(needed, 0, sizeof needed);
        memset(&produced, 0, sizeof produced);
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_ERR_SHAPE && has(err.message, "index variable dx") &&
                   has(err.message, "line 3"),
               "%s", err.message);
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);
        /* x split by 2 at both cuts: halos of 2 between neighbours */
        kt_factors_parse("2,2", &f, &err);
        split[0] = var_named(op, "x");
        split[1] = var_named(op, "x");
        s = kt_op_placements(g, op, &f, split, needed, &produced, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        if (s == KT_OK) {
            int jd = input_named(g, op, "data");
            /* x = 30 in 2 then 2: [0,7) [7,15) [15,22) [22,30) */
            CHECK(range_is(needed[jd].box[0].r[2], 0, 9) &&
                  range_is(needed[jd].box[1].r[2], 7, 17) &&
                  range_is(needed[jd].box[2].r[2], 15, 24) &&
                  range_is(needed[jd].box[3].r[2], 22, 32));
        }
        kt_placement_free(&needed[0]);
        kt_placement_free(&needed[1]);
        kt_placement_free(&produced);
    }
    kt_graph_destroy(g);
}

/* --------------------------------------------------- 6. topological order */

static void test_order(void) {
    kt_graph *g = NULL;
    kt_error err;
    int64_t shape[1] = {4}, sq[2] = {3, 5};
    kt_status s;
    int i, iy, iz, iu;

    /* the builder: h is read before the op producing it is added */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[i] = relu(h[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "h[i] = x[i] * 2", 0, &err) == KT_OK);
    s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    CHECK(kt_graph_op(g, 0)->output == kt_graph_find_tensor(g, "h"));
    CHECK(kt_graph_op(g, 1)->output == kt_graph_find_tensor(g, "y"));
    CHECK(tensor_named(g, "h")->producer == 0);
    CHECK(tensor_named(g, "y")->producer == 1);
    CHECK(tensor_named(g, "h")->kind == KT_ACTIVATION);
    CHECK(strcmp(kt_graph_op(g, 0)->text, "h[i] = x[i] * 2") == 0);
    /* finalizing again changes nothing */
    CHECK(kt_graph_finalize(g, &err) == KT_OK);
    CHECK(kt_graph_op(g, 0)->output == kt_graph_find_tensor(g, "h"));
    kt_graph_destroy(g);

    /* a file in order keeps its order, independent ops included */
    g = expect_ok("in order", "input x[4]\n"
                              "c[i] = tanh(x[i])\n"
                              "a[i] = relu(x[i])\n"
                              "b[i] = a[i] + c[i]\n"
                              "d[i] = sigmoid(x[i])\n");
    if (g) {
        static const char *const names[] = {"c", "a", "b", "d"};
        CHECK(kt_graph_op_count(g) == 4);
        for (i = 0; i < 4; i++) {
            CHECK(kt_graph_op(g, i)->output ==
                  kt_graph_find_tensor(g, names[i]));
            CHECK(kt_graph_op(g, i)->line == i + 2);
            CHECK(tensor_named(g, names[i])->producer == i);
        }
    }
    kt_graph_destroy(g);

    /* an in-place update comes after every reader of what it updates */
    g = expect_ok("update after readers",
                  "input x[4,3]\nweight W[3,5]\ninput dW[3,5]\n"
                  "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                  "z[j,k] = W[j,k] * 2\n"
                  "W[j,k] = W[j,k] - dW[j,k]\n"
                  "u[i,k] = relu(y[i,k])\n");
    if (g) {
        const kt_op *up = op_writing(g, "W", 1, &i);
        op_writing(g, "y", 0, &iy);
        op_writing(g, "z", 0, &iz);
        op_writing(g, "u", 0, &iu);
        CHECK(up != NULL && up->in_place == 1);
        CHECK(i > iy && i > iz && iy >= 0 && iz >= 0 && iu > iy);
        CHECK(tensor_named(g, "W")->updater == i);
        CHECK(tensor_named(g, "W")->producer == -1);
        CHECK(tensor_named(g, "W")->kind == KT_WEIGHT);
        CHECK(tensor_named(g, "y")->updater == -1);
        if (up) CHECK(up->line == 6);
    }
    kt_graph_destroy(g);

    /* the builder can add an update before a reader's producer exists:
       the update still lands after the reader */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "W", 2, sq, 4, KT_WEIGHT, &err);
    kt_graph_add_tensor(g, "dW", 2, sq, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "g", 2, sq, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 2, sq, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[j,k] = W[j,k] * h[j,k]", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "W[j,k] = W[j,k] - dW[j,k]", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "h[j,k] = relu(g[j,k])", 0, &err) == KT_OK);
    s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    if (s == KT_OK) {
        op_writing(g, "h", 0, &i);
        op_writing(g, "y", 0, &iy);
        op_writing(g, "W", 1, &iu);
        CHECKF(i == 0 && iy == 1 && iu == 2, "order h %d y %d W %d", i, iy,
               iu);
        CHECK(tensor_named(g, "W")->updater == iu);
        CHECK(tensor_named(g, "h")->producer == i);
        CHECK(tensor_named(g, "y")->producer == iy);
    }
    kt_graph_destroy(g);

    /* ... after every reader: two readers added before the update, each
       waiting for an input produced after it (the update's edges come
       from every reader of W, not only the first) */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "W", 2, sq, 4, KT_WEIGHT, &err);
    kt_graph_add_tensor(g, "dW", 2, sq, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "g", 2, sq, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 2, sq, 4, KT_ACTIVATION, &err);
    kt_graph_add_tensor(g, "h2", 2, sq, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[j,k] = W[j,k] * h[j,k]", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "y2[j,k] = W[j,k] * h2[j,k]", 0, &err) ==
          KT_OK);
    CHECK(kt_graph_add_op(g, "W[j,k] = W[j,k] - dW[j,k]", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "h[j,k] = relu(g[j,k])", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "h2[j,k] = relu(h[j,k])", 0, &err) == KT_OK);
    s = kt_graph_finalize(g, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    if (s == KT_OK) {
        int ih2, iy2;
        op_writing(g, "y", 0, &iy);
        op_writing(g, "y2", 0, &iy2);
        op_writing(g, "h2", 0, &ih2);
        op_writing(g, "W", 1, &iu);
        CHECKF(iu > iy && iu > iy2 && iy2 > ih2,
               "order y %d y2 %d h2 %d W %d", iy, iy2, ih2, iu);
    }
    kt_graph_destroy(g);

    /* an in-place update of an activation follows its producer and readers */
    g = expect_ok("activation update", "input x[4]\nh[i] = relu(x[i])\n"
                                       "y[i] = h[i] * 3\nh[i] = h[i] * 2\n");
    if (g) {
        op_writing(g, "h", 1, &i);
        op_writing(g, "h", 0, &iz);
        op_writing(g, "y", 0, &iy);
        CHECK(i == 2 && iz == 0 && iy == 1);
        CHECK(tensor_named(g, "h")->producer == 0 &&
              tensor_named(g, "h")->updater == 2);
    }
    kt_graph_destroy(g);
}

/* ------------------------------------------------------ 7. kinds, loss */

static void test_kinds(void) {
    kt_graph *g = expect_ok("kinds",
                            "input x[4,3]\nweight W[3,2]\nstate m[3,2]\n"
                            "input dW[3,2]\n"
                            "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                            "m[j,k] = m[j,k] * 0.9 + dW[j,k]\n"
                            "loss y\n");
    int t;
    if (!g) return;
    CHECK(kt_graph_tensor_count(g) == 5);
    CHECK(kt_graph_op_count(g) == 2);
    CHECK(kt_graph_loss(g) == kt_graph_find_tensor(g, "y"));
    CHECK(tensor_named(g, "x")->kind == KT_INPUT);
    CHECK(tensor_named(g, "W")->kind == KT_WEIGHT);
    CHECK(tensor_named(g, "m")->kind == KT_OPTSTATE);
    CHECK(tensor_named(g, "y")->kind == KT_ACTIVATION);
    CHECK(tensor_named(g, "y")->line == 5);
    CHECK(tensor_named(g, "W")->line == 2);
    for (t = 0; t < kt_graph_tensor_count(g); t++) {
        const kt_tensor *tt = kt_graph_tensor(g, t);
        if (tt->kind == KT_ACTIVATION) {
            CHECK(tt->producer >= 0 &&
                  kt_graph_op(g, tt->producer)->output == t);
        } else {
            CHECK(tt->producer == -1);
        }
    }
    CHECK(tensor_named(g, "m")->updater >= 0);
    CHECK(kt_graph_op(g, tensor_named(g, "m")->updater)->in_place == 1);
    CHECK(kt_graph_find_tensor(g, "nothing") == -1);
    CHECK(kt_graph_tensor(g, -1) == NULL && kt_graph_tensor(g, 5) == NULL);
    CHECK(kt_graph_op(g, -1) == NULL && kt_graph_op(g, 2) == NULL);
    kt_graph_destroy(g);

    g = expect_ok("no loss", "input x[4]\ny[i] = relu(x[i])\n");
    if (g) CHECK(kt_graph_loss(g) == -1);
    kt_graph_destroy(g);
    /* a declaration-only file is a model (nothing to compute) */
    g = expect_ok("leaves only", "input x[4]\nloss x\n");
    if (g) {
        CHECK(kt_graph_op_count(g) == 0);
        CHECK(kt_graph_loss(g) == 0);
    }
    kt_graph_destroy(g);
}

/* kt_graph_find_op: every op of every zoo model at its defaults (training
   steps, so ".update" ops too) found by its own name, and
   names that are not ops' -- tensors no op writes, an update of a tensor
   nothing updates, other suffixes, a name as long as the limit -- not
   found. */
static void test_find_op(void) {
    int i, o, found = 0, updates = 0;
    for (i = 0; kt_zoo_name(i); i++) {
        kt_graph *g = NULL;
        kt_error err;
        char spec[64];
        snprintf(spec, sizeof spec, "%s", kt_zoo_name(i));
        if (kt_zoo_build(spec, &g, &err) != KT_OK) {
            CHECKF(0, "%s: %s", spec, err.message);
            continue;
        }
        for (o = 0; o < kt_graph_op_count(g); o++) {
            const char *name = kt_graph_op(g, o)->name;
            int got = kt_graph_find_op(g, name);
            CHECKF(got == o, "%s: op %d '%s' found as %d", spec, o, name, got);
            found++;
            updates += kt_graph_op(g, o)->in_place;
        }
        kt_graph_destroy(g);
    }
    CHECKF(found > 1000 && updates > 50, "%d ops, %d updates", found,
           updates);
    {
        kt_graph *g = expect_ok("find op",
                                "input x[4,3]\nweight W[3,2]\nstate m[3,2]\n"
                                "input dW[3,2]\n"
                                "y[i,k] = sum(j) x[i,j] * W[j,k]\n"
                                "m[j,k] = m[j,k] * 0.9 + dW[j,k]\n");
        char longname[KT_NAME_MAX + 16];
        if (!g) return;
        CHECK(kt_graph_find_op(g, "y") == 0);
        CHECK(kt_graph_find_op(g, "m.update") == 1);
        CHECK(kt_graph_find_op(g, "m") == -1);        /* a leaf, updated */
        CHECK(kt_graph_find_op(g, "x") == -1);        /* an input */
        CHECK(kt_graph_find_op(g, "W.update") == -1); /* never updated */
        CHECK(kt_graph_find_op(g, "y.update") == -1);
        CHECK(kt_graph_find_op(g, "m.updates") == -1);
        CHECK(kt_graph_find_op(g, "m.update.update") == -1);
        CHECK(kt_graph_find_op(g, ".update") == -1);
        CHECK(kt_graph_find_op(g, "") == -1);
        CHECK(kt_graph_find_op(g, "nothing") == -1);
        memset(longname, 'm', sizeof longname);
        strcpy(longname + KT_NAME_MAX, ".update");
        CHECK(kt_graph_find_op(g, longname) == -1);
        kt_graph_destroy(g);
    }
}

/* The roofline's flops per point (kt_op_flops_per_point), known answers:
   one per function and arithmetic operator of the body, one more when a
   reduction folds the point into the output; what a compiler folds
   (constants alone, * 1, + 0) is free. */
static void test_flops_per_point(void) {
    static const struct {
        const char *op;
        double flops;
    } want[] = {
        {"mm", 2},     /* multiply, add */
        {"rowsum", 1}, /* add only */
        {"rowmax", 1}, /* compare only */
        {"copy", 0},
        {"r", 1},
        {"upd.update", 2}, /* W - c * dW */
        {"gate", 4},       /* sigmoid(a) * tanh(b) + 1 */
        {"ch", 1},         /* opaque: unknown, one per point */
        {"folded", 2}, /* (x * 1 + 0) * (2 * 3) - neg(4): x * 6 + 4 */
        {"paren", 2},      /* (x + a) * b, the root moved to the end */
        {"negc", 1},       /* x * -1: the -1 is folded */
    };
    kt_graph *g = expect_ok(
        "flops per point",
        "input x[4,3]\nweight W[3,2]\ninput dW[3,2]\nweight upd[3,2]\n"
        "input a[4,3]\ninput b[4,3]\ninput q[2,3,3]\n"
        "mm[i,k] = sum(j) x[i,j] * W[j,k]\n"
        "rowsum[i] = sum(j) x[i,j]\n"
        "rowmax[i] = max(j) x[i,j]\n"
        "copy[j,i] = x[i,j]\n"
        "r[i,j] = relu(x[i,j])\n"
        "upd[j,k] = upd[j,k] - 0.01 * dW[j,k]\n"
        "gate[i,j] = sigmoid(a[i,j]) * tanh(b[i,j]) + 1\n"
        "ch[n,i,j] = opaque(cholesky, q[n,:,:])\n"
        "folded[i,j] = (x[i,j] * 1 + 0) * (2 * 3) - neg(4)\n"
        "paren[i,j] = (x[i,j] + a[i,j]) * b[i,j]\n"
        "negc[i,j] = x[i,j] * -1\n");
    size_t i;
    if (!g) return;
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        int o = kt_graph_find_op(g, want[i].op);
        CHECKF(o >= 0, "flops: no op %s", want[i].op);
        if (o < 0) continue;
        CHECKF(kt_op_flops_per_point(kt_graph_op(g, o)) == want[i].flops,
               "flops per point of %s: %g, expected %g", want[i].op,
               kt_op_flops_per_point(kt_graph_op(g, o)), want[i].flops);
    }
    kt_graph_destroy(g);
}

/* Whitespace must not change the meaning of a statement: a reduction or
   an opaque call written with a space before '(' is still one. */
static void test_whitespace(void) {
    kt_graph *g = expect_ok("sum (j)", "input x[4,3]\nweight W[3,2]\n"
                                       "y[i,k] = sum (j) x[i,j] * W[j,k]\n");
    if (g) CHECK(kt_graph_op(g, 0)->reducer == KT_REDUCE_SUM);
    kt_graph_destroy(g);
    g = expect_ok("opaque (", "input a[2,3,3]\n"
                              "c[b,i,j] = opaque (cholesky, a[b,:,:])\n");
    kt_graph_destroy(g);
}

/* Index expressions are affine (Tofu 4.2): an expression that mentions a
   variable twice is still affine, and its range is that of the combined
   coefficient -- 2*i - i reads exactly what i reads. */
static void test_affine_combined(void) {
    kt_graph *g = expect_ok("2*i - i", "input x[10]\ny[i] = x[2*i - i]\n");
    if (g) {
        int64_t y[1] = {10};
        kt_range b[1];
        kt_range r;
        check_shape("2*i - i", g, "y", 1, y, 4);
        b[0].lo = 2;
        b[0].hi = 5;
        r = kt_sym_interval_eval(&kt_graph_op(g, 0)->access[0].dim[0], 1, b);
        CHECKF(range_is(r, 2, 5), "2*i - i over [2,5): [%lld,%lld)",
               (long long)r.lo, (long long)r.hi);
    }
    kt_graph_destroy(g);
    g = expect_ok("i - i", "input x[10]\ny[i:3] = x[i - i]\n");
    kt_graph_destroy(g);
}

/* Index constants are at most 1e15, but their products are not: a
   coefficient that does not fit in 64 bits must be refused, not wrapped
   (signed overflow is undefined behaviour; under -fsanitize=undefined with
   -fno-sanitize-recover this aborts, which is why it runs last). */
static void test_index_overflow(void) {
    static const char text[] =
        "input x[16]\ny[i:4] = x[i*999999999999999*999999999999999]\n";
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    memset(&err, 0, sizeof err);
    s = parse(text, &g, &err);
    CHECKF(s != KT_OK && err.line == 2 && has(err.message, "line 2"),
           "coefficient overflow: %s \"%s\"", kt_status_string(s),
           err.message);
    kt_graph_destroy(g);
}

/* ------------------------------------------- graphs and plans that misfit */

/* Every consumer refuses a graph that kt_graph_finalize has not accepted
   since its last change: never finalized, finalize failed (a cycle, a
   tensor read and never produced), or an op added after it.  Before, a
   plan search and the CPU backend ran on such graphs, and a verification
   of one whose activation was never produced passed. */
static void expect_not_final(kt_graph *g, const char *what) {
    kt_factors f;
    kt_plan p;
    kt_error err;
    kt_status s;
    kt_factors_default(2, &f, &err);
    s = kt_plan_init(&p, g, &f, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "not finalized"),
           "%s: plan_init %d %s", what, s, err.message);
    kt_plan_free(&p);
    s = kt_plan_search(g, &f, NULL, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "not finalized"),
           "%s: search %d %s", what, s, err.message);
    kt_plan_free(&p);
    s = kt_graph_autodiff(g, NULL, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "not finalized"),
           "%s: autodiff %d %s", what, s, err.message);
}

static void test_finalized(void) {
    kt_graph *g = NULL;
    kt_error err;
    int64_t shape[1] = {4};
    kt_factors f;
    kt_plan p, q;
    kt_status s;

    /* ops in an order finalize must change, never finalized */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[i] = relu(h[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "h[i] = x[i] * 2", 0, &err) == KT_OK);
    expect_not_final(g, "never finalized");
    /* finalized, a plan is made; an op added after makes it stale */
    CHECK(kt_graph_finalize(g, &err) == KT_OK);
    kt_factors_default(2, &f, &err);
    s = kt_plan_search(g, &f, NULL, &p, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    CHECK(kt_graph_add_op(g, "z[i] = y[i] + x[i]", 0, &err) == KT_OK);
    expect_not_final(g, "an op added after finalize");
    s = kt_plan_eval(g, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "not finalized"), "%s",
           err.message);
    kt_plan_free(&p);
    CHECK(kt_graph_finalize(g, &err) == KT_OK);
    s = kt_plan_init(&q, g, &f, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    kt_plan_free(&q);
    kt_graph_destroy(g);

    /* finalize failed: an activation read and never produced */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err);
    kt_graph_add_tensor(g, "h", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "y[i] = relu(h[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_finalize(g, &err) == KT_ERR_GRAPH);
    expect_not_final(g, "a tensor never produced");
    kt_graph_destroy(g);

    /* finalize failed: a cycle */
    kt_graph_create(&g, &err);
    kt_graph_add_tensor(g, "a", 1, shape, 4, KT_ACTIVATION, &err);
    kt_graph_add_tensor(g, "b", 1, shape, 4, KT_ACTIVATION, &err);
    CHECK(kt_graph_add_op(g, "a[i] = relu(b[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_add_op(g, "b[i] = tanh(a[i])", 0, &err) == KT_OK);
    CHECK(kt_graph_finalize(g, &err) == KT_ERR_GRAPH);
    expect_not_final(g, "a cycle");
    kt_graph_destroy(g);
}

/* A failed kt_graph_parse leaves the graph as it was before the call, as
   a failed kt_graph_add_op does: before, the lines above the bad one
   stayed, and parsing the corrected text into the same graph failed on
   "duplicate tensor name". */
static void test_parse_rollback(void) {
    static const char bad[] = "input x[4]\n"
                              "weight W[4]\n"
                              "y[i] = x[i] * W[i]\n"
                              "z[i] = y[i] + q[i]\n"; /* q: unknown */
    static const char good[] = "input x[4]\n"
                               "weight W[4]\n"
                               "y[i] = x[i] * W[i]\n"
                               "loss y\n";
    static const char more[] = "input u[4]\n"
                               "v[i] = u[i] + y[i]\n"
                               "W[i] = W[i] - v[i]\n" /* updates W */
                               "w[i] = nope(v[i])\n";
    kt_graph *g = NULL;
    kt_error err;
    kt_status s;
    int w;
    kt_graph_create(&g, &err);
    s = kt_graph_parse(g, bad, strlen(bad), &err);
    CHECKF(s != KT_OK && err.line == 4, "%d line %d %s", s, err.line,
           err.message);
    CHECK(kt_graph_tensor_count(g) == 0 && kt_graph_op_count(g) == 0);
    CHECK(kt_graph_find_tensor(g, "x") < 0 && kt_graph_find_tensor(g, "y") < 0);
    s = kt_graph_parse(g, good, strlen(good), &err);
    CHECKF(s == KT_OK, "%s", err.message);
    CHECK(kt_graph_tensor_count(g) == 3 && kt_graph_op_count(g) == 1);
    CHECK(kt_graph_loss(g) == kt_graph_find_tensor(g, "y"));
    /* a second text that fails after updating a tensor of the first:
       the update, the new tensors and the ops are all undone */
    w = kt_graph_find_tensor(g, "W");
    s = kt_graph_parse(g, more, strlen(more), &err);
    CHECKF(s != KT_OK && err.line == 4, "%d line %d %s", s, err.line,
           err.message);
    CHECK(kt_graph_tensor_count(g) == 3 && kt_graph_op_count(g) == 1);
    CHECK(kt_graph_tensor(g, w)->updater == -1);
    CHECK(kt_graph_find_tensor(g, "u") < 0 && kt_graph_find_tensor(g, "v") < 0);
    CHECK(kt_graph_find_tensor(g, "y") == 1 + kt_graph_find_tensor(g, "W"));
    CHECK(kt_graph_find_op(g, "y") == 0);
    /* still finalized: a plan is made of it */
    {
        kt_factors f;
        kt_plan p;
        kt_factors_default(2, &f, &err);
        s = kt_plan_search(g, &f, NULL, &p, &err);
        CHECKF(s == KT_OK, "%s", err.message);
        kt_plan_free(&p);
    }
    /* the first lines of `more` parse into it now (the last one dropped) */
    s = kt_graph_parse(g, more, strlen(more) - strlen("w[i] = nope(v[i])\n"),
                       &err);
    CHECKF(s == KT_OK, "%s", err.message);
    CHECK(kt_graph_tensor_count(g) == 5 && kt_graph_op_count(g) == 3);
    CHECK(kt_graph_tensor(g, w)->updater >= 0);
    kt_graph_destroy(g);

    /* autodiff undoes a failure too: y's gradient is written before h's
       op (34 reads, more than autodiff's statements take) fails */
    {
        char src[1024];
        size_t n = (size_t)snprintf(src, sizeof src,
                                    "input x[4]\nweight w[4]\nh[i] = w[i]");
        int k, nt, no;
        kt_factors f;
        kt_plan p;
        for (k = 1; k < 34; k++)
            n += (size_t)snprintf(src + n, sizeof src - n, " + w[i]");
        snprintf(src + n, sizeof src - n, "\ny[i] = relu(h[i])\nloss y\n");
        g = expect_ok("autodiff fails", src);
        if (g) {
            nt = kt_graph_tensor_count(g);
            no = kt_graph_op_count(g);
            s = kt_graph_autodiff(g, NULL, &err);
            CHECKF(s == KT_ERR_LIMIT && has(err.message, "too many reads"),
                   "%d %s", s, err.message);
            CHECK(kt_graph_tensor_count(g) == nt && kt_graph_op_count(g) == no);
            CHECK(kt_graph_find_tensor(g, "dh") < 0 &&
                  kt_graph_find_tensor(g, "dy") < 0);
            CHECK(kt_graph_tensor(g, kt_graph_find_tensor(g, "w"))->kind ==
                  KT_WEIGHT);
            kt_factors_default(2, &f, &err);
            s = kt_plan_search(g, &f, NULL, &p, &err); /* still finalized */
            CHECKF(s == KT_OK, "%s", err.message);
            kt_plan_free(&p);
            kt_graph_destroy(g);
        }
    }
}

/* The functions that take one op or tensor of a plan check that the plan
   is of the graph's shape and the index in range: before, another
   graph's plan or a bad index read freed or unallocated memory. */
static void test_plan_of_other_graph(void) {
    kt_graph *small = NULL, *big = NULL;
    kt_error err;
    kt_factors f;
    kt_plan ps, pb;
    kt_status s;
    int64_t bytes = 0;
    char buf[64];
    small = expect_ok("small", "input x[8]\ny[i] = relu(x[i])\n");
    big = expect_ok("big", "input x[8,8]\nweight W[8,8]\n"
                           "y[i,j] = sum(k) x[i,k] * W[k,j]\n"
                           "z[i,j] = relu(y[i,j])\n");
    kt_factors_default(4, &f, &err);
    CHECK(kt_plan_search(small, &f, NULL, &ps, &err) == KT_OK);
    CHECK(kt_plan_search(big, &f, NULL, &pb, &err) == KT_OK);
    s = kt_plan_op_cost(big, &ps, 1, 2, &bytes, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "the plan has 2 tensors"),
           "%d %s", s, err.message);
    s = kt_plan_op_cost(small, &pb, 0, 2, &bytes, &err);
    CHECKF(s == KT_ERR_INVALID, "%d %s", s, err.message);
    s = kt_plan_op_cost(big, &pb, 2, 2, &bytes, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "op 2"), "%s", err.message);
    s = kt_plan_op_cost(big, &pb, 1, 2, &bytes, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    CHECK(kt_plan_tensor_bytes(big, &ps, 0) == -1);
    CHECK(kt_plan_tensor_bytes(big, &pb, 4) == -1);
    CHECK(kt_plan_tensor_bytes(big, &pb, -1) == -1);
    CHECK(kt_plan_tensor_bytes(big, &pb, 0) > 0);
    CHECK(kt_plan_memory(big, &ps) == -1);
    CHECK(kt_plan_memory(small, &ps) > 0);
    CHECK(kt_plan_step_seconds(big, &ps, NULL) != kt_plan_step_seconds(big, &ps, NULL)); /* NaN */
    CHECK(kt_plan_step_seconds(big, &pb, NULL) > 0);
    strcpy(buf, "junk");
    CHECK(kt_plan_format_split(big, &pb, 7, buf, sizeof buf) == -1 &&
          buf[0] == '\0');
    CHECK(kt_plan_format_split(big, &ps, 1, buf, sizeof buf) == -1);
    CHECK(kt_plan_format_split(big, &pb, 1, buf, sizeof buf) > 0);
    s = kt_plan_parse_split(big, &pb, 999, "i.j", &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "op 999"), "%s",
           err.message);
    s = kt_plan_parse_split(big, &pb, 2, "i.j", &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "op 2"), "%s", err.message);
    s = kt_plan_parse_split(big, &pb, 0, NULL, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "no strategy"), "%s",
           err.message);
    s = kt_plan_parse_split(small, &pb, 0, "i.i", &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "the plan has"), "%s",
           err.message);
    kt_plan_free(&ps);
    kt_plan_free(&pb);
    kt_graph_destroy(small);
    kt_graph_destroy(big);
}

/* A machine given directly to kt_plan_search is held to what
   kt_machine_parse guarantees; so are the objective and the memory cap.
   Before, a zero machine gave an infinite step and an arbitrary plan. */
static void test_search_options_checked(void) {
    kt_graph *g = expect_ok("mlp", "input x[8,8]\nweight W[8,8]\n"
                                   "y[i,j] = sum(k) x[i,k] * W[k,j]\n");
    kt_factors f;
    kt_plan p;
    kt_error err;
    kt_search_options o;
    kt_machine m;
    kt_status s;
    kt_factors_default(4, &f, &err);
    memset(&o, 0, sizeof o);
    memset(&m, 0, sizeof m);
    o.machine = &m;
    o.objective = KT_OBJECTIVE_TIME;
    s = kt_plan_search(g, &f, &o, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "machine: 0 levels"),
           "%d %s", s, err.message);
    m = kt_machine_default();
    m.level_bw[0] = NAN;
    s = kt_plan_search(g, &f, &o, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "level 0's bandwidth"),
           "%d %s", s, err.message);
    m = kt_machine_default();
    m.nlevels = 1000000;
    CHECK(kt_plan_search(g, &f, &o, &p, &err) == KT_ERR_INVALID);
    m = kt_machine_default();
    m.peak_flops = 0;
    s = kt_plan_search(g, &f, &o, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "peak"), "%s",
           err.message);
    m = kt_machine_default();
    m.level_fanout[0] = -2;
    CHECK(kt_plan_search(g, &f, &o, &p, &err) == KT_ERR_INVALID);
    m = kt_machine_default();
    o.objective = (kt_objective)7;
    s = kt_plan_search(g, &f, &o, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "objective 7"), "%s",
           err.message);
    o.objective = KT_OBJECTIVE_BYTES;
    o.memory_cap = -5;
    s = kt_plan_search(g, &f, &o, &p, &err);
    CHECKF(s == KT_ERR_INVALID && has(err.message, "memory cap -5"), "%s",
           err.message);
    o.memory_cap = 0;
    s = kt_plan_search(g, &f, &o, &p, &err);
    CHECKF(s == KT_OK, "%s", err.message);
    kt_plan_free(&p);
    kt_graph_destroy(g);
}

/* NULL where a pointer is needed: an error, not a crash. */
static void test_null_args(void) {
    kt_graph *g = NULL;
    kt_error err;
    int64_t shape[1] = {4};
    kt_factors f;
    kt_plan p;
    CHECK(kt_graph_create(NULL, &err) == KT_ERR_INVALID);
    CHECK(kt_graph_add_tensor(NULL, "x", 1, shape, 4, KT_INPUT, &err) ==
          KT_ERR_INVALID);
    CHECK(kt_graph_add_op(NULL, "y[i] = x[i]", 0, &err) == KT_ERR_INVALID);
    CHECK(kt_graph_finalize(NULL, &err) == KT_ERR_INVALID);
    CHECK(kt_graph_parse(NULL, "input x[4]\n", 11, &err) == KT_ERR_INVALID);
    CHECK(kt_graph_loss(NULL) == -1 && kt_graph_tensor_count(NULL) == 0 &&
          kt_graph_op_count(NULL) == 0 && !kt_graph_tensor(NULL, 0) &&
          !kt_graph_op(NULL, 0));
    kt_graph_create(&g, &err);
    CHECK(kt_graph_add_tensor(g, "x", 1, NULL, 4, KT_INPUT, &err) ==
          KT_ERR_INVALID && has(err.message, "tensor x: no shape"));
    CHECK(kt_graph_parse(g, NULL, 5, &err) == KT_ERR_INVALID);
    CHECK(kt_graph_find_tensor(g, NULL) == -1 && kt_graph_find_op(g, NULL) == -1);
    CHECK(kt_graph_find_tensor(NULL, "x") == -1 &&
          kt_graph_find_op(NULL, "x") == -1);
    CHECK(kt_graph_add_tensor(g, "x", 1, shape, 4, KT_INPUT, &err) == KT_OK);
    CHECK(kt_graph_finalize(g, &err) == KT_OK);
    kt_factors_default(2, &f, &err);
    CHECK(kt_plan_search(NULL, &f, NULL, &p, &err) == KT_ERR_INVALID);
    kt_plan_free(&p);
    CHECK(kt_plan_search(g, NULL, NULL, &p, &err) == KT_ERR_INVALID);
    kt_plan_free(&p);
    CHECK(kt_plan_search(g, &f, NULL, NULL, &err) == KT_ERR_INVALID);
    CHECK(kt_plan_init(NULL, g, &f, &err) == KT_ERR_INVALID);
    CHECK(kt_plan_eval(g, NULL, &err) == KT_ERR_INVALID);
    kt_graph_destroy(g);
}

/* Expressions nested past KT_MAX_NESTING are refused by line, not parsed
   into a stack overflow: parentheses, minus signs and function calls, in
   values and in indices, up to a line of 64 KB. */
static void test_nesting_limit(void) {
    static const char *open_[] = {"(", "-", "relu(", "("};
    static const char *close_[] = {")", "", ")", ")"};
    size_t cap = KT_MAX_LINE + 64;
    char *src = (char *)malloc(cap);
    int c, depth;
    if (!src) return;
    for (c = 0; c < 4; c++) {
        for (depth = KT_MAX_NESTING - 1; depth <= 10000;
             depth = depth < KT_MAX_NESTING + 1 ? depth + 1 : 10000) {
            size_t n = (size_t)snprintf(src, cap, c == 3 ? "input x[400]\ny[i] = x["
                                                   : "input x[4]\ny[i] = ");
            kt_graph *g = NULL;
            kt_error err;
            kt_status s;
            int k;
            for (k = 0; k < depth && n + 8 < cap; k++)
                n += (size_t)snprintf(src + n, cap - n, "%s", open_[c]);
            n += (size_t)snprintf(src + n, cap - n, c == 3 ? "i" : "x[i]");
            for (k = 0; k < depth && n + 8 < cap; k++)
                n += (size_t)snprintf(src + n, cap - n, "%s", close_[c]);
            snprintf(src + n, cap - n, c == 3 ? "]\n" : "\n");
            s = parse(src, &g, &err);
            if (depth <= KT_MAX_NESTING)
                CHECKF(s == KT_OK, "case %d depth %d: %s", c, depth,
                       err.message);
            else
                CHECKF(s == KT_ERR_LIMIT && err.line == 2 &&
                           has(err.message, "KT_MAX_NESTING"),
                       "case %d depth %d: %d %s", c, depth, s, err.message);
            kt_graph_destroy(g);
            if (depth == 10000) break;
        }
    }
    /* an operator chain is flat text but a tree as deep as it is long:
       4 x KT_MAX_NESTING operators (each a level above the first read) */
    for (depth = 4 * KT_MAX_NESTING - 1; depth <= 4 * KT_MAX_NESTING;
         depth++) {
        size_t n = (size_t)snprintf(src, cap, "input x[4]\ny[i] = x[i]");
        kt_graph *g = NULL;
        kt_error err;
        kt_status s;
        int k;
        for (k = 0; k < depth; k++)
            n += (size_t)snprintf(src + n, cap - n, " + 1");
        snprintf(src + n, cap - n, "\n");
        s = parse(src, &g, &err);
        if (depth < 4 * KT_MAX_NESTING)
            CHECKF(s == KT_OK, "chain of %d: %s", depth, err.message);
        else
            CHECKF(s == KT_ERR_LIMIT && err.line == 2 &&
                       has(err.message, "operator tree is more than 1024"),
                   "chain of %d: %d %s", depth, s, err.message);
        kt_graph_destroy(g);
    }
    /* autodiff differentiates what parses, at the limits: its statements
       may nest about twice as deep (a nest's derivative repeats the nest
       inside a chain of factors) and print a parenthesis per operator */
    {
        static const char *const nest[] = {"tanh(", "sigmoid(", "-"};
        int c2;
        for (c2 = 0; c2 < 4; c2++) {
            size_t n = (size_t)snprintf(src, cap, "input x[4]\nweight w[4]\n"
                                                  "y[i] = ");
            kt_graph *g = NULL;
            kt_error err;
            kt_status s;
            int k;
            if (c2 < 3) {
                for (k = 0; k < KT_MAX_NESTING - 1; k++)
                    n += (size_t)snprintf(src + n, cap - n, "%s", nest[c2]);
                n += (size_t)snprintf(src + n, cap - n, "x[i] * w[i]");
                for (k = 0; c2 < 2 && k < KT_MAX_NESTING - 1; k++)
                    n += (size_t)snprintf(src + n, cap - n, ")");
            } else { /* a chain of products of constants, 4x as long */
                n += (size_t)snprintf(src + n, cap - n, "x[i] * w[i]");
                for (k = 0; k < 4 * KT_MAX_NESTING - 2; k++)
                    n += (size_t)snprintf(src + n, cap - n, " * 2");
            }
            snprintf(src + n, cap - n, "\nloss y\n");
            s = parse(src, &g, &err);
            CHECKF(s == KT_OK, "autodiff case %d: parse: %s", c2, err.message);
            if (s == KT_OK) {
                s = kt_graph_autodiff(g, NULL, &err);
                CHECKF(s == KT_OK, "autodiff case %d: %.300s", c2,
                       err.message);
            }
            kt_graph_destroy(g);
        }
    }
    free(src);
}

int main(void) {
    clock_t t0 = clock();
    test_bad_statements();
    test_bad_declarations();
    test_bad_files();
    test_cycle();
    test_prefixes();
    test_shapes();
    test_analysis();
    test_sym_eval();
    test_placements();
    test_order();
    test_kinds();
    test_find_op();
    test_flops_per_point();
    test_whitespace();
    test_affine_combined();
    test_finalized();
    test_parse_rollback();
    test_plan_of_other_graph();
    test_search_options_checked();
    test_null_args();
    test_nesting_limit();
    /* last, after flushing what the others printed: see there */
    fflush(stdout);
    test_index_overflow();
    printf("test_graph: %.2f s\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    return KT_TEST_SUMMARY();
}
