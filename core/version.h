/* The version of mbsbench's public API and ABI: the problem contract
 * (problems/problem.h), the method contract (methods/framework/method.h), the linear-solver
 * contract (methods/linsol/linsol.h), the run/record API (harness/run.h) and the plugin
 * API (harness/plugin.h), installed under <prefix>/include/mbsbench/.
 *
 * MBS_API_VERSION is the one place the number lives: the Makefile reads it for
 * the shared library's soname (libmbsbench.so.MBS_API_VERSION) and mbsbench.pc,
 * and the plugin loader compares a plugin's compiled-in value with the running
 * library's (mbs_api_version()).  Bump it on any change that breaks code built
 * against the previous headers: a removed or reordered field or callback, a
 * changed signature or meaning.  A field added at the end of a contract struct
 * changes its size; the loader also compares the sizes of the contract structs
 * (harness/plugin.h, mbs_plugin_abi), so such a plugin is refused even when the
 * number was not bumped.  A field added to mbs_plugin_abi itself needs the bump (a
 * plugin built before it has no such field to read).  Version 2: mbs_extension gained
 * jac and mbs_plugin_abi its size. */
#ifndef MBS_VERSION_H
#define MBS_VERSION_H

#define MBS_API_VERSION 2

/* The API version of the library actually linked or running (core/param.c). */
int mbs_api_version(void);

#endif
