/* The IFToMM table of a results directory (iftomm.h). */
#include "iftomm.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"
#include "traj.h"

/* The run's IFToMM error (traj.iftomm.err_rel; NaN when not measured). */
static double ift_rel(json_t *rec, double *abs_err, const char **ref)
{
    json_t *ift = json_object_get(json_object_get(rec, "traj"), "iftomm");
    json_t *r = json_object_get(ift, "err_rel"), *a = json_object_get(ift, "err_abs");
    *abs_err = json_is_number(a) ? json_number_value(a) : NAN;
    *ref = json_string_value(json_object_get(ift, "reference"));
    if (!*ref)
        *ref = "-";
    return json_is_number(r) ? json_number_value(r) : NAN;
}

/* The run's step size or tolerance as text. */
static void setting(json_t *rec, char *buf, size_t len)
{
    double h = mbs_jnum(rec, "h"), tol = mbs_jnum(rec, "tol");
    if (isfinite(tol))
        snprintf(buf, len, "tol=%.3g", tol);
    else if (isfinite(h))
        snprintf(buf, len, "h=%.3g", h);
    else
        snprintf(buf, len, "-");
}

int mbs_iftomm_table(const char *dir, FILE *out)
{
    mbs_results r;
    char err[1024];
    if (mbs_results_load(dir, &r, err, sizeof err) != 0) {
        fprintf(stderr, "mbsbench: %s\n", err);
        return 2;
    }
    const char *machine = r.meta ? json_string_value(json_object_get(r.meta, "cpu")) : NULL;
    if (!machine)
        machine = "unknown";
    static const struct {
        const char *name;
        double bound;
    } classes[] = {{"high", MBS_IFTOMM_HIGH}, {"low", MBS_IFTOMM_LOW}};
    size_t n = r.n;
    char *done = calloc(n ? n : 1, 1), *best = calloc(n ? n : 1, 1);
    if (!done || !best) {
        free(done);
        free(best);
        mbs_results_free(&r);
        fprintf(stderr, "mbsbench: out of memory\n");
        return 2;
    }
    fprintf(out, "IFToMM precision classes of %s (error: max over the output times and the "
                 "reported quantities of |x - x_ref| / max(|x_ref|, 1e-3); high <= 1e-3, "
                 "low <= 1e-1)\n"
                 "each method's cheapest run (median CPU time) that meets the class; * the "
                 "fastest of the problem and class\n\n",
            dir);
    fprintf(out, "| problem | class | method | setting | accuracy (rel) | abs | CPU time [s] | "
                 "steps | reference | machine |\n|---|---|---|---|---|---|---|---|---|---|\n");
    int rows = 0;
    /* problems in the order of their first record */
    for (size_t p = 0; p < n; p++) {
        if (done[p])
            continue;
        const char *prob = mbs_jstr(r.recs[p], "problem_spec");
        double t_end = mbs_jnum(r.recs[p], "t_end");
        int measured = 0; /* a problem without any IFToMM error is left out */
        for (size_t c = 0; c < sizeof classes / sizeof *classes; c++) {
            memset(best, 0, n);
            size_t fastest = n;
            for (size_t i = p; i < n; i++) {
                json_t *o = r.recs[i];
                if (strcmp(mbs_jstr(o, "problem_spec"), prob) != 0 ||
                    mbs_jnum(o, "t_end") != t_end)
                    continue;
                done[i] = 1;
                const char *ref;
                double a, e = ift_rel(o, &a, &ref);
                measured |= isfinite(e);
                double cpu = mbs_jnum(o, "cpu.median");
                if (!mbs_rec_ok(o) || !(e <= classes[c].bound) || !isfinite(cpu))
                    continue;
                /* the method's cheapest qualifying run so far */
                size_t j = p;
                for (; j < n; j++)
                    if (best[j] && strcmp(mbs_jstr(r.recs[j], "method_spec"),
                                          mbs_jstr(o, "method_spec")) == 0)
                        break;
                if (j < n && mbs_jnum(r.recs[j], "cpu.median") <= cpu)
                    continue;
                if (j < n)
                    best[j] = 0;
                best[i] = 1;
            }
            for (size_t i = p; i < n; i++)
                if (best[i] && (fastest == n || mbs_jnum(r.recs[i], "cpu.median") <
                                                    mbs_jnum(r.recs[fastest], "cpu.median")))
                    fastest = i;
            if (fastest == n && !measured)
                break;
            if (fastest == n) {
                fprintf(out, "| %s | %s | (no run meets the class) | | | | | | | |\n", prob,
                        classes[c].name);
                rows++;
                continue;
            }
            for (size_t i = p; i < n; i++) {
                if (!best[i])
                    continue;
                json_t *o = r.recs[i];
                const char *ref;
                double a, e = ift_rel(o, &a, &ref);
                char set[64];
                setting(o, set, sizeof set);
                fprintf(out, "| %s | %s | %s%s | %s | %.3g | %.3g | %.4g | %.0f | %s | %s |\n",
                        prob, classes[c].name, mbs_jstr(o, "method_spec"),
                        i == fastest ? " *" : "", set, e, a, mbs_jnum(o, "cpu.median"),
                        mbs_jnum(o, "counters.steps"), ref, machine);
                rows++;
            }
        }
    }
    if (rows == 0)
        fprintf(out, "(no records)\n");
    free(done);
    free(best);
    mbs_results_free(&r);
    return 0;
}
