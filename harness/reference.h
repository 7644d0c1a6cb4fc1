/* Stored reference solutions for problems without an exact solution.
 *
 * problems/ref/<problem>.ref (directory overridable with $MBSBENCH_REFDIR) holds
 * one or more entries, each a block of `key = value` lines ending with `y`:
 *
 *     params = N=10,l=1,...        (canonical text of ALL parameters)
 *     t_end = 10
 *     provenance = ggl/radau5 tol=1e-12 vs proj-index1/dopri5 tol=1e-13, agree to
 *                  11.2 digits, mbsbench <rev>, 2026-11-22
 *     y = q1 q2 ... v1 ... lambda1 ...   (%.17g, the state at t_end)
 *
 * Lines starting with '#' are comments.  `make references` regenerates them. */
#ifndef MBS_REFERENCE_H
#define MBS_REFERENCE_H

#include <stddef.h>

#include "../problems/problem.h"

/* 1 and y (n_q + n_v + n_lambda values) when an entry matches the instance's
 * parameters and t_end (relative 1e-12), 0 otherwise.  prov gets the provenance. */
int mbs_reference_find(const mbs_problem *pb, double t_end, double *y, char *prov,
                       size_t provlen);

/* Append an entry (replacing a matching one) atomically.  Returns 0 or -1. */
int mbs_reference_store(const mbs_problem *pb, double t_end, const double *y,
                        const char *provenance);

/* The accuracy a provenance states: the digits of agreement of its two
 * computations, "agree to D digits (q: DQ; max |dy|/(1+|y|) over q,v,lambda)"
 * (harness/refgen.c), i.e. max_i |dy_i| / (1 + |y_i|) <= 10^-D over q, v,
 * lambda and <= 10^-DQ over q.  Returns D (NaN when the text states none) and
 * sets *digits_q to DQ (D when not stated). */
double mbs_reference_digits(const char *provenance, double *digits_q);

/* Path of the problem's reference file. */
void mbs_reference_path(const char *problem, char *buf, size_t len);

/* Stored reference trajectories (harness/traj.h): problems/ref/<problem>.traj
 * (same directory), entries of
 *
 *     params = N=10,l=1,...        (canonical text of ALL parameters)
 *     t_end = 5
 *     steps = 100                  (output steps: the grid t0 + k (t_end - t0)/steps)
 *     provenance = index1/rk8pd tol=1e-13 vs ..., agree to ... digits, ...
 *     rows = 101
 *     t y1 y2 ...                  (rows lines: t_k and q | v | lambda (| x) there)
 *
 * or, for a trajectory that two tight computations do not agree on (beyond the
 * predictability horizon), the same header ending in
 *
 *     horizon = 3.2                (the first grid time where they part)
 *
 * instead of rows.  `make reference-trajectories` regenerates them. */
enum { MBS_REFTRAJ_NONE = 0, MBS_REFTRAJ_ROWS = 1, MBS_REFTRAJ_HORIZON = 2 };

/* Look up the entry of the instance's parameters, t_end (relative 1e-12) and
 * steps.  MBS_REFTRAJ_ROWS: rows ((steps + 1) x ny, the states without t) are
 * filled; MBS_REFTRAJ_HORIZON: *horizon is set; prov gets the provenance. */
int mbs_reference_traj_find(const mbs_problem *pb, double t_end, long steps, double *rows,
                            double *horizon, char *prov, size_t provlen);

/* Store an entry (replacing a matching one) atomically: rows ((steps + 1) x ny)
 * or, with rows = NULL, the horizon.  Returns 0 or -1. */
int mbs_reference_traj_store(const mbs_problem *pb, double t_end, long steps,
                             const double *rows, double horizon, const char *provenance);

/* Path of the problem's stored-trajectory file. */
void mbs_reference_traj_path(const char *problem, char *buf, size_t len);

#endif
