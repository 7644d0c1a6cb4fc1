/* Record output: JSON Lines (jansson), CSV and a terminal table.  Every field is
 * documented in docs/results-schema.md; NaN is written as null. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../problems/problem.h"
#include "env.h"
#include "run.h"
#include "traj.h"

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *array(const double *x, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, num(x[i]));
    return a;
}

static json_t *err3(mbs_err3 e)
{
    return json_pack("{s:o,s:o,s:o}", "q", num(e.q), "v", num(e.v), "lambda", num(e.lambda));
}

/* Errors along the trajectory (harness/traj.h); null when not measured. */
static json_t *traj_object(const mbs_record *r)
{
    const mbs_traj_rec *t = &r->traj;
    if (!t->measured)
        return json_null();
    json_t *ift = t->ift_ref[0] ? json_pack("{s:s,s:o,s:o}", "reference", t->ift_ref,
                                            "err_abs", num(t->ift_abs), "err_rel",
                                            num(t->ift_rel))
                                : json_null();
    return json_pack("{s:I,s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "n", (json_int_t)t->n, "interp",
                     t->interp, "reference", t->reference, "reason",
                     t->reason[0] ? json_string(t->reason) : json_null(), "err_max",
                     err3(t->err_max), "err_rms", err3(t->err_rms), "digits", err3(t->digits),
                     "iftomm", ift);
}

/* "k=v,k=v" -> {"k": v, ...}; numbers where the value parses as one. */
static json_t *params_object(const char *text)
{
    json_t *o = json_object();
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        double x;
        if (mbs_parse_double(eq + 1, &x) == 0)
            json_object_set_new(o, tok, x == floor(x) && fabs(x) < 1e15 ? json_integer((json_int_t)x)
                                                                       : json_real(x));
        else
            json_object_set_new(o, tok, json_string(eq + 1));
    }
    return o;
}

/* Linear-solver statistics of the recorded run, null without a backend. */
static json_t *linsol_object(const mbs_record *r)
{
    if (!r->have_linsol)
        return json_null();
    const mbs_linsol_stats *l = &r->linsol;
    return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "backend",
                     mbs_linsol_name(r->linsol_kind), "analyses", (json_int_t)l->analyses,
                     "factorizations", (json_int_t)l->factorizations, "solves",
                     (json_int_t)l->solves, "n", (json_int_t)l->n, "nnz", (json_int_t)l->nnz,
                     "nnz_factor", (json_int_t)l->nnz_factor, "fill", num(l->fill), "rcond",
                     num(l->rcond));
}

char *mbs_record_json(const mbs_record *r)
{
    json_t *o = json_object();
    if (r->run_index >= 0)
        json_object_set_new(o, "run", json_integer(r->run_index));
    json_object_set_new(o, "mbsbench", json_string(mbs_version_string()));
    json_object_set_new(o, "problem", json_string(r->problem));
    json_object_set_new(o, "method", json_string(r->method));
    json_object_set_new(o, "params",
                        json_pack("{s:o,s:o}", "problem", params_object(r->problem_params),
                                  "method", params_object(r->method_params)));
    json_object_set_new(o, "problem_spec", json_string(r->problem_spec));
    json_object_set_new(o, "method_spec", json_string(r->method_spec));
    json_object_set_new(o, "h", num(r->h));
    json_object_set_new(o, "tol", num(r->tol));
    if (isfinite(r->atol) && r->atol != r->tol) /* only when set apart from tol */
        json_object_set_new(o, "atol", num(r->atol));
    if (r->tol_mode == MBS_TOL_GLOBAL) /* only in global mode (harness/globaltol.c) */
        json_object_set_new(o, "tol_mode", json_string("global"));
    if (r->tol_mode == MBS_TOL_GLOBAL)
        json_object_set_new(o, "global",
                            json_pack("{s:i,s:o,s:o}", "levels", r->global_levels, "est",
                                      num(r->global_est), "tol_final", num(r->global_tol_final)));
    json_object_set_new(o, "t0", num(r->t0));
    json_object_set_new(o, "t_end", num(r->t_end));
    json_object_set_new(o, "status", json_string(mbs_status_code(r->status)));
    json_object_set_new(o, "reason", r->status == 0 ? json_null() : json_string(r->reason));
    json_object_set_new(o, "fail_t", r->status == 0 ? json_null() : num(r->fail_t));
    json_object_set_new(o, "dims", json_pack("{s:I,s:I,s:I}", "nq", (json_int_t)r->nq, "nv",
                                             (json_int_t)r->nv, "nl", (json_int_t)r->nl));
    json_object_set_new(o, "order_nominal",
                        json_pack("{s:o,s:o,s:o}", "q", num(r->order[0]), "v", num(r->order[1]),
                                  "lambda", num(r->order[2])));
    if (r->final)
        json_object_set_new(o, "final",
                            json_pack("{s:o,s:o,s:o,s:o}", "t", num(r->t_final), "q",
                                      array(r->final, r->nq), "v", array(r->final + r->nq, r->nv),
                                      "lambda", array(r->final + r->nq + r->nv, r->nl)));
    else
        json_object_set_new(o, "final", json_null());
    if (r->final && r->nx > 0) /* extended problems: x after lambda (problems/problem.h) */
        json_object_set_new(json_object_get(o, "final"), "x",
                            array(r->final + r->nq + r->nv + r->nl, r->nx));
    if (r->final_published)
        json_object_set_new(o, "final_published", array(r->final_published, r->n_published));
    json_object_set_new(o, "reference", json_string(r->ref_kind));
    json_object_set_new(o, "err", err3(r->err));
    json_object_set_new(o, "err_max", err3(r->err_max));
    json_object_set_new(o, "scd", num(r->scd));
    json_object_set_new(o, "mescd", num(r->mescd));
    json_object_set_new(o, "err_mixed_qv", num(r->err_mixed_qv));
    json_object_set_new(o, "traj", traj_object(r));
    json_object_set_new(o, "residual",
                        json_pack("{s:o,s:o,s:o,s:o,s:o}", "pos_max", num(r->res_pos_max),
                                  "vel_max", num(r->res_vel_max), "acc_max",
                                  num(r->res_acc_max), "pos_end", num(r->res_pos_end),
                                  "vel_end", num(r->res_vel_end)));
    json_object_set_new(o, "energy_drift", num(r->energy_drift));
    json_object_set_new(o, "drift_exponent", num(r->drift_exponent));
    json_object_set_new(o, "drift_rms", num(r->drift_rms));
    const mbs_counters *c = &r->cnt;
    json_object_set_new(
        o, "counters",
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "steps",
                  (json_int_t)c->steps,
                  "rejected", (json_int_t)c->rejected, "f_evals", (json_int_t)c->f_evals,
                  "mass_evals", (json_int_t)c->mass_evals, "g_evals", (json_int_t)c->g_evals,
                  "jac_evals", (json_int_t)c->jac_evals, "gamma_evals",
                  (json_int_t)c->gamma_evals, "factorizations", (json_int_t)c->factorizations,
                  "solves", (json_int_t)c->solves, "newton_iters", (json_int_t)c->newton_iters,
                  "jacobians", (json_int_t)c->jacobians, "deriv_evals",
                  (json_int_t)c->deriv_evals));
    json_object_set_new(o, "linsol", linsol_object(r));
    if (r->threads > 0) /* only methods with parallel parts report it */
        json_object_set_new(o, "threads", json_integer(r->threads));
    json_t *times = json_array();
    for (int i = 0; i < r->cpu_repeats && i < MBS_CPU_TIMES_MAX; i++)
        json_array_append_new(times, json_real(r->cpu_times[i]));
    json_object_set_new(o, "cpu",
                        json_pack("{s:o,s:o,s:o,s:i,s:o}", "min", num(r->cpu_min), "median",
                                  num(r->cpu_median), "iqr", num(r->cpu_iqr), "repeats",
                                  r->cpu_repeats, "times", times));
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

static void csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* CSV columns: header name and JSON path (object key, optional sub-key, which
 * may name a key of a nested object after a dot: "err_max.q"). */
static const struct {
    const char *name, *key, *sub;
} csv_columns[] = {
    {"run", "run", NULL},
    {"problem", "problem", NULL},
    {"method", "method", NULL},
    {"problem_spec", "problem_spec", NULL},
    {"method_spec", "method_spec", NULL},
    {"h", "h", NULL},
    {"tol", "tol", NULL},
    {"t_end", "t_end", NULL},
    {"status", "status", NULL},
    {"reason", "reason", NULL},
    {"fail_t", "fail_t", NULL},
    {"reference", "reference", NULL},
    {"err_q", "err", "q"},
    {"err_v", "err", "v"},
    {"err_lambda", "err", "lambda"},
    {"err_max_q", "err_max", "q"},
    {"err_max_v", "err_max", "v"},
    {"err_max_lambda", "err_max", "lambda"},
    {"scd", "scd", NULL},
    {"mescd", "mescd", NULL},
    {"res_pos_max", "residual", "pos_max"},
    {"res_vel_max", "residual", "vel_max"},
    {"res_acc_max", "residual", "acc_max"},
    {"res_pos_end", "residual", "pos_end"},
    {"res_vel_end", "residual", "vel_end"},
    {"energy_drift", "energy_drift", NULL},
    {"drift_exponent", "drift_exponent", NULL},
    {"drift_rms", "drift_rms", NULL},
    {"steps", "counters", "steps"},
    {"rejected", "counters", "rejected"},
    {"f_evals", "counters", "f_evals"},
    {"mass_evals", "counters", "mass_evals"},
    {"g_evals", "counters", "g_evals"},
    {"jac_evals", "counters", "jac_evals"},
    {"gamma_evals", "counters", "gamma_evals"},
    {"factorizations", "counters", "factorizations"},
    {"solves", "counters", "solves"},
    {"newton_iters", "counters", "newton_iters"},
    {"cpu_min", "cpu", "min"},
    {"cpu_median", "cpu", "median"},
    {"cpu_iqr", "cpu", "iqr"},
    {"cpu_repeats", "cpu", "repeats"},
    {"linsol_backend", "linsol", "backend"},
    {"linsol_analyses", "linsol", "analyses"},
    {"linsol_factorizations", "linsol", "factorizations"},
    {"linsol_solves", "linsol", "solves"},
    {"linsol_n", "linsol", "n"},
    {"linsol_nnz", "linsol", "nnz"},
    {"linsol_nnz_factor", "linsol", "nnz_factor"},
    {"linsol_fill", "linsol", "fill"},
    {"linsol_rcond", "linsol", "rcond"},
    {"threads", "threads", NULL},
    {"jacobians", "counters", "jacobians"}, /* appended, older columns keep place */
    {"deriv_evals", "counters", "deriv_evals"},
    /* errors along the trajectory (harness/traj.h), appended */
    {"traj_n", "traj", "n"},
    {"traj_interp", "traj", "interp"},
    {"traj_reference", "traj", "reference"},
    {"traj_err_max_q", "traj", "err_max.q"},
    {"traj_err_max_v", "traj", "err_max.v"},
    {"traj_err_max_lambda", "traj", "err_max.lambda"},
    {"traj_err_rms_q", "traj", "err_rms.q"},
    {"traj_err_rms_v", "traj", "err_rms.v"},
    {"traj_err_rms_lambda", "traj", "err_rms.lambda"},
    {"traj_digits_q", "traj", "digits.q"},
    {"traj_digits_v", "traj", "digits.v"},
    {"traj_digits_lambda", "traj", "digits.lambda"},
    {"traj_reason", "traj", "reason"},
    {"traj_iftomm_reference", "traj", "iftomm.reference"}, /* the IFToMM error, appended */
    {"traj_iftomm_err_abs", "traj", "iftomm.err_abs"},
    {"traj_iftomm_err_rel", "traj", "iftomm.err_rel"},
};

void mbs_record_csv_header(FILE *f)
{
    for (size_t i = 0; i < sizeof csv_columns / sizeof csv_columns[0]; i++)
        fprintf(f, "%s%s", i ? "," : "", csv_columns[i].name);
    fputc('\n', f);
}

void mbs_csv_row_json(json_t *o, FILE *f)
{
    for (size_t i = 0; i < sizeof csv_columns / sizeof csv_columns[0]; i++) {
        if (i)
            fputc(',', f);
        json_t *x = json_object_get(o, csv_columns[i].key);
        const char *sub = csv_columns[i].sub, *dot = sub ? strchr(sub, '.') : NULL;
        if (dot) {
            char first[32];
            snprintf(first, sizeof first, "%.*s", (int)(dot - sub), sub);
            x = json_object_get(json_object_get(x, first), dot + 1);
        } else if (sub) {
            x = json_object_get(x, sub);
        }
        if (json_is_string(x))
            csv_string(f, json_string_value(x));
        else if (json_is_integer(x))
            fprintf(f, "%lld", (long long)json_integer_value(x));
        else if (json_is_real(x))
            fprintf(f, "%.17g", json_real_value(x));
    }
    fputc('\n', f);
}

void mbs_record_csv(const mbs_record *r, FILE *f)
{
    char *s = mbs_record_json(r);
    json_t *o = s ? json_loads(s, 0, NULL) : NULL;
    if (o)
        mbs_csv_row_json(o, f);
    json_decref(o);
    free(s);
}

static void cell(FILE *f, double x, const char *fmt)
{
    if (isfinite(x))
        fprintf(f, fmt, x);
    else
        fprintf(f, "%10s", "-");
}

void mbs_record_table_header(FILE *f)
{
    fprintf(f, "%-24s %-24s %-9s %-10s %10s %10s %10s %10s %8s %10s\n", "problem", "method",
            "h|tol", "status", "err_q", "err_v", "err_lam", "|g|max", "steps", "cpu[s]");
}

void mbs_record_table_row(const mbs_record *r, FILE *f)
{
    char step[32];
    if (isfinite(r->h))
        snprintf(step, sizeof step, "h=%.3g", r->h);
    else
        snprintf(step, sizeof step, "tol=%.0e", r->tol);
    fprintf(f, "%-24.24s %-24.24s %-9s %-10.10s ", r->problem_spec, r->method_spec, step,
            mbs_status_code(r->status));
    cell(f, r->err.q, "%10.2e");
    fputc(' ', f);
    cell(f, r->err.v, "%10.2e");
    fputc(' ', f);
    cell(f, r->err.lambda, "%10.2e");
    fputc(' ', f);
    cell(f, r->res_pos_max, "%10.2e");
    fprintf(f, " %8ld ", r->cnt.steps);
    cell(f, r->cpu_median, "%10.3e");
    fputc('\n', f);
    if (r->status != 0)
        fprintf(f, "    %s at t = %g: %s\n", mbs_status_code(r->status), r->fail_t, r->reason);
}

void mbs_record_print_long(const mbs_record *r, FILE *f)
{
    fprintf(f, "problem        %s (%s)\n", r->problem, r->problem_params);
    fprintf(f, "method         %s (%s)\n", r->method, r->method_params);
    if (isfinite(r->h))
        fprintf(f, "h              %g\n", r->h);
    else
        fprintf(f, "tol            %g\n", r->tol);
    fprintf(f, "t              [%g, %g]\n", r->t0, r->t_end);
    fprintf(f, "status         %s", mbs_status_code(r->status));
    if (r->status != 0)
        fprintf(f, " at t = %g: %s", r->fail_t, r->reason);
    fprintf(f, "\nreference      %s\n", r->ref_kind);
    if (r->status != MBS_OK) {
        /* a run declined at t0 never looked its reference up: no hint to compute one */
        fprintf(f, "err(t_end)     not measured (the run failed)\n");
    } else if (!r->have_ref) {
        /* no numbers to show: say why and how to get a reference, never "nan" */
        fprintf(f, "err            not measured: no exact solution and no stored reference for\n"
                   "               %s at t_end = %g (stored references match their exact\n"
                   "               parameters and t_end); compute one with\n"
                   "               mbsbench references -p %s --t-end %g\n",
                r->problem_spec, r->t_end, r->problem_spec, r->t_end);
    } else {
        char lam[48], lam_max[48]; /* no multipliers: "-", never "nan" */
        snprintf(lam, sizeof lam, isnan(r->err.lambda) ? "-" : "%.3e", r->err.lambda);
        snprintf(lam_max, sizeof lam_max, isnan(r->err_max.lambda) ? "-" : "%.3e",
                 r->err_max.lambda);
        fprintf(f, "err(t_end)     q %.3e  v %.3e  lambda %s\n", r->err.q, r->err.v, lam);
        if (isnan(r->err_max.q))
            fprintf(f, "err max        not measured (exact solutions only; a stored reference "
                       "holds t_end)\n");
        else
            fprintf(f, "err max        q %.3e  v %.3e  lambda %s\n", r->err_max.q,
                    r->err_max.v, lam_max);
        if (isfinite(r->scd))
            fprintf(f, "scd, mescd     %.2f, %.2f\n", r->scd, r->mescd);
    }
    if (r->traj.measured && r->traj.ift_ref[0]) {
        const char *cls = mbs_iftomm_class(r->traj.ift_rel);
        fprintf(f, "iftomm error   rel %.3e  abs %.3e  (%ld output times, reference %s; "
                   "class %s)\n",
                r->traj.ift_rel, r->traj.ift_abs, r->traj.n, r->traj.ift_ref,
                cls ? cls : "none");
    }
    fprintf(f, "residual max   pos %.3e  vel %.3e  acc %.3e\n", r->res_pos_max, r->res_vel_max,
            r->res_acc_max);
    fprintf(f, "residual end   pos %.3e  vel %.3e\n", r->res_pos_end, r->res_vel_end);
    if (isnan(r->energy_drift))
        fprintf(f, "energy drift   not measured (the problem defines no energy)\n");
    else
        fprintf(f, "energy drift   %.3e\n", r->energy_drift);
    if (isnan(r->drift_exponent) && r->status == MBS_OK)
        fprintf(f, "drift exponent not measured (fewer than 3 times with a nonzero constraint "
                   "residual)\n");
    else
        fprintf(f, "drift exponent %.3f (rms %.2f decades)\n", r->drift_exponent,
                r->drift_rms);
    const mbs_counters *c = &r->cnt;
    fprintf(f, "counters       steps %ld rejected %ld f %ld M %ld g %ld G %ld gamma %ld\n",
            c->steps, c->rejected, c->f_evals, c->mass_evals, c->g_evals, c->jac_evals,
            c->gamma_evals);
    fprintf(f, "               factorizations %ld solves %ld newton %ld jacobians %ld "
               "derivatives %ld\n",
            c->factorizations, c->solves, c->newton_iters, c->jacobians, c->deriv_evals);
    if (r->have_linsol)
        fprintf(f, "linsol         %s: analyses %ld factorizations %ld solves %ld n %zu nnz %zu "
                   "nnz_factor %zu fill %.3g rcond %.3e\n",
                mbs_linsol_name(r->linsol_kind), r->linsol.analyses, r->linsol.factorizations,
                r->linsol.solves, r->linsol.n, r->linsol.nnz, r->linsol.nnz_factor,
                r->linsol.fill, r->linsol.rcond);
    if (r->threads > 0)
        fprintf(f, "threads        %d\n", r->threads);
    fprintf(f, "cpu [s]        min %.4e median %.4e iqr %.2e (%d repeats)\n", r->cpu_min,
            r->cpu_median, r->cpu_iqr, r->cpu_repeats);
}
