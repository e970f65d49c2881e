/* Bad input across the API, one table. Each case makes one bad call and
 * states the result it must return and a piece of the message that must be
 * recorded (logged on the context, or kept for vkc_last_create_error() when
 * no context is involved). Every message is forgotten before the call
 * under test (forget_messages), and the call must leave exactly one: a
 * stale message of an earlier call can never pass for its own. After every case the context must
 * still work: a small dispatch with checked results. At the end nothing is leaked (validation's
 * object tracker at destruction, LeakSanitizer in the sanitizer build). The count printed goes into
 * RELIABILITY.md. */
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256u

/* ---- fixture ------------------------------------------------------------------------------ */

typedef struct fx {
    vkc_context *ctx, *other;
    vkc_kernel *add; /* 3 bindings (a, b read; c written), 4 bytes of push */
    vkc_buffer *a, *b, *c, *small, *foreign;
    vkc_seq *seq; /* ended: a + b -> c */
    uint32_t ha[N], hb[N];
} fx;

static fx F;
static char g_last_msg[2048];
static unsigned g_msgs;

static void capture_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    if (id == VKC_LOG_ID_ERROR) {
        snprintf(g_last_msg, sizeof(g_last_msg), "%s", msg);
        g_msgs++;
        return;
    }
    vkc_test_log(user, level, id, msg);
}

static void capture_tweak(vkc_context_desc *d)
{
    d->logger.func = capture_log;
}

static void forget_context_error(vkc_context *ctx)
{
    if (!ctx)
        return;
    pthread_mutex_lock(&ctx->error_lock);
    ctx->last_error[0] = '\0';
    pthread_mutex_unlock(&ctx->error_lock);
}

/* Forget every message so far: the harness calls it before each case, and
 * a case with steps of its own calls it again right before the call under
 * test. */
static void forget_messages(void)
{
    g_last_msg[0] = '\0';
    g_msgs = 0;
    vkc__create_error[0] = '\0';
    forget_context_error(F.ctx);
    forget_context_error(F.other);
}

static vkc_arg arg(vkc_buffer *b)
{
    return (vkc_arg){.buffer = b};
}

static vkc_dispatch_desc add_desc(vkc_arg *args, const uint32_t *n, uint64_t count)
{
    return (vkc_dispatch_desc){
        .kernel = F.add, .args = args, .arg_count = 3, .push = n, .push_size = 4, .count = count};
}

/* The context still computes: c = a + b through the recorded sequence and
 * through immediate mode. */
static void check_still_works(const char *after)
{
    uint32_t out[N];
    vkc_ticket t;
    vkc_result r = vkc_buffer_fill(F.c, 0, N * 4, 0);
    if (r == VKC_SUCCESS)
        r = vkc_seq_submit(F.seq, &t);
    if (r == VKC_SUCCESS)
        r = vkc_wait(F.ctx, t, UINT64_MAX);
    if (r == VKC_SUCCESS)
        r = vkc_buffer_download(F.c, 0, out, sizeof(out));
    if (r != VKC_SUCCESS)
        fail_msg("after \"%s\" the context fails: %s: %s", after, vkc_result_string(r),
                 vkc_context_last_error(F.ctx));
    for (uint32_t i = 0; i < N; ++i)
        if (out[i] != F.ha[i] + F.hb[i])
            fail_msg("after \"%s\": c[%u] = %u, want %u", after, i, out[i], F.ha[i] + F.hb[i]);
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    assert_int_equal(vkc_buffer_fill(F.c, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_dispatch(F.ctx, &d), VKC_SUCCESS);
    assert_int_equal(vkc_finish(F.ctx), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(F.c, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (out[i] != F.ha[i] + F.hb[i])
            fail_msg("after \"%s\" (immediate): c[%u] = %u, want %u", after, i, out[i],
                     F.ha[i] + F.hb[i]);
}

/* ---- the cases ------------------------------------------------------------------------------ */

/* Context */
static vkc_result c_ctx_out_null(void)
{
    return vkc_context_create(NULL, NULL);
}
static vkc_result c_ctx_no_such_device(void)
{
    vkc_context *c = NULL;
    vkc_context_desc d = vkc_test_desc();
    d.validation = VKC_OFF;
    d.device = "no-such-device-anywhere";
    vkc_result r = vkc_context_create(&d, &c);
    assert_null(c);
    return r;
}
static vkc_result c_ctx_bad_queue_family(void)
{
    vkc_context *c = NULL;
    vkc_context_desc d = vkc_test_desc();
    d.validation = VKC_OFF;
    d.queue_family_override = true;
    d.queue_family = 99;
    vkc_result r = vkc_context_create(&d, &c);
    assert_null(c);
    return r;
}
static vkc_result c_features_out_null(void)
{
    return vkc_context_features_get(F.ctx, NULL);
}
static vkc_result c_stats_null_ctx(void)
{
    vkc_stats s;
    return vkc_context_stats(NULL, &s);
}
static vkc_result c_recover_null(void)
{
    return vkc_context_recover(NULL);
}
static vkc_result c_mistyped_ctx(void)
{
    /* A buffer handle passed as a context. */
    vkc_seq *s = NULL;
    return vkc_seq_create((vkc_context *)(void *)F.a, NULL, &s);
}

/* Buffers */
static vkc_result c_buf_desc_null(void)
{
    vkc_buffer *b = NULL;
    return vkc_buffer_create(F.ctx, NULL, &b);
}
static vkc_result c_buf_out_null(void)
{
    return vkc_buffer_create(F.ctx, &(vkc_buffer_desc){.size = 64}, NULL);
}
static vkc_result c_buf_size_zero(void)
{
    vkc_buffer *b = NULL;
    return vkc_buffer_create(F.ctx, &(vkc_buffer_desc){.size = 0}, &b);
}
static vkc_result c_buf_too_big(void)
{
    vkc_buffer *b = NULL;
    return vkc_buffer_create(F.ctx, &(vkc_buffer_desc){.size = 1ull << 50}, &b);
}
static vkc_result c_buf_bad_kind(void)
{
    vkc_buffer *b = NULL;
    return vkc_buffer_create(F.ctx, &(vkc_buffer_desc){.size = 64, .memory = (vkc_memory)7}, &b);
}
static vkc_result c_upload_out_of_range(void)
{
    uint32_t v[4] = {0};
    return vkc_buffer_upload(F.a, N * 4 - 8, v, sizeof(v));
}
static vkc_result c_upload_data_null(void)
{
    return vkc_buffer_upload(F.a, 0, NULL, 16);
}
static vkc_result c_download_destroyed(void)
{
    /* What a destroyed buffer's memory holds: a cleared magic. */
    static uint64_t dead[sizeof(vkc_buffer) / 8 + 1];
    uint32_t v;
    return vkc_buffer_download((vkc_buffer *)(void *)dead, 0, &v, 4);
}
static vkc_result c_download_mistyped(void)
{
    uint32_t v;
    return vkc_buffer_download((vkc_buffer *)(void *)F.add, 0, &v, 4);
}
static vkc_result c_fill_unaligned(void)
{
    return vkc_buffer_fill(F.c, 2, 8, 0);
}
static vkc_result c_copy_overlap(void)
{
    return vkc_buffer_copy(F.c, 0, F.c, 8, 64);
}
static vkc_result c_copy_foreign(void)
{
    return vkc_buffer_copy(F.c, 0, F.foreign, 0, 64);
}

/* Kernels */
static vkc_result kernel_from(const void *words, size_t size, const char *entry)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create(
        F.ctx,
        &(vkc_kernel_desc){.spirv = words, .spirv_size = size, .entry = entry, .name = "bad"}, &k);
    if (k)
        vkc_kernel_destroy(k);
    return r;
}
static vkc_result c_kernel_desc_null(void)
{
    vkc_kernel *k = NULL;
    return vkc_kernel_create(F.ctx, NULL, &k);
}
static vkc_result c_spirv_random(void)
{
    uint32_t w[64];
    uint64_t seed = 5;
    for (int i = 0; i < 64; ++i)
        w[i] = (uint32_t)vkc_test_rand(&seed);
    return kernel_from(w, sizeof(w), NULL);
}
static vkc_result c_spirv_truncated(void)
{
    return kernel_from(test_shaders_add, (test_shaders_add_size / 2) & ~(size_t)3, NULL);
}
static vkc_result c_spirv_bad_magic(void)
{
    uint32_t *w = malloc(test_shaders_add_size);
    memcpy(w, test_shaders_add, test_shaders_add_size);
    w[0] = 0x12345678u;
    vkc_result r = kernel_from(w, test_shaders_add_size, NULL);
    free(w);
    return r;
}
static vkc_result c_spirv_bad_version(void)
{
    uint32_t *w = malloc(test_shaders_add_size);
    memcpy(w, test_shaders_add, test_shaders_add_size);
    w[1] = 0x00020000u; /* SPIR-V 2.0 */
    vkc_result r = kernel_from(w, test_shaders_add_size, NULL);
    free(w);
    return r;
}
static vkc_result c_spirv_size_not_words(void)
{
    return kernel_from(test_shaders_add, test_shaders_add_size - 2, NULL);
}
static vkc_result c_spirv_empty(void)
{
    return kernel_from(test_shaders_add, 0, NULL);
}
static vkc_result c_spirv_not_compute(void)
{
    return kernel_from(test_shaders_vertex, test_shaders_vertex_size, NULL);
}
static vkc_result c_spirv_no_entry(void)
{
    return kernel_from(test_shaders_add, test_shaders_add_size, "nope");
}
static vkc_result c_spirv_missing_file(void)
{
    vkc_kernel *k = NULL;
    return vkc_kernel_create(F.ctx, &(vkc_kernel_desc){.path = "/nonexistent/vkc/kernel.spv"}, &k);
}
static vkc_result c_spirv_and_path(void)
{
    vkc_kernel *k = NULL;
    return vkc_kernel_create(F.ctx,
                             &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                .spirv_size = test_shaders_add_size,
                                                .path = "x.spv"},
                             &k);
}
static vkc_result glsl(const char *src, uint32_t wg)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(
        F.ctx, &(vkc_glsl_desc){.source = src, .name = "bad.comp", .workgroup_size = wg}, &k);
    if (k)
        vkc_kernel_destroy(k);
    return r;
}
static vkc_result c_spirv_needs_feature(void)
{
    /* 64-bit atomics on buffers: vkc never enables them. */
    return glsl("#version 450\n#extension GL_EXT_shader_atomic_int64 : require\n"
                "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
                "layout(local_size_x = 1) in;\n"
                "layout(binding = 0) buffer S { uint64_t x; };\n"
                "void main() { atomicAdd(x, 1ul); }\n",
                0);
}
static vkc_result c_glsl_syntax(void)
{
    return glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  int x = ;\n}\n", 0);
}
static vkc_result c_glsl_null_source(void)
{
    vkc_kernel *k = NULL;
    return vkc_kernel_create_glsl(F.ctx, &(vkc_glsl_desc){.source = NULL}, &k);
}
static vkc_result c_glsl_bad_define(void)
{
    vkc_kernel *k = NULL;
    const char *defs[] = {"A=1\nB"};
    return vkc_kernel_create_glsl(F.ctx,
                                  &(vkc_glsl_desc){.source = "#version 450\nvoid main(){}\n",
                                                   .defines = defs,
                                                   .define_count = 1},
                                  &k);
}
static vkc_result c_glsl_bad_entry(void)
{
    vkc_kernel *k = NULL;
    return vkc_kernel_create_glsl(
        F.ctx, &(vkc_glsl_desc){.source = "#version 450\nvoid main(){}\n", .entry = "1abc"}, &k);
}
static vkc_result c_workgroup_too_big(void)
{
    return glsl("#version 450\nlayout(local_size_x_id = 0) in;\n"
                "layout(binding = 0) buffer S { uint x[]; };\n"
                "void main() { x[gl_GlobalInvocationID.x] = 1u; }\n",
                1u << 20);
}
static vkc_result c_push_too_big(void)
{
    char src[512];
    uint32_t words = vkc_context_device(F.ctx)->max_push_constants_size / 4 + 4;
    snprintf(src, sizeof(src),
             "#version 450\nlayout(local_size_x = 1) in;\n"
             "layout(binding = 0) buffer S { uint x; };\n"
             "layout(push_constant) uniform P { uint v[%u]; } pc;\n"
             "void main() { x = pc.v[%u]; }\n",
             words, words - 1);
    return glsl(src, 0);
}

/* Sequences and dispatches */
static vkc_seq *g_rec; /* a sequence being recorded, for the dispatch cases */

static vkc_result dispatch_rec(const vkc_dispatch_desc *d)
{
    return vkc_seq_dispatch(g_rec, d);
}
static vkc_result c_seq_out_null(void)
{
    return vkc_seq_create(F.ctx, NULL, NULL);
}
static vkc_result c_dispatch_desc_null(void)
{
    return vkc_seq_dispatch(g_rec, NULL);
}
static vkc_result c_dispatch_kernel_null(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    d.kernel = NULL;
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_arg_count(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    d.arg_count = 2;
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_push_size(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint64_t n = N;
    vkc_dispatch_desc d = add_desc(args, NULL, N);
    d.push = &n;
    d.push_size = 8;
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_push_null(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    vkc_dispatch_desc d = add_desc(args, NULL, N);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_args_null(void)
{
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(NULL, &n, N);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_buffer_small(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.small)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_unaligned(void)
{
    uint64_t align = vkc_context_device(F.ctx)->min_storage_buffer_offset_alignment;
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    args[0].offset = align > 4 ? 4 : 1; /* never a multiple when align > 1 */
    args[0].size = 64;
    uint32_t n = 16;
    vkc_dispatch_desc d = add_desc(args, &n, 16);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_range_beyond(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    args[1].offset = 16;
    args[1].size = N * 4;
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_count_2_40(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, 1ull << 40);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_count_zero(void)
{
    /* Not an error: an empty input records nothing. */
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = 0;
    vkc_dispatch_desc d = add_desc(args, &n, 0);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_groups_limit(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, 0);
    d.groups[0] = 1;
    d.groups[1] = vkc_context_device(F.ctx)->max_workgroup_count[1] + 1u;
    d.groups[2] = 1;
    if (d.groups[1] == 0) /* the limit is UINT32_MAX: nothing to exceed */
        d.groups[1] = UINT32_MAX;
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_groups_zero(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, 0);
    d.groups[0] = 1;
    d.groups[2] = 1;
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_foreign_buffer(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.foreign)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    return dispatch_rec(&d);
}
static vkc_result c_dispatch_destroyed_buffer(void)
{
    static uint64_t dead[sizeof(vkc_buffer) / 8 + 1];
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg((vkc_buffer *)(void *)dead)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    return dispatch_rec(&d);
}
static vkc_result c_seq_copy_overlap(void)
{
    return vkc_seq_copy(g_rec, F.c, 0, F.c, 4, 64);
}
static vkc_result c_seq_fill_unaligned(void)
{
    return vkc_seq_fill(g_rec, F.c, 0, 6, 0);
}
static vkc_result c_submit_recording(void)
{
    vkc_ticket t;
    return vkc_seq_submit(g_rec, &t);
}
static vkc_result c_end_twice(void)
{
    return vkc_seq_end(F.seq);
}
static vkc_result c_dispatch_after_end(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    return vkc_seq_dispatch(F.seq, &d);
}
static vkc_result c_set_push_index(void)
{
    uint32_t n = N;
    return vkc_seq_set_push(F.seq, 7, &n, 4);
}
static vkc_result c_set_push_size(void)
{
    uint64_t n = N;
    return vkc_seq_set_push(F.seq, 0, &n, 8);
}
static vkc_result c_set_arg_range(void)
{
    vkc_arg a = arg(F.small);
    return vkc_seq_set_arg(F.seq, 0, 2, &a);
}
static vkc_result c_submit_null(void)
{
    vkc_ticket t;
    return vkc_seq_submit(NULL, &t);
}
static vkc_result c_wait_foreign_ticket(void)
{
    vkc_ticket t;
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(F.other, NULL, &s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(F.other, t, UINT64_MAX), VKC_SUCCESS);
    vkc_seq_destroy(s);
    forget_messages();
    return vkc_wait(F.ctx, t, UINT64_MAX);
}
static vkc_result c_wait_never_issued(void)
{
    vkc_ticket t = {.value = 1ull << 60, .context_id = 0};
    vkc_vk_handles h;
    (void)h;
    t.context_id = F.ctx->id;
    return vkc_wait(F.ctx, t, UINT64_MAX);
}
static vkc_result c_poll_foreign_ticket(void)
{
    vkc_ticket t = {.value = 1, .context_id = F.other->id};
    return vkc_poll(F.ctx, t);
}
static vkc_result c_immediate_mismatch(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    d.arg_count = 1;
    return vkc_dispatch(F.ctx, &d);
}
static vkc_result c_immediate_desc_null(void)
{
    return vkc_dispatch(F.ctx, NULL);
}

/* Fusion graphs */
static vkc_result with_graph(vkc_result (*body)(vkc_fuse *g))
{
    vkc_fuse *g = NULL;
    VKC_FORWARD(vkc_fuse_create(F.ctx, NULL, &g));
    vkc_result r = body(g);
    vkc_fuse_destroy(g);
    return r;
}
static vkc_result g_forward_ref(vkc_fuse *g)
{
    /* A cycle needs an operation naming a value made after it: an id that
     * does not exist yet. */
    vkc_value x, y;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    forget_messages();
    return vkc_fuse_op(g, VKC_OP_ADD, (vkc_value[]){x, x + 5}, 2, &y);
}
static vkc_result c_fuse_cycle(void)
{
    return with_graph(g_forward_ref);
}
static vkc_result g_self_ref(vkc_fuse *g)
{
    vkc_value x, y;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    VKC_FORWARD(vkc_fuse_op(g, VKC_OP_NEG, (vkc_value[]){x}, 1, &y));
    /* y would be its own operand: the id the op is about to get. */
    forget_messages();
    return vkc_fuse_op(g, VKC_OP_ADD, (vkc_value[]){y, y + 1}, 2, &y);
}
static vkc_result c_fuse_self_cycle(void)
{
    return with_graph(g_self_ref);
}
static vkc_result g_type_mismatch(vkc_fuse *g)
{
    vkc_value x, i, y;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_U32, &i));
    forget_messages();
    return vkc_fuse_op(g, VKC_OP_ADD, (vkc_value[]){x, i}, 2, &y);
}
static vkc_result c_fuse_type_mismatch(void)
{
    return with_graph(g_type_mismatch);
}
static vkc_result g_arity(vkc_fuse *g)
{
    vkc_value x, y;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    forget_messages();
    return vkc_fuse_op(g, VKC_OP_FMA, (vkc_value[]){x, x}, 2, &y);
}
static vkc_result c_fuse_arity(void)
{
    return with_graph(g_arity);
}
static vkc_result g_no_output(vkc_fuse *g)
{
    vkc_value x;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    forget_messages();
    return vkc_fuse_build(g);
}
static vkc_result c_fuse_no_output(void)
{
    return with_graph(g_no_output);
}
static vkc_result g_record_args(vkc_fuse *g)
{
    vkc_value x, y;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_U32, &x));
    VKC_FORWARD(vkc_fuse_op(g, VKC_OP_ADD, (vkc_value[]){x, x}, 2, &y));
    VKC_FORWARD(vkc_fuse_output(g, y, NULL));
    vkc_arg in = arg(F.a);
    /* one output declared, none given */
    forget_messages();
    return vkc_fuse_record(g_rec, g, &(vkc_fuse_args){.inputs = &in, .input_count = 1, .count = N});
}
static vkc_result c_fuse_record_args(void)
{
    return with_graph(g_record_args);
}
static vkc_result g_build_latched(vkc_fuse *g)
{
    /* The type error is latched; build, after good calls, restates it. */
    vkc_value x, i, y;
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    VKC_FORWARD(vkc_fuse_input(g, VKC_DTYPE_U32, &i));
    assert_int_equal(vkc_fuse_op(g, VKC_OP_ADD, (vkc_value[]){x, i}, 2, &y),
                     VKC_ERROR_INVALID_GRAPH);
    VKC_FORWARD(vkc_fuse_op(g, VKC_OP_NEG, &x, 1, &y));
    VKC_FORWARD(vkc_fuse_output(g, y, NULL));
    forget_messages();
    return vkc_fuse_build(g);
}
static vkc_result c_fuse_build_latched(void)
{
    return with_graph(g_build_latched);
}

/* A latched recording error, restated by end and by submit with the
 * first failing call's message. */
static vkc_result c_end_latched(void)
{
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    VKC_FORWARD(vkc_seq_dispatch(g_rec, &d)); /* command 0 */
    d.arg_count = 2;
    assert_int_equal(vkc_seq_dispatch(g_rec, &d), VKC_ERROR_MISMATCH); /* command 1 */
    d.arg_count = 3;
    vkc_seq_dispatch(g_rec, &d); /* fine in itself, but the sequence is spoilt */
    forget_messages();
    return vkc_seq_end(g_rec);
}
static vkc_result c_submit_latched(void)
{
    assert_int_equal(vkc_seq_copy(g_rec, F.c, 0, F.c, 4, 64), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_seq_end(g_rec), VKC_ERROR_INVALID_ARGUMENT);
    forget_messages();
    vkc_ticket t;
    return vkc_seq_submit(g_rec, &t);
}

typedef struct bad_case {
    const char *name;
    vkc_result (*fn)(void);
    vkc_result want;
    const char *msg; /* must appear in the recorded message; NULL: success */
} bad_case;

#define CASE(fn, want, msg)                                                                        \
    {                                                                                              \
#fn, fn, want, msg                                                                         \
    }

static const bad_case CASES[] = {
    CASE(c_ctx_out_null, VKC_ERROR_INVALID_ARGUMENT, "out is NULL"),
    CASE(c_ctx_no_such_device, VKC_ERROR_NO_DEVICE, "no-such-device-anywhere"),
    CASE(c_ctx_bad_queue_family, VKC_ERROR_INVALID_ARGUMENT, "queue family 99"),
    CASE(c_features_out_null, VKC_ERROR_INVALID_ARGUMENT, "out is NULL"),
    CASE(c_stats_null_ctx, VKC_ERROR_INVALID_HANDLE, "vkc_context"),
    CASE(c_recover_null, VKC_ERROR_INVALID_HANDLE, "vkc_context"),
    CASE(c_mistyped_ctx, VKC_ERROR_INVALID_HANDLE, "vkc_context"),
    CASE(c_buf_desc_null, VKC_ERROR_INVALID_ARGUMENT, "desc is NULL"),
    CASE(c_buf_out_null, VKC_ERROR_INVALID_ARGUMENT, "out is NULL"),
    CASE(c_buf_size_zero, VKC_ERROR_INVALID_ARGUMENT, "size is 0"),
    CASE(c_buf_too_big, VKC_ERROR_LIMIT, "maxMemoryAllocationSize"),
    CASE(c_buf_bad_kind, VKC_ERROR_INVALID_ARGUMENT, "memory kind"),
    CASE(c_upload_out_of_range, VKC_ERROR_INVALID_ARGUMENT, "outside buffer"),
    CASE(c_upload_data_null, VKC_ERROR_INVALID_ARGUMENT, "NULL"),
    CASE(c_download_destroyed, VKC_ERROR_INVALID_HANDLE, "vkc_buffer"),
    CASE(c_download_mistyped, VKC_ERROR_INVALID_HANDLE, "vkc_buffer"),
    CASE(c_fill_unaligned, VKC_ERROR_INVALID_ARGUMENT, "4"),
    CASE(c_copy_overlap, VKC_ERROR_INVALID_ARGUMENT, "overlap"),
    CASE(c_copy_foreign, VKC_ERROR_INVALID_HANDLE, "different contexts"),
    CASE(c_kernel_desc_null, VKC_ERROR_INVALID_ARGUMENT, "NULL"),
    CASE(c_spirv_random, VKC_ERROR_INVALID_SPIRV, "magic"),
    CASE(c_spirv_truncated, VKC_ERROR_INVALID_SPIRV, "bad"),
    CASE(c_spirv_bad_magic, VKC_ERROR_INVALID_SPIRV, "magic"),
    CASE(c_spirv_bad_version, VKC_ERROR_INVALID_SPIRV, "version"),
    CASE(c_spirv_size_not_words, VKC_ERROR_INVALID_SPIRV, "multiple of 4"),
    CASE(c_spirv_empty, VKC_ERROR_INVALID_SPIRV, "empty"),
    CASE(c_spirv_not_compute, VKC_ERROR_INVALID_SPIRV, "ertex"),
    CASE(c_spirv_no_entry, VKC_ERROR_INVALID_SPIRV, "\"nope\""),
    CASE(c_spirv_missing_file, VKC_ERROR_IO, "/nonexistent/vkc/kernel.spv"),
    CASE(c_spirv_and_path, VKC_ERROR_INVALID_ARGUMENT, "not both"),
    CASE(c_spirv_needs_feature, VKC_ERROR_UNSUPPORTED, "Int64Atomics"),
    CASE(c_glsl_syntax, VKC_ERROR_COMPILE, "4"),
    CASE(c_glsl_null_source, VKC_ERROR_INVALID_ARGUMENT, "source is NULL"),
    CASE(c_glsl_bad_define, VKC_ERROR_INVALID_ARGUMENT, "newline"),
    CASE(c_glsl_bad_entry, VKC_ERROR_INVALID_ARGUMENT, "1abc"),
    CASE(c_workgroup_too_big, VKC_ERROR_LIMIT, "orkgroup"),
    CASE(c_push_too_big, VKC_ERROR_LIMIT, "maxPushConstantsSize"),
    CASE(c_seq_out_null, VKC_ERROR_INVALID_ARGUMENT, "out is NULL"),
    CASE(c_dispatch_desc_null, VKC_ERROR_INVALID_ARGUMENT, "desc is NULL"),
    CASE(c_dispatch_kernel_null, VKC_ERROR_INVALID_HANDLE, "vkc_kernel"),
    CASE(c_dispatch_arg_count, VKC_ERROR_MISMATCH, "3 bindings"),
    CASE(c_dispatch_push_size, VKC_ERROR_MISMATCH, "push constants"),
    CASE(c_dispatch_push_null, VKC_ERROR_INVALID_ARGUMENT, "push is NULL"),
    CASE(c_dispatch_args_null, VKC_ERROR_INVALID_ARGUMENT, "args is NULL"),
    CASE(c_dispatch_buffer_small, VKC_ERROR_MISMATCH, "elements"),
    CASE(c_dispatch_unaligned, VKC_ERROR_INVALID_ARGUMENT, "minStorageBufferOffsetAlignment"),
    CASE(c_dispatch_range_beyond, VKC_ERROR_INVALID_ARGUMENT, "outside buffer"),
    CASE(c_dispatch_count_2_40, VKC_ERROR_LIMIT, "2^32"),
    CASE(c_dispatch_count_zero, VKC_SUCCESS, NULL),
    CASE(c_dispatch_groups_limit, VKC_ERROR_LIMIT, "maxComputeWorkGroupCount"),
    CASE(c_dispatch_groups_zero, VKC_ERROR_INVALID_ARGUMENT, "groups[1] is 0"),
    CASE(c_dispatch_foreign_buffer, VKC_ERROR_INVALID_HANDLE, "another context"),
    CASE(c_dispatch_destroyed_buffer, VKC_ERROR_INVALID_HANDLE, "vkc_buffer"),
    CASE(c_seq_copy_overlap, VKC_ERROR_INVALID_ARGUMENT, "overlap"),
    CASE(c_seq_fill_unaligned, VKC_ERROR_INVALID_ARGUMENT, "multiples of 4"),
    CASE(c_submit_recording, VKC_ERROR_INVALID_STATE, "still being recorded"),
    CASE(c_end_twice, VKC_ERROR_INVALID_STATE, "already ended"),
    CASE(c_dispatch_after_end, VKC_ERROR_INVALID_STATE, "vkc_seq_begin"),
    CASE(c_set_push_index, VKC_ERROR_INVALID_ARGUMENT, "command 7"),
    CASE(c_set_push_size, VKC_ERROR_MISMATCH, "push constants"),
    CASE(c_set_arg_range, VKC_ERROR_MISMATCH, "does not fit"),
    CASE(c_submit_null, VKC_ERROR_INVALID_HANDLE, "vkc_seq"),
    CASE(c_wait_foreign_ticket, VKC_ERROR_INVALID_HANDLE, "another context"),
    CASE(c_wait_never_issued, VKC_ERROR_INVALID_HANDLE, "never issued"),
    CASE(c_poll_foreign_ticket, VKC_ERROR_INVALID_HANDLE, "another context"),
    CASE(c_immediate_mismatch, VKC_ERROR_MISMATCH, "3 bindings"),
    CASE(c_immediate_desc_null, VKC_ERROR_INVALID_ARGUMENT, "desc is NULL"),
    CASE(c_fuse_cycle, VKC_ERROR_INVALID_GRAPH, "cannot have a cycle"),
    CASE(c_fuse_self_cycle, VKC_ERROR_INVALID_GRAPH, "not created yet"),
    CASE(c_fuse_type_mismatch, VKC_ERROR_INVALID_GRAPH, "cast explicitly"),
    CASE(c_fuse_arity, VKC_ERROR_INVALID_GRAPH, "takes 3 operands"),
    CASE(c_fuse_no_output, VKC_ERROR_INVALID_GRAPH, "no output"),
    CASE(c_fuse_record_args, VKC_ERROR_MISMATCH, "0 outputs given"),
    CASE(c_fuse_build_latched, VKC_ERROR_INVALID_GRAPH, "earlier call building it failed: "),
    CASE(c_end_latched, VKC_ERROR_MISMATCH,
         "vkc_seq_end: sequence \"recording\": recording failed earlier, at vkc_seq_dispatch "
         "(command 1): "),
    CASE(c_submit_latched, VKC_ERROR_INVALID_ARGUMENT,
         "vkc_seq_submit: sequence \"recording\": recording failed earlier, at vkc_seq_copy "
         "(command 0): "),
};

/* ---- driver ---------------------------------------------------------------------------------- */

static void setup_fixture(void)
{
    memset(&F, 0, sizeof(F));
    F.ctx = vkc_test_context_create(capture_tweak);
    F.other = vkc_test_context_create(capture_tweak);
    assert_int_equal(vkc_kernel_create(F.ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size,
                                                          .name = "add"},
                                       &F.add),
                     VKC_SUCCESS);
    vkc_buffer **bufs[] = {&F.a, &F.b, &F.c};
    for (int i = 0; i < 3; ++i)
        assert_int_equal(vkc_buffer_create(F.ctx, &(vkc_buffer_desc){.size = N * 4}, bufs[i]),
                         VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(F.ctx, &(vkc_buffer_desc){.size = 64}, &F.small),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(F.other, &(vkc_buffer_desc){.size = N * 4}, &F.foreign),
                     VKC_SUCCESS);
    uint64_t seed = 3;
    for (uint32_t i = 0; i < N; ++i) {
        F.ha[i] = (uint32_t)vkc_test_rand(&seed);
        F.hb[i] = (uint32_t)vkc_test_rand(&seed);
    }
    assert_int_equal(vkc_buffer_upload(F.a, 0, F.ha, N * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(F.b, 0, F.hb, N * 4), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(F.ctx, &(vkc_seq_desc){"good"}, &F.seq), VKC_SUCCESS);
    vkc_arg args[3] = {arg(F.a), arg(F.b), arg(F.c)};
    uint32_t n = N;
    vkc_dispatch_desc d = add_desc(args, &n, N);
    assert_int_equal(vkc_seq_dispatch(F.seq, &d), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(F.seq), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(F.ctx, &(vkc_seq_desc){"recording"}, &g_rec), VKC_SUCCESS);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    setup_fixture();
    check_still_works("setup");
    unsigned errors = 0;
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); ++i) {
        const bad_case *c = &CASES[i];
        forget_messages();
        vkc_test_quiet_errors(1);
        vkc_result r = c->fn();
        vkc_test_quiet_errors(0);
        if (r != c->want)
            fail_msg("%s returned %s, want %s (message: %s / %s)", c->name, vkc_result_string(r),
                     vkc_result_string(c->want), g_last_msg, vkc_last_create_error());
        if (c->msg) {
            errors++;
            /* Logged on the context (and kept as its last error), or kept
             * for vkc_last_create_error() when the call had no usable
             * context: one message, made by this call. */
            const char *where = g_msgs ? g_last_msg : vkc_last_create_error();
            if (g_msgs > 1 || !where[0])
                fail_msg("%s: %u messages logged, the create error \"%s\": want exactly one "
                         "message from the call under test",
                         c->name, g_msgs, vkc_last_create_error());
            if (g_msgs && !strstr(vkc_context_last_error(F.ctx), where) &&
                !strstr(vkc_context_last_error(F.other), where))
                fail_msg("%s: logged \"%s\" but the context's last error is \"%s\"", c->name, where,
                         vkc_context_last_error(F.ctx));
            if (getenv("VKC_BAD_INPUT_PRINT"))
                printf("[bad-input]   %s -> %s: %s\n", c->name, vkc_result_string(r), where);
            else if (!strstr(where, c->msg))
                fail_msg("%s: message \"%s\" does not mention \"%s\"", c->name, where, c->msg);
        }
        /* A rejected recording call leaves its sequence's first error
         * latched; a fresh one takes its place. */
        vkc_seq_destroy(g_rec);
        assert_int_equal(vkc_seq_create(F.ctx, &(vkc_seq_desc){"recording"}, &g_rec), VKC_SUCCESS);
        check_still_works(c->name);
        vkc_test_assert_clean();
    }
    printf("[bad-input] %zu cases (%u errors with a checked message, %zu edge cases that must "
           "succeed); the context worked after each\n",
           sizeof(CASES) / sizeof(CASES[0]), errors, sizeof(CASES) / sizeof(CASES[0]) - errors);
    /* RELIABILITY.md states this floor. */
    assert_true(errors >= 75);
    vkc_seq_destroy(g_rec);
    vkc_seq_destroy(F.seq);
    vkc_kernel_destroy(F.add);
    vkc_buffer_destroy(F.a);
    vkc_buffer_destroy(F.b);
    vkc_buffer_destroy(F.c);
    vkc_buffer_destroy(F.small);
    vkc_buffer_destroy(F.foreign);
    vkc_test_context_destroy(F.other);
    vkc_test_context_destroy(F.ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
