/* Images and samplers: their memory, views, layouts and transfers.
 *
 * Owns vkc_image and vkc_sampler. Sits at the memory layer: it may call the
 * context, memory and pool modules, never dispatch (blocking calls reach
 * queued immediate work through ctx->flush_immediate). */
#include "vkc_internal.h"

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

/* Stubs of the first API commit: replaced step by step. */
#define VKC__NOT_YET(ctx) VKC_FAIL((ctx), VKC_ERROR_UNSUPPORTED, "images: not implemented yet")

vkc_result vkc_image_create(vkc_context *ctx, const vkc_image_desc *desc, vkc_image **out)
{
    (void)desc;
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    return VKC__NOT_YET(ctx);
}

void vkc_image_destroy(vkc_image *img)
{
    (void)img;
}

vkc_result vkc_image_info_get(const vkc_image *img, vkc_image_info *out)
{
    (void)img;
    (void)out;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_image_vk(const vkc_image *img, VkImage *out_image)
{
    (void)img;
    if (out_image)
        *out_image = VK_NULL_HANDLE;
    return VKC__NOT_YET(NULL);
}

uint64_t vkc_image_region_size(const vkc_image *img, const vkc_image_region *region)
{
    (void)img;
    (void)region;
    return 0;
}

vkc_result vkc_image_upload(vkc_image *img, const vkc_image_region *region, const void *data,
                            uint64_t size)
{
    (void)img, (void)region, (void)data, (void)size;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_image_download(vkc_image *img, const vkc_image_region *region, void *data,
                              uint64_t size)
{
    (void)img, (void)region, (void)data, (void)size;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_image_clear(vkc_image *img, const vkc_image_range *range,
                           const vkc_clear_value *value)
{
    (void)img, (void)range, (void)value;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_seq_copy_image(vkc_seq *seq, vkc_image *dst, const vkc_image_region *dst_region,
                              vkc_image *src, const vkc_image_region *src_region)
{
    (void)seq, (void)dst, (void)dst_region, (void)src, (void)src_region;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_seq_copy_buffer_to_image(vkc_seq *seq, vkc_image *dst,
                                        const vkc_image_region *region, vkc_buffer *src,
                                        uint64_t src_offset)
{
    (void)seq, (void)dst, (void)region, (void)src, (void)src_offset;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_seq_copy_image_to_buffer(vkc_seq *seq, vkc_buffer *dst, uint64_t dst_offset,
                                        vkc_image *src, const vkc_image_region *region)
{
    (void)seq, (void)dst, (void)dst_offset, (void)src, (void)region;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_seq_clear_image(vkc_seq *seq, vkc_image *img, const vkc_image_range *range,
                               const vkc_clear_value *value)
{
    (void)seq, (void)img, (void)range, (void)value;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_sampler_get(vkc_context *ctx, const vkc_sampler_desc *desc, vkc_sampler **out)
{
    (void)desc;
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    return VKC__NOT_YET(ctx);
}

vkc_result vkc_sampler_vk(const vkc_sampler *sampler, VkSampler *out)
{
    (void)sampler;
    if (out)
        *out = VK_NULL_HANDLE;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_image_wrap(vkc_context *ctx, const vkc_image_wrap_desc *desc, vkc_image **out)
{
    (void)desc;
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    return VKC__NOT_YET(ctx);
}

vkc_result vkc_seq_acquire_image(vkc_seq *seq, vkc_image *img, uint32_t src_family,
                                 VkImageLayout layout)
{
    (void)seq, (void)img, (void)src_family, (void)layout;
    return VKC__NOT_YET(NULL);
}

vkc_result vkc_seq_release_image(vkc_seq *seq, vkc_image *img, uint32_t dst_family,
                                 VkImageLayout final_layout)
{
    (void)seq, (void)img, (void)dst_family, (void)final_layout;
    return VKC__NOT_YET(NULL);
}
