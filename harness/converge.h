/* Refinement studies: fixed-step methods over h0, h0/r, ... and adaptive methods
 * over tolerances tol0, tol0/r, ... (tolerance proportionality). */
#ifndef MBS_CONVERGE_H
#define MBS_CONVERGE_H

#include "fit.h"
#include "run.h"

enum { MBS_MAX_LEVELS = 40 };

typedef struct mbs_converge {
    int adaptive;                     /* levels are tolerances */
    int levels;
    double x[MBS_MAX_LEVELS];         /* h or tol per level */
    mbs_record rec[MBS_MAX_LEVELS];
    mbs_order_fit fit[3];             /* q, v, lambda */
    int self_ref;                     /* 1: no exact/stored reference: each level's
                                         errors are against the next finer level (the
                                         last against the extra level x_ref) */
    double x_ref;
    int lambda_forces;                /* 1 (self-convergence, redundant constraints):
                                         the lambda errors are those of the constraint
                                         forces G(q)^T lambda (the multipliers are not
                                         unique) */
    int branch;                       /* 1: measured against the problem's branch
                                         (problem.h, branch): q and v at t_end, no
                                         multipliers; a level whose configuration is
                                         off the branch has status left_branch */
    int declined;                     /* 1: the first level was declined (status
                                         unsupported); no further level was run */
    /* A stored reference states its accuracy (harness/reference.h,
     * mbs_reference_digits): ref_digits over q, v, lambda, ref_digits_q over q
     * (NaN: exact solution, finest level or no reference).  ref_acc is the
     * absolute accuracy this gives per group, 10^-digits (1 + max |ref_i|) over
     * the group's components (the errors are absolute maxima).  A level whose
     * error in a group is below it is reference-limited in that group and left
     * out of that group's fit. */
    double ref_digits, ref_digits_q;
    double ref_acc[3];
    unsigned char ref_limited[MBS_MAX_LEVELS][3];
    /* A level whose error in a group lies at or below the round-off floor
     * (mbs_roundoff_floor with the group's largest |y| at t_end over the levels
     * and the level's steps) is round-off-limited: marked and said, and the
     * battery does not count it as usable.  It stays in the fit: the floor is a
     * worst-case bound (linear accumulation), and levels under it still carry
     * the order (heavytop index2/radau5-fixed: q 9.45e-13 under 1.4e-12, pairwise
     * 4.97); leaving them out turned 6 radau5-fixed passes into findings. */
    double roundoff[MBS_MAX_LEVELS][3];
    unsigned char roundoff_limited[MBS_MAX_LEVELS][3];
} mbs_converge;

/* Round-off floor of an error in a group of largest magnitude ymax after `steps`
 * steps: eps (1 + ymax) max(1000, steps); the rounding of the state
 * accumulates at most linearly over the steps, and a floor of 1000 eps covers
 * the rounding of one step's linear solves and of the error measurement. */
double mbs_roundoff_floor(double ymax, long steps);

/* max |y_i| over group g (0 q, 1 v, 2 lambda) at t_end, over the levels that ran. */
double mbs_converge_group_ymax(const mbs_converge *cv, int g);

/* Run the study; base->h / base->tol are ignored (x0 is h0 or tol0).
 * Without an exact solution or a stored reference for the problem's parameters
 * and t_end, the study falls back to self-convergence: one more level at
 * x0 / ratio^levels is run and each level's errors are measured against the
 * final state of the next finer level, the last against the extra one (flagged
 * by self_ref, "reference": "next-level" in JSON): the ratio of consecutive
 * errors is then r^p without a bias at the last pair.  A problem with a branch
 * (problem.h, branch; the N-four-bar's parallelogram) is measured against it
 * instead (branch, "reference": "branch"): q and v at t_end, and a level that
 * left the branch gets status left_branch (it ran; the motion it computed is
 * another one).
 * Levels whose error lies below the stated accuracy of a stored reference are
 * reference-limited (ref_limited) and left out of the fit; levels at or below the
 * round-off floor are marked round-off-limited (roundoff_limited).  A first level
 * declined by the method (status unsupported) ends the study (declined).
 * Returns MBS_OK or MBS_BAD_INPUT (message in err).  Free with
 * mbs_converge_free. */
/* A final configuration farther than this from the branch's configurations
 * (problem.h, branch: relative to the mechanism's length) left the branch: on it
 * the distance is round-off (1e-15 .. 1e-13 measured on the N-four-bar), off it
 * O(1) (0.43 .. 2.0). */
#define MBS_BRANCH_OFF 1e-2

int mbs_converge_run(const mbs_run_spec *base, double x0, int levels, double ratio,
                     mbs_converge *out, char *err, size_t errlen);
void mbs_converge_free(mbs_converge *c);
void mbs_converge_print(const mbs_converge *c, FILE *f);
char *mbs_converge_json(const mbs_converge *c);

#endif
