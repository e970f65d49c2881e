/* The queue side of armed submission (arm.c has the policy, the recording
 * and the self-test): arming copies behind the gate, opening the gate for
 * the oldest, cancelling them all, and giving a cancelled copy's predicate
 * word back. Part of the pool module, beside the submit path (pool.c),
 * which cancels the armed copies before anything else reaches the queue.
 *
 * The armed copies wait on the gate at consecutive values: opening one is
 * one vkSignalSemaphore, and a sequence that keeps its queue deep makes a
 * vkQueueSubmit (for many copies at once) only on a few of its round trips
 * (on the H200 a round trip of 4.0-4.2 us with 256 armed, against 8.3-8.5
 * with one: vkc-bench reuse, raw-seqpoll-store-gated-deep+lead and
 * -ahead1+lead).
 *
 * Owns: the gate's value and the armed queue (under queue_lock). Calls:
 * pool.c (the signal ring, vkc__submit_signals), wait (vkc__queue_idle). */
#include "vkc_internal.h"

#include <sched.h>

static inline vkc__armed *vkc__armed_at(vkc_context *ctx, uint32_t k)
{
    return &ctx->arm_q[(ctx->arm_head + k) % VKC_ARM_DEPTH_MAX];
}

/* Caller holds queue_lock. The host's signal of the gate past the n oldest
 * armed copies, which are handed out (waits, the drain and tickets may name
 * them) in order. */
static vkc_result vkc__gate_open_locked(vkc_context *ctx, uint32_t n)
{
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = ctx->gate;
    si.value = ctx->gate_value + n;
    VkResult vr = VKC_VK(vkSignalSemaphore, ctx->vk.vkSignalSemaphore(ctx->device, &si));
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkSignalSemaphore(gate)", __FILE__, __LINE__);
    ctx->gate_value = si.value;
    uint64_t last = 0;
    for (uint32_t k = 0; k < n; ++k) {
        const vkc__armed *a = vkc__armed_at(ctx, k);
        if (a->signals)
            vkc__signal_note_locked(ctx, a->value);
        last = a->value;
    }
    const uint32_t len = atomic_load_explicit(&ctx->arm_len, memory_order_relaxed) - n;
    ctx->arm_head = (ctx->arm_head + n) % VKC_ARM_DEPTH_MAX;
    /* Release: vkc__arm_cancel's look without the lock sees what came
     * before (the owner's miss count) once it sees the queue empty. */
    atomic_store_explicit(&ctx->arm_len, len, memory_order_release);
    atomic_store_explicit(&ctx->submitted_value, last, memory_order_release);
    atomic_store_explicit(&ctx->armed_cmd, len ? vkc__armed_at(ctx, 0)->cmd : NULL,
                          memory_order_relaxed);
    if (!len) {
        ctx->armed_owner = NULL;
        ctx->arm_sig_value = 0;
    }
    return VKC_SUCCESS;
}

vkc_result vkc__arm_units(vkc_context *ctx, vkc__cmd *const *cmds, uint32_t n, void *owner,
                          uint32_t left)
{
    if (ctx->queue_lock_fn)
        ctx->queue_lock_fn(ctx->queue_lock_user);
    pthread_mutex_lock(&ctx->queue_lock);
    vkc_result r = VKC_SUCCESS;
    uint32_t len = atomic_load_explicit(&ctx->arm_len, memory_order_relaxed);
    if (len && ctx->armed_owner != owner && !left)
        vkc__arm_cancel_locked(ctx); /* another sequence's: nothing queues behind it */
    len = atomic_load_explicit(&ctx->arm_len, memory_order_relaxed);
    /* Registered host waits belong to the next ordinary submit; a queue
     * that changed since the caller looked is not the caller's to extend. */
    if (ctx->host_wait_count || len != left || (len && ctx->armed_owner != owner) ||
        atomic_load_explicit(&ctx->lost, memory_order_relaxed))
        goto out;
    if (n > VKC_ARM_DEPTH_MAX - len)
        n = VKC_ARM_DEPTH_MAX - len;
    if (!n)
        goto out;
    /* One submission per copy: its own gate value, its own signal. The
     * wait holds all stages (a mask of compute and predicate reads measured
     * the same on the H200: 6.33 against 6.29 us, vkc-bench reuse). */
    static const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo *sub = ctx->arm_sub;
    uint64_t sig = VKC_MAX(atomic_load_explicit(&ctx->signalled_value, memory_order_relaxed),
                           ctx->arm_sig_value);
    bool asked = atomic_load_explicit(&ctx->signal_asked, memory_order_relaxed);
    for (uint32_t k = 0; k < n; ++k) {
        const uint64_t value = ctx->next_value + 1 + k;
        vkc__armed *a = vkc__armed_at(ctx, len + k);
        a->cmd = cmds[k];
        a->value = value;
        a->signals = vkc__submit_signals(ctx, cmds[k], value, 0, sig, asked);
        if (a->signals) {
            sig = value;
            asked = false; /* one signal answers the pool */
        }
        /* A unit's first submit signals, not its later copies in the batch. */
        if (!cmds[k]->last_value)
            cmds[k]->last_value = value;
        vkc__arm_wait *w = &ctx->arm_waits[k];
        w->gate_at = ctx->gate_value + len + 1 + k;
        w->value = value;
        w->ts = (VkTimelineSemaphoreSubmitInfo){VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        w->ts.waitSemaphoreValueCount = 1;
        w->ts.pWaitSemaphoreValues = &w->gate_at;
        w->ts.signalSemaphoreValueCount = a->signals ? 1 : 0;
        w->ts.pSignalSemaphoreValues = a->signals ? &w->value : NULL;
        sub[k] = (VkSubmitInfo){VK_STRUCTURE_TYPE_SUBMIT_INFO};
        sub[k].pNext = &w->ts;
        sub[k].waitSemaphoreCount = 1;
        sub[k].pWaitSemaphores = &ctx->gate;
        sub[k].pWaitDstStageMask = &stage;
        sub[k].commandBufferCount = 1;
        sub[k].pCommandBuffers = &cmds[k]->cb;
        sub[k].signalSemaphoreCount = a->signals ? 1 : 0;
        sub[k].pSignalSemaphores = a->signals ? &ctx->timeline : NULL;
    }
    VkResult vr = VKC_VK(vkQueueSubmit, ctx->vk.vkQueueSubmit(ctx->queue, n, sub, VK_NULL_HANDLE));
    if (vr < 0) {
        for (uint32_t k = 0; k < n; ++k)
            if (cmds[k]->last_value > ctx->next_value)
                cmds[k]->last_value = 0; /* never submitted after all */
        r = vkc__vk_fail(ctx, vr, "vkQueueSubmit(armed copies)", __FILE__, __LINE__);
        goto out;
    }
    for (uint32_t k = 0; k < n; ++k)
        cmds[k]->last_value = ctx->next_value + 1 + k; /* the last one of each unit stays */
    ctx->next_value += n;
    ctx->arm_sig_value = sig; /* the last signal among the queued copies, or before them */
    ctx->armed_owner = owner;
    atomic_store_explicit(&ctx->arm_len, len + n, memory_order_relaxed);
    atomic_store_explicit(&ctx->armed_cmd, vkc__armed_at(ctx, 0)->cmd, memory_order_relaxed);
    atomic_store_explicit(&ctx->last_submit, cmds[n - 1], memory_order_relaxed);
    VKC_STAT_ADD(ctx, submits, n);
out:
    pthread_mutex_unlock(&ctx->queue_lock);
    if (ctx->queue_unlock_fn)
        ctx->queue_unlock_fn(ctx->queue_lock_user);
    return r;
}

vkc_result vkc__arm_open(vkc_context *ctx, vkc__cmd *cmd, uint64_t *out_value, bool *opened)
{
    *opened = false;
    /* Unlocked: only this unit's submitting thread arms it. */
    if (VKC_LIKELY(atomic_load_explicit(&ctx->armed_cmd, memory_order_relaxed) != cmd))
        return VKC_SUCCESS;
    /* What vkc__submit does first (resident kernels' posts ordered). */
    VKC_FORWARD(vkc__resident_order(ctx));
    if (ctx->queue_lock_fn)
        ctx->queue_lock_fn(ctx->queue_lock_user);
    pthread_mutex_lock(&ctx->queue_lock);
    vkc_result r = VKC_SUCCESS;
    if (ctx->armed_cmd == cmd) {
        const uint64_t value = vkc__armed_at(ctx, 0)->value;
        /* Its predicate word is 1: set before it was armed, and only a
         * cancel (which disarms it) writes 0. */
        r = vkc__gate_open_locked(ctx, 1);
        if (r >= 0) {
            cmd->run_value = value;
            cmd->run_armed = true;
            *out_value = value;
            *opened = true;
            VKC_STAT_ADD(ctx, armed_opens, 1);
        }
    }
    pthread_mutex_unlock(&ctx->queue_lock);
    if (ctx->queue_unlock_fn)
        ctx->queue_unlock_fn(ctx->queue_lock_user);
    return r;
}

/* Until value completed (spinning on the count: no driver call, no lock),
 * or the wait bound; false on the bound. */
static bool vkc__arm_settle(vkc_context *ctx, uint64_t value)
{
    const uint64_t start = vkc__now_ns();
    for (uint32_t spins = 1; !vkc__queue_idle(ctx, value); ++spins) {
        if (ctx->info.type == VKC_DEVICE_TYPE_CPU)
            sched_yield(); /* the device's own threads run on these cores */
        if ((spins & 255) == 0 && vkc__now_ns() - start >= ctx->wait_timeout_ns)
            return false;
    }
    if (atomic_load_explicit(&vkc__timing, memory_order_relaxed)) /* VKC_TIME_CALLS */
        vkc__time_add("wait", "armed copies' cancel (their units' earlier runs)",
                      vkc__now_ns() - start);
    return true;
}

void vkc__arm_cancel_locked(vkc_context *ctx)
{
    const uint32_t n = atomic_load_explicit(&ctx->arm_len, memory_order_relaxed);
    if (VKC_LIKELY(!n))
        return;
    /* A unit's word serves all its submits: one that runs its dispatches
     * (opened, or ordinary) and is still to run must read 1. It is on the
     * GPU already (only armed copies wait on the gate), so this waits for
     * a copy's run at most, and not at all in a round-trip loop. */
    uint64_t run = 0;
    for (uint32_t k = 0; k < n; ++k)
        run = VKC_MAX(run, vkc__armed_at(ctx, k)->cmd->run_value);
    if (run && !vkc__arm_settle(ctx, run)) {
        /* The copies stay behind the gate: the device is as good as lost. */
        vkc__log(ctx, VKC_LOG_ERROR, VKC_LOG_ID_GENERAL,
                 "armed copies: the work before them did not complete within the wait bound");
        atomic_store(&ctx->lost, true);
        return;
    }
    /* The words, then the signal: a copy reads its word only after the gate. */
    for (uint32_t k = 0; k < n; ++k) {
        vkc__cmd *c = vkc__armed_at(ctx, k)->cmd;
        if (!ctx->test_arm_blind)
            ctx->arm_pred[c->pred_slot - 1] = 0;
        atomic_store_explicit(&c->pred_zero, true, memory_order_release);
    }
    atomic_thread_fence(memory_order_seq_cst);
    /* The owner's miss count before the gate opens: once the queue shows
     * empty, the owner's destroy (another thread, vkc__arm_cancel) no
     * longer takes the lock and may free the count (TSan, test_epilogue
     * test_threads: a cancelled sequence freed while the count was bumped). */
    atomic_uint *misses = ctx->armed_owner;
    if (misses)
        atomic_fetch_add_explicit(misses, 1, memory_order_relaxed);
    if (vkc__gate_open_locked(ctx, n) < 0) {
        atomic_store(&ctx->lost, true);
        return;
    }
    VKC_STAT_ADD(ctx, armed_cancels, n);
}

void vkc__arm_cancel(vkc_context *ctx, const void *owner)
{
    /* Acquire: an empty queue seen here comes after everything the last
     * cancel or open did to the owner (vkc__gate_open_locked's release). */
    if (VKC_LIKELY(!atomic_load_explicit(&ctx->arm_len, memory_order_acquire)))
        return;
    if (ctx->queue_lock_fn)
        ctx->queue_lock_fn(ctx->queue_lock_user);
    pthread_mutex_lock(&ctx->queue_lock);
    if (!owner || ctx->armed_owner == owner)
        vkc__arm_cancel_locked(ctx);
    pthread_mutex_unlock(&ctx->queue_lock);
    if (ctx->queue_unlock_fn)
        ctx->queue_unlock_fn(ctx->queue_lock_user);
}

bool vkc__arm_restore(vkc_context *ctx, vkc__cmd *cmd)
{
    if (VKC_LIKELY(!atomic_load_explicit(&cmd->pred_zero, memory_order_acquire)))
        return true;
    /* The cancelled copies read the word when they run: 1 only after the
     * last ran (the timeline says so, or the count, of the value after it
     * where that copy counts before its last read). No wait: they may sit
     * behind work that waits on the host. */
    if (atomic_load_explicit(&ctx->completed_value, memory_order_acquire) < cmd->last_value &&
        !vkc__queue_idle(ctx, cmd->last_value + (cmd->count_first ? 1 : 0)))
        return false;
    ctx->arm_pred[cmd->pred_slot - 1] = 1;
    atomic_store_explicit(&cmd->pred_zero, false, memory_order_relaxed);
    return true;
}
