/* The queue side of armed submission (arm.c has the policy, the recording
 * and the self-test): opening the gate for the armed copy, cancelling it,
 * and giving a cancelled copy's predicate word back. Part of the pool
 * module, beside the submit path (pool.c), which arms a copy
 * (vkc__arm_unit) and cancels one before anything else reaches the queue.
 *
 * Owns: the gate's value and the armed copy's state (under queue_lock).
 * Calls: pool.c (the signal ring), wait (vkc__queue_idle). */
#include "vkc_internal.h"

/* Caller holds queue_lock. The host's signal of the gate's next value. */
static vkc_result vkc__gate_open_locked(vkc_context *ctx)
{
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = ctx->gate;
    si.value = ctx->gate_value + 1;
    VkResult vr = VKC_VK(vkSignalSemaphore, ctx->vk.vkSignalSemaphore(ctx->device, &si));
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkSignalSemaphore(gate)", __FILE__, __LINE__);
    ctx->gate_value = si.value;
    if (ctx->armed_signals)
        vkc__signal_note_locked(ctx, ctx->armed_value);
    ctx->armed_signals = false;
    /* Handed out now: waits, the drain and tickets may name it. */
    atomic_store_explicit(&ctx->submitted_value, ctx->armed_value, memory_order_release);
    ctx->armed_cmd = NULL;
    ctx->armed_owner = NULL;
    return VKC_SUCCESS;
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
        const uint64_t value = ctx->armed_value;
        /* Its predicate word is 1: set before it was armed, and only a
         * cancel (which disarms it) writes 0. */
        r = vkc__gate_open_locked(ctx);
        if (r >= 0) {
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

void vkc__arm_cancel_locked(vkc_context *ctx)
{
    vkc__cmd *c = atomic_load_explicit(&ctx->armed_cmd, memory_order_relaxed);
    if (VKC_LIKELY(!c))
        return;
    /* The word, then the signal: the copy reads it only after the gate. */
    if (!ctx->test_arm_blind)
        ctx->arm_pred[c->pred_slot - 1] = 0;
    atomic_store_explicit(&c->pred_zero, true, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    atomic_uint *misses = ctx->armed_owner;
    if (vkc__gate_open_locked(ctx) < 0) {
        /* The copy stays behind the gate: the device is as good as lost. */
        atomic_store(&ctx->lost, true);
        ctx->armed_cmd = NULL;
        return;
    }
    if (misses)
        atomic_fetch_add_explicit(misses, 1, memory_order_relaxed);
    VKC_STAT_ADD(ctx, armed_cancels, 1);
}

void vkc__arm_cancel(vkc_context *ctx, const void *owner)
{
    if (VKC_LIKELY(!atomic_load_explicit(&ctx->armed_cmd, memory_order_relaxed)))
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
    /* The cancelled copy reads the word when it runs: 1 only after it ran.
     * No wait: it may sit behind work that waits on the host. */
    if (!vkc__queue_idle(ctx, cmd->last_value))
        return false;
    ctx->arm_pred[cmd->pred_slot - 1] = 1;
    atomic_store_explicit(&cmd->pred_zero, false, memory_order_relaxed);
    return true;
}
