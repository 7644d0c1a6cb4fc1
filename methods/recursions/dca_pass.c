/* The assembly and disassembly passes of the divide-and-conquer formulation
 * ([dca_augmented_lagrangian] Sects. 2.2-2.3, Eqs. (9)-(32) in the compliance form described at
 * the top of dca.c), over the tree of dca_tree.c: assembly from the leaves up
 * to the root (the nodes in postorder, each right after its children),
 * disassembly from the root down (in reverse postorder).  Nodes of which none
 * is an ancestor of another are independent, so with w->nthreads > 1 disjoint
 * subtrees run on the threads of an OpenMP team ([dca_augmented_lagrangian]
 * Sect. 4.4: O(k log2 n) on O(n) processors, level by level).
 *
 * Results do not depend on the thread count, bit for bit: every node reads only
 * its children's (assembly) or its ancestors' (disassembly) numbers and writes
 * only its own and its thread's scratch, with the same operations in the same
 * order whichever thread runs it; the only reduction, the residual maximum, is
 * combined from per-thread maxima (exact, order-free).
 *
 * With nthreads > 1 the tree is cut into about 4 subtrees per thread
 * (dca_tree.c, decompose): each subtree runs on one thread, the few nodes above
 * them on one thread; the level counts of dca.h still give the algorithm's
 * logarithmic span.  Small trees run sequentially: the split is made only when
 * the tree's work reaches DCA_PAR_MIN_WORK multiply-adds per pass.  Below that
 * the fork, the barriers and the imbalance cost more than they save (measured
 * on the chain: about 2 multiply-adds per ns on one core, and a few
 * microseconds per synchronisation on an idle machine). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../linsol/dense_small.h"
#include "dca_impl.h"

/* Tuning constant: the least work of the tree (multiply-adds of one pass) for
 * which the passes are split over the threads; see the comment above. */
#define DCA_PAR_MIN_WORK 1e5

double mbs_dca_par_min_work(void)
{
    return DCA_PAR_MIN_WORK;
}

#ifdef _OPENMP
static int thread_id(void)
{
    return omp_get_thread_num();
}
#endif

/* Cholesky factor of the n x n matrix D (row-major) in its lower triangle:
 * mbs_small_chol (methods/linsol/dense_small.h, GSL's arithmetic without its
 * views, rcond copy and BLAS dispatch) up to MBS_SMALL_NMAX, GSL above. */
static int small_chol(double *D, size_t n)
{
    if (n <= MBS_SMALL_NMAX)
        return mbs_small_chol(n, D, n) ? MBS_SINGULAR_MATRIX : MBS_OK;
    gsl_matrix_view A = gsl_matrix_view_array(D, n, n);
    return gsl_linalg_cholesky_decomp1(&A.matrix) == GSL_SUCCESS ? MBS_OK : MBS_SINGULAR_MATRIX;
}

/* The arrays of node n (dpn: offsets into the pools). */
static inline const int *n_h(const dca_ws *w, const dpn *n)
{
    return w->ipool + n->h;
}

static inline const int *n_o(const dca_ws *w, const dpn *n)
{
    return w->ipool + n->h + n->nh;
}


static inline double *n_EJ(const dca_ws *w, const dpn *n)
{
    return w->dpool + n->cJ + n->nJ;
}

/* Leaf (body b, local rows L, open rows O):
 *   (M_b + alpha B_L^T B_L) v_b' = f_b - B_L^T (lambda*_L - alpha gamma_L) - B_O^T lambda_O,
 * so v_b' = Phi_b lambda_O + b_b ([dca_augmented_lagrangian] Eqs. (9), (10)).
 * The right-hand side f~ of b_b into X (length d). */
static void leaf_rhs(const dca_ws *w, const dpn *n, double *X)
{
    double al = w->alpha;
    const int *h = n_h(w, n), *J = w->ipool + n->J;
    for (size_t i = 0; i < (size_t)n->nh; i++)
        X[i] = w->f[h[i]];
    for (size_t l = 0; l < (size_t)n->nJ; l++) {
        int r = J[l];
        double coef = w->lamstar[r] - al * w->gam[r];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++) {
            size_t i = (size_t)w->bidx[w->rcrd[p]];
            X[i] = X[i] - w->rval[p] * coef;
        }
    }
}

/* The whole leaf: factor of A = M_b + alpha B_L^T B_L (kept in L), Phi_b and
 * b_b. */
static int assemble_leaf(const dca_ws *w, const dpn *n, dca_scratch *sc)
{
    size_t d = (size_t)n->nh, no = (size_t)n->no, nJ = (size_t)n->nJ;
    double al = w->alpha, *D = w->dpool + n->L, *X = sc->X;
    double *Phi = w->dpool + n->Phi, *b = w->dpool + n->b;
    const int *J = w->ipool + n->J, *o = n_o(w, n);
    const double *Mb = w->Mblk + w->boff[n->leaf];
    /* A into D; right-hand sides [f~ | -B_O^T] into X */
    for (size_t i = 0; i < d; i++) {
        for (size_t j = 0; j < d; j++)
            D[i * d + j] = Mb[i * d + j];
        for (size_t a = 0; a < no; a++)
            X[(a + 1) * d + i] = 0.0;
    }
    leaf_rhs(w, n, X);
    for (size_t l = 0; l < nJ; l++) {
        int r = J[l];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++) {
            size_t i = (size_t)w->bidx[w->rcrd[p]];
            for (int p2 = w->rptr[r]; p2 < w->rptr[r + 1]; p2++) {
                size_t j = (size_t)w->bidx[w->rcrd[p2]];
                D[i * d + j] = D[i * d + j] + al * w->rval[p] * w->rval[p2];
            }
        }
    }
    for (size_t a = 0; a < no; a++) {
        int r = o[a];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++)
            if (w->body[w->rcrd[p]] == n->leaf) {
                size_t i = (size_t)w->bidx[w->rcrd[p]];
                X[(a + 1) * d + i] = X[(a + 1) * d + i] - w->rval[p];
            }
    }
    if (small_chol(D, d) != MBS_OK)
        return MBS_SINGULAR_MATRIX;
    for (size_t j = 0; j <= no; j++)
        mbs_small_chol_solve(d, D, d, X + j * d);
    for (size_t i = 0; i < d; i++) {
        b[i] = X[i];
        for (size_t a = 0; a < no; a++)
            Phi[i * no + a] = X[(a + 1) * d + i];
    }
    return MBS_OK;
}

/* A later iteration at a leaf: only b_b, from the kept factor (in place). */
static void rhs_leaf(const dca_ws *w, const dpn *n)
{
    double *b = w->dpool + n->b;
    leaf_rhs(w, n, b);
    mbs_small_chol_solve((size_t)n->nh, w->dpool + n->L, (size_t)n->nh, b);
}

/* Node (children 1, 2 joined by rows J, open rows O):
 *   D lambda_J = lambda*_J / alpha - gamma_J + sum_k B_Jk (Phi_k lambda_Ok + b_k),
 *   D = I / alpha - sum_k B_Jk Phi_kJ (the matrix C of [dca_augmented_lagrangian] Eq. (20)),
 * lambda_J = c_J + E_J lambda_O, and the handle relations of the union
 * (Eqs. (21)-(32)).  The right-hand side of c_J into X (length nJ). */
static void node_rhs(const dca_ws *w, const dpn *n, double *X)
{
    const double *dp = w->dpool, al = w->alpha;
    const int *jb = w->ipool + n->jb, *J = w->ipool + n->J;
    for (size_t i = 0; i < (size_t)n->nJ; i++) {
        int r = J[i];
        double x = w->lamstar[r] / al - w->gam[r];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++)
            x = x + w->rval[p] * dp[*jb++];
        X[i] = x;
    }
}

/* b of the union's handles from the children's b and c_J (the constant part
 * of the handle relations). */
static void node_handles_b(const dca_ws *w, const dpn *n)
{
    const double *dp = w->dpool, *cJ = w->dpool + n->cJ;
    double *b = w->dpool + n->b;
    const int *hb = w->ipool + n->hb, *bsrc = hb + n->nh + 1, *pr = bsrc + n->nh;
    for (size_t hh = 0; hh < (size_t)n->nh; hh++) {
        double bb = dp[bsrc[hh]];
        for (int k = hb[hh]; k < hb[hh + 1]; k++)
            bb += dp[pr[2 * k]] * cJ[pr[2 * k + 1]];
        b[hh] = bb;
    }
}

/* The whole node: factor of D (kept in L), c_J, E_J and the handle
 * relations. */
static int assemble_node(const dca_ws *w, const dpn *n, dca_scratch *sc)
{
    size_t nJ = (size_t)n->nJ, no = (size_t)n->no, nh = (size_t)n->nh;
    double al = w->alpha, *D = w->dpool + n->L, *X = sc->X;
    double *cJ = w->dpool + n->cJ, *EJ = n_EJ(w, n), *Phi = w->dpool + n->Phi;
    const int *J = w->ipool + n->J, *jsrc = w->ipool + n->J + n->nJ, *hsrc = w->ipool + n->hsrc;
    const dpn *ch[2] = {&w->pn[n->child[0]], &w->pn[n->child[1]]};
    /* D = I/alpha - sum_k B_Jk Phi_kJ; X = [rhs0 | E] (column-major) */
    for (size_t i = 0; i < nJ; i++) {
        for (size_t j = 0; j < nJ; j++)
            D[i * nJ + j] = i == j ? 1.0 / al : 0.0;
        for (size_t a = 0; a < no; a++)
            X[(a + 1) * nJ + i] = 0.0;
    }
    node_rhs(w, n, X);
    size_t e = 0;
    for (size_t i = 0; i < nJ; i++) {
        int r = J[i];
        for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++, e++) {
            double bv = w->rval[p];
            int s = jsrc[e];
            const dpn *c = ch[s < 0];
            size_t hh = (size_t)(s < 0 ? -s - 1 : s), cno = (size_t)c->no;
            const double *ph = w->dpool + c->Phi + hh * cno;
            const int *up = w->ipool + c->up;
            for (size_t a = 0; a < cno; a++) {
                size_t q = (size_t)up[a];
                if (q < nJ)
                    D[i * nJ + q] = D[i * nJ + q] - bv * ph[a];
                else
                    X[(q - nJ + 1) * nJ + i] = X[(q - nJ + 1) * nJ + i] + bv * ph[a];
            }
        }
    }
    if (nJ > 0) { /* else no rows joined here */
        if (small_chol(D, nJ) != MBS_OK)
            return MBS_SINGULAR_MATRIX;
        for (size_t j = 0; j <= no; j++)
            mbs_small_chol_solve(nJ, D, nJ, X + j * nJ);
    }
    for (size_t i = 0; i < nJ; i++) {
        cJ[i] = X[i];
        for (size_t a = 0; a < no; a++)
            EJ[i * no + a] = X[(a + 1) * nJ + i];
    }
    /* handle relations of the union */
    node_handles_b(w, n);
    for (size_t hh = 0; hh < nh; hh++) {
        int src = hsrc[hh];
        const dpn *c = ch[src < 0];
        size_t ch_h = (size_t)(src < 0 ? -src - 1 : src), cno = (size_t)c->no;
        const double *ph = w->dpool + c->Phi + ch_h * cno;
        const int *up = w->ipool + c->up;
        double *out = Phi + hh * no;
        for (size_t a = 0; a < no; a++)
            out[a] = 0.0;
        for (size_t a = 0; a < cno; a++) {
            size_t p = (size_t)up[a];
            if (p < nJ) {
                for (size_t k = 0; k < no; k++)
                    out[k] += ph[a] * EJ[p * no + k];
            } else {
                out[p - nJ] += ph[a];
            }
        }
    }
    return MBS_OK;
}

/* A later iteration at a node: only c_J (in place) and the handles' b, from
 * the kept factor and E_J. */
static void rhs_node(const dca_ws *w, const dpn *n)
{
    size_t nJ = (size_t)n->nJ;
    if (nJ > 0) {
        double *cJ = w->dpool + n->cJ;
        node_rhs(w, n, cJ);
        mbs_small_chol_solve(nJ, w->dpool + n->L, nJ, cJ);
    }
    node_handles_b(w, n);
}

/* One node of the assembly: the whole of it when M or B changed (full), else
 * the right-hand sides only. */
static int assemble_one(const dca_ws *w, const dpn *n, dca_scratch *sc, int full)
{
    if (full)
        return n->leaf >= 0 ? assemble_leaf(w, n, sc) : assemble_node(w, n, sc);
    if (n->leaf >= 0)
        rhs_leaf(w, n);
    else
        rhs_node(w, n);
    return MBS_OK;
}

/* Disassembly of one node: its multipliers from its open ones (set by its
 * ancestors); at a leaf, v' and the local rows' multipliers
 * lambda = lambda* + alpha (B v' - gamma) ([dca_augmented_lagrangian] Sect. 2.3). */
static void disassemble_one(dca_ws *w, const dpn *n)
{
    size_t no = (size_t)n->no, nJ = (size_t)n->nJ;
    const int *o = n_o(w, n), *J = w->ipool + n->J;
    if (n->leaf >= 0) {
        const int *h = n_h(w, n);
        const double *b = w->dpool + n->b, *Phi = w->dpool + n->Phi;
        for (size_t i = 0; i < (size_t)n->nh; i++) {
            double a = b[i];
            for (size_t e = 0; e < no; e++)
                a += Phi[i * no + e] * w->lam[o[e]];
            w->acc[h[i]] = a;
        }
        for (size_t l = 0; l < nJ; l++) {
            int r = J[l];
            double bv = -w->gam[r];
            for (int p = w->rptr[r]; p < w->rptr[r + 1]; p++)
                bv += w->rval[p] * w->acc[w->rcrd[p]];
            w->lam[r] = w->lamstar[r] + w->alpha * bv;
        }
        return;
    }
    const double *cJ = w->dpool + n->cJ, *EJ = n_EJ(w, n);
    for (size_t i = 0; i < nJ; i++) {
        double l = cJ[i];
        for (size_t e = 0; e < no; e++)
            l += EJ[i * no + e] * w->lam[o[e]];
        w->lam[J[i]] = l;
    }
}

/* max(a, b) for the residual maxima: a is never NaN, and a NaN b leaves a, as
 * fmax does (inline: libm's fmax is a call per row). */
static inline double max_nn(double a, double b)
{
    return a < b ? b : a;
}

/* Row r after a disassembly: a zero row of B exerts no force (lambda = 0);
 * lambda* = lambda for the next iteration; returns |B v' - gamma| and raises
 * *mag to the row's |gamma| + sum |B_rk v'_k|, the size of the terms whose
 * difference the residual is (both 0 for a zero row, which the residual leaves
 * out). */
static double row_after(dca_ws *w, int r, double *mag)
{
    if (w->rnode[r] < 0) {
        w->lam[r] = 0.0;
        w->lamstar[r] = 0.0;
        w->rres[r] = 0.0;
        return 0.0;
    }
    double bv = -w->gam[r], m = fabs(w->gam[r]);
    for (int q = w->rptr[r]; q < w->rptr[r + 1]; q++) {
        double t = w->rval[q] * w->acc[w->rcrd[q]];
        bv += t;
        m += fabs(t);
    }
    w->lamstar[r] = w->lam[r];
    w->rres[r] = bv;
    *mag = max_nn(*mag, m);
    return fabs(bv);
}

/* Sum of (B v' - gamma)^2 over the rows in row order (the same for any
 * thread count). */
static double rows_ss(const dca_ws *w)
{
    double sum = 0.0;
    for (size_t r = 0; r < w->nl; r++)
        sum += w->rres[r] * w->rres[r];
    return sum;
}

/* The maximum of |B v' - gamma| over all rows (and of the terms' size into
 * *mag), with rows_ss in the same sweep (*ss). */
static double rows_after(dca_ws *w, double *mag, double *ss)
{
    double res = 0.0, sum = 0.0;
    for (size_t r = 0; r < w->nl; r++) {
        res = max_nn(res, row_after(w, (int)r, mag));
        sum += w->rres[r] * w->rres[r];
    }
    *ss = sum;
    return res;
}

/* The passes on one thread (nthreads = 1: no OpenMP team at all). */
static int passes_seq(dca_ws *w, double *res, double *mag, double *ss, int full)
{
    const dpn *pn = w->pn;
    if (full) { /* postorder: children first */
        for (size_t k = 0; k < w->nn; k++)
            if ((pn[k].leaf >= 0 ? assemble_leaf(w, &pn[k], &w->scr[0])
                                 : assemble_node(w, &pn[k], &w->scr[0])) != MBS_OK)
                return MBS_SINGULAR_MATRIX;
    } else {
        for (size_t k = 0; k < w->nn; k++)
            if (pn[k].leaf >= 0)
                rhs_leaf(w, &pn[k]);
            else
                rhs_node(w, &pn[k]);
    }
    for (size_t k = w->nn; k-- > 0;)
        disassemble_one(w, &pn[k]);
    *mag = 0.0;
    *res = rows_after(w, mag, ss);
    return MBS_OK;
}

#ifdef _OPENMP
/* The passes on the team (one parallel region, three synchronisations):
 * assembly of the subtrees (each by one thread, its nodes in postorder), the top
 * nodes on one thread (assembly, then disassembly), disassembly of the
 * subtrees, each followed by the rows eliminated inside it (their coordinates
 * are all its own), then after the region the few rows of the top nodes.  A
 * level-synchronous
 * schedule would need a barrier per level and pass, and on a loaded machine
 * every barrier waits for the slowest thread's time slice. */
static int passes_par(dca_ws *w, double *res, double *mag, double *ss, int full)
{
    int bad = 0, nt = w->nthreads;
    long nsub = (long)w->nsub;
    for (int t = 0; t < nt; t++)
        w->scr[t].res = w->scr[t].mag = 0.0;
#pragma omp parallel num_threads(nt)
    {
        dca_scratch *sc = &w->scr[thread_id()];
#pragma omp for schedule(dynamic, 1) reduction(| : bad)
        for (long s = 0; s < nsub; s++)
            for (size_t k = w->sub_lo[s]; k < w->sub_hi[s]; k++)
                if (assemble_one(w, &w->pn[k], sc, full) != MBS_OK) {
                    bad = 1;
                    break;
                }
#pragma omp single
        {
            for (size_t i = 0; i < w->ntop && !bad; i++)
                bad = assemble_one(w, &w->pn[w->top[i]], sc, full) != MBS_OK;
            for (size_t i = w->ntop; i-- > 0 && !bad;)
                disassemble_one(w, &w->pn[w->top[i]]);
        }
        if (!bad) {
#pragma omp for schedule(dynamic, 1) nowait
            for (long s = 0; s < nsub; s++) {
                for (size_t k = w->sub_hi[s]; k-- > w->sub_lo[s];)
                    disassemble_one(w, &w->pn[k]);
                for (size_t i = w->srow_ptr[s]; i < w->srow_ptr[s + 1]; i++)
                    sc->res = max_nn(sc->res, row_after(w, w->srow[i], &sc->mag));
            }
        }
    }
    if (bad)
        return MBS_SINGULAR_MATRIX;
    double r = 0.0, m = 0.0;
    for (int t = 0; t < nt; t++) {
        r = fmax(r, w->scr[t].res);
        m = fmax(m, w->scr[t].mag);
    }
    for (size_t i = 0; i < w->nxrow; i++)
        r = fmax(r, row_after(w, w->xrow[i], &m));
    *res = r;
    *mag = m;
    *ss = rows_ss(w);
    return MBS_OK;
}
#endif

int mbs_dca_passes(dca_ws *w, double *res, double *mag, double *ss)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int s, full = !w->factored;
#ifdef _OPENMP
    if (w->nsub > 0)
        s = passes_par(w, res, mag, ss, full);
    else
#endif
        s = passes_seq(w, res, mag, ss, full);
    w->factored = s == MBS_OK;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    w->pass_wall += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    w->passes++;
    return s;
}
