/* Time to accuracy against the peers: for each problem and target
 * error (mixed error max_i |y_i - ref_i| / (1 + |ref_i|) over q and v at t_end
 * against the exact solution, the stored reference or the problem's independent
 * formulation at tol 1e-13), the
 * smallest CPU time at which each method reaches the target.  Adaptive methods
 * sweep rtol = atol = 10^(-3 - k/2), fixed-step methods h = span 10^(-2 - k/2);
 * the errors come from one measuring run per level, then the (up to) two
 * largest levels that reach a target are timed and the smallest time is
 * reported.  Every timed run, ours and the peers' alike, follows one rule: in
 * each of ROUNDS rounds over all methods and levels of a problem, one
 * mbs_bench_timed (bench.h: a warm-up run, then repetitions without observer
 * covering MBS_BENCH_MIN_CPU / ROUNDS of CPU, at least MIN_REPS, each on a
 * fresh workspace), so that the
 * repetitions of a level cover MBS_BENCH_MIN_CPU = 0.2 s in all, spread over
 * the problem's timing phase (a slow phase of the machine, which lasts longer
 * than one level's timing, then hits ours and the peer alike instead of one
 * of them); the minimum over all repetitions is reported.  Columns: method,
 * level, error, CPU time per run, ratio to the fastest peer of the row, timed
 * repetitions, median of the rounds' medians / min (the noise the minimum
 * sets aside), steps, f-evals, and per accepted step f-evals, iteration-matrix
 * Jacobians and LU factorisations (record counters).  Targets
 * on the pendulum and the chain: best implicit method of ours <= 0.15
 * IDA's time on the same formulation (index2/ or ggl/; the target line names
 * the row, a default, the order-9 rows radau:nsmin=5 or the rows with the
 * Jacobian at mid-step, jpoint=0.5), radau5's f-evals per
 * step <= 14 (pendulum), <= 20 (chain); andrews, crank and wheelset show the
 * ratio for information.  The table also goes to results/bench-<date>/peers.txt.
 * Nothing here is asserted. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../harness/reference.h"
#include "../harness/run.h"
#include "bench.h"

enum { ROUNDS = 3, MIN_REPS = 1, MAX_LEVELS = 21, MAX_TIMED = 2, NT = 2 };
enum { C_EXPL, C_IMPL, C_PEER };

typedef struct bmethod {
    const char *name;
    int cls;
} bmethod;

static const bmethod methods[] = {
    {"index1/rk8pd", C_EXPL},       {"index1/dopri5", C_EXPL},
    {"index2/bdf", C_IMPL},         {"ggl/bdf", C_IMPL},           {"index2/radau5", C_IMPL},
    {"ggl/radau5", C_IMPL},         {"index3/radau5", C_IMPL},     {"index3/genalpha", C_IMPL},
    {"index2/radau", C_IMPL},       {"ggl/radau", C_IMPL},
    {"index2/radau:nsmin=5", C_IMPL}, {"ggl/radau:nsmin=5", C_IMPL},
    {"index2/radau:jpoint=0.5", C_IMPL}, {"index2/radau:nsmin=5,jpoint=0.5", C_IMPL},
    {"index1/gsl-rk8pd", C_PEER},   {"index1/gsl-rkck", C_PEER},   {"index1/gsl-msadams", C_PEER},
    {"index1/gsl-msbdf", C_PEER},   {"index1/gsl-bsimp", C_PEER},  {"index1/cvode-bdf", C_PEER},
    {"index1/cvode-adams", C_PEER}, {"index1/arkode-dp5", C_PEER}, {"index1/ida", C_PEER},
    {"index2/ida", C_PEER},         {"ggl/ida", C_PEER},
};
enum { NM = sizeof methods / sizeof methods[0] };

typedef struct bproblem {
    const char *registry_name, *spec;
    double t_end;
    const char *note;
} bproblem;

/* chain: from the default straight horizontal start the 10-link chain is chaotic:
 * at t_end = 10 the minimal-coordinate formulation and index1/rk8pd, both at tol
 * 1e-13 (1e-14), agree to 7.8 (8.2) digits in q and 6.2 (6.6) over q, v, lambda
 * only, too few to score a 1e-9 target.  The row therefore uses start=angles
 * (alpha1 = 5 deg, regular motion), where the reference is well conditioned over
 * the t_end = 10. */
static const bproblem problems[] = {
    {"pendulum", "pendulum", 10.0, ""},
    {"chain", "chain:N=10,start=angles", 10.0, " (start=angles: regular motion)"},
    {"andrews", "andrews", NAN, ""},
    {"crank", "crank", NAN, ""},
    {"wheelset", "wheelset", NAN, ""},
};
static const double targets[NT] = {1e-6, 1e-9};

typedef struct level {
    double x, err, cpu; /* tol or h; error at t_end (NaN: failed); CPU of the measuring run */
} level;

/* A level to time (up to NT * MAX_TIMED per method) and its timings so far. */
typedef struct job {
    double x, err;
    unsigned targets;      /* bit t: a timed level of target t */
    double cpu;            /* min CPU per run over every round's repetitions */
    double med[ROUNDS];    /* each round's median */
    int rounds, reps;
    mbs_counters cnt;      /* of the timed runs (equal in every round) */
    char why[256];         /* why its timing failed ("": it did not) */
} job;

typedef struct mjobs {
    job j[NT * MAX_TIMED];
    int n;
} mjobs;

typedef struct outcome {
    int reached;
    double x, err, cpu;
    double median; /* median CPU per run over the repetitions of the timing reported */
    int reps;      /* its timed repetitions */
    mbs_counters cnt; /* of a timed run */
    double best_err;
    char why[256]; /* a level reached a target but its timing failed ("": none did) */
} outcome;

/* Reference (q | v at t_end) from the problem's independent formulation. */
static int independent_ref(const char *spec, double t_end, double *ref, size_t nref)
{
    mbs_problem pb;
    char err[256], what[256];
    if (mbs_problem_open(&pb, spec, err, sizeof err) != MBS_OK)
        return -1;
    int s = -1, hl = 0;
    size_t ny = mbs_ny(&pb);
    if (pb.def->independent && ny <= nref) {
        double lam[1024];
        if (pb.nl <= 1024 &&
            pb.def->independent(&pb, t_end, 1e-13, ref, ref + pb.nq, lam, &hl, what,
                                sizeof what) == MBS_OK)
            s = 0;
    }
    mbs_problem_close(&pb);
    return s;
}

/* Mixed error max_i |y_i - ref_i| / (1 + |ref_i|) over q and v of one measuring run
 * at level x (record field err_mixed_qv): components of size 1e3 (wheelset,
 * crank) are measured relative to their size. */
static double measure(const char *spec, const char *method, int fixed, double x, double t_end,
                      const double *ref, double *cpu)
{
    mbs_run_spec rs = {.problem = spec, .method = method, .h = fixed ? x : NAN,
                       .tol = fixed ? NAN : x, .t_end = t_end, .repeat = 0, .measure = 1,
                       .max_cpu = 1.0};
    mbs_record r;
    char err[512];
    double c0 = mbs_cpu_seconds();
    if (mbs_run(&rs, &r, err, sizeof err) != MBS_OK) {
        *cpu = mbs_cpu_seconds() - c0;
        return NAN;
    }
    *cpu = mbs_cpu_seconds() - c0;
    double e = NAN;
    if (r.status == MBS_OK) {
        if (r.have_ref) {
            e = r.err_mixed_qv;
        } else if (ref) {
            e = 0.0;
            for (size_t i = 0; i < r.nq + r.nv; i++)
                e = fmax(e, fabs(r.final[i] - ref[i]) / (1.0 + fabs(ref[i])));
        }
    }
    mbs_record_free(&r);
    return e;
}

static void run_method(const bproblem *bp, const mbs_method_def *m, const char *spec,
                       double t_end, double span, const double *ref, outcome oc[NT], mjobs *jb)
{
    int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
    level lv[MAX_LEVELS];
    int nl = 0, below = 0, stall = 0, nfail = 0;
    double prev_best = INFINITY;
    for (int t = 0; t < NT; t++)
        oc[t] = (outcome){.reached = 0, .best_err = INFINITY};
    /* Failed levels (loose tolerances can fail, e.g. CVODE's corrector on the
     * chain at 1e-3) are skipped (four in a row end the sweep); the sweep
     * stops once two levels reach the tightest target, a measuring run takes
     * more than 0.5 s, or the error has not halved over three levels
     * (round-off or reference plateau). */
    for (int k = 0; k < MAX_LEVELS; k++) {
        double x = fixed ? span * pow(10.0, -2.0 - 0.5 * k) : pow(10.0, -3.0 - 0.5 * k);
        double cpu;
        double e = measure(bp->spec, spec, fixed, x, t_end, ref, &cpu);
        lv[nl++] = (level){x, e, cpu};
        if (!isnan(e))
            for (int t = 0; t < NT; t++)
                oc[t].best_err = fmin(oc[t].best_err, e);
        if (isnan(e)) {
            if (++nfail >= 4)
                break;
            continue;
        }
        nfail = 0;
        if (cpu > 0.5 || (e <= targets[NT - 1] && ++below >= MAX_TIMED))
            break;
        /* plateau: three levels in a row without halving the best error, once
         * the error is within 100x of the tightest target (round-off or
         * reference plateau).  A plateau far above it is not final: on the
         * crank the Radau methods sit at 5.7e-4 from tol 1e-3 to 1e-7 (the
         * rod's velocity modes, damped until the steps resolve them) and reach
         * 1e-9 at tol 1e-12. */
        if (e < 0.5 * prev_best) {
            prev_best = e;
            stall = 0;
        } else if (isfinite(prev_best) && e <= 100.0 * targets[NT - 1] && ++stall >= 3) {
            break;
        }
    }
    /* Time the (up to) MAX_TIMED largest levels reaching each target; a further
     * level only when the first's measuring run took less than 0.05 s and the
     * further one's less than twice as long.  The timings are made later, in
     * rounds over all methods (time_round). */
    jb->n = 0;
    for (int t = 0; t < NT; t++) {
        int timed = 0;
        double first_cpu = 0.0;
        for (int i = 0; i < nl && timed < MAX_TIMED; i++) {
            if (!(lv[i].err <= targets[t]))
                continue;
            if (timed == 0)
                first_cpu = lv[i].cpu;
            else if (first_cpu > 0.05 || lv[i].cpu > 2.0 * first_cpu)
                break;
            timed++;
            int k = 0;
            while (k < jb->n && jb->j[k].x != lv[i].x)
                k++;
            if (k == jb->n)
                jb->j[jb->n++] = (job){.x = lv[i].x, .err = lv[i].err, .cpu = INFINITY};
            jb->j[k].targets |= 1u << t;
        }
    }
}

/* One round of timings of a method's levels (mbs_bench_timed, MBS_BENCH_MIN_CPU
 * / ROUNDS of repetitions each). */
static void time_round(const bproblem *bp, const mbs_method_def *m, const char *spec,
                       double t_end, mjobs *jb)
{
    int fixed = (m->flags & MBS_M_FIXED_STEP) != 0;
    for (int k = 0; k < jb->n; k++) {
        job *j = &jb->j[k];
        if (j->why[0])
            continue;
        mbs_bench_timing tm;
        if (mbs_bench_timed(bp->spec, spec, fixed ? j->x : NAN, fixed ? NAN : j->x, t_end,
                            MBS_BENCH_MIN_CPU / ROUNDS, MIN_REPS, &tm) != 0) {
            snprintf(j->why, sizeof j->why, "tol|h %.1e: %.200s", j->x, tm.why);
            continue;
        }
        if (j->rounds > 0 && memcmp(&tm.cnt, &j->cnt, sizeof tm.cnt) != 0) {
            snprintf(j->why, sizeof j->why, "tol|h %.1e: counters differ between rounds", j->x);
            continue;
        }
        j->cnt = tm.cnt;
        j->cpu = fmin(j->cpu, tm.cpu_min);
        j->med[j->rounds++] = tm.cpu_median;
        j->reps += tm.reps;
    }
}

/* The outcome of target t from the timed levels: the fastest. */
static void pick(const mjobs *jb, int t, outcome *o)
{
    o->cpu = INFINITY;
    for (int k = 0; k < jb->n; k++) {
        const job *j = &jb->j[k];
        if (!(j->targets & (1u << t)))
            continue;
        if (j->why[0]) {
            snprintf(o->why, sizeof o->why, "%s", j->why);
            continue;
        }
        if (j->rounds == ROUNDS && j->cpu < o->cpu) {
            double med[ROUNDS];
            memcpy(med, j->med, sizeof med);
            qsort(med, ROUNDS, sizeof med[0], mbs_bench_cmp_double);
            *o = (outcome){.reached = 1, .x = j->x, .err = j->err, .cpu = j->cpu,
                           .median = med[ROUNDS / 2], .reps = j->reps, .cnt = j->cnt,
                           .best_err = o->best_err};
        }
    }
}

/* Best time of our methods of class cls whose name starts with prefix (NULL: any). */
static double best_ours(outcome oc[NM][NT], const int have[NM], int cls, const char *prefix,
                        int t, int *which)
{
    double best = INFINITY;
    for (int i = 0; i < NM; i++)
        if (have[i] && methods[i].cls == cls && oc[i][t].reached &&
            (!prefix || strncmp(methods[i].name, prefix, strlen(prefix)) == 0) &&
            oc[i][t].cpu < best) {
            best = oc[i][t].cpu;
            *which = i;
        }
    return best;
}

static int find_method(const char *name)
{
    for (int i = 0; i < NM; i++)
        if (strcmp(methods[i].name, name) == 0)
            return i;
    return -1;
}

static void bench_problem(const mbs_tee *out, const bproblem *bp)
{
    if (!mbs_problem_find(bp->registry_name)) {
        mbs_tee_printf(out, "-- %s: not registered, skipped\n\n", bp->registry_name);
        return;
    }
    mbs_problem pb;
    char err[256];
    if (mbs_problem_open(&pb, bp->spec, err, sizeof err) != MBS_OK) {
        mbs_tee_printf(out, "-- %s: %s\n\n", bp->spec, err);
        return;
    }
    double t_end = isnan(bp->t_end) ? pb.t_end : bp->t_end, span = t_end - pb.t0;
    int exact = (pb.flags & MBS_PB_EXACT) != 0;
    double yref[4096];
    int stored = mbs_ny(&pb) <= 4096 && mbs_reference_find(&pb, t_end, yref, NULL, 0);
    int indep = pb.def->independent != NULL;
    mbs_problem_close(&pb);
    if (!exact && !stored && !indep) {
        mbs_tee_printf(out, "-- %s, t_end = %g: no exact solution, stored reference or independent "
                  "formulation, skipped\n\n",
             bp->spec, t_end);
        return;
    }
    double ref[4096];
    const double *refp = NULL;
    const char *refkind = exact ? "exact solution" : "stored reference";
    if (!exact && independent_ref(bp->spec, t_end, ref, sizeof ref / sizeof ref[0]) == 0) {
        refp = ref;
        refkind = "stored reference, else independent formulation at tol 1e-13";
    }
    outcome oc[NM][NT];
    mjobs jobs[NM];
    const mbs_method_def *defs[NM];
    int have[NM];
    for (int i = 0; i < NM; i++) {
        /* a row may carry parameters ("index2/radau:nsmin=5"): the registry
         * knows the method by the name before the colon */
        char base[64];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(methods[i].name, ":"), methods[i].name);
        const mbs_method_def *m = defs[i] = mbs_method_find(base);
        have[i] = m != NULL;
        if (m) {
            double c0 = mbs_cpu_seconds();
            run_method(bp, m, methods[i].name, t_end, span, refp, oc[i], &jobs[i]);
            if (isatty(STDERR_FILENO)) /* progress on a terminal only (logs stay clean) */
                fprintf(stderr, "bench peers: %-12s %-20s %6.2f s\n", bp->spec, methods[i].name,
                        mbs_cpu_seconds() - c0);
        }
    }
    for (int r = 0; r < ROUNDS; r++) {
        double c0 = mbs_cpu_seconds();
        for (int i = 0; i < NM; i++)
            if (have[i])
                time_round(bp, defs[i], methods[i].name, t_end, &jobs[i]);
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "bench peers: %-12s timing round %d of %d %6.2f s\n", bp->spec, r + 1,
                    ROUNDS, mbs_cpu_seconds() - c0);
    }
    for (int i = 0; i < NM; i++)
        for (int t = 0; t < NT && have[i]; t++)
            pick(&jobs[i], t, &oc[i][t]);
    for (int t = 0; t < NT; t++) {
        double fastest_peer = INFINITY;
        for (int i = 0; i < NM; i++)
            if (have[i] && methods[i].cls == C_PEER && oc[i][t].reached)
                fastest_peer = fmin(fastest_peer, oc[i][t].cpu);
        mbs_tee_printf(out, "-- %s, t_end = %g%s, target %.0e (mixed error over q, v; %s) --\n",
             bp->spec, t_end, bp->note, targets[t], refkind);
        mbs_tee_printf(out, "%-20s %-5s %9s %10s %11s %8s %5s %7s %8s %9s %6s %6s %6s\n",
                       "method", "class", "tol|h", "err", "cpu [s]", "/peer", "reps", "med/min",
                       "steps", "f_evals", "f/st", "jac/st", "LU/st");
        for (int i = 0; i < NM; i++) {
            if (!have[i])
                continue;
            const outcome *o = &oc[i][t];
            const char *cl = methods[i].cls == C_PEER ? "peer" : "ours";
            double ns = o->cnt.steps > 0 ? (double)o->cnt.steps : NAN;
            char ratio[16] = "-";
            if (isfinite(fastest_peer))
                snprintf(ratio, sizeof ratio, "%.2f", o->cpu / fastest_peer);
            if (o->reached)
                mbs_tee_printf(out,
                               "%-20s %-5s %9.1e %10.2e %11.4e %8s %5d %7.3f %8ld %9ld %6.1f "
                               "%6.2f %6.2f\n",
                               methods[i].name, cl, o->x, o->err, o->cpu, ratio, o->reps,
                               o->median / o->cpu, o->cnt.steps, o->cnt.f_evals,
                               (double)o->cnt.f_evals / ns, (double)o->cnt.jacobians / ns,
                               (double)o->cnt.factorizations / ns);
            else if (o->why[0])
                mbs_tee_printf(out, "%-20s %-5s timing failed: %.200s\n", methods[i].name, cl,
                               o->why);
            else if (isfinite(o->best_err))
                mbs_tee_printf(out, "%-20s %-5s not reached (best error %.2e)\n", methods[i].name, cl,
                     o->best_err);
            else
                mbs_tee_printf(out, "%-20s %-5s not reached (failed or unsupported at every tolerance)\n",
                     methods[i].name, cl);
        }
        /* the targets (ratios in this run) */
        int we = -1, wi = -1, pi = find_method("index1/gsl-rk8pd");
        double be = best_ours(oc, have, C_EXPL, NULL, t, &we);
        if (strcmp(bp->registry_name, "pendulum") == 0 && pi >= 0 && have[pi] &&
            oc[pi][t].reached && we >= 0)
            mbs_tee_printf(out, "target explicit: %s / index1/gsl-rk8pd = %.2f (<= 1.0: %s)\n",
                 methods[we].name, be / oc[pi][t].cpu, be <= oc[pi][t].cpu ? "met" : "MISSED");
        static const char *forms[] = {"index2/", "ggl/"};
        double best_ratio = INFINITY;
        const char *bname = NULL, *pname = NULL;
        for (int f = 0; f < 2; f++) {
            char idaname[32];
            snprintf(idaname, sizeof idaname, "%sida", forms[f]);
            int ii = find_method(idaname);
            double bi = best_ours(oc, have, C_IMPL, forms[f], t, &wi);
            if (ii >= 0 && have[ii] && oc[ii][t].reached && isfinite(bi) &&
                bi / oc[ii][t].cpu < best_ratio) {
                best_ratio = bi / oc[ii][t].cpu;
                bname = methods[wi].name;
                pname = methods[ii].name;
            }
        }
        int ours_impl = -1, ida_any = 0;
        double bo = best_ours(oc, have, C_IMPL, NULL, t, &ours_impl);
        for (int f = 0; f < 2; f++) {
            char idaname[32];
            snprintf(idaname, sizeof idaname, "%sida", forms[f]);
            int ii = find_method(idaname);
            ida_any |= ii >= 0 && have[ii] && oc[ii][t].reached;
        }
        /* <= 0.15 on the pendulum and the chain; the other rows for
         * information */
        int scored = strcmp(bp->registry_name, "pendulum") == 0 ||
                     strcmp(bp->registry_name, "chain") == 0;
        if (!scored && bname)
            mbs_tee_printf(out, "implicit vs IDA (information): %s / %s = %.2f\n", bname, pname,
                 best_ratio);
        else if (!scored)
            ;
        else if (!bname && !ida_any && ours_impl >= 0)
            mbs_tee_printf(out, "target implicit: met: %s reaches %.0e in %.3g s, index2/ida and ggl/ida "
                      "do not (failed or unsupported)\n",
                 methods[ours_impl].name, targets[t], bo);
        else if (bname)
            mbs_tee_printf(out, "target implicit: %s / %s = %.2f (<= 0.15: %s)\n", bname, pname,
                 best_ratio, best_ratio <= 0.15 ? "met" : "MISSED");
        else
            mbs_tee_printf(out, "target implicit: no index-2/GGL pair of ours and IDA reached %.0e\n",
                 targets[t]);
        /* force evaluations per step of radau5 (index2, ggl) */
        static const char *const rad[] = {"index2/radau5", "ggl/radau5"};
        double fmax_step = scored ? (strcmp(bp->registry_name, "pendulum") == 0 ? 14.0 : 20.0)
                                  : NAN;
        for (int r = 0; r < 2 && scored; r++) {
            int ri = find_method(rad[r]);
            if (ri < 0 || !have[ri] || !oc[ri][t].reached || oc[ri][t].cnt.steps <= 0)
                continue;
            double fs = (double)oc[ri][t].cnt.f_evals / (double)oc[ri][t].cnt.steps;
            mbs_tee_printf(out, "target f-evals/step: %s %.1f (<= %.0f: %s)\n", rad[r], fs, fmax_step,
                 fs <= fmax_step ? "met" : "MISSED");
        }
        mbs_tee_printf(out, "\n");
    }
}

int mbs_bench_peers(FILE *out)
{
    char path[96];
    mbs_tee o = {.out = out, .file = mbs_bench_results_file("peers.txt", path, sizeof path)};
    mbs_tee_printf(&o, "== time to accuracy vs peers over a tolerance sweep 10^(-3-k/2): CPU per "
                       "run, the min over %d rounds over the methods, each a warm-up and "
                       "repetitions covering >= %.2g s CPU (>= %d runs) ==\n",
                   ROUNDS, MBS_BENCH_MIN_CPU / ROUNDS, MIN_REPS);
    for (size_t p = 0; p < sizeof problems / sizeof problems[0]; p++)
        bench_problem(&o, &problems[p]);
    if (o.file) {
        fclose(o.file);
        fprintf(out, "(table written to %s)\n\n", path);
    }
    return 0;
}
