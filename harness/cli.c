/* The command-line manual: every command's options with meaning, default and
 * range (cli.h), the parser that accepts only those, and --help. */
#include "cli.h"

#include <math.h>
#include <string.h>

#include "../core/param.h"

#define N(a) (sizeof(a) / sizeof *(a))
#define INF HUGE_VAL

/* Options shared by several commands. */
#define OPT_PROBLEM(what)                                                                    \
    {.name = "--problem", .alias = "-p", .kind = MBS_OPT_STR, .arg = "PROBLEM[:k=v,...]",   \
     .doc = what, .def = "none (required)",                                                  \
     .range = "a problem of 'mbsbench list problems' (a mechanism file mechanisms/NAME.mech "  \
              "is the problem NAME), or model:file=PATH.mech[,k=v,...] for any other "         \
              "mechanism file (docs/adding-a-problem.md); parameters in their ranges"}
#define OPT_METHOD(what)                                                                     \
    {.name = "--method", .alias = "-m", .kind = MBS_OPT_STR, .arg = "METHOD[:k=v,...]",     \
     .doc = what, .def = "none (required)",                                                  \
     .range = "a method of 'mbsbench list methods', parameters in their ranges"}
#define OPT_T_END                                                                            \
    {.name = "--t-end", .kind = MBS_OPT_NUM, .arg = "T",                                     \
     .doc = "end of the integration interval [t0, T]",                                      \
     .def = "the problem's t_end ('mbsbench list problems')",                                \
     .range = "a finite number above the problem's t0", .lo = -INF, .hi = INF,               \
     .lo_open = 1, .hi_open = 1}
#define OPT_OUTPUT_STEPS                                                                     \
    {.name = "--output-steps", .kind = MBS_OPT_INT, .arg = "N",                              \
     .doc = "output grid of the errors along the trajectory (record field traj): N + 1 "    \
            "equally spaced times on [t0, t_end]",                                           \
     .def = "the problem's, 100 unless it sets another", .lo = 1, .hi = 10000000}
#define OPT_TOL_MODE                                                                         \
    {.name = "--tol-mode", .kind = MBS_OPT_STR, .arg = "local|global",                       \
     .doc = "local: TOL bounds the method's error per step; global: TOL is a target for "   \
            "the error at t_end, met by integrating again at tenfold smaller tolerances "    \
            "(docs/results-schema.md, \"Tolerance modes\"); adaptive methods only",          \
     .def = "local", .range = "local, global"}
#define OPT_BUDGETS(what)                                                                    \
    {.name = "--max-steps", .kind = MBS_OPT_INT, .arg = "N",                                \
     .doc = "step budget of each integration (accepted + rejected steps)" what,             \
     .def = "1e7", .lo = 1, .hi = 1e15},                                                     \
    {.name = "--max-cpu", .kind = MBS_OPT_NUM, .arg = "S",                                   \
     .doc = "CPU-time budget of each integration, in seconds" what, .def = "600",           \
     .lo = 0, .hi = 1e7, .lo_open = 1},                                                      \
    {.name = "--max-wall", .kind = MBS_OPT_NUM, .arg = "S",                                  \
     .doc = "wall-clock budget of each integration, in seconds" what, .def = "1200",        \
     .lo = 0, .hi = 1e7, .lo_open = 1},                                                      \
    {.name = "--max-mem", .kind = MBS_OPT_NUM, .arg = "BYTES",                               \
     .doc = "memory budget of each run, in bytes; a dense method whose workspace does not " \
            "fit is refused before it starts" what,                                          \
     .def = "the memory available (MemAvailable, address-space limit)", .lo = 0,            \
     .hi = 1e18, .lo_open = 1}
#define OPT_HISTORY(what)                                                                    \
    {.name = "--history", .kind = MBS_OPT_STR, .arg = "DB",                                  \
     .doc = "the results-history database (SQLite) that " what " enters",                   \
     .def = "results/history.sqlite when the results directory lies in a directory named "  \
            "results; elsewhere none",                                                       \
     .range = "a writable file"},                                                            \
    {.name = "--no-history", .kind = MBS_OPT_FLAG,                                           \
     .doc = "keep " what " out of the results history", .def = "off", .range = "a flag"}

#define PARAMS_NOTE                                                                          \
    "PROBLEM and METHOD take parameters after a colon, e.g. heavytop:coords=rotmat,\n"       \
    "dca/rk4:threads=2, index1/tsit5:linsol=chol (a parameter given twice is refused);\n"   \
    "'mbsbench list problems|methods' shows every parameter with its default and range.\n" \
    "A mechanism file is a problem too: -p NAME for mechanisms/NAME.mech, -p\n"            \
    "model:file=PATH.mech[,k=v,...] for a file anywhere else.\n"

static const mbs_opt common[] = {
    {.name = "--help", .alias = "-h", .kind = MBS_OPT_FLAG,
     .doc = "print this help (options with meaning, default and range) and exit",
     .def = "off", .range = "a flag"},
    {.name = "--plugin", .kind = MBS_OPT_STR, .arg = "PATH.so",
     .doc = "load the problems and methods of a plugin before the command runs (before or "
            "after the command; repeatable; also --plugin=PATH.so)",
     .def = "none", .range = "a shared object built against the installed headers"},
};

static const mbs_opt list_opts[] = {
    {.name = "--long", .kind = MBS_OPT_FLAG,
     .doc = "also each problem's or method's source (author, year, references.bib key) and "
            "each problem's reference solution",
     .def = "off", .range = "a flag"},
    {.name = "--markdown", .kind = MBS_OPT_FLAG,
     .doc = "list methods only: the method table of docs/methods.md, which problem classes "
            "each method takes measured by one short run per class",
     .def = "off", .range = "a flag"},
};

static const mbs_opt run_opts[] = {
    OPT_PROBLEM("the problem, with parameters after a colon"),
    OPT_METHOD("the method, with parameters after a colon"),
    {.name = "--h", .kind = MBS_OPT_NUM, .arg = "H",
     .doc = "step size of a fixed-step method (required for one); for an adaptive method the "
            "initial step, with --tol",
     .def = "none (adaptive methods choose their initial step)",
     .range = "(0, t_end - t0], at most 1e15 steps", .lo = 0, .hi = INF, .lo_open = 1,
     .hi_open = 1},
    {.name = "--tol", .kind = MBS_OPT_NUM, .arg = "TOL",
     .doc = "tolerance of an adaptive method (required for one), rtol = atol = TOL; "
            "refused for fixed-step methods",
     .def = "none", .lo = 0, .hi = 1, .lo_open = 1, .hi_open = 1},
    {.name = "--atol", .kind = MBS_OPT_NUM, .arg = "A",
     .doc = "absolute tolerance of an adaptive method, apart from TOL", .def = "TOL",
     .lo = 0, .hi = 1, .lo_open = 1, .hi_open = 1},
    OPT_TOL_MODE,
    OPT_T_END,
    {.name = "--repeat", .kind = MBS_OPT_INT, .arg = "K",
     .doc = "timing repetitions after the measuring run (CPU time: minimum, median, IQR)",
     .def = "1", .lo = 1, .hi = 100000},
    OPT_BUDGETS(""),
    {.name = "--format", .kind = MBS_OPT_STR, .arg = "table|json|csv",
     .doc = "the record as a table, one JSON object (docs/results-schema.md) or a CSV header "
            "and row",
     .def = "table", .range = "table, json, csv"},
    OPT_OUTPUT_STEPS,
    {.name = "--trajectory", .kind = MBS_OPT_STR, .arg = "FILE.csv",
     .doc = "write t, every state component (q1.., v1.., lambda1..) and the problem's "
            "reported quantities at each time of the output grid, one row per time, as CSV",
     .def = "none", .range = "a writable file"},
    {.name = "--inject-failure", .kind = MBS_OPT_NUM, .arg = "T",
     .doc = "the problem's callbacks fail for t >= T, to test how a failed run is recorded",
     .def = "off", .lo = 0, .hi = INF, .lo_open = 1, .hi_open = 1, .hook = 1},
};

static const mbs_opt converge_opts[] = {
    OPT_PROBLEM("the problem, with parameters after a colon"),
    OPT_METHOD("the method, with parameters after a colon"),
    {.name = "--h0", .kind = MBS_OPT_NUM, .arg = "H",
     .doc = "largest step of a fixed-step study (level i: H / R^i); fixed-step methods only",
     .def = "none (one of --h0, --tol0 is required)", .range = "(0, t_end - t0]", .lo = 0,
     .hi = INF, .lo_open = 1, .hi_open = 1},
    {.name = "--tol0", .kind = MBS_OPT_NUM, .arg = "TOL",
     .doc = "loosest tolerance of a tolerance study (level i: TOL / R^i); adaptive methods "
            "only",
     .def = "none (one of --h0, --tol0 is required)", .lo = 0, .hi = 1, .lo_open = 1,
     .hi_open = 1},
    {.name = "--levels", .kind = MBS_OPT_INT, .arg = "L", .doc = "number of levels",
     .def = "6", .lo = 2, .hi = 40},
    {.name = "--ratio", .kind = MBS_OPT_NUM, .arg = "R",
     .doc = "ratio of consecutive steps or tolerances",
     .def = "2 for --h0, 10 for --tol0", .lo = 1, .hi = 100, .lo_open = 1},
    OPT_T_END,
    {.name = "--format", .kind = MBS_OPT_STR, .arg = "table|json",
     .doc = "the study as a table (errors and observed orders with 95% confidence intervals) "
            "or one JSON object",
     .def = "table", .range = "table, json"},
    OPT_TOL_MODE,
    OPT_OUTPUT_STEPS,
    OPT_BUDGETS(""),
};

static const mbs_opt sweep_opts[] = {
    {.name = "--jobs", .alias = "-j", .kind = MBS_OPT_INT, .arg = "N",
     .doc = "worker processes (one run each at a time)", .def = "1", .lo = 1, .hi = 256},
    {.name = "--out", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "the results directory to write (runs.jsonl, runs.csv, meta.json; the table "
            "goes to standard output)",
     .def = "results/SUITE-YYYYmmdd-HHMMSS", .range = "a directory without results"},
    {.name = "--resume", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "complete an interrupted sweep of the same suite in DIR: the runs it holds are "
            "kept, the others run",
     .def = "none", .range = "an existing results directory of this suite (not with --out)"},
    {.name = "--budget", .kind = MBS_OPT_NUM, .arg = "SECONDS",
     .doc = "wall-clock budget of the whole sweep: runs not started by then are left for "
            "--resume",
     .def = "none", .lo = 0, .hi = INF, .lo_open = 1, .hi_open = 1},
    {.name = "--baseline", .kind = MBS_OPT_STR, .arg = "FILE",
     .doc = "per-run budgets from a baseline: 10x its steps and CPU time, for the runs it "
            "holds",
     .def = "none", .range = "a baseline written by 'mbsbench baseline bless'"},
    {.name = "--series", .kind = MBS_OPT_FLAG,
     .doc = "also write each run's time series (constraint and energy drift) to "
            "DIR/series/run-INDEX.tsv",
     .def = "off", .range = "a flag"},
    OPT_HISTORY("the sweep"),
    OPT_BUDGETS("; overrides the suite's for every run"),
    {.name = "--shard", .kind = MBS_OPT_STR, .arg = "I/N",
     .doc = "run shard I of N of the grid (balanced by estimated or --cost-from cost); "
            "'mbsbench merge' puts the shards together",
     .def = "none (the whole grid)", .range = "0 <= I < N <= 100000"},
    {.name = "--cost-from", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "with --shard or --slurm: balance the shards by the CPU times measured in an "
            "earlier results directory",
     .def = "none (estimated costs)", .range = "a results directory"},
    {.name = "--slurm", .kind = MBS_OPT_FLAG,
     .doc = "write DIR/sweep.sbatch, a Slurm job array whose task I runs shard I (needs "
            "--out DIR on a file system every node reaches)",
     .def = "off", .range = "a flag"},
    {.name = "--array-size", .kind = MBS_OPT_INT, .arg = "N",
     .doc = "with --slurm: tasks of the job array (= shards)", .def = "4", .lo = 1,
     .hi = 100000},
    {.name = "--partition", .kind = MBS_OPT_STR, .arg = "P",
     .doc = "with --slurm: #SBATCH --partition", .def = "the cluster's default",
     .range = "one word without spaces, quotes or shell characters"},
    {.name = "--time", .kind = MBS_OPT_STR, .arg = "T",
     .doc = "with --slurm: #SBATCH --time of each task", .def = "the cluster's default",
     .range = "one word without spaces, quotes or shell characters"},
    {.name = "--account", .kind = MBS_OPT_STR, .arg = "A",
     .doc = "with --slurm: #SBATCH --account", .def = "the cluster's default",
     .range = "one word without spaces, quotes or shell characters"},
    {.name = "--qos", .kind = MBS_OPT_STR, .arg = "Q", .doc = "with --slurm: #SBATCH --qos",
     .def = "the cluster's default",
     .range = "one word without spaces, quotes or shell characters"},
    {.name = "--cpus-per-task", .kind = MBS_OPT_INT, .arg = "C",
     .doc = "with --slurm: #SBATCH --cpus-per-task, also the -j of each task", .def = "1",
     .lo = 1, .hi = 256},
    {.name = "--mem", .kind = MBS_OPT_STR, .arg = "M", .doc = "with --slurm: #SBATCH --mem",
     .def = "the cluster's default",
     .range = "one word without spaces, quotes or shell characters"},
    {.name = "--sbatch-option", .kind = MBS_OPT_STR, .arg = "OPT",
     .doc = "with --slurm: any other #SBATCH line, e.g. --constraint=avx2 (repeatable, up to "
            "16)",
     .def = "none", .range = "one word starting with '-', without spaces, quotes or shell "
                            "characters"},
    {.name = "--submit", .kind = MBS_OPT_FLAG,
     .doc = "with --slurm: submit the script (sbatch --parsable) and write the job id to "
            "DIR/slurm-job",
     .def = "off", .range = "a flag"},
};

static const mbs_opt merge_opts[] = {
    {.name = "--partial", .kind = MBS_OPT_FLAG,
     .doc = "write what the inputs hold although shards or runs are missing (still exit 1)",
     .def = "off (nothing is written when runs are missing)", .range = "a flag"},
    OPT_HISTORY("the merged directory"),
};

static const mbs_opt summary_opts[] = {
    {.name = "--brief", .kind = MBS_OPT_FLAG,
     .doc = "the short verdict: per problem and error level the fastest run that reached "
            "it, and the failed runs by status",
     .def = "off", .range = "a flag"},
    {.name = "--report", .kind = MBS_OPT_STR, .arg = "PATH",
     .doc = "with --brief: the report's path, printed last", .def = "none",
     .range = "any path"},
    {.name = "--format", .kind = MBS_OPT_STR, .arg = "table|md|csv|latex|iftomm",
     .doc = "the table as text, Markdown, CSV or LaTeX; iftomm: per problem and IFToMM "
            "precision class each method's cheapest run that meets it (docs/usage.md)",
     .def = "table", .range = "table, md, csv, latex, iftomm"},
    {.name = "--error", .kind = MBS_OPT_STR, .arg = "final|traj",
     .doc = "the errors shown and judged: at t_end, or along the trajectory (the maximum "
            "over the output grid of the mixed error, records with traj only)",
     .def = "final", .range = "final, traj"},
};

static const mbs_opt report_opts[] = {
    {.name = "--out", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "the report directory (index.html, index.md, figures as PNG and SVG)",
     .def = "reports/NAME, NAME the last component of RESULTS_DIR",
     .range = "a writable directory"},
    {.name = "--latex", .kind = MBS_OPT_FLAG, .doc = "also write the tables as tables.tex",
     .def = "off", .range = "a flag"},
    {.name = "--error", .kind = MBS_OPT_STR, .arg = "final|traj",
     .doc = "the error of the tables: at t_end, or along the trajectory (records with traj "
            "only); the work-precision figures show both when measured",
     .def = "final", .range = "final, traj"},
};

static const mbs_opt reproduce_opts[] = {
    {.name = "--list", .kind = MBS_OPT_FLAG,
     .doc = "list the reproductions with their sources and suites", .def = "off",
     .range = "a flag"},
    {.name = "--all", .kind = MBS_OPT_FLAG, .doc = "run and check every reproduction",
     .def = "off", .range = "a flag"},
    {.name = "--page", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "with --all: write DIR/index.md and DIR/index.html with each reproduction's "
            "table; with iftomm: DIR/iftomm.md, iftomm.html and the work-precision figures",
     .def = "none (iftomm: reports/<name of the results directory>)",
     .range = "a writable directory"},
    {.name = "--results", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "with NAME: check an existing results directory of the reproduction's suite "
            "instead of running it (refused when its meta.json names another suite or grid; "
            "iftomm scores any results directory)",
     .def = "none (run the suite)", .range = "a results directory"},
    {.name = "--out", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "with NAME: where the suite's sweep writes its results; with --all: DIR/NAME "
            "for each reproduction",
     .def = "results/reproduce-NAME-YYYYmmdd-HHMMSS", .range = "a directory without results"},
    {.name = "--jobs", .alias = "-j", .kind = MBS_OPT_INT, .arg = "N",
     .doc = "worker processes of each sweep", .def = "2", .lo = 1, .hi = 256},
    {.name = "--dir", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "where the reproductions (NAME.expect) are",
     .def = "reproductions/ of the data directory (docs/usage.md)",
     .range = "a directory of .expect files"},
};

static const mbs_opt baseline_opts[] = {
    {.name = "--out", .alias = "-o", .kind = MBS_OPT_STR, .arg = "BASELINE.json",
     .doc = "the baseline file to write", .def = "none (required)",
     .range = "a writable file"},
};

static const mbs_opt compare_opts[] = {
    {.name = "--allow-counters", .kind = MBS_OPT_FLAG,
     .doc = "report changed work counters (steps, evaluations) without failing",
     .def = "off (a counter change is a regression)", .range = "a flag"},
    {.name = "--cpu-threshold", .kind = MBS_OPT_NUM, .arg = "R",
     .doc = "relative CPU slow-down flagged (0.25: 25% slower), when also significant at "
            "--alpha",
     .def = "0.25", .lo = 0, .hi = 100, .lo_open = 1, .hi_open = 1},
    {.name = "--alpha", .kind = MBS_OPT_NUM, .arg = "A",
     .doc = "significance level of the one-sided Mann-Whitney test on the CPU-time samples",
     .def = "0.01", .lo = 0, .hi = 0.5, .lo_open = 1},
    {.name = "--confirm", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "a second sweep of the same suite: a CPU slow-down is a regression only when "
            "that sweep's run is slower too (make nightly sweeps again when one is flagged)",
     .def = "none (one sweep decides)", .range = "a results directory"},
    {.name = "--verbose", .alias = "-v", .kind = MBS_OPT_FLAG,
     .doc = "also print the checks that pass", .def = "off", .range = "a flag"},
};

static const mbs_opt history_opts[] = {
    OPT_PROBLEM("the problem spec, as recorded (with --glob a pattern)"),
    OPT_METHOD("the method spec, as recorded (with --glob a pattern)"),
    {.name = "--metric", .kind = MBS_OPT_STR, .arg = "cpu_median|err_q|order_q",
     .doc = "the metric over the recorded sweeps", .def = "err_q",
     .range = "cpu_median, err_q, order_q"},
    {.name = "--db", .kind = MBS_OPT_STR, .arg = "FILE", .doc = "the history database",
     .def = "results/history.sqlite", .range = "a database written by sweep or merge"},
    {.name = "--glob", .kind = MBS_OPT_FLAG,
     .doc = "-p and -m are shell patterns (fnmatch), e.g. 'chain*'",
     .def = "off (exact specs)", .range = "a flag"},
    {.name = "--plot", .kind = MBS_OPT_FLAG, .doc = "also draw the metric with gnuplot",
     .def = "off", .range = "a flag"},
    {.name = "--out", .kind = MBS_OPT_STR, .arg = "FILE.png", .doc = "with --plot: the figure",
     .def = "history.png", .range = "a writable file"},
};

static const mbs_opt battery_opts[] = {
    {.name = "--check", .kind = MBS_OPT_FLAG,
     .doc = "only the pairs of the data file's check list (what make check runs)",
     .def = "off", .range = "a flag"},
    {.name = "--problem", .alias = "-p", .kind = MBS_OPT_STR, .arg = "PROBLEM",
     .doc = "only this problem (repeatable; default parameters, as the battery runs them)",
     .def = "every built-in problem", .range = "a problem of 'mbsbench list problems'"},
    {.name = "--method", .alias = "-m", .kind = MBS_OPT_STR, .arg = "PATTERN",
     .doc = "only the methods matching this fnmatch pattern, e.g. 'index3/*' (repeatable)",
     .def = "every registered method", .range = "a pattern"},
    {.name = "--jobs", .alias = "-j", .kind = MBS_OPT_INT, .arg = "N",
     .doc = "worker processes (one pair each at a time)", .def = "1", .lo = 1, .hi = 256},
    {.name = "--rejudge", .kind = MBS_OPT_FLAG,
     .doc = "run nothing: judge the selected pairs stored in DIR/battery.jsonl again (a "
            "changed rule or [expect] section) and write battery.md",
     .def = "off", .range = "a flag"},
    {.name = "--out", .kind = MBS_OPT_STR, .arg = "DIR",
     .doc = "where battery.jsonl (one line per pair; a pair already there is kept, so an "
            "interrupted run resumes) and battery.md go",
     .def = "results/battery (with --check: results/battery-check)", .range = "a directory"},
};

static const mbs_opt check_problem_opts[] = {
    OPT_PROBLEM("the problem to check, with parameters after a colon"),
};

static const mbs_opt reference_opts[] = {
    OPT_PROBLEM("the problem, with parameters after a colon (-p may be left out)"),
    OPT_T_END,
    {.name = "--tol", .kind = MBS_OPT_NUM, .arg = "TOL",
     .doc = "tolerance of the two computations", .def = "1e-13", .lo = 0, .hi = 1e-3,
     .lo_open = 1, .hi_open = 1},
    {.name = "--methods", .kind = MBS_OPT_STR, .arg = "A,B",
     .doc = "the two independent computations ('independent' is the problem's own "
            "formulation)",
     .def = "independent,index1/rk8pd when the problem has an independent formulation, "
            "else index1/rk8pd,index1/dopri5",
     .range = "two different methods of 'mbsbench list methods', or independent"},
    {.name = "--min-digits", .kind = MBS_OPT_NUM, .arg = "D",
     .doc = "digits in which the two computations must agree (else nothing is stored, exit "
            "1)",
     .def = "8", .lo = 0, .hi = 17},
    {.name = "--dry-run", .kind = MBS_OPT_FLAG,
     .doc = "compute and compare, store nothing", .def = "off", .range = "a flag"},
    {.name = "--trajectory", .kind = MBS_OPT_FLAG,
     .doc = "a reference trajectory on the output grid (problems/ref/NAME.traj): both "
            "computations at every grid time, which must agree there; where they first part, "
            "the trajectory is refused (exit 1) naming that time, and the time is stored as "
            "the predictability horizon",
     .def = "off (the state at t_end, problems/ref/NAME.ref)", .range = "a flag"},
    OPT_OUTPUT_STEPS,
    {.name = "--expect-horizon", .kind = MBS_OPT_FLAG,
     .doc = "with --trajectory: the refusal is expected (exit 0 when the computations part, "
            "1 when they agree)",
     .def = "off", .range = "a flag"},
};

static const char exit_note[] =
    "Exit status: 0 success; 1 a run failed numerically (the record says why and when);\n"
    "2 bad input (one line on stderr naming the bad value).\n";

static const mbs_cli_cmd commands[] = {
    {.name = "list",
     .summary = "list the registered problems or methods with their parameters",
     .synopsis = "list problems|methods [--long | --markdown]",
     .operands = "problems or methods: what to list.",
     .notes = "Each parameter is printed as NAME = DEFAULT [MIN, MAX] or {CHOICES}, then its "
              "meaning.\n",
     .opts = list_opts, .n_opts = N(list_opts)},
    {.name = "run", .summary = "integrate one problem with one method and print its record",
     .synopsis = "run -p PROBLEM[:k=v,...] -m METHOD[:k=v,...] (--h H | --tol TOL)\n"
                 "    [--atol A] [--tol-mode local|global] [--t-end T] [--repeat K]\n"
                 "    [--max-steps N] [--max-cpu S] [--max-wall S] [--max-mem BYTES]\n"
                 "    [--format table|json|csv] [--output-steps N] [--trajectory FILE.csv]",
     .notes = PARAMS_NOTE, .opts = run_opts, .n_opts = N(run_opts)},
    {.name = "converge",
     .summary = "refinement study: observed orders (fixed step) or tolerance proportionality",
     .synopsis = "converge -p PROBLEM[:k=v,...] -m METHOD[:k=v,...] (--h0 H | --tol0 TOL)\n"
                 "    [--levels L] [--ratio R] [--t-end T] [--format table|json]\n"
                 "    [--tol-mode local|global] [--output-steps N] [--max-steps N]\n"
                 "    [--max-cpu S] [--max-wall S] [--max-mem BYTES]",
     .notes = PARAMS_NOTE, .opts = converge_opts, .n_opts = N(converge_opts)},
    {.name = "battery",
     .summary = "the standard refinement study of every method on every problem, classified",
     .synopsis = "battery [FILE] [--check] [-p PROBLEM]... [-m PATTERN]... [-j N] [--rejudge]\n"
                 "    [--out DIR]",
     .operands = "FILE: the data file (h0 and tol0 per problem, expected order losses, the "
                 "check list); default suites/battery.ini.",
     .notes = "Each pair ends as pass, expected, limited, declined, failed or finding "
              "(docs/methods.md, \"Battery\").\nExit status 0 no finding, 1 findings, 2 bad "
              "input.\n",
     .opts = battery_opts, .n_opts = N(battery_opts)},
    {.name = "sweep",
     .summary = "run the grid of a suite file, one record per run, into a results directory",
     .synopsis = "sweep SUITE [-j N] [--out DIR | --resume DIR] [--budget SECONDS]\n"
                 "    [--baseline FILE] [--series] [--history DB | --no-history]\n"
                 "    [--max-steps N] [--max-cpu S] [--max-wall S] [--max-mem BYTES]\n"
                 "    [--shard I/N [--cost-from DIR]]\n"
                 "    [--slurm --out DIR [--array-size N] [--partition P] [--time T]\n"
                 "     [--account A] [--qos Q] [--cpus-per-task C] [--mem M]\n"
                 "     [--sbatch-option OPT]... [--cost-from DIR] [--submit]]",
     .operands = "SUITE: a suite file (docs/suite-format.md), e.g. suites/smoke.suite.",
     .notes = "SIGINT and SIGTERM stop a sweep cleanly (finished records are kept; --resume "
              "completes it).\nA sweep written outside a directory named results/ stays out "
              "of the results history\nunless --history DB names a database.\n",
     .opts = sweep_opts, .n_opts = N(sweep_opts)},
    {.name = "merge",
     .summary = "put shard directories (sweep --shard, --slurm) together into one results "
                "directory",
     .synopsis = "merge OUT DIR... [--partial] [--history DB | --no-history]",
     .operands = "OUT: the merged results directory (new); DIR...: the shard directories.",
     .notes = "Exit status 1 when shards or runs are missing (named, with the command that "
              "completes them).\n",
     .opts = merge_opts, .n_opts = N(merge_opts)},
    {.name = "summary",
     .summary = "table (or with --brief, the short verdict) of a results directory",
     .synopsis = "summary RESULTS_DIR [--brief [--report PATH] |\n"
                 "    --format table|md|csv|latex|iftomm]",
     .operands = "RESULTS_DIR: a results directory (sweep, merge).",
     .opts = summary_opts, .n_opts = N(summary_opts)},
    {.name = "report", .summary = "figures, tables and index.html of a results directory",
     .synopsis = "report RESULTS_DIR [--out DIR] [--latex]",
     .operands = "RESULTS_DIR: a results directory (sweep, merge).",
     .opts = report_opts, .n_opts = N(report_opts)},
    {.name = "reproduce", .summary = "published tables and figures checked against ours",
     .synopsis = "reproduce --list | --all [--page DIR] [--out DIR] [-j N] | NAME\n"
                 "    [--results DIR] [--out DIR] [-j N] [--dir DIR] | iftomm [--results DIR]\n"
                 "    [--out DIR] [--page DIR] [-j N]",
     .operands = "NAME: a reproduction of --list.",
     .notes = "Exit status 0 when every checked quantity is reproduced, 1 when one is not.\n"
              "iftomm (not an .expect file, not in --all): per IFToMM problem and precision "
              "class each\nmethod's cheapest run of suites/iftomm.suite and the work-precision "
              "figure; exit 1\nwhen runs have no record or a failed run no reason.\n",
     .opts = reproduce_opts, .n_opts = N(reproduce_opts)},
    {.name = "baseline", .summary = "bless a results directory as the regression baseline",
     .synopsis = "baseline bless RESULTS_DIR -o BASELINE.json",
     .operands = "bless: the only subcommand; RESULTS_DIR: the results directory to bless.",
     .opts = baseline_opts, .n_opts = N(baseline_opts)},
    {.name = "compare",
     .summary = "regression check of a results directory against a baseline",
     .synopsis = "compare BASELINE.json RESULTS_DIR [--allow-counters] [--cpu-threshold R]\n"
                 "    [--alpha A] [--confirm DIR] [-v]",
     .operands = "BASELINE.json: a baseline (baseline bless); RESULTS_DIR: the results to "
                 "check.",
     .notes = "Exit status 0 no regression, 1 a regression, 2 bad input.\n",
     .opts = compare_opts, .n_opts = N(compare_opts)},
    {.name = "history", .summary = "a case's metric over all recorded sweeps",
     .synopsis = "history -p P -m M [--metric cpu_median|err_q|order_q] [--db FILE]\n"
                 "    [--glob] [--plot [--out FILE.png]]",
     .opts = history_opts, .n_opts = N(history_opts)},
    {.name = "check-problem",
     .summary = "the problem battery: consistency of g, G, gamma, M, energy, initial values",
     .synopsis = "check-problem -p PROBLEM[:k=v,...]",
     .notes = PARAMS_NOTE "One line per check (ok, FAIL, or skip with the reason: no sparse "
                          "callbacks, no\nexact solution, no energy, ...).\nExit status 0 all checks pass, 1 one fails, 2 "
                          "bad input.\n",
     .opts = check_problem_opts, .n_opts = N(check_problem_opts)},
    {.name = "reference",
     .summary = "compute and store a reference solution (two independent computations)",
     .synopsis = "reference [-p] PROBLEM[:k=v,...] [--t-end T] [--tol TOL] [--methods A,B]\n"
                 "    [--min-digits D] [--dry-run] [--trajectory [--output-steps N]\n"
                 "    [--expect-horizon]]\n"
                 "references ...  (the same)",
     .operands = "PROBLEM: the problem, when -p is left out.",
     .notes = "The reference is stored in problems/ref/NAME.ref (or $MBSBENCH_REFDIR) with "
              "its provenance;\nit serves exactly these parameters and this t_end (a "
              "trajectory, NAME.traj: also this grid).\n",
     .opts = reference_opts, .n_opts = N(reference_opts)},
};

size_t mbs_cli_count(void) { return N(commands); }

const mbs_cli_cmd *mbs_cli_at(size_t i) { return i < N(commands) ? &commands[i] : NULL; }

const mbs_cli_cmd *mbs_cli_find(const char *name)
{
    if (name && strcmp(name, "references") == 0)
        name = "reference";
    for (size_t i = 0; name && i < N(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

const mbs_opt *mbs_cli_common(size_t *n)
{
    *n = N(common);
    return common;
}

/* %g without "e+" and exponent zeros: 1e15, 1e-13 */
static void number_text(double x, char *buf, size_t len)
{
    if (isinf(x)) {
        snprintf(buf, len, "%sinf", x < 0 ? "-" : "");
        return;
    }
    char t[32];
    snprintf(t, sizeof t, "%g", x);
    char *e = strchr(t, 'e');
    if (e) {
        char *d = e + 1, *src = e + 1;
        if (*src == '+')
            src++;
        else if (*src == '-')
            *d++ = *src++;
        while (*src == '0' && src[1])
            src++;
        memmove(d, src, strlen(src) + 1);
    }
    snprintf(buf, len, "%s", t);
}

void mbs_cli_range(const mbs_opt *o, char *buf, size_t len)
{
    if (o->range) {
        snprintf(buf, len, "%s", o->range);
        return;
    }
    char lo[32], hi[32];
    number_text(o->lo, lo, sizeof lo);
    number_text(o->hi, hi, sizeof hi);
    snprintf(buf, len, "%s%s, %s%s", o->lo_open ? "(" : "[", lo, hi, o->hi_open ? ")" : "]");
}

int mbs_cli_is(const mbs_cli_arg *a, const char *name)
{
    return a->opt && strcmp(a->opt->name, name) == 0;
}

static const mbs_opt *lookup(const mbs_cli_cmd *cmd, const char *word, size_t len)
{
    for (size_t k = 0; k < cmd->n_opts; k++) {
        const mbs_opt *o = &cmd->opts[k];
        if ((strlen(o->name) == len && strncmp(o->name, word, len) == 0) ||
            (o->alias && strlen(o->alias) == len && strncmp(o->alias, word, len) == 0))
            return o;
    }
    return NULL;
}

static int fail(const mbs_cli_cmd *cmd, const char *what)
{
    fprintf(stderr, "mbsbench: %s: %s\n", cmd->name, what);
    return -1;
}

int mbs_cli_next(const mbs_cli_cmd *cmd, int argc, char **argv, int *i, mbs_cli_arg *a)
{
    const char *w = argv[*i];
    char msg[1024];
    *a = (mbs_cli_arg){.str = w};
    if (w[0] != '-' || w[1] == '\0')
        return 0;
    const char *eq = strncmp(w, "--", 2) == 0 ? strchr(w, '=') : NULL;
    const mbs_opt *o = lookup(cmd, w, eq ? (size_t)(eq - w) : strlen(w));
    if (!o) {
        snprintf(msg, sizeof msg, "unknown option '%.*s' ('mbsbench %s --help' lists them)",
                 eq ? (int)(eq - w) : (int)strlen(w), w, cmd->name);
        return fail(cmd, msg);
    }
    a->opt = o;
    /* messages name the option as it was typed (-j or --jobs) */
    int nl = eq ? (int)(eq - w) : (int)strlen(w);
    if (o->kind == MBS_OPT_FLAG) {
        if (eq) {
            snprintf(msg, sizeof msg, "%.*s takes no value", nl, w);
            return fail(cmd, msg);
        }
        return 1;
    }
    const char *v = eq ? eq + 1 : *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!eq && v)
        (*i)++;
    if (!v) {
        snprintf(msg, sizeof msg, "%.*s needs a value (%s)", nl, w, o->arg);
        return fail(cmd, msg);
    }
    a->str = v;
    if (o->kind == MBS_OPT_STR)
        return 1;
    char range[256];
    mbs_cli_range(o, range, sizeof range);
    double x;
    if (o->kind == MBS_OPT_INT) {
        long k;
        if (mbs_parse_long(v, &k) != 0) {
            /* integers written as 1e7 are accepted when exact */
            if (mbs_parse_double(v, &x) != 0 || x != floor(x) || fabs(x) > 9e15) {
                snprintf(msg, sizeof msg, "%.*s '%s' is not an integer (range: %s)", nl, w, v, range);
                return fail(cmd, msg);
            }
            k = (long)x;
        }
        a->integer = k;
        x = (double)k;
    } else if (mbs_parse_double(v, &x) != 0) {
        snprintf(msg, sizeof msg, "%.*s '%s' is not a finite number (range: %s)", nl, w, v, range);
        return fail(cmd, msg);
    }
    if (x < o->lo || x > o->hi || (o->lo_open && x == o->lo) || (o->hi_open && x == o->hi)) {
        snprintf(msg, sizeof msg, "%.*s %s must lie in %s", nl, w, v, range);
        return fail(cmd, msg);
    }
    a->num = x;
    return 1;
}

/* Write text from column `indent` on, wrapped at 79 columns; the first line
 * continues at column `col` (col < indent: padded to indent).  A '\x1f' is a
 * space that does not break. */
static void wrap(FILE *out, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " ");
        if (col > indent && col + 1 + (int)n > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        } else if (col < indent) {
            fprintf(out, "%*s", indent - col, "");
            col = indent;
        }
        for (size_t k = 0; k < n; k++)
            fputc(p[k] == '\x1f' ? ' ' : p[k], out);
        col += (int)n;
        p += n;
    }
    fputc('\n', out);
}

static void print_opt(const mbs_opt *o, FILE *out)
{
    char head[160], range[256], text[1024];
    /* "  -p, --problem ARG" or "      --tol ARG" (long options line up) */
    snprintf(head, sizeof head, "  %s%s%s%s%s", o->alias ? o->alias : "    ",
             o->alias ? ", " : "", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    mbs_cli_range(o, range, sizeof range);
    if (!o->range) /* keep a numeric range on one line */
        for (char *c = range; *c; c++)
            if (*c == ' ')
                *c = '\x1f';
    enum { DOC_COL = 26 };
    int len = (int)strlen(head);
    fputs(head, out);
    if (len + 2 > DOC_COL) {
        fputc('\n', out);
        len = 0;
    }
    wrap(out, o->doc, len, DOC_COL);
    snprintf(text, sizeof text, "default: %s; range: %s", o->def, range);
    wrap(out, text, 0, DOC_COL);
}

static void print_synopsis(const mbs_cli_cmd *c, FILE *out, const char *first)
{
    int w = (int)strlen(first);
    for (const char *l = c->synopsis; *l;) {
        size_t n = strcspn(l, "\n");
        if (strncmp(l, "    ", 4) == 0) /* continuation */
            fprintf(out, "%*s%.*s\n", w + 9, "", (int)n - 4, l + 4);
        else
            fprintf(out, "%*s%smbsbench %.*s\n", l == c->synopsis ? 0 : w,
                    l == c->synopsis ? first : "", "", (int)n, l);
        l += n + (l[n] == '\n');
    }
}

void mbs_cli_help(const mbs_cli_cmd *cmd, FILE *out)
{
    if (!cmd) {
        fprintf(out, "Usage: mbsbench --version | --help | COMMAND --help\n"
                     "       mbsbench [--plugin PATH.so]... COMMAND [OPTION]...\n\n");
        fprintf(out, "Commands:\n");
        for (size_t i = 0; i < N(commands); i++)
            fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
        fprintf(out, "\nSynopses:\n");
        for (size_t i = 0; i < N(commands); i++)
            print_synopsis(&commands[i], out, "  ");
        fprintf(out, "\nOptions of every command:\n");
        for (size_t i = 0; i < N(common); i++)
            print_opt(&common[i], out);
        fprintf(out, "      --version, -V       print the version and git revision and exit\n"
                     "\n%s\n%s'mbsbench COMMAND --help' lists the options of a command with "
                     "meaning, default and\nrange; docs/usage.md and 'man mbsbench' explain "
                     "each command.\n",
                PARAMS_NOTE, exit_note);
        return;
    }
    print_synopsis(cmd, out, "Usage: ");
    fprintf(out, "%c%s.\n", cmd->summary[0] - ('a' <= cmd->summary[0] &&
                                               cmd->summary[0] <= 'z' ? 'a' - 'A' : 0),
            cmd->summary + 1);
    if (cmd->operands)
        fprintf(out, "\n%s\n", cmd->operands);
    fprintf(out, "\nOptions:\n");
    int hooks = 0;
    for (size_t k = 0; k < cmd->n_opts; k++) {
        if (cmd->opts[k].hook)
            hooks++;
        else
            print_opt(&cmd->opts[k], out);
    }
    for (size_t k = 0; k < N(common); k++)
        print_opt(&common[k], out);
    if (hooks) {
        fprintf(out, "\nTest hooks (for the test suite; not for measurements):\n");
        for (size_t k = 0; k < cmd->n_opts; k++)
            if (cmd->opts[k].hook)
                print_opt(&cmd->opts[k], out);
    }
    /* a command with its own exit statuses says so in its notes */
    int own_exit = cmd->notes && strstr(cmd->notes, "Exit status");
    if (cmd->notes)
        fprintf(out, "\n%s", cmd->notes);
    fprintf(out, "\n%sdocs/usage.md and 'man mbsbench' explain every command.\n",
            own_exit ? "" : exit_note);
}
