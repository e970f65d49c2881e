/* Armed submission (src/arm.c): a recorded sequence's round trips open a
 * copy submitted ahead behind the gate; anything else on the queue first
 * cancels it, and a cancelled copy must run empty. Every result is checked
 * against a count kept on the CPU: a cancelled copy that ran would show as
 * one increment too many, a lost round trip as one too few. */
#define _GNU_SOURCE /* setenv */
/* The private header first: it brings Vulkan in without prototypes (volk). */
#include "seq.h"

#include "vkc_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define N 64u

typedef struct fixture {
    vkc_context *ctx;
    vkc_kernel *k;
    vkc_buffer *x;
    vkc_seq *s;
    uint32_t count; /* submits of s, what every x[i] must hold */
} fixture;

static void record(fixture *f)
{
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
}

static void fixture_open(fixture *f, vkc_context *ctx)
{
    memset(f, 0, sizeof(*f));
    f->ctx = ctx;
    assert_int_equal(vkc_kernel_create_glsl(
                         ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"}, &f->k),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4}, &f->x), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(f->x, 0, N * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "armed inc"}, &f->s), VKC_SUCCESS);
    record(f);
}

/* k round trips: submit, wait. */
static void round_trips(fixture *f, uint32_t k)
{
    for (uint32_t i = 0; i < k; ++i) {
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(f->s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(f->ctx, t, UINT64_MAX), VKC_SUCCESS);
        f->count++;
    }
}

/* At least min round trips, then more until the armed queue holds more than
 * one copy, up to max in all; how many ran. A round trip that comes more
 * than VKC_ARM_QUICK_NS (1 ms) after the last starts the depth again at one
 * copy, which a loaded host (CI's two cores under TSan) does now and then:
 * one run in six ended 200 round trips with one copy queued. A run of quick
 * ones deepens it again, and the checks below then see a deep queue. */
static uint32_t round_trips_deep(fixture *f, uint32_t min, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && (n < min || atomic_load(&f->ctx->arm_len) <= 1)) {
        round_trips(f, 1);
        ++n;
    }
    return n;
}

static void fixture_check(fixture *f)
{
    uint32_t got[N];
    assert_int_equal(vkc_buffer_download(f->x, 0, got, sizeof(got)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(got[i], f->count);
}

static void fixture_close(fixture *f)
{
    vkc_seq_destroy(f->s);
    vkc_buffer_destroy(f->x);
    vkc_kernel_destroy(f->k);
}

static vkc_stats stats(vkc_context *ctx)
{
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    return st;
}

static bool armed(vkc_context *ctx)
{
    return atomic_load(&ctx->armed_cmd) != NULL;
}

/* Round trips until one leaves a copy armed (the ring's copies are recorded
 * as they come round). */
static void arm(fixture *f)
{
    /* The tests cancel on purpose, more often than the policy tolerates. */
    atomic_store(&f->s->arm_misses, 0);
    f->s->arm_quiet = 0;
    for (uint32_t i = 0; i < 2 * VKC_SEQ_RING_MAX + 2 && !armed(f->ctx); ++i)
        round_trips(f, 1);
    assert_true(armed(f->ctx));
}

/* The context says so, and a loop of round trips opens armed copies. */
static void test_round_trips(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(ctx, &feat), VKC_SUCCESS);
    assert_true(feat.armed_submits);
    assert_string_equal(feat.armed_reason, "self-test passed");
    fixture f;
    fixture_open(&f, ctx);
    const vkc_stats s0 = stats(ctx);
    round_trips(&f, 40);
    const vkc_stats s1 = stats(ctx);
    /* Every round trip after the ring's first lap opens one. */
    assert_true(s1.armed_opens - s0.armed_opens >= 40 - 2 * VKC_SEQ_RING_MAX);
    fixture_check(&f);
    assert_false(armed(ctx)); /* the blocking download cancelled it */
    fixture_close(&f);
}

/* A submit of another sequence cancels the armed copy, which runs empty:
 * both counts stay exact. */
static void test_other_work(void **state)
{
    vkc_context *ctx = *state;
    fixture a, b;
    fixture_open(&a, ctx);
    fixture_open(&b, ctx);
    for (int k = 0; k < 4; ++k) {
        arm(&a);
        const vkc_stats s0 = stats(ctx);
        const uint32_t queued = atomic_load(&ctx->arm_len); /* one or more copies */
        assert_true(queued >= 1);
        round_trips(&b, 1);
        assert_int_equal(stats(ctx).armed_cancels, s0.armed_cancels + queued);
        round_trips(&a, 3);
    }
    fixture_check(&a);
    fixture_check(&b);
    fixture_close(&b);
    fixture_close(&a);
}

/* A few submits without waits: only a round trip arms, and tickets stay in
 * order whichever way each went. */
static void test_pipelined(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_open(&f, ctx);
    arm(&f);
    vkc_ticket prev = {0}, t = {0};
    for (uint32_t i = 0; i < 12; ++i) {
        assert_int_equal(vkc_seq_submit(f.s, &t), VKC_SUCCESS);
        f.count++;
        if (prev.value)
            assert_true(t.value > prev.value);
        prev = t;
    }
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    fixture_check(&f);
    fixture_close(&f);
}

/* Round trips in a row deepen the armed queue (one vkQueueSubmit arms many
 * copies); another sequence's submit then cancels all of them at once, and
 * a copy opened without a wait (perhaps still running when the cancel
 * comes) keeps its run: both counts stay exact. */
static void test_deep(void **state)
{
    vkc_context *ctx = *state;
    fixture a, b;
    fixture_open(&a, ctx);
    fixture_open(&b, ctx);
    /* The checks read x back: the host's to read from the start, so that
     * the first download does not record the sequences again (with their
     * host barrier) inside the counted round trips. */
    (void)vkc_buffer_map(a.x);
    (void)vkc_buffer_map(b.x);
    for (int k = 0; k < 3; ++k) {
        atomic_store(&a.s->arm_misses, 0);
        a.s->arm_quiet = 0;
        const vkc_stats s0 = stats(ctx);
        const uint32_t n = round_trips_deep(&a, 200, 2000);
        const vkc_stats s1 = stats(ctx);
        uint32_t queued = atomic_load(&ctx->arm_len);
        /* A wait that outlasts its spin blocks on the timeline, whose signal
         * cancels the queue first: on a loaded host (CI under TSan, another
         * job on its two cores) some do, and the queue starts again. */
        const uint64_t cancelled = s1.armed_cancels - s0.armed_cancels;
        assert_true(s1.armed_opens - s0.armed_opens + cancelled + 10 >= n);
        /* Deeper than one copy: 200 round trips take it to 64 or 128. */
        assert_true(queued > 1 || cancelled);
        /* Every copy submitted ran, waits or was cancelled (run empty): none
         * lost, none doubled. */
        assert_int_equal(s1.submits - s0.submits, n + queued + cancelled);
        if (k == 1) {
            vkc_ticket t;
            assert_int_equal(vkc_seq_submit(a.s, &t), VKC_SUCCESS);
            a.count++;
            /* It opened the oldest copy, and may have topped the queue up
             * (when half of it had opened). */
            queued = atomic_load(&ctx->arm_len);
        }
        round_trips(&b, 1);
        assert_false(armed(ctx));
        assert_int_equal(stats(ctx).armed_cancels, s1.armed_cancels + queued);
        fixture_check(&a);
        fixture_check(&b);
    }
    /* Destroyed with its queue deep: every copy runs empty, nothing hangs
     * or leaks, and the other sequence goes on. */
    atomic_store(&a.s->arm_misses, 0);
    a.s->arm_quiet = 0;
    const uint64_t c0 = stats(ctx).armed_cancels;
    (void)round_trips_deep(&a, 200, 2000);
    assert_true(atomic_load(&ctx->arm_len) > 1 || stats(ctx).armed_cancels > c0);
    vkc_seq_destroy(a.s);
    a.s = NULL;
    assert_false(armed(ctx));
    round_trips(&b, 2);
    fixture_check(&a);
    fixture_check(&b);
    fixture_close(&b);
    fixture_close(&a);
}

/* Each way other work reaches the queue cancels an armed copy first. */
static void test_cancel_paths(void **state)
{
    vkc_context *ctx = *state;
    fixture f, g;
    fixture_open(&f, ctx);
    fixture_open(&g, ctx);
    uint32_t n = N;
    vkc_arg ga = {.buffer = g.x, .access = VKC_ACCESS_READ_WRITE};
    const vkc_dispatch_desc imm = {
        .kernel = g.k, .args = &ga, .arg_count = 1, .push = &n, .push_size = 4, .count = N};
    for (int path = 0; path < 7; ++path) {
        arm(&f);
        const uint64_t c0 = stats(ctx).armed_cancels;
        vkc_ticket t = {0};
        switch (path) {
        case 0:
            assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
            break;
        case 1: /* immediate mode */
            assert_int_equal(vkc_dispatch(ctx, &imm), VKC_SUCCESS);
            assert_int_equal(vkc_flush(ctx, &t), VKC_SUCCESS);
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
            g.count++;
            break;
        case 2: /* a blocking transfer */
            fixture_check(&f);
            break;
        case 3: /* the host's own use of the queue */
            vkc_queue_lock(ctx);
            vkc_queue_unlock(ctx);
            break;
        case 4: /* recorded again: the armed copy is stale */
            assert_int_equal(vkc_seq_begin(f.s), VKC_SUCCESS);
            record(&f);
            break;
        case 5: { /* a new push value: the armed copy is stale */
            uint32_t half = N / 2;
            assert_int_equal(vkc_seq_set_push(f.s, 0, &half, 4), VKC_SUCCESS);
            round_trips(&f, 1); /* only x[0 .. N/2) moves: undone below */
            f.count--;
            assert_int_equal(vkc_seq_set_push(f.s, 0, &n, 4), VKC_SUCCESS);
            /* x[N/2 ..] are one behind: one more round trip on that half. */
            uint32_t got[N];
            assert_int_equal(vkc_buffer_download(f.x, 0, got, sizeof(got)), VKC_SUCCESS);
            for (uint32_t i = 0; i < N; ++i)
                assert_int_equal(got[i], f.count + (i < N / 2));
            for (uint32_t i = 0; i < N; ++i)
                got[i] = f.count;
            assert_int_equal(vkc_buffer_upload(f.x, 0, got, sizeof(got)), VKC_SUCCESS);
            break;
        }
        default: { /* a host semaphore to wait on (already at its value) */
            VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
            tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
            tci.initialValue = 1;
            VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
            sci.pNext = &tci;
            VkSemaphore sem;
            assert_int_equal(ctx->vk.vkCreateSemaphore(ctx->device, &sci, NULL, &sem), VK_SUCCESS);
            assert_int_equal(vkc_wait_host_semaphore(ctx, sem, 1), VKC_SUCCESS);
            assert_false(armed(ctx));
            round_trips(&f, 1); /* carries the wait */
            assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
            ctx->vk.vkDestroySemaphore(ctx->device, sem, NULL);
            break;
        }
        }
        assert_false(armed(ctx));
        assert_true(stats(ctx).armed_cancels >= c0 + 1);
        fixture_check(&f);
        fixture_check(&g);
    }
    fixture_close(&g);
    fixture_close(&f);
}

/* Destroying the sequence whose copy is armed, then the context with a copy
 * armed: neither hangs, nothing leaks, the counts hold. */
static void test_destroy_armed(void **state)
{
    vkc_context *ctx = *state;
    fixture f, g;
    fixture_open(&f, ctx);
    fixture_open(&g, ctx);
    arm(&f);
    vkc_seq_destroy(f.s);
    assert_false(armed(ctx));
    f.s = NULL;
    fixture_check(&f);
    fixture_close(&f);
    fixture_close(&g);

    /* The context goes with the copy armed and the objects alive. */
    vkc_context *c2 = vkc_test_context_create(NULL);
    assert_non_null(c2);
    fixture h;
    fixture_open(&h, c2);
    arm(&h);
    vkc_test_context_destroy(c2);
}

/* The self-test catches a device that does not see the host's cancel (a
 * cancelled copy that runs): here the cancel's write is left out. */
static void test_self_test(void **state)
{
    vkc_context *ctx = *state;
    const char *why = NULL;
    ctx->test_arm_blind = true;
    assert_int_equal(vkc__arm_selftest(ctx, &why), VKC_SUCCESS);
    ctx->test_arm_blind = false;
    assert_non_null(why);
    assert_non_null(strstr(why, "cancelled armed copy ran"));
    why = NULL;
    assert_int_equal(vkc__arm_selftest(ctx, &why), VKC_SUCCESS);
    assert_null(why);
}

/* VKC_ARM=0: no arming, the same results. */
static void test_env_off(void **state)
{
    (void)state;
    setenv("VKC_ARM", "0", 1);
    vkc_context *ctx = vkc_test_context_create(NULL);
    unsetenv("VKC_ARM");
    assert_non_null(ctx);
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(ctx, &feat), VKC_SUCCESS);
    assert_false(feat.armed_submits);
    assert_string_equal(feat.armed_reason, "VKC_ARM=0");
    fixture f;
    fixture_open(&f, ctx);
    round_trips(&f, 20);
    assert_int_equal(stats(ctx).armed_opens, 0);
    fixture_check(&f);
    fixture_close(&f);
    vkc_test_context_destroy(ctx);
}

/* Threads doing round trips on their own sequences of one context cancel
 * each other's armed copies all the time: every count stays exact. */
static void *thread_main(void *p)
{
    fixture *f = p;
    round_trips(f, 150);
    return NULL;
}

static void test_threads(void **state)
{
    vkc_context *ctx = *state;
    enum { T = 3 };
    fixture f[T];
    pthread_t th[T];
    for (int i = 0; i < T; ++i)
        fixture_open(&f[i], ctx);
    for (int i = 0; i < T; ++i)
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &f[i]), 0);
    for (int i = 0; i < T; ++i)
        pthread_join(th[i], NULL);
    for (int i = 0; i < T; ++i) {
        fixture_check(&f[i]);
        fixture_close(&f[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),  cmocka_unit_test(test_other_work),
        cmocka_unit_test(test_pipelined),    cmocka_unit_test(test_deep),
        cmocka_unit_test(test_cancel_paths), cmocka_unit_test(test_destroy_armed),
        cmocka_unit_test(test_self_test),    cmocka_unit_test(test_env_off),
        cmocka_unit_test(test_threads),
    };
    /* The deep queue of a GPU's default (lavapipe's default is one copy). */
    setenv("VKC_ARM_DEPTH", "256", 1);
    return cmocka_run_group_tests(tests, vkc_test_setup, vkc_test_teardown);
}
