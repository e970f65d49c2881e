/* chain: record once, replay many times (like a CUDA graph).
 *
 * A sequence of K dependent kernels (each reads what the previous one wrote)
 * is recorded once; vkc inserts exactly the barriers the dependencies need.
 * It is then submitted 1000 times, with new push constants before each
 * submit; only the changed values are re-recorded. The result is checked
 * against the same chain computed on the CPU. Usage: chain [n] [replays] */
#include <vkc/vkc.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        vkc_result r_ = (call);                                                                    \
        if (r_ < 0) {                                                                              \
            fprintf(stderr, "%s:%d: %s\n  %s\n", __FILE__, __LINE__, vkc_result_string(r_),        \
                    vkc_context_last_error(ctx));                                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Compiled at run time (glslang); cached on disk for the next run. */
static const char *STEP = "#version 450\n"
                          "layout(local_size_x_id = 0) in;\n"
                          "layout(set = 0, binding = 0) readonly buffer In { uint src[]; };\n"
                          "layout(set = 0, binding = 1) writeonly buffer Out { uint dst[]; };\n"
                          "layout(push_constant) uniform P { uint n; uint mul; uint add; } pc;\n"
                          "void main() {\n"
                          "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
                          "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)\n"
                          "    dst[i] = src[i] * pc.mul + pc.add;\n"
                          "}\n";

enum { K = 6 };

typedef struct step_push {
    uint32_t n, mul, add;
} step_push;

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u << 16;
    uint32_t replays = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1000;
    vkc_context *ctx = NULL;
    vkc_result cr = vkc_context_create(&(vkc_context_desc){0}, &ctx);
    if (cr < 0) {
        fprintf(stderr, "no context: %s\n  %s\n", vkc_result_string(cr), vkc_last_create_error());
        return 1;
    }
    vkc_kernel *step;
    CHECK(vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = STEP, .name = "step"}, &step));

    /* K+1 buffers: buf[0] -> step 0 -> buf[1] -> ... -> buf[K]. */
    vkc_buffer *buf[K + 1];
    for (int i = 0; i <= K; ++i)
        CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4ull}, &buf[i]));
    uint32_t *host = malloc(n * 4ull), *ref = malloc(n * 4ull), *out = malloc(n * 4ull);
    for (uint32_t i = 0; i < n; ++i)
        host[i] = i * 2654435761u;
    CHECK(vkc_buffer_upload(buf[0], 0, host, n * 4ull));

    vkc_seq *seq;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "chain"}, &seq));
    for (int i = 0; i < K; ++i) {
        step_push p = {n, 3, (uint32_t)i};
        vkc_arg args[] = {{.buffer = buf[i]}, {.buffer = buf[i + 1]}};
        CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = step,
                                                         .args = args,
                                                         .arg_count = 2,
                                                         .push = &p,
                                                         .push_size = sizeof(p),
                                                         .count = n}));
    }
    CHECK(vkc_seq_end(seq));
    vkc_seq_info info;
    CHECK(vkc_seq_info_get(seq, &info));
    printf("%u dispatches in %u dependency levels, %u barriers\n", info.dispatches, info.levels,
           info.barriers);

    vkc_ticket t = {0};
    uint32_t bad = 0;
    for (uint32_t r = 0; r < replays && !bad; ++r) {
        /* New constants for every step; the next submit records only if they changed. */
        for (int i = 0; i < K; ++i) {
            step_push p = {n, 3 + (r % 5), (uint32_t)i + r};
            CHECK(vkc_seq_set_push(seq, (uint32_t)i, &p, sizeof(p)));
        }
        CHECK(vkc_seq_submit(seq, &t));
        if (r % 100 == 99 || r + 1 == replays) {
            CHECK(vkc_wait(ctx, t, UINT64_MAX));
            CHECK(vkc_buffer_download(buf[K], 0, out, n * 4ull));
            for (uint32_t j = 0; j < n; ++j) {
                uint32_t v = host[j];
                for (int i = 0; i < K; ++i)
                    v = v * (3 + (r % 5)) + (uint32_t)i + r;
                ref[j] = v;
            }
            for (uint32_t j = 0; j < n; ++j)
                if (out[j] != ref[j] && bad++ < 5)
                    fprintf(stderr, "replay %u: out[%u] = %u, want %u\n", r, j, out[j], ref[j]);
        }
    }
    vkc_stats st;
    CHECK(vkc_context_stats(ctx, &st));
    printf("%u replays: %s (submits %llu, command buffers alive %llu)\n", replays,
           bad ? "WRONG" : "ok", (unsigned long long)st.submits,
           (unsigned long long)st.command_buffers);
    vkc_seq_destroy(seq);
    for (int i = 0; i <= K; ++i)
        vkc_buffer_destroy(buf[i]);
    vkc_kernel_destroy(step);
    vkc_context_destroy(ctx);
    free(host);
    free(ref);
    free(out);
    return bad ? 1 : 0;
}
