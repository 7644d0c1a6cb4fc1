/* Null-space / coordinate-reduction formulations ([pennestri_coordinate_reduction]): accuracy against
 * the exact solutions relative to index1/dopri5 at the same tolerance (dopri5's
 * global error at t_end = 10 is 20-100x tol on these oscillators, so "within
 * 10x of the tolerance" is read as "within 10x of what index1/dopri5 achieves"),
 * agreement of all trajectories, RK4 order, redundant constraints, the bases
 * themselves, the gear train of Sect. 6.1, re-partitioning and bad input. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../harness/reference.h"
#include "../harness/tolrun.h"
#include "../methods/formulations/nullspace.h"
#include "testutil.h"

static const char *const forms[] = {"qr", "putd", "zeroeig", "svd", "schur", "uk", "ukb", "cp"};
enum { N_FORMS = sizeof forms / sizeof forms[0] };
/* cp (recovery of dependent coordinates) and ukb (Baumgarte) integrate a
 * different ODE off the manifold, so their global error differs from index1's;
 * the others compute the same accelerations up to rounding. */
static int same_ode(const char *f)
{
    return strcmp(f, "cp") != 0 && strcmp(f, "ukb") != 0;
}

static const char *const problems[] = {"pendulum", "pendulum-body"};
static const double TOL = 1e-6;

static double max_diff(const double *a, const double *b, size_t n)
{
    double d = 0.0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* Every formulation on both problems: error at t_end within 10x of index1's. */
START_TEST(test_accuracy)
{
    const char *f = forms[_i / 2], *p = problems[_i % 2];
    char m[64];
    snprintf(m, sizeof m, "%s/dopri5", f);
    mbs_record rec, ref;
    mbs_test_run(p, "index1/dopri5", NAN, TOL, NAN, &ref);
    mbs_test_run(p, m, NAN, TOL, NAN, &rec);
    ck_assert_msg(rec.status == MBS_OK, "%s on %s: %s", m, p, rec.reason);
    ck_assert_int_eq(ref.status, MBS_OK);
    ck_assert_msg(rec.err.q <= 10.0 * ref.err.q && rec.err.v <= 10.0 * ref.err.v,
                  "%s on %s: err q %g v %g vs index1 %g %g", m, p, rec.err.q, rec.err.v,
                  ref.err.q, ref.err.v);
    ck_assert_msg(rec.err.lambda <= 10.0 * ref.err.lambda, "%s on %s: err lambda %g vs %g", m,
                  p, rec.err.lambda, ref.err.lambda);
    /* absolute sanity: dopri5 on these problems stays below 100x tol */
    ck_assert_double_le(rec.err.q, 100.0 * TOL);
    size_t n = rec.nq + rec.nv;
    double d = max_diff(rec.final, ref.final, n);
    if (same_ode(f))
        ck_assert_msg(d <= 10.0 * TOL, "%s on %s differs from index1 by %g", m, p, d);
    else
        ck_assert_msg(d <= 10.0 * fmax(ref.err.q, ref.err.v), "%s on %s differs by %g", m, p,
                      d);
    /* cp recovers g = 0 and B v + g_t = 0 to rounding after each step */
    if (strcmp(f, "cp") == 0) {
        ck_assert_double_le(rec.res_pos_max, 1e-12);
        ck_assert_double_le(rec.res_vel_max, 1e-12);
    }
    mbs_record_free(&rec);
    mbs_record_free(&ref);
}
END_TEST

/* All trajectories agree pairwise at t_end: to 10x tol within the group that
 * integrates the same ODE, to 10x index1's global error otherwise. */
START_TEST(test_agreement)
{
    const char *p = problems[_i];
    double fin[N_FORMS][8], err = 0.0;
    size_t n = 0;
    for (int k = 0; k < N_FORMS; k++) {
        char m[64];
        snprintf(m, sizeof m, "%s/dopri5", forms[k]);
        mbs_record rec;
        mbs_test_run(p, m, NAN, TOL, NAN, &rec);
        ck_assert_int_eq(rec.status, MBS_OK);
        n = rec.nq + rec.nv;
        ck_assert(n <= 8);
        memcpy(fin[k], rec.final, n * sizeof(double));
        err = fmax(err, fmax(rec.err.q, rec.err.v));
        mbs_record_free(&rec);
    }
    for (int a = 0; a < N_FORMS; a++)
        for (int b = a + 1; b < N_FORMS; b++) {
            double d = max_diff(fin[a], fin[b], n);
            double lim = same_ode(forms[a]) && same_ode(forms[b]) ? 10.0 * TOL : 10.0 * err;
            ck_assert_msg(d <= lim, "%s: %s vs %s differ by %g > %g", p, forms[a], forms[b], d,
                          lim);
        }
}
END_TEST

/* The fixed-step combination: observed order of F/rk4 on pendulum-body. */
START_TEST(test_rk4_order)
{
    char m[64];
    snprintf(m, sizeof m, "%s/rk4", forms[_i]);
    mbs_record a, b;
    mbs_test_run("pendulum-body", m, 0.02, NAN, NAN, &a);
    mbs_test_run("pendulum-body", m, 0.01, NAN, NAN, &b);
    ck_assert_int_eq(a.status, MBS_OK);
    ck_assert_int_eq(b.status, MBS_OK);
    double p = log2(a.err.q / b.err.q);
    ck_assert_msg(fabs(p - 4.0) <= 0.5, "%s: observed order %g (errors %g, %g)", m, p, a.err.q,
                  b.err.q);
    mbs_record_free(&a);
    mbs_record_free(&b);
}
END_TEST

/* The GSL steppers too: F/rkf45 and F/rk8pd on pendulum-body within 10x of
 * index1 with the same stepper. */
START_TEST(test_gsl_steppers)
{
    static const char *const steppers[] = {"rkf45", "rk8pd"};
    for (int k = 0; k < 2; k++) {
        char m[64], r1[64];
        snprintf(m, sizeof m, "%s/%s", forms[_i], steppers[k]);
        snprintf(r1, sizeof r1, "index1/%s", steppers[k]);
        mbs_record a, b;
        mbs_test_run("pendulum-body", r1, NAN, 1e-8, NAN, &a);
        mbs_test_run("pendulum-body", m, NAN, 1e-8, NAN, &b);
        ck_assert_int_eq(a.status, MBS_OK);
        ck_assert_msg(b.status == MBS_OK, "%s: %s", m, b.reason);
        ck_assert_msg(b.err.q <= 10.0 * a.err.q, "%s: err %g vs %g", m, b.err.q, a.err.q);
        mbs_record_free(&a);
        mbs_record_free(&b);
    }
}
END_TEST

/* Redundant constraints: the robust methods give the same trajectory as
 * without the duplicate, rank 1, and the minimum-norm multipliers (half each);
 * putd and cp decline with a reason. */
START_TEST(test_redundant)
{
    static const char *const robust[] = {"qr", "zeroeig", "svd", "schur", "uk", "ukb"};
    for (size_t k = 0; k < sizeof robust / sizeof robust[0]; k++) {
        char m[64];
        snprintf(m, sizeof m, "%s/dopri5", robust[k]);
        mbs_tolrun a, b;
        ck_assert_int_eq(mbs_tolrun_run("pendulum", m, TOL, TOL, NAN, 0, &a), MBS_OK);
        ck_assert_int_eq(mbs_tolrun_run("pendulum:redundant=1", m, TOL, TOL, NAN, 0, &b),
                         MBS_OK);
        ck_assert_msg(a.status == MBS_OK && b.status == MBS_OK, "%s: %s / %s", m, a.reason,
                      b.reason);
        double d = max_diff(a.final, b.final, 4);
        ck_assert_msg(d <= 1e-9, "%s: redundant trajectory differs by %g", m, d);
        ck_assert(a.have_diag && b.have_diag);
        ck_assert_uint_eq(b.diag.rank_min, 1);
        ck_assert_uint_eq(b.diag.rank_max, 1);
        ck_assert_uint_eq(a.diag.rank_max, 1);
        double l = a.final[4], l1 = b.final[4], l2 = b.final[5];
        ck_assert_msg(fabs(l1 - l2) <= 1e-9 * fabs(l) && fabs(l1 + l2 - l) <= 1e-6 * fabs(l),
                      "%s: multipliers %g %g vs %g", m, l1, l2, l);
    }
    static const char *const fragile[] = {"putd/dopri5", "cp/dopri5", "putd/rk4", "cp/rk4"};
    for (size_t k = 0; k < sizeof fragile / sizeof fragile[0]; k++) {
        mbs_record rec;
        mbs_test_run("pendulum:redundant=1", fragile[k], 0.01, TOL, NAN, &rec);
        ck_assert_int_eq(rec.status, MBS_UNSUPPORTED);
        mbs_record_free(&rec);
        /* the formulation itself refuses too (not only the harness flag) */
        mbs_problem pb;
        char err[256];
        ck_assert_int_eq(mbs_problem_open(&pb, "pendulum:redundant=1", err, sizeof err), MBS_OK);
        const mbs_method_def *m;
        mbs_params mp;
        ck_assert_int_eq(mbs_method_parse(fragile[k], &m, &mp, err, sizeof err), MBS_OK);
        ck_assert(m->flags & MBS_M_NEEDS_FULL_RANK);
        mbs_ctx ctx;
        ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
        mbs_ctx_reset(&ctx);
        void *state = NULL;
        ck_assert_int_eq(m->ops->alloc(m, &mp, &ctx, &state), MBS_UNSUPPORTED);
        ck_assert_msg(strstr(ctx.reason, "full-rank") && strstr(ctx.reason, "redundant"),
                      "%s: reason '%s'", fragile[k], ctx.reason);
        if (state)
            m->ops->free_state(state);
        mbs_ctx_free(&ctx);
        mbs_problem_close(&pb);
    }
}
END_TEST

/* Deterministic pseudo-random numbers in [lo, hi) (local state, no globals). */
static double rnd(unsigned long *s, double lo, double hi)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* The bases: W orthogonal, B V = 0, the rank; putd rejects deficient B. */
START_TEST(test_bases)
{
    unsigned long seed = 12345;
    /* (m, n, rank): full rank, rank deficient, more rows than columns */
    static const size_t shapes[][3] = {{3, 5, 3}, {4, 5, 2}, {7, 4, 3}, {2, 3, 2}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        size_t m = shapes[c][0], n = shapes[c][1], r = shapes[c][2];
        gsl_matrix *L = gsl_matrix_alloc(m, r), *R = gsl_matrix_alloc(r, n);
        gsl_matrix *B = gsl_matrix_alloc(m, n), *W = gsl_matrix_alloc(n, n);
        gsl_matrix *WtW = gsl_matrix_alloc(n, n), *BW = gsl_matrix_alloc(m, n);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < r; j++)
                gsl_matrix_set(L, i, j, rnd(&seed, -1, 1));
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < n; j++)
                gsl_matrix_set(R, i, j, rnd(&seed, -1, 1));
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, L, R, 0.0, B);
        for (int kind = MBS_NS_QR; kind <= MBS_NS_SCHUR; kind++) {
            size_t rank = 99;
            int s = mbs_ns_basis((mbs_ns_kind)kind, B, MBS_NS_RANK_TOL_DEFAULT, W, &rank);
            if (kind == MBS_NS_PUTD && r < m) {
                ck_assert_int_eq(s, MBS_SINGULAR_MATRIX);
                continue;
            }
            ck_assert_msg(s == MBS_OK, "kind %d shape %zu: status %d", kind, c, s);
            ck_assert_msg(rank == r, "kind %d shape %zu: rank %zu != %zu", kind, c, rank, r);
            gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, W, W, 0.0, WtW);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    ck_assert_double_le(fabs(gsl_matrix_get(WtW, i, j) - (i == j)), 1e-12);
            gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, B, W, 0.0, BW);
            double bnorm = 0.0, res = 0.0, yres = INFINITY;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++)
                    bnorm = fmax(bnorm, fabs(gsl_matrix_get(B, i, j)));
            for (size_t j = rank; j < n; j++)
                for (size_t i = 0; i < m; i++)
                    res = fmax(res, fabs(gsl_matrix_get(BW, i, j)));
            for (size_t j = 0; j < rank; j++) { /* Y columns are not in ker B */
                double cn = 0.0;
                for (size_t i = 0; i < m; i++)
                    cn = fmax(cn, fabs(gsl_matrix_get(BW, i, j)));
                yres = fmin(yres, cn);
            }
            ck_assert_msg(res <= 1e-12 * bnorm, "kind %d shape %zu: |B V| = %g", kind, c, res);
            ck_assert(rank == 0 || yres > 1e-6 * bnorm);
        }
        gsl_matrix_free(L);
        gsl_matrix_free(R);
        gsl_matrix_free(B);
        gsl_matrix_free(W);
        gsl_matrix_free(WtW);
        gsl_matrix_free(BW);
    }
    /* the shared rank decision */
    const double sv[] = {3.0, 1e-3, 2.9e-6, 3.1e-6, 0.0};
    ck_assert_uint_eq(mbs_ns_rank(sv, 5, 1e-6), 3); /* 2.9e-6 <= 3e-6 < 3.1e-6 */
    ck_assert_uint_eq(mbs_ns_rank(sv, 5, 1e-3), 1);
    const double zero[] = {0.0, 0.0};
    ck_assert_uint_eq(mbs_ns_rank(zero, 2, 1e-6), 0);
}
END_TEST

/* [pennestri_coordinate_reduction], Sect. 6.1: V = -Gamma_w^-1 Gamma_v (Eq. (42)) of the 2-dof gear
 * train, Psi_w V = 0 (43), and the reduced mass and stiffness matrices (44)-(45)
 * equal the closed forms of Sect. 6.1 for arbitrary positive ratios and
 * inertias.  The orthonormal bases of every decomposition give the same reduced
 * mass matrix after the change of basis V = V_o A, A = V_o^T V. */
START_TEST(test_gear_train)
{
    unsigned long seed = 2026;
    gsl_matrix *Gw = gsl_matrix_alloc(5, 5), *V = gsl_matrix_alloc(5, 2);
    gsl_matrix *Psi = gsl_matrix_alloc(3, 5), *M = gsl_matrix_alloc(5, 5);
    gsl_matrix *K = gsl_matrix_alloc(5, 5), *MV = gsl_matrix_alloc(5, 2);
    gsl_matrix *Mr = gsl_matrix_alloc(2, 2), *Kr = gsl_matrix_alloc(2, 2);
    gsl_matrix *W = gsl_matrix_alloc(5, 5), *A = gsl_matrix_alloc(2, 2);
    gsl_matrix *Mo = gsl_matrix_alloc(2, 2), *T = gsl_matrix_alloc(2, 2);
    gsl_matrix *PV = gsl_matrix_alloc(3, 2);
    gsl_permutation *p = gsl_permutation_alloc(5);
    for (int trial = 0; trial < 20; trial++) {
        double t1 = rnd(&seed, 0.1, 5), t2 = rnd(&seed, 0.1, 5), t3 = rnd(&seed, 0.1, 5);
        double I2 = rnd(&seed, 0.01, 3), I3 = rnd(&seed, 0.01, 3), I4 = rnd(&seed, 0.01, 3);
        double I5 = rnd(&seed, 0.01, 3), I6 = rnd(&seed, 0.01, 3), m5 = rnd(&seed, 0.1, 10);
        double dbc = rnd(&seed, 0.01, 0.5), Kd1 = rnd(&seed, -5, 5), Kd2 = rnd(&seed, -5, 5);
        double Kr_ = rnd(&seed, -5, 5);
        /* Psi_w for w = (w2, w3, w4, w5, w6) (Table 1) */
        const double psi[3][5] = {{1, -t1, 0, 0, 0}, {0, t2 - 1, -t2, 1, 0},
                                  {0, t3 - 1, 0, 1, -t3}};
        gsl_matrix_set_zero(Gw);
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < 5; j++) {
                gsl_matrix_set(Gw, i, j, psi[i][j]);
                gsl_matrix_set(Psi, i, j, psi[i][j]);
            }
        /* Phi_1 = v1' - w2, Phi_2 = v2' - w4: Gamma_w rows -e_w2, -e_w4;
         * Gamma_v = [0; I] */
        gsl_matrix_set(Gw, 3, 0, -1.0);
        gsl_matrix_set(Gw, 4, 2, -1.0);
        int sig;
        ck_assert_int_eq(gsl_linalg_LU_decomp(Gw, p, &sig), 0);
        for (size_t k = 0; k < 2; k++) {
            gsl_vector_view col = gsl_matrix_column(V, k);
            gsl_vector_set_zero(&col.vector);
            gsl_vector_set(&col.vector, 3 + k, -1.0); /* -Gamma_v */
            ck_assert_int_eq(gsl_linalg_LU_svx(Gw, p, &col.vector), 0);
        }
        /* the V printed in Sect. 6.1 */
        const double Vx[5][2] = {{1, 0},
                                 {1 / t1, 0},
                                 {0, 1},
                                 {(1 - t2) / t1, t2},
                                 {(t3 - t2) / (t1 * t3), t2 / t3}};
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 2; j++)
                ck_assert_double_eq_tol(gsl_matrix_get(V, i, j), Vx[i][j],
                                        1e-12 * (1 + fabs(Vx[i][j])));
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, Psi, V, 0.0, PV); /* Eq. (43) */
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < 2; j++)
                ck_assert_double_le(fabs(gsl_matrix_get(PV, i, j)), 1e-12 * (1 + t1 + t2 + t3));
        /* Eq. (44) with M = diag(I2, I3 + m5 dbc^2, I4, I5, I6) */
        gsl_matrix_set_zero(M);
        const double md[5] = {I2, I3 + m5 * dbc * dbc, I4, I5, I6};
        for (size_t i = 0; i < 5; i++)
            gsl_matrix_set(M, i, i, md[i]);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, M, V, 0.0, MV);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, V, MV, 0.0, Mr);
        double a = (t2 - t3) / (t1 * t3);
        double M11 = I2 + (I3 + m5 * dbc * dbc) / (t1 * t1) + pow((t2 - 1) / t1, 2) * I5 +
                     a * a * I6;
        double M12 = (1 - t2) * t2 / t1 * I5 + (t3 - t2) * t2 / (t1 * t3 * t3) * I6;
        double M22 = I4 + I5 * t2 * t2 + t2 * t2 / (t3 * t3) * I6;
        double sc = M11 + M22;
        ck_assert_double_eq_tol(gsl_matrix_get(Mr, 0, 0), M11, 1e-12 * sc);
        ck_assert_double_eq_tol(gsl_matrix_get(Mr, 0, 1), M12, 1e-12 * sc);
        ck_assert_double_eq_tol(gsl_matrix_get(Mr, 1, 0), M12, 1e-12 * sc);
        ck_assert_double_eq_tol(gsl_matrix_get(Mr, 1, 1), M22, 1e-12 * sc);
        /* Eq. (45): K = V^T diag(K_d1 at w2, K_d2 at w4, K_r at the output w6) V */
        gsl_matrix_set_zero(K);
        gsl_matrix_set(K, 0, 0, Kd1);
        gsl_matrix_set(K, 2, 2, Kd2);
        gsl_matrix_set(K, 4, 4, Kr_);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, K, V, 0.0, MV);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, V, MV, 0.0, Kr);
        double K11 = Kd1 + a * a * Kr_, K12 = t2 * (t3 - t2) / (t1 * t3 * t3) * Kr_;
        double K22 = Kd2 + t2 * t2 / (t3 * t3) * Kr_;
        double sk = fabs(Kd1) + fabs(Kd2) + fabs(Kr_) * (1 + a * a + t2 * t2 / (t3 * t3));
        ck_assert_double_eq_tol(gsl_matrix_get(Kr, 0, 0), K11, 1e-12 * sk);
        ck_assert_double_eq_tol(gsl_matrix_get(Kr, 0, 1), K12, 1e-12 * sk);
        ck_assert_double_eq_tol(gsl_matrix_get(Kr, 1, 1), K22, 1e-12 * sk);
        /* every decomposition's orthonormal V_o: V = V_o A, V^T M V = A^T (V_o^T M V_o) A */
        for (int kind = MBS_NS_QR; kind <= MBS_NS_SCHUR; kind++) {
            size_t rank;
            ck_assert_int_eq(mbs_ns_basis((mbs_ns_kind)kind, Psi, MBS_NS_RANK_TOL_DEFAULT, W,
                                          &rank),
                             MBS_OK);
            ck_assert_uint_eq(rank, 3);
            gsl_matrix_view Vo = gsl_matrix_submatrix(W, 0, 3, 5, 2);
            gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &Vo.matrix, V, 0.0, A);
            gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, M, &Vo.matrix, 0.0, MV);
            gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &Vo.matrix, MV, 0.0, Mo);
            gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, Mo, A, 0.0, T);
            gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, A, T, 0.0, Mo);
            for (size_t i = 0; i < 2; i++)
                for (size_t j = 0; j < 2; j++)
                    ck_assert_double_eq_tol(gsl_matrix_get(Mo, i, j), gsl_matrix_get(Mr, i, j),
                                            1e-10 * sc);
        }
    }
    gsl_matrix_free(Gw);
    gsl_matrix_free(V);
    gsl_matrix_free(Psi);
    gsl_matrix_free(M);
    gsl_matrix_free(K);
    gsl_matrix_free(MV);
    gsl_matrix_free(Mr);
    gsl_matrix_free(Kr);
    gsl_matrix_free(W);
    gsl_matrix_free(A);
    gsl_matrix_free(Mo);
    gsl_matrix_free(T);
    gsl_matrix_free(PV);
    gsl_permutation_free(p);
}
END_TEST

/* Coordinate partitioning re-chooses x or y as the dependent coordinate of the
 * pendulum.  60-degree swing (g l = 1): the default pivot_ratio 0.5 keeps the
 * initial partition (min |y| / max(|x|, |y|) = cot 60 = 0.577 at the turning
 * point), pivot_ratio = 0.9 re-partitions beyond 48 degrees.  120-degree swing
 * (g l = 1/3): y passes through 0, so the default must re-partition too.  The
 * accuracy stays within 10x of index1's in all cases. */
static void cp_case(const char *p, const char *m, long min_rep, long max_rep)
{
    const double tol = 1e-8;
    mbs_tolrun ref, a;
    ck_assert_int_eq(mbs_tolrun_run(p, "index1/dopri5", tol, tol, NAN, 0, &ref), MBS_OK);
    ck_assert_int_eq(mbs_tolrun_run(p, m, tol, tol, NAN, 0, &a), MBS_OK);
    ck_assert_int_eq(ref.status, MBS_OK);
    ck_assert_msg(a.status == MBS_OK, "%s %s: %s", p, m, a.reason);
    ck_assert(a.have_diag);
    ck_assert_msg(a.diag.repartitions >= min_rep && a.diag.repartitions <= max_rep,
                  "%s %s: %ld repartitions", p, m, a.diag.repartitions);
    ck_assert_msg(a.err_q <= 10.0 * ref.err_q, "%s %s: err %g vs index1 %g", p, m, a.err_q,
                  ref.err_q);
    ck_assert_double_le(a.res_pos_max, 1e-12);
    ck_assert(a.diag.newton_iters >= a.cnt.steps);
}

START_TEST(test_cp_repartition)
{
    cp_case("pendulum:g=1", "cp/dopri5", 0, 0);
    cp_case("pendulum:g=1", "cp/dopri5:pivot_ratio=0.9", 2, 1000);
    cp_case("pendulum:g=0.3334", "cp/dopri5", 2, 1000);
}
END_TEST

/* The Bricard mechanism (one redundant row of 24, mobility 1) keeps rank 23
 * along its motion.  Off the constraints (the drift of these unprojected
 * integrations, |g| up to 6e-5 at tol 1e-6) the redundant row's singular value
 * rose above rank_tol max s at part of the evaluations: rank 24, the mechanism
 * locked there, 479 of 1044 steps rejected and q 0.1 from the stored
 * reference at t = 10.  The rank may not rise above its value at q0. */
START_TEST(test_redundant_drift)
{
    static const char *const ms[] = {"qr/tsit5", "zeroeig/rkf45", "svd/rkf45", "schur/rkf45",
                                     "uk/rkf45"};
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "bricard", err, sizeof err), MBS_OK);
    ck_assert_uint_eq(pb.nq, 24);
    /* the stored trajectory (svd/rk4 vs qr/rk4, fixed steps; q to 7.3e-11) */
    size_t ny = mbs_ny(&pb);
    double *rows = calloc(101 * ny, sizeof(double)), horizon;
    ck_assert_ptr_nonnull(rows);
    ck_assert_int_eq(mbs_reference_traj_find(&pb, pb.t_end, 100, rows, &horizon, NULL, 0),
                     MBS_REFTRAJ_ROWS);
    const double *ref = rows + 100 * ny; /* t = 10 */
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        mbs_tolrun r;
        ck_assert_int_eq(mbs_tolrun_run("bricard", ms[k], 1e-6, 1e-6, NAN, 0, &r), MBS_OK);
        ck_assert_msg(r.status == MBS_OK, "%s: %s", ms[k], r.reason);
        ck_assert(r.have_diag);
        ck_assert_msg(r.diag.rank_min == 23 && r.diag.rank_max == 23, "%s: rank %zu..%zu",
                      ms[k], r.diag.rank_min, r.diag.rank_max);
        double d = max_diff(r.final, ref, 24);
        ck_assert_msg(d <= 1e-3, "%s: q %g from the reference at t = 10", ms[k], d);
    }
    free(rows);
    mbs_problem_close(&pb);
}
END_TEST

/* Diagnostics, parameters and a non-diagonal mass matrix (uk's eigen path). */
START_TEST(test_diag_and_params)
{
    mbs_tolrun r;
    static const char *const ms[] = {"qr/dopri5", "svd/dopri5", "uk/dopri5", "cp/dopri5"};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        ck_assert_int_eq(mbs_tolrun_run("pendulum-body", ms[k], TOL, TOL, NAN, 0, &r), MBS_OK);
        ck_assert_msg(r.status == MBS_OK, "%s: %s", ms[k], r.reason);
        ck_assert(r.have_diag);
        ck_assert_uint_eq(r.diag.rank_min, 2);
        ck_assert_uint_eq(r.diag.rank_max, 2);
        ck_assert(r.diag.cond_max >= 1.0 && isfinite(r.diag.cond_max));
        ck_assert_int_eq(r.diag.evals, r.cnt.mass_evals);
    }
    ck_assert_int_eq(mbs_tolrun_run("pendulum-body", "index1/dopri5", TOL, TOL, NAN, 0, &r),
                     MBS_OK);
    ck_assert_int_eq(r.have_diag, 0);
    ck_assert_int_eq(mbs_tolrun_run("pendulum-body", "qr/rk4", TOL, TOL, NAN, 0, &r),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_tolrun_run("pendulum-body", "qr/dopri5", 0.0, TOL, NAN, 0, &r),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_tolrun_run("nosuch", "qr/dopri5", TOL, TOL, NAN, 0, &r),
                     MBS_BAD_INPUT);
    const mbs_method_def *m;
    mbs_params mp;
    char err[256];
    ck_assert_int_eq(mbs_method_parse("qr/dopri5:rank_tol=2", &m, &mp, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_method_parse("ukb/rk4:alpha=-1", &m, &mp, err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_method_parse("cp/rk4:pivot_ratio=0", &m, &mp, err, sizeof err),
                     MBS_BAD_INPUT);
    /* free rigid body in director form: M not diagonal, so uk takes M^-1/2 from
     * the eigendecomposition (2 factorizations per evaluation); q, v and the
     * multipliers reproduce index1's */
    mbs_record a, b;
    mbs_test_run("rigidbody", "index1/dopri5", NAN, 1e-8, NAN, &a);
    mbs_test_run("rigidbody", "uk/dopri5", NAN, 1e-8, NAN, &b);
    ck_assert_int_eq(a.status, MBS_OK);
    ck_assert_int_eq(b.status, MBS_OK);
    ck_assert_int_eq(b.cnt.factorizations, 2 * b.cnt.mass_evals);
    ck_assert_double_le(max_diff(a.final, b.final, a.nq + a.nv + a.nl), 1e-7);
    mbs_record_free(&a);
    mbs_record_free(&b);
}
END_TEST

/* [pennestri_coordinate_reduction] Table 2 settings (body pendulum, dopri5, rtol 1e-4, atol 1e-6 as
 * MATLAB's ode45): the paper found the accuracy independent of the method.
 * Here all seven agree with the exact solution within 10x of index1/dopri5's
 * error (itself ~25x rtol: a global error, not the local tolerance), the six
 * that integrate the same ODE agree with each other to rounding-level 1e-9,
 * and cp keeps g = 0 to rounding. */
START_TEST(test_table2_accuracy)
{
    static const char *const seven[] = {"cp", "qr", "putd", "svd", "zeroeig", "schur", "uk"};
    const char *p = "pendulum-body:L=0.5,m=10,Ig=0.1,theta0=-45,g=9.8";
    mbs_tolrun ref, r[7];
    ck_assert_int_eq(mbs_tolrun_run(p, "index1/dopri5", 1e-4, 1e-6, 10.0, 0, &ref), MBS_OK);
    ck_assert_int_eq(ref.status, MBS_OK);
    for (int k = 0; k < 7; k++) {
        char m[64];
        snprintf(m, sizeof m, "%s/dopri5", seven[k]);
        ck_assert_int_eq(mbs_tolrun_run(p, m, 1e-4, 1e-6, 10.0, 0, &r[k]), MBS_OK);
        ck_assert_msg(r[k].status == MBS_OK, "%s: %s", m, r[k].reason);
        ck_assert_msg(r[k].err_q <= 10.0 * ref.err_q, "%s: err %g vs index1 %g", m, r[k].err_q,
                      ref.err_q);
        ck_assert_double_le(r[k].err_q, 0.05); /* sanity: below 10% of the 0.5 m arm */
        if (k > 0)
            ck_assert_msg(max_diff(r[k].final, r[1].final, 6) <= 1e-9, "%s vs qr: %g", m,
                          max_diff(r[k].final, r[1].final, 6));
    }
    ck_assert_double_le(r[0].res_pos_max, 1e-12);
}
END_TEST

Suite *mbs_suite_nullspace(void)
{
    Suite *s = suite_create("nullspace");
    TCase *tc = tcase_create("nullspace");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_accuracy, 0, 2 * N_FORMS);
    tcase_add_loop_test(tc, test_agreement, 0, 2);
    tcase_add_loop_test(tc, test_rk4_order, 0, N_FORMS);
    tcase_add_loop_test(tc, test_gsl_steppers, 0, N_FORMS);
    tcase_add_test(tc, test_redundant);
    tcase_add_test(tc, test_redundant_drift);
    tcase_add_test(tc, test_bases);
    tcase_add_test(tc, test_gear_train);
    tcase_add_test(tc, test_cp_repartition);
    tcase_add_test(tc, test_diag_and_params);
    tcase_add_test(tc, test_table2_accuracy);
    suite_add_tcase(s, tc);
    return s;
}
