/* blur: a separable Gaussian blur of a PNG image.
 *
 * Teaches: 2D work with explicit workgroup counts, shared-memory tiling (a
 * workgroup loads its pixels and a halo once, then every pixel reads its
 * neighbours from shared memory), and a two-pass filter in one sequence:
 * horizontal into a float image, vertical back to RGBA8. The result is
 * checked against the same filter on the CPU (to one step of 8-bit
 * rounding) and written as a PNG with libpng.
 *
 * Usage: blur [in.png [out.png]]   (no input: a generated test image) */
#define _POSIX_C_SOURCE 200809L /* before any system header */
#include <png.h>                /* before sample_common.h: sample_write_png */

#include "sample_common.h"

#include <math.h>
#include <string.h>

#include "embed_shaders.h"

#define RADIUS 6 /* as in shaders/blur_h.comp and blur_v.comp */

/* A test picture: gradients, a checkerboard and rings, with sharp edges for
 * the blur to soften. */
static uint32_t *make_image(uint32_t w, uint32_t h)
{
    uint32_t *px = malloc((size_t)w * h * 4);
    if (!px)
        return NULL;
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            float dx = (float)x - w * 0.5f, dy = (float)y - h * 0.5f;
            uint32_t ring = ((uint32_t)sqrtf(dx * dx + dy * dy) / 24) & 1;
            uint32_t check = ((x / 32) ^ (y / 32)) & 1;
            uint32_t r = x * 255 / w, g = y * 255 / h, b = ring ? 230 : (check ? 40 : 140);
            px[(size_t)y * w + x] = r | g << 8 | b << 16 | 255u << 24;
        }
    return px;
}

static float unorm(uint32_t p, int c)
{
    return (float)((p >> (8 * c)) & 255) / 255.0f;
}

static uint32_t pack(const float v[4])
{
    uint32_t p = 0;
    for (int c = 0; c < 4; ++c) {
        float f = v[c] < 0 ? 0 : v[c] > 1 ? 1 : v[c];
        p |= (uint32_t)lrintf(f * 255.0f) << (8 * c);
    }
    return p;
}

/* The same two passes on the CPU, in the same order of operations. */
static void blur_cpu(const uint32_t *src, uint32_t *dst, uint32_t w, uint32_t h, const float *wt)
{
    float *tmp = malloc((size_t)w * h * 16);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            for (int c = 0; c < 4; ++c) {
                float acc = 0;
                for (int k = -RADIUS; k <= RADIUS; ++k) {
                    int xx = (int)x + k;
                    xx = xx < 0 ? 0 : xx > (int)w - 1 ? (int)w - 1 : xx;
                    acc += wt[k + RADIUS] * unorm(src[(size_t)y * w + xx], c);
                }
                tmp[((size_t)y * w + x) * 4 + c] = acc;
            }
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            float v[4];
            for (int c = 0; c < 4; ++c) {
                float acc = 0;
                for (int k = -RADIUS; k <= RADIUS; ++k) {
                    int yy = (int)y + k;
                    yy = yy < 0 ? 0 : yy > (int)h - 1 ? (int)h - 1 : yy;
                    acc += wt[k + RADIUS] * tmp[((size_t)yy * w + x) * 4 + c];
                }
                v[c] = acc;
            }
            dst[(size_t)y * w + x] = pack(v);
        }
    free(tmp);
}

int main(int argc, char **argv)
{
    const char *in_path = argc > 1 ? argv[1] : NULL;
    const char *out_path = argc > 2 ? argv[2] : "blur_out.png";
    uint32_t w = 640, h = 480, *px = NULL;
    if (in_path) {
        png_image img;
        memset(&img, 0, sizeof(img));
        img.version = PNG_IMAGE_VERSION;
        if (!png_image_begin_read_from_file(&img, in_path)) {
            fprintf(stderr, "%s: %s\n", in_path, img.message);
            return 1;
        }
        img.format = PNG_FORMAT_RGBA;
        w = img.width;
        h = img.height;
        px = malloc(PNG_IMAGE_SIZE(img));
        if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
            fprintf(stderr, "%s: %s\n", in_path, img.message);
            return 1;
        }
    } else {
        px = make_image(w, h);
    }
    uint64_t npx = (uint64_t)w * h;

    /* Normalised Gaussian weights, sigma = RADIUS / 2. */
    float wt[2 * RADIUS + 1], sum = 0;
    for (int k = -RADIUS; k <= RADIUS; ++k)
        sum += wt[k + RADIUS] = expf(-(float)(k * k) / (2.0f * (RADIUS / 2.0f) * (RADIUS / 2.0f)));
    for (int k = 0; k < 2 * RADIUS + 1; ++k)
        wt[k] /= sum;

    vkc_context *ctx = sample_context();
    vkc_buffer *src, *tmp, *dst, *weights;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = npx * 4, .name = "image"}, &src));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = npx * 16, .name = "horizontal"}, &tmp));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = npx * 4, .name = "blurred"}, &dst));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = sizeof(wt), .name = "weights"},
                            &weights));
    CHECK(vkc_buffer_upload(src, 0, px, npx * 4));
    CHECK(vkc_buffer_upload(weights, 0, wt, sizeof(wt)));

    vkc_kernel *kh, *kv;
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_blur_h,
                                               .spirv_size = embed_shaders_blur_h_size,
                                               .name = "blur_h"},
                            &kh));
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_blur_v,
                                               .spirv_size = embed_shaders_blur_v_size,
                                               .name = "blur_v"},
                            &kv));
    uint32_t push[2] = {w, h};
    vkc_seq *seq;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "blur"}, &seq));
    vkc_arg ah[] = {{.buffer = src}, {.buffer = tmp}, {.buffer = weights}};
    CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = kh,
                                                     .args = ah,
                                                     .arg_count = 3,
                                                     .push = push,
                                                     .push_size = sizeof(push),
                                                     .groups = {(w + 255) / 256, h, 1}}));
    vkc_arg av[] = {{.buffer = tmp}, {.buffer = dst}, {.buffer = weights}};
    CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = kv,
                                                     .args = av,
                                                     .arg_count = 3,
                                                     .push = push,
                                                     .push_size = sizeof(push),
                                                     .groups = {(h + 255) / 256, w, 1}}));
    CHECK(vkc_seq_end(seq));
    vkc_ticket t;
    double t0 = sample_now();
    CHECK(vkc_seq_submit(seq, &t));
    CHECK(vkc_wait(ctx, t, UINT64_MAX));
    double dt = sample_now() - t0;

    uint32_t *out = malloc(npx * 4), *ref = malloc(npx * 4);
    CHECK(vkc_buffer_download(dst, 0, out, npx * 4));
    blur_cpu(px, ref, w, h, wt);
    uint64_t bad = 0, changed = 0;
    for (uint64_t i = 0; i < npx; ++i) {
        changed += out[i] != px[i];
        for (int c = 0; c < 4; ++c) {
            int d = (int)((out[i] >> (8 * c)) & 255) - (int)((ref[i] >> (8 * c)) & 255);
            if ((d > 1 || d < -1) && bad++ < 5)
                fprintf(stderr, "pixel %llu channel %d: GPU %u, CPU %u\n", (unsigned long long)i, c,
                        (out[i] >> (8 * c)) & 255, (ref[i] >> (8 * c)) & 255);
        }
    }
    int ok = bad == 0 && changed > 0;

    ok &= sample_write_png(out_path, out, w, h);
    printf("blur %ux%u, radius %d: %.3f ms; %s; wrote %s\n", w, h, RADIUS, dt * 1e3,
           ok ? "matches the CPU" : "WRONG", out_path);

    vkc_seq_destroy(seq);
    vkc_kernel_destroy(kh);
    vkc_kernel_destroy(kv);
    vkc_buffer_destroy(src);
    vkc_buffer_destroy(tmp);
    vkc_buffer_destroy(dst);
    vkc_buffer_destroy(weights);
    vkc_context_destroy(ctx);
    free(px);
    free(out);
    free(ref);
    return !ok || sample_validation_status();
}
