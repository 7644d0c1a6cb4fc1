/* Explicit Runge-Kutta methods as data: the order-condition battery
 * over every registered tableau (rooted trees generated, counts of A000081),
 * its teeth (perturbed tableaux fail), run-time registration, observed orders
 * of the new tableaux at fixed steps (pendulum on index1 and on the QR
 * null-space formulation), and adaptive runs against their tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/converge.h"
#include "../methods/integrators/explicit/explicit.h"
#include "testutil.h"

/* ---- the battery ---------------------------------------------------------------- */

/* Rooted trees of order 1..10 (OEIS A000081): 37 conditions up to order 6, 200
 * up to order 8. */
START_TEST(tree_counts)
{
    static const int a000081[] = {0, 1, 1, 2, 4, 9, 20, 48, 115, 286, 719};
    int cum = 0;
    for (int n = 1; n <= MBS_TABLEAU_MAX_ORDER; n++) {
        ck_assert_int_eq(mbs_rooted_tree_count(n), a000081[n]);
        cum += a000081[n];
        if (n == 6)
            ck_assert_int_eq(cum, 37);
        if (n == 8)
            ck_assert_int_eq(cum, 200);
    }
    ck_assert_int_eq(mbs_rooted_tree_count(0), -1);
    ck_assert_int_eq(mbs_rooted_tree_count(MBS_TABLEAU_MAX_ORDER + 1), -1);
}
END_TEST

static int n_conditions(int p)
{
    int n = 0;
    for (int k = 1; k <= p; k++)
        n += mbs_rooted_tree_count(k);
    return n;
}

/* Every registered tableau: valid (structure, row sums, FSAL, e = b - bhat),
 * b satisfies all conditions up to its order and bhat up to its embedded
 * order, and neither satisfies those of the next order: the claimed orders
 * are the exact ones. */
START_TEST(registered_tableaux_have_their_orders)
{
    const mbs_tableau *t = mbs_tableau_at((size_t)_i);
    char err[256] = "";
    ck_assert_msg(mbs_tableau_validate(t, err, sizeof err) == MBS_OK, "%s", err);
    mbs_order_report r;
    ck_assert_int_eq(mbs_tableau_order_check(t, t->b, t->order, &r), MBS_OK);
    ck_assert_int_eq(r.n_conditions, n_conditions(t->order));
    ck_assert_double_le(r.max_ratio, 1.0);
    ck_assert_int_eq(mbs_tableau_order_check(t, t->b, t->order + 1, &r), MBS_BAD_INPUT);
    ck_assert_msg(r.failed_order == t->order + 1, "%s: b fails at order %d", t->name,
                  r.failed_order);
    ck_assert_double_gt(fabs(r.resid), 1e-8);
    if (t->bhat) {
        ck_assert_int_eq(mbs_tableau_order_check(t, t->bhat, t->order_emb, &r), MBS_OK);
        ck_assert_int_eq(r.n_conditions, n_conditions(t->order_emb));
        ck_assert_int_eq(mbs_tableau_order_check(t, t->bhat, t->order_emb + 1, &r),
                         MBS_BAD_INPUT);
        ck_assert_int_eq(r.failed_order, t->order_emb + 1);
    }
    /* and every formulation has the integrator under the tableau's name */
    for (size_t i = 0; i < mbs_ode_formulation_count(); i++) {
        char name[128];
        snprintf(name, sizeof name, "%s/%s", mbs_ode_formulation_at(i)->name, t->name);
        const mbs_method_def *m = mbs_method_find(name);
        ck_assert_msg(m != NULL, "%s not registered", name);
        ck_assert_double_eq(m->order[0], t->order);
        ck_assert(!(m->flags & MBS_M_FIXED_STEP) == (t->bhat != NULL));
    }
}
END_TEST

/* A writable copy of a tableau. */
typedef struct tab_copy {
    mbs_tableau t;
    double c[MBS_TABLEAU_MAX_STAGES], b[MBS_TABLEAU_MAX_STAGES], bhat[MBS_TABLEAU_MAX_STAGES];
    double e[MBS_TABLEAU_MAX_STAGES], A[MBS_TABLEAU_MAX_STAGES * MBS_TABLEAU_MAX_STAGES];
} tab_copy;

static void copy_tableau(tab_copy *cp, const mbs_tableau *t)
{
    size_t s = (size_t)t->stages;
    cp->t = *t;
    memcpy(cp->c, t->c, s * sizeof(double));
    memcpy(cp->b, t->b, s * sizeof(double));
    memcpy(cp->A, t->A, s * s * sizeof(double));
    cp->t.c = cp->c;
    cp->t.b = cp->b;
    cp->t.A = cp->A;
    if (t->bhat) {
        memcpy(cp->bhat, t->bhat, s * sizeof(double));
        cp->t.bhat = cp->bhat;
    }
    if (t->e) {
        memcpy(cp->e, t->e, s * sizeof(double));
        cp->t.e = cp->e;
    } else if (t->bhat) { /* filled, not used unless the test sets cp->t.e */
        for (size_t i = 0; i < s; i++)
            cp->e[i] = t->b[i] - t->bhat[i];
    }
}

static void expect_invalid(const mbs_tableau *t, const char *what)
{
    char err[256] = "";
    ck_assert_int_eq(mbs_tableau_validate(t, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_msg(strstr(err, what) != NULL, "'%s' does not say '%s'", err, what);
    ck_assert_ptr_nonnull(strstr(err, t->name ? t->name : "tableau"));
}

/* The battery has teeth: perturbations of 1e-7 of every registered tableau are
 * rejected, each by the condition it breaks. */
START_TEST(perturbed_tableaux_fail)
{
    const mbs_tableau *t = mbs_tableau_at((size_t)_i);
    int s = t->stages;
    tab_copy cp;
    /* a weight: the order-1 condition sum b = 1 */
    copy_tableau(&cp, t);
    cp.b[1] += 1e-7;
    cp.t.fsal = 0;
    cp.t.e = NULL;
    expect_invalid(&cp.t, "b fails an order-1 condition");
    /* A inside a row, row sum kept (a_i1 + d, a_i,i-1 - d in the last row
     * before a FSAL row): c and the order-1 and -2 conditions hold, a
     * higher one fails */
    copy_tableau(&cp, t);
    cp.t.fsal = 0;
    int i = t->fsal ? s - 2 : s - 1;
    ck_assert_int_ge(i, 2);
    cp.A[i * s + 0] += 1e-7;
    cp.A[i * s + i - 1] -= 1e-7;
    mbs_order_report r;
    ck_assert_int_eq(mbs_tableau_order_check(&cp.t, cp.t.b, t->order, &r), MBS_BAD_INPUT);
    ck_assert_int_ge(r.failed_order, 3);
    char err[256];
    ck_assert_int_eq(mbs_tableau_validate(&cp.t, err, sizeof err), MBS_BAD_INPUT);
    /* a node: the row-sum condition */
    copy_tableau(&cp, t);
    cp.c[1] += 1e-7;
    expect_invalid(&cp.t, "sum_j a_ij");
    /* the embedded weights */
    if (t->bhat) {
        copy_tableau(&cp, t);
        cp.t.e = NULL;
        cp.bhat[0] += 1e-7;
        expect_invalid(&cp.t, "bhat fails an order-1 condition");
        /* e that is not b - bhat */
        copy_tableau(&cp, t);
        cp.e[0] += 1e-7;
        if (!t->e)
            cp.t.e = cp.e;
        expect_invalid(&cp.t, "is not b - bhat");
    }
    /* claimed order one too high */
    copy_tableau(&cp, t);
    cp.t.order++;
    expect_invalid(&cp.t, "not of order");
}
END_TEST

/* Continuous extensions (tableau.h, bd): dopri5's and tsit5's are there (vern6's
 * would need three more stages); each satisfies the conditions of its order
 * at theta = 0.1, 0.37, 0.5, 0.9, 1 and fails one of the next order at 1/2
 * (order exactly 4: only b(1) = b has order 5); a change of 1e-7 in two
 * coefficients of one b_i(theta) that keeps b_i(1) = b_i is rejected by the
 * order conditions, one that breaks it by b_i(1) = b_i. */
START_TEST(dense_output_orders)
{
    ck_assert_ptr_nonnull(mbs_tableau_dopri5.bd);
    ck_assert_ptr_nonnull(mbs_tableau_tsit5.bd);
    ck_assert_ptr_null(mbs_tableau_vern6.bd);
    const mbs_tableau *t = mbs_tableau_at((size_t)_i);
    if (!t->bd)
        return;
    ck_assert_int_eq(t->dense_order, 4);
    mbs_order_report r;
    static const double thetas[] = {0.1, 0.37, 0.5, 0.9, 1.0};
    for (size_t k = 0; k < sizeof thetas / sizeof thetas[0]; k++) {
        ck_assert_msg(mbs_tableau_dense_check(t, thetas[k], t->dense_order, &r) == MBS_OK,
                      "%s theta %g: tree %d residual %g", t->name, thetas[k], r.failed_tree,
                      r.resid);
        ck_assert_int_eq(r.n_conditions, n_conditions(t->dense_order));
    }
    ck_assert_int_eq(mbs_tableau_dense_check(t, 0.5, t->dense_order + 1, &r), MBS_BAD_INPUT);
    ck_assert_int_eq(r.failed_order, t->dense_order + 1);
    ck_assert_double_gt(fabs(r.resid), 1e-6);
    ck_assert_int_eq(mbs_tableau_dense_check(t, 1.0, t->dense_order + 1, &r), MBS_OK);
    ck_assert_int_eq(mbs_tableau_dense_check(t, 0.0, 1, &r), MBS_BAD_INPUT);
    /* teeth */
    int deg = t->dense_degree;
    double bd[MBS_TABLEAU_MAX_STAGES * MBS_TABLEAU_MAX_DENSE_DEGREE];
    memcpy(bd, t->bd, (size_t)(t->stages * deg) * sizeof(double));
    mbs_tableau cp = *t;
    cp.bd = bd;
    bd[2 * deg + 1] += 1e-7; /* stage 3: theta^2 and theta^3 */
    bd[2 * deg + 2] -= 1e-7;
    expect_invalid(&cp, "dense output at theta");
    bd[2 * deg + 2] += 1e-7;
    expect_invalid(&cp, "b_3(1)");
    bd[2 * deg + 1] -= 1e-7;
    char err[256] = "";
    ck_assert_msg(mbs_tableau_validate(&cp, err, sizeof err) == MBS_OK, "%s", err);
    cp.dense_order = 5;
    expect_invalid(&cp, "dense order 5");
}
END_TEST

/* Structural errors, one message each. */
START_TEST(malformed_tableaux)
{
    tab_copy cp;
    copy_tableau(&cp, &mbs_tableau_dopri5);
    cp.A[1 * 7 + 1] = 0.5; /* diagonal: implicit */
    expect_invalid(&cp.t, "strictly lower triangular");
    copy_tableau(&cp, &mbs_tableau_dopri5);
    cp.t.name = "Bad/Name";
    expect_invalid(&cp.t, "must be 1-23 characters");
    copy_tableau(&cp, &mbs_tableau_dopri5);
    cp.b[2] = NAN;
    expect_invalid(&cp.t, "finite");
    copy_tableau(&cp, &mbs_tableau_dopri5);
    cp.t.stages = 0;
    expect_invalid(&cp.t, "stages 0");
    copy_tableau(&cp, &mbs_tableau_dopri5);
    cp.t.order = 11;
    expect_invalid(&cp.t, "order 11");
    copy_tableau(&cp, &mbs_tableau_rk4);
    cp.t.fsal = 1; /* rk4 is not FSAL */
    expect_invalid(&cp.t, "FSAL");
    copy_tableau(&cp, &mbs_tableau_rk4);
    cp.t.order_emb = 3; /* no bhat */
    expect_invalid(&cp.t, "without bhat");
}
END_TEST

/* ---- run-time registration -------------------------------------------------------- */

/* A tableau registered at run time gives FORMULATION/name for every formulation;
 * its runs are those of the compiled-in tableau with the same coefficients. */
START_TEST(runtime_registration)
{
    mbs_method_set set = {0};
    char err[256] = "";
    tab_copy cp;
    copy_tableau(&cp, &mbs_tableau_tsit5);
    cp.t.name = "tsit5-copy";
    size_t nf = mbs_ode_formulation_count();
    ck_assert_int_ge(nf, 14);
    ck_assert_msg(mbs_explicit_register_tableau(&set, &cp.t, err, sizeof err) == MBS_OK, "%s",
                  err);
    ck_assert_uint_eq(set.n, nf);
    /* the set owns a copy: changing ours afterwards changes nothing */
    cp.b[0] = 7.0;
    const mbs_method_def *m = mbs_method_set_find(&set, "qr/tsit5-copy");
    ck_assert_ptr_nonnull(m);
    ck_assert(m->flags & MBS_M_ADAPTIVE);
    ck_assert_double_eq(m->order[0], 5.0);
    ck_assert_ptr_nonnull(mbs_method_set_find(&set, "index1/tsit5-copy"));
    ck_assert_ptr_null(mbs_method_set_find(&set, "index1/tsit5"));
    ck_assert_ptr_null(mbs_method_find("index1/tsit5-copy")); /* static registry untouched */
    ck_assert_str_eq(m->summary, "Tsitouras 5(4), adaptive, null space from a column-pivoted "
                                 "QR of B^T (GSL)");
    mbs_record a, b;
    mbs_run_spec spec = {.problem = "pendulum", .method = "index1/tsit5-copy", .h = NAN,
                         .tol = 1e-8, .t_end = 2.0, .measure = 1,
                         .method_def = mbs_method_set_find(&set, "index1/tsit5-copy")};
    ck_assert_int_eq(mbs_run(&spec, &a, err, sizeof err), MBS_OK);
    mbs_test_run("pendulum", "index1/tsit5", NAN, 1e-8, 2.0, &b);
    ck_assert_int_eq(a.status, MBS_OK);
    ck_assert_int_eq(a.cnt.steps, b.cnt.steps);
    ck_assert_int_eq(a.cnt.f_evals, b.cnt.f_evals);
    for (size_t k = 0; k < 5; k++)
        ck_assert_double_eq(a.final[k], b.final[k]);
    mbs_record_free(&a);
    mbs_record_free(&b);
    /* clashes and bad tableaux leave the set as it was */
    ck_assert_int_eq(mbs_explicit_register_tableau(&set, &cp.t, err, sizeof err),
                     MBS_BAD_INPUT); /* b[0] = 7 now */
    ck_assert_ptr_nonnull(strstr(err, "tableau tsit5-copy: "));
    copy_tableau(&cp, &mbs_tableau_tsit5);
    cp.t.name = "tsit5-copy";
    ck_assert_int_eq(mbs_explicit_register_tableau(&set, &cp.t, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(err, "already registered"));
    cp.t.name = "dopri5"; /* a compiled-in integrator */
    ck_assert_int_eq(mbs_explicit_register_tableau(&set, &cp.t, err, sizeof err),
                     MBS_BAD_INPUT);
    cp.t.name = "hedopri5"; /* would clash with the method index1/hedopri5 */
    ck_assert_int_eq(mbs_explicit_register_tableau(&set, &cp.t, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_uint_eq(set.n, nf);
    /* a fixed-step tableau (no bhat) */
    cp.t.name = "tsit5-fixed";
    cp.t.bhat = NULL;
    cp.t.e = NULL;
    cp.t.order_emb = 0;
    cp.t.fsal = 0;
    ck_assert_msg(mbs_explicit_register_tableau(&set, &cp.t, err, sizeof err) == MBS_OK, "%s",
                  err);
    ck_assert_uint_eq(set.n, 2 * nf);
    ck_assert(mbs_method_set_find(&set, "dca/tsit5-fixed")->flags & MBS_M_FIXED_STEP);
    mbs_method_set_free(&set);
    ck_assert_uint_eq(set.n, 0);
    mbs_method_set_free(&set); /* idempotent */
    mbs_method_set_free(NULL);
}
END_TEST

/* ---- convergence ---------------------------------------------------------------------- */

/* The tableau run at fixed steps: a method definition with the fixed-step
 * flag and the variant of the registered FORMULATION/NAME. */
static void fixed_def(const char *name, mbs_method_def *def)
{
    const mbs_method_def *m = mbs_method_find(name);
    ck_assert_ptr_nonnull(m);
    *def = *m;
    def->flags = (def->flags & ~(unsigned)MBS_M_ADAPTIVE) | MBS_M_FIXED_STEP;
}

/* Observed orders of FORMULATION/NAME at fixed steps h0 / 2^i on `problem`
 * (exact solution) in q, v and lambda, each within [lo, hi]. */
static void check_order(const char *problem, const char *name, double h0, int levels, double lo,
                        double hi)
{
    mbs_method_def def;
    fixed_def(name, &def);
    mbs_run_spec base = {.problem = problem, .method = name, .t_end = NAN, .measure = 1,
                         .method_def = &def};
    mbs_converge *cv = malloc(sizeof *cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, h0, levels, 2.0, cv, err, sizeof err), MBS_OK);
    ck_assert(!cv->adaptive);
    ck_assert(!cv->self_ref);
    for (int g = 0; g < 3; g++) {
        ck_assert_msg(cv->fit[g].established, "%s: group %d not established", name, g);
        ck_assert_msg(cv->fit[g].p >= lo && cv->fit[g].p <= hi,
                      "%s on %s: group %d order %.3f outside [%g, %g]", name, problem, g,
                      cv->fit[g].p, lo, hi);
    }
    mbs_converge_free(cv);
    free(cv);
}

/* Tsitouras 5(4) at fixed steps converges at order 5 (+-0.3) on the body
 * pendulum released near the top (theta0 = 85 deg, t_end = 10, h = 0.025 ..
 * 0.003125; measured 4.91 in q, v, lambda on index1 and 4.93 on qr).  Its
 * sixth-order trees miss by at most 2.2e-4, so on gentler motion (the
 * mathematical pendulum, theta0 <= 18 deg) the sixth-order terms still compete
 * at these step sizes and the observed order is 5.4-5.9. */
START_TEST(tsit5_order_five)
{
    check_order("pendulum-body:theta0=85", "index1/tsit5", 0.025, 4, 4.7, 5.3);
    check_order("pendulum-body:theta0=85", "qr/tsit5", 0.025, 4, 4.7, 5.3);
}
END_TEST

/* Verner's 6(5) pair at fixed steps: at least order 6.  Its order-7 trees miss
 * by at most 1.03e-6 (the battery's residuals), the order-8 and -9 trees by
 * 4.0e-4 and 2.0e-3, so the h^6 term of the global error stays below the
 * higher ones wherever double precision can measure (errors 1e-5 .. 1e-12):
 * observed 7.9-8.1 on the pendulum (h = 0.2 .. 0.025, t_end = 10), the double
 * pendulum and a 3-chain; an 80-digit run of the angle-form pendulum gives
 * 6.6-7.2 for h = 0.1 .. 0.00625.  The exact order 6 is the battery's
 * (order-7 conditions fail), not observable here. */
START_TEST(vern6_order_at_least_six)
{
    check_order("pendulum", "index1/vern6", 0.2, 4, 5.7, 8.5);
    check_order("pendulum", "qr/vern6", 0.2, 4, 5.7, 8.5);
}
END_TEST

/* The order conditions of a tableau as the integrator evaluates it, in the
 * exact arithmetic of its doubles (long double sums of double products; the
 * decimals of erk_tableaux.c round to the doubles of the exact rationals): the
 * row sums are the stored c_i in the increment form (explicit.c, combine) and
 * sum_j a_ij otherwise.  The order-2 condition sum_i b_i (A 1)_i = 1/2 must hold
 * to 1e-14, or the global error has an O(h) term that no tolerance removes.
 * Measured: rk4 2.8e-17, dopri5 3.6e-16, tsit5 3.0e-15, vern6 4.2e-15 (its
 * plain sums, A and b up to 208 in magnitude: -6.5e-12). */
START_TEST(order_two_as_evaluated)
{
    const mbs_tableau *t = mbs_tableau_at((size_t)_i);
    int s = t->stages;
    long double res = -0.5L;
    for (int i = 0; i < s; i++) {
        long double row = 0.0L;
        if (t->increments)
            row = t->c[i];
        else
            for (int j = 0; j < i; j++)
                row += t->A[i * s + j];
        res += (long double)t->b[i] * row;
    }
    ck_assert_msg(fabsl(res) <= 1e-14L, "%s: sum_i b_i (A 1)_i - 1/2 = %.3Lg", t->name, res);
}
END_TEST

/* Verner's pair on the simple pendulum from the horizontal (t_end = 100, a
 * phase error that grows with t): tolerance-proportional from 1e-10 to 1e-12.
 * With the plain sums (order-2 residual -6.5e-12) the error of
 * proj-index1/vern6 stopped near 1e-8 (1.42e-8, 1.13e-8, 7.82e-9, falling
 * 1.3x and 1.4x per decade; index1/vern6 2.7e-7, 2.5e-8, 9.8e-9); in the
 * increment form 2.60e-9, 1.81e-10, 1.71e-11 (14x and 11x; index1/vern6
 * 2.5e-7, 1.4e-8, 1.1e-9).  Each decade of tol must give at least 4x (a
 * tolerance exponent of 0.6). */
START_TEST(vern6_tolerance_proportional)
{
    static const char *const methods[] = {"proj-index1/vern6", "index1/vern6"};
    for (int m = 0; m < 2; m++) {
        double prev = NAN;
        for (int k = 0; k < 3; k++) {
            mbs_record r;
            double tol = 1e-10 * pow(10.0, -k);
            mbs_test_run("simple-pendulum", methods[m], NAN, tol, 100.0, &r);
            ck_assert_int_eq(r.status, MBS_OK);
            double e = fmax(r.err.q, r.err.v);
            if (k > 0)
                ck_assert_msg(prev / e >= 4.0, "%s: tol %g: error %.3g after %.3g", methods[m],
                              tol, e, prev);
            prev = e;
            mbs_record_free(&r);
        }
    }
}
END_TEST

/* ---- a problem whose only error term is the leading one ---------------------------
 * q'' = (p+1) p t^(p-1) componentwise, q(0) = v(0) = 0 (the pendulum's dimensions,
 * its constraint ignored): q = t^(p+1), v = (p+1) t^p.  For a method of order p
 * the local error of q is exactly C h^(p+1) (q^(p+1) is constant, all higher
 * derivatives vanish) and v is integrated exactly, so the error of q(1) is C h^p
 * up to round-off: the observed order is p itself, not a pre-asymptotic value.
 * The right-hand side depends on t, so this also checks the stage times c. */
static int poly_alloc(void **ws, mbs_ctx *ctx, const mbs_params *params)
{
    (void)ctx;
    (void)params;
    *ws = calloc(1, sizeof(int));
    return *ws ? MBS_OK : MBS_NO_MEMORY;
}

static int poly_eval(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                     double *vdot, double *lambda)
{
    (void)q;
    (void)v;
    int p = *(int *)ws;
    for (size_t i = 0; i < ctx->pb->nv; i++)
        vdot[i] = (p + 1) * p * pow(t, p - 1);
    for (size_t i = 0; lambda && i < ctx->pb->nl; i++)
        lambda[i] = 0.0;
    return MBS_OK;
}

static void poly_free(void *ws)
{
    free(ws);
}

static const mbs_accel_def poly_accel = {
    .name = "poly", .alloc = poly_alloc, .eval = poly_eval, .free_ws = poly_free};

/* |q(1) - 1| of the fixed-step run with step h. */
static double poly_error(const mbs_tableau *t, double h)
{
    mbs_problem pb;
    mbs_ctx ctx;
    char err[256];
    ck_assert_msg(mbs_problem_open(&pb, "pendulum", err, sizeof err) == MBS_OK, "%s", err);
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    mbs_explicit_variant var = {.accel = &poly_accel, .kind = MBS_EXPLICIT_TABLEAU, .tab = t};
    mbs_method_def def = {.name = "poly/tableau", .flags = MBS_M_FIXED_STEP, .variant = &var,
                          .ops = &mbs_explicit_ops};
    mbs_params params;
    memset(&params, 0, sizeof params);
    void *state = NULL;
    ck_assert_int_eq(mbs_explicit_ops.alloc(&def, &params, &ctx, &state), MBS_OK);
    *(int *)mbs_explicit_accel_ws(state) = t->order;
    double y[8] = {0}, t0 = 0.0;
    ck_assert_uint_le(pb.nq + pb.nv + pb.nl, 8);
    mbs_settings set = {.h = h, .t_end = 1.0};
    ck_assert_int_eq(mbs_explicit_ops.integrate(state, &ctx, &set, &t0, y), MBS_OK);
    ck_assert_double_eq(t0, 1.0);
    double e = fabs(y[0] - 1.0);
    ck_assert_double_le(fabs(y[pb.nq] - (t->order + 1)), 1e-12); /* v exact */
    mbs_explicit_ops.free_state(state);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
    return e;
}

/* Every registered tableau, fixed steps h = 1 .. 1/32: log2 of successive error
 * ratios within 0.02 of its order while the error is above 1e-9 (measured:
 * rk4 4.0000, dopri5 and tsit5 5.0000, vern6 6.0000 and 6.0001).  Below, the
 * rounding of the coefficients to doubles shows: vern6's error at h = 1/8 is
 * 1.293e-10 against C h^6 = 1.297e-10 (1.22e-10 when its stages summed the
 * doubles of A, whose row sums miss c by up to 2e-14: order_two_as_evaluated). */
START_TEST(polynomial_problem_exact_order)
{
    const mbs_tableau *t = mbs_tableau_at((size_t)_i);
    double prev = poly_error(t, 1.0);
    int checked = 0;
    for (int k = 1; k <= 5; k++) {
        double e = poly_error(t, 1.0 / (1 << k));
        if (e < 1e-9)
            break;
        double p = log2(prev / e);
        ck_assert_msg(fabs(p - t->order) <= 0.02, "%s: h = 1/%d: observed order %.4f", t->name,
                      1 << k, p);
        prev = e;
        checked++;
    }
    ck_assert_int_ge(checked, 2);
}
END_TEST

/* The fixed-step mode of an embedded tableau, and a tableau without one,
 * refuse the other mode: adaptive without bhat is bad input. */
START_TEST(adaptive_needs_embedded_pair)
{
    mbs_method_def def = *mbs_method_find("index1/rk4");
    def.flags = (def.flags & ~(unsigned)MBS_M_FIXED_STEP) | MBS_M_ADAPTIVE;
    mbs_run_spec spec = {.problem = "pendulum", .method = "index1/rk4", .h = NAN, .tol = 1e-6,
                         .t_end = 1.0, .measure = 1, .method_def = &def};
    mbs_record r;
    char err[256];
    ck_assert_int_eq(mbs_run(&spec, &r, err, sizeof err), MBS_OK);
    ck_assert_int_eq(r.status, MBS_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(r.reason, "without an embedded pair"));
    mbs_record_free(&r);
}
END_TEST

/* Adaptive runs on the pendulum (t_end = 10, exact solution): the error follows
 * the tolerance (local error control: the global error at t_end is 1-100x tol,
 * as dopri5's, check_globaltol.c), and the sixth-order pair needs fewer steps
 * than the fifth-order ones at tight tolerances.  Measured max(err q, v) / tol
 * at 1e-6 and 1e-9: dopri5 63, 38; tsit5 2.8, 6.1; vern6 41, 7.5; steps at
 * 1e-9: 427, 393, 206 (f evaluations 2564, 2360, 1650). */
START_TEST(adaptive_meets_tolerance)
{
    static const char *const methods[] = {"index1/dopri5", "index1/tsit5", "index1/vern6"};
    static const double tols[] = {1e-6, 1e-9};
    long steps[3][2];
    for (int m = 0; m < 3; m++) {
        double e[2];
        for (int k = 0; k < 2; k++) {
            mbs_record r;
            mbs_test_run("pendulum", methods[m], NAN, tols[k], 10.0, &r);
            ck_assert_int_eq(r.status, MBS_OK);
            e[k] = fmax(r.err.q, r.err.v);
            steps[m][k] = r.cnt.steps;
            ck_assert_msg(e[k] <= 100.0 * tols[k] && e[k] >= 1e-3 * tols[k],
                          "%s tol %g: error %.3g", methods[m], tols[k], e[k]);
            mbs_record_free(&r);
        }
        /* 1000x tighter: 100x-10000x smaller error */
        ck_assert_msg(e[1] < e[0] / 100.0 && e[1] > e[0] / 1e4, "%s: %.3g -> %.3g", methods[m],
                      e[0], e[1]);
    }
    ck_assert_int_lt(steps[2][1], steps[0][1]);
    ck_assert_int_lt(steps[2][1], steps[1][1]);
}
END_TEST

Suite *mbs_suite_tableau(void)
{
    Suite *s = suite_create("tableau");
    TCase *tc = tcase_create("tableau");
    tcase_set_timeout(tc, 120);
    int nt = (int)mbs_tableau_count();
    tcase_add_test(tc, tree_counts);
    tcase_add_loop_test(tc, registered_tableaux_have_their_orders, 0, nt);
    tcase_add_loop_test(tc, perturbed_tableaux_fail, 0, nt);
    tcase_add_test(tc, malformed_tableaux);
    tcase_add_loop_test(tc, dense_output_orders, 0, nt);
    tcase_add_test(tc, runtime_registration);
    tcase_add_test(tc, tsit5_order_five);
    tcase_add_test(tc, vern6_order_at_least_six);
    tcase_add_loop_test(tc, order_two_as_evaluated, 0, nt);
    tcase_add_test(tc, vern6_tolerance_proportional);
    tcase_add_loop_test(tc, polynomial_problem_exact_order, 0, nt);
    tcase_add_test(tc, adaptive_needs_embedded_pair);
    tcase_add_test(tc, adaptive_meets_tolerance);
    suite_add_tcase(s, tc);
    return s;
}
