/* Tree-structured multibody systems in mixed coordinates ([arnold2013recursive], Sect. 3.1):
 * N bodies with absolute coordinates p_i in R^d and joint coordinates q_i in
 * R^{n_i}; body i follows its predecessor pi_i (-1 = the inertially fixed root,
 * bodies are numbered so that pi_i < i).  The joint relations 0 = k_i(p_i,
 * p_pi, q_i, t) enter through their Jacobians and second time derivative
 * ([arnold2013recursive] Eqs. (7)-(9)):
 *     0 = K_i p_i'' + H_i p_pi'' + J_i q_i'' + k_i^(II),
 * the equilibrium conditions through the body mass matrices M_i (symmetric,
 * positive semi-definite, Eq. (11)) and the applied forces f_i.
 *
 * A problem that provides a tree description (its state is q = joint
 * coordinates, v = q', n_lambda = 0) defines an mbs_tree_def; mbs_tree_find
 * maps a problem definition to it (NULL: none).  The recursive O(N) formalism
 * (methods/recursions/recursive.h) evaluates the accelerations from it. */
#ifndef MBS_TREE_H
#define MBS_TREE_H

#include <stddef.h>

#include "problem.h"

#define MBS_TREE_DMAX 6

/* Per-body data at (t, q, q'), filled by the problem: row-major d x d and
 * d x n_i arrays (n_i <= d) in compact storage owned by the recursion; the
 * callback sets every entry. */
typedef struct mbs_tree_body {
    double *M;  /* body mass matrix M_i (d x d) */
    double *K;  /* dk_i/dp_i (d x d, non-singular) */
    double *H;  /* dk_i/dp_pi (d x d) */
    double *J;  /* dk_i/dq_i (d x n_i, full column rank) */
    double *k2; /* k_i^(II) (d) */
    double *f;  /* applied forces f_i (d) */
} mbs_tree_body;

typedef struct mbs_tree_def {
    const mbs_problem_def *problem;
    size_t d; /* absolute coordinates per body (2: planar point mass, 3: planar body) */
    /* Number of bodies; the topology: parent[i] (-1 = root), n[i] joint
     * coordinates, which occupy q[off[i] .. off[i] + n[i] - 1] (off ascending). */
    size_t (*nbodies)(const mbs_problem *pb);
    int (*topology)(const mbs_problem *pb, int *parent, size_t *n, size_t *off);
    /* All body data at (t, q, v = q'), O(N). */
    int (*eval)(const mbs_problem *pb, double t, const double *q, const double *v,
                mbs_tree_body *b);
} mbs_tree_def;

const mbs_tree_def *mbs_tree_find(const mbs_problem_def *def);

#endif
