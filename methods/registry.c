/* Method registry (registry.def) and "name:k=v" parsing.
 *
 * registry.def lists the formulations and integrators of the two axes and the
 * methods of one formulation each; this file forms the methods of the axes:
 * every ODE formulation with every explicit integrator (mbs_explicit_pair), and
 * every DAE formulation with every implicit integrator that fits it
 * (dae_fits).  A pair stands at the later of its two lines of registry.def,
 * integrators in their order, then formulations in theirs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/explicit/explicit.h"
#include "framework/dae_axis.h"
#include "framework/method.h"
#include "framework/ode_axis.h"
#include "registry.h"
#include "../problems/registry.h"

#define MBS_DAE_FORMULATION(sym) extern const mbs_dae_formulation mbs_dae_formulation_##sym;
#define MBS_DAE_INTEGRATORS(sym) extern const mbs_dae_integrator mbs_dae_integrators_##sym[];
#define MBS_ODE_FORMULATION(sym) extern const mbs_ode_formulation mbs_ode_formulation_##sym;
#define MBS_ODE_FORMULATIONS(sym)                                                           \
    extern const mbs_ode_formulation *const mbs_ode_formulations_##sym[];
#define MBS_METHODS(sym) extern const mbs_method_def *const mbs_methods_##sym[];
#include "registry.def"
#undef MBS_METHODS
#undef MBS_ODE_FORMULATIONS
#undef MBS_ODE_FORMULATION
#undef MBS_DAE_INTEGRATORS
#undef MBS_DAE_FORMULATION

/* The lines of registry.def, in order. */
typedef enum {
    DAE_FORMULATION,
    DAE_INTEGRATORS,
    ODE_FORMULATION,
    ODE_FORMULATIONS,
    METHODS
} line_kind;
static const struct line {
    line_kind kind;
    const void *item;
} lines[] = {
#define MBS_DAE_FORMULATION(sym) {DAE_FORMULATION, &mbs_dae_formulation_##sym},
#define MBS_DAE_INTEGRATORS(sym) {DAE_INTEGRATORS, mbs_dae_integrators_##sym},
#define MBS_ODE_FORMULATION(sym) {ODE_FORMULATION, &mbs_ode_formulation_##sym},
#define MBS_ODE_FORMULATIONS(sym) {ODE_FORMULATIONS, mbs_ode_formulations_##sym},
#define MBS_METHODS(sym) {METHODS, mbs_methods_##sym},
#include "registry.def"
#undef MBS_METHODS
#undef MBS_ODE_FORMULATIONS
#undef MBS_ODE_FORMULATION
#undef MBS_DAE_INTEGRATORS
#undef MBS_DAE_FORMULATION
};
enum { N_LINES = sizeof lines / sizeof lines[0] };

#define MBS_COUNT_(...) +1
enum {
    N_EXPLICIT = 0 MBS_EXPLICIT_INTEGRATORS(MBS_COUNT_, ~),
    N_DAE_FORMULATIONS = 0
#define MBS_DAE_FORMULATION(sym) +1
#define MBS_DAE_INTEGRATORS(sym)
#define MBS_ODE_FORMULATION(sym)
#define MBS_ODE_FORMULATIONS(sym)
#define MBS_METHODS(sym)
#include "registry.def"
#undef MBS_METHODS
#undef MBS_ODE_FORMULATIONS
#undef MBS_ODE_FORMULATION
#undef MBS_DAE_INTEGRATORS
#undef MBS_DAE_FORMULATION
    ,
    /* Capacities; builtin() stops the program when one is too small. */
    N_ODE_FORMULATIONS = 32,
    N_ODE_PAIRS = N_EXPLICIT * N_ODE_FORMULATIONS,
    N_DAE_PAIRS = 16 * N_DAE_FORMULATIONS,
    N_BUILTIN_MAX = 1024,
    PAIR_TEXT = 640, /* name, summary and citation of an ODE pair */
    NAME_LEN = 64,
    SUMMARY_LEN = 256,
    CITATION_LEN = 384
};
#undef MBS_COUNT_

/* The built-in methods, composed on first use (builtin()) from the constant
 * declarations above, the same on every call, and never changed afterwards:
 * like the plugin table below, written once before any run and then only
 * read (fork()ed sweep workers inherit it). */
static struct {
    size_t n; /* 0: not composed yet */
    const mbs_method_def *def[N_BUILTIN_MAX];
    size_t n_ode, n_dae, n_odef;
    const mbs_ode_formulation *odef[N_ODE_FORMULATIONS]; /* in registry order */
    struct ode_pair {
        mbs_method_def def;
        mbs_explicit_variant var;
        char text[PAIR_TEXT];
    } ode[N_ODE_PAIRS];
    struct dae_pair {
        mbs_method_def def;
        mbs_dae_method var;
        mbs_param_def params[MBS_MAX_PARAMS];
        char name[NAME_LEN], summary[SUMMARY_LEN], citation[CITATION_LEN];
    } dae[N_DAE_PAIRS];
} built;

static void too_small(const char *what, const char *name)
{
    fprintf(stderr, "methods/registry.c: %s too small for %s\n", what, name);
    abort();
}

static void add(const mbs_method_def *m)
{
    if (built.n == N_BUILTIN_MAX)
        too_small("N_BUILTIN_MAX", m->name);
    built.def[built.n++] = m;
}

static void ode_pair(const mbs_ode_formulation *f, const mbs_explicit_integrator *in)
{
    if (built.n_ode == N_ODE_PAIRS)
        too_small("N_ODE_PAIRS", f->name);
    struct ode_pair *p = &built.ode[built.n_ode++];
    if (mbs_explicit_pair(f, in, &p->var, &p->def, p->text, sizeof p->text) > sizeof p->text)
        too_small("PAIR_TEXT", f->name);
    add(&p->def);
}

/* FORMULATION/INTEGRATOR with every explicit integrator. */
static void ode_formulation(const mbs_ode_formulation *f)
{
    if (built.n_odef == N_ODE_FORMULATIONS)
        too_small("N_ODE_FORMULATIONS", f->name);
    built.odef[built.n_odef++] = f;
    for (const mbs_explicit_integrator *in = mbs_explicit_integrators; in->name; in++)
        ode_pair(f, in);
}

/* Does integrator `in` run formulation `f`?  On one of its evaluation paths,
 * up to its algebraic index, doing what the formulation asks (projection;
 * a fixed step), and with `f` when it is registered with one formulation only. */
static int dae_fits(const mbs_dae_integrator *in, const mbs_dae_formulation *f)
{
    unsigned asks = f->provides & (MBS_DAE_PROJECTION | MBS_DAE_FIXED_H);
    return (f->provides & in->runs_on) != 0 && f->index <= in->max_index &&
           (asks & ~in->handles) == 0 &&
           (!(f->provides & MBS_DAE_FIXED_H) || (in->flags & MBS_M_FIXED_STEP)) &&
           (!in->only || strcmp(in->only, f->name) == 0);
}

/* Append the parameters of l that the pair does not have yet: a name given
 * twice keeps its first definition (IDA's `linsol`, which also selects its
 * Newton solver, replaces the index-1 formulation's). */
static void add_params(struct dae_pair *p, size_t *n, mbs_param_list l)
{
    for (size_t k = 0; k < l.n; k++) {
        size_t j = 0;
        while (j < *n && strcmp(p->params[j].name, l.defs[k].name) != 0)
            j++;
        if (j < *n)
            continue;
        if (*n == MBS_MAX_PARAMS)
            too_small("MBS_MAX_PARAMS", p->name);
        p->params[(*n)++] = l.defs[k];
    }
}

/* FORMULATION/INTEGRATOR of the DAE axis (framework/dae_axis.h). */
static void dae_pair(const mbs_dae_formulation *f, const mbs_dae_integrator *in)
{
    if (!dae_fits(in, f))
        return;
    if (built.n_dae == N_DAE_PAIRS)
        too_small("N_DAE_PAIRS", f->name);
    struct dae_pair *p = &built.dae[built.n_dae++];
    const char *iname = f->provides & MBS_DAE_FIXED_H && in->fixed_h_name ? in->fixed_h_name
                                                                           : in->name;
    if ((size_t)snprintf(p->name, sizeof p->name, "%s/%s", f->name, iname) >= sizeof p->name)
        too_small("NAME_LEN", f->name);
    in->describe(in, f, p->summary, sizeof p->summary, p->citation, sizeof p->citation);
    if (strlen(p->summary) + 1 == sizeof p->summary ||
        strlen(p->citation) + 1 == sizeof p->citation)
        too_small("SUMMARY_LEN or CITATION_LEN", p->name);
    size_t np = 0;
    add_params(p, &np, in->params);
    add_params(p, &np, f->params);
    if (f->provides & MBS_DAE_EF)
        add_params(p, &np, in->form_params);
    add_params(p, &np, in->tail_params);
    p->var = (mbs_dae_method){.formulation = f, .integrator = in};
    p->def = (mbs_method_def){
        .name = p->name,
        .summary = p->summary,
        .citation = p->citation,
        .order = {in->order[f->index][0], in->order[f->index][1], in->order[f->index][2]},
        .flags = in->flags | (f->provides & MBS_DAE_PROJECTION ? MBS_M_PROJECTING : 0u) |
                 (f->provides & in->handles & MBS_DAE_EXTENDED ? MBS_M_EXTENDED_OK : 0u),
        .params = p->params,
        .n_params = np,
        .variant = &p->var,
        .ops = in->ops,
    };
    add(&p->def);
}

static size_t builtin(void)
{
    if (built.n)
        return built.n;
    for (size_t i = 0; i < N_LINES; i++) {
        const struct line *l = &lines[i];
        if (l->kind == METHODS)
            for (const mbs_method_def *const *m = l->item; *m; m++)
                add(*m);
        else if (l->kind == ODE_FORMULATION)
            ode_formulation(l->item);
        else if (l->kind == ODE_FORMULATIONS)
            for (const mbs_ode_formulation *const *f = l->item; *f; f++)
                ode_formulation(*f);
        else if (l->kind == DAE_FORMULATION) /* with the integrators of earlier lines */
            for (size_t j = 0; j < i; j++)
                for (const mbs_dae_integrator *in = lines[j].item;
                     lines[j].kind == DAE_INTEGRATORS && in->name; in++)
                    dae_pair(l->item, in);
        else /* DAE_INTEGRATORS, with the formulations of earlier lines */
            for (const mbs_dae_integrator *in = l->item; in->name; in++)
                for (size_t j = 0; j < i; j++)
                    if (lines[j].kind == DAE_FORMULATION)
                        dae_pair(lines[j].item, in);
    }
    return built.n;
}

size_t mbs_ode_formulation_count(void)
{
    builtin();
    return built.n_odef;
}

const mbs_ode_formulation *mbs_ode_formulation_at(size_t i)
{
    return i < mbs_ode_formulation_count() ? built.odef[i] : NULL;
}

/* Methods added by plugins (harness/plugin.c), after the built-in ones.
 *
 * Why a process-wide, append-only table and not a registry object passed to every
 * caller: methods and problems are looked up by name from ~15 places
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
