/* The API version of this build of the library (core/version.h). */
#include "version.h"

int mbs_api_version(void)
{
    return MBS_API_VERSION;
}
