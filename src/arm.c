/* Armed submission: the round trip of a recorded sequence without a
 * vkQueueSubmit on it.
 *
 * A sequence that is submitted again and again on an idle queue (submit,
 * wait, submit: the latency-bound loop) has its next recorded copies
 * submitted ahead of time, right after the current one, waiting on the
 * context's gate: a timeline semaphore that only the host signals. The
 * caller's next vkc_seq_submit of that sequence then signals the gate
 * (vkSignalSemaphore) instead of submitting: the driver's submit path is
 * off the round trip (on the H200, 6.0-6.6 us against 12.8 us for a
 * submit of the same copy; vkc-bench reuse, raw-seqpoll-gated). The queue
 * of copies grows while the round trips keep coming (vkc__seq_arm_next),
 * so that one vkQueueSubmit arms many of them (gate.c).
 *
 * Nothing else may queue behind a copy that waits on the gate, so every
 * other submission, vkc_queue_lock, the drain and the sequence's own
 * changes cancel them first (gate.c): their predicate words go to 0 and the
 * gate opens, and the copies run with their dispatches skipped (they are
 * recorded under conditional rendering on that word) but their barriers and
 * completion markers as ever, so every value still completes in order.
 * Whether the device honours a word the host wrote after the copy was
 * submitted is not promised by Vulkan: a self-test at context creation
 * checks it (cancelled copies must not run, opened ones must) and else
 * leaves arming off, with the reason in vkc_context_features.
 *
 * Owns: the gate semaphore and the predicate words (made and freed here),
 * the policy (vkc__seq_arm_next) and the self-test. Calls: pool
 * (arming, opening, cancelling, restoring in gate.c),
 * memory and kernel (the self-test's buffer and kernel), dispatch.c's
 * sequences. */
#include "seq.h"

#include "vkc_builtin_shaders.h"

#include <stdio.h>

/* Predicate words: one per recording unit that had one, 4 bytes each. */
#define VKC_ARM_SLOTS 4096u
/* Cancels of a sequence's armed copies (other work came first) after which
 * it stops arming for VKC_ARM_QUIET submits. */
#define VKC_ARM_MISSES 4u
#define VKC_ARM_QUIET 256u
/* Round trips at most this far apart deepen the armed queue. */
#define VKC_ARM_QUICK_NS 1000000u
/* Rounds of the self-test: each cancels one armed copy and opens another. */
#define VKC_ARM_ROUNDS (VKC_ARM_SELFTEST_SUBMITS / 2)

bool vkc__seq_armable(const vkc_seq *s)
{
    /* One recorded copy (immediate batches, long sequences): the next copy
     * is the one just submitted, never idle when armed. */
    if (!s->obj.ctx->arm_on || s->img_count || !s->dispatches || vkc__seq_ring_of(s) < 2)
        return false;
    for (uint32_t i = 0; i < s->cmd_count; ++i)
        if (s->cmds[i].kind != VKC_CMD_DISPATCH)
            return false;
    return true;
}

static void vkc__arm_cond(vkc_context *ctx, vkc__cmd *unit, bool inverted)
{
    VkConditionalRenderingBeginInfoEXT ci = {
        VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT};
    ci.buffer = ctx->arm_pred_buf->buffer;
    ci.offset = ctx->arm_pred_buf->offset + 4ull * (unit->pred_slot - 1);
    ci.flags = inverted ? VK_CONDITIONAL_RENDERING_INVERTED_BIT_EXT : 0;
    ctx->vk.vkCmdBeginConditionalRenderingEXT(unit->cb, &ci);
}

bool vkc__arm_slot(vkc_seq *s, vkc__cmd *unit)
{
    vkc_context *ctx = s->obj.ctx;
    if (!unit->pred_slot) {
        uint32_t slot = atomic_fetch_add_explicit(&ctx->arm_pred_next, 1, memory_order_relaxed);
        if (slot >= ctx->arm_pred_cap)
            return false; /* every word is taken: this copy is not armable */
        unit->pred_slot = slot + 1;
        ctx->arm_pred[slot] = 1;
    }
    return true;
}

void vkc__arm_block(vkc_seq *s, vkc__cmd *unit)
{
    vkc__arm_cond(s->obj.ctx, unit, false);
    unit->conditional = true;
}

void vkc__arm_end(vkc_seq *s, vkc__cmd *unit)
{
    if (unit->conditional)
        s->obj.ctx->vk.vkCmdEndConditionalRenderingEXT(unit->cb);
}

void vkc__arm_inverted_marker(vkc_seq *s, vkc__cmd *unit)
{
    vkc_context *ctx = s->obj.ctx;
    vkc__arm_cond(ctx, unit, true);
    vkc__cmd_marker_dispatch(ctx, unit);
    ctx->vk.vkCmdEndConditionalRenderingEXT(unit->cb);
}

vkc_result vkc__seq_arm_next(vkc_seq *s, uint64_t value, bool opened)
{
    vkc_context *ctx = s->obj.ctx;
    /* How deep: one copy after an ordinary submit (the queue was empty or
     * cancelled), twice as many each time as many opened in a row as were
     * armed, while the round trips come quickly (a cancel waits for a copy
     * that is running: a short one), up to VKC_ARM_DEPTH. */
    const uint64_t now = vkc__now_ns();
    const bool quick = now - s->arm_last_ns <= VKC_ARM_QUICK_NS;
    s->arm_last_ns = now;
    if (!opened || !quick || !s->arm_depth) {
        s->arm_depth = 1;
        s->arm_streak = 0;
    } else if (++s->arm_streak >= s->arm_depth && s->arm_depth < ctx->arm_depth_max) {
        s->arm_depth = VKC_MIN(2 * s->arm_depth, ctx->arm_depth_max);
        s->arm_streak = 0;
    }
    if (s->arm_quiet) {
        s->arm_quiet--;
        return VKC_SUCCESS;
    }
    if (atomic_load_explicit(&s->arm_misses, memory_order_relaxed) >= VKC_ARM_MISSES) {
        /* Its armed copies keep being cancelled: other work comes between
         * its submits. Quiet for a while, then try again. */
        atomic_store_explicit(&s->arm_misses, 0, memory_order_relaxed);
        s->arm_quiet = VKC_ARM_QUIET;
        return VKC_SUCCESS;
    }
    /* Only for a round trip: everything before this submit was complete
     * (a queue kept busy gains nothing from it). */
    if (value < 2 || !vkc__queue_idle(ctx, value - 1))
        return VKC_SUCCESS;
    /* The copies left are the sequence's own (its open took the oldest);
     * topped up once half are gone: most round trips make no vkQueueSubmit. */
    const uint32_t left = opened ? atomic_load_explicit(&ctx->arm_len, memory_order_relaxed) : 0;
    if (left > s->arm_depth / 2)
        return VKC_SUCCESS;
    const uint32_t ring = vkc__seq_ring_of(s);
    const uint32_t want = s->arm_depth - left;
    if (!s->arm_units)
        s->arm_units = vkc__calloc(ctx->arm_depth_max, sizeof(*s->arm_units));
    if (!s->arm_units)
        return VKC_SUCCESS; /* best effort: the next submit goes the ordinary way */
    vkc__cmd **units = s->arm_units;
    uint32_t n = 0;
    for (; n < want; ++n) {
        const uint32_t j = (s->next_unit + left + n) % ring;
        /* Recorded for the current commands, and not left at 0 by a cancel
         * whose copies are still to run. */
        vkc__cmd *u = s->units[j];
        if (!u || s->unit_gen[j] != s->gen) {
            if (vkc__seq_ensure_unit(s, j) < 0)
                break;
            u = s->units[j];
        }
        if (!u->conditional || !vkc__arm_restore(ctx, u))
            break;
        /* A cancel waits for what the unit runs already (gate.c): an opened
         * copy, or a finished submit, never one that may wait on the host. */
        if (u->run_value && !u->run_armed && !vkc__queue_idle(ctx, u->run_value))
            break;
        units[n] = u;
    }
    return n ? vkc__arm_units(ctx, units, n, &s->arm_misses, left) : VKC_SUCCESS;
}

/* ---- setup and the self-test ----------------------------------------------------------- */

static vkc_result vkc__gate_create(vkc_context *ctx)
{
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &tci;
    VkResult vr = VKC_VK(vkCreateSemaphore,
                         ctx->vk.vkCreateSemaphore(ctx->device, &sci, ctx->alloc, &ctx->gate));
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkCreateSemaphore(gate)", __FILE__, __LINE__);
    vkc__set_name(ctx, VK_OBJECT_TYPE_SEMAPHORE, (uint64_t)ctx->gate, "vkc armed-submission gate");
    ctx->gate_value = 0;
    return VKC_SUCCESS;
}

/* One round: the sequence writes `pattern` to word[0]. An armed copy that
 * is cancelled must leave the word alone; the next one, opened, must write
 * it. Sets *why (static text) on a failure. */
static vkc_result vkc__arm_round(vkc_context *ctx, vkc_seq *s, volatile uint32_t *word,
                                 uint32_t pattern, atomic_uint *misses, const char **why)
{
    *why = NULL;
    for (int open = 0; open < 2 && !*why; ++open) {
        *word = 0;
        vkc__cmd *u = s->units[0];
        if (!vkc__arm_restore(ctx, u)) {
            *why = "self-test: a cancelled armed copy did not complete";
            break;
        }
        VKC_FORWARD(vkc__arm_units(ctx, &u, 1, misses, 0));
        if (atomic_load(&ctx->armed_cmd) != u) {
            *why = "self-test: a copy could not be armed";
            break;
        }
        uint64_t value = 0;
        if (open) {
            bool opened = false;
            VKC_FORWARD(vkc__arm_open(ctx, u, &value, &opened));
            if (!opened) {
                *why = "self-test: an armed copy could not be opened";
                break;
            }
        } else {
            vkc__arm_cancel(ctx, NULL);
            value = vkc__submitted_value(ctx);
        }
        vkc_result r = vkc__wait_value(ctx, value, 5000000000ull, VKC_WAIT_BLOCK);
        if (r == VKC_TIMEOUT) {
            *why = "self-test: an armed copy did not complete within 5 s of its gate";
            break;
        }
        VKC_FORWARD(r);
        if (!vkc__marker_done(ctx, value))
            *why = "self-test: an armed copy's completion marker was not seen";
        else if (open && *word != pattern)
            *why = "self-test: an opened armed copy did not run its dispatch";
        else if (!open && *word != 0)
            *why = "self-test: a cancelled armed copy ran its dispatch (the device read the "
                   "predicate before the host's write)";
    }
    return VKC_SUCCESS;
}

static vkc_result vkc__arm_check(vkc_context *ctx, const char **why)
{
    vkc_kernel *k = NULL;
    vkc_buffer *b = NULL;
    vkc_seq *s = NULL;
    atomic_uint misses = 0; /* the owner the self-test's armed copies name */
    *why = NULL;
    vkc_result r = vkc_kernel_create(ctx,
                                     &(vkc_kernel_desc){.spirv = vkc_builtin_fill_u32,
                                                        .spirv_size = vkc_builtin_fill_u32_size,
                                                        .name = "vkc arm self-test"},
                                     &k);
    if (r >= 0)
        r = vkc_buffer_create(
            ctx, &(vkc_buffer_desc){.size = 64, .memory = VKC_MEMORY_READBACK, .name = "vkc arm"},
            &b);
    volatile uint32_t *word = r >= 0 ? vkc_buffer_map(b) : NULL;
    if (r >= 0 && (!word || !b->host_coherent))
        *why = "no host-visible coherent memory for the self-test";
    if (r >= 0 && !*why)
        r = vkc_seq_create(ctx, &(vkc_seq_desc){.name = "vkc arm self-test", .profile = VKC_OFF},
                           &s);
    for (uint32_t i = 0; r >= 0 && !*why && i < VKC_ARM_ROUNDS; ++i) {
        const uint32_t push[2] = {1, 0xa4a40000u + i};
        vkc_arg a = {.buffer = b, .access = VKC_ACCESS_WRITE};
        r = vkc_seq_begin(s);
        if (r >= 0)
            r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                         .args = &a,
                                                         .arg_count = 1,
                                                         .push = push,
                                                         .push_size = sizeof(push),
                                                         .groups = {1, 1, 1}});
        if (r >= 0)
            r = vkc_seq_end(s);
        if (r >= 0 && (!s->units[0] || !s->units[0]->conditional))
            *why = "self-test: the copy was not recorded for arming";
        if (r >= 0 && !*why)
            r = vkc__arm_round(ctx, s, word, push[1], &misses, why);
    }
    vkc__arm_cancel(ctx, NULL);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(b);
    vkc_kernel_destroy(k);
    return r;
}

vkc_result vkc__arm_selftest(vkc_context *ctx, const char **why)
{
    return vkc__arm_check(ctx, why);
}

vkc_result vkc__arm_init(vkc_context *ctx)
{
    ctx->arm_on = false;
    const char *why = NULL;
    bool want = true; /* VKC_ARM=0: for experiments, the ordinary submit only */
    if (vkc__env_flag(ctx, "VKC_ARM", "the default: on", &want) && !want)
        why = "VKC_ARM=0";
    else if (!ctx->conditional_rendering)
        why = "no VK_EXT_conditional_rendering";
    else if (!ctx->features.timeline_semaphores)
        why = "no timeline semaphores";
    else if (!vkc__marker_on(ctx) ||
             !atomic_load_explicit(&ctx->marker_trusted, memory_order_relaxed))
        why = "the completion marker is not used";
    else if (ctx->features.wrapped || ctx->queue_lock_fn)
        why = "the host shares the device or the queue";
    if (why) {
        snprintf(ctx->arm_reason, sizeof(ctx->arm_reason), "%s", why);
        return VKC_SUCCESS;
    }
    /* A CPU device gains nothing from a deep queue (lavapipe: 13.2 us of
     * round trip at 512 against 13.4 at 1) and its cancel runs every copy
     * on the host's cores (4.3 ms for 400): one copy there. Nor under the
     * validation layer (1.3.239), which loses track of many waits on the
     * gate: it reports host signals past them as out of order (gate.c's
     * false 03259) and, on the H200 with threads, times out on its own
     * state ("most likely a validation bug"); VKC_ARM_DEPTH still asks
     * for a deep queue there (test_arm does). */
    const bool one = ctx->info.type == VKC_DEVICE_TYPE_CPU || ctx->features.validation;
    ctx->arm_depth_max = one ? 1 : VKC_ARM_DEPTH;
    (void)vkc__env_uint(ctx, "VKC_ARM_DEPTH", 1, VKC_ARM_DEPTH_MAX,
                        one ? "the default on a CPU device or with validation: 1"
                            : "the default: 256",
                        &ctx->arm_depth_max);
    ctx->arm_q = vkc__calloc(VKC_ARM_DEPTH_MAX, sizeof(*ctx->arm_q));
    ctx->arm_sub = vkc__calloc(VKC_ARM_DEPTH_MAX, sizeof(*ctx->arm_sub));
    ctx->arm_waits = vkc__calloc(VKC_ARM_DEPTH_MAX, sizeof(*ctx->arm_waits));
    if (!ctx->arm_q || !ctx->arm_sub || !ctx->arm_waits)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "armed submission's queue");
    VKC_FORWARD(vkc__gate_create(ctx));
    VKC_FORWARD(vkc_buffer_create(ctx,
                                  &(vkc_buffer_desc){.size = 4ull * VKC_ARM_SLOTS,
                                                     .memory = VKC_MEMORY_UPLOAD,
                                                     .name = "vkc arm predicates"},
                                  &ctx->arm_pred_buf));
    ctx->arm_pred = vkc_buffer_map(ctx->arm_pred_buf);
    if (!ctx->arm_pred || !ctx->arm_pred_buf->host_coherent) {
        ctx->arm_pred = NULL;
        snprintf(ctx->arm_reason, sizeof(ctx->arm_reason),
                 "no host-visible coherent memory for the predicates");
        return VKC_SUCCESS;
    }
    for (uint32_t i = 0; i < VKC_ARM_SLOTS; ++i)
        ctx->arm_pred[i] = 1;
    ctx->arm_pred_cap = VKC_ARM_SLOTS;
    atomic_store(&ctx->arm_pred_next, 0);
    ctx->arm_on = true;
    VKC_FORWARD(vkc__arm_check(ctx, &why));
    if (why) {
        ctx->arm_on = false;
        snprintf(ctx->arm_reason, sizeof(ctx->arm_reason), "%s", why);
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL, "armed submission not used (%s)", why);
        return VKC_SUCCESS;
    }
    snprintf(ctx->arm_reason, sizeof(ctx->arm_reason), "self-test passed");
    return VKC_SUCCESS;
}

void vkc__arm_finish(vkc_context *ctx)
{
    if (ctx->gate)
        ctx->vk.vkDestroySemaphore(ctx->device, ctx->gate, ctx->alloc);
    ctx->gate = VK_NULL_HANDLE;
    ctx->arm_pred = NULL; /* the buffer is a listed object: it went with the others */
    vkc__free(ctx->arm_q);
    vkc__free(ctx->arm_sub);
    vkc__free(ctx->arm_waits);
    ctx->arm_q = NULL;
    ctx->arm_sub = NULL;
    ctx->arm_waits = NULL;
}

/* Device loss: the armed copy died with the queue. Arming stays off on the
 * recovered device (its units and words are new): a documented limit. */
vkc_result vkc__arm_lose(vkc_context *ctx)
{
    atomic_store(&ctx->armed_cmd, NULL);
    atomic_store(&ctx->arm_len, 0);
    ctx->arm_head = 0;
    ctx->armed_owner = NULL;
    if (ctx->arm_on) {
        ctx->arm_on = false;
        snprintf(ctx->arm_reason, sizeof(ctx->arm_reason), "off after device-loss recovery");
    }
    vkc__arm_finish(ctx);
    return VKC_SUCCESS;
}
