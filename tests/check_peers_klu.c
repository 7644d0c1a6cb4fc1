/* The SUNDIALS peers with linsol=klu (methods/peers/peer_sundials_klu.h):
 *  - the CSC Newton matrix equals the dense one: for the index-2 and GGL forms
 *    cj E - dF/dy of methods/formulations/dae_form.h (dense path; chain's
 *    analytic Hessian callbacks), for the index-1 residual central differences
 *    of the residual in y and y', for CVODE J = [0 I; 0 0], entry by entry to
 *    the accuracy of the coloured forward differences;
 *  - IDA (index-1, index-2, GGL) and CVODE (BDF, Adams) with klu agree with the
 *    dense peers (linsol=lu) on a small problem at the same tolerance: the
 *    4-link chain (stored reference, t_end = 5) at tol 1e-6 and 1e-8, both
 *    within K tol of the reference and of each other, K the err/tol bound of
 *    the method class from the pendulum battery (tests/check_peers.c);
 *  - on chain:N=20 (stored reference, t_end = 5, tol 1e-6) klu reaches the
 *    error of the dense peer within a factor 3 (without the Hessian terms
 *    index2/ida failed there with h -> 1.6e-13);
 *  - the record's linear-solver statistics: backend klu, one symbolic analysis
 *    per run however many factorisations (the pattern is fixed);
 *  - linsol=auto takes klu on chain:N=3 (n_v + n_l = 9) and the dense LU on
 *    the double pendulum (6) and on problems without triplet callbacks;
 *  - refusals with a one-line reason: a problem without triplet callbacks
 *    (pendulum, the wheelset), jac=dq with klu, and ARKODE (explicit: no
 *    Newton systems) does not offer klu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifdef MBS_HAVE_SUNDIALS
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "../methods/formulations/dae_form.h"
#include "../methods/peers/peer_sundials_klu.h"

/* max |A_ij - D_ij| over the n x n matrix, A in CSC (SUNDIALS), D dense row-major */
static double csc_diff(SUNMatrix A, const double *D, size_t n, double *dmax)
{
    double *full = calloc(n * n, sizeof(double));
    ck_assert_ptr_nonnull(full);
    sunindextype *cp = SUNSparseMatrix_IndexPointers(A), *ri = SUNSparseMatrix_IndexValues(A);
    double *x = SUNSparseMatrix_Data(A);
    for (size_t j = 0; j < n; j++)
        for (sunindextype e = cp[j]; e < cp[j + 1]; e++)
            full[(size_t)ri[e] * n + j] += x[e];
    double d = 0.0, m = 0.0;
    for (size_t k = 0; k < n * n; k++) {
        d = fmax(d, fabs(full[k] - D[k]));
        m = fmax(m, fabs(D[k]));
    }
    free(full);
    *dmax = m;
    return d;
}

/* A state of the 5-link chain off the solution: q from the initial shape,
 * perturbed, v, lambda, mu, y' generic. */
static void generic_point(double *y, double *yp, size_t n, size_t nq)
{
    for (size_t i = 0; i < n; i++) {
        double u = fmod(0.6180339887 * (double)(i + 1), 1.0) - 0.5;
        if (i >= nq)
            y[i] = 3.0 * u;
        else
            y[i] += 0.05 * u;
        yp[i] = 2.0 * (fmod(0.41421356 * (double)(i + 3), 1.0) - 0.5);
    }
}

static const mbs_peer_csc_kind kinds[] = {MBS_PEER_CSC_INDEX1, MBS_PEER_CSC_INDEX2,
                                          MBS_PEER_CSC_GGL, MBS_PEER_CSC_ODE};

START_TEST(csc_equals_dense)
{
    mbs_peer_csc_kind kind = kinds[_i];
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "chain:N=5,start=angles,alpha1=30,alpha2=-20", err,
                                      sizeof err),
                     MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    mbs_peer_csc *c = NULL;
    ck_assert_int_eq(mbs_peer_csc_check(&ctx, "test"), MBS_OK);
    ck_assert_int_eq(mbs_peer_csc_alloc(&c, &ctx, kind), MBS_OK);
    size_t n = mbs_peer_csc_n(c), nq = pb.nq, nv = pb.nv;
    double *y = calloc(n, sizeof(double)), *yp = calloc(n, sizeof(double));
    double *D = calloc(n * n, sizeof(double));
    ck_assert(y && yp && D);
    int have = 0;
    ck_assert_int_eq(pb.def->initial(&pb, y, y + nq, y + nq + nv, &have), MBS_OK);
    generic_point(y, yp, n, nq);
    SUNContext sctx;
    ck_assert_int_eq(SUNContext_Create(NULL, &sctx), 0);
    N_Vector nv0 = N_VNew_Serial((sunindextype)n, sctx);
    SUNMatrix A = SUNSparseMatrix((sunindextype)n, (sunindextype)n,
                                  (sunindextype)mbs_peer_csc_nnz_guess(c), CSC_MAT, sctx);
    SUNLinearSolver LS = SUNLinSol_KLU(nv0, A, sctx);
    ck_assert(nv0 && A && LS);
    const double cj = 3.7;
    ck_assert_int_eq(mbs_peer_csc_fill(c, &ctx, 0.0, y, kind == MBS_PEER_CSC_ODE ? NULL : yp, cj,
                                       A, LS),
                     MBS_OK);
    ck_assert_int_eq(ctx.cnt.jacobians, 1);
    if (kind == MBS_PEER_CSC_INDEX2 || kind == MBS_PEER_CSC_GGL) {
        /* cj E - dF/dy of the dense form (the chain's gtlambda_q, gw_q) */
        mbs_dae_form *f = NULL;
        ck_assert_int_eq(mbs_dae_form_alloc(&f, &ctx,
                                            kind == MBS_PEER_CSC_GGL ? MBS_FORM_GGL
                                                                     : MBS_FORM_INDEX2),
                         MBS_OK);
        ck_assert_uint_eq(f->n, n);
        gsl_matrix *E = gsl_matrix_alloc(n, n), *J = gsl_matrix_alloc(n, n);
        ck_assert_int_eq(mbs_dae_form_mass(f, &ctx, 0.0, y, E), MBS_OK);
        ck_assert_int_eq(mbs_dae_form_jac(f, &ctx, 0.0, y, J), MBS_OK);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                D[i * n + j] = cj * gsl_matrix_get(E, i, j) - gsl_matrix_get(J, i, j);
        gsl_matrix_free(E);
        gsl_matrix_free(J);
        mbs_dae_form_free(f);
    } else if (kind == MBS_PEER_CSC_INDEX1) {
        /* dR/dy + cj dR/dy' by central differences of the residual */
        double *r1 = malloc(n * sizeof(double)), *r2 = malloc(n * sizeof(double));
        ck_assert(r1 && r2);
        for (size_t j = 0; j < n; j++)
            for (int w = 0; w < 2; w++) {
                double *z = w ? yp : y, z0 = z[j], d = 1e-6 * fmax(1.0, fabs(z0));
                z[j] = z0 + d;
                ck_assert_int_eq(mbs_peer_csc_index1_residual(c, &ctx, 0.0, y, yp, r1), MBS_OK);
                z[j] = z0 - d;
                ck_assert_int_eq(mbs_peer_csc_index1_residual(c, &ctx, 0.0, y, yp, r2), MBS_OK);
                z[j] = z0;
                for (size_t i = 0; i < n; i++)
                    D[i * n + j] += (w ? cj : 1.0) * (r1[i] - r2[i]) / (2.0 * d);
            }
        free(r1);
        free(r2);
    } else {
        for (size_t i = 0; i < nq; i++)
            D[i * n + nq + i] = 1.0;
    }
    double dmax, d = csc_diff(A, D, n, &dmax);
    printf("peers_klu: %s CSC vs dense Newton matrix: max diff %.2e (max entry %.2e)\n",
           kind == MBS_PEER_CSC_INDEX1   ? "index-1"
           : kind == MBS_PEER_CSC_INDEX2 ? "index-2"
           : kind == MBS_PEER_CSC_GGL    ? "GGL"
                                         : "ODE",
           d, dmax);
    /* forward differences with steps sqrt(eps) max(1, |q|): about 1e-7 relative */
    ck_assert_msg(d <= 1e-6 * (1.0 + dmax), "max diff %g (max entry %g)", d, dmax);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(nv0);
    SUNContext_Free(&sctx);
    free(y);
    free(yp);
    free(D);
    mbs_peer_csc_free(c);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

typedef struct klu_case {
    const char *method;
    double K; /* err/tol bound of the method class (tests/check_peers.c) */
} klu_case;

static const klu_case cases[] = {
    {"index1/ida", 1e4},        {"index2/ida", 150.0},        {"ggl/ida", 150.0},
    {"index1/cvode-bdf", 2500.0}, {"index1/cvode-adams", 1500.0},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

/* mixed difference max |a_i - b_i| / (1 + |b_i|) over q and v */
static double mixed_diff(const mbs_record *a, const mbs_record *b)
{
    double d = 0.0;
    for (size_t i = 0; i < a->nq + a->nv; i++)
        d = fmax(d, fabs(a->final[i] - b->final[i]) / (1.0 + fabs(b->final[i])));
    return d;
}

static void run_ls(const char *problem, const char *method, const char *ls, double tol,
                   mbs_record *r)
{
    char spec[128];
    snprintf(spec, sizeof spec, "%s:linsol=%s", method, ls);
    mbs_test_run(problem, spec, NAN, tol, NAN, r);
    ck_assert_msg(r->status == MBS_OK, "%s on %s tol %g: %s", spec, problem, tol, r->reason);
    ck_assert_msg(r->have_ref, "%s: no reference", problem);
}

START_TEST(klu_agrees_with_dense)
{
    const klu_case *kc = &cases[_i];
    static const char problem[] = "chain:N=4,start=angles,alpha1=20,alpha2=10";
    static const double tols[] = {1e-6, 1e-8};
    for (int k = 0; k < 2; k++) {
        mbs_record d, s;
        run_ls(problem, kc->method, "lu", tols[k], &d);
        run_ls(problem, kc->method, "klu", tols[k], &s);
        ck_assert_int_eq(s.linsol_kind, MBS_LS_KLU);
        double ed = fmax(d.err.q, d.err.v), es = fmax(s.err.q, s.err.v);
        double diff = mixed_diff(&s, &d), bound = kc->K * tols[k];
        printf("peers_klu: %-18s chain:N=4 tol %g: err lu %.2e klu %.2e, |klu - lu| %.2e "
               "(K tol %.1e; steps %ld / %ld)\n",
               kc->method, tols[k], ed, es, diff, bound, d.cnt.steps, s.cnt.steps);
        ck_assert_msg(ed <= bound && es <= bound && diff <= bound,
                      "%s tol %g: err lu %g klu %g diff %g > K tol %g", kc->method, tols[k], ed,
                      es, diff, bound);
        mbs_record_free(&d);
        mbs_record_free(&s);
    }
}
END_TEST

START_TEST(klu_chain_same_error)
{
    const klu_case *kc = &cases[_i];
    mbs_record d, s;
    run_ls("chain:N=20", kc->method, "lu", 1e-6, &d);
    run_ls("chain:N=20", kc->method, "klu", 1e-6, &s);
    double ed = fmax(d.err.q, d.err.v), es = fmax(s.err.q, s.err.v);
    printf("peers_klu: %-18s chain:N=20 tol 1e-6: err lu %.2e klu %.2e (steps %ld / %ld)\n",
           kc->method, ed, es, d.cnt.steps, s.cnt.steps);
    ck_assert_msg(es <= 3.0 * ed && ed <= 3.0 * es, "%s chain:N=20: err lu %g klu %g",
                  kc->method, ed, es);
    /* one symbolic analysis for the whole run, however many factorisations */
    ck_assert_int_eq(s.linsol_kind, MBS_LS_KLU);
    ck_assert_int_eq(s.linsol.analyses, 1);
    ck_assert_int_gt(s.linsol.factorizations, 1);
    ck_assert_int_le(s.linsol.factorizations, s.cnt.factorizations);
    ck_assert_uint_eq(s.linsol.n, s.nq + s.nv + (strncmp(kc->method, "index1/cvode", 12) == 0
                                                     ? 0
                                                 : strncmp(kc->method, "ggl/", 4) == 0
                                                     ? 2 * s.nl
                                                     : s.nl));
    mbs_record_free(&d);
    mbs_record_free(&s);
}
END_TEST

START_TEST(klu_auto)
{
    mbs_record r;
    mbs_test_run("chain:N=3", "index2/ida", NAN, 1e-6, 1.0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_msg(r.have_linsol && r.linsol_kind == MBS_LS_KLU, "chain:N=3: backend %d",
                  r.have_linsol ? r.linsol_kind : -1);
    mbs_record_free(&r);
    mbs_test_run("double-pendulum", "index1/cvode-bdf", NAN, 1e-6, 1.0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_int_eq(r.have_linsol, 0); /* SUNDIALS' dense LU: no linsol statistics */
    mbs_record_free(&r);
    mbs_test_run("pendulum", "ggl/ida", NAN, 1e-6, 1.0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_int_eq(r.have_linsol, 0);
    mbs_record_free(&r);
}
END_TEST

START_TEST(klu_refused)
{
    static const char *const specs[][2] = {
        {"pendulum", "index2/ida:linsol=klu"},
        {"wheelset", "index2/ida:linsol=klu"},
        {"pendulum", "index1/cvode-adams:linsol=klu"},
        {"chain:N=3", "ggl/ida:linsol=klu,jac=dq"},
    };
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        mbs_record r;
        mbs_test_run(specs[k][0], specs[k][1], NAN, 1e-6, 1.0, &r);
        ck_assert_msg(r.status == MBS_UNSUPPORTED, "%s on %s: status %d", specs[k][1],
                      specs[k][0], r.status);
        ck_assert_msg(strstr(r.reason, "klu") && !strchr(r.reason, '\n'), "%s: reason '%s'",
                      specs[k][1], r.reason);
        ck_assert_msg(k == 3 || strstr(r.reason, specs[k][0]), "%s: reason '%s'", specs[k][1],
                      r.reason);
        mbs_record_free(&r);
    }
    /* explicit ARKODE has no Newton systems: klu is not among its choices */
    char out[512];
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines("run -p chain:N=3 -m index1/arkode-dp5:linsol=klu "
                                        "--tol 1e-6",
                                        out, sizeof out, &lines),
                     2);
    ck_assert_msg(strstr(out, "klu") != NULL && lines == 1, "message (%d lines): %s", lines, out);
}
END_TEST
#endif

Suite *mbs_suite_peers_klu(void)
{
    Suite *s = suite_create("peers_klu");
    TCase *tc = tcase_create("peers_klu");
    tcase_set_timeout(tc, 60);
#ifdef MBS_HAVE_SUNDIALS
    tcase_add_loop_test(tc, csc_equals_dense, 0, sizeof kinds / sizeof kinds[0]);
    tcase_add_loop_test(tc, klu_agrees_with_dense, 0, NCASES);
    tcase_add_loop_test(tc, klu_chain_same_error, 0, NCASES);
    tcase_add_test(tc, klu_auto);
    tcase_add_test(tc, klu_refused);
#endif
    suite_add_tcase(s, tc);
    return s;
}
