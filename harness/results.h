/* Reading a results directory (meta.json + runs.jsonl, docs/results-schema.md) for the
 * report, reproduction, regression and history commands. */
#ifndef MBS_RESULTS_H
#define MBS_RESULTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "fit.h"

typedef struct mbs_results {
    json_t *meta;    /* meta.json (NULL when absent) */
    json_t **recs;   /* records sorted by run index (owned references) */
    size_t n;
    /* Unreadable lines (never skipped in silence): lines that are not
     * JSON, JSON that is not a run record (an object with string fields
     * problem_spec, method_spec and status), a last line without its newline
     * (torn write).  n_bad counts them; bad holds one "FILE:LINE: why" line each
     * (malloc'ed, NULL when none). */
    size_t n_bad;
    char *bad;
} mbs_results;

/* Load dir/runs.jsonl (required) and dir/meta.json (optional).  Returns 0, or -1
 * with a one-line message in err.  Unreadable lines are skipped, counted in
 * r->n_bad and reported on stderr (mbs_results_report_bad); readers that must
 * not work on a damaged file (compare, bless) check r->n_bad. */
int mbs_results_load(const char *dir, mbs_results *r, char *err, size_t errlen);
/* The same without the report on stderr. */
int mbs_results_load_quiet(const char *dir, mbs_results *r, char *err, size_t errlen);
/* Print the unreadable lines (at most 20, then how many more) and their count. */
void mbs_results_report_bad(const mbs_results *r, FILE *f);
/* Is this parsed JSON value a run record (object with string problem_spec,
 * method_spec, status)? */
int mbs_is_record(json_t *o);
/* The same from an array of records (references are taken). */
int mbs_results_from_array(json_t *meta, json_t *array, mbs_results *r);
void mbs_results_free(mbs_results *r);

/* Field access: a number (NaN when null/absent), "a", "a.b" or "a.b.c". */
double mbs_jnum(json_t *rec, const char *path);
const char *mbs_jstr(json_t *rec, const char *key); /* "" when absent */
int mbs_rec_ok(json_t *rec);                          /* status == "ok" */

/* Which error a table, figure or verdict uses (`--error final|traj`): the error at
 * t_end (err.<group>: max-norm of y - y_ref; its mixed form is 10^-mescd) or along
 * the trajectory (traj.err_max.<group>: the maximum over the output grid of the mixed
 * error |y - y_ref| / (1 + |y_ref|), docs/results-schema.md). */
typedef enum mbs_err_kind { MBS_ERR_FINAL = 0, MBS_ERR_TRAJ = 1 } mbs_err_kind;
/* "final" or "traj" -> *k; 0, or -1 for anything else. */
int mbs_err_kind_parse(const char *s, mbs_err_kind *k);
/* The error of group "q", "v" or "lambda" of a record (NaN: null or absent, e.g.
 * lambda of a problem without multipliers, or no trajectory measurement). */
double mbs_rec_err(json_t *rec, mbs_err_kind k, const char *group);
/* The mixed error over all components: 10^-mescd (final), or the largest of
 * traj.err_max.q, .v, .lambda (traj; null groups skipped).  NaN when not measured. */
double mbs_rec_err_mixed(json_t *rec, mbs_err_kind k);
/* Does some record carry a measured trajectory error (traj.err_max not all null)? */
int mbs_results_have_traj(const mbs_results *r);

/* Identity of a run across sweeps: "problem_spec method_spec h=.. tol=.. t_end=..". */
void mbs_rec_key(json_t *rec, char *buf, size_t len);
/* Identity of a refinement series (the key without h/tol). */
void mbs_rec_series_key(json_t *rec, char *buf, size_t len);

/* Order fit (harness/fit.h) of group "q", "v" or "lambda" (err.<group>) over the
 * fixed-step records sharing rec's series key; n_levels gets the number of levels.
 * Returns 0 when at least 3 levels exist. */
int mbs_results_order(const mbs_results *r, json_t *rec, const char *group, mbs_order_fit *fit,
                      size_t *n_levels);

#endif
