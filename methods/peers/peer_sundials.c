/* SUNDIALS 6.4 (Debian libsundials-dev) as peers inside the harness.
 *
 *   index1/cvode-bdf, index1/cvode-adams - CVODE (variable-order BDF 1-5 /
 *       Adams 1-12, Newton with SUNDIALS' dense LU and its difference-quotient
 *       Jacobian) on the index-1 ODE y = (q, v), y' = (H v, v') with v' from
 *       the KKT solve of methods/formulations/index1.h ([arnold2016dae], Eqs. (83)-(84));
 *   index1/arkode-dp5 - ARKODE ERKStep with the built-in Dormand-Prince 7-4-5
 *       table on the same ODE; parameter fixed_h > 0 switches to fixed steps
 *       (to check the observed order of the built-in table).  Verner 6(5)
 *       (ARKODE_VERNER_8_5_6) is not registered: Debian's 6.4.1 table gives
 *       observed order 3.0 with fixed steps on the pendulum (q error ratios 7.4,
 *       7.7, 7.8 per halving of h = 0.02 .. 0.0025, t_end = 2; DP5: 38, 35, 34),
 *       as /work/shared/PEERS.md warns;
 *   index1/ida - IDA on the index-1 DAE residual
 *       (q' - H v, M v' - f + B^T lambda, B v' - gamma) ([arnold2016dae] Eq. (17)),
 *       IDA's difference-quotient Jacobian;
 *   index2/ida, ggl/ida - IDA on E(y) y' - F(t, y) = 0 with the forms of
 *       methods/formulations/dae_form.h ([arnold2016dae] Eqs. (79), (92)); Jacobian
 *       cj E(y) - dF/dy from mbs_dae_form_mass/mbs_dae_form_jac.  index2/ida
 *       also runs extended problems (problem.h; the wheelset with form=index2):
 *       residual E(t, y) y' - F(t, y) of the problem's own system
 *       (mbs_ext_mass/mbs_ext_rhs through dae_form.h), the algebraic
 *       components (IDASetId) the zero columns of E(t0, y0), y'0 from the
 *       nonzero rows (ext_start).
 * All: rtol = atol = tol, one-step mode (CV_ONE_STEP / ARK_ONE_STEP /
 * IDA_ONE_STEP) to t_end with tstop set, mbs_accept after every step, the
 * multipliers at every accepted point (ODE peers: an index-1 solve at the
 * accepted point, one extra right-hand side per step; IDA: from y).  IDA marks
 * lambda (and mu) algebraic (IDASetId) and leaves them out of the error test
 * (IDASetSuppressAlg); the initial values are consistent (q, v, lambda from
 * the problem, y' = (H v, v', 0) from the index-1 solve), so no IDACalcIC.
 * Error weights (ida_ewt): rtol = atol = tol, GGL's mu scaled by h as in
 * RADAU5 (it acts only in IDA's Newton convergence test; without the scaling
 * ggl/ida fails at t = 0 on andrews for tol <= 1e-5).
 * Counters: steps, f_evals, mass/constraint evaluations through the counting
 * wrappers (difference-quotient Jacobians included); the solvers' own
 * counters are added at the end of each run: Newton iterations = nonlinear
 * iterations (= linear solves), factorizations = linear-solver setups,
 * rejected = error-test failures + nonlinear convergence failures.
 * SUNContext_Create (SUNLogger_Create) of SUNDIALS 6.4 crashes when one of its
 * allocations fails: these methods carry MBS_M_EXTERNAL_ALLOC (method.h). */
#ifdef MBS_HAVE_SUNDIALS

#include <arkode/arkode_erkstep.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <cvode/cvode.h>
#include <ida/ida.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "../formulations/dae_form.h"
#include "../framework/dae_axis.h"
#include "../../core/gslalloc.h"
#include "../formulations/index1.h"

typedef enum {
    PEER_CVODE_BDF,
    PEER_CVODE_ADAMS,
    PEER_ARK_DP5,
    PEER_IDA_INDEX1,
    PEER_IDA_INDEX2,
    PEER_IDA_GGL
} peer_kind;

typedef struct peer_variant {
    peer_kind kind;
} peer_variant;

typedef struct peer_state {
    peer_kind kind;
    mbs_ctx *ctx;        /* valid during integrate() */
    int status;          /* first fatal status of a callback */
    size_t nq, nv, nl, n; /* n: length of the solver's vector */
    SUNContext sctx;
    N_Vector y, yp, id;
    SUNMatrix A;
    SUNLinearSolver LS;
    void *mem;
    mbs_index1 *w;       /* index-1 solve (ODE peers, consistent initial values) */
    mbs_dae_form *form;  /* index2/ida, ggl/ida */
    gsl_matrix *M, *B;   /* nv x nv, max(nl,1) x nv */
    gsl_matrix *E, *J;   /* n x n (own IDA Jacobian) */
    double *F, *f, *gam, *vdot, *hv;
    double fixed_h;
    double rtol, atol;   /* IDA: the run's tolerances (error weights, ida_ewt) */
    double h0;           /* IDA: first step size of the run (ida_ewt before the first step) */
    int first;           /* IDA: 1 until the first step is accepted */
    int lambda_h;        /* IDA: lambda's error weights also times h (restart rule) */
    size_t *perm;        /* extended problems (2 n): rows and LU permutation for y'0 */
    int dq_jac;          /* IDA on the forms: 1 = IDA's difference-quotient Jacobian */
    char msg[200];       /* last message of the solver's error handler */
} peer_state;

static int is_ida(peer_kind k)
{
    return k == PEER_IDA_INDEX1 || k == PEER_IDA_INDEX2 || k == PEER_IDA_GGL;
}

static int is_ark(peer_kind k)
{
    return k == PEER_ARK_DP5;
}

/* Map a callback status to SUNDIALS' convention (0, > 0 recoverable, < 0 fatal). */
static int cb_status(peer_state *st, int s)
{
    if (s == MBS_OK)
        return 0;
    if (s > 0)
        return 1;
    if (st->status == MBS_OK)
        st->status = s;
    return -1;
}

/* The solvers' messages are kept for the failure reason, not printed. */
static void err_handler(int code, const char *module, const char *function, char *msg,
                        void *data)
{
    (void)code;
    peer_state *st = data;
    snprintf(st->msg, sizeof st->msg, "%s/%s: %s", module, function, msg);
}

/* ODE right-hand side y = (q, v) -> (H v, v') (CVODE and ERKStep). */
static int ode_rhs(realtype t, N_Vector y, N_Vector ydot, void *data)
{
    peer_state *st = data;
    return cb_status(st, mbs_index1_rhs(st->w, st->ctx, t, N_VGetArrayPointer(y),
                                        N_VGetArrayPointer(ydot)));
}

/* IDA residual of the index-1 DAE, y = (q, v, lambda):
 * (q' - H v, M v' - f + B^T lambda, B v' - gamma) ([arnold2016dae] Eq. (17)). */
static int res_index1(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data)
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
        return cb_status(st, s);
    if (nl > 0 && ((s = mbs_constraint_jacobian(ctx, t, q, st->B)) != MBS_OK ||
                   (s = mbs_gamma(ctx, t, q, v, st->gam)) != MBS_OK))
        return cb_status(st, s);
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
static int res_form(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data)
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
            return cb_status(st, s);
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
        return cb_status(st, s);
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
static int jac_form(realtype t, realtype cj, N_Vector yy, N_Vector ypv, N_Vector rr,
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
        return cb_status(st, s);
    size_t n = st->n, tE = st->E->tda, tJ = st->J->tda;
    for (size_t j = 0; j < n; j++) {
        double *col = SUNDenseMatrix_Column(Jac, (sunindextype)j);
        for (size_t i = 0; i < n; i++)
            col[i] = cj * st->E->data[i * tE + j] - st->J->data[i * tJ + j];
    }
    return 0;
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
 * Restart rule: when IDA fails before its first accepted step, the run is
 * restarted once from t0 with lambda weighted by h as well (lambda_h).  crank
 * (index-2 and GGL, rtol 1e-8) failed at t = 0 with h = 1.6e-17 (corrector
 * convergence: the lambda corrections carry the rounding of the constraint
 * residual times cj = O(1/h)); with the restart it runs. */
static int ida_ewt(N_Vector yy, N_Vector ww, void *data)
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

static void peer_free(void *p)
{
    peer_state *st = p;
    if (!st)
        return;
    if (st->mem) {
        if (is_ida(st->kind))
            IDAFree(&st->mem);
        else if (is_ark(st->kind))
            ERKStepFree(&st->mem);
        else
            CVodeFree(&st->mem);
    }
    if (st->LS)
        SUNLinSolFree(st->LS);
    if (st->A)
        SUNMatDestroy(st->A);
    if (st->y)
        N_VDestroy(st->y);
    if (st->yp)
        N_VDestroy(st->yp);
    if (st->id)
        N_VDestroy(st->id);
    if (st->sctx)
        SUNContext_Free(&st->sctx);
    mbs_index1_free(st->w);
    mbs_dae_form_free(st->form);
    gsl_matrix_free(st->M);
    gsl_matrix_free(st->B);
    gsl_matrix_free(st->E);
    gsl_matrix_free(st->J);
    free(st->perm);
    free(st->F);
    free(st->f);
    free(st->gam);
    free(st->vdot);
    free(st->hv);
    free(st);
}

/* Create and configure the solver memory (tolerances and tstop per run). */
static int peer_create(peer_state *st)
{
    SUNContext c = st->sctx;
    realtype t0 = 0.0;
    int r = 0;
    switch (st->kind) {
    case PEER_CVODE_BDF:
    case PEER_CVODE_ADAMS:
        st->mem = CVodeCreate(st->kind == PEER_CVODE_BDF ? CV_BDF : CV_ADAMS, c);
        if (!st->mem)
            return MBS_NO_MEMORY;
        st->A = SUNDenseMatrix((sunindextype)st->n, (sunindextype)st->n, c);
        st->LS = st->A ? SUNLinSol_Dense(st->y, st->A, c) : NULL;
        if (!st->LS)
            return MBS_NO_MEMORY;
        r = CVodeInit(st->mem, ode_rhs, t0, st->y);
        r = r ? r : CVodeSetUserData(st->mem, st);
        r = r ? r : CVodeSetErrHandlerFn(st->mem, err_handler, st);
        r = r ? r : CVodeSStolerances(st->mem, 1e-6, 1e-6);
        r = r ? r : CVodeSetLinearSolver(st->mem, st->LS, st->A);
        r = r ? r : CVodeSetMaxNumSteps(st->mem, 100000000L);
        r = r ? r : CVodeSetMaxHnilWarns(st->mem, -1);
        break;
    case PEER_ARK_DP5:
        st->mem = ERKStepCreate(ode_rhs, t0, st->y, c);
        if (!st->mem)
            return MBS_NO_MEMORY;
        r = ERKStepSetUserData(st->mem, st);
        r = r ? r : ERKStepSetErrHandlerFn(st->mem, err_handler, st);
        r = r ? r : ERKStepSetTableNum(st->mem, ARKODE_DORMAND_PRINCE_7_4_5);
        r = r ? r : ERKStepSStolerances(st->mem, 1e-6, 1e-6);
        r = r ? r : ERKStepSetMaxNumSteps(st->mem, 100000000L);
        r = r ? r : ERKStepSetMaxHnilWarns(st->mem, -1);
        break;
    default:
        st->mem = IDACreate(c);
        if (!st->mem)
            return MBS_NO_MEMORY;
        st->A = SUNDenseMatrix((sunindextype)st->n, (sunindextype)st->n, c);
        st->LS = st->A ? SUNLinSol_Dense(st->y, st->A, c) : NULL;
        if (!st->LS)
            return MBS_NO_MEMORY;
        r = IDAInit(st->mem, st->kind == PEER_IDA_INDEX1 ? res_index1 : res_form, t0, st->y,
                    st->yp);
        r = r ? r : IDASetUserData(st->mem, st);
        r = r ? r : IDASetErrHandlerFn(st->mem, err_handler, st);
        r = r ? r : IDASStolerances(st->mem, 1e-6, 1e-6);
        r = r ? r : IDASetLinearSolver(st->mem, st->LS, st->A);
        r = r ? r : (st->kind == PEER_IDA_INDEX1 || st->dq_jac ? 0 : IDASetJacFn(st->mem, jac_form));
        r = r ? r : IDASetId(st->mem, st->id);
        r = r ? r : IDASetSuppressAlg(st->mem, SUNTRUE);
        r = r ? r : IDASetMaxNumSteps(st->mem, 100000000L);
        break;
    }
    return r ? MBS_LIBRARY_FAILURE : MBS_OK;
}

static int peer_open(const mbs_method_def *m, peer_kind kind, const mbs_params *p, mbs_ctx *ctx,
                     void **out)
{
    *out = NULL;
    const mbs_problem *pb = ctx->pb;
    peer_state *st = calloc(1, sizeof *st);
    if (!st)
        return MBS_NO_MEMORY;
    st->kind = kind;
    st->nq = pb->nq;
    st->nv = pb->nv;
    st->nl = pb->nl;
    st->fixed_h = is_ark(st->kind) ? p->val[1] : 0.0;
    st->dq_jac = (st->kind == PEER_IDA_INDEX2 || st->kind == PEER_IDA_GGL) && p->val[1] != 0.0;
    size_t nlc = pb->nl ? pb->nl : 1;
    int s = mbs_index1_alloc(&st->w, ctx, (int)p->val[0]);
    if (s == MBS_OK && (st->kind == PEER_IDA_INDEX2 || st->kind == PEER_IDA_GGL))
        s = mbs_dae_form_alloc(&st->form, ctx,
                               st->kind == PEER_IDA_GGL ? MBS_FORM_GGL : MBS_FORM_INDEX2);
    if (s != MBS_OK) {
        peer_free(st);
        return s;
    }
    st->n = st->form ? st->form->n : is_ida(st->kind) ? mbs_ny(pb) : pb->nq + pb->nv;
    if (SUNContext_Create(NULL, &st->sctx) != 0) {
        st->sctx = NULL;
        peer_free(st);
        return MBS_LIBRARY_FAILURE;
    }
    sunindextype n = (sunindextype)st->n;
    st->y = N_VNew_Serial(n, st->sctx);
    st->yp = N_VNew_Serial(n, st->sctx);
    st->id = N_VNew_Serial(n, st->sctx);
    st->M = mbs_matrix_alloc(pb->nv, pb->nv);
    st->B = mbs_matrix_alloc(nlc, pb->nv);
    st->f = malloc(pb->nv * sizeof(double));
    st->gam = malloc(nlc * sizeof(double));
    st->vdot = malloc(pb->nv * sizeof(double));
    st->hv = malloc(pb->nq * sizeof(double));
    st->F = malloc(st->n * sizeof(double));
    int ok = st->y && st->yp && st->id && st->M && st->B && st->f && st->gam && st->vdot &&
             st->hv && st->F;
    if (ok && st->form) {
        st->E = mbs_matrix_alloc(st->n, st->n);
        st->J = mbs_matrix_alloc(st->n, st->n);
        st->perm = malloc(2 * st->n * sizeof *st->perm);
        ok = st->E && st->J && st->perm;
    }
    if (!ok) {
        peer_free(st);
        return MBS_NO_MEMORY;
    }
    N_VConst(0.0, st->y);
    N_VConst(0.0, st->yp);
    /* differential (1) and algebraic (0) components: q, v | lambda [, mu] */
    double *id = N_VGetArrayPointer(st->id);
    for (size_t i = 0; i < st->n; i++)
        id[i] = i < pb->nq + pb->nv ? 1.0 : 0.0;
    if ((s = peer_create(st)) != MBS_OK) {
        peer_free(st);
        return s == MBS_NO_MEMORY ? s
                                  : mbs_fail(ctx, s, pb->t0, "%s: solver set-up failed: %s",
                                             m->name, st->msg);
    }
    *out = st;
    return MBS_OK;
}

/* Extended problems (problem.h): the differential components are the nonzero
 * columns of E(t0, y0) (the wheelset: q, v, beta; lambda and the contact
 * coordinates are algebraic), and y'0 solves E_dd y'_d = F_d on the nonzero
 * rows (as many as the columns), y'_a = 0.  st->y holds y0; the LU runs in
 * st->J (its leading nd x nd block), st->perm holds the nonzero rows and the LU
 * permutation, st->F the right-hand side and then the solution. */
static int ext_start(peer_state *st, double t0)
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

/* Re-initialise for a run from (t0, y) with the run's tolerances. */
static int peer_start(peer_state *st, const mbs_settings *set, double t0, const double *state)
{
    mbs_ctx *ctx = st->ctx;
    double *y = N_VGetArrayPointer(st->y), *yp = N_VGetArrayPointer(st->yp);
    size_t nq = st->nq, nv = st->nv;
    int r, s;
    if (!is_ida(st->kind)) {
        memcpy(y, state, (nq + nv) * sizeof(double));
        if (is_ark(st->kind)) {
            r = ERKStepReInit(st->mem, ode_rhs, t0, st->y);
            r = r ? r : ERKStepSStolerances(st->mem, set->rtol, set->atol);
            r = r ? r : ERKStepSetStopTime(st->mem, set->t_end);
            r = r ? r : ERKStepSetFixedStep(st->mem, st->fixed_h);
            if (!r && st->fixed_h == 0.0)
                r = ERKStepSetInitStep(st->mem, set->h);
        } else {
            r = CVodeReInit(st->mem, t0, st->y);
            r = r ? r : CVodeSStolerances(st->mem, set->rtol, set->atol);
            r = r ? r : CVodeSetStopTime(st->mem, set->t_end);
            r = r ? r : CVodeSetInitStep(st->mem, set->h);
        }
        return r ? MBS_LIBRARY_FAILURE : MBS_OK;
    }
    if (st->form)
        mbs_dae_form_from_state(st->form, state, y);
    else
        memcpy(y, state, st->n * sizeof(double));
    memset(yp, 0, st->n * sizeof(double));
    if (st->form && st->form->nx) {
        if ((s = ext_start(st, t0)) != MBS_OK)
            return s;
    } else if ((s = mbs_qdot(ctx, state, state + nq, yp)) != MBS_OK ||
               (s = mbs_index1_accel(st->w, ctx, t0, state, state + nq, yp + nq, NULL)) !=
                   MBS_OK) {
        /* consistent y' = (H v, v', 0 [, 0]) from the index-1 solve ([arnold2016dae] Eq. (17)) */
        return s;
    }
    st->rtol = set->rtol;
    st->atol = set->atol;
    st->first = 1;
    /* IDA's own first step (IDASolve: 0.001 (t_end - t0), at most 0.5 over the
     * weighted norm of y' over the differential components), made explicit so
     * that ida_ewt knows it before the first step. */
    st->h0 = set->h;
    if (!(st->h0 > 0.0)) {
        const double *id = N_VGetArrayPointer(st->id);
        double sum = 0.0;
        for (size_t i = 0; i < st->n; i++) {
            double wi = id[i] * yp[i] / (set->rtol * fabs(y[i]) + set->atol);
            sum += wi * wi;
        }
        double ypnorm = sqrt(sum / (double)st->n);
        st->h0 = 0.001 * (set->t_end - t0);
        if (ypnorm > 0.5 / st->h0)
            st->h0 = 0.5 / ypnorm;
    }
    r = IDAReInit(st->mem, t0, st->y, st->yp);
    r = r ? r : IDAWFtolerances(st->mem, ida_ewt);
    r = r ? r : IDASetId(st->mem, st->id);
    r = r ? r : IDASetStopTime(st->mem, set->t_end);
    r = r ? r : IDASetInitStep(st->mem, st->h0);
    return r ? MBS_LIBRARY_FAILURE : MBS_OK;
}

/* Add the solver's counters of this run to the record's. */
static void peer_stats(peer_state *st, mbs_counters *cnt)
{
    long nni = 0, netf = 0, ncfn = 0, nsetups = 0;
    if (is_ida(st->kind)) {
        IDAGetNumNonlinSolvIters(st->mem, &nni);
        IDAGetNumErrTestFails(st->mem, &netf);
        IDAGetNumNonlinSolvConvFails(st->mem, &ncfn);
        IDAGetNumLinSolvSetups(st->mem, &nsetups);
    } else if (is_ark(st->kind)) {
        ERKStepGetNumErrTestFails(st->mem, &netf);
    } else {
        CVodeGetNumNonlinSolvIters(st->mem, &nni);
        CVodeGetNumErrTestFails(st->mem, &netf);
        CVodeGetNumNonlinSolvConvFails(st->mem, &ncfn);
        CVodeGetNumLinSolvSetups(st->mem, &nsetups);
    }
    cnt->newton_iters += nni;
    cnt->solves += nni;
    cnt->factorizations += nsetups;
    cnt->rejected += netf + ncfn;
}

static const char *solver_name(peer_kind k)
{
    return is_ida(k) ? "IDA" : is_ark(k) ? "ARKODE" : "CVODE";
}

static int peer_integrate(void *p, mbs_ctx *ctx, const mbs_settings *set, double *tp,
                          double *state)
{
    peer_state *st = p;
    st->ctx = ctx;
    st->status = MBS_OK;
    st->msg[0] = '\0';
    st->lambda_h = 0;
    size_t nq = st->nq, nv = st->nv;
    double t = *tp, t_end = set->t_end;
    double *state0 = NULL;
    if (is_ida(st->kind) && (state0 = malloc(mbs_ny(ctx->pb) * sizeof(double))) != NULL)
        memcpy(state0, state, mbs_ny(ctx->pb) * sizeof(double));
restart:;
    int s = peer_start(st, set, t, state);
    if (s != MBS_OK) {
        st->ctx = NULL;
        free(state0);
        mbs_index1_report(ctx, st->w);
        return s == MBS_LIBRARY_FAILURE
                   ? mbs_fail(ctx, s, t, "%s re-initialisation failed: %s", solver_name(st->kind),
                              st->msg)
                   : s;
    }
    const double *y = N_VGetArrayPointer(st->y), *yp = N_VGetArrayPointer(st->yp);
    while (t < t_end) {
        if ((s = mbs_budget(ctx, t)) != MBS_OK)
            break;
        realtype tret = t;
        int r;
        if (is_ida(st->kind))
            r = IDASolve(st->mem, t_end, &tret, st->y, st->yp, IDA_ONE_STEP);
        else if (is_ark(st->kind))
            r = ERKStepEvolve(st->mem, t_end, st->y, &tret, ARK_ONE_STEP);
        else
            r = CVode(st->mem, t_end, st->y, &tret, CV_ONE_STEP);
        if (r < 0 && st->first && !st->lambda_h && state0 && st->nl > 0 && st->status == MBS_OK &&
            (r == IDA_ERR_FAIL || r == IDA_CONV_FAIL)) {
            /* failed before the first accepted step: restart with lambda
             * weighted by h (see ida_ewt) */
            peer_stats(st, &ctx->cnt);
            st->lambda_h = 1;
            memcpy(state, state0, mbs_ny(ctx->pb) * sizeof(double));
            ctx->reason[0] = '\0';
            goto restart;
        }
        if (r < 0) {
            if (st->status != MBS_OK) {
                s = st->status;
                if (!ctx->reason[0])
                    mbs_fail(ctx, s, t, "%s: %s", solver_name(st->kind), st->msg);
            } else {
                /* error-test or convergence failures at the minimum step */
                s = (r == CV_ERR_FAILURE || r == CV_CONV_FAILURE) ? MBS_STEP_UNDERFLOW
                    : r == CV_TOO_MUCH_WORK                       ? MBS_TOO_MANY_STEPS
                                                                  : MBS_LIBRARY_FAILURE;
                mbs_fail(ctx, s, t, "%s returned %d: %s", solver_name(st->kind), r, st->msg);
            }
            break;
        }
        t = tret >= t_end ? t_end : tret;
        st->first = 0;
        if (is_ida(st->kind)) {
            if (st->form)
                mbs_dae_form_to_state(st->form, y, state);
            else
                memcpy(state, y, st->n * sizeof(double));
            s = mbs_accept(ctx, t, state, yp + nq);
        } else {
            memcpy(state, y, (nq + nv) * sizeof(double));
            /* accelerations and multipliers at the accepted point */
            s = mbs_index1_accel(st->w, ctx, t, state, state + nq, st->vdot, state + nq + nv);
            if (s == MBS_OK)
                s = mbs_accept(ctx, t, state, st->vdot);
        }
        if (s != MBS_OK)
            break;
    }
    peer_stats(st, &ctx->cnt);
    mbs_index1_report(ctx, st->w);
    free(state0);
    *tp = t;
    st->ctx = NULL;
    return s;
}

static int peer_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    return peer_open(m, ((const peer_variant *)m->variant)->kind, p, ctx, out);
}

/* IDA on a formulation of the DAE axis: E(y) y' - F(t, y) of the index-2 or
 * GGL form, or the residual of the index-1 KKT system. */
static int ida_alloc(const mbs_method_def *m, const mbs_params *p, mbs_ctx *ctx, void **out)
{
    const mbs_dae_formulation *f = ((const mbs_dae_method *)m->variant)->formulation;
    peer_kind kind = !(f->provides & MBS_DAE_EF)  ? PEER_IDA_INDEX1
                     : f->kind == MBS_FORM_GGL ? PEER_IDA_GGL
                                               : PEER_IDA_INDEX2;
    return peer_open(m, kind, p, ctx, out);
}

static const mbs_method_ops peer_ops = {
    .alloc = peer_alloc,
    .integrate = peer_integrate,
    .free_state = peer_free,
};

static const mbs_method_ops ida_ops = {
    .alloc = ida_alloc,
    .integrate = peer_integrate,
    .free_state = peer_free,
};

static const mbs_param_def peer_params[] = {MBS_INDEX1_LINSOL_PARAM};
/* IDA on the E, F forms: the KKT solver of the consistent initial values and
 * the iteration matrix (on index1 `linsol` is the formulation's). */
static const mbs_param_def ida_form_params[] = {
    MBS_INDEX1_LINSOL_PARAM,
    {"jac", 0, 0, 1,
     "IDA iteration matrix: own (cj E - dF/dy from dae_form.h) or dq (IDA's difference quotients)",
     "own,dq", 1},
};
static const mbs_param_def peer_ark_params[] = {
    MBS_INDEX1_LINSOL_PARAM,
    {"fixed_h", 0.0, 0.0, 1e6,
     "fixed step size (0: adaptive); checks the observed order of the built-in table", NULL, 0},
};

#define PEER(sym, nm, summ, cite, kindv, p, fl, prm)                                       \
    static const peer_variant sym##_variant = {.kind = kindv};                             \
    const mbs_method_def sym = {                                                           \
        .name = nm,                                                                        \
        .summary = summ,                                                                   \
        .citation = cite,                                                                  \
        .order = {p, p, p},                                                                \
        .flags = MBS_M_ADAPTIVE | MBS_M_NEEDS_FULL_RANK | MBS_M_EXTERNAL_ALLOC | (fl),     \
        .params = prm,                                                                     \
        .n_params = sizeof prm / sizeof prm[0],                                            \
        .variant = &sym##_variant,                                                         \
        .ops = &peer_ops,                                                                  \
    };

#define CITE1 "Arnold 2016 [arnold2016dae], Eqs. (83)-(84); SUNDIALS 6.4.1 "
PEER(mbs_method_index1_cvode_bdf, "index1/cvode-bdf",
     "peer: SUNDIALS CVODE BDF 1-5, dense Newton, on the index-1 formulation",
     CITE1 "CVODE (CV_BDF, SUNLinSol_Dense)", PEER_CVODE_BDF, 0, MBS_M_IMPLICIT, peer_params)
PEER(mbs_method_index1_cvode_adams, "index1/cvode-adams",
     "peer: SUNDIALS CVODE Adams 1-12, dense Newton, on the index-1 formulation",
     CITE1 "CVODE (CV_ADAMS, SUNLinSol_Dense)", PEER_CVODE_ADAMS, 0, MBS_M_IMPLICIT,
     peer_params)
PEER(mbs_method_index1_arkode_dp5, "index1/arkode-dp5",
     "peer: SUNDIALS ARKODE ERKStep Dormand-Prince 5(4) on the index-1 formulation",
     CITE1 "ARKODE ERKStep ARKODE_DORMAND_PRINCE_7_4_5", PEER_ARK_DP5, 5, 0, peer_ark_params)

/* The ODE peers, for methods/registry.def. */
const mbs_method_def *const mbs_methods_sundials[] = {
    &mbs_method_index1_cvode_bdf, &mbs_method_index1_cvode_adams, &mbs_method_index1_arkode_dp5,
    NULL};

/* "peer: SUNDIALS IDA (BDF 1-5) on FORM, ALGEBRAIC out of the error test" (IDASetId,
 * IDASetSuppressAlg); on the index-1 formulation IDA solves the residual of the
 * KKT system ([arnold2016dae] Eq. (17)) with its difference-quotient Jacobian. */
static void ida_describe(const mbs_dae_integrator *in, const mbs_dae_formulation *f,
                         char *summary, size_t ns, char *citation, size_t nc)
{
    const int ef = (f->provides & MBS_DAE_EF) != 0;
    snprintf(summary, ns, "%s (BDF 1-5%s) on %s%s", in->summary,
             f->provides & MBS_DAE_JACOBIAN ? "" : ", DQ Jacobian",
             ef ? f->form : "the index-1 DAE residual",
             !ef ? "" : f->mu ? ", lambda and mu out of the error test"
                              : ", lambda out of the error test");
    const char *eqs = ef ? f->eqs : "(17)";
    snprintf(citation, nc, "Arnold 2016 [arnold2016dae] %s %s; %s", mbs_dae_eq_word(eqs), eqs, in->citation);
}

/* IDA as an implicit integrator of the DAE axis (methods/framework/dae_axis.h):
 * index-1 and index-2 formulations (its algebraic components out of the error
 * test). */
const mbs_dae_integrator mbs_dae_integrators_ida[] = {
    {
        .name = "ida",
        .runs_on = MBS_DAE_EF | MBS_DAE_ACCEL,
        .handles = MBS_DAE_EXTENDED,
        .max_index = 2,
        .flags = MBS_M_ADAPTIVE | MBS_M_IMPLICIT | MBS_M_NEEDS_FULL_RANK | MBS_M_EXTERNAL_ALLOC,
        .form_params = MBS_PARAM_LIST(ida_form_params),
        .ops = &ida_ops,
        .summary = "peer: SUNDIALS IDA",
        .citation = "SUNDIALS 6.4.1 IDA, IDASetId + IDASetSuppressAlg",
        .describe = ida_describe,
    },
    {.name = NULL},
};

#else
/* Without SUNDIALS: no peers. */
#include <stddef.h>

#include "../framework/dae_axis.h"

const mbs_method_def *const mbs_methods_sundials[] = {NULL};
const mbs_dae_integrator mbs_dae_integrators_ida[] = {{.name = NULL}};
#endif
