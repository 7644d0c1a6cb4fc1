/* The problem battery (probcheck.h), moved here from tests/check_problems.c so
 * that `mbsbench check-problem` runs it on any problem, plugins included. */
#include "probcheck.h"

#include <gsl/gsl_eigen.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/formulations/index1.h"
#include "../problems/triplets.h"
#include "cli.h"
#include "run.h"

static const double TOL_CONSISTENT = 1e-12; /* initial values (scaled) */
static const double TOL_FD = 1e-6;          /* finite-difference checks (relative) */
static const double TOL_ENERGY = 1e-7;      /* relative energy drift of a tight run */
static const double TOL_EXACT = 1e-10;      /* exact solution on the manifold */

typedef struct inst {
    mbs_problem pb;
    mbs_ctx ctx;
    const char *spec;
    FILE *out;
    int failed, checks, skipped;
    char why[512]; /* the first violation of the current check */
    size_t nq, nv, nl, nlc;
    double *q, *v, *lam, *g, *gt, *w, *w2, *hv, *qs;
    gsl_matrix *B, *Bs, *G, *M;
    int have_lambda;
} inst;

/* Record the first violation of the current check (later ones are dropped). */
static void violation(inst *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void violation(inst *s, const char *fmt, ...)
{
    if (s->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
}

/* A callback's status: 0, or a violation naming it. */
static int cb(inst *s, int status, const char *what, double t)
{
    if (status != MBS_OK)
        violation(s, "%s callback failed at t = %g: %s%s%s", what, t,
                  mbs_status_message(status), s->ctx.reason[0] ? ": " : "", s->ctx.reason);
    return status != MBS_OK;
}

/* End of a check: one line, ok (with what was measured) or FAIL (the violation). */
static void report(inst *s, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void report(inst *s, const char *name, const char *fmt, ...)
{
    s->checks++;
    if (s->why[0]) {
        s->failed++;
        fprintf(s->out, "  FAIL  %-8s %s\n", name, s->why);
    } else {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        fprintf(s->out, "  ok    %-8s %s\n", name, buf);
    }
    s->why[0] = '\0';
}

/* A check the problem cannot take: one line saying which and why. */
static void skip(inst *s, const char *name, const char *why)
{
    s->skipped++;
    fprintf(s->out, "  skip  %-8s %s\n", name, why);
}

static double inf_norm(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

static double mat_norm(const gsl_matrix *A)
{
    double m = 0.0;
    for (size_t i = 0; i < A->size1; i++)
        for (size_t j = 0; j < A->size2; j++)
            m = fmax(m, fabs(gsl_matrix_get(A, i, j)));
    return m;
}

/* A fixed, reproducible perturbation pattern in [-1, 1]. */
static double pattern(size_t i)
{
    return sin(1.3 * (double)i + 0.7);
}

static void inst_free(inst *s)
{
    free(s->q), free(s->v), free(s->lam), free(s->g), free(s->gt), free(s->w), free(s->w2);
    free(s->hv), free(s->qs);
    gsl_matrix_free(s->B);
    gsl_matrix_free(s->Bs);
    gsl_matrix_free(s->G);
    gsl_matrix_free(s->M);
    mbs_ctx_free(&s->ctx);
    mbs_problem_close(&s->pb);
}

static int inst_open(inst *s, const char *spec, char *err, size_t errlen)
{
    FILE *out = s->out;
    memset(s, 0, sizeof *s);
    s->out = out;
    s->spec = spec;
    if (mbs_problem_open(&s->pb, spec, err, errlen) != MBS_OK)
        return -1;
    if (mbs_ctx_init(&s->ctx, &s->pb) != MBS_OK) {
        mbs_problem_close(&s->pb);
        snprintf(err, errlen, "%s: out of memory", spec);
        return -1;
    }
    mbs_ctx_reset(&s->ctx);
    s->nq = s->pb.nq, s->nv = s->pb.nv, s->nl = s->pb.nl;
    s->nlc = s->nl ? s->nl : 1;
    size_t nmax = s->nq + s->nv + s->nlc + s->pb.nx; /* lambda0 then x0 (extended) */
    double **vec[] = {&s->q, &s->v, &s->lam, &s->g, &s->gt, &s->w, &s->w2, &s->hv, &s->qs};
    int ok = 1;
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++)
        ok &= (*vec[i] = calloc(nmax, sizeof(double))) != NULL;
    s->B = gsl_matrix_calloc(s->nlc, s->nv);
    s->Bs = gsl_matrix_calloc(s->nlc, s->nv);
    s->G = gsl_matrix_calloc(s->nlc, s->nq);
    s->M = gsl_matrix_calloc(s->nv, s->nv);
    if (!ok || !s->B || !s->Bs || !s->G || !s->M) {
        inst_free(s);
        snprintf(err, errlen, "%s: out of memory", spec);
        return -1;
    }
    return 0;
}

/* B v + g_t at (t, q, v) into out; 0 or 1 (a callback failed). */
static int velocity_residual(inst *s, double t, const double *q, const double *v,
                             gsl_matrix *B, double *out)
{
    if (cb(s, mbs_constraint_jacobian(&s->ctx, t, q, B), "jacobian", t) ||
        cb(s, mbs_constraint_t(&s->ctx, t, q, out), "constraint_t", t))
        return 1;
    for (size_t i = 0; i < s->nl; i++)
        for (size_t j = 0; j < s->nv; j++)
            out[i] += gsl_matrix_get(B, i, j) * v[j];
    return 0;
}

static void check_initial(inst *s)
{
    double t0 = s->pb.t0, gmax = 0.0, r = 0.0;
    const char *lam = "";
    if (s->nl == 0) {
        report(s, "initial", "no constraints");
        return;
    }
    if (cb(s, mbs_constraint(&s->ctx, t0, s->q, s->g), "constraint", t0))
        goto done;
    double sq = fmax(1.0, inf_norm(s->q, s->nq));
    gmax = inf_norm(s->g, s->nl);
    /* Extended problems (problems/problem.h, MBS_PB_EXTENDED) are index-2 forms
     * whose published initial values satisfy the position level only to their
     * printed digits (wheelset: 5e-10), and their index-1 system needs lambda in
     * the forces (ext->rhs): tests/check_testset2.c checks their initial values
     * against E y' = F instead; here only the velocity level. */
    int extended = (s->pb.flags & MBS_PB_EXTENDED) != 0;
    if (!extended && gmax > TOL_CONSISTENT * sq * sq) {
        size_t k = 0;
        for (size_t i = 0; i < s->nl; i++)
            if (fabs(s->g[i]) > fabs(s->g[k]))
                k = i;
        violation(s, "|g(q0)| = %.3g > %.0e (g[%zu] = %.3g): q0 is not on the constraint "
                  "manifold", gmax, TOL_CONSISTENT * sq * sq, k, s->g[k]);
        goto done;
    }
    if (velocity_residual(s, t0, s->q, s->v, s->B, s->w))
        goto done;
    double sv = fmax(1.0, mat_norm(s->B) * inf_norm(s->v, s->nv));
    r = inf_norm(s->w, s->nl);
    if (r > TOL_CONSISTENT * sv) {
        size_t k = 0;
        for (size_t i = 0; i < s->nl; i++)
            if (fabs(s->w[i]) > fabs(s->w[k]))
                k = i;
        violation(s, "|B v0 + g_t| = %.3g > %.0e (row %zu): v0 violates the velocity "
                  "constraint", r, TOL_CONSISTENT * sv, k);
        goto done;
    }
    if (extended || (s->pb.flags & (MBS_PB_REDUNDANT | MBS_PB_SINGULAR_MASS)))
        goto done;
    /* lambda0 from the index-1 system ([arnold2016dae] Eq. (17)). */
    mbs_index1 *ix = NULL;
    int st = mbs_index1_alloc(&ix, &s->ctx, MBS_LINSOL_LU);
    if (st == MBS_OK)
        st = mbs_index1_accel(ix, &s->ctx, t0, s->q, s->v, s->w, s->w2);
    mbs_index1_free(ix);
    if (st != MBS_OK) {
        violation(s, "index-1 system at t0 not solvable: %s", s->ctx.reason);
        goto done;
    }
    lam = ", lambda0 from the index-1 system";
    if (s->have_lambda) {
        double sl = fmax(1.0, inf_norm(s->w2, s->nl));
        for (size_t i = 0; i < s->nl; i++)
            if (fabs(s->lam[i] - s->w2[i]) > 1e-8 * sl)
                violation(s, "lambda0[%zu] = %.12g, the index-1 system gives %.12g", i,
                          s->lam[i], s->w2[i]);
        lam = ", lambda0 equal to the index-1 multipliers";
    }
done:
    report(s, "initial", "|g(q0)| = %.2g, |B v0 + g_t| = %.2g%s", gmax, r, lam);
}

/* A test state off the initial one: q1 = q0 + 0.01 p, v1 = v0 + 0.3 p (scaled). */
static double test_state(inst *s, double *q1, double *v1)
{
    double sq = fmax(1.0, inf_norm(s->q, s->nq)), sv = fmax(1.0, inf_norm(s->v, s->nv));
    for (size_t i = 0; i < s->nq; i++)
        q1[i] = s->q[i] + 0.01 * sq * pattern(i);
    for (size_t i = 0; i < s->nv; i++)
        v1[i] = s->v[i] + 0.3 * sv * pattern(i + 7);
    return s->pb.t0 + 0.1 * (s->pb.t_end - s->pb.t0);
}

static void check_jacobian_fd(inst *s, const char *where, double t, const double *q)
{
    double worst = 0.0;
    if (s->nl == 0 || s->pb.nnh == s->nl) {
        report(s, "G", "%s: no position-level constraints", where);
        return;
    }
    if (cb(s, s->pb.def->jacobian(&s->pb, t, q, s->G), "jacobian", t))
        goto done;
    double scale = fmax(1.0, mat_norm(s->G));
    memcpy(s->qs, q, s->nq * sizeof(double));
    for (size_t j = 0; j < s->nq; j++) {
        double h = 1e-6 * fmax(1.0, fabs(q[j]));
        s->qs[j] = q[j] + h;
        if (cb(s, s->pb.def->constraint(&s->pb, t, s->qs, s->w), "constraint", t))
            goto done;
        s->qs[j] = q[j] - h;
        if (cb(s, s->pb.def->constraint(&s->pb, t, s->qs, s->w2), "constraint", t))
            goto done;
        s->qs[j] = q[j];
        /* the last nnh rows are non-holonomic (problem.h): no g to differentiate */
        for (size_t i = 0; i < s->nl - s->pb.nnh; i++) {
            double fd = (s->w[i] - s->w2[i]) / (2.0 * h);
            double Gij = gsl_matrix_get(s->G, i, j), e = fabs(Gij - fd) / scale;
            worst = fmax(worst, e);
            if (e > TOL_FD)
                violation(s, "%s: G[%zu][%zu] = %.10g, finite difference of g[%zu] in q[%zu] "
                          "%.10g", where, i, j, Gij, i, j, fd);
        }
    }
done:
    report(s, "G", "%s: max |G - finite difference| / max(1, |G|) = %.1e", where, worst);
}

/* g_t = d/dt g at fixed q (holonomic rows), where the problem gives constraint_t. */
static void check_gt_fd(inst *s, const char *where, double t, const double *q)
{
    double worst = 0.0;
    size_t nh = s->nl - s->pb.nnh;
    if (!s->pb.def->constraint_t || nh == 0) {
        if (strcmp(where, "off q0") == 0) /* said once */
            skip(s, "g_t", nh == 0 ? "no holonomic constraints"
                                   : "no constraint_t callback (scleronomic: g does not "
                                     "depend on t)");
        return;
    }
    double h = 1e-6 * fmax(1.0, fabs(t));
    if (cb(s, s->pb.def->constraint_t(&s->pb, t, q, s->gt), "constraint_t", t) ||
        cb(s, s->pb.def->constraint(&s->pb, t + h, q, s->w), "constraint", t + h) ||
        cb(s, s->pb.def->constraint(&s->pb, t - h, q, s->w2), "constraint", t - h))
        goto done;
    double scale = fmax(1.0, inf_norm(s->gt, nh));
    for (size_t i = 0; i < nh; i++) {
        double fd = (s->w[i] - s->w2[i]) / (2.0 * h), e = fabs(s->gt[i] - fd) / scale;
        worst = fmax(worst, e);
        if (e > TOL_FD)
            violation(s, "%s: g_t[%zu] = %.10g, finite difference of g[%zu] in t %.10g", where,
                      i, s->gt[i], i, fd);
    }
done:
    report(s, "g_t", "%s: max |g_t - finite difference| / max(1, |g_t|) = %.1e", where, worst);
}

/* gamma = -d/ds (B v + g_t)(t + s, q + s H v) at s = 0 with v fixed. */
static void check_gamma_fd(inst *s, const char *where, double t, const double *q,
                           const double *v)
{
    double worst = 0.0;
    if (s->nl == 0) {
        report(s, "gamma", "%s: no constraints", where);
        return;
    }
    double *gam = calloc(s->nlc, sizeof(double)), *fp = calloc(s->nlc, sizeof(double));
    if (!gam || !fp) {
        violation(s, "out of memory");
        goto done;
    }
    if (cb(s, mbs_gamma(&s->ctx, t, q, v, gam), "gamma", t) ||
        cb(s, mbs_qdot(&s->ctx, q, v, s->hv), "kinematic", t))
        goto done;
    double h = 1e-6 / fmax(1.0, inf_norm(s->hv, s->nq));
    for (size_t i = 0; i < s->nq; i++)
        s->qs[i] = q[i] + h * s->hv[i];
    if (velocity_residual(s, t + h, s->qs, v, s->Bs, fp))
        goto done;
    for (size_t i = 0; i < s->nq; i++)
        s->qs[i] = q[i] - h * s->hv[i];
    if (velocity_residual(s, t - h, s->qs, v, s->Bs, s->w2))
        goto done;
    double scale = fmax(1.0, inf_norm(gam, s->nl));
    for (size_t i = 0; i < s->nl; i++) {
        double fd = -(fp[i] - s->w2[i]) / (2.0 * h);
        double e = fabs(gam[i] - fd) / fmax(scale, fabs(fd));
        worst = fmax(worst, e);
        if (e > TOL_FD)
            violation(s, "%s: gamma[%zu] = %.10g, finite difference of -(B v + g_t)[%zu] "
                      "along the motion %.10g", where, i, gam[i], i, fd);
    }
done:
    free(gam);
    free(fp);
    report(s, "gamma", "%s: max |gamma - finite difference| / max(1, |gamma|) = %.1e", where,
           worst);
}

static void check_mass(inst *s, double t, const double *q)
{
    size_t nv = s->nv;
    double minq = INFINITY, mine = INFINITY;
    gsl_matrix *A = gsl_matrix_alloc(nv, nv), *Z = gsl_matrix_alloc(nv, nv);
    gsl_vector *ev = gsl_vector_alloc(nv);
    gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc(nv);
    if (!A || !Z || !ev || !ws) {
        violation(s, "out of memory");
        goto done;
    }
    if (cb(s, mbs_mass(&s->ctx, t, q, s->M), "mass", t))
        goto done;
    double mn = mat_norm(s->M);
    if (!(mn > 0.0)) {
        violation(s, "M = 0");
        goto done;
    }
    for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < i; j++)
            if (fabs(gsl_matrix_get(s->M, i, j) - gsl_matrix_get(s->M, j, i)) > 1e-12 * mn)
                violation(s, "M not symmetric: M[%zu][%zu] = %.10g, M[%zu][%zu] = %.10g", i, j,
                          gsl_matrix_get(s->M, i, j), j, i, gsl_matrix_get(s->M, j, i));
    if (s->why[0])
        goto done;
    gsl_matrix_memcpy(A, s->M);
    if (gsl_eigen_symmv(A, ev, Z, ws) != GSL_SUCCESS) {
        violation(s, "eigenvalues of M not computable");
        goto done;
    }
    for (size_t i = 0; i < nv; i++) {
        mine = fmin(mine, gsl_vector_get(ev, i));
        if (gsl_vector_get(ev, i) < -1e-12 * mn)
            violation(s, "M is not positive semi-definite: eigenvalue %.3g",
                      gsl_vector_get(ev, i));
    }
    if (s->why[0])
        goto done;
    /* ker B from the eigenvectors of B^T B with (relatively) zero eigenvalue. */
    gsl_matrix_set_zero(A);
    if (s->nl > 0) {
        if (cb(s, mbs_constraint_jacobian(&s->ctx, t, q, s->B), "jacobian", t))
            goto done;
        for (size_t i = 0; i < nv; i++)
            for (size_t j = 0; j < nv; j++) {
                double a = 0.0;
                for (size_t k = 0; k < s->nl; k++)
                    a += gsl_matrix_get(s->B, k, i) * gsl_matrix_get(s->B, k, j);
                gsl_matrix_set(A, i, j, a);
            }
    }
    double bn = mat_norm(A);
    if (gsl_eigen_symmv(A, ev, Z, ws) != GSL_SUCCESS) {
        violation(s, "eigenvalues of B^T B not computable");
        goto done;
    }
    for (size_t k = 0; k < nv; k++) {
        if (gsl_vector_get(ev, k) > 1e-10 * bn && bn > 0.0)
            continue;
        gsl_vector_view z = gsl_matrix_column(Z, k);
        double zMz = 0.0;
        for (size_t i = 0; i < nv; i++)
            for (size_t j = 0; j < nv; j++)
                zMz += gsl_vector_get(&z.vector, i) * gsl_matrix_get(s->M, i, j) *
                       gsl_vector_get(&z.vector, j);
        minq = fmin(minq, zMz);
    }
    if (!(s->pb.flags & MBS_PB_SINGULAR_MASS) && !(minq > 1e-10 * mn))
        violation(s, "M is not positive definite on ker B (min z^T M z = %.3g; flag "
                  "MBS_PB_SINGULAR_MASS if that is intended)", minq);
done:
    if (ws)
        gsl_eigen_symmv_free(ws);
    gsl_vector_free(ev);
    gsl_matrix_free(A);
    gsl_matrix_free(Z);
    report(s, "M", "symmetric, smallest eigenvalue %.3g, min z^T M z on ker B %.3g", mine,
           minq);
}

/* MBS_PB_CONSTANT_MASS (problem.h): M at t0, q0 against M at four other times and
 * configurations far from q0 (q0 + 0.3 max(1, |q0|) p, the pattern shifted per
 * point); a flagged problem whose M moves by more than round-off (1e-15
 * max |M|) is refused.  Unflagged: a skip line saying whether M moved. */
static void check_constant_mass(inst *s)
{
    const int flagged = (s->pb.flags & MBS_PB_CONSTANT_MASS) != 0;
    double t0 = s->pb.t0, span = s->pb.t_end - s->pb.t0, worst = 0.0, scale = 0.0;
    double sq = fmax(1.0, inf_norm(s->q, s->nq));
    gsl_matrix *M1 = gsl_matrix_alloc(s->nv, s->nv);
    if (!M1) {
        violation(s, "out of memory");
        goto done;
    }
    if (cb(s, mbs_mass(&s->ctx, t0, s->q, s->M), "mass", t0))
        goto done;
    scale = fmax(1.0, mat_norm(s->M));
    for (size_t k = 1; k <= 4; k++) {
        double t = t0 + 0.23 * (double)k * span;
        for (size_t i = 0; i < s->nq; i++)
            s->qs[i] = s->q[i] + 0.3 * sq * pattern(i + 11 * k);
        if (cb(s, mbs_mass(&s->ctx, t, s->qs, M1), "mass", t))
            goto done;
        for (size_t i = 0; i < s->nv; i++)
            for (size_t j = 0; j < s->nv; j++) {
                double d = fabs(gsl_matrix_get(M1, i, j) - gsl_matrix_get(s->M, i, j)) / scale;
                if (d > worst && d > 1e-15 && flagged)
                    violation(s, "flagged MBS_PB_CONSTANT_MASS, but M[%zu][%zu] = %.10g at t0, "
                              "q0 and %.10g at t = %g, q perturbed by 0.3", i, j,
                              gsl_matrix_get(s->M, i, j), gsl_matrix_get(M1, i, j), t);
                worst = fmax(worst, d);
            }
    }
done:
    gsl_matrix_free(M1);
    if (flagged) {
        report(s, "const-M", "M equal at t0, q0 and four perturbed t, q (max relative "
               "difference %.1e)", worst);
        return;
    }
    if (s->why[0]) { /* a callback failed: as a failed check */
        report(s, "const-M", "-");
        return;
    }
    char why[160];
    if (worst > 0.0)
        snprintf(why, sizeof why, "not flagged MBS_PB_CONSTANT_MASS (M changes with t, q: max "
                 "relative difference %.1e)", worst);
    else
        snprintf(why, sizeof why, "not flagged MBS_PB_CONSTANT_MASS (M equal at the five "
                 "sample points: flag it if M never changes)");
    skip(s, "const-M", why);
}

/* Sum triplets into the dense D (rows x cols); 0, or 1 with a violation. */
static int add_triplets(inst *s, const mbs_triplets *T, gsl_matrix *D, const char *what)
{
    for (size_t k = 0; k < T->nnz; k++) {
        if (T->row[k] >= D->size1 || T->col[k] >= D->size2) {
            violation(s, "sparse %s: entry %zu at (%zu, %zu) outside %zu x %zu", what, k,
                      T->row[k], T->col[k], D->size1, D->size2);
            return 1;
        }
        *gsl_matrix_ptr(D, T->row[k], T->col[k]) += T->val[k];
    }
    return 0;
}

static void check_sparse(inst *s, double t, const double *q)
{
    if (!(s->pb.flags & MBS_PB_SPARSE)) {
        skip(s, "sparse", "no sparse callbacks (not flagged MBS_PB_SPARSE): dense M and G only");
        return;
    }
    const mbs_problem_def *d = s->pb.def;
    mbs_triplets T = {0};
    gsl_matrix *D = gsl_matrix_calloc(s->nv, s->nv), *E = gsl_matrix_calloc(s->nlc, s->nq);
    if (!D || !E) {
        violation(s, "out of memory");
        goto done;
    }
    if (!d->mass_sparse || !d->jacobian_sparse) {
        violation(s, "flagged sparse without the triplet callbacks");
        goto done;
    }
    if (cb(s, d->mass_sparse(&s->pb, t, q, &T), "mass_sparse", t) ||
        add_triplets(s, &T, D, "M") || cb(s, d->mass(&s->pb, t, q, s->M), "mass", t))
        goto done;
    gsl_matrix_sub(D, s->M);
    if (mat_norm(D) > 1e-14 * fmax(1.0, mat_norm(s->M)))
        violation(s, "sparse M differs from dense M by %.3g", mat_norm(D));
    if (cb(s, d->jacobian_sparse(&s->pb, t, q, &T), "jacobian_sparse", t) ||
        add_triplets(s, &T, E, "G") || cb(s, d->jacobian(&s->pb, t, q, s->G), "jacobian", t))
        goto done;
    gsl_matrix_sub(E, s->G);
    if (mat_norm(E) > 1e-14 * fmax(1.0, mat_norm(s->G)))
        violation(s, "sparse G differs from dense G by %.3g", mat_norm(E));
done:
    gsl_matrix_free(D);
    gsl_matrix_free(E);
    mbs_triplets_free(&T);
    report(s, "sparse", "triplets equal the dense M and G");
}

/* The analytic derivatives the problem gives (probcheck_deriv.c). */
static void check_derivs(inst *s)
{
    for (int k = 0; k < MBS_DERIV_COUNT; k++) {
        mbs_deriv_worst w = {0, 0, 0.0, 0.0};
        char err[256];
        double e = mbs_deriv_mismatch(&s->pb, s->pb.def, k, &w, err, sizeof err);
        if (e == -1.0) {
            char why[128];
            int multipliers = k == MBS_DERIV_GTLAMBDA_Q || k == MBS_DERIV_GW_Q;
            snprintf(why, sizeof why, "%s: %s", mbs_deriv_name(k),
                     multipliers && s->nl == 0
                         ? "no constraints (n_lambda = 0)"
                         : "callback not given (methods use finite differences)");
            skip(s, "deriv", why);
            continue;
        }
        if (e < 0.0)
            violation(s, "%s", err);
        else if (e > TOL_FD)
            violation(s, "%s[%zu][%zu] = %.10g, finite difference %.10g (relative error %.2g)",
                      mbs_deriv_name(k), w.i, w.j, w.value, w.fd, e);
        report(s, "deriv", "%s: max |D - finite difference| / (1 + |D|) = %.1e",
               mbs_deriv_name(k), e);
    }
}

static void check_exact(inst *s)
{
    if (!(s->pb.flags & MBS_PB_EXACT)) {
        skip(s, "exact", "no exact solution (not flagged MBS_PB_EXACT)");
        return;
    }
    double *lam = calloc(s->nlc, sizeof(double)), *qa = calloc(s->nq, sizeof(double)),
           *qb = calloc(s->nq, sizeof(double)), *va = calloc(s->nv, sizeof(double)),
           *vb = calloc(s->nv, sizeof(double)), *f = calloc(s->nv, sizeof(double));
    /* difference step 1e-6 of the span, at most 1e-4: a long span of many periods
     * (simple-pendulum: 845 in 2000 s) is not differenced over a visible part of one */
    double span = s->pb.t_end - s->pb.t0, dt = 1e-6 * fmin(span, 100.0), worst = 0.0;
    const mbs_problem_def *d = s->pb.def;
    if (!lam || !qa || !qb || !va || !vb || !f) {
        violation(s, "out of memory");
        goto done;
    }
    if (!d->exact) {
        violation(s, "flagged exact without the exact callback");
        goto done;
    }
    for (int k = 0; k <= 10 && !s->why[0]; k++) {
        double t = s->pb.t0 + 0.1 * k * span;
        if (cb(s, d->exact(&s->pb, t, s->qs, s->hv, lam), "exact", t))
            break;
        if (k == 0)
            for (size_t i = 0; i < s->nq; i++)
                if (fabs(s->qs[i] - s->q[i]) > 1e-12 * fmax(1.0, fabs(s->q[i])))
                    violation(s, "exact q[%zu](t0) = %.12g, initial q[%zu] = %.12g", i,
                              s->qs[i], i, s->q[i]);
        /* equations of motion by central differences: q' = H v,
         * M v' = f - B^T lambda (error O((w dt)^2) for frequencies w) */
        double tt = s->pb.t0 + (k + 0.5) * span / 11.0; /* interior (initial layers) */
        if (cb(s, d->exact(&s->pb, tt, s->qs, s->hv, lam), "exact", tt) ||
            cb(s, d->exact(&s->pb, tt + dt, qa, va, NULL), "exact", tt + dt) ||
            cb(s, d->exact(&s->pb, tt - dt, qb, vb, NULL), "exact", tt - dt) ||
            cb(s, mbs_qdot(&s->ctx, s->qs, s->hv, s->w2), "kinematic", tt))
            break;
        for (size_t i = 0; i < s->nq; i++)
            if (fabs((qa[i] - qb[i]) / (2 * dt) - s->w2[i]) >
                1e-5 * fmax(1.0, inf_norm(s->w2, s->nq)))
                violation(s, "exact q[%zu]' = %.10g, H v gives %.10g at t = %g", i,
                          (qa[i] - qb[i]) / (2 * dt), s->w2[i], tt);
        if (cb(s, mbs_mass(&s->ctx, tt, s->qs, s->M), "mass", tt) ||
            cb(s, mbs_force(&s->ctx, tt, s->qs, s->hv, f), "force", tt) ||
            (s->nl > 0 &&
             cb(s, mbs_constraint_jacobian(&s->ctx, tt, s->qs, s->Bs), "jacobian", tt)))
            break;
        double fs = 1.0;
        for (size_t i = 0; i < s->nv; i++) {
            double r = -f[i], mv = 0.0;
            for (size_t j = 0; j < s->nv; j++)
                mv += gsl_matrix_get(s->M, i, j) * (va[j] - vb[j]) / (2 * dt);
            for (size_t l = 0; l < s->nl; l++)
                r += gsl_matrix_get(s->Bs, l, i) * lam[l];
            fs = fmax(fs, fmax(fabs(f[i]), fabs(mv)));
            s->w[i] = r + mv;
        }
        worst = fmax(worst, inf_norm(s->w, s->nv) / fs);
        if (inf_norm(s->w, s->nv) > 1e-4 * fs)
            violation(s, "exact solution: residual of M v' = f - B^T lambda %.3g at t = %g",
                      inf_norm(s->w, s->nv), tt);
        if (s->nl == 0)
            continue;
        if (cb(s, d->exact(&s->pb, t, s->qs, s->hv, lam), "exact", t) ||
            cb(s, mbs_constraint(&s->ctx, t, s->qs, s->g), "constraint", t))
            break;
        double sq = fmax(1.0, inf_norm(s->qs, s->nq));
        if (inf_norm(s->g, s->nl) > TOL_EXACT * sq * sq)
            violation(s, "exact solution: |g| = %.3g at t = %g", inf_norm(s->g, s->nl), t);
        if (velocity_residual(s, t, s->qs, s->hv, s->Bs, s->w))
            break;
        double sv = fmax(1.0, mat_norm(s->Bs) * inf_norm(s->hv, s->nv));
        if (inf_norm(s->w, s->nl) > TOL_EXACT * sv)
            violation(s, "exact solution: |B v + g_t| = %.3g at t = %g", inf_norm(s->w, s->nl),
                      t);
    }
done:
    free(lam), free(qa), free(qb), free(va), free(vb), free(f);
    report(s, "exact", "on the manifold, equations of motion hold (residual %.1e)", worst);
}

static void check_energy(inst *s)
{
    if (!(s->pb.flags & MBS_PB_CONSERVATIVE)) {
        skip(s, "energy", s->pb.def->energy ? "not conservative (not flagged "
                                              "MBS_PB_CONSERVATIVE): energy is not constant"
                                            : "no energy callback");
        return;
    }
    if (!s->pb.def->energy) {
        violation(s, "flagged conservative without the energy callback");
        report(s, "energy", "-");
        return;
    }
    /* a method that can run the problem: null-space (SVD) for redundant
     * constraints and through singular configurations (G loses rank there),
     * Radau IIA on the GGL form for a singular mass matrix */
    const char *method = s->pb.flags & (MBS_PB_REDUNDANT | MBS_PB_SINGULAR_CONFIG)
                             ? "svd/rk8pd"
                         : s->pb.flags & MBS_PB_SINGULAR_MASS ? "ggl/radau5"
                                                              : "index1/rk8pd";
    /* non-holonomic constraints: the energy-preserving scheme ([bauchau2003selfstabilized] Eq. (22)),
     * fixed step */
    int nonholo = (s->pb.flags & MBS_PB_NONHOLONOMIC) != 0;
    if (nonholo)
        method = "ep/midpoint";
    double t_end = fmin(s->pb.t_end, s->pb.t0 + 1.0);
    mbs_run_spec rs = {.problem = s->spec, .method = method, .h = nonholo ? 1e-2 : NAN,
                       .tol = nonholo ? NAN : 1e-11, .t_end = t_end, .repeat = 0,
                       .max_steps = 200000, .measure = 1};
    mbs_record rec;
    char err[512];
    if (mbs_run(&rs, &rec, err, sizeof err) != MBS_OK) {
        violation(s, "tight run with %s: %s", method, err);
        report(s, "energy", "-");
        return;
    }
    if (rec.status != MBS_OK && (s->pb.flags & MBS_PB_REDUNDANT)) {
        /* The null-space methods decide the rank of B relative to its largest
         * singular value; a numerically zero B (heavytop norm=1: B = G H = 0 up
         * to round-off) defeats them.  No method runs the problem: say so. */
        char why[600];
        snprintf(why, sizeof why, "%s failed (%s): no method to check it with", method,
                 rec.reason);
        skip(s, "energy", why);
        mbs_record_free(&rec);
        return;
    }
    if (rec.status != MBS_OK)
        violation(s, "tight run with %s failed: %s", method, rec.reason);
    else if (!(rec.energy_drift <= TOL_ENERGY))
        violation(s, "relative energy drift %.3g > %.0e with %s at tol 1e-11 over [%g, %g]: "
                  "the forces do not derive from the energy callback, or energy is not "
                  "conserved (then do not flag MBS_PB_CONSERVATIVE)",
                  rec.energy_drift, TOL_ENERGY, method, s->pb.t0, t_end);
    report(s, "energy", "relative drift %.2g with %s over [%g, %g]", rec.energy_drift, method,
           s->pb.t0, t_end);
    mbs_record_free(&rec);
}

int mbs_problem_check(const char *spec, FILE *out, char *err, size_t errlen)
{
    inst s = {.out = out};
    if (inst_open(&s, spec, err, errlen) != 0)
        return -1;
    char prm[512];
    mbs_params_format(&s.pb.params, 1, prm, sizeof prm);
    fprintf(out, "check-problem %s (%s): n_q %zu, n_v %zu, n_lambda %zu\n", s.pb.def->name, prm,
            s.nq, s.nv, s.nl);
    int st = s.pb.def->initial(&s.pb, s.q, s.v, s.lam, &s.have_lambda);
    if (st != MBS_OK) {
        violation(&s, "initial callback failed: %s", mbs_status_message(st));
        report(&s, "initial", "-");
    } else {
        double *q1 = calloc(s.nq, sizeof(double)), *v1 = calloc(s.nv, sizeof(double));
        if (!q1 || !v1) {
            free(q1), free(v1);
            inst_free(&s);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        check_initial(&s);
        double t1 = test_state(&s, q1, v1);
        check_jacobian_fd(&s, "at t0", s.pb.t0, s.q);
        check_jacobian_fd(&s, "off q0", t1, q1);
        check_gt_fd(&s, "off q0", t1, q1);
        check_gamma_fd(&s, "at t0", s.pb.t0, s.q, s.v);
        check_gamma_fd(&s, "off q0", t1, q1, v1);
        check_mass(&s, s.pb.t0, s.q);
        check_constant_mass(&s);
        check_sparse(&s, t1, q1);
        check_derivs(&s);
        check_exact(&s);
        check_energy(&s);
        free(q1);
        free(v1);
    }
    fprintf(out, "%d checks, %d failed, %d skipped\n", s.checks, s.failed, s.skipped);
    int failed = s.failed;
    inst_free(&s);
    return failed;
}

int mbs_cmd_check_problem(int argc, char **argv)
{
    const char *spec = NULL;
    const mbs_cli_cmd *cmd = mbs_cli_find("check-problem");
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--problem"))
            spec = a.str;
        else {
            fprintf(stderr, "mbsbench: check-problem: unexpected argument '%s'\n", a.str);
            return 2;
        }
    }
    if (!spec) {
        fprintf(stderr, "mbsbench: check-problem: -p PROBLEM[:k=v,...] is required\n");
        return 2;
    }
    char err[512];
    int n = mbs_problem_check(spec, stdout, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    return n ? 1 : 0;
}
