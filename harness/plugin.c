/* The plugin loader (plugin.h): dlopen, ABI check, registration, rollback. */
#define _DEFAULT_SOURCE /* realpath */
#include "plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../methods/integrators/explicit/explicit.h"
#include "../methods/registry.h"
#include "../problems/registry.h"

enum { MBS_MAX_PLUGINS = 32 };

/* The loaded plugins: process-wide like the registries they fill (plugin.h). */
static struct {
    char path[PATH_MAX];
    void *handle;
    mbs_method_set tableaux; /* the methods made from the plugin's tableaux (owned) */
} loaded[MBS_MAX_PLUGINS];
static size_t n_loaded;

struct mbs_plugin_host {
    const char *path;
    mbs_method_set *tableaux;
    char err[512];
    int failed;
};

int mbs_plugin_error(mbs_plugin_host *host, const char *fmt, ...)
{
    if (!host->failed) { /* the first error is the one reported */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(host->err, sizeof host->err, fmt, ap);
        va_end(ap);
        host->failed = 1;
    }
    return MBS_BAD_INPUT;
}

int mbs_plugin_add_problem(mbs_plugin_host *host, const mbs_problem_def *def)
{
    char msg[400];
    if (host->failed)
        return MBS_BAD_INPUT;
    if (mbs_problem_register(def, host->path, msg, sizeof msg) != MBS_OK)
        return mbs_plugin_error(host, "%s", msg);
    return MBS_OK;
}

int mbs_plugin_add_method(mbs_plugin_host *host, const mbs_method_def *def)
{
    char msg[400];
    if (host->failed)
        return MBS_BAD_INPUT;
    if (mbs_method_register(def, host->path, msg, sizeof msg) != MBS_OK)
        return mbs_plugin_error(host, "%s", msg);
    return MBS_OK;
}

int mbs_plugin_add_tableau(mbs_plugin_host *host, const mbs_tableau *tab)
{
    char msg[400];
    if (host->failed)
        return MBS_BAD_INPUT;
    size_t n0 = host->tableaux->n;
    int st = mbs_explicit_register_tableau(host->tableaux, tab, msg, sizeof msg);
    if (st != MBS_OK)
        return mbs_plugin_error(host, "%s", st == MBS_NO_MEMORY ? "out of memory" : msg);
    for (size_t i = n0; i < host->tableaux->n; i++) /* checked free above; owner named */
        if (mbs_method_register(host->tableaux->defs[i], host->path, msg, sizeof msg) != MBS_OK)
            return mbs_plugin_error(host, "%s", msg);
    return MBS_OK;
}

/* Compare the plugin's layout with ours; message names the first difference. */
static int abi_check(const mbs_plugin_abi *p, const char *path, char *err, size_t errlen)
{
    if (p->version != MBS_API_VERSION) {
        snprintf(err, errlen,
                 "plugin '%s' was built for mbsbench API version %d, this mbsbench has API "
                 "version %d: rebuild it against this mbsbench's headers",
                 path, p->version, mbs_api_version());
        return MBS_BAD_INPUT;
    }
    static const mbs_plugin_abi ours = MBS_PLUGIN_ABI_CURRENT;
    const struct {
        const char *name;
        size_t plugin, here;
    } f[] = {{"mbs_problem_def", p->problem_def, ours.problem_def},
             {"mbs_problem", p->problem, ours.problem},
             {"mbs_method_def", p->method_def, ours.method_def},
             {"mbs_method_ops", p->method_ops, ours.method_ops},
             {"mbs_ctx", p->ctx, ours.ctx},
             {"mbs_settings", p->settings, ours.settings},
             {"mbs_counters", p->counters, ours.counters},
             {"mbs_params", p->params, ours.params},
             {"mbs_param_def", p->param_def, ours.param_def},
             {"mbs_tableau", p->tableau, ours.tableau},
             {"mbs_extension", p->extension, ours.extension}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].plugin != f[i].here) {
            snprintf(err, errlen,
                     "plugin '%s' was built against other headers of API version %d "
                     "(sizeof(%s) = %zu there, %zu here): rebuild it against this mbsbench's "
                     "headers",
                     path, p->version, f[i].name, f[i].plugin, f[i].here);
            return MBS_BAD_INPUT;
        }
    return MBS_OK;
}

int mbs_plugin_load(const char *path, char *err, size_t errlen)
{
    char full[PATH_MAX];
    if (!path || !*path) {
        snprintf(err, errlen, "--plugin: empty path");
        return MBS_BAD_INPUT;
    }
    if (!realpath(path, full)) {
        snprintf(err, errlen, "plugin '%s': no such file", path);
        return MBS_BAD_INPUT;
    }
    for (size_t i = 0; i < n_loaded; i++)
        if (strcmp(loaded[i].path, full) == 0)
            return MBS_OK; /* already loaded (suite and command line, a sweep's shards) */
    if (n_loaded >= MBS_MAX_PLUGINS) {
        snprintf(err, errlen, "plugin '%s': more than %d plugins", path, MBS_MAX_PLUGINS);
        return MBS_BAD_INPUT;
    }
    /* RTLD_NOW: an undefined symbol is an error here, not a crash in a run. */
    void *h = dlopen(full, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(err, errlen, "plugin '%s': cannot load: %s", path, why ? why : "dlopen failed");
        return MBS_BAD_INPUT;
    }
    const mbs_plugin_abi *abi = (const mbs_plugin_abi *)dlsym(h, MBS_PLUGIN_ABI_SYMBOL);
    int (*init)(mbs_plugin_host *) = NULL;
    /* ISO C has no conversion from object to function pointers; POSIX dlsym
     * guarantees the representation (copy the bytes). */
    void *sym = dlsym(h, MBS_PLUGIN_INIT_SYMBOL);
    if (sym)
        memcpy(&init, &sym, sizeof init);
    if (!abi || !init) {
        snprintf(err, errlen,
                 "plugin '%s' defines no %s (not an mbsbench plugin: see "
                 "docs/adding-a-method.md)",
                 path, !abi ? MBS_PLUGIN_ABI_SYMBOL " (MBS_PLUGIN_DEFINE_ABI())"
                            : MBS_PLUGIN_INIT_SYMBOL "()");
        dlclose(h);
        return MBS_BAD_INPUT;
    }
    if (abi_check(abi, path, err, errlen) != MBS_OK) {
        dlclose(h);
        return MBS_BAD_INPUT;
    }
    size_t slot = n_loaded;
    snprintf(loaded[slot].path, sizeof loaded[slot].path, "%s", full);
    mbs_plugin_host host = {.path = loaded[slot].path, .tableaux = &loaded[slot].tableaux};
    size_t np = mbs_problem_count(), nm = mbs_method_count();
    int st = init(&host);
    if (st != MBS_OK || host.failed) {
        if (!host.failed)
            snprintf(host.err, sizeof host.err, "mbs_plugin_init returned %d (%s)", st,
                     mbs_status_message(st));
        snprintf(err, errlen, "plugin '%s': %s", path, host.err);
        mbs_problem_registry_truncate(np); /* nothing of a failed plugin stays */
        mbs_method_registry_truncate(nm);
        mbs_method_set_free(&loaded[slot].tableaux);
        dlclose(h);
        return MBS_BAD_INPUT;
    }
    if (mbs_problem_count() == np && mbs_method_count() == nm) {
        snprintf(err, errlen, "plugin '%s': mbs_plugin_init registered no problem or method",
                 path);
        dlclose(h);
        return MBS_BAD_INPUT;
    }
    loaded[slot].handle = h;
    n_loaded++;
    return MBS_OK;
}

size_t mbs_plugin_count(void)
{
    return n_loaded;
}

const char *mbs_plugin_path(size_t i)
{
    return i < n_loaded ? loaded[i].path : NULL;
}

void mbs_plugin_unload_all(void)
{
    mbs_problem_registry_truncate(mbs_problem_builtin_count());
    mbs_method_registry_truncate(mbs_method_builtin_count());
    while (n_loaded > 0) {
        n_loaded--;
        mbs_method_set_free(&loaded[n_loaded].tableaux);
        dlclose(loaded[n_loaded].handle);
        loaded[n_loaded].handle = NULL;
        loaded[n_loaded].path[0] = '\0';
    }
}

int mbs_plugin_take_options(int *argc, char **argv)
{
    int keep = 1, errors = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *path = NULL;
        if (strcmp(a, "--plugin") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "mbsbench: --plugin needs a value\n");
                errors++;
                continue;
            }
            path = argv[++i];
        } else if (strncmp(a, "--plugin=", 9) == 0) {
            path = a + 9;
        } else {
            argv[keep++] = argv[i];
            continue;
        }
        char err[1024];
        if (mbs_plugin_load(path, err, sizeof err) != MBS_OK) {
            fprintf(stderr, "mbsbench: %s\n", err);
            errors++;
        }
    }
    argv[keep] = NULL;
    *argc = keep;
    return errors ? 2 : 0;
}
