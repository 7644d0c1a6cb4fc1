/* Errors along the trajectory (harness/traj.h): the pendulum's trajectory errors
 * against an exact solution computed here, the interpolation's order, the
 * trajectory CSV, and that measuring leaves the run bit for bit unchanged. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/io.h"
#include "../harness/traj.h"
#include "testutil.h"

/* The pendulum (m = l = 1, g = 9.81, released at the bottom with speed 1) in its
 * angle theta from the downward vertical, theta'' = -g sin(theta), integrated
 * here by GSL's rk8pd at 1e-13: independent of the problem's closed form
 * (Jacobi elliptic functions).  x = sin, y = -cos, lambda = |v|^2 - g y. */
static int angle_rhs(double t, const double y[], double dydt[], void *p)
{
    (void)t, (void)p;
    dydt[0] = y[1];
    dydt[1] = -9.81 * sin(y[0]);
    return GSL_SUCCESS;
}

static void pendulum_by_angle(const double *ts, size_t n, double *ref)
{
    gsl_odeiv2_system sys = {angle_rhs, NULL, 2, NULL};
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3,
                                                         1e-13, 1e-13);
    ck_assert_ptr_nonnull(d);
    double t = 0.0, y[2] = {0.0, 1.0};
    for (size_t k = 0; k < n; k++) {
        if (ts[k] > t)
            ck_assert_int_eq(gsl_odeiv2_driver_apply(d, &t, ts[k], y), GSL_SUCCESS);
        double *r = ref + 5 * k, s = sin(y[0]), c = cos(y[0]);
        r[0] = s;
        r[1] = -c;
        r[2] = c * y[1];
        r[3] = s * y[1];
        r[4] = y[1] * y[1] + 9.81 * c;
    }
    gsl_odeiv2_driver_free(d);
}

/* Read n rows of t and m values of a trajectory CSV. */
static size_t read_rows_m(const char *path, double *t, double *y, size_t m, size_t max)
{
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    size_t n = 0;
    for (char *l = strchr(text, '\n'); l && l[1] && n < max; l = strchr(l + 1, '\n')) {
        char *p = l + 1;
        t[n] = strtod(p, &p);
        for (size_t i = 0; i < m; i++)
            y[m * n + i] = strtod(p + 1, &p);
        n++;
    }
    free(text);
    return n;
}

/* Read a trajectory CSV of the pendulum: n rows of t and the 5 state values. */
static size_t read_rows(const char *path, double *t, double *y, size_t max)
{
    return read_rows_m(path, t, y, 5, max);
}

/* The record's traj errors of the pendulum equal those computed here from the
 * grid values the run wrote and the angle solution above (err_max and err_rms
 * to 1e-3 relative: the errors are >= 1e-9, the two references agree to
 * ~1e-12), on grid values (rk4, h = 0.01 on a grid of spacing 0.1), on the
 * methods' own dense output (radau5's collocation polynomial, BDF's
 * interpolant, the continuous extensions of dopri5 and tsit5, with and without
 * projection, index1/radau5's and CVODE's q and v with the harness's lambda)
 * and on the harness's interpolation (rk8pd: GSL's stepper has none). */
START_TEST(pendulum_traj_against_independent_exact)
{
    static const char *const methods[][3] = {{"index1/rk4", "0.01", "grid"},
                                             {"index2/radau5", "1e-8", "dense"},
                                             {"index2/bdf", "1e-8", "dense"},
                                             {"index1/dopri5", "1e-9", "dense"},
                                             {"index1/tsit5", "1e-9", "dense"},
                                             {"proj-index1/dopri5", "1e-9", "dense"},
                                             {"index1/radau5", "1e-9", "dense"},
                                             {"index1/rk8pd", "1e-9", "hermite"},
#ifdef MBS_HAVE_SUNDIALS
                                             {"index1/cvode-adams", "1e-9", "dense"},
#endif
    };
    char *dir = mbs_test_tmpdir();
    enum { N = 100 };
    double t[N + 1], y[5 * (N + 1)], ref[5 * (N + 1)];
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        char path[512];
        snprintf(path, sizeof path, "%s/traj.csv", dir);
        int fixed = m == 0;
        mbs_run_spec spec = {.problem = "pendulum", .method = methods[m][0],
                             .h = fixed ? atof(methods[m][1]) : NAN,
                             .tol = fixed ? NAN : atof(methods[m][1]), .t_end = NAN,
                             .measure = 1, .trajectory = path};
        mbs_record rec;
        char err[256];
        ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
        ck_assert_int_eq(rec.status, MBS_OK);
        ck_assert(rec.traj.measured);
        ck_assert_int_eq(rec.traj.n, N + 1);
        ck_assert_str_eq(rec.traj.reference, "exact");
        ck_assert_str_eq(rec.traj.interp, methods[m][2]);
        ck_assert_uint_eq(read_rows(path, t, y, N + 1), N + 1);
        for (int k = 0; k <= N; k++)
            ck_assert_double_eq_tol(t[k], 0.1 * k, 1e-14);
        pendulum_by_angle(t, N + 1, ref);
        double emax[3] = {0, 0, 0}, esum[3] = {0, 0, 0};
        const int off[3] = {0, 2, 4}, len[3] = {2, 2, 1};
        for (int k = 0; k <= N; k++)
            for (int g = 0; g < 3; g++) {
                double e = 0.0;
                for (int i = off[g]; i < off[g] + len[g]; i++)
                    e = fmax(e, fabs(y[5 * k + i] - ref[5 * k + i]) / (1.0 + fabs(ref[5 * k + i])));
                emax[g] = fmax(emax[g], e);
                esum[g] += e * e;
            }
        const double rmax[3] = {rec.traj.err_max.q, rec.traj.err_max.v, rec.traj.err_max.lambda};
        const double rrms[3] = {rec.traj.err_rms.q, rec.traj.err_rms.v, rec.traj.err_rms.lambda};
        for (int g = 0; g < 3; g++) {
            double rms = sqrt(esum[g] / (N + 1));
            ck_assert_msg(emax[g] > 1e-9, "%s group %d: error %g too small to compare",
                          methods[m][0], g, emax[g]);
            ck_assert_msg(fabs(rmax[g] - emax[g]) <= 1e-3 * emax[g],
                          "%s group %d: err_max %.6e, here %.6e", methods[m][0], g, rmax[g],
                          emax[g]);
            ck_assert_msg(fabs(rrms[g] - rms) <= 1e-3 * rms, "%s group %d: err_rms %.6e, here %.6e",
                          methods[m][0], g, rrms[g], rms);
        }
        ck_assert_double_eq_tol(rec.traj.digits.q, -log10(rec.traj.err_max.q), 1e-12);
        mbs_record_free(&rec);
    }
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Cubic Hermite on a known function: the error of interpolating sin on an
 * interval of length h centred at pi/2 falls as h^4 (order 4 within 0.1). */
START_TEST(hermite3_order_on_sin)
{
    double e[3];
    for (int j = 0; j < 3; j++) {
        double h = 0.1 / (1 << j), a = 0.5 * MBS_PI - 0.5 * h, m = 0.0;
        for (int i = 1; i < 100; i++) {
            double th = i / 100.0;
            m = fmax(m, fabs(mbs_hermite3(sin(a), cos(a), sin(a + h), cos(a + h), h, th) -
                             sin(a + th * h)));
        }
        e[j] = m;
    }
    for (int j = 0; j < 2; j++)
        ck_assert_msg(fabs(log2(e[j] / e[j + 1]) - 4.0) <= 0.1, "order %.3f",
                      log2(e[j] / e[j + 1]));
}
END_TEST

/* The harness's fallback (traj.c, "hermite") fed with exact pendulum states at
 * steps H apart (t = (0.37 + j) H, so most grid times fall between them): its
 * errors against the exact solution are interpolation errors alone and fall as
 * H^4 in q, v and lambda (within 0.3), with the accelerations given and with
 * v' from the index-1 system (vdot = NULL). */
START_TEST(hermite_fallback_order_on_pendulum)
{
    mbs_problem pb;
    char err[256];
    ck_assert_int_eq(mbs_problem_open(&pb, "pendulum", err, sizeof err), MBS_OK);
    for (int with_vdot = 0; with_vdot < 2; with_vdot++) {
        double e[3][3];
        for (int j = 0; j < 3; j++) {
            double H = 0.2 / (1 << j);
            mbs_traj *tr;
            ck_assert_int_eq(mbs_traj_init(&tr, &pb, 100, 0), MBS_OK);
            double y[5], a[2];
            for (double t = 0.0;;) {
                ck_assert_int_eq(pb.def->exact(&pb, t, y, y + 2, y + 4), MBS_OK);
                /* v' = -x lambda, -g - y lambda (m = 1) */
                a[0] = -y[0] * y[4];
                a[1] = -9.81 - y[1] * y[4];
                mbs_traj_step(tr, NULL, t, y, with_vdot ? a : NULL);
                if (t >= pb.t_end)
                    break;
                t = t == 0.0 ? 0.37 * H : fmin(t + H, pb.t_end);
            }
            mbs_traj_rec r;
            mbs_traj_result(tr, &r);
            ck_assert(r.measured);
            ck_assert_str_eq(r.interp, "hermite");
            e[j][0] = r.err_max.q;
            e[j][1] = r.err_max.v;
            e[j][2] = r.err_max.lambda;
            mbs_traj_free(tr);
        }
        for (int g = 0; g < 3; g++)
            for (int j = 0; j < 2; j++) {
                double p = log2(e[j][g] / e[j + 1][g]);
                ck_assert_msg(fabs(p - 4.0) <= 0.3, "vdot %d group %d: order %.2f (%g, %g)",
                              with_vdot, g, p, e[j][g], e[j + 1][g]);
            }
    }
    mbs_problem_close(&pb);
}
END_TEST

/* run --trajectory: header t, the state and the reported quantities, one row
 * per grid time (N + 1), the last at t_end; a reported column equals its state
 * column; runs.csv columns; bad --output-steps. */
START_TEST(trajectory_csv)
{
    char *dir = mbs_test_tmpdir(), args[1024], out[512];
    snprintf(args, sizeof args,
             "run -p pendulum -m index1/rk4 --h 0.01 --output-steps 40 --trajectory %s/t.csv", dir);
    ck_assert_int_eq(mbs_test_cli(args, out, sizeof out), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    char *text = mbs_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(strncmp(text, "t,q1,q2,v1,v2,lambda1,x_P,y_P,vx_P,vy_P,phi\n", 44), 0);
    ck_assert_int_eq(mbs_count_lines(text), 1 + 41);
    int rows = 0;
    for (char *l = strchr(text, '\n'); l && l[1]; l = strchr(l + 1, '\n'), rows++) {
        double v[11];
        char *p = l + 1;
        for (int i = 0; i < 11; i++)
            v[i] = strtod(i ? p + 1 : p, &p);
        ck_assert_double_eq_tol(v[0], 0.25 * rows, 1e-14);
        ck_assert(v[1] == v[6] && v[2] == v[7] && v[3] == v[8] && v[4] == v[9]);
        ck_assert_double_eq_tol(v[10], atan2(v[1], -v[2]), 1e-15);
    }
    ck_assert_int_eq(rows, 41);
    free(text);
    /* the CSV record ends with the trajectory columns */
    char *err_text = NULL, *out_text = NULL;
    ck_assert_int_eq(mbs_test_cli_text("run -p pendulum -m index1/rk4 --h 0.01 --format csv",
                                       &err_text, &out_text), 0);
    ck_assert_ptr_nonnull(strstr(out_text, ",deriv_evals,traj_n,traj_interp,traj_reference,"
                                           "traj_err_max_q,traj_err_max_v,traj_err_max_lambda,"
                                           "traj_err_rms_q,traj_err_rms_v,traj_err_rms_lambda,"
                                           "traj_digits_q,traj_digits_v,traj_digits_lambda,"
                                           "traj_reason,traj_iftomm_reference,"
                                           "traj_iftomm_err_abs,traj_iftomm_err_rel\n"));
    ck_assert_ptr_nonnull(strstr(out_text, ",101,\"grid\",\"exact\","));
    free(err_text);
    free(out_text);
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines("run -p pendulum -m index1/rk4 --h 0.01 --output-steps 0",
                                        out, sizeof out, &lines), 2);
    ck_assert_int_eq(lines, 1);
    ck_assert_ptr_nonnull(strstr(out, "--output-steps 0"));
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* A failed run has "traj": null; a problem without multipliers has null lambda
 * errors; a problem without a stored trajectory says why. */
START_TEST(traj_null_cases)
{
    char *err_text = NULL, *out_text = NULL;
    mbs_test_cli_text("run -p pendulum -m index1/rk4 --h 0.01 --inject-failure 1 --format json",
                      &err_text, &out_text);
    ck_assert_ptr_nonnull(strstr(out_text, "\"traj\":null"));
    free(err_text);
    free(out_text);
    mbs_record rec;
    mbs_test_run("smallmass", "index1/rk4", 1e-4, NAN, 0.1, &rec);
    ck_assert(rec.traj.measured && isfinite(rec.traj.err_max.q));
    ck_assert(isnan(rec.traj.err_max.lambda) && isnan(rec.traj.digits.lambda));
    char *js = mbs_record_json(&rec);
    ck_assert_ptr_nonnull(strstr(js, "\"lambda\":null"));
    free(js);
    mbs_record_free(&rec);
    mbs_test_run("chain:N=3", "index1/rk4", 1e-2, NAN, 0.5, &rec);
    ck_assert_str_eq(rec.traj.reference, "none");
    ck_assert(isnan(rec.traj.err_max.q));
    ck_assert_ptr_nonnull(strstr(rec.traj.reason, "no stored reference trajectory"));
    mbs_record_free(&rec);
}
END_TEST

/* Measuring along the trajectory changes nothing in the run: final states and
 * every counter bit for bit with and without it (and with a 997-step grid that
 * makes the dense output or the interpolation work at almost every step). */
START_TEST(traj_leaves_run_unchanged)
{
    static const char *const cases[][4] = {
        /* problem, method, h, tol */
        {"pendulum", "index2/radau5", NULL, "1e-7"},
        {"pendulum", "index2/radau", NULL, "1e-7"},
        {"pendulum", "index3/radau5", NULL, "1e-6"},
        {"pendulum", "index2/bdf", NULL, "1e-7"},
        {"pendulum", "index3/genalpha", "0.003", NULL},
        {"pendulum", "index1/dopri5", NULL, "1e-8"},
        {"pendulum", "index1/tsit5", NULL, "1e-8"},
        {"pendulum", "proj-index1/dopri5", NULL, "1e-8"},
        {"pendulum", "cp/tsit5", NULL, "1e-8"},
        {"pendulum", "index1/radau5", NULL, "1e-7"},
        {"pendulum", "index1/rk4", "0.007", NULL},
        {"andrews", "index2/radau5", NULL, "1e-6"},
        {"chain:N=4", "index2/bdf:linsol=umfpack", NULL, "1e-6"},
#ifdef MBS_HAVE_SUNDIALS
        {"pendulum", "index2/ida", NULL, "1e-7"},
        {"pendulum", "index1/cvode-bdf", NULL, "1e-7"},
        {"pendulum", "index1/cvode-adams", NULL, "1e-7"},
#endif
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mbs_record rec[3];
        const long steps[3] = {-1, 0, 997};
        for (int k = 0; k < 3; k++) {
            mbs_run_spec spec = {.problem = cases[c][0], .method = cases[c][1],
                                 .h = cases[c][2] ? atof(cases[c][2]) : NAN,
                                 .tol = cases[c][3] ? atof(cases[c][3]) : NAN,
                                 .t_end = strcmp(cases[c][0], "pendulum") == 0 ? 3.0 : NAN,
                                 .measure = 1, .output_steps = steps[k]};
            char err[256];
            ck_assert_int_eq(mbs_run(&spec, &rec[k], err, sizeof err), MBS_OK);
            ck_assert_msg(rec[k].status == MBS_OK, "%s %s: %s", cases[c][0], cases[c][1],
                          rec[k].reason);
            ck_assert_int_eq(rec[k].traj.measured, k > 0);
        }
        size_t ny = rec[0].nq + rec[0].nv + rec[0].nl + rec[0].nx;
        for (int k = 1; k < 3; k++) {
            ck_assert_msg(memcmp(rec[0].final, rec[k].final, ny * sizeof(double)) == 0,
                          "%s %s: final state changed by the measurement", cases[c][0],
                          cases[c][1]);
            ck_assert_msg(memcmp(&rec[0].cnt, &rec[k].cnt, sizeof rec[0].cnt) == 0,
                          "%s %s: counters changed by the measurement", cases[c][0],
                          cases[c][1]);
            ck_assert(memcmp(&rec[0].linsol, &rec[k].linsol, sizeof rec[0].linsol) == 0);
            ck_assert(rec[0].t_final == rec[k].t_final);
        }
        for (int k = 0; k < 3; k++)
            mbs_record_free(&rec[k]);
    }
}
END_TEST

/* The heavy top (t_end 2, 100 output steps) at tol 1e-8, where the step is
 * several grid spacings long: the trajectory error of the explicit pairs on
 * their continuous extension stays within a small factor of their error at
 * t_end (measured: index1/dopri5 1.36e-7 against 6.79e-8, x2.0;
 * proj-index1/dopri5 the same; index1/tsit5 1.33e-7 against 1.35e-8, x9.9,
 * also 11.5 at 1e-6 and 11.6 at 1e-10: the method's error profile, not the
 * interpolant's), where cubic Hermite between the steps gave 3.45e-6 (x51) and
 * 5.05e-6 (x374).  The errors are checked here against an independent
 * reference on the grid: index1/rk4 at h = 2.5e-4 landing on every grid time
 * (no interpolation; its own error there about 1e-11, from 1.7e-9 at h = 1e-3
 * falling as h^4), to 2% of the record's (taken against the stored
 * trajectory). */
START_TEST(heavytop_dense_against_fixed_step)
{
    static const struct {
        const char *method;
        double factor;
    } cases[] = {{"index1/dopri5", 4.0}, {"proj-index1/dopri5", 4.0}, {"index1/tsit5", 20.0}};
    enum { N = 100, NQ = 3, NY = 6 };
    char *dir = mbs_test_tmpdir(), path[512];
    double t[N + 1], ref[NY * (N + 1)], y[NY * (N + 1)];
    snprintf(path, sizeof path, "%s/ref.csv", dir);
    mbs_run_spec rspec = {.problem = "heavytop", .method = "index1/rk4", .h = 2.5e-4,
                          .tol = NAN, .t_end = NAN, .measure = 1, .trajectory = path};
    mbs_record rec;
    char err[256];
    ck_assert_int_eq(mbs_run(&rspec, &rec, err, sizeof err), MBS_OK);
    ck_assert_int_eq(rec.status, MBS_OK);
    ck_assert_str_eq(rec.traj.interp, "grid");
    ck_assert_int_eq(rec.nq, NQ);
    ck_assert_int_eq(rec.nq + rec.nv + rec.nl, NY);
    mbs_record_free(&rec);
    ck_assert_uint_eq(read_rows_m(path, t, ref, NY, N + 1), N + 1);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(path, sizeof path, "%s/run.csv", dir);
        mbs_run_spec spec = {.problem = "heavytop", .method = cases[c].method, .h = NAN,
                             .tol = 1e-8, .t_end = NAN, .measure = 1, .trajectory = path};
        ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
        ck_assert_int_eq(rec.status, MBS_OK);
        ck_assert_str_eq(rec.traj.interp, "dense");
        ck_assert_uint_eq(read_rows_m(path, t, y, NY, N + 1), N + 1);
        double emax = 0.0;
        for (int k = 0; k <= N; k++)
            for (int i = 0; i < NQ; i++)
                emax = fmax(emax, fabs(y[NY * k + i] - ref[NY * k + i]) /
                                      (1.0 + fabs(ref[NY * k + i])));
        ck_assert_msg(fabs(emax - rec.traj.err_max.q) <= 0.02 * emax,
                      "%s: err_max q %.4e, against rk4 here %.4e", cases[c].method,
                      rec.traj.err_max.q, emax);
        ck_assert_msg(emax <= cases[c].factor * rec.err.q,
                      "%s: trajectory error %.3e more than %g x the error at t_end %.3e",
                      cases[c].method, emax, cases[c].factor, rec.err.q);
        mbs_record_free(&rec);
    }
    /* GSL's rk8pd has no continuous extension: the record says hermite */
    mbs_run_spec gspec = {.problem = "heavytop", .method = "index1/rk8pd", .h = NAN, .tol = 1e-8,
                          .t_end = NAN, .measure = 1};
    ck_assert_int_eq(mbs_run(&gspec, &rec, err, sizeof err), MBS_OK);
    ck_assert_str_eq(rec.traj.interp, "hermite");
    mbs_record_free(&rec);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Stored reference trajectories (mbsbench reference --trajectory): a chaotic
 * start of the double pendulum (150, 150 degrees, 20 s) is refused in one line,
 * exit 1, naming the time where the two tight computations (minimal
 * coordinates vs index1/rk8pd at 1e-13) part, and a run on it reports
 * reference "none" with that reason, not a number; the regular start (5, 0
 * degrees) is stored and a run is scored against it. */
START_TEST(reference_trajectory_horizon_and_stored)
{
    char *dir = mbs_test_tmpdir(), out[1024];
    setenv("MBSBENCH_REFDIR", dir, 1);
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines("reference double-pendulum:alpha1=150,alpha2=150 "
                                        "--trajectory --t-end 20 --output-steps 20",
                                        out, sizeof out, &lines),
                     1);
    ck_assert_int_eq(lines, 1);
    const char *at = strstr(out, "part at t = ");
    ck_assert_msg(at && strstr(out, "predictability horizon"), "%s", out);
    double t_part = atof(at + 12);
    ck_assert_msg(t_part > 0.0 && t_part < 20.0, "%s", out);
    char *err_text = NULL, *out_text = NULL;
    ck_assert_int_eq(mbs_test_cli_text("run -p double-pendulum:alpha1=150,alpha2=150 -m "
                                       "index1/rk4 --h 0.01 --t-end 20 --output-steps 20 "
                                       "--format json",
                                       &err_text, &out_text),
                     0);
    ck_assert_ptr_nonnull(strstr(out_text, "\"reference\":\"none\",\"reason\":\"beyond the "
                                           "predictability horizon"));
    ck_assert_ptr_nonnull(strstr(out_text, "\"err_max\":{\"q\":null,\"v\":null,\"lambda\":null}"));
    char part[64];
    snprintf(part, sizeof part, "part at t = %.6g", t_part);
    ck_assert_ptr_nonnull(strstr(out_text, part));
    free(err_text);
    free(out_text);
    /* the regular start: stored, then a run scored against it */
    ck_assert_int_eq(mbs_test_cli("reference double-pendulum --trajectory --t-end 2 "
                                  "--output-steps 20",
                                  out, sizeof out),
                     0);
    ck_assert_msg(strstr(out, "agree to") != NULL, "%s", out);
    mbs_run_spec spec = {.problem = "double-pendulum", .method = "index2/radau5", .h = NAN,
                         .tol = 1e-8, .t_end = 2.0, .measure = 1, .output_steps = 20};
    mbs_record rec;
    char err[256];
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_str_eq(rec.traj.reference, "stored");
    ck_assert_str_eq(rec.traj.interp, "dense");
    ck_assert_msg(rec.traj.err_max.q > 1e-12 && rec.traj.err_max.q < 1e-6, "%g",
                  rec.traj.err_max.q);
    mbs_record_free(&rec);
    spec.output_steps = 40; /* another grid: no stored trajectory */
    ck_assert_int_eq(mbs_run(&spec, &rec, err, sizeof err), MBS_OK);
    ck_assert_str_eq(rec.traj.reference, "none");
    mbs_record_free(&rec);
    unsetenv("MBSBENCH_REFDIR");
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *mbs_suite_traj(void)
{
    Suite *s = suite_create("traj");
    TCase *tc = tcase_create("traj");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pendulum_traj_against_independent_exact);
    tcase_add_test(tc, hermite3_order_on_sin);
    tcase_add_test(tc, hermite_fallback_order_on_pendulum);
    tcase_add_test(tc, trajectory_csv);
    tcase_add_test(tc, traj_null_cases);
    tcase_add_test(tc, traj_leaves_run_unchanged);
    tcase_add_test(tc, heavytop_dense_against_fixed_step);
    tcase_add_test(tc, reference_trajectory_horizon_and_stored);
    suite_add_tcase(s, tc);
    return s;
}
