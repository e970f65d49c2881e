/* vkc-split-bench: copy and triad split across N devices (vkc_split), for
 * the scaling figures of bench/run_multi.sh.
 *
 *   vkc-split-bench [--gpus N] [--same-device] [--n ELEMENTS] [--iters K]
 *                   [--calibrate] [--kernel copy|triad|all] [--validation]
 *
 * N contexts on devices 0 .. N-1 (--same-device: N instances of device 0,
 * for a machine with one device, as ctest does on lavapipe). Buffers stay
 * resident in the split's parts; K dispatches are queued on every part and
 * waited for once, after two untimed ones. The result is checked against
 * the CPU. One line per kernel:
 *   split-bench copy gpus=2 n=... iters=... ms_per_iter=... GBps=... weights=... ok
 * Exit status 0 when every check passed. */
#include <vkc/vkc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *COPY_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) readonly buffer A { float a[]; };\n"
    "layout(set = 0, binding = 1) writeonly buffer C { float c[]; };\n"
    "layout(push_constant) uniform P { uint n; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) c[i] = a[i];\n"
    "}\n";

/* a = b + s * c, as STREAM's triad. */
static const char *TRIAD_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) writeonly buffer A { float a[]; };\n"
    "layout(set = 0, binding = 1) readonly buffer B { float b[]; };\n"
    "layout(set = 0, binding = 2) readonly buffer C { float c[]; };\n"
    "layout(push_constant) uniform P { uint n; float s; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) a[i] = b[i] + pc.s * c[i];\n"
    "}\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned validation_messages;
static void logger(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    (void)user;
    if ((id == VKC_LOG_ID_VALIDATION || id == VKC_LOG_ID_PERFORMANCE) && level >= VKC_LOG_WARN)
        validation_messages++;
    if (level >= VKC_LOG_WARN)
        fprintf(stderr, "vkc: %s\n", msg);
}

#define CHECK(what, call)                                                                          \
    do {                                                                                           \
        vkc_result r_ = (call);                                                                    \
        if (r_ < 0) {                                                                              \
            fprintf(stderr, "vkc-split-bench: %s: %s\n  %s\n", what, vkc_result_string(r_),        \
                    sp ? vkc_split_last_error(sp) : vkc_last_create_error());                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    uint32_t gpus = 1, iters = 50;
    uint64_t n = 1ull << 27;
    bool same = false, calibrate = false, validation = false;
    const char *which = "all";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            gpus = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--same-device"))
            same = true;
        else if (!strcmp(argv[i], "--calibrate"))
            calibrate = true;
        else if (!strcmp(argv[i], "--validation"))
            validation = true;
        else {
            fprintf(stderr, "usage: vkc-split-bench [--gpus N] [--same-device] [--n ELEMENTS] "
                            "[--iters K] [--calibrate] [--kernel copy|triad|all] [--validation]\n");
            return 2;
        }
    }
    if (gpus < 1 || gpus > VKC_MAX_SPLIT || n < 1 || n > UINT32_MAX || iters < 1) {
        fprintf(stderr, "vkc-split-bench: --gpus 1..%d, --n 1..2^32-1, --iters >= 1\n",
                VKC_MAX_SPLIT);
        return 2;
    }
    vkc_split *sp = NULL;
    vkc_context *ctx[VKC_MAX_SPLIT] = {NULL};
    for (uint32_t i = 0; i < gpus; ++i) {
        char dev[16];
        snprintf(dev, sizeof(dev), "%u", same ? 0u : i);
        vkc_context_desc d = {0};
        d.device = dev;
        d.logger.func = logger;
        d.validation = validation ? VKC_ON : VKC_DEFAULT;
        CHECK("context", vkc_context_create(&d, &ctx[i]));
        printf("context %u: device %s: %s\n", i, dev, vkc_context_device(ctx[i])->name);
    }
    CHECK("split", vkc_split_create(&(vkc_split_desc){.contexts = ctx,
                                                      .context_count = gpus,
                                                      .calibrate = calibrate ? VKC_ON : VKC_OFF,
                                                      .calibrate_count = n < (1u << 24) ? n : 0},
                                    &sp));
    vkc_split_info info;
    CHECK("split info", vkc_split_info_get(sp, &info));
    char weights[256] = "";
    for (uint32_t i = 0; i < gpus; ++i)
        snprintf(weights + strlen(weights), sizeof(weights) - strlen(weights), "%s%.3f",
                 i ? "," : "", info.weights[i]);

    vkc_kernel *kcopy[VKC_MAX_SPLIT], *ktriad[VKC_MAX_SPLIT];
    for (uint32_t i = 0; i < gpus; ++i) {
        CHECK("copy kernel",
              vkc_kernel_create_glsl(ctx[i], &(vkc_glsl_desc){.source = COPY_GLSL, .name = "copy"},
                                     &kcopy[i]));
        CHECK("triad kernel",
              vkc_kernel_create_glsl(
                  ctx[i], &(vkc_glsl_desc){.source = TRIAD_GLSL, .name = "triad"}, &ktriad[i]));
    }
    vkc_split_buffer *a, *b, *c;
    vkc_split_buffer_desc bd = {.count = n};
    CHECK("buffer", vkc_split_buffer_create(sp, &bd, &a));
    CHECK("buffer", vkc_split_buffer_create(sp, &bd, &b));
    CHECK("buffer", vkc_split_buffer_create(sp, &bd, &c));
    float *h = malloc(n * 4), *hb = malloc(n * 4), *got = malloc(n * 4);
    if (!h || !hb || !got) {
        fprintf(stderr, "vkc-split-bench: out of host memory\n");
        return 1;
    }
    for (uint64_t i = 0; i < n; ++i) {
        h[i] = (float)(i % 4093) * 0.5f;
        hb[i] = (float)(i % 37) - 18.0f;
    }
    CHECK("scatter", vkc_split_scatter(a, h));
    CHECK("scatter", vkc_split_scatter(b, hb));
    CHECK("scatter", vkc_split_scatter(c, h));

    int status = 0;
    for (int kind = 0; kind < 2; ++kind) {
        const char *name = kind ? "triad" : "copy";
        if (strcmp(which, "all") && strcmp(which, name))
            continue;
        struct {
            uint32_t n;
            float s;
        } push = {0, 3.0f};
        vkc_split_dispatch_desc d = {.kernels = kind ? ktriad : kcopy,
                                     .args = kind ? (vkc_split_buffer *[]){a, b, c}
                                                  : (vkc_split_buffer *[]){a, c},
                                     .arg_count = kind ? 3 : 2,
                                     .push = &push,
                                     .push_size = kind ? 8 : 4,
                                     .count_in_push = true,
                                     .count = n,
                                     .label = name};
        vkc_ticket t[VKC_MAX_SPLIT];
        for (int w = 0; w < 2; ++w)
            CHECK(name, vkc_split_dispatch(sp, &d, NULL));
        double t0 = now_s();
        for (uint32_t it = 0; it < iters; ++it)
            CHECK(name, vkc_split_dispatch(sp, &d, t));
        CHECK(name, vkc_split_wait(sp, t));
        double dt = (now_s() - t0) / iters;
        /* copy: c = a (a holds h); triad: a = b + 3 c (c holds h). */
        vkc_split_buffer *res = kind ? a : c;
        CHECK("gather", vkc_split_gather(res, got));
        uint64_t bad = 0;
        for (uint64_t i = 0; i < n; ++i) {
            float e = kind ? hb[i] + 3.0f * h[i] : h[i];
            if (fabsf(got[i] - e) > 1e-6f * fabsf(e))
                bad++;
        }
        double bytes = (kind ? 3.0 : 2.0) * 4.0 * (double)n;
        printf("split-bench %s gpus=%u n=%llu iters=%u ms_per_iter=%.4f GBps=%.1f weights=%s %s\n",
               name, gpus, (unsigned long long)n, iters, dt * 1e3, bytes / dt / 1e9, weights,
               bad ? "MISMATCH" : "ok");
        if (bad)
            status = 1;
        if (kind == 1) /* leave a = h for a later copy, as set up */
            CHECK("scatter", vkc_split_scatter(a, h));
    }
    free(h);
    free(hb);
    free(got);
    vkc_split_destroy(sp); /* and its buffers */
    for (uint32_t i = gpus; i-- > 0;)
        vkc_context_destroy(ctx[i]);
    return status || validation_messages ? 1 : 0;
}
