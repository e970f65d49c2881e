/* scan: an inclusive prefix sum over 2^26 uints in three passes.
 *
 * Teaches: a multi-pass algorithm as one recorded sequence. Pass 1 scans
 * tiles of 2048 elements inside workgroups (serial runs in registers,
 * subgroupInclusiveAdd across a subgroup, shared memory across subgroups)
 * and writes each tile's total; pass 2 scans those totals with the same
 * kernel in one workgroup; pass 3 adds each tile's offset. vkc sees the
 * read-after-write between passes and places the barriers; the sequence is
 * submitted several times without re-recording.
 *
 * Usage: scan [log2 n]   (default 26; 22 on a CPU device) */
#include "sample_common.h"

#include <string.h>

#include "embed_shaders.h"

#define TILE 2048u

int main(int argc, char **argv)
{
    vkc_context *ctx = sample_context();
    uint32_t log2n = sample_is_cpu(ctx) ? 22 : 26;
    if (argc > 1)
        log2n = (uint32_t)strtoul(argv[1], NULL, 10);
    uint64_t n = 1ull << log2n;
    const vkc_device_info *info = vkc_context_device(ctx);
    while (n * 4 > info->max_storage_buffer_range) {
        n /= 2;
        printf("note: %llu bytes exceed maxStorageBufferRange; n halved to %llu\n",
               (unsigned long long)n * 8, (unsigned long long)n);
    }
    uint32_t tiles = (uint32_t)((n + TILE - 1) / TILE);
    /* Pass 2 scans all tile totals in one workgroup: one tile of them. */
    uint32_t tile2 = (tiles + 255) / 256 * 256;

    uint32_t *x = malloc(n * 4), *y = malloc(n * 4);
    if (!x || !y)
        return 1;
    uint32_t state = 7;
    for (uint64_t i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        x[i] = state >> 24; /* 0..255: the total stays below 2^32 for n <= 2^24 ... */
    }
    /* ... and wraps modulo 2^32 above that, on the GPU and the CPU alike. */

    vkc_buffer *data, *sums, *dummy;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4, .name = "data"}, &data));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = tile2 * 4ull, .name = "tile sums"},
                            &sums));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 4, .name = "grand total"}, &dummy));

    vkc_kernel *local, *add;
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_scan_local,
                                               .spirv_size = embed_shaders_scan_local_size,
                                               .name = "scan_local"},
                            &local));
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_scan_add,
                                               .spirv_size = embed_shaders_scan_add_size,
                                               .name = "scan_add"},
                            &add));

    struct {
        uint32_t n, tile;
    } p1 = {(uint32_t)n, TILE}, p2 = {tiles, tile2};
    vkc_seq *seq;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "scan"}, &seq));
    vkc_arg a1[] = {{.buffer = data}, {.buffer = sums}};
    CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = local,
                                                     .args = a1,
                                                     .arg_count = 2,
                                                     .push = &p1,
                                                     .push_size = sizeof(p1),
                                                     .groups = {tiles, 1, 1},
                                                     .label = "scan tiles"}));
    vkc_arg a2[] = {{.buffer = sums}, {.buffer = dummy}};
    CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = local,
                                                     .args = a2,
                                                     .arg_count = 2,
                                                     .push = &p2,
                                                     .push_size = sizeof(p2),
                                                     .groups = {1, 1, 1},
                                                     .label = "scan tile totals"}));
    /* Pass 3: one workgroup per tile after the first (the shader's
     * grid-stride loop would also cope with fewer). */
    vkc_arg a3[] = {{.buffer = data}, {.buffer = sums}};
    CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = add,
                                                     .args = a3,
                                                     .arg_count = 2,
                                                     .push = &p1,
                                                     .push_size = sizeof(p1),
                                                     .groups = {tiles > 1 ? tiles - 1 : 1, 1, 1},
                                                     .label = "add tile offsets"}));
    CHECK(vkc_seq_end(seq));

    int ok = 1;
    double best = 1e30;
    for (int rep = 0; rep < 3 && ok; ++rep) {
        CHECK(vkc_buffer_upload(data, 0, x, n * 4));
        vkc_ticket t;
        double t0 = sample_now();
        CHECK(vkc_seq_submit(seq, &t));
        CHECK(vkc_wait(ctx, t, UINT64_MAX));
        double dt = sample_now() - t0;
        best = dt < best ? dt : best;
        CHECK(vkc_buffer_download(data, 0, y, n * 4));
        uint32_t acc = 0;
        for (uint64_t i = 0; i < n; ++i) {
            acc += x[i];
            if (y[i] != acc) {
                fprintf(stderr, "y[%llu] = %u, want %u\n", (unsigned long long)i, y[i], acc);
                ok = 0;
                break;
            }
        }
    }
    printf("inclusive scan over %llu uints: %s (%.3f ms, %.1f G elements/s)\n",
           (unsigned long long)n, ok ? "ok" : "WRONG", best * 1e3, (double)n / best * 1e-9);

    vkc_seq_destroy(seq);
    vkc_kernel_destroy(local);
    vkc_kernel_destroy(add);
    vkc_buffer_destroy(data);
    vkc_buffer_destroy(sums);
    vkc_buffer_destroy(dummy);
    vkc_context_destroy(ctx);
    free(x);
    free(y);
    return !ok || sample_validation_status();
}
