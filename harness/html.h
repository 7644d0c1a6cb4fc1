/* Rendering a report's index.md as index.html (harness/html.c). */
#ifndef MBS_HTML_H
#define MBS_HTML_H

/* Convert md_path to html_path (written atomically).  0, or -1 on I/O error. */
int mbs_md_to_html(const char *md_path, const char *html_path, const char *title);

#endif
