/* Sparse Newton matrices of the SUNDIALS peers (peer_sundials.c) for
 * SUNLinSol_KLU (Davis & Palamadai Natarajan 2010 [davis2010klu]; parameter
 * linsol=klu): the matrix in compressed-column form (SUNMatrix_Sparse, CSC)
 * assembled from the problem's triplet callbacks mass_sparse and
 * jacobian_sparse (problems/problem.h), H = I.
 *
 * IDA gets its Jacobian dR/dy + cj dR/dy' as a user with an analytic sparse
 * Jacobian would write it: the blocks E, H = I, M, B, G = B of the structured
 * matrix of our sparse BDF and Radau paths (methods/formulations/dae_form.h,
 * sparse mode) and the Hessian terms (B^T lambda)_q, (B v)_q (index-1 form:
 * (B v')_q, gamma_q, gamma_v), (G^T mu)_q, which the contract gives only as
 * dense matrices (gtlambda_q, gw_q), by forward differences of the triplet
 * callbacks over a colouring of the coordinates (Curtis, Powell & Reid 1974
 * [curtis1974sparse]; the chain: 4 colours, 4 jacobian_sparse calls per
 * Jacobian).  f_q, f_v (no sparsity pattern in the contract) and g_t's
 * q-derivative are left out: linsol=auto takes klu only where the forces'
 * derivatives vanish.  Without the Hessian terms IDA fails on chain:N=20 at
 * tol 1e-6 (index-2 form: h -> 1.6e-13 at t = 3.68; a standalone IDA with the
 * same matrix fails the same way, with the terms it takes 1136 steps).  Per
 * peer kind, with y and the residual in the peer's order, without the Hessian
 * terms:
 *   IDA, index-1 residual (q' - v, M v' - f + B^T lambda, B v' - gamma):
 *       [cj I, -I, 0; 0, cj M, B^T; 0, cj B, 0];
 *   IDA, index-2 form E y' - F (Arnold 2016 [arnold2016dae] Eq. (79)):
 *       [cj I, -I, 0; 0, cj M, B^T; 0, -B, 0];
 *   IDA, GGL form ([arnold2016dae] Eq. (92)), y = (q, v, lambda, mu):
 *       [cj I, -I, 0, G^T; 0, cj M, B^T, 0; -G, 0, 0, 0; 0, -B, 0, 0];
 *   CVODE, index-1 ODE y = (q, v), y' = (v, a(q, v)): J = [0, I; 0, 0] with an
 *       explicit (zero) diagonal, so that CVODE's I - gamma J keeps the pattern
 *       (SUNMatScaleAddI inserts missing diagonal entries, which would change
 *       it).  da/dq and da/dv are dense (lambda(q, v) couples every
 *       coordinate through (B M^-1 B^T)^-1), so no sparse matrix holds them:
 *       CVODE's Newton iteration here is a fixed-point iteration on the
 *       accelerations, which converges while gamma^2 |da/dq| < 1.
 * The pattern is fixed as long as the triplet patterns of M and B are; it is
 * compared with the previous one at every Jacobian and, when it changed, the
 * CSC arrays are rebuilt and SUNLinSol_KLUReInit asks KLU for a new symbolic
 * analysis (otherwise KLU refactors on its analysis, SUNLinSolSetup_KLU). */
#ifndef MBS_PEER_SUNDIALS_KLU_H
#define MBS_PEER_SUNDIALS_KLU_H

#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include "../framework/method.h"

typedef enum {
    MBS_PEER_CSC_ODE,    /* CVODE: n = n_q + n_v */
    MBS_PEER_CSC_INDEX1, /* IDA, index-1 residual: n = n_q + n_v + n_l */
    MBS_PEER_CSC_INDEX2, /* IDA, index-2 form */
    MBS_PEER_CSC_GGL     /* IDA, GGL form: n = n_q + n_v + 2 n_l */
} mbs_peer_csc_kind;

typedef struct mbs_peer_csc mbs_peer_csc;

/* MBS_OK when linsol=klu applies to ctx->pb, else MBS_UNSUPPORTED with a one-line
 * reason in ctx naming the method: the problem needs the triplet callbacks, H = I,
 * no extended variables and no non-holonomic rows. */
int mbs_peer_csc_check(mbs_ctx *ctx, const char *method);

/* For a problem that passed mbs_peer_csc_check.  MBS_OK or MBS_NO_MEMORY. */
int mbs_peer_csc_alloc(mbs_peer_csc **out, mbs_ctx *ctx, mbs_peer_csc_kind kind);
/* Accepts NULL. */
void mbs_peer_csc_free(mbs_peer_csc *c);

/* Order of the matrix and an upper bound of its nonzeros before the first
 * evaluation (for SUNSparseMatrix). */
size_t mbs_peer_csc_n(const mbs_peer_csc *c);
size_t mbs_peer_csc_nnz_guess(const mbs_peer_csc *c);

/* Evaluate M(q), B(q) (q = y[0 .. n_q)) and the Hessian terms at (t, y, yp)
 * and write the matrix into A (CSC; storage grown when the pattern needs it)
 * with the shift cj (IDA; CVODE: yp = NULL, cj ignored).  A changed pattern
 * re-initialises LS (SUNLinSol_KLUReInit).  Counts one Jacobian
 * (ctx->cnt.jacobians); the callbacks count themselves.  Returns an mbs_status. */
int mbs_peer_csc_fill(mbs_peer_csc *c, mbs_ctx *ctx, double t, const double *y,
                      const double *yp, double cj, SUNMatrix A, SUNLinearSolver LS);

/* The index-1 residual (q' - v, M v' - f + B^T lambda, B v' - gamma) from the
 * triplets (kind MBS_PEER_CSC_INDEX1). */
int mbs_peer_csc_index1_residual(mbs_peer_csc *c, mbs_ctx *ctx, double t, const double *y,
                                 const double *yp, double *r);

/* Statistics for the record (linsol.h fields, cumulative over the workspace's
 * life as mbs_ctx_report_linsol_stats expects).  IDA and CVODE initialise their
 * linear solver at the start of every run, so KLU analyses the pattern anew at
 * the first matrix of a run: mbs_peer_csc_new_run (called before a run) counts
 * it, and a changed pattern counts another.  mbs_peer_csc_end_run adds the
 * run's linear-solver setups (= KLU factorisations) and solves, reads the sizes
 * of the last factorisation from LS (rcond: KLU's min |U_ii| / max |U_ii|) and
 * writes the totals to st. */
void mbs_peer_csc_new_run(mbs_peer_csc *c);
void mbs_peer_csc_end_run(mbs_peer_csc *c, SUNLinearSolver LS, long setups, long solves,
                          mbs_linsol_stats *st);

#endif
