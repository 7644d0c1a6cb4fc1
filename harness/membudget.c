/* The memory budget of a run (run.h): the memory available and the
 * estimated dense workspace of a method on a problem.  Split from run.c
 *. */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "../methods/formulations/index1.h"
/* ---- memory budget ------------------------------------------------ */

double mbs_memory_available(void)
{
    double avail = INFINITY;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        double kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
                avail = kb * 1024.0;
        fclose(f);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        avail = fmin(avail, (double)rl.rlim_cur);
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        avail = fmin(avail, (double)rl.rlim_cur);
    return avail;
}

void mbs_human_bytes(double b, char *buf, size_t len)
{
    if (b >= 1e9)
        snprintf(buf, len, "%.3g GB", b / 1e9);
    else if (b >= 1e6)
        snprintf(buf, len, "%.3g MB", b / 1e6);
    else
        snprintf(buf, len, "%.3g kB", b / 1e3);
}

/* A lower bound of the dense workspace: one n x n matrix of doubles, n = n_v + n_l
 * (the KKT matrix [M B^T; B 0] of the index-1 solves, the dense Newton or
 * projection systems) or n = n_y for the `full` iteration matrices of the implicit
 * DAE integrators (methods/formulations/dae_form.h; also for linsol=auto unless that picks
 * CHOLMOD).  Sparse backends (linsol=umfpack, cholmod) and the O(n) tree recursions (recursive/, dca/ on problems with
 * native triplet callbacks) have no dense path.  The SUNDIALS peers hold SUNDIALS'
 * dense Newton matrix (n >= n_q + n_v) unless they run on KLU (linsol=klu). */
double mbs_run_memory_estimate(const mbs_method_def *m, const mbs_params *mp,
                               const mbs_problem *pb, char *what, size_t whatlen,
                               char *remedy, size_t remedylen)
{
    char ls[32] = "";
    int ip = mbs_params_find(mp, "linsol");
    const char *choices = ip >= 0 ? mp->defs[ip].choices : NULL;
    if (choices)
        mbs_choice_name(choices, (int)mp->val[ip], ls, sizeof ls);
    what[0] = remedy[0] = '\0';
    /* the SUNDIALS peers (their linsol offers klu): SUNDIALS' dense Newton matrix
     * of order >= n_q + n_v unless klu, whatever solves the index-1 systems;
     * auto takes klu on problems with triplet callbacks (H = I) that are not
     * small (methods/peers/peer_sundials.c) */
    if (choices && strstr(choices, "klu")) {
        if (strcmp(ls, "klu") == 0 ||
            (strcmp(ls, "auto") == 0 && pb->def->mass_sparse && pb->def->jacobian_sparse &&
             !pb->def->kinematic))
            return 0.0;
        double n = (double)(pb->nq + pb->nv);
        snprintf(what, whatlen, "dense %.0f x %.0f Newton matrix", n, n);
        snprintf(remedy, remedylen, "use %s:linsol=klu", m->name);
        return 8.0 * n * n;
    }
    if (strcmp(ls, "umfpack") == 0 || strcmp(ls, "cholmod") == 0)
        return 0.0;
    /* linsol=auto of radau5/bdf (mbs_dae_form_auto_structured): CHOLMOD for
     * problems with triplet callbacks and force derivatives (when these vanish),
     * else the full matrices */
    int autols = strcmp(ls, "auto") == 0;
    if (autols && pb->def->mass_sparse && pb->def->jacobian_sparse && !pb->def->kinematic &&
        pb->def->force_q && pb->def->force_v)
        return 0.0;
    if (strncmp(m->name, "recursive/", 10) == 0)
        return 0.0;
    if (strncmp(m->name, "dca/", 4) == 0 && pb->def->mass_sparse && pb->def->jacobian_sparse &&
        !pb->def->kinematic)
        return 0.0;
    double n = (double)(pb->nv + pb->nl);
    const char *mat = "KKT";
    if (strcmp(ls, "full") == 0 || autols) {
        n = (double)mbs_ny(pb);
        mat = "iteration";
    }
    snprintf(what, whatlen, "dense %.0f x %.0f %s matrix", n, n, mat);
    if (choices && strstr(choices, "umfpack"))
        snprintf(remedy, remedylen, "use %s:linsol=umfpack (or linsol=cholmod)", m->name);
    else
        snprintf(remedy, remedylen,
                 "use a sparse method, e.g. index1/dopri5:linsol=umfpack or "
                 "index1/rk4:linsol=cholmod");
    return 8.0 * n * n;
}

