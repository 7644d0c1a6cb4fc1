/* Switching functions in the Radau IIA methods (problems/problem.h,
 * mbs_extension.switches): where a problem's right-hand side is continuous but
 * not differentiable across the zero set of a function sw(t, y) (the
 * wheelset's creep forces entering and leaving saturation), a step that
 * straddles the switch loses the order of the collocation method: the solution
 * has a kink in a derivative, which no polynomial of degree s follows, so the
 * local error is O(J tau^2) for a kink of size J at distance tau from the
 * step's ends, whatever s (Gear & Osterby 1984 [gear1984discontinuities]).
 * The remedy of Hairer, Norsett & Wanner 1993 [hairer1993solving] Sect. II.6:
 * after an attempt whose Newton iteration converged, the functions are
 * evaluated at its end; where one changed sign, its root is found on the
 * attempt's collocation polynomial
 *     u(t_n + theta h) = y_n + sum_j Z_j L_j(theta),
 * L_j the Lagrange polynomials on the nodes 0, c_1, ..., c_s (L_j(0) = 0), by
 * the Illinois variant of regula falsi, and the attempt is redone to end
 * there (radau5.c).  The next step then starts on the other side, so every
 * step integrates a smooth piece.  The functions are sampled at 2s points of
 * the attempt; an excursion to the other side between two samples (the
 * wheelset's unsaturated excursions last down to 7.5e-5 s, a fraction of an
 * order-9 or order-13 step) shows as a local minimum of g sw (g the side at
 * t_n), and where the parabola through it and its two neighbours dips across,
 * sw is evaluated at the parabola's vertex: across, that bracket is searched.
 * Without that test index2/radau stalled on the wheelset (mixed error at t_end,
 * geometric mean over tol x 0.9..1.1: 1.1e-7, 1.0e-7, 2.7e-8, 1.6e-8 at tol
 * 1e-9..1e-12; with it 4.7e-8, 2.3e-8, 2.7e-9, 1.2e-9; 4 and 8 uniform samples
 * per node interval instead of 2 gave 1.1e-8, 2.3e-8 and 2.0e-9, 9.5e-9 at
 * tol 1e-10, 1e-11 in single runs, for 25% and 75% more evaluations).
 * Excursions that do not bend the samples that way, and a root closer to t_n
 * than RADAU_SW_MIN h (the solution touching the switch again right after a
 * landing), are stepped over.
 * The root is that of the cut attempt's polynomial, which straddled the
 * switch and so carries the O(J tau^2) error above: the landing attempt's own
 * solution crossed up to 1e-3 of its step before or after its end (wheelset,
 * tol 1e-10: sw at the end -2.4e-5 and -1.0e-4 where the search had left the
 * root to 1e-10 h, or +7e-5 short of it), i.e. it straddled the switch by
 * that much and left errors of 1e-9 in v and 1e-8 in beta (index2/radau: 1.4e-9
 * mixed error at t = 0.02 with two such landings, 9.3e-11 when they end on
 * their own root).  So the function landed on is searched on the landing
 * attempt too (redo_landing): across before its end, the attempt is cut to its
 * own root; short of the switch, stretched to the secant root through the last
 * sample and the end; until the root is within RADAU_SW_REDO h of the end (one
 * or two redos, each of a few Newton iterations from the restricted stages).
 * Not in the index-3 form: there the error is set by the index-3 weights (v
 * and lambda errors accepted up to TOL/h and TOL/h^2), landings gained
 * nothing (wheelset, index3/radau5 at tol 1e-12: 1.5e-6 with, 5.6e-7
 * without), and at tol 9.45e-7 the cut attempts shrank the step until it
 * underflowed at t = 0.405. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "radau5_impl.h"

/* Fraction of the attempt below which a root is stepped over (no landing
 * step shorter than this times h), and the width of the final bracket in
 * theta. */
static const double RADAU_SW_MIN = 1e-3, RADAU_SW_TOL = 1e-10;
/* A landing attempt is redone (cut or stretched) while its own root of the
 * function it lands on is more than RADAU_SW_REDO h from its end, at most
 * RADAU_SW_REDO_MAX times (radau5_impl.h, sw_redo). */
static const double RADAU_SW_REDO = 1e-6;
enum { RADAU_SW_REDO_MAX = 3 };

int mbs_radau_switch_alloc(radau_state *st, mbs_ctx *ctx)
{
    st->sw_land = -1;
    st->nsw = 0;
    if (st->var->fixed || st->ix || !st->form->nx || st->form->kind == MBS_FORM_INDEX3)
        return MBS_OK;
    size_t m = mbs_ext_n_switch(ctx);
    if (!m)
        return MBS_OK;
    st->sw0 = malloc(m * sizeof(double));
    /* end values | the stage samples | a root search's */
    st->sw1 = malloc((2 * RADAU_SMAX + 2) * m * sizeof(double));
    st->swsg = malloc(m * sizeof(int));
    st->swy = malloc(st->n * sizeof(double));
    if (!st->sw0 || !st->sw1 || !st->swsg || !st->swy)
        return MBS_NO_MEMORY;
    st->nsw = m;
    return MBS_OK;
}

void mbs_radau_switch_free(radau_state *st)
{
    free(st->sw0);
    free(st->sw1);
    free(st->swsg);
    free(st->swy);
}

int mbs_radau_switch_start(radau_state *st, mbs_ctx *ctx, double t)
{
    st->sw_land = -1;
    if (!st->nsw)
        return MBS_OK;
    int s = mbs_ext_switches(ctx, t, st->y, st->sw0);
    for (size_t j = 0; s == MBS_OK && j < st->nsw; j++)
        st->swsg[j] = st->sw0[j] < 0.0 ? -1 : 1;
    return s;
}

/* u(t + theta h) of the current attempt into st->swy. */
static void poly_value(radau_state *st, double theta)
{
    const size_t n = st->n;
    const int s = st->co->s;
    const double *c = st->co->c;
    double L[RADAU_SMAX];
    for (int j = 0; j < s; j++) {
        double l = theta / c[j]; /* the node 0 */
        for (int m = 0; m < s; m++)
            if (m != j)
                l *= (theta - c[m]) / (c[j] - c[m]);
        L[j] = l;
    }
    for (size_t k = 0; k < n; k++) {
        double u = st->y[k];
        for (int j = 0; j < s; j++)
            u += L[j] * st->Z[(size_t)j * n + k];
        st->swy[k] = u;
    }
}

/* Value of function j at sample i of the attempt (i = -1: at t_n). */
static double sample_value(const radau_state *st, size_t j, int i, int np)
{
    if (i < 0)
        return st->sw0[j];
    if (i == np - 1)
        return st->sw1[j];
    return st->sw1[st->nsw + (size_t)i * st->nsw + j];
}

/* A crossing of function j between samples (none of them across): at the
 * first interior local minimum of g sw (g its side at t_n) where the parabola
 * through the three samples has its vertex across, sw is evaluated at the
 * vertex; if it is across, *found = 1 and the bracket [sample before,
 * vertex].  Returns the status of the evaluation. */
static int near_miss(radau_state *st, mbs_ctx *ctx, double t, double h, size_t j,
                     const double *x, int np, double *lo, double *flo, double *hi, double *fhi,
                     int *found)
{
    const int g = st->swsg[j];
    double *fs = st->sw1 + (size_t)(2 * RADAU_SMAX + 1) * st->nsw;
    for (int i = 0; i + 1 < np; i++) {
        double x0 = i ? x[i - 1] : 0.0, x1 = x[i], x2 = x[i + 1];
        double f0 = g * sample_value(st, j, i - 1, np), f1 = g * sample_value(st, j, i, np),
               f2 = g * sample_value(st, j, i + 1, np);
        if (!(f1 < f0 && f1 <= f2))
            continue;
        /* divided differences: p(x) = f0 + d1 (x - x0) + d2 (x - x0)(x - x1) */
        double d01 = (f1 - f0) / (x1 - x0), d12 = (f2 - f1) / (x2 - x1);
        double d2 = (d12 - d01) / (x2 - x0);
        if (!(d2 > 0.0))
            continue;
        double xv = 0.5 * (x0 + x1) - d01 / (2.0 * d2);
        if (!(xv > x0 && xv < x2))
            continue;
        double pv = f0 + d01 * (xv - x0) + d2 * (xv - x0) * (xv - x1);
        if (!(pv < 0.0))
            continue;
        poly_value(st, xv);
        int s = mbs_ext_switches(ctx, t + xv * h, st->swy, fs);
        if (s != MBS_OK)
            return s;
        if (!(g * fs[j] < 0.0))
            continue;
        *lo = xv < x1 ? x0 : x1;
        *flo = g * (xv < x1 ? f0 : f1);
        *hi = xv;
        *fhi = fs[j];
        *found = 1;
        return MBS_OK;
    }
    return MBS_OK;
}

/* Illinois regula falsi for the root of function j on the attempt's
 * polynomial in [lo, hi] (sw(lo) on side g, sw(hi) across), to a bracket of
 * RADAU_SW_TOL; *root = its end across.  fs: scratch for one evaluation. */
static int illinois(radau_state *st, mbs_ctx *ctx, double t, double h, size_t j, double lo,
                    double flo, double hi, double fhi, double *fs, double *root)
{
    const int g = st->swsg[j];
    int kept = 0;
    for (int it = 0; it < 60 && hi - lo > RADAU_SW_TOL; it++) {
        double xm = (lo * fhi - hi * flo) / (fhi - flo);
        if (!(xm > lo && xm < hi))
            xm = 0.5 * (lo + hi);
        poly_value(st, xm);
        int s = mbs_ext_switches(ctx, t + xm * h, st->swy, fs);
        if (s != MBS_OK)
            return s;
        double fx = fs[j];
        if (fx * g > 0.0) {
            lo = xm, flo = fx;
            if (kept == 1)
                fhi *= 0.5;
            kept = 1;
        } else {
            hi = xm, fhi = fx;
            if (kept == -1)
                flo *= 0.5;
            kept = -1;
        }
    }
    *root = hi;
    return MBS_OK;
}

/* The landing attempt on function j: theta of its own root of j when that is
 * more than RADAU_SW_REDO from the end, else 1.  Across at the end: the root
 * of the bracket below the first sample across (Illinois, as in
 * mbs_radau_switch_find).  Short of it: the secant through the last interior
 * sample and the end, taken where it stays within 10% of the attempt (a root
 * further out is left to the next step, as before).
 * fs: scratch for one evaluation of the functions. */
static int redo_landing(radau_state *st, mbs_ctx *ctx, double t, double h, size_t j,
                        const double *x, int np, double *fs, double *theta)
{
    const size_t nsw = st->nsw;
    const int g = st->swsg[j];
    const double *smp = st->sw1 + nsw;
    *theta = 1.0;
    if (st->sw_redo >= RADAU_SW_REDO_MAX)
        return MBS_OK;
    double end = st->sw1[j], prev = smp[(size_t)(np - 2) * nsw + j];
    if (g * end > 0.0) {
        /* short: the end still on side g, approaching the switch */
        if (!(g * prev > g * end))
            return MBS_OK;
        double th = 1.0 + (1.0 - x[np - 2]) * end / (prev - end);
        if (th - 1.0 > RADAU_SW_REDO && th < 1.1)
            *theta = th;
        return MBS_OK;
    }
    double lo = 0.0, flo = st->sw0[j], hi = 1.0, fhi = end;
    for (int i = 0; i + 1 < np; i++) {
        double v = smp[(size_t)i * nsw + j];
        if (g * v < 0.0) {
            hi = x[i], fhi = v;
            break;
        }
        lo = x[i], flo = v;
    }
    if (!(g * flo > 0.0))
        return MBS_OK;
    int rc = illinois(st, ctx, t, h, j, lo, flo, hi, fhi, fs, &hi);
    if (rc != MBS_OK)
        return rc;
    /* a root well inside (the solution came back across) is no offset of
     * the landing: left as before */
    if (hi > 0.9 && 1.0 - hi > RADAU_SW_REDO)
        *theta = hi;
    return MBS_OK;
}

int mbs_radau_switch_find(radau_state *st, mbs_ctx *ctx, double t, double h, double *theta,
                          int *which)
{
    *theta = 1.0;
    *which = -1;
    if (!st->nsw)
        return MBS_OK;
    const size_t n = st->n, nsw = st->nsw;
    const int ns = st->co->s;
    const double *c = st->co->c;
    /* the functions at 2s points: the stage values u(c_i) = y_n + Z_i and the
     * midpoints between the nodes 0, c_1, ..., c_s (c_s = 1: the end value
     * last, kept in sw1 for accept), so that a short excursion to the other
     * side within the attempt is seen too (one narrower than the spacing, at
     * most 0.11 h for s = 7, by near_miss) */
    double *smp = st->sw1 + nsw, *fs = st->sw1 + (size_t)(2 * RADAU_SMAX + 1) * nsw;
    double x[2 * RADAU_SMAX];
    const int np = 2 * ns;
    for (int i = 0; i < ns; i++) {
        x[2 * i] = 0.5 * ((i ? c[i - 1] : 0.0) + c[i]);
        x[2 * i + 1] = c[i];
    }
    for (int i = 0; i < np; i++) {
        double *v = i == np - 1 ? st->sw1 : smp + (size_t)i * nsw;
        if (i % 2) {
            const double *Zi = st->Z + (size_t)(i / 2) * n;
            for (size_t k = 0; k < n; k++)
                st->swy[k] = st->y[k] + Zi[k];
        } else {
            poly_value(st, x[i]);
        }
        int s = mbs_ext_switches(ctx, t + x[i] * h, st->swy, v);
        if (s != MBS_OK)
            return s;
    }
    double best = 1.0, redo = 1.0;
    if (st->sw_land >= 0) {
        int s = redo_landing(st, ctx, t, h, (size_t)st->sw_land, x, np, fs, &redo);
        if (s != MBS_OK)
            return s;
    }
    for (size_t j = 0; j < nsw; j++) {
        const int g = st->swsg[j];
        if ((int)j == st->sw_land)
            continue;
        /* the first sample on the other side; the bracket below it */
        double lo = 0.0, flo = st->sw0[j], hi = 1.0, fhi = 0.0;
        int i = 0;
        for (; i < np; i++) {
            double v = i == np - 1 ? st->sw1[j] : smp[(size_t)i * nsw + j];
            if (v * g < 0.0) {
                hi = x[i];
                fhi = v;
                break;
            }
            lo = x[i];
            flo = v;
        }
        if (i == np) {
            /* no sample across: an excursion between two samples shows as a
             * local minimum of g sw; where the parabola through it and its
             * neighbours dips across, sw at its vertex decides */
            int found = 0;
            int s = near_miss(st, ctx, t, h, j, x, np, &lo, &flo, &hi, &fhi, &found);
            if (s != MBS_OK)
                return s;
            if (!found)
                continue;
        }
        if (!(flo * g > 0.0) || hi > best)
            continue; /* none, or back across right at a landing (stepped over) */
        int s = illinois(st, ctx, t, h, j, lo, flo, hi, fhi, fs, &hi);
        if (s != MBS_OK)
            return s;
        if (hi < best && hi >= RADAU_SW_MIN) {
            best = hi;
            *which = (int)j;
        }
    }
    if (*which < 0 && redo != 1.0) {
        /* no other function crossed: redo the landing to its own root */
        best = redo;
        *which = st->sw_land;
    }
    *theta = best;
    return MBS_OK;
}

void mbs_radau_switch_restrict(radau_state *st, double theta)
{
    /* Z_i of the attempt ending at theta: the polynomial at c_i theta
     * (extrapolated for theta > 1, a landing stretched to its root) */
    const size_t n = st->n;
    const int s = st->co->s;
    double *Znew = st->dZ; /* free between attempts */
    for (int i = 0; i < s; i++) {
        poly_value(st, st->co->c[i] * theta);
        for (size_t k = 0; k < n; k++)
            Znew[(size_t)i * n + k] = st->swy[k] - st->y[k];
    }
    memcpy(st->Z, Znew, (size_t)s * n * sizeof(double));
}

void mbs_radau_switch_accept(radau_state *st)
{
    for (size_t j = 0; j < st->nsw; j++) {
        if ((int)j == st->sw_land)
            st->swsg[j] = -st->swsg[j];
        else if (st->sw1[j] != 0.0)
            st->swsg[j] = st->sw1[j] < 0.0 ? -1 : 1;
        st->sw0[j] = st->sw1[j];
    }
    st->sw_land = -1;
}
