/* Mechanism files: the builder's helpers (mech_build.h): messages, values and
 * expressions in lists, names, affine expressions of q, constraint rows,
 * inertia input. */
#include <ctype.h>
#include <gsl/gsl_eigen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_build.h"

void mech_berr(builder *b, int line, const char *fmt, ...)
{
    if (b->failed)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(b->err, b->errlen, "%s:%d: %s", b->path, line, msg);
    b->failed = 1;
    b->status = MBS_BAD_INPUT;
}

void mech_nomem(builder *b)
{
    if (!b->failed) {
        snprintf(b->err, b->errlen, "%s: out of memory", b->path);
        b->failed = 1;
        b->status = MBS_NO_MEMORY;
    }
}

/* Grow an array (element size sz) to hold n + 1 entries. */
int mech_grow(builder *b, void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, c * sz);
    if (!q) {
        mech_nomem(b);
        return -1;
    }
    *p = q;
    *cap = c;
    return 0;
}

/* ---- values ------------------------------------------------------------------- */

/* Split a list at whitespace outside parentheses: items into buf (NUL-separated). */
int mech_split(const char *s, char *buf, size_t len, const char **item, int maxn)
{
    int n = 0, depth = 0;
    size_t k = 0;
    const char *p = s;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n == maxn)
            return -1;
        item[n++] = buf + k;
        while (*p && (depth > 0 || !isspace((unsigned char)*p))) {
            depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
            if (k + 2 >= len)
                return -1;
            buf[k++] = *p++;
        }
        buf[k++] = '\0';
    }
    return n;
}

/* n numbers (exactly n, or between nmin and n: *got) from a list of expressions. */
int mech_numbers(builder *b, const char *v, int line, const char *what, double *out, int nmin,
                   int nmax, int *got)
{
    char buf[4096];
    const char *it[16];
    int n = mech_split(v, buf, sizeof buf, it, 16);
    if (n < nmin || n > nmax) {
        if (nmin == nmax)
            mech_berr(b, line, "%s: expected %d value%s, got '%s'", what, nmin, nmin > 1 ? "s" : "", v);
        else
            mech_berr(b, line, "%s: expected %d to %d values, got '%s'", what, nmin, nmax, v);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char e[300];
        if (mech_eval_const(it[i], &b->sc, &out[i], e, sizeof e) != 0) {
            mech_berr(b, line, "%s: %s", what, e);
            return -1;
        }
    }
    if (got)
        *got = n;
    return 0;
}

int mech_vec_of(builder *b, const char *v, int line, const char *what, double *x)
{
    x[0] = x[1] = x[2] = 0.0;
    return mech_numbers(b, v, line, what, x, b->dim, b->dim, NULL);
}

const char *mech_key(builder *b, const mech_section *s, const char *k, int *line)
{
    (void)b;
    *line = s->line;
    return mech_get(s, k, line);
}

/* Every key of s must be in the NULL-terminated list. */
void mech_known_keys(builder *b, const mech_section *s, const char *const *keys)
{
    for (size_t i = 0; i < s->n; i++) {
        int ok = 0;
        for (const char *const *k = keys; *k; k++)
            ok |= strcmp(*k, s->kv[i].key) == 0;
        if (!ok)
            mech_berr(b, s->kv[i].line, "unknown key '%s' in [%s %s]", s->kv[i].key, s->type, s->name);
    }
}

double mech_norm3(const double *x)
{
    return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

double mech_dot3(const double *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

void mech_cross3(const double *x, const double *y, double *z)
{
    double a = x[1] * y[2] - x[2] * y[1], c = x[2] * y[0] - x[0] * y[2],
           d = x[0] * y[1] - x[1] * y[0];
    z[0] = a, z[1] = c, z[2] = d;
}

/* ---- names ------------------------------------------------------------------- */

long mech_find_elem(const builder *b, const char *name)
{
    for (size_t i = 0; i < b->nel; i++)
        if (strcmp(b->el[i].name, name) == 0)
            return (long)i;
    return -1;
}

long mech_find_body(const builder *b, const char *name)
{
    for (size_t i = 0; i < b->nbd; i++)
        if (strcmp(b->bd[i].name, name) == 0)
            return (long)i;
    return -1;
}

int mech_name_ok(builder *b, const char *name, int line, const char *what)
{
    size_t n = strlen(name);
    if (n == 0 || n >= NAME_LEN ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") != n) {
        mech_berr(b, line, "%s name '%s' must be 1-%d characters of [A-Za-z0-9_.+-]", what, name,
             NAME_LEN - 1);
        return 0;
    }
    return 1;
}

long mech_new_elem(builder *b, const char *name, int vec, int ground, const double *x0,
                     int line)
{
    double x[3] = {x0[0], x0[1], x0[2]}; /* x0 may point into b->el, which may move */
    if (mech_grow(b, (void **)&b->el, &b->capel, b->nel, sizeof *b->el))
        return -1;
    elem *e = &b->el[b->nel];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->vec = vec;
    e->ground = ground;
    e->line = line;
    memcpy(e->x0, x, sizeof e->x0);
    e->blk = (size_t)-1;
    return (long)b->nel++;
}

long mech_body_root(builder *b, long i)
{
    while (b->bd[i].parent != i)
        i = b->bd[i].parent = b->bd[b->bd[i].parent].parent;
    return i;
}

void mech_attach(builder *b, long bi, long e)
{
    bi = mech_body_root(b, bi);
    body *bd = &b->bd[bi];
    for (size_t i = 0; i < bd->nel; i++)
        if (bd->el[i] == (size_t)e)
            return;
    if (mech_grow(b, (void **)&bd->el, &bd->capel, bd->nel, sizeof *bd->el))
        return;
    bd->el[bd->nel++] = (size_t)e;
}

/* An element named in a value: a declared point/vector, or coordinates (then a
 * new element NAME is created: ground when on_ground). */
long mech_elem_ref(builder *b, const char *v, int line, int vec, const char *newname,
                     int on_ground)
{
    char buf[512];
    const char *it[4];
    int n = mech_split(v, buf, sizeof buf, it, 4);
    if (n == 1 && (isalpha((unsigned char)it[0][0]) || it[0][0] == '_') &&
        mech_find_elem(b, it[0]) >= 0) {
        long e = mech_find_elem(b, it[0]);
        if (b->el[e].vec != vec) {
            mech_berr(b, line, "'%s' is a %s, expected a %s", it[0], b->el[e].vec ? "vector" : "point",
                 vec ? "vector" : "point");
            return -1;
        }
        return e;
    }
    if (n == 1 && isalpha((unsigned char)it[0][0]) && !strchr(it[0], '(')) {
        int isnum = 0;
        for (size_t i = 0; i < b->sc.n; i++)
            isnum |= strcmp(b->sc.names[i], it[0]) == 0;
        if (!isnum && strcmp(it[0], "pi") != 0) {
            mech_berr(b, line, "undefined %s '%s'", vec ? "vector" : "point", it[0]);
            return -1;
        }
    }
    double x[3];
    if (mech_vec_of(b, v, line, vec ? "axis" : "point", x))
        return -1;
    if (vec) {
        double nx = mech_norm3(x);
        if (!(nx > 1e-12)) {
            mech_berr(b, line, "zero-length axis '%s'", v);
            return -1;
        }
        for (int i = 0; i < 3; i++)
            x[i] /= nx;
    }
    if (mech_find_elem(b, newname) >= 0) {
        mech_berr(b, line, "duplicate name '%s'", newname);
        return -1;
    }
    return mech_new_elem(b, newname, vec, on_ground, x, line);
}

long mech_body_ref(builder *b, const char *name, int line)
{
    long i = mech_find_body(b, name);
    if (i < 0)
        mech_berr(b, line, "undefined body '%s'", name);
    return i;
}

/* ---- affine expressions --------------------------------------------------------- */

void mech_aff_zero(mech_aff *e)
{
    memset(e, 0, sizeof *e);
}

/* (a I + b J) x in the plane, a x in space. */
void mech_pair_apply(int dim, double a, double bb, const double *x, double *y)
{
    if (dim == 2) {
        double y0 = a * x[0] - bb * x[1], y1 = a * x[1] + bb * x[0];
        y[0] = y0, y[1] = y1, y[2] = 0.0;
    } else {
        y[0] = a * x[0], y[1] = a * x[1], y[2] = a * x[2];
    }
}

/* dst += (a I + b J) src */
void mech_aff_add(builder *b, mech_aff *dst, const mech_aff *src, double a, double bb)
{
    double c[3];
    mech_pair_apply(b->dim, a, bb, src->c, c);
    for (int i = 0; i < 3; i++)
        dst->c[i] += c[i];
    for (int k = 0; k < src->n; k++) {
        double ta = a * src->t[k].a - bb * src->t[k].b, tb = a * src->t[k].b + bb * src->t[k].a;
        int j;
        for (j = 0; j < dst->n; j++)
            if (dst->t[j].blk == src->t[k].blk)
                break;
        if (j == dst->n) {
            if (dst->n == MECH_MAXT) {
                mech_berr(b, 0, "internal: affine expression with more than %d terms", MECH_MAXT);
                return;
            }
            dst->t[dst->n++] = (mech_term){src->t[k].blk, 0, 0};
        }
        dst->t[j].a += ta;
        dst->t[j].b += tb;
    }
    /* drop cancelled terms */
    int w = 0;
    for (int k = 0; k < dst->n; k++)
        if (dst->t[k].a != 0.0 || dst->t[k].b != 0.0)
            dst->t[w++] = dst->t[k];
    dst->n = w;
}

void mech_aff_elem(const builder *b, long e, mech_aff *out)
{
    mech_aff_zero(out);
    if (b->el[e].ground) {
        memcpy(out->c, b->el[e].x0, sizeof out->c);
    } else {
        out->n = 1;
        out->t[0] = (mech_term){b->el[e].blk, 1.0, 0.0};
    }
}

void mech_aff_const(mech_aff *out, const double *x)
{
    mech_aff_zero(out);
    memcpy(out->c, x, sizeof out->c);
}

/* ---- rows ----------------------------------------------------------------------- */

mech_row *mech_new_row(builder *b)
{
    if (mech_grow(b, (void **)&b->rows, &b->caprow, b->nrow, sizeof *b->rows))
        return NULL;
    mech_row *r = &b->rows[b->nrow++];
    memset(r, 0, sizeof *r);
    r->f0 = -1;
    r->t[0].fn = r->t[1].fn = -1;
    return r;
}

/* Row a . bv + c = 0 unless both are constant (then it must hold already). */
void mech_row_dot(builder *b, const mech_aff *a, const mech_aff *bv, double c, int line)
{
    if (a->n == 0 && bv->n == 0) {
        double v = mech_dot3(a->c, bv->c) + c;
        if (fabs(v) > 1e-9 * (1.0 + fabs(c)))
            mech_berr(b, line, "a constraint between fixed elements does not hold (residual %.3g)", v);
        return;
    }
    mech_row *r = mech_new_row(b);
    if (!r)
        return;
    r->nt = 1;
    r->t[0].a = *a;
    r->t[0].b = *bv;
    r->c = c;
}

/* Rows e_i . d = 0 (i < dim): d = 0 as dim linear rows. */
void mech_rows_zero(builder *b, const mech_aff *d, int line)
{
    for (int i = 0; i < b->dim; i++) {
        double ei[3] = {0, 0, 0};
        ei[i] = 1.0;
        mech_aff u;
        mech_aff_const(&u, ei);
        mech_row_dot(b, d, &u, 0.0, line);
    }
}

long mech_point_named(builder *b, const char *name, int line)
{
    long e = mech_find_elem(b, name);
    if (e < 0) {
        mech_berr(b, line, "undefined point '%s'", name);
        return -1;
    }
    if (b->el[e].vec) {
        mech_berr(b, line, "'%s' is a vector, expected a point", name);
        return -1;
    }
    return e;
}

/* Inertia about the com from its entries (global axes, reference configuration). */
int mech_inertia(builder *b, const char *v, int line, double *Iout)
{
    double x[9];
    int n;
    memset(Iout, 0, 9 * sizeof *Iout);
    if (b->dim == 2) {
        if (mech_numbers(b, v, line, "inertia", x, 1, 1, NULL))
            return -1;
        if (x[0] < 0) {
            mech_berr(b, line, "negative inertia %g", x[0]);
            return -1;
        }
        Iout[8] = x[0];
        return 0;
    }
    if (mech_numbers(b, v, line, "inertia", x, 1, 9, &n))
        return -1;
    if (n == 1) {
        Iout[0] = Iout[4] = Iout[8] = x[0];
    } else if (n == 3) {
        Iout[0] = x[0], Iout[4] = x[1], Iout[8] = x[2];
    } else if (n == 6) { /* Ixx Iyy Izz Ixy Ixz Iyz */
        Iout[0] = x[0], Iout[4] = x[1], Iout[8] = x[2];
        Iout[1] = Iout[3] = x[3], Iout[2] = Iout[6] = x[4], Iout[5] = Iout[7] = x[5];
    } else if (n == 9) {
        memcpy(Iout, x, sizeof x);
    } else {
        mech_berr(b, line, "inertia: expected 1 (isotropic), 3 (principal), 6 (Ixx Iyy Izz Ixy Ixz "
             "Iyz) or 9 values, got %d", n);
        return -1;
    }
    double sc = 0;
    for (int i = 0; i < 9; i++)
        sc = fmax(sc, fabs(Iout[i]));
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(Iout[3 * i + j] - Iout[3 * j + i]) > 1e-12 * sc) {
                mech_berr(b, line, "non-symmetric inertia: I[%d][%d] = %g, I[%d][%d] = %g", i + 1,
                     j + 1, Iout[3 * i + j], j + 1, i + 1, Iout[3 * j + i]);
                return -1;
            }
    double A[9], ev[3];
    memcpy(A, Iout, sizeof A);
    gsl_matrix_view Av = gsl_matrix_view_array(A, 3, 3);
    gsl_vector_view e = gsl_vector_view_array(ev, 3);
    gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc(3);
    if (!w) {
        mech_nomem(b);
        return -1;
    }
    gsl_eigen_symm(&Av.matrix, &e.vector, w);
    gsl_eigen_symm_free(w);
    for (int i = 0; i < 3; i++)
        if (ev[i] < -1e-12 * sc) {
            mech_berr(b, line, "negative inertia: principal moment %g", ev[i]);
            return -1;
        }
    for (int i = 0; i < 3; i++)
        if (ev[i] > ev[(i + 1) % 3] + ev[(i + 2) % 3] + 1e-12 * sc) {
            mech_berr(b, line, "inertia violates the triangle inequality: principal moments %g, %g, "
                 "%g", ev[0], ev[1], ev[2]);
            return -1;
        }
    return 0;
}

/* Second moment about the com S = tr(I)/2 - I (space); (J/2) I in the plane, which
 * gives the same motion (only tr S enters planar rigid dynamics). */
void mech_second_moment(builder *b, const double *Ig, double *S)
{
    memset(S, 0, 9 * sizeof *S);
    if (b->dim == 2) {
        S[0] = S[4] = 0.5 * Ig[8];
        return;
    }
    double tr = Ig[0] + Ig[4] + Ig[8];
    for (int i = 0; i < 9; i++)
        S[i] = -Ig[i];
    for (int i = 0; i < 3; i++)
        S[4 * i] += 0.5 * tr;
}
