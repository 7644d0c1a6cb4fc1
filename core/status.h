/* Status codes shared by problems, methods and the harness (see status.def). */
#ifndef MBS_STATUS_H
#define MBS_STATUS_H

typedef enum {
#define MBS_STATUS(name, value, code, message) MBS_##name = value,
#include "status.def"
#undef MBS_STATUS
} mbs_status;

/* Short machine-readable code ("newton_diverged"); "unknown" for other values. */
const char *mbs_status_code(int status);
/* One-line human-readable message. */
const char *mbs_status_message(int status);

#endif
