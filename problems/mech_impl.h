/* Mechanism files: internal data of the loader (problems/mech.h).
 *
 * A model lives in natural coordinates (García de Jalón and Bayo 1994
 * [garciadejalon1994], Ch. 2-3): q holds the moving basic points and unit vectors
 * (2 or 3 numbers each), ground elements are constants.  Every body-fixed point
 * or vector is then an affine function of q,
 *
 *     e(q) = c + sum_i C_i q[blk_i .. blk_i + dim),   C_i = a_i I + b_i J,
 *
 * with J the rotation by +90 degrees in the plane (b_i = 0 in space), so the mass
 * matrix is constant and every constraint row is
 *
 *     g_r(t, q) = sum_k f_k(t) a_k(q) . b_k(q) + f_0(t)
 *
 * with affine a_k, b_k: at most quadratic in q.  G is linear in q and
 * gamma = -(G v)_q v - 2 G_t v - g_tt is exact (mech_eval.c). */
#ifndef MBS_MECH_IMPL_H
#define MBS_MECH_IMPL_H

#include <stddef.h>

#include "mech.h"
#include "problem.h"

/* ---- expressions (mech_expr.c) --------------------------------------------- */

/* A value and its first two derivatives in t. */
typedef struct mech_jet {
    double v, d1, d2;
} mech_jet;

typedef struct mech_expr mech_expr;

/* Names an expression may use: parameters (values fixed), and t when allow_t. */
typedef struct mech_scope {
    const char *const *names;
    const double *values;
    size_t n;
    int allow_t;
} mech_scope;

/* Compile text; NULL with a message in err (no file or line: the caller adds them). */
mech_expr *mech_expr_parse(const char *text, const mech_scope *sc, char *err, size_t errlen);
void mech_expr_free(mech_expr *e);
int mech_expr_uses_t(const mech_expr *e);
mech_jet mech_expr_jet(const mech_expr *e, double t);
/* Parse and evaluate a constant expression (no t).  Returns 0 or -1 with err. */
int mech_eval_const(const char *text, const mech_scope *sc, double *out, char *err,
                    size_t errlen);

/* ---- the INI text (mech_parse.c) ------------------------------------------ */

typedef struct mech_kv {
    char *key, *val;
    int line;
} mech_kv;

typedef struct mech_section {
    char *type, *name; /* "[body crank]": type "body", name "crank" (name may be "") */
    int line;
    mech_kv *kv;
    size_t n, cap;
    int used; /* keys consumed (bit per key, for "unknown key" messages) */
} mech_section;

typedef struct mech_text {
    char *path; /* as given (messages) */
    mech_section *s;
    size_t n, cap;
} mech_text;

/* Read a file (or a string: text != NULL) into sections.  Returns MBS_OK or
 * MBS_BAD_INPUT / MBS_NO_MEMORY with "PATH:LINE: message" in err. */
int mech_text_read(mech_text *tx, const char *path, const char *text, size_t len, char *err,
                   size_t errlen);
void mech_text_free(mech_text *tx);
/* The value of key in section s and its line (NULL when absent). */
const char *mech_get(const mech_section *s, const char *key, int *line);

/* ---- the built model (mech_build.c) ------------------------------------------ */

enum { MECH_MAXT = 12 };

typedef struct mech_term {
    size_t blk;  /* first coordinate of the element in q */
    double a, b; /* coefficient a I + b J */
} mech_term;

typedef struct mech_aff {
    double c[3];
    int n;
    mech_term t[MECH_MAXT];
} mech_aff;

/* Time functions of rheonomic rows and applied torques: op(expr(t)). */
enum { MECH_F_ID, MECH_F_SIN, MECH_F_NEGCOS, MECH_F_NEGSQ };
typedef struct mech_tfun {
    mech_expr *e; /* owned by the model's expression list */
    int op;
} mech_tfun;

typedef struct mech_cterm {
    mech_aff a, b;
    int fn; /* index into the model's time functions, -1: factor 1 */
} mech_cterm;

typedef struct mech_row {
    int nt;
    mech_cterm t[2];
    int f0;   /* time function added to the row, -1: none */
    double c; /* constant added to the row */
} mech_row;

typedef struct mech_spring {
    mech_aff d; /* P - Q */
    double k, c, l0;
} mech_spring;

typedef struct mech_torque {
    /* torque T(t) about the joint axis on body B, -T on body A: generalised force
     * T J_a^T w for a body-fixed unit vector a normal to the axis and w = axis x a. */
    mech_aff aB, wB, aA, wA;
    int fn; /* time function, or -1 with value */
    double value;
} mech_torque;

/* M as a list of blocks (a I + b J on the coordinates blk_r x blk_c). */
typedef struct mech_mblock {
    size_t r, c;
    double a, b;
} mech_mblock;

enum { MECH_OUT_POS, MECH_OUT_VEL, MECH_OUT_ANGLE };
typedef struct mech_output {
    char name[64];
    int kind;
    int comp;         /* coordinate of a point */
    mech_aff a, b, w; /* position (a), or the angle atan2(b . w, b . a) */
} mech_output;

typedef struct mech_model {
    int dim;
    size_t nq, nl;
    double t0, t_end;
    mech_row *rows;
    mech_mblock *mb;
    size_t nmb;
    double *f_const;  /* gravity and constant forces (n_q); their potential is -f_const . q */
    mech_spring *spr;
    size_t nspr;
    mech_torque *trq;
    size_t ntrq;
    mech_tfun *fun;
    size_t nfun;
    mech_expr **expr; /* every compiled expression (owned) */
    size_t nexpr, capexpr;
    mech_output *out;
    size_t nout;
    const char **out_names; /* NULL-terminated names of out (problem.h reported_names) */
    long output_steps;      /* [mechanism] output_steps (0: the default grid) */
    char reference[64];     /* [mechanism] reference: a reduction (mech_reference.h), or "" */
    int reference_line;
    double *q0, *v0;          /* completed initial values */
    double *lambda0;          /* NULL: the harness computes it */
    double moved_q, moved_v;  /* how far the completion moved q0, v0 (max norm) */
    long rank_defect;         /* n_lambda - rank G(q0); -1: not computed (large model) */
    int singular_mass, conservative, rheonomic, singular_config;
    char **coord_name; /* "x_A", ... (n_q) */
} mech_model;

/* Build the model of a text with the parameter values; returns MBS_OK or an
 * mbs_status with "PATH:LINE: message" in err. */
int mech_build(const mech_text *tx, const mbs_param_def *pd, const double *pv, size_t np,
               mech_model **out, char *err, size_t errlen);
void mech_model_free(mech_model *m);

/* Affine helpers (mech_eval.c). */
void mech_aff_eval(const mech_aff *e, int dim, const double *q, double *out);
void mech_aff_apply(const mech_aff *e, int dim, const double *v, double *out); /* J_e v */

/* Initial values (mech_init.c): complete q0, v0 to consistent ones; rank defect. */
/* obs: nobs triples (i, j, b): v_i = b (j = -1) or v_i - v_j = b. */
int mech_complete_initial(mech_model *m, const double *obs, size_t nobs, char *err,
                          size_t errlen);

/* The problem callbacks (mech_eval.c), on pb->data = mech_model. */
int mech_cb_dims(const mbs_problem *pb, size_t *nq, size_t *nv, size_t *nl);
int mech_cb_initial(const mbs_problem *pb, double *q0, double *v0, double *l0, int *have);
int mech_cb_mass(const mbs_problem *pb, double t, const double *q, gsl_matrix *M);
int mech_cb_force(const mbs_problem *pb, double t, const double *q, const double *v, double *f);
int mech_cb_g(const mbs_problem *pb, double t, const double *q, double *g);
int mech_cb_G(const mbs_problem *pb, double t, const double *q, gsl_matrix *G);
int mech_cb_gamma(const mbs_problem *pb, double t, const double *q, const double *v,
                  double *gam);
int mech_cb_gt(const mbs_problem *pb, double t, const double *q, double *gt);
double mech_cb_energy(const mbs_problem *pb, double t, const double *q, const double *v);
int mech_cb_mass_sparse(const mbs_problem *pb, double t, const double *q, mbs_triplets *M);
int mech_cb_G_sparse(const mbs_problem *pb, double t, const double *q, mbs_triplets *G);
int mech_cb_force_q(const mbs_problem *pb, double t, const double *q, const double *v,
                    gsl_matrix *K);
int mech_cb_force_v(const mbs_problem *pb, double t, const double *q, const double *v,
                    gsl_matrix *D);
int mech_cb_gtlambda_q(const mbs_problem *pb, double t, const double *q, const double *lam,
                       gsl_matrix *K);
int mech_cb_gw_q(const mbs_problem *pb, double t, const double *q, const double *w,
                 gsl_matrix *Z);
int mech_cb_reported(const mbs_problem *pb, double t, const double *q, const double *v,
                     double *out);

#endif
