/* The explicit integrators of the ODE axis and how a pair is formed
 * (mbs_explicit_pair: name FORMULATION/INTEGRATOR, summary "integrator
 * summary, formulation summary", citation "formulation citation; integrator
 * citation"), for the compiled-in registry (registry.c) and for tableaux
 * registered at run time: a tableau, checked by mbs_tableau_validate and
 * deep-copied, becomes one method per ODE formulation, kept apart from the
 * registry, which it never changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explicit.h"

#define MBS_EXPLICIT_ENTRY_(sym, nm, kindv, tabp, fixedv, p, summ, cite, unused)            \
    {.name = nm, .summary = summ, .citation = cite, .kind = kindv, .tab = tabp,             \
     .fixed = fixedv, .order = p},
const mbs_explicit_integrator mbs_explicit_integrators[] = {
    MBS_EXPLICIT_INTEGRATORS(MBS_EXPLICIT_ENTRY_, ~){.name = NULL}};
#undef MBS_EXPLICIT_ENTRY_

size_t mbs_explicit_pair(const mbs_ode_formulation *f, const mbs_explicit_integrator *in,
                         mbs_explicit_variant *var, mbs_method_def *m, char *text, size_t len)
{
    size_t ln = strlen(f->name) + 1 + strlen(in->name) + 1,
           ls = strlen(in->summary) + 2 + strlen(f->summary) + 1,
           lc = strlen(f->citation) + 2 + strlen(in->citation) + 1;
    if (ln + ls + lc > len)
        return ln + ls + lc;
    char *name = text, *summary = name + ln, *citation = summary + ls;
    snprintf(name, ln, "%s/%s", f->name, in->name);
    snprintf(summary, ls, "%s, %s", in->summary, f->summary);
    snprintf(citation, lc, "%s; %s", f->citation, in->citation);
    *var = (mbs_explicit_variant){.accel = f->accel, .kind = in->kind, .tab = in->tab};
    *m = (mbs_method_def){
        .name = name,
        .summary = summary,
        .citation = citation,
        .order = {in->order, in->order, f->lambda ? in->order : 0.0},
        .flags = (in->fixed ? MBS_M_FIXED_STEP : MBS_M_ADAPTIVE) | f->flags,
        .params = f->params,
        .n_params = f->n_params,
        .variant = var,
        .ops = &mbs_explicit_ops,
    };
    return ln + ls + lc;
}

/* Remember p as owned by the set (freed by mbs_method_set_free).  On failure
 * p is freed and NULL returned. */
static void *own(mbs_method_set *set, void *p)
{
    if (!p)
        return NULL;
    if (set->n_owned == set->cap_owned) {
        size_t cap = set->cap_owned ? 2 * set->cap_owned : 16;
        void **o = realloc(set->owned, cap * sizeof *o);
        if (!o) {
            free(p);
            return NULL;
        }
        set->owned = o;
        set->cap_owned = cap;
    }
    set->owned[set->n_owned++] = p;
    return p;
}

static char *own_str(mbs_method_set *set, const char *a)
{
    size_t len = strlen(a) + 1;
    char *s = own(set, malloc(len));
    if (s)
        memcpy(s, a, len);
    return s;
}

static double *own_copy(mbs_method_set *set, const double *x, size_t n)
{
    if (!x)
        return NULL;
    double *c = own(set, malloc(n * sizeof *c));
    if (c)
        memcpy(c, x, n * sizeof *c);
    return c;
}

const mbs_method_def *mbs_method_set_find(const mbs_method_set *set, const char *name)
{
    for (size_t i = 0; set && name && i < set->n; i++)
        if (strcmp(set->defs[i]->name, name) == 0)
            return set->defs[i];
    return NULL;
}

/* Would FORMULATION/name clash with a method (compiled in, or in the set)? */
static int taken(const mbs_method_set *set, const char *name)
{
    for (size_t i = 0; i < mbs_ode_formulation_count(); i++) {
        char full[128];
        snprintf(full, sizeof full, "%s/%s", mbs_ode_formulation_at(i)->name, name);
        if (mbs_method_find(full) || mbs_method_set_find(set, full))
            return 1;
    }
    return 0;
}

int mbs_explicit_register_tableau(mbs_method_set *set, const mbs_tableau *tab, char *err,
                                  size_t errlen)
{
    if (!set) {
        snprintf(err, errlen, "mbs_explicit_register_tableau: no method set");
        return MBS_BAD_INPUT;
    }
    int st = mbs_tableau_validate(tab, err, errlen);
    if (st != MBS_OK)
        return st;
    if (taken(set, tab->name)) {
        snprintf(err, errlen, "tableau %s: a method FORMULATION/%s is already registered",
                 tab->name, tab->name);
        return MBS_BAD_INPUT;
    }
    size_t nf = mbs_ode_formulation_count();
    /* Everything allocated from here on is undone on failure. */
    size_t n0 = set->n, owned0 = set->n_owned;
    st = MBS_NO_MEMORY;
    if (set->cap - set->n < nf) {
        size_t cap = set->n + nf + (set->cap ? set->cap : 16);
        const mbs_method_def **d = realloc(set->defs, cap * sizeof *d);
        if (!d)
            goto fail;
        set->defs = d;
        set->cap = cap;
    }
    size_t s = (size_t)tab->stages;
    mbs_tableau *copy = own(set, malloc(sizeof *copy));
    if (!copy)
        goto fail;
    *copy = *tab;
    copy->name = own_str(set, tab->name);
    copy->summary = own_str(set, tab->summary ? tab->summary : "");
    copy->citation = own_str(set, tab->citation ? tab->citation : "");
    copy->c = own_copy(set, tab->c, s);
    copy->A = own_copy(set, tab->A, s * s);
    copy->b = own_copy(set, tab->b, s);
    copy->bhat = own_copy(set, tab->bhat, s);
    copy->e = own_copy(set, tab->e, s);
    copy->bd = tab->bd ? own_copy(set, tab->bd, s * (size_t)tab->dense_degree) : NULL;
    if (!copy->name || !copy->summary || !copy->citation || !copy->c || !copy->A || !copy->b ||
        (tab->bhat && !copy->bhat) || (tab->e && !copy->e) || (tab->bd && !copy->bd))
        goto fail;
    const mbs_explicit_integrator in = {.name = copy->name,
                                        .summary = copy->summary,
                                        .citation = copy->citation,
                                        .kind = MBS_EXPLICIT_TABLEAU,
                                        .tab = copy,
                                        .fixed = tab->bhat == NULL,
                                        .order = tab->order};
    for (size_t i = 0; i < nf; i++) {
        const mbs_ode_formulation *f = mbs_ode_formulation_at(i);
        size_t len = mbs_explicit_pair(f, &in, NULL, NULL, NULL, 0);
        mbs_explicit_variant *var = own(set, malloc(sizeof *var));
        mbs_method_def *m = own(set, malloc(sizeof *m));
        char *text = own(set, malloc(len));
        if (!var || !m || !text)
            goto fail;
        mbs_explicit_pair(f, &in, var, m, text, len);
        set->defs[set->n++] = m;
    }
    return MBS_OK;
fail:
    while (set->n_owned > owned0)
        free(set->owned[--set->n_owned]);
    set->n = n0;
    snprintf(err, errlen, "tableau %s: out of memory", tab->name);
    return st;
}

void mbs_method_set_free(mbs_method_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n_owned; i++)
        free(set->owned[i]);
    free(set->owned);
    free(set->defs);
    *set = (mbs_method_set){0};
}
