/* The command-line manual and the one option parser every command goes through.
 *
 * Each command has a table of its options (cli.c): spelling, value, meaning,
 * default and range.  `mbsbench COMMAND --help` prints that table, and the
 * parsers accept nothing else: mbs_cli_next() looks every option up in it, so
 * an option a parser handles but the table lacks is refused as unknown, and
 * an option in the table always appears in --help (tests/check_cli.c checks
 * both, over every command).  Numeric options carry their range; the parser
 * enforces it with one message naming the option and the value. */
#ifndef MBS_CLI_H
#define MBS_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef enum mbs_opt_kind {
    MBS_OPT_FLAG, /* no value */
    MBS_OPT_STR,  /* a string value */
    MBS_OPT_NUM,  /* a finite number in [lo, hi] (open ends: lo_open, hi_open) */
    MBS_OPT_INT   /* an integer in [lo, hi] */
} mbs_opt_kind;

typedef struct mbs_opt {
    const char *name;  /* "--tol", or a short-only option "-j" */
    const char *alias; /* another spelling ("-p" for --problem) or NULL */
    mbs_opt_kind kind;
    const char *arg;   /* the value's placeholder in --help ("TOL"); NULL for flags */
    const char *doc;   /* what the option does */
    const char *def;   /* its default, as --help prints it */
    const char *range; /* accepted values in words; NULL: [lo, hi] from the numbers */
    double lo, hi;     /* MBS_OPT_NUM, MBS_OPT_INT: the range the parser enforces */
    int lo_open, hi_open;
    int hook;          /* a test hook: listed apart, not in the synopsis */
} mbs_opt;

typedef struct mbs_cli_cmd {
    const char *name;     /* "run" */
    const char *summary;  /* one line: what the command does */
    const char *synopsis; /* the usage lines after "mbsbench " (several: '\n' apart) */
    const char *operands; /* what the positional arguments are (or NULL) */
    const char *notes;    /* paragraphs after the options (or NULL) */
    const mbs_opt *opts;
    size_t n_opts;
} mbs_cli_cmd;

/* The commands, in the order `mbsbench --help` lists them. */
size_t mbs_cli_count(void);
const mbs_cli_cmd *mbs_cli_at(size_t i);
/* A command by name ("references" is "reference"), or NULL. */
const mbs_cli_cmd *mbs_cli_find(const char *name);
/* Options every command accepts (--help, --plugin). */
const mbs_opt *mbs_cli_common(size_t *n);

/* One parsed argument. */
typedef struct mbs_cli_arg {
    const mbs_opt *opt; /* NULL for an operand */
    const char *str;    /* the value as given (the operand itself for operands) */
    double num;         /* MBS_OPT_NUM and MBS_OPT_INT */
    long integer;       /* MBS_OPT_INT */
} mbs_cli_arg;

/* Parse argv[*i] for command cmd: an option of its table (with its value:
 * the next argument, or after '=' in --name=VALUE), or an operand (any word
 * that does not start with '-', and "-").  Advances *i past what it used.
 * Returns 1 for an option, 0 for an operand, -1 after printing one line
 * "mbsbench: CMD: ..." on stderr (unknown option, missing or bad value). */
int mbs_cli_next(const mbs_cli_cmd *cmd, int argc, char **argv, int *i, mbs_cli_arg *a);

/* Whether a is the option named name (its long spelling, as in the table). */
int mbs_cli_is(const mbs_cli_arg *a, const char *name);

/* The whole --help text of a command, or of mbsbench itself (cmd NULL). */
void mbs_cli_help(const mbs_cli_cmd *cmd, FILE *out);

/* The range of an option as --help prints it ("(0, 1)", "[1, 256]", or its text). */
void mbs_cli_range(const mbs_opt *o, char *buf, size_t len);

#endif
