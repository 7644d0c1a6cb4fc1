/* Order conditions and validation of Butcher tableaux (tableau.h). */
#include "tableau.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../core/status.h"

/* Rooted trees of order 1..MBS_TABLEAU_MAX_ORDER (OEIS A000081), to size the
 * workspace; the generator's own counts are tested against them. */
static const int n_trees[MBS_TABLEAU_MAX_ORDER + 1] = {0, 1, 1, 2, 4, 9, 20, 48, 115, 286, 719};

/* The trees generated so far, each with what its parent needs: (A Phi(t))_i
 * and (|A| |Phi|(t))_i, and gamma(t). */
typedef struct forest {
    const double *A, *w;
    int s, n;            /* stages, trees generated */
    int *order;
    double *gamma;
    double *ag, *agabs;  /* n x s */
    double *prod;        /* (MBS_TABLEAU_MAX_ORDER + 1) x 2s: products along the recursion */
    int cur_order, first_of_order;
    mbs_order_report *rep;
} forest;

/* A new tree of order f->cur_order whose elementary weights are the products
 * at depth d and whose children's gammas multiply to gprod: check it, and
 * store what its parents need. */
static void emit(forest *f, int d, double gprod)
{
    int s = f->s, k = f->n++;
    const double *phi = f->prod + (size_t)d * 2 * s, *phiabs = phi + s;
    f->order[k] = f->cur_order;
    f->gamma[k] = f->cur_order * gprod;
    double *ag = f->ag + (size_t)k * s, *agabs = f->agabs + (size_t)k * s;
    for (int i = 0; i < s; i++) {
        double a = 0.0, aa = 0.0;
        for (int j = 0; j < i; j++) {
            a += f->A[i * s + j] * phi[j];
            aa += fabs(f->A[i * s + j]) * phiabs[j];
        }
        ag[i] = a;
        agabs[i] = aa;
    }
    if (!f->w || !f->rep)
        return;
    double sum = 0.0, mag = 1.0 / f->gamma[k];
    for (int i = 0; i < s; i++) {
        sum += f->w[i] * phi[i];
        mag += fabs(f->w[i]) * phiabs[i];
    }
    double res = sum - 1.0 / f->gamma[k];
    double tol = 8.0 * (f->cur_order + s) * DBL_EPSILON * mag;
    double ratio = fabs(res) / tol;
    mbs_order_report *r = f->rep;
    r->n_conditions++;
    if (!(ratio <= r->max_ratio)) { /* also NaN */
        r->max_ratio = ratio;
        if (!r->failed_order)
            r->resid = res;
    }
    if (!(ratio <= 1.0) && !r->failed_order) {
        r->failed_order = f->cur_order;
        r->failed_tree = k;
        r->resid = res;
    }
}

/* Children multisets: trees of index >= from (orders <= rem) at depth d. */
static void children(forest *f, int rem, int from, int d, double gprod)
{
    if (rem == 0) {
        emit(f, d, gprod);
        return;
    }
    int s = f->s;
    const double *p = f->prod + (size_t)d * 2 * s;
    double *q = f->prod + (size_t)(d + 1) * 2 * s;
    for (int k = from; k < f->first_of_order; k++) {
        if (f->order[k] > rem)
            break; /* trees are generated in increasing order */
        for (int i = 0; i < s; i++) {
            q[i] = p[i] * f->ag[(size_t)k * s + i];
            q[s + i] = p[s + i] * f->agabs[(size_t)k * s + i];
        }
        children(f, rem - f->order[k], k, d + 1, gprod * f->gamma[k]);
    }
}

/* Generate all trees of order <= order over A (s stages); with w and rep,
 * check their conditions.  counts[n] (may be NULL) receives the number of
 * trees of order n. */
static int walk(const double *A, int s, int order, const double *w, mbs_order_report *rep,
                int *counts)
{
    if (order < 1 || order > MBS_TABLEAU_MAX_ORDER || s < 1 || s > MBS_TABLEAU_MAX_STAGES)
        return MBS_BAD_INPUT;
    int total = 0;
    for (int n = 1; n <= order; n++)
        total += n_trees[n];
    forest f = {.A = A, .w = w, .s = s, .rep = rep};
    f.order = malloc((size_t)total * sizeof *f.order);
    f.gamma = malloc((size_t)total * sizeof *f.gamma);
    f.ag = malloc((size_t)total * (size_t)s * sizeof *f.ag);
    f.agabs = malloc((size_t)total * (size_t)s * sizeof *f.agabs);
    f.prod = malloc((size_t)(MBS_TABLEAU_MAX_ORDER + 1) * 2 * (size_t)s * sizeof *f.prod);
    int st = MBS_NO_MEMORY;
    if (!f.order || !f.gamma || !f.ag || !f.agabs || !f.prod)
        goto done;
    for (int i = 0; i < 2 * s; i++)
        f.prod[i] = 1.0; /* the root alone: Phi_i = 1 */
    for (int n = 1; n <= order; n++) {
        f.cur_order = n;
        f.first_of_order = f.n;
        children(&f, n - 1, 0, 0, 1.0);
        if (counts)
            counts[n] = f.n - f.first_of_order;
        if (f.n - f.first_of_order != n_trees[n]) {
            st = MBS_BAD_INPUT; /* cannot happen: the generator is tested */
            goto done;
        }
    }
    st = rep && rep->failed_order ? MBS_BAD_INPUT : MBS_OK;
done:
    free(f.order);
    free(f.gamma);
    free(f.ag);
    free(f.agabs);
    free(f.prod);
    return st;
}

int mbs_tableau_order_check(const mbs_tableau *t, const double *w, int order,
                            mbs_order_report *rep)
{
    memset(rep, 0, sizeof *rep);
    if (!t || !t->A || !w)
        return MBS_BAD_INPUT;
    return walk(t->A, t->stages, order, w, rep, NULL);
}

int mbs_tableau_dense_check(const mbs_tableau *t, double theta, int order, mbs_order_report *rep)
{
    memset(rep, 0, sizeof *rep);
    if (!t || !t->A || !t->bd || !(theta > 0.0 && theta <= 1.0) || t->stages < 1 ||
        t->stages > MBS_TABLEAU_MAX_STAGES || t->dense_degree < 1)
        return MBS_BAD_INPUT;
    size_t s = (size_t)t->stages, deg = (size_t)t->dense_degree;
    double *A = malloc(s * s * sizeof(double)), w[MBS_TABLEAU_MAX_STAGES];
    if (!A)
        return MBS_NO_MEMORY;
    for (size_t i = 0; i < s * s; i++)
        A[i] = t->A[i] / theta;
    for (size_t i = 0; i < s; i++) {
        double bi = 0.0; /* b_i(theta) by Horner */
        for (size_t j = deg; j-- > 0;)
            bi = (bi + t->bd[i * deg + j]) * theta;
        w[i] = bi / theta;
    }
    int r = walk(A, t->stages, order, w, rep, NULL);
    free(A);
    return r;
}

int mbs_rooted_tree_count(int n)
{
    int counts[MBS_TABLEAU_MAX_ORDER + 1] = {0};
    static const double zero = 0.0;
    if (n < 1 || n > MBS_TABLEAU_MAX_ORDER || walk(&zero, 1, n, NULL, NULL, counts) != MBS_OK)
        return -1;
    return counts[n];
}

static int finite_all(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static int name_ok(const char *nm)
{
    size_t len = nm ? strlen(nm) : 0;
    if (len == 0 || len >= MBS_TABLEAU_MAX_NAME)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)nm[i];
        if (!(islower(ch) || isdigit(ch) || ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

#define FAIL(...)                                                                             \
    do {                                                                                      \
        snprintf(err, errlen, __VA_ARGS__);                                                   \
        return MBS_BAD_INPUT;                                                                 \
    } while (0)

/* The continuous extension: sizes, b_i(1) = b_i, order conditions at three theta. */
static int validate_dense(const mbs_tableau *t, char *err, size_t errlen)
{
    const char *nm = t->name;
    int s = t->stages, deg = t->dense_degree;
    if (deg < 1 || deg > MBS_TABLEAU_MAX_DENSE_DEGREE)
        FAIL("tableau %s: dense degree %d must lie in [1, %d]", nm, deg,
             MBS_TABLEAU_MAX_DENSE_DEGREE);
    if (t->dense_order < 1 || t->dense_order > t->order || t->dense_order > deg)
        FAIL("tableau %s: dense order %d must lie in [1, min(order %d, degree %d)]", nm,
             t->dense_order, t->order, deg);
    if (!finite_all(t->bd, s * deg))
        FAIL("tableau %s: dense coefficients must be finite", nm);
    for (int i = 0; i < s; i++) {
        double sum = 0.0, mag = fabs(t->b[i]);
        for (int j = 0; j < deg; j++) {
            sum += t->bd[i * deg + j];
            mag += fabs(t->bd[i * deg + j]);
        }
        if (fabs(sum - t->b[i]) > 4.0 * deg * DBL_EPSILON * mag)
            FAIL("tableau %s: b_%d(1) = %.17g is not b_%d = %.17g", nm, i + 1, sum, i + 1,
                 t->b[i]);
    }
    static const double thetas[] = {0.25, 0.5, 0.75};
    for (size_t k = 0; k < sizeof thetas / sizeof thetas[0]; k++) {
        mbs_order_report rep;
        int st = mbs_tableau_dense_check(t, thetas[k], t->dense_order, &rep);
        if (st == MBS_BAD_INPUT)
            FAIL("tableau %s: the dense output at theta = %g fails an order-%d condition (tree "
                 "%d, residual %.3g): not of order %d",
                 nm, thetas[k], rep.failed_order, rep.failed_tree + 1, rep.resid, t->dense_order);
        if (st != MBS_OK)
            return st;
    }
    return MBS_OK;
}

int mbs_tableau_validate(const mbs_tableau *t, char *err, size_t errlen)
{
    if (!t)
        FAIL("tableau: NULL");
    if (!name_ok(t->name))
        FAIL("tableau name '%s' must be 1-%d characters of [a-z0-9_-]", t->name ? t->name : "",
             MBS_TABLEAU_MAX_NAME - 1);
    const char *nm = t->name;
    int s = t->stages;
    if (s < 1 || s > MBS_TABLEAU_MAX_STAGES)
        FAIL("tableau %s: stages %d must lie in [1, %d]", nm, s, MBS_TABLEAU_MAX_STAGES);
    if (t->order < 1 || t->order > MBS_TABLEAU_MAX_ORDER)
        FAIL("tableau %s: order %d must lie in [1, %d]", nm, t->order, MBS_TABLEAU_MAX_ORDER);
    if (!t->c || !t->A || !t->b)
        FAIL("tableau %s: c, A and b are required", nm);
    if (!t->bhat && (t->order_emb != 0 || t->e))
        FAIL("tableau %s: embedded order %d or e without bhat", nm, t->order_emb);
    if (t->bhat && (t->order_emb < 1 || t->order_emb > MBS_TABLEAU_MAX_ORDER))
        FAIL("tableau %s: embedded order %d must lie in [1, %d]", nm, t->order_emb,
             MBS_TABLEAU_MAX_ORDER);
    if (!finite_all(t->c, s) || !finite_all(t->A, s * s) || !finite_all(t->b, s) ||
        (t->bhat && !finite_all(t->bhat, s)) || (t->e && !finite_all(t->e, s)))
        FAIL("tableau %s: coefficients must be finite", nm);
    for (int i = 0; i < s; i++) {
        double sum = 0.0, mag = 1.0;
        for (int j = 0; j < s; j++) {
            double a = t->A[i * s + j];
            if (j >= i && a != 0.0)
                FAIL("tableau %s: a[%d][%d] = %g: A must be strictly lower triangular (explicit)",
                     nm, i + 1, j + 1, a);
            sum += a;
            mag += fabs(a);
        }
        if (fabs(sum - t->c[i]) > 4.0 * s * DBL_EPSILON * mag)
            FAIL("tableau %s: row %d: c = %.17g but sum_j a_ij = %.17g", nm, i + 1, t->c[i], sum);
    }
    if (t->fsal) {
        int ok = t->c[s - 1] == 1.0 && t->b[s - 1] == 0.0 && t->bhat;
        for (int j = 0; ok && j < s; j++)
            ok = t->A[(s - 1) * s + j] == t->b[j];
        if (!ok)
            FAIL("tableau %s: claims FSAL but c_s != 1, the last row of A != b, b_s != 0 or "
                 "bhat is missing",
                 nm);
    }
    mbs_order_report rep;
    int st = mbs_tableau_order_check(t, t->b, t->order, &rep);
    if (st == MBS_BAD_INPUT)
        FAIL("tableau %s: b fails an order-%d condition (tree %d, residual %.3g): not of order %d",
             nm, rep.failed_order, rep.failed_tree + 1, rep.resid, t->order);
    if (st != MBS_OK)
        return st;
    if (t->bhat) {
        st = mbs_tableau_order_check(t, t->bhat, t->order_emb, &rep);
        if (st == MBS_BAD_INPUT)
            FAIL("tableau %s: bhat fails an order-%d condition (tree %d, residual %.3g): not of "
                 "order %d",
                 nm, rep.failed_order, rep.failed_tree + 1, rep.resid, t->order_emb);
        if (st != MBS_OK)
            return st;
    }
    if (t->e)
        for (int i = 0; i < s; i++)
            if (fabs(t->e[i] - (t->b[i] - t->bhat[i])) >
                4.0 * DBL_EPSILON * (fabs(t->b[i]) + fabs(t->bhat[i])))
                FAIL("tableau %s: e[%d] = %.17g is not b - bhat = %.17g", nm, i + 1, t->e[i],
                     t->b[i] - t->bhat[i]);
    return t->bd ? validate_dense(t, err, errlen) : MBS_OK;
}
