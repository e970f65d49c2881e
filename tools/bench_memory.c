/* Memory-bound scenarios: bandwidth, fusion, layout.
 *
 * Each submission holds R back-to-back dispatches (a barrier between them, as
 * they write the same buffer) so the round trip is amortised; GB/s count the
 * bytes read and written, from the CPU wall time of submit + wait, the same
 * clock for raw and vkc. Raw variants also report GPU time per dispatch from
 * timestamps. */
#include "bench.h"
#include "bench_shaders.h"

#include <math.h>
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

/* R dispatches of one pipeline, a barrier between them (they share buffers). */
typedef struct stream_rec {
    raw_pipe *p;
    raw_args *a;
    const void *push;
    const uint32_t *g;
    uint32_t R;
} stream_rec;

static void record_stream(raw *r, VkCommandBuffer cb, void *user)
{
    const stream_rec *s = user;
    for (uint32_t i = 0; i < s->R; ++i) {
        if (i)
            raw_cmd_barrier(r, cb);
        raw_cmd_dispatch(r, cb, s->p, s->a, s->push, s->g[0], s->g[1]);
    }
}

/* Time R dispatches per submission on raw Vulkan. */
static bool raw_stream(bench *b, raw *r, raw_pipe *p, raw_args *a, const void *push,
                       const uint32_t g[2], uint32_t R, bench_rec *rec)
{
    bench_times tm;
    bool ok = bench_times_init(&tm, bench_n(b, 1, 3), bench_n(b, 5, 30)) && raw_prepare(r, p, a) &&
              raw_time_replay(r, record_stream, &(stream_rec){p, a, push, g, R}, &tm);
    if (ok)
        bench_times_rec(&tm, rec, R);
    bench_times_free(&tm);
    return ok;
}

/* The same through a vkc sequence. */
static vkc_result vkc_stream(bench *b, vkc_context *ctx, const vkc_dispatch_desc *d, uint32_t R,
                             bench_rec *rec)
{
    bench_times tm;
    vkc_seq_info info = {0};
    vkc_result res = bench_times_init(&tm, bench_n(b, 1, 3), bench_n(b, 5, 30))
                         ? bench_seq_time(ctx, d, 1, R, &tm, &info)
                         : VKC_ERROR_OUT_OF_HOST_MEMORY;
    if (res >= 0) {
        bench_times_rec(&tm, rec, R);
        rec->barriers = info.barriers;
    }
    bench_times_free(&tm);
    return res;
}

/* Fill with the bench_init pattern through vkc. */
static vkc_result vkc_pattern(vkc_context *ctx, vkc_kernel *init, vkc_buffer *buf, uint32_t n,
                              uint32_t seed)
{
    vkc_arg arg = {.buffer = buf};
    uint32_t push[2] = {n, seed};
    vkc_dispatch_desc d = {
        .kernel = init, .args = &arg, .arg_count = 1, .push = push, .push_size = 8, .count = n};
    return bench_seq_once(ctx, &d, 1);
}

/* Expected value of output uint u. */
typedef uint32_t (*expect_fn)(uint64_t u, const void *user);

/* An output buffer, raw (r set) or vkc. */
typedef struct out_buf {
    raw *r;
    raw_buf *rb;
    vkc_context *ctx;
    vkc_buffer *vb;
} out_buf;

/* Read `count` uints from uint `first` on; false with the reason in the note. */
static bool fetch(const out_buf *o, uint64_t first, uint32_t count, uint32_t *got, bench_rec *rec)
{
    if (o->r) {
        if (raw_download(o->r, o->rb, first * 4, got, count * 4))
            return true;
        snprintf(rec->note, sizeof(rec->note), "%s", o->r->err);
        return false;
    }
    vkc_result res = vkc_buffer_download(o->vb, first * 4, got, count * 4);
    if (res >= 0)
        return true;
    bench_vkc_err(o->ctx, res, "vkc_buffer_download", rec->note, sizeof(rec->note));
    return false;
}

/* Check both ends of an output of n uints. */
static bool check_ends(const out_buf *o, uint64_t n, expect_fn f, const void *user, bench_rec *rec)
{
    uint32_t w = n < CHECK_WINDOW ? (uint32_t)n : CHECK_WINDOW;
    uint32_t got[CHECK_WINDOW];
    for (int end = 0; end < 2; ++end) {
        uint64_t first = end ? n - w : 0;
        if (!fetch(o, first, w, got, rec))
            return false;
        for (uint32_t i = 0; i < w; ++i) {
            uint32_t want = f(first + i, user);
            if (got[i] != want) {
                snprintf(rec->note, sizeof(rec->note), "out[%llu] = %u, want %u",
                         (unsigned long long)(first + i), got[i], want);
                return false;
            }
        }
    }
    return true;
}

static bool raw_check(raw *r, raw_buf *out, uint64_t n, expect_fn f, const void *user,
                      bench_rec *rec)
{
    return check_ends(&(out_buf){.r = r, .rb = out}, n, f, user, rec);
}

static bool vkc_check(vkc_context *ctx, vkc_buffer *out, uint64_t n, expect_fn f, const void *user,
                      bench_rec *rec)
{
    return check_ends(&(out_buf){.ctx = ctx, .vb = out}, n, f, user, rec);
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
        bench_note(rec, "GPU %.1f GB/s", bytes_per_dispatch / rec->gpu_per_dispatch_ns);
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
    RTRY(raw_pipe_create(r, BENCH_SPV(init), 1, 8, BW_WG, 0, &init));
    RTRY(triad ? raw_pipe_create(r, BENCH_SPV(triad), 4, 4, BW_WG, 0, &p)
               : raw_pipe_create(r, BENCH_SPV(copy), 2, 4, BW_WG, 0, &p));
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
        bench_rec rec = bench_rec_init(b, variant, base);
        if (G)
            bench_rec_sweep(&rec, G, "groups/SM");
        RTRY(raw_stream(b, r, &p, &a, &push, g, R, &rec));
        rec.ok =
            raw_check(r, &bufs[nbuf - 1], S / 4, triad ? expect_triad : expect_copy, NULL, &rec);
        set_gbps(&rec, bytes);
        if (G && !b->dev->sm_count)
            bench_note(&rec, "SM count unknown: G groups in all");
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

/* Through context vctx: the default grid, and unless `tag` is given one
 * thread per element; the rows are named vkc-<op>-default[-tag]. */
static void vkc_bandwidth(bench *b, vkc_context *vctx, const char *tag, bool triad, uint64_t S,
                          uint32_t R)
{
    char err[512] = "";
    const char *op = triad ? "triad" : "copy";
    uint32_t nbuf = triad ? 4 : 2;
    uint64_t n4 = S / 16;
    vkc_kernel *init = NULL, *k = NULL;
    vkc_buffer *bufs[4] = {NULL};
    char base[64];
    snprintf(base, sizeof(base), "bandwidth/raw-%s-1per", op);
    VTRY(bench_kernel(vctx, BENCH_SPV(init), BW_WG, "init", &init));
    VTRY(triad ? bench_kernel(vctx, BENCH_SPV(triad), BW_WG, op, &k)
               : bench_kernel(vctx, BENCH_SPV(copy), BW_WG, op, &k));
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
    for (int variant_i = 0; variant_i < (tag ? 1 : 2); ++variant_i) {
        char variant[64];
        vkc_dispatch_desc d = {
            .kernel = k, .args = args, .arg_count = nbuf, .push = &push, .push_size = 4};
        if (variant_i == 0) {
            snprintf(variant, sizeof(variant), "vkc-%s-default%s%s", op, tag ? "-" : "",
                     tag ? tag : "");
            d.count = n4;
        } else {
            snprintf(variant, sizeof(variant), "vkc-%s-1per", op);
            grid_for(b, n4, BW_WG, d.groups);
        }
        VTRY(vkc_buffer_fill(bufs[nbuf - 1], 0, S, 0));
        bench_rec rec = bench_rec_init(b, variant, base);
        if (variant_i == 0 && b->feat.groups_per_sm) /* where vkc's sizing sits in the sweep */
            bench_rec_sweep(&rec, b->feat.groups_per_sm, "groups/SM");
        vkc_stats s0, s1;
        VTRY(vkc_context_stats(vctx, &s0));
        vkc_result res = vkc_stream(b, vctx, &d, R, &rec);
        if (res < 0) {
            bench_fail(b, variant, "%s", bench_vkc_err(vctx, res, "vkc_seq", err, sizeof(err)));
            continue;
        }
        VTRY(vkc_context_stats(vctx, &s1));
        rec.ok =
            vkc_check(vctx, bufs[nbuf - 1], S / 4, triad ? expect_triad : expect_copy, NULL, &rec);
        set_gbps(&rec, bytes);
        if (s1.long_waits > s0.long_waits) /* the marker wait past its spin (vkc_stats) */
            bench_note(&rec, "%llu long waits: %llu guessed, %llu ended in the spin",
                       (unsigned long long)(s1.long_waits - s0.long_waits),
                       (unsigned long long)(s1.long_waits_guessed - s0.long_waits_guessed),
                       (unsigned long long)(s1.long_waits_spun - s0.long_waits_spun));
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
    /* The wait's guess off (VKC_WAIT_PREDICT=0), on the same device: an
     * 8-dispatch triad of 1 GiB buffers outlasts the marker wait's 10 ms
     * spin on an H100. */
    vkc_context *nopredict = bench_twin_env(b, "VKC_WAIT_PREDICT", "0", "vkc-default-nopredict");
    for (int triad = 0; triad < 2; ++triad) {
        if (r)
            raw_bandwidth(b, r, triad, S, R);
        vkc_bandwidth(b, b->ctx, NULL, triad, S, R);
        if (nopredict)
            vkc_bandwidth(b, nopredict, "nopredict", triad, S, R);
    }
    vkc_context_destroy(nopredict);
}

/* ---- fusion --------------------------------------------------------------------- */

#define FUSION_MAX_L 16u

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

/* L steps of x = x * 3 + (step + 1): L dispatches of step, or one fused. */
typedef struct fusion_raw {
    raw_pipe *step, *fused;
    raw_args *a, *af;
    uint32_t n, L, gx, gy;
    bool fuse;
} fusion_raw;

static void record_fusion(raw *r, VkCommandBuffer cb, void *user)
{
    const fusion_raw *f = user;
    if (f->fuse) {
        raw_cmd_dispatch(r, cb, f->fused, f->af, &f->n, f->gx, f->gy);
        return;
    }
    for (uint32_t j = 0; j < f->L; ++j) {
        uint32_t push[2] = {f->n, j + 1};
        if (j)
            raw_cmd_barrier(r, cb);
        raw_cmd_dispatch(r, cb, f->step, f->a, push, f->gx, f->gy);
    }
}

/* One fusion record: the chain's time, its output checked against the CPU. */
static void fusion_add(bench *b, const char *variant, const char *base, const bench_times *tm,
                       uint32_t L, const out_buf *out, uint32_t n)
{
    bench_rec rec = bench_rec_init(b, variant, base);
    bench_rec_sweep(&rec, L, "steps");
    bench_rec_stats(&rec, tm->wall, tm->iters, false);
    if (tm->has_gpu)
        bench_note(&rec, "GPU %.1f us", bench_median(tm->gpu, tm->iters) / 1e3);
    fusion_ref ref = {.steps = L, .rounds = tm->warm + tm->iters};
    rec.ok = check_ends(out, n, expect_fusion, &ref, &rec);
    bench_add(b, &rec);
}

static void raw_fusion(bench *b, raw *r, uint32_t L, uint64_t S, const char *base)
{
    char err[512] = "", variant[64] = "raw";
    uint32_t n = (uint32_t)(S / 4);
    raw_pipe init = {0}, step = {0}, fused = {0};
    raw_buf x = {0};
    bench_times tm = {0};
    fusion_raw f = {.step = &step, .fused = &fused, .n = n, .L = L};
    RTRY(raw_pipe_create(r, BENCH_SPV(init), 1, 8, BW_WG, 0, &init));
    RTRY(raw_pipe_create(r, BENCH_SPV(step), 1, 8, BW_WG, 0, &step));
    RTRY(raw_pipe_create(r, BENCH_SPV(fused), 1, 4, BW_WG, L, &fused));
    RTRY(raw_buf_create(r, S, false, &x));
    raw_grid(r, n, BW_WG, &f.gx, &f.gy);
    raw_args a = {.b = {{x.buf, 0, VK_WHOLE_SIZE}}, .n = 1}, af = a;
    RTRY(raw_prepare(r, &step, &a));
    if (!r->vkCmdPushDescriptorSetKHR) {
        af.set = VK_NULL_HANDLE; /* a set of the fused pipeline's own layout */
        RTRY(raw_prepare(r, &fused, &af));
    }
    f.a = &a;
    f.af = &af;
    for (int fuse = 0; fuse < 2; ++fuse) {
        snprintf(variant, sizeof(variant), "raw-%s L=%u", fuse ? "fused" : "unfused", L);
        f.fuse = fuse;
        RTRY(raw_init_pattern(r, &init, &x, n, 5));
        MTRY(bench_times_init(&tm, bench_n(b, 1, 3), bench_n(b, 5, 30)));
        RTRY(raw_time_replay(r, record_fusion, &f, &tm));
        fusion_add(b, variant, base, &tm, L, &(out_buf){.r = r, .rb = &x}, n);
        bench_times_free(&tm);
    }
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    bench_times_free(&tm);
    raw_buf_destroy(r, &x);
    raw_pipe_destroy(r, &init);
    raw_pipe_destroy(r, &step);
    raw_pipe_destroy(r, &fused);
}

static void vkc_fusion(bench *b, uint32_t L, uint64_t S, const char *base)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64] = "vkc";
    uint32_t n = (uint32_t)(S / 4);
    vkc_kernel *init = NULL, *step = NULL, *fused = NULL;
    vkc_buffer *x = NULL;
    bench_times tm = {0};
    VTRY(bench_kernel(vctx, BENCH_SPV(init), BW_WG, "init", &init));
    VTRY(bench_kernel(vctx, BENCH_SPV(step), BW_WG, "step", &step));
    char define[32];
    snprintf(define, sizeof(define), "STEPS=%u", L);
    const char *defs[1] = {define};
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = "x"}, &x));
    vkc_arg arg = {.buffer = x};
    uint32_t push[FUSION_MAX_L][2];
    vkc_dispatch_desc descs[FUSION_MAX_L];
    for (uint32_t j = 0; j < L; ++j) {
        push[j][0] = n;
        push[j][1] = j + 1;
        descs[j] = (vkc_dispatch_desc){.kernel = step,
                                       .args = &arg,
                                       .arg_count = 1,
                                       .push = push[j],
                                       .push_size = 8,
                                       .count = n};
    }
    for (int fuse = 0; fuse < 2; ++fuse) {
        snprintf(variant, sizeof(variant), "vkc-%s L=%u", fuse ? "fused" : "unfused", L);
        if (fuse) {
            VTRY(vkc_kernel_create_glsl(vctx,
                                        &(vkc_glsl_desc){.source = fused_glsl,
                                                         .name = "fused",
                                                         .defines = defs,
                                                         .define_count = 1,
                                                         .workgroup_size = BW_WG},
                                        &fused));
            descs[0] = (vkc_dispatch_desc){.kernel = fused,
                                           .args = &arg,
                                           .arg_count = 1,
                                           .push = &n,
                                           .push_size = 4,
                                           .count = n};
        }
        VTRY(vkc_pattern(vctx, init, x, n, 5));
        uint32_t iters = bench_n(b, 5, 30);
        MTRY(bench_times_init(&tm, bench_n(b, 1, 3), iters < 64 ? iters : 64));
        VTRY(bench_seq_time(vctx, descs, fuse ? 1 : L, fuse ? 1 : L, &tm, NULL));
        fusion_add(b, variant, base, &tm, L, &(out_buf){.ctx = vctx, .vb = x}, n);
        bench_times_free(&tm);
    }
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    bench_times_free(&tm);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(fused);
    vkc_kernel_destroy(step);
    vkc_kernel_destroy(init);
}

/* ---- fusion: torch_ref.py's chain ------------------------------------------------------ */

/* y = x, then L times y = y * 0.5 + (s + 1): float, out of place, as
 * bench/cuda/torch_ref.py runs it under torch.compile. The input stands in
 * for torch.rand: a fixed pattern in [0, 1). */
static float chain_input(uint64_t i)
{
    return (float)((uint32_t)(i * 2654435761u) >> 8) * (1.0f / 16777216.0f);
}

/* Ends of y (CHECK_WINDOW floats each) against the chain in double: one
 * rounding per step stays far inside the tolerance. */
static void chain_check(const float *lo, const float *hi, uint64_t n, uint32_t L, bench_rec *rec)
{
    for (uint32_t k = 0; k < 2 * CHECK_WINDOW; ++k) {
        uint64_t i = k < CHECK_WINDOW ? k : n - 2 * CHECK_WINDOW + k;
        double want = chain_input(i);
        for (uint32_t s = 0; s < L; ++s)
            want = want * 0.5 + (s + 1);
        double got = k < CHECK_WINDOW ? lo[k] : hi[k - CHECK_WINDOW];
        if (fabs(got - want) > 1e-4 + 1e-6 * fabs(want)) {
            rec->ok = false;
            bench_note(rec, "y[%llu] = %.7g, want %.7g", (unsigned long long)i, got, want);
            return;
        }
    }
}

typedef struct chain_raw {
    raw_pipe *p;
    raw_args *a;
    uint32_t n4, gx, gy;
} chain_raw;

static void record_chain(raw *r, VkCommandBuffer cb, void *user)
{
    const chain_raw *c = user;
    raw_cmd_dispatch(r, cb, c->p, c->a, &c->n4, c->gx, c->gy);
}

/* One configuration of the hand-written vec4 kernel: the baseline rows
 * (one invocation per vec4, L = 1..16) and two that say where its time
 * goes: a plain vec4 copy on the same buffers and grid (L = 0) and the
 * chain grid-strided over 8 workgroups per SM. */
typedef struct chain_cfg {
    const char *name; /* the row; "%s L=%u" where sweep */
    uint32_t L;
    bool stride, sweep;
} chain_cfg;

static bool raw_chain_one(bench *b, raw *r, const chain_cfg *cfg, raw_buf *x, raw_buf *y,
                          uint64_t S, float *lo, float *hi, char *variant, size_t vsize)
{
    const uint64_t n = S / 4;
    raw_pipe p = {0};
    bench_times tm = {0};
    bool ok = false;
    if (cfg->sweep)
        snprintf(variant, vsize, "%s L=%u", cfg->name, cfg->L);
    else
        snprintf(variant, vsize, "%s", cfg->name);
    /* L = 0 is copy.comp: the chain shader's spec constant 0 means its default */
    if (!(cfg->L ? raw_pipe_create(r, BENCH_SPV(chain_vec4), 2, 4, BW_WG, cfg->L, &p)
                 : raw_pipe_create(r, BENCH_SPV(copy), 2, 4, BW_WG, 0, &p)))
        goto fail;
    raw_args a = {.b = {{x->buf, 0, VK_WHOLE_SIZE}, {y->buf, 0, VK_WHOLE_SIZE}}, .n = 2};
    if (!raw_prepare(r, &p, &a))
        goto fail;
    chain_raw c = {.p = &p, .a = &a, .n4 = (uint32_t)(n / 4), .gy = 1};
    uint32_t sm = b->dev->sm_count ? b->dev->sm_count : 1;
    if (cfg->stride)
        c.gx = 8 * sm;
    else
        raw_grid(r, c.n4, BW_WG, &c.gx, &c.gy);
    if (!bench_times_init(&tm, bench_n(b, 1, 3), bench_n(b, 5, 30))) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        goto fail;
    }
    if (!raw_time_replay(r, record_chain, &c, &tm) ||
        !raw_download(r, y, 0, lo, CHECK_WINDOW * 4) ||
        !raw_download(r, y, S - CHECK_WINDOW * 4, hi, CHECK_WINDOW * 4))
        goto fail;
    bench_rec rec = bench_rec_init(b, variant, NULL);
    if (cfg->sweep)
        bench_rec_sweep(&rec, cfg->L, "steps");
    bench_times_rec(&tm, &rec, 0);
    /* The GPU's own time, the grid and the placement: on the fourth
     * session's H200 runs the baseline took 2.4x the second session's wall
     * time (BENCHMARKS.md, issue 13); these say where it goes. */
    if (tm.has_gpu)
        bench_note(&rec, "GPU %.1f us", bench_median(tm.gpu, tm.iters) / 1e3);
    bench_note(&rec, "grid %ux%u of %u; memory types %u / %u", c.gx, c.gy, BW_WG, x->mem_type,
               y->mem_type);
    chain_check(lo, hi, n, cfg->L, &rec);
    bench_add(b, &rec);
    ok = true;
fail:
    bench_times_free(&tm);
    raw_pipe_destroy(r, &p);
    return ok;
}

/* The hand-written vec4 kernel (the baseline), then the diagnostic rows. */
static void raw_chain(bench *b, raw *r, uint64_t S, const float *host, float *lo, float *hi)
{
    char err[512] = "", variant[64] = "raw-vec4";
    raw_buf x = {0}, y = {0};
    RTRY(raw_buf_create(r, S, false, &x));
    RTRY(raw_buf_create(r, S, false, &y));
    RTRY(raw_upload(r, &x, 0, host, S));
    chain_cfg cfgs[FUSION_MAX_L + 3];
    uint32_t count = 0;
    for (uint32_t L = 1; L <= FUSION_MAX_L; L *= 2)
        cfgs[count++] = (chain_cfg){"raw-vec4", L, false, true};
    cfgs[count++] = (chain_cfg){"raw-vec4-copy", 0, false, false};
    cfgs[count++] = (chain_cfg){"raw-vec4-gs8", 1, true, true};
    cfgs[count++] = (chain_cfg){"raw-vec4-gs8", FUSION_MAX_L, true, true};
    for (uint32_t i = 0; i < count; ++i)
        if (!raw_chain_one(b, r, &cfgs[i], &x, &y, S, lo, hi, variant, sizeof(variant))) {
            snprintf(err, sizeof(err), "%s", r->err);
            goto fail;
        }
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    raw_buf_destroy(r, &y);
    raw_buf_destroy(r, &x);
}

/* vkc's fusion builder on the same chain (x * 0.5 then + (s + 1) per step). */
static void vkc_chain(bench *b, uint64_t S, const float *host, float *lo, float *hi)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64] = "vkc-builder";
    const uint64_t n = S / 4;
    vkc_buffer *x = NULL, *y = NULL;
    vkc_fuse *f = NULL;
    vkc_seq *seq = NULL;
    bench_times tm = {0};
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = "x"}, &x));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = "y"}, &y));
    VTRY(vkc_buffer_upload(x, 0, host, S));
    for (uint32_t L = 1; L <= FUSION_MAX_L; L *= 2) {
        char base[64];
        snprintf(variant, sizeof(variant), "vkc-builder L=%u", L);
        snprintf(base, sizeof(base), "fusion/raw-vec4 L=%u", L);
        VTRY(vkc_fuse_create(vctx, &(vkc_fuse_desc){.name = "torch chain"}, &f));
        vkc_value v, half;
        VTRY(vkc_fuse_input(f, VKC_DTYPE_F32, &v));
        VTRY(vkc_fuse_constant(f, VKC_DTYPE_F32, 0.5, &half));
        for (uint32_t s = 0; s < L; ++s) {
            vkc_value c;
            VTRY(vkc_fuse_constant(f, VKC_DTYPE_F32, s + 1.0, &c));
            VTRY(vkc_fuse_op(f, VKC_OP_MUL, (vkc_value[]){v, half}, 2, &v));
            VTRY(vkc_fuse_op(f, VKC_OP_ADD, (vkc_value[]){v, c}, 2, &v));
        }
        VTRY(vkc_fuse_output(f, v, NULL));
        VTRY(vkc_fuse_build(f));
        vkc_fuse_info info;
        VTRY(vkc_fuse_info_get(f, &info));
        vkc_arg ax = {.buffer = x}, ay = {.buffer = y};
        VTRY(vkc_seq_create(vctx, NULL, &seq));
        VTRY(vkc_fuse_record(
            seq, f,
            &(vkc_fuse_args){
                .inputs = &ax, .input_count = 1, .outputs = &ay, .output_count = 1, .count = n}));
        VTRY(vkc_seq_end(seq));
        MTRY(bench_times_init(&tm, bench_n(b, 1, 3), bench_n(b, 5, 30)));
        for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
            vkc_ticket t;
            uint64_t t0 = bench_now_ns();
            VTRY(vkc_seq_submit(seq, &t));
            VTRY(vkc_wait(vctx, t, UINT64_MAX));
            bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
        }
        VTRY(vkc_buffer_download(y, 0, lo, CHECK_WINDOW * 4));
        VTRY(vkc_buffer_download(y, S - CHECK_WINDOW * 4, hi, CHECK_WINDOW * 4));
        bench_rec rec = bench_rec_init(b, variant, base);
        bench_rec_sweep(&rec, L, "steps");
        bench_times_rec(&tm, &rec, 0);
        chain_check(lo, hi, n, L, &rec);
        bench_note(&rec, "%s", info.vectorizable ? "vec4" : "scalar (not vectorised)");
        bench_add(b, &rec);
        bench_times_free(&tm);
        vkc_seq_destroy(seq);
        seq = NULL;
        vkc_fuse_destroy(f);
        f = NULL;
    }
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    bench_times_free(&tm);
    vkc_seq_destroy(seq);
    vkc_fuse_destroy(f);
    vkc_buffer_destroy(y);
    vkc_buffer_destroy(x);
}

/* torch_ref.py's chain through the builder beside the hand-written vec4 kernel. */
static void fusion_torch_chain(bench *b, raw *r, uint64_t S)
{
    S = S / 16 * 16; /* whole vec4s */
    const uint64_t n = S / 4;
    float *host = malloc(S), *lo = malloc(CHECK_WINDOW * 4), *hi = malloc(CHECK_WINDOW * 4);
    if (!host || !lo || !hi) {
        bench_fail(b, "vkc-builder", "out of memory");
    } else {
        for (uint64_t i = 0; i < n; ++i)
            host[i] = chain_input(i);
        if (r)
            raw_chain(b, r, S, host, lo, hi);
        vkc_chain(b, S, host, lo, hi);
    }
    free(hi);
    free(lo);
    free(host);
}

void scen_fusion(bench *b, raw *r)
{
    uint64_t S = stream_bytes(b, 4u << 20);
    bench_progress(b, "%llu MiB", (unsigned long long)(S >> 20));
    for (uint32_t L = 1; L <= FUSION_MAX_L; L *= 2) {
        char base[64];
        snprintf(base, sizeof(base), "fusion/raw-unfused L=%u", L);
        if (r)
            raw_fusion(b, r, L, S, base);
        vkc_fusion(b, L, S, base);
    }
    fusion_torch_chain(b, r, S);
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

#define LAYOUT_BASE "layout/raw-aos"

static void raw_layout(bench *b, raw *r, uint64_t S, uint32_t N, uint32_t R, double bytes)
{
    char err[512] = "", variant[64] = "raw";
    raw_pipe init = {0}, aos = {0}, soa = {0};
    raw_buf in_aos = {0}, in_soa = {0}, out = {0};
    RTRY(raw_pipe_create(r, BENCH_SPV(init), 1, 8, BW_WG, 0, &init));
    RTRY(raw_pipe_create(r, BENCH_SPV(aos), 2, 4, BW_WG, 0, &aos));
    RTRY(raw_pipe_create(r, BENCH_SPV(soa), 2, 4, BW_WG, 0, &soa));
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
        bench_rec rec = bench_rec_init(b, variant, LAYOUT_BASE);
        RTRY(raw_stream(b, r, v ? &soa : &aos, &a, &N, g, R, &rec));
        rec.ok = raw_check(r, &out, N, v ? expect_soa : expect_aos, NULL, &rec);
        set_gbps(&rec, bytes);
        bench_add(b, &rec);
    }
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    raw_buf_destroy(r, &in_aos);
    raw_buf_destroy(r, &in_soa);
    raw_buf_destroy(r, &out);
    raw_pipe_destroy(r, &init);
    raw_pipe_destroy(r, &aos);
    raw_pipe_destroy(r, &soa);
}

static void vkc_layout(bench *b, uint64_t S, uint32_t N, uint32_t R, double bytes)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64] = "vkc";
    vkc_kernel *init = NULL, *aos = NULL, *soa = NULL;
    vkc_buffer *in_aos = NULL, *in_soa = NULL, *out = NULL;
    VTRY(bench_kernel(vctx, BENCH_SPV(init), BW_WG, "init", &init));
    VTRY(bench_kernel(vctx, BENCH_SPV(aos), BW_WG, "aos", &aos));
    VTRY(bench_kernel(vctx, BENCH_SPV(soa), BW_WG, "soa", &soa));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = S, .name = "aos"}, &in_aos));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = (uint64_t)N * 4, .name = "soa"},
                           &in_soa));
    VTRY(vkc_buffer_create(vctx, &(vkc_buffer_desc){.size = (uint64_t)N * 4, .name = "out"}, &out));
    VTRY(vkc_pattern(vctx, init, in_aos, N * 8, 9));
    VTRY(vkc_pattern(vctx, init, in_soa, N, 9));
    for (int v = 0; v < 2; ++v) {
        snprintf(variant, sizeof(variant), "vkc-%s", v ? "soa" : "aos");
        vkc_arg args[2] = {{.buffer = v ? in_soa : in_aos}, {.buffer = out}};
        vkc_dispatch_desc d = {.kernel = v ? soa : aos,
                               .args = args,
                               .arg_count = 2,
                               .push = &N,
                               .push_size = 4,
                               .count = N};
        bench_rec rec = bench_rec_init(b, variant, LAYOUT_BASE);
        VTRY(vkc_stream(b, vctx, &d, R, &rec));
        rec.ok = vkc_check(vctx, out, N, v ? expect_soa : expect_aos, NULL, &rec);
        set_gbps(&rec, bytes);
        bench_note(&rec, "GB/s of useful bytes");
        bench_add(b, &rec);
    }
    goto done;
fail:
    bench_fail(b, variant, "%s", err);
done:
    vkc_buffer_destroy(in_aos);
    vkc_buffer_destroy(in_soa);
    vkc_buffer_destroy(out);
    vkc_kernel_destroy(init);
    vkc_kernel_destroy(aos);
    vkc_kernel_destroy(soa);
}

void scen_layout(bench *b, raw *r)
{
    uint64_t S = stream_bytes(b, 16u << 20); /* the AoS buffer */
    uint32_t N = (uint32_t)(S / 32), R = bench_n(b, 2, 8);
    double bytes = (double)N * 8; /* useful bytes: 4 read + 4 written per record */
    if (r)
        raw_layout(b, r, S, N, R, bytes);
    vkc_layout(b, S, N, R, bytes);
}
