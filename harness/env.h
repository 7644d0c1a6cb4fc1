/* The environment record written once per sweep (meta.json). */
#ifndef MBS_ENV_H
#define MBS_ENV_H

/* JSON text (malloc'ed): mbsbench revision, compiler and flags, CPU model,
 * library versions, date, suite name and path. */
char *mbs_environment_json(const char *suite_name, const char *suite_path);

#endif
