/* Reference generation (`mbsbench reference`, `make references`).
 *
 * Two independent computations of the state at t_end at tight tolerance: either
 * two registered methods (e.g. index1/rk8pd and index1/dopri5) or the problem's
 * own independent formulation (problem.h `independent`: minimal coordinates,
 * rotation-matrix ODE, ...) and a registered method.  Their agreement
 *     digits = -log10 max_i |yA_i - yB_i| / (1 + |yA_i|)   over q | v | lambda
 * (the mixed error measure of the IVP Test Set with atol/rtol = 1) is checked
 * against a minimum and stored in the provenance with methods, tolerances,
 * revision and date; the stored state is that of the first computation. */
#include "refgen.h"

#include <gsl/gsl_errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/gslalloc.h"
#include "../methods/formulations/index1.h"
#include "cli.h"
#include "env.h"
#include "reference.h"
#include "run.h"
#include "traj.h"

static const char independent_name[] = "independent";

/* Revision from the environment record (the one place that knows it). */
static void revision(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    char *s = mbs_environment_json("reference", "");
    json_t *o = s ? json_loads(s, 0, NULL) : NULL;
    const char *r = o ? json_string_value(json_object_get(o, "revision")) : NULL;
    if (r)
        snprintf(buf, len, "%s", r);
    json_decref(o);
    free(s);
}

/* lambda at (t, q, v) from the index-1 system ([arnold2016dae] Eq. (17)). */
static int index1_lambda(const mbs_problem *pb, double t, double *y, char *err, size_t errlen)
{
    mbs_ctx ctx;
    if (mbs_ctx_init(&ctx, pb) != MBS_OK) {
        snprintf(err, errlen, "out of memory");
        return MBS_NO_MEMORY;
    }
    mbs_ctx_reset(&ctx);
    mbs_index1 *ix = NULL;
    double *vdot = malloc(pb->nv * sizeof(double));
    int s = vdot ? mbs_index1_alloc(&ix, &ctx, MBS_LINSOL_LU) : MBS_NO_MEMORY;
    if (s == MBS_OK)
        s = mbs_index1_accel(ix, &ctx, t, y, y + pb->nq, vdot, y + pb->nq + pb->nv);
    if (s != MBS_OK)
        snprintf(err, errlen, "multipliers from the index-1 system: %s",
                 ctx.reason[0] ? ctx.reason : mbs_status_message(s));
    mbs_index1_free(ix);
    free(vdot);
    mbs_ctx_free(&ctx);
    return s;
}

/* One computation of the state at the n increasing times ts (Y: n x ny); desc
 * gets "method tol=..." for the provenance.  A registered method runs once to
 * t_end (n = 1) or is restarted at each time (run.h, stops: no dense output or
 * interpolation involved); the independent formulation runs from t0 to each
 * time (the state at t0 is the initial one). */
static int compute(const mbs_refgen_spec *spec, const char *method, double tol, const double *ts,
                   size_t n, double *Y, char *desc, size_t desclen, char *err, size_t errlen)
{
    if (strcmp(method, independent_name) == 0) {
        mbs_problem pb;
        int s = mbs_problem_open(&pb, spec->problem, err, errlen);
        if (s != MBS_OK)
            return s;
        if (!pb.def->independent) {
            snprintf(err, errlen, "%s has no independent formulation", pb.def->name);
            mbs_problem_close(&pb);
            return MBS_BAD_INPUT;
        }
        size_t ny = mbs_ny(&pb);
        char what[256] = "";
        int grid = n > 1 && pb.def->independent_grid, have_lambda = 0;
        if (grid) { /* one integration through every time */
            s = pb.def->independent_grid(&pb, ts, n, tol, Y, &have_lambda, what, sizeof what);
            if (s != MBS_OK)
                snprintf(err, errlen, "independent formulation of %s: %s", pb.def->name, what);
            for (size_t k = 0; k < n && s == MBS_OK && !have_lambda && pb.nl > 0; k++)
                s = index1_lambda(&pb, ts[k], Y + k * ny, err, errlen);
            /* at t0 the initial state itself, as the other computation has it */
            for (size_t k = 0; k < n && s == MBS_OK && ts[k] <= pb.t0; k++) {
                double *y = Y + k * ny;
                int hl = 0;
                s = pb.def->initial(&pb, y, y + pb.nq, y + pb.nq + pb.nv, &hl);
                if (s == MBS_OK && !hl && pb.nl > 0)
                    s = index1_lambda(&pb, ts[k], y, err, errlen);
            }
        }
        for (size_t k = 0; k < n && !grid && s == MBS_OK; k++) {
            double *y = Y + k * ny;
            have_lambda = 0;
            if (ts[k] <= pb.t0)
                s = pb.def->initial(&pb, y, y + pb.nq, y + pb.nq + pb.nv, &have_lambda);
            else
                s = pb.def->independent(&pb, ts[k], tol, y, y + pb.nq, y + pb.nq + pb.nv,
                                        &have_lambda, what, sizeof what);
            if (s != MBS_OK)
                snprintf(err, errlen, "independent formulation of %s at t = %g: %s",
                         pb.def->name, ts[k], what);
            else if (!have_lambda && pb.nl > 0)
                s = index1_lambda(&pb, ts[k], y, err, errlen);
        }
        if (s == MBS_OK)
            snprintf(desc, desclen, "%s%s", what,
                     n > 1 && !grid ? " (from t0 to each grid time)" : "");
        mbs_problem_close(&pb);
        return s;
    }
    mbs_run_spec rs = {.problem = spec->problem, .method = method, .h = NAN, .tol = tol,
                       .t_end = ts[n - 1], .repeat = 0, .measure = 1, .output_steps = -1,
                       .stops = n > 1 ? ts : NULL, .n_stops = n > 1 ? n : 0,
                       .stop_states = n > 1 ? Y : NULL};
    mbs_record rec;
    int s = mbs_run(&rs, &rec, err, errlen);
    if (s != MBS_OK)
        return s;
    if (rec.status != MBS_OK) {
        snprintf(err, errlen, "%s failed at t=%g: %s", method, rec.fail_t, rec.reason);
        s = rec.status;
    } else {
        if (n == 1)
            memcpy(Y, rec.final, (rec.nq + rec.nv + rec.nl + rec.nx) * sizeof(double));
        snprintf(desc, desclen, "%s tol=%g (%ld steps%s)", method, tol, rec.cnt.steps,
                 n > 1 ? ", restarted at each grid time" : "");
    }
    mbs_record_free(&rec);
    return s;
}

static double agreement(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]) / (1.0 + fabs(a[i]));
        if (e > m || isnan(e))
            m = e;
    }
    return m > 0.0 ? -log10(m) : (isnan(m) ? NAN : 16.0);
}

/* The agreement of two states y = q | v | lambda (| x) at t.  With redundant
 * constraints (rank G < n_lambda) the multipliers are not unique and two correct
 * computations may hold different ones (minimum-norm or not): there the constraint
 * forces G(q)^T lambda, which the motion determines, are compared instead of lambda. */
static double state_agreement(const mbs_problem *pb, double t, const double *a, const double *b)
{
    size_t ny = mbs_ny(pb), nqv = pb->nq + pb->nv;
    if (!(pb->flags & MBS_PB_REDUNDANT) || pb->nl == 0)
        return agreement(a, b, ny);
    double d = fmin(agreement(a, b, nqv), agreement(a + nqv + pb->nl, b + nqv + pb->nl, pb->nx));
    gsl_matrix *G = mbs_matrix_alloc(pb->nl, pb->nq);
    double *f = malloc(2 * pb->nq * sizeof(double));
    int ok = G && f;
    for (int s = 0; s < 2 && ok; s++) {
        const double *y = s ? b : a;
        ok = pb->def->jacobian(pb, t, y, G) == MBS_OK;
        for (size_t j = 0; j < pb->nq && ok; j++) {
            double sum = 0.0;
            for (size_t i = 0; i < pb->nl; i++)
                sum += gsl_matrix_get(G, i, j) * y[nqv + i];
            f[s * pb->nq + j] = sum;
        }
    }
    d = ok ? fmin(d, agreement(f, f + pb->nq, pb->nq)) : NAN;
    if (G)
        gsl_matrix_free(G);
    free(f);
    return d;
}

/* What state_agreement compares of the multipliers, for the provenance. */
static const char *mult_name(const mbs_problem *pb)
{
    return (pb->flags & MBS_PB_REDUNDANT) && pb->nl ? "G^T lambda" : "lambda";
}

/* "mbsbench <rev>, <date>" for the provenance. */
static void stamp(char *buf, size_t len)
{
    char rev[128], date[32];
    revision(rev, sizeof rev);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    snprintf(buf, len, "mbsbench %s, %s", rev, date);
}

/* Trajectory mode: the agreement at every grid time; the first time where it
 * falls below min_digits is the predictability horizon (refused, and stored
 * as such unless dry run), else the first computation's states are stored. */
static int judge_trajectory(const mbs_refgen_spec *spec, mbs_problem *pb, double t_end,
                            long steps, const double *ts, const double *Ya, const double *Yb,
                            const char *da, const char *db, double min_digits,
                            mbs_refgen_result *res, char *err, size_t errlen)
{
    size_t ny = mbs_ny(pb);
    long part = -1, worst = 0;
    double dmin = INFINITY, dq = INFINITY, dpart = NAN;
    for (long k = 0; k <= steps; k++) {
        double d = state_agreement(pb, ts[k], Ya + (size_t)k * ny, Yb + (size_t)k * ny);
        dq = fmin(dq, agreement(Ya + (size_t)k * ny, Yb + (size_t)k * ny, pb->nq));
        if (!(d >= dmin)) {
            dmin = d;
            worst = k;
        }
        if (part < 0 && !(d >= min_digits)) {
            part = k;
            dpart = d;
        }
    }
    res->digits = dmin;
    res->digits_q = dq;
    char st[200];
    stamp(st, sizeof st);
    pb->t_end = t_end;
    if (part >= 0) {
        snprintf(res->provenance, sizeof res->provenance,
                 "%s vs %s part at t = %.6g: agree to %.2f digits there (need %.2f; max "
                 "|dy|/(1+|y|) over q,v,%s on %ld output steps), %s",
                 da, db, ts[part], dpart, min_digits, mult_name(pb), steps, st);
        int stored = spec->store && mbs_reference_traj_store(pb, t_end, steps, NULL, ts[part],
                                                             res->provenance) == 0;
        snprintf(err, errlen,
                 "%s: the two computations part at t = %.6g (agree to %.2f digits there, need "
                 "%.2f): beyond the predictability horizon, no reference trajectory%s",
                 spec->problem, ts[part], dpart, min_digits,
                 stored ? " (the horizon is stored)" : "");
        return spec->expect_horizon && (stored || !spec->store) ? 0 : 1;
    }
    snprintf(res->provenance, sizeof res->provenance,
             "%s vs %s, agree to %.1f digits over the grid (q: %.1f; least at t = %.6g; max "
             "|dy|/(1+|y|) over q,v,%s at each of %ld + 1 times), %s",
             da, db, dmin, dq, ts[worst], mult_name(pb), steps, st);
    if (spec->store &&
        mbs_reference_traj_store(pb, t_end, steps, Ya, NAN, res->provenance) != 0) {
        char path[1024];
        mbs_reference_traj_path(pb->def->name, path, sizeof path);
        snprintf(err, errlen, "cannot write %s", path);
        return 2;
    }
    if (spec->expect_horizon) {
        snprintf(err, errlen, "%s: a predictability horizon was expected, but the two "
                 "computations agree to %.1f digits over the grid", spec->problem, dmin);
        return 1;
    }
    return 0;
}

int mbs_refgen(const mbs_refgen_spec *spec, mbs_refgen_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    res->digits = res->digits_q = NAN;
    gsl_set_error_handler_off();
    mbs_problem pb;
    if (mbs_problem_open(&pb, spec->problem, err, errlen) != MBS_OK)
        return 2;
    double tol = isnan(spec->tol) ? 1e-13 : spec->tol;
    double t_end = isnan(spec->t_end) ? pb.t_end : spec->t_end;
    double min_digits = isnan(spec->min_digits) ? 8.0 : spec->min_digits;
    int rc = 2;
    double *ya = NULL, *yb = NULL, *ts = NULL;
    char ma[128], mb[128];
    const char *methods = spec->methods;
    if (!methods)
        methods = pb.def->independent ? "independent,index1/rk8pd" : "index1/rk8pd,index1/dopri5";
    const char *comma = strchr(methods, ',');
    if (pb.def->exact) {
        snprintf(err, errlen, "%s has an exact solution; no reference is stored", pb.def->name);
        goto done;
    }
    if (!(isfinite(t_end) && t_end > pb.t0)) {
        snprintf(err, errlen, "--t-end %g must be finite and greater than t0 = %g", t_end, pb.t0);
        goto done;
    }
    if (!(tol > 0.0 && tol < 1e-3)) {
        snprintf(err, errlen, "--tol %g must lie in (0, 1e-3)", tol);
        goto done;
    }
    if (!comma || strchr(comma + 1, ',') || (size_t)(comma - methods) >= sizeof ma ||
        strlen(comma + 1) >= sizeof mb || comma == methods || comma[1] == '\0') {
        snprintf(err, errlen, "--methods '%s': expected two methods A,B", methods);
        goto done;
    }
    memcpy(ma, methods, (size_t)(comma - methods));
    ma[comma - methods] = '\0';
    snprintf(mb, sizeof mb, "%s", comma + 1);
    if (strcmp(ma, mb) == 0) {
        snprintf(err, errlen, "--methods: the two computations must differ ('%s' twice)", ma);
        goto done;
    }
    /* the times: t_end alone, or the output grid (trajectory mode) */
    long steps = spec->trajectory ? mbs_traj_steps(&pb, spec->output_steps) : 0;
    size_t n = (size_t)steps + 1, ny = mbs_ny(&pb);
    ts = malloc(n * sizeof(double));
    ya = calloc(n * ny, sizeof(double));
    yb = calloc(n * ny, sizeof(double));
    if (!ts || !ya || !yb) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (spec->trajectory)
        for (long k = 0; k <= steps; k++)
            ts[k] = mbs_traj_time(pb.t0, t_end, steps, k);
    else
        ts[0] = t_end;
    char da[300], db[300], e2[512];
    int sa = compute(spec, ma, tol, ts, n, ya, da, sizeof da, err, errlen);
    if (sa == MBS_BAD_INPUT) {
        rc = 2;
        goto done;
    }
    if (sa != MBS_OK) {
        rc = 1;
        goto done;
    }
    int sb = compute(spec, mb, tol, ts, n, yb, db, sizeof db, e2, sizeof e2);
    if (sb != MBS_OK) {
        snprintf(err, errlen, "%s", e2);
        rc = sb == MBS_BAD_INPUT ? 2 : 1;
        goto done;
    }
    if (spec->trajectory) {
        rc = judge_trajectory(spec, &pb, t_end, steps, ts, ya, yb, da, db, min_digits, res, err,
                              errlen);
        goto done;
    }
    res->digits = state_agreement(&pb, t_end, ya, yb);
    res->digits_q = agreement(ya, yb, pb.nq);
    char st[200];
    stamp(st, sizeof st);
    snprintf(res->provenance, sizeof res->provenance,
             "%s vs %s, agree to %.1f digits (q: %.1f; max |dy|/(1+|y|) over q,v,%s), %s",
             da, db, res->digits, res->digits_q, mult_name(&pb), st);
    if (!(res->digits >= min_digits)) {
        snprintf(err, errlen, "%s: the two computations agree to %.1f digits only (need %.1f)",
                 pb.def->name, res->digits, min_digits);
        rc = 1;
        goto done;
    }
    rc = 0;
    if (spec->store) {
        pb.t_end = t_end;
        if (mbs_reference_store(&pb, t_end, ya, res->provenance) != 0) {
            char path[1024];
            mbs_reference_path(pb.def->name, path, sizeof path);
            snprintf(err, errlen, "cannot write %s", path);
            rc = 2;
        }
    }
done:
    free(ts);
    free(ya);
    free(yb);
    mbs_problem_close(&pb);
    return rc;
}

static int bad(const char *msg, const char *a)
{
    fprintf(stderr, "mbsbench: reference: ");
    fprintf(stderr, msg, a);
    fputc('\n', stderr);
    return 2;
}

int mbs_cmd_reference(int argc, char **argv)
{
    mbs_refgen_spec spec = {.tol = NAN, .t_end = NAN, .min_digits = NAN, .store = 1};
    const mbs_cli_cmd *cmd = mbs_cli_find("reference");
    for (int i = 2; i < argc; i++) {
        mbs_cli_arg a;
        int k = mbs_cli_next(cmd, argc, argv, &i, &a);
        if (k < 0)
            return 2;
        if (mbs_cli_is(&a, "--dry-run"))
            spec.store = 0;
        else if (mbs_cli_is(&a, "--t-end"))
            spec.t_end = a.num;
        else if (mbs_cli_is(&a, "--tol"))
            spec.tol = a.num;
        else if (mbs_cli_is(&a, "--min-digits"))
            spec.min_digits = a.num;
        else if (mbs_cli_is(&a, "--methods"))
            spec.methods = a.str;
        else if (mbs_cli_is(&a, "--trajectory"))
            spec.trajectory = 1;
        else if (mbs_cli_is(&a, "--expect-horizon"))
            spec.expect_horizon = 1;
        else if (mbs_cli_is(&a, "--output-steps"))
            spec.output_steps = a.integer;
        else if ((mbs_cli_is(&a, "--problem") || k == 0) && !spec.problem)
            spec.problem = a.str;
        else
            return bad("unexpected argument '%s'", a.str);
    }
    if (!spec.problem)
        return bad("PROBLEM[:k=v,...] required%s", "");
    if ((spec.output_steps || spec.expect_horizon) && !spec.trajectory)
        return bad("--output-steps and --expect-horizon go with --trajectory%s", "");
    mbs_refgen_result res;
    char err[1024] = "";
    int rc = mbs_refgen(&spec, &res, err, sizeof err);
    if (!isnan(res.digits))
        printf("%s: %s\n", spec.problem, res.provenance);
    if (rc != 0 || (spec.trajectory && err[0])) { /* refusals and expected horizons */
        fprintf(stderr, "mbsbench: reference: %s\n", err);
        if (rc != 0)
            return rc;
    }
    if (spec.store) {
        mbs_problem pb;
        char path[1024];
        if (mbs_problem_open(&pb, spec.problem, err, sizeof err) == MBS_OK) {
            (spec.trajectory ? mbs_reference_traj_path : mbs_reference_path)(pb.def->name, path,
                                                                            sizeof path);
            printf("stored in %s\n", path);
            mbs_problem_close(&pb);
        }
    }
    return 0;
}
