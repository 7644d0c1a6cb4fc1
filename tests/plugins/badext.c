/* Test plugin: the right API version but a shorter mbs_extension, as when a
 * problem built against older headers hands the host an extension without its
 * last callback (a bad plugin). */
#include <mbsbench/mbsbench.h>

const mbs_plugin_abi mbs_plugin_abi_info = {
    .version = MBS_API_VERSION,
    .problem_def = sizeof(mbs_problem_def),
    .problem = sizeof(mbs_problem),
    .method_def = sizeof(mbs_method_def),
    .method_ops = sizeof(mbs_method_ops),
    .ctx = sizeof(mbs_ctx),
    .settings = sizeof(mbs_settings),
    .counters = sizeof(mbs_counters),
    .params = sizeof(mbs_params),
    .param_def = sizeof(mbs_param_def),
    .tableau = sizeof(mbs_tableau),
    .extension = sizeof(mbs_extension) - sizeof(void *),
};

int mbs_plugin_init(mbs_plugin_host *host)
{
    return mbs_plugin_error(host, "must not be called");
}
