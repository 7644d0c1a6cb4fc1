/* mbs_run: the tolerance-mode dispatch above the two drivers (run.c
 * and globaltol.c no longer call each other). */
#include "run.h"

int mbs_run(const mbs_run_spec *spec, mbs_record *rec, char *err, size_t errlen)
{
    if (spec->tol_mode == MBS_TOL_GLOBAL)
        return mbs_run_global(spec, rec, err, errlen);
    return mbs_run_local(spec, rec, err, errlen);
}
