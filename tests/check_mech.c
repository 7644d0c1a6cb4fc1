/* Mechanism files (problems/mech.h): cross-checks of the files that re-declare
 * hand-written problems (the same physics in natural coordinates, reported point
 * positions at t = 1 and t = 10 agree to 1e-10 at tolerance 1e-13), exact
 * solutions (the bead on a rotating rod, a slider on an incline), the
 * completion of initial values, redundancy counts, bad input (FILE:LINE
 * messages, exit status 2), parameters from the command line.  Run from the
 * project root (mechanisms/). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/reference.h"
#include "../problems/mech.h"
#include "../problems/problem.h"
#include "testutil.h"

static const char *reported_name(const mbs_problem *pb, size_t i)
{
    return i < pb->n_reported ? pb->reported_names[i] : "";
}

static void open_pb(mbs_problem *pb, const char *spec)
{
    char err[512];
    ck_assert_msg(mbs_problem_open(pb, spec, err, sizeof err) == MBS_OK, "%s: %s", spec, err);
}

/* A(p) s for Euler parameters p = (e0, e). */
static void quat_rot(const double *p, const double *s, double *out)
{
    const double *e = p + 1;
    double es = e[0] * s[0] + e[1] * s[1] + e[2] * s[2];
    double k = p[0] * p[0] - (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    double exs[3] = {e[1] * s[2] - e[2] * s[1], e[2] * s[0] - e[0] * s[2],
                     e[0] * s[1] - e[1] * s[0]};
    for (int i = 0; i < 3; i++)
        out[i] = k * s[i] + 2.0 * e[i] * es + 2.0 * p[0] * exs[i];
}

/* The reported points of the hand-written problem from its final state. */
typedef void (*points_fn)(const double *q, double *P);

static void fivebar_points(const double *q, double *P) /* P2, P3, P4: ends of bars 1-3 */
{
    for (int b = 0; b < 3; b++) {
        P[2 * b] = q[3 * b] + 0.1 * cos(q[3 * b + 2]);
        P[2 * b + 1] = q[3 * b + 1] + 0.1 * sin(q[3 * b + 2]);
    }
}

static void doubleloop_points(const double *q, double *P) /* P2 P3 P4 R1 R2 R3 */
{
    static const int bar[6] = {0, 1, 2, 4, 5, 6};
    for (int k = 0; k < 6; k++) {
        const double *qb = q + 3 * bar[k];
        P[2 * k] = qb[0] + 0.1 * cos(qb[2]);
        P[2 * k + 1] = qb[1] + 0.1 * sin(qb[2]);
    }
}

static void chain_points(const double *q, double *P) /* P1, P10 */
{
    P[0] = q[0], P[1] = q[1], P[2] = q[18], P[3] = q[19];
}

static void fivebar3d_points(const double *q, double *P) /* P2 P3 P4 */
{
    const double s[3] = {0.1, 0, 0};
    for (int b = 0; b < 3; b++) {
        double as[3];
        quat_rot(q + 7 * b + 3, s, as);
        for (int i = 0; i < 3; i++)
            P[3 * b + i] = q[7 * b + i] + as[i];
    }
}

static void heavytop_points(const double *q, double *P) /* the centre of mass */
{
    memcpy(P, q, 3 * sizeof *P);
}

static const struct xcheck {
    const char *c_problem, *file, *method_c, *method_file;
    int npts, dim;
    points_fn pts;
} xchecks[] = {
    {"fivebar", "fivebar-nc", "index1/rk8pd", "index1/rk8pd", 3, 2, fivebar_points},
    {"doubleloop", "doubleloop-nc", "index1/rk8pd", "index1/rk8pd", 6, 2, doubleloop_points},
    {"chain:start=angles", "chain-nc", "index1/rk8pd", "index1/rk8pd", 2, 2, chain_points},
    {"fivebar3d", "fivebar3d-nc", "svd/rk8pd", "svd/rk8pd", 3, 3, fivebar3d_points},
    {"heavytop:coords=absolute", "heavytop-nc", "index1/rk8pd", "index1/rk8pd", 1, 3,
     heavytop_points},
};

/* Reported point positions of the file's problem (x_P, y_P[, z_P] for each point
 * of its [report] section, in order) against the hand-written problem. */
START_TEST(cross_check_trajectories)
{
    const struct xcheck *x = &xchecks[_i / 2];
    double t_end = _i % 2 ? 10.0 : 1.0, worst = 0.0;
    mbs_record rc, rf;
    mbs_test_run(x->c_problem, x->method_c, NAN, 1e-13, t_end, &rc);
    mbs_test_run(x->file, x->method_file, NAN, 1e-13, t_end, &rf);
    ck_assert_msg(rc.status == MBS_OK && rf.status == MBS_OK, "%s / %s: %s / %s", x->c_problem,
                  x->file, rc.reason, rf.reason);
    mbs_problem pb;
    open_pb(&pb, x->file);
    size_t n = pb.n_reported;
    ck_assert_uint_eq(n, (size_t)(2 * x->npts * x->dim)); /* positions and velocities */
    double *out = calloc(n, sizeof *out), Pc[3 * 6];
    ck_assert_int_eq(pb.def->reported(&pb, t_end, rf.final, rf.final + pb.nq, out), MBS_OK);
    x->pts(rc.final, Pc);
    for (int k = 0; k < x->npts; k++)
        for (int i = 0; i < x->dim; i++) {
            double file = out[2 * x->dim * k + i], hand = Pc[x->dim * k + i];
            worst = fmax(worst, fabs(file - hand));
        }
    ck_assert_msg(worst <= 1e-10, "%s vs %s at t = %g: reported points differ by %.3g",
                  x->file, x->c_problem, t_end, worst);
    free(out);
    mbs_problem_close(&pb);
    mbs_record_free(&rc);
    mbs_record_free(&rf);
}
END_TEST

/* Bead on a rod turning at omega: r(t) = r0 cosh(omega t) (exact). */
START_TEST(bead_on_rotating_rod_exact)
{
    mbs_record r;
    mbs_test_run("bead-rod:omega=2", "index1/rk8pd", NAN, 1e-12, 1.0, &r);
    ck_assert_int_eq(r.status, MBS_OK);
    mbs_problem pb;
    open_pb(&pb, "bead-rod:omega=2");
    double out[8];
    ck_assert_uint_eq(pb.n_reported, 5);
    ck_assert_str_eq(reported_name(&pb, 0), "x_B");
    ck_assert_str_eq(reported_name(&pb, 4), "angle_hub");
    pb.def->reported(&pb, 1.0, r.final, r.final + pb.nq, out);
    double rad = hypot(out[0], out[1]);
    ck_assert_msg(fabs(rad - 0.5 * cosh(2.0)) < 1e-9, "r(1) = %.12g, exact %.12g", rad,
                  0.5 * cosh(2.0));
    /* the driven hub angle 2 t = 2 rad, and the bead's tangential speed omega r */
    ck_assert_double_eq_tol(out[4], 2.0, 1e-10);
    double vt = (-out[1] * out[2] + out[0] * out[3]) / rad;
    ck_assert_double_eq_tol(vt, 2.0 * rad, 1e-8);
    mbs_problem_close(&pb);
    mbs_record_free(&r);
}
END_TEST

static char *tmp_file(const char *dir, const char *name, const char *text)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len);
    snprintf(path, len, "%s/%s", dir, name);
    mbs_test_write_text(path, text);
    return path;
}

/* A block on a frictionless incline (prismatic joint at angle alpha to the
 * horizontal) under gravity: s'' = -g sin(alpha), exact; spatial and planar. */
static const char incline2[] =
    "[mechanism]\ndim = 2\ngravity = 0 -9.81\n"
    "[point O]\nground = 0 0\n[point P]\nat = 1 0\n[point Q]\nat = 1.5 0\n"
    "[body base]\nrod = O P\nmass = 1\n"
    "[body block]\npoint_mass = Q\nmass = 2\ninertia = 0.1\n"
    "[joint hinge]\ntype = revolute\nbodies = ground base\nat = O\n"
    "[driver tilt]\ntype = angle\njoint = hinge\nangle = pi/6\n"
    "[joint slide]\ntype = prismatic\nbodies = base block\nat = Q\naxis = 1 0\n"
    "[report]\npoints = Q\n";
static const char incline3[] =
    "[mechanism]\ndim = 3\ngravity = 0 0 -9.81\n"
    "[point Q]\nat = (cos(pi/6)) 0 (sin(pi/6))\n"
    "[body block]\nbox = 0.2 0.1 0.1\ncom = Q\nmass = 2\n"
    "[joint slide]\ntype = prismatic\nbodies = ground block\nat = Q\n"
    "axis = (cos(pi/6)) 0 (sin(pi/6))\n"
    "[report]\npoints = Q\n";

START_TEST(prismatic_incline_exact)
{
    char *dir = mbs_test_tmpdir();
    for (int dim = 2; dim <= 3; dim++) {
        char *path = tmp_file(dir, dim == 2 ? "incline2.mech" : "incline3.mech",
                              dim == 2 ? incline2 : incline3);
        char spec[600];
        snprintf(spec, sizeof spec, "model:file=%s", path);
        mbs_record r;
        mbs_test_run(spec, "index1/rk8pd", NAN, 1e-12, 1.0, &r);
        ck_assert_msg(r.status == MBS_OK, "%s: %s", spec, r.reason);
        mbs_problem pb;
        open_pb(&pb, spec);
        double out[6], *y0 = calloc(2 * pb.nq + pb.nl, sizeof *y0);
        int have;
        pb.def->initial(&pb, y0, y0 + pb.nq, y0 + 2 * pb.nq, &have);
        pb.def->reported(&pb, 0.0, y0, y0 + pb.nq, out);
        /* released at rest at s0 along the incline: s(1) = s0 - g sin(alpha) / 2 */
        double s0 = hypot(out[0], out[dim - 1]), s = s0 - 0.5 * 9.81 * 0.5;
        free(y0);
        pb.def->reported(&pb, 1.0, r.final, r.final + pb.nq, out);
        double x = s * cos(MBS_PI / 6), z = s * sin(MBS_PI / 6);
        ck_assert_msg(fabs(out[0] - x) < 1e-9 && fabs(out[dim - 1] - z) < 1e-9,
                      "%dD: Q(1) = (%.12g, %.12g), exact (%.12g, %.12g)", dim, out[0],
                      out[dim - 1], x, z);
        mbs_problem_close(&pb);
        mbs_record_free(&r);
        free(path);
    }
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Redundant constraints are kept: the spatial five-bar in natural coordinates
 * has 30 coordinates and 2 degrees of freedom, so rank G = 28 whatever the
 * number of rows (32: its closed loop of revolute joints restates some). */
START_TEST(redundancy_kept_and_counted)
{
    mbs_problem pb;
    open_pb(&pb, "fivebar3d-nc");
    ck_assert_uint_eq(pb.nq, 30);
    ck_assert(pb.flags & MBS_PB_REDUNDANT);
    char d[512], want[64];
    ck_assert_int_eq(mbs_mech_describe(&pb, d, sizeof d), MBS_OK);
    snprintf(want, sizeof want, "rank defect of G at t0: %zu", pb.nl - 28);
    ck_assert_msg(pb.nl > 28 && strstr(d, want) != NULL, "n_lambda %zu: %s", pb.nl, d);
    mbs_problem_close(&pb);
    open_pb(&pb, "fivebar-nc"); /* planar: 6 coordinates, 4 rows, full rank */
    ck_assert(!(pb.flags & MBS_PB_REDUNDANT));
    mbs_mech_describe(&pb, d, sizeof d);
    ck_assert_msg(strstr(d, "rank defect of G at t0: 0") != NULL, "%s", d);
    mbs_problem_close(&pb);
}
END_TEST

/* The IFToMM A04 and A05 files: the Bricard mechanism has exactly one redundant
 * row (Grübler 0, mobility 1); the flyball governor's slider reaches its first
 * maximum, about 0.74, near t = 0.5 s and is back near 0.50 at t = 1 s. */
START_TEST(iftomm_bricard_and_flyball)
{
    mbs_problem pb;
    char d[512];
    open_pb(&pb, "bricard");
    mbs_mech_describe(&pb, d, sizeof d);
    ck_assert_msg(strstr(d, "rank defect of G at t0: 1") != NULL, "%s", d);
    mbs_problem_close(&pb);
    open_pb(&pb, "flyball");
    ck_assert_int_eq(pb.n_reported, 1); /* the benchmark's s alone ([report] coordinates) */
    ck_assert_str_eq(reported_name(&pb, 0), "z_S1");
    for (int k = 0; k < 2; k++) {
        mbs_record r;
        double out[6], t = k ? 1.0 : 0.5;
        mbs_test_run("flyball", "index2/radau5", NAN, 1e-7, t, &r);
        ck_assert_msg(r.status == MBS_OK, "%s", r.reason);
        pb.def->reported(&pb, t, r.final, r.final + pb.nq, out);
        ck_assert_msg(k ? fabs(out[0] - 0.50) < 0.01 : fabs(out[0] - 0.74) < 0.01,
                      "s(%g) = %.4f", t, out[0]);
        mbs_record_free(&r);
    }
    mbs_problem_close(&pb);
}
END_TEST

/* Parameters override the file's values; model:file= reaches a shipped file too. */
START_TEST(parameters_and_model_spec)
{
    mbs_problem pb;
    open_pb(&pb, "nfourbar:N=3");
    ck_assert_uint_eq(pb.nq, 8); /* B0..B3 */
    ck_assert_uint_eq(pb.nl, 7); /* 4 cranks, 3 couplers */
    mbs_problem_close(&pb);
    open_pb(&pb, "model:file=mechanisms/chain-nc.mech,N=4");
    ck_assert_str_eq(pb.def->name, "chain-nc");
    ck_assert_uint_eq(pb.nq, 8);
    mbs_problem_close(&pb);
    char err[512];
    ck_assert_int_eq(mbs_problem_open(&pb, "nfourbar:N=0", err, sizeof err), MBS_BAD_INPUT);
    ck_assert_int_eq(mbs_problem_open(&pb, "model:file=no/such.mech", err, sizeof err),
                     MBS_BAD_INPUT);
    ck_assert_msg(strstr(err, "no/such.mech") != NULL, "%s", err);
}
END_TEST

/* Initial values: a distance joint longer than the reference makes the given
 * positions inconsistent; the loader moves them onto g = 0 and says how far; a
 * crank's angular velocity given alone fixes the others' velocities. */
START_TEST(initial_values_completed)
{
    char *dir = mbs_test_tmpdir();
    char *path = tmp_file(dir, "stretch.mech",
                          "[mechanism]\ndim = 2\ngravity = 0 -1\n"
                          "[point O]\nground = 0 0\n[point A]\nat = 0 -1\n[point B]\nat = 1 -1\n"
                          "[body m1]\npoint_mass = A\nmass = 1\n[body m2]\npoint_mass = B\nmass = 1\n"
                          "[joint r1]\ntype = distance\npoints = O A\n"
                          "[joint r2]\ntype = distance\npoints = A B\nlength = 1.2\n");
    char spec[600], d[512];
    snprintf(spec, sizeof spec, "model:file=%s", path);
    mbs_problem pb;
    open_pb(&pb, spec);
    double q[4], v[4], l[2], g[2];
    int have;
    pb.def->initial(&pb, q, v, l, &have);
    pb.def->constraint(&pb, 0.0, q, g);
    ck_assert(fabs(g[0]) < 1e-12 && fabs(g[1]) < 1e-12);
    ck_assert_double_eq_tol(hypot(q[2] - q[0], q[3] - q[1]), 1.2, 1e-12);
    mbs_mech_describe(&pb, d, sizeof d);
    double moved = 0;
    ck_assert_msg(sscanf(strstr(d, "positions moved by ") + 19, "%lf", &moved) == 1, "%s", d);
    ck_assert_msg(moved > 0.05 && moved < 0.3, "%s", d);
    mbs_problem_close(&pb);
    free(path);

    path = tmp_file(dir, "mcrank.mech",
                    "[mechanism]\ndim = 2\n"
                    "[point O]\nground = 0 0\n[point C]\nground = 2 0\n[point A]\nat = 0 1\n"
                    "[point B]\nat = 2 1\n"
                    "[body crank]\nrod = O A\nmass = 1\nomega = -3\n"
                    "[body coupler]\nrod = A B\nmass = 1\n[body rocker]\nrod = B C\nmass = 1\n");
    snprintf(spec, sizeof spec, "model:file=%s", path);
    open_pb(&pb, spec);
    pb.def->initial(&pb, q, v, l, &have);
    /* A = (0, 1) turning at -3 rad/s: v_A = (3, 0); the parallelogram: v_B = v_A */
    ck_assert_double_eq_tol(v[0], 3.0, 1e-12);
    ck_assert_double_eq_tol(v[1], 0.0, 1e-12);
    ck_assert_double_eq_tol(v[2], 3.0, 1e-12);
    ck_assert_double_eq_tol(v[3], 0.0, 1e-12);
    mbs_problem_close(&pb);
    free(path);

    /* impossible: a point 1 from O and 1 from C = (3, 0) */
    path = tmp_file(dir, "bad.mech",
                    "[mechanism]\ndim = 2\n"
                    "[point O]\nground = 0 0\n[point C]\nground = 3 0\n[point A]\nat = 1 0\n"
                    "[body m]\npoint_mass = A\nmass = 1\n"
                    "[joint a]\ntype = distance\npoints = O A\n"
                    "[joint b]\ntype = distance\npoints = A C\nlength = 1\n");
    snprintf(spec, sizeof spec, "model:file=%s", path);
    char err[600];
    ck_assert_int_eq(mbs_problem_open(&pb, spec, err, sizeof err), MBS_BAD_INPUT);
    ck_assert_msg(strstr(err, "cannot be made consistent") && strstr(err, "residual"), "%s", err);
    free(path);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Bad files: one line FILE:LINE: message. */
static const struct {
    const char *text, *line, *what;
} bad[] = {
    {"[mechanism]\ndim = 2\n[gizmo x]\na = 1\n", ":3:", "unknown element type 'gizmo'"},
    {"[mechanism]\ndim = 2\n[point O]\nground = 0 0\n[point A]\nat = 1 0\n[body b]\nrod = O A\n"
     "mass = 1\n[joint j]\ntype = hinge\nbodies = ground b\nat = O\n",
     ":11:", "unknown joint type 'hinge'"},
    {"[mechanism]\ndim = 2\n[point A]\nat = 1 0\n[body b]\npoint_mass = A\nmass = 1\n"
     "[joint j]\ntype = revolute\nbodies = ground c\nat = A\n",
     ":10:", "undefined body 'c'"},
    {"[mechanism]\ndim = 2\n[point A]\nat = 1 0\n[body b]\nrod = A Z\nmass = 1\n", ":6:",
     "undefined point 'Z'"},
    {"[mechanism]\ndim = 2\n[point A]\nat = 1 0\n[body b]\npoint_mass = A\n", ":5:",
     "missing mass"},
    {"[mechanism]\ndim = 3\n[point A]\nat = 1 0 0\n[body b]\npoints = A\nmass = 1\ncom = A\n"
     "inertia = 1 -2 1\n",
     ":9:", "negative inertia"},
    {"[mechanism]\ndim = 3\n[point A]\nat = 1 0 0\n[body b]\npoints = A\nmass = 1\ncom = A\n"
     "inertia = 1 0.1 0  0 1 0  0 0 1\n",
     ":9:", "non-symmetric inertia"},
    {"[mechanism]\ndim = 3\n[point A]\nat = 1 0 0\n[body b]\npoint_mass = A\nmass = 1\n"
     "[joint j]\ntype = revolute\nbodies = ground b\nat = A\naxis = 0 0 0\n",
     ":12:", "zero-length axis"},
    {"[mechanism]\ndim = 2\n[point A]\nat = 1 0\n[point A]\nat = 2 0\n", ":5:",
     "duplicate name 'A'"},
    {"[mechanism]\ndim = 2\n[parameter N]\nvalue = 0\nmin = 1\nmax = 10\n", ":4:",
     "out of its range"},
    {"[mechanism]\ndim = 2\n[point A]\nat = 1 0\nat = 2 0\n", ":5:", "given twice"},
    {"[mechanism]\ndim = 2\nnonsense line\n", ":3:", "expected"},
};

START_TEST(bad_files_name_file_and_line)
{
    char *dir = mbs_test_tmpdir();
    char *path = tmp_file(dir, "bad.mech", bad[_i].text);
    char err[600];
    int st = mbs_mech_register_file(path, NULL, NULL, err, sizeof err);
    ck_assert_int_eq(st, MBS_BAD_INPUT);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err, bad[_i].line) &&
                      strstr(err, bad[_i].what) && !strchr(err, '\n'),
                  "case %d: expected '%s%s ... %s', got '%s'", _i, path, bad[_i].line,
                  bad[_i].what, err);
    free(path);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* The command line: exit status 2 and the one-line message. */
START_TEST(bad_file_cli_exit_2)
{
    char *dir = mbs_test_tmpdir();
    char *path = tmp_file(dir, "bad.mech", bad[1].text);
    char cmd[700], out[1024];
    snprintf(cmd, sizeof cmd, "check-problem -p model:file=%s", path);
    int lines = 0;
    ck_assert_int_eq(mbs_test_cli_lines(cmd, out, sizeof out, &lines), 2);
    ck_assert_msg(strstr(out, ":11: unknown joint type 'hinge'") != NULL, "%s", out);
    ck_assert_int_eq(lines, 1);
    free(path);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* Joints, drivers and forces of every kind pass check-problem: G, gamma, g_t,
 * the force derivatives and (conservative ones) the energy. */
static const char *const kinds[] = {
    /* spatial: universal, cylindrical, point-on-line, weld, spring-damper, constant force,
     * torque on a revolute joint, driven distance */
    "[mechanism]\ndim = 3\ngravity = 0 0 -9.81\n"
    "[point O]\nground = 0 0 0\n[point A]\nat = 0 0 -1\n[point B]\nat = 0.5 0 -1\n"
    "[point C]\nat = 0.5 0.3 -1.2\n[point D]\nat = 1 0 -1\n"
    "[body b1]\nrod = O A\nsection = 0.05\nmass = 1\n"
    "[body b2]\nrod = A B\nsection = 0.05\nmass = 2\n"
    "[body b3]\nbox = 0.1 0.2 0.3\ncom = C\nmass = 0.5\npoints = C\n"
    "[body b4]\npoint_mass = D\nmass = 0.3\n"
    "[joint u]\ntype = universal\nbodies = ground b1\nat = O\naxis = 1 0 0\naxis2 = 0 1 0\n"
    "[joint c]\ntype = cylindrical\nbodies = b1 b2\nat = A\naxis = 1 0 0\n"
    "[joint w]\ntype = weld\nbodies = b2 b3\n"
    "[joint p]\ntype = point-on-line\nbodies = b2 b4\nat = D\naxis = 0 1 0\n"
    "[force s]\ntype = spring\npoints = O D\nk = 50\nc = 0.5\nlength = 1\n"
    "[force f]\ntype = constant\npoint = C\nvalue = 1 2 3\n",
    /* planar: revolute with torque and angle report, prismatic, driven distance */
    "[mechanism]\ndim = 2\ngravity = 0 -9.81\n"
    "[point O]\nground = 0 0\n[point A]\nat = 1 0\n[point B]\nat = 2 0\n[point C]\nat = 3 0.5\n"
    "[body crank]\nrod = O A\nmass = 1\n[body slider]\npoint_mass = B\nmass = 1\ninertia = 0.01\n"
    "[body arm]\nrod = B C\nmass = 0.5\n"
    "[joint hub]\ntype = revolute\nbodies = ground crank\nat = O\n"
    "[joint s]\ntype = prismatic\nbodies = crank slider\nat = B\naxis = 1 0\n"
    "[joint e]\ntype = revolute\nbodies = slider arm\nat = B\n"
    "[driver d]\ntype = distance\npoints = O B\nlength = 2 + 0.1*sin(3*t)\n"
    "[force t]\ntype = torque\njoint = e\nvalue = 0.5*cos(t)\n"
    "[force k]\ntype = spring\npoints = A C\nk = 10\nc = 1\n"
    "[report]\npoints = C\nangles = hub e\n",
    /* spatial driver on a revolute joint and a spherical joint */
    "[mechanism]\ndim = 3\ngravity = 0 -9.81 0\n"
    "[point O]\nground = 0 0 0\n[point A]\nat = 1 0 0\n[point B]\nat = 1 -1 0\n"
    "[body crank]\nrod = O A\nsection = 0.1\nmass = 1\n"
    "[body link]\nrod = A B\nmass = 1\n"
    "[joint hub]\ntype = revolute\nbodies = ground crank\nat = O\naxis = 0 0 1\n"
    "[joint ball]\ntype = spherical\nbodies = crank link\nat = A\n"
    "[driver turn]\ntype = angle\njoint = hub\nangle = 0.3*t^2\n"
    "[report]\nangles = hub\n",
};

START_TEST(every_kind_passes_check_problem)
{
    char *dir = mbs_test_tmpdir();
    char name[32];
    snprintf(name, sizeof name, "kinds%d.mech", _i);
    char *path = tmp_file(dir, name, kinds[_i]);
    char cmd[700];
    char *err = NULL, *out = NULL;
    snprintf(cmd, sizeof cmd, "check-problem -p model:file=%s", path);
    int st = mbs_test_cli_text(cmd, &err, &out);
    ck_assert_msg(st == 0, "case %d: exit %d\n%s%s", _i, st, out, err);
    free(err);
    free(out);
    free(path);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* The driven-angle row: the crank of the third kind turns by 0.3 t^2 exactly. */
START_TEST(driven_angle_exact)
{
    char *dir = mbs_test_tmpdir();
    char *path = tmp_file(dir, "turn.mech", kinds[2]);
    char spec[600];
    snprintf(spec, sizeof spec, "model:file=%s", path);
    mbs_record r;
    mbs_test_run(spec, "index1/rk8pd", NAN, 1e-12, 1.5, &r);
    ck_assert_msg(r.status == MBS_OK, "%s", r.reason);
    mbs_problem pb;
    open_pb(&pb, spec);
    ck_assert(pb.flags & MBS_PB_RHEONOMIC);
    double a;
    pb.def->reported(&pb, 1.5, r.final, r.final + pb.nq, &a);
    ck_assert_double_eq_tol(a, 0.3 * 1.5 * 1.5, 1e-10);
    mbs_problem_close(&pb);
    mbs_record_free(&r);
    free(path);
    mbs_test_remove_tree(dir);
    free(dir);
}
END_TEST

/* fourbar-nc, a parallelogram hanging with its crank tips at 3 m/s: every crank
 * stays parallel, so the crank angle theta from the vertical obeys the compound
 * pendulum theta'' = -(6/5) (g/L) sin theta (cranks m L^2/3 about their pivots,
 * the translating coupler m L^2 theta'^2/2; potential -2 m g L cos theta).  The start is
 * not an equilibrium, the cranks stay at least 30 degrees from the flat
 * configurations, and the stored reference at t_end (two computations of the full
 * mechanism, problems/ref/fourbar-nc.ref) agrees with this reduction, integrated
 * by GSL's rk8pd, to 1e-9.  Before, the file released the upright parallelogram
 * at rest: an unstable equilibrium, with no stored reference. */
static int crank_rhs(double t, const double *y, double *dy, void *par)
{
    (void)t;
    dy[0] = y[1];
    dy[1] = -1.2 * *(const double *)par * sin(y[0]);
    return GSL_SUCCESS;
}

START_TEST(fourbar_swings_on_its_reference)
{
    mbs_problem pb;
    open_pb(&pb, "fourbar-nc");
    ck_assert_uint_eq(pb.nq, 4); /* A = (q0, q1), B = (q2, q3) */
    size_t ny = mbs_ny(&pb);
    double *y0 = calloc(ny, sizeof(double)), *yr = calloc(ny, sizeof(double));
    int have_l = 0;
    ck_assert_int_eq(pb.def->initial(&pb, y0, y0 + pb.nq, y0 + pb.nq + pb.nv, &have_l), MBS_OK);
    /* the crank tips move at 3 m/s along x, parallel */
    ck_assert_double_eq_tol(y0[pb.nq], 3.0, 1e-12);
    ck_assert_double_eq_tol(y0[pb.nq + 2], 3.0, 1e-12);
    ck_assert_double_eq_tol(y0[pb.nq + 1], 0.0, 1e-12);
    char prov[1024];
    ck_assert_msg(mbs_reference_find(&pb, pb.t_end, yr, prov, sizeof prov),
                  "no stored reference of fourbar-nc at t_end = %g", pb.t_end);
    double g = 9.81, th[2] = {0.0, 3.0}, t = 0.0, thmax = 0.0;
    gsl_odeiv2_system sys = {crank_rhs, NULL, 2, &g};
    gsl_odeiv2_driver *d =
        gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3, 1e-13, 1e-13);
    for (int k = 1; k <= 1000; k++) {
        ck_assert_int_eq(gsl_odeiv2_driver_apply(d, &t, pb.t_end * k / 1000.0, th), GSL_SUCCESS);
        thmax = fmax(thmax, fabs(th[0]));
    }
    gsl_odeiv2_driver_free(d);
    ck_assert_msg(thmax < MBS_PI / 3.0, "max |theta| = %g rad", thmax);
    const double A[4] = {sin(th[0]), -cos(th[0]), cos(th[0]) * th[1], sin(th[0]) * th[1]};
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(fabs(yr[i] - A[i]) < 1e-9, "q[%d] = %.15g, reduction %.15g", i, yr[i], A[i]);
        ck_assert_msg(fabs(yr[i + 2] - A[i] - 2.0 * (i == 0)) < 1e-9, "B");
        ck_assert_msg(fabs(yr[pb.nq + i] - A[2 + i]) < 1e-9, "v[%d] = %.15g, reduction %.15g", i,
                      yr[pb.nq + i], A[2 + i]);
    }
    free(y0);
    free(yr);
    mbs_problem_close(&pb);
}
END_TEST

Suite *mbs_suite_mech(void)
{
    Suite *s = suite_create("mechanisms");
    TCase *tc = tcase_create("mech");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, cross_check_trajectories, 0, 2 * (int)(sizeof xchecks / sizeof *xchecks));
    tcase_add_test(tc, bead_on_rotating_rod_exact);
    tcase_add_test(tc, prismatic_incline_exact);
    tcase_add_test(tc, redundancy_kept_and_counted);
    tcase_add_test(tc, parameters_and_model_spec);
    tcase_add_test(tc, iftomm_bricard_and_flyball);
    tcase_add_test(tc, initial_values_completed);
    tcase_add_loop_test(tc, bad_files_name_file_and_line, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, bad_file_cli_exit_2);
    tcase_add_loop_test(tc, every_kind_passes_check_problem, 0,
                        (int)(sizeof kinds / sizeof *kinds));
    tcase_add_test(tc, driven_angle_exact);
    tcase_add_test(tc, fourbar_swings_on_its_reference);
    suite_add_tcase(s, tc);
    return s;
}
