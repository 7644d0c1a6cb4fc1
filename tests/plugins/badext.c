/* Test plugin: the right API version but a shorter mbs_extension, as when a
 * problem built against older headers hands the host an extension without its
 * last callback (a bad plugin). */
#define SHORT_PROBLEM_DEF 0
#define SHORT_EXTENSION sizeof(void *)
#include "badlayout.c"
