/* SUNDIALS 6.4 (Debian libsundials-dev) as peers inside the harness.
 *
 *   index1/cvode-bdf, index1/cvode-adams - CVODE (variable-order BDF 1-5 /
 *       Adams 1-12, Newton with SUNDIALS' dense LU and its difference-quotient
 *       Jacobian, or KLU, below) on the index-1 ODE y = (q, v), y' = (H v, v') with v' from
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
 *       IDA's difference-quotient Jacobian (dense) or the CSC matrix (klu);
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
 * Linear algebra (parameter `linsol` of the CVODE and IDA peers): lu, chol,
 * umfpack, cholmod keep SUNDIALS' dense LU for the Newton systems (the matrices
 * above) and choose the KKT solver of the index-1 solves (index1.h); klu runs
 * SUNLinSol_KLU on the CSC matrices of peer_sundials_klu.h, assembled from the
 * problem's triplet callbacks (nothing n x n is allocated; the forms' residual
 * from triplets through mbs_dae_form_alloc_sparse, the index-1 solves on
 * CHOLMOD); auto (default) takes klu where it applies, the forces' derivatives
 * vanish and n_v + n_l >= 9, else lu.  The record's linsol statistics are
 * KLU's with klu, else the index-1 backend's.
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
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "../../core/gslalloc.h"
#include "../framework/dae_axis.h"
#include "peer_sundials_impl.h"

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
    return mbs_peer_cb_status(st, mbs_index1_rhs(st->w, st->ctx, t, N_VGetArrayPointer(y),
                                                 N_VGetArrayPointer(ydot)));
}

/* The CVODE Jacobian with linsol=klu (peer_sundials_klu.h: J = [0 I; 0 0]). */
static int jac_cvode_klu(realtype t, N_Vector y, N_Vector fy, SUNMatrix Jac, void *data,
                         N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    peer_state *st = data;
    return mbs_peer_cb_status(
        st, mbs_peer_csc_fill(st->csc, st->ctx, t, N_VGetArrayPointer(y), NULL, 0.0, Jac, st->LS));
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
    if (st->dky)
        N_VDestroy(st->dky);
    if (st->sctx)
        SUNContext_Free(&st->sctx);
    mbs_index1_free(st->w);
    mbs_dae_form_free(st->form);
    mbs_peer_csc_free(st->csc);
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

/* The Newton matrix and its solver: SUNDIALS' dense LU, or with linsol=klu a
 * CSC matrix (peer_sundials_klu.h) on SUNLinSol_KLU. */
static int peer_linsol_create(peer_state *st)
{
    sunindextype n = (sunindextype)st->n;
    if (st->csc) {
        st->A = SUNSparseMatrix(n, n, (sunindextype)mbs_peer_csc_nnz_guess(st->csc), CSC_MAT,
                                st->sctx);
        st->LS = st->A ? SUNLinSol_KLU(st->y, st->A, st->sctx) : NULL;
    } else {
        st->A = SUNDenseMatrix(n, n, st->sctx);
        st->LS = st->A ? SUNLinSol_Dense(st->y, st->A, st->sctx) : NULL;
    }
    return st->LS ? MBS_OK : MBS_NO_MEMORY;
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
        if (peer_linsol_create(st) != MBS_OK)
            return MBS_NO_MEMORY;
        r = CVodeInit(st->mem, ode_rhs, t0, st->y);
        r = r ? r : CVodeSetUserData(st->mem, st);
        r = r ? r : CVodeSetErrHandlerFn(st->mem, err_handler, st);
        r = r ? r : CVodeSStolerances(st->mem, 1e-6, 1e-6);
        r = r ? r : CVodeSetLinearSolver(st->mem, st->LS, st->A);
        r = r ? r : (st->csc ? CVodeSetJacFn(st->mem, jac_cvode_klu) : 0);
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
        if (peer_linsol_create(st) != MBS_OK)
            return MBS_NO_MEMORY;
        IDAResFn res = st->kind == PEER_IDA_INDEX1
                           ? (st->csc ? mbs_peer_res_index1_klu : mbs_peer_res_index1)
                           : (st->csc ? mbs_peer_res_form_klu : mbs_peer_res_form);
        r = IDAInit(st->mem, res, t0, st->y, st->yp);
        r = r ? r : IDASetUserData(st->mem, st);
        r = r ? r : IDASetErrHandlerFn(st->mem, err_handler, st);
        r = r ? r : IDASStolerances(st->mem, 1e-6, 1e-6);
        r = r ? r : IDASetLinearSolver(st->mem, st->LS, st->A);
        if (!r && st->csc)
            r = IDASetJacFn(st->mem, mbs_peer_jac_ida_klu);
        else if (!r && st->kind != PEER_IDA_INDEX1 && !st->dq_jac)
            r = IDASetJacFn(st->mem, mbs_peer_jac_form);
        r = r ? r : IDASetId(st->mem, st->id);
        r = r ? r : IDASetSuppressAlg(st->mem, SUNTRUE);
        r = r ? r : IDASetMaxNumSteps(st->mem, 100000000L);
        break;
    }
    return r ? MBS_LIBRARY_FAILURE : MBS_OK;
}

/* The `linsol` choices of the CVODE and IDA peers: the index-1 KKT solvers of
 * index1.h (SUNDIALS' dense LU for the Newton systems), klu, auto. */
enum { PEER_LS_KLU = 4, PEER_LS_AUTO = 5 };

/* linsol=auto: klu for problems where it applies, whose forces' derivatives
 * vanish (the CSC matrix leaves out f_q, f_v: peer_sundials_klu.h) and with
 * n_v + n_l >= PEER_KLU_AUTO_MIN, where KLU takes fewer instructions than the
 * dense LU (docs/methods.md: from the 3-link chain on), else lu. */
enum { PEER_KLU_AUTO_MIN = 9 };
static int peer_auto_klu(mbs_ctx *ctx, const char *method)
{
    const mbs_problem *pb = ctx->pb;
    int klu = pb->nv + pb->nl >= PEER_KLU_AUTO_MIN && mbs_peer_csc_check(ctx, method) == MBS_OK &&
              mbs_dae_form_forces_vanish(ctx) == 1;
    ctx->reason[0] = '\0';
    return klu;
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
    int ls = (int)p->val[0], s = MBS_OK;
    if (ls == PEER_LS_AUTO)
        ls = peer_auto_klu(ctx, m->name) ? PEER_LS_KLU : MBS_LINSOL_LU;
    int klu = ls == PEER_LS_KLU;
    if (klu && st->dq_jac)
        s = mbs_fail(ctx, MBS_UNSUPPORTED, pb->t0,
                     "%s: jac=dq (IDA's difference quotients) needs the dense matrix, not "
                     "linsol=klu",
                     m->name);
    else if (klu)
        s = mbs_peer_csc_check(ctx, m->name);
    /* klu: the index-1 solves (CVODE's right-hand side, y'_0) on CHOLMOD */
    if (s == MBS_OK)
        s = mbs_index1_alloc(&st->w, ctx, klu ? MBS_LINSOL_CHOLMOD : ls);
    if (s == MBS_OK && (st->kind == PEER_IDA_INDEX2 || st->kind == PEER_IDA_GGL)) {
        mbs_form_kind fk = st->kind == PEER_IDA_GGL ? MBS_FORM_GGL : MBS_FORM_INDEX2;
        s = klu ? mbs_dae_form_alloc_sparse(&st->form, ctx, fk, -1)
                : mbs_dae_form_alloc(&st->form, ctx, fk);
    }
    if (s == MBS_OK && klu)
        s = mbs_peer_csc_alloc(&st->csc, ctx,
                               st->kind == PEER_IDA_INDEX1   ? MBS_PEER_CSC_INDEX1
                               : st->kind == PEER_IDA_INDEX2 ? MBS_PEER_CSC_INDEX2
                               : st->kind == PEER_IDA_GGL    ? MBS_PEER_CSC_GGL
                                                             : MBS_PEER_CSC_ODE);
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
    st->dky = N_VNew_Serial(n, st->sctx);
    if (!klu) { /* dense M and B of res_index1 */
        st->M = mbs_matrix_alloc(pb->nv, pb->nv);
        st->B = mbs_matrix_alloc(nlc, pb->nv);
    }
    st->f = malloc(pb->nv * sizeof(double));
    st->gam = malloc(nlc * sizeof(double));
    st->vdot = malloc(pb->nv * sizeof(double));
    st->hv = malloc(pb->nq * sizeof(double));
    st->F = malloc(st->n * sizeof(double));
    int ok = st->y && st->yp && st->id && st->dky && (klu || (st->M && st->B)) && st->f && st->gam &&
             st->vdot && st->hv && st->F;
    if (ok && st->form && !klu) {
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

/* Re-initialise for a run from (t0, y) with the run's tolerances. */
static int peer_start(peer_state *st, const mbs_settings *set, double t0, const double *state)
{
    mbs_ctx *ctx = st->ctx;
    double *y = N_VGetArrayPointer(st->y), *yp = N_VGetArrayPointer(st->yp);
    size_t nq = st->nq, nv = st->nv;
    int r, s;
    if (st->csc)
        mbs_peer_csc_new_run(st->csc);
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
        if ((s = mbs_peer_ext_start(st, t0)) != MBS_OK)
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
    r = r ? r : IDAWFtolerances(st->mem, mbs_peer_ida_ewt);
    r = r ? r : IDASetId(st->mem, st->id);
    r = r ? r : IDASetStopTime(st->mem, set->t_end);
    r = r ? r : IDASetInitStep(st->mem, st->h0);
    /* a minimum step 1e-12 (t_end - t0) until lambda is weighted by h (the
     * restart rule of ida_ewt): below it IDA stalls on the lambda rounding
     * instead of failing; afterwards IDA's own (none) */
    r = r ? r : IDASetMinStep(st->mem, st->lambda_h ? 0.0 : 1e-12 * (set->t_end - t0));
    return r ? MBS_LIBRARY_FAILURE : MBS_OK;
}

/* Add the solver's counters of this run to the record's (and the linear-solver
 * setups and Newton iterations to *setups, *iters). */
static void peer_stats(peer_state *st, mbs_counters *cnt, long *setups, long *iters)
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
    *setups += nsetups;
    *iters += nni;
}

/* The linear-solver statistics of a run (mbs_ctx_report_linsol): KLU's with
 * linsol=klu (the index-1 solves, one at the start for IDA, one per
 * right-hand side for CVODE, stay in the counters), else those of the index-1
 * backend (umfpack, cholmod; none for the dense lu, chol). */
static void peer_report(peer_state *st, mbs_ctx *ctx, long setups, long iters)
{
    if (!st->csc) {
        mbs_index1_report(ctx, st->w);
        return;
    }
    mbs_linsol_stats ls;
    mbs_peer_csc_end_run(st->csc, st->LS, setups, iters, &ls);
    mbs_ctx_report_linsol_stats(ctx, &ls, MBS_LS_KLU);
}

/* Dense output of IDA (mbs_dense_fn, method.h): IDAGetDky, IDA's interpolating
 * polynomial of its last step (Hindmarsh et al. 2005 [hindmarsh2005sundials]),
 * every component. */
static int ida_dense(void *p, double t, double *state)
{
    peer_state *st = p;
    if (IDAGetDky(st->mem, t, 0, st->dky) != IDA_SUCCESS)
        return -1;
    const double *y = N_VGetArrayPointer(st->dky);
    if (st->form)
        mbs_dae_form_to_state(st->form, y, state);
    else
        memcpy(state, y, st->n * sizeof(double));
    return 0;
}

/* Dense output of CVODE (mbs_dense_fn, method.h): CVodeGetDky, the Nordsieck
 * history's interpolating polynomial of the last step (Hindmarsh et al. 2005
 * [hindmarsh2005sundials]), q and v (MBS_DENSE_QV: lambda is not integrated).
 * ARKODE is left to the harness: ERKStepGetDky's Hermite interpolant of degree
 * 4 and 5 (its default) evaluates the right-hand side at t_n+1 - h/3 and
 * t_n+1 - 2h/3 (SUNDIALS 6.4 arkode_interp.c), which would change the run's
 * counters, and of degree 3 it is the harness's own cubic Hermite. */
static int cvode_dense(void *p, double t, double *state)
{
    peer_state *st = p;
    if (CVodeGetDky(st->mem, t, 0, st->dky) != CV_SUCCESS)
        return -1;
    memcpy(state, N_VGetArrayPointer(st->dky), st->n * sizeof(double));
    return MBS_DENSE_QV;
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
    long setups = 0, iters = 0;
    if (is_ida(st->kind) && (state0 = malloc(mbs_ny(ctx->pb) * sizeof(double))) != NULL)
        memcpy(state0, state, mbs_ny(ctx->pb) * sizeof(double));
restart:;
    int s = peer_start(st, set, t, state);
    if (s != MBS_OK) {
        st->ctx = NULL;
        free(state0);
        peer_report(st, ctx, setups, iters);
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
        if (r < 0 && is_ida(st->kind) && !st->lambda_h && state0 && st->nl > 0 &&
            st->status == MBS_OK && (r == IDA_ERR_FAIL || r == IDA_CONV_FAIL)) {
            /* failed at the minimum step: start again from the last accepted
             * point (t0 before the first) with lambda weighted by h (see
             * ida_ewt) */
            peer_stats(st, &ctx->cnt, &setups, &iters);
            st->lambda_h = 1;
            if (st->first)
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
            ctx->dense = ida_dense;
            ctx->dense_data = st;
            s = mbs_accept(ctx, t, state, yp + nq);
        } else {
            memcpy(state, y, (nq + nv) * sizeof(double));
            /* accelerations and multipliers at the accepted point */
            s = mbs_index1_accel(st->w, ctx, t, state, state + nq, st->vdot, state + nq + nv);
            if (!is_ark(st->kind)) {
                ctx->dense = cvode_dense;
                ctx->dense_data = st;
            }
            if (s == MBS_OK)
                s = mbs_accept(ctx, t, state, st->vdot);
        }
        if (s != MBS_OK)
            break;
    }
    peer_stats(st, &ctx->cnt, &setups, &iters);
    peer_report(st, ctx, setups, iters);
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

/* linsol of the CVODE and IDA peers (values 0-3 those of MBS_INDEX1_LINSOL_PARAM) */
#define PEER_LINSOL_PARAM                                                                  \
    {"linsol", PEER_LS_AUTO, 0, 5,                                                         \
     "Newton systems and index-1 solves: lu, chol, umfpack, cholmod (SUNDIALS' dense LU; "  \
     "that KKT solver for the index-1 solves), klu (SUNLinSol_KLU on a CSC matrix from "    \
     "the problem's triplets; index-1 solves on cholmod), auto (default): klu where it "    \
     "applies, the forces' derivatives vanish and n_v + n_l >= 9, else lu",                 \
     "lu,chol,umfpack,cholmod,klu,auto", 1}
static const mbs_param_def peer_params[] = {PEER_LINSOL_PARAM};
/* IDA: `linsol` first (it replaces the index-1 formulation's of the same name,
 * methods/registry.c), on the E, F forms then the iteration matrix. */
static const mbs_param_def ida_params[] = {PEER_LINSOL_PARAM};
static const mbs_param_def ida_form_params[] = {
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
     "peer: SUNDIALS CVODE BDF 1-5 (Newton on dense LU or KLU) on the index-1 formulation",
     CITE1 "CVODE (CV_BDF, SUNLinSol_Dense or SUNLinSol_KLU)", PEER_CVODE_BDF, 0,
     MBS_M_IMPLICIT, peer_params)
PEER(mbs_method_index1_cvode_adams, "index1/cvode-adams",
     "peer: SUNDIALS CVODE Adams 1-12 (Newton on dense LU or KLU) on the index-1 formulation",
     CITE1 "CVODE (CV_ADAMS, SUNLinSol_Dense or SUNLinSol_KLU)", PEER_CVODE_ADAMS, 0,
     MBS_M_IMPLICIT, peer_params)
PEER(mbs_method_index1_arkode_dp5, "index1/arkode-dp5",
     "peer: SUNDIALS ARKODE ERKStep Dormand-Prince 5(4) on the index-1 formulation",
     CITE1 "ARKODE ERKStep ARKODE_DORMAND_PRINCE_7_4_5", PEER_ARK_DP5, 5, 0, peer_ark_params)

/* The ODE peers, for methods/registry.def. */
const mbs_method_def *const mbs_methods_sundials[] = {
    &mbs_method_index1_cvode_bdf, &mbs_method_index1_cvode_adams, &mbs_method_index1_arkode_dp5,
    NULL};

/* "peer: SUNDIALS IDA (BDF 1-5) on FORM, ALGEBRAIC out of the error test" (IDASetId,
 * IDASetSuppressAlg); on the index-1 formulation IDA solves the residual of the
 * KKT system ([arnold2016dae] Eq. (17)) with its difference-quotient Jacobian (dense)
 * or the CSC matrix of peer_sundials_klu.h (linsol=klu). */
static void ida_describe(const mbs_dae_integrator *in, const mbs_dae_formulation *f,
                         char *summary, size_t ns, char *citation, size_t nc)
{
    const int ef = (f->provides & MBS_DAE_EF) != 0;
    snprintf(summary, ns, "%s (BDF 1-5%s) on %s%s", in->summary,
             f->provides & MBS_DAE_JACOBIAN ? "" : ", dense DQ Jacobian or sparse on KLU",
             ef ? f->form : "the index-1 DAE residual",
             !ef ? "" : f->mu ? ", lambda and mu out of the error test"
                              : ", lambda out of the error test");
    const char *eqs = ef ? f->eqs : "(17)";
    snprintf(citation, nc, "Arnold 2016 [arnold2016dae] %s %s; %s", mbs_dae_eq_word(eqs), eqs,
             in->citation);
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
        .params = MBS_PARAM_LIST(ida_params),
        .form_params = MBS_PARAM_LIST(ida_form_params),
        .ops = &ida_ops,
        .summary = "peer: SUNDIALS IDA",
        .citation = "SUNDIALS 6.4.1 IDA, IDASetId + IDASetSuppressAlg, SUNLinSol_Dense or "
                    "SUNLinSol_KLU",
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
