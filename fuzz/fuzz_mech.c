/* libFuzzer target: the mechanism-file reader and builder (problems/mech.h) on
 * arbitrary bytes, with the file's default parameters. */
#include <stddef.h>
#include <gsl/gsl_errno.h>
#include <stdint.h>

#include "../problems/mech.h"

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
    static char err[1 << 12];
    (void)mbs_mech_check_text((const char *)data, size, "fuzz.mech", err, sizeof err);
    return 0;
}
