/* The IFToMM benchmark's scoring of a results directory (González, Dopico,
 * Lugrís and Cuadrado 2006 [gonzalez2006benchmarking]): for each problem and
 * precision class (high: IFToMM error <= 1e-3, low: <= 1e-1; harness/traj.h),
 * each method's cheapest run that meets the class (the least median CPU time),
 * and the fastest of them, as problem | class | method | accuracy | CPU time |
 * steps | machine. */
#ifndef MBS_IFTOMM_H
#define MBS_IFTOMM_H

#include <stdio.h>

/* `summary DIR --format iftomm`: 0, or 2 with a message on stderr. */
int mbs_iftomm_table(const char *dir, FILE *out);

#endif
