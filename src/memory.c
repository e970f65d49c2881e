/* Memory module: buffers, sub-allocation, staging. (Being written.) */
#include "vkc_internal.h"

vkc_result vkc__memory_init(vkc_context *ctx)
{
    return VKC_SUCCESS;
}
void vkc__memory_finish(vkc_context *ctx) {}

vkc_result vkc_buffer_create(vkc_context *ctx, const vkc_buffer_desc *desc, vkc_buffer **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED, "buffers are not implemented yet");
}
void vkc_buffer_destroy(vkc_buffer *buf) {}
uint64_t vkc_buffer_size(const vkc_buffer *buf)
{
    return buf ? buf->size : 0;
}
void *vkc_buffer_map(vkc_buffer *buf)
{
    return NULL;
}
vkc_result vkc_buffer_vk(const vkc_buffer *buf, VkBuffer *b, VkDeviceSize *o)
{
    return VKC_ERROR_UNSUPPORTED;
}
vkc_result vkc_buffer_upload(vkc_buffer *buf, uint64_t offset, const void *data, uint64_t size)
{
    return VKC_ERROR_UNSUPPORTED;
}
vkc_result vkc_buffer_download(vkc_buffer *buf, uint64_t offset, void *data, uint64_t size)
{
    return VKC_ERROR_UNSUPPORTED;
}
vkc_result vkc_buffer_fill(vkc_buffer *buf, uint64_t offset, uint64_t size, uint32_t value)
{
    return VKC_ERROR_UNSUPPORTED;
}
vkc_result vkc_buffer_copy(vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                           uint64_t src_offset, uint64_t size)
{
    return VKC_ERROR_UNSUPPORTED;
}
