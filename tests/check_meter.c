/* The meter itself, pinned by hand: every measure of the harness on fixed
 * inputs whose values are worked out here independently of harness/ (closed
 * forms, GSL's least-squares fit, the published Student-t table), and every
 * verdict at its boundary, just inside and just outside.
 *
 * The fixed inputs come from a probe: a problem with a closed-form solution
 * (q = (1 + t, -2), v = (1, 0), lambda = lam) and a scripted method that reports
 * prescribed states at prescribed times (exact solution plus a prescribed
 * deviation) and prescribed work.  Both are registered for the test process
 * only (never in problems/registry.def or methods/registry.def). */
#define _DEFAULT_SOURCE /* setenv, nextafter */
#include <fcntl.h>
#include <float.h>
#include <gsl/gsl_fit.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../harness/brief.h"
#include "../harness/converge.h"
#include "../harness/fit.h"
#include "../harness/io.h"
#include "../harness/regress.h"
#include "../harness/reproduce.h"
#include "../harness/reproduce_impl.h"
#include "../harness/results.h"
#include "../harness/suite.h"
#include "../harness/tolrun.h"
#include "../methods/registry.h"
#include "../problems/registry.h"
#include "testutil.h"

/* ---- the probe problem ------------------------------------------------------------- */

static const mbs_param_def probe_params[] = {
    {"lam", 3.0, -100.0, 100.0, "the constant multiplier", NULL, 0},
};

static int probe_dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = 2;
    *nv = 2;
    *nl = 1;
    return MBS_OK;
}

static int probe_exact(const mbs_problem *pb, double t, double *q, double *v, double *lambda)
{
    if (q) {
        q[0] = 1.0 + t;
        q[1] = -2.0;
    }
    if (v) {
        v[0] = 1.0;
        v[1] = 0.0;
    }
    if (lambda)
        lambda[0] = mbs_pb_param(pb, 0);
    return MBS_OK;
}

static int probe_initial(const mbs_problem *pb, double *q, double *v, double *l, int *have)
{
    *have = 1;
    return probe_exact(pb, pb->t0, q, v, l);
}

static int probe_mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)pb, (void)t, (void)q;
    gsl_matrix_set_identity(M);
    return MBS_OK;
}

/* M v' = f - G^T lambda with v' = 0 on the solution: f = (lam, 0). */
static int probe_force(const mbs_problem *pb, double t, const double *q, const double *v,
                       double *f)
{
    (void)t, (void)q, (void)v;
    f[0] = mbs_pb_param(pb, 0);
    f[1] = 0.0;
    return MBS_OK;
}

/* g = q_0 - 1 - t, G = [1 0], g_t = -1, gamma = 0 */
static int probe_g(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb;
    g[0] = q[0] - 1.0 - t;
    return MBS_OK;
}

static int probe_gt(const mbs_problem *pb, double t, const double *q, double *gt)
{
    (void)pb, (void)t, (void)q;
    gt[0] = -1.0;
    return MBS_OK;
}

static int probe_G(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t, (void)q;
    gsl_matrix_set(G, 0, 0, 1.0);
    gsl_matrix_set(G, 0, 1, 0.0);
    return MBS_OK;
}

static int probe_gamma(const mbs_problem *pb, double t, const double *q, const double *v,
                       double *gam)
{
    (void)pb, (void)t, (void)q, (void)v;
    gam[0] = 0.0;
    return MBS_OK;
}

static double probe_energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)pb, (void)t;
    return 0.5 * (v[0] * v[0] + v[1] * v[1]) + q[1] * q[1];
}

/* Published order (-lambda, v_1, v_0, q_1, q_0); the scd subset is {v_1, q_1}. */
static int probe_published(const mbs_problem *pb, double t, const double *y, double *out,
                           size_t *n)
{
    (void)pb, (void)t;
    *n = 5;
    if (out) {
        out[0] = -y[4];
        out[1] = y[3];
        out[2] = y[2];
        out[3] = y[1];
        out[4] = y[0];
    }
    return MBS_OK;
}
static const size_t probe_scd[2] = {1, 3};

static const mbs_problem_def probe_def = {
    .name = "meter-probe",
    .title = "test probe with a closed-form solution",
    .citation = "tests/check_meter.c",
    .reference = "exact",
    .flags = MBS_PB_EXACT | MBS_PB_CONSERVATIVE | MBS_PB_RHEONOMIC,
    .index = 3,
    .t0 = 0.0,
    .t_end = 1.0,
    .params = probe_params,
    .n_params = 1,
    .dims = probe_dims,
    .initial = probe_initial,
    .mass = probe_mass,
    .force = probe_force,
    .constraint = probe_g,
    .constraint_t = probe_gt,
    .jacobian = probe_G,
    .gamma = probe_gamma,
    .energy = probe_energy,
    .exact = probe_exact,
};

/* The same motion without an exact solution: a stored reference (when
 * $MBSBENCH_REFDIR holds one) or none; published components. */
static const mbs_problem_def probe_ref_def = {
    .name = "meter-probe-ref",
    .title = "test probe measured against a stored reference",
    .citation = "tests/check_meter.c",
    .reference = "stored",
    .flags = MBS_PB_RHEONOMIC,
    .index = 3,
    .t0 = 0.0,
    .t_end = 1.0,
    .params = probe_params,
    .n_params = 1,
    .dims = probe_dims,
    .initial = probe_initial,
    .mass = probe_mass,
    .force = probe_force,
    .constraint = probe_g,
    .constraint_t = probe_gt,
    .jacobian = probe_G,
    .gamma = probe_gamma,
    .published = probe_published,
    .published_scd = probe_scd,
    .n_published_scd = 2,
};

/* ---- the scripted method ------------------------------------------------------------ */

typedef struct probe_pt {
    double t;            /* fraction of [t0, t_end] */
    double dq[2], dv[2], dl;
    int have_vdot;
    double vdot[2];
} probe_pt;

/* The deviations are multiplied by c x^p (x = h, or rtol when adaptive; p = 0: 1);
 * with dl_p > 0 the multiplier deviation takes c x^dl_p instead. */
typedef struct probe_script {
    const probe_pt *pts;
    int n;
    double c, p, dl_p;
} probe_script;

/* The workspace holds the script. */
typedef struct probe_state {
    const probe_script *sc;
} probe_state;

static int probe_alloc(const mbs_method_def *m, const mbs_params *mp, mbs_ctx *ctx, void **state)
{
    (void)mp, (void)ctx;
    probe_state *ps = malloc(sizeof *ps);
    if (!ps)
        return MBS_NO_MEMORY;
    ps->sc = m->variant;
    *state = ps;
    return MBS_OK;
}

static void probe_free(void *state)
{
    free(state);
}

/* Work per accepted step (distinct primes, so that no two counters can be
 * mistaken for one another); one rejected step before the first. */
static const long probe_work[10] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29};

static int probe_integrate(void *state, mbs_ctx *ctx, const mbs_settings *s, double *t,
                           double *y)
{
    const probe_script *sc = ((const probe_state *)state)->sc;
    const mbs_problem *pb = ctx->pb;
    double x = s->h > 0.0 ? s->h : s->rtol;
    double k = sc->p > 0.0 ? sc->c * pow(x, sc->p) : 1.0;
    double kl = sc->dl_p > 0.0 ? sc->c * pow(x, sc->dl_p) : k;
    for (int i = 0; i < sc->n; i++) {
        const probe_pt *pt = &sc->pts[i];
        int st = mbs_budget(ctx, *t);
        if (st != MBS_OK)
            return st;
        if (i == 0)
            ctx->cnt.rejected++;
        double tt = pb->t0 + pt->t * (s->t_end - pb->t0);
        probe_exact(pb, tt, y, y + 2, y + 4);
        for (int j = 0; j < 2; j++) {
            y[j] += k * pt->dq[j];
            y[2 + j] += k * pt->dv[j];
        }
        y[4] += kl * pt->dl;
        mbs_counters *c = &ctx->cnt;
        c->f_evals += probe_work[0];
        c->mass_evals += probe_work[1];
        c->g_evals += probe_work[2];
        c->jac_evals += probe_work[3];
        c->gamma_evals += probe_work[4];
        c->factorizations += probe_work[5];
        c->solves += probe_work[6];
        c->newton_iters += probe_work[7];
        c->jacobians += probe_work[8];
        c->deriv_evals += probe_work[9];
        *t = tt;
        st = mbs_accept(ctx, tt, y, pt->have_vdot ? pt->vdot : NULL);
        if (st != MBS_OK)
            return st;
    }
    return MBS_OK;
}

static const mbs_method_ops probe_ops = {probe_alloc, probe_integrate, probe_free};

/* Script S1: three steps; the maxima of q, v, lambda errors fall on different
 * steps, and the final errors differ from the maxima. */
static const probe_pt s1_pts[3] = {
    {0.25, {1e-3, -2e-3}, {0.0, 5e-3}, 1e-2, 1, {0.1, 7.0}},
    {0.5, {-4e-3, 0.0}, {-3e-3, 0.0}, -2e-2, 1, {-0.3, 0.0}},
    {1.0, {2e-3, 1e-3}, {1e-3, -1e-3}, 5e-3, 1, {0.05, 0.0}},
};
static const probe_script s1 = {s1_pts, 3, 1.0, 0.0, 0.0};

static const mbs_method_def probe_fixed = {
    .name = "meter/probe", .summary = "scripted states (test)", .citation = "tests",
    .order = {2, 1, 0}, .flags = MBS_M_FIXED_STEP, .ops = &probe_ops, .variant = &s1};

/* Test fixture: the probe problems and method (meter/probe) registered. */
static size_t n_problems_before, n_methods_before;

static void probe_setup(void)
{
    char err[256];
    n_problems_before = mbs_problem_count();
    n_methods_before = mbs_method_count();
    ck_assert_msg(mbs_problem_register(&probe_def, "check_meter", err, sizeof err) == MBS_OK,
                  "%s", err);
    ck_assert_msg(mbs_problem_register(&probe_ref_def, "check_meter", err, sizeof err) == MBS_OK,
                  "%s", err);
    ck_assert_msg(mbs_method_register(&probe_fixed, "check_meter", err, sizeof err) == MBS_OK,
                  "%s", err);
}

static void probe_teardown(void)
{
    mbs_problem_registry_truncate(n_problems_before);
    mbs_method_registry_truncate(n_methods_before);
}

/* One measuring run of a script (method definition def) on a probe. */
static void probe_run(const char *problem, const mbs_method_def *def, double h, double tol,
                      long max_steps, mbs_record *rec)
{
    mbs_run_spec spec = {.problem = problem, .method = def->name, .h = h, .tol = tol,
                         .t_end = NAN, .measure = 1, .max_steps = max_steps,
                         .method_def = def};
    char err[256];
    ck_assert_msg(mbs_run(&spec, rec, err, sizeof err) == MBS_OK, "%s", err);
}

/* The energy 0.5 |v|^2 + q_1^2 of the probe, and E0 = 0.5 + 4 on the solution. */
static double energy_by_hand(const probe_pt *p)
{
    double v0 = 1.0 + p->dv[0], v1 = p->dv[1], q1 = -2.0 + p->dq[1];
    return 0.5 * (v0 * v0 + v1 * v1) + q1 * q1;
}

/* Least-squares line through (log10 t_k, log10 r_k) by GSL: the drift exponent
 * and the RMS of its residuals (docs/results-schema.md). */
static void drift_by_gsl(const double *t, const double *r, size_t n, double *k, double *rms)
{
    double x[64], y[64], c0, c1, c00, c01, c11, sumsq;
    for (size_t i = 0; i < n; i++) {
        x[i] = log10(t[i]);
        y[i] = log10(r[i]);
    }
    gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &c00, &c01, &c11, &sumsq);
    *k = c1;
    *rms = sqrt(sumsq / (double)n);
}

static void assert_rel(double got, double want, double rtol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= rtol * fabs(want), "%s: %.17g, expected %.17g", what, got,
                  want);
}

/* ---- measures of one run ----------------------------------------------------------- */

/* err, err_max per group, the mixed q/v error, the generic scd and mescd,
 * residuals, energy drift, drift exponent and its rms, counters, all by hand
 * from script S1 (lam = 3; at t_end = 1 the solution is q = (2, -2), v = (1, 0)). */
START_TEST(measures_of_a_run_by_hand)
{
    mbs_record r;
    probe_run("meter-probe", &probe_fixed, 0.25, NAN, 0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_str_eq(r.ref_kind, "exact");
    ck_assert_double_eq(r.t_final, 1.0);
    /* at t_end: dq = (2e-3, 1e-3), dv = (1e-3, -1e-3), dl = 5e-3 */
    assert_rel(r.err.q, 2e-3, 1e-12, "err.q");
    assert_rel(r.err.v, 1e-3, 1e-12, "err.v");
    assert_rel(r.err.lambda, 5e-3, 1e-12, "err.lambda");
    /* maxima over the steps: q at t = 0.5, v at t = 0.25, lambda at t = 0.5 */
    assert_rel(r.err_max.q, 4e-3, 1e-12, "err_max.q");
    assert_rel(r.err_max.v, 5e-3, 1e-12, "err_max.v");
    assert_rel(r.err_max.lambda, 2e-2, 1e-12, "err_max.lambda");
    /* |e_i| / (1 + |ref_i|) over q, v: 2e-3/3, 1e-3/3, 1e-3/2, 1e-3/1 */
    assert_rel(r.err_mixed_qv, 1e-3, 1e-12, "err_mixed_qv");
    /* scd over q | v | lambda, relative (absolute where ref = 0): 2e-3/2, 1e-3/2,
     * 1e-3/1, 1e-3 (v_1, ref 0), 5e-3/3 */
    assert_rel(r.scd, -log10(5e-3 / 3.0), 1e-12, "scd");
    /* mescd over q | v | lambda: ... and lambda 5e-3/4 */
    assert_rel(r.mescd, -log10(5e-3 / 4.0), 1e-12, "mescd");
    /* residuals: |g| = |dq_0|, |B v + g_t| = |dv_0|, |B v' - gamma| = |vdot_0| */
    assert_rel(r.res_pos_max, 4e-3, 1e-12, "pos_max");
    assert_rel(r.res_pos_end, 2e-3, 1e-12, "pos_end");
    assert_rel(r.res_vel_max, 3e-3, 1e-12, "vel_max");
    assert_rel(r.res_vel_end, 1e-3, 1e-12, "vel_end");
    assert_rel(r.res_acc_max, 0.3, 1e-12, "acc_max");
    /* energy drift: max |E - E0| / |E0| over the steps, E0 = 4.5 */
    double ed = 0.0;
    for (int i = 0; i < 3; i++)
        ed = fmax(ed, fabs(energy_by_hand(&s1_pts[i]) - 4.5) / 4.5);
    assert_rel(r.energy_drift, ed, 1e-12, "energy_drift");
    ck_assert_double_gt(ed, 1.7e-3); /* the first step's: 0.0080165 / 4.5 */
    /* drift: one bin per step (t = 0.25, 0.5, 1), |g| = 1e-3, 4e-3, 2e-3 */
    const double ts[3] = {0.25, 0.5, 1.0}, rs[3] = {1e-3, 4e-3, 2e-3};
    double k, rms;
    drift_by_gsl(ts, rs, 3, &k, &rms);
    assert_rel(r.drift_exponent, k, 1e-12, "drift_exponent");
    assert_rel(r.drift_rms, rms, 1e-12, "drift_rms");
    ck_assert_double_gt(rms, 0.1);
    /* work: 3 accepted steps, 1 rejected, probe_work per accepted step */
    const long *w = probe_work;
    ck_assert_int_eq(r.cnt.steps, 3);
    ck_assert_int_eq(r.cnt.rejected, 1);
    const long got[10] = {r.cnt.f_evals,        r.cnt.mass_evals, r.cnt.g_evals,
                          r.cnt.jac_evals,      r.cnt.gamma_evals, r.cnt.factorizations,
                          r.cnt.solves,         r.cnt.newton_iters, r.cnt.jacobians,
                          r.cnt.deriv_evals};
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(got[i], 3 * w[i]);
    mbs_record_free(&r);
}
END_TEST

/* The record as written (JSON and CSV) carries each measure under its own name. */
START_TEST(record_fields_by_name)
{
    mbs_record r;
    probe_run("meter-probe", &probe_fixed, 0.25, NAN, 0, &r);
    char *s = mbs_record_json(&r);
    json_t *o = json_loads(s, 0, NULL);
    ck_assert_ptr_nonnull(o);
    const struct {
        const char *path;
        double want;
    } f[] = {
        {"err.q", 2e-3},           {"err.v", 1e-3},
        {"err.lambda", 5e-3},      {"err_max.q", 4e-3},
        {"err_max.v", 5e-3},       {"err_max.lambda", 2e-2},
        {"err_mixed_qv", 1e-3},    {"scd", -log10(5e-3 / 3.0)},
        {"mescd", -log10(1.25e-3)}, {"residual.pos_max", 4e-3},
        {"residual.vel_max", 3e-3}, {"residual.acc_max", 0.3},
        {"residual.pos_end", 2e-3}, {"residual.vel_end", 1e-3},
        {"counters.steps", 3},     {"counters.rejected", 1},
        {"counters.f_evals", 6},   {"counters.mass_evals", 9},
        {"counters.g_evals", 15},  {"counters.jac_evals", 21},
        {"counters.gamma_evals", 33}, {"counters.factorizations", 39},
        {"counters.solves", 51},   {"counters.newton_iters", 57},
        {"counters.jacobians", 69}, {"counters.deriv_evals", 87},
        {"h", 0.25},               {"t_end", 1.0},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        assert_rel(mbs_jnum(o, f[i].path), f[i].want, 1e-12, f[i].path);
    ck_assert_double_eq(mbs_jnum(o, "energy_drift"), r.energy_drift);
    ck_assert_double_eq(mbs_jnum(o, "drift_exponent"), r.drift_exponent);
    ck_assert_double_eq(mbs_jnum(o, "drift_rms"), r.drift_rms);
    ck_assert_str_eq(mbs_jstr(o, "reference"), "exact");
    ck_assert_double_eq(mbs_jnum(o, "params.problem.lam"), 3.0);
    json_decref(o);
    free(s);
    /* parameters "k=v,...": a number where the value parses as one, else the text */
    snprintf(r.method_params, sizeof r.method_params, "linsol=klu,order=5,eps=0.25,x=1e");
    s = mbs_record_json(&r);
    o = json_loads(s, 0, NULL);
    json_t *mpar = json_object_get(json_object_get(o, "params"), "method");
    ck_assert_uint_eq(json_object_size(mpar), 4);
    ck_assert_str_eq(json_string_value(json_object_get(mpar, "linsol")), "klu");
    ck_assert(json_is_integer(json_object_get(mpar, "order")));
    ck_assert_int_eq(json_integer_value(json_object_get(mpar, "order")), 5);
    ck_assert_double_eq(json_real_value(json_object_get(mpar, "eps")), 0.25);
    ck_assert_str_eq(json_string_value(json_object_get(mpar, "x")), "1e");
    /* the CPU statistics and every repeat's time, in the order taken */
    json_decref(o);
    free(s);
    double times[4] = {0.5, 0.25, 2.0, 7.0}; /* three repeats; times[3] is not one */
    const double taken[3] = {0.5, 0.25, 2.0};
    r.cpu_times[3] = -1.0;
    mbs_cpu_stats(&r, times, 3);
    ck_assert_double_eq(r.cpu_times[3], -1.0); /* only the repeats' slots are written */
    ck_assert_double_eq(times[3], 7.0);
    s = mbs_record_json(&r);
    o = json_loads(s, 0, NULL);
    ck_assert_ptr_nonnull(o);
    ck_assert_double_eq(mbs_jnum(o, "cpu.min"), 0.25);
    ck_assert_double_eq(mbs_jnum(o, "cpu.median"), 0.5);
    ck_assert_double_eq(mbs_jnum(o, "cpu.iqr"), 1.25 - 0.375);
    ck_assert_int_eq((int)mbs_jnum(o, "cpu.repeats"), 3);
    json_t *jt = json_object_get(json_object_get(o, "cpu"), "times");
    ck_assert_uint_eq(json_array_size(jt), 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_double_eq(json_number_value(json_array_get(jt, i)), taken[i]);
    /* the final state, q | v | lambda in order */
    json_t *fin = json_object_get(o, "final");
    const double want_final[5] = {2.002, -1.999, 1.001, -1e-3, 3.005};
    for (int i = 0; i < 5; i++) {
        json_t *a = json_object_get(fin, i < 2 ? "q" : i < 4 ? "v" : "lambda");
        double x = json_number_value(json_array_get(a, i < 2 ? i : i < 4 ? i - 2 : 0));
        assert_rel(x, want_final[i], 1e-14, "final");
    }
    json_decref(o);
    free(s);
    /* the long text record (`mbsbench run`): a threads line only for a method that
     * ran parallel parts (threads > 0), with their number */
    for (int th = 0; th <= 3; th += 3) {
        char *txt = NULL;
        size_t tlen = 0;
        FILE *tm = open_memstream(&txt, &tlen);
        r.threads = th;
        mbs_record_print_long(&r, tm);
        fclose(tm);
        if (th == 0)
            ck_assert_msg(strstr(txt, "threads") == NULL, "threads 0 printed:\n%s", txt);
        else
            ck_assert_msg(strstr(txt, "\nthreads        3\n") != NULL, "%s", txt);
        free(txt);
        /* the JSON record likewise: a "threads" member only for threads > 0 */
        s = mbs_record_json(&r);
        o = json_loads(s, 0, NULL);
        ck_assert_ptr_nonnull(o);
        json_t *jth = json_object_get(o, "threads");
        if (th == 0)
            ck_assert_msg(jth == NULL, "threads 0 in the JSON record");
        else
            ck_assert_msg(json_is_integer(jth) && json_integer_value(jth) == 3, "threads");
        json_decref(o);
        free(s);
    }
    r.threads = 0;
    /* CSV: the columns named in the header hold the same numbers */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    mbs_record_csv_header(m);
    mbs_record_csv(&r, m);
    fclose(m);
    char *nl = strchr(buf, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    const char *cols[] = {"err_q", "err_v", "err_lambda", "err_max_q", "err_max_v",
                          "err_max_lambda", "res_pos_max", "res_vel_max", "steps", "f_evals"};
    const double want[] = {2e-3, 1e-3, 5e-3, 4e-3, 5e-3, 2e-2, 4e-3, 3e-3, 3, 6};
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
        /* the column index of cols[c] in the header, then that field of the row */
        int idx = -1, k = 0;
        char *save = NULL, *hdr = strdup(buf);
        for (char *tok = strtok_r(hdr, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++)
            if (strcmp(tok, cols[c]) == 0)
                idx = k;
        free(hdr);
        ck_assert_msg(idx >= 0, "CSV column %s missing", cols[c]);
        const char *p = nl + 1;
        for (int j = 0; j < idx; j++) {
            if (*p == '"') { /* quoted strings hold no '"' here */
                p = strchr(p + 1, '"');
                ck_assert_ptr_nonnull(p);
            }
            p = strchr(p, ',');
            ck_assert_ptr_nonnull(p);
            p++;
        }
        assert_rel(strtod(p, NULL), want[c], 1e-9, cols[c]);
    }
    free(buf);
    mbs_record_free(&r);
}
END_TEST

/* ---- errors along the trajectory ------------------------------------------------- */

/* Script T: four steps on the grid t_k = k/4 of 4 output steps, one deviation per
 * component and step, so that each group's maximum falls on a different step. */
static const probe_pt traj_pts[4] = {
    {0.25, {1e-3, -2e-3}, {0.0, 5e-3}, 1e-2, 0, {0.0, 0.0}},
    {0.5, {-4e-3, 0.0}, {-3e-3, 0.0}, -2e-2, 0, {0.0, 0.0}},
    {0.75, {0.0, 6e-3}, {2e-3, 0.0}, 4e-3, 0, {0.0, 0.0}},
    {1.0, {2e-3, 1e-3}, {1e-3, -1e-3}, 5e-3, 0, {0.0, 0.0}},
};
static const probe_script traj_script = {traj_pts, 4, 1.0, 0.0, 0.0};
static const mbs_method_def probe_traj = {
    .name = "meter/traj", .summary = "scripted states (test)", .citation = "tests",
    .order = {2, 1, 0}, .flags = MBS_M_FIXED_STEP, .ops = &probe_ops, .variant = &traj_script};

/* e_k = max_i |dy_i| / (1 + |yref_i|) per group at t_k = k/4 (the initial state is
 * exact: e_0 = 0); err_max = max_k e_k, err_rms = sqrt(sum_k e_k^2 / 5), digits =
 * -log10 err_max.  References: q = (1 + t, -2), v = (1, 0), lambda = 3. */
START_TEST(trajectory_errors_by_hand)
{
    char err[256];
    ck_assert_int_eq(mbs_method_register(&probe_traj, "check_meter", err, sizeof err), MBS_OK);
    mbs_run_spec spec = {.problem = "meter-probe", .method = "meter/traj", .h = 0.25,
                         .tol = NAN, .t_end = NAN, .measure = 1, .output_steps = 4,
                         .method_def = &probe_traj};
    mbs_record r;
    ck_assert_msg(mbs_run(&spec, &r, err, sizeof err) == MBS_OK, "%s", err);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_int_eq(r.traj.measured, 1);
    ck_assert_int_eq(r.traj.n, 5);
    ck_assert_str_eq(r.traj.interp, "grid");
    ck_assert_str_eq(r.traj.reference, "exact");
    /* q: k=1 max(1e-3/2.25, 2e-3/3), k=2 4e-3/2.5, k=3 6e-3/3, k=4 max(2e-3/3, 1e-3/3) */
    const double eq[4] = {2e-3 / 3.0, 1.6e-3, 2e-3, 2e-3 / 3.0};
    /* v: k=1 5e-3/1, k=2 3e-3/2, k=3 2e-3/2, k=4 max(1e-3/2, 1e-3/1) */
    const double ev[4] = {5e-3, 1.5e-3, 1e-3, 1e-3};
    /* lambda: |dl| / 4 */
    const double el[4] = {2.5e-3, 5e-3, 1e-3, 1.25e-3};
    const double *e[3] = {eq, ev, el};
    const double emax[3] = {2e-3, 5e-3, 5e-3};
    const double got_max[3] = {r.traj.err_max.q, r.traj.err_max.v, r.traj.err_max.lambda};
    const double got_rms[3] = {r.traj.err_rms.q, r.traj.err_rms.v, r.traj.err_rms.lambda};
    const double got_dig[3] = {r.traj.digits.q, r.traj.digits.v, r.traj.digits.lambda};
    for (int g = 0; g < 3; g++) {
        double ss = 0.0;
        for (int k = 0; k < 4; k++)
            ss += e[g][k] * e[g][k];
        assert_rel(got_max[g], emax[g], 1e-12, "traj err_max");
        assert_rel(got_rms[g], sqrt(ss / 5.0), 1e-12, "traj err_rms");
        assert_rel(got_dig[g], -log10(emax[g]), 1e-12, "traj digits");
    }
    /* the record as written carries the same numbers */
    char *s = mbs_record_json(&r);
    json_t *o = json_loads(s, 0, NULL);
    ck_assert_ptr_nonnull(o);
    json_t *tj = json_object_get(o, "traj");
    ck_assert_int_eq((int)mbs_jnum(tj, "n"), 5);
    ck_assert_double_eq(mbs_jnum(tj, "err_max.v"), r.traj.err_max.v);
    ck_assert_double_eq(mbs_jnum(tj, "err_rms.lambda"), r.traj.err_rms.lambda);
    ck_assert_double_eq(mbs_jnum(tj, "digits.q"), r.traj.digits.q);
    json_decref(o);
    free(s);
    mbs_record_free(&r);
}
END_TEST

static char *write_probe_reference(const char *provenance)
{
    char *dir = mbs_test_tmpdir(), path[512], text[512];
    snprintf(path, sizeof path, "%s/meter-probe-ref.ref", dir);
    /* the solution at t_end = 1 with lam = 3: q = (2, -2), v = (1, 0), lambda = 3 */
    snprintf(text, sizeof text,
             "# test probe\nparams = lam=3\nt_end = 1\nprovenance = %s\ny = 2 -2 1 0 3\n",
             provenance);
    mbs_test_write_text(path, text);
    setenv("MBSBENCH_REFDIR", dir, 1);
    return dir;
}

/* Against a stored reference: errors at t_end from the reference, no err_max
 * (no solution along the way); scd and mescd of the published definition: scd
 * over the listed subset {v_1, q_1} with v_1 skipped (reference 0), mescd over
 * all five published components. */
START_TEST(reference_and_published_digits)
{
    char *dir = write_probe_reference("closed form (tests/check_meter.c)");
    mbs_record r;
    probe_run("meter-probe-ref", &probe_fixed, 0.25, NAN, 0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_str_eq(r.ref_kind, "reference");
    assert_rel(r.err.q, 2e-3, 1e-12, "err.q");
    assert_rel(r.err.v, 1e-3, 1e-12, "err.v");
    assert_rel(r.err.lambda, 5e-3, 1e-12, "err.lambda");
    ck_assert(isnan(r.err_max.q) && isnan(r.err_max.v) && isnan(r.err_max.lambda));
    assert_rel(r.err_mixed_qv, 1e-3, 1e-12, "err_mixed_qv");
    /* published y = (-3.005, -1e-3, 1.001, -1.999, 2.002), ref (-3, 0, 1, -2, 2):
     * scd over {1, 3}: component 1 skipped, 1e-3 / 2 */
    assert_rel(r.scd, -log10(1e-3 / 2.0), 1e-12, "scd (published subset)");
    /* mescd: 5e-3/4, 1e-3/1, 1e-3/2, 1e-3/3, 2e-3/3 */
    assert_rel(r.mescd, -log10(5e-3 / 4.0), 1e-12, "mescd (published, all)");
    ck_assert(isnan(r.energy_drift)); /* no energy defined */
    ck_assert_uint_eq(r.n_published, 5);
    assert_rel(r.final_published[0], -3.005, 1e-14, "final_published[0]");
    mbs_record_free(&r);
    /* without the stored reference (other parameters): nothing is measured */
    mbs_run_spec spec = {.problem = "meter-probe-ref:lam=2", .method = "meter/probe", .h = 0.25,
                         .tol = NAN, .t_end = NAN, .measure = 1, .method_def = &probe_fixed};
    char err[256];
    ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
    ck_assert_str_eq(r.ref_kind, "none");
    ck_assert(isnan(r.err.q) && isnan(r.scd) && isnan(r.mescd) && isnan(r.err_mixed_qv));
    mbs_record_free(&r);
    unsetenv("MBSBENCH_REFDIR");
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* The published accuracy measure on its own (Test Set getscd): subset, skipped
 * tiny references, a NaN component, exact zero as 1e-16. */
START_TEST(testset_digits_edges)
{
    const double y[4] = {1.5, 2.0, 1e-201, -4.0}, ref[4] = {1.0, 2.0, 1e-210, -4.0};
    const size_t sub[3] = {1, 2, 3};
    double scd, mescd;
    mbs_testset_digits(y, ref, 4, sub, 3, &scd, &mescd);
    /* {1, 3} exact, 2 skipped (|ref| < 1e-200): max error 0 -> 1e-16 */
    ck_assert_double_eq(scd, 16.0);
    assert_rel(mescd, -log10(0.5 / 2.0), 1e-12, "mescd over all");
    /* the threshold 1e-200 itself is kept */
    const double y2[1] = {2e-200}, r2[1] = {1e-200};
    mbs_testset_digits(y2, r2, 1, NULL, 0, &scd, &mescd);
    assert_rel(scd, 0.0 - log10(1.0), 1e-12, "scd at |ref| = 1e-200");
    /* a NaN component makes the measure NaN, not a flattering number */
    const double y3[2] = {NAN, 1.0}, r3[2] = {1.0, 1.0};
    mbs_testset_digits(y3, r3, 2, NULL, 0, &scd, &mescd);
    ck_assert(isnan(scd) && isnan(mescd));
    const double y4[2] = {1.0, NAN};
    mbs_testset_digits(y4, r3, 2, NULL, 0, &scd, &mescd);
    ck_assert(isnan(scd) && isnan(mescd));
}
END_TEST

/* An exact result (zero error at t_end) has 16 digits in the generic measure
 * too, as in the published one: not null ("not measured"). */
static const probe_pt exact_end_pts[2] = {
    {0.5, {1e-3, 0.0}, {0.0, 0.0}, 0.0, 0, {0, 0}},
    {1.0, {0.0, 0.0}, {0.0, 0.0}, 0.0, 0, {0, 0}},
};
static const probe_script exact_end = {exact_end_pts, 2, 1.0, 0.0, 0.0};

START_TEST(exact_result_has_16_digits)
{
    mbs_method_def def = probe_fixed;
    def.variant = &exact_end;
    mbs_record r;
    probe_run("meter-probe", &def, 0.5, NAN, 0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_double_eq(r.err.q, 0.0);
    ck_assert_double_eq(r.err_mixed_qv, 0.0);
    ck_assert_double_eq(r.scd, 16.0);
    ck_assert_double_eq(r.mescd, 16.0);
    assert_rel(r.err_max.q, 1e-3, 1e-12, "err_max.q");
    ck_assert(isnan(r.res_acc_max)); /* no accelerations given */
    mbs_record_free(&r);
}
END_TEST

/* ---- success must be earned; budgets ---------------------------------------------- */

static const probe_pt short_pts[2][2] = {
    {{0.5, {0}, {0}, 0, 0, {0}}, {1.0 - 0.9e-6, {0}, {0}, 0, 0, {0}}},
    {{0.5, {0}, {0}, 0, 0, {0}}, {1.0 - 1.1e-6, {0}, {0}, 0, 0, {0}}},
};

/* A run that "succeeds" short of t_end: within 1e-6 of the span it is ok, beyond
 * it is no_progress with its measures withdrawn; no accepted step at all too. */
START_TEST(success_must_reach_t_end)
{
    for (int c = 0; c < 3; c++) {
        probe_script sc = {c < 2 ? short_pts[c] : short_pts[0], c < 2 ? 2 : 0, 1.0, 0.0, 0.0};
        mbs_method_def def = probe_fixed;
        def.variant = &sc;
        mbs_record r;
        probe_run("meter-probe", &def, 0.5, NAN, 0, &r);
        if (c == 0) {
            ck_assert_int_eq(r.status, MBS_OK);
            ck_assert(isfinite(r.err.q));
        } else {
            ck_assert_int_eq(r.status, MBS_NO_PROGRESS);
            ck_assert(isnan(r.err.q) && isnan(r.scd) && isnan(r.err_mixed_qv));
            ck_assert_ptr_nonnull(strstr(r.reason, c == 1 ? "before t_end" : "without"));
        }
        mbs_record_free(&r);
    }
}
END_TEST

/* The step budget counts accepted + rejected attempts: S1 makes 4 (1 rejected,
 * 3 accepted), so max_steps = 4 passes and 3 fails with a budget reason at the
 * time of the last accepted step. */
START_TEST(step_budget_boundary)
{
    mbs_record r;
    probe_run("meter-probe", &probe_fixed, 0.25, NAN, 4, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    mbs_record_free(&r);
    probe_run("meter-probe", &probe_fixed, 0.25, NAN, 3, &r);
    ck_assert_int_eq(r.status, MBS_TOO_MANY_STEPS);
    ck_assert_msg(strncmp(r.reason, "budget:", 7) == 0, "%s", r.reason);
    ck_assert_double_eq(r.fail_t, 0.5);
    ck_assert_int_eq(r.cnt.steps, 2);
    ck_assert(isnan(r.err.q)); /* no error of a run that did not reach t_end */
    mbs_record_free(&r);
}
END_TEST

/* Baseline budgets: max(1000, 10 x (steps + rejected)) steps, 1 s + 10 x the
 * CPU median, 5 s + 2 x that wall clock; matched by specs and step. */
START_TEST(budgets_from_baseline_boundary)
{
    const double steps[3] = {99.0, 100.0, 101.0}, cpu[3] = {0.5, NAN, 0.0};
    const long want_steps[3] = {1000, 1000, 1010};
    json_t *arr = json_array();
    for (int i = 0; i < 3; i++) {
        json_t *o = json_pack("{s:s,s:s,s:s,s:f,s:n,s:f,s:{s:f,s:f},s:{s:o}}", "problem_spec",
                              "meter-probe", "method_spec", "meter/probe", "status", "ok", "h",
                              0.25 / (i + 1), "tol", "t_end", 1.0, "counters", "steps",
                              steps[i] - 1.0, "rejected", 1.0, "cpu", "median",
                              isfinite(cpu[i]) ? json_real(cpu[i]) : json_null());
        json_array_append_new(arr, o);
    }
    mbs_results b;
    ck_assert_int_eq(mbs_results_from_array(NULL, arr, &b), 0);
    json_decref(arr);
    mbs_suite s = {0};
    mbs_run_spec runs[4];
    for (int i = 0; i < 4; i++)
        runs[i] = (mbs_run_spec){.problem = "meter-probe", .method = "meter/probe",
                                 .h = 0.25 / (i + 1), .tol = NAN, .t_end = NAN};
    s.runs = runs;
    s.n_runs = 4;
    ck_assert_uint_eq(mbs_baseline_budgets(&b, &s), 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(runs[i].max_steps, want_steps[i]);
        double c = isfinite(cpu[i]) ? cpu[i] : 0.0;
        ck_assert_double_eq_tol(runs[i].max_cpu, 1.0 + 10.0 * c, 1e-12);
        ck_assert_double_eq_tol(runs[i].max_wall, 5.0 + 2.0 * (1.0 + 10.0 * c), 1e-12);
    }
    ck_assert_int_eq(runs[3].max_steps, 0); /* h = 0.0625: not in the baseline */
    mbs_results_free(&b);
}
END_TEST

/* ---- CPU statistics ---------------------------------------------------------------- */

/* min, median and IQR with linear interpolation between order statistics
 * (Hyndman and Fan 1996, type 7: q(p) at position p (n - 1)); the times stay in
 * run order. */
START_TEST(cpu_statistics_by_hand)
{
    mbs_record r;
    memset(&r, 0, sizeof r);
    double t5[5] = {5.0, 1.0, 4.0, 2.0, 3.0};
    mbs_cpu_stats(&r, t5, 5);
    ck_assert_double_eq(r.cpu_min, 1.0);
    ck_assert_double_eq(r.cpu_median, 3.0);
    ck_assert_double_eq(r.cpu_iqr, 4.0 - 2.0);
    ck_assert_int_eq(r.cpu_repeats, 5);
    ck_assert_double_eq(r.cpu_times[0], 5.0);
    ck_assert_double_eq(r.cpu_times[4], 3.0);
    /* n = 4: median (2 + 3) / 2; q(0.25) at 0.75: 1 + 0.75; q(0.75) at 2.25: 3 + 0.25 x 7 */
    double t4[4] = {10.0, 3.0, 1.0, 2.0};
    mbs_cpu_stats(&r, t4, 4);
    ck_assert_double_eq(r.cpu_min, 1.0);
    ck_assert_double_eq(r.cpu_median, 2.5);
    ck_assert_double_eq_tol(r.cpu_iqr, 4.75 - 1.75, 1e-15);
    ck_assert_double_eq(r.cpu_times[0], 10.0);
    /* n = 7 (the nightly's repeats): median the 4th, quartiles at 1.5 and 4.5 */
    double t7[7] = {7, 1, 6, 2, 5, 3, 4};
    mbs_cpu_stats(&r, t7, 7);
    ck_assert_double_eq(r.cpu_median, 4.0);
    ck_assert_double_eq(r.cpu_iqr, 5.5 - 2.5);
    /* one repeat */
    double t1[1] = {0.25};
    mbs_cpu_stats(&r, t1, 1);
    ck_assert_double_eq(r.cpu_min, 0.25);
    ck_assert_double_eq(r.cpu_median, 0.25);
    ck_assert_double_eq(r.cpu_iqr, 0.0);
}
END_TEST

/* The CPU clock of the timings is the process CPU clock in seconds: a reading
 * lies between two direct readings of CLOCK_PROCESS_CPUTIME_ID taken around it
 * (a consistency check of units, not a timing). */
static double cpu_clock_direct(void)
{
    struct timespec ts;
    ck_assert_int_eq(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(cpu_clock_units)
{
    volatile double sink = 0.0;
    for (int k = 0; k < 20; k++) {
        for (int i = 0; i < 200000; i++) /* let the clock move on */
            sink += sqrt((double)i);
        double a = cpu_clock_direct(), m = mbs_cpu_seconds(), b = cpu_clock_direct();
        ck_assert_msg(a - 1e-9 <= m && m <= b + 1e-9, "%.9f not in [%.9f, %.9f]", m, a, b);
    }
    (void)sink;
}
END_TEST

/* Timing runs without a measuring run: the record takes the work of the first
 * timing run (the same script: the same counters) and measures nothing. */
START_TEST(work_of_timing_runs)
{
    mbs_run_spec spec = {.problem = "meter-probe", .method = "meter/probe", .h = 0.25,
                         .tol = NAN, .t_end = NAN, .repeat = 3, .measure = 0,
                         .method_def = &probe_fixed};
    mbs_record r;
    char err[256];
    ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_int_eq(r.cnt.steps, 3);
    ck_assert_int_eq(r.cnt.rejected, 1);
    ck_assert_int_eq(r.cnt.f_evals, 3 * probe_work[0]);
    ck_assert_int_eq(r.cpu_repeats, 3);
    ck_assert(isnan(r.err.q));
    assert_rel(r.final[0], 2.002, 1e-14, "final q_0");
    mbs_record_free(&r);
}
END_TEST

/* ---- fits ---------------------------------------------------------------------------- */

/* Two-sided 95% points t_{0.975, df} of Student's t distribution, df = 1..10:
 * NIST/SEMATECH e-Handbook of Statistical Methods, Sect. 1.3.6.7.2, "Critical
 * values of the Student's t distribution" (upper-tail probability 0.025). */
static const double t975[11] = {NAN,   12.706, 4.303, 3.182, 2.776, 2.571,
                                2.447, 2.365,  2.306, 2.262, 2.228};

/* Slope, intercept and the CI half-width of mbs_fit_line against GSL's
 * gsl_fit_linear (slope c1, intercept c0, var(slope) c11) and the table. */
START_TEST(line_fit_and_ci_by_table)
{
    const double x[6] = {0.0, 1.0, 2.0, 3.0, 4.0, 6.0};
    const double y[6] = {1.0, 3.1, 4.9, 7.2, 8.8, 13.1};
    for (size_t n = 3; n <= 6; n++) {
        double a, p, half, c0, c1, c00, c01, c11, sumsq;
        double sd = mbs_fit_line(x, y, n, &a, &p, &half);
        gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &c00, &c01, &c11, &sumsq);
        assert_rel(p, c1, 1e-12, "slope");
        assert_rel(a, c0, 1e-12, "intercept");
        assert_rel(sd, sqrt(sumsq / (double)(n - 2)), 1e-12, "residual sd");
        /* the table has 3 decimals */
        assert_rel(half, t975[n - 2] * sqrt(c11), 5e-4 / t975[n - 2] + 1e-12, "CI half-width");
    }
}
END_TEST

/* err = C h^p on 6 levels, by hand: slope p, the CI collapses, window all. */
START_TEST(order_fit_by_hand)
{
    double h[6], e[6];
    for (int i = 0; i < 6; i++) {
        h[i] = 0.1 / pow(2.0, i);
        e[i] = 3.0 * pow(h[i], 2.5) * (1.0 + 0.01 * (i % 2)); /* a 1% zig-zag */
    }
    mbs_order_fit f;
    mbs_fit_order(h, e, 6, &f);
    ck_assert(f.established);
    ck_assert_uint_eq(f.first, 0);
    ck_assert_uint_eq(f.last, 5);
    double lh[6], le[6], c0, c1, c00, c01, c11, sumsq;
    for (int i = 0; i < 6; i++) {
        lh[i] = log(h[i]);
        le[i] = log(e[i]);
    }
    gsl_fit_linear(lh, 1, le, 1, 6, &c0, &c1, &c00, &c01, &c11, &sumsq);
    assert_rel(f.p, c1, 1e-12, "p");
    assert_rel(f.ci_high - f.p, t975[4] * sqrt(c11), 5e-4 / t975[4] + 1e-12, "CI high");
    assert_rel(f.p - f.ci_low, t975[4] * sqrt(c11), 5e-4 / t975[4] + 1e-12, "CI low");
    ck_assert_double_gt(f.ci_high - f.ci_low, 1e-3); /* the zig-zag is seen */
}
END_TEST

/* Exact power laws err = h^p on n levels with the log step L = log 2. */
static void power_law(double p, size_t n, double *h, double *e)
{
    for (size_t i = 0; i < n; i++) {
        h[i] = pow(2.0, -(double)i);
        e[i] = pow(h[i], p);
    }
}

/* The window rule of mbs_fit_order at each boundary, just inside and just
 * outside (fit.h: order >= 0.5; every pairwise order within max(0.25, 6%) of
 * the slope; CI half-width within max(0.3, 10%)). */
START_TEST(window_rule_boundaries)
{
    double h[12], e[12];
    mbs_order_fit f;
    /* order 0.5 is the smallest accepted */
    power_law(0.5 + 1e-9, 5, h, e);
    mbs_fit_order(h, e, 5, &f);
    ck_assert(f.established);
    power_law(0.5 - 1e-9, 5, h, e);
    mbs_fit_order(h, e, 5, &f);
    ck_assert(!f.established);
    /* pairwise orders: 8 levels on slope 1 (tight CI), one pair bent by +-d:
     * the middle level moved by d L / 2 bends its two pairs by +-d/2 ... here the
     * point e[4] is moved so that the largest pairwise deviation from the fitted
     * slope is just below or just above 0.25 (p ~ 1: max(0.25, 0.06) = 0.25) */
    for (int side = 0; side < 2; side++) {
        double lo = 0.0, hi = 1.0, dev = 0.0; /* bisect the bend for deviation 0.25 */
        for (int it = 0; it < 200; it++) {
            double b = 0.5 * (lo + hi);
            power_law(1.0, 9, h, e);
            e[4] *= exp(b);
            double lh[9], le[9], c0, c1, c00, c01, c11, ss;
            for (int i = 0; i < 9; i++) {
                lh[i] = log(h[i]);
                le[i] = log(e[i]);
            }
            gsl_fit_linear(lh, 1, le, 1, 9, &c0, &c1, &c00, &c01, &c11, &ss);
            dev = 0.0;
            for (int i = 0; i < 8; i++)
                dev = fmax(dev, fabs((le[i] - le[i + 1]) / (lh[i] - lh[i + 1]) - c1));
            double target = side ? 0.25 * (1.0 + 1e-9) : 0.25 * (1.0 - 1e-9);
            if (dev < target)
                lo = b;
            else
                hi = b;
        }
        ck_assert_double_lt(fabs(dev - 0.25), 1e-6);
        mbs_fit_order(h, e, 9, &f);
        ck_assert_msg(f.established == (side == 0) || (f.established && f.last - f.first < 8),
                      "pairwise rule: side %d established %d window %zu..%zu", side,
                      f.established, f.first, f.last);
        if (side == 0) {
            ck_assert_uint_eq(f.first, 0);
            ck_assert_uint_eq(f.last, 8);
        }
    }
    /* pairwise orders for p = 5: 6% of 5 = 0.3 > 0.25 is the bound */
    power_law(5.0, 9, h, e);
    e[4] *= exp(0.27 * log(2.0)); /* the bent pairs deviate by about 0.27 < 0.3 */
    mbs_fit_order(h, e, 9, &f);
    ck_assert(f.established);
    ck_assert_uint_eq(f.last - f.first, 8);
    /* CI half-width: three levels with a kink: half = t(1) se; bisect the kink so
     * that the half-width is just below / above 0.3 (slope ~ 1.5: max(0.3, 0.15)) */
    for (int side = 0; side < 2; side++) {
        double lo = 0.0, hi = 0.2, half = 0.0, p = 0.0;
        for (int it = 0; it < 200; it++) {
            double b = 0.5 * (lo + hi);
            power_law(1.5, 3, h, e);
            e[1] *= exp(b);
            double lh[3], le[3], c0, c1, c00, c01, c11, ss;
            for (int i = 0; i < 3; i++) {
                lh[i] = log(h[i]);
                le[i] = log(e[i]);
            }
            gsl_fit_linear(lh, 1, le, 1, 3, &c0, &c1, &c00, &c01, &c11, &ss);
            half = 12.7062047361747 * sqrt(c11); /* t(0.975, 1) = tan(0.475 pi) */
            p = c1;
            double target = side ? 0.3 * (1.0 + 1e-7) : 0.3 * (1.0 - 1e-7);
            if (half < target)
                lo = b;
            else
                hi = b;
        }
        ck_assert_double_lt(fabs(half - 0.3), 1e-6);
        ck_assert_double_lt(fabs(p - 1.5), 1e-9); /* a kink in the middle keeps the slope */
        mbs_fit_order(h, e, 3, &f);
        ck_assert_msg(f.established == (side == 0), "CI rule: side %d", side);
    }
    /* CI bound 10% of p beyond p = 3: for p = 5 a half-width of 0.45 passes */
    for (int side = 0; side < 2; side++) {
        double lo = 0.0, hi = 0.5, half = 0.0;
        for (int it = 0; it < 200; it++) {
            double b = 0.5 * (lo + hi);
            power_law(5.0, 3, h, e);
            e[1] *= exp(b);
            double lh[3], le[3], c0, c1, c00, c01, c11, ss;
            for (int i = 0; i < 3; i++) {
                lh[i] = log(h[i]);
                le[i] = log(e[i]);
            }
            gsl_fit_linear(lh, 1, le, 1, 3, &c0, &c1, &c00, &c01, &c11, &ss);
            half = 12.7062047361747 * sqrt(c11);
            double target = side ? 0.5 * (1.0 + 1e-7) : 0.5 * (1.0 - 1e-7);
            if (half < target)
                lo = b;
            else
                hi = b;
        }
        mbs_fit_order(h, e, 3, &f);
        ck_assert_msg(f.established == (side == 0), "CI rule 10%%: side %d", side);
    }
}
END_TEST

/* The window: the longest qualifying run of levels; between equally long ones
 * the narrower CI; invalid levels (err <= 0, NaN) break runs; pre-asymptotic
 * levels and a round-off plateau are left out. */
START_TEST(window_choice)
{
    double h[10], e[10];
    mbs_order_fit f;
    /* plateau: levels 6.. sit at 1e-13 */
    power_law(2.0, 10, h, e);
    for (int i = 6; i < 10; i++)
        e[i] = 1e-13 * (1.0 + 0.1 * (i % 2));
    for (int i = 0; i < 6; i++)
        e[i] *= 1e-3;
    mbs_fit_order(h, e, 10, &f);
    ck_assert(f.established);
    ck_assert_uint_eq(f.first, 0);
    ck_assert_uint_eq(f.last, 5);
    ck_assert_double_lt(fabs(f.p - 2.0), 1e-9);
    /* a zero error in the middle splits the levels: the longer side wins */
    power_law(3.0, 10, h, e);
    e[3] = 0.0;
    mbs_fit_order(h, e, 10, &f);
    ck_assert(f.established);
    ck_assert_uint_eq(f.first, 4);
    ck_assert_uint_eq(f.last, 9);
    e[3] = NAN;
    mbs_fit_order(h, e, 10, &f);
    ck_assert_uint_eq(f.first, 4);
    /* two windows of 3: [0, 2] exact order 2, [4, 6] order 2 with a 1% kink;
     * the exact one has the narrower CI */
    power_law(2.0, 7, h, e);
    e[3] = 1.0; /* breaks both pairs around it (orders far off) */
    e[5] *= 1.01;
    mbs_fit_order(h, e, 7, &f);
    ck_assert(f.established);
    ck_assert_uint_eq(f.first, 0);
    ck_assert_uint_eq(f.last, 2);
    e[1] *= 1.02;
    mbs_fit_order(h, e, 7, &f);
    ck_assert_uint_eq(f.first, 4);
    ck_assert_uint_eq(f.last, 6);
    /* fewer than 3 valid levels: not established */
    power_law(2.0, 2, h, e);
    mbs_fit_order(h, e, 2, &f);
    ck_assert(!f.established && isnan(f.p));
}
END_TEST

/* Drift fit: bins of 10 per decade below the span, the maximum per bin, an exact
 * power law gives its exponent and constant with rms 0; points below 1e-6 of the
 * span fall into the first bin; r <= 0 is ignored; fewer than 3 bins: no fit. */
START_TEST(drift_fit_by_hand)
{
    mbs_drift d;
    mbs_drift_fit f;
    mbs_drift_init(&d, 2.0, 12.0); /* span 10 */
    for (int i = 0; i <= 60; i++) {
        double s = 10.0 * pow(10.0, -6.0 + 0.1 * i + 0.05); /* one point per bin */
        if (s > 10.0)
            break;
        mbs_drift_add(&d, 2.0 + s, 3e-4 * pow(s, 1.75));
        mbs_drift_add(&d, 2.0 + s, 1e-4 * pow(s, 1.75)); /* smaller: not the envelope */
        mbs_drift_add(&d, 2.0 + s, 0.0);
    }
    mbs_drift_fit_compute(&d, &f);
    ck_assert(f.ok);
    ck_assert_double_lt(fabs(f.k - 1.75), 1e-9);
    ck_assert_double_lt(fabs(f.log10_C - log10(3e-4)), 1e-9);
    ck_assert_double_lt(f.rms, 1e-9);
    /* bin placement: 10 per decade of (t - t0) / span, from 1e-6 */
    mbs_drift_init(&d, 0.0, 1.0);
    mbs_drift_add(&d, 1e-9, 5.0); /* below 1e-6: bin 0 */
    mbs_drift_add(&d, 1.1e-6, 1.0); /* also bin 0 (log10 1.1 < 0.1): not the envelope */
    mbs_drift_add(&d, 1e-3, 2.0);
    mbs_drift_add(&d, 1.0, 4.0);    /* t_end: the last bin */
    ck_assert(d.used[0] && d.rmax[0] == 5.0 && d.tmax[0] == 1e-9);
    ck_assert(d.used[30] && d.used[MBS_DRIFT_BINS - 1]);
    mbs_drift_add(&d, 1.2589e-6, 6.0); /* 10^0.1 = 1.2589...: still bin 0 */
    ck_assert(d.rmax[0] == 6.0);
    mbs_drift_add(&d, 1.2590e-6, 7.0); /* bin 1 */
    ck_assert(d.used[1] && d.rmax[0] == 6.0);
    mbs_drift_fit_compute(&d, &f);
    const double ts[4] = {1.2589e-6, 1.2590e-6, 1e-3, 1.0}, rs[4] = {6.0, 7.0, 2.0, 4.0};
    double k, rms;
    drift_by_gsl(ts, rs, 4, &k, &rms);
    assert_rel(f.k, k, 1e-12, "k");
    assert_rel(f.rms, rms, 1e-12, "rms");
    /* two bins: no exponent */
    mbs_drift_init(&d, 0.0, 1.0);
    mbs_drift_add(&d, 0.1, 1.0);
    mbs_drift_add(&d, 1.0, 2.0);
    mbs_drift_add(&d, 0.0, 3.0); /* t = t0: ignored */
    mbs_drift_fit_compute(&d, &f);
    ck_assert(!f.ok && isnan(f.k));
}
END_TEST

/* The drift exponent of a run: |g| = 1e-3 t^1.5 at 40 log-spaced steps. */
START_TEST(drift_exponent_of_a_run)
{
    probe_pt pts[41];
    for (int i = 0; i <= 40; i++) {
        double t = pow(10.0, -4.0 + 0.1 * i);
        pts[i] = (probe_pt){t, {1e-3 * pow(t, 1.5), 0.0}, {0.0, 0.0}, 0.0, 0, {0, 0}};
    }
    probe_script sc = {pts, 41, 1.0, 0.0, 0.0};
    mbs_method_def def = probe_fixed;
    def.variant = &sc;
    mbs_record r;
    probe_run("meter-probe", &def, 0.01, NAN, 0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_double_lt(fabs(r.drift_exponent - 1.5), 1e-6);
    ck_assert_double_lt(r.drift_rms, 1e-6);
    assert_rel(r.res_pos_max, 1e-3, 1e-9, "pos_max");
    mbs_record_free(&r);
}
END_TEST

/* ---- converge: orders, tolerance exponents, "order established" ------------------- */

/* Errors c x^p at t_end (deviations scaled by the script): the study's levels,
 * orders and CIs by hand; order exactly 0.5 is established, just below not. */
static const probe_pt conv_pts[2] = {
    {0.5, {1.0, 0.0}, {0.0, 0.0}, 0.0, 0, {0, 0}},
    {1.0, {0.0, 2.0}, {3.0, 0.0}, 1.0, 0, {0, 0}},
};

START_TEST(converge_orders_by_hand)
{
    const double ps[3] = {2.0, 0.5 + 1e-7, 0.5 - 1e-7};
    for (int c = 0; c < 3; c++) {
        probe_script sc = {conv_pts, 2, 1e-2, ps[c], c == 0 ? 1.0 : 0.0};
        mbs_method_def def = probe_fixed;
        def.variant = &sc;
        mbs_run_spec base = {.problem = "meter-probe", .method = "meter/probe", .t_end = NAN,
                             .measure = 1, .method_def = &def};
        mbs_converge *cv = malloc(sizeof *cv);
        char err[256];
        ck_assert_int_eq(mbs_converge_run(&base, 0.1, 5, 3.0, cv, err, sizeof err), MBS_OK);
        ck_assert_int_eq(cv->levels, 5);
        ck_assert_int_eq(cv->adaptive, 0);
        ck_assert_int_eq(cv->self_ref, 0);
        for (int i = 0; i < 5; i++) {
            double x = 0.1 / pow(3.0, i);
            assert_rel(cv->x[i], x, 1e-14, "level");
            /* err.q = 2 c x^p (q_1), err.v = 3 c x^p, to the rounding of y = ref + dev */
            ck_assert_double_eq_tol(cv->rec[i].err.q, 2e-2 * pow(x, ps[c]), 1e-15);
            ck_assert_double_eq_tol(cv->rec[i].err.v, 3e-2 * pow(x, ps[c]), 1e-15);
        }
        if (c == 0) {
            ck_assert(cv->fit[0].established && cv->fit[1].established);
            ck_assert_double_lt(fabs(cv->fit[0].p - 2.0), 1e-9);
            ck_assert_double_lt(fabs(cv->fit[2].p - 1.0), 1e-9); /* lambda: dl_p = 1 */
            ck_assert_double_lt(cv->fit[0].ci_high - cv->fit[0].ci_low, 1e-6);
        } else {
            for (int g = 0; g < 3; g++)
                ck_assert_msg(cv->fit[g].established == (c == 1), "p = %.9f group %d", ps[c], g);
        }
        /* the printed and JSON forms say the same */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        mbs_converge_print(cv, m);
        fclose(m);
        const char *want[3] = {"order q      2.00  95% CI [2.00, 2.00]  levels 1..5  (nominal 2)",
                               "order q      0.50", "order q      order not established"};
        ck_assert_msg(strstr(buf, want[c]) != NULL, "%s", buf);
        /* the table: title, header, one row per level (h = 0.1 / 3^i), then the fits */
        const char *hs[5] = {"1.000e-01", "3.333e-02", "1.111e-02", "3.704e-03", "1.235e-03"};
        const char *ln = buf;
        for (int k = 0; k < 2 + 5; k++, ln = strchr(ln, '\n') + 1)
            if (k >= 2)
                ck_assert_msg(strncmp(ln + strspn(ln, " "), hs[k - 2], 9) == 0, "row %d: %s",
                              k - 2, buf);
        ck_assert_msg(strncmp(ln, "order q ", 8) == 0, "after the 5 levels: %s", ln);
        free(buf);
        char *js = mbs_converge_json(cv);
        json_t *o = json_loads(js, 0, NULL);
        json_t *oq = json_object_get(json_object_get(o, "order"), "q");
        ck_assert(json_is_true(json_object_get(oq, "established")) == (c < 2));
        if (c < 2)
            assert_rel(json_number_value(json_object_get(oq, "p")), ps[c], 1e-9, "JSON p");
        json_decref(o);
        free(js);
        mbs_converge_free(cv);
        free(cv);
    }
}
END_TEST

/* converge's inputs at their documented bounds (converge.h: levels in
 * [2, MBS_MAX_LEVELS], ratio in (1, 100]): each bound just inside runs, just
 * outside is refused with the one-line message naming the value. */
static int converge_on(const char *problem, int levels, double ratio, char *err, size_t errlen)
{
    probe_script sc = {conv_pts, 2, 1e-2, 2.0, 0.0};
    mbs_method_def def = probe_fixed;
    def.variant = &sc;
    mbs_run_spec base = {.problem = problem, .method = "meter/probe", .t_end = NAN,
                         .measure = 1, .method_def = &def};
    /* the study writes nothing past its mbs_converge: 4096 guard bytes follow it (none
     * under AddressSanitizer, which watches every access past the allocation itself) */
#ifdef __SANITIZE_ADDRESS__
    const size_t guard = 0;
#else
    const size_t guard = 4096;
#endif
    unsigned char *mem = malloc(sizeof(mbs_converge) + guard);
    ck_assert_ptr_nonnull(mem);
    memset(mem + sizeof(mbs_converge), 0xa5, guard);
    mbs_converge *cv = (mbs_converge *)mem;
    int rc = mbs_converge_run(&base, 0.1, levels, ratio, cv, err, errlen);
    for (size_t k = 0; k < guard; k++)
        ck_assert_msg(mem[sizeof(mbs_converge) + k] == 0xa5, "%d levels: byte %zu past the study "
                      "written", levels, k);
    if (rc == MBS_OK) {
        ck_assert_int_eq(cv->levels, levels);
        assert_rel(cv->x[levels - 1], 0.1 / pow(ratio, levels - 1), 1e-12, "last level");
        /* the table (title, header, a row per level) and the JSON, every level */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        mbs_converge_print(cv, m);
        fclose(m);
        const char *ln = buf;
        for (int k = 0; k < 2 + levels; k++, ln = strchr(ln, '\n') + 1)
            if (k >= 2)
                assert_rel(strtod(ln, NULL), 0.1 / pow(ratio, k - 2), 1e-3, "row's h");
        ck_assert_msg(strncmp(ln, "order q ", 8) == 0 || strncmp(ln, "reference: ", 11) == 0,
                      "after the %d levels: %s", levels, ln);
        free(buf);
        char *js = mbs_converge_json(cv);
        json_t *o = json_loads(js, 0, NULL);
        ck_assert_int_eq(json_array_size(json_object_get(o, "levels")), levels);
        json_decref(o);
        free(js);
        mbs_converge_free(cv);
    }
    free(cv);
    return rc;
}

static int converge_with(int levels, double ratio, char *err, size_t errlen)
{
    return converge_on("meter-probe", levels, ratio, err, errlen);
}

/* The run's input bounds (mbs_run_check, harness/run.c: the documented ranges of
 * docs/usage.md), each just inside and just outside, on pendulum over [0, 1]:
 * --h of a fixed-step method in (0, t_end - t0] and at most MBS_MAX_FIXED_STEPS
 * steps (h 1.05e-15: 9.5e14 steps run, h 0.95e-15: 1.05e15 refused), --tol and a
 * non-zero atol in (0, 1), an adaptive initial --h in (0, t_end - t0], --repeat in
 * [0, 100000], --max-steps >= 0, --max-cpu and --max-wall in [0, 1e7] s,
 * --max-mem in [0, 1e18] bytes, --output-steps in [-1, 10^7], the injected failure
 * time finite and >= 0, --t-end finite and > t0. */
static int run_check_with(const char *method, double h, double tol, double atol,
                          mbs_run_spec *extra, char *err, size_t errlen)
{
    mbs_run_spec spec = *extra;
    spec.problem = "pendulum";
    spec.method = method;
    spec.h = h;
    spec.tol = tol;
    spec.atol = atol;
    if (spec.t_end == 0.0)
        spec.t_end = 1.0;
    err[0] = 0;
    return mbs_run_check(&spec, err, errlen);
}

START_TEST(run_input_bounds)
{
    char err[512];
    const char *fx = "index1/rk4", *ad = "index1/dopri5";
    mbs_run_spec none = {.t_end = 0.0};
    /* fixed step */
    ck_assert_int_eq(run_check_with(fx, 1.0, NAN, NAN, &none, err, sizeof err), MBS_OK);
    ck_assert_int_eq(run_check_with(fx, 1.05e-15, NAN, NAN, &none, err, sizeof err), MBS_OK);
    const double bad_h[4] = {nextafter(1.0, 2.0), 0.0, -0.01, 0.95e-15};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(run_check_with(fx, bad_h[k], NAN, NAN, &none, err, sizeof err),
                         MBS_BAD_INPUT);
        ck_assert_msg(strncmp(err, "--h ", 4) == 0, "h %g: %s", bad_h[k], err);
    }
    /* adaptive: tol, atol, the initial step */
    const double ok_tol[3] = {nextafter(1.0, 0.0), 1e-300, 0.5};
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(run_check_with(ad, NAN, ok_tol[k], NAN, &none, err, sizeof err),
                         MBS_OK);
    const double bad_tol[4] = {1.0, 0.0, -1e-300, INFINITY};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(run_check_with(ad, NAN, bad_tol[k], NAN, &none, err, sizeof err),
                         MBS_BAD_INPUT);
        ck_assert_msg(strstr(err, "must lie in (0, 1)") && strncmp(err, "--tol ", 6) == 0,
                      "tol %g: %s", bad_tol[k], err);
    }
    const double ok_atol[3] = {0.0, nextafter(1.0, 0.0), 1e-300};
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(run_check_with(ad, NAN, 1e-6, ok_atol[k], &none, err, sizeof err),
                         MBS_OK);
    const double bad_atol[3] = {1.0, -1e-300, INFINITY};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(run_check_with(ad, NAN, 1e-6, bad_atol[k], &none, err, sizeof err),
                         MBS_BAD_INPUT);
        ck_assert_msg(strncmp(err, "atol ", 5) == 0, "atol %g: %s", bad_atol[k], err);
    }
    ck_assert_int_eq(run_check_with(ad, 1.0, 1e-6, NAN, &none, err, sizeof err), MBS_OK);
    ck_assert_int_eq(run_check_with(ad, nextafter(1.0, 2.0), 1e-6, NAN, &none, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(run_check_with(ad, 0.0, 1e-6, NAN, &none, err, sizeof err),
                     MBS_BAD_INPUT);
    /* the budgets and the other limits: {field, value, accepted} */
    struct {
        mbs_run_spec s;
        int ok;
        const char *msg;
    } lim[] = {
        {{.repeat = 100000}, 1, ""},
        {{.repeat = 100001}, 0, "--repeat "},
        {{.repeat = -1}, 0, "--repeat "},
        {{.max_steps = -1}, 0, "--max-steps "},
        {{.max_steps = 1}, 1, ""},
        {{.max_cpu = 1e7}, 1, ""},
        {{.max_cpu = nextafter(1e7, 2e7)}, 0, "--max-cpu "},
        {{.max_cpu = -1e-300}, 0, "--max-cpu "},
        {{.max_wall = 1e7}, 1, ""},
        {{.max_wall = nextafter(1e7, 2e7)}, 0, "--max-wall "},
        {{.max_wall = -1e-300}, 0, "--max-wall "},
        {{.max_mem = 1e18}, 1, ""},
        {{.max_mem = nextafter(1e18, 2e18)}, 0, "--max-mem "},
        {{.max_mem = -1e-300}, 0, "--max-mem "},
        {{.output_steps = -1}, 1, ""},
        {{.output_steps = -2}, 0, "--output-steps "},
        {{.output_steps = MBS_MAX_OUTPUT_STEPS}, 1, ""},
        {{.output_steps = MBS_MAX_OUTPUT_STEPS + 1}, 0, "--output-steps "},
        {{.inject_fail_t = 1e-300}, 1, ""},
        {{.inject_fail_t = -1e-300}, 0, "--inject-failure "},
        {{.inject_fail_t = INFINITY}, 0, "--inject-failure "},
        {{.t_end = nextafter(0.0, 1.0)}, 1, ""},
        {{.t_end = -1.0}, 0, "--t-end "},
        {{.t_end = INFINITY}, 0, "--t-end "},
    };
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
        int s = run_check_with(ad, NAN, 1e-6, NAN, &lim[k].s, err, sizeof err);
        ck_assert_msg(s == (lim[k].ok ? MBS_OK : MBS_BAD_INPUT), "limit %zu: %d %s", k, s, err);
        ck_assert_msg(strncmp(err, lim[k].msg, strlen(lim[k].msg)) == 0, "limit %zu: %s", k,
                      err);
    }
}
END_TEST

START_TEST(converge_input_bounds)
{
    char err[256];
    ck_assert_int_eq(converge_with(2, 2.0, err, sizeof err), MBS_OK);
    ck_assert_int_eq(converge_with(MBS_MAX_LEVELS, 1.25, err, sizeof err), MBS_OK);
    /* 40 levels without a reference: each against the next, the last against a 41st */
    ck_assert_int_eq(converge_on("meter-probe-ref", MBS_MAX_LEVELS, 1.25, err, sizeof err),
                     MBS_OK);
    ck_assert_int_eq(converge_with(1, 2.0, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_str_eq(err, "--levels 1 must lie in [2, 40]");
    ck_assert_int_eq(converge_with(MBS_MAX_LEVELS + 1, 1.25, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_str_eq(err, "--levels 41 must lie in [2, 40]");
    ck_assert_int_eq(converge_with(2, nextafter(1.0, 2.0), err, sizeof err), MBS_OK);
    ck_assert_int_eq(converge_with(2, 100.0, err, sizeof err), MBS_OK);
    const double bad[4] = {1.0, 0.95, nextafter(100.0, 200.0), NAN};
    for (int k = 0; k < 4; k++) {
        err[0] = 0;
        ck_assert_int_eq(converge_with(2, bad[k], err, sizeof err), MBS_BAD_INPUT);
        ck_assert_msg(strstr(err, "must lie in (1, 100]") && strncmp(err, "--ratio ", 8) == 0,
                      "%s", err);
    }
}
END_TEST

/* Reference-limited levels (converge.h): a stored reference stating "agree to 2
 * digits (q: 3 digits)" is accurate to 10^-d (1 + max |ref_i|) per group: q
 * (2, -2): 3e-3; v (1, 0): 2e-2; lambda 3: 4e-2.  An error strictly below it is
 * reference-limited, one equal to it is not (v: the deviation of v_1, whose
 * reference is 0, is the error to the last bit). */
START_TEST(reference_limited_boundary)
{
    char *dir = write_probe_reference("two computations agree to 2 digits (q: 3 digits)");
    const double dev[2][3] = {{2.9e-3, nextafter(2e-2, 0.0), 3.9e-2}, {3.1e-3, 2e-2, 4.1e-2}};
    for (int c = 0; c < 2; c++) {
        const probe_pt pts[2] = {
            {0.5, {0.0, 0.0}, {0.0, 0.0}, 0.0, 0, {0, 0}},
            {1.0, {0.0, dev[c][0]}, {0.0, dev[c][1]}, dev[c][2], 0, {0, 0}},
        };
        probe_script sc = {pts, 2, 1.0, 0.0, 0.0};
        mbs_method_def def = probe_fixed;
        def.variant = &sc;
        mbs_run_spec base = {.problem = "meter-probe-ref", .method = "meter/probe",
                             .t_end = NAN, .measure = 1, .method_def = &def};
        mbs_converge *cv = malloc(sizeof *cv);
        char err[256];
        ck_assert_int_eq(mbs_converge_run(&base, 0.1, 3, 2.0, cv, err, sizeof err), MBS_OK);
        ck_assert_int_eq(cv->self_ref, 0);
        ck_assert_double_eq(cv->ref_digits, 2.0);
        ck_assert_double_eq(cv->ref_digits_q, 3.0);
        assert_rel(cv->ref_acc[0], 3e-3, 1e-15, "ref_acc q");
        ck_assert_double_eq(cv->ref_acc[1], 2e-2);
        assert_rel(cv->ref_acc[2], 4e-2, 1e-15, "ref_acc lambda");
        for (int i = 0; i < 3; i++) {
            ck_assert_double_eq(cv->rec[i].err.v, dev[c][1]);
            for (int g = 0; g < 3; g++)
                ck_assert_msg(cv->ref_limited[i][g] == (c == 0), "level %d group %d", i, g);
        }
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        mbs_converge_print(cv, m);
        fclose(m);
        ck_assert_msg((strstr(buf, "reference-limited: q v lambda") != NULL) == (c == 0), "%s",
                      buf);
        free(buf);
        mbs_converge_free(cv);
        free(cv);
    }
    unsetenv("MBSBENCH_REFDIR");
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Round-off-limited levels (converge.h): a level whose error in a group lies at or
 * below eps (1 + ymax) max(1000, steps), ymax the group's largest |y| at t_end over
 * the levels, is marked round-off-limited, unless it is reference-limited there.
 * The probe takes n steps at every level (h = 0.1, 0.01, 0.001) and deviates at
 * t_end by -a_q in q_1 (-2), a_v in v_1 (0: the error to the last bit) and
 * c h^4 in lambda (3), with a_v = 2 eps M exactly (M = max(1000, n); ymax_v = 1:
 * the floor itself), a_q = 2.5 eps M (floor about 3 eps M) and a lambda error of
 * about 3.5 eps M at the middle level (floor about 4 eps M; 1e4 times that at the
 * first, 0 at the last: 3 + 3.5e-4 eps M rounds to 3).  Against a stored reference stating 14 digits (accurate
 * to 3e-14, 2e-14, 4e-14 in q, v, lambda), a q error of 0 and the last level's
 * lambda error are reference-limited, not round-off-limited. */
/* The names of the groups marked in m (q v lambda), space-separated, into out. */
static void marked_groups(const unsigned char m[3], char *out, size_t len)
{
    const char *gname[3] = {"q", "v", "lambda"};
    *out = '\0';
    for (int g = 0; g < 3; g++)
        if (m[g])
            snprintf(out + strlen(out), len - strlen(out), "%s%s", *out ? " " : "", gname[g]);
}

static mbs_converge *roundoff_study(const char *problem, int n, double a_q, double a_v,
                                    double c_l)
{
    probe_pt *pts = calloc((size_t)n, sizeof *pts);
    ck_assert_ptr_nonnull(pts);
    for (int k = 0; k < n; k++)
        pts[k].t = (double)(k + 1) / n;
    pts[n - 1].dq[1] = -a_q;
    pts[n - 1].dv[1] = a_v;
    pts[n - 1].dl = 1.0;
    probe_script sc = {pts, n, c_l, 0.0, 4.0};
    mbs_method_def def = probe_fixed;
    def.variant = &sc;
    mbs_run_spec base = {.problem = problem, .method = "meter/probe", .t_end = NAN,
                         .measure = 1, .method_def = &def};
    mbs_converge *cv = malloc(sizeof *cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, 0.1, 3, 10.0, cv, err, sizeof err), MBS_OK);
    free(pts);
    return cv;
}

START_TEST(roundoff_limited_by_hand)
{
    /* case 0 and 1: exact solution, 2 and 1500 steps; case 2: stored reference, 2 steps */
    const int steps[3] = {2, 1500, 2};
    /* the expected marks, level by level: round-off-limited and reference-limited */
    const char *want_ro[3][3] = {{"q v", "q v lambda", "q v lambda"},
                                 {"q v", "q v lambda", "q v lambda"},
                                 {"v", "v lambda", "v"}};
    const char *want_ref[3][3] = {{"", "", ""}, {"", "", ""}, {"q", "q", "q lambda"}};
    char *dir = NULL;
    for (int c = 0; c < 3; c++) {
        double M = steps[c] > 1000 ? steps[c] : 1000.0;
        double a_q = c == 2 ? 0.0 : 2.5 * DBL_EPSILON * M, a_v = 2.0 * DBL_EPSILON * M;
        double c_l = 3.5 * DBL_EPSILON * M / 1e-8; /* lambda error c_l h^4 */
        if (c == 2)
            dir = write_probe_reference("two computations agree to 14 digits");
        mbs_converge *cv =
            roundoff_study(c == 2 ? "meter-probe-ref" : "meter-probe", steps[c], a_q, a_v, c_l);
        ck_assert_int_eq(cv->levels, 3);
        /* the floors by hand: ymax_q = 2 + a_q, ymax_v = 1, ymax_l = 3 + the first
         * level's lambda error */
        const double ymax[3] = {2.0 + a_q, 1.0, 3.0 + c_l * 1e-4};
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(cv->rec[i].status, MBS_OK);
            ck_assert_int_eq(cv->rec[i].cnt.steps, steps[c]);
            ck_assert_double_eq(cv->rec[i].err.v, a_v);
            /* lambda = 3 + c_l h^4 rounded (0 at the last level: below half an ulp of 3) */
            double dl = (3.0 + c_l * pow(0.1 / pow(10.0, i), 4.0)) - 3.0;
            ck_assert_double_eq_tol(cv->rec[i].err.lambda, dl, 1e-30);
            for (int g = 0; g < 3; g++)
                assert_rel(cv->roundoff[i][g], DBL_EPSILON * (1.0 + ymax[g]) * M, 1e-12,
                           "round-off floor");
            ck_assert_double_eq(cv->roundoff[i][1], 2.0 * DBL_EPSILON * M); /* exact */
            char ro[32], rf[32];
            marked_groups(cv->roundoff_limited[i], ro, sizeof ro);
            marked_groups(cv->ref_limited[i], rf, sizeof rf);
            ck_assert_msg(strcmp(ro, want_ro[c][i]) == 0, "case %d level %d round-off: %s", c,
                          i, ro);
            ck_assert_msg(strcmp(rf, want_ref[c][i]) == 0, "case %d level %d reference: %s", c,
                          i, rf);
        }
        /* the table: each level's row ends with its marks; then the floor's line with
         * the last level's floors */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        mbs_converge_print(cv, m);
        fclose(m);
        const char *ln = strchr(strchr(buf, '\n') + 1, '\n') + 1;
        for (int i = 0; i < 3; i++) {
            char tail[128] = "";
            if (*want_ref[c][i])
                snprintf(tail, sizeof tail, "  reference-limited: %s", want_ref[c][i]);
            snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
                     "  round-off-limited: %s\n", want_ro[c][i]);
            const char *end = strchr(ln, '\n') + 1;
            size_t tl = strlen(tail);
            ck_assert_msg((size_t)(end - ln) > tl && strncmp(end - tl, tail, tl) == 0,
                          "case %d row %d does not end with '%s':\n%s", c, i, tail, buf);
            ln = end;
        }
        char floors[256];
        snprintf(floors, sizeof floors,
                 "max(1000, steps) (at the last level %.2e, %.2e, %.2e in q, v, lambda)",
                 DBL_EPSILON * (1.0 + ymax[0]) * M, DBL_EPSILON * (1.0 + ymax[1]) * M,
                 DBL_EPSILON * (1.0 + ymax[2]) * M);
        ck_assert_msg(strstr(buf, floors) != NULL, "case %d: no '%s' in\n%s", c, floors, buf);
        free(buf);
        /* the JSON levels say the same */
        char *js = mbs_converge_json(cv);
        json_t *o = json_loads(js, 0, NULL);
        ck_assert_ptr_nonnull(o);
        json_t *lv = json_object_get(o, "levels");
        ck_assert_int_eq(json_array_size(lv), 3);
        for (int i = 0; i < 3; i++) {
            json_t *a = json_object_get(json_array_get(lv, i), "roundoff_limited");
            char ro[32] = "";
            for (size_t k = 0; k < json_array_size(a); k++)
                snprintf(ro + strlen(ro), sizeof ro - strlen(ro), "%s%s", *ro ? " " : "",
                         json_string_value(json_array_get(a, k)));
            ck_assert_msg(strcmp(ro, want_ro[c][i]) == 0, "case %d level %d JSON: %s", c, i, ro);
        }
        json_decref(o);
        free(js);
        mbs_converge_free(cv);
        free(cv);
    }
    unsetenv("MBSBENCH_REFDIR");
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* The table, the JSON and the floor's line say exactly which levels and groups are
 * marked round-off-limited, whichever they are: the marks of a three-level study set
 * by hand, one level and one group at a time (the first level, the last) and none. */
START_TEST(roundoff_marks_printed_as_held)
{
    const char *gname[3] = {"q", "v", "lambda"};
    mbs_converge *cv = roundoff_study("meter-probe", 2, 0.0, 1e-3, 1.0);
    for (int k = 0; k < 7; k++) { /* k < 6: level (k / 3) * 2, group k % 3; 6: none */
        int lv = k < 6 ? (k / 3) * 2 : -1, gr = k % 3;
        memset(cv->roundoff_limited, 0, sizeof cv->roundoff_limited);
        memset(cv->ref_limited, 0, sizeof cv->ref_limited);
        if (lv >= 0)
            cv->roundoff_limited[lv][gr] = 1;
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        mbs_converge_print(cv, m);
        fclose(m);
        const char *ln = strchr(strchr(buf, '\n') + 1, '\n') + 1;
        for (int i = 0; i < 3; i++) {
            const char *end = strchr(ln, '\n');
            char tail[64] = "", row[512];
            snprintf(row, sizeof row, "%.*s", (int)(end - ln), ln);
            if (i == lv)
                snprintf(tail, sizeof tail, "  round-off-limited: %s", gname[gr]);
            size_t tl = strlen(tail), rl = strlen(row);
            ck_assert_msg(i == lv ? rl > tl && strcmp(row + rl - tl, tail) == 0
                                  : strstr(row, "limited") == NULL,
                          "marks %d row %d: %s", k, i, row);
            ln = end + 1;
        }
        ck_assert_msg((strstr(buf, "round-off-limited: error at or below") != NULL) == (lv >= 0),
                      "marks %d: the floor's line:\n%s", k, buf);
        free(buf);
        char *js = mbs_converge_json(cv);
        json_t *o = json_loads(js, 0, NULL);
        json_t *levels = json_object_get(o, "levels");
        for (int i = 0; i < 3; i++) {
            json_t *a = json_object_get(json_array_get(levels, i), "roundoff_limited");
            ck_assert_int_eq(json_array_size(a), i == lv);
            if (i == lv)
                ck_assert_str_eq(json_string_value(json_array_get(a, 0)), gname[gr]);
        }
        json_decref(o);
        free(js);
    }
    mbs_converge_free(cv);
    free(cv);
}
END_TEST

/* Tolerance exponent of an adaptive script (err = c tol^0.8) and self-convergence
 * without any reference: each level against the next finer one, the last against
 * x0 / r^levels. */
START_TEST(tolerance_exponent_and_self_reference)
{
    probe_script sc = {conv_pts, 2, 1.0, 0.8, 0.0};
    mbs_method_def def = probe_fixed;
    def.variant = &sc;
    def.flags = MBS_M_ADAPTIVE;
    mbs_run_spec base = {.problem = "meter-probe", .method = "meter/probe", .t_end = NAN,
                         .measure = 1, .method_def = &def};
    mbs_converge *cv = malloc(sizeof *cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, 1e-3, 4, 10.0, cv, err, sizeof err), MBS_OK);
    ck_assert_int_eq(cv->adaptive, 1);
    ck_assert(cv->fit[0].established);
    ck_assert_double_lt(fabs(cv->fit[0].p - 0.8), 1e-9);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    mbs_converge_print(cv, m);
    fclose(m);
    ck_assert_ptr_nonnull(strstr(buf, "tol-exponent q      0.80"));
    free(buf);
    mbs_converge_free(cv);
    /* no reference: self-convergence against tol 1e-3 / 10^4 */
    base.problem = "meter-probe-ref";
    ck_assert_int_eq(mbs_converge_run(&base, 1e-3, 4, 10.0, cv, err, sizeof err), MBS_OK);
    ck_assert_int_eq(cv->self_ref, 1);
    assert_rel(cv->x_ref, 1e-7, 1e-12, "x_ref");
    for (int i = 0; i < 4; i++) {
        double x = 1e-3 / pow(10.0, i);
        /* q_1 deviates by 2 x^0.8 at t_end, the next level by 2 (x/10)^0.8 */
        double xn = x / 10.0;
        assert_rel(cv->rec[i].err.q, 2.0 * (pow(x, 0.8) - pow(xn, 0.8)), 1e-9, "self err.q");
        assert_rel(cv->rec[i].err.lambda, pow(x, 0.8) - pow(xn, 0.8), 1e-9, "self err.lambda");
        ck_assert_str_eq(cv->rec[i].ref_kind, "next-level");
    }
    /* consecutive errors keep the ratio 10^0.8: the exponent is exact over all four
     * levels (against the finest level the last pair read 0.86) */
    ck_assert(cv->fit[0].established && cv->fit[0].first == 0 && cv->fit[0].last == 3);
    ck_assert_double_lt(fabs(cv->fit[0].p - 0.8), 1e-9);
    mbs_converge_free(cv);
    free(cv);
}
END_TEST

/* Global tolerance mode (harness/globaltol.c): levels at tol 10^-k until
 * est_k = max over q, v of |y_k - y_(k-1)| / (atol + tol |y_k|) <= 1.  An adaptive
 * script with errors c tol at t_end (q_1 by 2 c tol, v_0 by 3 c tol): c is set so
 * that est_1 = 1 -+ 1e-6, by bisection on the rule itself. */
static double est1_by_hand(double c)
{
    double x0 = 1e-3, x1 = 1e-4, tol = 1e-3;
    double q1 = -2.0 + 2.0 * c * x1, v0 = 1.0 + 3.0 * c * x1;
    return fmax(2.0 * c * (x0 - x1) / (tol + tol * fabs(q1)),
                3.0 * c * (x0 - x1) / (tol + tol * fabs(v0)));
}

START_TEST(global_tolerance_levels_boundary)
{
    double lo = 0.0, hi = 10.0;
    for (int it = 0; it < 200; it++) {
        double c = 0.5 * (lo + hi);
        if (est1_by_hand(c) < 1.0)
            lo = c;
        else
            hi = c;
    }
    for (int side = 0; side < 2; side++) {
        double c = lo * (side ? 1.0 + 1e-6 : 1.0 - 1e-6);
        probe_script sc = {conv_pts, 2, c, 1.0, 0.0};
        mbs_method_def def = probe_fixed;
        def.variant = &sc;
        def.flags = MBS_M_ADAPTIVE;
        mbs_run_spec spec = {.problem = "meter-probe", .method = "meter/probe", .h = NAN,
                             .tol = 1e-3, .t_end = NAN, .measure = 1, .method_def = &def,
                             .tol_mode = MBS_TOL_GLOBAL};
        mbs_record r;
        char err[256];
        ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
        ck_assert_int_eq(r.status, MBS_OK);
        ck_assert_int_eq(r.global_levels, side ? 3 : 2);
        ck_assert_double_eq_tol(r.global_tol_final, side ? 1e-5 : 1e-4, 1e-18);
        ck_assert_double_eq(r.tol, 1e-3);
        if (side) { /* est_2: the same rule one level down */
            double x1 = 1e-4, x2 = 1e-5, q1 = -2.0 + 2.0 * c * x2, v0 = 1.0 + 3.0 * c * x2;
            double est2 = fmax(2.0 * c * (x1 - x2) / (1e-3 + 1e-3 * fabs(q1)),
                               3.0 * c * (x1 - x2) / (1e-3 + 1e-3 * fabs(v0)));
            assert_rel(r.global_est, est2, 1e-6, "global est");
        } else {
            assert_rel(r.global_est, 1.0, 2e-6, "global est");
        }
        /* the record is the returned level's; the work is summed over all levels */
        ck_assert_double_eq_tol(r.err.q, 2.0 * c * (side ? 1e-5 : 1e-4), 1e-15);
        ck_assert_int_eq(r.cnt.steps, 2 * r.global_levels);
        ck_assert_int_eq(r.cnt.rejected, r.global_levels);
        ck_assert_int_eq(r.cnt.f_evals, 2 * probe_work[0] * r.global_levels);
        mbs_record_free(&r);
    }
    /* errors that stay far apart at every level: the target is not met */
    probe_script sc = {conv_pts, 2, 1e12, 1.0, 0.0};
    mbs_method_def def = probe_fixed;
    def.variant = &sc;
    def.flags = MBS_M_ADAPTIVE;
    mbs_run_spec spec = {.problem = "meter-probe", .method = "meter/probe", .h = NAN,
                         .tol = 1e-3, .t_end = NAN, .measure = 1, .method_def = &def,
                         .tol_mode = MBS_TOL_GLOBAL};
    mbs_record r;
    char err[256];
    ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
    ck_assert_int_eq(r.status, MBS_GLOBAL_TOL_NOT_MET);
    ck_assert_double_gt(r.global_est, 1.0);
    ck_assert_double_lt(r.global_tol_final, 1e-13);
    mbs_record_free(&r);
    /* at tol 0.5 the round-off floor (a next level below 1e-14) is not reached in the
     * 12 levels (the last at 0.5e-11): the level count ends the run, not met */
    spec.tol = 0.5;
    memset(&r, 0, sizeof r); /* (a run that returns no record leaves status ok) */
    ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
    ck_assert_int_eq(r.status, MBS_GLOBAL_TOL_NOT_MET);
    ck_assert_int_eq(r.global_levels, 12);
    assert_rel(r.global_tol_final, 0.5e-11, 1e-12, "the last level's tol");
    ck_assert_double_gt(r.global_est, 1.0);
    ck_assert_ptr_nonnull(strstr(r.reason, "levels down to tol 5e-12 still differ"));
    mbs_record_free(&r);
    /* the round-off floor decides below tol 1e-2: the last level is the first whose
     * next (a tenth of its tol) would fall below 1e-14: tol 9.999e-5 stops at its 10th
     * level (9.999e-14), tol 1.0001e-4 at its 11th (1.0001e-14); a next level of 1e-14
     * exactly is not below: tol 9.999999999999994e-5 (its 10th level at
     * 9.999999999999999e-14, a tenth of which rounds to 1e-14; found by search over
     * doubles near 1e-4) runs an 11th */
    const double tols[3] = {9.999e-5, 1.0001e-4, 9.999999999999994e-5};
    const double last[3] = {9.999e-14, 1.0001e-14, 1e-14};
    for (int side = 0; side < 3; side++) {
        spec.tol = tols[side];
        memset(&r, 0, sizeof r);
        ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
        ck_assert_int_eq(r.status, MBS_GLOBAL_TOL_NOT_MET);
        ck_assert_int_eq(r.global_levels, side ? 11 : 10);
        assert_rel(r.global_tol_final, last[side], 1e-12, "the last level's tol");
        mbs_record_free(&r);
    }
}
END_TEST

/* ---- compare: every tier at its boundary ------------------------------------------- */

/* A synthetic record; h > 0: fixed step, else tol = -h. */
static json_t *synth(const char *problem, double h, double err)
{
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:o,s:o,s:f,"
        "s:{s:f,s:f,s:f},s:{s:f,s:f,s:f},s:f,s:f,s:f,"
        "s:{s:f,s:f,s:f,s:f,s:f},s:f,s:f,s:f,"
        "s:{s:f,s:[f,f],s:[f],s:[f]}}",
        "problem_spec", problem, "method_spec", "m", "status", "ok", "h",
        h > 0 ? json_real(h) : json_null(), "tol", h > 0 ? json_null() : json_real(-h), "t_end",
        1.0, "err", "q", err, "v", 2.0 * err, "lambda", 3.0 * err, "err_max", "q", 4.0 * err, "v",
        5.0 * err, "lambda", 6.0 * err, "err_mixed_qv", 0.5 * err, "scd", -log10(err), "mescd",
        -log10(0.5 * err), "residual", "pos_max", 7.0 * err, "vel_max", 8.0 * err, "acc_max",
        9.0 * err, "pos_end", 1.5 * err, "vel_end", 2.5 * err, "energy_drift", 0.25 * err,
        "drift_exponent", 1.0, "drift_rms", 0.1, "final", "t", 1.0, "q", 0.0, 1.0, "v", 0.5,
        "lambda", 2.0);
    json_t *c = json_object();
    static const char *const names[] = {"steps",      "rejected",    "f_evals",
                                        "mass_evals", "g_evals",     "jac_evals",
                                        "gamma_evals", "factorizations", "solves",
                                        "newton_iters", "jacobians", "deriv_evals"};
    for (int i = 0; i < 12; i++)
        json_object_set_new(c, names[i], json_integer(100 + i));
    json_object_set_new(o, "counters", c);
    json_object_set_new(o, "traj",
                        json_pack("{s:i,s:s,s:s,s:{s:f,s:f,s:f},s:{s:f,s:f,s:f}}", "n", 101,
                                  "interp", "grid", "reference", "exact", "err_max", "q",
                                  10.0 * err, "v", 11.0 * err, "lambda", 12.0 * err, "err_rms",
                                  "q", 3.5 * err, "v", 4.5 * err, "lambda", 5.5 * err));
    json_object_set_new(o, "params",
                        json_pack("{s:{s:i,s:f},s:{s:s,s:f}}", "problem", "m", 1, "g", 9.81,
                                  "method", "linsol", "lu", "newton_tol", 1e-10));
    json_object_set_new(o, "linsol",
                        json_pack("{s:s,s:i,s:i,s:i}", "backend", "umfpack", "analyses", 112,
                                  "factorizations", 113, "solves", 114));
    return o;
}

static void synth_results(mbs_results *r, double h, double err)
{
    json_t *a = json_array();
    json_array_append_new(a, synth("p", h, err));
    ck_assert_int_eq(mbs_results_from_array(NULL, a, r), 0);
    json_decref(a);
}

static int cmp_quiet(const mbs_results *b, const mbs_results *n, mbs_compare_summary *s)
{
    FILE *sink = fopen("/dev/null", "w");
    int st = mbs_compare_results(b, n, NULL, sink, s);
    fclose(sink);
    return st;
}

/* The compare of rs[0] (baseline) with rs[1] (now) fails with exactly the three
 * order regressions (q, v, lambda) of one refinement series; frees both. */
static void expect_order_regressions(mbs_results rs[2])
{
    mbs_compare_summary s;
    ck_assert_int_eq(cmp_quiet(&rs[0], &rs[1], &s), 1);
    ck_assert_int_eq(s.regressions, 3);
    mbs_results_free(&rs[0]);
    mbs_results_free(&rs[1]);
}

/* set a number at "a", "a.b" or "a.b.c" */
static void jset(json_t *rec, const char *path, double x)
{
    char a[64];
    for (const char *dot; (dot = strchr(path, '.')) != NULL; path = dot + 1) {
        snprintf(a, sizeof a, "%.*s", (int)(dot - path), path);
        rec = json_object_get(rec, a);
    }
    json_object_set_new(rec, path, isnan(x) ? json_null() : json_real(x));
}

/* Every error-like measure a record carries is compared: a regression beyond
 * max(2x, tol, 1e-13), at the limit itself still none. */
static const char *const error_fields[] = {
    "err.q",           "err.v",           "err.lambda",       "err_max.q",
    "err_max.v",       "err_max.lambda",  "err_mixed_qv",     "residual.pos_max",
    "residual.vel_max", "residual.acc_max", "residual.pos_end", "residual.vel_end",
    "energy_drift",    "traj.err_max.q",  "traj.err_max.v",   "traj.err_max.lambda",
    "traj.err_rms.q",  "traj.err_rms.v",  "traj.err_rms.lambda"};

START_TEST(compare_error_tiers_boundary)
{
    mbs_compare_summary s;
    /* three bases: x = 1e-6 fixed step (limit 2x), tol 1e-3 (limit tol), x tiny
     * (limit 1e-13) */
    const double hs[3] = {0.01, -1e-3, 0.01}, es[3] = {1e-6, 1e-6, 1e-18};
    for (int b = 0; b < 3; b++)
        for (size_t k = 0; k < sizeof error_fields / sizeof *error_fields; k++) {
            mbs_results base, now;
            synth_results(&base, hs[b], es[b]);
            synth_results(&now, hs[b], es[b]);
            ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
            double x = mbs_jnum(base.recs[0], error_fields[k]);
            double lim = b == 0 ? 2.0 * x : b == 1 ? 1e-3 : 1e-13;
            jset(now.recs[0], error_fields[k], lim);
            ck_assert_msg(cmp_quiet(&base, &now, &s) == 0, "%s at its limit %g (base %d)",
                          error_fields[k], lim, b);
            jset(now.recs[0], error_fields[k], nextafter(lim, INFINITY));
            ck_assert_msg(cmp_quiet(&base, &now, &s) == 1 && s.regressions == 1,
                          "%s just beyond its limit %g (base %d): %d regressions",
                          error_fields[k], lim, b, s.regressions);
            jset(now.recs[0], error_fields[k], NAN);
            ck_assert_msg(cmp_quiet(&base, &now, &s) == 1, "%s NaN", error_fields[k]);
            /* not measured in the baseline: not compared */
            jset(base.recs[0], error_fields[k], NAN);
            jset(now.recs[0], error_fields[k], 1.0);
            ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
            mbs_results_free(&base);
            mbs_results_free(&now);
        }
}
END_TEST

/* Digits (scd, mescd) are errors 10^-digits: a loss of more than log10 2 digits
 * (an error grown beyond 2x), above the tolerance's digits, is a regression. */
START_TEST(compare_digit_tiers_boundary)
{
    mbs_compare_summary s;
    const char *const fields[2] = {"scd", "mescd"};
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 2; b++) {
            mbs_results base, now;
            synth_results(&base, b ? -1e-4 : 0.01, 1e-8);
            synth_results(&now, b ? -1e-4 : 0.01, 1e-8);
            double d = mbs_jnum(base.recs[0], fields[k]);
            /* fixed step: 2x, i.e. log10 2 digits; tol 1e-4: down to 4 digits */
            double lim = b ? 4.0 : d - log10(2.0);
            jset(now.recs[0], fields[k], lim + 1e-9);
            ck_assert_msg(cmp_quiet(&base, &now, &s) == 0, "%s just above %g", fields[k], lim);
            jset(now.recs[0], fields[k], lim - 1e-9);
            ck_assert_msg(cmp_quiet(&base, &now, &s) == 1 && s.regressions == 1,
                          "%s just below %g", fields[k], lim);
            jset(now.recs[0], fields[k], NAN);
            ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
            jset(now.recs[0], fields[k], d + 5.0); /* more digits: fine */
            ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
            mbs_results_free(&base);
            mbs_results_free(&now);
        }
    /* beyond 13 digits (errors below 1e-13) nothing is judged */
    mbs_results base, now;
    synth_results(&base, 0.01, 1e-16);
    synth_results(&now, 0.01, 1e-16);
    jset(now.recs[0], "scd", 13.0 + 1e-9);
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
    jset(now.recs[0], "scd", 13.0 - 1e-9);
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    mbs_results_free(&base);
    mbs_results_free(&now);
}
END_TEST

/* Counters exact (each of the twelve and the backend's three); the final state
 * to 1e-8 (1 + |y|). */
START_TEST(compare_counters_and_state_boundary)
{
    static const char *const names[] = {"steps",      "rejected",    "f_evals",
                                        "mass_evals", "g_evals",     "jac_evals",
                                        "gamma_evals", "factorizations", "solves",
                                        "newton_iters", "jacobians", "deriv_evals",
                                        "analyses",   "factorizations", "solves"};
    mbs_compare_summary s;
    for (int k = 0; k < 15; k++)
        for (int dir = -1; dir <= 1; dir += 2) {
            mbs_results base, now;
            synth_results(&base, 0.01, 1e-6);
            synth_results(&now, 0.01, 1e-6);
            json_t *c = json_object_get(now.recs[0], k < 12 ? "counters" : "linsol");
            json_object_set_new(c, names[k], json_integer(100 + k + dir));
            ck_assert_msg(cmp_quiet(&base, &now, &s) == 1 && s.counter_changes == 1, "%s %+d",
                          names[k], dir);
            FILE *sink = fopen("/dev/null", "w");
            mbs_compare_opts opt = {.allow_counters = 1};
            ck_assert_int_eq(mbs_compare_results(&base, &now, &opt, sink, &s), 0);
            ck_assert_int_eq(s.counter_changes, 1);
            fclose(sink);
            mbs_results_free(&base);
            mbs_results_free(&now);
        }
    /* final state: q[0] = 0 in the baseline, so the bound is 1e-8 itself; q[1] = 1:
     * 2e-8 */
    for (int comp = 0; comp < 2; comp++)
        for (int side = 0; side < 2; side++) {
            mbs_results base, now;
            synth_results(&base, 0.01, 1e-6);
            synth_results(&now, 0.01, 1e-6);
            json_t *q = json_object_get(json_object_get(now.recs[0], "final"), "q");
            double y = comp == 0 ? (side ? nextafter(1e-8, 1.0) : 1e-8)
                                 : (side ? 1.0 - 2.0 * 1.0000001e-8 : 1.0 - 2.0 * 0.9999999e-8);
            json_array_set_new(q, (size_t)comp, json_real(y));
            ck_assert_msg(cmp_quiet(&base, &now, &s) == side, "final q[%d] side %d", comp, side);
            mbs_results_free(&base);
            mbs_results_free(&now);
        }
    /* a final state of another size, or a missing one, is a change */
    mbs_results base, now;
    synth_results(&base, 0.01, 1e-6);
    synth_results(&now, 0.01, 1e-6);
    json_array_append_new(json_object_get(json_object_get(now.recs[0], "final"), "v"),
                          json_real(0.0));
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    json_object_set_new(now.recs[0], "final", json_null());
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    mbs_results_free(&now);
    /* status: newly failing, still failing, fixed; a missing run */
    synth_results(&now, 0.01, 1e-6);
    json_object_set_new(now.recs[0], "status", json_string("nan_state"));
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    ck_assert_int_eq(cmp_quiet(&now, &now, &s), 0);
    ck_assert_int_eq(cmp_quiet(&now, &base, &s), 0);
    ck_assert_int_eq(s.fixed, 1);
    mbs_results_free(&now);
    synth_results(&now, 0.02, 1e-6); /* another h: the baseline's run is missing */
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    ck_assert_int_eq(s.missing, 1);
    ck_assert_int_eq(s.new_runs, 1);
    mbs_results_free(&now);
    mbs_results_free(&base);
}
END_TEST

/* The identity tier: a run whose resolved parameters differ from the baseline's
 * run (a changed default, a parameter named wrongly in the record) is a
 * regression, one row per parameter; a baseline without parameters is not
 * judged on them. */
START_TEST(compare_params_identity)
{
    mbs_compare_summary s;
    mbs_results base, now;
    synth_results(&base, 0.01, 1e-6);
    synth_results(&now, 0.01, 1e-6);
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
    ck_assert_int_eq(s.regressions, 0);
    json_t *pm = json_object_get(json_object_get(now.recs[0], "params"), "method");
    json_t *pp = json_object_get(json_object_get(now.recs[0], "params"), "problem");
    /* a text value: "lu" -> "l" (a record writer that cut the name) */
    json_object_set_new(pm, "linsol", json_string("l"));
    FILE *f = tmpfile();
    ck_assert_int_eq(mbs_compare_results(&base, &now, NULL, f, &s), 1);
    ck_assert_int_eq(s.regressions, 1);
    char buf[4096] = "";
    rewind(f);
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = 0;
    fclose(f);
    ck_assert_msg(strstr(buf, "params.method.linsol") && strstr(buf, "\"lu\"") &&
                      strstr(buf, "\"l\"") && strstr(buf, "REGRESSION (parameters)"),
                  "%s", buf);
    json_object_set_new(pm, "linsol", json_string("lu"));
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
    /* a real value one ulp away */
    json_object_set_new(pp, "g", json_real(nextafter(9.81, 10.0)));
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    json_object_set_new(pp, "g", json_real(9.81));
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
    /* a parameter the baseline's run did not have, and one it had */
    json_object_set_new(pm, "warm", json_integer(0));
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    json_object_del(pm, "warm");
    json_object_del(pm, "newton_tol");
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    /* a baseline written before records had parameters */
    json_object_del(base.recs[0], "params");
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
    mbs_results_free(&now);
    mbs_results_free(&base);
}
END_TEST

/* The drift exponent may neither rise nor fall by more than 0.3; both max |g|
 * at round-off (<= 1e-12) carry no exponent. */
START_TEST(compare_drift_exponent_both_directions)
{
    mbs_compare_summary s;
    for (int dir = -1; dir <= 1; dir += 2)
        for (int side = 0; side < 2; side++) {
            mbs_results base, now;
            synth_results(&base, 0.01, 1e-6);
            synth_results(&now, 0.01, 1e-6);
            double lim = 1.0 + dir * 0.3;
            jset(now.recs[0], "drift_exponent", side ? nextafter(lim, dir * INFINITY) : lim);
            ck_assert_msg(cmp_quiet(&base, &now, &s) == side, "drift %+d side %d", dir, side);
            if (side) {
                /* round-off residuals in both runs: not judged; one above: judged */
                jset(base.recs[0], "residual.pos_max", 1e-12);
                jset(now.recs[0], "residual.pos_max", 1e-12);
                ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
                jset(now.recs[0], "residual.pos_max", nextafter(1e-12, 1.0));
                ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
                ck_assert_int_eq(s.regressions, 1);
            }
            mbs_results_free(&base);
            mbs_results_free(&now);
        }
    mbs_results base, now;
    synth_results(&base, 0.01, 1e-6);
    synth_results(&now, 0.01, 1e-6);
    jset(now.recs[0], "drift_exponent", NAN);
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    mbs_results_free(&base);
    mbs_results_free(&now);
}
END_TEST

/* Orders over a series of h levels: a drop of more than 0.3 (just inside, just
 * outside), and an order no longer established, are regressions. */
static void series(mbs_results *r, double p, double scale)
{
    json_t *a = json_array();
    const double hs[4] = {0.04, 0.02, 0.01, 0.005};
    for (int i = 0; i < 4; i++) {
        double e = scale * pow(hs[i], p);
        json_t *o = synth("s", hs[i], e);
        json_object_set_new(o, "run", json_integer(i));
        json_array_append_new(a, o);
    }
    ck_assert_int_eq(mbs_results_from_array(NULL, a, r), 0);
    json_decref(a);
}

START_TEST(compare_orders_boundary)
{
    mbs_compare_summary s;
    for (int side = 0; side < 2; side++) {
        mbs_results base, now;
        series(&base, 2.0, 1.0);
        /* now's errors at most 1.0x the baseline's at the smallest h (no error
         * regression) with order 2 - 0.3 -+ 1e-6 */
        double p = 2.0 - 0.3 + (side ? -1e-6 : 1e-6);
        series(&now, p, pow(0.005, 2.0 - p));
        ck_assert_msg(cmp_quiet(&base, &now, &s) == side, "order %.7f", p);
        ck_assert_int_eq(s.regressions, 3 * side); /* q, v and lambda */
        mbs_results_free(&base);
        mbs_results_free(&now);
    }
    /* not established any more: the errors zig-zag by 10x */
    mbs_results base, now;
    series(&base, 2.0, 1.0);
    series(&now, 2.0, 1.0);
    jset(now.recs[1], "err.v", 1e-12);
    jset(now.recs[3], "err.v", 1e-12 * 0.9);
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    mbs_results_free(&base);
    mbs_results_free(&now);
}
END_TEST

/* The orders of every refinement series of the baseline are compared, up to the
 * 256 series the compare keeps (harness/regress.c): with 255 series of one
 * level before it (no order to compare), an order drop of 0.5 in the 256th
 * series is still a regression of its q, v and lambda orders. */
START_TEST(compare_orders_256th_series)
{
    mbs_results rs[2];
    for (int k = 0; k < 2; k++) {
        json_t *a = json_array();
        char name[16];
        for (int i = 0; i < 255; i++) {
            snprintf(name, sizeof name, "one%03d", i);
            json_t *o = synth(name, 0.01, 1e-4);
            json_object_set_new(o, "run", json_integer(i));
            json_array_append_new(a, o);
        }
        /* order 2 in the baseline, 1.5 now, the same error at the finest h */
        const double hs[4] = {0.04, 0.02, 0.01, 0.005}, p = k ? 1.5 : 2.0;
        for (int i = 0; i < 4; i++) {
            json_t *o = synth("last", hs[i], pow(0.005, 2.0 - p) * pow(hs[i], p));
            json_object_set_new(o, "run", json_integer(255 + i));
            json_array_append_new(a, o);
        }
        ck_assert_int_eq(mbs_results_from_array(NULL, a, &rs[k]), 0);
        json_decref(a);
    }
    expect_order_regressions(rs);
}
END_TEST

/* Two series whose keys ("problem method t_end=...") differ first in their 255th
 * character are two series: the order drop of the second is a regression of its
 * q, v and lambda orders. */
START_TEST(compare_orders_long_series_keys)
{
    char pa[256], pb[256];
    memset(pa, 'p', 254);
    memcpy(pb, pa, 254);
    pa[254] = 'a';
    pb[254] = 'b';
    pa[255] = pb[255] = 0;
    mbs_results rs[2];
    const double hs[4] = {0.04, 0.02, 0.01, 0.005};
    for (int k = 0; k < 2; k++) {
        json_t *a = json_array();
        for (int i = 0; i < 8; i++) {
            double p = k && i >= 4 ? 1.5 : 2.0; /* now: order 1.5 in the second series */
            json_t *o = synth(i < 4 ? pa : pb, hs[i % 4], pow(0.005, 2.0 - p) * pow(hs[i % 4], p));
            json_object_set_new(o, "run", json_integer(i));
            json_array_append_new(a, o);
        }
        ck_assert_int_eq(mbs_results_from_array(NULL, a, &rs[k]), 0);
        json_decref(a);
    }
    char key[1200];
    mbs_rec_series_key(rs[0].recs[4], key, sizeof key);
    ck_assert_uint_eq(strlen(key), 255 + strlen(" m t_end=1"));
    expect_order_regressions(rs);
}
END_TEST

/* A baseline run that is missing now is MISSING, whatever the memory past the
 * now results' last record holds: here the missing run itself sits one slot past
 * the end of the array (results of two records with n = 1), and is not found. */
START_TEST(compare_missing_run_reads_only_the_records)
{
    mbs_results base, now;
    json_t *a = json_array();
    for (int i = 0; i < 2; i++) {
        json_t *o = synth("p", 0.01 * (i + 1), 1e-6);
        json_object_set_new(o, "run", json_integer(i));
        json_array_append(a, o);
        json_decref(o);
    }
    ck_assert_int_eq(mbs_results_from_array(NULL, a, &base), 0);
    ck_assert_int_eq(mbs_results_from_array(NULL, a, &now), 0);
    json_decref(a);
    ck_assert_uint_eq(now.n, 2);
    mbs_compare_summary s;
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 0);
    now.n = 1; /* the run of h = 0.02 left past the end */
    ck_assert_int_eq(cmp_quiet(&base, &now, &s), 1);
    ck_assert_int_eq(s.missing, 1);
    now.n = 2;
    mbs_results_free(&base);
    mbs_results_free(&now);
}
END_TEST

/* The order of a series over the records is fitted in the order of h, whatever
 * the order of the runs: with a round-off plateau at the finest h the window
 * leaves it out only when the levels are sorted; levels of another series or
 * duplicated h do not count. */
START_TEST(results_order_sorts_levels)
{
    const double hs[6] = {0.01, 0.04, 0.0025, 0.02, 0.005, 0.04};
    json_t *a = json_array();
    for (int i = 0; i < 6; i++) {
        double e = hs[i] == 0.0025 ? 3e-5 : hs[i] * hs[i];
        json_t *o = synth(i == 5 ? "other" : "s", hs[i], e);
        json_object_set_new(o, "run", json_integer(i));
        json_array_append_new(a, o);
    }
    json_t *dup = synth("s", 0.04, 1.0); /* the same h again: the first one counts */
    json_array_append_new(a, dup);
    mbs_results r;
    ck_assert_int_eq(mbs_results_from_array(NULL, a, &r), 0);
    json_decref(a);
    mbs_order_fit f;
    size_t nl;
    ck_assert_int_eq(mbs_results_order(&r, r.recs[0], "q", &f, &nl), 0);
    ck_assert_uint_eq(nl, 5);
    ck_assert(f.established);
    ck_assert_double_lt(fabs(f.p - 2.0), 1e-9);
    ck_assert_uint_eq(f.first, 0); /* h = 0.04 .. 0.005; 0.0025 (plateau) left out */
    ck_assert_uint_eq(f.last, 3);
    ck_assert_int_eq(mbs_results_order(&r, r.recs[5], "q", &f, &nl), -1); /* one level */
    ck_assert_uint_eq(nl, 1);
    mbs_results_free(&r);
}
END_TEST

/* CPU: with 7 repeats each (exact Mann-Whitney), 1.25x slower is the bound of
 * both the median and the minimum; the test's alpha 0.01 sits between the exact
 * p-values 0.00874 (U = 43 of 49) and 0.0131 (U = 42); runs with a baseline
 * median below 5 ms are not timed; hard on the same environment, advisory on
 * another; times normalised by the calibration loops. */
static void set_times(json_t *rec, const double *t, int n, double median)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_real(t[i]));
    json_t *cpu = json_pack("{s:f,s:o}", "median", median, "times", a);
    json_object_set_new(rec, "cpu", cpu);
}

static int cpu_case_alpha(const double *tb, const double *tn, int n, double median,
                          int same_env, double cal_b, double cal_n, double alpha,
                          mbs_compare_summary *s)
{
    mbs_results base, now;
    synth_results(&base, 0.01, 1e-6);
    synth_results(&now, 0.01, 1e-6);
    set_times(base.recs[0], tb, n, median);
    set_times(now.recs[0], tn, n, median);
    base.meta = json_pack("{s:s,s:s,s:s,s:i}", "cpu", "A", "compiler", "cc", "cflags", "-O2",
                          "cores", 2);
    now.meta = json_deep_copy(base.meta);
    if (!same_env)
        json_object_set_new(now.meta, "cores", json_integer(4));
    if (cal_b > 0.0) {
        json_object_set_new(base.meta, "calibration_s", json_real(cal_b));
        json_object_set_new(now.meta, "calibration_s", json_real(cal_n));
    }
    FILE *sink = fopen("/dev/null", "w");
    mbs_compare_opts opt = {.alpha = alpha};
    int st = mbs_compare_results(&base, &now, &opt, sink, s);
    fclose(sink);
    mbs_results_free(&base);
    mbs_results_free(&now);
    return st;
}

static int cpu_case(const double *tb, const double *tn, int n, double median, int same_env,
                    double cal_b, double cal_n, mbs_compare_summary *s)
{
    return cpu_case_alpha(tb, tn, n, median, same_env, cal_b, cal_n, 0.0, s);
}

START_TEST(compare_cpu_boundary)
{
    mbs_compare_summary s;
    double tb[7], tn[7];
    for (int i = 0; i < 7; i++)
        tb[i] = 0.010 + 1e-4 * i; /* median 0.0103, min 0.010 */
    /* 1.25x exactly: not slower; 1.25 (1 + 1e-9): a regression (p = 1/3432) */
    for (int side = 0; side < 2; side++) {
        double f = side ? 1.25 * (1.0 + 1e-9) : 1.25;
        for (int i = 0; i < 7; i++)
            tn[i] = f * tb[i];
        ck_assert_msg(cpu_case(tb, tn, 7, 0.0103, 1, 0, 0, &s) == side, "factor side %d", side);
        /* on another environment: never a regression, advisory when slower */
        ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 0, 0, 0, &s), 0);
        ck_assert_int_eq(s.cpu_advisory, side);
    }
    /* the median exactly 1.25x with every time (the minimum too) slower: not slower;
     * one ulp above: a regression */
    for (int side = 0; side < 2; side++) {
        double tm = side ? nextafter(1.25 * tb[3], 1.0) : 1.25 * tb[3];
        const double t7[7] = {0.0128, 0.01282, 0.01284, tm, 0.0129, 0.0130, 0.0131};
        ck_assert_msg(cpu_case(tb, t7, 7, 0.0103, 1, 0, 0, &s) == side, "median side %d", side);
    }
    /* the minimum must be slower too: the median 1.5x, the minimum as before */
    for (int i = 0; i < 7; i++)
        tn[i] = 1.5 * tb[i];
    tn[0] = tb[0] * 1.25;
    ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 1, 0, 0, &s), 0);
    tn[0] = nextafter(tb[0] * 1.25, 1.0);
    ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 1, 0, 0, &s), 1);
    /* significance: a baseline with one slow outlier (30 ms); now 15.0..15.6 ms
     * exceeds 6 of 7 everywhere: U = 42, p = 0.0131; one now above 30 ms: U = 43,
     * p = 0.00874 */
    const double tb2[7] = {0.010, 0.0101, 0.0102, 0.0103, 0.0104, 0.0105, 0.030};
    double tn2[7] = {0.0150, 0.0151, 0.0152, 0.0153, 0.0154, 0.0155, 0.0156};
    ck_assert_int_eq(cpu_case(tb2, tn2, 7, 0.0103, 1, 0, 0, &s), 0);
    tn2[6] = 0.031;
    ck_assert_int_eq(cpu_case(tb2, tn2, 7, 0.0103, 1, 0, 0, &s), 1);
    /* the exact p-values themselves */
    ck_assert_double_eq_tol(mbs_mann_whitney_p(tb2, 7, tn2, 7), 30.0 / 3432.0, 1e-12);
    tn2[6] = 0.0156;
    ck_assert_double_eq_tol(mbs_mann_whitney_p(tb2, 7, tn2, 7), 45.0 / 3432.0, 1e-12);
    /* runs below 5 ms (baseline median) are not timed: 5 ms itself is */
    for (int i = 0; i < 7; i++)
        tn[i] = 2.0 * tb[i];
    ck_assert_int_eq(cpu_case(tb, tn, 7, 5e-3, 1, 0, 0, &s), 1);
    ck_assert_int_eq(cpu_case(tb, tn, 7, nextafter(5e-3, 0.0), 1, 0, 0, &s), 0);
    /* fewer than 3 repeats: not judged */
    ck_assert_int_eq(cpu_case(tb, tn, 2, 0.0103, 1, 0, 0, &s), 0);
    ck_assert_int_eq(cpu_case(tb, tn, 3, 0.0103, 1, 0, 0, &s), 0); /* p = 0.05 */
    /* significant means p < alpha: 3 + 3 separated gives p = 1/20 exactly */
    ck_assert_int_eq(cpu_case_alpha(tb, tn, 3, 0.0103, 1, 0, 0, 0.05, &s), 0);
    ck_assert_int_eq(cpu_case_alpha(tb, tn, 3, 0.0103, 1, 0, 0, nextafter(0.05, 1.0), &s), 1);
    /* calibration: the new machine's loop took 2x: its 2x times are no slow-down;
     * the other way round the same times are */
    ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 1, 1.0, 2.0, &s), 0);
    ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 1, 2.0, 1.0, &s), 1);
    /* every repeat is normalised, the first too: 1.2x on a machine whose loop took 0.8x
     * is 1.5x (slower), its minimum as much as its median */
    for (int i = 0; i < 7; i++)
        tn[i] = 1.2 * tb[i];
    ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 1, 1.0, 0.8, &s), 1);
    ck_assert_int_eq(cpu_case(tb, tn, 7, 0.0103, 1, 1.0, 1.0, &s), 0);
}
END_TEST

/* A record keeps at most 64 CPU times (MBS_CPU_TIMES_MAX): 64 in the baseline and
 * in the results are compared (all equal: no regression); 65 on either side are
 * refused, exit status 2 and one line naming the record and the count. */
START_TEST(compare_cpu_times_bound)
{
    double t[65];
    for (int i = 0; i < 65; i++)
        t[i] = 0.010 + 1e-5 * i;
    char *dir = mbs_test_tmpdir(), path[1024];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    for (int side = 0; side < 3; side++) { /* 64 both; 65 in the baseline; 65 now */
        mbs_results base, now;
        mbs_compare_summary s;
        synth_results(&base, 0.01, 1e-6);
        synth_results(&now, 0.01, 1e-6);
        set_times(base.recs[0], t, side == 1 ? 65 : 64, 0.0103);
        set_times(now.recs[0], t, side == 2 ? 65 : 64, 0.0103);
        char key[1200];
        mbs_rec_key(base.recs[0], key, sizeof key);
        FILE *sink = fopen("/dev/null", "w");
        fflush(stderr);
        int saved = dup(2);
        ck_assert_ptr_nonnull(freopen(path, "w", stderr));
        int st = mbs_compare_results(&base, &now, NULL, sink, &s);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        fclose(sink);
        char *err = mbs_read_file(path, NULL), want[1400];
        ck_assert_ptr_nonnull(err);
        snprintf(want, sizeof want,
                 "mbsbench: compare: refusing: the %s record %s holds 65 CPU times, a record "
                 "keeps at most 64\n",
                 side == 1 ? "baseline" : "results", key);
        ck_assert_msg(st == (side ? 2 : 0), "side %d: compare returned %d", side, st);
        ck_assert_str_eq(err, side ? want : "");
        ck_assert_int_eq(s.regressions, 0);
        free(err);
        mbs_results_free(&base);
        mbs_results_free(&now);
    }
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* A sweep started on a busy machine (1-minute load average above half the cores)
 * times contention: its CPU tier is advisory, the baseline's as the new one's. */
static int cpu_load_case_cores(double load_base, double load_now, int cores,
                               mbs_compare_summary *s)
{
    double tb[7], tn[7];
    for (int i = 0; i < 7; i++) {
        tb[i] = 0.010 + 1e-4 * i;
        tn[i] = 2.0 * tb[i];
    }
    mbs_results base, now;
    synth_results(&base, 0.01, 1e-6);
    synth_results(&now, 0.01, 1e-6);
    set_times(base.recs[0], tb, 7, 0.0103);
    set_times(now.recs[0], tn, 7, 0.0103);
    base.meta = json_pack("{s:s,s:s,s:s,s:i}", "cpu", "A", "compiler", "cc", "cflags", "-O2",
                          "cores", cores);
    now.meta = json_deep_copy(base.meta);
    if (load_base >= 0.0)
        json_object_set_new(base.meta, "load_average", json_real(load_base));
    if (load_now >= 0.0)
        json_object_set_new(now.meta, "load_average", json_real(load_now));
    FILE *sink = fopen("/dev/null", "w");
    int st = mbs_compare_results(&base, &now, NULL, sink, s);
    fclose(sink);
    mbs_results_free(&base);
    mbs_results_free(&now);
    return st;
}

static int cpu_load_case(double load_base, double load_now, mbs_compare_summary *s)
{
    return cpu_load_case_cores(load_base, load_now, 2, s);
}

START_TEST(compare_cpu_busy_machine)
{
    mbs_compare_summary s;
    /* 2 cores: a load average of 1.0 is quiet enough, one ulp more is busy */
    ck_assert_int_eq(cpu_load_case(1.0, 1.0, &s), 1);
    ck_assert_int_eq(s.cpu_advisory, 0);
    ck_assert_int_eq(cpu_load_case(1.0, nextafter(1.0, 2.0), &s), 0);
    ck_assert_int_eq(s.cpu_advisory, 1);
    ck_assert_int_eq(cpu_load_case(nextafter(1.0, 2.0), 0.0, &s), 0);
    ck_assert_int_eq(s.cpu_advisory, 1);
    /* unknown load (older results, no /proc): judged as before */
    ck_assert_int_eq(cpu_load_case(-1.0, -1.0, &s), 1);
    ck_assert_int_eq(cpu_load_case(-1.0, 13.6, &s), 0);
    /* no core count (0 in both metas): no load is judged busy, even the smallest */
    ck_assert_int_eq(cpu_load_case_cores(1e-3, 1e-3, 0, &s), 1);
    ck_assert_int_eq(s.cpu_advisory, 0);
    ck_assert_int_eq(cpu_load_case_cores(1e-3, 1e-3, 1, &s), 1);
    ck_assert_int_eq(cpu_load_case_cores(1e-3, 0.5 + 1e-9, 1, &s), 0);
}
END_TEST

/* A second sweep confirms a CPU slow-down: the run is a regression only when the
 * second sweep's run is slower by the same test (its own calibration loop applied);
 * otherwise it is counted as unconfirmed and the compare passes.  again_has_run: 0
 * the run is absent from the second sweep, 1 present with 7 times, above 1 present
 * with that many times, -1 present with 7 times and failed; cal_again <= 0: the
 * second sweep has no calibration loop. */
static int cpu_confirm_case_text(double f_now, double f_again, int again_has_run,
                                 double cal_again, mbs_compare_summary *s, char **text)
{
    double tb[7], tn[7], ta[65];
    for (int i = 0; i < 65; i++) {
        if (i < 7) {
            tb[i] = 0.010 + 1e-4 * i;
            tn[i] = f_now * tb[i];
        }
        ta[i] = f_again * (0.010 + 1e-4 * (i % 7));
    }
    mbs_results base, now, again;
    synth_results(&base, 0.01, 1e-6);
    synth_results(&now, 0.01, 1e-6);
    synth_results(&again, 0.01, 1e-6);
    set_times(base.recs[0], tb, 7, 0.0103);
    set_times(now.recs[0], tn, 7, 0.0103);
    set_times(again.recs[0], ta, again_has_run > 1 ? again_has_run : 7, 0.0103);
    if (!again_has_run)
        json_object_set_new(again.recs[0], "method_spec", json_string("other"));
    if (again_has_run < 0)
        json_object_set_new(again.recs[0], "status", json_string("failed"));
    base.meta = json_pack("{s:s,s:s,s:s,s:i,s:f}", "cpu", "A", "compiler", "cc", "cflags",
                          "-O2", "cores", 2, "calibration_s", 1.0);
    now.meta = json_deep_copy(base.meta);
    again.meta = json_deep_copy(base.meta);
    if (cal_again > 0.0)
        json_object_set_new(again.meta, "calibration_s", json_real(cal_again));
    else /* no calibration loop in the second sweep: its times are taken as they are */
        json_object_del(again.meta, "calibration_s");
    size_t len = 0;
    FILE *sink = text ? open_memstream(text, &len) : fopen("/dev/null", "w");
    mbs_compare_opts opt = {.confirm = &again, .allow_counters = 1};
    int st = mbs_compare_results(&base, &now, &opt, sink, s);
    fclose(sink);
    mbs_results_free(&base);
    mbs_results_free(&now);
    mbs_results_free(&again);
    return st;
}

static int cpu_confirm_case(double f_now, double f_again, int again_has_run, double cal_again,
                            mbs_compare_summary *s)
{
    return cpu_confirm_case_text(f_now, f_again, again_has_run, cal_again, s, NULL);
}

START_TEST(compare_cpu_confirmed_by_second_sweep)
{
    mbs_compare_summary s;
    /* slower in both sweeps: a regression */
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.5, 1, 1.0, &s), 1);
    ck_assert_int_eq(s.regressions, 1);
    ck_assert_int_eq(s.cpu_unconfirmed, 0);
    /* the second sweep as fast as the baseline: not a regression, counted unconfirmed */
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.0, 1, 1.0, &s), 0);
    ck_assert_int_eq(s.regressions, 0);
    ck_assert_int_eq(s.cpu_unconfirmed, 1);
    /* the second sweep's bound is the same 1.25x: exactly 1.25x does not confirm, one
     * part in 1e9 more does */
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.25, 1, 1.0, &s), 0);
    ck_assert_int_eq(s.cpu_unconfirmed, 1);
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.25 * (1.0 + 1e-9), 1, 1.0, &s), 1);
    /* the second sweep's times are normalised by its own calibration loop: 1.5x on a
     * machine state whose loop took 1.5x is no slow-down */
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.5, 1, 1.5, &s), 0);
    ck_assert_int_eq(s.cpu_unconfirmed, 1);
    /* without a calibration loop in the second sweep its times are compared as they
     * are: exactly 1.25x does not confirm, one part in 1e9 more does */
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.25, 1, -1.0, &s), 0);
    ck_assert_int_eq(s.cpu_unconfirmed, 1);
    ck_assert_int_eq(cpu_confirm_case(1.5, 1.25 * (1.0 + 1e-9), 1, -1.0, &s), 1);
    ck_assert_int_eq(s.regressions, 1);
    /* a run absent from the second sweep confirms nothing, nor one timed there fewer
     * than 3 times, nor one that failed there; the row says which */
    const int has[3] = {0, 2, -1};
    const char *why[3] = {"not confirmed (run absent from the second sweep)",
                          "not confirmed (run not timed in the second sweep: fewer than 3 "
                          "repeats)",
                          "not confirmed (run failed in the second sweep)"};
    for (int k = 0; k < 3; k++) {
        char *text = NULL;
        ck_assert_int_eq(cpu_confirm_case_text(1.5, 1.5, has[k], 1.0, &s, &text), 0);
        ck_assert_int_eq(s.cpu_unconfirmed, 1);
        ck_assert_int_eq(s.regressions, 0);
        ck_assert_msg(strstr(text, why[k]) != NULL, "no '%s' in\n%s", why[k], text);
        free(text);
    }
    /* a second sweep holding more CPU times than a record keeps is refused like the
     * baseline and the results (exit status 2) */
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2); /* the refusal's line is the compare's own business here */
    int st = cpu_confirm_case(1.5, 1.5, 65, 1.0, &s);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
    ck_assert_int_eq(st, 2);
    /* a run that is not slower in the first sweep is not judged by the second */
    ck_assert_int_eq(cpu_confirm_case(1.0, 3.0, 1, 1.0, &s), 0);
    ck_assert_int_eq(s.cpu_unconfirmed, 0);
    ck_assert_int_eq(s.regressions, 0);
}
END_TEST

/* The Mann-Whitney normal approximation (more than 12 repeats) against the
 * exact distribution's normal limit computed here: 20 + 20, no ties. */
START_TEST(mann_whitney_normal_by_hand)
{
    double a[20], b[20];
    for (int i = 0; i < 20; i++) {
        a[i] = i;
        b[i] = i + 9.5; /* b_j exceeds 20 - ... a's: U = sum over j of min(20, j + 10) */
    }
    double u = 0.0;
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 20; j++)
            u += a[i] < b[j];
    /* mean 200, variance 20 * 20 * 41 / 12, continuity correction 0.5 */
    double z = (u - 200.0 - 0.5) / sqrt(400.0 * 41.0 / 12.0);
    ck_assert_double_eq_tol(mbs_mann_whitney_p(a, 20, b, 20), 0.5 * erfc(z / sqrt(2.0)), 1e-12);
    /* ties: all equal, U = 200, tie term 40^3 - 40: variance 0, no evidence (p = 1) */
    for (int i = 0; i < 20; i++)
        a[i] = b[i] = 1.0;
    double var = 400.0 / 12.0 * (41.0 - (64000.0 - 40.0) / (40.0 * 39.0));
    ck_assert_double_eq(var, 0.0);
    ck_assert_double_eq(mbs_mann_whitney_p(a, 20, b, 20), 1.0);
    /* 13 + 13 (just beyond the exact table): one tie */
    for (int i = 0; i < 13; i++) {
        a[i] = i;
        b[i] = i + 6.0;
    }
    u = 0.0;
    for (int i = 0; i < 13; i++)
        for (int j = 0; j < 13; j++)
            u += a[i] < b[j] ? 1.0 : a[i] == b[j] ? 0.5 : 0.0;
    double ties = 7.0 * (8.0 - 2.0); /* 7 values shared: 7 ties of 2 */
    var = 169.0 / 12.0 * (27.0 - ties / (26.0 * 25.0));
    z = (u - 84.5 - 0.5) / sqrt(var);
    ck_assert_double_eq_tol(mbs_mann_whitney_p(a, 13, b, 13), 0.5 * erfc(z / sqrt(2.0)), 1e-12);
}
END_TEST

/* ---- reproductions: every verdict at its boundary ----------------------------------- */

/* A results directory of synthetic records (err.q given) and an .expect with one
 * quantity; returns mbs_reproduce_check's exit status. */
static int repro_case(const double *errs, const double *tols, int n, const char *qtext)
{
    char *dir = mbs_test_tmpdir(), path[1024], rd[512];
    snprintf(rd, sizeof rd, "%s/r", dir);
    ck_assert_int_eq(mbs_mkdir_p(rd), 0);
    snprintf(path, sizeof path, "%s/runs.jsonl", rd);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++) {
        char e[64] = "null";
        if (!isnan(errs[i]))
            snprintf(e, sizeof e, "%.17g", errs[i]);
        fprintf(f,
                "{\"run\":%d,\"problem_spec\":\"meter-probe\",\"method_spec\":\"%s\","
                "\"status\":\"ok\",\"h\":null,\"tol\":%.17g,\"t_end\":1,"
                "\"err\":{\"q\":%s}}\n",
                i, i % 2 ? "meter/b" : "meter/a", tols[i], e);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/x.expect", dir);
    char text[2048];
    snprintf(text, sizeof text,
             "[reproduction]\ntitle = t\ncitation = c\nsuite = s\n[quantity a]\n"
             "field = err.q\nread = by hand\n%s\n",
             qtext);
    mbs_test_write_text(path, text);
    FILE *sink = fopen("/dev/null", "w");
    int st = mbs_reproduce_check(path, rd, sink);
    fclose(sink);
    mbs_test_remove_tree(dir);
    free(dir);
    return st;
}

/* The expectation file's own bounds (harness/reproduce.c): a quantity name of 39
 * characters loads, one of 40 is refused (inih keeps 49 characters of a section
 * name, "quantity " and 40 could hide a longer name cut); rtol = 0 alone and
 * atol = 0 alone are given tolerances (exact agreement) and load, and rtol = 0
 * judges at the last bit: the published value itself reproduces, the next double
 * does not. */
static int load_quantity(const char *name, const char *tol, char *err, size_t errlen)
{
    char *dir = mbs_test_tmpdir(), path[1024], text[1024];
    snprintf(path, sizeof path, "%s/x.expect", dir);
    snprintf(text, sizeof text,
             "[reproduction]\ntitle = t\ncitation = c\nsuite = s\n[quantity %s]\n"
             "run = meter-probe meter/a tol=1e-6\nfield = err.q\nread = by hand\n"
             "published = 2\n%s\n",
             name, tol);
    mbs_test_write_text(path, text);
    expect *e = malloc(sizeof *e);
    ck_assert_ptr_nonnull(e);
    int st = mbs_repro_load_expect(path, e);
    snprintf(err, errlen, "%s", e->err);
    free(e);
    mbs_test_remove_tree(dir);
    free(dir);
    return st;
}

START_TEST(reproduce_expect_bounds)
{
    char err[4096], name[64];
    memset(name, 'n', 39);
    name[39] = 0;
    ck_assert_msg(load_quantity(name, "rtol = 0.1", err, sizeof err) == 0, "%s", err);
    name[39] = 'n';
    name[40] = 0;
    ck_assert_int_eq(load_quantity(name, "rtol = 0.1", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "quantity names have at most 39 characters"), "%s", err);
    ck_assert_msg(load_quantity("a", "rtol = 0", err, sizeof err) == 0, "%s", err);
    ck_assert_msg(load_quantity("a", "atol = 0", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(load_quantity("a", "", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rtol = or atol = (or relation =) is required"), "%s", err);
    const double tol1[1] = {1e-6};
    double x = 2.0;
    const char *q = "run = meter-probe meter/a tol=1e-6\npublished = 2\nrtol = 0";
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    x = nextafter(2.0, 3.0);
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
}
END_TEST

START_TEST(reproduce_verdict_boundaries)
{
    const double tol1[1] = {1e-6};
    const char *const run = "run = meter-probe meter/a tol=1e-6\npublished = 2";
    char q[512];
    /* rtol: |ours / published - 1| <= rtol, both sides */
    snprintf(q, sizeof q, "%s\nrtol = 0.5", run);
    const double in[4] = {3.0, 1.0, 2.0, 2.9}, out[2] = {3.0 * (1.0 + 1e-15), 1.0 - 1e-15};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(repro_case(&in[i], tol1, 1, q) == 0, "rtol: %g inside", in[i]);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(repro_case(&out[i], tol1, 1, q) == 1, "rtol: %.17g outside", out[i]);
    /* atol: |ours - published| <= atol */
    snprintf(q, sizeof q, "%s\natol = 0.5", run);
    double x = 2.5;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    x = 1.5;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    x = nextafter(2.5, 3.0);
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
    x = nextafter(1.5, 1.0);
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
    /* rtol or atol: either suffices */
    snprintf(q, sizeof q, "%s\nrtol = 0.1\natol = 0.5", run);
    x = 2.5;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    x = 2.6;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
    /* relation: strict */
    snprintf(q, sizeof q, "%s\nrelation = <", run);
    x = 2.0;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
    x = nextafter(2.0, 0.0);
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    snprintf(q, sizeof q, "%s\nrelation = >", run);
    x = 2.0;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
    x = nextafter(2.0, 3.0);
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    /* published 0: rtol cannot judge, atol can */
    snprintf(q, sizeof q, "run = meter-probe meter/a tol=1e-6\npublished = 0\nrtol = 10");
    x = 1e-300;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
    snprintf(q, sizeof q, "run = meter-probe meter/a tol=1e-6\npublished = 0\natol = 1e-3");
    x = 1e-3;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    /* the record of a run: h or tol equal to 1e-9 relative */
    snprintf(q, sizeof q, "%s\nrtol = 0.5", run);
    x = 2.0;
    const double tol_in[1] = {1e-6 * (1.0 + 0.9e-9)}, tol_out[1] = {1e-6 * (1.0 + 1.1e-9)};
    ck_assert_int_eq(repro_case(&x, tol_in, 1, q), 0);
    ck_assert_int_eq(repro_case(&x, tol_out, 1, q), 1);
    /* info: never judged; a missing value fails a judged quantity */
    snprintf(q, sizeof q, "%s\nverdict = info", run);
    x = 1e9;
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 0);
    x = NAN;
    snprintf(q, sizeof q, "%s\nrtol = 1e9", run);
    ck_assert_int_eq(repro_case(&x, tol1, 1, q), 1);
}
END_TEST

/* Combined quantities: ratio, spread, and the geometric mean over tol_factors,
 * each at a boundary. */
START_TEST(reproduce_combine_boundaries)
{
    /* ratio = value(run) / value(with) = 6 / 2 = 3; rtol 0.5 around 2 */
    const double tols2[2] = {1e-6, 1e-6};
    double e2[2] = {6.0, 2.0};
    const char *ratio = "run = meter-probe meter/a tol=1e-6\nwith = meter-probe meter/b tol=1e-6\n"
                        "combine = ratio\npublished = 2\nrtol = 0.5";
    ck_assert_int_eq(repro_case(e2, tols2, 2, ratio), 0);
    e2[0] = nextafter(6.0, 7.0);
    ck_assert_int_eq(repro_case(e2, tols2, 2, ratio), 1);
    /* spread = (max - min) / |mean| = (3 - 1) / 2 = 1 */
    double e3[2] = {3.0, 1.0};
    const char *spread = "run = meter-probe meter/a tol=1e-6\nwith = meter-probe meter/b "
                         "tol=1e-6\ncombine = spread\npublished = 1\natol = 0";
    ck_assert_int_eq(repro_case(e3, tols2, 2, spread), 0);
    e3[1] = 1.5; /* 1.5 / 2.25 */
    ck_assert_int_eq(repro_case(e3, tols2, 2, spread), 1);
    /* tol_factors 0.5 1 2: geometric mean of 1, 4, 16 = 4 */
    const double tf[6] = {0.5e-6, 0.5e-6, 1e-6, 1e-6, 2e-6, 2e-6};
    double ef[6] = {1.0, 0, 4.0, 0, 16.0, 0};
    const char *gm = "run = meter-probe meter/a tol=1e-6\npublished = 4\natol = 1e-12\n"
                     "tol_factors = 0.5 1 2";
    /* records: method a at 0.5e-6 (index 0), 1e-6 (2), 2e-6 (4) */
    ck_assert_int_eq(repro_case(ef, tf, 6, gm), 0);
    ef[4] = 16.0 * 1.01; /* the mean moves by 1.01^(1/3) */
    ck_assert_int_eq(repro_case(ef, tf, 6, gm), 1);
    ef[4] = 16.0;
    ef[0] = 0.0; /* a non-positive value: no geometric mean */
    const char *gm2 = "run = meter-probe meter/a tol=1e-6\npublished = 4\nrtol = 100\n"
                      "tol_factors = 0.5 1 2";
    ck_assert_int_eq(repro_case(ef, tf, 6, gm2), 1);
}
END_TEST

/* Extractors on the scripted probe (integrated again through the registry):
 * min_q, argmin_q, max_g, min_h, relerr_q, err_v by hand.  Times and deviations
 * are binary fractions, so every value is exact. */
static const probe_pt ext_pts[4] = {
    {0.125, {0.0, -0.5}, {0.0, 0.0}, 0.0, 0, {0, 0}},
    {0.375, {0.001953125, -0.75}, {0.0, 0.0}, 0.0, 0, {0, 0}},
    {0.4375, {-0.00390625, -0.625}, {0.0, 0.0}, 0.0, 0, {0, 0}},
    {1.0, {0.0, 0.25}, {0.0, 0.0009765625}, 0.0, 0, {0, 0}},
};
static const probe_script ext_script = {ext_pts, 4, 1.0, 0.0, 0.0};
static const mbs_method_def probe_ext = {
    .name = "meter/ext", .summary = "scripted states (test)", .citation = "tests",
    .order = {1, 1, 0}, .flags = MBS_M_FIXED_STEP, .ops = &probe_ops, .variant = &ext_script};

START_TEST(reproduce_extractors_by_hand)
{
    char err[256];
    ck_assert_int_eq(mbs_method_register(&probe_ext, "check_meter", err, sizeof err), MBS_OK);
    char *refdir = write_probe_reference("closed form (tests/check_meter.c)");
    char *dir = mbs_test_tmpdir(), path[1024], rd[512];
    snprintf(rd, sizeof rd, "%s/r", dir);
    ck_assert_int_eq(mbs_mkdir_p(rd), 0);
    snprintf(path, sizeof path, "%s/runs.jsonl", rd);
    FILE *f = fopen(path, "w");
    const char *const probs[2] = {"meter-probe", "meter-probe-ref"};
    for (int i = 0; i < 2; i++) {
        mbs_run_spec spec = {.problem = probs[i], .method = "meter/ext", .h = 0.1, .tol = NAN,
                             .t_end = NAN, .measure = 1};
        mbs_record rec;
        ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
        ck_assert_int_eq(rec.status, MBS_OK);
        rec.run_index = i;
        char *s = mbs_record_json(&rec);
        fprintf(f, "%s\n", s);
        free(s);
        mbs_record_free(&rec);
    }
    fclose(f);
    /* q_1 = -2 + dq_1: minimum -2.75 at t = 0.375; |g| = |dq_0|: max 2^-8 (the
     * initial values are exact); steps (0, 1/8], (1/8, 3/8], (3/8, 7/16], and the
     * last (7/16, 1], which is never counted; a step overlaps [T0, T1] when
     * t > T0 and t_prev < T1; at t_end q_1 = -1.75 against the reference -2:
     * 0.25 / 2; v_1 against 0: 2^-10 */
    const struct {
        const char *extract;
        const char *problem;
        double value;
    } c[] = {
        {"min_q:1", "meter-probe", -2.75},
        {"argmin_q:1", "meter-probe", 0.375},
        {"max_g:0-0", "meter-probe", 0.00390625},
        {"min_h:0.3-0.45", "meter-probe", 0.0625},
        {"min_h:0-0.375", "meter-probe", 0.125},   /* (3/8, 7/16] starts at T1: out */
        {"min_h:0.125-0.3", "meter-probe", 0.25},  /* (0, 1/8] ends at T0: out */
        {"min_h:0.4375-0.9", "meter-probe", NAN},  /* only the last step: none */
        {"relerr_q:1", "meter-probe-ref", 0.125},
        {"err_v:0-1", "meter-probe-ref", 0.0009765625},
        /* a LO (T0) of 31 characters, the last one a copy into 32 bytes held */
        {"err_v:0000000000000000000000000000000-1", "meter-probe-ref", 0.0009765625},
        {"max_g:0000000000000000000000000000000-0", "meter-probe", 0.00390625},
        {"min_h:0.30000000000000000000000000000-0.45", "meter-probe", 0.0625},
        /* the longest extractor, 63 characters */
        {"err_v:0000000000000000000000000000000000000000000000000000000-1", "meter-probe-ref",
         0.0009765625},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        for (int side = 0; side < 2; side++) {
            double v = c[k].value;
            char text[1024];
            /* side 0: the exact value with rtol 0; side 1: 1e-9 off with rtol 1e-12 */
            snprintf(text, sizeof text,
                     "[reproduction]\ntitle = t\ncitation = c\nsuite = s\n[quantity a]\n"
                     "run = %s meter/ext h=0.1\nextract = %s\nread = by hand\n"
                     "published = %.17g\nrtol = %s\n",
                     c[k].problem, c[k].extract, isnan(v) ? 1.0 : v * (1.0 + 1e-9 * side),
                     side ? "1e-12" : "0");
            snprintf(path, sizeof path, "%s/x.expect", dir);
            mbs_test_write_text(path, text);
            FILE *sink = fopen("/dev/null", "w");
            int st = mbs_reproduce_check(path, rd, sink);
            fclose(sink);
            int want = isnan(v) || side;
            ck_assert_msg(st == want, "%s on %s (side %d): exit %d", c[k].extract, c[k].problem,
                          side, st);
        }
    }
    /* an extractor of 64 characters is refused, not cut, naming the value and the
     * length (so are the other texts of an expectation file, all through one check) */
    char ex[80], text[1024], want[256];
    snprintf(ex, sizeof ex, "err_v:%s-1",
             "00000000000000000000000000000000000000000000000000000000");
    snprintf(text, sizeof text,
             "[reproduction]\ntitle = t\ncitation = c\nsuite = s\n[quantity a]\n"
             "run = meter-probe-ref meter/ext h=0.1\nextract = %s\nread = by hand\n"
             "published = 1\nrtol = 1\n",
             ex);
    snprintf(path, sizeof path, "%s/x.expect", dir);
    mbs_test_write_text(path, text);
    expect *e = malloc(sizeof *e);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(mbs_repro_load_expect(path, e), -1);
    snprintf(want, sizeof want, "extract = '%s': 64 characters, at most 63\n", ex);
    ck_assert_msg(strncmp(e->err, want, strlen(want)) == 0, "the first line of: %s", e->err);
    free(e);
    unsetenv("MBSBENCH_REFDIR");
    mbs_test_remove_tree(refdir);
    free(refdir);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- tolrun: the direct run with separate tolerances (bench table 2) ---------------- */

static const mbs_method_def probe_adaptive = {
    .name = "meter/adaptive", .summary = "scripted states (test)", .citation = "tests",
    .order = {2, 1, 0}, .flags = MBS_M_ADAPTIVE, .ops = &probe_ops, .variant = &s1};

/* Script S1 again: final errors, max |g| over the initial values and the steps,
 * the work of the measuring run, the final state; bad input refused. */
START_TEST(tolrun_by_hand)
{
    char err[256];
    ck_assert_int_eq(mbs_method_register(&probe_adaptive, "check_meter", err, sizeof err),
                     MBS_OK);
    mbs_tolrun r;
    double c_before = cpu_clock_direct();
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 1e-4, 1e-6, NAN, 2, &r),
                     MBS_OK);
    double c_after = cpu_clock_direct();
    ck_assert_int_eq(r.status, MBS_OK);
    ck_assert_double_eq(r.t_final, 1.0);
    assert_rel(r.err_q, 2e-3, 1e-12, "tolrun err_q");
    assert_rel(r.err_v, 1e-3, 1e-12, "tolrun err_v");
    assert_rel(r.res_pos_max, 4e-3, 1e-12, "tolrun res_pos_max");
    ck_assert_int_eq(r.cnt.steps, 3);
    ck_assert_int_eq(r.cnt.rejected, 1);
    ck_assert_int_eq(r.cnt.solves, 3 * probe_work[6]);
    ck_assert_uint_eq(r.nq, 2);
    ck_assert_uint_eq(r.nl, 1);
    assert_rel(r.final[4], 3.005, 1e-14, "tolrun final lambda");
    /* a time was taken: a CPU time span inside the call's own (units, not speed) */
    ck_assert_msg(r.cpu_min >= 0.0 && r.cpu_min <= c_after - c_before + 1e-9,
                  "cpu_min %.9g outside [0, %.9g]", r.cpu_min, c_after - c_before);
    /* one timing run: its own span, not hidden by a minimum over repeats */
    c_before = cpu_clock_direct();
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 1e-4, 1e-6, NAN, 1, &r),
                     MBS_OK);
    c_after = cpu_clock_direct();
    ck_assert_msg(r.cpu_min >= 0.0 && r.cpu_min <= c_after - c_before + 1e-9,
                  "cpu_min %.9g outside [0, %.9g] (1 repeat)", r.cpu_min, c_after - c_before);
    /* t_end 0.5: the script's times scale with it */
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 1e-4, 1e-6, 0.5, 0, &r),
                     MBS_OK);
    ck_assert_double_eq(r.t_final, 0.5);
    ck_assert(isnan(r.cpu_min));
    /* no exact solution: no errors */
    ck_assert_int_eq(mbs_tolrun_run("meter-probe-ref", "meter/adaptive", 1e-4, 1e-6, NAN, 0, &r),
                     MBS_OK);
    ck_assert(isnan(r.err_q) && isnan(r.err_v));
    assert_rel(r.res_pos_max, 4e-3, 1e-12, "tolrun res_pos_max (no reference)");
    /* bad input */
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/probe", 1e-4, 1e-6, NAN, 0, &r),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 0.0, 1e-6, NAN, 0, &r),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 1e-4, 0.0, NAN, 0, &r),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 1e-4, 1e-6, 0.0, 0, &r),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_tolrun_run("meter-probe", "meter/adaptive", 1e-4, 1e-6, NAN, -1, &r),
                     MBS_BAD_INPUT);
}
END_TEST

/* ---- the brief verdict of `make run` ------------------------------------------------ */

/* Per problem and level (mescd >= 3, 6, 9: a mixed error of 1e-3, 1e-6, 1e-9 or
 * better) the run with the smallest CPU median; mescd exactly at a level reaches
 * it; a tie keeps the first; failures counted by status; a problem without
 * measured digits is "not scored". */
START_TEST(brief_verdict_by_hand)
{
    char *dir = mbs_test_tmpdir(), path[1024];
    snprintf(path, sizeof path, "%s/runs.jsonl", dir);
    const struct {
        const char *problem, *method, *status;
        double mescd, cpu_ms;
    } r[] = {
        {"A", "a/three", "ok", 3.0, 2.0},     {"A", "a/six", "ok", 6.0, 5.0},
        {"A", "a/almost6", "ok", 5.999999, 1.0}, {"A", "a/nine", "ok", 9.0, 5.5},
        {"A", "a/twelve", "ok", 12.0, 6.0},   {"A", "a/tie", "ok", 12.0, 6.0},
        {"A", "a/failed", "nan_state", 14.0, 0.5}, {"B", "b/low", "ok", 2.999999, 1.0},
        {"C", "c/none", "ok", NAN, 1.0},      {"C", "c/budget", "too_many_steps", NAN, NAN},
    };
    char text[8192] = "";
    for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
        char line[512], d[32] = "null", c[32] = "null";
        if (isfinite(r[i].mescd))
            snprintf(d, sizeof d, "%.17g", r[i].mescd);
        if (isfinite(r[i].cpu_ms))
            snprintf(c, sizeof c, "%.17g", 1e-3 * r[i].cpu_ms);
        snprintf(line, sizeof line,
                 "{\"run\":%zu,\"problem_spec\":\"%s\",\"method_spec\":\"%s\","
                 "\"status\":\"%s\",\"mescd\":%s,\"cpu\":{\"median\":%s},"
                 "\"counters\":{\"f_evals\":%zu}}\n",
                 i, r[i].problem, r[i].method, r[i].status, d, c, 100 + i);
        strcat(text, line);
    }
    mbs_test_write_text(path, text);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    ck_assert_int_eq(mbs_brief_summary(dir, "R.html", MBS_ERR_FINAL, m), 0);
    fclose(m);
    /* the columns line up: each cell of a row starts where its header starts */
    const char *hdr = strstr(buf, "\nproblem "), *row = strstr(buf, "\nA ");
    ck_assert_msg(hdr && row, "%s", buf);
    hdr++;
    row++;
    const char *const heads[] = {"1e-3", "1e-6", "1e-9"},
                      *const cellv[] = {"a/almost6 ", "a/six ", "a/nine "};
    for (int l = 0; l < 3; l++) {
        const char *h = strstr(hdr, heads[l]);
        ck_assert_ptr_nonnull(h);
        ck_assert_msg(strncmp(row + (h - hdr), cellv[l], strlen(cellv[l])) == 0,
                      "column %s does not start at its header:\n%s", heads[l], buf);
    }
    /* the table with runs of blanks as one (its columns are as wide as their cells) */
    char *w = buf;
    for (const char *c = buf; *c; c++)
        if (*c != ' ' || w == buf || w[-1] != ' ')
            *w++ = *c;
    *w = '\0';
    /* A: 1e-3 a/almost6 (1 ms), 1e-6 a/six (mescd 6.0 exactly, 5 ms), 1e-9 a/nine
     * (mescd 9.0 exactly, 5.5 ms; a/twelve takes 6 ms) */
    ck_assert_msg(strstr(buf, "\nA a/almost6 1 ms 102 f a/six 5 ms 101 f a/nine 5.5 ms 103 f\n"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, "\nB - (no run reached 1e-3) - -\n") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "\nC (no reference: not scored) - -\n") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "10 runs, 8 ok, 2 failed") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "failed runs by status: nan_state 1, too_many_steps 1") != NULL,
                  "%s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "report: R.html"));
    free(buf);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *mbs_suite_meter(void)
{
    Suite *s = suite_create("meter");
    TCase *tc = tcase_create("meter");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, probe_setup, probe_teardown);
    tcase_add_test(tc, measures_of_a_run_by_hand);
    tcase_add_test(tc, record_fields_by_name);
    tcase_add_test(tc, trajectory_errors_by_hand);
    tcase_add_test(tc, reference_and_published_digits);
    tcase_add_test(tc, testset_digits_edges);
    tcase_add_test(tc, exact_result_has_16_digits);
    tcase_add_test(tc, success_must_reach_t_end);
    tcase_add_test(tc, step_budget_boundary);
    tcase_add_test(tc, budgets_from_baseline_boundary);
    tcase_add_test(tc, cpu_statistics_by_hand);
    tcase_add_test(tc, cpu_clock_units);
    tcase_add_test(tc, work_of_timing_runs);
    tcase_add_test(tc, line_fit_and_ci_by_table);
    tcase_add_test(tc, order_fit_by_hand);
    tcase_add_test(tc, window_rule_boundaries);
    tcase_add_test(tc, window_choice);
    tcase_add_test(tc, drift_fit_by_hand);
    tcase_add_test(tc, drift_exponent_of_a_run);
    tcase_add_test(tc, converge_orders_by_hand);
    tcase_add_test(tc, converge_input_bounds);
    tcase_add_test(tc, run_input_bounds);
    tcase_add_test(tc, reference_limited_boundary);
    tcase_add_test(tc, roundoff_limited_by_hand);
    tcase_add_test(tc, roundoff_marks_printed_as_held);
    tcase_add_test(tc, tolerance_exponent_and_self_reference);
    tcase_add_test(tc, global_tolerance_levels_boundary);
    tcase_add_test(tc, compare_error_tiers_boundary);
    tcase_add_test(tc, compare_digit_tiers_boundary);
    tcase_add_test(tc, compare_counters_and_state_boundary);
    tcase_add_test(tc, compare_params_identity);
    tcase_add_test(tc, compare_drift_exponent_both_directions);
    tcase_add_test(tc, compare_orders_boundary);
    tcase_add_test(tc, compare_orders_256th_series);
    tcase_add_test(tc, compare_orders_long_series_keys);
    tcase_add_test(tc, compare_missing_run_reads_only_the_records);
    tcase_add_test(tc, results_order_sorts_levels);
    tcase_add_test(tc, compare_cpu_boundary);
    tcase_add_test(tc, compare_cpu_times_bound);
    tcase_add_test(tc, compare_cpu_confirmed_by_second_sweep);
    tcase_add_test(tc, compare_cpu_busy_machine);
    tcase_add_test(tc, mann_whitney_normal_by_hand);
    tcase_add_test(tc, reproduce_verdict_boundaries);
    tcase_add_test(tc, reproduce_expect_bounds);
    tcase_add_test(tc, reproduce_combine_boundaries);
    tcase_add_test(tc, reproduce_extractors_by_hand);
    tcase_add_test(tc, brief_verdict_by_hand);
    tcase_add_test(tc, tolrun_by_hand);
    suite_add_tcase(s, tc);
    return s;
}
