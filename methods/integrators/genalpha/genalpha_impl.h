/* Private to methods/genalpha*.c: the state of the
 * generalized-alpha, HHT and GGL generalized-alpha methods, shared by
 * genalpha.c (parameters, workspace, starting values, integration, methods)
 * and genalpha_step.c (iteration matrix, residual, Newton step). */
#ifndef MBS_GENALPHA_IMPL_H
#define MBS_GENALPHA_IMPL_H

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include "../../../core/gslalloc.h"
#include "../../formulations/index1.h"
#include "../../formulations/kkt_eval.h"
#include "../../linsol/linsol.h"
#include "../../framework/method.h"
#include "../../../problems/triplets.h"

typedef enum { GA_INDEX3, GA_HHT, GA_GGL } ga_kind;

typedef struct ga_variant {
    ga_kind kind;
    int lie; /* 1: Lie-group variant (liegroup/, liegroup-ggl/): q_{n+1} = q_n o exp(h Delta q) */
} ga_variant;

enum { GA_START_PLAIN = 0, GA_START_CORRECTED = 1 };

typedef struct ga_state {
    ga_kind kind;
    double am, af, beta, gamma; /* algorithmic parameters */
    int start;
    double ntol;
    long nmaxit;
    size_t n, nl, nx;           /* n = n_v (= n_q unless Lie group); nx = unknowns of the step */
    size_t nq;                  /* n_q: length of qn, q1, tq */
    int lie;                    /* q o exp(w) through mbs_lie_exp (MBS_PB_LIEGROUP problem) */
    double *hx;                 /* h Delta q (Lie-group update) */
    gsl_matrix *M, *G;          /* at the current iterate */
    gsl_matrix *M0, *G0;        /* at (t_n, q_n): iteration matrix, GGL correction */
    gsl_matrix *K;              /* iteration matrix and its LU factors */
    gsl_permutation *perm;
    gsl_vector *F, *F0, *dx;    /* residual, saved residual (difference Jacobian), step */
    double *x, *xold;           /* Delta q | h lambda [| mu] */
    double *qn, *vn, *qddn, *an, *lam;
    double *q1, *v1, *qdd1, *a1, *w, *f, *g, *gt;
    double *y;                  /* q | v | lambda handed to mbs_accept */
    double *tq, *tv, *acc1, *acc2; /* starting-value work */
    mbs_index1 *ix;             /* index-1 accelerations for the starting values */
    /* linsol != full (structured path, see the header) */
    int lskind;                 /* -1: full; else the mbs_linsol_kind */
    mbs_linsol *ls, *ls2;       /* KKT(c M, G); GGL: KKT(I, G) */
    mbs_kkt_eval ke, ke0;       /* M, G at the iterate and at (t_n, q_n) */
    mbs_triplets cM, Id;        /* c M(q_n), the identity */
    double *r1, *r2, *sa, *sl, *z, *nu; /* right-hand sides and solutions */
} ga_state;

enum { GA_LS_FULL = 0, GA_LS_LU = 1, GA_LS_UMFPACK = 2, GA_LS_CHOLMOD = 3 };

int mbs_ga_step(ga_state *st, mbs_ctx *ctx, double t, double h);

#endif
