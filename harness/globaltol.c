/* Global error target (`--tol-mode global`, run.h MBS_TOL_GLOBAL).
 *
 * Every adaptive method of the suite and every peer controls the local error
 * per step; on an oscillating problem the error at t_end is the sum of the
 * local errors carried along the orbit, 10-100 times the tolerance on the
 * pendulum over 5 periods (docs/results-schema.md, "Tolerance modes"; PEERS.md
 * reports 100-1000 for BDF codes).  In global mode the tolerance is a target
 * for the error at t_end instead, met by reintegration with reduced tolerances
 * ("solving twice", Hairer, Norsett & Wanner, Solving ODEs I, Sect. II.12;
 * Shampine, Numerical Solution of ODEs, Sect. 7.3 on estimating the global
 * error by reintegration):
 *
 *   level k = 0, 1, ...: run the method at rtol_k = tol 10^-k, atol_k = atol 10^-k;
 *   est_k = max_i |y_k,i - y_(k-1),i| / (atol + tol |y_k,i|) over the q and v
 *           components at t_end (the weighted max norm of the user's tolerance);
 *   stop at the first k >= 1 with est_k <= 1 and return level k.
 *
 * est_k estimates the error of level k-1 (level k is the more accurate one),
 * so the returned level's error is below the tolerance whenever the errors
 * decrease with the tolerance (tolerance proportionality: by a factor 10^alpha
 * per level, alpha ~ p/(p+1) to 1); that assumption is the method's, and the
 * measuring run of the returned level still compares with the exact or
 * reference solution, so a method that violates it shows a large err in the
 * record.  No level is reached when est stays above 1 until tol 10^-k < 1e-14
 * (round-off floor): the run fails with MBS_GLOBAL_TOL_NOT_MET and the last
 * estimate in the reason.
 *
 * The record is that of the returned level (errors, drift, residuals, final
 * state), with tol and atol the requested values; counters and CPU times are
 * the sums over all levels run (the cost of meeting the target), each timing
 * repetition summed over the levels before min/median/IQR; `global` gives the
 * last estimate est_k (in units of the tolerance), the number of levels and
 * the final local tolerance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

enum { GLOBAL_MAX_LEVELS = 12 };
static const double GLOBAL_TOL_FLOOR = 1e-14;

/* Weighted max norm of the difference of the q and v parts of two final states. */
static double level_difference(const mbs_record *a, const mbs_record *b, double rtol, double atol)
{
    double est = 0.0;
    for (size_t i = 0; i < b->nq + b->nv; i++) {
        double w = atol + rtol * fabs(b->final[i]);
        est = fmax(est, fabs(a->final[i] - b->final[i]) / w);
    }
    return est;
}

static void add_counters(mbs_counters *sum, const mbs_counters *c)
{
    sum->steps += c->steps;
    sum->rejected += c->rejected;
    sum->f_evals += c->f_evals;
    sum->mass_evals += c->mass_evals;
    sum->g_evals += c->g_evals;
    sum->jac_evals += c->jac_evals;
    sum->gamma_evals += c->gamma_evals;
    sum->factorizations += c->factorizations;
    sum->solves += c->solves;
    sum->newton_iters += c->newton_iters;
    sum->jacobians += c->jacobians;
    sum->deriv_evals += c->deriv_evals;
}

int mbs_run_global(const mbs_run_spec *spec, mbs_record *rec, char *err, size_t errlen)
{
    if (!(spec->tol > 0.0)) {
        snprintf(err, errlen, "--tol-mode global needs a tolerance (--tol)");
        return MBS_BAD_INPUT;
    }
    double rtol = spec->tol;
    double atol = (isnan(spec->atol) || spec->atol == 0.0) ? spec->tol : spec->atol;
    mbs_run_spec s = *spec;
    s.tol_mode = MBS_TOL_LOCAL;
    mbs_record prev, cur;
    int have_prev = 0;
    mbs_counters total = {0};
    int repeats = spec->repeat > MBS_CPU_TIMES_MAX ? MBS_CPU_TIMES_MAX : spec->repeat;
    double times[MBS_CPU_TIMES_MAX] = {0};
    int timed = repeats > 0;
    double scale = 1.0, est = NAN;
    for (int k = 0; k < GLOBAL_MAX_LEVELS; k++, scale *= 0.1) {
        s.tol = rtol * scale;
        s.atol = atol * scale;
        int rc = mbs_run_local(&s, &cur, err, errlen);
        if (rc != MBS_OK) {
            if (have_prev)
                mbs_record_free(&prev);
            return rc;
        }
        add_counters(&total, &cur.cnt);
        if (timed && cur.cpu_repeats == spec->repeat)
            for (int r = 0; r < repeats; r++)
                times[r] += cur.cpu_times[r];
        else
            timed = 0;
        int done = 0;
        if (cur.status != MBS_OK) {
            done = 1; /* the level's own failure is the run's */
            char why[sizeof cur.reason];
            memcpy(why, cur.reason, sizeof why);
            snprintf(cur.reason, sizeof cur.reason, "global level %d (tol %.3g): %.200s", k,
                     s.tol, why);
        } else if (have_prev) {
            est = level_difference(&prev, &cur, rtol, atol);
            done = est <= 1.0;
        }
        if (!done && (s.tol * 0.1 < GLOBAL_TOL_FLOOR || k == GLOBAL_MAX_LEVELS - 1)) {
            done = 1;
            cur.status = MBS_GLOBAL_TOL_NOT_MET;
            cur.fail_t = cur.t_final;
            snprintf(cur.reason, sizeof cur.reason,
                     "levels down to tol %.3g still differ by %.3g times the tolerance at t_end",
                     s.tol, est);
        }
        if (have_prev)
            mbs_record_free(&prev);
        if (done) {
            *rec = cur;
            rec->tol = rtol;
            rec->atol = atol;
            rec->cnt = total;
            rec->tol_mode = MBS_TOL_GLOBAL;
            rec->global_est = est;
            rec->global_levels = k + 1;
            rec->global_tol_final = s.tol;
            if (timed && rec->status == MBS_OK)
                mbs_cpu_stats(rec, times, repeats);
            return MBS_OK;
        }
        prev = cur;
        have_prev = 1;
    }
    return MBS_OK; /* not reached: the last level always ends the loop */
}
