/* Coefficients of the in-tree explicit Runge-Kutta tableaux (tableaux.def).
 * A is row-major s x s.  Values of tableaux known as rationals are written as
 * rationals (divisions evaluated at compile time, correctly rounded); the others
 * carry 25 significant digits of a high-precision source, so that the compiler
 * rounds each to the nearest double.  e = b - bhat is rounded from the exact
 * (or high-precision) difference, not computed in double.  The order
 * conditions of every tableau are checked by tests/check_tableau.c (and by the
 * independent exact-rational check quoted below). */
#include <stddef.h>

#include "explicit.h"

/* ---- classical Runge-Kutta 4 (Kutta 1901; HNW I, Table II.1.2) ---------------- */
static const double rk4_c[] = {0.0, 0.5, 0.5, 1.0};
static const double rk4_A[] = {
    0.0, 0.0, 0.0, 0.0, /* */
    0.5, 0.0, 0.0, 0.0, /* */
    0.0, 0.5, 0.0, 0.0, /* */
    0.0, 0.0, 1.0, 0.0,
};
static const double rk4_b[] = {1.0 / 6.0, 2.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0};
#define rk4_bhat NULL
#define rk4_e NULL
#define rk4_bd NULL
#define rk4_dense_order 0
#define rk4_dense_degree 0
#define rk4_increments 0

/* ---- Dormand-Prince 5(4) (HNW I, Table II.5.2; error weights of DOPRI5) ------- */
static const double dopri5_c[] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double dopri5_A[] = {
    0, 0, 0, 0, 0, 0, 0, /* */
    1.0 / 5, 0, 0, 0, 0, 0, 0, /* */
    3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0, /* */
    44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0, /* */
    19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0, /* */
    9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0, /* */
    35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0,
};
static const double dopri5_b[] = {35.0 / 384,     0, 500.0 / 1113, 125.0 / 192,
                                  -2187.0 / 6784, 11.0 / 84, 0};
static const double dopri5_bhat[] = {5179.0 / 57600,     0, 7571.0 / 16695, 393.0 / 640,
                                     -92097.0 / 339200, 187.0 / 2100, 1.0 / 40};
static const double dopri5_e[] = {71.0 / 57600,      0, -71.0 / 16695, 71.0 / 1920,
                                  -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
/* Dense output of order 4 (Dormand & Prince 1980; Shampine 1986; HNW I, Sect. II.6,
 * Eq. (6.12) and code DOPRI5/CONTD5): with theta1 = 1 - theta,
 *     y(theta) = y_n + theta ydiff + theta theta1 (h k_1 - ydiff)
 *                + theta^2 theta1 (2 ydiff - h k_1 - h k_7) + theta^2 theta1^2 h sum_i d_i k_i,
 * ydiff = h sum_i b_i k_i, d = (-12715105075/11282082432, 0, 87487479700/32700410799,
 * -10690763975/1880347072, 701980252875/199316789632, -1453857185/822651844,
 * 69997945/29380423).  Expanded here in powers of theta in exact rational
 * arithmetic (b_i(theta) = sum_j bd_ij theta^j); the FSAL stage k_7 = f(t_n+1, y_n+1). */
static const double dopri5_bd[] = {
    1.0, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608, -12715105075.0 / 11282082432,
    0, 0, 0, 0,
    0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933, 87487479700.0 / 32700410799,
    0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304, -10690763975.0 / 1880347072,
    0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408,
    701980252875.0 / 199316789632,
    0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844,
    0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423,
};
#define dopri5_dense_order 4
#define dopri5_dense_degree 4
#define dopri5_increments 0

/* ---- Tsitouras 5(4) --------------------------------------------------------------
 * Ch. Tsitouras, Runge-Kutta pairs of order 5(4) satisfying only the first
 * column simplifying assumption, Comput. Math. Appl. 62 (2011) 770-775.  The
 * 85-digit values of OrdinaryDiffEq.jl (tsit_tableaus.jl; A and b agree with
 * ARKODE_TSITOURAS_7_4_5 to its 40 digits).  With 80-digit arithmetic they
 * satisfy the 17 conditions of order 5 (b) and the 8 of order 4 (bhat) to
 * 1e-79, and miss order 6 / 5 by 2.2e-4 / 8.7e-4.  The embedded weights are
 * those of OrdinaryDiffEq.jl (bhat_7 = 1/66); ARKODE uses another order-4
 * embedding of the same stages (bhat_7 = 0.025). */
static const double tsit5_c[] = {
    0, 1.61e-1, 3.27e-1,
    9.0e-1, 9.800255409045096857298103e-1, 1.0,
    1.0,
};
static const double tsit5_A[] = {
    /* row 1 */
    0, 0, 0,
    0, 0, 0,
    0,
    /* row 2 */
    1.61e-1, 0, 0,
    0, 0, 0,
    0,
    /* row 3 */
    -8.480655492356988544426874e-3, 3.354806554923569885444269e-1, 0,
    0, 0, 0,
    0,
    /* row 4 */
    2.897153057105493432130433, -6.35944848997507484314816, 4.362295432869581411017727,
    0, 0, 0,
    0,
    /* row 5 */
    5.325864828439256604428878, -1.174888356406282787774717e+1, 7.495539342889836208304605,
    -9.249506636175524925650208e-2, 0, 0,
    0,
    /* row 6 */
    5.861455442946420028659251, -1.292096931784710929170612e+1, 8.159367898576158643180401,
    -7.158497328140099722453054e-2, -2.826905039406838290900306e-2, 0,
    0,
    /* row 7 */
    9.646076681806522951816731e-2, 1.0e-2, 4.798896504144995747752495e-1,
    1.379008574103741893192275, -3.290069515436080679901048, 2.324710524099773982415356,
    0,
};
static const double tsit5_b[] = {
    9.646076681806522951816731e-2, 1.0e-2, 4.798896504144995747752495e-1,
    1.379008574103741893192275, -3.290069515436080679901048, 2.324710524099773982415356,
    0,
};
static const double tsit5_bhat[] = {
    9.468075576583945807478876e-2, 9.183565540343253096776364e-3, 4.877705284247615707855643e-1,
    1.23429756693047898565511, -2.70771234998352545488111, 1.866628418170587035753719,
    1.515151515151515151515152e-2,
};
static const double tsit5_e[] = {
    1.780011052225771443378551e-3, 8.164344596567469032236361e-4, -7.880878010261996010314728e-3,
    1.447110071732629075371651e-1, -5.823571654525552250199376e-1, 4.580821059291869466616365e-1,
    -1.515151515151515151515152e-2,
};
/* Dense output of order 4 (Tsitouras 2011, Sect. 3: b_i(theta), degree 4, the
 * step's 7 stages): the expanded coefficients r_ij of b_i(theta) = sum_j r_ij
 * theta^j as OrdinaryDiffEq.jl gives them in high precision (Tsit5Interp; 17
 * digits where it gives no more).  tests/check_tableau.c checks b_i(1) = b_i and
 * the 8 conditions of order 4 at theta = 1/4, 1/2, 3/4. */
static const double tsit5_bd[] = {
    /* r_11 = 0.999999999999999974283372471559910888 rounds to 1 */
    1.0, -2.763706197274825911336735930, 2.913255461821912743750680993, -1.0530884977290216,
    0, 0.13169999999999999727, -0.22339999999999999818, 0.1017,
    0, 3.930296236894751528506874467, -5.941033872131504734702492026, 2.490627285651252793,
    0, -12.41107716693367698373438154, 30.33818863028232159817299037, -16.54810288924490272,
    0, 37.50931341651103919496903965, -88.17890489476640110142766935, 47.37952196281928122,
    0, -27.89652628919728780594826314, 65.09189467479367152629021929, -34.87065786149660974,
    0, 1.5, -4.0, 2.5,
};
#define tsit5_dense_order 4
#define tsit5_dense_degree 4
#define tsit5_increments 0

/* ---- Verner 6(5), "efficient" 9-stage pair ---------------------------------------
 * J. H. Verner, Numerically optimal Runge-Kutta pairs with interpolants, Numer.
 * Algorithms 53 (2010) 383-396, and the coefficients on his web page: the
 * exact rationals of OrdinaryDiffEq.jl (verner_tableaus.jl, Vern6), rounded to
 * 25 digits here.  In exact rational arithmetic: row sums exact, b satisfies
 * all 37 conditions of order 6 and bhat all 17 of order 5 exactly (misses of
 * order 7 / 6: 1.0e-6 / 2.2e-3 for the worst tree).  A and b agree with
 * ARKODE_VERNER_9_5_6 to its 40 digits; ARKODE uses another embedding. */
static const double vern6_c[] = {
    0, 6.0e-2, 9.593333333333333333333333e-2,
    1.439e-1, 4.973e-1, 9.725e-1,
    9.995e-1, 1.0, 1.0,
};
static const double vern6_A[] = {
    /* row 1 */
    0, 0, 0,
    0, 0, 0,
    0, 0, 0,
    /* row 2 */
    6.0e-2, 0, 0,
    0, 0, 0,
    0, 0, 0,
    /* row 3 */
    1.923996296296296296296296e-2, 7.669337037037037037037037e-2, 0,
    0, 0, 0,
    0, 0, 0,
    /* row 4 */
    3.5975e-2, 0, 1.07925e-1,
    0, 0, 0,
    0, 0, 0,
    /* row 5 */
    1.318683415233148260919747, 0, -5.042058063628562225427762,
    4.220674648395413964508014, 0, 0,
    0, 0, 0,
    /* row 6 */
    -4.187259166432751461803758e+1, 0, 1.594325621631374917700366e+2,
    -1.221192135650100309202516e+2, 5.531743066200053768252631, 0,
    0, 0, 0,
    /* row 7 */
    -5.443015693531650433250642e+1, 0, 2.070672513650184644273657e+2,
    -1.586108137845899991828742e+2, 6.991816585950242321992597, -1.859723106220323397765172e-2,
    0, 0, 0,
    /* row 8 */
    -5.466374178728197680241216e+1, 0, 2.079528062553893734515825e+2,
    -1.59288957474499507150896e+2, 7.018743740796944434698171, -1.833878590504572306472782e-2,
    -5.119484997882099077875432e-4, 0, 0,
    /* row 9 */
    3.43895786835703600927882e-2, 0, 0,
    2.582624555633503404659558e-1, 4.209371189673537150642552e-1, 4.405396469669310170148837,
    -1.764831190242986576151741e+2, 1.723641334014150730294023e+2, 0,
};
static const double vern6_b[] = {
    3.43895786835703600927882e-2, 0, 0,
    2.582624555633503404659558e-1, 4.209371189673537150642552e-1, 4.405396469669310170148837,
    -1.764831190242986576151741e+2, 1.723641334014150730294023e+2, 0,
};
static const double vern6_bhat[] = {
    4.301298296577121321081731e-2, 0, 0,
    2.388284256101976309461277e-1, 4.493871915553916989720087e-1, 2.295685408604019053920989,
    -7.30245761243346722397064e+1, 7.096432878226595930932312e+1, 3.333333333333333333333333e-2,
};
static const double vern6_e[] = {
    -8.623404282200853118029111e-3, 0, 0,
    1.943402995315270951982814e-2, -2.845007258803798390775356e-2, 2.109711061065291116227847,
    -1.034585428999639853754677e+2, 1.013998046191491137200791e+2, -3.333333333333333333333333e-2,
};
/* Verner's interpolant of this pair (order 6, on his web page; OrdinaryDiffEq.jl
 * Vern6Interp) needs three more stages, 10-12: three more right-hand sides per
 * step, which a dense output may not evaluate (method.h, mbs_dense_fn: the run
 * and its counters must not change).  None here: the harness interpolates. */
#define vern6_bd NULL
#define vern6_dense_order 0
#define vern6_dense_degree 0
/* A and b up to 208 in magnitude: rounded to doubles, row 7 sums to c_7 + 2.0e-14
 * and sum_i b_i (A 1)_i - 1/2 = -6.5e-12 (the decimals above are right to 2e-20:
 * the loss is the doubles').  The increment form (explicit.c, combine) uses the
 * stored c_i as the row sums: the order-2 residual becomes 4.2e-15. */
#define vern6_increments 1

/* ---- the tableaux of tableaux.def ------------------------------------------------ */
#define MBS_TABLEAU_DEF_(sym, nm, p, phat, fs, summ, cite, unused)                          \
    const mbs_tableau mbs_tableau_##sym = {                                                 \
        .name = nm,                                                                         \
        .summary = summ,                                                                    \
        .citation = cite,                                                                   \
        .stages = (int)(sizeof sym##_c / sizeof sym##_c[0]),                                \
        .order = p,                                                                         \
        .order_emb = phat,                                                                  \
        .fsal = fs,                                                                         \
        .c = sym##_c,                                                                       \
        .A = sym##_A,                                                                       \
        .b = sym##_b,                                                                       \
        .bhat = sym##_bhat,                                                                 \
        .e = sym##_e,                                                                       \
        .dense_order = sym##_dense_order,                                                   \
        .dense_degree = sym##_dense_degree,                                                 \
        .bd = sym##_bd,                                                                     \
        .increments = sym##_increments,                                                     \
    };
MBS_TABLEAUX(MBS_TABLEAU_DEF_, ~)

#define MBS_TABLEAU_ADDR_(sym, nm, p, phat, fs, summ, cite, unused) &mbs_tableau_##sym,
static const mbs_tableau *const tableaux[] = {MBS_TABLEAUX(MBS_TABLEAU_ADDR_, ~)};

size_t mbs_tableau_count(void)
{
    return sizeof tableaux / sizeof tableaux[0];
}

const mbs_tableau *mbs_tableau_at(size_t i)
{
    return i < mbs_tableau_count() ? tableaux[i] : NULL;
}
