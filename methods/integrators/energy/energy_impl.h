/* Private to methods/energy*.c: the workspace of the
 * energy-preserving and energy-decaying schemes ([bauchau2003selfstabilized]), shared by energy.c
 * (methods, allocation, the ep and ed steps, integration), energy_dgrad.c
 * (force checks and derivatives, discrete gradients, average force, linear
 * algebra) and energy_ggl.c (the GGL step of Eq. (37)). */
#ifndef MBS_ENERGY_IMPL_H
#define MBS_ENERGY_IMPL_H

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>

#include "energy.h"
#include "../../formulations/index1.h"
#include "../../framework/method.h"

enum { P_TOL, P_MAXIT, P_FORCE, P_LAMBDA, P_FJAC, P_A };
enum { FJAC_AUTO, FJAC_NONE, FJAC_FD };
enum { FORCE_AUTO, FORCE_GRADIENT, FORCE_MIDPOINT };
enum { LAMBDA_END, LAMBDA_MID };

typedef struct energy_ws {
    int ed;             /* 0: ep/midpoint, 1: ed/tdg */
    double a;           /* ED dissipation */
    double tol;
    long maxit;
    int gradient;       /* resolved force mode: 1 discrete gradient, 0 midpoint */
    int lambda_end;
    int rheo;           /* constraint depends on t */
    size_t n, nl, nlc, nx;
    gsl_matrix *M, *Bg, *Bh, *Gf, *Gt, *J;
    gsl_permutation *perm;
    gsl_vector *r, *dx;
    double *qi, *vi, *qf, *vf, *qj, *vj, *lam, *lam0;
    /* The Newton unknowns as increments, pf = q_f - q_i and pj = q_j - q_i, and the
     * velocity increments dvf = v_f - v_i, dvj = v_j - v_i formed from them: q_f, q_j
     * are rounded to eps |q|, and a velocity 2 (q_f - q_i) / h - v_i formed from them
     * would carry that rounding times 2 / h. */
    double *pf, *pj, *dvf, *dvj;
    double *qm, *vm, *dq, *zero, *fg, *fh, *ga, *gb, *gc, *gd, *ag, *gf, *tmp;
    mbs_index1 *ix;     /* lambda=end: index-1 multipliers at the step ends */
    double *acc, *lend; /* v' and lambda of the index-1 system at the step end */
    double *fi, *fj;    /* ED: f(t_i, q_i, v_i) and f(t_i, q_j, v_j) */
    int use_fjac;       /* force Jacobians f_q, f_v in the Newton matrix */
    double t_last, h_last; /* the last step (mbs_energy_last_step) */
    double *adiag;
    gsl_matrix *Fq, *Fv;
    double *f0, *f1, *qx, *vx;
    /* GGL Eq. (37) system (ep only) */
    gsl_matrix *Jg;
    gsl_permutation *pg;
    gsl_vector *rg, *dg;
} energy_ws;

int mbs_energy_dgrad(energy_ws *w, mbs_ctx *ctx, double ta, const double *qa, double tb,
                 const double *qb, gsl_matrix *B, double *a, double *gbout);
int mbs_energy_factor(mbs_ctx *ctx, gsl_matrix *J, gsl_permutation *p, double t);
int mbs_energy_fbar(energy_ws *w, mbs_ctx *ctx, double t, const double *qa, const double *va,
                const double *qb, const double *vb, double *out);
int mbs_energy_force_is_constant(mbs_ctx *ctx, energy_ws *w, double t0, const double *q0,
                             const double *v0);
int mbs_energy_force_is_gradient(mbs_ctx *ctx, energy_ws *w, double t0, const double *q0,
                             const double *v0);
int mbs_energy_force_jacobian(energy_ws *w, mbs_ctx *ctx, double t, const double *q,
                          const double *v);
double mbs_energy_inf_norm(const double *x, size_t n);
int mbs_energy_lu_solve(mbs_ctx *ctx, const gsl_matrix *LU, const gsl_permutation *p,
                    const gsl_vector *r, gsl_vector *dx, double t);
double mbs_energy_mass_scale(const gsl_matrix *M);
int mbs_energy_solve(mbs_ctx *ctx, gsl_matrix *J, gsl_permutation *p, const gsl_vector *r,
                 gsl_vector *dx, double t);

#endif
