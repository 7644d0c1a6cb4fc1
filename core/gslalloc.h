/* Allocation wrappers for GSL objects whose constructors leak on allocation
 * failure (found by tests/alloc/allocfail.c).
 *
 * gsl_matrix_alloc leaks its struct when the block allocation fails (GSL 2.7,
 * matrix/init_source.c); mbs_matrix_alloc allocates the block first so that an
 * allocation failure leaks nothing.  The result is freed with gsl_matrix_free. */
#ifndef MBS_GSLALLOC_H
#define MBS_GSLALLOC_H

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_matrix_complex_double.h>
#include <stdlib.h>

static inline gsl_matrix *mbs_matrix_alloc(size_t n1, size_t n2)
{
    gsl_block *b = gsl_block_alloc(n1 * n2);
    if (!b)
        return NULL;
    gsl_matrix *m = gsl_matrix_alloc_from_block(b, 0, n1, n2, n2);
    if (!m) {
        gsl_block_free(b);
        return NULL;
    }
    m->owner = 1; /* gsl_matrix_free frees the block too */
    return m;
}

/* The same for complex matrices (gsl_matrix_complex_alloc leaks likewise). */
static inline gsl_matrix_complex *mbs_matrix_complex_alloc(size_t n1, size_t n2)
{
    gsl_block_complex *b = gsl_block_complex_alloc(n1 * n2);
    if (!b)
        return NULL;
    gsl_matrix_complex *m = gsl_matrix_complex_alloc_from_block(b, 0, n1, n2, n2);
    if (!m) {
        gsl_block_complex_free(b);
        return NULL;
    }
    m->owner = 1;
    return m;
}

/* gsl_eigen_symmv_alloc leaks its workspace struct when an array allocation
 * fails (GSL 2.7, eigen/symmv.c).  The workspace is a public struct of four
 * n-arrays; this allocates it the same way, leaking nothing on failure.  Free
 * with gsl_eigen_symmv_free. */
static inline gsl_eigen_symmv_workspace *mbs_eigen_symmv_alloc(size_t n)
{
    if (n == 0)
        return NULL;
    gsl_eigen_symmv_workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->size = n;
    w->d = malloc(n * sizeof(double));
    w->sd = malloc(n * sizeof(double));
    w->gc = malloc(n * sizeof(double));
    w->gs = malloc(n * sizeof(double));
    if (!w->d || !w->sd || !w->gc || !w->gs) {
        gsl_eigen_symmv_free(w); /* frees the four arrays (NULL is fine) and w */
        return NULL;
    }
    return w;
}

#endif
