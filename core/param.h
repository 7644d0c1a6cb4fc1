/* Named numeric parameters of problems and methods ("pendulum:x0=0.2",
 * "index1/rk4:linsol=chol").  A parameter is a double with a default and a
 * closed range; `choices` (comma-separated names) makes it an enumeration whose
 * value is the index of the chosen name; `integer` requires an integral value. */
#ifndef MBS_PARAM_H
#define MBS_PARAM_H

#include <stddef.h>

enum { MBS_MAX_PARAMS = 24 };

typedef struct mbs_param_def {
    const char *name;
    double def, min, max;
    const char *doc;
    const char *choices; /* NULL, or "lu,chol": value = index of the name */
    int integer;         /* non-zero: value must be an integer */
} mbs_param_def;

typedef struct mbs_params {
    const mbs_param_def *defs;
    size_t n;
    double val[MBS_MAX_PARAMS];
    unsigned long set_mask; /* bit i set when parameter i was given explicitly */
} mbs_params;

/* Fill with defaults.  Returns 0, or -1 if there are too many definitions. */
int mbs_params_init(mbs_params *p, const mbs_param_def *defs, size_t n);

/* Parse "k=v,k=v" (spec may be NULL or empty).  On error returns -1 and writes a
 * one-line message naming the bad key or value to err. */
int mbs_params_parse(mbs_params *p, const char *spec, const char *owner, char *err,
                     size_t errlen);

/* Set one parameter by name with range checking (same errors as parse). */
int mbs_params_set(mbs_params *p, const char *key, const char *value, const char *owner,
                   char *err, size_t errlen);

/* Index of a parameter by name, or -1. */
int mbs_params_find(const mbs_params *p, const char *name);

/* Canonical text "k=v,k=v" of the parameters given explicitly (all = 0) or of
 * all parameters (all = 1); choices print as their names. */
void mbs_params_format(const mbs_params *p, int all, char *buf, size_t len);

/* Name of choice `index` of a choices list into buf ("" if out of range). */
void mbs_choice_name(const char *choices, int index, char *buf, size_t len);

/* Strict number parsing: whole string, finite.  Returns 0 or -1. */
int mbs_parse_double(const char *s, double *out);
int mbs_parse_long(const char *s, long *out);

#endif
