/* Barriers into a recording unit's command buffer: the memory barriers
 * between hazard levels, the image barriers that move layouts, and the
 * halves of a queue-family ownership transfer, each through
 * synchronization2 where the device has it and through the Vulkan 1.0 call
 * otherwise (the stage and access bits vkc uses have the same values in
 * both).
 *
 * Owns: nothing. Calls: the context's dispatch table and counters only;
 * record.c, image_transfer.c, wait.c, epilogue.c, resident_launch.c and
 * pool.c call it. */
#include "vkc_internal.h"

void vkc__cmd_barrier(vkc_context *ctx, VkCommandBuffer cb, VkPipelineStageFlags2 src_stages,
                      VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stages,
                      VkAccessFlags2 dst_access)
{
    VKC_STAT_ADD(ctx, barriers, 1);
    if (ctx->features.synchronization2) {
        VkMemoryBarrier2 mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        mb.srcStageMask = src_stages;
        mb.srcAccessMask = src_access;
        mb.dstStageMask = dst_stages;
        mb.dstAccessMask = dst_access;
        VkDependencyInfo di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.memoryBarrierCount = 1;
        di.pMemoryBarriers = &mb;
        ctx->vk.vkCmdPipelineBarrier2(cb, &di);
        return;
    }
    /* The stage and access bits vkc uses have the same values in both APIs. */
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = (VkAccessFlags)src_access;
    mb.dstAccessMask = (VkAccessFlags)dst_access;
    ctx->vk.vkCmdPipelineBarrier(cb, (VkPipelineStageFlags)src_stages,
                                 (VkPipelineStageFlags)dst_stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

void vkc__cmd_barrier2(vkc_context *ctx, VkCommandBuffer cb, const VkMemoryBarrier2 *mb,
                       const VkImageMemoryBarrier2 *ib, uint32_t n)
{
    if (!mb && !n)
        return;
    VKC_STAT_ADD(ctx, barriers, 1);
    if (ctx->features.synchronization2) {
        VkDependencyInfo di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.memoryBarrierCount = mb ? 1 : 0;
        di.pMemoryBarriers = mb;
        di.imageMemoryBarrierCount = n;
        di.pImageMemoryBarriers = ib;
        ctx->vk.vkCmdPipelineBarrier2(cb, &di);
        return;
    }
    /* The legacy call has one pair of stage masks for all its barriers. */
    VkPipelineStageFlags src = 0, dst = 0;
    VkMemoryBarrier m = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    if (mb) {
        src |= (VkPipelineStageFlags)mb->srcStageMask;
        dst |= (VkPipelineStageFlags)mb->dstStageMask;
        m.srcAccessMask = (VkAccessFlags)mb->srcAccessMask;
        m.dstAccessMask = (VkAccessFlags)mb->dstAccessMask;
    }
    VkImageMemoryBarrier small[16], *lb = small;
    if (n > VKC_ARRAY_COUNT(small)) {
        lb = vkc__malloc(n * sizeof(*lb));
        if (!lb) { /* no memory for the list: one barrier at a time */
            for (uint32_t i = 0; i < n; ++i)
                vkc__cmd_barrier2(ctx, cb, i ? NULL : mb, &ib[i], 1);
            return;
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        src |= (VkPipelineStageFlags)ib[i].srcStageMask;
        dst |= (VkPipelineStageFlags)ib[i].dstStageMask;
        lb[i] = (VkImageMemoryBarrier){VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        lb[i].srcAccessMask = (VkAccessFlags)ib[i].srcAccessMask;
        lb[i].dstAccessMask = (VkAccessFlags)ib[i].dstAccessMask;
        lb[i].oldLayout = ib[i].oldLayout;
        lb[i].newLayout = ib[i].newLayout;
        lb[i].srcQueueFamilyIndex = ib[i].srcQueueFamilyIndex;
        lb[i].dstQueueFamilyIndex = ib[i].dstQueueFamilyIndex;
        lb[i].image = ib[i].image;
        lb[i].subresourceRange = ib[i].subresourceRange;
    }
    ctx->vk.vkCmdPipelineBarrier(cb, src ? src : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                                 dst ? dst : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, mb ? 1 : 0,
                                 &m, 0, NULL, n, lb);
    if (lb != small)
        vkc__free(lb);
}

void vkc__cmd_ownership(vkc_context *ctx, VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset,
                        VkDeviceSize size, bool acquire, uint32_t other)
{
    const VkPipelineStageFlags2 work = VKC_WORK_STAGES;
    const VkAccessFlags2 all = vkc__accesses_of(work), writes = vkc__writes_of(work);
    const uint32_t own = ctx->info.queue_family;
    VKC_STAT_ADD(ctx, barriers, 1);
    /* The other half's access and stage masks are ignored by Vulkan. */
    if (ctx->features.synchronization2) {
        VkBufferMemoryBarrier2 b = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2};
        b.srcStageMask = acquire ? VK_PIPELINE_STAGE_2_NONE : work;
        b.srcAccessMask = acquire ? 0 : writes;
        b.dstStageMask = acquire ? work : VK_PIPELINE_STAGE_2_NONE;
        b.dstAccessMask = acquire ? all : 0;
        b.srcQueueFamilyIndex = acquire ? other : own;
        b.dstQueueFamilyIndex = acquire ? own : other;
        b.buffer = buffer;
        b.offset = offset;
        b.size = size;
        VkDependencyInfo di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.bufferMemoryBarrierCount = 1;
        di.pBufferMemoryBarriers = &b;
        ctx->vk.vkCmdPipelineBarrier2(cb, &di);
        return;
    }
    VkBufferMemoryBarrier b = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    b.srcAccessMask = acquire ? 0 : (VkAccessFlags)writes;
    b.dstAccessMask = acquire ? (VkAccessFlags)all : 0;
    b.srcQueueFamilyIndex = acquire ? other : own;
    b.dstQueueFamilyIndex = acquire ? own : other;
    b.buffer = buffer;
    b.offset = offset;
    b.size = size;
    ctx->vk.vkCmdPipelineBarrier(
        cb, acquire ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT : (VkPipelineStageFlags)work,
        acquire ? (VkPipelineStageFlags)work : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, NULL, 1,
        &b, 0, NULL);
}
