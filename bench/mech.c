/* Mechanism files against the hand-written problems (`make bench SECTIONS=mech`):
 * the CPU time of one evaluation of the force, of the sparse constraint Jacobian
 * and of gamma, for the five-bar and the chain of N = 1000 pendulums, each pair
 * timed in the same run.  The force of a file costs at most 1.5x the
 * hand-written one (target); G and gamma are for information (the hand-written
 * problems use other coordinates). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/run.h"
#include "../problems/problem.h"
#include "../problems/triplets.h"
#include "bench.h"

enum { WHAT_FORCE, WHAT_G, WHAT_GAMMA };

/* Minimum over 5 repeats of the mean time of one evaluation (ns). */
static double per_call(const char *spec, int what, long calls)
{
    mbs_problem pb;
    char err[512];
    if (mbs_problem_open(&pb, spec, err, sizeof err) != MBS_OK) {
        fprintf(stderr, "bench mech: %s\n", err);
        return NAN;
    }
    size_t nq = pb.nq, nv = pb.nv, nl = pb.nl;
    double *q = calloc(nq, sizeof *q), *v = calloc(nv, sizeof *v),
           *l = calloc(nl + 1, sizeof *l), *out = calloc(nv + nl + 1, sizeof *out);
    mbs_triplets T = {0};
    int have, ok = q && v && l && out &&
                   pb.def->initial(&pb, q, v, l, &have) == MBS_OK &&
                   (what != WHAT_G || pb.def->jacobian_sparse);
    double best = INFINITY;
    for (int r = 0; ok && r < 5; r++) {
        double c0 = mbs_cpu_seconds();
        for (long k = 0; k < calls; k++) {
            if (what == WHAT_FORCE)
                pb.def->force(&pb, 0.0, q, v, out);
            else if (what == WHAT_G)
                pb.def->jacobian_sparse(&pb, 0.0, q, &T);
            else
                pb.def->gamma(&pb, 0.0, q, v, out);
            q[0] += 1e-300 * out[0]; /* keep the calls */
        }
        best = fmin(best, (mbs_cpu_seconds() - c0) / (double)calls);
    }
    mbs_triplets_free(&T);
    free(q);
    free(v);
    free(l);
    free(out);
    mbs_problem_close(&pb);
    return ok ? 1e9 * best : NAN;
}

int mbs_bench_mech(FILE *out)
{
    static const struct {
        const char *hand, *file;
        long calls;
    } pairs[] = {{"fivebar", "fivebar-nc", 2000000},
                 {"chain:N=1000", "chain-nc:N=1000,alpha1=90,alpha2=90", 20000}};
    static const char *const what[] = {"force", "G (triplets)", "gamma"};
    int bad = 0;
    fprintf(out, "== mechanism files vs hand-written problems: ns per evaluation, min of 5 ==\n");
    fprintf(out, "%-40s %-13s %12s %12s %8s\n", "file / hand-written", "callback", "file",
            "hand", "ratio");
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        for (int w = 0; w < 3; w++) {
            double tf = per_call(pairs[i].file, w, pairs[i].calls / (w ? 10 : 1));
            double th = per_call(pairs[i].hand, w, pairs[i].calls / (w ? 10 : 1));
            fprintf(out, "%-40s %-13s %12.1f %12.1f %8.2f%s\n", pairs[i].file, what[w], tf, th,
                    tf / th, w == WHAT_FORCE ? " (target <= 1.5)" : "");
            bad |= !isfinite(tf) || !isfinite(th);
        }
    fprintf(out, "\n");
    return bad;
}
