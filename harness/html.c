/* index.md -> index.html for `mbsbench report`: the subset of Markdown that
 * report.c writes (headings, paragraphs, pipe tables, images, fenced code,
 * lists, `code`), rendered into one self-contained page next to its figures. */
#include "html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

static void esc(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(s[i], f);
        }
    }
}

/* inline text: `code` spans and ![alt](src) images */
static void inline_text(FILE *f, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] == '`') {
            const char *e = memchr(s + i + 1, '`', n - i - 1);
            if (e) {
                fputs("<code>", f);
                esc(f, s + i + 1, (size_t)(e - s - i - 1));
                fputs("</code>", f);
                i = (size_t)(e - s) + 1;
                continue;
            }
        }
        if (s[i] == '!' && i + 1 < n && s[i + 1] == '[') {
            const char *alt_end = memchr(s + i, ']', n - i);
            if (alt_end && alt_end + 1 < s + n && alt_end[1] == '(') {
                const char *src_end = memchr(alt_end, ')', (size_t)(s + n - alt_end));
                if (src_end) {
                    const char *src = alt_end + 2;
                    size_t ls = (size_t)(src_end - src);
                    fputs("<a href=\"", f);
                    esc(f, src, ls);
                    fputs("\"><img src=\"", f);
                    esc(f, src, ls);
                    fputs("\" alt=\"", f);
                    esc(f, s + i + 2, (size_t)(alt_end - s - i - 2));
                    fputs("\"></a>", f);
                    i = (size_t)(src_end - s) + 1;
                    continue;
                }
            }
        }
        esc(f, s + i, 1);
        i++;
    }
}

static int is_separator_row(const char *l)
{
    if (*l != '|')
        return 0;
    for (; *l; l++)
        if (!strchr("|-: ", *l))
            return 0;
    return 1;
}

static void table_row(FILE *f, const char *l, const char *cell)
{
    fputs("<tr>", f);
    const char *p = l + 1;
    while (*p) {
        const char *e = strchr(p, '|');
        if (!e)
            break;
        while (*p == ' ')
            p++;
        const char *q = e;
        while (q > p && q[-1] == ' ')
            q--;
        fprintf(f, "<%s>", cell);
        inline_text(f, p, (size_t)(q - p));
        fprintf(f, "</%s>", cell);
        p = e + 1;
    }
    fputs("</tr>\n", f);
}

typedef struct blocks {
    int para, table, list, code;
} blocks;

/* Close the open paragraph, table and list (and the code block if `code`). */
static void close_blocks(FILE *f, blocks *b, int code)
{
    if (b->para)
        fputs("</p>\n", f);
    if (b->table)
        fputs("</table></div>\n", f);
    if (b->list)
        fputs("</ul>\n", f);
    if (code && b->code)
        fputs("</pre>\n", f);
    b->para = b->table = b->list = 0;
    if (code)
        b->code = 0;
}

int mbs_md_to_html(const char *md_path, const char *html_path, const char *title)
{
    char *text = mbs_read_file(md_path, NULL);
    if (!text)
        return -1;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", html_path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(text);
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
    esc(f, title, strlen(title));
    fputs("</title>\n<style>\nbody{font-family:sans-serif;max-width:1200px;margin:2em auto;"
          "padding:0 1em;color:#222}\ntable{border-collapse:collapse;margin:1em 0;font-size:90%}\n"
          "th,td{border:1px solid #bbb;padding:2px 6px;text-align:left}\nth{background:#eee}\n"
          "tr:nth-child(even) td{background:#f7f7f7}\nimg{max-width:100%}\n"
          "pre{background:#f4f4f4;padding:0.5em;overflow-x:auto}\n.tablewrap{overflow-x:auto}\n"
          "</style></head>\n<body>\n",
          f);
    blocks b = {0};
    for (char *l = text, *next; l && *l; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = '\0';
        if (!b.code && *l == '\0') { /* blank line: ends a paragraph, list or table */
            close_blocks(f, &b, 0);
            continue;
        }
        if (strncmp(l, "```", 3) == 0) {
            if (b.para)
                fputs("</p>\n", f);
            b.para = 0;
            fputs(b.code ? "</pre>\n" : "<pre>", f);
            b.code = !b.code;
            continue;
        }
        if (b.code) {
            esc(f, l, strlen(l));
            fputc('\n', f);
            continue;
        }
        int row = l[0] == '|';
        if (b.table && !row) {
            fputs("</table></div>\n", f);
            b.table = 0;
        }
        int item = strncmp(l, "- ", 2) == 0;
        if (b.list && !item) {
            fputs("</ul>\n", f);
            b.list = 0;
        }
        if (row) {
            if (b.para)
                fputs("</p>\n", f);
            b.para = 0;
            if (is_separator_row(l))
                continue;
            if (!b.table) {
                fputs("<div class=\"tablewrap\"><table>\n", f);
                b.table = 1;
                table_row(f, l, "th");
            } else {
                table_row(f, l, "td");
            }
        } else if (l[0] == '#') {
            if (b.para)
                fputs("</p>\n", f);
            b.para = 0;
            int level = 0;
            while (l[level] == '#')
                level++;
            const char *h = l + level;
            while (*h == ' ')
                h++;
            fprintf(f, "<h%d id=\"", level);
            esc(f, h, strlen(h));
            fprintf(f, "\">");
            inline_text(f, h, strlen(h));
            fprintf(f, "</h%d>\n", level);
        } else if (item) {
            if (b.para)
                fputs("</p>\n", f);
            b.para = 0;
            if (!b.list)
                fputs("<ul>\n", f);
            b.list = 1;
            fputs("<li>", f);
            inline_text(f, l + 2, strlen(l + 2));
            fputs("</li>\n", f);
        } else {
            if (!b.para)
                fputs("<p>", f);
            else
                fputc('\n', f);
            b.para = 1;
            inline_text(f, l, strlen(l));
        }
    }
    close_blocks(f, &b, 1);
    fputs("</body></html>\n", f);
    free(text);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, html_path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}
