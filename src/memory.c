/* Memory module: buffers and their sub-allocation from large blocks.
 *
 * Every vkc buffer is its own VkBuffer, bound at an offset inside a shared
 * VkDeviceMemory block of its memory type (a dedicated allocation when it is
 * at least half a block). Blocks keep a sorted free list of ranges that is
 * coalesced on free; an empty block is given back unless it is the only
 * empty one of its type (kept to avoid allocate/free churn). The blocking
 * transfers and staging are in transfer.c.
 *
 * Owns: vkc_buffer, blocks, the memory module state. Calls: context, pool
 * (vkc__drain before a buffer goes); never dispatch. */
#include "memory.h"

#include <stdio.h>

/* Block size of sub-allocation (smaller on small heaps). */
#define VKC_BLOCK_SIZE (64ull << 20)
#define VKC_BLOCK_MIN (1ull << 20)

static VkMemoryPropertyFlags vkc__type_flags(vkc_context *ctx, uint32_t type)
{
    return ctx->mem_props.memoryTypes[type].propertyFlags;
}

/* ---- memory type choice ---------------------------------------------------------- */

/* The largest device-local heap; UINT32_MAX if none. */
static uint32_t vkc__big_heap(const VkPhysicalDeviceMemoryProperties *mp)
{
    uint32_t big = UINT32_MAX;
    for (uint32_t h = 0; h < mp->memoryHeapCount; ++h) {
        if ((mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            (big == UINT32_MAX || mp->memoryHeaps[h].size > mp->memoryHeaps[big].size))
            big = h;
    }
    return big;
}

/* How well memory type `t` suits `kind`; negative: not at all. */
static int vkc__type_score(const VkPhysicalDeviceMemoryProperties *mp, uint32_t big_heap,
                           vkc_memory kind, uint32_t t)
{
    VkMemoryPropertyFlags f = mp->memoryTypes[t].propertyFlags;
    bool dl = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    bool hv = f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    bool hc = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    bool cached = f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    bool big = mp->memoryTypes[t].heapIndex == big_heap;
    if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT))
        return -1;
    switch (kind) {
    case VKC_MEMORY_DEVICE:
        /* Resizable BAR, unified memory, CPU devices: device-local memory the
         * host can map, on the big heap, needs no staging at all. A small
         * BAR heap is left to those who need it. */
        if (dl && hv && big)
            return 300 + (hc ? 10 : 0) + (cached ? 5 : 0);
        if (dl && !hv)
            return 200 + (big ? 10 : 0);
        if (dl)
            return 100;
        return 10 + (hv ? 0 : 1);
    case VKC_MEMORY_UPLOAD:
        if (!hv)
            return -1;
        return 100 + (hc ? 50 : 0) + (dl && big ? 30 : 0);
    case VKC_MEMORY_READBACK:
        if (!hv)
            return -1;
        return 100 + (cached ? 50 : 0) + (hc ? 20 : 0) - (dl && !cached ? 5 : 0);
    }
    return -1;
}

uint32_t vkc__memory_pick_types(const VkPhysicalDeviceMemoryProperties *mp, vkc_memory kind,
                                uint32_t bits, uint32_t out[VK_MAX_MEMORY_TYPES])
{
    uint32_t big_heap = vkc__big_heap(mp);
    int score[VK_MAX_MEMORY_TYPES];
    uint32_t n = 0;
    for (uint32_t t = 0; t < mp->memoryTypeCount && t < VK_MAX_MEMORY_TYPES; ++t) {
        if (!(bits & (1u << t)))
            continue;
        int s = vkc__type_score(mp, big_heap, kind, t);
        if (s < 0)
            continue;
        /* Insertion sort; equal scores keep the driver's order. */
        uint32_t i = n++;
        while (i > 0 && score[i - 1] < s) {
            score[i] = score[i - 1];
            out[i] = out[i - 1];
            --i;
        }
        score[i] = s;
        out[i] = t;
    }
    return n;
}

/* ---- blocks and their free lists ------------------------------------------------ */

static void vkc__block_free(vkc_context *ctx, vkc__block *b)
{
    if (b->memory) {
        if (b->mapped)
            ctx->vk.vkUnmapMemory(ctx->device, b->memory);
        ctx->vk.vkFreeMemory(ctx->device, b->memory, ctx->alloc);
        VKC_STAT_SUB(ctx, memory_blocks, 1);
        VKC_STAT_SUB(ctx, memory_bytes, b->size);
    }
    vkc__free(b->free);
    vkc__free(b);
}

/* Allocate (and map, when host-visible) a block. A dedicated block holds
 * one buffer; `dedicated_to` names it to the driver when it may (the block
 * is exactly the buffer's size). Returns the VkResult of the failing call in
 * *vr so the caller can tell out-of-memory from other failures. */
static vkc_result vkc__block_new(vkc_context *ctx, uint32_t type, VkDeviceSize size, bool dedicated,
                                 VkBuffer dedicated_to, vkc__block **out, VkResult *vr)
{
    *out = NULL;
    *vr = VK_SUCCESS;
    vkc__block *b = vkc__calloc(1, sizeof(*b));
    if (!b)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "memory block");
    b->size = size;
    b->type = type;
    b->dedicated = dedicated;
    if (!b->dedicated) {
        b->free = vkc__malloc(4 * sizeof(*b->free));
        if (!b->free) {
            vkc__free(b);
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "memory block free list");
        }
        b->free_cap = 4;
        b->free_count = 1;
        b->free[0] = (vkc__range){0, size};
    }
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = size;
    ai.memoryTypeIndex = type;
    VkMemoryDedicatedAllocateInfo di = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    if (dedicated && dedicated_to && ctx->api_version >= VK_API_VERSION_1_1) {
        di.buffer = dedicated_to;
        ai.pNext = &di;
    }
    /* Buffers with device addresses need memory that can give them. */
    VkMemoryAllocateFlagsInfo fi = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    if (ctx->features.buffer_device_address) {
        fi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
        fi.pNext = ai.pNext;
        ai.pNext = &fi;
    }
    *vr = VKC_VK(vkAllocateMemory,
                 ctx->vk.vkAllocateMemory(ctx->device, &ai, ctx->alloc, &b->memory));
    if (*vr < 0) {
        VkResult keep = *vr;
        b->memory = VK_NULL_HANDLE;
        vkc__block_free(ctx, b);
        *vr = keep;
        return keep == VK_ERROR_OUT_OF_DEVICE_MEMORY || keep == VK_ERROR_OUT_OF_HOST_MEMORY
                   ? VKC_ERROR_OUT_OF_DEVICE_MEMORY
                   : vkc__vk_fail(ctx, keep, "vkAllocateMemory", __FILE__, __LINE__);
    }
    VKC_STAT_ADD(ctx, memory_blocks, 1);
    VKC_STAT_ADD(ctx, memory_bytes, size);
    if (vkc__type_flags(ctx, type) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        void *p = NULL;
        *vr = VKC_VK(vkMapMemory,
                     ctx->vk.vkMapMemory(ctx->device, b->memory, 0, VK_WHOLE_SIZE, 0, &p));
        if (*vr < 0) {
            VkResult keep = *vr;
            vkc__block_free(ctx, b);
            *vr = keep;
            return keep == VK_ERROR_MEMORY_MAP_FAILED || keep == VK_ERROR_OUT_OF_HOST_MEMORY ||
                           keep == VK_ERROR_OUT_OF_DEVICE_MEMORY
                       ? VKC_ERROR_OUT_OF_DEVICE_MEMORY
                       : vkc__vk_fail(ctx, keep, "vkMapMemory", __FILE__, __LINE__);
        }
        b->mapped = p;
    }
    if (ctx->debug_utils) {
        char name[64];
        snprintf(name, sizeof(name), "vkc %s block (type %u)",
                 b->dedicated ? "dedicated" : "shared", type);
        vkc__set_name(ctx, VK_OBJECT_TYPE_DEVICE_MEMORY, (uint64_t)b->memory, name);
    }
    *out = b;
    return VKC_SUCCESS;
}

/* First fit inside one block; true when placed. */
static bool vkc__block_take(vkc__block *b, VkDeviceSize size, VkDeviceSize align,
                            VkDeviceSize *out_offset, bool *oom_host)
{
    for (uint32_t i = 0; i < b->free_count; ++i) {
        vkc__range r = b->free[i];
        VkDeviceSize start = vkc__align_up(r.offset, align);
        if (start < r.offset || start - r.offset > r.size || r.size - (start - r.offset) < size)
            continue;
        VkDeviceSize head = start - r.offset;
        VkDeviceSize tail = r.size - head - size;
        if (head && tail) {
            /* Split in two: one more range. */
            if (b->free_count == b->free_cap) {
                uint32_t cap = b->free_cap * 2;
                vkc__range *nf = vkc__realloc(b->free, cap * sizeof(*nf));
                if (!nf) {
                    *oom_host = true;
                    return false;
                }
                b->free = nf;
                b->free_cap = cap;
            }
            memmove(&b->free[i + 2], &b->free[i + 1], (b->free_count - i - 1) * sizeof(*b->free));
            b->free[i] = (vkc__range){r.offset, head};
            b->free[i + 1] = (vkc__range){start + size, tail};
            b->free_count++;
        } else if (head) {
            b->free[i].size = head;
        } else if (tail) {
            b->free[i] = (vkc__range){start + size, tail};
        } else {
            memmove(&b->free[i], &b->free[i + 1], (b->free_count - i - 1) * sizeof(*b->free));
            b->free_count--;
        }
        b->live++;
        *out_offset = start;
        return true;
    }
    return false;
}

/* Give a range back, merging with its neighbours. Fails only when the list
 * must grow and the host is out of memory: the range then stays lost until
 * the block is freed (harmless, and never in practice). */
static void vkc__block_give(vkc__block *b, VkDeviceSize offset, VkDeviceSize size)
{
    b->live--;
    uint32_t lo = 0, hi = b->free_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (b->free[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* lo: the first range after `offset`. */
    bool merge_prev = lo > 0 && b->free[lo - 1].offset + b->free[lo - 1].size == offset;
    bool merge_next = lo < b->free_count && offset + size == b->free[lo].offset;
    if (merge_prev && merge_next) {
        b->free[lo - 1].size += size + b->free[lo].size;
        memmove(&b->free[lo], &b->free[lo + 1], (b->free_count - lo - 1) * sizeof(*b->free));
        b->free_count--;
    } else if (merge_prev) {
        b->free[lo - 1].size += size;
    } else if (merge_next) {
        b->free[lo].offset = offset;
        b->free[lo].size += size;
    } else {
        if (b->free_count == b->free_cap) {
            uint32_t cap = b->free_cap * 2;
            vkc__range *nf = vkc__realloc(b->free, cap * sizeof(*nf));
            if (!nf)
                return;
            b->free = nf;
            b->free_cap = cap;
        }
        memmove(&b->free[lo + 1], &b->free[lo], (b->free_count - lo) * sizeof(*b->free));
        b->free[lo] = (vkc__range){offset, size};
        b->free_count++;
    }
}

/* Place `size` bytes of memory type `type`; `buffer` may be named to the
 * driver if the allocation is dedicated. Caller holds ms->lock. */
static vkc_result vkc__alloc_locked(vkc_context *ctx, uint32_t type, VkDeviceSize size,
                                    VkDeviceSize align, VkBuffer buffer, vkc__block **out_block,
                                    VkDeviceSize *out_offset, VkResult *vr)
{
    vkc__memory_state *ms = vkc__ms(ctx);
    *vr = VK_SUCCESS;
    VkDeviceSize bs = ms->block_size[type];
    if (size >= bs / 2) {
        vkc__block *b;
        VKC_FORWARD(vkc__block_new(ctx, type, size, true, buffer, &b, vr));
        b->live = 1;
        b->next = ms->blocks[type];
        ms->blocks[type] = b;
        *out_block = b;
        *out_offset = 0;
        return VKC_SUCCESS;
    }
    bool oom_host = false;
    for (vkc__block *b = ms->blocks[type]; b; b = b->next) {
        if (!b->dedicated && vkc__block_take(b, size, align, out_offset, &oom_host)) {
            *out_block = b;
            return VKC_SUCCESS;
        }
        if (oom_host)
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "memory block free list");
    }
    vkc__block *b;
    VKC_FORWARD(vkc__block_new(ctx, type, bs, false, VK_NULL_HANDLE, &b, vr));
    b->next = ms->blocks[type];
    ms->blocks[type] = b;
    if (!vkc__block_take(b, size, align, out_offset, &oom_host))
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "memory block free list");
    *out_block = b;
    return VKC_SUCCESS;
}

static void vkc__unlink_block_locked(vkc__memory_state *ms, vkc__block *b)
{
    for (vkc__block **pp = &ms->blocks[b->type]; *pp; pp = &(*pp)->next) {
        if (*pp == b) {
            *pp = b->next;
            return;
        }
    }
}

static void vkc__release(vkc_context *ctx, vkc__block *b, VkDeviceSize offset, VkDeviceSize size)
{
    vkc__memory_state *ms = vkc__ms(ctx);
    pthread_mutex_lock(&ms->lock);
    if (b->dedicated) {
        vkc__unlink_block_locked(ms, b);
        vkc__block_free(ctx, b);
    } else {
        vkc__block_give(b, offset, size);
        if (b->live == 0) {
            /* Keep one empty block per type; give back any other. */
            bool other_empty = false;
            for (vkc__block *o = ms->blocks[b->type]; o && !other_empty; o = o->next)
                other_empty = o != b && !o->dedicated && o->live == 0;
            if (other_empty) {
                vkc__unlink_block_locked(ms, b);
                vkc__block_free(ctx, b);
            }
        }
    }
    pthread_mutex_unlock(&ms->lock);
}

/* ---- buffers ------------------------------------------------------------------- */

/* Create a buffer; `listed` buffers are the caller's (on ctx->buffers,
 * counted in stats.buffers), others are vkc's own (staging). */
vkc_result vkc__buffer_new(vkc_context *ctx, uint64_t size, vkc_memory kind, const char *name,
                           bool listed, vkc_buffer **out)
{
    vkc__memory_state *ms = vkc__ms(ctx);
    vkc_buffer *buf = vkc__calloc(1, sizeof(*buf));
    if (!buf)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "buffer");
    buf->obj.ctx = ctx;
    buf->size = size;
    buf->memory = kind;
    buf->uid = atomic_fetch_add(&ms->next_uid, 1);
    if (name)
        snprintf(buf->name, sizeof(buf->name), "%s", name);
    else
        snprintf(buf->name, sizeof(buf->name), "vkc buffer %llu", (unsigned long long)buf->uid);

    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
                VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (ctx->features.buffer_device_address)
        bci.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    if (ctx->conditional_rendering) /* the predicate words of armed submission */
        bci.usage |= VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult vr =
        VKC_VK(vkCreateBuffer, ctx->vk.vkCreateBuffer(ctx->device, &bci, ctx->alloc, &buf->buffer));
    if (vr < 0) {
        vkc__free(buf);
        if (vr == VK_ERROR_OUT_OF_DEVICE_MEMORY)
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_DEVICE_MEMORY,
                            "vkCreateBuffer(%llu bytes): out of device memory",
                            (unsigned long long)size);
        return vkc__vk_fail(ctx, vr, "vkCreateBuffer", __FILE__, __LINE__);
    }
    VkMemoryRequirements req;
    ctx->vk.vkGetBufferMemoryRequirements(ctx->device, buf->buffer, &req);

    uint32_t cand[VK_MAX_MEMORY_TYPES];
    uint32_t n = vkc__memory_pick_types(&ctx->mem_props, kind, req.memoryTypeBits, cand);
    vkc_result r = VKC_ERROR_OUT_OF_DEVICE_MEMORY;
    VkResult last_vr = VK_SUCCESS;
    uint32_t type = 0;
    for (uint32_t i = 0; i < n; ++i) {
        type = cand[i];
        VkMemoryPropertyFlags f = vkc__type_flags(ctx, type);
        VkDeviceSize align = VKC_MAX(req.alignment, ctx->info.min_storage_buffer_offset_alignment);
        VkDeviceSize asize = req.size;
        if ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
            !(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
            /* Flushes and invalidations cover whole atoms: no neighbour
             * may share one. */
            align = VKC_MAX(align, ms->atom);
            asize = vkc__align_up(asize, ms->atom);
        }
        if (asize > ctx->info.max_memory_allocation_size)
            continue;
        pthread_mutex_lock(&ms->lock);
        r = vkc__alloc_locked(ctx, type, asize, align,
                              asize == req.size ? buf->buffer : VK_NULL_HANDLE, &buf->block,
                              &buf->block_offset, &vr);
        pthread_mutex_unlock(&ms->lock);
        if (r >= 0) {
            buf->alloc_size = asize;
            break;
        }
        if (r != VKC_ERROR_OUT_OF_DEVICE_MEMORY)
            break; /* not a matter of space: do not try elsewhere */
        last_vr = vr;
    }
    if (r < 0) {
        ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, ctx->alloc);
        vkc__free(buf);
        if (r == VKC_ERROR_OUT_OF_DEVICE_MEMORY)
            return vkc__fail(
                ctx, r, last_vr, __FILE__, __LINE__, "buffer of %llu bytes: out of device memory%s",
                (unsigned long long)size, n ? "" : " (no memory type suits this kind)");
        return r;
    }
    vr = VKC_VK(vkBindBufferMemory,
                ctx->vk.vkBindBufferMemory(ctx->device, buf->buffer, buf->block->memory,
                                           buf->block_offset));
    if (vr < 0) {
        vkc__release(ctx, buf->block, buf->block_offset, buf->alloc_size);
        ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, ctx->alloc);
        vkc__free(buf);
        return vkc__vk_fail(ctx, vr, "vkBindBufferMemory", __FILE__, __LINE__);
    }
    VkMemoryPropertyFlags f = vkc__type_flags(ctx, type);
    bool hv = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && buf->block->mapped;
    if (kind == VKC_MEMORY_DEVICE && atomic_load(&ms->force_staging))
        hv = false;
    if (hv) {
        buf->host_visible = true;
        buf->host_coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        buf->host_cached = f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        if (listed && kind != VKC_MEMORY_READBACK && atomic_load(&ms->force_uncached))
            buf->host_cached = false;
        buf->mapped = buf->block->mapped + buf->block_offset;
        /* A DEVICE buffer in host-visible memory (resizable BAR, unified
         * memory) is the host's to read only once it says so. */
        atomic_store(&buf->host_read, kind != VKC_MEMORY_DEVICE);
    }
    vkc__set_name(ctx, VK_OBJECT_TYPE_BUFFER, (uint64_t)buf->buffer, buf->name);
    vkc__obj_init(&buf->obj, VKC_MAGIC_BUFFER, ctx, buf->name, vkc__buffer_obj_free,
                  listed ? &ctx->buffers : NULL);
    if (listed)
        VKC_STAT_ADD(ctx, buffers, 1);
    *out = buf;
    return VKC_SUCCESS;
}

static void vkc__buffer_free(vkc_context *ctx, vkc_buffer *buf)
{
    buf->obj.magic = 0;
    if (!buf->wrapped && buf->buffer)
        ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, ctx->alloc);
    if (buf->block)
        vkc__release(ctx, buf->block, buf->block_offset, buf->alloc_size);
    vkc__free(buf);
}

void vkc__buffer_obj_free(vkc__obj *o)
{
    vkc__buffer_free(o->ctx, (vkc_buffer *)o);
}

vkc_result vkc_buffer_create(vkc_context *ctx, const vkc_buffer_desc *desc, vkc_buffer **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!desc, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_buffer_create: desc is NULL");
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_buffer_create: out is NULL");
    VKC_RETURN_IF(desc->size == 0, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_buffer_create: size is 0");
    VKC_RETURN_IF((unsigned)desc->memory > VKC_MEMORY_READBACK, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_create: unknown memory kind %d", (int)desc->memory);
    VKC_RETURN_IF(desc->size > ctx->info.max_memory_allocation_size, ctx, VKC_ERROR_LIMIT,
                  "vkc_buffer_create: %llu bytes exceed maxMemoryAllocationSize (%llu bytes)",
                  (unsigned long long)desc->size,
                  (unsigned long long)ctx->info.max_memory_allocation_size);
    return vkc__buffer_new(ctx, desc->size, desc->memory, desc->name, true, out);
}

void vkc_buffer_destroy(vkc_buffer *buf)
{
    if (!vkc__obj_is(buf, VKC_MAGIC_BUFFER))
        return;
    vkc_context *ctx = buf->obj.ctx;
    VKC_STAT_SUB(ctx, buffers, 1);
    /* No wait: work recorded or in flight holds its own reference, and the
     * memory goes back when the last one does. Units that completed let go
     * of theirs now, so memory of finished work returns at once (the
     * immediate batches kept for repeats that name it first). */
    vkc__forget_immediate(ctx, buf);
    vkc__obj_kill(&buf->obj, VKC_MAGIC_BUFFER);
    vkc__pool_retire(ctx);
}

void vkc__memory_drop(vkc_context *ctx)
{
    for (vkc__node *n = ctx->buffers.next, *next; n && n != &ctx->buffers; n = next) {
        next = n->next; /* a destroy frees this one at most */
        vkc_buffer_destroy((vkc_buffer *)VKC_OBJ_OF(n));
    }
}

vkc_result vkc_buffer_address(const vkc_buffer *buf, uint64_t *out)
{
    if (out)
        *out = 0;
    if (!vkc__obj_is(buf, VKC_MAGIC_BUFFER))
        return vkc__obj_check(NULL, buf, VKC_MAGIC_BUFFER, "vkc_buffer_address");
    vkc_context *ctx = buf->obj.ctx;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_buffer_address: out is NULL");
    VKC_RETURN_IF(!ctx->features.buffer_device_address, ctx, VKC_ERROR_UNSUPPORTED,
                  "buffer \"%s\": the context has no bufferDeviceAddress", buf->name);
    VKC_RETURN_IF(buf->wrapped, ctx, VKC_ERROR_UNSUPPORTED,
                  "buffer \"%s\" wraps the host's VkBuffer: vkc did not give it an address",
                  buf->name);
    VkBufferDeviceAddressInfo ai = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = buf->buffer;
    *out = ctx->vk.vkGetBufferDeviceAddress(ctx->device, &ai) + buf->offset;
    return VKC_SUCCESS;
}

uint64_t vkc_buffer_size(const vkc_buffer *buf)
{
    return vkc__obj_is(buf, VKC_MAGIC_BUFFER) ? buf->size : 0;
}

void *vkc_buffer_map(vkc_buffer *buf)
{
    if (!vkc__obj_is(buf, VKC_MAGIC_BUFFER) || !buf->mapped)
        return NULL;
    /* Best effort: a failed barrier submission has set the context's error
     * (and a lost device has bigger consequences); the mapping stands. */
    (void)vkc__buffer_host_reads(buf);
    return buf->mapped;
}

vkc_result vkc__buffer_host_reads(vkc_buffer *buf)
{
    if (VKC_LIKELY(atomic_load_explicit(&buf->host_read, memory_order_acquire)) ||
        atomic_exchange(&buf->host_read, true))
        return VKC_SUCCESS;
    vkc_context *ctx = buf->obj.ctx;
    atomic_fetch_add(&ctx->map_epoch, 1);
    /* Earlier work wrote it without a host barrier: an empty one-shot
     * submission is one, after all of it (its leading barrier follows
     * everything submitted before, its end makes writes visible to the
     * host). The open immediate batch goes first. */
    VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    return vkc__oneshot_end_wait(ctx, cmd);
}

vkc_result vkc_buffer_vk(const vkc_buffer *buf, VkBuffer *out_buffer, VkDeviceSize *out_offset)
{
    if (out_buffer)
        *out_buffer = VK_NULL_HANDLE;
    if (out_offset)
        *out_offset = 0;
    VKC_FORWARD(vkc__obj_check(NULL, buf, VKC_MAGIC_BUFFER, "vkc_buffer_vk"));
    VKC_RETURN_IF(!out_buffer, buf->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_buffer_vk: out_buffer is NULL");
    *out_buffer = buf->buffer;
    if (out_offset)
        *out_offset = buf->offset;
    return VKC_SUCCESS;
}

/* ---- device-loss recovery --------------------------------------------------------------- */

vkc_result vkc__memory_lose(vkc_context *ctx)
{
    /* The caller's buffers give up their VkBuffer and memory (the structs,
     * their names and sizes stay); then the module state goes. */
    for (vkc__node *n = ctx->buffers.next; n != &ctx->buffers; n = n->next) {
        vkc_buffer *buf = (vkc_buffer *)VKC_OBJ_OF(n);
        if (buf->wrapped && buf->obj.magic != VKC_MAGIC_BUFFER) {
            /* Destroyed, named only by sequences that must be recorded
             * again: the host's VkBuffer is not vkc's to rebuild. */
            buf->buffer = VK_NULL_HANDLE;
            continue;
        }
        if (buf->wrapped)
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "buffer \"%s\" wraps a VkBuffer of the host: it cannot be rebuilt",
                            buf->name);
        if (buf->buffer)
            ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, ctx->alloc);
        if (buf->block)
            vkc__release(ctx, buf->block, buf->block_offset, buf->alloc_size);
        buf->buffer = VK_NULL_HANDLE;
        buf->block = NULL;
        buf->mapped = NULL;
        buf->host_visible = buf->host_coherent = buf->host_cached = false;
    }
    vkc__memory_finish(ctx);
    return VKC_SUCCESS;
}

vkc_result vkc__memory_rebuild(vkc_context *ctx)
{
    VKC_FORWARD(vkc__memory_init(ctx));
    for (vkc__node *n = ctx->buffers.next; n != &ctx->buffers; n = n->next) {
        vkc_buffer *buf = (vkc_buffer *)VKC_OBJ_OF(n);
        if (buf->buffer || buf->wrapped)
            continue;
        /* A fresh unlisted buffer of the same size and kind lends its device
         * objects to the old struct, so the caller's handle stays valid; the
         * new uid tells sequences the buffer was replaced. */
        vkc_buffer *tmp = NULL;
        VKC_FORWARD(vkc__buffer_new(ctx, buf->size, buf->memory, buf->name, false, &tmp));
        buf->buffer = tmp->buffer;
        buf->offset = tmp->offset;
        buf->block = tmp->block;
        buf->block_offset = tmp->block_offset;
        buf->alloc_size = tmp->alloc_size;
        buf->host_visible = tmp->host_visible;
        buf->host_coherent = tmp->host_coherent;
        buf->host_cached = tmp->host_cached;
        buf->mapped = tmp->mapped;
        buf->uid = tmp->uid;
        tmp->obj.magic = 0;
        vkc__free(tmp);
    }
    return VKC_SUCCESS;
}

/* ---- lifetime ------------------------------------------------------------------------- */

void vkc__memory_force_staging(vkc_context *ctx, bool on)
{
    if (ctx && ctx->memory_state)
        atomic_store(&vkc__ms(ctx)->force_staging, on);
}

void vkc__memory_force_uncached(vkc_context *ctx, bool on)
{
    if (ctx && ctx->memory_state)
        atomic_store(&vkc__ms(ctx)->force_uncached, on);
}

vkc_result vkc__memory_init(vkc_context *ctx)
{
    vkc__memory_state *ms = vkc__calloc(1, sizeof(*ms));
    if (!ms)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "memory module");
    pthread_mutex_init(&ms->lock, NULL);
    for (int d = 0; d < 2; ++d)
        pthread_mutex_init(&ms->staging[d].lock, NULL);
    atomic_init(&ms->next_uid, 1);
    atomic_init(&ms->force_staging, false);
    atomic_init(&ms->force_uncached, false);
    ctx->memory_state = ms;

    VkPhysicalDeviceProperties props;
    ctx->vki.vkGetPhysicalDeviceProperties(ctx->phys, &props);
    ms->atom = props.limits.nonCoherentAtomSize ? props.limits.nonCoherentAtomSize : 1;

    const VkPhysicalDeviceMemoryProperties *mp = &ctx->mem_props;
    uint32_t cand[VK_MAX_MEMORY_TYPES];
    if (vkc__memory_pick_types(mp, VKC_MEMORY_READBACK, UINT32_MAX, cand))
        ms->readback_cached =
            mp->memoryTypes[cand[0]].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    for (uint32_t t = 0; t < mp->memoryTypeCount; ++t) {
        /* 64 MiB, or an eighth of a small heap; never more than one
         * allocation may be. */
        VkDeviceSize heap = mp->memoryHeaps[mp->memoryTypes[t].heapIndex].size;
        VkDeviceSize bs = VKC_BLOCK_SIZE;
        while (bs > VKC_BLOCK_MIN && bs > heap / 8)
            bs /= 2;
        ms->block_size[t] = VKC_MIN(bs, (VkDeviceSize)ctx->info.max_memory_allocation_size);
    }
    return VKC_SUCCESS;
}

void vkc__memory_finish(vkc_context *ctx)
{
    vkc__memory_state *ms = vkc__ms(ctx);
    if (!ms)
        return;
    for (int d = 0; d < 2; ++d) {
        if (ms->staging[d].buf) {
            vkc__buffer_free(ctx, ms->staging[d].buf);
            ms->staging[d].buf = NULL;
            VKC_STAT_SUB(ctx, staging_blocks, 1);
        }
        pthread_mutex_destroy(&ms->staging[d].lock);
    }
    /* Buffers were destroyed before: only kept empty blocks remain. */
    for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; ++t) {
        while (ms->blocks[t]) {
            vkc__block *b = ms->blocks[t];
            ms->blocks[t] = b->next;
            vkc__block_free(ctx, b);
        }
    }
    pthread_mutex_destroy(&ms->lock);
    vkc__free(ms);
    ctx->memory_state = NULL;
}
