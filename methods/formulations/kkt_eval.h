/* M and B = G H of a problem as triplets for the linear-solver backends
 * (methods/linsol/linsol.h), shared by the methods that hand a KKT matrix
 * [M B^T; B 0] to mbs_linsol (projection.c, hem.c, genalpha.c).
 *
 * Problems with the triplet callbacks mass_sparse and jacobian_sparse and H = I
 * ("native", the chain) are evaluated through mbs_mass_sparse /
 * mbs_jacobian_sparse, so nothing of size n x n is allocated.  Every other
 * problem is evaluated densely through the counting wrappers and converted to
 * triplets with its full dense pattern (correct, without the sparse savings),
 * as in index1_sparse.c. */
#ifndef MBS_KKT_EVAL_H
#define MBS_KKT_EVAL_H

#include "../framework/method.h"

typedef struct mbs_kkt_eval {
    size_t nv, nl;
    int native;          /* triplet callbacks of the problem are used */
    mbs_triplets M, B;   /* the last evaluation (B: n_l x n_v) */
    gsl_matrix *Md, *Bd; /* dense scratch (not native only) */
} mbs_kkt_eval;

/* Workspace for ctx->pb (zeroes *e first).  Returns MBS_OK or MBS_NO_MEMORY. */
int mbs_kkt_eval_init(mbs_kkt_eval *e, const mbs_ctx *ctx);
/* Frees the arrays (a zeroed or failed struct is fine). */
void mbs_kkt_eval_free(mbs_kkt_eval *e);

/* M(t, q) into e->M; B(t, q) into e->B (n_l = 0: empty). */
int mbs_kkt_eval_mass(mbs_kkt_eval *e, mbs_ctx *ctx, double t, const double *q);
int mbs_kkt_eval_jacobian(mbs_kkt_eval *e, mbs_ctx *ctx, double t, const double *q);

/* y += alpha T x (trans = 0) or y += alpha T^T x (trans = 1). */
void mbs_triplets_gemv(const mbs_triplets *T, int trans, double alpha, const double *x,
                       double *y);

/* Copy src into dst (growing dst); the values are multiplied by scale.
 * Returns 0 or -1 (out of memory). */
int mbs_triplets_copy_scaled(mbs_triplets *dst, const mbs_triplets *src, double scale);

/* Factor [M B^T; B 0] with ls and account the work in ctx's counters (the
 * difference of the backend's factorisation count); failures go through
 * mbs_fail with "what: backend reason". */
int mbs_kkt_factor(mbs_linsol *ls, int kind, mbs_ctx *ctx, double t, const mbs_triplets *M,
                   const mbs_triplets *B, const char *what);
/* Solve with the last factorisation (counted as one solve). */
int mbs_kkt_solve(mbs_linsol *ls, int kind, mbs_ctx *ctx, double t, const double *f,
                  const double *gam, double *a, double *lambda, const char *what);

#endif
