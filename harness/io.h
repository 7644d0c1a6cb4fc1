/* Crash-safe file output: whole files by temp file + fsync + rename, records
 * by appending one complete line with a single write(2) + fsync. */
#ifndef MBS_IO_H
#define MBS_IO_H

#include <stddef.h>
#include <stdio.h>

int mbs_write_atomic(const char *path, const char *data, size_t len);
/* Open for appending (O_APPEND | O_CREAT); returns fd or -1. */
int mbs_open_append(const char *path);
/* Append `line` plus a newline in one write; returns 0 or -1. */
int mbs_append_line(int fd, const char *line);
/* mkdir -p; returns 0 or -1. */
int mbs_mkdir_p(const char *path);
/* Read a whole file (NUL-terminated, malloc'ed) or NULL (errno says why). */
char *mbs_read_file(const char *path, size_t *len);
/* Print text line by line to f, each line as "mbsbench: LINE". */
void mbs_print_prefixed(FILE *f, const char *text);
/* Where a data file of the suite lives (stored references, reproductions,
 * suites): rel, e.g. "problems/ref/andrews.ref", is looked up in
 * $MBSBENCH_DATADIR, then in the current directory (a source tree), then in
 * <directory of the executable>/../share/mbsbench (`make install`).  buf gets
 * the first candidate that exists, or rel itself when none does. */
void mbs_data_path(const char *rel, char *buf, size_t len);
/* "YYYYmmdd-HHMMSS" of the local time now: the stamp of default results directories. */
void mbs_dir_stamp(char *buf, size_t len);
/* path copied into buf without its trailing slashes ("/" stays "/") */
void mbs_path_copy_trimmed(const char *path, char *buf, size_t len);
/* reports/<last component of dir, trailing slashes dropped>: where the commands that
 * write pages of a results directory (report, reproduce iftomm) write by default. */
void mbs_default_report_dir(const char *dir, char *buf, size_t len);

#endif
