/* The observer of a measuring run (private to harness/run.c and observe.c):
 * errors against the exact solution at every accepted step,
 * constraint residuals, energy, drift and the optional time series. */
#ifndef MBS_OBSERVE_H
#define MBS_OBSERVE_H

#include <stdio.h>

#include "../methods/framework/method.h"
#include "fit.h"
#include "run.h"

/* Observer state of the measuring run.  It evaluates the problem through its own
 * context so that the method's work counters are not touched. */
typedef struct observer {
    mbs_ctx dctx;
    const mbs_problem *pb;
    int exact;
    double *ex;              /* exact q | v | lambda */
    gsl_matrix *B;        /* dense B = G H (NULL when sparse) */
    int sparse;           /* MBS_PB_SPARSE with H = I: B as triplets, nothing n_l x n_v */
    mbs_triplets Bt;
    double *g, *gt, *gam;
    int have_energy;
    double E0;
    mbs_err3 emax;
    double pos_max, vel_max, acc_max, edrift;
    double pos_last, vel_last;
    mbs_drift drift;
    FILE *series;            /* optional time-series side file (spec->series) */
    double s_next, s_factor; /* end of the current log-spaced bin, bin growth */
    double s_g, s_gv, s_e;   /* maxima in the current bin */
    double s_t;
    int s_pending;
    struct mbs_traj *traj;   /* trajectory measures (harness/traj.h; NULL: off) */
    const mbs_ctx *mctx;     /* the method's context (its dense output) */
} observer;

double mbs_max_mixed_diff(const double *a, const double *b, size_t n);
double mbs_max_abs_diff(const double *a, const double *b, size_t n);
void mbs_observer_free(observer *o);
int mbs_observer_init(observer *o, const mbs_problem *pb, double t_end);
int mbs_observe(void *data, double t, const double *q, const double *v, const double *vdot,
                   const double *lambda);

#endif
