/* postfx: the renderer's post-process chain, its parameters and its CPU
 * reference. Shared by samples/renderer.c and vkc-bench's postfx scenario
 * so that both check the GPU against the same plain C code.
 *
 * The chain (samples/shaders/postfx_*.comp), on a linear HDR frame:
 *   1. bright: 2x2 box downsample to half resolution, then a soft threshold
 *      on luminance (colour scaled by max(l - T, 0) / l);
 *   2. blur_h, blur_v: a separable Gaussian of radius POSTFX_RADIUS at half
 *      resolution, each line of a workgroup loaded into shared memory once;
 *   3. composite: the bloom upsampled bilinearly (by hand, with loads, so
 *      the CPU can follow it exactly), added to the frame, exposure, the
 *      ACES fit of Narkowicz (2015), gamma 1/2.2, stored as RGBA8.
 * Intermediates are RGBA16F images; the reference rounds to fp16 at the
 * same points (postfx_half_round). postfx_vkc_record records the chain into
 * a vkc sequence. */
#ifndef VKC_POSTFX_H
#define VKC_POSTFX_H

#include <vkc/vkc.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POSTFX_RADIUS 8 /* as in shaders/postfx_blur.comp */
#define POSTFX_TILE 128 /* pixels of one line per blur workgroup */
#define POSTFX_WG 8     /* bright and composite: 8x8 workgroups */

/* Push constants, laid out as the shaders declare them (std430). */
typedef struct postfx_bright_push {
    uint32_t src_w, src_h, dst_w, dst_h;
    float threshold;
} postfx_bright_push;

typedef struct postfx_blur_push {
    uint32_t w, h, dir; /* dir 0: along x, 1: along y */
    float weights[POSTFX_RADIUS + 1];
} postfx_blur_push;

typedef struct postfx_composite_push {
    uint32_t w, h, half_w, half_h;
    float bloom, exposure;
} postfx_composite_push;

typedef struct postfx_params {
    uint32_t w, h, half_w, half_h;
    float threshold, bloom, exposure;
    float weights[POSTFX_RADIUS + 1]; /* centre first; sum over -R..R is 1 */
} postfx_params;

static inline postfx_params postfx_defaults(uint32_t w, uint32_t h)
{
    postfx_params p = {w, h, (w + 1) / 2, (h + 1) / 2, 1.0f, 0.8f, 0.9f, {0}};
    const float sigma = 3.5f;
    double sum = 0;
    for (int k = 0; k <= POSTFX_RADIUS; ++k) {
        p.weights[k] = expf(-(float)(k * k) / (2.0f * sigma * sigma));
        sum += (k ? 2.0 : 1.0) * p.weights[k];
    }
    for (int k = 0; k <= POSTFX_RADIUS; ++k)
        p.weights[k] = (float)(p.weights[k] / sum);
    return p;
}

static inline postfx_bright_push postfx_bright_args(const postfx_params *p)
{
    return (postfx_bright_push){p->w, p->h, p->half_w, p->half_h, p->threshold};
}

static inline postfx_blur_push postfx_blur_args(const postfx_params *p, uint32_t dir)
{
    postfx_blur_push b = {p->half_w, p->half_h, dir, {0}};
    memcpy(b.weights, p->weights, sizeof(b.weights));
    return b;
}

static inline postfx_composite_push postfx_composite_args(const postfx_params *p)
{
    return (postfx_composite_push){p->w, p->h, p->half_w, p->half_h, p->bloom, p->exposure};
}

/* IEEE half (bits) to float. */
static inline float postfx_half_to_float(uint16_t h)
{
    uint32_t sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 1024), (int)e - 25);
    return sign ? -v : v;
}

/* x rounded to the nearest fp16 value (ties to even), as a float: what an
 * RGBA16F store keeps. Our values stay far below fp16's maximum. */
static inline float postfx_half_round(float x)
{
    if (x == 0 || !isfinite(x))
        return x;
    int e;
    frexpf(x, &e);                       /* |x| = m * 2^e, m in [0.5, 1) */
    int q = e - 11 < -24 ? -24 : e - 11; /* 11 significant bits, or subnormal steps */
    return ldexpf(rintf(ldexpf(x, -q)), q);
}

/* float to IEEE half bits, rounded to nearest (finite values below 65504). */
static inline uint16_t postfx_half_bits(float x)
{
    float r = postfx_half_round(x);
    uint16_t sign = signbit(r) ? 0x8000u : 0u;
    r = fabsf(r);
    if (r < ldexpf(1.0f, -14)) /* zero or subnormal: steps of 2^-24 */
        return (uint16_t)(sign | (uint16_t)lrintf(ldexpf(r, 24)));
    int e;
    float m = frexpf(r, &e); /* r = 2m * 2^(e - 1), 2m in [1, 2) */
    return (uint16_t)(sign | (uint16_t)((e + 14) << 10) |
                      (uint16_t)lrintf((2.0f * m - 1.0f) * 1024.0f));
}

static inline float postfx_luma(const float *c)
{
    return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
}

/* Pass 1: hdr (w x h, RGBA float) -> dst (half_w x half_h). */
static inline void postfx_cpu_bright(const postfx_params *p, const float *hdr, float *dst)
{
    for (uint32_t y = 0; y < p->half_h; ++y)
        for (uint32_t x = 0; x < p->half_w; ++x) {
            float c[3] = {0, 0, 0};
            for (uint32_t j = 0; j < 2; ++j)
                for (uint32_t i = 0; i < 2; ++i) {
                    uint32_t sx = 2 * x + i < p->w ? 2 * x + i : p->w - 1;
                    uint32_t sy = 2 * y + j < p->h ? 2 * y + j : p->h - 1;
                    for (int k = 0; k < 3; ++k)
                        c[k] += hdr[((size_t)sy * p->w + sx) * 4 + k];
                }
            for (int k = 0; k < 3; ++k)
                c[k] *= 0.25f;
            float l = postfx_luma(c);
            float s = fmaxf(l - p->threshold, 0.0f) / fmaxf(l, 1e-4f);
            float *o = dst + ((size_t)y * p->half_w + x) * 4;
            for (int k = 0; k < 3; ++k)
                o[k] = postfx_half_round(c[k] * s);
            o[3] = 1.0f;
        }
}

/* Pass 2: one direction of the blur at half resolution, edges clamped. */
static inline void postfx_cpu_blur(const postfx_params *p, const float *src, float *dst,
                                   uint32_t dir)
{
    uint32_t w = p->half_w, h = p->half_h;
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            float acc[3];
            const float *c = src + ((size_t)y * w + x) * 4;
            for (int k = 0; k < 3; ++k)
                acc[k] = p->weights[0] * c[k];
            for (int t = 1; t <= POSTFX_RADIUS; ++t) {
                int lo, hi;
                const float *a, *b;
                if (dir == 0) {
                    lo = (int)x - t < 0 ? 0 : (int)x - t;
                    hi = (int)x + t > (int)w - 1 ? (int)w - 1 : (int)x + t;
                    a = src + ((size_t)y * w + (uint32_t)lo) * 4;
                    b = src + ((size_t)y * w + (uint32_t)hi) * 4;
                } else {
                    lo = (int)y - t < 0 ? 0 : (int)y - t;
                    hi = (int)y + t > (int)h - 1 ? (int)h - 1 : (int)y + t;
                    a = src + ((size_t)lo * w + x) * 4;
                    b = src + ((size_t)hi * w + x) * 4;
                }
                for (int k = 0; k < 3; ++k)
                    acc[k] += p->weights[t] * (a[k] + b[k]);
            }
            float *o = dst + ((size_t)y * w + x) * 4;
            for (int k = 0; k < 3; ++k)
                o[k] = postfx_half_round(acc[k]);
            o[3] = 1.0f;
        }
}

static inline float postfx_aces(float x)
{
    float t = (x * (2.51f * x + 0.03f)) / (x * (2.43f * x + 0.59f) + 0.14f);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

static inline int postfx_clampi(int v, int last)
{
    return v < 0 ? 0 : v > last ? last : v;
}

/* Pass 3: hdr + bloom -> RGBA8 (rounded to nearest). */
static inline void postfx_cpu_composite(const postfx_params *p, const float *hdr,
                                        const float *bloom, uint8_t *ldr)
{
    int hw = (int)p->half_w - 1, hh = (int)p->half_h - 1;
    for (uint32_t y = 0; y < p->h; ++y)
        for (uint32_t x = 0; x < p->w; ++x) {
            float u = ((float)x + 0.5f) * 0.5f - 0.5f, v = ((float)y + 0.5f) * 0.5f - 0.5f;
            float fu = floorf(u), fv = floorf(v);
            float ax = u - fu, ay = v - fv;
            int x0 = (int)fu, y0 = (int)fv;
            int xa = postfx_clampi(x0, hw), xb = postfx_clampi(x0 + 1, hw);
            int ya = postfx_clampi(y0, hh), yb = postfx_clampi(y0 + 1, hh);
            const float *c00 = bloom + ((size_t)ya * p->half_w + (size_t)xa) * 4;
            const float *c10 = bloom + ((size_t)ya * p->half_w + (size_t)xb) * 4;
            const float *c01 = bloom + ((size_t)yb * p->half_w + (size_t)xa) * 4;
            const float *c11 = bloom + ((size_t)yb * p->half_w + (size_t)xb) * 4;
            const float *h = hdr + ((size_t)y * p->w + x) * 4;
            uint8_t *o = ldr + ((size_t)y * p->w + x) * 4;
            for (int k = 0; k < 3; ++k) {
                float top = c00[k] * (1.0f - ax) + c10[k] * ax;
                float bot = c01[k] * (1.0f - ax) + c11[k] * ax;
                float b = top * (1.0f - ay) + bot * ay;
                float c = p->exposure * (h[k] + p->bloom * b);
                float t = powf(postfx_aces(c), 1.0f / 2.2f);
                o[k] = (uint8_t)lrintf(t * 255.0f);
            }
            o[3] = 255;
        }
}

/* How far the device's RGBA8 output may be from the CPU reference (postfx_cpu
 * on the same HDR input), in steps of
 * 1/255 per channel:
 * - The input is bit-identical on both sides; fp32 arithmetic differs only
 *   in order and contraction (< 1e-5 absolute here), and the shader's pow,
 *   exp2/log2 and division are within a few ulp.
 * - Each of the three RGBA16F stores (bright, blur h, blur v) may round the
 *   other way than the reference's round-to-nearest (or toward zero, which
 *   Vulkan allows): at most one fp16 ulp, 2^-10 relative. The blur's
 *   weights are positive and sum to 1, so relative errors add up: the
 *   bloom is within 3 * 2^-10 = 2.9e-3 relative, and so is the composite
 *   colour c (the HDR term is exact).
 * - Output = (ACES(c))^(1/2.2); its sensitivity to a relative change of c,
 *   d out / (dc / c) = g * t^g * (c ACES'(c) / ACES(c)) with g = 1/2.2, is
 *   at most 0.281 (numerically, over c in (0, ACES^-1(1))). So before
 *   quantisation the two differ by < 0.281 * 2.9e-3 = 8.3e-4 = 0.21/255.
 * - Quantisation: the reference rounds to nearest; the device rounds to
 *   nearest (or toward zero): values 0.21 steps apart round at most 1 step
 *   apart (2 with truncation). Tolerance: 2 steps. */
#define POSTFX_TOLERANCE 2

typedef struct postfx_diff {
    uint32_t max;  /* largest |a - b| over all colour channels */
    uint32_t over; /* pixels with a channel differing by more than POSTFX_TOLERANCE */
} postfx_diff;

static inline postfx_diff postfx_compare(const uint8_t *a, const uint8_t *b, size_t pixels)
{
    postfx_diff d = {0, 0};
    for (size_t i = 0; i < pixels; ++i) {
        uint32_t m = 0;
        for (int c = 0; c < 4; ++c) {
            uint32_t x = (uint32_t)abs((int)a[4 * i + c] - (int)b[4 * i + c]);
            m = x > m ? x : m;
        }
        d.max = m > d.max ? m : d.max;
        d.over += m > POSTFX_TOLERANCE;
    }
    return d;
}

/* The whole chain on the CPU: hdr (RGBA float) -> ldr (RGBA8). Returns 0
 * when out of memory. */
static inline int postfx_cpu(const postfx_params *p, const float *hdr, uint8_t *ldr)
{
    size_t n = (size_t)p->half_w * p->half_h * 4;
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    postfx_cpu_bright(p, hdr, a);
    postfx_cpu_blur(p, a, b, 0);
    postfx_cpu_blur(p, b, a, 1);
    postfx_cpu_composite(p, hdr, a, ldr);
    free(a);
    free(b);
    return 1;
}

/* Workgroup counts of pass i (0 bright, 1 blur h, 2 blur v, 3 composite). */
static inline void postfx_groups(const postfx_params *p, int pass, uint32_t g[3])
{
    uint32_t n[4][2] = {
        {p->half_w, p->half_h}, {p->half_w, p->half_h}, {p->half_h, p->half_w}, {p->w, p->h}};
    uint32_t per = pass == 1 || pass == 2 ? POSTFX_TILE : POSTFX_WG;
    g[0] = (n[pass][0] + per - 1) / per;
    /* the blur: one workgroup row per line */
    g[1] = pass == 1 || pass == 2 ? n[pass][1] : (n[pass][1] + per - 1) / per;
    g[2] = 1;
}

/* What the chain runs on in vkc: its kernels (from postfx_*.comp) and
 * images (hdr and ldr w x h, a and b half_w x half_h, all storage). */
typedef struct postfx_vkc {
    vkc_kernel *bright, *blur, *composite;
    vkc_image *hdr, *a, *b, *ldr;
} postfx_vkc;

/* Record the chain's dispatches into seq: passes 4 for all of it, 3 to
 * leave the composite out (the output then keeps what it held: a stale
 * frame, for the check's own test). vkc inserts the barriers and layout
 * transitions: the vertical blur writes a, which the bright pass wrote and
 * the horizontal blur read. Returns the first error. */
static inline vkc_result postfx_vkc_record(vkc_seq *seq, const postfx_vkc *c,
                                           const postfx_params *p, int passes)
{
    postfx_bright_push bp = postfx_bright_args(p);
    postfx_blur_push hp = postfx_blur_args(p, 0), vp = postfx_blur_args(p, 1);
    postfx_composite_push cp = postfx_composite_args(p);
    vkc_arg args[4][3] = {{{.image = c->hdr}, {.image = c->a}},
                          {{.image = c->a}, {.image = c->b}},
                          {{.image = c->b}, {.image = c->a}},
                          {{.image = c->hdr}, {.image = c->a}, {.image = c->ldr}}};
    vkc_kernel *k[4] = {c->bright, c->blur, c->blur, c->composite};
    const void *push[4] = {&bp, &hp, &vp, &cp};
    uint32_t size[4] = {sizeof(bp), sizeof(hp), sizeof(vp), sizeof(cp)};
    static const char *label[4] = {"postfx_bright", "postfx_blur_h", "postfx_blur_v",
                                   "postfx_composite"};
    vkc_result res = VKC_SUCCESS;
    for (int i = 0; res >= 0 && i < passes && i < 4; ++i) {
        vkc_dispatch_desc d = {.kernel = k[i],
                               .args = args[i],
                               .arg_count = i == 3 ? 3 : 2,
                               .push = push[i],
                               .push_size = size[i],
                               .label = label[i]};
        postfx_groups(p, i, d.groups);
        res = vkc_seq_dispatch(seq, &d);
    }
    return res;
}

#endif
