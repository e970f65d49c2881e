/* saxpy: the smallest complete vkc program.
 *
 * Upload two arrays, run y = a*x + y on the GPU with a kernel embedded at
 * build time (samples/shaders/saxpy.comp, compiled by vkc_add_shaders), read
 * y back and check it against the CPU. Usage: saxpy [n] */
#include <vkc/vkc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sample_shaders.h" /* generated: sample_shaders_saxpy, sample_shaders_saxpy_size */

#define CHECK(call)                                                                                \
    do {                                                                                           \
        vkc_result r_ = (call);                                                                    \
        if (r_ < 0) {                                                                              \
            fprintf(stderr, "%s:%d: %s\n  %s\n", __FILE__, __LINE__, vkc_result_string(r_),        \
                    vkc_context_last_error(ctx));                                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10u * 1000 * 1000;
    const float a = 2.5f;

    /* 1. A context on the best device (zero desc = defaults). */
    vkc_context *ctx = NULL;
    vkc_result cr = vkc_context_create(&(vkc_context_desc){0}, &ctx);
    if (cr < 0) {
        fprintf(stderr, "no context: %s\n  %s\n", vkc_result_string(cr), vkc_last_create_error());
        return 1;
    }
    printf("device: %s\n", vkc_context_device(ctx)->name);

    /* 2. Two device buffers, filled from the host. */
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    float *out = malloc(n * sizeof(float));
    for (uint32_t i = 0; i < n; ++i) {
        x[i] = (float)(i % 1000) * 0.5f;
        y[i] = (float)(i % 7);
    }
    vkc_buffer *bx, *by;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4ull, .name = "x"}, &bx));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4ull, .name = "y"}, &by));
    CHECK(vkc_buffer_upload(bx, 0, x, n * 4ull));
    CHECK(vkc_buffer_upload(by, 0, y, n * 4ull));

    /* 3. The kernel: SPIR-V embedded at build time. Its bindings and push
     * constants are reflected, so a wrong dispatch is an error, not a crash. */
    vkc_kernel *k;
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = sample_shaders_saxpy,
                                               .spirv_size = sample_shaders_saxpy_size,
                                               .name = "saxpy"},
                            &k));

    /* 4. Dispatch by element count: vkc sizes the grid for the device. */
    struct {
        uint32_t n;
        float a;
    } push = {n, a};
    vkc_arg args[] = {{.buffer = bx}, {.buffer = by}};
    CHECK(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                                 .args = args,
                                                 .arg_count = 2,
                                                 .push = &push,
                                                 .push_size = sizeof(push),
                                                 .count = n}));

    /* 5. Download (flushes and waits for the dispatch first) and check. */
    CHECK(vkc_buffer_download(by, 0, out, n * 4ull));
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
        float want = a * x[i] + y[i];
        if (fabsf(out[i] - want) > 1e-5f * fabsf(want) + 1e-6f && bad++ < 5)
            fprintf(stderr, "y[%u] = %g, want %g\n", i, out[i], want);
    }
    printf("saxpy over %u floats: %s\n", n, bad ? "WRONG" : "ok");

    vkc_kernel_destroy(k);
    vkc_buffer_destroy(bx);
    vkc_buffer_destroy(by);
    vkc_context_destroy(ctx);
    free(x);
    free(y);
    free(out);
    return bad ? 1 : 0;
}
