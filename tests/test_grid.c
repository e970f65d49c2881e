/* vkc's GLSL include "vkc_grid.glsl": vkc_grid_barrier() orders the steps of
 * one dispatch across its workgroups, checked against the same steps on the
 * CPU. Lavapipe (Mesa 22.3 here) runs the workgroups of a small dispatch one
 * after another, so only a grid of one workgroup is resident at once: two
 * deadlock in the first barrier until its loop limit (65,535 iterations)
 * ends the spin, which is what the co-residency rule of a cooperative
 * launch exists for. */
/* The private header first: it brings Vulkan in without prototypes (volk). */
#include "vkc_internal.h"

#include "vkc_test.h"

#include <string.h>

/* Step s reads one buffer and writes the other: dst[i] = src[(i + 1) % n] *
 * 3 + s. Element i + 1 belongs to the next workgroup at a group's edge: a
 * missing barrier shows. */
static const char *STEPS_GLSL =
    "#version 450\n"
    "#define VKC_GRID_BINDING 2\n"
    "#include \"vkc_grid.glsl\"\n"
    "layout(local_size_x = 8) in;\n"
    "layout(set = 0, binding = 0) coherent buffer A { uint a[]; };\n"
    "layout(set = 0, binding = 1) coherent buffer B { uint b[]; };\n"
    "layout(push_constant) uniform P { uint n; uint steps; } pc;\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  for (uint s = 0u; s < pc.steps; ++s) {\n"
    "    uint j = (i + 1u) % pc.n;\n"
    "    if ((s & 1u) == 0u) b[i] = a[j] * 3u + s; else a[i] = b[j] * 3u + s;\n"
    "    vkc_grid_barrier();\n"
    "  }\n"
    "}\n";

static void run_steps(vkc_context *ctx, uint32_t groups, uint32_t steps)
{
    const uint32_t n = groups * 8;
    vkc_kernel *k = NULL;
    assert_int_equal(
        vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = STEPS_GLSL, .name = "steps"}, &k),
        VKC_SUCCESS);
    vkc_buffer *a = NULL, *b = NULL, *g = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &a), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &b), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 64}, &g), VKC_SUCCESS);
    uint32_t init[16], ref[16], tmp[16];
    for (uint32_t i = 0; i < n; ++i)
        init[i] = ref[i] = i * 7 + 1;
    assert_int_equal(vkc_buffer_upload(a, 0, init, n * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(b, 0, n * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(g, 0, 64, 0), VKC_SUCCESS);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    vkc_arg args[3] = {{.buffer = a, .access = VKC_ACCESS_READ_WRITE},
                       {.buffer = b, .access = VKC_ACCESS_READ_WRITE},
                       {.buffer = g, .access = VKC_ACCESS_READ_WRITE}};
    uint32_t push[2] = {n, steps};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                              .args = args,
                                                              .arg_count = 3,
                                                              .push = push,
                                                              .push_size = 8,
                                                              .groups = {groups, 1, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    /* Twice: the barrier's state is back at zero after a complete dispatch. */
    for (int round = 0; round < 2; ++round) {
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        for (uint32_t st = 0; st < steps; ++st) {
            for (uint32_t i = 0; i < n; ++i)
                tmp[i] = ref[(i + 1) % n] * 3u + st;
            memcpy(ref, tmp, n * 4);
        }
        uint32_t got[16], state[2];
        assert_int_equal(vkc_buffer_download(steps & 1 ? b : a, 0, got, n * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < n; ++i)
            assert_int_equal(got[i], ref[i]);
        assert_int_equal(vkc_buffer_download(g, 0, state, 8), VKC_SUCCESS);
        assert_int_equal(state[0], 0);
        assert_int_equal(state[1], steps * (uint32_t)(round + 1));
        /* the next round starts from this one's result */
        if (steps & 1)
            assert_int_equal(vkc_buffer_upload(a, 0, got, n * 4), VKC_SUCCESS);
    }
    vkc_seq_destroy(s);
    vkc_buffer_destroy(g);
    vkc_buffer_destroy(b);
    vkc_buffer_destroy(a);
    vkc_kernel_destroy(k);
}

static void test_one_group(void **state)
{
    run_steps(*state, 1, 20);
}

/* The include keeps the caller's line numbers in compiler messages. */
static void test_line_numbers(void **state)
{
    vkc_context *ctx = *state;
    vkc_kernel *k = NULL;
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_kernel_create_glsl(
        ctx,
        &(vkc_glsl_desc){.source = "#version 450\n#include \"vkc_grid.glsl\"\n"
                                   "layout(local_size_x = 1) in;\nvoid main() { oops; }\n",
                         .name = "bad"},
        &k);
    vkc_test_quiet_errors(0);
    assert_int_equal(r, VKC_ERROR_COMPILE);
    assert_non_null(strstr(vkc_context_last_error(ctx), ":4:"));
}

static int setup(void **state)
{
    return vkc_test_setup(state);
}
static int teardown(void **state)
{
    return vkc_test_teardown(state);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_one_group),
        T(test_line_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
