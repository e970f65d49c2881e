/* vkc_cuda_ref: the CUDA side of vkc-bench, the same scenarios where they map,
 * printed as JSON records in vkc-bench's schema (source "cuda-ref").
 *
 *   nvcc -O2 -arch=sm_90 -o vkc_cuda_ref vkc_cuda_ref.cu
 *   ./vkc_cuda_ref [--quick] [--json FILE]
 *
 * Scenarios and variants:
 *   reuse:       cuda-launch-sync-spin (launch + cudaStreamSynchronize, spin
 *                scheduling), cuda-launch-sync-block (blocking-sync event),
 *                cuda-graph-1node (one-node graph launch + sync)
 *   batch:       cuda-stream K=.. (K launches, one sync; per dispatch)
 *   chain:       cuda-stream K=.., cuda-graph K=.. (K dependent kernels)
 *   independent: cuda-graph-independent K=.. (K kernel nodes, no edges)
 *   bandwidth:   cuda-copy-1per, cuda-copy-gs G=.., cuda-memcpy-d2d,
 *                cuda-triad-1per, cuda-triad-gs G=..
 *   fusion:      cuda-unfused L=.., cuda-fused L=..
 *   layout:      cuda-aos, cuda-soa
 *   record:      cuda-launch-call (CPU ns per cudaLaunchKernel)
 * Every variant checks its results against a CPU reference (ok). Times are
 * CPU wall clock of launch + synchronize, like vkc-bench's; GPU times come
 * from CUDA events where noted. */
#include <cuda_runtime.h>

#include <algorithm>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

/* ---- errors --------------------------------------------------------------- */

static char g_err[512];
/* Errors of asynchronous calls made inside timed lambdas. */
static cudaError_t g_async_err = cudaSuccess;

/* Every CUDA call goes through CK: on failure the message is kept and the
 * current variant is reported with ok = false. */
#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t ck_e_ = (call);                                                                \
        if (ck_e_ != cudaSuccess) {                                                                \
            snprintf(g_err, sizeof(g_err), "%s: %s (%s:%d)", #call, cudaGetErrorString(ck_e_),     \
                     __FILE__, __LINE__);                                                          \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* ---- records ------------------------------------------------------------- */

struct rec {
    char scenario[32], variant[64], baseline[96], x_name[24], note[256];
    uint32_t iterations;
    double p50_us, p95_us, p99_us, mean_us, min_us, max_us;
    double per_dispatch_ns, gpu_per_dispatch_ns, gbps, x;
    bool ok;
};

static std::vector<rec> g_recs;
static bool g_quick;
static char g_device[256], g_driver[128];
static const char *g_scenario = "";

static rec rec_init(const char *variant)
{
    rec r;
    memset(&r, 0, sizeof(r));
    snprintf(r.scenario, sizeof(r.scenario), "%s", g_scenario);
    snprintf(r.variant, sizeof(r.variant), "%s", variant);
    r.p50_us = r.p95_us = r.p99_us = r.mean_us = r.min_us = r.max_us = -1;
    r.per_dispatch_ns = r.gpu_per_dispatch_ns = r.gbps = r.x = -1;
    r.ok = true;
    return r;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double pct(const std::vector<double> &s, double p)
{
    if (s.empty())
        return -1;
    double rank = ceil(p / 100.0 * s.size());
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    return s[std::min(i, s.size() - 1)];
}

static void stats(rec &r, std::vector<double> ns)
{
    if (ns.empty())
        return;
    std::sort(ns.begin(), ns.end());
    double sum = 0;
    for (double v : ns)
        sum += v;
    r.iterations = (uint32_t)ns.size();
    r.p50_us = pct(ns, 50) / 1e3;
    r.p95_us = pct(ns, 95) / 1e3;
    r.p99_us = pct(ns, 99) / 1e3;
    r.mean_us = sum / ns.size() / 1e3;
    r.min_us = ns.front() / 1e3;
    r.max_us = ns.back() / 1e3;
}

static double median(std::vector<double> v)
{
    if (v.empty())
        return -1;
    std::sort(v.begin(), v.end());
    return pct(v, 50);
}

static void add(rec &r)
{
    g_recs.push_back(r);
    if (!r.ok)
        fprintf(stderr, "[cuda] %s %s FAILED: %s\n", r.scenario, r.variant, r.note);
    else
        fprintf(stderr, "[cuda] %s %s p50 %.2f us%s\n", r.scenario, r.variant, r.p50_us,
                r.per_dispatch_ns > 0 ? "" : "");
}

static void fail_rec(const char *variant)
{
    rec r = rec_init(variant);
    r.ok = false;
    snprintf(r.note, sizeof(r.note), "%.250s", g_err);
    add(r);
    cudaGetLastError(); /* clear a sticky launch error where possible */
}

static uint32_t n_(uint32_t quick, uint32_t full)
{
    return g_quick ? quick : full;
}

static uint32_t pattern(uint32_t i, uint32_t seed)
{
    return i * 0x9E3779B1u + seed;
}

/* ---- kernels (the same work as the GLSL in tools/shaders) ----------------------- */

__global__ void k_inc(uint32_t *x, uint32_t n, uint32_t add)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] += add;
}

__global__ void k_offset(const uint32_t *src, uint32_t *dst, uint32_t n, uint32_t k)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i] + k;
}

__global__ void k_init(uint32_t *x, uint64_t n, uint32_t seed)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = (uint32_t)i * 0x9E3779B1u + seed;
}

__global__ void k_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst, uint64_t n)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

__global__ void k_triad(const uint4 *__restrict__ a, const uint4 *__restrict__ b,
                        const uint4 *__restrict__ c, uint4 *__restrict__ d, uint64_t n)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint4 x = a[i], y = b[i], z = c[i];
        d[i] = make_uint4(x.x * y.x + z.x, x.y * y.y + z.y, x.z * y.z + z.z, x.w * y.w + z.w);
    }
}

__global__ void k_step(uint32_t *x, uint64_t n, uint32_t s)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = x[i] * 3u + s;
}

__global__ void k_fused(uint32_t *x, uint64_t n, uint32_t steps)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t v = x[i];
        for (uint32_t s = 0; s < steps; ++s)
            v = v * 3u + (s + 1u);
        x[i] = v;
    }
}

__global__ void k_aos(const uint32_t *rec8, uint32_t *out, uint32_t n)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = rec8[(uint64_t)i * 8 + 2] * 3u + 1u;
}

__global__ void k_soa(const uint32_t *field, uint32_t *out, uint32_t n)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = field[i] * 3u + 1u;
}

#define TINY_N 64u
#define BW_WG 256u
static int g_sms = 0;

static bool check_tiny(uint32_t *d, uint32_t want, rec &r)
{
    uint32_t h[TINY_N];
    if (cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost) != cudaSuccess) {
        snprintf(r.note, sizeof(r.note), "cudaMemcpy failed");
        return false;
    }
    for (uint32_t i = 0; i < TINY_N; ++i)
        if (h[i] != want) {
            snprintf(r.note, sizeof(r.note), "x[%u] = %u, want %u", i, h[i], want);
            return false;
        }
    return true;
}

/* ---- round trip ------------------------------------------------------------- */

static void roundtrip(int mode) /* 0 spin, 1 blocking event, 2 one-node graph */
{
    static const char *names[] = {"cuda-launch-sync-spin", "cuda-launch-sync-block",
                                  "cuda-graph-1node"};
    uint32_t iters = n_(200, 5000), warm = n_(20, 200);
    uint32_t *x = NULL;
    cudaStream_t st = NULL;
    cudaEvent_t ev = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    std::vector<double> ns;
    rec r = rec_init(names[mode]);
    snprintf(r.baseline, sizeof(r.baseline), "naive/raw-naive");
    CK(cudaMalloc(&x, TINY_N * 4));
    CK(cudaMemset(x, 0, TINY_N * 4));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming));
    if (mode == 2) {
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        k_inc<<<1, TINY_N, 0, st>>>(x, TINY_N, 1);
        CK(cudaGetLastError());
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
    }
    CK(cudaDeviceSynchronize());
    for (uint32_t i = 0; i < warm + iters; ++i) {
        uint64_t t0 = now_ns();
        if (mode == 2) {
            CK(cudaGraphLaunch(exec, st));
        } else {
            k_inc<<<1, TINY_N, 0, st>>>(x, TINY_N, 1);
            CK(cudaGetLastError());
        }
        if (mode == 1) {
            CK(cudaEventRecord(ev, st));
            CK(cudaEventSynchronize(ev));
        } else {
            CK(cudaStreamSynchronize(st));
        }
        uint64_t t1 = now_ns();
        if (i >= warm)
            ns.push_back((double)(t1 - t0));
    }
    r.ok = check_tiny(x, warm + iters, r);
    stats(r, ns);
    add(r);
    goto done;
fail:
    fail_rec(names[mode]);
done:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    if (ev)
        cudaEventDestroy(ev);
    if (st)
        cudaStreamDestroy(st);
    cudaFree(x);
}

/* ---- K launches: batch, chain (stream and graph), independent graph --------- */

/* kind 0: stream launches, 1: captured graph of K dependent kernels,
 * 2: graph of K kernel nodes without edges (each writes its own range). */
static void klaunch(int kind, uint32_t K, const char *baseline)
{
    char variant[64];
    static const char *names[] = {"cuda-stream", "cuda-graph", "cuda-graph-independent"};
    snprintf(variant, sizeof(variant), "%s K=%u", names[kind], K);
    uint32_t total = n_(4096, 200000);
    uint32_t iters = std::max(3u, std::min(n_(20, 200), total / K)), warm = 2;
    uint32_t *x = NULL, *src = NULL;
    cudaStream_t st = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    std::vector<double> ns, gpu;
    rec r = rec_init(variant);
    snprintf(r.baseline, sizeof(r.baseline), "%s", baseline);
    r.x = K;
    snprintf(r.x_name, sizeof(r.x_name), "K");
    size_t xbytes = kind == 2 ? (size_t)K * TINY_N * 4 : TINY_N * 4;
    std::vector<uint32_t> hsrc(TINY_N);
    CK(cudaMalloc(&x, xbytes));
    CK(cudaMemset(x, 0, xbytes));
    CK(cudaMalloc(&src, TINY_N * 4));
    for (uint32_t i = 0; i < TINY_N; ++i)
        hsrc[i] = pattern(i, 7);
    CK(cudaMemcpy(src, hsrc.data(), TINY_N * 4, cudaMemcpyHostToDevice));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (kind == 1) {
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (uint32_t j = 0; j < K; ++j)
            k_inc<<<1, TINY_N, 0, st>>>(x, TINY_N, 1);
        CK(cudaGetLastError());
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
    } else if (kind == 2) {
        CK(cudaGraphCreate(&graph, 0));
        for (uint32_t j = 0; j < K; ++j) {
            uint32_t *dst = x + (size_t)j * TINY_N;
            uint32_t n = TINY_N, k = j;
            void *args[4] = {&src, &dst, &n, &k};
            cudaKernelNodeParams p = {};
            p.func = (void *)k_offset;
            p.gridDim = dim3(1);
            p.blockDim = dim3(TINY_N);
            p.kernelParams = args;
            cudaGraphNode_t node;
            CK(cudaGraphAddKernelNode(&node, graph, NULL, 0, &p));
        }
        CK(cudaGraphInstantiate(&exec, graph, 0));
    }
    CK(cudaDeviceSynchronize());
    for (uint32_t i = 0; i < warm + iters; ++i) {
        uint64_t t0 = now_ns();
        CK(cudaEventRecord(e0, st));
        if (kind == 0) {
            for (uint32_t j = 0; j < K; ++j)
                k_inc<<<1, TINY_N, 0, st>>>(x, TINY_N, 1);
            CK(cudaGetLastError());
        } else {
            CK(cudaGraphLaunch(exec, st));
        }
        CK(cudaEventRecord(e1, st));
        CK(cudaStreamSynchronize(st));
        uint64_t t1 = now_ns();
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= warm) {
            ns.push_back((double)(t1 - t0));
            gpu.push_back(ms * 1e6);
        }
    }
    if (kind == 2) {
        std::vector<uint32_t> h((size_t)K * TINY_N);
        CK(cudaMemcpy(h.data(), x, xbytes, cudaMemcpyDeviceToHost));
        for (uint32_t j = 0; j < K && r.ok; ++j)
            for (uint32_t i = 0; i < TINY_N; ++i)
                if (h[(size_t)j * TINY_N + i] != hsrc[i] + j) {
                    r.ok = false;
                    snprintf(r.note, sizeof(r.note), "range %u [%u] wrong", j, i);
                    break;
                }
    } else {
        r.ok = check_tiny(x, (warm + iters) * K, r);
    }
    stats(r, ns);
    r.per_dispatch_ns = r.p50_us * 1e3 / K;
    r.gpu_per_dispatch_ns = median(gpu) / K;
    add(r);
    goto done;
fail:
    fail_rec(variant);
done:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (st)
        cudaStreamDestroy(st);
    cudaFree(x);
    cudaFree(src);
}

/* CPU cost of one cudaLaunchKernel (no synchronisation while timing). */
static void launch_call(void)
{
    uint32_t N = n_(256, 4096), iters = n_(20, 500);
    uint32_t *x = NULL;
    cudaStream_t st = NULL;
    std::vector<double> ns;
    rec r = rec_init("cuda-launch-call");
    snprintf(r.baseline, sizeof(r.baseline), "record/raw-record");
    CK(cudaMalloc(&x, TINY_N * 4));
    CK(cudaMemset(x, 0, TINY_N * 4));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (uint32_t it = 0; it < iters + 2; ++it) {
        uint64_t t0 = now_ns();
        for (uint32_t j = 0; j < N; ++j)
            k_inc<<<1, TINY_N, 0, st>>>(x, TINY_N, 1);
        uint64_t t1 = now_ns();
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(st));
        if (it >= 2)
            ns.push_back((double)(t1 - t0) / N);
    }
    r.ok = check_tiny(x, (iters + 2) * N, r);
    stats(r, ns);
    r.per_dispatch_ns = r.p50_us * 1e3;
    r.p50_us = r.p95_us = r.p99_us = r.mean_us = r.min_us = r.max_us = -1;
    snprintf(r.note + strlen(r.note), sizeof(r.note) - strlen(r.note),
             "%sCPU ns per launch call; launches queue behind running work", r.note[0] ? "; " : "");
    add(r);
    goto done;
fail:
    fail_rec("cuda-launch-call");
done:
    if (st)
        cudaStreamDestroy(st);
    cudaFree(x);
}

/* ---- streaming ------------------------------------------------------------------- */

static uint64_t stream_bytes(uint64_t quick_cap)
{
    uint64_t s = 1ull << 30;
    if (g_quick && s > quick_cap)
        s = quick_cap;
    return s;
}

static void grid1per(uint64_t threads, unsigned *g)
{
    uint64_t groups = (threads + BW_WG - 1) / BW_WG;
    *g = (unsigned)std::min<uint64_t>(groups, 0x7fffffffu);
}

/* Check the first and last 4096 uints of an output. */
template <typename F> static bool check_ends(const uint32_t *d, uint64_t n, F want, rec &r)
{
    uint64_t w = std::min<uint64_t>(n, 4096);
    std::vector<uint32_t> h(w);
    for (int end = 0; end < 2; ++end) {
        uint64_t first = end ? n - w : 0;
        if (cudaMemcpy(h.data(), d + first, w * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
            snprintf(r.note, sizeof(r.note), "cudaMemcpy failed");
            return false;
        }
        for (uint64_t i = 0; i < w; ++i)
            if (h[i] != want(first + i)) {
                snprintf(r.note, sizeof(r.note), "out[%llu] = %u, want %u",
                         (unsigned long long)(first + i), h[i], want(first + i));
                return false;
            }
    }
    return true;
}

/* Time R launches of fn per synchronisation; fills timing and GB/s. */
template <typename L>
static bool time_stream(L launch, uint32_t R, double bytes, rec &r, cudaStream_t st)
{
    uint32_t iters = n_(5, 30), warm = n_(1, 3);
    std::vector<double> ns, gpu;
    cudaEvent_t e0 = NULL, e1 = NULL;
    bool ok = false;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (uint32_t i = 0; i < warm + iters; ++i) {
        uint64_t t0 = now_ns();
        CK(cudaEventRecord(e0, st));
        for (uint32_t j = 0; j < R; ++j)
            launch();
        CK(cudaGetLastError());
        CK(g_async_err);
        CK(cudaEventRecord(e1, st));
        CK(cudaStreamSynchronize(st));
        uint64_t t1 = now_ns();
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= warm) {
            ns.push_back((double)(t1 - t0));
            gpu.push_back(ms * 1e6);
        }
    }
    stats(r, ns);
    r.per_dispatch_ns = r.p50_us * 1e3 / R;
    r.gpu_per_dispatch_ns = median(gpu) / R;
    if (bytes > 0) {
        r.gbps = bytes / r.per_dispatch_ns;
        snprintf(r.note + strlen(r.note), sizeof(r.note) - strlen(r.note), "%sGPU %.1f GB/s",
                 r.note[0] ? "; " : "", bytes / r.gpu_per_dispatch_ns);
    }
    ok = true;
fail:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return ok;
}

static void bandwidth(void)
{
    uint64_t S = stream_bytes(16u << 20), n4 = S / 16, nu = S / 4;
    uint32_t R = n_(2, 8);
    uint32_t *buf[4] = {NULL, NULL, NULL, NULL};
    cudaStream_t st = NULL;
    unsigned g1;
    grid1per(n4, &g1);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int i = 0; i < 4; ++i) {
        CK(cudaMalloc(&buf[i], S));
        if (i < 3) {
            k_init<<<1024, 256, 0, st>>>(buf[i], nu, (uint32_t)i + 1);
            CK(cudaGetLastError());
        }
    }
    CK(cudaStreamSynchronize(st));
    for (int triad = 0; triad < 2; ++triad) {
        if (triad) { /* the copy runs overwrote buf[1] (the triad's b): restore it */
            k_init<<<1024, 256, 0, st>>>(buf[1], nu, 2u);
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(st));
        }
        const char *op = triad ? "triad" : "copy";
        uint32_t *out = triad ? buf[3] : buf[1];
        double bytes = (double)S * (triad ? 4 : 2);
        char base[64];
        snprintf(base, sizeof(base), "bandwidth/raw-%s-1per", op);
        uint32_t sweep[] = {0, 1, 2, 4, 8, 16, 32, 1000};
        for (uint32_t G : sweep) {
            if (G == 1000 && triad)
                continue;
            if (g_quick && G != 0 && G != 1 && G != 4 && G != 16 && G != 1000)
                continue;
            char variant[64];
            unsigned grid = g1;
            if (G == 0)
                snprintf(variant, sizeof(variant), "cuda-%s-1per", op);
            else if (G == 1000)
                snprintf(variant, sizeof(variant), "cuda-memcpy-d2d");
            else {
                snprintf(variant, sizeof(variant), "cuda-%s-gs G=%u", op, G);
                grid = G * (unsigned)g_sms;
            }
            rec r = rec_init(variant);
            snprintf(r.baseline, sizeof(r.baseline), "%s", base);
            if (G && G != 1000) {
                r.x = G;
                snprintf(r.x_name, sizeof(r.x_name), "groups/SM");
            }
            CK(cudaMemsetAsync(out, 0, S, st));
            bool ok;
            if (G == 1000)
                ok = time_stream(
                    [&] {
                        cudaError_t me =
                            cudaMemcpyAsync(buf[1], buf[0], S, cudaMemcpyDeviceToDevice, st);
                        if (me != cudaSuccess)
                            g_async_err = me;
                    },
                    R, bytes, r, st);
            else if (triad)
                ok = time_stream(
                    [&] {
                        k_triad<<<grid, BW_WG, 0, st>>>((const uint4 *)buf[0],
                                                        (const uint4 *)buf[1],
                                                        (const uint4 *)buf[2], (uint4 *)buf[3], n4);
                    },
                    R, bytes, r, st);
            else
                ok = time_stream(
                    [&] {
                        k_copy<<<grid, BW_WG, 0, st>>>((const uint4 *)buf[0], (uint4 *)buf[1], n4);
                    },
                    R, bytes, r, st);
            if (!ok) {
                fail_rec(variant);
                continue;
            }
            if (triad)
                r.ok = check_ends(
                    out, nu,
                    [](uint64_t u) {
                        uint32_t i = (uint32_t)u;
                        return pattern(i, 1) * pattern(i, 2) + pattern(i, 3);
                    },
                    r);
            else
                r.ok = check_ends(
                    out, nu, [](uint64_t u) { return pattern((uint32_t)u, 1); }, r);
            add(r);
        }
    }
    goto done;
fail:
    fail_rec("cuda-bandwidth");
done:
    for (int i = 0; i < 4; ++i)
        cudaFree(buf[i]);
    if (st)
        cudaStreamDestroy(st);
}

static void fusion(void)
{
    uint64_t S = stream_bytes(4u << 20), n = S / 4;
    uint32_t *x = NULL;
    cudaStream_t st = NULL;
    unsigned g;
    grid1per(n, &g);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc(&x, S));
    for (uint32_t L = 1; L <= 16; L *= 2) {
        for (int fused = 0; fused < 2; ++fused) {
            char variant[64];
            snprintf(variant, sizeof(variant), "cuda-%s L=%u", fused ? "fused" : "unfused", L);
            rec r = rec_init(variant);
            snprintf(r.baseline, sizeof(r.baseline), "fusion/raw-unfused L=%u", L);
            r.x = L;
            snprintf(r.x_name, sizeof(r.x_name), "steps");
            k_init<<<1024, 256, 0, st>>>(x, n, 5);
            CK(cudaGetLastError());
            bool ok = time_stream(
                [&] {
                    if (fused)
                        k_fused<<<g, BW_WG, 0, st>>>(x, n, L);
                    else
                        for (uint32_t s = 0; s < L; ++s)
                            k_step<<<g, BW_WG, 0, st>>>(x, n, s + 1);
                },
                1, -1, r, st);
            if (!ok) {
                fail_rec(variant);
                continue;
            }
            r.per_dispatch_ns = -1; /* one chain per measurement: p50 is the chain */
            snprintf(r.note, sizeof(r.note), "GPU %.1f us", r.gpu_per_dispatch_ns / 1e3);
            r.gpu_per_dispatch_ns = -1;
            uint32_t rounds = r.iterations + n_(1, 3);
            r.ok = check_ends(
                x, n,
                [&](uint64_t u) {
                    uint32_t v = pattern((uint32_t)u, 5);
                    for (uint32_t k = 0; k < rounds; ++k)
                        for (uint32_t s = 0; s < L; ++s)
                            v = v * 3u + (s + 1u);
                    return v;
                },
                r);
            add(r);
        }
    }
    goto done;
fail:
    fail_rec("cuda-fusion");
done:
    cudaFree(x);
    if (st)
        cudaStreamDestroy(st);
}

static void layout(void)
{
    uint64_t S = stream_bytes(16u << 20);
    uint32_t N = (uint32_t)(S / 32), R = n_(2, 8);
    uint32_t *aos = NULL, *soa = NULL, *out = NULL;
    cudaStream_t st = NULL;
    unsigned g;
    grid1per(N, &g);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc(&aos, S));
    CK(cudaMalloc(&soa, (size_t)N * 4));
    CK(cudaMalloc(&out, (size_t)N * 4));
    k_init<<<1024, 256, 0, st>>>(aos, (uint64_t)N * 8, 9);
    k_init<<<1024, 256, 0, st>>>(soa, N, 9);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(st));
    for (int v = 0; v < 2; ++v) {
        const char *variant = v ? "cuda-soa" : "cuda-aos";
        rec r = rec_init(variant);
        snprintf(r.baseline, sizeof(r.baseline), "layout/raw-aos");
        bool ok = time_stream(
            [&] {
                if (v)
                    k_soa<<<g, BW_WG, 0, st>>>(soa, out, N);
                else
                    k_aos<<<g, BW_WG, 0, st>>>(aos, out, N);
            },
            R, (double)N * 8, r, st);
        if (!ok) {
            fail_rec(variant);
            continue;
        }
        if (v)
            r.ok = check_ends(
                out, N, [](uint64_t u) { return pattern((uint32_t)u, 9) * 3u + 1u; }, r);
        else
            r.ok = check_ends(
                out, N, [](uint64_t u) { return pattern((uint32_t)(u * 8 + 2), 9) * 3u + 1u; }, r);
        add(r);
    }
    goto done;
fail:
    fail_rec("cuda-layout");
done:
    cudaFree(aos);
    cudaFree(soa);
    cudaFree(out);
    if (st)
        cudaStreamDestroy(st);
}

/* ---- output ---------------------------------------------------------------------- */

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void jnum(FILE *f, const char *k, double v)
{
    fprintf(f, ", \"%s\": ", k);
    if (v < 0 || !isfinite(v))
        fprintf(f, "null");
    else
        fprintf(f, "%.6g", v);
}

static bool write_json(const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "vkc_cuda_ref: cannot write %s\n", path);
        return false;
    }
    fprintf(f, "[\n");
    for (size_t i = 0; i < g_recs.size(); ++i) {
        const rec &r = g_recs[i];
        fprintf(f, "  {\"source\": \"cuda-ref\", \"scenario\": ");
        jstr(f, r.scenario);
        fprintf(f, ", \"variant\": ");
        jstr(f, r.variant);
        fprintf(f, ", \"baseline\": ");
        jstr(f, r.baseline);
        fprintf(f, ", \"device\": ");
        jstr(f, g_device);
        fprintf(f, ", \"driver\": ");
        jstr(f, g_driver);
        fprintf(f, ", \"quick\": %s, \"iterations\": %u", g_quick ? "true" : "false", r.iterations);
        jnum(f, "p50_us", r.p50_us);
        jnum(f, "p95_us", r.p95_us);
        jnum(f, "p99_us", r.p99_us);
        jnum(f, "mean_us", r.mean_us);
        jnum(f, "min_us", r.min_us);
        jnum(f, "max_us", r.max_us);
        jnum(f, "per_dispatch_ns", r.per_dispatch_ns);
        jnum(f, "gpu_per_dispatch_ns", r.gpu_per_dispatch_ns);
        jnum(f, "gbps", r.gbps);
        jnum(f, "x", r.x);
        fprintf(f, ", \"x_name\": ");
        jstr(f, r.x_name);
        fprintf(f,
                ", \"barriers\": null, \"expected_barriers\": null, \"ok\": %s, "
                "\"skipped\": false, \"note\": ",
                r.ok ? "true" : "false");
        jstr(f, r.note);
        fprintf(f, "}%s\n", i + 1 < g_recs.size() ? "," : "");
    }
    fprintf(f, "]\n");
    bool ok = !ferror(f);
    if (path && fclose(f) != 0)
        ok = false;
    return ok;
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            g_quick = true;
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr, "usage: vkc_cuda_ref [--quick] [--json FILE]\n");
            return 2;
        }
    }
    /* spin while waiting, like vkc's spin mode; the blocking variant uses a
     * blocking-sync event instead */
    cudaError_t e = cudaSetDeviceFlags(cudaDeviceScheduleSpin);
    if (e != cudaSuccess) {
        fprintf(stderr, "vkc_cuda_ref: cudaSetDeviceFlags: %s\n", cudaGetErrorString(e));
        return 2;
    }
    cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, 0);
    if (e != cudaSuccess) {
        fprintf(stderr, "vkc_cuda_ref: no CUDA device: %s\n", cudaGetErrorString(e));
        return 2;
    }
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    snprintf(g_device, sizeof(g_device), "%s", prop.name);
    snprintf(g_driver, sizeof(g_driver), "CUDA driver %d.%d, runtime %d.%d", drv / 1000,
             (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10);
    g_sms = prop.multiProcessorCount;
    fprintf(stderr, "vkc_cuda_ref: %s, %d SMs, %s%s\n", g_device, g_sms, g_driver,
            g_quick ? " (quick)" : "");

    g_scenario = "reuse";
    for (int m = 0; m < 3; ++m)
        roundtrip(m);
    g_scenario = "batch";
    for (uint32_t K = 1; K <= (g_quick ? 1024u : 4096u); K *= 4) {
        char base[64];
        snprintf(base, sizeof(base), "batch/raw-record-submit K=%u", K);
        klaunch(0, K, base);
    }
    g_scenario = "chain";
    uint32_t ks[2] = {n_(16, 100), n_(256, 10000)};
    for (int i = 0; i < 2; ++i) {
        char base[64];
        snprintf(base, sizeof(base), "chain/raw-barrier-memory K=%u", ks[i]);
        klaunch(0, ks[i], base);
        klaunch(1, ks[i], base);
    }
    g_scenario = "independent";
    {
        uint32_t K = n_(256, 10000);
        char base[64];
        snprintf(base, sizeof(base), "independent/raw-no-barriers K=%u", K);
        klaunch(2, K, base);
    }
    g_scenario = "bandwidth";
    bandwidth();
    g_scenario = "fusion";
    fusion();
    g_scenario = "layout";
    layout();
    g_scenario = "record";
    launch_call();

    int failed = 0;
    for (const rec &r : g_recs)
        failed += !r.ok;
    fprintf(stderr, "vkc_cuda_ref: %zu records, %d failed\n", g_recs.size(), failed);
    return write_json(json) ? 0 : 2;
}
