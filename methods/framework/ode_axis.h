/* The ODE axis of the method registry: formulations that turn (t, q, v) into
 * accelerations v' (and, where they yield them, multipliers lambda), each run by
 * every explicit integrator (methods/integrators/explicit/).
 *
 * A formulation is an `mbs_accel_def` (the evaluator) plus one
 * `mbs_ode_formulation` (name, summary, citation, flags, parameters) defined in
 * its own file; methods/registry.def names it with MBS_ODE_FORMULATION(symbol),
 * and methods/registry.c forms FORMULATION/INTEGRATOR for every explicit
 * integrator: the index-1 KKT solve, Baumgarte, the null-space methods (QR, SVD,
 * ...), Udwadia-Kalaba, coordinate partitioning, the recursive O(N) formalism,
 * DCA.  The integrated state is (q, v); lambda is taken from the evaluation at
 * each accepted point.  An optional post_step hook runs after every accepted step
 * (projection methods, coordinate partitioning) and may change q and v. */
#ifndef MBS_ODE_AXIS_H
#define MBS_ODE_AXIS_H

#include <stddef.h>

#include "method.h"

typedef struct mbs_accel_def {
    const char *name;   /* formulation prefix, e.g. "index1" */
    /* Workspace for ctx->pb with the method's parameters; MBS_UNSUPPORTED with
     * a reason in ctx when the formulation cannot handle the problem. */
    int (*alloc)(void **ws, mbs_ctx *ctx, const mbs_params *params);
    /* v' (and lambda, n_lambda values; may be NULL) at (t, q, v).  Methods that
     * do not yield multipliers write NaN. */
    int (*eval)(void *ws, mbs_ctx *ctx, double t, const double *q, const double *v,
                double *vdot, double *lambda);
    /* Optional: called after each accepted step; may modify q and v in place. */
    int (*post_step)(void *ws, mbs_ctx *ctx, double t, double *q, double *v);
    void (*free_ws)(void *ws);
    /* Optional: called at the start of every integrate() with the initial state
     * (reset per-run data such as a coordinate partition or diagnostics). */
    int (*start)(void *ws, mbs_ctx *ctx, double t0, const double *q, const double *v);
    /* Optional: called at the end of every integrate(), on every exit (report
     * linear-solver statistics: mbs_ctx_report_linsol, mbs_index1_report). */
    void (*finish)(void *ws, mbs_ctx *ctx);
} mbs_accel_def;

/* An ODE formulation as the registry composes it: FORMULATION/INTEGRATOR is
 * named "name/integrator", summarised "integrator summary, summary", cited
 * "citation; integrator citation", with the formulation's flags and
 * parameters, orders {p, p, lambda ? p : 0} for an integrator of order p. */
typedef struct mbs_ode_formulation {
    const char *name;           /* "index1" */
    const mbs_accel_def *accel;
    const char *summary, *citation;
    unsigned flags;             /* MBS_M_* flags of the formulation */
    int lambda;                 /* 1: yields the multipliers */
    const mbs_param_def *params;
    size_t n_params;
} mbs_ode_formulation;

/* The ODE formulations of methods/registry.def, in its order. */
size_t mbs_ode_formulation_count(void);
const mbs_ode_formulation *mbs_ode_formulation_at(size_t i);

#endif
