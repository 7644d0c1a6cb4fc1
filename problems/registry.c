/* Problem registry and instance construction. */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech.h"
#include "problem.h"
#include "registry.h"

#define MBS_PROBLEM(sym) extern const mbs_problem_def sym;
#include "registry.def"
#undef MBS_PROBLEM

static const mbs_problem_def *const registry[] = {
#define MBS_PROBLEM(sym) &sym,
#include "registry.def"
#undef MBS_PROBLEM
};

/* Problems added by plugins (harness/plugin.c), after the built-in ones.  A
 * process-wide, append-only table: the plugin loader adds entries at start-up,
 * before any run, and removes a failed plugin's entries at once; lookups (by
 * name, through mbs_problem_open from every command, sweep worker and test) then
 * see built-in and plugin problems alike.  Why process-wide and not a registry
 * object passed to every caller: see methods/registry.c. */
static struct {
    const mbs_problem_def *def;
    const char *owner; /* the plugin's path, for messages */
} extra[MBS_MAX_PLUGIN_PROBLEMS];
static size_t n_extra;

/* Problems from mechanism files (problems/mech.h), between the built-in and the
 * plugin problems; process-wide and append-only like the plugin table. */
static const mbs_problem_def *mech[MBS_MAX_MECH_PROBLEMS];
static size_t n_mech;

enum { N_BUILTIN = sizeof registry / sizeof registry[0] };

size_t mbs_problem_count(void)
{
    return N_BUILTIN + n_mech + n_extra;
}

const mbs_problem_def *mbs_problem_at(size_t i)
{
    if (i < N_BUILTIN)
        return registry[i];
    if (i < N_BUILTIN + n_mech)
        return mech[i - N_BUILTIN];
    return i < mbs_problem_count() ? extra[i - N_BUILTIN - n_mech].def : NULL;
}

const mbs_problem_def *mbs_problem_find(const char *name)
{
    for (size_t i = 0; i < mbs_problem_count(); i++)
        if (strcmp(mbs_problem_at(i)->name, name) == 0)
            return mbs_problem_at(i);
    return NULL;
}

const char *mbs_problem_owner(size_t i)
{
    return i < N_BUILTIN + n_mech || i >= mbs_problem_count() ? NULL
                                                             : extra[i - N_BUILTIN - n_mech].owner;
}

size_t mbs_problem_builtin_count(void)
{
    return N_BUILTIN + n_mech;
}

/* A name as the specification parser reads it: [A-Za-z0-9._/+-], no ':' or ','. */
int mbs_registry_name_ok(const char *name)
{
    if (!name || !*name || strlen(name) >= 64)
        return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+-") ==
           strlen(name);
}

/* The checks every run-time definition passes (plugins and mechanism files). */
static int check_def(const mbs_problem_def *d, char *err, size_t errlen)
{
    const char *name = d && d->name ? d->name : "(null)";
    if (!d || !mbs_registry_name_ok(d->name)) {
        snprintf(err, errlen, "problem name '%s' must be 1-63 characters of [A-Za-z0-9._/+-]",
                 name);
        return MBS_BAD_INPUT;
    }
    const char *missing = !d->dims         ? "dims"
                          : !d->initial    ? "initial"
                          : !d->mass       ? "mass"
                          : !d->force      ? "force"
                          : !d->constraint ? "constraint"
                          : !d->jacobian   ? "jacobian"
                          : !d->gamma      ? "gamma"
                                           : NULL;
    if (missing) {
        snprintf(err, errlen, "problem '%s': required callback '%s' is NULL", name, missing);
        return MBS_BAD_INPUT;
    }
    if (d->n_params > MBS_MAX_PARAMS || (d->n_params && !d->params)) {
        snprintf(err, errlen, "problem '%s': %zu parameters (at most %d, with a table)", name,
                 d->n_params, MBS_MAX_PARAMS);
        return MBS_BAD_INPUT;
    }
    if (((d->flags & MBS_PB_EXTENDED) && !d->ext) ||
        ((d->flags & MBS_PB_NONHOLONOMIC) && !d->nonholonomic_dims) ||
        ((d->flags & MBS_PB_EXACT) && !d->exact) ||
        ((d->flags & MBS_PB_CONSERVATIVE) && !d->energy) ||
        ((d->flags & MBS_PB_SPARSE) && (!d->mass_sparse || !d->jacobian_sparse)) ||
        ((d->flags & MBS_PB_LIEGROUP) && !d->lie) || !d->reported != !d->reported_names ||
        d->output_steps < 0) {
        snprintf(err, errlen, "problem '%s': a flag without its callback (exact, energy, "
                 "sparse, extended, non-holonomic or Lie group), reported names without "
                 "their callback or a negative output_steps", name);
        return MBS_BAD_INPUT;
    }
    for (size_t i = 0; i < mbs_problem_count(); i++)
        if (strcmp(mbs_problem_at(i)->name, name) == 0) {
            const char *by = mbs_problem_owner(i), *file = mbs_mech_file(mbs_problem_at(i));
            snprintf(err, errlen, "problem '%s' is already registered (%s%s)", name,
                     by ? "by plugin " : file ? "by mechanism file " : "built-in",
                     by ? by : file ? file : "");
            return MBS_BAD_INPUT;
        }
    return MBS_OK;
}

int mbs_problem_register(const mbs_problem_def *d, const char *owner, char *err, size_t errlen)
{
    const char *name = d && d->name ? d->name : "(null)";
    int st = check_def(d, err, errlen);
    if (st != MBS_OK)
        return st;
    if (n_extra >= MBS_MAX_PLUGIN_PROBLEMS) {
        snprintf(err, errlen, "problem '%s': more than %d plugin problems", name,
                 MBS_MAX_PLUGIN_PROBLEMS);
        return MBS_BAD_INPUT;
    }
    extra[n_extra].def = d;
    extra[n_extra].owner = owner;
    n_extra++;
    return MBS_OK;
}

int mbs_problem_register_mechanism(const mbs_problem_def *d, char *err, size_t errlen)
{
    int st = check_def(d, err, errlen);
    if (st != MBS_OK)
        return st;
    if (n_mech >= MBS_MAX_MECH_PROBLEMS) {
        snprintf(err, errlen, "more than %d mechanism problems", MBS_MAX_MECH_PROBLEMS);
        return MBS_BAD_INPUT;
    }
    mech[n_mech++] = d;
    return MBS_OK;
}

void mbs_problem_mechanisms_clear(void)
{
    n_mech = 0;
}

void mbs_problem_registry_truncate(size_t n)
{
    if (n >= N_BUILTIN + n_mech && n < mbs_problem_count())
        n_extra = n - N_BUILTIN - n_mech;
}

/* Count and check the instance's reported-quantity names (problem.h): they
 * become CSV column names next to t, q1, v1, lambda1, x1. */
static int reported_names(mbs_problem *pb, char *err, size_t errlen)
{
    static const char alnum[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.";
    pb->n_reported = 0;
    for (const char *const *n = pb->reported_names; n && *n; n++, pb->n_reported++) {
        const char *s = *n;
        int letter = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z');
        if (!letter || strspn(s, alnum) != strlen(s) || strlen(s) >= 64) {
            snprintf(err, errlen, "%s: reported quantity name '%s' must be a letter followed "
                     "by at most 62 of [A-Za-z0-9_.]", pb->def->name, s);
            mbs_problem_close(pb);
            return MBS_BAD_INPUT;
        }
    }
    if (pb->n_reported > 0 && !pb->def->reported) {
        snprintf(err, errlen, "%s: reported quantity names without a reported callback",
                 pb->def->name);
        mbs_problem_close(pb);
        return MBS_BAD_INPUT;
    }
    return MBS_OK;
}

int mbs_problem_open(mbs_problem *pb, const char *spec, char *err, size_t errlen)
{
    memset(pb, 0, sizeof *pb);
    gsl_set_error_handler_off(); /* library code checks GSL's return codes */
    char name[128];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 0 || len >= sizeof name) {
        snprintf(err, errlen, "bad problem specification '%s'", spec);
        return MBS_BAD_INPUT;
    }
    memcpy(name, spec, len);
    name[len] = '\0';
    if (strcmp(name, "model") == 0) /* a mechanism file: model:file=PATH,... */
        return mbs_mech_open_spec(pb, colon ? colon + 1 : "", err, errlen);
    const mbs_problem_def *def = mbs_problem_find(name);
    if (!def) {
        snprintf(err, errlen, "unknown problem '%s' (see 'mbsbench list problems')", name);
        return MBS_BAD_INPUT;
    }
    pb->def = def;
    pb->flags = def->flags;
    pb->t0 = def->t0;
    pb->t_end = def->t_end;
    pb->reported_names = def->reported_names;
    if (mbs_params_init(&pb->params, def->params, def->n_params) != 0 ||
        mbs_params_parse(&pb->params, colon ? colon + 1 : NULL, def->name, err, errlen) != 0)
        return MBS_BAD_INPUT;
    if (def->setup) {
        err[0] = '\0';
        int s = def->setup(pb, err, errlen);
        if (s != MBS_OK) {
            if (err[0] == '\0')
                snprintf(err, errlen, "%s: set-up failed: %s", def->name,
                         mbs_status_message(s));
            pb->def = NULL;
            return s;
        }
    }
    if (def->dims(pb, &pb->nq, &pb->nv, &pb->nl) != MBS_OK || pb->nv == 0 ||
        pb->nq < pb->nv) {
        snprintf(err, errlen, "%s: invalid dimensions", def->name);
        mbs_problem_close(pb);
        return MBS_BAD_INPUT;
    }
    /* Extended problems (problem.h, mbs_extension): the extra variables x. */
    if ((pb->flags & MBS_PB_EXTENDED) &&
        (!def->ext || def->ext->dims(pb, &pb->nx) != MBS_OK)) {
        snprintf(err, errlen, "%s: invalid extension dimensions", def->name);
        mbs_problem_close(pb);
        return MBS_BAD_INPUT;
    }
    /* Non-holonomic constraints (problem.h): the last nnh of the nl rows. */
    if ((pb->flags & MBS_PB_NONHOLONOMIC) &&
        (!def->nonholonomic_dims || def->nonholonomic_dims(pb, &pb->nnh) != MBS_OK ||
         pb->nnh > pb->nl)) {
        snprintf(err, errlen, "%s: invalid non-holonomic dimensions", def->name);
        mbs_problem_close(pb);
        return MBS_BAD_INPUT;
    }
    /* Lie-group configuration space (problem.h, mbs_liegroup). */
    if ((pb->flags & MBS_PB_LIEGROUP) &&
        (!def->lie || !def->lie->compose_exp || !def->lie->log)) {
        snprintf(err, errlen, "%s: flagged Lie group without compose_exp and log", def->name);
        mbs_problem_close(pb);
        return MBS_BAD_INPUT;
    }
    return reported_names(pb, err, errlen);
}

void mbs_problem_close(mbs_problem *pb)
{
    if (pb->def && pb->def->teardown)
        pb->def->teardown(pb);
    pb->def = NULL;
    pb->data = NULL;
}

int mbs_zero_force_derivative(const mbs_problem *pb, double t, const double *q, const double *v,
                              gsl_matrix *K)
{
    (void)pb, (void)t, (void)q, (void)v;
    gsl_matrix_set_zero(K);
    return MBS_OK;
}
