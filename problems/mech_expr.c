/* Arithmetic expressions of mechanism files: numbers, parameters, pi, t (in
 * driving functions and torques), + - * / ^, parentheses and the functions
 * sin cos tan asin acos atan atan2 sqrt exp log abs.  Evaluation carries the
 * first two derivatives in t (Taylor arithmetic, e.g. Griewank and Walther 2008
 * [griewank2008], Ch. 13), so that g_t and g_tt of a driving constraint are exact. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mech_impl.h"

enum op {
    OP_NUM, OP_T, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_NEG,
    OP_SIN, OP_COS, OP_TAN, OP_ASIN, OP_ACOS, OP_ATAN, OP_SQRT, OP_EXP, OP_LOG, OP_ABS,
    OP_ATAN2
};

typedef struct node {
    int op;
    double val;
    int l, r; /* operands (node indices) */
} node;

struct mech_expr {
    node *nd;
    size_t n, cap;
    int root, uses_t;
};

typedef struct parser {
    const char *s, *p;
    const mech_scope *sc;
    mech_expr *e;
    char *err;
    size_t errlen;
    int failed, depth;
} parser;

static const struct {
    const char *name;
    int op, nargs;
} funcs[] = {{"sin", OP_SIN, 1},   {"cos", OP_COS, 1},   {"tan", OP_TAN, 1},
             {"asin", OP_ASIN, 1}, {"acos", OP_ACOS, 1}, {"atan", OP_ATAN, 1},
             {"sqrt", OP_SQRT, 1}, {"exp", OP_EXP, 1},   {"log", OP_LOG, 1},
             {"abs", OP_ABS, 1},   {"atan2", OP_ATAN2, 2}};

static int fail(parser *ps, const char *msg)
{
    if (!ps->failed)
        snprintf(ps->err, ps->errlen, "%s in expression '%s'", msg, ps->s);
    ps->failed = 1;
    return -1;
}

static int push(parser *ps, int op, double val, int l, int r)
{
    if (ps->failed)
        return -1;
    mech_expr *e = ps->e;
    if (e->n >= 20000)
        return fail(ps, "expression too long");
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 16;
        node *nd = realloc(e->nd, cap * sizeof *nd);
        if (!nd)
            return fail(ps, "out of memory");
        e->nd = nd;
        e->cap = cap;
    }
    e->nd[e->n] = (node){op, val, l, r};
    return (int)e->n++;
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static int expr(parser *ps);

static int primary(parser *ps)
{
    skip(ps);
    if (++ps->depth > 200)
        return fail(ps, "nesting too deep");
    const char *p = ps->p;
    if (*p == '(') {
        ps->p++;
        int x = expr(ps);
        skip(ps);
        if (*ps->p != ')')
            return fail(ps, "missing ')'");
        ps->p++;
        ps->depth--;
        return x;
    }
    if (isdigit((unsigned char)*p) || *p == '.') {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v))
            return fail(ps, "bad number");
        ps->p = end;
        ps->depth--;
        return push(ps, OP_NUM, v, -1, -1);
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_')
            len++;
        char name[64];
        if (len >= sizeof name)
            return fail(ps, "name too long");
        memcpy(name, p, len);
        name[len] = '\0';
        ps->p = p + len;
        skip(ps);
        if (*ps->p == '(') {
            for (size_t i = 0; i < sizeof funcs / sizeof *funcs; i++)
                if (strcmp(funcs[i].name, name) == 0) {
                    ps->p++;
                    int a = expr(ps), b = -1;
                    skip(ps);
                    if (funcs[i].nargs == 2) {
                        if (*ps->p != ',')
                            return fail(ps, "atan2 needs two arguments");
                        ps->p++;
                        b = expr(ps);
                        skip(ps);
                    }
                    if (*ps->p != ')')
                        return fail(ps, "missing ')' after function arguments");
                    ps->p++;
                    ps->depth--;
                    return push(ps, funcs[i].op, 0, a, b);
                }
            char msg[128];
            snprintf(msg, sizeof msg, "unknown function '%s'", name);
            return fail(ps, msg);
        }
        ps->depth--;
        if (strcmp(name, "pi") == 0)
            return push(ps, OP_NUM, 3.14159265358979323846, -1, -1);
        if (strcmp(name, "t") == 0) {
            if (!ps->sc->allow_t)
                return fail(ps, "t is allowed only in driving functions and torques");
            ps->e->uses_t = 1;
            return push(ps, OP_T, 0, -1, -1);
        }
        for (size_t i = 0; i < ps->sc->n; i++)
            if (strcmp(ps->sc->names[i], name) == 0)
                return push(ps, OP_NUM, ps->sc->values[i], -1, -1);
        char msg[128];
        snprintf(msg, sizeof msg, "unknown name '%s'", name);
        return fail(ps, msg);
    }
    return fail(ps, *p ? "unexpected character" : "unexpected end");
}

static int unary(parser *ps);

static int power(parser *ps)
{
    int b = primary(ps);
    skip(ps);
    if (*ps->p == '^') {
        ps->p++;
        int x = unary(ps);
        return push(ps, OP_POW, 0, b, x);
    }
    return b;
}

static int unary(parser *ps)
{
    skip(ps);
    if (*ps->p == '-' || *ps->p == '+') {
        int neg = *ps->p == '-';
        ps->p++;
        if (++ps->depth > 200)
            return fail(ps, "nesting too deep");
        int x = unary(ps);
        ps->depth--;
        return neg ? push(ps, OP_NEG, 0, x, -1) : x;
    }
    return power(ps);
}

static int term(parser *ps)
{
    int x = unary(ps);
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (ps->failed || (c != '*' && c != '/'))
            return x;
        ps->p++;
        int y = unary(ps);
        x = push(ps, c == '*' ? OP_MUL : OP_DIV, 0, x, y);
    }
}

static int expr(parser *ps)
{
    int x = term(ps);
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (ps->failed || (c != '+' && c != '-'))
            return x;
        ps->p++;
        int y = term(ps);
        x = push(ps, c == '+' ? OP_ADD : OP_SUB, 0, x, y);
    }
}

mech_expr *mech_expr_parse(const char *text, const mech_scope *sc, char *err, size_t errlen)
{
    mech_expr *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    parser ps = {text, text, sc, e, err, errlen, 0, 0};
    e->root = expr(&ps);
    skip(&ps);
    if (!ps.failed && *ps.p)
        fail(&ps, "unexpected text after the expression");
    if (ps.failed) {
        mech_expr_free(e);
        return NULL;
    }
    return e;
}

void mech_expr_free(mech_expr *e)
{
    if (e) {
        free(e->nd);
        free(e);
    }
}

int mech_expr_uses_t(const mech_expr *e)
{
    return e->uses_t;
}

/* f(u) with f' = d1, f'' = d2 at u.v. */
static mech_jet chain(mech_jet u, double f, double d1, double d2)
{
    return (mech_jet){f, d1 * u.d1, d2 * u.d1 * u.d1 + d1 * u.d2};
}

static mech_jet jet_mul(mech_jet a, mech_jet b)
{
    return (mech_jet){a.v * b.v, a.d1 * b.v + a.v * b.d1, a.d2 * b.v + 2 * a.d1 * b.d1 + a.v * b.d2};
}

static mech_jet jet_div(mech_jet a, mech_jet b)
{
    mech_jet c;
    c.v = a.v / b.v;
    c.d1 = (a.d1 - c.v * b.d1) / b.v;
    c.d2 = (a.d2 - 2 * c.d1 * b.d1 - c.v * b.d2) / b.v;
    return c;
}

static mech_jet ev(const mech_expr *e, int i, double t)
{
    const node *n = &e->nd[i];
    mech_jet a = {0, 0, 0}, b = {0, 0, 0};
    if (n->l >= 0)
        a = ev(e, n->l, t);
    if (n->r >= 0)
        b = ev(e, n->r, t);
    switch (n->op) {
    case OP_NUM:
        return (mech_jet){n->val, 0, 0};
    case OP_T:
        return (mech_jet){t, 1, 0};
    case OP_ADD:
        return (mech_jet){a.v + b.v, a.d1 + b.d1, a.d2 + b.d2};
    case OP_SUB:
        return (mech_jet){a.v - b.v, a.d1 - b.d1, a.d2 - b.d2};
    case OP_NEG:
        return (mech_jet){-a.v, -a.d1, -a.d2};
    case OP_MUL:
        return jet_mul(a, b);
    case OP_DIV:
        return jet_div(a, b);
    case OP_POW:
        if (b.d1 == 0.0 && b.d2 == 0.0) {
            double p = b.v;
            return chain(a, pow(a.v, p), p * pow(a.v, p - 1), p * (p - 1) * pow(a.v, p - 2));
        } else { /* a^b = exp(b log a) */
            mech_jet l = chain(a, log(a.v), 1 / a.v, -1 / (a.v * a.v));
            mech_jet x = jet_mul(b, l);
            double ex = exp(x.v);
            return chain(x, ex, ex, ex);
        }
    case OP_SIN:
        return chain(a, sin(a.v), cos(a.v), -sin(a.v));
    case OP_COS:
        return chain(a, cos(a.v), -sin(a.v), -cos(a.v));
    case OP_TAN: {
        double tn = tan(a.v), s2 = 1 + tn * tn;
        return chain(a, tn, s2, 2 * tn * s2);
    }
    case OP_ASIN: {
        double r = 1 - a.v * a.v;
        return chain(a, asin(a.v), 1 / sqrt(r), a.v / (r * sqrt(r)));
    }
    case OP_ACOS: {
        double r = 1 - a.v * a.v;
        return chain(a, acos(a.v), -1 / sqrt(r), -a.v / (r * sqrt(r)));
    }
    case OP_ATAN: {
        double r = 1 + a.v * a.v;
        return chain(a, atan(a.v), 1 / r, -2 * a.v / (r * r));
    }
    case OP_SQRT: {
        double s = sqrt(a.v);
        return chain(a, s, 0.5 / s, -0.25 / (s * a.v));
    }
    case OP_EXP: {
        double x = exp(a.v);
        return chain(a, x, x, x);
    }
    case OP_LOG:
        return chain(a, log(a.v), 1 / a.v, -1 / (a.v * a.v));
    case OP_ABS:
        return a.v < 0 ? (mech_jet){-a.v, -a.d1, -a.d2} : a;
    case OP_ATAN2: { /* atan2(y = a, x = b) */
        double r2 = a.v * a.v + b.v * b.v, nn = b.v * a.d1 - a.v * b.d1;
        double dn = b.v * a.d2 - a.v * b.d2, dr2 = 2 * (a.v * a.d1 + b.v * b.d1);
        return (mech_jet){atan2(a.v, b.v), nn / r2, (dn * r2 - nn * dr2) / (r2 * r2)};
    }
    default:
        return (mech_jet){NAN, NAN, NAN};
    }
}

mech_jet mech_expr_jet(const mech_expr *e, double t)
{
    return ev(e, e->root, t);
}

int mech_eval_const(const char *text, const mech_scope *sc, double *out, char *err,
                    size_t errlen)
{
    mech_scope s = *sc;
    s.allow_t = 0;
    mech_expr *e = mech_expr_parse(text, &s, err, errlen);
    if (!e)
        return -1;
    *out = mech_expr_jet(e, 0.0).v;
    mech_expr_free(e);
    if (!isfinite(*out)) {
        snprintf(err, errlen, "expression '%s' is not finite", text);
        return -1;
    }
    return 0;
}
