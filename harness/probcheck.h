/* The problem battery (issue 3, issue 20): the checks every problem, built-in or
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
 *   sparse    triplet callbacks equal to the dense ones (flagged sparse)
 *   exact     the exact solution (flagged exact) starts at q0, satisfies the
 *             equations of motion and stays on the constraint manifold
 *   energy    relative energy drift of a tight run below 1e-7 (flagged
 *             conservative)
 */
#ifndef MBS_PROBCHECK_H
#define MBS_PROBCHECK_H

#include <stdio.h>

/* Run the battery on the problem "name[:k=v,...]", one line per check on out.
 * Returns the number of failed checks (0: all passed), or -1 with a one-line
 * message in err when the problem cannot be opened. */
int mbs_problem_check(const char *spec, FILE *out, char *err, size_t errlen);

/* `mbsbench check-problem -p NAME[:k=v,...]`: exit status 0 all passed, 1 a check
 * failed, 2 bad input. */
int mbs_cmd_check_problem(int argc, char **argv);

#endif
