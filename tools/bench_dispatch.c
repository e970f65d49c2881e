/* Many dispatches per submit: chain, independent, levels, descriptors, record. */
#include "bench.h"
#include "bench_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes between the ranges that independent dispatches write: TINY_N uints,
 * rounded up to the storage-buffer offset alignment. */
static uint64_t range_stride(const bench *b)
{
    uint64_t align = b->dev->min_storage_buffer_offset_alignment;
    if (align < 4)
        align = 4;
    return (TINY_N * 4 + align - 1) / align * align;
}

/* Timing of a pre-recorded submission holding `dispatches` dispatches. */
static void fill_timing(bench_rec *rec, double *wall, double *gpu, bool has_gpu, uint32_t iters,
                        uint32_t dispatches)
{
    if (has_gpu)
        rec->gpu_per_dispatch_ns = bench_median(gpu, iters) / dispatches;
    bench_rec_stats(rec, wall, iters, false);
    rec->per_dispatch_ns = rec->p50_us * 1e3 / dispatches;
}

/* ---- chain ------------------------------------------------------------------- */

typedef enum { BAR_MEMORY, BAR_BUFFER, BAR_SYNC2, BAR_COUNT } bar_kind;
static const char *bar_names[] = {"raw-barrier-memory", "raw-barrier-buffer", "raw-barrier-sync2"};

static void cmd_bar(raw *r, VkCommandBuffer cb, bar_kind kind, VkBuffer buf)
{
    if (kind == BAR_MEMORY) {
        raw_cmd_barrier(r, cb);
    } else if (kind == BAR_BUFFER) {
        VkBufferMemoryBarrier bb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                    .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                    .dstAccessMask =
                                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                                    .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                    .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                    .buffer = buf,
                                    .size = VK_WHOLE_SIZE};
        r->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, 1, &bb, 0, NULL);
    } else {
        VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                               .srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                               .srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                               .dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                               .dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
        VkDependencyInfo di = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                               .memoryBarrierCount = 1,
                               .pMemoryBarriers = &mb};
        r->vkCmdPipelineBarrier2(cb, &di);
    }
}

static void raw_chain(bench *b, raw *r, bar_kind kind, uint32_t K)
{
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "%s K=%u", bar_names[kind], K);
    if (kind == BAR_SYNC2 && !r->vkCmdPipelineBarrier2) {
        bench_rec rec = bench_rec_init(b, variant);
        rec.skipped = true;
        snprintf(rec.note, sizeof(rec.note), "synchronization2 not enabled");
        bench_add(b, &rec);
        return;
    }
    uint32_t iters = bench_n(b, 20, 200), warm = bench_n(b, 2, 10);
    raw_pipe p = {0};
    raw_buf x = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    double *wall = calloc(iters, sizeof(double)), *gpu = calloc(iters, sizeof(double));
    RTRY(wall && gpu);
    RTRY(raw_pipe_create(r, bench_inc, bench_inc_size, 1, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, TINY_N * 4, false, &x));
    uint32_t zeros[TINY_N] = {0};
    RTRY(raw_upload(r, &x, 0, zeros, sizeof(zeros)));
    raw_args a = {.b = {{x.buf, 0, VK_WHOLE_SIZE}}, .n = 1};
    RTRY(raw_prepare(r, &p, &a));
    RTRY(raw_new_cb(r, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
    raw_cmd_ts_begin(r, cb);
    uint32_t push[2] = {TINY_N, 1};
    for (uint32_t j = 0; j < K; ++j) {
        if (j)
            cmd_bar(r, cb, kind, x.buf);
        raw_cmd_dispatch(r, cb, &p, &a, push, 1, 1);
    }
    raw_cmd_ts_end(r, cb);
    RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
    bool has_gpu;
    RTRY(raw_replay(r, cb, warm, iters, wall, gpu, &has_gpu));
    uint32_t got[TINY_N];
    RTRY(raw_download(r, &x, 0, got, sizeof(got)));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "chain/%s K=%u", bar_names[0], K);
    rec.x = K;
    snprintf(rec.x_name, sizeof(rec.x_name), "K");
    rec.barriers = K - 1;
    uint32_t want = (warm + iters) * K;
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (got[i] != want) {
            rec.ok = false;
            snprintf(rec.note, sizeof(rec.note), "x[%u] = %u, want %u", i, got[i], want);
            break;
        }
    fill_timing(&rec, wall, gpu, has_gpu, iters, K);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(wall);
    free(gpu);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &x);
    raw_pipe_destroy(r, &p);
}

/* K dependent dispatches (x += 1 each) in one vkc sequence, replayed. */
void bench_vkc_chain(bench *b, vkc_context *vctx, const char *variant, uint32_t K,
                     const char *baseline);
void bench_vkc_chain(bench *b, vkc_context *vctx, const char *variant, uint32_t K,
                     const char *baseline)
{
    char err[512] = "";
    uint32_t iters = bench_n(b, 20, 200), warm = bench_n(b, 2, 10);
    vkc_kernel *k = NULL;
    vkc_buffer *x = NULL;
    vkc_seq *s = NULL;
    double *wall = calloc(iters, sizeof(double));
    if (!wall) {
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
    VTRY(vkc_seq_create(vctx, NULL, &s));
    for (uint32_t j = 0; j < K; ++j)
        VTRY(vkc_seq_dispatch(s, &d));
    VTRY(vkc_seq_end(s));
    vkc_seq_info info = {0};
    VTRY(vkc_seq_info_get(s, &info));
    for (uint32_t i = 0; i < warm + iters; ++i) {
        vkc_ticket t;
        uint64_t t0 = bench_now_ns();
        VTRY(vkc_seq_submit(s, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        if (i >= warm)
            wall[i - warm] = (double)(bench_now_ns() - t0);
    }
    uint32_t got[TINY_N];
    VTRY(vkc_buffer_download(x, 0, got, sizeof(got)));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "%s", baseline);
    rec.x = K;
    snprintf(rec.x_name, sizeof(rec.x_name), "K");
    rec.barriers = info.barriers;
    uint32_t want = (warm + iters) * K;
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (got[i] != want) {
            rec.ok = false;
            snprintf(rec.note, sizeof(rec.note), "x[%u] = %u, want %u", i, got[i], want);
            break;
        }
    if (rec.ok && info.barriers < K - 1) {
        rec.ok = false;
        snprintf(rec.note, sizeof(rec.note), "only %u barriers for %u dependent dispatches",
                 info.barriers, K);
    }
    fill_timing(&rec, wall, NULL, false, iters, K);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(wall);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
}

void scen_chain(bench *b, raw *r)
{
    uint32_t ks[2] = {bench_n(b, 16, 100), bench_n(b, 256, 10000)};
    for (int i = 0; i < 2; ++i) {
        char v[64], base[96];
        if (r)
            for (int kind = 0; kind < BAR_COUNT; ++kind)
                raw_chain(b, r, (bar_kind)kind, ks[i]);
        snprintf(v, sizeof(v), "vkc-seq K=%u", ks[i]);
        snprintf(base, sizeof(base), "chain/%s K=%u", bar_names[0], ks[i]);
        bench_vkc_chain(b, b->ctx, v, ks[i], base);
    }
}

/* ---- independent and levels ----------------------------------------------------- */

/* W ranges of one buffer, D levels: level d runs x_w += 1 on every range w.
 * independent = (W = K, D = 1) with dst = src + k instead, see below. */
static void raw_levels(bench *b, raw *r, const char *variant, const char *baseline, uint32_t W,
                       uint32_t D)
{
    char err[512] = "";
    uint32_t iters = bench_n(b, 20, 200), warm = bench_n(b, 2, 10);
    uint64_t stride = range_stride(b);
    raw_pipe p = {0};
    raw_buf x = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    raw_args *args = calloc(W, sizeof(raw_args));
    double *wall = calloc(iters, sizeof(double)), *gpu = calloc(iters, sizeof(double));
    uint32_t *host = calloc(W * stride / 4, 4);
    RTRY(wall && gpu && args && host);
    RTRY(raw_pipe_create(r, bench_inc, bench_inc_size, 1, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, W * stride, false, &x));
    RTRY(raw_upload(r, &x, 0, host, W * stride));
    for (uint32_t w = 0; w < W; ++w) {
        args[w] = (raw_args){.b = {{x.buf, w * stride, TINY_N * 4}}, .n = 1};
        RTRY(raw_prepare(r, &p, &args[w]));
    }
    RTRY(raw_new_cb(r, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
    raw_cmd_ts_begin(r, cb);
    uint32_t push[2] = {TINY_N, 1};
    for (uint32_t d = 0; d < D; ++d) {
        if (d)
            raw_cmd_barrier(r, cb);
        for (uint32_t w = 0; w < W; ++w)
            raw_cmd_dispatch(r, cb, &p, &args[w], push, 1, 1);
    }
    raw_cmd_ts_end(r, cb);
    RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
    bool has_gpu;
    RTRY(raw_replay(r, cb, warm, iters, wall, gpu, &has_gpu));
    RTRY(raw_download(r, &x, 0, host, W * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "%s", baseline);
    rec.barriers = D - 1;
    uint32_t want = (warm + iters) * D;
    for (uint32_t w = 0; w < W && rec.ok; ++w)
        for (uint32_t i = 0; i < TINY_N; ++i)
            if (host[w * stride / 4 + i] != want) {
                rec.ok = false;
                snprintf(rec.note, sizeof(rec.note), "range %u [%u] = %u, want %u", w, i,
                         host[w * stride / 4 + i], want);
                break;
            }
    fill_timing(&rec, wall, gpu, has_gpu, iters, W * D);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(wall);
    free(gpu);
    free(args);
    free(host);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &x);
    raw_pipe_destroy(r, &p);
}

static void vkc_levels(bench *b, const char *variant, const char *baseline, uint32_t W, uint32_t D)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    uint32_t iters = bench_n(b, 20, 200), warm = bench_n(b, 2, 10);
    uint64_t stride = range_stride(b);
    vkc_kernel *k = NULL;
    vkc_buffer *x = NULL;
    vkc_seq *s = NULL;
    double *wall = calloc(iters, sizeof(double));
    uint32_t *host = calloc(W * stride / 4, 4);
    if (!wall || !host) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_inc,
                                              .spirv_size = bench_inc_size,
                                              .workgroup_size = TINY_WG,
                                              .name = "inc"},
                           &k));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = W * stride, .name = "x"}, &x));
    VTRY(vkc_buffer_fill(x, 0, W * stride, 0));
    uint32_t push[2] = {TINY_N, 1};
    VTRY(vkc_seq_create(vctx, NULL, &s));
    for (uint32_t d = 0; d < D; ++d)
        for (uint32_t w = 0; w < W; ++w) {
            vkc_arg arg = {.buffer = x, .offset = w * stride, .size = TINY_N * 4};
            VTRY(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                          .args = &arg,
                                                          .arg_count = 1,
                                                          .push = push,
                                                          .push_size = 8,
                                                          .count = TINY_N}));
        }
    VTRY(vkc_seq_end(s));
    vkc_seq_info info = {0};
    VTRY(vkc_seq_info_get(s, &info));
    for (uint32_t i = 0; i < warm + iters; ++i) {
        vkc_ticket t;
        uint64_t t0 = bench_now_ns();
        VTRY(vkc_seq_submit(s, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        if (i >= warm)
            wall[i - warm] = (double)(bench_now_ns() - t0);
    }
    VTRY(vkc_buffer_download(x, 0, host, W * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "%s", baseline);
    rec.barriers = info.barriers;
    rec.expected_barriers = D;
    uint32_t want = (warm + iters) * D;
    for (uint32_t w = 0; w < W && rec.ok; ++w)
        for (uint32_t i = 0; i < TINY_N; ++i)
            if (host[w * stride / 4 + i] != want) {
                rec.ok = false;
                snprintf(rec.note, sizeof(rec.note), "range %u [%u] = %u, want %u", w, i,
                         host[w * stride / 4 + i], want);
                break;
            }
    fill_timing(&rec, wall, NULL, false, iters, W * D);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(wall);
    free(host);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
}

void scen_levels(bench *b, raw *r)
{
    uint32_t D = bench_n(b, 8, 64);
    uint32_t ws[2] = {bench_n(b, 4, 8), bench_n(b, 16, 32)};
    for (int i = 0; i < 2; ++i) {
        char rv[64], vv[64], base[96];
        snprintf(rv, sizeof(rv), "raw-level-barriers W=%u", ws[i]);
        snprintf(vv, sizeof(vv), "vkc-seq W=%u", ws[i]);
        snprintf(base, sizeof(base), "levels/%s", rv);
        if (r)
            raw_levels(b, r, rv, base, ws[i], D);
        vkc_levels(b, vv, base, ws[i], D);
    }
}

/* Independent: K dispatches, dispatch k writes range k of dst = src + k. */
typedef enum { IND_RAW, IND_VKC_SEQ } ind_kind;

static bool check_ranges(const uint32_t *dst, const uint32_t *src, uint32_t K, uint64_t stride,
                         char *note, size_t n)
{
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t i = 0; i < TINY_N; ++i)
            if (dst[k * stride / 4 + i] != src[i] + k) {
                snprintf(note, n, "range %u [%u] = %u, want %u", k, i, dst[k * stride / 4 + i],
                         src[i] + k);
                return false;
            }
    return true;
}

static void raw_independent(bench *b, raw *r, uint32_t K)
{
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "raw-no-barriers K=%u", K);
    uint32_t iters = bench_n(b, 20, 200), warm = bench_n(b, 2, 10);
    uint64_t stride = range_stride(b);
    raw_pipe p = {0};
    raw_buf src = {0}, dst = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    raw_args *args = calloc(K, sizeof(raw_args));
    double *wall = calloc(iters, sizeof(double)), *gpu = calloc(iters, sizeof(double));
    uint32_t *host = calloc(K * stride / 4, 4), hsrc[TINY_N];
    RTRY(wall && gpu && args && host);
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = bench_pattern(i, 7);
    RTRY(raw_pipe_create(r, bench_offset, bench_offset_size, 2, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, TINY_N * 4, false, &src));
    RTRY(raw_buf_create(r, K * stride, false, &dst));
    RTRY(raw_upload(r, &src, 0, hsrc, sizeof(hsrc)));
    for (uint32_t k = 0; k < K; ++k) {
        args[k] = (raw_args){.b = {{src.buf, 0, VK_WHOLE_SIZE}, {dst.buf, k * stride, TINY_N * 4}},
                             .n = 2};
        RTRY(raw_prepare(r, &p, &args[k]));
    }
    RTRY(raw_new_cb(r, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
    raw_cmd_ts_begin(r, cb);
    for (uint32_t k = 0; k < K; ++k) {
        uint32_t push[2] = {TINY_N, k};
        raw_cmd_dispatch(r, cb, &p, &args[k], push, 1, 1);
    }
    raw_cmd_ts_end(r, cb);
    RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
    bool has_gpu;
    RTRY(raw_replay(r, cb, warm, iters, wall, gpu, &has_gpu));
    RTRY(raw_download(r, &dst, 0, host, K * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "independent/%s", variant);
    rec.x = K;
    snprintf(rec.x_name, sizeof(rec.x_name), "K");
    rec.barriers = 0;
    rec.ok = check_ranges(host, hsrc, K, stride, rec.note, sizeof(rec.note));
    fill_timing(&rec, wall, gpu, has_gpu, iters, K);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(wall);
    free(gpu);
    free(args);
    free(host);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &src);
    raw_buf_destroy(r, &dst);
    raw_pipe_destroy(r, &p);
}

static void vkc_independent(bench *b, uint32_t K)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "vkc-seq K=%u", K);
    uint32_t iters = bench_n(b, 20, 200), warm = bench_n(b, 2, 10);
    uint64_t stride = range_stride(b);
    vkc_kernel *k = NULL;
    vkc_buffer *src = NULL, *dst = NULL;
    vkc_seq *s = NULL;
    double *wall = calloc(iters, sizeof(double));
    uint32_t *host = calloc(K * stride / 4, 4), hsrc[TINY_N];
    if (!wall || !host) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = bench_pattern(i, 7);
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_offset,
                                              .spirv_size = bench_offset_size,
                                              .workgroup_size = TINY_WG,
                                              .name = "offset"},
                           &k));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = TINY_N * 4, .name = "src"}, &src));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = K * stride, .name = "dst"}, &dst));
    VTRY(vkc_buffer_upload(src, 0, hsrc, sizeof(hsrc)));
    VTRY(vkc_seq_create(vctx, NULL, &s));
    for (uint32_t j = 0; j < K; ++j) {
        vkc_arg args[2] = {{.buffer = src},
                           {.buffer = dst, .offset = j * stride, .size = TINY_N * 4}};
        uint32_t push[2] = {TINY_N, j};
        VTRY(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                      .args = args,
                                                      .arg_count = 2,
                                                      .push = push,
                                                      .push_size = 8,
                                                      .count = TINY_N}));
    }
    VTRY(vkc_seq_end(s));
    vkc_seq_info info = {0};
    VTRY(vkc_seq_info_get(s, &info));
    for (uint32_t i = 0; i < warm + iters; ++i) {
        vkc_ticket t;
        uint64_t t0 = bench_now_ns();
        VTRY(vkc_seq_submit(s, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        if (i >= warm)
            wall[i - warm] = (double)(bench_now_ns() - t0);
    }
    VTRY(vkc_buffer_download(dst, 0, host, K * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "independent/raw-no-barriers K=%u", K);
    rec.x = K;
    snprintf(rec.x_name, sizeof(rec.x_name), "K");
    rec.barriers = info.barriers;
    rec.expected_barriers = 0;
    rec.ok = check_ranges(host, hsrc, K, stride, rec.note, sizeof(rec.note));
    fill_timing(&rec, wall, NULL, false, iters, K);
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(wall);
    free(host);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(src);
    vkc_buffer_destroy(dst);
    vkc_kernel_destroy(k);
}

void scen_independent(bench *b, raw *r)
{
    uint32_t K = bench_n(b, 256, 10000);
    if (r)
        raw_independent(b, r, K);
    vkc_independent(b, K);
}

/* ---- descriptors and record: CPU cost per dispatch -------------------------------- */

typedef enum { DS_FRESH_POOL, DS_RESET_POOL, DS_PUSH } ds_kind;

/* N independent dispatches recorded, submitted and waited for per iteration;
 * the descriptor work is what differs. */
static void raw_descriptors(bench *b, raw *r, ds_kind kind, uint32_t N)
{
    static const char *names[] = {"raw-fresh-pool", "raw-reset-pool", "raw-push"};
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "%s", names[kind]);
    if (kind == DS_PUSH && !r->vkCmdPushDescriptorSetKHR) {
        bench_rec rec = bench_rec_init(b, variant);
        rec.skipped = true;
        snprintf(rec.note, sizeof(rec.note), "push descriptors not enabled");
        bench_add(b, &rec);
        return;
    }
    uint32_t iters = bench_n(b, 10, 200), warm = bench_n(b, 2, 10);
    uint64_t stride = range_stride(b);
    raw_pipe p = {0};
    raw_buf src = {0}, dst = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    double *ns = calloc(iters, sizeof(double));
    uint32_t *host = calloc(N * stride / 4, 4), hsrc[TINY_N];
    RTRY(ns && host);
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = bench_pattern(i, 11);
    RTRY(raw_pipe_create(r, bench_offset, bench_offset_size, 2, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, TINY_N * 4, false, &src));
    RTRY(raw_buf_create(r, N * stride, false, &dst));
    RTRY(raw_upload(r, &src, 0, hsrc, sizeof(hsrc)));
    RTRY(raw_new_cb(r, &cb));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    RTRY(raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence"));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * N};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = N,
                                      .poolSizeCount = 1,
                                      .pPoolSizes = &ps};
    if (kind == DS_RESET_POOL)
        RTRY(raw_ok(r, r->vkCreateDescriptorPool(r->dev, &dpi, NULL, &pool),
                    "vkCreateDescriptorPool"));
    for (uint32_t it = 0; it < warm + iters; ++it) {
        uint64_t t0 = bench_now_ns();
        if (kind == DS_FRESH_POOL)
            RTRY(raw_ok(r, r->vkCreateDescriptorPool(r->dev, &dpi, NULL, &pool),
                        "vkCreateDescriptorPool"));
        else if (kind == DS_RESET_POOL)
            RTRY(raw_ok(r, r->vkResetDescriptorPool(r->dev, pool, 0), "vkResetDescriptorPool"));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
        for (uint32_t k = 0; k < N; ++k) {
            raw_args a = {.b = {{src.buf, 0, VK_WHOLE_SIZE}, {dst.buf, k * stride, TINY_N * 4}},
                          .n = 2};
            if (kind != DS_PUSH)
                RTRY(raw_args_set(r, &p, pool, &a));
            uint32_t push[2] = {TINY_N, k + it};
            raw_cmd_dispatch(r, cb, &p, &a, push, 1, 1);
        }
        RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
        RTRY(raw_submit_wait(r, cb, fence, true));
        if (kind == DS_FRESH_POOL) {
            r->vkDestroyDescriptorPool(r->dev, pool, NULL);
            pool = VK_NULL_HANDLE;
        }
        if (it >= warm)
            ns[it - warm] = (double)(bench_now_ns() - t0);
    }
    RTRY(raw_download(r, &dst, 0, host, N * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "descriptors/raw-fresh-pool");
    /* the last iteration added k + (warm + iters - 1) */
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] += warm + iters - 1;
    rec.ok = check_ranges(host, hsrc, N, stride, rec.note, sizeof(rec.note));
    bench_rec_stats(&rec, ns, iters, false);
    rec.per_dispatch_ns = rec.p50_us * 1e3 / N;
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    free(host);
    if (pool)
        r->vkDestroyDescriptorPool(r->dev, pool, NULL);
    if (fence)
        r->vkDestroyFence(r->dev, fence, NULL);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &src);
    raw_buf_destroy(r, &dst);
    raw_pipe_destroy(r, &p);
}

typedef enum { VD_SEQ, VD_IMMEDIATE } vd_kind;

/* The same through vkc: re-record a sequence or enqueue immediately. */
static void vkc_descriptors(bench *b, vkc_context *vctx, const char *variant, vd_kind kind,
                            uint32_t N, const char *baseline)
{
    char err[512] = "";
    uint32_t iters = bench_n(b, 10, 200), warm = bench_n(b, 2, 10);
    uint64_t stride = range_stride(b);
    vkc_kernel *k = NULL;
    vkc_buffer *src = NULL, *dst = NULL;
    vkc_seq *s = NULL;
    double *ns = calloc(iters, sizeof(double));
    uint32_t *host = calloc(N * stride / 4, 4), hsrc[TINY_N];
    if (!ns || !host) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = bench_pattern(i, 11);
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_offset,
                                              .spirv_size = bench_offset_size,
                                              .workgroup_size = TINY_WG,
                                              .name = "offset"},
                           &k));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = TINY_N * 4, .name = "src"}, &src));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = N * stride, .name = "dst"}, &dst));
    VTRY(vkc_buffer_upload(src, 0, hsrc, sizeof(hsrc)));
    if (kind == VD_SEQ)
        VTRY(vkc_seq_create(vctx, NULL, &s));
    for (uint32_t it = 0; it < warm + iters; ++it) {
        uint64_t t0 = bench_now_ns();
        if (kind == VD_SEQ && it > 0)
            VTRY(vkc_seq_begin(s));
        for (uint32_t j = 0; j < N; ++j) {
            vkc_arg args[2] = {{.buffer = src},
                               {.buffer = dst, .offset = j * stride, .size = TINY_N * 4}};
            uint32_t push[2] = {TINY_N, j + it};
            vkc_dispatch_desc d = {.kernel = k,
                                   .args = args,
                                   .arg_count = 2,
                                   .push = push,
                                   .push_size = 8,
                                   .count = TINY_N};
            if (kind == VD_SEQ)
                VTRY(vkc_seq_dispatch(s, &d));
            else
                VTRY(vkc_dispatch(vctx, &d));
        }
        vkc_ticket t;
        if (kind == VD_SEQ) {
            VTRY(vkc_seq_end(s));
            VTRY(vkc_seq_submit(s, &t));
        } else {
            VTRY(vkc_flush(vctx, &t));
        }
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        if (it >= warm)
            ns[it - warm] = (double)(bench_now_ns() - t0);
    }
    VTRY(vkc_buffer_download(dst, 0, host, N * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "%s", baseline);
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] += warm + iters - 1;
    rec.ok = check_ranges(host, hsrc, N, stride, rec.note, sizeof(rec.note));
    bench_rec_stats(&rec, ns, iters, false);
    rec.per_dispatch_ns = rec.p50_us * 1e3 / N;
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    free(host);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(src);
    vkc_buffer_destroy(dst);
    vkc_kernel_destroy(k);
}

void scen_descriptors(bench *b, raw *r)
{
    uint32_t N = bench_n(b, 128, 1024);
    const char *base = "descriptors/raw-fresh-pool";
    if (r)
        for (int kind = 0; kind < 3; ++kind)
            raw_descriptors(b, r, (ds_kind)kind, N);
    vkc_descriptors(b, b->ctx, "vkc-seq-rerecord", VD_SEQ, N, base);
    vkc_descriptors(b, b->ctx, "vkc-immediate", VD_IMMEDIATE, N, base);
    vkc_context *c = NULL;
    vkc_context_desc desc = {.push_descriptors = VKC_OFF};
    vkc_result res = bench_context(b, &desc, &c);
    if (res != VKC_SUCCESS) {
        char err[512];
        bench_fail(b, "vkc-seq-rerecord(pools)", "%s",
                   bench_vkc_err(NULL, res, "vkc_context_create", err, sizeof(err)));
        return;
    }
    vkc_descriptors(b, c, "vkc-seq-rerecord(pools)", VD_SEQ, N, base);
    vkc_context_destroy(c);
}

/* record: CPU ns per recorded dispatch, nothing submitted while timing. */
static void raw_record(bench *b, raw *r, uint32_t N)
{
    char err[512] = "";
    const char *variant = "raw-record";
    uint32_t iters = bench_n(b, 20, 500), warm = bench_n(b, 3, 20);
    uint64_t stride = range_stride(b);
    raw_pipe p = {0};
    raw_buf src = {0}, dst = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    raw_args *args = calloc(N, sizeof(raw_args));
    double *ns = calloc(iters, sizeof(double));
    uint32_t *host = calloc(N * stride / 4, 4), hsrc[TINY_N];
    RTRY(ns && host && args);
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = bench_pattern(i, 13);
    RTRY(raw_pipe_create(r, bench_offset, bench_offset_size, 2, 8, TINY_WG, 0, &p));
    RTRY(raw_buf_create(r, TINY_N * 4, false, &src));
    RTRY(raw_buf_create(r, N * stride, false, &dst));
    RTRY(raw_upload(r, &src, 0, hsrc, sizeof(hsrc)));
    for (uint32_t k = 0; k < N; ++k) {
        args[k] = (raw_args){.b = {{src.buf, 0, VK_WHOLE_SIZE}, {dst.buf, k * stride, TINY_N * 4}},
                             .n = 2};
        RTRY(raw_prepare(r, &p, &args[k]));
    }
    RTRY(raw_new_cb(r, &cb));
    for (uint32_t it = 0; it < warm + iters; ++it) {
        RTRY(raw_ok(r, r->vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer"));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
        uint64_t t0 = bench_now_ns();
        for (uint32_t k = 0; k < N; ++k) {
            uint32_t push[2] = {TINY_N, k};
            raw_cmd_dispatch(r, cb, &p, &args[k], push, 1, 1);
        }
        uint64_t t1 = bench_now_ns();
        RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
        if (it >= warm)
            ns[it - warm] = (double)(t1 - t0) / N; /* ns per dispatch */
    }
    /* the last recording is submitted once and checked */
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    RTRY(raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence"));
    RTRY(raw_submit_wait(r, cb, fence, false));
    RTRY(raw_download(r, &dst, 0, host, N * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "record/raw-record");
    rec.ok = check_ranges(host, hsrc, N, stride, rec.note, sizeof(rec.note));
    bench_rec_stats(&rec, ns, iters, false);
    /* samples are ns per dispatch: report them as such */
    rec.per_dispatch_ns = rec.p50_us * 1e3;
    rec.p50_us = rec.p95_us = rec.p99_us = rec.mean_us = rec.min_us = rec.max_us = -1;
    snprintf(rec.note + strlen(rec.note), sizeof(rec.note) - strlen(rec.note),
             "%sbind+push descriptors+push constants+dispatch", rec.note[0] ? "; " : "");
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    free(host);
    free(args);
    if (fence)
        r->vkDestroyFence(r->dev, fence, NULL);
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    raw_buf_destroy(r, &src);
    raw_buf_destroy(r, &dst);
    raw_pipe_destroy(r, &p);
}

static void vkc_record(bench *b, vd_kind kind, uint32_t N, vkc_context *vctx)
{
    const char *variant = kind == VD_SEQ ? "vkc-seq-dispatch" : "vkc-immediate-enqueue";
    char err[512] = "";
    uint32_t iters = bench_n(b, 20, 500), warm = bench_n(b, 3, 20);
    uint64_t stride = range_stride(b);
    vkc_kernel *k = NULL;
    vkc_buffer *src = NULL, *dst = NULL;
    vkc_seq *s = NULL;
    double *ns = calloc(iters, sizeof(double));
    uint32_t *host = calloc(N * stride / 4, 4), hsrc[TINY_N];
    if (!ns || !host) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = bench_pattern(i, 13);
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_offset,
                                              .spirv_size = bench_offset_size,
                                              .workgroup_size = TINY_WG,
                                              .name = "offset"},
                           &k));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = TINY_N * 4, .name = "src"}, &src));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = N * stride, .name = "dst"}, &dst));
    VTRY(vkc_buffer_upload(src, 0, hsrc, sizeof(hsrc)));
    if (kind == VD_SEQ)
        VTRY(vkc_seq_create(vctx, NULL, &s));
    for (uint32_t it = 0; it < warm + iters; ++it) {
        if (kind == VD_SEQ && it > 0)
            VTRY(vkc_seq_begin(s));
        uint64_t t0 = bench_now_ns();
        for (uint32_t j = 0; j < N; ++j) {
            vkc_arg args[2] = {{.buffer = src},
                               {.buffer = dst, .offset = j * stride, .size = TINY_N * 4}};
            uint32_t push[2] = {TINY_N, j};
            vkc_dispatch_desc d = {.kernel = k,
                                   .args = args,
                                   .arg_count = 2,
                                   .push = push,
                                   .push_size = 8,
                                   .count = TINY_N};
            if (kind == VD_SEQ)
                VTRY(vkc_seq_dispatch(s, &d));
            else
                VTRY(vkc_dispatch(vctx, &d));
        }
        if (kind == VD_SEQ)
            VTRY(vkc_seq_end(s));
        uint64_t t1 = bench_now_ns();
        if (kind == VD_IMMEDIATE) {
            vkc_ticket t;
            VTRY(vkc_flush(vctx, &t));
            VTRY(vkc_wait(vctx, t, UINT64_MAX));
        }
        if (it >= warm)
            ns[it - warm] = (double)(t1 - t0) / N;
    }
    if (kind == VD_SEQ) {
        vkc_ticket t;
        VTRY(vkc_seq_submit(s, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
    }
    VTRY(vkc_buffer_download(dst, 0, host, N * stride));
    bench_rec rec = bench_rec_init(b, variant);
    snprintf(rec.baseline, sizeof(rec.baseline), "record/raw-record");
    rec.ok = check_ranges(host, hsrc, N, stride, rec.note, sizeof(rec.note));
    bench_rec_stats(&rec, ns, iters, false);
    rec.per_dispatch_ns = rec.p50_us * 1e3;
    rec.p50_us = rec.p95_us = rec.p99_us = rec.mean_us = rec.min_us = rec.max_us = -1;
    if (kind == VD_IMMEDIATE)
        snprintf(rec.note + strlen(rec.note), sizeof(rec.note) - strlen(rec.note),
                 "%senqueue only: the flush is outside the timed loop", rec.note[0] ? "; " : "");
    bench_add(b, &rec);
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    free(ns);
    free(host);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(src);
    vkc_buffer_destroy(dst);
    vkc_kernel_destroy(k);
}

void scen_record(bench *b, raw *r)
{
    uint32_t N = bench_n(b, 256, 4096);
    if (r)
        raw_record(b, r, N);
    vkc_record(b, VD_SEQ, N, b->ctx);
    /* The enqueue itself: a batch larger than N, so no flush (record +
     * submit) and no wait for a free batch happens inside the timed loop. */
    vkc_context *c = NULL;
    vkc_context_desc desc = {.batch_size = N + 1};
    vkc_result res = bench_context(b, &desc, &c);
    if (res != VKC_SUCCESS) {
        char err[512];
        bench_fail(b, "vkc-immediate-enqueue", "%s",
                   bench_vkc_err(NULL, res, "vkc_context_create", err, sizeof(err)));
        return;
    }
    vkc_record(b, VD_IMMEDIATE, N, c);
    vkc_context_destroy(c);
}
