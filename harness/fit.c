#include "fit.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

double mbs_fit_line(const double *x, const double *y, size_t n, double *a, double *p,
                    double *half_width)
{
    double mx = 0.0, my = 0.0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0.0, sxy = 0.0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    double slope = sxx > 0.0 ? sxy / sxx : 0.0;
    double icpt = my - slope * mx;
    double ssr = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - icpt - slope * x[i];
        ssr += r * r;
    }
    double sd = n > 2 ? sqrt(ssr / (double)(n - 2)) : 0.0;
    *a = icpt;
    *p = slope;
    if (half_width) {
        double se = sxx > 0.0 ? sd / sqrt(sxx) : INFINITY;
        *half_width = n > 2 ? gsl_cdf_tdist_Pinv(0.975, (double)(n - 2)) * se : INFINITY;
    }
    return sd;
}

/* Window acceptance: order at least 0.5, every pairwise order within
 * 0.25 (absolute) or 6% of the slope, CI half-width within max(0.3, 10%). */
static int window_ok(const double *lh, const double *le, size_t i, size_t j, double p,
                     double half)
{
    if (!(p >= 0.5) || !(half <= fmax(0.3, 0.1 * p)))
        return 0;
    for (size_t k = i; k < j; k++) {
        double pk = (le[k] - le[k + 1]) / (lh[k] - lh[k + 1]);
        if (!(fabs(pk - p) <= fmax(0.25, 0.06 * p)))
            return 0;
    }
    return 1;
}

void mbs_fit_order(const double *h, const double *err, size_t n, mbs_order_fit *out)
{
    out->p = out->ci_low = out->ci_high = NAN;
    out->established = 0;
    out->first = out->last = 0;
    enum { MAXN = 64 };
    if (n > MAXN)
        n = MAXN;
    double lh[MAXN], le[MAXN];
    int valid[MAXN];
    for (size_t i = 0; i < n; i++) {
        valid[i] = err[i] > 0.0 && isfinite(err[i]) && h[i] > 0.0;
        lh[i] = valid[i] ? log(h[i]) : 0.0;
        le[i] = valid[i] ? log(err[i]) : 0.0;
    }
    double best_half = INFINITY;
    size_t best_len = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 2; j < n; j++) {
            int contiguous = 1;
            for (size_t k = i; k <= j; k++)
                contiguous = contiguous && valid[k];
            if (!contiguous)
                break;
            double a, p, half;
            mbs_fit_line(lh + i, le + i, j - i + 1, &a, &p, &half);
            if (!window_ok(lh, le, i, j, p, half))
                continue;
            size_t len = j - i + 1;
            if (len > best_len || (len == best_len && half < best_half)) {
                best_len = len;
                best_half = half;
                out->p = p;
                out->ci_low = p - half;
                out->ci_high = p + half;
                out->first = i;
                out->last = j;
                out->established = 1;
            }
        }
    }
}

void mbs_drift_init(mbs_drift *d, double t0, double t_end)
{
    d->t0 = t0;
    d->span = t_end - t0;
    for (int i = 0; i < MBS_DRIFT_BINS; i++) {
        d->used[i] = 0;
        d->rmax[i] = 0.0;
        d->tmax[i] = 0.0;
    }
}

void mbs_drift_add(mbs_drift *d, double t, double r)
{
    double s = t - d->t0;
    if (!(s > 0.0) || !(r > 0.0) || !(d->span > 0.0))
        return;
    /* 10 bins per decade over 6 decades below span. */
    double x = log10(s / d->span) + 6.0;
    int b = (int)floor(x * (MBS_DRIFT_BINS / 6.0));
    if (b < 0)
        b = 0;
    if (b >= MBS_DRIFT_BINS)
        b = MBS_DRIFT_BINS - 1;
    if (!d->used[b] || r > d->rmax[b]) {
        d->used[b] = 1;
        d->rmax[b] = r;
        d->tmax[b] = s;
    }
}

void mbs_drift_fit_compute(const mbs_drift *d, mbs_drift_fit *out)
{
    double x[MBS_DRIFT_BINS], y[MBS_DRIFT_BINS];
    size_t n = 0;
    for (int i = 0; i < MBS_DRIFT_BINS; i++)
        if (d->used[i]) {
            x[n] = log10(d->tmax[i]);
            y[n] = log10(d->rmax[i]);
            n++;
        }
    out->ok = n >= 3;
    out->k = out->log10_C = out->rms = NAN;
    if (!out->ok)
        return;
    double sd = mbs_fit_line(x, y, n, &out->log10_C, &out->k, NULL);
    out->rms = sd * sqrt((double)(n - 2) / (double)n);
}
