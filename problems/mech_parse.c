/* Mechanism files, first stage: the INI text (libinih) into sections of
 * key/value pairs with their line numbers.  inih reads through our line
 * reader, which counts lines, so every key knows its line (inih's handler has no
 * line number in Debian's build) and section headers are seen as they come
 * (a repeated [type name] is reported by the builder as a duplicate name). */
#include <ctype.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "mech_impl.h"

/* inih (as packaged by Debian) reads lines of at most 200 bytes. */
enum { MECH_MAX_LINE = 198 };

typedef struct reader {
    mech_text *tx;
    const char *p, *end;
    int line;          /* number of the line last handed to inih */
    int continuation;  /* that line is indented (continues the previous key) */
    int err_line;      /* first error of ours (0: none) */
    int status;
    char *err;
    size_t errlen;
} reader;

static void rerr(reader *r, int line, int status, const char *fmt, ...)
{
    if (r->err_line && r->err_line <= line)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%d: %s", r->tx->path, line, msg);
    r->err_line = line;
    r->status = status;
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* A new section from a header line "[type name]". */
static void header(reader *r, const char *s, size_t n)
{
    const char *close = memchr(s, ']', n);
    if (!close) {
        rerr(r, r->line, MBS_BAD_INPUT, "section header without ']'");
        return;
    }
    const char *a = s + 1;
    while (a < close && isspace((unsigned char)*a))
        a++;
    const char *b = a;
    while (b < close && !isspace((unsigned char)*b))
        b++;
    const char *c = b;
    while (c < close && isspace((unsigned char)*c))
        c++;
    const char *d = close;
    while (d > c && isspace((unsigned char)d[-1]))
        d--;
    if (b == a) {
        rerr(r, r->line, MBS_BAD_INPUT, "empty section header");
        return;
    }
    mech_text *tx = r->tx;
    if (tx->n == tx->cap) {
        size_t cap = tx->cap ? 2 * tx->cap : 16;
        mech_section *ns = realloc(tx->s, cap * sizeof *ns);
        if (!ns) {
            rerr(r, r->line, MBS_NO_MEMORY, "out of memory");
            return;
        }
        tx->s = ns;
        tx->cap = cap;
    }
    mech_section *sec = &tx->s[tx->n];
    memset(sec, 0, sizeof *sec);
    sec->type = dupn(a, (size_t)(b - a));
    sec->name = dupn(c, (size_t)(d - c));
    sec->line = r->line;
    if (!sec->type || !sec->name) {
        free(sec->type);
        free(sec->name);
        rerr(r, r->line, MBS_NO_MEMORY, "out of memory");
        return;
    }
    tx->n++;
}

/* fgets for inih over the text, counting lines. */
static char *read_line(char *str, int num, void *stream)
{
    reader *r = stream;
    if (r->p >= r->end)
        return NULL;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    size_t n = nl ? (size_t)(nl - r->p) : (size_t)(r->end - r->p);
    r->line++;
    const char *s = r->p;
    r->p += n + (nl ? 1 : 0);
    if (memchr(s, '\0', n))
        rerr(r, r->line, MBS_BAD_INPUT, "NUL byte in the line");
    size_t room = num > 2 ? (size_t)num - 2 : 0;
    if (room > MECH_MAX_LINE)
        room = MECH_MAX_LINE;
    if (n > room) {
        rerr(r, r->line, MBS_BAD_INPUT, "line longer than %zu characters (continue a long "
             "value on indented lines)", room);
        n = 0; /* hand inih an empty line */
    }
    memcpy(str, s, n);
    str[n] = '\n';
    str[n + 1] = '\0';
    for (size_t i = 0; i < n; i++)
        if (str[i] == '\0')
            str[i] = ' ';
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        i++;
    r->continuation = i > 0 && i < n && s[i] != ';' && s[i] != '#';
    if (i < n && s[i] == '[')
        header(r, s + i, n - i);
    return str;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    (void)section;
    reader *r = user;
    mech_text *tx = r->tx;
    if (tx->n == 0) {
        rerr(r, r->line, MBS_BAD_INPUT, "'%s' outside a section (start with [mechanism])", name);
        return 1;
    }
    mech_section *sec = &tx->s[tx->n - 1];
    if (r->continuation && sec->n > 0 && strcmp(sec->kv[sec->n - 1].key, name) == 0) {
        mech_kv *kv = &sec->kv[sec->n - 1];
        size_t a = strlen(kv->val), b = strlen(value);
        char *v = realloc(kv->val, a + b + 2);
        if (!v) {
            rerr(r, r->line, MBS_NO_MEMORY, "out of memory");
            return 1;
        }
        v[a] = ' ';
        memcpy(v + a + 1, value, b + 1);
        kv->val = v;
        return 1;
    }
    for (size_t i = 0; i < sec->n; i++)
        if (strcmp(sec->kv[i].key, name) == 0) {
            rerr(r, r->line, MBS_BAD_INPUT, "key '%s' given twice in [%s%s%s] (first on line %d)",
                 name, sec->type, *sec->name ? " " : "", sec->name, sec->kv[i].line);
            return 1;
        }
    if (sec->n == sec->cap) {
        size_t cap = sec->cap ? 2 * sec->cap : 8;
        mech_kv *kv = realloc(sec->kv, cap * sizeof *kv);
        if (!kv) {
            rerr(r, r->line, MBS_NO_MEMORY, "out of memory");
            return 1;
        }
        sec->kv = kv;
        sec->cap = cap;
    }
    mech_kv *kv = &sec->kv[sec->n];
    kv->key = strdup(name);
    kv->val = strdup(value);
    kv->line = r->line;
    if (!kv->key || !kv->val) {
        free(kv->key);
        free(kv->val);
        rerr(r, r->line, MBS_NO_MEMORY, "out of memory");
        return 1;
    }
    sec->n++;
    return 1;
}

int mech_text_read(mech_text *tx, const char *path, const char *text, size_t len, char *err,
                   size_t errlen)
{
    memset(tx, 0, sizeof *tx);
    tx->path = strdup(path);
    if (!tx->path) {
        snprintf(err, errlen, "out of memory");
        return MBS_NO_MEMORY;
    }
    reader r = {tx, text, text + len, 0, 0, 0, MBS_OK, err, errlen};
    int st = ini_parse_stream(read_line, &r, handler, &r);
    if (st > 0 && (!r.err_line || st < r.err_line))
        rerr(&r, st, MBS_BAD_INPUT, "expected '[type name]' or 'key = value'");
    if (st < 0 && !r.err_line)
        rerr(&r, 1, MBS_NO_MEMORY, "out of memory");
    if (r.err_line) {
        mech_text_free(tx);
        return r.status;
    }
    return MBS_OK;
}

void mech_text_free(mech_text *tx)
{
    for (size_t i = 0; i < tx->n; i++) {
        for (size_t k = 0; k < tx->s[i].n; k++) {
            free(tx->s[i].kv[k].key);
            free(tx->s[i].kv[k].val);
        }
        free(tx->s[i].kv);
        free(tx->s[i].type);
        free(tx->s[i].name);
    }
    free(tx->s);
    free(tx->path);
    memset(tx, 0, sizeof *tx);
}

const char *mech_get(const mech_section *s, const char *key, int *line)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->kv[i].key, key) == 0) {
            if (line)
                *line = s->kv[i].line;
            return s->kv[i].val;
        }
    return NULL;
}
