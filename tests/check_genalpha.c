/* Generalized-alpha and HHT-alpha (methods/integrators/genalpha/genalpha.c): reproductions of [arnold2016dae]
 * Fig. 10 (index-3) and Fig. 16 (stabilized index-2) on the pendulum of Example 8,
 * the first-order transient and its decay, the corrected starting value, observed
 * orders, the weak instability of trapezoidal Newmark (HHT alpha = 0) and the error
 * paths.  The time interval of the figures is t = [0, 1] (see
 * suites/genalpha-fig10.suite for why). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/converge.h"
#include "../methods/framework/method.h"
#include "../problems/problem.h"
#include "testutil.h"

/* Published maxima of |lambda(t_n) - lambda_n| are read off plots: 30 % tolerance. */
#define PUBLISHED_TOL 0.30
#define FIG_T_END 1.0

static double lam_max(const char *problem, const char *method, double h, double t_end)
{
    mbs_record rec;
    mbs_test_run(problem, method, h, NAN, t_end, &rec);
    ck_assert_msg(rec.status == MBS_OK, "%s %s h=%g: %s", problem, method, h, rec.reason);
    double e = rec.err_max.lambda;
    mbs_record_free(&rec);
    return e;
}

static void check_published(const char *problem, const char *method, double h,
                            double published)
{
    double e = lam_max(problem, method, h, FIG_T_END);
    ck_assert_msg(fabs(e / published - 1.0) <= PUBLISHED_TOL,
                  "%s %s h=%g: max lambda error %.3e vs published %.3e (ratio %.2f)", problem,
                  method, h, e, published, e / published);
}

START_TEST(fig10_index3)
{
    check_published("pendulum", "index3/genalpha", 0.02, 4.0e-3);
    check_published("pendulum", "index3/genalpha", 0.01, 1.0e-3);
    check_published("pendulum:x0=0.2", "index3/genalpha", 0.02, 0.24);
    check_published("pendulum:x0=0.2", "index3/genalpha", 0.01, 0.12);
}
END_TEST

START_TEST(fig16_ggl)
{
    const char *pbs[] = {"pendulum", "pendulum:x0=0.2"};
    for (int i = 0; i < 2; i++) {
        check_published(pbs[i], "ggl/genalpha", 0.02, 2.0e-3);
        double e1 = lam_max(pbs[i], "ggl/genalpha", 0.02, FIG_T_END);
        double e2 = lam_max(pbs[i], "ggl/genalpha", 0.01, FIG_T_END);
        double p = log2(e1 / e2);
        ck_assert_msg(fabs(p - 2.0) <= 0.3, "%s: ggl order %.2f", pbs[i], p);
    }
}
END_TEST

/* x0 = 0.2: the first-order error with start=plain (ratio 2 per halving of h), and
 * second order with start=corrected (the Delta_0 of [arnold2015liegroup]). */
START_TEST(corrected_start_order)
{
    const double h[3] = {0.02, 0.01, 0.005};
    double plain[3], corr[3];
    for (int i = 0; i < 3; i++) {
        plain[i] = lam_max("pendulum:x0=0.2", "index3/genalpha", h[i], FIG_T_END);
        corr[i] = lam_max("pendulum:x0=0.2", "index3/genalpha:start=corrected", h[i], FIG_T_END);
    }
    for (int i = 0; i < 2; i++) {
        double pp = log2(plain[i] / plain[i + 1]), pc = log2(corr[i] / corr[i + 1]);
        ck_assert_msg(fabs(pp - 1.0) <= 0.3, "plain start: order %.2f at h=%g", pp, h[i]);
        ck_assert_msg(fabs(pc - 2.0) <= 0.3, "corrected start: order %.2f at h=%g", pc, h[i]);
    }
    /* The correction removes the O(h) term: two orders of magnitude at h = 0.01. */
    ck_assert_double_le(corr[1], 0.02 * plain[1]);
    /* The same correction works for HHT. */
    double a = lam_max("pendulum:x0=0.2", "index3/hht:start=corrected", 0.01, FIG_T_END);
    double b = lam_max("pendulum:x0=0.2", "index3/hht:start=corrected", 0.005, FIG_T_END);
    ck_assert_msg(fabs(log2(a / b) - 2.0) <= 0.3, "hht corrected order %.2f", log2(a / b));
}
END_TEST

/* ---- a run with our own observer: lambda error per step ---------------------- */

typedef struct step_errors {
    const mbs_problem *pb;
    long n;
    double *err; /* err[k] = |lambda(t_k) - lambda_k|, k = 1.. */
    long cap;
} step_errors;

static int record_step(void *data, double t, const double *q, const double *v,
                       const double *vdot, const double *lambda)
{
    (void)q, (void)v, (void)vdot;
    step_errors *se = data;
    double ex[8];
    const mbs_problem *pb = se->pb;
    if (pb->def->exact(pb, t, ex, ex + pb->nq, ex + pb->nq + pb->nv) != MBS_OK)
        return MBS_CALLBACK_FAILED;
    if (se->n + 1 < se->cap)
        se->err[++se->n] = fabs(lambda[0] - ex[pb->nq + pb->nv]);
    return 0;
}

/* Runs `method` on `problem` with fixed step h to t_end through the method ops of
 * the registry; returns the number of steps and fills se. */
static long run_observed(const char *problem, const char *method, double h, double t_end,
                         step_errors *se)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, problem, err, sizeof err), MBS_OK);
    ck_assert(mbs_ny(&pb) <= 8);
    const mbs_method_def *m;
    mbs_params mp;
    ck_assert_int_eq(mbs_method_parse(method, &m, &mp, err, sizeof err), MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    void *state = NULL;
    ck_assert_int_eq(m->ops->alloc(m, &mp, &ctx, &state), MBS_OK);
    double y[8];
    int have_lambda = 0;
    ck_assert_int_eq(pb.def->initial(&pb, y, y + pb.nq, y + pb.nq + pb.nv, &have_lambda),
                     MBS_OK);
    ck_assert(have_lambda);
    se->pb = &pb;
    se->n = 0;
    ctx.observer = record_step;
    ctx.observer_data = se;
    mbs_settings set = {.h = h, .t_end = t_end};
    double t = pb.t0;
    int s = m->ops->integrate(state, &ctx, &set, &t, y);
    ck_assert_msg(s == MBS_OK, "%s: %s", method, ctx.reason);
    ck_assert_double_eq_tol(t, t_end, 1e-12);
    m->ops->free_state(state);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
    se->pb = NULL;
    return se->n;
}

static double range_max(const step_errors *se, long from, long to)
{
    double m = 0.0;
    for (long k = from; k <= to && k <= se->n; k++)
        m = fmax(m, se->err[k]);
    return m;
}

/* [arnold2016dae] after Fig. 10: the oscillating O(h) error term is damped out after
 * about 100 steps (bound C1 n^2 rho^n |y'_0| h + C2 h^2). */
START_TEST(transient_decays)
{
    step_errors se = {.cap = 512};
    se.err = calloc((size_t)se.cap, sizeof(double));
    ck_assert_ptr_nonnull(se.err);
    long n = run_observed("pendulum:x0=0.2", "index3/genalpha", 0.01, 4.0, &se);
    ck_assert_int_eq(n, 400);
    double early = range_max(&se, 1, 20), late = range_max(&se, 200, 400);
    ck_assert_msg(early > 0.08, "transient %.3e expected ~0.12", early);
    ck_assert_msg(late < early / 20.0 && late < 5e-3, "late error %.3e vs early %.3e", late,
                  early);
    /* Without the transient (x0 = 0) early and late errors are of the same O(h^2) size. */
    n = run_observed("pendulum", "index3/genalpha", 0.01, 4.0, &se);
    ck_assert_int_eq(n, 400);
    ck_assert_double_le(range_max(&se, 1, 20), 2e-3);
    free(se.err);
}
END_TEST

/* Observed orders (final-time errors, mbsbench converge) on the pendulum x0 = 0. */
START_TEST(converge_order_two)
{
    const char *methods[] = {"index3/genalpha", "index3/hht", "ggl/genalpha"};
    mbs_converge *cv = malloc(sizeof *cv);
    ck_assert_ptr_nonnull(cv);
    for (int k = 0; k < 3; k++) {
        mbs_run_spec base = {.problem = "pendulum", .method = methods[k], .t_end = 1.0,
                             .measure = 1};
        char err[256];
        ck_assert_int_eq(mbs_converge_run(&base, 0.02, 5, 2.0, cv, err, sizeof err), MBS_OK);
        for (int g = 0; g < 3; g++) {
            ck_assert_msg(cv->fit[g].established, "%s: group %d order not established",
                          methods[k], g);
            ck_assert_msg(fabs(cv->fit[g].p - 2.0) <= 0.3, "%s: group %d order %.2f",
                          methods[k], g, cv->fit[g].p);
        }
        mbs_converge_free(cv);
    }
    free(cv);
}
END_TEST

/* The default Newton tolerance leaves no iteration error in the observed order:
 * the simple pendulum from the horizontal (exact solution; t_end = 20, 80000 and
 * 160000 steps), q and v of order 2 within 0.01 between h = 2.5e-4 and 1.25e-4
 * (measured 1.999, 1.999 for index3/hht, 2.000, 2.000 for index3/genalpha).  At
 * the former default 1e-13 the error accepted per step (about 1e-13/h in v) added
 * up to 2.02, 2.04 (hht) and 2.03, 2.04 (genalpha) here, and stalled the battery's
 * 2000 s study near 5e-4. */
START_TEST(newton_error_below_discretization)
{
    static const char *const methods[] = {"index3/hht", "index3/genalpha"};
    double eq[2], ev[2];
    for (int k = 0; k < 2; k++) {
        mbs_record rec;
        mbs_test_run("simple-pendulum", methods[_i], 2.5e-4 / (1 << k), NAN, 20.0, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", methods[_i], rec.reason);
        eq[k] = rec.err.q;
        ev[k] = rec.err.v;
        mbs_record_free(&rec);
    }
    double pq = log2(eq[0] / eq[1]), pv = log2(ev[0] / ev[1]);
    ck_assert_msg(fabs(pq - 2.0) <= 0.01 && fabs(pv - 2.0) <= 0.01, "%s: orders q %.4f, v %.4f",
                  methods[_i], pq, pv);
}
END_TEST

/* The battery's study on ujoint (rheonomic, t_end = 2 pi, not a multiple of any
 * level's h; h0 0.01, five levels, each against the next finer one): lambda
 * has order 2 over all five levels, as q and v.  Before, the last step was
 * shorter than h (0.32 h, 0.64 h, 0.27 h, 0.55 h, 0.10 h: a step-size change
 * right before t_end) and lambda(t_end) of consecutive levels differed by 0.40,
 * 0.034, 0.10, 0.067, 0.069 (|lambda| = 9): no order. */
START_TEST(ujoint_lambda_order)
{
    static const char *const methods[] = {"index3/genalpha", "index3/hht"};
    mbs_test_study_order("ujoint", methods[_i], 0.01, 5, 2.0, 0.1);
}
END_TEST

/* HHT alpha = 0 is the trapezoidal Newmark rule: on the index-3 pendulum the
 * oscillating mode (double root -1) is undamped, the multiplier error does not
 * shrink with h and grows in time (Cardona and Geradin); alpha = -0.05 damps it. */
START_TEST(hht_trapezoidal_unstable)
{
    double e0 = lam_max("pendulum:x0=0.2", "index3/hht:alpha=0", 0.01, 4.0);
    double e5 = lam_max("pendulum:x0=0.2", "index3/hht:alpha=-0.05", 0.01, 4.0);
    ck_assert_msg(e0 > 10.0, "alpha=0: max lambda error %.3e (measured ~18)", e0);
    ck_assert_msg(e5 < 0.1, "alpha=-0.05: max lambda error %.3e (measured 0.063)", e5);
    /* No convergence in lambda for alpha = 0 on [0, 1]; first order for -0.05. */
    double a = lam_max("pendulum:x0=0.2", "index3/hht:alpha=0", 0.01, FIG_T_END);
    double b = lam_max("pendulum:x0=0.2", "index3/hht:alpha=0", 0.005, FIG_T_END);
    ck_assert_msg(a / b < 1.3, "alpha=0: lambda error ratio %.2f per halving", a / b);
    double c = lam_max("pendulum:x0=0.2", "index3/hht:alpha=-0.05", 0.01, FIG_T_END);
    double d = lam_max("pendulum:x0=0.2", "index3/hht:alpha=-0.05", 0.005, FIG_T_END);
    ck_assert_msg(fabs(log2(c / d) - 1.0) <= 0.3, "alpha=-0.05: order %.2f", log2(c / d));
    /* Even from x0 = 0 the trapezoidal rule's lambda error is two orders larger at t=10. */
    double z0 = lam_max("pendulum", "index3/hht:alpha=0", 0.02, 10.0);
    double z5 = lam_max("pendulum", "index3/hht:alpha=-0.05", 0.02, 10.0);
    ck_assert_msg(z0 > 30.0 * z5, "x0=0: alpha=0 %.3e vs alpha=-0.05 %.3e", z0, z5);
}
END_TEST

/* Constraints: index-3 keeps g = 0 but not G v = 0; GGL keeps both. Work counters. */
START_TEST(constraints_and_counters)
{
    mbs_record rec;
    mbs_test_run("pendulum:x0=0.2", "index3/genalpha", 0.01, NAN, 1.0, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_double_le(rec.res_pos_max, 1e-12);
    ck_assert_double_gt(rec.res_vel_max, 1e-6);
    ck_assert_int_eq(rec.cnt.steps, 100);
    ck_assert_int_ge(rec.cnt.factorizations, 100);
    ck_assert_int_ge(rec.cnt.newton_iters, 2 * rec.cnt.steps);
    ck_assert_int_ge(rec.cnt.solves, rec.cnt.newton_iters);
    mbs_record_free(&rec);
    mbs_test_run("pendulum:x0=0.2", "ggl/genalpha", 0.01, NAN, 1.0, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_double_le(rec.res_pos_max, 1e-12);
    ck_assert_double_le(rec.res_vel_max, 1e-10);
    ck_assert_int_eq(rec.cnt.steps, 100);
    mbs_record_free(&rec);
}
END_TEST

/* rho_inf = 0.9 and its explicit Chung-Hulbert values give the same run; HHT is
 * generalized-alpha with alpha_m = 0, alpha_f = -alpha. */
START_TEST(parameter_paths_agree)
{
    char spec[256];
    double am = (2 * 0.9 - 1) / 1.9, af = 0.9 / 1.9;
    snprintf(spec, sizeof spec, "index3/genalpha:alpha_m=%.17g,alpha_f=%.17g", am, af);
    double a = lam_max("pendulum:x0=0.2", "index3/genalpha", 0.02, FIG_T_END);
    double b = lam_max("pendulum:x0=0.2", spec, 0.02, FIG_T_END);
    ck_assert_double_eq_tol(a, b, 1e-12 * a);
    double c = lam_max("pendulum:x0=0.2", "index3/hht:alpha=-0.1", 0.02, FIG_T_END);
    double d = lam_max("pendulum:x0=0.2", "index3/genalpha:alpha_m=0,alpha_f=0.1", 0.02,
                       FIG_T_END);
    ck_assert_double_eq_tol(c, d, 1e-10 * c);
    /* rho_inf changes the run. */
    double e = lam_max("pendulum:x0=0.2", "index3/genalpha:rho_inf=0.5", 0.02, FIG_T_END);
    ck_assert_double_gt(fabs(e - a), 1e-3 * a);
}
END_TEST

static void expect_status(const char *problem, const char *method, double h, int status,
                          const char *needle)
{
    mbs_record rec;
    mbs_test_run(problem, method, h, NAN, 1.0, &rec);
    ck_assert_msg(rec.status == status, "%s: status %d, expected %d (%s)", method, rec.status,
                  status, rec.reason);
    ck_assert_msg(strstr(rec.reason, needle) != NULL, "%s: reason '%s' lacks '%s'", method,
                  rec.reason, needle);
    ck_assert_int_eq(mbs_count_lines(rec.reason), 0);
    mbs_record_free(&rec);
}

START_TEST(bad_parameters)
{
    char out[512];
    const char *bad[] = {"index3/genalpha:rho_inf=1.5", "index3/genalpha:rho_inf=-0.1",
                         "ggl/genalpha:rho_inf=2", "index3/hht:alpha=0.1",
                         "index3/hht:alpha=-0.34", "index3/genalpha:start=maybe"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        int lines = 0;
        snprintf(args, sizeof args, "run -p pendulum -m %s --h 0.01", bad[i]);
        ck_assert_msg(mbs_test_cli_lines(args, out, sizeof out, &lines) == 2, "%s", bad[i]);
        ck_assert_msg(lines == 1, "%s: %d lines", bad[i], lines);
    }
    ck_assert_int_eq(mbs_test_cli("run -p pendulum -m index3/hht:alpha=-0.3333 --h 0.01 "
                                  "--t-end 0.1", out, sizeof out),
                     0);
    /* Combinations are checked by alloc (one-line reasons). */
    expect_status("pendulum", "index3/genalpha:rho_inf=0.5,alpha_m=0.1,alpha_f=0.2", 0.01,
                  MBS_BAD_INPUT, "not both");
    expect_status("pendulum", "index3/genalpha:alpha_m=0.1", 0.01, MBS_BAD_INPUT,
                  "alpha_m and alpha_f");
    expect_status("pendulum", "index3/genalpha:alpha_m=0.1,alpha_f=0.2,gamma=0.5", 0.01,
                  MBS_BAD_INPUT, "second order");
    expect_status("pendulum", "ggl/genalpha:alpha_m=0.3,alpha_f=0.1", 0.01, MBS_BAD_INPUT,
                  "unconditionally stable");
    /* Redundant constraints make the iteration matrix singular: declined. */
    expect_status("pendulum:redundant=1", "index3/genalpha", 0.01, MBS_UNSUPPORTED,
                  "full-rank");
    /* A step far too large: Newton fails with a status, the state stays at t0. */
    mbs_record rec;
    mbs_test_run("pendulum", "ggl/genalpha", 1.0, NAN, 5.0, &rec);
    ck_assert_int_eq(rec.status, MBS_NEWTON_DIVERGED);
    ck_assert_int_eq(rec.cnt.steps, 0);
    ck_assert_int_eq(rec.cnt.rejected, 1);
    ck_assert_double_eq(rec.t_final, 0.0);
    ck_assert(strstr(rec.reason, "Newton") != NULL);
    mbs_record_free(&rec);
}
END_TEST

Suite *mbs_suite_genalpha(void)
{
    Suite *s = suite_create("genalpha");
    TCase *tc = tcase_create("genalpha");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fig10_index3);
    tcase_add_test(tc, fig16_ggl);
    tcase_add_test(tc, corrected_start_order);
    tcase_add_test(tc, transient_decays);
    tcase_add_test(tc, converge_order_two);
    tcase_add_loop_test(tc, ujoint_lambda_order, 0, 2);
    tcase_add_loop_test(tc, newton_error_below_discretization, 0, 2);
    tcase_add_test(tc, hht_trapezoidal_unstable);
    tcase_add_test(tc, constraints_and_counters);
    tcase_add_test(tc, parameter_paths_agree);
    tcase_add_test(tc, bad_parameters);
    suite_add_tcase(s, tc);
    return s;
}
