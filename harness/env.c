#include "env.h"
#include "run.h"

#include <math.h>

#include <gsl/gsl_version.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef MBS_GIT_REV
#define MBS_GIT_REV "unknown"
#endif
#ifndef MBS_CFLAGS
#define MBS_CFLAGS "unknown"
#endif

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon += 2;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(buf, len, "%s", colon);
            }
            break;
        }
    }
    fclose(f);
}

char *mbs_environment_json(const char *suite_name, const char *suite_path)
{
    char cpu[256], date[64], host[256] = "unknown";
    cpu_model(cpu, sizeof cpu);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    gethostname(host, sizeof host - 1);
    struct utsname u;
    char kernel[512] = "unknown";
    if (uname(&u) == 0)
        snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    json_t *o = json_pack(
        "{s:s,s:s?,s:s?,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:{s:s,s:s}}", "record", "environment",
        "suite", suite_name, "suite_path", suite_path, "revision", MBS_GIT_REV, "compiler",
#ifdef __VERSION__
        "gcc-compatible " __VERSION__,
#else
        "unknown",
#endif
        "cflags", MBS_CFLAGS, "cpu", cpu, "kernel", kernel, "host", host, "cores",
        (int)sysconf(_SC_NPROCESSORS_ONLN), "date", date, "libraries", "gsl", GSL_VERSION,
        "jansson", JANSSON_VERSION);
    char *s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    return s;
}

double mbs_calibration_seconds(void)
{
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        volatile double sink;
        double x = 0.5, c0 = mbs_cpu_seconds();
        for (long i = 0; i < 20000000L; i++)
            x = x * 0.999999 + 1e-7 * (double)(i & 7);
        sink = x;
        (void)sink;
        double dt = mbs_cpu_seconds() - c0;
        if (dt < best)
            best = dt;
    }
    return best;
}

double mbs_load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double la = NAN;
    if (f) {
        if (fscanf(f, "%lf", &la) != 1)
            la = NAN;
        fclose(f);
    }
    return la;
}

const char *mbs_version_string(void)
{
    return MBS_VERSION " (git " MBS_GIT_REV ")";
}

const char *mbs_git_revision(void)
{
    return MBS_GIT_REV;
}
