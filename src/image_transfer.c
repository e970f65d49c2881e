/* Image transfers: regions and ranges resolved against an image, the
 * blocking upload, download and clear through memory's staging buffers, and
 * the one-shot whole-image layout transitions (creation, wrapping, recovery).
 *
 * Owns no state of its own (image.c owns vkc_image). Sits at the memory
 * layer: it may call the context, memory (staging, mapping sync), pool (the
 * one-shot units, barriers) and wait modules, never dispatch (blocking calls
 * reach queued immediate work through ctx->flush_immediate). */
#include "vkc_internal.h"

static uint32_t vkc__mip_extent(uint32_t v, uint32_t mip)
{
    v >>= mip;
    return v ? v : 1;
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
vkc_result vkc__oneshot_transition(vkc_image *img, VkImageLayout from, VkImageLayout to, bool flush)
{
    vkc_context *ctx = img->obj.ctx;
    if (flush)
        VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    vkc__oneshot_hold(cmd, &img->obj);
    VkImageMemoryBarrier2 b = vkc__transition(img, from, to, 0, img->mips, 0, img->layers);
    vkc__cmd_barrier2(ctx, cmd->cb, NULL, &b, 1);
    return vkc__oneshot_end_wait(ctx, cmd);
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
    vkc__box b = {0};
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
        vkc__oneshot_hold(cmd, &img->obj);
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
    VKC_FORWARD_DONE(vkc__staging_take(ctx, download, &st));
    uint64_t value[2] = {0, 0};
    vkc_result r = VKC_SUCCESS;
    /* Every wait is bounded (wait_timeout_ns): VKC_TIMEOUT ends the loop. */
    for (uint64_t i = 0; i <= chunks && r == VKC_SUCCESS; ++i) {
        int h = (int)(i & 1);
        if (!download && i < chunks) {
            uint64_t r0 = i * per, r1 = VKC_MIN(rows, r0 + per);
            if (value[h])
                r = vkc__wait_bounded(ctx, value[h], "image transfer");
            if (r != VKC_SUCCESS)
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
                r = vkc__wait_bounded(ctx, value[ph], "image transfer");
                if (r == VKC_SUCCESS)
                    r = vkc__buffer_sync_mapping(ctx, st, ph * half, (r1 - r0) * row, false);
                if (r == VKC_SUCCESS)
                    memcpy(data + r0 * row, (uint8_t *)st->mapped + ph * half, (r1 - r0) * row);
            }
        }
    }
    /* Never reuse the ring under a copy in flight, even after a failure: a
     * wait that timed out leaves the ring busy for the next transfer. */
    const uint64_t last = VKC_MAX(value[0], value[1]);
    vkc_result w = r == VKC_TIMEOUT ? r : vkc__wait_bounded(ctx, last, "image transfer");
    vkc__staging_give(ctx, download, w == VKC_SUCCESS ? 0 : last);
    return r != VKC_SUCCESS ? r : w;
}

static vkc_result vkc__image_io(vkc_image *img, const vkc_image_region *region, void *data,
                                uint64_t size, bool download, const char *what)
{
    vkc_context *ctx = img->obj.ctx;
    vkc__box b = {0};
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
    VKC_RETURN_IF(rg->base_mip >= img->mips || rg->mip_count > img->mips - rg->base_mip,
                  img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
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
    VKC_RETURN_IF(!v, img->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "clear of image \"%s\": value is NULL", img->name);
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
    vkc__oneshot_hold(cmd, &img->obj);
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
