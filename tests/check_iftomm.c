/* The IFToMM benchmark problems (González, Dopico, Lugrís and Cuadrado 2006
 * [gonzalez2006benchmarking]) and their scoring: A01's exact solution against an
 * independent integration over the whole 2000 s, the N-four-bar's parallelogram
 * branch (A02) against a quadrature and against the full mechanism, the IFToMM
 * error of a run against one computed here, and the precision classes at their
 * boundaries. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/io.h"
#include "../harness/traj.h"
#include "../problems/mech_reference.h"
#include "testutil.h"

/* phi'' = -(g/l) sin(phi), phi from the downward vertical (m = l = 1, g = 9.81). */
static int angle_rhs(double t, const double y[], double dydt[], void *p)
{
    (void)t, (void)p;
    dydt[0] = y[1];
    dydt[1] = -9.81 * sin(y[0]);
    return GSL_SUCCESS;
}

/* A01 over its 2000 s and 4000 output steps: the problem's exact P1 (Jacobi
 * elliptic functions) against GSL's rk8pd at 1e-14 on the angle ODE, from the
 * right (phi0 = +90 deg) and the mirror start (side=left, phi0 = -90 deg).
 * Measured: max |dx|, |dy| 1.9e-9 on both sides (at t = 1995.5) at 1e-14 and
 * 2.5e-8 at 1e-13: the integration's own error, so the closed form is closer. */
START_TEST(a01_exact_against_integration)
{
    const int left = _i;
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, left ? "simple-pendulum:side=left" : "simple-pendulum",
                                      err, sizeof err),
                     MBS_OK);
    ck_assert_double_eq(pb.t_end, 2000.0);
    long steps = mbs_traj_steps(&pb, 0);
    ck_assert_int_eq(steps, 4000);
    double q[2], v[2], lam[1];
    ck_assert_int_eq(pb.def->exact(&pb, 0.0, q, v, lam), MBS_OK);
    ck_assert_double_eq_tol(q[0], left ? -1.0 : 1.0, 1e-15);
    ck_assert_double_eq_tol(q[1], 0.0, 1e-15);
    ck_assert_double_eq_tol(hypot(v[0], v[1]), 0.0, 1e-14);
    gsl_odeiv2_system sys = {angle_rhs, NULL, 2, NULL};
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3,
                                                         1e-14, 1e-14);
    ck_assert_ptr_nonnull(d);
    double t = 0.0, y[2] = {left ? -0.5 * MBS_PI : 0.5 * MBS_PI, 0.0}, dmax = 0.0, tmax = 0.0;
    for (long k = 1; k <= steps; k++) {
        double tk = mbs_traj_time(pb.t0, pb.t_end, steps, k);
        ck_assert_int_eq(gsl_odeiv2_driver_apply(d, &t, tk, y), GSL_SUCCESS);
        ck_assert_int_eq(pb.def->exact(&pb, tk, q, v, lam), MBS_OK);
        double dd = fmax(fabs(q[0] - sin(y[0])), fabs(q[1] + cos(y[0])));
        if (dd > dmax)
            dmax = dd, tmax = tk;
    }
    gsl_odeiv2_driver_free(d);
    ck_assert_msg(dmax < 1e-8, "side %s: exact and integrated P1 differ by %.3e at t = %g",
                  left ? "left" : "right", dmax, tmax);
    mbs_problem_close(&pb);
}
END_TEST

/* The branch's time to fall from pi/2 to theta, by quadrature of
 * dt = dtheta / |theta'(theta)|, theta'^2 = w0^2 + 2 a (1 - sin theta). */
typedef struct branch_par {
    double a, w0;
} branch_par;

static double inv_speed(double th, void *p)
{
    const branch_par *b = p;
    return 1.0 / sqrt(b->w0 * b->w0 + 2.0 * b->a * (1.0 - sin(th)));
}

/* A02: kappa from the Lagrangian of the parallelogram branch; the closed form
 * (mech_reference.c) against a quadrature of the energy integral at the 400
 * output times of 20 s, for N = 40 and N = 2.  Measured: 2.5e-14 s (N = 40) and
 * 7.2e-14 s (N = 2). */
START_TEST(a02_branch_against_quadrature)
{
    const double Ns[] = {40, 2};
    double N = Ns[_i], g = 9.81, L = 1.0, w0 = -1.0;
    /* T = (1/2) m L^2 theta'^2 ((N + 1)/3 + N): N + 1 cranks about their pivots
     * (m L^2/3 each), N couplers translating at L theta'; V = m g L sin(theta)
     * ((N + 1)/2 + N): crank centres at L/2 sin, couplers at L sin. */
    double kappa = ((N + 1) / 2 + N) / ((N + 1) / 3 + N);
    branch_par bp = {kappa * g / L, w0};
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
    gsl_function F = {inv_speed, &bp};
    double worst = 0.0;
    for (int k = 1; k <= 400; k++) {
        double t = 0.05 * k, th, dth, tq, abserr;
        mbs_nfourbar_branch(N, g, L, w0, t, &th, &dth);
        ck_assert_double_eq_tol(dth * dth, w0 * w0 + 2.0 * bp.a * (1.0 - sin(th)), 1e-11);
        ck_assert_msg(dth < 0.0, "the branch turns one way: theta' = %g at t = %g", dth, t);
        ck_assert_int_eq(gsl_integration_qags(&F, th, 0.5 * MBS_PI, 0.0, 1e-13, 1000, ws, &tq,
                                              &abserr),
                         GSL_SUCCESS);
        worst = fmax(worst, fabs(tq - t));
    }
    gsl_integration_workspace_free(ws);
    ck_assert_msg(worst < 1e-10, "N = %g: quadrature and closed form differ by %.3e s", N,
                  worst);
    /* the benchmark's kappa for N = 40 */
    if (N == 40)
        ck_assert_double_eq_tol(kappa, 60.5 / (41.0 / 3.0 + 40.0), 1e-15);
}
END_TEST

/* A02: the full mechanism (natural coordinates, N = 2) follows the branch: B0's
 * position and velocity against the reduction at the 400 output times, with
 * index2/radau5 at 1e-12 up to t = 0.6 (before the first flat configuration;
 * measured 2.0e-9) and with dca-proj/rk4, h = 2.5e-4, through the flat
 * configurations at t = 0.72 and 1.5 to t = 2 (measured 3.8e-9).  A kappa of 1
 * instead of ((N + 1)/2 + N)/((N + 1)/3 + N) = 1.1875 would part by 1e-2. */
START_TEST(a02_full_model_follows_branch)
{
    static const struct {
        const char *method;
        double h, tol, t_end, bound;
    } c[] = {{"index2/radau5", NAN, 1e-12, 0.6, 1e-8}, {"dca-proj/rk4", 2.5e-4, NAN, 2.0, 1e-7}};
    mbs_record rec;
    mbs_test_run("nfourbar:N=2", c[_i].method, c[_i].h, c[_i].tol, c[_i].t_end, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert(rec.traj.measured);
    ck_assert_str_eq(rec.traj.ift_ref, "reduction");
    ck_assert_msg(rec.traj.ift_abs < c[_i].bound, "%s: B0 differs from the branch by %.3e",
                  c[_i].method, rec.traj.ift_abs);
    ck_assert_str_eq(mbs_iftomm_class(rec.traj.ift_rel), "high");
    mbs_record_free(&rec);
}
END_TEST

/* The record's IFToMM errors equal those computed here from the reported
 * quantities the run wrote (x_P1, y_P1) and the angle ODE integrated here:
 * index3/genalpha, h = 0.01, 20 s of A01 on 40 output steps. */
START_TEST(iftomm_error_against_independent)
{
    char *dir = mbs_test_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/a01.csv", dir);
    mbs_run_spec spec = {.problem = "simple-pendulum", .method = "index3/genalpha", .h = 0.01,
                         .tol = NAN, .t_end = 20.0, .measure = 1, .output_steps = 40,
                         .trajectory = path};
    mbs_record rec;
    char err[256];
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_str_eq(rec.traj.ift_ref, "exact");
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strncmp(text, "t,q1,q2,v1,v2,lambda1,x_P1,y_P1\n", 32) == 0, "header: %.40s",
                  text);
    gsl_odeiv2_system sys = {angle_rhs, NULL, 2, NULL};
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3,
                                                         1e-14, 1e-14);
    double t = 0.0, y[2] = {0.5 * MBS_PI, 0.0}, eabs = 0.0, erel = 0.0;
    int rows = 0;
    for (char *l = strchr(text, '\n'); l && l[1]; l = strchr(l + 1, '\n'), rows++) {
        char *p = l + 1;
        double tk = strtod(p, &p), v[7];
        for (int i = 0; i < 7; i++)
            v[i] = strtod(p + 1, &p);
        if (tk > t)
            ck_assert_int_eq(gsl_odeiv2_driver_apply(d, &t, tk, y), GSL_SUCCESS);
        double ref[2] = {sin(y[0]), -cos(y[0])};
        for (int j = 0; j < 2; j++) {
            double a = fabs(v[5 + j] - ref[j]);
            eabs = fmax(eabs, a);
            erel = fmax(erel, a / fmax(fabs(ref[j]), 1e-3));
        }
    }
    gsl_odeiv2_driver_free(d);
    free(text);
    ck_assert_int_eq(rows, 41);
    ck_assert_msg(eabs > 1e-6, "error %g too small to compare", eabs);
    ck_assert_msg(fabs(rec.traj.ift_abs - eabs) <= 1e-6 * eabs, "abs %.9e, here %.9e",
                  rec.traj.ift_abs, eabs);
    ck_assert_msg(fabs(rec.traj.ift_rel - erel) <= 1e-6 * erel, "rel %.9e, here %.9e",
                  rec.traj.ift_rel, erel);
    mbs_record_free(&rec);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* A04: the IFToMM error of a third integration against the stored reference trajectory
 * (problems/ref/bricard.traj; its energy and constraints are checked in
 * tests/check_iftomm_problems.c): svd/dopri5 tol 1e-6 is class low (5.7e-3). */
START_TEST(a04_stored_reference_scores)
{
    mbs_record rec;
    mbs_test_run("bricard", "svd/dopri5", NAN, 1e-6, NAN, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_str_eq(rec.traj.ift_ref, "stored");
    ck_assert_str_eq(mbs_iftomm_class(rec.traj.ift_rel), "low");
    mbs_record_free(&rec);
}
END_TEST

/* The precision classes at their boundaries, and the relative error's floor. */
START_TEST(iftomm_class_boundaries)
{
    ck_assert_str_eq(mbs_iftomm_class(0.0), "high");
    ck_assert_str_eq(mbs_iftomm_class(1e-3), "high");
    ck_assert_str_eq(mbs_iftomm_class(nextafter(1e-3, 1.0)), "low");
    ck_assert_str_eq(mbs_iftomm_class(1e-1), "low");
    ck_assert_ptr_null(mbs_iftomm_class(nextafter(1e-1, 1.0)));
    ck_assert_ptr_null(mbs_iftomm_class(NAN));
    ck_assert_double_eq_tol(mbs_iftomm_rel(2.002, 2.0), 1e-3, 1e-15);
    ck_assert_double_eq_tol(mbs_iftomm_rel(1e-4 + 2e-6, 1e-4), 2e-3, 1e-15); /* floor 1e-3 */
    ck_assert_double_eq_tol(mbs_iftomm_rel(-5e-4, 0.0), 0.5, 1e-15);
}
END_TEST

Suite *mbs_suite_iftomm(void)
{
    Suite *s = suite_create("iftomm");
    TCase *tc = tcase_create("iftomm");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, a01_exact_against_integration, 0, 2);
    tcase_add_loop_test(tc, a02_branch_against_quadrature, 0, 2);
    tcase_add_loop_test(tc, a02_full_model_follows_branch, 0, 2);
    tcase_add_test(tc, iftomm_error_against_independent);
    tcase_add_test(tc, a04_stored_reference_scores);
    tcase_add_test(tc, iftomm_class_boundaries);
    suite_add_tcase(s, tc);
    return s;
}
