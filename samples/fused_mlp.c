/* fused_mlp: one MLP layer, y = dropout(relu(x W + bias)), three ways:
 *   1. a tiled matrix-multiply shader with bias, ReLU and dropout fused into
 *      its epilogue (one dispatch; the product never leaves registers);
 *   2. the plain matrix multiply, then bias + ReLU + dropout as one fused
 *      elementwise shader from the fusion API (two dispatches);
 *   3. the plain matrix multiply, then the same graph unfused (one dispatch
 *      per operation: four dispatches, the intermediate written and read
 *      three more times).
 * All three are checked against a CPU reference and timed.
 *
 *   fused_mlp [M] [K] [N] [repetitions]      (default 256 256 256, 10)
 *
 * Dropout is the fusion API's: element i = row * N + col keeps v / p when
 * u < p, u from vkc_pcg(i + vkc_pcg(seed)) (see vkc.h). Exits non-zero on a
 * mismatch. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <vkc/vkc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *matmul_glsl =
    "#version 450\n"
    "layout(local_size_x = 16, local_size_y = 16) in;\n"
    "layout(std430, binding = 0) readonly buffer X { float x[]; };\n" /* M x K */
    "layout(std430, binding = 1) readonly buffer W { float w[]; };\n" /* K x N */
    "#ifdef EPILOGUE\n"
    "layout(std430, binding = 2) readonly buffer Bias { float bias[]; };\n"
    "layout(std430, binding = 3) writeonly buffer Y { float y[]; };\n"
    "#else\n"
    "layout(std430, binding = 2) writeonly buffer Y { float y[]; };\n"
    "#endif\n"
    "layout(push_constant) uniform P { uint M, N, K; float keep; uint seed; } pc;\n"
    "shared float ta[16][17];\n"
    "shared float tb[16][17];\n"
    "uint pcg(uint v)\n"
    "{\n"
    "    uint s = v * 747796405u + 2891336453u;\n"
    "    uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;\n"
    "    return (w >> 22u) ^ w;\n"
    "}\n"
    "void main()\n"
    "{\n"
    "    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;\n"
    "    uint row = gl_WorkGroupID.y * 16u + ly, col = gl_WorkGroupID.x * 16u + lx;\n"
    "    float acc = 0.0;\n"
    "    for (uint t = 0u; t < pc.K; t += 16u) {\n"
    "        ta[ly][lx] = (row < pc.M && t + lx < pc.K) ? x[row * pc.K + t + lx] : 0.0;\n"
    "        tb[ly][lx] = (t + ly < pc.K && col < pc.N) ? w[(t + ly) * pc.N + col] : 0.0;\n"
    "        barrier();\n"
    "        for (uint k = 0u; k < 16u; k++)\n"
    "            acc += ta[ly][k] * tb[k][lx];\n"
    "        barrier();\n"
    "    }\n"
    "    if (row < pc.M && col < pc.N) {\n"
    "#ifdef EPILOGUE\n"
    "        uint i = row * pc.N + col;\n"
    "        precise float v = max(acc + bias[col], 0.0);\n"
    "        float u = float(pcg(i + pcg(pc.seed)) >> 8u) * (1.0 / 16777216.0);\n"
    "        y[i] = u < pc.keep ? v * (1.0 / pc.keep) : 0.0;\n"
    "#else\n"
    "        y[row * pc.N + col] = acc;\n"
    "#endif\n"
    "    }\n"
    "}\n";

typedef struct push {
    uint32_t m, n, k;
    float keep;
    uint32_t seed;
} push;

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ != VKC_SUCCESS) {                                                                   \
            fprintf(stderr, "%s failed: %s\n%s\n", #expr, vkc_result_string(r_),                   \
                    ctx ? vkc_context_last_error(ctx) : vkc_last_create_error());                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double time_seq(vkc_context *ctx, vkc_seq *s, int reps)
{
    vkc_ticket t;
    CHECK(vkc_seq_submit(s, &t));
    CHECK(vkc_wait(ctx, t, UINT64_MAX));
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        CHECK(vkc_seq_submit(s, &t));
    CHECK(vkc_wait(ctx, t, UINT64_MAX));
    return (now_s() - t0) / reps;
}

static uint32_t pcg(uint32_t v)
{
    uint32_t s = v * 747796405u + 2891336453u;
    uint32_t w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

int main(int argc, char **argv)
{
    uint32_t M = argc > 1 ? (uint32_t)atoi(argv[1]) : 256;
    uint32_t K = argc > 2 ? (uint32_t)atoi(argv[2]) : 256;
    uint32_t N = argc > 3 ? (uint32_t)atoi(argv[3]) : 256;
    int reps = argc > 4 ? atoi(argv[4]) : 10;
    if (!M || !K || !N || reps < 1) {
        fprintf(stderr, "usage: fused_mlp [M] [K] [N] [repetitions]\n");
        return 2;
    }
    const float keep = 0.8f;
    const uint32_t seed = 2024;
    vkc_context *ctx = NULL;
    CHECK(vkc_context_create(&(vkc_context_desc){0}, &ctx));
    printf("device: %s; x %ux%u, W %ux%u\n", vkc_context_device(ctx)->name, M, K, K, N);

    float *x = malloc((size_t)M * K * 4), *w = malloc((size_t)K * N * 4), *b = malloc(N * 4);
    float *ref = malloc((size_t)M * N * 4), *mag = malloc((size_t)M * N * 4),
          *got = malloc((size_t)M * N * 4);
    if (!x || !w || !b || !ref || !mag || !got)
        return 1;
    uint32_t st = 12345;
    for (size_t i = 0; i < (size_t)M * K; i++)
        x[i] = (float)((st = st * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < (size_t)K * N; i++)
        w[i] = (float)((st = st * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (uint32_t i = 0; i < N; i++)
        b[i] = (float)((st = st * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    /* CPU reference in double; mag = sum |x||w| bounds the rounding error */
    for (uint32_t r = 0; r < M; r++)
        for (uint32_t c = 0; c < N; c++) {
            double s = 0, m = 0;
            for (uint32_t k = 0; k < K; k++) {
                s += (double)x[(size_t)r * K + k] * w[(size_t)k * N + c];
                m += fabs((double)x[(size_t)r * K + k] * w[(size_t)k * N + c]);
            }
            double v = s + b[c];
            v = v > 0 ? v : 0;
            uint32_t i = r * N + c;
            float u = (float)(pcg(i + pcg(seed)) >> 8) * (1.0f / 16777216.0f);
            ref[i] = u < keep ? (float)v * (1.0f / keep) : 0.0f;
            mag[i] = (float)((m + fabs(b[c])) / keep);
        }

    vkc_buffer *bx, *bw, *bb, *bh, *by[3];
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = (uint64_t)M * K * 4}, &bx));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = (uint64_t)K * N * 4}, &bw));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = (uint64_t)N * 4}, &bb));
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = (uint64_t)M * N * 4}, &bh));
    for (int i = 0; i < 3; i++)
        CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = (uint64_t)M * N * 4}, &by[i]));
    CHECK(vkc_buffer_upload(bx, 0, x, (uint64_t)M * K * 4));
    CHECK(vkc_buffer_upload(bw, 0, w, (uint64_t)K * N * 4));
    CHECK(vkc_buffer_upload(bb, 0, b, (uint64_t)N * 4));

    vkc_kernel *mm = NULL, *mm_epi = NULL;
    CHECK(vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = matmul_glsl, .name = "matmul"},
                                 &mm));
    CHECK(vkc_kernel_create_glsl(ctx,
                                 &(vkc_glsl_desc){.source = matmul_glsl,
                                                  .name = "matmul_bias_relu_dropout",
                                                  .defines = (const char *[]){"EPILOGUE"},
                                                  .define_count = 1},
                                 &mm_epi));

    /* The epilogue as a fusion graph: h + bias (row-broadcast), relu,
     * dropout. */
    vkc_fuse *epi = NULL;
    CHECK(vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "bias_relu_dropout"}, &epi));
    vkc_value h, bias, p, sd, v;
    CHECK(vkc_fuse_input(epi, VKC_DTYPE_F32, &h));
    CHECK(
        vkc_fuse_input_ex(epi, &(vkc_fuse_input_desc){.type = VKC_DTYPE_F32, .period = N}, &bias));
    CHECK(vkc_fuse_scalar(epi, VKC_DTYPE_F32, &p));
    CHECK(vkc_fuse_scalar(epi, VKC_DTYPE_U32, &sd));
    CHECK(vkc_fuse_op(epi, VKC_OP_ADD, (vkc_value[]){h, bias}, 2, &v));
    CHECK(vkc_fuse_op(epi, VKC_OP_RELU, &v, 1, &v));
    CHECK(vkc_fuse_op(epi, VKC_OP_DROPOUT, (vkc_value[]){v, p, sd}, 3, &v));
    CHECK(vkc_fuse_output(epi, v, NULL));

    push pc = {M, N, K, keep, seed};
    uint32_t groups[3] = {(N + 15) / 16, (M + 15) / 16, 1};
    vkc_arg ax = {.buffer = bx}, aw = {.buffer = bw}, ab = {.buffer = bb}, ah = {.buffer = bh};
    vkc_seq *seq[3];
    const char *names[3] = {"matmul with fused epilogue (1 dispatch)",
                            "matmul + fused elementwise (2 dispatches)",
                            "matmul + unfused elementwise (4 dispatches)"};
    for (int m = 0; m < 3; m++) {
        CHECK(vkc_seq_create(ctx, NULL, &seq[m]));
        vkc_arg ay = {.buffer = by[m]};
        if (m == 0) {
            CHECK(vkc_seq_dispatch(
                seq[m], &(vkc_dispatch_desc){.kernel = mm_epi,
                                             .args = (vkc_arg[]){ax, aw, ab, ay},
                                             .arg_count = 4,
                                             .push = &pc,
                                             .push_size = sizeof pc,
                                             .groups = {groups[0], groups[1], groups[2]}}));
        } else {
            CHECK(vkc_seq_dispatch(
                seq[m], &(vkc_dispatch_desc){.kernel = mm,
                                             .args = (vkc_arg[]){ax, aw, ah},
                                             .arg_count = 3,
                                             .push = &pc,
                                             .push_size = sizeof pc,
                                             .groups = {groups[0], groups[1], groups[2]}}));
            vkc_fuse_args fa = {.inputs = (vkc_arg[]){ah, ab},
                                .input_count = 2,
                                .outputs = &ay,
                                .output_count = 1,
                                .scalars = (vkc_scalar[]){{.f32 = keep}, {.u32 = seed}},
                                .scalar_count = 2,
                                .count = (uint64_t)M * N};
            CHECK(m == 1 ? vkc_fuse_record(seq[m], epi, &fa)
                         : vkc_fuse_record_unfused(seq[m], epi, &fa));
        }
        CHECK(vkc_seq_end(seq[m]));
    }
    int bad = 0;
    for (int m = 0; m < 3; m++) {
        double t = time_seq(ctx, seq[m], reps);
        CHECK(vkc_buffer_download(by[m], 0, got, (uint64_t)M * N * 4));
        int mine = 0;
        for (size_t i = 0; i < (size_t)M * N; i++) {
            /* float sums in another order: within 1e-5 of sum |x||w| */
            if (!(fabsf(got[i] - ref[i]) <= 1e-5f * mag[i] + 1e-6f) && mine++ < 5)
                fprintf(stderr, "%s: element %zu: %g, want %g\n", names[m], i, got[i], ref[i]);
        }
        bad += mine;
        printf("  %-44s %9.3f ms  %s\n", names[m], t * 1e3, mine ? "MISMATCH" : "ok");
    }
    printf("%s\n", bad ? "MISMATCH" : "all three match the CPU");

    for (int m = 0; m < 3; m++) {
        vkc_seq_destroy(seq[m]);
        vkc_buffer_destroy(by[m]);
    }
    vkc_fuse_destroy(epi);
    vkc_kernel_destroy(mm);
    vkc_kernel_destroy(mm_epi);
    vkc_buffer_destroy(bx);
    vkc_buffer_destroy(bw);
    vkc_buffer_destroy(bb);
    vkc_buffer_destroy(bh);
    vkc_context_destroy(ctx);
    free(x);
    free(w);
    free(b);
    free(ref);
    free(mag);
    free(got);
    return bad ? 1 : 0;
}
