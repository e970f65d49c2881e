/* Wait module: the timeline's completed value and the waits on it (the
 * timeline semaphore or the fence ring of the fallback), the completion
 * marker's recording, reset, self-test and wait (immediate.c creates it),
 * the bounded waits and the drain.
 *
 * Owns: the completed value (vkc__raise_completed), the waits. Calls: pool
 * (vkc__signal_through, vkc__signal_cover, the one-shot submissions,
 * vkc__cmd_alloc_set, vkc__cmd_barrier, vkc__pool_retire), context (errors,
 * the flush_immediate hook in vkc__drain) and the marker's buffer and kernel
 * structs (read only); never dispatch. */
#include "vkc_internal.h"

#include <sched.h>
#include <stdio.h>

void vkc__raise_completed(vkc_context *ctx, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(&ctx->completed_value, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak(&ctx->completed_value, &cur, v))
        ;
}

/* ---- completion ----------------------------------------------------------- */

/* Fence fallback: retire signalled fences from the oldest; caller holds
 * queue_lock. Returns a negative result on device loss. */
vkc_result vkc__fences_retire_locked(vkc_context *ctx)
{
    while (ctx->fence_count) {
        uint32_t i = ctx->fence_head;
        VkResult vr =
            VKC_VK(vkGetFenceStatus, ctx->vk.vkGetFenceStatus(ctx->device, ctx->fences[i]));
        if (vr == VK_NOT_READY)
            break;
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkGetFenceStatus", __FILE__, __LINE__);
        vr = VKC_VK(vkResetFences, ctx->vk.vkResetFences(ctx->device, 1, &ctx->fences[i]));
        if (vr < 0)
            return vkc__vk_fail(ctx, vr, "vkResetFences", __FILE__, __LINE__);
        vkc__raise_completed(ctx, ctx->fence_values[i]);
        ctx->fence_head = (ctx->fence_head + 1) % ctx->fence_cap;
        ctx->fence_count--;
    }
    return VKC_SUCCESS;
}

uint64_t vkc__submitted_value(vkc_context *ctx)
{
    return atomic_load_explicit(&ctx->submitted_value, memory_order_acquire);
}

/* Poll the driver once; returns the completed value or a negative result
 * through *r. */
static uint64_t vkc__poll_completed(vkc_context *ctx, vkc_result *r)
{
    *r = VKC_SUCCESS;
    if (ctx->features.timeline_semaphores) {
        uint64_t v = 0;
        VkResult vr = VKC_VK(vkGetSemaphoreCounterValue,
                             ctx->vk.vkGetSemaphoreCounterValue(ctx->device, ctx->timeline, &v));
        if (vr < 0) {
            *r = vkc__vk_fail(ctx, vr, "vkGetSemaphoreCounterValue", __FILE__, __LINE__);
            return atomic_load(&ctx->completed_value);
        }
        vkc__raise_completed(ctx, v);
        return v;
    }
    pthread_mutex_lock(&ctx->queue_lock);
    *r = vkc__fences_retire_locked(ctx);
    pthread_mutex_unlock(&ctx->queue_lock);
    return atomic_load(&ctx->completed_value);
}

uint64_t vkc__completed_value(vkc_context *ctx)
{
    vkc_result r;
    return vkc__poll_completed(ctx, &r);
}

static vkc_result vkc__wait_long(vkc_context *ctx, uint64_t value, bool marker, bool timeline,
                                 uint64_t start, uint64_t timeout_ns);

/* On a CPU device (lavapipe) the default and spin-then-block waits poll
 * until their deadline, yielding the core, and never block in the driver
 * (VKC_WAIT_BLOCK still does). The device is the host's own threads, which
 * hand every dispatch to each other: with the waiting thread asleep, cores
 * go idle between those hand-offs and each wake-up pays for it. One
 * submission of 10,000 dependent tiny dispatches took a median of 255 ms
 * when the default wait blocked after its 10 ms of polling, and 70 ms
 * polling throughout (24 waits each, 2-core VM; BENCHMARKS.md, lavapipe,
 * 2026-12-06). A yielding poll gives the core up whenever one of the
 * device's threads can run. */
vkc_result vkc__wait_value(vkc_context *ctx, uint64_t value, uint64_t timeout_ns,
                           vkc_wait_mode mode)
{
    if (atomic_load_explicit(&ctx->completed_value, memory_order_acquire) >= value)
        return VKC_SUCCESS;
    if (atomic_load_explicit(&ctx->lost, memory_order_relaxed))
        return VKC_FAIL(ctx, VKC_ERROR_DEVICE_LOST, "the device was lost earlier");
    if (mode == VKC_WAIT_DEFAULT)
        mode = ctx->features.wait_mode;
    /* A value whose submit carried no signal completes on the timeline only
     * with a later signal: make sure there is one (a poll, timeout 0, only
     * looks). */
    if (timeout_ns) {
        VKC_FORWARD(vkc__signal_through(ctx, value));
        if (atomic_load_explicit(&ctx->completed_value, memory_order_acquire) >= value)
            return VKC_SUCCESS; /* the queue went idle instead */
    }
    uint64_t start = vkc__now_ns();
    uint64_t deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
    vkc_result r;
    /* A CPU device polls, yielding, until the deadline (above); a look
     * (timeout 0) does not yield. */
    const bool cpu_polls =
        ctx->info.type == VKC_DEVICE_TYPE_CPU && timeout_ns && !ctx->test_wait_long;
    if (mode != VKC_WAIT_BLOCK) {
        uint64_t spin_end = mode == VKC_WAIT_SPIN || cpu_polls
                                ? deadline
                                : VKC_MIN(deadline, start + ctx->features.spin_ns);
        for (uint32_t iter = 0;; ++iter) {
            if (vkc__poll_completed(ctx, &r) >= value)
                return VKC_SUCCESS;
            if (r < 0)
                return r;
            if (cpu_polls)
                sched_yield();
            if ((iter & 15) == 15 && vkc__now_ns() >= spin_end)
                break;
        }
        if (mode == VKC_WAIT_SPIN || vkc__now_ns() >= deadline)
            return VKC_TIMEOUT;
        /* Spun its budget: block until shortly before the last such wait's
         * time, then spin (vkc__wait_long). */
        if (mode == VKC_WAIT_SPIN_THEN_BLOCK)
            return vkc__wait_long(ctx, value, false, true, start, timeout_ns);
    }
    /* Block in the driver for what is left of the timeout, on a value that a
     * submit signals. */
    const uint64_t cover = vkc__signal_cover(ctx, value);
    for (;;) {
        uint64_t now = vkc__now_ns();
        uint64_t left = deadline > now ? deadline - now : 0;
        if (ctx->features.timeline_semaphores) {
            VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wi.semaphoreCount = 1;
            wi.pSemaphores = &ctx->timeline;
            wi.pValues = &cover;
            VkResult vr =
                VKC_VK(vkWaitSemaphores, ctx->vk.vkWaitSemaphores(ctx->device, &wi, left));
            if (vr == VK_SUCCESS) {
                vkc__raise_completed(ctx, cover);
                return VKC_SUCCESS;
            }
            if (vr == VK_TIMEOUT) {
                /* A driver may return early; only the caller's deadline ends
                 * the wait (an infinite wait never reports a timeout). */
                if (vkc__now_ns() < deadline)
                    continue;
                return VKC_TIMEOUT;
            }
            return vkc__vk_fail(ctx, vr, "vkWaitSemaphores", __FILE__, __LINE__);
        }
        /* Fences: whoever retires a fence resets it, so a fence is only ever
         * touched under the queue lock. Block in short slices there (other
         * threads get the lock between slices), then re-check. */
        pthread_mutex_lock(&ctx->queue_lock);
        r = vkc__fences_retire_locked(ctx);
        VkFence f = VK_NULL_HANDLE;
        for (uint32_t k = 0; r >= 0 && k < ctx->fence_count; ++k) {
            uint32_t i = (ctx->fence_head + k) % ctx->fence_cap;
            if (ctx->fence_values[i] >= value) {
                f = ctx->fences[i];
                break;
            }
        }
        if (r >= 0 && f && left) {
            VkResult vr =
                VKC_VK(vkWaitForFences, ctx->vk.vkWaitForFences(ctx->device, 1, &f, VK_TRUE,
                                                                VKC_MIN(left, (uint64_t)100000)));
            if (vr < 0)
                r = vkc__vk_fail(ctx, vr, "vkWaitForFences", __FILE__, __LINE__);
        }
        pthread_mutex_unlock(&ctx->queue_lock);
        if (r < 0)
            return r;
        if (atomic_load(&ctx->completed_value) >= value)
            return VKC_SUCCESS;
        if (!left)
            return VKC_TIMEOUT;
        if (!f)
            sched_yield();
    }
}

/* ---- completion marker (VKC_WAIT_SPIN_MARKER) ------------------------------------------ */

void vkc__cmd_marker(vkc_context *ctx, vkc__cmd *cmd, VkPipelineStageFlags2 stages, bool host_reads)
{
    if (!ctx->marker_kernel || !vkc__marker_on(ctx))
        return;
    /* Everything before is done before the count moves, and available to
     * the host when the host reads the submission's results in place. */
    const VkAccessFlags2 writes = vkc__writes_of(stages);
    vkc__cmd_barrier(ctx, cmd->cb, stages, writes,
                     VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT |
                         (host_reads ? VK_PIPELINE_STAGE_2_HOST_BIT : 0),
                     VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                         (host_reads ? VK_ACCESS_2_HOST_READ_BIT : 0));
    vkc__cmd_marker_dispatch(ctx, cmd);
    /* The count itself, made available to the host (the lean form leaves
     * that to the end of the submission: measured side by side). */
    if (cmd->has_marker && !ctx->marker_lean)
        vkc__cmd_barrier(ctx, cmd->cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                         VK_ACCESS_2_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                         VK_ACCESS_2_HOST_READ_BIT);
}

void vkc__cmd_marker_dispatch(vkc_context *ctx, vkc__cmd *cmd)
{
    const vkc_kernel *k = ctx->marker_kernel;
    if (!k || !vkc__marker_on(ctx))
        return;
    VkCommandBuffer cb = cmd->cb;
    ctx->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
    const VkDescriptorBufferInfo bi[2] = {
        {ctx->marker_buf->buffer, ctx->marker_buf->offset, 64},
        {ctx->marker_count->buffer, ctx->marker_count->offset, 64}};
    if (vkc__cmd_bind_buffers(ctx, cmd, k, bi, 2) < 0)
        return; /* the wait falls back to the timeline for this one */
    const uint32_t form = ctx->marker_atomic ? 1u : 0u;
    ctx->vk.vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &form);
    if (!ctx->test_marker_mute)
        ctx->vk.vkCmdDispatch(cb, 1, 1, 1);
    cmd->has_marker = true;
}

/* Rounds of the marker's self-test, and how long the count may trail the
 * timeline before it counts as never seen. */
#define VKC_MARKER_ROUNDS 8
#define VKC_MARKER_GRACE_NS 2000000ull

vkc_result vkc__cmd_bind_buffers(vkc_context *ctx, vkc__cmd *cmd, const vkc_kernel *k,
                                 const VkDescriptorBufferInfo *bi, uint32_t n)
{
    VkWriteDescriptorSet w[4];
    if (n > VKC_ARRAY_COUNT(w))
        return VKC_FAIL(ctx, VKC_ERROR_LIMIT, "%u buffers for one of vkc's own kernels", n);
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!ctx->features.push_descriptors)
        VKC_FORWARD(vkc__cmd_alloc_set(ctx, cmd, k->set_layout, &set));
    for (uint32_t i = 0; i < n; ++i) {
        w[i] = (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w[i].dstSet = set;
        w[i].dstBinding = i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &bi[i];
    }
    if (ctx->features.push_descriptors) {
        ctx->vk.vkCmdPushDescriptorSetKHR(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, n,
                                          w);
    } else {
        ctx->vk.vkUpdateDescriptorSets(ctx->device, n, w, 0, NULL);
        ctx->vk.vkCmdBindDescriptorSets(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1,
                                        &set, 0, NULL);
    }
    return VKC_SUCCESS;
}

bool vkc__marker_seen(vkc_context *ctx, uint64_t value)
{
    const uint64_t start = vkc__now_ns();
    uint64_t timeline_done = 0; /* when the timeline was first seen done */
    for (uint32_t spins = 1;; ++spins) {
        if (vkc__marker_done(ctx, value))
            return true;
        if ((spins & 255) == 0) {
            uint64_t now = vkc__now_ns();
            if (!timeline_done && vkc__completed_value(ctx) >= value)
                timeline_done = now;
            if (timeline_done && now - timeline_done > VKC_MARKER_GRACE_NS)
                return false;
            if (now - start > 2000000000ull) /* neither in 2 s: the caller blocks */
                return false;
        }
    }
}

vkc_result vkc__marker_reset(vkc_context *ctx)
{
    /* The fill is the next submission, and carries no marker: both counts
     * start at its value. Nothing else submits during init or recovery. */
    atomic_store(&ctx->marker_on, false);
    atomic_store(&ctx->marker_skip, 0);
    atomic_store(&ctx->marker_skew, 0);
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    const uint32_t start = (uint32_t)(ctx->next_value + 1);
    ctx->vk.vkCmdFillBuffer(cmd->cb, ctx->marker_count->buffer, ctx->marker_count->offset, 64,
                            start);
    /* The completion epilogue's arrival word (epilogue.c), a line away. */
    ctx->vk.vkCmdFillBuffer(cmd->cb, ctx->marker_count->buffer, ctx->marker_count->offset + 64, 64,
                            0);
    *ctx->marker = start;
    VKC_FORWARD(vkc__oneshot_end_wait(ctx, cmd));
    atomic_store(&ctx->marker_on, true);
    return VKC_SUCCESS;
}

/* One round: fill words 1..15 of the marker buffer with a pattern, then the
 * marker; spin on the count. Sets *why (static text) when the round fails. */
static vkc_result vkc__marker_round(vkc_context *ctx, uint32_t pattern, const char **why)
{
    volatile uint32_t *m = ctx->marker;
    *why = NULL;
    if (m[0] != (uint32_t)vkc__submitted_value(ctx)) {
        *why = "self-test: the count is not the timeline's value before a submit";
        return VKC_SUCCESS;
    }
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd));
    ctx->vk.vkCmdFillBuffer(cmd->cb, ctx->marker_buf->buffer, ctx->marker_buf->offset + 4, 60,
                            pattern);
    uint64_t value = 0;
    VKC_FORWARD(vkc__oneshot_end_submit(ctx, cmd, VK_PIPELINE_STAGE_2_TRANSFER_BIT, &value));
    const bool seen = vkc__marker_seen(ctx, value);
    vkc_result r = vkc__wait_value(ctx, value, 5000000000ull, VKC_WAIT_BLOCK);
    if (r == VKC_TIMEOUT) {
        *why = "self-test: the timeline did not reach a submission within 5 s";
        return VKC_SUCCESS;
    }
    VKC_FORWARD(r);
    if (!seen) {
        *why = "self-test: the count was not seen after the timeline signalled";
        return VKC_SUCCESS;
    }
    if (m[0] != (uint32_t)value) {
        *why = "self-test: the count went past the submissions made";
        return VKC_SUCCESS;
    }
    for (uint32_t i = 1; i < 16; ++i)
        if (m[i] != pattern) {
            *why = "self-test: the count was seen before the submission's results";
            return VKC_SUCCESS;
        }
    return VKC_SUCCESS;
}

vkc_result vkc__marker_check(vkc_context *ctx, bool *ok)
{
    *ok = false;
    if (!vkc__marker_on(ctx) || !ctx->marker)
        return VKC_SUCCESS;
    const char *why = NULL;
    for (uint32_t i = 0; i < VKC_MARKER_ROUNDS && !why; ++i)
        VKC_FORWARD(vkc__marker_round(ctx, 0x5eed0000u + i * 0x01010101u, &why));
    if (!why && !vkc__marker_on(ctx))
        why = "self-test: a submission without the marker";
    if (why) {
        /* A copy armed while the marker was trusted goes first (its
         * submit's signal was chosen by the marker's rules). */
        vkc__arm_cancel(ctx, NULL);
        atomic_store(&ctx->marker_on, false);
        snprintf(ctx->wait_reason, sizeof(ctx->wait_reason), "%s", why);
        return VKC_SUCCESS;
    }
    *ok = true;
    atomic_store(&ctx->marker_trusted, true);
    return VKC_SUCCESS;
}

static vkc_result vkc__timed_out(vkc_context *ctx, uint64_t value, uint64_t timeout_ns,
                                 const char *what)
{
    return VKC_FAIL(ctx, VKC_TIMEOUT,
                    "%s: the work up to ticket %llu did not complete within %llu ms (the wait "
                    "bound; vkc_context_desc.wait_timeout_ns)",
                    what, (unsigned long long)value, (unsigned long long)(timeout_ns / 1000000));
}

static vkc_result vkc__wait_within(vkc_context *ctx, uint64_t value, uint64_t timeout_ns,
                                   const char *what)
{
    vkc_result r = vkc__wait_value(ctx, value, timeout_ns, VKC_WAIT_DEFAULT);
    return r == VKC_TIMEOUT ? vkc__timed_out(ctx, value, timeout_ns, what) : r;
}

vkc_result vkc__wait_bounded(vkc_context *ctx, uint64_t value, const char *what)
{
    return vkc__wait_within(ctx, value, ctx->wait_timeout_ns, what);
}

vkc_result vkc__wait_results_bounded(vkc_context *ctx, uint64_t value, const char *what)
{
    const uint64_t t0 =
        atomic_load_explicit(&vkc__timing, memory_order_relaxed) ? vkc__now_ns() : 0;
    vkc_result r = vkc__wait_results(ctx, value, ctx->wait_timeout_ns);
    if (t0) /* VKC_TIME_CALLS: vkc's own waits inside its calls, by what they wait for */
        vkc__time_add("wait", what, vkc__now_ns() - t0);
    return r == VKC_TIMEOUT ? vkc__timed_out(ctx, value, ctx->wait_timeout_ns, what) : r;
}

vkc_result vkc__drain_timeout(vkc_context *ctx, uint64_t timeout_ns)
{
    vkc__arm_cancel(ctx, NULL); /* an armed copy runs empty: then everything can complete */
    VKC_FORWARD(vkc__flush_immediate(ctx));
    vkc_result r = vkc__wait_within(ctx, vkc__submitted_value(ctx), timeout_ns, "vkc_finish");
    if (r == VKC_SUCCESS)
        vkc__pool_retire(ctx); /* what finished work held goes now */
    return r;
}

vkc_result vkc__drain(vkc_context *ctx)
{
    return vkc__drain_timeout(ctx, ctx->wait_timeout_ns);
}

void vkc__drain_or_idle(vkc_context *ctx)
{
    vkc_result r = VKC_ERROR_DEVICE_LOST;
    if (!atomic_load_explicit(&ctx->lost, memory_order_relaxed))
        r = vkc__drain(ctx);
    if (r < 0) {
        vkc_queue_lock(ctx);
        (void)ctx->vk.vkDeviceWaitIdle(ctx->device);
        vkc_queue_unlock(ctx);
    }
}

/* Whether a wait sees value complete: the marker's count (marker), or the
 * timeline (timeline: value's submit went without the marker, or the wait
 * is VKC_WAIT_SPIN_THEN_BLOCK's). */
static bool vkc__results_seen(vkc_context *ctx, uint64_t value, bool marker, bool timeline,
                              vkc_result *r)
{
    *r = VKC_SUCCESS;
    if (marker && vkc__marker_done(ctx, value))
        return true;
    return timeline && vkc__poll_completed(ctx, r) >= value;
}

/* A wait of a GPU once it has spun its budget (the marker wait's 50 x
 * spin_ns, VKC_WAIT_SPIN_THEN_BLOCK's spin_ns: so long work does not hold a
 * core), spinning on the marker's count (marker) or the timeline. A block
 * in the driver ends when the driver wakes the thread, which on NVIDIA's
 * proprietary driver comes about 0.1 ms after the work ends (an 11 ms triad
 * on the H100, job Z41: 1.0% slower than a spinning raw wait, against 0.1%
 * for a 5.7 ms copy that stayed within the budget). Long work is mostly the
 * same work again (a replayed sequence, a frame's batch), so the wait
 * blocks only until shortly before the time the last long wait took, then
 * spins; where the work runs past that plus the margin, it blocks again
 * until done. A wrong guess costs at most the margin's spin twice. */
static vkc_result vkc__wait_long(vkc_context *ctx, uint64_t value, bool marker, bool timeline,
                                 uint64_t start, uint64_t timeout_ns)
{
    const uint64_t guess = atomic_load_explicit(&ctx->wait_long_ns, memory_order_relaxed);
    const uint64_t margin = VKC_MAX(ctx->features.spin_ns, guess / 32);
    uint64_t ns = vkc__now_ns() - start;
    vkc_result r = VKC_TIMEOUT;
    VKC_STAT_ADD(ctx, long_waits, 1);
    if (guess > ns + margin && guess - margin < timeout_ns) {
        VKC_STAT_ADD(ctx, long_waits_guessed, 1);
        r = vkc__wait_value(ctx, value, guess - margin - ns, VKC_WAIT_BLOCK);
        if (r != VKC_TIMEOUT)
            goto done;
        const uint64_t spin_end = VKC_MIN(guess + margin, timeout_ns);
        for (uint32_t spins = 1;; ++spins) {
            if (vkc__results_seen(ctx, value, marker, timeline, &r)) {
                VKC_STAT_ADD(ctx, long_waits_spun, 1);
                goto done;
            }
            if (r < 0)
                return r;
            if ((spins & 15) == 0 && vkc__now_ns() - start >= spin_end)
                break;
        }
    }
    ns = vkc__now_ns() - start;
    if (ns >= timeout_ns)
        return VKC_TIMEOUT;
    r = vkc__wait_value(ctx, value, timeout_ns - ns, VKC_WAIT_BLOCK);
done:
    if (r == VKC_SUCCESS && ctx->wait_predict)
        atomic_store_explicit(&ctx->wait_long_ns, vkc__now_ns() - start, memory_order_relaxed);
    return r;
}

vkc_result vkc__wait_results(vkc_context *ctx, uint64_t value, uint64_t timeout_ns)
{
    if (!vkc__marker_on(ctx))
        return vkc__wait_value(ctx, value, timeout_ns, VKC_WAIT_DEFAULT);
    /* A submission without the marker (vkc__submit) completes on the
     * timeline, its submit signalled: poll it as the count is polled. */
    const bool timeline = value == atomic_load_explicit(&ctx->marker_skip, memory_order_acquire);
    const bool cpu = ctx->info.type == VKC_DEVICE_TYPE_CPU && !ctx->test_wait_long;
    /* Spin on the completion count in memory; for long work, let the driver
     * block on the timeline (vkc__wait_long), except on a CPU device
     * (vkc__wait_value). */
    const uint64_t start = vkc__now_ns();
    for (uint64_t spins = 1;; ++spins) {
        if (vkc__marker_done(ctx, value))
            return VKC_SUCCESS;
        if (timeline) {
            vkc_result r;
            if (vkc__poll_completed(ctx, &r) >= value)
                return VKC_SUCCESS;
            if (r < 0)
                return r;
            /* A CPU device signals from the host's own threads, which a
             * spin on the driver's timeline lock keeps from running
             * (lavapipe, two cores: p95 ~230 us for a 25 us batch). */
            if (cpu)
                sched_yield();
        }
        if ((spins & (timeline ? 15 : 1023)) == 0) { /* a driver poll is slower */
            uint64_t ns = vkc__now_ns() - start;
            if (ns >= timeout_ns)
                return VKC_TIMEOUT;
            if (ns >= ctx->features.spin_ns * 50 && !cpu)
                return vkc__wait_long(ctx, value, true, timeline, start, timeout_ns);
            if (cpu && !timeline) /* the timeline's polls yield each time */
                sched_yield();
        }
    }
}

bool vkc__queue_idle(vkc_context *ctx, uint64_t value)
{
    if (atomic_load_explicit(&ctx->completed_value, memory_order_acquire) >= value)
        return true;
    if (!vkc__marker_on(ctx))
        return false;
    if (vkc__marker_done(ctx, value))
        return true;
    /* A value that went without the marker (its submit signalled) shows on
     * the count only with a later marker: only the timeline says. Asked of
     * the driver for that one alone, so that a busy queue's other checks
     * (immediate mode's, on every enqueue) cost no driver call. The marker
     * is on only with timelines, whose poll takes no lock. */
    if (value != atomic_load_explicit(&ctx->marker_skip, memory_order_acquire))
        return false;
    vkc_result r;
    return vkc__poll_completed(ctx, &r) >= value;
}

bool vkc__marker_done(vkc_context *ctx, uint64_t value)
{
    /* Skew before skip (the reverse of the writer's order): a stale pair
     * only ever undercounts, which waits longer, never too little. */
    const uint64_t skew = atomic_load_explicit(&ctx->marker_skew, memory_order_acquire);
    const uint64_t skip = atomic_load_explicit(&ctx->marker_skip, memory_order_acquire);
    if (value < skip)
        return true; /* everything before a skipped submission was complete at its submit */
    /* The count reaches value - skew once value is done; the skipped value
     * only once a later marker is. 32-bit count, compared modulo 2^32. */
    const uint32_t need = (uint32_t)(value + (value == skip) - skew);
    uint32_t seen = __atomic_load_n(ctx->marker, __ATOMIC_ACQUIRE);
    return (int32_t)(seen - need) >= 0;
}
