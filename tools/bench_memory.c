/* Memory-bound scenarios: bandwidth, fusion, layout.
 *
 * Each submission holds R back-to-back dispatches (a barrier between them, as
 * they write the same buffer) so the round trip is amortised; GB/s count the
 * bytes read and written, from the CPU wall time of submit + wait, the same
 * clock for raw and vkc. Raw variants also report GPU time per dispatch from
 * timestamps. */
#include "bench.h"
#include "bench_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BW_WG 256u
#define CHECK_WINDOW 4096u /* uints checked at each end of an output */

static uint64_t stream_bytes(const bench *b, uint64_t quick_cap)
{
    uint64_t s = 1ull << 30;
    if (b->dev->max_storage_buffer_range && b->dev->max_storage_buffer_range < s)
        s = b->dev->max_storage_buffer_range;
    if (b->dev->max_memory_allocation_size && b->dev->max_memory_allocation_size < s)
        s = b->dev->max_memory_allocation_size;
    if (b->opt.quick && s > quick_cap)
        s = quick_cap;
    return s / (64 * 1024) * (64 * 1024);
}

static void grid_for(const bench *b, uint64_t threads, uint32_t wg, uint32_t g[3])
{
    uint64_t groups = (threads + wg - 1) / wg;
    uint64_t maxx = b->dev->max_workgroup_count[0] ? b->dev->max_workgroup_count[0] : 65535;
    g[2] = 1;
    if (groups <= maxx) {
        g[0] = (uint32_t)(groups ? groups : 1);
        g[1] = 1;
    } else {
        uint64_t y = (groups + maxx - 1) / maxx;
        g[0] = (uint32_t)((groups + y - 1) / y);
        g[1] = (uint32_t)y;
    }
}

/* Time R dispatches per submission on raw Vulkan. */
static bool raw_stream(bench *b, raw *r, raw_pipe *p, raw_args *a, const void *push,
                       const uint32_t g[2], uint32_t R, bench_rec *rec)
{
    uint32_t iters = bench_n(b, 5, 30), warm = bench_n(b, 1, 3);
    VkCommandBuffer cb = VK_NULL_HANDLE;
    double *wall = calloc(iters, sizeof(double)), *gpu = calloc(iters, sizeof(double));
    bool ok = wall && gpu && raw_prepare(r, p, a) && raw_new_cb(r, &cb);
    if (ok) {
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        ok = raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    }
    if (ok) {
        raw_cmd_ts_begin(r, cb);
        for (uint32_t i = 0; i < R; ++i) {
            if (i)
                raw_cmd_barrier(r, cb);
            raw_cmd_dispatch(r, cb, p, a, push, g[0], g[1]);
        }
        raw_cmd_ts_end(r, cb);
        ok = raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    }
    bool has_gpu = false;
    ok = ok && raw_replay(r, cb, warm, iters, wall, gpu, &has_gpu);
    if (ok) {
        if (has_gpu)
            rec->gpu_per_dispatch_ns = bench_median(gpu, iters) / R;
        bench_rec_stats(rec, wall, iters, false);
        rec->per_dispatch_ns = rec->p50_us * 1e3 / R;
    }
    if (cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
    free(wall);
    free(gpu);
    return ok;
}

/* The same through a vkc sequence. */
static vkc_result vkc_stream(bench *b, vkc_context *ctx, const vkc_dispatch_desc *d, uint32_t R,
                             bench_rec *rec)
{
    uint32_t iters = bench_n(b, 5, 30), warm = bench_n(b, 1, 3);
    vkc_seq *s = NULL;
    double *wall = calloc(iters, sizeof(double));
    vkc_result res = wall ? vkc_seq_create(ctx, NULL, &s) : VKC_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; res >= 0 && i < R; ++i)
        res = vkc_seq_dispatch(s, d);
    if (res >= 0)
        res = vkc_seq_end(s);
    vkc_seq_info info = {0};
    if (res >= 0)
        res = vkc_seq_info_get(s, &info);
    for (uint32_t i = 0; res >= 0 && i < warm + iters; ++i) {
        vkc_ticket t;
        uint64_t t0 = bench_now_ns();
        res = vkc_seq_submit(s, &t);
        if (res >= 0)
            res = vkc_wait(ctx, t, UINT64_MAX);
        if (i >= warm)
            wall[i - warm] = (double)(bench_now_ns() - t0);
    }
    if (res >= 0) {
        bench_rec_stats(rec, wall, iters, false);
        rec->per_dispatch_ns = rec->p50_us * 1e3 / R;
        rec->barriers = info.barriers;
    }
    vkc_seq_destroy(s);
    free(wall);
    return res;
}

/* Fill with the bench_init pattern through vkc. */
static vkc_result vkc_pattern(vkc_context *ctx, vkc_kernel *init, vkc_buffer *buf, uint32_t n,
                              uint32_t seed)
{
    vkc_seq *s = NULL;
    vkc_arg arg = {.buffer = buf};
    uint32_t push[2] = {n, seed};
    vkc_result res = vkc_seq_create(ctx, NULL, &s);
    if (res >= 0)
        res = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = init,
                                                       .args = &arg,
                                                       .arg_count = 1,
                                                       .push = push,
                                                       .push_size = 8,
                                                       .count = n});
    if (res >= 0)
        res = vkc_seq_end(s);
    vkc_ticket t;
    if (res >= 0)
        res = vkc_seq_submit(s, &t);
    if (res >= 0)
        res = vkc_wait(ctx, t, UINT64_MAX);
    vkc_seq_destroy(s);
    return res;
}

/* Expected value of output uint u. */
typedef uint32_t (*expect_fn)(uint64_t u, const void *user);

static bool check_window(const uint32_t *got, uint64_t first, uint32_t count, expect_fn f,
                         const void *user, char *note, size_t n)
{
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t want = f(first + i, user);
        if (got[i] != want) {
            snprintf(note, n, "out[%llu] = %u, want %u", (unsigned long long)(first + i), got[i],
                     want);
            return false;
        }
    }
    return true;
}

/* Check both ends of an output of n uints. */
static bool raw_check(raw *r, raw_buf *out, uint64_t n, expect_fn f, const void *user,
                      bench_rec *rec)
{
    uint32_t w = n < CHECK_WINDOW ? (uint32_t)n : CHECK_WINDOW;
    uint32_t got[CHECK_WINDOW];
    for (int end = 0; end < 2; ++end) {
        uint64_t first = end ? n - w : 0;
        if (!raw_download(r, out, first * 4, got, w * 4)) {
            snprintf(rec->note, sizeof(rec->note), "%s", r->err);
            return false;
        }
        if (!check_window(got, first, w, f, user, rec->note, sizeof(rec->note)))
            return false;
    }
    return true;
}

static bool vkc_check(vkc_context *ctx, vkc_buffer *out, uint64_t n, expect_fn f, const void *user,
                      bench_rec *rec)
{
    uint32_t w = n < CHECK_WINDOW ? (uint32_t)n : CHECK_WINDOW;
    uint32_t got[CHECK_WINDOW];
    for (int end = 0; end < 2; ++end) {
        uint64_t first = end ? n - w : 0;
        vkc_result res = vkc_buffer_download(out, first * 4, got, w * 4);
        if (res < 0) {
            bench_vkc_err(ctx, res, "vkc_buffer_download", rec->note, sizeof(rec->note));
            return false;
        }
        if (!check_window(got, first, w, f, user, rec->note, sizeof(rec->note)))
            return false;
    }
    return true;
}

/* ---- bandwidth ---------------------------------------------------------------- */

static uint32_t expect_copy(uint64_t u, const void *user)
{
    (void)user;
    return bench_pattern((uint32_t)u, 1);
}

static uint32_t expect_triad(uint64_t u, const void *user)
{
    (void)user;
    uint32_t i = (uint32_t)u;
    return bench_pattern(i, 1) * bench_pattern(i, 2) + bench_pattern(i, 3);
}

static void set_gbps(bench_rec *rec, double bytes_per_dispatch)
{
    if (rec->per_dispatch_ns > 0)
        rec->gbps = bytes_per_dispatch / rec->per_dispatch_ns;
    if (rec->gpu_per_dispatch_ns > 0)
        snprintf(rec->note + strlen(rec->note), sizeof(rec->note) - strlen(rec->note),
                 "%sGPU %.1f GB/s", rec->note[0] ? "; " : "",
                 bytes_per_dispatch / rec->gpu_per_dispatch_ns);
}

static void raw_bandwidth(bench *b, raw *r, bool triad, uint64_t S, uint32_t R)
{
    char err[512] = "";
    const char *op = triad ? "triad" : "copy";
    uint32_t nbuf = triad ? 4 : 2;
    uint64_t n4 = S / 16;
    raw_pipe init = {0}, p = {0};
    raw_buf bufs[4] = {{0}};
    char base[64];
    snprintf(base, sizeof(base), "bandwidth/raw-%s-1per", op);
    RTRY(raw_pipe_create(r, bench_init, bench_init_size, 1, 8, BW_WG, 0, &init));
    RTRY(triad ? raw_pipe_create(r, bench_triad, bench_triad_size, 4, 4, BW_WG, 0, &p)
               : raw_pipe_create(r, bench_copy, bench_copy_size, 2, 4, BW_WG, 0, &p));
    for (uint32_t i = 0; i < nbuf; ++i) {
        RTRY(raw_buf_create(r, S, false, &bufs[i]));
        if (i + 1 < nbuf)
            RTRY(raw_init_pattern(r, &init, &bufs[i], (uint32_t)(S / 4), i + 1));
    }
    raw_args a = {.n = nbuf};
    for (uint32_t i = 0; i < nbuf; ++i)
        a.b[i] = (VkDescriptorBufferInfo){bufs[i].buf, 0, VK_WHOLE_SIZE};
    uint32_t push = (uint32_t)n4;
    double bytes = (double)S * nbuf;
    uint32_t sm = b->dev->sm_count ? b->dev->sm_count : 1;
    /* one thread per element, then the sweep */
    uint32_t sweep[] = {0, 1, 2, 4, 8, 16, 32};
    for (size_t si = 0; si < sizeof(sweep) / sizeof(sweep[0]); ++si) {
        uint32_t G = sweep[si];
        if (b->opt.quick && G != 0 && G != 1 && G != 4 && G != 16)
            continue;
        char variant[64];
        uint32_t g[3];
        if (G == 0) {
            snprintf(variant, sizeof(variant), "raw-%s-1per", op);
            raw_grid(r, n4, p.wg, &g[0], &g[1]);
        } else {
            snprintf(variant, sizeof(variant), "raw-%s-gs G=%u", op, G);
            g[0] = G * sm;
            g[1] = 1;
        }
        bench_rec rec = bench_rec_init(b, variant);
        snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
        if (G) {
            rec.x = G;
            snprintf(rec.x_name, sizeof(rec.x_name), "groups/SM");
        }
        RTRY(raw_stream(b, r, &p, &a, &push, g, R, &rec));
        rec.ok =
            raw_check(r, &bufs[nbuf - 1], S / 4, triad ? expect_triad : expect_copy, NULL, &rec);
        set_gbps(&rec, bytes);
        if (G && !b->dev->sm_count)
            snprintf(rec.note + strlen(rec.note), sizeof(rec.note) - strlen(rec.note),
                     "; SM count unknown: G groups in all");
        bench_add(b, &rec);
        /* the next variant must not pass on the previous one's output */
        VkCommandBuffer cb;
        RTRY(raw_begin(r, &cb));
        r->vkCmdFillBuffer(cb, bufs[nbuf - 1].buf, 0, VK_WHOLE_SIZE, 0);
        RTRY(raw_end_wait(r, cb));
    }
    goto done;
fail:
    bench_fail(b, triad ? "raw-triad" : "raw-copy", "%s", err);
done:
    for (uint32_t i = 0; i < 4; ++i)
        raw_buf_destroy(r, &bufs[i]);
    raw_pipe_destroy(r, &p);
    raw_pipe_destroy(r, &init);
}

static void vkc_bandwidth(bench *b, bool triad, uint64_t S, uint32_t R)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    const char *op = triad ? "triad" : "copy";
    uint32_t nbuf = triad ? 4 : 2;
    uint64_t n4 = S / 16;
    vkc_kernel *init = NULL, *k = NULL;
    vkc_buffer *bufs[4] = {NULL};
    char base[64];
    snprintf(base, sizeof(base), "bandwidth/raw-%s-1per", op);
    VTRY(vkc_kernel_create(vctx,
                           &(vkc_kernel_desc){.spirv = bench_init,
                                              .spirv_size = bench_init_size,
                                              .workgroup_size = BW_WG,
                                              .name = "init"},
                           &init));
    VTRY(vkc_kernel_create(
        vctx,
        &(vkc_kernel_desc){.spirv = triad ? bench_triad : bench_copy,
                           .spirv_size = triad ? bench_triad_size : bench_copy_size,
                           .workgroup_size = BW_WG,
                           .name = op},
        &k));
    for (uint32_t i = 0; i < nbuf; ++i) {
        VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = op}, &bufs[i]));
        if (i + 1 < nbuf)
            VTRY(vkc_pattern(vctx, init, bufs[i], (uint32_t)(S / 4), i + 1));
    }
    vkc_arg args[4];
    for (uint32_t i = 0; i < nbuf; ++i)
        args[i] = (vkc_arg){.buffer = bufs[i]};
    uint32_t push = (uint32_t)n4;
    double bytes = (double)S * nbuf;
    for (int variant_i = 0; variant_i < 2; ++variant_i) {
        char variant[64];
        vkc_dispatch_desc d = {
            .kernel = k, .args = args, .arg_count = nbuf, .push = &push, .push_size = 4};
        if (variant_i == 0) {
            snprintf(variant, sizeof(variant), "vkc-%s-default", op);
            d.count = n4;
        } else {
            snprintf(variant, sizeof(variant), "vkc-%s-1per", op);
            grid_for(b, n4, BW_WG, d.groups);
        }
        VTRY(vkc_buffer_fill(bufs[nbuf - 1], 0, S, 0));
        bench_rec rec = bench_rec_init(b, variant);
        snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
        if (variant_i == 0 && b->feat.groups_per_sm) {
            rec.x = b->feat.groups_per_sm; /* where vkc's sizing sits in the sweep */
            snprintf(rec.x_name, sizeof(rec.x_name), "groups/SM");
        }
        vkc_result res = vkc_stream(b, vctx, &d, R, &rec);
        if (res < 0) {
            bench_fail(b, variant, "%s", bench_vkc_err(vctx, res, "vkc_seq", err, sizeof(err)));
            continue;
        }
        rec.ok =
            vkc_check(vctx, bufs[nbuf - 1], S / 4, triad ? expect_triad : expect_copy, NULL, &rec);
        set_gbps(&rec, bytes);
        bench_add(b, &rec);
    }
    goto done;
fail:
    bench_fail(b, triad ? "vkc-triad" : "vkc-copy", "%s", err);
done:
    for (uint32_t i = 0; i < 4; ++i)
        vkc_buffer_destroy(bufs[i]);
    vkc_kernel_destroy(k);
    vkc_kernel_destroy(init);
}

void scen_bandwidth(bench *b, raw *r)
{
    uint64_t S = stream_bytes(b, 16u << 20);
    uint32_t R = bench_n(b, 2, 8);
    bench_progress(b, "%llu MiB per buffer", (unsigned long long)(S >> 20));
    for (int triad = 0; triad < 2; ++triad) {
        if (r)
            raw_bandwidth(b, r, triad, S, R);
        vkc_bandwidth(b, triad, S, R);
    }
}

/* ---- fusion --------------------------------------------------------------------- */

typedef struct fusion_ref {
    uint32_t steps;  /* per submission */
    uint32_t rounds; /* submissions */
} fusion_ref;

static uint32_t expect_fusion(uint64_t u, const void *user)
{
    const fusion_ref *f = user;
    uint32_t v = bench_pattern((uint32_t)u, 5);
    for (uint32_t r = 0; r < f->rounds; ++r)
        for (uint32_t s = 0; s < f->steps; ++s)
            v = v * 3u + (s + 1u);
    return v;
}

static const char fused_glsl[] =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform Push { uint n; } pc;\n"
    "void main() {\n"
    "    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {\n"
    "        uint v = x[i];\n"
    "        for (uint s = 0u; s < uint(STEPS); ++s)\n"
    "            v = v * 3u + (s + 1u);\n"
    "        x[i] = v;\n"
    "    }\n"
    "}\n";

static void fusion_one(bench *b, raw *r, uint32_t L, uint64_t S)
{
    char err[512] = "", variant[64], base[64];
    uint32_t n = (uint32_t)(S / 4);
    uint32_t iters = bench_n(b, 5, 30), warm = bench_n(b, 1, 3);
    snprintf(base, sizeof(base), "fusion/raw-unfused L=%u", L);
    vkc_context *vctx = b->ctx;
    raw_pipe init = {0}, step = {0}, fused = {0};
    raw_buf x = {0};
    vkc_kernel *vinit = NULL, *vstep = NULL, *vfused = NULL;
    vkc_buffer *vx = NULL;
    vkc_seq *s = NULL;
    fusion_ref ref = {.steps = L, .rounds = warm + iters};
    uint32_t gx, gy;
    if (r) {
        snprintf(variant, sizeof(variant), "raw");
        RTRY(raw_pipe_create(r, bench_init, bench_init_size, 1, 8, BW_WG, 0, &init));
        RTRY(raw_pipe_create(r, bench_step, bench_step_size, 1, 8, BW_WG, 0, &step));
        RTRY(raw_pipe_create(r, bench_fused, bench_fused_size, 1, 4, BW_WG, L, &fused));
        RTRY(raw_buf_create(r, S, false, &x));
        raw_grid(r, n, BW_WG, &gx, &gy);
        raw_args a = {.b = {{x.buf, 0, VK_WHOLE_SIZE}}, .n = 1};
        RTRY(raw_prepare(r, &step, &a));
        for (int f = 0; f < 2; ++f) {
            snprintf(variant, sizeof(variant), "raw-%s L=%u", f ? "fused" : "unfused", L);
            RTRY(raw_init_pattern(r, &init, &x, n, 5));
            VkCommandBuffer cb = VK_NULL_HANDLE;
            double *wall = calloc(iters, sizeof(double)), *gpu = calloc(iters, sizeof(double));
            bool has_gpu = false;
            bool ok = wall && gpu && raw_new_cb(r, &cb);
            raw_args af = a;
            if (ok && f && !r->vkCmdPushDescriptorSetKHR) {
                af.set = VK_NULL_HANDLE;
                ok = raw_prepare(r, &fused, &af);
            }
            if (ok) {
                VkCommandBufferBeginInfo bi = {.sType =
                                                   VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
                ok = raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
                raw_cmd_ts_begin(r, cb);
                if (f) {
                    raw_cmd_dispatch(r, cb, &fused, &af, &n, gx, gy);
                } else {
                    for (uint32_t j = 0; j < L; ++j) {
                        uint32_t push[2] = {n, j + 1};
                        if (j)
                            raw_cmd_barrier(r, cb);
                        raw_cmd_dispatch(r, cb, &step, &a, push, gx, gy);
                    }
                }
                raw_cmd_ts_end(r, cb);
                ok = ok && raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer");
            }
            ok = ok && raw_replay(r, cb, warm, iters, wall, gpu, &has_gpu);
            if (cb)
                r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb);
            bench_rec rec = bench_rec_init(b, variant);
            if (ok) {
                snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
                rec.x = L;
                snprintf(rec.x_name, sizeof(rec.x_name), "steps");
                bench_rec_stats(&rec, wall, iters, false);
                if (has_gpu)
                    snprintf(rec.note, sizeof(rec.note), "GPU %.1f us",
                             bench_median(gpu, iters) / 1e3);
                rec.ok = raw_check(r, &x, n, expect_fusion, &ref, &rec);
                bench_add(b, &rec);
            }
            free(wall);
            free(gpu);
            RTRY(ok);
        }
    }
    goto vkc_part;
fail:
    bench_fail(b, variant, "%s", err);
vkc_part:
    snprintf(variant, sizeof(variant), "vkc");
    VTRY_TO(vfail, vkc_kernel_create(vctx,
                                     &(vkc_kernel_desc){.spirv = bench_init,
                                                        .spirv_size = bench_init_size,
                                                        .workgroup_size = BW_WG,
                                                        .name = "init"},
                                     &vinit));
    VTRY_TO(vfail, vkc_kernel_create(vctx,
                                     &(vkc_kernel_desc){.spirv = bench_step,
                                                        .spirv_size = bench_step_size,
                                                        .workgroup_size = BW_WG,
                                                        .name = "step"},
                                     &vstep));
    char define[32];
    snprintf(define, sizeof(define), "STEPS=%u", L);
    const char *defs[1] = {define};
    VTRY_TO(vfail, vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = "x"}, &vx));
    vkc_arg arg = {.buffer = vx};
    for (int f = 0; f < 2; ++f) {
        snprintf(variant, sizeof(variant), "vkc-%s L=%u", f ? "fused" : "unfused", L);
        if (f)
            VTRY_TO(vfail, vkc_kernel_create_glsl(vctx,
                                                  &(vkc_glsl_desc){.source = fused_glsl,
                                                                   .name = "fused",
                                                                   .defines = defs,
                                                                   .define_count = 1,
                                                                   .workgroup_size = BW_WG},
                                                  &vfused));
        VTRY_TO(vfail, vkc_pattern(vctx, vinit, vx, n, 5));
        VTRY_TO(vfail, vkc_seq_create(vctx, NULL, &s));
        if (f) {
            VTRY_TO(vfail, vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = vfused,
                                                                    .args = &arg,
                                                                    .arg_count = 1,
                                                                    .push = &n,
                                                                    .push_size = 4,
                                                                    .count = n}));
        } else {
            for (uint32_t j = 0; j < L; ++j) {
                uint32_t push[2] = {n, j + 1};
                VTRY_TO(vfail, vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = vstep,
                                                                        .args = &arg,
                                                                        .arg_count = 1,
                                                                        .push = push,
                                                                        .push_size = 8,
                                                                        .count = n}));
            }
        }
        VTRY_TO(vfail, vkc_seq_end(s));
        double wall[64];
        uint32_t it = iters < 64 ? iters : 64;
        for (uint32_t i = 0; i < warm + it; ++i) {
            vkc_ticket t;
            uint64_t t0 = bench_now_ns();
            VTRY_TO(vfail, vkc_seq_submit(s, &t));
            VTRY_TO(vfail, vkc_wait(vctx, t, UINT64_MAX));
            if (i >= warm)
                wall[i - warm] = (double)(bench_now_ns() - t0);
        }
        vkc_seq_destroy(s);
        s = NULL;
        bench_rec rec = bench_rec_init(b, variant);
        snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
        rec.x = L;
        snprintf(rec.x_name, sizeof(rec.x_name), "steps");
        bench_rec_stats(&rec, wall, it, false);
        fusion_ref vref = {.steps = L, .rounds = warm + it};
        rec.ok = vkc_check(vctx, vx, n, expect_fusion, &vref, &rec);
        bench_add(b, &rec);
    }
    goto done;
vfail:
    bench_fail(b, variant, "%s", err);
done:
    vkc_seq_destroy(s);
    vkc_buffer_destroy(vx);
    vkc_kernel_destroy(vfused);
    vkc_kernel_destroy(vstep);
    vkc_kernel_destroy(vinit);
    if (r) {
        raw_buf_destroy(r, &x);
        raw_pipe_destroy(r, &init);
        raw_pipe_destroy(r, &step);
        raw_pipe_destroy(r, &fused);
    }
}

void scen_fusion(bench *b, raw *r)
{
    uint64_t S = stream_bytes(b, 4u << 20);
    bench_progress(b, "%llu MiB", (unsigned long long)(S >> 20));
    for (uint32_t L = 1; L <= 16; L *= 2)
        fusion_one(b, r, L, S);
}

/* ---- layout ----------------------------------------------------------------------- */

static uint32_t expect_aos(uint64_t u, const void *user)
{
    (void)user;
    return bench_pattern((uint32_t)(u * 8 + 2), 9) * 3u + 1u;
}

static uint32_t expect_soa(uint64_t u, const void *user)
{
    (void)user;
    return bench_pattern((uint32_t)u, 9) * 3u + 1u;
}

void scen_layout(bench *b, raw *r)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64] = "raw";
    uint64_t S = stream_bytes(b, 16u << 20); /* the AoS buffer */
    uint32_t N = (uint32_t)(S / 32), R = bench_n(b, 2, 8);
    const char *base = "layout/raw-aos";
    raw_pipe init = {0}, aos = {0}, soa = {0};
    raw_buf in_aos = {0}, in_soa = {0}, out = {0};
    vkc_kernel *vinit = NULL, *vaos = NULL, *vsoa = NULL;
    vkc_buffer *vin_aos = NULL, *vin_soa = NULL, *vout = NULL;
    double bytes = (double)N * 8; /* useful bytes: 4 read + 4 written per record */
    if (r) {
        RTRY(raw_pipe_create(r, bench_init, bench_init_size, 1, 8, BW_WG, 0, &init));
        RTRY(raw_pipe_create(r, bench_aos, bench_aos_size, 2, 4, BW_WG, 0, &aos));
        RTRY(raw_pipe_create(r, bench_soa, bench_soa_size, 2, 4, BW_WG, 0, &soa));
        RTRY(raw_buf_create(r, S, false, &in_aos));
        RTRY(raw_buf_create(r, (uint64_t)N * 4, false, &in_soa));
        RTRY(raw_buf_create(r, (uint64_t)N * 4, false, &out));
        RTRY(raw_init_pattern(r, &init, &in_aos, N * 8, 9));
        RTRY(raw_init_pattern(r, &init, &in_soa, N, 9));
        for (int v = 0; v < 2; ++v) {
            snprintf(variant, sizeof(variant), "raw-%s", v ? "soa" : "aos");
            raw_args a = {
                .b = {{v ? in_soa.buf : in_aos.buf, 0, VK_WHOLE_SIZE}, {out.buf, 0, VK_WHOLE_SIZE}},
                .n = 2};
            uint32_t g[3] = {N / BW_WG + 1, 1, 1};
            if (g[0] > r->max_groups_x)
                g[0] = r->max_groups_x; /* grid-stride covers the rest */
            bench_rec rec = bench_rec_init(b, variant);
            snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
            RTRY(raw_stream(b, r, v ? &soa : &aos, &a, &N, g, R, &rec));
            rec.ok = raw_check(r, &out, N, v ? expect_soa : expect_aos, NULL, &rec);
            set_gbps(&rec, bytes);
            bench_add(b, &rec);
        }
    }
    goto vkc_part;
fail:
    bench_fail(b, variant, "%s", err);
vkc_part:
    snprintf(variant, sizeof(variant), "vkc");
    VTRY_TO(vfail, vkc_kernel_create(vctx,
                                     &(vkc_kernel_desc){.spirv = bench_init,
                                                        .spirv_size = bench_init_size,
                                                        .workgroup_size = BW_WG,
                                                        .name = "init"},
                                     &vinit));
    VTRY_TO(vfail, vkc_kernel_create(vctx,
                                     &(vkc_kernel_desc){.spirv = bench_aos,
                                                        .spirv_size = bench_aos_size,
                                                        .workgroup_size = BW_WG,
                                                        .name = "aos"},
                                     &vaos));
    VTRY_TO(vfail, vkc_kernel_create(vctx,
                                     &(vkc_kernel_desc){.spirv = bench_soa,
                                                        .spirv_size = bench_soa_size,
                                                        .workgroup_size = BW_WG,
                                                        .name = "soa"},
                                     &vsoa));
    VTRY_TO(vfail, vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = "aos"}, &vin_aos));
    VTRY_TO(vfail, vkc_buffer_create(
                       vctx, &(vkc_buffer_desc){.size = (uint64_t)N * 4, .name = "soa"}, &vin_soa));
    VTRY_TO(vfail, vkc_buffer_create(
                       vctx, &(vkc_buffer_desc){.size = (uint64_t)N * 4, .name = "out"}, &vout));
    VTRY_TO(vfail, vkc_pattern(vctx, vinit, vin_aos, N * 8, 9));
    VTRY_TO(vfail, vkc_pattern(vctx, vinit, vin_soa, N, 9));
    for (int v = 0; v < 2; ++v) {
        snprintf(variant, sizeof(variant), "vkc-%s", v ? "soa" : "aos");
        vkc_arg args[2] = {{.buffer = v ? vin_soa : vin_aos}, {.buffer = vout}};
        vkc_dispatch_desc d = {.kernel = v ? vsoa : vaos,
                               .args = args,
                               .arg_count = 2,
                               .push = &N,
                               .push_size = 4,
                               .count = N};
        bench_rec rec = bench_rec_init(b, variant);
        snprintf(rec.baseline, sizeof(rec.baseline), "%s", base);
        VTRY_TO(vfail, vkc_stream(b, vctx, &d, R, &rec));
        rec.ok = vkc_check(vctx, vout, N, v ? expect_soa : expect_aos, NULL, &rec);
        set_gbps(&rec, bytes);
        snprintf(rec.note + strlen(rec.note), sizeof(rec.note) - strlen(rec.note),
                 "%sGB/s of useful bytes", rec.note[0] ? "; " : "");
        bench_add(b, &rec);
    }
    goto done;
vfail:
    bench_fail(b, variant, "%s", err);
done:
    vkc_buffer_destroy(vin_aos);
    vkc_buffer_destroy(vin_soa);
    vkc_buffer_destroy(vout);
    vkc_kernel_destroy(vinit);
    vkc_kernel_destroy(vaos);
    vkc_kernel_destroy(vsoa);
    if (r) {
        raw_buf_destroy(r, &in_aos);
        raw_buf_destroy(r, &in_soa);
        raw_buf_destroy(r, &out);
        raw_pipe_destroy(r, &init);
        raw_pipe_destroy(r, &aos);
        raw_pipe_destroy(r, &soa);
    }
}
