/* The recursive O(N) multibody formalism for tree-structured systems in mixed
 * coordinates ([arnold2013recursive], Sect. 3; [arnold2016dae], Sect. 3.3 and Table 1) with
 * Moore-Penrose pseudo-inverses for rank-deficient body mass matrices.
 *
 * Backward recursion (leaves to root, [arnold2013recursive] Eq. (17)):
 *   Mbar_i = K_i^-T (M_i + sum_j H_j^T (Mbar_j - Mbar_j J_j G_j^+ J_j^T Mbar_j) H_j) K_i^-1,
 *   fbar_i = K_i^-T (f_i - sum_j H_j^T (I - Mbar_j J_j G_j^+ J_j^T)(fbar_j + Mbar_j k_j^(II))),
 * j over the successors of i, G_j = J_j^T Mbar_j J_j and G^+ its pseudo-inverse
 * (GSL SVD, singular values below n eps max sigma dropped).
 * Forward recursion (root to leaves, Eqs. (18), (19), (24a,b), (25a)):
 *   G_i q_i'' = rhs_i := -J_i^T Mbar_i (H_i p_pi'' + k_i^(II)) - J_i^T fbar_i,
 *   q_i'' = G_i^+ rhs_i,  p_i'' = K_i^-1 (-H_i p_pi'' - J_i q_i'' - k_i^(II)),
 *   mu_i = fbar_i - Mbar_i K_i p_i''  (Eq. (13)).
 * When G_i has rank r_i < n_i the joint accelerations are determined only up to
 * the null space of G_i: q_i'' above is the minimum-norm part, p_i'' is the
 * expression (19) without the undetermined term (which, by Lemma 3, does not
 * reach the successors: (24b)), and the n_i - r_i first-order equations
 * (28b) are X_i^T rhs_i = 0 with X_i an orthonormal basis of ker G_i.  Such a
 * mixed first/second-order system needs a DAE integrator; eval then returns
 * MBS_SINGULAR_MATRIX after filling everything it can. */
#ifndef MBS_RECURSIVE_H
#define MBS_RECURSIVE_H

#include "../../problems/tree.h"
#include "../framework/method.h"

typedef struct mbs_recursive mbs_recursive;

int mbs_recursive_alloc(mbs_recursive **out, const mbs_tree_def *tree, const mbs_problem *pb);
void mbs_recursive_free(mbs_recursive *r);
/* Relative threshold below which singular values of G_i count as zero (0: n eps). */
void mbs_recursive_set_rank_tol(mbs_recursive *r, double tol);

/* Joint accelerations qdd (n_v) at (t, q, v).  MBS_OK, or MBS_SINGULAR_MATRIX
 * (some G_i rank-deficient or K_i singular; reason in msg), or the status of
 * the problem's callback. */
int mbs_recursive_eval(mbs_recursive *r, double t, const double *q, const double *v, double *qdd,
                       char *msg, size_t len);

/* Results of the last eval for body i. */
size_t mbs_recursive_nbodies(const mbs_recursive *r);
const double *mbs_recursive_pdd(const mbs_recursive *r, size_t i);  /* p_i'' (d) */
const double *mbs_recursive_mu(const mbs_recursive *r, size_t i);   /* mu_i (d) */
const double *mbs_recursive_mbar(const mbs_recursive *r, size_t i); /* Mbar_i (d x d) */
const double *mbs_recursive_fbar(const mbs_recursive *r, size_t i); /* fbar_i (d) */
/* rank r_i of G_i; *resid = the n_i - r_i residuals X_i^T rhs_i of Eq. (28b). */
size_t mbs_recursive_rank(const mbs_recursive *r, size_t i, const double **resid);

extern const struct mbs_accel_def mbs_accel_recursive;

#endif
