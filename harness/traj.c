/* Errors along the trajectory (traj.h). */
#include "traj.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/formulations/index1.h"
#include "io.h"
#include "reference.h"

enum { KIND_GRID = 1, KIND_DENSE = 2, KIND_HERMITE = 4 };
enum { GROUPS = 3 };

/* An accepted step at one end of the interval around a grid time, with what
 * the interpolation needs there, computed when first needed (have_*: 1 done,
 * 0 not yet, -1 not available). */
typedef struct traj_end {
    double t;
    double *y;    /* q | v | lambda (| x) */
    double *qd;   /* H(q) v */
    double *vd;   /* v': the method's, else that of the index-1 system */
    double *lam1; /* multipliers of the index-1 system at (t, q, v) */
    int have_qd, have_vd, have_lam1;
} traj_end;

struct mbs_traj {
    const mbs_problem *pb;
    mbs_ctx ctx;  /* the measurement's own: H(q), index-1 solves, counted apart */
    mbs_index1 *ix;
    int ix_state; /* 0 not tried, 1 available, -1 not available */
    size_t nq, nv, nl, ny;
    long steps, next;
    double t_end;
    int kinds, started, broken;
    traj_end a, b;  /* the previous and the last accepted step */
    double *yk;     /* the state at the current grid time */
    double *ref;    /* the reference there (exact) */
    double *vd1, *lamk; /* scratch of the index-1 solve at a grid time */
    int ref_kind;   /* 0 none, 1 exact, 2 stored */
    double *ref_rows;
    char reason[256];
    double emax[GROUPS], esum[GROUPS];
    double *rows;   /* (steps + 1) x ny when kept for the CSV file */
    size_t nrep;    /* reported quantities */
    int ift_kind;   /* reference of them: 0 none, 1 exact, 2 reduction, 3 stored */
    double *rep, *rep_ref;
    double ift_abs, ift_rel;
};

const char *mbs_iftomm_class(double err_rel)
{
    if (err_rel <= MBS_IFTOMM_HIGH)
        return "high";
    if (err_rel <= MBS_IFTOMM_LOW)
        return "low";
    return NULL;
}

double mbs_iftomm_rel(double x, double x_ref)
{
    return fabs(x - x_ref) / fmax(fabs(x_ref), MBS_IFTOMM_FLOOR);
}

long mbs_traj_steps(const mbs_problem *pb, long override)
{
    if (override > 0)
        return override;
    return pb->def->output_steps > 0 ? pb->def->output_steps : MBS_OUTPUT_STEPS;
}

double mbs_traj_time(double t0, double t_end, long steps, long k)
{
    return k >= steps ? t_end : t0 + (t_end - t0) * (double)k / (double)steps;
}

double mbs_hermite3(double ya, double dya, double yb, double dyb, double h, double theta)
{
    double s = theta, r = 1.0 - s;
    return r * r * ((1.0 + 2.0 * s) * ya + s * h * dya) + s * s * ((3.0 - 2.0 * s) * yb - r * h * dyb);
}

static void end_free(traj_end *e)
{
    free(e->y);
    free(e->qd);
    free(e->vd);
    free(e->lam1);
}

static int end_alloc(traj_end *e, const mbs_traj *tr)
{
    e->y = malloc(tr->ny * sizeof(double));
    e->qd = malloc(tr->nq * sizeof(double));
    e->vd = malloc(tr->nv * sizeof(double));
    e->lam1 = malloc((tr->nl ? tr->nl : 1) * sizeof(double));
    return e->y && e->qd && e->vd && e->lam1;
}

void mbs_traj_free(mbs_traj *tr)
{
    if (!tr)
        return;
    mbs_index1_free(tr->ix);
    mbs_ctx_free(&tr->ctx);
    end_free(&tr->a);
    end_free(&tr->b);
    free(tr->yk);
    free(tr->ref);
    free(tr->vd1);
    free(tr->lamk);
    free(tr->ref_rows);
    free(tr->rows);
    free(tr->rep);
    free(tr->rep_ref);
    free(tr);
}

/* The reference: the exact solution, a stored trajectory, or none with why. */
static int find_reference(mbs_traj *tr)
{
    const mbs_problem *pb = tr->pb;
    if (pb->def->exact) {
        tr->ref_kind = 1;
        return MBS_OK;
    }
    tr->ref_rows = malloc((size_t)(tr->steps + 1) * tr->ny * sizeof(double));
    if (!tr->ref_rows)
        return MBS_NO_MEMORY;
    double horizon = NAN;
    char prov[1024] = "";
    int r = mbs_reference_traj_find(pb, tr->t_end, tr->steps, tr->ref_rows, &horizon, prov,
                                    sizeof prov);
    if (r == MBS_REFTRAJ_ROWS) {
        tr->ref_kind = 2;
        return MBS_OK;
    }
    free(tr->ref_rows);
    tr->ref_rows = NULL;
    if (r == MBS_REFTRAJ_HORIZON) {
        /* the two computations ("A tol=.. (..) vs B tol=.. (..) part at ..."),
         * without their parenthesised details and the agreement figures */
        char who[100];
        size_t m = 0;
        int depth = 0;
        const char *end = strstr(prov, " part at");
        for (const char *c = prov; *c && c != end && m + 1 < sizeof who; c++) {
            depth += *c == '(';
            if (!depth && !(*c == ' ' && c[1] == '('))
                who[m++] = *c;
            depth -= *c == ')' && depth > 0;
        }
        who[m] = '\0';
        snprintf(tr->reason, sizeof tr->reason,
                 "beyond the predictability horizon: two tight reference computations part at "
                 "t = %.6g (problems/ref/%s.traj: %s)",
                 horizon, pb->def->name, who);
    } else
        snprintf(tr->reason, sizeof tr->reason,
                 "no stored reference trajectory for these parameters, t_end = %g and %ld "
                 "output steps (mbsbench reference --trajectory computes one)",
                 tr->t_end, tr->steps);
    return MBS_OK;
}

int mbs_traj_init(mbs_traj **out, const mbs_problem *pb, long steps, int keep_rows)
{
    *out = NULL;
    mbs_traj *tr = calloc(1, sizeof *tr);
    if (!tr)
        return MBS_NO_MEMORY;
    tr->pb = pb;
    tr->nq = pb->nq;
    tr->nv = pb->nv;
    tr->nl = pb->nl;
    tr->ny = mbs_ny(pb);
    tr->steps = steps;
    tr->t_end = pb->t_end;
    int ok = mbs_ctx_init(&tr->ctx, pb) == MBS_OK;
    if (ok)
        mbs_ctx_reset(&tr->ctx);
    ok = ok && end_alloc(&tr->a, tr) && end_alloc(&tr->b, tr);
    ok = ok && (tr->yk = malloc(tr->ny * sizeof(double))) &&
         (tr->ref = malloc(tr->ny * sizeof(double))) &&
         (tr->vd1 = malloc(tr->nv * sizeof(double))) &&
         (tr->lamk = malloc((tr->nl ? tr->nl : 1) * sizeof(double)));
    if (ok && keep_rows)
        ok = (tr->rows = malloc((size_t)(steps + 1) * tr->ny * sizeof(double))) != NULL;
    tr->nrep = pb->def->reported ? pb->n_reported : 0;
    if (ok && tr->nrep > 0)
        ok = (tr->rep = malloc(tr->nrep * sizeof(double))) &&
             (tr->rep_ref = malloc(tr->nrep * sizeof(double)));
    if (!ok || find_reference(tr) != MBS_OK) {
        mbs_traj_free(tr);
        return MBS_NO_MEMORY;
    }
    if (tr->nrep > 0)
        tr->ift_kind = tr->ref_kind == 1                 ? 1
                       : pb->def->reported_reference     ? 2
                       : tr->ref_kind == 2               ? 3
                                                         : 0;
    *out = tr;
    return MBS_OK;
}

/* The IFToMM error at grid time tk (traj.h): the reported quantities of yk
 * against those of the reference (ref: the reference state, or NULL). */
static int score_iftomm(mbs_traj *tr, double tk, const double *yk, const double *ref)
{
    const mbs_problem *pb = tr->pb;
    size_t nq = tr->nq;
    if (tr->ift_kind == 0)
        return MBS_OK;
    int st = tr->ift_kind == 2 ? pb->def->reported_reference(pb, tk, tr->rep_ref)
                               : pb->def->reported(pb, tk, ref, ref + nq, tr->rep_ref);
    if (st == MBS_OK)
        st = pb->def->reported(pb, tk, yk, yk + nq, tr->rep);
    if (st != MBS_OK) {
        tr->ift_kind = 0; /* not measured; the state errors stand */
        return MBS_OK;
    }
    for (size_t j = 0; j < tr->nrep; j++) {
        double a = fabs(tr->rep[j] - tr->rep_ref[j]), r = mbs_iftomm_rel(tr->rep[j], tr->rep_ref[j]);
        if (a > tr->ift_abs || isnan(a))
            tr->ift_abs = isnan(tr->ift_abs) ? tr->ift_abs : a;
        if (r > tr->ift_rel || isnan(r))
            tr->ift_rel = isnan(tr->ift_rel) ? tr->ift_rel : r;
    }
    return MBS_OK;
}

/* The index-1 system ([arnold2016dae] Eq. (17)) on the measurement's own context:
 * not for extended problems (their plain callbacks need not describe the
 * system) nor redundant constraints (singular KKT matrix).  Large sparse
 * problems (n_v + n_l > 2000, chain N >= 667) use CHOLMOD: it refactors into
 * the factor it keeps, where UMFPACK allocates its numeric object anew for
 * every factorisation (at chain N = 1e4 a 6.7 MB block, above glibc's mmap
 * threshold, so fresh pages at every output point: 1.6e5 page faults and 6.5 s
 * of CPU for 100 output points, against 0.1 s for the integration). */
static int index1_ready(mbs_traj *tr)
{
    if (tr->ix_state == 0) {
        const mbs_problem *pb = tr->pb;
        int sparse = (pb->flags & MBS_PB_SPARSE) && pb->def->mass_sparse &&
                     pb->def->jacobian_sparse && !pb->def->kinematic;
        int linsol = !sparse                   ? MBS_LINSOL_LU
                     : pb->nv + pb->nl > 2000 ? MBS_LINSOL_CHOLMOD
                                              : MBS_LINSOL_UMFPACK;
        tr->ix_state = !(pb->flags & MBS_PB_EXTENDED) &&
                               mbs_index1_alloc(&tr->ix, &tr->ctx, linsol) ==
                                   MBS_OK
                           ? 1
                           : -1;
        tr->ctx.reason[0] = '\0';
    }
    return tr->ix_state > 0;
}

/* v' and lambda1 at (t, q, v) from the index-1 system; 0 on success. */
static int index1_at(mbs_traj *tr, double t, const double *y, double *vd, double *lam)
{
    if (!index1_ready(tr))
        return -1;
    int s = mbs_index1_accel(tr->ix, &tr->ctx, t, y, y + tr->nq, vd, lam);
    tr->ctx.reason[0] = '\0';
    return s == MBS_OK ? 0 : -1;
}

static void end_qd(mbs_traj *tr, traj_end *e)
{
    if (e->have_qd == 0) {
        e->have_qd = mbs_qdot(&tr->ctx, e->y, e->y + tr->nq, e->qd) == MBS_OK ? 1 : -1;
        tr->ctx.reason[0] = '\0';
    }
}

/* The index-1 multipliers at the end, and v' there when the method gave none. */
static void end_index1(mbs_traj *tr, traj_end *e)
{
    if (e->have_lam1 != 0)
        return;
    e->have_lam1 = index1_at(tr, e->t, e->y, tr->vd1, e->lam1) == 0 ? 1 : -1;
    if (e->have_lam1 > 0 && e->have_vd <= 0) {
        memcpy(e->vd, tr->vd1, tr->nv * sizeof(double));
        e->have_vd = 1;
    }
}

static void lambda_between(mbs_traj *tr, double tk, double *yk);

/* Interpolation between the steps a and b at tk (traj.h, "hermite"). */
static void hermite(mbs_traj *tr, double tk, double *yk)
{
    traj_end *a = &tr->a, *b = &tr->b;
    size_t nq = tr->nq, nv = tr->nv, nl = tr->nl;
    double h = b->t - a->t, th = (tk - a->t) / h;
    end_qd(tr, a);
    end_qd(tr, b);
    if (nl > 0 || a->have_vd <= 0 || b->have_vd <= 0) {
        end_index1(tr, a);
        end_index1(tr, b);
    }
    int qd = a->have_qd > 0 && b->have_qd > 0, vd = a->have_vd > 0 && b->have_vd > 0;
    for (size_t i = 0; i < nq; i++)
        yk[i] = qd ? mbs_hermite3(a->y[i], a->qd[i], b->y[i], b->qd[i], h, th)
                   : (1.0 - th) * a->y[i] + th * b->y[i];
    for (size_t i = 0; i < nv; i++)
        yk[nq + i] = vd ? mbs_hermite3(a->y[nq + i], a->vd[i], b->y[nq + i], b->vd[i], h, th)
                        : (1.0 - th) * a->y[nq + i] + th * b->y[nq + i];
    lambda_between(tr, tk, yk);
}

/* lambda (and x) at tk for the (q, v) in yk (traj.h, "hermite"): the index-1
 * multipliers of (tk, q, v) plus the method's defect lambda_n - lambda1_n,
 * linear between the steps; else linear. */
static void lambda_between(mbs_traj *tr, double tk, double *yk)
{
    traj_end *a = &tr->a, *b = &tr->b;
    size_t nq = tr->nq, nv = tr->nv, nl = tr->nl, ny = tr->ny;
    double th = (tk - a->t) / (b->t - a->t);
    if (nl > 0) {
        end_index1(tr, a);
        end_index1(tr, b);
    }
    int defect = nl > 0 && a->have_lam1 > 0 && b->have_lam1 > 0 &&
                 index1_at(tr, tk, yk, tr->vd1, tr->lamk) == 0;
    for (size_t i = nq + nv; i < ny; i++) {
        size_t j = i - nq - nv;
        if (defect && j < nl)
            yk[i] = tr->lamk[j] + (1.0 - th) * (a->y[i] - a->lam1[j]) +
                    th * (b->y[i] - b->lam1[j]);
        else
            yk[i] = (1.0 - th) * a->y[i] + th * b->y[i];
    }
}

/* max_i |y_i - r_i| / (1 + |r_i|); NaN propagates. */
static double mixed(const double *y, const double *r, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(y[i] - r[i]) / (1.0 + fabs(r[i]));
        if (d > m || isnan(d))
            m = d;
    }
    return m;
}

/* Keep and score the state yk at grid time k. */
static int score(mbs_traj *tr, long k, double tk, const double *yk)
{
    const mbs_problem *pb = tr->pb;
    size_t nq = tr->nq, nv = tr->nv;
    if (tr->rows)
        memcpy(tr->rows + (size_t)k * tr->ny, yk, tr->ny * sizeof(double));
    const double *ref = NULL;
    if (tr->ref_kind == 1) {
        if (pb->def->exact(pb, tk, tr->ref, tr->ref + nq, tr->ref + nq + nv) != MBS_OK) {
            tr->broken = 1;
            return MBS_CALLBACK_FAILED;
        }
        ref = tr->ref;
    } else if (tr->ref_kind == 2) {
        ref = tr->ref_rows + (size_t)k * tr->ny;
    }
    score_iftomm(tr, tk, yk, ref);
    if (!ref)
        return MBS_OK;
    size_t off[GROUPS] = {0, nq, nq + nv}, len[GROUPS] = {nq, nv, tr->nl};
    for (int g = 0; g < GROUPS; g++) {
        double e = mixed(yk + off[g], ref + off[g], len[g]);
        if (e > tr->emax[g] || isnan(e))
            tr->emax[g] = isnan(tr->emax[g]) ? tr->emax[g] : e;
        tr->esum[g] += e * e;
    }
    return MBS_OK;
}

int mbs_traj_step(mbs_traj *tr, const mbs_ctx *mctx, double t, const double *y,
                  const double *vdot)
{
    if (tr->broken || tr->next > tr->steps)
        return MBS_OK;
    if (tr->started && !(t > tr->b.t))
        return MBS_OK; /* no progress: nothing between the steps */
    /* the last step becomes the previous one; the new one is b */
    traj_end tmp = tr->a;
    tr->a = tr->b;
    tr->b = tmp;
    traj_end *b = &tr->b;
    b->t = t;
    memcpy(b->y, y, tr->ny * sizeof(double));
    b->have_qd = b->have_lam1 = 0;
    b->have_vd = vdot ? 1 : 0;
    if (vdot)
        memcpy(b->vd, vdot, tr->nv * sizeof(double));
    const mbs_problem *pb = tr->pb;
    while (tr->next <= tr->steps) {
        double tk = mbs_traj_time(pb->t0, tr->t_end, tr->steps, tr->next);
        double tol = 64.0 * DBL_EPSILON * fmax(fabs(tk), fabs(t));
        if (tk > t + tol)
            break;
        int kind, dr;
        if (fabs(tk - t) <= tol) {
            memcpy(tr->yk, y, tr->ny * sizeof(double));
            kind = KIND_GRID;
        } else if (!tr->started) {
            tr->broken = 1; /* the first call was not at t0 */
            return MBS_OK;
        } else if (mctx && mctx->dense &&
                   (dr = mctx->dense(mctx->dense_data, tk, tr->yk)) >= 0) {
            if (dr == MBS_DENSE_QV)
                lambda_between(tr, tk, tr->yk);
            kind = KIND_DENSE;
        } else {
            hermite(tr, tk, tr->yk);
            kind = KIND_HERMITE;
        }
        tr->kinds |= kind;
        if (score(tr, tr->next, tk, tr->yk) != MBS_OK)
            return MBS_OK; /* broken: no measure, the run goes on */
        tr->next++;
    }
    tr->started = 1;
    return MBS_OK;
}

void mbs_traj_result(const mbs_traj *tr, mbs_traj_rec *out)
{
    memset(out, 0, sizeof *out);
    out->err_max = out->err_rms = out->digits = (mbs_err3){NAN, NAN, NAN};
    out->ift_abs = out->ift_rel = NAN;
    if (!tr || tr->broken || tr->next != tr->steps + 1)
        return;
    out->measured = 1;
    out->n = tr->steps + 1;
    snprintf(out->interp, sizeof out->interp, "%s",
             tr->kinds & KIND_HERMITE ? "hermite" : tr->kinds & KIND_DENSE ? "dense" : "grid");
    snprintf(out->reference, sizeof out->reference, "%s",
             tr->ref_kind == 1 ? "exact" : tr->ref_kind == 2 ? "stored" : "none");
    snprintf(out->reason, sizeof out->reason, "%s", tr->reason);
    static const char *const ift_names[] = {"", "exact", "reduction", "stored"};
    snprintf(out->ift_ref, sizeof out->ift_ref, "%s", ift_names[tr->ift_kind]);
    out->ift_abs = tr->ift_kind ? tr->ift_abs : NAN;
    out->ift_rel = tr->ift_kind ? tr->ift_rel : NAN;
    if (!tr->ref_kind)
        return;
    size_t len[GROUPS] = {tr->nq, tr->nv, tr->nl};
    double *em[GROUPS] = {&out->err_max.q, &out->err_max.v, &out->err_max.lambda};
    double *er[GROUPS] = {&out->err_rms.q, &out->err_rms.v, &out->err_rms.lambda};
    double *dg[GROUPS] = {&out->digits.q, &out->digits.v, &out->digits.lambda};
    for (int g = 0; g < GROUPS; g++) {
        if (len[g] == 0)
            continue;
        *em[g] = tr->emax[g];
        *er[g] = sqrt(tr->esum[g] / (double)out->n);
        *dg[g] = -log10(fmax(tr->emax[g], 1e-16));
    }
}

int mbs_traj_write_csv(const mbs_traj *tr, const char *path, char *err, size_t errlen)
{
    const mbs_problem *pb = tr->pb;
    size_t nr = pb->n_reported;
    double *rep = malloc((nr ? nr : 1) * sizeof(double));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = rep && tr->rows ? open_memstream(&buf, &len) : NULL;
    if (!f) {
        free(rep);
        snprintf(err, errlen, "out of memory writing the trajectory file '%s'", path);
        return -1;
    }
    static const char *const group[4] = {"q", "v", "lambda", "x"};
    size_t n[4] = {tr->nq, tr->nv, tr->nl, tr->ny - tr->nq - tr->nv - tr->nl};
    fputc('t', f);
    for (int g = 0; g < 4; g++)
        for (size_t i = 1; i <= n[g]; i++)
            fprintf(f, ",%s%zu", group[g], i);
    for (size_t i = 0; i < nr; i++)
        fprintf(f, ",%s", pb->reported_names[i]);
    fputc('\n', f);
    int rc = 0;
    for (long k = 0; k < tr->next && rc == 0; k++) {
        double tk = mbs_traj_time(pb->t0, tr->t_end, tr->steps, k);
        const double *y = tr->rows + (size_t)k * tr->ny;
        fprintf(f, "%.17g", tk);
        for (size_t i = 0; i < tr->ny; i++)
            fprintf(f, ",%.17g", y[i]);
        if (nr > 0 && pb->def->reported(pb, tk, y, y + tr->nq, rep) != MBS_OK) {
            snprintf(err, errlen, "trajectory file '%s': the reported quantities of %s failed "
                     "at t = %g", path, pb->def->name, tk);
            rc = -1;
        }
        for (size_t i = 0; i < nr; i++)
            fprintf(f, ",%.17g", rep[i]);
        fputc('\n', f);
    }
    fclose(f);
    if (rc == 0 && mbs_write_atomic(path, buf, len) != 0) {
        snprintf(err, errlen, "cannot write the trajectory file '%s'", path);
        rc = -1;
    }
    free(buf);
    free(rep);
    return rc;
}
