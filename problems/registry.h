/* Run-time additions to the problem registry, for the plugin loader
 * (harness/plugin.c).  Not part of the public API: plugins call
 * mbs_plugin_add_problem (harness/plugin.h). */
#ifndef MBS_PROBLEMS_REGISTRY_H
#define MBS_PROBLEMS_REGISTRY_H

#include <stddef.h>

#include "problem.h"

enum { MBS_MAX_PLUGIN_PROBLEMS = 64, MBS_MAX_MECH_PROBLEMS = 256 };

/* Append d (owned by the caller, kept until removed) after the built-in
 * problems; owner names the plugin in messages.  MBS_BAD_INPUT with a one-line
 * message naming the bad value: a bad name, a NULL required callback, a flag
 * without its callback, a name already registered, a full table. */
int mbs_problem_register(const mbs_problem_def *d, const char *owner, char *err,
                         size_t errlen);
/* Append the definition of a mechanism file (problems/mech.h), after the built-in
 * problems and before the plugins'; the same checks as mbs_problem_register. */
int mbs_problem_register_mechanism(const mbs_problem_def *d, char *err, size_t errlen);
/* Remove every mechanism problem (mbs_mech_unload_all). */
void mbs_problem_mechanisms_clear(void);
/* Remove the plugin entries from index n on (n >= the built-in count). */
void mbs_problem_registry_truncate(size_t n);
/* The built-in problems and those of mechanism files (plugins come after them). */
size_t mbs_problem_builtin_count(void);
/* The plugin that registered problem i, or NULL for a built-in one. */
const char *mbs_problem_owner(size_t i);
/* 1 when name is 1-63 characters of [A-Za-z0-9._/+-] (what "NAME:k=v" parsing
 * can name). */
int mbs_registry_name_ok(const char *name);

#endif
