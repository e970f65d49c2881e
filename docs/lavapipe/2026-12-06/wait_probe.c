/* Probe behind BENCHMARKS.md's lavapipe note of 2026-12-06: how long one
 * submission of K dependent tiny dispatches takes to wait for on a CPU
 * device, by how the host waits. Build and run (from the repository root,
 * after a build-gpu build):
 *   gcc -O2 -o /tmp/wait_probe docs/lavapipe/2026-12-06/wait_probe.c -Iinclude \
 *       -Lbuild-gpu -lvkc -Wl,-rpath,$PWD/build-gpu
 *   VKC_VALIDATION=0 /tmp/wait_probe 1 MODE 10000
 * argv: loop count of the kernel (1), MODE, K. MODE: 0 vkc_wait in the
 * default mode, 1 VKC_WAIT_SPIN, 2 VKC_WAIT_BLOCK, 3 vkc_poll with a 100 us
 * sleep between polls, 4 vkc_poll in a busy loop, 5 vkc_poll with
 * sched_yield between polls. Prints each of six submissions' submit and
 * wait times. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vkc/vkc.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static const char *src = "#version 450\nlayout(local_size_x_id=0) in;\nlayout(set=0,binding=0) "
                         "buffer B{uint x[];};\nlayout(push_constant) uniform P{uint n;};\nvoid "
                         "main(){uint v=x[gl_GlobalInvocationID.x];for(uint i=0;i<n;++i) "
                         "v^=v<<13u; v^=v>>17u; v^=v<<5u; x[gl_GlobalInvocationID.x]=v;}\n";
int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2000000;
    int mode = argc > 2 ? atoi(argv[2]) : 0;
    vkc_context_desc d = {0};
    if (mode == 1)
        d.wait_mode = VKC_WAIT_SPIN;
    if (mode == 2)
        d.wait_mode = VKC_WAIT_BLOCK;
    vkc_context *c;
    if (vkc_context_create(&d, &c) < 0) {
        printf("ctx fail\n");
        return 1;
    }
    vkc_kernel *k;
    if (vkc_kernel_create_glsl(
            c, &(vkc_glsl_desc){.source = src, .name = "busy", .workgroup_size = 64}, &k) < 0) {
        printf("k fail %s\n", vkc_context_last_error(c));
        return 1;
    }
    vkc_buffer *b;
    vkc_buffer_create(c, &(vkc_buffer_desc){.size = 256}, &b);
    vkc_arg a = {.buffer = b, .access = VKC_ACCESS_READ_WRITE};
    vkc_seq *s;
    vkc_seq_create(c, NULL, &s);
    int K = argc > 3 ? atoi(argv[3]) : 1;
    for (int i = 0; i < K; ++i)
        vkc_seq_dispatch(
            s,
            &(vkc_dispatch_desc){
                .kernel = k, .args = &a, .arg_count = 1, .push = &n, .push_size = 4, .count = 64});
    vkc_seq_end(s);
    for (int i = 0; i < 6; ++i) {
        vkc_ticket t;
        double t0 = now();
        vkc_seq_submit(s, &t);
        double t1 = now();
        if (mode == 3) {
            while (vkc_poll(c, t) == VKC_NOT_READY) {
                struct timespec z = {0, 100000};
                nanosleep(&z, NULL);
            }
        } else if (mode == 4) {
            while (vkc_poll(c, t) == VKC_NOT_READY) {
            }
        } else if (mode == 5) {
            while (vkc_poll(c, t) == VKC_NOT_READY) {
                sched_yield();
            }
        } else
            vkc_wait(c, t, UINT64_MAX);
        double t2 = now();
        printf("submit %.2f ms wait %.2f ms\n", t1 - t0, t2 - t1);
    }
    vkc_seq_destroy(s);
    vkc_buffer_destroy(b);
    vkc_kernel_destroy(k);
    vkc_context_destroy(c);
    return 0;
}
