/* vkc-bench internals: shared between the infrastructure (vkc_bench.c), the raw
 * Vulkan helpers (bench_raw.c) and the scenarios (bench_*.c).
 *
 * Tools use only the public header: everything raw goes through the handles
 * that vkc_context_vk() hands out. */
#ifndef VKC_BENCH_H
#define VKC_BENCH_H

#include <vkc/vkc.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- options and records ------------------------------------------------ */

typedef struct bench_opts {
    bool quick;
    const char *json_path;
    const char *plot_dir;
    const char *device;
    bool validation;
    char scenarios[32][32];
    int scenario_count; /* 0 = all */
    double scale;       /* multiplies iteration counts; 1 = default */
} bench_opts;

#define BENCH_MAX_SAMPLES_KEPT 4096

typedef struct bench_rec {
    char scenario[32];
    char variant[64];
    char baseline[64]; /* "scenario/variant" the ratio column divides by; "" = none */
    uint32_t iterations;
    double p50_us, p95_us, p99_us, mean_us, min_us, max_us;
    double per_dispatch_ns;     /* < 0: does not apply */
    double gpu_per_dispatch_ns; /* < 0: does not apply / no timestamps */
    double gbps;                /* < 0: does not apply */
    double x;                   /* sweep parameter (batch size, chain length, ...); < 0 none */
    char x_name[24];
    int64_t barriers;          /* < 0: unknown */
    int64_t expected_barriers; /* the most barriers allowed; < 0: no limit */
    bool ok;
    bool skipped;
    char note[256];
    /* Round-trip samples (us), kept for the latency plot. */
    float *samples;
    uint32_t sample_count;
} bench_rec;

typedef struct bench {
    bench_opts opt;
    vkc_context *ctx; /* the default context, shared by raw and vkc variants */
    const vkc_device_info *dev;
    vkc_context_features feat;
    char device_name[256];
    char driver[300];
    bench_rec *recs;
    size_t rec_count, rec_cap;
    int scenario_index, scenario_total;
    const char *scenario_name;
} bench;

/* Iteration count: quick or full, scaled by --scale. */
uint32_t bench_n(const bench *b, uint32_t quick, uint32_t full);

/* A fresh record for the current scenario, with "does not apply" values. */
bench_rec bench_rec_init(const bench *b, const char *variant);
/* Fill the timing fields from samples in nanoseconds (sorts them). If keep,
 * the samples are copied for plots. */
void bench_rec_stats(bench_rec *r, double *samples_ns, uint32_t n, bool keep);
/* Add a record; prints its progress line. */
void bench_add(bench *b, bench_rec *r);
/* A record that failed: ok = false, note = message. */
void bench_fail(bench *b, const char *variant, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void bench_progress(bench *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

uint64_t bench_now_ns(void);

/* vkc error helper: "call: VKC_ERROR_...: detail". */
const char *bench_vkc_err(vkc_context *ctx, vkc_result r, const char *what, char *buf, size_t n);

/* Create an extra context with the bench's device and validation choice. */
vkc_result bench_context(bench *b, vkc_context_desc *desc, vkc_context **out);

/* ---- raw Vulkan ---------------------------------------------------------- */

#define RAW_DEVICE_FUNCS(X)                                                                        \
    X(vkCreateCommandPool)                                                                         \
    X(vkDestroyCommandPool)                                                                        \
    X(vkResetCommandPool)                                                                          \
    X(vkAllocateCommandBuffers)                                                                    \
    X(vkFreeCommandBuffers)                                                                        \
    X(vkBeginCommandBuffer)                                                                        \
    X(vkEndCommandBuffer)                                                                          \
    X(vkResetCommandBuffer)                                                                        \
    X(vkQueueSubmit)                                                                               \
    X(vkQueueWaitIdle)                                                                             \
    X(vkDeviceWaitIdle)                                                                            \
    X(vkCreateFence)                                                                               \
    X(vkDestroyFence)                                                                              \
    X(vkWaitForFences)                                                                             \
    X(vkResetFences)                                                                               \
    X(vkGetFenceStatus)                                                                            \
    X(vkCreateBuffer)                                                                              \
    X(vkDestroyBuffer)                                                                             \
    X(vkGetBufferMemoryRequirements)                                                               \
    X(vkAllocateMemory)                                                                            \
    X(vkFreeMemory)                                                                                \
    X(vkBindBufferMemory)                                                                          \
    X(vkMapMemory)                                                                                 \
    X(vkUnmapMemory)                                                                               \
    X(vkCreateShaderModule)                                                                        \
    X(vkDestroyShaderModule)                                                                       \
    X(vkCreateDescriptorSetLayout)                                                                 \
    X(vkDestroyDescriptorSetLayout)                                                                \
    X(vkCreatePipelineLayout)                                                                      \
    X(vkDestroyPipelineLayout)                                                                     \
    X(vkCreateComputePipelines)                                                                    \
    X(vkDestroyPipeline)                                                                           \
    X(vkCreateDescriptorPool)                                                                      \
    X(vkDestroyDescriptorPool)                                                                     \
    X(vkResetDescriptorPool)                                                                       \
    X(vkAllocateDescriptorSets)                                                                    \
    X(vkUpdateDescriptorSets)                                                                      \
    X(vkCmdBindPipeline)                                                                           \
    X(vkCmdBindDescriptorSets)                                                                     \
    X(vkCmdPushConstants)                                                                          \
    X(vkCmdDispatch)                                                                               \
    X(vkCmdPipelineBarrier)                                                                        \
    X(vkCmdCopyBuffer)                                                                             \
    X(vkCmdFillBuffer)                                                                             \
    X(vkCreateQueryPool)                                                                           \
    X(vkDestroyQueryPool)                                                                          \
    X(vkCmdResetQueryPool)                                                                         \
    X(vkCmdWriteTimestamp)                                                                         \
    X(vkGetQueryPoolResults)

typedef struct raw {
    vkc_context *ctx;
    vkc_vk_handles h;
    VkDevice dev;
#define RAW_X_MEMBER(name) PFN_##name name;
    RAW_DEVICE_FUNCS(RAW_X_MEMBER)
#undef RAW_X_MEMBER
    PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR; /* NULL: not enabled */
    PFN_vkCmdPipelineBarrier2 vkCmdPipelineBarrier2;         /* NULL: not enabled */
    VkPhysicalDeviceMemoryProperties memprops;
    VkCommandPool pool;
    VkDescriptorPool dpool; /* fallback sets when push descriptors are missing */
    VkQueryPool queries;    /* 2 timestamps; VK_NULL_HANDLE without timestamps */
    double ts_period_ns;
    uint64_t ts_mask;
    uint32_t max_groups_x;
    uint32_t wg_max;
    char err[256];
} raw;

typedef struct raw_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map; /* host-visible buffers only */
} raw_buf;

#define RAW_MAX_BIND 4
typedef struct raw_pipe {
    VkShaderModule module;
    VkDescriptorSetLayout dsl;      /* push-descriptor layout when available */
    VkDescriptorSetLayout dsl_pool; /* ordinary layout for pool-allocated sets */
    VkPipelineLayout layout;
    VkPipelineLayout layout_pool;
    VkPipeline pipe;
    VkPipeline pipe_pool;
    uint32_t bindings;
    uint32_t push_size;
    uint32_t wg;
} raw_pipe;

/* Bind info for one dispatch: buffers (with offset/range) in binding order. */
typedef struct raw_args {
    VkDescriptorBufferInfo b[RAW_MAX_BIND];
    uint32_t n;
    VkDescriptorSet set; /* used when push descriptors are missing; made by raw_args_set */
} raw_args;

/* On failure these return false and leave a message in r->err. */
bool raw_init(raw *r, vkc_context *ctx);
void raw_finish(raw *r);
bool raw_buf_create(raw *r, VkDeviceSize size, bool host, raw_buf *out);
void raw_buf_destroy(raw *r, raw_buf *b);
bool raw_pipe_create(raw *r, const uint32_t *spirv, size_t size, uint32_t bindings,
                     uint32_t push_size, uint32_t wg, uint32_t spec1, raw_pipe *out);
void raw_pipe_destroy(raw *r, raw_pipe *p);
/* A descriptor pool for fallback sets (when push descriptors are missing). */
bool raw_args_set(raw *r, raw_pipe *p, VkDescriptorPool pool, raw_args *a);
/* Make a->set from the shared pool when push descriptors are missing. */
bool raw_prepare(raw *r, raw_pipe *p, raw_args *a);
/* Record bind + args + push + dispatch (push descriptors, or a->set). */
void raw_cmd_dispatch(raw *r, VkCommandBuffer cb, raw_pipe *p, const raw_args *a, const void *push,
                      uint32_t gx, uint32_t gy);
/* Compute->compute memory barrier (sync1 global memory barrier). */
void raw_cmd_barrier(raw *r, VkCommandBuffer cb);
/* One-shot command buffer: begin, then end + submit + wait. */
bool raw_begin(raw *r, VkCommandBuffer *cb);
bool raw_end_wait(raw *r, VkCommandBuffer cb);
bool raw_submit_wait(raw *r, VkCommandBuffer cb, VkFence fence, bool spin);
/* Blocking transfers through a host-visible staging buffer. */
bool raw_upload(raw *r, raw_buf *dst, VkDeviceSize off, const void *data, VkDeviceSize size);
bool raw_download(raw *r, raw_buf *src, VkDeviceSize off, void *data, VkDeviceSize size);
/* Fill dst with the bench_init pattern (i * 0x9E3779B1 + seed). */
bool raw_init_pattern(raw *r, raw_pipe *init, raw_buf *dst, uint32_t n, uint32_t seed);
static inline uint32_t bench_pattern(uint32_t i, uint32_t seed)
{
    return i * 0x9E3779B1u + seed;
}
/* Timestamps around a command buffer's work (no-ops without timestamps). */
void raw_cmd_ts_begin(raw *r, VkCommandBuffer cb);
void raw_cmd_ts_end(raw *r, VkCommandBuffer cb);
bool raw_ts_read(raw *r, double *ns);
/* Submit a recorded command buffer warm + iters times, waiting (spinning) on a
 * fence each time; wall and (when *has_gpu) GPU ns per measured iteration. */
bool raw_replay(raw *r, VkCommandBuffer cb, uint32_t warm, uint32_t iters, double *wall,
                double *gpu, bool *has_gpu);
/* Median of n values (sorts a copy). */
double bench_median(const double *v, uint32_t n);
/* Groups for n threads of wg: splits into y when x would exceed the limit. */
void raw_grid(const raw *r, uint64_t threads, uint32_t wg, uint32_t *gx, uint32_t *gy);
bool raw_ok(raw *r, VkResult res, const char *what);
bool raw_new_cb(raw *r, VkCommandBuffer *cb);

/* In scenario code: `vctx` (vkc_context *) and `err` (char[]) in scope, a
 * `fail:` label. VTRY jumps there with the vkc error message; RTRY with the
 * raw helper's. */
#define VTRY_TO(label, call)                                                                       \
    do {                                                                                           \
        vkc_result vtry_r_ = (call);                                                               \
        if (vtry_r_ < 0) {                                                                         \
            bench_vkc_err(vctx, vtry_r_, #call, err, sizeof(err));                                 \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)
#define VTRY(call) VTRY_TO(fail, call)
#define RTRY(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(err, sizeof(err), "%s", r->err);                                              \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* Tiny dispatches: elements and workgroup size. */
#define TINY_N 64u
#define TINY_WG 64u

/* ---- scenarios ----------------------------------------------------------- */

typedef void (*bench_fn)(bench *b, raw *r);
void scen_naive(bench *b, raw *r);
void scen_reuse(bench *b, raw *r);
void scen_batch(bench *b, raw *r);
void scen_chain(bench *b, raw *r);
void scen_independent(bench *b, raw *r);
void scen_levels(bench *b, raw *r);
void scen_family(bench *b, raw *r);
void scen_descriptors(bench *b, raw *r);
void scen_bandwidth(bench *b, raw *r);
void scen_fusion(bench *b, raw *r);
void scen_layout(bench *b, raw *r);
void scen_record(bench *b, raw *r);

#endif
