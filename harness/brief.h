/* `mbsbench summary DIR --brief`: the short verdict that ends `make run`. */
#ifndef MBS_BRIEF_H
#define MBS_BRIEF_H

#include <stdio.h>

#include "results.h"

/* Print it for the results directory dir (report: path printed last, or NULL),
 * with the mixed error at t_end (MBS_ERR_FINAL, 10^-mescd) or along the trajectory
 * (MBS_ERR_TRAJ).  Returns 0, or 2 when dir cannot be read or (traj) no record
 * has trajectory errors. */
int mbs_brief_summary(const char *dir, const char *report, mbs_err_kind ek, FILE *out);

/* `mbsbench summary DIR --format md|csv|latex`: one row per run (problem,
 * method, t_end, h, tol, status, errors, steps, f-evaluations, CPU median and
 * IQR) for papers.  kinds: the error columns, MBS_SUMMARY_FINAL (err_q, err_v,
 * err_lambda at t_end), MBS_SUMMARY_TRAJ (traj_err_q, ...: along the trajectory)
 * or both.  Returns 0, or 2 on a bad format, an unreadable dir or (traj only) no
 * record with trajectory errors. */
enum { MBS_SUMMARY_FINAL = 1, MBS_SUMMARY_TRAJ = 2 };
int mbs_summary_table(const char *dir, const char *format, int kinds, FILE *out);

#endif
