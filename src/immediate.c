/* Immediate mode (vkc_dispatch, vkc_copy, vkc_flush, vkc_finish) and the
 * dispatch module's lifecycle hooks.
 *
 * Immediate commands go into a ring of sequences (batches); a batch is
 * submitted when it holds batch_size commands or at a flush. Being the top
 * of the dispatch module, this file also holds the module's hooks in the
 * context's module table: init (sequence ring depth, the batch ring, the
 * flush hook memory uses, the completion marker), drop, finish, lose,
 * rebuild.
 *
 * Owns: vkc__imm, ctx->flush_immediate. Calls: dispatch.c (sequences),
 * pool (waits), memory and kernel (the marker's buffer and kernel). */
#include "seq.h"

#include "vkc_builtin_shaders.h"

#include <stdio.h>

struct vkc__imm {
    pthread_mutex_t lock;
    uint32_t count; /* batches in the ring */
    uint32_t cur;
    vkc_seq **batches;
    uint64_t *values; /* ticket of each batch's last submit */
    uint32_t pending; /* commands in the open batch */
};

/* Caller holds m->lock. Submit the open batch and move to the next slot. */
static vkc_result vkc__imm_submit_locked(vkc_context *ctx, vkc__imm *m)
{
    vkc_seq *s = m->batches[m->cur];
    m->pending = 0;
    vkc_result r = vkc_seq_end(s);
    vkc_ticket t = {0};
    if (r >= 0)
        r = vkc_seq_submit(s, &t);
    /* A batch is never submitted again: its unit goes to the pool now with
     * the one reference on what the batch names, so those objects go as
     * soon as the batch completes, not when its slot comes round again. */
    if (r >= 0)
        vkc__seq_let_go(s);
    m->values[m->cur] = t.value;
    m->cur = (m->cur + 1) % m->count;
    return r;
}

/* Caller holds m->lock. Make the current slot ready to take commands. */
static vkc_result vkc__imm_open_locked(vkc_context *ctx, vkc__imm *m)
{
    vkc_seq *s = m->batches[m->cur];
    if (m->pending)
        return VKC_SUCCESS;
    /* The slot's previous batch must be done before its commands are replaced
     * (its units are released to the pool only then anyway). */
    if (m->values[m->cur])
        VKC_FORWARD_DONE(
            vkc__wait_bounded(ctx, m->values[m->cur], "immediate mode (all batches in flight)"));
    return vkc_seq_begin(s);
}

/* Submit the open batch if it holds anything. */
static vkc_result vkc__imm_flush(vkc_context *ctx, vkc_ticket *out)
{
    if (out)
        memset(out, 0, sizeof(*out));
    vkc__imm *m = ctx->imm;
    if (!m)
        return VKC_SUCCESS;
    pthread_mutex_lock(&m->lock);
    vkc_result r = m->pending ? vkc__imm_submit_locked(ctx, m) : VKC_SUCCESS;
    pthread_mutex_unlock(&m->lock);
    if (out && r >= 0) {
        out->value = vkc__submitted_value(ctx);
        out->context_id = out->value ? ctx->id : 0;
    }
    return r;
}

/* ctx->flush_immediate: memory's blocking transfers call it through the
 * context, so that memory never calls up into dispatch. */
static vkc_result vkc__imm_flush_hook(vkc_context *ctx)
{
    return vkc__imm_flush(ctx, NULL);
}

static vkc_result vkc__imm_enqueue(vkc_context *ctx, const vkc_dispatch_desc *d, vkc_buffer *dst,
                                   uint64_t dst_offset, vkc_buffer *src, uint64_t src_offset,
                                   uint64_t size)
{
    vkc__imm *m = ctx->imm;
    pthread_mutex_lock(&m->lock);
    vkc_result r = vkc__imm_open_locked(ctx, m);
    if (r == VKC_SUCCESS) {
        vkc_seq *s = m->batches[m->cur];
        r = d ? vkc_seq_dispatch(s, d) : vkc_seq_copy(s, dst, dst_offset, src, src_offset, size);
        if (r < 0) {
            /* A rejected command must not poison the batch for the next one. */
            s->error = VKC_SUCCESS;
        } else {
            m->pending = s->cmd_count;
            if (m->pending >= ctx->features.batch_size)
                r = vkc__imm_submit_locked(ctx, m);
        }
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

vkc_result vkc_dispatch(vkc_context *ctx, const vkc_dispatch_desc *d)
{
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!d, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_dispatch: desc is NULL");
    return vkc__imm_enqueue(ctx, d, NULL, 0, NULL, 0, 0);
}

vkc_result vkc_copy(vkc_context *ctx, vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                    uint64_t src_offset, uint64_t size)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_enqueue(ctx, NULL, dst, dst_offset, src, src_offset, size);
}

vkc_result vkc_flush(vkc_context *ctx, vkc_ticket *out)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_flush(ctx, out);
}

vkc_result vkc_finish(vkc_context *ctx)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__drain(ctx);
}

vkc_result vkc_finish_timeout(vkc_context *ctx, uint64_t timeout_ns)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__drain_timeout(ctx, timeout_ns);
}

/* ---- module hooks ---------------------------------------------------------------------------- */

vkc_result vkc__dispatch_init(vkc_context *ctx)
{
    vkc__imm *m = vkc__calloc(1, sizeof(*m));
    if (!m)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "immediate mode");
    pthread_mutex_init(&m->lock, NULL);
    ctx->imm = m;
    ctx->flush_immediate = vkc__imm_flush_hook;
    ctx->seq_ring =
        ctx->features.wait_mode == VKC_WAIT_SPIN_MARKER ? VKC_SEQ_RING_MAX : VKC_SEQ_RING;
    char fallback[48];
    snprintf(fallback, sizeof(fallback), "the default: %u", ctx->seq_ring);
    /* for experiments */
    vkc__env_uint(ctx, "VKC_SEQ_RING", 1, VKC_SEQ_RING_MAX, fallback, &ctx->seq_ring);
    m->count = ctx->features.batches_in_flight;
    m->batches = vkc__calloc(m->count, sizeof(*m->batches));
    m->values = vkc__calloc(m->count, sizeof(*m->values));
    if (!m->batches || !m->values)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "immediate mode ring");
    for (uint32_t i = 0; i < m->count; ++i) {
        vkc_seq_desc d = {"vkc immediate batch"};
        VKC_FORWARD(vkc_seq_create(ctx, &d, &m->batches[i]));
        m->batches[i]->ring = 1; /* recorded once per submit: one copy is enough */
        /* Owned by the ring, not by the caller's list of live objects. */
        pthread_mutex_lock(&ctx->objects_lock);
        vkc__list_remove(&m->batches[i]->obj.node);
        pthread_mutex_unlock(&ctx->objects_lock);
    }
    return VKC_SUCCESS;
}

void vkc__dispatch_finish(vkc_context *ctx)
{
    vkc__imm *m = ctx->imm;
    if (!m)
        return;
    for (uint32_t i = 0; m->batches && i < m->count; ++i)
        vkc_seq_destroy(m->batches[i]);
    vkc__free(m->batches);
    vkc__free(m->values);
    pthread_mutex_destroy(&m->lock);
    vkc__free(m);
    ctx->imm = NULL;
    ctx->flush_immediate = NULL;
}

void vkc__dispatch_drop(vkc_context *ctx)
{
    for (vkc__node *n = ctx->seqs.next, *next; n && n != &ctx->seqs; n = next) {
        next = n->next; /* a destroy frees this one only */
        vkc_seq_destroy((vkc_seq *)VKC_OBJ_OF(n));
    }
    /* The batches let go of what they recorded before the objects go; the
     * ring itself goes with the module (vkc__dispatch_finish). */
    vkc__imm *m = ctx->imm;
    for (uint32_t i = 0; m && m->batches && i < m->count; ++i)
        if (m->batches[i])
            vkc__seq_let_go(m->batches[i]);
}

vkc_result vkc__dispatch_lose(vkc_context *ctx)
{
    for (vkc__node *n = ctx->seqs.next; n != &ctx->seqs; n = n->next)
        vkc__seq_lose((vkc_seq *)VKC_OBJ_OF(n));
    vkc__imm *m = ctx->imm;
    for (uint32_t i = 0; m && m->batches && i < m->count; ++i)
        if (m->batches[i])
            vkc__seq_lose(m->batches[i]);
    return VKC_SUCCESS;
}

vkc_result vkc__dispatch_rebuild(vkc_context *ctx)
{
    vkc__imm *m = ctx->imm;
    if (!m)
        return VKC_SUCCESS;
    pthread_mutex_lock(&m->lock);
    m->cur = 0;
    m->pending = 0;
    vkc_result r = VKC_SUCCESS;
    for (uint32_t i = 0; i < m->count; ++i) {
        m->values[i] = 0;
        if (r >= 0)
            r = vkc_seq_begin(m->batches[i]);
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

/* The completion marker (VKC_WAIT_SPIN_MARKER): pool.c records and reads it;
 * it is made here, where buffers and kernels can be created. */
vkc_result vkc__marker_init(vkc_context *ctx)
{
    if (ctx->features.wait_mode != VKC_WAIT_SPIN_MARKER)
        return VKC_SUCCESS;
    if (!ctx->features.timeline_semaphores) {
        /* The fence fallback keeps its own completion tracking. */
        ctx->features.wait_mode = VKC_WAIT_SPIN_THEN_BLOCK;
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
                 "VKC_WAIT_SPIN_MARKER needs timeline semaphores; using spin-then-block");
        return VKC_SUCCESS;
    }
    VKC_FORWARD(vkc_buffer_create(
        ctx, &(vkc_buffer_desc){.size = 64, .memory = VKC_MEMORY_READBACK, .name = "vkc marker"},
        &ctx->marker_buf));
    ctx->marker = vkc_buffer_map(ctx->marker_buf);
    if (!ctx->marker || !ctx->marker_buf->host_coherent)
        return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                        "VKC_WAIT_SPIN_MARKER needs host-visible coherent memory");
    *ctx->marker = 0;
    VKC_FORWARD(vkc_kernel_create(ctx,
                                  &(vkc_kernel_desc){.spirv = vkc_builtin_marker,
                                                     .spirv_size = vkc_builtin_marker_size,
                                                     .name = "vkc completion marker"},
                                  &ctx->marker_kernel));
    atomic_store(&ctx->marker_on, true);
    return VKC_SUCCESS;
}
