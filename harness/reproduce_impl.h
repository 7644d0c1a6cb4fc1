/* Private to harness/reproduce*.c: a reproduction's expectations (.expect file,
 * see reproduce.h) as parsed by reproduce.c and run by reproduce_cmd.c. */
#ifndef MBS_REPRODUCE_IMPL_H
#define MBS_REPRODUCE_IMPL_H

#include <stddef.h>

enum { MAX_QUANT = 64, MAX_WITH = 8, MAX_FACTORS = 9 };

typedef struct quantity {
    char name[96], run[512], field[64], extract[64], read[512];
    double published, rtol, atol; /* published: only what the source printed (NaN: none) */
    double bound;     /* a derived acceptance value judged instead of published (NaN: none) */
    char rule[512];   /* how bound was derived (required with bound) */
    char with[MAX_WITH][512]; /* further runs for combine = ratio|spread */
    int nwith;
    char combine[16];  /* "", "ratio" or "spread" */
    char relation[4];  /* "", "<" or ">": a one-sided bound instead of rtol/atol */
    int info;          /* verdict = info: printed, never judged */
    double factors[MAX_FACTORS]; /* tol_factors: the runs at tol (h) x each factor, */
    int nfactors;                /* values combined by their geometric mean (0: off) */
} quantity;

typedef struct expect {
    char title[256], citation[512], suite[1024];
    quantity q[MAX_QUANT];
    int n;
    char err[2048];
} expect;

/* Parse an .expect file into e (0, or non-zero with e->err filled). */
int mbs_repro_load_expect(const char *path, expect *e);
/* Non-zero when every method and problem the reproduction needs is registered;
 * otherwise 0 and the reason in why. */
int mbs_repro_available(const expect *e, char *why, size_t len);

#endif
