/* Mechanisms as data: a mechanism file (INI, read with libinih) becomes an
 * ordinary problem in natural coordinates (García de Jalón and Bayo 1994
 * [garciadejalon1994]); docs/adding-a-problem.md describes the format.
 *
 *   mbsbench run -p fourbar ...                 a file mechanisms/fourbar.mech
 *   mbsbench run -p model:file=my.mech,N=4 ...  any file; N a parameter it declares
 *
 * The problem definitions are made at run time and kept in a process-wide,
 * append-only table (like the plugins' entries, harness/plugin.h): the shipped
 * files are registered at start-up, a `model:file=PATH` file when first named.
 * Each instance (mbs_problem_open) builds its model from the file's text with
 * its parameter values (pb->data) and frees it in teardown. */
#ifndef MBS_MECH_H
#define MBS_MECH_H

#include <stddef.h>

#include "problem.h"

/* Register every *.mech file of dir (its stem is the problem name).  Returns
 * the number of files that failed; the first failure's "FILE:LINE: message" is
 * in err.  A missing directory registers nothing and is no failure. */
int mbs_mech_register_dir(const char *dir, char *err, size_t errlen);
/* Register one file under name (NULL: its stem); *def (may be NULL) gets the
 * definition.  Registering the same file again returns its definition. */
int mbs_mech_register_file(const char *path, const char *name, const mbs_problem_def **def,
                           char *err, size_t errlen);
/* "file=PATH[,k=v,...]" (the part after "model:"): register PATH, open the
 * instance with the other parameters. */
int mbs_mech_open_spec(mbs_problem *pb, const char *rest, char *err, size_t errlen);
/* Parse and build a mechanism text with its default parameters, as registration
 * does, without registering it (the fuzzer, tests).  MBS_OK or the status with
 * "PATH:LINE: message". */
int mbs_mech_check_text(const char *text, size_t len, const char *path, char *err,
                        size_t errlen);
/* Remove every mechanism problem from the registry and free them (tests). */
void mbs_mech_unload_all(void);

/* The file of a mechanism problem, or NULL for any other problem. */
const char *mbs_mech_file(const mbs_problem_def *def);
/* One line on an open mechanism instance: how far the completion moved the given
 * initial values, the rank defect of G at t0. */
int mbs_mech_describe(const mbs_problem *pb, char *buf, size_t len);
#endif
