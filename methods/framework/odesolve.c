#include "odesolve.h"

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mbs_ode_solver {
    size_t n;
    mbs_ode_fn f;
    void *data;
    int status; /* of the last f */
    gsl_odeiv2_step *step;
    gsl_odeiv2_system sys;
    double *y0, *yerr, *dydt;
};

static int rhs(double t, const double y[], double dydt[], void *p)
{
    mbs_ode_solver *s = p;
    s->status = s->f(s->data, t, y, dydt);
    return s->status == 0 ? GSL_SUCCESS : GSL_EBADFUNC;
}

mbs_ode_solver *mbs_ode_alloc(size_t n, mbs_ode_fn f, void *data)
{
    mbs_ode_solver *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = n;
    s->f = f;
    s->data = data;
    s->step = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, n);
    s->y0 = malloc(n * sizeof(double));
    s->yerr = malloc(n * sizeof(double));
    s->dydt = malloc(n * sizeof(double));
    s->sys = (gsl_odeiv2_system){.function = rhs, .dimension = n, .params = s};
    if (!s->step || !s->y0 || !s->yerr || !s->dydt) {
        mbs_ode_free(s);
        return NULL;
    }
    return s;
}

void mbs_ode_free(mbs_ode_solver *s)
{
    if (!s)
        return;
    if (s->step)
        gsl_odeiv2_step_free(s->step);
    free(s->y0);
    free(s->yerr);
    free(s->dydt);
    free(s);
}

int mbs_ode_solve(mbs_ode_solver *s, double t0, double t1, double *y, double tol, double h0,
                  long *steps)
{
    double t = t0, h = h0, hmin = 1e-14 * fmax(fabs(t1 - t0), DBL_MIN);
    long n_steps = 0;
    gsl_odeiv2_step_reset(s->step);
    s->status = 0;
    if (rhs(t, y, s->dydt, s) != GSL_SUCCESS)
        return s->status;
    while (t < t1) {
        int last = t + h >= t1;
        if (last)
            h = t1 - t;
        memcpy(s->y0, y, s->n * sizeof(double));
        if (gsl_odeiv2_step_apply(s->step, t, h, y, s->yerr, s->dydt, NULL, &s->sys) !=
            GSL_SUCCESS) {
            memcpy(y, s->y0, s->n * sizeof(double));
            if (s->status != 0)
                return s->status;
            h *= 0.5;
        } else {
            /* GSL's standard rule (ode-initval2/control.c, a_y = 1, a_dydt = 0). */
            double rmax = DBL_MIN;
            for (size_t i = 0; i < s->n; i++)
                rmax = fmax(rmax, fabs(s->yerr[i]) / (tol + tol * fabs(y[i])));
            if (rmax > 1.1) {
                memcpy(y, s->y0, s->n * sizeof(double));
                h *= fmax(0.9 / pow(rmax, 1.0 / 8.0), 0.2);
            } else {
                t = last ? t1 : t + h;
                n_steps++;
                if (rmax < 0.5)
                    h *= fmin(fmax(0.9 / pow(rmax, 1.0 / 9.0), 1.0), 5.0);
                if (t < t1 && rhs(t, y, s->dydt, s) != GSL_SUCCESS)
                    return s->status;
            }
        }
        if (h < hmin)
            return -1;
    }
    if (steps)
        *steps = n_steps;
    return 0;
}
