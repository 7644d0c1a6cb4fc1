/* Rotations (problems/so3.h). */
#include "so3.h"

#include <math.h>
#include <stddef.h>

void mbs_cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

void mbs_matvec3(const double *R, const double *w, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = R[3 * i] * w[0] + R[3 * i + 1] * w[1] + R[3 * i + 2] * w[2];
}

void mbs_matTvec3(const double *R, const double *w, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = R[i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2];
}

void mbs_matmul3(const double *A, const double *B, double *C)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

void mbs_quat_to_R(const double *p, double *R)
{
    double p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3];
    R[0] = p0 * p0 + p1 * p1 - p2 * p2 - p3 * p3;
    R[1] = 2 * p1 * p2 - 2 * p0 * p3;
    R[2] = 2 * p1 * p3 + 2 * p0 * p2;
    R[3] = 2 * p1 * p2 + 2 * p0 * p3;
    R[4] = p0 * p0 - p1 * p1 + p2 * p2 - p3 * p3;
    R[5] = 2 * p2 * p3 - 2 * p0 * p1;
    R[6] = 2 * p1 * p3 - 2 * p0 * p2;
    R[7] = 2 * p2 * p3 + 2 * p0 * p1;
    R[8] = p0 * p0 - p1 * p1 - p2 * p2 + p3 * p3;
}

void mbs_R_to_quat(const double *R, const double *prev, double *p)
{
    double tr = R[0] + R[4] + R[8];
    double c[4] = {1 + tr, 1 + 2 * R[0] - tr, 1 + 2 * R[4] - tr, 1 + 2 * R[8] - tr};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (c[i] > c[k])
            k = i;
    double s = 0.5 * sqrt(c[k]);
    double f = 0.25 / s;
    switch (k) {
    case 0:
        p[0] = s, p[1] = (R[7] - R[5]) * f, p[2] = (R[2] - R[6]) * f, p[3] = (R[3] - R[1]) * f;
        break;
    case 1:
        p[1] = s, p[0] = (R[7] - R[5]) * f, p[2] = (R[1] + R[3]) * f, p[3] = (R[2] + R[6]) * f;
        break;
    case 2:
        p[2] = s, p[0] = (R[2] - R[6]) * f, p[1] = (R[1] + R[3]) * f, p[3] = (R[5] + R[7]) * f;
        break;
    default:
        p[3] = s, p[0] = (R[3] - R[1]) * f, p[1] = (R[2] + R[6]) * f, p[2] = (R[5] + R[7]) * f;
        break;
    }
    double dot = prev ? prev[0] * p[0] + prev[1] * p[1] + prev[2] * p[2] + prev[3] * p[3] : p[0];
    if (dot < 0.0)
        for (int i = 0; i < 4; i++)
            p[i] = -p[i];
}

/* R = Rz(phi) Ry(theta) Rz(psi) of q = (phi, theta, psi). */
void mbs_euler_zyz_to_R(const double *q, double *R)
{
    double cf = cos(q[0]), sf = sin(q[0]), ct = cos(q[1]), st = sin(q[1]);
    double cp = cos(q[2]), sp = sin(q[2]);
    /* A = Ry(theta) Rz(psi) */
    double A[9] = {ct * cp, -ct * sp, st, sp, cp, 0.0, -st * cp, st * sp, ct};
    for (int j = 0; j < 3; j++) {
        R[0 + j] = cf * A[j] - sf * A[3 + j];
        R[3 + j] = sf * A[j] + cf * A[3 + j];
        R[6 + j] = A[6 + j];
    }
}

/* exp(w~) = I + a w~ + b w~^2 with a = sin(th)/th and b = (1 - cos th)/th^2 written
 * as (sin(th/2)/(th/2))^2 / 2, which has no cancellation for small th. */
void mbs_so3_exp(const double *w, double *R)
{
    double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    double a = 1.0, b = 0.5;
    if (th > 1e-8) { /* below: a = 1 - th^2/6, b = 1/2 - th^2/24 equal 1, 1/2 in double */
        double s = sin(0.5 * th) / (0.5 * th);
        a = sin(th) / th;
        b = 0.5 * s * s;
    }
    double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0}, W2[9];
    mbs_matmul3(W, W, W2);
    for (int i = 0; i < 9; i++)
        R[i] = (i % 4 == 0 ? 1.0 : 0.0) + a * W[i] + b * W2[i];
}

void mbs_so3_log(const double *R, double *w)
{
    double p[4];
    mbs_R_to_quat(R, NULL, p); /* p0 >= 0: the rotation angle th = 2 atan2(|pv|, p0) <= pi */
    double nv = sqrt(p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    double f = nv > 0.0 ? 2.0 * atan2(nv, p[0]) / nv : 2.0 / p[0];
    for (int i = 0; i < 3; i++)
        w[i] = f * p[1 + i];
}

double mbs_so3_distance(const double *A, const double *B)
{
    double AtB[9], w[3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            AtB[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
    mbs_so3_log(AtB, w);
    return sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
}

double mbs_so3_orth_error(const double *R)
{
    double e = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j];
            e = fmax(e, fabs(d - (i == j ? 1.0 : 0.0)));
        }
    return e;
}
