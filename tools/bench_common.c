/* Helpers that scenarios share: sample arrays and their record fields, the
 * vkc and raw fixtures (tiny inc, offset ranges), recorded-once replays. */
#include "bench.h"
#include "bench_shaders.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- records ------------------------------------------------------------- */

bool bench_times_init(bench_times *t, uint32_t warm, uint32_t iters)
{
    *t = (bench_times){.warm = warm, .iters = iters};
    t->wall = calloc(iters, sizeof(double));
    t->gpu = calloc(iters, sizeof(double));
    return t->wall && t->gpu;
}

void bench_times_free(bench_times *t)
{
    free(t->wall);
    free(t->gpu);
    t->wall = t->gpu = NULL;
}

void bench_times_rec(bench_times *t, bench_rec *rec, uint32_t dispatches)
{
    if (t->has_gpu && dispatches)
        rec->gpu_per_dispatch_ns = bench_median(t->gpu, t->iters) / dispatches;
    bench_rec_stats(rec, t->wall, t->iters, false);
    if (dispatches)
        rec->per_dispatch_ns = rec->p50_us * 1e3 / dispatches;
}

void bench_rec_sweep(bench_rec *r, double x, const char *x_name)
{
    r->x = x;
    snprintf(r->x_name, sizeof(r->x_name), "%s", x_name);
}

void bench_note(bench_rec *r, const char *fmt, ...)
{
    size_t len = strlen(r->note);
    if (len && len + 2 < sizeof(r->note)) {
        memcpy(r->note + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + len, sizeof(r->note) - len, fmt, ap);
    va_end(ap);
}

void bench_emit(bench *b, bench_rec *rec, const char *err)
{
    if (!err[0]) {
        bench_add(b, rec);
        return;
    }
    free(rec->samples);
    bench_fail(b, rec->variant, "%s", err);
}

void bench_skip(bench *b, const char *variant, const char *reason)
{
    bench_rec rec = bench_rec_init(b, variant, NULL);
    rec.skipped = true;
    snprintf(rec.note, sizeof(rec.note), "%s", reason);
    bench_add(b, &rec);
}

vkc_context *bench_context_or_fail(bench *b, vkc_context_desc *desc, const char *variant, ...)
{
    vkc_context *c = NULL;
    vkc_result res = bench_context(b, desc, &c);
    if (res == VKC_SUCCESS)
        return c;
    char err[512];
    bench_vkc_err(NULL, res, "vkc_context_create", err, sizeof(err));
    va_list ap;
    va_start(ap, variant);
    for (const char *v = variant; v; v = va_arg(ap, const char *))
        bench_fail(b, v, "%s", err);
    va_end(ap);
    return NULL;
}

uint32_t bench_turns(void *rows, size_t row_size, uint32_t n, uint32_t iters,
                     void (*chunk)(void *user, void *row, uint32_t m), void *user)
{
    const uint32_t rounds = iters < 8 ? iters : 8;
    for (uint32_t c = 0; c < rounds; ++c) {
        const uint32_t m = iters * (c + 1) / rounds - iters * c / rounds;
        for (uint32_t j = 0; j < n; ++j)
            chunk(user, (char *)rows + (c & 1 ? n - 1 - j : j) * row_size, m);
    }
    return rounds;
}

bool bench_check_all(const uint32_t *got, uint32_t n, uint32_t want, char *note, size_t note_size)
{
    for (uint32_t i = 0; i < n; ++i)
        if (got[i] != want) {
            snprintf(note, note_size, "x[%u] = %u, want %u", i, got[i], want);
            return false;
        }
    return true;
}

/* ---- vkc ----------------------------------------------------------------- */

vkc_result bench_kernel(vkc_context *ctx, const uint32_t *spirv, size_t size, uint32_t wg,
                        const char *name, vkc_kernel **out)
{
    return vkc_kernel_create(
        ctx,
        &(vkc_kernel_desc){.spirv = spirv, .spirv_size = size, .workgroup_size = wg, .name = name},
        out);
}

vkc_result bench_buffer(vkc_context *ctx, uint64_t size, const char *name, vkc_buffer **out)
{
    vkc_result res = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = size, .name = name}, out);
    return res < 0 ? res : vkc_buffer_fill(*out, 0, size, 0);
}

vkc_result bench_seq_record(vkc_context *ctx, const vkc_dispatch_desc *descs, uint32_t n,
                            uint32_t total, vkc_seq **s)
{
    vkc_result res = vkc_seq_create(ctx, NULL, s);
    for (uint32_t i = 0; res >= 0 && i < total; ++i)
        res = vkc_seq_dispatch(*s, &descs[i % n]);
    return res < 0 ? res : vkc_seq_end(*s);
}

vkc_result bench_seq_time(vkc_context *ctx, const vkc_dispatch_desc *descs, uint32_t n,
                          uint32_t total, bench_times *t, vkc_seq_info *info)
{
    vkc_seq *s = NULL;
    vkc_result res = bench_seq_record(ctx, descs, n, total, &s);
    if (res >= 0 && info)
        res = vkc_seq_info_get(s, info);
    for (uint32_t i = 0; res >= 0 && i < t->warm + t->iters; ++i) {
        vkc_ticket tk;
        uint64_t t0 = bench_now_ns();
        res = vkc_seq_submit(s, &tk);
        if (res >= 0)
            res = vkc_wait(ctx, tk, UINT64_MAX);
        bench_times_put(t, i, (double)(bench_now_ns() - t0));
    }
    vkc_seq_destroy(s);
    return res;
}

vkc_result bench_seq_once(vkc_context *ctx, const vkc_dispatch_desc *descs, uint32_t n)
{
    vkc_seq *s = NULL;
    vkc_ticket tk;
    vkc_result res = bench_seq_record(ctx, descs, n, n, &s);
    if (res >= 0)
        res = vkc_seq_submit(s, &tk);
    if (res >= 0)
        res = vkc_wait(ctx, tk, UINT64_MAX);
    vkc_seq_destroy(s);
    return res;
}

vkc_result bench_tiny_init(vkc_context *ctx, bench_tiny *t, uint64_t size)
{
    return bench_tiny_init_from(ctx, t, size, false);
}

vkc_result bench_tiny_init_from(vkc_context *ctx, bench_tiny *t, uint64_t size, bool glsl)
{
    memset(t, 0, sizeof(*t));
    t->push[0] = TINY_N;
    t->push[1] = 1;
    vkc_result res = glsl ? vkc_kernel_create_glsl(ctx,
                                                   &(vkc_glsl_desc){.source = bench_inc_glsl,
                                                                    .workgroup_size = TINY_WG,
                                                                    .name = "inc"},
                                                   &t->k)
                          : bench_kernel(ctx, BENCH_SPV(inc), TINY_WG, "inc", &t->k);
    if (res >= 0)
        res = bench_buffer(ctx, size ? size : TINY_N * 4, "x", &t->x);
    t->arg = (vkc_arg){.buffer = t->x};
    t->d = (vkc_dispatch_desc){.kernel = t->k,
                               .args = &t->arg,
                               .arg_count = 1,
                               .push = t->push,
                               .push_size = 8,
                               .count = TINY_N};
    return res;
}

void bench_tiny_finish(bench_tiny *t)
{
    vkc_buffer_destroy(t->x);
    vkc_kernel_destroy(t->k);
    memset(t, 0, sizeof(*t));
}

vkc_result bench_tiny_check(bench_tiny *t, uint32_t want, bench_rec *rec)
{
    uint32_t got[TINY_N];
    vkc_result res = vkc_buffer_download(t->x, 0, got, sizeof(got));
    if (res >= 0)
        rec->ok = bench_check_all(got, TINY_N, want, rec->note, sizeof(rec->note));
    return res;
}

uint64_t bench_range_stride(const bench *b)
{
    uint64_t align = b->dev->min_storage_buffer_offset_alignment;
    if (align < 4)
        align = 4;
    return (TINY_N * 4 + align - 1) / align * align;
}

bool bench_ranges_host(const bench *b, bench_ranges *g, uint32_t n, uint32_t seed)
{
    memset(g, 0, sizeof(*g));
    g->n = n;
    g->stride = bench_range_stride(b);
    for (uint32_t i = 0; i < TINY_N; ++i)
        g->src[i] = bench_pattern(i, seed);
    g->host = calloc(n * g->stride / 4, 4);
    return g->host != NULL;
}

vkc_result bench_ranges_init(bench *b, vkc_context *ctx, bench_ranges *g, uint32_t n, uint32_t seed)
{
    if (!bench_ranges_host(b, g, n, seed))
        return VKC_ERROR_OUT_OF_HOST_MEMORY;
    vkc_result res = bench_kernel(ctx, BENCH_SPV(offset), TINY_WG, "offset", &g->k);
    if (res >= 0)
        res =
            vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = TINY_N * 4, .name = "src"}, &g->vsrc);
    if (res >= 0)
        res = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * g->stride, .name = "dst"},
                                &g->vdst);
    if (res >= 0)
        res = vkc_buffer_upload(g->vsrc, 0, g->src, sizeof(g->src));
    g->descs = calloc(n, sizeof(*g->descs));
    g->store = calloc(n, sizeof(*g->store));
    if (res >= 0 && (!g->descs || !g->store))
        res = VKC_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t j = 0; res >= 0 && j < n; ++j)
        g->descs[j] = bench_ranges_desc(g, j, 0, g->store[j].args, g->store[j].push);
    return res < 0 ? res : vkc_seq_create(ctx, NULL, &g->seq);
}

void bench_ranges_finish(bench_ranges *g)
{
    vkc_seq_destroy(g->seq);
    free(g->host);
    free(g->descs);
    free(g->store);
    vkc_buffer_destroy(g->vsrc);
    vkc_buffer_destroy(g->vdst);
    vkc_kernel_destroy(g->k);
    memset(g, 0, sizeof(*g));
}

vkc_dispatch_desc bench_ranges_desc(const bench_ranges *g, uint32_t j, uint32_t add,
                                    vkc_arg args[2], uint32_t push[2])
{
    args[0] = (vkc_arg){.buffer = g->vsrc};
    args[1] = (vkc_arg){.buffer = g->vdst, .offset = j * g->stride, .size = TINY_N * 4};
    push[0] = TINY_N;
    push[1] = j + add;
    return (vkc_dispatch_desc){.kernel = g->k,
                               .args = args,
                               .arg_count = 2,
                               .push = push,
                               .push_size = 8,
                               .count = TINY_N};
}

void bench_ranges_check(const bench_ranges *g, uint32_t add, bench_rec *rec)
{
    for (uint32_t k = 0; k < g->n; ++k)
        for (uint32_t i = 0; i < TINY_N; ++i) {
            uint32_t got = g->host[k * g->stride / 4 + i], want = g->src[i] + k + add;
            if (got != want) {
                rec->ok = false;
                snprintf(rec->note, sizeof(rec->note), "range %u [%u] = %u, want %u", k, i, got,
                         want);
                return;
            }
        }
}

vkc_result bench_ranges_download_check(bench_ranges *g, uint32_t add, bench_rec *rec)
{
    vkc_result res = vkc_buffer_download(g->vdst, 0, g->host, g->n * g->stride);
    if (res >= 0)
        bench_ranges_check(g, add, rec);
    return res;
}

/* ---- raw ----------------------------------------------------------------- */

static void cb_free(raw *r, VkCommandBuffer *cb)
{
    if (*cb)
        r->vkFreeCommandBuffers(r->dev, r->pool, 1, cb);
    *cb = VK_NULL_HANDLE;
}

/* A command buffer and an unsignalled fence for a fixture. */
static bool cb_fence_create(raw *r, VkCommandBuffer *cb, VkFence *fence)
{
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    return raw_new_cb(r, cb) &&
           raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, fence), "vkCreateFence");
}

static void cb_fence_destroy(raw *r, VkCommandBuffer *cb, VkFence *fence)
{
    if (*fence)
        r->vkDestroyFence(r->dev, *fence, NULL);
    *fence = VK_NULL_HANDLE;
    cb_free(r, cb);
}

bool raw_time_replay(raw *r, raw_record_fn fn, void *user, bench_times *t)
{
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bool ok =
        raw_new_cb(r, &cb) && raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    if (ok) {
        raw_cmd_ts_begin(r, cb);
        fn(r, cb, user);
        raw_cmd_ts_end(r, cb);
        ok = raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    }
    ok = ok && raw_replay(r, cb, t->warm, t->iters, t->wall, t->gpu, &t->has_gpu);
    cb_free(r, &cb);
    return ok;
}

bool raw_tiny_init(raw *r, raw_tiny *t, uint64_t size)
{
    memset(t, 0, sizeof(*t));
    t->push[0] = TINY_N;
    t->push[1] = 1;
    size = size ? size : TINY_N * 4;
    void *zeros = calloc(1, size);
    bool ok = zeros != NULL;
    if (!ok)
        snprintf(r->err, sizeof(r->err), "out of memory");
    ok = ok && raw_pipe_create(r, BENCH_SPV(inc), 1, 8, TINY_WG, 0, &t->p) &&
         raw_buf_create(r, size, false, &t->x) && raw_upload(r, &t->x, 0, zeros, size);
    free(zeros);
    t->a = (raw_args){.b = {{t->x.buf, 0, VK_WHOLE_SIZE}}, .n = 1};
    return ok && raw_prepare(r, &t->p, &t->a) && cb_fence_create(r, &t->cb, &t->fence);
}

void raw_tiny_finish(raw *r, raw_tiny *t)
{
    cb_fence_destroy(r, &t->cb, &t->fence);
    raw_buf_destroy(r, &t->x);
    raw_pipe_destroy(r, &t->p);
}

bool raw_tiny_check(raw *r, raw_tiny *t, uint32_t want, bench_rec *rec)
{
    uint32_t got[TINY_N];
    if (!raw_download(r, &t->x, 0, got, sizeof(got)))
        return false;
    rec->ok = bench_check_all(got, TINY_N, want, rec->note, sizeof(rec->note));
    return true;
}

bool raw_ranges_init(raw *r, const bench_ranges *g, bool prepare, raw_ranges *rr)
{
    memset(rr, 0, sizeof(*rr));
    rr->args = calloc(g->n, sizeof(raw_args));
    if (!rr->args) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        return false;
    }
    if (!raw_pipe_create(r, BENCH_SPV(offset), 2, 8, TINY_WG, 0, &rr->p) ||
        !raw_buf_create(r, TINY_N * 4, false, &rr->src) ||
        !raw_buf_create(r, g->n * g->stride, false, &rr->dst) ||
        !raw_upload(r, &rr->src, 0, g->src, sizeof(g->src)) ||
        !cb_fence_create(r, &rr->cb, &rr->fence))
        return false;
    for (uint32_t k = 0; k < g->n; ++k) {
        rr->args[k] = (raw_args){
            .b = {{rr->src.buf, 0, VK_WHOLE_SIZE}, {rr->dst.buf, k * g->stride, TINY_N * 4}},
            .n = 2};
        if (prepare && !raw_prepare(r, &rr->p, &rr->args[k]))
            return false;
    }
    return true;
}

void raw_ranges_finish(raw *r, raw_ranges *rr)
{
    cb_fence_destroy(r, &rr->cb, &rr->fence);
    free(rr->args);
    raw_buf_destroy(r, &rr->src);
    raw_buf_destroy(r, &rr->dst);
    raw_pipe_destroy(r, &rr->p);
    memset(rr, 0, sizeof(*rr));
}

bool raw_ranges_download_check(raw *r, raw_ranges *rr, bench_ranges *g, uint32_t add,
                               bench_rec *rec)
{
    if (!raw_download(r, &rr->dst, 0, g->host, g->n * g->stride))
        return false;
    bench_ranges_check(g, add, rec);
    return true;
}
