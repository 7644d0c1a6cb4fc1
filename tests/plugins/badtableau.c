/* Test plugin: Ralston's third-order tableau claiming order 4 (a bad plugin):
 * the order conditions of the fourth order fail and the load is refused. */
#include <mbsbench/mbsbench.h>

static const double c[] = {0.0, 0.5, 0.75};
static const double A[] = {0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.75, 0.0};
static const double b[] = {2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0};

MBS_PLUGIN_DEFINE_ABI();

int mbs_plugin_init(mbs_plugin_host *host)
{
    const mbs_tableau t = {.name = "ralston4", .stages = 3, .order = 4, .c = c, .A = A, .b = b};
    return mbs_plugin_add_tableau(host, &t);
}
