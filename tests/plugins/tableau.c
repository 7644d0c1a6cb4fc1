/* Test plugin: two explicit Runge-Kutta methods given as Butcher tableaux
 * through mbs_plugin_add_tableau: Ralston's third-order method (fixed step;
 * Ralston, Math. Comp. 16 (1962), the minimum-error 3-stage method) and the
 * Bogacki-Shampine 3(2) pair (adaptive, FSAL; Appl. Math. Lett. 2 (1989)).
 * Neither is in methods/integrators/explicit/tableaux.def. */
#include <mbsbench/mbsbench.h>

static const double ral_c[] = {0.0, 0.5, 0.75};
static const double ral_A[] = {0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.75, 0.0};
static const double ral_b[] = {2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0};

static const double bs_c[] = {0.0, 0.5, 0.75, 1.0};
static const double bs_A[] = {0.0,       0.0,       0.0,       0.0, /* */
                              0.5,       0.0,       0.0,       0.0, /* */
                              0.0,       0.75,      0.0,       0.0, /* */
                              2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0, 0.0};
static const double bs_b[] = {2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0, 0.0};
static const double bs_bhat[] = {7.0 / 24.0, 0.25, 1.0 / 3.0, 0.125};

MBS_PLUGIN_DEFINE_ABI();

int mbs_plugin_init(mbs_plugin_host *host)
{
    const mbs_tableau ralston3 = {.name = "ralston3",
                                  .summary = "Ralston's 3rd-order method, fixed step (plugin)",
                                  .citation = "Ralston, Math. Comp. 16 (1962)",
                                  .stages = 3, .order = 3, .c = ral_c, .A = ral_A, .b = ral_b};
    const mbs_tableau bs32 = {.name = "bs32",
                              .summary = "Bogacki-Shampine 3(2), adaptive (plugin)",
                              .citation = "Bogacki & Shampine, Appl. Math. Lett. 2 (1989)",
                              .stages = 4, .order = 3, .order_emb = 2, .fsal = 1, .c = bs_c,
                              .A = bs_A, .b = bs_b, .bhat = bs_bhat};
    int s = mbs_plugin_add_tableau(host, &ralston3);
    return s ? s : mbs_plugin_add_tableau(host, &bs32);
}
