/* Mechanism files, second stage: sections -> natural coordinates (mech_impl.h).
 *
 * The file describes the mechanism in its reference configuration: points and
 * unit vectors (ground or moving), bodies that carry them, joints, drivers,
 * forces.  The reference configuration defines the geometry (distances and
 * angles between the elements of a body).  Each body gets a basis, after
 * García de Jalón and Bayo 1994 [garciadejalon1994], Sect. 3.2: a base point r0
 * and up to three independent directions taken from its elements (unit vectors
 * and point differences p - r0); in space, a body whose mass or joints need a
 * full frame and whose elements span less gets auxiliary unit vectors.  In the
 * plane the second direction is J x1 (J = rotation by 90 degrees), linear in q.
 * Then:
 *   - rigid-body rows: x_k . x_l = const for the basis directions (k <= l);
 *   - every other element of the body is a fixed linear combination of the
 *     basis: linear rows e - (r0 + sum_k X_k x_k) = 0;
 *   - a material point r = r0 + sum_k X_k x_k is affine in q, so the mass matrix
 *     M = int rho C^T C dV is constant (Sect. 3.5): it needs the mass, the first
 *     and the second moments in the local coordinates X.
 * Joints share elements (a point: spherical, in the plane revolute; a point and
 * a unit vector: revolute in space) or add rows built from body-fixed vectors,
 * all at most quadratic in q (Sect. 3.3). */
#include <complex.h>
#include <ctype.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_impl.h"

enum { MAX_EXPAND = 1000000, NAME_LEN = 64 };

typedef struct elem {
    char name[NAME_LEN];
    int vec, ground, line;
    double x0[3];
    size_t blk;
    double vel[3];
    int has_vel;
} elem;

typedef struct body {
    char name[NAME_LEN];
    int line, parent, ground, need_frame;
    size_t *el;
    size_t nel, capel;
    double m, com[3], S[9]; /* mass, centre of mass, second moment about the com */
    int has_mass;
    double omega[3], vcom[3];
    int has_omega, has_vcom;
    /* basis (after make_basis) */
    long r0;
    int nd, K;
    long dir_el[3], dir_base[3]; /* direction k = elem dir_el - elem dir_base (or a vector) */
    double ref[3][3];            /* reference values of the directions (K of them) */
    double Xp[3][3];             /* local coordinates X = Xp (r - r0) */
    mech_aff a_r0, a_dir[3];
} body;

typedef struct vobs {
    size_t i, j; /* coordinate i (and j, with -1, for relative observations) */
    int rel;
    double b;
} vobs;

/* A rigid-body row x_k . x_l = const by the elements of its two directions
 * (bodies that share both directions would state it twice). */
typedef struct rigid_key {
    long e1, b1, e2, b2;
} rigid_key;

typedef struct builder {
    const char *path;
    mech_scope sc;
    const char **pname;
    double *pval;
    mech_text ex; /* the sections after expansion of `for` */
    int dim;
    double grav[3];
    elem *el;
    size_t nel, capel;
    body *bd;
    size_t nbd, capbd;
    mech_model *m;
    mech_row *rows;
    size_t nrow, caprow;
    mech_mblock *mb;
    size_t nmb, capmb;
    vobs *obs;
    size_t nobs, capobs;
    rigid_key *rk;
    size_t nrk, caprk;
    int failed, status;
    char *err;
    size_t errlen;
} builder;

static void berr(builder *b, int line, const char *fmt, ...)
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

static void nomem(builder *b)
{
    if (!b->failed) {
        snprintf(b->err, b->errlen, "%s: out of memory", b->path);
        b->failed = 1;
        b->status = MBS_NO_MEMORY;
    }
}

/* Grow an array (element size sz) to hold n + 1 entries. */
static int grow(builder *b, void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, c * sz);
    if (!q) {
        nomem(b);
        return -1;
    }
    *p = q;
    *cap = c;
    return 0;
}

/* ---- values ------------------------------------------------------------------- */

/* Split a list at whitespace outside parentheses: items into buf (NUL-separated). */
static int split(const char *s, char *buf, size_t len, const char **item, int maxn)
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
static int numbers(builder *b, const char *v, int line, const char *what, double *out, int nmin,
                   int nmax, int *got)
{
    char buf[4096];
    const char *it[16];
    int n = split(v, buf, sizeof buf, it, 16);
    if (n < nmin || n > nmax) {
        if (nmin == nmax)
            berr(b, line, "%s: expected %d value%s, got '%s'", what, nmin, nmin > 1 ? "s" : "", v);
        else
            berr(b, line, "%s: expected %d to %d values, got '%s'", what, nmin, nmax, v);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char e[300];
        if (mech_eval_const(it[i], &b->sc, &out[i], e, sizeof e) != 0) {
            berr(b, line, "%s: %s", what, e);
            return -1;
        }
    }
    if (got)
        *got = n;
    return 0;
}

static int vec_of(builder *b, const char *v, int line, const char *what, double *x)
{
    x[0] = x[1] = x[2] = 0.0;
    return numbers(b, v, line, what, x, b->dim, b->dim, NULL);
}

static const char *key(builder *b, const mech_section *s, const char *k, int *line)
{
    (void)b;
    *line = s->line;
    return mech_get(s, k, line);
}

/* Every key of s must be in the NULL-terminated list. */
static void known_keys(builder *b, const mech_section *s, const char *const *keys)
{
    for (size_t i = 0; i < s->n; i++) {
        int ok = 0;
        for (const char *const *k = keys; *k; k++)
            ok |= strcmp(*k, s->kv[i].key) == 0;
        if (!ok)
            berr(b, s->kv[i].line, "unknown key '%s' in [%s %s]", s->kv[i].key, s->type, s->name);
    }
}

static double norm3(const double *x)
{
    return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

static double dot3(const double *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

static void cross3(const double *x, const double *y, double *z)
{
    double a = x[1] * y[2] - x[2] * y[1], c = x[2] * y[0] - x[0] * y[2],
           d = x[0] * y[1] - x[1] * y[0];
    z[0] = a, z[1] = c, z[2] = d;
}

/* ---- expansion of `for = VAR FROM TO` ----------------------------------------- */

/* s with every {expr} replaced by its value (the loop variable bound). */
static char *subst(builder *b, const char *s, const char *var, double val, int line)
{
    size_t cap = strlen(s) + 64, k = 0;
    char *out = malloc(cap);
    if (!out) {
        nomem(b);
        return NULL;
    }
    const char *names[MBS_MAX_PARAMS + 1];
    double vals[MBS_MAX_PARAMS + 1];
    size_t n = b->sc.n;
    for (size_t i = 0; i < n; i++)
        names[i] = b->sc.names[i], vals[i] = b->sc.values[i];
    if (var)
        names[n] = var, vals[n] = val, n++;
    mech_scope sc = {names, vals, n, 0};
    for (const char *p = s; *p;) {
        char piece[64];
        const char *add = p;
        size_t alen = 1;
        if (*p == '{') {
            const char *close = strchr(p, '}');
            if (!close) {
                berr(b, line, "'{' without '}' in '%s'", s);
                free(out);
                return NULL;
            }
            char inner[256], e[300];
            size_t il = (size_t)(close - p - 1);
            if (il >= sizeof inner) {
                berr(b, line, "expression in braces too long in '%s'", s);
                free(out);
                return NULL;
            }
            memcpy(inner, p + 1, il);
            inner[il] = '\0';
            double v;
            if (mech_eval_const(inner, &sc, &v, e, sizeof e) != 0) {
                berr(b, line, "%s", e);
                free(out);
                return NULL;
            }
            snprintf(piece, sizeof piece, "%.17g", v);
            add = piece;
            alen = strlen(piece);
            p = close + 1;
        } else {
            p++;
        }
        if (k + alen + 1 > cap) {
            cap = 2 * (k + alen + 1);
            char *o2 = realloc(out, cap);
            if (!o2) {
                free(out);
                nomem(b);
                return NULL;
            }
            out = o2;
        }
        memcpy(out + k, add, alen);
        k += alen;
    }
    out[k] = '\0';
    return out;
}

static void add_section(builder *b, const mech_section *src, const char *var, double val)
{
    mech_text *ex = &b->ex;
    if (grow(b, (void **)&ex->s, &ex->cap, ex->n, sizeof *ex->s))
        return;
    mech_section *d = &ex->s[ex->n];
    memset(d, 0, sizeof *d);
    d->line = src->line;
    d->type = strdup(src->type);
    d->name = subst(b, src->name, var, val, src->line);
    d->kv = calloc(src->n ? src->n : 1, sizeof *d->kv);
    if (!d->type || !d->name || !d->kv) {
        free(d->type);
        free(d->name);
        free(d->kv);
        nomem(b);
        return;
    }
    ex->n++;
    for (size_t i = 0; i < src->n; i++) {
        if (strcmp(src->kv[i].key, "for") == 0)
            continue;
        d->kv[d->n].key = strdup(src->kv[i].key);
        d->kv[d->n].val = subst(b, src->kv[i].val, var, val, src->kv[i].line);
        d->kv[d->n].line = src->kv[i].line;
        if (!d->kv[d->n].key || !d->kv[d->n].val) {
            free(d->kv[d->n].key);
            free(d->kv[d->n].val);
            nomem(b);
            return;
        }
        d->n++;
    }
}

static void expand(builder *b, const mech_text *tx)
{
    size_t total = 0;
    b->ex.path = NULL;
    for (size_t i = 0; i < tx->n && !b->failed; i++) {
        const mech_section *s = &tx->s[i];
        int line;
        const char *f = mech_get(s, "for", &line);
        if (!f) {
            add_section(b, s, NULL, 0);
            continue;
        }
        char buf[512];
        const char *it[4];
        int n = split(f, buf, sizeof buf, it, 4);
        double lo, hi;
        char e[300];
        if (n != 3 || !isalpha((unsigned char)it[0][0])) {
            berr(b, line, "for: expected 'VARIABLE FROM TO', got '%s'", f);
            return;
        }
        if (mech_eval_const(it[1], &b->sc, &lo, e, sizeof e) ||
            mech_eval_const(it[2], &b->sc, &hi, e, sizeof e)) {
            berr(b, line, "for: %s", e);
            return;
        }
        if (lo != floor(lo) || hi != floor(hi)) {
            berr(b, line, "for: bounds must be integers (got %g and %g)", lo, hi);
            return;
        }
        if (hi - lo + 1 > MAX_EXPAND - (double)total) {
            berr(b, line, "for: more than %d sections", MAX_EXPAND);
            return;
        }
        for (double v = lo; v <= hi && !b->failed; v++, total++)
            add_section(b, s, it[0], v);
    }
}

/* ---- names ------------------------------------------------------------------- */

static long find_elem(const builder *b, const char *name)
{
    for (size_t i = 0; i < b->nel; i++)
        if (strcmp(b->el[i].name, name) == 0)
            return (long)i;
    return -1;
}

static long find_body(const builder *b, const char *name)
{
    for (size_t i = 0; i < b->nbd; i++)
        if (strcmp(b->bd[i].name, name) == 0)
            return (long)i;
    return -1;
}

static int name_ok(builder *b, const char *name, int line, const char *what)
{
    size_t n = strlen(name);
    if (n == 0 || n >= NAME_LEN ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") != n) {
        berr(b, line, "%s name '%s' must be 1-%d characters of [A-Za-z0-9_.+-]", what, name,
             NAME_LEN - 1);
        return 0;
    }
    return 1;
}

static long new_elem(builder *b, const char *name, int vec, int ground, const double *x0,
                     int line)
{
    if (grow(b, (void **)&b->el, &b->capel, b->nel, sizeof *b->el))
        return -1;
    elem *e = &b->el[b->nel];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->vec = vec;
    e->ground = ground;
    e->line = line;
    memcpy(e->x0, x0, sizeof e->x0);
    e->blk = (size_t)-1;
    return (long)b->nel++;
}

static long body_root(builder *b, long i)
{
    while (b->bd[i].parent != i)
        i = b->bd[i].parent = b->bd[b->bd[i].parent].parent;
    return i;
}

static void attach(builder *b, long bi, long e)
{
    bi = body_root(b, bi);
    body *bd = &b->bd[bi];
    for (size_t i = 0; i < bd->nel; i++)
        if (bd->el[i] == (size_t)e)
            return;
    if (grow(b, (void **)&bd->el, &bd->capel, bd->nel, sizeof *bd->el))
        return;
    bd->el[bd->nel++] = (size_t)e;
}

/* An element named in a value: a declared point/vector, or coordinates (then a
 * new element NAME is created: ground when on_ground). */
static long elem_ref(builder *b, const char *v, int line, int vec, const char *newname,
                     int on_ground)
{
    char buf[512];
    const char *it[4];
    int n = split(v, buf, sizeof buf, it, 4);
    if (n == 1 && (isalpha((unsigned char)it[0][0]) || it[0][0] == '_') &&
        find_elem(b, it[0]) >= 0) {
        long e = find_elem(b, it[0]);
        if (b->el[e].vec != vec) {
            berr(b, line, "'%s' is a %s, expected a %s", it[0], b->el[e].vec ? "vector" : "point",
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
            berr(b, line, "undefined %s '%s'", vec ? "vector" : "point", it[0]);
            return -1;
        }
    }
    double x[3];
    if (vec_of(b, v, line, vec ? "axis" : "point", x))
        return -1;
    if (vec) {
        double nx = norm3(x);
        if (!(nx > 1e-12)) {
            berr(b, line, "zero-length axis '%s'", v);
            return -1;
        }
        for (int i = 0; i < 3; i++)
            x[i] /= nx;
    }
    if (find_elem(b, newname) >= 0) {
        berr(b, line, "duplicate name '%s'", newname);
        return -1;
    }
    return new_elem(b, newname, vec, on_ground, x, line);
}

static long body_ref(builder *b, const char *name, int line)
{
    long i = find_body(b, name);
    if (i < 0)
        berr(b, line, "undefined body '%s'", name);
    return i;
}

/* ---- affine expressions --------------------------------------------------------- */

static void aff_zero(mech_aff *e)
{
    memset(e, 0, sizeof *e);
}

/* (a I + b J) x in the plane, a x in space. */
static void pair_apply(int dim, double a, double bb, const double *x, double *y)
{
    if (dim == 2) {
        double y0 = a * x[0] - bb * x[1], y1 = a * x[1] + bb * x[0];
        y[0] = y0, y[1] = y1, y[2] = 0.0;
    } else {
        y[0] = a * x[0], y[1] = a * x[1], y[2] = a * x[2];
    }
}

/* dst += (a I + b J) src */
static void aff_add(builder *b, mech_aff *dst, const mech_aff *src, double a, double bb)
{
    double c[3];
    pair_apply(b->dim, a, bb, src->c, c);
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
                berr(b, 0, "internal: affine expression with more than %d terms", MECH_MAXT);
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

static void aff_elem(const builder *b, long e, mech_aff *out)
{
    aff_zero(out);
    if (b->el[e].ground) {
        memcpy(out->c, b->el[e].x0, sizeof out->c);
    } else {
        out->n = 1;
        out->t[0] = (mech_term){b->el[e].blk, 1.0, 0.0};
    }
}

static void aff_const(mech_aff *out, const double *x)
{
    aff_zero(out);
    memcpy(out->c, x, sizeof out->c);
}

/* ---- rows ----------------------------------------------------------------------- */

static mech_row *new_row(builder *b)
{
    if (grow(b, (void **)&b->rows, &b->caprow, b->nrow, sizeof *b->rows))
        return NULL;
    mech_row *r = &b->rows[b->nrow++];
    memset(r, 0, sizeof *r);
    r->f0 = -1;
    r->t[0].fn = r->t[1].fn = -1;
    return r;
}

/* Row a . bv + c = 0 unless both are constant (then it must hold already). */
static void row_dot(builder *b, const mech_aff *a, const mech_aff *bv, double c, int line)
{
    if (a->n == 0 && bv->n == 0) {
        double v = dot3(a->c, bv->c) + c;
        if (fabs(v) > 1e-9 * (1.0 + fabs(c)))
            berr(b, line, "a constraint between fixed elements does not hold (residual %.3g)", v);
        return;
    }
    mech_row *r = new_row(b);
    if (!r)
        return;
    r->nt = 1;
    r->t[0].a = *a;
    r->t[0].b = *bv;
    r->c = c;
}

/* Rows e_i . d = 0 (i < dim): d = 0 as dim linear rows. */
static void rows_zero(builder *b, const mech_aff *d, int line)
{
    for (int i = 0; i < b->dim; i++) {
        double ei[3] = {0, 0, 0};
        ei[i] = 1.0;
        mech_aff u;
        aff_const(&u, ei);
        row_dot(b, d, &u, 0.0, line);
    }
}

/* ---- body frames ----------------------------------------------------------------- */

/* Body-fixed point (vec = 0) or vector (vec = 1) with reference value x. */
static void body_aff(builder *b, const body *bd, const double *x, int vec, mech_aff *out)
{
    aff_zero(out);
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
            aff_add(b, out, &bd->a_dir[k], X, 0.0);
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
    return norm3(y);
}

/* Local-coordinate map of the chosen directions: Xp = (R^T R)^-1 R^T. */
static void set_pinv(builder *b, body *bd)
{
    int K = bd->K, dim = b->dim;
    double A[9] = {0}, Ai[9] = {0};
    for (int k = 0; k < K; k++)
        for (int l = 0; l < K; l++)
            A[3 * k + l] = dot3(bd->ref[k], bd->ref[l]);
    if (K == 0)
        return;
    gsl_matrix_view Av = gsl_matrix_view_array_with_tda(A, (size_t)K, (size_t)K, 3);
    gsl_matrix_view Aiv = gsl_matrix_view_array_with_tda(Ai, (size_t)K, (size_t)K, 3);
    gsl_permutation *p = gsl_permutation_alloc((size_t)K);
    int sg;
    if (!p) {
        nomem(b);
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
    aff_elem(b, e, &a);
    if (base >= 0) {
        mech_aff c;
        aff_elem(b, base, &c);
        aff_add(b, &a, &c, -1.0, 0.0);
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
    scale = fmax(scale / bd->m, dot3(d, d)) + 1e-300;
    if (outside_span(b, bd, d) > 1e-9 * sqrt(scale))
        return 0;
    for (int j = 0; j < 3; j++) {
        double col[3] = {bd->S[j], bd->S[3 + j], bd->S[6 + j]};
        if (outside_span(b, bd, col) > 1e-9 * scale * bd->m)
            return 0;
    }
    return 1;
}

static void make_basis(builder *b, long bi, size_t *nq)
{
    body *bd = &b->bd[bi];
    int dim = b->dim;
    bd->r0 = -1;
    for (size_t i = 0; i < bd->nel && bd->r0 < 0; i++)
        if (!b->el[bd->el[i]].vec)
            bd->r0 = (long)bd->el[i];
    if (bd->ground) { /* the ground: a fixed origin and the fixed axes */
        double o[3] = {0, 0, 0};
        long e = new_elem(b, "ground.origin", 0, 1, o, bd->line);
        if (e < 0)
            return;
        bd = &b->bd[bi];
        bd->r0 = e;
        for (int k = 0; k < dim; k++) {
            double ek[3] = {0, 0, 0};
            ek[k] = 1.0;
            mech_aff u;
            aff_const(&u, ek);
            bd->a_dir[k] = u;
            memcpy(bd->ref[k], ek, sizeof ek);
        }
        bd->K = dim;
        bd->nd = 0;
        aff_const(&bd->a_r0, o);
        set_pinv(b, bd);
        return;
    }
    if (bd->r0 < 0) { /* no point: an auxiliary one at the centre of mass */
        char nm[NAME_LEN + 8];
        snprintf(nm, sizeof nm, "%.50s.com", bd->name);
        long e = new_elem(b, nm, 0, 0, bd->com, bd->line);
        if (e < 0)
            return;
        b->el[e].blk = *nq;
        *nq += (size_t)dim;
        attach(b, bi, e);
        bd = &b->bd[bi];
        bd->r0 = e;
    }
    aff_elem(b, bd->r0, &bd->a_r0);
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
            double nx = norm3(x);
            if (nx < 1e-12)
                continue;
            if (bd->K > 0 && outside_span(b, bd, x) < 1e-8 * nx)
                continue;
            add_dir(b, bd, e, el->vec ? -1 : bd->r0, x);
            if (dim == 2) { /* J x1 */
                double jx[3] = {-x[1], x[0], 0};
                memcpy(bd->ref[1], jx, sizeof jx);
                bd->a_dir[1] = (mech_aff){{0, 0, 0}, 0, {{0, 0, 0}}};
                aff_add(b, &bd->a_dir[1], &bd->a_dir[0], 0.0, 1.0);
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
                                               1e-12 * (1.0 + norm3(p0))));
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
        double ny = norm3(y);
        for (int i = 0; i < 3; i++)
            y[i] /= ny;
        char nm[NAME_LEN + 8];
        snprintf(nm, sizeof nm, "%.50s.aux%d", bd->name, bd->nd);
        long e = new_elem(b, nm, 1, 0, y, bd->line);
        if (e < 0)
            return;
        b->el[e].blk = *nq;
        *nq += (size_t)dim;
        attach(b, bi, e);
        bd = &b->bd[bi];
        add_dir(b, bd, e, -1, y);
        if (dim == 2) {
            double jx[3] = {-y[1], y[0], 0};
            memcpy(bd->ref[1], jx, sizeof jx);
            aff_zero(&bd->a_dir[1]);
            aff_add(b, &bd->a_dir[1], &bd->a_dir[0], 0.0, 1.0);
            bd->K = 2;
        } else {
            bd->K = bd->nd;
        }
        set_pinv(b, bd);
    }
}

/* Rigid-body rows and the rows tying the other elements to the basis. */
static void body_rows(builder *b, long bi)
{
    body *bd = &b->bd[bi];
    for (int k = 0; k < bd->nd; k++)
        for (int l = k; l < bd->nd; l++) {
            rigid_key key = {bd->dir_el[k], bd->dir_base[k], bd->dir_el[l], bd->dir_base[l]};
            int seen = 0;
            for (size_t i = 0; i < b->nrk && !seen; i++) {
                const rigid_key *r = &b->rk[i];
                seen = (r->e1 == key.e1 && r->b1 == key.b1 && r->e2 == key.e2 && r->b2 == key.b2) ||
                       (r->e1 == key.e2 && r->b1 == key.b2 && r->e2 == key.e1 && r->b2 == key.b1);
            }
            if (seen)
                continue;
            if (grow(b, (void **)&b->rk, &b->caprk, b->nrk, sizeof *b->rk))
                return;
            b->rk[b->nrk++] = key;
            row_dot(b, &bd->a_dir[k], &bd->a_dir[l], -dot3(bd->ref[k], bd->ref[l]), bd->line);
        }
    for (size_t i = 0; i < bd->nel; i++) {
        long e = (long)bd->el[i];
        int basis = e == bd->r0;
        for (int k = 0; k < bd->nd; k++)
            basis |= bd->dir_el[k] == e;
        if (basis)
            continue;
        const elem *el = &b->el[e];
        double off = outside_span(b, bd, el->vec ? el->x0 : (double[3]){
            el->x0[0] - b->el[bd->r0].x0[0], el->x0[1] - b->el[bd->r0].x0[1],
            el->x0[2] - b->el[bd->r0].x0[2]});
        if (off > 1e-8 * (1.0 + norm3(el->x0))) {
            berr(b, el->line, "internal: element '%s' outside the frame of body '%s'", el->name,
                 bd->name);
            return;
        }
        mech_aff d, x;
        aff_elem(b, e, &d);
        body_aff(b, bd, el->x0, el->vec, &x);
        aff_add(b, &d, &x, -1.0, 0.0);
        rows_zero(b, &d, el->line);
    }
}

/* ---- mass ----------------------------------------------------------------------- */

static void add_mblock(builder *b, size_t r, size_t c, double complex v)
{
    if (creal(v) == 0.0 && cimag(v) == 0.0)
        return;
    if (grow(b, (void **)&b->mb, &b->capmb, b->nmb, sizeof *b->mb))
        return;
    b->mb[b->nmb++] = (mech_mblock){r, c, creal(v), cimag(v)};
}

/* The body's contribution to M and to the gravity force (Sect. 3.5). */
static void body_mass(builder *b, long bi, double *fg)
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
        pair_apply(dim, creal(w), cimag(w), b->grav, gg);
        for (int i = 0; i < dim; i++)
            fg[blk[r] + (size_t)i] += gg[i];
    }
}

/* ---- sections ----------------------------------------------------------------- */

static const char *const K_MECH[] = {"title", "citation", "dim", "gravity", "t0", "t_end",
                                     "singular", NULL};
static const char *const K_PARAM[] = {"value", "min", "max", "integer", "doc", NULL};
static const char *const K_POINT[] = {"at", "ground", "velocity", NULL};
static const char *const K_BODY[] = {"points", "vectors", "rod", "point_mass", "box", "section",
                                     "mass", "com", "inertia", "omega", "velocity", NULL};
static const char *const K_JOINT[] = {"type", "bodies", "at", "axis", "axis2", "points",
                                      "length", NULL};
static const char *const K_DRIVER[] = {"type", "joint", "angle", "points", "length", NULL};
static const char *const K_FORCE[] = {"type", "points", "k", "c", "length", "point", "value",
                                      "joint", NULL};
static const char *const K_REPORT[] = {"points", "angles", NULL};

static void do_mechanism(builder *b, const mech_section *s)
{
    known_keys(b, s, K_MECH);
    int line;
    const char *v = key(b, s, "dim", &line);
    double d = 2;
    if (v && numbers(b, v, line, "dim", &d, 1, 1, NULL))
        return;
    if (!v) {
        berr(b, s->line, "[mechanism]: missing 'dim = 2' or 'dim = 3'");
        return;
    }
    if (d != 2 && d != 3) {
        berr(b, line, "dim must be 2 or 3, got %g", d);
        return;
    }
    b->dim = (int)d;
    if ((v = key(b, s, "gravity", &line)) && vec_of(b, v, line, "gravity", b->grav))
        return;
    double t0 = 0, t1 = 10;
    if ((v = key(b, s, "t0", &line)) && numbers(b, v, line, "t0", &t0, 1, 1, NULL))
        return;
    if ((v = key(b, s, "t_end", &line)) && numbers(b, v, line, "t_end", &t1, 1, 1, NULL))
        return;
    if (!(t1 > t0)) {
        berr(b, line, "t_end (%g) must be after t0 (%g)", t1, t0);
        return;
    }
    b->m->t0 = t0;
    b->m->t_end = t1;
    if ((v = key(b, s, "singular", &line))) { /* the motion passes singular configurations */
        if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
            berr(b, line, "singular: expected yes or no, got '%s'", v);
            return;
        }
        b->m->singular_config = strcmp(v, "yes") == 0;
    }
}

static void do_point(builder *b, const mech_section *s, int vec)
{
    known_keys(b, s, K_POINT);
    if (!name_ok(b, s->name, s->line, vec ? "vector" : "point"))
        return;
    if (find_elem(b, s->name) >= 0) {
        berr(b, s->line, "duplicate name '%s' (first on line %d)", s->name,
             b->el[find_elem(b, s->name)].line);
        return;
    }
    if (strcmp(s->name, "ground") == 0) {
        berr(b, s->line, "'ground' is the name of the fixed body");
        return;
    }
    int la, lg, lv;
    const char *at = key(b, s, "at", &la), *gr = key(b, s, "ground", &lg),
               *vel = key(b, s, "velocity", &lv);
    if (!!at == !!gr) {
        berr(b, s->line, "[%s %s]: give exactly one of 'at = ...' (moving) or 'ground = ...' "
             "(fixed)", s->type, s->name);
        return;
    }
    double x[3];
    if (vec_of(b, at ? at : gr, at ? la : lg, vec ? "direction" : "position", x))
        return;
    if (vec) {
        double nx = norm3(x);
        if (!(nx > 1e-12)) {
            berr(b, at ? la : lg, "zero-length axis '%s'", at ? at : gr);
            return;
        }
        for (int i = 0; i < 3; i++)
            x[i] /= nx;
    }
    long e = new_elem(b, s->name, vec, gr != NULL, x, s->line);
    if (e < 0)
        return;
    if (vel) {
        if (gr) {
            berr(b, lv, "a ground %s has no velocity", vec ? "vector" : "point");
            return;
        }
        if (vec_of(b, vel, lv, "velocity", b->el[e].vel))
            return;
        b->el[e].has_vel = 1;
    }
}

/* Inertia about the com from its entries (global axes, reference configuration). */
static int inertia(builder *b, const char *v, int line, double *Iout)
{
    double x[9];
    int n;
    memset(Iout, 0, 9 * sizeof *Iout);
    if (b->dim == 2) {
        if (numbers(b, v, line, "inertia", x, 1, 1, NULL))
            return -1;
        if (x[0] < 0) {
            berr(b, line, "negative inertia %g", x[0]);
            return -1;
        }
        Iout[8] = x[0];
        return 0;
    }
    if (numbers(b, v, line, "inertia", x, 1, 9, &n))
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
        berr(b, line, "inertia: expected 1 (isotropic), 3 (principal), 6 (Ixx Iyy Izz Ixy Ixz "
             "Iyz) or 9 values, got %d", n);
        return -1;
    }
    double sc = 0;
    for (int i = 0; i < 9; i++)
        sc = fmax(sc, fabs(Iout[i]));
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(Iout[3 * i + j] - Iout[3 * j + i]) > 1e-12 * sc) {
                berr(b, line, "non-symmetric inertia: I[%d][%d] = %g, I[%d][%d] = %g", i + 1,
                     j + 1, Iout[3 * i + j], j + 1, i + 1, Iout[3 * j + i]);
                return -1;
            }
    double A[9], ev[3];
    memcpy(A, Iout, sizeof A);
    gsl_matrix_view Av = gsl_matrix_view_array(A, 3, 3);
    gsl_vector_view e = gsl_vector_view_array(ev, 3);
    gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc(3);
    if (!w) {
        nomem(b);
        return -1;
    }
    gsl_eigen_symm(&Av.matrix, &e.vector, w);
    gsl_eigen_symm_free(w);
    for (int i = 0; i < 3; i++)
        if (ev[i] < -1e-12 * sc) {
            berr(b, line, "negative inertia: principal moment %g", ev[i]);
            return -1;
        }
    for (int i = 0; i < 3; i++)
        if (ev[i] > ev[(i + 1) % 3] + ev[(i + 2) % 3] + 1e-12 * sc) {
            berr(b, line, "inertia violates the triangle inequality: principal moments %g, %g, "
                 "%g", ev[0], ev[1], ev[2]);
            return -1;
        }
    return 0;
}

/* Second moment about the com S = tr(I)/2 - I (space); (J/2) I in the plane, which
 * gives the same motion (only tr S enters planar rigid dynamics). */
static void second_moment(builder *b, const double *Ig, double *S)
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

static long point_named(builder *b, const char *name, int line)
{
    long e = find_elem(b, name);
    if (e < 0) {
        berr(b, line, "undefined point '%s'", name);
        return -1;
    }
    if (b->el[e].vec) {
        berr(b, line, "'%s' is a vector, expected a point", name);
        return -1;
    }
    return e;
}

static void do_body(builder *b, const mech_section *s)
{
    known_keys(b, s, K_BODY);
    if (!name_ok(b, s->name, s->line, "body"))
        return;
    if (strcmp(s->name, "ground") == 0 || find_body(b, s->name) >= 0) {
        berr(b, s->line, "duplicate body name '%s'", s->name);
        return;
    }
    if (grow(b, (void **)&b->bd, &b->capbd, b->nbd, sizeof *b->bd))
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
        if ((v = key(b, s, vec ? "vectors" : "points", &line))) {
            int n = split(v, buf, sizeof buf, it, 512);
            if (n < 0) {
                berr(b, line, "list too long");
                return;
            }
            for (int i = 0; i < n; i++) {
                long e = find_elem(b, it[i]);
                if (e < 0 || b->el[e].vec != vec) {
                    berr(b, line, "undefined %s '%s'", vec ? "vector" : "point", it[i]);
                    return;
                }
                attach(b, bi, e);
            }
        }
    bd = &b->bd[bi];
    int lm;
    const char *mv = key(b, s, "mass", &lm);
    if (!mv) {
        berr(b, s->line, "body '%s': missing mass", s->name);
        return;
    }
    if (numbers(b, mv, lm, "mass", &bd->m, 1, 1, NULL))
        return;
    if (bd->m < 0) {
        berr(b, lm, "negative mass %g", bd->m);
        return;
    }
    double Ig[9] = {0};
    int have_I = 0, have_com = 0;
    int lr, lp, lb, li, lc, ls;
    const char *rod = key(b, s, "rod", &lr), *pm = key(b, s, "point_mass", &lp),
               *box = key(b, s, "box", &lb), *iv = key(b, s, "inertia", &li),
               *cv = key(b, s, "com", &lc), *sec = key(b, s, "section", &ls);
    if (!!rod + !!pm + !!box > 1) {
        berr(b, s->line, "body '%s': give at most one of rod, point_mass, box", s->name);
        return;
    }
    if (sec && !rod) {
        berr(b, ls, "section needs rod = P Q");
        return;
    }
    if (cv) {
        long e = -1;
        int n = split(cv, buf, sizeof buf, it, 4);
        if (n == 1 && (e = find_elem(b, it[0])) >= 0) {
            if (b->el[e].vec) {
                berr(b, lc, "'%s' is a vector, expected a point", it[0]);
                return;
            }
            memcpy(bd->com, b->el[e].x0, sizeof bd->com);
        } else if (vec_of(b, cv, lc, "com", bd->com)) {
            return;
        }
        have_com = 1;
    }
    if (rod) {
        int n = split(rod, buf, sizeof buf, it, 4);
        if (n != 2) {
            berr(b, lr, "rod: expected two point names, got '%s'", rod);
            return;
        }
        long P = point_named(b, it[0], lr), Q = P >= 0 ? point_named(b, it[1], lr) : -1;
        if (Q < 0)
            return;
        attach(b, bi, P);
        attach(b, bi, Q);
        bd = &b->bd[bi];
        double u[3], L;
        for (int i = 0; i < 3; i++)
            u[i] = b->el[Q].x0[i] - b->el[P].x0[i];
        L = norm3(u);
        if (!(L > 0)) {
            berr(b, lr, "rod %s %s has zero length", it[0], it[1]);
            return;
        }
        double sq = 0;
        if (sec && numbers(b, sec, ls, "section", &sq, 1, 1, NULL))
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
        long P = point_named(b, pm, lp);
        if (P < 0)
            return;
        attach(b, bi, P);
        bd = &b->bd[bi];
        memcpy(bd->com, b->el[P].x0, sizeof bd->com);
        have_com = have_I = 1;
    } else if (box) {
        double a[3] = {0, 0, 0};
        if (numbers(b, box, lb, "box", a, b->dim, b->dim, NULL))
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
        if (inertia(b, iv, li, Ig))
            return;
        have_I = 1;
    }
    if (!have_com) {
        berr(b, s->line, "body '%s': missing com (or rod, point_mass)", s->name);
        return;
    }
    if (!have_I) {
        berr(b, s->line, "body '%s': missing inertia (or rod, box, point_mass)", s->name);
        return;
    }
    second_moment(b, Ig, bd->S);
    int lo, lv;
    const char *om = key(b, s, "omega", &lo), *vc = key(b, s, "velocity", &lv);
    if (om) {
        if (b->dim == 2) {
            if (numbers(b, om, lo, "omega", &bd->omega[2], 1, 1, NULL))
                return;
        } else if (vec_of(b, om, lo, "omega", bd->omega)) {
            return;
        }
        bd->has_omega = 1;
    }
    if (vc) {
        if (vec_of(b, vc, lv, "velocity", bd->vcom))
            return;
        bd->has_vcom = 1;
    }
}

/* ---- joints, drivers, forces (first pass: elements and frames) ----------------- */

typedef struct pending {
    const mech_section *s;
    int kind; /* 0 joint, 1 driver, 2 force */
    int type;
    long A, B;       /* bodies (-1: none) */
    long P, Q, U, W; /* elements */
    double e[3];     /* reference unit vector normal to the axis */
} pending;

enum { J_REVOLUTE, J_SPHERICAL, J_UNIVERSAL, J_PRISMATIC, J_CYLINDRICAL, J_WELD, J_POL,
       J_DISTANCE };
static const char *const JT[] = {"revolute", "spherical", "universal", "prismatic",
                                 "cylindrical", "weld", "point-on-line", "distance", NULL};

static int two_bodies(builder *b, const mech_section *s, long *A, long *B)
{
    int line;
    const char *v = key(b, s, "bodies", &line);
    if (!v) {
        berr(b, s->line, "[%s %s]: missing 'bodies = A B'", s->type, s->name);
        return -1;
    }
    char buf[512];
    const char *it[4];
    if (split(v, buf, sizeof buf, it, 4) != 2) {
        berr(b, line, "bodies: expected two body names, got '%s'", v);
        return -1;
    }
    *A = body_ref(b, it[0], line);
    *B = *A >= 0 ? body_ref(b, it[1], line) : -1;
    if (*B < 0)
        return -1;
    if (body_root(b, *A) == body_root(b, *B)) {
        berr(b, line, "a joint needs two different bodies, got '%s' twice", it[0]);
        return -1;
    }
    return 0;
}

/* A unit vector normal to u. */
static void normal_of(const double *u, double *e)
{
    double a[3] = {0, 0, 0};
    int k = fabs(u[0]) <= fabs(u[1]) && fabs(u[0]) <= fabs(u[2]) ? 0
            : fabs(u[1]) <= fabs(u[2])                             ? 1
                                                                   : 2;
    a[k] = 1.0;
    cross3(u, a, e);
    double n = norm3(e);
    for (int i = 0; i < 3; i++)
        e[i] /= n;
}

static void named(char *out, size_t len, const char *a, const char *suffix)
{
    snprintf(out, len, "%.40s.%s", a, suffix);
}

static void do_joint(builder *b, const mech_section *s, pending *pj)
{
    known_keys(b, s, K_JOINT);
    if (!name_ok(b, s->name, s->line, "joint"))
        return;
    int lt;
    const char *ty = key(b, s, "type", &lt);
    if (!ty) {
        berr(b, s->line, "joint '%s': missing type (%s, %s, ...)", s->name, JT[0], JT[1]);
        return;
    }
    int t = -1;
    for (int i = 0; JT[i]; i++)
        if (strcmp(JT[i], ty) == 0)
            t = i;
    if (t < 0) {
        berr(b, lt, "unknown joint type '%s' (revolute, spherical, universal, prismatic, "
             "cylindrical, weld, point-on-line, distance)", ty);
        return;
    }
    *pj = (pending){s, 0, t, -1, -1, -1, -1, -1, -1, {1, 0, 0}};
    int line;
    char nm[NAME_LEN];
    if (t == J_DISTANCE) {
        const char *v = key(b, s, "points", &line);
        char buf[512];
        const char *it[4];
        if (!v || split(v, buf, sizeof buf, it, 4) != 2) {
            berr(b, v ? line : s->line, "distance joint: expected 'points = P Q'");
            return;
        }
        pj->P = point_named(b, it[0], line);
        pj->Q = pj->P >= 0 ? point_named(b, it[1], line) : -1;
        return;
    }
    if (two_bodies(b, s, &pj->A, &pj->B))
        return;
    if (t == J_WELD) {
        long ra = body_root(b, pj->A), rb = body_root(b, pj->B);
        body *A = &b->bd[ra], *B = &b->bd[rb];
        /* the merged body: mass, com and second moments add (parallel axes) */
        double m = A->m + B->m, c[3], S[9];
        for (int i = 0; i < 3; i++)
            c[i] = m > 0 ? (A->m * A->com[i] + B->m * B->com[i]) / m : A->com[i];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                S[3 * i + j] = A->S[3 * i + j] + B->S[3 * i + j] +
                               A->m * (A->com[i] - c[i]) * (A->com[j] - c[j]) +
                               B->m * (B->com[i] - c[i]) * (B->com[j] - c[j]);
        A->m = m;
        memcpy(A->com, c, sizeof c);
        memcpy(A->S, S, sizeof S);
        A->ground |= B->ground;
        A->need_frame |= B->need_frame;
        if (B->has_omega || B->has_vcom) {
            if (!A->has_omega)
                memcpy(A->omega, B->omega, sizeof A->omega), A->has_omega = B->has_omega;
            if (!A->has_vcom)
                memcpy(A->vcom, B->vcom, sizeof A->vcom), A->has_vcom = B->has_vcom;
        }
        B->parent = (int)ra;
        for (size_t i = 0; i < B->nel; i++)
            attach(b, ra, (long)b->bd[rb].el[i]);
        return;
    }
    const char *at = key(b, s, "at", &line);
    if (!at) {
        berr(b, s->line, "joint '%s': missing 'at = POINT'", s->name);
        return;
    }
    int aground = b->bd[body_root(b, pj->A)].ground, bground = b->bd[body_root(b, pj->B)].ground;
    named(nm, sizeof nm, s->name, "at");
    pj->P = elem_ref(b, at, line, 0, nm, aground || bground);
    if (pj->P < 0)
        return;
    int lax;
    const char *ax = key(b, s, "axis", &lax);
    int needs_axis = b->dim == 3 && (t == J_REVOLUTE || t == J_UNIVERSAL || t == J_PRISMATIC ||
                                     t == J_CYLINDRICAL || t == J_POL);
    needs_axis |= b->dim == 2 && (t == J_PRISMATIC || t == J_POL);
    if (needs_axis && !ax) {
        berr(b, s->line, "joint '%s' (%s): missing axis", s->name, ty);
        return;
    }
    if (!needs_axis && ax && !(b->dim == 2 && t == J_REVOLUTE)) {
        berr(b, lax, "joint '%s' (%s) takes no axis", s->name, ty);
        return;
    }
    if (needs_axis) {
        named(nm, sizeof nm, s->name, "axis");
        int shared = t == J_REVOLUTE || t == J_CYLINDRICAL || t == J_PRISMATIC;
        pj->U = elem_ref(b, ax, lax, 1, nm, shared ? aground || bground : aground);
        if (pj->U < 0)
            return;
        normal_of(b->el[pj->U].x0, pj->e);
        if (b->dim == 2) {
            const double *u = b->el[pj->U].x0;
            pj->e[0] = -u[1], pj->e[1] = u[0], pj->e[2] = 0;
        }
    } else if (b->dim == 2) {
        pj->e[0] = 1, pj->e[1] = 0, pj->e[2] = 0;
    }
    switch (t) {
    case J_REVOLUTE:
        attach(b, pj->A, pj->P);
        attach(b, pj->B, pj->P);
        if (b->dim == 3) {
            attach(b, pj->A, pj->U);
            attach(b, pj->B, pj->U);
        }
        break;
    case J_SPHERICAL:
        attach(b, pj->A, pj->P);
        attach(b, pj->B, pj->P);
        break;
    case J_UNIVERSAL: {
        int l2;
        const char *a2 = key(b, s, "axis2", &l2);
        if (!a2) {
            berr(b, s->line, "universal joint '%s': missing axis2 (the axis on %s)", s->name,
                 b->bd[pj->B].name);
            return;
        }
        named(nm, sizeof nm, s->name, "axis2");
        pj->W = elem_ref(b, a2, l2, 1, nm, bground);
        if (pj->W < 0)
            return;
        attach(b, pj->A, pj->P);
        attach(b, pj->B, pj->P);
        attach(b, pj->A, pj->U);
        attach(b, pj->B, pj->W);
        break;
    }
    case J_PRISMATIC:
    case J_CYLINDRICAL:
    case J_POL: {
        /* P on B; the line through Q (A's copy of P) along U (fixed in A) */
        named(nm, sizeof nm, s->name, "base");
        pj->Q = new_elem(b, nm, 0, aground, b->el[pj->P].x0, line);
        if (pj->Q < 0)
            return;
        attach(b, pj->B, pj->P);
        attach(b, pj->A, pj->Q);
        attach(b, pj->A, pj->U);
        if (t == J_CYLINDRICAL || t == J_PRISMATIC) /* the axis is fixed in both */
            attach(b, pj->B, pj->U);
        b->bd[body_root(b, pj->A)].need_frame = 1;
        if (t == J_PRISMATIC)
            b->bd[body_root(b, pj->B)].need_frame = 1;
        break;
    }
    default:
        break;
    }
}

static long joint_named(builder *b, pending *pend, size_t np, const char *name, int line,
                        int want_revolute)
{
    for (size_t i = 0; i < np; i++)
        if (pend[i].kind == 0 && pend[i].s && strcmp(pend[i].s->name, name) == 0) {
            if (want_revolute && pend[i].type != J_REVOLUTE &&
                !(b->dim == 2 && pend[i].type == J_SPHERICAL)) {
                berr(b, line, "'%s' is not a revolute joint", name);
                return -1;
            }
            return (long)i;
        }
    berr(b, line, "undefined joint '%s'", name);
    return -1;
}

/* ---- second pass: rows of joints and drivers, forces, outputs ------------------ */

static int add_fun(builder *b, const char *text, int line, int op)
{
    mech_scope sc = b->sc;
    sc.allow_t = 1;
    char e[300];
    mech_expr *x = mech_expr_parse(text, &sc, e, sizeof e);
    if (!x) {
        berr(b, line, "%s", e);
        return -1;
    }
    mech_model *m = b->m;
    if (grow(b, (void **)&m->expr, &m->capexpr, m->nexpr, sizeof *m->expr)) {
        mech_expr_free(x);
        return -1;
    }
    m->expr[m->nexpr++] = x;
    mech_tfun *f = realloc(m->fun, (m->nfun + 1) * sizeof *f);
    if (!f) {
        nomem(b);
        return -1;
    }
    m->fun = f;
    m->fun[m->nfun] = (mech_tfun){x, op};
    if (mech_expr_uses_t(x))
        m->rheonomic = 1;
    return (int)m->nfun++;
}

static const body *root_of(builder *b, long i)
{
    return &b->bd[body_root(b, i)];
}

/* Body-fixed vectors of a revolute joint: a (= e at the reference), w = axis x e. */
static void joint_vectors(builder *b, const pending *pj, long bodyi, mech_aff *a, mech_aff *w)
{
    const body *bd = root_of(b, bodyi);
    double wr[3];
    if (b->dim == 2) {
        wr[0] = -pj->e[1], wr[1] = pj->e[0], wr[2] = 0;
    } else {
        cross3(b->el[pj->U].x0, pj->e, wr);
    }
    body_aff(b, bd, pj->e, 1, a);
    body_aff(b, bd, wr, 1, w);
}

static void joint_rows(builder *b, pending *pj)
{
    const mech_section *s = pj->s;
    int line = s->line;
    mech_aff a, c, d;
    if (pj->type == J_DISTANCE) {
        double L;
        int ll;
        const char *lv = key(b, s, "length", &ll);
        aff_elem(b, pj->P, &d);
        aff_elem(b, pj->Q, &c);
        aff_add(b, &d, &c, -1.0, 0.0);
        double x[3];
        for (int i = 0; i < 3; i++)
            x[i] = b->el[pj->P].x0[i] - b->el[pj->Q].x0[i];
        L = norm3(x);
        if (lv && numbers(b, lv, ll, "length", &L, 1, 1, NULL))
            return;
        if (L < 0) {
            berr(b, ll, "negative length %g", L);
            return;
        }
        row_dot(b, &d, &d, -L * L, line);
        return;
    }
    const body *A = root_of(b, pj->A), *B = root_of(b, pj->B);
    switch (pj->type) {
    case J_UNIVERSAL:
        body_aff(b, A, b->el[pj->U].x0, 1, &a);
        body_aff(b, B, b->el[pj->W].x0, 1, &c);
        row_dot(b, &a, &c, -dot3(b->el[pj->U].x0, b->el[pj->W].x0), line);
        break;
    case J_PRISMATIC:
    case J_CYLINDRICAL:
    case J_POL: {
        aff_elem(b, pj->P, &d);
        aff_elem(b, pj->Q, &c);
        aff_add(b, &d, &c, -1.0, 0.0);
        const double *u = b->el[pj->U].x0;
        double n1[3], n2[3];
        if (b->dim == 2) {
            n1[0] = -u[1], n1[1] = u[0], n1[2] = 0;
        } else {
            normal_of(u, n1);
            cross3(u, n1, n2);
        }
        body_aff(b, A, n1, 1, &a);
        row_dot(b, &d, &a, 0.0, line);
        if (b->dim == 3) {
            body_aff(b, A, n2, 1, &a);
            row_dot(b, &d, &a, 0.0, line);
        }
        if (pj->type == J_PRISMATIC && b->dim == 3) { /* no rotation about the axis
                                                          (the shared axis locks the rest) */
            body_aff(b, B, n1, 1, &c);
            body_aff(b, A, n2, 1, &a);
            row_dot(b, &c, &a, 0.0, line);
        }
        break;
    }
    default:
        break;
    }
}

static void driver_rows(builder *b, const mech_section *s, pending *pend, size_t np)
{
    known_keys(b, s, K_DRIVER);
    int lt, line;
    const char *ty = key(b, s, "type", &lt);
    if (!ty || (strcmp(ty, "angle") != 0 && strcmp(ty, "distance") != 0)) {
        berr(b, ty ? lt : s->line, "driver '%s': type must be angle or distance%s%s%s", s->name,
             ty ? " (got '" : "", ty ? ty : "", ty ? "')" : "");
        return;
    }
    if (strcmp(ty, "angle") == 0) {
        const char *jn = key(b, s, "joint", &line), *fv;
        int lf;
        if (!jn) {
            berr(b, s->line, "angle driver '%s': missing joint", s->name);
            return;
        }
        long j = joint_named(b, pend, np, jn, line, 1);
        if (j < 0)
            return;
        if (!(fv = key(b, s, "angle", &lf))) {
            berr(b, s->line, "angle driver '%s': missing angle = f(t)", s->name);
            return;
        }
        int fs = add_fun(b, fv, lf, MECH_F_SIN), fc = fs >= 0 ? add_fun(b, fv, lf, MECH_F_NEGCOS)
                                                              : -1;
        if (fc < 0)
            return;
        /* g = sin(theta) (bB . aA) - cos(theta) (bB . wA): zero when B is turned by theta */
        mech_aff aA, wA, bB, wB;
        joint_vectors(b, &pend[j], pend[j].A, &aA, &wA);
        joint_vectors(b, &pend[j], pend[j].B, &bB, &wB);
        mech_row *r = new_row(b);
        if (!r)
            return;
        r->nt = 2;
        r->t[0] = (mech_cterm){bB, aA, fs};
        r->t[1] = (mech_cterm){bB, wA, fc};
        return;
    }
    const char *pv = key(b, s, "points", &line), *lv;
    char buf[512];
    const char *it[4];
    int ll;
    if (!pv || split(pv, buf, sizeof buf, it, 4) != 2) {
        berr(b, pv ? line : s->line, "distance driver: expected 'points = P Q'");
        return;
    }
    long P = point_named(b, it[0], line), Q = P >= 0 ? point_named(b, it[1], line) : -1;
    if (Q < 0)
        return;
    if (!(lv = key(b, s, "length", &ll))) {
        berr(b, s->line, "distance driver '%s': missing length = f(t)", s->name);
        return;
    }
    int f = add_fun(b, lv, ll, MECH_F_NEGSQ);
    if (f < 0)
        return;
    mech_aff d, c;
    aff_elem(b, P, &d);
    aff_elem(b, Q, &c);
    aff_add(b, &d, &c, -1.0, 0.0);
    mech_row *r = new_row(b);
    if (!r)
        return;
    r->nt = 1;
    r->t[0].a = d;
    r->t[0].b = d;
    r->f0 = f;
}

static void force_item(builder *b, const mech_section *s, pending *pend, size_t np, double *fc)
{
    known_keys(b, s, K_FORCE);
    int lt, line;
    const char *ty = key(b, s, "type", &lt);
    mech_model *m = b->m;
    if (!ty || (strcmp(ty, "spring") && strcmp(ty, "constant") && strcmp(ty, "torque"))) {
        berr(b, ty ? lt : s->line, "force '%s': type must be spring, constant or torque",
             s->name);
        return;
    }
    if (strcmp(ty, "spring") == 0) {
        const char *pv = key(b, s, "points", &line);
        char buf[512];
        const char *it[4];
        if (!pv || split(pv, buf, sizeof buf, it, 4) != 2) {
            berr(b, pv ? line : s->line, "spring: expected 'points = P Q'");
            return;
        }
        long P = point_named(b, it[0], line), Q = P >= 0 ? point_named(b, it[1], line) : -1;
        if (Q < 0)
            return;
        mech_spring sp = {.k = 0, .c = 0};
        aff_elem(b, P, &sp.d);
        mech_aff c;
        aff_elem(b, Q, &c);
        aff_add(b, &sp.d, &c, -1.0, 0.0);
        double x[3];
        for (int i = 0; i < 3; i++)
            x[i] = b->el[P].x0[i] - b->el[Q].x0[i];
        sp.l0 = norm3(x);
        const char *v;
        int lv;
        if ((v = key(b, s, "k", &lv)) && numbers(b, v, lv, "k", &sp.k, 1, 1, NULL))
            return;
        if ((v = key(b, s, "c", &lv)) && numbers(b, v, lv, "c", &sp.c, 1, 1, NULL))
            return;
        if ((v = key(b, s, "length", &lv)) && numbers(b, v, lv, "length", &sp.l0, 1, 1, NULL))
            return;
        if (sp.k < 0 || sp.c < 0 || sp.l0 < 0) {
            berr(b, s->line, "spring '%s': k, c and length must be >= 0", s->name);
            return;
        }
        mech_spring *ns = realloc(m->spr, (m->nspr + 1) * sizeof *ns);
        if (!ns) {
            nomem(b);
            return;
        }
        m->spr = ns;
        m->spr[m->nspr++] = sp;
        if (sp.c > 0)
            m->conservative = 0;
        return;
    }
    if (strcmp(ty, "constant") == 0) {
        const char *pv = key(b, s, "point", &line), *vv;
        int lv;
        long P = pv ? point_named(b, pv, line) : -1;
        if (!pv)
            berr(b, s->line, "constant force '%s': missing point", s->name);
        if (P < 0)
            return;
        double F[3];
        if (!(vv = key(b, s, "value", &lv))) {
            berr(b, s->line, "constant force '%s': missing value", s->name);
            return;
        }
        if (vec_of(b, vv, lv, "value", F))
            return;
        if (!b->el[P].ground)
            for (int i = 0; i < b->dim; i++)
                fc[b->el[P].blk + (size_t)i] += F[i];
        return;
    }
    const char *jn = key(b, s, "joint", &line), *vv;
    int lv;
    if (!jn) {
        berr(b, s->line, "torque '%s': missing joint", s->name);
        return;
    }
    long j = joint_named(b, pend, np, jn, line, 1);
    if (j < 0)
        return;
    if (!(vv = key(b, s, "value", &lv))) {
        berr(b, s->line, "torque '%s': missing value = T(t)", s->name);
        return;
    }
    int f = add_fun(b, vv, lv, MECH_F_ID);
    if (f < 0)
        return;
    mech_torque tq = {.fn = f};
    joint_vectors(b, &pend[j], pend[j].B, &tq.aB, &tq.wB);
    joint_vectors(b, &pend[j], pend[j].A, &tq.aA, &tq.wA);
    mech_torque *nt = realloc(m->trq, (m->ntrq + 1) * sizeof *nt);
    if (!nt) {
        nomem(b);
        return;
    }
    m->trq = nt;
    m->trq[m->ntrq++] = tq;
    m->conservative = 0;
}

static int add_out(builder *b, const char *name, int kind, int comp, const mech_aff *a,
                   const mech_aff *bb, const mech_aff *w)
{
    mech_model *m = b->m;
    mech_output *o = realloc(m->out, (m->nout + 1) * sizeof *o);
    if (!o) {
        nomem(b);
        return -1;
    }
    m->out = o;
    o = &m->out[m->nout++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    o->kind = kind;
    o->comp = comp;
    if (a)
        o->a = *a;
    if (bb)
        o->b = *bb;
    if (w)
        o->w = *w;
    return 0;
}

static void do_report(builder *b, const mech_section *s, pending *pend, size_t np)
{
    known_keys(b, s, K_REPORT);
    char buf[4096], nm[NAME_LEN + 8];
    const char *it[512];
    int line;
    const char *v = key(b, s, "points", &line);
    static const char xyz[] = "xyz";
    if (v) {
        int n = split(v, buf, sizeof buf, it, 512);
        for (int i = 0; i < n && !b->failed; i++) {
            long P = point_named(b, it[i], line);
            if (P < 0)
                return;
            mech_aff a;
            aff_elem(b, P, &a);
            for (int kind = MECH_OUT_POS; kind <= MECH_OUT_VEL; kind++)
                for (int c = 0; c < b->dim; c++) {
                    snprintf(nm, sizeof nm, "%s%c_%.50s", kind == MECH_OUT_VEL ? "v" : "", xyz[c],
                             it[i]);
                    if (add_out(b, nm, kind, c, &a, NULL, NULL))
                        return;
                }
        }
    }
    if ((v = key(b, s, "angles", &line))) {
        int n = split(v, buf, sizeof buf, it, 512);
        for (int i = 0; i < n && !b->failed; i++) {
            long j = joint_named(b, pend, np, it[i], line, 1);
            if (j < 0)
                return;
            mech_aff aA, wA, bB, wB;
            joint_vectors(b, &pend[j], pend[j].A, &aA, &wA);
            joint_vectors(b, &pend[j], pend[j].B, &bB, &wB);
            snprintf(nm, sizeof nm, "angle_%.50s", it[i]);
            if (add_out(b, nm, MECH_OUT_ANGLE, 0, &aA, &bB, &wA))
                return;
        }
    }
}

static void add_obs(builder *b, size_t i, size_t j, int rel, double v)
{
    if (grow(b, (void **)&b->obs, &b->capobs, b->nobs, sizeof *b->obs))
        return;
    b->obs[b->nobs++] = (vobs){i, j, rel, v};
}

/* Velocities given in the file: of points, and of bodies (omega, velocity of the com). */
static void velocity_obs(builder *b)
{
    int dim = b->dim;
    for (size_t e = 0; e < b->nel; e++)
        if (b->el[e].has_vel)
            for (int i = 0; i < dim; i++)
                add_obs(b, b->el[e].blk + (size_t)i, 0, 0, b->el[e].vel[i]);
    for (size_t k = 0; k < b->nbd; k++) {
        const body *bd = &b->bd[k];
        if (bd->parent != (int)k || bd->ground || (!bd->has_omega && !bd->has_vcom))
            continue;
        const elem *r0 = &b->el[bd->r0];
        for (size_t i = 0; i < bd->nel; i++) {
            const elem *el = &b->el[bd->el[i]];
            if (el->ground)
                continue;
            double rel[3], v[3];
            for (int c = 0; c < 3; c++)
                rel[c] = el->vec ? el->x0[c]
                                 : el->x0[c] - (bd->has_vcom ? bd->com[c] : r0->x0[c]);
            cross3(bd->omega, rel, v);
            int absolute = el->vec || bd->has_vcom || r0->ground || (long)bd->el[i] == bd->r0;
            if ((long)bd->el[i] == bd->r0 && !bd->has_vcom)
                continue; /* only relative information about the base point */
            for (int c = 0; c < dim; c++) {
                if (absolute)
                    add_obs(b, el->blk + (size_t)c, 0, 0,
                            v[c] + (!el->vec && bd->has_vcom ? bd->vcom[c] : 0.0));
                else
                    add_obs(b, el->blk + (size_t)c, r0->blk + (size_t)c, 1, v[c]);
            }
        }
    }
}

/* Merge M blocks with the same (r, c). */
static int cmp_mb(const void *x, const void *y)
{
    const mech_mblock *a = x, *c = y;
    return a->r != c->r ? (a->r < c->r ? -1 : 1) : a->c != c->c ? (a->c < c->c ? -1 : 1) : 0;
}

static void param_scope(builder *b, const mbs_param_def *pd, const double *pv, size_t np)
{
    b->pname = calloc(np + 1, sizeof *b->pname);
    b->pval = calloc(np + 1, sizeof *b->pval);
    if (!b->pname || !b->pval) {
        nomem(b);
        return;
    }
    for (size_t i = 0; i < np; i++)
        b->pname[i] = pd[i].name, b->pval[i] = pv[i];
    b->sc = (mech_scope){b->pname, b->pval, np, 0};
}

int mech_build(const mech_text *tx, const mbs_param_def *pd, const double *pv, size_t np,
               mech_model **out, char *err, size_t errlen)
{
    builder B = {.path = tx->path, .err = err, .errlen = errlen, .status = MBS_OK};
    builder *b = &B;
    pending *pend = NULL;
    size_t npend = 0;
    *out = NULL;
    b->m = calloc(1, sizeof *b->m);
    if (!b->m) {
        nomem(b);
        return b->status;
    }
    b->m->conservative = 1;
    b->m->rank_defect = -1;
    param_scope(b, pd, pv, np);
    if (!b->failed)
        expand(b, tx);
    const mech_text *ex = &b->ex;
    /* [mechanism] first */
    int nmech = 0;
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "mechanism") == 0) {
            if (nmech++) {
                berr(b, ex->s[i].line, "a second [mechanism] section");
                break;
            }
            do_mechanism(b, &ex->s[i]);
        }
    if (!nmech && !b->failed)
        berr(b, 1, "no [mechanism] section (it gives dim = 2 or 3)");
    b->m->dim = b->dim;
    /* known section types */
    static const char *const types[] = {"mechanism", "parameter", "point",  "vector", "body",
                                        "joint",     "driver",    "force",  "report", NULL};
    for (size_t i = 0; i < ex->n && !b->failed; i++) {
        int ok = 0;
        for (const char *const *t = types; *t; t++)
            ok |= strcmp(*t, ex->s[i].type) == 0;
        if (!ok)
            berr(b, ex->s[i].line, "unknown element type '%s' (mechanism, parameter, point, "
                 "vector, body, joint, driver, force, report)", ex->s[i].type);
        else if (strcmp(ex->s[i].type, "parameter") == 0)
            known_keys(b, &ex->s[i], K_PARAM);
        else if (strcmp(ex->s[i].type, "report") != 0 && strcmp(ex->s[i].type, "mechanism") != 0 &&
                 !*ex->s[i].name)
            berr(b, ex->s[i].line, "[%s] needs a name: [%s NAME]", ex->s[i].type, ex->s[i].type);
    }
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "point") == 0 || strcmp(ex->s[i].type, "vector") == 0)
            do_point(b, &ex->s[i], ex->s[i].type[0] == 'v');
    /* the ground body, then the bodies */
    if (!b->failed && !grow(b, (void **)&b->bd, &b->capbd, 0, sizeof *b->bd)) {
        memset(&b->bd[0], 0, sizeof *b->bd);
        snprintf(b->bd[0].name, NAME_LEN, "ground");
        b->bd[0].ground = 1;
        b->nbd = 1;
        for (size_t e = 0; e < b->nel; e++)
            if (b->el[e].ground)
                attach(b, 0, (long)e);
    }
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "body") == 0)
            do_body(b, &ex->s[i]);
    pend = calloc(ex->n + 1, sizeof *pend);
    if (!pend)
        nomem(b);
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "joint") == 0) {
            for (size_t k = 0; k < npend; k++)
                if (strcmp(pend[k].s->name, ex->s[i].name) == 0)
                    berr(b, ex->s[i].line, "duplicate joint name '%s' (first on line %d)",
                         ex->s[i].name, pend[k].s->line);
            if (!b->failed)
                do_joint(b, &ex->s[i], &pend[npend++]);
        }
    /* drivers and torques need body frames on both sides of their joint */
    for (size_t i = 0; i < ex->n && !b->failed; i++) {
        const mech_section *s = &ex->s[i];
        int line, lt;
        const char *jn = NULL, *ty = mech_get(s, "type", &lt);
        if (strcmp(s->type, "driver") == 0 && ty && strcmp(ty, "angle") == 0)
            jn = key(b, s, "joint", &line);
        if (strcmp(s->type, "force") == 0 && ty && strcmp(ty, "torque") == 0)
            jn = key(b, s, "joint", &line);
        if (strcmp(s->type, "report") == 0 && mech_get(s, "angles", &line)) {
            char buf[4096];
            const char *it[512];
            int n = split(mech_get(s, "angles", &line), buf, sizeof buf, it, 512);
            for (int k = 0; k < n && !b->failed; k++) {
                long j = joint_named(b, pend, npend, it[k], line, 1);
                if (j >= 0) {
                    b->bd[body_root(b, pend[j].A)].need_frame = 1;
                    b->bd[body_root(b, pend[j].B)].need_frame = 1;
                }
            }
        }
        if (jn) {
            long j = joint_named(b, pend, npend, jn, line, 1);
            if (j >= 0) {
                b->bd[body_root(b, pend[j].A)].need_frame = 1;
                b->bd[body_root(b, pend[j].B)].need_frame = 1;
            }
        }
    }
    /* coordinates of the declared moving elements; every one must belong to a body */
    size_t nq = 0;
    if (!b->failed) {
        int *owned = calloc(b->nel + 1, sizeof *owned);
        if (!owned)
            nomem(b);
        for (size_t k = 0; owned && k < b->nbd; k++)
            for (size_t i = 0; i < b->bd[k].nel; i++)
                owned[b->bd[k].el[i]] = 1;
        for (size_t e = 0; owned && e < b->nel && !b->failed; e++) {
            if (b->el[e].ground)
                continue;
            if (!owned[e])
                berr(b, b->el[e].line, "%s '%s' belongs to no body", b->el[e].vec ? "vector" : "point",
                     b->el[e].name);
            b->el[e].blk = nq;
            nq += (size_t)b->dim;
        }
        free(owned);
    }
    /* bases (roots of the weld sets only) */
    for (size_t k = 0; k < b->nbd && !b->failed; k++)
        if (b->bd[k].parent == (int)k)
            make_basis(b, (long)k, &nq);
    b->m->nq = nq;
    double *fc = calloc(nq + 1, sizeof *fc);
    if (!fc)
        nomem(b);
    b->m->f_const = fc;
    for (size_t k = 0; k < b->nbd && !b->failed; k++)
        if (b->bd[k].parent == (int)k) {
            body_rows(b, (long)k);
            body_mass(b, (long)k, fc);
        }
    for (size_t k = 0; k < npend && !b->failed; k++)
        joint_rows(b, &pend[k]);
    for (size_t i = 0; i < ex->n && !b->failed; i++) {
        if (strcmp(ex->s[i].type, "driver") == 0)
            driver_rows(b, &ex->s[i], pend, npend);
        else if (strcmp(ex->s[i].type, "force") == 0)
            force_item(b, &ex->s[i], pend, npend, fc);
        else if (strcmp(ex->s[i].type, "report") == 0)
            do_report(b, &ex->s[i], pend, npend);
    }
    if (!b->failed && nq == 0)
        berr(b, 1, "the mechanism has no moving point or vector");
    if (!b->failed)
        velocity_obs(b);
    if (!b->failed) {
        mech_model *m = b->m;
        if (m->rheonomic)
            m->conservative = 0;
        m->nl = b->nrow;
        m->rows = b->rows;
        b->rows = NULL;
        qsort(b->mb, b->nmb, sizeof *b->mb, cmp_mb);
        size_t w = 0;
        for (size_t i = 0; i < b->nmb; i++) {
            if (w > 0 && b->mb[w - 1].r == b->mb[i].r && b->mb[w - 1].c == b->mb[i].c) {
                b->mb[w - 1].a += b->mb[i].a;
                b->mb[w - 1].b += b->mb[i].b;
            } else {
                b->mb[w++] = b->mb[i];
            }
        }
        m->mb = b->mb;
        m->nmb = w;
        b->mb = NULL;
        m->q0 = calloc(nq, sizeof *m->q0);
        m->v0 = calloc(nq, sizeof *m->v0);
        if (!m->q0 || !m->v0)
            nomem(b);
        for (size_t e = 0; !b->failed && e < b->nel; e++)
            if (!b->el[e].ground)
                memcpy(m->q0 + b->el[e].blk, b->el[e].x0, (size_t)b->dim * sizeof(double));
        /* a moving point of a body with zero mass and no other: singular M */
        for (size_t k = 0; k < b->nbd; k++)
            if (b->bd[k].parent == (int)k && !b->bd[k].ground && b->bd[k].m == 0.0)
                m->singular_mass = 1;
    }
    if (!b->failed) {
        size_t no = b->nobs;
        double *A = calloc(3 * no + 1, sizeof *A);
        if (!A) {
            nomem(b);
        } else {
            for (size_t i = 0; i < no; i++) {
                A[3 * i] = (double)b->obs[i].i;
                A[3 * i + 1] = b->obs[i].rel ? (double)b->obs[i].j : -1.0;
                A[3 * i + 2] = b->obs[i].b;
            }
            char msg[600];
            int st = mech_complete_initial(b->m, A, no, msg, sizeof msg);
            if (st != MBS_OK) {
                snprintf(err, errlen, "%s: %s", b->path, msg);
                b->failed = 1;
                b->status = st;
            }
            free(A);
        }
    }
    /* clean-up */
    for (size_t k = 0; k < b->nbd; k++)
        free(b->bd[k].el);
    free(b->bd);
    free(b->el);
    free(b->rows);
    free(b->mb);
    free(b->obs);
    free(b->rk);
    free(pend);
    free(b->pname);
    free(b->pval);
    mech_text_free(&b->ex);
    if (b->failed) {
        mech_model_free(b->m);
        return b->status;
    }
    *out = b->m;
    return MBS_OK;
}

void mech_model_free(mech_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nexpr; i++)
        mech_expr_free(m->expr[i]);
    free(m->expr);
    free(m->fun);
    free(m->rows);
    free(m->mb);
    free(m->f_const);
    free(m->spr);
    free(m->trq);
    free(m->out);
    free(m->q0);
    free(m->v0);
    free(m->lambda0);
    free(m);
}
