/* Paper reproductions as executable checks (`mbsbench reproduce`).
 *
 * A reproduction is a suite file plus reproductions/NAME.expect (INI):
 *
 *   [reproduction]
 *   title    = generalized-alpha on the index-3 pendulum
 *   citation = [arnold2016dae], Example 8, Fig. 10
 *   suite    = suites/genalpha-fig10.suite
 *
 *   [quantity x0=0 h=0.02]           ; one section per published number
 *   run       = pendulum index3/genalpha h=0.02 t_end=1
 *   field     = err_max.lambda       ; a record field (docs/results-schema.md), or
 *                                    ; order.q|order.v|order.lambda: observed order
 *                                    ; over the h levels of the run's series, or
 *   extract   = min_q:1              ; a registered extractor (below) instead of field
 *   published = 4.0e-3               ; only a number the source printed
 *   read      = read off the log-scale plot (one-digit precision)
 *   rtol      = 0.3                  ; within when |ours / published - 1| <= rtol
 *   atol      = 0.5                  ; or when |ours - published| <= atol
 *
 * A value the source did not print (derived from a printed one, from a formula or
 * from a qualitative claim) is not a published value: it is a bound with its rule,
 * printed in its own column, and the verdict (relation, rtol, atol) uses it instead
 * of published; published may then be omitted ("-" in the table):
 *   bound     = 139.5                ; the value judged against
 *   rule      = 1.5 x published: within 1.5 times the accepted steps of RADAU5
 * Quantity names have at most 39 characters (the INI parser cuts section names).
 *
 * Optional keys of a quantity (backward compatible; absent = the behaviour above):
 *   with      = RUN                  ; further runs (repeatable, up to 8), combined by
 *   combine   = ratio | spread       ; ratio: value(run) / value(with), one with;
 *                                    ; spread: (max - min) / |mean| over run and the withs
 *   relation  = < | >                ; one-sided: within when ours < (>) published
 *                                    ; (instead of rtol/atol)
 *   tol_factors = 0.9 0.95 1 1.05 1.1  ; up to 9 factors: the value is the geometric mean
 *                                    ; of the values with tol (h) of run and with runs
 *                                    ; multiplied by each factor (the suite must hold
 *                                    ; those runs); for quantities that scatter under
 *                                    ; small changes of TOL (not with combine = spread)
 *   verdict   = info                 ; printed with its published number, never judged
 *                                    ; (e.g. CPU times of another machine); published
 *                                    ; may then be omitted (a measured comparison)
 *
 * `run` names the record: problem spec, method spec, h=H or tol=T (equal to 1e-9
 * relative), optional
 * atol=A (runs whose grid sets atol, harness/sweep.h) and t_end=T (all as written in
 * the suite).  Extractors compute a value the record does
 * not hold by integrating the named run again with their own observer:
 *   min_q:I      minimum of coordinate q_I over the accepted steps
 *   argmin_q:I   the time of that minimum
 *   max_g:LO-HI  maximum of |g_r| over constraint rows LO..HI (0-based, inclusive) at
 *                the initial values and every accepted step (e.g. the joint rows of a
 *                problem whose other rows are Euler-parameter normalisations)
 *   relerr_q:I   |q_I - ref_I| / |ref_I| at t_end: q_I from the record, ref from the
 *                stored reference of the run's problem (no integration; fails when
 *                there is none)
 *   err_v:LO-HI  max |v_i - ref_i| over velocity components LO..HI at t_end, from the
 *                record and the stored reference as relerr_q
 *   min_h:T0-T1  the smallest accepted step that overlaps [T0, T1] (integrates again;
 *                the last step, which may be shortened to land on t_end, is excluded)
 * A reproduction whose methods or problems are not registered is not listed. */
#ifndef MBS_REPRODUCE_H
#define MBS_REPRODUCE_H

#include <stdio.h>

/* CLI: `mbsbench reproduce --list | --all | NAME [--results DIR] [--out DIR]
 * [--dir reproductions]`.  Exit 0 when every quantity is within tolerance, 1 when
 * one is not (or a run failed), 2 on bad input, including --results DIR whose
 * meta.json names another suite or grid (suite_digest) than the reproduction's. */
int mbs_cmd_reproduce(int argc, char **argv);

/* Check a reproduction against an existing results directory (no sweep); prints
 * the table to out.  Returns 0, 1 (outside tolerance) or 2 (bad input). */
int mbs_reproduce_check(const char *expect_path, const char *results_dir, FILE *out);

#endif
