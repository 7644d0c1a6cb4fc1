/* Private to methods/linsol*.c: the solver object and the
 * compressed-column patterns shared by linsol.c (interface, dense and UMFPACK
 * backends) and linsol_cholmod.c (the CHOLMOD range-space backend). */
#ifndef MBS_LINSOL_IMPL_H
#define MBS_LINSOL_IMPL_H

#include <cholmod.h>
#include <gsl/gsl_linalg.h>
#include <umfpack.h>

#include "linsol.h"

/* The compressed-column pattern with its triplet map (linsol.h: mbs_csc). */
typedef mbs_csc csc;

struct mbs_linsol {
    int kind;
    size_t nv, nl, n;
    double aug;
    mbs_linsol_stats st;
    int analysed;
    /* pattern of the last analysis */
    size_t pm_n, pb_n;
    size_t *pm_r, *pm_c, *pb_r, *pb_c;
    /* triplet index lists (int) of the current pattern */
    int *ti, *tj;
    size_t tcap;
    /* dense */
    gsl_matrix *K;
    gsl_permutation *perm;
    gsl_vector *rhs, *sol;
    /* umfpack: KKT in CSC */
    csc Kc;
    void *sym, *num;
    double ctrl[UMFPACK_CONTROL], info[UMFPACK_INFO];
    int *Wi;
    double *W, *kb, *kx;
    /* cholmod */
    cholmod_common cc;
    int cc_on;
    csc Ac;   /* lower triangle of A = M (+ w B^T B) */
    csc Br;   /* B^T in CSC = B by rows (nv x nl) */
    csc Bc;   /* B in CSC (nl x nv) */
    size_t nzt_m; /* triplets of M in Ac (the rest are B^T B products) */
    int *bt_pair; /* for each B^T B triplet: positions (in B triplets) of its two factors */
    double wgt;   /* augmentation weight actually used */
    /* values of A at LA's last numeric factorisation (LA_ok): an unchanged A
     * (a constant mass matrix) is not factored again */
    double *Ax0, rcA;
    size_t Ax0cap;
    int LA_ok;
    int LA_unit;  /* LA is LDL^T with L = I (a diagonal A, e.g. a diagonal M) */
    double *dA;   /* LA_unit: D in the original order (A = diag(dA)) */
    cholmod_factor *LA, *LS;
    int *Sp, *Si, *Sp0, *Si0;
    double *Sx;
    size_t Scap, Snz, Snz0;
    cholmod_dense *bd, *YA, *EA, *YS, *ES, *Xc, *Yc, *Ec;
    /* solutions of k-column solves (mbs_linsol_solve_k), one per k: CHOLMOD
     * reallocates a solution of another shape */
    cholmod_dense *XAk[MBS_LINSOL_MAX_RHS], *XSk[MBS_LINSOL_MAX_RHS];
    cholmod_sparse *bset, *xset;
    double *acc, *tv, *rl;
    int *mark, *list, *mark2;
    int *Yp, *Yi, *Yrp, *Yrc; /* Y = L^-1 P B^T by columns and rows */
    double *Yx, *Yrx;
    size_t Ycap;
};

int mbs_ls_chm_analyse_A(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                         char *msg, size_t len);
int mbs_ls_chm_analyse_B(mbs_linsol *ls, const mbs_triplets *B);
int mbs_ls_chm_factor(mbs_linsol *ls, const mbs_triplets *M, const mbs_triplets *B,
                      char *msg, size_t len);
int mbs_ls_chm_solve(mbs_linsol *ls, size_t k, const double *f, const double *gam, double *a,
                     double *lambda, char *msg, size_t len);
int mbs_ls_reserve_tij(mbs_linsol *ls, size_t n);

#endif
