/* Reports from a results directory (`mbsbench report RESULTS_DIR [--out DIR]
 * [--latex]`): gnuplot work-precision diagrams (error per group against CPU time
 * and against force evaluations, one curve per method, one panel per problem),
 * convergence plots (error against h with the fitted order and its confidence
 * interval, harness/fit.h), drift plots (|g|, |B v + g_t|, |E - E0|/|E0| against t
 * from the time series of `sweep --series`, with the fitted drift exponent), and
 * index.md with the tables (orders per group and tolerance exponents, tolerance
 * proportionality, digits at fixed cost, drift exponents: each comparing identical
 * runs; failures with reasons), the plots and the environment appendix;
 * --latex also writes tables.tex (booktabs).  PNG and SVG; the gnuplot script and
 * data files stay next to them. */
#ifndef MBS_REPORT_H
#define MBS_REPORT_H

#include "results.h"

/* Write the report; its tables use the error ek (final: at t_end; traj: along the
 * trajectory, refused with 2 when no record has one), its work-precision figures
 * show both when measured.  Returns 0, or 2 on unreadable results / gnuplot
 * failure. */
int mbs_report(const char *results_dir, const char *out_dir, int latex, mbs_err_kind ek);

int mbs_cmd_report(int argc, char **argv);

#endif
