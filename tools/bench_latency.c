/* Round-trip scenarios: naive, reuse, batch, family (reuse part). */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAIVE_BASE "naive/raw-naive"

/* ---- raw -------------------------------------------------------------------- */

typedef enum { RT_NAIVE, RT_BLOCK, RT_SPIN } rt_mode;

/* One tiny dispatch (x[i] += 1 over TINY_N uints) per round trip. */
static void raw_roundtrip(bench *b, raw *r, const char *variant, rt_mode mode)
{
    char err[512] = "";
    raw_tiny t = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, NAIVE_BASE);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 5000)));
    RTRY(raw_tiny_init(r, &t, 0));
    if (mode != RT_NAIVE) {
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(t.cb, &bi), "vkBeginCommandBuffer"));
        raw_cmd_dispatch(r, t.cb, &t.p, &t.a, t.push, 1, 1);
        RTRY(raw_ok(r, r->vkEndCommandBuffer(t.cb), "vkEndCommandBuffer"));
    }
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

/* ---- vkc -------------------------------------------------------------------- */

/* Round trip through vkc: a fresh sequence per dispatch (fresh) or one
 * sequence recorded once and resubmitted. */
void bench_vkc_roundtrip(bench *b, vkc_context *vctx, const char *variant, bool fresh,
                         const char *baseline)
{
    char err[512] = "";
    bench_tiny t = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 5000)));
    VTRY(bench_tiny_init(vctx, &t, 0));
    if (fresh) {
        /* the whole life of a sequence is inside the timed round trip */
        for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
            uint64_t t0 = bench_now_ns();
            VTRY(bench_seq_once(vctx, &t.d, 1));
            bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
        }
    } else {
        VTRY(bench_seq_time(vctx, &t.d, 1, 1, &tm, NULL));
    }
    VTRY(bench_tiny_check(&t, tm.warm + tm.iters, &rec));
    bench_rec_stats(&rec, tm.wall, tm.iters, true);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    bench_tiny_finish(&t);
}

void scen_naive(bench *b, raw *r)
{
    if (r)
        raw_roundtrip(b, r, "raw-naive", RT_NAIVE);
    bench_vkc_roundtrip(b, b->ctx, "vkc-fresh-seq", true, NAIVE_BASE);
}

void scen_reuse(bench *b, raw *r)
{
    if (r) {
        raw_roundtrip(b, r, "raw-block", RT_BLOCK);
        raw_roundtrip(b, r, "raw-spin", RT_SPIN);
    }
    static const struct {
        vkc_wait_mode mode;
        const char *name;
    } modes[] = {{VKC_WAIT_SPIN_THEN_BLOCK, "vkc-spin-then-block"},
                 {VKC_WAIT_BLOCK, "vkc-block"},
                 {VKC_WAIT_SPIN, "vkc-spin"},
                 {VKC_WAIT_SPIN_MARKER, "vkc-spin-marker"}};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); ++i) {
        vkc_context_desc desc = {.wait_mode = modes[i].mode};
        vkc_context *c = bench_context_or_fail(b, &desc, modes[i].name, NULL);
        if (!c)
            continue;
        bench_vkc_roundtrip(b, c, modes[i].name, false, NAIVE_BASE);
        vkc_context_destroy(c);
    }
}

/* ---- batch: immediate mode ---------------------------------------------------- */

/* K tiny dependent dispatches per submission; the first iteration warms up. */
static void raw_batch(bench *b, raw *r, uint32_t K, uint32_t iters)
{
    char err[512] = "", variant[64], base[80];
    snprintf(variant, sizeof(variant), "raw-record-submit K=%u", K);
    snprintf(base, sizeof(base), "batch/%s", variant);
    raw_tiny t = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, base);
    MTRY(bench_times_init(&tm, 1, iters));
    RTRY(raw_tiny_init(r, &t, 0));
    for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
        uint64_t t0 = bench_now_ns();
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(t.cb, &bi), "vkBeginCommandBuffer"));
        for (uint32_t j = 0; j < K; ++j) {
            if (j)
                raw_cmd_barrier(r, t.cb);
            raw_cmd_dispatch(r, t.cb, &t.p, &t.a, t.push, 1, 1);
        }
        RTRY(raw_ok(r, r->vkEndCommandBuffer(t.cb), "vkEndCommandBuffer"));
        RTRY(raw_submit_wait(r, t.cb, t.fence, true));
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
    }
    bench_rec_sweep(&rec, K, "K");
    RTRY(raw_tiny_check(r, &t, (iters + 1) * K, &rec));
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    raw_tiny_finish(r, &t);
}

static void vkc_batch(bench *b, uint32_t K, uint32_t iters)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64], base[64];
    snprintf(variant, sizeof(variant), "vkc-immediate K=%u", K);
    snprintf(base, sizeof(base), "batch/raw-record-submit K=%u", K);
    bench_tiny t = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, base);
    MTRY(bench_times_init(&tm, 1, iters));
    VTRY(bench_tiny_init(vctx, &t, 0));
    for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
        uint64_t t0 = bench_now_ns();
        for (uint32_t j = 0; j < K; ++j)
            VTRY(vkc_dispatch(vctx, &t.d));
        vkc_ticket tk;
        VTRY(vkc_flush(vctx, &tk));
        VTRY(vkc_wait(vctx, tk, UINT64_MAX));
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
    }
    bench_rec_sweep(&rec, K, "K");
    VTRY(bench_tiny_check(&t, (iters + 1) * K, &rec));
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    bench_tiny_finish(&t);
}

void scen_batch(bench *b, raw *r)
{
    uint32_t kmax = b->opt.quick ? 1024 : 4096;
    uint32_t total = bench_n(b, 4096, 200000); /* dispatches per K */
    for (uint32_t K = 1; K <= kmax; K *= 4) {
        uint32_t iters = total / K;
        if (iters < 3)
            iters = 3;
        if (iters > bench_n(b, 100, 2000))
            iters = bench_n(b, 100, 2000);
        if (r)
            raw_batch(b, r, K, iters);
        vkc_batch(b, K, iters);
    }
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
        bench_vkc_roundtrip(b, c, v1, false, NAIVE_BASE);
        snprintf(base, sizeof(base), "family/vkc-chain-%s(qf%d)", names[0], fams[0]);
        bench_vkc_chain(b, c, v2, K, base);
        vkc_context_destroy(c);
    }
}
