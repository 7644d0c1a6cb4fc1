/* The battery: every registered method on every built-in problem it supports, at
 * default parameters, over one standard refinement study (converge.h) per pair,
 * with h0 / tol0 per problem from one data file (suites/battery.ini):
 *
 *   [battery]
 *   levels = 5            ; converge levels
 *   ratio = 2             ; fixed step: h0, h0/2, ...
 *   tol_ratio = 10        ; adaptive: tol0, tol0/10, ...
 *   max_decades = 6.5     ; fixed step of nominal order p: ratio^(1/k), the smallest k
 *                         ; with (levels - 1) p log10(ratio) / k <= max_decades
 *   max_cpu = 60          ; budget of each integration (seconds of CPU; max_wall: wall)
 *   h0 = 0.01             ; h0 and tol0 of a problem without a section (new problems,
 *   tol0 = 1e-6           ; e.g. mechanism files, run before anyone calibrated them)
 *   h0_factor PATTERN = 4 ; fixed-step methods matching PATTERN (fnmatch) start at this
 *                         ; multiple of every problem's h0 (high orders reach round-off)
 *   check = fivebar index3/genalpha pass   ; the cheap subset (make check), one pair per
 *           pendulum recursive/rk4 declined ; line: "PROBLEM METHOD OUTCOME" (the outcome
 *                                           ; tests/check_battery.c expects)
 *
 *   [problem NAME]        ; one per registered problem (default parameters and t_end)
 *   h0 = 0.01             ; first step of fixed-step methods
 *   tol0 = 1e-3           ; first tolerance of adaptive methods
 *   h0 PATTERN = 0.1      ; another h0 (tol0) for the methods matching PATTERN (fnmatch)
 *   t_end = 20            ; a shorter horizon than the problem's t_end, where the error
 *                         ; at t_end leaves the asymptotic range within the step budget
 *
 *   [expect NAME]         ; an order that theory predicts below the nominal one
 *   methods = index3/radau5 index3/radau      ; fnmatch patterns
 *   problems = *
 *   group = lambda        ; q, v or lambda
 *   order = 1             ; the predicted observed order (0: no convergence)
 *   source = ...          ; author, year, references.bib key, equation
 *
 * Outcome of a pair (the definitions are in docs/methods.md, "Battery"):
 *   declined  the method declines the problem (status unsupported), with its reason;
 *   failed    a level failed; its status and reason are kept, and the failure is
 *             checked: budgets are true by construction; a Newton or step-size
 *             failure of a method with a Newton tolerance (newton_tol, Radau's
 *             kappa) runs again:
 *             an exhausted iteration count with ten times the iteration limit
 *             (passing: slow, true as stated), else with the loosest newton_tol
 *             (failing again: confirmed; passing: refuted, i.e. stagnation above
 *             the tolerance reported as failure, a finding);
 *   pass      fixed step: every group (q, v, lambda) establishes its nominal order
 *             (fitted order >= nominal - max(0.3, 10%)); adaptive: q and v converge
 *             under tolerance refinement (the least-squares tolerance exponent over
 *             the usable levels is >= 0.5 with its 95% CI above 0); tolerance
 *             proportionality (exponent within 0.3 of 1, err/tol within a factor
 *             10 over the levels) is recorded, not judged;
 *   expected  as pass, with a group at an [expect] order instead;
 *   limited   a group has fewer than 3 levels above the reference's stated accuracy;
 *             or, adaptive, the step count hardly moves over the five tolerances
 *             (largest / smallest <= 1.1, where an error-controlled method of order
 *             p <= 8 needs at least 10^(4/9) = 2.8): the step is set by stability
 *             or a step limit, not by the tolerance, and a tolerance exponent
 *             not established or below 0.5 says nothing (stability_bound);
 *   finding   anything else: a group below its order, not established, an error
 *             that does not fall with the tolerance, or a refuted failure.
 * The battery passes when it has no finding. */
#ifndef MBS_BATTERY_H
#define MBS_BATTERY_H

#include <stdio.h>

#include "converge.h"

enum { MBS_BATTERY_MAX_OVERRIDES = 16 };

typedef struct mbs_battery_problem {
    char name[64];
    double h0, tol0;
    double t_end; /* the horizon of every pair on this problem (NaN: the problem's t_end) */
    int defaulted; /* no [problem NAME] section: the [battery] h0 and tol0 */
    int n_over;
    struct {
        char pattern[64];
        int adaptive; /* 1: tol0, 0: h0 */
        double x0;
    } over[MBS_BATTERY_MAX_OVERRIDES];
} mbs_battery_problem;

typedef struct mbs_battery_expect {
    char name[64];
    char methods[512], problems[512]; /* whitespace-separated fnmatch patterns */
    int group;                        /* 0 q, 1 v, 2 lambda */
    double order;
    char source[512];
} mbs_battery_expect;

typedef struct mbs_battery {
    char path[1024];
    int levels;
    double ratio, tol_ratio, max_cpu, max_wall;
    double max_decades;   /* fixed step: the levels span at most this many decades of
                             error at the nominal order (0: off; mbs_battery_ratio) */
    double h0, tol0;      /* defaults for problems without a section (NaN: none) */
    mbs_battery_problem *pb;
    size_t n_pb;
    mbs_battery_expect *ex;
    size_t n_ex;
    char (*check)[3][64]; /* the make-check pairs: problem, method, outcome */
    int n_factor;
    struct {
        char pattern[64];
        double factor;
    } factor[MBS_BATTERY_MAX_OVERRIDES]; /* h0_factor PATTERN = F */
    size_t n_check;
} mbs_battery;

typedef enum {
    MBS_BAT_PASS,
    MBS_BAT_EXPECTED,
    MBS_BAT_LIMITED,
    MBS_BAT_DECLINED,
    MBS_BAT_FAILED,
    MBS_BAT_FINDING
} mbs_battery_outcome;

/* Per group: pass, expected, limited, low (established below the order), off
 * (adaptive: the error does not fall with the tolerance), none (not
 * established), skip (no such group, or no level ran). */
typedef enum {
    MBS_GRP_SKIP,
    MBS_GRP_PASS,
    MBS_GRP_EXPECTED,
    MBS_GRP_LIMITED,
    MBS_GRP_LOW,
    MBS_GRP_OFF,
    MBS_GRP_NONE
} mbs_battery_group_state;

typedef struct mbs_battery_result {
    char problem[64], method[64];
    int adaptive;
    double x0;
    double t_end; /* the battery's horizon when its section sets one (NaN: the problem's) */
    mbs_battery_outcome outcome;
    struct {
        mbs_battery_group_state state;
        double p, ci_low, ci_high, nominal;
        int first, last;   /* levels of the fit (1-based; 0: none) */
        int usable;        /* levels with an error above the reference's accuracy and
                              round-off */
        int expect;        /* index into mbs_battery.ex, or -1 */
        int present;       /* judged at all (0: no multipliers, an adaptive method's
                              multipliers, or nominal order 0) */
        double ymax;       /* max |y_i| over the group at t_end (round-off level) */
        /* adaptive (recorded, not judged): err/tol over the usable levels, and
           tolerance proportionality (|p - 1| <= 0.3, et_hi <= 10 et_lo) */
        double et_lo, et_hi;
        int proportional;
    } g[3];
    int fail_level;        /* 1-based level of the first failure, 0: none */
    int fail_status;
    char fail_reason[256];
    char check[16];        /* failed: confirmed, refuted, slow, unchecked, budget,
                              observed (nan_state) */
    char check_note[320];
    int levels;
    double x[MBS_MAX_LEVELS], err[MBS_MAX_LEVELS][3];
    int status[MBS_MAX_LEVELS];
    long steps[MBS_MAX_LEVELS];
    unsigned char ref_limited[MBS_MAX_LEVELS]; /* bit g: group g reference-limited */
    double ref_digits;     /* stated accuracy of the stored reference (NaN: none) */
    int self_ref;
    int branch;            /* measured against the problem's branch (converge.h) */
    double wall;           /* seconds the pair took */
    char revision[48];     /* git revision of the build that ran it ("": not recorded) */
    int stability_bound;   /* adaptive: steps at most 1.1x apart over the levels (judge) */
} mbs_battery_result;

/* The ratio of a method's levels: tol_ratio for adaptive methods; for a
 * fixed-step method of nominal order p (the highest of q, v, lambda) ratio^(1/k),
 * k the smallest integer with (levels - 1) p log10(ratio) / k <= max_decades:
 * at ratio 2 five levels of order 13 span 15.7 decades of error, more than a
 * double resolves between an error of O(1) and round-off. */
struct mbs_method_def;
double mbs_battery_ratio(const mbs_battery *b, const struct mbs_method_def *m);

/* Load and validate the data file (every registered problem needs its section).
 * A problem without a section takes the [battery] h0 and tol0 (defaulted);
 * without those, it is an error.  Returns MBS_OK, or MBS_BAD_INPUT with one
 * line in err. */
int mbs_battery_load(const char *path, mbs_battery *b, char *err, size_t errlen);
void mbs_battery_free(mbs_battery *b);

/* h0 (fixed step) or tol0 (adaptive) of a method on a problem section: the
 * section's override for the method, else its h0 times the [battery] h0_factor
 * of the method (1 when none matches), or its tol0. */
double mbs_battery_x0(const mbs_battery *b, const mbs_battery_problem *p, const char *method,
                      int adaptive);

/* One pair, in this process: the study, the classification and the check of a
 * failure.  method may carry parameters ("index3/genalpha:newton_maxit=3"; the
 * battery itself runs defaults).  Returns MBS_OK, or MBS_BAD_INPUT (unknown
 * problem/method) with err. */
int mbs_battery_pair(const mbs_battery *b, const char *problem, const char *method,
                     mbs_battery_result *r, char *err, size_t errlen);

/* Judge a result from its measurements: group states from the fitted orders
 * (an established fit is pass, low or off; limited and skip stay), for an
 * adaptive method the least-squares tolerance exponent over its usable levels
 * (mbs_battery_tol_exponent), the [expect] sections, and the outcome.  mbs_battery_pair calls it; the runner calls it
 * again on stored results, so a changed [expect] applies without running. */
void mbs_battery_judge(const mbs_battery *b, mbs_battery_result *r);

/* Adaptive methods: the least-squares slope of log err against log tol over the
 * levels of group g that ran and lie above the reference's stated accuracy and
 * round-off (at least 3; else p is NaN), with its 95% CI, the first and last of
 * those levels (1-based), err/tol over them and proportionality. */
void mbs_battery_tol_exponent(mbs_battery_result *r, int g);

const char *mbs_battery_outcome_name(mbs_battery_outcome o);
/* The outcome of a name, or -1. */
int mbs_battery_outcome_from_name(const char *name);
/* 1 when the outcome is allowed (everything but finding). */
int mbs_battery_ok(const mbs_battery_result *r);

/* JSON line of a result (malloc'd) and back (0 or -1). */
char *mbs_battery_result_json(const mbs_battery_result *r);
int mbs_battery_result_parse(const char *line, mbs_battery_result *r);

typedef struct mbs_battery_options {
    int jobs;              /* worker processes */
    int check_only;        /* only the [battery] check pairs */
    const char *const *problems; /* NULL-terminated filters (NULL: all) */
    size_t n_problems;
    const char *const *methods;  /* fnmatch patterns (NULL: all) */
    size_t n_methods;
    const char *outdir;    /* battery.jsonl (resumed when present) and battery.md */
    int rejudge;           /* run nothing: judge the stored pairs again */
} mbs_battery_options;

/* Run the selected pairs in worker processes (a pair already in
 * outdir/battery.jsonl is kept), then write outdir/battery.md and print the
 * summary to out.  Returns 0 (no finding), 1 (findings) or 2 (bad input, I/O). */
int mbs_battery_run(const mbs_battery *b, const mbs_battery_options *o, FILE *out);

/* The tables of a set of results (markdown): the method x problem matrix and the
 * list of every pair that is not a plain pass. */
void mbs_battery_markdown(const mbs_battery *b, const mbs_battery_result *r, size_t n,
                          FILE *out);

/* `mbsbench battery [FILE] [--check] [-p PROBLEM]... [-m PATTERN]... [-j N]
 * [--rejudge] [--out DIR]` (FILE: suites/battery.ini; DIR: results/battery[-check]). */
int mbs_cmd_battery(int argc, char **argv);

#endif
