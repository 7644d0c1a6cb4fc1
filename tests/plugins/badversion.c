/* Test plugin: built for another API version (a bad plugin). */
#include <mbsbench/mbsbench.h>

const mbs_plugin_abi mbs_plugin_abi_info = {.version = MBS_API_VERSION + 1};

int mbs_plugin_init(mbs_plugin_host *host)
{
    return mbs_plugin_error(host, "must not be called");
}
