/* Kernel module: reflection of run-time GLSL and embedded SPIR-V checked
 * against an std430 layout computed here, workgroup sizes, every kind of bad
 * module, compile errors, and the SPIR-V and pipeline caches on disk. */
#define _GNU_SOURCE
#include "vkc_test.h"

#include "test_shaders.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------ */

/* Cache directory for the context a test creates (NULL = ctest's default). */
static const char *g_cache_dir;
static vkc_toggle g_disk_cache;
static unsigned g_cache_warnings;
static char g_cache_warning[1024]; /* the last one */

static void count_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    if (id == VKC_LOG_ID_CACHE && level == VKC_LOG_WARN) {
        g_cache_warnings++;
        snprintf(g_cache_warning, sizeof(g_cache_warning), "%s", msg);
        fprintf(stderr, "[cache warning] %s\n", msg);
        return;
    }
    vkc_test_log(user, level, id, msg);
}

static void tweak_cache(vkc_context_desc *d)
{
    d->cache_dir = g_cache_dir;
    d->disk_cache = g_disk_cache;
    d->logger.func = count_log;
}

static vkc_context *ctx_create(void)
{
    return vkc_test_context_create(tweak_cache);
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void make_temp_dir(char *out, size_t size)
{
    snprintf(out, size, "/tmp/vkc_test_kernel_XXXXXX");
    assert_non_null(mkdtemp(out));
}

static void remove_dir(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* Count files in dir whose name starts with prefix; remember the last. */
static int count_files(const char *dir, const char *prefix, char *last, size_t last_size)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
            strstr(e->d_name, ".tmp."))
            continue;
        ++n;
        if (last)
            snprintf(last, last_size, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

static vkc_kernel *glsl_ok(vkc_context *ctx, const char *src, uint32_t wg)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(
        ctx, &(vkc_glsl_desc){.source = src, .name = "test", .workgroup_size = wg}, &k);
    if (r != VKC_SUCCESS)
        fail_msg("vkc_kernel_create_glsl: %s: %s", vkc_result_string(r),
                 vkc_context_last_error(ctx));
    assert_non_null(k);
    return k;
}

static vkc_kernel_info info_of(vkc_kernel *k)
{
    vkc_kernel_info info;
    assert_int_equal(vkc_kernel_info_get(k, &info), VKC_SUCCESS);
    return info;
}

/* Expect a failure with this code and this text in the last error. */
static void expect_fail(vkc_context *ctx, vkc_result got, vkc_kernel *k, vkc_result want,
                        const char *text)
{
    if (got != want)
        fail_msg("expected %s, got %s: %s", vkc_result_string(want), vkc_result_string(got),
                 vkc_context_last_error(ctx));
    assert_null(k);
    if (text && !strstr(vkc_context_last_error(ctx), text))
        fail_msg("error message lacks \"%s\": %s", text, vkc_context_last_error(ctx));
}

/* ---- an std430 reference layout ---------------------------------------------- */

typedef enum { T_FLOAT, T_UINT, T_VEC2, T_VEC3, T_VEC4, T_MAT4, T_COUNT } ty;
static const char *const ty_glsl[T_COUNT] = {"float", "uint", "vec2", "vec3", "vec4", "mat4"};
static const uint32_t ty_size[T_COUNT] = {4, 4, 8, 12, 16, 64};
static const uint32_t ty_align[T_COUNT] = {4, 4, 8, 16, 16, 16};

/* End of the last member (the tight size) and the struct alignment. */
static uint32_t std430_end(const ty *m, int n, uint32_t *align)
{
    uint32_t off = 0, al = 4;
    for (int i = 0; i < n; ++i) {
        off = (off + ty_align[m[i]] - 1) / ty_align[m[i]] * ty_align[m[i]];
        off += ty_size[m[i]];
        if (ty_align[m[i]] > al)
            al = ty_align[m[i]];
    }
    if (align)
        *align = al;
    return off;
}

static void glsl_members(char *out, size_t size, const ty *m, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; ++i)
        at += (size_t)snprintf(out + at, size - at, "%s m%d; ", ty_glsl[m[i]], i);
}

/* ---- reflection ------------------------------------------------------------------ */

static void test_reflect_access(void **state)
{
    vkc_context *ctx = *state;
    const char *src = "#version 450\n"
                      "layout(local_size_x_id = 0) in;\n"
                      "layout(binding = 0) readonly buffer A { uint a[]; };\n"
                      "layout(binding = 1) writeonly buffer B { uint b[]; };\n"
                      "layout(binding = 2) buffer C { uint c[]; };\n"
                      "layout(binding = 3) uniform U { uint k; vec4 v; } u;\n"
                      "layout(push_constant) uniform P { uint n; float f; } p;\n"
                      "void main() {\n"
                      "  uint i = gl_GlobalInvocationID.x;\n"
                      "  if (i < p.n) { b[i] = a[i] + u.k; c[i] += uint(p.f * u.v.x); }\n"
                      "}\n";
    vkc_kernel *k = glsl_ok(ctx, src, 0);
    vkc_kernel_info info = info_of(k);
    assert_int_equal(info.binding_count, 4);
    const vkc_access want[4] = {VKC_ACCESS_READ, VKC_ACCESS_WRITE, VKC_ACCESS_READ_WRITE,
                                VKC_ACCESS_READ};
    for (uint32_t i = 0; i < 4; ++i) {
        assert_int_equal(info.bindings[i].binding, i);
        assert_int_equal(info.bindings[i].access, want[i]);
        assert_int_equal(info.bindings[i].uniform, i == 3);
    }
    /* uniform block { uint k; vec4 v; }: std140 puts v at 16 */
    assert_int_equal(info.bindings[3].min_size, 32);
    assert_int_equal(info.bindings[3].array_stride, 0);
    const ty push[] = {T_UINT, T_FLOAT};
    assert_int_equal(info.push_constant_size, std430_end(push, 2, NULL));
    assert_string_equal(info.name, "test");
    VkPipeline p;
    VkPipelineLayout l;
    VkDescriptorSetLayout s;
    assert_int_equal(vkc_kernel_vk(k, &p, &l, &s), VKC_SUCCESS);
    assert_true(p != VK_NULL_HANDLE && l != VK_NULL_HANDLE && s != VK_NULL_HANDLE);
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    assert_int_equal(st.pipelines, 1);
    vkc_kernel_destroy(k);
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    assert_int_equal(st.pipelines, 0);
    vkc_test_assert_clean();
}

/* Variable-level NonWritable / NonReadable (a restrict-qualified whole block
 * in GLSL decorates members; a block with no members used is READ_WRITE). */
static void test_reflect_layouts(void **state)
{
    vkc_context *ctx = *state;
    static const ty cases[][6] = {
        {T_UINT},
        {T_VEC4, T_FLOAT},
        {T_UINT, T_FLOAT, T_VEC4},
        {T_FLOAT, T_VEC3, T_FLOAT, T_VEC2},
        {T_MAT4, T_VEC2},
        {T_VEC2, T_UINT, T_VEC3, T_MAT4, T_FLOAT},
    };
    static const int counts[] = {1, 2, 3, 4, 2, 5};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c) {
        char members[256], src[1024];
        glsl_members(members, sizeof(members), cases[c], counts[c]);
        /* The same members as a fixed-size storage block and as push constants. */
        snprintf(src, sizeof(src),
                 "#version 450\n"
                 "layout(local_size_x = 64) in;\n"
                 "layout(binding = 0) buffer S { %s } s;\n"
                 "layout(push_constant) uniform P { %s } p;\n"
                 "void main() { s.m0 = p.m0; }\n",
                 members, members);
        vkc_kernel *k = glsl_ok(ctx, src, 0);
        vkc_kernel_info info = info_of(k);
        uint32_t end = std430_end(cases[c], counts[c], NULL);
        assert_int_equal(info.binding_count, 1);
        assert_int_equal(info.bindings[0].min_size, end);
        assert_int_equal(info.bindings[0].array_stride, 0);
        assert_int_equal(info.push_constant_size, end);
        vkc_kernel_destroy(k);
    }
    /* No push constants at all. */
    vkc_kernel *k = glsl_ok(ctx,
                            "#version 450\nlayout(local_size_x = 1) in;\n"
                            "layout(binding = 0) buffer S { uint x; };\nvoid main() { x = 1u; }\n",
                            0);
    assert_int_equal(info_of(k).push_constant_size, 0);
    vkc_kernel_destroy(k);
    vkc_test_assert_clean();
}

static void test_reflect_runtime_arrays(void **state)
{
    vkc_context *ctx = *state;
    /* element types: uint, vec4, and a 32-byte struct */
    static const ty elem_struct[] = {T_VEC4, T_VEC2, T_UINT, T_FLOAT};
    uint32_t s_align;
    uint32_t s_end = std430_end(elem_struct, 4, &s_align);
    uint32_t s_stride = (s_end + s_align - 1) / s_align * s_align;
    assert_int_equal(s_stride, 32);
    char members[256], src[2048];
    glsl_members(members, sizeof(members), elem_struct, 4);
    snprintf(src, sizeof(src),
             "#version 450\n"
             "layout(local_size_x_id = 0) in;\n"
             "struct E { %s };\n"
             "layout(binding = 0) readonly buffer A { uint a[]; };\n"
             "layout(binding = 1) buffer B { uint count; vec4 v[]; };\n"
             "layout(binding = 2) writeonly buffer C { vec2 head; E e[]; };\n"
             "void main() {\n"
             "  uint i = gl_GlobalInvocationID.x;\n"
             "  v[i] = vec4(a[i]) + vec4(count);\n"
             "  e[i].m0 = v[i];\n"
             "}\n",
             members);
    vkc_kernel *k = glsl_ok(ctx, src, 0);
    vkc_kernel_info info = info_of(k);
    assert_int_equal(info.binding_count, 3);
    assert_int_equal(info.bindings[0].array_stride, ty_size[T_UINT]);
    assert_int_equal(info.bindings[0].min_size, 0);
    assert_int_equal(info.bindings[1].array_stride, ty_size[T_VEC4]);
    assert_int_equal(info.bindings[1].min_size, ty_size[T_UINT]);
    assert_int_equal(info.bindings[2].array_stride, s_stride);
    assert_int_equal(info.bindings[2].min_size, ty_size[T_VEC2]);
    assert_int_equal(info.bindings[0].access, VKC_ACCESS_READ);
    assert_int_equal(info.bindings[1].access, VKC_ACCESS_READ_WRITE);
    assert_int_equal(info.bindings[2].access, VKC_ACCESS_WRITE);
    vkc_kernel_destroy(k);
    vkc_test_assert_clean();
}

/* ---- the embedded shader and workgroup sizes ------------------------------------- */

static void test_embedded_add(void **state)
{
    vkc_context *ctx = *state;
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    const vkc_device_info *d = vkc_context_device(ctx);
    vkc_kernel *k = NULL;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size,
                                                          .name = "add"},
                                       &k),
                     VKC_SUCCESS);
    vkc_kernel_info info = info_of(k);
    assert_int_equal(info.binding_count, 3);
    assert_int_equal(info.bindings[0].access, VKC_ACCESS_READ);
    assert_int_equal(info.bindings[1].access, VKC_ACCESS_READ);
    assert_int_equal(info.bindings[2].access, VKC_ACCESS_WRITE);
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(info.bindings[i].array_stride, 4);
        assert_int_equal(info.bindings[i].min_size, 0);
        assert_false(info.bindings[i].uniform);
    }
    assert_int_equal(info.push_constant_size, 4);
    assert_int_equal(info.workgroup_size[0], f.default_workgroup_size);
    assert_int_equal(info.workgroup_size[1], 1);
    assert_int_equal(info.workgroup_size[2], 1);
    vkc_kernel_destroy(k);

    /* Overridden, and the largest the device allows. */
    uint32_t sizes[] = {1, 64,
                        d->max_workgroup_invocations < d->max_workgroup_size[0]
                            ? d->max_workgroup_invocations
                            : d->max_workgroup_size[0]};
    for (size_t i = 0; i < 3; ++i) {
        k = NULL;
        assert_int_equal(vkc_kernel_create(ctx,
                                           &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                              .spirv_size = test_shaders_add_size,
                                                              .workgroup_size = sizes[i]},
                                           &k),
                         VKC_SUCCESS);
        assert_int_equal(info_of(k).workgroup_size[0], sizes[i]);
        assert_string_equal(info_of(k).name, "kernel");
        vkc_kernel_destroy(k);
    }
    /* One more than the device allows. */
    vkc_test_quiet_errors(1);
    k = NULL;
    vkc_result r = vkc_kernel_create(ctx,
                                     &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                        .spirv_size = test_shaders_add_size,
                                                        .workgroup_size = sizes[2] + 1},
                                     &k);
    expect_fail(ctx, r, k, VKC_ERROR_LIMIT, "maxComputeWorkGroup");
    /* The spec constant of the workgroup size cannot be set directly. */
    vkc_spec_constant sc = {0, 32};
    r = vkc_kernel_create(ctx,
                          &(vkc_kernel_desc){.spirv = test_shaders_add,
                                             .spirv_size = test_shaders_add_size,
                                             .spec_constants = &sc,
                                             .spec_constant_count = 1},
                          &k);
    expect_fail(ctx, r, k, VKC_ERROR_INVALID_ARGUMENT, "workgroup_size");
    vkc_test_quiet_errors(0);
    vkc_test_assert_clean();
}

static void test_workgroup_fixed_and_spec(void **state)
{
    vkc_context *ctx = *state;
    const char *fixed = "#version 450\nlayout(local_size_x = 32, local_size_y = 2) in;\n"
                        "layout(binding = 0) buffer S { uint x[]; };\n"
                        "void main() { x[gl_LocalInvocationIndex] = 1u; }\n";
    vkc_kernel *k = glsl_ok(ctx, fixed, 0);
    vkc_kernel_info info = info_of(k);
    assert_int_equal(info.workgroup_size[0], 32);
    assert_int_equal(info.workgroup_size[1], 2);
    assert_int_equal(info.workgroup_size[2], 1);
    vkc_kernel_destroy(k);
    k = glsl_ok(ctx, fixed, 32); /* the same size is fine */
    vkc_kernel_destroy(k);
    vkc_test_quiet_errors(1);
    k = NULL;
    vkc_result r = vkc_kernel_create_glsl(
        ctx, &(vkc_glsl_desc){.source = fixed, .name = "fixed", .workgroup_size = 64}, &k);
    expect_fail(ctx, r, k, VKC_ERROR_INVALID_ARGUMENT, "local_size_x = 32");
    vkc_test_quiet_errors(0);

    /* User spec constants: one that sizes y, one used in the code. */
    const char *spec = "#version 450\n"
                       "layout(local_size_x_id = 0, local_size_y_id = 1) in;\n"
                       "layout(constant_id = 2) const uint SCALE = 1u;\n"
                       "layout(binding = 0) buffer S { uint x[]; };\n"
                       "void main() { x[gl_LocalInvocationIndex] = SCALE; }\n";
    vkc_spec_constant sc[] = {{1, 4}, {2, 7}};
    k = NULL;
    assert_int_equal(vkc_kernel_create_glsl(ctx,
                                            &(vkc_glsl_desc){.source = spec,
                                                             .workgroup_size = 16,
                                                             .spec_constants = sc,
                                                             .spec_constant_count = 2},
                                            &k),
                     VKC_SUCCESS);
    info = info_of(k);
    assert_int_equal(info.workgroup_size[0], 16);
    assert_int_equal(info.workgroup_size[1], 4);
    assert_string_equal(info.name, "glsl");
    vkc_kernel_destroy(k);
    vkc_test_assert_clean();
}

/* ---- bad modules ----------------------------------------------------------------------- */

static uint32_t *copy_add(size_t *size)
{
    *size = test_shaders_add_size;
    uint32_t *w = malloc(*size);
    assert_non_null(w);
    memcpy(w, test_shaders_add, *size);
    return w;
}

/* Create from words and expect failure (want < 0) or success. */
static void bad(vkc_context *ctx, const void *w, size_t size, const char *entry, vkc_result want,
                const char *text)
{
    vkc_kernel *k = (vkc_kernel *)(uintptr_t)1; /* must come back NULL */
    vkc_result r = vkc_kernel_create(
        ctx, &(vkc_kernel_desc){.spirv = w, .spirv_size = size, .entry = entry, .name = "bad"}, &k);
    if (want == VKC_SUCCESS) {
        assert_int_equal(r, VKC_SUCCESS);
        assert_int_equal(info_of(k).binding_count, 3);
        vkc_kernel_destroy(k);
        return;
    }
    expect_fail(ctx, r, k, want, text);
}

static void test_bad_spirv(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    vkc_kernel *k;
    size_t size;
    uint32_t *w = copy_add(&size);

    /* random bytes */
    uint64_t seed = 12345;
    uint32_t *rnd = malloc(size);
    for (size_t i = 0; i < size / 4; ++i)
        rnd[i] = (uint32_t)vkc_test_rand(&seed);
    bad(ctx, rnd, size, NULL, VKC_ERROR_INVALID_SPIRV, "invalid SPIR-V");
    /* random bytes after a valid magic */
    rnd[0] = 0x07230203u;
    bad(ctx, rnd, size, NULL, VKC_ERROR_INVALID_SPIRV, NULL);
    free(rnd);

    /* truncated: the header only, half, and one word short */
    bad(ctx, w, 20, NULL, VKC_ERROR_INVALID_SPIRV, NULL);
    bad(ctx, w, size / 8 * 4, NULL, VKC_ERROR_INVALID_SPIRV, NULL);
    bad(ctx, w, size - 4, NULL, VKC_ERROR_INVALID_SPIRV, NULL);
    bad(ctx, w, 8, NULL, VKC_ERROR_INVALID_SPIRV, NULL);

    /* odd byte size */
    bad(ctx, w, size - 1, NULL, VKC_ERROR_INVALID_SPIRV, "multiple of 4");
    bad(ctx, w, 0, NULL, VKC_ERROR_INVALID_SPIRV, "empty");

    /* wrong magic */
    w[0] = 0xdeadbeefu;
    bad(ctx, w, size, NULL, VKC_ERROR_INVALID_SPIRV, "magic");
    w[0] = test_shaders_add[0];

    /* wrong version: 2.0, and one newer than the device's Vulkan accepts */
    w[1] = 0x00020000u;
    bad(ctx, w, size, NULL, VKC_ERROR_INVALID_SPIRV, "version");
    w[1] = 0x00010700u;
    bad(ctx, w, size, NULL, VKC_ERROR_INVALID_SPIRV, NULL);
    w[1] = test_shaders_add[1];

    /* not a compute shader */
    bad(ctx, test_shaders_vertex, test_shaders_vertex_size, NULL, VKC_ERROR_INVALID_SPIRV,
        "vertex");
    /* no such entry point */
    bad(ctx, w, size, "nope", VKC_ERROR_INVALID_SPIRV, "\"nope\"");

    /* a byte-swapped module is still fine */
    for (size_t i = 0; i < size / 4; ++i)
        w[i] = __builtin_bswap32(w[i]);
    bad(ctx, w, size, NULL, VKC_SUCCESS, NULL);
    free(w);

    /* bad arguments */
    k = NULL;
    expect_fail(ctx, vkc_kernel_create(ctx, NULL, &k), k, VKC_ERROR_INVALID_ARGUMENT, NULL);
    expect_fail(ctx, vkc_kernel_create(ctx, &(vkc_kernel_desc){0}, &k), k,
                VKC_ERROR_INVALID_ARGUMENT, NULL);
    assert_int_equal(vkc_kernel_create(NULL, &(vkc_kernel_desc){0}, &k), VKC_ERROR_INVALID_HANDLE);
    expect_fail(ctx, vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){0}, &k), k,
                VKC_ERROR_INVALID_ARGUMENT, NULL);
    vkc_kernel_info info;
    assert_int_equal(vkc_kernel_info_get(NULL, &info), VKC_ERROR_INVALID_HANDLE);
    vkc_kernel_destroy(NULL);

    /* The context still works. */
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size},
                                       &k),
                     VKC_SUCCESS);
    vkc_kernel_destroy(k);
    vkc_test_quiet_errors(0);
    vkc_test_assert_clean();
}

static void expect_glsl_fail(vkc_context *ctx, const char *src, vkc_result want, const char *text)
{
    vkc_kernel *k = NULL;
    vkc_result r =
        vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = src, .name = "unsupported"}, &k);
    expect_fail(ctx, r, k, want, text);
}

static void test_unsupported_interfaces(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    expect_glsl_fail(ctx,
                     "#version 450\nlayout(local_size_x = 1) in;\n"
                     "layout(set = 1, binding = 0) buffer S { uint x; };\n"
                     "void main() { x = 1u; }\n",
                     VKC_ERROR_UNSUPPORTED, "set 1");
    expect_glsl_fail(ctx,
                     "#version 450\nlayout(local_size_x = 1) in;\n"
                     "layout(binding = 0) buffer A { uint a; };\n"
                     "layout(binding = 2) buffer C { uint c; };\n"
                     "void main() { a = c; }\n",
                     VKC_ERROR_UNSUPPORTED, "binding 1 is missing");
    expect_glsl_fail(ctx,
                     "#version 450\nlayout(local_size_x = 1) in;\n"
                     "layout(binding = 0, r32ui) uniform uimage1D img;\n"
                     "void main() { imageStore(img, 0, uvec4(1u)); }\n",
                     VKC_ERROR_UNSUPPORTED, "buffers only");

    /* A capability the device lacks: first one of the optional features
     * vkc_context_device() says is missing; if it has them all, 64-bit
     * atomics on buffers, which vkc never enables. */
    const vkc_device_info *d = vkc_context_device(ctx);
    const char *src, *cap;
    if (!d->shader_float64) {
        cap = "Float64";
        src = "#version 450\nlayout(local_size_x = 1) in;\n"
              "layout(binding = 0) buffer S { double x; };\nvoid main() { x *= 2.0; }\n";
    } else if (!d->shader_int64) {
        cap = "Int64";
        src = "#version 450\n#extension GL_ARB_gpu_shader_int64 : require\n"
              "layout(local_size_x = 1) in;\n"
              "layout(binding = 0) buffer S { uint64_t x; };\nvoid main() { x += 1ul; }\n";
    } else {
        printf("note: %s has float64 and int64; testing Int64Atomics, which vkc does not "
               "enable\n",
               d->name);
        cap = "Int64Atomics";
        src = "#version 450\n#extension GL_EXT_shader_atomic_int64 : require\n"
              "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
              "layout(local_size_x = 1) in;\n"
              "layout(binding = 0) buffer S { uint64_t x; };\n"
              "void main() { atomicAdd(x, 1ul); }\n";
    }
    expect_glsl_fail(ctx, src, VKC_ERROR_UNSUPPORTED, cap);
    vkc_test_quiet_errors(0);
    vkc_test_assert_clean();
}

static void test_glsl_compile_error(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    /* The error is on line 5. */
    const char *src = "#version 450\n"
                      "layout(local_size_x = 1) in;\n"
                      "layout(binding = 0) buffer S { uint x; };\n"
                      "void main() {\n"
                      "  x = undeclared_thing;\n"
                      "}\n";
    const char *defines[] = {"UNUSED=3", "FLAG"};
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(
        ctx,
        &(vkc_glsl_desc){
            .source = src, .name = "broken_shader", .defines = defines, .define_count = 2},
        &k);
    expect_fail(ctx, r, k, VKC_ERROR_COMPILE, "broken_shader");
    const char *msg = vkc_context_last_error(ctx);
    if (!strstr(msg, ":5:") || !strstr(msg, "undeclared_thing"))
        fail_msg("the message does not point at line 5: %s", msg);
    vkc_test_quiet_errors(0);
    vkc_test_assert_clean();
}

static void test_glsl_defines_and_entry(void **state)
{
    vkc_context *ctx = *state;
    const char *src = "#version 450\n"
                      "layout(local_size_x = WG) in;\n"
                      "layout(binding = 0) buffer S { uint x[]; };\n"
                      "#ifdef WITH_PUSH\n"
                      "layout(push_constant) uniform P { uvec4 a; uint b; } p;\n"
                      "#define VAL p.b\n"
                      "#else\n"
                      "#define VAL 1u\n"
                      "#endif\n"
                      "void my_kernel() { x[gl_GlobalInvocationID.x] = VAL; }\n";
    const char *d1[] = {"WG=16"};
    const char *d2[] = {"WG=8", "WITH_PUSH"};
    vkc_kernel *k = NULL;
    assert_int_equal(
        vkc_kernel_create_glsl(
            ctx,
            &(vkc_glsl_desc){.source = src, .defines = d1, .define_count = 1, .entry = "my_kernel"},
            &k),
        VKC_SUCCESS);
    assert_int_equal(info_of(k).workgroup_size[0], 16);
    assert_int_equal(info_of(k).push_constant_size, 0);
    vkc_kernel_destroy(k);
    assert_int_equal(
        vkc_kernel_create_glsl(
            ctx,
            &(vkc_glsl_desc){.source = src, .defines = d2, .define_count = 2, .entry = "my_kernel"},
            &k),
        VKC_SUCCESS);
    assert_int_equal(info_of(k).workgroup_size[0], 8);
    static const ty push[] = {T_VEC4, T_UINT};
    assert_int_equal(info_of(k).push_constant_size, std430_end(push, 2, NULL));
    vkc_kernel_destroy(k);
    vkc_test_assert_clean();
}

/* ---- files and caches --------------------------------------------------------------- */

static void test_file_path(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    vkc_kernel *k = NULL;
    vkc_result r =
        vkc_kernel_create(ctx, &(vkc_kernel_desc){.path = "/nonexistent/dir/kernel.spv"}, &k);
    expect_fail(ctx, r, k, VKC_ERROR_IO, "/nonexistent/dir/kernel.spv");
    vkc_test_quiet_errors(0);

    char dir[64], path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/add.spv", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(test_shaders_add, 1, test_shaders_add_size, f), test_shaders_add_size);
    fclose(f);
    assert_int_equal(vkc_kernel_create(ctx, &(vkc_kernel_desc){.path = path}, &k), VKC_SUCCESS);
    vkc_kernel_info info = info_of(k);
    assert_int_equal(info.binding_count, 3);
    assert_string_equal(info.name, "add.spv");
    vkc_kernel_destroy(k);
    remove_dir(dir);
    vkc_test_assert_clean();
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        h ^= ((const unsigned char *)p)[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(n > 0);
    void *b = malloc((size_t)n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return b;
}

static void write_whole(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

static vkc_stats stats_of(vkc_context *ctx)
{
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    return st;
}

static const char *cache_src = "#version 450\n"
                               "layout(local_size_x_id = 0) in;\n"
                               "layout(binding = 0) buffer S { uint x[]; };\n"
                               "layout(push_constant) uniform P { uint n; } p;\n"
                               "void main() { if (gl_GlobalInvocationID.x < p.n)\n"
                               "  x[gl_GlobalInvocationID.x] *= 3u; }\n";

static void test_spirv_cache(void **state)
{
    (void)state;
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    g_cache_dir = dir;
    vkc_test_validation_reset();

    vkc_context *ctx = ctx_create();
    vkc_kernel *a = glsl_ok(ctx, cache_src, 0);
    vkc_stats st = stats_of(ctx);
    assert_int_equal(st.shader_compiles, 1);
    assert_int_equal(st.spirv_cache_hits, 0);
    vkc_kernel *b = glsl_ok(ctx, cache_src, 0);
    st = stats_of(ctx);
    assert_int_equal(st.shader_compiles, 1);
    assert_int_equal(st.spirv_cache_hits, 1);
    assert_int_equal(info_of(a).push_constant_size, info_of(b).push_constant_size);
    vkc_kernel_destroy(a);
    vkc_kernel_destroy(b);
    vkc_test_context_destroy(ctx);

    char spv_dir[128];
    snprintf(spv_dir, sizeof(spv_dir), "%s/spirv", dir);
    char spv_file[512];
    assert_int_equal(count_files(spv_dir, "", spv_file, sizeof(spv_file)) >= 1, 1);

    /* A second context with the same directory compiles nothing. */
    ctx = ctx_create();
    a = glsl_ok(ctx, cache_src, 0);
    st = stats_of(ctx);
    assert_int_equal(st.shader_compiles, 0);
    assert_int_equal(st.spirv_cache_hits, 1);
    assert_int_equal(info_of(a).binding_count, 1);
    vkc_kernel_destroy(a);
    vkc_test_context_destroy(ctx);

    /* A corrupt SPIR-V file is ignored with a warning and compiled again. */
    FILE *f = fopen(spv_file, "r+b");
    assert_non_null(f);
    fseek(f, 40, SEEK_SET);
    fwrite("garbage!garbage!", 1, 16, f);
    fclose(f);
    g_cache_warnings = 0;
    ctx = ctx_create();
    a = glsl_ok(ctx, cache_src, 0);
    st = stats_of(ctx);
    assert_int_equal(st.shader_compiles, 1);
    assert_int_equal(st.spirv_cache_hits, 0);
    assert_true(g_cache_warnings >= 1);
    vkc_kernel_destroy(a);
    vkc_test_context_destroy(ctx);

    g_cache_dir = NULL;
    remove_dir(dir);
}

/* x[i] = x[i] * MUL over n elements, as kernel k; returns whether every
 * element came out as the CPU says. */
static bool multiplies_by(vkc_context *ctx, vkc_kernel *k, uint32_t mul)
{
    enum { N = 1000 };
    uint32_t data[N];
    for (uint32_t i = 0; i < N; ++i)
        data[i] = i + 1;
    vkc_buffer *b = NULL;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = sizeof(data)}, &b),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(b, 0, data, sizeof(data)), VKC_SUCCESS);
    uint32_t n = N;
    vkc_arg arg = {.buffer = b};
    assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                                            .args = &arg,
                                                            .arg_count = 1,
                                                            .push = &n,
                                                            .push_size = sizeof(n),
                                                            .groups = {(N + 63) / 64, 1, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(b, 0, data, sizeof(data)), VKC_SUCCESS);
    vkc_buffer_destroy(b);
    bool ok = true;
    for (uint32_t i = 0; i < N; ++i)
        ok = ok && data[i] == (i + 1) * mul;
    return ok;
}

/* Two sources that differ only in their multiplier: 3 (cache_src) and 5. */
static const char *cache_src5 = "#version 450\n"
                                "layout(local_size_x_id = 0) in;\n"
                                "layout(binding = 0) buffer S { uint x[]; };\n"
                                "layout(push_constant) uniform P { uint n; } p;\n"
                                "void main() { if (gl_GlobalInvocationID.x < p.n)\n"
                                "  x[gl_GlobalInvocationID.x] *= 5u; }\n";

/* Compile both in a fresh context; check each multiplies right, and how
 * many came from the disk cache and how many warnings the cache gave. */
static void compile_both(unsigned want_hits, unsigned want_warnings, const char *want_text)
{
    g_cache_warnings = 0;
    g_cache_warning[0] = '\0';
    vkc_context *ctx = ctx_create();
    vkc_kernel *k3 = glsl_ok(ctx, cache_src, 64);
    vkc_kernel *k5 = glsl_ok(ctx, cache_src5, 64);
    assert_true(multiplies_by(ctx, k3, 3));
    assert_true(multiplies_by(ctx, k5, 5));
    vkc_stats st = stats_of(ctx);
    assert_int_equal(st.spirv_cache_hits, want_hits);
    assert_int_equal(st.shader_compiles, 2 - want_hits);
    assert_int_equal(g_cache_warnings, want_warnings);
    if (want_text && !strstr(g_cache_warning, want_text))
        fail_msg("cache warning lacks \"%s\": %s", want_text, g_cache_warning);
    vkc_kernel_destroy(k3);
    vkc_kernel_destroy(k5);
    vkc_test_context_destroy(ctx);
}

/* Entries are tied to their key: two entries swapped on disk, one cut
 * short and one foreign file are each ignored with a warning, compiled
 * again and written over, and the kernels compute the right thing. */
static void test_spirv_cache_swapped(void **state)
{
    (void)state;
    char dir[64], spv_dir[128];
    make_temp_dir(dir, sizeof(dir));
    g_cache_dir = dir;
    snprintf(spv_dir, sizeof(spv_dir), "%s/spirv", dir);
    vkc_test_validation_reset();

    compile_both(0, 0, NULL);
    assert_int_equal(count_files(spv_dir, "", NULL, 0), 2);
    compile_both(2, 0, NULL);

    /* Swap the two files: each now holds the other's (valid) module. */
    char name[2][512];
    DIR *d = opendir(spv_dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && n < 2)
            snprintf(name[n++], sizeof(name[0]), "%s/%s", spv_dir, e->d_name);
    closedir(d);
    assert_int_equal(n, 2);
    size_t size[2];
    void *body[2] = {read_whole(name[0], &size[0]), read_whole(name[1], &size[1])};
    write_whole(name[0], body[1], size[1]);
    write_whole(name[1], body[0], size[0]);
    compile_both(0, 2, "made from another key");
    compile_both(2, 0, NULL); /* rebuilt and overwritten */

    /* One cut short (the other left alone), then one replaced by a file
     * that is no entry at all: a bare SPIR-V module, as older vkc wrote. */
    write_whole(name[0], body[0], size[0] / 2);
    compile_both(1, 1, "truncated");
    compile_both(2, 0, NULL);
    write_whole(name[1], test_shaders_add, test_shaders_add_size);
    compile_both(1, 1, "bad magic");
    compile_both(2, 0, NULL);

    free(body[0]);
    free(body[1]);
    g_cache_dir = NULL;
    remove_dir(dir);
}

static void test_pipeline_cache(void **state)
{
    (void)state;
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    g_cache_dir = dir;
    vkc_test_validation_reset();

    vkc_context *ctx = ctx_create();
    assert_int_equal(stats_of(ctx).pipeline_cache_hits, 0);
    vkc_kernel *k = NULL;
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size},
                                       &k),
                     VKC_SUCCESS);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
    char file[512];
    assert_int_equal(count_files(dir, "pipelines-", file, sizeof(file)), 1);

    /* Reloaded by a new context. */
    g_cache_warnings = 0;
    ctx = ctx_create();
    assert_true(stats_of(ctx).pipeline_cache_hits >= 1);
    assert_int_equal(g_cache_warnings, 0);
    assert_int_equal(vkc_kernel_create(ctx,
                                       &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                          .spirv_size = test_shaders_add_size},
                                       &k),
                     VKC_SUCCESS);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);

    /* Corrupt it five ways: a flipped byte in the driver's data, a file that
     * is not a cache, a truncated one, an older format's entry, and a good
     * entry whose stored key names another driver (as a file copied from
     * another machine would). Each is ignored with a warning; the context
     * still builds pipelines and writes a good file again. */
    vkc_context *ctx_keep = ctx_create();
    for (int mode = 0; mode < 5; ++mode) {
        if (mode == 4) {
            size_t size = 0;
            uint8_t *b = read_whole(file, &size);
            uint64_t head[4];
            memcpy(head, b, sizeof(head));
            assert_true(head[3] > 16 && sizeof(head) + head[3] + head[1] == size);
            b[sizeof(head) + head[3] - 1] ^= 1; /* the key's last byte: driverUUID */
            head[2] = fnv1a(0xcbf29ce484222325ull, b + sizeof(head), size - sizeof(head));
            memcpy(b, head, sizeof(head));
            write_whole(file, b, size);
            free(b);
        }
        FILE *f = fopen(file, mode == 0 ? "r+b" : mode == 4 ? "rb" : "wb");
        assert_non_null(f);
        if (mode == 0) {
            /* the last byte: inside the driver's data */
            fseek(f, -1, SEEK_END);
            long at = ftell(f);
            int c = fgetc(f);
            fseek(f, at, SEEK_SET);
            fputc(c ^ 0xff, f);
        } else if (mode == 1) {
            fputs("this is not a pipeline cache at all, just some text long enough", f);
        } else if (mode == 2) {
            fwrite("VKCP", 1, 4, f);
        } else if (mode == 3) {
            /* An older format's entry, well-formed and with the right checksum,
             * for this very device: its header is not this format's. */
            const vkc_device_info *d = vkc_context_device(ctx_keep);
            VkPipelineCacheHeaderVersionOne vh = {sizeof(vh), VK_PIPELINE_CACHE_HEADER_VERSION_ONE,
                                                  d->vendor_id, d->device_id};
            memcpy(vh.pipelineCacheUUID, d->pipeline_cache_uuid, VK_UUID_SIZE);
            uint64_t head[4] = {0, sizeof(vh), fnv1a(0xcbf29ce484222325ull, &vh, sizeof(vh)), 0};
            memcpy(head, "VKCPIPE1", 8);
            fwrite(head, 1, sizeof(head), f);
            fwrite(&vh, 1, sizeof(vh), f);
        }
        fclose(f);
        g_cache_warnings = 0;
        ctx = ctx_create();
        assert_int_equal(stats_of(ctx).pipeline_cache_hits, 0);
        assert_int_equal(g_cache_warnings, 1);
        if (mode == 4 && !strstr(g_cache_warning, "made from another key"))
            fail_msg("pipeline cache warning: %s", g_cache_warning);
        assert_int_equal(vkc_kernel_create(ctx,
                                           &(vkc_kernel_desc){.spirv = test_shaders_add,
                                                              .spirv_size = test_shaders_add_size},
                                           &k),
                         VKC_SUCCESS);
        vkc_kernel_destroy(k);
        vkc_test_context_destroy(ctx);
        ctx = ctx_create();
        assert_true(stats_of(ctx).pipeline_cache_hits >= 1);
        vkc_test_context_destroy(ctx);
    }
    vkc_test_context_destroy(ctx_keep);
    g_cache_dir = NULL;
    remove_dir(dir);
}

static void test_disk_cache_off(void **state)
{
    (void)state;
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    g_cache_dir = dir;
    g_disk_cache = VKC_OFF;
    vkc_test_validation_reset();
    vkc_context *ctx = ctx_create();
    vkc_kernel *k = glsl_ok(ctx, cache_src, 0);
    vkc_kernel_destroy(k);
    k = glsl_ok(ctx, cache_src, 0); /* the memory cache still works */
    assert_int_equal(stats_of(ctx).spirv_cache_hits, 1);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
    assert_int_equal(count_files(dir, "", NULL, 0), 0);
    g_disk_cache = VKC_DEFAULT;
    g_cache_dir = NULL;
    remove_dir(dir);
}

/* ---- threads ------------------------------------------------------------------------ */

typedef struct thread_arg {
    vkc_context *ctx;
    int index;
    int failures;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 3; ++i) {
        char src[512];
        /* Half the threads share sources (cache races), half have their own. */
        snprintf(src, sizeof(src),
                 "#version 450\nlayout(local_size_x_id = 0) in;\n"
                 "layout(binding = 0) buffer S { uint x[]; };\n"
                 "void main() { x[gl_GlobalInvocationID.x] += %du; }\n",
                 (a->index % 2) ? i : 100 * a->index + i);
        vkc_kernel *k = NULL;
        if (vkc_kernel_create_glsl(a->ctx, &(vkc_glsl_desc){.source = src}, &k) != VKC_SUCCESS)
            a->failures++;
        vkc_kernel *e = NULL;
        if (vkc_kernel_create(
                a->ctx,
                &(vkc_kernel_desc){.spirv = test_shaders_add, .spirv_size = test_shaders_add_size},
                &e) != VKC_SUCCESS)
            a->failures++;
        vkc_kernel_destroy(k);
        vkc_kernel_destroy(e);
    }
    return NULL;
}

static void test_threads(void **state)
{
    vkc_context *ctx = *state;
    vkc_stats before = stats_of(ctx);
    enum { N = 4 };
    pthread_t t[N];
    thread_arg args[N];
    for (int i = 0; i < N; ++i) {
        args[i] = (thread_arg){ctx, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, &args[i]), 0);
    }
    for (int i = 0; i < N; ++i) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    vkc_stats after = stats_of(ctx);
    assert_int_equal(after.pipelines, 0);
    /* every GLSL creation is either a compile or a cache hit */
    assert_int_equal((after.shader_compiles - before.shader_compiles) +
                         (after.spirv_cache_hits - before.spirv_cache_hits),
                     N * 3);
    vkc_test_assert_clean();
}

/* A kernel left alive is destroyed with its context. */
static void test_leftover_kernel(void **state)
{
    (void)state;
    vkc_test_validation_reset();
    vkc_context *ctx = ctx_create();
    glsl_ok(ctx, cache_src, 0);
    vkc_test_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest group[] = {
        cmocka_unit_test(test_reflect_access),
        cmocka_unit_test(test_reflect_layouts),
        cmocka_unit_test(test_reflect_runtime_arrays),
        cmocka_unit_test(test_embedded_add),
        cmocka_unit_test(test_workgroup_fixed_and_spec),
        cmocka_unit_test(test_bad_spirv),
        cmocka_unit_test(test_unsupported_interfaces),
        cmocka_unit_test(test_glsl_compile_error),
        cmocka_unit_test(test_glsl_defines_and_entry),
        cmocka_unit_test(test_file_path),
        cmocka_unit_test(test_threads),
    };
    const struct CMUnitTest alone[] = {
        cmocka_unit_test(test_spirv_cache),     cmocka_unit_test(test_spirv_cache_swapped),
        cmocka_unit_test(test_pipeline_cache),  cmocka_unit_test(test_disk_cache_off),
        cmocka_unit_test(test_leftover_kernel),
    };
    int fails = cmocka_run_group_tests_name("kernel", group, vkc_test_setup, vkc_test_teardown);
    fails += cmocka_run_group_tests_name("kernel caches", alone, NULL, NULL);
    return fails;
}
