/* Large systems: the linear-solver backends of methods/linsol/linsol.h
 * (dense, UMFPACK, CHOLMOD range space) and the index-1 formulation on them.
 * Acceptance: all backends give the same accelerations and multipliers on the
 * chain with N = 50 to 1e-10 relative; pattern reuse (one symbolic analysis per
 * pattern); singular systems and bad triplets return documented statuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/integrators/explicit/explicit.h"
#include "../methods/formulations/index1.h"
#include "../methods/linsol/linsol.h"
#include "../methods/recursions/recursive.h"
#include "../problems/triplets.h"
#include "testutil.h"

static const double REL = 1e-10;

static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(a[i]));
    }
    return s > 0.0 ? d / s : d;
}

/* Chain N = 50 in a bent, moving configuration: every index-1 backend gives
 * the accelerations and multipliers of the dense KKT LU. */
START_TEST(test_chain50_backends)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "chain:N=50,start=angles,alpha1=40,alpha2=-15", err,
                                      sizeof err),
                     MBS_OK);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    size_t nv = pb.nv, nl = pb.nl;
    double *q = calloc(pb.nq, sizeof *q), *v = calloc(nv, sizeof *v), *l0 = calloc(nl, 8);
    double *a[4], *lam[4];
    int have;
    ck_assert_int_eq(pb.def->initial(&pb, q, v, l0, &have), MBS_OK);
    for (size_t i = 0; i < nv; i++) /* velocities need not be consistent here */
        v[i] = sin(0.7 * (double)i + 0.3);
    static const int kinds[4] = {MBS_LINSOL_LU, MBS_LINSOL_CHOL, MBS_LINSOL_UMFPACK,
                                 MBS_LINSOL_CHOLMOD};
    for (int k = 0; k < 4; k++) {
        a[k] = calloc(nv, sizeof(double));
        lam[k] = calloc(nl, sizeof(double));
        mbs_index1 *w;
        ck_assert_int_eq(mbs_index1_alloc(&w, &ctx, kinds[k]), MBS_OK);
        /* twice: the second call reuses the symbolic analysis */
        for (int rep = 0; rep < 2; rep++)
            ck_assert_msg(mbs_index1_accel(w, &ctx, 0.0, q, v, a[k], lam[k]) == MBS_OK,
                          "linsol %d: %s", kinds[k], ctx.reason);
        const mbs_linsol *ls = mbs_index1_linsol(w);
        if (kinds[k] >= MBS_LINSOL_UMFPACK) {
            ck_assert_ptr_nonnull(ls);
            mbs_linsol_stats st;
            mbs_linsol_get_stats(ls, &st);
            ck_assert_int_eq(st.analyses, kinds[k] == MBS_LINSOL_UMFPACK ? 1 : 2);
            /* cholmod: A = M twice at the same q is factored once, S twice */
            ck_assert_int_eq(st.factorizations, kinds[k] == MBS_LINSOL_UMFPACK ? 2 : 3);
            ck_assert_int_eq(st.solves, 2);
            /* a chain is a path graph: the factors stay O(N) */
            ck_assert_msg(st.fill < 4.0, "fill %g", st.fill);
            ck_assert(st.rcond > 0.0 && st.rcond <= 1.0);
        } else {
            ck_assert_ptr_null(ls);
        }
        mbs_index1_free(w);
    }
    for (int k = 1; k < 4; k++) {
        double da = rel_diff(a[0], a[k], nv), dl = rel_diff(lam[0], lam[k], nl);
        ck_assert_msg(da <= REL && dl <= REL, "backend %d: accel %g lambda %g", kinds[k], da,
                      dl);
    }
    /* the solution satisfies B a = gamma (the hidden constraint) */
    for (int k = 0; k < 4; k++) {
        free(a[k]);
        free(lam[k]);
    }
    free(q);
    free(v);
    free(l0);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

/* A synthetic saddle-point system: block-diagonal SPD M (2x2 blocks), B with
 * nl rows coupling neighbouring blocks; optionally M singular (zero first
 * diagonal block entry) but definite on ker B. */
static void make_system(size_t nv, size_t nl, int singular, mbs_triplets *M, mbs_triplets *B)
{
    M->nnz = B->nnz = 0;
    ck_assert_int_eq(mbs_triplets_reserve(M, 2 * nv), 0);
    ck_assert_int_eq(mbs_triplets_reserve(B, 3 * nl), 0);
    for (size_t b = 0; b + 1 < nv; b += 2) {
        double d = 2.0 + sin((double)b);
        mbs_triplets_push(M, b, b, d);
        mbs_triplets_push(M, b, b + 1, 0.5);
        mbs_triplets_push(M, b + 1, b, 0.5);
        mbs_triplets_push(M, b + 1, b + 1, 1.5 + cos((double)b));
    }
    if (singular) { /* M(0,0) = M(0,1) = 0: row 0 of M vanishes */
        M->val[0] = 0.0;
        M->val[1] = 0.0;
        M->val[2] = 0.0;
    }
    for (size_t i = 0; i < nl; i++) {
        size_t c = (2 * i) % nv;
        mbs_triplets_push(B, i, c, 1.0 + 0.1 * (double)i);
        mbs_triplets_push(B, i, (c + 3) % nv, -0.7);
        mbs_triplets_push(B, i, (c + 1) % nv, 0.2);
    }
}

static void solve_with(int kind, const mbs_triplets *M, const mbs_triplets *B, size_t nv,
                       size_t nl, double aug, const double *f, const double *g, double *a,
                       double *lam)
{
    mbs_linsol *ls;
    char msg[200];
    ck_assert_int_eq(mbs_linsol_alloc(&ls, kind, nv, nl, aug), MBS_OK);
    int s = mbs_linsol_factor(ls, M, B, msg, sizeof msg);
    ck_assert_msg(s == MBS_OK, "%s: %s", mbs_linsol_name(kind), msg);
    ck_assert_int_eq(mbs_linsol_solve(ls, f, g, a, lam, msg, sizeof msg), MBS_OK);
    mbs_linsol_free(&ls);
    ck_assert_ptr_null(ls);
}

/* Conformance battery on the synthetic system, regular and singular M (the
 * range-space backend then uses A = M + w B^T B), and diagonal M (CHOLMOD's
 * L = I: Y = L^-1 P B^T is then formed without the sparse solves). */
START_TEST(test_conformance)
{
    enum { NV = 40, NL = 12 };
    int singular = _i == 1;
    mbs_triplets M = {0}, B = {0};
    make_system(NV, NL, singular, &M, &B);
    if (_i == 2) { /* keep the diagonal of M only */
        size_t k = 0;
        for (size_t m = 0; m < M.nnz; m++)
            if (M.row[m] == M.col[m]) {
                M.row[k] = M.row[m];
                M.col[k] = M.col[m];
                M.val[k++] = M.val[m];
            }
        M.nnz = k;
    }
    double f[NV], g[NL], a[3][NV], lam[3][NL];
    for (size_t i = 0; i < NV; i++)
        f[i] = cos(1.3 * (double)i);
    for (size_t i = 0; i < NL; i++)
        g[i] = 0.1 * (double)i - 0.4;
    for (int k = 0; k < 3; k++)
        solve_with(k, &M, &B, NV, NL, singular ? 1.0 : 0.0, f, g, a[k], lam[k]);
    for (int k = 1; k < 3; k++) {
        double da = rel_diff(a[0], a[k], NV), dl = rel_diff(lam[0], lam[k], NL);
        ck_assert_msg(da <= REL && dl <= REL, "%s (singular %d): %g %g", mbs_linsol_name(k),
                      singular, da, dl);
    }
    /* residuals of the KKT equations with the dense solution */
    double r[NV], rb[NL];
    memcpy(r, f, sizeof r);
    for (size_t i = 0; i < NL; i++)
        rb[i] = -g[i];
    for (size_t k = 0; k < M.nnz; k++)
        r[M.row[k]] -= M.val[k] * a[2][M.col[k]];
    for (size_t k = 0; k < B.nnz; k++) {
        r[B.col[k]] -= B.val[k] * lam[2][B.row[k]];
        rb[B.row[k]] += B.val[k] * a[2][B.col[k]];
    }
    for (size_t i = 0; i < NV; i++)
        ck_assert_double_le(fabs(r[i]), 1e-12);
    for (size_t i = 0; i < NL; i++)
        ck_assert_double_le(fabs(rb[i]), 1e-12);
    mbs_triplets_free(&M);
    mbs_triplets_free(&B);
}
END_TEST

/* Two right-hand sides in one mbs_linsol_solve_k call (the real and imaginary
 * part of Radau's complex block): each column equals the single-column solve
 * on the same factorisation exactly for every backend, regular and singular M
 * (CHOLMOD on M + w B^T B); the work counter counts both columns; k = 0 or
 * more than MBS_LINSOL_MAX_RHS columns is bad input (sparse_dae's
 * test_stages_solve covers 3, 5 and 7 columns). */
START_TEST(test_two_columns)
{
    enum { NV = 40, NL = 12 };
    int kind = _i % 3, singular = _i / 3;
    mbs_triplets M = {0}, B = {0};
    make_system(NV, NL, singular, &M, &B);
    double f[2 * NV], g[2 * NL], a[2 * NV], lam[2 * NL], a1[NV], l1[NL];
    for (size_t i = 0; i < 2 * NV; i++)
        f[i] = cos(1.3 * (double)i) + (i >= NV ? 0.25 : 0.0);
    for (size_t i = 0; i < 2 * NL; i++)
        g[i] = 0.1 * (double)i - 0.4;
    mbs_linsol *ls;
    char msg[200];
    ck_assert_int_eq(mbs_linsol_alloc(&ls, kind, NV, NL, singular ? 1.0 : 0.0), MBS_OK);
    ck_assert_int_eq(mbs_linsol_factor(ls, &M, &B, msg, sizeof msg), MBS_OK);
    /* twice: the second call reuses CHOLMOD's two-column workspace */
    for (int rep = 0; rep < 2; rep++)
        ck_assert_int_eq(mbs_linsol_solve_k(ls, 2, f, g, a, lam, msg, sizeof msg), MBS_OK);
    for (int c = 0; c < 2; c++) {
        ck_assert_int_eq(mbs_linsol_solve(ls, f + c * NV, g + c * NL, a1, l1, msg, sizeof msg),
                         MBS_OK);
        for (size_t i = 0; i < NV; i++)
            ck_assert_msg(a1[i] == a[c * NV + i], "%s column %d a[%zu]: %.17g vs %.17g",
                          mbs_linsol_name(kind), c, i, a1[i], a[c * NV + i]);
        for (size_t i = 0; i < NL; i++)
            ck_assert_msg(l1[i] == lam[c * NL + i], "%s column %d lambda[%zu]",
                          mbs_linsol_name(kind), c, i);
    }
    mbs_linsol_stats st;
    mbs_linsol_get_stats(ls, &st);
    ck_assert_int_eq(st.solves, 6);
    /* rejected before any column is read */
    ck_assert_int_eq(mbs_linsol_solve_k(ls, MBS_LINSOL_MAX_RHS + 1, f, g, a, lam, msg, sizeof msg),
                     MBS_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(msg, "right-hand sides (1 to"));
    ck_assert_int_eq(mbs_linsol_solve_k(ls, 0, f, g, a, lam, msg, sizeof msg), MBS_BAD_INPUT);
    mbs_linsol_free(&ls);
    mbs_triplets_free(&M);
    mbs_triplets_free(&B);
}
END_TEST

/* One symbolic analysis per pattern: new values reuse it, a new pattern
 * triggers another. */
START_TEST(test_pattern_reuse)
{
    enum { NV = 20, NL = 6 };
    int kind = 1 + _i; /* umfpack, cholmod */
    int per = kind == MBS_LS_UMFPACK ? 1 : 2;
    mbs_triplets M = {0}, B = {0};
    make_system(NV, NL, 0, &M, &B);
    mbs_linsol *ls;
    char msg[200];
    ck_assert_int_eq(mbs_linsol_alloc(&ls, kind, NV, NL, 0.0), MBS_OK);
    mbs_linsol_stats st;
    for (int rep = 0; rep < 3; rep++) {
        M.val[0] = 2.0 + rep; /* new values, same pattern */
        ck_assert_int_eq(mbs_linsol_factor(ls, &M, &B, msg, sizeof msg), MBS_OK);
    }
    mbs_linsol_get_stats(ls, &st);
    ck_assert_int_eq(st.analyses, per);
    ck_assert_int_eq(st.factorizations, 3 * per);
    /* the same values again: CHOLMOD keeps the factor of A (bit-identical
     * values), factors S only, and solves exactly as before */
    double f[NV], g[NL], a1[NV], l1[NL], a2[NV], l2[NL];
    for (size_t i = 0; i < NV; i++)
        f[i] = cos(0.9 * (double)i);
    for (size_t i = 0; i < NL; i++)
        g[i] = 0.2 * (double)i - 0.3;
    ck_assert_int_eq(mbs_linsol_solve(ls, f, g, a1, l1, msg, sizeof msg), MBS_OK);
    ck_assert_int_eq(mbs_linsol_factor(ls, &M, &B, msg, sizeof msg), MBS_OK);
    ck_assert_int_eq(mbs_linsol_solve(ls, f, g, a2, l2, msg, sizeof msg), MBS_OK);
    mbs_linsol_get_stats(ls, &st);
    ck_assert_int_eq(st.factorizations, 3 * per + (kind == MBS_LS_CHOLMOD ? 1 : per));
    for (size_t i = 0; i < NV; i++)
        ck_assert(a1[i] == a2[i]);
    for (size_t i = 0; i < NL; i++)
        ck_assert(l1[i] == l2[i]);
    /* extra coupling entry: new pattern */
    ck_assert_int_eq(mbs_triplets_reserve(&B, 1), 0);
    mbs_triplets_push(&B, 0, NV - 1, 0.3);
    ck_assert_int_eq(mbs_linsol_factor(ls, &M, &B, msg, sizeof msg), MBS_OK);
    mbs_linsol_get_stats(ls, &st);
    /* umfpack: KKT again; cholmod: A again, S only if its pattern changed */
    ck_assert_int_ge(st.analyses, per + 1);
    ck_assert_int_le(st.analyses, 2 * per);
    mbs_linsol_free(&ls);
    mbs_triplets_free(&M);
    mbs_triplets_free(&B);
}
END_TEST

/* Dependent constraint rows: every backend reports a singular matrix (no
 * crash, no garbage); out-of-range triplets and bad kinds are bad input. */
START_TEST(test_errors)
{
    enum { NV = 10, NL = 3 };
    int kind = _i;
    mbs_triplets M = {0}, B = {0};
    make_system(NV, NL, 0, &M, &B);
    /* row 2 := row 0 */
    for (size_t k = 0; k < B.nnz; k++)
        if (B.row[k] == 2)
            B.row[k] = 1, B.val[k] = 0.0; /* keep the pattern valid, move to row 1 */
    for (size_t k = 0, n = B.nnz; k < n; k++)
        if (B.row[k] == 0) {
            ck_assert_int_eq(mbs_triplets_reserve(&B, 1), 0);
            mbs_triplets_push(&B, 2, B.col[k], B.val[k]);
        }
    mbs_linsol *ls;
    char msg[200];
    double f[NV] = {1.0}, g[NL] = {0.0}, a[NV], l[NL];
    ck_assert_int_eq(mbs_linsol_alloc(&ls, kind, NV, NL, 0.0), MBS_OK);
    msg[0] = '\0';
    int s = mbs_linsol_factor(ls, &M, &B, msg, sizeof msg);
    if (s == MBS_OK) /* LU may only notice in the solve */
        s = mbs_linsol_solve(ls, f, g, a, l, msg, sizeof msg);
    ck_assert_msg(s == MBS_SINGULAR_MATRIX, "%s: status %d (%s)", mbs_linsol_name(kind), s,
                  msg);
    ck_assert(strlen(msg) > 0);
    M.row[0] = NV; /* out of range */
    ck_assert_int_eq(mbs_linsol_factor(ls, &M, &B, msg, sizeof msg), MBS_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(msg, "outside"));
    mbs_linsol_free(&ls);
    mbs_linsol_free(&ls); /* NULL is fine */
    ck_assert_int_eq(mbs_linsol_alloc(&ls, 7, NV, NL, 0.0), MBS_BAD_INPUT);
    ck_assert_ptr_null(ls);
    mbs_triplets_free(&M);
    mbs_triplets_free(&B);
}
END_TEST

/* Whole runs: every method with the index-1 `linsol` parameter (index1 rk4 and
 * dopri5, Baumgarte, projected index-1, half-explicit DOPRI5) gives the same
 * trajectory on the chain with every backend (same steps, same state). */
START_TEST(test_runs)
{
    static const char *const m[] = {"index1/rk4", "index1/dopri5", "baumgarte/dopri5",
                                    "proj-index1/dopri5", "index1/hedopri5"};
    const char *meth = m[_i];
    char spec[96];
    mbs_record ref, rec;
    int adaptive = _i >= 1;
    snprintf(spec, sizeof spec, "%s:linsol=lu", meth);
    mbs_test_run("chain:N=12,start=angles,alpha1=30", spec, adaptive ? NAN : 0.005,
                 adaptive ? 1e-8 : NAN, 1.0, &ref);
    ck_assert_int_eq(ref.status, MBS_OK);
    size_t n = ref.nq + ref.nv + ref.nl;
    for (int k = 0; k < 2; k++) {
        snprintf(spec, sizeof spec, "%s:linsol=%s", meth, k ? "cholmod" : "umfpack");
        mbs_test_run("chain:N=12,start=angles,alpha1=30", spec, adaptive ? NAN : 0.005,
                     adaptive ? 1e-8 : NAN, 1.0, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", spec, rec.reason);
        double d = rel_diff(ref.final, rec.final, n);
        ck_assert_msg(d <= 1e-9, "%s differs from lu by %g", spec, d);
        ck_assert_int_eq(rec.cnt.steps, ref.cnt.steps);
        mbs_record_free(&rec);
    }
    mbs_record_free(&ref);
}
END_TEST


/* ---- recursive O(N) formalism ([arnold2013recursive] Sect. 3) ------------------------------- */

typedef struct opened {
    mbs_problem pb;
    mbs_ctx ctx;
} opened;

static void open_pb(opened *o, const char *spec)
{
    char err[256];
    ck_assert_msg(mbs_problem_open(&o->pb, spec, err, sizeof err) == MBS_OK, "%s", err);
    ck_assert_int_eq(mbs_ctx_init(&o->ctx, &o->pb), MBS_OK);
    mbs_ctx_reset(&o->ctx);
}

static void close_pb(opened *o)
{
    mbs_ctx_free(&o->ctx);
    mbs_problem_close(&o->pb);
}

static void kkt_accel(opened *o, const double *q, const double *v, double *a, double *lam)
{
    mbs_index1 *w;
    ck_assert_int_eq(mbs_index1_alloc(&w, &o->ctx, MBS_LINSOL_LU), MBS_OK);
    ck_assert_msg(mbs_index1_accel(w, &o->ctx, 0.0, q, v, a, lam) == MBS_OK, "%s",
                  o->ctx.reason);
    mbs_index1_free(w);
}

/* Chain N = 50 in joint coordinates: the recursion gives the joint accelerations
 * of the dense minimal-coordinate solve, and the absolute accelerations and
 * joint reactions of the Cartesian KKT solution (mu_i = lambda_i (p_i - p_{i-1})). */
START_TEST(test_recursive_chain)
{
    enum { N = 50 };
    opened J, C;
    open_pb(&J, "chain-joint:N=50");
    open_pb(&C, "chain:N=50");
    double q[N], v[N], a_rec[N], a_kkt[N];
    for (size_t i = 0; i < N; i++) {
        q[i] = 0.3 + 0.9 * sin(0.37 * (double)i);
        v[i] = cos(0.53 * (double)i);
    }
    mbs_recursive *r;
    ck_assert_int_eq(mbs_recursive_alloc(&r, mbs_tree_find(J.pb.def), &J.pb), MBS_OK);
    char msg[200];
    ck_assert_int_eq(mbs_recursive_eval(r, 0.0, q, v, a_rec, msg, sizeof msg), MBS_OK);
    kkt_accel(&J, q, v, a_kkt, NULL);
    double d = rel_diff(a_kkt, a_rec, N);
    ck_assert_msg(d <= REL, "joint accelerations differ from the dense solve by %g", d);
    /* Cartesian state of the same motion */
    double p[2 * N], pd[2 * N], pdd[2 * N], lam[N], x = 0, y = 0, vx = 0, vy = 0;
    for (size_t i = 0; i < N; i++) {
        x += sin(q[i]), y -= cos(q[i]);
        vx += cos(q[i]) * v[i], vy += sin(q[i]) * v[i];
        p[2 * i] = x, p[2 * i + 1] = y, pd[2 * i] = vx, pd[2 * i + 1] = vy;
    }
    kkt_accel(&C, p, pd, pdd, lam);
    double rec_pdd[2 * N], rec_mu[2 * N], kkt_mu[2 * N];
    for (size_t i = 0; i < N; i++) {
        memcpy(rec_pdd + 2 * i, mbs_recursive_pdd(r, i), 2 * sizeof(double));
        memcpy(rec_mu + 2 * i, mbs_recursive_mu(r, i), 2 * sizeof(double));
        double dx = p[2 * i] - (i ? p[2 * i - 2] : 0.0);
        double dy = p[2 * i + 1] - (i ? p[2 * i - 1] : 0.0);
        kkt_mu[2 * i] = lam[i] * dx;
        kkt_mu[2 * i + 1] = lam[i] * dy;
    }
    d = rel_diff(pdd, rec_pdd, 2 * N);
    ck_assert_msg(d <= REL, "absolute accelerations differ from the KKT solution by %g", d);
    d = rel_diff(kkt_mu, rec_mu, 2 * N);
    ck_assert_msg(d <= REL, "joint reactions differ from the KKT multipliers by %g", d);
    mbs_recursive_free(r);
    close_pb(&J);
    close_pb(&C);
}
END_TEST

/* [arnold2013recursive] Sect. 4 (Fig. 3): with m_i > 0 the recursion reproduces the KKT
 * solution of the absolute-coordinate model (problems/twomass.c) and the closed
 * form Mbar_i = diag(m_i + m_j, m_i) of the constrained configuration; with
 * m_i = 0 it yields the limit equations (34), (35a,b) and (36). */
START_TEST(test_recursive_twomass)
{
    int constr = _i % 2, zero = _i / 2;
    double mi = zero ? 0.0 : 0.01, mj = 1.0, c = 100.0, dd = 10.0, l = 1.0;
    char spec[128];
    snprintf(spec, sizeof spec, "twomass-joint:config=%s,mi=%g",
             constr ? "constraint" : "springs", mi);
    opened J;
    open_pb(&J, spec);
    size_t n = J.pb.nv;
    double q[4] = {0.12, -0.07, constr ? 0.3 : 0.9, 0.3}, v[4] = {0.4, -0.2, 0.7, -0.5};
    double a[4];
    mbs_recursive *r;
    ck_assert_int_eq(mbs_recursive_alloc(&r, mbs_tree_find(J.pb.def), &J.pb), MBS_OK);
    char msg[200];
    int s = mbs_recursive_eval(r, 0.0, q, v, a, msg, sizeof msg);
    /* absolute coordinates */
    double p[4], pd[4];
    p[0] = q[0], p[1] = q[1], pd[0] = v[0], pd[1] = v[1];
    if (constr)
        p[2] = q[0] + l, p[3] = q[1] + q[2], pd[2] = v[0], pd[3] = v[1] + v[2];
    else
        p[2] = q[0] + q[2], p[3] = q[1] + q[3], pd[2] = v[0] + v[2], pd[3] = v[1] + v[3];
    double fix = -dd * pd[0] - c * p[0], fiy = -dd * pd[1] - c * p[1], fjx = 0.0;
    if (!constr) {
        double sp = dd * (pd[2] - pd[0]) + c * (p[2] - p[0] - l);
        fix += sp;
        fjx = -sp;
    }
    const double *Mb = mbs_recursive_mbar(r, 0), *res;
    const double *pi = mbs_recursive_pdd(r, 0), *pj = mbs_recursive_pdd(r, 1);
    size_t rank = mbs_recursive_rank(r, 0, &res);
    if (!zero) {
        ck_assert_int_eq(s, MBS_OK);
        ck_assert_int_eq(rank, 2);
        /* against the KKT solution in absolute coordinates */
        snprintf(spec, sizeof spec, "twomass:config=%s,mi=%g", constr ? "constraint" : "springs",
                 mi);
        opened C;
        open_pb(&C, spec);
        double acc[4], lam[1] = {0.0};
        kkt_accel(&C, p, pd, acc, lam);
        double rp[4] = {pi[0], pi[1], pj[0], pj[1]};
        double d = rel_diff(acc, rp, 4);
        ck_assert_msg(d <= REL, "accelerations differ from the KKT solution by %g", d);
        if (constr) {
            /* Mbar_i = diag(m_i + m_j, m_i) (Sect. 4), lambda = mu_jx (Eq. (36)) */
            ck_assert_double_eq_tol(Mb[0], mi + mj, 1e-14);
            ck_assert_double_eq_tol(Mb[1], 0.0, 1e-14);
            ck_assert_double_eq_tol(Mb[3], mi, 1e-14);
            ck_assert_double_eq_tol(mbs_recursive_mu(r, 1)[0], lam[0], 1e-10 * (1 + fabs(lam[0])));
            ck_assert_double_eq_tol((mi + mj) * pi[0], fix, 1e-10 * (1 + fabs(fix)));
        }
        close_pb(&C);
    } else {
        /* m_i = 0: rank-deficient projected mass, a DAE (returned as such) */
        ck_assert_int_eq(s, MBS_SINGULAR_MATRIX);
        ck_assert_ptr_nonnull(strstr(msg, "DAE"));
        if (!constr) {
            /* Mbar_i = 0, r_i = 0; the first-order equations (34): 0 = f_i */
            ck_assert_int_eq(rank, 0);
            for (int k = 0; k < 4; k++)
                ck_assert_double_eq_tol(Mb[k], 0.0, 1e-15);
            double rn = hypot(res[0], res[1]), fn = hypot(fix, fiy);
            ck_assert_double_eq_tol(rn, fn, 1e-12 * (1 + fn));
            /* (35a,b): m_j p_j'' = f_j (q_j'' + q_i'' = p_j'') */
            ck_assert_double_eq_tol(mj * pj[0], fjx, 1e-12 * (1 + fabs(fjx)));
            ck_assert_double_eq_tol(pj[1], 0.0, 1e-12);
        } else {
            /* Mbar_i = diag(m_j, 0), r_i = 1: (m_i + m_j) p_ix'' = f_ix with m_i = 0,
             * the first-order equation 0 = f_iy, mu_jx = -m_j p_ix'' (Eq. (36)) */
            ck_assert_int_eq(rank, 1);
            ck_assert_double_eq_tol(Mb[0], mj, 1e-15);
            ck_assert_double_eq_tol(Mb[3], 0.0, 1e-15);
            ck_assert_double_eq_tol(mj * a[0], fix, 1e-12 * (1 + fabs(fix)));
            ck_assert_double_eq_tol(fabs(res[0]), fabs(fiy), 1e-12 * (1 + fabs(fiy)));
            ck_assert_double_eq_tol(mbs_recursive_mu(r, 1)[0], -mj * pi[0],
                                    1e-12 * (1 + fabs(pi[0])));
        }
    }
    (void)n;
    mbs_recursive_free(r);
    close_pb(&J);
}
END_TEST

/* m_i -> 0: the recursion's accelerations converge to the m_i = 0 limit
 * (36): p_ix'' -> f_ix / m_j, linearly in m_i. */
START_TEST(test_recursive_limit)
{
    double q[3] = {0.12, -0.07, 0.3}, v[3] = {0.4, -0.2, 0.7}, a[3];
    double fix = -10.0 * v[0] - 100.0 * q[0], prev = INFINITY;
    for (int k = 2; k <= 8; k += 2) {
        char spec[96];
        snprintf(spec, sizeof spec, "twomass-joint:config=constraint,mi=1e-%d", k);
        opened J;
        open_pb(&J, spec);
        mbs_recursive *r;
        char msg[200];
        ck_assert_int_eq(mbs_recursive_alloc(&r, mbs_tree_find(J.pb.def), &J.pb), MBS_OK);
        ck_assert_int_eq(mbs_recursive_eval(r, 0.0, q, v, a, msg, sizeof msg), MBS_OK);
        double err = fabs(a[0] - fix / 1.0);
        ck_assert_msg(err <= 2.0 * pow(10.0, -k) * fabs(fix), "m_i = 1e-%d: %g", k, err);
        ck_assert(err < prev);
        prev = err;
        mbs_recursive_free(r);
        close_pb(&J);
    }
}
END_TEST

/* Whole runs: recursive/rk4 = index1/rk4 on chain-joint; declines problems
 * without a tree description. */
START_TEST(test_recursive_runs)
{
    mbs_record a, b;
    mbs_test_run("chain-joint:N=8,alpha1=40,alpha2=-10", "index1/rk4", 0.002, NAN, 1.0, &a);
    mbs_test_run("chain-joint:N=8,alpha1=40,alpha2=-10", "recursive/rk4", 0.002, NAN, 1.0, &b);
    ck_assert_int_eq(a.status, MBS_OK);
    ck_assert_msg(b.status == MBS_OK, "%s", b.reason);
    double d = rel_diff(a.final, b.final, a.nq + a.nv);
    ck_assert_msg(d <= 1e-10, "recursive/rk4 differs from index1/rk4 by %g", d);
    ck_assert_double_le(b.energy_drift, 1e-6);
    mbs_record_free(&a);
    mbs_record_free(&b);
    mbs_test_run("chain:N=3", "recursive/rk4", 0.01, NAN, 0.1, &a);
    ck_assert_int_eq(a.status, MBS_UNSUPPORTED);
    mbs_record_free(&a);
}
END_TEST

/* ---- divide and conquer ([dca_augmented_lagrangian]) -------------------------------------------- */

/* v' and lambda of any explicit formulation ("dca/rk4") at (q, v). */
static int form_accel(opened *o, const char *method, const double *q, const double *v,
                      double *a, double *lam)
{
    const mbs_method_def *m;
    mbs_params p;
    char err[256];
    ck_assert_msg(mbs_method_parse(method, &m, &p, err, sizeof err) == MBS_OK, "%s", err);
    const mbs_explicit_variant *var = m->variant;
    void *ws = NULL;
    int s = var->accel->alloc(&ws, &o->ctx, &p);
    if (s == MBS_OK)
        s = var->accel->eval(ws, &o->ctx, 0.0, q, v, a, lam);
    if (ws)
        var->accel->free_ws(ws);
    return s;
}

/* Independent constraints (chain N = 50, planar five-bar and double loop): the
 * DCA accelerations and multipliers are the KKT solution to 1e-10. */
START_TEST(test_dca_kkt)
{
    static const char *const probs[] = {"chain:N=50,start=angles,alpha1=40,alpha2=-15",
                                        "fivebar", "doubleloop"};
    opened o;
    open_pb(&o, probs[_i]);
    size_t nq = o.pb.nq, nv = o.pb.nv, nl = o.pb.nl;
    double *q = calloc(nq, 8), *v = calloc(nv, 8), *l0 = calloc(nl, 8);
    double *a0 = calloc(nv, 8), *a1 = calloc(nv, 8), *m0 = calloc(nl, 8), *m1 = calloc(nl, 8);
    int have;
    ck_assert_int_eq(o.pb.def->initial(&o.pb, q, v, l0, &have), MBS_OK);
    /* a moving state: consistent velocities from the index-1 accelerations */
    kkt_accel(&o, q, v, a0, m0);
    for (size_t i = 0; i < nv; i++)
        v[i] = 0.3 * a0[i];
    kkt_accel(&o, q, v, a0, m0);
    /* the default: iterated to round-off (rtol_a) */
    ck_assert_int_eq(form_accel(&o, "dca/rk4", q, v, a1, m1), MBS_OK);
    double da = rel_diff(a0, a1, nv), dl = rel_diff(m0, m1, nl);
    ck_assert_msg(da <= REL && dl <= REL, "%s: DCA vs KKT: accel %g lambda %g", probs[_i], da,
                  dl);
    /* with the paper's stopping rule (eps_a = 1e-10, <= 10 iterations) */
    ck_assert_int_eq(form_accel(&o, "dca/rk4:eps_a=1e-10,rtol_a=0", q, v, a1, m1), MBS_OK);
    ck_assert_double_le(rel_diff(a0, a1, nv), 1e-8);
    free(q), free(v), free(l0), free(a0), free(a1), free(m0), free(m1);
    close_pb(&o);
}
END_TEST

/* Redundant constraints: the pendulum stated twice and the spatial five-bar /
 * double loop (3 resp. 6 redundant joint equations): the KKT matrix is singular,
 * DCA still returns the physically unique accelerations (those of the
 * non-redundant pendulum, resp. of the SVD null-space formulation). */
START_TEST(test_dca_redundant)
{
    static const char *const probs[] = {"pendulum:redundant=1", "fivebar3d", "doubleloop3d"};
    opened o;
    open_pb(&o, probs[_i]);
    ck_assert(o.pb.flags & MBS_PB_REDUNDANT);
    size_t nq = o.pb.nq, nv = o.pb.nv, nl = o.pb.nl;
    double *q = calloc(nq, 8), *v = calloc(nv, 8), *l0 = calloc(nl, 8);
    double *a0 = calloc(nv, 8), *a1 = calloc(nv, 8), *m1 = calloc(nl, 8);
    int have;
    ck_assert_int_eq(o.pb.def->initial(&o.pb, q, v, l0, &have), MBS_OK);
    if (_i == 0) {
        opened p1;
        open_pb(&p1, "pendulum");
        kkt_accel(&p1, q, v, a0, m1);
        close_pb(&p1);
    } else {
        ck_assert_int_eq(form_accel(&o, "svd/rk4", q, v, a0, m1), MBS_OK);
    }
    ck_assert_int_eq(form_accel(&o, "dca/rk4", q, v, a1, m1), MBS_OK);
    double da = rel_diff(a0, a1, nv);
    ck_assert_msg(da <= REL, "%s: DCA vs unique accelerations %g", probs[_i], da);
    free(q), free(v), free(l0), free(a0), free(a1), free(m1);
    close_pb(&o);
}
END_TEST

/* [dca_augmented_lagrangian] Figs. 5-7 qualitatively: the projections reduce the position and
 * velocity constraint errors and the energy drift (spatial five-bar, 1 s), at the
 * paper's penalty alpha = 1e6 (Sect. 4.1; at the default 1e12 the plain method's
 * position error stays at its initial 1.1e-12 over the second). */
START_TEST(test_dca_projections)
{
    mbs_record a, b;
    mbs_test_run("fivebar3d", "dca/rk4:alpha=1e6", 2e-3, NAN, 1.0, &a);
    mbs_test_run("fivebar3d", "dca-proj/rk4:alpha=1e6", 2e-3, NAN, 1.0, &b);
    ck_assert_msg(a.status == MBS_OK && b.status == MBS_OK, "%s %s", a.reason, b.reason);
    fprintf(stderr,
            "sparse: fivebar3d 1 s rk4 h=2e-3: dca |g| %.2e |Bv| %.2e drift %.2e; "
            "dca-proj |g| %.2e |Bv| %.2e drift %.2e\n",
            a.res_pos_max, a.res_vel_max, a.energy_drift, b.res_pos_max, b.res_vel_max,
            b.energy_drift);
    ck_assert_double_lt(b.res_pos_max, a.res_pos_max);
    ck_assert_double_lt(b.res_vel_max, a.res_vel_max);
    ck_assert_double_lt(b.energy_drift, a.energy_drift);
    ck_assert_double_le(b.res_vel_max, 1e-11);
    mbs_record_free(&a);
    mbs_record_free(&b);
}
END_TEST

Suite *mbs_suite_sparse(void)
{
    Suite *s = suite_create("sparse");
    TCase *tc = tcase_create("linsol");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_chain50_backends);
    tcase_add_loop_test(tc, test_conformance, 0, 3);
    tcase_add_loop_test(tc, test_pattern_reuse, 0, 2);
    tcase_add_loop_test(tc, test_two_columns, 0, 6);
    tcase_add_loop_test(tc, test_errors, 0, 3);
    tcase_add_loop_test(tc, test_runs, 0, 5);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("recursive");
    tcase_set_timeout(tr, 60);
    tcase_add_test(tr, test_recursive_chain);
    tcase_add_loop_test(tr, test_recursive_twomass, 0, 4);
    tcase_add_test(tr, test_recursive_limit);
    tcase_add_test(tr, test_recursive_runs);
    suite_add_tcase(s, tr);
    TCase *td = tcase_create("dca");
    tcase_set_timeout(td, 60);
    tcase_add_loop_test(td, test_dca_kkt, 0, 3);
    tcase_add_loop_test(td, test_dca_redundant, 0, 3);
    tcase_add_test(td, test_dca_projections);
    suite_add_tcase(s, td);
    return s;
}
