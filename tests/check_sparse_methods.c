/* Projection, half-explicit and generalized-alpha methods on the linear-solver
 * backends of methods/linsol/linsol.h.
 * - Every backend gives the final state of the default path (proj-index1 lu,
 *   hem lu, genalpha full) on the pendulum and on chain:N=20: to 1e-10 relative
 *   per block (q, v, lambda) for fixed-step methods, to 10 tol for adaptive
 *   ones.
 * - chain:N=2000 with umfpack runs a few steps through the method API (the
 *   harness's consistent-lambda0 solve is dense, so it is bypassed): nothing
 *   n x n is allocated on these paths (under ASan a 6000 x 6000 dense KKT would
 *   be obvious in time and memory), the constraints hold afterwards and the
 *   backend statistics reach the context.
 * - Unsupported combinations are declined with MBS_UNSUPPORTED and a reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/formulations/index1.h"
#include "../methods/linsol/linsol.h"
#include "../methods/formulations/projection.h"
#include "../problems/triplets.h"
#include "testutil.h"

static const double REL_FIXED = 1e-10; /* round-off only: same iteration, other LU */

/* Index-3 generalized-alpha / HHT: the backends run the same simplified Newton
 * iteration as the full path, but the unknown is h lambda, whose round-off is
 * O(eps / h^2) relative in lambda, and the iteration stops at newton_tol in the
 * index-scaled norm (genalpha_step.c, increment_norm: lambda relative to
 * (1 + |lambda|) / h^2), so lambda is determined to about newton_tol / h^2 =
 * 4e-9 at h = 0.005 (measured on chain:N=20: up to 5.1e-10; pendulum 1.3e-10;
 * q 2e-16, v 2e-12).  GGL's lambda agrees to 1e-12: REL_FIXED. */
static const double REL_LAMBDA_INDEX3 = 1e-8;

typedef struct cmp_case {
    const char *base;   /* default path */
    const char *alt[3]; /* the backends (NULL-terminated) */
    double h, tol;      /* fixed step h, or adaptive tolerance tol (h = NaN) */
    double rel_lambda;  /* fixed step: bound for lambda (q, v: REL_FIXED) */
} cmp_case;

static const cmp_case cases[] = {
    {"proj-index1/rk4", {"linsol=umfpack", "linsol=cholmod", NULL}, 0.005, 0.0, REL_FIXED},
    {"proj-index1/dopri5", {"linsol=umfpack", "linsol=cholmod", NULL}, NAN, 1e-8, 0.0},
    {"index2/hem3", {"linsol=umfpack", "linsol=cholmod", NULL}, 0.005, 0.0, REL_FIXED},
    {"index2/hem4", {"linsol=umfpack", "linsol=cholmod", NULL}, 0.005, 0.0, REL_FIXED},
    {"index2/hem4-adapt", {"linsol=umfpack", "linsol=cholmod", NULL}, NAN, 1e-8, 0.0},
    {"index3/genalpha", {"linsol=lu", "linsol=umfpack", "linsol=cholmod"}, 0.005, 0.0,
     REL_LAMBDA_INDEX3},
    {"index3/hht", {"linsol=lu", "linsol=umfpack", "linsol=cholmod"}, 0.005, 0.0,
     REL_LAMBDA_INDEX3},
    {"ggl/genalpha", {"linsol=lu", "linsol=umfpack", "linsol=cholmod"}, 0.005, 0.0,
     REL_FIXED},
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

static double rel_block(const double *a, const double *b, size_t n)
{
    double d = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(a[i]));
    }
    return s > 0.0 ? d / s : d;
}

/* Loop index: case * 2 + problem (0 pendulum, 1 chain:N=20). */
START_TEST(test_same_final_state)
{
    const cmp_case *c = &cases[_i / 2];
    const char *prob = (_i % 2) ? "chain:N=20,start=angles,alpha1=40,alpha2=-15" : "pendulum";
    double t_end = (_i % 2) ? 0.2 : 1.0;
    double bound = c->h > 0.0 ? REL_FIXED : 10.0 * c->tol;
    double bound_l = c->h > 0.0 ? c->rel_lambda : bound;
    mbs_record a;
    mbs_test_run(prob, c->base, c->h, c->tol, t_end, &a);
    ck_assert_msg(a.status == MBS_OK, "%s on %s: %s", c->base, prob, a.reason);
    ck_assert_int_eq(a.have_linsol, 0); /* the default paths use no mbs_linsol */
    size_t nq = a.nq, nv = a.nv, nl = a.nl;
    for (int k = 0; k < 3 && c->alt[k]; k++) {
        char spec[128];
        snprintf(spec, sizeof spec, "%s:%s", c->base, c->alt[k]);
        mbs_record b;
        mbs_test_run(prob, spec, c->h, c->tol, t_end, &b);
        ck_assert_msg(b.status == MBS_OK, "%s on %s: %s", spec, prob, b.reason);
        ck_assert_double_eq(b.t_final, a.t_final);
        double dq = rel_block(a.final, b.final, nq);
        double dv = rel_block(a.final + nq, b.final + nq, nv);
        double dl = rel_block(a.final + nq + nv, b.final + nq + nv, nl);
        if (getenv("MBS_TEST_VERBOSE"))
            fprintf(stderr, "%-40s %-44s dq %.2e dv %.2e dl %.2e\n", spec, prob, dq, dv, dl);
        ck_assert_msg(dq <= bound && dv <= bound && dl <= bound_l,
                      "%s on %s: relative differences q %g v %g lambda %g > %g / %g", spec,
                      prob, dq, dv, dl, bound, bound_l);
        /* the backend's statistics reached the record */
        ck_assert_int_eq(b.have_linsol, 1);
        ck_assert_int_gt(b.linsol.factorizations, 0);
        ck_assert(b.linsol.rcond > 0.0 && b.linsol.rcond <= 1.0);
        mbs_record_free(&b);
    }
    mbs_record_free(&a);
}
END_TEST

/* H != I (heavy top, q' = H(q) v): the projection works on B = G H, so the
 * backends give the GSL LU path's result too. */
START_TEST(test_projection_kinematic)
{
    mbs_record a, b;
    mbs_test_run("heavytop", "proj-index1/rk4", 0.005, 0.0, 0.5, &a);
    ck_assert_msg(a.status == MBS_OK, "%s", a.reason);
    mbs_test_run("heavytop", "proj-index1/rk4:linsol=umfpack", 0.005, 0.0, 0.5, &b);
    ck_assert_msg(b.status == MBS_OK, "%s", b.reason);
    size_t n = a.nq + a.nv;
    double d = rel_block(a.final, b.final, n);
    if (getenv("MBS_TEST_VERBOSE"))
        fprintf(stderr, "heavytop proj-index1/rk4 umfpack: rel diff q|v %.2e, newton %ld\n", d,
                b.cnt.newton_iters);
    ck_assert_double_le(d, REL_FIXED);
    ck_assert_double_le(b.res_pos_max, 1e-9); /* projection keeps g(q) = 0 */
    mbs_record_free(&a);
    mbs_record_free(&b);
}
END_TEST

/* chain:N=2000 (n_v = 4000, n_lambda = 2000) with umfpack: a few steps through
 * the method API.  Loop index: the method. */
static const char *big_methods[] = {"proj-index1/rk4:linsol=umfpack",
                                    "index2/hem4:linsol=umfpack",
                                    "ggl/genalpha:linsol=umfpack"};

START_TEST(test_chain2000)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "chain:N=2000,start=angles,alpha1=40,alpha2=-15",
                                      err, sizeof err),
                     MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    size_t nq = pb.nq, nv = pb.nv, nl = pb.nl;
    double *y = calloc(nq + nv + nl, sizeof *y), *g = calloc(nl, sizeof *g);
    double *vd = calloc(nv, sizeof *vd), *bv = calloc(nl, sizeof *bv);
    ck_assert(y && g && vd && bv);
    int have = 0;
    ck_assert_int_eq(pb.def->initial(&pb, y, y + nq, y + nq + nv, &have), MBS_OK);
    if (!have) { /* consistent lambda0 on the sparse backend */
        mbs_index1 *ix;
        ck_assert_int_eq(mbs_index1_alloc(&ix, &ctx, MBS_LINSOL_UMFPACK), MBS_OK);
        ck_assert_int_eq(mbs_index1_accel(ix, &ctx, pb.t0, y, y + nq, vd, y + nq + nv),
                         MBS_OK);
        mbs_index1_free(ix);
    }
    const mbs_method_def *m;
    mbs_params prm;
    ck_assert_int_eq(mbs_method_parse(big_methods[_i], &m, &prm, err, sizeof err), MBS_OK);
    void *state = NULL;
    int s = m->ops->alloc(m, &prm, &ctx, &state);
    ck_assert_msg(s == MBS_OK, "%s: %s", big_methods[_i], ctx.reason);
    mbs_ctx_reset(&ctx);
    const double h = 1e-2;
    mbs_settings set = {.h = h, .rtol = 1e-6, .atol = 1e-6, .t_end = pb.t0 + 3.0 * h};
    double t = pb.t0;
    s = m->ops->integrate(state, &ctx, &set, &t, y);
    ck_assert_msg(s == MBS_OK, "%s: %s", big_methods[_i], ctx.reason);
    ck_assert_double_eq_tol(t, set.t_end, 1e-15);
    ck_assert_int_eq(ctx.cnt.steps, 3);
    /* position and velocity constraints after the steps */
    ck_assert_int_eq(mbs_constraint(&ctx, t, y, g), MBS_OK);
    mbs_triplets B = {0};
    ck_assert_int_eq(mbs_jacobian_sparse(&ctx, t, y, &B), MBS_OK);
    for (size_t k = 0; k < B.nnz; k++)
        bv[B.row[k]] += B.val[k] * y[nq + B.col[k]];
    double gmax = 0.0, bvmax = 0.0;
    for (size_t i = 0; i < nl; i++) {
        gmax = fmax(gmax, fabs(g[i]));
        bvmax = fmax(bvmax, fabs(bv[i]));
    }
    if (getenv("MBS_TEST_VERBOSE"))
        fprintf(stderr, "chain N=2000 %s: |g| %.2e |Bv| %.2e factorizations %ld solves %ld\n",
                big_methods[_i], gmax, bvmax, ctx.cnt.factorizations, ctx.cnt.solves);
    /* projection: eps_g; HEM: index-2 drift O(h^5) per step; GGL: both */
    ck_assert_double_le(gmax, 1e-9);
    ck_assert_double_le(bvmax, 1e-9);
    ck_assert_int_eq(ctx.linsol_kind, MBS_LS_UMFPACK);
    ck_assert_uint_eq(ctx.linsol.n, nv + nl);
    ck_assert_int_gt(ctx.linsol.factorizations, 0);
    /* the chain's KKT matrix is a banded path graph: the factor stays O(n) */
    ck_assert_double_lt(ctx.linsol.fill, 4.0);
    mbs_triplets_free(&B);
    m->ops->free_state(state);
    free(y);
    free(g);
    free(vd);
    free(bv);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

/* Declined combinations: one-line reasons, status unsupported. */
static const struct {
    const char *problem, *method;
} unsup[] = {
    {"pendulum:redundant=1", "proj-index1/rk4:linsol=umfpack"},
    {"pendulum:redundant=1", "index2/hem4:linsol=cholmod"},
    {"heavytop", "ggl/genalpha:linsol=umfpack"},
    {"heavytop", "index3/genalpha:linsol=cholmod"},
};

START_TEST(test_unsupported)
{
    mbs_record r;
    mbs_test_run(unsup[_i].problem, unsup[_i].method, 0.01, 0.0, 0.1, &r);
    ck_assert_msg(r.status == MBS_UNSUPPORTED, "%s on %s: status %d", unsup[_i].method,
                  unsup[_i].problem, r.status);
    ck_assert(strlen(r.reason) > 0 && strchr(r.reason, '\n') == NULL);
    mbs_record_free(&r);
}
END_TEST

/* The projection API: an unknown backend is bad input; the backends report
 * their statistics and the GSL LU path none. */
START_TEST(test_project_api)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "pendulum", err, sizeof err), MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    mbs_projection *p = NULL;
    ck_assert_int_eq(mbs_project_alloc_backend(&p, &ctx, 1e-10, 7), MBS_BAD_INPUT);
    ck_assert_ptr_null(p);
    /* the same projection on every path: radial for the pendulum (see check_halfexp.c) */
    const int kinds[] = {MBS_PROJECT_GSL_LU, MBS_LS_DENSE, MBS_LS_UMFPACK, MBS_LS_CHOLMOD};
    double q0[2] = {0.6, -0.805}, v0[2] = {0.7, 0.2}, r = hypot(q0[0], q0[1]);
    double qe[2] = {q0[0] / r, q0[1] / r}, vr = qe[0] * v0[0] + qe[1] * v0[1];
    double ve[2] = {v0[0] - vr * qe[0], v0[1] - vr * qe[1]};
    for (size_t k = 0; k < 4; k++) {
        mbs_ctx_reset(&ctx);
        ck_assert_int_eq(mbs_project_alloc_backend(&p, &ctx, 1e-13, kinds[k]), MBS_OK);
        double q[2] = {q0[0], q0[1]}, v[2] = {v0[0], v0[1]};
        ck_assert_int_eq(mbs_project(p, &ctx, 0.0, q, v), MBS_OK);
        for (int i = 0; i < 2; i++) {
            ck_assert_double_le(fabs(q[i] - qe[i]), 1e-12);
            ck_assert_double_le(fabs(v[i] - ve[i]), 1e-12);
        }
        mbs_project_report(&ctx, p);
        if (kinds[k] == MBS_PROJECT_GSL_LU) {
            ck_assert_ptr_null(mbs_project_linsol(p));
            ck_assert_int_eq(ctx.linsol_kind, -1);
        } else {
            ck_assert_int_eq(ctx.linsol_kind, kinds[k]);
            ck_assert_int_gt(ctx.linsol.solves, 1);
        }
        mbs_project_free(p);
        p = NULL;
    }
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

Suite *mbs_suite_sparse_methods(void)
{
    Suite *s = suite_create("sparse_methods");
    TCase *tc = tcase_create("backends");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_same_final_state, 0, 2 * N_CASES);
    tcase_add_test(tc, test_projection_kinematic);
    tcase_add_loop_test(tc, test_chain2000, 0, 3);
    tcase_add_loop_test(tc, test_unsupported, 0, 4);
    tcase_add_test(tc, test_project_api);
    suite_add_tcase(s, tc);
    return s;
}
