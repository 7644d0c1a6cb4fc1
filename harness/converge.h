/* Refinement studies: fixed-step methods over h0, h0/r, ... and adaptive methods
 * over tolerances tol0, tol0/r, ... (tolerance proportionality). */
#ifndef MBS_CONVERGE_H
#define MBS_CONVERGE_H

#include "fit.h"
#include "run.h"

enum { MBS_MAX_LEVELS = 40 };

typedef struct mbs_converge {
    int adaptive;                     /* levels are tolerances */
    int levels;
    double x[MBS_MAX_LEVELS];         /* h or tol per level */
    mbs_record rec[MBS_MAX_LEVELS];
    mbs_order_fit fit[3];             /* q, v, lambda */
} mbs_converge;

/* Run the study; base->h / base->tol are ignored (x0 is h0 or tol0).
 * Returns MBS_OK or MBS_BAD_INPUT (message in err).  Free with
 * mbs_converge_free. */
int mbs_converge_run(const mbs_run_spec *base, double x0, int levels, double ratio,
                     mbs_converge *out, char *err, size_t errlen);
void mbs_converge_free(mbs_converge *c);
void mbs_converge_print(const mbs_converge *c, FILE *f);
char *mbs_converge_json(const mbs_converge *c);

#endif
