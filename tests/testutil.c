#include "testutil.h"

#include "../harness/converge.h"
#include "../harness/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void mbs_test_run(const char *problem, const char *method, double h, double tol, double t_end,
                  mbs_record *rec)
{
    mbs_run_spec spec = {.problem = problem, .method = method, .h = h, .tol = tol,
                         .t_end = t_end, .repeat = 0, .measure = 1};
    char err[512];
    int s = mbs_run(&spec, rec, err, sizeof err);
    ck_assert_msg(s == MBS_OK, "run %s %s: %s", problem, method, err);
}

double mbs_test_study_order(const char *problem, const char *method, double h0, int levels,
                            double p, double tol)
{
    mbs_run_spec base = {.problem = problem, .method = method, .t_end = NAN, .measure = 1};
    mbs_converge *cv = malloc(sizeof *cv);
    ck_assert_ptr_nonnull(cv);
    char err[256];
    ck_assert_int_eq(mbs_converge_run(&base, h0, levels, 2.0, cv, err, sizeof err), MBS_OK);
    for (int i = 0; i < cv->levels; i++)
        ck_assert_msg(cv->rec[i].status == MBS_OK, "%s %s h = %g: %s", problem, method, cv->x[i],
                      cv->rec[i].reason);
    for (int g = 0; g < 3; g++) {
        ck_assert_msg(cv->fit[g].established, "%s %s: group %d not established", problem, method,
                      g);
        ck_assert_msg(fabs(cv->fit[g].p - p) <= tol, "%s %s: group %d order %.3f", problem,
                      method, g, cv->fit[g].p);
        ck_assert_int_eq((int)cv->fit[g].first, 0);
        ck_assert_int_eq((int)cv->fit[g].last, levels - 1);
    }
    double e = cv->rec[cv->levels - 1].err.q;
    mbs_converge_free(cv);
    free(cv);
    return e;
}

int mbs_test_cli(const char *args, char *out, size_t outlen)
{
    int lines;
    return mbs_test_cli_lines(args, out, outlen, &lines);
}

int mbs_test_cli_lines(const char *args, char *out, size_t outlen, int *stderr_lines)
{
    const char *bin = getenv("MBSBENCH");
    if (!bin)
        bin = "bin/mbsbench";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>/tmp/mbs-test-stderr.%d >/tmp/mbs-test-stdout.%d", bin,
             args, (int)getpid(), (int)getpid());
    int st = system(cmd);
    out[0] = '\0';
    *stderr_lines = 0;
    char path[64];
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "/tmp/mbs-test-%s.%d", k == 0 ? "stderr" : "stdout",
                 (int)getpid());
        FILE *f = fopen(path, "r");
        if (f) {
            if (out[0] == '\0' && !fgets(out, (int)outlen, f))
                out[0] = '\0';
            if (k == 0) {
                int c, n = 0;
                rewind(f);
                while ((c = fgetc(f)) != EOF)
                    n += c == '\n';
                *stderr_lines = n;
            }
            fclose(f);
        }
        remove(path);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int mbs_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Run the mbsbench executable; the whole stderr and stdout (malloc'ed) and the
 * exit status. */
int mbs_test_cli_text(const char *args, char **err_text, char **out_text)
{
    const char *bin = getenv("MBSBENCH");
    if (!bin)
        bin = "bin/mbsbench";
    char cmd[8192], ep[64], op[64];
    snprintf(ep, sizeof ep, "/tmp/mbs-test-text-err.%d", (int)getpid());
    snprintf(op, sizeof op, "/tmp/mbs-test-text-out.%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s %s 2>%s >%s", bin, args, ep, op);
    int st = system(cmd);
    char *e = mbs_read_file(ep, NULL), *o = mbs_read_file(op, NULL);
    remove(ep);
    remove(op);
    if (err_text)
        *err_text = e ? e : strdup("");
    else
        free(e);
    if (out_text)
        *out_text = o ? o : strdup("");
    else
        free(o);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void mbs_test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

char *mbs_test_tmpdir(void)
{
    char tmpl[] = "/tmp/mbs-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    ck_assert_ptr_nonnull(d);
    return strdup(d);
}

void mbs_test_remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
