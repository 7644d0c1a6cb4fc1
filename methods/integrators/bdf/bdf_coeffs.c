/* BDF (methods/integrators/bdf/bdf.c): error weights and norms, the variable-step BDF
 * coefficients from Lagrange weights, divided differences, the estimates of
 * the local error at neighbouring orders and the order selection (after DASSL,
 * Brenan, Campbell & Petzold, Sect. 5.2).  Split from bdf.c. */
#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/gslalloc.h"
#include "bdf_impl.h"

/* ---- small helpers --------------------------------------------------------- */

/* Weighted RMS norm of x over the components with mask[i] > 0, component i
 * multiplied by h^(mask[i] - 1) (h = step of the current attempt): the
 * index-aware scaling of RADAU5 (Hairer & Wanner, Sect. VII.8), index-2
 * components by h, index-3 components by h^2. */
double mbs_bdf_wnorm(const bdf_state *st, const double *x, const int *mask)
{
    double h = st->hnow, sum = 0.0;
    const double scale[4] = {0.0, 1.0, h, h * h};
    size_t cnt = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (!mask[i])
            continue;
        double r = scale[mask[i]] * x[i] / st->w[i];
        sum += r * r;
        cnt++;
    }
    return cnt ? sqrt(sum / (double)cnt) : 0.0;
}

void mbs_bdf_set_weights(bdf_state *st, const double *y, double rtol, double atol)
{
    for (size_t i = 0; i < st->n; i++)
        st->w[i] = rtol * fabs(y[i]) + atol;
}

/* Lagrange weights L_i(t) of the nodes ts[0..m-1] evaluated at t. */
void mbs_bdf_lagrange_weights(const double *ts, int m, double t, double *L)
{
    for (int i = 0; i < m; i++) {
        double p = 1.0;
        for (int j = 0; j < m; j++)
            if (j != i)
                p *= (t - ts[j]) / (ts[i] - ts[j]);
        L[i] = p;
    }
}

/* BDF coefficients: derivative at x[0] of the interpolant through x[0..k]. */
void mbs_bdf_coefficients(const double *x, int k, double *c)
{
    c[0] = 0.0;
    for (int j = 1; j <= k; j++)
        c[0] += 1.0 / (x[0] - x[j]);
    for (int i = 1; i <= k; i++) {
        double num = 1.0, den = 1.0;
        for (int j = 1; j <= k; j++)
            if (j != i)
                num *= x[0] - x[j];
        for (int j = 0; j <= k; j++)
            if (j != i)
                den *= x[i] - x[j];
        c[i] = num / den;
    }
}

/* Divided differences of the points (ts[i], ys[i]), i < m, level by level in
 * st->dd; after level l, st->dd[0] is the l-th divided difference over the
 * points 0..l (it does not depend on m).  visit(l) is called after each level
 * l >= 1 (NULL: none). */
typedef struct dd_visit {
    bdf_state *st;
    double h;
    int want[BDF_NHIST]; /* want[l]: order p = l - 1 estimate requested */
    double est[BDF_NHIST];
} dd_visit;

static double factorial(int k)
{
    double f = 1.0;
    for (int i = 2; i <= k; i++)
        f *= i;
    return f;
}

static double harmonic(int k)
{
    double s = 0.0;
    for (int j = 1; j <= k; j++)
        s += 1.0 / j;
    return s;
}

/* |h^(p+1) y^(p+1)| / ((p+1) H_p) with y^(p+1) ~ (p+1)! dd, dd the divided
 * difference of order p + 1. */
static double estimate_from(bdf_state *st, const double *dd, int p, double h)
{
    return factorial(p) * pow(h, p + 1) * mbs_bdf_wnorm(st, dd, st->errmask) / harmonic(p);
}

/* One divided-difference table over the points 0..m-1 gives the estimates of
 * every requested order (those of order p use the points 0..p+1). */
static void divdiff_estimates(dd_visit *v, double *const *ys, const double *ts, int m)
{
    bdf_state *st = v->st;
    size_t n = st->n;
    for (int i = 0; i < m; i++)
        memcpy(st->dd[i], ys[i], n * sizeof(double));
    for (int l = 1; l < m; l++) {
        for (int i = 0; i + l < m; i++) {
            double d = ts[i] - ts[i + l];
            for (size_t c = 0; c < n; c++)
                st->dd[i][c] = (st->dd[i][c] - st->dd[i + 1][c]) / d;
        }
        if (v->want[l])
            v->est[l] = estimate_from(st, st->dd[0], l - 1, v->h);
    }
}

/* Estimated local error of BDF order p from the divided difference of order
 * p + 1 over the points (ts, ys)[0..p+1]. */
double mbs_bdf_order_estimate(bdf_state *st, double *const *ys, const double *ts, int p,
                             double h)
{
    dd_visit v = {.st = st, .h = h};
    v.want[p + 1] = 1;
    divdiff_estimates(&v, ys, ts, p + 2);
    return v.est[p + 1];
}

/* Order selection after an accepted step (points hy[0..] include y_{n+1});
 * returns the new order and its error estimate in *est. */
int mbs_bdf_select_order(bdf_state *st, int k, double err, double h, int nconst, double *est)
{
    double *const *ys = st->hy;
    const double *ts = st->ht;
    int knew = k;
    *est = err;
    /* The estimates of orders k-2, k-1 and k+1 come from one table (they are
     * the same numbers as from separate tables: see divdiff_estimates). */
    dd_visit v = {.st = st, .h = h};
    if (k > 1 && st->nhist >= k + 1) {
        int up = k < st->maxord && nconst >= k + 1 && st->nhist >= k + 3;
        v.want[k] = 1;
        if (k > 2)
            v.want[k - 1] = 1;
        if (up)
            v.want[k + 2] = 1;
        divdiff_estimates(&v, ys, ts, up ? k + 3 : k + 1);
        double ekm1 = v.est[k];
        double ekm2 = k > 2 ? v.est[k - 1] : 0.0;
        if ((k == 2 && ekm1 <= 0.5 * err) || (k > 2 && fmax(ekm1, ekm2) <= err)) {
            *est = ekm1;
            return k - 1;
        }
        if (up) {
            double ekp1 = v.est[k + 2];
            if (ekm1 <= fmin(err, ekp1)) {
                knew = k - 1;
                *est = ekm1;
            } else if (ekp1 < err) {
                knew = k + 1;
                *est = ekp1;
            }
        }
    } else if (k == 1 && k < st->maxord && nconst >= 2 && st->nhist >= 4) {
        double ekp1 = mbs_bdf_order_estimate(st, ys, ts, 2, h);
        if (ekp1 < 0.5 * err) {
            knew = 2;
            *est = ekp1;
        }
    }
    return knew;
}
