/* The IDA callbacks of the SUNDIALS peers (peer_sundials_impl.h): residuals of
 * the index-1 DAE and of the index-2 / GGL forms, their Newton matrices, the
 * error weights and the start of extended problems. */
#ifdef MBS_HAVE_SUNDIALS

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <ida/ida.h>
#include <math.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "../../core/gslalloc.h"
#include "peer_sundials_impl.h"

/* Map a callback status to SUNDIALS' convention (0, > 0 recoverable, < 0 fatal). */
int mbs_peer_cb_status(peer_state *st, int s)
{
    if (s == MBS_OK)
        return 0;
    if (s > 0)
        return 1;
    if (st->status == MBS_OK)
        st->status = s;
    return -1;
}

/* IDA residual of the index-1 DAE, y = (q, v, lambda):
 * (q' - H v, M v' - f + B^T lambda, B v' - gamma) ([arnold2016dae] Eq. (17)). */
int mbs_peer_res_index1(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data)
{
    peer_state *st = data;
    mbs_ctx *ctx = st->ctx;
    const double *y = N_VGetArrayPointer(yy), *yp = N_VGetArrayPointer(ypv);
    double *r = N_VGetArrayPointer(rr);
    size_t nq = st->nq, nv = st->nv, nl = st->nl;
    const double *q = y, *v = y + nq, *lam = y + nq + nv, *vp = yp + nq;
    int s;
    if ((s = mbs_qdot(ctx, q, v, st->hv)) != MBS_OK || (s = mbs_mass(ctx, t, q, st->M)) != MBS_OK ||
        (s = mbs_force(ctx, t, q, v, st->f)) != MBS_OK)
        return mbs_peer_cb_status(st, s);
    if (nl > 0 && ((s = mbs_constraint_jacobian(ctx, t, q, st->B)) != MBS_OK ||
                   (s = mbs_gamma(ctx, t, q, v, st->gam)) != MBS_OK))
        return mbs_peer_cb_status(st, s);
    for (size_t i = 0; i < nq; i++)
        r[i] = yp[i] - st->hv[i];
    /* direct row access (gsl_matrix_get is an out-of-line call per element) */
    for (size_t i = 0; i < nv; i++) {
        const double *Mi = st->M->data + i * st->M->tda;
        double a = -st->f[i];
        for (size_t j = 0; j < nv; j++)
            a += Mi[j] * vp[j];
        r[nq + i] = a;
    }
    for (size_t k = 0; k < nl; k++) {
        const double *Bk = st->B->data + k * st->B->tda;
        double a = -st->gam[k];
        for (size_t j = 0; j < nv; j++) {
            a += Bk[j] * vp[j];
            r[nq + j] += Bk[j] * lam[k];
        }
        r[nq + nv + k] = a;
    }
    return 0;
}

/* IDA residual E(y) y' - F(t, y) of the index-2 / GGL forms (dae_form.h). */
int mbs_peer_res_form(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data)
{
    peer_state *st = data;
    mbs_ctx *ctx = st->ctx;
    const double *y = N_VGetArrayPointer(yy), *yp = N_VGetArrayPointer(ypv);
    double *r = N_VGetArrayPointer(rr);
    size_t nq = st->nq, nv = st->nv;
    int s;
    if (st->form->nx) {
        /* extended problems: the problem's own E(t, y) y' - F(t, y) (problem.h) */
        if ((s = mbs_dae_form_rhs(st->form, ctx, t, y, st->F)) != MBS_OK ||
            (s = mbs_dae_form_mass(st->form, ctx, t, y, st->E)) != MBS_OK)
            return mbs_peer_cb_status(st, s);
        for (size_t i = 0; i < st->n; i++) {
            const double *Ei = st->E->data + i * st->E->tda;
            double a = -st->F[i];
            for (size_t j = 0; j < st->n; j++)
                a += Ei[j] * yp[j];
            r[i] = a;
        }
        return 0;
    }
    if ((s = mbs_dae_form_rhs(st->form, ctx, t, y, st->F)) != MBS_OK ||
        (s = mbs_mass(ctx, t, y, st->M)) != MBS_OK)
        return mbs_peer_cb_status(st, s);
    for (size_t i = 0; i < nq; i++)
        r[i] = yp[i] - st->F[i];
    for (size_t i = 0; i < nv; i++) {
        const double *Mi = st->M->data + i * st->M->tda;
        double a = -st->F[nq + i];
        for (size_t j = 0; j < nv; j++)
            a += Mi[j] * yp[nq + j];
        r[nq + i] = a;
    }
    for (size_t i = nq + nv; i < st->n; i++)
        r[i] = -st->F[i];
    return 0;
}

/* Iteration matrix dR/dy + cj dR/dy' = cj E(y) - dF/dy (the derivative of
 * M(q) v' with respect to q is neglected, as in our BDF and Radau codes). */
int mbs_peer_jac_form(realtype t, realtype cj, N_Vector yy, N_Vector ypv, N_Vector rr,
                      SUNMatrix Jac, void *data, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)ypv;
    (void)rr;
    (void)t1;
    (void)t2;
    (void)t3;
    peer_state *st = data;
    const double *y = N_VGetArrayPointer(yy);
    int s;
    if ((s = mbs_dae_form_mass(st->form, st->ctx, t, y, st->E)) != MBS_OK ||
        (s = mbs_dae_form_jac(st->form, st->ctx, t, y, st->J)) != MBS_OK)
        return mbs_peer_cb_status(st, s);
    size_t n = st->n, tE = st->E->tda, tJ = st->J->tda;
    for (size_t j = 0; j < n; j++) {
        double *col = SUNDenseMatrix_Column(Jac, (sunindextype)j);
        for (size_t i = 0; i < n; i++)
            col[i] = cj * st->E->data[i * tE + j] - st->J->data[i * tJ + j];
    }
    return 0;
}

/* linsol=klu (peer_sundials_klu.h): the index-1 residual and the forms' E y' - F
 * from the triplets, and IDA's CSC Newton matrix. */
int mbs_peer_res_index1_klu(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data)
{
    peer_state *st = data;
    return mbs_peer_cb_status(
        st, mbs_peer_csc_index1_residual(st->csc, st->ctx, t, N_VGetArrayPointer(yy),
                                         N_VGetArrayPointer(ypv), N_VGetArrayPointer(rr)));
}

int mbs_peer_res_form_klu(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data)
{
    peer_state *st = data;
    return mbs_peer_cb_status(
        st, mbs_dae_form_residual(st->form, st->ctx, t, N_VGetArrayPointer(yy),
                                  N_VGetArrayPointer(ypv), N_VGetArrayPointer(rr)));
}

int mbs_peer_jac_ida_klu(realtype t, realtype cj, N_Vector yy, N_Vector ypv, N_Vector rr,
                         SUNMatrix Jac, void *data, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)rr, (void)t1, (void)t2, (void)t3;
    peer_state *st = data;
    return mbs_peer_cb_status(st, mbs_peer_csc_fill(st->csc, st->ctx, t, N_VGetArrayPointer(yy),
                                                    N_VGetArrayPointer(ypv), cj, Jac, st->LS));
}

/* IDA's error weights (IDAWFtolerances): 1 / (rtol |y_i| + atol), and for GGL's
 * mu (an index-2 variable, zero on the solution) times h, RADAU5's index-aware
 * scaling (Hairer & Wanner, Solving ODEs II, Sect. VII.8).  With
 * IDASetSuppressAlg the algebraic components are out of the error test, so the
 * weights act only in IDA's Newton convergence test, where the corrections of
 * an index-2 variable carry the rounding error of the residual times
 * cj = O(1/h).  Weighted by 1/atol alone (mu = 0), mu failed that test at t = 0
 * on andrews for every tol <= 1e-5 and IDA shrank h to 5e-15 (measured: the
 * rounding of g(q0), 1.4e-17, gives mu = 4e-5 after one Newton step at
 * h = 1.4e-9).  lambda keeps IDA's plain weights: scaling them by h too costs
 * IDA 30-80% more steps on the pendulum (index2/ida, tol 1e-5 .. 1e-11: 574 vs
 * 433 steps at 1e-5, 3867 vs 2140 at 1e-10; a less exact lambda spoils v's
 * error estimate).  h is the step IDA attempts next (IDAGetCurrentStep), h0
 * before the first step.
 * Restart rule: when IDA fails at its minimum step (error-test or corrector
 * convergence failures), it is started again once, from the last accepted point
 * (t0 before the first), with lambda weighted by h as well (lambda_h).  crank
 * (index-2 and GGL, rtol 1e-8) failed at t = 0 with h = 1.6e-17 (corrector
 * convergence: the lambda corrections carry the rounding of the constraint
 * residual times cj = O(1/h)).  IDA's own first step, 0.5 / |y'|_WRMS, is
 * O(tol) and so tight tolerances start below the step where that rounding passes
 * the tolerance: after 1-16 accepted steps IDA shrank h to 1e-15 .. 6e-21 on
 * rigidbody (tol 1e-8), ujoint and heavytop-nc (1e-10), linear-constraint
 * (1e-9), crank (1e-7), both forms; IDA's difference-quotient Jacobian fails
 * alike, so the Jacobian is not the cause.  Before, the rule only covered a
 * failure before the first accepted step.  IDA is built for index <= 1
 * (SUNDIALS maintainers, llnl/sundials#196); the h-weighting is RADAU5's
 * remedy for index-2 variables. */
int mbs_peer_ida_ewt(N_Vector yy, N_Vector ww, void *data)
{
    peer_state *st = data;
    const double *y = N_VGetArrayPointer(yy);
    double *w = N_VGetArrayPointer(ww);
    realtype h = 0.0;
    if (!st->first && IDAGetCurrentStep(st->mem, &h) != IDA_SUCCESS)
        h = 0.0;
    if (!(h > 0.0))
        h = st->h0;
    size_t mu1 = st->nq + st->nv + st->nl + (st->form ? st->form->nmu : 0);
    size_t mu0 = st->nq + st->nv + (st->lambda_h ? 0 : st->nl);
    for (size_t i = 0; i < st->n; i++) {
        double d = st->rtol * fabs(y[i]) + st->atol;
        if (!(d > 0.0))
            return -1;
        w[i] = 1.0 / d;
        if (i >= mu0 && i < mu1 && h > 0.0 && h < 1.0)
            w[i] *= h;
    }
    return 0;
}

/* Extended problems (problem.h): the differential components are the nonzero
 * columns of E(t0, y0) (the wheelset: q, v, beta; lambda and the contact
 * coordinates are algebraic), and y'0 solves E_dd y'_d = F_d on the nonzero
 * rows (as many as the columns), y'_a = 0.  st->y holds y0; the LU runs in
 * st->J (its leading nd x nd block), st->perm holds the nonzero rows and the LU
 * permutation, st->F the right-hand side and then the solution. */
int mbs_peer_ext_start(peer_state *st, double t0)
{
    mbs_ctx *ctx = st->ctx;
    const double *y = N_VGetArrayPointer(st->y);
    double *yp = N_VGetArrayPointer(st->yp), *id = N_VGetArrayPointer(st->id);
    size_t n = st->n, nr = 0, nd = 0;
    int s;
    if ((s = mbs_dae_form_mass(st->form, ctx, t0, y, st->E)) != MBS_OK ||
        (s = mbs_dae_form_rhs(st->form, ctx, t0, y, st->F)) != MBS_OK)
        return s;
    for (size_t j = 0; j < n; j++) {
        id[j] = 0.0;
        for (size_t i = 0; i < n; i++)
            if (gsl_matrix_get(st->E, i, j) != 0.0)
                id[j] = 1.0;
        nd += id[j] != 0.0;
    }
    for (size_t i = 0; i < n; i++) {
        int nz = 0;
        for (size_t j = 0; j < n; j++)
            nz |= gsl_matrix_get(st->E, i, j) != 0.0;
        if (nz)
            st->perm[nr++] = i;
    }
    if (nr != nd || nd == 0)
        return mbs_fail(ctx, MBS_UNSUPPORTED, t0,
                        "IDA: E(t0, y0) of %s has %zu nonzero rows but %zu nonzero columns",
                        ctx->pb->def->name, nr, nd);
    gsl_matrix_view A = gsl_matrix_submatrix(st->J, 0, 0, nd, nd);
    for (size_t a = 0; a < nr; a++) {
        size_t i = st->perm[a], c = 0;
        for (size_t j = 0; j < n; j++)
            if (id[j] != 0.0)
                gsl_matrix_set(&A.matrix, a, c++, gsl_matrix_get(st->E, i, j));
        st->F[a] = st->F[i]; /* i >= a: in-place compaction */
    }
    gsl_permutation P = {.size = nd, .data = st->perm + n};
    gsl_vector_view x = gsl_vector_view_array(st->F, nd);
    int sign;
    if (gsl_linalg_LU_decomp(&A.matrix, &P, &sign) != GSL_SUCCESS ||
        gsl_linalg_LU_svx(&A.matrix, &P, &x.vector) != GSL_SUCCESS)
        return mbs_fail(ctx, MBS_SINGULAR_MATRIX, t0,
                        "IDA: the differential block of E(t0, y0) is singular (rank %zu of %zu)",
                        mbs_lu_rank(&A.matrix), nd);
    for (size_t j = 0, c = 0; j < n; j++)
        yp[j] = id[j] != 0.0 ? st->F[c++] : 0.0;
    return MBS_OK;
}

#else
/* Without SUNDIALS this file defines nothing (ISO C needs a declaration). */
typedef int mbs_peer_sundials_ida_absent;
#endif
