/* Linear-solver backends for the saddle-point (KKT) system of the index-1
 * formulation ([arnold2016dae] Eq. (17), Eq. (84c)):
 *
 *     [ M  B^T ] [ a      ]   [ f     ]
 *     [ B  0   ] [ lambda ] = [ gamma ],
 *
 * with M (n_v x n_v) and B (n_l x n_v) given as triplets (problems/triplets.h).
 * One small interface (alloc / factor / solve / stats / free) over three
 * backends:
 *   dense   - the KKT matrix assembled densely, GSL LU with partial pivoting
 *             (the arithmetic of index1's linsol=lu, for small systems and as
 *             the conformance reference);
 *   umfpack - SuiteSparse UMFPACK sparse LU of the KKT matrix (CSC); symbolic
 *             analysis once per sparsity pattern, numeric factorisation per
 *             matrix;
 *   cholmod - range-space solve: CHOLMOD Cholesky of A and of the Schur
 *             complement S = B A^-1 B^T, A = M, or the augmented-Lagrangian
 *             A = M + w B^T B (right-hand side f + w B^T gamma) when M is only
 *             positive definite on ker B ([dca_augmented_lagrangian] Sect. 2 / [pennestri_coordinate_reduction] Eq. (3)-(8)
 *             with L L^T replaced by a sparse factorisation):
 *               lambda = S^-1 (B A^-1 f~ - gamma),  a = A^-1 (f~ - B^T lambda).
 *             With A = P^T L D L^T P (simplicial, AMD order) the Schur complement
 *             is S = Y^T D^-1 Y, Y = L^-1 P B^T, whose columns are sparse
 *             triangular solves (cholmod_solve2 with Bset: the reach of a row of
 *             B in the elimination tree), so for block-diagonal M the cost per
 *             factorisation is linear in n.  Each symbolic analysis (of A and
 *             of S) is redone only when the sparsity pattern changes; the
 *             numeric factorisation of A only when its values change (a
 *             constant mass matrix is factored once).
 * Patterns are compared entry by entry with the triplets of the previous call;
 * triplets must therefore be structural (a callback pushes an entry even when
 * its value happens to be zero).  Workspace grows at the first factorisation and
 * is reused afterwards. */
#ifndef MBS_LINSOL_H
#define MBS_LINSOL_H

#include <stddef.h>

#include "../../problems/problem.h"

/* MBS_LS_KLU is no backend of this interface: it names SUNDIALS' SUNLinSol_KLU,
 * which the SUNDIALS peers (methods/peers/peer_sundials_klu.h) run on their own
 * CSC Newton matrices, in the statistics of records (mbs_ctx_report_linsol_stats). */
enum mbs_linsol_kind {
    MBS_LS_DENSE = 0,
    MBS_LS_UMFPACK = 1,
    MBS_LS_CHOLMOD = 2,
    MBS_LS_KLU = 3
};

typedef struct mbs_linsol_stats {
    long analyses;       /* symbolic analyses (pattern changes) */
    long factorizations; /* numeric factorisations (cholmod: of A and S each count; A
                            only when its values changed since its last one) */
    long solves;         /* right-hand sides solved */
    size_t n;            /* order of the factored matrix (KKT: n_v + n_l) */
    size_t nnz;          /* nonzeros of the matrices factored (KKT, or A + S) */
    size_t nnz_factor;   /* nonzeros of the factors (L + U, or L_A + L_S) */
    double fill;         /* nnz_factor / nnz */
    double rcond;        /* reciprocal condition estimate of the last factorisation
                            (umfpack: of the KKT matrix; cholmod: min over A, S;
 dense: min|U_ii| / max|U_ii|) */
} mbs_linsol_stats;

typedef struct mbs_linsol mbs_linsol;

/* Backend `kind` for n_v velocities and n_l constraints.  aug_weight (cholmod
 * only) > 0 selects A = M + w B^T B with w = aug_weight * max|M_ii| / max|B_ij|^2;
 * 0 uses A = M.  Returns MBS_OK, MBS_BAD_INPUT or MBS_NO_MEMORY. */
int mbs_linsol_alloc(mbs_linsol **ls, int kind, size_t nv, size_t nl, double aug_weight);

/* (Re-)analyse if the pattern of M or B changed, then factor.  Returns MBS_OK,
 * MBS_SINGULAR_MATRIX (reason in msg), MBS_NO_MEMORY or MBS_LIBRARY_FAILURE. */
int mbs_linsol_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B, char *msg,
                      size_t msglen);

/* Solve with the last factorisation: f (n_v), gamma (n_l) -> a (n_v), lambda
 * (n_l; may be NULL). */
int mbs_linsol_solve(mbs_linsol *ls, const double *f, const double *gamma, double *a,
                     double *lambda, char *msg, size_t msglen);

/* Most right-hand sides of one mbs_linsol_solve_k call (Radau IIA with 7
 * stages: one real and three complex blocks, 7 columns). */
#define MBS_LINSOL_MAX_RHS 8

/* k = 1 .. MBS_LINSOL_MAX_RHS right-hand sides with the last factorisation
 * (counted as k solves): column c is f + c n_v, gamma + c n_l -> a + c n_v,
 * lambda + c n_l (lambda may be NULL).  CHOLMOD solves the columns together in
 * one pass of each triangular solve (Radau's real block and the real and
 * imaginary parts of its complex blocks); the other backends solve them one
 * after the other.  Each column's result is that of mbs_linsol_solve. */
int mbs_linsol_solve_k(mbs_linsol *ls, size_t k, const double *f, const double *gamma,
                       double *a, double *lambda, char *msg, size_t msglen);

void mbs_linsol_get_stats(const mbs_linsol *ls, mbs_linsol_stats *st);

/* Frees *ls (NULL allowed) and sets it to NULL. */
void mbs_linsol_free(mbs_linsol **ls);

const char *mbs_linsol_name(int kind);

/* A sparse pattern in compressed-column form with a map from the triplets it
 * was built from: entry k of the triplets (ti[k], tj[k]) sits at position
 * map[k] of i / x (duplicates share a position: their values add up). */
typedef struct mbs_csc {
    size_t nr, nc, nzt; /* rows, columns, number of triplets */
    int *p, *i;         /* column pointers (nc + 1), row indices (nnz) */
    double *x;          /* values (nnz), zero after the build */
    int *map;           /* triplet k -> position in i/x (nzt) */
    size_t nnz;
} mbs_csc;

/* Compress the nzt triplets (ti, tj) of an nr x nc matrix to CSC with sorted
 * row indices and duplicates merged (replaces what A held).  Returns 0 or -1
 * (out of memory; A is then empty). */
int mbs_csc_build(mbs_csc *A, size_t nr, size_t nc, size_t nzt, const int *ti, const int *tj);
/* Frees the arrays of A and zeroes it (a zeroed A is allowed). */
void mbs_csc_free(mbs_csc *A);

#endif
