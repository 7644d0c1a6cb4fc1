/* Run-time registration of explicit Runge-Kutta tableaux (explicit.h): a
 * tableau, checked by mbs_tableau_validate and deep-copied, becomes one method
 * per ODE formulation, built exactly as the compiled-in pairs are
 * (MBS_ODE_PAIR_): name FORMULATION/TABLEAU, summary "tableau summary,
 * formulation summary", citation "formulation citation; tableau citation".
 * Kept apart from the static registry (registry.c), which it never changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explicit.h"

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

static char *own_str(mbs_method_set *set, const char *a, const char *sep, const char *b)
{
    size_t len = strlen(a) + strlen(sep) + strlen(b) + 1;
    char *s = own(set, malloc(len));
    if (s)
        snprintf(s, len, "%s%s%s", a, sep, b);
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
    copy->name = own_str(set, tab->name, "", "");
    copy->summary = own_str(set, tab->summary ? tab->summary : "", "", "");
    copy->citation = own_str(set, tab->citation ? tab->citation : "", "", "");
    copy->c = own_copy(set, tab->c, s);
    copy->A = own_copy(set, tab->A, s * s);
    copy->b = own_copy(set, tab->b, s);
    copy->bhat = own_copy(set, tab->bhat, s);
    copy->e = own_copy(set, tab->e, s);
    if (!copy->name || !copy->summary || !copy->citation || !copy->c || !copy->A || !copy->b ||
        (tab->bhat && !copy->bhat) || (tab->e && !copy->e))
        goto fail;
    int fixed = tab->bhat == NULL;
    double p = tab->order;
    for (size_t i = 0; i < nf; i++) {
        const mbs_ode_formulation *f = mbs_ode_formulation_at(i);
        mbs_explicit_variant *var = own(set, malloc(sizeof *var));
        mbs_method_def *m = own(set, malloc(sizeof *m));
        if (!var || !m)
            goto fail;
        *var = (mbs_explicit_variant){.accel = f->accel, .kind = MBS_EXPLICIT_TABLEAU,
                                      .tab = copy};
        *m = (mbs_method_def){
            .name = own_str(set, f->name, "/", copy->name),
            .summary = own_str(set, copy->summary, ", ", f->summary),
            .citation = own_str(set, f->citation, "; ", copy->citation),
            .order = {p, p, f->lambda ? p : 0.0},
            .flags = (fixed ? MBS_M_FIXED_STEP : MBS_M_ADAPTIVE) | f->flags,
            .params = f->params,
            .n_params = f->n_params,
            .variant = var,
            .ops = &mbs_explicit_ops,
        };
        if (!m->name || !m->summary || !m->citation)
            goto fail;
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
