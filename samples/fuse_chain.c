/* fuse_chain: an 8-step elementwise chain y = a_k * y + b_k (k = 1..8) built
 * with the fusion API. Prints the generated GLSL, runs the chain fused (one
 * dispatch, intermediates in registers) and unfused (8 dispatches through
 * temporaries), checks both against the CPU, and times both beside a plain
 * copy kernel (the bandwidth roof a fused chain should reach).
 *
 *   fuse_chain [elements] [repetitions]     (default 1048576 elements, 20)
 *
 * Exits non-zero on a mismatch. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <vkc/vkc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEPS 8

static const char *copy_glsl = "#version 450\n"
                               "layout(local_size_x_id = 0) in;\n"
                               "layout(std430, binding = 0) readonly buffer A { vec4 a[]; };\n"
                               "layout(std430, binding = 1) writeonly buffer B { vec4 b[]; };\n"
                               "layout(push_constant) uniform P { uint n; } pc;\n"
                               "void main() {\n"
                               "    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
                               "    for (uint i = gl_GlobalInvocationID.x; i < pc.n;) {\n"
                               "        b[i] = a[i];\n"
                               "        if (pc.n - i <= stride) break;\n"
                               "        i += stride;\n"
                               "    }\n"
                               "}\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ != VKC_SUCCESS) {                                                                   \
            fprintf(stderr, "%s failed: %s\n%s\n", #expr, vkc_result_string(r_),                   \
                    ctx ? vkc_context_last_error(ctx) : vkc_last_create_error());                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Submit a recorded sequence `reps` times; seconds per run. */
static double time_seq(vkc_context *ctx, vkc_seq *s, int reps)
{
    vkc_ticket t;
    CHECK(vkc_seq_submit(s, &t)); /* warm up */
    CHECK(vkc_wait(ctx, t, UINT64_MAX));
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        CHECK(vkc_seq_submit(s, &t));
    CHECK(vkc_wait(ctx, t, UINT64_MAX));
    return (now_s() - t0) / reps;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (1u << 20);
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    if (n == 0 || n % 4 || reps < 1) {
        fprintf(stderr, "usage: fuse_chain [elements, a multiple of 4] [repetitions]\n");
        return 2;
    }
    vkc_context *ctx = NULL;
    CHECK(vkc_context_create(&(vkc_context_desc){0}, &ctx));
    printf("device: %s\n", vkc_context_device(ctx)->name);

    /* The graph: one input y, 16 scalars, 8 fma, one output. */
    vkc_fuse *f = NULL;
    CHECK(vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "chain8"}, &f));
    vkc_value y;
    CHECK(vkc_fuse_input(f, VKC_DTYPE_F32, &y));
    for (int k = 0; k < STEPS; k++) {
        vkc_value a, b;
        CHECK(vkc_fuse_scalar(f, VKC_DTYPE_F32, &a));
        CHECK(vkc_fuse_scalar(f, VKC_DTYPE_F32, &b));
        CHECK(vkc_fuse_op(f, VKC_OP_FMA, (vkc_value[]){a, y, b}, 3, &y));
    }
    CHECK(vkc_fuse_output(f, y, NULL));
    CHECK(vkc_fuse_build(f));
    printf("---- generated GLSL (vec4 variant) ----\n%s---- end ----\n", vkc_fuse_source(f, true));

    vkc_scalar sc[2 * STEPS];
    for (int k = 0; k < STEPS; k++) {
        sc[2 * k].f32 = 1.0f + 0.01f * (float)k;    /* a_k */
        sc[2 * k + 1].f32 = 0.5f - 0.1f * (float)k; /* b_k */
    }
    float *host = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    if (!host || !got)
        return 1;
    for (uint64_t i = 0; i < n; i++)
        host[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;

    vkc_buffer *in = NULL, *out_f = NULL, *out_u = NULL;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4, .name = "y"}, &in));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4, .name = "fused"}, &out_f));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4, .name = "unfused"}, &out_u));
    CHECK(vkc_buffer_upload(in, 0, host, n * 4));

    vkc_arg ain = {.buffer = in}, aof = {.buffer = out_f}, aou = {.buffer = out_u};
    vkc_fuse_args args = {.inputs = &ain,
                          .input_count = 1,
                          .outputs = &aof,
                          .output_count = 1,
                          .scalars = sc,
                          .scalar_count = 2 * STEPS,
                          .count = n};
    vkc_seq *fused = NULL, *unfused = NULL, *copy = NULL;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "fused"}, &fused));
    CHECK(vkc_fuse_record(fused, f, &args));
    CHECK(vkc_seq_end(fused));
    args.outputs = &aou;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "unfused"}, &unfused));
    CHECK(vkc_fuse_record_unfused(unfused, f, &args));
    CHECK(vkc_seq_end(unfused));

    vkc_kernel *ck = NULL;
    CHECK(vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = copy_glsl, .name = "copy"}, &ck));
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "copy"}, &copy));
    uint32_t quads = (uint32_t)(n / 4);
    CHECK(vkc_seq_dispatch(copy, &(vkc_dispatch_desc){.kernel = ck,
                                                      .args = (vkc_arg[]){ain, aof},
                                                      .arg_count = 2,
                                                      .push = &quads,
                                                      .push_size = 4,
                                                      .count = quads}));
    CHECK(vkc_seq_end(copy));

    double t_copy = time_seq(ctx, copy, reps);
    double t_fused = time_seq(ctx, fused, reps);
    double t_unfused = time_seq(ctx, unfused, reps);

    /* check both against the CPU */
    int bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        CHECK(vkc_buffer_download(mode ? out_u : out_f, 0, got, n * 4));
        for (uint64_t i = 0; i < n; i++) {
            float w = host[i];
            for (int k = 0; k < STEPS; k++)
                w = fmaf(sc[2 * k].f32, w, sc[2 * k + 1].f32);
            if (fabsf(got[i] - w) > 1e-5f * fmaxf(1.0f, fabsf(w))) {
                if (bad++ < 5)
                    fprintf(stderr, "%s: element %llu: %g, want %g\n", mode ? "unfused" : "fused",
                            (unsigned long long)i, got[i], w);
            }
        }
    }
    double gb = 2.0 * (double)n * 4 / 1e9; /* read + write */
    printf("%llu elements, %d runs each (wall time per run, submit to completion):\n",
           (unsigned long long)n, reps);
    printf("  copy      %9.3f ms  %7.1f GB/s\n", t_copy * 1e3, gb / t_copy);
    printf("  fused     %9.3f ms  %7.1f GB/s  (%.2fx the copy)\n", t_fused * 1e3, gb / t_fused,
           t_fused / t_copy);
    printf("  unfused   %9.3f ms  %7.1f GB/s  (%.2fx the fused)\n", t_unfused * 1e3, gb / t_unfused,
           t_unfused / t_fused);
    printf("%s\n", bad ? "MISMATCH" : "fused and unfused match the CPU");

    vkc_seq_destroy(fused);
    vkc_seq_destroy(unfused);
    vkc_seq_destroy(copy);
    vkc_kernel_destroy(ck);
    vkc_fuse_destroy(f);
    vkc_buffer_destroy(in);
    vkc_buffer_destroy(out_f);
    vkc_buffer_destroy(out_u);
    vkc_context_destroy(ctx);
    free(host);
    free(got);
    return bad ? 1 : 0;
}
