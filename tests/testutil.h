/* Shared helpers of the Check test suites. */
#ifndef MBS_TESTUTIL_H
#define MBS_TESTUTIL_H

#include <check.h>

#include "../harness/run.h"

#define MBS_SUITE(ctor) Suite *ctor(void);
#include "suites.def"
#undef MBS_SUITE

/* Run one spec that must be valid input; fails the test otherwise. */
void mbs_test_run(const char *problem, const char *method, double h, double tol, double t_end,
                  mbs_record *rec);

/* The standard fixed-step study (mbsbench converge: levels h0 .. h0/2^(levels-1)
 * at the problem's t_end): every level runs, and q, v and lambda each establish an
 * order within tol of p over all levels.  Returns the finest level's q error. */
double mbs_test_study_order(const char *problem, const char *method, double h0, int levels,
                            double p, double tol);

/* Run the mbsbench executable (path from $MBSBENCH, default bin/mbsbench) with
 * the given argument string through /bin/sh; returns the exit status and the
 * first line of stderr (or stdout when stderr is empty) in out. */
int mbs_test_cli(const char *args, char *out, size_t outlen);

/* As mbs_test_cli, also giving the number of lines written to stderr. */
int mbs_test_cli_lines(const char *args, char *out, size_t outlen, int *stderr_lines);

/* The same with the whole stderr and stdout (malloc'ed, never NULL when asked
 * for; either pointer may be NULL) and the exit status. */
int mbs_test_cli_text(const char *args, char **err_text, char **out_text);

/* Scratch files: write a text file (fails the test on error); a new directory
 * /tmp/mbs-test-XXXXXX (malloc'ed path); rm -rf of a directory. */
void mbs_test_write_text(const char *path, const char *text);
char *mbs_test_tmpdir(void);
void mbs_test_remove_tree(const char *dir);

/* Number of lines in a text. */
int mbs_count_lines(const char *s);

#endif
