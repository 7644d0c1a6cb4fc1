/* The environment record written once per sweep (meta.json). */
#ifndef MBS_ENV_H
#define MBS_ENV_H

/* JSON text (malloc'ed): mbsbench revision, compiler and flags, CPU model,
 * library versions, date, suite name and path. */
char *mbs_environment_json(const char *suite_name, const char *suite_path);

/* CPU seconds of a fixed floating-point loop (best of 3, about 20 ms each):
 * the unit in which `compare` normalises CPU times of two sweeps. */
double mbs_calibration_seconds(void);
/* The machine's 1-minute load average (Linux /proc/loadavg), NaN where unknown: a sweep
 * records it at its start, and compare's CPU tier is hard only on a quiet machine. */
double mbs_load_average(void);

#define MBS_VERSION "0.3.0"
/* "0.3.0 (git <revision>)": the version and the revision it was built from;
 * printed by `mbsbench --version` and stored in every record ("mbsbench"). */
const char *mbs_version_string(void);

/* The git revision this build was made from ("unknown" outside a checkout). */
const char *mbs_git_revision(void);

#endif
