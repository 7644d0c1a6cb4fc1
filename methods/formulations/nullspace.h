/* Coordinate reduction / null-space formulations ([pennestri_coordinate_reduction], Sects. 5 and 7).
 *
 * Each is an acceleration evaluator (methods/framework/ode_axis.h) that eliminates the
 * multipliers and integrates an ODE: for a basis V of ker B (B = G H, the
 * velocity-level constraint matrix) and a particular solution x_p of B x = gamma,
 *     v' = x_p + V a,   (V^T M V) a = V^T (f - M x_p)          ([pennestri_coordinate_reduction] Eq. (17)),
 * where the paper's [S]{gamma} (Eq. (33), (65), (76)) is the particular
 * solution orthogonal to V.  Formulations (names FORMULATION/INTEGRATOR):
 *   qr      - V = Q2 of a column-pivoted QR of B^T (GSL QRPT)      Eqs. (58)-(65)
 *   putd    - Householder transform H of B^T, V = H D2^T           Eqs. (66)-(67)
 *   zeroeig - eigenvectors of B^T B for the zero eigenvalues       Eqs. (68)-(71)
 *   svd     - right singular vectors of B for zero singular values Eqs. (72)-(77)
 *   schur   - Schur vectors of B^T B for the zero eigenvalues      Eqs. (78)-(80)
 *   uk, ukb - Udwadia-Kalaba with the pseudo-inverse of B M^-1/2    Eqs. (82)-(90)
 *   cp      - coordinate partitioning (Wehage-Haug)                Eqs. (47)-(57)
 * The block Cholesky solve of Eqs. (3)-(8) is index1/...:linsol=chol (index1.c).
 *
 * All share one rank decision, mbs_ns_rank(): a (singular) value s_i counts
 * when s_i > rank_tol * max_j s_j (parameter `rank_tol`), and (qr, zeroeig,
 * svd, schur, uk, ukb) the rank never rises above its value at the run's first
 * evaluation, at q0 on the constraints: a redundant row's singular value grows
 * with the drift off them.  Every formulation
 * keeps a mbs_ns_diag (rank, condition of the reduced mass matrix, ...) that
 * mbs_ns_diag_get() reads from its workspace. */
#ifndef MBS_NULLSPACE_H
#define MBS_NULLSPACE_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

#include "../framework/ode_axis.h"

/* Diagnostics of one integration (reset at the start of each integrate()). */
typedef struct mbs_ns_diag {
    long evals;              /* acceleration evaluations */
    size_t rank_min, rank_max, rank_last; /* numerical rank of B */
    double cond_max, cond_last; /* 1-norm condition estimate of V^T M V (cp: of
                                   Eq. (56)'s M-hat; uk/ukb: cond of D D^T on its
                                   range, (s_1/s_r)^2) */
    long repartitions;       /* cp: partitions re-chosen after the initial one */
    long newton_iters;       /* cp: Newton iterations of the position recovery */
} mbs_ns_diag;

/* Default 1e-6: zeroeig and schur see the squared singular values (eigenvalues
 * of B^T B carry an absolute error ~ eps |B|^2), so their zero eigenvalues
 * appear as s ~ sqrt(eps) |B| ~ 1e-8 |B|; a threshold below ~1e-7 makes them
 * miss the rank deficiency. */
#define MBS_NS_RANK_TOL_DEFAULT 1e-6
#define MBS_NS_RANK_TOL_PARAM                                                              \
    {"rank_tol", MBS_NS_RANK_TOL_DEFAULT, 1e-14, 0.5,                                      \
     "rank decision: singular value s_i counts when s_i > rank_tol * max s", NULL, 0}

/* Number of the n values s_i (any order, >= 0) with s_i > rank_tol * max s. */
size_t mbs_ns_rank(const double *s, size_t n, double rank_tol);

/* mbs_ns_rank, never above cap (a run's rank at q0: off the constraints a
 * redundant row's value grows with the drift; (size_t)-1: no cap). */
size_t mbs_ns_rank_capped(const double *s, size_t n, double rank_tol, size_t cap);

/* Null-space bases (for tests and the gear train of [pennestri_coordinate_reduction] Sect. 6.1). */
typedef enum {
    MBS_NS_QR,
    MBS_NS_PUTD,
    MBS_NS_ZEROEIG,
    MBS_NS_SVD,
    MBS_NS_SCHUR
} mbs_ns_kind;

/* For B (m x n) compute an orthogonal n x n matrix W = [Y | V] whose last
 * n - rank columns V span ker B (and the first rank columns Y its orthogonal
 * complement, the row space of B) by decomposition `kind`.  Returns MBS_OK,
 * MBS_SINGULAR_MATRIX (putd with rank-deficient B), MBS_LIBRARY_FAILURE or
 * MBS_NO_MEMORY; allocates (not for the integration loops). */
int mbs_ns_basis(mbs_ns_kind kind, const gsl_matrix *B, double rank_tol, gsl_matrix *W,
                 size_t *rank);

/* The formulations (defined in nullspace.c, udwadia_kalaba.c, coord_partition.c). */
extern const mbs_accel_def mbs_accel_qr, mbs_accel_putd, mbs_accel_zeroeig, mbs_accel_svd,
    mbs_accel_schur, mbs_accel_uk, mbs_accel_ukb, mbs_accel_cp;

/* Diagnostics of workspace ws (from acc->alloc) of formulation acc, one of the
 * formulations above.  Returns MBS_OK, or MBS_BAD_INPUT for another one. */
int mbs_ns_diag_get(const mbs_accel_def *acc, const void *ws, mbs_ns_diag *d);

/* Helpers shared by the formulation files. */
/* The ODE formulation mbs_ode_formulation_<fm> named "fm" (they all yield lambda). */
#define MBS_NS_FORMULATION(fm, acc, prm, title, cite, fflags)                                 \
    const mbs_ode_formulation mbs_ode_formulation_##fm = {                                   \
        .name = #fm,                                                                         \
        .accel = &acc,                                                                       \
        .summary = title,                                                                    \
        .citation = cite,                                                                    \
        .flags = fflags,                                                                     \
        .lambda = 1,                                                                         \
        .params = prm,                                                                       \
        .n_params = sizeof prm / sizeof prm[0],                                              \
    };
void mbs_ns_diag_reset(mbs_ns_diag *d);
void mbs_ns_diag_note(mbs_ns_diag *d, size_t rank, double cond);

#endif
