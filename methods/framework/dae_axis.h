/* The DAE axis of the method registry: formulations of the equations of motion
 * as an implicit DAE (index 3, index 2, GGL, index 1, projection, Baumgarte) and
 * the implicit integrators that run on them (Radau IIA, BDF, IDA).
 *
 * A formulation is declared once, in its own file, with what it provides: the
 * evaluation path an integrator calls (E(y), F(t, y), dF/dy and the structured
 * KKT path of methods/formulations/dae_form.h, or the index-1 KKT solve of
 * index1.h), the highest algebraic index of its components, and what an
 * integrator must do for it (project after each step; keep the step fixed).  An
 * implicit integrator is declared once with what it runs on and what it handles.
 * methods/registry.def lists both, and methods/registry.c forms
 * FORMULATION/INTEGRATOR for every pair that fits (mbs_dae_fits): adding a
 * formulation gives it every implicit integrator that fits, adding an integrator
 * gives it every formulation.  The method's variant is the pair
 * (mbs_dae_method); its name, flags, orders and parameters follow from the two
 * declarations, its summary and citation from the integrator's describe(). */
#ifndef MBS_DAE_AXIS_H
#define MBS_DAE_AXIS_H

#include <stddef.h>

#include "method.h"

/* The linearly implicit forms E(y) y' = F(t, y) of methods/formulations/dae_form.h. */
typedef enum { MBS_FORM_INDEX3, MBS_FORM_INDEX2, MBS_FORM_GGL, MBS_FORM_BAUMGARTE2 } mbs_form_kind;

/* What a formulation provides (mbs_dae_formulation.provides). */
enum mbs_dae_provides {
    /* Evaluation paths; an integrator runs on a formulation with one of those it
     * lists in runs_on. */
    MBS_DAE_EF = 1u << 0,       /* E(y) and F(t, y) of the dae_form.h kind `kind` */
    MBS_DAE_ACCEL = 1u << 1,    /* v' and lambda from the index-1 KKT solve (index1.h): the
                                   ODE (q, v)' = (H v, v'), or the residual of its KKT system */
    /* What comes with MBS_DAE_EF. */
    MBS_DAE_JACOBIAN = 1u << 2, /* dF/dy (mbs_dae_form_jac) */
    MBS_DAE_KKT = 1u << 3,      /* the structured KKT simplified Newton (sparse mode) */
    MBS_DAE_EXTENDED = 1u << 4, /* also extended problems (problem.h, MBS_PB_EXTENDED) */
    /* What the integrator must do; it fits only when it handles them. */
    MBS_DAE_PROJECTION = 1u << 5, /* project q, v after every accepted step (projection.h,
                                     parameter eps_g) */
    MBS_DAE_FIXED_H = 1u << 6     /* F depends on the step size h (Baumgarte2: alpha0 = C/h):
                                     fixed steps, the integrator sets h and C */
};

/* A parameter table as a pointer and a count. */
typedef struct mbs_param_list {
    const mbs_param_def *defs;
    size_t n;
} mbs_param_list;
#define MBS_PARAM_LIST(table) {(table), sizeof(table) / sizeof((table)[0])}

typedef struct mbs_dae_formulation mbs_dae_formulation;
struct mbs_dae_formulation {
    const char *name;           /* the name before '/': "index2" */
    mbs_form_kind kind;         /* MBS_DAE_EF: the form it evaluates */
    unsigned provides;          /* enum mbs_dae_provides */
    int index;                  /* highest algebraic index of a component: 3 (lambda of the
                                   index-3 form), 2, 1 */
    int mu;                     /* 1: the GGL multipliers mu besides lambda */
    /* Text for the integrators' summaries and citations: the formulation in a
     * sentence ("the index-2 formulation") and its short name ("the index-2
     * form"); its equations in Arnold 2016 [arnold2016dae] (Simeon et al.), "(79)" or "(79),
     * (88)-(91)"; MBS_DAE_PROJECTION: the formulation projected and what the
     * projection does. */
    const char *title, *form, *eqs;
    const mbs_dae_formulation *base;
    const char *projection;
    mbs_param_list params;      /* its own parameters (after the integrator's first ones) */
};

typedef struct mbs_dae_integrator mbs_dae_integrator;
struct mbs_dae_integrator {
    const char *name;           /* the name after '/': "radau5" */
    /* Name on a formulation with MBS_DAE_FIXED_H, where this fixed-step member is
     * the family's only method (bdf-fixed is bdf there); NULL: name. */
    const char *fixed_h_name;
    unsigned runs_on;           /* MBS_DAE_EF and/or MBS_DAE_ACCEL */
    unsigned handles;           /* MBS_DAE_PROJECTION, MBS_DAE_FIXED_H, MBS_DAE_EXTENDED */
    int max_index;              /* highest algebraic index it integrates */
    const char *only;           /* registered with this formulation alone (NULL: every one
                                   that fits) */
    unsigned flags;             /* MBS_M_* of its methods (fixed step or adaptive, ...) */
    double order[4][3];         /* nominal orders in q, v, lambda by the formulation's index */
    /* Parameters: params, then the formulation's, then form_params when the
     * formulation provides MBS_DAE_EF (the iteration-matrix choices), then
     * tail_params; a name that comes again keeps its first definition (so an
     * integrator's params replace the formulation's of the same name). */
    mbs_param_list params, form_params, tail_params;
    const mbs_method_ops *ops;
    const void *variant;        /* the integrator's own settings */
    const char *summary, *citation; /* for describe() */
    /* Summary and citation of FORMULATION/name (truncated to ns, nc bytes). */
    void (*describe)(const mbs_dae_integrator *in, const mbs_dae_formulation *f, char *summary,
                     size_t ns, char *citation, size_t nc);
};

/* The variant of a composed method: its formulation and its integrator. */
typedef struct mbs_dae_method {
    const mbs_dae_formulation *formulation;
    const mbs_dae_integrator *integrator;
} mbs_dae_method;

/* "Eq." for one equation of eqs ("(79)"), "Eqs." for several ("(83)-(84)",
 * "(79), (88)-(91)"). */
static inline const char *mbs_dae_eq_word(const char *eqs)
{
    for (const char *c = eqs + 1; *c; c++)
        if (*c == '(' || *c == '-')
            return "Eqs.";
    return "Eq.";
}

#endif
