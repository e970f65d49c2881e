/* Resident kernels: the round trip of one tiny item (post, wait) and a
 * stream of dependent items, resident against the same kernel's fallback
 * (each post one submitted dispatch), beside vkc's ordinary round trip and
 * a raw Vulkan resident probe (the floor: one doorbell slot, no vkc). */
#include "bench.h"
#include "bench_shaders.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Item (a, b): x[i] = x[i] * a + b + i over TINY_N uints, one workgroup:
 * each item depends on the one before. */
static const char *STEP_GLSL =
    "#version 450\n"
    "#include \"vkc_resident.glsl\"\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 1) coherent buffer X { uint x[]; };\n"
    "void main() {\n"
    "  vkc_item it;\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  while (vkc_resident_next(it)) {\n"
    "    uint a = vkc_resident_word(it, 0u), b = vkc_resident_word(it, 1u);\n"
    "    for (uint j = i; j < 64u; j += gl_WorkGroupSize.x * gl_NumWorkGroups.x)\n"
    "      x[j] = x[j] * a + b + j;\n"
    "    vkc_resident_done(it);\n"
    "  }\n"
    "}\n";

/* TINY_WG invocations, but 8 on a CPU driver: lavapipe's spin loops
 * misbehave in wider workgroups. */
static uint32_t res_wg(const bench *b)
{
    return b->dev->type == VKC_DEVICE_TYPE_CPU ? 8u : TINY_WG;
}

static void step_ref(uint32_t *ref, uint32_t a, uint32_t b)
{
    for (uint32_t i = 0; i < TINY_N; ++i)
        ref[i] = ref[i] * a + b + i;
}

typedef struct res_fix {
    vkc_buffer *x;
    vkc_resident *r;
    uint32_t ref[TINY_N];
    vkc_resident_info info;
} res_fix;

static vkc_result res_open(bench *b, vkc_context *ctx, res_fix *f, bool fallback, uint32_t grid,
                           vkc_resident_ack ack)
{
    memset(f, 0, sizeof(*f));
    vkc_result res = bench_buffer(ctx, TINY_N * 4, "x", &f->x);
    if (res < 0)
        return res;
    vkc_arg a = {.buffer = f->x};
    res = vkc_resident_create(ctx,
                              &(vkc_resident_desc){.glsl = STEP_GLSL,
                                                   .name = "bench-step",
                                                   .args = &a,
                                                   .arg_count = 1,
                                                   .payload_size = 16,
                                                   .workgroup_size = res_wg(b),
                                                   .grid = grid,
                                                   .fallback = fallback ? VKC_ON : VKC_DEFAULT,
                                                   .ack = ack},
                              &f->r);
    if (res >= 0)
        res = vkc_resident_info_get(f->r, &f->info);
    return res;
}

static void res_close(res_fix *f)
{
    vkc_resident_destroy(f->r);
    vkc_buffer_destroy(f->x);
    memset(f, 0, sizeof(*f));
}

static void res_ref(res_fix *f, uint32_t a, uint32_t b)
{
    step_ref(f->ref, a, b);
}

static void step_check(const uint32_t *got, const uint32_t *ref, bench_rec *rec)
{
    rec->ok = true;
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (got[i] != ref[i]) {
            rec->ok = false;
            bench_note(rec, "x[%u] = %u, want %u", i, got[i], ref[i]);
            break;
        }
}

static vkc_result res_check(res_fix *f, bench_rec *rec)
{
    uint32_t got[TINY_N];
    vkc_result res = vkc_buffer_download(f->x, 0, got, sizeof(got));
    if (res < 0)
        return res;
    step_check(got, f->ref, rec);
    return VKC_SUCCESS;
}

static void res_note(bench_rec *rec, const res_fix *f)
{
    if (f->info.resident)
        bench_note(rec, "resident: queue %u.%u, memory type %u%s, poll %.0f ns, grid %u",
                   f->info.queue_family, f->info.queue_index, f->info.memory_type,
                   f->info.device_local ? " (device-local)" : "", f->info.poll_ns, f->info.grid);
    else
        bench_note(rec, "ordinary submits: %s", f->info.reason);
    if (f->info.host_ack)
        bench_note(rec, "acks in host memory (type %u)", f->info.ack_memory_type);
    else if (f->info.ack_reason[0])
        bench_note(rec, "acks in the ring, not host memory: %s", f->info.ack_reason);
}

/* Post one item, wait for it; each item's input depends on the result. */
static void res_roundtrip(bench *b, bool fallback, uint32_t grid, vkc_resident_ack ack,
                          const char *variant, const char *baseline)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    res_fix f = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 20000)));
    VTRY(res_open(b, vctx, &f, fallback, grid, ack));
    for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
        uint32_t w[2] = {3u, i};
        uint64_t t0 = bench_now_ns();
        vkc_ticket t;
        VTRY(vkc_resident_post(f.r, w, sizeof(w), 0, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
        res_ref(&f, w[0], w[1]);
    }
    VTRY(vkc_resident_info_get(f.r, &f.info));
    VTRY(res_check(&f, &rec));
    res_note(&rec, &f);
    bench_note(&rec, "%llu launches", (unsigned long long)f.info.launches);
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    res_close(&f);
}

/* K dependent items posted back to back, one wait at the end; per item. */
static void res_stream(bench *b, bool fallback, uint32_t K, vkc_resident_ack ack,
                       const char *variant, const char *baseline)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    res_fix f = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, 1, bench_n(b, 2, 5)));
    VTRY(res_open(b, vctx, &f, fallback, 1, ack));
    for (uint32_t it = 0; it < tm.warm + tm.iters; ++it) {
        uint64_t t0 = bench_now_ns();
        vkc_ticket t = {0};
        for (uint32_t k = 0; k < K; ++k) {
            uint32_t w[2] = {5u, k ^ it};
            VTRY(vkc_resident_post(f.r, w, sizeof(w), 0, &t));
            res_ref(&f, w[0], w[1]);
        }
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        bench_times_put(&tm, it, (double)(bench_now_ns() - t0));
    }
    VTRY(vkc_resident_info_get(f.r, &f.info));
    VTRY(res_check(&f, &rec));
    res_note(&rec, &f);
    bench_rec_sweep(&rec, K, "K");
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    res_close(&f);
}

/* ---- the raw probe ---------------------------------------------------------------------- */

/* Words of the probe's doorbell page (shaders/resident_raw.comp: RB_*). */
enum {
    RB_SEQ = 0,
    RB_A = 1,
    RB_B = 2,
    RB_ACK = 16,
    RB_BASE = 32,
    RB_STOP = 33,
    RB_ENDED = 34,
    RB_BOUND = 35,
    RB_WORDS = 48,
};

typedef struct raw_res {
    raw_pipe p;
    raw_buf bell, x;
    raw_buf hack; /* "+hostack": the ack word in host memory */
    volatile uint32_t *ack;
    raw_args a;
    VkCommandBuffer cb;
    VkFence fence;
    bool launched;
    uint32_t bound; /* polls + 16 per item per launch (CPU drivers), 0: none */
    uint64_t launches;
    volatile uint32_t *w;
} raw_res;

/* The payload's write-combined stores drain before the doorbell, and the
 * doorbell leaves at once. */
static inline void rb_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_sfence();
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

static inline void rb_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

static bool rr_launch(raw *r, raw_res *q, uint32_t base)
{
    q->w[RB_BASE] = base;
    q->w[RB_STOP] = 0;
    q->w[RB_ENDED] = 0;
    q->w[RB_BOUND] = q->bound;
    rb_fence();
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &q->cb};
    vkc_queue_lock(r->ctx);
    VkResult vr = r->vkQueueSubmit(r->h.queue, 1, &si, q->fence);
    vkc_queue_unlock(r->ctx);
    if (!raw_ok(r, vr, "vkQueueSubmit (raw resident launch)"))
        return false;
    q->launched = true;
    q->launches++;
    return true;
}

/* End the launch (stop, then its fence, bounded). */
static bool rr_join(raw *r, raw_res *q)
{
    if (!q->launched)
        return true;
    q->w[RB_STOP] = 1;
    rb_fence();
    VkResult vr = r->vkWaitForFences(r->dev, 1, &q->fence, VK_TRUE, 2000000000ull);
    if (!raw_ok(r, vr, "vkWaitForFences (raw resident)"))
        return false;
    q->launched = false;
    return raw_ok(r, r->vkResetFences(r->dev, 1, &q->fence), "vkResetFences");
}

static bool rr_open(bench *b, raw *r, raw_res *q, bool hostack)
{
    memset(q, 0, sizeof(*q));
    const VkMemoryPropertyFlags hv =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags want[] = {hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, hv};
    uint32_t zeros[TINY_N] = {0};
    /* System memory, host-cached where there is such a type. */
    const VkMemoryPropertyFlags host[] = {hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, hv};
    if (!raw_pipe_create(r, BENCH_SPV(resident_raw), 3, 8, res_wg(b), 0, &q->p) ||
        !raw_buf_create_in(r, RB_WORDS * 4, want, 2, true, &q->bell) ||
        (hostack && !raw_buf_create_in(r, 64, host, 2, true, &q->hack)) ||
        !raw_buf_create(r, TINY_N * 4, false, &q->x) ||
        !raw_upload(r, &q->x, 0, zeros, sizeof(zeros)))
        return false;
    q->w = q->bell.map;
    memset(q->bell.map, 0, RB_WORDS * 4);
    if (hostack)
        memset(q->hack.map, 0, 64);
    q->ack = hostack ? (volatile uint32_t *)q->hack.map : q->w + RB_ACK;
    VkBuffer ackb = hostack ? q->hack.buf : q->bell.buf;
    q->bound = b->dev->type == VKC_DEVICE_TYPE_CPU ? 30000u : 0u;
    q->a = (raw_args){.b = {{q->bell.buf, 0, VK_WHOLE_SIZE},
                            {q->x.buf, 0, VK_WHOLE_SIZE},
                            {ackb, 0, VK_WHOLE_SIZE}},
                      .n = 3};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    /* The item count and the ack's word in binding 2. */
    uint32_t push[2] = {TINY_N, hostack ? 0u : (uint32_t)RB_ACK};
    if (!raw_prepare(r, &q->p, &q->a) || !raw_new_cb(r, &q->cb) ||
        !raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &q->fence), "vkCreateFence") ||
        !raw_ok(r, r->vkBeginCommandBuffer(q->cb, &bi), "vkBeginCommandBuffer"))
        return false;
    /* After the previous launch's writes to x (the host's fence wait
     * orders them, this says so to the validation layer). */
    raw_cmd_barrier(r, q->cb);
    raw_cmd_dispatch(r, q->cb, &q->p, &q->a, push, 1, 1);
    return raw_ok(r, r->vkEndCommandBuffer(q->cb), "vkEndCommandBuffer");
}

static void rr_close(raw *r, raw_res *q)
{
    (void)rr_join(r, q);
    if (q->fence)
        r->vkDestroyFence(r->dev, q->fence, NULL);
    if (q->cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &q->cb);
    raw_buf_destroy(r, &q->x);
    raw_buf_destroy(r, &q->bell);
    raw_buf_destroy(r, &q->hack);
    raw_pipe_destroy(r, &q->p);
    memset(q, 0, sizeof(*q));
}

/* Spin on item seq's ack; relaunch a launch that ran out of polls (CPU
 * drivers). The ended word is read across the bus only now and then. */
static bool rr_wait(raw *r, raw_res *q, uint32_t seq)
{
    uint64_t start = 0;
    for (uint32_t n = 1; *q->ack != seq; ++n) {
        rb_relax();
        if (n % 1024)
            continue;
        if (!start)
            start = bench_now_ns();
        if (q->w[RB_ENDED]) {
            if (!rr_join(r, q) || !rr_launch(r, q, *q->ack == seq ? seq + 1 : seq))
                return false;
        } else if (bench_now_ns() - start > 1000000000ull) {
            snprintf(r->err, sizeof(r->err),
                     "raw resident: item %u not acknowledged within 1 s (memory type %u)", seq,
                     q->bell.mem_type);
            return false;
        }
    }
    return true;
}

/* The floor under vkc's resident round trip: the same item, the same
 * memory placement (device-local host-visible where there is one), one
 * doorbell slot, the host's payload stores, one store fence, the doorbell,
 * a spin on the ack word. */
static void raw_res_roundtrip(bench *b, raw *r, bool hostack, const char *variant,
                              const char *baseline)
{
    char err[512] = "";
    raw_res q = {0};
    bench_times tm = {0};
    uint32_t ref[TINY_N] = {0}, got[TINY_N];
    if (!r) {
        bench_skip(b, variant, "raw Vulkan could not be set up");
        return;
    }
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 20000)));
    RTRY(rr_open(b, r, &q, hostack));
    RTRY(rr_launch(r, &q, 1));
    for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
        uint32_t seq = i + 1;
        uint64_t t0 = bench_now_ns();
        q.w[RB_A] = 3u;
        q.w[RB_B] = i;
        rb_fence();
        q.w[RB_SEQ] = seq;
        rb_fence();
        RTRY(rr_wait(r, &q, seq));
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
        step_ref(ref, 3u, i);
    }
    RTRY(rr_join(r, &q));
    RTRY(raw_download(r, &q.x, 0, got, sizeof(got)));
    step_check(got, ref, &rec);
    bench_note(&rec, "raw: queue %u.0, memory type %u, workgroup %u; %llu launches",
               r->h.queue_family, q.bell.mem_type, q.p.wg, (unsigned long long)q.launches);
    if (hostack)
        bench_note(&rec, "ack in memory type %u%s", q.hack.mem_type,
                   (r->memprops.memoryTypes[q.hack.mem_type].propertyFlags &
                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
                       ? " (device-local)"
                       : " (system memory)");
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    rr_close(r, &q);
}

void scen_resident(bench *b, raw *r)
{
    /* vkc's ordinary round trip on the same context, for reference. */
    bench_vkc_roundtrip(b, b->ctx, "vkc-ordinary-roundtrip", false, true, false, NULL);
    vkc_context_desc md = {.wait_mode = VKC_WAIT_SPIN_MARKER};
    vkc_context *mc = bench_context_or_fail(b, &md, "vkc-ordinary-roundtrip-marker", NULL);
    if (mc) {
        bench_vkc_roundtrip(b, mc, "vkc-ordinary-roundtrip-marker", false, true, false, NULL);
        vkc_context_destroy(mc);
    }
    const vkc_resident_ack D = VKC_RESIDENT_ACK_DEFAULT, B = VKC_RESIDENT_ACK_BAR;
    res_roundtrip(b, true, 1, D, "vkc-fallback-roundtrip", NULL);
    raw_res_roundtrip(b, r, false, "raw-resident-roundtrip", NULL);
    /* Issue 17: the ack the host spins on in host memory (vkc's default
     * where the self-test sees it), against the ack in the BAR, where every
     * look is a read across the bus ("+barack", the raw probe's form). */
    raw_res_roundtrip(b, r, true, "raw-resident-roundtrip+hostack",
                      "resident/raw-resident-roundtrip");
    res_roundtrip(b, false, 1, D, "vkc-resident-roundtrip",
                  "resident/raw-resident-roundtrip+hostack");
    res_roundtrip(b, false, 1, B, "vkc-resident-roundtrip+barack",
                  "resident/raw-resident-roundtrip");
    /* A grid: what deciding each item across workgroups costs (a claim
     * atomic per workgroup, the last one's add). On a CPU driver the
     * workgroups share cores with the spinning host and take turns (each
     * item then waits for an idle exit): no figure worth the minutes. */
    if (b->dev->type == VKC_DEVICE_TYPE_CPU)
        bench_skip(b, "vkc-resident-roundtrip G=4", "CPU driver: the grid's workgroups take turns");
    else
        res_roundtrip(b, false, 4, D, "vkc-resident-roundtrip G=4",
                      "resident/vkc-resident-roundtrip");
    uint32_t K = bench_n(b, 200, 10000);
    char v[64], base[80], base2[80];
    snprintf(v, sizeof(v), "vkc-fallback-stream K=%u", K);
    res_stream(b, true, K, D, v, NULL);
    snprintf(base, sizeof(base), "resident/%s", v);
    snprintf(v, sizeof(v), "vkc-resident-stream K=%u", K);
    res_stream(b, false, K, D, v, base);
    snprintf(base2, sizeof(base2), "resident/%s", v);
    snprintf(v, sizeof(v), "vkc-resident-stream+barack K=%u", K);
    res_stream(b, false, K, B, v, base2);
}
