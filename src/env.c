/* VKC_* environment variables: the one place their values are parsed.
 *
 * A value that is not recognised is never guessed at: it gets a warning
 * through the context's logger (VKC_LOG_WARN, VKC_LOG_ID_GENERAL) naming
 * the variable, the value, what would have been accepted and the default
 * used instead. (VKC_VALIDATION=banana used to mean on.)
 *
 * Owns nothing. Calls getenv and error.c's logger. Read at context
 * creation only: the process's environment is not re-read later. */
#include "vkc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

const char *vkc__env_string(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void vkc__env_ignored(vkc_context *ctx, const char *name, const char *value, const char *expected,
                      const char *fallback)
{
    vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
             "%s=\"%s\" is not recognised (expected %s); using %s", name, value, expected,
             fallback);
}

bool vkc__env_flag(vkc_context *ctx, const char *name, const char *fallback, bool *out)
{
    static const char *const on[] = {"1", "on", "true", "yes"};
    static const char *const off[] = {"0", "off", "false", "no"};
    const char *v = vkc__env_string(name);
    if (!v)
        return false;
    for (size_t i = 0; i < VKC_ARRAY_COUNT(on); ++i) {
        if (strcasecmp(v, on[i]) == 0 || strcasecmp(v, off[i]) == 0) {
            *out = strcasecmp(v, on[i]) == 0;
            return true;
        }
    }
    vkc__env_ignored(ctx, name, v, "1/0, on/off, true/false or yes/no", fallback);
    return false;
}

bool vkc__env_uint(vkc_context *ctx, const char *name, uint32_t min, uint32_t max,
                   const char *fallback, uint32_t *out)
{
    const char *v = vkc__env_string(name);
    if (!v)
        return false;
    /* Digits only: strtoul alone would take "-1", " 8" and "8x". */
    bool digits = true;
    for (const char *c = v; *c; ++c)
        digits = digits && *c >= '0' && *c <= '9';
    unsigned long long n = digits && strlen(v) <= 10 ? strtoull(v, NULL, 10) : 0;
    if (!digits || strlen(v) > 10 || n < min || n > max) {
        char expected[64];
        snprintf(expected, sizeof(expected), "an integer from %u to %u", min, max);
        vkc__env_ignored(ctx, name, v, expected, fallback);
        return false;
    }
    *out = (uint32_t)n;
    return true;
}
