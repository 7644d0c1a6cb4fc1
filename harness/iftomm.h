/* The IFToMM benchmark's scoring of a results directory (González, Dopico,
 * Lugrís and Cuadrado 2006 [gonzalez2006benchmarking]): for each problem (and
 * t_end) and precision class (high: IFToMM error <= 1e-3, low: <= 1e-1, on the
 * relative reading err_rel; harness/traj.h, reproductions/iftomm.md), each
 * method's cheapest run that ended ok and meets the class (the least median CPU
 * time), the fastest of them marked, as problem | class | method | setting |
 * accuracy (rel) | abs | CPU time | steps | reference | machine; a class no run
 * meets gets one row with the run of least error.  Then the IFToMM form (the
 * fastest run per problem and class: problem | class | method | accuracy | CPU
 * time | machine), the problems without an IFToMM error, and every failed run
 * with its status, time and reason. */
#ifndef MBS_IFTOMM_H
#define MBS_IFTOMM_H

#include <stdio.h>

/* `summary DIR --format iftomm`: 0, or 2 with a message on stderr. */
int mbs_iftomm_table(const char *dir, FILE *out);

/* `reproduce iftomm`: the same tables on out and, with page (non-NULL), the page
 * page/iftomm.md and iftomm.html with the work-precision figures (IFToMM error,
 * relative and absolute, against the median CPU time, one panel per problem;
 * wp-iftomm-rel.png/.svg, wp-iftomm-abs.png/.svg, iftomm.gp, data/).  Returns 0,
 * 1 when runs of the suite have no record or a failed run has no reason, 2 on
 * unreadable results or a page that cannot be written. */
int mbs_iftomm_reproduce(const char *dir, const char *page, FILE *out);

#endif
