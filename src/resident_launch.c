/* Resident kernels, the device side seen from the host: recording the
 * launch, launching and relaunching (idle exit, the poll bound of CPU
 * drivers), joining a launch, waiting for an item's acknowledgement, and the
 * self-test that decides between the resident path and the fallback.
 *
 * Owns: nothing of its own; works on vkc_resident's launch fields under its
 * launch_lock. Calls: the device tables, kernels' pipelines and layouts,
 * pool.c's barrier, the context (errors); resident.c's API calls it. */
#include "resident.h"

#include <stdio.h>

static inline void vkc__relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

/* ---- the launch -------------------------------------------------------------------------- */

vkc_result vkc__resident_record(vkc_resident *r)
{
    vkc_context *ctx = r->ctx;
    vkc_kernel *k = r->kernel;
    VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.queueFamilyIndex = ctx->info.queue_family;
    VKC_RETURN_IF_VK(ctx,
                     VKC_VK(vkCreateCommandPool,
                            ctx->vk.vkCreateCommandPool(ctx->device, &pci, ctx->alloc, &r->cpool)),
                     "vkCreateCommandPool (resident)");
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = r->cpool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VKC_RETURN_IF_VK(ctx,
                     VKC_VK(vkAllocateCommandBuffers,
                            ctx->vk.vkAllocateCommandBuffers(ctx->device, &cai, &r->cb)),
                     "vkAllocateCommandBuffers (resident)");
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VKC_RETURN_IF_VK(
        ctx, VKC_VK(vkCreateFence, ctx->vk.vkCreateFence(ctx->device, &fci, ctx->alloc, &r->fence)),
        "vkCreateFence (resident)");
    vkc__set_name(ctx, VK_OBJECT_TYPE_FENCE, (uint64_t)r->fence, r->name);

    VkDescriptorBufferInfo bi[VKC_MAX_BINDINGS];
    VkWriteDescriptorSet w[VKC_MAX_BINDINGS];
    uint32_t storage = 0, uniform = 0;
    for (uint32_t i = 0; i < r->arg_count; ++i) {
        const vkc_arg *a = &r->args[i];
        bi[i].buffer = a->buffer->buffer;
        bi[i].offset = a->buffer->offset + a->offset;
        bi[i].range = a->size ? a->size : a->buffer->size - a->offset;
        memset(&w[i], 0, sizeof(w[i]));
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstBinding = i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = k->info.bindings[i].uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                          : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &bi[i];
        if (k->info.bindings[i].uniform)
            uniform++;
        else
            storage++;
    }
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!ctx->features.push_descriptors) {
        VkDescriptorPoolSize ps[2];
        uint32_t np = 0;
        if (storage)
            ps[np++] = (VkDescriptorPoolSize){VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, storage};
        if (uniform)
            ps[np++] = (VkDescriptorPoolSize){VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, uniform};
        VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpi.maxSets = 1;
        dpi.poolSizeCount = np;
        dpi.pPoolSizes = ps;
        VKC_RETURN_IF_VK(
            ctx,
            VKC_VK(vkCreateDescriptorPool,
                   ctx->vk.vkCreateDescriptorPool(ctx->device, &dpi, ctx->alloc, &r->dpool)),
            "vkCreateDescriptorPool (resident)");
        VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        dai.descriptorPool = r->dpool;
        dai.descriptorSetCount = 1;
        dai.pSetLayouts = &k->set_layout;
        VKC_RETURN_IF_VK(ctx,
                         VKC_VK(vkAllocateDescriptorSets,
                                ctx->vk.vkAllocateDescriptorSets(ctx->device, &dai, &set)),
                         "vkAllocateDescriptorSets (resident)");
        for (uint32_t i = 0; i < r->arg_count; ++i)
            w[i].dstSet = set;
        ctx->vk.vkUpdateDescriptorSets(ctx->device, r->arg_count, w, 0, NULL);
    }

    VkCommandBufferBeginInfo bbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VKC_RETURN_IF_VK(ctx, VKC_VK(vkBeginCommandBuffer, ctx->vk.vkBeginCommandBuffer(r->cb, &bbi)),
                     "vkBeginCommandBuffer (resident)");
    /* Ordered after earlier work on the same queue (the shared-queue case);
     * on a queue of its own the host's fence wait already orders launches. */
    vkc__cmd_barrier(ctx, r->cb, VKC_WORK_STAGES, vkc__writes_of(VKC_WORK_STAGES),
                     VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                     vkc__accesses_of(VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT));
    ctx->vk.vkCmdBindPipeline(r->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
    if (ctx->features.push_descriptors)
        ctx->vk.vkCmdPushDescriptorSetKHR(r->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0,
                                          r->arg_count, w);
    else
        ctx->vk.vkCmdBindDescriptorSets(r->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1,
                                        &set, 0, NULL);
    uint32_t push[4] = {0, 0, 0, 0};
    ctx->vk.vkCmdPushConstants(r->cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push),
                               push);
    ctx->vk.vkCmdDispatch(r->cb, r->grid, 1, 1);
    VKC_RETURN_IF_VK(ctx, VKC_VK(vkEndCommandBuffer, ctx->vk.vkEndCommandBuffer(r->cb)),
                     "vkEndCommandBuffer (resident)");
    return VKC_SUCCESS;
}

/* The launch has ended (or never was): its fence signalled. (The kernel's
 * own end marker comes earlier, but a relaunch must wait for the fence
 * anyway, and under load that can take long.) */
static vkc_result vkc__resident_ended(vkc_resident *r, bool *ended)
{
    *ended = true;
    if (!r->launched)
        return VKC_SUCCESS;
    VkResult vr = VKC_VK(vkGetFenceStatus, r->ctx->vk.vkGetFenceStatus(r->ctx->device, r->fence));
    if (vr < 0)
        return vkc__vk_fail(r->ctx, vr, "vkGetFenceStatus (resident)", __FILE__, __LINE__);
    *ended = vr == VK_SUCCESS;
    return VKC_SUCCESS;
}

/* How long a launch may take to end once it has no reason to run (its
 * items done, a stop asked for): at least 2 s, since under load a CPU
 * driver signals the fence late. */
uint64_t vkc__resident_end_bound(const vkc_resident *r)
{
    return VKC_MAX(r->timeout_ns, 2000000000ull);
}

/* Wait (bounded) for the current launch's fence. Caller holds launch_lock. */
vkc_result vkc__resident_join(vkc_resident *r, uint64_t timeout_ns)
{
    if (!r->launched)
        return VKC_SUCCESS;
    vkc_context *ctx = r->ctx;
    VkResult vr = VKC_VK(vkWaitForFences,
                         ctx->vk.vkWaitForFences(ctx->device, 1, &r->fence, VK_TRUE, timeout_ns));
    if (vr == VK_TIMEOUT)
        return VKC_FAIL(ctx, VKC_TIMEOUT,
                        "resident kernel \"%s\" did not end within %llu ms of its idle exit or "
                        "stop",
                        r->name, (unsigned long long)(timeout_ns / 1000000));
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkWaitForFences (resident)", __FILE__, __LINE__);
    r->launched = false;
    VKC_RETURN_IF_VK(ctx, VKC_VK(vkResetFences, ctx->vk.vkResetFences(ctx->device, 1, &r->fence)),
                     "vkResetFences (resident)");
    return VKC_SUCCESS;
}

/* Launch the kernel from the first unacknowledged item. Caller holds
 * launch_lock; the previous launch has ended. */
static vkc_result vkc__resident_launch(vkc_resident *r, uint32_t polls, bool probe)
{
    vkc_context *ctx = r->ctx;
    VKC_FORWARD(vkc__resident_join(r, vkc__resident_end_bound(r)));
    /* Each item is taken once: a launch starts after the last item any
     * launch took (acknowledged or not: a kernel that skipped an ack must
     * not see the item again), which the kernel records in 32 bits; the
     * full number is the one below next_seq with those bits. */
    uint64_t posted = r->next_seq;
    uint64_t taken = (posted & ~0xffffffffull) | r->ring[RH_TAKEN];
    if (taken >= posted)
        taken -= 1ull << 32;
    uint64_t base = taken + 1;
    /* Acknowledged items were taken too (in case the record lags). */
    uint64_t acked = atomic_load(&r->done_hint) + 1;
    while (acked < posted && vkc__acked(r, acked))
        acked++;
    if (acked > base)
        base = acked;
    r->ring[RH_BASE] = (uint32_t)base;
    r->ring[RH_SPINS] = polls;
    r->ring[RH_LAUNCH] = r->launch_polls;
    r->ring[RH_PROBE] = probe;
    /* Grids: base is undecided. Every item the last launch took was
     * finished by all its workgroups before its fence, but a kernel that
     * skipped an ack leaves a partial count in its slot. */
    r->ring[RH_CLAIM] = (uint32_t)(base - 1) << 1;
    if (r->grid > 1)
        for (uint32_t i = 0; i < r->slots; ++i)
            r->ring[RH_WORDS + (size_t)i * r->stride + RS_COUNT] = 0;
    r->ring[RH_ALIVE] = 0;
    r->ring[RH_STATE] = R_STATE_RUNNING;
    vkc__store_fence();
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &r->cb;
    /* After all ordinary work submitted so far, on the GPU too: posts
     * already waited for it on the host, and this wait makes the order one
     * that Vulkan (and synchronization validation) knows. */
    uint64_t wait_value = vkc__submitted_value(ctx);
    VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo tsi = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    if (ctx->features.timeline_semaphores && wait_value) {
        tsi.waitSemaphoreValueCount = 1;
        tsi.pWaitSemaphoreValues = &wait_value;
        si.pNext = &tsi;
        si.waitSemaphoreCount = 1;
        si.pWaitSemaphores = &ctx->timeline;
        si.pWaitDstStageMask = &wait_stage;
    }
    VkResult vr;
    if (r->queue_slot < 0) {
        vkc_queue_lock(ctx);
        vr = VKC_VK(vkQueueSubmit, ctx->vk.vkQueueSubmit(r->queue, 1, &si, r->fence));
        vkc_queue_unlock(ctx);
    } else {
        vr = VKC_VK(vkQueueSubmit, ctx->vk.vkQueueSubmit(r->queue, 1, &si, r->fence));
    }
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkQueueSubmit (resident launch)", __FILE__, __LINE__);
    r->launched = true;
    atomic_fetch_add(&r->launches, 1);
    return VKC_SUCCESS;
}

/* Relaunch when the kernel has ended while items may wait. */
vkc_result vkc__resident_revive(vkc_resident *r)
{
    pthread_mutex_lock(&r->launch_lock);
    bool ended;
    vkc_result res = vkc__resident_ended(r, &ended);
    if (res >= 0 && ended)
        res = vkc__resident_launch(r, r->idle_polls, false);
    pthread_mutex_unlock(&r->launch_lock);
    return res;
}

/* Spin until item seq is acknowledged; relaunch an ended kernel on the way.
 * timeout 0 with poll: one look (VKC_NOT_READY). */
vkc_result vkc__resident_wait_item(vkc_resident *r, uint64_t seq, uint64_t timeout_ns, bool poll)
{
    vkc_context *ctx = r->ctx;
    /* After recovery, as every ticket issued before the loss: complete
     * (the work is gone, and so is the ring). */
    if (r->lost)
        return VKC_SUCCESS;
    if (vkc__acked(r, seq))
        return VKC_SUCCESS;
    /* The clock is read at the first look at the kernel's state, not
     * before the first spins: most waits end before it. */
    uint64_t deadline = 0;
    for (uint32_t iter = 1;; ++iter) {
        if (vkc__acked(r, seq))
            return VKC_SUCCESS;
        /* Looking at the kernel's state costs a read across the bus (and a
         * driver call): only now and then, and at once when polling. */
        if (poll || (iter & 255) == 0) {
            if (atomic_load_explicit(&ctx->lost, memory_order_relaxed))
                return VKC_FAIL(ctx, VKC_ERROR_DEVICE_LOST, "the device was lost");
            VKC_FORWARD(vkc__resident_revive(r));
            if (poll)
                return vkc__acked(r, seq) ? VKC_SUCCESS : VKC_NOT_READY;
            uint64_t now = vkc__now_ns();
            if (!deadline)
                deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
            else if (now >= deadline)
                return VKC_FAIL(ctx, VKC_TIMEOUT,
                                "resident kernel \"%s\": item %llu not acknowledged within %llu "
                                "us (does the kernel call vkc_resident_done?)",
                                r->name, (unsigned long long)seq,
                                (unsigned long long)(timeout_ns / 1000));
        }
        vkc__relax();
    }
}

/* ---- the self-test --------------------------------------------------------------------- */

void vkc__resident_write_item(vkc_resident *r, uint64_t seq, const void *payload, uint32_t size)
{
    volatile uint32_t *s = vkc__slot(r, seq);
    if (size)
        memcpy((void *)(uintptr_t)(s + RS_PAYLOAD), payload, size);
    s[RS_SIZE] = size;
    vkc__store_fence();
    s[RS_SEQ] = (uint32_t)seq;
    vkc__store_fence();
}

/* With acks in host memory the kernel acks each probe there first, then in
 * the ring: once the ring's shows, the host's must follow within a bound
 * (the test hook hides it). False: not seen. */
static bool vkc__resident_host_ack_seen(vkc_resident *r, uint64_t seq)
{
    vkc__rstate *st = r->ctx->resident_state;
    if (st->hide_host_ack)
        return false;
    volatile uint32_t *a = vkc__ack_word(r, seq);
    for (uint64_t t1 = vkc__now_ns(); vkc__now_ns() - t1 < VKC__ACK_BOUND_NS;) {
        if ((int32_t)(*a - (uint32_t)seq) >= 0)
            return true;
        vkc__relax();
    }
    return false;
}

/* Post a probe (or, with !post, take the last one posted) and wait for its
 * ack: 0 seen, 1 the launch ended first, 2 not seen within bound, 3 seen in
 * the ring but not in host memory. */
static int vkc__resident_probe_one(vkc_resident *r, bool post, uint64_t bound, uint64_t *seq)
{
    *seq = r->next_seq - 1;
    if (post) {
        *seq = r->next_seq++;
        r->probes++;
        vkc__resident_write_item(r, *seq, NULL, 0);
    }
    for (uint64_t t1 = vkc__now_ns(); vkc__now_ns() - t1 < bound;) {
        if ((int32_t)(vkc__slot(r, *seq)[RS_ACK] - (uint32_t)*seq) >= 0) {
            if (r->host_ack && !vkc__resident_host_ack_seen(r, *seq))
                return 3;
            atomic_store(&r->done_hint, *seq);
            return 0;
        }
        if (r->ring[RH_STATE] == R_STATE_STOPPED)
            return 1;
        vkc__relax();
    }
    return 2;
}

/* One attempt of the self-test: launch, post a probe at once, and after
 * its ack let the kernel poll for `window` ns and post a second one. Two
 * doorbells in one launch: in host-cached memory on the H200 a kernel saw
 * the first and never a later one. The second times one poll. *ended: the
 * launch ran out of polls first (lavapipe ends loops after 65535
 * iterations). !post: only wait for the probe already posted. */
static vkc_result vkc__resident_probe(vkc_resident *r, uint64_t window, bool post, bool *seen,
                                      bool *ended)
{
    *seen = *ended = false;
    pthread_mutex_lock(&r->launch_lock);
    vkc_result res = vkc__resident_launch(r, VKC__PROBE_POLLS, true);
    pthread_mutex_unlock(&r->launch_lock);
    VKC_FORWARD(res);
    uint64_t bound = VKC_MIN(r->timeout_ns, 2000000000ull);
    uint64_t t0 = vkc__now_ns();
    while (!r->ring[RH_ALIVE]) {
        if (vkc__now_ns() - t0 > bound) {
            snprintf(r->reason, sizeof(r->reason),
                     "the self-test's launch did not start polling within %llu ms",
                     (unsigned long long)(bound / 1000000));
            return VKC_SUCCESS;
        }
        vkc__relax();
    }
    if (r->host_ack && r->ring[RH_ALIVE] != R_ALIVE_HOST_ACK) {
        r->ack_bad = true;
        snprintf(r->ack_reason, sizeof(r->ack_reason),
                 "the kernel does not write acks to host memory (not built from GLSL by vkc "
                 "with vkc_resident.glsl)");
        return VKC_SUCCESS;
    }
    uint64_t seq;
    int got = vkc__resident_probe_one(r, post, bound, &seq);
    uint64_t t_a = vkc__now_ns(), t_post = t_a;
    const char *which = "first";
    if (got == 0 && post) {
        which = "second";
        while (vkc__now_ns() - t_a < window)
            vkc__relax();
        t_post = vkc__now_ns();
        got = vkc__resident_probe_one(r, true, bound, &seq);
    }
    if (got == 1) {
        *ended = true;
    } else if (got == 3) {
        r->ack_bad = true;
        snprintf(r->ack_reason, sizeof(r->ack_reason),
                 "the self-test's %s probe was acknowledged in the ring but not in host memory "
                 "(type %u) within %llu ms",
                 which, r->ack_mem_type, (unsigned long long)(VKC__ACK_BOUND_NS / 1000000));
    } else if (got == 2) {
        snprintf(r->reason, sizeof(r->reason),
                 "the device did not see the self-test's %s probe within %llu ms: host writes "
                 "to memory type %u are not visible to a running kernel",
                 which, (unsigned long long)(bound / 1000000), r->mem_type);
    } else {
        /* A poll costs at least a load and a compare: below 1 ns the count
         * is not measuring the window. Untimed: 100 ns. */
        uint32_t polls = vkc__slot(r, seq)[RS_PAYLOAD];
        r->poll_ns = window && polls >= 16 ? (double)(t_post - t_a) / polls : 100.0;
        if (r->poll_ns < 1.0)
            r->poll_ns = 1.0;
        *seen = true;
    }
    return VKC_SUCCESS;
}

/* One run of the self-test with the acks where they are now. */
static vkc_result vkc__resident_selftest_once(vkc_resident *r, bool *ok)
{
    *ok = false;
    bool seen = false, ended = true;
    /* Shorter windows where the launch ends before the probe arrives (a
     * CPU driver's launch bound, a host thread descheduled); without a
     * window the poll is not timed. */
    static const uint64_t windows[] = {20000, 2000, 0, 0, 0};
    for (size_t i = 0; i < VKC_ARRAY_COUNT(windows) && !seen && ended; ++i)
        VKC_FORWARD(vkc__resident_probe(r, windows[i], true, &seen, &ended));
    /* On lavapipe (2 busy cores) launches bounded below its loop limit have
     * ended before the probe came in some runs. A CPU driver's kernel reads
     * the host's own memory: a relaunch taking the waiting probe is proof
     * enough there. */
    if (!seen && ended && r->ctx->info.type == VKC_DEVICE_TYPE_CPU)
        VKC_FORWARD(vkc__resident_probe(r, 0, false, &seen, &ended));
    if (!seen && ended)
        snprintf(r->reason, sizeof(r->reason),
                 "the self-test's launches ended before their probe arrived");
    *ok = seen;
    /* The probe's launch ends on its own (its poll budget) or now. */
    r->ring[RH_STOP] = 1;
    vkc__store_fence();
    pthread_mutex_lock(&r->launch_lock);
    vkc_result res = vkc__resident_join(r, vkc__resident_end_bound(r));
    pthread_mutex_unlock(&r->launch_lock);
    r->ring[RH_STOP] = 0;
    VKC_FORWARD(res);
    if (*ok) {
        double p = (double)r->idle_ns / r->poll_ns;
        r->idle_polls = p < 16.0 ? 16u : p > 2147483647.0 ? 2147483647u : (uint32_t)p;
    }
    return VKC_SUCCESS;
}

/* The device must see host writes to the ring while the kernel runs; also
 * times one poll, to turn the idle time into a poll count. With acks in
 * host memory the host must see them too, or the kernel acks in the ring
 * from then on (a second run, ack_reason says why). *ok false with
 * r->reason set when the resident path cannot be used. */
vkc_result vkc__resident_selftest(vkc_resident *r, bool *ok)
{
    VKC_FORWARD(vkc__resident_selftest_once(r, ok));
    if (!r->ack_bad || !r->host_ack)
        return VKC_SUCCESS;
    vkc__log(r->ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
             "resident kernel \"%s\" acks in the ring: %s", r->name, r->ack_reason);
    vkc__resident_ack_in_ring(r);
    r->reason[0] = '\0';
    return vkc__resident_selftest_once(r, ok);
}
