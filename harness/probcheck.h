/* The problem battery: the checks every problem, built-in or
 * plugin, must pass, as a library function.  `mbsbench check-problem -p NAME`
 * prints its lines; tests/check_problems.c runs it over the whole registry.
 *
 * Checks (each one line, "ok" or "FAIL" with the component that failed):
 *   initial   consistent initial values: |g(q0)| and |B v0 + g_t| below 1e-12
 *             (scaled); lambda0 equal to the index-1 multipliers where M is regular
 *             and G has full rank
 *   G         G = dg/dq against central differences, at t0 and at a perturbed state
 *   g_t       the constraint_t callback against central differences of g in t
 *   gamma     gamma against central differences of d/dt (B v + g_t) at fixed v
 *             (gamma = -(B v)_q H v - 2 B_t v - g_tt, problems/problem.h)
 *   M         symmetric, positive semi-definite, positive definite on ker B unless
 *             flagged singular-M
 *   const-M   M at t0, q0 equal to M at four perturbed t, q to 1e-15 (flagged
 *             constant-M; unflagged problems get a skip line saying whether M moved)
 *   sparse    triplet callbacks equal to the dense ones (flagged sparse)
 *   deriv     each analytic derivative the problem gives (force_q, force_v,
 *             gtlambda_q, gw_q) against central differences of force and jacobian
 *             at a generic point, relative error <= 1e-6 (probcheck_deriv.c)
 *   exact     the exact solution (flagged exact) starts at q0, satisfies the
 *             equations of motion and stays on the constraint manifold
 *   energy    relative energy drift of a tight run below 1e-7 (flagged
 *             conservative)
 */
#ifndef MBS_PROBCHECK_H
#define MBS_PROBCHECK_H

#include <stdio.h>

#include "../problems/problem.h"

/* Run the battery on the problem "name[:k=v,...]", one line per check on out.
 * Returns the number of failed checks (0: all passed), or -1 with a one-line
 * message in err when the problem cannot be opened. */
int mbs_problem_check(const char *spec, FILE *out, char *err, size_t errlen);

/* ---- analytic derivatives (probcheck_deriv.c; tests/check_derivs.c) ---------- */
enum { MBS_DERIV_FORCE_Q, MBS_DERIV_FORCE_V, MBS_DERIV_GTLAMBDA_Q, MBS_DERIV_GW_Q,
       MBS_DERIV_COUNT };
/* "force_q", "force_v", "gtlambda_q", "gw_q". */
const char *mbs_deriv_name(int which);
/* A generic point near the initial state: q0 and v0 perturbed, arbitrary lambda
 * and w (so no derivative vanishes by symmetry of the start); an mbs_status. */
int mbs_deriv_point(const mbs_problem *pb, double *q, double *v, double *lam, double *w);
/* The entry where the derivative differs most from central differences. */
typedef struct mbs_deriv_worst {
    size_t i, j;
    double value, fd;
} mbs_deriv_worst;
/* Largest |D - D_fd| / (1 + max |D_fd|) of derivative `which` of pb evaluated
 * with the definition def (which may differ from pb's), at t0 + 0.137 and the
 * generic point, steps 1e-5 (1 + |x_j|); worst (may be NULL) gets its entry.
 * -1 when def does not provide the derivative; -2 with a message in err when
 * a callback failed. */
double mbs_deriv_mismatch(const mbs_problem *pb, const mbs_problem_def *def, int which,
                          mbs_deriv_worst *worst, char *err, size_t errlen);

/* `mbsbench check-problem -p NAME[:k=v,...]`: exit status 0 all passed, 1 a check
 * failed, 2 bad input. */
int mbs_cmd_check_problem(int argc, char **argv);

#endif
