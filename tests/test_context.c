/* Device module: queue-family choice on synthetic tables, context creation on
 * the real device, bad input, repeated create/destroy. */
#define _POSIX_C_SOURCE 200809L /* setenv */
/* The private header first (the self-tests' submit counts): it brings Vulkan in without
 * prototypes (volk). */
#include "vkc_internal.h"

#include "vkc_test.h"

#include <stdio.h>
#include <string.h>

#define G VK_QUEUE_GRAPHICS_BIT
#define C VK_QUEUE_COMPUTE_BIT
#define T VK_QUEUE_TRANSFER_BIT
#define S VK_QUEUE_SPARSE_BINDING_BIT
#define VD VK_QUEUE_VIDEO_DECODE_BIT_KHR
#define OF VK_QUEUE_OPTICAL_FLOW_BIT_NV

static void expect_choice(const vkc_queue_family_info *f, uint32_t n, int32_t override,
                          vkc_result want_r, uint32_t want_family, vkc_queue_reason want_reason)
{
    uint32_t fam = 1234;
    vkc_queue_reason why = VKC_QUEUE_REASON_NONE;
    assert_int_equal(vkc_choose_queue_family(f, n, override, &fam, &why), want_r);
    if (want_r == VKC_SUCCESS) {
        assert_int_equal(fam, want_family);
        assert_int_equal(why, want_reason);
    }
}

static void test_queue_nvidia_datacenter(void **state)
{
    (void)state;
    /* H200: G|C|T|S x16, T|S x2, C|T|S x8, video decode x7, optical flow x1 */
    const vkc_queue_family_info f[] = {
        {G | C | T | S, 16, 64}, {T | S, 2, 64}, {C | T | S, 8, 64}, {VD, 7, 64}, {OF, 1, 0}};
    expect_choice(f, 5, -1, VKC_SUCCESS, 2, VKC_QUEUE_REASON_COMPUTE_ONLY);
    /* override to the graphics family */
    expect_choice(f, 5, 0, VKC_SUCCESS, 0, VKC_QUEUE_REASON_OVERRIDE);
    /* override to a family without compute, or one that does not exist */
    expect_choice(f, 5, 1, VKC_ERROR_INVALID_ARGUMENT, 0, 0);
    expect_choice(f, 5, 3, VKC_ERROR_INVALID_ARGUMENT, 0, 0);
    expect_choice(f, 5, 5, VKC_ERROR_INVALID_ARGUMENT, 0, 0);
}

static void test_queue_amd_desktop(void **state)
{
    (void)state;
    /* RADV on RDNA: G|C|T|S x1, C|T|S x4, video decode x1, video encode x1 */
    const vkc_queue_family_info f[] = {
        {G | C | T | S, 1, 64}, {C | T | S, 4, 64}, {VD, 1, 64}, {0x40u, 1, 64}};
    expect_choice(f, 4, -1, VKC_SUCCESS, 1, VKC_QUEUE_REASON_COMPUTE_ONLY);
}

static void test_queue_intel(void **state)
{
    (void)state;
    /* Intel Arc (ANV): G|C|T x1, C|T x1 (compute engine), T x1 (copy engine) */
    const vkc_queue_family_info f[] = {{G | C | T, 1, 36}, {C | T, 1, 36}, {T, 1, 36}};
    expect_choice(f, 3, -1, VKC_SUCCESS, 1, VKC_QUEUE_REASON_COMPUTE_ONLY);
    /* older Intel integrated: one G|C|T family */
    expect_choice(f, 1, -1, VKC_SUCCESS, 0, VKC_QUEUE_REASON_NO_COMPUTE_ONLY);
}

static void test_queue_lavapipe(void **state)
{
    (void)state;
    const vkc_queue_family_info f[] = {{G | C | T, 1, 64}};
    expect_choice(f, 1, -1, VKC_SUCCESS, 0, VKC_QUEUE_REASON_NO_COMPUTE_ONLY);
}

static void test_queue_most_queues(void **state)
{
    (void)state;
    /* No compute-only family: the compute family with the most queues wins;
     * several compute-only ones: again the one with most queues. */
    const vkc_queue_family_info a[] = {{G | C | T, 1, 64}, {G | C, 4, 64}, {T, 2, 64}};
    expect_choice(a, 3, -1, VKC_SUCCESS, 1, VKC_QUEUE_REASON_NO_COMPUTE_ONLY);
    const vkc_queue_family_info b[] = {{G | C | T, 8, 64}, {C, 1, 64}, {C | T, 2, 64}};
    expect_choice(b, 3, -1, VKC_SUCCESS, 2, VKC_QUEUE_REASON_COMPUTE_ONLY);
    /* a family that reports zero queues is never chosen */
    const vkc_queue_family_info z[] = {{G | C | T, 1, 64}, {C, 0, 64}};
    expect_choice(z, 2, -1, VKC_SUCCESS, 0, VKC_QUEUE_REASON_NO_COMPUTE_ONLY);
}

static void test_queue_no_compute(void **state)
{
    (void)state;
    const vkc_queue_family_info f[] = {{G | T, 1, 64}, {T, 2, 64}, {VD, 1, 0}};
    expect_choice(f, 3, -1, VKC_ERROR_NO_COMPUTE_QUEUE, 0, 0);
    expect_choice(f, 0, -1, VKC_ERROR_NO_COMPUTE_QUEUE, 0, 0);
    uint32_t fam;
    vkc_queue_reason why;
    assert_int_equal(vkc_choose_queue_family(NULL, 3, -1, &fam, &why), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_choose_queue_family(f, 3, -1, NULL, &why), VKC_ERROR_INVALID_ARGUMENT);
    assert_true(strstr(vkc_result_string(VKC_ERROR_NO_COMPUTE_QUEUE), "compute") != NULL);
}

static void test_result_strings(void **state)
{
    (void)state;
#define CHECK(name, value, text)                                                                   \
    assert_int_equal(name, value);                                                                 \
    assert_non_null(strstr(vkc_result_string(name), #name));                                       \
    assert_non_null(strstr(vkc_result_string(name), text));
    VKC_RESULT_LIST(CHECK)
#undef CHECK
    assert_string_equal(vkc_result_string((vkc_result)-999), "unknown vkc_result");
}

static void test_create_real_device(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    vkc_context *ctx = vkc_test_context_create(NULL);
    const vkc_device_info *d = vkc_context_device(ctx);
    assert_non_null(d);
    assert_true(strlen(d->name) > 0);
    assert_true(d->queue_family < d->queue_family_count);
    assert_true(d->queue_families[d->queue_family].flags & VK_QUEUE_COMPUTE_BIT);
    /* The choice agrees with the pure function over the device's own table. */
    uint32_t fam;
    vkc_queue_reason why;
    assert_int_equal(
        vkc_choose_queue_family(d->queue_families, d->queue_family_count, -1, &fam, &why),
        VKC_SUCCESS);
    assert_int_equal(fam, d->queue_family);
    assert_int_equal(why, d->queue_reason);
    assert_true(d->subgroup_size >= 1);
    assert_true(d->max_workgroup_invocations >= 128);
    assert_true(d->max_storage_buffer_range >= (1u << 27));
    assert_true(d->max_memory_allocation_size >= (1u << 30));
    assert_true(d->min_storage_buffer_offset_alignment >= 1);
    assert_true(d->api_version >= VK_API_VERSION_1_1);
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    assert_true(f.validation);
    assert_true(f.default_workgroup_size >= 1 && f.default_workgroup_size <= 1024);
    assert_true(f.max_grid_groups >= 1 && f.max_grid_groups <= d->max_workgroup_count[0]);
    /* What the device has is what vkc uses (no fallback forced). */
    assert_int_equal(f.timeline_semaphores, d->timeline_semaphore);
    assert_int_equal(f.push_descriptors, d->push_descriptor);
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    /* The default wait mode's set-up is all that was submitted: the marker's
     * reset and the 8 rounds of its self-test, the completion epilogue's
     * self-test (6 rounds) and armed submission's (3 rounds of two
     * submits) where they ran. */
    if (f.wait_mode == VKC_WAIT_SPIN_MARKER) {
        assert_string_equal(f.wait_reason, "self-test passed");
        assert_int_equal(st.submits, 1 + 8 +
                                         (f.completion_epilogue ? VKC_EPI_SELFTEST_SUBMITS : 0) +
                                         (f.armed_submits ? VKC_ARM_SELFTEST_SUBMITS : 0));
    } else {
        assert_non_null(f.wait_reason);
        assert_int_equal(st.submits, 0);
    }
    printf("device: %s (%s), family %u: %s\n", d->name, d->driver_info, d->queue_family,
           vkc_queue_reason_string(d->queue_reason));
    vkc_test_context_destroy(ctx);
}

static void force_fallbacks(vkc_context_desc *d)
{
    d->push_descriptors = VKC_OFF;
    d->timeline_semaphores = VKC_OFF;
}

static void test_create_fallbacks(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    vkc_context *ctx = vkc_test_context_create(force_fallbacks);
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    assert_false(f.push_descriptors);
    assert_false(f.timeline_semaphores);
    vkc_test_context_destroy(ctx);
}

static void bad_device(vkc_context_desc *d)
{
    d->device = "no-such-device-xyzzy";
}

static void test_create_bad_input(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    vkc_test_quiet_errors(1);
    vkc_context_desc d = vkc_test_desc();
    assert_int_equal(vkc_context_create(&d, NULL), VKC_ERROR_INVALID_ARGUMENT);

    vkc_context *ctx = (vkc_context *)0x1;
    bad_device(&d);
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_ERROR_NO_DEVICE);
    assert_null(ctx);
    assert_non_null(strstr(vkc_last_create_error(), "no-such-device-xyzzy"));

    d = vkc_test_desc();
    d.device = "99";
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_ERROR_NO_DEVICE);
    assert_null(ctx);

    d = vkc_test_desc();
    d.queue_family_override = true;
    d.queue_family = 77;
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(vkc_last_create_error(), "77"));

    /* Device "0" by index and by a name substring of the real device. */
    d = vkc_test_desc();
    d.device = "0";
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_SUCCESS);
    char name[256];
    snprintf(name, sizeof(name), "%.6s", vkc_context_device(ctx)->name);
    vkc_context_destroy(ctx);
    d.device = name;
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_SUCCESS);
    assert_non_null(strstr(vkc_context_device(ctx)->name, name));
    vkc_context_destroy(ctx);

    /* NULL handles */
    vkc_context_destroy(NULL);
    vkc_stats st;
    assert_int_equal(vkc_context_stats(NULL, &st), VKC_ERROR_INVALID_HANDLE);
    assert_null(vkc_context_device(NULL));
    vkc_test_quiet_errors(0);
    vkc_test_assert_clean();
}

static void test_create_destroy_100(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    for (int i = 0; i < 100; ++i) {
        vkc_context *ctx = vkc_test_context_create(NULL);
        vkc_context_destroy(ctx);
    }
    vkc_test_assert_clean();
}

static void test_system_query(void **state)
{
    (void)state;
    static vkc_system_info si;
    vkc_result r = vkc_system_query(&si);
    assert_int_equal(r, VKC_SUCCESS);
    assert_true(si.loader_found);
    assert_true(si.validation_available);
    assert_true(si.device_count >= 1);
    assert_true(si.best_device >= 0);
    const vkc_device_info *d = &si.devices[si.best_device];
    assert_true(d->queue_family < d->queue_family_count);
}

/* VKC_TIME_CALLS=1: the report each context's destruction writes. */
static char timing_text[16384];
static size_t timing_len;

static void timing_logger(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    vkc_test_log(user, level, id, msg);
    if (strncmp(msg, "VKC_TIME_CALLS", 14) == 0 && level == VKC_LOG_INFO)
        timing_len += (size_t)snprintf(timing_text + timing_len, sizeof(timing_text) - timing_len,
                                       "%s\n", msg);
    assert_true(timing_len < sizeof(timing_text) - 1);
}

static void timing_tweak(vkc_context_desc *d)
{
    d->logger.func = timing_logger;
}

/* The calls of `call` at any site in the report: the sum of their counts;
 * each line's buckets add up to its count. */
static unsigned long long timing_calls(const char *call)
{
    unsigned long long total = 0;
    char want[64];
    snprintf(want, sizeof(want), "VKC_TIME_CALLS:   %s at ", call);
    for (const char *p = timing_text; (p = strstr(p, want)) != NULL; ++p) {
        unsigned long long n = 0, b[4] = {0};
        const char *c = strstr(p, ": ");
        c = c ? strstr(c + 2, ": ") : NULL; /* after "file.c:line" */
        assert_non_null(c);
        assert_int_equal(sscanf(c, ": %llu calls", &n), 1);
        const char *h = strstr(c, "<2 us ");
        assert_non_null(h);
        assert_int_equal(sscanf(h, "<2 us %llu, 2-10 us %llu, 10-30 us %llu, >=30 us %llu", &b[0],
                                &b[1], &b[2], &b[3]),
                         4);
        assert_int_equal(b[0] + b[1] + b[2] + b[3], n);
        total += n;
    }
    return total;
}

/* Last in the list: once on, timing stays on for the process. */
static void test_call_timing(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    setenv("VKC_TIME_CALLS", "1", 1);
    vkc_context *a = vkc_test_context_create(timing_tweak);
    vkc_stats st;
    assert_int_equal(vkc_context_stats(a, &st), VKC_SUCCESS);
    timing_len = 0;
    vkc_test_context_destroy(a);
    /* A's device came before timing was on; its set-up's submits came after
     * (the self-tests', where they ran). */
    assert_non_null(strstr(timing_text, "call sites since the last report"));
    assert_int_equal(timing_calls("vkCreateDevice"), 0);
    if (st.submits)
        assert_true(timing_calls("vkQueueSubmit") + timing_calls("vkQueueSubmit2") >= 1);
    /* B's creation is timed whole, and A's calls went with A's report. */
    timing_len = 0;
    vkc_context *b = vkc_test_context_create(timing_tweak);
    vkc_test_context_destroy(b);
    unsetenv("VKC_TIME_CALLS");
    assert_int_equal(timing_calls("vkCreateDevice"), 1);
    assert_int_equal(timing_calls("vkCreateInstance"), 1);
    vkc_test_assert_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_nvidia_datacenter),
        cmocka_unit_test(test_queue_amd_desktop),
        cmocka_unit_test(test_queue_intel),
        cmocka_unit_test(test_queue_lavapipe),
        cmocka_unit_test(test_queue_most_queues),
        cmocka_unit_test(test_queue_no_compute),
        cmocka_unit_test(test_result_strings),
        cmocka_unit_test(test_create_real_device),
        cmocka_unit_test(test_create_fallbacks),
        cmocka_unit_test(test_create_bad_input),
        cmocka_unit_test(test_system_query),
        cmocka_unit_test(test_create_destroy_100),
        cmocka_unit_test(test_call_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
