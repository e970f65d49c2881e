/* Embedding: contexts on a host's device, cross-queue synchronisation,
 * host-owned buffers.
 *
 * Owns: vkc_context_wrap and the host-facing calls. It sits at the top and
 * may call anything; modules come up through the context's module table. */
#include "vkc_internal.h"

#include <stdio.h>

/* ---- what the host enabled ------------------------------------------------ */

typedef struct vkc__enabled {
    bool timeline, sync2, push, debug_utils;
    bool int64, float64, sb8, sb16, f16, i8, ssc, full_subgroups, maintenance4;
    bool img_read, img_write; /* storage images without a format qualifier */
    bool bda;                 /* bufferDeviceAddress */
} vkc__enabled;

static bool vkc__listed(const char *const *names, uint32_t n, const char *name)
{
    for (uint32_t i = 0; names && i < n; ++i)
        if (names[i] && !strcmp(names[i], name))
            return true;
    return false;
}

/* Walk the host's VkDeviceCreateInfo pNext chain for the features vkc uses;
 * other structures are skipped. */
static void vkc__read_enabled(const vkc_wrap_desc *d, uint32_t api, vkc__enabled *e)
{
    memset(e, 0, sizeof(*e));
    bool timeline = false, sync2 = false, ssc = false, full = false;
    if (d->device_features10) {
        e->int64 = d->device_features10->shaderInt64;
        e->img_read = d->device_features10->shaderStorageImageReadWithoutFormat;
        e->img_write = d->device_features10->shaderStorageImageWriteWithoutFormat;
        e->float64 = d->device_features10->shaderFloat64;
    }
    for (const VkBaseInStructure *s = d->device_features; s; s = s->pNext) {
        switch (s->sType) {
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2: {
            const VkPhysicalDeviceFeatures2 *f = (const void *)s;
            e->int64 |= f->features.shaderInt64;
            e->img_read |= f->features.shaderStorageImageReadWithoutFormat;
            e->img_write |= f->features.shaderStorageImageWriteWithoutFormat;
            e->float64 |= f->features.shaderFloat64;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
            e->sb16 |= ((const VkPhysicalDeviceVulkan11Features *)(const void *)s)
                           ->storageBuffer16BitAccess;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
            const VkPhysicalDeviceVulkan12Features *f = (const void *)s;
            timeline |= f->timelineSemaphore;
            e->sb8 |= f->storageBuffer8BitAccess;
            e->f16 |= f->shaderFloat16;
            e->i8 |= f->shaderInt8;
            e->bda |= f->bufferDeviceAddress;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: {
            const VkPhysicalDeviceVulkan13Features *f = (const void *)s;
            sync2 |= f->synchronization2;
            e->maintenance4 |= f->maintenance4;
            ssc |= f->subgroupSizeControl;
            full |= f->computeFullSubgroups;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES:
            e->maintenance4 |=
                ((const VkPhysicalDeviceMaintenance4Features *)(const void *)s)->maintenance4;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
            e->bda |= ((const VkPhysicalDeviceBufferDeviceAddressFeatures *)(const void *)s)
                          ->bufferDeviceAddress;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
            timeline |= ((const VkPhysicalDeviceTimelineSemaphoreFeatures *)(const void *)s)
                            ->timelineSemaphore;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES:
            sync2 |= ((const VkPhysicalDeviceSynchronization2Features *)(const void *)s)
                         ->synchronization2;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
            e->sb16 |= ((const VkPhysicalDevice16BitStorageFeatures *)(const void *)s)
                           ->storageBuffer16BitAccess;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
            e->sb8 |= ((const VkPhysicalDevice8BitStorageFeatures *)(const void *)s)
                          ->storageBuffer8BitAccess;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES: {
            const VkPhysicalDeviceShaderFloat16Int8Features *f = (const void *)s;
            e->f16 |= f->shaderFloat16;
            e->i8 |= f->shaderInt8;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES: {
            const VkPhysicalDeviceSubgroupSizeControlFeatures *f = (const void *)s;
            ssc |= f->subgroupSizeControl;
            full |= f->computeFullSubgroups;
            break;
        }
        default:
            break;
        }
    }
    const char *const *x = d->device_extensions;
    uint32_t nx = d->device_extension_count;
    /* A feature of a later core version counts only with its extension on an
     * older device version: the functions exist only then. */
    e->timeline = timeline && (api >= VK_API_VERSION_1_2 ||
                               vkc__listed(x, nx, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME));
    e->sync2 = sync2 && (api >= VK_API_VERSION_1_3 ||
                         vkc__listed(x, nx, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME));
    e->ssc = ssc && (api >= VK_API_VERSION_1_3 ||
                     vkc__listed(x, nx, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME));
    e->full_subgroups = full && e->ssc;
    e->push = vkc__listed(x, nx, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    e->debug_utils = vkc__listed(d->instance_extensions, d->instance_extension_count,
                                 VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
}

/* Core entry points that an older device version has only under their
 * extension's name: point the core slots at them. */
static void vkc__alias_khr(vkc_context *ctx)
{
    struct VolkDeviceTable *t = &ctx->vk;
    PFN_vkGetDeviceProcAddr gdpa = ctx->vki.vkGetDeviceProcAddr;
#define VKC_ALIAS(core, khr)                                                                       \
    do {                                                                                           \
        if (!t->core)                                                                              \
            t->core = (PFN_##core)gdpa(ctx->device, #khr);                                         \
    } while (0)
    if (ctx->features.timeline_semaphores) {
        VKC_ALIAS(vkGetSemaphoreCounterValue, vkGetSemaphoreCounterValueKHR);
        VKC_ALIAS(vkWaitSemaphores, vkWaitSemaphoresKHR);
        VKC_ALIAS(vkSignalSemaphore, vkSignalSemaphoreKHR);
    }
    if (ctx->features.synchronization2) {
        VKC_ALIAS(vkQueueSubmit2, vkQueueSubmit2KHR);
        VKC_ALIAS(vkCmdPipelineBarrier2, vkCmdPipelineBarrier2KHR);
    }
#undef VKC_ALIAS
}

/* ---- wrapping ----------------------------------------------------------- */

static vkc_result vkc__wrap_device(vkc_context *ctx, const vkc_wrap_desc *d)
{
    vkc__itable *t = &ctx->vki;
    t->vkGetInstanceProcAddr = d->get_instance_proc_addr;
    vkc__itable_load_instance(t, VK_NULL_HANDLE);
    vkc__itable_load_instance(t, d->instance);
    if (!t->vkGetDeviceProcAddr || !t->vkGetPhysicalDeviceProperties ||
        !t->vkGetPhysicalDeviceQueueFamilyProperties)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: the host's vkGetInstanceProcAddr returned no "
                        "vkGetDeviceProcAddr for its instance (wrong instance or loader?)");
    ctx->instance = d->instance;
    ctx->phys = d->physical_device;
    ctx->own_instance = false;
    ctx->own_device = false;

    vkc_device_info *info = &ctx->info;
    VKC_FORWARD(vkc__read_device_info(t, ctx->phys, info));
    uint32_t api = VKC_MIN(d->api_version, info->api_version);
    if (api < VK_API_VERSION_1_1)
        return VKC_FAIL(NULL, VKC_ERROR_UNSUPPORTED,
                        "vkc_context_wrap: Vulkan %u.%u is enabled on \"%s\"; vkc needs 1.1 or "
                        "later (the host's VkApplicationInfo::apiVersion)",
                        VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), info->name);
    if (d->queue_family >= info->queue_family_count ||
        !(info->queue_families[d->queue_family].flags & VK_QUEUE_COMPUTE_BIT))
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: queue family %u does not exist or lacks compute",
                        d->queue_family);
    if (d->queue_index >= info->queue_families[d->queue_family].count)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: queue index %u is out of range (family %u has %u)",
                        d->queue_index, d->queue_family,
                        info->queue_families[d->queue_family].count);

    /* Only what the host enabled (and the device has). */
    vkc__enabled e;
    vkc__read_enabled(d, api, &e);
    info->timeline_semaphore &= e.timeline;
    info->synchronization2 &= e.sync2;
    info->push_descriptor &= e.push;
    info->subgroup_size_control &= e.ssc && e.full_subgroups;
    info->storage_buffer_8bit &= e.sb8;
    info->storage_buffer_16bit &= e.sb16;
    info->shader_float16 &= e.f16;
    info->shader_int8 &= e.i8;
    info->shader_int64 &= e.int64;
    info->storage_image_read_without_format &= e.img_read;
    info->storage_image_write_without_format &= e.img_write;
    info->shader_float64 &= e.float64;
    /* vkc reaches device addresses through the core (1.2) entry point only. */
    info->buffer_device_address &= e.bda && api >= VK_API_VERSION_1_2;
    info->queue_family = d->queue_family;
    info->queue_reason = VKC_QUEUE_REASON_OVERRIDE;
    info->queue_count = info->queue_families[d->queue_family].count;
    info->timestamps = info->queue_families[d->queue_family].timestamp_valid_bits > 0 &&
                       info->timestamp_period > 0;

    ctx->device = d->device;
    ctx->api_version = api;
    ctx->debug_utils = e.debug_utils && t->vkSetDebugUtilsObjectNameEXT;
    vkc__load_device_table(&ctx->vk, ctx->device, t->vkGetDeviceProcAddr);
    ctx->features.timeline_semaphores = info->timeline_semaphore;
    ctx->features.synchronization2 = info->synchronization2;
    ctx->features.push_descriptors = info->push_descriptor;
    ctx->features.buffer_device_address = info->buffer_device_address;
    ctx->features.wrapped = true;
    ctx->maintenance4 = e.maintenance4;
    vkc__alias_khr(ctx);
    if (!ctx->vk.vkQueueSubmit || !ctx->vk.vkCreateCommandPool ||
        (ctx->features.timeline_semaphores && !ctx->vk.vkWaitSemaphores) ||
        (ctx->features.synchronization2 && !ctx->vk.vkQueueSubmit2) ||
        (ctx->features.push_descriptors && !ctx->vk.vkCmdPushDescriptorSetKHR) ||
        (ctx->features.buffer_device_address && !ctx->vk.vkGetBufferDeviceAddress))
        return VKC_FAIL(NULL, VKC_ERROR_INITIALIZATION_FAILED,
                        "vkc_context_wrap: device functions missing: is `device` a device of "
                        "`instance`, and were the listed extensions really enabled?");
    ctx->vk.vkGetDeviceQueue(ctx->device, d->queue_family, d->queue_index, &ctx->queue);
    if (!ctx->queue)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: the device has no queue %u of family %u", d->queue_index,
                        d->queue_family);
    t->vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->mem_props);
    ctx->queue_lock_fn = d->queue_lock;
    ctx->queue_unlock_fn = d->queue_unlock;
    ctx->queue_lock_user = d->queue_lock_user;
    ctx->host_pipeline_cache = d->pipeline_cache;
    ctx->disk_cache = d->disk_cache != VKC_OFF;
    if (d->cache_dir)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s", d->cache_dir);
    return VKC_SUCCESS;
}

vkc_result vkc_context_wrap(const vkc_wrap_desc *desc, vkc_context **out)
{
    if (!out)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT, "vkc_context_wrap: out is NULL");
    *out = NULL;
    if (!desc)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT, "vkc_context_wrap: desc is NULL");
    if (!desc->instance || !desc->physical_device || !desc->device || !desc->get_instance_proc_addr)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: instance, physical_device, device and "
                        "get_instance_proc_addr are all required");
    if (!desc->api_version)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: api_version is required (the apiVersion of the "
                        "host's VkApplicationInfo)");
    if (!desc->queue_lock != !desc->queue_unlock)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: give both queue_lock and queue_unlock, or neither");
    if ((desc->device_extension_count && !desc->device_extensions) ||
        (desc->instance_extension_count && !desc->instance_extensions))
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_context_wrap: an extension count without its list");

    vkc_context *ctx = vkc__context_alloc(&desc->logger, desc->allocator);
    if (!ctx)
        return VKC_FAIL(NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "context allocation");
    vkc_result r = vkc__wrap_device(ctx, desc);
    if (r < 0)
        goto fail;
    vkc_context_desc cd;
    memset(&cd, 0, sizeof(cd));
    cd.logger = desc->logger;
    cd.allocator = desc->allocator;
    cd.wait_mode = desc->wait_mode;
    cd.spin_ns = desc->spin_ns;
    cd.disk_cache = desc->disk_cache;
    cd.cache_dir = desc->cache_dir;
    cd.batch_size = desc->batch_size;
    cd.batches_in_flight = desc->batches_in_flight;
    vkc__resolve_defaults(ctx, &cd);
    /* A host that enabled debug-utils wants readable captures: label every
     * dispatch with its kernel's name (recorded once per sequence). */
    if (ctx->debug_utils)
        ctx->debug_labels = true;
    r = vkc__context_init_modules(ctx);
    if (r < 0) {
        /* The module left its message on the context: keep it for the caller. */
        VKC_FAIL(NULL, r, "%s", ctx->last_error);
        goto fail;
    }
    vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
             "vkc %s wrapping the host's device \"%s\", queue family %u index %u%s",
             VKC_VERSION_STRING, ctx->info.name, desc->queue_family, desc->queue_index,
             desc->queue_lock ? " (shared: host lock callbacks)" : "");
    *out = ctx;
    return VKC_SUCCESS;
fail:
    if (ctx->logger.func && vkc_last_create_error()[0])
        ctx->logger.func(ctx->logger.user_data, VKC_LOG_ERROR, VKC_LOG_ID_ERROR,
                         vkc_last_create_error());
    vkc_context_destroy(ctx);
    return r;
}

/* ---- cross-queue synchronisation -------------------------------------------- */

vkc_result vkc_ticket_export(vkc_context *ctx, vkc_ticket ticket, VkSemaphore *out_semaphore,
                             uint64_t *out_value)
{
    if (out_semaphore)
        *out_semaphore = VK_NULL_HANDLE;
    if (out_value)
        *out_value = 0;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out_semaphore || !out_value, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_ticket_export: out_semaphore and out_value are required");
    VKC_RETURN_IF(!ctx->features.timeline_semaphores, ctx, VKC_ERROR_UNSUPPORTED,
                  "vkc_ticket_export: the context has no timeline semaphores (the host did not "
                  "enable them, or they are turned off)");
    bool zero = ticket.value == 0 && ticket.context_id == 0;
    VKC_RETURN_IF(!zero && ticket.context_id != ctx->id, ctx, VKC_ERROR_INVALID_HANDLE,
                  "vkc_ticket_export: the ticket belongs to another context");
    VKC_RETURN_IF(ticket.value > vkc__submitted_value(ctx), ctx, VKC_ERROR_INVALID_HANDLE,
                  "vkc_ticket_export: ticket value %llu was never issued",
                  (unsigned long long)ticket.value);
    /* The host waits on the semaphore itself: the value must be signalled. */
    VKC_FORWARD(vkc__signal_through(ctx, ticket.value));
    VKC_RETURN_IF(ticket.value && atomic_load(&ctx->signalled_value) < ticket.value, ctx,
                  VKC_ERROR_OUT_OF_DEVICE_MEMORY,
                  "vkc_ticket_export: no timeline signal could be submitted for ticket %llu (its "
                  "work is complete: the queue was waited for instead)",
                  (unsigned long long)ticket.value);
    *out_semaphore = ctx->timeline;
    *out_value = ticket.value ? vkc__signal_cover(ctx, ticket.value) : 0;
    return VKC_SUCCESS;
}

vkc_result vkc_wait_host_semaphore(vkc_context *ctx, VkSemaphore semaphore, uint64_t value)
{
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!semaphore, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_wait_host_semaphore: semaphore is VK_NULL_HANDLE");
    VKC_RETURN_IF(value && !ctx->features.timeline_semaphores, ctx, VKC_ERROR_UNSUPPORTED,
                  "vkc_wait_host_semaphore: a timeline value needs timeline semaphores, which "
                  "the context does not use");
    VKC_RETURN_IF(semaphore == ctx->timeline, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_wait_host_semaphore: that is vkc's own timeline (wait on a ticket)");
    vkc_result r = VKC_SUCCESS;
    pthread_mutex_lock(&ctx->queue_lock);
    /* An armed copy would not wait on it: it goes (cancelled) first. */
    vkc__arm_cancel_locked(ctx);
    uint32_t i = 0;
    while (i < ctx->host_wait_count && ctx->host_waits[i].semaphore != semaphore)
        ++i;
    if (i < ctx->host_wait_count) {
        /* The same timeline twice: the later value covers the earlier. */
        ctx->host_waits[i].value = VKC_MAX(ctx->host_waits[i].value, value);
    } else if (i == VKC_MAX_HOST_WAITS) {
        r = VKC_ERROR_LIMIT;
    } else {
        ctx->host_waits[i].semaphore = semaphore;
        ctx->host_waits[i].value = value;
        ctx->host_wait_count++;
    }
    pthread_mutex_unlock(&ctx->queue_lock);
    VKC_RETURN_IF(r < 0, ctx, r,
                  "vkc_wait_host_semaphore: %u waits are already registered for the next "
                  "submit (the most one submit carries)",
                  (unsigned)VKC_MAX_HOST_WAITS);
    return VKC_SUCCESS;
}

/* ---- host buffers ------------------------------------------------------------ */

/* Unique ids of wrapped buffers live in their own range so they can never
 * equal an id the memory module hands out. */
static atomic_uint_fast64_t vkc__wrap_uid = UINT64_C(1) << 62;

vkc_result vkc_buffer_wrap(vkc_context *ctx, VkBuffer buffer, VkDeviceSize offset,
                           VkDeviceSize size, vkc_buffer **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_buffer_wrap: out is NULL");
    VKC_RETURN_IF(!buffer, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_wrap: buffer is VK_NULL_HANDLE");
    VKC_RETURN_IF(size == 0 || size == VK_WHOLE_SIZE || offset > UINT64_MAX - size, ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_wrap: size must be the byte count (> 0, not VK_WHOLE_SIZE)");
    uint64_t align = ctx->info.min_storage_buffer_offset_alignment;
    VKC_RETURN_IF(align && offset % align, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_wrap: offset %llu is not a multiple of "
                  "minStorageBufferOffsetAlignment (%llu)",
                  (unsigned long long)offset, (unsigned long long)align);
    vkc_buffer *b = vkc__calloc(1, sizeof(*b));
    VKC_RETURN_IF(!b, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "vkc_buffer_wrap: allocation");
    b->buffer = buffer;
    b->offset = offset;
    b->size = size;
    b->memory = VKC_MEMORY_DEVICE;
    b->wrapped = true;
    b->alloc_size = size;
    b->uid = atomic_fetch_add(&vkc__wrap_uid, 1);
    /* vkc's record only: the host's VkBuffer keeps the name the host gave it. */
    snprintf(b->name, sizeof(b->name), "wrapped 0x%llx+%llu", (unsigned long long)(uintptr_t)buffer,
             (unsigned long long)offset);
    vkc__obj_init(&b->obj, VKC_MAGIC_BUFFER, ctx, b->name, vkc__buffer_obj_free, &ctx->buffers);
    VKC_STAT_ADD(ctx, buffers, 1);
    *out = b;
    return VKC_SUCCESS;
}
