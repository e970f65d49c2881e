/* Images and samplers: their formats, memory, views and module row; the
 * blocking transfers and one-shot transitions are in image_transfer.c.
 *
 * Owns vkc_image and vkc_sampler. Sits at the memory layer: it may call the
 * context, memory and pool modules and image_transfer.c
 * (vkc__oneshot_transition), never dispatch. */
#include "vkc_internal.h"

#include <math.h>
#include <stdio.h>

const vkc__format_row vkc__formats[VKC_FORMAT_COUNT_] = {
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
    [VKC_FORMAT_BGRA8_UNORM] = {"BGRA8_UNORM", VK_FORMAT_B8G8R8A8_UNORM, 4},
    [VKC_FORMAT_BGRA8_SRGB] = {"BGRA8_SRGB", VK_FORMAT_B8G8R8A8_SRGB, 4},
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

vkc_result vkc_format_support_get(vkc_context *ctx, vkc_format format, vkc_format_support *out)
{
    if (out)
        memset(out, 0, sizeof(*out));
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_format_support_get: out is NULL");
    VKC_RETURN_IF((unsigned)format >= VKC_FORMAT_COUNT_, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_format_support_get: unknown format %d", (int)format);
    const VkFormatFeatureFlags have = vkc__format_features(ctx, vkc__formats[format].vk);
    const VkFormatFeatureFlags transfer = vkc__usage_features(0);
    if ((have & transfer) != transfer)
        return VKC_SUCCESS; /* no image of it can be made: nothing else matters */
    for (uint32_t bit = 1; bit <= VKC_IMAGE_USAGE_COLOR_ATTACHMENT; bit <<= 1)
        if ((have & vkc__usage_features(bit)) == vkc__usage_features(bit))
            out->usage |= bit;
    out->linear_filter = (out->usage & VKC_IMAGE_USAGE_SAMPLED) &&
                         (have & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT);
    return VKC_SUCCESS;
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
    /* Recorded uses keep layer ranges in 16 bits (seq.h, vkc__use); no
     * device reports more than 2,048 layers. */
    VKC_RETURN_IF(out->layers > UINT16_MAX, ctx, VKC_ERROR_LIMIT,
                  "%s: %u layers exceed vkc's limit of %u", what, out->layers, UINT16_MAX);
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

/* ---- creation ---------------------------------------------------------------------- */

static void vkc__image_obj_free(vkc__obj *o);

static vkc_image *vkc__image_alloc(vkc_context *ctx, const vkc__shape *sh, const char *name)
{
    vkc_image *img = vkc__calloc(1, sizeof(*img));
    if (!img)
        return NULL;
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
    /* Listed and counted from the start: a failed creation lets go like a
     * destroy, after the one-shot work that names it (its transition). */
    vkc__obj_init(&img->obj, VKC_MAGIC_IMAGE, ctx, img->name, vkc__image_obj_free, &ctx->images);
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
    VKC_STAT_ADD(img->obj.ctx, images, 1);
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
        /* The transition may have been submitted and its wait failed: its
         * unit holds the image until it retires. */
        vkc__obj_kill(&img->obj, VKC_MAGIC_IMAGE);
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
            vkc__obj_kill(&img->obj, VKC_MAGIC_IMAGE);
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
    VKC_RETURN_IF(!out, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_image_info_get: out is NULL");
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
    VKC_RETURN_IF(!out_image, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_image_vk: out is NULL");
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
    ci.minLod = d->min_lod;
    ci.maxLod = d->unnormalized ? 0.0f : d->max_lod ? d->max_lod : VK_LOD_CLAMP_NONE;
    ci.mipLodBias = d->mip_lod_bias;
    ci.borderColor = VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK;
    ci.unnormalizedCoordinates = d->unnormalized;
    VkResult vr =
        VKC_VK(vkCreateSampler, ctx->vk.vkCreateSampler(ctx->device, &ci, ctx->alloc, &s->sampler));
    VKC_RETURN_IF_VK(ctx, vr, "vkCreateSampler");
    return VKC_SUCCESS;
}

/* The LOD fields against VkSamplerCreateInfo's rules (maxLod >= minLod;
 * minLod = maxLod = 0 with unnormalized coordinates; |mipLodBias| <=
 * maxSamplerLodBias), checked here so that the caller gets a message, not
 * a validation error. */
static vkc_result vkc__check_lod(vkc_context *ctx, const vkc_sampler_desc *d)
{
    VKC_RETURN_IF(!isfinite(d->min_lod) || !isfinite(d->max_lod) || !isfinite(d->mip_lod_bias), ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_sampler_get: min_lod, max_lod and mip_lod_bias must be finite");
    VKC_RETURN_IF(d->min_lod < 0 || d->max_lod < 0 || (d->max_lod && d->min_lod > d->max_lod), ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_sampler_get: needs 0 <= min_lod <= max_lod (got %g, %g; max_lod 0 = no "
                  "clamp)",
                  (double)d->min_lod, (double)d->max_lod);
    VKC_RETURN_IF(d->unnormalized && (d->min_lod || d->max_lod), ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_sampler_get: unnormalized coordinates need min_lod and max_lod 0");
    if (d->mip_lod_bias) {
        VkPhysicalDeviceProperties props;
        ctx->vki.vkGetPhysicalDeviceProperties(ctx->phys, &props);
        VKC_RETURN_IF(fabsf(d->mip_lod_bias) > props.limits.maxSamplerLodBias, ctx, VKC_ERROR_LIMIT,
                      "vkc_sampler_get: mip_lod_bias %g exceeds the device's maxSamplerLodBias %g",
                      (double)d->mip_lod_bias, (double)props.limits.maxSamplerLodBias);
    }
    return VKC_SUCCESS;
}

vkc_result vkc_sampler_get(vkc_context *ctx, const vkc_sampler_desc *desc, vkc_sampler **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_sampler_get: out is NULL");
    /* Field by field into a zeroed desc: the cache compares whole descs,
     * padding included. */
    vkc_sampler_desc d;
    memset(&d, 0, sizeof(d));
    if (desc) {
        d.filter = desc->filter;
        d.mipmap_mode = desc->mipmap_mode;
        d.address_u = desc->address_u;
        d.address_v = desc->address_v;
        d.address_w = desc->address_w;
        d.unnormalized = desc->unnormalized;
        /* + 0.0f: -0 and 0 are one sampler */
        d.min_lod = desc->min_lod + 0.0f;
        d.max_lod = desc->max_lod + 0.0f;
        d.mip_lod_bias = desc->mip_lod_bias + 0.0f;
    }
    VKC_FORWARD(vkc__check_lod(ctx, &d));
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
