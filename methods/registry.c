/* Method registry (registry.def) and "name:k=v" parsing. */
#include <stdio.h>
#include <string.h>

#include "explicit.h"
#include "method.h"

#define MBS_METHOD(sym) extern const mbs_method_def sym;
#define MBS_ODE_FORMULATION(fsym)                                                            \
    MBS_EXPLICIT_INTEGRATORS(MBS_ODE_DECL_, fsym)                                            \
    extern const mbs_ode_formulation mbs_ode_formulation_##fsym;
#include "registry.def"
#undef MBS_ODE_FORMULATION
#undef MBS_METHOD

static const mbs_method_def *const registry[] = {
#define MBS_METHOD(sym) &sym,
#define MBS_ODE_FORMULATION(fsym) MBS_EXPLICIT_INTEGRATORS(MBS_ODE_ADDR_, fsym)
#include "registry.def"
#undef MBS_ODE_FORMULATION
#undef MBS_METHOD
};

/* The ODE formulations, in registry order (run-time composition, explicit.h). */
static const mbs_ode_formulation *const formulations[] = {
#define MBS_METHOD(sym)
#define MBS_ODE_FORMULATION(fsym) &mbs_ode_formulation_##fsym,
#include "registry.def"
#undef MBS_ODE_FORMULATION
#undef MBS_METHOD
};

size_t mbs_ode_formulation_count(void)
{
    return sizeof formulations / sizeof formulations[0];
}

const mbs_ode_formulation *mbs_ode_formulation_at(size_t i)
{
    return i < mbs_ode_formulation_count() ? formulations[i] : NULL;
}

size_t mbs_method_count(void)
{
    return sizeof registry / sizeof registry[0];
}

const mbs_method_def *mbs_method_at(size_t i)
{
    return i < mbs_method_count() ? registry[i] : NULL;
}

const mbs_method_def *mbs_method_find(const char *name)
{
    for (size_t i = 0; i < mbs_method_count(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

int mbs_method_parse(const char *spec, const mbs_method_def **m, mbs_params *params,
                     char *err, size_t errlen)
{
    char name[128];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 0 || len >= sizeof name) {
        snprintf(err, errlen, "bad method specification '%s'", spec);
        return MBS_BAD_INPUT;
    }
    memcpy(name, spec, len);
    name[len] = '\0';
    *m = mbs_method_find(name);
    if (!*m) {
        snprintf(err, errlen, "unknown method '%s' (see 'mbsbench list methods')", name);
        return MBS_BAD_INPUT;
    }
    if (mbs_params_init(params, (*m)->params, (*m)->n_params) != 0 ||
        mbs_params_parse(params, colon ? colon + 1 : NULL, (*m)->name, err, errlen) != 0)
        return MBS_BAD_INPUT;
    return MBS_OK;
}
