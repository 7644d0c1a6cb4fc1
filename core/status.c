#include "status.h"

const char *mbs_status_code(int status)
{
    switch (status) {
#define MBS_STATUS(name, value, code, message) case value: return code;
#include "status.def"
#undef MBS_STATUS
    default: return "unknown";
    }
}

const char *mbs_status_message(int status)
{
    switch (status) {
#define MBS_STATUS(name, value, code, message) case value: return message;
#include "status.def"
#undef MBS_STATUS
    default: return "unknown status";
    }
}
