/* Method registry (registry.def) and "name:k=v" parsing.
 *
 * registry.def names the formulations of the ODE axis (framework/ode_axis.h)
 * and single methods; this file forms the methods of the axes from them: every
 * ODE formulation with every explicit integrator (integrators/explicit/
 * explicit.h, mbs_explicit_pair), at the line of the formulation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/explicit/explicit.h"
#include "framework/method.h"
#include "framework/ode_axis.h"
#include "registry.h"
#include "../problems/registry.h"

#define MBS_METHOD(sym) extern const mbs_method_def sym;
#define MBS_ODE_FORMULATION(fsym) extern const mbs_ode_formulation mbs_ode_formulation_##fsym;
#include "registry.def"
#undef MBS_ODE_FORMULATION
#undef MBS_METHOD

/* The lines of registry.def, in order. */
typedef enum { LINE_METHOD, LINE_ODE_FORMULATION } line_kind;
static const struct line {
    line_kind kind;
    const void *item;
} lines[] = {
#define MBS_METHOD(sym) {LINE_METHOD, &sym},
#define MBS_ODE_FORMULATION(fsym) {LINE_ODE_FORMULATION, &mbs_ode_formulation_##fsym},
#include "registry.def"
#undef MBS_ODE_FORMULATION
#undef MBS_METHOD
};

/* The ODE formulations, in registry order. */
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

#define MBS_COUNT_(...) +1
enum {
    N_METHOD_LINES = 0
#define MBS_METHOD(sym) +1
#define MBS_ODE_FORMULATION(fsym)
#include "registry.def"
#undef MBS_ODE_FORMULATION
#undef MBS_METHOD
    ,
    N_EXPLICIT = 0 MBS_EXPLICIT_INTEGRATORS(MBS_COUNT_, ~),
    N_ODE_PAIRS = N_EXPLICIT * (sizeof formulations / sizeof formulations[0]),
    N_BUILTIN_MAX = N_METHOD_LINES + N_ODE_PAIRS,
    PAIR_TEXT = 640 /* name, summary and citation of a composed method */
};
#undef MBS_COUNT_

/* The built-in methods, composed on first use (builtin()) from the constant
 * declarations above, the same on every call, and never changed afterwards:
 * like the plugin table below, written once before any run and then only
 * read (fork()ed sweep workers inherit it). */
static struct {
    size_t n; /* 0: not composed yet */
    const mbs_method_def *def[N_BUILTIN_MAX];
    struct ode_pair {
        mbs_method_def def;
        mbs_explicit_variant var;
        char text[PAIR_TEXT];
    } ode[N_ODE_PAIRS];
} built;

static void compose_ode(const mbs_ode_formulation *f, size_t *k)
{
    for (const mbs_explicit_integrator *in = mbs_explicit_integrators; in->name; in++) {
        struct ode_pair *p = &built.ode[(*k)++];
        if (mbs_explicit_pair(f, in, &p->var, &p->def, p->text, sizeof p->text) >
            sizeof p->text) {
            fprintf(stderr, "methods/registry.c: the texts of %s/%s exceed PAIR_TEXT\n",
                    f->name, in->name);
            abort();
        }
        built.def[built.n++] = &p->def;
    }
}

static size_t builtin(void)
{
    if (built.n)
        return built.n;
    size_t k = 0;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (lines[i].kind == LINE_METHOD)
            built.def[built.n++] = lines[i].item;
        else
            compose_ode(lines[i].item, &k);
    return built.n;
}

/* Methods added by plugins (harness/plugin.c), after the built-in ones.
 *
 * Why a process-wide, append-only table and not a registry object passed to every
 * caller (issue 20): methods and problems are looked up by name from ~15 places
 * (mbs_method_parse / mbs_problem_open in run, converge, suite validation,
 * reproductions, references, the benchmarks, the tests), and sweep workers are
 * fork()ed children that must see the same entries.  A registry object would have
 * to be threaded through every one of those signatures for no change in
 * behaviour, whereas a table that is filled once at start-up (the loader runs
 * before any command does its work; a failed plugin's entries are removed at
 * once) and only read afterwards is inherited by fork() for free.  The program is
 * single-threaded; the rule "append only at start-up, before any run" is what
 * keeps this state from behaving like mutable state. */
static struct {
    const mbs_method_def *def;
    const char *owner; /* the plugin's path, for messages */
} extra[MBS_MAX_PLUGIN_METHODS];
static size_t n_extra;

size_t mbs_method_count(void)
{
    return builtin() + n_extra;
}

const mbs_method_def *mbs_method_at(size_t i)
{
    size_t nb = builtin();
    return i < nb ? built.def[i] : i < nb + n_extra ? extra[i - nb].def : NULL;
}

const mbs_method_def *mbs_method_find(const char *name)
{
    for (size_t i = 0; i < mbs_method_count(); i++)
        if (strcmp(mbs_method_at(i)->name, name) == 0)
            return mbs_method_at(i);
    return NULL;
}

const char *mbs_method_owner(size_t i)
{
    return i < builtin() || i >= mbs_method_count() ? NULL : extra[i - builtin()].owner;
}

size_t mbs_method_builtin_count(void)
{
    return builtin();
}

int mbs_method_register(const mbs_method_def *m, const char *owner, char *err, size_t errlen)
{
    const char *name = m && m->name ? m->name : "(null)";
    if (!m || !mbs_registry_name_ok(m->name)) {
        snprintf(err, errlen, "method name '%s' must be 1-63 characters of [A-Za-z0-9._/+-]",
                 name);
        return MBS_BAD_INPUT;
    }
    if (!m->ops || !m->ops->alloc || !m->ops->integrate || !m->ops->free_state) {
        snprintf(err, errlen, "method '%s': ops and ops->alloc, integrate, free_state are "
                 "required", name);
        return MBS_BAD_INPUT;
    }
    unsigned step = m->flags & (MBS_M_FIXED_STEP | MBS_M_ADAPTIVE);
    if (step != MBS_M_FIXED_STEP && step != MBS_M_ADAPTIVE) {
        snprintf(err, errlen, "method '%s': flags must hold exactly one of MBS_M_FIXED_STEP, "
                 "MBS_M_ADAPTIVE", name);
        return MBS_BAD_INPUT;
    }
    if (m->n_params > MBS_MAX_PARAMS || (m->n_params && !m->params)) {
        snprintf(err, errlen, "method '%s': %zu parameters (at most %d, with a table)", name,
                 m->n_params, MBS_MAX_PARAMS);
        return MBS_BAD_INPUT;
    }
    for (size_t i = 0; i < mbs_method_count(); i++)
        if (strcmp(mbs_method_at(i)->name, name) == 0) {
            const char *by = mbs_method_owner(i);
            snprintf(err, errlen, "method '%s' is already registered (%s%s)", name,
                     by ? "by plugin " : "built-in", by ? by : "");
            return MBS_BAD_INPUT;
        }
    if (n_extra >= MBS_MAX_PLUGIN_METHODS) {
        snprintf(err, errlen, "method '%s': more than %d plugin methods", name,
                 MBS_MAX_PLUGIN_METHODS);
        return MBS_BAD_INPUT;
    }
    extra[n_extra].def = m;
    extra[n_extra].owner = owner;
    n_extra++;
    return MBS_OK;
}

void mbs_method_registry_truncate(size_t n)
{
    if (n >= builtin() && n < mbs_method_count())
        n_extra = n - builtin();
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
