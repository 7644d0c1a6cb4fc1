/* Problem registry and instance construction. */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "problem.h"

#define MBS_PROBLEM(sym) extern const mbs_problem_def sym;
#include "registry.def"
#undef MBS_PROBLEM

static const mbs_problem_def *const registry[] = {
#define MBS_PROBLEM(sym) &sym,
#include "registry.def"
#undef MBS_PROBLEM
};

size_t mbs_problem_count(void)
{
    return sizeof registry / sizeof registry[0];
}

const mbs_problem_def *mbs_problem_at(size_t i)
{
    return i < mbs_problem_count() ? registry[i] : NULL;
}

const mbs_problem_def *mbs_problem_find(const char *name)
{
    for (size_t i = 0; i < mbs_problem_count(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
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
    const mbs_problem_def *def = mbs_problem_find(name);
    if (!def) {
        snprintf(err, errlen, "unknown problem '%s' (see 'mbsbench list problems')", name);
        return MBS_BAD_INPUT;
    }
    pb->def = def;
    pb->flags = def->flags;
    pb->t0 = def->t0;
    pb->t_end = def->t_end;
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
    return MBS_OK;
}

void mbs_problem_close(mbs_problem *pb)
{
    if (pb->def && pb->def->teardown)
        pb->def->teardown(pb);
    pb->def = NULL;
    pb->data = NULL;
}
