/* Helpers for the sparse triplet matrices of problems/problem.h (mbs_triplets).
 * A callback filling triplets sets nnz = 0, reserves what it needs (the arrays
 * grow with realloc, so a caller may pass a zero-initialised mbs_triplets) and
 * pushes the entries; the caller releases the arrays with mbs_triplets_free. */
#ifndef MBS_TRIPLETS_H
#define MBS_TRIPLETS_H

#include <stdlib.h>

#include "problem.h"

/* Make room for `more` further entries.  Returns 0 or -1 (out of memory; the
 * triplets are unchanged). */
static inline int mbs_triplets_reserve(mbs_triplets *T, size_t more)
{
    if (T->nnz + more <= T->cap)
        return 0;
    size_t cap = T->nnz + more;
    size_t *row = realloc(T->row, cap * sizeof *row);
    if (!row)
        return -1;
    T->row = row;
    size_t *col = realloc(T->col, cap * sizeof *col);
    if (!col)
        return -1;
    T->col = col;
    double *val = realloc(T->val, cap * sizeof *val);
    if (!val)
        return -1;
    T->val = val;
    T->cap = cap;
    return 0;
}

/* Append one entry; room must have been reserved. */
static inline void mbs_triplets_push(mbs_triplets *T, size_t i, size_t j, double v)
{
    T->row[T->nnz] = i;
    T->col[T->nnz] = j;
    T->val[T->nnz] = v;
    T->nnz++;
}

static inline void mbs_triplets_free(mbs_triplets *T)
{
    free(T->row);
    free(T->col);
    free(T->val);
    T->row = T->col = NULL;
    T->val = NULL;
    T->nnz = T->cap = 0;
}

#endif
