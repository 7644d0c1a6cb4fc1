/* One Check runner for all suites (tests/suites.def). */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../problems/mech.h"

#include "testutil.h"

int main(void)
{
    gsl_set_error_handler_off(); /* as the mbsbench executable does */
    char err[1024]; /* the shipped mechanism files, as the executable registers them */
    if (mbs_mech_register_dir("mechanisms", err, sizeof err) > 0) {
        fprintf(stderr, "mechanisms/: %s\n", err);
        return EXIT_FAILURE;
    }
    SRunner *sr = NULL;
#define MBS_SUITE(ctor)                                                                   \
    if (!sr)                                                                              \
        sr = srunner_create(ctor());                                                      \
    else                                                                                  \
        srunner_add_suite(sr, ctor());
#include "suites.def"
#undef MBS_SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    mbs_mech_unload_all();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
