/* Problem library part 2: Andrews' squeezing mechanism and the car axis (Test
 * Set for IVP Solvers 2.4) and the closed-loop mechanisms of [dca_augmented_lagrangian] (planar
 * and spatial five-bar and double loop).  Asserts: published initial values and
 * component order, G and gamma against finite differences, stored references
 * (two methods agree, the best method reaches >= 8 scd, agreement with the Test
 * Set's published reference), consistent initial values, rank and redundancy of
 * the spatial formulations, their agreement with the planar ones, energy
 * conservation.  Run from the project root (stored references). */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/reference.h"
#include "../harness/refgen.h"
#include "../problems/problem.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

static void open_pb(mbs_problem *pb, const char *spec)
{
    char err[256];
    ck_assert_msg(mbs_problem_open(pb, spec, err, sizeof err) == MBS_OK, "%s: %s", spec, err);
}

static void initial_state(const mbs_problem *pb, double *y)
{
    int have = 0;
    ck_assert_int_eq(pb->def->initial(pb, y, y + pb->nq, y + pb->nq + pb->nv, &have), MBS_OK);
    ck_assert_int_eq(have, 1);
}

/* B = G H (n_lambda x n_v). */
static void constraint_matrix(const mbs_problem *pb, double t, const double *q, gsl_matrix *B)
{
    gsl_matrix *G = gsl_matrix_alloc(pb->nl, pb->nq);
    ck_assert_int_eq(pb->def->jacobian(pb, t, q, G), MBS_OK);
    if (pb->def->kinematic) {
        gsl_matrix *H = gsl_matrix_alloc(pb->nq, pb->nv);
        ck_assert_int_eq(pb->def->kinematic(pb, q, H), MBS_OK);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, G, H, 0.0, B);
        gsl_matrix_free(H);
    } else {
        gsl_matrix_memcpy(B, G);
    }
    gsl_matrix_free(G);
}

/* q' = H v. */
static void qdot(const mbs_problem *pb, const double *q, const double *v, double *dq)
{
    if (!pb->def->kinematic) {
        memcpy(dq, v, pb->nv * sizeof(double));
        return;
    }
    gsl_matrix *H = gsl_matrix_alloc(pb->nq, pb->nv);
    ck_assert_int_eq(pb->def->kinematic(pb, q, H), MBS_OK);
    gsl_vector_const_view vv = gsl_vector_const_view_array(v, pb->nv);
    gsl_vector_view dv = gsl_vector_view_array(dq, pb->nq);
    gsl_blas_dgemv(CblasNoTrans, 1.0, H, &vv.vector, 0.0, &dv.vector);
    gsl_matrix_free(H);
}

/* phi(t, q, v) = B(t, q) v + g_t(t, q): the velocity-level constraint. */
static void vel_constraint(const mbs_problem *pb, double t, const double *q, const double *v,
                           double *phi)
{
    gsl_matrix *B = gsl_matrix_alloc(pb->nl, pb->nv);
    constraint_matrix(pb, t, q, B);
    for (size_t i = 0; i < pb->nl; i++) {
        phi[i] = 0.0;
        for (size_t j = 0; j < pb->nv; j++)
            phi[i] += gsl_matrix_get(B, i, j) * v[j];
    }
    if (pb->def->constraint_t) {
        double *gt = malloc(pb->nl * sizeof *gt);
        ck_assert_int_eq(pb->def->constraint_t(pb, t, q, gt), MBS_OK);
        for (size_t i = 0; i < pb->nl; i++)
            phi[i] += gt[i];
        free(gt);
    }
    gsl_matrix_free(B);
}

/* Numerical rank (singular values above 1e-9 times the largest). */
static size_t rank_of(const gsl_matrix *A)
{
    size_t m = A->size1, n = A->size2;
    gsl_matrix *U = gsl_matrix_alloc(m > n ? m : n, m > n ? n : m);
    if (m >= n)
        gsl_matrix_memcpy(U, A);
    else
        gsl_matrix_transpose_memcpy(U, A);
    size_t k = U->size2;
    gsl_matrix *V = gsl_matrix_alloc(k, k);
    gsl_vector *s = gsl_vector_alloc(k), *w = gsl_vector_alloc(k);
    ck_assert_int_eq(gsl_linalg_SV_decomp(U, V, s, w), 0);
    size_t r = 0;
    for (size_t i = 0; i < k; i++)
        r += gsl_vector_get(s, i) > 1e-9 * gsl_vector_get(s, 0);
    gsl_matrix_free(U);
    gsl_matrix_free(V);
    gsl_vector_free(s);
    gsl_vector_free(w);
    return r;
}

/* Test Set scd: -log10 max |y_i - ref_i| / |ref_i| over the listed components
 * (all when idx is NULL), skipping exact zeros of the reference (report.f). */
static double testset_scd(const double *y, const double *ref, size_t n, const size_t *idx,
                          size_t nidx)
{
    double e = 0.0;
    size_t cnt = idx ? nidx : n;
    for (size_t k = 0; k < cnt; k++) {
        size_t i = idx ? idx[k] : k;
        if (fabs(ref[i]) < 1e-200)
            continue;
        e = fmax(e, fabs(y[i] - ref[i]) / fabs(ref[i]));
    }
    return -log10(e > 0.0 ? e : 1e-16);
}

/* The state y (q | v | lambda) of `spec` in the published order. */
static size_t to_published(const char *spec, double t, const double *y, double *out)
{
    mbs_problem pb;
    open_pb(&pb, spec);
    size_t n = 0;
    ck_assert(pb.def->published != NULL);
    ck_assert_int_eq(pb.def->published(&pb, t, y, NULL, &n), MBS_OK);
    ck_assert_int_eq(pb.def->published(&pb, t, y, out, &n), MBS_OK);
    mbs_problem_close(&pb);
    return n;
}

/* ---- published initial values and order ------------------------------------- */

START_TEST(andrews_published_initial)
{
    mbs_problem pb;
    open_pb(&pb, "andrews");
    ck_assert_uint_eq(pb.nq, 7);
    ck_assert_uint_eq(pb.nl, 6);
    double y[20], out[27], g[6], phi[6];
    initial_state(&pb, y);
    ck_assert_int_eq(pb.def->constraint(&pb, 0.0, y, g), MBS_OK);
    vel_constraint(&pb, 0.0, y, y + 7, phi);
    for (int i = 0; i < 6; i++) {
        ck_assert_double_le(fabs(g[i]), 1e-15);
        ck_assert_double_le(fabs(phi[i]), 1e-15);
    }
    /* andrews.md Sect. 3: y0'(8..14) = q''0 = M^-1 (f - G^T lambda0). */
    ck_assert_uint_eq(to_published("andrews", 0.0, y, out), 27);
    ck_assert_double_eq_tol(out[14], 14222.4439199541138705911625887, 1e-10 * 14222.44);
    ck_assert_double_eq_tol(out[15], -10666.8329399655854029433719415, 1e-10 * 10666.83);
    for (int i = 16; i < 21; i++)
        ck_assert_double_le(fabs(out[i]), 1e-8);
    ck_assert_double_eq(out[21], 98.5668703962410896057654982170);
    ck_assert_double_eq(out[22], -6.12268834425566265503114393122);
    ck_assert_ptr_nonnull(pb.def->published_scd);
    ck_assert_uint_eq(pb.def->n_published_scd, 7);
    /* B q''0 = gamma (= 0 at rest). */
    double gam[6];
    ck_assert_int_eq(pb.def->gamma(&pb, 0.0, y, y + 7, gam), MBS_OK);
    gsl_matrix *B = gsl_matrix_alloc(6, 7);
    constraint_matrix(&pb, 0.0, y, B);
    for (size_t i = 0; i < 6; i++) {
        double r = -gam[i];
        for (size_t j = 0; j < 7; j++)
            r += gsl_matrix_get(B, i, j) * out[14 + j];
        ck_assert_double_le(fabs(r), 1e-9);
    }
    gsl_matrix_free(B);
    mbs_problem_close(&pb);
}
END_TEST

START_TEST(caraxis_published_initial)
{
    mbs_problem pb;
    open_pb(&pb, "caraxis");
    ck_assert(pb.flags & MBS_PB_RHEONOMIC);
    double y[10], out[10], g[2], phi[2];
    initial_state(&pb, y);
    /* caraxis.md Sect. 3: y(0) = (0, 0.5, 1, 0.5, -0.5, 0, -0.5, 0, 0, 0). */
    const double y0[10] = {0, 0.5, 1, 0.5, -0.5, 0, -0.5, 0, 0, 0};
    ck_assert_uint_eq(to_published("caraxis", 0.0, y, out), 10);
    for (int i = 0; i < 10; i++)
        ck_assert_double_eq(out[i], y0[i]);
    ck_assert_int_eq(pb.def->constraint(&pb, 0.0, y, g), MBS_OK);
    vel_constraint(&pb, 0.0, y, y + 4, phi);
    for (int i = 0; i < 2; i++) {
        ck_assert_double_le(fabs(g[i]), 1e-15);
        ck_assert_double_le(fabs(phi[i]), 1e-15);
    }
    /* Published multiplier sign: lambda_pub = -lambda. */
    double ys[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0.25, -0.5};
    to_published("caraxis", 0.0, ys, out);
    ck_assert_double_eq(out[8], -0.25);
    ck_assert_double_eq(out[9], 0.5);
    /* q'0 = (0, -1, 0, -1) with lambda0 = 0 satisfies B q'0 = gamma. */
    double f[4], gam[2];
    const double a0[4] = {0, -1, 0, -1};
    gsl_matrix *M = gsl_matrix_alloc(4, 4), *B = gsl_matrix_alloc(2, 4);
    pb.def->mass(&pb, 0.0, y, M);
    pb.def->force(&pb, 0.0, y, y + 4, f);
    pb.def->gamma(&pb, 0.0, y, y + 4, gam);
    constraint_matrix(&pb, 0.0, y, B);
    for (size_t i = 0; i < 4; i++)
        ck_assert_double_le(fabs(gsl_matrix_get(M, i, i) * a0[i] - f[i]), 1e-15);
    for (size_t i = 0; i < 2; i++) {
        double r = -gam[i];
        for (size_t j = 0; j < 4; j++)
            r += gsl_matrix_get(B, i, j) * a0[j];
        ck_assert_double_le(fabs(r), 1e-15);
    }
    gsl_matrix_free(M);
    gsl_matrix_free(B);
    mbs_problem_close(&pb);
}
END_TEST

/* ---- G and gamma against finite differences --------------------------------- */

static const char *const fd_specs[] = {"andrews",    "caraxis",   "fivebar",
                                       "doubleloop", "fivebar3d", "doubleloop3d",
                                       "fivebar:hang=0", "ujoint"};

START_TEST(derivatives_fd)
{
    const char *spec = fd_specs[_i];
    mbs_problem pb;
    open_pb(&pb, spec);
    size_t nq = pb.nq, nv = pb.nv, nl = pb.nl;
    double *y = calloc(mbs_ny(&pb), sizeof *y), *q = y, *v = y + nq;
    double *qa = malloc(nq * sizeof *qa), *qb = malloc(nq * sizeof *qb);
    double *ga = malloc(nl * sizeof *ga), *gb = malloc(nl * sizeof *gb);
    double *gam = malloc(nl * sizeof *gam), *dq = malloc(nq * sizeof *dq);
    gsl_matrix *G = gsl_matrix_alloc(nl, nq);
    int have; /* initial multipliers are not needed here (ujoint has none) */
    ck_assert_int_eq(pb.def->initial(&pb, q, v, y + nq + nv, &have), MBS_OK);
    /* A generic state: perturbed positions (Euler parameters renormalised) and
     * arbitrary velocities, at a generic time. */
    for (size_t j = 0; j < nq; j++)
        q[j] += 0.05 * sin(1.7 * (double)j + 0.3);
    if (pb.def->kinematic)
        for (size_t b = 0; b + 6 < nq; b += 7) {
            double n = sqrt(q[b + 3] * q[b + 3] + q[b + 4] * q[b + 4] + q[b + 5] * q[b + 5] +
                            q[b + 6] * q[b + 6]);
            for (size_t k = 3; k < 7; k++)
                q[b + k] /= n;
        }
    double vscale = strcmp(spec, "andrews") == 0 ? 50.0 : 1.0;
    for (size_t j = 0; j < nv; j++)
        v[j] = vscale * cos(0.9 * (double)j + 0.2);
    double t = 0.7 * pb.t_end;
    ck_assert_int_eq(pb.def->jacobian(&pb, t, q, G), MBS_OK);
    double Gmax = 0.0, errG = 0.0;
    for (size_t j = 0; j < nq; j++) {
        double h = 1e-6 * fmax(1.0, fabs(q[j]));
        memcpy(qa, q, nq * sizeof *qa);
        memcpy(qb, q, nq * sizeof *qb);
        qa[j] += h;
        qb[j] -= h;
        pb.def->constraint(&pb, t, qa, ga);
        pb.def->constraint(&pb, t, qb, gb);
        for (size_t i = 0; i < nl; i++) {
            double fd = (ga[i] - gb[i]) / (2.0 * h);
            Gmax = fmax(Gmax, fabs(gsl_matrix_get(G, i, j)));
            errG = fmax(errG, fabs(fd - gsl_matrix_get(G, i, j)));
        }
    }
    ck_assert_msg(errG <= 1e-6 * fmax(1.0, Gmax), "%s: |G - G_fd| = %g", spec, errG);
    /* g_t = dg/dt at fixed q (0 without a constraint_t callback: then g must not
     * depend on t). */
    {
        double ht = 1e-6 * fmax(1.0, fabs(t)), gtmax = 0.0, errgt = 0.0;
        double *gt = calloc(nl, sizeof *gt);
        if (pb.def->constraint_t)
            ck_assert_int_eq(pb.def->constraint_t(&pb, t, q, gt), MBS_OK);
        pb.def->constraint(&pb, t + ht, q, ga);
        pb.def->constraint(&pb, t - ht, q, gb);
        for (size_t i = 0; i < nl; i++) {
            double fd = (ga[i] - gb[i]) / (2.0 * ht);
            gtmax = fmax(gtmax, fabs(gt[i]));
            errgt = fmax(errgt, fabs(fd - gt[i]));
        }
        ck_assert_msg(errgt <= 1e-6 * fmax(1.0, gtmax), "%s: |g_t - g_t,fd| = %g", spec, errgt);
        free(gt);
    }
    /* gamma = -d/dtau [B v + g_t](t + tau, q + tau H v) at fixed v ([arnold2016dae] Eq. (17)). */
    ck_assert_int_eq(pb.def->gamma(&pb, t, q, v, gam), MBS_OK);
    qdot(&pb, q, v, dq);
    double h = 1e-5 * fmin(1.0, pb.t_end), gmax = 0.0, errg = 0.0;
    for (size_t j = 0; j < nq; j++) {
        qa[j] = q[j] + h * dq[j];
        qb[j] = q[j] - h * dq[j];
    }
    vel_constraint(&pb, t + h, qa, v, ga);
    vel_constraint(&pb, t - h, qb, v, gb);
    for (size_t i = 0; i < nl; i++) {
        double fd = -(ga[i] - gb[i]) / (2.0 * h);
        gmax = fmax(gmax, fabs(gam[i]));
        errg = fmax(errg, fabs(fd - gam[i]));
    }
    ck_assert_msg(errg <= 1e-6 * fmax(1.0, gmax), "%s: |gamma - gamma_fd| = %g (|gamma| %g)",
                  spec, errg, gmax);
    /* Mass matrix symmetric and positive definite. */
    gsl_matrix *M = gsl_matrix_alloc(nv, nv);
    ck_assert_int_eq(pb.def->mass(&pb, t, q, M), MBS_OK);
    for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < i; j++)
            ck_assert_double_eq(gsl_matrix_get(M, i, j), gsl_matrix_get(M, j, i));
    ck_assert_int_eq(gsl_linalg_cholesky_decomp1(M), 0);
    gsl_matrix_free(M);
    gsl_matrix_free(G);
    free(y);
    free(qa);
    free(qb);
    free(ga);
    free(gb);
    free(gam);
    free(dq);
    mbs_problem_close(&pb);
}
END_TEST

/* ---- references of the Test Set problems ------------------------------------ */

/* The Test Set's published reference values at t_end (andrews.F SOLN: PSIDE,
 * Cray double precision, tol 1e-14; caraxis: GAMD in quadruple precision, as
 * redistributed in deTestSet R/ex_reference.R), in the published order. */
static const double andrews_published_ref[7] = {
    0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
    -0.5347301163226948,   0.5244099658805304,     0.5347301163226948,
    0.1048080741042263e+1};
static const double caraxis_published_ref[10] = {
    0.493455784275402809122e-1, 0.496989460230171153861,    0.104174252488542151681e1,
    0.373911027265361256927,    -0.770583684040972357970e-1, 0.744686658723778553466e-2,
    0.175568157537232222276e-1, 0.770341043779251976443,     -0.473688659084893324729e-2,
    -0.110468033125734368808e-2};

static void check_testset_reference(const char *name, const double *published_ref, size_t npub,
                                    double min_pub_digits)
{
    mbs_problem pb;
    open_pb(&pb, name);
    size_t ny = mbs_ny(&pb);
    double ref[32], pref[32], py[32];
    char prov[1024];
    ck_assert_msg(mbs_reference_find(&pb, pb.t_end, ref, prov, sizeof prov),
                  "%s: no stored reference (run from the project root)", name);
    size_t np = to_published(name, pb.t_end, ref, pref);
    /* The stored reference agrees with the published one (Test Set scoring on the
     * components given). */
    double dpub = testset_scd(pref, published_ref, npub, NULL, 0);
    ck_assert_msg(dpub >= min_pub_digits, "%s: stored vs published reference %.2f digits",
                  name, dpub);
    /* The best registered method at tight tolerance: >= 8 scd (Test Set scoring). */
    const char *best = mbs_method_find("proj-index1/rk8pd") ? "proj-index1/rk8pd"
                                                             : "index1/rk8pd";
    mbs_record rec;
    mbs_test_run(name, best, NAN, 1e-12, NAN, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_uint_eq(rec.nq + rec.nv + rec.nl, ny);
    to_published(name, pb.t_end, rec.final, py);
    double scd = testset_scd(py, pref, np, pb.def->published_scd, pb.def->n_published_scd);
    ck_assert_msg(scd >= 8.0, "%s: %s tol 1e-12 reaches scd %.2f", name, best, scd);
    mbs_record_free(&rec);
    /* The two independent reference computations agree to >= 8 digits. */
    mbs_refgen_spec rs = {.problem = name, .methods = NULL, .tol = NAN, .t_end = NAN,
                          .min_digits = 8.0, .store = 0};
    mbs_refgen_result res;
    char err[512];
    ck_assert_msg(mbs_refgen(&rs, &res, err, sizeof err) == 0, "%s: %s", name, err);
    ck_assert_double_ge(res.digits, 8.0);
    mbs_problem_close(&pb);
}

START_TEST(andrews_reference)
{
    /* measured: 9.57 digits on q (the published values are trusted to 10-12) */
    check_testset_reference("andrews", andrews_published_ref, 7, 9.0);
    /* An implicit, independent formulation reaches the reference too (measured
     * scd 10.3 at tol 1e-10). */
    if (mbs_method_find("ggl/radau5")) {
        mbs_problem pb;
        open_pb(&pb, "andrews");
        double ref[20], pref[27], py[27];
        ck_assert(mbs_reference_find(&pb, pb.t_end, ref, NULL, 0));
        mbs_record rec;
        mbs_test_run("andrews", "ggl/radau5", NAN, 1e-10, NAN, &rec);
        ck_assert_int_eq(rec.status, MBS_OK);
        to_published("andrews", pb.t_end, ref, pref);
        to_published("andrews", pb.t_end, rec.final, py);
        double scd = testset_scd(py, pref, 27, pb.def->published_scd, pb.def->n_published_scd);
        ck_assert_msg(scd >= 9.0, "andrews ggl/radau5 tol 1e-10: scd %.2f", scd);
        mbs_record_free(&rec);
        mbs_problem_close(&pb);
    }
}
END_TEST

START_TEST(caraxis_reference)
{
    /* measured: 9.19 digits over all 10 components */
    check_testset_reference("caraxis", caraxis_published_ref, 10, 9.0);
}
END_TEST

/* ---- closed loops: initial values, flags, ranks ----------------------------- */

typedef struct loop_case {
    const char *spec;
    int redundant;
    size_t rank_G, rank_B; /* expected ranks of G (q-space) and B = G H */
} loop_case;

static const loop_case loop_cases[] = {
    {"fivebar", 0, 10, 10},        /* 12 coordinates, 2 dof */
    {"doubleloop", 0, 20, 20},     /* 24 coordinates, 4 dof */
    {"fivebar3d", 1, 26, 22},      /* 28 - 2 dof; 24 - 2 dof; 29 rows */
    {"doubleloop3d", 1, 52, 44},   /* 56 - 4; 48 - 4; 58 rows */
    {"fivebar:hang=0", 0, 10, 10}, /* standing: chaotic, still full rank */
};

START_TEST(loops_initial_and_rank)
{
    const loop_case *c = &loop_cases[_i];
    mbs_problem pb;
    open_pb(&pb, c->spec);
    size_t nq = pb.nq, nv = pb.nv, nl = pb.nl;
    ck_assert_int_eq((pb.flags & MBS_PB_REDUNDANT) != 0, c->redundant);
    ck_assert(pb.flags & MBS_PB_CONSERVATIVE);
    double *y = calloc(mbs_ny(&pb), sizeof *y), *g = malloc(nl * sizeof *g);
    double *phi = malloc(nl * sizeof *phi), *f = malloc(nv * sizeof *f);
    double *gam = malloc(nl * sizeof *gam), *acc = malloc(nv * sizeof *acc);
    initial_state(&pb, y);
    const double *q = y, *v = y + nq, *lam = y + nq + nv;
    ck_assert_int_eq(pb.def->constraint(&pb, 0.0, q, g), MBS_OK);
    vel_constraint(&pb, 0.0, q, v, phi);
    for (size_t i = 0; i < nl; i++) {
        ck_assert_msg(fabs(g[i]) <= 1e-15, "%s: g[%zu] = %g", c->spec, i, g[i]);
        ck_assert_double_le(fabs(phi[i]), 1e-15);
    }
    gsl_matrix *G = gsl_matrix_alloc(nl, nq), *B = gsl_matrix_alloc(nl, nv);
    gsl_matrix *M = gsl_matrix_alloc(nv, nv);
    pb.def->jacobian(&pb, 0.0, q, G);
    constraint_matrix(&pb, 0.0, q, B);
    ck_assert_uint_eq(rank_of(G), c->rank_G);
    ck_assert_uint_eq(rank_of(B), c->rank_B);
    ck_assert_uint_eq(nl - rank_of(G), c->redundant ? (nl == 29 ? 3u : 6u) : 0u);
    /* lambda0 consistent: v' = M^-1 (f - B^T lambda0) satisfies B v' = gamma. */
    pb.def->mass(&pb, 0.0, q, M);
    pb.def->force(&pb, 0.0, q, v, f);
    pb.def->gamma(&pb, 0.0, q, v, gam);
    for (size_t j = 0; j < nv; j++) {
        double r = f[j];
        for (size_t i = 0; i < nl; i++)
            r -= gsl_matrix_get(B, i, j) * lam[i];
        acc[j] = r / gsl_matrix_get(M, j, j);
    }
    for (size_t i = 0; i < nl; i++) {
        double r = -gam[i];
        for (size_t j = 0; j < nv; j++)
            r += gsl_matrix_get(B, i, j) * acc[j];
        ck_assert_msg(fabs(r) <= 1e-10, "%s: B v' - gamma = %g in row %zu", c->spec, r, i);
    }
    /* A method that needs full rank declines the redundant formulations. */
    if (c->redundant) {
        mbs_record rec;
        mbs_test_run(c->spec, "index1/rk8pd", NAN, 1e-8, NAN, &rec);
        ck_assert_int_eq(rec.status, MBS_UNSUPPORTED);
        mbs_record_free(&rec);
    }
    gsl_matrix_free(G);
    gsl_matrix_free(B);
    gsl_matrix_free(M);
    free(y);
    free(g);
    free(phi);
    free(f);
    free(gam);
    free(acc);
    mbs_problem_close(&pb);
}
END_TEST

/* Initial accelerations: the spatial formulation (minimum-norm multipliers)
 * reproduces the planar one, and nothing leaves the plane. */
static void accelerations(const char *spec, double *acc, size_t *nb, int *spatial)
{
    mbs_problem pb;
    open_pb(&pb, spec);
    size_t nq = pb.nq, nv = pb.nv, nl = pb.nl;
    double *y = calloc(mbs_ny(&pb), sizeof *y), *f = malloc(nv * sizeof *f);
    gsl_matrix *B = gsl_matrix_alloc(nl, nv), *M = gsl_matrix_alloc(nv, nv);
    initial_state(&pb, y);
    constraint_matrix(&pb, 0.0, y, B);
    pb.def->mass(&pb, 0.0, y, M);
    pb.def->force(&pb, 0.0, y, y + nq, f);
    for (size_t j = 0; j < nv; j++) {
        double r = f[j];
        for (size_t i = 0; i < nl; i++)
            r -= gsl_matrix_get(B, i, j) * y[nq + nv + i];
        acc[j] = r / gsl_matrix_get(M, j, j);
    }
    *spatial = pb.def->kinematic != NULL;
    *nb = nv / (*spatial ? 6 : 3);
    gsl_matrix_free(B);
    gsl_matrix_free(M);
    free(y);
    free(f);
    mbs_problem_close(&pb);
}

START_TEST(loops_spatial_matches_planar)
{
    const char *pairs[2][2] = {{"fivebar", "fivebar3d"}, {"doubleloop", "doubleloop3d"}};
    for (int k = 0; k < 2; k++) {
        double a2[24], a3[48];
        size_t nb2, nb3;
        int s2, s3;
        accelerations(pairs[k][0], a2, &nb2, &s2);
        accelerations(pairs[k][1], a3, &nb3, &s3);
        ck_assert(!s2 && s3);
        ck_assert_uint_eq(nb2, nb3);
        double amax = 0.0;
        for (size_t j = 0; j < 3 * nb2; j++)
            amax = fmax(amax, fabs(a2[j]));
        ck_assert_double_gt(amax, 0.1); /* the mechanism does start to move */
        for (size_t b = 0; b < nb2; b++) {
            const double *p = a2 + 3 * b, *s = a3 + 6 * b;
            ck_assert_double_le(fabs(p[0] - s[0]), 1e-10 * amax); /* x'' */
            ck_assert_double_le(fabs(p[1] - s[1]), 1e-10 * amax); /* y'' */
            ck_assert_double_le(fabs(p[2] - s[5]), 1e-10 * amax); /* theta'' = omega_z' */
            ck_assert_double_le(fabs(s[2]), 1e-10 * amax);        /* z'' */
            ck_assert_double_le(fabs(s[3]), 1e-10 * amax);        /* omega_x' */
            ck_assert_double_le(fabs(s[4]), 1e-10 * amax);        /* omega_y' */
        }
    }
}
END_TEST

/* ---- closed loops: energy and references ------------------------------------ */

START_TEST(loops_energy_and_reference)
{
    const char *specs[] = {"fivebar", "doubleloop", "fivebar:hang=0"};
    for (int k = 0; k < 3; k++) {
        mbs_record rec;
        mbs_test_run(specs[k], "index1/rk8pd", NAN, 1e-10, NAN, &rec);
        ck_assert_int_eq(rec.status, MBS_OK);
        /* Conservative: measured drift 4e-10 (fivebar:hang=0). */
        ck_assert_msg(rec.energy_drift <= 1e-8, "%s: energy drift %g", specs[k],
                      rec.energy_drift);
        ck_assert_double_le(rec.res_pos_max, 1e-8);
        if (k < 2) {
            /* Stored reference (index1/rk8pd vs index1/dopri5 at 1e-13); an
             * independent formulation (projection) reaches it. */
            mbs_record r2;
            mbs_test_run(specs[k], "proj-index1/rk8pd", NAN, 1e-11, NAN, &r2);
            ck_assert_int_eq(r2.status, MBS_OK);
            ck_assert_str_eq(r2.ref_kind, "reference");
            ck_assert_msg(r2.mescd >= 8.0, "%s: mescd %.2f against the stored reference",
                          specs[k], r2.mescd);
            mbs_record_free(&r2);
        }
        mbs_record_free(&rec);
    }
}
END_TEST

/* The stored spatial references (null-space methods on Euler parameters and
 * 5-equation joints) projected onto the plane agree with the stored planar
 * references (index-1 KKT on planar body coordinates): two independent
 * formulations; measured 10.9 (fivebar) and 11.3 (doubleloop) digits. */
static double planar_agreement(const char *planar, const char *spatial, double *offplane)
{
    mbs_problem p2, p3;
    open_pb(&p2, planar);
    open_pb(&p3, spatial);
    double *a = malloc(mbs_ny(&p2) * sizeof *a), *b = malloc(mbs_ny(&p3) * sizeof *b);
    ck_assert_msg(mbs_reference_find(&p2, p2.t_end, a, NULL, 0), "%s: no reference", planar);
    ck_assert_msg(mbs_reference_find(&p3, p3.t_end, b, NULL, 0), "%s: no reference", spatial);
    size_t nb = p2.nq / 3, nq2 = p2.nq, nq3 = p3.nq;
    double worst = 0.0, off = 0.0;
    for (size_t i = 0; i < nb; i++) {
        const double *q2 = a + 3 * i, *v2 = a + nq2 + 3 * i;
        const double *q3 = b + 7 * i, *v3 = b + nq3 + 6 * i;
        double th = 2.0 * atan2(q3[6], q3[3]);
        double dth = remainder(q2[2] - th, 2.0 * M_PI);
        const double pairs[5][2] = {{q2[0], q3[0]}, {q2[1], q3[1]}, {v2[0], v3[0]},
                                    {v2[1], v3[1]}, {v2[2], v3[5]}};
        for (int k = 0; k < 5; k++)
            worst = fmax(worst, fabs(pairs[k][0] - pairs[k][1]) / (1.0 + fabs(pairs[k][0])));
        worst = fmax(worst, fabs(dth) / (1.0 + fabs(q2[2])));
        const double outs[6] = {q3[2], q3[4], q3[5], v3[2], v3[3], v3[4]};
        for (int k = 0; k < 6; k++)
            off = fmax(off, fabs(outs[k]));
    }
    free(a);
    free(b);
    mbs_problem_close(&p2);
    mbs_problem_close(&p3);
    *offplane = off;
    return -log10(worst);
}

START_TEST(loops_spatial_reference)
{
    double off;
    ck_assert_double_ge(planar_agreement("fivebar", "fivebar3d", &off), 10.0);
    ck_assert_double_le(off, 1e-11);
    ck_assert_double_ge(planar_agreement("doubleloop", "doubleloop3d", &off), 10.0);
    ck_assert_double_le(off, 1e-10);
    /* A method that handles redundant constraints reaches the stored reference
     * and conserves energy. */
    mbs_record rec;
    mbs_test_run("fivebar3d", "qr/rk8pd", NAN, 1e-11, NAN, &rec);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_str_eq(rec.ref_kind, "reference");
    ck_assert_msg(rec.mescd >= 8.0, "fivebar3d qr/rk8pd: mescd %.2f", rec.mescd);
    ck_assert_double_le(rec.energy_drift, 1e-8);
    mbs_record_free(&rec);
}
END_TEST

Suite *mbs_suite_problems2(void)
{
    Suite *s = suite_create("problems2");
    TCase *tc = tcase_create("problems2");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, andrews_published_initial);
    tcase_add_test(tc, caraxis_published_initial);
    tcase_add_loop_test(tc, derivatives_fd, 0, (int)(sizeof fd_specs / sizeof fd_specs[0]));
    tcase_add_test(tc, andrews_reference);
    tcase_add_test(tc, caraxis_reference);
    tcase_add_loop_test(tc, loops_initial_and_rank, 0,
                        (int)(sizeof loop_cases / sizeof loop_cases[0]));
    tcase_add_test(tc, loops_spatial_matches_planar);
    tcase_add_test(tc, loops_energy_and_reference);
    if (mbs_method_find("qr/rk8pd"))
        tcase_add_test(tc, loops_spatial_reference);
    suite_add_tcase(s, tc);
    return s;
}
