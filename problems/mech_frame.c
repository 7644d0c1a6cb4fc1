/* Mechanism files: body frames in natural coordinates (mech_build.c has the
 * method), the rigid-body rows and the mass matrix of each body, [body] sections. */
#include <complex.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_build.h"

static const char *const K_BODY[] = {"points", "vectors", "rod", "point_mass", "box", "section",
                                     "mass", "com", "inertia", "omega", "velocity", NULL};

/* ---- body frames ----------------------------------------------------------------- */

/* Body-fixed point (vec = 0) or vector (vec = 1) with reference value x. */
void mech_body_aff(builder *b, const body *bd, const double *x, int vec, mech_aff *out)
{
    mech_aff_zero(out);
    double r[3] = {x[0], x[1], x[2]};
    if (!vec) {
        const double *p0 = b->el[bd->r0].x0;
        for (int i = 0; i < 3; i++)
            r[i] -= p0[i];
        *out = bd->a_r0;
    }
    for (int k = 0; k < bd->K; k++) {
        double X = 0;
        for (int i = 0; i < b->dim; i++)
            X += bd->Xp[k][i] * r[i];
        if (X != 0.0)
            mech_aff_add(b, out, &bd->a_dir[k], X, 0.0);
    }
}

/* Residual of x outside the span of the body's directions (0: inside). */
static double outside_span(const builder *b, const body *bd, const double *x)
{
    double y[3] = {x[0], x[1], x[2]};
    for (int k = 0; k < bd->K; k++) {
        double X = 0;
        for (int i = 0; i < b->dim; i++)
            X += bd->Xp[k][i] * x[i];
        for (int i = 0; i < 3; i++)
            y[i] -= X * bd->ref[k][i];
    }
    return mech_norm3(y);
}

/* Local-coordinate map of the chosen directions: Xp = (R^T R)^-1 R^T. */
static void set_pinv(builder *b, body *bd)
{
    int K = bd->K, dim = b->dim;
    double A[9] = {0}, Ai[9] = {0};
    for (int k = 0; k < K; k++)
        for (int l = 0; l < K; l++)
            A[3 * k + l] = mech_dot3(bd->ref[k], bd->ref[l]);
    if (K == 0)
        return;
    gsl_matrix_view Av = gsl_matrix_view_array_with_tda(A, (size_t)K, (size_t)K, 3);
    gsl_matrix_view Aiv = gsl_matrix_view_array_with_tda(Ai, (size_t)K, (size_t)K, 3);
    gsl_permutation *p = gsl_permutation_alloc((size_t)K);
    int sg;
    if (!p) {
        mech_nomem(b);
        return;
    }
    gsl_linalg_LU_decomp(&Av.matrix, p, &sg);
    gsl_linalg_LU_invert(&Av.matrix, p, &Aiv.matrix);
    gsl_permutation_free(p);
    for (int k = 0; k < K; k++)
        for (int i = 0; i < dim; i++) {
            double s = 0;
            for (int l = 0; l < K; l++)
                s += Ai[3 * k + l] * bd->ref[l][i];
            bd->Xp[k][i] = s;
        }
}

static void add_dir(builder *b, body *bd, long e, long base, const double *ref)
{
    int k = bd->nd++;
    bd->dir_el[k] = e;
    bd->dir_base[k] = base;
    memcpy(bd->ref[k], ref, sizeof bd->ref[k]);
    mech_aff a;
    mech_aff_elem(b, e, &a);
    if (base >= 0) {
        mech_aff c;
        mech_aff_elem(b, base, &c);
        mech_aff_add(b, &a, &c, -1.0, 0.0);
    }
    bd->a_dir[k] = a;
}

/* Is the mass distribution (and the com) inside the span of the directions? */
static int mass_in_span(const builder *b, const body *bd)
{
    if (bd->m == 0.0)
        return 1;
    const double *p0 = b->el[bd->r0].x0;
    double d[3], scale = 0;
    for (int i = 0; i < 3; i++)
        d[i] = bd->com[i] - p0[i];
    for (int i = 0; i < 9; i++)
        scale = fmax(scale, fabs(bd->S[i]));
    scale = fmax(scale / bd->m, mech_dot3(d, d)) + 1e-300;
    if (outside_span(b, bd, d) > 1e-9 * sqrt(scale))
        return 0;
    for (int j = 0; j < 3; j++) {
        double col[3] = {bd->S[j], bd->S[3 + j], bd->S[6 + j]};
        if (outside_span(b, bd, col) > 1e-9 * scale * bd->m)
            return 0;
    }
    return 1;
}

void mech_make_basis(builder *b, long bi, size_t *nq)
{
    body *bd = &b->bd[bi];
    int dim = b->dim;
    bd->r0 = -1;
    for (size_t i = 0; i < bd->nel && bd->r0 < 0; i++)
        if (!b->el[bd->el[i]].vec)
            bd->r0 = (long)bd->el[i];
    if (bd->ground) { /* the ground: a fixed origin and the fixed axes */
        double o[3] = {0, 0, 0};
        long e = mech_new_elem(b, "ground.origin", 0, 1, o, bd->line);
        if (e < 0)
            return;
        bd = &b->bd[bi];
        bd->r0 = e;
        for (int k = 0; k < dim; k++) {
            double ek[3] = {0, 0, 0};
            ek[k] = 1.0;
            mech_aff u;
            mech_aff_const(&u, ek);
            bd->a_dir[k] = u;
            memcpy(bd->ref[k], ek, sizeof ek);
        }
        bd->K = dim;
        bd->nd = 0;
        mech_aff_const(&bd->a_r0, o);
        set_pinv(b, bd);
        return;
    }
    if (bd->r0 < 0) { /* no point: an auxiliary one at the centre of mass */
        char nm[NAME_LEN + 8];
        snprintf(nm, sizeof nm, "%.50s.com", bd->name);
        long e = mech_new_elem(b, nm, 0, 0, bd->com, bd->line);
        if (e < 0)
            return;
        b->el[e].blk = *nq;
        *nq += (size_t)dim;
        mech_attach(b, bi, e);
        bd = &b->bd[bi];
        bd->r0 = e;
    }
    mech_aff_elem(b, bd->r0, &bd->a_r0);
    int want = dim == 2 ? 1 : 3;
    const double *p0 = b->el[bd->r0].x0;
    /* vectors first, then point differences */
    for (int pass = 0; pass < 2 && bd->nd < want; pass++)
        for (size_t i = 0; i < bd->nel && bd->nd < want; i++) {
            long e = (long)bd->el[i];
            const elem *el = &b->el[e];
            if (el->vec != (pass == 0) || e == bd->r0)
                continue;
            double x[3];
            for (int j = 0; j < 3; j++)
                x[j] = el->vec ? el->x0[j] : el->x0[j] - p0[j];
            double nx = mech_norm3(x);
            if (nx < 1e-12)
                continue;
            if (bd->K > 0 && outside_span(b, bd, x) < 1e-8 * nx)
                continue;
            add_dir(b, bd, e, el->vec ? -1 : bd->r0, x);
            if (dim == 2) { /* J x1 */
                double jx[3] = {-x[1], x[0], 0};
                memcpy(bd->ref[1], jx, sizeof jx);
                bd->a_dir[1] = (mech_aff){{0, 0, 0}, 0, {{0, 0, 0}}};
                mech_aff_add(b, &bd->a_dir[1], &bd->a_dir[0], 0.0, 1.0);
                bd->K = 2;
            } else {
                bd->K = bd->nd;
            }
            set_pinv(b, bd);
        }
    /* auxiliary unit vectors where the mass or a joint needs more */
    int need = bd->need_frame || !mass_in_span(b, bd) ||
               (dim == 2 && bd->K == 0 && (bd->S[0] + bd->S[4] > 0.0 ||
                                           fabs(bd->com[0] - p0[0]) + fabs(bd->com[1] - p0[1]) >
                                               1e-12 * (1.0 + mech_norm3(p0))));
    while (need && bd->nd < want) {
        double best[3] = {0, 0, 0}, bn = 0;
        for (int c = 0; c < dim; c++) {
            double ec[3] = {0, 0, 0};
            ec[c] = 1.0;
            double o = outside_span(b, bd, ec);
            if (bd->K == 0)
                o = 1.0;
            if (o > bn) {
                bn = o;
                memcpy(best, ec, sizeof best);
            }
        }
        /* y = best minus its projection on the span, normalised */
        double y[3] = {best[0], best[1], best[2]};
        for (int k = 0; k < bd->K; k++) {
            double X = 0;
            for (int i = 0; i < dim; i++)
                X += bd->Xp[k][i] * best[i];
            for (int i = 0; i < 3; i++)
                y[i] -= X * bd->ref[k][i];
        }
        double ny = mech_norm3(y);
        for (int i = 0; i < 3; i++)
            y[i] /= ny;
        char nm[NAME_LEN + 8];
        snprintf(nm, sizeof nm, "%.50s.aux%d", bd->name, bd->nd);
        long e = mech_new_elem(b, nm, 1, 0, y, bd->line);
        if (e < 0)
            return;
        b->el[e].blk = *nq;
        *nq += (size_t)dim;
        mech_attach(b, bi, e);
        bd = &b->bd[bi];
        add_dir(b, bd, e, -1, y);
        if (dim == 2) {
            double jx[3] = {-y[1], y[0], 0};
            memcpy(bd->ref[1], jx, sizeof jx);
            mech_aff_zero(&bd->a_dir[1]);
            mech_aff_add(b, &bd->a_dir[1], &bd->a_dir[0], 0.0, 1.0);
            bd->K = 2;
        } else {
            bd->K = bd->nd;
        }
        set_pinv(b, bd);
    }
}

/* Rigid-body rows and the rows tying the other elements to the basis. */
static int in_body(const body *bd, long e)
{
    if (e < 0)
        return 1;
    for (size_t i = 0; i < bd->nel; i++)
        if ((long)bd->el[i] == e)
            return 1;
    return 0;
}

/* Are all of the n elements e (-1: none) fixed in one body processed before bi?
 * Then a row among them is implied by that body's rigidity (a unit vector that
 * the previous body fixes states no new |u| = 1). */
static int fixed_earlier(const builder *b, long bi, const long *e, int n)
{
    for (long a = 0; a < bi; a++) {
        const body *A = &b->bd[a];
        if (A->parent != (int)a)
            continue;
        int all = 1;
        for (int k = 0; k < n && all; k++)
            all = in_body(A, e[k]);
        if (all)
            return 1;
    }
    return 0;
}

void mech_body_rows(builder *b, long bi)
{
    body *bd = &b->bd[bi];
    for (int k = 0; k < bd->nd; k++)
        for (int l = k; l < bd->nd; l++) {
            rigid_key mech_key = {bd->dir_el[k], bd->dir_base[k], bd->dir_el[l], bd->dir_base[l]};
            long ks[4] = {mech_key.e1, mech_key.b1, mech_key.e2, mech_key.b2};
            if (fixed_earlier(b, bi, ks, 4))
                continue;
            int seen = 0;
            for (size_t i = 0; i < b->nrk && !seen; i++) {
                const rigid_key *r = &b->rk[i];
                seen = (r->e1 == mech_key.e1 && r->b1 == mech_key.b1 && r->e2 == mech_key.e2 && r->b2 == mech_key.b2) ||
                       (r->e1 == mech_key.e2 && r->b1 == mech_key.b2 && r->e2 == mech_key.e1 && r->b2 == mech_key.b1);
            }
            if (seen)
                continue;
            if (mech_grow(b, (void **)&b->rk, &b->caprk, b->nrk, sizeof *b->rk))
                return;
            b->rk[b->nrk++] = mech_key;
            mech_row_dot(b, &bd->a_dir[k], &bd->a_dir[l], -mech_dot3(bd->ref[k], bd->ref[l]), bd->line);
        }
    for (size_t i = 0; i < bd->nel; i++) {
        long e = (long)bd->el[i];
        int basis = e == bd->r0;
        for (int k = 0; k < bd->nd; k++)
            basis |= bd->dir_el[k] == e;
        if (basis)
            continue;
        long involved[8] = {e, bd->r0, -1, -1, -1, -1, -1, -1};
        for (int k = 0; k < bd->nd; k++)
            involved[2 + k] = bd->dir_el[k], involved[5 + k] = bd->dir_base[k];
        if (fixed_earlier(b, bi, involved, 8))
            continue;
        const elem *el = &b->el[e];
        double off = outside_span(b, bd, el->vec ? el->x0 : (double[3]){
            el->x0[0] - b->el[bd->r0].x0[0], el->x0[1] - b->el[bd->r0].x0[1],
            el->x0[2] - b->el[bd->r0].x0[2]});
        if (off > 1e-8 * (1.0 + mech_norm3(el->x0))) {
            mech_berr(b, el->line, "internal: element '%s' outside the frame of body '%s'", el->name,
                 bd->name);
            return;
        }
        mech_aff d, x;
        mech_aff_elem(b, e, &d);
        mech_body_aff(b, bd, el->x0, el->vec, &x);
        mech_aff_add(b, &d, &x, -1.0, 0.0);
        mech_rows_zero(b, &d, el->line);
    }
}

/* ---- mass ----------------------------------------------------------------------- */

static void add_mblock(builder *b, size_t r, size_t c, double complex v)
{
    if (creal(v) == 0.0 && cimag(v) == 0.0)
        return;
    if (mech_grow(b, (void **)&b->mb, &b->capmb, b->nmb, sizeof *b->mb))
        return;
    b->mb[b->nmb++] = (mech_mblock){r, c, creal(v), cimag(v)};
}

/* The body's contribution to M and to the gravity force (Sect. 3.5). */
void mech_body_mass(builder *b, long bi, double *fg)
{
    body *bd = &b->bd[bi];
    if (bd->m == 0.0 || bd->ground)
        return;
    int dim = b->dim, K = bd->K;
    const double *p0 = b->el[bd->r0].x0;
    double d[3], S0[9];
    for (int i = 0; i < 3; i++)
        d[i] = bd->com[i] - p0[i];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            S0[3 * i + j] = bd->m * d[i] * d[j] + bd->S[3 * i + j];
    double mX[3] = {0, 0, 0}, SL[3][3] = {{0}};
    for (int k = 0; k < K; k++)
        for (int i = 0; i < dim; i++)
            mX[k] += bd->m * bd->Xp[k][i] * d[i];
    for (int k = 0; k < K; k++)
        for (int l = 0; l < K; l++)
            for (int i = 0; i < dim; i++)
                for (int j = 0; j < dim; j++)
                    SL[k][l] += bd->Xp[k][i] * S0[3 * i + j] * bd->Xp[l][j];
    /* blocks and their coefficients A (of r0) and B_k (of direction k) */
    size_t blk[4 * MECH_MAXT];
    double complex A[4 * MECH_MAXT], B[4 * MECH_MAXT][3];
    int nb = 0;
    const mech_aff *src[4] = {&bd->a_r0, &bd->a_dir[0], &bd->a_dir[1], &bd->a_dir[2]};
    for (int s = 0; s <= K; s++)
        for (int t = 0; t < src[s]->n; t++) {
            int j;
            for (j = 0; j < nb; j++)
                if (blk[j] == src[s]->t[t].blk)
                    break;
            if (j == nb) {
                blk[nb] = src[s]->t[t].blk;
                A[nb] = 0;
                B[nb][0] = B[nb][1] = B[nb][2] = 0;
                nb++;
            }
            double complex c = src[s]->t[t].a + I * src[s]->t[t].b;
            if (s == 0)
                A[j] += c;
            else
                B[j][s - 1] += c;
        }
    for (int r = 0; r < nb; r++) {
        for (int c = 0; c < nb; c++) {
            double complex v = bd->m * conj(A[r]) * A[c];
            for (int k = 0; k < K; k++)
                v += mX[k] * (conj(A[r]) * B[c][k] + conj(B[r][k]) * A[c]);
            for (int k = 0; k < K; k++)
                for (int l = 0; l < K; l++)
                    v += SL[k][l] * conj(B[r][k]) * B[c][l];
            add_mblock(b, blk[r], blk[c], v);
        }
        /* gravity: int rho C_r^T g */
        double complex w = bd->m * conj(A[r]);
        for (int k = 0; k < K; k++)
            w += mX[k] * conj(B[r][k]);
        double gg[3];
        mech_pair_apply(dim, creal(w), cimag(w), b->grav, gg);
        for (int i = 0; i < dim; i++)
            fg[blk[r] + (size_t)i] += gg[i];
    }
}

void mech_do_body(builder *b, const mech_section *s)
{
    mech_known_keys(b, s, K_BODY);
    if (!mech_name_ok(b, s->name, s->line, "body"))
        return;
    if (strcmp(s->name, "ground") == 0 || mech_find_body(b, s->name) >= 0) {
        mech_berr(b, s->line, "duplicate body name '%s'", s->name);
        return;
    }
    if (mech_grow(b, (void **)&b->bd, &b->capbd, b->nbd, sizeof *b->bd))
        return;
    long bi = (long)b->nbd++;
    body *bd = &b->bd[bi];
    memset(bd, 0, sizeof *bd);
    snprintf(bd->name, sizeof bd->name, "%s", s->name);
    bd->line = s->line;
    bd->parent = (int)bi;
    char buf[4096];
    const char *it[512];
    int line;
    const char *v;
    for (int vec = 0; vec < 2; vec++)
        if ((v = mech_key(b, s, vec ? "vectors" : "points", &line))) {
            int n = mech_split(v, buf, sizeof buf, it, 512);
            if (n < 0) {
                mech_berr(b, line, "list too long");
                return;
            }
            for (int i = 0; i < n; i++) {
                long e = mech_find_elem(b, it[i]);
                if (e < 0 || b->el[e].vec != vec) {
                    mech_berr(b, line, "undefined %s '%s'", vec ? "vector" : "point", it[i]);
                    return;
                }
                mech_attach(b, bi, e);
            }
        }
    bd = &b->bd[bi];
    int lm;
    const char *mv = mech_key(b, s, "mass", &lm);
    if (!mv) {
        mech_berr(b, s->line, "body '%s': missing mass", s->name);
        return;
    }
    if (mech_numbers(b, mv, lm, "mass", &bd->m, 1, 1, NULL))
        return;
    if (bd->m < 0) {
        mech_berr(b, lm, "negative mass %g", bd->m);
        return;
    }
    double Ig[9] = {0};
    int have_I = 0, have_com = 0;
    int lr, lp, lb, li, lc, ls;
    const char *rod = mech_key(b, s, "rod", &lr), *pm = mech_key(b, s, "point_mass", &lp),
               *box = mech_key(b, s, "box", &lb), *iv = mech_key(b, s, "inertia", &li),
               *cv = mech_key(b, s, "com", &lc), *sec = mech_key(b, s, "section", &ls);
    if (!!rod + !!pm + !!box > 1) {
        mech_berr(b, s->line, "body '%s': give at most one of rod, point_mass, box", s->name);
        return;
    }
    if (sec && !rod) {
        mech_berr(b, ls, "section needs rod = P Q");
        return;
    }
    if (cv) {
        long e = -1;
        int n = mech_split(cv, buf, sizeof buf, it, 4);
        if (n == 1 && (e = mech_find_elem(b, it[0])) >= 0) {
            if (b->el[e].vec) {
                mech_berr(b, lc, "'%s' is a vector, expected a point", it[0]);
                return;
            }
            memcpy(bd->com, b->el[e].x0, sizeof bd->com);
        } else if (mech_vec_of(b, cv, lc, "com", bd->com)) {
            return;
        }
        have_com = 1;
    }
    if (rod) {
        int n = mech_split(rod, buf, sizeof buf, it, 4);
        if (n != 2) {
            mech_berr(b, lr, "rod: expected two point names, got '%s'", rod);
            return;
        }
        long P = mech_point_named(b, it[0], lr), Q = P >= 0 ? mech_point_named(b, it[1], lr) : -1;
        if (Q < 0)
            return;
        mech_attach(b, bi, P);
        mech_attach(b, bi, Q);
        bd = &b->bd[bi];
        double u[3], L;
        for (int i = 0; i < 3; i++)
            u[i] = b->el[Q].x0[i] - b->el[P].x0[i];
        L = mech_norm3(u);
        if (!(L > 0)) {
            mech_berr(b, lr, "rod %s %s has zero length", it[0], it[1]);
            return;
        }
        double sq = 0;
        if (sec && mech_numbers(b, sec, ls, "section", &sq, 1, 1, NULL))
            return;
        if (!have_com)
            for (int i = 0; i < 3; i++)
                bd->com[i] = 0.5 * (b->el[P].x0[i] + b->el[Q].x0[i]);
        have_com = 1;
        if (b->dim == 2) {
            Ig[8] = bd->m * (L * L + sq * sq) / 12.0;
        } else {
            double ta = bd->m * (L * L + sq * sq) / 12.0, ax = bd->m * sq * sq / 6.0;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    Ig[3 * i + j] = (i == j ? ta : 0.0) + (ax - ta) * u[i] * u[j] / (L * L);
        }
        have_I = 1;
    } else if (pm) {
        long P = mech_point_named(b, pm, lp);
        if (P < 0)
            return;
        mech_attach(b, bi, P);
        bd = &b->bd[bi];
        memcpy(bd->com, b->el[P].x0, sizeof bd->com);
        have_com = have_I = 1;
    } else if (box) {
        double a[3] = {0, 0, 0};
        if (mech_numbers(b, box, lb, "box", a, b->dim, b->dim, NULL))
            return;
        if (b->dim == 2) {
            Ig[8] = bd->m * (a[0] * a[0] + a[1] * a[1]) / 12.0;
        } else {
            Ig[0] = bd->m * (a[1] * a[1] + a[2] * a[2]) / 12.0;
            Ig[4] = bd->m * (a[0] * a[0] + a[2] * a[2]) / 12.0;
            Ig[8] = bd->m * (a[0] * a[0] + a[1] * a[1]) / 12.0;
        }
        have_I = 1;
    }
    if (iv) {
        if (mech_inertia(b, iv, li, Ig))
            return;
        have_I = 1;
    }
    if (!have_com) {
        mech_berr(b, s->line, "body '%s': missing com (or rod, point_mass)", s->name);
        return;
    }
    if (!have_I) {
        mech_berr(b, s->line, "body '%s': missing inertia (or rod, box, point_mass)", s->name);
        return;
    }
    mech_second_moment(b, Ig, bd->S);
    int lo, lv;
    const char *om = mech_key(b, s, "omega", &lo), *vc = mech_key(b, s, "velocity", &lv);
    if (om) {
        if (b->dim == 2) {
            if (mech_numbers(b, om, lo, "omega", &bd->omega[2], 1, 1, NULL))
                return;
        } else if (mech_vec_of(b, om, lo, "omega", bd->omega)) {
            return;
        }
        bd->has_omega = 1;
    }
    if (vc) {
        if (mech_vec_of(b, vc, lv, "velocity", bd->vcom))
            return;
        bd->has_vcom = 1;
    }
}
