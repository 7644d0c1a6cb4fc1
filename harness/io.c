#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t k = write(fd, data, len);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += k;
        len -= (size_t)k;
    }
    return 0;
}

int mbs_write_atomic(const char *path, const char *data, size_t len)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    int ok = write_all(fd, data, len) == 0 && fsync(fd) == 0;
    ok = (close(fd) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int mbs_open_append(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
}

int mbs_append_line(int fd, const char *line)
{
    size_t len = strlen(line);
    char *buf = malloc(len + 2);
    if (!buf)
        return -1;
    memcpy(buf, line, len);
    buf[len] = '\n';
    /* One write of the complete line: O_APPEND makes it atomic with respect to
     * other writers of the same file, so lines never interleave. */
    ssize_t k;
    do
        k = write(fd, buf, len + 1);
    while (k < 0 && errno == EINTR);
    free(buf);
    if (k != (ssize_t)(len + 1))
        return -1;
    return fsync(fd) == 0 ? 0 : -1;
}

int mbs_mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

char *mbs_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0)
            break;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void mbs_data_path(const char *rel, char *buf, size_t len)
{
    const char *env = getenv("MBSBENCH_DATADIR");
    if (env && *env) {
        snprintf(buf, len, "%s/%s", env, rel);
        if (access(buf, F_OK) == 0)
            return;
    }
    if (access(rel, F_OK) == 0) {
        snprintf(buf, len, "%s", rel);
        return;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, len, "%s/../share/mbsbench/%s", exe, rel);
            if (access(buf, F_OK) == 0)
                return;
        }
    }
    snprintf(buf, len, "%s", rel);
}

void mbs_print_prefixed(FILE *f, const char *text)
{
    while (text && *text) {
        size_t n = strcspn(text, "\n");
        fprintf(f, "mbsbench: %.*s\n", (int)n, text);
        text += n + (text[n] == '\n');
    }
}

void mbs_dir_stamp(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

void mbs_path_copy_trimmed(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
}

void mbs_default_report_dir(const char *dir, char *buf, size_t len)
{
    char d[4096];
    mbs_path_copy_trimmed(dir, d, sizeof d);
    const char *base = strrchr(d, '/');
    snprintf(buf, len, "reports/%s", base ? base + 1 : d);
}
