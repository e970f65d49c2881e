/* Pool module: recycling of recording units (command pool + command buffer +
 * fallback descriptor pools), profiling queries, submission and the
 * one-shot work; barriers are in barrier.c, the timeline's waits and the
 * completion marker in wait.c.
 *
 * Owns: vkc__pool, the fence ring's slots, the queue submission. Calls:
 * context (errors, names), wait (vkc__raise_completed,
 * vkc__fences_retire_locked, vkc__completed_value, vkc__wait_bounded,
 * vkc__cmd_marker); never dispatch. */
#include "vkc_internal.h"

#include <stdio.h>

/* Fallback descriptor pools: sized so a typical sequence needs one. */
#define VKC_DPOOL_SETS 256
#define VKC_DPOOL_STORAGE 2048
#define VKC_DPOOL_UNIFORM 256
/* Fence ring of the no-timeline fallback. */
#define VKC_FENCE_RING 64
/* Where the trusted marker tells the host when results are visible, a submit
 * signals the timeline only at least every VKC_SIGNAL_EVERY values (and
 * whenever a new recording's first submit, a host wait, an export, a
 * one-shot or the pool needs it: see vkc__submit_signals). A
 * signal completes only after every earlier submission on the queue (its
 * first synchronisation scope), so one signal retires all the units before
 * it. On the H200's slow driver mode each signal costs ~30 us of round trip:
 * at 128 fewer than 1% of the resubmits of a recorded sequence carry one,
 * so a p99 does not see it; a unit waits for a signal at most 127 values
 * after its sequence lets it go. */
#define VKC_SIGNAL_EVERY 128u
/* Where first submits do not signal (VKC_FIRST_SIGNAL=0, VKC_SIGNAL_ADAPT's
 * quiet batches), the pool asks for a signal once this many submits went
 * since the last signal with units waiting for one: early enough that the
 * signalled batch completes while free units remain, so no new one is made.
 * Before the twenty-third session it asked only once the free list was
 * empty, which made one unit more every round (a loop of fresh batches of
 * one went from 2 units to 129, as many as VKC_SIGNAL_EVERY allows). Every
 * free unit then comes round in turn, each cold on its first long
 * recording (H100, job Z41, slow mode: dispatch calls p50 1,112 us against
 * 897 at 1,024 commands). Bounded, the pool stays at 18-20 units on the
 * H100 (job Z43), yet the slow mode's loss from 256 commands stayed: see
 * vkc__pool_trim. */
#define VKC_ASK_PENDING 16u

/* ---- recording units --------------------------------------------------------- */

/* A unit with unread profile results hands them over before it is reset,
 * submitted again or destroyed. */
static inline void vkc__cmd_profile_reuse(vkc_context *ctx, vkc__cmd *c)
{
    if (VKC_UNLIKELY(VKC__PROFILED(atomic_load_explicit(&c->prof_value, memory_order_acquire))) &&
        ctx->profile)
        ctx->profile->reuse(ctx, c);
}

static void vkc__cmd_destroy(vkc_context *ctx, vkc__cmd *c)
{
    vkc__cmd_profile_reuse(ctx, c);
    if (c->queries)
        ctx->vk.vkDestroyQueryPool(ctx->device, c->queries, ctx->alloc);
    vkc__free(c->spans);
    for (uint32_t i = 0; i < c->dpool_count; ++i) {
        ctx->vk.vkDestroyDescriptorPool(ctx->device, c->dpools[i], ctx->alloc);
        VKC_STAT_SUB(ctx, descriptor_pools, 1);
    }
    vkc__free(c->dpools);
    if (c->pool) {
        ctx->vk.vkDestroyCommandPool(ctx->device, c->pool, ctx->alloc);
        VKC_STAT_SUB(ctx, command_buffers, 1);
    }
    vkc__free(c);
}

static vkc_result vkc__cmd_new(vkc_context *ctx, vkc__cmd **out)
{
    *out = NULL;
    vkc__cmd *c = vkc__calloc(1, sizeof(*c));
    if (!c)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "recording unit");
    VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.queueFamilyIndex = ctx->info.queue_family;
    VkResult vr = VKC_VK(vkCreateCommandPool,
                         ctx->vk.vkCreateCommandPool(ctx->device, &pci, ctx->alloc, &c->pool));
    if (vr < 0) {
        c->pool = VK_NULL_HANDLE;
        vkc__cmd_destroy(ctx, c);
        return vkc__vk_fail(ctx, vr, "vkCreateCommandPool", __FILE__, __LINE__);
    }
    VKC_STAT_ADD(ctx, command_buffers, 1);
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = c->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vr = VKC_VK(vkAllocateCommandBuffers,
                ctx->vk.vkAllocateCommandBuffers(ctx->device, &ai, &c->cb));
    if (vr < 0) {
        vkc__cmd_destroy(ctx, c);
        return vkc__vk_fail(ctx, vr, "vkAllocateCommandBuffers", __FILE__, __LINE__);
    }
    *out = c;
    return VKC_SUCCESS;
}

/* Detach the units whose last submit completed (all of them with `all`)
 * from the pending list and return them as a chain, holds intact. Caller
 * holds pool.lock. Polls the driver at most once. */
static vkc__cmd *vkc__retire_locked(vkc_context *ctx, bool all)
{
    vkc__pool *p = &ctx->pool;
    if (!p->pending_head)
        return NULL;
    uint64_t done =
        all ? UINT64_MAX : atomic_load_explicit(&ctx->completed_value, memory_order_acquire);
    if (p->pending_head->last_value > done)
        done = vkc__completed_value(ctx);
    vkc__cmd *chain = p->pending_head, **tail = &chain;
    uint32_t n = 0;
    for (; *tail && (*tail)->last_value <= done; ++n)
        tail = &(*tail)->next;
    if (tail == &chain)
        return NULL;
    p->pending_n -= n;
    p->pending_head = *tail;
    if (!p->pending_head)
        p->pending_tail = NULL;
    *tail = NULL;
    return chain;
}

static void vkc__cmd_let_go(vkc__cmd *c)
{
    for (int i = 0; i < VKC_CMD_HOLDS; ++i) {
        vkc__obj *h = c->hold[i];
        c->hold[i] = NULL;
        vkc__obj_release(h);
    }
}

/* The free list is a stack: the unit freed last is reused first (likely
 * still warm in the host's caches). A queue that reused a unit only while
 * N others waited behind it (VKC_UNIT_AGE, sessions 20-22) was tried
 * against NVIDIA's slow mode, where a unit taken back right after its
 * submit completed had paid about 40 us in vkResetCommandPool and
 * vkBeginCommandBuffer (H200, job Z28). On an H100 it brought nothing in
 * that mode (jobs Z33 and Z36: K=1 67.3 us against 66.6, 60.9 against
 * 60.8) and cost 1-18% in the fast mode from K=64 (Z33, Z34); that mode's
 * price is each fresh batch's timeline signal (Z36: 60.8 us with it, 15.0
 * without; BENCHMARKS.md, twenty-second session). Caller holds pool.lock. */
static vkc__cmd *vkc__free_pop_locked(vkc__pool *p)
{
    vkc__cmd *c = p->free_head;
    if (c) {
        p->free_head = c->next;
        c->next = NULL;
    }
    return c;
}

/* Caller holds pool.lock: chain (ending in last) goes on top. */
static void vkc__free_push_locked(vkc__pool *p, vkc__cmd *chain, vkc__cmd *last)
{
    last->next = p->free_head;
    p->free_head = chain;
}

/* Caller holds pool.lock: cut up to p->trim units off the bottom of the
 * free list (the ones freed longest ago), leaving one; returns them. */
static vkc__cmd *vkc__free_cut_locked(vkc__pool *p)
{
    uint32_t n = 0;
    for (vkc__cmd *c = p->free_head; c; c = c->next)
        ++n;
    const uint32_t cut = n > 1 ? VKC_MIN(p->trim, n - 1) : 0;
    if (!cut)
        return NULL;
    vkc__cmd **link = &p->free_head;
    for (uint32_t i = 0; i < n - cut; ++i)
        link = &(*link)->next;
    vkc__cmd *dead = *link;
    *link = NULL;
    p->trim -= cut;
    return dead;
}

/* Retired units let go of their holds, then join the free list; where
 * `take` points at NULL, the top of the list goes there, under the same
 * lock. The holds go outside the pool lock: the last reference of an
 * object runs its free function, which takes objects_lock and the
 * allocator's lock (lock order: pool.lock is never held while either is
 * taken). Units a trim still wants (vkc__pool_trim) go from the
 * bottom of the list, destroyed outside the lock. */
static void vkc__settle(vkc_context *ctx, vkc__cmd *chain, vkc__cmd **take)
{
    if (!chain)
        return;
    vkc__cmd *last = chain;
    for (vkc__cmd *c = chain; c; c = c->next) {
        vkc__cmd_let_go(c);
        last = c;
    }
    vkc__pool *p = &ctx->pool;
    pthread_mutex_lock(&p->lock);
    vkc__free_push_locked(p, chain, last);
    if (take && !*take)
        *take = vkc__free_pop_locked(p);
    vkc__cmd *dead = VKC_UNLIKELY(p->trim) ? vkc__free_cut_locked(p) : NULL;
    pthread_mutex_unlock(&p->lock);
    while (dead) {
        vkc__cmd *next = dead->next;
        vkc__cmd_destroy(ctx, dead);
        dead = next;
    }
}

/* A quiet stretch (VKC_SIGNAL_ADAPT) grows the pool to 18-20 units, where
 * every fresh batch signalling keeps 2-7 (vkc-bench batch, H100, job Z43).
 * Units came back only once the free list was empty, so all of them went
 * round in turn; in NVIDIA's slow mode the adaptive context then signalled
 * as the default does at K=256 but took 1.08-1.09 of its time (dispatch
 * calls 134 us p50 against 121, the flush 239 against 185). Shrinking it
 * back where the stretch ends gives their memory back; since the pool
 * retires seen units before it pops (vkc__pending_seen_locked), the units
 * beyond the few in use stay cold at the bottom of the list until then. */
void vkc__pool_trim(vkc_context *ctx, uint32_t keep)
{
    vkc__pool *p = &ctx->pool;
    const uint64_t alive = atomic_load_explicit(&ctx->stats.command_buffers, memory_order_relaxed);
    pthread_mutex_lock(&p->lock);
    p->trim = alive > keep ? (uint32_t)VKC_MIN(alive - keep, UINT32_MAX) : 0;
    pthread_mutex_unlock(&p->lock);
}

static void vkc__pool_retire_as(vkc_context *ctx, bool all)
{
    vkc__pool *p = &ctx->pool;
    pthread_mutex_lock(&p->lock);
    vkc__cmd *chain = vkc__retire_locked(ctx, all);
    pthread_mutex_unlock(&p->lock);
    vkc__settle(ctx, chain, NULL);
}

void vkc__pool_retire(vkc_context *ctx)
{
    vkc__pool_retire_as(ctx, false);
}

void vkc__pool_drop(vkc_context *ctx)
{
    vkc__pool_retire_as(ctx, true);
}

vkc_result vkc__cmd_acquire(vkc_context *ctx, vkc__cmd **out)
{
    return vkc__cmd_acquire_as(ctx, true, out);
}

/* Caller holds pool.lock: whether the oldest pending unit looks complete
 * while free units remain. Retiring it then, rather than only once the
 * free list is empty, keeps the units in use few and warm: otherwise every
 * unit a burst made goes round in turn for good (job Z44, H100, fast mode:
 * the adaptive context kept 8 units where always signalling kept 2-6, and
 * took 1.003-1.057 of that context's time; test_pool_warm: 17 units in
 * turn after a burst of 24, 2 with this). It looks complete where its
 * signal was submitted and the cached completed value or the marker (a
 * host read) says it ran; only then is the driver asked
 * (vkc__retire_locked), when it will most likely say yes; where the
 * signal still lags the marker it says no, and a free unit is popped as
 * before. A query took 0.05 us on an H100 (vkGetSemaphoreCounterValue,
 * VKC_TIME_CALLS, nineteenth session), against 15 us for the fastest fresh
 * batch. A quiet batch, whose value no submit signalled yet, costs no
 * query. Not measured on a GPU yet (job Z45 is prepared). */
static bool vkc__pending_seen_locked(vkc_context *ctx, const vkc__pool *p)
{
    if (!p->pending_head)
        return false;
    const uint64_t v = p->pending_head->last_value;
    if (v <= atomic_load_explicit(&ctx->completed_value, memory_order_acquire))
        return true;
    return v <= atomic_load_explicit(&ctx->signalled_value, memory_order_relaxed) &&
           vkc__marker_on(ctx) && vkc__marker_done(ctx, v);
}

vkc_result vkc__cmd_acquire_as(vkc_context *ctx, bool simultaneous, vkc__cmd **out)
{
    *out = NULL;
    vkc__pool *p = &ctx->pool;
    pthread_mutex_lock(&p->lock);
    vkc__cmd *done =
        !p->free_head || vkc__pending_seen_locked(ctx, p) ? vkc__retire_locked(ctx, false) : NULL;
    vkc__cmd *c = done ? NULL : vkc__free_pop_locked(p);
    /* Units wait for a signal: where none is free, or VKC_ASK_PENDING
     * submits went since the last signal, the next submit gives one. */
    if (p->pending_head &&
        ((!c && !done &&
          (atomic_load_explicit(&ctx->first_signals, memory_order_relaxed) ||
           p->pending_n >= VKC_ASK_PENDING)) ||
         p->pending_tail->last_value >=
             atomic_load_explicit(&ctx->signalled_value, memory_order_relaxed) + VKC_ASK_PENDING))
        atomic_store_explicit(&ctx->signal_asked, true, memory_order_relaxed);
    pthread_mutex_unlock(&p->lock);
    /* The retired units join the free list; the first of them is taken. */
    vkc__settle(ctx, done, &c);
    if (!c) {
        VKC_FORWARD(vkc__cmd_new(ctx, &c));
    } else {
        vkc__cmd_profile_reuse(ctx, c);
        /* Reused: reset the pool (and the command buffer with it). */
        VkResult vr =
            VKC_VK(vkResetCommandPool, ctx->vk.vkResetCommandPool(ctx->device, c->pool, 0));
        for (uint32_t i = 0; vr >= 0 && i < c->dpool_count; ++i)
            vr = VKC_VK(vkResetDescriptorPool,
                        ctx->vk.vkResetDescriptorPool(ctx->device, c->dpools[i], 0));
        if (vr < 0) {
            vkc__cmd_destroy(ctx, c);
            return vkc__vk_fail(ctx, vr, "vkResetCommandPool", __FILE__, __LINE__);
        }
        c->dpool_current = 0;
        VKC_STAT_ADD(ctx, command_buffers_reset, 1);
    }
    c->next = NULL;
    c->last_value = 0;
    /* Retired or new: no submit of it is pending, so a cancel's 0 can go. */
    if (atomic_load_explicit(&c->pred_zero, memory_order_acquire) && ctx->arm_pred)
        ctx->arm_pred[c->pred_slot - 1] = 1;
    atomic_store_explicit(&c->pred_zero, false, memory_order_relaxed);
    c->conditional = false;
    c->has_marker = false;
    c->needs_signal = false;
    c->marker_optional = false;
    c->signal_later = false;
    c->query_count = c->span_count = 0;
    c->record_ns[0] = c->record_ns[1] = 0;
    c->simultaneous = simultaneous;
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = c->simultaneous ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT : 0;
    VkResult vr = VKC_VK(vkBeginCommandBuffer, ctx->vk.vkBeginCommandBuffer(c->cb, &bi));
    if (vr < 0) {
        vkc__cmd_release(ctx, c);
        return vkc__vk_fail(ctx, vr, "vkBeginCommandBuffer", __FILE__, __LINE__);
    }
    *out = c;
    return VKC_SUCCESS;
}

void vkc__cmd_release(vkc_context *ctx, vkc__cmd *c)
{
    if (!c)
        return;
    vkc__pool *p = &ctx->pool;
    vkc__obj *drop[VKC_CMD_HOLDS] = {NULL};
    pthread_mutex_lock(&p->lock);
    c->next = NULL;
    if (c->last_value == 0 ||
        c->last_value <= atomic_load_explicit(&ctx->completed_value, memory_order_acquire)) {
        for (int i = 0; i < VKC_CMD_HOLDS; ++i) { /* done: let go, outside the lock */
            drop[i] = c->hold[i];
            c->hold[i] = NULL;
        }
        vkc__free_push_locked(p, c, c);
    } else if (p->pending_tail && p->pending_tail->last_value > c->last_value) {
        /* Keep pending sorted by value: insert in place (rare). */
        vkc__cmd **pp = &p->pending_head;
        while (*pp && (*pp)->last_value <= c->last_value)
            pp = &(*pp)->next;
        c->next = *pp;
        *pp = c;
        if (!c->next)
            p->pending_tail = c;
        ++p->pending_n;
    } else {
        if (p->pending_tail)
            p->pending_tail->next = c;
        else
            p->pending_head = c;
        p->pending_tail = c;
        ++p->pending_n;
    }
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < VKC_CMD_HOLDS; ++i)
        vkc__obj_release(drop[i]);
}

vkc_result vkc__cmd_alloc_set(vkc_context *ctx, vkc__cmd *c, VkDescriptorSetLayout layout,
                              VkDescriptorSet *out)
{
    for (;;) {
        if (c->dpool_current < c->dpool_count) {
            VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
            ai.descriptorPool = c->dpools[c->dpool_current];
            ai.descriptorSetCount = 1;
            ai.pSetLayouts = &layout;
            VkResult vr = VKC_VK(vkAllocateDescriptorSets,
                                 ctx->vk.vkAllocateDescriptorSets(ctx->device, &ai, out));
            if (vr == VK_SUCCESS) {
                VKC_STAT_ADD(ctx, descriptor_sets, 1);
                return VKC_SUCCESS;
            }
            if (vr != VK_ERROR_OUT_OF_POOL_MEMORY && vr != VK_ERROR_FRAGMENTED_POOL)
                return vkc__vk_fail(ctx, vr, "vkAllocateDescriptorSets", __FILE__, __LINE__);
            /* Full: move on to the next pool, or make one. */
            c->dpool_current++;
            continue;
        }
        if (c->dpool_count == c->dpool_cap) {
            uint32_t cap = c->dpool_cap ? c->dpool_cap * 2 : 2;
            VkDescriptorPool *np = vkc__realloc(c->dpools, cap * sizeof(*np));
            if (!np)
                return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "descriptor pool list");
            c->dpools = np;
            c->dpool_cap = cap;
        }
        VkDescriptorPoolSize sizes[] = {
            {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VKC_DPOOL_STORAGE},
            {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, VKC_DPOOL_UNIFORM},
            {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, VKC_DPOOL_UNIFORM},
            {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, VKC_DPOOL_UNIFORM},
            {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VKC_DPOOL_UNIFORM},
            {VK_DESCRIPTOR_TYPE_SAMPLER, VKC_DPOOL_UNIFORM},
        };
        VkDescriptorPoolCreateInfo pci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pci.maxSets = VKC_DPOOL_SETS;
        pci.poolSizeCount = (uint32_t)VKC_ARRAY_COUNT(sizes);
        pci.pPoolSizes = sizes;
        VkDescriptorPool dp;
        VkResult vr = VKC_VK(vkCreateDescriptorPool,
                             ctx->vk.vkCreateDescriptorPool(ctx->device, &pci, ctx->alloc, &dp));
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkCreateDescriptorPool", __FILE__, __LINE__);
        VKC_STAT_ADD(ctx, descriptor_pools, 1);
        c->dpools[c->dpool_count++] = dp;
        c->dpool_current = c->dpool_count - 1;
    }
}

/* ---- profiling queries ------------------------------------------------------------ */

vkc_result vkc__cmd_queries(vkc_context *ctx, vkc__cmd *c, uint32_t spans)
{
    c->query_count = c->span_count = 0;
    const uint32_t need = 2 * spans;
    if (need > c->query_cap) {
        /* Grown with headroom so a sequence that grows a little does not
         * make a new pool at each recording. */
        uint32_t cap = VKC_MAX(need + need / 2, 64u);
        VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = cap;
        VkQueryPool qp = VK_NULL_HANDLE;
        VkResult vr =
            VKC_VK(vkCreateQueryPool, ctx->vk.vkCreateQueryPool(ctx->device, &qi, ctx->alloc, &qp));
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkCreateQueryPool(timestamps)", __FILE__, __LINE__);
        vkc__span *sp = vkc__realloc(c->spans, (size_t)spans * sizeof(*sp));
        if (!sp) {
            ctx->vk.vkDestroyQueryPool(ctx->device, qp, ctx->alloc);
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "profile spans");
        }
        c->spans = sp;
        c->span_cap = spans;
        if (c->queries)
            ctx->vk.vkDestroyQueryPool(ctx->device, c->queries, ctx->alloc);
        c->queries = qp;
        c->query_cap = cap;
        vkc__set_name(ctx, VK_OBJECT_TYPE_QUERY_POOL, (uint64_t)qp, "vkc profile timestamps");
    } else if (spans > c->span_cap) {
        vkc__span *sp = vkc__realloc(c->spans, (size_t)spans * sizeof(*sp));
        if (!sp)
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "profile spans");
        c->spans = sp;
        c->span_cap = spans;
    }
    ctx->vk.vkCmdResetQueryPool(c->cb, c->queries, 0, need);
    c->query_count = need;
    return VKC_SUCCESS;
}

void vkc__cmd_span_begin(vkc_context *ctx, vkc__cmd *c, uint8_t kind, const char *label)
{
    if (!c->query_count || c->span_count * 2 >= c->query_count)
        return;
    vkc__span *sp = &c->spans[c->span_count];
    sp->kind = kind;
    snprintf(sp->label, sizeof(sp->label), "%s", label ? label : "");
    ctx->vk.vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, c->queries,
                                2 * c->span_count);
    c->span_count++;
}

void vkc__cmd_span_end(vkc_context *ctx, vkc__cmd *c, uint32_t span)
{
    if (!c->query_count || span >= c->span_count)
        return;
    /* BOTTOM_OF_PIPE: after everything before it in the command buffer. */
    ctx->vk.vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->queries,
                                2 * span + 1);
}

/* ---- submission ------------------------------------------------------------------ */

static vkc_result vkc__fence_slot_locked(vkc_context *ctx, VkFence *out)
{
    VKC_FORWARD(vkc__fences_retire_locked(ctx));
    if (ctx->fence_count == ctx->fence_cap) {
        /* Ring full: wait for the oldest. */
        uint32_t i = ctx->fence_head;
        const uint64_t start = vkc__now_ns();
        VkResult vr;
        for (;;) { /* a driver may return early: only the bound ends the wait */
            uint64_t spent = vkc__now_ns() - start;
            uint64_t left = spent < ctx->wait_timeout_ns ? ctx->wait_timeout_ns - spent : 0;
            vr = VKC_VK(vkWaitForFences,
                        ctx->vk.vkWaitForFences(ctx->device, 1, &ctx->fences[i], VK_TRUE, left));
            if (vr != VK_TIMEOUT || !left)
                break;
        }
        if (vr == VK_TIMEOUT)
            return VKC_FAIL(ctx, VKC_TIMEOUT,
                            "submit: all %u fences of the fence ring are in flight and the oldest "
                            "did not complete within the wait bound",
                            ctx->fence_cap);
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkWaitForFences", __FILE__, __LINE__);
        VKC_FORWARD(vkc__fences_retire_locked(ctx));
    }
    uint32_t slot = (ctx->fence_head + ctx->fence_count) % ctx->fence_cap;
    *out = ctx->fences[slot];
    return VKC_SUCCESS;
}

/* Whether the submit of value signals the timeline; caller holds queue_lock.
 * Without the trusted marker every submit signals (the host learns of
 * completion from the timeline alone). */
bool vkc__submit_signals(vkc_context *ctx, const vkc__cmd *cmd, uint64_t value, uint32_t host_waits,
                         uint64_t signalled, bool asked)
{
    if (!ctx->features.timeline_semaphores)
        return false;
    if (!vkc__marker_on(ctx) || !atomic_load_explicit(&ctx->marker_trusted, memory_order_relaxed))
        return true;
    /* The first submit of a recording signals (unless VKC_FIRST_SIGNAL=0,
     * an experiment: then the pool asks when it needs units back): the
     * unit it replaces goes back to the pool, which would otherwise keep
     * units waiting for a signal and make new ones meanwhile (a loop that
     * records every submit grew the pool by the GPU's lag on every
     * round). Resubmits of a
     * recorded sequence, the round trip that matters, do not; nor does an
     * immediate piece's, whose rest signals next (signal_later). Host
     * waits: rare, and the host's semaphore order is simpler with a
     * signal. */
    /* A copy without SIMULTANEOUS_USE signals every submit: the next one
     * asks the timeline whether this one is still pending (a long
     * sequence's, whose GPU time dwarfs the signal's). */
    if (cmd->needs_signal ||
        (cmd->last_value == 0 && !cmd->signal_later &&
         atomic_load_explicit(&ctx->first_signals, memory_order_relaxed)) ||
        !cmd->simultaneous || host_waits || asked)
        return true;
    return value - signalled >= ctx->signal_every;
}

/* A submit signalled value; caller holds queue_lock (gate.c too). */
void vkc__signal_note_locked(vkc_context *ctx, uint64_t value)
{
    ctx->signal_ring[ctx->signal_ring_n++ % VKC_SIGNAL_RING] = value;
    atomic_store_explicit(&ctx->signalled_value, value, memory_order_release);
    atomic_store_explicit(&ctx->signal_asked, false, memory_order_relaxed);
    VKC_STAT_ADD(ctx, timeline_signals, 1);
}

uint64_t vkc__signal_cover(vkc_context *ctx, uint64_t value)
{
    if (!ctx->features.timeline_semaphores)
        return value;
    pthread_mutex_lock(&ctx->queue_lock);
    uint64_t cover = value;
    const uint32_t n = VKC_MIN(ctx->signal_ring_n, (uint32_t)VKC_SIGNAL_RING);
    /* Newest first; values only grow. An older value than the ring holds
     * gets its oldest entry: later than needed, never too early. */
    for (uint32_t k = 0; k < n; ++k) {
        uint64_t v = ctx->signal_ring[(ctx->signal_ring_n - 1 - k) % VKC_SIGNAL_RING];
        if (v < value)
            break;
        cover = v;
    }
    pthread_mutex_unlock(&ctx->queue_lock);
    return cover;
}

vkc_result vkc__signal_through(vkc_context *ctx, uint64_t value)
{
    if (!ctx->features.timeline_semaphores ||
        atomic_load_explicit(&ctx->signalled_value, memory_order_acquire) >= value)
        return VKC_SUCCESS;
    if (atomic_load_explicit(&ctx->lost, memory_order_relaxed))
        return VKC_FAIL(ctx, VKC_ERROR_DEVICE_LOST, "the device was lost earlier");
    if (ctx->queue_lock_fn)
        ctx->queue_lock_fn(ctx->queue_lock_user);
    pthread_mutex_lock(&ctx->queue_lock);
    vkc_result r = VKC_SUCCESS;
    /* Not behind an armed copy: it goes (cancelled) first. */
    vkc__arm_cancel_locked(ctx);
    /* The last value handed out, by an empty submit: it waits on nothing and
     * runs nothing, and completes after everything submitted before it. */
    const uint64_t last = ctx->next_value;
    if (atomic_load_explicit(&ctx->signalled_value, memory_order_relaxed) < value &&
        value <= last) {
        VkResult vr;
        if (ctx->features.synchronization2) {
            VkSemaphoreSubmitInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            si.semaphore = ctx->timeline;
            si.value = last;
            si.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
            VkSubmitInfo2 sub = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
            sub.signalSemaphoreInfoCount = 1;
            sub.pSignalSemaphoreInfos = &si;
            vr =
                VKC_VK(vkQueueSubmit2, ctx->vk.vkQueueSubmit2(ctx->queue, 1, &sub, VK_NULL_HANDLE));
        } else {
            VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
            ts.signalSemaphoreValueCount = 1;
            ts.pSignalSemaphoreValues = &last;
            VkSubmitInfo sub = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
            sub.pNext = &ts;
            sub.signalSemaphoreCount = 1;
            sub.pSignalSemaphores = &ctx->timeline;
            vr = VKC_VK(vkQueueSubmit, ctx->vk.vkQueueSubmit(ctx->queue, 1, &sub, VK_NULL_HANDLE));
        }
        if (vr < 0 && vr != VK_ERROR_DEVICE_LOST) {
            /* No signal (out of memory): the queue's idle covers everything
             * submitted as well, and a failed wait here would let a caller
             * free what the GPU still uses. */
            vr = VKC_VK(vkQueueWaitIdle, ctx->vk.vkQueueWaitIdle(ctx->queue));
            if (vr >= 0)
                vkc__raise_completed(ctx, last);
            else
                r = vkc__vk_fail(ctx, vr, "vkQueueWaitIdle", __FILE__, __LINE__);
        } else if (vr < 0) {
            r = vkc__vk_fail(ctx, vr, "vkQueueSubmit(timeline signal)", __FILE__, __LINE__);
        } else {
            vkc__signal_note_locked(ctx, last);
        }
    }
    pthread_mutex_unlock(&ctx->queue_lock);
    if (ctx->queue_unlock_fn)
        ctx->queue_unlock_fn(ctx->queue_lock_user);
    return r;
}
static vkc_result vkc__submit_unit(vkc_context *ctx, vkc__cmd *cmd, vkc__cmd *marker,
                                   uint64_t *out_value, bool *need_marker);

/* The completion marker alone, in a unit of its own: for a unit recorded
 * without it (an immediate batch meant for an idle queue, a sequence whose
 * completion the host's GPU takes) that finds vkc's earlier work running. It orders after
 * everything before it and counts like the marker at the end of a recording. */
static vkc_result vkc__marker_unit(vkc_context *ctx, vkc__cmd **out)
{
    VKC_FORWARD(vkc__cmd_acquire(ctx, out));
    vkc__cmd *c = *out;
    vkc__cmd_marker(ctx, c, VKC_WORK_STAGES, true);
    VkResult vr = VKC_VK(vkEndCommandBuffer, ctx->vk.vkEndCommandBuffer(c->cb));
    vkc_result r = vr < 0 ? vkc__vk_fail(ctx, vr, "vkEndCommandBuffer", __FILE__, __LINE__)
                   : !c->has_marker
                       ? VKC_FAIL(ctx, VKC_ERROR_OUT_OF_DEVICE_MEMORY, "completion marker")
                       : VKC_SUCCESS;
    if (r < 0) {
        vkc__cmd_release(ctx, c);
        *out = NULL;
    }
    return r;
}

/* Submit cmd; a unit recorded without the marker goes without it onto an
 * idle queue (its value then completes on the timeline, and the marker's
 * count trails by one more: vkc__marker_done), else with a marker unit
 * after it in the same submission. */
static vkc_result vkc__submit_marked(vkc_context *ctx, vkc__cmd *cmd, uint64_t *out_value)
{
    bool need = false;
    vkc_result r = vkc__submit_unit(ctx, cmd, NULL, out_value, &need);
    if (VKC_LIKELY(r < 0 || !need))
        return r;
    vkc__cmd *marker = NULL;
    r = vkc__marker_unit(ctx, &marker);
    if (r >= 0)
        r = vkc__submit_unit(ctx, cmd, marker, out_value, &need);
    vkc__cmd_release(ctx, marker); /* pending until its value completes */
    return r;
}

vkc_result vkc__submit(vkc_context *ctx, vkc__cmd *cmd, uint64_t *out_value)
{
    *out_value = 0;
    if (atomic_load_explicit(&ctx->lost, memory_order_relaxed))
        return VKC_FAIL(ctx, VKC_ERROR_DEVICE_LOST, "the device was lost earlier");
    VKC_FORWARD(vkc__resident_order(ctx));
    /* The one test profiling adds to an unprofiled submit. */
    if (VKC_LIKELY(!VKC__PROFILED(cmd->query_count)))
        return vkc__submit_marked(ctx, cmd, out_value);
    /* The queries of the previous submission are overwritten by this one. */
    vkc__cmd_profile_reuse(ctx, cmd);
    cmd->submit_ns[0] = vkc__now_ns();
    vkc_result r = vkc__submit_marked(ctx, cmd, out_value);
    if (r >= 0 && ctx->profile) {
        cmd->submit_ns[1] = vkc__now_ns();
        cmd->submit_tid = vkc__thread_id();
        atomic_store_explicit(&cmd->prof_value, *out_value, memory_order_release);
        ctx->profile->submitted(ctx, cmd);
    }
    return r;
}

/* marker: NULL, or the unit that carries cmd's completion marker, submitted
 * right after it. *need_marker is set (and nothing submitted) when cmd
 * goes without a marker onto a queue that is not idle. */
static vkc_result vkc__submit_unit(vkc_context *ctx, vkc__cmd *cmd, vkc__cmd *marker,
                                   uint64_t *out_value, bool *need_marker)
{
    if (ctx->queue_lock_fn)
        ctx->queue_lock_fn(ctx->queue_lock_user);
    pthread_mutex_lock(&ctx->queue_lock);
    /* Nothing goes onto the queue behind a copy that waits on the gate. */
    vkc__arm_cancel_locked(ctx);
    uint64_t value = ctx->next_value + 1;
    bool skip = false;
    if (VKC_UNLIKELY(vkc__marker_on(ctx) && !cmd->has_marker && !marker)) {
        if (cmd->marker_optional && vkc__queue_idle(ctx, ctx->next_value)) {
            /* Nothing before it is still running: its own value completes
             * on the timeline, every later one through the marker again. */
            skip = true;
        } else if (cmd->marker_optional) {
            *need_marker = true;
            pthread_mutex_unlock(&ctx->queue_lock);
            if (ctx->queue_unlock_fn)
                ctx->queue_unlock_fn(ctx->queue_lock_user);
            return VKC_SUCCESS;
        } else {
            /* The count of markers would fall behind the timeline for good:
             * waits go back to the timeline (never wrong, only slower). */
            atomic_store(&ctx->marker_on, false);
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
                     "a submission without a completion marker: VKC_WAIT_SPIN_MARKER disabled");
        }
    }
    VkResult vr;
    vkc_result r = VKC_SUCCESS;
    VkFence fence = VK_NULL_HANDLE;
    if (!ctx->features.timeline_semaphores) {
        r = vkc__fence_slot_locked(ctx, &fence);
        if (r != VKC_SUCCESS)
            goto out;
    }
    /* Host semaphores registered by vkc_wait_host_semaphore (interop.c):
     * this submit waits on all of them, on every stage. */
    const uint32_t nw = ctx->host_wait_count;
    const bool signal =
        skip ||
        vkc__submit_signals(ctx, cmd, value, nw,
                            atomic_load_explicit(&ctx->signalled_value, memory_order_relaxed),
                            atomic_load_explicit(&ctx->signal_asked, memory_order_relaxed));
    const uint32_t ncb = marker ? 2 : 1;
    VkCommandBuffer cbs[2] = {cmd->cb, marker ? marker->cb : VK_NULL_HANDLE};
    if (ctx->features.synchronization2) {
        VkCommandBufferSubmitInfo cbi[2];
        for (uint32_t i = 0; i < ncb; ++i) {
            cbi[i] = (VkCommandBufferSubmitInfo){VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
            cbi[i].commandBuffer = cbs[i];
        }
        VkSemaphoreSubmitInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        si.semaphore = ctx->timeline;
        si.value = value;
        si.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSemaphoreSubmitInfo wi[VKC_MAX_HOST_WAITS];
        for (uint32_t i = 0; i < nw; ++i) {
            wi[i] = (VkSemaphoreSubmitInfo){VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            wi[i].semaphore = ctx->host_waits[i].semaphore;
            wi[i].value = ctx->host_waits[i].value;
            wi[i].stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        }
        VkSubmitInfo2 sub = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        sub.waitSemaphoreInfoCount = nw;
        sub.pWaitSemaphoreInfos = nw ? wi : NULL;
        sub.commandBufferInfoCount = ncb;
        sub.pCommandBufferInfos = cbi;
        if (signal) {
            sub.signalSemaphoreInfoCount = 1;
            sub.pSignalSemaphoreInfos = &si;
        }
        vr = VKC_VK(vkQueueSubmit2, ctx->vk.vkQueueSubmit2(ctx->queue, 1, &sub, fence));
    } else {
        VkSemaphore wsem[VKC_MAX_HOST_WAITS];
        uint64_t wval[VKC_MAX_HOST_WAITS];
        VkPipelineStageFlags wstage[VKC_MAX_HOST_WAITS];
        for (uint32_t i = 0; i < nw; ++i) {
            wsem[i] = ctx->host_waits[i].semaphore;
            wval[i] = ctx->host_waits[i].value;
            wstage[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        }
        VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        ts.waitSemaphoreValueCount = nw;
        ts.pWaitSemaphoreValues = nw ? wval : NULL;
        ts.signalSemaphoreValueCount = 1;
        ts.pSignalSemaphoreValues = &value;
        VkSubmitInfo sub = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        sub.waitSemaphoreCount = nw;
        sub.pWaitSemaphores = nw ? wsem : NULL;
        sub.pWaitDstStageMask = nw ? wstage : NULL;
        sub.commandBufferCount = ncb;
        sub.pCommandBuffers = cbs;
        if (signal || nw) {
            sub.pNext = &ts;
            ts.signalSemaphoreValueCount = signal ? 1 : 0;
        }
        if (signal) {
            sub.signalSemaphoreCount = 1;
            sub.pSignalSemaphores = &ctx->timeline;
        }
        vr = VKC_VK(vkQueueSubmit, ctx->vk.vkQueueSubmit(ctx->queue, 1, &sub, fence));
    }
    if (vr < 0) {
        r = vkc__vk_fail(ctx, vr, "vkQueueSubmit", __FILE__, __LINE__);
        goto out;
    }
    ctx->next_value = value;
    ctx->host_wait_count = 0; /* consumed */
    if (signal)
        vkc__signal_note_locked(ctx, value);
    if (skip) {
        /* Skip before skew: vkc__marker_done reads them the other way. */
        atomic_store_explicit(&ctx->marker_skip, value, memory_order_release);
        atomic_store_explicit(&ctx->marker_skew,
                              atomic_load_explicit(&ctx->marker_skew, memory_order_relaxed) + 1,
                              memory_order_release);
    }
    if (marker)
        marker->last_value = value;
    if (!ctx->features.timeline_semaphores) {
        uint32_t slot = (ctx->fence_head + ctx->fence_count) % ctx->fence_cap;
        ctx->fence_values[slot] = value;
        ctx->fence_count++;
    }
    atomic_store_explicit(&ctx->submitted_value, value, memory_order_release);
    atomic_store_explicit(&ctx->last_submit, cmd, memory_order_relaxed);
    cmd->last_value = value;
    cmd->run_value = value;
    cmd->run_armed = false;
    *out_value = value;
    VKC_STAT_ADD(ctx, submits, 1);
out:
    pthread_mutex_unlock(&ctx->queue_lock);
    if (ctx->queue_unlock_fn)
        ctx->queue_unlock_fn(ctx->queue_lock_user);
    return r;
}

/* ---- one-shot work (blocking buffer calls) ------------------------------------------ */

vkc_result vkc__oneshot_begin(vkc_context *ctx, vkc__cmd **out)
{
    VKC_FORWARD(vkc__cmd_acquire(ctx, out));
    /* Order after everything submitted before. */
    vkc__cmd_barrier(ctx, (*out)->cb, VKC_WORK_STAGES, vkc__writes_of(VKC_WORK_STAGES),
                     VKC_WORK_STAGES, vkc__accesses_of(VKC_WORK_STAGES));
    return VKC_SUCCESS;
}

void vkc__oneshot_hold(vkc__cmd *cmd, vkc__obj *o)
{
    for (int i = 0; i < VKC_CMD_HOLDS; ++i) {
        if (!cmd->hold[i]) {
            cmd->hold[i] = o;
            vkc__obj_retain(o);
            return;
        }
    }
}

vkc_result vkc__oneshot_end_submit(vkc_context *ctx, vkc__cmd *cmd, VkPipelineStageFlags2 stages,
                                   uint64_t *out_value)
{
    *out_value = 0;
    const VkAccessFlags2 writes = vkc__writes_of(stages);
    /* Make the results visible to the host. */
    vkc__cmd_barrier(ctx, cmd->cb, stages, writes, VK_PIPELINE_STAGE_2_HOST_BIT,
                     VK_ACCESS_2_HOST_READ_BIT);
    vkc__cmd_marker(ctx, cmd, stages, false); /* the barrier above serves the host */
    /* Its waits and its unit's recycling go through the timeline. */
    cmd->needs_signal = true;
    VkResult vr = VKC_VK(vkEndCommandBuffer, ctx->vk.vkEndCommandBuffer(cmd->cb));
    vkc_result r = vr < 0 ? vkc__vk_fail(ctx, vr, "vkEndCommandBuffer", __FILE__, __LINE__)
                          : vkc__submit(ctx, cmd, out_value);
    /* Back to the pool; reused once its submission (if any) completed. */
    vkc__cmd_release(ctx, cmd);
    return r;
}

vkc_result vkc__oneshot_end_wait(vkc_context *ctx, vkc__cmd *cmd)
{
    uint64_t value = 0;
    VKC_FORWARD(vkc__oneshot_end_submit(ctx, cmd, VKC_WORK_STAGES, &value));
    return vkc__wait_bounded(ctx, value, "blocking transfer");
}

/* ---- lifetime ---------------------------------------------------------------------- */

vkc_result vkc__pool_init(vkc_context *ctx)
{
    pthread_mutex_init(&ctx->pool.lock, NULL);
    atomic_init(&ctx->first_signals, true);
    /* Long sequences' copies are begun without SIMULTANEOUS_USE, which some
     * drivers pay for at submit (vkc__seq_plain). VKC_SIMULTANEOUS_USE
     * (experiments): 1 gives every copy the flag, 0 takes it from every
     * copy that cannot be armed (immediate batches too); armed copies keep
     * it (one unit waits behind the gate many times over). */
    bool every = true;
    ctx->cb_plain =
        vkc__env_flag(ctx, "VKC_SIMULTANEOUS_USE", "the default: long sequences without", &every)
            ? (every ? VKC__PLAIN_NONE : VKC__PLAIN_ALL)
            : VKC__PLAIN_LONG;
    if (ctx->features.timeline_semaphores) {
        VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        tci.initialValue = ctx->next_value; /* > 0 only after device-loss recovery */
        atomic_store(&ctx->signalled_value, ctx->next_value);
        atomic_store(&ctx->signal_asked, false);
        ctx->signal_ring_n = 0;
        ctx->signal_every = VKC_SIGNAL_EVERY;
        /* for experiments (vkc-bench's signal-every variants) */
        vkc__env_uint(ctx, "VKC_SIGNAL_EVERY", 1, 1u << 20, "the default: 128", &ctx->signal_every);
        /* VKC_FIRST_SIGNAL=0 (experiments): a recording's first submit
         * signals only where the pool asks (VKC_ASK_PENDING units wait) or
         * every signal_every values, as resubmits do; for batches recorded
         * every time in NVIDIA's slow mode, with VKC_IMM_MARKER=1 so that
         * their completion does not need the signal. In the fast mode it
         * lost (an H100: p50 +3-9%, p99 2.4x at one dispatch a batch;
         * BENCHMARKS.md, eighteenth session). Set, it also turns off
         * immediate mode's choice of it (VKC_SIGNAL_ADAPT). */
        bool first = true;
        ctx->first_signal_fixed = vkc__env_flag(
            ctx, "VKC_FIRST_SIGNAL", "the default: on, or as immediate mode finds", &first);
        atomic_store(&ctx->first_signals, first);
        VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        sci.pNext = &tci;
        VkResult vr =
            VKC_VK(vkCreateSemaphore,
                   ctx->vk.vkCreateSemaphore(ctx->device, &sci, ctx->alloc, &ctx->timeline));
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkCreateSemaphore(timeline)", __FILE__, __LINE__);
        vkc__set_name(ctx, VK_OBJECT_TYPE_SEMAPHORE, (uint64_t)ctx->timeline, "vkc timeline");
        return VKC_SUCCESS;
    }
    ctx->fences = vkc__calloc(VKC_FENCE_RING, sizeof(VkFence));
    ctx->fence_values = vkc__calloc(VKC_FENCE_RING, sizeof(uint64_t));
    if (!ctx->fences || !ctx->fence_values)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fence ring");
    for (uint32_t i = 0; i < VKC_FENCE_RING; ++i) {
        VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkResult vr = VKC_VK(vkCreateFence,
                             ctx->vk.vkCreateFence(ctx->device, &fci, ctx->alloc, &ctx->fences[i]));
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkCreateFence", __FILE__, __LINE__);
        ctx->fence_cap = i + 1;
    }
    return VKC_SUCCESS;
}

void vkc__pool_finish(vkc_context *ctx)
{
    vkc__pool *p = &ctx->pool;
    /* Recovery comes here with units whose work died with the device: they
     * let go of what they hold first. */
    vkc__pool_drop(ctx);
    for (vkc__cmd *c = p->free_head; c;) {
        vkc__cmd *next = c->next;
        vkc__cmd_destroy(ctx, c);
        c = next;
    }
    p->free_head = p->pending_head = p->pending_tail = NULL;
    p->pending_n = 0;
    if (ctx->timeline)
        ctx->vk.vkDestroySemaphore(ctx->device, ctx->timeline, ctx->alloc);
    ctx->timeline = VK_NULL_HANDLE;
    for (uint32_t i = 0; i < ctx->fence_cap; ++i)
        ctx->vk.vkDestroyFence(ctx->device, ctx->fences[i], ctx->alloc);
    vkc__free(ctx->fences);
    vkc__free(ctx->fence_values);
    ctx->fences = NULL;
    ctx->fence_values = NULL;
    ctx->fence_cap = ctx->fence_count = 0;
    pthread_mutex_destroy(&p->lock);
}
