/* libFuzzer target: "problem:k=v,..." and "method:k=v,..." parsing.  The input is
 * split at its first newline into a problem and a method specification. */
#include <stddef.h>
#include <gsl/gsl_errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/framework/method.h"
#include "../problems/problem.h"

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
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *method = strchr(text, '\n');
    if (method)
        *method++ = '\0';
    char err[512];
    mbs_problem pb;
    if (mbs_problem_open(&pb, text, err, sizeof err) == 0)
        mbs_problem_close(&pb);
    if (method) {
        const mbs_method_def *m;
        mbs_params p;
        (void)mbs_method_parse(method, &m, &p, err, sizeof err);
    }
    free(text);
    return 0;
}
