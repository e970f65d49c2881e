/* Resident kernels: the round trip of one tiny item (post, wait) and a
 * stream of dependent items, resident against the same kernel's fallback
 * (each post one submitted dispatch), and beside vkc's ordinary round trip. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Item (a, b): x[i] = x[i] * a + b + i over TINY_N uints, one workgroup of
 * TINY_WG: each item depends on the one before. */
static const char *STEP_GLSL = "#version 450\n"
                               "#include \"vkc_resident.glsl\"\n"
                               "layout(local_size_x = 64) in;\n"
                               "layout(set = 0, binding = 1) coherent buffer X { uint x[]; };\n"
                               "void main() {\n"
                               "  vkc_item it;\n"
                               "  uint i = gl_LocalInvocationIndex;\n"
                               "  while (vkc_resident_next(it)) {\n"
                               "    x[i] = x[i] * vkc_resident_word(it, 0u) + "
                               "vkc_resident_word(it, 1u) + i;\n"
                               "    vkc_resident_done(it);\n"
                               "  }\n"
                               "}\n";

typedef struct res_fix {
    vkc_buffer *x;
    vkc_resident *r;
    uint32_t ref[TINY_N];
    vkc_resident_info info;
} res_fix;

static vkc_result res_open(vkc_context *ctx, res_fix *f, bool fallback)
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
                                                   .fallback = fallback ? VKC_ON : VKC_DEFAULT},
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
    for (uint32_t i = 0; i < TINY_N; ++i)
        f->ref[i] = f->ref[i] * a + b + i;
}

static vkc_result res_check(res_fix *f, bench_rec *rec)
{
    uint32_t got[TINY_N];
    vkc_result res = vkc_buffer_download(f->x, 0, got, sizeof(got));
    if (res < 0)
        return res;
    rec->ok = true;
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (got[i] != f->ref[i]) {
            rec->ok = false;
            bench_note(rec, "x[%u] = %u, want %u", i, got[i], f->ref[i]);
            break;
        }
    return VKC_SUCCESS;
}

static void res_note(bench_rec *rec, const res_fix *f)
{
    if (f->info.resident)
        bench_note(rec, "resident: queue %u.%u, memory type %u%s, poll %.0f ns",
                   f->info.queue_family, f->info.queue_index, f->info.memory_type,
                   f->info.device_local ? " (device-local)" : "", f->info.poll_ns);
    else
        bench_note(rec, "ordinary submits: %s", f->info.reason);
}

/* Post one item, wait for it; each item's input depends on the result. */
static void res_roundtrip(bench *b, bool fallback, const char *variant, const char *baseline)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    res_fix f = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 20, 200), bench_n(b, 200, 20000)));
    VTRY(res_open(vctx, &f, fallback));
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
static void res_stream(bench *b, bool fallback, uint32_t K, const char *variant,
                       const char *baseline)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    res_fix f = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, 1, bench_n(b, 2, 5)));
    VTRY(res_open(vctx, &f, fallback));
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

void scen_resident(bench *b, raw *r)
{
    (void)r;
    /* vkc's ordinary round trip on the same context, for reference. */
    bench_vkc_roundtrip(b, b->ctx, "vkc-ordinary-roundtrip", false, NULL);
    vkc_context_desc md = {.wait_mode = VKC_WAIT_SPIN_MARKER};
    vkc_context *mc = bench_context_or_fail(b, &md, "vkc-ordinary-roundtrip-marker", NULL);
    if (mc) {
        bench_vkc_roundtrip(b, mc, "vkc-ordinary-roundtrip-marker", false, NULL);
        vkc_context_destroy(mc);
    }
    res_roundtrip(b, true, "vkc-fallback-roundtrip", NULL);
    res_roundtrip(b, false, "vkc-resident-roundtrip", "resident/vkc-fallback-roundtrip");
    uint32_t K = bench_n(b, 200, 10000);
    char v[64], base[80];
    snprintf(v, sizeof(v), "vkc-fallback-stream K=%u", K);
    res_stream(b, true, K, v, NULL);
    snprintf(base, sizeof(base), "resident/%s", v);
    snprintf(v, sizeof(v), "vkc-resident-stream K=%u", K);
    res_stream(b, false, K, v, base);
}
