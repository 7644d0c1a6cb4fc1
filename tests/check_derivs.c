/* Analytic derivatives of the problem contract (problems/problem.h: force_q,
 * force_v, gtlambda_q, gw_q).  Asserts: every derivative any
 * registered problem provides equals central differences of its plain
 * callbacks (force, jacobian) at a generic point, to DERIV_TOL relative to the
 * derivative's size; the check catches a wrong derivative (a copy of the
 * pendulum with one Hessian entry off by 1e-4); the Jacobian dF/dy the
 * implicit methods assemble from the callbacks (methods/formulations/dae_form.c) equals the
 * finite-difference one for all four DAE forms, without a force evaluation
 * when every callback is given; and the evaluation counts: with analytic
 * derivatives index2/radau5 spends <= 14 force evaluations per step on the
 * pendulum and <= 20 on the chain (N = 10); the choice of linsol=auto. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/probcheck.h"
#include "../methods/formulations/dae_form.h"
#include "testutil.h"

/* Central differences with steps 1e-5 (1 + |q_j|): truncation ~1e-10, round-off
 * ~1e-11 relative; a wrong entry of relative size 1e-4 is far above. */
#define DERIV_TOL 1e-6

/* The derivatives and their check live in harness/probcheck_deriv.c (also run by
 * `mbsbench check-problem`). */
enum { D_FORCE_Q = MBS_DERIV_FORCE_Q, D_FORCE_V = MBS_DERIV_FORCE_V,
       D_GTLAMBDA_Q = MBS_DERIV_GTLAMBDA_Q, D_GW_Q = MBS_DERIV_GW_Q, D_COUNT = MBS_DERIV_COUNT };
#define dnames(k) mbs_deriv_name(k)
#define generic_point mbs_deriv_point

/* Largest |D - D_fd| / (1 + max |D_fd|) of derivative `which` of pb with the
 * definition def (which may differ from pb's: the wrong-derivative check); -1
 * when def does not provide it. */
static double mismatch(const mbs_problem *pb, const mbs_problem_def *def, int which)
{
    char err[256];
    double e = mbs_deriv_mismatch(pb, def, which, NULL, err, sizeof err);
    ck_assert_msg(e > -2.0, "%s: %s", def->name, err);
    return e;
}

static void open_pb(mbs_problem *pb, const char *spec)
{
    char err[256];
    ck_assert_msg(mbs_problem_open(pb, spec, err, sizeof err) == MBS_OK, "%s: %s", spec, err);
}

/* Every registered problem (default parameters): each derivative it provides
 * matches central differences. */
START_TEST(test_derivatives_match_differences)
{
    const mbs_problem_def *def = mbs_problem_at((size_t)_i);
    mbs_problem pb;
    open_pb(&pb, def->name);
    for (int k = 0; k < D_COUNT; k++) {
        double e = mismatch(&pb, def, k);
        ck_assert_msg(e <= DERIV_TOL, "%s: %s differs from central differences by %.3g", def->name,
                      dnames(k), e);
    }
    mbs_problem_close(&pb);
}
END_TEST

/* Further parameter sets of the problems with derivatives. */
START_TEST(test_derivatives_variants)
{
    static const char *const specs[] = {"pendulum:redundant=1", "chain:N=3",
                                        "chain:N=10,start=angles", "double-pendulum",
                                        "caraxis:h=0.3,omega=3", "andrews"};
    int provided = 0;
    for (size_t p = 0; p < sizeof specs / sizeof specs[0]; p++) {
        mbs_problem pb;
        open_pb(&pb, specs[p]);
        for (int k = 0; k < D_COUNT; k++) {
            double e = mismatch(&pb, pb.def, k);
            provided += e >= 0.0;
            ck_assert_msg(e <= DERIV_TOL, "%s: %s differs by %.3g", specs[p], dnames(k), e);
        }
        mbs_problem_close(&pb);
    }
    ck_assert_int_eq(provided, 4 * 6); /* all four derivatives of all six */
}
END_TEST

/* The check catches a wrong derivative: the pendulum's Hessian term off by
 * 1e-4 in one entry, and its force_q claiming a spring. */
static int wrong_gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                            gsl_matrix *K)
{
    int s = mbs_problem_find("pendulum")->gtlambda_q(pb, t, q, lam, K);
    *gsl_matrix_ptr(K, 1, 0) += 1e-4;
    return s;
}

static int wrong_force_q(const mbs_problem *pb, double t, const double *q, const double *v,
                         gsl_matrix *K)
{
    (void)pb, (void)t, (void)q, (void)v;
    gsl_matrix_set_identity(K);
    return MBS_OK;
}

START_TEST(test_wrong_derivative_detected)
{
    mbs_problem pb;
    open_pb(&pb, "pendulum");
    mbs_problem_def bad = *pb.def;
    ck_assert(mismatch(&pb, &bad, D_GTLAMBDA_Q) <= DERIV_TOL);
    bad.gtlambda_q = wrong_gtlambda_q;
    bad.force_q = wrong_force_q;
    double e1 = mismatch(&pb, &bad, D_GTLAMBDA_Q), e2 = mismatch(&pb, &bad, D_FORCE_Q);
    ck_assert_msg(e1 > 10.0 * DERIV_TOL, "wrong gtlambda_q not detected (%.3g)", e1);
    ck_assert_msg(e2 > 0.1, "wrong force_q not detected (%.3g)", e2);
    mbs_problem_close(&pb);
}
END_TEST

/* dF/dy from the callbacks equals the finite-difference Jacobian of the same
 * form (the problem definition without its derivative callbacks), all four
 * forms; with every callback given no force is evaluated. */
static void compare_jacobians(const char *spec, mbs_form_kind kind)
{
    mbs_problem pb;
    open_pb(&pb, spec);
    mbs_problem_def plain = *pb.def;
    plain.force_q = plain.force_v = NULL;
    plain.gtlambda_q = NULL;
    plain.gw_q = NULL;
    mbs_problem pbf = pb;
    pbf.def = &plain;
    mbs_ctx ca, cf;
    mbs_dae_form *fa, *ff;
    ck_assert_int_eq(mbs_ctx_init(&ca, &pb), MBS_OK);
    ck_assert_int_eq(mbs_ctx_init(&cf, &pbf), MBS_OK);
    ck_assert_int_eq(mbs_dae_form_alloc(&fa, &ca, kind), MBS_OK);
    ck_assert_int_eq(mbs_dae_form_alloc(&ff, &cf, kind), MBS_OK);
    ck_assert_int_eq(fa->deriv, 1);
    ck_assert_int_eq(ff->deriv, 0);
    fa->h = ff->h = 0.01;
    fa->baumgarte_C = ff->baumgarte_C = 2.0;
    size_t n = fa->n, nq = pb.nq, nv = pb.nv, nl = pb.nl;
    double *y = calloc(n, sizeof(double));
    double *w = calloc(nq, sizeof(double));
    ck_assert_int_eq(generic_point(&pb, y, y + nq, y + nq + nv, w), MBS_OK);
    for (size_t i = nq + nv + nl; i < n; i++) /* GGL's mu */
        y[i] = 0.3 * sin((double)i);
    gsl_matrix *Ja = gsl_matrix_alloc(n, n), *Jf = gsl_matrix_alloc(n, n);
    double t = pb.t0 + 0.137;
    mbs_ctx_reset(&ca);
    ck_assert_int_eq(mbs_dae_form_jac(fa, &ca, t, y, Ja), MBS_OK);
    ck_assert_int_eq(mbs_dae_form_jac(ff, &cf, t, y, Jf), MBS_OK);
    double emax = 0.0, jmax = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            jmax = fmax(jmax, fabs(gsl_matrix_get(Jf, i, j)));
            emax = fmax(emax, fabs(gsl_matrix_get(Ja, i, j) - gsl_matrix_get(Jf, i, j)));
        }
    /* forward differences: error ~ sqrt(eps) times the second derivatives */
    ck_assert_msg(emax <= 1e-6 * (1.0 + jmax), "%s %s: |J - J_fd| = %.3g (|J| %.3g)", spec,
                  mbs_dae_form_kind_name(kind), emax, jmax);
    ck_assert_int_eq(ca.cnt.f_evals, 0);
    ck_assert_int_eq(ca.cnt.jacobians, 1);
    ck_assert(ca.cnt.deriv_evals >= 2);
    free(y);
    free(w);
    gsl_matrix_free(Ja);
    gsl_matrix_free(Jf);
    mbs_dae_form_free(fa);
    mbs_dae_form_free(ff);
    mbs_ctx_free(&ca);
    mbs_ctx_free(&cf);
    mbs_problem_close(&pb);
}

START_TEST(test_form_jacobian_from_derivatives)
{
    static const mbs_form_kind kinds[4] = {MBS_FORM_INDEX3, MBS_FORM_INDEX2, MBS_FORM_GGL,
                                           MBS_FORM_BAUMGARTE2};
    static const char *const specs[] = {"pendulum", "pendulum:redundant=1", "chain:N=4",
                                        "caraxis", "andrews"};
    for (size_t p = 0; p < sizeof specs / sizeof specs[0]; p++)
        for (int k = 0; k < 4; k++)
            compare_jacobians(specs[p], kinds[k]);
}
END_TEST

/* The evaluation counts (deterministic): force evaluations per accepted step of
 * index2/radau5 at tol 1e-6 and 1e-9 over t in [0, 10], with its default
 * iteration matrix (linsol=auto: full on the pendulum, the structured KKT
 * matrix on the chain) and with the full dense one assembled from the
 * derivative callbacks. */
START_TEST(test_radau_evaluations_per_step)
{
    static const struct {
        const char *spec;
        double max_per_step;
    } cases[] = {{"pendulum", 14.0}, {"chain:N=10,start=angles", 20.0}};
    static const double tols[] = {1e-6, 1e-9};
    static const char *const meth[] = {"index2/radau5", "index2/radau5:linsol=full"};
    for (size_t c = 0; c < 2; c++)
        for (size_t k = 0; k < 2; k++)
            for (size_t m = 0; m < 2; m++) {
                mbs_record rec;
                mbs_test_run(cases[c].spec, meth[m], NAN, tols[k], 10.0, &rec);
                ck_assert_int_eq(rec.status, MBS_OK);
                double per = (double)rec.cnt.f_evals / (double)rec.cnt.steps;
                ck_assert_msg(per <= cases[c].max_per_step, "%s %s tol %g: %.2f f-evals per step",
                              cases[c].spec, meth[m], tols[k], per);
                /* the KKT path (auto on the chain) uses no derivative callbacks,
                 * the full matrix does */
                int kkt = m == 0 && c == 1;
                ck_assert_int_eq(rec.have_linsol, kkt);
                ck_assert(kkt ? rec.cnt.deriv_evals == 0 : rec.cnt.deriv_evals > 0);
                ck_assert(rec.cnt.jacobians > 0 &&
                          rec.cnt.jacobians <= rec.cnt.steps + rec.cnt.rejected);
                mbs_record_free(&rec);
            }
}
END_TEST

/* linsol=auto (the default of radau5 and bdf): the structured KKT matrix where
 * the problem's f_q and f_v vanish and n_v + n_l >= 20 (chain, the planar
 * loops), on CHOLMOD for the chain (triplet callbacks, n_v + n_l = 30), the
 * full dense matrix for small systems (pendulum, chain:N=6), stiff springs
 * (caraxis), problems without force derivatives (andrews), ggl/bdf and the
 * fixed-step methods. */
START_TEST(test_auto_iteration_matrix)
{
    static const struct {
        const char *spec, *method;
        int structured, kind;
    } cases[] = {
        {"pendulum", "index2/radau5", 0, 0},
        {"chain:N=6", "index2/radau5", 0, 0},
        {"chain:N=7", "index3/bdf", 1, MBS_LS_DENSE},
        {"chain:N=10,start=angles", "ggl/radau5", 1, MBS_LS_CHOLMOD},
        {"chain:N=10,start=angles", "index2/bdf", 1, MBS_LS_CHOLMOD},
        {"fivebar", "index2/radau5", 1, MBS_LS_DENSE},
        {"caraxis", "index2/radau5", 0, 0},
        {"andrews", "index2/bdf", 0, 0},
        {"chain:N=10,start=angles", "ggl/bdf", 0, 0},
        {"chain:N=10,start=angles", "index2/radau5-fixed", 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mbs_record rec;
        int fixed = strstr(cases[c].method, "-fixed") != NULL;
        mbs_test_run(cases[c].spec, cases[c].method, fixed ? 0.01 : NAN, fixed ? NAN : 1e-6, 0.1,
                     &rec);
        ck_assert_int_eq(rec.status, MBS_OK);
        ck_assert_msg(rec.have_linsol == cases[c].structured, "%s %s: linsol %d", cases[c].spec,
                      cases[c].method, rec.have_linsol);
        if (cases[c].structured)
            ck_assert_int_eq(rec.linsol_kind, cases[c].kind);
        mbs_record_free(&rec);
    }
}
END_TEST

Suite *mbs_suite_derivs(void)
{
    Suite *s = suite_create("derivs");
    TCase *tc = tcase_create("derivs");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_derivatives_match_differences, 0, (int)mbs_problem_count());
    tcase_add_test(tc, test_derivatives_variants);
    tcase_add_test(tc, test_wrong_derivative_detected);
    tcase_add_test(tc, test_form_jacobian_from_derivatives);
    tcase_add_test(tc, test_radau_evaluations_per_step);
    tcase_add_test(tc, test_auto_iteration_matrix);
    suite_add_tcase(s, tc);
    return s;
}
