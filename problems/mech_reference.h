/* Reference values of a mechanism file's reported quantities from an independent
 * reduction of the mechanism (problem.h, reported_reference), named by the file's
 * [mechanism] reference = NAME.  One entry per reduction; each states which
 * reported quantities it gives (they must be the file's, in the same order). */
#ifndef MBS_MECH_REFERENCE_H
#define MBS_MECH_REFERENCE_H

#include "problem.h"

typedef struct mbs_mech_reference {
    const char *name;               /* the value of [mechanism] reference */
    const char *const *names;       /* the reported quantities it gives (NULL-terminated) */
    const char *what;               /* provenance, one line */
    int (*eval)(const mbs_problem *pb, double t, double *out);
    /* Optional: the branch's full state and a configuration's distance from it
     * (problem.h, branch); NULL when the reduction gives only the reported
     * quantities. */
    int (*branch)(const mbs_problem *pb, double t, const double *q, double *qb, double *vb,
                  double *off);
} mbs_mech_reference;

/* The entry of that name, or NULL. */
const mbs_mech_reference *mbs_mech_reference_find(const char *name);

/* The parallelogram branch of the N-four-bar (IFToMM A02): every crank at the
 * same angle theta from the +x axis, the couplers translating, so with T =
 * (1/2) m L^2 ((N + 1)/3 + N) theta'^2 and V = m g L ((N + 1)/2 + N) sin(theta),
 *     theta'' = -kappa (g/L) cos(theta),  kappa = ((N + 1)/2 + N) / ((N + 1)/3 + N).
 * With phi = theta + pi/2 this is a pendulum, phi'' = -a sin(phi), a = kappa g/L;
 * from theta(0) = pi/2, theta'(0) = w0 < 0 it rotates (energy above the
 * separatrix): phi/2 = am(K(m) - c t | m), c = sqrt(w0^2 + 4a)/2, m = 4a/(w0^2 + 4a)
 * (Byrd and Friedman 1971, 122.00 and 123.00; am through GSL's sn, cn).  Returns
 * theta and theta' at t. */
void mbs_nfourbar_branch(double N, double g, double L, double w0, double t, double *theta,
                         double *dtheta);
#endif
