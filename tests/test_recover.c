/* Device loss and recovery. lavapipe never loses its device, so the loss is
 * injected (VK_ERROR_DEVICE_LOST from a submit or a wait). Checked: the
 * loss is latched once and every later call reports it at once; destroy
 * still frees everything (validation's object tracker, LeakSanitizer);
 * vkc_context_recover() brings the same handles back to work, with buffer
 * contents lost and sequences to be recorded again; results are right
 * after recovery. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *SCALE_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint n; uint a; uint b; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) x[i] = x[i] * pc.a + pc.b;\n"
    "}\n";

#define N 10000u

typedef struct push3 {
    uint32_t n, a, b;
} push3;

typedef struct world {
    vkc_context *ctx;
    vkc_kernel *add, *scale;
    vkc_buffer *a, *b, *c;
    vkc_seq *seq;
    uint32_t ha[N], hb[N], out[N];
} world;

static void make_world(world *w)
{
    w->ctx = vkc_test_context_create(NULL);
    assert_int_equal(vkc_kernel_create(w->ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size,
                                                          .name = "add"},
                                       &w->add),
                     VKC_SUCCESS);
    assert_int_equal(
        vkc_kernel_create_glsl(w->ctx, &(vkc_glsl_desc){.source = SCALE_GLSL}, &w->scale),
        VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(w->ctx, &(vkc_buffer_desc){.size = N * 4}, &w->a),
                     VKC_SUCCESS);
    assert_int_equal(
        vkc_buffer_create(w->ctx, &(vkc_buffer_desc){.size = N * 4, .memory = VKC_MEMORY_UPLOAD},
                          &w->b),
        VKC_SUCCESS);
    assert_int_equal(
        vkc_buffer_create(w->ctx, &(vkc_buffer_desc){.size = N * 4, .memory = VKC_MEMORY_READBACK},
                          &w->c),
        VKC_SUCCESS);
    uint64_t seed = 99;
    for (uint32_t i = 0; i < N; ++i) {
        w->ha[i] = (uint32_t)vkc_test_rand(&seed);
        w->hb[i] = (uint32_t)vkc_test_rand(&seed);
    }
    assert_int_equal(vkc_seq_create(w->ctx, &(vkc_seq_desc){"work"}, &w->seq), VKC_SUCCESS);
}

/* c = (a + b) * 5 + 2 */
static vkc_result record(world *w)
{
    uint32_t n = N;
    push3 p = {N, 5, 2};
    vkc_arg abc[3] = {{.buffer = w->a}, {.buffer = w->b}, {.buffer = w->c}};
    vkc_arg c1 = {.buffer = w->c};
    VKC_FORWARD(vkc_seq_begin(w->seq));
    VKC_FORWARD(vkc_seq_dispatch(w->seq, &(vkc_dispatch_desc){.kernel = w->add,
                                                              .args = abc,
                                                              .arg_count = 3,
                                                              .push = &n,
                                                              .push_size = 4,
                                                              .count = N}));
    VKC_FORWARD(vkc_seq_dispatch(w->seq, &(vkc_dispatch_desc){.kernel = w->scale,
                                                              .args = &c1,
                                                              .arg_count = 1,
                                                              .push = &p,
                                                              .push_size = sizeof(p),
                                                              .count = N}));
    return vkc_seq_end(w->seq);
}

/* c += add, through immediate mode. */
static vkc_result add_now(world *w, uint32_t add)
{
    vkc_arg c1 = {.buffer = w->c};
    push3 p = {N, 1, add};
    return vkc_dispatch(w->ctx, &(vkc_dispatch_desc){.kernel = w->scale,
                                                     .args = &c1,
                                                     .arg_count = 1,
                                                     .push = &p,
                                                     .push_size = sizeof(p),
                                                     .count = N});
}

static void upload(world *w)
{
    assert_int_equal(vkc_buffer_upload(w->a, 0, w->ha, N * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(w->b, 0, w->hb, N * 4), VKC_SUCCESS);
}

static void run_and_check(world *w)
{
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
    memset(w->out, 0, sizeof(w->out));
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (w->out[i] != (w->ha[i] + w->hb[i]) * 5 + 2)
            fail_msg("c[%u] = %u, want %u", i, w->out[i], (w->ha[i] + w->hb[i]) * 5 + 2);
}

static void free_world(world *w)
{
    /* Objects left alive on purpose: the context destroys them. */
    vkc_test_context_destroy(w->ctx);
}

/* Inject VK_ERROR_DEVICE_LOST at the next call named `call`. */
static void lose_at_next(void)
{
    vkc__fault = (vkc__fault_state){
        .armed = true, .fail_at = 1, .only = VKC__FAULT_VK, .forced = VK_ERROR_DEVICE_LOST};
}

static void disarm(void)
{
    vkc__fault = (vkc__fault_state){0};
}

/* Every entry point answers VKC_ERROR_DEVICE_LOST, at once and with a
 * message, and no call blocks. */
static void assert_all_lost(world *w, vkc_ticket earlier)
{
    vkc_context *ctx = w->ctx;
    vkc_ticket t;
    vkc_buffer *b = NULL;
    vkc_kernel *k = NULL;
    vkc_seq *s = NULL;
    uint32_t v = 0;
    vkc_arg c1 = {.buffer = w->c};
    push3 p = {N, 1, 0};
    vkc_dispatch_desc d = {
        .kernel = w->scale, .args = &c1, .arg_count = 1, .push = &p, .push_size = 12, .count = N};
#define LOST(expr)                                                                                 \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ != VKC_ERROR_DEVICE_LOST)                                                           \
            fail_msg("%s returned %s after device loss", #expr, vkc_result_string(r_));            \
        assert_non_null(strstr(vkc_context_last_error(ctx), "lost"));                              \
    } while (0)
    LOST(vkc_seq_submit(w->seq, &t));
    LOST(vkc_wait(ctx, earlier, UINT64_MAX));
    LOST(vkc_poll(ctx, earlier));
    LOST(vkc_finish(ctx));
    LOST(vkc_flush(ctx, &t));
    LOST(vkc_dispatch(ctx, &d));
    LOST(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 64}, &b));
    assert_null(b);
    LOST(vkc_buffer_upload(w->a, 0, &v, 4));
    LOST(vkc_buffer_download(w->a, 0, &v, 4));
    LOST(vkc_buffer_fill(w->a, 0, 4, 1));
    LOST(vkc_kernel_create(
        ctx, &(vkc_kernel_desc){.spirv = test_shaders_add, .spirv_size = test_shaders_add_size},
        &k));
    assert_null(k);
    LOST(vkc_seq_create(ctx, NULL, &s));
    assert_null(s);
    LOST(vkc_seq_begin(w->seq));
#undef LOST
}

static void test_lost_on_submit_then_recover(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w);
    upload(w);
    assert_int_equal(record(w), VKC_SUCCESS);
    run_and_check(w);
    vkc_ticket earlier;
    assert_int_equal(vkc_seq_submit(w->seq, &earlier), VKC_SUCCESS);
    assert_int_equal(vkc_wait(w->ctx, earlier, UINT64_MAX), VKC_SUCCESS);

    vkc_test_quiet_errors(1);
    lose_at_next();
    vkc_ticket t = {0};
    vkc_result r = vkc_seq_submit(w->seq, &t);
    const char *failed = vkc__fault.failed_call;
    disarm();
    assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
    assert_non_null(failed);
    assert_int_equal(t.value, 0);
    assert_int_equal(vkc_context_last_vk_result(w->ctx), VK_ERROR_DEVICE_LOST);
    assert_all_lost(w, earlier);
    vkc_test_quiet_errors(0);

    /* Recover: same handles, new device. */
    vkc_stats before, after;
    assert_int_equal(vkc_context_stats(w->ctx, &before), VKC_SUCCESS);
    r = vkc_context_recover(w->ctx);
    assert_int_equal(r, VKC_CONTENTS_LOST);
    assert_non_null(strstr(vkc_context_last_error(w->ctx), "contents lost"));
    assert_int_equal(vkc_context_stats(w->ctx, &after), VKC_SUCCESS);
    assert_int_equal(after.buffers, before.buffers);
    assert_int_equal(after.pipelines, before.pipelines);
    /* A ticket of work lost with the device reads as complete. */
    assert_int_equal(vkc_wait(w->ctx, earlier, UINT64_MAX), VKC_SUCCESS);
    /* The sequence must be recorded again. */
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_ERROR_INVALID_STATE);
    vkc_test_quiet_errors(0);
    assert_non_null(strstr(vkc_context_last_error(w->ctx), "record it again"));
    /* Contents are gone (the caller was told): upload again, record, run. */
    upload(w);
    assert_int_equal(record(w), VKC_SUCCESS);
    run_and_check(w);
    /* Immediate mode works again too. */
    assert_int_equal(add_now(w, 7), VKC_SUCCESS);
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(w->out[i], (w->ha[i] + w->hb[i]) * 5 + 2 + 7);
    /* Recovering a context that is not lost does nothing. */
    assert_int_equal(vkc_context_recover(w->ctx), VKC_SUCCESS);
    free_world(w);
    free(w);
}

/* Lost in a wait (blocking and polling), twice in a row on one context. */
static void test_lost_on_wait_twice(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w);
    for (int round = 0; round < 2; ++round) {
        upload(w);
        assert_int_equal(record(w), VKC_SUCCESS);
        run_and_check(w);
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
        vkc_test_quiet_errors(1);
        /* The next driver query or wait reports the loss. */
        vkc__fault = (vkc__fault_state){
            .armed = true, .fail_at = 1, .only = VKC__FAULT_VK, .forced = VK_ERROR_DEVICE_LOST};
        vkc_result r = round == 0 ? vkc_wait(w->ctx, t, UINT64_MAX) : vkc_poll(w->ctx, t);
        const char *failed = vkc__fault.failed_call;
        disarm();
        /* The work may have completed before the first driver call. */
        if (failed) {
            assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
            assert_all_lost(w, t);
        } else {
            assert_true(r == VKC_SUCCESS || r == VKC_NOT_READY);
            atomic_store(&w->ctx->lost, true); /* as a driver loss would latch it */
        }
        vkc_test_quiet_errors(0);
        assert_int_equal(vkc_context_recover(w->ctx), VKC_CONTENTS_LOST);
    }
    upload(w);
    assert_int_equal(record(w), VKC_SUCCESS);
    run_and_check(w);
    free_world(w);
    free(w);
}

/* Lost, never recovered: destroy frees everything (the layer's object
 * tracker reports any VkObject left; LeakSanitizer any host memory). */
static void test_lost_then_destroy(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w);
    upload(w);
    assert_int_equal(record(w), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    lose_at_next();
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_ERROR_DEVICE_LOST);
    disarm();
    /* Objects destroyed one by one after the loss, others by the context. */
    vkc_buffer_destroy(w->a);
    vkc_kernel_destroy(w->add);
    vkc_seq_destroy(w->seq);
    vkc_test_quiet_errors(0);
    free_world(w);
    free(w);
}

/* Images through a loss: every image call answers the loss; recovery
 * re-creates images (same handles, resting layout, contents lost) and
 * samplers; views are made again on first use; a recorded sequence that
 * names them must be recorded again and then computes right. */
static vkc_result record_images(vkc_seq *s, vkc_kernel *rmw, vkc_kernel *fetch, vkc_image *a,
                                vkc_image *b, vkc_sampler *sm, vkc_buffer *out)
{
    const uint32_t p[2] = {3, 1}, q[2] = {2, 5};
    vkc_arg ra = {.image = a};
    vkc_arg fa[2] = {{.image = a, .sampler = sm}, {.image = b}};
    vkc_result r = vkc_seq_begin(s);
    if (r == VKC_SUCCESS)
        r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = rmw,
                                                     .args = &ra,
                                                     .arg_count = 1,
                                                     .push = p,
                                                     .push_size = 8,
                                                     .groups = {2, 2, 1}});
    if (r == VKC_SUCCESS)
        r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = fetch,
                                                     .args = fa,
                                                     .arg_count = 2,
                                                     .push = q,
                                                     .push_size = 8,
                                                     .groups = {2, 2, 1}});
    if (r == VKC_SUCCESS)
        r = vkc_seq_copy_image_to_buffer(s, out, 0, b, NULL);
    return r == VKC_SUCCESS ? vkc_seq_end(s) : r;
}

static void run_images(vkc_context *ctx, vkc_seq *s, vkc_image *a, vkc_buffer *out)
{
    uint32_t in[256], got[256];
    for (uint32_t i = 0; i < 256; ++i)
        in[i] = i * 11u + 3u;
    assert_int_equal(vkc_image_upload(a, NULL, in, sizeof(in)), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(out, 0, got, sizeof(got)), VKC_SUCCESS);
    for (uint32_t i = 0; i < 256; ++i)
        assert_int_equal(got[i], (in[i] * 3u + 1u) * 2u + 5u);
}

static void test_lost_with_images(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_kernel *rmw, *fetch;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_img_rmw,
                                                          .spirv_size = test_shaders_img_rmw_size},
                                       &rmw),
                     VKC_SUCCESS);
    assert_int_equal(
        vkc_kernel_create(ctx,
                          &(vkc_kernel_desc){.spirv = test_shaders_img_fetch,
                                             .spirv_size = test_shaders_img_fetch_size},
                          &fetch),
        VKC_SUCCESS);
    vkc_image *a, *b;
    vkc_image_desc d = {.format = VKC_FORMAT_R32UI, .width = 16, .height = 16};
    assert_int_equal(vkc_image_create(ctx, &d, &a), VKC_SUCCESS);
    assert_int_equal(vkc_image_create(ctx, &d, &b), VKC_SUCCESS);
    vkc_sampler *sm;
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_SUCCESS);
    vkc_buffer *out;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 1024}, &out), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    assert_int_equal(record_images(s, rmw, fetch, a, b, sm, out), VKC_SUCCESS);
    run_images(ctx, s, a, out);

    vkc_test_quiet_errors(1);
    lose_at_next();
    vkc_ticket t = {0};
    vkc_result r = vkc_seq_submit(s, &t);
    disarm();
    assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
    uint32_t v[256] = {0};
    vkc_image *c = NULL;
    assert_int_equal(vkc_image_upload(a, NULL, v, sizeof(v)), VKC_ERROR_DEVICE_LOST);
    assert_int_equal(vkc_image_download(a, NULL, v, sizeof(v)), VKC_ERROR_DEVICE_LOST);
    assert_int_equal(vkc_image_clear(a, NULL, &(vkc_clear_value){{0}}), VKC_ERROR_DEVICE_LOST);
    assert_int_equal(vkc_image_create(ctx, &d, &c), VKC_ERROR_DEVICE_LOST);
    assert_null(c);
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_ERROR_DEVICE_LOST);
    vkc_test_quiet_errors(0);

    vkc_stats before, after;
    assert_int_equal(vkc_context_stats(ctx, &before), VKC_SUCCESS);
    assert_int_equal(vkc_context_recover(ctx), VKC_CONTENTS_LOST);
    assert_non_null(strstr(vkc_context_last_error(ctx), "2 image(s)"));
    assert_int_equal(vkc_context_stats(ctx, &after), VKC_SUCCESS);
    assert_int_equal(after.images, before.images);
    assert_int_equal(after.samplers, before.samplers);
    assert_int_equal(after.image_views, 0); /* made again on first use */
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_ERROR_INVALID_STATE);
    vkc_test_quiet_errors(0);
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_SUCCESS);
    assert_int_equal(record_images(s, rmw, fetch, a, b, sm, out), VKC_SUCCESS);
    run_images(ctx, s, a, out);
    vkc_test_context_destroy(ctx); /* the rest goes with the context */
}

/* `batches` immediate batches of one dispatch (c += 1), each flushed and
 * waited for; the count of quiet ones among them. */
static uint64_t quiet_batches(world *w, uint32_t batches)
{
    vkc_stats s0, s1;
    assert_int_equal(vkc_context_stats(w->ctx, &s0), VKC_SUCCESS);
    for (uint32_t i = 0; i < batches; ++i) {
        vkc_ticket t;
        assert_int_equal(add_now(w, 1), VKC_SUCCESS);
        assert_int_equal(vkc_flush(w->ctx, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(vkc_context_stats(w->ctx, &s1), VKC_SUCCESS);
    return s1.immediate_quiet_batches - s0.immediate_quiet_batches;
}

/* Immediate mode's adaptive signal (VKC_SIGNAL_ADAPT=1, every verdict quiet
 * here) starts over after recovery, with the signalled window, as in a new
 * context: a quiet stretch of the lost device does not run on. */
static void test_recover_signal_adapt(void **state)
{
    (void)state;
    static const char *const names[] = {"VKC_SIGNAL_ADAPT", "VKC_SIGNAL_SLOW_US", "VKC_IMM_REUSE",
                                        "VKC_IMM_FIXED"};
    static const char *const values[] = {"1", "0", "0", "1"};
    for (int i = 0; i < 4; ++i)
        setenv(names[i], values[i], 1);
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w);
    for (int i = 0; i < 4; ++i)
        unsetenv(names[i]);
    assert_int_equal(vkc_buffer_fill(w->c, 0, N * 4, 0), VKC_SUCCESS);
    /* 16 signalled, 16 quiet, then the quiet stretch. */
    assert_true(quiet_batches(w, 80) >= 32);

    vkc_test_quiet_errors(1);
    lose_at_next();
    vkc_ticket t = {0};
    vkc_result r = add_now(w, 1);
    if (r == VKC_SUCCESS)
        r = vkc_flush(w->ctx, &t);
    disarm();
    assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
    vkc_test_quiet_errors(0);
    assert_int_equal(vkc_context_recover(w->ctx), VKC_CONTENTS_LOST);

    assert_int_equal(vkc_buffer_fill(w->c, 0, N * 4, 0), VKC_SUCCESS);
    /* The signalled window first: none of these is quiet. */
    assert_int_equal(quiet_batches(w, 16), 0);
    /* Then the quiet window and the stretch again. */
    assert_true(quiet_batches(w, 40) >= 16);
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(w->out[i], 56u);
    free_world(w);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_with_images),
        cmocka_unit_test(test_lost_on_submit_then_recover),
        cmocka_unit_test(test_lost_on_wait_twice),
        cmocka_unit_test(test_lost_then_destroy),
        cmocka_unit_test(test_recover_signal_adapt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
