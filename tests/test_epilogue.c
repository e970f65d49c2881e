/* The completion epilogue (src/epilogue.c): a submission whose last
 * dispatch is a GLSL kernel alone after a barrier publishes its own
 * completion from that dispatch's last workgroup, with no marker after it.
 * Each test checks results against a count or a formula kept on the CPU,
 * and that the count the host polls is the one the epilogue published:
 * every wait below first spins on the count alone (no timeline fallback),
 * so a missing or doubled publish fails the test instead of slowing it. */
#define _GNU_SOURCE /* setenv */
/* The private header first: it brings Vulkan in without prototypes (volk). */
#include "seq.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define N 4096u

static vkc_stats stats(vkc_context *ctx)
{
    vkc_stats s;
    assert_int_equal(vkc_context_stats(ctx, &s), VKC_SUCCESS);
    return s;
}

static bool epilogue_on(vkc_context *ctx)
{
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    return f.completion_epilogue;
}

/* The count reaches the ticket within 5 s, by itself. */
static void count_reaches(vkc_context *ctx, vkc_ticket t)
{
    const uint64_t start = vkc__now_ns();
    while (!vkc__marker_done(ctx, t.value))
        if (vkc__now_ns() - start > 5000000000ull)
            fail_msg("the count did not reach ticket %llu", (unsigned long long)t.value);
}

/* After a drain the count is the timeline's value exactly (less the
 * submissions that went without any count). */
static void count_exact(vkc_context *ctx)
{
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    const uint32_t skew = (uint32_t)atomic_load(&ctx->marker_skew);
    assert_int_equal((uint32_t)(ctx->marker[0] + skew), (uint32_t)vkc__submitted_value(ctx));
}

static vkc_kernel *glsl(vkc_context *ctx, const vkc_glsl_desc *d)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(ctx, d, &k);
    if (r != VKC_SUCCESS)
        fail_msg("vkc_kernel_create_glsl: %s: %s", vkc_result_string(r),
                 vkc_context_last_error(ctx));
    return k;
}

static vkc_buffer *buffer(vkc_context *ctx, vkc_memory memory, uint32_t value)
{
    vkc_buffer *b = NULL;
    assert_int_equal(
        vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4, .memory = memory}, &b),
        VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(b, 0, N * 4, value), VKC_SUCCESS);
    return b;
}

static void dispatch(vkc_seq *s, vkc_kernel *k, vkc_buffer *b, const uint32_t *push,
                     uint32_t push_size, uint32_t groups)
{
    vkc_arg a = {.buffer = b, .access = VKC_ACCESS_READ_WRITE};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                              .args = &a,
                                                              .arg_count = 1,
                                                              .push = push,
                                                              .push_size = push_size,
                                                              .groups = {groups, 1, 1}}),
                     VKC_SUCCESS);
}

/* k submits of s, each waited for through the count. */
static void round_trips(vkc_context *ctx, vkc_seq *s, uint32_t k)
{
    for (uint32_t i = 0; i < k; ++i) {
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        count_reaches(ctx, t);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
}

/* x[i] is `below` for i < n, `above` from there. */
static void expect_split(vkc_buffer *b, uint32_t n, uint32_t below, uint32_t above)
{
    static uint32_t got[N];
    assert_int_equal(vkc_buffer_download(b, 0, got, sizeof(got)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (got[i] != (i < n ? below : above))
            fail_msg("x[%u] = %u, want %u", i, got[i], i < n ? below : above);
}

static void expect_all(vkc_buffer *b, uint32_t want)
{
    expect_split(b, N, want, want);
}

/* Round trips of one dispatch over 1 and over 64 workgroups: every
 * recorded copy ends with the epilogue, the counts and results are exact. */
static void test_round_trips(void **state)
{
    vkc_context *ctx = *state;
    if (!epilogue_on(ctx))
        skip();
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    const uint32_t grids[] = {1, 64, 3};
    uint32_t count = 0;
    vkc_buffer *x = buffer(ctx, VKC_MEMORY_DEVICE, 0);
    for (size_t g = 0; g < sizeof(grids) / sizeof(grids[0]); ++g) {
        vkc_seq *s = NULL;
        assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "inc"}, &s), VKC_SUCCESS);
        const uint32_t n = N;
        dispatch(s, k, x, &n, 4, grids[g]);
        const uint64_t before = stats(ctx).epilogue_records; /* the end records */
        assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
        round_trips(ctx, s, 40);
        count += 40;
        assert_true(stats(ctx).epilogue_records > before);
        count_exact(ctx);
        vkc_seq_destroy(s);
    }
    expect_all(x, count);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
}

/* A chain: the last of three dependent dispatches ends alone after a
 * barrier and carries the epilogue; x = ((x + 1) * 3 + 1) ... per submit. */
static void test_chain(void **state)
{
    vkc_context *ctx = *state;
    if (!epilogue_on(ctx))
        skip();
    vkc_kernel *inc = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    vkc_kernel *axpb = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_axpb_glsl, .name = "axpb"});
    vkc_buffer *x = buffer(ctx, VKC_MEMORY_DEVICE, 1);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "chain"}, &s), VKC_SUCCESS);
    const uint32_t n = N, ab[3] = {N, 3, 1};
    dispatch(s, inc, x, &n, 4, 8);
    dispatch(s, axpb, x, ab, 12, 8);
    dispatch(s, inc, x, &n, 4, 5);
    const uint64_t before = stats(ctx).epilogue_records; /* the end records */
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    round_trips(ctx, s, 10);
    assert_true(stats(ctx).epilogue_records > before);
    uint32_t want = 1;
    for (int i = 0; i < 10; ++i)
        want = (want + 1) * 3 + 1 + 1;
    expect_all(x, want);
    count_exact(ctx);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(axpb);
    vkc_kernel_destroy(inc);
}

/* What keeps the marker: a SPIR-V kernel whose module uses the epilogue's
 * spec ids (nothing marks them as carrying it), two dispatches in the last level,
 * a grid of more than VKC_EPILOGUE_GROUPS workgroups, a write to
 * host-visible memory. The results are the same either way. */
static void test_marker_kept(void **state)
{
    vkc_context *ctx = *state;
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    vkc_kernel *spv = NULL;
    /* The same words as SPIR-V: nothing marks them as carrying it, and
     * vkc splices no second epilogue into them. */
    assert_int_equal(
        vkc_kernel_create(
            ctx,
            &(vkc_kernel_desc){.spirv = k->spirv, .spirv_size = k->spirv_size, .name = "inc spv"},
            &spv),
        VKC_SUCCESS);
    assert_false(spv->epilogue);
    vkc_buffer *x = buffer(ctx, VKC_MEMORY_DEVICE, 0), *y = buffer(ctx, VKC_MEMORY_DEVICE, 0);
    vkc_buffer *h = buffer(ctx, VKC_MEMORY_READBACK, 0);
    const uint32_t n = N;
    vkc_seq *s[4] = {NULL};
    for (int i = 0; i < 4; ++i)
        assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "kept"}, &s[i]), VKC_SUCCESS);
    dispatch(s[0], spv, x, &n, 4, 4);
    dispatch(s[1], k, x, &n, 4, 4); /* x and y: one level of two */
    dispatch(s[1], k, y, &n, 4, 4);
    dispatch(s[2], k, y, &n, 4, VKC_EPILOGUE_GROUPS + 1); /* a large grid */
    dispatch(s[3], k, h, &n, 4, 4);                       /* host-visible */
    for (int i = 0; i < 4; ++i) {
        const uint64_t before = stats(ctx).epilogue_records;
        assert_int_equal(vkc_seq_end(s[i]), VKC_SUCCESS);
        round_trips(ctx, s[i], 5);
        /* Host-visible results keep the marker only where the self-test
         * saw them after the count. */
        if (i < 3 || !ctx->epi_mapped || !epilogue_on(ctx))
            assert_int_equal(stats(ctx).epilogue_records, before);
        else
            assert_true(stats(ctx).epilogue_records > before);
    }
    expect_all(x, 10);
    expect_all(y, 10);
    volatile uint32_t *hm = vkc_buffer_map(h);
    assert_non_null(hm);
    for (uint32_t i = 0; i < N; ++i)
        assert_int_equal(hm[i], 5);
    count_exact(ctx);
    for (int i = 0; i < 4; ++i)
        vkc_seq_destroy(s[i]);
    vkc_buffer_destroy(h);
    vkc_buffer_destroy(y);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(spv);
    vkc_kernel_destroy(k);
}

/* The source as users write it: another entry name, defines, an early
 * return and a workgroup barrier in the kernel, its own spec constant;
 * compile errors keep their line numbers. */
static void test_source_forms(void **state)
{
    vkc_context *ctx = *state;
    if (!epilogue_on(ctx))
        skip();
    static const char src[] = "// a comment before #version\n"
                              "#version 450\n"
                              "layout(local_size_x = 64) in;\n"
                              "layout(constant_id = 7) const uint ADD = 1u;\n"
                              "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
                              "layout(push_constant) uniform P { uint n; } pc;\n"
                              "shared uint tile[64];\n"
                              "void go() {\n"
                              "  uint i = gl_GlobalInvocationID.x;\n"
                              "  tile[gl_LocalInvocationID.x] = i < pc.n ? x[i] : 0u;\n"
                              "  barrier();\n"
                              "  if (i >= pc.n) return;\n"
                              "  x[i] = tile[63u - gl_LocalInvocationID.x] + ADD * SCALE;\n"
                              "}\n";
    const char *defs[] = {"SCALE=2u"};
    const vkc_spec_constant add = {7, 5};
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = src,
                                               .name = "forms",
                                               .entry = "go",
                                               .defines = defs,
                                               .define_count = 1,
                                               .spec_constants = &add,
                                               .spec_constant_count = 1});
    vkc_buffer *x = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4}, &x), VKC_SUCCESS);
    static uint32_t init[N], got[N];
    for (uint32_t i = 0; i < N; ++i)
        init[i] = i * 7u;
    assert_int_equal(vkc_buffer_upload(x, 0, init, sizeof(init)), VKC_SUCCESS);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "forms"}, &s), VKC_SUCCESS);
    const uint32_t n = N - 10; /* the last workgroup returns early in part */
    dispatch(s, k, x, &n, 4, N / 64);
    const uint64_t before = stats(ctx).epilogue_records; /* the end records */
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    round_trips(ctx, s, 1);
    assert_true(k->epilogue);
    assert_true(stats(ctx).epilogue_records > before);
    assert_int_equal(vkc_buffer_download(x, 0, got, sizeof(got)), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t mirror = (i & ~63u) + (63u - (i & 63u));
        uint32_t want = i >= n ? init[i] : (mirror < n ? init[mirror] : 0u) + 5u * 2u;
        if (got[i] != want)
            fail_msg("x[%u] = %u, want %u", i, got[i], want);
    }
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);

    /* A #version the epilogue's extensions do not go with: built without,
     * and the epilogue spliced into its SPIR-V instead. */
    vkc_kernel *old =
        glsl(ctx, &(vkc_glsl_desc){.source = "#version 310 es\n"
                                             "layout(local_size_x = 1) in;\n"
                                             "layout(binding = 0) buffer B { uint b[]; };\n"
                                             "void main() { b[gl_WorkGroupID.x] += 2u; }\n"});
    assert_true(old->epilogue);
    assert_true(old->epi_splice);
    x = buffer(ctx, VKC_MEMORY_DEVICE, 1);
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "es"}, &s), VKC_SUCCESS);
    dispatch(s, old, x, NULL, 0, VKC_EPILOGUE_GROUPS);
    const uint64_t es_before = stats(ctx).epilogue_records;
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    round_trips(ctx, s, 3);
    assert_true(stats(ctx).epilogue_records > es_before);
    count_exact(ctx);
    expect_split(x, VKC_EPILOGUE_GROUPS, 7, 1);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(old);

    /* An error on line 4 is reported on line 4. */
    vkc_test_quiet_errors(1);
    vkc_kernel *bad = NULL;
    assert_int_equal(vkc_kernel_create_glsl(
                         ctx,
                         &(vkc_glsl_desc){.source = "#version 450\nlayout(local_size_x = 1) in;\n"
                                                    "void main() {\n  undeclared = 1;\n}\n"},
                         &bad),
                     VKC_ERROR_COMPILE);
    vkc_test_quiet_errors(0);
    assert_null(bad);
    assert_non_null(strstr(vkc_context_last_error(ctx), ":4:"));
}

static vkc_kernel *from_spirv(vkc_context *ctx, const uint32_t *words, size_t size,
                              const vkc_spec_constant *spec, uint32_t spec_count)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create(ctx,
                                     &(vkc_kernel_desc){.spirv = words,
                                                        .spirv_size = size,
                                                        .spec_constants = spec,
                                                        .spec_constant_count = spec_count},
                                     &k);
    if (r != VKC_SUCCESS)
        fail_msg("vkc_kernel_create: %s: %s", vkc_result_string(r), vkc_context_last_error(ctx));
    return k;
}

/* epi_tile.comp on the CPU: the first `groups` workgroups of 64. */
static void tile_ref(uint32_t *x, uint32_t n, uint32_t groups, uint32_t add)
{
    for (uint32_t w = 0; w < groups && w * 64u < N; ++w) {
        uint32_t tile[64];
        for (uint32_t l = 0; l < 64; ++l)
            tile[l] = w * 64u + l < n ? x[w * 64u + l] : 0u;
        for (uint32_t l = 0; l < 64; ++l)
            if (w * 64u + l < n)
                x[w * 64u + l] = tile[63u - l] + add * 2u;
    }
}

/* Kernels from SPIR-V carry the epilogue too, spliced into a copy of
 * their module when the pipeline is first wanted (src/spirv_epilogue.c):
 * the validation layer checks the spliced module, and the counts and
 * results are exact. add.comp reads gl_NumWorkGroups itself (the splice
 * takes its variable); epi_tile.comp declares neither built-in the
 * epilogue reads (the splice adds them) and has workgroup memory, a
 * barrier, a spec constant of the caller's and invocations that return
 * early; epi_own_spec.comp uses one of the epilogue's spec ids and keeps
 * the marker. */
static void test_spirv_kernels(void **state)
{
    vkc_context *ctx = *state;
    if (!epilogue_on(ctx))
        skip();
    static uint32_t want[N], got[N];
    const uint32_t grids[] = {1, 64, 3};

    /* c = a + b, with a changed before each round. */
    vkc_kernel *add = from_spirv(ctx, test_shaders_add, test_shaders_add_size, NULL, 0);
    assert_true(add->epi_splice);
    vkc_buffer *a = buffer(ctx, VKC_MEMORY_DEVICE, 0), *b = buffer(ctx, VKC_MEMORY_DEVICE, 5),
               *c = buffer(ctx, VKC_MEMORY_DEVICE, 0);
    for (size_t g = 0; g < sizeof(grids) / sizeof(grids[0]); ++g) {
        assert_int_equal(vkc_buffer_fill(a, 0, N * 4, (uint32_t)(g * 100u + 1u)), VKC_SUCCESS);
        vkc_seq *s = NULL;
        assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "add"}, &s), VKC_SUCCESS);
        vkc_arg args[3] = {{.buffer = a, .access = VKC_ACCESS_READ},
                           {.buffer = b, .access = VKC_ACCESS_READ},
                           {.buffer = c, .access = VKC_ACCESS_WRITE}};
        const uint32_t n = N;
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = add,
                                                                  .args = args,
                                                                  .arg_count = 3,
                                                                  .push = &n,
                                                                  .push_size = 4,
                                                                  .groups = {grids[g], 1, 1}}),
                         VKC_SUCCESS);
        const uint64_t before = stats(ctx).epilogue_records;
        assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
        round_trips(ctx, s, 20);
        assert_true(stats(ctx).epilogue_records > before);
        count_exact(ctx);
        expect_all(c, (uint32_t)(g * 100u + 6u));
        vkc_seq_destroy(s);
    }
    vkc_buffer_destroy(a);
    vkc_buffer_destroy(b);
    vkc_buffer_destroy(c);
    vkc_kernel_destroy(add);

    /* The tile kernel, over every grid, each round checked on the CPU. */
    const vkc_spec_constant five = {7, 5};
    vkc_kernel *tile = from_spirv(ctx, test_shaders_epi_tile, test_shaders_epi_tile_size, &five, 1);
    vkc_buffer *x = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = N * 4}, &x), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        want[i] = i * 7u + 3u;
    assert_int_equal(vkc_buffer_upload(x, 0, want, sizeof(want)), VKC_SUCCESS);
    const uint32_t n = N - 10; /* the last workgroup returns early in part */
    const uint32_t tile_grids[] = {N / 64, 1, 7};
    for (size_t g = 0; g < sizeof(tile_grids) / sizeof(tile_grids[0]); ++g) {
        vkc_seq *s = NULL;
        assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "tile"}, &s), VKC_SUCCESS);
        dispatch(s, tile, x, &n, 4, tile_grids[g]);
        const uint64_t before = stats(ctx).epilogue_records;
        assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
        for (int round = 0; round < 3; ++round) {
            round_trips(ctx, s, 1);
            tile_ref(want, n, tile_grids[g], 5);
        }
        assert_true(stats(ctx).epilogue_records > before);
        count_exact(ctx);
        assert_int_equal(vkc_buffer_download(x, 0, got, sizeof(got)), VKC_SUCCESS);
        for (uint32_t i = 0; i < N; ++i)
            if (got[i] != want[i])
                fail_msg("grid %u: x[%u] = %u, want %u", tile_grids[g], i, got[i], want[i]);
        vkc_seq_destroy(s);
    }
    vkc_kernel_destroy(tile);

    /* Spec id 2030 is the module's own: the marker, and the right sums. */
    vkc_kernel *own =
        from_spirv(ctx, test_shaders_epi_own_spec, test_shaders_epi_own_spec_size, NULL, 0);
    assert_false(own->epilogue);
    assert_int_equal(vkc_buffer_fill(x, 0, N * 4, 1), VKC_SUCCESS);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "own"}, &s), VKC_SUCCESS);
    dispatch(s, own, x, &n, 4, N / 64);
    const uint64_t before = stats(ctx).epilogue_records;
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    round_trips(ctx, s, 4); /* the marker publishes the same count */
    assert_int_equal(stats(ctx).epilogue_records, before);
    count_exact(ctx);
    expect_split(x, n, 13, 1);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(own);
}

/* The splice on every compute module the tests have: each result passes
 * the SPIR-V validator, keeps the module's own words up to the splice's
 * additions (no instruction lost: the result is longer by the epilogue),
 * and a second splice of a result is refused (its spec ids are taken).
 * What cannot take it says why: a vertex shader, an entry point that is
 * not there. */
static void test_splice_modules(void **state)
{
    vkc_context *ctx = *state;
    const struct {
        const uint32_t *w;
        size_t size;
    } mods[] = {
        {test_shaders_add, test_shaders_add_size},
        {test_shaders_img_affine, test_shaders_img_affine_size},
        {test_shaders_img_rmw, test_shaders_img_rmw_size},
        {test_shaders_img_fetch, test_shaders_img_fetch_size},
        {test_shaders_img_sample, test_shaders_img_sample_size},
        {test_shaders_img_sample_sep, test_shaders_img_sample_sep_size},
        {test_shaders_img_coords, test_shaders_img_coords_size},
        {test_shaders_img_coords3d, test_shaders_img_coords3d_size},
        {test_shaders_img_write_unfmt, test_shaders_img_write_unfmt_size},
        {test_shaders_epi_tile, test_shaders_epi_tile_size},
    };
    for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); ++i) {
        uint32_t *out = NULL, *again = NULL;
        size_t size = 0, size2 = 0;
        const char *why = vkc__spirv_splice_epilogue(mods[i].w, mods[i].size, "main", &out, &size);
        if (why)
            fail_msg("module %zu: %s", i, why);
        assert_null(vkc__spirv_splice_check(mods[i].w, mods[i].size, "main"));
        char msg[512];
        if (!vkc__spirv_file_ok(ctx, out, size, msg, sizeof(msg)))
            fail_msg("module %zu spliced: %s", i, msg);
        assert_true(size > mods[i].size);
        assert_int_equal(out[0], mods[i].w[0]);
        assert_true(out[3] > mods[i].w[3]); /* new ids above the old bound */
        assert_string_equal(vkc__spirv_splice_epilogue(out, size, "main", &again, &size2),
                            "spec ids 2030..2034 are the module's own");
        assert_null(again);
        vkc__free(out);
    }
    uint32_t *out = NULL;
    size_t size = 0;
    assert_non_null(vkc__spirv_splice_epilogue(test_shaders_vertex, test_shaders_vertex_size,
                                               "main", &out, &size));
    assert_non_null(
        vkc__spirv_splice_epilogue(test_shaders_add, test_shaders_add_size, "nope", &out, &size));
    assert_null(out);
}

/* Armed copies that end with the epilogue: a cancelled one (its dispatches
 * and so its epilogue skipped) counts through the marker under the
 * inverted predicate; opened ones through the epilogue. */
static void test_armed(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    if (!f.completion_epilogue || !f.armed_submits)
        skip();
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    vkc_buffer *x = buffer(ctx, VKC_MEMORY_DEVICE, 0), *y = buffer(ctx, VKC_MEMORY_DEVICE, 0);
    vkc_seq *s = NULL, *o = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "armed"}, &s), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "other"}, &o), VKC_SUCCESS);
    const uint32_t n = N;
    dispatch(s, k, x, &n, 4, 16);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    dispatch(o, k, y, &n, 4, 2);
    assert_int_equal(vkc_seq_end(o), VKC_SUCCESS);
    const vkc_stats s0 = stats(ctx);
    uint32_t count = 0, other = 0;
    for (int r = 0; r < 6; ++r) {
        round_trips(ctx, s, 8);
        count += 8;
        /* Other work: it cancels the copy armed behind the last submit. */
        round_trips(ctx, o, 1);
        other++;
        count_exact(ctx);
    }
    const vkc_stats s1 = stats(ctx);
    assert_true(s1.armed_opens > s0.armed_opens);
    assert_true(s1.armed_cancels > s0.armed_cancels);
    assert_true(s1.epilogue_records > s0.epilogue_records);
    expect_all(x, count);
    expect_all(y, other);
    vkc_seq_destroy(o);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(y);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
}

/* Threads record sequences of one new kernel at once: one makes its
 * epilogue pipeline, the others take the marker meanwhile; all exact. */
typedef struct worker {
    vkc_context *ctx;
    vkc_kernel *k;
    vkc_buffer *x;
} worker;

static void *worker_main(void *p)
{
    worker *w = p;
    vkc_seq *s = NULL;
    if (vkc_seq_create(w->ctx, &(vkc_seq_desc){.name = "worker"}, &s) != VKC_SUCCESS)
        return p;
    const uint32_t n = N;
    vkc_arg a = {.buffer = w->x, .access = VKC_ACCESS_READ_WRITE};
    vkc_result r = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = w->k,
                                                            .args = &a,
                                                            .arg_count = 1,
                                                            .push = &n,
                                                            .push_size = 4,
                                                            .groups = {4, 1, 1}});
    if (r >= 0)
        r = vkc_seq_end(s);
    for (int i = 0; r >= 0 && i < 30; ++i) {
        vkc_ticket t;
        r = vkc_seq_submit(s, &t);
        if (r >= 0)
            r = vkc_wait(w->ctx, t, UINT64_MAX);
    }
    vkc_seq_destroy(s);
    return r >= 0 ? NULL : p;
}

static void test_threads(void **state)
{
    vkc_context *ctx = *state;
    enum { T = 4 };
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    worker w[T];
    pthread_t th[T];
    for (int i = 0; i < T; ++i) {
        w[i] = (worker){ctx, k, buffer(ctx, VKC_MEMORY_DEVICE, (uint32_t)i)};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < T; ++i) {
        void *ret = NULL;
        pthread_join(th[i], &ret);
        assert_null(ret);
    }
    for (int i = 0; i < T; ++i) {
        expect_all(w[i].x, 30u + (uint32_t)i);
        vkc_buffer_destroy(w[i].x);
    }
    count_exact(ctx);
    vkc_kernel_destroy(k);
}

/* The self-test catches an epilogue that never publishes (the pipelines
 * made with it off); the counts start again and waits stay right. */
static void test_self_test(void **state)
{
    vkc_context *ctx = *state;
    if (!epilogue_on(ctx))
        skip();
    const char *why = NULL;
    bool early = false;
    ctx->test_epi_mute = true;
    assert_int_equal(vkc__epilogue_selftest(ctx, &why, &early), VKC_SUCCESS);
    ctx->test_epi_mute = false;
    assert_non_null(why);
    assert_non_null(strstr(why, "not seen"));
    why = NULL;
    assert_int_equal(vkc__epilogue_selftest(ctx, &why, &early), VKC_SUCCESS);
    assert_null(why);
    assert_false(early);
    count_exact(ctx);
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    vkc_buffer *x = buffer(ctx, VKC_MEMORY_DEVICE, 0);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "after"}, &s), VKC_SUCCESS);
    const uint32_t n = N;
    dispatch(s, k, x, &n, 4, 2);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    round_trips(ctx, s, 5);
    expect_all(x, 5);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
}

/* VKC_EPILOGUE=0: the marker only, the same results. */
static void test_env_off(void **state)
{
    (void)state;
    setenv("VKC_EPILOGUE", "0", 1);
    vkc_context *ctx = vkc_test_context_create(NULL);
    unsetenv("VKC_EPILOGUE");
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    assert_false(f.completion_epilogue);
    assert_string_equal(f.epilogue_reason, "VKC_EPILOGUE=0");
    vkc_kernel *k = glsl(ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"});
    vkc_buffer *x = buffer(ctx, VKC_MEMORY_DEVICE, 0);
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "off"}, &s), VKC_SUCCESS);
    const uint32_t n = N;
    dispatch(s, k, x, &n, 4, 2);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    for (int i = 0; i < 10; ++i) {
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(stats(ctx).epilogue_records, 0);
    expect_all(x, 10);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest group[] = {
        cmocka_unit_test(test_round_trips),    cmocka_unit_test(test_chain),
        cmocka_unit_test(test_marker_kept),    cmocka_unit_test(test_source_forms),
        cmocka_unit_test(test_armed),          cmocka_unit_test(test_threads),
        cmocka_unit_test(test_self_test),      cmocka_unit_test(test_spirv_kernels),
        cmocka_unit_test(test_splice_modules),
    };
    const struct CMUnitTest alone[] = {cmocka_unit_test(test_env_off)};
    int fails = cmocka_run_group_tests_name("epilogue", group, vkc_test_setup, vkc_test_teardown);
    return fails + cmocka_run_group_tests_name("epilogue, own contexts", alone, NULL, NULL);
}
