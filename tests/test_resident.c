/* Resident kernels: the resident path (on lavapipe through the shared-queue
 * test hook: its only family has one queue), the fallback forced by the
 * desc and by the environment, ring wrap-around, ordering against ordinary
 * sequences, a kernel that never acknowledges, destroy with items in
 * flight, bad input. Every result is checked against a CPU computation.
 * Bounds stay small: lavapipe ends a shader loop after 65,535 iterations
 * (the kernel then ends early and is relaunched) and misbehaves in spin
 * loops wider than 8 invocations. */
#define _POSIX_C_SOURCE 200809L
#include "vkc_internal.h"

#include "vkc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Four invocations; item payload w[0..3]: d[i] = d[i] * 3 + w[i], and
 * d[4] counts the items. */
static const char *STEP_GLSL =
    "#version 450\n"
    "#define WG 1u\n"
    "#include \"vkc_resident.glsl\"\n"
    "layout(local_size_x = WG) in;\n"
    "layout(set = 0, binding = 1) coherent buffer D { uint d[]; };\n"
    "void main() {\n"
    "  vkc_item it;\n"
    "  uint i = gl_LocalInvocationIndex;\n"
    "  while (vkc_resident_next(it)) {\n"
    "    for (uint j = i; j < 4u; j += WG) d[j] = d[j] * 3u + vkc_resident_word(it, j);\n"
    "    if (i == 0u) d[4] += 1u;\n"
    "    vkc_resident_done(it);\n"
    "  }\n"
    "}\n";

/* Never acknowledges an item whose first word is 7. */
static const char *NOACK_GLSL = "#version 450\n"
                                "#include \"vkc_resident.glsl\"\n"
                                "layout(local_size_x = 1) in;\n"
                                "layout(set = 0, binding = 1) coherent buffer D { uint d[]; };\n"
                                "void main() {\n"
                                "  vkc_item it;\n"
                                "  while (vkc_resident_next(it)) {\n"
                                "    d[0] += vkc_resident_word(it, 0u);\n"
                                "    if (vkc_resident_word(it, 0u) != 7u) vkc_resident_done(it);\n"
                                "  }\n"
                                "}\n";

/* A grid of GRID workgroups of 2: workgroup g owns d[2g], d[2g + 1]:
 * d[e] = d[e] * 3 + w[e % 4] + g, and counts its items in d[8 + g]. */
#define GRID 3u
static const char *GRID_GLSL =
    "#version 450\n"
    "#include \"vkc_resident.glsl\"\n"
    "layout(local_size_x = 2) in;\n"
    "layout(set = 0, binding = 1) coherent buffer D { uint d[]; };\n"
    "void main() {\n"
    "  vkc_item it;\n"
    "  uint g = gl_WorkGroupID.x, e = g * 2u + gl_LocalInvocationIndex;\n"
    "  while (vkc_resident_next(it)) {\n"
    "    d[e] = d[e] * 3u + vkc_resident_word(it, e % 4u) + g;\n"
    "    if (gl_LocalInvocationIndex == 0u) d[8u + g] += 1u;\n"
    "    vkc_resident_done(it);\n"
    "  }\n"
    "}\n";

/* A kernel without the include. */
static const char *PLAIN_GLSL = "#version 450\n"
                                "layout(local_size_x = 1) in;\n"
                                "layout(set = 0, binding = 0) buffer D { uint d[]; };\n"
                                "void main() { d[0] = 1u; }\n";

#define WORDS 5

typedef struct fixture {
    vkc_context *ctx;
    vkc_buffer *data;
    uint32_t ref[WORDS];
} fixture;

static void fixture_open(fixture *f, bool share)
{
    memset(f, 0, sizeof(*f));
    /* A message fails the test it came in, not the ones after it. */
    vkc_test_validation_reset();
    f->ctx = vkc_test_context_create(NULL);
    /* lavapipe's family has one queue: let the resident path run there. */
    if (share)
        vkc__resident_share_queue(f->ctx, true);
    assert_int_equal(vkc_buffer_create(f->ctx, &(vkc_buffer_desc){.size = 64}, &f->data),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(f->data, 0, 64, 0), VKC_SUCCESS);
}

static void fixture_close(fixture *f)
{
    vkc_buffer_destroy(f->data);
    vkc_test_context_destroy(f->ctx);
}

static void read_words(fixture *f, uint32_t *out, uint32_t n)
{
    /* Through the mapping where there is one: a download is ordinary work,
     * which on a shared queue waits for the kernel's idle exit. */
    const volatile uint32_t *m = vkc_buffer_map(f->data);
    if (m)
        for (uint32_t i = 0; i < n; ++i)
            out[i] = m[i];
    else
        assert_int_equal(vkc_buffer_download(f->data, 0, out, n * 4), VKC_SUCCESS);
}

static void read_data(fixture *f, uint32_t *out)
{
    read_words(f, out, WORDS);
}

static void ref_step(fixture *f, const uint32_t *w)
{
    for (int i = 0; i < 4; ++i)
        f->ref[i] = f->ref[i] * 3u + w[i];
    f->ref[4]++;
}

static vkc_resident *make_ack(fixture *f, const char *src, vkc_toggle fallback, uint32_t slots,
                              uint64_t idle_ns, vkc_resident_ack ack)
{
    vkc_resident *r = NULL;
    vkc_arg a = {.buffer = f->data};
    vkc_result res = vkc_resident_create(f->ctx,
                                         &(vkc_resident_desc){.glsl = src,
                                                              .name = "step",
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .slots = slots,
                                                              .payload_size = 16,
                                                              .idle_timeout_ns = idle_ns,
                                                              .fallback = fallback,
                                                              .ack = ack},
                                         &r);
    if (res != VKC_SUCCESS)
        fail_msg("vkc_resident_create: %s: %s", vkc_result_string(res),
                 vkc_context_last_error(f->ctx));
    return r;
}

static vkc_resident *make(fixture *f, const char *src, vkc_toggle fallback, uint32_t slots,
                          uint64_t idle_ns)
{
    return make_ack(f, src, fallback, slots, idle_ns, VKC_RESIDENT_ACK_DEFAULT);
}

/* NOACK_GLSL on f->data: d[0] sums the items (every one acknowledged but
 * a 7). */
static vkc_resident *make_adder(fixture *f, uint32_t slots, uint64_t idle_ns, uint64_t timeout_ns)
{
    vkc_resident *r = NULL;
    vkc_arg a = {.buffer = f->data};
    assert_int_equal(vkc_resident_create(f->ctx,
                                         &(vkc_resident_desc){.glsl = NOACK_GLSL,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .slots = slots,
                                                              .payload_size = 4,
                                                              .idle_timeout_ns = idle_ns,
                                                              .timeout_ns = timeout_ns},
                                         &r),
                     VKC_SUCCESS);
    return r;
}

/* Dependent steps: each input derives from the result read back. */
static void run_dependent(fixture *f, vkc_resident *r, int steps)
{
    uint32_t got[WORDS];
    for (int s = 0; s < steps; ++s) {
        read_data(f, got);
        assert_memory_equal(got, f->ref, sizeof(got));
        uint32_t w[4] = {got[0] ^ (uint32_t)s, got[1] + 1u, (uint32_t)s * 7u, got[3] >> 1};
        vkc_ticket t;
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(f->ctx, t, UINT64_MAX), VKC_SUCCESS);
        assert_int_equal(vkc_poll(f->ctx, t), VKC_SUCCESS);
        ref_step(f, w);
    }
    read_data(f, got);
    assert_memory_equal(got, f->ref, sizeof(got));
}

/* A stream without waits: the ring (8 slots) wraps many times. */
static void run_stream(fixture *f, vkc_resident *r, int items)
{
    vkc_ticket t = {0};
    for (int s = 0; s < items; ++s) {
        uint32_t w[4] = {(uint32_t)s, (uint32_t)s * 3u, 1u, 0xffffffffu - (uint32_t)s};
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_SUCCESS);
        ref_step(f, w);
    }
    assert_int_equal(vkc_wait(f->ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t got[WORDS];
    read_data(f, got);
    assert_memory_equal(got, f->ref, sizeof(got));
}

static bool one_queue(vkc_context *ctx)
{
    return vkc_context_device(ctx)->queue_count < 2;
}

static void test_resident_path(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 5000000);
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    if (!info.resident)
        fail_msg("fell back: %s", info.reason);
    assert_true(info.poll_ns > 0);
    assert_true(info.idle_polls >= 16);
    run_dependent(&f, r, 60);
    run_stream(&f, r, 100);
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_int_equal(info.posted, 160);
    assert_int_equal(info.completed, 160);
    printf("resident: poll %.1f ns, %u idle polls, %llu launches\n", info.poll_ns, info.idle_polls,
           (unsigned long long)info.launches);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

/* Acks in host memory (desc and environment): the self-test passes, and
 * dependent steps, a wrapping stream and relaunches (tiny idle time) give
 * the CPU's results, as with acks in the ring. */
static void test_host_ack(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    for (int k = 0; k < 3; ++k) {
        if (k == 1)
            setenv("VKC_RESIDENT_ACK", "host", 1);
        vkc_resident *r = make_ack(&f, STEP_GLSL, VKC_DEFAULT, 8, k == 2 ? 1 : 5000000,
                                   k == 1 ? VKC_RESIDENT_ACK_DEFAULT : VKC_RESIDENT_ACK_HOST);
        unsetenv("VKC_RESIDENT_ACK");
        vkc_resident_info info;
        assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
        if (!info.resident)
            fail_msg("fell back: %s", info.reason);
        if (!info.host_ack)
            fail_msg("acks in the ring: %s", info.ack_reason);
        assert_string_equal(info.ack_reason, "");
        const VkMemoryPropertyFlags need =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const VkPhysicalDeviceMemoryProperties *mp = &f.ctx->mem_props;
        assert_int_equal(mp->memoryTypes[info.ack_memory_type].propertyFlags & need, need);
        /* System memory where the device has a host-visible type there. */
        bool system = false;
        for (uint32_t i = 0; i < mp->memoryTypeCount; ++i)
            system = system ||
                     ((mp->memoryTypes[i].propertyFlags & need) == need &&
                      !(mp->memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT));
        if (system)
            assert_false(mp->memoryTypes[info.ack_memory_type].propertyFlags &
                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        run_dependent(&f, r, 40);
        run_stream(&f, r, 60);
        if (k == 2)
            for (int i = 0; i < 3; ++i) {
                nanosleep(&(struct timespec){0, 2000000}, NULL);
                run_dependent(&f, r, 5);
            }
        assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
        assert_true(info.host_ack);
        assert_int_equal(info.completed, info.posted);
        printf("host ack (%s): memory type %u, %llu launches for %llu items\n",
               k == 1 ? "environment" : "desc", info.ack_memory_type,
               (unsigned long long)info.launches, (unsigned long long)info.posted);
        vkc_resident_destroy(r);
    }
    fixture_close(&f);
}

/* The self-test never sees an ack in host memory (test hook): the kernel
 * acks in the ring, resident still, with the reason; the results hold. A
 * desc asking for the ring wins over the environment. */
static void test_host_ack_fallback(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc__resident_hide_host_ack(f.ctx, true);
    vkc_resident *r = make_ack(&f, STEP_GLSL, VKC_DEFAULT, 8, 5000000, VKC_RESIDENT_ACK_HOST);
    vkc__resident_hide_host_ack(f.ctx, false);
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    if (!info.resident)
        fail_msg("fell back: %s", info.reason);
    assert_false(info.host_ack);
    assert_int_equal(info.ack_memory_type, info.memory_type);
    if (!strstr(info.ack_reason, "acknowledged in the ring but not in host memory"))
        fail_msg("ack_reason: \"%s\"", info.ack_reason);
    printf("host ack hidden: %s\n", info.ack_reason);
    run_dependent(&f, r, 30);
    run_stream(&f, r, 40);
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_int_equal(info.posted, 70);
    assert_int_equal(info.completed, 70);
    vkc_resident_destroy(r);

    /* The ring, asked for without a reason to give: the desc's BAR wins
     * over the environment's "host", and the environment's "bar" moves the
     * default's acks into the ring. */
    static const struct {
        const char *env;
        vkc_resident_ack ack;
    } ring[] = {{"host", VKC_RESIDENT_ACK_BAR}, {"bar", VKC_RESIDENT_ACK_DEFAULT}};
    for (size_t i = 0; i < sizeof(ring) / sizeof(ring[0]); ++i) {
        setenv("VKC_RESIDENT_ACK", ring[i].env, 1);
        r = make_ack(&f, STEP_GLSL, VKC_DEFAULT, 8, 5000000, ring[i].ack);
        unsetenv("VKC_RESIDENT_ACK");
        assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
        assert_true(info.resident);
        assert_false(info.host_ack);
        assert_string_equal(info.ack_reason, "");
        run_dependent(&f, r, 5);
        vkc_resident_destroy(r);
    }

    /* A kernel built where the context had no device addresses (the
     * feature switched off for its build) does not write acks to host
     * memory: the self-test sees it at once, and a resident kernel on the
     * switched-off context says why it cannot. */
    bool bda = f.ctx->features.buffer_device_address;
    f.ctx->features.buffer_device_address = false;
    vkc_kernel *k = NULL;
    assert_int_equal(vkc_kernel_create_glsl(f.ctx, &(vkc_glsl_desc){.source = STEP_GLSL}, &k),
                     VKC_SUCCESS);
    r = make_ack(&f, STEP_GLSL, VKC_DEFAULT, 8, 5000000, VKC_RESIDENT_ACK_HOST);
    f.ctx->features.buffer_device_address = bda;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_true(info.resident);
    assert_false(info.host_ack);
    assert_non_null(strstr(info.ack_reason, "need bufferDeviceAddress"));
    run_dependent(&f, r, 5);
    vkc_resident_destroy(r);
    if (bda) {
        vkc_arg a = {.buffer = f.data};
        r = NULL;
        assert_int_equal(vkc_resident_create(f.ctx,
                                             &(vkc_resident_desc){.kernel = k,
                                                                  .args = &a,
                                                                  .arg_count = 1,
                                                                  .slots = 8,
                                                                  .payload_size = 16,
                                                                  .idle_timeout_ns = 5000000,
                                                                  .ack = VKC_RESIDENT_ACK_HOST},
                                             &r),
                         VKC_SUCCESS);
        assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
        assert_true(info.resident);
        assert_false(info.host_ack);
        if (!strstr(info.ack_reason, "does not write acks to host memory"))
            fail_msg("ack_reason: \"%s\"", info.ack_reason);
        run_dependent(&f, r, 5);
        vkc_resident_destroy(r);
    }
    vkc_kernel_destroy(k);

    /* The fallback (ordinary submits) acks in the ring whatever was asked. */
    r = make_ack(&f, STEP_GLSL, VKC_ON, 8, 0, VKC_RESIDENT_ACK_HOST);
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_false(info.resident);
    assert_false(info.host_ack);
    run_dependent(&f, r, 5);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

/* A tiny idle time: the kernel ends between most items and is relaunched
 * by the next post or wait. */
static void test_relaunch(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 4, 1);
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_true(info.resident);
    assert_int_equal(info.idle_polls, 16);
    for (int i = 0; i < 5; ++i) {
        run_dependent(&f, r, 8);
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    run_stream(&f, r, 20);
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    printf("relaunch: %llu launches for %llu items\n", (unsigned long long)info.launches,
           (unsigned long long)info.posted);
    assert_true(info.launches >= 1);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

static void test_fallback_forced(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_ON, 8, 0);
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_false(info.resident);
    assert_non_null(strstr(info.reason, "forced by the desc"));
    run_dependent(&f, r, 20);
    run_stream(&f, r, 30);
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_int_equal(info.posted, 50);
    assert_int_equal(info.completed, 50);
    assert_int_equal(info.launches, 50);
    vkc_resident_destroy(r);

    setenv("VKC_RESIDENT", "fallback", 1);
    r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 0);
    unsetenv("VKC_RESIDENT");
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    assert_false(info.resident);
    assert_non_null(strstr(info.reason, "VKC_RESIDENT=fallback"));
    run_dependent(&f, r, 5);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

/* Without a queue of its own (lavapipe, no hook): the fallback, with the
 * reason. */
static void test_fallback_no_queue(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, false);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 0);
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    if (one_queue(f.ctx)) {
        assert_false(info.resident);
        assert_non_null(strstr(info.reason, "queue(s)"));
    } else {
        assert_true(info.resident);
        assert_int_equal(info.queue_index, 1);
    }
    run_dependent(&f, r, 10);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

/* Posts and ordinary sequences on the same buffer, neither waited on: the
 * sequence waits for the posted item, the next post for the sequence. */
static void test_ordering(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 2000000);
    vkc_kernel *k;
    assert_int_equal(vkc_kernel_create_glsl(
                         f.ctx, &(vkc_glsl_desc){.source = vkc_test_axpb_glsl, .name = "axpb"}, &k),
                     VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(f.ctx, NULL, &s), VKC_SUCCESS);
    uint32_t push[3] = {WORDS, 5, 11};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                              .args = &(vkc_arg){.buffer = f.data},
                                                              .arg_count = 1,
                                                              .push = push,
                                                              .push_size = sizeof(push),
                                                              .count = WORDS}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t = {0};
    for (int round = 0; round < 6; ++round) {
        uint32_t w[4] = {(uint32_t)round + 1u, 2u, 3u, (uint32_t)round};
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, NULL), VKC_SUCCESS);
        ref_step(&f, w);
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        for (int i = 0; i < WORDS; ++i)
            f.ref[i] = f.ref[i] * 5u + 11u;
    }
    assert_int_equal(vkc_wait(f.ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t got[WORDS];
    assert_int_equal(vkc_buffer_download(f.data, 0, got, sizeof(got)), VKC_SUCCESS);
    assert_memory_equal(got, f.ref, sizeof(got));
    vkc_seq_destroy(s);
    vkc_kernel_destroy(k);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

/* A kernel that never acknowledges one item: the wait times out with a
 * message; destroy gives up after its bound, and the kernel still ends by
 * its idle exit. */
static void test_never_acks(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make_adder(&f, 0, 1000000, 50000000);
    uint32_t w = 3;
    vkc_ticket t;
    assert_int_equal(vkc_resident_post(r, &w, 4, 0, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(f.ctx, t, UINT64_MAX), VKC_SUCCESS);
    w = 7;
    assert_int_equal(vkc_resident_post(r, &w, 4, 0, &t), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    vkc_result res = vkc_wait(f.ctx, t, 20000000);
    vkc_test_quiet_errors(0);
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
    if (info.resident) {
        assert_int_equal(res, VKC_TIMEOUT);
        assert_non_null(strstr(vkc_context_last_error(f.ctx), "vkc_resident_done"));
        assert_int_equal(vkc_poll(f.ctx, t), VKC_NOT_READY);
    } else {
        /* One-item mode: the dispatch ends, so its ticket completes. */
        assert_int_equal(res, VKC_SUCCESS);
    }
    vkc_test_quiet_errors(1);
    vkc_resident_destroy(r);
    vkc_test_quiet_errors(0);
    uint32_t got[1];
    assert_int_equal(vkc_buffer_download(f.data, 0, got, 4), VKC_SUCCESS);
    assert_int_equal(got[0], 10);
    fixture_close(&f);
}

/* Destroy (and context destroy) with items posted and not waited on: the
 * kernel finishes them first. */
static void test_destroy_in_flight(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 5000000);
    for (int s = 0; s < 20; ++s) {
        uint32_t w[4] = {(uint32_t)s, 1u, 2u, 3u};
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, NULL), VKC_SUCCESS);
        ref_step(&f, w);
    }
    vkc_ticket stale;
    uint32_t w0[4] = {1, 1, 1, 1};
    assert_int_equal(vkc_resident_post(r, w0, sizeof(w0), 0, &stale), VKC_SUCCESS);
    ref_step(&f, w0);
    vkc_resident_destroy(r);
    uint32_t got[WORDS];
    assert_int_equal(vkc_buffer_download(f.data, 0, got, sizeof(got)), VKC_SUCCESS);
    assert_memory_equal(got, f.ref, sizeof(got));
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_wait(f.ctx, stale, 0), VKC_ERROR_INVALID_HANDLE);
    vkc_test_quiet_errors(0);

    /* Left alive for vkc_context_destroy, items in flight. */
    r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 5000000);
    for (int s = 0; s < 12; ++s) {
        uint32_t w[4] = {9u, (uint32_t)s, 0u, 1u};
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, NULL), VKC_SUCCESS);
    }
    /* The buffer goes with the context too: a resident kernel's buffers
     * must outlive it. */
    vkc_test_context_destroy(f.ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_test_quiet_errors(1);
    vkc_arg a = {.buffer = f.data};
    vkc_resident *r = (vkc_resident *)1;
    /* No source, two sources. */
    assert_int_equal(vkc_resident_create(f.ctx, &(vkc_resident_desc){0}, &r),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_null(r);
    assert_int_equal(vkc_resident_create(f.ctx,
                                         &(vkc_resident_desc){.glsl = STEP_GLSL,
                                                              .spirv = (const uint32_t *)"x",
                                                              .spirv_size = 4},
                                         &r),
                     VKC_ERROR_INVALID_ARGUMENT);
    /* Payload sizes, grid. */
    assert_int_equal(
        vkc_resident_create(
            f.ctx,
            &(vkc_resident_desc){.glsl = STEP_GLSL, .args = &a, .arg_count = 1, .payload_size = 6},
            &r),
        VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_resident_create(
                         f.ctx,
                         &(vkc_resident_desc){
                             .glsl = STEP_GLSL, .args = &a, .arg_count = 1, .payload_size = 8192},
                         &r),
                     VKC_ERROR_INVALID_ARGUMENT);
    /* An ack placement that is none. */
    assert_int_equal(vkc_resident_create(f.ctx,
                                         &(vkc_resident_desc){.glsl = STEP_GLSL,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .ack = (vkc_resident_ack)7},
                                         &r),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkc_context_last_error(f.ctx), "not a vkc_resident_ack"));
    /* Wider than the device keeps co-resident (64 at most anywhere). */
    assert_int_equal(
        vkc_resident_create(
            f.ctx,
            &(vkc_resident_desc){.glsl = STEP_GLSL, .args = &a, .arg_count = 1, .grid = 1000}, &r),
        VKC_ERROR_LIMIT);
    assert_non_null(strstr(vkc_context_last_error(f.ctx), "co-resident"));
    /* A kernel without the include; args that do not match. */
    assert_int_equal(
        vkc_resident_create(
            f.ctx, &(vkc_resident_desc){.glsl = PLAIN_GLSL, .args = &a, .arg_count = 1}, &r),
        VKC_ERROR_MISMATCH);
    assert_non_null(strstr(vkc_context_last_error(f.ctx), "vkc_resident.glsl"));
    assert_int_equal(vkc_resident_create(f.ctx, &(vkc_resident_desc){.glsl = STEP_GLSL}, &r),
                     VKC_ERROR_MISMATCH);
    /* A GLSL error inside the kernel. */
    assert_int_equal(vkc_resident_create(f.ctx,
                                         &(vkc_resident_desc){.glsl = "#version 450\n"
                                                                      "#include "
                                                                      "\"vkc_resident.glsl\"\n"
                                                                      "void main() { nope; }\n",
                                                              .args = &a,
                                                              .arg_count = 1},
                                         &r),
                     VKC_ERROR_COMPILE);
    assert_null(r);

    r = make(&f, STEP_GLSL, VKC_DEFAULT, 4, 1000000);
    uint32_t big[5] = {0};
    vkc_ticket t = {1, 1};
    assert_int_equal(vkc_resident_post(r, big, sizeof(big), 0, &t), VKC_ERROR_LIMIT);
    assert_int_equal(t.value, 0);
    assert_int_equal(vkc_resident_post(r, NULL, 4, 0, &t), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_resident_post(NULL, big, 4, 0, &t), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_resident_post(r, big, 16, 0, &t), VKC_SUCCESS);
    ref_step(&f, big);
    assert_int_equal(vkc_wait(f.ctx, t, UINT64_MAX), VKC_SUCCESS);
    /* A ticket never issued. */
    vkc_ticket never = t;
    never.value += 1000;
    assert_int_equal(vkc_wait(f.ctx, never, 0), VKC_ERROR_INVALID_HANDLE);
    /* Stopped: posts are refused. */
    assert_int_equal(vkc_resident_stop(r), VKC_SUCCESS);
    assert_int_equal(vkc_resident_post(r, big, 16, 0, &t), VKC_ERROR_INVALID_STATE);
    assert_non_null(strstr(vkc_context_last_error(f.ctx), "stopped"));
    vkc_resident_info info;
    assert_int_equal(vkc_resident_info_get(NULL, &info), VKC_ERROR_INVALID_HANDLE);
    vkc_resident_destroy(r);
    vkc_resident_destroy(NULL);
    vkc_test_quiet_errors(0);
    fixture_close(&f);
}

/* Full ring with NO_WAIT: VKC_NOT_READY while the kernel is held up, in
 * fallback mode (the oldest slot's dispatch has not completed) the same. */
static void test_full_ring(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 2, 5000000);
    uint32_t w[4] = {1, 2, 3, 4};
    int accepted = 0, refused = 0;
    vkc_ticket t = {0};
    for (int i = 0; i < 50; ++i) {
        vkc_result res = vkc_resident_post(r, w, sizeof(w), VKC_RESIDENT_POST_NO_WAIT, &t);
        if (res == VKC_SUCCESS) {
            accepted++;
            ref_step(&f, w);
        } else {
            assert_int_equal(res, VKC_NOT_READY);
            refused++;
        }
    }
    /* Whatever the timing, what was accepted ran exactly once. */
    vkc_ticket last;
    assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &last), VKC_SUCCESS);
    ref_step(&f, w);
    assert_int_equal(vkc_wait(f.ctx, last, UINT64_MAX), VKC_SUCCESS);
    uint32_t got[WORDS];
    read_data(&f, got);
    assert_memory_equal(got, f.ref, sizeof(got));
    printf("full ring: %d accepted, %d refused\n", accepted, refused);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

/* Payloads that name buffers by device address (GL_EXT_buffer_reference):
 * the kernel has no bindings of its own. */
static const char *ADDR_GLSL = "#version 450\n"
                               "#extension GL_EXT_buffer_reference : require\n"
                               "#extension GL_EXT_buffer_reference_uvec2 : require\n"
                               "#include \"vkc_resident.glsl\"\n"
                               "layout(buffer_reference, std430, buffer_reference_align = 4) "
                               "coherent buffer U { uint v[]; };\n"
                               "layout(local_size_x = 2) in;\n"
                               "void main() {\n"
                               "  vkc_item it;\n"
                               "  while (vkc_resident_next(it)) {\n"
                               "    U u = U(vkc_resident_address(it, 0u));\n"
                               "    uint i = gl_LocalInvocationIndex;\n"
                               "    u.v[i] = u.v[i] * 7u + vkc_resident_word(it, 2u) + i;\n"
                               "    vkc_resident_done(it);\n"
                               "  }\n"
                               "}\n";

static void test_device_address(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(f.ctx, &feat), VKC_SUCCESS);
    if (!feat.buffer_device_address) {
        uint64_t addr;
        vkc_test_quiet_errors(1);
        assert_int_equal(vkc_buffer_address(f.data, &addr), VKC_ERROR_UNSUPPORTED);
        vkc_test_quiet_errors(0);
        fixture_close(&f);
        skip();
    }
    vkc_buffer *other;
    assert_int_equal(vkc_buffer_create(f.ctx, &(vkc_buffer_desc){.size = 64}, &other), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(other, 0, 64, 5), VKC_SUCCESS);
    uint64_t addr[2];
    assert_int_equal(vkc_buffer_address(f.data, &addr[0]), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_address(other, &addr[1]), VKC_SUCCESS);
    assert_true(addr[0] != 0 && addr[1] != 0 && addr[0] != addr[1]);
    vkc_resident *r = NULL;
    assert_int_equal(
        vkc_resident_create(
            f.ctx,
            &(vkc_resident_desc){.glsl = ADDR_GLSL, .payload_size = 12, .idle_timeout_ns = 2000000},
            &r),
        VKC_SUCCESS);
    uint32_t ref[2][2] = {{0, 0}, {5, 5}};
    vkc_ticket t = {0};
    for (uint32_t s = 0; s < 40; ++s) {
        uint32_t which = s % 3 == 0;
        uint32_t w[3] = {(uint32_t)addr[which], (uint32_t)(addr[which] >> 32), s};
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_SUCCESS);
        for (uint32_t i = 0; i < 2; ++i)
            ref[which][i] = ref[which][i] * 7u + s + i;
    }
    assert_int_equal(vkc_wait(f.ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t got[2][2];
    assert_int_equal(vkc_buffer_download(f.data, 0, got[0], 8), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(other, 0, got[1], 8), VKC_SUCCESS);
    assert_memory_equal(got, ref, sizeof(got));
    vkc_resident_destroy(r);
    vkc_buffer_destroy(other);
    fixture_close(&f);
}

/* Posts and waits from several threads: every item runs once. */
typedef struct poster {
    vkc_context *ctx;
    vkc_resident *r;
    uint32_t base;
    int failures;
} poster;

static void *post_thread(void *p)
{
    poster *q = p;
    for (uint32_t i = 0; i < 100; ++i) {
        uint32_t w = q->base + i;
        vkc_ticket t;
        if (vkc_resident_post(q->r, &w, 4, 0, &t) != VKC_SUCCESS ||
            (i % 7 == 0 && vkc_wait(q->ctx, t, UINT64_MAX) != VKC_SUCCESS))
            q->failures++;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make_adder(&f, 8, 2000000, 0);
    poster q[3];
    pthread_t th[3];
    uint32_t want = 0;
    for (int i = 0; i < 3; ++i) {
        q[i] = (poster){f.ctx, r, 1000u * (uint32_t)(i + 1), 0};
        for (uint32_t k = 0; k < 100; ++k)
            want += q[i].base + k;
        assert_int_equal(pthread_create(&th[i], NULL, post_thread, &q[i]), 0);
    }
    for (int i = 0; i < 3; ++i) {
        pthread_join(th[i], NULL);
        assert_int_equal(q[i].failures, 0);
    }
    vkc_resident_destroy(r);
    uint32_t got;
    assert_int_equal(vkc_buffer_download(f.data, 0, &got, 4), VKC_SUCCESS);
    assert_int_equal(got, want);
    fixture_close(&f);
}

#define GRID_WORDS (8 + GRID)

static void grid_ref(uint32_t *ref, const uint32_t *w)
{
    for (uint32_t e = 0; e < 2 * GRID; ++e)
        ref[e] = ref[e] * 3u + w[e % 4] + e / 2;
    for (uint32_t g = 0; g < GRID; ++g)
        ref[8 + g]++;
}

/* Dependent items, a stream that wraps the ring, and relaunches after idle
 * exits (the launch must end at the same item in every workgroup, or one
 * of them would do an item twice): against the CPU. */
static void grid_run(fixture *f, vkc_resident *r, uint32_t *ref, bool pause)
{
    uint32_t got[GRID_WORDS];
    for (uint32_t s = 0; s < 24; ++s) {
        read_words(f, got, GRID_WORDS);
        assert_memory_equal(got, ref, sizeof(got));
        uint32_t w[4] = {got[0] ^ s, got[3] + 1u, s * 7u, got[5] >> 1};
        vkc_ticket t;
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(f->ctx, t, UINT64_MAX), VKC_SUCCESS);
        grid_ref(ref, w);
        if (pause && s % 4 == 3)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    vkc_ticket t = {0};
    for (uint32_t s = 0; s < 40; ++s) {
        uint32_t w[4] = {s, s * 3u, 1u, 0xffffffffu - s};
        assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_SUCCESS);
        grid_ref(ref, w);
    }
    assert_int_equal(vkc_wait(f->ctx, t, UINT64_MAX), VKC_SUCCESS);
    read_words(f, got, GRID_WORDS);
    assert_memory_equal(got, ref, sizeof(got));
}

static void test_grid(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    uint32_t ref[GRID_WORDS] = {0};
    vkc_arg a = {.buffer = f.data};
    /* idle 5 ms, then about 16 polls (ends between most items), then the
     * fallback (one dispatch of the grid per item): the same results. The
     * first two ack in host memory (the default where the context has
     * device addresses), the fourth in the ring (asked for). */
    const bool bda = f.ctx->features.buffer_device_address;
    const uint64_t idle[4] = {5000000, 1, 5000000, 5000000};
    for (int k = 0; k < 4; ++k) {
        vkc_resident *r = NULL;
        vkc_result res = vkc_resident_create(
            f.ctx,
            &(vkc_resident_desc){.glsl = GRID_GLSL,
                                 .name = "grid",
                                 .args = &a,
                                 .arg_count = 1,
                                 .slots = 8,
                                 .payload_size = 16,
                                 .grid = GRID,
                                 .idle_timeout_ns = idle[k],
                                 .fallback = k == 2 ? VKC_ON : VKC_DEFAULT,
                                 .ack = k == 3 ? VKC_RESIDENT_ACK_BAR : VKC_RESIDENT_ACK_DEFAULT},
            &r);
        if (res != VKC_SUCCESS)
            fail_msg("vkc_resident_create: %s: %s", vkc_result_string(res),
                     vkc_context_last_error(f.ctx));
        vkc_resident_info info;
        assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
        assert_int_equal(info.grid, GRID);
        assert_int_equal(info.resident, k != 2);
        if (info.host_ack != (k < 2 && bda))
            fail_msg("grid %d: host_ack %d (%s)", k, info.host_ack, info.ack_reason);
        grid_run(&f, r, ref, k == 1);
        assert_int_equal(vkc_resident_info_get(r, &info), VKC_SUCCESS);
        assert_int_equal(info.completed, 64);
        printf("grid of %u (%s): %llu launches for %llu items\n", GRID,
               info.resident ? "resident" : "fallback", (unsigned long long)info.launches,
               (unsigned long long)info.posted);
        vkc_resident_destroy(r);
    }
    fixture_close(&f);
}

/* Device loss (injected at an ordinary submit): every call reports it;
 * after recovery the resident kernel must be created again, and a new one
 * works. */
static void test_device_loss(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, true);
    vkc_resident *r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 2000000);
    run_dependent(&f, r, 3);
    uint32_t w0[4] = {1, 1, 1, 1};
    vkc_ticket before;
    assert_int_equal(vkc_resident_post(r, w0, sizeof(w0), 0, &before), VKC_SUCCESS);
    assert_int_equal(vkc_wait(f.ctx, before, UINT64_MAX), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(f.ctx, NULL, &s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_fill(s, f.data, 0, 64, 0), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    vkc__fault = (vkc__fault_state){.armed = true,
                                    .fail_at = 1,
                                    .only = VKC__FAULT_VK,
                                    .only_call = "vkQueueSubmit2",
                                    .forced = VK_ERROR_DEVICE_LOST};
    vkc_result res = vkc_seq_submit(s, NULL);
    vkc__fault = (vkc__fault_state){0};
    if (res != VKC_ERROR_DEVICE_LOST) {
        /* Without synchronization2 the submit is vkQueueSubmit. */
        vkc__fault = (vkc__fault_state){.armed = true,
                                        .fail_at = 1,
                                        .only = VKC__FAULT_VK,
                                        .only_call = "vkQueueSubmit",
                                        .forced = VK_ERROR_DEVICE_LOST};
        res = vkc_seq_submit(s, NULL);
        vkc__fault = (vkc__fault_state){0};
    }
    assert_int_equal(res, VKC_ERROR_DEVICE_LOST);
    uint32_t w[4] = {1, 2, 3, 4};
    vkc_ticket t;
    assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_ERROR_DEVICE_LOST);
    res = vkc_context_recover(f.ctx);
    assert_true(res == VKC_SUCCESS || res == VKC_CONTENTS_LOST);
    assert_int_equal(vkc_resident_post(r, w, sizeof(w), 0, &t), VKC_ERROR_INVALID_STATE);
    assert_non_null(strstr(vkc_context_last_error(f.ctx), "create it again"));
    /* A ticket from before the loss reads as complete. */
    assert_int_equal(vkc_wait(f.ctx, before, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_poll(f.ctx, before), VKC_SUCCESS);
    vkc_test_quiet_errors(0);
    vkc_resident_destroy(r);
    vkc_seq_destroy(s);
    /* Contents were lost: start from zero. */
    assert_int_equal(vkc_buffer_fill(f.data, 0, 64, 0), VKC_SUCCESS);
    memset(f.ref, 0, sizeof(f.ref));
    r = make(&f, STEP_GLSL, VKC_DEFAULT, 8, 2000000);
    run_dependent(&f, r, 5);
    vkc_resident_destroy(r);
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resident_path),
        cmocka_unit_test(test_relaunch),
        cmocka_unit_test(test_host_ack),
        cmocka_unit_test(test_host_ack_fallback),
        cmocka_unit_test(test_fallback_forced),
        cmocka_unit_test(test_fallback_no_queue),
        cmocka_unit_test(test_ordering),
        cmocka_unit_test(test_never_acks),
        cmocka_unit_test(test_destroy_in_flight),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_full_ring),
        cmocka_unit_test(test_device_loss),
        cmocka_unit_test(test_device_address),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
