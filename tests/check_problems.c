/* Problems: the battery every registered problem passes (one loop test over the
 * whole registry plus listed variants), and the reproductions of the problem
 * library (heavy-top nutation minimum, chain in minimal vs Cartesian
 * coordinates, small-mass step-count trend, references and "no reference").
 *
 * Battery: harness/probcheck.c (mbs_problem_check, also `mbsbench
 * check-problem`): consistent initial values, G, g_t and gamma against finite
 * differences, M symmetric and definite on ker B, sparse triplets, the exact
 * solution, energy conservation of a tight run (see harness/probcheck.h). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/probcheck.h"
#include "../harness/reference.h"
#include "../harness/refgen.h"
#include "../problems/triplets.h"
#include "testutil.h"

/* Variants run through the battery in addition to every registry default. */
static const char *const variants[] = {
    "chain:N=3,start=angles,alpha1=10,alpha2=-5",
    "chain:N=1",
    "double-pendulum:alpha1=30,alpha2=-20",
    "heavytop:coords=quaternion",
    "heavytop:coords=absolute",
    "heavytop:coords=quaternion,fast=1",
    "heavytop:coords=absolute,fast=1",
    "heavytop:coords=quaternion,norm=1",
    "heavytop:coords=absolute,norm=1",
    "heavytop:coords=rotmat",
    "heavytop:coords=rotmat,fast=1",
    "smallmass:m1=0",
    "smallmass:coords=relative",
    "smallmass:coords=relative,m1=0",
    "smallmass:m1=0.1,d1=1,d2=2,f=3",
    "twomass:config=constraint",
    "twomass:mi=0",
    "twomass:config=constraint,mi=0",
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static double inf_norm(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

typedef struct inst {
    mbs_problem pb;
    mbs_ctx ctx;
    size_t nq, nv, nl, nlc;
    double *q, *v, *lam, *g, *gt, *w, *w2, *hv, *qs;
    gsl_matrix *B, *Bs, *G, *M;
    int have_lambda;
} inst;

static void inst_free(inst *s)
{
    free(s->q), free(s->v), free(s->lam), free(s->g), free(s->gt), free(s->w), free(s->w2);
    free(s->hv), free(s->qs);
    if (s->B)
        gsl_matrix_free(s->B);
    if (s->Bs)
        gsl_matrix_free(s->Bs);
    if (s->G)
        gsl_matrix_free(s->G);
    if (s->M)
        gsl_matrix_free(s->M);
    mbs_ctx_free(&s->ctx);
    mbs_problem_close(&s->pb);
}

static void inst_open(inst *s, const char *spec)
{
    memset(s, 0, sizeof *s);
    char err[512];
    ck_assert_msg(mbs_problem_open(&s->pb, spec, err, sizeof err) == MBS_OK, "%s: %s", spec,
                  err);
    ck_assert_int_eq(mbs_ctx_init(&s->ctx, &s->pb), MBS_OK);
    mbs_ctx_reset(&s->ctx);
    s->nq = s->pb.nq, s->nv = s->pb.nv, s->nl = s->pb.nl;
    s->nlc = s->nl ? s->nl : 1;
    size_t nmax = s->nq + s->nv + s->nlc + s->pb.nx; /* lambda0 then x0 (extended) */
    s->q = calloc(nmax, sizeof(double));
    s->v = calloc(nmax, sizeof(double));
    s->lam = calloc(nmax, sizeof(double));
    s->g = calloc(nmax, sizeof(double));
    s->gt = calloc(nmax, sizeof(double));
    s->w = calloc(nmax, sizeof(double));
    s->w2 = calloc(nmax, sizeof(double));
    s->hv = calloc(nmax, sizeof(double));
    s->qs = calloc(nmax, sizeof(double));
    s->B = gsl_matrix_calloc(s->nlc, s->nv);
    s->Bs = gsl_matrix_calloc(s->nlc, s->nv);
    s->G = gsl_matrix_calloc(s->nlc, s->nq);
    s->M = gsl_matrix_calloc(s->nv, s->nv);
    ck_assert(s->q && s->v && s->lam && s->g && s->gt && s->w && s->w2 && s->hv && s->qs &&
              s->B && s->Bs && s->G && s->M);
    ck_assert_int_eq(s->pb.def->initial(&s->pb, s->q, s->v, s->lam, &s->have_lambda), MBS_OK);
}

static const char *battery_spec(int i, char *buf, size_t len)
{
    size_t n = mbs_problem_count();
    if ((size_t)i < n)
        snprintf(buf, len, "%s", mbs_problem_at((size_t)i)->name);
    else
        snprintf(buf, len, "%s", variants[(size_t)i - n]);
    return buf;
}

START_TEST(battery)
{
    char spec[256], err[512];
    battery_spec(_i, spec, sizeof spec);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert(out != NULL);
    int failed = mbs_problem_check(spec, out, err, sizeof err);
    fclose(out);
    ck_assert_msg(failed == 0, "%s: %s", spec, failed < 0 ? err : text);
    ck_assert(strstr(text, " 0 failed") != NULL);
    free(text);
}
END_TEST

/* ---- reproductions ------------------------------------------------------- */

/* Integrate an unconstrained problem (n_l = 0) with GSL rk8pd through its own
 * callbacks: y = (q, v), q' = H v, M v' = f. */
typedef struct ode_inst {
    inst *s;
    gsl_matrix *LU;
    gsl_permutation *perm;
} ode_inst;

static int ode_rhs(double t, const double y[], double dy[], void *p)
{
    ode_inst *o = p;
    inst *s = o->s;
    size_t nq = s->nq, nv = s->nv;
    if (mbs_qdot(&s->ctx, y, y + nq, dy) != MBS_OK || mbs_mass(&s->ctx, t, y, o->LU) != MBS_OK ||
        mbs_force(&s->ctx, t, y, y + nq, dy + nq) != MBS_OK)
        return GSL_EBADFUNC;
    int sg;
    gsl_vector_view x = gsl_vector_view_array(dy + nq, nv);
    if (gsl_linalg_LU_decomp(o->LU, o->perm, &sg) != GSL_SUCCESS ||
        gsl_linalg_LU_svx(o->LU, o->perm, &x.vector) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    return GSL_SUCCESS;
}

/* [arnold2016dae] Remark 6d: with Euler angles the nutation reaches its minimum
 * theta(t*) = 0.059 rad at t* ~ 1.1 s, and max |q_R'| is about 10x max |Omega|. */
START_TEST(heavytop_nutation_minimum)
{
    inst s;
    inst_open(&s, "heavytop:coords=euler");
    ck_assert_int_eq((int)s.nl, 0);
    ode_inst o = {&s, gsl_matrix_alloc(3, 3), gsl_permutation_alloc(3)};
    gsl_odeiv2_system sys = {ode_rhs, NULL, 6, &o};
    gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, 6);
    gsl_odeiv2_control *ct = gsl_odeiv2_control_y_new(1e-11, 1e-11);
    gsl_odeiv2_evolve *ev = gsl_odeiv2_evolve_alloc(6);
    double y[6], dy[6], t = 0.0, h = 1e-4;
    memcpy(y, s.q, 3 * sizeof(double));
    memcpy(y + 3, s.v, 3 * sizeof(double));
    double th_min = y[1], t_min = 0.0, max_qd = 0.0, max_w = 0.0;
    while (t < 2.0) {
        ck_assert_int_eq(gsl_odeiv2_evolve_apply(ev, ct, st, &sys, &t, 2.0, &h, y), GSL_SUCCESS);
        ck_assert_int_eq(ode_rhs(t, y, dy, &o), GSL_SUCCESS);
        if (y[1] < th_min)
            th_min = y[1], t_min = t;
        max_qd = fmax(max_qd, sqrt(dy[0] * dy[0] + dy[1] * dy[1] + dy[2] * dy[2]));
        max_w = fmax(max_w, sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5]));
    }
    /* Refine the minimum from the sampled steps: theta' = 0 there; the steps near
     * t* are short (theta' changes fast), so the sampled value is within 1e-4. */
    fprintf(stderr, "heavytop: theta_min = %.5f rad at t* = %.4f s; max|q'| / max|Omega| = %.2f\n",
            th_min, t_min, max_qd / max_w);
    ck_assert_double_eq_tol(th_min, 0.059, 0.0005); /* printed to 2 significant digits */
    ck_assert_double_eq_tol(t_min, 1.1, 0.05);      /* "t* ~ 1.1 s" */
    ck_assert_double_ge(max_qd / max_w, 8.0);       /* "larger by a factor of 10" */
    ck_assert_double_le(max_qd / max_w, 12.0);
    gsl_odeiv2_evolve_free(ev);
    gsl_odeiv2_control_free(ct);
    gsl_odeiv2_step_free(st);
    gsl_matrix_free(o.LU);
    gsl_permutation_free(o.perm);
    inst_free(&s);
}
END_TEST

/* The three parametrisations describe one motion: Omega(t_end) agrees. */
START_TEST(heavytop_parametrisations_agree)
{
    const char *specs[3] = {"heavytop:coords=euler", "heavytop:coords=quaternion",
                            "heavytop:coords=absolute"};
    double W[3][3];
    for (int k = 0; k < 3; k++) {
        mbs_record rec;
        mbs_test_run(specs[k], "index1/rk8pd", NAN, 1e-11, 1.5, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", specs[k], rec.reason);
        size_t off = rec.nq + (k == 2 ? 3 : 0);
        memcpy(W[k], rec.final + off, sizeof W[k]);
        if (k == 2) /* joint force at t_end: finite and the constraint held */
            ck_assert_double_le(rec.res_pos_end, 1e-9);
        mbs_record_free(&rec);
    }
    for (int k = 1; k < 3; k++)
        for (int i = 0; i < 3; i++)
            ck_assert_double_eq_tol(W[k][i], W[0][i], 1e-8);
}
END_TEST

/* Chain: Cartesian index-1 and minimal angle coordinates agree ([arnold2016dae] Ex. 2-3). */
START_TEST(chain_minimal_vs_cartesian)
{
    const char *specs[] = {"double-pendulum", "chain:N=4,start=angles,alpha1=20,alpha2=10",
                           "chain:N=3"};
    for (size_t k = 0; k < 3; k++) {
        mbs_refgen_spec rs = {.problem = specs[k], .methods = "independent,index1/rk8pd",
                              .tol = 1e-12, .t_end = 2.0, .min_digits = 9.0, .store = 0};
        mbs_refgen_result res;
        char err[1024];
        int rc = mbs_refgen(&rs, &res, err, sizeof err);
        ck_assert_msg(rc == 0, "%s: %s", specs[k], err);
        ck_assert_double_ge(res.digits, 9.0);
    }
}
END_TEST

/* Stored references: `reference` stores with provenance, the harness then
 * reports ref_kind "reference"; without a matching entry it reports "none". */
START_TEST(reference_store_and_none)
{
    char dir[] = "/tmp/mbs-ref-XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    const char *old = getenv("MBSBENCH_REFDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("MBSBENCH_REFDIR", dir, 1);
    mbs_refgen_spec rs = {.problem = "double-pendulum:alpha1=10", .methods = NULL,
                          .tol = 1e-12, .t_end = 1.0, .min_digits = 9.0, .store = 1};
    mbs_refgen_result res;
    char err[1024];
    ck_assert_msg(mbs_refgen(&rs, &res, err, sizeof err) == 0, "%s", err);
    ck_assert(strstr(res.provenance, "agree to") != NULL);
    /* a second entry in the same file must keep the first one intact */
    rs.problem = "double-pendulum:alpha1=12";
    ck_assert_msg(mbs_refgen(&rs, &res, err, sizeof err) == 0, "%s", err);
    mbs_record rec;
    mbs_test_run("double-pendulum:alpha1=12", "index1/dopri5", NAN, 1e-9, 1.0, &rec);
    ck_assert_str_eq(rec.ref_kind, "reference");
    mbs_record_free(&rec);
    mbs_test_run("double-pendulum:alpha1=10", "index1/dopri5", NAN, 1e-9, 1.0, &rec);
    ck_assert_str_eq(rec.ref_kind, "reference");
    ck_assert_double_ge(rec.scd, 6.0);
    mbs_record_free(&rec);
    mbs_test_run("double-pendulum:alpha1=11", "index1/dopri5", NAN, 1e-9, 1.0, &rec);
    ck_assert_str_eq(rec.ref_kind, "none");
    ck_assert(isnan(rec.scd));
    mbs_record_free(&rec);
    /* a problem with an exact solution gets no stored reference */
    rs.problem = "pendulum";
    ck_assert_int_eq(mbs_refgen(&rs, &res, err, sizeof err), 2);
    char path[1024];
    snprintf(path, sizeof path, "%s/double-pendulum.ref", dir);
    remove(path);
    rmdir(dir);
    if (saved) {
        setenv("MBSBENCH_REFDIR", saved, 1);
        free(saved);
    } else {
        unsetenv("MBSBENCH_REFDIR");
    }
}
END_TEST

/* [arnold2013recursive] Fig. 2 trend: an error-controlled implicit integrator at tol 1e-6
 * takes more steps as m1/m2 decreases and few steps at m1 = 0.  (The adaptive
 * BDF methods decline problems without constraints, so Radau IIA is used.) */
START_TEST(smallmass_step_trend)
{
    const double m1[] = {1e-1, 1e-2, 1e-3, 1e-4, 0.0};
    long steps[5];
    for (int k = 0; k < 5; k++) {
        char spec[128];
        snprintf(spec, sizeof spec, "smallmass:m1=%g", m1[k]);
        mbs_record rec;
        mbs_test_run(spec, "index2/radau5", NAN, 1e-6, NAN, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", spec, rec.reason);
        steps[k] = rec.cnt.steps;
        mbs_record_free(&rec);
        fprintf(stderr, "smallmass m1/m2 = %g: %ld steps\n", m1[k], steps[k]);
    }
    for (int k = 1; k < 4; k++) /* steps grow like the frequency, m1^(-1/2) */
        ck_assert_msg(steps[k] >= 2 * steps[k - 1], "steps %ld -> %ld", steps[k - 1], steps[k]);
    ck_assert_msg(steps[4] * 3 < steps[0], "m1 = 0: %ld steps, m1 = 0.1: %ld", steps[4],
                  steps[0]);
}
END_TEST

/* [arnold2013recursive] Sect. 4: the m_i -> 0 limit is regular: the solution at m_i = 1e-6
 * is within O(m_i) of the m_i = 0 solution, in both configurations of Fig. 3. */
START_TEST(twomass_small_mass_limit)
{
    const char *cfg[2] = {"springs", "constraint"};
    for (int k = 0; k < 2; k++) {
        char a[128], b[128];
        snprintf(a, sizeof a, "twomass:config=%s,mi=1e-6", cfg[k]);
        snprintf(b, sizeof b, "twomass:config=%s,mi=0", cfg[k]);
        mbs_record ra, rb;
        mbs_test_run(a, "index2/radau5", NAN, 1e-9, 2.0, &ra);
        mbs_test_run(b, "index2/radau5", NAN, 1e-9, 2.0, &rb);
        ck_assert_msg(ra.status == MBS_OK && rb.status == MBS_OK, "%s / %s: %s %s", a, b,
                      ra.reason, rb.reason);
        for (size_t i = 0; i < ra.nq; i++)
            ck_assert_msg(fabs(ra.final[i] - rb.final[i]) < 1e-4, "%s: q[%zu] %g vs %g", cfg[k],
                          i, ra.final[i], rb.final[i]);
        mbs_record_free(&ra);
        mbs_record_free(&rb);
    }
}
END_TEST

/* The stored references of twomass (config=springs) at t = 5 (its t_end) and 0.5 (the
 * battery's interval) against the exact solution: the problem is linear with constant
 * coefficients, y' = A y + b with y = (p, p'), so y(t) is exp(t [A b; 0 0]) (y0, 1)
 * (GSL's gsl_linalg_exponential_ss; its scaling and squaring of |A t| up to 1e5 is
 * itself good to about 4e-11 here, so the bound is 1e-10; a 40-digit exponential,
 * mpmath, meets the stored states to 14.7 (t = 0.5) and 14.2 (t = 5) digits).  At
 * t = 5 the decaying part of q is 2.3e-9 from the steady motion p_i = 0, p_j = (l, t),
 * at 0.5 still 6.4e-4. */
START_TEST(twomass_exact_reference)
{
    const double mi = 0.01, mj = 1.0, c = 100.0, d = 10.0, l = 1.0, x0 = 0.1, y0 = 0.1;
    gsl_matrix *A = gsl_matrix_calloc(9, 9), *E = gsl_matrix_alloc(9, 9);
    ck_assert(A && E);
    for (size_t k = 0; k < 4; k++)
        gsl_matrix_set(A, k, 4 + k, 1.0);
    /* m_i p_ix'' = -d p_ix' - c p_ix + d (p_jx' - p_ix') + c (p_jx - p_ix - l) */
    gsl_matrix_set(A, 4, 0, -2.0 * c / mi);
    gsl_matrix_set(A, 4, 4, -2.0 * d / mi);
    gsl_matrix_set(A, 4, 2, c / mi);
    gsl_matrix_set(A, 4, 6, d / mi);
    gsl_matrix_set(A, 4, 8, -c * l / mi);
    gsl_matrix_set(A, 5, 1, -c / mi); /* m_i p_iy'' = -d p_iy' - c p_iy */
    gsl_matrix_set(A, 5, 5, -d / mi);
    /* m_j p_jx'' = -d (p_jx' - p_ix') - c (p_jx - p_ix - l), p_jy'' = 0 */
    gsl_matrix_set(A, 6, 2, -c / mj);
    gsl_matrix_set(A, 6, 6, -d / mj);
    gsl_matrix_set(A, 6, 0, c / mj);
    gsl_matrix_set(A, 6, 4, d / mj);
    gsl_matrix_set(A, 6, 8, c * l / mj);
    /* the initial values of problems/twomass.c (p_i' from the m_i = 0 limit: 0 = -d p_ix'
       - c p_ix - d p_ix' + c (p_jx - p_ix - l), 0 = -d p_iy' - c p_iy) */
    const double yi[9] = {x0, y0, l, 0.0, -c * x0 / d, -c * y0 / d, 0.0, 1.0, 1.0};
    mbs_problem pb;
    char err[256], prov[512];
    ck_assert_int_eq(mbs_problem_open(&pb, "twomass", err, sizeof err), MBS_OK);
    const double ts[2] = {0.5, 5.0}, qdist[2] = {6e-4, 3e-9};
    for (int k = 0; k < 2; k++) {
        gsl_matrix *At = gsl_matrix_alloc(9, 9);
        ck_assert(At);
        gsl_matrix_memcpy(At, A);
        gsl_matrix_scale(At, ts[k]);
        ck_assert_int_eq(gsl_linalg_exponential_ss(At, E, GSL_PREC_DOUBLE), GSL_SUCCESS);
        gsl_matrix_free(At);
        double ex[9], ref[8], dev = 0.0, qd = 0.0;
        for (size_t i = 0; i < 9; i++) {
            ex[i] = 0.0;
            for (size_t j = 0; j < 9; j++)
                ex[i] += gsl_matrix_get(E, i, j) * yi[j];
        }
        ck_assert_msg(mbs_reference_find(&pb, ts[k], ref, prov, sizeof prov),
                      "no stored reference at t = %g", ts[k]);
        for (size_t i = 0; i < 8; i++)
            dev = fmax(dev, fabs(ex[i] - ref[i]) / (1.0 + fabs(ex[i])));
        /* distance of q from the steady motion */
        qd = fmax(fmax(fabs(ex[0]), fabs(ex[1])), fabs(ex[2] - l));
        ck_assert_msg(dev < 1e-10, "t = %g: stored vs exact %.3g", ts[k], dev);
        ck_assert_msg(k == 0 ? qd > qdist[k] : qd < qdist[k], "t = %g: distance %.3g", ts[k], qd);
    }
    mbs_problem_close(&pb);
    gsl_matrix_free(A);
    gsl_matrix_free(E);
}
END_TEST

/* The chain scales to N = 1e5 through its triplet callbacks ([arnold2016dae] Ex. 2:
 * 4N - 2 entries in G, M = m I). */
START_TEST(chain_large_sparse)
{
    inst s;
    memset(&s, 0, sizeof s);
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&s.pb, "chain:N=100000", err, sizeof err), MBS_OK);
    ck_assert_int_eq((int)s.pb.nl, 100000);
    double *q = calloc(s.pb.nq, sizeof(double)), *v = calloc(s.pb.nv, sizeof(double));
    double *g = calloc(s.pb.nl, sizeof(double));
    ck_assert(q && v && g);
    int have = 0;
    ck_assert_int_eq(s.pb.def->initial(&s.pb, q, v, NULL, &have), MBS_OK);
    ck_assert_int_eq(s.pb.def->constraint(&s.pb, 0.0, q, g), MBS_OK);
    ck_assert_double_le(inf_norm(g, s.pb.nl), 1e-9);
    mbs_triplets T = {0};
    ck_assert_int_eq(s.pb.def->jacobian_sparse(&s.pb, 0.0, q, &T), MBS_OK);
    ck_assert_uint_eq(T.nnz, 4 * 100000 - 2);
    ck_assert_int_eq(s.pb.def->mass_sparse(&s.pb, 0.0, q, &T), MBS_OK); /* reuses the arrays */
    ck_assert_uint_eq(T.nnz, 2 * 100000);
    mbs_triplets_free(&T);
    free(q), free(v), free(g);
    mbs_problem_close(&s.pb);
}
END_TEST

/* The stored references in problems/ref (run from the project root) are found
 * and met by a tight run of another method. */
START_TEST(stored_references_reproduced)
{
    const char *specs[] = {"double-pendulum", "chain", "heavytop", "heavytop:coords=absolute",
                           "heavytop:coords=rotmat", "twomass:config=constraint"};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        mbs_record rec;
        mbs_test_run(specs[k], "index1/dopri5", NAN, 1e-11, NAN, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", specs[k], rec.reason);
        ck_assert_msg(strcmp(rec.ref_kind, "reference") == 0, "%s: no stored reference",
                      specs[k]);
        ck_assert_msg(rec.mescd >= 8.0, "%s: mescd %.2f against the stored reference", specs[k],
                      rec.mescd);
        mbs_record_free(&rec);
    }
}
END_TEST

START_TEST(bad_parameters_rejected)
{
    const char *bad[] = {"chain:N=0", "chain:N=2.5", "heavytop:coords=euler,fast=1",
                         "heavytop:coords=euler,norm=1", "heavytop:coords=rotmat,norm=1",
                         "smallmass:m1=0,d1=0,d2=0",
                         "twomass:mi=-1", "smallmass:coords=polar"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mbs_problem pb;
        char err[512] = "";
        ck_assert_msg(mbs_problem_open(&pb, bad[k], err, sizeof err) == MBS_BAD_INPUT,
                      "%s accepted", bad[k]);
        ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL, "%s: message '%s'", bad[k],
                      err);
    }
}
END_TEST

Suite *mbs_suite_problems(void)
{
    Suite *s = suite_create("problems");
    TCase *tc = tcase_create("battery");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, battery, 0, (int)(mbs_problem_count() + N_VARIANTS));
    suite_add_tcase(s, tc);
    tc = tcase_create("reproductions");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, heavytop_nutation_minimum);
    tcase_add_test(tc, heavytop_parametrisations_agree);
    tcase_add_test(tc, chain_minimal_vs_cartesian);
    tcase_add_test(tc, reference_store_and_none);
    tcase_add_test(tc, smallmass_step_trend);
    tcase_add_test(tc, twomass_small_mass_limit);
    tcase_add_test(tc, twomass_exact_reference);
    tcase_add_test(tc, bad_parameters_rejected);
    tcase_add_test(tc, chain_large_sparse);
    tcase_add_test(tc, stored_references_reproduced);
    suite_add_tcase(s, tc);
    return s;
}
