/* Private to harness/report*.c: the report's context, shared
 * by report.c (figures, assembly of index.md/index.html) and report_tables.c
 * (orders, digits at fixed cost, drift exponents, failures, environment). */
#ifndef MBS_REPORT_IMPL_H
#define MBS_REPORT_IMPL_H

#include <stdio.h>

#include "results.h"

enum { MAXN = 64 };

typedef struct names {
    char s[MAXN][512];
    int n;
} names;


extern const char *const mbs_report_groups[3];
extern const char *const mbs_report_group_tex[3];
extern const char *const mbs_report_group_gp[3];

typedef struct ctx {
    const mbs_results *r;
    const char *out;
    names probs, meths;
    FILE *gp;        /* gnuplot script */
    int n_plots;
    char plots[96][96]; /* file stems of the figures, with captions below */
    char captions[96][256];
} ctx;

typedef struct pt {
    double x, y;
} pt;

/* One cell of a problem x method table. */
typedef void (*cell_fn)(ctx *c, int p, int m, char *buf, size_t len, int tex);
void mbs_report_order_cell(ctx *c, int p, int m, char *buf, size_t len, int tex);
void mbs_report_digits_cell(ctx *c, int p, int m, char *buf, size_t len, int tex);
void mbs_report_drift_cell(ctx *c, int p, int m, char *buf, size_t len, int tex);

int mbs_report_name_index(names *v, const char *s, int add);
int mbs_report_wp_points(ctx *c, int p, int m, double t_end, const char *cost, const char *group,
                     pt *out);
void mbs_report_environment(ctx *c, FILE *md);
void mbs_report_failures(ctx *c, FILE *md, FILE *tex);
void mbs_report_md_table(ctx *c, FILE *f, cell_fn cell);
double mbs_report_ref_cost(ctx *c, int p);
void mbs_report_tex_table(ctx *c, FILE *f, cell_fn cell, const char *caption, const char *label);

#endif
