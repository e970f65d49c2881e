/* Several contexts in one process.
 *
 * Two contexts (on two devices where the machine has two, otherwise two
 * instances on the one device: each context has its own VkInstance and
 * VkDevice), driven from two threads at once: each thread compiles kernels,
 * builds fusion graphs, records, submits, uploads and downloads on its own
 * context, then both threads use both contexts at the same time. Contexts
 * are also created and destroyed from two threads at once, which is where
 * process-wide state (the loader, glslang's process init, context ids, the
 * disk caches) would show. Every result is checked against the CPU; the
 * thread tests also run under ThreadSanitizer (tools/run.sh). Split
 * dispatches across contexts are tested in test_split.c. */
#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct push3 {
    uint32_t n, a, b;
} push3;

#define N 2048u
#define ROUNDS 40u

/* The device names of two contexts: "0" and "1" when two devices exist,
 * else "0" and a name substring of device 0 (both pick paths covered). */
static void pick_devices(char names[2][64], char expect[2][256])
{
    static vkc_system_info sys; /* too big for a thread stack; main thread only */
    memset(&sys, 0, sizeof(sys));
    assert_int_equal(vkc_system_query(&sys), VKC_SUCCESS);
    assert_true(sys.device_count >= 1);
    snprintf(names[0], 64, "0");
    snprintf(expect[0], 256, "%s", sys.devices[0].name);
    if (sys.device_count >= 2) {
        snprintf(names[1], 64, "1");
        snprintf(expect[1], 256, "%s", sys.devices[1].name);
    } else {
        /* The first word of the name: "llvmpipe (LLVM 15 ...)" -> "llvmpipe". */
        snprintf(names[1], 64, "%.63s", sys.devices[0].name);
        names[1][strcspn(names[1], " (")] = '\0';
        snprintf(expect[1], 256, "%s", sys.devices[0].name);
    }
}

typedef struct lane {
    vkc_context *ctx;
    uint32_t id;
    vkc_kernel *k;
    vkc_buffer *x;
    uint32_t host[N]; /* the CPU's copy of x */
    char error[512];
} lane;

typedef struct worker {
    lane *lanes[2]; /* the contexts this thread drives, in turn */
    uint32_t lane_count;
    uint32_t rounds;
    bool build; /* first create the kernel and buffer of lanes that lack them */
    char error[512];
} worker;

#define LCHECK(l, w, expr)                                                                         \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ < 0) {                                                                              \
            snprintf((w)->error, sizeof((w)->error), "context %u: %s: %s: %s", (l)->id, #expr,     \
                     vkc_result_string(r_), vkc_context_last_error((l)->ctx));                     \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

static bool lane_build(worker *w, lane *l)
{
    LCHECK(l, w,
           vkc_kernel_create_glsl(
               l->ctx, &(vkc_glsl_desc){.source = vkc_test_axpb_glsl, .name = "axpb"}, &l->k));
    LCHECK(l, w, vkc_buffer_create(l->ctx, &(vkc_buffer_desc){.size = N * 4, .name = "x"}, &l->x));
    for (uint32_t i = 0; i < N; ++i)
        l->host[i] = i * 7u + l->id;
    LCHECK(l, w, vkc_buffer_upload(l->x, 0, l->host, sizeof(l->host)));
    return true;
}

/* One round on one lane: a recorded sequence submitted twice, an immediate
 * dispatch, a fused graph, then a download checked against the CPU. */
static bool lane_round(worker *w, lane *l, uint32_t round)
{
    uint32_t a = 3u + round % 5u, b = l->id * 100u + round;
    push3 p = {N, a, b};
    vkc_arg arg = {.buffer = l->x};
    vkc_dispatch_desc d = {.kernel = l->k,
                           .args = &arg,
                           .arg_count = 1,
                           .push = &p,
                           .push_size = sizeof(p),
                           .count = N};
    vkc_seq *s = NULL;
    vkc_fuse *f = NULL;
    bool ok = false;
    LCHECK(l, w, vkc_seq_create(l->ctx, &(vkc_seq_desc){"multi"}, &s));
    if (vkc_seq_dispatch(s, &d) < 0 || vkc_seq_end(s) < 0)
        goto done;
    vkc_ticket t[2];
    if (vkc_seq_submit(s, &t[0]) < 0 || vkc_seq_submit(s, &t[1]) < 0)
        goto done;
    if (vkc_wait(l->ctx, t[1], UINT64_MAX) != VKC_SUCCESS)
        goto done;
    for (uint32_t i = 0; i < N; ++i)
        l->host[i] = (l->host[i] * a + b) * a + b;

    push3 q = {N, 1u, round + 1u};
    d.push = &q;
    if (vkc_dispatch(l->ctx, &d) < 0 || vkc_flush(l->ctx, NULL) < 0)
        goto done;
    for (uint32_t i = 0; i < N; ++i)
        l->host[i] += round + 1u;

    /* x = x * 2 + round through a fused graph (kernel cache per context). */
    vkc_value x, two, c, y;
    if (vkc_fuse_create(l->ctx, NULL, &f) < 0 || vkc_fuse_input(f, VKC_DTYPE_U32, &x) < 0 ||
        vkc_fuse_constant(f, VKC_DTYPE_U32, 2.0, &two) < 0 ||
        vkc_fuse_scalar(f, VKC_DTYPE_U32, &c) < 0 ||
        vkc_fuse_op(f, VKC_OP_FMA, (vkc_value[]){x, two, c}, 3, &y) < 0 ||
        vkc_fuse_output(f, y, NULL) < 0)
        goto done;
    vkc_scalar sc = {.u32 = round};
    if (vkc_seq_begin(s) < 0 ||
        vkc_fuse_record(s, f,
                        &(vkc_fuse_args){.inputs = &arg,
                                         .input_count = 1,
                                         .outputs = &arg,
                                         .output_count = 1,
                                         .scalars = &sc,
                                         .scalar_count = 1,
                                         .count = N}) < 0 ||
        vkc_seq_end(s) < 0 || vkc_seq_submit(s, &t[0]) < 0 ||
        vkc_wait(l->ctx, t[0], UINT64_MAX) != VKC_SUCCESS)
        goto done;
    for (uint32_t i = 0; i < N; ++i)
        l->host[i] = l->host[i] * 2u + round;

    static _Thread_local uint32_t got[N];
    if (vkc_buffer_download(l->x, 0, got, sizeof(got)) < 0)
        goto done;
    for (uint32_t i = 0; i < N; ++i)
        if (got[i] != l->host[i]) {
            snprintf(w->error, sizeof(w->error), "context %u round %u: x[%u] = %u, expected %u",
                     l->id, round, i, got[i], l->host[i]);
            vkc_fuse_destroy(f);
            vkc_seq_destroy(s);
            return false;
        }
    ok = true;
done:
    if (!ok && !w->error[0])
        snprintf(w->error, sizeof(w->error), "context %u round %u: %s", l->id, round,
                 vkc_context_last_error(l->ctx));
    vkc_fuse_destroy(f);
    vkc_seq_destroy(s);
    return ok;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (uint32_t i = 0; w->build && i < w->lane_count; ++i)
        if (!w->lanes[i]->k && !lane_build(w, w->lanes[i]))
            return NULL;
    for (uint32_t r = 0; r < w->rounds; ++r)
        if (!lane_round(w, w->lanes[r % w->lane_count], r))
            return NULL;
    return NULL;
}

static void run_workers(worker *w, uint32_t n)
{
    pthread_t th[2];
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (uint32_t i = 0; i < n; ++i)
        pthread_join(th[i], NULL);
    for (uint32_t i = 0; i < n; ++i)
        if (w[i].error[0])
            fail_msg("thread %u: %s", i, w[i].error);
}

static char g_device_name[2][64];
static void use_device0(vkc_context_desc *d)
{
    d->device = g_device_name[0];
}
static void use_device1(vkc_context_desc *d)
{
    d->device = g_device_name[1];
}

static void test_two_contexts_two_threads(void **state)
{
    (void)state;
    char expect[2][256];
    pick_devices(g_device_name, expect);
    vkc_test_validation_reset();
    lane *l = calloc(2, sizeof(lane));
    assert_non_null(l);
    l[0].ctx = vkc_test_context_create(use_device0);
    l[1].ctx = vkc_test_context_create(use_device1);
    l[0].id = 0;
    l[1].id = 1;
    for (int i = 0; i < 2; ++i)
        assert_string_equal(vkc_context_device(l[i].ctx)->name, expect[i]);

    vkc_vk_handles h[2];
    assert_int_equal(vkc_context_vk(l[0].ctx, &h[0]), VKC_SUCCESS);
    assert_int_equal(vkc_context_vk(l[1].ctx, &h[1]), VKC_SUCCESS);
    assert_true(h[0].instance != h[1].instance);
    assert_true(h[0].device != h[1].device);

    /* Each thread its own context: kernels compiled, graphs built at once. */
    worker w[2] = {{.lanes = {&l[0]}, .lane_count = 1, .rounds = ROUNDS, .build = true},
                   {.lanes = {&l[1]}, .lane_count = 1, .rounds = ROUNDS, .build = true}};
    run_workers(w, 2);

    /* Both threads on both contexts at once: thread t alternates between
     * its own lane on context 0 and its own lane on context 1 (a lane is a
     * kernel and a buffer, used by one thread; the contexts are shared). */
    lane *m = calloc(2, sizeof(lane));
    assert_non_null(m);
    m[0] = (lane){.ctx = l[1].ctx, .id = 2}; /* thread 0's lane on context 1 */
    m[1] = (lane){.ctx = l[0].ctx, .id = 3}; /* thread 1's lane on context 0 */
    worker v[2] = {{.lanes = {&l[0], &m[0]}, .lane_count = 2, .rounds = ROUNDS, .build = true},
                   {.lanes = {&m[1], &l[1]}, .lane_count = 2, .rounds = ROUNDS, .build = true}};
    run_workers(v, 2);

    /* A ticket or buffer of one context is refused by the other. */
    vkc_test_quiet_errors(1);
    vkc_ticket t;
    assert_int_equal(vkc_flush(l[0].ctx, &t), VKC_SUCCESS);
    vkc_ticket t1 = {.value = 1, .context_id = t.context_id ? t.context_id : 1};
    assert_int_equal(vkc_wait(l[1].ctx, t1, 0), VKC_ERROR_INVALID_HANDLE);
    push3 p = {N, 1, 1};
    vkc_arg foreign = {.buffer = l[1].x};
    assert_int_equal(vkc_dispatch(l[0].ctx, &(vkc_dispatch_desc){.kernel = l[0].k,
                                                                 .args = &foreign,
                                                                 .arg_count = 1,
                                                                 .push = &p,
                                                                 .push_size = sizeof(p),
                                                                 .count = N}),
                     VKC_ERROR_INVALID_HANDLE);
    assert_true(strstr(vkc_context_last_error(l[0].ctx), "another context") != NULL);
    assert_int_equal(vkc_buffer_copy(l[0].x, 0, l[1].x, 0, 4) < 0, true);
    vkc_test_quiet_errors(0);

    /* The contexts' contents are untouched by all that. */
    uint32_t *got = malloc(N * 4);
    assert_non_null(got);
    for (int i = 0; i < 4; ++i) {
        lane *x = i < 2 ? &l[i] : &m[i - 2];
        assert_int_equal(vkc_buffer_download(x->x, 0, got, N * 4), VKC_SUCCESS);
        assert_memory_equal(got, x->host, N * 4);
    }
    free(got);
    vkc_test_context_destroy(l[1].ctx);
    vkc_test_context_destroy(l[0].ctx);
    free(m);
    free(l);
}

/* Contexts created, used and destroyed from two threads at once, three
 * times each: instance and device creation, glslang's process-wide
 * initialisation (reference-counted), the disk cache, context ids. */
typedef struct churn {
    uint32_t id;
    char error[512];
} churn;

static void *churn_main(void *arg)
{
    churn *c = arg;
    for (uint32_t it = 0; it < 3; ++it) {
        vkc_context_desc d = vkc_test_desc();
        vkc_context *ctx = NULL;
        vkc_result r = vkc_context_create(&d, &ctx);
        if (r != VKC_SUCCESS) {
            snprintf(c->error, sizeof(c->error), "create: %s: %s", vkc_result_string(r),
                     vkc_last_create_error());
            return NULL;
        }
        lane *l = calloc(1, sizeof(lane));
        worker w = {.lanes = {l}, .lane_count = 1, .rounds = 2, .build = true};
        if (!l) {
            snprintf(c->error, sizeof(c->error), "out of memory");
        } else {
            l->ctx = ctx;
            l->id = c->id;
            worker_main(&w);
            if (w.error[0])
                snprintf(c->error, sizeof(c->error), "%s", w.error);
        }
        free(l);
        vkc_context_destroy(ctx);
        if (c->error[0])
            return NULL;
    }
    return NULL;
}

static void test_create_destroy_concurrently(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    churn c[2] = {{.id = 0}, {.id = 1}};
    pthread_t th[2];
    for (int i = 0; i < 2; ++i)
        assert_int_equal(pthread_create(&th[i], NULL, churn_main, &c[i]), 0);
    for (int i = 0; i < 2; ++i)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; ++i)
        if (c[i].error[0])
            fail_msg("thread %d: %s", i, c[i].error);
    vkc_test_assert_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_contexts_two_threads),
        cmocka_unit_test(test_create_destroy_concurrently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
