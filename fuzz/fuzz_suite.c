/* libFuzzer target: the suite-file parser (mbs_suite_parse) on arbitrary bytes. */
#include <stddef.h>
#include <gsl/gsl_errno.h>
#include <stdint.h>

#include "../harness/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* As the mbsbench executable: GSL errors are return codes, never abort(). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    gsl_set_error_handler_off();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mbs_suite s;
    static char err[1 << 16];
    if (mbs_suite_parse((const char *)data, size, "fuzz.suite", &s, err, sizeof err) == 0)
        mbs_suite_free(&s);
    return 0;
}
