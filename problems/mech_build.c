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
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_build.h"

static const char *const K_MECH[] = {"title", "citation", "dim", "gravity", "t0", "t_end",
                                     "singular", "output_steps", "reference", NULL};
static const char *const K_PARAM[] = {"value", "min", "max", "integer", "doc", NULL};
static const char *const K_POINT[] = {"at", "ground", "velocity", NULL};

/* ---- expansion of `for = VAR FROM TO` ----------------------------------------- */

/* s with every {expr} replaced by its value (the loop variable bound). */
static char *subst(builder *b, const char *s, const char *var, double val, int line)
{
    size_t cap = strlen(s) + 64, k = 0;
    char *out = malloc(cap);
    if (!out) {
        mech_nomem(b);
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
                mech_berr(b, line, "'{' without '}' in '%s'", s);
                free(out);
                return NULL;
            }
            char inner[256], e[300];
            size_t il = (size_t)(close - p - 1);
            if (il >= sizeof inner) {
                mech_berr(b, line, "expression in braces too long in '%s'", s);
                free(out);
                return NULL;
            }
            memcpy(inner, p + 1, il);
            inner[il] = '\0';
            double v;
            if (mech_eval_const(inner, &sc, &v, e, sizeof e) != 0) {
                mech_berr(b, line, "%s", e);
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
                mech_nomem(b);
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
    if (mech_grow(b, (void **)&ex->s, &ex->cap, ex->n, sizeof *ex->s))
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
        mech_nomem(b);
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
            mech_nomem(b);
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
        int n = mech_split(f, buf, sizeof buf, it, 4);
        double lo, hi;
        char e[300];
        if (n != 3 || !isalpha((unsigned char)it[0][0])) {
            mech_berr(b, line, "for: expected 'VARIABLE FROM TO', got '%s'", f);
            return;
        }
        if (mech_eval_const(it[1], &b->sc, &lo, e, sizeof e) ||
            mech_eval_const(it[2], &b->sc, &hi, e, sizeof e)) {
            mech_berr(b, line, "for: %s", e);
            return;
        }
        if (lo != floor(lo) || hi != floor(hi)) {
            mech_berr(b, line, "for: bounds must be integers (got %g and %g)", lo, hi);
            return;
        }
        if (hi - lo + 1 > MAX_EXPAND - (double)total) {
            mech_berr(b, line, "for: more than %d sections", MAX_EXPAND);
            return;
        }
        for (double v = lo; v <= hi && !b->failed; v++, total++)
            add_section(b, s, it[0], v);
    }
}

/* ---- sections ----------------------------------------------------------------- */

static void do_mechanism(builder *b, const mech_section *s)
{
    mech_known_keys(b, s, K_MECH);
    int line;
    const char *v = mech_key(b, s, "dim", &line);
    double d = 2;
    if (v && mech_numbers(b, v, line, "dim", &d, 1, 1, NULL))
        return;
    if (!v) {
        mech_berr(b, s->line, "[mechanism]: missing 'dim = 2' or 'dim = 3'");
        return;
    }
    if (d != 2 && d != 3) {
        mech_berr(b, line, "dim must be 2 or 3, got %g", d);
        return;
    }
    b->dim = (int)d;
    if ((v = mech_key(b, s, "gravity", &line)) && mech_vec_of(b, v, line, "gravity", b->grav))
        return;
    double t0 = 0, t1 = 10;
    if ((v = mech_key(b, s, "t0", &line)) && mech_numbers(b, v, line, "t0", &t0, 1, 1, NULL))
        return;
    if ((v = mech_key(b, s, "t_end", &line)) && mech_numbers(b, v, line, "t_end", &t1, 1, 1, NULL))
        return;
    if (!(t1 > t0)) {
        mech_berr(b, line, "t_end (%g) must be after t0 (%g)", t1, t0);
        return;
    }
    b->m->t0 = t0;
    b->m->t_end = t1;
    double steps = 0;
    if ((v = mech_key(b, s, "output_steps", &line)) &&
        mech_numbers(b, v, line, "output_steps", &steps, 1, 1, NULL))
        return;
    if (steps < 0 || steps > 1e7 || steps != floor(steps)) {
        mech_berr(b, line, "output_steps must be a whole number in [0, 1e7], got %g", steps);
        return;
    }
    b->m->output_steps = (long)steps;
    if ((v = mech_key(b, s, "reference", &line))) { /* a reduction (mech_reference.h) */
        if (strlen(v) >= sizeof b->m->reference) {
            mech_berr(b, line, "reference: name too long '%s'", v);
            return;
        }
        snprintf(b->m->reference, sizeof b->m->reference, "%s", v);
        b->m->reference_line = line;
    }
    if ((v = mech_key(b, s, "singular", &line))) { /* the motion passes singular configurations */
        if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
            mech_berr(b, line, "singular: expected yes or no, got '%s'", v);
            return;
        }
        b->m->singular_config = strcmp(v, "yes") == 0;
    }
}

static void do_point(builder *b, const mech_section *s, int vec)
{
    mech_known_keys(b, s, K_POINT);
    if (!mech_name_ok(b, s->name, s->line, vec ? "vector" : "point"))
        return;
    if (mech_find_elem(b, s->name) >= 0) {
        mech_berr(b, s->line, "duplicate name '%s' (first on line %d)", s->name,
             b->el[mech_find_elem(b, s->name)].line);
        return;
    }
    if (strcmp(s->name, "ground") == 0) {
        mech_berr(b, s->line, "'ground' is the name of the fixed body");
        return;
    }
    int la, lg, lv;
    const char *at = mech_key(b, s, "at", &la), *gr = mech_key(b, s, "ground", &lg),
               *vel = mech_key(b, s, "velocity", &lv);
    if (!!at == !!gr) {
        mech_berr(b, s->line, "[%s %s]: give exactly one of 'at = ...' (moving) or 'ground = ...' "
             "(fixed)", s->type, s->name);
        return;
    }
    double x[3];
    if (mech_vec_of(b, at ? at : gr, at ? la : lg, vec ? "direction" : "position", x))
        return;
    if (vec) {
        double nx = mech_norm3(x);
        if (!(nx > 1e-12)) {
            mech_berr(b, at ? la : lg, "zero-length axis '%s'", at ? at : gr);
            return;
        }
        for (int i = 0; i < 3; i++)
            x[i] /= nx;
    }
    long e = mech_new_elem(b, s->name, vec, gr != NULL, x, s->line);
    if (e < 0)
        return;
    if (vel) {
        if (gr) {
            mech_berr(b, lv, "a ground %s has no velocity", vec ? "vector" : "point");
            return;
        }
        if (mech_vec_of(b, vel, lv, "velocity", b->el[e].vel))
            return;
        b->el[e].has_vel = 1;
    }
}

static void add_obs(builder *b, size_t i, size_t j, int rel, double v)
{
    if (mech_grow(b, (void **)&b->obs, &b->capobs, b->nobs, sizeof *b->obs))
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
            mech_cross3(bd->omega, rel, v);
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
        mech_nomem(b);
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
        mech_nomem(b);
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
                mech_berr(b, ex->s[i].line, "a second [mechanism] section");
                break;
            }
            do_mechanism(b, &ex->s[i]);
        }
    if (!nmech && !b->failed)
        mech_berr(b, 1, "no [mechanism] section (it gives dim = 2 or 3)");
    b->m->dim = b->dim;
    /* known section types */
    static const char *const types[] = {"mechanism", "parameter", "point",  "vector", "body",
                                        "joint",     "driver",    "force",  "report", NULL};
    for (size_t i = 0; i < ex->n && !b->failed; i++) {
        int ok = 0;
        for (const char *const *t = types; *t; t++)
            ok |= strcmp(*t, ex->s[i].type) == 0;
        if (!ok)
            mech_berr(b, ex->s[i].line, "unknown element type '%s' (mechanism, parameter, point, "
                 "vector, body, joint, driver, force, report)", ex->s[i].type);
        else if (strcmp(ex->s[i].type, "parameter") == 0)
            mech_known_keys(b, &ex->s[i], K_PARAM);
        else if (strcmp(ex->s[i].type, "report") != 0 && strcmp(ex->s[i].type, "mechanism") != 0 &&
                 !*ex->s[i].name)
            mech_berr(b, ex->s[i].line, "[%s] needs a name: [%s NAME]", ex->s[i].type, ex->s[i].type);
    }
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "point") == 0 || strcmp(ex->s[i].type, "vector") == 0)
            do_point(b, &ex->s[i], ex->s[i].type[0] == 'v');
    /* the ground body, then the bodies */
    if (!b->failed && !mech_grow(b, (void **)&b->bd, &b->capbd, 0, sizeof *b->bd)) {
        memset(&b->bd[0], 0, sizeof *b->bd);
        snprintf(b->bd[0].name, NAME_LEN, "ground");
        b->bd[0].ground = 1;
        b->nbd = 1;
        for (size_t e = 0; e < b->nel; e++)
            if (b->el[e].ground)
                mech_attach(b, 0, (long)e);
    }
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "body") == 0)
            mech_do_body(b, &ex->s[i]);
    pend = calloc(ex->n + 1, sizeof *pend);
    if (!pend)
        mech_nomem(b);
    for (size_t i = 0; i < ex->n && !b->failed; i++)
        if (strcmp(ex->s[i].type, "joint") == 0) {
            for (size_t k = 0; k < npend; k++)
                if (strcmp(pend[k].s->name, ex->s[i].name) == 0)
                    mech_berr(b, ex->s[i].line, "duplicate joint name '%s' (first on line %d)",
                         ex->s[i].name, pend[k].s->line);
            if (!b->failed)
                mech_do_joint(b, &ex->s[i], &pend[npend++]);
        }
    /* drivers and torques need body frames on both sides of their joint */
    for (size_t i = 0; i < ex->n && !b->failed; i++) {
        const mech_section *s = &ex->s[i];
        int line, lt;
        const char *jn = NULL, *ty = mech_get(s, "type", &lt);
        if (strcmp(s->type, "driver") == 0 && ty && strcmp(ty, "angle") == 0)
            jn = mech_key(b, s, "joint", &line);
        if (strcmp(s->type, "force") == 0 && ty && strcmp(ty, "torque") == 0)
            jn = mech_key(b, s, "joint", &line);
        if (strcmp(s->type, "report") == 0 && mech_get(s, "angles", &line)) {
            char buf[4096];
            const char *it[512];
            int n = mech_split(mech_get(s, "angles", &line), buf, sizeof buf, it, 512);
            for (int k = 0; k < n && !b->failed; k++) {
                long j = mech_joint_named(b, pend, npend, it[k], line, 1);
                if (j >= 0) {
                    b->bd[mech_body_root(b, pend[j].A)].need_frame = 1;
                    b->bd[mech_body_root(b, pend[j].B)].need_frame = 1;
                }
            }
        }
        if (jn) {
            long j = mech_joint_named(b, pend, npend, jn, line, 1);
            if (j >= 0) {
                b->bd[mech_body_root(b, pend[j].A)].need_frame = 1;
                b->bd[mech_body_root(b, pend[j].B)].need_frame = 1;
            }
        }
    }
    /* coordinates of the declared moving elements; every one must belong to a body */
    size_t nq = 0;
    if (!b->failed) {
        int *owned = calloc(b->nel + 1, sizeof *owned);
        if (!owned)
            mech_nomem(b);
        for (size_t k = 0; owned && k < b->nbd; k++)
            for (size_t i = 0; i < b->bd[k].nel; i++)
                owned[b->bd[k].el[i]] = 1;
        for (size_t e = 0; owned && e < b->nel && !b->failed; e++) {
            if (b->el[e].ground)
                continue;
            if (!owned[e])
                mech_berr(b, b->el[e].line, "%s '%s' belongs to no body", b->el[e].vec ? "vector" : "point",
                     b->el[e].name);
            b->el[e].blk = nq;
            nq += (size_t)b->dim;
        }
        free(owned);
    }
    /* bases (roots of the weld sets only) */
    for (size_t k = 0; k < b->nbd && !b->failed; k++)
        if (b->bd[k].parent == (int)k)
            mech_make_basis(b, (long)k, &nq);
    b->m->nq = nq;
    double *fc = calloc(nq + 1, sizeof *fc);
    if (!fc)
        mech_nomem(b);
    b->m->f_const = fc;
    for (size_t k = 0; k < b->nbd && !b->failed; k++)
        if (b->bd[k].parent == (int)k) {
            mech_body_rows(b, (long)k);
            mech_body_mass(b, (long)k, fc);
        }
    for (size_t k = 0; k < npend && !b->failed; k++)
        mech_joint_rows(b, &pend[k]);
    for (size_t i = 0; i < ex->n && !b->failed; i++) {
        if (strcmp(ex->s[i].type, "driver") == 0)
            mech_driver_rows(b, &ex->s[i], pend, npend);
        else if (strcmp(ex->s[i].type, "force") == 0)
            mech_force_item(b, &ex->s[i], pend, npend, fc);
        else if (strcmp(ex->s[i].type, "report") == 0)
            mech_do_report(b, &ex->s[i], pend, npend);
    }
    if (!b->failed && nq == 0)
        mech_berr(b, 1, "the mechanism has no moving point or vector");
    if (!b->failed)
        velocity_obs(b);
    if (!b->failed) {
        mech_model *m = b->m;
        if (m->rheonomic)
            m->conservative = 0;
        m->nl = b->nrow;
        m->rows = b->rows;
        b->rows = NULL;
        if (b->nmb) /* qsort wants a valid pointer even for no elements */
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
        m->out_names = calloc(m->nout + 1, sizeof *m->out_names);
        if (!m->out_names)
            mech_nomem(b);
        for (size_t i = 0; m->out_names && i < m->nout; i++)
            m->out_names[i] = m->out[i].name;
        m->q0 = calloc(nq, sizeof *m->q0);
        m->v0 = calloc(nq, sizeof *m->v0);
        if (!m->q0 || !m->v0)
            mech_nomem(b);
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
            mech_nomem(b);
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
    free(m->out_names);
    free(m->q0);
    free(m->v0);
    free(m->lambda0);
    free(m);
}
