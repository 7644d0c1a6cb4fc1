/* Plugins: problems and methods from a shared object.
 *
 * A plugin is a shared object built against the installed headers
 * (`pkg-config --cflags --libs mbsbench`; docs/adding-a-problem.md,
 * docs/adding-a-method.md).  It defines two symbols:
 *
 *     #include <mbsbench/mbsbench.h>
 *     MBS_PLUGIN_DEFINE_ABI();                   the API version and contract
 *                                                layout it was compiled against
 *     int mbs_plugin_init(mbs_plugin_host *host) registers its entries:
 *     {
 *         return mbs_plugin_add_problem(host, &my_problem);   (0 = success)
 *     }
 *
 * `mbsbench --plugin PATH.so COMMAND ...` (repeatable, any command) and
 * `plugins = PATH.so ...` in a suite's [suite] section load it before the command
 * runs: the loader dlopen()s the file, compares its mbs_plugin_abi with the
 * running library's (the version, then the size of every contract struct),
 * calls mbs_plugin_init and adds the entries to the registries, where every
 * command, every sweep worker (fork()ed) and `check-problem` see them exactly like
 * built-in ones.  The descriptors must stay valid while the plugin is loaded
 * (static const storage in the plugin is the normal case).  A missing file, a
 * missing symbol, a version or layout mismatch, a bad descriptor or a name that
 * is already registered is a one-line error naming the plugin and the bad value,
 * and nothing of that plugin stays registered.
 *
 * The registries are process-wide and append-only (methods/registry.c says why):
 * plugins are loaded at start-up, before any run. */
#ifndef MBS_PLUGIN_H
#define MBS_PLUGIN_H

#include <stddef.h>

#include "../core/param.h"
#include "../core/status.h"
#include "../core/version.h"
#include "../methods/framework/method.h"
#include "../methods/integrators/explicit/tableau.h"
#include "../problems/problem.h"

/* The layout a plugin was compiled against.  `version` stays the first member
 * in every version: the loader reads it before anything else. */
typedef struct mbs_plugin_abi {
    int version; /* MBS_API_VERSION */
    size_t problem_def, problem, method_def, method_ops, ctx, settings, counters, params,
        param_def, tableau, extension;
} mbs_plugin_abi;

#define MBS_PLUGIN_ABI_CURRENT                                                               \
    {                                                                                        \
        MBS_API_VERSION, sizeof(mbs_problem_def), sizeof(mbs_problem),                       \
            sizeof(mbs_method_def), sizeof(mbs_method_ops), sizeof(mbs_ctx),                 \
            sizeof(mbs_settings), sizeof(mbs_counters), sizeof(mbs_params),                  \
            sizeof(mbs_param_def), sizeof(mbs_tableau), sizeof(mbs_extension)                \
    }

/* The symbols a plugin defines (names for dlsym). */
#define MBS_PLUGIN_ABI_SYMBOL "mbs_plugin_abi_info"
#define MBS_PLUGIN_INIT_SYMBOL "mbs_plugin_init"

typedef struct mbs_plugin_host mbs_plugin_host;

extern const mbs_plugin_abi mbs_plugin_abi_info;
int mbs_plugin_init(mbs_plugin_host *host);
#define MBS_PLUGIN_DEFINE_ABI() const mbs_plugin_abi mbs_plugin_abi_info = MBS_PLUGIN_ABI_CURRENT

/* Called by a plugin's mbs_plugin_init: add one problem or method (the
 * descriptor stays owned by the plugin).  Returns MBS_OK, or MBS_BAD_INPUT after
 * recording a one-line message (bad name, NULL required callback, name already
 * registered, ...); mbs_plugin_init should then return that status. */
int mbs_plugin_add_problem(mbs_plugin_host *host, const mbs_problem_def *def);
int mbs_plugin_add_method(mbs_plugin_host *host, const mbs_method_def *def);
/* An explicit Runge-Kutta method as data (methods/integrators/explicit/tableau.h): the tableau is
 * validated (structure, row sums, order conditions up to its claimed orders)
 * and copied, and FORMULATION/tab->name is added for every ODE formulation
 * (index1, qr, dca, ...: methods/integrators/explicit/explicit.h), adaptive when tab->bhat is given.
 * The copies belong to the loader; the plugin's tableau need not outlive the
 * call. */
int mbs_plugin_add_tableau(mbs_plugin_host *host, const mbs_tableau *tab);
/* A plugin's own error: recorded as the load error (printf format). */
int mbs_plugin_error(mbs_plugin_host *host, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- the loader (the mbsbench executable, or a program of one's own) ---------- */

/* Load the plugin at `path` (a path, not a name searched in the library path:
 * a name without '/' is taken relative to the current directory).  Loading the
 * same file twice is a no-op.  Returns MBS_OK, or MBS_BAD_INPUT with a one-line
 * message naming the plugin and the bad value in err. */
int mbs_plugin_load(const char *path, char *err, size_t errlen);
/* Number of loaded plugins and the resolved path of plugin i. */
size_t mbs_plugin_count(void);
const char *mbs_plugin_path(size_t i);
/* Remove every plugin entry from the registries and close the plugins (tests). */
void mbs_plugin_unload_all(void);
/* Take every `--plugin PATH` / `--plugin=PATH` out of argv (argc updated) and
 * load them in order.  Returns 0, or 2 after printing one line per error. */
int mbs_plugin_take_options(int *argc, char **argv);

#endif
