/* Rotations: 3-vectors, rotation matrices (row-major double[9]), unit
 * quaternions and the exponential and logarithm of SO(3) ([arnold2016dae], Sect. 3.1,
 * Eq. (33) and Remark 7).  Used by the heavy top's parametrisations and its
 * Lie-group form (problems/heavytop.c) and by tests measuring geodesic
 * distances. */
#ifndef MBS_SO3_H
#define MBS_SO3_H

/* c = a x b (c may not alias a or b). */
void mbs_cross(const double *a, const double *b, double *c);
/* out = R w, out = R^T w (out may not alias w). */
void mbs_matvec3(const double *R, const double *w, double *out);
void mbs_matTvec3(const double *R, const double *w, double *out);
/* C = A B for 3 x 3 row-major matrices (C may not alias A or B). */
void mbs_matmul3(const double *A, const double *B, double *C);

/* R(p) of [arnold2016dae] Remark 7b (|p|^2 times a rotation for a non-unit p). */
void mbs_quat_to_R(const double *p, double *R);
/* Unit quaternion of a rotation matrix (Shepperd's method), sign chosen closest
 * to prev (or p0 >= 0 when prev is NULL). */
void mbs_R_to_quat(const double *R, const double *prev, double *p);

/* R = Rz(phi) Ry(theta) Rz(psi) for Euler angles q = (phi, theta, psi) (precession,
 * nutation, spin; the heavy top's coords=euler, problems/heavytop.c). */
void mbs_euler_zyz_to_R(const double *q, double *R);

/* exp(w~) by Rodrigues' formula (Taylor series of its coefficients for small
 * |w|), so R exp(w~) is the flow of R' = R Omega~ over unit time at Omega = w. */
void mbs_so3_exp(const double *w, double *R);
/* w with exp(w~) = R, |w| <= pi (through the unit quaternion of R, accurate near
 * 0 and pi); |w| is the geodesic distance of R from I. */
void mbs_so3_log(const double *R, double *w);
/* Geodesic distance |log(A^T B)| of two rotations. */
double mbs_so3_distance(const double *A, const double *B);
/* max |(R^T R - I)_ij|: the distance of R from orthogonality. */
double mbs_so3_orth_error(const double *R);

#endif
