/* Lie-group configuration spaces: the rotations of problems/so3.c, the
 * heavy top on SO(3) x R^3 (heavytop:coords=rotmat, MBS_PB_LIEGROUP, problem.h
 * mbs_liegroup) and its stored reference checked against an independent
 * parametrisation (unit quaternions); the Lie-group generalized-alpha methods
 * (methods/integrators/genalpha/genalpha.c: liegroup/genalpha, liegroup-ggl/genalpha): order 2 in the
 * geodesic distance, Omega and lambda, orthogonality to round-off, behaviour near
 * the Euler angles' singular configuration, identity with the vector-space methods
 * on R^n, declined problems. */
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

/* ---- the Lie-group generalized-alpha methods ------------------------------------ */

/* Errors of a heavytop:coords=rotmat run at t_end = 2 against the stored reference:
 * geodesic distance of R, max |Omega - Omega_ref|, max |lambda - lambda_ref|, and
 * the orthogonality error of the final R. */
typedef struct rot_err {
    double R, W, lam, orth;
    long steps, newton;
} rot_err;

static rot_err rotmat_errors(const char *spec, const char *method, double h, double tol)
{
    mbs_problem pb;
    open_pb(&pb, spec);
    double ref[21];
    ck_assert_msg(mbs_reference_find(&pb, 2.0, ref, NULL, 0) == 1, "%s: no reference", spec);
    mbs_problem_close(&pb);
    mbs_record rec;
    mbs_test_run(spec, method, h, tol, 2.0, &rec);
    ck_assert_msg(rec.status == MBS_OK, "%s %s h=%g: %s", spec, method, h, rec.reason);
    rot_err e = {mbs_so3_distance(rec.final + 3, ref + 3), 0.0, 0.0,
                 mbs_so3_orth_error(rec.final + 3), rec.cnt.steps, rec.cnt.newton_iters};
    for (int i = 0; i < 3; i++) {
        e.W = fmax(e.W, fabs(rec.final[15 + i] - ref[15 + i]));
        e.lam = fmax(e.lam, fabs(rec.final[18 + i] - ref[18 + i]));
    }
    mbs_record_free(&rec);
    return e;
}

/* Second order in the rotation (geodesic distance), the angular velocity and the
 * multiplier at t_end = 2 for both variants ([arnold2016dae] text after Eq. (94) and its
 * [arnold2015liegroup]: order 2 for all components of the stabilized index-2 form; for the
 * index-3 form the O(h) multiplier transient of Example 8 is damped by rho_inf^n
 * long before t_end), h = 0.02 ... 0.0025; every final R orthogonal to round-off. */
START_TEST(liegroup_order)
{
    const char *methods[2] = {"liegroup/genalpha", "liegroup-ggl/genalpha"};
    for (int k = 0; k < 2; k++) {
        rot_err prev = {0};
        for (int j = 0; j < 4; j++) {
            double h = 0.02 / (double)(1 << j);
            rot_err e = rotmat_errors("heavytop:coords=rotmat", methods[k], h, NAN);
            fprintf(stderr, "liegroup: %s h=%g: geodesic %.3e Omega %.3e lambda %.3e "
                            "|R^T R - I| %.1e, %ld Newton iterations\n",
                    methods[k], h, e.R, e.W, e.lam, e.orth, e.newton);
            ck_assert_double_le(e.orth, 1e-14);
            if (j > 0) {
                double pR = log2(prev.R / e.R), pW = log2(prev.W / e.W),
                       pl = log2(prev.lam / e.lam);
                fprintf(stderr, "liegroup:   orders R %.3f Omega %.3f lambda %.3f\n", pR, pW,
                        pl);
                ck_assert_double_eq_tol(pR, 2.0, 0.3);
                ck_assert_double_eq_tol(pW, 2.0, 0.3);
                ck_assert_double_eq_tol(pl, 2.0, 0.3);
            }
            prev = e;
        }
    }
}
END_TEST

/* Direct run of one method on one problem with an observer that records the step
 * sizes (inside the window [w0, w1] and outside, the last step excluded since it
 * may be shortened to land on t_end), the Newton iterations per step there, and
 * the largest |R^T R - I| over all steps (rot >= 0: offset of R in q). */
typedef struct step_obs {
    double w0, w1, t_prev, t_end, hmin_in, hmin_out, orth;
    long n_in, n_out, newton_in, newton_out, newton_prev;
    int rot;
    const mbs_ctx *ctx;
} step_obs;

static int observe_steps(void *data, double t, const double *q, const double *v,
                         const double *vdot, const double *lambda)
{
    (void)v, (void)vdot, (void)lambda;
    step_obs *o = data;
    double h = t - o->t_prev;
    long dn = o->ctx->cnt.newton_iters - o->newton_prev;
    int in = t > o->w0 && o->t_prev < o->w1;
    if (t < o->t_end * (1.0 - 1e-12)) {
        if (in)
            o->hmin_in = fmin(o->hmin_in, h), o->n_in++, o->newton_in += dn;
        else
            o->hmin_out = fmin(o->hmin_out, h), o->n_out++, o->newton_out += dn;
    }
    if (o->rot >= 0)
        o->orth = fmax(o->orth, mbs_so3_orth_error(q + o->rot));
    o->t_prev = t;
    o->newton_prev = o->ctx->cnt.newton_iters;
    return 0;
}

static void observed_run(const char *spec, const char *mspec, double h, double tol,
                         double t_end, step_obs *o)
{
    mbs_problem pb;
    open_pb(&pb, spec);
    pb.t_end = t_end;
    const mbs_method_def *m;
    mbs_params mp;
    char err[512];
    ck_assert_msg(mbs_method_parse(mspec, &m, &mp, err, sizeof err) == MBS_OK, "%s", err);
    double *y = calloc(mbs_ny(&pb), sizeof(double));
    ck_assert(y != NULL);
    int have = 0;
    ck_assert_int_eq(pb.def->initial(&pb, y, y + pb.nq, y + pb.nq + pb.nv, &have), MBS_OK);
    ck_assert(have || pb.nl == 0);
    mbs_ctx ctx;
    ck_assert_int_eq(mbs_ctx_init(&ctx, &pb), MBS_OK);
    mbs_ctx_reset(&ctx);
    void *state = NULL;
    ck_assert_msg(m->ops->alloc(m, &mp, &ctx, &state) == MBS_OK, "%s: %s", mspec, ctx.reason);
    mbs_settings set = {.h = h, .rtol = tol, .atol = tol, .t_end = t_end};
    o->t_prev = pb.t0;
    o->t_end = t_end;
    o->hmin_in = o->hmin_out = INFINITY;
    o->ctx = &ctx;
    ctx.observer = observe_steps;
    ctx.observer_data = o;
    double t = pb.t0;
    int s = m->ops->integrate(state, &ctx, &set, &t, y);
    ck_assert_msg(s == MBS_OK, "%s %s: %s", spec, mspec, ctx.reason);
    m->ops->free_state(state);
    mbs_ctx_free(&ctx);
    free(y);
    mbs_problem_close(&pb);
}

/* Orthogonality: R moves only by exp, so |R^T R - I| stays at round-off over 10^4
 * steps of the fast top (R(0) = I, spin 150 rad/s, h = 1e-3, t = [0, 10]); the
 * embedding integrated by a vector-space method drifts at its error level
 * (index1/dopri5, tol 1e-6: no constraint or projection keeps R on SO(3)). */
START_TEST(liegroup_orthogonality)
{
    const char *methods[2] = {"liegroup/genalpha", "liegroup-ggl/genalpha"};
    for (int k = 0; k < 2; k++) {
        step_obs o = {.w0 = INFINITY, .w1 = INFINITY, .rot = 3};
        observed_run("heavytop:coords=rotmat,fast=1", methods[k], 1e-3, 0.0, 10.0, &o);
        fprintf(stderr, "liegroup: %s fast top, 10^4 steps: max |R^T R - I| = %.2e\n",
                methods[k], o.orth);
        ck_assert_int_eq((int)o.n_out, 9999);
        ck_assert_double_le(o.orth, 1e-13);
    }
    step_obs o = {.w0 = INFINITY, .w1 = INFINITY, .rot = 3};
    observed_run("heavytop:coords=rotmat,fast=1", "index1/dopri5", 0.0, 1e-6, 10.0, &o);
    fprintf(stderr, "liegroup: index1/dopri5 tol 1e-6 on the embedding: max |R^T R - I| = "
                    "%.2e (%ld steps)\n", o.orth, o.n_out + 1);
    ck_assert_double_ge(o.orth, 1e-9);
}
END_TEST

/* The singular configuration of the Euler angles ([arnold2016dae] Remark 6d: theta has its
 * minimum 0.059 rad at t* ~ 1.1 s): an error-controlled solver (index1/dopri5,
 * tol 1e-8) takes 4.5x smaller steps near t* in Euler angles than on the rotation
 * matrix and crowds them there, while the Lie-group method at a fixed step needs no more Newton
 * iterations per step near t* than elsewhere. */
START_TEST(liegroup_no_collapse_near_singularity)
{
    step_obs eu = {.w0 = 1.0, .w1 = 1.2, .rot = -1}, ro = {.w0 = 1.0, .w1 = 1.2, .rot = 3};
    observed_run("heavytop:coords=euler", "index1/dopri5", 0.0, 1e-8, 2.0, &eu);
    observed_run("heavytop:coords=rotmat", "index1/dopri5", 0.0, 1e-8, 2.0, &ro);
    fprintf(stderr, "liegroup: dopri5 tol 1e-8, t in [1.0, 1.2] / elsewhere: euler min h %.2e / "
                    "%.2e (%ld / %ld steps), rotmat min h %.2e / %.2e (%ld / %ld steps)\n",
            eu.hmin_in, eu.hmin_out, eu.n_in, eu.n_out, ro.hmin_in, ro.hmin_out, ro.n_in,
            ro.n_out);
    /* measured: min h 4.96e-3 (Euler) vs 2.25e-2 (R) near t*; steps per second near t*
     * / elsewhere 145 / 39 (Euler) and 45 / 53 (R) */
    ck_assert_double_le(eu.hmin_in, 0.3 * ro.hmin_in);
    double dens_eu = (double)eu.n_in / 0.2 / ((double)eu.n_out / 1.8);
    double dens_ro = (double)ro.n_in / 0.2 / ((double)ro.n_out / 1.8);
    ck_assert_double_ge(dens_eu, 2.5);
    ck_assert_double_le(dens_ro, 1.5);
    step_obs lg = {.w0 = 1.0, .w1 = 1.2, .rot = 3};
    observed_run("heavytop:coords=rotmat", "liegroup/genalpha", 0.01, 0.0, 2.0, &lg);
    double in = (double)lg.newton_in / (double)lg.n_in, out = (double)lg.newton_out / (double)lg.n_out;
    fprintf(stderr, "liegroup: liegroup/genalpha h = 0.01: Newton iterations per step %.2f "
                    "near t*, %.2f elsewhere\n", in, out);
    ck_assert_double_le(in, 1.25 * out);
}
END_TEST

/* On a vector space (q' = v) the group is R^n: exactly index3/genalpha and
 * ggl/genalpha (bit-identical final states on the pendulum, x0 = 0.2). */
START_TEST(liegroup_vector_space_identical)
{
    const char *pairs[2][2] = {{"liegroup/genalpha", "index3/genalpha"},
                               {"liegroup-ggl/genalpha:rho_inf=0.6", "ggl/genalpha:rho_inf=0.6"}};
    for (int k = 0; k < 2; k++) {
        mbs_record a, b;
        mbs_test_run("pendulum:x0=0.2", pairs[k][0], 0.01, NAN, 1.0, &a);
        mbs_test_run("pendulum:x0=0.2", pairs[k][1], 0.01, NAN, 1.0, &b);
        ck_assert_msg(a.status == MBS_OK && b.status == MBS_OK, "%s / %s", a.reason, b.reason);
        size_t ny = a.nq + a.nv + a.nl;
        ck_assert(memcmp(a.final, b.final, ny * sizeof(double)) == 0);
        ck_assert_int_eq((int)a.cnt.newton_iters, (int)b.cnt.newton_iters);
        mbs_record_free(&a);
        mbs_record_free(&b);
    }
}
END_TEST

/* Declined with a reason: the vector-space generalized-alpha methods on the Lie
 * group, the Lie-group methods on parametrisations with H != I but no group
 * structure (quaternions, absolute coordinates) and on the unconstrained Euler form. */
START_TEST(liegroup_declines)
{
    static const struct {
        const char *problem, *method, *reason;
    } c[] = {{"heavytop:coords=rotmat", "index3/genalpha", "use liegroup/genalpha"},
             {"heavytop:coords=rotmat", "ggl/genalpha", "use liegroup/genalpha"},
             {"heavytop:coords=rotmat", "index3/hht", "use liegroup/genalpha"},
             {"heavytop:coords=absolute", "liegroup/genalpha", "Lie-group problem"},
             {"heavytop:coords=absolute,fast=1", "liegroup-ggl/genalpha", "Lie-group problem"},
             {"heavytop", "liegroup/genalpha", "H != I"}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        mbs_record rec;
        mbs_test_run(c[k].problem, c[k].method, 0.01, NAN, 0.1, &rec);
        ck_assert_msg(rec.status == MBS_UNSUPPORTED, "%s %s: status %d", c[k].problem,
                      c[k].method, rec.status);
        ck_assert_msg(strstr(rec.reason, c[k].reason) != NULL, "%s %s: '%s'", c[k].problem,
                      c[k].method, rec.reason);
        mbs_record_free(&rec);
    }
}
END_TEST

/* reproductions/heavytop-forms.expect (the four formulations at equal work, the
 * step sizes near t*, the Lie-group orders) reproduces; the new extractors err_v and
 * min_h refuse components or windows that do not exist (a note, verdict OUTSIDE). */
START_TEST(liegroup_reproduction)
{
    char *dir = mbs_test_tmpdir();
    char args[1024], *out = NULL;
    snprintf(args, sizeof args, "reproduce heavytop-forms --out %s/res", dir);
    int st = mbs_test_cli_text(args, NULL, &out);
    ck_assert_msg(st == 0 && strstr(out, "REPRODUCED") && !strstr(out, "NOT REPRODUCED"),
                  "exit %d:\n%s", st, out);
    free(out);
    char path[1100];
    snprintf(path, sizeof path, "%s/bad.expect", dir);
    mbs_test_write_text(path,
                        "[reproduction]\ncitation = test\nsuite = suites/heavytop-forms.suite\n"
                        "[quantity v out of range]\n"
                        "run = heavytop index1/rk4 h=0.01 t_end=2\nextract = err_v:2-3\n"
                        "published = 1\nread = test\nrtol = 1\n"
                        "[quantity empty window]\n"
                        "run = heavytop index1/dopri5 tol=1e-8 t_end=2\nextract = min_h:3-4\n"
                        "published = 1\nread = test\nrtol = 1\n");
    snprintf(args, sizeof args, "reproduce bad --dir %s --results %s/res", dir, dir);
    st = mbs_test_cli_text(args, NULL, &out);
    ck_assert_msg(st == 1 && strstr(out, "no final v_3") && strstr(out, "no step overlaps"),
                  "exit %d:\n%s", st, out);
    free(out);
    mbs_test_remove_tree(dir);
    free(dir);
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
    tc = tcase_create("method");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, liegroup_order);
    tcase_add_test(tc, liegroup_orthogonality);
    tcase_add_test(tc, liegroup_no_collapse_near_singularity);
    tcase_add_test(tc, liegroup_vector_space_identical);
    tcase_add_test(tc, liegroup_declines);
    tcase_add_test(tc, liegroup_reproduction);
    suite_add_tcase(s, tc);
    return s;
}
