/* Mechanism files: the builder's internal interface, shared by mech_build.c
 * (expansion, the [mechanism] and [point] sections, assembly of the model),
 * mech_util.c (values, names, affine expressions, rows), mech_frame.c (body
 * frames, rigid-body rows, mass) and mech_joint.c (joints, drivers, forces,
 * reported quantities).  The method is described in mech_build.c. */
#ifndef MBS_MECH_BUILD_H
#define MBS_MECH_BUILD_H

#include <stddef.h>

#include "mech_impl.h"

enum { MAX_EXPAND = 1000000, NAME_LEN = 64 };

typedef struct elem {
    char name[NAME_LEN];
    int vec, ground, line;
    double x0[3];
    size_t blk;
    double vel[3];
    int has_vel;
} elem;

typedef struct body {
    char name[NAME_LEN];
    int line, parent, ground, need_frame;
    size_t *el;
    size_t nel, capel;
    double m, com[3], S[9]; /* mass, centre of mass, second moment about the com */
    int has_mass;
    double omega[3], vcom[3];
    int has_omega, has_vcom;
    /* basis (after make_basis) */
    long r0;
    int nd, K;
    long dir_el[3], dir_base[3]; /* direction k = elem dir_el - elem dir_base (or a vector) */
    double ref[3][3];            /* reference values of the directions (K of them) */
    double Xp[3][3];             /* local coordinates X = Xp (r - r0) */
    mech_aff a_r0, a_dir[3];
} body;

typedef struct vobs {
    size_t i, j; /* coordinate i (and j, with -1, for relative observations) */
    int rel;
    double b;
} vobs;

/* A rigid-body row x_k . x_l = const by the elements of its two directions
 * (bodies that share both directions would state it twice). */
typedef struct rigid_key {
    long e1, b1, e2, b2;
} rigid_key;

typedef struct builder {
    const char *path;
    mech_scope sc;
    const char **pname;
    double *pval;
    mech_text ex; /* the sections after expansion of `for` */
    int dim;
    double grav[3];
    elem *el;
    size_t nel, capel;
    body *bd;
    size_t nbd, capbd;
    mech_model *m;
    mech_row *rows;
    size_t nrow, caprow;
    mech_mblock *mb;
    size_t nmb, capmb;
    vobs *obs;
    size_t nobs, capobs;
    rigid_key *rk;
    size_t nrk, caprk;
    int failed, status;
    char *err;
    size_t errlen;
} builder;

/* A joint, driver or force between the two passes of the builder. */
typedef struct pending {
    const mech_section *s;
    int kind; /* 0 joint, 1 driver, 2 force */
    int type;
    long A, B;       /* bodies (-1: none) */
    long P, Q, U, W; /* elements */
    double e[3];     /* reference unit vector normal to the axis */
} pending;

enum { J_REVOLUTE, J_SPHERICAL, J_UNIVERSAL, J_PRISMATIC, J_CYLINDRICAL, J_WELD, J_POL,
       J_DISTANCE };

void mech_aff_add(builder *b, mech_aff *dst, const mech_aff *src, double a, double bb);
void mech_aff_const(mech_aff *out, const double *x);
void mech_aff_elem(const builder *b, long e, mech_aff *out);
void mech_aff_zero(mech_aff *e);
void mech_attach(builder *b, long bi, long e);
void mech_berr(builder *b, int line, const char *fmt, ...);
void mech_body_aff(builder *b, const body *bd, const double *x, int vec, mech_aff *out);
void mech_body_mass(builder *b, long bi, double *fg);
long mech_body_ref(builder *b, const char *name, int line);
long mech_body_root(builder *b, long i);
void mech_body_rows(builder *b, long bi);
void mech_cross3(const double *x, const double *y, double *z);
void mech_do_body(builder *b, const mech_section *s);
void mech_do_joint(builder *b, const mech_section *s, pending *pj);
void mech_do_report(builder *b, const mech_section *s, pending *pend, size_t np);
double mech_dot3(const double *x, const double *y);
void mech_driver_rows(builder *b, const mech_section *s, pending *pend, size_t np);
long mech_elem_ref(builder *b, const char *v, int line, int vec, const char *newname, int on_ground);
long mech_find_body(const builder *b, const char *name);
long mech_find_elem(const builder *b, const char *name);
void mech_force_item(builder *b, const mech_section *s, pending *pend, size_t np, double *fc);
int mech_grow(builder *b, void **p, size_t *cap, size_t n, size_t sz);
int mech_inertia(builder *b, const char *v, int line, double *Iout);
long mech_joint_named(builder *b, pending *pend, size_t np, const char *name, int line, int want_revolute);
void mech_joint_rows(builder *b, pending *pj);
const char *mech_key(builder *b, const mech_section *s, const char *k, int *line);
void mech_known_keys(builder *b, const mech_section *s, const char *const *keys);
void mech_make_basis(builder *b, long bi, size_t *nq);
int mech_name_ok(builder *b, const char *name, int line, const char *what);
long mech_new_elem(builder *b, const char *name, int vec, int ground, const double *x0, int line);
mech_row *mech_new_row(builder *b);
void mech_nomem(builder *b);
double mech_norm3(const double *x);
int mech_numbers(builder *b, const char *v, int line, const char *what, double *out, int nmin, int nmax, int *got);
void mech_pair_apply(int dim, double a, double bb, const double *x, double *y);
long mech_point_named(builder *b, const char *name, int line);
void mech_row_dot(builder *b, const mech_aff *a, const mech_aff *bv, double c, int line);
void mech_rows_zero(builder *b, const mech_aff *d, int line);
void mech_second_moment(builder *b, const double *Ig, double *S);
int mech_split(const char *s, char *buf, size_t len, const char **item, int maxn);
int mech_vec_of(builder *b, const char *v, int line, const char *what, double *x);

#endif
