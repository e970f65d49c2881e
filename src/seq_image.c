/* The recorded image operations of sequences: copies between images and
 * buffers, clears, and the queue-family ownership halves of images.
 *
 * Each appends its uses (image subresource ranges with the layout the
 * operation needs) through vkc__append, so hazards and layout transitions
 * come from hazard.c like those of dispatches; record.c emits them.
 *
 * Owns nothing. Calls: hazard.c, image.c (regions, ranges). */
#include "seq.h"

static vkc_result vkc__seq_check_image(vkc_seq *s, const vkc_image *img, const char *what)
{
    if (!vkc__obj_is(img, VKC_MAGIC_IMAGE))
        return vkc__latch(s, vkc__obj_check(s->obj.ctx, img, VKC_MAGIC_IMAGE, what));
    if (img->obj.ctx != s->obj.ctx)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_HANDLE, "%s: image belongs to another context",
                            what);
    if (img->dead)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_HANDLE,
                            "%s: image \"%s\" wrapped a VkImage of a lost device", what, img->name);
    return VKC_SUCCESS;
}

static vkc_result vkc__seq_check_transfer(vkc_seq *s, const vkc_image *img, bool src,
                                          const char *what)
{
    VkImageUsageFlags need =
        src ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    if (!(img->vk_usage & need))
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "%s: image \"%s\" was not created with %s usage", what, img->name,
                            src ? "TRANSFER_SRC" : "TRANSFER_DST");
    return VKC_SUCCESS;
}

/* The use of a box (one mip, its layers) in a layout. */
static vkc__use vkc__box_use(vkc_image *img, const vkc__box *b, VkImageLayout layout,
                             uint32_t access)
{
    return (vkc__use){.image = img,
                      .layout = layout,
                      .access = access,
                      .mip = b->mip,
                      .mips = 1,
                      .layer = b->layer,
                      .layers = b->layers};
}

static vkc_result vkc__push_aux(vkc_seq *s, const vkc__aux *a, uint32_t *index)
{
    if (!vkc__grow((void **)&s->aux, &s->aux_cap, s->aux_count + 1, sizeof(*a)))
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "image regions");
    *index = s->aux_count;
    s->aux[s->aux_count++] = *a;
    return VKC_SUCCESS;
}

/* Append a command of kind with uses u[0..n) and its region. */
static vkc_result vkc__append_image_op(vkc_seq *s, uint8_t kind, const vkc__use *u, uint32_t n,
                                       const vkc__aux *aux, const char *label)
{
    vkc__command c = {.kind = kind, .label = label};
    VKC_FORWARD(vkc__push_aux(s, aux, &c.value));
    vkc_result r = vkc__append_uses(s, &c, u, n);
    if (r < 0)
        s->aux_count--;
    return r;
}

static VkImageSubresourceLayers vkc__layers_of(const vkc__box *b)
{
    return (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, b->mip, b->layer, b->layers};
}

static VkOffset3D vkc__offset_of(const vkc__box *b)
{
    return (VkOffset3D){(int32_t)b->x, (int32_t)b->y, (int32_t)b->z};
}

vkc_result vkc_seq_copy_image(vkc_seq *s, vkc_image *dst, const vkc_image_region *dst_region,
                              vkc_image *src, const vkc_image_region *src_region)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_copy_image"));
    VKC_FORWARD(vkc__seq_check_image(s, dst, "copy_image dst"));
    VKC_FORWARD(vkc__seq_check_image(s, src, "copy_image src"));
    VKC_FORWARD(vkc__seq_check_transfer(s, dst, false, "copy_image dst"));
    VKC_FORWARD(vkc__seq_check_transfer(s, src, true, "copy_image src"));
    vkc__box sb, db;
    VKC_FORWARD(vkc__latch(s, vkc__resolve_region(src, src_region, "copy_image src", &sb)));
    /* The destination box takes the source's size at its own offset. */
    vkc_image_region dr = dst_region ? *dst_region : (vkc_image_region){0};
    if ((dr.width && dr.width != sb.w) || (dr.height && dr.height != sb.h) ||
        (dr.depth && dr.depth != sb.d) || (dr.layer_count && dr.layer_count != sb.layers))
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "copy_image: the destination box (%ux%ux%u, %u layers) differs from "
                            "the source's (%ux%ux%u, %u layers)",
                            dr.width, dr.height, dr.depth, dr.layer_count, sb.w, sb.h, sb.d,
                            sb.layers);
    dr.width = sb.w;
    dr.height = sb.h;
    dr.depth = sb.d;
    dr.layer_count = sb.layers;
    VKC_FORWARD(vkc__latch(s, vkc__resolve_region(dst, &dr, "copy_image dst", &db)));
    if (vkc_format_texel_size(dst->format) != vkc_format_texel_size(src->format))
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "copy_image: %s and %s texels differ in size",
                            vkc_format_name(src->format), vkc_format_name(dst->format));
    VkImageLayout sl = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                  dl = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    if (src == dst && sb.mip == db.mip && vkc__overlap(sb.layer, sb.layers, db.layer, db.layers)) {
        if (vkc__overlap(sb.x, sb.w, db.x, db.w) && vkc__overlap(sb.y, sb.h, db.y, db.h) &&
            vkc__overlap(sb.z, sb.d, db.z, db.d))
            return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                                "copy_image: source and destination boxes overlap in image "
                                "\"%s\"",
                                src->name);
        sl = dl = VK_IMAGE_LAYOUT_GENERAL; /* one subresource, both ends */
    }
    vkc__use u[2] = {vkc__box_use(src, &sb, sl, VKC_ACC_R), vkc__box_use(dst, &db, dl, VKC_ACC_W)};
    vkc__aux a = {.image = {.srcSubresource = vkc__layers_of(&sb),
                            .srcOffset = vkc__offset_of(&sb),
                            .dstSubresource = vkc__layers_of(&db),
                            .dstOffset = vkc__offset_of(&db),
                            .extent = {sb.w, sb.h, sb.d}}};
    return vkc__append_image_op(s, VKC_CMD_COPY_IMAGE, u, 2, &a, "vkc copy image");
}

/* Copies between a buffer and an image share their checks. */
static vkc_result vkc__seq_buffer_image(vkc_seq *s, vkc_image *img, const vkc_image_region *region,
                                        vkc_buffer *buf, uint64_t offset, bool to_image)
{
    const char *what = to_image ? "copy_buffer_to_image" : "copy_image_to_buffer";
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, what));
    VKC_FORWARD(vkc__seq_check_image(s, img, what));
    VKC_FORWARD(vkc__seq_check_buffer(s, buf, what));
    VKC_FORWARD(vkc__seq_check_transfer(s, img, !to_image, what));
    vkc__box b;
    VKC_FORWARD(vkc__latch(s, vkc__resolve_region(img, region, what, &b)));
    uint64_t bytes = vkc__box_bytes(img, &b);
    VKC_FORWARD(vkc__seq_check_range(s, buf, offset, bytes, what));
    uint32_t ts = vkc_format_texel_size(img->format);
    if ((buf->offset + offset) % ts || (buf->offset + offset) % 4)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "%s: buffer offset %llu is not a multiple of 4 and of the texel size "
                            "(%u)",
                            what, (unsigned long long)offset, ts);
    vkc__use u[2] = {
        {.buffer = buf,
         .vk = buf->buffer,
         .offset = buf->offset + offset,
         .size = bytes,
         .access = to_image ? VKC_ACC_R : VKC_ACC_W},
        vkc__box_use(img, &b,
                     to_image ? VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
                              : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                     to_image ? VKC_ACC_W : VKC_ACC_R),
    };
    vkc__aux a = {.buffer = {.bufferOffset = buf->offset + offset,
                             .imageSubresource = vkc__layers_of(&b),
                             .imageOffset = vkc__offset_of(&b),
                             .imageExtent = {b.w, b.h, b.d}}};
    return vkc__append_image_op(
        s, to_image ? VKC_CMD_COPY_BUFFER_TO_IMAGE : VKC_CMD_COPY_IMAGE_TO_BUFFER, u, 2, &a,
        to_image ? "vkc copy buffer to image" : "vkc copy image to buffer");
}

vkc_result vkc_seq_copy_buffer_to_image(vkc_seq *s, vkc_image *dst, const vkc_image_region *region,
                                        vkc_buffer *src, uint64_t src_offset)
{
    return vkc__seq_buffer_image(s, dst, region, src, src_offset, true);
}

vkc_result vkc_seq_copy_image_to_buffer(vkc_seq *s, vkc_buffer *dst, uint64_t dst_offset,
                                        vkc_image *src, const vkc_image_region *region)
{
    return vkc__seq_buffer_image(s, src, region, dst, dst_offset, false);
}

vkc_result vkc_seq_clear_image(vkc_seq *s, vkc_image *img, const vkc_image_range *range,
                               const vkc_clear_value *value)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_clear_image"));
    VKC_FORWARD(vkc__seq_check_image(s, img, "clear_image"));
    VKC_FORWARD(vkc__seq_check_transfer(s, img, false, "clear_image"));
    vkc__aux a;
    VKC_FORWARD(vkc__latch(s, vkc__resolve_range(img, range, "clear_image", &a.clear.range)));
    VKC_FORWARD(vkc__latch(s, vkc__image_clear_value(img, value, &a.clear.value)));
    const VkImageSubresourceRange *r = &a.clear.range;
    vkc__use u = {.image = img,
                  .layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  .access = VKC_ACC_W,
                  .mip = r->baseMipLevel,
                  .mips = r->levelCount,
                  .layer = r->baseArrayLayer,
                  .layers = r->layerCount};
    return vkc__append_image_op(s, VKC_CMD_CLEAR_IMAGE, &u, 1, &a, "vkc clear image");
}

static vkc_result vkc__seq_image_ownership(vkc_seq *s, vkc_image *img, uint32_t family,
                                           VkImageLayout layout, bool acquire)
{
    const char *what = acquire ? "acquire_image" : "release_image";
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(
        vkc__check_recording(s, acquire ? "vkc_seq_acquire_image" : "vkc_seq_release_image"));
    VKC_FORWARD(vkc__seq_check_image(s, img, what));
    VKC_FORWARD(vkc__seq_check_family(s, family, what));
    if (layout == VK_IMAGE_LAYOUT_PREINITIALIZED ||
        (!acquire && layout == VK_IMAGE_LAYOUT_UNDEFINED))
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT, "%s: layout %d cannot be named here",
                            what, (int)layout);
    /* A write of every subresource: ordered after every earlier use
     * (release) and before every later one (acquire). */
    vkc__use u = {.image = img,
                  .layout = layout,
                  .access = VKC_ACC_W,
                  .mips = img->mips,
                  .layers = img->layers,
                  .op = acquire ? VKC__USE_ACQUIRE : VKC__USE_RELEASE};
    vkc__command c = {.kind = acquire ? VKC_CMD_ACQUIRE_IMAGE : VKC_CMD_RELEASE_IMAGE,
                      .value = family,
                      .label = acquire ? "vkc acquire image" : "vkc release image"};
    return vkc__append_uses(s, &c, &u, 1);
}

vkc_result vkc_seq_acquire_image(vkc_seq *s, vkc_image *img, uint32_t src_family,
                                 VkImageLayout layout)
{
    return vkc__seq_image_ownership(s, img, src_family, layout, true);
}

vkc_result vkc_seq_release_image(vkc_seq *s, vkc_image *img, uint32_t dst_family,
                                 VkImageLayout final_layout)
{
    return vkc__seq_image_ownership(s, img, dst_family, final_layout, false);
}
