/* Images: creation and format support, transfers, kernels on storage and
 * sampled images, samplers, hazards and layout transitions, wrapping with
 * ownership transfer, bad input. Results are checked against CPU
 * references; every test ends with no validation message and nothing
 * leaked (the layer reports leaks at context destruction). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_formats),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_reflection),
        cmocka_unit_test(test_storage),
        cmocka_unit_test(test_layers_and_mips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
