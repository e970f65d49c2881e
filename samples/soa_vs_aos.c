/* soa_vs_aos: the layout example of the article vkc grew from.
 *
 * Teaches: memory layout decides bandwidth. 32-byte particle records are
 * stored twice: as an array of structures (AoS) and as a structure of
 * arrays (SoA, eight float arrays). A kernel reads one field (the mass)
 * from each layout. With AoS every 4 useful bytes drag 28 unused ones
 * through the memory system; with SoA each byte fetched is used. The
 * program prints the useful bandwidth (bytes of the field read plus bytes
 * written, per second) and the bytes moved per record of each.
 *
 * Usage: soa_vs_aos [records]   (default 16M; 1M on a CPU device) */
#include "sample_common.h"

#include <string.h>

#include "embed_shaders.h"

typedef struct particle {
    float x, y, z, mass, vx, vy, vz, charge;
} particle;

/* Record one dispatch, submit it once to warm up, then time the best of
 * five submits of the same recording. */
static double run(vkc_context *ctx, vkc_kernel *k, vkc_buffer *in, uint64_t in_offset,
                  uint64_t in_size, vkc_buffer *out, uint32_t n)
{
    vkc_seq *seq;
    CHECK(vkc_seq_create(ctx, NULL, &seq));
    vkc_arg args[] = {{.buffer = in, .offset = in_offset, .size = in_size}, {.buffer = out}};
    CHECK(vkc_seq_dispatch(
        seq,
        &(vkc_dispatch_desc){
            .kernel = k, .args = args, .arg_count = 2, .push = &n, .push_size = 4, .count = n}));
    CHECK(vkc_seq_end(seq));
    vkc_ticket t;
    CHECK(vkc_seq_submit(seq, &t)); /* warm-up */
    CHECK(vkc_wait(ctx, t, UINT64_MAX));
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        double t0 = sample_now();
        CHECK(vkc_seq_submit(seq, &t));
        CHECK(vkc_wait(ctx, t, UINT64_MAX));
        double dt = sample_now() - t0;
        best = dt < best ? dt : best;
    }
    vkc_seq_destroy(seq);
    return best;
}

static int check(vkc_buffer *out, const particle *p, uint32_t n, float *tmp, const char *what)
{
    CHECK(vkc_buffer_download(out, 0, tmp, n * 4ull));
    for (uint32_t i = 0; i < n; ++i)
        if (tmp[i] != 2.0f * p[i].mass) {
            fprintf(stderr, "%s: out[%u] = %g, want %g\n", what, i, tmp[i], 2.0f * p[i].mass);
            return 0;
        }
    return 1;
}

int main(int argc, char **argv)
{
    vkc_context *ctx = sample_context();
    uint32_t n = sample_is_cpu(ctx) ? 1u << 20 : 16u << 20;
    if (argc > 1)
        n = (uint32_t)strtoul(argv[1], NULL, 10);
    const vkc_device_info *info = vkc_context_device(ctx);
    while ((uint64_t)n * sizeof(particle) > info->max_storage_buffer_range)
        n /= 2;

    particle *p = malloc(n * sizeof(particle));
    float *soa = malloc(n * 4ull * 8), *tmp = malloc(n * 4ull);
    if (!p || !soa || !tmp)
        return 1;
    for (uint32_t i = 0; i < n; ++i) {
        p[i] = (particle){
            (float)i, (float)(i % 17), 0.5f, 1.0f + (float)(i % 1000) * 0.25f, 0.1f, 0.2f,
            0.3f,     (float)(i & 1)};
        const float *f = &p[i].x;
        for (int k = 0; k < 8; ++k)
            soa[(uint64_t)k * n + i] = f[k]; /* field k's array */
    }

    vkc_buffer *aos_buf, *soa_buf, *out;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * sizeof(particle), .name = "aos"},
                            &aos_buf));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 32ull, .name = "soa"}, &soa_buf));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4ull, .name = "out"}, &out));
    CHECK(vkc_buffer_upload(aos_buf, 0, p, n * sizeof(particle)));
    CHECK(vkc_buffer_upload(soa_buf, 0, soa, n * 32ull));

    vkc_kernel *k_aos, *k_soa;
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_field_aos,
                                               .spirv_size = embed_shaders_field_aos_size,
                                               .name = "field_aos"},
                            &k_aos));
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_field_soa,
                                               .spirv_size = embed_shaders_field_soa_size,
                                               .name = "field_soa"},
                            &k_soa));

    double t_aos = run(ctx, k_aos, aos_buf, 0, 0, out, n);
    int ok = check(out, p, n, tmp, "AoS");
    CHECK(vkc_buffer_fill(out, 0, n * 4ull, 0));
    /* The SoA kernel binds only the mass array (field 3): bytes [3n*4, 4n*4). */
    double t_soa = run(ctx, k_soa, soa_buf, 3ull * n * 4, n * 4ull, out, n);
    ok = ok && check(out, p, n, tmp, "SoA");

    double useful = (double)n * 8; /* 4 bytes read + 4 written per record */
    printf("%u records of %zu bytes, reading one float field:\n", n, sizeof(particle));
    printf("  AoS: %8.3f ms  %7.1f GB/s useful  (%d bytes fetched per record)\n", t_aos * 1e3,
           useful / t_aos * 1e-9, (int)sizeof(particle) + 4);
    printf("  SoA: %8.3f ms  %7.1f GB/s useful  (%d bytes fetched per record)\n", t_soa * 1e3,
           useful / t_soa * 1e-9, 8);
    printf("  SoA / AoS speed: %.2fx; results %s\n", t_aos / t_soa, ok ? "ok" : "WRONG");

    vkc_kernel_destroy(k_aos);
    vkc_kernel_destroy(k_soa);
    vkc_buffer_destroy(aos_buf);
    vkc_buffer_destroy(soa_buf);
    vkc_buffer_destroy(out);
    vkc_context_destroy(ctx);
    free(p);
    free(soa);
    free(tmp);
    return !ok || sample_validation_status();
}
