/* Mechanism files as problems (mech.h): definitions made at run time, their
 * parameter tables from the [parameter NAME] sections, registration. */
#define _DEFAULT_SOURCE /* realpath, DT_REG */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech.h"
#include "mech_impl.h"
#include "mech_reference.h"
#include "registry.h"

enum { MAX_MECH = 256, DOC_LEN = 200 };

typedef struct mech_entry {
    mbs_problem_def def; /* first member: pb->def points here */
    char name[64], title[256], citation[320], reference[384];
    char path[PATH_MAX];
    mbs_param_def params[MBS_MAX_PARAMS];
    char pname[MBS_MAX_PARAMS][32], pdoc[MBS_MAX_PARAMS][DOC_LEN];
    mech_text text;
    mech_model *defaults; /* the model with the default parameters (its reported names) */
    const mbs_mech_reference *ref; /* [mechanism] reference (NULL: none) */
} mech_entry;

/* Process-wide and append-only, like the plugin table (harness/plugin.c): filled
 * at start-up and when a command names a file, before any run. */
static mech_entry *entries[MAX_MECH];
static size_t n_entries;

static const mech_entry *entry_of(const mbs_problem *pb)
{
    return (const mech_entry *)pb->def;
}

static int mech_setup(mbs_problem *pb, char *err, size_t errlen)
{
    const mech_entry *e = entry_of(pb);
    mech_model *m;
    int st = mech_build(&e->text, e->params, pb->params.val, e->def.n_params, &m, err, errlen);
    if (st != MBS_OK)
        return st;
    if (m->rheonomic && !e->def.constraint_t) {
        snprintf(err, errlen, "%s: these parameters make the constraints depend on t, the "
                 "defaults do not (not supported)", e->path);
        mech_model_free(m);
        return MBS_BAD_INPUT;
    }
    pb->data = m;
    pb->t0 = m->t0;
    pb->t_end = m->t_end;
    pb->reported_names = m->out_names;
    /* natural coordinates: every body-fixed point is linear in q, so M is
     * constant (docs/adding-a-problem.md, mechanism files) */
    unsigned f = MBS_PB_SPARSE | MBS_PB_CONSTANT_MASS;
    if (m->rank_defect > 0)
        f |= MBS_PB_REDUNDANT;
    if (m->singular_mass)
        f |= MBS_PB_SINGULAR_MASS;
    if (m->conservative)
        f |= MBS_PB_CONSERVATIVE;
    if (m->rheonomic)
        f |= MBS_PB_RHEONOMIC;
    if (m->singular_config)
        f |= MBS_PB_SINGULAR_CONFIG;
    pb->flags = f;
    return MBS_OK;
}

static int mech_reported_reference(const mbs_problem *pb, double t, double *out)
{
    const mech_entry *e = entry_of(pb);
    return e->ref ? e->ref->eval(pb, t, out) : MBS_UNSUPPORTED;
}

static int mech_branch(const mbs_problem *pb, double t, const double *q, double *qb,
                       double *vb, double *off)
{
    const mech_entry *e = entry_of(pb);
    return e->ref && e->ref->branch ? e->ref->branch(pb, t, q, qb, vb, off) : MBS_UNSUPPORTED;
}

/* The file's reduction: a known name that gives exactly the file's reported
 * quantities.  MBS_OK (e->ref NULL without one) or MBS_BAD_INPUT. */
static int find_reduction(mech_entry *e, const mech_model *m, const char *path, char *err,
                          size_t errlen)
{
    e->ref = NULL;
    if (!m->reference[0])
        return MBS_OK;
    const mbs_mech_reference *r = mbs_mech_reference_find(m->reference);
    if (!r) {
        snprintf(err, errlen, "%s:%d: unknown reference '%s' (known: nfourbar-parallelogram)",
                 path, m->reference_line, m->reference);
        return MBS_BAD_INPUT;
    }
    size_t k = 0;
    for (; r->names[k] && m->out_names && m->out_names[k]; k++)
        if (strcmp(r->names[k], m->out_names[k]) != 0)
            break;
    if (r->names[k] || !m->out_names || m->out_names[k]) {
        snprintf(err, errlen, "%s:%d: reference '%s' gives %s%s%s... as reported quantities, "
                 "the file reports others", path, m->reference_line, r->name, r->names[0],
                 r->names[1] ? "," : "", r->names[1] ? r->names[1] : "");
        return MBS_BAD_INPUT;
    }
    e->ref = r;
    return MBS_OK;
}

static void mech_teardown(mbs_problem *pb)
{
    mech_model_free(pb->data);
    pb->data = NULL;
}

static const char *kv_or(const mech_section *s, const char *k, const char *def)
{
    const char *v = mech_get(s, k, NULL);
    return v ? v : def;
}

/* The [parameter NAME] sections into the definition's table. */
static int read_params(mech_entry *e, char *err, size_t errlen)
{
    size_t n = 0;
    const mech_text *tx = &e->text;
    for (size_t i = 0; i < tx->n; i++) {
        const mech_section *s = &tx->s[i];
        if (strcmp(s->type, "parameter") != 0)
            continue;
        const char *nm = s->name;
        size_t len = strlen(nm);
        int ok = len > 0 && len < sizeof e->pname[0] && (isalpha((unsigned char)nm[0]) || nm[0] == '_');
        for (size_t k = 0; k < len; k++)
            ok &= isalnum((unsigned char)nm[k]) || nm[k] == '_';
        if (!ok || strcmp(nm, "t") == 0 || strcmp(nm, "pi") == 0 || strcmp(nm, "file") == 0) {
            snprintf(err, errlen, "%s:%d: parameter name '%s' must be a name of [A-Za-z0-9_] "
                     "(not t, pi or file), at most 31 characters", tx->path, s->line, nm);
            return MBS_BAD_INPUT;
        }
        for (size_t k = 0; k < n; k++)
            if (strcmp(e->pname[k], nm) == 0) {
                snprintf(err, errlen, "%s:%d: duplicate parameter '%s'", tx->path, s->line, nm);
                return MBS_BAD_INPUT;
            }
        if (n == MBS_MAX_PARAMS) {
            snprintf(err, errlen, "%s:%d: more than %d parameters", tx->path, s->line,
                     MBS_MAX_PARAMS);
            return MBS_BAD_INPUT;
        }
        double v[3] = {0, -1e300, 1e300};
        static const char *const keys[] = {"value", "min", "max"};
        for (int k = 0; k < 3; k++) {
            int line = s->line;
            const char *t = mech_get(s, keys[k], &line);
            if (!t && k == 0) {
                snprintf(err, errlen, "%s:%d: parameter '%s': missing value", tx->path, s->line,
                         nm);
                return MBS_BAD_INPUT;
            }
            if (t && mbs_parse_double(t, &v[k]) != 0) {
                snprintf(err, errlen, "%s:%d: parameter '%s': %s '%s' is not a number", tx->path,
                         line, nm, keys[k], t);
                return MBS_BAD_INPUT;
            }
        }
        int li = s->line, lv = s->line;
        const char *in = mech_get(s, "integer", &li);
        int integer = in && (strcmp(in, "yes") == 0 || strcmp(in, "1") == 0 ||
                             strcmp(in, "true") == 0);
        if (in && !integer && strcmp(in, "no") && strcmp(in, "0") && strcmp(in, "false")) {
            snprintf(err, errlen, "%s:%d: integer: expected yes or no, got '%s'", tx->path, li, in);
            return MBS_BAD_INPUT;
        }
        mech_get(s, "value", &lv);
        if (!(v[1] <= v[2]) || v[0] < v[1] || v[0] > v[2] || (integer && v[0] != floor(v[0]))) {
            snprintf(err, errlen, "%s:%d: parameter '%s' = %g out of its range [%g, %g]%s",
                     tx->path, lv, nm, v[0], v[1], v[2],
                     integer && v[0] != floor(v[0]) ? " or not an integer" : "");
            return MBS_BAD_INPUT;
        }
        snprintf(e->pname[n], sizeof e->pname[n], "%s", nm);
        snprintf(e->pdoc[n], sizeof e->pdoc[n], "%s", kv_or(s, "doc", ""));
        e->params[n] = (mbs_param_def){e->pname[n], v[0], v[1], v[2], e->pdoc[n], NULL, integer};
        n++;
    }
    e->def.n_params = n;
    e->def.params = n ? e->params : NULL;
    return MBS_OK;
}

static void entry_free(mech_entry *e)
{
    if (e) {
        mech_model_free(e->defaults);
        mech_text_free(&e->text);
        free(e);
    }
}

static int entry_from_text(mech_entry *e, const char *path, const char *text, size_t len,
                           char *err, size_t errlen);

/* Read, check with the default parameters, fill the definition. */
static int make_entry(const char *path, const char *name, mech_entry **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    mech_entry *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return MBS_NO_MEMORY;
    }
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    if (f) {
        if (fseek(f, 0, SEEK_END) == 0) {
            long n = ftell(f);
            if (n >= 0 && n < (1L << 26) && fseek(f, 0, SEEK_SET) == 0 &&
                (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n) {
                len = (size_t)n;
                text[len] = '\0';
            } else {
                free(text);
                text = NULL;
            }
        }
        fclose(f);
    }
    if (!text) {
        snprintf(err, errlen, "%s: cannot read the mechanism file", path);
        free(e);
        return MBS_BAD_INPUT;
    }
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->path, sizeof e->path, "%s", path);
    int st = entry_from_text(e, path, text, len, err, errlen);
    free(text);
    if (st != MBS_OK) {
        free(e);
        return st;
    }
    *out = e;
    return MBS_OK;
}

/* Parse a text, read its parameters and build it with their defaults. */
static int entry_from_text(mech_entry *e, const char *path, const char *text, size_t len,
                           char *err, size_t errlen)
{
    int st = mech_text_read(&e->text, path, text, len, err, errlen);
    if (st == MBS_OK)
        st = read_params(e, err, errlen);
    mech_model *m = NULL;
    double pv[MBS_MAX_PARAMS];
    for (size_t i = 0; i < e->def.n_params; i++)
        pv[i] = e->params[i].def;
    if (st == MBS_OK)
        st = mech_build(&e->text, e->params, pv, e->def.n_params, &m, err, errlen);
    if (st != MBS_OK) {
        mech_text_free(&e->text);
        return st;
    }
    const mech_section *ms = NULL;
    for (size_t i = 0; i < e->text.n; i++)
        if (strcmp(e->text.s[i].type, "mechanism") == 0)
            ms = &e->text.s[i];
    snprintf(e->title, sizeof e->title, "%s", ms ? kv_or(ms, "title", "mechanism") : "");
    snprintf(e->citation, sizeof e->citation, "%s (mechanism file %s)",
             ms ? kv_or(ms, "citation", "-") : "-", path);
    st = find_reduction(e, m, path, err, errlen);
    if (st != MBS_OK) {
        mech_model_free(m);
        mech_text_free(&e->text);
        return st;
    }
    if (e->ref)
        snprintf(e->reference, sizeof e->reference, "reported quantities: %s (%s)",
                 e->ref->name, e->ref->what);
    else
        snprintf(e->reference, sizeof e->reference, "none (no reference)");
    e->def = (mbs_problem_def){
        .name = e->name,
        .title = e->title,
        .citation = e->citation,
        .reference = e->reference,
        .flags = MBS_PB_SPARSE | MBS_PB_CONSTANT_MASS |
                 (m->conservative ? MBS_PB_CONSERVATIVE : 0u),
        .index = 3,
        .t0 = m->t0,
        .t_end = m->t_end,
        .params = e->def.params,
        .n_params = e->def.n_params,
        .dims = mech_cb_dims,
        .initial = mech_cb_initial,
        .mass = mech_cb_mass,
        .force = mech_cb_force,
        .constraint = mech_cb_g,
        .jacobian = mech_cb_G,
        .gamma = mech_cb_gamma,
        .setup = mech_setup,
        .teardown = mech_teardown,
        .constraint_t = m->rheonomic ? mech_cb_gt : NULL,
        .energy = mech_cb_energy,
        .mass_sparse = mech_cb_mass_sparse,
        .jacobian_sparse = mech_cb_G_sparse,
        .force_q = mech_cb_force_q,
        .force_v = mech_cb_force_v,
        .gtlambda_q = mech_cb_gtlambda_q,
        .gw_q = mech_cb_gw_q,
        .output_steps = m->output_steps,
        .reported_names = m->out_names, /* per instance: setup() */
        .reported = mech_cb_reported,
        .reported_reference = e->ref ? mech_reported_reference : NULL,
        .branch = e->ref && e->ref->branch ? mech_branch : NULL,
    };
    e->defaults = m;
    return MBS_OK;
}

int mbs_mech_register_file(const char *path, const char *name, const mbs_problem_def **def,
                           char *err, size_t errlen)
{
    char full[PATH_MAX], stem[64];
    if (!realpath(path, full)) {
        snprintf(err, errlen, "%s: no such mechanism file", path);
        return MBS_BAD_INPUT;
    }
    for (size_t i = 0; i < n_entries; i++) {
        char other[PATH_MAX];
        if (realpath(entries[i]->path, other) && strcmp(other, full) == 0) {
            if (def)
                *def = &entries[i]->def;
            return MBS_OK;
        }
    }
    if (!name) {
        const char *b = strrchr(path, '/');
        b = b ? b + 1 : path;
        size_t n = strcspn(b, ".");
        if (n >= sizeof stem)
            n = sizeof stem - 1;
        memcpy(stem, b, n);
        stem[n] = '\0';
        name = stem;
    }
    if (!mbs_registry_name_ok(name) || strcmp(name, "model") == 0) {
        snprintf(err, errlen, "%s: problem name '%s' (the file's name) must be 1-63 characters "
                 "of [A-Za-z0-9._/+-], not 'model'", path, name);
        return MBS_BAD_INPUT;
    }
    if (n_entries == MAX_MECH) {
        snprintf(err, errlen, "%s: more than %d mechanism files", path, MAX_MECH);
        return MBS_BAD_INPUT;
    }
    mech_entry *e;
    int st = make_entry(path, name, &e, err, errlen);
    if (st != MBS_OK)
        return st;
    char msg[400];
    if (mbs_problem_register_mechanism(&e->def, msg, sizeof msg) != MBS_OK) {
        snprintf(err, errlen, "%s: %s", path, msg);
        entry_free(e);
        return MBS_BAD_INPUT;
    }
    entries[n_entries++] = e;
    if (def)
        *def = &e->def;
    return MBS_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int mbs_mech_register_dir(const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char *names[MAX_MECH];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < MAX_MECH) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".mech") == 0 && de->d_name[0] != '.')
            if ((names[n] = strdup(de->d_name)))
                n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str); /* the same order everywhere */
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX], msg[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (mbs_mech_register_file(path, NULL, NULL, msg, sizeof msg) != MBS_OK) {
            if (!failed)
                snprintf(err, errlen, "%s", msg);
            failed++;
        }
        free(names[i]);
    }
    return failed;
}

void mbs_mech_unload_all(void)
{
    mbs_problem_mechanisms_clear();
    while (n_entries > 0)
        entry_free(entries[--n_entries]);
}

int mbs_mech_open_spec(mbs_problem *pb, const char *rest, char *err, size_t errlen)
{
    memset(pb, 0, sizeof *pb);
    if (strncmp(rest, "file=", 5) != 0) {
        snprintf(err, errlen, "model: expected 'model:file=PATH[,k=v,...]', got 'model:%s'",
                 rest);
        return MBS_BAD_INPUT;
    }
    const char *p = rest + 5, *comma = strchr(p, ',');
    char path[PATH_MAX];
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= sizeof path) {
        snprintf(err, errlen, "model: empty or too long file name in 'model:%s'", rest);
        return MBS_BAD_INPUT;
    }
    memcpy(path, p, len);
    path[len] = '\0';
    const mbs_problem_def *def;
    int st = mbs_mech_register_file(path, NULL, &def, err, errlen);
    if (st != MBS_OK)
        return st;
    char spec[1024];
    snprintf(spec, sizeof spec, "%s%s%s", def->name, comma ? ":" : "", comma ? comma + 1 : "");
    return mbs_problem_open(pb, spec, err, errlen);
}

const char *mbs_mech_file(const mbs_problem_def *def)
{
    for (size_t i = 0; i < n_entries; i++)
        if (&entries[i]->def == def)
            return entries[i]->path;
    return NULL;
}

int mbs_mech_describe(const mbs_problem *pb, char *buf, size_t len)
{
    if (!mbs_mech_file(pb->def) || !pb->data)
        return MBS_BAD_INPUT;
    const mech_model *m = pb->data;
    char rd[64];
    if (m->rank_defect >= 0)
        snprintf(rd, sizeof rd, "%ld", m->rank_defect);
    else
        snprintf(rd, sizeof rd, "not computed (large model)");
    snprintf(buf, len, "natural coordinates (%dD); initial values completed: positions moved "
             "by %.3g, velocities by %.3g (max norm); rank defect of G at t0: %s",
             m->dim, m->moved_q, m->moved_v, rd);
    return MBS_OK;
}

int mbs_mech_check_text(const char *text, size_t len, const char *path, char *err,
                        size_t errlen)
{
    mech_entry *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return MBS_NO_MEMORY;
    }
    snprintf(e->path, sizeof e->path, "%s", path);
    int st = entry_from_text(e, path, text, len, err, errlen);
    if (st == MBS_OK) {
        mech_model_free(e->defaults);
        mech_text_free(&e->text);
    }
    free(e);
    return st;
}
