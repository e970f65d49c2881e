/* Profile module: timestamps and latency statistics. (Being written.) */
#include "vkc_internal.h"
