/* The layout of the tree (issue 19): includes run downward only, core <-
 * problems <- methods <- harness <- bench/tools (tools/check-includes, also run
 * by `make check`).  The checker passes the real tree and catches an upward
 * include and a folder cycle in a scratch tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/io.h"
#include "testutil.h"

static int checker(const char *root, char **out)
{
    char cmd[4400], path[128];
    snprintf(path, sizeof path, "/tmp/mbs-layout.%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "tools/check-includes %s > %s 2>&1", root, path);
    int st = system(cmd);
    *out = mbs_read_file(path, NULL);
    remove(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(tree_includes_run_downward)
{
    char *out = NULL;
    int st = checker(".", &out);
    ck_assert_msg(st == 0, "%s", out ? out : "");
    ck_assert_ptr_nonnull(strstr(out, "all downward"));
    free(out);
}
END_TEST

START_TEST(upward_include_and_cycle_caught)
{
    char *d = mbs_test_tmpdir(), path[4400], *out = NULL;
    const char *dirs[] = {"core", "problems", "methods", "harness"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", d, dirs[i]);
        ck_assert_int_eq(mbs_mkdir_p(path), 0);
    }
    snprintf(path, sizeof path, "%s/core/a.h", d);
    mbs_test_write_text(path, "#include <stdio.h>\n");
    snprintf(path, sizeof path, "%s/harness/h.h", d);
    mbs_test_write_text(path, "#include \"../methods/m.h\"\n#include \"../core/a.h\"\n");
    snprintf(path, sizeof path, "%s/methods/m.h", d);
    mbs_test_write_text(path, "#include \"../core/a.h\"\n");
    ck_assert_int_eq(checker(d, &out), 0);
    free(out);
    /* methods -> harness closes the cycle harness -> methods -> harness */
    snprintf(path, sizeof path, "%s/methods/m.c", d);
    mbs_test_write_text(path, "#include \"m.h\"\n\n#include \"../harness/h.h\"\n");
    ck_assert_int_eq(checker(d, &out), 1);
    ck_assert_msg(strstr(out, "methods/m.c:3: upward include") &&
                      strstr(out, "\"../harness/h.h\""), "%s", out);
    free(out);
    /* a lower layer reaching into bench: caught too */
    snprintf(path, sizeof path, "%s/methods/m.c", d);
    mbs_test_write_text(path, "#include \"../../bench/b.h\"\n");
    ck_assert_int_eq(checker(d, &out), 1);
    ck_assert_ptr_nonnull(strstr(out, "upward include"));
    free(out);
    mbs_test_remove_tree(d);
    free(d);
}
END_TEST

Suite *mbs_suite_layout(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, tree_includes_run_downward);
    tcase_add_test(tc, upward_include_and_cycle_caught);
    suite_add_tcase(s, tc);
    return s;
}
