/* The layout of the tree: includes run downward only, core <- problems <-
 * methods <- harness <- bench/tools, and inside methods/ linsol <- framework <-
 * formulations <- integrators (tools/check-includes, also run by `make check`;
 * docs/usage.md, "Layout").  The checker passes the real tree and, in a scratch
 * tree, catches an upward include, a folder cycle and a forbidden include in
 * each folder of methods/. */
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

static void write_at(const char *root, const char *rel, const char *text)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    ck_assert_int_eq(mbs_mkdir_p(path), 0);
    *slash = '/';
    mbs_test_write_text(path, text);
}

/* Each folder of methods/ with one include it may make (clean), then with one it
 * may not: the checker names the line. */
START_TEST(methods_folders_caught)
{
    char *d = mbs_test_tmpdir(), *out = NULL;
    static const char *const clean[][2] = {
        {"core/a.h", "#include <stdio.h>\n"},
        {"methods/linsol/linsol.h", "#include \"../../core/a.h\"\n"},
        {"methods/framework/method.h", "#include \"../linsol/linsol.h\"\n"},
        {"methods/formulations/dae_form.h", "#include \"../framework/method.h\"\n"},
        {"methods/formulations/nullspace.h", "#include \"dae_form.h\"\n"},
        {"methods/recursions/dca.h", "#include \"../formulations/nullspace.h\"\n"},
        {"methods/integrators/radau/radau.c",
         "#include \"../../formulations/dae_form.h\"\n#include \"../../linsol/linsol.h\"\n"},
        {"methods/peers/ida.c", "#include \"../formulations/dae_form.h\"\n"},
        {"methods/registry.c", "#include \"integrators/radau/radau.c\"\n"
                               "#include \"recursions/dca.h\"\n#include \"peers/ida.c\"\n"},
    };
    for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++)
        write_at(d, clean[i][0], clean[i][1]);
    ck_assert_int_eq(checker(d, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "6 edges inside methods/"));
    free(out);
    /* file, a forbidden include, what the checker says */
    static const char *const bad[][3] = {
        {"methods/linsol/linsol.h", "../framework/method.h", "linsol/ includes"},
        {"methods/framework/method.h", "../formulations/dae_form.h", "framework/ includes"},
        {"methods/formulations/dae_form.h", "../integrators/radau/radau.c",
         "formulations/ includes"},
        {"methods/recursions/dca.h", "../peers/ida.c", "recursions/ includes"},
        {"methods/integrators/radau/radau.c", "../../formulations/nullspace.h",
         "the specific formulation"},
        {"methods/integrators/radau/radau.c", "../../recursions/dca.h", "integrators/ includes"},
        {"methods/peers/ida.c", "../formulations/nullspace.h", "the specific formulation"},
        {"methods/peers/ida.c", "../integrators/radau/radau.c", "peers/ includes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[256], where[128];
        snprintf(text, sizeof text, "\n#include \"%s\"\n", bad[i][1]);
        write_at(d, bad[i][0], text);
        ck_assert_int_eq(checker(d, &out), 1);
        snprintf(where, sizeof where, "%s:2: ", bad[i][0]);
        ck_assert_msg(strstr(out, where) && strstr(out, bad[i][2]) && strstr(out, bad[i][1]),
                      "%s", out);
        free(out);
        for (size_t j = 0; j < sizeof clean / sizeof clean[0]; j++) /* restore */
            if (strcmp(clean[j][0], bad[i][0]) == 0)
                write_at(d, clean[j][0], clean[j][1]);
    }
    ck_assert_int_eq(checker(d, &out), 0);
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
    tcase_add_test(tc, methods_folders_caught);
    suite_add_tcase(s, tc);
    return s;
}
