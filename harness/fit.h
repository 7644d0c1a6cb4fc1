/* Statistical fits used by the harness: observed convergence order with an
 * automatically chosen asymptotic window, and the growth exponent of the
 * constraint drift |g(q(t))| ~ C t^k. */
#ifndef MBS_FIT_H
#define MBS_FIT_H

#include <stddef.h>

typedef struct mbs_order_fit {
    double p;             /* least-squares slope of log err against log h */
    double ci_low, ci_high; /* 95% confidence interval (Student t) */
    int established;      /* 0: no window qualified ("order not established") */
    size_t first, last;   /* window used (indices into the input, inclusive) */
} mbs_order_fit;

/* Fit err ~ C h^p over the longest run of consecutive levels (at least 3) whose
 * pairwise orders agree with the fitted slope and whose 95% confidence interval is
 * narrow; levels before it (pre-asymptotic) and after it (round-off plateau) are
 * excluded.  Levels with err <= 0 or non-finite break the run. */
void mbs_fit_order(const double *h, const double *err, size_t n, mbs_order_fit *out);

/* Slope and 95% CI of an ordinary least-squares line y = a + p x (n >= 3).
 * Returns the residual standard deviation. */
double mbs_fit_line(const double *x, const double *y, size_t n, double *a, double *p,
                    double *half_width);

/* Online drift fit: the envelope (maximum) of r(t) in log-spaced bins of t - t0
 * over [span * 1e-6, span], then a least-squares line through log10 of the bin
 * maxima against log10(t - t0).  rms is the residual RMS in decades, so an
 * oscillation about a constant shows as k ~ 0 with a large rms. */
enum { MBS_DRIFT_BINS = 60 };
typedef struct mbs_drift {
    double t0, span;
    double tmax[MBS_DRIFT_BINS], rmax[MBS_DRIFT_BINS];
    int used[MBS_DRIFT_BINS];
} mbs_drift;

typedef struct mbs_drift_fit {
    double k, log10_C, rms;
    int ok; /* at least 3 bins with r > 0 */
} mbs_drift_fit;

void mbs_drift_init(mbs_drift *d, double t0, double t_end);
void mbs_drift_add(mbs_drift *d, double t, double r);
void mbs_drift_fit_compute(const mbs_drift *d, mbs_drift_fit *out);

#endif
