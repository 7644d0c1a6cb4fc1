/* One run of a method on a problem, and its record (the results schema is
 * documented once, in docs/results-schema.md). */
#ifndef MBS_RUN_H
#define MBS_RUN_H

#include <stdio.h>

#include "../methods/framework/method.h"
#include "../problems/problem.h"

typedef struct mbs_run_spec {
    const char *problem;  /* "pendulum:x0=0.2" */
    const char *method;   /* "index1/rk4:linsol=chol" */
    double h;             /* fixed step (NaN: not given) */
    double tol;           /* rtol = atol for adaptive methods (NaN: not given) */
    double t_end;         /* NaN: problem default */
    int repeat;           /* timing repetitions (>= 1); 0 = no timing run */
    long max_steps;       /* 0 = default */
    double max_cpu;       /* CPU seconds per integration; 0 = default (600 s) */
    double inject_fail_t; /* testing: problem callbacks fail for t >= this (0: off) */
    int measure;          /* 0: skip the measuring run (benchmarks) */
    /* Optional (NULL: off).  series: path of a side file to which the measuring
     * run writes the time series t, |g|, |B v + g_t|, |E - E0|/|E0| (maxima over
     * log-spaced time bins; docs/results-schema.md).  method_def: testing hook, use this
     * definition instead of looking `method` up in the registry (the part of
     * `method` after ':' is still parsed as its parameters). */
    const char *series;
    const struct mbs_method_def *method_def;
    double atol;          /* absolute tolerance of adaptive methods (0 or NaN: = tol) */
    int tol_mode;         /* MBS_TOL_LOCAL (0, default) or MBS_TOL_GLOBAL (globaltol.c) */
    /* Budgets (docs/results-schema.md, "Budgets"; 0 = default): wall-clock seconds per
     * integration (default MBS_DEFAULT_MAX_WALL), and the memory a run may use in
     * bytes (default: the memory available, /proc/meminfo MemAvailable and the
     * address-space limit).  A method whose dense workspace is estimated above the
     * memory budget is refused before it starts (status no_memory, reason
     * "out-of-memory: ..."). */
    double max_wall;
    double max_mem;
    /* Trajectory measures (docs/results-schema.md, `traj`): the number of output
     * steps of the grid (0: the problem's, default MBS_OUTPUT_STEPS; -1: no
     * trajectory measurement), and an optional path to which the measuring run
     * writes the state (and the problem's reported quantities) at every grid
     * time as CSV (NULL: none; harness/traj.h). */
    long output_steps;
    const char *trajectory;
    /* Reference generation (harness/refgen.c; NULL: off): integrate to each of
     * the n_stops increasing times stops[] in turn, the method restarted there
     * from the state reached (no dense output or interpolation involved), and
     * write the state at each to stop_states (n_stops x (n_q + n_v + n_l + n_x)). */
    const double *stops;
    size_t n_stops;
    double *stop_states;
} mbs_run_spec;

/* Fixed-step runs may take at most this many steps ((t_end - t0) / h): beyond,
 * t0 + i h no longer advances reliably in double precision and the step count
 * overflows the counters.  Larger counts are bad input. */
#define MBS_MAX_FIXED_STEPS 1e15

/* The largest number of output steps of the trajectory grid (mbs_run_spec). */
#define MBS_MAX_OUTPUT_STEPS 10000000L

/* Meaning of the tolerance (docs/results-schema.md, "Tolerance modes"): local is the
 * method's own error-per-step control; global makes tol a target for the error
 * at t_end by reintegration with tolerances reduced tenfold (globaltol.c). */
enum { MBS_TOL_LOCAL = 0, MBS_TOL_GLOBAL = 1 };

enum { MBS_CPU_TIMES_MAX = 64 };

typedef struct mbs_err3 {
    double q, v, lambda; /* NaN: not available */
} mbs_err3;

/* Errors along the trajectory (harness/traj.h; docs/results-schema.md `traj`). */
typedef struct mbs_traj_rec {
    int measured;         /* 0: JSON "traj": null (failed run, no measuring run, off) */
    long n;               /* grid points (output steps + 1) */
    char interp[8];       /* "dense", "hermite" or "grid": the least accurate used */
    char reference[8];    /* "exact", "stored" or "none" */
    char reason[256];     /* with reference "none": why */
    mbs_err3 err_max, err_rms, digits; /* NaN: no reference or no components */
    /* The IFToMM error (harness/traj.h): over the grid and the problem's reported
     * quantities, max |x - x_ref| (abs) and max |x - x_ref| / max(|x_ref|, 1e-3)
     * (rel); ift_ref "" when not measured (no reported quantities or no reference
     * of them), else "exact", "reduction" or "stored". */
    char ift_ref[12];
    double ift_abs, ift_rel;
} mbs_traj_rec;

typedef struct mbs_record {
    char problem[64], method[64];
    char problem_params[512], method_params[512]; /* canonical "k=v,..." (all values) */
    char problem_spec[512], method_spec[512];     /* as given */
    double h, tol, t0, t_end;
    int status;           /* mbs_status */
    char reason[256];
    double fail_t;
    size_t nq, nv, nl;
    size_t nx;            /* extra variables of an extended problem (problem.h), else 0 */
    double t_final;
    double *final;        /* q | v | lambda (| x) at t_final (owned) */
    double *final_published; /* the state at t_final in the published component order
                                (problems with a `published` callback; owned, else NULL) */
    size_t n_published;
    int have_ref;         /* 1: errors were measured against an exact/reference solution */
    char ref_kind[16];    /* "exact", "reference" or "none" */
    mbs_err3 err, err_max;
    double err_mixed_qv;  /* max over q, v of |y_i - ref_i| / (1 + |ref_i|) at t_end (NaN:
                             not measured): the accuracy measure of `make bench` */
    double scd, mescd;
    double res_pos_max, res_vel_max, res_acc_max, res_pos_end, res_vel_end;
    double energy_drift;
    double drift_exponent, drift_rms;
    mbs_counters cnt;
    /* Linear-solver backend of the recorded run (methods/linsol/linsol.h):
     * have_linsol = 0 when the method used none (JSON "linsol": null).  The
     * counts are those of the recorded run alone (see run.c, linsol_take). */
    int have_linsol;
    int linsol_kind;      /* enum mbs_linsol_kind */
    mbs_linsol_stats linsol;
    int threads;          /* threads of the method's parallel parts (0: none reported;
                             JSON "threads" only when > 0) */
    double cpu_min, cpu_median, cpu_iqr;
    int cpu_repeats;
    double cpu_times[MBS_CPU_TIMES_MAX]; /* the first min(repeats, MAX) timings, run order */
    double order[3];      /* the method's nominal orders */
    long run_index;       /* position in a sweep's run list (-1 outside sweeps) */
    double atol;          /* absolute tolerance used (NaN: fixed step; = tol unless set) */
    int tol_mode;         /* MBS_TOL_LOCAL or MBS_TOL_GLOBAL */
    int global_levels;    /* global mode: levels run (else 0) */
    double global_est;    /* global mode: last level difference / tolerance (else NaN) */
    double global_tol_final; /* global mode: local tolerance of the returned level */
    mbs_traj_rec traj;
} mbs_record;

/* Validate the spec and run it.  Bad input returns MBS_BAD_INPUT with a one-line
 * message in err and leaves rec empty; otherwise returns MBS_OK and rec->status
 * tells whether the integration succeeded.  rec must be released with
 * mbs_record_free. */
int mbs_run(const mbs_run_spec *spec, mbs_record *rec, char *err, size_t errlen);
/* Validation alone (suite loading): MBS_OK, or MBS_BAD_INPUT with a one-line
 * message in err. */
int mbs_run_check(const mbs_run_spec *spec, char *err, size_t errlen);
/* Estimated lower bound of the bytes the method's dense workspace needs on the
 * problem (0: no dense path); what names the matrix, remedy the way out.  Used by
 * mbs_run against the memory budget. */
double mbs_run_memory_estimate(const mbs_method_def *m, const mbs_params *mp,
                               const mbs_problem *pb, char *what, size_t whatlen,
                               char *remedy, size_t remedylen);
/* The memory available to a run in bytes (MemAvailable, capped by RLIMIT_AS and
 * RLIMIT_DATA); +Inf when unknown. */
double mbs_memory_available(void);
/* A byte count for messages ("28.8 GB"); membudget.c. */
void mbs_human_bytes(double b, char *buf, size_t len);
void mbs_record_free(mbs_record *rec);
/* The two tolerance modes behind mbs_run (harness/runmode.c dispatches on
 * spec->tol_mode): one integration as specified (run.c; tol_mode is ignored),
 * and the global mode, which calls mbs_run_local at tolerances reduced tenfold
 * until the error estimate at t_end meets tol (globaltol.c). */
int mbs_run_local(const mbs_run_spec *spec, mbs_record *rec, char *err, size_t errlen);
int mbs_run_global(const mbs_run_spec *spec, mbs_record *rec, char *err, size_t errlen);
/* Digits of the IVP Test Set for a problem with a published definition
 * (the Test Set 2.4 [testset24], "Accuracy measure"), on the state py and the
 * reference pref in published order (n components): scd over the components
 * scd_idx[0..n_scd) (all when scd_idx is NULL), skipping |pref_i| < 1e-200, an
 * error of exactly 0 counting as 1e-16; mescd over ALL n components. */
void mbs_testset_digits(const double *py, const double *pref, size_t n, const size_t *scd_idx,
                        size_t n_scd, double *scd, double *mescd);
/* Set rec->cpu_min/median/iqr/repeats/cpu_times from `repeat` timings (sorted in place). */
void mbs_cpu_stats(mbs_record *rec, double *times, int repeat);

/* Output. */
char *mbs_record_json(const mbs_record *rec); /* one line, malloc'ed, no newline */
void mbs_record_csv_header(FILE *f);
void mbs_record_csv(const mbs_record *rec, FILE *f);
/* One CSV row from a parsed JSON record (jansson's json_t). */
struct json_t;
void mbs_csv_row_json(struct json_t *record, FILE *f);
void mbs_record_table_header(FILE *f);
void mbs_record_table_row(const mbs_record *rec, FILE *f);
void mbs_record_print_long(const mbs_record *rec, FILE *f);

/* Process CPU time in seconds. */
double mbs_cpu_seconds(void);

#endif
