/* `mbsbench summary DIR --brief`: the short verdict that ends `make run`. */
#ifndef MBS_BRIEF_H
#define MBS_BRIEF_H

#include <stdio.h>

/* Print it for the results directory dir (report: path printed last, or NULL).
 * Returns 0, or 2 when dir cannot be read. */
int mbs_brief_summary(const char *dir, const char *report, FILE *out);

/* `mbsbench summary DIR --format md|csv|latex`: one row per run (problem,
 * method, t_end, h, tol, status, errors, steps, f-evaluations, CPU median and
 * IQR) for papers.  Returns 0, or 2 on a bad format or an unreadable dir. */
int mbs_summary_table(const char *dir, const char *format, FILE *out);

#endif
