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
    double per_dispatch_ns; /* < 0: does not apply */
    /* Where each sample is one round's ns per dispatch (record): the p95
     * and p99 beside per_dispatch_ns, the p50; < 0: not measured so. */
    double per_dispatch_p95_ns, per_dispatch_p99_ns;
    double gpu_per_dispatch_ns; /* < 0: does not apply / no timestamps */
    double gbps;                /* < 0: does not apply */
    double x;                   /* sweep parameter (batch size, chain length, ...); < 0 none */
    char x_name[24];
    int64_t barriers;          /* < 0: unknown */
    int64_t expected_barriers; /* the most barriers allowed; < 0: no limit */
    bool ok;
    bool skipped;
    char note[640]; /* the round-trip rows need about 450 */
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
/* VKC_BENCH_ROWS (a comma list of variant names, for diagnostics such as
 * VKC_TIME_CALLS=1 that need one row alone): whether this row runs; true
 * when the variable is unset. The batch and chain scenarios ask it. */
bool bench_row_wanted(const char *name);

/* A fresh record for the current scenario, with "does not apply" values;
 * baseline: "scenario/variant" or NULL. */
bench_rec bench_rec_init(const bench *b, const char *variant, const char *baseline);
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
/* An extra context on the bench's own device and queue (vkc_context_wrap
 * with what vkc enabled there, the queue shared through vkc_queue_lock), so
 * that rows of differing settings meet the same device: NVIDIA's slow and
 * fast modes belong to a device (job Z36). Settings come from the
 * environment, as for a created context. */
vkc_result bench_twin(bench *b, vkc_context **out);
/* bench_twin for row `row`, or NULL with the row failed; _env with
 * environment variable name set to value for its creation. */
vkc_context *bench_twin_row(bench *b, const char *row);
vkc_context *bench_twin_env(bench *b, const char *name, const char *value, const char *row);

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
    X(vkCreateSemaphore)                                                                           \
    X(vkDestroySemaphore)                                                                          \
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
    X(vkGetQueryPoolResults)                                                                       \
    X(vkCreateImage)                                                                               \
    X(vkDestroyImage)                                                                              \
    X(vkGetImageMemoryRequirements)                                                                \
    X(vkBindImageMemory)                                                                           \
    X(vkCreateImageView)                                                                           \
    X(vkDestroyImageView)                                                                          \
    X(vkCmdCopyBufferToImage)                                                                      \
    X(vkCmdCopyImageToBuffer)

typedef struct raw {
    vkc_context *ctx;
    vkc_vk_handles h;
    VkDevice dev;
#define RAW_X_MEMBER(name) PFN_##name name;
    RAW_DEVICE_FUNCS(RAW_X_MEMBER)
#undef RAW_X_MEMBER
    PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR;   /* NULL: not enabled */
    PFN_vkCmdPipelineBarrier2 vkCmdPipelineBarrier2;           /* NULL: not enabled */
    PFN_vkGetSemaphoreCounterValue vkGetSemaphoreCounterValue; /* NULL: no timelines */
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
    uint32_t mem_type;
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
    uint32_t image_mask; /* bit i: binding i is a storage image, not a storage buffer */
    uint32_t push_size;
    uint32_t wg;
} raw_pipe;

/* Bind info for one dispatch: buffers (with offset/range) in binding order;
 * img[i] for the pipeline's image bindings. */
typedef struct raw_args {
    VkDescriptorBufferInfo b[RAW_MAX_BIND];
    VkDescriptorImageInfo img[RAW_MAX_BIND];
    uint32_t n;
    VkDescriptorSet set; /* used when push descriptors are missing; made by raw_args_set */
} raw_args;

/* On failure these return false and leave a message in r->err. */
bool raw_init(raw *r, vkc_context *ctx);
void raw_finish(raw *r);
bool raw_buf_create(raw *r, VkDeviceSize size, bool host, raw_buf *out);
/* A buffer in the first memory type that has every flag of want[i], tried
 * in order; mapped when map. */
bool raw_buf_create_in(raw *r, VkDeviceSize size, const VkMemoryPropertyFlags *want,
                       uint32_t want_count, bool map, raw_buf *out);
/* The same with extra usage bits (a predicate for conditional rendering). */
bool raw_buf_create_usage(raw *r, VkDeviceSize size, const VkMemoryPropertyFlags *want,
                          uint32_t want_count, bool map, VkBufferUsageFlags usage, raw_buf *out);
void raw_buf_destroy(raw *r, raw_buf *b);
bool raw_pipe_create(raw *r, const uint32_t *spirv, size_t size, uint32_t bindings,
                     uint32_t push_size, uint32_t wg, uint32_t spec1, raw_pipe *out);
/* A pipeline whose bindings in image_mask are storage images (no
 * workgroup-size specialization: the shader fixes its size). */
bool raw_pipe_create_images(raw *r, const uint32_t *spirv, size_t size, uint32_t bindings,
                            uint32_t image_mask, uint32_t push_size, raw_pipe *out);
void raw_pipe_destroy(raw *r, raw_pipe *p);

/* A device-local 2D image with one mip and layer, STORAGE and TRANSFER
 * usage, left in GENERAL by raw_img_create. */
typedef struct raw_img {
    VkImage image;
    VkDeviceMemory mem;
    VkImageView view;
    VkFormat format;
    uint32_t w, h, texel_size;
} raw_img;
bool raw_img_create(raw *r, VkFormat format, uint32_t texel_size, uint32_t w, uint32_t h,
                    raw_img *out);
void raw_img_destroy(raw *r, raw_img *img);
/* Blocking transfers of the whole image (tightly packed texels), ordered
 * after earlier compute work; the image is back in GENERAL after them. */
bool raw_img_upload(raw *r, raw_img *img, const void *data);
bool raw_img_download(raw *r, raw_img *img, void *data);
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
 * raw helper's. Either leaves err non-empty, which bench_emit relies on. */
#define VTRY_TO(label, call)                                                                       \
    do {                                                                                           \
        vkc_result vtry_r_ = (call);                                                               \
        if (vtry_r_ < 0) {                                                                         \
            bench_vkc_err(vctx, vtry_r_, #call, err, sizeof(err));                                 \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)
#define VTRY(call) VTRY_TO(fail, call)
/* Allocation checks in scenario code (raw or vkc). */
#define MTRY(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(err, sizeof(err), "out of memory");                                           \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
#define RTRY(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(err, sizeof(err), "%s", r->err[0] ? r->err : "raw Vulkan setup failed");      \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* ---- scenario helpers (bench_common.c) ----------------------------------- */

/* Words and size of a shader in bench_shaders.h: BENCH_SPV(inc). */
#define BENCH_SPV(name) bench_##name, bench_##name##_size

/* The samples of one timed loop: warm-up iterations, then `iters` measured. */
typedef struct bench_times {
    uint32_t warm, iters;
    double *wall; /* ns per measured iteration, CPU clock */
    double *gpu;  /* ns per measured iteration from timestamps (raw only) */
    bool has_gpu;
} bench_times;

/* Iteration i of the loop took ns: kept when it is past the warm-up. */
static inline void bench_times_put(bench_times *t, uint32_t i, double ns)
{
    if (i >= t->warm)
        t->wall[i - t->warm] = ns;
}
/* Allocate the sample arrays; false when out of memory (free them anyway). */
bool bench_times_init(bench_times *t, uint32_t warm, uint32_t iters);
void bench_times_free(bench_times *t);
/* The timing fields of rec from the samples (sorts the wall samples); per
 * dispatch (wall and, with timestamps, GPU) over `dispatches` per iteration,
 * 0 = not per dispatch. */
void bench_times_rec(bench_times *t, bench_rec *rec, uint32_t dispatches);

/* A sweep point: x and what it counts. */
void bench_rec_sweep(bench_rec *r, double x, const char *x_name);
/* Append to the note, after "; " when it has text already. */
void bench_note(bench_rec *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The end of a variant: *rec is added when err is empty, else a failed
 * record for rec's variant with err as its note (rec is dropped). */
void bench_emit(bench *b, bench_rec *rec, const char *err);
/* A skipped record: the variant does not apply here, for the reason given. */
void bench_skip(bench *b, const char *variant, const char *reason);
/* A context like bench_context(); on failure a failed record for each
 * variant named (a NULL-terminated list) and NULL. */
vkc_context *bench_context_or_fail(bench *b, vkc_context_desc *desc, const char *variant, ...);

/* Rows that take turns: iters samples each, in min(iters, 8) rounds, the
 * rows forward in even rounds and backward in odd ones, so that a drift or
 * a burst of other load lands on every row alike; chunk(user, row, m) runs
 * m samples of one of the n rows (an array of row_size bytes each; a row
 * that failed returns at once). Returns the number of rounds. */
uint32_t bench_turns(void *rows, size_t row_size, uint32_t n, uint32_t iters,
                     void (*chunk)(void *user, void *row, uint32_t m), void *user);

/* All n values equal want; else false with a note naming the first that does not. */
bool bench_check_all(const uint32_t *got, uint32_t n, uint32_t want, char *note, size_t note_size);

/* vkc objects for scenarios. */
vkc_result bench_kernel(vkc_context *ctx, const uint32_t *spirv, size_t size, uint32_t wg,
                        const char *name, vkc_kernel **out);
/* A zero-filled buffer. */
vkc_result bench_buffer(vkc_context *ctx, uint64_t size, const char *name, vkc_buffer **out);
/* Record descs[i % n] for i < total in a new sequence *s and end it. */
vkc_result bench_seq_record(vkc_context *ctx, const vkc_dispatch_desc *descs, uint32_t n,
                            uint32_t total, vkc_seq **s);
/* Record descs[i % n] for i < total in a new sequence, end it, submit it
 * t->warm + t->iters times (waiting each time; t->wall measured) and report
 * its info (may be NULL). */
vkc_result bench_seq_time(vkc_context *ctx, const vkc_dispatch_desc *descs, uint32_t n,
                          uint32_t total, bench_times *t, vkc_seq_info *info);
/* descs[0..n) in a fresh sequence, submitted once and waited for. */
vkc_result bench_seq_once(vkc_context *ctx, const vkc_dispatch_desc *descs, uint32_t n);

/* Tiny dispatches: elements and workgroup size. */
#define TINY_N 64u
#define TINY_WG 64u

/* The tiny fixture: the inc kernel (x[i] += push[1]) on TINY_N zeroed uints
 * (or on a zeroed buffer of `size` bytes; 0 = TINY_N uints). */
typedef struct bench_tiny {
    vkc_kernel *k;
    vkc_buffer *x;
    vkc_arg arg;
    uint32_t push[2];
    vkc_dispatch_desc d; /* one dispatch adding 1 to every x[i]; points into *this */
} bench_tiny;
vkc_result bench_tiny_init(vkc_context *ctx, bench_tiny *t, uint64_t size);
/* The same, its kernel built from tools/shaders/inc.comp's GLSL by
 * vkc_kernel_create_glsl (glsl) or from the SPIR-V compiled with the bench. */
vkc_result bench_tiny_init_from(vkc_context *ctx, bench_tiny *t, uint64_t size, bool glsl);
extern const char bench_inc_glsl[];
void bench_tiny_finish(bench_tiny *t);
/* Download x; rec->ok = every element is want. Fails only on the download. */
vkc_result bench_tiny_check(bench_tiny *t, uint32_t want, bench_rec *rec);

/* The ranges fixture: the offset kernel (dst = src + push[1]) reads a
 * TINY_N-uint source with a known pattern and writes one of n ranges of dst. */
typedef struct bench_range_arg {
    vkc_arg args[2];
    uint32_t push[2];
} bench_range_arg;
typedef struct bench_ranges {
    uint32_t n;
    uint64_t stride; /* bytes between ranges, see bench_range_stride */
    uint32_t src[TINY_N];
    uint32_t *host; /* n * stride bytes, for the result */
    vkc_kernel *k;
    vkc_buffer *vsrc, *vdst;
    vkc_dispatch_desc *descs; /* bench_ranges_init: range j = src + j, for all j */
    vkc_seq *seq;             /* for variants that re-record one sequence */
    bench_range_arg *store;   /* what descs point at */
} bench_ranges;
/* Bytes between ranges: TINY_N uints rounded up to the storage-buffer offset
 * alignment. */
uint64_t bench_range_stride(const bench *b);
/* The host side only (for raw variants); false when out of memory. */
bool bench_ranges_host(const bench *b, bench_ranges *g, uint32_t n, uint32_t seed);
/* The host side, the vkc kernel and the buffers (the source uploaded). */
vkc_result bench_ranges_init(bench *b, vkc_context *ctx, bench_ranges *g, uint32_t n,
                             uint32_t seed);
void bench_ranges_finish(bench_ranges *g);
/* The dispatch that writes range j = src + j + add; args and push are its storage. */
vkc_dispatch_desc bench_ranges_desc(const bench_ranges *g, uint32_t j, uint32_t add,
                                    vkc_arg args[2], uint32_t push[2]);
/* rec->ok = host holds src + k + add in every range k. */
void bench_ranges_check(const bench_ranges *g, uint32_t add, bench_rec *rec);
/* Download vdst into host, then bench_ranges_check. */
vkc_result bench_ranges_download_check(bench_ranges *g, uint32_t add, bench_rec *rec);

/* Raw counterparts. */
typedef void (*raw_record_fn)(raw *r, VkCommandBuffer cb, void *user);
/* Record once with fn (between timestamps), replay t->warm + t->iters times. */
bool raw_time_replay(raw *r, raw_record_fn fn, void *user, bench_times *t);

typedef struct raw_tiny {
    raw_pipe p;
    raw_buf x;
    raw_args a;
    uint32_t push[2];
    VkCommandBuffer cb; /* for variants that record and submit themselves */
    VkFence fence;
} raw_tiny;
bool raw_tiny_init(raw *r, raw_tiny *t, uint64_t size);
void raw_tiny_finish(raw *r, raw_tiny *t);
/* Download x; rec->ok = every element is want. False only on the download. */
bool raw_tiny_check(raw *r, raw_tiny *t, uint32_t want, bench_rec *rec);

typedef struct raw_ranges {
    raw_pipe p;
    raw_buf src, dst;
    raw_args *args;     /* per range; prepared when `prepare` was asked for */
    VkCommandBuffer cb; /* for variants that record and submit themselves */
    VkFence fence;
} raw_ranges;
bool raw_ranges_init(raw *r, const bench_ranges *g, bool prepare, raw_ranges *rr);
void raw_ranges_finish(raw *r, raw_ranges *rr);
/* Download dst into g->host, then bench_ranges_check. */
bool raw_ranges_download_check(raw *r, raw_ranges *rr, bench_ranges *g, uint32_t add,
                               bench_rec *rec);

/* ---- scenarios ----------------------------------------------------------- */

/* The scenario table: name, then what it measures. A scenario is one
 * function `void scen_<name>(bench *b, raw *r)` (r is NULL when raw Vulkan
 * could not be set up) in a bench_*.c file, plus its line here. */
#define BENCH_SCENARIOS(X)                                                                         \
    X(naive, "per dispatch: new command buffer, record, submit, wait, free")                       \
    X(reuse, "pre-recorded work, submit + wait, per wait policy")                                  \
    X(batch, "K tiny dispatches per submit through immediate mode")                                \
    X(chain, "K dependent dispatches recorded once, replayed")                                     \
    X(independent, "K dispatches without hazards")                                                 \
    X(levels, "W independent chains of depth D interleaved")                                       \
    X(family, "reuse and chain on compute-only vs graphics family")                                \
    X(descriptors, "per-dispatch pools vs recycled pools vs push")                                 \
    X(bandwidth, "copy and 3-input kernels, grid sizing")                                          \
    X(fusion, "elementwise chains fused vs unfused")                                               \
    X(layout, "array of structures vs structure of arrays")                                        \
    X(record, "CPU cost per recorded dispatch")                                                    \
    X(postfx, "the renderer's post-process chain on images, vkc vs hand-placed barriers")          \
    X(resident, "resident kernel: round trip and dependent stream vs ordinary submits")            \
    X(gridbar, "grid barrier variants in one persistent dispatch, raw and vkc (issue 13)")

typedef void (*bench_fn)(bench *b, raw *r);
#define BENCH_SCEN_DECLARE(name, what) void scen_##name(bench *b, raw *r);
BENCH_SCENARIOS(BENCH_SCEN_DECLARE)
#undef BENCH_SCEN_DECLARE

/* Shared between scenario files: a round trip and a chain through vkc
 * (mapped: the buffer's mapping handed out first, so that the host may
 * read it and each submission ends with a host barrier). */
void bench_vkc_roundtrip(bench *b, vkc_context *vctx, const char *variant, bool fresh, bool glsl,
                         bool mapped, const char *baseline);
void bench_vkc_chain(bench *b, vkc_context *vctx, const char *variant, uint32_t K,
                     const char *baseline);

#endif
