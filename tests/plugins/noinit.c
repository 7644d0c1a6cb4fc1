/* Test plugin: the ABI symbol but no mbs_plugin_init (a bad plugin). */
#include <mbsbench/mbsbench.h>

MBS_PLUGIN_DEFINE_ABI();
