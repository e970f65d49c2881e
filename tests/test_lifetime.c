/* Object lifetimes: every object kind (buffer, wrapped buffer, kernel,
 * sequence, fusion graph, image, wrapped image, context; the context once
 * with buffer work and once with image work and a sampler: samplers are no
 * objects of their own, they live as long as the context) destroyed in
 * every state (recorded in a
 * sequence, in the open immediate batch, in flight, after device-loss
 * recovery). Checked each time: no crash or leak (ASan/LSan builds), no
 * validation message, the documented result (work recorded before still
 * computes right: it holds its own references; a new use of the dead handle
 * is VKC_ERROR_INVALID_HANDLE naming the object), and the context still
 * computes a checked dispatch afterwards. Plus the four repros of issue 10,
 * vkc_context_destroy in several orders, two threads submitting one
 * sequence, and the bounded waits.
 *
 * "In flight" is made certain, not likely: the submit waits on a timeline
 * semaphore of the test's (vkc_wait_host_semaphore) that the host signals
 * only after the destroy. */
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096u
#define IMG_W 32u
#define IMG_H (N / IMG_W)

static const uint32_t rmw_push[2] = {3, 1};

typedef enum {
    K_BUFFER,
    K_WRAPPED,
    K_KERNEL,
    K_SEQ,
    K_FUSE,
    K_IMAGE,
    K_WIMAGE,
    K_CONTEXT,
    K_CTX_IMAGE
} kind;
typedef enum { S_RECORDED, S_IMMEDIATE, S_IN_FLIGHT, S_RECOVERED } where;

static bool image_kind(kind k)
{
    return k == K_IMAGE || k == K_WIMAGE || k == K_CTX_IMAGE;
}

static bool context_kind(kind k)
{
    return k == K_CONTEXT || k == K_CTX_IMAGE;
}

typedef struct world {
    vkc_context *ctx;
    vkc_kernel *add;
    vkc_buffer *a, *b, *c;
    vkc_buffer *wa; /* a's VkBuffer wrapped as if it were the host's (K_WRAPPED) */
    vkc_buffer *in; /* the buffer the work reads as `a`: a or wa */
    vkc_seq *seq;
    vkc_fuse *fuse; /* K_FUSE: the sequence records c = (a + b) + a unfused */
    /* Image kinds: the work is a -> image, image = image * 3 + 1 in place
     * (img_rmw), image -> c. */
    vkc_kernel *rmw;
    vkc_image *img;   /* vkc's own */
    vkc_image *wimg;  /* img's VkImage wrapped as if it were the host's (K_WIMAGE) */
    vkc_image *imgin; /* the image the work names: img or wimg; NULL: buffer work */
    vkc_sampler *sampler;
    VkSemaphore gate;
    uint32_t ha[N], hb[N], out[N];
} world;

static vkc_kernel *make_add(vkc_context *ctx)
{
    vkc_kernel *k = NULL;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size,
                                                          .name = "add"},
                                       &k),
                     VKC_SUCCESS);
    return k;
}

static vkc_buffer *make_buf(vkc_context *ctx, const char *name)
{
    vkc_buffer *b = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = name}, &b),
                     VKC_SUCCESS);
    return b;
}

static void make_images(world *w, kind k)
{
    assert_int_equal(vkc_kernel_create(w->ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_img_rmw,
                                                          .spirv_size = test_shaders_img_rmw_size,
                                                          .name = "img_rmw"},
                                       &w->rmw),
                     VKC_SUCCESS);
    assert_int_equal(vkc_image_create(w->ctx,
                                      &(vkc_image_desc){.format = VKC_FORMAT_R32UI,
                                                        .width = IMG_W,
                                                        .height = IMG_H,
                                                        .usage = VKC_IMAGE_USAGE_STORAGE,
                                                        .name = "img"},
                                      &w->img),
                     VKC_SUCCESS);
    w->imgin = w->img;
    if (k != K_IMAGE) {
        VkImage vi;
        assert_int_equal(vkc_image_vk(w->img, &vi), VKC_SUCCESS);
        vkc_image_wrap_desc wd = {.image = vi,
                                  .format = VKC_FORMAT_R32UI,
                                  .width = IMG_W,
                                  .height = IMG_H,
                                  .usage = VK_IMAGE_USAGE_STORAGE_BIT |
                                           VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                           VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                  .layout = VK_IMAGE_LAYOUT_GENERAL,
                                  .queue_family = vkc_context_device(w->ctx)->queue_family,
                                  .sharing_mode = VK_SHARING_MODE_EXCLUSIVE,
                                  .name = "wrapped img"};
        assert_int_equal(vkc_image_wrap(w->ctx, &wd, &w->wimg), VKC_SUCCESS);
        w->imgin = w->wimg;
    }
    if (k == K_CTX_IMAGE)
        assert_int_equal(vkc_sampler_get(w->ctx, NULL, &w->sampler), VKC_SUCCESS);
}

static void make_world(world *w, kind k, void (*tweak)(vkc_context_desc *))
{
    memset(w, 0, sizeof(*w));
    w->ctx = vkc_test_context_create(tweak);
    w->add = make_add(w->ctx);
    w->a = make_buf(w->ctx, "a");
    w->b = make_buf(w->ctx, "b");
    w->c = make_buf(w->ctx, "c");
    w->in = w->a;
    if (k == K_WRAPPED) {
        VkBuffer vb;
        VkDeviceSize off;
        assert_int_equal(vkc_buffer_vk(w->a, &vb, &off), VKC_SUCCESS);
        assert_int_equal(vkc_buffer_wrap(w->ctx, vb, off, N * 4, &w->wa), VKC_SUCCESS);
        w->in = w->wa;
    }
    if (k == K_FUSE) {
        vkc_value x, y, t, u;
        assert_int_equal(vkc_fuse_create(w->ctx, &(vkc_fuse_desc){.name = "a+b+a"}, &w->fuse),
                         VKC_SUCCESS);
        assert_int_equal(vkc_fuse_input(w->fuse, VKC_DTYPE_U32, &x), VKC_SUCCESS);
        assert_int_equal(vkc_fuse_input(w->fuse, VKC_DTYPE_U32, &y), VKC_SUCCESS);
        assert_int_equal(vkc_fuse_op(w->fuse, VKC_OP_ADD, (vkc_value[]){x, y}, 2, &t), VKC_SUCCESS);
        assert_int_equal(vkc_fuse_op(w->fuse, VKC_OP_ADD, (vkc_value[]){t, x}, 2, &u), VKC_SUCCESS);
        assert_int_equal(vkc_fuse_output(w->fuse, u, NULL), VKC_SUCCESS);
    }
    if (image_kind(k))
        make_images(w, k);
    assert_int_equal(vkc_seq_create(w->ctx, &(vkc_seq_desc){"work"}, &w->seq), VKC_SUCCESS);
    uint64_t seed = 7;
    for (uint32_t i = 0; i < N; ++i) {
        w->ha[i] = (uint32_t)vkc_test_rand(&seed) >> 4;
        w->hb[i] = (uint32_t)vkc_test_rand(&seed) >> 4;
    }
}

static void upload(world *w)
{
    assert_int_equal(vkc_buffer_upload(w->a, 0, w->ha, N * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(w->b, 0, w->hb, N * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(w->c, 0, N * 4, 0), VKC_SUCCESS);
}

static vkc_dispatch_desc add_desc(vkc_kernel *k, vkc_arg *abc, const uint32_t *n)
{
    return (vkc_dispatch_desc){
        .kernel = k, .args = abc, .arg_count = 3, .push = n, .push_size = 4, .count = N};
}

static const uint32_t n_elems = N;

static vkc_dispatch_desc rmw_desc(vkc_kernel *k, vkc_arg *img)
{
    return (vkc_dispatch_desc){.kernel = k,
                               .args = img,
                               .arg_count = 1,
                               .push = rmw_push,
                               .push_size = sizeof(rmw_push),
                               .groups = {IMG_W / 8, IMG_H / 8, 1}};
}

static void record(world *w)
{
    assert_int_equal(vkc_seq_begin(w->seq), VKC_SUCCESS);
    vkc_arg abc[3] = {{.buffer = w->in}, {.buffer = w->b}, {.buffer = w->c}};
    if (w->imgin) {
        vkc_arg ia = {.image = w->imgin};
        vkc_dispatch_desc d = rmw_desc(w->rmw, &ia);
        assert_int_equal(vkc_seq_copy_buffer_to_image(w->seq, w->imgin, NULL, w->a, 0),
                         VKC_SUCCESS);
        assert_int_equal(vkc_seq_dispatch(w->seq, &d), VKC_SUCCESS);
        assert_int_equal(vkc_seq_copy_image_to_buffer(w->seq, w->c, 0, w->imgin, NULL),
                         VKC_SUCCESS);
    } else if (w->fuse) {
        vkc_fuse_args fa = {
            .inputs = abc, .input_count = 2, .outputs = &abc[2], .output_count = 1, .count = N};
        assert_int_equal(vkc_fuse_record_unfused(w->seq, w->fuse, &fa), VKC_SUCCESS);
    } else {
        vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
        assert_int_equal(vkc_seq_dispatch(w->seq, &d), VKC_SUCCESS);
    }
    assert_int_equal(vkc_seq_end(w->seq), VKC_SUCCESS);
}

/* c against the CPU: a + b (the kernel), a + b + a (the graph), or
 * a * 3 + 1 (the image work). */
static void check_c(world *w, bool fused)
{
    memset(w->out, 0, sizeof(w->out));
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t want = w->imgin ? w->ha[i] * rmw_push[0] + rmw_push[1]
                                 : w->ha[i] + w->hb[i] + (fused ? w->ha[i] : 0);
        if (w->out[i] != want)
            fail_msg("c[%u] = %u, want %u", i, w->out[i], want);
    }
}

/* The context still computes: new objects, one checked dispatch. */
static void check_fresh(vkc_context *ctx)
{
    vkc_kernel *k = make_add(ctx);
    vkc_buffer *x = make_buf(ctx, "fresh x"), *y = make_buf(ctx, "fresh y"),
               *z = make_buf(ctx, "fresh z");
    uint32_t hx[N], hy[N], hz[N];
    for (uint32_t i = 0; i < N; ++i) {
        hx[i] = i * 3u;
        hy[i] = 1000000u - i;
    }
    assert_int_equal(vkc_buffer_upload(x, 0, hx, sizeof(hx)), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(y, 0, hy, sizeof(hy)), VKC_SUCCESS);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){"fresh"}, &s), VKC_SUCCESS);
    vkc_arg abc[3] = {{.buffer = x}, {.buffer = y}, {.buffer = z}};
    vkc_dispatch_desc d = add_desc(k, abc, &n_elems);
    assert_int_equal(vkc_seq_dispatch(s, &d), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(z, 0, hz, sizeof(hz)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (hz[i] != hx[i] + hy[i])
            fail_msg("fresh z[%u] = %u, want %u", i, hz[i], hx[i] + hy[i]);
    /* Destroyed in an order that is not creation's reverse. */
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(x);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(z);
    vkc_buffer_destroy(y);
}

/* ---- the gate: a host timeline semaphore the next submit waits on ---- */

static void gate_close(world *w)
{
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &tci;
    assert_int_equal(w->ctx->vk.vkCreateSemaphore(w->ctx->device, &sci, NULL, &w->gate),
                     VK_SUCCESS);
    assert_int_equal(vkc_wait_host_semaphore(w->ctx, w->gate, 1), VKC_SUCCESS);
}

static void gate_open(world *w)
{
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = w->gate;
    si.value = 1;
    assert_int_equal(w->ctx->vk.vkSignalSemaphore(w->ctx->device, &si), VK_SUCCESS);
}

static void gate_destroy(world *w)
{
    if (!w->gate)
        return;
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
    w->ctx->vk.vkDestroySemaphore(w->ctx->device, w->gate, NULL);
    w->gate = VK_NULL_HANDLE;
}

/* ---- destroy and the documented results ---- */

static void expect_dead(vkc_context *ctx, vkc_result r, const char *name)
{
    assert_int_equal(r, VKC_ERROR_INVALID_HANDLE);
    const char *msg = vkc_context_last_error(ctx);
    if (!strstr(msg, "destroyed") || !strstr(msg, name))
        fail_msg("the message does not name the destroyed object \"%s\": %s", name, msg);
}

static void destroy_victim(world *w, kind k)
{
    switch (k) {
    case K_BUFFER:
        vkc_buffer_destroy(w->a);
        break;
    case K_WRAPPED:
        vkc_buffer_destroy(w->wa);
        break;
    case K_KERNEL:
        vkc_kernel_destroy(w->add);
        break;
    case K_SEQ:
        vkc_seq_destroy(w->seq);
        w->seq = NULL;
        break;
    case K_FUSE:
        vkc_fuse_destroy(w->fuse);
        break;
    case K_IMAGE:
        vkc_image_destroy(w->img);
        break;
    case K_WIMAGE:
        vkc_image_destroy(w->wimg);
        break;
    case K_CONTEXT:
    case K_CTX_IMAGE:
        vkc_test_context_destroy(w->ctx);
        w->ctx = NULL;
        break;
    }
}

/* A new recording naming the dead handle is refused, with its name. Only
 * while something still references it (else the handle is freed memory). */
static void check_new_use(world *w, kind k)
{
    if (k != K_BUFFER && k != K_WRAPPED && k != K_KERNEL && k != K_IMAGE && k != K_WIMAGE)
        return;
    vkc_seq *s2 = NULL;
    assert_int_equal(vkc_seq_create(w->ctx, &(vkc_seq_desc){"new use"}, &s2), VKC_SUCCESS);
    if (k == K_IMAGE || k == K_WIMAGE) {
        const char *name = k == K_IMAGE ? "img" : "wrapped img";
        vkc_arg ia = {.image = w->imgin};
        vkc_dispatch_desc d = rmw_desc(w->rmw, &ia);
        vkc_test_quiet_errors(1);
        expect_dead(w->ctx, vkc_seq_dispatch(s2, &d), name);
        vkc_seq_destroy(s2);
        assert_int_equal(vkc_seq_create(w->ctx, &(vkc_seq_desc){"new use"}, &s2), VKC_SUCCESS);
        expect_dead(w->ctx, vkc_seq_copy_image_to_buffer(s2, w->c, 0, w->imgin, NULL), name);
        expect_dead(w->ctx, vkc_copy_buffer_to_image(w->ctx, w->imgin, NULL, w->a, 0), name);
        expect_dead(w->ctx, vkc_image_upload(w->imgin, NULL, w->ha, N * 4), name);
        expect_dead(w->ctx, vkc_image_download(w->imgin, NULL, w->out, N * 4), name);
        vkc_test_quiet_errors(0);
        vkc_seq_destroy(s2);
        return;
    }
    vkc_arg abc[3] = {{.buffer = k == K_KERNEL ? w->a : w->in}, {.buffer = w->b}, {.buffer = w->c}};
    vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_seq_dispatch(s2, &d);
    expect_dead(w->ctx, r, k == K_KERNEL ? "add" : w->in->name);
    if (k != K_KERNEL) {
        uint32_t v = 0;
        expect_dead(w->ctx, vkc_buffer_upload(w->in, 0, &v, 4), w->in->name);
    }
    vkc_test_quiet_errors(0);
    vkc_seq_destroy(s2);
}

static bool victim_in_work(kind k)
{
    return k == K_BUFFER || k == K_WRAPPED || k == K_KERNEL || k == K_FUSE || k == K_IMAGE ||
           k == K_WIMAGE;
}

static void finish_world(world *w, kind k)
{
    if (!w->ctx)
        return;
    gate_destroy(w);
    check_fresh(w->ctx);
    /* Left alive on purpose: the context destroys them. */
    vkc_test_context_destroy(w->ctx);
}

static void lose_device_and_recover(world *w, kind k)
{
    vkc_test_quiet_errors(1);
    vkc__fault = (vkc__fault_state){
        .armed = true, .fail_at = 1, .only = VKC__FAULT_VK, .forced = VK_ERROR_DEVICE_LOST};
    vkc_ticket t;
    vkc_result r = vkc_seq_submit(w->seq, &t);
    vkc__fault = (vkc__fault_state){0};
    assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
    r = vkc_context_recover(w->ctx);
    if (w->wimg) {
        /* A wrapped image's VkImage died with the device: refused from then
         * on, by name (vkc's own image behind it was re-created). */
        assert_true(r == VKC_CONTENTS_LOST);
        vkc_result u = vkc_image_upload(w->wimg, NULL, w->ha, N * 4);
        assert_int_equal(u, VKC_ERROR_INVALID_HANDLE);
        assert_non_null(strstr(vkc_context_last_error(w->ctx), "wrapped img"));
    }
    if (k == K_WRAPPED) {
        /* A live wrapped buffer cannot be rebuilt: destroy it, then recover
         * (the sequence that still names it keeps a dead record only). */
        assert_int_equal(r, VKC_ERROR_UNSUPPORTED);
        vkc_buffer_destroy(w->wa);
        r = vkc_context_recover(w->ctx);
    }
    vkc_test_quiet_errors(0);
    assert_true(r == VKC_SUCCESS || r == VKC_CONTENTS_LOST);
}

static void run_case(kind k, where st)
{
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, k, NULL);
    upload(w);
    const bool fused = k == K_FUSE;
    switch (st) {
    case S_RECORDED:
        record(w);
        destroy_victim(w, k);
        if (!w->ctx)
            break;
        check_new_use(w, k);
        if (w->seq) {
            /* Recorded before the destroy: it still runs, right. */
            vkc_ticket t;
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
            assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
            check_c(w, fused);
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS); /* and again */
            assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
            check_c(w, fused);
        }
        break;
    case S_IMMEDIATE: {
        if (k == K_FUSE || k == K_SEQ)
            record(w);
        vkc_arg abc[3] = {{.buffer = w->in}, {.buffer = w->b}, {.buffer = w->c}};
        vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
        if (w->imgin) {
            vkc_arg ia = {.image = w->imgin};
            vkc_dispatch_desc id = rmw_desc(w->rmw, &ia);
            assert_int_equal(vkc_copy_buffer_to_image(w->ctx, w->imgin, NULL, w->a, 0),
                             VKC_SUCCESS);
            assert_int_equal(vkc_dispatch(w->ctx, &id), VKC_SUCCESS);
            assert_int_equal(vkc_copy_image_to_buffer(w->ctx, w->c, 0, w->imgin, NULL),
                             VKC_SUCCESS);
        } else {
            assert_int_equal(vkc_dispatch(w->ctx, &d), VKC_SUCCESS); /* in the open batch */
        }
        destroy_victim(w, k);
        if (!w->ctx)
            break; /* issue 10, repro 1: destroy with the batch open */
        check_new_use(w, k);
        assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
        check_c(w, false);
        if (k == K_FUSE) {
            vkc_ticket t;
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
            assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
            check_c(w, true);
        }
        break;
    }
    case S_IN_FLIGHT: {
        record(w);
        vkc_ticket t = {0};
        if (context_kind(k)) {
            /* No gate: destroy waits for vkc's work, and a gate the host
             * never opens would hold it until the bound. Many submits keep
             * the device busy when the destroy comes. */
            for (int i = 0; i < 32; ++i)
                assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
            destroy_victim(w, k);
            break;
        }
        gate_close(w);
        assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
        assert_int_equal(vkc_poll(w->ctx, t), VKC_NOT_READY); /* certainly in flight */
        destroy_victim(w, k);
        check_new_use(w, k);
        gate_open(w);
        assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
        check_c(w, fused);
        break;
    }
    case S_RECOVERED: {
        record(w);
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
        check_c(w, fused);
        lose_device_and_recover(w, k);
        if (k != K_WRAPPED)
            destroy_victim(w, k);
        if (!w->ctx)
            break;
        check_new_use(w, k);
        if (w->seq) {
            /* Recorded before the loss: refused until recorded again. */
            vkc_test_quiet_errors(1);
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_ERROR_INVALID_STATE);
            vkc_test_quiet_errors(0);
            if (!victim_in_work(k)) {
                upload(w);
                record(w);
                assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
                assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
                check_c(w, fused);
            }
        }
        break;
    }
    }
    finish_world(w, k);
    free(w);
}

#define CASE(k, s)                                                                                 \
    static void test_##k##_##s(void **state)                                                       \
    {                                                                                              \
        (void)state;                                                                               \
        run_case(k, s);                                                                            \
    }
#define ROW(k) CASE(k, S_RECORDED) CASE(k, S_IMMEDIATE) CASE(k, S_IN_FLIGHT) CASE(k, S_RECOVERED)
ROW(K_BUFFER)
ROW(K_WRAPPED)
ROW(K_KERNEL)
ROW(K_SEQ)
ROW(K_FUSE)
ROW(K_IMAGE)
ROW(K_WIMAGE)
ROW(K_CONTEXT)
ROW(K_CTX_IMAGE)

/* ---- issue 10's repros ---- */

/* Repro 4: a destroyed output's memory is not handed to a new buffer while
 * a recorded sequence still writes it. */
static void test_destroyed_output_not_reused(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_BUFFER, NULL);
    upload(w);
    record(w);
    vkc_buffer_destroy(w->c);
    uint32_t pattern[N];
    for (uint32_t i = 0; i < N; ++i)
        pattern[i] = 0xab00cd00u ^ i;
    vkc_buffer *d = make_buf(w->ctx, "new buffer");
    assert_int_equal(vkc_buffer_upload(d, 0, pattern, sizeof(pattern)), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(d, 0, w->out, sizeof(w->out)), VKC_SUCCESS);
    assert_memory_equal(w->out, pattern, sizeof(pattern));
    /* Memory comes back once the sequence lets go (recorded again). */
    vkc_stats before, after;
    assert_int_equal(vkc_context_stats(w->ctx, &before), VKC_SUCCESS);
    assert_int_equal(vkc_seq_begin(w->seq), VKC_SUCCESS);
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
    assert_int_equal(vkc_context_stats(w->ctx, &after), VKC_SUCCESS);
    assert_true(after.memory_bytes <= before.memory_bytes);
    vkc_buffer_destroy(d);
    finish_world(w, K_BUFFER);
    free(w);
}

/* Two sequences naming the same objects, recorded in turn and one of them
 * again: each set must retain them itself. Objects carry the tag of the set
 * that retained them last (a hint that spares the set's lookup); a set
 * cleared for re-recording takes a new tag, so the objects' old tag no
 * longer passes for "held". Here A then B record (the objects go from A's
 * tag to B's), B is submitted and recorded again (its set cleared, the
 * objects still carrying its old tag); then A, the kernel and the inputs
 * are destroyed, and B's submit must still find them alive (a missed
 * retain is a use after free: ASan, or the validation layer's
 * destroyed-handle checks; with the new tag at clear taken out, the layer
 * reports the destroyed pipeline). */
static void test_hold_across_sequences(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_BUFFER, NULL);
    upload(w);
    vkc_buffer *d = make_buf(w->ctx, "d");
    vkc_seq *b = NULL;
    assert_int_equal(vkc_seq_create(w->ctx, &(vkc_seq_desc){"b"}, &b), VKC_SUCCESS);
    vkc_arg abd[3] = {{.buffer = w->a}, {.buffer = w->b}, {.buffer = d}};
    const vkc_dispatch_desc dd = add_desc(w->add, abd, &n_elems);
    record(w);
    assert_int_equal(vkc_seq_dispatch(b, &dd), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(b), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(b, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(d, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS); /* B's unit retires: its set is reused */
    assert_int_equal(vkc_seq_begin(b), VKC_SUCCESS);
    /* The objects still carry the tag B's set had before it was cleared;
     * the second dispatch takes the fast path. */
    assert_int_equal(vkc_seq_dispatch(b, &dd), VKC_SUCCESS);
    assert_int_equal(vkc_seq_dispatch(b, &dd), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(b), VKC_SUCCESS);
    vkc_seq_destroy(w->seq);
    w->seq = NULL;
    vkc_kernel_destroy(w->add);
    vkc_buffer_destroy(w->a);
    vkc_buffer_destroy(w->b);
    assert_int_equal(vkc_seq_submit(b, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(d, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (w->out[i] != w->ha[i] + w->hb[i])
            fail_msg("d[%u] = %u, want %u", i, w->out[i], w->ha[i] + w->hb[i]);
    vkc_seq_destroy(b);
    vkc_buffer_destroy(d);
    finish_world(w, K_BUFFER);
    free(w);
}

/* vkc_context_destroy with pending immediate work, in-flight sequences and
 * live objects, after the caller destroyed some of them in various orders. */
static void test_context_destroy_orders(void **state)
{
    (void)state;
    for (int order = 0; order < 5; ++order) {
        world *w = calloc(1, sizeof(*w));
        assert_non_null(w);
        make_world(w, order == 4 ? K_FUSE : K_BUFFER, NULL);
        upload(w);
        record(w);
        vkc_ticket t;
        for (int i = 0; i < 4; ++i)
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
        vkc_arg abc[3] = {{.buffer = w->a}, {.buffer = w->b}, {.buffer = w->c}};
        vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
        assert_int_equal(vkc_dispatch(w->ctx, &d), VKC_SUCCESS);
        switch (order) {
        case 0: /* everything left to the context */
            break;
        case 1:
            vkc_kernel_destroy(w->add);
            vkc_buffer_destroy(w->a);
            break;
        case 2:
            vkc_seq_destroy(w->seq);
            vkc_buffer_destroy(w->c);
            vkc_kernel_destroy(w->add);
            break;
        case 3:
            vkc_buffer_destroy(w->b);
            vkc_buffer_destroy(w->a);
            vkc_buffer_destroy(w->c);
            vkc_kernel_destroy(w->add);
            vkc_seq_destroy(w->seq);
            break;
        case 4:
            vkc_fuse_destroy(w->fuse);
            vkc_buffer_destroy(w->a);
            break;
        }
        vkc_test_context_destroy(w->ctx);
        free(w);
    }
}

/* ---- one sequence, two threads ---- */

typedef struct submitter {
    vkc_seq *seq;
    uint64_t ok, refused, other;
    vkc_ticket last;
} submitter;

static void *submit_loop(void *p)
{
    submitter *s = p;
    for (int i = 0; i < 300; ++i) {
        vkc_ticket t;
        vkc_result r = vkc_seq_submit(s->seq, &t);
        if (r == VKC_SUCCESS) {
            s->ok++;
            s->last = t;
        } else if (r == VKC_ERROR_INVALID_STATE) {
            s->refused++;
        } else {
            s->other++;
        }
    }
    return NULL;
}

static void test_two_threads_one_sequence(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_BUFFER, NULL);
    upload(w);
    record(w);
    submitter s[2] = {{.seq = w->seq}, {.seq = w->seq}};
    pthread_t th[2];
    vkc_test_quiet_errors(1);
    for (int i = 0; i < 2; ++i)
        assert_int_equal(pthread_create(&th[i], NULL, submit_loop, &s[i]), 0);
    for (int i = 0; i < 2; ++i)
        pthread_join(th[i], NULL);
    vkc_test_quiet_errors(0);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(s[i].other, 0);
        assert_int_equal(s[i].ok + s[i].refused, 300);
        if (s[i].ok)
            assert_int_equal(vkc_wait(w->ctx, s[i].last, UINT64_MAX), VKC_SUCCESS);
    }
    vkc_seq_info info;
    assert_int_equal(vkc_seq_info_get(w->seq, &info), VKC_SUCCESS);
    assert_int_equal(info.submits, s[0].ok + s[1].ok);
    printf("two threads: %llu + %llu submits, %llu + %llu refused\n", (unsigned long long)s[0].ok,
           (unsigned long long)s[1].ok, (unsigned long long)s[0].refused,
           (unsigned long long)s[1].refused);
    check_c(w, false);
    finish_world(w, K_BUFFER);
    free(w);
}

/* ---- bounded waits ---- */

static void short_bound(vkc_context_desc *d)
{
    d->wait_timeout_ns = 50ull * 1000000ull;
}

static void test_bounded_waits(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_IMAGE, short_bound);
    upload(w);
    assert_int_equal(vkc_image_upload(w->img, NULL, w->ha, N * 4), VKC_SUCCESS);
    gate_close(w);
    vkc_arg abc[3] = {{.buffer = w->a}, {.buffer = w->b}, {.buffer = w->c}};
    vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
    assert_int_equal(vkc_dispatch(w->ctx, &d), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_finish(w->ctx), VKC_TIMEOUT); /* flushed, never completes */
    assert_non_null(strstr(vkc_context_last_error(w->ctx), "vkc_finish"));
    assert_int_equal(vkc_finish_timeout(w->ctx, 1000000), VKC_TIMEOUT);
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, 4), VKC_TIMEOUT);
    assert_int_equal(vkc_buffer_fill(w->b, 0, 4, 0), VKC_TIMEOUT);
    /* The image transfers: timed out, not failed; they run in order once
     * the gate opens (the clear last: the image ends cleared). */
    assert_int_equal(vkc_image_upload(w->img, NULL, w->hb, N * 4), VKC_TIMEOUT);
    /* Its copy is still in flight: the next upload does not touch the
     * staging ring under it, it times out waiting for it. */
    assert_int_equal(vkc_image_upload(w->img, NULL, w->ha, N * 4), VKC_TIMEOUT);
    assert_non_null(strstr(vkc_context_last_error(w->ctx), "an earlier one's copy"));
    assert_int_equal(vkc_image_download(w->img, NULL, w->out, N * 4), VKC_TIMEOUT);
    const vkc_clear_value five = {.u32 = {5, 0, 0, 0}};
    assert_int_equal(vkc_image_clear(w->img, NULL, &five), VKC_TIMEOUT);
    /* An enqueue that finds every immediate batch in flight waits for the
     * oldest, bounded too. */
    vkc_result r = VKC_SUCCESS;
    int enqueues = 0;
    for (; enqueues < 256 && r == VKC_SUCCESS; ++enqueues) {
        r = vkc_dispatch(w->ctx, &d);
        if (r == VKC_SUCCESS)
            r = vkc_flush(w->ctx, NULL);
    }
    printf("enqueue timed out after %d dispatch+flush\n", enqueues);
    assert_int_equal(r, VKC_TIMEOUT);
    vkc_test_quiet_errors(0);
    /* The fill timed out, not failed: it runs after the gate opens, and
     * its unit holds b until then. */
    vkc_buffer_destroy(w->b);
    gate_open(w);
    assert_int_equal(vkc_finish_timeout(w->ctx, UINT64_MAX), VKC_SUCCESS);
    w->b = NULL;
    memset(w->out, 0, sizeof(w->out));
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 1; i < N; ++i)
        if (w->out[i] != w->ha[i] + w->hb[i])
            fail_msg("c[%u] = %u, want %u", i, w->out[i], w->ha[i] + w->hb[i]);
    memset(w->out, 0, sizeof(w->out));
    assert_int_equal(vkc_image_download(w->img, NULL, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (w->out[i] != 5u)
            fail_msg("texel %u = %u, want 5 (the timed-out clear)", i, w->out[i]);
    assert_int_equal(vkc_image_upload(w->img, NULL, w->ha, N * 4), VKC_SUCCESS);
    assert_int_equal(vkc_image_download(w->img, NULL, w->out, N * 4), VKC_SUCCESS);
    assert_memory_equal(w->out, w->ha, N * 4);
    finish_world(w, K_BUFFER);
    free(w);
}

/* vkc_context_destroy's drain is bounded as well: past wait_timeout_ns it
 * says so (an error through the logger) and goes on; on its own device it
 * then waits for the device to go idle before freeing anything, which here
 * the logger itself allows by opening the gate (and destroying it, before
 * the device goes). */
typedef struct drain_watch {
    world *w;
    int timeouts;
} drain_watch;

static drain_watch g_drain;

static void drain_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    vkc_test_log(user, level, id, msg);
    world *w = g_drain.w;
    if (id != VKC_LOG_ID_ERROR || !w || !w->gate || !strstr(msg, "vkc_context_destroy") ||
        !strstr(msg, "did not complete"))
        return;
    g_drain.timeouts++;
    gate_open(w);
    assert_int_equal(w->ctx->vk.vkDeviceWaitIdle(w->ctx->device), VK_SUCCESS);
    w->ctx->vk.vkDestroySemaphore(w->ctx->device, w->gate, NULL);
    w->gate = VK_NULL_HANDLE;
}

static void short_bound_watched(vkc_context_desc *d)
{
    short_bound(d);
    d->logger.func = drain_log;
}

static void test_destroy_drain_bounded(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_BUFFER, short_bound_watched);
    upload(w);
    gate_close(w);
    record(w);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
    vkc_arg abc[3] = {{.buffer = w->a}, {.buffer = w->b}, {.buffer = w->c}};
    vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
    assert_int_equal(vkc_dispatch(w->ctx, &d), VKC_SUCCESS);
    g_drain = (drain_watch){.w = w};
    vkc_test_quiet_errors(1);
    vkc_test_context_destroy(w->ctx);
    vkc_test_quiet_errors(0);
    assert_int_equal(g_drain.timeouts, 1);
    assert_null(w->gate);
    g_drain = (drain_watch){0};
    free(w);
}

/* Images follow the same rule: one recorded, then destroyed, still computes
 * when the sequence is submitted (the sequence holds it), a new recording
 * naming the dead handle is refused with its name, and one destroyed while
 * its work is in flight (behind the host gate) is freed only after it. */
static void test_image_destroyed(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_BUFFER, NULL);
    vkc_kernel *rmw = NULL;
    assert_int_equal(vkc_kernel_create(w->ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_img_rmw,
                                                          .spirv_size = test_shaders_img_rmw_size,
                                                          .name = "img_rmw"},
                                       &rmw),
                     VKC_SUCCESS);
    enum { W = 32, H = N / 32 };
    for (int round = 0; round < 2; ++round) {
        vkc_image *img = NULL;
        assert_int_equal(vkc_image_create(w->ctx,
                                          &(vkc_image_desc){.format = VKC_FORMAT_R32UI,
                                                            .width = W,
                                                            .height = H,
                                                            .name = "doomed image"},
                                          &img),
                         VKC_SUCCESS);
        assert_int_equal(vkc_image_upload(img, NULL, w->ha, N * 4), VKC_SUCCESS);
        assert_int_equal(vkc_seq_begin(w->seq), VKC_SUCCESS);
        const uint32_t p[2] = {3, 1};
        vkc_arg ia = {.image = img};
        assert_int_equal(
            vkc_seq_dispatch(w->seq, &(vkc_dispatch_desc){.kernel = rmw,
                                                          .args = &ia,
                                                          .arg_count = 1,
                                                          .push = p,
                                                          .push_size = 8,
                                                          .groups = {W / 8, H / 8, 1}}),
            VKC_SUCCESS);
        assert_int_equal(vkc_seq_copy_image_to_buffer(w->seq, w->c, 0, img, NULL), VKC_SUCCESS);
        assert_int_equal(vkc_seq_end(w->seq), VKC_SUCCESS);
        vkc_ticket t;
        if (round == 0) {
            vkc_image_destroy(img); /* recorded: the sequence still holds it */
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
        } else {
            gate_close(w);
            assert_int_equal(vkc_seq_submit(w->seq, &t), VKC_SUCCESS);
            vkc_image_destroy(img); /* in flight: freed once the work is done */
            gate_open(w);
        }
        /* While the sequence still holds it, a new recording naming the
         * dead handle is refused, by name. */
        vkc_seq *s2 = NULL;
        assert_int_equal(vkc_seq_create(w->ctx, NULL, &s2), VKC_SUCCESS);
        vkc_test_quiet_errors(1);
        vkc_result r = vkc_seq_dispatch(s2, &(vkc_dispatch_desc){.kernel = rmw,
                                                                 .args = &ia,
                                                                 .arg_count = 1,
                                                                 .push = p,
                                                                 .push_size = 8,
                                                                 .groups = {1, 1, 1}});
        vkc_test_quiet_errors(0);
        assert_int_equal(r, VKC_ERROR_INVALID_HANDLE);
        assert_non_null(strstr(vkc_context_last_error(w->ctx), "doomed image"));
        vkc_seq_destroy(s2);
        assert_int_equal(vkc_wait(w->ctx, t, UINT64_MAX), VKC_SUCCESS);
        memset(w->out, 0, sizeof(w->out));
        assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < N; ++i)
            if (w->out[i] != w->ha[i] * 3u + 1u)
                fail_msg("round %d: texel %u = %u, want %u", round, i, w->out[i],
                         w->ha[i] * 3u + 1u);
        assert_int_equal(vkc_seq_begin(w->seq), VKC_SUCCESS);
    }
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
    vkc_stats st;
    assert_int_equal(vkc_context_stats(w->ctx, &st), VKC_SUCCESS);
    assert_int_equal(st.images, 0);
    vkc_kernel_destroy(rmw);
    check_fresh(w->ctx);
    finish_world(w, K_BUFFER);
    free(w);
}

/* ---- when the real free happens (sparse timeline signals) ---- */

/* Buffer records still listed: live ones and destroyed ones something holds. */
static uint32_t listed_buffers(vkc_context *ctx)
{
    uint32_t n = 0;
    pthread_mutex_lock(&ctx->objects_lock);
    for (vkc__node *i = ctx->buffers.next; i != &ctx->buffers; i = i->next)
        n++;
    pthread_mutex_unlock(&ctx->objects_lock);
    return n;
}

/* A sequence recording c = x + b, submitted `submits` times; returns it. */
static vkc_seq *submit_add(world *w, vkc_buffer *x, int submits, vkc_ticket *t)
{
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(w->ctx, &(vkc_seq_desc){"sparse"}, &s), VKC_SUCCESS);
    vkc_arg abc[3] = {{.buffer = x}, {.buffer = w->b}, {.buffer = w->c}};
    vkc_dispatch_desc d = add_desc(w->add, abc, &n_elems);
    assert_int_equal(vkc_seq_dispatch(s, &d), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    for (int i = 0; i < submits; ++i)
        assert_int_equal(vkc_seq_submit(s, t), VKC_SUCCESS);
    return s;
}

/* Where the completion marker is trusted most submits carry no timeline
 * signal, so a unit (and what its set holds) retires only once a later
 * signal passed it: a destroyed buffer whose last use was such a submit is
 * freed at vkc_finish, after at most signal_every further submits (the
 * bound vkc.h states: a signal covering it has been issued by then), and
 * at vkc_context_destroy at the latest (the object tracker and LSan see a
 * buffer that is not). */
static void test_sparse_signal_free(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    make_world(w, K_BUFFER, NULL);
    upload(w);
    printf("marker trusted: %d, signal every %u\n", (int)atomic_load(&w->ctx->marker_trusted),
           w->ctx->signal_every);
    const uint32_t base = listed_buffers(w->ctx);
    vkc_stats st0, st;
    assert_int_equal(vkc_context_stats(w->ctx, &st0), VKC_SUCCESS);

    /* 1: vkc_finish frees it. */
    vkc_ticket t;
    vkc_seq *s = submit_add(w, w->a, 5, &t);
    vkc_buffer_destroy(w->a);
    w->a = NULL;
    vkc_seq_destroy(s);
    printf("after destroy: %u buffer record(s), %u before\n", listed_buffers(w->ctx), base);
    if (atomic_load(&w->ctx->marker_trusted) && w->ctx->signal_every > 5)
        assert_int_equal(listed_buffers(w->ctx), base); /* held: no signal passed it yet */
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
    assert_int_equal(listed_buffers(w->ctx), base - 1);
    assert_int_equal(vkc_context_stats(w->ctx, &st), VKC_SUCCESS);
    assert_int_equal(st.buffers, st0.buffers - 1);
    check_c(w, false);

    /* 2: the bound. Other work only, no wait: within signal_every submits
     * a signal covering the destroyed buffer's last submit is issued. */
    vkc_buffer *x = make_buf(w->ctx, "x");
    assert_int_equal(vkc_buffer_upload(x, 0, w->ha, N * 4), VKC_SUCCESS);
    vkc_ticket tx;
    s = submit_add(w, x, 5, &tx);
    vkc_buffer_destroy(x);
    vkc_seq_destroy(s);
    vkc_ticket to;
    vkc_seq *other = submit_add(w, w->b, 0, &to);
    for (uint32_t i = 0; i < w->ctx->signal_every; ++i)
        assert_int_equal(vkc_seq_submit(other, &to), VKC_SUCCESS);
    assert_true(atomic_load(&w->ctx->signalled_value) >= tx.value);
    assert_int_equal(vkc_finish(w->ctx), VKC_SUCCESS);
    assert_int_equal(listed_buffers(w->ctx), base - 1);
    memset(w->out, 0, sizeof(w->out));
    assert_int_equal(vkc_buffer_download(w->c, 0, w->out, N * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (w->out[i] != 2u * w->hb[i])
            fail_msg("c[%u] = %u, want %u", i, w->out[i], 2u * w->hb[i]);
    vkc_seq_destroy(other);

    /* 3: destroyed, held by unsignalled submits, then the context goes. */
    x = make_buf(w->ctx, "x again");
    s = submit_add(w, x, 5, &tx);
    vkc_buffer_destroy(x);
    vkc_seq_destroy(s);
    vkc_test_context_destroy(w->ctx);
    free(w);
}

#define T(k)                                                                                       \
    cmocka_unit_test(test_##k##_S_RECORDED), cmocka_unit_test(test_##k##_S_IMMEDIATE),             \
        cmocka_unit_test(test_##k##_S_IN_FLIGHT), cmocka_unit_test(test_##k##_S_RECOVERED)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(K_BUFFER),
        T(K_WRAPPED),
        T(K_KERNEL),
        T(K_SEQ),
        T(K_FUSE),
        T(K_IMAGE),
        T(K_WIMAGE),
        T(K_CONTEXT),
        T(K_CTX_IMAGE),
        cmocka_unit_test(test_destroyed_output_not_reused),
        cmocka_unit_test(test_hold_across_sequences),
        cmocka_unit_test(test_context_destroy_orders),
        cmocka_unit_test(test_two_threads_one_sequence),
        cmocka_unit_test(test_bounded_waits),
        cmocka_unit_test(test_destroy_drain_bounded),
        cmocka_unit_test(test_image_destroyed),
        cmocka_unit_test(test_sparse_signal_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
