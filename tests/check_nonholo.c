/* Non-holonomic constraints (problems/problem.h, MBS_PB_NONHOLONOMIC):
 * ep/midpoint with [bauchau2003selfstabilized] Eq. (22) on the knife edge (problems/knifeedge.c):
 * the constraint at the midpoint at round-off at every step, energy conserved to
 * the Newton tolerance, second-order convergence to the exact solution; ed/tdg
 * with the Eq. (29) analogue: energy balance (33), decay, orders; methods without
 * MBS_M_NONHOLONOMIC_OK declined with `unsupported`. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../methods/integrators/energy/energy.h"
#include "../methods/framework/method.h"
#include "../problems/problem.h"
#include "testutil.h"

/* |A(q_m) (q_f - q_i)| / (1 + |q_f|) per step: round-off of the difference */
static const double TOL_MID = 1e-14;
/* |E_n - E_0| / |E_0|: Newton solves the knife edge's step equations exactly in two
 * iterations (theta_f is fixed by the first, the rest is then linear), so what
 * remains is round-off, n_steps eps |lambda| |q| / E_0 (measured: 8e-12 for
 * w=0.5,s=3 at 500 steps, where |q| grows to 30 and E_0 = 0.51). */
static const double TOL_ENERGY = 1e-10;
static const double TOL_ORDER = 0.15;   /* observed order vs theory */

/* Direct drive of ep/midpoint with an observer that sees consecutive states. */
typedef struct nh_drive {
    mbs_problem pb;
    mbs_ctx ctx, octx; /* octx: evaluations of the observer */
    const mbs_method_def *m;
    void *state;
    double y[7];
    double h, tp, qp[3], E0, Ep;
    int have_prev, ed;
    double mid_max, energy_max, work_max, rise_max, bal_max;
    long steps;
    gsl_matrix *A;
} nh_drive;

static int observe(void *data, double t, const double *q, const double *v, const double *vdot,
                   const double *lambda)
{
    nh_drive *d = data;
    (void)vdot, (void)lambda;
    double E = d->pb.def->energy(&d->pb, t, q, v);
    if (!d->have_prev) {
        d->E0 = E;
    } else if (d->ed) {
        /* ED: E_f - E_i = work - dissipation (Eq. (33); work = h a_g . lambda_g = 0),
         * so the energy does not increase. */
        double work, diss;
        ck_assert_int_eq(mbs_energy_last_step(d->state, &d->octx, &work, &diss), MBS_OK);
        d->work_max = fmax(d->work_max, fabs(work));
        d->rise_max = fmax(d->rise_max, (E - d->Ep) / fabs(d->E0));
        d->bal_max = fmax(d->bal_max, fabs((E - d->Ep) - (work - diss)) / fabs(d->E0));
        d->energy_max = fmax(d->energy_max, fabs(E - d->E0) / fabs(d->E0));
        d->steps++;
    } else {
        /* Eq. (22): A(q_m) v_m = 0 with v_m = (q_f - q_i)/h (Eq. (5)), measured as
         * the displacement A(q_m) (q_f - q_i) relative to |q| (the round-off of the
         * difference q_f - q_i is eps |q|, whatever h). */
        double qm[3], r = 0.0, qn = 1.0;
        for (size_t i = 0; i < 3; i++) {
            qm[i] = 0.5 * (q[i] + d->qp[i]);
            qn = fmax(qn, fabs(q[i]));
        }
        ck_assert_int_eq(mbs_constraint_jacobian(&d->octx, t, qm, d->A), MBS_OK);
        for (size_t i = 0; i < 3; i++)
            r += gsl_matrix_get(d->A, 0, i) * (q[i] - d->qp[i]);
        d->mid_max = fmax(d->mid_max, fabs(r) / qn);
        d->energy_max = fmax(d->energy_max, fabs(E - d->E0) / fabs(d->E0));
        /* work of the constraint forces over the step (Eqs. (20), (22)): a = 0 */
        double work, diss;
        ck_assert_int_eq(mbs_energy_last_step(d->state, &d->octx, &work, &diss), MBS_OK);
        d->work_max = fmax(d->work_max, fabs(work));
        d->steps++;
    }
    d->have_prev = 1;
    d->Ep = E;
    d->tp = t;
    memcpy(d->qp, q, sizeof d->qp);
    return 0;
}

static void drive(const char *problem, const char *method, double h, double t_end,
                  nh_drive *d)
{
    char err[256];
    memset(d, 0, sizeof *d);
    gsl_set_error_handler_off();
    ck_assert_msg(mbs_problem_open(&d->pb, problem, err, sizeof err) == MBS_OK, "%s", err);
    ck_assert(d->pb.nq == 3 && d->pb.nl == 1 && d->pb.nnh == 1);
    mbs_params mp;
    ck_assert_int_eq(mbs_method_parse(method, &d->m, &mp, err, sizeof err), MBS_OK);
    ck_assert_int_eq(mbs_ctx_init(&d->ctx, &d->pb), MBS_OK);
    ck_assert_int_eq(mbs_ctx_init(&d->octx, &d->pb), MBS_OK);
    mbs_ctx_reset(&d->ctx);
    mbs_ctx_reset(&d->octx);
    int have = 0;
    ck_assert_int_eq(d->pb.def->initial(&d->pb, d->y, d->y + 3, d->y + 6, &have), MBS_OK);
    ck_assert_msg(d->m->ops->alloc(d->m, &mp, &d->ctx, &d->state) == MBS_OK, "%s",
                  d->ctx.reason);
    d->ed = strncmp(method, "ed/", 3) == 0;
    d->A = gsl_matrix_alloc(1, 3);
    ck_assert(d->A);
    d->h = h;
    d->ctx.observer = observe;
    d->ctx.observer_data = d;
    observe(d, d->pb.t0, d->y, d->y + 3, NULL, d->y + 6);
    mbs_settings set = {.h = h, .t_end = t_end};
    double t = d->pb.t0;
    int s = d->m->ops->integrate(d->state, &d->ctx, &set, &t, d->y);
    ck_assert_msg(s == MBS_OK, "ep/midpoint on %s: %s", problem, d->ctx.reason);
    d->m->ops->free_state(d->state);
    gsl_matrix_free(d->A);
    mbs_ctx_free(&d->ctx);
    mbs_ctx_free(&d->octx);
    mbs_problem_close(&d->pb);
}

START_TEST(midpoint_constraint_and_energy)
{
    static const char *const problems[] = {"knifeedge", "knifeedge:s=0", "knifeedge:w=0.5,s=3"};
    static const double hs[] = {0.1, 0.02};
    static const char *const methods[] = {"ep/midpoint", "ep/midpoint:newton_tol=1e-15"};
    for (size_t p = 0; p < 3; p++)
        for (size_t k = 0; k < 4; k++) {
            nh_drive d;
            drive(problems[p], methods[k / 2], hs[k % 2], 10.0, &d);
            printf("knifeedge %-28s %-20s h=%-5g steps %ld: max |A_m dq|/|q| %.2e, "
                   "max |E-E0|/E0 %.2e, max |work| %.2e\n",
                   methods[k / 2], problems[p], hs[k % 2], d.steps, d.mid_max, d.energy_max,
                   d.work_max);
            ck_assert_msg(d.mid_max <= TOL_MID, "%s %s h=%g: |A(q_m) v_m| = %.3g", methods[k / 2],
                          problems[p], hs[k % 2], d.mid_max);
            ck_assert_msg(d.energy_max <= TOL_ENERGY, "%s h=%g: energy drift %.3g",
                          problems[p], hs[k % 2], d.energy_max);
            ck_assert_msg(d.work_max <= 1e-15, "%s: constraint work %.3g", problems[p],
                          d.work_max);
        }
}
END_TEST

/* ed/tdg with the Eq. (29) analogue for non-holonomic rows: energy balance of
 * Eq. (33) per step to the Newton tolerance (measured <= 2e-12 relative to E_0),
 * energy non-increasing, constraint work 0. */
START_TEST(ed_energy_decay)
{
    static const char *const problems[] = {"knifeedge", "knifeedge:w=0.5,s=3"};
    static const char *const methods[] = {"ed/tdg", "ed/tdg:a=0.5"};
    for (size_t p = 0; p < 2; p++)
        for (size_t k = 0; k < 2; k++) {
            nh_drive d;
            drive(problems[p], methods[k], 0.05, 10.0, &d);
            printf("knifeedge %-14s %-20s h=0.05 steps %ld: |E-E0|/E0 %.2e, max rise %.2e, "
                   "max |balance| %.2e, max |work| %.2e\n",
                   methods[k], problems[p], d.steps, d.energy_max, d.rise_max, d.bal_max,
                   d.work_max);
            ck_assert_msg(d.bal_max <= TOL_ENERGY, "%s %s: energy balance %.3g", methods[k],
                          problems[p], d.bal_max);
            ck_assert_msg(d.rise_max <= TOL_ENERGY, "%s %s: energy rose by %.3g", methods[k],
                          problems[p], d.rise_max);
            ck_assert_msg(d.work_max <= 1e-15, "%s %s: constraint work %.3g", methods[k],
                          problems[p], d.work_max);
            ck_assert_msg(d.energy_max > 1e-8, "%s %s: no dissipation", methods[k],
                          problems[p]);
        }
}
END_TEST

/* Errors at t_end = 10 against the exact solution at h, h/2, h/4. */
static void orders(const char *method, const double expect[3], double h0, mbs_err3 *fine)
{
    static const char *const problems[] = {"knifeedge", "knifeedge:w=0.5,s=3"};
    for (size_t p = 0; p < 2; p++) {
        mbs_err3 e[3];
        for (int k = 0; k < 3; k++) {
            mbs_record rec;
            mbs_test_run(problems[p], method, h0 / (1 << k), NAN, 10.0, &rec);
            ck_assert_msg(rec.status == MBS_OK && rec.have_ref, "%s: %s", problems[p],
                          rec.reason);
            e[k] = rec.err;
            mbs_record_free(&rec);
        }
        for (int k = 1; k < 3; k++) {
            double oq = log2(e[k - 1].q / e[k].q), ov = log2(e[k - 1].v / e[k].v),
                   ol = log2(e[k - 1].lambda / e[k].lambda);
            printf("knifeedge %-11s %-20s h=%-7g err q %.3e v %.3e lambda %.3e; "
                   "orders %.3f %.3f %.3f\n",
                   method, problems[p], h0 / (1 << k), e[k].q, e[k].v, e[k].lambda, oq, ov, ol);
            ck_assert_msg(fabs(oq - expect[0]) <= TOL_ORDER &&
                              fabs(ov - expect[1]) <= TOL_ORDER &&
                              fabs(ol - expect[2]) <= TOL_ORDER,
                          "%s %s: orders q %.3f v %.3f lambda %.3f", method, problems[p], oq, ov,
                          ol);
        }
        fine[p] = e[2];
    }
}

START_TEST(order_two_vs_exact)
{
    static const double two[3] = {2, 2, 2};
    mbs_err3 e[2];
    orders("ep/midpoint", two, 0.04, e);
    for (size_t p = 0; p < 2; p++)
        ck_assert(e[p].q < 1e-3 && e[p].v < 1e-3 && e[p].lambda < 1e-3);
}
END_TEST

/* ed/tdg: third order in q and in the end-point multipliers (lambda=end), second
 * in v, as on the holonomic problems (methods/integrators/energy/energy.c). */
START_TEST(ed_orders_vs_exact)
{
    static const double expect[3] = {3, 2, 3};
    mbs_err3 e[2];
    orders("ed/tdg", expect, 0.02, e);
}
END_TEST

/* Every method without MBS_M_NONHOLONOMIC_OK is declined (status unsupported,
 * reason naming non-holonomic constraints); ep/midpoint is the one that runs. */
START_TEST(unsupported_declined)
{
    size_t declined = 0, ran = 0;
    for (size_t i = 0; i < mbs_method_count(); i++) {
        const mbs_method_def *m = mbs_method_at(i);
        int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
        mbs_run_spec spec = {.problem = "knifeedge", .method = m->name,
                             .h = fixed ? 0.05 : NAN, .tol = fixed ? NAN : 1e-6,
                             .t_end = 0.2, .repeat = 0, .measure = 1};
        mbs_record rec;
        char err[512];
        int s = mbs_run(&spec, &rec, err, sizeof err);
        if (s != MBS_OK) /* spec rejected before the run (e.g. needs both h and tol) */
            continue;
        if (m->flags & MBS_M_NONHOLONOMIC_OK) {
            ck_assert_msg(rec.status == MBS_OK, "%s: %s", m->name, rec.reason);
            ran++;
        } else {
            ck_assert_msg(rec.status == MBS_UNSUPPORTED && strstr(rec.reason, "non-holonomic"),
                          "%s on knifeedge: status %d (%s)", m->name, rec.status, rec.reason);
            declined++;
        }
        mbs_record_free(&rec);
    }
    ck_assert_int_ge(ran, 1);
    ck_assert_int_ge(declined, 10);
    ck_assert_int_ge(ran, 2); /* ep/midpoint, ed/tdg */
    /* The GGL step of Eq. (37) (holonomic only) refuses a non-holonomic problem. */
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "knifeedge", err, sizeof err), MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    const mbs_method_def *m;
    mbs_params mp;
    ck_assert_int_eq(mbs_method_parse("ep/midpoint", &m, &mp, err, sizeof err), MBS_OK);
    void *state = NULL;
    ck_assert_int_eq(m->ops->alloc(m, &mp, &ctx, &state), MBS_OK);
    double y[7] = {0}, mu[1];
    int have = 0;
    ck_assert_int_eq(pb.def->initial(&pb, y, y + 3, y + 6, &have), MBS_OK);
    ck_assert_int_eq(mbs_energy_ggl_step(state, &ctx, 0.0, 0.01, y, mu), MBS_UNSUPPORTED);
    m->ops->free_state(state);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

Suite *mbs_suite_nonholo(void)
{
    Suite *s = suite_create("nonholo");
    TCase *tc = tcase_create("knifeedge");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, midpoint_constraint_and_energy);
    tcase_add_test(tc, order_two_vs_exact);
    tcase_add_test(tc, ed_energy_decay);
    tcase_add_test(tc, ed_orders_vs_exact);
    tcase_add_test(tc, unsupported_declined);
    suite_add_tcase(s, tc);
    return s;
}
