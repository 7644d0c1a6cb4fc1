/* Explicit Runge-Kutta methods as data: a Butcher tableau
 *
 *      c | A            stages s, A strictly lower triangular (row-major s x s),
 *      --+----          b: weights of the order-p solution,
 *        | b            bhat: embedded weights of order p_hat (NULL: none; the
 *        | bhat         method then runs at fixed steps only).
 *
 * and its order conditions.  A tableau is enough to make an explicit
 * integrator for every ODE formulation (methods/integrators/explicit/explicit.h): in-tree tableaux
 * are listed in methods/integrators/explicit/tableaux.def (data in methods/integrators/explicit/erk_tableaux.c); others
 * are registered at run time with mbs_explicit_register_tableau().
 *
 * Order conditions (Hairer, Norsett, Wanner, Solving ODEs I, Sect. II.2,
 * Theorem 2.13): the method has order p iff  sum_i w_i Phi_i(t) = 1/gamma(t)
 * for every rooted tree t with |t| <= p vertices, where the elementary weight
 * of the tree with subtrees t_1..t_m at the root is Phi_i(t) = prod_k (A
 * Phi(t_k))_i (Phi_i(single vertex) = 1) and gamma(t) = |t| prod_k
 * gamma(t_k).  The trees are generated, not typed: all multisets of smaller
 * trees whose orders sum to n - 1 (1, 1, 2, 4, 9, 20, 48, 115 trees of orders
 * 1..8).  Phi uses A only, so the row-sum condition c_i = sum_j a_ij is
 * checked on its own. */
#ifndef MBS_TABLEAU_H
#define MBS_TABLEAU_H

#include <stddef.h>

enum {
    MBS_TABLEAU_MAX_STAGES = 64,
    MBS_TABLEAU_MAX_ORDER = 10, /* 1205 rooted trees of order <= 10 */
    MBS_TABLEAU_MAX_NAME = 24,  /* integrator names: [a-z0-9_-], at most 23 characters */
    MBS_TABLEAU_MAX_DENSE_DEGREE = 8
};

typedef struct mbs_tableau {
    const char *name;     /* integrator name, e.g. "tsit5": methods read FORMULATION/name */
    const char *summary;  /* one line */
    const char *citation; /* source of the coefficients */
    int stages;           /* s */
    int order;            /* p: order of b */
    int order_emb;        /* order of bhat; 0 when bhat is NULL */
    int fsal;             /* 1: first same as last (c_s = 1, last row of A = b, b_s = 0):
                             the last stage is the derivative at the new point */
    const double *c;      /* s nodes */
    const double *A;      /* s x s, row-major, zero on and above the diagonal */
    const double *b;      /* s weights */
    const double *bhat;   /* s embedded weights, or NULL */
    const double *e;      /* optional: b - bhat, rounded from exact values (NULL: b - bhat
                             in double); the error estimate is h sum_i e_i k_i */
    /* Optional continuous extension (dense output; Hairer, Norsett, Wanner I, Sect. II.6):
     *     y(t_n + theta h) = y_n + h sum_i b_i(theta) k_i,   theta in [0, 1],
     *     b_i(theta) = sum_{j=1..dense_degree} bd[i dense_degree + j - 1] theta^j,
     * of order dense_order (b_i(1) = b_i).  Uses the step's own stages only (no
     * extra evaluation).  bd NULL: none (the harness interpolates between steps). */
    int dense_order;
    int dense_degree;     /* at most MBS_TABLEAU_MAX_DENSE_DEGREE */
    const double *bd;     /* s x dense_degree, row-major */
    int increments;       /* 1: stage values, solution and error estimate from the
                             increments k_j - k_1 and the exact row sums (c_i, 1, 0), for
                             coefficients so large that their doubles miss the row sums
                             (explicit.c, combine); 0: the plain sums */
} mbs_tableau;

/* Result of an order-condition check. */
typedef struct mbs_order_report {
    int n_conditions;  /* rooted trees checked */
    int failed_order;  /* order of the first failed tree (0: all satisfied) */
    int failed_tree;   /* its index in generation order (0-based) */
    double resid;      /* sum_i w_i Phi_i(t) - 1/gamma(t) of the failed tree (or the largest) */
    double max_ratio;  /* max over trees of |residual| / round-off tolerance */
} mbs_order_report;

/* Check the order conditions of weights w (s values) on the tableau's A for
 * all rooted trees of order 1..order (<= MBS_TABLEAU_MAX_ORDER).  A condition
 * holds when |residual| <= 8 (order + s) eps (sum_i |w_i| |Phi|_i + 1/gamma),
 * |Phi| being the elementary weight of |A| (the round-off of evaluating it).
 * Returns MBS_OK when all hold, MBS_BAD_INPUT when one fails (rep says which)
 * or the order is out of range (rep->n_conditions = 0), MBS_NO_MEMORY. */
int mbs_tableau_order_check(const mbs_tableau *t, const double *w, int order,
                            mbs_order_report *rep);

/* The order conditions of the continuous extension at theta in (0, 1]:
 * sum_i b_i(theta) Phi_i(t) = theta^|t| / gamma(t) for every tree t with
 * |t| <= order.  The output at theta is the Runge-Kutta method (A / theta,
 * b(theta) / theta) with step theta h, so this is mbs_tableau_order_check of
 * that method (its round-off tolerance).  MBS_OK, MBS_BAD_INPUT (rep says
 * which tree; also for a tableau without bd or theta outside (0, 1]),
 * MBS_NO_MEMORY. */
int mbs_tableau_dense_check(const mbs_tableau *t, double theta, int order, mbs_order_report *rep);

/* Number of rooted trees of order exactly n (1 <= n <= MBS_TABLEAU_MAX_ORDER)
 * as the generator produces them (A000081: 1, 1, 2, 4, 9, 20, ...); -1 on bad
 * input or no memory. */
int mbs_rooted_tree_count(int n);

/* Everything a tableau must satisfy to be registered: name, sizes, finite
 * coefficients, explicit A, row sums c_i = sum_j a_ij, FSAL structure when
 * claimed, e = b - bhat when given, the order conditions of b up to `order`
 * and of bhat up to `order_emb`, and for a continuous extension b_i(1) = b_i
 * and its order conditions up to `dense_order` at theta = 1/4, 1/2, 3/4
 * (mbs_tableau_dense_check).  MBS_OK, or MBS_BAD_INPUT with a one-line
 * message naming the tableau and what is wrong (MBS_NO_MEMORY). */
int mbs_tableau_validate(const mbs_tableau *t, char *err, size_t errlen);

/* The in-tree tableaux (methods/integrators/explicit/tableaux.def). */
size_t mbs_tableau_count(void);
const mbs_tableau *mbs_tableau_at(size_t i);

#endif
