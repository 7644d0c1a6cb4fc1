#include "param.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mbs_parse_double(const char *s, double *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x))
        return -1;
    *out = x;
    return 0;
}

int mbs_parse_long(const char *s, long *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end = NULL;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE)
        return -1;
    *out = x;
    return 0;
}

int mbs_params_init(mbs_params *p, const mbs_param_def *defs, size_t n)
{
    memset(p, 0, sizeof *p);
    if (n > MBS_MAX_PARAMS)
        return -1;
    p->defs = defs;
    p->n = n;
    for (size_t i = 0; i < n; i++)
        p->val[i] = defs[i].def;
    return 0;
}

int mbs_params_find(const mbs_params *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->defs[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Index of `name` in a comma-separated list, or -1. */
static int choice_index(const char *choices, const char *name)
{
    size_t len = strlen(name);
    int index = 0;
    for (const char *c = choices; *c;) {
        const char *comma = strchr(c, ',');
        size_t clen = comma ? (size_t)(comma - c) : strlen(c);
        if (clen == len && strncmp(c, name, len) == 0)
            return index;
        index++;
        if (!comma)
            break;
        c = comma + 1;
    }
    return -1;
}

void mbs_choice_name(const char *choices, int index, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *c = choices;
    for (int i = 0; c && i < index; i++) {
        c = strchr(c, ',');
        if (c)
            c++;
    }
    if (!c)
        return;
    const char *comma = strchr(c, ',');
    size_t clen = comma ? (size_t)(comma - c) : strlen(c);
    if (clen >= len)
        clen = len - 1;
    memcpy(buf, c, clen);
    buf[clen] = '\0';
}

int mbs_params_set(mbs_params *p, const char *key, const char *value, const char *owner,
                   char *err, size_t errlen)
{
    int i = mbs_params_find(p, key);
    if (i < 0) {
        snprintf(err, errlen, "%s: unknown parameter '%s'", owner, key);
        return -1;
    }
    const mbs_param_def *d = &p->defs[i];
    double x;
    if (d->choices) {
        int c = choice_index(d->choices, value);
        if (c < 0) {
            snprintf(err, errlen, "%s: parameter %s='%s' is not one of %s", owner, key, value,
                     d->choices);
            return -1;
        }
        x = c;
    } else {
        if (mbs_parse_double(value, &x) != 0) {
            snprintf(err, errlen, "%s: parameter %s='%s' is not a finite number", owner, key,
                     value);
            return -1;
        }
        if (d->integer && x != floor(x)) {
            snprintf(err, errlen, "%s: parameter %s=%s must be an integer", owner, key, value);
            return -1;
        }
        if (x < d->min || x > d->max) {
            snprintf(err, errlen, "%s: parameter %s=%s is outside [%g, %g]", owner, key, value,
                     d->min, d->max);
            return -1;
        }
    }
    p->val[i] = x;
    p->set_mask |= 1UL << i;
    return 0;
}

int mbs_params_parse(mbs_params *p, const char *spec, const char *owner, char *err,
                     size_t errlen)
{
    if (spec == NULL || *spec == '\0')
        return 0;
    char buf[1024];
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "%s: parameter list too long", owner);
        return -1;
    }
    strcpy(buf, spec);
    char *save = NULL;
    unsigned long seen = 0; /* a key given twice in one list is refused, not overwritten */
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            snprintf(err, errlen, "%s: expected key=value, got '%s'", owner, tok);
            return -1;
        }
        *eq = '\0';
        int i = mbs_params_find(p, tok);
        if (i >= 0 && (seen & (1UL << i))) {
            snprintf(err, errlen, "%s: parameter %s given twice ('%s=%s' repeats it)", owner,
                     tok, tok, eq + 1);
            return -1;
        }
        if (mbs_params_set(p, tok, eq + 1, owner, err, errlen) != 0)
            return -1;
        seen |= i >= 0 ? 1UL << i : 0;
    }
    return 0;
}

void mbs_params_format(const mbs_params *p, int all, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->n && used < len; i++) {
        if (!all && !(p->set_mask & (1UL << i)))
            continue;
        char value[64];
        if (p->defs[i].choices)
            mbs_choice_name(p->defs[i].choices, (int)p->val[i], value, sizeof value);
        else
            snprintf(value, sizeof value, "%.15g", p->val[i]);
        int k = snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "", p->defs[i].name,
                         value);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}
