#include "converge.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/gslalloc.h"
#include "reference.h"

/* The stated accuracy of the stored reference the levels were measured against
 * (converge.h): ref_digits, ref_digits_q and the absolute accuracy per group. */
static void reference_accuracy(const mbs_run_spec *base, mbs_converge *out)
{
    out->ref_digits = out->ref_digits_q = NAN;
    for (int g = 0; g < 3; g++)
        out->ref_acc[g] = NAN;
    const mbs_record *r0 = NULL;
    for (int i = 0; i < out->levels && !r0; i++)
        if (strcmp(out->rec[i].ref_kind, "reference") == 0)
            r0 = &out->rec[i];
    if (!r0)
        return;
    mbs_problem pb;
    char err[256], prov[1024];
    if (mbs_problem_open(&pb, base->problem, err, sizeof err) != MBS_OK)
        return;
    double *y = calloc(mbs_ny(&pb), sizeof(double));
    double t_end = isnan(base->t_end) ? pb.t_end : base->t_end;
    if (y && mbs_reference_find(&pb, t_end, y, prov, sizeof prov)) {
        out->ref_digits = mbs_reference_digits(prov, &out->ref_digits_q);
        size_t off[4] = {0, r0->nq, r0->nq + r0->nv, r0->nq + r0->nv + r0->nl};
        for (int g = 0; g < 3 && !isnan(out->ref_digits); g++) {
            double ymax = 0.0;
            for (size_t k = off[g]; k < off[g + 1]; k++)
                ymax = fmax(ymax, fabs(y[k]));
            double d = g == 0 ? out->ref_digits_q : out->ref_digits;
            out->ref_acc[g] = off[g + 1] > off[g] ? pow(10.0, -d) * (1.0 + ymax) : NAN;
        }
    }
    free(y);
    mbs_problem_close(&pb);
}

/* A problem with a branch (problem.h, branch) and no exact or stored reference:
 * each level's q and v at t_end against the branch's state there (the
 * multipliers are not measured: the branch gives none), and a level whose final
 * configuration lies more than MBS_BRANCH_OFF from the branch's configurations
 * left it: status left_branch.  1 when measured so, 0 when the problem has no
 * branch (or it does not cover the instance), -1 out of memory. */
/* The constraint forces G(q)^T lambda of the final state y = q | v | lambda
 * (n_q values into f).  With redundant constraints the multipliers are not
 * unique (a method need not return the minimum-norm ones: DCA's differ from
 * svd's by a multiple of the null vector of G^T, 3.6e-4 on bricard at h =
 * 2.5e-3 with q equal to 8e-10); the forces are, as in the reference tool
 * (refgen.c, state_agreement). */
static int constraint_forces(const mbs_problem *pb, double t, const double *y, gsl_matrix *G,
                             double *f)
{
    if (pb->def->jacobian(pb, t, y, G) != MBS_OK)
        return 0;
    const double *lam = y + pb->nq + pb->nv;
    for (size_t j = 0; j < pb->nq; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < pb->nl; i++)
            sum += gsl_matrix_get(G, i, j) * lam[i];
        f[j] = sum;
    }
    return 1;
}

/* Self-convergence difference of the multipliers of levels a and b: max |lambda_a -
 * lambda_b|, or of G^T lambda where the problem's constraints are redundant
 * (pbr: the problem, open, or NULL when not redundant). */
static double lambda_difference(const mbs_problem *pbr, const mbs_record *a,
                                const mbs_record *b)
{
    size_t off = a->nq + a->nv;
    double d = 0.0;
    if (!pbr || a->nq != pbr->nq || a->nl != pbr->nl) {
        for (size_t k = 0; k < a->nl; k++)
            d = fmax(d, fabs(a->final[off + k] - b->final[off + k]));
        return d;
    }
    gsl_matrix *G = mbs_matrix_alloc(pbr->nl, pbr->nq);
    double *f = malloc(2 * pbr->nq * sizeof(double));
    if (G && f && constraint_forces(pbr, a->t_final, a->final, G, f) &&
        constraint_forces(pbr, b->t_final, b->final, G, f + pbr->nq))
        for (size_t j = 0; j < pbr->nq; j++)
            d = fmax(d, fabs(f[j] - f[pbr->nq + j]));
    else
        d = NAN;
    if (G)
        gsl_matrix_free(G);
    free(f);
    return d;
}

static int branch_errors(const mbs_run_spec *base, mbs_converge *out)
{
    mbs_problem pb;
    char err[256];
    if (mbs_problem_open(&pb, base->problem, err, sizeof err) != MBS_OK)
        return 0;
    int res = 0;
    if (pb.def->branch) {
        size_t nq = pb.nq, nv = pb.nv;
        double *qb = malloc((nq + nv + 1) * sizeof(double)), *vb = qb ? qb + nq : NULL, off;
        res = qb ? 1 : -1;
        for (int i = 0; i < out->levels && res == 1; i++) {
            mbs_record *r = &out->rec[i];
            if (r->status != MBS_OK || !r->final || r->nq != nq || r->nv != nv)
                continue;
            if (pb.def->branch(&pb, r->t_final, r->final, qb, vb, &off) != MBS_OK) {
                res = 0; /* not covered: self-convergence */
                break;
            }
            double d[2] = {0.0, 0.0};
            for (size_t k = 0; k < nq; k++)
                d[0] = fmax(d[0], fabs(r->final[k] - qb[k]));
            for (size_t k = 0; k < nv; k++)
                d[1] = fmax(d[1], fabs(r->final[nq + k] - vb[k]));
            r->err.q = d[0];
            r->err.v = d[1];
            r->err.lambda = NAN;
            r->have_ref = 1;
            snprintf(r->ref_kind, sizeof r->ref_kind, "branch");
            if (!(off <= MBS_BRANCH_OFF)) {
                r->status = MBS_LEFT_BRANCH;
                r->fail_t = r->t_final;
                snprintf(r->reason, sizeof r->reason,
                         "left the branch: final configuration %.3g from the branch's (at most "
                         "%g), error %.3g (q) against the branch at t = %g",
                         off, MBS_BRANCH_OFF, d[0], r->t_final);
            }
        }
        free(qb);
    }
    mbs_problem_close(&pb);
    return res;
}

double mbs_roundoff_floor(double ymax, long steps)
{
    return DBL_EPSILON * (1.0 + ymax) * fmax(1e3, (double)steps);
}

double mbs_converge_group_ymax(const mbs_converge *cv, int g)
{
    double ymax = 0.0;
    for (int i = 0; i < cv->levels; i++) {
        const mbs_record *ri = &cv->rec[i];
        if (ri->status != MBS_OK || !ri->final)
            continue;
        size_t off[4] = {0, ri->nq, ri->nq + ri->nv, ri->nq + ri->nv + ri->nl};
        for (size_t k = off[g]; k < off[g + 1]; k++)
            ymax = fmax(ymax, fabs(ri->final[k]));
    }
    return ymax;
}

/* The round-off floor of each level and group (converge.h). */
static void roundoff_floors(mbs_converge *out)
{
    for (int g = 0; g < 3; g++) {
        double ymax = mbs_converge_group_ymax(out, g);
        for (int i = 0; i < out->levels; i++)
            out->roundoff[i][g] = mbs_roundoff_floor(ymax, out->rec[i].cnt.steps);
    }
}

/* Level i's step or tolerance, x0 / ratio^i, rounded to 15 significant digits:
 * the value a user would type for it.  Unrounded, tol0 1e-6 at ratio 10 gave a
 * fourth level of 9.999999999999999e-10, not 1e-9, and IDA's step sequence
 * changes with the last bit of its tolerance (caraxis: 4647 steps against 4485
 * at 1e-9), so `run --tol 1e-9` did not repeat the level.  Halvings (ratio 2)
 * are exact and unchanged. */
static double level_value(double x0, double ratio, int i)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", x0 / pow(ratio, i));
    return strtod(buf, NULL);
}

int mbs_converge_run(const mbs_run_spec *base, double x0, int levels, double ratio,
                     mbs_converge *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (levels < 2 || levels > MBS_MAX_LEVELS) {
        snprintf(err, errlen, "--levels %d must lie in [2, %d]", levels, MBS_MAX_LEVELS);
        return MBS_BAD_INPUT;
    }
    if (!(isfinite(ratio) && ratio > 1.0 && ratio <= 100.0)) {
        snprintf(err, errlen, "--ratio %g must lie in (1, 100]", ratio);
        return MBS_BAD_INPUT;
    }
    const mbs_method_def *m;
    mbs_params mp;
    if (base->method_def) /* an unregistered definition (run.h) */
        m = base->method_def;
    else if (mbs_method_parse(base->method, &m, &mp, err, errlen) != MBS_OK)
        return MBS_BAD_INPUT;
    out->adaptive = !(m->flags & MBS_M_FIXED_STEP);
    int any_ref = 0; /* a level measured against an exact or stored reference */
    for (int i = 0; i < levels; i++) {
        mbs_run_spec spec = *base;
        double x = level_value(x0, ratio, i);
        spec.h = out->adaptive ? NAN : x;
        spec.tol = out->adaptive ? x : NAN;
        out->x[i] = x;
        if (mbs_run(&spec, &out->rec[i], err, errlen) != MBS_OK) {
            mbs_converge_free(out);
            return MBS_BAD_INPUT;
        }
        out->levels = i + 1;
        if (i == 0 && out->rec[0].status == MBS_UNSUPPORTED) {
            out->declined = 1; /* every level would be declined alike */
            for (int g = 0; g < 3; g++)
                out->fit[g] = (mbs_order_fit){.p = NAN, .ci_low = NAN, .ci_high = NAN};
            out->ref_digits = out->ref_digits_q = NAN;
            out->ref_acc[0] = out->ref_acc[1] = out->ref_acc[2] = NAN;
            return MBS_OK;
        }
        any_ref |= out->rec[i].have_ref;
    }
    if (!any_ref) {
        int br = branch_errors(base, out);
        if (br < 0) {
            mbs_converge_free(out);
            snprintf(err, errlen, "converge: out of memory");
            return MBS_BAD_INPUT;
        }
        out->branch = br;
    }
    if (!any_ref && !out->branch) {
        /* self-convergence: errors against one more, finer level */
        mbs_record fine;
        mbs_run_spec spec = *base;
        double x = level_value(x0, ratio, levels);
        spec.h = out->adaptive ? NAN : x;
        spec.tol = out->adaptive ? x : NAN;
        if (mbs_run(&spec, &fine, err, errlen) != MBS_OK) {
            mbs_converge_free(out);
            return MBS_BAD_INPUT;
        }
        out->self_ref = 1;
        out->x_ref = x;
        mbs_problem pb;
        char perr[256];
        int redundant = 0;
        if (mbs_problem_open(&pb, base->problem, perr, sizeof perr) == MBS_OK) {
            redundant = (pb.flags & MBS_PB_REDUNDANT) && pb.nl > 0;
            if (!redundant)
                mbs_problem_close(&pb);
        }
        out->lambda_forces = redundant;
        /* Each level against the next finer one (the last against the extra
         * level): |y_i - y_(i+1)| = C h_i^p (1 - r^-p) + ..., so consecutive
         * errors keep the ratio r^p of the true ones.  Against the finest level
         * alone, err_i = C (h_i^p - h_ref^p) and the last pair reads
         * p + log_r((1 - r^-2p) / (1 - r^-p)) (2.32 for p = 2, 1.58 for p = 1 at
         * r = 2), which broke the fit's window. */
        for (int i = 0; i < levels; i++) {
            mbs_record *r = &out->rec[i];
            const mbs_record *nx = i + 1 < levels ? &out->rec[i + 1] : &fine;
            snprintf(r->ref_kind, sizeof r->ref_kind, "next-level");
            if (r->status != MBS_OK)
                continue;
            if (nx->status != MBS_OK) {
                r->err.q = r->err.v = r->err.lambda = NAN; /* nothing to measure against */
                continue;
            }
            const double *a = r->final, *b = nx->final;
            double d[2] = {0.0, 0.0};
            size_t off[3] = {0, r->nq, r->nq + r->nv};
            for (int g = 0; g < 2; g++)
                for (size_t k = off[g]; k < off[g + 1]; k++)
                    d[g] = fmax(d[g], fabs(a[k] - b[k]));
            r->err.q = d[0];
            r->err.v = d[1];
            /* no multipliers: null, not 0 */
            r->err.lambda = r->nl ? lambda_difference(redundant ? &pb : NULL, r, nx) : NAN;
        }
        if (redundant)
            mbs_problem_close(&pb);
        if (fine.status != MBS_OK)
            snprintf(err, errlen, "finest level (%s %g) failed: %s", out->adaptive ? "tol" : "h",
                     x, fine.reason);
        mbs_record_free(&fine);
    }
    reference_accuracy(base, out);
    roundoff_floors(out);
    double e[3][MBS_MAX_LEVELS];
    for (int i = 0; i < levels; i++) {
        int ok = out->rec[i].status == MBS_OK;
        ok = ok && (out->rec[i].have_ref || out->self_ref);
        const double ei[3] = {out->rec[i].err.q, out->rec[i].err.v, out->rec[i].err.lambda};
        for (int g = 0; g < 3; g++) {
            out->ref_limited[i][g] = ok && ei[g] < out->ref_acc[g];
            out->roundoff_limited[i][g] =
                ok && !out->ref_limited[i][g] && ei[g] <= out->roundoff[i][g];
            e[g][i] = ok && !out->ref_limited[i][g] ? ei[g] : NAN;
        }
    }
    for (int g = 0; g < 3; g++)
        mbs_fit_order(out->x, e[g], (size_t)levels, &out->fit[g]);
    return MBS_OK;
}

void mbs_converge_free(mbs_converge *c)
{
    for (int i = 0; i < c->levels; i++)
        mbs_record_free(&c->rec[i]);
    c->levels = 0;
}

static double pair_order(const mbs_converge *c, int i, double (*get)(const mbs_record *))
{
    double a = get(&c->rec[i - 1]), b = get(&c->rec[i]);
    if (!(a > 0.0 && b > 0.0))
        return NAN;
    return log(a / b) / log(c->x[i - 1] / c->x[i]);
}

static double get_q(const mbs_record *r) { return r->err.q; }
static double get_v(const mbs_record *r) { return r->err.v; }
static double get_l(const mbs_record *r) { return r->err.lambda; }

void mbs_converge_print(const mbs_converge *c, FILE *f)
{
    const char *xname = c->adaptive ? "tol" : "h";
    fprintf(f, "%s %s on %s\n", c->adaptive ? "tolerance study:" : "convergence study:",
            c->rec[0].method_spec, c->rec[0].problem_spec);
    fprintf(f, "%10s %11s %11s %11s %7s %7s %7s %9s %s\n", xname, "err_q", "err_v", "err_lam",
            "p_q", "p_v", "p_lam", "steps", c->adaptive ? "err_q/tol" : "");
    for (int i = 0; i < c->levels; i++) {
        const mbs_record *r = &c->rec[i];
        fprintf(f, "%10.3e %11.3e %11.3e", c->x[i], r->err.q, r->err.v);
        if (isnan(r->err.lambda)) /* no multipliers (or not measured) */
            fprintf(f, " %11s", "-");
        else
            fprintf(f, " %11.3e", r->err.lambda);
        if (i == 0)
            fprintf(f, " %7s %7s %7s", "", "", "");
        else
            for (int g = 0; g < 3; g++) { /* "-" where an error is missing, never "nan" */
                double p = pair_order(c, i, g == 0 ? get_q : g == 1 ? get_v : get_l);
                if (isfinite(p))
                    fprintf(f, " %7.2f", p);
                else
                    fprintf(f, " %7s", "-");
            }
        fprintf(f, " %9ld", r->cnt.steps);
        if (c->adaptive)
            fprintf(f, " %9.2e", r->err.q / c->x[i]);
        if (r->status != MBS_OK)
            fprintf(f, "  %s: %s", mbs_status_code(r->status), r->reason);
        const char *gname[3] = {"q", "v", "lambda"};
        for (int g = 0, first = 1; g < 3; g++)
            if (c->ref_limited[i][g]) {
                fprintf(f, "%s%s", first ? "  reference-limited: " : " ", gname[g]);
                first = 0;
            }
        for (int g = 0, first = 1; g < 3; g++)
            if (c->roundoff_limited[i][g]) {
                fprintf(f, "%s%s", first ? "  round-off-limited: " : " ", gname[g]);
                first = 0;
            }
        fputc('\n', f);
    }
    if (c->declined)
        fprintf(f, "declined: %s; no further level was run\n", c->rec[0].reason);
    int any_limited = 0;
    for (int i = 0; i < c->levels; i++)
        any_limited |= c->ref_limited[i][0] | c->ref_limited[i][1] | c->ref_limited[i][2];
    if (any_limited)
        fprintf(f, "reference-limited: error below the stored reference's stated accuracy "
                   "(%.1f digits, q %.1f: |err| %.2e, %.2e, %.2e in q, v, lambda); "
                   "left out of the fit\n",
                c->ref_digits, c->ref_digits_q, c->ref_acc[0], c->ref_acc[1], c->ref_acc[2]);
    int any_roundoff = 0;
    for (int i = 0; i < c->levels; i++)
        any_roundoff |= c->roundoff_limited[i][0] | c->roundoff_limited[i][1] |
                        c->roundoff_limited[i][2];
    if (any_roundoff)
        fprintf(f, "round-off-limited: error at or below the round-off floor eps (1 + max |y|) "
                   "max(1000, steps) (at the last level %.2e, %.2e, %.2e in q, v, lambda), a "
                   "worst-case bound: kept in the fit, not counted as usable by the battery\n",
                c->roundoff[c->levels - 1][0], c->roundoff[c->levels - 1][1],
                c->roundoff[c->levels - 1][2]);
    if (c->self_ref)
        fprintf(f, "reference: none for these parameters and t_end; errors are against the "
                   "next finer level (self-convergence; the last against %s = %.3e)\n",
                xname, c->x_ref);
    if (c->lambda_forces)
        fprintf(f, "err_lam: of the constraint forces G^T lambda (redundant constraints: the "
                   "multipliers are not unique)\n");
    if (c->branch)
        fprintf(f, "reference: the problem's branch (q and v at t_end; multipliers not "
                   "measured); a level whose configuration is off it left the branch\n");
    const char *names[3] = {"q", "v", "lambda"};
    const char *what = c->adaptive ? "tol-exponent" : "order";
    for (int g = 0; g < 3; g++) {
        const mbs_order_fit *ft = &c->fit[g];
        char nominal[64];
        if (c->adaptive)
            snprintf(nominal, sizeof nominal, "(err ~ tol^p; proportional: p = 1)");
        else
            snprintf(nominal, sizeof nominal, "(nominal %g)", c->rec[0].order[g]);
        if (g == 2 && c->rec[0].nl == 0)
            fprintf(f, "%s %-6s -  (no multipliers)\n", what, names[g]);
        else if (g == 2 && c->branch)
            fprintf(f, "%s %-6s -  (not measured against the branch)\n", what, names[g]);
        else if (ft->established)
            fprintf(f, "%s %-6s %.2f  95%% CI [%.2f, %.2f]  levels %zu..%zu  %s\n", what,
                    names[g], ft->p, ft->ci_low, ft->ci_high, ft->first + 1, ft->last + 1,
                    nominal);
        else
            fprintf(f, "%s %-6s %s not established  %s\n", what, names[g], what, nominal);
    }
}

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

char *mbs_converge_json(const mbs_converge *c)
{
    json_t *o = json_object();
    json_t *levels = json_array();
    for (int i = 0; i < c->levels; i++) {
        char *s = mbs_record_json(&c->rec[i]);
        json_t *r = s ? json_loads(s, 0, NULL) : NULL;
        free(s);
        if (r) {
            json_t *lim = json_array();
            const char *gname[3] = {"q", "v", "lambda"};
            for (int g = 0; g < 3; g++)
                if (c->ref_limited[i][g])
                    json_array_append_new(lim, json_string(gname[g]));
            json_object_set_new(r, "reference_limited", lim);
            json_t *rl = json_array();
            for (int g = 0; g < 3; g++)
                if (c->roundoff_limited[i][g])
                    json_array_append_new(rl, json_string(gname[g]));
            json_object_set_new(r, "roundoff_limited", rl);
        }
        json_array_append_new(levels, r ? r : json_null());
    }
    json_object_set_new(o, "study", json_string(c->adaptive ? "tolerance" : "step"));
    json_object_set_new(o, "levels", levels);
    json_object_set_new(o, "reference",
                        json_string(c->self_ref ? "next-level" : c->branch ? "branch" : "solution"));
    json_object_set_new(o, "x_ref", num(c->self_ref ? c->x_ref : NAN));
    json_object_set_new(o, "lambda_forces", json_boolean(c->lambda_forces));
    json_object_set_new(o, "declined", json_boolean(c->declined));
    json_object_set_new(o, "reference_accuracy",
                        isnan(c->ref_digits)
                            ? json_null()
                            : json_pack("{s:o,s:o,s:o,s:o,s:o}", "digits", num(c->ref_digits),
                                        "digits_q", num(c->ref_digits_q), "q",
                                        num(c->ref_acc[0]), "v", num(c->ref_acc[1]), "lambda",
                                        num(c->ref_acc[2])));
    json_t *order = json_object();
    const char *names[3] = {"q", "v", "lambda"};
    for (int g = 0; g < 3; g++) {
        const mbs_order_fit *ft = &c->fit[g];
        json_object_set_new(order, names[g],
                            json_pack("{s:o,s:o,s:o,s:b}", "p", num(ft->p), "ci_low",
                                      num(ft->ci_low), "ci_high", num(ft->ci_high),
                                      "established", ft->established));
    }
    json_object_set_new(o, "order", order);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;

}
