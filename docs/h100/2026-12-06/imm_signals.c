/* The lavapipe probe of the twelfth session (BENCHMARKS.md, 2026-12-06):
 * K dispatches of one kernel (x[i] += 1 on 64 words) per immediate batch,
 * flushed; waited for after every batch, or with STREAM set after every
 * eighth. Prints per batch: submits, timeline signals, batches in pieces,
 * repeats (vkc_stats deltas over `iters` batches after 5 warm ones), and
 * checks x[0] against the count. Built against a library's include and
 * build folders, e.g.
 *   gcc -O1 -I include imm_signals.c -o imm_signals -L build -lvkc \
 *       -Wl,-rpath,$PWD/build
 *   STREAM=1 VKC_IMM_REUSE=0 VKC_IMM_SPLIT=4 VKC_IMM_SLOW_US=1000000 \
 *       ./imm_signals 16 80 */
#include <stdio.h>
#include <stdlib.h>
#include <vkc/vkc.h>
#define T(x)                                                                                       \
    do {                                                                                           \
        vkc_result r_ = (x);                                                                       \
        if (r_ < 0) {                                                                              \
            printf("fail %s: %d %s\n", #x, r_, vkc_context_last_error(ctx));                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
static const char *SRC =
    "#version 450\nlayout(local_size_x=64) in;\nlayout(set=0,binding=0) buffer X { uint x[]; "
    "};\nvoid main(){ uint i = gl_GlobalInvocationID.x; if (i < 64u) x[i] += 1u; }\n";
int main(int argc, char **argv)
{
    unsigned K = argc > 1 ? atoi(argv[1]) : 16, iters = argc > 2 ? atoi(argv[2]) : 50;
    vkc_context *ctx = NULL;
    vkc_context_desc cd = {0};
    if (vkc_context_create(&cd, &ctx) < 0) {
        printf("no ctx\n");
        return 1;
    }
    vkc_kernel *k;
    vkc_glsl_desc gd = {0};
    gd.source = SRC;
    gd.name = "inc";
    T(vkc_kernel_create_glsl(ctx, &gd, &k));
    vkc_buffer *b;
    vkc_buffer_desc bd = {256, 0, "x"};
    T(vkc_buffer_create(ctx, &bd, &b));
    T(vkc_buffer_fill(b, 0, 256, 0));
    vkc_arg a = {0};
    a.buffer = b;
    a.size = 256;
    vkc_dispatch_desc d = {0};
    d.kernel = k;
    d.args = &a;
    d.arg_count = 1;
    d.groups[0] = 1;
    d.groups[1] = 1;
    d.groups[2] = 1;
    vkc_stats s0, s1;
    for (unsigned it = 0; it < iters + 5; ++it) {
        if (it == 5)
            vkc_context_stats(ctx, &s0);
        for (unsigned j = 0; j < K; ++j)
            T(vkc_dispatch(ctx, &d));
        vkc_ticket t;
        T(vkc_flush(ctx, &t));
        if (getenv("STREAM") == NULL || it % 8 == 7)
            T(vkc_wait(ctx, t, UINT64_MAX));
    }
    vkc_context_stats(ctx, &s1);
    uint32_t out[64];
    T(vkc_buffer_download(b, 0, out, 256));
    printf("K=%u per batch: submits %.2f timeline_signals %.2f splits %.2f repeats %.2f cb %llu "
           "x[0]=%u (want %u)\n",
           K, (double)(s1.submits - s0.submits) / iters,
           (double)(s1.timeline_signals - s0.timeline_signals) / iters,
           (double)(s1.immediate_splits - s0.immediate_splits) / iters,
           (double)(s1.immediate_repeats - s0.immediate_repeats) / iters,
           (unsigned long long)s1.command_buffers, out[0], (iters + 5) * K);
    vkc_buffer_destroy(b);
    vkc_kernel_destroy(k);
    vkc_context_destroy(ctx);
    return 0;
}
