/* Dispatch module: sequences, hazards and barriers, grid-stride sizing,
 * tickets and waits, replay, immediate mode, threads, bad input. Every result
 * is checked against a CPU computation. */
#define _GNU_SOURCE /* nanosleep */
/* The private header first: it brings Vulkan in without prototypes (volk). */
#include "seq.h"
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* y[i] = a * x[i] + b (uint arithmetic: exact) */
static const char *AXPB_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) readonly buffer X { uint x[]; };\n"
    "layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };\n"
    "layout(push_constant) uniform P { uint n; uint a; uint b; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) y[i] = pc.a * x[i] + pc.b;\n"
    "}\n";

/* x[i] = x[i] * a + b in place */
static const char *INPLACE_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint n; uint a; uint b; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) x[i] = x[i] * pc.a + pc.b;\n"
    "}\n";

/* Burns time: every invocation iterates an LCG `iters` times on its own
 * seed. (Many invocations rather than one long loop: lavapipe caps a single
 * loop at 65535 iterations.) */
static const char *SPIN_GLSL =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(set = 0, binding = 0) writeonly buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint iters; } pc;\n"
    "void main() {\n"
    "  uint v = gl_GlobalInvocationID.x;\n"
    "  for (uint i = 0; i < pc.iters; ++i) v = v * 1664525u + 1013904223u;\n"
    "  x[gl_GlobalInvocationID.x] = v;\n"
    "}\n";

typedef struct push3 {
    uint32_t n, a, b;
} push3;

static vkc_kernel *glsl_kernel(vkc_context *ctx, const char *src, const char *name)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = src, .name = name}, &k);
    if (r != VKC_SUCCESS)
        fail_msg("kernel %s: %s: %s", name, vkc_result_string(r), vkc_context_last_error(ctx));
    return k;
}

/* The same words as kernel k, as SPIR-V: no completion epilogue
 * (test_epilogue test_marker_kept). vkc splices none into it either: the
 * words already use the epilogue's spec ids (src/spirv_epilogue.c). */
static vkc_kernel *spirv_twin(vkc_context *ctx, const vkc_kernel *k)
{
    vkc_kernel *t = NULL;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = k->spirv,
                                                          .spirv_size = k->spirv_size,
                                                          .name = "inplace spv"},
                                       &t),
                     VKC_SUCCESS);
    assert_false(t->epilogue);
    return t;
}

static vkc_buffer *buffer(vkc_context *ctx, uint64_t bytes)
{
    vkc_buffer *b = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = bytes}, &b);
    if (r != VKC_SUCCESS)
        fail_msg("buffer %llu: %s: %s", (unsigned long long)bytes, vkc_result_string(r),
                 vkc_context_last_error(ctx));
    return b;
}

static uint32_t *random_u32(uint64_t n, uint64_t seed)
{
    uint32_t *v = malloc((n ? n : 1) * sizeof(uint32_t));
    assert_non_null(v);
    for (uint64_t i = 0; i < n; ++i)
        v[i] = (uint32_t)vkc_test_rand(&seed);
    return v;
}

static vkc_arg arg(vkc_buffer *b)
{
    return (vkc_arg){.buffer = b};
}

/* Enqueue x[0, n) = x * a + b (kernel INPLACE_GLSL) in immediate mode. */
static void enqueue_inplace(vkc_context *ctx, vkc_kernel *inpl, vkc_buffer *x, push3 p)
{
    vkc_arg a = arg(x);
    assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = inpl,
                                                            .args = &a,
                                                            .arg_count = 1,
                                                            .push = &p,
                                                            .push_size = 12,
                                                            .count = p.n}),
                     VKC_SUCCESS);
}

/* ---- element counts and grid-stride sizing ----------------------------------------- */

static void run_add(vkc_context *ctx, uint64_t n, uint32_t groups)
{
    vkc_kernel *k = NULL;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size,
                                                          .name = "add"},
                                       &k),
                     VKC_SUCCESS);
    uint64_t bytes = (n ? n : 1) * 4;
    vkc_buffer *a = buffer(ctx, bytes), *b = buffer(ctx, bytes), *c = buffer(ctx, bytes);
    uint32_t *ha = random_u32(n, 1 + n), *hb = random_u32(n, 2 + n), *hc = calloc(n ? n : 1, 4);
    assert_int_equal(vkc_buffer_upload(a, 0, ha, n * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(b, 0, hb, n * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(c, 0, bytes, 0xdeadbeef), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    uint32_t pn = (uint32_t)n;
    vkc_arg args[3] = {arg(a), arg(b), arg(c)};
    /* groups = 0: vkc sizes the grid from the count; else a fixed grid that
     * makes every invocation loop many times. */
    vkc_dispatch_desc dd = {
        .kernel = k, .args = args, .arg_count = 3, .push = &pn, .push_size = 4, .count = n};
    if (groups) {
        dd.groups[0] = groups;
        dd.groups[1] = dd.groups[2] = 1;
    }
    assert_int_equal(vkc_seq_dispatch(s, &dd), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(c, 0, hc, n * 4), VKC_SUCCESS);
    for (uint64_t i = 0; i < n; ++i)
        if (hc[i] != ha[i] + hb[i])
            fail_msg("n=%llu: c[%llu] = %u, want %u", (unsigned long long)n, (unsigned long long)i,
                     hc[i], ha[i] + hb[i]);
    if (n == 0) { /* nothing dispatched: c keeps its fill */
        uint32_t v;
        assert_int_equal(vkc_buffer_download(c, 0, &v, 4), VKC_SUCCESS);
        assert_int_equal(v, 0xdeadbeef);
    }
    vkc_seq_destroy(s);
    vkc_buffer_destroy(a);
    vkc_buffer_destroy(b);
    vkc_buffer_destroy(c);
    vkc_kernel_destroy(k);
    free(ha);
    free(hb);
    free(hc);
}

static void test_counts(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features f;
    vkc_context_features_get(ctx, &f);
    uint64_t wg = f.default_workgroup_size;
    const uint64_t sizes[] = {0, 1, 7, 1000,
                              /* beyond lavapipe's one-dispatch grid (65535 groups) */
                              65535 * wg + 1};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i)
        run_add(ctx, sizes[i], 0);
    /* many grid-stride iterations per invocation: a fixed grid of 3 groups */
    run_add(ctx, 100003, 3);
}

/* ---- hazards ------------------------------------------------------------------------- */

/* A chain that is wrong if any barrier is missing: ping-pong between two
 * buffers (RAW each step, WAR on the buffer read two steps earlier, WAW),
 * followed by in-place updates (RAW+WAW on one buffer). */
static void test_hazard_chain(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 1 << 16, steps = 24;
    vkc_kernel *axpb = glsl_kernel(ctx, AXPB_GLSL, "axpb");
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *buf[2] = {buffer(ctx, n * 4), buffer(ctx, n * 4)};
    ctx->test_drop_barriers = getenv("VKC_TEST_DROP_BARRIERS") != NULL;
    uint32_t *x = random_u32(n, 7), *ref = malloc(n * 4), *out = malloc(n * 4);
    memcpy(ref, x, n * 4);
    assert_int_equal(vkc_buffer_upload(buf[0], 0, x, n * 4), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){"hazards"}, &s), VKC_SUCCESS);
    for (uint32_t i = 0; i < steps; ++i) {
        push3 p = {n, 3 + i, i * 7 + 1};
        vkc_arg args[2] = {arg(buf[i & 1]), arg(buf[(i + 1) & 1])};
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = axpb,
                                                                  .args = args,
                                                                  .arg_count = 2,
                                                                  .push = &p,
                                                                  .push_size = sizeof(p),
                                                                  .count = n}),
                         VKC_SUCCESS);
        for (uint32_t j = 0; j < n; ++j)
            ref[j] = p.a * ref[j] + p.b;
    }
    for (uint32_t i = 0; i < 8; ++i) {
        push3 p = {n, 5, i};
        vkc_arg a0 = arg(buf[steps & 1]);
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                                  .args = &a0,
                                                                  .arg_count = 1,
                                                                  .push = &p,
                                                                  .push_size = sizeof(p),
                                                                  .count = n}),
                         VKC_SUCCESS);
        for (uint32_t j = 0; j < n; ++j)
            ref[j] = ref[j] * 5 + i;
    }
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_seq_info info;
    assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
    assert_int_equal(info.levels, steps + 8);
    assert_int_equal(info.barriers, steps + 8 - 1);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(buf[steps & 1], 0, out, n * 4), VKC_SUCCESS);
    uint32_t wrong = 0;
    for (uint32_t j = 0; j < n; ++j)
        wrong += out[j] != ref[j];
    if (ctx->test_drop_barriers) {
        /* The proof mode: without barriers a GPU that overlaps dispatches must
         * give wrong results, so this test would catch a dropped barrier. */
        printf("barriers dropped: %u of %u elements wrong\n", wrong, n);
        if (vkc_context_device(ctx)->type != VKC_DEVICE_TYPE_CPU)
            assert_true(wrong > 0);
    } else if (wrong) {
        for (uint32_t j = 0; j < n; ++j)
            if (out[j] != ref[j])
                fail_msg("%u wrong; element %u: %u, want %u", wrong, j, out[j], ref[j]);
    }
    vkc_seq_destroy(s);
    vkc_buffer_destroy(buf[0]);
    vkc_buffer_destroy(buf[1]);
    vkc_kernel_destroy(axpb);
    vkc_kernel_destroy(inpl);
    free(x);
    free(ref);
    free(out);
}

/* Barrier counts: independent work gets none; W chains of depth D get D-1
 * between levels whether they are recorded interleaved or one after the
 * other; sub-ranges of one buffer that do not overlap are independent. */
static void test_barrier_counts(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 1024, W = 4, D = 5;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *bufs[4];
    uint32_t *ref[4];
    for (uint32_t w = 0; w < W; ++w) {
        bufs[w] = buffer(ctx, n * 4);
        ref[w] = random_u32(n, 100 + w);
        assert_int_equal(vkc_buffer_upload(bufs[w], 0, ref[w], n * 4), VKC_SUCCESS);
    }
    vkc_seq *s;
    vkc_seq_info info;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    /* independent: one dispatch on each buffer */
    for (uint32_t w = 0; w < W; ++w) {
        push3 p = {n, 3, w};
        vkc_arg a = arg(bufs[w]);
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                                  .args = &a,
                                                                  .arg_count = 1,
                                                                  .push = &p,
                                                                  .push_size = 12,
                                                                  .count = n}),
                         VKC_SUCCESS);
        for (uint32_t j = 0; j < n; ++j)
            ref[w][j] = ref[w][j] * 3 + w;
    }
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
    assert_int_equal(info.levels, 1);
    assert_int_equal(info.barriers, 0);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);

    /* W chains of depth D, recorded chain after chain (not interleaved) */
    for (int interleaved = 0; interleaved < 2; ++interleaved) {
        assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
        for (uint32_t i = 0; i < W * D; ++i) {
            uint32_t w = interleaved ? i % W : i / D;
            uint32_t d = interleaved ? i / W : i % D;
            push3 p = {n, 2 + d, w * 10 + d};
            vkc_arg a = arg(bufs[w]);
            assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                                      .args = &a,
                                                                      .arg_count = 1,
                                                                      .push = &p,
                                                                      .push_size = 12,
                                                                      .count = n}),
                             VKC_SUCCESS);
            for (uint32_t j = 0; j < n; ++j)
                ref[w][j] = ref[w][j] * p.a + p.b;
        }
        assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
        assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
        assert_int_equal(info.levels, D);
        assert_int_equal(info.barriers, D - 1);
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    }
    /* disjoint halves of one buffer are independent; overlapping ones are not */
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    for (uint32_t h = 0; h < 2; ++h) {
        push3 p = {n / 2, 7, h};
        vkc_arg a = {.buffer = bufs[0], .offset = h * (n / 2) * 4, .size = (n / 2) * 4};
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                                  .args = &a,
                                                                  .arg_count = 1,
                                                                  .push = &p,
                                                                  .push_size = 12,
                                                                  .count = n / 2}),
                         VKC_SUCCESS);
        for (uint32_t j = h * (n / 2); j < (h + 1) * (n / 2); ++j)
            ref[0][j] = ref[0][j] * 7 + h;
    }
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
    assert_int_equal(info.barriers, 0);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    /* an explicit barrier splits otherwise independent work */
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    for (uint32_t w = 0; w < 2; ++w) {
        push3 p = {n, 1, 1};
        vkc_arg a = arg(bufs[w]);
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                                  .args = &a,
                                                                  .arg_count = 1,
                                                                  .push = &p,
                                                                  .push_size = 12,
                                                                  .count = n}),
                         VKC_SUCCESS);
        for (uint32_t j = 0; j < n; ++j)
            ref[w][j] += 1;
        if (w == 0)
            assert_int_equal(vkc_seq_barrier(s), VKC_SUCCESS);
    }
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
    assert_int_equal(info.barriers, 1);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);

    uint32_t *out = malloc(n * 4);
    for (uint32_t w = 0; w < W; ++w) {
        assert_int_equal(vkc_buffer_download(bufs[w], 0, out, n * 4), VKC_SUCCESS);
        for (uint32_t j = 0; j < n; ++j)
            if (out[j] != ref[w][j])
                fail_msg("buffer %u element %u: %u, want %u", w, j, out[j], ref[w][j]);
        vkc_buffer_destroy(bufs[w]);
        free(ref[w]);
    }
    free(out);
    vkc_seq_destroy(s);
    vkc_kernel_destroy(inpl);
}

/* ---- copies and fills in sequences ------------------------------------------------------- */

static void test_copy_fill(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 4096;
    vkc_kernel *axpb = glsl_kernel(ctx, AXPB_GLSL, "axpb");
    vkc_buffer *a = buffer(ctx, n * 4), *b = buffer(ctx, n * 4), *c = buffer(ctx, n * 4);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    /* fill a, copy half of a into b, b = 2*b + 1, copy b into c at an offset */
    assert_int_equal(vkc_seq_fill(s, a, 0, n * 4, 21), VKC_SUCCESS);
    assert_int_equal(vkc_seq_fill(s, b, 0, n * 4, 5), VKC_SUCCESS);
    assert_int_equal(vkc_seq_copy(s, b, 0, a, 0, n * 2), VKC_SUCCESS);
    push3 p = {n, 2, 1};
    vkc_arg args[2] = {arg(b), arg(c)};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = axpb,
                                                              .args = args,
                                                              .arg_count = 2,
                                                              .push = &p,
                                                              .push_size = 12,
                                                              .count = n}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_copy(s, a, 16, c, 0, n * 4 - 16), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t *out = malloc(n * 4);
    assert_int_equal(vkc_buffer_download(a, 0, out, n * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t want = i < 4 ? 21 : ((i - 4) < n / 2 ? 21 * 2 + 1 : 5 * 2 + 1);
        if (out[i] != want)
            fail_msg("a[%u] = %u, want %u", i, out[i], want);
    }
    free(out);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(a);
    vkc_buffer_destroy(b);
    vkc_buffer_destroy(c);
    vkc_kernel_destroy(axpb);
}

/* ---- replay -----------------------------------------------------------------------------------
 */

/* A sequence of one dispatch of INPLACE_GLSL: x[0, n) = x + 1. */
static vkc_seq *inplace_seq(vkc_context *ctx, vkc_kernel *inpl, vkc_buffer *x, uint32_t n)
{
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    push3 p = {n, 1, 1};
    vkc_arg a = arg(x);
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .push = &p,
                                                              .push_size = 12,
                                                              .count = n}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    return s;
}

/* `rounds` submits of inplace_seq's s over n elements, each with new push
 * constants (x + 1..4, so a new recording), waited for every eighth and at
 * the end; returns what they added to every element. */
static uint32_t rerecord_rounds(vkc_context *ctx, vkc_seq *s, uint32_t n, uint32_t rounds)
{
    vkc_ticket t = {0};
    uint32_t added = 0;
    for (uint32_t i = 0; i < rounds; ++i) {
        push3 q = {n, 1, 1 + (i & 3)};
        assert_int_equal(vkc_seq_set_push(s, 0, &q, sizeof(q)), VKC_SUCCESS);
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        added += q.b;
        if (i % 8 == 0)
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    return added;
}

static void test_replay_steady_state(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 256, reps = 10000, rerecords = 500;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 1), VKC_SUCCESS);
    vkc_seq *s = inplace_seq(ctx, inpl, x, n);
    vkc_stats warm, now;
    vkc_ticket t = {0};
    uint32_t ref = 1;
    uint32_t armed_at_warm = 0; /* copies armed at the warm-up's end */
    /* Pure replay: nothing new is allocated after warm-up. */
    for (uint32_t i = 0; i < reps; ++i) {
        if (i == 100) {
            assert_int_equal(vkc_context_stats(ctx, &warm), VKC_SUCCESS);
            armed_at_warm = atomic_load(&ctx->arm_len);
        }
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        ref += 1;
        if (i % 64 == 0)
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS); /* an armed copy is cancelled */
    assert_int_equal(vkc_context_stats(ctx, &now), VKC_SUCCESS);
    assert_int_equal(now.command_buffers, warm.command_buffers);
    assert_int_equal(now.command_buffers_reset, warm.command_buffers_reset);
    assert_int_equal(now.descriptor_pools, warm.descriptor_pools);
    assert_int_equal(now.descriptor_sets, warm.descriptor_sets);
    assert_int_equal(now.memory_blocks, warm.memory_blocks);
    /* One submission per submit; armed submission (src/arm.c) moves it from
     * the submit that opens a copy to the one that armed it (many copies to
     * one vkQueueSubmit), and a cancelled copy adds one (the copies armed
     * before the window were submitted before it). */
    assert_true(now.submits - warm.submits ==
                reps - 100 + (now.armed_cancels - warm.armed_cancels) - armed_at_warm);
    /* New push constants before every submit: each submit re-records, into
     * recycled command buffers (a bounded few are in flight at once). */
    ref += rerecord_rounds(ctx, s, n, rerecords);
    assert_int_equal(vkc_context_stats(ctx, &now), VKC_SUCCESS);
    assert_true(now.command_buffers <= warm.command_buffers + 12);
    assert_true(now.command_buffers_reset >= warm.command_buffers_reset + rerecords - 12);
    uint32_t *out = malloc(n * 4);
    assert_int_equal(vkc_buffer_download(x, 0, out, n * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref);
    free(out);
    vkc_seq_info info;
    assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
    assert_int_equal(info.submits, reps + rerecords);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);
}

/* A long chain (more commands than VKC_SEQ_RING_LONG) with transfers among
 * its levels: each level barrier waits on the level before it only, so the
 * results check that the barriers chain, and a long sequence is submitted
 * again from its one recorded copy (no recording after the first). */
static void test_long_chain(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 256, steps = 1100, reps = 4;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, n * 4), *y = buffer(ctx, n * 4);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    /* x = 3 at the start of each submit; x = x + 1 per step, with every
     * 100th step a copy x -> y and y -> x (transfer levels between compute
     * ones); y = x at the end. */
    assert_int_equal(vkc_seq_fill(s, x, 0, n * 4, 3), VKC_SUCCESS);
    push3 p = {n, 1, 1};
    vkc_arg a = arg(x);
    const vkc_dispatch_desc d = {
        .kernel = inpl, .args = &a, .arg_count = 1, .push = &p, .push_size = 12, .count = n};
    for (uint32_t i = 0; i < steps; ++i) {
        assert_int_equal(vkc_seq_dispatch(s, &d), VKC_SUCCESS);
        if (i % 100 == 99) {
            assert_int_equal(vkc_seq_copy(s, y, 0, x, 0, n * 4), VKC_SUCCESS);
            assert_int_equal(vkc_seq_copy(s, x, 0, y, 0, n * 4), VKC_SUCCESS);
        }
    }
    assert_int_equal(vkc_seq_copy(s, y, 0, x, 0, n * 4), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_stats first, now;
    uint32_t *out = malloc(n * 4);
    for (uint32_t r = 0; r < reps; ++r) {
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        /* The first download makes y the host's to read: the second submit
         * records the sequence once more, with its host barrier. */
        if (r == 1)
            assert_int_equal(vkc_context_stats(ctx, &first), VKC_SUCCESS);
        assert_int_equal(vkc_buffer_download(y, 0, out, n * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < n; ++i)
            if (out[i] != 3 + steps)
                fail_msg("submit %u: y[%u] = %u, want %u", r, i, out[i], 3 + steps);
    }
    assert_int_equal(vkc_context_stats(ctx, &now), VKC_SUCCESS);
    /* The blocking downloads take units of their own: compare recordings by
     * what a re-recording of the sequence would add, thousands of commands. */
    assert_true(now.barriers - first.barriers < 100);
    free(out);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* set_arg swaps the buffer of a recorded dispatch; the next submit uses it. */
/* y[i] += x[i]: two bindings, so a pipeline layout of its own. */
static const char *ADD_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) readonly buffer X { uint x[]; };\n"
    "layout(set = 0, binding = 1) buffer Y { uint y[]; };\n"
    "layout(push_constant) uniform P { uint n; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) y[i] += x[i];\n"
    "}\n";

typedef struct reuse_op {
    int kernel;    /* 0: in place on `buf` at `half`, 1: y += x[0, n) */
    int buf, half; /* buf 0 is x (two halves of n), 1 is y */
    uint32_t a, b; /* in place: v = v * a + b */
} reuse_op;

/* Recording keeps descriptors and push constants that the previous
 * dispatch of the same layout left in place: repeated, changed and
 * interleaved buffers, offsets, push constants and layouts, recorded into
 * a sequence replayed twice and as immediate commands, against the CPU. */
static void test_state_reuse(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 256;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_kernel *add = glsl_kernel(ctx, ADD_GLSL, "add");
    vkc_buffer *bufs[2] = {buffer(ctx, 2 * n * 4), buffer(ctx, n * 4)};
    uint32_t *ref[2] = {malloc(2 * n * 4), malloc(n * 4)}, *got = malloc(2 * n * 4);
    for (uint32_t i = 0; i < 2 * n; ++i)
        ref[0][i] = i;
    for (uint32_t i = 0; i < n; ++i)
        ref[1][i] = 1000 + i;
    assert_int_equal(vkc_buffer_upload(bufs[0], 0, ref[0], 2 * n * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(bufs[1], 0, ref[1], n * 4), VKC_SUCCESS);
    static const reuse_op ops[] = {
        {0, 0, 0, 2, 1}, {0, 0, 0, 2, 1}, {0, 1, 0, 2, 1}, {0, 0, 1, 2, 1},
        {1, 0, 0, 0, 0}, {0, 0, 0, 2, 1}, {0, 0, 0, 3, 0}, {0, 0, 0, 3, 0},
        {0, 0, 1, 3, 0}, {1, 0, 0, 0, 0}, {0, 1, 0, 3, 0}, {0, 1, 0, 3, 0},
    };
    const uint32_t nops = VKC_ARRAY_COUNT(ops);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    /* rounds 0 and 1: the sequence; round 2: the same as immediate commands */
    for (int round = 0; round < 3; ++round) {
        for (uint32_t o = 0; o < nops; ++o) {
            const reuse_op *op = &ops[o];
            push3 p = {n, op->a, op->b};
            vkc_arg a[2];
            vkc_dispatch_desc d = {.count = n, .push = &p};
            if (op->kernel == 0) {
                a[0] = (vkc_arg){
                    .buffer = bufs[op->buf], .offset = (uint64_t)op->half * n * 4, .size = n * 4};
                d.kernel = inpl;
                d.arg_count = 1;
                d.push_size = 12;
                for (uint32_t i = 0; i < n; ++i) {
                    uint32_t *v = &ref[op->buf][op->half * n + i];
                    *v = *v * op->a + op->b;
                }
            } else {
                a[0] = (vkc_arg){.buffer = bufs[0], .size = n * 4, .access = VKC_ACCESS_READ};
                a[1] = arg(bufs[1]);
                d.kernel = add;
                d.arg_count = 2;
                d.push_size = 4;
                for (uint32_t i = 0; i < n; ++i)
                    ref[1][i] += ref[0][i];
            }
            d.args = a;
            if (round == 0)
                assert_int_equal(vkc_seq_dispatch(s, &d), VKC_SUCCESS);
            else if (round == 2)
                assert_int_equal(vkc_dispatch(ctx, &d), VKC_SUCCESS);
        }
        vkc_ticket t;
        if (round == 0)
            assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
        if (round < 2)
            assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        else
            assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        for (int b = 0; b < 2; ++b) {
            const uint32_t len = b == 0 ? 2 * n : n;
            assert_int_equal(vkc_buffer_download(bufs[b], 0, got, len * 4), VKC_SUCCESS);
            for (uint32_t i = 0; i < len; ++i)
                if (got[i] != ref[b][i])
                    fail_msg("round %d buffer %d [%u] = %u, want %u", round, b, i, got[i],
                             ref[b][i]);
        }
    }
    vkc_seq_destroy(s);
    for (int b = 0; b < 2; ++b) {
        vkc_buffer_destroy(bufs[b]);
        free(ref[b]);
    }
    free(got);
    vkc_kernel_destroy(add);
    vkc_kernel_destroy(inpl);
}

static void test_set_arg(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 512;
    vkc_kernel *axpb = glsl_kernel(ctx, AXPB_GLSL, "axpb");
    vkc_buffer *x = buffer(ctx, n * 4), *y1 = buffer(ctx, n * 4), *y2 = buffer(ctx, n * 4);
    uint32_t *hx = random_u32(n, 9), *out = malloc(n * 4);
    assert_int_equal(vkc_buffer_upload(x, 0, hx, n * 4), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    push3 p = {n, 3, 4};
    vkc_arg args[2] = {arg(x), arg(y1)};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = axpb,
                                                              .args = args,
                                                              .arg_count = 2,
                                                              .push = &p,
                                                              .push_size = 12,
                                                              .count = n}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    vkc_arg a2 = arg(y2);
    assert_int_equal(vkc_seq_set_arg(s, 0, 1, &a2), VKC_SUCCESS);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    for (int which = 0; which < 2; ++which) {
        assert_int_equal(vkc_buffer_download(which ? y2 : y1, 0, out, n * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < n; ++i)
            assert_int_equal(out[i], 3 * hx[i] + 4);
    }
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y1);
    vkc_buffer_destroy(y2);
    vkc_kernel_destroy(axpb);
    free(hx);
    free(out);
}

/* ---- tickets and waits ------------------------------------------------------------------------
 */

static void test_wait_timeout(void **state)
{
    vkc_context *ctx = *state;
    vkc_kernel *spin = glsl_kernel(ctx, SPIN_GLSL, "spin");
    const uint32_t groups = 16384, n = groups * 64;
    vkc_buffer *x = buffer(ctx, n * 4ull);
    const vkc_device_info *d = vkc_context_device(ctx);
    /* ~1e9 LCG steps on a CPU (about a second), ~2.5e11 on a GPU. */
    uint32_t iters = d->type == VKC_DEVICE_TYPE_CPU ? 250 : 60000;
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    vkc_arg a = arg(x);
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = spin,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .push = &iters,
                                                              .push_size = 4,
                                                              .groups = {groups, 1, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, 1000000), VKC_TIMEOUT);
    vkc_result pr = vkc_poll(ctx, t);
    assert_true(pr == VKC_NOT_READY || pr == VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_poll(ctx, t), VKC_SUCCESS);
    uint32_t *out = malloc(n * 4ull);
    assert_int_equal(vkc_buffer_download(x, 0, out, n * 4ull), VKC_SUCCESS);
    for (uint32_t k = 0; k < 512; ++k) {
        uint32_t idx = (k * 2654435761u) % n, v = idx;
        for (uint32_t i = 0; i < iters; ++i)
            v = v * 1664525u + 1013904223u;
        if (out[idx] != v)
            fail_msg("x[%u] = 0x%x, want 0x%x", idx, out[idx], v);
    }
    free(out);
    /* The zero ticket is always complete. */
    assert_int_equal(vkc_wait(ctx, (vkc_ticket){0}, 0), VKC_SUCCESS);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(spin);
}

/* ---- immediate mode -----------------------------------------------------------------------------
 */

static void test_immediate(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(ctx, &feat), VKC_SUCCESS);
    /* Twice around the ring of batches, and the eight batches kept for
     * repeats (vkc.h), before the warm-up snapshot; as many after. */
    const uint32_t n = 64, ring = feat.batch_size * (feat.batches_in_flight + 8);
    const uint32_t warm_at = 2 * ring + 3, count = 4 * ring + 5;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, n * 4), *y = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    vkc_stats warm, now;
    uint32_t ref = 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (i == warm_at)
            assert_int_equal(vkc_context_stats(ctx, &warm), VKC_SUCCESS);
        enqueue_inplace(ctx, inpl, x, (push3){n, 1, i});
        ref += i;
    }
    assert_int_equal(vkc_copy(ctx, y, 0, x, 0, n * 4), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_context_stats(ctx, &now), VKC_SUCCESS);
    /* Units retire when the timeline says so, and it is signalled sparsely
     * (pool pressure forces a signal): how many the ring has cycled through
     * by the snapshot depends on the GPU's pace, so the steady state may add
     * at most one unit per batch in flight, never more. */
    assert_true(now.command_buffers >= warm.command_buffers);
    assert_true(now.command_buffers <= warm.command_buffers + feat.batches_in_flight);
    assert_int_equal(now.memory_blocks, warm.memory_blocks);
    assert_int_equal(now.descriptor_pools, warm.descriptor_pools);
    uint32_t out[64];
    assert_int_equal(vkc_buffer_download(y, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref);
    /* a rejected enqueue leaves the batch usable */
    vkc_test_quiet_errors(1);
    push3 p = {n, 1, 1};
    vkc_arg a = arg(x);
    assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = inpl,
                                                            .args = &a,
                                                            .arg_count = 1,
                                                            .push = &p,
                                                            .push_size = 8,
                                                            .count = n}),
                     VKC_ERROR_MISMATCH);
    vkc_test_quiet_errors(0);
    assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = inpl,
                                                            .args = &a,
                                                            .arg_count = 1,
                                                            .push = &p,
                                                            .push_size = 12,
                                                            .count = n}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(x, 0, out, sizeof(out)), VKC_SUCCESS);
    assert_int_equal(out[0], ref + 1);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* Work that trickles in while the GPU is idle goes without a flush: a
 * batch whose first command has waited (VKC_IMM_IDLE_NS, 10 us) goes at its
 * second, and results are those of a flush. */
static void test_immediate_idle(void **state)
{
    vkc_context *ctx = *state;
    const uint32_t n = 64;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS); /* the queue is idle */
    vkc_stats st0, st;
    assert_int_equal(vkc_context_stats(ctx, &st0), VKC_SUCCESS);
    uint32_t ref = 0;
    for (uint32_t i = 0; i < 2; ++i) {
        if (i == 1)
            nanosleep(&(struct timespec){0, 2000000}, NULL); /* 2 ms: the batch has waited */
        enqueue_inplace(ctx, inpl, x, (push3){n, 2, i + 1});
        ref = 2 * ref + i + 1;
    }
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    /* Gone without a flush; with the idle rule off (VKC_IMM_FIXED=1 set
     * outside, experiments), still open. */
    const char *fixed = getenv("VKC_IMM_FIXED");
    assert_int_equal(st.submits, st0.submits + !(fixed && fixed[0] == '1'));
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    uint32_t out[64];
    assert_int_equal(vkc_buffer_download(x, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);
}

/* Enqueue x = x * a + b over the first `count` elements, K times, and
 * follow it on the CPU in ref. */
static void enqueue_steps(vkc_context *ctx, vkc_kernel *k, vkc_buffer *b, uint32_t *ref,
                          uint32_t count, uint32_t K, uint32_t a, uint32_t add)
{
    for (uint32_t j = 0; j < K; ++j) {
        enqueue_inplace(ctx, k, b, (push3){count, a, add});
        for (uint32_t i = 0; i < count; ++i)
            ref[i] = ref[i] * a + add;
    }
}

/* The same K steps as one batch: flushed, and waited for where asked. */
static void repeat_batch(vkc_context *ctx, vkc_kernel *k, vkc_buffer *b, uint32_t *ref,
                         uint32_t count, uint32_t K, uint32_t a, uint32_t add, bool wait)
{
    enqueue_steps(ctx, k, b, ref, count, K, a, add);
    vkc_ticket t;
    assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
    if (wait)
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
}

/* Whether immediate mode keeps batches for repeats (VKC_IMM_REUSE=0:
 * not, experiments). */
static bool imm_reuse_on(void)
{
    const char *env = getenv("VKC_IMM_REUSE");
    return !(env && env[0] == '0');
}

/* Whether a kept immediate batch recorded without the marker (for an idle
 * queue, no epilogue) is recorded once more, with it, at its first repeat:
 * the default (VKC_IMM_MARKER unset), where batches are kept and the
 * marker is on. */
static bool imm_remarks(vkc_context *ctx)
{
    return imm_reuse_on() && !getenv("VKC_IMM_MARKER") && vkc__marker_on(ctx);
}

static vkc_stats stats_of(vkc_context *ctx)
{
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    return st;
}

static void check_u32(vkc_buffer *b, const uint32_t *ref, uint32_t n)
{
    uint32_t out[256];
    assert_true(n <= 256);
    assert_int_equal(vkc_buffer_download(b, 0, out, (uint64_t)n * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref[i]);
}

/* Immediate mode's own waits (a ring slot's batch, the batches in flight)
 * go through the completion marker where it rules: a wait on a value whose
 * submit made no signal then adds none. Through the timeline each such wait
 * needed one (vkc__signal_through), and in NVIDIA's slow mode a signal cost
 * 17-40 us: on an H100, batches of one repeated 2001 times made 500 signals
 * that way, 16 through the marker (BENCHMARKS.md, 2026-12-06, job Z8).
 * Repeated batches, never waited for by the test: only the pool's sparse
 * signals (every VKC_SIGNAL_EVERY values) and the first recordings remain. */
static void test_immediate_wait_signals(void **state)
{
    vkc_context *ctx = *state;
    /* Its subject: batches kept and repeated (VKC_IMM_REUSE), each with the
     * marker (a kernel with the completion epilogue: without, a batch for
     * an idle queue goes unmarked and signals). */
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    if (!vkc__marker_on(ctx) || !atomic_load(&ctx->marker_trusted) || !f.completion_epilogue ||
        !imm_reuse_on())
        skip();
    enum { N = 64, BATCHES = 512 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    const vkc_stats a = stats_of(ctx);
    for (uint32_t i = 0; i < BATCHES; ++i) {
        enqueue_inplace(ctx, inpl, x, (push3){N, 1, 1});
        vkc_ticket t;
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
    }
    const vkc_stats b = stats_of(ctx);
    assert_int_equal(b.submits - a.submits, BATCHES);
    /* The sparse signals (4 for 512 values by default) and a few first
     * recordings: lavapipe made 4 in all, and 128 with the waits through the
     * timeline (one every fourth batch). */
    assert_true(b.timeline_signals - a.timeline_signals <= BATCHES / ctx->signal_every + 12);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    uint32_t ref[N];
    for (uint32_t i = 0; i < N; ++i)
        ref[i] = BATCHES;
    check_u32(x, ref, N);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);
}

/* A batch of exactly the commands of a batch before goes as that one was
 * recorded (vkc_stats.immediate_repeats), waited for or still in flight,
 * with the same results; a change of constants, buffer, count or length
 * records a new one; a batch with a copy repeats; batches that take turns
 * repeat too, and a cycle longer than what is kept stays right; destroying
 * a buffer or kernel lets go of the kept batches that name it, and of no
 * other. Results against the CPU. */
static void test_immediate_repeat(void **state)
{
    vkc_context *ctx = *state;
    /* K = 2: a batch of two goes whole whatever the timing (the idle rule
     * looks at its age at count 2 only), so rounds repeat on slow hosts
     * and under the sanitizers too. */
    enum { N = 64, K = 2, ROUNDS = 6 };
    const bool on = imm_reuse_on();
    /* A kept batch recorded without the marker (for an idle queue, no
     * epilogue: a copy last, or VKC_EPILOGUE=0) is recorded once more, with
     * it, at its first repeat (VKC_IMM_MARKER unset): one repeat fewer
     * where such a batch was waited for before it repeats; where it was
     * not, the queue may have been busy, so up to one fewer. */
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    const bool remark = imm_remarks(ctx);
    const uint32_t rg = remark && !f.completion_epilogue; /* GLSL batches too */
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4), *y = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 0), VKC_SUCCESS);
    uint32_t rx[N] = {0}, ry[N] = {0};
    uint64_t r0 = stats_of(ctx).immediate_repeats;
    for (uint32_t r = 0; r < ROUNDS; ++r) /* waited for */
        repeat_batch(ctx, inpl, x, rx, N, K, 2, 1, true);
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + (on ? ROUNDS - 1 - rg : 0));
    r0 = stats_of(ctx).immediate_repeats;
    for (uint32_t r = 0; r < 4 * ROUNDS; ++r) /* in flight, past the ring's depth */
        repeat_batch(ctx, inpl, x, rx, N, K, 2, 1, false);
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + (on ? 4 * ROUNDS : 0));
    /* Each change records a new batch, which the next repeat repeats. */
    r0 = stats_of(ctx).immediate_repeats;
    repeat_batch(ctx, inpl, x, rx, N, K, 2, 5, true);         /* constants */
    repeat_batch(ctx, inpl, y, ry, N, K, 2, 5, true);         /* buffer */
    repeat_batch(ctx, inpl, y, ry, N / 2, K, 2, 5, true);     /* count */
    repeat_batch(ctx, inpl, y, ry, N / 2, K - 1, 2, 5, true); /* length */
    assert_int_equal(stats_of(ctx).immediate_repeats, r0);
    repeat_batch(ctx, inpl, y, ry, N / 2, K - 1, 2, 5, true);
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + on - rg);
    /* A batch that ends with a copy (a result read back) repeats too, from
     * its second repeat by default (it carries no epilogue). */
    r0 = stats_of(ctx).immediate_repeats;
    for (uint32_t r = 0; r < 3; ++r) {
        enqueue_inplace(ctx, inpl, x, (push3){N, 3, 4});
        assert_int_equal(vkc_copy(ctx, y, 0, x, 0, N * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < N; ++i)
            ry[i] = rx[i] = rx[i] * 3 + 4;
        vkc_ticket t;
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + (on ? 2 : 0) - remark);
    /* Two batches that take turns: each repeats from its second turn. */
    r0 = stats_of(ctx).immediate_repeats;
    for (uint32_t r = 0; r < 2 * ROUNDS; ++r) {
        if (r & 1)
            repeat_batch(ctx, inpl, y, ry, N, K, 3, 2, r % 3 == 0);
        else
            repeat_batch(ctx, inpl, x, rx, N, K, 2, 3, r % 3 == 0);
    }
    assert_in_range(stats_of(ctx).immediate_repeats - r0, on ? 2 * ROUNDS - 2 - 2 * rg : 0,
                    on ? 2 * ROUNDS - 2 : 0);
    /* Four in turn (vkc.h: the last eight kept) repeat from their second
     * round; a cycle of twenty, longer than that, records every batch and
     * stays right. */
    r0 = stats_of(ctx).immediate_repeats;
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t c = 0; c < 4; ++c)
            repeat_batch(ctx, inpl, x, rx, N, K, 1, 100 + c, c == 3);
    assert_in_range(stats_of(ctx).immediate_repeats - r0, on ? 8 - 4 * rg : 0, on ? 8 : 0);
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t c = 0; c < 20; ++c)
            repeat_batch(ctx, inpl, x, rx, N, K, 1, 200 + c, c == 19);
    check_u32(y, ry, N);
    /* Destroys of what no kept batch names keep them. */
    repeat_batch(ctx, inpl, x, rx, N, K, 3, 1, true);
    r0 = stats_of(ctx).immediate_repeats;
    vkc_buffer *z = buffer(ctx, 16);
    vkc_buffer_destroy(z);
    vkc_kernel *other = glsl_kernel(ctx, INPLACE_GLSL, "other");
    vkc_kernel_destroy(other);
    repeat_batch(ctx, inpl, x, rx, N, K, 3, 1, true);
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + on - rg);
    /* The buffer a kept batch names, in flight: that batch goes, then the
     * buffer (the sanitizers' leak check sees the rest); the others stay. */
    repeat_batch(ctx, inpl, y, ry, N, 1, 1, 7, false);
    vkc_buffer_destroy(y);
    repeat_batch(ctx, inpl, x, rx, N, K, 3, 1, true);
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + 2 * on - rg);
    check_u32(x, rx, N);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);
}

/* x = x * 3 + add0 + j for j = 0..K-1, each its own dispatch (a batch
 * that differs from its neighbours), a copy of x into y after command
 * copy_at (none where it is K or more), then a flush. */
static void piece_batch(vkc_context *ctx, vkc_kernel *k, vkc_buffer *x, vkc_buffer *y, uint32_t *rx,
                        uint32_t *ry, uint32_t n, uint32_t K, uint32_t add0, uint32_t copy_at,
                        bool wait)
{
    for (uint32_t j = 0; j < K; ++j) {
        enqueue_inplace(ctx, k, x, (push3){n, 3, add0 + j});
        for (uint32_t i = 0; i < n; ++i)
            rx[i] = rx[i] * 3 + add0 + j;
        if (j == copy_at) {
            assert_int_equal(vkc_copy(ctx, y, 0, x, 0, (uint64_t)n * 4), VKC_SUCCESS);
            memcpy(ry, rx, (size_t)n * 4);
        }
    }
    vkc_ticket t;
    assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
    if (wait)
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
}

/* Buffers x (every word v) and y (zeros) of n words, and their CPU
 * copies rx and ry. */
static void piece_buffers(vkc_context *ctx, uint32_t n, uint32_t v, vkc_buffer **x, vkc_buffer **y,
                          uint32_t *rx, uint32_t *ry)
{
    *x = buffer(ctx, n * 4);
    *y = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(*x, 0, n * 4, v), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(*y, 0, n * 4, 0), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i) {
        rx[i] = v;
        ry[i] = 0;
    }
}

/* On a context whose batches end only at a flush (setup_pieces), a batch
 * of 12 or more buffer commands for an idle queue goes in pieces
 * (vkc_stats.immediate_splits), each depending on the one before: the
 * results are those of one batch, with a copy anywhere in it, batches of
 * 12 to 200, waited for or not; the same batch again goes whole, then
 * repeats whole (vkc_stats.immediate_repeats); a batch of 11 goes whole.
 * Results against the CPU. */
static void test_immediate_pieces(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 256 };
    const char *env_split = getenv("VKC_IMM_SPLIT");
    const bool on = !env_split || atoi(env_split) > 1; /* setup_pieces: 4 where unset */
    const bool reuse = imm_reuse_on();
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x, *y;
    uint32_t rx[N], ry[N];
    piece_buffers(ctx, N, 1, &x, &y, rx, ry);
    static const uint32_t sizes[] = {12, 15, 16, 31, 64, 200};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        assert_int_equal(vkc_finish(ctx), VKC_SUCCESS); /* an idle queue */
        const uint64_t s0 = stats_of(ctx).immediate_splits;
        piece_batch(ctx, inpl, x, y, rx, ry, N, sizes[i], 10 * (uint32_t)i, (uint32_t)i * 3, true);
        assert_int_equal(stats_of(ctx).immediate_splits, s0 + on);
        check_u32(x, rx, N);
        check_u32(y, ry, N);
    }
    /* A piece's submit leaves the timeline signal that a fresh recording
     * makes to the rest of its batch (NVIDIA's slow mode charges each
     * signal): where the marker rules, a batch of 64 in four pieces
     * signals at its rest and at most at its first piece too (where that
     * goes without the marker, only the timeline tells its end: with
     * VKC_EPILOGUE=0): at most two per batch, not one a piece (32 for
     * these 8 batches in four). Not counted where VKC_SIGNAL_EVERY below
     * 32 adds signals of its own. */
    if (on && atomic_load(&ctx->marker_trusted) && ctx->signal_every >= 32) {
        const vkc_stats a = stats_of(ctx);
        for (uint32_t r = 0; r < 8; ++r) {
            assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
            piece_batch(ctx, inpl, x, y, rx, ry, N, 64, 3000 + r, 64, true);
        }
        const vkc_stats b = stats_of(ctx);
        assert_int_equal(b.immediate_splits, a.immediate_splits + 8);
        assert_true(b.submits - a.submits >= 16);
        assert_true(b.timeline_signals - a.timeline_signals <= 16);
        check_u32(x, rx, N);
    }
    /* The same batch again, on an idle queue: its first piece is kept, so
     * it goes whole (recorded once more), and from then on repeats whole.
     * With nothing kept (VKC_IMM_REUSE=0) it goes in pieces every time.
     * Without the epilogue (VKC_EPILOGUE=0) its whole recording goes
     * without the marker, so its first repeat is recorded once more, with
     * it (VKC_IMM_MARKER unset). */
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    const uint32_t rg = imm_remarks(ctx) && !f.completion_epilogue;
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    piece_batch(ctx, inpl, x, y, rx, ry, N, 16, 500, 5, true);
    const uint64_t s0 = stats_of(ctx).immediate_splits, r0 = stats_of(ctx).immediate_repeats;
    piece_batch(ctx, inpl, x, y, rx, ry, N, 16, 500, 5, true);
    assert_int_equal(stats_of(ctx).immediate_splits, s0 + (on && !reuse));
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + (!on && reuse && !rg));
    check_u32(x, rx, N);
    check_u32(y, ry, N);
    piece_batch(ctx, inpl, x, y, rx, ry, N, 16, 500, 5, true);
    assert_int_equal(stats_of(ctx).immediate_splits, s0 + 2 * (on && !reuse));
    assert_int_equal(stats_of(ctx).immediate_repeats, r0 + (reuse ? (on ? 1 : 2) - rg : 0));
    check_u32(x, rx, N);
    check_u32(y, ry, N);
    /* Not waited for: batches behind batches, pieces or not. */
    for (uint32_t r = 0; r < 12; ++r)
        piece_batch(ctx, inpl, x, y, rx, ry, N, 8 + r * 5, 1000 + r, r * 4, false);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    check_u32(x, rx, N);
    check_u32(y, ry, N);
    /* Eleven commands go whole (a first piece of 4 and a rest of 8 at
     * least). */
    const uint64_t s1 = stats_of(ctx).immediate_splits;
    piece_batch(ctx, inpl, x, y, rx, ry, N, 11, 2000, 100, true);
    assert_int_equal(stats_of(ctx).immediate_splits, s1);
    check_u32(x, rx, N);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* Every fresh batch's submit counts as slow (setup_slow): the first batch
 * for an idle queue sends its first piece, whose submit is slow, then its
 * rest whole; later batches go whole (vkc_stats.immediate_slow_submits
 * counts each fresh submit). Results against the CPU. */
static void test_immediate_slow(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 64 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x, *y;
    uint32_t rx[N], ry[N];
    piece_buffers(ctx, N, 2, &x, &y, rx, ry);
    const vkc_stats st0 = stats_of(ctx);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    piece_batch(ctx, inpl, x, y, rx, ry, N, 40, 7, 20, true);
    vkc_stats st = stats_of(ctx);
    assert_int_equal(st.immediate_splits, st0.immediate_splits + 1);
    assert_int_equal(st.immediate_slow_submits, st0.immediate_slow_submits + 2);
    check_u32(x, rx, N);
    check_u32(y, ry, N);
    for (uint32_t r = 0; r < 3; ++r) {
        assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
        piece_batch(ctx, inpl, x, y, rx, ry, N, 24 + r, 100 + 10 * r, r, true);
        st = stats_of(ctx);
        assert_int_equal(st.immediate_splits, st0.immediate_splits + 1);
        assert_int_equal(st.immediate_slow_submits, st0.immediate_slow_submits + 3 + r);
        check_u32(x, rx, N);
        check_u32(y, ry, N);
    }
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* ---- threads
 * -------------------------------------------------------------------------------------- */

typedef struct thread_arg {
    vkc_context *ctx;
    vkc_kernel *k;
    uint32_t id;
    int ok;
    vkc_buffer *x; /* destroyed after the join (see test_threads) */
} thread_arg;

static void *record_thread(void *p)
{
    thread_arg *ta = p;
    const uint32_t n = 1024;
    vkc_buffer *x = NULL;
    vkc_seq *s = NULL;
    ta->ok = 0;
    if (vkc_buffer_create(ta->ctx, &(vkc_buffer_desc){.size = n * 4}, &x) != VKC_SUCCESS ||
        vkc_buffer_fill(x, 0, n * 4, ta->id) != VKC_SUCCESS ||
        vkc_seq_create(ta->ctx, NULL, &s) != VKC_SUCCESS)
        goto out;
    uint32_t ref = ta->id;
    for (int round = 0; round < 20; ++round) {
        if (vkc_seq_begin(s) != VKC_SUCCESS)
            goto out;
        for (uint32_t i = 0; i < 4; ++i) {
            push3 pc = {n, 3, ta->id + i};
            vkc_arg a = {.buffer = x};
            if (vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = ta->k,
                                                         .args = &a,
                                                         .arg_count = 1,
                                                         .push = &pc,
                                                         .push_size = 12,
                                                         .count = n}) != VKC_SUCCESS)
                goto out;
            ref = ref * 3 + ta->id + i;
        }
        vkc_ticket t;
        if (vkc_seq_end(s) != VKC_SUCCESS || vkc_seq_submit(s, &t) != VKC_SUCCESS)
            goto out;
        if (round % 2 ? vkc_wait(ta->ctx, t, UINT64_MAX) != VKC_SUCCESS : vkc_poll(ta->ctx, t) < 0)
            goto out;
    }
    uint32_t out[1024];
    if (vkc_buffer_download(x, 0, out, sizeof(out)) != VKC_SUCCESS)
        goto out;
    ta->ok = 1;
    for (uint32_t i = 0; i < n; ++i)
        if (out[i] != ref)
            ta->ok = 0;
out:
    vkc_seq_destroy(s);
    ta->x = x;
    return NULL;
}

static void test_threads(void **state)
{
    vkc_context *ctx = *state;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    pthread_t th[8];
    thread_arg ta[8];
    for (uint32_t i = 0; i < 8; ++i) {
        ta[i] = (thread_arg){ctx, inpl, i + 1, 0};
        assert_int_equal(pthread_create(&th[i], NULL, record_thread, &ta[i]), 0);
    }
    /* The buffers go after the join, as the kernel does: the validation
     * layer's own bookkeeping, when one thread destroys a buffer while
     * another resets a command pool whose last recording named it, reads
     * as a race inside the layer under TSan (a memset and a delete, both
     * called from the layer; one CI dry run in three). Concurrent destroys
     * of vkc objects stay covered by test_lifetime and test_threads.c. */
    for (uint32_t i = 0; i < 8; ++i) {
        pthread_join(th[i], NULL);
        vkc_buffer_destroy(ta[i].x);
        if (!ta[i].ok)
            fail_msg("thread %u: wrong result or error: %s", i, vkc_context_last_error(ctx));
    }
    vkc_kernel_destroy(inpl);
}

/* ---- bad input ----------------------------------------------------------------------------------
 */

static void test_bad_input(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    vkc_kernel *axpb = glsl_kernel(ctx, AXPB_GLSL, "axpb");
    vkc_buffer *x = buffer(ctx, 1024), *y = buffer(ctx, 1024);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    push3 p = {256, 1, 1};
    vkc_arg args[2] = {arg(x), arg(y)};
    vkc_dispatch_desc good = {
        .kernel = axpb, .args = args, .arg_count = 2, .push = &p, .push_size = 12, .count = 256};
    vkc_dispatch_desc d;
#define EXPECT(code, ...)                                                                          \
    do {                                                                                           \
        d = good;                                                                                  \
        __VA_ARGS__;                                                                               \
        assert_int_equal(vkc_seq_dispatch(s, &d), code);                                           \
        assert_true(strlen(vkc_context_last_error(ctx)) > 0);                                      \
        assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);                                           \
    } while (0)
    EXPECT(VKC_ERROR_MISMATCH, d.arg_count = 1);
    EXPECT(VKC_ERROR_MISMATCH, d.push_size = 8);
    EXPECT(VKC_ERROR_INVALID_ARGUMENT, d.push = NULL);
    EXPECT(VKC_ERROR_INVALID_HANDLE, d.kernel = NULL);
    EXPECT(VKC_ERROR_MISMATCH, d.count = 257); /* buffers hold 256 */
    EXPECT(VKC_ERROR_LIMIT, d.count = 1ull << 40);
    EXPECT(VKC_ERROR_LIMIT, d.groups[0] = UINT32_MAX; d.groups[1] = d.groups[2] = 1);
    EXPECT(VKC_ERROR_INVALID_ARGUMENT, d.groups[0] = 1);
    vkc_arg bad[2] = {{.buffer = x, .offset = 4}, arg(y)};
    if (vkc_context_device(ctx)->min_storage_buffer_offset_alignment > 4)
        EXPECT(VKC_ERROR_INVALID_ARGUMENT, d.args = bad);
    vkc_arg past[2] = {{.buffer = x, .offset = 512, .size = 1024}, arg(y)};
    EXPECT(VKC_ERROR_INVALID_ARGUMENT, d.args = past);
    vkc_arg nobuf[2] = {{.buffer = NULL}, arg(y)};
    EXPECT(VKC_ERROR_INVALID_HANDLE, d.args = nobuf);
    assert_int_equal(vkc_seq_dispatch(s, NULL), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    /* a latched error is returned again by end, and submit refuses */
    d = good;
    d.arg_count = 1;
    assert_int_equal(vkc_seq_dispatch(s, &d), VKC_ERROR_MISMATCH);
    assert_int_equal(vkc_seq_end(s), VKC_ERROR_MISMATCH);
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    /* submitting a sequence still being recorded */
    assert_int_equal(vkc_seq_dispatch(s, &good), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_ERROR_INVALID_STATE);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_ERROR_INVALID_STATE);
    assert_int_equal(vkc_seq_dispatch(s, &good), VKC_ERROR_INVALID_STATE);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    /* set_push / set_arg out of range */
    assert_int_equal(vkc_seq_set_push(s, 5, &p, 12), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_seq_set_push(s, 0, &p, 8), VKC_ERROR_MISMATCH);
    assert_int_equal(vkc_seq_set_arg(s, 0, 7, &args[0]), VKC_ERROR_INVALID_ARGUMENT);
    /* tickets: never issued, another context's */
    vkc_ticket never = {t.value + 1000, t.context_id};
    assert_int_equal(vkc_wait(ctx, never, 0), VKC_ERROR_INVALID_HANDLE);
    vkc_ticket foreign = {t.value, t.context_id + 12345};
    assert_int_equal(vkc_wait(ctx, foreign, 0), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_poll(ctx, foreign), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    /* copies and fills */
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_fill(s, x, 2, 8, 0), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_copy(s, x, 0, x, 8, 64), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_copy(s, x, 1000, y, 0, 64), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_copy(s, x, UINT64_MAX, y, 0, 64), VKC_ERROR_INVALID_ARGUMENT);
    /* NULL handles */
    assert_int_equal(vkc_seq_begin(NULL), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_seq_submit(NULL, &t), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_seq_create(ctx, NULL, NULL), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_dispatch(ctx, NULL), VKC_ERROR_INVALID_ARGUMENT);
    vkc_seq_destroy(NULL);
    /* the context still works */
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_dispatch(s, &good), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(axpb);
    vkc_test_quiet_errors(0);
#undef EXPECT
}

/* A binding range beyond maxStorageBufferRange is refused, not truncated. */
static void test_range_limit(void **state)
{
    vkc_context *ctx = *state;
    const vkc_device_info *d = vkc_context_device(ctx);
    if (d->max_storage_buffer_range >= d->max_memory_allocation_size ||
        d->max_storage_buffer_range > (1ull << 30)) {
        printf("skipped: maxStorageBufferRange %llu is not below what one test buffer may be\n",
               (unsigned long long)d->max_storage_buffer_range);
        return;
    }
    vkc_test_quiet_errors(1);
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *big = buffer(ctx, d->max_storage_buffer_range + 64);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    push3 p = {16, 1, 1};
    vkc_arg a = arg(big);
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .push = &p,
                                                              .push_size = 12,
                                                              .count = 16}),
                     VKC_ERROR_LIMIT);
    assert_non_null(strstr(vkc_context_last_error(ctx), "maxStorageBufferRange"));
    /* the same buffer bound by a range that fits works */
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    a.size = 64;
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = inpl,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .push = &p,
                                                              .push_size = 12,
                                                              .count = 16}),
                     VKC_SUCCESS);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(big);
    vkc_kernel_destroy(inpl);
    vkc_test_quiet_errors(0);
}

/* ---- fallbacks: descriptor-set pools and fences instead of push descriptors and timelines ---- */

static void fallbacks(vkc_context_desc *d)
{
    d->push_descriptors = VKC_OFF;
    d->timeline_semaphores = VKC_OFF;
    d->batch_size = 7;
    d->batches_in_flight = 2;
}

static void marker_mode(vkc_context_desc *d)
{
    d->wait_mode = VKC_WAIT_SPIN_MARKER;
}

/* An environment variable set (value, or unset where NULL) for a
 * context's creation, and put back as it was after (env_back). */
typedef struct env_held {
    const char *name;
    bool had;
    char keep[16];
} env_held;

static void env_put(env_held *h, const char *name, const char *value, bool overwrite)
{
    const char *was = getenv(name);
    h->name = name;
    h->had = was != NULL;
    snprintf(h->keep, sizeof(h->keep), "%s", was ? was : "");
    if (!value)
        unsetenv(name);
    else
        setenv(name, value, overwrite);
}

static void env_back(const env_held *h)
{
    if (h->had)
        setenv(h->name, h->keep, 1);
    else
        unsetenv(h->name);
}

/* A context made with VKC_IMM_FIXED=1, the given VKC_IMM_SLOW_US and
 * VKC_IMM_SPLIT (the count where the environment does not set one, unless
 * force), the environment as it was after. */
static int setup_imm(void **state, const char *split, const char *slow, bool force)
{
    static const char *const names[] = {"VKC_IMM_FIXED", "VKC_IMM_SPLIT", "VKC_IMM_SLOW_US"};
    const char *vals[] = {"1", split, slow};
    env_held held[3];
    for (int i = 0; i < 3; ++i)
        env_put(&held[i], names[i], vals[i], i != 1 || force);
    vkc_test_validation_reset();
    *state = vkc_test_context_create(NULL);
    for (int i = 0; i < 3; ++i)
        env_back(&held[i]);
    return *state ? 0 : -1;
}

/* Immediate batches end at batch_size or a flush only: where a batch ends
 * does not depend on how fast the host enqueues. Batches for an idle queue
 * go in four pieces unless the environment sets a count, whatever their
 * submits cost (no slow mode). */
static int setup_pieces(void **state)
{
    return setup_imm(state, "4", "1000000", false);
}

/* As setup_pieces, but every fresh batch's submit counts as slow
 * (VKC_IMM_SLOW_US=0) and four pieces whatever the environment says. */
static int setup_slow(void **state)
{
    return setup_imm(state, "4", "0", true);
}

/* A context whose open immediate batch is held (vkc__imm_held) while its
 * commands came in at most 10 ms apart on average, so that the test's
 * bursts are bursts however slowly a sanitizer makes it enqueue; the idle
 * rule on (VKC_IMM_FIXED unset); batches whole (VKC_IMM_SPLIT=1: on a GPU a
 * fresh batch of 12 or more for an idle queue would go in pieces, a submit
 * each). */
static int setup_hold(void **state)
{
    env_held held[3];
    env_put(&held[0], "VKC_IMM_HOLD_NS", "10000000", true);
    env_put(&held[1], "VKC_IMM_FIXED", NULL, true);
    env_put(&held[2], "VKC_IMM_SPLIT", "1", true);
    vkc_test_validation_reset();
    *state = vkc_test_context_create(NULL);
    for (int i = 0; i < 3; ++i)
        env_back(&held[i]);
    return *state ? 0 : -1;
}

/* Two adds of `add`, the second `pause` after the first: the submits made
 * meanwhile. */
static uint64_t paused_adds(vkc_context *ctx, vkc_kernel *k, vkc_buffer *x, uint32_t *ref,
                            uint32_t n, uint32_t add, const struct timespec *pause)
{
    const uint64_t s0 = stats_of(ctx).submits;
    enqueue_steps(ctx, k, x, ref, n, 1, 1, add);
    nanosleep(pause, NULL);
    enqueue_steps(ctx, k, x, ref, n, 1, 1, add);
    return stats_of(ctx).submits - s0;
}

/* An open batch that has waited for an idle GPU is held while it is the
 * start of a kept batch, or all of one, and came in as a burst: whole, it
 * repeats the kept batch (no recording, one submit). It goes as before
 * where its commands trickle in or stop matching, or where nothing is kept
 * (VKC_IMM_REUSE=0). Results are checked against the CPU. */
static void test_immediate_hold(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 64, K = 32 };
    const bool reuse = imm_reuse_on();
    const struct timespec pause = {0, 500000}, ms25 = {0, 25000000};
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4);
    uint32_t ref[N] = {0};
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 0), VKC_SUCCESS);
    /* Batch A (K adds of 3), recorded and kept; its first repeat may record
     * it once more, with the marker (imm_remarks). */
    for (int r = 0; r < 3; ++r)
        repeat_batch(ctx, inpl, x, ref, N, K, 1, 3, true);
    /* A's first two commands, 0.5 ms apart: held at the second (its age is
     * checked at power-of-two counts), and at 4, 8 and 16; the whole of A
     * goes at its K-th command as a repeat of the kept batch. */
    uint64_t s0 = stats_of(ctx).submits, r0 = stats_of(ctx).immediate_repeats;
    assert_int_equal(paused_adds(ctx, inpl, x, ref, N, 3, &pause), !reuse);
    enqueue_steps(ctx, inpl, x, ref, N, K - 3, 1, 3);
    if (reuse)
        assert_int_equal(stats_of(ctx).submits, s0);
    enqueue_steps(ctx, inpl, x, ref, N, 1, 1, 3);
    vkc_ticket t;
    assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
    if (reuse) {
        assert_int_equal(stats_of(ctx).submits, s0 + 1);
        assert_int_equal(stats_of(ctx).immediate_repeats, r0 + 1);
    }
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    check_u32(x, ref, N);
    /* A trickle: its second command 25 ms after the first, slower than the
     * pace (10 ms a command): it goes at once. */
    assert_int_equal(paused_adds(ctx, inpl, x, ref, N, 3, &ms25), 1);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    /* Other commands (adds of 5) are no start of A: they go at once. */
    assert_int_equal(paused_adds(ctx, inpl, x, ref, N, 5, &pause), 1);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    /* A's start, held, then a command that leaves A: the batch goes at the
     * next power-of-two count, the fourth. */
    s0 = stats_of(ctx).submits;
    assert_int_equal(paused_adds(ctx, inpl, x, ref, N, 3, &pause), !reuse);
    enqueue_steps(ctx, inpl, x, ref, N, 1, 1, 5);
    enqueue_steps(ctx, inpl, x, ref, N, 1, 1, 3);
    if (reuse)
        assert_int_equal(stats_of(ctx).submits, s0 + 1);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    check_u32(x, ref, N);
    /* A kept batch of K/2 adds of 7 and bursts of K such adds: held at
     * K/2, where the kept batch ends, the first burst goes whole at K as a
     * fresh recording and is kept; the next one repeats it. */
    for (int r = 0; r < 3; ++r)
        repeat_batch(ctx, inpl, x, ref, N, K / 2, 1, 7, true);
    for (int r = 0; r < 2; ++r) {
        s0 = stats_of(ctx).submits;
        r0 = stats_of(ctx).immediate_repeats;
        assert_int_equal(paused_adds(ctx, inpl, x, ref, N, 7, &pause), !reuse);
        enqueue_steps(ctx, inpl, x, ref, N, K / 2 - 2, 1, 7);
        if (reuse)
            assert_int_equal(stats_of(ctx).submits, s0);
        enqueue_steps(ctx, inpl, x, ref, N, K / 2, 1, 7);
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        if (reuse) {
            assert_int_equal(stats_of(ctx).submits, s0 + 1);
            assert_int_equal(stats_of(ctx).immediate_repeats, r0 + r);
        }
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        check_u32(x, ref, N);
    }
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);
}

static int setup_marker(void **state)
{
    vkc_test_validation_reset();
    *state = vkc_test_context_create(marker_mode);
    /* As on a discrete GPU: downloads go through the staging copy, so its
     * submissions carry the marker too. */
    vkc__memory_force_uncached(*state, true);
    vkc_context_features f;
    vkc_context_features_get(*state, &f);
    assert_int_equal(f.wait_mode, VKC_WAIT_SPIN_MARKER);
    return 0;
}

/* setup_marker with VKC_IMM_MARKER as given (NULL: unset, the default:
 * repeated immediate batches carry the marker; "0": immediate batches for
 * an idle queue whose last dispatch cannot carry the epilogue go without,
 * repeated or not), whatever the environment says. */
static int setup_marker_imm(void **state, const char *value)
{
    /* Fresh batches signal (VKC_SIGNAL_ADAPT off): the tests count which
     * batches carry the marker, and quiet ones all do. */
    env_held held[2];
    env_put(&held[0], "VKC_IMM_MARKER", value, true);
    env_put(&held[1], "VKC_SIGNAL_ADAPT", "0", true);
    const int r = setup_marker(state);
    for (int i = 0; i < 2; ++i)
        env_back(&held[i]);
    return r;
}

static int setup_marker_skip(void **state)
{
    return setup_marker_imm(state, "0");
}

static int setup_marker_kept(void **state)
{
    return setup_marker_imm(state, NULL);
}

/* Fill a buffer, read it back, check it: the wait behind the blocking calls
 * still works (on the marker or the timeline). */
static void check_fill_roundtrip(vkc_context *ctx, uint32_t value)
{
    vkc_buffer *x = buffer(ctx, 256);
    uint32_t got[64];
    assert_int_equal(vkc_buffer_fill(x, 0, 256, value), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(x, 0, got, sizeof(got)), VKC_SUCCESS);
    for (int i = 0; i < 64; ++i)
        assert_int_equal(got[i], value);
    vkc_buffer_destroy(x);
}

/* A host timeline semaphore the next submit waits on (at value 1). */
static VkSemaphore gate_close(vkc_context *ctx)
{
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &tci};
    VkSemaphore gate;
    assert_int_equal(ctx->vk.vkCreateSemaphore(ctx->device, &sci, NULL, &gate), VK_SUCCESS);
    assert_int_equal(vkc_wait_host_semaphore(ctx, gate, 1), VKC_SUCCESS);
    return gate;
}

static void gate_open(vkc_context *ctx, VkSemaphore gate)
{
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = gate;
    si.value = 1;
    assert_int_equal(ctx->vk.vkSignalSemaphore(ctx->device, &si), VK_SUCCESS);
}

/* Immediate batches for an idle queue go without the completion marker's
 * dispatch: a kernel from SPIR-V then has its ticket complete on the
 * timeline (the marker's count trails the timeline, and marker-carrying
 * submissions after them still complete right), while a GLSL kernel that
 * carries the completion epilogue keeps it (it adds no dispatch) and its
 * batch is counted. A unit recorded without the marker that finds the queue
 * busy gets a marker unit of its own in the same submission. */
static void test_marker_skip(void **state)
{
    vkc_context *ctx = *state;
    if (!vkc__marker_on(ctx))
        skip();
    const uint32_t n = 256, rounds = 20;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_kernel *spin = glsl_kernel(ctx, SPIN_GLSL, "spin");
    vkc_kernel *inpl_spv = spirv_twin(ctx, inpl);
    vkc_buffer *x = buffer(ctx, n * 4), *y = buffer(ctx, 1024 * 64 * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    push3 p = {n, 1, 1};
    vkc_arg a = arg(x);
    const vkc_dispatch_desc d = {
        .kernel = inpl, .args = &a, .arg_count = 1, .push = &p, .push_size = 12, .count = n};
    vkc_dispatch_desc d_spv = d;
    d_spv.kernel = inpl_spv;
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_dispatch(s, &d), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    uint32_t ref = 0;
    const uint64_t skew0 = atomic_load(&ctx->marker_skew);
    for (uint32_t i = 0; i < rounds; ++i) {
        vkc_ticket t;
        assert_int_equal(vkc_dispatch(ctx, &d_spv), VKC_SUCCESS);
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        ref++;
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        ref++;
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_poll(ctx, t), VKC_SUCCESS);
    }
    assert_int_equal(atomic_load(&ctx->marker_skew), skew0 + rounds);
    assert_true(vkc__marker_on(ctx));
    /* The GLSL kernel's idle batches: counted by the epilogue where it is
     * on (the skew stays), else as the SPIR-V kernel's. */
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    vkc_stats st0, st1;
    assert_int_equal(vkc_context_stats(ctx, &st0), VKC_SUCCESS);
    const uint64_t skew_glsl = atomic_load(&ctx->marker_skew);
    for (uint32_t i = 0; i < rounds; ++i) {
        vkc_ticket t;
        assert_int_equal(vkc_dispatch(ctx, &d), VKC_SUCCESS);
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        ref++;
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_poll(ctx, t), VKC_SUCCESS);
    }
    assert_int_equal(vkc_context_stats(ctx, &st1), VKC_SUCCESS);
    if (f.completion_epilogue) {
        assert_int_equal(atomic_load(&ctx->marker_skew), skew_glsl);
        /* Recorded once: the same batch again is the kept one, submitted again. */
        assert_true(st1.epilogue_records >= st0.epilogue_records + 1);
    } else {
        assert_int_equal(atomic_load(&ctx->marker_skew), skew_glsl + rounds);
    }
    uint32_t *out = malloc(n * 4);
    assert_int_equal(vkc_buffer_download(x, 0, out, n * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref);

    /* A long dispatch, gated on a host semaphore, keeps the queue busy while
     * a unit recorded without the marker is submitted (ungated, the GPU
     * may finish it first, which the submit sees on the timeline). */
    uint32_t iters = vkc_context_device(ctx)->type == VKC_DEVICE_TYPE_CPU ? 100 : 60000;
    vkc_arg ya = arg(y);
    vkc_seq *busy, *s2;
    assert_int_equal(vkc_seq_create(ctx, NULL, &busy), VKC_SUCCESS);
    assert_int_equal(vkc_seq_dispatch(busy, &(vkc_dispatch_desc){.kernel = spin,
                                                                 .args = &ya,
                                                                 .arg_count = 1,
                                                                 .push = &iters,
                                                                 .push_size = 4,
                                                                 .groups = {1024, 1, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(busy), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(ctx, NULL, &s2), VKC_SUCCESS);
    s2->marker_optional = true;
    assert_int_equal(vkc_seq_dispatch(s2, &d_spv), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s2), VKC_SUCCESS);
    vkc_ticket tb, t2;
    VkSemaphore gate = gate_close(ctx);
    assert_int_equal(vkc_seq_submit(busy, &tb), VKC_SUCCESS);
    const uint64_t skew1 = atomic_load(&ctx->marker_skew);
    assert_int_equal(vkc_seq_submit(s2, &t2), VKC_SUCCESS);
    ref++;
    const uint64_t skew2 = atomic_load(&ctx->marker_skew);
    const vkc_result held = vkc_poll(ctx, tb);
    /* Open the gate before any check can fail: a failed check must not
     * leave the context's teardown waiting on it. */
    gate_open(ctx, gate);
    assert_int_equal(skew2, skew1);        /* the marker went with it */
    assert_int_equal(held, VKC_NOT_READY); /* the queue was busy */
    assert_int_equal(vkc_wait(ctx, t2, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_poll(ctx, tb), VKC_SUCCESS);
    assert_true(vkc__marker_on(ctx));
    assert_int_equal(vkc_buffer_download(x, 0, out, n * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref);
    free(out);
    ctx->vk.vkDestroySemaphore(ctx->device, gate, NULL);
    vkc_seq_destroy(s2);
    vkc_seq_destroy(busy);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(spin);
    vkc_kernel_destroy(inpl_spv);
    vkc_kernel_destroy(inpl);
}

/* The default (setup_marker_kept): immediate batches of a kernel from
 * SPIR-V for an idle queue go without the marker while fresh (their first
 * submit signals the timeline anyway); the first repeat of such a batch is
 * recorded once more with the marker, and from then on it repeats with it:
 * the count keeps pace with the timeline (the skew grows by the one fresh
 * batch), the tickets complete through it, and no repeat makes a timeline
 * signal (without the marker each did: NVIDIA's slow mode charged each
 * 17-40 us). Then batches that change every time stay without the marker.
 * Results against the CPU. */
static void test_marker_kept_imm(void **state)
{
    vkc_context *ctx = *state;
    if (!vkc__marker_on(ctx) || !imm_reuse_on())
        skip();
    const uint32_t n = 256, rounds = 40;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_kernel *inpl_spv = spirv_twin(ctx, inpl);
    vkc_buffer *x = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    push3 p = {n, 1, 1};
    vkc_arg a = arg(x);
    const vkc_dispatch_desc d = {
        .kernel = inpl_spv, .args = &a, .arg_count = 1, .push = &p, .push_size = 12, .count = n};
    const uint64_t skew0 = atomic_load(&ctx->marker_skew);
    const vkc_stats st0 = stats_of(ctx);
    for (uint32_t i = 0; i < rounds; ++i) {
        vkc_ticket t;
        assert_int_equal(vkc_dispatch(ctx, &d), VKC_SUCCESS);
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_poll(ctx, t), VKC_SUCCESS);
    }
    const vkc_stats st1 = stats_of(ctx);
    assert_int_equal(atomic_load(&ctx->marker_skew), skew0 + 1);
    assert_true(vkc__marker_on(ctx));
    assert_int_equal(st1.submits - st0.submits, rounds);
    /* Two recordings, whose first submits signal; no repeat signals: 40
     * without the marker (not counted where VKC_SIGNAL_EVERY below 32 adds
     * signals of its own). */
    if (ctx->signal_every >= 32)
        assert_true(st1.timeline_signals - st0.timeline_signals <= 4);
    /* Batches that change every time: fresh, each without the marker. */
    for (uint32_t i = 0; i < rounds; ++i) {
        vkc_ticket t;
        p.b = 2 + i;
        assert_int_equal(vkc_dispatch(ctx, &d), VKC_SUCCESS);
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(atomic_load(&ctx->marker_skew), skew0 + 1 + rounds);
    assert_true(vkc__marker_on(ctx));
    uint32_t *out = malloc(n * 4);
    assert_non_null(out);
    assert_int_equal(vkc_buffer_download(x, 0, out, n * 4), VKC_SUCCESS);
    /* x = x + 1 forty times, then + 2, + 3, ..., + 41. */
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], rounds + (rounds * (rounds + 3)) / 2);
    free(out);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl_spv);
    vkc_kernel_destroy(inpl);
}

/* One in-place step x = x * p.a + p.b on x, in a sequence of its own. */
static vkc_seq *step_seq(vkc_context *ctx, vkc_kernel *k, vkc_buffer *x, const push3 *p,
                         vkc_toggle marker)
{
    vkc_seq *s;
    vkc_arg a = arg(x);
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.completion_marker = marker}, &s),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .push = p,
                                                              .push_size = 12,
                                                              .count = p->n}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    return s;
}

static void expect_all(vkc_buffer *x, uint32_t n, uint32_t ref)
{
    uint32_t *out = malloc(n * 4);
    assert_non_null(out);
    assert_int_equal(vkc_buffer_download(x, 0, out, n * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], ref);
    free(out);
}

/* A sequence whose completion the host's GPU takes (completion_marker OFF)
 * is recorded without the completion marker. Onto an idle queue it goes
 * without one (its ticket completes on the timeline, the count trails by
 * one more); onto a busy queue (behind a sequence gated on a host
 * semaphore) it gets a marker unit in the same submission. Waits on its
 * tickets and on marked ones around it, in both orders, see what the CPU
 * computes, under each set-up's wait mode; the two steps do not commute,
 * so x shows their order. */
static void test_marker_off(void **state)
{
    vkc_context *ctx = *state;
    const bool marker = vkc__marker_on(ctx);
    const uint32_t n = 256;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    const push3 pon = {n, 2, 1}, poff = {n, 3, 1};
    vkc_seq *on = step_seq(ctx, inpl, x, &pon, VKC_DEFAULT);
    vkc_seq *off = step_seq(ctx, inpl, x, &poff, VKC_OFF);
    assert_int_equal(on->units[0]->has_marker, marker);
    assert_false(off->units[0]->has_marker);
    uint32_t ref = 0;

    /* Idle queue: no marker; a marked submit right behind it, waited on
     * first or second. */
    for (uint32_t i = 0; i < 6; ++i) {
        const uint64_t skew = atomic_load(&ctx->marker_skew);
        vkc_ticket toff, ton;
        assert_int_equal(vkc_seq_submit(off, &toff), VKC_SUCCESS);
        ref = ref * 3 + 1;
        if (marker)
            assert_int_equal(atomic_load(&ctx->marker_skew), skew + 1);
        if (i % 3 == 0)
            assert_int_equal(vkc_wait(ctx, toff, UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_seq_submit(on, &ton), VKC_SUCCESS);
        ref = ref * 2 + 1;
        if (i % 3 == 1) {
            assert_int_equal(vkc_wait(ctx, toff, UINT64_MAX), VKC_SUCCESS);
            assert_int_equal(vkc_wait(ctx, ton, UINT64_MAX), VKC_SUCCESS);
        } else {
            assert_int_equal(vkc_wait(ctx, ton, UINT64_MAX), VKC_SUCCESS);
            assert_int_equal(vkc_poll(ctx, toff), VKC_SUCCESS);
        }
        expect_all(x, n, ref);
    }

    /* Busy queue: a marked submit gated on a host semaphore, the unmarked
     * one behind it, a marked one behind that. */
    for (int order = 0; ctx->features.timeline_semaphores && order < 2; ++order) {
        VkSemaphore gate = gate_close(ctx);
        vkc_ticket t[3];
        assert_int_equal(vkc_seq_submit(on, &t[0]), VKC_SUCCESS);
        const uint64_t skew = atomic_load(&ctx->marker_skew);
        assert_int_equal(vkc_seq_submit(off, &t[1]), VKC_SUCCESS);
        assert_int_equal(atomic_load(&ctx->marker_skew), skew); /* the marker went with it */
        assert_int_equal(vkc_seq_submit(on, &t[2]), VKC_SUCCESS);
        ref = ((ref * 2 + 1) * 3 + 1) * 2 + 1;
        assert_int_equal(vkc_poll(ctx, t[1]), VKC_NOT_READY);
        gate_open(ctx, gate);
        for (int k = 0; k < 3; ++k)
            assert_int_equal(vkc_wait(ctx, t[order ? k : 2 - k], UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
        ctx->vk.vkDestroySemaphore(ctx->device, gate, NULL);
        expect_all(x, n, ref);
    }
    assert_int_equal(vkc__marker_on(ctx), marker);

    /* The default: a sequence that releases an image goes without the
     * marker, unless asked for it. */
    vkc_image *img;
    assert_int_equal(vkc_image_create(ctx,
                                      &(vkc_image_desc){.format = VKC_FORMAT_R32UI,
                                                        .width = 16,
                                                        .height = 16,
                                                        .usage = VKC_IMAGE_USAGE_STORAGE},
                                      &img),
                     VKC_SUCCESS);
    for (int want = 0; want < 2; ++want) {
        vkc_seq *rel;
        assert_int_equal(
            vkc_seq_create(ctx, &(vkc_seq_desc){.completion_marker = want ? VKC_ON : VKC_DEFAULT},
                           &rel),
            VKC_SUCCESS);
        assert_int_equal(vkc_seq_release_image(rel, img, vkc_context_device(ctx)->queue_family,
                                               VK_IMAGE_LAYOUT_GENERAL),
                         VKC_SUCCESS);
        assert_int_equal(vkc_seq_end(rel), VKC_SUCCESS);
        assert_int_equal(rel->units[0]->has_marker, marker && want);
        vkc_seq_destroy(rel);
    }
    vkc_image_destroy(img);
    vkc_seq_destroy(off);
    vkc_seq_destroy(on);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);
}

/* The marker's self-test passes where it works, and turns the marker off
 * where the count is wrong or never moves; waits then use the timeline. */
static void test_marker_selftest(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features f;
    vkc_context_features_get(ctx, &f);
    assert_string_equal(f.wait_reason, "asked");
    bool ok = false;
    assert_int_equal(vkc__marker_check(ctx, &ok), VKC_SUCCESS);
    assert_true(ok);
    assert_true(vkc__marker_on(ctx));
    check_fill_roundtrip(ctx, 0x1234u);

    /* A count that ran ahead of the submissions ("seen wrongly"). */
    ctx->marker[0] += 5;
    assert_int_equal(vkc__marker_check(ctx, &ok), VKC_SUCCESS);
    assert_false(ok);
    assert_false(vkc__marker_on(ctx));
    assert_non_null(strstr(ctx->wait_reason, "self-test"));
    check_fill_roundtrip(ctx, 0x5678u);

    /* A marker whose count never moves ("never seen"). */
    vkc_context *c2 = vkc_test_context_create(marker_mode);
    c2->test_marker_mute = true;
    atomic_store(&c2->marker_on, true);
    assert_int_equal(vkc__marker_check(c2, &ok), VKC_SUCCESS);
    assert_false(ok);
    assert_false(vkc__marker_on(c2));
    assert_non_null(strstr(c2->wait_reason, "not seen"));
    c2->test_marker_mute = false;
    check_fill_roundtrip(c2, 0x9abcu);
    vkc_test_context_destroy(c2);
}

static void block_mode(vkc_context_desc *d)
{
    d->wait_mode = VKC_WAIT_BLOCK;
}

static void spin_mode(vkc_context_desc *d)
{
    d->wait_mode = VKC_WAIT_SPIN;
}

static int setup_block(void **state)
{
    vkc_test_validation_reset();
    *state = vkc_test_context_create(block_mode);
    return 0;
}

static int setup_spin(void **state)
{
    vkc_test_validation_reset();
    *state = vkc_test_context_create(spin_mode);
    return 0;
}

static int setup_fallback(void **state)
{
    vkc_test_validation_reset();
    *state = vkc_test_context_create(fallbacks);
    return 0;
}

/* The marker wait with a 1 ms spin budget (spin_ns 20 us). */
static void predict_mode(vkc_context_desc *d)
{
    d->wait_mode = VKC_WAIT_SPIN_MARKER;
    d->spin_ns = 20000;
}

/* VKC_WAIT_SPIN_THEN_BLOCK with a 1 ms spin. */
static void predict_timeline_mode(vkc_context_desc *d)
{
    d->wait_mode = VKC_WAIT_SPIN_THEN_BLOCK;
    d->spin_ns = 1000000;
}

static int setup_predict_as(void **state, void (*mode)(vkc_context_desc *))
{
    vkc_test_validation_reset();
    vkc_context *ctx = vkc_test_context_create(mode);
    ctx->test_wait_long = true; /* lavapipe takes the GPU's path */
    *state = ctx;
    return 0;
}

static int setup_predict(void **state)
{
    return setup_predict_as(state, predict_mode);
}

static int setup_predict_timeline(void **state)
{
    return setup_predict_as(state, predict_timeline_mode);
}

/* A gate opened from another thread ms after the context's count of long
 * waits passes long0, that is after the wait began (or after 2 s, should no
 * wait become long: the test's checks then fail). Timed from the wait's
 * start, not the thread's: on a loaded host the waiting thread may begin
 * its wait many ms after this one starts (4 TSan runs at once: a 40 ms
 * gate was waited 35 ms or less). */
typedef struct gate_later {
    vkc_context *ctx;
    VkSemaphore gate;
    unsigned ms;
    pthread_t thread;
    uint64_t long0;
} gate_later;

static void *gate_later_run(void *p)
{
    gate_later *g = p;
    for (int i = 0; i < 40000 && atomic_load(&g->ctx->stats.long_waits) <= g->long0; ++i)
        nanosleep(&(struct timespec){0, 50000L}, NULL);
    nanosleep(&(struct timespec){g->ms / 1000, (long)(g->ms % 1000) * 1000000L}, NULL);
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = g->gate;
    si.value = 1;
    (void)g->ctx->vk.vkSignalSemaphore(g->ctx->device, &si);
    return NULL;
}

/* The gates of test_wait_predict's rounds: destroyed at its end, after a
 * vkc_finish (the timeline's wait tells the validation layer they are
 * free; a finish after each round could itself be a long wait). */
typedef struct gated {
    vkc_context *ctx;
    vkc_seq *s;
    VkSemaphore gates[16];
    uint32_t n;
} gated;

/* Submit g->s behind a gate that opens ms into the wait and wait for it with
 * timeout (returned; a timed-out wait is followed by one without a limit
 * once the gate is open): *ns the first wait's time, *after the stats and
 * *learnt the context's long-wait time right after it. */
static vkc_result gated_wait(gated *g, unsigned ms, uint64_t timeout, uint64_t *ns,
                             vkc_stats *after, uint64_t *learnt)
{
    vkc_context *ctx = g->ctx;
    assert_true(g->n < 16);
    gate_later gl = {ctx, gate_close(ctx), ms, 0, atomic_load(&ctx->stats.long_waits)};
    g->gates[g->n++] = gl.gate;
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(g->s, &t), VKC_SUCCESS);
    assert_int_equal(pthread_create(&gl.thread, NULL, gate_later_run, &gl), 0);
    const uint64_t t0 = vkc__now_ns();
    const vkc_result r = vkc_wait(ctx, t, timeout);
    *ns = vkc__now_ns() - t0;
    *after = stats_of(ctx);
    *learnt = atomic_load(&ctx->wait_long_ns);
    pthread_join(gl.thread, NULL);
    if (r == VKC_TIMEOUT)
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    return r;
}

/* A wait past its spin budget (setup_predict: the marker's, 1 ms;
 * setup_predict_timeline: VKC_WAIT_SPIN_THEN_BLOCK's, 1 ms): the first
 * long wait blocks until done and is remembered; the next blocks only
 * until shortly before that time. A guess far too short blocks again after
 * its spin (the work is gated 80 ms); one longer than the timeout leaves
 * the timeout in charge; where the work ends within the guess's margin,
 * the spin sees it. VKC_WAIT_PREDICT=0 never guesses. Results against the
 * CPU after each. */
static void test_wait_predict(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    if (f.wait_mode != VKC_WAIT_SPIN_MARKER && f.wait_mode != VKC_WAIT_SPIN_THEN_BLOCK)
        skip(); /* the marker's self-test failed */
    const uint32_t n = 256;
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, n * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    gated g = {ctx, inplace_seq(ctx, inpl, x, n), {0}, 0};
    uint32_t ref = 0;
    uint64_t ns, learnt;
    const uint64_t ms = 1000000;
    /* The fill above may itself have been a long wait on a loaded host
     * (ASan, ctest -j2): it must not leave a guess behind. */
    atomic_store(&ctx->wait_long_ns, 0);
    const vkc_stats st0 = stats_of(ctx);
    vkc_stats st;

    /* No guess yet: blocks until done, and is remembered. */
    assert_int_equal(gated_wait(&g, 30, UINT64_MAX, &ns, &st, &learnt), VKC_SUCCESS);
    ref++;
    assert_int_equal(st.long_waits, st0.long_waits + 1);
    assert_int_equal(st.long_waits_guessed, st0.long_waits_guessed);
    assert_true(learnt >= 25 * ms && learnt <= ns);

    /* The same work again: guessed. */
    assert_int_equal(gated_wait(&g, 30, UINT64_MAX, &ns, &st, &learnt), VKC_SUCCESS);
    ref++;
    assert_int_equal(st.long_waits, st0.long_waits + 2);
    assert_int_equal(st.long_waits_guessed, st0.long_waits_guessed + 1);
    expect_all(x, n, ref);

    /* A guess of 20 ms for 80 ms of work: its spin ends by ~21 ms, long
     * before the gate opens, and it blocks again; the new time is kept.
     * (The guess is taken where the wait turns long before the guess less
     * its margin: 19 ms leaves a loaded host's late wake room. A guess of
     * 5 ms went untaken in 1 of 4 TSan runs at once.) */
    const vkc_stats st1 = stats_of(ctx);
    atomic_store(&ctx->wait_long_ns, 20 * ms);
    assert_int_equal(gated_wait(&g, 80, UINT64_MAX, &ns, &st, &learnt), VKC_SUCCESS);
    ref++;
    assert_int_equal(st.long_waits_guessed, st1.long_waits_guessed + 1);
    assert_int_equal(st.long_waits_spun, st1.long_waits_spun);
    assert_true(learnt >= 75 * ms);
    assert_true(ns >= 75 * ms);

    /* A timeout of 20 ms under a 5 ms guess, and under one of 400 ms:
     * both time out after 20 ms, and the context goes on. */
    for (int i = 0; i < 2; ++i) {
        atomic_store(&ctx->wait_long_ns, (i ? 400 : 5) * ms);
        assert_int_equal(gated_wait(&g, 60, 20 * ms, &ns, &st, &learnt), VKC_TIMEOUT);
        ref++;
        assert_true(ns >= 20 * ms);
    }
    expect_all(x, n, ref);

    /* A guess of 640 ms: blocked until 620, spinning until 660; the gate
     * opens about 633 ms in (632 after the wait turns long, its spin budget
     * of about 1 ms in). Up to three tries, for a loaded host's late
     * wakes. */
    bool spun = false;
    for (int i = 0; i < 3 && !spun; ++i) {
        const vkc_stats st2 = stats_of(ctx);
        atomic_store(&ctx->wait_long_ns, 640 * ms);
        assert_int_equal(gated_wait(&g, 632, UINT64_MAX, &ns, &st, &learnt), VKC_SUCCESS);
        ref++;
        spun = st.long_waits_spun > st2.long_waits_spun;
    }
    assert_true(spun);

    /* VKC_WAIT_PREDICT=0: a long wait neither guesses nor is kept. */
    ctx->wait_predict = false;
    atomic_store(&ctx->wait_long_ns, 0);
    const vkc_stats st3 = stats_of(ctx);
    assert_int_equal(gated_wait(&g, 30, UINT64_MAX, &ns, &st, &learnt), VKC_SUCCESS);
    ref++;
    assert_int_equal(st.long_waits, st3.long_waits + 1);
    assert_int_equal(st.long_waits_guessed, st3.long_waits_guessed);
    assert_int_equal(learnt, 0);
    expect_all(x, n, ref);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    for (uint32_t i = 0; i < g.n; ++i)
        ctx->vk.vkDestroySemaphore(ctx->device, g.gates[i], NULL);
    vkc_seq_destroy(g.s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(inpl);

    /* The variable turns it off. */
    env_held h;
    env_put(&h, "VKC_WAIT_PREDICT", "0", true);
    vkc_context *c2 = vkc_test_context_create(predict_mode);
    env_back(&h);
    assert_false(c2->wait_predict);
    vkc_test_context_destroy(c2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, vkc_test_setup, vkc_test_teardown)
#define TF(f) cmocka_unit_test_setup_teardown(f, setup_fallback, vkc_test_teardown)
#define TM(f) cmocka_unit_test_setup_teardown(f, setup_marker, vkc_test_teardown)
#define TMS(f) cmocka_unit_test_setup_teardown(f, setup_marker_skip, vkc_test_teardown)
#define TMK(f) cmocka_unit_test_setup_teardown(f, setup_marker_kept, vkc_test_teardown)
#define TB(f) cmocka_unit_test_setup_teardown(f, setup_block, vkc_test_teardown)
#define TS(f) cmocka_unit_test_setup_teardown(f, setup_spin, vkc_test_teardown)
#define TX(f) cmocka_unit_test_setup_teardown(f, setup_pieces, vkc_test_teardown)
#define TW(f) cmocka_unit_test_setup_teardown(f, setup_slow, vkc_test_teardown)

/* `batches` immediate batches of two in-place dispatches on the n words of
 * y, flushed one by one, each with other constants (so each is recorded),
 * waited for every fourth and at the end; returns what y's words become
 * from 0. */
static uint32_t rerecord_batches(vkc_context *ctx, vkc_kernel *inpl, vkc_buffer *y, uint32_t n,
                                 uint32_t batches)
{
    vkc_ticket t = {0};
    uint32_t ry = 0;
    for (uint32_t i = 0; i < batches; ++i) {
        enqueue_inplace(ctx, inpl, y, (push3){n, 1, 1 + (i & 7)});
        enqueue_inplace(ctx, inpl, y, (push3){n, 2, 0});
        ry = (ry + 1 + (i & 7)) * 2;
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        if (i % 4 == 0)
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    return ry;
}

/* VKC_FIRST_SIGNAL=0 (experiments): a recording's first submit leaves the
 * timeline unsignalled where the marker is trusted, and the pool asks for
 * a signal once VKC_ASK_PENDING units wait for one. Sequences recorded
 * anew before every submit and immediate batches recorded every time
 * (VKC_IMM_REUSE=0, VKC_IMM_MARKER=1) still get the right results, most of
 * their submits signal nothing, and the pool stays bounded. */
static int setup_first_signal_off(void **state)
{
    static const char *const names[] = {"VKC_FIRST_SIGNAL", "VKC_IMM_MARKER", "VKC_IMM_REUSE"};
    static const char *const vals[] = {"0", "1", "0"};
    env_held held[3];
    for (int i = 0; i < 3; ++i)
        env_put(&held[i], names[i], vals[i], true);
    const int r = setup_marker(state);
    for (int i = 0; i < 3; ++i)
        env_back(&held[i]);
    return r;
}

static void test_first_signal_off(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 256, ROUNDS = 300, BATCHES = 200 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4), *y = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 1), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 0), VKC_SUCCESS);
    vkc_seq *s = inplace_seq(ctx, inpl, x, N);
    uint32_t rx = 1;
    const vkc_stats s0 = stats_of(ctx);
    /* New push constants before every submit: each one a new recording. */
    rx += rerecord_rounds(ctx, s, N, ROUNDS);
    /* Immediate batches of two, each recorded (constants differ). */
    const uint32_t ry = rerecord_batches(ctx, inpl, y, N, BATCHES);
    const vkc_stats s1 = stats_of(ctx);
    expect_all(x, N, rx);
    expect_all(y, N, ry);
    /* With a signal on every first submit there would be ROUNDS + BATCHES;
     * the pool's asks come about once every VKC_ASK_PENDING (16) of them. */
    const uint64_t signals = s1.timeline_signals - s0.timeline_signals;
    assert_true(signals < (ROUNDS + BATCHES) / 4);
    /* Bounded: the units that wait for a signal, the ones in flight and the
     * free ones (43 new ones on lavapipe, 2 cores), not one per submit; and
     * units are reused. */
    assert_true(s1.command_buffers - s0.command_buffers <= (ROUNDS + BATCHES) / 5);
    assert_true(s1.command_buffers_reset - s0.command_buffers_reset >= (ROUNDS + BATCHES) / 2);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* VKC_SIGNAL_ADAPT as adapt (NULL: unset, the device's default) with
 * every verdict quiet (VKC_SIGNAL_SLOW_US "0") or none ("1000000"),
 * immediate batches recorded every time (VKC_IMM_REUSE=0) and ended by
 * flushes only (VKC_IMM_FIXED=1), on the marker context. */
static int setup_adapt_as(void **state, const char *adapt, const char *slow)
{
    static const char *const names[] = {"VKC_SIGNAL_ADAPT", "VKC_SIGNAL_SLOW_US", "VKC_IMM_REUSE",
                                        "VKC_IMM_FIXED", "VKC_FIRST_SIGNAL"};
    const char *vals[] = {adapt, slow, "0", "1", NULL};
    env_held held[5];
    for (int i = 0; i < 5; ++i)
        env_put(&held[i], names[i], vals[i], true);
    const int r = setup_marker(state);
    for (int i = 0; i < 5; ++i)
        env_back(&held[i]);
    return r;
}

static int setup_adapt_slow(void **state)
{
    return setup_adapt_as(state, "1", "0");
}

static int setup_adapt_fast(void **state)
{
    return setup_adapt_as(state, "1", "1000000");
}

static int setup_adapt_default(void **state)
{
    return setup_adapt_as(state, NULL, "0");
}

/* Immediate batches recorded every time choose their timeline signal from
 * what their flushes cost (VKC_SIGNAL_ADAPT): a window of 16 samples that
 * signal (recordings into new units are no samples), a window of 16 quiet
 * ones (marked, no signal), then a stretch of 256 batches on the verdict,
 * the windows again, and 512 on the next. Every verdict quiet: all but the
 * signalled windows go quiet; none: only the quiet windows do; off
 * (ADAPT_OFF), none goes quiet. Results against the CPU each way, under
 * validation. */
enum { ADAPT_SLOW, ADAPT_FAST, ADAPT_OFF };

static void test_signal_adapt(void **state, int mode)
{
    vkc_context *ctx = *state;
    enum { N = 256, BATCHES = 400, WINDOW = 16, SPAN = 256 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *y = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 0), VKC_SUCCESS);
    const vkc_stats s0 = stats_of(ctx);
    const uint32_t ry = rerecord_batches(ctx, inpl, y, N, BATCHES);
    const vkc_stats s1 = stats_of(ctx);
    uint32_t out[N];
    assert_int_equal(vkc_buffer_download(y, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(out[i], ry);
    const uint64_t quiet = s1.immediate_quiet_batches - s0.immediate_quiet_batches;
    const uint64_t signals = s1.timeline_signals - s0.timeline_signals;
    if (mode == ADAPT_OFF) {
        assert_int_equal(quiet, 0);
        assert_true(signals >= BATCHES);
    } else if (mode == ADAPT_SLOW) {
        /* Both quiet windows and the stretch of 256; not the two
         * signalled windows (16 or more each). */
        assert_true(quiet >= 2 * WINDOW + SPAN && quiet <= BATCHES - 2 * WINDOW);
        /* The signalled windows, and the pool's asks while quiet (one
         * about every 16 units). */
        assert_true(signals >= 2 * WINDOW && signals < BATCHES / 4);
        /* And the pool stays small: it asks for a signal 16 submits after
         * the last, before its free units run out (before the twenty-third
         * session it asked with none left, one unit more every round: 2
         * became 129 over 2,000 batches). */
        printf("%llu units after %d batches, most of them quiet\n",
               (unsigned long long)s1.command_buffers, BATCHES);
        assert_true(s1.command_buffers <= 32);
    } else {
        /* The two quiet windows only (a few more sends where new units
         * were recorded into). */
        assert_true(quiet >= 2 * WINDOW && quiet <= 5 * WINDOW);
        assert_true(signals >= BATCHES - quiet);
        /* Where a quiet window ends the pool shrinks back to 8 units
         * (vkc__pool_trim), as they come back. */
        printf("%llu units after %d batches, two quiet windows\n",
               (unsigned long long)s1.command_buffers, BATCHES);
        assert_true(s1.command_buffers <= 10); /* 19 without */
    }
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

static void test_signal_adapt_slow(void **state)
{
    test_signal_adapt(state, ADAPT_SLOW);
}

static void test_signal_adapt_fast(void **state)
{
    test_signal_adapt(state, ADAPT_FAST);
}

/* VKC_SIGNAL_ADAPT unset (setup_adapt_default, every verdict quiet where
 * it is on): on a GPU it is on, as in test_signal_adapt_slow; on a CPU
 * device it is off, so every fresh batch signals and none goes quiet. */
static void test_signal_adapt_default(void **state)
{
    const bool cpu = vkc_context_device(*state)->type == VKC_DEVICE_TYPE_CPU;
    test_signal_adapt(state, cpu ? ADAPT_OFF : ADAPT_SLOW);
}

/* After a burst (24 new recordings of a sequence held behind a closed
 * gate, one unit each), a steady flow of fresh batches, each waited for on
 * the marker, reuses a few warm units rather than taking every unit the
 * burst made in turn: the pool retires the oldest pending unit as soon as
 * the marker says it ran and its signal was submitted, before it pops a
 * free one. Before that it retired only once the free list was empty: 17
 * went round. No new units; results against the CPU. */
static int setup_pool_warm(void **state)
{
    return setup_adapt_as(state, "0", NULL);
}

static void test_pool_warm(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 256, BURST = 24, STEADY = 96 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4), *y = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 0), VKC_SUCCESS);
    vkc_seq *s = inplace_seq(ctx, inpl, x, N);
    uint32_t rx = 0, ry = 0;
    vkc_ticket t = {0};
    VkSemaphore gate = gate_close(ctx);
    vkc_result r = VKC_SUCCESS;
    for (uint32_t i = 0; i < BURST && r == VKC_SUCCESS; ++i) {
        /* New push constants: a new recording, a unit each. */
        const push3 q = {N, 1, 1 + (i & 7)};
        r = vkc_seq_set_push(s, 0, &q, sizeof(q));
        if (r == VKC_SUCCESS)
            r = vkc_seq_submit(s, &t);
        rx += q.b;
    }
    gate_open(ctx, gate); /* before any check can fail */
    assert_int_equal(r, VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    const uint64_t units = stats_of(ctx).command_buffers;
    assert_true(units >= BURST);
    const void *used[STEADY];
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < STEADY; ++i) {
        enqueue_inplace(ctx, inpl, y, (push3){N, 3, i & 15});
        ry = ry * 3 + (i & 15);
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        const void *u = ctx->pool.pending_tail; /* the unit just submitted */
        assert_non_null(u);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        uint32_t k = 0;
        while (k < distinct && used[k] != u)
            ++k;
        if (k == distinct)
            used[distinct++] = u;
    }
    printf("%u distinct units over %d waited batches, %llu alive after a burst of %d\n", distinct,
           STEADY, (unsigned long long)units, BURST);
    assert_true(distinct <= 4); /* 17 without */
    assert_int_equal(stats_of(ctx).command_buffers, units);
    expect_all(x, N, rx);
    expect_all(y, N, ry);
    /* After the queue's last use of it (a marker wait can return before
     * the driver's queue thread is done with the submission). */
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    ctx->vk.vkDestroySemaphore(ctx->device, gate, NULL);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* Batches of more than 16 commands are no samples: with every verdict
 * quiet, a flow of them never goes quiet (it signals, as before), and its
 * results are right. */
static void test_signal_adapt_big(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 64, BATCHES = 120, PER = 20 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *y = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 0), VKC_SUCCESS);
    const vkc_stats s0 = stats_of(ctx);
    uint32_t ry = 0;
    vkc_ticket t = {0};
    for (uint32_t i = 0; i < BATCHES; ++i) {
        for (uint32_t k = 0; k < PER; ++k) {
            enqueue_inplace(ctx, inpl, y, (push3){N, 1, 1 + ((i + k) & 3)});
            ry += 1 + ((i + k) & 3);
        }
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    const vkc_stats s1 = stats_of(ctx);
    uint32_t out[N];
    assert_int_equal(vkc_buffer_download(y, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(out[i], ry);
    assert_int_equal(s1.immediate_quiet_batches - s0.immediate_quiet_batches, 0);
    assert_true(s1.timeline_signals - s0.timeline_signals >= BATCHES);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* A long sequence (over VKC_SEQ_RING_LONG commands: one copy, never
 * armed): x += 1, `steps` times, on n elements. */
static vkc_seq *long_inplace_seq(vkc_context *ctx, vkc_kernel *inpl, vkc_buffer *x, uint32_t n,
                                 uint32_t steps)
{
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    push3 p = {n, 1, 1};
    vkc_arg a = arg(x);
    const vkc_dispatch_desc d = {
        .kernel = inpl, .args = &a, .arg_count = 1, .push = &p, .push_size = 12, .count = n};
    for (uint32_t i = 0; i < steps; ++i)
        assert_int_equal(vkc_seq_dispatch(s, &d), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    return s;
}

/* VKC_SIMULTANEOUS_USE=0 (experiments): copies that cannot be armed are
 * begun without SIMULTANEOUS_USE, and a submit of one whose earlier submit
 * is still pending waits for it first (validation, on here, would report a
 * pending command buffer submitted again). Results are right whatever the
 * submits' pace; copies that can be armed keep the flag. */
static int setup_simultaneous_off(void **state)
{
    env_held held;
    env_put(&held, "VKC_SIMULTANEOUS_USE", "0", true);
    const int r = vkc_test_setup(state);
    env_back(&held);
    return r;
}

static void test_simultaneous_off(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 256, STEPS = 1100, LONG_SUBMITS = 3, SHORT_SUBMITS = 40, BATCHES = 60 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4), *y = buffer(ctx, N * 4), *z = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 5), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(z, 0, N * 4, 0), VKC_SUCCESS);
    /* A long sequence (one copy: never armed): x += 1 STEPS times, submitted
     * back to back, waited for once. */
    vkc_seq *lng = long_inplace_seq(ctx, inpl, x, N, STEPS);
    vkc_ticket t = {0};
    for (uint32_t i = 0; i < LONG_SUBMITS; ++i)
        assert_int_equal(vkc_seq_submit(lng, &t), VKC_SUCCESS);
    assert_false(lng->units[0]->simultaneous);
    /* A short one (y += 1, inplace_seq), its copies in a ring, some
     * armable where the context arms: those keep the flag. */
    vkc_seq *sht = inplace_seq(ctx, inpl, y, N);
    uint32_t ry = 5;
    for (uint32_t i = 0; i < SHORT_SUBMITS; ++i) {
        assert_int_equal(vkc_seq_submit(sht, &t), VKC_SUCCESS);
        ry += 1;
        if (i % 10 == 9) /* round trips too, where arming starts */
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    for (int i = 0; i < VKC_SEQ_RING_MAX; ++i)
        if (sht->units[i])
            assert_int_equal(sht->units[i]->simultaneous, vkc__seq_armable(sht));
    /* Immediate batches, repeated (their kept copies submitted again) and
     * flushed without waiting: z = z * 1 + 3 each. */
    uint32_t rz = 0;
    for (uint32_t i = 0; i < BATCHES; ++i) {
        enqueue_inplace(ctx, inpl, z, (push3){N, 1, 3});
        rz += 3;
        assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
    }
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    uint32_t out[N];
    const struct {
        vkc_buffer *buf;
        uint32_t want;
    } checks[] = {{x, STEPS * LONG_SUBMITS}, {y, ry}, {z, rz}};
    for (size_t c = 0; c < sizeof(checks) / sizeof(checks[0]); ++c) {
        assert_int_equal(vkc_buffer_download(checks[c].buf, 0, out, sizeof(out)), VKC_SUCCESS);
        for (uint32_t i = 0; i < N; ++i)
            if (out[i] != checks[c].want)
                fail_msg("buffer %zu [%u] = %u, want %u", c, i, out[i], checks[c].want);
    }
    vkc_seq_destroy(lng);
    vkc_seq_destroy(sht);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_buffer_destroy(z);
    vkc_kernel_destroy(inpl);
}

/* The default: a long sequence's copy is begun without SIMULTANEOUS_USE
 * (raw Vulkan's command buffers carry no flag; some drivers pay for it at
 * submit). Round trips submit that copy again; submits that come while it
 * is still pending take the spare, a second copy with the flag, so that
 * submits never wait (validation, on here, would report a pending command
 * buffer submitted again). A short sequence's copies keep the flag. */
static void test_plain_long(void **state)
{
    vkc_context *ctx = *state;
    enum { N = 256, STEPS = 1100, ROUND_TRIPS = 3, BACK_TO_BACK = 3 };
    vkc_kernel *inpl = glsl_kernel(ctx, INPLACE_GLSL, "inplace");
    vkc_buffer *x = buffer(ctx, N * 4), *y = buffer(ctx, N * 4);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(y, 0, N * 4, 5), VKC_SUCCESS);
    vkc_seq *lng = long_inplace_seq(ctx, inpl, x, N, STEPS);
    vkc_stats s0, s1, s2;
    assert_int_equal(vkc_context_stats(ctx, &s0), VKC_SUCCESS);
    /* Round trips: each submit finds the copy done (the wait saw it), so
     * the same plain copy goes every time. */
    vkc_ticket t = {0};
    for (uint32_t i = 0; i < ROUND_TRIPS; ++i) {
        assert_int_equal(vkc_seq_submit(lng, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(vkc_context_stats(ctx, &s1), VKC_SUCCESS);
    assert_int_equal(s1.spare_submits, s0.spare_submits);
    assert_non_null(lng->units[0]);
    assert_false(lng->units[0]->simultaneous);
    assert_null(lng->units[1]);
    /* Back to back: the second submit comes microseconds after the first,
     * whose 1,100 dispatches take milliseconds even on lavapipe; it and
     * the third take the spare. */
    for (uint32_t i = 0; i < BACK_TO_BACK; ++i)
        assert_int_equal(vkc_seq_submit(lng, &t), VKC_SUCCESS);
    assert_int_equal(vkc_context_stats(ctx, &s2), VKC_SUCCESS);
    assert_true(s2.spare_submits > s1.spare_submits);
    assert_true(s2.spare_submits - s1.spare_submits <= BACK_TO_BACK - 1);
    assert_non_null(lng->units[1]);
    assert_true(lng->units[1]->simultaneous);
    assert_false(lng->units[0]->simultaneous);
    /* A short sequence: every copy has the flag. */
    vkc_seq *sht = inplace_seq(ctx, inpl, y, N);
    for (uint32_t i = 0; i < 8; ++i)
        assert_int_equal(vkc_seq_submit(sht, &t), VKC_SUCCESS);
    for (int i = 0; i < VKC_SEQ_RING_MAX; ++i)
        if (sht->units[i])
            assert_true(sht->units[i]->simultaneous);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    uint32_t out[N];
    assert_int_equal(vkc_buffer_download(x, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (out[i] != STEPS * (ROUND_TRIPS + BACK_TO_BACK))
            fail_msg("x[%u] = %u, want %u", i, out[i], STEPS * (ROUND_TRIPS + BACK_TO_BACK));
    assert_int_equal(vkc_buffer_download(y, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (out[i] != 5 + 8)
            fail_msg("y[%u] = %u, want 13", i, out[i]);
    vkc_seq_destroy(lng);
    vkc_seq_destroy(sht);
    vkc_buffer_destroy(x);
    vkc_buffer_destroy(y);
    vkc_kernel_destroy(inpl);
}

/* The pool's free list is a stack: the unit freed last comes back first;
 * units that were never submitted are free at once, and are reused
 * (reset), not made anew. */
static void test_unit_reuse(void **state)
{
    vkc_context *ctx = *state;
    enum { STEPS = 40 };
    vkc_stats s0, s1;
    assert_int_equal(vkc_context_stats(ctx, &s0), VKC_SUCCESS);
    vkc__cmd *first = NULL;
    for (uint32_t k = 0; k < STEPS; ++k) {
        vkc__cmd *c;
        assert_int_equal(vkc__cmd_acquire(ctx, &c), VKC_SUCCESS);
        if (k)
            assert_ptr_equal(c, first);
        first = c;
        vkc__cmd_release(ctx, c);
    }
    assert_int_equal(vkc_context_stats(ctx, &s1), VKC_SUCCESS);
    assert_true(s1.command_buffers - s0.command_buffers <= 1);
    assert_true(s1.command_buffers_reset - s0.command_buffers_reset >= STEPS - 1);
}

int main(void)
{
    /* clang-format off */
    const struct CMUnitTest tests[] = {
        T(test_counts),
        T(test_hazard_chain),
        T(test_barrier_counts),
        T(test_copy_fill),
        T(test_long_chain),
        T(test_replay_steady_state),
        T(test_set_arg),
        T(test_state_reuse),
        TF(test_state_reuse),
        T(test_wait_timeout),
        T(test_immediate),
        T(test_immediate_idle),
        cmocka_unit_test_setup_teardown(test_immediate_hold, setup_hold, vkc_test_teardown),
        T(test_immediate_repeat),
        T(test_immediate_wait_signals),
        TX(test_immediate_pieces),
        TW(test_immediate_slow),
        T(test_threads),
        T(test_bad_input),
        T(test_range_limit),
        TF(test_hazard_chain),
        TF(test_barrier_counts),
        TF(test_replay_steady_state),
        TF(test_immediate),
        TF(test_wait_timeout),
        TF(test_threads),
        TM(test_counts),
        TM(test_hazard_chain),
        TM(test_replay_steady_state),
        TM(test_long_chain),
        TM(test_wait_timeout),
        TM(test_immediate),
        TM(test_threads),
        TM(test_marker_selftest),
        TMS(test_marker_skip),
        TMK(test_marker_kept_imm),
        T(test_marker_off),
        TF(test_marker_off),
        TM(test_marker_off),
        TB(test_marker_off),
        TS(test_marker_off),
        cmocka_unit_test_setup_teardown(test_first_signal_off, setup_first_signal_off,
                                        vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_signal_adapt_slow, setup_adapt_slow,
                                        vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_signal_adapt_fast, setup_adapt_fast,
                                        vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_signal_adapt_default, setup_adapt_default,
                                        vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_signal_adapt_big, setup_adapt_slow,
                                        vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_pool_warm, setup_pool_warm, vkc_test_teardown),
        T(test_plain_long),
        T(test_unit_reuse),
        cmocka_unit_test_setup_teardown(test_simultaneous_off, setup_simultaneous_off,
                                        vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_wait_predict, setup_predict, vkc_test_teardown),
        cmocka_unit_test_setup_teardown(test_wait_predict, setup_predict_timeline,
                                        vkc_test_teardown),
    };
    /* clang-format on */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
