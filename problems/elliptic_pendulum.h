/* Closed-form motion of a plane pendulum phi'' = -omega^2 sin(phi) through Jacobi
 * elliptic functions: sin(phi/2) = k sn(omega t + u0 | k^2), phi'(t) =
 * 2 k omega cn(omega t + u0 | k^2) (libration, 0 <= k < 1).  phi is measured from the
 * downward vertical.  Used for the exact solutions of `pendulum` ([arnold2016dae],
 * Example 1) and `pendulum-body` ([pennestri_coordinate_reduction], Sect. 8). */
#ifndef MBS_ELLIPTIC_PENDULUM_H
#define MBS_ELLIPTIC_PENDULUM_H

typedef struct mbs_elliptic_pendulum {
    double omega; /* sqrt(g/l) or sqrt(m g L / I_pivot) */
    double k;     /* elliptic modulus = sin(amplitude / 2) */
    double u0;    /* phase: argument of sn at t = t0 */
    double t0;
} mbs_elliptic_pendulum;

/* Motion through phi0 at t0 with phi'(t0) having the sign of `direction`, on the
 * orbit of modulus k.  Returns 0, or -1 if |sin(phi0/2)| > k or k >= 1. */
int mbs_ep_init_from_angle(mbs_elliptic_pendulum *ep, double omega, double k, double t0,
                           double phi0, int direction);

/* phi, phi', phi'' at time t (any of the outputs may be NULL). */
void mbs_ep_eval(const mbs_elliptic_pendulum *ep, double t, double *phi, double *dphi,
                 double *ddphi);

#endif
