/* The context: creation (vkc_context_create) and destruction, the table of
 * module hooks that both walk (and that device-loss recovery walks), the
 * queries (device, features, stats, Vulkan handles), the queue lock and
 * debug names.
 *
 * Owns: struct vkc_context, its lists of live objects, the module table.
 * Calls: device.c, error.c, the loader; the modules above it only through
 * the hooks of the table. */
#include "vkc_internal.h"

#include <stdio.h>

static atomic_uint_fast64_t vkc__next_context_id = 1;

vkc_context *vkc__context_alloc(const vkc_logger *logger, const VkAllocationCallbacks *a)
{
    vkc_context *ctx = vkc__calloc(1, sizeof(*ctx));
    if (!ctx)
        return NULL;
    ctx->magic = VKC_MAGIC_CONTEXT;
    ctx->id = atomic_fetch_add(&vkc__next_context_id, 1);
    if (logger)
        ctx->logger = *logger;
    ctx->alloc = a;
    pthread_mutex_init(&ctx->error_lock, NULL);
    pthread_mutex_init(&ctx->queue_lock, NULL);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ctx->objects_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    vkc__list_init(&ctx->buffers);
    vkc__list_init(&ctx->kernels);
    vkc__list_init(&ctx->seqs);
    vkc__list_init(&ctx->images);
    vkc__list_init(&ctx->fuses);
    ctx->wait_timeout_ns = VKC_DEFAULT_WAIT_TIMEOUT_NS;
    atomic_init(&ctx->lost, false);
    return ctx;
}

/* ---- the module table ------------------------------------------------------------------ */

static vkc_result vkc__kernel_lose_hook(vkc_context *ctx)
{
    vkc__kernel_lose(ctx);
    return VKC_SUCCESS;
}

/* One row per module that has state on the device or objects of the
 * caller's, bottom up. Creation walks it forwards; destruction and the
 * teardown half of recovery walk it backwards, so what a row's objects may
 * name (the rows before it) is still alive when they go. */
typedef struct vkc__module {
    const char *name;
    /* Module state on a new device (create, wrap). */
    vkc_result (*init)(vkc_context *ctx);
    /* vkc_context_destroy: destroy the caller's objects still alive; all
     * rows drop before any row finishes. */
    void (*drop)(vkc_context *ctx);
    /* vkc_context_destroy: free the module state (NULL state: nothing). */
    void (*finish)(vkc_context *ctx);
    /* vkc_context_recover, on the old device: drop the Vulkan objects behind
     * the caller's handles; then, on the new device, make them again. */
    vkc_result (*lose)(vkc_context *ctx);
    vkc_result (*rebuild)(vkc_context *ctx);
    /* Recovery also finishes its state (after every row lost) and inits it
     * again (before its own rebuild). Rows without it keep their state, or
     * take it down and up in their own lose and rebuild (memory). */
    bool renew;
} vkc__module;

static const vkc__module vkc__modules[] = {
    /* Its drop is the last: the units let go of their resource sets once
     * every sequence has let go of its own. */
    {"pool", vkc__pool_init, vkc__pool_drop, vkc__pool_finish, NULL, NULL, true},
    {"memory", vkc__memory_init, vkc__memory_drop, vkc__memory_finish, vkc__memory_lose,
     vkc__memory_rebuild, false},
    {"kernel", vkc__kernel_init, vkc__kernel_drop, vkc__kernel_finish, vkc__kernel_lose_hook,
     vkc__kernel_rebuild, true},
    /* After memory (images hold dedicated memory of their own, and the
     * blocking image transfers use memory's staging buffers) and after
     * kernels: re-creating an image in recovery submits its layout
     * transition, which records the completion marker's kernel. */
    {"image", vkc__image_init, vkc__image_drop, vkc__image_finish, vkc__image_lose,
     vkc__image_rebuild, false},
    /* Fusion sits above dispatch, but its objects are kernels that sequences
     * may name: they go after the sequences and before the other kernels.
     * Its state is made on first use and holds nothing of the device. */
    {"fuse", NULL, vkc__fuse_finish, NULL, NULL, NULL, false},
    {"dispatch", vkc__dispatch_init, vkc__dispatch_drop, vkc__dispatch_finish, vkc__dispatch_lose,
     vkc__dispatch_rebuild, false},
    /* Its buffer and kernel are listed objects, dropped, lost and rebuilt
     * with the others. */
    {"marker", vkc__marker_init, NULL, NULL, NULL, vkc__marker_rebuild, false},
    /* Needs the trusted marker (its buffers); before any GLSL kernel. */
    {"epilogue", vkc__epilogue_init, NULL, NULL, NULL, vkc__epilogue_rebuild, false},
    /* Needs the trusted marker; its buffer is a listed object. */
    {"arm", vkc__arm_init, NULL, vkc__arm_finish, vkc__arm_lose, NULL, false},
    /* Above dispatch: its fallback sequences and kernels go first. */
    {"resident", NULL, vkc__resident_drop, vkc__resident_finish, vkc__resident_lose, NULL, false},
    /* Top: its hooks are read by pool and dispatch; drop (before any other
     * row) reads what is still pending and writes VKC_PROFILE's trace. Its
     * events outlive device loss. */
    {"profile", vkc__profile_init, vkc__profile_drop, vkc__profile_finish, vkc__profile_lose,
     vkc__profile_rebuild, false},
};

#define VKC_MODULE_COUNT ((int)VKC_ARRAY_COUNT(vkc__modules))

vkc_result vkc__context_init_modules(vkc_context *ctx)
{
    vkc__timing_enable(ctx);
    for (int i = 0; i < VKC_MODULE_COUNT; ++i)
        if (vkc__modules[i].init)
            VKC_FORWARD(vkc__modules[i].init(ctx));
    return VKC_SUCCESS;
}

static void vkc__modules_destroy(vkc_context *ctx)
{
    for (int i = VKC_MODULE_COUNT - 1; i >= 0; --i)
        if (vkc__modules[i].drop)
            vkc__modules[i].drop(ctx);
    /* Every reference is gone now, unless a count went wrong: whatever is
     * left goes regardless (graphs before the kernels and buffers they
     * name), while the modules' state is still up. */
    vkc__obj_free_list(ctx, &ctx->seqs);
    vkc__obj_free_list(ctx, &ctx->fuses);
    vkc__obj_free_list(ctx, &ctx->kernels);
    vkc__obj_free_list(ctx, &ctx->buffers);
    vkc__rset_trim(ctx);
    for (int i = VKC_MODULE_COUNT - 1; i >= 0; --i)
        if (vkc__modules[i].finish)
            vkc__modules[i].finish(ctx);
}

vkc_result vkc__modules_lose(vkc_context *ctx)
{
    for (int i = VKC_MODULE_COUNT - 1; i >= 0; --i)
        if (vkc__modules[i].lose)
            VKC_FORWARD(vkc__modules[i].lose(ctx));
    for (int i = VKC_MODULE_COUNT - 1; i >= 0; --i)
        if (vkc__modules[i].renew && vkc__modules[i].finish)
            vkc__modules[i].finish(ctx);
    return VKC_SUCCESS;
}

vkc_result vkc__modules_rebuild(vkc_context *ctx)
{
    for (int i = 0; i < VKC_MODULE_COUNT; ++i) {
        const vkc__module *m = &vkc__modules[i];
        if (m->renew && m->init)
            VKC_FORWARD(m->init(ctx));
        if (m->rebuild)
            VKC_FORWARD(m->rebuild(ctx));
    }
    return VKC_SUCCESS;
}

/* ---- creation and destruction --------------------------------------------------------------- */

vkc_result vkc_context_create(const vkc_context_desc *desc, vkc_context **out)
{
    if (!out)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT, "vkc_context_create: out is NULL");
    *out = NULL;
    static const vkc_context_desc zero;
    if (!desc)
        desc = &zero;
    vkc__create_error[0] = '\0';
    vkc_context *ctx = vkc__context_alloc(&desc->logger, desc->allocator);
    if (!ctx)
        return VKC_FAIL(NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "context allocation");
    ctx->disk_cache = desc->disk_cache != VKC_OFF;
    if (desc->cache_dir)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s", desc->cache_dir);
    char loader[512];
    vkc_result r = vkc__loader_open(&ctx->loader, &ctx->vki, loader, sizeof(loader));
    const char *want_loader = vkc__env_string("VKC_LOADER");
    if (r >= 0 && want_loader && strcmp(loader, want_loader) != 0)
        vkc__env_ignored(ctx, "VKC_LOADER", want_loader,
                         "a Vulkan loader library that exports vkGetInstanceProcAddr", loader);
    if (r < 0) {
        r = VKC_FAIL(NULL, VKC_ERROR_NO_LOADER,
                     "no Vulkan loader: libvulkan.so.1 could not be opened (Debian: apt-get "
                     "install libvulkan1)");
        goto fail;
    }
    r = vkc__create_instance(ctx, desc);
    if (r < 0)
        goto fail;
    r = vkc__create_device(ctx, desc);
    if (r < 0)
        goto fail;
    vkc__resolve_defaults(ctx, desc);
    r = vkc__context_init_modules(ctx);
    if (r < 0) {
        /* The module left its message on the context: keep it for the caller. */
        snprintf(vkc__create_error, sizeof(vkc__create_error), "%s", ctx->last_error);
        goto fail;
    }
    vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
             "vkc %s on \"%s\" (%s), queue family %u: %s; validation %s", VKC_VERSION_STRING,
             ctx->info.name, ctx->info.driver_info, ctx->info.queue_family,
             vkc_queue_reason_string(ctx->info.queue_reason),
             ctx->features.validation ? "on" : "off");
    *out = ctx;
    return VKC_SUCCESS;
fail:
    if (ctx->logger.func && vkc__create_error[0])
        ctx->logger.func(ctx->logger.user_data, VKC_LOG_ERROR, VKC_LOG_ID_ERROR, vkc__create_error);
    vkc_context_destroy(ctx);
    return r;
}

void vkc_context_destroy(vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return;
    if (ctx->device) {
        /* Queued immediate work is submitted (what a caller who ends with
         * vkc_dispatch expects), then vkc waits for its own work, bounded:
         * a device that never finishes must not hang the caller. Past the
         * bound an own device gets vkDeviceWaitIdle; a wrapped device's
         * queues are the host's, so vkc goes on and says so. */
        vkc_result r = VKC_ERROR_DEVICE_LOST;
        if (!atomic_load(&ctx->lost)) {
            vkc__arm_cancel(ctx, NULL); /* an armed copy runs empty, then all can complete */
            (void)vkc__flush_immediate(ctx);
            r = vkc__wait_bounded(ctx, vkc__submitted_value(ctx), "vkc_context_destroy");
        }
        vkc__timing_report(ctx);
        if (r != VKC_SUCCESS && ctx->own_device) {
            vkc_queue_lock(ctx);
            (void)ctx->vk.vkDeviceWaitIdle(ctx->device);
            vkc_queue_unlock(ctx);
        } else if (r != VKC_SUCCESS) {
            vkc__log(ctx, VKC_LOG_ERROR, VKC_LOG_ID_GENERAL,
                     "vkc_context_destroy: vkc's work on the host's device did not complete; "
                     "its objects are destroyed anyway");
        }
        vkc__modules_destroy(ctx);
        if (ctx->own_device)
            ctx->vk.vkDestroyDevice(ctx->device, ctx->alloc);
    }
    if (ctx->messenger)
        ctx->vki.vkDestroyDebugUtilsMessengerEXT(ctx->instance, ctx->messenger, ctx->alloc);
    if (ctx->instance && ctx->own_instance)
        ctx->vki.vkDestroyInstance(ctx->instance, ctx->alloc);
    vkc__loader_close(ctx->loader);
    pthread_mutex_destroy(&ctx->error_lock);
    pthread_mutex_destroy(&ctx->queue_lock);
    pthread_mutex_destroy(&ctx->objects_lock);
    ctx->magic = 0;
    vkc__free(ctx);
}

const vkc_device_info *vkc_context_device(const vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return NULL;
    return &ctx->info;
}

vkc_result vkc_context_features_get(const vkc_context *ctx, vkc_context_features *out)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_context handle");
    if (!out)
        return VKC_FAIL((vkc_context *)ctx, VKC_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = ctx->features;
    out->armed_submits = ctx->arm_on;
    out->armed_reason = ctx->arm_reason;
    out->completion_epilogue = atomic_load(&ctx->epi_on);
    out->epilogue_reason = ctx->epi_reason;
    return VKC_SUCCESS;
}

vkc_result vkc_context_stats(vkc_context *ctx, vkc_stats *out)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_context handle");
    if (!out)
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_ARGUMENT, "out is NULL");
#define VKC_LD(f) out->f = atomic_load_explicit(&ctx->stats.f, memory_order_relaxed)
    VKC_LD(command_buffers);
    VKC_LD(command_buffers_reset);
    VKC_LD(descriptor_pools);
    VKC_LD(descriptor_sets);
    VKC_LD(memory_blocks);
    VKC_LD(memory_bytes);
    VKC_LD(buffers);
    VKC_LD(pipelines);
    VKC_LD(shader_compiles);
    VKC_LD(spirv_cache_hits);
    VKC_LD(pipeline_cache_hits);
    VKC_LD(submits);
    VKC_LD(timeline_signals);
    VKC_LD(armed_opens);
    VKC_LD(armed_cancels);
    VKC_LD(epilogue_records);
    VKC_LD(immediate_repeats);
    VKC_LD(immediate_splits);
    VKC_LD(immediate_slow_submits);
    VKC_LD(immediate_quiet_batches);
    VKC_LD(spare_submits);
    VKC_LD(long_waits);
    VKC_LD(long_waits_guessed);
    VKC_LD(long_waits_spun);
    VKC_LD(dispatches);
    VKC_LD(barriers);
    VKC_LD(staging_blocks);
    VKC_LD(images);
    VKC_LD(samplers);
    VKC_LD(image_views);
#undef VKC_LD
    return VKC_SUCCESS;
}

vkc_result vkc_context_vk(const vkc_context *ctx, vkc_vk_handles *out)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_context handle");
    if (!out)
        return VKC_FAIL((vkc_context *)ctx, VKC_ERROR_INVALID_ARGUMENT, "out is NULL");
    out->instance = ctx->instance;
    out->physical_device = ctx->phys;
    out->device = ctx->device;
    out->queue = ctx->queue;
    out->queue_family = ctx->info.queue_family;
    out->api_version = ctx->api_version;
    out->get_instance_proc_addr = ctx->vki.vkGetInstanceProcAddr;
    out->get_device_proc_addr = ctx->vki.vkGetDeviceProcAddr;
    return VKC_SUCCESS;
}

void vkc_queue_lock(vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return;
    if (ctx->queue_lock_fn)
        ctx->queue_lock_fn(ctx->queue_lock_user);
    pthread_mutex_lock(&ctx->queue_lock);
    /* The host's own submits must not queue behind an armed copy. */
    vkc__arm_cancel_locked(ctx);
}

void vkc_queue_unlock(vkc_context *ctx)
{
    if (!ctx || ctx->magic != VKC_MAGIC_CONTEXT)
        return;
    pthread_mutex_unlock(&ctx->queue_lock);
    if (ctx->queue_unlock_fn)
        ctx->queue_unlock_fn(ctx->queue_lock_user);
}

void vkc__set_name(vkc_context *ctx, VkObjectType type, uint64_t handle, const char *name)
{
    if (!ctx->debug_utils || !ctx->vki.vkSetDebugUtilsObjectNameEXT || !name || !*name || !handle)
        return;
    VkDebugUtilsObjectNameInfoEXT ni = {VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    ni.objectType = type;
    ni.objectHandle = handle;
    ni.pObjectName = name;
    ctx->vki.vkSetDebugUtilsObjectNameEXT(ctx->device, &ni);
}
