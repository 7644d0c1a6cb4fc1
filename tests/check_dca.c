/* The divide-and-conquer formulation (methods/dca*.c, seed 003), parallel part
 * (issue 22): the passes on 2 threads give the same trajectories bit for bit as
 * on 1 (and the parallel path is really taken), the run record carries the
 * thread count, and the critical-path counts of the tree are those of a
 * balanced binary tree (levels = ceil(log2 bodies) + 1, every node in one
 * level, span = sum of the levels' largest nodes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/dca.h"
#include "../methods/explicit.h"
#include "testutil.h"

/* A dca workspace on an opened problem, evaluated once at its initial state. */
typedef struct dca_fixture {
    mbs_problem pb;
    mbs_ctx ctx;
    const mbs_accel_def *acc;
    void *ws;
} dca_fixture;

static void fixture_open(dca_fixture *x, const char *problem, const char *method)
{
    char err[256];
    ck_assert_msg(mbs_problem_open(&x->pb, problem, err, sizeof err) == MBS_OK, "%s", err);
    ck_assert_int_eq(mbs_ctx_init(&x->ctx, &x->pb), MBS_OK);
    mbs_ctx_reset(&x->ctx);
    const mbs_method_def *m;
    mbs_params p;
    ck_assert_msg(mbs_method_parse(method, &m, &p, err, sizeof err) == MBS_OK, "%s", err);
    x->acc = ((const mbs_explicit_variant *)m->variant)->accel;
    x->ws = NULL;
    ck_assert_int_eq(x->acc->alloc(&x->ws, &x->ctx, &p), MBS_OK);
    size_t nq = x->pb.nq, nv = x->pb.nv, nl = x->pb.nl;
    double *q = calloc(nq, sizeof *q), *v = calloc(nv, sizeof *v);
    double *l = calloc(nl + 1, sizeof *l), *a = calloc(nv, sizeof *a);
    int have;
    ck_assert_int_eq(x->pb.def->initial(&x->pb, q, v, l, &have), MBS_OK);
    ck_assert_int_eq(x->acc->eval(x->ws, &x->ctx, 0.0, q, v, a, l), MBS_OK);
    free(q), free(v), free(l), free(a);
}

static void fixture_close(dca_fixture *x)
{
    x->acc->free_ws(x->ws);
    mbs_ctx_free(&x->ctx);
    mbs_problem_close(&x->pb);
}

/* threads=1 and threads=2: final states equal bit for bit (plain and projected
 * DCA on a chain large enough to be split, and on the spatial double loop,
 * which stays sequential); the record says how many threads ran. */
START_TEST(test_dca_threads_bitwise)
{
    static const struct {
        const char *problem, *method;
        double h, t_end;
    } c[] = {
        {"chain:N=3000,start=angles,alpha1=30,alpha2=10", "dca/rk4", 1e-3, 4e-3},
        {"chain:N=3000,start=angles,alpha1=30,alpha2=10", "dca-proj/rk4", 1e-3, 4e-3},
        {"doubleloop3d", "dca/rk4", 2e-3, 0.1},
    };
    char m1[64], m2[64];
    snprintf(m1, sizeof m1, "%s:threads=1", c[_i].method);
    snprintf(m2, sizeof m2, "%s:threads=2", c[_i].method);
    mbs_record a, b;
    mbs_test_run(c[_i].problem, m1, c[_i].h, NAN, c[_i].t_end, &a);
    mbs_test_run(c[_i].problem, m2, c[_i].h, NAN, c[_i].t_end, &b);
    ck_assert_msg(a.status == MBS_OK && b.status == MBS_OK, "%s %s", a.reason, b.reason);
    ck_assert_int_eq(a.threads, 1);
    ck_assert_int_eq(b.threads, 2);
    ck_assert_int_eq(a.cnt.steps, b.cnt.steps);
    size_t ny = a.nq + a.nv + a.nl;
    ck_assert_int_eq(ny, b.nq + b.nv + b.nl);
    ck_assert_msg(memcmp(a.final, b.final, ny * sizeof(double)) == 0,
                  "%s %s: threads=2 differs from threads=1", c[_i].problem, c[_i].method);
    mbs_record_free(&a);
    mbs_record_free(&b);
    /* the chain is really split on 2 threads, the double loop is too small */
    dca_fixture x;
    fixture_open(&x, c[_i].problem, m2);
    mbs_dca_stats st;
    ck_assert_int_eq(mbs_dca_stats_get(x.ws, &st), 0);
    ck_assert_int_eq(st.threads, 2);
    if (_i < 2)
        ck_assert_uint_ge(st.subtrees, 8); /* 4 per thread */
    else
        ck_assert_uint_eq(st.subtrees, 0);
    fixture_close(&x);
}
END_TEST

/* Critical-path counts: N bodies in a balanced binary tree have 2N - 1 nodes on
 * ceil(log2 N) + 1 levels; the level table adds up to the totals.  (Also with
 * N a power of two: 2^11 bodies, 12 levels.) */
START_TEST(test_dca_span_counts)
{
    static const size_t Ns[] = {1000, 1024, 3000}; /* pendulums: 2000, 2048, 6000 bodies */
    char spec[96];
    snprintf(spec, sizeof spec, "chain:N=%zu,start=angles", Ns[_i]);
    dca_fixture x;
    fixture_open(&x, spec, "dca/rk4:threads=1");
    mbs_dca_stats st;
    ck_assert_int_eq(mbs_dca_stats_get(x.ws, &st), 0);
    /* the chain's M is diagonal: every coordinate is a body of its own */
    size_t N = 2 * Ns[_i], L = 1;
    while (((size_t)1 << (L - 1)) < N)
        L++;
    ck_assert_uint_eq(st.bodies, N);
    ck_assert_uint_eq(st.nodes, 2 * N - 1);
    ck_assert_uint_eq(st.levels, L);
    ck_assert_uint_eq(st.subtrees, 0); /* one thread: not split */
    size_t nodes = 0;
    double work = 0.0, span = 0.0, wmax = 0.0;
    for (size_t l = 0; l < st.levels; l++) {
        size_t n;
        double wk, mx;
        ck_assert_int_eq(mbs_dca_level(x.ws, l, &n, &wk, &mx), 0);
        ck_assert(n >= 1 && mx > 0.0 && mx <= wk);
        nodes += n, work += wk, span += mx;
        wmax = fmax(wmax, mx);
    }
    size_t n0;
    double w0, m0;
    ck_assert_int_eq(mbs_dca_level(x.ws, st.levels, &n0, &w0, &m0), -1);
    ck_assert_uint_eq(nodes, st.nodes);
    ck_assert_double_eq_tol(work, st.work, 1e-9 * st.work);
    ck_assert_double_eq_tol(span, st.span, 1e-9 * st.span);
    /* logarithmic span: at most (levels) x (largest node), far below the work */
    ck_assert_double_le(st.span, (double)st.levels * wmax);
    ck_assert_double_le(st.span * 20.0, st.work);
    fixture_close(&x);
}
END_TEST

/* Bad thread counts are refused with a message naming the value. */
START_TEST(test_dca_threads_param)
{
    const mbs_method_def *m;
    mbs_params p;
    char err[256];
    ck_assert_int_eq(mbs_method_parse("dca/rk4:threads=-1", &m, &p, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(err, "threads"));
    ck_assert_int_eq(mbs_method_parse("dca-proj/dopri5:threads=1.5", &m, &p, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_method_parse("dca/rk4:threads=2", &m, &p, err, sizeof err), MBS_OK);
}
END_TEST

Suite *mbs_suite_dca(void)
{
    Suite *s = suite_create("dca");
    TCase *tc = tcase_create("parallel");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_dca_threads_bitwise, 0, 3);
    tcase_add_loop_test(tc, test_dca_span_counts, 0, 3);
    tcase_add_test(tc, test_dca_threads_param);
    suite_add_tcase(s, tc);
    return s;
}
