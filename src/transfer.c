/* Blocking transfers: vkc_buffer_upload/download/fill/copy, mapping
 * flushes, and the staging buffers.
 *
 * Host-visible memory is written through its persistent mapping;
 * device-local memory the host cannot see, and reads of more than
 * VKC_UNCACHED_READ_MAX from a mapping the CPU does not cache (BAR), go
 * through one staging buffer per direction, created on first use and
 * reused, split in two halves so that the host copies one chunk while the
 * GPU copies the other.
 *
 * Owns: the staging buffers' use. Calls: memory.c (vkc__buffer_new), pool
 * (one-shot units, waits, vkc__drain), context; work queued in immediate
 * mode is flushed through the context's flush_immediate hook, never by
 * calling dispatch. */
#include "memory.h"

#define VKC_CHECK_BUFFER(buf, what)                                                                \
    do {                                                                                           \
        if (VKC_UNLIKELY(!vkc__obj_is((buf), VKC_MAGIC_BUFFER)))                                   \
            return vkc__obj_check(NULL, (buf), VKC_MAGIC_BUFFER, (what));                          \
        VKC_CHECK_CONTEXT((buf)->obj.ctx);                                                         \
    } while (0)

/* [offset, offset + size) inside the buffer, without overflow. */
static vkc_result vkc__check_range(vkc_buffer *buf, uint64_t offset, uint64_t size,
                                   const char *what)
{
    VKC_RETURN_IF(offset > buf->size || size > buf->size - offset, buf->obj.ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "%s: range [offset %llu, size %llu] is outside buffer \"%s\" of %llu bytes", what,
                  (unsigned long long)offset, (unsigned long long)size, buf->name,
                  (unsigned long long)buf->size);
    return VKC_SUCCESS;
}

/* Non-coherent mappings: flush (host wrote) or invalidate (host will read)
 * the atoms that cover a range of the buffer. */
static vkc_result vkc__sync_mapping(vkc_context *ctx, vkc_buffer *buf, uint64_t offset,
                                    uint64_t size, bool flush)
{
    if (buf->host_coherent || !size)
        return VKC_SUCCESS;
    vkc__memory_state *ms = vkc__ms(ctx);
    vkc__block *b = buf->block;
    VkDeviceSize start = vkc__align_down(buf->block_offset + offset, ms->atom);
    VkDeviceSize end = vkc__align_up(buf->block_offset + offset + size, ms->atom);
    VkMappedMemoryRange mr = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    mr.memory = b->memory;
    mr.offset = start;
    mr.size = end >= b->size ? VK_WHOLE_SIZE : end - start;
    VkResult vr = flush ? VKC_VK(vkFlushMappedMemoryRanges,
                                 ctx->vk.vkFlushMappedMemoryRanges(ctx->device, 1, &mr))
                        : VKC_VK(vkInvalidateMappedMemoryRanges,
                                 ctx->vk.vkInvalidateMappedMemoryRanges(ctx->device, 1, &mr));
    VKC_RETURN_IF_VK(ctx, vr,
                     flush ? "vkFlushMappedMemoryRanges" : "vkInvalidateMappedMemoryRanges");
    return VKC_SUCCESS;
}

/* ---- staging ------------------------------------------------------------------- */

/* Take the staging buffer of one direction (created on first use); returns
 * with its lock held on VKC_SUCCESS only. A copy an earlier transfer left
 * in flight when its wait timed out is waited for first, bounded: this
 * transfer then returns VKC_TIMEOUT without touching the ring. */
static vkc_result vkc__staging_acquire(vkc_context *ctx, int dir, vkc_buffer **out)
{
    vkc__memory_state *ms = vkc__ms(ctx);
    vkc__staging *s = &ms->staging[dir];
    pthread_mutex_lock(&s->lock);
    if (s->busy) {
        vkc_result r = vkc__wait_bounded(ctx, s->busy, "staged transfer (an earlier one's copy)");
        if (r != VKC_SUCCESS) {
            pthread_mutex_unlock(&s->lock);
            return r;
        }
        s->busy = 0;
    }
    if (!s->buf) {
        vkc_result r = vkc__buffer_new(
            ctx, VKC_STAGING_RING_SIZE, dir == VKC__UP ? VKC_MEMORY_UPLOAD : VKC_MEMORY_READBACK,
            dir == VKC__UP ? "vkc staging (upload)" : "vkc staging (download)", false, &s->buf);
        if (r < 0) {
            pthread_mutex_unlock(&s->lock);
            return r;
        }
        VKC_STAT_ADD(ctx, staging_blocks, 1);
    }
    *out = s->buf;
    return VKC_SUCCESS;
}

/* busy: the last copy's value when the transfer's wait for it did not
 * succeed (0 when it completed). */
static void vkc__staging_release(vkc_context *ctx, int dir, uint64_t busy)
{
    vkc__staging *s = &vkc__ms(ctx)->staging[dir];
    s->busy = busy;
    pthread_mutex_unlock(&s->lock);
}

vkc_result vkc__staging_take(vkc_context *ctx, int download, vkc_buffer **out)
{
    return vkc__staging_acquire(ctx, download ? VKC__DOWN : VKC__UP, out);
}

void vkc__staging_give(vkc_context *ctx, int download, uint64_t busy)
{
    vkc__staging_release(ctx, download ? VKC__DOWN : VKC__UP, busy);
}

vkc_result vkc__buffer_sync_mapping(vkc_context *ctx, vkc_buffer *buf, uint64_t offset,
                                    uint64_t size, bool flush)
{
    return vkc__sync_mapping(ctx, buf, offset, size, flush);
}

/* Record one copy in a one-shot unit and submit it without waiting; the
 * unit goes back to the pool and is recycled once it completed. */
static vkc_result vkc__copy_submit(vkc_context *ctx, VkBuffer dst, VkDeviceSize dst_offset,
                                   VkBuffer src, VkDeviceSize src_offset, VkDeviceSize size,
                                   vkc_buffer *user, uint64_t *out_value)
{
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    VkBufferCopy region = {src_offset, dst_offset, size};
    ctx->vk.vkCmdCopyBuffer(cmd->cb, src, dst, 1, &region);
    vkc__oneshot_hold(cmd, &user->obj);
    return vkc__oneshot_end_submit(ctx, cmd, VK_PIPELINE_STAGE_2_TRANSFER_BIT, out_value);
}

/* Upload through the staging ring: chunk i goes to half i % 2; the host
 * fills one half while the GPU copies out of the other. */
static vkc_result vkc__upload_staged(vkc_context *ctx, vkc_buffer *buf, uint64_t offset,
                                     const uint8_t *data, uint64_t size)
{
    vkc_buffer *st;
    VKC_FORWARD_DONE(vkc__staging_acquire(ctx, VKC__UP, &st));
    const uint64_t half = VKC_STAGING_RING_SIZE / 2;
    uint64_t value[2] = {0, 0};
    vkc_result r = VKC_SUCCESS;
    for (uint64_t done = 0, i = 0; done < size && r >= 0; done += half, ++i) {
        uint64_t n = VKC_MIN(half, size - done);
        int h = (int)(i & 1);
        if (value[h]) {
            r = vkc__wait_bounded(ctx, value[h], "staged transfer");
            if (r != VKC_SUCCESS)
                break;
        }
        memcpy((uint8_t *)st->mapped + h * half, data + done, n);
        r = vkc__sync_mapping(ctx, st, h * half, n, true);
        if (r >= 0)
            r = vkc__copy_submit(ctx, buf->buffer, buf->offset + offset + done, st->buffer,
                                 st->offset + h * half, n, buf, &value[h]);
    }
    /* Never reuse the ring under a copy in flight, even after a failure: a
     * wait that timed out leaves the ring busy for the next transfer. */
    const uint64_t last = VKC_MAX(value[0], value[1]);
    vkc_result w = r == VKC_TIMEOUT ? r : vkc__wait_bounded(ctx, last, "staged transfer");
    vkc__staging_release(ctx, VKC__UP, w == VKC_SUCCESS ? 0 : last);
    return r != VKC_SUCCESS ? r : w;
}

/* Download through the staging ring: the GPU copies chunk i into half i % 2
 * while the host reads chunk i - 1 out of the other half. */
static vkc_result vkc__download_staged(vkc_context *ctx, vkc_buffer *buf, uint64_t offset,
                                       uint8_t *data, uint64_t size)
{
    vkc_buffer *st;
    VKC_FORWARD_DONE(vkc__staging_acquire(ctx, VKC__DOWN, &st));
    const uint64_t half = VKC_STAGING_RING_SIZE / 2;
    uint64_t chunks = (size + half - 1) / half;
    uint64_t value[2] = {0, 0};
    vkc_result r = VKC_SUCCESS;
    for (uint64_t i = 0; i <= chunks && r == VKC_SUCCESS; ++i) {
        if (i < chunks) {
            uint64_t done = i * half;
            int h = (int)(i & 1);
            r = vkc__copy_submit(ctx, st->buffer, st->offset + h * half, buf->buffer,
                                 buf->offset + offset + done, VKC_MIN(half, size - done), buf,
                                 &value[h]);
            if (r < 0)
                break;
        }
        if (i > 0) {
            uint64_t done = (i - 1) * half;
            uint64_t n = VKC_MIN(half, size - done);
            int h = (int)((i - 1) & 1);
            r = vkc__wait_bounded(ctx, value[h], "staged transfer");
            if (r == VKC_SUCCESS)
                r = vkc__sync_mapping(ctx, st, h * half, n, false);
            if (r == VKC_SUCCESS)
                memcpy(data + done, (uint8_t *)st->mapped + h * half, n);
        }
    }
    const uint64_t last = VKC_MAX(value[0], value[1]);
    vkc_result w = r == VKC_TIMEOUT ? r : vkc__wait_bounded(ctx, last, "staged transfer");
    vkc__staging_release(ctx, VKC__DOWN, w == VKC_SUCCESS ? 0 : last);
    return r != VKC_SUCCESS ? r : w;
}

/* ---- blocking transfers ------------------------------------------------------------- */

vkc_result vkc_buffer_upload(vkc_buffer *buf, uint64_t offset, const void *data, uint64_t size)
{
    VKC_CHECK_BUFFER(buf, "vkc_buffer_upload");
    vkc_context *ctx = buf->obj.ctx;
    VKC_FORWARD(vkc__check_range(buf, offset, size, "vkc_buffer_upload"));
    VKC_RETURN_IF(!data && size, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_upload: data is NULL");
    if (!size)
        return VKC_SUCCESS;
    VKC_FORWARD_DONE(vkc__drain(ctx));
    if (buf->mapped) {
        memcpy((uint8_t *)buf->mapped + offset, data, size);
        return vkc__sync_mapping(ctx, buf, offset, size, true);
    }
    return vkc__upload_staged(ctx, buf, offset, data, size);
}

vkc_result vkc_buffer_download(vkc_buffer *buf, uint64_t offset, void *data, uint64_t size)
{
    VKC_CHECK_BUFFER(buf, "vkc_buffer_download");
    vkc_context *ctx = buf->obj.ctx;
    VKC_FORWARD(vkc__check_range(buf, offset, size, "vkc_buffer_download"));
    VKC_RETURN_IF(!data && size, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_download: data is NULL");
    if (!size)
        return VKC_SUCCESS;
    VKC_FORWARD_DONE(vkc__drain(ctx));
    /* The CPU reads uncached (write-combined) mappings one bus round trip at
     * a time: a few MB/s through the BAR of a discrete GPU, slow on other
     * devices too. Beyond a few words a GPU copy into cached staging memory
     * is faster, wherever there is such memory. */
    bool direct = buf->mapped && (buf->host_cached || size <= VKC_UNCACHED_READ_MAX ||
                                  !vkc__ms(ctx)->readback_cached);
    if (direct) {
        VKC_FORWARD(vkc__buffer_host_reads(buf));
        VKC_FORWARD(vkc__sync_mapping(ctx, buf, offset, size, false));
        memcpy(data, (const uint8_t *)buf->mapped + offset, size);
        return VKC_SUCCESS;
    }
    return vkc__download_staged(ctx, buf, offset, data, size);
}

vkc_result vkc_buffer_fill(vkc_buffer *buf, uint64_t offset, uint64_t size, uint32_t value)
{
    VKC_CHECK_BUFFER(buf, "vkc_buffer_fill");
    vkc_context *ctx = buf->obj.ctx;
    VKC_FORWARD(vkc__check_range(buf, offset, size, "vkc_buffer_fill"));
    VKC_RETURN_IF(offset % 4 || size % 4, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_fill: offset (%llu) and size (%llu) must be multiples of 4",
                  (unsigned long long)offset, (unsigned long long)size);
    if (!size)
        return VKC_SUCCESS;
    /* Queue order plus the leading barrier of the one-shot unit order the
     * fill after earlier work; only the open immediate batch must go first. */
    VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    ctx->vk.vkCmdFillBuffer(cmd->cb, buf->buffer, buf->offset + offset, size, value);
    vkc__oneshot_hold(cmd, &buf->obj);
    return vkc__oneshot_end_wait(ctx, cmd);
}

vkc_result vkc_buffer_copy(vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                           uint64_t src_offset, uint64_t size)
{
    VKC_CHECK_BUFFER(dst, "vkc_buffer_copy (dst)");
    VKC_CHECK_BUFFER(src, "vkc_buffer_copy (src)");
    vkc_context *ctx = dst->obj.ctx;
    VKC_RETURN_IF(src->obj.ctx != ctx, ctx, VKC_ERROR_INVALID_HANDLE,
                  "vkc_buffer_copy: the buffers belong to different contexts");
    VKC_FORWARD(vkc__check_range(dst, dst_offset, size, "vkc_buffer_copy (dst)"));
    VKC_FORWARD(vkc__check_range(src, src_offset, size, "vkc_buffer_copy (src)"));
    if (!size)
        return VKC_SUCCESS;
    VKC_RETURN_IF(src->buffer == dst->buffer &&
                      src->offset + src_offset < dst->offset + dst_offset + size &&
                      dst->offset + dst_offset < src->offset + src_offset + size,
                  ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_copy: source and destination ranges overlap in \"%s\"", dst->name);
    VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    VkBufferCopy region = {src->offset + src_offset, dst->offset + dst_offset, size};
    ctx->vk.vkCmdCopyBuffer(cmd->cb, src->buffer, dst->buffer, 1, &region);
    vkc__oneshot_hold(cmd, &dst->obj);
    vkc__oneshot_hold(cmd, &src->obj);
    return vkc__oneshot_end_wait(ctx, cmd);
}
