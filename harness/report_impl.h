/* Private to harness/report*.c: the report's context, shared by report.c
 * (figures, assembly of index.md/index.html) and report_tables.c (orders and
 * tolerance exponents, tolerance proportionality, digits at fixed cost, drift
 * exponents, failures, environment). */
#ifndef MBS_REPORT_IMPL_H
#define MBS_REPORT_IMPL_H

#include <stdio.h>

#include "results.h"

enum { MAXN = 64, MAXLEV = 32, MAXCOL = 128 };

typedef struct names {
    char s[MAXN][512];
    int n;
} names;


extern const char *const mbs_report_groups[3];
extern const char *const mbs_report_group_tex[3];
extern const char *const mbs_report_group_gp[3];

/* How a run was stepped: a fixed step h, or a tolerance (with its atol when set
 * apart, and the tolerance mode).  Two runs with equal settings, problem and t_end
 * are identical runs up to the method. */
typedef struct setting {
    int adaptive;  /* 0: h, 1: tol */
    double x;      /* h or tol */
    double atol;   /* NaN: atol = tol */
    int global;    /* tol_mode global */
} setting;

/* A column of a comparison table: one problem at one t_end, and the common runs
 * every method's cell in it is taken from: one setting per kind (drift), or the
 * common levels of the refinement series (orders, tolerance proportionality). */
typedef struct tcol {
    int p;
    double t_end;
    int multi;               /* the problem has several columns: headers name t_end */
    setting one[2];          /* [0] fixed step, [1] tolerance; x NaN: none */
    setting lev[2][MAXLEV];  /* common levels, decreasing x */
    int nlev[2];
    double ref_cost;         /* digits at fixed cost: force evaluations */
} tcol;

typedef struct ctx {
    const mbs_results *r;
    const char *out;
    names probs, meths;
    mbs_err_kind err;  /* the error of the tables (report --error) */
    tcol cols[MAXCOL];  /* the columns of the table being written */
    int ncol;
    FILE *gp;        /* gnuplot script */
    int n_plots;
    char plots[96][96]; /* file stems of the figures, with captions below */
    char captions[96][256];
} ctx;

typedef struct pt {
    double x, y;
    int run; /* the record's run index */
} pt;

/* The comparison tables: columns chosen for identical runs, one cell per method. */
typedef enum table_kind { TABLE_ORDERS, TABLE_DIGITS, TABLE_DRIFT } table_kind;
void mbs_report_columns(ctx *c, table_kind t);
void mbs_report_md_table(ctx *c, FILE *f, table_kind t);
void mbs_report_tex_table(ctx *c, FILE *f, table_kind t, const char *caption, const char *label);
/* "Runs compared" under a table: each column's common setting. */
void mbs_report_runs_compared(ctx *c, FILE *f, table_kind t);
/* The tolerance-proportionality table (adaptive methods: exponent with 95% CI per
 * group, err_q/tol at each common tolerance, the runs). */
void mbs_report_tol_table(ctx *c, FILE *f);

int mbs_report_name_index(names *v, const char *s, int add);
int mbs_report_wp_points(ctx *c, int p, int m, double t_end, const char *cost, mbs_err_kind k,
                         const char *group, pt *out);
void mbs_report_environment(ctx *c, FILE *md);
void mbs_report_failures(ctx *c, FILE *md, FILE *tex);

#endif
