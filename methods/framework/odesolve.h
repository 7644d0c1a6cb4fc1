/* A plain adaptive ODE solve y' = f(t, y) from t0 to t1 with GSL's rk8pd stepper
 * and GSL's standard step-size rule, reporting no steps: for starting values
 * and reference computations inside methods.  (gsl_odeiv2_driver would do, but
 * its constructor crashes when an allocation fails, GSL 2.7.) */
#ifndef MBS_ODESOLVE_H
#define MBS_ODESOLVE_H

#include <stddef.h>

typedef int (*mbs_ode_fn)(void *data, double t, const double *y, double *dydt);

typedef struct mbs_ode_solver mbs_ode_solver;

/* NULL when out of memory. */
mbs_ode_solver *mbs_ode_alloc(size_t n, mbs_ode_fn f, void *data);
void mbs_ode_free(mbs_ode_solver *s);

/* y(t0) -> y(t1) with |err_i| <= tol (1 + |y_i|) per step; h0 > 0 is the first
 * trial step.  Returns 0, the status of f when it failed, or -1 when the step
 * size underflowed.  Counts the steps taken in *steps (may be NULL). */
int mbs_ode_solve(mbs_ode_solver *s, double t0, double t1, double *y, double tol, double h0,
                  long *steps);

#endif
