/* Tickets without a timeline signal on every submit (pool.c's
 * VKC_SIGNAL_EVERY): where the completion marker is trusted, most submits
 * leave the timeline alone and a later signal covers them. Every result is
 * checked against a count kept on the CPU. */
#define _GNU_SOURCE /* setenv */
/* The private header first: it brings Vulkan in without prototypes (volk). */
#include "vkc_internal.h"

#include "vkc_test.h"

#include <stdlib.h>
#include <string.h>

#define N 64u

typedef struct fixture {
    vkc_context *ctx;
    vkc_kernel *k;
    vkc_buffer *x;
    vkc_seq *s;
    uint32_t base; /* warm-up submits, counted in the buffer */
} fixture;

static void fixture_open(fixture *f, vkc_context *ctx)
{
    memset(f, 0, sizeof(*f));
    f->ctx = ctx;
    assert_int_equal(vkc_kernel_create_glsl(
                         ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"}, &f->k),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4}, &f->x), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(f->x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(ctx, NULL, &f->s), VKC_SUCCESS);
    vkc_arg a = {.buffer = f->x, .access = VKC_ACCESS_READ_WRITE};
    uint32_t n = N;
    assert_int_equal(vkc_seq_dispatch(f->s, &(vkc_dispatch_desc){.kernel = f->k,
                                                                 .args = &a,
                                                                 .arg_count = 1,
                                                                 .push = &n,
                                                                 .push_size = 4,
                                                                 .count = N}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(f->s), VKC_SUCCESS);
    /* The first submit of each recorded copy signals (the unit it replaced
     * goes back to the pool); resubmits after that need not. */
    vkc_ticket t = {0};
    for (uint32_t i = 0; i < ctx->seq_ring; ++i)
        assert_int_equal(vkc_seq_submit(f->s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    f->base = ctx->seq_ring;
}

/* The buffer holds `expect` everywhere. */
static void fixture_check(fixture *f, uint32_t expect)
{
    uint32_t got[N];
    assert_int_equal(vkc_buffer_download(f->x, 0, got, sizeof(got)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(got[i], expect + f->base);
}

static void fixture_close(fixture *f)
{
    vkc_seq_destroy(f->s);
    vkc_buffer_destroy(f->x);
    vkc_kernel_destroy(f->k);
}

static uint64_t signals(vkc_context *ctx)
{
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    return st.timeline_signals;
}

static uint64_t timeline_now(vkc_context *ctx)
{
    uint64_t v = 0;
    assert_int_equal(ctx->vk.vkGetSemaphoreCounterValue(ctx->device, ctx->timeline, &v),
                     VK_SUCCESS);
    return v;
}

/* The default context on lavapipe trusts the marker: submits leave the
 * timeline alone, tickets stay one apart, a blocking wait on one that
 * carried no signal adds one and returns. */
static void test_sparse(void **state)
{
    vkc_context *ctx = *state;
    assert_true(vkc__marker_on(ctx));
    assert_true(atomic_load(&ctx->marker_trusted));
    fixture f;
    fixture_open(&f, ctx);
    const uint64_t sig0 = signals(ctx);
    vkc_ticket prev = {0}, t = {0};
    for (uint32_t i = 0; i < 5; ++i) {
        assert_int_equal(vkc_seq_submit(f.s, &t), VKC_SUCCESS);
        if (prev.value)
            assert_int_equal(t.value, prev.value + 1);
        prev = t;
    }
    assert_int_equal(signals(ctx), sig0);
    assert_true(atomic_load(&ctx->signalled_value) < t.value);
    assert_int_equal(vkc__wait_value(ctx, t.value, UINT64_MAX, VKC_WAIT_BLOCK), VKC_SUCCESS);
    assert_true(timeline_now(ctx) >= t.value);
    assert_int_equal(signals(ctx), sig0 + 1);
    fixture_check(&f, 5);
    fixture_close(&f);
}

/* Immediate mode around its ring of batches many times: each slot's reuse
 * waits on the ticket of its last batch, which may have carried no signal;
 * units come back to the pool (bounded), the result is exact. */
static void test_immediate_ring(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_open(&f, ctx);
    uint32_t n = N;
    vkc_arg a = {.buffer = f.x, .access = VKC_ACCESS_READ_WRITE};
    const vkc_dispatch_desc d = {
        .kernel = f.k, .args = &a, .arg_count = 1, .push = &n, .push_size = 4, .count = N};
    vkc_stats warm, now;
    const uint32_t count = 3000;
    for (uint32_t i = 0; i < count; ++i) {
        if (i == 1000)
            assert_int_equal(vkc_context_stats(ctx, &warm), VKC_SUCCESS);
        assert_int_equal(vkc_dispatch(ctx, &d), VKC_SUCCESS);
    }
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    assert_int_equal(vkc_context_stats(ctx, &now), VKC_SUCCESS);
    assert_true(now.command_buffers <= warm.command_buffers + 4);
    fixture_check(&f, count);
    fixture_close(&f);
}

/* Submit `count` times; returns the last ticket, tickets one apart. */
static vkc_ticket submit_n(fixture *f, uint32_t count)
{
    vkc_ticket prev = {0}, t = {0};
    for (uint32_t i = 0; i < count; ++i) {
        assert_int_equal(vkc_seq_submit(f->s, &t), VKC_SUCCESS);
        if (prev.value)
            assert_int_equal(t.value, prev.value + 1);
        prev = t;
    }
    return t;
}

/* Every ticket polls complete once the last one was waited for (marker or
 * a later signal); with 300 submits, the timeline was signalled every
 * VKC_SIGNAL_EVERY values and no more. */
static void test_poll_every(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_open(&f, ctx);
    const uint64_t sig0 = signals(ctx);
    vkc_ticket first = {0};
    assert_int_equal(vkc_seq_submit(f.s, &first), VKC_SUCCESS);
    vkc_ticket t = submit_n(&f, 299);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    for (uint64_t v = first.value; v <= t.value; ++v)
        assert_int_equal(vkc_poll(ctx, (vkc_ticket){v, t.context_id}), VKC_SUCCESS);
    const uint64_t sig = signals(ctx) - sig0;
    assert_true(sig >= 300 / ctx->signal_every);
    assert_true(sig <= 300 / ctx->signal_every + 2);
    fixture_check(&f, 300);
    /* All of them on the timeline too, once something waits on it. */
    assert_int_equal(vkc__wait_value(ctx, t.value, UINT64_MAX, VKC_WAIT_BLOCK), VKC_SUCCESS);
    assert_true(timeline_now(ctx) >= t.value);
    fixture_close(&f);
}

/* An exported ticket that carried no signal gets one: the host's own wait
 * on the pair returns. */
static void test_export(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_open(&f, ctx);
    vkc_ticket t = submit_n(&f, 3);
    assert_true(atomic_load(&ctx->signalled_value) < t.value);
    VkSemaphore sem = VK_NULL_HANDLE;
    uint64_t value = 0;
    assert_int_equal(vkc_ticket_export(ctx, t, &sem, &value), VKC_SUCCESS);
    assert_true(value >= t.value);
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &value;
    assert_int_equal(ctx->vk.vkWaitSemaphores(ctx->device, &wi, 5000000000ull), VK_SUCCESS);
    fixture_check(&f, 3);
    fixture_close(&f);
}

/* A submit that waits on a host semaphore signals the timeline. */
static void test_host_wait_signals(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_open(&f, ctx);
    submit_n(&f, 2);
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &tci;
    VkSemaphore host = VK_NULL_HANDLE;
    assert_int_equal(ctx->vk.vkCreateSemaphore(ctx->device, &sci, NULL, &host), VK_SUCCESS);
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = host;
    si.value = 1;
    assert_int_equal(ctx->vk.vkSignalSemaphore(ctx->device, &si), VK_SUCCESS);
    assert_int_equal(vkc_wait_host_semaphore(ctx, host, 1), VKC_SUCCESS);
    const uint64_t sig0 = signals(ctx);
    vkc_ticket t = submit_n(&f, 1);
    assert_int_equal(signals(ctx), sig0 + 1);
    assert_int_equal(atomic_load(&ctx->signalled_value), t.value);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    ctx->vk.vkDestroySemaphore(ctx->device, host, NULL);
    fixture_check(&f, 3);
    fixture_close(&f);
}

/* Where the marker is not trusted (its self-test failed), every submit
 * signals, as before. */
static void test_untrusted(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_open(&f, ctx);
    ctx->marker[0] += 5; /* a count that ran ahead: the check fails */
    bool ok = true;
    assert_int_equal(vkc__marker_check(ctx, &ok), VKC_SUCCESS);
    assert_false(ok);
    const uint64_t sig0 = signals(ctx);
    vkc_ticket t = submit_n(&f, 10);
    assert_int_equal(signals(ctx), sig0 + 10);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    fixture_check(&f, 10);
    fixture_close(&f);
}

/* VKC_SIGNAL_EVERY=1 gives the old behaviour, 8 a signal every 8 values. */
static void check_every(const char *every, uint32_t count, uint64_t lo, uint64_t hi)
{
    vkc_test_validation_reset();
    assert_int_equal(setenv("VKC_SIGNAL_EVERY", every, 1), 0);
    vkc_context *ctx = vkc_test_context_create(NULL);
    unsetenv("VKC_SIGNAL_EVERY");
    assert_int_equal(ctx->signal_every, (uint32_t)atoi(every));
    fixture f;
    fixture_open(&f, ctx);
    const uint64_t sig0 = signals(ctx);
    vkc_ticket t = submit_n(&f, count);
    const uint64_t sig = signals(ctx) - sig0;
    assert_true(sig >= lo && sig <= hi);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    fixture_check(&f, count);
    fixture_close(&f);
    vkc_test_context_destroy(ctx);
}

static void test_env_every(void **state)
{
    (void)state;
    check_every("1", 20, 20, 20);
    check_every("8", 40, 4, 6);
}

/* Without timeline semaphores (fences), nothing changes: no signals, the
 * results and waits as before. */
static void no_timeline(vkc_context_desc *d)
{
    d->timeline_semaphores = VKC_OFF;
}

static void test_fences(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    vkc_context *ctx = vkc_test_context_create(no_timeline);
    fixture f;
    fixture_open(&f, ctx);
    vkc_ticket t = submit_n(&f, 20);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_poll(ctx, t), VKC_SUCCESS);
    assert_int_equal(signals(ctx), 0);
    fixture_check(&f, 20);
    fixture_close(&f);
    vkc_test_context_destroy(ctx);
}

#define T(f) cmocka_unit_test_setup_teardown(f, vkc_test_setup, vkc_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_sparse),
        T(test_immediate_ring),
        T(test_poll_every),
        T(test_export),
        T(test_host_wait_signals),
        T(test_untrusted),
        T(test_env_every),
        T(test_fences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
