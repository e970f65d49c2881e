/* Fault injection: for each main scenario, count the fallible Vulkan calls
 * and vkc's host allocations of a clean run, then run it again failing call
 * k, for every k. Each run must return the mapped error of the injected
 * VkResult (or succeed where vkc has a documented fallback), leak nothing
 * (vkc's live-object counters here, the validation layer's object tracker at
 * context destruction, LeakSanitizer in the sanitizer build), and, for a
 * recoverable error, the same context must then run the scenario correctly.
 * A lost device is recovered with vkc_context_recover() where that exists.
 *
 * Then the same with a counting VkAllocationCallbacks failing the n-th host
 * allocation of the driver (and layer) during context creation, as the
 * conformance suite's alloc_callback_fail tests do.
 *
 * The figures printed at the end go into RELIABILITY.md. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *SCALE_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint n; uint a; uint b; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) x[i] = x[i] * pc.a + pc.b;\n"
    "}\n";

typedef struct push3 {
    uint32_t n, a, b;
} push3;

#define N 4096u

/* State a scenario keeps between runs (made outside the armed region). */
typedef struct fx {
    vkc_context *ctx;
    vkc_kernel *add;   /* from SPIR-V */
    vkc_kernel *scale; /* from GLSL */
    vkc_buffer *a, *b, *c;
    vkc_seq *replay;
    vkc_kernel *img_rmw, *img_fetch; /* images scenario */
    uint32_t ha[N], hb[N], out[N];
} fx;

typedef struct scenario {
    const char *name;
    bool needs_kernels;
    vkc_result (*setup)(fx *f); /* unarmed; may be NULL */
    vkc_result (*run)(fx *f);   /* armed; cleans up what it created */
    void (*teardown)(fx *f);    /* may be NULL */
    uint32_t cached;            /* pipelines a run may leave in the context's cache */
    bool fallbacks;             /* on a context without push descriptors and timelines */
    bool pieces;                /* immediate batches for an idle queue in pieces */
} scenario;

/* Totals for RELIABILITY.md. */
static unsigned g_scenarios, g_injected, g_lost, g_tolerated;
static char g_split[16]; /* VKC_IMM_SPLIT as main left it */
static char g_sites[512][96];
static unsigned g_site_count;

static void note_site(const vkc__fault_state *st)
{
    char key[96];
    if (st->failed_site)
        snprintf(key, sizeof(key), "%s (%s)", st->failed_site, st->failed_call);
    else if (st->failed_caller)
        snprintf(key, sizeof(key), "host allocation called from %p", st->failed_caller);
    else
        snprintf(key, sizeof(key), "%s", st->failed_call);
    for (unsigned i = 0; i < g_site_count; ++i)
        if (!strcmp(g_sites[i], key))
            return;
    if (g_site_count < 512)
        snprintf(g_sites[g_site_count++], sizeof(g_sites[0]), "%s", key);
}

static void fault_tweak(vkc_context_desc *d)
{
    /* One driver wait per wait and no disk cache: call counts do not depend
     * on timing or on earlier test runs (nor immediate mode's batches: main
     * sets VKC_IMM_FIXED, which no desc field has). */
    d->wait_mode = VKC_WAIT_BLOCK;
    d->disk_cache = VKC_OFF;
    /* The immediate scenarios run batch_size + 3 dispatches to cross a
     * batch boundary. With the default 256, the fallback one failed each
     * dispatch's descriptor-set allocation in turn: about 500 runs of one
     * site, 60% of the test's time. */
    d->batch_size = 16;
}

static void fallback_tweak(vkc_context_desc *d)
{
    fault_tweak(d);
    /* The paths for devices without them: descriptor-set pools, fences. */
    d->push_descriptors = VKC_OFF;
    d->timeline_semaphores = VKC_OFF;
}

static vkc_context *fault_context(void)
{
    return vkc_test_context_create(fault_tweak);
}

static void fill_inputs(fx *f)
{
    uint64_t seed = 42;
    for (uint32_t i = 0; i < N; ++i) {
        f->ha[i] = (uint32_t)vkc_test_rand(&seed);
        f->hb[i] = (uint32_t)vkc_test_rand(&seed);
    }
}

/* ---- scenarios ------------------------------------------------------------------------ */

static vkc_result buffers_run(fx *f)
{
    vkc_context *ctx = f->ctx;
    vkc_buffer *d = NULL, *s = NULL, *u = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "dev"}, &d);
    if (r >= 0) {
        /* A second device buffer that goes through the staging ring. */
        vkc__memory_force_staging(ctx, true);
        r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "staged"}, &s);
        vkc__memory_force_staging(ctx, false);
    }
    if (r >= 0)
        r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .memory = VKC_MEMORY_READBACK},
                              &u);
    if (r >= 0)
        r = vkc_buffer_upload(d, 0, f->ha, N * 4);
    if (r >= 0)
        r = vkc_buffer_upload(s, 0, f->hb, N * 4);
    if (r >= 0)
        r = vkc_buffer_copy(u, 0, s, 0, N * 4);
    if (r >= 0) {
        memset(f->out, 0, sizeof(f->out));
        r = vkc_buffer_download(d, 0, f->out, N * 4);
        if (r >= 0)
            assert_memory_equal(f->out, f->ha, N * 4);
    }
    if (r >= 0) {
        memset(f->out, 0, sizeof(f->out));
        r = vkc_buffer_download(u, 0, f->out, N * 4);
        if (r >= 0)
            assert_memory_equal(f->out, f->hb, N * 4);
    }
    vkc_buffer_destroy(d);
    vkc_buffer_destroy(s);
    vkc_buffer_destroy(u);
    return r;
}

static vkc_result kernel_spirv_run(fx *f)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create(f->ctx,
                                     &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                        .spirv_size = test_shaders_add_size,
                                                        .name = "add"},
                                     &k);
    if (r >= 0) {
        vkc_kernel_info info;
        assert_int_equal(vkc_kernel_info_get(k, &info), VKC_SUCCESS);
        assert_int_equal(info.binding_count, 3);
    } else {
        assert_null(k);
    }
    vkc_kernel_destroy(k);
    return r;
}

static vkc_result kernel_glsl_run(fx *f)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(
        f->ctx, &(vkc_glsl_desc){.source = SCALE_GLSL, .name = "scale-fault"}, &k);
    if (r >= 0) {
        vkc_kernel_info info;
        assert_int_equal(vkc_kernel_info_get(k, &info), VKC_SUCCESS);
        assert_int_equal(info.binding_count, 1);
        assert_int_equal(info.push_constant_size, 12);
    } else {
        assert_null(k);
    }
    vkc_kernel_destroy(k);
    return r;
}

/* Kernels and three buffers, made unarmed. */
static vkc_result objects_setup(fx *f)
{
    vkc_context *ctx = f->ctx;
    VKC_FORWARD(vkc_kernel_create(ctx,
                                  &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                     .spirv_size = test_shaders_add_size,
                                                     .name = "add"},
                                  &f->add));
    VKC_FORWARD(vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = SCALE_GLSL, .name = "scale"},
                                       &f->scale));
    VKC_FORWARD(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "a"}, &f->a));
    VKC_FORWARD(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "b"}, &f->b));
    VKC_FORWARD(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "c"}, &f->c));
    return VKC_SUCCESS;
}

static void objects_teardown(fx *f)
{
    vkc_seq_destroy(f->replay);
    vkc_kernel_destroy(f->add);
    vkc_kernel_destroy(f->scale);
    vkc_buffer_destroy(f->a);
    vkc_buffer_destroy(f->b);
    vkc_buffer_destroy(f->c);
    f->replay = NULL;
    f->add = f->scale = NULL;
    f->a = f->b = f->c = NULL;
}

/* c = (a + b) * 3 + 1, with c first filled (so a missing dispatch shows). */
static vkc_result record_work(fx *f, vkc_seq *s)
{
    uint32_t n = N;
    push3 p = {N, 3, 1};
    vkc_arg abc[3] = {{.buffer = f->a}, {.buffer = f->b}, {.buffer = f->c}};
    vkc_arg c1 = {.buffer = f->c};
    VKC_FORWARD(vkc_seq_fill(s, f->c, 0, N * 4, 0xdeadbeefu));
    VKC_FORWARD(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = f->add,
                                                         .args = abc,
                                                         .arg_count = 3,
                                                         .push = &n,
                                                         .push_size = 4,
                                                         .count = N}));
    VKC_FORWARD(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = f->scale,
                                                         .args = &c1,
                                                         .arg_count = 1,
                                                         .push = &p,
                                                         .push_size = sizeof(p),
                                                         .count = N}));
    return vkc_seq_end(s);
}

static void check_work(fx *f)
{
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t want = (f->ha[i] + f->hb[i]) * 3 + 1;
        if (f->out[i] != want)
            fail_msg("c[%u] = %u, want %u", i, f->out[i], want);
    }
}

static vkc_result upload_inputs(fx *f)
{
    VKC_FORWARD(vkc_buffer_upload(f->a, 0, f->ha, N * 4));
    return vkc_buffer_upload(f->b, 0, f->hb, N * 4);
}

static vkc_result seq_run(fx *f)
{
    vkc_seq *s = NULL;
    vkc_result r = upload_inputs(f);
    if (r >= 0)
        r = vkc_seq_create(f->ctx, &(vkc_seq_desc){"fault seq"}, &s);
    if (r >= 0)
        r = record_work(f, s);
    vkc_ticket t = {0};
    if (r >= 0)
        r = vkc_seq_submit(s, &t);
    if (r >= 0)
        r = vkc_wait(f->ctx, t, UINT64_MAX);
    if (r >= 0)
        r = vkc_buffer_download(f->c, 0, f->out, N * 4);
    if (r >= 0)
        check_work(f);
    vkc_seq_destroy(s);
    return r;
}

static vkc_result replay_setup(fx *f)
{
    VKC_FORWARD(objects_setup(f));
    VKC_FORWARD(upload_inputs(f));
    VKC_FORWARD(vkc_seq_create(f->ctx, &(vkc_seq_desc){"replay"}, &f->replay));
    return record_work(f, f->replay);
}

/* Three submits of the recorded sequence (the second and third use the
 * ring's other copy and then the first again), with a poll in between. */
static vkc_result replay_run(fx *f)
{
    vkc_ticket t = {0};
    vkc_result r = VKC_SUCCESS;
    for (int i = 0; i < 3 && r >= 0; ++i) {
        r = vkc_seq_submit(f->replay, &t);
        if (r >= 0 && i == 1) {
            r = vkc_poll(f->ctx, t);
            if (r == VKC_NOT_READY)
                r = VKC_SUCCESS;
        }
    }
    if (r >= 0)
        r = vkc_wait(f->ctx, t, UINT64_MAX);
    if (r >= 0)
        r = vkc_buffer_download(f->c, 0, f->out, N * 4);
    if (r >= 0)
        check_work(f);
    return r;
}

/* x = x * mul + add over N elements, immediate. */
static vkc_result imm_scale(fx *f, vkc_buffer *x, uint32_t mul, uint32_t add)
{
    push3 p = {N, mul, add};
    vkc_arg a = {.buffer = x};
    return vkc_dispatch(f->ctx, &(vkc_dispatch_desc){.kernel = f->scale,
                                                     .args = &a,
                                                     .arg_count = 1,
                                                     .push = &p,
                                                     .push_size = sizeof(p),
                                                     .count = N});
}

/* Flush the open batch and wait for it. */
static vkc_result imm_flush_wait(fx *f)
{
    vkc_ticket t = {0};
    vkc_result r = vkc_flush(f->ctx, &t);
    return r >= 0 ? vkc_wait(f->ctx, t, UINT64_MAX) : r;
}

/* The end of an immediate run: c read back and checked; after a failure,
 * what was enqueued before it stays in the batch: drained, so that the
 * next run starts clean (it may fail again if the context is lost; that
 * is what the caller of a lost context sees too). */
static vkc_result imm_end(fx *f, vkc_result r)
{
    if (r >= 0)
        r = vkc_buffer_download(f->c, 0, f->out, N * 4);
    if (r >= 0)
        check_work(f);
    if (r < 0)
        (void)vkc_finish(f->ctx);
    return r;
}

/* c = a + b, immediate. */
static vkc_result imm_add(fx *f)
{
    uint32_t n = N;
    vkc_arg abc[3] = {{.buffer = f->a}, {.buffer = f->b}, {.buffer = f->c}};
    return vkc_dispatch(
        f->ctx,
        &(vkc_dispatch_desc){
            .kernel = f->add, .args = abc, .arg_count = 3, .push = &n, .push_size = 4, .count = N});
}

static vkc_result immediate_run(fx *f)
{
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(f->ctx, &feat), VKC_SUCCESS);
    vkc_result r = upload_inputs(f);
    /* c = a + b, then c and a in turn scaled by 1 (+0) enough times to fill
     * a batch and start the next (each dispatch binds other buffers than
     * the one before, so each brings its own descriptors: recording keeps
     * those of the dispatch before where they are the same), then c by 3
     * (+1). */
    if (r >= 0)
        r = imm_add(f);
    for (uint32_t i = 0; r >= 0 && i < feat.batch_size + 1; ++i)
        r = imm_scale(f, i % 2 ? f->a : f->c, 1, 0);
    if (r >= 0)
        r = imm_scale(f, f->c, 3, 1);
    if (r >= 0)
        r = imm_flush_wait(f);
    /* Two batches in turn, twice (c * 1 + 0, a * 1 + 0): the second round
     * goes as the first was recorded (vkc_stats.immediate_repeats), so its
     * faults are the repeats'. */
    for (int rep = 0; r >= 0 && rep < 4; ++rep) {
        r = imm_scale(f, rep % 2 ? f->a : f->c, 1, 0);
        if (r >= 0)
            r = imm_flush_wait(f);
    }
    return imm_end(f, r);
}

/* Immediate batches in pieces (the scenario's context: VKC_IMM_SPLIT=4).
 * After vkc_finish, so that the queue is idle at the flush whatever the
 * timing: c = a + b, then c and a in turn scaled by 1 (+0) ten times,
 * then c by 3 (+1); twelve commands that go as a piece of 4 and the rest.
 * Three times: the second starts its turns with a, so its first piece is
 * new and it goes in pieces too; the third is the first again, whose
 * first piece is kept, so it goes whole. */
static vkc_result pieces_run(fx *f)
{
    vkc_stats st0, st;
    vkc_result r = vkc_context_stats(f->ctx, &st0);
    if (r >= 0)
        r = upload_inputs(f);
    for (int rep = 0; r >= 0 && rep < 3; ++rep) {
        r = vkc_finish(f->ctx);
        if (r >= 0)
            r = imm_add(f);
        for (uint32_t i = 0; r >= 0 && i < 10; ++i)
            r = imm_scale(f, (i + rep) % 2 ? f->a : f->c, 1, 0);
        if (r >= 0)
            r = imm_scale(f, f->c, 3, 1);
        if (r >= 0)
            r = imm_flush_wait(f);
    }
    /* Two batches went in pieces, on a context that had dispatched
     * nothing (so kept no batch) in a run that absorbed no fault: a fault
     * in the pieces' making sends the rest whole, kept, which later
     * batches of the same commands then repeat whole. */
    if (r >= 0 && st0.dispatches == 0 && !vkc__fault.failed_call && !vkc__fault.failed_caller &&
        vkc_context_stats(f->ctx, &st) >= 0 && st.immediate_splits != st0.immediate_splits + 2)
        fail_msg("immediate_splits went from %llu to %llu, want two more",
                 (unsigned long long)st0.immediate_splits, (unsigned long long)st.immediate_splits);
    return imm_end(f, r);
}

/* Fusion: build a small U32 graph (c = (a + b) * k + 1, k a scalar; and a
 * comparison output), record it fused, submit, check. */
static vkc_result fusion_run(fx *f)
{
    vkc_fuse *g = NULL;
    vkc_seq *s = NULL;
    vkc_result r = upload_inputs(f);
    vkc_value a, b, k, one, t, c;
    if (r >= 0)
        r = vkc_fuse_create(f->ctx, &(vkc_fuse_desc){.name = "fault-fuse"}, &g);
    if (r >= 0)
        r = vkc_fuse_input(g, VKC_DTYPE_U32, &a);
    if (r >= 0)
        r = vkc_fuse_input(g, VKC_DTYPE_U32, &b);
    if (r >= 0)
        r = vkc_fuse_scalar(g, VKC_DTYPE_U32, &k);
    if (r >= 0)
        r = vkc_fuse_constant(g, VKC_DTYPE_U32, 1.0, &one);
    if (r >= 0)
        r = vkc_fuse_op(g, VKC_OP_ADD, (vkc_value[]){a, b}, 2, &t);
    if (r >= 0)
        r = vkc_fuse_op(g, VKC_OP_FMA, (vkc_value[]){t, k, one}, 3, &c);
    if (r >= 0)
        r = vkc_fuse_output(g, c, NULL);
    if (r >= 0)
        r = vkc_fuse_build(g);
    if (r >= 0)
        r = vkc_seq_create(f->ctx, &(vkc_seq_desc){"fuse seq"}, &s);
    vkc_arg in[2] = {{.buffer = f->a}, {.buffer = f->b}};
    vkc_arg out = {.buffer = f->c};
    vkc_scalar ks = {.u32 = 3};
    if (r >= 0)
        r = vkc_fuse_record(s, g,
                            &(vkc_fuse_args){.inputs = in,
                                             .input_count = 2,
                                             .outputs = &out,
                                             .output_count = 1,
                                             .scalars = &ks,
                                             .scalar_count = 1,
                                             .count = N});
    if (r >= 0)
        r = vkc_seq_end(s);
    vkc_ticket tk = {0};
    if (r >= 0)
        r = vkc_seq_submit(s, &tk);
    if (r >= 0)
        r = vkc_wait(f->ctx, tk, UINT64_MAX);
    if (r >= 0)
        r = vkc_buffer_download(f->c, 0, f->out, N * 4);
    if (r >= 0)
        check_work(f);
    vkc_seq_destroy(s);
    vkc_fuse_destroy(g);
    return r;
}

/* Images: create, upload, a sampler, a storage kernel and a sampled one in
 * a sequence (views, layout transitions), a copy out, download, destroy.
 * The kernels are made unarmed: destroying a kernel does not wait for the
 * GPU yet (issue 10), and a failed wait may leave work in flight. */
static vkc_result images_setup(fx *f)
{
    VKC_FORWARD(objects_setup(f));
    VKC_FORWARD(vkc_kernel_create(
        f->ctx,
        &(vkc_kernel_desc){.spirv = test_shaders_img_rmw, .spirv_size = test_shaders_img_rmw_size},
        &f->img_rmw));
    return vkc_kernel_create(f->ctx,
                             &(vkc_kernel_desc){.spirv = test_shaders_img_fetch,
                                                .spirv_size = test_shaders_img_fetch_size},
                             &f->img_fetch);
}

static void images_teardown(fx *f)
{
    vkc_kernel_destroy(f->img_rmw);
    vkc_kernel_destroy(f->img_fetch);
    f->img_rmw = f->img_fetch = NULL;
    objects_teardown(f);
}

static vkc_result images_run(fx *f)
{
    vkc_context *ctx = f->ctx;
    vkc_image *a = NULL, *b = NULL;
    vkc_sampler *sm = NULL;
    vkc_seq *s = NULL;
    const vkc_image_desc d = {.format = VKC_FORMAT_R32UI, .width = 64, .height = 64};
    vkc_result r = vkc_image_create(ctx, &d, &a);
    if (r >= 0)
        r = vkc_image_create(ctx, &d, &b);
    if (r >= 0)
        r = vkc_image_upload(a, NULL, f->ha, N * 4);
    if (r >= 0)
        r = vkc_sampler_get(ctx, NULL, &sm);
    if (r >= 0)
        r = vkc_seq_create(ctx, NULL, &s);
    const uint32_t p[2] = {3, 1}, q[2] = {1, 2};
    vkc_arg ra = {.image = a}, fa[2] = {{.image = a, .sampler = sm}, {.image = b}};
    if (r >= 0)
        r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = f->img_rmw,
                                                     .args = &ra,
                                                     .arg_count = 1,
                                                     .push = p,
                                                     .push_size = 8,
                                                     .groups = {8, 8, 1}});
    if (r >= 0)
        r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = f->img_fetch,
                                                     .args = fa,
                                                     .arg_count = 2,
                                                     .push = q,
                                                     .push_size = 8,
                                                     .groups = {8, 8, 1}});
    if (r >= 0)
        r = vkc_seq_copy_image_to_buffer(s, f->c, 0, b, NULL);
    if (r >= 0)
        r = vkc_seq_end(s);
    vkc_ticket t = {0};
    if (r >= 0)
        r = vkc_seq_submit(s, &t);
    if (r >= 0)
        r = vkc_wait(ctx, t, UINT64_MAX);
    if (r >= 0)
        r = vkc_buffer_download(f->c, 0, f->out, N * 4);
    for (uint32_t i = 0; r >= 0 && i < N; ++i)
        if (f->out[i] != f->ha[i] * 3u + 3u)
            fail_msg("images: texel %u is %u, want %u", i, f->out[i], f->ha[i] * 3u + 3u);
    vkc_seq_destroy(s);
    vkc_image_destroy(a);
    vkc_image_destroy(b);
    if (r < 0)
        (void)vkc_finish(ctx); /* what the units held goes when they retire */
    return r;
}

/* Lifetimes: a kernel and a buffer destroyed once recorded, the sequence
 * destroyed in flight; the work still computes right and everything goes
 * when the pool retires the unit (the download's drain). The paths: the
 * resource set's growth (a host allocation), the unit's hold, retire. */
static vkc_result lifetime_run(fx *f)
{
    vkc_kernel *k = NULL;
    vkc_buffer *x = NULL;
    vkc_seq *s = NULL;
    vkc_result r = upload_inputs(f);
    if (r >= 0)
        r = vkc_kernel_create(f->ctx,
                              &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                 .spirv_size = test_shaders_add_size,
                                                 .name = "add (destroyed)"},
                              &k);
    if (r >= 0)
        r = vkc_buffer_create(f->ctx, &(vkc_buffer_desc){.size = N * 4, .name = "x"}, &x);
    if (r >= 0)
        r = vkc_buffer_upload(x, 0, f->ha, N * 4);
    if (r >= 0)
        r = vkc_seq_create(f->ctx, &(vkc_seq_desc){"lifetime seq"}, &s);
    uint32_t n = N;
    push3 p = {N, 3, 1};
    vkc_arg xbc[3] = {{.buffer = x}, {.buffer = f->b}, {.buffer = f->c}};
    vkc_arg c1 = {.buffer = f->c};
    if (r >= 0)
        r = vkc_seq_dispatch(
            s,
            &(vkc_dispatch_desc){
                .kernel = k, .args = xbc, .arg_count = 3, .push = &n, .push_size = 4, .count = N});
    if (r >= 0)
        r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = f->scale,
                                                     .args = &c1,
                                                     .arg_count = 1,
                                                     .push = &p,
                                                     .push_size = sizeof(p),
                                                     .count = N});
    if (r >= 0)
        r = vkc_seq_end(s);
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(x);
    vkc_ticket t = {0};
    if (r >= 0)
        r = vkc_seq_submit(s, &t);
    vkc_seq_destroy(s);
    if (r >= 0)
        r = vkc_wait(f->ctx, t, UINT64_MAX);
    if (r >= 0)
        r = vkc_buffer_download(f->c, 0, f->out, N * 4);
    if (r >= 0)
        check_work(f);
    if (r < 0)
        (void)vkc_finish(f->ctx); /* what the sequence held goes with its unit */
    return r;
}

static const scenario SCENARIOS[] = {
    {"buffer create + upload + copy + download", false, NULL, buffers_run, NULL},
    {"kernel create from SPIR-V", true, NULL, kernel_spirv_run, NULL},
    {"kernel create from GLSL (run-time compile)", true, NULL, kernel_glsl_run, NULL},
    {"seq record + submit + wait", true, objects_setup, seq_run, objects_teardown},
    {"replay of a recorded sequence", true, replay_setup, replay_run, objects_teardown},
    {"immediate mode dispatch + flush + wait", true, objects_setup, immediate_run,
     objects_teardown},
    {"immediate batches in pieces", true, objects_setup, pieces_run, objects_teardown, 0, false,
     true},
    {"fusion build + record + submit + wait", true, objects_setup, fusion_run, objects_teardown, 2},
    {"images: upload, storage + sampled kernels, copy, download", true, images_setup, images_run,
     images_teardown},
    /* cached 1: after a device loss the destroyed kernel is held by a unit
     * until the context is recovered. */
    {"destroy recorded kernel and buffer, sequence in flight", true, objects_setup, lifetime_run,
     objects_teardown, 1},
    {"seq (descriptor pools, fences)", true, objects_setup, seq_run, objects_teardown, 0, true},
    {"replay (descriptor pools, fences)", true, replay_setup, replay_run, objects_teardown, 0,
     true},
    {"immediate (descriptor pools, fences)", true, objects_setup, immediate_run, objects_teardown,
     0, true},
};

/* ---- the driver of the injections ------------------------------------------------------- */

/* Calls for which vkc has a fallback, so an injected failure may end in
 * success: descriptor-set allocation moves on to a new pool; memory
 * allocation tries the next suitable memory type. */
static bool tolerated(const char *call)
{
    /* Each has a fallback: another descriptor pool, another memory type (a
     * mapped BAR type that fails to allocate or map falls back to plain
     * device-local memory with staging, as on the H200). */
    return !strcmp(call, "vkAllocateDescriptorSets") || !strcmp(call, "vkAllocateMemory") ||
           !strcmp(call, "vkMapMemory");
}

static vkc_stats stats_of(vkc_context *ctx)
{
    vkc_stats s;
    assert_int_equal(vkc_context_stats(ctx, &s), VKC_SUCCESS);
    return s;
}

static void arm(uint32_t only, uint64_t k, VkResult forced)
{
    vkc_test_quiet_errors(1);
    vkc__fault = (vkc__fault_state){.armed = true, .fail_at = k, .only = only, .forced = forced};
}

static vkc__fault_state disarm(void)
{
    vkc__fault_state s = vkc__fault;
    vkc__fault = (vkc__fault_state){0};
    vkc_test_quiet_errors(0);
    return s;
}

static bool kernels_available(void)
{
    vkc_context *ctx = fault_context();
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create(
        ctx, &(vkc_kernel_desc){.spirv = test_shaders_add, .spirv_size = test_shaders_add_size},
        &k);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
    return r == VKC_SUCCESS;
}

/* After a lost device: recover the context if vkc can, else start over. */
static void after_loss(const scenario *sc, fx *f)
{
    vkc_result r = vkc_context_recover(f->ctx);
    if (r >= 0) {
        /* Buffers were re-created empty and sequences must be recorded again:
         * the scenario's setup state is rebuilt from scratch. */
        if (sc->teardown)
            sc->teardown(f);
        if (sc->setup)
            assert_int_equal(sc->setup(f), VKC_SUCCESS);
        return;
    }
    fail_msg("vkc_context_recover: %s: %s", vkc_result_string(r), vkc_context_last_error(f->ctx));
}

/* Bring the scenario to the state every run of one pass starts from. Cold:
 * a fresh context (every first-use path: new recording units, memory
 * blocks, pipelines, compiles). Warm: the objects made again on the same
 * context and one clean run (the steady state: everything recycled). */
static void prepare(const scenario *sc, fx *f, bool cold)
{
    if (sc->teardown && f->ctx)
        sc->teardown(f);
    if (cold || !f->ctx) {
        if (f->ctx)
            vkc_test_context_destroy(f->ctx);
        /* main sets VKC_IMM_SPLIT=1 (the pieces go where the queue looks
         * idle, which depends on timing) except for the scenario that
         * flushes only onto an idle queue. */
        if (sc->pieces)
            setenv("VKC_IMM_SPLIT", "4", 1);
        f->ctx = vkc_test_context_create(sc->fallbacks ? fallback_tweak : fault_tweak);
        if (sc->pieces)
            setenv("VKC_IMM_SPLIT", g_split, 1);
    }
    if (sc->setup)
        assert_int_equal(sc->setup(f), VKC_SUCCESS);
    if (!cold)
        assert_int_equal(sc->run(f), VKC_SUCCESS);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The site of each call of a counting run (vkc__fault_state.trace). */
#define TRACE_CAP 4096
static const void *g_trace[TRACE_CAP];

/* Count the calls of `only` (of `only_call` alone where set) one run makes. */
static uint64_t count_calls(const scenario *sc, fx *f, bool cold, uint32_t only,
                            const char *only_call)
{
    prepare(sc, f, cold);
    arm(only, 0, VK_SUCCESS);
    vkc__fault.only_call = only_call;
    vkc__fault.trace = g_trace;
    vkc__fault.trace_cap = TRACE_CAP;
    assert_int_equal(sc->run(f), VKC_SUCCESS);
    uint64_t calls = disarm().calls;
    /* Past the trace, cold runs could not tell a site's first call. */
    assert_true(calls <= TRACE_CAP);
    return calls;
}

/* Whether call k (1-based) of the counting run was made at a site an
 * earlier call of that run was made at. */
static bool repeated_site(uint64_t k)
{
    for (uint64_t i = 0; i + 1 < k; ++i)
        if (g_trace[i] == g_trace[k - 1])
            return true;
    return false;
}

/* Cold runs (a fresh context each) fail the first call of each site: the
 * first-use paths. Warm runs fail every call: a site's later calls meet the
 * same error paths with more state around them, and a warm run costs a
 * fraction of a cold one (no context, no compiles). */
static void run_scenario(const scenario *sc, bool cold)
{
    double t0 = seconds_now();
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fill_inputs(f);
    unsigned injected = 0, reached = 0, lost = 0, tol = 0, timeouts = 0, repeats = 0;
    for (uint32_t only = VKC__FAULT_VK; only <= VKC__FAULT_HOST; ++only) {
        uint64_t count = count_calls(sc, f, cold, only, NULL);
        vkc_result r;
        for (uint64_t k = 1; k <= count; ++k) {
            if (cold && repeated_site(k)) {
                repeats++;
                continue;
            }
            prepare(sc, f, cold);
            vkc_stats base = stats_of(f->ctx);
            arm(only, k, VK_SUCCESS);
            r = sc->run(f);
            vkc__fault_state st = disarm();
            injected++;
            if (getenv("VKC_FAULT_VERBOSE"))
                printf("[faults]   %s %s #%llu: %s at %s -> %s\n", sc->name, cold ? "cold" : "warm",
                       (unsigned long long)k, st.failed_call ? st.failed_call : "(not reached)",
                       st.failed_site ? st.failed_site : "-", vkc_result_string(r));
            if (!st.failed_call) {
                /* The run took a shorter path (fewer calls) this time. */
                assert_int_equal(r, VKC_SUCCESS);
                continue;
            }
            reached++;
            note_site(&st);
            vkc_result want = only == VKC__FAULT_HOST
                                  ? VKC_ERROR_OUT_OF_HOST_MEMORY
                                  : vkc__result_from_vk(vkc__fault_result(st.failed_call));
            /* A host allocation vkc can do without (a cache entry) may fail
             * silently: the run checked its results, so success is right. */
            if (r == VKC_SUCCESS && (only == VKC__FAULT_HOST || tolerated(st.failed_call))) {
                tol++;
            } else if (r != want) {
                fail_msg("%s (%s): failing %s #%llu (%s at %s) returned %s, want %s; last "
                         "error: %s",
                         sc->name, cold ? "cold" : "warm",
                         only == VKC__FAULT_HOST ? "allocation" : "Vulkan call",
                         (unsigned long long)k, st.failed_call,
                         st.failed_site ? st.failed_site : "?", vkc_result_string(r),
                         vkc_result_string(want), vkc_context_last_error(f->ctx));
            }
            /* Nothing the scenario made is left behind, once the work that
             * holds it has retired (a destroy frees with the last reference;
             * results can be seen before the timeline signals). What a lost
             * context says from here on (every call refused, the recovery's
             * report) is expected: a failure's message, not these, is what a
             * log cut short must keep. */
            if (r == VKC_ERROR_DEVICE_LOST)
                vkc_test_quiet_errors(2);
            (void)vkc_finish(f->ctx);
            vkc_stats now = stats_of(f->ctx);
            /* Fusion keeps the kernels it built in the context's cache (one
             * variant may be built before the other fails); the object
             * tracker checks at destruction that the cache frees them.
             * Images held by work in flight on a lost device go at its
             * recovery: they are counted after it (below). */
            if (r != VKC_ERROR_DEVICE_LOST &&
                (now.images != base.images || now.image_views != base.image_views))
                fail_msg("%s: after failing %s: %llu images / %llu views alive, want %llu / %llu",
                         sc->name, st.failed_call, (unsigned long long)now.images,
                         (unsigned long long)now.image_views, (unsigned long long)base.images,
                         (unsigned long long)base.image_views);
            if (now.buffers != base.buffers || now.pipelines < base.pipelines ||
                now.pipelines > base.pipelines + sc->cached)
                fail_msg("%s: after failing %s: %llu buffers / %llu pipelines alive, want %llu / "
                         "%llu",
                         sc->name, st.failed_call, (unsigned long long)now.buffers,
                         (unsigned long long)now.pipelines, (unsigned long long)base.buffers,
                         (unsigned long long)base.pipelines);
            if (r == VKC_ERROR_DEVICE_LOST) {
                lost++;
                /* Latched: every later call says so at once. */
                vkc_seq *s = NULL;
                assert_int_equal(vkc_seq_create(f->ctx, NULL, &s), VKC_ERROR_DEVICE_LOST);
                assert_int_equal(vkc_finish(f->ctx), VKC_ERROR_DEVICE_LOST);
                after_loss(sc, f);
                vkc_test_quiet_errors(0);
                now = stats_of(f->ctx);
                if (now.images != base.images || now.image_views != base.image_views)
                    fail_msg("%s: after failing %s and recovering: %llu images / %llu views "
                             "alive, want %llu / %llu",
                             sc->name, st.failed_call, (unsigned long long)now.images,
                             (unsigned long long)now.image_views, (unsigned long long)base.images,
                             (unsigned long long)base.image_views);
            }
            /* The same context runs the scenario correctly now. */
            r = sc->run(f);
            if (r != VKC_SUCCESS)
                fail_msg("%s: after failing %s #%llu (%s), the clean run returned %s: %s", sc->name,
                         only == VKC__FAULT_HOST ? "allocation" : "Vulkan call",
                         (unsigned long long)k, st.failed_call, vkc_result_string(r),
                         vkc_context_last_error(f->ctx));
            vkc_test_assert_clean();
        }
        /* A wait that times out in the driver while vkc waits forever is
         * retried, not reported as success with the work unfinished. Only
         * the wait calls are counted here, so VK_TIMEOUT (legal only for
         * them) reaches no other call. */
        static const char *const waits[] = {"vkWaitSemaphores", "vkWaitForFences"};
        for (int w = 0; only == VKC__FAULT_VK && w < 2; ++w) {
            uint64_t nwait = count_calls(sc, f, cold, only, waits[w]);
            for (uint64_t k = 1; k <= nwait; ++k) {
                if (cold && repeated_site(k)) {
                    repeats++;
                    continue;
                }
                prepare(sc, f, cold);
                arm(only, k, VK_TIMEOUT);
                vkc__fault.only_call = waits[w];
                r = sc->run(f);
                disarm();
                injected++;
                timeouts++;
                assert_int_equal(r, VKC_SUCCESS);
            }
        }
    }
    if (sc->teardown)
        sc->teardown(f);
    vkc_test_context_destroy(f->ctx);
    free(f);
    printf("[faults] %-42s %s %4u injected (%u reached, %u absorbed, %u device lost, %u driver "
           "timeouts; %u later calls of a site left to warm; %.1f s)\n",
           sc->name, cold ? "cold" : "warm", injected, reached, tol, lost, timeouts, repeats,
           seconds_now() - t0);
    g_injected += injected;
    g_lost += lost;
    g_tolerated += tol;
}

/* VKC_FAULT_ONLY, read once by main. */
static const char *g_only;

static void test_scenarios(void **state)
{
    (void)state;
    bool kernels = kernels_available();
    /* VKC_FAULT_ONLY=text runs only the scenarios whose names contain it
     * (chasing one failure; the summary's floors are then not checked). */
    const char *only = g_only;
    for (size_t i = 0; i < sizeof(SCENARIOS) / sizeof(SCENARIOS[0]); ++i) {
        if (only && !strstr(SCENARIOS[i].name, only))
            continue;
        if (SCENARIOS[i].needs_kernels && !kernels) {
            printf("[faults] %-45s skipped: kernels not available in this build\n",
                   SCENARIOS[i].name);
            continue;
        }
        run_scenario(&SCENARIOS[i], true);
        run_scenario(&SCENARIOS[i], false);
        g_scenarios++;
    }
}

/* ---- context creation --------------------------------------------------------------------- */

static void test_context_create(void **state)
{
    (void)state;
    /* Validation stays on for these runs too: creation is the short part. */
    unsigned injected = 0, reached = 0;
    /* Twice: the usual paths, then the fallbacks (a fence ring instead of
     * the timeline semaphore). */
    for (uint32_t pass = 0; pass < 4; ++pass) {
        uint32_t only = pass & 1 ? VKC__FAULT_HOST : VKC__FAULT_VK;
        vkc_context_desc d = vkc_test_desc();
        if (pass < 2)
            fault_tweak(&d);
        else
            fallback_tweak(&d);
        vkc_context *ctx = NULL;
        arm(only, 0, VK_SUCCESS);
        vkc_result r = vkc_context_create(&d, &ctx);
        uint64_t count = disarm().calls;
        assert_int_equal(r, VKC_SUCCESS);
        vkc_test_context_destroy(ctx);
        for (uint64_t k = 1; k <= count; ++k) {
            ctx = NULL;
            arm(only, k, VK_SUCCESS);
            r = vkc_context_create(&d, &ctx);
            vkc__fault_state st = disarm();
            injected++;
            if (!st.failed_call) {
                assert_int_equal(r, VKC_SUCCESS);
                vkc_test_context_destroy(ctx);
                continue;
            }
            reached++;
            note_site(&st);
            vkc_result want = only == VKC__FAULT_HOST
                                  ? VKC_ERROR_OUT_OF_HOST_MEMORY
                                  : vkc__result_from_vk(vkc__fault_result(st.failed_call));
            if (r != want)
                fail_msg("context create: failing %s (#%llu) returned %s, want %s: %s",
                         st.failed_call, (unsigned long long)k, vkc_result_string(r),
                         vkc_result_string(want), vkc_last_create_error());
            assert_null(ctx);
            assert_true(vkc_last_create_error()[0] != '\0');
            vkc_test_assert_clean();
        }
    }
    printf("[faults] %-45s %4u injected (%u reached)\n", "context create + destroy", injected,
           reached);
    g_scenarios++;
    g_injected += injected;
}

/* ---- a counting VkAllocationCallbacks -------------------------------------------------------- */

typedef struct counting_alloc {
    uint64_t calls;   /* allocations and reallocations seen */
    uint64_t fail_at; /* 1-based; 0 = never */
    int64_t live;
    bool failed;
} counting_alloc;

/* Each block carries its size in a header so realloc can keep the count. */
typedef struct hdr {
    size_t size;
    size_t pad; /* keeps the user pointer 16-aligned */
} hdr;

static bool ca_fail(counting_alloc *a)
{
    a->calls++;
    if (a->fail_at && a->calls == a->fail_at) {
        a->failed = true;
        return true;
    }
    return false;
}

static void *ca_alloc(void *user, size_t size, size_t align, VkSystemAllocationScope scope)
{
    (void)scope;
    counting_alloc *a = user;
    if (ca_fail(a))
        return NULL;
    if (align < sizeof(hdr))
        align = sizeof(hdr);
    /* [padding][hdr][user]: the user pointer aligned to `align`. */
    void *raw = aligned_alloc(align, (size + 2 * align - 1) / align * align);
    if (!raw)
        return NULL;
    char *p = (char *)raw + align;
    hdr *h = (hdr *)(p - sizeof(hdr));
    h->size = size;
    h->pad = align;
    a->live++;
    return p;
}

static void ca_free(void *user, void *mem)
{
    if (!mem)
        return;
    counting_alloc *a = user;
    hdr *h = (hdr *)((char *)mem - sizeof(hdr));
    a->live--;
    free((char *)mem - h->pad);
}

static void *ca_realloc(void *user, void *orig, size_t size, size_t align,
                        VkSystemAllocationScope scope)
{
    if (!orig)
        return ca_alloc(user, size, align, scope);
    if (!size) {
        ca_free(user, orig);
        return NULL;
    }
    counting_alloc *a = user;
    if (ca_fail(a))
        return NULL;
    a->calls--; /* counted again by ca_alloc */
    void *n = ca_alloc(user, size, align, scope);
    if (!n)
        return NULL;
    hdr *h = (hdr *)((char *)orig - sizeof(hdr));
    memcpy(n, orig, h->size < size ? h->size : size);
    ca_free(user, orig);
    return n;
}

static void test_alloc_callbacks(void **state)
{
    (void)state;
    /* Mesa's implicit device-select layer (a driver component, not vkc)
     * dereferences a failed allocation in vkEnumeratePhysicalDevices
     * (strcmp on NULL; Mesa 22.x): switched off for this test by its own
     * documented variable. vkc picks the device itself anyway. */
    setenv("NODEVICE_SELECT", "1", 1);
    counting_alloc ca = {0};
    VkAllocationCallbacks cb = {.pUserData = &ca,
                                .pfnAllocation = ca_alloc,
                                .pfnReallocation = ca_realloc,
                                .pfnFree = ca_free};
    vkc_context_desc d = vkc_test_desc();
    fault_tweak(&d);
    /* The layer's own allocations go through the callbacks too: validation
     * off keeps this to the driver's (and keeps the run short). */
    d.validation = VKC_OFF;
    d.allocator = &cb;
    vkc_context *ctx = NULL;
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_SUCCESS);
    uint64_t count = ca.calls;
    vkc_context_destroy(ctx);
    assert_int_equal(ca.live, 0);
    unsigned failed = 0, succeeded = 0;
    for (uint64_t n = 1; n <= count; ++n) {
        ca = (counting_alloc){.fail_at = n};
        ctx = NULL;
        vkc_test_quiet_errors(1);
        vkc_result r = vkc_context_create(&d, &ctx);
        vkc_test_quiet_errors(0);
        if (r == VKC_SUCCESS) {
            /* The driver may absorb a failed allocation; the context works. */
            succeeded++;
            vkc_context_destroy(ctx);
        } else {
            failed++;
            assert_null(ctx);
            assert_true(r == VKC_ERROR_OUT_OF_HOST_MEMORY || r == VKC_ERROR_INITIALIZATION_FAILED ||
                        r == VKC_ERROR_OUT_OF_DEVICE_MEMORY);
        }
        if (ca.live != 0)
            fail_msg("allocation %llu failed: %lld driver allocations never freed",
                     (unsigned long long)n, (long long)ca.live);
    }
    printf("[faults] %-45s %4llu driver allocations failed in turn (%u creations failed "
           "cleanly, %u succeeded)\n",
           "VkAllocationCallbacks, context create", (unsigned long long)count, failed, succeeded);
    assert_true(count >= 100); /* the floor RELIABILITY.md states */
    g_injected += (unsigned)count;
}

static void test_summary(void **state)
{
    (void)state;
    unsigned host_sites = 0;
    for (unsigned i = 0; i < g_site_count; ++i)
        host_sites += strncmp(g_sites[i], "host allocation", 15) == 0;
    printf("[faults] total: %u scenarios, %u distinct call sites failed (%u Vulkan, %u host "
           "allocation), %u injected runs (%u tolerated by a fallback, %u device losses "
           "recovered)\n",
           g_scenarios, g_site_count, g_site_count - host_sites, host_sites, g_injected,
           g_tolerated, g_lost);
    for (unsigned i = 0; i < g_site_count; ++i)
        printf("[faults]   site: %s\n", g_sites[i]);
    /* The floors RELIABILITY.md states: a change that stops faults from
     * reaching somewhere fails here rather than thinning the figures. */
    if (g_only)
        return;
    assert_true(g_scenarios >= 11); /* context creation among them */
    assert_true(g_injected >= 2250);
    assert_true(g_site_count - host_sites >= 36);
    assert_true(host_sites >= 32);
    assert_true(g_lost >= 100);
    assert_true(g_tolerated >= 35);
}

int main(void)
{
    /* Line by line: a run stopped by ctest's timeout still shows where it
     * got to. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Immediate batches go at batch_size or at a flush only, not also when
     * the GPU looks idle: that rule depends on timing (the fence scenario's
     * batches split at 4, 8, 11 or 15 commands in some runs and not in
     * others), so call k of a counting run would not be call k of the run
     * that fails it, and the summary's counts would move with the host's
     * speed. The idle rule submits through the same code as the count.
     * VKC_IMM_FIXED=0 set outside keeps the idle rule (chasing timing). */
    setenv("VKC_IMM_FIXED", "1", 0);
    /* Likewise the pieces a batch for an idle queue goes in (on a GPU; not
     * on lavapipe, where the count is 1 already) but in their own scenario. */
    setenv("VKC_IMM_SPLIT", "1", 0);
    /* And where they go: whatever a submit costs (no slow mode), even where
     * the environment says otherwise (the pieces scenario counts splits). */
    setenv("VKC_IMM_SLOW_US", "1000000", 1);
    snprintf(g_split, sizeof(g_split), "%s", getenv("VKC_IMM_SPLIT"));
    g_only = getenv("VKC_FAULT_ONLY");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_create),
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_alloc_callbacks),
        cmocka_unit_test(test_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
