/* Mass-orthogonal projection onto the constraint manifold and its tangent space
 * ([arnold2016dae], Section 4.2, Eqs. (88)-(91)), for use after accepted steps of
 * index-1 and index-2 integrations (`proj-` methods).
 *
 * Position stage (Eqs. (88)-(89)): if ||g(t, q_n)||_inf > eps_g, solve
 *     M(q_n) (q^ - q_n) + G(q_n)^T mu = 0,   g(t, q^) = 0
 * by simplified Newton with the iteration matrix [M B^T; B 0] frozen at the
 * unprojected point q_n (one LU factorisation), started at q^(0) = q_n and
 * stopped as soon as ||g(t, q^(k))||_inf <= eps_g, or when the correction of an
 * iteration after the first is at the rounding of q (16 eps (1 + |q_n|_inf):
 * ||g|| then sits at its round-off floor, which may lie above eps_g).  The
 * default eps_g = 1e-14 projects at practically every step: with 1e-10 the
 * steps whose drift stayed below it were not projected, so which steps project
 * changed with h and the error was not smooth in h (proj-index1/rk4 on
 * heavytop-nc at h = 2.5e-3: q 8.1e-9 against 2.9e-9 when every step
 * projects, pairwise order 2.21 instead of 3.73).  With a kinematic matrix
 * H != I the correction is parametrised as q^ = q_n + H(q_n) d, d in R^nv,
 * minimising d^T M d (for H = I this is exactly Eq. (89)).  Each iteration is
 * counted as one Newton iteration; failure to reach eps_g within
 * MBS_PROJECT_MAXIT iterations, or growth of the residual, returns
 * MBS_NEWTON_DIVERGED with a reason.
 * Velocity stage (Eqs. (90)-(91)), always: with M, B = G H and g_t at q^,
 *     [M B^T; B 0] (v^ - v, mu~) = (0, -(B v + g_t)).
 *
 * Linear algebra: the KKT matrix [M B^T; B 0] is factorised either
 * by the original dense GSL LU code (MBS_PROJECT_GSL_LU, mbs_project_alloc) or
 * by an mbs_linsol backend (methods/linsol/linsol.h: MBS_LS_DENSE, MBS_LS_UMFPACK,
 * MBS_LS_CHOLMOD; mbs_project_alloc_backend).  On the backends M and B come as
 * triplets (methods/formulations/kkt_eval.h): from the problem's triplet callbacks when it
 * has them and H = I, so nothing n x n is allocated, else dense -> triplets
 * (this includes H != I: the matrix is in terms of B = G H, n_lambda x n_v, in
 * both cases).  The products M d and B v use the same triplets.
 *
 * Usage: mbs_project_alloc once per run (workspace only), mbs_project after
 * each accepted step (q and v are replaced in place), mbs_project_report at
 * the end of integrate(), mbs_project_free. */
#ifndef MBS_PROJECTION_H
#define MBS_PROJECTION_H

#include "../framework/method.h"

enum { MBS_PROJECT_MAXIT = 10 };

/* Parameter definition of the position tolerance eps_g (shared by proj- methods). */
#define MBS_PROJECT_EPS_PARAM                                                           \
    {"eps_g", 1e-14, 1e-14, 1e-1,                                                       \
     "projection tolerance: q is projected when ||g(q)||_inf > eps_g and the "          \
     "simplified Newton iteration stops at ||g||_inf <= eps_g (Arnold 2016 [arnold2016dae] Eq. (89)) " \
     "or when its correction is at the rounding of q",                                  \
     NULL, 0}

typedef struct mbs_projection mbs_projection;

/* Workspace for ctx->pb.  Returns MBS_OK; MBS_BAD_INPUT when eps_g is not a
 * positive finite number; MBS_UNSUPPORTED for redundant constraints (singular
 * iteration matrix); MBS_NO_MEMORY.  Reasons go to ctx via mbs_fail. */
int mbs_project_alloc(mbs_projection **p, mbs_ctx *ctx, double eps_g);

/* The original dense GSL LU path (what mbs_project_alloc uses). */
enum { MBS_PROJECT_GSL_LU = -1 };

/* As mbs_project_alloc with the KKT solver `backend`: MBS_PROJECT_GSL_LU or an
 * mbs_linsol_kind (MBS_LS_DENSE, MBS_LS_UMFPACK, MBS_LS_CHOLMOD; cholmod uses
 * the augmented Lagrangian for MBS_PB_SINGULAR_MASS problems).  MBS_BAD_INPUT
 * for an unknown backend. */
int mbs_project_alloc_backend(mbs_projection **p, mbs_ctx *ctx, double eps_g, int backend);

/* The mbs_linsol backend's statistics into ctx (mbs_ctx_report_linsol); no-op
 * for NULL or the GSL LU path.  Call at the end of integrate(). */
void mbs_project_report(mbs_ctx *ctx, const mbs_projection *p);
/* The backend (NULL for the GSL LU path), for tests. */
const mbs_linsol *mbs_project_linsol(const mbs_projection *p);

/* Project (q, v) at time t in place.  On failure q and v are left unchanged and
 * the status (MBS_NEWTON_DIVERGED, MBS_SINGULAR_MATRIX or a callback status) is
 * returned with a reason in ctx. */
int mbs_project(mbs_projection *p, mbs_ctx *ctx, double t, double *q, double *v);

/* Accepts NULL. */
void mbs_project_free(mbs_projection *p);

#endif
