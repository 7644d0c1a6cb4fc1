/* Run-time additions to the method registry, for the plugin loader
 * (harness/plugin.c).  Not part of the public API: plugins call
 * mbs_plugin_add_method (harness/plugin.h). */
#ifndef MBS_METHODS_REGISTRY_H
#define MBS_METHODS_REGISTRY_H

#include <stddef.h>

#include "framework/method.h"

enum { MBS_MAX_PLUGIN_METHODS = 256 };

/* Append m (owned by the caller, kept until removed) after the built-in
 * methods; owner names the plugin in messages.  MBS_BAD_INPUT with a one-line
 * message naming the bad value: a bad name, missing ops, not exactly one of
 * fixed-step/adaptive, a name already registered, a full table. */
int mbs_method_register(const mbs_method_def *m, const char *owner, char *err, size_t errlen);
/* Remove the entries from index n on (n >= the built-in count). */
void mbs_method_registry_truncate(size_t n);
size_t mbs_method_builtin_count(void);
/* The plugin that registered method i, or NULL for a built-in one. */
const char *mbs_method_owner(size_t i);

#endif
