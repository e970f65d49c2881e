/* Round-trip scenarios: naive, reuse, batch, family (reuse part). */
#include "bench.h"
#include "bench_shaders.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAIVE_BASE "naive/raw-naive"

/* ---- raw -------------------------------------------------------------------- */

typedef enum { RT_NAIVE, RT_BLOCK, RT_SPIN } rt_mode;

/* Record t's command buffer once with its one tiny dispatch, for the rows
 * that submit it again and again. */
static bool raw_tiny_record(raw *r, raw_tiny *t)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (!raw_ok(r, r->vkBeginCommandBuffer(t->cb, &bi), "vkBeginCommandBuffer"))
        return false;
    raw_cmd_dispatch(r, t->cb, &t->p, &t->a, t->push, 1, 1);
    return raw_ok(r, r->vkEndCommandBuffer(t->cb), "vkEndCommandBuffer");
}

/* One tiny dispatch (x[i] += 1 over TINY_N uints) per round trip. */
static void raw_roundtrip(bench *b, raw *r, const char *variant, rt_mode mode)
{
    char err[512] = "";
    raw_tiny t = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, NAIVE_BASE);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 5000)));
    RTRY(raw_tiny_init(r, &t, 0));
    if (mode != RT_NAIVE)
        RTRY(raw_tiny_record(r, &t));
    for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
        uint64_t t0 = bench_now_ns();
        if (mode == RT_NAIVE) {
            VkCommandBuffer c;
            RTRY(raw_begin(r, &c));
            raw_cmd_dispatch(r, c, &t.p, &t.a, t.push, 1, 1);
            RTRY(raw_end_wait(r, c)); /* a fence created, waited on, destroyed; CB freed */
        } else {
            RTRY(raw_submit_wait(r, t.cb, t.fence, mode == RT_SPIN));
        }
        uint64_t t1 = bench_now_ns();
        bench_times_put(&tm, i, (double)(t1 - t0));
    }
    RTRY(raw_tiny_check(r, &t, tm.warm + tm.iters, &rec));
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    raw_tiny_finish(r, &t);
}

/* ---- raw: host-polled completion, one factor at a time ------------------------ */

/* What a variant's submission holds besides the tiny dispatch, and how it is
 * waited for. Together they take vkc's completion marker apart: which part
 * costs what on the device. */
enum {
    SP_OWN = 1u << 0,           /* the dispatch itself counts in the host word */
    SP_MARKER = 1u << 1,        /* a barrier, a one-invocation counting dispatch, a host barrier */
    SP_LEAD = 1u << 2,          /* a barrier first, after the previous submission (as vkc) */
    SP_HOSTB = 1u << 3,         /* a compute -> host barrier at the end */
    SP_TIMELINE = 1u << 4,      /* each submit signals a timeline value (as vkc) */
    SP_RING1 = 1u << 5,         /* one command buffer re-submitted instead of a ring */
    SP_NOSIMUL = 1u << 6,       /* recorded without SIMULTANEOUS_USE (vkc sets it) */
    SP_WAIT_TIMELINE = 1u << 7, /* spin on the timeline's counter, not on the word */
    SP_STORE = 1u << 8,         /* count in device memory, store to the word (not an atomic) */
    SP_FILL = 1u << 9,          /* a barrier, vkCmdFillBuffer of a per-slot word, a host barrier */
    SP_EVERY8 = 1u << 10,       /* with SP_TIMELINE: only every 8th submit signals */
    SP_EVERY64 = 1u << 11,      /* with SP_TIMELINE: only every 64th submit signals */
    SP_GATE = 1u << 12,         /* pre-submitted behind a timeline gate the host opens */
    SP_GATE_ARM = 1u << 13,     /* with SP_GATE: the next one is armed inside the window */
    SP_COND = 1u << 14,         /* the dispatch under conditional rendering (as vkc arms) */
    SP_COND_INV = 1u << 15,     /* with SP_COND: then an inverted block with an empty dispatch */
    SP_COND_DL = 1u << 16,      /* with SP_COND: the predicate in device-local host memory */
    SP_GATE_THREAD = 1u << 17,  /* with SP_GATE: a spinning helper thread arms the next one */
    SP_WORKLEAD = 1u << 18,     /* with SP_LEAD: its source vkc's (compute and transfer) */
    SP_AHEAD1 = 1u << 19,       /* with SP_GATE_ARM: one copy armed ahead (as vkc arms) */
    SP_DEEP = 1u << 20,         /* with SP_GATE: SP_DEEP_N armed ahead, re-armed by halves */
    SP_INV_FIRST = 1u << 21,    /* with SP_COND_INV: the inverted block before the dispatch's */
};
/* SP_DEEP: copies armed ahead at most, and armed at once (one submit call)
 * whenever no more than that many are left. */
#define SP_DEEP_N 256u
#define SP_DEEP_BATCH 128u

/* SP_GATE_THREAD: the helper arms command buffer `cb` behind gate value
 * `value` whenever `value` is non-zero, then clears it. */
typedef struct sp_armer {
    raw *r;
    VkSemaphore gate;
    VkCommandBuffer cb;
    _Atomic uint64_t value;
    atomic_bool stop, failed;
} sp_armer;
#define SP_RING 4
#define SP_BASE "reuse/raw-seqpoll"

static void sp_barrier(raw *r, VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags sa,
                       VkPipelineStageFlags dst, VkAccessFlags da)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = sa, .dstAccessMask = da};
    r->vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Submit i of the loop: the next command buffer of the ring, signalling
 * timeline value i + 1 when asked. */
static bool sp_submit(raw *r, VkCommandBuffer cb, VkSemaphore tl, uint64_t value)
{
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                        .signalSemaphoreValueCount = 1,
                                        .pSignalSemaphoreValues = &value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .pNext = tl ? &ts : NULL,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb,
                       .signalSemaphoreCount = tl ? 1 : 0,
                       .pSignalSemaphores = tl ? &tl : NULL};
    vkc_queue_lock(r->ctx);
    VkResult res = r->vkQueueSubmit(r->h.queue, 1, &si, VK_NULL_HANDLE);
    vkc_queue_unlock(r->ctx);
    return raw_ok(r, res, "vkQueueSubmit");
}

/* n submissions that wait (wait before signal) for the gate to reach
 * first, first + 1, ...: the value v runs cbs[(v - 1) % ring]. The host
 * opens them with vkSignalSemaphore. One vkQueueSubmit call. */
static bool sp_submit_gated_n(raw *r, const VkCommandBuffer *cbs, uint32_t ring, VkSemaphore gate,
                              uint64_t first, uint32_t n)
{
    VkTimelineSemaphoreSubmitInfo ts[SP_DEEP_BATCH];
    VkSubmitInfo si[SP_DEEP_BATCH];
    uint64_t values[SP_DEEP_BATCH];
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (n > SP_DEEP_BATCH)
        return false;
    for (uint32_t i = 0; i < n; ++i) {
        values[i] = first + i;
        ts[i] = (VkTimelineSemaphoreSubmitInfo){
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            .waitSemaphoreValueCount = 1,
            .pWaitSemaphoreValues = &values[i]};
        si[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .pNext = &ts[i],
                               .waitSemaphoreCount = 1,
                               .pWaitSemaphores = &gate,
                               .pWaitDstStageMask = &stage,
                               .commandBufferCount = 1,
                               .pCommandBuffers = &cbs[(values[i] - 1) % ring]};
    }
    vkc_queue_lock(r->ctx);
    VkResult res = r->vkQueueSubmit(r->h.queue, n, si, VK_NULL_HANDLE);
    vkc_queue_unlock(r->ctx);
    return raw_ok(r, res, "vkQueueSubmit");
}

static bool sp_submit_gated(raw *r, VkCommandBuffer cb, VkSemaphore gate, uint64_t value)
{
    return sp_submit_gated_n(r, &cb, 1, gate, value, 1);
}

static void *sp_armer_main(void *p)
{
    sp_armer *a = p;
    while (!atomic_load_explicit(&a->stop, memory_order_acquire)) {
        uint64_t v = atomic_load_explicit(&a->value, memory_order_acquire);
        if (!v)
            continue;
        if (!sp_submit_gated(a->r, a->cb, a->gate, v))
            atomic_store(&a->failed, true);
        atomic_store_explicit(&a->value, 0, memory_order_release);
    }
    return NULL;
}

/* The probe the round-trip twins share: inc_seq over x, the host word seq
 * (word 0 the count, 1..15 the fill variant's flags), the device counter
 * dev, all zero, and a: the three bindings, prepared. */
static bool sp_probe_init(raw *r, raw_pipe *p, raw_buf *x, raw_buf *seq, raw_buf *dev, raw_args *a)
{
    static const uint32_t zeros[TINY_N] = {0};
    if (!raw_pipe_create(r, BENCH_SPV(inc_seq), 3, 12, TINY_WG, 0, p) ||
        !raw_buf_create(r, TINY_N * 4, false, x) || !raw_buf_create(r, 64, true, seq) ||
        !raw_buf_create(r, 64, false, dev) || !raw_upload(r, x, 0, zeros, sizeof(zeros)) ||
        !raw_upload(r, dev, 0, zeros, 64))
        return false;
    for (uint32_t k = 0; k < 16; ++k)
        ((volatile uint32_t *)seq->map)[k] = 0;
    *a = (raw_args){.b = {{x->buf, 0, VK_WHOLE_SIZE},
                          {seq->buf, 0, VK_WHOLE_SIZE},
                          {dev->buf, 0, VK_WHOLE_SIZE}},
                    .n = 3};
    return raw_prepare(r, p, a);
}

static void sp_probe_finish(raw *r, raw_pipe *p, raw_buf *x, raw_buf *seq, raw_buf *dev)
{
    raw_buf_destroy(r, dev);
    raw_buf_destroy(r, seq);
    raw_buf_destroy(r, x);
    raw_pipe_destroy(r, p);
}

/* Round trip of one pre-recorded tiny dispatch, completion seen by the host
 * in a word the GPU writes (or on the timeline), never through a fence. */
static void raw_seqpoll(bench *b, raw *r, const char *variant, uint32_t flags)
{
    PFN_vkSignalSemaphore signal = NULL;
    if (r->vkGetSemaphoreCounterValue)
        signal = (PFN_vkSignalSemaphore)r->h.get_device_proc_addr(r->dev, "vkSignalSemaphore");
    if ((flags & (SP_TIMELINE | SP_WAIT_TIMELINE | SP_GATE)) && !signal) {
        bench_skip(b, variant, "no timeline semaphores");
        return;
    }
    /* Without a dependency between submissions the layers cannot see that
     * the host's poll ordered them. */
    if (b->feat.validation && (!(flags & SP_LEAD) || (flags & (SP_NOSIMUL | SP_GATE)))) {
        bench_skip(b, variant,
                   flags & SP_GATE ? "needs validation off (the probe's own gate is not tracked)"
                                   : "needs validation off (nothing the layers see orders "
                                     "submissions)");
        return;
    }
    if ((flags & SP_GATE_THREAD) && vkc_context_device(r->ctx)->type == VKC_DEVICE_TYPE_CPU) {
        bench_skip(b, variant, "a spinning helper starves a CPU device's own threads");
        return;
    }
    char err[512] = "";
    bench_rec rec = bench_rec_init(b, variant, SP_BASE);
    raw_pipe p = {0};
    raw_buf x = {0}, seq = {0}, dev = {0}, pred = {0};
    raw_args a = {0};
    VkCommandBuffer cbs[SP_RING] = {0};
    VkSemaphore tl = VK_NULL_HANDLE, gate = VK_NULL_HANDLE;
    uint64_t armed_to = 0; /* the gate's highest value with a copy armed behind it */
    double *sub = NULL;
    sp_armer armer = {0};
    pthread_t armer_th;
    bool armer_on = false;
    bench_times tm = {0};
    const uint32_t ring = flags & SP_RING1 ? 1 : SP_RING;
    const bool counted = flags & (SP_OWN | SP_MARKER);
    const uint32_t how = flags & SP_STORE ? 2u : 1u; /* the shader's count mode */
    /* Which submits signal the timeline: all of them, or every 8th / 64th
     * (vkc's sparse signals where its marker is trusted). */
    const uint32_t every = flags & SP_EVERY8 ? 8u : flags & SP_EVERY64 ? 64u : 1u;
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 5000)));
    RTRY(sp_probe_init(r, &p, &x, &seq, &dev, &a));
    /* word[0]: the count; word[1 + k]: the fill variant's flag for slot k */
    volatile uint32_t *word = seq.map;
    /* vkc's armed copies: the dispatch under a predicate word the host
     * writes (1: run), then, with SP_COND_INV, the marker's place under the
     * inverted predicate (here an empty dispatch). */
    PFN_vkCmdBeginConditionalRenderingEXT cond_begin = NULL;
    PFN_vkCmdEndConditionalRenderingEXT cond_end = NULL;
    if (flags & SP_COND) {
        cond_begin = (PFN_vkCmdBeginConditionalRenderingEXT)r->h.get_device_proc_addr(
            r->dev, "vkCmdBeginConditionalRenderingEXT");
        cond_end = (PFN_vkCmdEndConditionalRenderingEXT)r->h.get_device_proc_addr(
            r->dev, "vkCmdEndConditionalRenderingEXT");
        if (!cond_begin || !cond_end) {
            snprintf(err, sizeof(err), "no VK_EXT_conditional_rendering");
            goto fail;
        }
        const VkMemoryPropertyFlags hv =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const VkMemoryPropertyFlags host_want[] = {hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, hv};
        const VkMemoryPropertyFlags dl_want[] = {hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT};
        RTRY(raw_buf_create_usage(r, 64, flags & SP_COND_DL ? dl_want : host_want,
                                  flags & SP_COND_DL ? 1 : 2, true,
                                  VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT, &pred));
        *(volatile uint32_t *)pred.map = 1;
        bench_note(&rec, "predicate in memory type %u", pred.mem_type);
    }
    VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
    if (flags & (SP_TIMELINE | SP_WAIT_TIMELINE))
        RTRY(raw_ok(r, r->vkCreateSemaphore(r->dev, &sci, NULL, &tl), "vkCreateSemaphore"));
    if (flags & SP_GATE)
        RTRY(raw_ok(r, r->vkCreateSemaphore(r->dev, &sci, NULL, &gate), "vkCreateSemaphore"));
    const uint32_t work[3] = {TINY_N, 1, flags & SP_OWN ? how : 0u};
    const uint32_t mark[3] = {0, 0, how};
    const VkPipelineStageFlags cs = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    for (uint32_t k = 0; k < ring; ++k) {
        RTRY(raw_new_cb(r, &cbs[k]));
        VkCommandBufferBeginInfo bi = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            .flags = flags & SP_NOSIMUL ? 0 : VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(cbs[k], &bi), "vkBeginCommandBuffer"));
        if (flags & SP_LEAD)
            sp_barrier(r, cbs[k], cs | (flags & SP_WORKLEAD ? VK_PIPELINE_STAGE_TRANSFER_BIT : 0),
                       VK_ACCESS_SHADER_WRITE_BIT |
                           (flags & SP_WORKLEAD ? VK_ACCESS_TRANSFER_WRITE_BIT : 0),
                       cs, rw);
        VkConditionalRenderingBeginInfoEXT cri = {
            .sType = VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT, .buffer = pred.buf};
        if ((flags & SP_COND) && (flags & SP_COND_INV) && (flags & SP_INV_FIRST)) {
            const uint32_t none[3] = {0, 0, 0};
            cri.flags = VK_CONDITIONAL_RENDERING_INVERTED_BIT_EXT;
            cond_begin(cbs[k], &cri);
            raw_cmd_dispatch(r, cbs[k], &p, &a, none, 1, 1);
            cond_end(cbs[k]);
            cri.flags = 0;
        }
        if (flags & SP_COND)
            cond_begin(cbs[k], &cri);
        raw_cmd_dispatch(r, cbs[k], &p, &a, work, 1, 1);
        if (flags & SP_COND)
            cond_end(cbs[k]);
        if ((flags & SP_COND) && (flags & SP_COND_INV) && !(flags & SP_INV_FIRST)) {
            const uint32_t none[3] = {0, 0, 0};
            cri.flags = VK_CONDITIONAL_RENDERING_INVERTED_BIT_EXT;
            cond_begin(cbs[k], &cri);
            raw_cmd_dispatch(r, cbs[k], &p, &a, none, 1, 1);
            cond_end(cbs[k]);
        }
        if (flags & SP_MARKER) {
            sp_barrier(r, cbs[k], cs, VK_ACCESS_SHADER_WRITE_BIT, cs | VK_PIPELINE_STAGE_HOST_BIT,
                       rw | VK_ACCESS_HOST_READ_BIT);
            raw_cmd_dispatch(r, cbs[k], &p, &a, mark, 1, 1);
        }
        if (flags & SP_FILL) {
            const VkPipelineStageFlags tr = VK_PIPELINE_STAGE_TRANSFER_BIT;
            sp_barrier(r, cbs[k], cs, VK_ACCESS_SHADER_WRITE_BIT, tr | VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
            r->vkCmdFillBuffer(cbs[k], seq.buf, 4 * (1 + k), 4, 1);
            sp_barrier(r, cbs[k], tr, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        }
        if (flags & (SP_MARKER | SP_HOSTB))
            sp_barrier(r, cbs[k], cs, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        RTRY(raw_ok(r, r->vkEndCommandBuffer(cbs[k]), "vkEndCommandBuffer"));
    }
    /* Gated: the ring waits behind the gate's next values; opening one
     * (a host signal) is the round trip's submit, and the command buffer
     * that ran is armed again behind the gate, after the window or in it. */
    if (gate) {
        armed_to = flags & SP_DEEP ? SP_DEEP_N : flags & SP_AHEAD1 ? 1 : ring;
        for (uint64_t v = 1; v <= armed_to; v += SP_DEEP_BATCH)
            RTRY(sp_submit_gated_n(r, cbs, ring, gate, v,
                                   armed_to - v + 1 < SP_DEEP_BATCH ? (uint32_t)(armed_to - v + 1)
                                                                    : SP_DEEP_BATCH));
    }
    uint32_t batches = 0; /* SP_DEEP: the timed round trips that re-armed, and their sum */
    double batch_ns = 0;
    const uint32_t total = tm.warm + tm.iters;
    armer.r = r;
    armer.gate = gate;
    if (flags & SP_GATE_THREAD) {
        armer_on = pthread_create(&armer_th, NULL, sp_armer_main, &armer) == 0;
        if (!armer_on) {
            snprintf(err, sizeof(err), "pthread_create failed");
            goto fail;
        }
    }
    sub = calloc(tm.iters ? tm.iters : 1, sizeof(double)); /* the open (and arm) call */
    MTRY(sub);
    for (uint32_t i = 0; i < total; ++i) {
        const uint64_t value = (uint64_t)i + 1;
        bool rearmed = false; /* SP_DEEP: this round trip armed a batch */
        volatile uint32_t *flag = &word[1 + i % ring];
        if (flags & SP_FILL)
            *flag = 0; /* before the submit, which makes it visible to the device */
        uint64_t t0 = bench_now_ns();
        if (gate) {
            VkSemaphoreSignalInfo open = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                          .semaphore = gate,
                                          .value = value};
            /* The helper armed the copy behind this value by now. */
            while (armer_on && atomic_load_explicit(&armer.value, memory_order_acquire))
                ;
            RTRY(raw_ok(r, signal(r->dev, &open), "vkSignalSemaphore"));
            if (armer_on) {
                armer.cb = cbs[i % ring];
                atomic_store_explicit(&armer.value, value + ring, memory_order_release);
            } else if (flags & SP_DEEP) {
                if (armed_to - value <= SP_DEEP_BATCH) {
                    RTRY(sp_submit_gated_n(r, cbs, ring, gate, armed_to + 1, SP_DEEP_BATCH));
                    armed_to += SP_DEEP_BATCH;
                    rearmed = true;
                }
            } else if (flags & SP_AHEAD1) {
                RTRY(sp_submit_gated(r, cbs[value % ring], gate, value + 1));
                armed_to = value + 1;
            } else if (flags & SP_GATE_ARM) {
                RTRY(sp_submit_gated(r, cbs[i % ring], gate, value + ring));
                armed_to = value + ring;
            }
            if (i >= tm.warm)
                sub[i - tm.warm] = (double)(bench_now_ns() - t0);
        } else {
            const bool sig = (flags & SP_TIMELINE) && value % every == 0;
            RTRY(sp_submit(r, cbs[i % ring], sig ? tl : VK_NULL_HANDLE, value));
        }
        if (flags & SP_FILL) {
            while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 1)
                ;
        } else if (flags & SP_WAIT_TIMELINE) {
            uint64_t v = 0;
            while (v < value)
                RTRY(raw_ok(r, r->vkGetSemaphoreCounterValue(r->dev, tl, &v),
                            "vkGetSemaphoreCounterValue"));
        } else {
            while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != (uint32_t)value)
                ;
        }
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
        if (rearmed && i >= tm.warm) {
            batch_ns += (double)(bench_now_ns() - t0);
            batches++;
        }
        if (gate && !(flags & (SP_GATE_ARM | SP_GATE_THREAD | SP_DEEP))) {
            RTRY(sp_submit_gated(r, cbs[i % ring], gate, value + ring));
            armed_to = value + ring;
        }
    }
    if (armer_on) {
        while (atomic_load_explicit(&armer.value, memory_order_acquire))
            ;
        atomic_store(&armer.stop, true);
        pthread_join(armer_th, NULL);
        armer_on = false;
        if (atomic_load(&armer.failed)) {
            snprintf(err, sizeof(err), "the helper's vkQueueSubmit failed");
            goto fail;
        }
    }
    /* The armed ring runs once more when the gate opens past it. */
    if (flags & SP_GATE_THREAD)
        armed_to = total + ring;
    const uint32_t want = gate ? (uint32_t)armed_to : total;
    if (gate) {
        VkSemaphoreSignalInfo open = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = gate, .value = want};
        RTRY(raw_ok(r, signal(r->dev, &open), "vkSignalSemaphore"));
    }
    vkc_queue_lock(r->ctx);
    VkResult idle = r->vkQueueWaitIdle(r->h.queue);
    vkc_queue_unlock(r->ctx);
    RTRY(raw_ok(r, idle, "vkQueueWaitIdle"));
    RTRY(raw_tiny_check(r, &(raw_tiny){.x = x}, want, &rec));
    if (counted && *word != want) {
        rec.ok = false;
        bench_note(&rec, "count %u, want %u", *word, want);
    }
    if (gate)
        bench_note(&rec, "open%s call p50 %.2f us", flags & SP_GATE_ARM ? " + arm" : "",
                   bench_median(sub, tm.iters) / 1e3);
    if (flags & SP_DEEP)
        bench_note(&rec, "%u timed round trips armed %u copies each: %.1f us on average", batches,
                   SP_DEEP_BATCH, batches ? batch_ns / 1e3 / batches : 0.0);
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
fail:
    if (armer_on) {
        while (atomic_load_explicit(&armer.value, memory_order_acquire))
            ;
        atomic_store(&armer.stop, true);
        pthread_join(armer_th, NULL);
    }
    free(sub);
    if (err[0]) {   /* cbs may still run: nothing is freed under them */
        if (gate) { /* whatever waits behind the gate must not hang the idle wait */
            VkSemaphoreSignalInfo open = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                          .semaphore = gate,
                                          .value = armed_to + 1};
            signal(r->dev, &open);
        }
        vkc_queue_lock(r->ctx);
        r->vkQueueWaitIdle(r->h.queue);
        vkc_queue_unlock(r->ctx);
    }
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    for (uint32_t k = 0; k < SP_RING; ++k)
        if (cbs[k])
            r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cbs[k]);
    if (tl)
        r->vkDestroySemaphore(r->dev, tl, NULL);
    if (gate)
        r->vkDestroySemaphore(r->dev, gate, NULL);
    raw_buf_destroy(r, &pred);
    sp_probe_finish(r, &p, &x, &seq, &dev);
}

/* Copies armed behind host-set events instead of the gate: two command
 * buffers of EV_HALF copies each, every copy waiting (vkCmdWaitEvents, from
 * the host stage) on its own event, all pending at once; a round trip is
 * one vkSetEvent (no semaphore, no kernel call where the driver keeps
 * events in memory) and a spin on the count, and a half that ran is reset
 * and submitted again behind the other (one vkQueueSubmit per EV_HALF round
 * trips). Not promised fast by Vulkan: measured here beside the gate.
 *
 * The spin forms put a gate dispatch (spin_gate.comp) and a barrier first:
 * one invocation spins on the host's open count, a word in device-local
 * host-visible memory, so that the device sees the open without the front
 * end's wait. EV_SPIN keeps the event after it (the spin is bounded, the
 * event holds the copy after the bound: a host that never opens costs no
 * spinning); EV_SPIN_ONLY has no event and no bound (the floor). */
#define EV_HALF 128u
#define EV_BOUND 60000u /* polls (lavapipe ends a loop after 65535 iterations) */
typedef enum { EV_ONLY, EV_SPIN, EV_SPIN_ONLY } ev_mode;

/* The host's open count: stored, and out of the write-combining buffer. */
static inline void ev_open(volatile uint32_t *opens, uint32_t value)
{
    __atomic_store_n(opens, value, __ATOMIC_RELEASE);
    atomic_thread_fence(memory_order_seq_cst);
}
static void raw_eventpoll(bench *b, raw *r, const char *variant, ev_mode mode)
{
    const bool spin = mode != EV_ONLY, events = mode != EV_SPIN_ONLY;
    if (mode == EV_SPIN_ONLY && vkc_context_device(r->ctx)->type == VKC_DEVICE_TYPE_CPU) {
        bench_skip(b, variant, "an unbounded spin starves a CPU device's own threads");
        return;
    }
    if (b->feat.validation) {
        bench_skip(b, variant, "needs validation off (the host's resets are ordered by the poll)");
        return;
    }
    char err[512] = "";
    bench_rec rec = bench_rec_init(b, variant, SP_BASE);
    raw_pipe p = {0}, gp = {0};
    raw_buf x = {0}, seq = {0}, dev = {0}, bell = {0}, passed = {0};
    raw_args a = {0}, ga = {0};
    VkCommandBuffer cbs[2] = {0};
    VkEvent ev[2 * EV_HALF] = {0};
    volatile uint32_t *opens = NULL;
    bench_times tm = {0};
    double *sub = NULL;
    uint32_t halves = 0, submitted = 0;
    PFN_vkCreateEvent create_ev =
        (PFN_vkCreateEvent)r->h.get_device_proc_addr(r->dev, "vkCreateEvent");
    PFN_vkDestroyEvent destroy_ev =
        (PFN_vkDestroyEvent)r->h.get_device_proc_addr(r->dev, "vkDestroyEvent");
    PFN_vkSetEvent set_ev = (PFN_vkSetEvent)r->h.get_device_proc_addr(r->dev, "vkSetEvent");
    PFN_vkResetEvent reset_ev = (PFN_vkResetEvent)r->h.get_device_proc_addr(r->dev, "vkResetEvent");
    PFN_vkCmdWaitEvents wait_ev =
        (PFN_vkCmdWaitEvents)r->h.get_device_proc_addr(r->dev, "vkCmdWaitEvents");
    if (!create_ev || !destroy_ev || !set_ev || !reset_ev || !wait_ev) {
        snprintf(err, sizeof(err), "no event entry points");
        goto fail;
    }
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 5000)));
    RTRY(sp_probe_init(r, &p, &x, &seq, &dev, &a));
    volatile uint32_t *word = seq.map;
    if (spin) {
        static const uint32_t zeros[16] = {0};
        const VkMemoryPropertyFlags hv =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const VkMemoryPropertyFlags want[] = {hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, hv};
        RTRY(raw_pipe_create(r, BENCH_SPV(spin_gate), 2, 4, 1, 0, &gp) &&
             raw_buf_create_in(r, 64, want, 2, true, &bell) &&
             raw_buf_create(r, 64, false, &passed) && raw_upload(r, &passed, 0, zeros, 64));
        opens = bell.map;
        *opens = 0;
        ga =
            (raw_args){.b = {{bell.buf, 0, VK_WHOLE_SIZE}, {passed.buf, 0, VK_WHOLE_SIZE}}, .n = 2};
        RTRY(raw_prepare(r, &gp, &ga));
    }
    const uint32_t bound = mode == EV_SPIN ? EV_BOUND : 0u;
    VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    for (uint32_t k = 0; k < 2 * EV_HALF; ++k)
        RTRY(raw_ok(r, create_ev(r->dev, &eci, NULL, &ev[k]), "vkCreateEvent"));
    const uint32_t work[3] = {TINY_N, 1, 2u};
    const VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                .srcAccessMask = VK_ACCESS_HOST_WRITE_BIT,
                                .dstAccessMask =
                                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    for (uint32_t h = 0; h < 2; ++h) {
        RTRY(raw_new_cb(r, &cbs[h]));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(cbs[h], &bi), "vkBeginCommandBuffer"));
        for (uint32_t k = 0; k < EV_HALF; ++k) {
            /* The gate's spin, then the host's event, then (as vkc's lead
             * barrier) after the copy before: in the spin forms the one
             * barrier after the gate is both. */
            if (spin) {
                raw_cmd_dispatch(r, cbs[h], &gp, &ga, &bound, 1, 1);
                raw_cmd_barrier(r, cbs[h]);
            }
            if (events)
                wait_ev(cbs[h], 1, &ev[h * EV_HALF + k], VK_PIPELINE_STAGE_HOST_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 1, &hb, 0, NULL, 0, NULL);
            if (!spin)
                raw_cmd_barrier(r, cbs[h]);
            raw_cmd_dispatch(r, cbs[h], &p, &a, work, 1, 1);
        }
        RTRY(raw_ok(r, r->vkEndCommandBuffer(cbs[h]), "vkEndCommandBuffer"));
    }
    for (uint32_t h = 0; h < 2; ++h) {
        RTRY(sp_submit(r, cbs[h], VK_NULL_HANDLE, 0));
        submitted += EV_HALF;
    }
    sub = calloc(tm.iters ? tm.iters : 1, sizeof(double));
    MTRY(sub);
    const uint32_t total = tm.warm + tm.iters;
    for (uint32_t i = 0; i < total; ++i) {
        const uint32_t c = i % (2 * EV_HALF);
        uint64_t t0 = bench_now_ns();
        if (events)
            RTRY(raw_ok(r, set_ev(r->dev, ev[c]), "vkSetEvent"));
        if (spin)
            ev_open(opens, i + 1);
        if (i >= tm.warm)
            sub[i - tm.warm] = (double)(bench_now_ns() - t0);
        while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != i + 1)
            ;
        if (c % EV_HALF == EV_HALF - 1) {
            /* That half ran to its last copy: reset its events, submit it
             * again behind the other half. */
            const uint32_t h = c / EV_HALF;
            for (uint32_t k = 0; events && k < EV_HALF; ++k)
                RTRY(raw_ok(r, reset_ev(r->dev, ev[h * EV_HALF + k]), "vkResetEvent"));
            RTRY(sp_submit(r, cbs[h], VK_NULL_HANDLE, 0));
            submitted += EV_HALF;
            if (i >= tm.warm)
                halves++;
        }
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
    }
    /* The copies still waiting run once their events are set. */
    for (uint32_t i = total; events && i < submitted; ++i)
        RTRY(raw_ok(r, set_ev(r->dev, ev[i % (2 * EV_HALF)]), "vkSetEvent"));
    if (spin)
        ev_open(opens, submitted);
    vkc_queue_lock(r->ctx);
    VkResult idle = r->vkQueueWaitIdle(r->h.queue);
    vkc_queue_unlock(r->ctx);
    RTRY(raw_ok(r, idle, "vkQueueWaitIdle"));
    RTRY(raw_tiny_check(r, &(raw_tiny){.x = x}, submitted, &rec));
    if (*word != submitted) {
        rec.ok = false;
        bench_note(&rec, "count %u, want %u", *word, submitted);
    }
    bench_note(&rec, "%s p50 %.2f us; %u timed round trips reset and resubmitted a half",
               spin ? (events ? "open (vkSetEvent, store)" : "open (store)") : "set call",
               bench_median(sub, tm.iters) / 1e3, halves);
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
fail:
    free(sub);
    if (err[0]) {
        for (uint32_t k = 0; k < 2 * EV_HALF; ++k)
            if (ev[k] && set_ev)
                set_ev(r->dev, ev[k]);
        if (opens)
            ev_open(opens, 0x7fffffffu);
        vkc_queue_lock(r->ctx);
        r->vkQueueWaitIdle(r->h.queue);
        vkc_queue_unlock(r->ctx);
    }
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    for (uint32_t h = 0; h < 2; ++h)
        if (cbs[h])
            r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cbs[h]);
    for (uint32_t k = 0; k < 2 * EV_HALF; ++k)
        if (ev[k])
            destroy_ev(r->dev, ev[k], NULL);
    raw_buf_destroy(r, &passed);
    raw_buf_destroy(r, &bell);
    raw_pipe_destroy(r, &gp);
    sp_probe_finish(r, &p, &x, &seq, &dev);
}

/* ---- vkc -------------------------------------------------------------------- */

static int rt_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Round trips with neither a submit nor a signal (class 0) slower than
 * thr: how many came within RT_AFTER round trips after one that made a
 * vkQueueSubmit (a top-up of armed copies), against how many of class 0
 * did at all: whether the driver's work on a top-up slows the round trips
 * after it. */
#define RT_AFTER 8u
static void rt_tail_note(bench_rec *rec, const double *wall, const uint8_t *cls, uint32_t n,
                         double thr)
{
    uint32_t plain = 0, plain_after = 0, tail = 0, tail_after = 0, since = RT_AFTER;
    for (uint32_t i = 0; i < n; ++i) {
        if (cls[i]) {
            since = cls[i] & 1 ? 0 : since + 1;
            continue;
        }
        const bool after = ++since <= RT_AFTER;
        plain++;
        plain_after += after;
        if (wall[i] > thr) {
            tail++;
            tail_after += after;
        }
    }
    if (tail)
        bench_note(rec,
                   "plain round trips above their p99: %u of %u within %u after a submit "
                   "(of all plain ones: %u of %u)",
                   tail_after, tail, RT_AFTER, plain_after, plain);
}

/* The round trips by class (bit 0: it made a vkQueueSubmit; bit 1: a
 * timeline signal), each class's count and p50, and the p99 of those with
 * neither: what of the tail each explains (rt_tail_note: where it is).
 * Leaves wall's order alone. */
static void rt_class_note(bench_rec *rec, const double *wall, const uint8_t *cls, uint32_t n)
{
    double *v = malloc((n ? n : 1) * sizeof(double));
    if (!v)
        return;
    char buf[256] = "";
    size_t len = 0;
    static const char *names[4] = {"plain", "submit", "signal", "submit+signal"};
    double plain_p99 = -1;
    for (uint8_t c = 0; c < 4; ++c) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; ++i)
            if (cls[i] == c)
                v[m++] = wall[i];
        if (!m)
            continue;
        qsort(v, m, sizeof(double), rt_cmp);
        uint32_t k99 = (uint32_t)((m * 99ull + 99) / 100);
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s %u p50 %.1f", len ? ", " : "",
                                names[c], m, v[(m - 1) / 2] / 1e3);
        if (c == 0)
            plain_p99 = v[(k99 ? k99 : 1) - 1];
        if (c == 0 && len < sizeof(buf))
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, " p99 %.1f", plain_p99 / 1e3);
        if (len >= sizeof(buf))
            break;
    }
    bench_note(rec, "round trips: %s us", buf);
    if (plain_p99 >= 0)
        rt_tail_note(rec, wall, cls, n, plain_p99);
    free(v);
}

/* Round trip through vkc: a fresh sequence per dispatch (fresh) or one
 * sequence recorded once and resubmitted. */
void bench_vkc_roundtrip(bench *b, vkc_context *vctx, const char *variant, bool fresh, bool glsl,
                         bool mapped, const char *baseline)
{
    char err[512] = "";
    bench_tiny t = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 5000)));
    VTRY(bench_tiny_init_from(vctx, &t, 0, glsl));
    if (mapped && !vkc_buffer_map(t.x))
        bench_note(&rec, "x is not host-visible: no mapping to hand out");
    vkc_stats s0 = {0}, s1 = {0};
    VTRY(vkc_context_stats(vctx, &s0));
    if (fresh) {
        /* the whole life of a sequence is inside the timed round trip */
        for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
            uint64_t t0 = bench_now_ns();
            VTRY(bench_seq_once(vctx, &t.d, 1));
            bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
        }
    } else {
        /* The submit call's own time as well: how much of the round trip the
         * host spends before it can poll. */
        vkc_seq *s = NULL, *other = NULL;
        double *sub = calloc(tm.iters ? tm.iters : 1, sizeof(double));
        vkc_result res =
            sub ? bench_seq_record(vctx, &t.d, 1, 1, &s) : VKC_ERROR_OUT_OF_HOST_MEMORY;
        /* Another sequence on the same buffer: its round trip after the loop
         * cancels the copies armed ahead (what a deep queue costs the next
         * other work). */
        if (res >= 0)
            res = bench_seq_record(vctx, &t.d, 1, 1, &other);
        /* Which round trips made a vkQueueSubmit (armed copies ahead) and
         * which opened a copy that signals the timeline: the tail's causes. */
        uint8_t *cls = calloc(tm.iters ? tm.iters : 1, 1);
        vkc_stats p0 = {0}, p1 = {0};
        if (!cls)
            res = VKC_ERROR_OUT_OF_HOST_MEMORY;
        for (uint32_t i = 0; res >= 0 && i < tm.warm + tm.iters; ++i) {
            vkc_ticket tk;
            (void)vkc_context_stats(vctx, &p0);
            uint64_t t0 = bench_now_ns();
            res = vkc_seq_submit(s, &tk);
            uint64_t t1 = bench_now_ns();
            if (res >= 0)
                res = vkc_wait(vctx, tk, UINT64_MAX);
            bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
            (void)vkc_context_stats(vctx, &p1);
            if (i >= tm.warm) {
                sub[i - tm.warm] = (double)(t1 - t0);
                cls[i - tm.warm] = (uint8_t)((p1.submits != p0.submits ? 1 : 0) |
                                             (p1.timeline_signals != p0.timeline_signals ? 2 : 0));
            }
        }
        if (res >= 0)
            rt_class_note(&rec, tm.wall, cls, tm.iters);
        free(cls);
        double other_us = 0;
        if (res >= 0) {
            vkc_ticket tk;
            uint64_t t0 = bench_now_ns();
            res = vkc_seq_submit(other, &tk);
            if (res >= 0)
                res = vkc_wait(vctx, tk, UINT64_MAX);
            other_us = (double)(bench_now_ns() - t0) / 1e3;
        }
        vkc_seq_destroy(other);
        vkc_seq_destroy(s);
        if (res >= 0)
            bench_note(&rec,
                       "submit call p50 %.2f us; another sequence's round trip after: %.1f us",
                       bench_median(sub, tm.iters) / 1e3, other_us);
        free(sub);
        VTRY(res);
    }
    VTRY(vkc_context_stats(vctx, &s1));
    VTRY(bench_tiny_check(&t, tm.warm + tm.iters + (fresh ? 0 : 1), &rec));
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
    vkc_context_features f;
    if (vkc_context_features_get(vctx, &f) == VKC_SUCCESS) {
        bench_note(&rec, "wait: %s (%s)",
                   f.wait_mode == VKC_WAIT_SPIN_MARKER ? "marker" : "timeline",
                   f.wait_reason ? f.wait_reason : "-");
        /* Of the round trips, how many opened an armed copy. */
        if (f.armed_submits)
            bench_note(&rec, "armed: %llu of %u submits opened, %llu cancelled",
                       (unsigned long long)(s1.armed_opens - s0.armed_opens), tm.warm + tm.iters,
                       (unsigned long long)(s1.armed_cancels - s0.armed_cancels));
        else
            bench_note(&rec, "not armed (%s)", f.armed_reason ? f.armed_reason : "-");
        /* Of the recorded copies, how many end with the epilogue. */
        bench_note(&rec, "kernel from %s; epilogue: %s (%s), %llu copies recorded with it",
                   glsl ? "GLSL" : "SPIR-V", f.completion_epilogue ? "on" : "off",
                   f.epilogue_reason ? f.epilogue_reason : "-",
                   (unsigned long long)(s1.epilogue_records - s0.epilogue_records));
    }
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    bench_tiny_finish(&t);
}

void scen_naive(bench *b, raw *r)
{
    if (r)
        raw_roundtrip(b, r, "raw-naive", RT_NAIVE);
    bench_vkc_roundtrip(b, b->ctx, "vkc-fresh-seq", true, false, false, NAIVE_BASE);
}

/* One raw fence-spin round trip of t's recorded dispatch, sample i of tm. */
static bool spin_turn_raw(raw *r, raw_tiny *t, bench_times *tm, uint32_t i)
{
    const uint64_t t0 = bench_now_ns();
    if (!raw_submit_wait(r, t->cb, t->fence, true))
        return false;
    bench_times_put(tm, i, (double)(bench_now_ns() - t0));
    return true;
}

/* One round trip of s on vctx (its wait spins on the timeline), sample i. */
static vkc_result spin_turn_vkc(vkc_context *vctx, vkc_seq *s, bench_times *tm, uint32_t i)
{
    vkc_ticket tk;
    const uint64_t t0 = bench_now_ns();
    vkc_result res = vkc_seq_submit(s, &tk);
    if (res >= 0)
        res = vkc_wait(vctx, tk, UINT64_MAX);
    bench_times_put(tm, i, (double)(bench_now_ns() - t0));
    return res;
}

/* raw-spin and vkc-spin once more, taking turns in chunks, as the chain and
 * batch rows do: NVIDIA's driver changes mode between rows. In the H200's
 * job Z20 raw-spin took 20.0 us and vkc-spin, its rows later, 41.0 (its
 * submit call blocked 30 us, the slow mode); in the second pass 12.9 and
 * 12.3. combine.py's target compares these two rows, which see the same
 * modes. Both run on the spinning context's device and queue: the mode is
 * a device's (H100, job Z36: in turns, raw on the bench's own device took
 * 13.5 us while vkc on its new one took 42.8, every chunk in the slow
 * mode). */
static void spin_turns(bench *b)
{
    char err[512] = "";
    const uint32_t warm = bench_n(b, 20, 200), iters = bench_n(b, 200, 5000);
    raw_tiny t = {0};
    bench_tiny v = {0};
    bench_times tr = {0}, tv = {0};
    vkc_seq *s = NULL;
    bench_rec rr = bench_rec_init(b, "raw-spin-turns", NAIVE_BASE);
    bench_rec rv = bench_rec_init(b, "vkc-spin-turns", "reuse/raw-spin-turns");
    vkc_context *vctx = bench_context_or_fail(b, &(vkc_context_desc){.wait_mode = VKC_WAIT_SPIN},
                                              "raw-spin-turns", "vkc-spin-turns", NULL);
    if (!vctx)
        return;
    raw same, *r = &same;
    RTRY(raw_init(r, vctx));
    MTRY(bench_times_init(&tr, warm, iters) && bench_times_init(&tv, warm, iters));
    RTRY(raw_tiny_init(r, &t, 0));
    RTRY(raw_tiny_record(r, &t));
    VTRY(bench_tiny_init_from(vctx, &v, 0, false));
    VTRY(bench_seq_record(vctx, &v.d, 1, 1, &s));
    for (uint32_t i = 0; i < warm; ++i) {
        RTRY(spin_turn_raw(r, &t, &tr, i));
        VTRY(spin_turn_vkc(vctx, s, &tv, i));
    }
    /* Eight chunks, the first of each pair alternating. */
    uint32_t i = warm;
    for (uint32_t c = 0; c < 8; ++c) {
        const uint32_t m = iters * (c + 1) / 8 - iters * c / 8;
        for (uint32_t side = 0; side < 2; ++side) {
            if ((side ^ (c & 1)) == 0) {
                for (uint32_t k = 0; k < m; ++k)
                    RTRY(spin_turn_raw(r, &t, &tr, i + k));
            } else {
                for (uint32_t k = 0; k < m; ++k)
                    VTRY(spin_turn_vkc(vctx, s, &tv, i + k));
            }
        }
        i += m;
    }
    RTRY(raw_tiny_check(r, &t, warm + iters, &rr));
    VTRY(bench_tiny_check(&v, warm + iters, &rv));
    bench_rec_stats(&rr, tr.wall, iters, true);
    bench_rec_stats(&rv, tv.wall, iters, true);
    bench_note(&rr, "in turns with vkc-spin-turns, 8 chunks each");
    bench_note(&rv, "in turns with raw-spin-turns, 8 chunks each");
fail:
    bench_emit(b, &rr, err);
    bench_emit(b, &rv, err);
    bench_times_free(&tr);
    bench_times_free(&tv);
    vkc_seq_destroy(s);
    bench_tiny_finish(&v);
    raw_tiny_finish(r, &t);
    raw_finish(r);
    vkc_context_destroy(vctx);
}

void scen_reuse(bench *b, raw *r)
{
    if (r) {
        raw_roundtrip(b, r, "raw-block", RT_BLOCK);
        raw_roundtrip(b, r, "raw-spin", RT_SPIN);
        static const struct {
            uint32_t flags;
            const char *name;
        } sp[] = {
            {SP_OWN, "raw-seqpoll"},
            {SP_OWN | SP_STORE, "raw-seqpoll-store"},
            {SP_OWN | SP_RING1, "raw-seqpoll-ring1"},
            {SP_OWN | SP_NOSIMUL, "raw-seqpoll-nosimul"},
            {SP_OWN | SP_LEAD, "raw-seqpoll+lead"},
            {SP_OWN | SP_HOSTB, "raw-seqpoll+hostbarrier"},
            {SP_OWN | SP_TIMELINE, "raw-seqpoll+timeline"},
            {SP_OWN | SP_TIMELINE | SP_EVERY8, "raw-seqpoll+timeline-every-8"},
            {SP_OWN | SP_TIMELINE | SP_EVERY64, "raw-seqpoll+timeline-every-64"},
            {SP_MARKER, "raw-marker"},
            {SP_MARKER | SP_STORE, "raw-marker-store"},
            {SP_FILL, "raw-fill"},
            {SP_FILL | SP_LEAD | SP_TIMELINE, "raw-fill+lead+timeline"},
            {SP_MARKER | SP_LEAD | SP_TIMELINE, "raw-marker+lead+timeline"},
            {SP_MARKER | SP_STORE | SP_LEAD | SP_TIMELINE, "raw-marker-store+lead+timeline"},
            {SP_LEAD | SP_TIMELINE | SP_WAIT_TIMELINE, "raw-timeline-spin+lead"},
            {SP_OWN | SP_GATE, "raw-seqpoll-gated"},
            {SP_OWN | SP_GATE | SP_GATE_ARM, "raw-seqpoll-gated-arm"},
            /* vkc's armed copy factor by factor: its lead barrier, its marker */
            {SP_OWN | SP_GATE | SP_GATE_ARM | SP_LEAD, "raw-seqpoll-gated-arm+lead"},
            /* the arming submit on a spinning helper thread, off the round trip */
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_THREAD | SP_LEAD,
             "raw-seqpoll-store-gated-thread+lead"},
            /* the completion epilogue's twin: the count stored from device
             * memory, with and without vkc's host barrier after it */
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD,
             "raw-seqpoll-store-gated-arm+lead"},
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_WORKLEAD,
             "raw-seqpoll-store-gated-arm+worklead"},
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_HOSTB,
             "raw-seqpoll-store-gated-arm+lead+hostbarrier"},
            /* and vkc's predicates: the dispatch's, the inverted marker's after it */
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_COND,
             "raw-seqpoll-store-gated-arm+lead+cond"},
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_COND | SP_COND_INV,
             "raw-seqpoll-store-gated-arm+lead+cond+inv"},
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_COND | SP_COND_INV |
                 SP_COND_DL,
             "raw-seqpoll-store-gated-arm+lead+cond+inv(dl)"},
            /* how deep the copies are armed: one ahead (as vkc arms), and
             * SP_DEEP_N ahead re-armed SP_DEEP_BATCH at a time */
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_AHEAD1,
             "raw-seqpoll-store-gated-ahead1+lead"},
            {SP_OWN | SP_STORE | SP_GATE | SP_GATE_ARM | SP_LEAD | SP_AHEAD1 | SP_COND |
                 SP_COND_INV,
             "raw-seqpoll-store-gated-ahead1+lead+cond+inv"},
            {SP_OWN | SP_STORE | SP_GATE | SP_LEAD | SP_DEEP, "raw-seqpoll-store-gated-deep+lead"},
            {SP_OWN | SP_STORE | SP_GATE | SP_LEAD | SP_DEEP | SP_COND | SP_COND_INV,
             "raw-seqpoll-store-gated-deep+lead+cond+inv"},
            {SP_OWN | SP_STORE | SP_GATE | SP_LEAD | SP_DEEP | SP_COND | SP_COND_INV | SP_INV_FIRST,
             "raw-seqpoll-store-gated-deep+lead+inv+cond"},
            {SP_MARKER | SP_GATE | SP_GATE_ARM, "raw-marker-gated-arm"},
            {SP_MARKER | SP_GATE | SP_GATE_ARM | SP_LEAD, "raw-marker-gated-arm+lead"},
        };
        for (size_t i = 0; i < sizeof(sp) / sizeof(sp[0]); ++i)
            raw_seqpoll(b, r, sp[i].name, sp[i].flags);
        raw_eventpoll(b, r, "raw-seqpoll-store-evented-deep+lead", EV_ONLY);
        raw_eventpoll(b, r, "raw-seqpoll-store-spin+evented-deep", EV_SPIN);
        raw_eventpoll(b, r, "raw-seqpoll-store-spingate-deep", EV_SPIN_ONLY);
    }
    /* env: an experiment knob set for that context only (VKC_MARKER_FORM,
     * VKC_SIGNAL_EVERY: 1 is the timeline signal on every submit of before),
     * or NULL. */
    /* glsl: the kernel built by vkc_kernel_create_glsl, whose submissions
     * end with the completion epilogue appended to its source
     * (vkc-default), beside the same kernel from SPIR-V, whose epilogue vkc
     * splices into the module (vkc-default-spirv; before the seventeenth
     * session it ended with the marker). */
    static const struct {
        vkc_wait_mode mode;
        const char *env, *value;
        const char *name;
        bool glsl, mapped;
    } modes[] = {
        {VKC_WAIT_DEFAULT, NULL, NULL, "vkc-default", true},
        /* x's mapping handed out: the host may read it, so each round trip
         * ends with a host barrier (all vkc-default had before 2026-12-03's
         * fourth session where DEVICE memory is host-visible) */
        {VKC_WAIT_DEFAULT, NULL, NULL, "vkc-default-mapped", true, true},
        {VKC_WAIT_DEFAULT, NULL, NULL, "vkc-default-spirv"},
        {VKC_WAIT_DEFAULT, "VKC_EPILOGUE", "0", "vkc-default-noepilogue", true},
        {VKC_WAIT_DEFAULT, "VKC_EPILOGUE_FORM", "barrier", "vkc-default-epi-barrier", true},
        {VKC_WAIT_DEFAULT, "VKC_EPILOGUE_FORM", "xchg", "vkc-default-epi-xchg", true},
        {VKC_WAIT_DEFAULT, "VKC_EPILOGUE_FORM", "scoped", "vkc-default-epi-scoped", true},
        /* how many copies armed ahead: one (as before 2026-12-03), 64, 512;
         * the default is 256 */
        {VKC_WAIT_DEFAULT, "VKC_ARM_DEPTH", "1", "vkc-default-arm-depth-1", true},
        {VKC_WAIT_DEFAULT, "VKC_ARM_DEPTH", "64", "vkc-default-arm-depth-64", true},
        {VKC_WAIT_DEFAULT, "VKC_ARM_DEPTH", "512", "vkc-default-arm-depth-512", true},
        {VKC_WAIT_DEFAULT, "VKC_ARM", "0", "vkc-default-unarmed", true},
        {VKC_WAIT_DEFAULT, "VKC_ARM", "0", "vkc-default-unarmed-spirv"},
        {VKC_WAIT_DEFAULT, "VKC_SIGNAL_EVERY", "1", "vkc-default-signal-every-1"},
        {VKC_WAIT_DEFAULT, "VKC_SIGNAL_EVERY", "8", "vkc-default-signal-every-8"},
        {VKC_WAIT_DEFAULT, "VKC_SIGNAL_EVERY", "64", "vkc-default-signal-every-64"},
        {VKC_WAIT_SPIN_THEN_BLOCK, NULL, NULL, "vkc-spin-then-block"},
        {VKC_WAIT_BLOCK, NULL, NULL, "vkc-block"},
        {VKC_WAIT_SPIN, NULL, NULL, "vkc-spin"},
        {VKC_WAIT_SPIN_MARKER, NULL, NULL, "vkc-spin-marker"},
        {VKC_WAIT_SPIN_MARKER, "VKC_MARKER_FORM", "lean", "vkc-spin-marker-lean"},
        {VKC_WAIT_SPIN_MARKER, "VKC_MARKER_FORM", "atomic", "vkc-spin-marker-atomic"},
        {VKC_WAIT_SPIN_MARKER, "VKC_MARKER_FORM", "atomic,lean", "vkc-spin-marker-atomic-lean"}};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); ++i) {
        vkc_context_desc desc = {.wait_mode = modes[i].mode};
        if (modes[i].env)
            setenv(modes[i].env, modes[i].value, 1);
        vkc_context *c = bench_context_or_fail(b, &desc, modes[i].name, NULL);
        if (modes[i].env)
            unsetenv(modes[i].env);
        if (!c)
            continue;
        bench_vkc_roundtrip(b, c, modes[i].name, false, modes[i].glsl, modes[i].mapped, NAIVE_BASE);
        vkc_context_destroy(c);
    }
    if (r)
        spin_turns(b);
}

/* ---- batch: immediate mode ---------------------------------------------------- */

/* One row of the batch scenario at one K: raw record + submit (ctx NULL) or
 * vkc's immediate mode on ctx. Its iterations run in chunks, the rows of
 * one K taking turns (see scen_batch). */
typedef struct batch_row {
    const char *name;
    bool on;          /* runs at this K */
    vkc_context *ctx; /* NULL: raw */
    bool lead;        /* raw: a barrier first, as vkc's batches have */
    bool glsl;        /* vkc: the kernel built from GLSL (batches end with the epilogue) */
    uint32_t ways;    /* vkc: 2 = two batches on two buffers take turns */
    uint32_t K;       /* dispatches a batch */
    bench_rec rec;
    bench_times tm;
    raw_tiny rt;
    bench_tiny t[2];
    /* vkc: what its chunks alone made (other rows share the context) */
    uint64_t splits, slow, quiet, submits, signals;
    uint32_t ran;  /* iterations run, warm-ups included */
    uint32_t kept; /* samples kept */
    /* vkc: per timed batch, its K vkc_dispatch calls (the first waits for
     * its slot's batch before), the vkc_flush call (recording, a fresh
     * batch's unit, the submit) and the vkc_wait call: where a row's time
     * goes */
    double *enq_ns, *flush_ns, *wait_ns;
    char err[512]; /* non-empty: the row failed (its chunks stop) */
} batch_row;

static void batch_open(bench *b, raw *r, batch_row *row, uint32_t K, uint32_t iters)
{
    char err[512] = "", variant[64], base[80];
    vkc_context *vctx = row->ctx;
    row->K = K;
    snprintf(base, sizeof(base), "batch/raw-record-submit K=%u", K);
    snprintf(variant, sizeof(variant), "%s K=%u", row->name, K);
    row->rec = bench_rec_init(b, variant, base);
    MTRY(bench_times_init(&row->tm, 0, iters));
    if (!vctx) {
        RTRY(raw_tiny_init(r, &row->rt, 0));
    } else {
        MTRY((row->enq_ns = calloc(iters, sizeof(double))) &&
             (row->flush_ns = calloc(iters, sizeof(double))) &&
             (row->wait_ns = calloc(iters, sizeof(double))));
        for (uint32_t w = 0; w < row->ways; ++w)
            VTRY(bench_tiny_init_from(vctx, &row->t[w], 0, row->glsl));
    }
    return;
fail:
    snprintf(row->err, sizeof(row->err), "%s", err);
}

/* One batch of K tiny dependent dispatches: recorded, submitted, waited. */
static bool batch_raw_once(raw *r, batch_row *row, uint32_t K)
{
    raw_tiny *t = &row->rt;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (!raw_ok(r, r->vkBeginCommandBuffer(t->cb, &bi), "vkBeginCommandBuffer"))
        return false;
    for (uint32_t j = 0; j < K; ++j) {
        if (j || row->lead)
            raw_cmd_barrier(r, t->cb);
        raw_cmd_dispatch(r, t->cb, &t->p, &t->a, t->push, 1, 1);
    }
    return raw_ok(r, r->vkEndCommandBuffer(t->cb), "vkEndCommandBuffer") &&
           raw_submit_wait(r, t->cb, t->fence, true);
}

/* A chunk: one warm-up batch (the row before it ran other work), then n
 * timed ones. vkc's: K immediate dispatches, flush, wait; round i goes to
 * buffer i % ways. */
static void batch_chunk(void *user, void *p, uint32_t n)
{
    raw *r = user;
    batch_row *row = p;
    const uint32_t K = row->K;
    char err[512] = "";
    vkc_context *vctx = row->ctx;
    if (row->err[0])
        return;
    vkc_stats st0, st1;
    if (vctx)
        VTRY(vkc_context_stats(vctx, &st0));
    for (uint32_t i = 0; i <= n && row->kept < row->tm.iters; ++i, ++row->ran) {
        const uint64_t t0 = bench_now_ns();
        uint64_t t1 = t0, t2 = t0;
        if (!vctx) {
            RTRY(batch_raw_once(r, row, K));
        } else {
            const vkc_dispatch_desc *d = &row->t[row->ran % row->ways].d;
            for (uint32_t j = 0; j < K; ++j)
                VTRY(vkc_dispatch(vctx, d));
            vkc_ticket tk;
            t1 = bench_now_ns(); /* these two reads (~40 ns) are in vkc's time */
            VTRY(vkc_flush(vctx, &tk));
            t2 = bench_now_ns();
            VTRY(vkc_wait(vctx, tk, UINT64_MAX));
        }
        const uint64_t t3 = bench_now_ns();
        if (!i)
            continue; /* the chunk's warm-up */
        if (vctx) {
            row->enq_ns[row->kept] = (double)(t1 - t0);
            row->flush_ns[row->kept] = (double)(t2 - t1);
            row->wait_ns[row->kept] = (double)(t3 - t2);
        }
        row->tm.wall[row->kept++] = (double)(t3 - t0);
    }
    if (vctx) {
        VTRY(vkc_context_stats(vctx, &st1));
        row->splits += st1.immediate_splits - st0.immediate_splits;
        row->slow += st1.immediate_slow_submits - st0.immediate_slow_submits;
        row->quiet += st1.immediate_quiet_batches - st0.immediate_quiet_batches;
        row->submits += st1.submits - st0.submits;
        row->signals += st1.timeline_signals - st0.timeline_signals;
    }
    return;
fail:
    snprintf(row->err, sizeof(row->err), "%s", err);
}

/* The row's checks, its record, and its fixture freed. */
static void batch_close(bench *b, raw *r, batch_row *row, uint32_t K)
{
    char err[512] = "";
    vkc_context *vctx = row->ctx;
    bench_rec *rec = &row->rec;
    if (row->err[0]) {
        snprintf(err, sizeof(err), "%s", row->err);
        goto fail;
    }
    bench_rec_sweep(rec, K, "K");
    if (!vctx) {
        RTRY(raw_tiny_check(r, &row->rt, row->ran * K, rec));
    } else {
        /* How many batches went in pieces, how many fresh submits were slow
         * (the driver's slow mode: pieces stop while it lasts), how many
         * submits and timeline signals they made (each signal costs 17-55
         * us in NVIDIA's slow mode: BENCHMARKS.md, 2026-12-06, jobs Z5 and
         * Z13), on every row, so that the whole rows show theirs beside the
         * pieces'; the context's recording units at the end (a pool that
         * grew records into cold units: job Z41); and how the time splits
         * between flush and wait. */
        vkc_stats st = {0};
        (void)vkc_context_stats(vctx, &st);
        bench_note(rec,
                   "%u batches: %llu in pieces, %llu slow fresh submits, %llu quiet, %llu "
                   "submits, %llu signals, %llu units; dispatch calls p50 %.2f us, flush call "
                   "p50 %.2f us, wait call p50 %.2f us",
                   row->ran, (unsigned long long)row->splits, (unsigned long long)row->slow,
                   (unsigned long long)row->quiet, (unsigned long long)row->submits,
                   (unsigned long long)row->signals, (unsigned long long)st.command_buffers,
                   bench_median(row->enq_ns, row->kept) / 1e3,
                   bench_median(row->flush_ns, row->kept) / 1e3,
                   bench_median(row->wait_ns, row->kept) / 1e3);
        for (uint32_t w = 0; w < row->ways && rec->ok; ++w)
            VTRY(bench_tiny_check(&row->t[w],
                                  (row->ran / row->ways + (w < row->ran % row->ways)) * K, rec));
    }
    bench_times_rec(&row->tm, rec, K);
fail:
    bench_emit(b, rec, err);
    bench_times_free(&row->tm);
    free(row->enq_ns);
    free(row->flush_ns);
    free(row->wait_ns);
    if (!vctx)
        raw_tiny_finish(r, &row->rt);
    for (uint32_t w = 0; w < 2; ++w)
        bench_tiny_finish(&row->t[w]);
}

/* The batch rows of one K, taking turns (bench_turns): a burst of other
 * load on the machine (about a second) used to land on a few adjacent
 * rows. */
static void batch_rows(bench *b, raw *r, batch_row *rows, uint32_t n, uint32_t K, uint32_t iters)
{
    for (uint32_t i = 0; i < n; ++i)
        batch_open(b, r, &rows[i], K, iters);
    bench_turns(rows, sizeof(*rows), n, iters, batch_chunk, r);
    for (uint32_t i = 0; i < n; ++i)
        batch_close(b, r, &rows[i], K);
}

void scen_batch(bench *b, raw *r)
{
    /* The old policy beside the default: a flush only every batch_size. */
    vkc_context *fixed = bench_twin_env(b, "VKC_IMM_FIXED", "1", "vkc-immediate-fixed");
    /* Batches for an idle queue of a kernel without the epilogue (from
     * SPIR-V, VKC_EPILOGUE=0; since the seventeenth session vkc splices the
     * epilogue into SPIR-V kernels too, so vkc-immediate-spirv ends with
     * it): every one with the completion marker's dispatch
     * (VKC_IMM_MARKER=1), none, each completing on the timeline its submit
     * signals (=0, the default before the thirteenth session). */
    setenv("VKC_EPILOGUE", "0", 1);
    setenv("VKC_IMM_MARKER", "1", 1);
    vkc_context *marker = bench_twin_row(b, "vkc-immediate-marker");
    setenv("VKC_IMM_MARKER", "0", 1);
    vkc_context *unmarked = bench_twin_row(b, "vkc-immediate-unmarked");
    unsetenv("VKC_IMM_MARKER");
    unsetenv("VKC_EPILOGUE");
    /* Every batch recorded, as before a batch of the commands of a batch
     * before went as that one was recorded: what the repeat saves. */
    setenv("VKC_IMM_REUSE", "0", 1);
    vkc_context *rerecord = bench_twin_row(b, "vkc-immediate-rerecord");
    /* The same, each fresh batch's signal chosen from the driver's mode
     * (VKC_SIGNAL_ADAPT=1, the default on a GPU since the twenty-fourth
     * session): in NVIDIA's slow mode each
     * signal cost 40-45 us (job Z36, H100: 60.8 us against 15.0 without at
     * K=1). Its first forms cut that mode's 73-78 us to 19-20 (job Z37)
     * but lost 5-13% from K=256 in the fast mode (Z38); the third took
     * 63.3 us to 14.8 there and stayed within 0.93-1.07 in the fast mode
     * (Z39). */
    vkc_context *readapt =
        bench_twin_env(b, "VKC_SIGNAL_ADAPT", "1", "vkc-immediate-rerecord-adapt");
    /* And with every fresh submit signalling (VKC_SIGNAL_ADAPT=0: the
     * default before the twenty-fourth session, and still on a CPU
     * device). */
    vkc_context *resignal =
        bench_twin_env(b, "VKC_SIGNAL_ADAPT", "0", "vkc-immediate-rerecord-signal");
    unsetenv("VKC_IMM_REUSE");
    /* Two batches taking turns, an open batch never held for the kept batch
     * it starts (VKC_IMM_HOLD_NS=0, as before): in NVIDIA's slow mode, at
     * K=256, the idle flush cut most bursts at their 128th command (H100,
     * job Z26). */
    vkc_context *hold0 = bench_twin_env(b, "VKC_IMM_HOLD_NS", "0", "vkc-immediate-alternate-hold0");
    /* Batches for an idle queue whole (VKC_IMM_SPLIT=1), as before they went
     * in pieces on a GPU, repeated and recorded every time; and recorded
     * every time in two pieces: what the pieces save or cost beside
     * vkc-immediate and its rerecord. */
    setenv("VKC_IMM_SPLIT", "1", 1);
    vkc_context *whole = bench_twin_row(b, "vkc-immediate-whole");
    setenv("VKC_IMM_REUSE", "0", 1);
    vkc_context *rewhole = bench_twin_row(b, "vkc-immediate-rerecord-whole");
    setenv("VKC_IMM_SPLIT", "2", 1);
    vkc_context *re2 = bench_twin_row(b, "vkc-immediate-rerecord-split2");
    unsetenv("VKC_IMM_SPLIT");
    /* Recorded every time, each batch with the completion epilogue (or
     * marker) and no timeline signal on a recording's first submit
     * (VKC_FIRST_SIGNAL=0: the pool asks for one once 16 units wait): what
     * the signals cost batches recorded every time in NVIDIA's slow mode,
     * where each took 17-40 us (experiment, eighteenth session). */
    setenv("VKC_IMM_MARKER", "1", 1);
    setenv("VKC_FIRST_SIGNAL", "0", 1);
    vkc_context *renosig = bench_twin_row(b, "vkc-immediate-rerecord-nosignal");
    unsetenv("VKC_FIRST_SIGNAL");
    unsetenv("VKC_IMM_MARKER");
    unsetenv("VKC_IMM_REUSE");
    uint32_t kmax = b->opt.quick ? 1024 : 4096;
    uint32_t total = bench_n(b, 4096, 200000); /* dispatches per K */
    for (uint32_t K = 1; K <= kmax; K *= 4) {
        uint32_t iters = total / K;
        if (iters < 3)
            iters = 3;
        if (iters > bench_n(b, 100, 2000))
            iters = bench_n(b, 100, 2000);
        const bool mid = K >= 16 && K <= 1024, small = K <= 64;
        /* In the order of the table, each with whether it runs at this K;
         * a row whose context could not be made has its failed record
         * already. */
        const batch_row all[] = {
            {.name = "raw-record-submit", .on = r != NULL},
            {.name = "raw-record-submit+lead", .on = r && K <= 16, .lead = true},
            {.name = "vkc-immediate", .on = true, .ctx = b->ctx, .glsl = true, .ways = 1},
            /* Two batches taking turns: each repeats the one before the last. */
            {.name = "vkc-immediate-alternate", .on = true, .ctx = b->ctx, .glsl = true, .ways = 2},
            {.name = "vkc-immediate-alternate-hold0",
             .on = hold0 && K >= 16,
             .ctx = hold0,
             .glsl = true,
             .ways = 2},
            {.name = "vkc-immediate-rerecord",
             .on = rerecord,
             .ctx = rerecord,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-rerecord-adapt",
             .on = readapt,
             .ctx = readapt,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-rerecord-signal",
             .on = resignal,
             .ctx = resignal,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-rerecord-nosignal",
             .on = renosig,
             .ctx = renosig,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-whole",
             .on = whole && mid,
             .ctx = whole,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-rerecord-whole",
             .on = rewhole && mid,
             .ctx = rewhole,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-rerecord-split2",
             .on = re2 && mid,
             .ctx = re2,
             .glsl = true,
             .ways = 1},
            {.name = "vkc-immediate-spirv", .on = small, .ctx = b->ctx, .ways = 1},
            {.name = "vkc-immediate-fixed", .on = fixed, .ctx = fixed, .glsl = true, .ways = 1},
            /* no epilogue: the marker's own dispatch, or none */
            {.name = "vkc-immediate-marker", .on = marker && small, .ctx = marker, .ways = 1},
            {.name = "vkc-immediate-unmarked", .on = unmarked && small, .ctx = unmarked, .ways = 1},
        };
        batch_row rows[sizeof(all) / sizeof(all[0])];
        uint32_t n = 0;
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i)
            if (all[i].on && bench_row_wanted(all[i].name))
                rows[n++] = all[i];
        batch_rows(b, r, rows, n, K, iters);
    }
    vkc_context_destroy(fixed);
    vkc_context_destroy(marker);
    vkc_context_destroy(unmarked);
    vkc_context_destroy(rerecord);
    vkc_context_destroy(readapt);
    vkc_context_destroy(resignal);
    vkc_context_destroy(hold0);
    vkc_context_destroy(renosig);
    vkc_context_destroy(whole);
    vkc_context_destroy(rewhole);
    vkc_context_destroy(re2);
}

/* ---- family -------------------------------------------------------------------- */

void scen_family(bench *b, raw *r)
{
    (void)r;
    const vkc_device_info *d = b->dev;
    int32_t compute_only = -1, graphics = -1;
    for (uint32_t i = 0; i < d->queue_family_count; ++i) {
        uint32_t f = d->queue_families[i].flags;
        if (!(f & VK_QUEUE_COMPUTE_BIT))
            continue;
        if (f & VK_QUEUE_GRAPHICS_BIT) {
            if (graphics < 0)
                graphics = (int32_t)i;
        } else if (compute_only < 0) {
            compute_only = (int32_t)i;
        }
    }
    if (compute_only < 0 || graphics < 0) {
        bench_skip(b, "compute-vs-graphics",
                   compute_only < 0 ? "the device has no compute-only family"
                                    : "the device has no graphics+compute family");
        return;
    }
    uint32_t K = bench_n(b, 64, 10000);
    const int32_t fams[2] = {compute_only, graphics};
    const char *names[2] = {"compute-only", "graphics"};
    for (int i = 0; i < 2; ++i) {
        vkc_context_desc desc = {.queue_family_override = true, .queue_family = (uint32_t)fams[i]};
        char v1[64], v2[64], base[96];
        snprintf(v1, sizeof(v1), "vkc-reuse-%s(qf%d)", names[i], fams[i]);
        snprintf(v2, sizeof(v2), "vkc-chain-%s(qf%d)", names[i], fams[i]);
        vkc_context *c = bench_context_or_fail(b, &desc, v1, v2, NULL);
        if (!c)
            continue;
        bench_vkc_roundtrip(b, c, v1, false, true, false, NAIVE_BASE);
        snprintf(base, sizeof(base), "family/vkc-chain-%s(qf%d)", names[0], fams[0]);
        bench_vkc_chain(b, c, v2, K, base);
        vkc_context_destroy(c);
    }
}
