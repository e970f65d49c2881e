/* reduce: the sum and the maximum of 100M floats in two passes.
 *
 * Teaches: subgroup arithmetic (subgroupAdd / subgroupMax) and shared memory
 * inside a workgroup, a fixed grid of workgroups that each reduce a
 * grid-stride slice, and a second pass over the per-workgroup results. Two
 * dispatches in one sequence: vkc sees that the second reads what the first
 * wrote and puts one barrier between them. Buffers larger than the device's
 * maxStorageBufferRange are bound in chunks.
 *
 * Usage: reduce [n]   (default 100M; 4M on a CPU device) */
#include "sample_common.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "embed_shaders.h"

#define GROUPS_PER_CHUNK 1024u /* first-pass workgroups per bound chunk */

int main(int argc, char **argv)
{
    vkc_context *ctx = sample_context();
    uint64_t n = sample_is_cpu(ctx) ? 4u << 20 : 100u * 1000 * 1000;
    if (argc > 1)
        n = strtoull(argv[1], NULL, 10);
    if (n == 0)
        n = 1;

    /* Input: deterministic values in [-1, 1) with a single known peak. */
    float *x = malloc(n * sizeof(float));
    if (!x)
        return 1;
    uint32_t state = 12345;
    for (uint64_t i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float)(state >> 8) / 8388608.0f - 1.0f;
    }
    x[n / 3] = 7.25f;

    /* Bind at most maxStorageBufferRange bytes per dispatch. */
    const vkc_device_info *info = vkc_context_device(ctx);
    uint64_t chunk = info->max_storage_buffer_range / 4;
    chunk -= chunk % 1024; /* keeps chunk offsets aligned */
    uint64_t chunks = (n + chunk - 1) / chunk;
    uint32_t partials = (uint32_t)(chunks * GROUPS_PER_CHUNK);

    vkc_buffer *in, *mid, *out;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4, .name = "input"}, &in));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = partials * 8ull, .name = "partials"},
                            &mid));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 8, .name = "result"}, &out));
    CHECK(vkc_buffer_upload(in, 0, x, n * 4));

    vkc_kernel *k;
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_reduce,
                                               .spirv_size = embed_shaders_reduce_size,
                                               .name = "reduce"},
                            &k));

    vkc_seq *seq;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "reduce"}, &seq));
    for (uint64_t c = 0; c < chunks; ++c) {
        uint64_t first = c * chunk, count = n - first < chunk ? n - first : chunk;
        struct {
            uint32_t n, pairs;
        } push = {(uint32_t)count, 0};
        vkc_arg args[] = {{.buffer = in, .offset = first * 4, .size = count * 4},
                          {.buffer = mid,
                           .offset = c * GROUPS_PER_CHUNK * 8ull,
                           .size = GROUPS_PER_CHUNK * 8ull}};
        CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = k,
                                                         .args = args,
                                                         .arg_count = 2,
                                                         .push = &push,
                                                         .push_size = sizeof(push),
                                                         .groups = {GROUPS_PER_CHUNK, 1, 1},
                                                         .label = "reduce pass 1"}));
    }
    /* Pass 2: one workgroup over all partial pairs. */
    struct {
        uint32_t n, pairs;
    } push2 = {partials, 1};
    vkc_arg args2[] = {{.buffer = mid}, {.buffer = out}};
    CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = k,
                                                     .args = args2,
                                                     .arg_count = 2,
                                                     .push = &push2,
                                                     .push_size = sizeof(push2),
                                                     .groups = {1, 1, 1},
                                                     .label = "reduce pass 2"}));
    CHECK(vkc_seq_end(seq));

    /* Run it a few times: the recorded sequence is replayed as it is. */
    vkc_ticket t;
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        double t0 = sample_now();
        CHECK(vkc_seq_submit(seq, &t));
        CHECK(vkc_wait(ctx, t, UINT64_MAX));
        double dt = sample_now() - t0;
        best = dt < best ? dt : best;
    }
    float res[2];
    CHECK(vkc_buffer_download(out, 0, res, sizeof(res)));

    /* CPU reference: a double sum and a plain max. */
    double sum = 0;
    float mx = -FLT_MAX;
    for (uint64_t i = 0; i < n; ++i) {
        sum += x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    /* float partial sums: allow a relative error that grows with sqrt(n). */
    double tol = 1e-6 * sqrt((double)n) * 8.0 + 1e-3;
    int ok = fabs(res[0] - sum) <= tol && res[1] == mx;
    printf("reduce over %llu floats: sum %.4f (CPU %.4f), max %g (CPU %g): %s\n",
           (unsigned long long)n, res[0], sum, res[1], mx, ok ? "ok" : "WRONG");
    printf("  %.3f ms, %.1f GB/s\n", best * 1e3, (double)n * 4 / best * 1e-9);

    vkc_seq_destroy(seq);
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(in);
    vkc_buffer_destroy(mid);
    vkc_buffer_destroy(out);
    vkc_context_destroy(ctx);
    free(x);
    return !ok || sample_validation_status();
}
