/* Raw Vulkan beside vkc: the baselines. Everything goes through the handles
 * and vkGetDeviceProcAddr that vkc_context_vk() hands out; the shared queue is
 * used under vkc_queue_lock(). */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool raw_ok(raw *r, VkResult res, const char *what)
{
    if (res == VK_SUCCESS)
        return true;
    snprintf(r->err, sizeof(r->err), "%s failed: VkResult %d", what, (int)res);
    return false;
}

bool raw_init(raw *r, vkc_context *ctx)
{
    memset(r, 0, sizeof(*r));
    r->ctx = ctx;
    vkc_result vr = vkc_context_vk(ctx, &r->h);
    if (vr != VKC_SUCCESS) {
        snprintf(r->err, sizeof(r->err), "vkc_context_vk: %s", vkc_result_string(vr));
        return false;
    }
    r->dev = r->h.device;
#define RAW_X_LOAD(name)                                                                           \
    r->name = (PFN_##name)r->h.get_device_proc_addr(r->dev, #name);                                \
    if (!r->name) {                                                                                \
        snprintf(r->err, sizeof(r->err), "no device function %s", #name);                          \
        return false;                                                                              \
    }
    RAW_DEVICE_FUNCS(RAW_X_LOAD)
#undef RAW_X_LOAD
    vkc_context_features f;
    vkc_context_features_get(ctx, &f);
    if (f.push_descriptors)
        r->vkCmdPushDescriptorSetKHR = (PFN_vkCmdPushDescriptorSetKHR)r->h.get_device_proc_addr(
            r->dev, "vkCmdPushDescriptorSetKHR");
    if (f.timeline_semaphores)
        r->vkGetSemaphoreCounterValue = (PFN_vkGetSemaphoreCounterValue)r->h.get_device_proc_addr(
            r->dev, "vkGetSemaphoreCounterValue");
    if (f.synchronization2)
        r->vkCmdPipelineBarrier2 =
            (PFN_vkCmdPipelineBarrier2)r->h.get_device_proc_addr(r->dev, "vkCmdPipelineBarrier2");
    PFN_vkGetPhysicalDeviceMemoryProperties gmp =
        (PFN_vkGetPhysicalDeviceMemoryProperties)r->h.get_instance_proc_addr(
            r->h.instance, "vkGetPhysicalDeviceMemoryProperties");
    if (!gmp) {
        snprintf(r->err, sizeof(r->err), "no vkGetPhysicalDeviceMemoryProperties");
        return false;
    }
    gmp(r->h.physical_device, &r->memprops);
    const vkc_device_info *di = vkc_context_device(ctx);
    r->max_groups_x = di->max_workgroup_count[0];
    r->wg_max = di->max_workgroup_invocations;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = r->h.queue_family};
    if (!raw_ok(r, r->vkCreateCommandPool(r->dev, &pci, NULL, &r->pool), "vkCreateCommandPool"))
        return false;
    VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4 * 65536},
                                  {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1024}};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = 65536,
                                      .poolSizeCount = 2,
                                      .pPoolSizes = ps};
    if (!raw_ok(r, r->vkCreateDescriptorPool(r->dev, &dpi, NULL, &r->dpool),
                "vkCreateDescriptorPool"))
        return false;
    uint32_t bits = di->queue_families[r->h.queue_family].timestamp_valid_bits;
    if (bits > 0 && di->timestamp_period > 0) {
        VkQueryPoolCreateInfo q = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                   .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                   .queryCount = 2};
        if (r->vkCreateQueryPool(r->dev, &q, NULL, &r->queries) != VK_SUCCESS)
            r->queries = VK_NULL_HANDLE;
        r->ts_period_ns = di->timestamp_period;
        r->ts_mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    }
    return true;
}

void raw_finish(raw *r)
{
    if (!r->dev)
        return;
    r->vkDeviceWaitIdle(r->dev);
    if (r->queries)
        r->vkDestroyQueryPool(r->dev, r->queries, NULL);
    if (r->dpool)
        r->vkDestroyDescriptorPool(r->dev, r->dpool, NULL);
    if (r->pool)
        r->vkDestroyCommandPool(r->dev, r->pool, NULL);
    memset(r, 0, sizeof(*r));
}

static int32_t find_memory(raw *r, uint32_t type_bits, VkMemoryPropertyFlags want,
                           VkMemoryPropertyFlags avoid)
{
    for (uint32_t i = 0; i < r->memprops.memoryTypeCount; ++i) {
        VkMemoryPropertyFlags f = r->memprops.memoryTypes[i].propertyFlags;
        if ((type_bits & (1u << i)) && (f & want) == want && !(f & avoid))
            return (int32_t)i;
    }
    return -1;
}

bool raw_buf_create_in(raw *r, VkDeviceSize size, const VkMemoryPropertyFlags *want,
                       uint32_t want_count, bool map, raw_buf *out)
{
    return raw_buf_create_usage(r, size, want, want_count, map, 0, out);
}

bool raw_buf_create_usage(raw *r, VkDeviceSize size, const VkMemoryPropertyFlags *want,
                          uint32_t want_count, bool map, VkBufferUsageFlags usage, raw_buf *out)
{
    memset(out, 0, sizeof(*out));
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT | usage,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    if (!raw_ok(r, r->vkCreateBuffer(r->dev, &bci, NULL, &out->buf), "vkCreateBuffer"))
        return false;
    VkMemoryRequirements req;
    r->vkGetBufferMemoryRequirements(r->dev, out->buf, &req);
    int32_t type = -1;
    for (uint32_t i = 0; i < want_count && type < 0; ++i)
        type = find_memory(r, req.memoryTypeBits, want[i], 0);
    if (type < 0) {
        snprintf(r->err, sizeof(r->err), "no suitable memory type");
        raw_buf_destroy(r, out);
        return false;
    }
    out->mem_type = (uint32_t)type;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)type};
    if (!raw_ok(r, r->vkAllocateMemory(r->dev, &mai, NULL, &out->mem), "vkAllocateMemory") ||
        !raw_ok(r, r->vkBindBufferMemory(r->dev, out->buf, out->mem, 0), "vkBindBufferMemory")) {
        raw_buf_destroy(r, out);
        return false;
    }
    if (map && !raw_ok(r, r->vkMapMemory(r->dev, out->mem, 0, VK_WHOLE_SIZE, 0, &out->map),
                       "vkMapMemory")) {
        raw_buf_destroy(r, out);
        return false;
    }
    out->size = size;
    return true;
}

bool raw_buf_create(raw *r, VkDeviceSize size, bool host, raw_buf *out)
{
    const VkMemoryPropertyFlags hv =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags host_want[] = {hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, hv};
    const VkMemoryPropertyFlags dev_want[] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
    return raw_buf_create_in(r, size, host ? host_want : dev_want, 2, host, out);
}

void raw_buf_destroy(raw *r, raw_buf *b)
{
    if (b->buf)
        r->vkDestroyBuffer(r->dev, b->buf, NULL);
    if (b->mem)
        r->vkFreeMemory(r->dev, b->mem, NULL);
    memset(b, 0, sizeof(*b));
}

static VkDescriptorType binding_type(const raw_pipe *p, uint32_t i)
{
    return (p->image_mask >> i) & 1 ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                                    : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
}

/* The descriptor writes of a dispatch: one for all buffers when there are
 * no images (as every buffer-only baseline has always done), else one per
 * binding. Returns the count. */
static uint32_t arg_writes(const raw_pipe *p, const raw_args *a, VkDescriptorSet set,
                           VkWriteDescriptorSet w[RAW_MAX_BIND])
{
    if (!p->image_mask) {
        w[0] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = set,
                                      .descriptorCount = a->n,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = a->b};
        return 1;
    }
    for (uint32_t i = 0; i < a->n; ++i) {
        bool img = (p->image_mask >> i) & 1;
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = set,
                                      .dstBinding = i,
                                      .descriptorCount = 1,
                                      .descriptorType = binding_type(p, i),
                                      .pImageInfo = img ? &a->img[i] : NULL,
                                      .pBufferInfo = img ? NULL : &a->b[i]};
    }
    return a->n;
}

static bool make_pipeline(raw *r, raw_pipe *p, bool push, VkDescriptorSetLayout *dsl,
                          VkPipelineLayout *pl, VkPipeline *pipe, uint32_t spec1)
{
    VkDescriptorSetLayoutBinding b[RAW_MAX_BIND];
    for (uint32_t i = 0; i < p->bindings; ++i)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                              .descriptorType = binding_type(p, i),
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = push ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
        .bindingCount = p->bindings,
        .pBindings = b};
    if (!raw_ok(r, r->vkCreateDescriptorSetLayout(r->dev, &dci, NULL, dsl),
                "vkCreateDescriptorSetLayout"))
        return false;
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = p->push_size};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1,
                                      .pSetLayouts = dsl,
                                      .pushConstantRangeCount = p->push_size ? 1 : 0,
                                      .pPushConstantRanges = &pcr};
    if (!raw_ok(r, r->vkCreatePipelineLayout(r->dev, &lci, NULL, pl), "vkCreatePipelineLayout"))
        return false;
    uint32_t spec[2] = {p->wg, spec1};
    VkSpecializationMapEntry me[2] = {{0, 0, 4}, {1, 4, 4}};
    VkSpecializationInfo si = {.mapEntryCount = spec1 ? 2 : 1,
                               .pMapEntries = me,
                               .dataSize = spec1 ? 8 : 4,
                               .pData = spec};
    VkComputePipelineCreateInfo cci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = p->module,
                  .pName = "main",
                  .pSpecializationInfo = &si},
        .layout = *pl};
    return raw_ok(r, r->vkCreateComputePipelines(r->dev, VK_NULL_HANDLE, 1, &cci, NULL, pipe),
                  "vkCreateComputePipelines");
}

static bool pipe_create(raw *r, const uint32_t *spirv, size_t size, uint32_t bindings,
                        uint32_t image_mask, uint32_t push_size, uint32_t wg, uint32_t spec1,
                        raw_pipe *p)
{
    memset(p, 0, sizeof(*p));
    p->bindings = bindings;
    p->image_mask = image_mask;
    p->push_size = push_size;
    p->wg = wg < r->wg_max ? wg : r->wg_max;
    VkShaderModuleCreateInfo mci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = spirv};
    if (!raw_ok(r, r->vkCreateShaderModule(r->dev, &mci, NULL, &p->module), "vkCreateShaderModule"))
        goto fail;
    if (r->vkCmdPushDescriptorSetKHR &&
        !make_pipeline(r, p, true, &p->dsl, &p->layout, &p->pipe, spec1))
        goto fail;
    if (!make_pipeline(r, p, false, &p->dsl_pool, &p->layout_pool, &p->pipe_pool, spec1))
        goto fail;
    return true;
fail:
    raw_pipe_destroy(r, p);
    return false;
}

bool raw_pipe_create(raw *r, const uint32_t *spirv, size_t size, uint32_t bindings,
                     uint32_t push_size, uint32_t wg, uint32_t spec1, raw_pipe *p)
{
    return pipe_create(r, spirv, size, bindings, 0, push_size, wg, spec1, p);
}

bool raw_pipe_create_images(raw *r, const uint32_t *spirv, size_t size, uint32_t bindings,
                            uint32_t image_mask, uint32_t push_size, raw_pipe *p)
{
    return pipe_create(r, spirv, size, bindings, image_mask, push_size, 0, 0, p);
}

void raw_pipe_destroy(raw *r, raw_pipe *p)
{
    if (p->pipe)
        r->vkDestroyPipeline(r->dev, p->pipe, NULL);
    if (p->pipe_pool)
        r->vkDestroyPipeline(r->dev, p->pipe_pool, NULL);
    if (p->layout)
        r->vkDestroyPipelineLayout(r->dev, p->layout, NULL);
    if (p->layout_pool)
        r->vkDestroyPipelineLayout(r->dev, p->layout_pool, NULL);
    if (p->dsl)
        r->vkDestroyDescriptorSetLayout(r->dev, p->dsl, NULL);
    if (p->dsl_pool)
        r->vkDestroyDescriptorSetLayout(r->dev, p->dsl_pool, NULL);
    if (p->module)
        r->vkDestroyShaderModule(r->dev, p->module, NULL);
    memset(p, 0, sizeof(*p));
}

bool raw_args_set(raw *r, raw_pipe *p, VkDescriptorPool pool, raw_args *a)
{
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &p->dsl_pool};
    if (!raw_ok(r, r->vkAllocateDescriptorSets(r->dev, &ai, &a->set), "vkAllocateDescriptorSets"))
        return false;
    VkWriteDescriptorSet w[RAW_MAX_BIND];
    r->vkUpdateDescriptorSets(r->dev, arg_writes(p, a, a->set, w), w, 0, NULL);
    return true;
}

void raw_cmd_dispatch(raw *r, VkCommandBuffer cb, raw_pipe *p, const raw_args *a, const void *push,
                      uint32_t gx, uint32_t gy)
{
    bool use_push = r->vkCmdPushDescriptorSetKHR && !a->set;
    VkPipelineLayout layout = use_push ? p->layout : p->layout_pool;
    r->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, use_push ? p->pipe : p->pipe_pool);
    if (use_push) {
        VkWriteDescriptorSet w[RAW_MAX_BIND];
        r->vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0,
                                     arg_writes(p, a, VK_NULL_HANDLE, w), w);
    } else {
        r->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &a->set, 0,
                                   NULL);
    }
    if (p->push_size)
        r->vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_size, push);
    r->vkCmdDispatch(cb, gx, gy ? gy : 1, 1);
}

void raw_cmd_barrier(raw *r, VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    r->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

void raw_grid(const raw *r, uint64_t threads, uint32_t wg, uint32_t *gx, uint32_t *gy)
{
    uint64_t groups = (threads + wg - 1) / wg;
    if (groups == 0)
        groups = 1;
    uint64_t maxx = r->max_groups_x ? r->max_groups_x : 65535;
    if (groups <= maxx) {
        *gx = (uint32_t)groups;
        *gy = 1;
    } else {
        /* a rectangle of at least `groups` groups; the kernel's loop bound clips */
        uint64_t y = (groups + maxx - 1) / maxx;
        *gx = (uint32_t)((groups + y - 1) / y);
        *gy = (uint32_t)y;
    }
}

bool raw_new_cb(raw *r, VkCommandBuffer *cb)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = r->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    return raw_ok(r, r->vkAllocateCommandBuffers(r->dev, &ai, cb), "vkAllocateCommandBuffers");
}

bool raw_begin(raw *r, VkCommandBuffer *cb)
{
    if (!raw_new_cb(r, cb))
        return false;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (!raw_ok(r, r->vkBeginCommandBuffer(*cb, &bi), "vkBeginCommandBuffer")) {
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, cb);
        return false;
    }
    return true;
}

bool raw_submit_wait(raw *r, VkCommandBuffer cb, VkFence fence, bool spin)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    vkc_queue_lock(r->ctx);
    VkResult res = r->vkQueueSubmit(r->h.queue, 1, &si, fence);
    vkc_queue_unlock(r->ctx);
    if (!raw_ok(r, res, "vkQueueSubmit"))
        return false;
    if (spin) {
        while ((res = r->vkGetFenceStatus(r->dev, fence)) == VK_NOT_READY)
            ;
        if (!raw_ok(r, res, "vkGetFenceStatus"))
            return false;
    } else if (!raw_ok(r, r->vkWaitForFences(r->dev, 1, &fence, VK_TRUE, UINT64_MAX),
                       "vkWaitForFences")) {
        return false;
    }
    return raw_ok(r, r->vkResetFences(r->dev, 1, &fence), "vkResetFences");
}

bool raw_end_wait(raw *r, VkCommandBuffer cb)
{
    bool ok = raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkFence fence = VK_NULL_HANDLE;
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    ok = ok && raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence");
    ok = ok && raw_submit_wait(r, cb, fence, false);
    if (fence)
        r->vkDestroyFence(r->dev, fence, NULL);
    r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    return ok;
}

static bool transfer(raw *r, raw_buf *dev, VkDeviceSize off, void *data, VkDeviceSize size, bool up)
{
    raw_buf st;
    if (!raw_buf_create(r, size, true, &st))
        return false;
    if (up)
        memcpy(st.map, data, size);
    VkCommandBuffer cb;
    bool ok = raw_begin(r, &cb);
    if (ok) {
        VkBufferCopy c = {.srcOffset = up ? 0 : off, .dstOffset = up ? off : 0, .size = size};
        /* earlier dispatches wrote or read dev: order the copy after them */
        VkMemoryBarrier mb = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
        r->vkCmdPipelineBarrier(
            cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        if (up)
            r->vkCmdCopyBuffer(cb, st.buf, dev->buf, 1, &c);
        else
            r->vkCmdCopyBuffer(cb, dev->buf, st.buf, 1, &c);
        VkMemoryBarrier mb2 = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT |
                                                VK_ACCESS_SHADER_READ_BIT |
                                                VK_ACCESS_SHADER_WRITE_BIT};
        r->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                0, 1, &mb2, 0, NULL, 0, NULL);
        ok = raw_end_wait(r, cb);
    }
    if (ok && !up)
        memcpy(data, st.map, size);
    raw_buf_destroy(r, &st);
    return ok;
}

bool raw_upload(raw *r, raw_buf *dst, VkDeviceSize off, const void *data, VkDeviceSize size)
{
    return transfer(r, dst, off, (void *)data, size, true);
}

bool raw_download(raw *r, raw_buf *src, VkDeviceSize off, void *data, VkDeviceSize size)
{
    return transfer(r, src, off, data, size, false);
}

bool raw_prepare(raw *r, raw_pipe *p, raw_args *a)
{
    if (r->vkCmdPushDescriptorSetKHR || a->set)
        return true;
    return raw_args_set(r, p, r->dpool, a);
}

bool raw_init_pattern(raw *r, raw_pipe *init, raw_buf *dst, uint32_t n, uint32_t seed)
{
    raw_args a = {.b = {{dst->buf, 0, VK_WHOLE_SIZE}}, .n = 1};
    if (!raw_prepare(r, init, &a))
        return false;
    VkCommandBuffer cb;
    if (!raw_begin(r, &cb))
        return false;
    uint32_t push[2] = {n, seed};
    uint32_t gx, gy;
    raw_grid(r, n, init->wg, &gx, &gy);
    raw_cmd_dispatch(r, cb, init, &a, push, gx, gy);
    raw_cmd_barrier(r, cb);
    return raw_end_wait(r, cb);
}

void raw_cmd_ts_begin(raw *r, VkCommandBuffer cb)
{
    if (!r->queries)
        return;
    r->vkCmdResetQueryPool(cb, r->queries, 0, 2);
    r->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, r->queries, 0);
}

void raw_cmd_ts_end(raw *r, VkCommandBuffer cb)
{
    if (r->queries)
        r->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r->queries, 1);
}

bool raw_ts_read(raw *r, double *ns)
{
    uint64_t t[2];
    if (!r->queries)
        return false;
    if (r->vkGetQueryPoolResults(r->dev, r->queries, 0, 2, sizeof(t), t, sizeof(t[0]),
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
        return false;
    *ns = (double)((t[1] - t[0]) & r->ts_mask) * r->ts_period_ns;
    return true;
}

bool raw_replay(raw *r, VkCommandBuffer cb, uint32_t warm, uint32_t iters, double *wall,
                double *gpu, bool *has_gpu)
{
    VkFence fence = VK_NULL_HANDLE;
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (!raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence"))
        return false;
    bool ok = true;
    *has_gpu = r->queries != VK_NULL_HANDLE;
    for (uint32_t i = 0; ok && i < warm + iters; ++i) {
        uint64_t t0 = bench_now_ns();
        ok = raw_submit_wait(r, cb, fence, true);
        uint64_t t1 = bench_now_ns();
        if (ok && i >= warm) {
            wall[i - warm] = (double)(t1 - t0);
            if (*has_gpu && !raw_ts_read(r, &gpu[i - warm]))
                *has_gpu = false;
        }
    }
    r->vkDestroyFence(r->dev, fence, NULL);
    return ok;
}

/* One whole-image barrier: layout from -> to, after `after` (stage and
 * access), before `before`. */
static void img_barrier(raw *r, VkCommandBuffer cb, raw_img *img, VkImageLayout from,
                        VkImageLayout to, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                        VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
    VkImageMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                              .srcAccessMask = src_access,
                              .dstAccessMask = dst_access,
                              .oldLayout = from,
                              .newLayout = to,
                              .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .image = img->image,
                              .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    r->vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

bool raw_img_create(raw *r, VkFormat format, uint32_t texel_size, uint32_t w, uint32_t h,
                    raw_img *out)
{
    memset(out, 0, sizeof(*out));
    out->format = format;
    out->w = w;
    out->h = h;
    out->texel_size = texel_size;
    VkImageCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                            .imageType = VK_IMAGE_TYPE_2D,
                            .format = format,
                            .extent = {w, h, 1},
                            .mipLevels = 1,
                            .arrayLayers = 1,
                            .samples = VK_SAMPLE_COUNT_1_BIT,
                            .tiling = VK_IMAGE_TILING_OPTIMAL,
                            .usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                     VK_IMAGE_USAGE_TRANSFER_DST_BIT};
    if (!raw_ok(r, r->vkCreateImage(r->dev, &ii, NULL, &out->image), "vkCreateImage"))
        return false;
    VkMemoryRequirements req;
    r->vkGetImageMemoryRequirements(r->dev, out->image, &req);
    int32_t type = find_memory(r, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    if (type < 0)
        type = find_memory(r, req.memoryTypeBits, 0, 0);
    if (type < 0) {
        snprintf(r->err, sizeof(r->err), "no memory type for an image");
        raw_img_destroy(r, out);
        return false;
    }
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)type};
    VkImageViewCreateInfo vi = {.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
                                .image = out->image,
                                .viewType = VK_IMAGE_VIEW_TYPE_2D,
                                .format = format,
                                .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    VkCommandBuffer cb;
    bool ok =
        raw_ok(r, r->vkAllocateMemory(r->dev, &mai, NULL, &out->mem), "vkAllocateMemory") &&
        raw_ok(r, r->vkBindImageMemory(r->dev, out->image, out->mem, 0), "vkBindImageMemory") &&
        raw_ok(r, r->vkCreateImageView(r->dev, &vi, NULL, &out->view), "vkCreateImageView") &&
        raw_begin(r, &cb);
    if (ok) {
        img_barrier(r, cb, out, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                    VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        ok = raw_end_wait(r, cb);
    }
    if (!ok)
        raw_img_destroy(r, out);
    return ok;
}

void raw_img_destroy(raw *r, raw_img *img)
{
    if (img->view)
        r->vkDestroyImageView(r->dev, img->view, NULL);
    if (img->image)
        r->vkDestroyImage(r->dev, img->image, NULL);
    if (img->mem)
        r->vkFreeMemory(r->dev, img->mem, NULL);
    memset(img, 0, sizeof(*img));
}

static bool img_transfer(raw *r, raw_img *img, void *data, bool up)
{
    VkDeviceSize size = (VkDeviceSize)img->w * img->h * img->texel_size;
    raw_buf st;
    if (!raw_buf_create(r, size, true, &st))
        return false;
    if (up)
        memcpy(st.map, data, size);
    VkImageLayout tl =
        up ? VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkCommandBuffer cb;
    bool ok = raw_begin(r, &cb);
    if (ok) {
        VkBufferImageCopy c = {.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                               .imageExtent = {img->w, img->h, 1}};
        img_barrier(r, cb, img, VK_IMAGE_LAYOUT_GENERAL, tl, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                    up ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT);
        if (up)
            r->vkCmdCopyBufferToImage(cb, st.buf, img->image, tl, 1, &c);
        else
            r->vkCmdCopyImageToBuffer(cb, img->image, tl, st.buf, 1, &c);
        img_barrier(r, cb, img, tl, VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                    up ? VK_ACCESS_TRANSFER_WRITE_BIT : 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (!up) {
            VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                  .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            r->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                                    0, 1, &mb, 0, NULL, 0, NULL);
        }
        ok = raw_end_wait(r, cb);
    }
    if (ok && !up)
        memcpy(data, st.map, size);
    raw_buf_destroy(r, &st);
    return ok;
}

bool raw_img_upload(raw *r, raw_img *img, const void *data)
{
    return img_transfer(r, img, (void *)data, true);
}

bool raw_img_download(raw *r, raw_img *img, void *data)
{
    return img_transfer(r, img, data, false);
}
