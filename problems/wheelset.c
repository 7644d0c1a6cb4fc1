/* The rigid railway wheelset exactly as in the Test Set for IVP Solvers,
 * release 2.4 (Mazzia & Magherini 2008, problem II-22 "wheel"; Fortran wheel.F
 * rev. 1.2, residual RESWHS by Simeon, Fuehrer, Rentrop), transcribed in
 * the Test Set 2.4 description [testset24] (section numbers below refer to it); [arnold2016dae]
 * Examples 10-11.  Conical wheels on circular rail heads, creep forces after
 * Jaschinski, straight track; hunting motion.
 *
 * An extended problem (problems/problem.h, MBS_PB_EXTENDED, [arnold2016dae] Eq. (44)):
 *   q = p = (x, y, z, theta, phi),  v = p',
 *   lambda = (lambda_P, lambda_N): contact multipliers in the contract's
 *            convention M v' = f - B^T lambda, i.e. the physical Lambda_s of the
 *            Fortran (which enters with + b_s^T Lambda_s) is -lambda_s, and the
 *            published scaled multiplier is lambda_pub,s = -lambda_s / C, C = 1e4;
 *   x = (beta, psi_N, xi_N, psi_P, xi_P): beta an additional first-order state
 *            (angular velocity deviation about the axle, row 11), the contact
 *            coordinates s = (psi, xi) of both sides additional algebraic
 *            variables with their own index-1 equations 0 = h(q, s) (Sect. 4.2).
 * Side labels P (xi > 0, the Fortran's "left", published u14, u15, u16) and N
 * (xi < 0, "right", u12, u13, u17) as in wheelset.md Sect. 2.
 *
 * form=index2 (default, the Test Set's): constraint rows b_s . v = 0 (rows 12-13);
 * form=index3: the position-level contact constraints g1_s(p, s) = 0 instead
 * ([arnold2016dae] Figs. 12-14 compare the two); form=ggl: the index-2 rows and, with
 * multipliers mu = (mu_P, mu_N) appended to x, g1_s(p, s) = c_s and
 * p' = v - B^T mu ([arnold2016dae] Eq. (92); c_s = g1_s at the published initial values,
 * the invariant of the index-2 solution, so both forms have the same exact
 * solution; GGL removes the drift of Fig. 14).  Both index-2 forms run with the
 * index2/ methods that take extended problems (radau5, ida).
 * Why index3/radau5 is inaccurate on form=index3 (2e-2 relative error in x(10) at
 * tol 1e-6 where index2/radau5 reaches 6e-5; reproductions/wheelset-fig12-13.expect):
 * RADAU5's index-3 error weights divide the tolerances of v and beta (index 2) by
 * h and of lambda by h^2, and the creep forces depend on v, beta and lambda with
 * a high gain, so the accepted local errors become force and phase errors of the
 * limit cycle.  vindex=1 declares v and beta index 1 (2.8e-5 in 3133 steps), but
 * the estimate of index-2 components does not vanish as h -> 0 (step underflow
 * at tol <= 1e-11): a diagnosis, not a default.  The creep forces depend on the normal
 * forces, hence on lambda, so the whole system is given as E(y) y' = F(y)
 * (mbs_extension).  Plain callbacks: mass = the v-block of E (rows 6-10);
 * constraint = g1_s(p, s(p)) with s(p) solved from h(p, s) = 0 by Newton (so the
 * observer measures the position drift of the index-2 form, [arnold2016dae] Fig. 14);
 * jacobian = the rows b_s (= dg/dp because dg1/ds = 0 where h = 0: the contact
 * conditions are the stationarity conditions; checked by the battery's finite
 * differences); gamma by central differences of B(p) v along v; force is not
 * available (MBS_UNSUPPORTED: the creep forces need lambda and x).
 * Published order (17): p, v, beta, psi_N, xi_N, psi_P, xi_P, lambda_pub,P,
 * lambda_pub,N; the Test Set scores scd on all 17 (Sect. 7). */
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/status.h"
#include "problem.h"

enum { P_FORM, P_VINDEX };
enum { F_INDEX2 = 0, F_INDEX3 = 1, F_GGL = 2 };

static const mbs_param_def params[] = {
    [P_FORM] = {"form", F_INDEX2, 0, 2,
                "constraint rows: index2 (b_s v = 0, the Test Set's), index3 "
                "(g1_s(p, s) = 0) or ggl (b_s v = 0 and g1_s = c_s with p' = v - b^T mu, "
                "Arnold 2016 [arnold2016dae] Eq. (92); run it with index2/ methods)",
                "index2,index3,ggl", 1},
    [P_VINDEX] = {"vindex", 2, 1, 2,
                  "form=index3 only: index that v and beta are declared with for the "
                  "integrator's error weights (2: the Test Set's, RADAU5 NIND2; 1: as "
                  "index-1 variables, which shows why the index-3 form is inaccurate, "
                  "see reproductions/wheelset-fig12-13.expect; fails at tol <= 1e-12)",
                  NULL, 1},
};

/* Parameters (wheelset.md Sect. 3; Fortran constants).  h_A = 0.2 enters only
 * M3 = -h_A Q1 = 0 (m_A = 0, straight track, Sect. 4.4). */
static const double MR = 16.08, GRAV = 9.81, V0 = 30.0, RN0 = 0.1, OMEGA0 = 300.0;
static const double I1 = 0.0605, I2 = 0.366, CX = 6400.0, CZ = 6400.0, XL = 0.19;
static const double DELTA0 = 0.0262, AR = 0.1506, RS = 0.06, MU = 0.12, GM = 7.92e10;
static const double C11 = 4.72772197, C22 = 4.27526987, C23 = 1.97203505;
static const double GG = 0.7115218, EE = 1.3537956, SIGMA = 0.28, CSCALE = 1e4;
static const double PI_CREEP = 3.1415926; /* the Fortran's constant in CREEP */
static const double EPS_RAIL = 1e-5, B2_WHEEL = 4.0, TOL_D = 1e-8;

enum { NQ = 5, NL = 2, NX = 5, NY = 17, NXG = 7, NYG = 19 };
/* Offsets in y = q | v | lambda | x; form=ggl appends mu = (mu_P, mu_N) to x. */
enum { IV = 5, ILP = 10, ILN = 11, IBETA = 12, IPSN = 13, IXIN = 14, IPSP = 15, IXIP = 16 };
enum { IMUP = 17, IMUN = 18 };

#define FORM(pb) ((int)mbs_pb_param(pb, P_FORM))

static int dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl)
{
    (void)pb;
    *nq = NQ;
    *nv = NQ;
    *nl = NL;
    return MBS_OK;
}

static int setup(mbs_problem *pb, char *err, size_t errlen)
{
    if (mbs_pb_param(pb, P_VINDEX) != 2.0 && FORM(pb) != F_INDEX3) {
        snprintf(err, errlen, "wheelset: vindex=%g applies to form=index3 only",
                 mbs_pb_param(pb, P_VINDEX));
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

static int ext_dims(const mbs_problem *pb, size_t *nx)
{
    *nx = FORM(pb) == F_GGL ? NXG : NX;
    return MBS_OK;
}

/* Contact geometry of one side (Sect. 4.1-4.2). */
typedef struct side {
    double psi, xi, cps, sps, R, Rp, X, G, Gp, Gpp;
    double b[5]; /* b_s = dg1_s/dp */
    double g1;   /* index-3 contact constraint */
    double h[2]; /* index-1 contact conditions */
} side;

/* Sines and cosines of the yaw theta = p[3] and roll phi = p[4], computed once
 * per evaluation and shared by the geometry of both sides, the contact-plane
 * angles and the creep forces (the same libm values as computing them where
 * used, so the results are unchanged). */
typedef struct angles {
    double cth, sth, cph, sph;
} angles;

static void angles_of(const double *p, angles *a)
{
    a->cth = cos(p[3]);
    a->sth = sin(p[3]);
    a->cph = cos(p[4]);
    a->sph = sin(p[4]);
}

/* g1_s of a side whose geometry is computed (p[1] enters nothing else of it). */
static double side_g1(const double *p, const angles *an, const side *s)
{
    return s->G - p[1] - s->xi * an->sph + s->R * an->cph * s->cps;
}

static int geometry(const double *p, const angles *an, double psi, double xi, side *s)
{
    double cth = an->cth, sth = an->sth, cph = an->cph, sph = an->sph;
    double cps = cos(psi), sps = sin(psi), td = tan(DELTA0);
    double axi = fabs(xi);
    if (!(axi > 0.0 && axi < B2_WHEEL))
        return MBS_CALLBACK_FAILED; /* outside the wheel profile (Fortran: derailment) */
    s->psi = psi;
    s->xi = xi;
    s->cps = cps;
    s->sps = sps;
    s->R = RN0 + td * (AR - axi);
    s->Rp = -(xi > 0.0 ? 1.0 : -1.0) * td;
    double R = s->R, Rp = s->Rp;
    s->X = p[0] + xi * cth * cph + R * (cth * sph * cps - sth * sps);
    double ax = fabs(s->X), c0 = AR + RS * sin(DELTA0);
    if (!(ax > c0 - RS + EPS_RAIL && ax < c0 + RS - EPS_RAIL))
        return MBS_CALLBACK_FAILED; /* outside the rail profile (derailment) */
    double T = sqrt(RS * RS - (ax - c0) * (ax - c0));
    s->G = T - RN0 - RS * cos(DELTA0);
    s->Gp = (s->X > 0.0 ? 1.0 : -1.0) * (c0 - ax) / T;
    s->Gpp = -RS * RS / (T * T * T);
    double Gp = s->Gp;
    s->b[0] = Gp;
    s->b[1] = -1.0;
    s->b[2] = 0.0;
    s->b[3] = Gp * (R * (-cth * sps - cps * sph * sth) - xi * cph * sth);
    s->b[4] = -R * cps * sph - xi * cph + Gp * (R * cph * cps * cth - xi * cth * sph);
    s->g1 = side_g1(p, an, s);
    s->h[0] = Gp * (Rp * sph + cph * cps) + Rp * cth * cph - cth * sph * cps + sth * sps;
    s->h[1] = Rp * sth * cph - sth * sph * cps - cth * sps;
    return MBS_OK;
}

/* Creep forces of one side in the track frame and their moments (Sect. 4.3, 4.5),
 * with cd, sd the cosine and sine of the contact-plane angle delta and k from
 * creep_prepare.
 * left = 1 for side P (the Fortran's "left" formulas), 0 for N.  *sw (when not
 * NULL) = (Tx^2 + Ty^2) / W_T^2 - 1 of the tanh-limited forces before the
 * saturation: positive where they are scaled back to |T| = mu N.  The forces are
 * continuous across sw = 0 but not differentiable there (the saturated side
 * drops the radial derivative of T), so sw is a switching function of the
 * right-hand side (mbs_extension.switches).  T = NULL: sw only (T, E untouched). */
typedef struct creep_in {
    double c, S, K; /* contact-ellipse half axis, sin and cos of theta / cos(delta) */
} creep_in;

/* The contact ellipse's half axis c of one side (from its geometry and normal
 * force N; Sect. 4.3). */
static double creep_ellipse(const side *s, double N)
{
    double R = s->R, Rp = s->Rp;
    double RR = R * sqrt(1.0 + Rp * Rp);
    double g = 1.0 + s->Gp * s->Gp;
    double rhoG = -s->Gpp / (g * sqrt(g)), rhoR = 0.0; /* -G'' / (1 + G'^2)^(3/2) */
    double A = 0.5 / RR, Bc = 0.5 * (rhoG + rhoR);
    return cbrt(3.0 * fabs(N) * (1.0 - SIGMA) * EE /
                (2.0 * PI_CREEP * (A + Bc) * GM * sqrt(GG)));
}

/* What creep() takes from the configuration and the normal force of a side,
 * i.e. everything it does not take from v and beta. */
static void creep_prepare(const double *p, const side *s, double cd, double N, creep_in *k)
{
    k->c = creep_ellipse(s, N);
    /* The yaw angle enters the creep routine as theta / cos(delta) (Sect. 4.3). */
    const double u = p[3] / cd; /* one quotient: sin and cos of it in one sincos */
    k->S = sin(u);
    k->K = cos(u);
}

static void creep(const angles *an, const double *v, double beta, const side *s,
                  const creep_in *k, double cd, double sd, double N, int left, double T[3],
                  double E[3], double *sw)
{
    double thd = v[3], phd = v[4];
    double cph = an->cph, sph = an->sph, cth = an->cth, sth = an->sth;
    double cps = s->cps, sps = s->sps, xi = s->xi, R = s->R;
    double Om = OMEGA0 + beta;
    double c = k->c, S = k->S, K = k->K;
    double w1 = -Om * R * (S * cps + K * sph * sps) + v[0] -
                thd * (R * (S * sph * cps + K * sps) + xi * S * cph) -
                phd * K * (xi * sph - R * cph * cps);
    double w2 = Om * R * cph * sps + v[1] + phd * (xi * cph + R * sph * cps);
    double w3 = -Om * R * (K * cps - S * sph * sps) + V0 + v[2] -
                thd * (xi * K * cph + R * (K * sph * cps - S * sps)) +
                phd * S * (xi * sph - R * cph * cps);
    double a = w1 - 2.0 * v[0], b = w2 - 2.0 * v[1], e = w3 - 2.0 * v[2] - 2.0 * V0;
    double vroll = 0.5 * sqrt(a * a + b * b + e * e);
    double nux = (S * w1 + K * w3) / vroll, nuy, phis;
    if (left) {
        nuy = (K * cd * w1 + sd * w2 - S * cd * w3) / vroll;
        phis = (-sd * Om + cd * thd) / vroll;
    } else {
        nuy = (K * cd * w1 - sd * w2 - S * cd * w3) / vroll;
        phis = (sd * Om + cd * thd) / vroll;
    }
    double WT = MU * N;
    double Tx = -WT * tanh(GM * c * c * C11 * nux / WT);
    double Ty = -WT * tanh(GM * c * c * C22 * nuy / WT + GM * c * c * c * C23 * phis / WT);
    double tt = Tx * Tx + Ty * Ty;
    if (sw)
        *sw = tt / (WT * WT) - 1.0;
    if (!T)
        return; /* the switching function only */
    if (tt > WT * WT) {
        double f = fabs(WT) / sqrt(tt);
        Tx *= f;
        Ty *= f;
    }
    T[0] = S * Tx + K * cd * Ty;
    T[1] = (left ? 1.0 : -1.0) * sd * Ty;
    T[2] = K * Tx - S * cd * Ty;
    E[0] = -(xi * sth + R * sps * cth * cph) * T[0] - R * sps * sph * T[1] +
           (-xi * cth + R * sps * sth * cph) * T[2];
    E[1] = -(xi * cth * sph - R * cps * cth * cph) * T[0] + (xi * cph + R * cps * sph) * T[1] +
           (xi * sth * sph - R * cps * sth * cph) * T[2];
    E[2] = -R * (cps * sth + sps * cth * sph) * T[0] + R * sps * cph * T[1] -
           R * (cps * cth - sps * sth * sph) * T[2];
}

/* The published initial position and contact points (Sect. 5; Fortran init,
 * negative u12, u13). */
static const double P0[5] = {0.14941e-2, 0.40089e-6, 0.11241e-5, -0.28573e-3, 0.26459e-3};
static const double S0[4] = {-7.4122380357667139e-6, -0.1521364296121248,
                             7.5634406395172940e-6, 0.1490635714733819}; /* psi_N xi_N psi_P xi_P */

/* c_s = g1_s at the published initial values (5.3e-10 on both sides): the
 * invariant g1_s = c_s of the Test Set's index-2 solution (b_s v = 0 and
 * dg1_s/ds = 0), which the GGL rows keep so that form=ggl has the same exact
 * solution as form=index2. */
static int g1_offsets(double c[2])
{
    side sP, sN;
    angles an;
    angles_of(P0, &an);
    if (geometry(P0, &an, S0[2], S0[3], &sP) != MBS_OK ||
        geometry(P0, &an, S0[0], S0[1], &sN) != MBS_OK)
        return MBS_CALLBACK_FAILED;
    c[0] = sP.g1;
    c[1] = sN.g1;
    return MBS_OK;
}

/* Contact geometry of both sides, the contact-plane angles delta_s (with
 * their cosines and sines) and the normal forces N_s of y (Sect. 4.2): what
 * the creep forces of either side need. */
typedef struct contact {
    angles an;
    side P, N;
    double cdP, sdP, cdN, sdN, NP, NN, LP, LN;
    creep_in kP, kN;
} contact;

/* The normal forces N_s from the multipliers (contact planes computed), then
 * the creep inputs of both sides. */
static int contact_normal(const double *y, contact *c)
{
    const side *sP = &c->P, *sN = &c->N;
    /* Normal forces from the physical multipliers Lambda_s = -lambda_s. */
    double cdP = c->cdP, sdP = c->sdP, cdN = c->cdN, sdN = c->sdN;
    double LP = -y[ILP], LN = -y[ILN];
    double D = -sdP * cdN - sdN * cdP;
    if (fabs(D) < TOL_D)
        return MBS_CALLBACK_FAILED;
    double W1 = sP->b[0] * LP + sN->b[0] * LN, W2 = sP->b[1] * LP + sN->b[1] * LN;
    c->NP = (cdN * W1 - sdN * W2) / D;
    c->NN = (-cdP * W1 - sdP * W2) / D;
    c->LP = LP;
    c->LN = LN;
    if (c->NP == 0.0 || c->NN == 0.0)
        return MBS_CALLBACK_FAILED;
    creep_prepare(y, sP, c->cdP, c->NP, &c->kP);
    creep_prepare(y, sN, c->cdN, c->NN, &c->kN);
    return MBS_OK;
}

/* The contact planes and what follows from them, both sides' geometry
 * computed. */
static int contact_planes(const double *y, contact *c)
{
    const side *sP = &c->P, *sN = &c->N;
    double cph = c->an.cph, sph = c->an.sph, cth = c->an.cth, sth = c->an.sth;
    /* Contact-plane angles delta: the principal-value arctangent of the
     * quotient q, so cos delta = 1/sqrt(1 + q^2) > 0 and sin delta = q cos delta
     * (no atan, sin, cos). */
    double num, den, q;
    num = (sP->Rp * cph - sph * sP->cps) * cth + sP->sps * sth;
    den = -sP->Rp * sph - sP->cps * cph;
    q = num / den;
    c->cdP = 1.0 / sqrt(1.0 + q * q);
    c->sdP = q * c->cdP;
    num = (sN->Rp * cph - sph * sN->cps) * cth + sN->sps * sth;
    den = sN->Rp * sph + sN->cps * cph;
    q = num / den;
    c->cdN = 1.0 / sqrt(1.0 + q * q);
    c->sdN = q * c->cdN;
    return contact_normal(y, c);
}

/* Both sides' geometry (angles computed) and what follows from it. */
static int contact_sides(const double *y, contact *c)
{
    if (geometry(y, &c->an, y[IPSP], y[IXIP], &c->P) != MBS_OK ||
        geometry(y, &c->an, y[IPSN], y[IXIN], &c->N) != MBS_OK)
        return MBS_CALLBACK_FAILED;
    return contact_planes(y, c);
}

static int contact_state(const double *y, contact *c)
{
    angles_of(y, &c->an);
    return contact_sides(y, c);
}

/* F(y) of E(y) y' = F(y), rows in the order of y (problem.h): p' rows, v' rows
 * (Sect. 4.5 rows 6-10), constraint rows (P, N), beta row (row 11), contact
 * conditions h of N, then P (Sect. 4.2); form=ggl: then the position rows
 * g1_s - c_s (P, N), and p' = v - b_P^T mu_P - b_N^T mu_N ([arnold2016dae] Eq. (92a) with
 * G = dg1/dp = B: dg1_s/ds = 0 where the contact conditions hold). */
/* F(y) from the contact state ct of y (contact_state). */
static int rhs_of(const mbs_problem *pb, const double *y, const contact *ct, double *F)
{
    const double *p = y, *v = y + IV;
    const side sP = ct->P, sN = ct->N;
    double th = p[3], thd = v[3], phd = v[4], beta = y[IBETA];
    double cph = ct->an.cph, sph = ct->an.sph;
    double LP = ct->LP, LN = ct->LN;
    double TP[3], TN[3], EP[3], EN[3];
    creep(&ct->an, v, beta, &sP, &ct->kP, ct->cdP, ct->sdP, ct->NP, 1, TP, EP, NULL);
    creep(&ct->an, v, beta, &sN, &ct->kN, ct->cdN, ct->sdN, ct->NN, 0, TN, EN, NULL);
    double Om = OMEGA0 + beta;
    double M2 = -2.0 * XL * XL * CZ * th; /* wagon-body moment (Sect. 4.4) */
    for (int i = 0; i < 5; i++)
        F[i] = v[i];
    if (FORM(pb) == F_GGL) {
        double c[2];
        if (g1_offsets(c) != MBS_OK)
            return MBS_CALLBACK_FAILED;
        for (int i = 0; i < 5; i++)
            F[i] -= sP.b[i] * y[IMUP] + sN.b[i] * y[IMUN];
        F[IMUP] = sP.g1 - c[0];
        F[IMUN] = sN.g1 - c[1];
    }
    double cf[5];
    cf[0] = TP[0] + TN[0] - 2.0 * CX * p[0];
    cf[1] = TP[1] + TN[1] - MR * GRAV;
    cf[2] = TP[2] + TN[2] - 2.0 * CZ * p[2];
    cf[3] = I2 * thd * phd * sph - I1 * Om * phd - (I1 - I2) * thd * phd * sph + EP[0] +
            EN[0] + cph * M2;
    cf[4] = I1 * Om * thd * cph + (I1 - I2) * thd * thd * sph * cph + EP[1] + EN[1];
    for (int i = 0; i < 5; i++)
        F[IV + i] = cf[i] + sP.b[i] * LP + sN.b[i] * LN; /* = f - B^T lambda */
    if (FORM(pb) != F_INDEX3) {
        double rP = 0.0, rN = 0.0;
        for (int i = 0; i < 5; i++) {
            rP += sP.b[i] * v[i];
            rN += sN.b[i] * v[i];
        }
        F[ILP] = rP;
        F[ILN] = rN;
    } else {
        F[ILP] = sP.g1;
        F[ILN] = sN.g1;
    }
    F[IBETA] = -I1 * thd * phd * cph + EP[2] + EN[2] + sph * M2;
    F[IPSN] = sN.h[0];
    F[IXIN] = sN.h[1];
    F[IPSP] = sP.h[0];
    F[IXIP] = sP.h[1];
    return MBS_OK;
}

static int ext_rhs(const mbs_problem *pb, double t, const double *y, double *F)
{
    (void)t;
    contact ct;
    if (contact_state(y, &ct) != MBS_OK)
        return MBS_CALLBACK_FAILED;
    return rhs_of(pb, y, &ct, F);
}

/* The contact state of y + d e_j from ct, that of y: what column j moves, recomputed
 * from there on (the same operations as contact_state, so the same values).  The
 * geometry depends on x, theta, phi (p[0], p[3], p[4]) and s, the normal forces
 * on lambda; y (p[1]) enters only g1, and z, v, beta and mu none of it. */
static int contact_column(const double *y, size_t j, contact *ct)
{
    switch (j) {
    case 0:
        return contact_sides(y, ct);
    case 1:
        ct->P.g1 = side_g1(y, &ct->an, &ct->P);
        ct->N.g1 = side_g1(y, &ct->an, &ct->N);
        return MBS_OK;
    case 3:
    case 4:
        return contact_state(y, ct);
    case ILP:
    case ILN:
        return contact_normal(y, ct);
    case IPSN:
    case IXIN:
        if (geometry(y, &ct->an, y[IPSN], y[IXIN], &ct->N) != MBS_OK)
            return MBS_CALLBACK_FAILED;
        return contact_planes(y, ct);
    case IPSP:
    case IXIP:
        if (geometry(y, &ct->an, y[IPSP], y[IXIP], &ct->P) != MBS_OK)
            return MBS_CALLBACK_FAILED;
        return contact_planes(y, ct);
    default:
        return MBS_OK;
    }
}

/* dF/dy (mbs_extension.jac) by forward differences with the step of
 * methods/formulations/dae_form.h (sqrt(eps) max(1, |y_j|)), column j from
 * F(y + d e_j) with only what y_j moves recomputed (contact_column): the same
 * columns as differences of ext_rhs, at about half its cost per column. */
static int ext_jac(const mbs_problem *pb, double t, const double *y, gsl_matrix *J)
{
    (void)t;
    const size_t n = FORM(pb) == F_GGL ? NYG : NY;
    double yp[NYG], F0[NYG], F1[NYG];
    contact c0, ct;
    if (contact_state(y, &c0) != MBS_OK || rhs_of(pb, y, &c0, F0) != MBS_OK)
        return MBS_CALLBACK_FAILED;
    memcpy(yp, y, n * sizeof(double));
    for (size_t j = 0; j < n; j++) {
        double d = sqrt(DBL_EPSILON) * fmax(1.0, fabs(y[j]));
        yp[j] = y[j] + d;
        d = yp[j] - y[j];
        ct = c0;
        int s = contact_column(yp, j, &ct);
        if (s == MBS_OK)
            s = rhs_of(pb, yp, &ct, F1);
        yp[j] = y[j];
        if (s != MBS_OK)
            return MBS_CALLBACK_FAILED;
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(J, i, j, (F1[i] - F0[i]) / d);
    }
    return MBS_OK;
}

/* Switching functions (mbs_extension.switches): sw_P, sw_N of creep() for the
 * two sides, zero where the creep force of that side enters or leaves the
 * saturation |T| = mu N. */
static int ext_switches(const mbs_problem *pb, double t, const double *y, double *sw)
{
    (void)pb, (void)t;
    contact ct;
    if (contact_state(y, &ct) != MBS_OK)
        return MBS_CALLBACK_FAILED;
    creep(&ct.an, y + IV, y[IBETA], &ct.P, &ct.kP, ct.cdP, ct.sdP, ct.NP, 1, NULL, NULL, &sw[0]);
    creep(&ct.an, y + IV, y[IBETA], &ct.N, &ct.kN, ct.cdN, ct.sdN, ct.NN, 0, NULL, NULL, &sw[1]);
    return MBS_OK;
}

/* E(y): identity on p, diag(m_R, m_R, m_R, I2 cos(phi), I2) on v, the beta row
 * I1 sin(phi) theta'' + I1 beta' (Sect. 4.5 rows 9, 11); zero on the algebraic rows. */
static int ext_mass(const mbs_problem *pb, double t, const double *y, gsl_matrix *E)
{
    (void)pb, (void)t;
    gsl_matrix_set_zero(E);
    for (size_t i = 0; i < 5; i++)
        gsl_matrix_set(E, i, i, 1.0);
    gsl_matrix_set(E, IV + 0, IV + 0, MR);
    gsl_matrix_set(E, IV + 1, IV + 1, MR);
    gsl_matrix_set(E, IV + 2, IV + 2, MR);
    gsl_matrix_set(E, IV + 3, IV + 3, I2 * cos(y[4]));
    gsl_matrix_set(E, IV + 4, IV + 4, I2);
    gsl_matrix_set(E, IBETA, IV + 3, I1 * sin(y[4]));
    gsl_matrix_set(E, IBETA, IBETA, I1);
    return MBS_OK;
}

/* Index of the variables (Sect. 1): index2 form p, v, beta, s: 1, lambda: 2;
 * index3 form 1, 2, 2, 1, 3 for (p, v, beta, s, lambda) (vindex=1: v and beta
 * declared 1, a demonstration, see the parameter); ggl form as index2 with mu: 2
 * ([arnold2016dae] Sect. 4.2: GGL is an index-2 system). */
static int ext_index(const mbs_problem *pb, int *idx)
{
    int i3 = FORM(pb) == F_INDEX3;
    int iv = i3 ? (int)mbs_pb_param(pb, P_VINDEX) : 1;
    for (int i = 0; i < (FORM(pb) == F_GGL ? NYG : NY); i++)
        idx[i] = 1;
    for (int i = IV; i < IV + 5; i++)
        idx[i] = iv;
    idx[IBETA] = iv;
    idx[ILP] = idx[ILN] = i3 ? 3 : 2;
    if (FORM(pb) == F_GGL)
        idx[IMUP] = idx[IMUN] = 2;
    return MBS_OK;
}

static int solve_side(const double *p, double xi0, side *s);
static int project(const mbs_problem *pb, const double *c, double *z);

/* Consistent initial values (Sect. 5; Fortran init, negative u12, u13).  The
 * published p0 satisfies the position constraints only to g1 = 5e-10 (its y0 =
 * 0.40089e-6 has 5 digits), which the index-2 form keeps as an invariant; for
 * form=index3 (y, phi) are projected onto g1 = 0 (changes of about 5e-10) and s
 * re-solved, so that the index-3 form starts consistently; form=ggl keeps the
 * published values and g1_s = c_s (g1_offsets), i.e. the Test Set's solution. */
static int initial(const mbs_problem *pb, double *q0, double *v0, double *lambda0,
                   int *have_lambda)
{
    memcpy(q0, P0, sizeof P0);
    memset(v0, 0, 5 * sizeof(double));
    side sP = {0}, sN = {0};
    if (FORM(pb) == F_INDEX3) {
        double z[10] = {0}, c[2] = {0.0, 0.0};
        memcpy(z, P0, sizeof P0);
        int s;
        if ((s = project(pb, c, z)) != MBS_OK || (s = solve_side(z, AR, &sP)) != MBS_OK ||
            (s = solve_side(z, -AR, &sN)) != MBS_OK)
            return s;
        memcpy(q0, z, sizeof P0);
    }
    if (lambda0) {
        /* lambda then x (problem.h, extended problems). */
        lambda0[0] = -CSCALE * -0.83593e-2; /* lambda_P = -C lambda_pub,P (u16) */
        lambda0[1] = -CSCALE * -0.74144e-2; /* lambda_N = -C lambda_pub,N (u17) */
        lambda0[2] = 0.0;                   /* beta */
        memcpy(lambda0 + 3, S0, sizeof S0); /* psi_N, xi_N, psi_P, xi_P (u12-u15) */
        if (FORM(pb) == F_GGL)
            lambda0[7] = lambda0[8] = 0.0; /* mu_P, mu_N: zero on the exact solution */
        if (FORM(pb) == F_INDEX3) {
            lambda0[3] = sN.psi;
            lambda0[4] = sN.xi;
            lambda0[5] = sP.psi;
            lambda0[6] = sP.xi;
        }
    }
    *have_lambda = 1;
    return MBS_OK;
}

/* s(p) of one side: Newton on h(p, s) = 0 from the nominal contact point,
 * 2 x 2 Jacobian by central differences. */
static int solve_side(const double *p, double xi0, side *s)
{
    double psi = 0.0, xi = xi0;
    int done = 0;
    angles an;
    angles_of(p, &an);
    for (int it = 0; it < 40; it++) {
        side a, b;
        if (geometry(p, &an, psi, xi, s) != MBS_OK)
            return MBS_CALLBACK_FAILED;
        double J[2][2], hs = 1e-7;
        for (int j = 0; j < 2; j++) {
            double dps = j == 0 ? hs : 0.0, dxi = j == 1 ? hs : 0.0;
            if (geometry(p, &an, psi + dps, xi + dxi, &a) != MBS_OK ||
                geometry(p, &an, psi - dps, xi - dxi, &b) != MBS_OK)
                return MBS_CALLBACK_FAILED;
            J[0][j] = (a.h[0] - b.h[0]) / (2.0 * hs);
            J[1][j] = (a.h[1] - b.h[1]) / (2.0 * hs);
        }
        double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
        if (!(fabs(det) > 0.0))
            return MBS_SINGULAR_MATRIX;
        double d0 = (J[1][1] * s->h[0] - J[0][1] * s->h[1]) / det;
        double d1 = (-J[1][0] * s->h[0] + J[0][0] * s->h[1]) / det;
        psi -= d0;
        xi -= d1;
        if (fabs(d0) + fabs(d1) <= 1e-14) /* one more step after convergence */
            done++;
        if (done == 2)
            return geometry(p, &an, psi, xi, s);
    }
    return MBS_NEWTON_DIVERGED;
}

static int mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M)
{
    (void)pb, (void)t;
    gsl_matrix_set_zero(M);
    gsl_matrix_set(M, 0, 0, MR);
    gsl_matrix_set(M, 1, 1, MR);
    gsl_matrix_set(M, 2, 2, MR);
    gsl_matrix_set(M, 3, 3, I2 * cos(q[4]));
    gsl_matrix_set(M, 4, 4, I2);
    return MBS_OK;
}

static int force(const mbs_problem *pb, double t, const double *q, const double *v, double *f)
{
    (void)pb, (void)t, (void)q, (void)v, (void)f;
    return MBS_UNSUPPORTED; /* creep forces depend on lambda and x: use ext->rhs */
}

static int constraint(const mbs_problem *pb, double t, const double *q, double *g)
{
    (void)pb, (void)t;
    side sP, sN;
    int s;
    if ((s = solve_side(q, AR, &sP)) != MBS_OK || (s = solve_side(q, -AR, &sN)) != MBS_OK)
        return s;
    g[0] = sP.g1;
    g[1] = sN.g1;
    return MBS_OK;
}

static int jacobian(const mbs_problem *pb, double t, const double *q, gsl_matrix *G)
{
    (void)pb, (void)t;
    side sP, sN;
    int s;
    if ((s = solve_side(q, AR, &sP)) != MBS_OK || (s = solve_side(q, -AR, &sN)) != MBS_OK)
        return s;
    for (size_t j = 0; j < 5; j++) {
        gsl_matrix_set(G, 0, j, sP.b[j]);
        gsl_matrix_set(G, 1, j, sN.b[j]);
    }
    return MBS_OK;
}

/* gamma = -(B v)_p v by central differences along v. */
static int gamma_fn(const mbs_problem *pb, double t, const double *q, const double *v,
                    double *gam)
{
    double vn = 0.0;
    for (int i = 0; i < 5; i++)
        vn = fmax(vn, fabs(v[i]));
    if (vn == 0.0) {
        gam[0] = gam[1] = 0.0;
        return MBS_OK;
    }
    double h = 1e-5 / vn, qa[5], qb[5], Ga[10], Gb[10];
    for (int i = 0; i < 5; i++) {
        qa[i] = q[i] + h * v[i];
        qb[i] = q[i] - h * v[i];
    }
    gsl_matrix_view A = gsl_matrix_view_array(Ga, 2, 5), B = gsl_matrix_view_array(Gb, 2, 5);
    int s;
    if ((s = jacobian(pb, t, qa, &A.matrix)) != MBS_OK ||
        (s = jacobian(pb, t, qb, &B.matrix)) != MBS_OK)
        return s;
    for (int k = 0; k < 2; k++) {
        double d = 0.0;
        for (int i = 0; i < 5; i++)
            d += (Ga[5 * k + i] - Gb[5 * k + i]) * v[i];
        gam[k] = -d / (2.0 * h);
    }
    return MBS_OK;
}

/* Published order (Sect. 2): p, v, beta, psi_N, xi_N, psi_P, xi_P, lambda_pub,P,
 * lambda_pub,N with lambda_pub,s = -lambda_s / C. */
static int published(const mbs_problem *pb, double t, const double *y, double *out, size_t *n)
{
    (void)pb, (void)t;
    *n = NY;
    if (!out)
        return MBS_OK;
    memcpy(out, y, 10 * sizeof(double));
    memcpy(out + 10, y + IBETA, 5 * sizeof(double));
    out[15] = -y[ILP] / CSCALE;
    out[16] = -y[ILN] / CSCALE;
    return MBS_OK;
}

/* ---- independent formulation: the index-1 ODE in (p, v, beta) ----------------
 * For reference generation (problem.h `independent`): s(p) from h(p, s) = 0 by
 * Newton, lambda from the acceleration-level constraints b_s v' = gamma_s
 * ([arnold2016dae] Eq. (17); d/dt of the index-2 rows with s = s(p)), where v' and
 * beta' follow from rows 6-11 for given lambda (diagonal v-block of E); the
 * creep forces depend on lambda, so lambda solves 2 nonlinear equations
 * (Newton, central-difference 2 x 2 Jacobian, warm start).  Integrated by GSL
 * rk8pd: no DAE integrator and no extended-form code path is shared with the
 * method under test (only the force and geometry formulas). */
typedef struct ode_ws {
    const mbs_problem *pb;
    double lam[2]; /* warm start */
    double y[NYG], F[NYG]; /* room for form=ggl's mu (zero here) */
} ode_ws;

/* y (full state) from (p, v, beta) and lambda, s solved; the residual of the
 * acceleration constraints, and v', beta' into acc (length 6). */
static int accel_residual(ode_ws *w, const double *z, const double *lam, const double *gam,
                          double *acc, double *res)
{
    side sP, sN;
    int s;
    if ((s = solve_side(z, AR, &sP)) != MBS_OK || (s = solve_side(z, -AR, &sN)) != MBS_OK)
        return s;
    memcpy(w->y, z, 10 * sizeof(double));
    w->y[ILP] = lam[0];
    w->y[ILN] = lam[1];
    w->y[IBETA] = z[10];
    w->y[IPSN] = sN.psi;
    w->y[IXIN] = sN.xi;
    w->y[IPSP] = sP.psi;
    w->y[IXIP] = sP.xi;
    if ((s = ext_rhs(w->pb, 0.0, w->y, w->F)) != MBS_OK)
        return s;
    double cph = cos(z[4]), sph = sin(z[4]);
    acc[0] = w->F[IV + 0] / MR;
    acc[1] = w->F[IV + 1] / MR;
    acc[2] = w->F[IV + 2] / MR;
    acc[3] = w->F[IV + 3] / (I2 * cph);
    acc[4] = w->F[IV + 4] / I2;
    acc[5] = (w->F[IBETA] - I1 * sph * acc[3]) / I1;
    res[0] = -gam[0];
    res[1] = -gam[1];
    for (int i = 0; i < 5; i++) {
        res[0] += sP.b[i] * acc[i];
        res[1] += sN.b[i] * acc[i];
    }
    return MBS_OK;
}

static int ode_rhs(double t, const double z[], double dz[], void *data)
{
    (void)t;
    ode_ws *w = data;
    double gam[2], acc[6], res[2], a2[6], rp[2], rm[2];
    if (gamma_fn(w->pb, 0.0, z, z + 5, gam) != MBS_OK)
        return GSL_EBADFUNC;
    double *lam = w->lam;
    for (int it = 0; it < 30; it++) {
        if (accel_residual(w, z, lam, gam, acc, res) != MBS_OK)
            return GSL_EBADFUNC;
        double J[2][2];
        for (int j = 0; j < 2; j++) {
            double l[2] = {lam[0], lam[1]}, hl = 1e-6 * fmax(1.0, fabs(lam[j]));
            l[j] = lam[j] + hl;
            if (accel_residual(w, z, l, gam, a2, rp) != MBS_OK)
                return GSL_EBADFUNC;
            l[j] = lam[j] - hl;
            if (accel_residual(w, z, l, gam, a2, rm) != MBS_OK)
                return GSL_EBADFUNC;
            J[0][j] = (rp[0] - rm[0]) / (2.0 * hl);
            J[1][j] = (rp[1] - rm[1]) / (2.0 * hl);
        }
        double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
        if (!(fabs(det) > 0.0))
            return GSL_EBADFUNC;
        double d0 = (J[1][1] * res[0] - J[0][1] * res[1]) / det;
        double d1 = (-J[1][0] * res[0] + J[0][0] * res[1]) / det;
        lam[0] -= d0;
        lam[1] -= d1;
        if (fabs(d0) + fabs(d1) <= 1e-13 * (fabs(lam[0]) + fabs(lam[1]))) {
            if (accel_residual(w, z, lam, gam, acc, res) != MBS_OK)
                return GSL_EBADFUNC;
            memcpy(dz, z + 5, 5 * sizeof(double));
            memcpy(dz + 5, acc, 6 * sizeof(double));
            return GSL_SUCCESS;
        }
    }
    return GSL_EBADFUNC;
}

/* Projection of (y, phi) onto the invariants g1_s(p, s(p)) = c_s of the index-2
 * form (c = their initial values) and of (y', phi') onto b_s v = 0, after every
 * step (Newton in the 2 x 2 block of columns y, phi of B; x, z, theta, beta and
 * their velocities are the integrated ones).  Without it the drift of the
 * index-1 ODE limits the relative accuracy of the small y (about 1e-5). */
static int project(const mbs_problem *pb, const double *c, double *z)
{
    double g[2], Gd[10];
    gsl_matrix_view G = gsl_matrix_view_array(Gd, 2, 5);
    for (int it = 0; it < 20; it++) {
        int s;
        if ((s = constraint(pb, 0.0, z, g)) != MBS_OK ||
            (s = jacobian(pb, 0.0, z, &G.matrix)) != MBS_OK)
            return s;
        double r0 = g[0] - c[0], r1 = g[1] - c[1];
        double a = Gd[1], b = Gd[4], d = Gd[6], e = Gd[9], det = a * e - b * d;
        if (!(fabs(det) > 0.0))
            return MBS_SINGULAR_MATRIX;
        double dy = (e * r0 - b * r1) / det, dph = (-d * r0 + a * r1) / det;
        z[1] -= dy;
        z[4] -= dph;
        if (fabs(dy) + fabs(dph) <= 1e-16)
            break;
    }
    int s = jacobian(pb, 0.0, z, &G.matrix);
    if (s != MBS_OK)
        return s;
    double r[2] = {0.0, 0.0};
    for (int i = 0; i < 5; i++) {
        r[0] += Gd[i] * z[5 + i];
        r[1] += Gd[5 + i] * z[5 + i];
    }
    double a = Gd[1], b = Gd[4], d = Gd[6], e = Gd[9], det = a * e - b * d;
    z[5 + 1] -= (e * r[0] - b * r[1]) / det;
    z[5 + 4] -= (-d * r[0] + a * r[1]) / det;
    return MBS_OK;
}

/* The index-1 ODE from t0 through the n increasing times ts, the state at each
 * (q | v | lambda | x rows of Y, problem.h independent_grid). */
static int independent_grid(const mbs_problem *pb, const double *ts, size_t nt, double tol,
                            double *Y, int *have_lambda, char *what, size_t whatlen)
{
    ode_ws w = {.pb = pb};
    double y0[NYG];
    int hl;
    initial(pb, y0, y0 + IV, y0 + ILP, &hl);
    w.lam[0] = y0[ILP];
    w.lam[1] = y0[ILN];
    double z[11];
    memcpy(z, y0, 10 * sizeof(double));
    z[10] = y0[IBETA];
    gsl_odeiv2_system sys = {ode_rhs, NULL, 11, &w};
    gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, 11);
    gsl_odeiv2_control *ct = gsl_odeiv2_control_y_new(tol, tol);
    gsl_odeiv2_evolve *ev = gsl_odeiv2_evolve_alloc(11);
    int s = MBS_NO_MEMORY;
    double c[2];
    size_t ny = mbs_ny(pb);
    if (st && ct && ev && (s = constraint(pb, pb->t0, z, c)) == MBS_OK) {
        double t = pb->t0, h = 1e-5, dz[11];
        long n = 0;
        for (size_t k = 0; k < nt && s == MBS_OK; k++) {
            while (t < ts[k]) {
                int r = gsl_odeiv2_evolve_apply(ev, ct, st, &sys, &t, ts[k], &h, z);
                if (r == GSL_SUCCESS && project(pb, c, z) != MBS_OK)
                    r = GSL_EBADFUNC;
                if (r != GSL_SUCCESS || ++n > 100000000) {
                    snprintf(what, whatlen,
                             "index-1 ODE in (p, v, beta): GSL rk8pd failed at t=%g", t);
                    s = MBS_LIBRARY_FAILURE;
                    break;
                }
            }
            /* lambda and s at ts[k] (ode_rhs leaves them in the workspace). */
            if (s == MBS_OK && ode_rhs(t, z, dz, &w) != GSL_SUCCESS) {
                snprintf(what, whatlen, "index-1 ODE: multipliers at t = %g not found", t);
                s = MBS_LIBRARY_FAILURE;
            }
            if (s == MBS_OK) {
                double *y = Y + k * ny;
                memcpy(y, w.y, 5 * sizeof(double));
                memcpy(y + 5, w.y + IV, 5 * sizeof(double));
                /* lambda then x (form=ggl: mu = 0 after them) */
                memcpy(y + 10, w.y + ILP, (NL + pb->nx) * sizeof(double));
            }
        }
        if (s == MBS_OK) {
            *have_lambda = 1;
            snprintf(what, whatlen,
                     "index-1 ODE in (p, v, beta), s(p) and lambda by Newton, (y, phi) "
                     "projected on the invariants, GSL rk8pd rtol=atol=%g (%ld steps)",
                     tol, n);
        }
    }
    if (ev)
        gsl_odeiv2_evolve_free(ev);
    if (ct)
        gsl_odeiv2_control_free(ct);
    if (st)
        gsl_odeiv2_step_free(st);
    return s;
}

static int independent(const mbs_problem *pb, double t_end, double tol, double *q, double *v,
                       double *lambda, int *have_lambda, char *what, size_t whatlen)
{
    double y[NYG];
    int s = independent_grid(pb, &t_end, 1, tol, y, have_lambda, what, whatlen);
    if (s == MBS_OK) {
        memcpy(q, y, 5 * sizeof(double));
        memcpy(v, y + 5, 5 * sizeof(double));
        memcpy(lambda, y + 10, (NL + pb->nx) * sizeof(double));
    }
    return s;
}

static const mbs_extension extension = {
    .dims = ext_dims,
    .var_index = ext_index,
    .mass = ext_mass,
    .rhs = ext_rhs,
    .switches = ext_switches,
    .n_switch = 2,
    .jac = ext_jac,
};

const mbs_problem_def mbs_problem_wheelset = {
    .name = "wheelset",
    .title = "railway wheelset, creep forces (Test Set 2.4 'wheel'; form=index2|index3)",
    .citation = "Test Set 2.4 problem II-22 (wheel.F rev. 1.2, Simeon, Fuehrer, Rentrop); "
                "Arnold 2016 [arnold2016dae] Examples 10-11; Mazzia & Magherini 2008 [testset24]",
    .reference = "problems/ref/wheelset.ref (independent index-1 ODE, rk8pd, vs index2/radau5, "
                 "tol 1e-14: agree to 9.5 digits; form=ggl the same; form=index3 vs "
                 "index3/radau5: 6.3 digits (q 8.4); see their provenance)",
    .flags = MBS_PB_EXTENDED,
    .index = 3,
    .t0 = 0.0,
    .t_end = 10.0,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .dims = dims,
    .setup = setup,
    .initial = initial,
    .mass = mass,
    .force = force,
    .constraint = constraint,
    .jacobian = jacobian,
    .gamma = gamma_fn,
    .independent = independent,
    .independent_grid = independent_grid,
    .published = published,
    .ext = &extension,
};
