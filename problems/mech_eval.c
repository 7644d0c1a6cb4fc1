/* Mechanism files: the problem callbacks on the model of mech_build.c.
 *
 * Every row is g = sum_k f_k(t) a_k(q) . b_k(q) + f_0(t) + c with affine a_k, b_k
 * (Jacobians J_a, J_b constant), so, with primes for d/dt,
 *     G     = sum_k f_k (b_k^T J_a + a_k^T J_b),
 *     g_t   = sum_k f_k' a_k . b_k + f_0',
 *     gamma = -(G v)_q v - 2 G_t v - g_tt
 *           = -sum_k [2 f_k (J_a v).(J_b v) + 2 f_k' (b_k . J_a v + a_k . J_b v)
 *                     + f_k'' a_k . b_k] - f_0''
 * exactly (problems/problem.h; García de Jalón and Bayo 1994 [garciadejalon1994],
 * Sect. 3.4 for the scleronomic part). */
#include <math.h>
#include <string.h>

#include "../core/status.h"
#include "mech_impl.h"
#include "triplets.h"

enum { MAX_FUN = 256 };

#define MODEL(pb) ((const mech_model *)(pb)->data)

/* y = (a I + b J)^T x  (J^T = -J): a x - b J x. */
static inline void pair_t(int dim, double a, double b, const double *x, double *y)
{
    if (dim == 2) {
        y[0] = a * x[0] + b * x[1];
        y[1] = a * x[1] - b * x[0];
    } else {
        y[0] = a * x[0], y[1] = a * x[1], y[2] = a * x[2];
    }
}

void mech_aff_eval(const mech_aff *e, int dim, const double *q, double *out)
{
    out[0] = e->c[0], out[1] = e->c[1], out[2] = dim == 3 ? e->c[2] : 0.0;
    for (int k = 0; k < e->n; k++) {
        const double *x = q + e->t[k].blk;
        double a = e->t[k].a, b = e->t[k].b;
        if (dim == 2) {
            out[0] += a * x[0] - b * x[1];
            out[1] += a * x[1] + b * x[0];
        } else {
            out[0] += a * x[0], out[1] += a * x[1], out[2] += a * x[2];
        }
    }
}

void mech_aff_apply(const mech_aff *e, int dim, const double *v, double *out)
{
    out[0] = out[1] = out[2] = 0.0;
    for (int k = 0; k < e->n; k++) {
        const double *x = v + e->t[k].blk;
        double a = e->t[k].a, b = e->t[k].b;
        if (dim == 2) {
            out[0] += a * x[0] - b * x[1];
            out[1] += a * x[1] + b * x[0];
        } else {
            out[0] += a * x[0], out[1] += a * x[1], out[2] += a * x[2];
        }
    }
}

static inline double dot(const double *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

/* The time functions at t (value, first and second derivatives). */
static void fun_jets(const mech_model *m, double t, mech_jet *F)
{
    for (size_t i = 0; i < m->nfun; i++) {
        mech_jet u = mech_expr_jet(m->fun[i].e, t);
        double s, c;
        switch (m->fun[i].op) {
        case MECH_F_SIN:
            s = sin(u.v), c = cos(u.v);
            F[i] = (mech_jet){s, c * u.d1, -s * u.d1 * u.d1 + c * u.d2};
            break;
        case MECH_F_NEGCOS:
            s = sin(u.v), c = cos(u.v);
            F[i] = (mech_jet){-c, s * u.d1, c * u.d1 * u.d1 + s * u.d2};
            break;
        case MECH_F_NEGSQ:
            F[i] = (mech_jet){-u.v * u.v, -2 * u.v * u.d1, -2 * (u.d1 * u.d1 + u.v * u.d2)};
            break;
        default:
            F[i] = u;
        }
    }
}

static inline double fval(const mech_jet *F, int f)
{
    return f < 0 ? 1.0 : F[f].v;
}

int mech_cb_dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    *nq = *nv = MODEL(pb)->nq;
    *nl = MODEL(pb)->nl;
    return MBS_OK;
}

int mech_cb_initial(const mbs_problem *pb, double *q0, double *v0, double *l0, int *have)
{
    const mech_model *m = MODEL(pb);
    memcpy(q0, m->q0, m->nq * sizeof *q0);
    memcpy(v0, m->v0, m->nq * sizeof *v0);
    *have = m->lambda0 != NULL;
    if (m->lambda0)
        memcpy(l0, m->lambda0, m->nl * sizeof *l0);
    return MBS_OK;
}

/* (a I + b J) entry (i, j). */
static inline double pair_ij(int dim, double a, double b, int i, int j)
{
    if (i == j)
        return a;
    return dim == 2 ? (i == 1 ? b : -b) : 0.0;
}

int mech_cb_mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)t, (void)q;
    const mech_model *m = MODEL(pb);
    gsl_matrix_set_zero(M);
    for (size_t k = 0; k < m->nmb; k++) {
        const mech_mblock *b = &m->mb[k];
        for (int i = 0; i < m->dim; i++)
            for (int j = 0; j < m->dim; j++)
                gsl_matrix_set(M, b->r + (size_t)i, b->c + (size_t)j,
                               pair_ij(m->dim, b->a, b->b, i, j));
    }
    return MBS_OK;
}

int mech_cb_mass_sparse(const mbs_problem *pb, double t, const double *q, mbs_triplets *T)
{
    (void)t, (void)q;
    const mech_model *m = MODEL(pb);
    T->nnz = 0;
    if (mbs_triplets_reserve(T, m->nmb * (size_t)(m->dim * m->dim)))
        return MBS_NO_MEMORY;
    for (size_t k = 0; k < m->nmb; k++) {
        const mech_mblock *b = &m->mb[k];
        for (int i = 0; i < m->dim; i++)
            for (int j = 0; j < m->dim; j++) {
                double v = pair_ij(m->dim, b->a, b->b, i, j);
                if (v != 0.0)
                    mbs_triplets_push(T, b->r + (size_t)i, b->c + (size_t)j, v);
            }
    }
    return MBS_OK;
}

int mech_cb_force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    const mech_model *m = MODEL(pb);
    int dim = m->dim;
    memcpy(f, m->f_const, m->nq * sizeof *f);
    for (size_t s = 0; s < m->nspr; s++) {
        const mech_spring *sp = &m->spr[s];
        double d[3], dv[3];
        mech_aff_eval(&sp->d, dim, q, d);
        mech_aff_apply(&sp->d, dim, v, dv);
        double l = sqrt(dot(d, d));
        if (!(l > 0.0))
            continue; /* direction undefined: no force */
        double fs = sp->k * (l - sp->l0) + sp->c * dot(d, dv) / l, w[3];
        for (int i = 0; i < 3; i++)
            w[i] = -fs * d[i] / l;
        for (int k = 0; k < sp->d.n; k++) {
            double y[3];
            pair_t(dim, sp->d.t[k].a, sp->d.t[k].b, w, y);
            for (int i = 0; i < dim; i++)
                f[sp->d.t[k].blk + (size_t)i] += y[i];
        }
    }
    if (m->ntrq) {
        mech_jet F[MAX_FUN];
        fun_jets(m, t, F);
        for (size_t s = 0; s < m->ntrq; s++) {
            const mech_torque *tq = &m->trq[s];
            double T = tq->fn >= 0 ? F[tq->fn].v : tq->value;
            for (int side = 0; side < 2; side++) {
                const mech_aff *a = side ? &tq->aA : &tq->aB, *w = side ? &tq->wA : &tq->wB;
                double wv[3], sg = side ? -T : T;
                mech_aff_eval(w, dim, q, wv);
                for (int k = 0; k < a->n; k++) {
                    double y[3];
                    pair_t(dim, a->t[k].a, a->t[k].b, wv, y);
                    for (int i = 0; i < dim; i++)
                        f[a->t[k].blk + (size_t)i] += sg * y[i];
                }
            }
        }
    }
    return MBS_OK;
}

/* Row value (order 0: g) or its time derivative at fixed q (order 1: g_t). */
static double row_value(const mech_model *m, const mech_row *row, const mech_jet *F,
                        const double *q, int order)
{
    double s = order ? 0.0 : row->c;
    if (row->f0 >= 0)
        s += order ? F[row->f0].d1 : F[row->f0].v;
    for (int k = 0; k < row->nt; k++) {
        int fn = row->t[k].fn;
        if (order && fn < 0)
            continue;
        double a[3], b[3];
        mech_aff_eval(&row->t[k].a, m->dim, q, a);
        mech_aff_eval(&row->t[k].b, m->dim, q, b);
        s += (fn < 0 ? 1.0 : order ? F[fn].d1 : F[fn].v) * dot(a, b);
    }
    return s;
}

int mech_cb_g(const mbs_problem *pb, double t, const double *q, double *g)
{
    const mech_model *m = MODEL(pb);
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    for (size_t r = 0; r < m->nl; r++)
        g[r] = row_value(m, &m->rows[r], F, q, 0);
    return MBS_OK;
}

/* Row r of G into a callback: entries (column, value), possibly repeated. */
typedef void (*emit_fn)(void *ctx, size_t r, size_t c, double v);

static void row_G(const mech_model *m, const mech_row *row, const mech_jet *F, const double *q,
                  size_t r, emit_fn emit, void *ctx)
{
    int dim = m->dim;
    for (int k = 0; k < row->nt; k++) {
        const mech_cterm *ct = &row->t[k];
        double a[3], b[3], fk = fval(F, ct->fn);
        mech_aff_eval(&ct->a, dim, q, a);
        mech_aff_eval(&ct->b, dim, q, b);
        for (int side = 0; side < 2; side++) {
            const mech_aff *e = side ? &ct->b : &ct->a;
            const double *other = side ? a : b;
            for (int j = 0; j < e->n; j++) {
                double y[3];
                pair_t(dim, e->t[j].a, e->t[j].b, other, y);
                for (int i = 0; i < dim; i++)
                    emit(ctx, r, e->t[j].blk + (size_t)i, fk * y[i]);
            }
        }
    }
}

static void emit_dense(void *ctx, size_t r, size_t c, double v)
{
    gsl_matrix *G = ctx;
    double *p = gsl_matrix_ptr(G, r, c);
    *p += v;
}

int mech_cb_G(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    const mech_model *m = MODEL(pb);
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    gsl_matrix_set_zero(G);
    for (size_t r = 0; r < m->nl; r++)
        row_G(m, &m->rows[r], F, q, r, emit_dense, G);
    return MBS_OK;
}

/* Triplets of one row with repeated columns merged (a row has few columns). */
typedef struct row_acc {
    size_t n;
    size_t col[8 * MECH_MAXT];
    double val[8 * MECH_MAXT];
} row_acc;

static void emit_acc(void *ctx, size_t r, size_t c, double v)
{
    (void)r;
    row_acc *a = ctx;
    for (size_t i = 0; i < a->n; i++)
        if (a->col[i] == c) {
            a->val[i] += v;
            return;
        }
    if (a->n < sizeof a->col / sizeof *a->col) {
        a->col[a->n] = c;
        a->val[a->n++] = v;
    }
}

int mech_cb_G_sparse(const mbs_problem *pb, double t, const double *q, mbs_triplets *T)
{
    const mech_model *m = MODEL(pb);
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    T->nnz = 0;
    for (size_t r = 0; r < m->nl; r++) {
        row_acc acc;
        acc.n = 0;
        row_G(m, &m->rows[r], F, q, r, emit_acc, &acc);
        if (mbs_triplets_reserve(T, acc.n))
            return MBS_NO_MEMORY;
        for (size_t i = 0; i < acc.n; i++)
            mbs_triplets_push(T, r, acc.col[i], acc.val[i]);
    }
    return MBS_OK;
}

int mech_cb_gt(const mbs_problem *pb, double t, const double *q, double *gt)
{
    const mech_model *m = MODEL(pb);
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    for (size_t r = 0; r < m->nl; r++)
        gt[r] = row_value(m, &m->rows[r], F, q, 1);
    return MBS_OK;
}

int mech_cb_gamma(const mbs_problem *pb, double t, const double *q, const double *v,
                  double *gam)
{
    const mech_model *m = MODEL(pb);
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    for (size_t r = 0; r < m->nl; r++) {
        const mech_row *row = &m->rows[r];
        double s = row->f0 >= 0 ? -F[row->f0].d2 : 0.0;
        for (int k = 0; k < row->nt; k++) {
            const mech_cterm *ct = &row->t[k];
            double av[3], bv[3];
            mech_aff_apply(&ct->a, m->dim, v, av);
            mech_aff_apply(&ct->b, m->dim, v, bv);
            s -= 2.0 * fval(F, ct->fn) * dot(av, bv);
            if (ct->fn >= 0) {
                double a[3], b[3];
                mech_aff_eval(&ct->a, m->dim, q, a);
                mech_aff_eval(&ct->b, m->dim, q, b);
                s -= 2.0 * F[ct->fn].d1 * (dot(b, av) + dot(a, bv)) + F[ct->fn].d2 * dot(a, b);
            }
        }
        gam[r] = s;
    }
    return MBS_OK;
}

double mech_cb_energy(const mbs_problem *pb, double t, const double *q, const double *v)
{
    (void)t;
    const mech_model *m = MODEL(pb);
    int dim = m->dim;
    double E = 0.0;
    for (size_t k = 0; k < m->nmb; k++) { /* v^T M v / 2 */
        const mech_mblock *b = &m->mb[k];
        const double *x = v + b->r, *y = v + b->c;
        double s = b->a * (x[0] * y[0] + x[1] * y[1] + (dim == 3 ? x[2] * y[2] : 0.0));
        if (dim == 2)
            s += b->b * (x[1] * y[0] - x[0] * y[1]);
        E += 0.5 * s;
    }
    for (size_t i = 0; i < m->nq; i++)
        E -= m->f_const[i] * q[i];
    for (size_t s = 0; s < m->nspr; s++) {
        double d[3];
        mech_aff_eval(&m->spr[s].d, dim, q, d);
        double e = sqrt(dot(d, d)) - m->spr[s].l0;
        E += 0.5 * m->spr[s].k * e * e;
    }
    return E;
}

/* K += s J_x^T A J_y for affine x, y and a dim x dim matrix A (row-major 3x3). */
static void add_JtAJ(gsl_matrix *K, int dim, double s, const mech_aff *x, const double *A,
                     const mech_aff *y)
{
    for (int p = 0; p < x->n; p++)
        for (int r = 0; r < y->n; r++) {
            double Cp[9] = {0}, Cr[9] = {0};
            for (int i = 0; i < dim; i++)
                for (int j = 0; j < dim; j++) {
                    Cp[3 * i + j] = pair_ij(dim, x->t[p].a, x->t[p].b, i, j);
                    Cr[3 * i + j] = pair_ij(dim, y->t[r].a, y->t[r].b, i, j);
                }
            for (int i = 0; i < dim; i++)
                for (int j = 0; j < dim; j++) {
                    double sum = 0;
                    for (int k = 0; k < dim; k++)
                        for (int l = 0; l < dim; l++)
                            sum += Cp[3 * k + i] * A[3 * k + l] * Cr[3 * l + j];
                    double *e = gsl_matrix_ptr(K, x->t[p].blk + (size_t)i, y->t[r].blk + (size_t)j);
                    *e += s * sum;
                }
        }
}

static const double ID3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* d force / dq and d force / dv of the springs (dampers) and torques. */
static void spring_derivs(const mech_model *m, const double *q, const double *v, gsl_matrix *K,
                          gsl_matrix *D)
{
    int dim = m->dim;
    for (size_t s = 0; s < m->nspr; s++) {
        const mech_spring *sp = &m->spr[s];
        double d[3], dv[3];
        mech_aff_eval(&sp->d, dim, q, d);
        mech_aff_apply(&sp->d, dim, v, dv);
        double l = sqrt(dot(d, d));
        if (!(l > 0.0))
            continue;
        double n[3] = {d[0] / l, d[1] / l, d[2] / l}, ndv = dot(n, dv);
        double fs = sp->k * (l - sp->l0) + sp->c * ndv;
        double A[9], Dm[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double dfs_j = sp->k * n[j] + sp->c * (dv[j] - ndv * n[j]) / l;
                A[3 * i + j] = -(n[i] * dfs_j + fs * (ID3[3 * i + j] - n[i] * n[j]) / l);
                Dm[3 * i + j] = -sp->c * n[i] * n[j];
            }
        if (K)
            add_JtAJ(K, dim, 1.0, &sp->d, A, &sp->d);
        if (D)
            add_JtAJ(D, dim, 1.0, &sp->d, Dm, &sp->d);
    }
}

int mech_cb_force_q(const mbs_problem *pb, double t, const double *q, const double *v,
                    gsl_matrix *K)
{
    const mech_model *m = MODEL(pb);
    gsl_matrix_set_zero(K);
    spring_derivs(m, q, v, K, NULL);
    if (m->ntrq) {
        mech_jet F[MAX_FUN];
        fun_jets(m, t, F);
        for (size_t s = 0; s < m->ntrq; s++) {
            const mech_torque *tq = &m->trq[s];
            double T = tq->fn >= 0 ? F[tq->fn].v : tq->value;
            add_JtAJ(K, m->dim, T, &tq->aB, ID3, &tq->wB);
            add_JtAJ(K, m->dim, -T, &tq->aA, ID3, &tq->wA);
        }
    }
    return MBS_OK;
}

int mech_cb_force_v(const mbs_problem *pb, double t, const double *q, const double *v,
                    gsl_matrix *D)
{
    (void)t;
    gsl_matrix_set_zero(D);
    spring_derivs(MODEL(pb), q, v, NULL, D);
    return MBS_OK;
}

/* d(G^T lambda)/dq = sum_r lambda_r sum_k f_k (J_a^T J_b + J_b^T J_a). */
int mech_cb_gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                       gsl_matrix *K)
{
    (void)q;
    const mech_model *m = MODEL(pb);
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    gsl_matrix_set_zero(K);
    for (size_t r = 0; r < m->nl; r++) {
        if (lam[r] == 0.0)
            continue;
        for (int k = 0; k < m->rows[r].nt; k++) {
            const mech_cterm *ct = &m->rows[r].t[k];
            double s = lam[r] * fval(F, ct->fn);
            add_JtAJ(K, m->dim, s, &ct->a, ID3, &ct->b);
            add_JtAJ(K, m->dim, s, &ct->b, ID3, &ct->a);
        }
    }
    return MBS_OK;
}

/* d(G w)/dq, row r: sum_k f_k [(J_b w)^T J_a + (J_a w)^T J_b]. */
int mech_cb_gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                 gsl_matrix *Z)
{
    (void)q;
    const mech_model *m = MODEL(pb);
    int dim = m->dim;
    mech_jet F[MAX_FUN];
    if (m->nfun)
        fun_jets(m, t, F);
    gsl_matrix_set_zero(Z);
    for (size_t r = 0; r < m->nl; r++)
        for (int k = 0; k < m->rows[r].nt; k++) {
            const mech_cterm *ct = &m->rows[r].t[k];
            double fk = fval(F, ct->fn), aw[3], bw[3];
            mech_aff_apply(&ct->a, dim, w, aw);
            mech_aff_apply(&ct->b, dim, w, bw);
            for (int side = 0; side < 2; side++) {
                const mech_aff *e = side ? &ct->b : &ct->a;
                const double *o = side ? aw : bw;
                for (int j = 0; j < e->n; j++) {
                    double y[3];
                    pair_t(dim, e->t[j].a, e->t[j].b, o, y);
                    for (int i = 0; i < dim; i++) {
                        double *p = gsl_matrix_ptr(Z, r, e->t[j].blk + (size_t)i);
                        *p += fk * y[i];
                    }
                }
            }
        }
    return MBS_OK;
}

/* The [report] quantities (problem.h reported): point coordinates and velocities,
 * and joint angles atan2(b . w_A, b . a_A) from the reference configuration. */
int mech_cb_reported(const mbs_problem *pb, double t, const double *q, const double *v,
                     double *out)
{
    (void)t;
    const mech_model *m = MODEL(pb);
    for (size_t i = 0; i < m->nout; i++) {
        const mech_output *o = &m->out[i];
        double a[3], b[3], w[3];
        if (o->kind == MECH_OUT_POS) {
            mech_aff_eval(&o->a, m->dim, q, a);
            out[i] = a[o->comp];
        } else if (o->kind == MECH_OUT_VEL) {
            mech_aff_apply(&o->a, m->dim, v, a);
            out[i] = a[o->comp];
        } else {
            mech_aff_eval(&o->a, m->dim, q, a);
            mech_aff_eval(&o->b, m->dim, q, b);
            mech_aff_eval(&o->w, m->dim, q, w);
            out[i] = atan2(dot(b, w), dot(b, a));
        }
    }
    return MBS_OK;
}
