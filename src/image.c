/* Images and samplers: their memory, views, layouts and transfers.
 *
 * Owns vkc_image and vkc_sampler. Sits at the memory layer: it may call the
 * context, memory and pool modules, never dispatch (blocking calls reach
 * queued immediate work through ctx->flush_immediate). */
#include "vkc_internal.h"

#include <stdio.h>

typedef struct vkc__format_row {
    const char *name;
    VkFormat vk;
    uint32_t texel_size;
} vkc__format_row;

static const vkc__format_row vkc__formats[VKC_FORMAT_COUNT_] = {
    [VKC_FORMAT_DEFAULT] = {"RGBA8_UNORM", VK_FORMAT_R8G8B8A8_UNORM, 4},
    [VKC_FORMAT_R8_UNORM] = {"R8_UNORM", VK_FORMAT_R8_UNORM, 1},
    [VKC_FORMAT_RG8_UNORM] = {"RG8_UNORM", VK_FORMAT_R8G8_UNORM, 2},
    [VKC_FORMAT_RGBA8_UNORM] = {"RGBA8_UNORM", VK_FORMAT_R8G8B8A8_UNORM, 4},
    [VKC_FORMAT_RGBA8_SRGB] = {"RGBA8_SRGB", VK_FORMAT_R8G8B8A8_SRGB, 4},
    [VKC_FORMAT_R16F] = {"R16F", VK_FORMAT_R16_SFLOAT, 2},
    [VKC_FORMAT_RGBA16F] = {"RGBA16F", VK_FORMAT_R16G16B16A16_SFLOAT, 8},
    [VKC_FORMAT_R32F] = {"R32F", VK_FORMAT_R32_SFLOAT, 4},
    [VKC_FORMAT_RG32F] = {"RG32F", VK_FORMAT_R32G32_SFLOAT, 8},
    [VKC_FORMAT_RGBA32F] = {"RGBA32F", VK_FORMAT_R32G32B32A32_SFLOAT, 16},
    [VKC_FORMAT_R32UI] = {"R32UI", VK_FORMAT_R32_UINT, 4},
    [VKC_FORMAT_R32I] = {"R32I", VK_FORMAT_R32_SINT, 4},
};

const char *vkc_format_name(vkc_format format)
{
    return (unsigned)format < VKC_FORMAT_COUNT_ ? vkc__formats[format].name : "unknown";
}

VkFormat vkc_format_vk(vkc_format format)
{
    return (unsigned)format < VKC_FORMAT_COUNT_ ? vkc__formats[format].vk : VK_FORMAT_UNDEFINED;
}

uint32_t vkc_format_texel_size(vkc_format format)
{
    return (unsigned)format < VKC_FORMAT_COUNT_ ? vkc__formats[format].texel_size : 0;
}

/* ---- module state -------------------------------------------------------------- */

typedef struct vkc__image_state {
    pthread_mutex_t lock; /* the sampler list */
    vkc_sampler *samplers;
    atomic_uint_fast64_t next_uid;
} vkc__image_state;

static vkc__image_state *vkc__is(vkc_context *ctx)
{
    return (vkc__image_state *)ctx->image_state;
}

#define VKC_CHECK_IMAGE(img, what)                                                                 \
    do {                                                                                           \
        if (VKC_UNLIKELY(!(img) || (img)->obj.magic != VKC_MAGIC_IMAGE))                               \
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "%s: invalid vkc_image handle", what); \
        VKC_CHECK_CONTEXT((img)->obj.ctx);                                                             \
        if (VKC_UNLIKELY((img)->dead))                                                             \
            return VKC_FAIL((img)->obj.ctx, VKC_ERROR_INVALID_HANDLE,                                  \
                            "%s: image \"%s\" wrapped a VkImage of a device that was lost", what,  \
                            (img)->name);                                                          \
    } while (0)

/* ---- formats and their features -------------------------------------------------- */

static const char *vkc__usage_name(uint32_t bit)
{
    switch (bit) {
    case VKC_IMAGE_USAGE_STORAGE:
        return "storage";
    case VKC_IMAGE_USAGE_SAMPLED:
        return "sampled";
    case VKC_IMAGE_USAGE_COLOR_ATTACHMENT:
        return "color attachment";
    default:
        return "transfer";
    }
}

static VkFormatFeatureFlags vkc__format_features(vkc_context *ctx, VkFormat f)
{
    VkFormatProperties fp = {0};
    ctx->vki.vkGetPhysicalDeviceFormatProperties(ctx->phys, f, &fp);
    return fp.optimalTilingFeatures;
}

/* The format features a usage bit needs. */
static VkFormatFeatureFlags vkc__usage_features(uint32_t bit)
{
    switch (bit) {
    case VKC_IMAGE_USAGE_STORAGE:
        return VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT;
    case VKC_IMAGE_USAGE_SAMPLED:
        return VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT;
    case VKC_IMAGE_USAGE_COLOR_ATTACHMENT:
        return VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT;
    default:
        return VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
    }
}

static VkImageUsageFlags vkc__vk_usage(uint32_t usage)
{
    VkImageUsageFlags u = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    if (usage & VKC_IMAGE_USAGE_STORAGE)
        u |= VK_IMAGE_USAGE_STORAGE_BIT;
    if (usage & VKC_IMAGE_USAGE_SAMPLED)
        u |= VK_IMAGE_USAGE_SAMPLED_BIT;
    if (usage & VKC_IMAGE_USAGE_COLOR_ATTACHMENT)
        u |= VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    return u;
}

/* Resolve DEFAULT usage and check every usage against the device's format
 * features. */
static vkc_result vkc__check_usage(vkc_context *ctx, vkc_format format, uint32_t *usage,
                                   const char *what)
{
    const uint32_t known =
        VKC_IMAGE_USAGE_STORAGE | VKC_IMAGE_USAGE_SAMPLED | VKC_IMAGE_USAGE_COLOR_ATTACHMENT;
    VKC_RETURN_IF(*usage & ~known, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: unknown usage bits 0x%x",
                  what, *usage & ~known);
    VkFormatFeatureFlags have = vkc__format_features(ctx, vkc__formats[format].vk);
    const VkFormatFeatureFlags transfer = vkc__usage_features(0);
    VKC_RETURN_IF((have & transfer) != transfer, ctx, VKC_ERROR_UNSUPPORTED,
                  "%s: device \"%s\" cannot copy %s images (format features 0x%x lack "
                  "TRANSFER_SRC/DST)",
                  what, ctx->info.name, vkc__formats[format].name, (unsigned)have);
    if (*usage == 0) {
        if (have & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT)
            *usage |= VKC_IMAGE_USAGE_STORAGE;
        if (have & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
            *usage |= VKC_IMAGE_USAGE_SAMPLED;
        VKC_RETURN_IF(*usage == 0, ctx, VKC_ERROR_UNSUPPORTED,
                      "%s: device \"%s\" can neither store to nor sample %s images", what,
                      ctx->info.name, vkc__formats[format].name);
        return VKC_SUCCESS;
    }
    for (uint32_t bit = 1; bit <= VKC_IMAGE_USAGE_COLOR_ATTACHMENT; bit <<= 1) {
        if ((*usage & bit) && (have & vkc__usage_features(bit)) != vkc__usage_features(bit))
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: format %s does not support %s usage on device \"%s\"", what,
                            vkc__formats[format].name, vkc__usage_name(bit), ctx->info.name);
    }
    return VKC_SUCCESS;
}

/* Shape of an image from a desc (create and wrap share it). */
typedef struct vkc__shape {
    vkc_image_type type;
    vkc_format format;
    uint32_t width, height, depth, layers, mips;
} vkc__shape;

static uint32_t vkc__mip_extent(uint32_t v, uint32_t mip)
{
    v >>= mip;
    return v ? v : 1;
}

static vkc_result vkc__resolve_shape(vkc_context *ctx, vkc_image_type type, vkc_format format,
                                     uint32_t width, uint32_t height, uint32_t dl, uint32_t mips,
                                     const char *what, vkc__shape *out)
{
    VKC_RETURN_IF((unsigned)type > VKC_IMAGE_3D, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: unknown image type %d", what, (int)type);
    VKC_RETURN_IF((unsigned)format >= VKC_FORMAT_COUNT_, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: unknown format %d", what, (int)format);
    VKC_RETURN_IF(width == 0, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: width is 0", what);
    out->type = type;
    out->format = format == VKC_FORMAT_DEFAULT ? VKC_FORMAT_RGBA8_UNORM : format;
    out->width = width;
    out->height = height ? height : 1;
    dl = dl ? dl : 1;
    out->depth = type == VKC_IMAGE_3D ? dl : 1;
    out->layers = type == VKC_IMAGE_2D_ARRAY ? dl : 1;
    VKC_RETURN_IF(type == VKC_IMAGE_2D && dl > 1, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: a 2D image has depth_or_layers 1 (got %u): use VKC_IMAGE_2D_ARRAY or "
                  "VKC_IMAGE_3D",
                  what, dl);
    uint32_t largest = VKC_MAX(out->width, VKC_MAX(out->height, out->depth));
    uint32_t max_mips = 1;
    while (largest >> max_mips)
        ++max_mips;
    out->mips = mips ? mips : 1;
    VKC_RETURN_IF(out->mips > max_mips, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: %u mip levels, but a %ux%ux%u image has at most %u", what, out->mips,
                  out->width, out->height, out->depth, max_mips);
    return VKC_SUCCESS;
}

static VkImageType vkc__vk_image_type(vkc_image_type t)
{
    return t == VKC_IMAGE_3D ? VK_IMAGE_TYPE_3D : VK_IMAGE_TYPE_2D;
}

/* The device's limits for this shape and usage. */
static vkc_result vkc__check_limits(vkc_context *ctx, const vkc__shape *sh, VkImageUsageFlags usage,
                                    const char *what)
{
    VkImageFormatProperties ip = {0};
    VkResult vr = ctx->vki.vkGetPhysicalDeviceImageFormatProperties(
        ctx->phys, vkc__formats[sh->format].vk, vkc__vk_image_type(sh->type),
        VK_IMAGE_TILING_OPTIMAL, usage, 0, &ip);
    VKC_RETURN_IF(vr == VK_ERROR_FORMAT_NOT_SUPPORTED, ctx, VKC_ERROR_UNSUPPORTED,
                  "%s: device \"%s\" does not support %s images of this type and usage", what,
                  ctx->info.name, vkc__formats[sh->format].name);
    VKC_RETURN_IF_VK(ctx, vr, "vkGetPhysicalDeviceImageFormatProperties");
    VKC_RETURN_IF(sh->width > ip.maxExtent.width || sh->height > ip.maxExtent.height ||
                      sh->depth > ip.maxExtent.depth,
                  ctx, VKC_ERROR_LIMIT, "%s: extent %ux%ux%u exceeds the device's %ux%ux%u for %s",
                  what, sh->width, sh->height, sh->depth, ip.maxExtent.width, ip.maxExtent.height,
                  ip.maxExtent.depth, vkc__formats[sh->format].name);
    VKC_RETURN_IF(sh->layers > ip.maxArrayLayers, ctx, VKC_ERROR_LIMIT,
                  "%s: %u layers exceed the device's %u", what, sh->layers, ip.maxArrayLayers);
    VKC_RETURN_IF(sh->mips > ip.maxMipLevels, ctx, VKC_ERROR_LIMIT,
                  "%s: %u mip levels exceed the device's %u", what, sh->mips, ip.maxMipLevels);
    return VKC_SUCCESS;
}

/* ---- barriers ----------------------------------------------------------------------- */

VkImageMemoryBarrier2 vkc__image_barrier(const vkc_image *img, VkImageLayout from, VkImageLayout to,
                                         VkPipelineStageFlags2 src_stages,
                                         VkPipelineStageFlags2 dst_stages, uint32_t base_mip,
                                         uint32_t mips, uint32_t base_layer, uint32_t layers)
{
    VkImageMemoryBarrier2 b = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    b.srcStageMask = src_stages;
    b.srcAccessMask = vkc__writes_of(src_stages);
    b.dstStageMask = dst_stages;
    b.dstAccessMask = vkc__accesses_of(dst_stages);
    b.oldLayout = from;
    b.newLayout = to;
    b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = img->image;
    b.subresourceRange =
        (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, base_mip, mips, base_layer, layers};
    return b;
}

/* Between the blocking calls' one-shot work and what comes before and after. */
static VkImageMemoryBarrier2 vkc__transition(const vkc_image *img, VkImageLayout from,
                                             VkImageLayout to, uint32_t base_mip, uint32_t mips,
                                             uint32_t base_layer, uint32_t layers)
{
    return vkc__image_barrier(img, from, to, VKC_WORK_STAGES, VKC_WORK_STAGES, base_mip, mips,
                              base_layer, layers);
}

/* Move the whole image from one layout to another in a one-shot unit and
 * wait (creation, wrapping, recovery). flush: submit the open immediate
 * batch first (not during recovery, when dispatch is not rebuilt yet). */
static vkc_result vkc__oneshot_transition(vkc_image *img, VkImageLayout from, VkImageLayout to,
                                          bool flush)
{
    vkc_context *ctx = img->obj.ctx;
    if (flush)
        VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    VkImageMemoryBarrier2 b = vkc__transition(img, from, to, 0, img->mips, 0, img->layers);
    vkc__cmd_barrier2(ctx, cmd->cb, NULL, &b, 1);
    return vkc__oneshot_end_wait(ctx, cmd);
}

/* ---- creation ---------------------------------------------------------------------- */

static vkc_image *vkc__image_alloc(vkc_context *ctx, const vkc__shape *sh, const char *name)
{
    vkc_image *img = vkc__calloc(1, sizeof(*img));
    if (!img)
        return NULL;
    img->obj.magic = VKC_MAGIC_IMAGE;
    img->obj.ctx = ctx;
    img->type = sh->type;
    img->format = sh->format;
    img->vk_format = vkc__formats[sh->format].vk;
    img->width = sh->width;
    img->height = sh->height;
    img->depth = sh->depth;
    img->layers = sh->layers;
    img->mips = sh->mips;
    img->uid = atomic_fetch_add(&vkc__is(ctx)->next_uid, 1) + 1;
    img->features = vkc__format_features(ctx, img->vk_format);
    pthread_mutex_init(&img->view_lock, NULL);
    snprintf(img->name, sizeof(img->name), "%s", name ? name : "");
    return img;
}

static void vkc__image_views_free(vkc_image *img)
{
    vkc_context *ctx = img->obj.ctx;
    for (uint32_t i = 0; i < img->view_count; ++i)
        ctx->vk.vkDestroyImageView(ctx->device, img->views[i].view, ctx->alloc);
    VKC_STAT_SUB(ctx, image_views, img->view_count);
    img->view_count = 0;
}

/* Drop the Vulkan objects (views, and the image and memory vkc owns). */
static void vkc__image_vk_free(vkc_image *img)
{
    vkc_context *ctx = img->obj.ctx;
    vkc__image_views_free(img);
    if (!img->wrapped && img->image)
        ctx->vk.vkDestroyImage(ctx->device, img->image, ctx->alloc);
    if (img->memory) {
        ctx->vk.vkFreeMemory(ctx->device, img->memory, ctx->alloc);
        VKC_STAT_SUB(ctx, memory_blocks, 1);
        VKC_STAT_SUB(ctx, memory_bytes, img->memory_size);
    }
    if (!img->wrapped)
        img->image = VK_NULL_HANDLE;
    img->memory = VK_NULL_HANDLE;
}

static void vkc__image_free(vkc_image *img)
{
    vkc__image_vk_free(img);
    img->obj.magic = 0;
    pthread_mutex_destroy(&img->view_lock);
    vkc__free(img->views);
    vkc__free(img);
}

/* The last reference went (object.c): nothing recorded or in flight names it. */
static void vkc__image_obj_free(vkc__obj *o)
{
    vkc__image_free((vkc_image *)o);
}

/* The VkImage and its dedicated memory, for a new image or after loss. */
static vkc_result vkc__image_make(vkc_image *img, bool flush)
{
    vkc_context *ctx = img->obj.ctx;
    VkImageCreateInfo ci = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ci.imageType = vkc__vk_image_type(img->type);
    ci.format = img->vk_format;
    ci.extent = (VkExtent3D){img->width, img->height, img->depth};
    ci.mipLevels = img->mips;
    ci.arrayLayers = img->layers;
    ci.samples = VK_SAMPLE_COUNT_1_BIT;
    ci.tiling = VK_IMAGE_TILING_OPTIMAL;
    ci.usage = img->vk_usage;
    ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkResult vr =
        VKC_VK(vkCreateImage, ctx->vk.vkCreateImage(ctx->device, &ci, ctx->alloc, &img->image));
    VKC_RETURN_IF_VK(ctx, vr, "vkCreateImage");
    VkMemoryRequirements req;
    ctx->vk.vkGetImageMemoryRequirements(ctx->device, img->image, &req);
    uint32_t types[VK_MAX_MEMORY_TYPES];
    uint32_t n =
        vkc__memory_pick_types(&ctx->mem_props, VKC_MEMORY_DEVICE, req.memoryTypeBits, types);
    VkMemoryDedicatedAllocateInfo ded = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    ded.image = img->image;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = &ded;
    ai.allocationSize = req.size;
    vr = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    /* Next type on out-of-memory: a full heap is not the end. */
    for (uint32_t i = 0; i < n && vr < 0; ++i) {
        ai.memoryTypeIndex = types[i];
        vr = VKC_VK(vkAllocateMemory,
                    ctx->vk.vkAllocateMemory(ctx->device, &ai, ctx->alloc, &img->memory));
        if (vr < 0 && vr != VK_ERROR_OUT_OF_DEVICE_MEMORY && vr != VK_ERROR_OUT_OF_HOST_MEMORY)
            break;
    }
    if (vr < 0) {
        img->memory = VK_NULL_HANDLE;
        if (n == 0)
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_DEVICE_MEMORY,
                            "image \"%s\": no memory type suits it", img->name);
        return vkc__vk_fail(ctx, vr, "vkAllocateMemory (image)", __FILE__, __LINE__);
    }
    img->memory_size = req.size;
    VKC_STAT_ADD(ctx, memory_blocks, 1);
    VKC_STAT_ADD(ctx, memory_bytes, req.size);
    vr = VKC_VK(vkBindImageMemory,
                ctx->vk.vkBindImageMemory(ctx->device, img->image, img->memory, 0));
    VKC_RETURN_IF_VK(ctx, vr, "vkBindImageMemory");
    if (img->name[0])
        vkc__set_name(ctx, VK_OBJECT_TYPE_IMAGE, (uint64_t)img->image, img->name);
    return vkc__oneshot_transition(img, VK_IMAGE_LAYOUT_UNDEFINED, img->resting, flush);
}

static void vkc__image_list(vkc_image *img)
{
    vkc_context *ctx = img->obj.ctx;
    vkc__obj_init(&img->obj, VKC_MAGIC_IMAGE, ctx, img->name, vkc__image_obj_free, &ctx->images);
    VKC_STAT_ADD(ctx, images, 1);
}

vkc_result vkc_image_create(vkc_context *ctx, const vkc_image_desc *desc, vkc_image **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    const char *what = "vkc_image_create";
    VKC_RETURN_IF(!desc, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", what);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: out is NULL", what);
    vkc__shape sh;
    VKC_FORWARD(vkc__resolve_shape(ctx, desc->type, desc->format, desc->width, desc->height,
                                   desc->depth_or_layers, desc->mip_levels, what, &sh));
    uint32_t usage = desc->usage;
    VKC_FORWARD(vkc__check_usage(ctx, sh.format, &usage, what));
    VKC_FORWARD(vkc__check_limits(ctx, &sh, vkc__vk_usage(usage), what));
    vkc_image *img = vkc__image_alloc(ctx, &sh, desc->name);
    VKC_RETURN_IF(!img, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image");
    img->usage = usage;
    img->vk_usage = vkc__vk_usage(usage);
    img->resting = VK_IMAGE_LAYOUT_GENERAL;
    vkc_result r = vkc__image_make(img, true);
    if (r < 0) {
        /* The transition may have been submitted and its wait failed. */
        vkc__drain_or_idle(ctx);
        vkc__image_free(img);
        return r;
    }
    vkc__image_list(img);
    *out = img;
    return VKC_SUCCESS;
}

vkc_result vkc_image_wrap(vkc_context *ctx, const vkc_image_wrap_desc *desc, vkc_image **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    const char *what = "vkc_image_wrap";
    VKC_RETURN_IF(!desc, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", what);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: out is NULL", what);
    VKC_RETURN_IF(!desc->image, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: image is VK_NULL_HANDLE",
                  what);
    vkc__shape sh;
    VKC_FORWARD(vkc__resolve_shape(ctx, desc->type, desc->format, desc->width, desc->height,
                                   desc->depth_or_layers, desc->mip_levels, what, &sh));
    VKC_RETURN_IF(desc->sharing_mode != VK_SHARING_MODE_EXCLUSIVE &&
                      desc->sharing_mode != VK_SHARING_MODE_CONCURRENT,
                  ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: unknown sharing mode %d", what,
                  (int)desc->sharing_mode);
    const bool exclusive = desc->sharing_mode == VK_SHARING_MODE_EXCLUSIVE;
    VKC_RETURN_IF(exclusive && desc->queue_family >= ctx->info.queue_family_count, ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "%s: queue family %u does not exist (the device has %u)", what,
                  desc->queue_family, ctx->info.queue_family_count);
    const bool foreign = exclusive && desc->queue_family != ctx->info.queue_family;
    VkImageLayout layout = desc->layout;
    VKC_RETURN_IF(layout == VK_IMAGE_LAYOUT_PREINITIALIZED, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: PREINITIALIZED (linear images) is not supported", what);
    VKC_RETURN_IF(foreign && layout == VK_IMAGE_LAYOUT_UNDEFINED, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: an image owned by queue family %u needs its layout (not UNDEFINED): vkc "
                  "cannot move it before acquiring it",
                  what, desc->queue_family);
    uint32_t usage = 0;
    if (desc->usage & VK_IMAGE_USAGE_STORAGE_BIT)
        usage |= VKC_IMAGE_USAGE_STORAGE;
    if (desc->usage & VK_IMAGE_USAGE_SAMPLED_BIT)
        usage |= VKC_IMAGE_USAGE_SAMPLED;
    if (desc->usage & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT)
        usage |= VKC_IMAGE_USAGE_COLOR_ATTACHMENT;
    vkc_image *img = vkc__image_alloc(ctx, &sh, desc->name);
    VKC_RETURN_IF(!img, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image");
    img->image = desc->image;
    img->wrapped = true;
    img->foreign = foreign;
    img->concurrent = !exclusive;
    img->usage = usage;
    img->vk_usage = desc->usage;
    img->resting = layout == VK_IMAGE_LAYOUT_UNDEFINED ? VK_IMAGE_LAYOUT_GENERAL : layout;
    if (layout == VK_IMAGE_LAYOUT_UNDEFINED) {
        vkc_result r = vkc__oneshot_transition(img, VK_IMAGE_LAYOUT_UNDEFINED, img->resting, true);
        if (r < 0) {
            vkc__drain_or_idle(ctx);
            vkc__image_free(img);
            return r;
        }
    }
    vkc__image_list(img);
    *out = img;
    return VKC_SUCCESS;
}

void vkc_image_destroy(vkc_image *img)
{
    if (!vkc__obj_is(img, VKC_MAGIC_IMAGE))
        return;
    vkc_context *ctx = img->obj.ctx;
    VKC_STAT_SUB(ctx, images, 1);
    /* No wait: sequences that recorded it and work in flight hold their
     * own references; the image and its memory go with the last one. */
    vkc__obj_kill(&img->obj, VKC_MAGIC_IMAGE);
    vkc__pool_retire(ctx);
}

vkc_result vkc_image_info_get(const vkc_image *img, vkc_image_info *out)
{
    if (!img || img->obj.magic != VKC_MAGIC_IMAGE)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "vkc_image_info_get: invalid handle");
    VKC_RETURN_IF(!out, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_image_info_get: out is NULL");
    *out = (vkc_image_info){
        .type = img->type,
        .format = img->format,
        .width = img->width,
        .height = img->height,
        .depth = img->depth,
        .layers = img->layers,
        .mip_levels = img->mips,
        .usage = img->usage,
        .texel_size = vkc__formats[img->format].texel_size,
        .wrapped = img->wrapped,
        .resting_layout = img->resting,
        .name = img->name,
    };
    return VKC_SUCCESS;
}

vkc_result vkc_image_vk(const vkc_image *img, VkImage *out_image)
{
    if (out_image)
        *out_image = VK_NULL_HANDLE;
    if (!img || img->obj.magic != VKC_MAGIC_IMAGE)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "vkc_image_vk: invalid handle");
    VKC_RETURN_IF(!out_image, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_image_vk: out is NULL");
    *out_image = img->image;
    return VKC_SUCCESS;
}

/* ---- views ---------------------------------------------------------------------------- */

static uint64_t vkc__view_key(VkImageViewType type, uint32_t base_mip, uint32_t mips,
                              uint32_t base_layer, uint32_t layers)
{
    return (uint64_t)type | (uint64_t)base_mip << 8 | (uint64_t)mips << 16 |
           (uint64_t)base_layer << 24 | (uint64_t)layers << 44;
}

vkc_result vkc__image_view(vkc_image *img, VkImageViewType type, uint32_t base_mip,
                           uint32_t mip_count, uint32_t base_layer, uint32_t layer_count,
                           VkImageView *out)
{
    vkc_context *ctx = img->obj.ctx;
    uint64_t key = vkc__view_key(type, base_mip, mip_count, base_layer, layer_count);
    pthread_mutex_lock(&img->view_lock);
    for (uint32_t i = 0; i < img->view_count; ++i) {
        if (img->views[i].key == key) {
            *out = img->views[i].view;
            pthread_mutex_unlock(&img->view_lock);
            return VKC_SUCCESS;
        }
    }
    vkc_result r = VKC_SUCCESS;
    if (img->view_count == img->view_cap) {
        uint32_t cap = img->view_cap ? img->view_cap * 2 : 4;
        vkc__view *v = vkc__realloc(img->views, cap * sizeof(*v));
        if (!v) {
            pthread_mutex_unlock(&img->view_lock);
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image view cache");
        }
        img->views = v;
        img->view_cap = cap;
    }
    VkImageViewCreateInfo ci = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    ci.image = img->image;
    ci.viewType = type;
    ci.format = img->vk_format;
    ci.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, base_mip, mip_count,
                                                    base_layer, layer_count};
    VkImageView view;
    VkResult vr =
        VKC_VK(vkCreateImageView, ctx->vk.vkCreateImageView(ctx->device, &ci, ctx->alloc, &view));
    if (vr < 0) {
        r = vkc__vk_fail(ctx, vr, "vkCreateImageView", __FILE__, __LINE__);
    } else {
        img->views[img->view_count++] = (vkc__view){key, view};
        VKC_STAT_ADD(ctx, image_views, 1);
        *out = view;
    }
    pthread_mutex_unlock(&img->view_lock);
    return r;
}

/* ---- regions and blocking transfers ------------------------------------------------------ */

vkc_result vkc__resolve_region(const vkc_image *img, const vkc_image_region *rg, const char *what,
                               vkc__box *b)
{
    static const vkc_image_region all;
    vkc_context *ctx = img->obj.ctx;
    if (!rg)
        rg = &all;
    VKC_RETURN_IF(rg->mip >= img->mips, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: mip %u is out of range: image \"%s\" has %u mip level(s)", what, rg->mip,
                  img->name, img->mips);
    VKC_RETURN_IF(rg->base_layer >= img->layers || rg->layer_count > img->layers - rg->base_layer,
                  ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: layers [%u, +%u) are out of range: image \"%s\" has %u layer(s)", what,
                  rg->base_layer, rg->layer_count, img->name, img->layers);
    uint32_t mw = vkc__mip_extent(img->width, rg->mip), mh = vkc__mip_extent(img->height, rg->mip),
             md = vkc__mip_extent(img->depth, rg->mip);
    VKC_RETURN_IF(rg->x >= mw || rg->y >= mh || rg->z >= md || rg->width > mw - rg->x ||
                      rg->height > mh - rg->y || rg->depth > md - rg->z,
                  ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: box at (%u, %u, %u) of %ux%ux%u is outside mip %u of image \"%s\" "
                  "(%ux%ux%u)",
                  what, rg->x, rg->y, rg->z, rg->width, rg->height, rg->depth, rg->mip, img->name,
                  mw, mh, md);
    b->mip = rg->mip;
    b->layer = rg->base_layer;
    b->layers = rg->layer_count ? rg->layer_count : img->layers - rg->base_layer;
    b->x = rg->x;
    b->y = rg->y;
    b->z = rg->z;
    b->w = rg->width ? rg->width : mw - rg->x;
    b->h = rg->height ? rg->height : mh - rg->y;
    b->d = rg->depth ? rg->depth : md - rg->z;
    return VKC_SUCCESS;
}

uint64_t vkc__box_bytes(const vkc_image *img, const vkc__box *b)
{
    return (uint64_t)b->w * b->h * b->d * b->layers * vkc__formats[img->format].texel_size;
}

uint64_t vkc_image_region_size(const vkc_image *img, const vkc_image_region *region)
{
    vkc__box b;
    if (!img || img->obj.magic != VKC_MAGIC_IMAGE ||
        vkc__resolve_region(img, region, "vkc_image_region_size", &b) < 0)
        return 0;
    return vkc__box_bytes(img, &b);
}

/* Blocking transfers need the image in vkc's hands at rest. */
static vkc_result vkc__check_at_rest(vkc_image *img, const char *what)
{
    VKC_RETURN_IF(img->foreign, img->obj.ctx, VKC_ERROR_INVALID_STATE,
                  "%s: image \"%s\" is owned by another queue family; transfer it in a sequence "
                  "between vkc_seq_acquire_image and vkc_seq_release_image",
                  what, img->name);
    VkImageUsageFlags need = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    VKC_RETURN_IF((img->vk_usage & need) != need, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: image \"%s\" was not created with TRANSFER_SRC and TRANSFER_DST usage", what,
                  img->name);
    return VKC_SUCCESS;
}

/* Copies between a staging half and the image, one per run of rows: the
 * flat rows [r0, r1) of the box (layer-major, then depth slice, then row). */
static vkc_result vkc__stage_submit(vkc_image *img, const vkc__box *b, vkc_buffer *st,
                                    uint64_t st_offset, uint64_t r0, uint64_t r1, bool download,
                                    uint64_t *out_value)
{
    vkc_context *ctx = img->obj.ctx;
    const uint64_t row = (uint64_t)b->w * vkc__formats[img->format].texel_size;
    uint64_t nreg = 0;
    for (uint64_t r = r0; r < r1; r += b->h - r % b->h)
        ++nreg;
    VkBufferImageCopy small[8], *reg = small;
    if (nreg > VKC_ARRAY_COUNT(small)) {
        reg = vkc__malloc(nreg * sizeof(*reg));
        VKC_RETURN_IF(!reg, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image copy regions");
    }
    uint32_t k = 0;
    for (uint64_t r = r0; r < r1; ++k) {
        uint64_t slice = r / b->h, y = r % b->h, n = VKC_MIN(b->h - y, r1 - r);
        uint32_t layer = (uint32_t)(slice / b->d), z = (uint32_t)(slice % b->d);
        reg[k] = (VkBufferImageCopy){0};
        reg[k].bufferOffset = st->offset + st_offset + (r - r0) * row;
        reg[k].imageSubresource =
            (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, b->mip, b->layer + layer, 1};
        reg[k].imageOffset = (VkOffset3D){(int32_t)b->x, (int32_t)(b->y + y), (int32_t)(b->z + z)};
        reg[k].imageExtent = (VkExtent3D){b->w, (uint32_t)n, 1};
        r += n;
    }
    vkc__cmd *cmd;
    vkc_result res = vkc__oneshot_begin(ctx, &cmd);
    if (res >= 0) {
        VkImageLayout xfer =
            download ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL : VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        VkImageMemoryBarrier2 tb =
            vkc__transition(img, img->resting, xfer, b->mip, 1, b->layer, b->layers);
        vkc__cmd_barrier2(ctx, cmd->cb, NULL, &tb, 1);
        if (download)
            ctx->vk.vkCmdCopyImageToBuffer(cmd->cb, img->image, xfer, st->buffer, k, reg);
        else
            ctx->vk.vkCmdCopyBufferToImage(cmd->cb, st->buffer, img->image, xfer, k, reg);
        tb = vkc__transition(img, xfer, img->resting, b->mip, 1, b->layer, b->layers);
        vkc__cmd_barrier2(ctx, cmd->cb, NULL, &tb, 1);
        res = vkc__oneshot_end_submit(ctx, cmd, VKC_WORK_STAGES, out_value);
    }
    if (reg != small)
        vkc__free(reg);
    return res;
}

/* Move a box between host memory and the image through the staging ring,
 * whole rows per chunk, each chunk into half i % 2 of the ring so that the
 * host copies one half while the GPU works on the other. */
static vkc_result vkc__image_transfer(vkc_image *img, const vkc__box *b, uint8_t *data,
                                      bool download)
{
    vkc_context *ctx = img->obj.ctx;
    const uint64_t half = VKC_STAGING_RING_SIZE / 2;
    const uint64_t row = (uint64_t)b->w * vkc__formats[img->format].texel_size;
    const uint64_t rows = (uint64_t)b->h * b->d * b->layers;
    const uint64_t per = half / row; /* >= 1: a row is at most 16 bytes * 64Ki texels */
    const uint64_t chunks = (rows + per - 1) / per;
    vkc_buffer *st;
    VKC_FORWARD(vkc__staging_take(ctx, download, &st));
    uint64_t value[2] = {0, 0};
    vkc_result r = VKC_SUCCESS;
    for (uint64_t i = 0; i <= chunks && r >= 0; ++i) {
        int h = (int)(i & 1);
        if (!download && i < chunks) {
            uint64_t r0 = i * per, r1 = VKC_MIN(rows, r0 + per);
            if (value[h])
                r = vkc__wait_value(ctx, value[h], UINT64_MAX, VKC_WAIT_DEFAULT);
            if (r < 0)
                break;
            memcpy((uint8_t *)st->mapped + h * half, data + r0 * row, (r1 - r0) * row);
            r = vkc__buffer_sync_mapping(ctx, st, h * half, (r1 - r0) * row, true);
            if (r >= 0)
                r = vkc__stage_submit(img, b, st, h * half, r0, r1, false, &value[h]);
        } else if (download) {
            if (i < chunks) {
                uint64_t r0 = i * per, r1 = VKC_MIN(rows, r0 + per);
                r = vkc__stage_submit(img, b, st, h * half, r0, r1, true, &value[h]);
                if (r < 0)
                    break;
            }
            if (i > 0) {
                int ph = (int)((i - 1) & 1);
                uint64_t r0 = (i - 1) * per, r1 = VKC_MIN(rows, r0 + per);
                r = vkc__wait_value(ctx, value[ph], UINT64_MAX, VKC_WAIT_DEFAULT);
                if (r >= 0)
                    r = vkc__buffer_sync_mapping(ctx, st, ph * half, (r1 - r0) * row, false);
                if (r >= 0)
                    memcpy(data + r0 * row, (uint8_t *)st->mapped + ph * half, (r1 - r0) * row);
            }
        }
    }
    /* Never leave the ring with a copy in flight, even after a failure. */
    vkc_result w = vkc__wait_value(ctx, VKC_MAX(value[0], value[1]), UINT64_MAX, VKC_WAIT_DEFAULT);
    vkc__staging_give(ctx, download);
    return r < 0 ? r : w;
}

static vkc_result vkc__image_io(vkc_image *img, const vkc_image_region *region, void *data,
                                uint64_t size, bool download, const char *what)
{
    vkc_context *ctx = img->obj.ctx;
    vkc__box b;
    VKC_FORWARD(vkc__resolve_region(img, region, what, &b));
    VKC_FORWARD(vkc__check_at_rest(img, what));
    uint64_t need = vkc__box_bytes(img, &b);
    VKC_RETURN_IF(size != need, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: size is %llu bytes but the region of image \"%s\" holds %llu (%ux%ux%u "
                  "texels x %u layer(s) of %u bytes, tightly packed)",
                  what, (unsigned long long)size, img->name, (unsigned long long)need, b.w, b.h,
                  b.d, b.layers, vkc__formats[img->format].texel_size);
    VKC_RETURN_IF(!data, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: data is NULL", what);
    /* Uploads and downloads are ordered after all earlier work by the
     * one-shot units' leading barrier; only the open immediate batch must
     * be submitted first. */
    VKC_FORWARD(vkc__flush_immediate(ctx));
    return vkc__image_transfer(img, &b, data, download);
}

vkc_result vkc_image_upload(vkc_image *img, const vkc_image_region *region, const void *data,
                            uint64_t size)
{
    VKC_CHECK_IMAGE(img, "vkc_image_upload");
    return vkc__image_io(img, region, (void *)(uintptr_t)data, size, false, "vkc_image_upload");
}

vkc_result vkc_image_download(vkc_image *img, const vkc_image_region *region, void *data,
                              uint64_t size)
{
    VKC_CHECK_IMAGE(img, "vkc_image_download");
    return vkc__image_io(img, region, data, size, true, "vkc_image_download");
}

vkc_result vkc__resolve_range(const vkc_image *img, const vkc_image_range *rg, const char *what,
                              VkImageSubresourceRange *out)
{
    static const vkc_image_range all;
    if (!rg)
        rg = &all;
    VKC_RETURN_IF(rg->base_mip >= img->mips || rg->mip_count > img->mips - rg->base_mip, img->obj.ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "%s: mips [%u, +%u) are out of range: image \"%s\" has %u mip level(s)", what,
                  rg->base_mip, rg->mip_count, img->name, img->mips);
    VKC_RETURN_IF(rg->base_layer >= img->layers || rg->layer_count > img->layers - rg->base_layer,
                  img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: layers [%u, +%u) are out of range: image \"%s\" has %u layer(s)", what,
                  rg->base_layer, rg->layer_count, img->name, img->layers);
    *out = (VkImageSubresourceRange){
        VK_IMAGE_ASPECT_COLOR_BIT, rg->base_mip,
        rg->mip_count ? rg->mip_count : img->mips - rg->base_mip, rg->base_layer,
        rg->layer_count ? rg->layer_count : img->layers - rg->base_layer};
    return VKC_SUCCESS;
}

vkc_result vkc__image_clear_value(const vkc_image *img, const vkc_clear_value *v,
                                  VkClearColorValue *out)
{
    VKC_RETURN_IF(!v, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "clear of image \"%s\": value is NULL",
                  img->name);
    memcpy(out, v, sizeof(*out));
    return VKC_SUCCESS;
}

vkc_result vkc_image_clear(vkc_image *img, const vkc_image_range *range,
                           const vkc_clear_value *value)
{
    VKC_CHECK_IMAGE(img, "vkc_image_clear");
    vkc_context *ctx = img->obj.ctx;
    VkImageSubresourceRange sr;
    VKC_FORWARD(vkc__resolve_range(img, range, "vkc_image_clear", &sr));
    VKC_FORWARD(vkc__check_at_rest(img, "vkc_image_clear"));
    VkClearColorValue cv;
    VKC_FORWARD(vkc__image_clear_value(img, value, &cv));
    VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    const VkImageLayout dst = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    VkImageMemoryBarrier2 tb = vkc__transition(img, img->resting, dst, sr.baseMipLevel,
                                               sr.levelCount, sr.baseArrayLayer, sr.layerCount);
    vkc__cmd_barrier2(ctx, cmd->cb, NULL, &tb, 1);
    ctx->vk.vkCmdClearColorImage(cmd->cb, img->image, dst, &cv, 1, &sr);
    tb = vkc__transition(img, dst, img->resting, sr.baseMipLevel, sr.levelCount, sr.baseArrayLayer,
                         sr.layerCount);
    vkc__cmd_barrier2(ctx, cmd->cb, NULL, &tb, 1);
    return vkc__oneshot_end_wait(ctx, cmd);
}

/* ---- samplers --------------------------------------------------------------------------- */

static VkSamplerAddressMode vkc__address(vkc_address_mode m)
{
    switch (m) {
    case VKC_ADDRESS_REPEAT:
        return VK_SAMPLER_ADDRESS_MODE_REPEAT;
    case VKC_ADDRESS_MIRRORED_REPEAT:
        return VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT;
    case VKC_ADDRESS_CLAMP_TO_BORDER:
        return VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER;
    default:
        return VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    }
}

static vkc_result vkc__sampler_make(vkc_context *ctx, vkc_sampler *s)
{
    const vkc_sampler_desc *d = &s->desc;
    VkSamplerCreateInfo ci = {VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    ci.magFilter = ci.minFilter =
        d->filter == VKC_FILTER_LINEAR ? VK_FILTER_LINEAR : VK_FILTER_NEAREST;
    ci.mipmapMode = d->mipmap_mode == VKC_FILTER_LINEAR ? VK_SAMPLER_MIPMAP_MODE_LINEAR
                                                        : VK_SAMPLER_MIPMAP_MODE_NEAREST;
    ci.addressModeU = vkc__address(d->address_u);
    ci.addressModeV = vkc__address(d->address_v);
    ci.addressModeW = vkc__address(d->address_w);
    ci.maxLod = d->unnormalized ? 0.0f : VK_LOD_CLAMP_NONE;
    ci.borderColor = VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK;
    ci.unnormalizedCoordinates = d->unnormalized;
    VkResult vr =
        VKC_VK(vkCreateSampler, ctx->vk.vkCreateSampler(ctx->device, &ci, ctx->alloc, &s->sampler));
    VKC_RETURN_IF_VK(ctx, vr, "vkCreateSampler");
    return VKC_SUCCESS;
}

vkc_result vkc_sampler_get(vkc_context *ctx, const vkc_sampler_desc *desc, vkc_sampler **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_sampler_get: out is NULL");
    vkc_sampler_desc d = {0};
    if (desc)
        d = *desc;
    VKC_RETURN_IF((unsigned)d.filter > VKC_FILTER_LINEAR ||
                      (unsigned)d.mipmap_mode > VKC_FILTER_LINEAR,
                  ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_sampler_get: unknown filter");
    VKC_RETURN_IF((unsigned)d.address_u > VKC_ADDRESS_CLAMP_TO_BORDER ||
                      (unsigned)d.address_v > VKC_ADDRESS_CLAMP_TO_BORDER ||
                      (unsigned)d.address_w > VKC_ADDRESS_CLAMP_TO_BORDER,
                  ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_sampler_get: unknown address mode");
    /* Resolve defaults so that equal samplers share one entry. */
    if (!d.filter)
        d.filter = VKC_FILTER_NEAREST;
    if (!d.mipmap_mode)
        d.mipmap_mode = VKC_FILTER_NEAREST;
    vkc_address_mode *am[3] = {&d.address_u, &d.address_v, &d.address_w};
    for (int i = 0; i < 3; ++i) {
        if (!*am[i])
            *am[i] = VKC_ADDRESS_CLAMP_TO_EDGE;
        VKC_RETURN_IF(d.unnormalized && *am[i] != VKC_ADDRESS_CLAMP_TO_EDGE &&
                          *am[i] != VKC_ADDRESS_CLAMP_TO_BORDER,
                      ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "vkc_sampler_get: unnormalized coordinates need CLAMP_TO_EDGE or "
                      "CLAMP_TO_BORDER addressing");
    }
    VKC_RETURN_IF(d.unnormalized && d.mipmap_mode != VKC_FILTER_NEAREST, ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_sampler_get: unnormalized coordinates need mipmap_mode NEAREST");
    vkc__image_state *is = vkc__is(ctx);
    pthread_mutex_lock(&is->lock);
    vkc_sampler *s = is->samplers;
    while (s && memcmp(&s->desc, &d, sizeof(d)))
        s = s->next;
    vkc_result r = VKC_SUCCESS;
    if (!s) {
        s = vkc__calloc(1, sizeof(*s));
        if (!s) {
            r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "sampler");
        } else {
            s->magic = VKC_MAGIC_SAMPLER;
            s->ctx = ctx;
            s->desc = d;
            r = vkc__sampler_make(ctx, s);
            if (r < 0) {
                vkc__free(s);
                s = NULL;
            } else {
                s->next = is->samplers;
                is->samplers = s;
                VKC_STAT_ADD(ctx, samplers, 1);
            }
        }
    }
    pthread_mutex_unlock(&is->lock);
    if (r >= 0)
        *out = s;
    return r;
}

vkc_result vkc_sampler_vk(const vkc_sampler *sampler, VkSampler *out)
{
    if (out)
        *out = VK_NULL_HANDLE;
    if (!sampler || sampler->magic != VKC_MAGIC_SAMPLER)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "vkc_sampler_vk: invalid handle");
    VKC_RETURN_IF(!out, sampler->ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_sampler_vk: out is NULL");
    *out = sampler->sampler;
    return VKC_SUCCESS;
}

/* ---- module hooks ------------------------------------------------------------------------ */

vkc_result vkc__image_init(vkc_context *ctx)
{
    if (ctx->image_state)
        return VKC_SUCCESS;
    vkc__image_state *is = vkc__calloc(1, sizeof(*is));
    VKC_RETURN_IF(!is, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image module state");
    pthread_mutex_init(&is->lock, NULL);
    ctx->image_state = is;
    return VKC_SUCCESS;
}

void vkc__image_drop(vkc_context *ctx)
{
    for (vkc__node *n = ctx->images.next, *next; n && n != &ctx->images; n = next) {
        next = n->next; /* a destroy frees this one at most */
        vkc_image_destroy((vkc_image *)VKC_OBJ_OF(n));
    }
}

static void vkc__samplers_vk_free(vkc_context *ctx)
{
    for (vkc_sampler *s = vkc__is(ctx)->samplers; s; s = s->next) {
        if (s->sampler)
            ctx->vk.vkDestroySampler(ctx->device, s->sampler, ctx->alloc);
        s->sampler = VK_NULL_HANDLE;
    }
}

void vkc__image_finish(vkc_context *ctx)
{
    vkc__image_state *is = vkc__is(ctx);
    if (!is)
        return;
    vkc__samplers_vk_free(ctx);
    while (is->samplers) {
        vkc_sampler *s = is->samplers;
        is->samplers = s->next;
        s->magic = 0;
        vkc__free(s);
        VKC_STAT_SUB(ctx, samplers, 1);
    }
    pthread_mutex_destroy(&is->lock);
    vkc__free(is);
    ctx->image_state = NULL;
}

vkc_result vkc__image_lose(vkc_context *ctx)
{
    /* Images keep their structs (names, shapes) and give up their Vulkan
     * objects; a wrapped image's VkImage died with the host's device. */
    for (vkc__node *n = ctx->images.next; n != &ctx->images; n = n->next) {
        vkc_image *img = (vkc_image *)VKC_OBJ_OF(n);
        vkc__image_vk_free(img);
        if (img->wrapped) {
            img->dead = true;
            img->image = VK_NULL_HANDLE;
        }
    }
    vkc__samplers_vk_free(ctx);
    return VKC_SUCCESS;
}

vkc_result vkc__image_rebuild(vkc_context *ctx)
{
    for (vkc_sampler *s = vkc__is(ctx)->samplers; s; s = s->next)
        VKC_FORWARD(vkc__sampler_make(ctx, s));
    for (vkc__node *n = ctx->images.next; n != &ctx->images; n = n->next) {
        vkc_image *img = (vkc_image *)VKC_OBJ_OF(n);
        if (img->wrapped)
            continue;
        /* A new uid tells sequences the image was replaced. */
        img->uid = atomic_fetch_add(&vkc__is(ctx)->next_uid, 1) + 1;
        VKC_FORWARD(vkc__image_make(img, false));
    }
    return VKC_SUCCESS;
}
