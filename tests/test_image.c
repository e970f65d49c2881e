/* Images: creation and format support, transfers, kernels on storage and
 * sampled images, samplers, hazards and layout transitions, wrapping with
 * ownership transfer, bad input. Results are checked against CPU
 * references; every test ends with no validation message and nothing
 * leaked (the layer reports leaks at context destruction). */
#include "vkc_internal.h"
#include "vkc_test.h"

#include "test_shaders.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vkc_format all_formats[] = {
    VKC_FORMAT_R8_UNORM, VKC_FORMAT_RG8_UNORM, VKC_FORMAT_RGBA8_UNORM, VKC_FORMAT_RGBA8_SRGB,
    VKC_FORMAT_R16F,     VKC_FORMAT_RGBA16F,   VKC_FORMAT_R32F,        VKC_FORMAT_RG32F,
    VKC_FORMAT_RGBA32F,  VKC_FORMAT_R32UI,     VKC_FORMAT_R32I,
};

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; ++i)
        p[i] = (uint8_t)(vkc_test_rand(&s) >> 56);
}

/* Half floats: random bytes may make NaNs, whose payload a copy keeps bit
 * for bit anyway; transfers are copies, so any pattern must come back. */
static void round_trip(vkc_context *ctx, const vkc_image_desc *d, const vkc_image_region *rg,
                       uint64_t seed)
{
    vkc_image *img;
    vkc_result r = vkc_image_create(ctx, d, &img);
    if (r == VKC_ERROR_UNSUPPORTED) {
        printf("  %s: %s (skipped)\n", vkc_format_name(d->format), vkc_context_last_error(ctx));
        return;
    }
    assert_int_equal(r, VKC_SUCCESS);
    uint64_t n = vkc_image_region_size(img, rg);
    assert_true(n > 0);
    uint8_t *up = malloc(n), *down = malloc(n);
    fill_random(up, n, seed);
    memset(down, 0xcd, n);
    assert_int_equal(vkc_image_upload(img, rg, up, n), VKC_SUCCESS);
    assert_int_equal(vkc_image_download(img, rg, down, n), VKC_SUCCESS);
    if (memcmp(up, down, n))
        fail_msg("%s: round trip differs", vkc_format_name(d->format));
    free(up);
    free(down);
    vkc_image_destroy(img);
}

static void test_round_trip_formats(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    for (size_t i = 0; i < sizeof(all_formats) / sizeof(all_formats[0]); ++i) {
        vkc_format f = all_formats[i];
        round_trip(ctx,
                   &(vkc_image_desc){.format = f,
                                     .width = 37,
                                     .height = 19,
                                     .usage = VKC_IMAGE_USAGE_SAMPLED,
                                     .name = vkc_format_name(f)},
                   NULL, 1 + i);
        vkc_image_info info;
        vkc_image *img;
        assert_int_equal(vkc_image_create(ctx, &(vkc_image_desc){.format = f, .width = 4}, &img),
                         VKC_SUCCESS);
        assert_int_equal(vkc_image_info_get(img, &info), VKC_SUCCESS);
        assert_int_equal(info.texel_size, vkc_format_texel_size(f));
        assert_int_equal(info.height, 1);
        assert_true(info.usage & VKC_IMAGE_USAGE_SAMPLED);
        assert_int_equal(!!(info.usage & VKC_IMAGE_USAGE_STORAGE), f != VKC_FORMAT_RGBA8_SRGB);
        vkc_image_destroy(img);
    }
    vkc_test_context_destroy(ctx);
}

/* Regions: a box inside mip 2 of one layer of an array; a slab of a 3D
 * image; an image larger than half the staging ring (chunks). The rest of
 * the image keeps what was there. */
static void test_regions(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    round_trip(
        ctx,
        &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY,
                          .format = VKC_FORMAT_RGBA16F,
                          .width = 64,
                          .height = 40,
                          .depth_or_layers = 5,
                          .mip_levels = 4},
        &(vkc_image_region){
            .mip = 2, .base_layer = 1, .layer_count = 3, .x = 3, .y = 2, .width = 9, .height = 7},
        11);
    round_trip(ctx,
               &(vkc_image_desc){.type = VKC_IMAGE_3D,
                                 .format = VKC_FORMAT_R32F,
                                 .width = 17,
                                 .height = 9,
                                 .depth_or_layers = 13,
                                 .mip_levels = 2},
               &(vkc_image_region){.z = 4, .depth = 6}, 12);
    /* 1400 x 1400 x 16 bytes = 31 MB: four chunks of the 8 MB halves. */
    round_trip(ctx, &(vkc_image_desc){.format = VKC_FORMAT_RGBA32F, .width = 1400, .height = 1400},
               NULL, 13);

    /* Writing a sub-box leaves the rest alone. */
    vkc_image *img;
    assert_int_equal(
        vkc_image_create(
            ctx,
            &(vkc_image_desc){.format = VKC_FORMAT_R32UI, .width = 8, .height = 8, .mip_levels = 2},
            &img),
        VKC_SUCCESS);
    uint32_t full[64], box[6], back[64];
    for (int i = 0; i < 64; ++i)
        full[i] = (uint32_t)i;
    for (int i = 0; i < 6; ++i)
        box[i] = 1000u + (uint32_t)i;
    assert_int_equal(vkc_image_upload(img, NULL, full, sizeof(full)), VKC_SUCCESS);
    vkc_image_region sub = {.x = 5, .y = 2, .width = 3, .height = 2};
    assert_int_equal(vkc_image_upload(img, &sub, box, sizeof(box)), VKC_SUCCESS);
    assert_int_equal(vkc_image_download(img, NULL, back, sizeof(back)), VKC_SUCCESS);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
            bool in = x >= 5 && y >= 2 && y < 4;
            uint32_t want = in ? 1000u + (uint32_t)((y - 2) * 3 + (x - 5)) : (uint32_t)(y * 8 + x);
            assert_int_equal(back[y * 8 + x], want);
        }
    /* Mip 1 is 4x4 and separate from mip 0. */
    assert_int_equal(vkc_image_region_size(img, &(vkc_image_region){.mip = 1}), 64);
    vkc_image_destroy(img);
    vkc_test_context_destroy(ctx);
}

static void test_clear(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_image *img;
    assert_int_equal(vkc_image_create(ctx,
                                      &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY,
                                                        .format = VKC_FORMAT_RGBA32F,
                                                        .width = 6,
                                                        .height = 5,
                                                        .depth_or_layers = 3,
                                                        .mip_levels = 2},
                                      &img),
                     VKC_SUCCESS);
    vkc_clear_value zero = {{0}}, v = {.f32 = {0.25f, -1.5f, 3.0f, 1.0f}};
    assert_int_equal(vkc_image_clear(img, NULL, &zero), VKC_SUCCESS);
    assert_int_equal(
        vkc_image_clear(img, &(vkc_image_range){.base_layer = 1, .layer_count = 1, .mip_count = 1},
                        &v),
        VKC_SUCCESS);
    float back[6 * 5 * 4 * 3];
    assert_int_equal(vkc_image_download(img, NULL, back, sizeof(back)), VKC_SUCCESS);
    for (int l = 0; l < 3; ++l)
        for (int i = 0; i < 30; ++i)
            for (int c = 0; c < 4; ++c)
                assert_true(back[(l * 30 + i) * 4 + c] == (l == 1 ? v.f32[c] : 0.0f));
    /* Mip 1 of layer 1 was not cleared to v. */
    float m1[3 * 2 * 4];
    assert_int_equal(
        vkc_image_download(img, &(vkc_image_region){.mip = 1, .base_layer = 1, .layer_count = 1},
                           m1, sizeof(m1)),
        VKC_SUCCESS);
    for (int i = 0; i < 24; ++i)
        assert_true(m1[i] == 0.0f);
    vkc_image_destroy(img);
    vkc_test_context_destroy(ctx);
}

/* VKC_TEST_DROP_BARRIERS=1 (with VKC_VALIDATION=0): the proof mode of the
 * hazard test, run on a GPU that overlaps dispatches (tools/h200-suite.sh). */
static bool drop_barriers;

static vkc_context *hazard_context(void)
{
    drop_barriers = getenv("VKC_TEST_DROP_BARRIERS") != NULL;
    if (!drop_barriers)
        return vkc_test_context_create(NULL);
    /* Without barriers the synchronization validation would rightly
     * complain: this mode runs without the layer. */
    vkc_context_desc d = vkc_test_desc();
    d.validation = VKC_OFF;
    vkc_context *ctx;
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_SUCCESS);
    ctx->test_drop_barriers = true;
    return ctx;
}

#define KERNEL(ctx, name) make_kernel(ctx, test_shaders_##name, test_shaders_##name##_size, #name)

static vkc_kernel *make_kernel(vkc_context *ctx, const uint32_t *words, size_t size,
                               const char *name)
{
    vkc_kernel *k;
    vkc_result r = vkc_kernel_create(
        ctx, &(vkc_kernel_desc){.spirv = words, .spirv_size = size, .name = name}, &k);
    if (r != VKC_SUCCESS)
        fail_msg("kernel %s: %s", name, vkc_context_last_error(ctx));
    return k;
}

static vkc_image *image(vkc_context *ctx, const vkc_image_desc *d)
{
    vkc_image *img;
    vkc_result r = vkc_image_create(ctx, d, &img);
    if (r != VKC_SUCCESS)
        fail_msg("image: %s", vkc_context_last_error(ctx));
    return img;
}

static uint32_t groups(uint32_t n, uint32_t g)
{
    return (n + g - 1) / g;
}

/* img_sample over n coordinates: out[i] = textureLod(img with sm, coords[i], lod). */
static void run_sample(vkc_context *ctx, vkc_kernel *k, vkc_image *img, vkc_sampler *sm,
                       vkc_buffer *coords, vkc_buffer *outb, uint32_t n, float lod)
{
    struct {
        uint32_t n;
        float lod;
    } p = {n, lod};
    vkc_arg args[3] = {{.image = img, .sampler = sm}, {.buffer = coords}, {.buffer = outb}};
    assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                                            .args = args,
                                                            .arg_count = 3,
                                                            .push = &p,
                                                            .push_size = sizeof(p),
                                                            .groups = {groups(n, 64), 1, 1}}),
                     VKC_SUCCESS);
}

/* Reflection reports each kind, its dimensionality and format. */
static void test_reflection(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_kernel *k = KERNEL(ctx, img_affine);
    vkc_kernel_info ki;
    assert_int_equal(vkc_kernel_info_get(k, &ki), VKC_SUCCESS);
    assert_int_equal(ki.binding_count, 2);
    assert_int_equal(ki.bindings[0].kind, VKC_BINDING_STORAGE_IMAGE);
    assert_int_equal(ki.bindings[0].format, VKC_FORMAT_RGBA32F);
    assert_int_equal(ki.bindings[0].access, VKC_ACCESS_READ);
    assert_int_equal(ki.bindings[1].access, VKC_ACCESS_WRITE);
    assert_int_equal(ki.bindings[0].image_type, VKC_IMAGE_2D);
    vkc_kernel_destroy(k);
    k = KERNEL(ctx, img_sample_sep);
    assert_int_equal(vkc_kernel_info_get(k, &ki), VKC_SUCCESS);
    assert_int_equal(ki.binding_count, 4);
    assert_int_equal(ki.bindings[0].kind, VKC_BINDING_SAMPLED_IMAGE);
    assert_int_equal(ki.bindings[0].image_type, VKC_IMAGE_2D_ARRAY);
    assert_int_equal(ki.bindings[1].kind, VKC_BINDING_SAMPLER);
    assert_int_equal(ki.bindings[2].kind, VKC_BINDING_BUFFER);
    vkc_kernel_destroy(k);
    k = KERNEL(ctx, img_fetch);
    assert_int_equal(vkc_kernel_info_get(k, &ki), VKC_SUCCESS);
    assert_int_equal(ki.bindings[0].kind, VKC_BINDING_COMBINED_IMAGE_SAMPLER);
    assert_int_equal(ki.bindings[1].format, VKC_FORMAT_R32UI);
    assert_int_equal(ki.bindings[1].access, VKC_ACCESS_WRITE);
    vkc_kernel_destroy(k);
    k = KERNEL(ctx, img_coords3d);
    assert_int_equal(vkc_kernel_info_get(k, &ki), VKC_SUCCESS);
    assert_int_equal(ki.bindings[0].image_type, VKC_IMAGE_3D);
    assert_int_equal(ki.bindings[0].format, VKC_FORMAT_R32F);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
}

/* A kernel reads one storage image and writes another; a CPU reference. */
static void test_storage(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t w = 53, h = 29;
    vkc_image *src = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_RGBA32F,
                                                  .width = w,
                                                  .height = h,
                                                  .usage = VKC_IMAGE_USAGE_STORAGE,
                                                  .name = "src"});
    vkc_image *dst = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_RGBA32F,
                                                  .width = w,
                                                  .height = h,
                                                  .usage = VKC_IMAGE_USAGE_STORAGE,
                                                  .name = "dst"});
    float *in = malloc(w * h * 16), *out = malloc(w * h * 16);
    uint64_t seed = 5;
    for (uint32_t i = 0; i < w * h * 4; ++i)
        in[i] = (float)(vkc_test_rand(&seed) % 1000) / 8.0f;
    assert_int_equal(vkc_image_upload(src, NULL, in, w * h * 16), VKC_SUCCESS);
    vkc_kernel *k = KERNEL(ctx, img_affine);
    struct {
        float a, b;
    } p = {2.0f, 0.5f};
    vkc_arg args[2] = {{.image = src}, {.image = dst}};
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    assert_int_equal(
        vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                 .args = args,
                                                 .arg_count = 2,
                                                 .push = &p,
                                                 .push_size = sizeof(p),
                                                 .groups = {groups(w, 8), groups(h, 8), 1}}),
        VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    assert_int_equal(vkc_image_download(dst, NULL, out, w * h * 16), VKC_SUCCESS);
    for (uint32_t i = 0; i < w * h * 4; ++i)
        if (out[i] != in[i] * 2.0f + 0.5f) /* exact: multiples of 1/8 below 2^20 */
            fail_msg("texel %u: %f, want %f", i / 4, out[i], in[i] * 2.0f + 0.5f);
    /* Immediate mode: the same dispatch from dst back into src. */
    vkc_arg back[2] = {{.image = dst}, {.image = src}};
    assert_int_equal(
        vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                               .args = back,
                                               .arg_count = 2,
                                               .push = &p,
                                               .push_size = sizeof(p),
                                               .groups = {groups(w, 8), groups(h, 8), 1}}),
        VKC_SUCCESS);
    assert_int_equal(vkc_image_download(src, NULL, in, w * h * 16), VKC_SUCCESS);
    for (uint32_t i = 0; i < w * h * 4; ++i)
        assert_true(in[i] == out[i] * 2.0f + 0.5f);
    /* Replace the source of the recorded dispatch (relevelled, recorded
     * again at the next submit), then a buffer where the image was: refused,
     * and the recording stays as it was. */
    vkc_image *src2 = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_RGBA32F,
                                                   .width = w,
                                                   .height = h,
                                                   .usage = VKC_IMAGE_USAGE_STORAGE});
    vkc_clear_value one = {.f32 = {1, 2, 3, 4}};
    assert_int_equal(vkc_image_clear(src2, NULL, &one), VKC_SUCCESS);
    assert_int_equal(vkc_seq_set_arg(s, 0, 0, &(vkc_arg){.image = src2}), VKC_SUCCESS);
    vkc_buffer *nb;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 64}, &nb), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_seq_set_arg(s, 0, 0, &(vkc_arg){.buffer = nb}), VKC_ERROR_MISMATCH);
    vkc_test_quiet_errors(0);
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    float *re = malloc(w * h * 16);
    assert_int_equal(vkc_image_download(dst, NULL, re, w * h * 16), VKC_SUCCESS);
    for (uint32_t i = 0; i < w * h * 4; ++i)
        assert_true(re[i] == one.f32[i % 4] * 2.0f + 0.5f);
    free(re);
    vkc_buffer_destroy(nb);
    vkc_image_destroy(src2);
    vkc_seq_destroy(s);
    vkc_kernel_destroy(k);
    vkc_image_destroy(src);
    vkc_image_destroy(dst);
    free(in);
    free(out);
    vkc_test_context_destroy(ctx);
}

/* Layers of a 2D array and slices of a 3D image addressed by kernels:
 * each layer written alone (a 2D array binding of one layer) and all at
 * once, then mip 1 of a 3D image. */
static void test_layers_and_mips(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t w = 19, h = 11, L = 4;
    vkc_image *arr = image(ctx, &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY,
                                                  .format = VKC_FORMAT_R32UI,
                                                  .width = w,
                                                  .height = h,
                                                  .depth_or_layers = L,
                                                  .mip_levels = 2});
    vkc_kernel *k = KERNEL(ctx, img_coords);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    /* Layer 2 alone at mip 0 (its p.z is 0 in the view: base 2000000). */
    uint32_t base = 2000000;
    vkc_arg one = {.image = arr, .range = {.base_layer = 2, .layer_count = 1}};
    assert_int_equal(
        vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                 .args = &one,
                                                 .arg_count = 1,
                                                 .push = &base,
                                                 .push_size = 4,
                                                 .groups = {groups(w, 8), groups(h, 8), 1}}),
        VKC_SUCCESS);
    /* All layers of mip 1 (9 x 5). */
    uint32_t base1 = 7;
    vkc_arg all1 = {.image = arr, .range = {.base_mip = 1}};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k,
                                                              .args = &all1,
                                                              .arg_count = 1,
                                                              .push = &base1,
                                                              .push_size = 4,
                                                              .groups = {2, 1, L}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_seq_info si;
    assert_int_equal(vkc_seq_info_get(s, &si), VKC_SUCCESS);
    assert_int_equal(si.levels, 1); /* different subresources: no hazard */
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t *l2 = malloc(w * h * 4);
    assert_int_equal(vkc_image_download(arr, &(vkc_image_region){.base_layer = 2, .layer_count = 1},
                                        l2, w * h * 4),
                     VKC_SUCCESS);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            assert_int_equal(l2[y * w + x], 2000000 + y * 1000 + x);
    uint32_t m1[9 * 5 * 4];
    assert_int_equal(vkc_image_download(arr, &(vkc_image_region){.mip = 1}, m1, sizeof(m1)),
                     VKC_SUCCESS);
    for (uint32_t l = 0; l < L; ++l)
        for (uint32_t y = 0; y < 5; ++y)
            for (uint32_t x = 0; x < 9; ++x)
                assert_int_equal(m1[(l * 5 + y) * 9 + x], 7 + l * 1000000 + y * 1000 + x);
    vkc_seq_destroy(s);
    vkc_kernel_destroy(k);
    free(l2);

    /* 3D: mip 1 of 9 x 7 x 5 is 4 x 3 x 2. */
    vkc_image *vol = image(ctx, &(vkc_image_desc){.type = VKC_IMAGE_3D,
                                                  .format = VKC_FORMAT_R32F,
                                                  .width = 9,
                                                  .height = 7,
                                                  .depth_or_layers = 5,
                                                  .mip_levels = 2,
                                                  .usage = VKC_IMAGE_USAGE_STORAGE});
    k = KERNEL(ctx, img_coords3d);
    vkc_arg m = {.image = vol, .range = {.base_mip = 1}};
    assert_int_equal(
        vkc_dispatch(
            ctx,
            &(vkc_dispatch_desc){.kernel = k, .args = &m, .arg_count = 1, .groups = {1, 1, 1}}),
        VKC_SUCCESS);
    float v[4 * 3 * 2];
    assert_int_equal(vkc_image_download(vol, &(vkc_image_region){.mip = 1}, v, sizeof(v)),
                     VKC_SUCCESS);
    for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 3; ++y)
            for (int x = 0; x < 4; ++x)
                assert_true(v[(z * 3 + y) * 4 + x] == (float)(z * 10000 + y * 100 + x));
    vkc_kernel_destroy(k);
    vkc_image_destroy(vol);
    vkc_image_destroy(arr);
    vkc_test_context_destroy(ctx);
}

/* ---- sampling ------------------------------------------------------------------------ */

static uint32_t sub_texel_bits(vkc_context *ctx)
{
    vkc_vk_handles h;
    assert_int_equal(vkc_context_vk(ctx, &h), VKC_SUCCESS);
    PFN_vkGetPhysicalDeviceProperties gpdp =
        (PFN_vkGetPhysicalDeviceProperties)h.get_instance_proc_addr(
            h.instance, "vkGetPhysicalDeviceProperties");
    VkPhysicalDeviceProperties p;
    gpdp(h.physical_device, &p);
    return p.limits.subTexelPrecisionBits;
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Vulkan's filtering with CLAMP_TO_EDGE: NEAREST takes floor(u * w);
 * LINEAR weights the four texels around (u * w - 0.5, v * h - 0.5). Also
 * returns in *spread the largest difference among the texels it read. */
static void sample_ref(const float *t, int w, int h, float u, float v, bool linear, float out[4],
                       float *spread)
{
    if (!linear) {
        int x = clampi((int)floorf(u * (float)w), 0, w - 1),
            y = clampi((int)floorf(v * (float)h), 0, h - 1);
        memcpy(out, &t[(y * w + x) * 4], 16);
        *spread = 0;
        return;
    }
    float fx = u * (float)w - 0.5f, fy = v * (float)h - 0.5f;
    int x0 = (int)floorf(fx), y0 = (int)floorf(fy);
    float ax = fx - (float)x0, ay = fy - (float)y0;
    int xs[2] = {clampi(x0, 0, w - 1), clampi(x0 + 1, 0, w - 1)};
    int ys[2] = {clampi(y0, 0, h - 1), clampi(y0 + 1, 0, h - 1)};
    *spread = 0;
    for (int c = 0; c < 4; ++c) {
        float q[4] = {t[(ys[0] * w + xs[0]) * 4 + c], t[(ys[0] * w + xs[1]) * 4 + c],
                      t[(ys[1] * w + xs[0]) * 4 + c], t[(ys[1] * w + xs[1]) * 4 + c]};
        out[c] = (1 - ay) * ((1 - ax) * q[0] + ax * q[1]) + ay * ((1 - ax) * q[2] + ax * q[3]);
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                *spread = fmaxf(*spread, fabsf(q[i] - q[j]));
    }
}

/* NEAREST and LINEAR sampling of an RGBA8 and an RGBA32F image against the
 * CPU reference. Tolerance: the weights are quantised to
 * subTexelPrecisionBits, so each of the two lerps may be off by
 * spread * 2^-bits; the result is also rounded to the format's precision
 * (1/255 for UNORM8, where implementations filter in fixed point; 1e-5 for
 * 32-bit floats). NEAREST at coordinates a quarter texel from any edge
 * must be exact (to a few ulp for UNORM8, whose k / 255 the device may
 * round differently from the CPU). */
static void test_sampling(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t bits = sub_texel_bits(ctx);
    const int w = 23, h = 17, n = 500;
    vkc_kernel *k = KERNEL(ctx, img_sample);
    const vkc_format formats[] = {VKC_FORMAT_RGBA8_UNORM, VKC_FORMAT_RGBA32F};
    vkc_buffer *coords, *outb;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 8}, &coords),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 16}, &outb),
                     VKC_SUCCESS);
    float *tex = malloc((size_t)w * h * 16), *cs = malloc(n * 8), *got = malloc(n * 16);
    uint8_t *tex8 = malloc((size_t)w * h * 4);
    uint64_t seed = 99;
    for (int f = 0; f < 2; ++f) {
        for (int i = 0; i < w * h * 4; ++i) {
            tex8[i] = (uint8_t)(vkc_test_rand(&seed) >> 56);
            tex[i] = (float)tex8[i] / 255.0f;
        }
        vkc_image *img = image(ctx, &(vkc_image_desc){.format = formats[f],
                                                      .width = (uint32_t)w,
                                                      .height = (uint32_t)h,
                                                      .usage = VKC_IMAGE_USAGE_SAMPLED});
        if (f == 0)
            assert_int_equal(vkc_image_upload(img, NULL, tex8, (uint64_t)w * h * 4), VKC_SUCCESS);
        else
            assert_int_equal(vkc_image_upload(img, NULL, tex, (uint64_t)w * h * 16), VKC_SUCCESS);
        for (int lin = 0; lin < 2; ++lin) {
            vkc_sampler *sm;
            assert_int_equal(
                vkc_sampler_get(
                    ctx,
                    &(vkc_sampler_desc){.filter = lin ? VKC_FILTER_LINEAR : VKC_FILTER_NEAREST},
                    &sm),
                VKC_SUCCESS);
            for (int i = 0; i < n; ++i) {
                uint64_t r = vkc_test_rand(&seed);
                if (lin) { /* anywhere, edges and beyond included */
                    cs[i * 2] = (float)(r % 10000) / 9000.0f - 0.05f;
                    cs[i * 2 + 1] = (float)((r >> 20) % 10000) / 9000.0f - 0.05f;
                } else { /* a quarter texel off a texel centre */
                    cs[i * 2] = ((float)(r % (uint64_t)w) + 0.25f + 0.5f * (float)((r >> 40) & 1)) /
                                (float)w;
                    cs[i * 2 + 1] =
                        ((float)((r >> 16) % (uint64_t)h) + 0.25f + 0.5f * (float)((r >> 41) & 1)) /
                        (float)h;
                }
            }
            assert_int_equal(vkc_buffer_upload(coords, 0, cs, n * 8), VKC_SUCCESS);
            run_sample(ctx, k, img, sm, coords, outb, (uint32_t)n, 0.0f);
            assert_int_equal(vkc_buffer_download(outb, 0, got, n * 16), VKC_SUCCESS);
            float worst = 0;
            for (int i = 0; i < n; ++i) {
                float want[4], spread;
                sample_ref(tex, w, h, cs[i * 2], cs[i * 2 + 1], lin, want, &spread);
                float tol =
                    lin ? 2.0f * spread / (float)(1u << bits) + (f == 0 ? 1.0f / 255.0f : 1e-5f)
                        : (f == 0 ? 1e-6f : 0.0f);
                for (int c = 0; c < 4; ++c) {
                    float e = fabsf(got[i * 4 + c] - want[c]);
                    worst = fmaxf(worst, e);
                    if (e > tol)
                        fail_msg("%s %s sample %d (%f, %f) channel %d: %f, want %f (tol %g)",
                                 vkc_format_name(formats[f]), lin ? "linear" : "nearest", i,
                                 cs[i * 2], cs[i * 2 + 1], c, got[i * 4 + c], want[c], tol);
                }
            }
            printf("  %s %s: worst error %g (subTexelPrecisionBits %u)\n",
                   vkc_format_name(formats[f]), lin ? "linear" : "nearest", worst, bits);
        }
        vkc_image_destroy(img);
    }
    free(tex);
    free(tex8);
    free(cs);
    free(got);
    vkc_buffer_destroy(coords);
    vkc_buffer_destroy(outb);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
}

/* Separate texture + sampler from one layer of a 2D array, and NEAREST
 * sampling of a chosen mip level (each mip filled with its own value). */
static void test_sampling_layers_mips(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t w = 16, h = 8, L = 3, M = 3;
    vkc_image *arr = image(ctx, &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY,
                                                  .format = VKC_FORMAT_R32F,
                                                  .width = w,
                                                  .height = h,
                                                  .depth_or_layers = L,
                                                  .mip_levels = M,
                                                  .usage = VKC_IMAGE_USAGE_SAMPLED});
    for (uint32_t m = 0; m < M; ++m)
        for (uint32_t l = 0; l < L; ++l) {
            vkc_clear_value v = {.f32 = {(float)(m * 10 + l), 0, 0, 0}};
            assert_int_equal(vkc_image_clear(arr,
                                             &(vkc_image_range){.base_mip = m,
                                                                .mip_count = 1,
                                                                .base_layer = l,
                                                                .layer_count = 1},
                                             &v),
                             VKC_SUCCESS);
        }
    vkc_buffer *coords, *outb;
    float cs[2] = {0.3f, 0.6f}, got[4];
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 8}, &coords), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 16}, &outb), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(coords, 0, cs, 8), VKC_SUCCESS);
    vkc_sampler *sm;
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_SUCCESS);
    vkc_sampler *again;
    assert_int_equal(
        vkc_sampler_get(ctx, &(vkc_sampler_desc){.filter = VKC_FILTER_NEAREST}, &again),
        VKC_SUCCESS);
    assert_ptr_equal(sm, again); /* shared: defaults resolve to the same desc */
    vkc_kernel *k = KERNEL(ctx, img_sample_sep);
    for (uint32_t m = 0; m < M; ++m)
        for (uint32_t l = 0; l < L; ++l) {
            struct {
                uint32_t n;
                float layer;
            } p = {1, (float)l};
            /* The view starts at mip m: lod 0 of the view is mip m. */
            vkc_arg args[4] = {{.image = arr, .range = {.base_mip = m, .mip_count = 1}},
                               {.sampler = sm},
                               {.buffer = coords},
                               {.buffer = outb}};
            assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                                                    .args = args,
                                                                    .arg_count = 4,
                                                                    .push = &p,
                                                                    .push_size = sizeof(p),
                                                                    .groups = {1, 1, 1}}),
                             VKC_SUCCESS);
            assert_int_equal(vkc_buffer_download(outb, 0, got, 16), VKC_SUCCESS);
            assert_true(got[0] == (float)(m * 10 + l));
        }
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    assert_int_equal(st.image_views, M); /* one cached view per mip */
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(coords);
    vkc_buffer_destroy(outb);
    vkc_image_destroy(arr);
    vkc_test_context_destroy(ctx);
}

/* ---- hazards and layouts --------------------------------------------------------------- */

/* A chain on one image that is wrong if a barrier or a layout transition is
 * missing: in-place read-modify-write steps (RAW + WAW), and every fourth
 * step a sampled read into a second image (a transition to
 * SHADER_READ_ONLY), copied back over the first (TRANSFER_SRC/DST), then
 * storage again (GENERAL). Submitted twice: each submission starts and ends
 * in the resting layout. */
static void test_hazard_chain(void **state)
{
    (void)state;
    vkc_context *ctx = hazard_context();
    const uint32_t w = 256, h = 256, n = w * h, steps = 24;
    vkc_image *a =
        image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32UI,
                                     .width = w,
                                     .height = h,
                                     .usage = VKC_IMAGE_USAGE_STORAGE | VKC_IMAGE_USAGE_SAMPLED,
                                     .name = "chain a"});
    vkc_image *b = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32UI,
                                                .width = w,
                                                .height = h,
                                                .usage = VKC_IMAGE_USAGE_STORAGE,
                                                .name = "chain b"});
    vkc_kernel *rmw = KERNEL(ctx, img_rmw), *fetch = KERNEL(ctx, img_fetch);
    vkc_sampler *sm;
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_SUCCESS);
    uint32_t *x = malloc(n * 4), *ref = malloc(n * 4), *out = malloc(n * 4);
    uint64_t seed = 3;
    for (uint32_t i = 0; i < n; ++i)
        x[i] = ref[i] = (uint32_t)vkc_test_rand(&seed);
    assert_int_equal(vkc_image_upload(a, NULL, x, n * 4), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){"image hazards"}, &s), VKC_SUCCESS);
    uint32_t commands = 0;
    for (uint32_t i = 0; i < steps; ++i) {
        uint32_t p[2] = {3 + 2 * i, i * 7 + 1};
        vkc_arg arg = {.image = a};
        assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = rmw,
                                                                  .args = &arg,
                                                                  .arg_count = 1,
                                                                  .push = p,
                                                                  .push_size = 8,
                                                                  .groups = {w / 8, h / 8, 1}}),
                         VKC_SUCCESS);
        commands++;
        if (i % 4 == 3) {
            uint32_t q[2] = {5, i};
            vkc_arg args[2] = {{.image = a, .sampler = sm}, {.image = b}};
            assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = fetch,
                                                                      .args = args,
                                                                      .arg_count = 2,
                                                                      .push = q,
                                                                      .push_size = 8,
                                                                      .groups = {w / 8, h / 8, 1}}),
                             VKC_SUCCESS);
            assert_int_equal(vkc_seq_copy_image(s, a, NULL, b, NULL), VKC_SUCCESS);
            commands += 2;
        }
    }
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_seq_info info;
    assert_int_equal(vkc_seq_info_get(s, &info), VKC_SUCCESS);
    assert_int_equal(info.levels, commands); /* every command depends on the one before */
    for (int rep = 0; rep < 2; ++rep) {
        for (uint32_t i = 0; i < steps; ++i) {
            for (uint32_t j = 0; j < n; ++j)
                ref[j] = ref[j] * (3 + 2 * i) + i * 7 + 1;
            if (i % 4 == 3)
                for (uint32_t j = 0; j < n; ++j)
                    ref[j] = ref[j] * 5 + i;
        }
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_int_equal(vkc_image_download(a, NULL, out, n * 4), VKC_SUCCESS);
    uint32_t wrong = 0;
    for (uint32_t j = 0; j < n; ++j)
        wrong += out[j] != ref[j];
    if (drop_barriers) {
        printf("image barriers dropped: %u of %u texels wrong\n", wrong, n);
        if (vkc_context_device(ctx)->type != VKC_DEVICE_TYPE_CPU)
            assert_true(wrong > 0);
    } else if (wrong) {
        for (uint32_t j = 0; j < n; ++j)
            if (out[j] != ref[j])
                fail_msg("%u wrong; texel %u: %u, want %u", wrong, j, out[j], ref[j]);
    }
    vkc_seq_destroy(s);
    vkc_kernel_destroy(rmw);
    vkc_kernel_destroy(fetch);
    vkc_image_destroy(a);
    vkc_image_destroy(b);
    free(x);
    free(ref);
    free(out);
    if (drop_barriers)
        vkc_context_destroy(ctx); /* validation is off in this mode */
    else
        vkc_test_context_destroy(ctx);
}

/* Copies: buffer -> image (a sub-box), image -> image (mip and layer to
 * another image), image -> buffer, a recorded clear; checked on the CPU. */
static void test_copies(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t w = 12, h = 10;
    vkc_image *a = image(ctx, &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY,
                                                .format = VKC_FORMAT_R32UI,
                                                .width = w,
                                                .height = h,
                                                .depth_or_layers = 2,
                                                .mip_levels = 2});
    vkc_image *b =
        image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32I, .width = 6, .height = 5});
    vkc_buffer *src, *dst;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 4096}, &src), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 4096}, &dst), VKC_SUCCESS);
    uint32_t host[1024];
    for (uint32_t i = 0; i < 1024; ++i)
        host[i] = i * 3 + 1;
    assert_int_equal(vkc_buffer_upload(src, 0, host, sizeof(host)), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(dst, 0, 4096, 0xffffffffu), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    vkc_clear_value zero = {{0}};
    assert_int_equal(vkc_seq_clear_image(s, a, NULL, &zero), VKC_SUCCESS);
    /* 4 x 3 box at (2, 1) of mip 1, layer 1, from buffer offset 64. */
    vkc_image_region box = {
        .mip = 1, .base_layer = 1, .layer_count = 1, .x = 2, .y = 1, .width = 4, .height = 3};
    assert_int_equal(vkc_seq_copy_buffer_to_image(s, a, &box, src, 64), VKC_SUCCESS);
    /* All of mip 1 of layer 1 (6 x 5) into b. */
    assert_int_equal(
        vkc_seq_copy_image(s, b, NULL, a,
                           &(vkc_image_region){.mip = 1, .base_layer = 1, .layer_count = 1}),
        VKC_SUCCESS);
    assert_int_equal(vkc_seq_copy_image_to_buffer(s, dst, 256, b, NULL), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t back[30];
    assert_int_equal(vkc_buffer_download(dst, 256, back, sizeof(back)), VKC_SUCCESS);
    for (uint32_t y = 0; y < 5; ++y)
        for (uint32_t x = 0; x < 6; ++x) {
            bool in = x >= 2 && x < 6 && y >= 1 && y < 4;
            uint32_t want = in ? host[16 + (y - 1) * 4 + (x - 2)] : 0;
            assert_int_equal(back[y * 6 + x], want);
        }
    uint32_t first;
    assert_int_equal(vkc_buffer_download(dst, 252, &first, 4), VKC_SUCCESS);
    assert_int_equal(first, 0xffffffffu); /* nothing before the offset */
    /* The same in immediate mode: b back into mip 1 of layer 0 of a, a
     * box of it out to the buffer. */
    assert_int_equal(vkc_copy_image(ctx, a, &(vkc_image_region){.mip = 1}, b, NULL), VKC_SUCCESS);
    assert_int_equal(vkc_copy_image_to_buffer(
                         ctx, dst, 0, a,
                         &(vkc_image_region){
                             .mip = 1, .layer_count = 1, .x = 2, .y = 1, .width = 4, .height = 3}),
                     VKC_SUCCESS);
    assert_int_equal(
        vkc_copy_buffer_to_image(ctx, b, &(vkc_image_region){.width = 1, .height = 1}, src, 4092),
        VKC_SUCCESS);
    uint32_t boxed[12], corner;
    assert_int_equal(vkc_buffer_download(dst, 0, boxed, sizeof(boxed)), VKC_SUCCESS);
    for (uint32_t i = 0; i < 12; ++i)
        assert_int_equal(boxed[i], host[16 + i]);
    assert_int_equal(
        vkc_image_download(b, &(vkc_image_region){.width = 1, .height = 1}, &corner, 4),
        VKC_SUCCESS);
    assert_int_equal(corner, host[1023]);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(src);
    vkc_buffer_destroy(dst);
    vkc_image_destroy(a);
    vkc_image_destroy(b);
    vkc_test_context_destroy(ctx);
}

/* Without push descriptors and timelines (descriptor-set pools, fences):
 * storage, combined and separate sampler bindings written with
 * vkUpdateDescriptorSets, checked on the CPU. */
static void no_push(vkc_context_desc *d)
{
    d->push_descriptors = VKC_OFF;
    d->timeline_semaphores = VKC_OFF;
}

static void test_fallback_paths(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(no_push);
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    assert_false(f.push_descriptors);
    const uint32_t w = 16, h = 16, n = w * h;
    vkc_image *a =
        image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32UI, .width = w, .height = h});
    vkc_image *b =
        image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32UI, .width = w, .height = h});
    vkc_kernel *rmw = KERNEL(ctx, img_rmw), *fetch = KERNEL(ctx, img_fetch);
    vkc_sampler *sm;
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_SUCCESS);
    uint32_t in[256], out[256];
    for (uint32_t i = 0; i < n; ++i)
        in[i] = i * 7u;
    assert_int_equal(vkc_image_upload(a, NULL, in, sizeof(in)), VKC_SUCCESS);
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    const uint32_t p[2] = {3, 1}, q[2] = {2, 5};
    vkc_arg ra = {.image = a}, fa[2] = {{.image = a, .sampler = sm}, {.image = b}};
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = rmw,
                                                              .args = &ra,
                                                              .arg_count = 1,
                                                              .push = p,
                                                              .push_size = 8,
                                                              .groups = {2, 2, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = fetch,
                                                              .args = fa,
                                                              .arg_count = 2,
                                                              .push = q,
                                                              .push_size = 8,
                                                              .groups = {2, 2, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    for (int rep = 0; rep < 3; ++rep) { /* replays start from the resting layout */
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
        for (uint32_t i = 0; i < n; ++i)
            in[i] = in[i] * 3u + 1u;
    }
    assert_int_equal(vkc_image_download(b, NULL, out, sizeof(out)), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(out[i], in[i] * 2u + 5u);
    vkc_seq_destroy(s);
    vkc_kernel_destroy(rmw);
    vkc_kernel_destroy(fetch);
    vkc_image_destroy(a);
    vkc_image_destroy(b);
    vkc_test_context_destroy(ctx);
}

/* ---- bad input -------------------------------------------------------------------------- */

static void expect(vkc_context *ctx, vkc_result got, vkc_result want, const char *needle)
{
    if (got != want)
        fail_msg("got %s, want %s (%s)", vkc_result_string(got), vkc_result_string(want),
                 vkc_context_last_error(ctx));
    if (needle && !strstr(vkc_context_last_error(ctx), needle))
        fail_msg("message \"%s\" does not name \"%s\"", vkc_context_last_error(ctx), needle);
}

/* Each a clear error with a message that names the problem; nothing leaks
 * (the context's destruction reports leaked objects), the sequences that
 * failed are recorded again and still work. */
static void test_bad_input(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_test_quiet_errors(1);
    vkc_image *img = (vkc_image *)(void *)&img; /* not NULL: must be reset */
    /* A format storage cannot use, and unknown usage bits. */
    expect(ctx,
           vkc_image_create(ctx,
                            &(vkc_image_desc){.format = VKC_FORMAT_RGBA8_SRGB,
                                              .width = 8,
                                              .usage = VKC_IMAGE_USAGE_STORAGE},
                            &img),
           VKC_ERROR_UNSUPPORTED, "RGBA8_SRGB does not support storage");
    assert_null(img);
    expect(ctx, vkc_image_create(ctx, &(vkc_image_desc){.width = 8, .usage = 64}, &img),
           VKC_ERROR_INVALID_ARGUMENT, "usage");
    expect(ctx, vkc_image_create(ctx, &(vkc_image_desc){.width = 0}, &img),
           VKC_ERROR_INVALID_ARGUMENT, "width");
    expect(ctx,
           vkc_image_create(ctx, &(vkc_image_desc){.format = (vkc_format)99, .width = 1}, &img),
           VKC_ERROR_INVALID_ARGUMENT, "format");
    expect(ctx,
           vkc_image_create(ctx, &(vkc_image_desc){.width = 8, .height = 8, .depth_or_layers = 2},
                            &img),
           VKC_ERROR_INVALID_ARGUMENT, "VKC_IMAGE_2D_ARRAY");
    expect(ctx, vkc_image_create(ctx, &(vkc_image_desc){.width = 8, .mip_levels = 5}, &img),
           VKC_ERROR_INVALID_ARGUMENT, "at most 4");
    expect(ctx, vkc_image_create(ctx, &(vkc_image_desc){.width = 1u << 30}, &img), VKC_ERROR_LIMIT,
           "exceeds");
    assert_null(img);
    expect(ctx,
           vkc_image_create(
               ctx,
               &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY, .width = 8, .depth_or_layers = 70000},
               &img),
           VKC_ERROR_LIMIT, "vkc's limit of 65535");
    assert_null(img);

    vkc_image *a = image(ctx, &(vkc_image_desc){.type = VKC_IMAGE_2D_ARRAY,
                                                .format = VKC_FORMAT_R32F,
                                                .width = 8,
                                                .height = 4,
                                                .depth_or_layers = 2,
                                                .name = "bad a"});
    uint32_t buf[64] = {0};
    /* Region, mip and layer out of range; a wrong size. */
    expect(ctx, vkc_image_upload(a, &(vkc_image_region){.mip = 1}, buf, 64),
           VKC_ERROR_INVALID_ARGUMENT, "mip 1 is out of range");
    expect(ctx, vkc_image_upload(a, &(vkc_image_region){.base_layer = 2}, buf, 64),
           VKC_ERROR_INVALID_ARGUMENT, "layers [2, +0) are out of range");
    expect(ctx, vkc_image_download(a, &(vkc_image_region){.x = 6, .width = 3}, buf, 96),
           VKC_ERROR_INVALID_ARGUMENT, "outside mip 0");
    expect(ctx, vkc_image_upload(a, NULL, buf, 64), VKC_ERROR_INVALID_ARGUMENT, "holds 256");
    expect(ctx, vkc_image_clear(a, &(vkc_image_range){.base_mip = 1}, &(vkc_clear_value){{0}}),
           VKC_ERROR_INVALID_ARGUMENT, "mips [1, +0)");
    assert_int_equal(vkc_image_region_size(a, &(vkc_image_region){.y = 4}), 0);

    /* Kernels: image where a buffer is expected and the reverse, a format
     * or type the kernel does not declare, a usage the image lacks. */
    vkc_kernel *add = make_kernel(ctx, test_shaders_add, test_shaders_add_size, "add");
    vkc_kernel *aff = KERNEL(ctx, img_affine), *c3 = KERNEL(ctx, img_coords3d),
               *samp = KERNEL(ctx, img_sample);
    vkc_buffer *b;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 256}, &b), VKC_SUCCESS);
    vkc_image *rgba = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_RGBA32F,
                                                   .width = 8,
                                                   .height = 8,
                                                   .usage = VKC_IMAGE_USAGE_SAMPLED,
                                                   .name = "sampled only"});
    vkc_image *ui = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32UI, .width = 8});
    vkc_seq *s;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    uint32_t n = 4;
    vkc_arg wrong[3] = {{.buffer = b}, {.image = ui}, {.buffer = b}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = add,
                                                    .args = wrong,
                                                    .arg_count = 3,
                                                    .push = &n,
                                                    .push_size = 4,
                                                    .count = n}),
           VKC_ERROR_MISMATCH, "expects a buffer but the arg names an image");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    float ab[2] = {1, 0};
    vkc_arg buf_for_img[2] = {{.buffer = b}, {.image = rgba}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = aff,
                                                    .args = buf_for_img,
                                                    .arg_count = 2,
                                                    .push = ab,
                                                    .push_size = 8,
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_MISMATCH, "expects a storage image but the arg names a buffer");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    vkc_arg fmt[2] = {{.image = a, .range = {.layer_count = 1}}, {.image = rgba}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = aff,
                                                    .args = fmt,
                                                    .arg_count = 2,
                                                    .push = ab,
                                                    .push_size = 8,
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_MISMATCH, "declares a RGBA32F storage image but image \"bad a\" is R32F");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    vkc_arg nostore[2] = {{.image = rgba}, {.image = rgba}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = aff,
                                                    .args = nostore,
                                                    .arg_count = 2,
                                                    .push = ab,
                                                    .push_size = 8,
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_INVALID_ARGUMENT, "not created with storage usage");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    vkc_arg two_d = {.image = a, .range = {.layer_count = 1}};
    expect(ctx,
           vkc_seq_dispatch(s,
                            &(vkc_dispatch_desc){
                                .kernel = c3, .args = &two_d, .arg_count = 1, .groups = {1, 1, 1}}),
           VKC_ERROR_MISMATCH, "declares a 3D image but image \"bad a\" is 2D array");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    /* A 2D binding of an array needs one layer. */
    vkc_sampler *lin;
    assert_int_equal(vkc_sampler_get(ctx, &(vkc_sampler_desc){.filter = VKC_FILTER_LINEAR}, &lin),
                     VKC_SUCCESS);
    struct {
        uint32_t n;
        float lod;
    } sp = {1, 0};
    vkc_arg layers[3] = {{.image = a, .sampler = lin}, {.buffer = b}, {.buffer = b}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = samp,
                                                    .args = layers,
                                                    .arg_count = 3,
                                                    .push = &sp,
                                                    .push_size = sizeof(sp),
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_MISMATCH, "set range.layer_count = 1");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    vkc_arg nosamp[3] = {{.image = rgba}, {.buffer = b}, {.buffer = b}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = samp,
                                                    .args = nosamp,
                                                    .arg_count = 3,
                                                    .push = &sp,
                                                    .push_size = sizeof(sp),
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_MISMATCH, "set vkc_arg.sampler");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    vkc_arg range[3] = {
        {.image = rgba, .sampler = lin, .range = {.base_mip = 1}}, {.buffer = b}, {.buffer = b}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = samp,
                                                    .args = range,
                                                    .arg_count = 3,
                                                    .push = &sp,
                                                    .push_size = sizeof(sp),
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_INVALID_ARGUMENT, "out of range");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    /* Recorded copies out of range, and overlapping boxes of one image. */
    expect(ctx, vkc_seq_copy_image_to_buffer(s, b, 4, a, NULL), VKC_ERROR_INVALID_ARGUMENT,
           "outside buffer");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    expect(
        ctx,
        vkc_seq_copy_image(s, ui, &(vkc_image_region){.x = 2}, ui, &(vkc_image_region){.width = 4}),
        VKC_ERROR_INVALID_ARGUMENT, "overlap");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    expect(ctx, vkc_seq_copy_image(s, rgba, NULL, ui, NULL), VKC_ERROR_INVALID_ARGUMENT,
           "differ in size");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    expect(ctx, vkc_seq_copy_image(s, ui, NULL, rgba, NULL), VKC_ERROR_INVALID_ARGUMENT,
           "outside mip 0");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    expect(ctx, vkc_seq_release_image(s, a, 0, VK_IMAGE_LAYOUT_UNDEFINED),
           VKC_ERROR_INVALID_ARGUMENT, "cannot be named");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    expect(ctx, vkc_seq_acquire_image(s, a, 99, VK_IMAGE_LAYOUT_GENERAL),
           VKC_ERROR_INVALID_ARGUMENT, "queue family 99");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    /* Linear filtering of a format that has none. */
    vkc_image *uis =
        image(ctx, &(vkc_image_desc){
                       .format = VKC_FORMAT_R32UI, .width = 8, .usage = VKC_IMAGE_USAGE_SAMPLED});
    vkc_image_info uinfo;
    assert_int_equal(vkc_image_info_get(uis, &uinfo), VKC_SUCCESS);
    vkc_arg lin_ui[3] = {{.image = uis, .sampler = lin}, {.buffer = b}, {.buffer = b}};
    vkc_result lr = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = samp,
                                                             .args = lin_ui,
                                                             .arg_count = 3,
                                                             .push = &sp,
                                                             .push_size = sizeof(sp),
                                                             .groups = {1, 1, 1}});
    /* R32UI is not float, but the check is on the format's features. */
    if (lr != VKC_SUCCESS)
        expect(ctx, lr, VKC_ERROR_UNSUPPORTED, "cannot filter R32UI");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);

    /* Destroyed images (a cleared magic, as freed memory holds) and
     * samplers. */
    static uint64_t dead[sizeof(vkc_image) / 8 + 1];
    vkc_image *gone = (vkc_image *)(void *)dead;
    expect(ctx, vkc_image_upload(gone, NULL, buf, 4), VKC_ERROR_INVALID_HANDLE, NULL);
    vkc_arg dead_arg[2] = {{.image = gone}, {.image = rgba}};
    expect(ctx,
           vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = aff,
                                                    .args = dead_arg,
                                                    .arg_count = 2,
                                                    .push = ab,
                                                    .push_size = 8,
                                                    .groups = {1, 1, 1}}),
           VKC_ERROR_INVALID_HANDLE, "invalid vkc_image handle");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    expect(ctx, vkc_seq_clear_image(s, gone, NULL, &(vkc_clear_value){{0}}),
           VKC_ERROR_INVALID_HANDLE, "vkc_image");
    assert_int_equal(vkc_seq_begin(s), VKC_SUCCESS);
    vkc_image_destroy(NULL);
    vkc_image_destroy(gone); /* a no-op, like destroy(NULL) */
    vkc_test_quiet_errors(0);

    /* After all that the sequence still records and runs. */
    vkc_clear_value seven = {.u32 = {7, 0, 0, 0}};
    assert_int_equal(vkc_seq_clear_image(s, ui, NULL, &seven), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    vkc_ticket t;
    assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
    assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    uint32_t got[8];
    assert_int_equal(vkc_image_download(ui, NULL, got, sizeof(got)), VKC_SUCCESS);
    for (int i = 0; i < 8; ++i)
        assert_int_equal(got[i], 7);
    vkc_seq_destroy(s);
    vkc_kernel_destroy(add);
    vkc_kernel_destroy(aff);
    vkc_kernel_destroy(c3);
    vkc_kernel_destroy(samp);
    vkc_buffer_destroy(b);
    vkc_image_destroy(a);
    vkc_image_destroy(rgba);
    vkc_image_destroy(uis);
    /* ui is left alive: destroyed with the context, nothing leaked. */
    vkc_test_context_destroy(ctx);
}

/* The sampler's LOD fields: each mip of an R32F image holds its own
 * level number, so a NEAREST-mip lookup returns the level it used; the
 * expected level is Vulkan's clamp(lod + mip_lod_bias, min_lod, max_lod)
 * rounded to the nearest level (the image's last level at most). Then the
 * rules: each broken one is a clear error. */
static void test_sampler_lod(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t M = 4; /* 8x8 .. 1x1 */
    vkc_image *img = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_R32F,
                                                  .width = 8,
                                                  .height = 8,
                                                  .mip_levels = M,
                                                  .usage = VKC_IMAGE_USAGE_SAMPLED});
    for (uint32_t m = 0; m < M; ++m) {
        vkc_clear_value v = {.f32 = {(float)m, 0, 0, 0}};
        assert_int_equal(
            vkc_image_clear(img, &(vkc_image_range){.base_mip = m, .mip_count = 1}, &v),
            VKC_SUCCESS);
    }
    vkc_buffer *coords, *outb;
    const float cs[2] = {0.4f, 0.6f};
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 8}, &coords), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 16}, &outb), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_upload(coords, 0, cs, 8), VKC_SUCCESS);
    vkc_kernel *k = KERNEL(ctx, img_sample);
    VkPhysicalDeviceProperties props;
    ctx->vki.vkGetPhysicalDeviceProperties(ctx->phys, &props);
    const bool bias_ok = props.limits.maxSamplerLodBias >= 1.0f;
    struct {
        float min_lod, max_lod, bias, lod;
    } cases[] = {
        {0, 0, 0, 0},     {0, 0, 0, 2},    {0, 0, 0, 7}, /* no clamp: up to the last level */
        {1, 0, 0, 0},     {2, 0, 0, 1},    {1, 0, 0, 3}, /* min_lod */
        {0, 1, 0, 3},     {0, 2, 0, 2.8f}, {1, 2, 0, 0}, /* max_lod */
        {0, 0, 1, 0},     {0, 0, 1, 1.2f}, {0, 2, 1, 2}, /* mip_lod_bias, then clamped */
        {0, 0, -1, 2.2f}, {1, 0, -1, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        if (cases[i].bias && !bias_ok)
            continue;
        vkc_sampler *sm;
        assert_int_equal(vkc_sampler_get(ctx,
                                         &(vkc_sampler_desc){.min_lod = cases[i].min_lod,
                                                             .max_lod = cases[i].max_lod,
                                                             .mip_lod_bias = cases[i].bias},
                                         &sm),
                         VKC_SUCCESS);
        float l = cases[i].lod + cases[i].bias;
        l = fmaxf(l, cases[i].min_lod);
        if (cases[i].max_lod)
            l = fminf(l, cases[i].max_lod);
        /* NEAREST mipmap mode: level ceil(l + 0.5) - 1, within the image */
        float want = fminf(ceilf(l + 0.5f) - 1.0f, (float)(M - 1));
        run_sample(ctx, k, img, sm, coords, outb, 1, cases[i].lod);
        float got[4];
        assert_int_equal(vkc_buffer_download(outb, 0, got, 16), VKC_SUCCESS);
        if (got[0] != want)
            fail_msg("min_lod %g max_lod %g bias %g lod %g: level %g, want %g",
                     (double)cases[i].min_lod, (double)cases[i].max_lod, (double)cases[i].bias,
                     (double)cases[i].lod, (double)got[0], (double)want);
    }
    if (!bias_ok)
        printf("  maxSamplerLodBias %g < 1: bias cases skipped\n",
               (double)props.limits.maxSamplerLodBias);
    /* -0 and the zeroed desc are one sampler. */
    vkc_sampler *a, *b;
    assert_int_equal(vkc_sampler_get(ctx, NULL, &a), VKC_SUCCESS);
    assert_int_equal(
        vkc_sampler_get(ctx, &(vkc_sampler_desc){.min_lod = -0.0f, .mip_lod_bias = -0.0f}, &b),
        VKC_SUCCESS);
    assert_ptr_equal(a, b);

    vkc_test_quiet_errors(1);
    expect(ctx, vkc_sampler_get(ctx, &(vkc_sampler_desc){.min_lod = 2, .max_lod = 1}, &b),
           VKC_ERROR_INVALID_ARGUMENT, "min_lod <= max_lod");
    assert_null(b);
    expect(ctx, vkc_sampler_get(ctx, &(vkc_sampler_desc){.min_lod = -1}, &b),
           VKC_ERROR_INVALID_ARGUMENT, "min_lod");
    expect(ctx, vkc_sampler_get(ctx, &(vkc_sampler_desc){.max_lod = NAN}, &b),
           VKC_ERROR_INVALID_ARGUMENT, "finite");
    expect(ctx, vkc_sampler_get(ctx, &(vkc_sampler_desc){.unnormalized = true, .min_lod = 1}, &b),
           VKC_ERROR_INVALID_ARGUMENT, "unnormalized");
    expect(ctx,
           vkc_sampler_get(
               ctx,
               &(vkc_sampler_desc){.mip_lod_bias = props.limits.maxSamplerLodBias * 2.0f + 1.0f},
               &b),
           VKC_ERROR_LIMIT, "maxSamplerLodBias");
    vkc_test_quiet_errors(0);
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(coords);
    vkc_buffer_destroy(outb);
    vkc_image_destroy(img);
    vkc_test_context_destroy(ctx);
}

/* BGRA8, a swapchain's format: the bytes on the host are B, G, R, A and
 * kernels see R, G, B, A. A clear to red, a sampled read of known bytes and
 * (where the device can) a storage write through a kernel without a format
 * qualifier, each checked byte by byte; the SRGB form round-trips. */
static void test_bgra8(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint32_t w = 16, h = 8;
    round_trip(ctx,
               &(vkc_image_desc){.format = VKC_FORMAT_BGRA8_SRGB,
                                 .width = w,
                                 .height = h,
                                 .usage = VKC_IMAGE_USAGE_SAMPLED},
               NULL, 77);
    vkc_image *img = image(ctx, &(vkc_image_desc){.format = VKC_FORMAT_BGRA8_UNORM,
                                                  .width = w,
                                                  .height = h,
                                                  .usage = VKC_IMAGE_USAGE_SAMPLED});
    assert_int_equal(vkc_format_vk(VKC_FORMAT_BGRA8_UNORM), VK_FORMAT_B8G8R8A8_UNORM);
    assert_int_equal(vkc_format_texel_size(VKC_FORMAT_BGRA8_UNORM), 4);
    uint8_t bytes[16 * 8 * 4];
    assert_int_equal(vkc_image_clear(img, NULL, &(vkc_clear_value){.f32 = {1, 0, 0, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_image_download(img, NULL, bytes, sizeof(bytes)), VKC_SUCCESS);
    for (uint32_t i = 0; i < w * h; ++i)
        if (bytes[4 * i] != 0 || bytes[4 * i + 1] != 0 || bytes[4 * i + 2] != 255 ||
            bytes[4 * i + 3] != 255)
            fail_msg("clear to red: texel %u is %u %u %u %u, want B G R A = 0 0 255 255", i,
                     bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]);

    /* Sampling: texel centres with NEAREST return (R, G, B, A) / 255. */
    fill_random(bytes, sizeof(bytes), 5);
    assert_int_equal(vkc_image_upload(img, NULL, bytes, sizeof(bytes)), VKC_SUCCESS);
    const uint32_t n = w * h;
    vkc_buffer *coords, *outb;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 8}, &coords),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 16}, &outb),
                     VKC_SUCCESS);
    float cs[16 * 8 * 2], got[16 * 8 * 4];
    for (uint32_t i = 0; i < n; ++i) {
        cs[2 * i] = ((float)(i % w) + 0.5f) / (float)w;
        cs[2 * i + 1] = ((float)(i / w) + 0.5f) / (float)h;
    }
    assert_int_equal(vkc_buffer_upload(coords, 0, cs, sizeof(cs)), VKC_SUCCESS);
    vkc_sampler *sm;
    assert_int_equal(vkc_sampler_get(ctx, NULL, &sm), VKC_SUCCESS);
    vkc_kernel *k = KERNEL(ctx, img_sample);
    run_sample(ctx, k, img, sm, coords, outb, n, 0.0f);
    assert_int_equal(vkc_buffer_download(outb, 0, got, sizeof(got)), VKC_SUCCESS);
    static const int from[4] = {2, 1, 0, 3}; /* R G B A from the B G R A bytes */
    for (uint32_t i = 0; i < n; ++i)
        for (int c = 0; c < 4; ++c)
            if (fabsf(got[4 * i + c] - (float)bytes[4 * i + from[c]] / 255.0f) > 1e-6f)
                fail_msg("sampled texel %u channel %d: %f, want %u/255", i, c,
                         (double)got[4 * i + c], bytes[4 * i + from[c]]);
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(coords);
    vkc_buffer_destroy(outb);
    vkc_image_destroy(img);

    /* Storage, where the device allows it. */
    const vkc_device_info *di = vkc_context_device(ctx);
    vkc_image *st;
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_image_create(ctx,
                                    &(vkc_image_desc){.format = VKC_FORMAT_BGRA8_UNORM,
                                                      .width = w,
                                                      .height = h,
                                                      .usage = VKC_IMAGE_USAGE_STORAGE},
                                    &st);
    vkc_test_quiet_errors(0);
    if (r == VKC_ERROR_UNSUPPORTED || !di->storage_image_write_without_format) {
        printf("  BGRA8 storage: not on this device (%s)\n",
               r < 0 ? vkc_context_last_error(ctx) : "no shaderStorageImageWriteWithoutFormat");
        if (r >= 0)
            vkc_image_destroy(st);
        vkc_test_context_destroy(ctx);
        return;
    }
    assert_int_equal(r, VKC_SUCCESS);
    vkc_kernel *wk = KERNEL(ctx, img_write_unfmt);
    vkc_arg sa = {.image = st};
    assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = wk,
                                                            .args = &sa,
                                                            .arg_count = 1,
                                                            .groups = {w / 8, h / 8, 1}}),
                     VKC_SUCCESS);
    assert_int_equal(vkc_image_download(st, NULL, bytes, sizeof(bytes)), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i) {
        const uint8_t want[4] = {200, (uint8_t)(i / w), (uint8_t)(i % w), 255};
        if (memcmp(&bytes[4 * i], want, 4))
            fail_msg("stored texel %u: %u %u %u %u, want B G R A = %u %u %u %u", i, bytes[4 * i],
                     bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3], want[0], want[1],
                     want[2], want[3]);
    }
    printf("  BGRA8 storage: written through a format-less storage image\n");
    vkc_kernel_destroy(wk);
    vkc_image_destroy(st);
    vkc_test_context_destroy(ctx);
}

/* vkc_format_support_get against the device's format properties read
 * here, and against what vkc_image_create accepts: each usage bit reported
 * creates, each one not reported is VKC_ERROR_UNSUPPORTED. */
static void test_format_support(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const VkFormatFeatureFlags xfer =
        VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
    const struct {
        uint32_t usage;
        VkFormatFeatureFlags need;
    } bits[] = {{VKC_IMAGE_USAGE_STORAGE, VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT},
                {VKC_IMAGE_USAGE_SAMPLED, VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT},
                {VKC_IMAGE_USAGE_COLOR_ATTACHMENT, VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT}};
    for (int f = 1; f < VKC_FORMAT_COUNT_; ++f) {
        vkc_format_support fs;
        assert_int_equal(vkc_format_support_get(ctx, (vkc_format)f, &fs), VKC_SUCCESS);
        VkFormatProperties fp;
        ctx->vki.vkGetPhysicalDeviceFormatProperties(ctx->phys, vkc_format_vk((vkc_format)f), &fp);
        const VkFormatFeatureFlags have = fp.optimalTilingFeatures;
        const bool copies = (have & xfer) == xfer;
        for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); ++b) {
            const bool want = copies && (have & bits[b].need);
            if (!!(fs.usage & bits[b].usage) != want)
                fail_msg("%s: usage 0x%x reported %d, format features 0x%x",
                         vkc_format_name((vkc_format)f), bits[b].usage,
                         !!(fs.usage & bits[b].usage), (unsigned)have);
            vkc_image *img;
            vkc_test_quiet_errors(1);
            vkc_result r = vkc_image_create(
                ctx, &(vkc_image_desc){.format = (vkc_format)f, .width = 4, .usage = bits[b].usage},
                &img);
            vkc_test_quiet_errors(0);
            assert_int_equal(r, want ? VKC_SUCCESS : VKC_ERROR_UNSUPPORTED);
            vkc_image_destroy(img);
        }
        assert_int_equal(fs.linear_filter,
                         (fs.usage & VKC_IMAGE_USAGE_SAMPLED) &&
                             (have & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT));
    }
    vkc_format_support fs = {.usage = 7};
    vkc_test_quiet_errors(1);
    expect(ctx, vkc_format_support_get(ctx, VKC_FORMAT_COUNT_, &fs), VKC_ERROR_INVALID_ARGUMENT,
           "unknown format");
    assert_int_equal(fs.usage, 0);
    expect(ctx, vkc_format_support_get(ctx, VKC_FORMAT_R32F, NULL), VKC_ERROR_INVALID_ARGUMENT,
           "out is NULL");
    vkc_test_quiet_errors(0);
    vkc_test_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_formats),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_reflection),
        cmocka_unit_test(test_storage),
        cmocka_unit_test(test_layers_and_mips),
        cmocka_unit_test(test_sampling),
        cmocka_unit_test(test_sampling_layers_mips),
        cmocka_unit_test(test_hazard_chain),
        cmocka_unit_test(test_copies),
        cmocka_unit_test(test_fallback_paths),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_sampler_lod),
        cmocka_unit_test(test_bgra8),
        cmocka_unit_test(test_format_support),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
