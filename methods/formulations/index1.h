/* The index-1 formulation ([arnold2016dae], Eqs. (83)-(84); [pennestri_coordinate_reduction], Eq. (2)): for
 * given (t, q, v) the accelerations v' and multipliers lambda solve
 *     [ M  B^T ] [ v'     ]   [ f     ]
 *     [ B  0   ] [ lambda ] = [ gamma ]                     ([arnold2016dae] Eq. (17)),
 * with B = G H.  Two dense solvers (parameter `linsol`):
 *   lu   - GSL LU with partial pivoting of the KKT matrix ([arnold2016dae], Eq. (84c));
 *   chol - the block Cholesky solve of [pennestri_coordinate_reduction], Eqs. (3)-(8): M = L L^T,
 *          Hc = L^-1 B^T, L1 L1^T = Hc^T Hc, lambda = (Hc^T Hc)^-1 (Hc^T L^-1 f - gamma),
 *          v' = L^-T (L^-1 f - Hc lambda); needs M positive definite.
 * The first-order right-hand side y' = (H v, v') feeds any ODE integrator.
 * Sparse backends (linsol.h): umfpack - UMFPACK LU of the KKT matrix; cholmod -
 * CHOLMOD range-space solve (M, then B M^-1 B^T).
 * Baumgarte stabilisation ([pennestri_coordinate_reduction] Eq. (9)) replaces gamma by
 * gamma - 2 alpha (B v + g_t) - beta^2 g through the fields alpha and beta. */
#ifndef MBS_INDEX1_H
#define MBS_INDEX1_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_permutation.h>

#include "../framework/method.h"

enum { MBS_LINSOL_LU = 0, MBS_LINSOL_CHOL = 1, MBS_LINSOL_UMFPACK = 2, MBS_LINSOL_CHOLMOD = 3 };
#define MBS_LINSOL_CHOICES "lu,chol,umfpack,cholmod"

/* Sparse backends (umfpack, cholmod: methods/linsol/linsol.h, methods/formulations/index1_sparse.c). */
typedef struct mbs_index1_sparse mbs_index1_sparse;
struct mbs_linsol;

typedef struct mbs_index1 {
    size_t nq, nv, nl;
    int linsol;
    double alpha, beta;    /* Baumgarte parameters (0: plain index-1) */
    gsl_matrix *M, *B;     /* mass matrix, constraint matrix B = G H; with linsol = lu
                              these are views into K, valid only until the solve */
    gsl_matrix *K;         /* KKT matrix and its LU factors (linsol = lu) */
    gsl_matrix_view Mv, Bv; /* the views (linsol = lu) */
    gsl_matrix *Bown, *Mown; /* owned storage (linsol = chol, or n_lambda = 0) */
    gsl_permutation *perm;
    gsl_vector *rhs, *sol; /* KKT right-hand side and solution */
    gsl_matrix *Hc, *S;    /* block Cholesky: L^-1 B^T and B M^-1 B^T (linsol = chol) */
    gsl_vector *w;         /* n_v work vector */
    double *f, *gam;       /* force, curvature (views into rhs with linsol = lu) */
    double *fown, *gamown;
    double *g, *gt;        /* Baumgarte work vectors */
    double *lambda;        /* multipliers of the last evaluation */
    mbs_index1_sparse *sp; /* linsol = umfpack or cholmod (M, B, K above unused) */
} mbs_index1;

/* Allocate for ctx->pb.  Returns MBS_UNSUPPORTED (reason in ctx) when the
 * problem is outside the solver's reach (redundant constraints; singular M
 * with linsol = chol). */
int mbs_index1_alloc(mbs_index1 **out, mbs_ctx *ctx, int linsol);
void mbs_index1_free(mbs_index1 *w);

/* v' and lambda (lambda may be NULL) at (t, q, v). */
int mbs_index1_accel(mbs_index1 *w, mbs_ctx *ctx, double t, const double *q, const double *v,
                     double *vdot, double *lambda);

/* y = (q, v) -> y' = (H v, v'); the multipliers are left in w->lambda. */
int mbs_index1_rhs(mbs_index1 *w, mbs_ctx *ctx, double t, const double *y, double *dy);

/* Parameter definition shared by index-1 based formulations. */
#define MBS_INDEX1_LINSOL_PARAM                                                         \
    {"linsol", MBS_LINSOL_LU, 0, 3, "KKT solver: lu (dense KKT LU), chol (dense block "  \
     "Cholesky, Pennestri & Valentini [pennestri_coordinate_reduction] Eqs. (3)-(8)), umfpack (sparse KKT LU), cholmod (sparse "      \
     "range space)", MBS_LINSOL_CHOICES, 1}

/* Sparse backends (index1_sparse.c), called by index1.c. */
int mbs_index1_sparse_alloc(mbs_index1 *w, mbs_ctx *ctx);
void mbs_index1_sparse_free(mbs_index1_sparse *sp);
int mbs_index1_sparse_accel(mbs_index1 *w, mbs_ctx *ctx, double t, const double *q,
                            const double *v, double *vdot);
/* The linear solver of a sparse backend (statistics: linsol.h), else NULL. */
const struct mbs_linsol *mbs_index1_linsol(const mbs_index1 *w);

/* Report the statistics of the sparse backend (umfpack, cholmod) to
 * ctx->linsol through mbs_ctx_report_linsol: drivers built on
 * mbs_index1 call it once at the end of every integrate(), on every exit.  The
 * statistics are those of the workspace's whole life (linsol.h); the harness
 * turns them into per-run numbers (harness/run.c).  No-op for w == NULL and the
 * dense lu / chol paths, which leave ctx->linsol_kind = -1. */
void mbs_index1_report(mbs_ctx *ctx, const mbs_index1 *w);

#endif
