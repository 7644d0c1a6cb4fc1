/* Test plugin: the right API version but another layout of mbs_problem_def, as
 * when a contract gained a callback without a version bump (a bad plugin). */
#include <mbsbench/mbsbench.h>

/* How much each contract struct is short (badext.c includes this file with
 * mbs_extension short instead). */
#ifndef SHORT_PROBLEM_DEF
#define SHORT_PROBLEM_DEF sizeof(void *)
#define SHORT_EXTENSION 0
#endif

const mbs_plugin_abi mbs_plugin_abi_info = {
    .version = MBS_API_VERSION,
    .problem_def = sizeof(mbs_problem_def) - SHORT_PROBLEM_DEF,
    .problem = sizeof(mbs_problem),
    .method_def = sizeof(mbs_method_def),
    .method_ops = sizeof(mbs_method_ops),
    .ctx = sizeof(mbs_ctx),
    .settings = sizeof(mbs_settings),
    .counters = sizeof(mbs_counters),
    .params = sizeof(mbs_params),
    .param_def = sizeof(mbs_param_def),
    .tableau = sizeof(mbs_tableau),
    .extension = sizeof(mbs_extension) - SHORT_EXTENSION,
};

int mbs_plugin_init(mbs_plugin_host *host)
{
    return mbs_plugin_error(host, "must not be called");
}
