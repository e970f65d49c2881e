/* Round-trip scenarios: naive, reuse, batch, family (reuse part). */
#include "bench.h"
#include "bench_shaders.h"

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
    raw_pipe p = {0};
    raw_buf x = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    double *ns = NULL;
    uint32_t iters = bench_n(b, 200, 5000), warm = bench_n(b, 20, 200);
    RTRY(raw_pipe_create(r, bench_inc, bench_inc_size, 1, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, TINY_N * 4, false, &x));
    uint32_t zeros[TINY_N] = {0};
    RTRY(raw_upload(r, &x, 0, zeros, sizeof(zeros)));
    raw_args a = {.b = {{x.buf, 0, VK_WHOLE_SIZE}}, .n = 1};
    RTRY(raw_prepare(r, &p, &a));
    uint32_t push[2] = {TINY_N, 1};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (mode != RT_NAIVE) {
        RTRY(raw_new_cb(r, &cb));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
        raw_cmd_dispatch(r, cb, &p, &a, push, 1, 1);
        RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
        RTRY(raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence"));
    }
    ns = malloc(iters * sizeof(double));
    if (!ns) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < warm + iters; ++i) {
        uint64_t t0 = bench_now_ns();
        if (mode == RT_NAIVE) {
            VkCommandBuffer c;
            RTRY(raw_begin(r, &c));
            raw_cmd_dispatch(r, c, &p, &a, push, 1, 1);
            RTRY(raw_end_wait(r, c)); /* fence created, waited on, destroyed; CB freed */
        } else {
            RTRY(raw_submit_wait(r, cb, fence, mode == RT_SPIN));
        }
        uint64_t t1 = bench_now_ns();
        if (i >= warm)
            ns[i - warm] = (double)(t1 - t0);
    }
    uint32_t got[TINY_N];
    RTRY(raw_download(r, &x, 0, got, sizeof(got)));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), NAIVE_BASE);
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (got[i] != warm + iters) {
            rec.ok = false;
            snprintf(rec.note, sizeof(rec.note), "x[%u] = %u, want %u", i, got[i], warm + iters);
            break;
        }
    bench_rec_stats(&rec, ns, iters, true);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    if (fence)
        r->vkDestroyFence(r->dev, fence, NULL);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &x);
    raw_pipe_destroy(r, &p);
}

/* ---- vkc -------------------------------------------------------------------- */

/* Round trip through vkc: a fresh sequence per dispatch (fresh) or one
 * sequence recorded once and resubmitted. */
void bench_vkc_roundtrip(bench *b, vkc_context *vctx, const char *variant, bool fresh,
                         const char *baseline);
void bench_vkc_roundtrip(bench *b, vkc_context *vctx, const char *variant, bool fresh,
                         const char *baseline)
{
    char err[512] = "";
    vkc_kernel *k = NULL;
    vkc_buffer *x = NULL;
    vkc_seq *s = NULL;
    double *ns = NULL;
    uint32_t iters = bench_n(b, 200, 5000), warm = bench_n(b, 20, 200);
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_inc,
                                              .spirv_size = bench_inc_size,
                                              .workgroup_size = TINY_WG,
                                              .name = "inc"},
                           &k));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = TINY_N * 4, .name = "x"}, &x));
    VTRY(vkc_buffer_fill(x, 0, TINY_N * 4, 0));
    uint32_t push[2] = {TINY_N, 1};
    vkc_arg arg = {.buffer = x};
    vkc_dispatch_desc d = {
        .kernel = k, .args = &arg, .arg_count = 1, .push = push, .push_size = 8, .count = TINY_N};
    if (!fresh) {
        VTRY(vkc_seq_create(vctx, NULL, &s));
        VTRY(vkc_seq_dispatch(s, &d));
        VTRY(vkc_seq_end(s));
    }
    ns = malloc(iters * sizeof(double));
    if (!ns) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < warm + iters; ++i) {
        vkc_ticket t;
        uint64_t t0 = bench_now_ns();
        if (fresh) {
            VTRY(vkc_seq_create(vctx, NULL, &s));
            VTRY(vkc_seq_dispatch(s, &d));
            VTRY(vkc_seq_end(s));
        }
        VTRY(vkc_seq_submit(s, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        if (fresh) {
            vkc_seq_destroy(s);
            s = NULL;
        }
        uint64_t t1 = bench_now_ns();
        if (i >= warm)
            ns[i - warm] = (double)(t1 - t0);
    }
    uint32_t got[TINY_N];
    VTRY(vkc_buffer_download(x, 0, got, sizeof(got)));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "%s", baseline);
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (got[i] != warm + iters) {
            rec.ok = false;
            snprintf(rec.note, sizeof(rec.note), "x[%u] = %u, want %u", i, got[i], warm + iters);
            break;
        }
    bench_rec_stats(&rec, ns, iters, true);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
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
        vkc_context *c = NULL;
        vkc_context_desc desc = {.wait_mode = modes[i].mode};
        vkc_result res = bench_context(b, &desc, &c);
        if (res != VKC_SUCCESS) {
            char err[512];
            bench_fail(b, modes[i].name, "%s",
                       bench_vkc_err(NULL, res, "vkc_context_create", err, sizeof(err)));
            continue;
        }
        bench_vkc_roundtrip(b, c, modes[i].name, false, NAIVE_BASE);
        vkc_context_destroy(c);
    }
}

/* ---- batch: immediate mode ---------------------------------------------------- */

static void raw_batch(bench *b, raw *r, uint32_t K, uint32_t iters)
{
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "raw-record-submit K=%u", K);
    raw_pipe p = {0};
    raw_buf x = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    double *ns = malloc((iters + 1) * sizeof(double));
    RTRY(ns != NULL);
    RTRY(raw_pipe_create(r, bench_inc, bench_inc_size, 1, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, TINY_N * 4, false, &x));
    uint32_t zeros[TINY_N] = {0};
    RTRY(raw_upload(r, &x, 0, zeros, sizeof(zeros)));
    raw_args a = {.b = {{x.buf, 0, VK_WHOLE_SIZE}}, .n = 1};
    RTRY(raw_prepare(r, &p, &a));
    RTRY(raw_new_cb(r, &cb));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    RTRY(raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence"));
    uint32_t push[2] = {TINY_N, 1};
    for (uint32_t i = 0; i < iters + 1; ++i) { /* the first is the warm-up */
        uint64_t t0 = bench_now_ns();
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
        for (uint32_t j = 0; j < K; ++j) {
            if (j)
                raw_cmd_barrier(r, cb);
            raw_cmd_dispatch(r, cb, &p, &a, push, 1, 1);
        }
        RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
        RTRY(raw_submit_wait(r, cb, fence, true));
        ns[i] = (double)(bench_now_ns() - t0);
    }
    uint32_t got[TINY_N];
    RTRY(raw_download(r, &x, 0, got, sizeof(got)));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "batch/%s", variant);
    rec.x = K;
    snprintf(rec.x_name, sizeof(rec.x_name), "K");
    if (got[0] != (iters + 1) * K || got[TINY_N - 1] != (iters + 1) * K) {
        rec.ok = false;
        snprintf(rec.note, sizeof(rec.note), "x[0] = %u, want %u", got[0], (iters + 1) * K);
    }
    bench_rec_stats(&rec, ns + 1, iters, false);
    rec.per_dispatch_ns = rec.p50_us * 1e3 / K;
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    if (fence)
        r->vkDestroyFence(r->dev, fence, NULL);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &x);
    raw_pipe_destroy(r, &p);
}

static void vkc_batch(bench *b, uint32_t K, uint32_t iters)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64], base[64];
    snprintf(variant, sizeof(variant), "vkc-immediate K=%u", K);
    snprintf(base, sizeof(base), "batch/raw-record-submit K=%u", K);
    vkc_kernel *k = NULL;
    vkc_buffer *x = NULL;
    double *ns = malloc((iters + 1) * sizeof(double));
    if (!ns) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_inc,
                                              .spirv_size = bench_inc_size,
                                              .workgroup_size = TINY_WG,
                                              .name = "inc"},
                           &k));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = TINY_N * 4, .name = "x"}, &x));
    VTRY(vkc_buffer_fill(x, 0, TINY_N * 4, 0));
    uint32_t push[2] = {TINY_N, 1};
    vkc_arg arg = {.buffer = x};
    vkc_dispatch_desc d = {
        .kernel = k, .args = &arg, .arg_count = 1, .push = push, .push_size = 8, .count = TINY_N};
    for (uint32_t i = 0; i < iters + 1; ++i) {
        uint64_t t0 = bench_now_ns();
        for (uint32_t j = 0; j < K; ++j)
            VTRY(vkc_dispatch(vctx, &d));
        vkc_ticket t;
        VTRY(vkc_flush(vctx, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        ns[i] = (double)(bench_now_ns() - t0);
    }
    uint32_t got[TINY_N];
    VTRY(vkc_buffer_download(x, 0, got, sizeof(got)));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
    rec.x = K;
    snprintf(rec.x_name, sizeof(rec.x_name), "K");
    if (got[0] != (iters + 1) * K || got[TINY_N - 1] != (iters + 1) * K) {
        rec.ok = false;
        snprintf(rec.note, sizeof(rec.note), "x[0] = %u, want %u", got[0], (iters + 1) * K);
    }
    bench_rec_stats(&rec, ns + 1, iters, false);
    rec.per_dispatch_ns = rec.p50_us * 1e3 / K;
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
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

void bench_vkc_chain(bench *b, vkc_context *vctx, const char *variant, uint32_t K,
                     const char *baseline);

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
        bench_rec rec = bench_rec_init(b, "compute-vs-graphics");
        rec.skipped = true;
        snprintf(rec.note, sizeof(rec.note), "the device has no %s family",
                 compute_only < 0 ? "compute-only" : "graphics+compute");
        bench_add(b, &rec);
        return;
    }
    uint32_t K = bench_n(b, 64, 10000);
    const int32_t fams[2] = {compute_only, graphics};
    const char *names[2] = {"compute-only", "graphics"};
    for (int i = 0; i < 2; ++i) {
        vkc_context *c = NULL;
        vkc_context_desc desc = {.queue_family_override = true, .queue_family = (uint32_t)fams[i]};
        char v1[64], v2[64], base[96];
        snprintf(v1, sizeof(v1), "vkc-reuse-%s(qf%d)", names[i], fams[i]);
        snprintf(v2, sizeof(v2), "vkc-chain-%s(qf%d)", names[i], fams[i]);
        vkc_result res = bench_context(b, &desc, &c);
        if (res != VKC_SUCCESS) {
            char err[512];
            bench_vkc_err(NULL, res, "vkc_context_create", err, sizeof(err));
            bench_fail(b, v1, "%s", err);
            bench_fail(b, v2, "%s", err);
            continue;
        }
        bench_vkc_roundtrip(b, c, v1, false, NAIVE_BASE);
        snprintf(base, sizeof(base), "family/vkc-chain-%s(qf%d)", names[0], fams[0]);
        bench_vkc_chain(b, c, v2, K, base);
        vkc_context_destroy(c);
    }
}
