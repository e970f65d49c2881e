/* Results and errors: vkc_result strings, the context's last error, logging,
 * and the thread's last creation error.
 *
 * Owns: vkc__fail and the VKC_FAIL family behind it, vkc__log,
 * vkc__create_error. Calls: nothing of vkc but the context's fields. */
#include "vkc_internal.h"

#include <stdio.h>
#include <time.h>

/* ---- results and errors -------------------------------------------------- */

const char *vkc_result_string(vkc_result result)
{
    switch (result) {
#define VKC_X_CASE(name, value, text)                                                              \
    case name:                                                                                     \
        return #name ": " text;
        VKC_RESULT_LIST(VKC_X_CASE)
#undef VKC_X_CASE
    }
    return "unknown vkc_result";
}

const char *vkc_queue_reason_string(vkc_queue_reason reason)
{
    switch (reason) {
    case VKC_QUEUE_REASON_COMPUTE_ONLY:
        return "dedicated compute family (compute without graphics)";
    case VKC_QUEUE_REASON_NO_COMPUTE_ONLY:
        return "no compute-only family; compute family with the most queues";
    case VKC_QUEUE_REASON_OVERRIDE:
        return "chosen by the caller (override)";
    case VKC_QUEUE_REASON_NONE:
        break;
    }
    return "none";
}

/* Failures before a context exists (creation) are kept per thread. */
_Thread_local char vkc__create_error[1024];

const char *vkc_last_create_error(void)
{
    return vkc__create_error;
}

vkc_result vkc__result_from_vk(VkResult vr)
{
    switch (vr) {
    case VK_SUCCESS:
        return VKC_SUCCESS;
    case VK_NOT_READY:
        return VKC_NOT_READY;
    case VK_TIMEOUT:
        return VKC_TIMEOUT;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return VKC_ERROR_OUT_OF_HOST_MEMORY;
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
        return VKC_ERROR_OUT_OF_DEVICE_MEMORY;
    case VK_ERROR_DEVICE_LOST:
        return VKC_ERROR_DEVICE_LOST;
    case VK_ERROR_INITIALIZATION_FAILED:
        return VKC_ERROR_INITIALIZATION_FAILED;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return VKC_ERROR_NO_DEVICE;
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_LAYER_NOT_PRESENT:
        return VKC_ERROR_UNSUPPORTED;
    case VK_ERROR_INVALID_SHADER_NV:
        return VKC_ERROR_INVALID_SPIRV;
    default:
        return VKC_ERROR_VULKAN;
    }
}

static const char *vkc__vk_result_name(VkResult vr)
{
    switch (vr) {
#define C(x)                                                                                       \
    case x:                                                                                        \
        return #x;
        C(VK_SUCCESS)
        C(VK_NOT_READY)
        C(VK_TIMEOUT)
        C(VK_INCOMPLETE)
        C(VK_ERROR_OUT_OF_HOST_MEMORY)
        C(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        C(VK_ERROR_INITIALIZATION_FAILED)
        C(VK_ERROR_DEVICE_LOST)
        C(VK_ERROR_MEMORY_MAP_FAILED)
        C(VK_ERROR_LAYER_NOT_PRESENT)
        C(VK_ERROR_EXTENSION_NOT_PRESENT)
        C(VK_ERROR_FEATURE_NOT_PRESENT)
        C(VK_ERROR_INCOMPATIBLE_DRIVER)
        C(VK_ERROR_TOO_MANY_OBJECTS)
        C(VK_ERROR_FORMAT_NOT_SUPPORTED)
        C(VK_ERROR_FRAGMENTED_POOL)
        C(VK_ERROR_OUT_OF_POOL_MEMORY)
        C(VK_ERROR_FRAGMENTATION)
        C(VK_ERROR_INVALID_SHADER_NV)
#undef C
    default:
        return "VkResult";
    }
}

void vkc__log(vkc_context *ctx, vkc_log_level level, vkc_log_id id, const char *fmt, ...)
{
    if (!ctx || !ctx->logger.func)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ctx->logger.func(ctx->logger.user_data, level, id, msg);
}

static vkc_result vkc__vfail(vkc_context *ctx, vkc_result r, VkResult vr, const char *file,
                             int line, const char *fmt, va_list ap)
{
    char msg[1536];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (vr == VK_ERROR_DEVICE_LOST || r == VKC_ERROR_DEVICE_LOST) {
        if (ctx)
            atomic_store(&ctx->lost, true);
    }
    if (!ctx) {
        snprintf(vkc__create_error, sizeof(vkc__create_error), "%s (%s:%d)", msg, base, line);
        return r;
    }
    pthread_mutex_lock(&ctx->error_lock);
    if (vr != VK_SUCCESS)
        snprintf(ctx->last_error, sizeof(ctx->last_error), "%s: %s [%s] (%s:%d)",
                 vkc_result_string(r), msg, vkc__vk_result_name(vr), base, line);
    else
        snprintf(ctx->last_error, sizeof(ctx->last_error), "%s: %s (%s:%d)", vkc_result_string(r),
                 msg, base, line);
    ctx->last_vk = vr;
    pthread_mutex_unlock(&ctx->error_lock);
    if (ctx->logger.func)
        ctx->logger.func(ctx->logger.user_data, VKC_LOG_ERROR, VKC_LOG_ID_ERROR, msg);
    return r;
}

vkc_result vkc__fail(vkc_context *ctx, vkc_result r, VkResult vr, const char *file, int line,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkc_result out = vkc__vfail(ctx, r, vr, file, line, fmt, ap);
    va_end(ap);
    return out;
}

static vkc_result vkc__fail_v(vkc_context *ctx, vkc_result r, VkResult vr, const char *file,
                              int line, const char *fmt, ...) VKC_PRINTF(6, 7);
static vkc_result vkc__fail_v(vkc_context *ctx, vkc_result r, VkResult vr, const char *file,
                              int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkc_result out = vkc__vfail(ctx, r, vr, file, line, fmt, ap);
    va_end(ap);
    return out;
}

vkc_result vkc__vk_fail(vkc_context *ctx, VkResult vr, const char *what, const char *file, int line)
{
    return vkc__fail_v(ctx, vkc__result_from_vk(vr), vr, file, line, "%s failed", what);
}

void vkc__last_error_copy(vkc_context *ctx, char *out, size_t size)
{
    pthread_mutex_lock(&ctx->error_lock);
    snprintf(out, size, "%s", ctx->last_error);
    pthread_mutex_unlock(&ctx->error_lock);
}

/* The caller's copy: another thread's failure may rewrite the context's
 * message at any time, so handing out the context's own buffer would let a
 * reader see it half written. */
static _Thread_local char vkc__last_error_mine[sizeof(((vkc_context *)0)->last_error)];

const char *vkc_context_last_error(const vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return vkc__create_error;
    /* Cast for the lock only; nothing else changes. */
    vkc__last_error_copy((vkc_context *)ctx, vkc__last_error_mine, sizeof(vkc__last_error_mine));
    return vkc__last_error_mine;
}

VkResult vkc_context_last_vk_result(const vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return VK_SUCCESS;
    vkc_context *c = (vkc_context *)ctx;
    pthread_mutex_lock(&c->error_lock);
    VkResult vr = c->last_vk;
    pthread_mutex_unlock(&c->error_lock);
    return vr;
}

/* ---- clocks and thread ids (profiling) ---------------------------------------------------- */

uint64_t vkc__clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Process-wide so that two contexts name one thread alike in their traces. */
static atomic_uint vkc__next_thread_id = 1;
static _Thread_local uint32_t vkc__my_thread_id;

uint32_t vkc__thread_id(void)
{
    if (!vkc__my_thread_id)
        vkc__my_thread_id = atomic_fetch_add(&vkc__next_thread_id, 1);
    return vkc__my_thread_id;
}
