/* Radau IIA (methods/integrators/radau/radau5.c): methods index3/radau5, index2/radau5,
 * ggl/radau5, proj-index2/radau5 and the fixed-step variants.  This header only
 * exposes the Newton iteration matrix and the dense Newton solve, so that tests
 * can check the index-3 scaling of [arnold2016dae] Eqs. (69)-(70) (bounded matrix and
 * inverse as h -> 0) and the reduced systems against the full matrix. */
#ifndef MBS_RADAU5_H
#define MBS_RADAU5_H

#include "../../formulations/dae_form.h"

/* T = (1/h) A^-1 (x) E(y) - I (x) J(t, y)  (3n x 3n, A the Radau IIA matrix),
 * with scaled != 0 the row/column-scaled matrix the integrator factors:
 * unknowns (dq / h, dv, h dlambda, dmu), rows q 1, v h, position-level
 * constraints 1/h, velocity-level constraints 1.  Sets f->h = h.  Returns
 * MBS_OK, MBS_BAD_INPUT (h <= 0 or T of the wrong size), MBS_NO_MEMORY or a
 * callback status. */
int mbs_radau5_iteration_matrix(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y,
                                double h, int scaled, gsl_matrix *T);

/* dZ = -T^-1 R (3n) with T the unscaled matrix above, by the integrator's
 * dense path: RADAU5's transformation to one real and one complex scaled
 * system of order n, or with reduce != 0 and q' = v of order n - n_q
 * (*reduced = 1; radau5_linalg.c, as the integrator does).
 * Sets f->h = h.  MBS_OK, MBS_BAD_INPUT, MBS_NO_MEMORY, MBS_SINGULAR_MATRIX or
 * a callback status. */
int mbs_radau5_newton_solve(mbs_dae_form *f, mbs_ctx *ctx, double t, const double *y, double h,
                            int reduce, const double *R, double *dZ, int *reduced);

#endif
