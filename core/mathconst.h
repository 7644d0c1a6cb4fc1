/* Mathematical constants for problem and method files.  Under -std=c11 (and
 * -D_POSIX_C_SOURCE, as this project compiles) <math.h> does not declare M_PI:
 * it needs _DEFAULT_SOURCE or _XOPEN_SOURCE before the first include, or GSL's
 * <gsl/gsl_math.h>.  MBS_PI works everywhere (problems/problem.h includes this
 * file, so every problem, in-tree or plugin, has it). */
#ifndef MBS_MATHCONST_H
#define MBS_MATHCONST_H

#define MBS_PI 3.14159265358979323846264338327950288
#define MBS_DEG (MBS_PI / 180.0) /* one degree in radians */

#endif
