/* The thread-safety claims of vkc.h ("Thread safety"), each exercised from
 * several threads on one context at once, for ThreadSanitizer (tools/run.sh
 * runs this file in its TSan stage) and with checked results in any build:
 * - the logger called at once from threads vkc did not create, the way a
 *   driver or the validation layer calls it (vkSubmitDebugUtilsMessageEXT
 *   goes through the layer's messenger to vkc's callback on the calling
 *   thread), while vkc's own failing calls log and set the last error;
 * - every call of the "thread-safe" class, on distinct and on shared
 *   objects, results checked against the CPU.
 * The one-thread-per-object class (sequences, graphs) is in test_dispatch
 * (threads), test_stress and test_lifetime (one sequence, two threads). */
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define MESSAGES 200u
#define N 1024u

/* ---- the logger from foreign threads ---- */

typedef struct log_tally {
    pthread_mutex_t lock;
    uint32_t from_driver[THREADS]; /* "driver thread k" messages, per k */
    uint32_t errors;               /* VKC_LOG_ID_ERROR */
} log_tally;

static log_tally g_tally = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static void tally_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    log_tally *t = user;
    unsigned k = 0;
    if (id == VKC_LOG_ID_LAYER && sscanf(msg, "driver thread %u", &k) == 1 && k < THREADS) {
        pthread_mutex_lock(&t->lock);
        t->from_driver[k]++;
        pthread_mutex_unlock(&t->lock);
        return;
    }
    if (id == VKC_LOG_ID_ERROR) {
        pthread_mutex_lock(&t->lock);
        t->errors++;
        pthread_mutex_unlock(&t->lock);
        return;
    }
    vkc_test_log(NULL, level, id, msg); /* validation messages still fail the test */
}

static void tally_logger(vkc_context_desc *d)
{
    d->logger = (vkc_logger){tally_log, &g_tally};
}

typedef struct driver_thread {
    vkc_context *ctx;
    PFN_vkSubmitDebugUtilsMessageEXT submit;
    unsigned id;
} driver_thread;

static void *driver_main(void *p)
{
    driver_thread *d = p;
    for (uint32_t i = 0; i < MESSAGES; ++i) {
        char text[64];
        snprintf(text, sizeof(text), "driver thread %u message %u", d->id, i);
        VkDebugUtilsMessengerCallbackDataEXT cd = {
            VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
        cd.pMessageIdName = "vkc-test";
        cd.pMessage = text;
        d->submit(d->ctx->instance, VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
                  VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT, &cd);
    }
    return NULL;
}

typedef struct failing_thread {
    vkc_context *ctx;
    uint32_t failures;
} failing_thread;

/* vkc's own logging and last-error path, at the same time. */
static void *failing_main(void *p)
{
    failing_thread *f = p;
    for (uint32_t i = 0; i < MESSAGES; ++i) {
        vkc_buffer *b = NULL;
        if (vkc_buffer_create(f->ctx, &(vkc_buffer_desc){.size = 0}, &b) ==
            VKC_ERROR_INVALID_ARGUMENT)
            f->failures++;
        if (!strstr(vkc_context_last_error(f->ctx), "VKC_ERROR"))
            f->failures += 1000000; /* a torn or empty message */
    }
    return NULL;
}

static void test_logger_from_foreign_threads(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(tally_logger);
    PFN_vkSubmitDebugUtilsMessageEXT submit =
        (PFN_vkSubmitDebugUtilsMessageEXT)ctx->vki.vkGetInstanceProcAddr(
            ctx->instance, "vkSubmitDebugUtilsMessageEXT");
    assert_non_null(submit);
    assert_true(ctx->messenger != VK_NULL_HANDLE);
    pthread_mutex_lock(&g_tally.lock);
    memset(g_tally.from_driver, 0, sizeof(g_tally.from_driver));
    g_tally.errors = 0;
    pthread_mutex_unlock(&g_tally.lock);
    driver_thread d[THREADS];
    failing_thread f[2] = {{ctx, 0}, {ctx, 0}};
    pthread_t th[THREADS + 2];
    for (unsigned i = 0; i < THREADS; ++i) {
        d[i] = (driver_thread){ctx, submit, i};
        assert_int_equal(pthread_create(&th[i], NULL, driver_main, &d[i]), 0);
    }
    for (unsigned i = 0; i < 2; ++i)
        assert_int_equal(pthread_create(&th[THREADS + i], NULL, failing_main, &f[i]), 0);
    for (unsigned i = 0; i < THREADS + 2; ++i)
        pthread_join(th[i], NULL);
    pthread_mutex_lock(&g_tally.lock);
    for (unsigned i = 0; i < THREADS; ++i)
        assert_int_equal(g_tally.from_driver[i], MESSAGES);
    assert_int_equal(g_tally.errors, 2 * MESSAGES);
    pthread_mutex_unlock(&g_tally.lock);
    assert_int_equal(f[0].failures, MESSAGES);
    assert_int_equal(f[1].failures, MESSAGES);
    vkc_test_context_destroy(ctx);
}

/* ---- the thread-safe class, all at once ---- */

typedef struct worker {
    vkc_context *ctx;
    vkc_kernel *shared_kernel;
    vkc_buffer *shared; /* every worker writes its own slice of it */
    uint32_t id;
    vkc_sampler *sampler;
    /* Created on the worker, destroyed on the main thread after the join:
     * lavapipe defers a pipeline's destruction to its queue thread, under
     * futex locking TSan cannot see, so a kernel destroyed while other
     * threads submit reads as a race inside the driver (malloc and free
     * both in libvulkan_lvp). Only a suppression of that module would
     * silence it, and that could hide vkc's own host-versus-device races. */
    vkc_kernel *k, *gk;
    VkSemaphore host_sem; /* the host's timeline, at 1 */
    char error[256];
} worker;

#define WCHECK(w, expr)                                                                            \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ != VKC_SUCCESS) {                                                                   \
            snprintf((w)->error, sizeof((w)->error), "%s: %s: %s", #expr, vkc_result_string(r_),   \
                     vkc_context_last_error((w)->ctx));                                            \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static void *worker_main(void *p)
{
    worker *w = p;
    vkc_context *ctx = w->ctx;
    vkc_kernel *k = NULL;
    vkc_buffer *a = NULL, *b = NULL, *c = NULL;
    vkc_seq *s = NULL;
    vkc_fuse *g = NULL;
    vkc_image *img = NULL;
    static _Thread_local uint32_t ha[N], hb[N], out[N];
    for (uint32_t i = 0; i < N; ++i) {
        ha[i] = i * 5u + w->id;
        hb[i] = 7u * w->id + i;
    }
    WCHECK(w, vkc_kernel_create(ctx,
                                &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                   .spirv_size = test_shaders_add_size,
                                                   .name = "add"},
                                &k));
    WCHECK(w, vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "a"}, &a));
    WCHECK(w, vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "b"}, &b));
    WCHECK(w, vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .name = "c"}, &c));
    WCHECK(w, vkc_seq_create(ctx, NULL, &s));
    WCHECK(w, vkc_fuse_create(ctx, NULL, &g));
    WCHECK(w, vkc_image_create(ctx,
                               &(vkc_image_desc){.format = VKC_FORMAT_R32UI,
                                                 .width = 32,
                                                 .height = N / 32,
                                                 .usage = VKC_IMAGE_USAGE_STORAGE},
                               &img));
    vkc_sampler *smp = NULL;
    WCHECK(w, vkc_sampler_get(ctx, NULL, &smp));
    w->sampler = smp;
    WCHECK(w, vkc_buffer_upload(a, 0, ha, N * 4));
    WCHECK(w, vkc_buffer_upload(b, 0, hb, N * 4));
    /* Two writers of the same bytes: either's data, never a mix within
     * what one upload wrote (checked after the join). */
    const uint64_t slice = N * 4 / THREADS;
    WCHECK(w, vkc_buffer_upload(w->shared, w->id * slice, ha, slice));
    VkBuffer vb;
    VkDeviceSize off;
    vkc_kernel_info ki;
    WCHECK(w, vkc_buffer_vk(a, &vb, &off));
    WCHECK(w, vkc_kernel_info_get(w->shared_kernel, &ki));
    if (vkc_buffer_size(a) != N * 4 || !vkc_context_device(ctx)) {
        snprintf(w->error, sizeof(w->error), "queries of live objects");
        goto out;
    }
    (void)vkc_buffer_map(a);
    VkPipeline pl;
    VkPipelineLayout ly;
    VkDescriptorSetLayout sl;
    WCHECK(w, vkc_kernel_vk(w->shared_kernel, &pl, &ly, &sl));
    vkc_context_features feat;
    WCHECK(w, vkc_context_features_get(ctx, &feat));
    vkc_system_info sys;
    WCHECK(w, vkc_system_query(&sys));
    (void)vkc_last_create_error();
    /* A run-time compile on every thread at once (one source: the SPIR-V
     * and pipeline caches are shared too). */
    WCHECK(w, vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_axpb_glsl}, &w->gk));
    const uint32_t n = N;
    for (uint32_t round = 0; round < 8; ++round) {
        /* Immediate mode on the shared kernel, then a copy, then a wait. */
        vkc_arg abc[3] = {{.buffer = a}, {.buffer = b}, {.buffer = c}};
        vkc_dispatch_desc d = {.kernel = round & 1 ? k : w->shared_kernel,
                               .args = abc,
                               .arg_count = 3,
                               .push = &n,
                               .push_size = 4,
                               .count = N};
        WCHECK(w, vkc_dispatch(ctx, &d));
        WCHECK(w, vkc_copy(ctx, a, 0, c, 0, N * 4)); /* a = a + b */
        vkc_ticket t;
        WCHECK(w, vkc_flush(ctx, &t));
        vkc_result pr = vkc_poll(ctx, t);
        if (pr != VKC_SUCCESS && pr != VKC_NOT_READY)
            WCHECK(w, pr);
        WCHECK(w, vkc_wait(ctx, t, UINT64_MAX));
        for (uint32_t i = 0; i < N; ++i)
            ha[i] += hb[i];
        if (feat.timeline_semaphores) {
            /* Exported; and a host semaphore, already signalled, waited on
             * by a later submit (whoever's). */
            VkSemaphore sem;
            uint64_t val;
            WCHECK(w, vkc_ticket_export(ctx, t, &sem, &val));
            WCHECK(w, vkc_wait_host_semaphore(ctx, w->host_sem, 1));
        }
        if (round == 4)
            WCHECK(w, vkc_finish(ctx));
        vkc_stats st;
        WCHECK(w, vkc_context_stats(ctx, &st));
        vkc_queue_lock(ctx);
        vkc_queue_unlock(ctx);
    }
    WCHECK(w, vkc_buffer_download(a, 0, out, N * 4));
    for (uint32_t i = 0; i < N; ++i)
        if (out[i] != ha[i]) {
            snprintf(w->error, sizeof(w->error), "thread %u: a[%u] = %u, want %u", w->id, i, out[i],
                     ha[i]);
            goto out;
        }
    WCHECK(w, vkc_image_upload(img, NULL, hb, N * 4));
    WCHECK(w, vkc_image_download(img, NULL, out, N * 4));
    if (memcmp(out, hb, N * 4)) {
        snprintf(w->error, sizeof(w->error), "thread %u: image round trip differs", w->id);
        goto out;
    }
out:
    vkc_image_destroy(img);
    vkc_fuse_destroy(g);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(c);
    vkc_buffer_destroy(b);
    vkc_buffer_destroy(a);
    w->k = k;
    return NULL;
}

static void test_thread_safe_calls(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_kernel *k = NULL;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size,
                                                          .name = "shared add"},
                                       &k),
                     VKC_SUCCESS);
    vkc_buffer *shared = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4}, &shared),
                     VKC_SUCCESS);
    VkSemaphore host_sem = VK_NULL_HANDLE;
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    tci.initialValue = 1;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &tci;
    assert_int_equal(ctx->vk.vkCreateSemaphore(ctx->device, &sci, NULL, &host_sem), VK_SUCCESS);
    worker w[THREADS];
    pthread_t th[THREADS];
    for (uint32_t i = 0; i < THREADS; ++i) {
        w[i] = (worker){
            .ctx = ctx, .shared_kernel = k, .shared = shared, .id = i, .host_sem = host_sem};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (uint32_t i = 0; i < THREADS; ++i)
        pthread_join(th[i], NULL);
    for (uint32_t i = 0; i < THREADS; ++i) {
        vkc_kernel_destroy(w[i].k);
        vkc_kernel_destroy(w[i].gk);
    }
    for (uint32_t i = 0; i < THREADS; ++i)
        if (w[i].error[0])
            fail_msg("%s", w[i].error);
    /* One sampler for one desc, whoever asked first. */
    for (uint32_t i = 1; i < THREADS; ++i)
        assert_ptr_equal(w[i].sampler, w[0].sampler);
    /* Each slice of the shared buffer holds its writer's data: thread t
     * wrote i * 5 + t at element i of its slice. */
    uint32_t *out = malloc(N * 4);
    assert_non_null(out);
    assert_int_equal(vkc_buffer_download(shared, 0, out, N * 4), VKC_SUCCESS);
    for (uint32_t t = 0; t < THREADS; ++t)
        for (uint32_t i = 0; i < N / THREADS; ++i)
            assert_int_equal(out[t * (N / THREADS) + i], i * 5u + t);
    free(out);
    /* A submit consumes any wait still registered, before the semaphore goes. */
    assert_int_equal(vkc_buffer_fill(shared, 0, 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    ctx->vk.vkDestroySemaphore(ctx->device, host_sem, NULL);
    vkc_buffer_destroy(shared);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logger_from_foreign_threads),
        cmocka_unit_test(test_thread_safe_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
