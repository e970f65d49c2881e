/* The memory module's insides, shared by its files only (memory.c: blocks
 * and buffers; transfer.c: staging and the blocking transfers). */
#ifndef VKC_MEMORY_H
#define VKC_MEMORY_H

#include "vkc_internal.h"

typedef struct vkc__range {
    VkDeviceSize offset, size;
} vkc__range;

struct vkc__block {
    vkc__block *next; /* in its memory type's list */
    VkDeviceMemory memory;
    VkDeviceSize size;
    uint32_t type;
    bool dedicated;
    char *mapped;     /* whole block, host-visible types only */
    uint32_t live;    /* allocations inside */
    vkc__range *free; /* sorted by offset, never adjacent */
    uint32_t free_count, free_cap;
};

enum { VKC__UP = 0, VKC__DOWN = 1 };

typedef struct vkc__staging {
    pthread_mutex_t lock; /* one transfer at a time per direction */
    vkc_buffer *buf;      /* lazily created, not on ctx->buffers */
    /* A timed-out transfer's last copy (0: none): the ring is not touched
     * again before it completed. */
    uint64_t busy;
} vkc__staging;

typedef struct vkc__memory_state {
    pthread_mutex_t lock; /* the allocator: blocks and their free lists */
    vkc__block *blocks[VK_MAX_MEMORY_TYPES];
    VkDeviceSize block_size[VK_MAX_MEMORY_TYPES];
    VkDeviceSize atom; /* nonCoherentAtomSize */
    atomic_uint_fast64_t next_uid;
    atomic_bool force_staging;
    atomic_bool force_uncached;
    bool readback_cached; /* READBACK (staging) memory is host-cached */
    vkc__staging staging[2];
} vkc__memory_state;

static inline VkDeviceSize vkc__align_up(VkDeviceSize v, VkDeviceSize a)
{
    return a > 1 ? (v + a - 1) / a * a : v;
}

static inline VkDeviceSize vkc__align_down(VkDeviceSize v, VkDeviceSize a)
{
    return a > 1 ? v / a * a : v;
}

static inline vkc__memory_state *vkc__ms(vkc_context *ctx)
{
    return (vkc__memory_state *)ctx->memory_state;
}

/* memory.c: create a buffer; `listed` buffers are the caller's (on
 * ctx->buffers, counted in stats.buffers), others are vkc's own (staging). */
vkc_result vkc__buffer_new(vkc_context *ctx, uint64_t size, vkc_memory kind, const char *name,
                           bool listed, vkc_buffer **out);

#endif /* VKC_MEMORY_H */
