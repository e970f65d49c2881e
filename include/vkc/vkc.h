/* vkc - a Vulkan compute runtime in C11.
 *
 * MANUAL
 * ======
 * vkc carries compute work from the CPU to the GPU with as little overhead as
 * the driver allows: it picks the dedicated compute queue family, records
 * work once into command buffers it reuses, recycles command buffers and
 * descriptor sets, inserts a barrier only where a real hazard exists, sizes
 * grids to the machine, and hands back tickets (timeline-semaphore values)
 * that are the only synchronisation a caller needs.
 *
 * Step by step
 * ------------
 *   vkc_context *ctx;
 *   vkc_context_create(&(vkc_context_desc){0}, &ctx);     // defaults
 *   vkc_buffer *x;
 *   vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &x);
 *   vkc_buffer_upload(x, 0, host, n * 4);
 *   vkc_kernel *k;
 *   vkc_kernel_create(ctx, &(vkc_kernel_desc){.spirv = words,
 *                                             .spirv_size = bytes}, &k);
 *   vkc_seq *s;
 *   vkc_seq_create(ctx, NULL, &s);
 *   vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k, .args = ..., .count = n});
 *   vkc_seq_end(s);
 *   vkc_ticket t;
 *   vkc_seq_submit(s, &t);       // as often as you like: no re-recording
 *   vkc_wait(ctx, t, UINT64_MAX);
 *
 * Rules
 * -----
 * - Every function returns a vkc_result; negative values are errors.
 *   vkc_result_string() names a result; vkc_context_last_error() gives the
 *   detailed message of the last failure on that context.
 * - A zero-initialised desc struct means "defaults". Enum value 0 is always
 *   the default. New fields are only ever added at the end.
 * - destroy(NULL) does nothing. On failure every output pointer is NULL.
 * - Nothing in vkc calls abort(), exit() or assert() on anything a caller or
 *   a driver can cause.
 *
 * Lifetimes
 * ---------
 * One rule for every object (buffer, wrapped buffer, image, wrapped image,
 * kernel, sequence, fusion graph): your handle is one reference;
 * vkc_X_destroy() drops it and makes the handle dead. The object itself
 * (its VkBuffer and memory, its pipeline, ...) is freed when the last
 * reference goes, and the others are held by what still needs it:
 * - a sequence holds everything its recorded commands name (kernels,
 *   buffers, a graph's temporaries), once per recording, until it is
 *   recorded again (vkc_seq_begin) or destroyed;
 * - every recorded copy that was submitted holds the sequence's set until
 *   its work completed (its ticket's value was reached);
 * - the open immediate-mode batch is a sequence too;
 * - a blocking transfer's submission holds its buffers until it completed.
 * So destroy is always allowed and never waits: a sequence recorded with a
 * kernel or buffer you then destroyed still submits and computes right,
 * work in flight finishes on live objects, and the memory goes back to the
 * allocator once nothing needs it. When exactly: a submission lets go
 * once the timeline has passed its value, seen at the next retire point
 * (vkc_finish(), a buffer or image destroy, taking a recording unit when
 * none is free, vkc_context_destroy()). Where vkc's completion marker is
 * trusted (lavapipe's is) most submits carry no timeline signal: one
 * comes at most VKC_SIGNAL_EVERY - 1 (127) values later, or sooner with a
 * blocking wait, an export or a new recording's first submit. So a
 * destroyed object whose last use was such a submit is freed by the next
 * vkc_finish() or vkc_context_destroy() at the latest, and without either
 * by the first retire point after at most 127 further submits; replays
 * alone are no retire point. A NEW use of a destroyed handle (recording it,
 * uploading to it, ...) is VKC_ERROR_INVALID_HANDLE with the object's name,
 * as long as something still holds it; once freed, the handle is dangling
 * memory like any freed pointer: do not use it at all.
 *
 * Why this rule: no destroy ever blocks on the GPU (the old rule waited for
 * all submitted work in vkc_buffer_destroy and destroyed pipelines under
 * in-flight work in vkc_kernel_destroy), and replays cost nothing: the
 * references are taken once when a sequence is recorded (one atomic per
 * distinct object), never per submit.
 *
 * - Wrapped buffers and images (vkc_buffer_wrap, vkc_image_wrap): vkc's
 *   record (and an image's views) follow the rule; the host's VkBuffer or
 *   VkImage is the host's, and the host must not destroy it before the
 *   tickets of all work naming it completed.
 * - Samplers (vkc_sampler_get) are the context's: no destroy, freed with it.
 * - vkc_fuse_destroy: the graph's own references go; its temporaries and
 *   fused kernels live on in every sequence that recorded them.
 * - vkc_context_destroy: any mix of queued immediate work, work in flight
 *   and live objects, after any of your own destroys in any order. Queued
 *   immediate work is submitted (flushed, not dropped), vkc waits for its
 *   own work (bounded by wait_timeout_ns; then vkDeviceWaitIdle on its own
 *   device; on a wrapped device it logs an error and goes on), sequences
 *   and batches let go, and every object still alive is freed whatever
 *   its count. Handles are dangling afterwards.
 * - vkc_context_recover: objects keep their handles and references;
 *   sequences recorded before the loss must be recorded again. A wrapped
 *   buffer still alive makes recovery VKC_ERROR_UNSUPPORTED.
 *
 * Waits are bounded
 * -----------------
 * Every call that can block returns VKC_TIMEOUT (positive: not an error;
 * the work goes on) rather than hang on a device that never finishes:
 * vkc_wait takes your timeout; vkc_finish, the blocking buffer and image
 * transfers (each of their waits), an enqueue or flush that waits for the
 * oldest batch use vkc_context_desc.wait_timeout_ns (10 s by default),
 * vkc_finish_timeout its own; resident posts and splits take theirs. A
 * transfer that timed out leaves its staging copy in flight: the next
 * transfer in that direction waits for it first (bounded again).
 * vkc_context_destroy (void) waits up to wait_timeout_ns and logs an error
 * past it; it must not free what the GPU still runs, so on its own device
 * it then waits for vkDeviceWaitIdle (the driver's own hang detection ends
 * that), and on a wrapped device it goes on. No vkc wait is unbounded
 * unless you pass UINT64_MAX.
 *
 * Thread safety
 * -------------
 * Each function belongs to one class, said again in its comment:
 * - Thread-safe: any thread, at any time, with anything but
 *   vkc_context_destroy / vkc_context_recover of the same context.
 *   vkc_result_string, vkc_queue_reason_string, vkc_last_create_error (per
 *   thread), vkc_system_query, vkc_context_create, vkc_context_wrap,
 *   vkc_context_device, vkc_context_features_get, vkc_context_stats,
 *   vkc_context_vk, vkc_context_last_error (a copy per thread: a later
 *   failure on another thread replaces the context's message, not the copy), vkc_queue_lock/unlock,
 *   vkc_buffer_create, vkc_buffer_wrap, vkc_kernel_create(_glsl),
 *   vkc_seq_create, vkc_fuse_create, vkc_wait, vkc_poll, vkc_finish(_timeout),
 *   vkc_dispatch, vkc_copy, vkc_flush, vkc_ticket_export,
 *   vkc_wait_host_semaphore, the blocking transfers (on distinct buffers,
 *   or distinct bytes of one buffer, at once; two of them on the same
 *   bytes at once are a data race, as two memcpy would be: a mapped
 *   buffer's transfer is one), and the queries of a live object:
 *   vkc_buffer_size/map/vk, vkc_kernel_info_get/vk.
 * - One thread per object: calls on one sequence or one graph come from
 *   one thread at a time (distinct objects from distinct threads at once
 *   are fine): vkc_seq_begin/dispatch/copy/fill/barrier/acquire/release/
 *   end/set_push/set_arg/info_get, vkc_fuse_* (building, build, source,
 *   info, record into a sequence: both objects are used). vkc_seq_submit
 *   is in this class too, but a second thread submitting the same sequence
 *   meanwhile is refused with VKC_ERROR_INVALID_STATE (one atomic exchange),
 *   never a race; distinct sequences submit from distinct threads at once.
 *   The destroys (vkc_buffer/kernel/seq/fuse_destroy) too: no other call
 *   may use that handle at the same time or later; they are safe with work
 *   in flight and with calls on other objects.
 * - Not thread-safe: vkc_context_destroy and vkc_context_recover: no other
 *   call may use the context or its objects meanwhile.
 * The logger may be called from any thread that calls into vkc, and from
 * driver threads (validation messages).
 *
 * Using vkc beside volk
 * ---------------------
 * vkc loads Vulkan itself (its own function tables) and never touches volk's
 * global function pointers. If your program uses volk, include <volk.h>
 * before <vkc/vkc.h>.
 *
 * What vkc does NOT do: graphics, presentation. It computes on buffers and
 * images (see "Images"); a renderer hands its images to vkc and takes them
 * back (vkc_image_wrap, vkc_seq_acquire_image / vkc_seq_release_image).
 */
#ifndef VKC_H
#define VKC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef VULKAN_CORE_H_
#include <vulkan/vulkan_core.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version is kept here and read by CMake. */
#define VKC_VERSION_MAJOR 0
#define VKC_VERSION_MINOR 1
#define VKC_VERSION_PATCH 0
#define VKC_VERSION_STRING "0.1.0"

#if defined(_WIN32) && defined(VKC_SHARED)
#ifdef VKC_BUILDING
#define VKC_API __declspec(dllexport)
#else
#define VKC_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define VKC_API __attribute__((visibility("default")))
#else
#define VKC_API
#endif

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

/* X(name, value, text): the single list from which the enum and the strings
 * are both generated. */
#define VKC_RESULT_LIST(X)                                                                         \
    X(VKC_SUCCESS, 0, "success")                                                                   \
    X(VKC_NOT_READY, 1, "not ready: the work has not completed yet")                               \
    X(VKC_TIMEOUT, 2, "timeout: the wait ended before the work completed")                         \
    X(VKC_CONTENTS_LOST, 3,                                                                        \
      "recovered, but buffer contents were lost and sequences must be recorded again")             \
    X(VKC_ERROR_INVALID_ARGUMENT, -1, "invalid argument")                                          \
    X(VKC_ERROR_OUT_OF_HOST_MEMORY, -2, "out of host memory")                                      \
    X(VKC_ERROR_OUT_OF_DEVICE_MEMORY, -3, "out of device memory")                                  \
    X(VKC_ERROR_NO_LOADER, -4, "no Vulkan loader (libvulkan.so.1) could be loaded")                \
    X(VKC_ERROR_NO_DEVICE, -5, "no usable Vulkan device")                                          \
    X(VKC_ERROR_NO_COMPUTE_QUEUE, -6, "the device has no queue family with compute")               \
    X(VKC_ERROR_UNSUPPORTED, -7, "the device or build lacks a required feature")                   \
    X(VKC_ERROR_DEVICE_LOST, -8, "the device was lost")                                            \
    X(VKC_ERROR_VULKAN, -9, "a Vulkan call failed")                                                \
    X(VKC_ERROR_INVALID_SPIRV, -10, "invalid SPIR-V")                                              \
    X(VKC_ERROR_COMPILE, -11, "shader compilation failed")                                         \
    X(VKC_ERROR_MISMATCH, -12, "the call does not match the kernel's interface")                   \
    X(VKC_ERROR_LIMIT, -13, "a size or count exceeds a device limit")                              \
    X(VKC_ERROR_INVALID_STATE, -14, "the object is in the wrong state for this call")              \
    X(VKC_ERROR_INITIALIZATION_FAILED, -15, "initialisation failed")                               \
    X(VKC_ERROR_IO, -16, "file input/output failed")                                               \
    X(VKC_ERROR_INVALID_HANDLE, -17, "a destroyed, foreign or stale handle")                       \
    X(VKC_ERROR_INVALID_GRAPH, -18, "invalid fusion graph")

typedef enum vkc_result {
#define VKC_X_ENUM(name, value, text) name = value,
    VKC_RESULT_LIST(VKC_X_ENUM)
#undef VKC_X_ENUM
} vkc_result;

/* Name and meaning of a result, e.g. "VKC_ERROR_LIMIT: a size or count
 * exceeds a device limit". Never NULL; unknown values give "unknown". */
VKC_API const char *vkc_result_string(vkc_result result);

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct vkc_context vkc_context;
typedef struct vkc_buffer vkc_buffer;
typedef struct vkc_kernel vkc_kernel;
typedef struct vkc_seq vkc_seq;

typedef enum vkc_log_level {
    VKC_LOG_DEBUG = 1,
    VKC_LOG_INFO,
    VKC_LOG_WARN,
    VKC_LOG_ERROR,
} vkc_log_level;

/* Stable ids of what a log message is about; tests assert on them. */
typedef enum vkc_log_id {
    VKC_LOG_ID_GENERAL = 0,
    VKC_LOG_ID_VALIDATION,  /* from the validation layer (type VALIDATION) */
    VKC_LOG_ID_PERFORMANCE, /* from the validation layer (type PERFORMANCE) */
    VKC_LOG_ID_LAYER,       /* other debug-utils messages */
    VKC_LOG_ID_ERROR,       /* a vkc call failed; the message is the detail */
    VKC_LOG_ID_CACHE,       /* pipeline / SPIR-V cache events */
} vkc_log_id;

/* A logger. No logger means silence. func may be called from any thread
 * that calls into vkc, and from driver threads for validation messages. */
typedef struct vkc_logger {
    void (*func)(void *user_data, vkc_log_level level, vkc_log_id id, const char *message);
    void *user_data;
} vkc_logger;

/* A three-way switch whose zero value keeps the documented default. */
typedef enum vkc_toggle {
    VKC_DEFAULT = 0,
    VKC_OFF,
    VKC_ON,
} vkc_toggle;

/* How vkc_wait waits. Blocking on the driver costs 3-4x the latency of
 * polling on some drivers; spinning costs a CPU core. On a CPU device
 * (lavapipe), whose work runs on the host's own threads, the default and
 * VKC_WAIT_SPIN_THEN_BLOCK poll until done or the timeout, yielding the
 * core between polls, and never block: a blocked waiter left cores idle
 * between the device threads' hand-offs, and a long submission took 3-4x
 * as long. VKC_WAIT_BLOCK still blocks there. */
typedef enum vkc_wait_mode {
    /* VKC_WAIT_SPIN_MARKER where the device passes its self-test at context
     * creation (see there), else VKC_WAIT_SPIN_THEN_BLOCK.
     * vkc_context_features says which, and why. */
    VKC_WAIT_DEFAULT = 0,
    /* Poll for spin_ns, then (on a GPU) block until shortly before the
     * time the last such wait took and poll again, as VKC_WAIT_SPIN_MARKER
     * does past its budget. */
    VKC_WAIT_SPIN_THEN_BLOCK,
    VKC_WAIT_BLOCK, /* block in the driver at once */
    VKC_WAIT_SPIN,  /* poll until done or the timeout */
    /* Every submission ends with a tiny dispatch that counts completed
     * submissions in host-visible memory (after a barrier that makes all
     * earlier writes available to the host); vkc_wait and vkc_poll spin on
     * that word instead of asking the driver, which on some drivers signals
     * fences and semaphores tens of microseconds after the work is done.
     * An immediate-mode batch flushed while nothing else runs goes without
     * it (one dependent dispatch fewer): its ticket is polled on the
     * timeline, which that submit signals. So does a sequence whose results
     * the host's GPU takes rather than its CPU (vkc_seq_desc.
     * completion_marker: by default one that releases a buffer or image);
     * submitted while vkc's earlier work still runs, such a sequence gets
     * the marker after it in the same submission.
     * Vulkan does not promise that a shader's write is seen before the
     * semaphore signals; this mode relies on the device making it visible
     * (it does on NVIDIA and lavapipe), so context creation checks it: a
     * few submissions whose results and count must be seen, right, and no
     * later than the timeline; where they are not, the context uses
     * VKC_WAIT_SPIN_THEN_BLOCK instead (logged, and reported in
     * vkc_context_features). Command buffers and resources are still
     * recycled only on the real timeline. Costs one extra dispatch and
     * barrier per submission. Not used with the fence fallback.
     * On a GPU, work still running after 50 x spin_ns (10 ms) of spinning
     * lets the driver block the thread: until shortly before the time the
     * last such wait took (it spins again from there, and blocks until
     * done past that time), or until done with VKC_WAIT_PREDICT=0. */
    VKC_WAIT_SPIN_MARKER,
} vkc_wait_mode;

typedef struct vkc_context_desc {
    /* Khronos validation + synchronization validation. DEFAULT: on when the
     * code calling vkc_context_create was compiled without NDEBUG (a debug
     * build), off with NDEBUG, however vkc itself was built; the environment
     * variable VKC_VALIDATION=0|1 (or off/on, false/true, no/yes) overrides
     * that, and this field overrides both; another value of the variable is
     * warned about and means the build default. If the layer is missing,
     * validation is reported off with a warning. */
    vkc_toggle validation;
    /* Which physical device: NULL picks the best (discrete > integrated >
     * virtual > CPU, then highest API version); "N" is an index; anything
     * else is a case-insensitive name substring; matching no device fails
     * with VKC_ERROR_NO_DEVICE. When NULL, the environment variable
     * VKC_DEVICE is used the same way, except that matching no device is
     * warned about and picks the best one. */
    const char *device;
    /* Force a queue family instead of vkc's choice. */
    bool queue_family_override;
    uint32_t queue_family;
    vkc_logger logger;
    /* Passed through to every Vulkan create/destroy call. Must stay valid
     * for the whole lifetime of the context. */
    const VkAllocationCallbacks *allocator;
    vkc_wait_mode wait_mode;
    /* Spin budget of VKC_WAIT_SPIN_THEN_BLOCK, and a fiftieth of
     * VKC_WAIT_SPIN_MARKER's; 0 = 200 us (not on a CPU device: see
     * vkc_wait_mode). */
    uint64_t spin_ns;
    /* DEFAULT: used where the device has them. OFF forces the fallback
     * (descriptor-set pools / fences); ON fails creation if missing. */
    vkc_toggle push_descriptors;
    vkc_toggle timeline_semaphores;
    /* On-disk pipeline and SPIR-V cache. DEFAULT/ON: under cache_dir, else
     * $XDG_CACHE_HOME/vkc, else ~/.cache/vkc. OFF: memory only. */
    vkc_toggle disk_cache;
    const char *cache_dir;
    /* Immediate mode: the most dispatches a batch takes (0 = default; an
     * idle GPU may get it earlier, see vkc_dispatch) and how many batches
     * may be in flight before an enqueue waits (0 = default). */
    uint32_t batch_size;
    uint32_t batches_in_flight;
    /* What validation DEFAULT means (ON or OFF). Filled by vkc.h's
     * vkc_context_create from the caller's NDEBUG; a caller that reaches
     * the function without the header's macro (a binding, a function
     * pointer) and leaves it DEFAULT gets OFF. */
    vkc_toggle validation_default;
    /* Profiling (see the "Profiling" chapter). ON: every sequence of the
     * context (immediate mode included) is recorded with GPU timestamps and
     * its CPU times are kept. DEFAULT: off, unless the environment variable
     * VKC_PROFILE=path.json is set (then on, and the trace is written to
     * path.json, and its picture to path.svg, at vkc_context_destroy). OFF:
     * off even with VKC_PROFILE. */
    vkc_toggle profile;
    /* Events the profile keeps before it reports a full buffer; 0 = 65536. */
    uint32_t profile_capacity;
    /* Pipelines capture the driver's statistics
     * (VK_KHR_pipeline_executable_properties) for vkc_kernel_stats_get.
     * DEFAULT: when profiling is on. Where the device lacks the extension it
     * is quietly off and the statistics come from reflection alone. */
    vkc_toggle kernel_statistics;
    /* The bound of every wait vkc makes without a timeout of the caller's:
     * vkc_finish, the blocking buffer calls, an enqueue that waits for the
     * oldest batch, vkc_context_destroy. Past it they return VKC_TIMEOUT
     * (with a message) instead of blocking on. 0 = 10 s. */
    uint64_t wait_timeout_ns;
} vkc_context_desc;

/* Create a context: load Vulkan, create an instance and a device, pick the
 * queue family, read properties.
 *
 * Returns VKC_ERROR_NO_LOADER when libvulkan.so.1 is missing,
 * VKC_ERROR_NO_DEVICE when no driver reports a device (or none matches the
 * requested one), VKC_ERROR_NO_COMPUTE_QUEUE when the device cannot compute.
 * *out is NULL on failure; the message is logged through desc->logger and
 * kept for vkc_last_create_error(). Thread-safe. */
VKC_API vkc_result vkc_context_create(const vkc_context_desc *desc, vkc_context **out);

/* The caller's build, not vkc's, decides validation's default: this macro
 * hands the NDEBUG in force where vkc_context_create is called to the
 * library. `(vkc_context_create)` or a function pointer bypasses it. Define
 * VKC_NO_CALLER_NDEBUG to do without. */
#if !defined(VKC_BUILDING) && !defined(VKC_NO_CALLER_NDEBUG)
static inline vkc_result vkc__context_create_as(const vkc_context_desc *desc, vkc_context **out,
                                                vkc_toggle build_default)
{
#ifdef __cplusplus
    vkc_context_desc d = {};
#else
    vkc_context_desc d = {0};
#endif
    if (desc)
        d = *desc;
    if (d.validation_default == VKC_DEFAULT)
        d.validation_default = build_default;
    return (vkc_context_create)(&d, out);
}
#ifdef NDEBUG
#define vkc_context_create(desc, out) vkc__context_create_as((desc), (out), VKC_OFF)
#else
#define vkc_context_create(desc, out) vkc__context_create_as((desc), (out), VKC_ON)
#endif
#endif

/* Submit queued immediate work, wait for vkc's work (bounded: see
 * "Lifetimes"), then destroy everything the context created, in reverse
 * order. Objects (buffers, kernels, sequences, graphs) still alive are
 * destroyed too, whatever references they have. NULL does nothing. Not
 * thread-safe. */
VKC_API void vkc_context_destroy(vkc_context *ctx);

/* Recover from device loss: create a new VkDevice on the same physical
 * device and rebuild everything the context holds behind the same handles.
 *
 * After a VKC_ERROR_DEVICE_LOST, every call on the context (and its objects)
 * returns VKC_ERROR_DEVICE_LOST at once. This call makes them usable again:
 * recording units and descriptor pools are created anew, kernels get new
 * pipelines from the SPIR-V they keep, buffers are re-created with the
 * same size and kind and images with the same shape and format (in their
 * resting layout), samplers as they were; their CONTENTS ARE LOST (upload
 * them again). Images that wrap a host's VkImage answer
 * VKC_ERROR_INVALID_HANDLE from then on (the VkImage died with the device).
 * Sequences must be recorded again: their submit returns
 * VKC_ERROR_INVALID_STATE until vkc_seq_begin. Tickets issued before the
 * loss read as complete (their work is gone).
 *
 * Returns VKC_SUCCESS when nothing was lost (the device was not lost, or no
 * buffer, image or sequence existed), VKC_CONTENTS_LOST (positive: success)
 * when buffers, images or sequences were rebuilt without their contents (the message in
 * vkc_context_last_error() gives the counts), VKC_ERROR_UNSUPPORTED for a
 * context that wraps the host's device (the host must recreate its device),
 * or the error of the failed re-creation (the context then stays lost and
 * vkc_context_destroy() still frees everything). Not thread-safe: no other
 * call may use the context or its objects meanwhile. */
VKC_API vkc_result vkc_context_recover(vkc_context *ctx);

/* The detailed message of the last failure on this context ("" if none) and
 * the VkResult behind it (VK_SUCCESS if none came from Vulkan). The string is
 * this thread's copy, valid until this thread calls vkc_context_last_error
 * again; a failure on another thread may replace the context's message
 * meanwhile, never the copy. Thread-safe. */
VKC_API const char *vkc_context_last_error(const vkc_context *ctx);
VKC_API VkResult vkc_context_last_vk_result(const vkc_context *ctx);

/* The message of the last vkc_context_create() failure on this thread. */
VKC_API const char *vkc_last_create_error(void);

typedef enum vkc_device_type {
    VKC_DEVICE_TYPE_OTHER = 0,
    VKC_DEVICE_TYPE_INTEGRATED,
    VKC_DEVICE_TYPE_DISCRETE,
    VKC_DEVICE_TYPE_VIRTUAL,
    VKC_DEVICE_TYPE_CPU,
} vkc_device_type;

/* Why a queue family was chosen. */
typedef enum vkc_queue_reason {
    VKC_QUEUE_REASON_NONE = 0,
    VKC_QUEUE_REASON_COMPUTE_ONLY,    /* compute without graphics */
    VKC_QUEUE_REASON_NO_COMPUTE_ONLY, /* no such family: compute with most queues */
    VKC_QUEUE_REASON_OVERRIDE,        /* asked for by the caller */
} vkc_queue_reason;

VKC_API const char *vkc_queue_reason_string(vkc_queue_reason reason);

#define VKC_MAX_QUEUE_FAMILIES 16

typedef struct vkc_queue_family_info {
    uint32_t flags; /* VkQueueFlags */
    uint32_t count;
    uint32_t timestamp_valid_bits;
} vkc_queue_family_info;

/* What vkc knows about one device. Read once; kept by the context. */
typedef struct vkc_device_info {
    char name[256];
    char driver_name[256];
    char driver_info[256];
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t driver_version;
    uint32_t api_version;
    vkc_device_type type;
    uint8_t device_uuid[16];
    uint8_t pipeline_cache_uuid[16];
    uint8_t driver_uuid[16]; /* VkPhysicalDeviceIDProperties::driverUUID */

    uint32_t queue_family_count;
    vkc_queue_family_info queue_families[VKC_MAX_QUEUE_FAMILIES];
    uint32_t queue_family; /* the one vkc uses */
    vkc_queue_reason queue_reason;
    uint32_t queue_count; /* queues in that family */

    uint32_t subgroup_size;
    uint32_t min_subgroup_size, max_subgroup_size;
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_count[3];
    uint32_t max_workgroup_invocations;
    uint32_t max_shared_memory;
    uint32_t max_push_constants_size;
    uint64_t max_storage_buffer_range;
    uint64_t max_memory_allocation_size;
    uint64_t min_storage_buffer_offset_alignment;
    float timestamp_period; /* ns per tick */
    bool timestamps;        /* timestamps on the chosen family */

    /* Optional features: present on the device. */
    bool timeline_semaphore;
    bool synchronization2;
    bool push_descriptor;
    bool subgroup_size_control;
    bool storage_buffer_8bit;
    bool storage_buffer_16bit;
    bool shader_float16;
    bool shader_int8;
    bool shader_int64;
    bool shader_float64;

    /* Streaming multiprocessors / compute units: 0 when unknown. */
    uint32_t sm_count;
    uint32_t warps_per_sm; /* resident subgroups per SM/CU, 0 when unknown */
    const char *sm_source; /* the extension that reported it, or NULL */

    /* Storage images declared without a format qualifier can be read /
     * written (else such a kernel is VKC_ERROR_UNSUPPORTED). */
    bool storage_image_read_without_format;
    bool storage_image_write_without_format;

    /* Present on the device (profiling and kernel statistics use them). */
    bool calibrated_timestamps;    /* VK_EXT_calibrated_timestamps */
    bool pipeline_executable_info; /* VK_KHR_pipeline_executable_properties */
    bool buffer_device_address;    /* bufferDeviceAddress (Vulkan 1.2) */
    bool conditional_rendering;    /* VK_EXT_conditional_rendering (armed submission uses it) */
} vkc_device_info;

/* The device the context uses. Valid for the context's lifetime. */
VKC_API const vkc_device_info *vkc_context_device(const vkc_context *ctx);

/* What the context actually uses (after fallbacks). */
typedef struct vkc_context_features {
    bool validation;      /* the Khronos layer is on */
    bool sync_validation; /* and synchronization validation with it */
    bool timeline_semaphores;
    bool synchronization2;
    bool push_descriptors;
    bool wrapped; /* the device belongs to the host */
    vkc_wait_mode wait_mode;
    uint64_t spin_ns;
    uint32_t batch_size;
    uint32_t batches_in_flight;
    uint32_t default_workgroup_size;
    uint32_t groups_per_sm; /* grid cap per SM (VKC_GROUPS_PER_SM); 0: no cap */
    uint32_t max_grid_groups;
    /* Why wait_mode is what it is: "asked", "self-test passed", or the
     * reason the completion marker is not used ("no timeline semaphores",
     * "self-test: ..."). Valid for the context's lifetime. */
    const char *wait_reason;
    /* Buffers have device addresses (vkc_buffer_address) and shaders may
     * use PhysicalStorageBufferAddresses (GL_EXT_buffer_reference). */
    bool buffer_device_address;
    /* Cooperative dispatches (vkc_seq_dispatch_cooperative) run as one
     * launch with device-wide barriers (true) or one dispatch per step
     * (false), and why (the extension that gives the SM count, "the device
     * reports no SM or CU count", "VKC_COOPERATIVE=off"). Valid for the
     * context's lifetime. */
    bool cooperative;
    const char *cooperative_reason;
    /* Armed submission: a recorded sequence submitted round trip after
     * round trip on an idle queue has its next copies submitted ahead
     * (up to VKC_ARM_DEPTH), behind a semaphore that vkc_seq_submit signals
     * from the host, so the round trip holds no vkQueueSubmit. Other work on
     * the queue first cancels the armed copies (they run with their
     * dispatches skipped). On
     * where a self-test at context creation passed; armed_reason says
     * "self-test passed" or why not ("no VK_EXT_conditional_rendering",
     * "the host shares the device or the queue", "VKC_ARM=0", "self-test:
     * ..."). Valid for the context's lifetime. */
    bool armed_submits;
    const char *armed_reason;
    /* Completion epilogue: a submission whose last dispatch (a kernel from
     * GLSL or SPIR-V that carries it, alone after a barrier, writing no
     * host-visible memory, unprofiled, no images) publishes its own
     * completion from its last workgroup, instead of ending with the
     * completion marker (a barrier and a one-invocation dispatch). On
     * where the marker is trusted, the device has bufferDeviceAddress and a
     * self-test at context creation passed; epilogue_reason says "self-test
     * passed" or why not ("no bufferDeviceAddress", "VKC_EPILOGUE=0",
     * "self-test: ..."). Valid for the context's lifetime. */
    bool completion_epilogue;
    const char *epilogue_reason;
} vkc_context_features;

VKC_API vkc_result vkc_context_features_get(const vkc_context *ctx, vkc_context_features *out);

/* Counters that prove steady-state work allocates nothing new. Thread-safe. */
typedef struct vkc_stats {
    uint64_t command_buffers;       /* alive */
    uint64_t command_buffers_reset; /* total recycles */
    uint64_t descriptor_pools;      /* alive */
    uint64_t descriptor_sets;       /* allocated, total */
    uint64_t memory_blocks;         /* VkDeviceMemory alive */
    uint64_t memory_bytes;          /* in those blocks */
    uint64_t buffers;               /* vkc_buffer alive */
    uint64_t pipelines;             /* alive */
    uint64_t shader_compiles;       /* GLSL -> SPIR-V, total */
    uint64_t spirv_cache_hits;      /* total */
    uint64_t pipeline_cache_hits;   /* disk cache loaded with data */
    uint64_t submits;               /* submissions (one per command buffer), total */
    uint64_t dispatches;            /* recorded, total (counted as each sequence or batch ends) */
    uint64_t barriers;              /* recorded, total */
    uint64_t staging_blocks;        /* staging ring blocks alive */
    uint64_t images;                /* vkc_image alive */
    uint64_t samplers;              /* alive (cached in the context) */
    uint64_t image_views;           /* alive (cached per image) */
    /* Submits that signal the timeline, total, with the empty ones a wait or
     * an export adds (not counted in submits). Where the completion marker
     * is trusted most submits carry no signal: a later one covers them. */
    uint64_t timeline_signals;
    /* Armed submission: submits that opened an armed copy (no vkQueueSubmit
     * on them), and armed copies cancelled by other work, total. A sequence
     * whose round trips come one after another keeps up to VKC_ARM_DEPTH
     * (256) copies armed, topped up by one vkQueueSubmit once half opened;
     * a cancel runs them all empty (about 5.6 us each on the H200). */
    uint64_t armed_opens;
    uint64_t armed_cancels;
    /* Recorded copies that end with the completion epilogue instead of the
     * marker, total. */
    uint64_t epilogue_records;
    /* Immediate batches that held exactly the commands of a batch vkc kept
     * recorded (dispatches and copies on buffers: kernels, grids,
     * constants, buffers, ranges) and were submitted as that one was recorded, without
     * recording, total. vkc keeps the last eight such batches (see
     * vkc_dispatch). */
    uint64_t immediate_repeats;
    /* Immediate batches for an idle queue that went in pieces, so that the
     * GPU started on their first commands while the rest was recorded (see
     * vkc_dispatch), total. */
    uint64_t immediate_splits;
    /* Submits of freshly recorded immediate batches or pieces that took
     * VKC_IMM_SLOW_US (15 us) or more, where pieces are on, total: after
     * one, batches go whole until a fresh batch's submit takes less (see
     * vkc_dispatch). */
    uint64_t immediate_slow_submits;
    /* Submits of a long sequence (over 1,024 commands) that went as its
     * spare copy, total. Its copy is begun without SIMULTANEOUS_USE, which
     * some drivers pay for at submit; submitted again while an earlier
     * submit is pending, the sequence takes a second copy that has the
     * flag (recorded once, on the first such submit). */
    uint64_t spare_submits;
    /* Freshly recorded immediate batches that went quiet (each with the
     * completion marker, its submits signalling nothing), to measure or
     * because a timeline signal was found to cost tens of microseconds
     * (VKC_SIGNAL_ADAPT, on by default on a GPU; see vkc_dispatch), total. */
    uint64_t immediate_quiet_batches;
    /* Waits on a GPU that spun their budget (VKC_WAIT_SPIN_MARKER: 50 x
     * spin_ns; VKC_WAIT_SPIN_THEN_BLOCK: spin_ns) and then let the driver
     * block, total; of those, the ones that blocked only until shortly
     * before the time the last such wait took and then spun again
     * (VKC_WAIT_PREDICT, the default: on), and of these, the ones whose
     * spin saw the work end (the others blocked again until it did). */
    uint64_t long_waits;
    uint64_t long_waits_guessed;
    uint64_t long_waits_spun;
} vkc_stats;

VKC_API vkc_result vkc_context_stats(vkc_context *ctx, vkc_stats *out);

/* Pure function: choose a queue family from a table.
 *
 * A family with COMPUTE and without GRAPHICS comes first (the dedicated
 * compute family; the one with most queues if several), otherwise the
 * COMPUTE family with the most queues. override_family >= 0 forces that
 * family if it has COMPUTE. Returns VKC_ERROR_NO_COMPUTE_QUEUE when no
 * family can compute, VKC_ERROR_INVALID_ARGUMENT for a bad override. */
VKC_API vkc_result vkc_choose_queue_family(const vkc_queue_family_info *families, uint32_t count,
                                           int32_t override_family, uint32_t *out_family,
                                           vkc_queue_reason *out_reason);

/* The Vulkan objects behind a context, for hosts and tools that record their
 * own work beside vkc (benchmarks compare against raw Vulkan this way). The
 * queue is shared with vkc: hold vkc_queue_lock() around any use of it. */
typedef struct vkc_vk_handles {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    uint32_t api_version; /* enabled on the device */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    PFN_vkGetDeviceProcAddr get_device_proc_addr;
} vkc_vk_handles;

VKC_API vkc_result vkc_context_vk(const vkc_context *ctx, vkc_vk_handles *out);
/* Serialise the host's use of the context's queue with vkc's submits. The
 * lock also cancels a copy vkc armed (vkc_seq_submit), which would otherwise
 * sit on the queue in front of the host's own submits. */
VKC_API void vkc_queue_lock(vkc_context *ctx);
VKC_API void vkc_queue_unlock(vkc_context *ctx);

/* ------------------------------------------------------------------------ */
/* System query (for diagnosis; vkc-info uses it)                           */
/* ------------------------------------------------------------------------ */

#define VKC_MAX_DEVICES 16
#define VKC_MAX_LAYERS 64

typedef struct vkc_system_info {
    bool loader_found;
    char loader_path[256];
    uint32_t instance_version;
    bool validation_available; /* VK_LAYER_KHRONOS_validation is installed */
    uint32_t layer_count;
    char layers[VKC_MAX_LAYERS][VK_MAX_EXTENSION_NAME_SIZE];
    uint32_t device_count;
    vkc_device_info devices[VKC_MAX_DEVICES];
    int32_t best_device; /* the one vkc_context_create would pick; -1 none */
    char problem[512];   /* what is wrong and how to fix it; "" if fine */
    /* Device groups (vkEnumeratePhysicalDeviceGroups; Vulkan 1.1): devices
     * that one VkDevice could drive together. Most drivers report every
     * device as a group of one. members are indices into devices[]. */
    uint32_t group_count;
    struct vkc_device_group {
        uint32_t member_count;
        uint32_t members[VKC_MAX_DEVICES];
        bool subset_allocation;
    } groups[VKC_MAX_DEVICES];
} vkc_system_info;

/* Fill *out with the loader, layers and devices present, without creating a
 * device. Returns VKC_ERROR_NO_LOADER or VKC_ERROR_NO_DEVICE (with
 * out->problem saying how to fix it) when there is nothing usable. */
VKC_API vkc_result vkc_system_query(vkc_system_info *out);

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum vkc_memory {
    VKC_MEMORY_DEVICE = 0, /* device-local; uploads go through staging */
    VKC_MEMORY_UPLOAD,     /* host-visible, write-combined: CPU -> GPU */
    VKC_MEMORY_READBACK,   /* host-visible, cached: GPU -> CPU */
} vkc_memory;

typedef struct vkc_buffer_desc {
    uint64_t size; /* bytes, > 0 */
    vkc_memory memory;
    const char *name; /* debug name, copied */
} vkc_buffer_desc;

/* Create a buffer, sub-allocated from a large memory block (a dedicated
 * allocation when it is at least half a block).
 *
 * Each buffer is a VkBuffer of its own (usage: storage, uniform, transfer
 * source and destination). DEVICE memory that the host can map on the big
 * device-local heap (resizable BAR, unified memory, CPU devices) is used and
 * mapped, so its transfers need no staging. A buffer may be larger than
 * maxStorageBufferRange: it can be created, filled, copied and transferred,
 * but a dispatch refuses to bind a range beyond that limit (bind a window
 * with vkc_arg offset/size instead).
 *
 * VKC_ERROR_INVALID_ARGUMENT for size 0 or an unknown kind, VKC_ERROR_LIMIT
 * beyond maxMemoryAllocationSize, VKC_ERROR_OUT_OF_DEVICE_MEMORY when no
 * suitable memory type has room. *out is NULL on failure. Thread-safe. */
VKC_API vkc_result vkc_buffer_create(vkc_context *ctx, const vkc_buffer_desc *desc,
                                     vkc_buffer **out);
/* Drop the caller's reference (see "Lifetimes"): returns at once; the
 * handle is dead for new uses; the memory goes back when work recorded or
 * in flight that names the buffer no longer needs it. NULL and dead
 * handles do nothing. One thread per object. */
VKC_API void vkc_buffer_destroy(vkc_buffer *buf);
/* The size asked for at creation; 0 for NULL or an invalid handle. */
VKC_API uint64_t vkc_buffer_size(const vkc_buffer *buf);
/* Persistent mapping of a host-visible buffer (UPLOAD, READBACK, or DEVICE
 * memory that happens to be host-visible); NULL otherwise. Writing through it
 * while the GPU uses the buffer is a race: wait for the work first. Reading
 * through it is very slow where the memory is not host-cached (DEVICE and
 * UPLOAD memory behind the BAR of a discrete GPU): prefer
 * vkc_buffer_download, which stages such reads.
 *
 * A DEVICE buffer is the host's to read only from its first
 * vkc_buffer_map (or a download that reads its mapping): until then work
 * that writes it ends without the barrier that makes writes visible to the
 * host (1.25 us of a round trip on the H200). That first call submits such
 * a barrier after all earlier work and waits for it, and sequences
 * recorded before record again, with the barrier, at their next submit. */
VKC_API void *vkc_buffer_map(vkc_buffer *buf);
/* The device address of byte 0 of the buffer, for shaders that reach
 * buffers through GL_EXT_buffer_reference (a resident kernel's payload, for
 * one). Where the device has bufferDeviceAddress and the context owns its
 * device, every vkc buffer gets one; VKC_ERROR_UNSUPPORTED otherwise and for
 * a buffer that wraps the host's VkBuffer. A dispatch that reaches a buffer
 * only by address does not tell vkc about it: order such work yourself
 * (vkc_seq_barrier, or waits). Thread-safe. */
VKC_API vkc_result vkc_buffer_address(const vkc_buffer *buf, uint64_t *out_address);
/* The VkBuffer and offset behind a vkc buffer, for the host's own use. */
VKC_API vkc_result vkc_buffer_vk(const vkc_buffer *buf, VkBuffer *out_buffer,
                                 VkDeviceSize *out_offset);

/* Blocking transfers: they return when the data has arrived. They are
 * ordered after all work submitted earlier on the context (immediate-mode
 * work is flushed first; upload and download wait for it). Host-visible
 * memory is copied through its mapping; device-local memory that is not
 * host-visible goes through a reused staging ring, in chunks, and so do
 * downloads of more than 1 KiB from a mapping the CPU does not cache (that
 * is read at a few MB/s). A range outside the buffer (offset + size past
 * its end, overflow included) gives VKC_ERROR_INVALID_ARGUMENT; size 0 does
 * nothing. Copy refuses overlapping ranges of one buffer. Each waits at most
 * the context's wait_timeout_ns: VKC_TIMEOUT then (the data has not
 * arrived; its submission still holds the buffer). Thread-safe. */
VKC_API vkc_result vkc_buffer_upload(vkc_buffer *buf, uint64_t offset, const void *data,
                                     uint64_t size);
VKC_API vkc_result vkc_buffer_download(vkc_buffer *buf, uint64_t offset, void *data, uint64_t size);
/* Fill with a repeated 32-bit value; offset and size multiples of 4. */
VKC_API vkc_result vkc_buffer_fill(vkc_buffer *buf, uint64_t offset, uint64_t size, uint32_t value);
VKC_API vkc_result vkc_buffer_copy(vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                                   uint64_t src_offset, uint64_t size);

/* ------------------------------------------------------------------------ */
/* Images                                                                   */
/* ------------------------------------------------------------------------ */

/* Images: 2D, 2D arrays and 3D, with mip levels, for kernels that read and
 * write textures (post-processing, reductions over a renderer's images).
 *
 *   vkc_image *img;
 *   vkc_image_create(ctx, &(vkc_image_desc){.format = VKC_FORMAT_RGBA16F,
 *                    .width = w, .height = h}, &img);
 *   vkc_image_upload(img, NULL, texels, w * h * 8);     // NULL: all of mip 0
 *   vkc_sampler *lin;
 *   vkc_sampler_get(ctx, &(vkc_sampler_desc){.filter = VKC_FILTER_LINEAR}, &lin);
 *   vkc_arg args[] = {{.image = img, .sampler = lin},   // combined image sampler
 *                     {.image = out}};                  // storage image
 *   vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = k, .args = args, ...});
 *
 * Layouts. vkc tracks each image's subresources (mip x layer) like buffer
 * ranges: a use that needs another layout (GENERAL for storage access,
 * SHADER_READ_ONLY_OPTIMAL for sampling, TRANSFER_SRC/DST_OPTIMAL for
 * copies) gets its transition in the one barrier of its dependency level,
 * beside the buffer barriers. Every image has a resting layout: GENERAL for
 * images vkc creates (they are moved there at creation), the layout given
 * to vkc_image_wrap for wrapped ones (GENERAL if that is UNDEFINED). Each
 * recorded sequence and each immediate batch starts from the resting
 * layout and, when it left it, ends with a transition back, so a sequence
 * can be submitted again and again and blocking transfers find the image
 * where they expect it. An acquire (vkc_seq_acquire_image) sets the layout
 * from which the rest of the sequence starts; a release
 * (vkc_seq_release_image) leaves the image in the layout it names, and the
 * image is the host's from then on: vkc's next use of it must follow an
 * acquire (blocking transfers and immediate commands assume the resting
 * layout). A sequence that names an image in a layout other than its
 * resting one costs one more barrier at its end (the way back); images used
 * only as storage images stay in GENERAL and cost nothing extra.
 *
 * Hazards. As for buffers, at the granularity of subresources (one mip
 * level of one layer): a copy to one corner of a subresource and a kernel
 * reading another corner of it are ordered. A command cannot name one
 * subresource in two layouts (a storage and a sampled binding of the same
 * mip, say): VKC_ERROR_INVALID_ARGUMENT. Lifetimes are those of buffers
 * (see "Lifetimes"): vkc_image_destroy never waits; a sequence that
 * recorded the image still runs on it, work in flight finishes on it, and
 * a new use of the dead handle is VKC_ERROR_INVALID_HANDLE naming it.
 *
 * Texel data on the host and in buffers is tightly packed: rows of
 * width * texel size bytes, then height rows, then depth slices, then
 * layers. 16-bit floats are IEEE half, SRGB texels are stored encoded,
 * BGRA8 texels as B, G, R, A. What the device allows per format (storage,
 * sampling, linear filtering): vkc_format_support_get; vkc-info lists it.
 *
 * Thread safety: as buffers. Creation, destruction, blocking transfers and
 * vkc_sampler_get are thread-safe; one image must not be transferred from
 * two threads at once. */

typedef struct vkc_image vkc_image;
typedef struct vkc_sampler vkc_sampler;

typedef enum vkc_image_type {
    VKC_IMAGE_2D = 0,
    VKC_IMAGE_2D_ARRAY,
    VKC_IMAGE_3D,
} vkc_image_type;

typedef enum vkc_format {
    VKC_FORMAT_DEFAULT = 0, /* = RGBA8_UNORM */
    VKC_FORMAT_R8_UNORM,
    VKC_FORMAT_RG8_UNORM,
    VKC_FORMAT_RGBA8_UNORM,
    VKC_FORMAT_RGBA8_SRGB, /* sampled only: no device can store to it */
    VKC_FORMAT_R16F,
    VKC_FORMAT_RGBA16F,
    VKC_FORMAT_R32F,
    VKC_FORMAT_RG32F,
    VKC_FORMAT_RGBA32F,
    VKC_FORMAT_R32UI,
    VKC_FORMAT_R32I,
    /* A renderer's usual swapchain format: texels are stored B, G, R, A
     * (in uploads and downloads too) and kernels see R, G, B, A. Storage
     * where the device allows it (its kernels declare no format qualifier
     * and need shaderStorageImageRead/WriteWithoutFormat); the SRGB form is
     * sampled only. VKC_ERROR_UNSUPPORTED where the device has neither. */
    VKC_FORMAT_BGRA8_UNORM,
    VKC_FORMAT_BGRA8_SRGB,
    VKC_FORMAT_COUNT_
} vkc_format;

/* The format's name ("RGBA16F"), its VkFormat and its texel size in bytes;
 * "unknown" / VK_FORMAT_UNDEFINED / 0 for a value out of range. */
VKC_API const char *vkc_format_name(vkc_format format);
VKC_API VkFormat vkc_format_vk(vkc_format format);
VKC_API uint32_t vkc_format_texel_size(vkc_format format);

/* How kernels use an image. Transfers (upload, download, clear, copies) are
 * always possible and need no flag. */
typedef enum vkc_image_usage {
    VKC_IMAGE_USAGE_DEFAULT = 0, /* every one of STORAGE, SAMPLED the format allows */
    VKC_IMAGE_USAGE_STORAGE = 1,
    VKC_IMAGE_USAGE_SAMPLED = 2,
    /* A colour attachment too, for a host that renders into a vkc image
     * through vkc_image_vk(). */
    VKC_IMAGE_USAGE_COLOR_ATTACHMENT = 4,
} vkc_image_usage;

/* What the context's device can do with images of a format (its format
 * features for optimal tiling). usage: the vkc_image_usage bits an image of
 * the format may have; 0 when the device cannot copy such images (then
 * vkc_image_create gives VKC_ERROR_UNSUPPORTED for any usage).
 * linear_filter: a LINEAR sampler may sample it. A storage image whose
 * format GLSL cannot name (BGRA8) also needs a kernel without a format
 * qualifier (vkc_device_info.storage_image_*_without_format). */
typedef struct vkc_format_support {
    uint32_t usage;
    bool linear_filter;
} vkc_format_support;

/* Fill *out for format. VKC_ERROR_INVALID_ARGUMENT for an unknown format
 * or a NULL out (then *out, where given, is zeroed). Thread-safe. */
VKC_API vkc_result vkc_format_support_get(vkc_context *ctx, vkc_format format,
                                          vkc_format_support *out);

typedef struct vkc_image_desc {
    vkc_image_type type;
    vkc_format format;
    uint32_t width;           /* > 0 */
    uint32_t height;          /* 0 = 1 */
    uint32_t depth_or_layers; /* depth of a 3D image, layers of an array; 0 = 1 */
    uint32_t mip_levels;      /* 0 = 1; at most log2(largest extent) + 1 */
    uint32_t usage;           /* vkc_image_usage bits; 0 = DEFAULT */
    const char *name;         /* debug name, copied */
} vkc_image_desc;

/* Create a device-local image (its own dedicated memory), optimal tiling,
 * EXCLUSIVE to vkc's queue family, in its resting layout GENERAL.
 *
 * What the device supports is asked of it (format features per usage):
 * VKC_ERROR_UNSUPPORTED naming the format and the usage it lacks (a storage
 * RGBA8_SRGB image, say); VKC_ERROR_INVALID_ARGUMENT for a zero width, an
 * unknown type or format, a 2D image with depth_or_layers > 1 or too many
 * mip levels; VKC_ERROR_LIMIT beyond the device's image limits;
 * VKC_ERROR_OUT_OF_DEVICE_MEMORY. *out is NULL on failure. Thread-safe. */
VKC_API vkc_result vkc_image_create(vkc_context *ctx, const vkc_image_desc *desc, vkc_image **out);
/* Drop the caller's reference (see "Lifetimes"): returns at once; the
 * image, its memory and views are freed once no recorded sequence or work
 * in flight names it. A wrapped image frees only vkc's record and views.
 * NULL does nothing. */
VKC_API void vkc_image_destroy(vkc_image *img);

typedef struct vkc_image_info {
    vkc_image_type type;
    vkc_format format;
    uint32_t width, height, depth; /* of mip 0; depth 1 unless 3D */
    uint32_t layers;               /* 1 unless an array */
    uint32_t mip_levels;
    uint32_t usage;      /* vkc_image_usage bits, resolved */
    uint32_t texel_size; /* bytes */
    bool wrapped;        /* the VkImage belongs to the host */
    VkImageLayout resting_layout;
    const char *name; /* valid for the image's lifetime; "" if none */
} vkc_image_info;

VKC_API vkc_result vkc_image_info_get(const vkc_image *img, vkc_image_info *out);
/* The VkImage behind a vkc image, for the host's own use (vkc owns it
 * unless wrapped). */
VKC_API vkc_result vkc_image_vk(const vkc_image *img, VkImage *out_image);

/* A box of texels in one mip level and a range of layers. Zero fields mean
 * "the whole": width/height/depth 0 = to the end of the mip level from
 * x/y/z, layer_count 0 = all layers from base_layer. A NULL region is all
 * of mip 0. For a 3D image z/depth address depth slices and the layers are
 * 0..1. */
typedef struct vkc_image_region {
    uint32_t mip;
    uint32_t base_layer;
    uint32_t layer_count;
    uint32_t x, y, z;
    uint32_t width, height, depth;
} vkc_image_region;

/* Mip levels and layers, for clears and kernel bindings: mip_count 0 = all
 * mip levels from base_mip (but 1 for a storage binding: a storage image
 * view sees one level), layer_count 0 = all layers from base_layer. */
typedef struct vkc_image_range {
    uint32_t base_mip;
    uint32_t mip_count;
    uint32_t base_layer;
    uint32_t layer_count;
} vkc_image_range;

/* Bytes a region holds, tightly packed (0 for a bad region, with the error
 * in the context). */
VKC_API uint64_t vkc_image_region_size(const vkc_image *img, const vkc_image_region *region);

/* Blocking transfers, as vkc_buffer_upload/download: ordered after all work
 * submitted earlier on the context, through the staging ring, returning
 * when the data has arrived. size must be exactly the region's bytes
 * (vkc_image_region_size). VKC_ERROR_INVALID_ARGUMENT for a region, mip or
 * layer out of range (named in the message) or a wrong size. Thread-safe. */
VKC_API vkc_result vkc_image_upload(vkc_image *img, const vkc_image_region *region,
                                    const void *data, uint64_t size);
VKC_API vkc_result vkc_image_download(vkc_image *img, const vkc_image_region *region, void *data,
                                      uint64_t size);

/* A clear colour: f32 for UNORM, SRGB and float formats (linear values:
 * SRGB encodes them), u32 / i32 for R32UI / R32I. */
typedef union vkc_clear_value {
    float f32[4];
    uint32_t u32[4];
    int32_t i32[4];
} vkc_clear_value;

/* Blocking clear of a range (NULL = the whole image). Thread-safe. */
VKC_API vkc_result vkc_image_clear(vkc_image *img, const vkc_image_range *range,
                                   const vkc_clear_value *value);

/* Recorded transfers; hazards and layout transitions are tracked like
 * those of dispatches. vkc_seq_copy_image copies src_region of src to the
 * same-sized box of dst at dst_region's mip, layers and offset (its
 * width/height/depth/layer_count must be 0 or equal to src_region's); the
 * formats must have the same texel size. A buffer's bytes are tightly
 * packed from the offset, which must be a multiple of the texel size (and
 * of 4). Ranges outside an image or a buffer, and a copy between
 * overlapping boxes of one subresource, are VKC_ERROR_INVALID_ARGUMENT. */
VKC_API vkc_result vkc_seq_copy_image(vkc_seq *seq, vkc_image *dst,
                                      const vkc_image_region *dst_region, vkc_image *src,
                                      const vkc_image_region *src_region);
VKC_API vkc_result vkc_seq_copy_buffer_to_image(vkc_seq *seq, vkc_image *dst,
                                                const vkc_image_region *region, vkc_buffer *src,
                                                uint64_t src_offset);
VKC_API vkc_result vkc_seq_copy_image_to_buffer(vkc_seq *seq, vkc_buffer *dst, uint64_t dst_offset,
                                                vkc_image *src, const vkc_image_region *region);
VKC_API vkc_result vkc_seq_clear_image(vkc_seq *seq, vkc_image *img, const vkc_image_range *range,
                                       const vkc_clear_value *value);

typedef enum vkc_filter {
    VKC_FILTER_DEFAULT = 0, /* = NEAREST */
    VKC_FILTER_NEAREST,
    VKC_FILTER_LINEAR, /* needs SAMPLED_IMAGE_FILTER_LINEAR for the format */
} vkc_filter;

typedef enum vkc_address_mode {
    VKC_ADDRESS_DEFAULT = 0, /* = CLAMP_TO_EDGE */
    VKC_ADDRESS_CLAMP_TO_EDGE,
    VKC_ADDRESS_REPEAT,
    VKC_ADDRESS_MIRRORED_REPEAT,
    VKC_ADDRESS_CLAMP_TO_BORDER, /* transparent black */
} vkc_address_mode;

typedef struct vkc_sampler_desc {
    vkc_filter filter;      /* magnification and minification */
    vkc_filter mipmap_mode; /* between mip levels */
    vkc_address_mode address_u, address_v, address_w;
    /* Texel coordinates instead of [0, 1). Vulkan's rules then hold:
     * mipmap_mode NEAREST (or DEFAULT), address modes CLAMP_TO_EDGE or
     * CLAMP_TO_BORDER, and the bound image one mip of one layer of a 2D
     * image; else VKC_ERROR_INVALID_ARGUMENT. */
    bool unnormalized;
    /* The level of detail (Vulkan's minLod, maxLod, mipLodBias): the LOD a
     * lookup computes (or names, as textureLod does) plus mip_lod_bias is
     * clamped to [min_lod, max_lod], in mip levels of the bound view.
     * max_lod 0 means no upper clamp (VK_LOD_CLAMP_NONE), the default; to
     * sample one level only, bind a one-mip range of the image (vkc_arg's
     * range). Finite values, 0 <= min_lod <= max_lod (when max_lod is set);
     * with unnormalized, min_lod and max_lod stay 0; else
     * VKC_ERROR_INVALID_ARGUMENT. |mip_lod_bias| above the device's
     * maxSamplerLodBias: VKC_ERROR_LIMIT. */
    float min_lod, max_lod, mip_lod_bias;
} vkc_sampler_desc;

/* The context's sampler for desc: created on first use, then shared by
 * every caller asking for the same desc, destroyed with the context (there
 * is no destroy). desc may be NULL (nearest, clamp to edge). Thread-safe. */
VKC_API vkc_result vkc_sampler_get(vkc_context *ctx, const vkc_sampler_desc *desc,
                                   vkc_sampler **out);
VKC_API vkc_result vkc_sampler_vk(const vkc_sampler *sampler, VkSampler *out);

/* Use a host-owned VkImage in vkc: kernels, transfers and copies.
 *
 * The image must have been created on the context's device with the
 * format, type, extent, mip levels and layers given here, optimal tiling,
 * bound to memory, and outlive the vkc image; usage is the
 * VkImageUsageFlags it was created with (STORAGE or SAMPLED for kernel
 * bindings, TRANSFER_SRC/DST for transfers: a use its flags lack is
 * VKC_ERROR_INVALID_ARGUMENT at recording). layout is the layout the host
 * leaves it in between vkc's work: vkc's resting layout for it (UNDEFINED:
 * its contents may be discarded and vkc moves it to GENERAL now).
 *
 * Ownership. With VK_SHARING_MODE_EXCLUSIVE and a queue_family other than
 * vkc's, the host owns the image: vkc may use it only between a
 * vkc_seq_acquire_image and a vkc_seq_release_image (layout UNDEFINED is
 * then refused). With CONCURRENT sharing (over vkc's family too) or vkc's
 * own family, no transfer is needed. Thread-safe. */
typedef struct vkc_image_wrap_desc {
    VkImage image;
    vkc_image_type type;
    vkc_format format;
    uint32_t width, height, depth_or_layers, mip_levels; /* as vkc_image_desc */
    VkImageUsageFlags usage;
    VkImageLayout layout;
    uint32_t queue_family; /* the owning family of an EXCLUSIVE image */
    VkSharingMode sharing_mode;
    const char *name;
} vkc_image_wrap_desc;

VKC_API vkc_result vkc_image_wrap(vkc_context *ctx, const vkc_image_wrap_desc *desc,
                                  vkc_image **out);

/* Queue-family ownership transfer of an EXCLUSIVE image (all of it).
 *
 * vkc_seq_acquire_image records the acquire half: the host recorded the
 * release (srcQueueFamilyIndex = src_family, dst = vkc's family, the whole
 * image, oldLayout = newLayout = layout) in a submission vkc waits on
 * (vkc_wait_host_semaphore). Later uses in the sequence start from layout.
 * vkc_seq_release_image first moves the image to final_layout (merged in a
 * level barrier), then records the release half (oldLayout = newLayout =
 * final_layout); the host records the matching acquire in a submission
 * that waits on vkc's ticket (vkc_ticket_export). A family equal to vkc's
 * own (or a CONCURRENT image) records no transfer, only the layout change.
 * VKC_ERROR_INVALID_ARGUMENT for a family the device does not have or a
 * layout vkc cannot name (UNDEFINED as final_layout, PREINITIALIZED). */
VKC_API vkc_result vkc_seq_acquire_image(vkc_seq *seq, vkc_image *img, uint32_t src_family,
                                         VkImageLayout layout);
VKC_API vkc_result vkc_seq_release_image(vkc_seq *seq, vkc_image *img, uint32_t dst_family,
                                         VkImageLayout final_layout);

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum vkc_access {
    VKC_ACCESS_DEFAULT = 0, /* from the kernel's reflection */
    VKC_ACCESS_READ = 1,
    VKC_ACCESS_WRITE = 2,
    VKC_ACCESS_READ_WRITE = 3,
} vkc_access;

typedef struct vkc_spec_constant {
    uint32_t id;
    uint32_t value; /* bit pattern: int, uint, float or bool */
} vkc_spec_constant;

#define VKC_MAX_BINDINGS 32

typedef struct vkc_kernel_desc {
    const uint32_t *spirv; /* SPIR-V words; copied */
    size_t spirv_size;     /* in bytes */
    const char *path;      /* or: a .spv file to read */
    const char *entry;     /* NULL = "main" */
    const char *name;      /* debug name; shown in captures */
    /* Workgroup size along x, set through the local_size_x_id
     * specialization constant when the shader has one; 0 = device default
     * (a multiple of the subgroup size). */
    uint32_t workgroup_size;
    const vkc_spec_constant *spec_constants;
    uint32_t spec_constant_count;
} vkc_kernel_desc;

/* Create a kernel from SPIR-V. The module is validated (SPIRV-Tools) before
 * it reaches the driver and its interface reflected: descriptor bindings of
 * set 0 (storage and uniform buffers), whether each is read or written, the
 * push-constant size. VKC_ERROR_INVALID_SPIRV for a bad module,
 * VKC_ERROR_UNSUPPORTED when it needs what the device lacks.
 *
 * Where vkc_context_features.completion_epilogue is on, the kernel's
 * second pipeline carries vkc's completion epilogue (see
 * vkc_kernel_create_glsl), spliced into a copy of the module after the
 * entry point's own code when a submission first ends with it; the kernel's
 * own pipeline is made from the words as given. Not for modules that use
 * spec constant ids VKC_EPILOGUE_SPEC_ID .. + 4, the Vulkan memory model,
 * debug-info instructions or the Kernel capability, nor for cooperative
 * kernels (vkc_grid.glsl): their submissions end with the completion
 * marker, and the log (VKC_LOG_INFO) says why. Thread-safe. */
VKC_API vkc_result vkc_kernel_create(vkc_context *ctx, const vkc_kernel_desc *desc,
                                     vkc_kernel **out);

typedef struct vkc_glsl_desc {
    const char *source; /* GLSL compute shader, NUL-terminated */
    const char *name;   /* shown in error messages and captures */
    /* "NAME" or "NAME=VALUE" each; copied. */
    const char *const *defines;
    uint32_t define_count;
    const char *entry;
    uint32_t workgroup_size;
    const vkc_spec_constant *spec_constants;
    uint32_t spec_constant_count;
} vkc_glsl_desc;

/* Compile GLSL at run time (glslang) for the context's device, then as
 * vkc_kernel_create. SPIR-V is cached by a hash of (source, defines,
 * compiler version) in memory and on disk. The line
 * `#include "vkc_grid.glsl"` (before any code)
 * brings the steps and the device-wide barrier of a cooperative dispatch
 * (see "Cooperative dispatch" below). VKC_ERROR_COMPILE with the
 * compiler's message (with line numbers) in vkc_context_last_error().
 *
 * Where vkc_context_features.completion_epilogue is on, the kernel gets
 * vkc's completion epilogue after its own source (main is renamed to
 * vkc_kernel_main_, and the source is compiled with GL_EXT_buffer_reference,
 * GL_EXT_buffer_reference_uvec2 and GL_KHR_memory_scope_semantics enabled):
 * when such a kernel's dispatch ends a submission alone after a barrier,
 * its last workgroup publishes the completion that a marker dispatch would
 * have. Spec constant ids VKC_EPILOGUE_SPEC_ID .. + 4 are vkc's there.
 * Kernels that include vkc_grid.glsl or vkc_resident.glsl go without it;
 * a #version the epilogue's extensions cannot go with (before 450, es)
 * gets it spliced into the SPIR-V instead, as vkc_kernel_create does.
 * Thread-safe. */
VKC_API vkc_result vkc_kernel_create_glsl(vkc_context *ctx, const vkc_glsl_desc *desc,
                                          vkc_kernel **out);
/* Drop the caller's reference (see "Lifetimes"): returns at once; the
 * pipeline is destroyed when no recorded sequence or work in flight needs
 * it. NULL and dead handles do nothing. One thread per object. */
VKC_API void vkc_kernel_destroy(vkc_kernel *kernel);

/* What a binding of set 0 is. */
typedef enum vkc_binding_kind {
    VKC_BINDING_BUFFER = 0,             /* storage or uniform buffer (see uniform) */
    VKC_BINDING_STORAGE_IMAGE,          /* image2D etc.: vkc_arg.image */
    VKC_BINDING_SAMPLED_IMAGE,          /* texture2D etc.: vkc_arg.image */
    VKC_BINDING_COMBINED_IMAGE_SAMPLER, /* sampler2D etc.: vkc_arg.image + .sampler */
    VKC_BINDING_SAMPLER,                /* sampler: vkc_arg.sampler */
} vkc_binding_kind;

typedef struct vkc_binding_info {
    uint32_t binding;
    bool uniform;          /* uniform buffer (else storage) */
    vkc_access access;     /* from NonWritable / NonReadable */
    uint64_t min_size;     /* fixed part of the block, bytes */
    uint64_t array_stride; /* runtime array element stride, 0 if none */
    /* Images (kind != BUFFER): the dimensionality the kernel declares and,
     * for a storage image, its format qualifier (DEFAULT when the kernel
     * declares none or one vkc does not know: any image is accepted then). */
    vkc_binding_kind kind;
    vkc_image_type image_type;
    vkc_format format;
} vkc_binding_info;

typedef struct vkc_kernel_info {
    uint32_t binding_count; /* bindings 0..n-1 of set 0, in order */
    vkc_binding_info bindings[VKC_MAX_BINDINGS];
    uint32_t push_constant_size;
    uint32_t workgroup_size[3];
    const char *name;
} vkc_kernel_info;

VKC_API vkc_result vkc_kernel_info_get(const vkc_kernel *kernel, vkc_kernel_info *out);
/* The pipeline objects behind a kernel (owned by the kernel). */
VKC_API vkc_result vkc_kernel_vk(const vkc_kernel *kernel, VkPipeline *pipeline,
                                 VkPipelineLayout *layout, VkDescriptorSetLayout *set_layout);

/* ------------------------------------------------------------------------ */
/* Sequences                                                                */
/* ------------------------------------------------------------------------ */

/* A buffer, an image or a sampler bound to a kernel binding. For a buffer,
 * size 0 = to the end of the buffer. For an image binding, image names the
 * image and range its mip levels and layers (zero: see vkc_image_range);
 * a combined image sampler also names the sampler, a sampler binding only
 * the sampler. The image's type must match the kernel's declaration (an
 * array binding may take a 2D image; a 2D binding takes one layer of an
 * array), and a storage binding's format qualifier the image's format. */
typedef struct vkc_arg {
    vkc_buffer *buffer;
    uint64_t offset;
    uint64_t size;
    vkc_access access; /* DEFAULT: from the kernel's reflection */
    vkc_image *image;
    vkc_image_range range;
    vkc_sampler *sampler;
} vkc_arg;

typedef struct vkc_dispatch_desc {
    vkc_kernel *kernel;
    /* args[i] is bound to binding i of set 0. */
    const vkc_arg *args;
    uint32_t arg_count;
    const void *push; /* copied */
    uint32_t push_size;
    /* Either explicit workgroup counts ... */
    uint32_t groups[3];
    /* ... or (groups all 0) an element count: vkc sizes a grid for a
     * grid-stride loop (enough groups to fill the device, never more than
     * the work needs). The kernel must loop with stride
     * gl_NumWorkGroups.x * gl_WorkGroupSize.x. */
    uint64_t count;
    /* Debug label; NULL = the kernel's name. Not copied: it must stay valid
     * while the sequence may record it again (until its next begin or its
     * destroy); a string literal is the usual choice. */
    const char *label;
} vkc_dispatch_desc;

typedef struct vkc_seq_desc {
    const char *name;
    /* ON: recorded with GPU timestamps even when the context's profiling is
     * off; OFF: never; DEFAULT: as the context (see "Profiling"). */
    vkc_toggle profile;
    /* Under VKC_WAIT_SPIN_MARKER, whether the sequence's recorded copies
     * end with the completion marker, which a wait of the host's CPU spins
     * on and which costs the GPU a barrier and a dependent dispatch per
     * submission. OFF: never, for work whose completion the host's GPU
     * consumes (a frame handed back to graphics through
     * vkc_ticket_export); DEFAULT: OFF for a sequence that releases an
     * image (vkc_seq_release_image) or a buffer to another queue family
     * (vkc_seq_release), ON for any other; ON: always. Without the marker,
     * a submit onto a queue where vkc's earlier work is complete signals
     * the timeline and adds nothing; onto a busy one it adds the marker in
     * a command buffer of its own (the GPU cost as with ON). Waits on its
     * tickets (vkc_wait, vkc_poll, vkc_finish) stay exact in every wait
     * mode: they poll or block on the timeline instead of spinning on the
     * count. Other wait modes ignore it. */
    vkc_toggle completion_marker;
} vkc_seq_desc;

/* A sequence records commands once and can be submitted many times. desc may
 * be NULL. Thread-safe (creation); the calls on a sequence are one thread
 * per object. */
VKC_API vkc_result vkc_seq_create(vkc_context *ctx, const vkc_seq_desc *desc, vkc_seq **out);
/* Returns at once; submissions in flight finish, and what the sequence
 * named is released when they have. One thread per object. */
VKC_API void vkc_seq_destroy(vkc_seq *seq);

/* Start (re-)recording: drops the commands recorded so far, and the
 * sequence's references on what they named (kept by submissions still in
 * flight until they complete). A new sequence is already recording. All
 * the recording calls below: one thread per object. */
VKC_API vkc_result vkc_seq_begin(vkc_seq *seq);

/* Record a dispatch. Checked against the kernel's interface at once
 * (binding count, push-constant size, buffer sizes, alignment, limits);
 * the first error is also latched and returned again by vkc_seq_end. The
 * sequence retains the kernel and buffers (once each per recording); a
 * destroyed one is VKC_ERROR_INVALID_HANDLE naming it. */
VKC_API vkc_result vkc_seq_dispatch(vkc_seq *seq, const vkc_dispatch_desc *desc);
VKC_API vkc_result vkc_seq_copy(vkc_seq *seq, vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                                uint64_t src_offset, uint64_t size);
VKC_API vkc_result vkc_seq_fill(vkc_seq *seq, vkc_buffer *buf, uint64_t offset, uint64_t size,
                                uint32_t value);
/* A full barrier: everything before completes before anything after. Only
 * needed for dependencies vkc cannot see (e.g. through aliasing views). */
VKC_API vkc_result vkc_seq_barrier(vkc_seq *seq);
/* Finish recording. Returns the first recording error, if any. */
VKC_API vkc_result vkc_seq_end(vkc_seq *seq);

/* Replace the push constants of recorded command `index` (0-based, in
 * recording order) or the buffer of one of its args. The next submit uses
 * them; a command buffer in flight is never touched. */
VKC_API vkc_result vkc_seq_set_push(vkc_seq *seq, uint32_t index, const void *data, uint32_t size);
VKC_API vkc_result vkc_seq_set_arg(vkc_seq *seq, uint32_t index, uint32_t arg,
                                   const vkc_arg *value);

typedef struct vkc_seq_info {
    uint32_t commands;
    uint32_t dispatches;
    uint32_t barriers; /* inserted for hazards (plus explicit ones) */
    uint32_t levels;   /* dependency levels */
    uint64_t submits;
} vkc_seq_info;

/* One thread per object. */
VKC_API vkc_result vkc_seq_info_get(const vkc_seq *seq, vkc_seq_info *out);

/* ------------------------------------------------------------------------ */
/* Tickets, submission and waiting                                          */
/* ------------------------------------------------------------------------ */

/* Identifies one submission. Zero-initialised: "nothing", always complete. */
typedef struct vkc_ticket {
    uint64_t value;
    uint64_t context_id;
} vkc_ticket;

/* Submit a recorded sequence. It may be submitted again while in flight.
 * Takes no reference and allocates nothing: what the commands name was
 * retained when they were recorded. One thread per object: a second thread
 * submitting the same sequence at the same moment gets
 * VKC_ERROR_INVALID_STATE (never a race); distinct sequences may be
 * submitted from distinct threads at once.
 *
 * A long sequence (over 1,024 commands) is recorded into one command
 * buffer without SIMULTANEOUS_USE, as raw Vulkan's are (some drivers pay
 * for the flag at submit). Submitted again while an earlier submit of it
 * still runs, it goes as a second copy that has the flag, recorded (and
 * allocated) on the first such submit and kept (vkc_stats.spare_submits);
 * the submit never waits for the GPU.
 *
 * Armed submission (vkc_context_features.armed_submits): when a sequence
 * of dispatches is submitted again on an idle queue, vkc submits its next
 * recorded copies right away, waiting on a semaphore; the next
 * vkc_seq_submit of it only signals that semaphore from the host, so the
 * round trip holds no vkQueueSubmit. While round trips keep coming the
 * copies armed ahead double up to VKC_ARM_DEPTH (256 on a GPU, README).
 * Anything else that reaches the queue first (another submission,
 * vkc_queue_lock, vkc_finish, a change to the sequence) cancels them all:
 * they run with their dispatches skipped before it (about 5.6 us each on
 * the H200), and it may wait for a copy of the sequence still running.
 * Results, tickets and their order are the same either way. */
VKC_API vkc_result vkc_seq_submit(vkc_seq *seq, vkc_ticket *out_ticket);

/* Wait until the ticket's work has completed, with the context's wait mode.
 * VKC_SUCCESS, VKC_TIMEOUT, or an error (VKC_ERROR_INVALID_HANDLE for a
 * ticket of another context or one never issued). Thread-safe. */
VKC_API vkc_result vkc_wait(vkc_context *ctx, vkc_ticket ticket, uint64_t timeout_ns);
/* VKC_SUCCESS when complete, VKC_NOT_READY otherwise. Thread-safe. */
VKC_API vkc_result vkc_poll(vkc_context *ctx, vkc_ticket ticket);
/* Flush immediate-mode work and wait for everything submitted, at most the
 * context's wait_timeout_ns: VKC_SUCCESS, VKC_TIMEOUT (the work goes on;
 * call again), or an error. Thread-safe. */
VKC_API vkc_result vkc_finish(vkc_context *ctx);
/* vkc_finish with its own bound (UINT64_MAX: no bound). Thread-safe. */
VKC_API vkc_result vkc_finish_timeout(vkc_context *ctx, uint64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Cooperative dispatch                                                     */
/* ------------------------------------------------------------------------ */

/* A chain of dependent steps in which every step reads what other
 * workgroups wrote in the step before (a stencil iterated, a solver's
 * sweeps), run as ONE dispatch whose workgroups wait for each other at a
 * device-wide barrier between steps: the Vulkan counterpart of CUDA's
 * cooperative launch. It saves the launch and drain of one dispatch per
 * step (on an H200 a dependent dispatch costs about 1.7 us, a grid barrier
 * about 1.3 us).
 *
 * The shader. One source runs in both forms below; it takes the steps from
 * the include and calls vkc_grid_barrier() between them:
 *
 *   #version 450
 *   #include "vkc_grid.glsl"             // owns binding 0 of set 0
 *   layout(local_size_x = 64) in;
 *   layout(set = 0, binding = 1) coherent buffer A { uint a[]; };
 *   layout(set = 0, binding = 2) coherent buffer B { uint b[]; };
 *   layout(push_constant) uniform P { uint n; };
 *   void main() {
 *       uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
 *       VKC_GRID_STEPS(s) {              // for (uint s = first; s < end; ++s)
 *           for (uint i = gl_GlobalInvocationID.x; i < n; i += stride)
 *               if ((s & 1u) == 0u) b[i] = a[(i + 1u) % n] + 1u;
 *               else                a[i] = b[(i + 1u) % n] + 1u;
 *           vkc_grid_barrier();
 *       }
 *   }
 *
 * The include's state block sits at binding VKC_GRID_BINDING of set 0
 * (#define it before the include; default 0) and vkc binds it: the
 * caller's args fill the kernel's other bindings in binding order (here
 * args[0] -> binding 1, args[1] -> binding 2). It also declares the spec
 * constant VKC_GRID_SPEC_ID, by which vkc recognises the kernel (also when
 * compiled to SPIR-V elsewhere: the include's text is what
 * vkc_kernel_create_glsl inserts). The kernel must be grid-strided (vkc
 * may launch fewer workgroups than asked), every invocation of a workgroup
 * must reach each vkc_grid_barrier() (no early return), and data that
 * crosses the barrier must live in coherent buffers.
 *
 * The two forms:
 * - cooperative: one dispatch doing steps [0, steps), its grid clamped to
 *   the workgroups the device keeps resident at once: SM count
 *   (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties) x workgroups
 *   per SM, from the kernel's occupancy (vkc_kernel_stats_get: subgroups,
 *   registers and shared memory; registers are known only with
 *   kernel_statistics on in the context desc, and without them vkc counts
 *   one workgroup per SM, which any kernel that launches gets). A barrier
 *   is recorded before it, so no other work of the sequence shares the
 *   device with it, and every submission starts after the previous ones.
 * - fallback: `steps` dispatches of the caller's grid doing [s, s + 1)
 *   each, vkc_grid_barrier() a no-op, ordered by vkc's ordinary hazard
 *   barriers on the caller's buffers (so declare them written). Taken where
 *   co-residency cannot be promised: no SM count (CPU drivers such as
 *   lavapipe), VKC_COOPERATIVE=off in the environment, or form FALLBACK.
 * Both give the same results for a grid-strided kernel. Which form a
 * dispatch took, its grid and why are in vkc_coop_info;
 * vkc_context_features.cooperative (vkc-info prints it) says which form
 * the device gets.
 *
 * The barrier: each workgroup's thread 0 makes one device-scope atomic add
 * and spins until every workgroup has arrived (the form of CUDA's
 * grid.sync; the last to arrive does not spin); on an H200, 132 workgroups
 * of 64, a dependent step of the example above took 1.57 us in one
 * dispatch (BENCHMARKS.md).
 *
 * Costs and limits: the state (32 bytes, or one entry per step in the
 * fallback; 4 KiB more with some barrier variants below) is a buffer that vkc
 * creates and uploads while recording (a blocking transfer) and the
 * sequence holds until it is recorded again.
 * Not in immediate mode (record it in a sequence). A complete dispatch
 * leaves the state as it found it, so the sequence may be submitted again;
 * one whose kernel never reaches a barrier (or a device lost in one) hangs
 * like any endless kernel. Co-residency assumes the device runs nothing
 * else meanwhile (other queues, other processes, a resident kernel: vkc
 * ends its own resident kernels before ordinary work).
 *
 * For measurement: VKC_GRID_BARRIER (define it before the include, or in
 * vkc_glsl_desc.defines; default 56, the barrier described above) picks a
 * variant of the barrier: bit 16 the one add per arrival (else a counter
 * the last arrival resets and a generation word the others spin on), bit 1
 * that generation on its own 128-byte line, bit 2 relaxed spin loads and
 * one acquire fence after, bit 4 a two-level arrival of VKC_GRID_FANIN
 * (default 8) workgroups per leaf counter (implies 1 and 2), bit 8 the
 * workgroup's own barriers at workgroup memory scope (thread 0's
 * device-scope atomics order the rest), bit 32 (with 16) the last arrival
 * going on without a spin; 0 is the first barrier vkc shipped (2.0x the
 * default's time per step on the H200). Every variant
 * computes the same; only the time differs.
 *
 * A call of its own rather than a field of vkc_dispatch_desc: it records
 * one dispatch or many, binds a buffer that vkc owns, and has no immediate
 * or split form; as a field, every other taker of the desc would have to
 * refuse it. */

typedef enum vkc_coop_form {
    VKC_COOP_DEFAULT = 0, /* cooperative where vkc can promise co-residency, else fallback */
    VKC_COOP_FALLBACK,    /* always one dispatch per step */
    /* Cooperative even where the device reports no SM count: the caller
     * vouches that the grid is resident at once (a grid of one workgroup
     * on a CPU driver, for tests). Still clamped where the count is known;
     * VKC_COOPERATIVE=off still wins. */
    VKC_COOP_FORCE,
} vkc_coop_form;

typedef struct vkc_coop_desc {
    uint32_t steps; /* > 0, at most 2^20 */
    vkc_coop_form form;
    /* Refuse (VKC_ERROR_LIMIT) a grid that does not fit instead of
     * clamping it. */
    bool exact_grid;
} vkc_coop_desc;

typedef struct vkc_coop_info {
    bool cooperative;       /* one dispatch with barriers; false: one per step */
    uint32_t groups[3];     /* the grid recorded (of each dispatch) */
    uint32_t capacity;      /* workgroups resident at once on the device; 0: unknown */
    uint32_t groups_per_sm; /* its factor per SM; 0: unknown */
    uint32_t commands;      /* dispatches recorded: 1 or steps */
    char reason[192];       /* the form and the grid, in words */
} vkc_coop_info;

/* Record the steps of a kernel built with vkc_grid.glsl (see above). desc
 * is as for vkc_seq_dispatch, less the grid state binding; its grid (groups
 * or count) is what the caller would like: the fallback uses it as is, the
 * cooperative form clamps it. out_info may be NULL.
 *
 * Errors (latched like vkc_seq_dispatch's): VKC_ERROR_MISMATCH for a kernel
 * without the include or args that do not match its other bindings,
 * VKC_ERROR_INVALID_ARGUMENT for steps 0 or NULL descs, VKC_ERROR_LIMIT for
 * more than 2^20 steps or, with exact_grid, a grid that does not fit; then
 * as vkc_seq_dispatch. One thread per sequence. */
VKC_API vkc_result vkc_seq_dispatch_cooperative(vkc_seq *seq, const vkc_dispatch_desc *desc,
                                                const vkc_coop_desc *coop, vkc_coop_info *out_info);

/* The spec constant id that vkc_grid.glsl declares (reserved). */
#define VKC_GRID_SPEC_ID 2040
/* The first of the five spec constant ids of the completion epilogue
 * (vkc_kernel_create_glsl; reserved in kernels built with it). */
#define VKC_EPILOGUE_SPEC_ID 2030

/* ------------------------------------------------------------------------ */
/* Immediate mode                                                           */
/* ------------------------------------------------------------------------ */

/* Append a dispatch to the context's open batch. The batch is submitted when
 * it reaches the batch size, on vkc_flush, when a wait needs it, or, when
 * the GPU has nothing left to run, at an enqueue 10 us or more after the
 * batch was opened that brings its count to a power of two (the clock is
 * read only then: a burst of enqueues then a flush stays one submission;
 * work trickling in to an idle GPU starts at its second command, or by the
 * time the batch's count doubles).
 * A batch of exactly the commands of one of the last eight different
 * batches (dispatches and copies on buffers only: kernels, grids,
 * constants, buffers and ranges all the same) is not recorded: that one is submitted again as it
 * was recorded (vkc_stats.immediate_repeats). So batches that take turns,
 * like a frame's flushes, are recorded once each. A kept batch holds what
 * it names until a ninth batch displaces the least recently used, or a
 * buffer or kernel it names is destroyed (then it lets go at once; a
 * destroy while another thread is inside immediate mode lets every kept
 * batch go at that thread's next submit).
 * On a GPU, a batch of 12 or more such commands that goes to an idle
 * queue goes in pieces (vkc_stats.immediate_splits) where neither it nor
 * its first piece repeats a kept batch: a first piece of n/15 commands
 * (4 at least), then pieces twice the one before while what is left is
 * at least twice the piece, four pieces at most, then the rest, each
 * submitted as soon as it is recorded, so that the GPU starts on the
 * first while the rest is recorded. Each piece is kept like a batch; a
 * batch whose first piece is kept goes whole (it went in pieces before:
 * whole, it repeats in one submit). A piece that cannot be made (host
 * memory) leaves its commands to the rest. VKC_IMM_SPLIT=N sets how many
 * pieces (1: whole; the default is 4, and 1 on a CPU device, where the
 * pieces' submits cost more than they overlap). Each fresh batch's submit
 * is timed where pieces are on: one that took VKC_IMM_SLOW_US (15) or more
 * (a driver's slow mode, where pieces lose) sends its rest whole, and
 * batches go whole until one takes less (vkc_stats.immediate_slow_submits).
 * In NVIDIA's slow mode few submits of pieces were slow, and pieces still
 * lost there (their timeline signals cost: see BENCHMARKS.md).
 * On a GPU with timeline semaphores (VKC_SIGNAL_ADAPT: on by default
 * there, off on a CPU device; 1 or 0 decides), each fresh batch's
 * timeline signal is chosen from what it costs: the
 * flushes of 16 fresh batches of at most 16 commands that signal are set
 * against the next 16 that go quiet (each with the completion marker, its
 * submit signalling nothing). Where the quiet median is VKC_SIGNAL_SLOW_US
 * (10) or more below the signalled one (NVIDIA's slow mode: each signal
 * costs 40 us or so), the next 256 fresh batches go quiet, else they
 * signal; then both are measured again, and each same verdict in a row
 * doubles the stretch, up to 4096 (vkc_stats.immediate_quiet_batches).
 * Recordings into new command buffers are not measured; larger batches
 * are not either, and 16 of them in a row end a measurement with the
 * signal. Setting VKC_FIRST_SIGNAL turns it off.
 * When all batches are in flight, this waits for the oldest. Does not
 * allocate. Thread-safe. */
VKC_API vkc_result vkc_dispatch(vkc_context *ctx, const vkc_dispatch_desc *desc);
VKC_API vkc_result vkc_copy(vkc_context *ctx, vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                            uint64_t src_offset, uint64_t size);
/* Image copies in the open batch, as vkc_seq_copy_image and friends (see
 * "Images"); kernels on images go through vkc_dispatch. Thread-safe. */
VKC_API vkc_result vkc_copy_image(vkc_context *ctx, vkc_image *dst,
                                  const vkc_image_region *dst_region, vkc_image *src,
                                  const vkc_image_region *src_region);
VKC_API vkc_result vkc_copy_buffer_to_image(vkc_context *ctx, vkc_image *dst,
                                            const vkc_image_region *region, vkc_buffer *src,
                                            uint64_t src_offset);
VKC_API vkc_result vkc_copy_image_to_buffer(vkc_context *ctx, vkc_buffer *dst, uint64_t dst_offset,
                                            vkc_image *src, const vkc_image_region *region);
/* Submit the open batch. *out_ticket (may be NULL) covers all work enqueued
 * so far. Thread-safe. */
VKC_API vkc_result vkc_flush(vkc_context *ctx, vkc_ticket *out_ticket);

/* ------------------------------------------------------------------------ */
/* Profiling                                                                */
/* ------------------------------------------------------------------------ */

/* Where the time goes: GPU time per dispatch, copy and barrier group, CPU
 * time per submission (record, submit call, wait), the GPU's idle time
 * between submissions, and per-kernel statistics.
 *
 * Turning it on
 *   - for a whole context: vkc_context_desc.profile = VKC_ON;
 *   - for one sequence: vkc_seq_desc.profile = VKC_ON;
 *   - for any program, without code changes: VKC_PROFILE=out.json in the
 *     environment. Every context of the process profiles, and at
 *     vkc_context_destroy writes out.json (Chrome trace-event JSON: open it
 *     in https://ui.perfetto.dev or chrome://tracing) and out.svg (the same
 *     timeline as a picture). The n-th context destroyed after the first
 *     writes out.n.json and out.n.svg.
 *   Off (the default) costs nothing: no query is recorded and the submit
 *   path tests one field of the recording unit.
 *
 * What is measured
 *   A profiled sequence records, with each recorded copy, one timestamp
 *   query pool (kept and reused with the recording unit: nothing is
 *   allocated in steady state): a TOP_OF_PIPE timestamp before and a
 *   BOTTOM_OF_PIPE one after the whole submission (its commands; the
 *   completion marker vkc may add after them is outside), each level's
 *   barrier and each command. Vulkan runs the commands of one level (no barrier between
 *   them) concurrently, so a command's span ends when it AND everything
 *   recorded before it in its submission is done: a span is exact for a
 *   command alone in its level, an upper bound otherwise. A barrier span is
 *   the time the GPU spent draining the level before it.
 *   CPU times per submission: the recording (once per re-recording), the
 *   vkQueueSubmit call (queue lock included) and each vkc_wait of a
 *   profiling context, per thread.
 *   Results of a submission are read once it has completed: when its
 *   recorded copy is submitted again or recycled, or at the latest by the
 *   calls below. A profiled copy submitted again while its previous
 *   submission still runs first waits for it (its queries are reused), so
 *   a profiled sequence keeps at most its ring of copies (2) in flight.
 *   Not profiled: the blocking buffer calls (upload, download, fill, copy).
 *
 * One clock
 *   Every time is CLOCK_MONOTONIC in nanoseconds. GPU ticks are placed on
 *   it with VK_EXT_calibrated_timestamps where the device has it (a
 *   calibration at context creation and again every 100 ms of profiled
 *   work, to follow drift; the error bound is the deviation the driver
 *   reports). Without it: one correlation at context creation, a
 *   submitted timestamp against the host clock when its completion is seen
 *   (the error bound is that submission's round trip, reported in
 *   vkc_profile_info.clock_error_ns). No timestamps on the queue
 *   (vkc_device_info.timestamps false): nothing is profiled and status is
 *   VKC_ERROR_UNSUPPORTED.
 *
 * Statistics
 *   Per label (a dispatch's label, else its kernel's name; "vkc copy",
 *   "vkc fill", "barrier"; the sequence's name for submissions and CPU
 *   times) and kind: count, total, min, max and nearest-rank percentiles
 *   p50 / p95 / p99 (the smallest value with at least p% of the values at
 *   or below it). Utilisation: over the window from the first held
 *   submission's GPU start to the last one's GPU end, the time some
 *   submission was on the GPU divided by the window; the rest is the GPU
 *   idle between submissions. vkc_profile_reset starts a new window.
 *
 * Limits and failures
 *   The profile keeps profile_capacity events (default 65536; a submission
 *   of n commands in l levels makes n + l + 2 events, one more for each
 *   vkc_wait and for its recording when it was recorded anew). Once full, new
 *   events are counted in dropped and status reports VKC_ERROR_LIMIT (call
 *   vkc_profile_reset, or raise the capacity). A query pool that cannot be
 *   created leaves that recording unprofiled with status set to the error.
 *   In both cases the work itself goes on and is correct. After device loss
 *   the results of the lost submissions are dropped; events already held
 *   stay, and profiling goes on after vkc_context_recover.
 *
 * Cost (BENCHMARKS.md, "Profiling off" and "Profiling on, on the H200"):
 * off, nothing measurable (on the H200, record and submit with profiling
 * off are within the run-to-run spread of a build that compiles profiling
 * out). On, per dispatch: four timestamp writes in the recorded work (about
 * 110 ns more CPU per recorded dispatch on lavapipe, ~0.5 us on the H200's
 * host); each end-of-pipe timestamp waits for the work before it, about
 * 4 us of GPU time per dependent dispatch on the H200 (50 us on lavapipe);
 * per submission one query read and its bookkeeping when its results are
 * read. Profile to find where time goes, not to time the final product.
 *
 * Thread safety: every vkc_profile_* call is thread-safe; the strings in
 * events and stats stay valid until vkc_context_destroy. */

typedef enum vkc_profile_kind {
    VKC_PROFILE_NONE = 0,
    /* GPU */
    VKC_PROFILE_SUBMISSION, /* one submitted command buffer, first to last command */
    VKC_PROFILE_DISPATCH,
    VKC_PROFILE_COPY,
    VKC_PROFILE_FILL,
    VKC_PROFILE_OWNERSHIP, /* a queue-family ownership transfer */
    VKC_PROFILE_BARRIER,   /* the barrier before a level */
    /* CPU */
    VKC_PROFILE_RECORD, /* recording a sequence into Vulkan */
    VKC_PROFILE_SUBMIT, /* the vkQueueSubmit call */
    VKC_PROFILE_WAIT,   /* vkc_wait */
    VKC_PROFILE_KIND_COUNT_
} vkc_profile_kind;

/* "dispatch", "submit", ...; "?" for a value out of range. */
VKC_API const char *vkc_profile_kind_string(vkc_profile_kind kind);

typedef struct vkc_profile_event {
    vkc_profile_kind kind;
    const char *label;
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    uint64_t submission;       /* its ticket's value; 0 for a recording */
    uint32_t thread;           /* CPU events: vkc's id of the thread (1, 2, ...); GPU: 0 */
} vkc_profile_event;

typedef enum vkc_profile_clock {
    VKC_PROFILE_CLOCK_NONE = 0,   /* no GPU timestamps */
    VKC_PROFILE_CLOCK_CALIBRATED, /* VK_EXT_calibrated_timestamps */
    VKC_PROFILE_CLOCK_CORRELATED, /* the one-time correlation fallback */
} vkc_profile_clock;

typedef struct vkc_profile_info {
    bool on;           /* the context profiles every sequence */
    vkc_result status; /* VKC_SUCCESS or the first profiling failure */
    char message[256]; /* what failed, "" when nothing did */
    vkc_profile_clock clock;
    uint64_t clock_error_ns; /* bound on where a GPU time lands on the host clock */
    uint64_t events;         /* held */
    uint64_t dropped;        /* not kept: the buffer was full */
    uint64_t capacity;
    uint64_t submissions; /* profiled submissions held */
    uint64_t window_ns;   /* first GPU start to last GPU end of those */
    uint64_t gpu_busy_ns; /* time some submission ran in the window */
    double utilisation;   /* gpu_busy_ns / window_ns; 0 without submissions */
} vkc_profile_info;

/* Read the results of every completed profiled submission (waiting for
 * those still in flight), then fill *info (may be NULL) and copy up to
 * capacity events, oldest first, into events (may be NULL); *out_count
 * (may be NULL) is the number of events held. */
VKC_API vkc_result vkc_profile_get(vkc_context *ctx, vkc_profile_info *info,
                                   vkc_profile_event *events, uint32_t capacity,
                                   uint32_t *out_count);

typedef struct vkc_profile_stat {
    vkc_profile_kind kind;
    const char *label;
    uint64_t count;
    uint64_t total_ns, min_ns, max_ns;
    uint64_t p50_ns, p95_ns, p99_ns;
} vkc_profile_stat;

/* Statistics per (kind, label) of the events held, largest total first;
 * up to capacity rows into out, *out_count (may be NULL) the rows there
 * are. */
VKC_API vkc_result vkc_profile_stats(vkc_context *ctx, vkc_profile_stat *out, uint32_t capacity,
                                     uint32_t *out_count);

/* Write the events held as Chrome trace-event JSON: one process, the CPU
 * threads as lanes ("record", "submit", "wait" events), and GPU lanes
 * ("gpu submissions", "gpu dispatch", "gpu copy", "gpu barrier"), on one
 * time axis in microseconds; per-label statistics in its metadata.
 * VKC_ERROR_IO when the file cannot be written. */
VKC_API vkc_result vkc_profile_write_trace(vkc_context *ctx, const char *path);
/* The same timeline as an SVG picture: one row per lane, a box per event
 * (colour by label), a time axis, utilisation in the title. */
VKC_API vkc_result vkc_profile_write_svg(vkc_context *ctx, const char *path);
/* Drop the events held and clear status and dropped: a new window. */
VKC_API vkc_result vkc_profile_reset(vkc_context *ctx);

/* Statistics of one kernel's pipeline and its theoretical occupancy.
 *
 * From the driver (VK_KHR_pipeline_executable_properties, for pipelines
 * created with kernel_statistics on): registers per invocation, shared
 * memory, spills, subgroup size and every statistic the driver reports
 * (in stats). Without it (lavapipe): workgroup size and shared memory
 * from reflection only, the rest 0 (unknown).
 * Occupancy: resident subgroups per SM allowed by each resource (the
 * device's subgroups per SM; workgroups per SM, taken as 32; registers,
 * with a register file of 65536 per SM on NVIDIA; shared memory, with
 * maxComputeSharedMemorySize per SM, a lower bound), the smallest of them
 * and the resource that sets it, e.g. "registers: 8 of 64 subgroups per
 * SM". Unknown (0, limit "unknown: ...") where the device does not report
 * its subgroups per SM. */
#define VKC_MAX_KERNEL_STATS 32

typedef struct vkc_kernel_stat {
    char name[64];
    char value[32];
} vkc_kernel_stat;

typedef struct vkc_kernel_stats {
    bool from_driver;
    char executable[64]; /* the driver's name for it; "" without the driver */
    uint32_t workgroup_size[3];
    uint32_t workgroup_invocations;
    uint32_t subgroup_size;
    uint32_t shared_memory; /* bytes per workgroup */
    uint32_t registers;     /* per invocation; 0 unknown */
    uint32_t spills;        /* as the driver counts them; 0 none or unknown */
    uint32_t subgroups_per_workgroup;
    uint32_t max_subgroups_per_sm; /* the device's; 0 unknown */
    uint32_t occupancy;            /* resident subgroups per SM; 0 unknown */
    char limit[96];                /* the limiting resource, in words */
    uint32_t stat_count;
    vkc_kernel_stat stats[VKC_MAX_KERNEL_STATS];
} vkc_kernel_stats;

VKC_API vkc_result vkc_kernel_stats_get(vkc_kernel *kernel, vkc_kernel_stats *out);

/* ------------------------------------------------------------------------ */
/* Fusion                                                                   */
/* ------------------------------------------------------------------------ */

/* A fusion graph describes elementwise work over N-element buffers: inputs,
 * scalar parameters and constants, a DAG of operations on them, one or more
 * outputs and optionally a reduction of one value over all elements.
 * vkc_fuse_build() turns it into ONE grid-strided GLSL compute shader that
 * keeps every intermediate in registers, compiles it at run time and caches
 * the kernel in the context by the graph's structure (operations, types,
 * topology, constants): scalar values are push constants, so new scalar
 * values never recompile. vkc_fuse_record_unfused() runs the same graph as
 * one dispatch per operation through temporaries (the correctness oracle).
 *
 *   vkc_fuse *f;
 *   vkc_fuse_create(ctx, NULL, &f);
 *   vkc_value y, a, b;
 *   vkc_fuse_input(f, VKC_DTYPE_F32, &y);
 *   vkc_fuse_scalar(f, VKC_DTYPE_F32, &a);
 *   vkc_fuse_scalar(f, VKC_DTYPE_F32, &b);
 *   vkc_fuse_op(f, VKC_OP_FMA, (vkc_value[]){a, y, b}, 3, &y);   // y = a*y + b
 *   vkc_fuse_output(f, y, NULL);
 *   vkc_fuse_record(seq, f, &(vkc_fuse_args){.inputs = &in, .input_count = 1,
 *                   .outputs = &out, .output_count = 1, .scalars = s,
 *                   .scalar_count = 2, .count = n});
 *
 * Value ids are handed out in creation order and an operation can only name
 * values that exist already, so the API cannot express a cycle; an id not
 * created yet (or 0) is VKC_ERROR_INVALID_GRAPH, an id of another graph
 * VKC_ERROR_INVALID_ARGUMENT (an id carries its graph's serial, which
 * repeats only after 2^32 - 1 graphs). Type rules: operands of an operation must have the
 * same type (cast explicitly), math functions need F32, compare gives BOOL,
 * select takes a BOOL condition. Graph-building errors are also latched and
 * returned again by vkc_fuse_build / record.
 *
 * Semantics (stated so results can be checked):
 * - Precision is Vulkan's ("Precision and Operation of SPIR-V
 *   Instructions"): add/sub/mul exact, div 2.5 ulp, sqrt/rsqrt/exp/log as
 *   listed there; denormals may be flushed to zero; fma may or may not round
 *   the product (fused and unfused runs round it alike).
 * - Integer add/sub/mul/neg/fma wrap (two's complement). Integer division
 *   by zero and INT32_MIN / -1 are undefined. Float a / b is defined only
 *   for |b| in [2^-126, 2^126] (Vulkan's range for OpFDiv): a zero,
 *   denormal (it may be flushed to zero), infinite or NaN divisor, or one
 *   above 2^126 (e.g. FLT_MAX: NVIDIA returns 0, or NaN for an infinite a)
 *   gives an implementation-defined result. Guard divisors, e.g.
 *   a / (|b| + eps) with a bounded b.
 * - NaNs: without SignedZeroInfNanPreserve Vulkan lets the compiler assume
 *   there are none, so an operation that would make a NaN (sqrt/rsqrt/log
 *   of a negative, inf - inf, 0 * inf) gives an undefined value, and
 *   everything computed from it is undefined too: x == x may be folded to
 *   true and min/max/clamp/relu of a NaN may return either operand, so a
 *   NaN cannot be filtered out inside the graph. Keep inputs in the domain.
 * - gelu is the tanh approximation:
 *   0.5 x (1 + tanh(sqrt(2/pi) (c + 0.044715 c^3))), c = clamp(x, -10, 10)
 *   (the tanh term is exactly 1 in float beyond |x| = 10, and the cube
 *   cannot overflow).
 * - tanh is computed as sign(x) (1 - e) / (1 + e), e = exp(-2 min(|x|, 20))
 *   (x itself below |x| = 1e-4; exact limits at +-inf); sigmoid as
 *   1 / (1 + e) for x >= 0 and e / (1 + e) (as e * (1 / (1 + e))) below,
 *   e = exp(-|x|). Their divisors lie in [1, 2], so both are defined for
 *   every non-NaN x, infinities included.
 * - dropout(x, p, seed): element i keeps x / p (computed x * (1/p)) when
 *   u < p, else 0, where u = (h >> 8) * 2^-24 and
 *   h = vkc_pcg(i + vkc_pcg(seed)), vkc_pcg(v): s = v * 747796405 +
 *   2891336453; w = ((s >> ((s >> 28) + 4)) ^ s) * 277803737; (w >> 22) ^ w
 *   (all uint32). i is the element index, so fused, unfused and vec4 runs
 *   draw the same mask. p is the keep probability.
 * - Casts: F32 -> I32/U32 truncate toward zero; a value whose truncation
 *   does not fit the type (+-inf included; for U32 anything <= -1) or NaN
 *   gives an undefined result in Vulkan: clamp first (e.g. to
 *   [-2^31, 2147483520] for I32); I32 <-> U32 keep the bits; BOOL ->
 *   number gives 0 or 1; number -> BOOL is x != 0.
 * - Reductions (F32 only) combine per-workgroup partials (subgroup ops +
 *   shared memory) with an atomic compare-and-swap loop into the result, so
 *   the order of the final additions varies from run to run: a sum is within
 *   about 1e-6 * sum(|x|) of the exact one. mean = sum of (partial / count).
 *
 * Thread safety: a vkc_fuse is used by one thread at a time; distinct
 * vkc_fuse objects of one context may be used from distinct threads (the
 * context's kernel cache is locked). */

typedef struct vkc_fuse vkc_fuse;

/* A value in a fusion graph; 0 is never a valid id. An id names its graph
 * too: passing it to another graph fails with VKC_ERROR_INVALID_ARGUMENT. */
typedef uint64_t vkc_value;

typedef enum vkc_dtype {
    VKC_DTYPE_DEFAULT = 0, /* = F32 */
    VKC_DTYPE_F32,
    VKC_DTYPE_I32,
    VKC_DTYPE_U32,
    /* Storage only: an F16 input loads as F32 and an F16 output converts
     * from F32. Needs storage_buffer_16bit (VKC_ERROR_UNSUPPORTED without). */
    VKC_DTYPE_F16,
    /* The result of compare; a BOOL output or temporary is stored as a
     * uint32 0 or 1. Not an input type. */
    VKC_DTYPE_BOOL,
} vkc_dtype;

typedef enum vkc_fuse_opcode {
    VKC_OP_NONE = 0,
    /* binary (a, b) */
    VKC_OP_ADD,
    VKC_OP_SUB,
    VKC_OP_MUL,
    VKC_OP_DIV,
    VKC_OP_MIN,
    VKC_OP_MAX,
    /* ternary: a * b + c */
    VKC_OP_FMA,
    /* unary (a) */
    VKC_OP_ABS,
    VKC_OP_NEG,
    VKC_OP_SQRT, /* F32 only, as are RSQRT..GELU */
    VKC_OP_RSQRT,
    VKC_OP_EXP,
    VKC_OP_LOG,
    VKC_OP_TANH,
    VKC_OP_SIGMOID,
    VKC_OP_RELU, /* max(a, 0); any number type */
    VKC_OP_GELU,
    /* clamp(a, lo = b, hi = c) */
    VKC_OP_CLAMP,
    /* compare (a, b) -> BOOL */
    VKC_OP_LT,
    VKC_OP_LE,
    VKC_OP_GT,
    VKC_OP_GE,
    VKC_OP_EQ,
    VKC_OP_NE,
    /* select(cond = a (BOOL), b, c): cond ? b : c */
    VKC_OP_SELECT,
    /* dropout(x = a (F32), keep probability = b (F32), seed = c (U32)) */
    VKC_OP_DROPOUT,
    VKC_OP_COUNT_
} vkc_fuse_opcode;

typedef enum vkc_reduce_op {
    VKC_REDUCE_NONE = 0,
    VKC_REDUCE_SUM,
    VKC_REDUCE_MIN,
    VKC_REDUCE_MAX,
    VKC_REDUCE_MEAN,
} vkc_reduce_op;

typedef struct vkc_fuse_desc {
    const char *name; /* debug name of the kernels; copied */
    /* Vectorise to vec4 when every buffer is 32-bit and not broadcast,
     * count % 4 == 0 and every offset is 16-byte aligned. DEFAULT = ON. */
    vkc_toggle vectorize;
    uint32_t workgroup_size; /* 0 = the device default */
} vkc_fuse_desc;

/* Create an empty graph. desc may be NULL. Thread-safe. */
VKC_API vkc_result vkc_fuse_create(vkc_context *ctx, const vkc_fuse_desc *desc, vkc_fuse **out);
/* Drop the graph's references (see "Lifetimes"): its unfused temporaries
 * and the kernels (in the context's cache) live on in every sequence that
 * recorded them, and go when those let go. NULL does nothing. One thread
 * per object. */
VKC_API void vkc_fuse_destroy(vkc_fuse *fuse);

typedef struct vkc_fuse_input_desc {
    vkc_dtype type; /* F32, I32, U32 or F16 */
    /* 0: element i reads x[i]. n > 0: element i reads x[i % n] (e.g. a bias
     * row broadcast over the rows of a row-major matrix). Part of the
     * structure: a new period compiles a new kernel. */
    uint32_t period;
} vkc_fuse_input_desc;

/* Add an input buffer (binding order = call order). */
VKC_API vkc_result vkc_fuse_input(vkc_fuse *fuse, vkc_dtype type, vkc_value *out);
VKC_API vkc_result vkc_fuse_input_ex(vkc_fuse *fuse, const vkc_fuse_input_desc *desc,
                                     vkc_value *out);
/* Add a scalar parameter (F32, I32 or U32), passed as a push constant; its
 * value is given at record time. At most VKC_FUSE_MAX_SCALARS. */
#define VKC_FUSE_MAX_SCALARS 24
VKC_API vkc_result vkc_fuse_scalar(vkc_fuse *fuse, vkc_dtype type, vkc_value *out);
/* A constant compiled into the shader (part of the structure). value is
 * converted to the type (F32, I32, U32, BOOL). */
VKC_API vkc_result vkc_fuse_constant(vkc_fuse *fuse, vkc_dtype type, double value, vkc_value *out);
/* An operation on arg_count values (1, 2 or 3 by opcode). */
VKC_API vkc_result vkc_fuse_op(vkc_fuse *fuse, vkc_fuse_opcode op, const vkc_value *args,
                               uint32_t arg_count, vkc_value *out);
VKC_API vkc_result vkc_fuse_cast(vkc_fuse *fuse, vkc_value value, vkc_dtype to, vkc_value *out);
/* Write a value to an output buffer (binding order = call order, after the
 * inputs). type DEFAULT stores the value's own type (BOOL as uint32 0/1);
 * F16 stores an F32 value as half. out_index may be NULL. */
VKC_API vkc_result vkc_fuse_output(vkc_fuse *fuse, vkc_value value, uint32_t *out_index);
VKC_API vkc_result vkc_fuse_output_as(vkc_fuse *fuse, vkc_value value, vkc_dtype type,
                                      uint32_t *out_index);
/* Reduce an F32 value over all elements into one float (at most one per
 * graph). Its buffer is vkc_fuse_args.reduce. */
VKC_API vkc_result vkc_fuse_reduce(vkc_fuse *fuse, vkc_value value, vkc_reduce_op op);

/* Validate the graph, generate the shader(s) and compile them (or find them
 * in the context's cache). Optional: recording builds on demand. Both the
 * scalar and the vec4 variant are built when vectorising is on and possible
 * for the graph. VKC_ERROR_INVALID_GRAPH for a graph error (including one
 * latched while building it), VKC_ERROR_COMPILE when the generated GLSL does
 * not compile (a vkc bug: please report it with vkc_fuse_source). */
VKC_API vkc_result vkc_fuse_build(vkc_fuse *fuse);

/* The generated GLSL: vec4 false = the scalar variant, true = the vec4 one.
 * Valid until the graph changes or is destroyed. NULL (and an error in the
 * context) when the graph is invalid or has no such variant. */
VKC_API const char *vkc_fuse_source(vkc_fuse *fuse, bool vec4);

typedef union vkc_scalar {
    float f32;
    int32_t i32;
    uint32_t u32;
} vkc_scalar;

typedef struct vkc_fuse_args {
    const vkc_arg *inputs; /* in vkc_fuse_input order */
    uint32_t input_count;
    const vkc_arg *outputs; /* in vkc_fuse_output order */
    uint32_t output_count;
    const vkc_scalar *scalars; /* in vkc_fuse_scalar order */
    uint32_t scalar_count;
    vkc_arg reduce; /* the graph's reduction result: one float */
    uint64_t count; /* elements, 1 .. UINT32_MAX */
    const char *label;
} vkc_fuse_args;

/* Record the fused graph into a sequence: one dispatch (preceded by a fill
 * of the reduction result when there is a reduction), hazards tracked by the
 * sequence like any kernel's. An output may alias an input only exactly
 * (same buffer, offset, size and 32-bit type, not broadcast): in place;
 * any other overlap of an output with an input or another output is
 * VKC_ERROR_INVALID_ARGUMENT. Push constants: uint32 n (count, or count / 4
 * for the vec4 variant) then the scalars, 4 bytes each, so
 * vkc_seq_set_push can change scalars of a recorded sequence. */
VKC_API vkc_result vkc_fuse_record(vkc_seq *seq, vkc_fuse *fuse, const vkc_fuse_args *args);
/* The same graph as one dispatch per operation (plus one per output that is
 * not an operation, and copies for in-place outputs), through temporaries
 * owned by the graph (allocated by each call, freed by vkc_fuse_destroy). */
VKC_API vkc_result vkc_fuse_record_unfused(vkc_seq *seq, vkc_fuse *fuse, const vkc_fuse_args *args);

typedef struct vkc_fuse_info {
    uint32_t inputs, scalars, constants, ops, outputs;
    bool reduce;
    bool vectorizable;        /* the graph allows the vec4 variant */
    uint64_t builds;          /* kernels this graph asked for, total */
    uint64_t compiles;        /* of those, compiled (not found in the cache) */
    uint64_t unfused_kernels; /* per-operation kernels asked for */
    uint64_t structure_hash;  /* of the scalar variant's structure */
} vkc_fuse_info;

VKC_API vkc_result vkc_fuse_info_get(const vkc_fuse *fuse, vkc_fuse_info *out);
/* Embedding                                                                */
/* ------------------------------------------------------------------------ */

/* Wrapping a device the host already owns (a renderer, an app with volk).
 *
 * vkc loads its own function tables through the host's
 * vkGetInstanceProcAddr, so it neither needs nor changes the host's (or
 * volk's) global function pointers. It uses only what the host says it
 * enabled, creates its own command pools, timeline semaphore and memory on
 * the host's device, and destroys only those: vkc_context_destroy() never
 * destroys the host's instance, device, queue or buffers, and it waits only
 * for vkc's own work (never vkDeviceWaitIdle, which would need every queue
 * of the host to be externally synchronised).
 *
 * Queues. vkc submits to the one queue (queue_family, queue_index) it is
 * given. When the host also submits to that queue, it passes queue_lock /
 * queue_unlock: vkc calls them around every vkQueueSubmit it makes (Vulkan
 * queues are externally synchronised) and in vkc_queue_lock(). When vkc's
 * queue is its own (a compute-only family, or another index of a family),
 * leave them NULL and no lock of the host is ever taken. Several vkc
 * contexts on one VkQueue must be given the same callbacks.
 *
 * Buffers shared between queue families. vkc records no queue-family
 * ownership transfers: a buffer used by vkc and by the host on another
 * family must be created VK_SHARING_MODE_CONCURRENT over both families (or
 * the host transfers ownership itself around vkc's work).
 *
 * Debug names. When the host enabled VK_EXT_debug_utils on its instance
 * (listed in instance_extensions), vkc names every object it creates
 * ("vkc ..."), so its work reads well in RenderDoc or Nsight captures of the
 * host. vkc never renames the host's objects. */
typedef struct vkc_wrap_desc {
    /* The host's objects; all four are required and must outlive the
     * context. */
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    /* The apiVersion the host asked for in VkApplicationInfo (vkc uses the
     * lower of it and the device's). Required, 1.1 or later. */
    uint32_t api_version;
    /* What the host enabled: the device extensions it passed to
     * vkCreateDevice, and the pNext chain of its VkDeviceCreateInfo. vkc
     * reads VkPhysicalDeviceFeatures2, VkPhysicalDeviceVulkan11/12/13Features,
     * and the timeline-semaphore, synchronization2, 8/16-bit storage,
     * float16/int8, subgroup-size-control and buffer-device-address feature
     * structures in that chain; others are skipped. With bufferDeviceAddress
     * enabled (Vulkan 1.2 or later) vkc_buffer_address() works and the
     * completion epilogue can end vkc's submissions, as on a device vkc
     * creates; vkc's memory is then allocated with
     * VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT. device_features10 is the
     * VkDeviceCreateInfo::pEnabledFeatures the host passed, if any. A
     * feature or extension not listed here is not used (for example, no
     * timeline semaphore: tickets fall back to fences, and
     * vkc_ticket_export() is unsupported). */
    const char *const *device_extensions;
    uint32_t device_extension_count;
    const void *device_features;
    const VkPhysicalDeviceFeatures *device_features10;
    /* Instance extensions the host enabled (only VK_EXT_debug_utils is
     * looked for). */
    const char *const *instance_extensions;
    uint32_t instance_extension_count;
    /* The queue vkc submits to; its family must have COMPUTE. The host must
     * have created the device with at least queue_index + 1 queues of that
     * family. */
    uint32_t queue_family;
    uint32_t queue_index;
    /* See "Queues" above. Both or neither. Called from any thread that
     * submits through vkc; must not call into vkc. */
    void (*queue_lock)(void *user);
    void (*queue_unlock)(void *user);
    void *queue_lock_user;
    /* The host's pipeline cache, used for vkc's pipelines when given (then
     * vkc keeps no pipeline cache of its own). Externally synchronised by
     * vkc only while it creates pipelines. */
    VkPipelineCache pipeline_cache;
    /* Passed to every Vulkan create/destroy call vkc makes; valid for the
     * context's lifetime. */
    const VkAllocationCallbacks *allocator;
    vkc_logger logger;
    /* As in vkc_context_desc. */
    vkc_wait_mode wait_mode;
    uint64_t spin_ns;
    vkc_toggle disk_cache;
    const char *cache_dir;
    uint32_t batch_size;
    uint32_t batches_in_flight;
} vkc_wrap_desc;

/* Create a context on the host's device.
 *
 * vkc_context_features_get() then reports wrapped = true, and the optional
 * features of vkc_context_device() are those the host enabled (and the
 * device has); validation is reported off (the host owns the instance and
 * its messenger). VKC_ERROR_INVALID_ARGUMENT for a missing handle, a queue
 * family without compute or a queue index out of range;
 * VKC_ERROR_UNSUPPORTED below Vulkan 1.1. *out is NULL on failure and the
 * message is kept for vkc_last_create_error(). Thread-safe. */
VKC_API vkc_result vkc_context_wrap(const vkc_wrap_desc *desc, vkc_context **out);

/* The (timeline semaphore, value) pair a ticket stands for, so the host can
 * wait for vkc's work in its own submit (a VkSemaphoreSubmitInfo or
 * VkTimelineSemaphoreSubmitInfo wait) or on the CPU. The semaphore belongs
 * to vkc: do not signal or destroy it; it lives as long as the context. A
 * zero ticket gives value 0 (always reached). The value may be above the
 * ticket's: where submits do not all signal the timeline (the completion
 * marker is trusted), it is the first signal that covers the ticket, added
 * by this call if none was submitted yet. VKC_ERROR_UNSUPPORTED when
 * the context has no timeline semaphores, VKC_ERROR_INVALID_HANDLE for a
 * ticket of another context or one never issued. Thread-safe. */
VKC_API vkc_result vkc_ticket_export(vkc_context *ctx, vkc_ticket ticket,
                                     VkSemaphore *out_semaphore, uint64_t *out_value);

/* Queue-family ownership transfer of a buffer created with EXCLUSIVE
 * sharing that another queue family (typically the host's) also uses.
 *
 * vkc_seq_acquire records the acquire half: the host recorded the matching
 * release (src = src_family, dst = vkc's family, same range) in a
 * submission that vkc waits on (vkc_wait_host_semaphore). It is ordered
 * before every later use of the buffer in the sequence. vkc_seq_release
 * records the release half to dst_family after every earlier use; the host
 * records the matching acquire in a submission that waits on vkc's ticket
 * (vkc_ticket_export). vkc's family is vkc_context_device(ctx)->queue_family.
 * A family equal to vkc's own records nothing (no transfer is needed).
 * Buffers created with CONCURRENT sharing need neither call.
 * VKC_ERROR_INVALID_ARGUMENT for a family the device does not have. */
VKC_API vkc_result vkc_seq_acquire(vkc_seq *seq, vkc_buffer *buf, uint32_t src_family);
VKC_API vkc_result vkc_seq_release(vkc_seq *seq, vkc_buffer *buf, uint32_t dst_family);

/* Make vkc's next submission wait (on the GPU) until the host's semaphore
 * reaches value: a timeline semaphore and the value to wait for, or a
 * binary semaphore with value 0 (the host must have submitted its signal).
 * The wait is consumed by the next vkQueueSubmit vkc makes on this context
 * (a sequence submit, an immediate-mode flush, or a blocking buffer call);
 * several waits registered before it are all consumed by it. Waits on every
 * pipeline stage. Thread-safe. */
VKC_API vkc_result vkc_wait_host_semaphore(vkc_context *ctx, VkSemaphore semaphore, uint64_t value);

/* Use a host-owned VkBuffer (bytes [offset, offset + size)) as a vkc buffer
 * in dispatches, copies and fills. It must have been created on the
 * context's device with STORAGE_BUFFER usage (and TRANSFER_SRC/DST for
 * copies and transfers), be bound to memory, and outlive the vkc buffer;
 * offset must be a multiple of minStorageBufferOffsetAlignment.
 * vkc_buffer_destroy() frees only vkc's record, never the VkBuffer; the
 * host must not destroy the VkBuffer before the tickets of all work naming
 * it completed (vkc's record lives on in sequences that recorded it, see
 * "Lifetimes"). The buffer is not mapped by vkc (vkc_buffer_map returns NULL); uploads and
 * downloads go through staging. Thread-safe. */
VKC_API vkc_result vkc_buffer_wrap(vkc_context *ctx, VkBuffer buffer, VkDeviceSize offset,
                                   VkDeviceSize size, vkc_buffer **out);

/* ------------------------------------------------------------------------ */
/* Resident kernels                                                         */
/* ------------------------------------------------------------------------ */

/* A resident kernel is launched once and then takes work items from a ring
 * in memory that both the CPU and the GPU see, so posting an item costs a
 * few stores instead of a vkQueueSubmit and a round trip (post, wait) costs
 * a few microseconds where an ordinary submit costs ten or more. It is for
 * many tiny dependent steps driven by the CPU: read a result, decide the
 * next input. Opt-in per kernel.
 *
 * The shader. A compute shader with a loop around the include that vkc
 * ships (shaders/include/vkc_resident.glsl, installed beside vkc.h and known
 * to vkc_kernel_create_glsl as "vkc_resident.glsl"):
 *
 *   #include "vkc_resident.glsl"
 *   layout(local_size_x = 1) in;
 *   layout(set = 0, binding = 1) buffer Data { uint data[]; };
 *   void main() {
 *       vkc_item it;
 *       while (vkc_resident_next(it)) {
 *           data[0] += vkc_resident_word(it, 0u);
 *           vkc_resident_done(it);
 *       }
 *   }
 *
 * The include owns binding 0 (the ring) and the push constants; the
 * kernel's own buffers are bindings 1.. (vkc_resident_desc.args). One
 * workgroup runs the loop (or a small grid, every workgroup given every
 * item: desc.grid); items come in post order, one at a time.
 *
 * The host:
 *
 *   vkc_resident *r;
 *   vkc_resident_create(ctx, &(vkc_resident_desc){.glsl = src,
 *                       .args = &data_arg, .arg_count = 1}, &r);
 *   uint32_t x = 5;
 *   vkc_ticket t;
 *   vkc_resident_post(r, &x, 4, 0, &t);
 *   vkc_wait(ctx, t, UINT64_MAX);         // spins on the item's ack
 *
 * How it runs. The kernel is launched on a queue of its own (index 1 of the
 * context's queue family: vkc asks for two queues where the family has them and
 * the context owns its device), never the queue ordinary work uses, so nothing
 * queues behind it. The ring (a header, then `slots` slots of payload) lives in
 * device-local host-visible memory where the device has it (the BAR of a
 * discrete GPU): the kernel polls each slot's item number with device-scope
 * loads (an acquire fence once it changes); post copies the payload, issues a
 * store fence, then writes the item number (the doorbell); vkc_resident_done
 * release-stores the item's ack, on which vkc_wait and vkc_poll spin: by
 * default in host memory, written through a device address, else in the ring
 * (vkc_resident_ack). The ring never overwrites a slot whose item is not
 * acknowledged.
 *
 * What an item costs. On a discrete GPU every access to the ring crosses to
 * memory the host maps: on an H200 a load from the kernel took about 0.9 us
 * (the self-test's poll time), and a host read of the ack is a PCIe round trip
 * (about 1 us). Between the doorbell and the kernel's own code vkc adds no ring
 * load (the header is read once per launch) and one acquire fence; the host
 * side of a post is the payload copy, two store fences and no read of the ring
 * (unless it is full). So the round trip is the doorbell's write, the kernel's
 * poll, its payload loads, its work and its ack, and the host's read of the
 * ack. A grid adds one atomic per workgroup and item (deciding the item where a
 * launch ends) and the last workgroup's add before the ack.
 *
 * Safety. The kernel ends itself after idle_timeout_ns without an item, so
 * an idle program occupies no SM and no driver watchdog sees an endless
 * kernel; vkc launches it again on the next post (or the next wait or poll
 * of an item it has not taken). At creation a self-test launches it, posts
 * a probe item and waits (bounded) for the device to acknowledge it: it
 * proves that the device sees host writes in the chosen memory while the
 * kernel runs (on one H200 host-cached system memory did NOT work: the
 * kernel saw the first doorbell and never a later one) and measures how
 * long one poll takes, to turn the idle time into a poll count. Where the
 * self-test fails, the family has one queue, or the context wraps the
 * host's device, the resident kernel FALLS BACK to ordinary submits: each
 * post becomes a submitted dispatch of the same kernel in one-item mode
 * (vkc_resident_next returns the posted item once, then false), with the
 * same results; vkc_resident_info_get says which mode and why (vkc-info
 * prints it). VKC_RESIDENT=fallback in the environment (or fallback = ON in
 * the desc) forces the fallback; VKC_RESIDENT=shared-queue runs the kernel
 * on the context's own queue where no spare one exists (for timing the
 * resident path on lavapipe: each ordinary submit then ends the kernel).
 * Where the acks go (vkc_resident_ack; VKC_RESIDENT_ACK=bar|host in the
 * environment): host memory by default, where the self-test sees them; a
 * self-test failure there keeps the resident path with the acks in the ring
 * and says why in ack_reason.
 *
 * On which devices it is safe, and why. Vulkan promises neither forward
 * progress for a kernel that waits on the host, nor preemption, nor that a
 * running shader sees host writes (or the host its writes) before a fence.
 * vkc relies on what the self-test checks and on three more properties: the
 * device runs the resident kernel's queue concurrently with the others (a
 * GPU with several hardware queues: NVIDIA, AMD; CPU drivers run queues on
 * threads); no watchdog kills it (the idle exit keeps launches short while
 * idle, but a long busy stream is one long launch: on a GPU that also
 * drives a display, a watchdog may end it, which vkc sees as device loss);
 * and the device's caches keep device-scope atomics coherent with memory
 * the host maps (true of NVIDIA's L2 and of host memory). Measured safe on
 * an NVIDIA H200 (driver 580) and on lavapipe; treat anything else as
 * untested and check vkc_resident_info_get.
 *
 * Ordering against ordinary work. vkc cannot see which buffers a payload
 * names, so it orders everything: a post waits (on the host) for all
 * ordinary work submitted before it, and a launch also waits for it on the
 * GPU (the context's timeline); every ordinary submission of the context
 * (sequences, immediate flushes, blocking buffer calls) first waits for all
 * posted items to be acknowledged and ends the resident kernel (waiting for
 * its fence), so its writes are ordered before that work in Vulkan's terms;
 * the next post launches it again (a few microseconds more). Interleave
 * posts and ordinary work only where needed. VKC_RESIDENT_POST_UNORDERED
 * skips a post's wait (the caller knows its buffers are not in use).
 * Immediate-mode work must be flushed (vkc_flush) to be ordered before a
 * post. Results of an item are visible to the host once its ticket is
 * complete. Buffers that ordinary work writes and a resident kernel reads
 * must be declared coherent in the shader (the kernel outlives that work).
 * On devices with one queue in the family (lavapipe), there is no queue of
 * its own and the kernel falls back.
 *
 * Lifetime. vkc_resident_destroy (and vkc_context_destroy) let the kernel
 * finish the items already posted (bounded by timeout_ns), then end it; a
 * kernel whose own code never returns from an item cannot be ended by vkc
 * (as with any endless kernel). After device loss a resident kernel must be
 * destroyed and created again (post returns VKC_ERROR_INVALID_STATE).
 *
 * Thread safety: post, wait and poll are thread-safe; destroy must not run
 * while another thread uses the resident kernel or waits on its tickets. */

typedef struct vkc_resident vkc_resident;

/* Where the kernel writes the acks the host spins on. BAR: in the ring
 * (device-local host-visible memory where there is some), so every look
 * the host takes is a read across the bus. HOST: in a buffer of its own in
 * host memory (host-visible coherent, not device-local, cached where there
 * is such a type), written by the kernel through a device address, so the
 * host's spin reads its own cache until the kernel's write lands; needs
 * bufferDeviceAddress and a kernel built from GLSL by vkc (SPIR-V built
 * elsewhere does not write there). The self-test checks that each probe's
 * ack shows there within 50 ms of its copy in the ring; where it does not,
 * the kernel acks in the ring and vkc_resident_info.ack_reason says why.
 * On an H200 the round trip was 0.80x the BAR's (2.83-2.98 us against
 * 3.54-3.70 us p50) and a stream of dependent items 1.04x (BENCHMARKS.md).
 * DEFAULT: VKC_RESIDENT_ACK=bar|host in the environment, else HOST where
 * the context has bufferDeviceAddress and the desc gives GLSL or a vkc
 * kernel (not SPIR-V), else BAR. */
typedef enum vkc_resident_ack {
    VKC_RESIDENT_ACK_DEFAULT = 0,
    VKC_RESIDENT_ACK_BAR,
    VKC_RESIDENT_ACK_HOST,
} vkc_resident_ack;

typedef struct vkc_resident_desc {
    /* The kernel, one of: a kernel built with vkc_resident.glsl (it stays
     * the caller's and must outlive the resident kernel), GLSL source, or
     * SPIR-V. */
    vkc_kernel *kernel;
    const char *glsl;
    const uint32_t *spirv;
    size_t spirv_size;
    const char *name;        /* debug name; copied */
    uint32_t workgroup_size; /* with local_size_x_id; 0: the shader's size or vkc's default */
    /* Bound to bindings 1.. of the kernel, as a dispatch's args. The
     * buffers must outlive the resident kernel (it may run at any time). */
    const vkc_arg *args;
    uint32_t arg_count;
    uint32_t slots;           /* ring slots; 0 = 64 */
    uint32_t payload_size;    /* bytes per item (multiple of 4); 0 = 64; at most 4096 */
    uint64_t idle_timeout_ns; /* 0 = 20 ms */
    /* Workgroups (0 = 1), each given every item (vkc_resident.glsl): at
     * most the SM count (8 where unknown, 64 in all), so all stay
     * co-resident. */
    uint32_t grid;
    vkc_toggle fallback; /* ON: ordinary submits from the start */
    /* Bound of the waits post, create and destroy make (full ring, the
     * self-test, draining): 0 = 1 s. */
    uint64_t timeout_ns;
    vkc_resident_ack ack; /* where the acks go (above) */
} vkc_resident_desc;

/* Create a resident kernel: check the kernel's interface (binding 0 and the
 * push constants of the include), allocate the ring, launch the kernel and
 * run the self-test (or set up the fallback).
 *
 * VKC_ERROR_INVALID_ARGUMENT for a desc without exactly one kernel source,
 * a payload size that is not a multiple of 4 or above 4096; VKC_ERROR_LIMIT
 * for a grid wider than the device keeps co-resident (desc.grid);
 * VKC_ERROR_MISMATCH for a kernel that does not use vkc_resident.glsl or
 * args that do not match bindings 1..; VKC_ERROR_COMPILE as
 * vkc_kernel_create_glsl. A failed self-test is not an error: the resident
 * kernel falls back. *out is NULL on failure. Thread-safe. */
VKC_API vkc_result vkc_resident_create(vkc_context *ctx, const vkc_resident_desc *desc,
                                       vkc_resident **out);
/* Let posted items finish (bounded), end the kernel, free everything. The
 * tickets of its items must not be waited on afterwards. NULL does
 * nothing. */
VKC_API void vkc_resident_destroy(vkc_resident *r);

enum {
    /* A full ring returns VKC_NOT_READY at once instead of waiting. */
    VKC_RESIDENT_POST_NO_WAIT = 1u << 0,
    /* Do not wait for ordinary work submitted earlier. */
    VKC_RESIDENT_POST_UNORDERED = 1u << 1,
};

/* Post one item: size bytes (at most payload_size; the rest of the slot is
 * left as it was) copied into the next slot, then the doorbell. *ticket
 * completes when the kernel has called vkc_resident_done for it (vkc_wait,
 * vkc_poll). A full ring waits up to timeout_ns for the oldest item
 * (VKC_TIMEOUT) or, with VKC_RESIDENT_POST_NO_WAIT, returns VKC_NOT_READY.
 * VKC_ERROR_LIMIT for a payload too large, VKC_ERROR_INVALID_STATE after
 * vkc_resident_stop or device loss. Thread-safe. */
VKC_API vkc_result vkc_resident_post(vkc_resident *r, const void *payload, uint32_t size,
                                     uint32_t flags, vkc_ticket *ticket);
/* Let posted items finish (bounded by timeout_ns) and end the kernel; later
 * posts return VKC_ERROR_INVALID_STATE. Returns VKC_TIMEOUT when items were
 * still unacknowledged at the bound. */
VKC_API vkc_result vkc_resident_stop(vkc_resident *r);

typedef struct vkc_resident_info {
    bool resident;        /* true: a resident kernel; false: ordinary submits */
    char reason[256];     /* why it falls back ("" when resident) */
    uint32_t memory_type; /* of the ring */
    bool device_local;    /* the ring's memory is device-local */
    uint32_t queue_family, queue_index;
    uint32_t slots, payload_size;
    uint64_t idle_timeout_ns;
    uint32_t idle_polls; /* polls without an item before the kernel ends */
    double poll_ns;      /* one poll, measured by the self-test (0: not run) */
    uint64_t launches;   /* of the resident kernel (or fallback submits) */
    uint64_t posted, completed;
    uint32_t grid;            /* workgroups */
    bool host_ack;            /* the kernel acks in host memory (vkc_resident_ack) */
    uint32_t ack_memory_type; /* of the acks (the ring's when in the ring) */
    char ack_reason[256];     /* why acks in host memory were asked for and not used; "" */
} vkc_resident_info;

VKC_API vkc_result vkc_resident_info_get(vkc_resident *r, vkc_resident_info *out);

/* ------------------------------------------------------------------------ */
/* Several devices                                                          */
/* ------------------------------------------------------------------------ */

/* One context drives one device. Several contexts in one process, on
 * several devices (or several on one device, each with its own instance),
 * are independent: no state is shared between them, and two threads may use
 * two contexts at once under the thread-safety rules above. Objects and
 * tickets of one context are refused by another (VKC_ERROR_INVALID_HANDLE).
 *
 * A split runs one element-count dispatch or one fusion graph across N
 * contexts, each taking a contiguous range of the elements. The ranges are
 * weighted by each device's throughput: given by the caller, or measured
 * when the split is created (a short triad on each device in turn, timed on
 * the host). Data lives in split buffers: one vkc buffer per context holding
 * that context's range, filled from host memory by vkc_split_scatter and
 * read back by vkc_split_gather (vkc_buffer_upload / download per part, so
 * through host-visible staging; from 4 MiB on, the parts' transfers run at
 * once, one thread per part). Parts do not see
 * each other's elements: a kernel whose element i reads element j != i
 * (a stencil) needs halos, which a split does not make (samples/mpi_stencil
 * shows halos between processes).
 *
 *   vkc_context *ctx[2];                        // e.g. .device = "0", "1"
 *   vkc_split *sp;
 *   vkc_split_create(&(vkc_split_desc){.contexts = ctx, .context_count = 2}, &sp);
 *   vkc_split_buffer *x;
 *   vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = n, .element_size = 4}, &x);
 *   vkc_split_scatter(x, host);
 *   vkc_kernel *k[2];                            // the same kernel on each context
 *   vkc_split_dispatch(sp, &(vkc_split_dispatch_desc){.kernels = k, .args = &x,
 *                      .arg_count = 1, .count = n, .count_in_push = true}, NULL);
 *   vkc_split_gather(x, host);
 *
 * Every wait a split makes is bounded by its timeout; a part whose device
 * fails or does not finish in time makes the call return that error
 * (VKC_ERROR_DEVICE_LOST, VKC_TIMEOUT, ...) with a message naming the part,
 * after the other parts' work has completed or timed out too; the failed
 * context stays usable as its own rules say (vkc_context_recover).
 *
 * A fusion graph's reduction is reduced per part on each device and the
 * partial results combined on the host (vkc_split_fuse_args.reduce_result).
 *
 * Not done: device groups are reported by vkc_system_query (and vkc-info)
 * but a split never creates a device over a group; external memory between
 * devices (VK_KHR_external_memory_fd) is not used: data always passes
 * through the host.
 *
 * Thread safety: a split and its buffers are used by one thread at a time;
 * its contexts may meanwhile be used by other threads for other work. */

typedef struct vkc_split vkc_split;
typedef struct vkc_split_buffer vkc_split_buffer;

#define VKC_MAX_SPLIT 16

typedef struct vkc_split_desc {
    /* The contexts, 1 .. VKC_MAX_SPLIT, each at most once and no two on one
     * VkDevice; they must outlive the split. Copied. */
    vkc_context *const *contexts;
    uint32_t context_count;
    /* Relative throughput of each context (> 0, any scale), or NULL. */
    const double *weights;
    /* DEFAULT: measure when weights is NULL. OFF without weights: equal
     * parts. ON with weights: an error. */
    vkc_toggle calibrate;
    /* Elements of the calibration triad; 0 = 1 << 22 (48 MiB per device). */
    uint64_t calibrate_count;
    /* Every part but the last starts and ends on a multiple of this many
     * elements; 0 = 256. */
    uint32_t granularity;
    /* Bound on each wait of a split call; 0 = 10 s. */
    uint64_t timeout_ns;
} vkc_split_desc;

/* Create a split over contexts. With calibration, runs a triad of
 * calibrate_count floats a few times on each context in turn (compiling it
 * with vkc_kernel_create_glsl) and weights each by its best time.
 *
 * VKC_ERROR_INVALID_ARGUMENT for no context, more than VKC_MAX_SPLIT, a
 * context given twice or two on the same VkDevice, a weight that is not
 * > 0; VKC_ERROR_DEVICE_LOST for a lost context; a calibration run's error.
 * *out is NULL on failure and the message is kept for
 * vkc_last_create_error(). */
VKC_API vkc_result vkc_split_create(const vkc_split_desc *desc, vkc_split **out);
/* Waits (bounded) for the split's own work, then frees it. Split buffers
 * still alive are destroyed with it. NULL does nothing. */
VKC_API void vkc_split_destroy(vkc_split *split);

typedef struct vkc_split_info {
    uint32_t context_count;
    double weights[VKC_MAX_SPLIT]; /* normalised: they sum to 1 */
    bool calibrated;
    /* Calibration: the best triad time on each context, ns (0 when not
     * calibrated). */
    uint64_t calibrate_ns[VKC_MAX_SPLIT];
} vkc_split_info;

VKC_API vkc_result vkc_split_info_get(const vkc_split *split, vkc_split_info *out);
/* The ranges count elements split into: part i is [first[i], first[i] +
 * counts[i]). Both arrays hold context_count entries. A part may be empty
 * when count is small. */
VKC_API vkc_result vkc_split_ranges(const vkc_split *split, uint64_t count, uint64_t *first,
                                    uint64_t *counts);
/* The message of the last failure of a call on this split ("" if none);
 * the failing context's vkc_context_last_error() has it too. */
VKC_API const char *vkc_split_last_error(const vkc_split *split);

typedef struct vkc_split_buffer_desc {
    uint64_t count;        /* elements, > 0 */
    uint32_t element_size; /* bytes; 0 = 4 */
    vkc_memory memory;
    const char *name; /* debug name of the parts; copied */
} vkc_split_buffer_desc;

/* One buffer per context holding its range of count elements (an empty
 * part has none). Errors as vkc_buffer_create, on the part's context. */
VKC_API vkc_result vkc_split_buffer_create(vkc_split *split, const vkc_split_buffer_desc *desc,
                                           vkc_split_buffer **out);
VKC_API void vkc_split_buffer_destroy(vkc_split_buffer *buf);
/* Part i: its vkc buffer (NULL when empty), first element and count, for
 * the caller's own sequences on that context. */
VKC_API vkc_result vkc_split_buffer_part(const vkc_split_buffer *buf, uint32_t index,
                                         vkc_buffer **out_buffer, uint64_t *out_first,
                                         uint64_t *out_count);
/* Copy count * element_size bytes of host memory into the parts, or the
 * parts back into host memory. Blocking; from 4 MiB in all, each part past
 * the first is copied by a thread of its own, started and joined within
 * the call. */
VKC_API vkc_result vkc_split_scatter(vkc_split_buffer *buf, const void *data);
VKC_API vkc_result vkc_split_gather(vkc_split_buffer *buf, void *data);

typedef struct vkc_split_dispatch_desc {
    /* One kernel per context (kernels[i] created on contexts[i]), the same
     * shader on each. */
    vkc_kernel *const *kernels;
    /* args[j] is bound to binding j: part i's buffer, whole. Every arg must
     * belong to this split and hold count elements. */
    vkc_split_buffer *const *args;
    uint32_t arg_count;
    const void *push; /* copied per part */
    uint32_t push_size;
    /* Part i's element count (uint32) written into its push constants at
     * byte count_offset, and its first element at first_offset. */
    bool count_in_push;
    uint32_t count_offset;
    bool first_in_push;
    uint32_t first_offset;
    uint64_t count; /* elements */
    const char *label;
} vkc_split_dispatch_desc;

/* Dispatch each part on its context (immediate mode, one flush each).
 * out_tickets NULL: wait for all (bounded by the split's timeout); else
 * out_tickets[i] gets part i's ticket (zero for an empty part) for
 * vkc_split_wait. VKC_ERROR_MISMATCH for an arg of another count, a kernel
 * of another context; VKC_ERROR_INVALID_ARGUMENT for an arg of another
 * split or a push field outside push_size. */
VKC_API vkc_result vkc_split_dispatch(vkc_split *split, const vkc_split_dispatch_desc *desc,
                                      vkc_ticket *out_tickets);

typedef struct vkc_split_fuse_args {
    vkc_split_buffer *const *inputs; /* in vkc_fuse_input order */
    uint32_t input_count;
    vkc_split_buffer *const *outputs; /* in vkc_fuse_output order */
    uint32_t output_count;
    const vkc_scalar *scalars;
    uint32_t scalar_count;
    uint64_t count;
    const char *label;
    /* The graph's reduction over all count elements, on the host: each
     * part reduces its range on its device and the partial results are
     * combined here (sum: added; min, max; mean: the parts' means weighted
     * by their counts). Required for a graph with a reduction, which also
     * needs out_tickets NULL. */
    float *reduce_result;
} vkc_split_fuse_args;

/* Run a fusion graph split: fuses[i] is the same graph built on
 * contexts[i] (checked by structure). Graphs with a broadcast input
 * (period) or dropout (both index the whole range) are
 * VKC_ERROR_UNSUPPORTED. Tickets and errors as vkc_split_dispatch. */
VKC_API vkc_result vkc_split_fuse(vkc_split *split, vkc_fuse *const *fuses,
                                  const vkc_split_fuse_args *args, vkc_ticket *out_tickets);

/* Wait for the tickets of one split call, each on its context, all within
 * the split's timeout from now. The first error or VKC_TIMEOUT, naming the
 * part, after every part was waited for. */
VKC_API vkc_result vkc_split_wait(vkc_split *split, const vkc_ticket *tickets);

#ifdef __cplusplus
}
#endif
#endif /* VKC_H */
