/* Concurrency and soak.
 *
 * threads: 8 threads, each recording and submitting its own sequences
 * (VKC_STRESS_SUBMITS submits each, 10,000 by default) with waits and polls
 * interleaved and an occasional re-recording, validation on; every thread's
 * result is checked at the end.
 *
 * soak: VKC_SOAK_DISPATCHES dispatches (1,000,000 by default), half through
 * replay of a recorded sequence and half through immediate mode. After a
 * warm-up, process memory (RSS from /proc/self/statm) and vkc's live-object
 * counters (recording units, descriptor pools, memory blocks, staging
 * blocks, pipelines, buffers) must stay flat; the result is checked.
 * Validation is off for the soak (the layer's own bookkeeping is not vkc's
 * memory); ctest runs both in a shortened form (see tests/CMakeLists.txt). */
#include "vkc_internal.h"

#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ADD_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint n; uint add; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) x[i] += pc.add;\n"
    "}\n";

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VKC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VKC_SANITIZED 1
#endif
#endif
#ifndef VKC_SANITIZED
#define VKC_SANITIZED 0
#endif

typedef struct push2 {
    uint32_t n, add;
} push2;

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    return strtoull(v, NULL, 10);
}

/* ---- 8 threads ------------------------------------------------------------------------------ */

#define THREADS 8
#define TN 1024u

typedef struct worker {
    vkc_context *ctx;
    vkc_kernel *k;
    uint32_t id;
    uint64_t submits;
    vkc_buffer *buf;
    uint64_t expect; /* added to every element */
    char error[256];
} worker;

static vkc_result record_add(worker *w, vkc_seq *s, uint32_t add)
{
    push2 p = {TN, add};
    vkc_arg a = {.buffer = w->buf};
    VKC_FORWARD(vkc_seq_begin(s));
    VKC_FORWARD(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = w->k,
                                                         .args = &a,
                                                         .arg_count = 1,
                                                         .push = &p,
                                                         .push_size = sizeof(p),
                                                         .count = TN}));
    return vkc_seq_end(s);
}

#define WCHECK(w, expr)                                                                            \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ < 0) {                                                                              \
            snprintf((w)->error, sizeof((w)->error), "%s: %s: %s", #expr, vkc_result_string(r_),   \
                     vkc_context_last_error((w)->ctx));                                            \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static void *worker_main(void *arg)
{
    worker *w = arg;
    vkc_seq *s[2] = {NULL, NULL};
    uint32_t add[2] = {w->id + 1, 2 * (w->id + 1)};
    vkc_ticket last = {0};
    WCHECK(w, vkc_seq_create(w->ctx, &(vkc_seq_desc){"stress a"}, &s[0]));
    WCHECK(w, vkc_seq_create(w->ctx, &(vkc_seq_desc){"stress b"}, &s[1]));
    WCHECK(w, record_add(w, s[0], add[0]));
    WCHECK(w, record_add(w, s[1], add[1]));
    for (uint64_t i = 0; i < w->submits; ++i) {
        uint32_t which = (uint32_t)(i % 3 == 2); /* two of a, one of b */
        if (i % 997 == 996) {
            /* Re-record b with a new constant while a may be in flight. */
            WCHECK(w, vkc_wait(w->ctx, last, UINT64_MAX));
            add[1] += 1;
            WCHECK(w, record_add(w, s[1], add[1]));
        }
        vkc_ticket t;
        WCHECK(w, vkc_seq_submit(s[which], &t));
        w->expect += add[which];
        if (i % 5 == 0) {
            vkc_result r = vkc_poll(w->ctx, last);
            if (r != VKC_SUCCESS && r != VKC_NOT_READY)
                WCHECK(w, r);
        }
        if (i % 16 == 15)
            WCHECK(w, vkc_wait(w->ctx, t, UINT64_MAX));
        last = t;
    }
    WCHECK(w, vkc_wait(w->ctx, last, UINT64_MAX));
out:
    vkc_seq_destroy(s[0]);
    vkc_seq_destroy(s[1]);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    uint64_t submits = env_u64("VKC_STRESS_SUBMITS", 10000);
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_kernel *k = NULL;
    assert_int_equal(
        vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = ADD_GLSL, .name = "add"}, &k),
        VKC_SUCCESS);
    worker w[THREADS];
    pthread_t th[THREADS];
    uint32_t *init = malloc(TN * 4), *out = malloc(TN * 4);
    assert_non_null(init);
    assert_non_null(out);
    for (uint32_t t = 0; t < THREADS; ++t) {
        memset(&w[t], 0, sizeof(w[t]));
        w[t].ctx = ctx;
        w[t].k = k;
        w[t].id = t;
        w[t].submits = submits;
        assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = TN * 4}, &w[t].buf),
                         VKC_SUCCESS);
        for (uint32_t i = 0; i < TN; ++i)
            init[i] = i * 7 + t;
        assert_int_equal(vkc_buffer_upload(w[t].buf, 0, init, TN * 4), VKC_SUCCESS);
    }
    for (uint32_t t = 0; t < THREADS; ++t)
        assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    for (uint32_t t = 0; t < THREADS; ++t)
        pthread_join(th[t], NULL);
    for (uint32_t t = 0; t < THREADS; ++t) {
        if (w[t].error[0])
            fail_msg("thread %u: %s", t, w[t].error);
        assert_int_equal(vkc_buffer_download(w[t].buf, 0, out, TN * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < TN; ++i) {
            uint32_t want = (uint32_t)(i * 7 + t + w[t].expect);
            if (out[i] != want)
                fail_msg("thread %u: x[%u] = %u, want %u", t, i, out[i], want);
        }
        vkc_buffer_destroy(w[t].buf);
    }
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    printf("[stress] %u threads x %llu submits: results right; %llu submits in all, %llu "
           "recording units alive\n",
           THREADS, (unsigned long long)submits, (unsigned long long)st.submits,
           (unsigned long long)st.command_buffers);
    /* RELIABILITY.md: the context counted every submit of every thread. */
    assert_true(st.submits >= (uint64_t)THREADS * submits);
    vkc_kernel_destroy(k);
    free(init);
    free(out);
    vkc_test_context_destroy(ctx);
}

/* ---- soak ------------------------------------------------------------------------------------ */

#define SN 256u
#define SEQ_DISPATCHES 64u

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void no_validation(vkc_context_desc *d)
{
    d->validation = VKC_OFF;
}

typedef struct soak_point {
    uint64_t dispatches, rss;
    vkc_stats st;
} soak_point;

static void soak(bool fallbacks, uint64_t total)
{
    vkc_context_desc d = vkc_test_desc();
    no_validation(&d);
    if (fallbacks) {
        /* Descriptor-set pools and fences instead of push descriptors and
         * timeline semaphores. */
        d.push_descriptors = VKC_OFF;
        d.timeline_semaphores = VKC_OFF;
    }
    vkc_context *ctx = NULL;
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_SUCCESS);
    vkc_kernel *k = NULL;
    assert_int_equal(
        vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = ADD_GLSL, .name = "add"}, &k),
        VKC_SUCCESS);
    vkc_buffer *x = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = SN * 4}, &x), VKC_SUCCESS);
    uint32_t init[SN], out[SN];
    for (uint32_t i = 0; i < SN; ++i)
        init[i] = i;
    assert_int_equal(vkc_buffer_upload(x, 0, init, sizeof(init)), VKC_SUCCESS);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){"soak"}, &s), VKC_SUCCESS);
    push2 p = {SN, 1};
    vkc_arg a = {.buffer = x};
    vkc_dispatch_desc dd = {
        .kernel = k, .args = &a, .arg_count = 1, .push = &p, .push_size = sizeof(p), .count = SN};
    for (uint32_t i = 0; i < SEQ_DISPATCHES; ++i)
        assert_int_equal(vkc_seq_dispatch(s, &dd), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);

    uint64_t done = 0, added = 0;
    const uint64_t warm_at = total / 10;
    soak_point warm = {0}, end = {0};
    bool warmed = false;
    vkc_ticket t = {0};
    while (done < total) {
        /* One replay (64 dispatches) then 64 immediate dispatches. */
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        done += SEQ_DISPATCHES;
        added += SEQ_DISPATCHES;
        for (uint32_t i = 0; i < SEQ_DISPATCHES; ++i)
            assert_int_equal(vkc_dispatch(ctx, &dd), VKC_SUCCESS);
        done += SEQ_DISPATCHES;
        added += SEQ_DISPATCHES;
        if ((done / (2 * SEQ_DISPATCHES)) % 8 == 0)
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        if (!warmed && done >= warm_at) {
            assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
            warm.dispatches = done;
            warm.rss = rss_bytes();
            assert_int_equal(vkc_context_stats(ctx, &warm.st), VKC_SUCCESS);
            warmed = true;
        }
    }
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    end.dispatches = done;
    end.rss = rss_bytes();
    assert_int_equal(vkc_context_stats(ctx, &end.st), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(x, 0, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < SN; ++i)
        if (out[i] != (uint32_t)(i + added))
            fail_msg("x[%u] = %u, want %u", i, out[i], (uint32_t)(i + added));
    printf("[soak%s] %llu dispatches (%llu submits): RSS %.1f MiB after warm-up (%llu dispatches), "
           "%.1f MiB at the end; recording units %llu -> %llu, descriptor pools %llu -> %llu, "
           "memory blocks %llu -> %llu, staging blocks %llu -> %llu\n",
           fallbacks ? " (descriptor pools, fences)" : "", (unsigned long long)end.dispatches,
           (unsigned long long)end.st.submits, warm.rss / 1048576.0,
           (unsigned long long)warm.dispatches, end.rss / 1048576.0,
           (unsigned long long)warm.st.command_buffers, (unsigned long long)end.st.command_buffers,
           (unsigned long long)warm.st.descriptor_pools,
           (unsigned long long)end.st.descriptor_pools, (unsigned long long)warm.st.memory_blocks,
           (unsigned long long)end.st.memory_blocks, (unsigned long long)warm.st.staging_blocks,
           (unsigned long long)end.st.staging_blocks);
    /* Recording units: how many are in flight at once depends on how fast
     * the GPU retires them (a short CI soak may reach the peak after its
     * warm-up), so the bound is the most that can be in flight here: one
     * sequence's ring (at most 8 copies), the immediate-mode batches and the
     * one-shot transfers; a leak would pass it within a few hundred
     * submits. */
    vkc_context_features fe;
    assert_int_equal(vkc_context_features_get(ctx, &fe), VKC_SUCCESS);
    const uint64_t unit_bound = 8 + fe.batches_in_flight + 2;
    assert_true(end.st.command_buffers <= unit_bound);
    assert_true(warm.st.command_buffers <= end.st.command_buffers);
    /* Without push descriptors each recording unit owns its pool: a unit
     * reached after the warm-up (allowed above) brings its pool, no more. */
    assert_true(end.st.descriptor_pools - warm.st.descriptor_pools <=
                end.st.command_buffers - warm.st.command_buffers);
    assert_true(warm.st.descriptor_pools <= end.st.descriptor_pools);
    assert_int_equal(end.st.memory_blocks, warm.st.memory_blocks);
    assert_int_equal(end.st.memory_bytes, warm.st.memory_bytes);
    assert_int_equal(end.st.staging_blocks, warm.st.staging_blocks);
    assert_int_equal(end.st.pipelines, warm.st.pipelines);
    assert_int_equal(end.st.buffers, warm.st.buffers);
    /* Flat: the allocator's arenas may still settle by a few pages. Under a
     * sanitizer RSS measures its quarantine and shadow, not vkc: the
     * counters above (and LeakSanitizer) are the check there. */
    if (!VKC_SANITIZED && end.rss > warm.rss + (4u << 20))
        fail_msg("RSS grew from %llu to %llu bytes after warm-up", (unsigned long long)warm.rss,
                 (unsigned long long)end.rss);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
    vkc_context_destroy(ctx);
}

/* Half through push descriptors and the timeline, half through the
 * fallbacks. */
static void test_soak(void **state)
{
    (void)state;
    uint64_t total = env_u64("VKC_SOAK_DISPATCHES", 1000000);
    soak(false, total / 2);
    soak(true, total - total / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_soak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
