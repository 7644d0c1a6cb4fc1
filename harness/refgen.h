/* `mbsbench reference`: recompute a problem's stored reference solution with two
 * independent methods at tight tolerance, check their agreement and store it
 * with its provenance (harness/reference.h). */
#ifndef MBS_REFGEN_H
#define MBS_REFGEN_H

#include <stddef.h>

typedef struct mbs_refgen_spec {
    const char *problem;  /* "chain:N=10" */
    const char *methods;  /* "A,B"; "independent" = the problem's own formulation;
                             NULL = default (independent,index1/rk8pd or
                             index1/rk8pd,index1/dopri5) */
    double tol;           /* tolerance of both runs (NaN: 1e-13) */
    double t_end;         /* NaN: problem default */
    double min_digits;    /* required agreement (NaN: 8) */
    int store;            /* 0: compute and report only */
    /* Trajectory mode (harness/traj.h, problems/ref/NAME.traj): both computations
     * at every time of the output grid (output_steps: 0 = the problem's), compared
     * there; the first time where they agree to fewer than min_digits is the
     * predictability horizon: refused (return 1, the horizon stored unless dry
     * run), or with expect_horizon return 0 (and 1 when they agree). */
    int trajectory;
    long output_steps;
    int expect_horizon;
} mbs_refgen_spec;

typedef struct mbs_refgen_result {
    double digits;        /* -log10 max_i |yA_i - yB_i| / (1 + |yA_i|) over q | v | lambda
                             (redundant problems: over q | v and G^T lambda, the multipliers
                             not being unique; trajectory mode: the least over the grid) */
    double digits_q;      /* the same over q only */
    char provenance[1024];
} mbs_refgen_result;

/* Returns 0 (stored or, with store = 0, computed), 1 (a run failed or the
 * agreement is below min_digits; nothing stored) or 2 (bad input / I/O error);
 * messages go to err. */
int mbs_refgen(const mbs_refgen_spec *spec, mbs_refgen_result *res, char *err, size_t errlen);

/* The command line: mbsbench reference PROBLEM[:k=v] [--t-end T] [--tol T]
 * [--methods A,B] [--min-digits D] [--dry-run] [--trajectory [--output-steps N]
 * [--expect-horizon]]. */
int mbs_cmd_reference(int argc, char **argv);

#endif
