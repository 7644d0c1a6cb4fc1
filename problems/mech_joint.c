/* Mechanism files: joints, drivers, forces and reported quantities (mech_build.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_build.h"

static const char *const K_JOINT[] = {"type", "bodies", "at", "axis", "axis2", "points",
                                      "length", NULL};
static const char *const K_DRIVER[] = {"type", "joint", "angle", "points", "length", NULL};
static const char *const K_FORCE[] = {"type", "points", "k", "c", "length", "point", "value",
                                      "joint", NULL};
static const char *const K_REPORT[] = {"points", "coordinates", "angles", NULL};

/* ---- joints, drivers, forces (first pass: elements and frames) ----------------- */

static const char *const JT[] = {"revolute", "spherical", "universal", "prismatic",
                                 "cylindrical", "weld", "point-on-line", "distance", NULL};

static int two_bodies(builder *b, const mech_section *s, long *A, long *B)
{
    int line;
    const char *v = mech_key(b, s, "bodies", &line);
    if (!v) {
        mech_berr(b, s->line, "[%s %s]: missing 'bodies = A B'", s->type, s->name);
        return -1;
    }
    char buf[512];
    const char *it[4];
    if (mech_split(v, buf, sizeof buf, it, 4) != 2) {
        mech_berr(b, line, "bodies: expected two body names, got '%s'", v);
        return -1;
    }
    *A = mech_body_ref(b, it[0], line);
    *B = *A >= 0 ? mech_body_ref(b, it[1], line) : -1;
    if (*B < 0)
        return -1;
    if (mech_body_root(b, *A) == mech_body_root(b, *B)) {
        mech_berr(b, line, "a joint needs two different bodies, got '%s' twice", it[0]);
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
    mech_cross3(u, a, e);
    double n = mech_norm3(e);
    for (int i = 0; i < 3; i++)
        e[i] /= n;
}

static void named(char *out, size_t len, const char *a, const char *suffix)
{
    snprintf(out, len, "%.40s.%s", a, suffix);
}

void mech_do_joint(builder *b, const mech_section *s, pending *pj)
{
    mech_known_keys(b, s, K_JOINT);
    if (!mech_name_ok(b, s->name, s->line, "joint"))
        return;
    int lt;
    const char *ty = mech_key(b, s, "type", &lt);
    if (!ty) {
        mech_berr(b, s->line, "joint '%s': missing type (%s, %s, ...)", s->name, JT[0], JT[1]);
        return;
    }
    int t = -1;
    for (int i = 0; JT[i]; i++)
        if (strcmp(JT[i], ty) == 0)
            t = i;
    if (t < 0) {
        mech_berr(b, lt, "unknown joint type '%s' (revolute, spherical, universal, prismatic, "
             "cylindrical, weld, point-on-line, distance)", ty);
        return;
    }
    *pj = (pending){s, 0, t, -1, -1, -1, -1, -1, -1, {1, 0, 0}};
    int line;
    char nm[NAME_LEN];
    if (t == J_DISTANCE) {
        const char *v = mech_key(b, s, "points", &line);
        char buf[512];
        const char *it[4];
        if (!v || mech_split(v, buf, sizeof buf, it, 4) != 2) {
            mech_berr(b, v ? line : s->line, "distance joint: expected 'points = P Q'");
            return;
        }
        pj->P = mech_point_named(b, it[0], line);
        pj->Q = pj->P >= 0 ? mech_point_named(b, it[1], line) : -1;
        return;
    }
    if (two_bodies(b, s, &pj->A, &pj->B))
        return;
    if (t == J_WELD) {
        long ra = mech_body_root(b, pj->A), rb = mech_body_root(b, pj->B);
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
            mech_attach(b, ra, (long)b->bd[rb].el[i]);
        return;
    }
    const char *at = mech_key(b, s, "at", &line);
    if (!at) {
        mech_berr(b, s->line, "joint '%s': missing 'at = POINT'", s->name);
        return;
    }
    int aground = b->bd[mech_body_root(b, pj->A)].ground, bground = b->bd[mech_body_root(b, pj->B)].ground;
    named(nm, sizeof nm, s->name, "at");
    pj->P = mech_elem_ref(b, at, line, 0, nm, aground || bground);
    if (pj->P < 0)
        return;
    int lax;
    const char *ax = mech_key(b, s, "axis", &lax);
    int needs_axis = b->dim == 3 && (t == J_REVOLUTE || t == J_UNIVERSAL || t == J_PRISMATIC ||
                                     t == J_CYLINDRICAL || t == J_POL);
    needs_axis |= b->dim == 2 && (t == J_PRISMATIC || t == J_POL);
    if (needs_axis && !ax) {
        mech_berr(b, s->line, "joint '%s' (%s): missing axis", s->name, ty);
        return;
    }
    if (!needs_axis && ax && !(b->dim == 2 && t == J_REVOLUTE)) {
        mech_berr(b, lax, "joint '%s' (%s) takes no axis", s->name, ty);
        return;
    }
    if (needs_axis) {
        named(nm, sizeof nm, s->name, "axis");
        int shared = t == J_REVOLUTE || t == J_CYLINDRICAL || t == J_PRISMATIC;
        pj->U = mech_elem_ref(b, ax, lax, 1, nm, shared ? aground || bground : aground);
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
        mech_attach(b, pj->A, pj->P);
        mech_attach(b, pj->B, pj->P);
        if (b->dim == 3) {
            mech_attach(b, pj->A, pj->U);
            mech_attach(b, pj->B, pj->U);
        }
        break;
    case J_SPHERICAL:
        mech_attach(b, pj->A, pj->P);
        mech_attach(b, pj->B, pj->P);
        break;
    case J_UNIVERSAL: {
        int l2;
        const char *a2 = mech_key(b, s, "axis2", &l2);
        if (!a2) {
            mech_berr(b, s->line, "universal joint '%s': missing axis2 (the axis on %s)", s->name,
                 b->bd[pj->B].name);
            return;
        }
        named(nm, sizeof nm, s->name, "axis2");
        pj->W = mech_elem_ref(b, a2, l2, 1, nm, bground);
        if (pj->W < 0)
            return;
        mech_attach(b, pj->A, pj->P);
        mech_attach(b, pj->B, pj->P);
        mech_attach(b, pj->A, pj->U);
        mech_attach(b, pj->B, pj->W);
        break;
    }
    case J_PRISMATIC:
    case J_CYLINDRICAL:
    case J_POL: {
        /* P on B; the line through Q (A's copy of P) along U (fixed in A) */
        named(nm, sizeof nm, s->name, "base");
        pj->Q = mech_new_elem(b, nm, 0, aground, b->el[pj->P].x0, line);
        if (pj->Q < 0)
            return;
        mech_attach(b, pj->B, pj->P);
        mech_attach(b, pj->A, pj->Q);
        mech_attach(b, pj->A, pj->U);
        if (t == J_CYLINDRICAL || t == J_PRISMATIC) /* the axis is fixed in both */
            mech_attach(b, pj->B, pj->U);
        b->bd[mech_body_root(b, pj->A)].need_frame = 1;
        if (t == J_PRISMATIC)
            b->bd[mech_body_root(b, pj->B)].need_frame = 1;
        break;
    }
    default:
        break;
    }
}

long mech_joint_named(builder *b, pending *pend, size_t np, const char *name, int line,
                        int want_revolute)
{
    for (size_t i = 0; i < np; i++)
        if (pend[i].kind == 0 && pend[i].s && strcmp(pend[i].s->name, name) == 0) {
            if (want_revolute && pend[i].type != J_REVOLUTE &&
                !(b->dim == 2 && pend[i].type == J_SPHERICAL)) {
                mech_berr(b, line, "'%s' is not a revolute joint", name);
                return -1;
            }
            return (long)i;
        }
    mech_berr(b, line, "undefined joint '%s'", name);
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
        mech_berr(b, line, "%s", e);
        return -1;
    }
    mech_model *m = b->m;
    if (mech_grow(b, (void **)&m->expr, &m->capexpr, m->nexpr, sizeof *m->expr)) {
        mech_expr_free(x);
        return -1;
    }
    m->expr[m->nexpr++] = x;
    mech_tfun *f = realloc(m->fun, (m->nfun + 1) * sizeof *f);
    if (!f) {
        mech_nomem(b);
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
    return &b->bd[mech_body_root(b, i)];
}

/* Body-fixed vectors of a revolute joint: a (= e at the reference), w = axis x e. */
static void joint_vectors(builder *b, const pending *pj, long bodyi, mech_aff *a, mech_aff *w)
{
    const body *bd = root_of(b, bodyi);
    double wr[3];
    if (b->dim == 2) {
        wr[0] = -pj->e[1], wr[1] = pj->e[0], wr[2] = 0;
    } else {
        mech_cross3(b->el[pj->U].x0, pj->e, wr);
    }
    mech_body_aff(b, bd, pj->e, 1, a);
    mech_body_aff(b, bd, wr, 1, w);
}

void mech_joint_rows(builder *b, pending *pj)
{
    const mech_section *s = pj->s;
    int line = s->line;
    mech_aff a, c, d;
    if (pj->type == J_DISTANCE) {
        double L;
        int ll;
        const char *lv = mech_key(b, s, "length", &ll);
        mech_aff_elem(b, pj->P, &d);
        mech_aff_elem(b, pj->Q, &c);
        mech_aff_add(b, &d, &c, -1.0, 0.0);
        double x[3];
        for (int i = 0; i < 3; i++)
            x[i] = b->el[pj->P].x0[i] - b->el[pj->Q].x0[i];
        L = mech_norm3(x);
        if (lv && mech_numbers(b, lv, ll, "length", &L, 1, 1, NULL))
            return;
        if (L < 0) {
            mech_berr(b, ll, "negative length %g", L);
            return;
        }
        mech_row_dot(b, &d, &d, -L * L, line);
        return;
    }
    const body *A = root_of(b, pj->A), *B = root_of(b, pj->B);
    switch (pj->type) {
    case J_UNIVERSAL:
        mech_body_aff(b, A, b->el[pj->U].x0, 1, &a);
        mech_body_aff(b, B, b->el[pj->W].x0, 1, &c);
        mech_row_dot(b, &a, &c, -mech_dot3(b->el[pj->U].x0, b->el[pj->W].x0), line);
        break;
    case J_PRISMATIC:
    case J_CYLINDRICAL:
    case J_POL: {
        mech_aff_elem(b, pj->P, &d);
        mech_aff_elem(b, pj->Q, &c);
        mech_aff_add(b, &d, &c, -1.0, 0.0);
        const double *u = b->el[pj->U].x0;
        double n1[3], n2[3];
        if (b->dim == 2) {
            n1[0] = -u[1], n1[1] = u[0], n1[2] = 0;
        } else {
            normal_of(u, n1);
            mech_cross3(u, n1, n2);
        }
        mech_body_aff(b, A, n1, 1, &a);
        mech_row_dot(b, &d, &a, 0.0, line);
        if (b->dim == 3) {
            mech_body_aff(b, A, n2, 1, &a);
            mech_row_dot(b, &d, &a, 0.0, line);
        }
        if (pj->type == J_PRISMATIC && b->dim == 3) { /* no rotation about the axis
                                                          (the shared axis locks the rest) */
            mech_body_aff(b, B, n1, 1, &c);
            mech_body_aff(b, A, n2, 1, &a);
            mech_row_dot(b, &c, &a, 0.0, line);
        }
        break;
    }
    default:
        break;
    }
}

void mech_driver_rows(builder *b, const mech_section *s, pending *pend, size_t np)
{
    mech_known_keys(b, s, K_DRIVER);
    int lt, line;
    const char *ty = mech_key(b, s, "type", &lt);
    if (!ty || (strcmp(ty, "angle") != 0 && strcmp(ty, "distance") != 0)) {
        mech_berr(b, ty ? lt : s->line, "driver '%s': type must be angle or distance%s%s%s", s->name,
             ty ? " (got '" : "", ty ? ty : "", ty ? "')" : "");
        return;
    }
    if (strcmp(ty, "angle") == 0) {
        const char *jn = mech_key(b, s, "joint", &line), *fv;
        int lf;
        if (!jn) {
            mech_berr(b, s->line, "angle driver '%s': missing joint", s->name);
            return;
        }
        long j = mech_joint_named(b, pend, np, jn, line, 1);
        if (j < 0)
            return;
        if (!(fv = mech_key(b, s, "angle", &lf))) {
            mech_berr(b, s->line, "angle driver '%s': missing angle = f(t)", s->name);
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
        mech_row *r = mech_new_row(b);
        if (!r)
            return;
        r->nt = 2;
        r->t[0] = (mech_cterm){bB, aA, fs};
        r->t[1] = (mech_cterm){bB, wA, fc};
        return;
    }
    const char *pv = mech_key(b, s, "points", &line), *lv;
    char buf[512];
    const char *it[4];
    int ll;
    if (!pv || mech_split(pv, buf, sizeof buf, it, 4) != 2) {
        mech_berr(b, pv ? line : s->line, "distance driver: expected 'points = P Q'");
        return;
    }
    long P = mech_point_named(b, it[0], line), Q = P >= 0 ? mech_point_named(b, it[1], line) : -1;
    if (Q < 0)
        return;
    if (!(lv = mech_key(b, s, "length", &ll))) {
        mech_berr(b, s->line, "distance driver '%s': missing length = f(t)", s->name);
        return;
    }
    int f = add_fun(b, lv, ll, MECH_F_NEGSQ);
    if (f < 0)
        return;
    mech_aff d, c;
    mech_aff_elem(b, P, &d);
    mech_aff_elem(b, Q, &c);
    mech_aff_add(b, &d, &c, -1.0, 0.0);
    mech_row *r = mech_new_row(b);
    if (!r)
        return;
    r->nt = 1;
    r->t[0].a = d;
    r->t[0].b = d;
    r->f0 = f;
}

void mech_force_item(builder *b, const mech_section *s, pending *pend, size_t np, double *fc)
{
    mech_known_keys(b, s, K_FORCE);
    int lt, line;
    const char *ty = mech_key(b, s, "type", &lt);
    mech_model *m = b->m;
    if (!ty || (strcmp(ty, "spring") && strcmp(ty, "constant") && strcmp(ty, "torque"))) {
        mech_berr(b, ty ? lt : s->line, "force '%s': type must be spring, constant or torque",
             s->name);
        return;
    }
    if (strcmp(ty, "spring") == 0) {
        const char *pv = mech_key(b, s, "points", &line);
        char buf[512];
        const char *it[4];
        if (!pv || mech_split(pv, buf, sizeof buf, it, 4) != 2) {
            mech_berr(b, pv ? line : s->line, "spring: expected 'points = P Q'");
            return;
        }
        long P = mech_point_named(b, it[0], line), Q = P >= 0 ? mech_point_named(b, it[1], line) : -1;
        if (Q < 0)
            return;
        mech_spring sp = {.k = 0, .c = 0};
        mech_aff_elem(b, P, &sp.d);
        mech_aff c;
        mech_aff_elem(b, Q, &c);
        mech_aff_add(b, &sp.d, &c, -1.0, 0.0);
        double x[3];
        for (int i = 0; i < 3; i++)
            x[i] = b->el[P].x0[i] - b->el[Q].x0[i];
        sp.l0 = mech_norm3(x);
        const char *v;
        int lv;
        if ((v = mech_key(b, s, "k", &lv)) && mech_numbers(b, v, lv, "k", &sp.k, 1, 1, NULL))
            return;
        if ((v = mech_key(b, s, "c", &lv)) && mech_numbers(b, v, lv, "c", &sp.c, 1, 1, NULL))
            return;
        if ((v = mech_key(b, s, "length", &lv)) && mech_numbers(b, v, lv, "length", &sp.l0, 1, 1, NULL))
            return;
        if (sp.k < 0 || sp.c < 0 || sp.l0 < 0) {
            mech_berr(b, s->line, "spring '%s': k, c and length must be >= 0", s->name);
            return;
        }
        mech_spring *ns = realloc(m->spr, (m->nspr + 1) * sizeof *ns);
        if (!ns) {
            mech_nomem(b);
            return;
        }
        m->spr = ns;
        m->spr[m->nspr++] = sp;
        if (sp.c > 0)
            m->conservative = 0;
        return;
    }
    if (strcmp(ty, "constant") == 0) {
        const char *pv = mech_key(b, s, "point", &line), *vv;
        int lv;
        long P = pv ? mech_point_named(b, pv, line) : -1;
        if (!pv)
            mech_berr(b, s->line, "constant force '%s': missing point", s->name);
        if (P < 0)
            return;
        double F[3];
        if (!(vv = mech_key(b, s, "value", &lv))) {
            mech_berr(b, s->line, "constant force '%s': missing value", s->name);
            return;
        }
        if (mech_vec_of(b, vv, lv, "value", F))
            return;
        if (!b->el[P].ground)
            for (int i = 0; i < b->dim; i++)
                fc[b->el[P].blk + (size_t)i] += F[i];
        return;
    }
    const char *jn = mech_key(b, s, "joint", &line), *vv;
    int lv;
    if (!jn) {
        mech_berr(b, s->line, "torque '%s': missing joint", s->name);
        return;
    }
    long j = mech_joint_named(b, pend, np, jn, line, 1);
    if (j < 0)
        return;
    if (!(vv = mech_key(b, s, "value", &lv))) {
        mech_berr(b, s->line, "torque '%s': missing value = T(t)", s->name);
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
        mech_nomem(b);
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
        mech_nomem(b);
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

void mech_do_report(builder *b, const mech_section *s, pending *pend, size_t np)
{
    mech_known_keys(b, s, K_REPORT);
    char buf[4096], nm[NAME_LEN + 8];
    const char *it[512];
    int line;
    const char *v = mech_key(b, s, "points", &line);
    static const char xyz[] = "xyz";
    if (v) {
        int n = mech_split(v, buf, sizeof buf, it, 512);
        for (int i = 0; i < n && !b->failed; i++) {
            long P = mech_point_named(b, it[i], line);
            if (P < 0)
                return;
            mech_aff a;
            mech_aff_elem(b, P, &a);
            for (int kind = MECH_OUT_POS; kind <= MECH_OUT_VEL; kind++)
                for (int c = 0; c < b->dim; c++) {
                    snprintf(nm, sizeof nm, "%s%c_%.50s", kind == MECH_OUT_VEL ? "v" : "", xyz[c],
                             it[i]);
                    if (add_out(b, nm, kind, c, &a, NULL, NULL))
                        return;
                }
        }
    }
    /* single coordinates of points, named as `points` names them: x_P, vz_P, ... */
    if ((v = mech_key(b, s, "coordinates", &line))) {
        int n = mech_split(v, buf, sizeof buf, it, 512);
        for (int i = 0; i < n && !b->failed; i++) {
            const char *c = it[i], *us = strchr(c, '_');
            int vel = c[0] == 'v';
            const char *comp = us && us == c + 1 + vel ? strchr(xyz, c[vel]) : NULL;
            if (!comp || !*comp || comp - xyz >= b->dim) {
                mech_berr(b, line, "report: coordinate '%s' is not x_P, y_P%s or v%s_P of a "
                          "point P", c, b->dim == 3 ? ", z_P" : "", b->dim == 3 ? "x|y|z" : "x|y");
                return;
            }
            long P = mech_point_named(b, us + 1, line);
            if (P < 0)
                return;
            mech_aff a;
            mech_aff_elem(b, P, &a);
            if (add_out(b, c, vel ? MECH_OUT_VEL : MECH_OUT_POS, (int)(comp - xyz), &a, NULL,
                        NULL))
                return;
        }
    }
    if ((v = mech_key(b, s, "angles", &line))) {
        int n = mech_split(v, buf, sizeof buf, it, 512);
        for (int i = 0; i < n && !b->failed; i++) {
            long j = mech_joint_named(b, pend, np, it[i], line, 1);
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
