/* The battery (battery.h): the data file, one pair's study and its
 * classification, results as JSON.  The runner and the tables are in
 * battery_run.c. */
#include "battery.h"
#include "env.h"

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <fnmatch.h>
#include <ini.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../problems/registry.h"
#include "fit.h"
#include "io.h"

/* ---- the data file ------------------------------------------------------------- */

typedef struct load_state {
    mbs_battery *b;
    char *err;
    size_t errlen;
    int failed;
    int last_check; /* the last key of [battery] was check: continuation lines add pairs */
} load_state;

static int load_fail(load_state *ls, const char *section, const char *name, const char *msg)
{
    if (!ls->failed)
        snprintf(ls->err, ls->errlen, "%s: [%s] %s: %s", ls->b->path, section, name, msg);
    ls->failed = 1;
    return 0;
}

static int parse_num(const char *v, double lo, double hi, double *out)
{
    char *e;
    double x = strtod(v, &e);
    while (*e == ' ' || *e == '\t')
        e++;
    if (e == v || *e || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

static mbs_battery_problem *find_problem(mbs_battery *b, const char *name)
{
    for (size_t i = 0; i < b->n_pb; i++)
        if (strcmp(b->pb[i].name, name) == 0)
            return &b->pb[i];
    return NULL;
}

static int add_check(load_state *ls, const char *value)
{
    char p[64], m[64], o[64], extra[2];
    int k = sscanf(value, "%63s %63s %63s %1s", p, m, o, extra);
    if (k != 3 || mbs_battery_outcome_from_name(o) < 0)
        return load_fail(ls, "battery", "check",
                         "expected \"PROBLEM METHOD OUTCOME\" on each line (outcome: pass, "
                         "expected, limited, declined or failed)");
    mbs_battery *b = ls->b;
    void *nc = realloc(b->check, (b->n_check + 1) * sizeof *b->check);
    if (!nc)
        return load_fail(ls, "battery", "check", "out of memory");
    b->check = nc;
    snprintf(b->check[b->n_check][0], 64, "%s", p);
    snprintf(b->check[b->n_check][1], 64, "%s", m);
    snprintf(b->check[b->n_check][2], 64, "%s", o);
    b->n_check++;
    return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    load_state *ls = user;
    mbs_battery *b = ls->b;
    if (ls->failed)
        return 0;
    if (strcmp(section, "battery") == 0) {
        double x;
        if (strcmp(name, "check") == 0)
            return add_check(ls, value);
        if (strcmp(name, "levels") == 0) {
            if (parse_num(value, 3, MBS_MAX_LEVELS, &x) || x != floor(x))
                return load_fail(ls, section, name, "an integer in [3, 40]");
            b->levels = (int)x;
        } else if (strcmp(name, "ratio") == 0 || strcmp(name, "tol_ratio") == 0) {
            if (parse_num(value, 1.0 + 1e-9, 100.0, &x))
                return load_fail(ls, section, name, "a number in (1, 100]");
            *(name[0] == 'r' ? &b->ratio : &b->tol_ratio) = x;
        } else if (strcmp(name, "max_decades") == 0) {
            if (parse_num(value, 1.0, 16.0, &x))
                return load_fail(ls, section, name, "decades in [1, 16]");
            b->max_decades = x;
        } else if (strcmp(name, "h0") == 0 || strcmp(name, "tol0") == 0) {
            if (parse_num(value, 1e-15, 1e3, &x))
                return load_fail(ls, section, name, "a number in [1e-15, 1000]");
            *(name[0] == 'h' ? &b->h0 : &b->tol0) = x;
        } else if (strncmp(name, "h0_factor ", 10) == 0) {
            const char *pat = name + 10;
            while (*pat == ' ')
                pat++;
            if (parse_num(value, 1e-3, 1e3, &x))
                return load_fail(ls, section, name, "a factor in [0.001, 1000]");
            if (b->n_factor >= MBS_BATTERY_MAX_OVERRIDES)
                return load_fail(ls, section, name, "too many h0_factor lines");
            snprintf(b->factor[b->n_factor].pattern, sizeof b->factor[0].pattern, "%s", pat);
            b->factor[b->n_factor++].factor = x;
        } else if (strcmp(name, "max_cpu") == 0 || strcmp(name, "max_wall") == 0) {
            if (parse_num(value, 1e-3, 1e6, &x))
                return load_fail(ls, section, name, "seconds in [0.001, 1e6]");
            *(strcmp(name, "max_cpu") == 0 ? &b->max_cpu : &b->max_wall) = x;
        } else {
            return load_fail(ls, section, name, "unknown key");
        }
        return 1;
    }
    if (strncmp(section, "problem ", 8) == 0) {
        const char *pname = section + 8;
        mbs_battery_problem *p = find_problem(b, pname);
        if (!p) {
            if (!mbs_problem_find(pname))
                return load_fail(ls, section, name, "not a registered problem");
            void *np = realloc(b->pb, (b->n_pb + 1) * sizeof *b->pb);
            if (!np)
                return load_fail(ls, section, name, "out of memory");
            b->pb = np;
            p = &b->pb[b->n_pb++];
            memset(p, 0, sizeof *p);
            snprintf(p->name, sizeof p->name, "%s", pname);
            p->h0 = p->tol0 = p->t_end = NAN;
        }
        if (strcmp(name, "t_end") == 0) {
            const mbs_problem_def *d = mbs_problem_find(pname);
            if (parse_num(value, 1e-15, 1e15, &p->t_end) || !(p->t_end > d->t0))
                return load_fail(ls, section, name, "a number above the problem's t0");
            return 1;
        }
        int adaptive = strncmp(name, "tol0", 4) == 0;
        if (!adaptive && strncmp(name, "h0", 2) != 0)
            return load_fail(ls, section, name, "unknown key (h0, tol0, h0 PATTERN, tol0 PATTERN, t_end)");
        const char *pat = name + (adaptive ? 4 : 2);
        double x;
        if (parse_num(value, 1e-15, 1e3, &x))
            return load_fail(ls, section, name, "a number in [1e-15, 1000]");
        if (*pat == '\0') {
            *(adaptive ? &p->tol0 : &p->h0) = x;
        } else if (*pat == ' ') {
            while (*pat == ' ')
                pat++;
            if (p->n_over >= MBS_BATTERY_MAX_OVERRIDES)
                return load_fail(ls, section, name, "too many method overrides");
            snprintf(p->over[p->n_over].pattern, sizeof p->over[0].pattern, "%s", pat);
            p->over[p->n_over].adaptive = adaptive;
            p->over[p->n_over].x0 = x;
            p->n_over++;
        } else {
            return load_fail(ls, section, name, "unknown key");
        }
        return 1;
    }
    if (strncmp(section, "expect ", 7) == 0) {
        mbs_battery_expect *e = b->n_ex ? &b->ex[b->n_ex - 1] : NULL;
        if (!e || strcmp(e->name, section + 7) != 0) {
            void *ne = realloc(b->ex, (b->n_ex + 1) * sizeof *b->ex);
            if (!ne)
                return load_fail(ls, section, name, "out of memory");
            b->ex = ne;
            e = &b->ex[b->n_ex++];
            memset(e, 0, sizeof *e);
            snprintf(e->name, sizeof e->name, "%s", section + 7);
            e->group = -1;
            e->order = NAN;
        }
        size_t u;
        if (strcmp(name, "methods") == 0 || strcmp(name, "problems") == 0 ||
            strcmp(name, "source") == 0) {
            char *dst = name[0] == 'm' ? e->methods : name[0] == 'p' ? e->problems : e->source;
            size_t cap = name[0] == 's' ? sizeof e->source : sizeof e->methods;
            u = strlen(dst);
            if (u + strlen(value) + 2 > cap)
                return load_fail(ls, section, name, "too long");
            snprintf(dst + u, cap - u, "%s%s", u ? " " : "", value);
        } else if (strcmp(name, "group") == 0) {
            e->group = !strcmp(value, "q") ? 0 : !strcmp(value, "v") ? 1
                                               : !strcmp(value, "lambda") ? 2 : -1;
            if (e->group < 0)
                return load_fail(ls, section, name, "q, v or lambda");
        } else if (strcmp(name, "order") == 0) {
            if (parse_num(value, 0.0, 20.0, &e->order))
                return load_fail(ls, section, name, "a number in [0, 20]");
        } else {
            return load_fail(ls, section, name, "unknown key");
        }
        return 1;
    }
    return load_fail(ls, section, name, "unknown section ([battery], [problem NAME], "
                                        "[expect NAME])");
}

void mbs_battery_free(mbs_battery *b)
{
    free(b->pb);
    free(b->ex);
    free(b->check);
    b->pb = NULL;
    b->ex = NULL;
    b->check = NULL;
    b->n_pb = b->n_ex = b->n_check = 0;
}

int mbs_battery_load(const char *path, mbs_battery *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    snprintf(b->path, sizeof b->path, "%s", path);
    b->levels = 5;
    b->ratio = 2.0;
    b->tol_ratio = 10.0;
    b->max_decades = 0.0; /* off unless the file sets it */
    b->max_cpu = 60.0;
    b->max_wall = 120.0;
    b->h0 = b->tol0 = NAN;
    load_state ls = {b, err, errlen, 0, 0};
    int line = ini_parse(path, handler, &ls);
    if (line < 0) {
        snprintf(err, errlen, "%s: cannot read", path);
        mbs_battery_free(b);
        return MBS_BAD_INPUT;
    }
    if (ls.failed || line > 0) {
        if (!ls.failed)
            snprintf(err, errlen, "%s:%d: not a key = value line", path, line);
        mbs_battery_free(b);
        return MBS_BAD_INPUT;
    }
    for (size_t i = 0; i < mbs_problem_count(); i++) {
        const mbs_problem_def *d = mbs_problem_at(i);
        if (mbs_problem_owner(i))
            continue; /* a plugin's */
        mbs_battery_problem *p = find_problem(b, d->name);
        if (!p && !isnan(b->h0) && !isnan(b->tol0)) {
            void *np = realloc(b->pb, (b->n_pb + 1) * sizeof *b->pb);
            if (np) {
                b->pb = np;
                p = &b->pb[b->n_pb++];
                memset(p, 0, sizeof *p);
                snprintf(p->name, sizeof p->name, "%s", d->name);
                p->h0 = b->h0;
                p->tol0 = b->tol0;
                p->t_end = NAN;
                p->defaulted = 1;
            }
        }
        if (!p || isnan(p->h0) || isnan(p->tol0)) {
            snprintf(err, errlen, "%s: [problem %s] with h0 and tol0 is missing (every "
                                  "built-in problem needs one)", path, d->name);
            mbs_battery_free(b);
            return MBS_BAD_INPUT;
        }
    }
    for (size_t i = 0; i < b->n_ex; i++) {
        const mbs_battery_expect *e = &b->ex[i];
        if (!*e->methods || !*e->problems || e->group < 0 || isnan(e->order) || !*e->source) {
            snprintf(err, errlen, "%s: [expect %s] needs methods, problems, group, order and "
                                  "source", path, e->name);
            mbs_battery_free(b);
            return MBS_BAD_INPUT;
        }
    }
    for (size_t i = 0; i < b->n_check; i++) {
        char mname[64];
        snprintf(mname, sizeof mname, "%.*s", (int)strcspn(b->check[i][1], ":"),
                 b->check[i][1]);
        if (find_problem(b, b->check[i][0]) && mbs_method_find(mname))
            continue;
        snprintf(err, errlen, "%s: check pair '%s %s': unknown problem or method", path,
                 b->check[i][0], b->check[i][1]);
        mbs_battery_free(b);
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

double mbs_battery_x0(const mbs_battery *b, const mbs_battery_problem *p, const char *method,
                      int adaptive)
{
    for (int i = 0; i < p->n_over; i++)
        if (p->over[i].adaptive == adaptive && fnmatch(p->over[i].pattern, method, 0) == 0)
            return p->over[i].x0;
    if (adaptive)
        return p->tol0;
    for (int i = 0; i < b->n_factor; i++)
        if (fnmatch(b->factor[i].pattern, method, 0) == 0)
            return b->factor[i].factor * p->h0;
    return p->h0;
}

double mbs_battery_ratio(const mbs_battery *b, const mbs_method_def *m)
{
    double p = fmax(m->order[0], fmax(m->order[1], m->order[2]));
    if ((m->flags & MBS_M_FIXED_STEP) == 0 || !(b->max_decades > 0.0) || !(p > 0.0) ||
        b->levels < 2)
        return (m->flags & MBS_M_FIXED_STEP) ? b->ratio : b->tol_ratio;
    double span = (double)(b->levels - 1) * p * log10(b->ratio);
    double k = ceil(span / b->max_decades - 1e-9);
    return k > 1.0 ? pow(b->ratio, 1.0 / k) : b->ratio;
}

/* ---- one pair ------------------------------------------------------------------ */

static int matches_any(const char *list, const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        if (fnmatch(t, name, 0) == 0)
            return 1;
    return 0;
}

/* Observed-order band: max(0.3, 10%) of the order (the width converge's fit
 * accepts for its confidence interval, fit.c). */
static double band(double p)
{
    return fmax(0.3, 0.1 * p);
}

static int expect_index(const mbs_battery *b, const char *problem, const char *method, int g)
{
    for (size_t i = 0; i < b->n_ex; i++)
        if (b->ex[i].group == g && matches_any(b->ex[i].methods, method) &&
            matches_any(b->ex[i].problems, problem))
            return (int)i;
    return -1;
}

/* A parameter of a method by name: its index, or -1. */
static int param_index(const mbs_method_def *m, const char *name)
{
    for (size_t i = 0; i < m->n_params; i++)
        if (strcmp(m->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The failed level again with one parameter changed (param NULL: none, at x
 * itself, e.g. another step): 1 ok, 0 failed again (its status and reason in
 * note), -1 not run. */
static int rerun_with(const mbs_run_spec *base, const char *param, double value, double x,
                      int adaptive, char *note, size_t notelen)
{
    char spec[256];
    snprintf(spec, sizeof spec, "%s%s%s=%g", base->method, strchr(base->method, ':') ? "," : ":",
             param ? param : "", value);
    mbs_run_spec rs = *base;
    rs.method = param ? spec : base->method;
    rs.h = adaptive ? NAN : x;
    rs.tol = adaptive ? x : NAN;
    mbs_record rec;
    char err[256];
    if (mbs_run(&rs, &rec, err, sizeof err) != MBS_OK)
        return -1;
    int ok = rec.status == MBS_OK;
    if (param)
        snprintf(note, notelen, "with %s=%g: %s%s%s", param, value, mbs_status_code(rec.status),
                 ok ? "" : ": ", ok ? "" : rec.reason);
    else
        snprintf(note, notelen, "at %s = %g: %s%s%s", adaptive ? "tol" : "h", x,
                 mbs_status_code(rec.status), ok ? "" : ": ", ok ? "" : rec.reason);
    mbs_record_free(&rec);
    return ok;
}

/* A singular_matrix failure that blames the mass matrix (or, DCA, a leaf: a body's
 * mass matrix), checked by the harness
 * itself: M(q0) of the problem (the definition's mass callback at t0) is not
 * positive definite when GSL's Cholesky factorization refuses it.  1 confirmed
 * (note says so), 0 M(q0) is positive definite, -1 not checkable. */
static int mass_not_pd(const char *problem, char *note, size_t notelen)
{
    mbs_problem pb;
    char err[256];
    if (mbs_problem_open(&pb, problem, err, sizeof err) != MBS_OK)
        return -1;
    int res = -1;
    double *y = calloc(pb.nq + pb.nv + pb.nl + 1, sizeof(double));
    gsl_matrix *M = pb.nv ? gsl_matrix_calloc(pb.nv, pb.nv) : NULL;
    int have_lambda = 0;
    if (y && M && pb.def->initial(&pb, y, y + pb.nq, y + pb.nq + pb.nv, &have_lambda) == 0 &&
        pb.def->mass(&pb, pb.t0, y, M) == 0) {
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        int st = gsl_linalg_cholesky_decomp1(M);
        gsl_set_error_handler(old);
        res = st != GSL_SUCCESS;
        if (res)
            snprintf(note, notelen, "M(q0) of the problem is not positive definite (GSL "
                                    "Cholesky refuses it): a method that needs M^-1 cannot run");
    }
    gsl_matrix_free(M);
    free(y);
    mbs_problem_close(&pb);
    return res;
}

/* The check of a failed level (docs/methods.md, "Battery").  Budgets are true by
 * construction.  A Newton or step-size failure of a method with newton_tol:
 * when the reason is an exhausted iteration count and the method has an
 * iteration limit (newton_maxit, newton_max), the level runs again with ten
 * times the limit: passing shows a slow but converging iteration, true as
 * stated ("slow").  Otherwise it runs again with the loosest newton_tol the
 * parameter allows: failing again confirms the failure; passing refutes it (the
 * iteration had stagnated above the tolerance: stagnation reported as
 * failure).  Anything else is unchecked. */
static void check_failure(const mbs_run_spec *base, const mbs_method_def *m, double x,
                          int adaptive, mbs_battery_result *r)
{
    int s = r->fail_status;
    if (s == MBS_TOO_MANY_STEPS || s == MBS_CPU_LIMIT || s == MBS_WALL_LIMIT) {
        snprintf(r->check, sizeof r->check, "budget");
        return;
    }
    /* the harness itself found the non-finite component, resp. measured the final
       configuration off the problem's branch (converge.h) */
    if (s == MBS_NAN_STATE || s == MBS_LEFT_BRANCH) {
        snprintf(r->check, sizeof r->check, "observed");
        return;
    }
    /* DCA's leaves are the bodies' mass matrices */
    if (s == MBS_SINGULAR_MATRIX &&
        (strstr(r->fail_reason, "mass matrix") || strstr(r->fail_reason, "singular leaf")) &&
        mass_not_pd(base->problem, r->check_note, sizeof r->check_note) == 1) {
        snprintf(r->check, sizeof r->check, "confirmed");
        return;
    }
    /* Radau IIA's fixed-step mode iterates Newton to round-off for as long as it
     * contracts, up to 50 iterations (the most nit allows), and reads neither kappa
     * nor a smaller nit: a rerun with them is the same run.  What can be checked is
     * whether the failure belongs to the step: the level again at h/2 and, failing
     * there, at h/4; converging confirms it (the simplified Newton iteration
     * contracts only for h small enough, Hairer and Wanner 1996 [hairer1996solving],
     * Sect. IV.8), failing at both leaves it unchecked. */
    if ((m->flags & MBS_M_FIXED_STEP) && param_index(m, "kappa") >= 0 &&
        param_index(m, "newton_tol") < 0 && s == MBS_NEWTON_DIVERGED) {
        char half[sizeof r->check_note], quarter[sizeof r->check_note];
        int ok = rerun_with(base, NULL, 0.0, 0.5 * x, adaptive, half, sizeof half);
        if (ok == 0) { /* once more at h/4 */
            ok = rerun_with(base, NULL, 0.0, 0.25 * x, adaptive, quarter, sizeof quarter);
            snprintf(r->check_note, sizeof r->check_note, "%.160s; %.150s", half, quarter);
        } else
            snprintf(r->check_note, sizeof r->check_note, "%s", half);
        snprintf(r->check, sizeof r->check, ok == 1 ? "confirmed" : "unchecked");
        return;
    }
    /* the Newton tolerance: newton_tol, or RADAU5's stopping factor kappa (FNEWT) */
    int kt = param_index(m, "newton_tol");
    if (kt < 0)
        kt = param_index(m, "kappa");
    if (kt < 0 || !(s == MBS_NEWTON_DIVERGED || s == MBS_STEP_UNDERFLOW ||
                    s == MBS_SINGULAR_MATRIX || s == MBS_ERROR_TEST)) {
        snprintf(r->check, sizeof r->check, "unchecked");
        return;
    }
    int ki = param_index(m, "newton_maxit");
    if (ki < 0)
        ki = param_index(m, "newton_max");
    if (ki < 0)
        ki = param_index(m, "nit"); /* RADAU5's NIT */
    int exhausted = strstr(r->fail_reason, "did not converge in") ||
                    strstr(r->fail_reason, "no convergence in");
    if (exhausted && ki >= 0) {
        const mbs_param_def *pd = &m->params[ki];
        int ok = rerun_with(base, pd->name, fmin(10.0 * pd->def, pd->max), x, adaptive,
                            r->check_note, sizeof r->check_note);
        if (ok == 1) {
            snprintf(r->check, sizeof r->check, "slow");
            return;
        }
    }
    const mbs_param_def *pd = &m->params[kt];
    int ok = rerun_with(base, pd->name, pd->max, x, adaptive, r->check_note,
                        sizeof r->check_note);
    snprintf(r->check, sizeof r->check, ok < 0 ? "unchecked" : ok ? "refuted" : "confirmed");
}

/* The measurements a pair's judgement needs (mbs_battery_judge): the fits, the
 * levels' errors and steps, the groups' magnitudes and which groups exist. */
static void record_groups(const mbs_converge *cv, mbs_battery_result *r)
{
    const mbs_record *r0 = &cv->rec[0];
    for (int i = 0; i < cv->levels; i++) {
        const mbs_record *ri = &cv->rec[i];
        r->steps[i] = ri->cnt.steps;
        if (ri->status == MBS_OK && !(ri->have_ref || cv->self_ref))
            r->err[i][0] = r->err[i][1] = r->err[i][2] = NAN; /* nothing measured */
    }
    for (int g = 0; g < 3; g++) {
        const mbs_order_fit *ft = &cv->fit[g];
        r->g[g].nominal = r0->order[g];
        r->g[g].p = ft->established ? ft->p : NAN;
        r->g[g].ci_low = ft->established ? ft->ci_low : NAN;
        r->g[g].ci_high = ft->established ? ft->ci_high : NAN;
        r->g[g].first = ft->established ? (int)ft->first + 1 : 0;
        r->g[g].last = ft->established ? (int)ft->last + 1 : 0;
        r->g[g].expect = -1;
        r->g[g].ymax = mbs_converge_group_ymax(cv, g);
        /* Adaptive methods: the multipliers are not error-controlled (left out of
         * the error test or weighted by h, Arnold 2016 [arnold2016dae] Sect. 4.2),
         * so their tolerance exponent is recorded but not judged. */
        /* Against a branch (converge.h) the multipliers are not measured. */
        r->g[g].present = (g < 2 || (r0->nl > 0 && !r->adaptive && !cv->branch)) &&
                          (r->adaptive || r0->order[g] > 0.0);
    }
}

/* Round-off level of group g's error at level i: eps (1 + max |y|) times the
 * steps taken (at least 1000): rounding of the state accumulates at most
 * linearly over the steps; errors below it carry no order information. */
static double roundoff_level(const mbs_battery_result *r, int i, int g)
{
    return mbs_roundoff_floor(r->g[g].ymax, r->steps[i]);
}

/* Level i of group g carries order information: it ran, its error is finite and
 * above the reference's stated accuracy and round-off. */
static int level_usable(const mbs_battery_result *r, int i, int g)
{
    double e = r->err[i][g];
    return r->status[i] == MBS_OK && isfinite(e) && e > 0.0 && !((r->ref_limited[i] >> g) & 1) &&
           e > roundoff_level(r, i, g);
}

/* Tolerance proportionality: an exponent within 0.3 of 1 and err/tol within a
 * factor 10 over the levels (recorded, not judged). */
static const double prop_band = 0.3, prop_spread = 10.0;

void mbs_battery_tol_exponent(mbs_battery_result *r, int g)
{
    double lx[MBS_MAX_LEVELS], ly[MBS_MAX_LEVELS];
    int n = 0;
    r->g[g].p = r->g[g].ci_low = r->g[g].ci_high = NAN;
    r->g[g].et_lo = r->g[g].et_hi = NAN;
    r->g[g].first = r->g[g].last = 0;
    r->g[g].proportional = 0;
    for (int i = 0; i < r->levels; i++) {
        if (!level_usable(r, i, g) || !(r->x[i] > 0.0))
            continue;
        double et = r->err[i][g] / r->x[i];
        r->g[g].et_lo = n ? fmin(r->g[g].et_lo, et) : et;
        r->g[g].et_hi = n ? fmax(r->g[g].et_hi, et) : et;
        if (!n)
            r->g[g].first = i + 1;
        r->g[g].last = i + 1;
        lx[n] = log(r->x[i]);
        ly[n++] = log(r->err[i][g]);
    }
    if (n < 3)
        return;
    double a, p, hw;
    mbs_fit_line(lx, ly, (size_t)n, &a, &p, &hw);
    r->g[g].p = p;
    r->g[g].ci_low = p - hw;
    r->g[g].ci_high = p + hw;
    r->g[g].proportional =
        fabs(p - 1.0) <= prop_band && r->g[g].et_hi <= prop_spread * r->g[g].et_lo;
}

/* An adaptive pair whose five levels all ran with step counts at most 1.1 times
 * apart: over tol0 .. tol0/1e4 an error-controlled method of order p needs
 * 10^(4/(p+1)) times more steps (2.8 for p = 8), so the step is set by
 * stability (explicit methods on a stiff problem) or a step limit. */
static int stability_bound(const mbs_battery_result *r)
{
    if (!r->adaptive || r->levels < 2)
        return 0;
    long lo = LONG_MAX, hi = 0;
    for (int i = 0; i < r->levels; i++) {
        if (r->status[i] != MBS_OK || r->steps[i] <= 0)
            return 0;
        lo = r->steps[i] < lo ? r->steps[i] : lo;
        hi = r->steps[i] > hi ? r->steps[i] : hi;
    }
    return (double)hi <= 1.1 * (double)lo;
}

void mbs_battery_judge(const mbs_battery *b, mbs_battery_result *r)
{
    r->stability_bound = stability_bound(r);
    for (int g = 0; g < 3; g++) {
        if (r->adaptive)
            mbs_battery_tol_exponent(r, g);
        else {
            r->g[g].et_lo = r->g[g].et_hi = NAN;
            r->g[g].proportional = 0;
        }
    }
    for (int g = 0; g < 3; g++) {
        int usable = 0, limited = 0, exact = 1;
        for (int i = 0; i < r->levels; i++) {
            double e = r->err[i][g];
            if (r->status[i] != MBS_OK || isnan(e))
                continue;
            int below = e <= roundoff_level(r, i, g);
            exact = exact && below;
            int lim = ((r->ref_limited[i] >> g) & 1) || below;
            limited |= lim;
            usable += !lim && isfinite(e);
        }
        r->g[g].usable = usable;
        int est = r->g[g].first > 0 && isfinite(r->g[g].p);
        mbs_battery_group_state st;
        if (!r->g[g].present || exact) {
            r->g[g].state = MBS_GRP_SKIP; /* no such group; exact to round-off */
            r->g[g].expect = -1;
            continue;
        }
        if (!est && limited && usable < 3) {
            r->g[g].state = MBS_GRP_LIMITED;
            r->g[g].expect = -1;
            continue;
        }
        double p = r->g[g].p, nom = r->g[g].nominal;
        /* Adaptive: convergence under tolerance refinement (docs/methods.md,
         * "Battery"); proportionality is recorded, not judged. */
        if (est && r->adaptive)
            st = p >= 0.5 && r->g[g].ci_low > 0.0 ? MBS_GRP_PASS : MBS_GRP_OFF;
        else if (est)
            st = p >= nom - band(nom) ? MBS_GRP_PASS : MBS_GRP_LOW;
        else
            st = MBS_GRP_NONE;
        /* Levels at or under the floors (reference accuracy, round-off) can
         * confirm an order but not refute it: a fit that misses with fewer
         * than three levels above them is limited, as the definition of
         * limited in docs/methods.md says (before: only when no order was
         * established at all). */
        if (st != MBS_GRP_PASS && limited && usable < 3)
            st = MBS_GRP_LIMITED;
        if (r->stability_bound && st != MBS_GRP_PASS)
            st = MBS_GRP_LIMITED;
        r->g[g].expect = -1;
        if (st != MBS_GRP_PASS && st != MBS_GRP_LIMITED) {
            int k = expect_index(b, r->problem, r->method, g);
            if (k >= 0) {
                double o = b->ex[k].order;
                int hit = o == 0.0 ? (!est || p < 0.5) : est && fabs(p - o) <= band(o);
                if (hit) {
                    st = MBS_GRP_EXPECTED;
                    r->g[g].expect = k;
                }
            }
        }
        r->g[g].state = st;
    }
    if (r->outcome == MBS_BAT_DECLINED)
        return;
    if (r->fail_level) {
        r->outcome = strcmp(r->check, "refuted") == 0 || r->fail_status == MBS_WORKER_CRASHED
                         ? MBS_BAT_FINDING
                         : MBS_BAT_FAILED;
        return;
    }
    r->outcome = MBS_BAT_PASS;
    int judged = 0;
    for (int g = 0; g < 3; g++)
        judged += r->g[g].state != MBS_GRP_SKIP;
    if (!judged) /* every error at round-off: nothing to establish (a solution at rest) */
        r->outcome = MBS_BAT_LIMITED;
    for (int g = 0; g < 3; g++) {
        mbs_battery_group_state s = r->g[g].state;
        if (s == MBS_GRP_LOW || s == MBS_GRP_OFF || s == MBS_GRP_NONE)
            r->outcome = MBS_BAT_FINDING;
        else if (s == MBS_GRP_LIMITED && r->outcome != MBS_BAT_FINDING)
            r->outcome = MBS_BAT_LIMITED;
        else if (s == MBS_GRP_EXPECTED && r->outcome == MBS_BAT_PASS)
            r->outcome = MBS_BAT_EXPECTED;
    }
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mbs_battery_pair(const mbs_battery *b, const char *problem, const char *method,
                     mbs_battery_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    snprintf(r->problem, sizeof r->problem, "%s", problem);
    snprintf(r->method, sizeof r->method, "%s", method);
    r->ref_digits = r->t_end = NAN;
    const mbs_battery_problem *bp = NULL;
    for (size_t i = 0; i < b->n_pb && !bp; i++)
        if (strcmp(b->pb[i].name, problem) == 0)
            bp = &b->pb[i];
    char mname[64];
    snprintf(mname, sizeof mname, "%.*s", (int)strcspn(method, ":"), method);
    const mbs_method_def *m = mbs_method_find(mname);
    if (!bp || !m) {
        snprintf(err, errlen, "battery: %s '%s' is not in %s", bp ? "method" : "problem",
                 bp ? method : problem, b->path);
        return MBS_BAD_INPUT;
    }
    double t0 = wall_now();
    r->adaptive = !(m->flags & MBS_M_FIXED_STEP);
    r->x0 = mbs_battery_x0(b, bp, mname, r->adaptive);
    r->t_end = bp->t_end;
    mbs_run_spec base = {.problem = problem, .method = method, .t_end = bp->t_end, .repeat = 0,
                         .measure = 1, .max_cpu = b->max_cpu, .max_wall = b->max_wall};
    mbs_converge *cv = malloc(sizeof *cv);
    if (!cv) {
        snprintf(err, errlen, "battery: out of memory");
        return MBS_BAD_INPUT;
    }
    if (mbs_converge_run(&base, r->x0, b->levels, mbs_battery_ratio(b, m), cv,
                         err, errlen) != MBS_OK) {
        free(cv);
        return MBS_BAD_INPUT;
    }
    r->levels = cv->levels;
    r->self_ref = cv->self_ref;
    r->branch = cv->branch;
    r->ref_digits = cv->ref_digits;
    for (int i = 0; i < cv->levels; i++) {
        const mbs_record *ri = &cv->rec[i];
        r->x[i] = cv->x[i];
        r->status[i] = ri->status;
        r->err[i][0] = ri->err.q;
        r->err[i][1] = ri->err.v;
        r->err[i][2] = ri->err.lambda;
        r->ref_limited[i] = (unsigned char)(cv->ref_limited[i][0] | cv->ref_limited[i][1] << 1 |
                                            cv->ref_limited[i][2] << 2);
        if (ri->status != MBS_OK && !r->fail_level) {
            r->fail_level = i + 1;
            r->fail_status = ri->status;
            snprintf(r->fail_reason, sizeof r->fail_reason, "%s", ri->reason);
        }
    }
    record_groups(cv, r);
    if (cv->declined)
        r->outcome = MBS_BAT_DECLINED;
    else if (r->fail_level)
        check_failure(&base, m, r->x[r->fail_level - 1], r->adaptive, r);
    mbs_battery_judge(b, r);
    mbs_converge_free(cv);
    free(cv);
    r->wall = wall_now() - t0;
    snprintf(r->revision, sizeof r->revision, "%s", mbs_git_revision());
    return MBS_OK;
}

/* ---- names and JSON ------------------------------------------------------------- */

static int lookup(const char *const *names, int n, const char *s);

static const char *const outcome_names[] = {"pass",     "expected", "limited",
                                            "declined", "failed",   "finding"};
static const char *const group_names[] = {"skip", "pass", "expected", "limited",
                                          "low",  "off",  "none"};
static const char *const gname[3] = {"q", "v", "lambda"};

const char *mbs_battery_outcome_name(mbs_battery_outcome o)
{
    return o <= MBS_BAT_FINDING ? outcome_names[o] : "?";
}

int mbs_battery_outcome_from_name(const char *name)
{
    return lookup(outcome_names, 6, name);
}

int mbs_battery_ok(const mbs_battery_result *r)
{
    return r->outcome != MBS_BAT_FINDING;
}

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static double get_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int status_from_code(const char *code)
{
#define MBS_STATUS(name, value, c, message)                                               \
    if (strcmp(code, c) == 0)                                                              \
        return value;
#include "../core/status.def"
#undef MBS_STATUS
    return MBS_LIBRARY_FAILURE;
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

char *mbs_battery_result_json(const mbs_battery_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "problem", json_string(r->problem));
    json_object_set_new(o, "method", json_string(r->method));
    json_object_set_new(o, "adaptive", json_boolean(r->adaptive));
    json_object_set_new(o, "x0", num(r->x0));
    if (isfinite(r->t_end))
        json_object_set_new(o, "t_end", num(r->t_end));
    json_object_set_new(o, "outcome", json_string(mbs_battery_outcome_name(r->outcome)));
    json_t *groups = json_object();
    for (int g = 0; g < 3; g++)
        json_object_set_new(
            groups, gname[g],
            json_pack("{s:s,s:o,s:o,s:o,s:o,s:i,s:i,s:i,s:i,s:b,s:o,s:o,s:o,s:b}", "state",
                      group_names[r->g[g].state], "p", num(r->g[g].p), "ci_low",
                      num(r->g[g].ci_low), "ci_high", num(r->g[g].ci_high), "nominal",
                      num(r->g[g].nominal), "first", r->g[g].first, "last", r->g[g].last,
                      "usable", r->g[g].usable, "expect", r->g[g].expect, "present",
                      r->g[g].present, "ymax", num(r->g[g].ymax), "err_tol_lo",
                      num(r->g[g].et_lo), "err_tol_hi", num(r->g[g].et_hi), "proportional",
                      r->g[g].proportional));
    json_object_set_new(o, "groups", groups);
    json_t *lv = json_array();
    for (int i = 0; i < r->levels; i++)
        json_array_append_new(lv, json_pack("{s:o,s:s,s:[o,o,o],s:i,s:I}", "x", num(r->x[i]),
                                            "status", mbs_status_code(r->status[i]), "err",
                                            num(r->err[i][0]), num(r->err[i][1]),
                                            num(r->err[i][2]), "ref_limited",
                                            (int)r->ref_limited[i], "steps",
                                            (json_int_t)r->steps[i]));
    json_object_set_new(o, "levels", lv);
    if (r->fail_level)
        json_object_set_new(o, "fail",
                            json_pack("{s:i,s:s,s:s,s:s,s:s}", "level", r->fail_level, "status",
                                      mbs_status_code(r->fail_status), "reason", r->fail_reason,
                                      "check", r->check, "note", r->check_note));
    json_object_set_new(o, "ref_digits", num(r->ref_digits));
    json_object_set_new(o, "self_ref", json_boolean(r->self_ref));
    json_object_set_new(o, "branch", json_boolean(r->branch));
    json_object_set_new(o, "wall", num(r->wall));
    if (r->revision[0])
        json_object_set_new(o, "revision", json_string(r->revision));
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

int mbs_battery_result_parse(const char *line, mbs_battery_result *r)
{
    memset(r, 0, sizeof *r);
    json_t *o = json_loads(line, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    const char *p = json_string_value(json_object_get(o, "problem"));
    const char *m = json_string_value(json_object_get(o, "method"));
    int oc = lookup(outcome_names, 6, json_string_value(json_object_get(o, "outcome")));
    const json_t *groups = json_object_get(o, "groups"), *lv = json_object_get(o, "levels");
    if (!p || !m || oc < 0 || !json_is_object(groups) || !json_is_array(lv) ||
        json_array_size(lv) > MBS_MAX_LEVELS) {
        json_decref(o);
        return -1;
    }
    snprintf(r->problem, sizeof r->problem, "%s", p);
    snprintf(r->method, sizeof r->method, "%s", m);
    r->outcome = (mbs_battery_outcome)oc;
    r->adaptive = json_is_true(json_object_get(o, "adaptive"));
    r->x0 = get_num(o, "x0");
    r->t_end = get_num(o, "t_end");
    for (int g = 0; g < 3; g++) {
        const json_t *gj = json_object_get(groups, gname[g]);
        int st = lookup(group_names, 7, json_string_value(json_object_get(gj, "state")));
        r->g[g].state = st < 0 ? MBS_GRP_SKIP : (mbs_battery_group_state)st;
        r->g[g].p = get_num(gj, "p");
        r->g[g].ci_low = get_num(gj, "ci_low");
        r->g[g].ci_high = get_num(gj, "ci_high");
        r->g[g].nominal = get_num(gj, "nominal");
        r->g[g].first = (int)json_integer_value(json_object_get(gj, "first"));
        r->g[g].last = (int)json_integer_value(json_object_get(gj, "last"));
        r->g[g].usable = (int)json_integer_value(json_object_get(gj, "usable"));
        r->g[g].expect = (int)json_integer_value(json_object_get(gj, "expect"));
        const json_t *pr = json_object_get(gj, "present");
        r->g[g].present = json_is_boolean(pr) ? json_is_true(pr) : r->g[g].state != MBS_GRP_SKIP;
        r->g[g].ymax = get_num(gj, "ymax");
        if (isnan(r->g[g].ymax))
            r->g[g].ymax = 0.0;
    }
    r->levels = (int)json_array_size(lv);
    for (int i = 0; i < r->levels; i++) {
        const json_t *l = json_array_get(lv, (size_t)i);
        r->x[i] = get_num(l, "x");
        const char *sc = json_string_value(json_object_get(l, "status"));
        r->status[i] = sc ? status_from_code(sc) : MBS_OK;
        const json_t *e = json_object_get(l, "err");
        for (int g = 0; g < 3; g++) {
            const json_t *v = json_array_get(e, (size_t)g);
            r->err[i][g] = json_is_number(v) ? json_number_value(v) : NAN;
        }
        r->ref_limited[i] = (unsigned char)json_integer_value(json_object_get(l, "ref_limited"));
        r->steps[i] = (long)json_integer_value(json_object_get(l, "steps"));
    }
    const json_t *f = json_object_get(o, "fail");
    if (json_is_object(f)) {
        r->fail_level = (int)json_integer_value(json_object_get(f, "level"));
        const char *sc = json_string_value(json_object_get(f, "status"));
        r->fail_status = sc ? status_from_code(sc) : MBS_OK;
        const char *s;
        if ((s = json_string_value(json_object_get(f, "reason"))))
            snprintf(r->fail_reason, sizeof r->fail_reason, "%s", s);
        if ((s = json_string_value(json_object_get(f, "check"))))
            snprintf(r->check, sizeof r->check, "%s", s);
        if ((s = json_string_value(json_object_get(f, "note"))))
            snprintf(r->check_note, sizeof r->check_note, "%s", s);
    }
    r->ref_digits = get_num(o, "ref_digits");
    r->self_ref = json_is_true(json_object_get(o, "self_ref"));
    r->branch = json_is_true(json_object_get(o, "branch"));
    r->wall = get_num(o, "wall");
    const char *rev = json_string_value(json_object_get(o, "revision"));
    if (rev)
        snprintf(r->revision, sizeof r->revision, "%s", rev);
    json_decref(o);
    return 0;
}
