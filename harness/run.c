/* Execution of one run: validation, the measuring run with the observer (errors,
 * residuals, energy, drift) and separate timing runs without it (seed-independent
 * practice of DiffEqDevTools: never time what is being measured). */
#include "run.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../core/gslalloc.h"
#include "../methods/formulations/index1.h"
#include "../methods/formulations/kkt_eval.h"
#include "../problems/triplets.h"
#include "fit.h"
#include "observe.h"
#include "reference.h"
#include "traj.h"

double mbs_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void mbs_record_free(mbs_record *rec)
{
    free(rec->final);
    free(rec->final_published);
    rec->final = NULL;
    rec->final_published = NULL;
    rec->n_published = 0;
}

/* The final state in the published component order and sign convention
 * (`final_published`, for checks by external tools). */
static void fill_published(mbs_record *rec, const mbs_problem *pb)
{
    size_t n = 0;
    if (!pb->def->published || !rec->final || !isfinite(rec->t_final) ||
        pb->def->published(pb, rec->t_final, rec->final, NULL, &n) != MBS_OK || n == 0)
        return;
    rec->final_published = malloc(n * sizeof(double));
    if (rec->final_published &&
        pb->def->published(pb, rec->t_final, rec->final, rec->final_published, &n) == MBS_OK) {
        rec->n_published = n;
    } else {
        free(rec->final_published);
        rec->final_published = NULL;
    }
}

static void record_init(mbs_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->h = rec->tol = rec->atol = rec->t_end = rec->fail_t = rec->t_final = NAN;
    rec->err = rec->err_max = (mbs_err3){NAN, NAN, NAN};
    rec->scd = rec->mescd = rec->err_mixed_qv = NAN;
    rec->res_pos_max = rec->res_vel_max = rec->res_acc_max = NAN;
    rec->res_pos_end = rec->res_vel_end = NAN;
    rec->energy_drift = rec->drift_exponent = rec->drift_rms = NAN;
    rec->cpu_min = rec->cpu_median = rec->cpu_iqr = NAN;
    rec->global_est = rec->global_tol_final = NAN;
    rec->traj.err_max = rec->traj.err_rms = rec->traj.digits = (mbs_err3){NAN, NAN, NAN};
    strcpy(rec->ref_kind, "none");
    rec->run_index = -1;
}

/* Significant correct digits of the IVP Test Set:
 * scd = -log10 max |err_i / ref_i| (absolute where ref_i = 0),
 * mescd = -log10 max |err_i| / (atol/rtol + |ref_i|) with atol/rtol = 1,
 * both over all components of q | v | lambda (| x) for problems without a
 * published definition; a maximum error of exactly 0 counts as 1e-16 (16 digits),
 * as in the published measure below. */
static void digits_over(const double *y, const double *ref, size_t n, double *scd,
                        double *mescd)
{
    double rel = 0.0, mixed = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(y[i] - ref[i]);
        rel = fmax(rel, ref[i] != 0.0 ? e / fabs(ref[i]) : e);
        mixed = fmax(mixed, e / (1.0 + fabs(ref[i])));
    }
    *scd = -log10(rel == 0.0 ? 1e-16 : rel);
    *mescd = -log10(mixed == 0.0 ? 1e-16 : mixed);
}

/* Problems with a published definition (the Test Set 2.4 [testset24], Sect.
 * "Accuracy measure", after the Test Set driver getscd, report.f rev. 1.20):
 * in the published component order,
 *   scd   = -log10 max_{i in S} |y_i - ref_i| / |ref_i| over the listed scd subset
 *           S (def->published_scd; all components when NULL), skipping components
 *           with |ref_i| < 1e-200; a maximum error of exactly 0 counts as 1e-16;
 *   mescd = -log10 max_i |y_i - ref_i| / (1 + |ref_i|) over ALL n components
 *           (andrews: scd over 7, mescd over 27; crank: scd over 10, mescd over 24).
 * Exposed for tests (run.h). */
void mbs_testset_digits(const double *py, const double *pref, size_t n, const size_t *scd_idx,
                        size_t n_scd, double *scd, double *mescd)
{
    double rel = 0.0, mixed = 0.0;
    size_t m = scd_idx ? n_scd : n;
    for (size_t k = 0; k < m; k++) {
        size_t i = scd_idx ? scd_idx[k] : k;
        if (i >= n || fabs(pref[i]) < 1e-200)
            continue;
        double r = fabs(py[i] - pref[i]) / fabs(pref[i]);
        if (!isnan(rel) && (isnan(r) || r > rel))
            rel = r;
    }
    for (size_t i = 0; i < n; i++) {
        double r = fabs(py[i] - pref[i]) / (1.0 + fabs(pref[i]));
        if (!isnan(mixed) && (isnan(r) || r > mixed))
            mixed = r;
    }
    *scd = -log10(rel == 0.0 ? 1e-16 : rel);
    *mescd = -log10(mixed == 0.0 ? 1e-16 : mixed);
}

static void correct_digits(const mbs_problem *pb, double t, const double *y, const double *ref,
                           double *scd, double *mescd)
{
    const mbs_problem_def *d = pb->def;
    size_t n = 0;
    if (d->published && d->published(pb, t, y, NULL, &n) == MBS_OK && n > 0) {
        double *py = malloc(n * sizeof(double)), *pr = malloc(n * sizeof(double));
        int ok = py && pr && d->published(pb, t, y, py, &n) == MBS_OK &&
                 d->published(pb, t, ref, pr, &n) == MBS_OK;
        for (size_t k = 0; ok && d->published_scd && k < d->n_published_scd; k++)
            ok = d->published_scd[k] < n;
        if (ok)
            mbs_testset_digits(py, pr, n, d->published_scd, d->n_published_scd, scd, mescd);
        free(py);
        free(pr);
        if (ok)
            return;
    }
    digits_over(y, ref, mbs_ny(pb), scd, mescd);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int n, double p)
{
    double pos = p * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1)
        return sorted[n - 1];
    double f = pos - i;
    return sorted[i] * (1.0 - f) + sorted[i + 1] * f;
}

/* Cost of one pair of CPU-clock reads, subtracted from each timing. */
static double timer_overhead(void)
{
    double best = INFINITY;
    for (int i = 0; i < 16; i++) {
        double a = mbs_cpu_seconds(), b = mbs_cpu_seconds();
        best = fmin(best, b - a);
    }
    return best;
}

static int validate(const mbs_run_spec *spec, const mbs_problem *pb, const mbs_method_def *m,
                    double t_end, char *err, size_t errlen)
{
    double span = t_end - pb->t0;
    if (!isnan(spec->t_end) && !(isfinite(spec->t_end) && spec->t_end > pb->t0)) {
        snprintf(err, errlen, "--t-end %g must be finite and greater than t0 = %g", spec->t_end,
                 pb->t0);
        return MBS_BAD_INPUT;
    }
    if (spec->output_steps < -1 || spec->output_steps > MBS_MAX_OUTPUT_STEPS ||
        (spec->output_steps < 0 && spec->trajectory)) {
        snprintf(err, errlen, "--output-steps %ld must lie in [1, %ld]", spec->output_steps,
                 (long)MBS_MAX_OUTPUT_STEPS);
        return MBS_BAD_INPUT;
    }
    if (m->flags & MBS_M_FIXED_STEP) {
        if (isnan(spec->h) && !isnan(spec->tol)) {
            snprintf(err, errlen, "method %s is fixed-step: give --h, not --tol", m->name);
            return MBS_BAD_INPUT;
        }
        if (isnan(spec->h)) {
            snprintf(err, errlen, "method %s is fixed-step: --h is required", m->name);
            return MBS_BAD_INPUT;
        }
        if (!(isfinite(spec->h) && spec->h > 0.0)) {
            snprintf(err, errlen, "--h %g must be a positive finite step size", spec->h);
            return MBS_BAD_INPUT;
        }
        if (spec->h > span) {
            snprintf(err, errlen, "--h %g exceeds the interval t_end - t0 = %g", spec->h, span);
            return MBS_BAD_INPUT;
        }
        /* The step count must fit (--h 1e-300 or --t-end 1e308 used to
         * overflow it into "ok, 0 steps, error 0"). */
        double nsteps = span / spec->h;
        if (!(nsteps <= MBS_MAX_FIXED_STEPS)) {
            snprintf(err, errlen,
                     "--h %g on [t0, t_end] = [%g, %g] needs %.3g steps, more than %g: "
                     "give a larger --h or a smaller --t-end",
                     spec->h, pb->t0, t_end, nsteps, MBS_MAX_FIXED_STEPS);
            return MBS_BAD_INPUT;
        }
    } else {
        if (isnan(spec->tol)) {
            snprintf(err, errlen, "method %s is adaptive: --tol is required", m->name);
            return MBS_BAD_INPUT;
        }
        if (!(isfinite(spec->tol) && spec->tol > 0.0 && spec->tol < 1.0)) {
            snprintf(err, errlen, "--tol %g must lie in (0, 1)", spec->tol);
            return MBS_BAD_INPUT;
        }
        if (!isnan(spec->atol) && spec->atol != 0.0 &&
            !(isfinite(spec->atol) && spec->atol > 0.0 && spec->atol < 1.0)) {
            snprintf(err, errlen, "atol %g must lie in (0, 1) (0: the same as tol)", spec->atol);
            return MBS_BAD_INPUT;
        }
        if (!isnan(spec->h) && !(isfinite(spec->h) && spec->h > 0.0 && spec->h <= span)) {
            snprintf(err, errlen, "--h %g (initial step) must lie in (0, t_end - t0]", spec->h);
            return MBS_BAD_INPUT;
        }
    }
    if (spec->repeat < 0 || spec->repeat > 100000) {
        snprintf(err, errlen, "--repeat %d must lie in [0, 100000]", spec->repeat);
        return MBS_BAD_INPUT;
    }
    if (spec->max_steps < 0) {
        snprintf(err, errlen, "--max-steps %ld must be positive", spec->max_steps);
        return MBS_BAD_INPUT;
    }
    if (!(spec->max_cpu >= 0.0 && spec->max_cpu <= 1e7)) {
        snprintf(err, errlen, "--max-cpu %g must lie in (0, 1e7] seconds", spec->max_cpu);
        return MBS_BAD_INPUT;
    }
    if (!(spec->max_wall >= 0.0 && spec->max_wall <= 1e7)) {
        snprintf(err, errlen, "--max-wall %g must lie in (0, 1e7] seconds", spec->max_wall);
        return MBS_BAD_INPUT;
    }
    if (!(spec->max_mem >= 0.0 && spec->max_mem <= 1e18)) {
        snprintf(err, errlen, "--max-mem %g must lie in (0, 1e18] bytes", spec->max_mem);
        return MBS_BAD_INPUT;
    }
    if (!(spec->inject_fail_t >= 0.0 && isfinite(spec->inject_fail_t))) {
        snprintf(err, errlen, "--inject-failure %g must be a finite time > 0",
                 spec->inject_fail_t);
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

/* Consistent lambda0 from the index-1 system when the problem does not give it. */
static int initial_lambda(mbs_ctx *ctx, double t0, double *y)
{
    const mbs_problem *pb = ctx->pb;
    mbs_index1 *ix = NULL;
    /* Large sparse problems (chain N >= 1000): the dense KKT would need
     * (n_v + n_l)^2 doubles; UMFPACK instead (same system, round-off apart). */
    int big = (pb->flags & MBS_PB_SPARSE) && pb->nv + pb->nl > 2000;
    int s = mbs_index1_alloc(&ix, ctx, big ? MBS_LINSOL_UMFPACK : MBS_LINSOL_LU);
    if (s == MBS_OK) {
        double *vdot = malloc(pb->nv * sizeof(double));
        s = vdot ? mbs_index1_accel(ix, ctx, t0, y, y + pb->nq, vdot, y + pb->nq + pb->nv)
                 : MBS_NO_MEMORY;
        free(vdot);
    }
    mbs_index1_free(ix);
    return s;
}

static void fill_identity(mbs_record *rec, const mbs_run_spec *spec, const mbs_problem *pb,
                          const mbs_method_def *m, const mbs_params *mp, double t_end)
{
    snprintf(rec->problem, sizeof rec->problem, "%s", pb->def->name);
    snprintf(rec->method, sizeof rec->method, "%s", m->name);
    snprintf(rec->problem_spec, sizeof rec->problem_spec, "%s", spec->problem);
    snprintf(rec->method_spec, sizeof rec->method_spec, "%s", spec->method);
    mbs_params_format(&pb->params, 1, rec->problem_params, sizeof rec->problem_params);
    mbs_params_format(mp, 1, rec->method_params, sizeof rec->method_params);
    rec->h = (m->flags & MBS_M_FIXED_STEP) ? spec->h : NAN;
    rec->tol = (m->flags & MBS_M_FIXED_STEP) ? NAN : spec->tol;
    rec->atol = (m->flags & MBS_M_FIXED_STEP)             ? NAN
                : (isnan(spec->atol) || spec->atol == 0.0) ? spec->tol
                                                           : spec->atol;
    rec->t0 = pb->t0;
    rec->t_end = t_end;
    rec->nq = pb->nq;
    rec->nv = pb->nv;
    rec->nl = pb->nl;
    rec->nx = pb->nx;
    for (int i = 0; i < 3; i++)
        rec->order[i] = m->order[i];
}

static void fail_record(mbs_record *rec, const mbs_ctx *ctx, int status)
{
    rec->status = status;
    const char *why = ctx->reason[0] ? ctx->reason : mbs_status_message(status);
    /* Every allocation failure reads "out-of-memory: ...". */
    if (status == MBS_NO_MEMORY && strncmp(why, "out-of-memory", 13) != 0)
        snprintf(rec->reason, sizeof rec->reason, "out-of-memory: %.*s",
                 (int)(sizeof rec->reason - 16),
                 ctx->reason[0] ? ctx->reason : "an allocation failed");
    else
        snprintf(rec->reason, sizeof rec->reason, "%s", why);
    rec->fail_t = ctx->fail_t;
}

/* Linear-solver statistics after one integrate().  Methods report
 * the statistics of their mbs_linsol backends through mbs_ctx_report_linsol,
 * whose counts (analyses, factorisations, solves) are cumulative over the
 * workspace's life (methods/linsol/linsol.h), while the harness calls integrate()
 * several times on one workspace (measuring run, then timing runs).  *seen holds
 * the cumulative counts after the previous integrate() on this workspace; the
 * record gets the difference, i.e. the counts of this run alone (a symbolic
 * analysis done in an earlier run is not counted again).  Counts that went down
 * mean a renewed backend and are taken as they are.  n, nnz, nnz_factor and fill
 * describe the factored pattern, rcond the run's last factorisation.  store = 0:
 * only advance *seen (runs that do not fill the record). */
static void linsol_take(mbs_record *rec, const mbs_ctx *ctx, mbs_linsol_stats *seen, int store)
{
    if (ctx->linsol_kind < 0)
        return;
    mbs_linsol_stats st = ctx->linsol;
    if (store) {
        rec->have_linsol = 1;
        rec->linsol_kind = ctx->linsol_kind;
        rec->linsol = st;
        if (st.analyses >= seen->analyses && st.factorizations >= seen->factorizations &&
            st.solves >= seen->solves) {
            rec->linsol.analyses -= seen->analyses;
            rec->linsol.factorizations -= seen->factorizations;
            rec->linsol.solves -= seen->solves;
        }
    }
    *seen = st;
}

/* The measuring run's integration: to t_end, or with spec->stops (reference
 * generation, run.h) to each stop in turn, restarting the method there and
 * keeping the state at each. */
static int integrate_stops(const mbs_run_spec *spec, void *state, const mbs_method_def *m,
                           mbs_ctx *ctx, const mbs_settings *set, double *t, double *y)
{
    if (!spec->stops)
        return m->ops->integrate(state, ctx, set, t, y);
    size_t ny = mbs_ny(ctx->pb);
    int s = MBS_OK;
    for (size_t k = 0; k < spec->n_stops && s == MBS_OK; k++) {
        mbs_settings sk = *set;
        sk.t_end = spec->stops[k];
        if (sk.t_end > *t)
            s = m->ops->integrate(state, ctx, &sk, t, y);
        if (s == MBS_OK)
            memcpy(spec->stop_states + k * ny, y, ny * sizeof(double));
    }
    return s;
}

/* Measuring run: integrate with the observer and fill the accuracy fields. */
static void measure(const mbs_run_spec *spec, mbs_record *rec, void *state,
                    const mbs_method_def *m, mbs_ctx *ctx, const mbs_settings *set,
                    const double *y0, observer *o, mbs_linsol_stats *seen)
{
    const mbs_problem *pb = ctx->pb;
    size_t ny = mbs_ny(pb), nq = pb->nq, nv = pb->nv, nl = pb->nl;
    double *y = rec->final;
    memcpy(y, y0, ny * sizeof(double));
    double t = pb->t0;
    if (o->have_energy)
        o->E0 = pb->def->energy(pb, t, y, y + nq);
    mbs_ctx_reset(ctx);
    ctx->observer = mbs_observe;
    ctx->observer_data = o;
    o->mctx = ctx;
    int s = mbs_observe(o, t, y, y + nq, NULL, y + nq + nv);
    if (s == MBS_OK)
        s = integrate_stops(spec, state, m, ctx, set, &t, y);
    ctx->observer = NULL;
    ctx->observer_data = NULL;
    rec->t_final = t;
    rec->cnt = ctx->cnt;
    rec->threads = ctx->threads;
    linsol_take(rec, ctx, seen, 1);
    rec->status = MBS_OK;
    if (s != MBS_OK)
        fail_record(rec, ctx, s);
    rec->res_pos_max = nl ? o->pos_max : 0.0;
    rec->res_vel_max = nl ? o->vel_max : 0.0;
    rec->res_acc_max = nl ? o->acc_max : 0.0;
    rec->res_pos_end = nl ? o->pos_last : 0.0;
    rec->res_vel_end = nl ? o->vel_last : 0.0;
    rec->energy_drift = o->have_energy ? o->edrift : NAN;
    mbs_drift_fit df;
    mbs_drift_fit_compute(&o->drift, &df);
    rec->drift_exponent = df.ok ? df.k : NAN;
    rec->drift_rms = df.ok ? df.rms : NAN;
    if (rec->status == MBS_OK)
        mbs_traj_result(o->traj, &rec->traj);
    if (o->exact) {
        rec->have_ref = 1;
        strcpy(rec->ref_kind, "exact");
        rec->err_max = o->emax;
        if (rec->status == MBS_OK &&
            pb->def->exact(pb, t, o->ex, o->ex + nq, o->ex + nq + nv) == MBS_OK) {
            rec->err.q = mbs_max_abs_diff(y, o->ex, nq);
            rec->err.v = mbs_max_abs_diff(y + nq, o->ex + nq, nv);
            rec->err_mixed_qv = mbs_max_mixed_diff(y, o->ex, nq + nv);
            /* no multipliers: no lambda error (null in the record), not 0 */
            rec->err.lambda = nl ? mbs_max_abs_diff(y + nq + nv, o->ex + nq + nv, nl) : NAN;
            correct_digits(pb, t, y, o->ex, &rec->scd, &rec->mescd);
        }
        if (nl == 0)
            rec->err_max.lambda = NAN;
    } else if (mbs_reference_find(pb, pb->t_end, o->ex, NULL, 0)) {
        rec->have_ref = 1;
        strcpy(rec->ref_kind, "reference");
        if (rec->status == MBS_OK) {
            rec->err.q = mbs_max_abs_diff(y, o->ex, nq);
            rec->err.v = mbs_max_abs_diff(y + nq, o->ex + nq, nv);
            rec->err_mixed_qv = mbs_max_mixed_diff(y, o->ex, nq + nv);
            rec->err.lambda = nl ? mbs_max_abs_diff(y + nq + nv, o->ex + nq + nv, nl) : NAN;
            correct_digits(pb, t, y, o->ex, &rec->scd, &rec->mescd);
        }
    }
}

void mbs_cpu_stats(mbs_record *rec, double *times, int repeat)
{
    for (int r = 0; r < repeat && r < MBS_CPU_TIMES_MAX; r++)
        rec->cpu_times[r] = times[r]; /* in run order (the statistics sort) */
    qsort(times, (size_t)repeat, sizeof(double), cmp_double);
    rec->cpu_min = times[0];
    rec->cpu_median = quantile(times, repeat, 0.5);
    rec->cpu_iqr = quantile(times, repeat, 0.75) - quantile(times, repeat, 0.25);
    rec->cpu_repeats = repeat;
}

/* Timing runs: the same integration without the observer, CPU clock only. */
static void time_runs(mbs_record *rec, void *state, const mbs_method_def *m, mbs_ctx *ctx,
                      const mbs_settings *set, const double *y0, int repeat, int measured,
                      mbs_linsol_stats *seen)
{
    const mbs_problem *pb = ctx->pb;
    size_t ny = mbs_ny(pb);
    double *times = malloc((size_t)repeat * sizeof(double));
    double *y = malloc(ny * sizeof(double));
    if (!times || !y) {
        free(times);
        free(y);
        return;
    }
    double overhead = timer_overhead();
    int ok = 1;
    for (int r = 0; r < repeat && ok; r++) {
        memcpy(y, y0, ny * sizeof(double));
        double t = pb->t0;
        mbs_ctx_reset(ctx);
        double c0 = mbs_cpu_seconds();
        int s = m->ops->integrate(state, ctx, set, &t, y);
        double c1 = mbs_cpu_seconds();
        times[r] = fmax(0.0, c1 - c0 - overhead);
        /* the record takes the first timing run's work when there was no measuring run */
        linsol_take(rec, ctx, seen, !measured && r == 0);
        if (!measured && r == 0)
            rec->threads = ctx->threads;
        if (s != MBS_OK) {
            ok = 0;
            if (!measured) {
                rec->cnt = ctx->cnt;
                rec->t_final = t;
                memcpy(rec->final, y, ny * sizeof(double));
                fail_record(rec, ctx, s);
            }
        } else if (!measured && r == 0) {
            rec->cnt = ctx->cnt;
            rec->t_final = t;
            memcpy(rec->final, y, ny * sizeof(double));
        }
    }
    if (ok)
        mbs_cpu_stats(rec, times, repeat);
    free(times);
    free(y);
}

/* Open the problem and parse the method of a spec; on bad input returns
 * MBS_BAD_INPUT with every message in err (the problem is then closed). */
static int open_spec(const mbs_run_spec *spec, mbs_problem *pb, const mbs_method_def **m,
                     mbs_params *mp, char *err, size_t errlen)
{
    /* Both specifications are checked so that all errors are reported at once. */
    char perr[512] = "", merr[512] = "";
    int s = mbs_problem_open(pb, spec->problem, perr, sizeof perr);
    int ms;
    if (spec->method_def) { /* testing hook (run.h): an unregistered definition */
        const char *colon = strchr(spec->method, ':');
        *m = spec->method_def;
        ms = mbs_params_init(mp, (*m)->params, (*m)->n_params) != 0 ||
                     mbs_params_parse(mp, colon ? colon + 1 : NULL, (*m)->name, merr,
                                      sizeof merr) != 0
                 ? MBS_BAD_INPUT
                 : MBS_OK;
    } else {
        ms = mbs_method_parse(spec->method, m, mp, merr, sizeof merr);
    }
    if (s != MBS_OK || ms != MBS_OK) {
        snprintf(err, errlen, "%s%s%s", perr, perr[0] && merr[0] ? "\n" : "", merr);
        if (s == MBS_OK)
            mbs_problem_close(pb);
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

int mbs_run_check(const mbs_run_spec *spec, char *err, size_t errlen)
{
    mbs_problem pb;
    const mbs_method_def *m;
    mbs_params mp;
    if (open_spec(spec, &pb, &m, &mp, err, errlen) != MBS_OK)
        return MBS_BAD_INPUT;
    double t_end = isnan(spec->t_end) ? pb.t_end : spec->t_end;
    int s = validate(spec, &pb, m, t_end, err, errlen);
    mbs_problem_close(&pb);
    return s;
}

int mbs_run_local(const mbs_run_spec *spec, mbs_record *rec, char *err, size_t errlen)
{
    record_init(rec);
    gsl_set_error_handler_off();
    mbs_problem pb;
    const mbs_method_def *m;
    mbs_params mp;
    if (open_spec(spec, &pb, &m, &mp, err, errlen) != MBS_OK)
        return MBS_BAD_INPUT;
    double t_end = isnan(spec->t_end) ? pb.t_end : spec->t_end;
    if (validate(spec, &pb, m, t_end, err, errlen) != MBS_OK) {
        mbs_problem_close(&pb);
        return MBS_BAD_INPUT;
    }
    pb.t_end = t_end;
    fill_identity(rec, spec, &pb, m, &mp, t_end);

    size_t ny = mbs_ny(&pb);
    mbs_ctx ctx;
    void *state = NULL;
    observer obs;
    int have_obs = 0, series_err = 0, s;
    mbs_linsol_stats linsol_seen = {0}; /* cumulative counts of the workspace (linsol_take) */
    double *y0 = calloc(ny, sizeof(double));
    rec->final = calloc(ny, sizeof(double));
    if (!y0 || !rec->final || mbs_ctx_init(&ctx, &pb) != MBS_OK) {
        /* Still a record (no allocation failure is silent). */
        free(y0);
        mbs_record_free(rec);
        rec->status = MBS_NO_MEMORY;
        snprintf(rec->reason, sizeof rec->reason,
                 "out-of-memory: cannot allocate the state (%zu doubles) and run context", ny);
        rec->fail_t = pb.t0;
        mbs_problem_close(&pb);
        return MBS_OK;
    }
    mbs_ctx_reset(&ctx);
    if (spec->max_steps > 0)
        ctx.max_steps = spec->max_steps;
    if (spec->max_cpu > 0.0)
        ctx.max_cpu = spec->max_cpu;
    if (spec->max_wall > 0.0)
        ctx.max_wall = spec->max_wall;
    if (spec->inject_fail_t > 0.0)
        ctx.inject_fail_t = spec->inject_fail_t;
    mbs_settings set = {.h = isnan(spec->h) ? 0.0 : spec->h,
                        .rtol = isnan(spec->tol) ? 0.0 : spec->tol,
                        .atol = isnan(spec->tol)                          ? 0.0
                                : (isnan(spec->atol) || spec->atol == 0.0) ? spec->tol
                                                                           : spec->atol,
                        .t_end = t_end};

    int have_lambda = 0;
    s = pb.def->initial(&pb, y0, y0 + pb.nq, y0 + pb.nq + pb.nv, &have_lambda);
    if (s == MBS_OK && !have_lambda && pb.nl > 0)
        s = initial_lambda(&ctx, pb.t0, y0);
    memcpy(rec->final, y0, ny * sizeof(double));
    rec->t_final = pb.t0;
    if (s != MBS_OK) {
        fail_record(rec, &ctx, s);
        goto done;
    }
    if ((pb.flags & MBS_PB_EXTENDED) && !(m->flags & MBS_M_EXTENDED_OK)) {
        mbs_fail(&ctx, MBS_UNSUPPORTED, pb.t0,
                 "%s does not support extended problems (extra variables x); %s has %zu",
                 m->name, pb.def->name, pb.nx);
        fail_record(rec, &ctx, MBS_UNSUPPORTED);
        goto done;
    }
    if ((pb.flags & MBS_PB_NONHOLONOMIC) && !(m->flags & MBS_M_NONHOLONOMIC_OK)) {
        mbs_fail(&ctx, MBS_UNSUPPORTED, pb.t0,
                 "%s does not support non-holonomic constraints; %s has %zu",
                 m->name, pb.def->name, pb.nnh);
        fail_record(rec, &ctx, MBS_UNSUPPORTED);
        goto done;
    }
    if ((m->flags & MBS_M_NEEDS_FULL_RANK) && (pb.flags & MBS_PB_REDUNDANT)) {
        mbs_fail(&ctx, MBS_UNSUPPORTED, pb.t0, "%s needs full-rank constraints; %s has redundant ones",
                 m->name, pb.def->name);
        fail_record(rec, &ctx, MBS_UNSUPPORTED);
        goto done;
    }
    if ((m->flags & MBS_M_NEEDS_REGULAR_MASS) && (pb.flags & MBS_PB_SINGULAR_MASS)) {
        mbs_fail(&ctx, MBS_UNSUPPORTED, pb.t0, "%s needs a regular mass matrix", m->name);
        fail_record(rec, &ctx, MBS_UNSUPPORTED);
        goto done;
    }
    { /* memory budget: refuse a dense workspace that cannot fit */
        char what[128], remedy[160];
        double need = mbs_run_memory_estimate(m, &mp, &pb, what, sizeof what, remedy,
                                              sizeof remedy);
        double have = spec->max_mem > 0.0 ? spec->max_mem : mbs_memory_available();
        if (need > have) {
            char sneed[32], shave[32];
            mbs_human_bytes(need, sneed, sizeof sneed);
            mbs_human_bytes(have, shave, sizeof shave);
            mbs_fail(&ctx, MBS_NO_MEMORY, pb.t0,
                     "out-of-memory: %s needs >= %s (%s), %s available%s; %s", m->name, sneed,
                     what, shave, spec->max_mem > 0.0 ? " (--max-mem)" : "", remedy);
            fail_record(rec, &ctx, MBS_NO_MEMORY);
            goto done;
        }
    }
    mbs_ctx_reset(&ctx);
    s = m->ops->alloc(m, &mp, &ctx, &state);
    if (s != MBS_OK) {
        if (s == MBS_NO_MEMORY && !ctx.reason[0])
            mbs_fail(&ctx, s, pb.t0, "out-of-memory: allocating the workspace of %s failed",
                     m->name);
        fail_record(rec, &ctx, s);
        goto done;
    }
    if (spec->measure) {
        if (mbs_observer_init(&obs, &pb, t_end) != MBS_OK) {
            mbs_fail(&ctx, MBS_NO_MEMORY, pb.t0,
                     "out-of-memory: allocating the harness observer failed");
            fail_record(rec, &ctx, MBS_NO_MEMORY);
            goto done;
        }
        have_obs = 1;
        if (spec->series) {
            obs.series = fopen(spec->series, "w");
            if (!obs.series) {
                snprintf(err, errlen, "cannot write the time series file '%s'", spec->series);
                series_err = 1;
                goto done;
            }
            fprintf(obs.series, "# %s %s: t |g| |B v + g_t| |E - E0|/|E0|\n", spec->problem,
                    spec->method);
            obs.s_factor = pow(10.0, 1.0 / 50.0);
            obs.s_next = (t_end - pb.t0) * 1e-6;
        }
        long steps = mbs_traj_steps(&pb, spec->output_steps);
        if (spec->output_steps >= 0 && !spec->stops &&
            mbs_traj_init(&obs.traj, &pb, steps, spec->trajectory != NULL) != MBS_OK) {
            mbs_fail(&ctx, MBS_NO_MEMORY, pb.t0,
                     "out-of-memory: allocating the trajectory measures (%ld output steps)",
                     steps);
            fail_record(rec, &ctx, MBS_NO_MEMORY);
            goto done;
        }
        measure(spec, rec, state, m, &ctx, &set, y0, &obs, &linsol_seen);
        if (spec->trajectory && obs.traj &&
            mbs_traj_write_csv(obs.traj, spec->trajectory, err, errlen) != 0) {
            series_err = 1;
            goto done;
        }
    }
    if (rec->status == MBS_OK && spec->repeat > 0)
        time_runs(rec, state, m, &ctx, &set, y0, spec->repeat, spec->measure, &linsol_seen);
    /* No success that was not earned: an integration that reports
     * success must have accepted steps and reached t_end. */
    if (rec->status == MBS_OK && (spec->measure || spec->repeat > 0)) {
        double span = t_end - pb.t0;
        if (rec->cnt.steps <= 0) {
            rec->status = MBS_NO_PROGRESS;
            snprintf(rec->reason, sizeof rec->reason,
                     "%s reported success without an accepted step on [%g, %g]", m->name,
                     pb.t0, t_end);
            rec->fail_t = rec->t_final;
        } else if (!(fabs(rec->t_final - t_end) <= 1e-6 * span)) {
            rec->status = MBS_NO_PROGRESS;
            snprintf(rec->reason, sizeof rec->reason,
                     "%s reported success at t = %.17g, before t_end = %g", m->name,
                     rec->t_final, t_end);
            rec->fail_t = rec->t_final;
        }
        if (rec->status != MBS_OK) {
            rec->traj.measured = 0;
            rec->err = (mbs_err3){NAN, NAN, NAN};
            rec->scd = rec->mescd = rec->err_mixed_qv = NAN;
            rec->cpu_min = rec->cpu_median = rec->cpu_iqr = NAN;
            rec->cpu_repeats = 0;
        }
    }
done:
    fill_published(rec, &pb);
    if (have_obs)
        mbs_observer_free(&obs);
    if (state)
        m->ops->free_state(state);
    mbs_ctx_free(&ctx);
    free(y0);
    mbs_problem_close(&pb);
    if (series_err) {
        mbs_record_free(rec);
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}
