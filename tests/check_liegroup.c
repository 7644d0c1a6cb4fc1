/* Lie-group configuration spaces (issue 22): the rotations of problems/so3.c, the
 * heavy top on SO(3) x R^3 (heavytop:coords=rotmat, MBS_PB_LIEGROUP, problem.h
 * mbs_liegroup) and its stored reference checked against an independent
 * parametrisation (unit quaternions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/reference.h"
#include "../problems/so3.h"
#include "testutil.h"

static double norm3(const double *w)
{
    return sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
}

/* exp of so3.c is orthogonal to round-off and log inverts it, from 1e-12 rad to
 * just below pi (Rodrigues' coefficients without cancellation; log through the
 * unit quaternion). */
START_TEST(so3_exp_log)
{
    const double dir[3] = {0.3, -0.8, 0.52};
    const double angles[] = {0.0, 1e-12, 1e-7, 1e-3, 0.5, 2.0, 3.1};
    double nd = norm3(dir);
    for (size_t k = 0; k < sizeof angles / sizeof angles[0]; k++) {
        double w[3], R[9], w2[3];
        for (int i = 0; i < 3; i++)
            w[i] = angles[k] * dir[i] / nd;
        mbs_so3_exp(w, R);
        ck_assert_double_le(mbs_so3_orth_error(R), 1e-15); /* a few ulps */
        mbs_so3_log(R, w2);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(fabs(w2[i] - w[i]) <= 1e-15 * fmax(1.0, angles[k]),
                          "angle %g: log(exp(w))_%d = %.17g, w = %.17g", angles[k], i, w2[i],
                          w[i]);
        double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        ck_assert_double_eq_tol(mbs_so3_distance(I, R), angles[k], 1e-15 * fmax(1.0, angles[k]));
    }
}
END_TEST

static void open_pb(mbs_problem *pb, const char *spec)
{
    char err[512];
    ck_assert_msg(mbs_problem_open(pb, spec, err, sizeof err) == MBS_OK, "%s: %s", spec, err);
}

/* heavytop:coords=rotmat: compose_exp is the flow of q' = H(q) w (its difference
 * quotient tends to H(q) w at first order), keeps R orthogonal, and log inverts it;
 * the context wrapper refuses problems without a Lie-group structure. */
START_TEST(rotmat_lie_structure)
{
    mbs_problem pb;
    open_pb(&pb, "heavytop:coords=rotmat");
    ck_assert(pb.flags & MBS_PB_LIEGROUP);
    ck_assert_int_eq((int)pb.nq, 12);
    ck_assert_int_eq((int)pb.nv, 6);
    ck_assert_int_eq((int)pb.nl, 3);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    double q[12], v[6], lam[3], qd[12], q1[12], w[6], w2[6];
    int have = 0;
    ck_assert_int_eq(pb.def->initial(&pb, q, v, lam, &have), MBS_OK);
    const double v0[6] = {0.4, -0.2, 0.7, 1.1, -0.6, 2.3};
    ck_assert_int_eq(mbs_qdot(&ctx, q, v0, qd), MBS_OK);
    double prev = INFINITY;
    for (double s = 1e-2; s >= 1e-4; s /= 10.0) {
        for (int i = 0; i < 6; i++)
            w[i] = s * v0[i];
        ck_assert_int_eq(mbs_lie_exp(&ctx, q, w, q1), MBS_OK);
        double e = 0.0;
        for (int i = 0; i < 12; i++)
            e = fmax(e, fabs((q1[i] - q[i]) / s - qd[i]));
        ck_assert_double_le(e, 2.0 * s * 3.0 * 3.0); /* O(s): |w|^2 / 2 with |Omega| < 3 */
        ck_assert_double_lt(e, prev);
        prev = e;
        ck_assert_double_le(mbs_so3_orth_error(q1 + 3), 1e-15);
        ck_assert_int_eq(pb.def->lie->log(&pb, q, q1, w2), MBS_OK);
        for (int i = 0; i < 6; i++)
            ck_assert_double_eq_tol(w2[i], w[i], 1e-15);
    }
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
    /* a problem without the flag: the wrapper refuses with a reason */
    open_pb(&pb, "heavytop:coords=quaternion");
    ck_assert(!(pb.flags & MBS_PB_LIEGROUP));
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    ck_assert_int_eq(mbs_lie_exp(&ctx, q, w, q1), MBS_UNSUPPORTED);
    ck_assert(strstr(ctx.reason, "not a Lie-group problem") != NULL);
    mbs_ctx_free(&ctx);
    mbs_problem_close(&pb);
}
END_TEST

/* The stored reference of the SO(3) x R^3 form (problems/ref/heavytop.ref, the
 * rotation-matrix ODE in R^9 vs index1/rk8pd) against an independent
 * computation: the unit-quaternion form integrated by index1/rk8pd at tol 1e-12,
 * converted to R.  Geodesic distance of the rotations and the angular velocity
 * at t_end = 2, slow and fast top. */
START_TEST(rotmat_reference_vs_quaternion)
{
    const char *fast[2] = {"", ",fast=1"};
    for (int k = 0; k < 2; k++) {
        char spec[128];
        snprintf(spec, sizeof spec, "heavytop:coords=rotmat%s", fast[k]);
        mbs_problem pb;
        open_pb(&pb, spec);
        double ref[21];
        ck_assert_msg(mbs_reference_find(&pb, 2.0, ref, NULL, 0) == 1, "%s: no reference", spec);
        mbs_problem_close(&pb);
        snprintf(spec, sizeof spec, "heavytop:coords=quaternion%s", fast[k]);
        mbs_record rec;
        mbs_test_run(spec, "index1/rk8pd", NAN, 1e-12, 2.0, &rec);
        ck_assert_msg(rec.status == MBS_OK, "%s: %s", spec, rec.reason);
        double R[9];
        mbs_quat_to_R(rec.final, R);
        double d = mbs_so3_distance(R, ref + 3), dw = 0.0;
        for (int i = 0; i < 3; i++)
            dw = fmax(dw, fabs(rec.final[4 + i] - ref[15 + i]));
        fprintf(stderr, "liegroup: rotmat reference vs %s, index1/rk8pd 1e-12: geodesic %.2e, "
                        "Omega %.2e\n", spec, d, dw);
        ck_assert_double_le(d, k == 0 ? 1e-10 : 1e-8);
        ck_assert_double_le(dw, k == 0 ? 1e-9 : 1e-7);
        mbs_record_free(&rec);
    }
}
END_TEST

Suite *mbs_suite_liegroup(void)
{
    Suite *s = suite_create("liegroup");
    TCase *tc = tcase_create("problem");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, so3_exp_log);
    tcase_add_test(tc, rotmat_lie_structure);
    tcase_add_test(tc, rotmat_reference_vs_quaternion);
    suite_add_tcase(s, tc);
    return s;
}
