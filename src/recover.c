/* Device-loss recovery: a new VkDevice under the same context and objects.
 *
 * The order is that of destruction, then that of creation: sequences give
 * their recording units back, kernels and buffers drop their Vulkan objects,
 * the pool and module state go, the old device is destroyed; then a new
 * device on the same physical device, new module state, and every kernel
 * and buffer gets new Vulkan objects behind its unchanged handle. Both
 * halves walk the context's module table (vkc__modules_lose/rebuild).
 *
 * Owns: nothing. Calls: the context's module table, device.c (a new
 * VkDevice). It sits at the top and may call anything. */
#include "vkc_internal.h"

#include <stdio.h>

vkc_result vkc_context_recover(vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_context handle");
    if (!ctx->own_device)
        return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                        "vkc_context_recover: the device belongs to the host (wrapped context); "
                        "the host must recreate its device and wrap it in a new context");
    if (!atomic_load(&ctx->lost))
        return VKC_SUCCESS;

    uint32_t nbuf = 0, nseq = 0, nker = 0, nimg = 0;
    pthread_mutex_lock(&ctx->objects_lock);
    /* The caller's live objects; destroyed ones still referenced by a
     * sequence are rebuilt too (they go when that sequence lets go). */
    for (vkc__node *n = ctx->buffers.next; n != &ctx->buffers; n = n->next)
        nbuf += VKC_OBJ_OF(n)->magic == VKC_MAGIC_BUFFER;
    for (vkc__node *n = ctx->seqs.next; n != &ctx->seqs; n = n->next)
        nseq++;
    for (vkc__node *n = ctx->kernels.next; n != &ctx->kernels; n = n->next)
        nker += VKC_OBJ_OF(n)->magic == VKC_MAGIC_KERNEL;
    for (vkc__node *n = ctx->images.next; n != &ctx->images; n = n->next)
        nimg++;

    /* Tear down on the old device. Destroying objects of a lost device is
     * valid; waiting for it returns at once (or reports the loss). */
    if (ctx->device) {
        vkc_queue_lock(ctx);
        (void)ctx->vk.vkDeviceWaitIdle(ctx->device);
        vkc_queue_unlock(ctx);
    }
    vkc_result r = vkc__modules_lose(ctx);
    if (r < 0) {
        pthread_mutex_unlock(&ctx->objects_lock);
        return r;
    }
    if (ctx->device)
        ctx->vk.vkDestroyDevice(ctx->device, ctx->alloc);
    ctx->device = VK_NULL_HANDLE;
    ctx->queue = VK_NULL_HANDLE;

    /* The timeline starts again where it stopped, so tickets stay ordered;
     * tickets of work lost with the device read as complete. */
    uint64_t resume = ctx->next_value;
    atomic_store(&ctx->submitted_value, resume);
    atomic_store(&ctx->completed_value, resume);

    /* A new device, as creation made it. */
    r = vkc__open_device(ctx, ctx->features.timeline_semaphores, ctx->features.push_descriptors);
    if (r < 0) {
        ctx->device = VK_NULL_HANDLE;
        pthread_mutex_unlock(&ctx->objects_lock);
        return VKC_FAIL(ctx, r, "vkc_context_recover: a new device could not be created: %s",
                        vkc_last_create_error());
    }
    atomic_store(&ctx->lost, false);
    r = vkc__modules_rebuild(ctx);
    pthread_mutex_unlock(&ctx->objects_lock);
    if (r < 0) {
        /* Half rebuilt: the context stays lost (destroy still frees all). */
        atomic_store(&ctx->lost, true);
        return r;
    }
    vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
             "device recovered: %u kernel(s) rebuilt, %u buffer(s) and %u image(s) re-created "
             "with their contents lost, %u sequence(s) to be recorded again",
             nker, nbuf, nimg, nseq);
    if (nbuf || nseq || nimg) {
        /* Kept as the context's message, not as an error. */
        pthread_mutex_lock(&ctx->error_lock);
        snprintf(ctx->last_error, sizeof(ctx->last_error),
                 "VKC_CONTENTS_LOST: device recovered; %u buffer(s) and %u image(s) re-created "
                 "with their contents lost, %u sequence(s) must be recorded again",
                 nbuf, nimg, nseq);
        ctx->last_vk = VK_ERROR_DEVICE_LOST;
        pthread_mutex_unlock(&ctx->error_lock);
        return VKC_CONTENTS_LOST;
    }
    return VKC_SUCCESS;
}
