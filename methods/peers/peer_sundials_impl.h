/* Private to methods/peers/peer_sundials*.c: the state of the SUNDIALS peers
 * (peer_sundials.c: set-up, runs, descriptors) and the IDA callbacks
 * (peer_sundials_ida.c: residuals, Jacobians, error weights, the start of
 * extended problems). */
#ifndef MBS_PEER_SUNDIALS_IMPL_H
#define MBS_PEER_SUNDIALS_IMPL_H

#include <gsl/gsl_matrix.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include "../formulations/dae_form.h"
#include "../formulations/index1.h"
#include "peer_sundials_klu.h"

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
    N_Vector dky; /* dense output (IDAGetDky, CVodeGetDky) */
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
    mbs_peer_csc *csc;   /* linsol=klu: the sparse Newton matrix (peer_sundials_klu.h); else
                            NULL (SUNDIALS' dense LU) */
    char msg[200];       /* last message of the solver's error handler */
} peer_state;

static inline int is_ida(peer_kind k)
{
    return k == PEER_IDA_INDEX1 || k == PEER_IDA_INDEX2 || k == PEER_IDA_GGL;
}

static inline int is_ark(peer_kind k)
{
    return k == PEER_ARK_DP5;
}

/* Map a callback status to SUNDIALS' convention (0, > 0 recoverable, < 0
 * fatal; the first fatal status is kept in st->status). */
int mbs_peer_cb_status(peer_state *st, int s);

/* IDA residuals F(t, y, y') (IDAResFn): the index-1 DAE and the index-2 / GGL
 * forms, dense (problem callbacks) or from triplets (linsol=klu). */
int mbs_peer_res_index1(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data);
int mbs_peer_res_form(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data);
int mbs_peer_res_index1_klu(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data);
int mbs_peer_res_form_klu(realtype t, N_Vector yy, N_Vector ypv, N_Vector rr, void *data);
/* IDA Jacobians (IDALsJacFn): the forms' dense cj E - dF/dy, the CSC matrix of
 * peer_sundials_klu.h. */
int mbs_peer_jac_form(realtype t, realtype cj, N_Vector yy, N_Vector ypv, N_Vector rr,
                      SUNMatrix Jac, void *data, N_Vector t1, N_Vector t2, N_Vector t3);
int mbs_peer_jac_ida_klu(realtype t, realtype cj, N_Vector yy, N_Vector ypv, N_Vector rr,
                         SUNMatrix Jac, void *data, N_Vector t1, N_Vector t2, N_Vector t3);
/* IDA's error weights (IDAWFtolerances). */
int mbs_peer_ida_ewt(N_Vector yy, N_Vector ww, void *data);
/* Extended problems: the algebraic components and y'0 at t0 (st->y holds y0). */
int mbs_peer_ext_start(peer_state *st, double t0);

#endif
