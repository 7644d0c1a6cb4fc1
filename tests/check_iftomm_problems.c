/* The IFToMM benchmark problems as problems (González, Dopico, Lugrís and Cuadrado 2006
 * [gonzalez2006benchmarking]; docs/problems.md, "IFToMM benchmark problems"): A01 as a
 * parameter set of the pendulum, and the stored references of A03-A05 checked against
 * what they must satisfy independently of the codes that computed them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/refgen.h"
#include "../harness/reference.h"
#include "../harness/traj.h"
#include "testutil.h"

/* A01 `simple-pendulum` is the pendulum's model under another parameter set: every
 * callback of the model is the pendulum's own (no second copy of the equations), with
 * the benchmark's t_end, output grid and reported quantities; the mirror start
 * side=left moves P1 as the mirror image of side=right (x -> -x, y the same) at the
 * quarter, half and whole period and at the end of the 2000 s. */
START_TEST(a01_parameter_set_of_pendulum)
{
    const mbs_problem_def *p = mbs_problem_find("pendulum"),
                          *s = mbs_problem_find("simple-pendulum");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(s);
    ck_assert(s->mass == p->mass);
    ck_assert(s->force == p->force);
    ck_assert(s->constraint == p->constraint);
    ck_assert(s->jacobian == p->jacobian);
    ck_assert(s->gamma == p->gamma);
    ck_assert(s->exact == p->exact);
    ck_assert(s->energy == p->energy);
    ck_assert(s->reported == p->reported);
    ck_assert_double_eq(s->t_end, 2000.0);
    ck_assert_int_eq(s->output_steps, 4000);
    mbs_problem r, l;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&r, "simple-pendulum", err, sizeof err), MBS_OK);
    ck_assert_int_eq(mbs_problem_open(&l, "simple-pendulum:side=left", err, sizeof err), MBS_OK);
    ck_assert_int_eq(r.n_reported, 2);
    ck_assert_str_eq(r.reported_names[0], "x_P1");
    ck_assert_str_eq(r.reported_names[1], "y_P1");
    /* the period of the 90-degree libration: 4 K(sin 45 deg) / sqrt(g/l) = 2.3678 s */
    double T = 4.0 * 1.8540746773013719 / sqrt(9.81);
    const double ts[] = {0.25 * T, 0.5 * T, T, 2000.0};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        double qr[2], vr[2], ql[2], vl[2], o[2];
        ck_assert_int_eq(r.def->exact(&r, ts[i], qr, vr, NULL), MBS_OK);
        ck_assert_int_eq(l.def->exact(&l, ts[i], ql, vl, NULL), MBS_OK);
        ck_assert_double_eq_tol(ql[0], -qr[0], 1e-12);
        ck_assert_double_eq_tol(ql[1], qr[1], 1e-12);
        ck_assert_int_eq(r.def->reported(&r, ts[i], qr, vr, o), MBS_OK);
        ck_assert(o[0] == qr[0] && o[1] == qr[1]);
    }
    double q[2], v[2];
    ck_assert_int_eq(r.def->exact(&r, 0.5 * T, q, v, NULL), MBS_OK); /* the far side */
    ck_assert_double_eq_tol(q[0], -1.0, 1e-12);
    ck_assert_double_eq_tol(q[1], 0.0, 1e-12);
    ck_assert_int_eq(r.def->exact(&r, 0.25 * T, q, v, NULL), MBS_OK); /* the bottom */
    ck_assert_double_eq_tol(q[1], -1.0, 1e-12);
    /* energy from the lowest point: m g l at the start, the same at the bottom */
    ck_assert_double_eq_tol(r.def->energy(&r, 0.25 * T, q, v), 9.81, 1e-11);
    mbs_problem_close(&r);
    mbs_problem_close(&l);
}
END_TEST

/* A03 `andrews-iftomm`: the Test Set's model over the library's 0.05 s, reporting F.  Its
 * stored reference trajectory (problems/ref/andrews-iftomm.traj, 100 output steps) at
 * t = 0.03 (grid time 60) against the Test Set's published reference values there
 * (andrews.F SOLN: PSIDE at tol 1e-14, as in tests/check_problems2.c): measured scd 9.6 on
 * q; F on the crank circle of radius rr = 0.007 at every grid time. */
START_TEST(a03_stored_trajectory_meets_testset)
{
    static const double published_q[7] = {
        0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
        -0.5347301163226948,   0.5244099658805304,     0.5347301163226948,
        0.1048080741042263e+1};
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "andrews-iftomm", err, sizeof err), MBS_OK);
    ck_assert_double_eq(pb.t_end, 0.05);
    ck_assert_int_eq(mbs_traj_steps(&pb, 0), 100);
    ck_assert_int_eq(pb.n_reported, 2);
    ck_assert_str_eq(pb.reported_names[0], "x_F");
    size_t ny = mbs_ny(&pb);
    double *rows = malloc(101 * ny * sizeof(double)), horizon;
    ck_assert_int_eq(mbs_reference_traj_find(&pb, 0.05, 100, rows, &horizon, NULL, 0),
                     MBS_REFTRAJ_ROWS);
    ck_assert_double_eq_tol(mbs_traj_time(pb.t0, pb.t_end, 100, 60), 0.03, 1e-17);
    double scd = INFINITY;
    for (int i = 0; i < 7; i++)
        scd = fmin(scd, -log10(fabs(rows[60 * ny + i] - published_q[i]) / fabs(published_q[i])));
    ck_assert_msg(scd >= 9.0, "stored A03 trajectory at t = 0.03: scd %.2f against the Test Set",
                  scd);
    for (int k = 0; k <= 100; k++) {
        double out[2];
        const double *y = rows + (size_t)k * ny;
        ck_assert_int_eq(pb.def->reported(&pb, 0.0005 * k, y, y + pb.nq, out), MBS_OK);
        ck_assert_double_eq_tol(hypot(out[0], out[1]), 0.007, 1e-15);
    }
    free(rows);
    mbs_problem_close(&pb);
}
END_TEST

/* A05 `flyball` reports the benchmark's s alone, through the mechanism files' [report]
 * key `coordinates` (single coordinates of points); a name that is not a coordinate of a
 * point is bad input in one line naming it. */
START_TEST(a05_reports_s_alone)
{
    mbs_problem pb;
    char err[256], out[512];
    ck_assert_int_eq(mbs_problem_open(&pb, "flyball", err, sizeof err), MBS_OK);
    ck_assert_int_eq(pb.n_reported, 1);
    ck_assert_str_eq(pb.reported_names[0], "z_S1");
    double q0[64], v0[64], l0[64], s;
    int hl;
    ck_assert_uint_le(pb.nq, 64);
    ck_assert_int_eq(pb.def->initial(&pb, q0, v0, l0, &hl), MBS_OK);
    ck_assert_int_eq(pb.def->reported(&pb, 0.0, q0, v0, &s), MBS_OK);
    ck_assert_double_eq_tol(s, 0.5, 1e-12); /* the slider starts at s = 0.5 */
    mbs_problem_close(&pb);
    char *dir = mbs_test_tmpdir(), path[600], args[700];
    FILE *in = fopen("mechanisms/flyball.mech", "r");
    ck_assert_ptr_nonnull(in);
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    char *c = strstr(text, "coordinates = z_S1");
    ck_assert_ptr_nonnull(c);
    c[14] = 'w';
    snprintf(path, sizeof path, "%s/bad.mech", dir);
    mbs_test_write_text(path, text);
    snprintf(args, sizeof args, "check-problem -p model:file=%s", path);
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines(args, out, sizeof out, &lines), 2);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(out, "coordinate 'w_S1'") != NULL, "%s", out);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* The largest relative energy change and |g| along a stored reference trajectory of
 * `bricard` (t_end, 100 output steps). */
static void bricard_stored_drift(double t_end, double *de, double *gmax)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "bricard", err, sizeof err), MBS_OK);
    size_t ny = mbs_ny(&pb);
    double *rows = malloc(101 * ny * sizeof(double)), *g = malloc(pb.nl * sizeof(double));
    double horizon;
    char prov[1024];
    ck_assert_int_eq(mbs_reference_traj_find(&pb, t_end, 100, rows, &horizon, prov, sizeof prov),
                     MBS_REFTRAJ_ROWS);
    double e0 = pb.def->energy(&pb, 0.0, rows, rows + pb.nq);
    *de = *gmax = 0.0;
    for (int k = 0; k <= 100; k++) {
        const double *y = rows + (size_t)k * ny;
        double t = mbs_traj_time(pb.t0, t_end, 100, k);
        *de = fmax(*de, fabs(pb.def->energy(&pb, t, y, y + pb.nq) - e0) / fabs(e0));
        ck_assert_int_eq(pb.def->constraint(&pb, t, y, g), MBS_OK);
        for (size_t i = 0; i < pb.nl; i++)
            *gmax = fmax(*gmax, fabs(g[i]));
    }
    free(rows);
    free(g);
    mbs_problem_close(&pb);
}

/* A04's 600 s variant (`bricard` with t_end = 600): its stored reference trajectory
 * (ukb/rk8pd vs dca-proj/rk8pd at 1e-13, agreeing to 7.2 digits over the grid, q to 7.8:
 * the phase of two correct integrations drifts apart linearly, not chaotically) conserves
 * the energy and holds the constraints at every one of its 101 output times, as a physical
 * check independent of both codes (measured: relative energy change 2.2e-13, |g| 8.1e-13, at the 13 digits the file keeps); the 10 s one
 * as well (energy 3.1e-11, |g| 1.3e-10). */
START_TEST(a04_600s_reference_conserves_energy)
{
    double de, gmax;
    bricard_stored_drift(600.0, &de, &gmax);
    ck_assert_msg(de < 1e-11, "600 s: energy changes by %.3e along the stored reference", de);
    ck_assert_msg(gmax < 1e-11, "600 s: |g| = %.3e along the stored reference", gmax);
    bricard_stored_drift(10.0, &de, &gmax);
    ck_assert_msg(de < 1e-9 && gmax < 1e-9, "10 s: energy %.3e, |g| %.3e", de, gmax);
}
END_TEST

/* `mbsbench reference` on a redundant problem compares the constraint forces G^T lambda,
 * which the motion determines, not the multipliers, which it does not: on the Bricard
 * mechanism over 6 s ukb/rk8pd and dca-proj/rk8pd at 1e-13 hold multipliers 9.4e-8 apart
 * (7.0 digits), their q, v and G^T lambda agree to 10.7 digits. */
START_TEST(reference_redundant_compares_forces)
{
    mbs_refgen_spec rs = {.problem = "bricard", .methods = "ukb/rk8pd,dca-proj/rk8pd",
                          .tol = 1e-13, .t_end = 6.0, .min_digits = 8.0, .store = 0};
    mbs_refgen_result res;
    char err[512] = "";
    ck_assert_msg(mbs_refgen(&rs, &res, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(res.digits >= 8.0, "%.2f digits", res.digits);
    ck_assert_msg(strstr(res.provenance, "over q,v,G^T lambda") != NULL, "%s", res.provenance);
}
END_TEST

/* A05's stored reference trajectory (problems/ref/flyball.traj: index1/rk8pd vs
 * index2/radau5 at 1e-11, q to 10.7 digits) shows the benchmark's statement: with the
 * shaft free s stays in [0.50, 0.74] (measured 0.4999 .. 0.7436) and has its maxima near
 * t = 0.5, 1.5 and 2.6 s (on the 0.1 s grid: 0.5, 1.5, 2.6; then every 1.02-1.03 s). */
START_TEST(a05_stored_reference_shows_the_benchmark)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "flyball", err, sizeof err), MBS_OK);
    size_t ny = mbs_ny(&pb);
    double *rows = malloc(101 * ny * sizeof(double)), s[101], horizon;
    ck_assert_int_eq(mbs_reference_traj_find(&pb, 10.0, 100, rows, &horizon, NULL, 0),
                     MBS_REFTRAJ_ROWS);
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k <= 100; k++) {
        const double *y = rows + (size_t)k * ny;
        ck_assert_int_eq(pb.def->reported(&pb, 0.1 * k, y, y + pb.nq, &s[k]), MBS_OK);
        lo = fmin(lo, s[k]);
        hi = fmax(hi, s[k]);
    }
    ck_assert_msg(lo > 0.495 && lo < 0.505 && hi > 0.735 && hi < 0.745, "s in [%.4f, %.4f]", lo,
                  hi);
    const int want[3] = {5, 15, 26}; /* grid times of the first three maxima */
    int found = 0;
    for (int k = 1; k < 100 && found < 3; k++)
        if (s[k] > s[k - 1] && s[k] >= s[k + 1]) {
            ck_assert_msg(k == want[found], "maximum %d at t = %.1f", found + 1, 0.1 * k);
            found++;
        }
    ck_assert_int_eq(found, 3);
    free(rows);
    mbs_problem_close(&pb);
}
END_TEST

Suite *mbs_suite_iftomm_problems(void)
{
    Suite *s = suite_create("iftomm_problems");
    TCase *tc = tcase_create("iftomm_problems");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a01_parameter_set_of_pendulum);
    tcase_add_test(tc, a03_stored_trajectory_meets_testset);
    tcase_add_test(tc, a04_600s_reference_conserves_energy);
    tcase_add_test(tc, a05_reports_s_alone);
    tcase_add_test(tc, a05_stored_reference_shows_the_benchmark);
    tcase_add_test(tc, reference_redundant_compares_forces);
    suite_add_tcase(s, tc);
    return s;
}
