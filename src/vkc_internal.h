/* vkc private header: the only one every module includes. */
#ifndef VKC_INTERNAL_H
#define VKC_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <volk.h>

#include "vkc/vkc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define VKC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VKC_LIKELY(x) __builtin_expect(!!(x), 1)
#define VKC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define VKC_UNLIKELY(x) (x)
#define VKC_LIKELY(x) (x)
#define VKC_PRINTF(a, b)
#endif

/* Profiling's tests on the submission path go through VKC__PROFILED: a build
 * with -DVKC_PROFILING_BUILD=0 compiles them out. That build is the
 * profiling-free baseline vkc-bench measures "profiling off" against
 * (bench/compare_builds.sh); it is not a supported configuration. */
#ifndef VKC_PROFILING_BUILD
#define VKC_PROFILING_BUILD 1
#endif
#define VKC__PROFILED(x) (VKC_PROFILING_BUILD && (x))

#define VKC_ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define VKC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define VKC_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Magic numbers in every handle: catch foreign, destroyed (cleared before
 * free) and mistyped handles where it is cheap. */
#define VKC_MAGIC_CONTEXT 0x564b4331u /* "VKC1" */
#define VKC_MAGIC_BUFFER 0x564b4342u
#define VKC_MAGIC_KERNEL 0x564b434bu
#define VKC_MAGIC_SEQ 0x564b4353u
#define VKC_MAGIC_IMAGE 0x564b4349u
#define VKC_MAGIC_SAMPLER 0x564b435au

/* ------------------------------------------------------------------------ */
/* Intrusive list of live objects (destroyed with the context)              */
/* ------------------------------------------------------------------------ */

typedef struct vkc__node {
    struct vkc__node *prev, *next;
} vkc__node;

static inline void vkc__list_init(vkc__node *head)
{
    head->prev = head->next = head;
}
static inline void vkc__list_push(vkc__node *head, vkc__node *n)
{
    n->next = head->next;
    n->prev = head;
    head->next->prev = n;
    head->next = n;
}
static inline void vkc__list_remove(vkc__node *n)
{
    if (!n->next)
        return;
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

/* ------------------------------------------------------------------------ */
/* Objects: one header, one lifetime rule for every kind (object.c)         */
/* ------------------------------------------------------------------------ */

/* A destroyed handle whose object is still referenced (by a sequence's
 * resource set): new uses get VKC_ERROR_INVALID_HANDLE naming it. */
#define VKC_MAGIC_DEAD 0x564b4344u /* "VKCD" */

typedef struct vkc__obj vkc__obj;

/* The first member of every object struct (buffer, kernel, sequence, fusion
 * graph, resource set; images later), so a handle casts to its header.
 *
 * The user's handle holds one reference; vkc_X_destroy is vkc__obj_kill:
 * the handle turns dead for new uses and the reference goes. Resource sets
 * hold the others (one per object per set). The kind's free function runs
 * when the last reference goes, never while a recorded command or the GPU
 * can still reach the object: no destroy waits for the GPU. */
struct vkc__obj {
    uint32_t magic; /* VKC_MAGIC_<kind>; VKC_MAGIC_DEAD once destroyed; 0 once freed */
    uint32_t kind;  /* VKC_MAGIC_<kind>, kept after the destroy (messages) */
    atomic_uint_fast32_t refs;
    vkc_context *ctx;
    vkc__node node;   /* on the context's list of its kind until freed; unlinked if no list */
    const char *name; /* the kind's own name field */
    /* Frees the kind's Vulkan objects, memory and the struct. Called once,
     * with the object off its list, outside every vkc lock but objects_lock
     * (which is recursive: recovery holds it while units let go). */
    void (*free)(vkc__obj *o);
    /* The tag of the resource set that retained it last: a hint that lets
     * a command naming it again skip the set's lookup (vkc__seq_hold).
     * Written by any set's owner thread, hence atomic (relaxed); tags are
     * never reused, so equality means "in that set now". */
    atomic_uint_fast64_t held;
};

/* Set up a header with one reference (the user's) and put it on `list`
 * (NULL: none) under objects_lock. */
void vkc__obj_init(vkc__obj *o, uint32_t magic, vkc_context *ctx, const char *name,
                   void (*free_fn)(vkc__obj *o), vkc__node *list);
/* One more reference: one relaxed atomic. NULL does nothing. */
static inline void vkc__obj_retain(vkc__obj *o)
{
    if (o)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}
/* Drop a reference; the last one unlinks and frees the object. NULL does
 * nothing. Thread-safe; never call it holding the pool or queue lock. */
void vkc__obj_release(vkc__obj *o);
/* The user's destroy: the handle turns dead (new uses fail), then its
 * reference goes. A dead or foreign handle does nothing. */
void vkc__obj_kill(vkc__obj *o, uint32_t magic);
/* vkc_context_destroy: free every object left on `list`, whatever its count
 * (the context is going and nothing can run any more). */
void vkc__obj_free_list(vkc_context *ctx, vkc__node *list);
/* The object whose list node is n. */
#define VKC_OBJ_OF(n) ((vkc__obj *)((char *)(n)-offsetof(vkc__obj, node)))

/* Check a handle of kind `magic` for a new use: NULL, foreign and freed
 * handles read "invalid <what> handle", destroyed ones still referenced
 * name the object. ctx (may be NULL) gets the message. */
vkc_result vkc__obj_check(vkc_context *ctx, const void *handle, uint32_t magic, const char *what);
static inline bool vkc__obj_is(const void *handle, uint32_t magic)
{
    return handle && ((const vkc__obj *)handle)->magic == magic;
}

/* A resource set: the objects a sequence's recorded commands name, each
 * retained once (a pointer hash set dedupes; arrays are kept across
 * vkc__rset_clear, so re-recording allocates nothing). It is an object
 * itself: the sequence holds one reference and every recording unit
 * recorded from it one more, dropped when the unit retires; the last one
 * releases the objects. */
typedef struct vkc__rset vkc__rset;
vkc_result vkc__rset_new(vkc_context *ctx, vkc__rset **out);
/* Retain o in the set unless it is there already. Fails (host memory) only
 * when the set grows. Only the set's owner calls it. */
vkc_result vkc__rset_add(vkc__rset *s, vkc__obj *o);
/* Only the owner's reference is left (no unit holds the set): it may be
 * cleared and reused. */
bool vkc__rset_exclusive(vkc__rset *s);
/* The set's tag: unique for its contents since it was made or last cleared
 * (objects it holds carry it in vkc__obj.held). Never 0 or UINT64_MAX. */
uint64_t vkc__rset_tag(const vkc__rset *s);
/* Release every object of an exclusive set; its arrays stay. */
void vkc__rset_clear(vkc__rset *s);
/* Free the context's spare sets (vkc_context_destroy, recovery). */
void vkc__rset_trim(vkc_context *ctx);
static inline vkc__obj *vkc__rset_obj(vkc__rset *s)
{
    return (vkc__obj *)s;
}

/* ------------------------------------------------------------------------ */
/* Instance-level function table (vkc never uses volk's globals)            */
/* ------------------------------------------------------------------------ */

typedef struct vkc__itable {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion;
    PFN_vkEnumerateInstanceLayerProperties vkEnumerateInstanceLayerProperties;
    PFN_vkEnumerateInstanceExtensionProperties vkEnumerateInstanceExtensionProperties;
    PFN_vkCreateInstance vkCreateInstance;
    PFN_vkDestroyInstance vkDestroyInstance;
    PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2;
    PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties;
    PFN_vkGetPhysicalDeviceFormatProperties vkGetPhysicalDeviceFormatProperties;
    PFN_vkGetPhysicalDeviceImageFormatProperties vkGetPhysicalDeviceImageFormatProperties;
    PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties;
    PFN_vkCreateDevice vkCreateDevice;
    PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr;
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
    PFN_vkSetDebugUtilsObjectNameEXT vkSetDebugUtilsObjectNameEXT;
    PFN_vkCmdBeginDebugUtilsLabelEXT vkCmdBeginDebugUtilsLabelEXT;
    PFN_vkCmdEndDebugUtilsLabelEXT vkCmdEndDebugUtilsLabelEXT;
} vkc__itable;

/* Open the loader (dlopen libvulkan.so.1) and fill the global-level part of
 * the table. Returns NULL handle + VKC_ERROR_NO_LOADER when missing. */
vkc_result vkc__loader_open(void **out_handle, vkc__itable *t, char *path, size_t path_size);
void vkc__loader_close(void *handle);
void vkc__itable_load_instance(vkc__itable *t, VkInstance instance);
/* Fill a volk device table through an explicit vkGetDeviceProcAddr. */
void vkc__load_device_table(struct VolkDeviceTable *table, VkDevice device,
                            PFN_vkGetDeviceProcAddr gdpa);

/* ------------------------------------------------------------------------ */
/* Fault injection (test-only; a thread-local counter, off by default)      */
/* ------------------------------------------------------------------------ */

/* Which calls the injector counts (and may fail). */
enum {
    VKC__FAULT_ALL = 0,  /* Vulkan calls and vkc's host allocations */
    VKC__FAULT_VK = 1,   /* fallible Vulkan calls only */
    VKC__FAULT_HOST = 2, /* vkc__malloc/calloc/realloc only (name "malloc") */
};

typedef struct vkc__fault_state {
    bool armed;
    uint64_t calls;          /* calls seen while armed (of the kind counted) */
    uint64_t fail_at;        /* 1-based call index to fail; 0 = count only */
    const char *failed_call; /* the call that was failed */
    VkResult forced;         /* VK_SUCCESS: the legal default for the call */
    uint32_t only;           /* VKC__FAULT_*: which calls are counted */
    const char *failed_site; /* "file.c:line" of a failed Vulkan call */
    void *failed_caller;     /* return address of a failed host allocation */
    const char *only_call;   /* non-NULL: count only Vulkan calls of this name */
    /* Non-NULL: the site of each counted call, in order, while calls <=
     * trace_cap (a Vulkan call's "file.c:line" string, a host allocation's
     * return address; one pointer per site). */
    const void **trace;
    uint64_t trace_cap;
} vkc__fault_state;

extern _Thread_local vkc__fault_state vkc__fault;

/* Count one call made at `site`; true when this one must fail. */
bool vkc__fault_tick(const char *call, const void *site);
/* The error injected for this call (a code the spec allows it to return). */
VkResult vkc__fault_result(const char *call);

/* Wrap every fallible Vulkan call (one returning VkResult):
 *   VkResult r = VKC_VK(vkCreateBuffer, ctx->vk.vkCreateBuffer(...));
 * With injection and timing off this is one predictable branch on a TLS
 * flag and a global one. */
#define VKC_STR_(x) #x
#define VKC_STR(x) VKC_STR_(x)
#define VKC_VK(name, expr)                                                                         \
    (VKC_UNLIKELY(vkc__fault.armed || atomic_load_explicit(&vkc__timing, memory_order_relaxed))    \
         ? (vkc__vk_pre(#name, __FILE__ ":" VKC_STR(__LINE__))                                     \
                ? vkc__fault_result(#name)                                                         \
                : vkc__vk_post(#name, __FILE__ ":" VKC_STR(__LINE__), (expr)))                     \
         : (expr))
bool vkc__fault_tick_site(const char *call, const char *site);

/* Call timing (VKC_TIME_CALLS=1, calltime.c): on once any context asked. */
extern atomic_bool vkc__timing;
#define VKC__TIME_BUCKETS 4
/* VKC_VK's slow path: the fault injector's tick (true: fail this call),
 * then the clock where timing is on; after the call, its time. */
bool vkc__vk_pre(const char *call, const char *site);
VkResult vkc__vk_post(const char *call, const char *site, VkResult r);
/* One timed call or wait at `site` (a string of static storage: its
 * address is the key). */
void vkc__time_add(const char *call, const char *site, uint64_t ns);
/* Context creation: VKC_TIME_CALLS=1 turns timing on. */
void vkc__timing_enable(vkc_context *ctx);
/* Context destruction: the table through the context's logger
 * (VKC_LOG_INFO, every line starting "VKC_TIME_CALLS"), then emptied. */
void vkc__timing_report(vkc_context *ctx);

/* Host allocations of vkc itself, so the host-allocation fault test covers
 * them too. */
void *vkc__malloc(size_t size);
void *vkc__calloc(size_t count, size_t size);
void *vkc__realloc(void *p, size_t size);
void vkc__free(void *p);
char *vkc__strdup(const char *s);

/* ------------------------------------------------------------------------ */
/* Stats                                                                    */
/* ------------------------------------------------------------------------ */

/* Signal values remembered for the waits on them (pool.c). */
#define VKC_SIGNAL_RING 64

typedef struct vkc__stats {
    atomic_uint_fast64_t command_buffers;
    atomic_uint_fast64_t command_buffers_reset;
    atomic_uint_fast64_t descriptor_pools;
    atomic_uint_fast64_t descriptor_sets;
    atomic_uint_fast64_t memory_blocks;
    atomic_uint_fast64_t memory_bytes;
    atomic_uint_fast64_t buffers;
    atomic_uint_fast64_t pipelines;
    atomic_uint_fast64_t shader_compiles;
    atomic_uint_fast64_t spirv_cache_hits;
    atomic_uint_fast64_t pipeline_cache_hits;
    atomic_uint_fast64_t submits;
    atomic_uint_fast64_t dispatches;
    atomic_uint_fast64_t barriers;
    atomic_uint_fast64_t staging_blocks;
    atomic_uint_fast64_t images;
    atomic_uint_fast64_t samplers;
    atomic_uint_fast64_t image_views;
    atomic_uint_fast64_t timeline_signals;
    atomic_uint_fast64_t armed_opens;
    atomic_uint_fast64_t armed_cancels;
    atomic_uint_fast64_t epilogue_records;
    atomic_uint_fast64_t immediate_repeats;
    atomic_uint_fast64_t immediate_splits;
    atomic_uint_fast64_t immediate_slow_submits;
    atomic_uint_fast64_t immediate_quiet_batches;
    atomic_uint_fast64_t spare_submits;
    atomic_uint_fast64_t long_waits;
    atomic_uint_fast64_t long_waits_guessed;
    atomic_uint_fast64_t long_waits_spun;
} vkc__stats;

#define VKC_STAT_ADD(ctx, field, n)                                                                \
    atomic_fetch_add_explicit(&(ctx)->stats.field, (uint64_t)(n), memory_order_relaxed)
#define VKC_STAT_SUB(ctx, field, n)                                                                \
    atomic_fetch_sub_explicit(&(ctx)->stats.field, (uint64_t)(n), memory_order_relaxed)

/* ------------------------------------------------------------------------ */
/* Pools: recording units (command buffer + its descriptor pools)           */
/* ------------------------------------------------------------------------ */

/* A recording unit: a command pool of its own with one command buffer, and
 * the descriptor pools of the fallback path. Command pools are externally
 * synchronised, so one pool per unit lets distinct threads record distinct
 * units with no lock; resetting the pool resets the command buffer. Owned by
 * a sequence, by the free list, or by the pending list (until its last
 * submit completes). */
#define VKC_CMD_HOLDS 2

typedef struct vkc__cmd {
    struct vkc__cmd *next;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkDescriptorPool *dpools; /* fallback path only */
    uint32_t dpool_count, dpool_cap, dpool_current;
    uint64_t last_value; /* timeline value of its last submit; 0 = never */
    bool has_marker;     /* VKC_WAIT_SPIN_MARKER: the completion marker is recorded */
    bool needs_signal;   /* its submit signals the timeline even where the marker rules */
    /* Recorded without the marker (an immediate batch; a sequence whose
     * completion the host's GPU takes), which its submit leaves out where
     * the queue is idle (see vkc__submit) or else adds in a unit of its
     * own. */
    bool marker_optional;
    /* An immediate batch's piece (immediate.c): the rest of its batch is
     * submitted right after it and signals the timeline, which covers this
     * unit's value for the pool too, so this one's first submit need not
     * (each signal cost 17-40 us in NVIDIA's slow mode); one without the
     * marker (skipped) still signals: only the timeline tells its end. */
    bool signal_later;
    /* Begun with SIMULTANEOUS_USE (every unit, except with
     * VKC_SIMULTANEOUS_USE=0 a copy that cannot be armed): without it, vkc
     * never submits the unit again while an earlier submit of it is
     * pending (vkc_seq_submit waits first). */
    bool simultaneous;
    /* Profiling (profile.c reads these; pool.c owns the query pool, which
     * is kept and reused with the unit). query_count is 0 for a recording
     * without timestamps: the only thing the submit path tests. */
    VkQueryPool queries;
    uint32_t query_cap, query_count;
    struct vkc__span *spans; /* span i: queries 2i (begin), 2i + 1 (end) */
    uint32_t span_count, span_cap;
    uint64_t record_ns[2]; /* CPU: recording (0 once reported) */
    uint64_t submit_ns[2]; /* CPU: the last vkQueueSubmit call */
    uint32_t record_tid, submit_tid;
    atomic_uint_fast64_t prof_value; /* submitted, results not read yet; 0 = none */
    /* References on what its commands name (a sequence's resource set; the
     * buffers of a blocking transfer), dropped when the unit retires: its
     * last submit completed. Units on the free list hold nothing. */
    vkc__obj *hold[VKC_CMD_HOLDS];
    /* Armed submission (pool.c, arm.c): the unit's predicate word (slot + 1;
     * 0: none yet), whether its dispatches are recorded under conditional
     * rendering on that word, and whether a cancel left the word at 0 (it
     * goes back to 1 once the unit's last submit completed: vkc__arm_restore). */
    uint32_t pred_slot;
    bool conditional;
    bool count_first; /* a cancelled copy counts before its last read of the word */
    atomic_bool pred_zero;
    /* The value of its last submit that runs its dispatches (an ordinary
     * one, or an armed copy opened); 0 = none. A cancel zeroes the word
     * only once that one completed (gate.c). */
    uint64_t run_value;
    bool run_armed; /* that one is an opened armed copy: it waits on nothing the host does */
} vkc__cmd;

/* One timed span of a profiled recording unit. */
enum {
    VKC__SPAN_SUBMISSION = 0, /* the whole command buffer */
    VKC__SPAN_BARRIER,
    VKC__SPAN_DISPATCH,
    VKC__SPAN_COPY,
    VKC__SPAN_FILL,
    VKC__SPAN_OWNERSHIP,
};

typedef struct vkc__span {
    uint8_t kind;
    char label[63];
} vkc__span;

typedef struct vkc__pool {
    pthread_mutex_t lock;                  /* guards the lists */
    vkc__cmd *free_head;                   /* done, the one freed last on top */
    vkc__cmd *pending_head, *pending_tail; /* released, in submit order */
    uint32_t pending_n;                    /* units on the pending list */
    uint32_t trim; /* units still to destroy as they come back (vkc__pool_trim) */
} vkc__pool;

/* Take a recording unit and begin its command buffer (ONE_TIME_SUBMIT off,
 * SIMULTANEOUS_USE on, so a recorded sequence can be resubmitted while in
 * flight). Never allocates in steady state. Thread-safe. */
vkc_result vkc__cmd_acquire(vkc_context *ctx, vkc__cmd **out);
/* The same, begun with SIMULTANEOUS_USE only where `simultaneous` says
 * (vkc__record's caller decides: vkc__seq_plain in dispatch.c). */
vkc_result vkc__cmd_acquire_as(vkc_context *ctx, bool simultaneous, vkc__cmd **out);
/* Which recorded copies are begun without SIMULTANEOUS_USE (never one that
 * may be armed): VKC_SIMULTANEOUS_USE=1 none, =0 every other, the default
 * long sequences' (vkc__seq_plain, dispatch.c). */
enum { VKC__PLAIN_NONE, VKC__PLAIN_LONG, VKC__PLAIN_ALL };
/* Give a unit back; it is reset and reused once its last submit completed.
 * NULL does nothing. Thread-safe. */
void vkc__cmd_release(vkc_context *ctx, vkc__cmd *cmd);
/* Retire the units whose last submit completed: each lets go of its hold
 * (outside the pool lock). Polls the driver at most once. Thread-safe. */
void vkc__pool_retire(vkc_context *ctx);
/* The pool is to shrink to `keep` units: as units come back, the coldest
 * free ones beyond that are destroyed, once (immediate mode calls it where
 * a quiet stretch ends: signal_adapt.c). Thread-safe. */
void vkc__pool_trim(vkc_context *ctx, uint32_t keep);
/* vkc_context_destroy, after its wait: every unit lets go of its hold, as
 * if its work completed (the device is idle or nothing will run again). */
void vkc__pool_drop(vkc_context *ctx);
/* Allocate a descriptor set for the fallback path from the unit's pools. */
vkc_result vkc__cmd_alloc_set(vkc_context *ctx, vkc__cmd *cmd, VkDescriptorSetLayout layout,
                              VkDescriptorSet *out);

/* CLOCK_MONOTONIC in ns: the clock of every bounded wait and profile event
 * (vkc__clock_ns, error.c). */
#define vkc__now_ns vkc__clock_ns
uint64_t vkc__clock_ns(void);

/* Submit one ended command buffer; returns its ticket value. Where the
 * marker is trusted the submit may leave the timeline unsignalled (a later
 * signal covers it: see VKC_SIGNAL_EVERY). Takes the queue lock (or the
 * host's lock callbacks). Thread-safe. */
vkc_result vkc__submit(vkc_context *ctx, vkc__cmd *cmd, uint64_t *out_value);
/* Armed submission (gate.c arms, opens and cancels; policy and self-test
 * in arm.c). Recorded units with a completion marker are submitted ahead
 * of the caller's submits, each waiting on the context's gate semaphore at
 * its own value: a queue of up to VKC_ARM_DEPTH_MAX copies, oldest first,
 * all of one sequence. Open: the caller's submit of the oldest copy's unit
 * signals the gate on the host (no vkQueueSubmit on the round trip) and
 * takes its value; *opened false (and VKC_SUCCESS) when cmd is not that
 * unit. Cancel: every queued copy's predicate word goes to 0 (once what
 * their units already run has completed: the words are per unit) and the
 * gate opens past them all, so they run with their dispatches skipped
 * (conditional rendering) and their barriers and markers as ever: every
 * value completes, in order. Every other submission on the queue,
 * vkc_queue_lock and the drain cancel first. owner: the sequence they came
 * from (its arm_misses counts the cancels). Caller of _locked holds
 * queue_lock. */
#define VKC_ARM_DEPTH_MAX 1024u
/* The depth a sequence's copies grow to by default (VKC_ARM_DEPTH): deep
 * enough that a top-up (one vkQueueSubmit of 128) comes on fewer than 1%
 * of the round trips, shallow enough that a cancel (every copy run empty,
 * ~5.6 us each on the H200) stays near a millisecond. */
#define VKC_ARM_DEPTH 256u
typedef struct vkc__armed {
    vkc__cmd *cmd;
    uint64_t value; /* reserved: next_value, not yet submitted_value */
    bool signals;   /* its submit signals value: noted at the gate */
} vkc__armed;
/* Arm cmds[0..n) in that order, in one vkQueueSubmit, behind the copies
 * already armed (left of them, all owner's; else nothing is armed: the
 * queue changed under the caller; ctx->armed_cmd says what is). */
vkc_result vkc__arm_units(vkc_context *ctx, vkc__cmd *const *cmds, uint32_t n, void *owner,
                          uint32_t left);
/* One armed copy's timeline values in the arming submit (gate.c). */
typedef struct vkc__arm_wait {
    VkTimelineSemaphoreSubmitInfo ts;
    uint64_t gate_at, value; /* its wait on the gate, its signal (if any) */
} vkc__arm_wait;
/* pool.c: whether cmd's submit at value signals the timeline, the last
 * signal before it being at `signalled` (vkc__arm_units: one queued) and
 * asked: the pool wants a signal (once per batch of armed copies). */
bool vkc__submit_signals(vkc_context *ctx, const vkc__cmd *cmd, uint64_t value, uint32_t host_waits,
                         uint64_t signalled, bool asked);
/* pool.c: a submit signalled value (the ring waits name); caller holds
 * queue_lock. */
void vkc__signal_note_locked(vkc_context *ctx, uint64_t value);
vkc_result vkc__arm_open(vkc_context *ctx, vkc__cmd *cmd, uint64_t *out_value, bool *opened);
void vkc__arm_cancel_locked(vkc_context *ctx);
void vkc__arm_cancel(vkc_context *ctx, const void *owner); /* owner NULL: whatever is armed */
/* cmd's predicate word back at 1 where a cancel left it at 0, once the
 * cancelled copy completed; false (nothing changed, no wait) before that:
 * the unit cannot be submitted yet. */
bool vkc__arm_restore(vkc_context *ctx, vkc__cmd *cmd);
/* arm.c: the module's init (the gate, the words, the self-test), finish
 * and device-loss hook. */
vkc_result vkc__arm_init(vkc_context *ctx);
void vkc__arm_finish(vkc_context *ctx);
vkc_result vkc__arm_lose(vkc_context *ctx);
/* vkQueueSubmit calls of the self-test at context creation: three rounds
 * of one cancelled and one opened copy. */
#define VKC_ARM_SELFTEST_SUBMITS 6
/* Submits of the completion epilogue's self-test (epilogue.c). */
#define VKC_EPI_SELFTEST_SUBMITS 6
/* The self-test again on a context whose arming is on (tests): *why is
 * NULL when it passes, else what failed. */
vkc_result vkc__arm_selftest(vkc_context *ctx, const char **why);
/* Make sure the timeline will reach value: an empty submit signals the last
 * value handed out when no submit so far signals value or more. Thread-safe;
 * fails only on a failed submit. */
vkc_result vkc__signal_through(vkc_context *ctx, uint64_t value);
/* The smallest value a submit signalled that is >= value (value itself when
 * none is known): what a wait on the timeline semaphore names. */
uint64_t vkc__signal_cover(vkc_context *ctx, uint64_t value);
/* Wait until the timeline reaches value (vkc__signal_through first, unless
 * the timeout is 0). Thread-safe. */
vkc_result vkc__wait_value(vkc_context *ctx, uint64_t value, uint64_t timeout_ns,
                           vkc_wait_mode mode);
/* Highest completed value (cheap; polls the driver). Thread-safe. */
uint64_t vkc__completed_value(vkc_context *ctx);
/* Highest value submitted so far. */
uint64_t vkc__submitted_value(vkc_context *ctx);
/* Raise the completed value to v (never lowers it). Thread-safe. (wait.c) */
void vkc__raise_completed(vkc_context *ctx, uint64_t v);
/* Fence fallback: retire signalled fences from the oldest; caller holds
 * queue_lock. Returns a negative result on device loss. (wait.c) */
vkc_result vkc__fences_retire_locked(vkc_context *ctx);

/* In VKC_WAIT_SPIN_MARKER mode, record the completion marker (after all work
 * recorded so far, `stages`; host_reads: the host reads that work's results
 * in place, so they are made available to it too); no-op otherwise. */
void vkc__cmd_marker(vkc_context *ctx, vkc__cmd *cmd, VkPipelineStageFlags2 stages,
                     bool host_reads);
/* Start both marker counts at the timeline's next value (one blocking
 * submission without a marker); the marker is on afterwards. */
vkc_result vkc__marker_reset(vkc_context *ctx);
/* Wait until value's results are visible to the host: through the
 * completion marker when it is on (VKC_WAIT_SPIN_MARKER), else as
 * vkc__wait_value. Not for resource lifetimes: those follow the timeline. */
vkc_result vkc__wait_results(vkc_context *ctx, uint64_t value, uint64_t timeout_ns);
/* The marker says value is complete (results visible to the host). */
bool vkc__marker_done(vkc_context *ctx, uint64_t value);
/* Everything up to value (the last value submitted) is complete, as far
 * as the cached completed value tells, or, with the marker on, its count,
 * or the timeline where value itself went without the marker (one driver
 * poll, no lock: callable under queue_lock). Decides whether work recorded
 * without the marker may go without it. */
bool vkc__queue_idle(vkc_context *ctx, uint64_t value);
/* Check that the completion marker can be trusted on this device: a few
 * one-shot submissions whose count and results must be seen, right, and no
 * later than the timeline says they are done. On a failed check the marker
 * is turned off (waits use the timeline) and *ok is false, with the reason
 * in ctx->wait_reason. Returns an error only when a submission fails. */
vkc_result vkc__marker_check(vkc_context *ctx, bool *ok);
#define vkc__marker_on(ctx) atomic_load_explicit(&(ctx)->marker_on, memory_order_relaxed)
/* The marker's dispatch alone (no barrier before or after it): for an
 * armed copy's inverted marker (arm.c). */
void vkc__cmd_marker_dispatch(vkc_context *ctx, vkc__cmd *cmd);
/* Storage buffers bi[0..n) (n <= 4) at bindings 0..n-1 of one of vkc's
 * own kernels: pushed, or a set of cmd's pool written and bound. */
vkc_result vkc__cmd_bind_buffers(vkc_context *ctx, vkc__cmd *cmd, const vkc_kernel *k,
                                 const VkDescriptorBufferInfo *bi, uint32_t n);
/* Self-tests: spin until the count reaches value (true), or until it
 * trails the timeline's completion by more than a grace, or 2 s (false). */
bool vkc__marker_seen(vkc_context *ctx, uint64_t value);

/* ---- completion epilogue (epilogue.c) ----
 * A submission whose last dispatch runs alone after a barrier and whose
 * kernel carries the epilogue ends with that kernel's epilogue pipeline
 * instead of the completion marker: its last workgroup publishes the count.
 * The module row: init (after the marker: the self-test), rebuild. */
enum { VKC_EPI_NONE, VKC_EPI_BUILDING, VKC_EPI_READY, VKC_EPI_FAILED };
/* The largest grid that ends with the epilogue (epilogue.c says why). */
#define VKC_EPILOGUE_GROUPS 256u
vkc_result vkc__epilogue_init(vkc_context *ctx);
vkc_result vkc__epilogue_rebuild(vkc_context *ctx);
/* The self-test alone (tests): *why NULL where it passed; *early where a
 * count was seen before the results it covers in host-visible memory. */
vkc_result vkc__epilogue_selftest(vkc_context *ctx, const char **why, bool *early);
/* The epilogue pipeline of k, made on first use; VK_NULL_HANDLE where the
 * epilogue is off, k lacks it, or it is being made (the caller records the
 * marker instead). Thread-safe. */
VkPipeline vkc__epilogue_pipeline(vkc_context *ctx, vkc_kernel *k);
/* Destroy k's epilogue pipeline (kernel free and device loss). */
void vkc__epilogue_drop(vkc_context *ctx, vkc_kernel *k);
/* glsl.c, where ctx->epi_build: the source with the epilogue's extensions
 * and main renamed after #version, and the epilogue after the end
 * (malloc'd); NULL without memory, or with *skip for a #version the
 * epilogue cannot go with (before 450, or es). */
char *vkc__epilogue_wrap(const char *src, bool *skip);
/* spirv_epilogue.c: the module of `size` bytes with the epilogue spliced
 * after the body of `entry` (the same code as vkc_epilogue.glsl's), in
 * *out (malloc'd, *out_size bytes). Returns NULL, or static text saying
 * why the module cannot take it (*out NULL). Not validated here. */
const char *vkc__spirv_splice_epilogue(const uint32_t *words, size_t size, const char *entry,
                                       uint32_t **out, size_t *out_size);
/* The same text as vkc__spirv_splice_epilogue would return, without the
 * splice (one pass, no allocation). */
const char *vkc__spirv_splice_check(const uint32_t *words, size_t size, const char *entry);
/* A kernel made from SPIR-V: where the epilogue is built and k's module
 * can take it (not a cooperative kernel, whose grid its pipeline's
 * resources size), sets k->epilogue and k->epi_splice; else logs why its
 * submissions keep the marker. */
void vkc__epilogue_splice_mark(vkc_context *ctx, vkc_kernel *k);
extern const char vkc__epilogue_glsl[];
/* Flush immediate-mode work (through ctx->flush_immediate) and wait until
 * everything submitted so far has completed (vkc_finish; the blocking buffer
 * calls before touching memory). */
vkc_result vkc__drain(vkc_context *ctx);
/* Before an object the GPU may use is freed: vkc__drain, or where that
 * fails (device loss) wait for the device as far as it still can. */
void vkc__drain_or_idle(vkc_context *ctx);
/* vkc__drain bounded by timeout_ns (vkc_finish_timeout). */
vkc_result vkc__drain_timeout(vkc_context *ctx, uint64_t timeout_ns);
/* Wait for value within ctx->wait_timeout_ns; VKC_TIMEOUT (with a message
 * naming `what`) when it ends first. */
vkc_result vkc__wait_bounded(vkc_context *ctx, uint64_t value, const char *what);
/* As vkc__wait_bounded, through the completion marker where it is on
 * (vkc__wait_results): for work the host reuses once it has run, never
 * for what frees Vulkan objects. A value whose submit did not signal costs
 * no signal of its own here, which would complete only after everything
 * submitted since. */
vkc_result vkc__wait_results_bounded(vkc_context *ctx, uint64_t value, const char *what);
/* Default of vkc_context_desc.wait_timeout_ns. */
#define VKC_DEFAULT_WAIT_TIMEOUT_NS (10ull * 1000000000ull)

/* Begin a one-shot unit (a leading full barrier is recorded), then submit it
 * and wait for it. Used by the blocking buffer calls. */
vkc_result vkc__oneshot_begin(vkc_context *ctx, vkc__cmd **out);
vkc_result vkc__oneshot_end_wait(vkc_context *ctx, vkc__cmd *cmd);
/* The one-shot unit holds a reference on b until it retires, so a
 * transfer that timed out never leaves b to be freed under the GPU. */
void vkc__oneshot_hold(vkc__cmd *cmd, vkc__obj *o);
/* End a one-shot unit whose work ran in `stages` (host barrier, completion
 * marker), submit it without waiting and give it back to the pool. */
vkc_result vkc__oneshot_end_submit(vkc_context *ctx, vkc__cmd *cmd, VkPipelineStageFlags2 stages,
                                   uint64_t *out_value);

vkc_result vkc__pool_init(vkc_context *ctx);
void vkc__pool_finish(vkc_context *ctx);

/* Profiling a unit being recorded: queries for `spans` spans (the query
 * pool is created or grown only when the unit has fewer), reset at the
 * start of the command buffer. On failure the unit is left without
 * queries (recording goes on unprofiled) and the error is returned. */
vkc_result vkc__cmd_queries(vkc_context *ctx, vkc__cmd *cmd, uint32_t spans);
/* Open span `kind` (a TOP_OF_PIPE timestamp) / close the last open one
 * (BOTTOM_OF_PIPE). No-op on a unit without queries. */
void vkc__cmd_span_begin(vkc_context *ctx, vkc__cmd *cmd, uint8_t kind, const char *label);
void vkc__cmd_span_end(vkc_context *ctx, vkc__cmd *cmd, uint32_t span);

/* The stages vkc's work runs in, and the accesses those stages make: the one
 * place barrier masks are derived from. */
#define VKC_WORK_STAGES (VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT)

static inline VkAccessFlags2 vkc__writes_of(VkPipelineStageFlags2 stages)
{
    VkAccessFlags2 a = 0;
    if (stages & VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT)
        a |= VK_ACCESS_2_SHADER_WRITE_BIT;
    if (stages & VK_PIPELINE_STAGE_2_TRANSFER_BIT)
        a |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    return a;
}

static inline VkAccessFlags2 vkc__accesses_of(VkPipelineStageFlags2 stages)
{
    VkAccessFlags2 a = vkc__writes_of(stages);
    if (stages & VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT)
        a |= VK_ACCESS_2_SHADER_READ_BIT;
    if (stages & VK_PIPELINE_STAGE_2_TRANSFER_BIT)
        a |= VK_ACCESS_2_TRANSFER_READ_BIT;
    return a;
}

/* A global memory barrier between all earlier and all later compute and
 * transfer work, and host reads where asked. Uses synchronization2 when
 * enabled. */
void vkc__cmd_barrier(vkc_context *ctx, VkCommandBuffer cb, VkPipelineStageFlags2 src_stages,
                      VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stages,
                      VkAccessFlags2 dst_access);

/* A queue-family ownership transfer of one buffer range: the acquire half
 * (from `other` to the context's family, before later compute/transfer work)
 * or the release half (to `other`, after earlier work). */
void vkc__cmd_ownership(vkc_context *ctx, VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset,
                        VkDeviceSize size, bool acquire, uint32_t other);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct vkc__block vkc__block;

struct vkc_buffer {
    vkc__obj obj; /* first: the handle is its header */
    VkBuffer buffer;
    VkDeviceSize offset; /* of this vkc buffer inside `buffer` (0 unless wrapped) */
    uint64_t size;
    vkc_memory memory;
    bool host_visible;
    bool host_coherent;
    bool host_cached;
    bool wrapped; /* the VkBuffer belongs to the host */
    void *mapped;
    /* The host reads it through the mapping (an UPLOAD or READBACK buffer,
     * or one whose mapping vkc_buffer_map handed out or a download read):
     * only writes to such a buffer end their submission with a host
     * barrier (vkc__buffer_host_reads). */
    atomic_bool host_read;
    vkc__block *block;
    VkDeviceSize block_offset;
    VkDeviceSize alloc_size;
    uint64_t uid; /* never reused: tells sequences a buffer was replaced */
    char name[64];
};

vkc_result vkc__memory_init(vkc_context *ctx);
void vkc__memory_finish(vkc_context *ctx);
/* Device-loss recovery: drop every buffer's VkBuffer and memory and the
 * module state (on the old device); then, on the new device, create the
 * state again and give every buffer a new VkBuffer of the same size and
 * kind (contents are lost). */
vkc_result vkc__memory_lose(vkc_context *ctx);
vkc_result vkc__memory_rebuild(vkc_context *ctx);
/* vkc_context_destroy: destroy the buffers the caller left alive. */
void vkc__memory_drop(vkc_context *ctx);
/* A buffer's free function (its last reference went; wrapped buffers too). */
void vkc__buffer_obj_free(vkc__obj *o);
/* From now on the host reads buf through its mapping: the first time,
 * ctx->map_epoch moves (sequences that write it record their host barrier
 * at their next submit) and a barrier-only submission makes the writes
 * before it visible to the host (waited for). */
vkc_result vkc__buffer_host_reads(vkc_buffer *buf);

/* Bytes of each staging buffer (one per direction), used in two halves:
 * transfers larger than a half go in chunks. */
#define VKC_STAGING_RING_SIZE (16ull << 20)

/* Memory types allowed by `bits` that suit `kind`, best first; returns how
 * many. DEVICE prefers host-visible device-local memory on the largest
 * device-local heap (resizable BAR, unified memory), then plain device-local;
 * UPLOAD needs host-visible (coherent, device-local on that heap preferred);
 * READBACK needs host-visible (cached, then coherent preferred). Pure. */
uint32_t vkc__memory_pick_types(const VkPhysicalDeviceMemoryProperties *mp, vkc_memory kind,
                                uint32_t bits, uint32_t out[VK_MAX_MEMORY_TYPES]);

/* Test hook: DEVICE buffers created after `on` are not mapped even where
 * their memory is host-visible, so transfers take the staging path. */
void vkc__memory_force_staging(vkc_context *ctx, bool on);

/* Downloads from a mapping the CPU does not cache (write-combined BAR of a
 * discrete GPU: a few MB/s) are staged through cached memory when larger. */
#define VKC_UNCACHED_READ_MAX 1024ull

/* Test hook: DEVICE and UPLOAD buffers created after `on` are mapped as
 * usual but treated as uncached (as on a GPU whose device-local memory is
 * host-visible through the BAR), so downloads larger than
 * VKC_UNCACHED_READ_MAX are staged. */
void vkc__memory_force_uncached(vkc_context *ctx, bool on);

/* The staging buffer of one direction (0 = upload, 1 = download; created on
 * first use, VKC_STAGING_RING_SIZE bytes, mapped), returned with its lock
 * held: give it back with vkc__staging_give. transfer.c; image.c uses it. */
vkc_result vkc__staging_take(vkc_context *ctx, int download, vkc_buffer **out);
void vkc__staging_give(vkc_context *ctx, int download, uint64_t busy);
/* Flush (host wrote) or invalidate (host will read) a range of a mapped
 * buffer where its memory is not coherent. */
vkc_result vkc__buffer_sync_mapping(vkc_context *ctx, vkc_buffer *buf, uint64_t offset,
                                    uint64_t size, bool flush);

/* ------------------------------------------------------------------------ */
/* Images (image.c)                                                         */
/* ------------------------------------------------------------------------ */

typedef struct vkc__format_row {
    const char *name;
    VkFormat vk;
    uint32_t texel_size;
} vkc__format_row;
/* The format table, indexed by vkc_format (image.c). */
extern const vkc__format_row vkc__formats[VKC_FORMAT_COUNT_];

/* One cached view: key from vkc__view_key. */
typedef struct vkc__view {
    uint64_t key;
    VkImageView view;
} vkc__view;

struct vkc_image {
    vkc__obj obj; /* first: the handle is its header */
    VkImage image;
    VkDeviceMemory memory; /* dedicated; VK_NULL_HANDLE when wrapped */
    VkDeviceSize memory_size;
    vkc_image_type type;
    vkc_format format;
    VkFormat vk_format;
    uint32_t width, height, depth, layers, mips;
    uint32_t usage; /* vkc_image_usage bits */
    VkImageUsageFlags vk_usage;
    VkFormatFeatureFlags features; /* of its format, optimal tiling */
    VkImageLayout resting;         /* where it is between submissions */
    bool wrapped;
    /* EXCLUSIVE and owned by another family between vkc's work: a sequence
     * must acquire it before using it. */
    bool foreign;
    bool concurrent; /* wrapped with CONCURRENT sharing: no ownership transfers */
    bool dead;       /* wrapped and its device was lost: unusable */
    uint64_t uid;
    pthread_mutex_t view_lock;
    vkc__view *views;
    uint32_t view_count, view_cap;
    char name[64];
};

struct vkc_sampler {
    uint32_t magic;
    vkc_context *ctx;
    struct vkc_sampler *next;
    vkc_sampler_desc desc; /* resolved */
    VkSampler sampler;
};

/* The descriptor type of a reflected binding (kernel.c's set layout and
 * dispatch's writes agree through it). */
static inline VkDescriptorType vkc__descriptor_type(const vkc_binding_info *b)
{
    switch (b->kind) {
    case VKC_BINDING_STORAGE_IMAGE:
        return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    case VKC_BINDING_SAMPLED_IMAGE:
        return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    case VKC_BINDING_COMBINED_IMAGE_SAMPLER:
        return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    case VKC_BINDING_SAMPLER:
        return VK_DESCRIPTOR_TYPE_SAMPLER;
    default:
        return b->uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    }
}

/* Check an image handle (image.c, image_transfer.c). A destroyed one that
 * something still holds is named, as buffers are (vkc__obj_check). */
#define VKC_CHECK_IMAGE(img, what)                                                                 \
    do {                                                                                           \
        if (VKC_UNLIKELY(!vkc__obj_is((img), VKC_MAGIC_IMAGE)))                                    \
            return vkc__obj_check(NULL, (img), VKC_MAGIC_IMAGE, what);                             \
        VKC_CHECK_CONTEXT((img)->obj.ctx);                                                         \
        if (VKC_UNLIKELY((img)->dead))                                                             \
            return VKC_FAIL((img)->obj.ctx, VKC_ERROR_INVALID_HANDLE,                              \
                            "%s: image \"%s\" wrapped a VkImage of a device that was lost", what,  \
                            (img)->name);                                                          \
    } while (0)

vkc_result vkc__image_init(vkc_context *ctx);
void vkc__image_drop(vkc_context *ctx);
void vkc__image_finish(vkc_context *ctx);
vkc_result vkc__image_lose(vkc_context *ctx);
vkc_result vkc__image_rebuild(vkc_context *ctx);

/* The view of img for a binding: type (2D, 2D array, 3D), mips and layers
 * (resolved, in range). Created on first use and cached with the image.
 * Thread-safe. */
vkc_result vkc__image_view(vkc_image *img, VkImageViewType type, uint32_t base_mip,
                           uint32_t mip_count, uint32_t base_layer, uint32_t layer_count,
                           VkImageView *out);

/* A region resolved against an image: every zero filled in, all in range
 * (else VKC_ERROR_INVALID_ARGUMENT naming what is out of range), and its
 * bytes tightly packed. */
typedef struct vkc__box {
    uint32_t mip, layer, layers;
    uint32_t x, y, z, w, h, d;
} vkc__box;
vkc_result vkc__resolve_region(const vkc_image *img, const vkc_image_region *rg, const char *what,
                               vkc__box *b);
uint64_t vkc__box_bytes(const vkc_image *img, const vkc__box *b);
/* A mip/layer range resolved against an image (0 = the rest). */
vkc_result vkc__resolve_range(const vkc_image *img, const vkc_image_range *rg, const char *what,
                              VkImageSubresourceRange *out);

/* A layout transition of a subresource range of img, after src_stages'
 * writes and before dst_stages' accesses. */
VkImageMemoryBarrier2 vkc__image_barrier(const vkc_image *img, VkImageLayout from, VkImageLayout to,
                                         VkPipelineStageFlags2 src_stages,
                                         VkPipelineStageFlags2 dst_stages, uint32_t base_mip,
                                         uint32_t mips, uint32_t base_layer, uint32_t layers);

/* Move the whole image from one layout to another in a one-shot unit and
 * wait (creation, wrapping, recovery). flush: submit the open immediate
 * batch first (not during recovery). image_transfer.c. */
vkc_result vkc__oneshot_transition(vkc_image *img, VkImageLayout from, VkImageLayout to,
                                   bool flush);

/* The Vulkan clear colour of a value for img (NULL value: an error). */
vkc_result vkc__image_clear_value(const vkc_image *img, const vkc_clear_value *v,
                                  VkClearColorValue *out);

/* One pipeline barrier: an optional global memory barrier (mb, may be
 * NULL) and n image barriers, through synchronization2 when enabled (the
 * legacy call ORs the stage masks). pool.c. */
void vkc__cmd_barrier2(vkc_context *ctx, VkCommandBuffer cb, const VkMemoryBarrier2 *mb,
                       const VkImageMemoryBarrier2 *ib, uint32_t n);

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

struct vkc_kernel {
    vkc__obj obj; /* first: the handle is its header */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    vkc_kernel_info info;
    /* The spec id of the x workgroup size (local_size_x_id); UINT32_MAX when
     * the shader fixes its size. */
    uint32_t local_size_x_id;
    uint32_t shared_bytes; /* from reflection */
    bool has_images;       /* a binding other than a buffer: its dispatches check image rules */
    char name[64];
    /* What it was built from, kept to build it again after device loss
     * (vkc_context_recover): the words (native order), the entry point,
     * the asked-for workgroup size and the specialization constants. */
    uint32_t *spirv;
    size_t spirv_size; /* bytes */
    char *entry;
    uint32_t want_workgroup_size;
    vkc_spec_constant *spec;
    uint32_t spec_count;
    /* The completion epilogue (epilogue.c): the SPIR-V carries it (GLSL
     * built by vkc_kernel_create_glsl), and its second pipeline, made on
     * first use: epi_state VKC_EPI_NONE, _BUILDING, _READY (epi_pipeline
     * set, published by the release store) or _FAILED. */
    bool epilogue;
    /* The epilogue is spliced into a copy of the SPIR-V when the pipeline
     * is made (spirv_epilogue.c): kernels from SPIR-V, and GLSL whose
     * #version the source epilogue cannot go with. */
    bool epi_splice;
    atomic_int epi_state;
    VkPipeline epi_pipeline;
    bool epi_again; /* dropped with a lost device: made again in its rebuild */
};

vkc_result vkc__kernel_init(vkc_context *ctx); /* pipeline cache, SPIR-V cache */
/* Room for vkc's own specialization constants in a variant. */
#define VKC_KERNEL_VARIANT_SPECS 8
/* A second pipeline of k on k's layout: its own specialization constants
 * and `extra` (ids that k's own must not use), from `words` (`size`
 * bytes; NULL: k's own SPIR-V, whose reflection serves either way).
 * Counted in stats.pipelines; the caller destroys it (VKC_STAT_SUB). */
vkc_result vkc__kernel_variant(vkc_context *ctx, const vkc_kernel *k, const uint32_t *words,
                               size_t size, const VkSpecializationMapEntry *extra,
                               const uint32_t *extra_values, uint32_t extra_count, VkPipeline *out);
void vkc__kernel_finish(vkc_context *ctx);
/* cooperative.c: whether k was built with vkc_grid.glsl (its spec constant
 * VKC_GRID_SPEC_ID) and, if so, the binding of its state block. */
bool vkc__kernel_grid_binding(const vkc_kernel *k, uint32_t *binding);
/* vkc_context_destroy: destroy the kernels the caller left alive. */
void vkc__kernel_drop(vkc_context *ctx);

/* Largest SPIR-V module or cache file vkc reads. */
#define VKC_MAX_FILE_BYTES (256u << 20)
#define VKC_MAX_SPEC_CONSTANTS 256
/* An absent id, decoration or spec id in reflection. */
#define VKC_NONE UINT32_MAX

typedef struct vkc__cache vkc__cache; /* cache.c */

/* Per-context state of the kernel files (ctx->kernel_state), created by
 * vkc__kernel_init in kernel.c. */
typedef struct vkc__kstate {
    vkc__cache *cache;     /* cache.c: the SPIR-V and pipeline caches */
    uint32_t subgroup_ops; /* VkSubgroupFeatureFlags usable in compute */
    /* glsl.c: this context holds a glslang process reference; guarded by
     * glsl.c's process-wide lock. */
    bool glslang_ref;
} vkc__kstate;

/* Create a kernel from SPIR-V words in native order (the caller keeps
 * them): validation, reflection, pipeline. kernel.c. */
vkc_result vkc__kernel_create_words(vkc_context *ctx, const char *name, const uint32_t *words,
                                    size_t size, const char *entry, uint32_t wg,
                                    const vkc_spec_constant *spec, uint32_t spec_count,
                                    vkc_kernel **out);
/* A kernel's name: name, else the file name of path, else "kernel". */
void vkc__kernel_name(char *out, size_t size, const char *name, const char *path);

/* ---- SPIR-V validation and reflection (spirv.c) ---- */

/* What reflection finds for one entry point. */
typedef struct vkc__refl {
    vkc_binding_info bindings[VKC_MAX_BINDINGS];
    uint32_t binding_count;
    uint32_t push_size;
    uint32_t wg[3];
    uint32_t wg_spec[3];   /* spec ids, VKC_NONE when fixed */
    uint32_t shared_bytes; /* Workgroup variables */
    /* For each spec constant the caller sets: the bit width the shader
     * declares it with when that is not 32 (vkc sets 32-bit ones only);
     * 0 when it is 32-bit, bool or not declared. */
    uint32_t spec_bits[VKC_MAX_SPEC_CONSTANTS];
} vkc__refl;

/* Bring untrusted bytes into aligned words of native byte order. Frees
 * nothing; *owned is set when a copy was made. */
vkc_result vkc__spirv_words(vkc_context *ctx, const char *name, const void *bytes, size_t size,
                            const uint32_t **words, uint32_t **owned);
/* The header (magic, version for the device's Vulkan) and then the
 * SPIRV-Tools validator. Fails with VKC_ERROR_INVALID_SPIRV. */
vkc_result vkc__spirv_check(vkc_context *ctx, const char *name, const uint32_t *words, size_t size);
/* Whether a cache file holds a valid SPIR-V module; why not in msg. */
bool vkc__spirv_file_ok(const vkc_context *ctx, const void *data, size_t size, char *msg,
                        size_t msg_size);
/* Reflect a checked module: the entry point (compute), its workgroup size,
 * the buffer bindings of set 0, the push-constant block, the capabilities
 * against the device (subgroup_ops as in vkc__kstate) and the width of the
 * spec constants given. */
vkc_result vkc__spirv_reflect(vkc_context *ctx, const char *name, const uint32_t *words,
                              size_t size, const char *entry, uint32_t subgroup_ops,
                              const vkc_spec_constant *spec, uint32_t spec_count, vkc__refl *r);

/* ---- caches and files (cache.c) ---- */

/* FNV-1a, 64-bit: the hash of cache keys, checksums and fusion structure. */
#define VKC_HASH_SEED 0xcbf29ce484222325ull
uint64_t vkc__hash64(uint64_t h, const void *p, size_t n);

/* Read a whole file (at most VKC_MAX_FILE_BYTES). Returns 0 or an errno
 * value; *out is vkc__malloc'd. */
int vkc__read_file(const char *path, void **out, size_t *out_size);

/* Resolve ctx->cache_dir and create the pipeline cache (the host's or
 * vkc's own, loaded from disk). *out is set even on failure, for
 * vkc__cache_finish. */
vkc_result vkc__cache_init(vkc_context *ctx, vkc__cache **out);
/* Save vkc's own pipeline cache if it was used, destroy it, free all. */
void vkc__cache_finish(vkc_context *ctx, vkc__cache *c);
VkPipelineCache vkc__cache_pipelines(const vkc__cache *c);
/* A pipeline was created through the cache: it is worth saving. */
void vkc__cache_pipeline_used(vkc__cache *c);
/* The identity of a cache entry: its full key material (length-prefixed
 * fields behind vkc's cache-format version), stored inside the entry and
 * compared byte for byte when read; hash names the file. */
typedef struct vkc__cache_key {
    uint8_t *bytes; /* vkc__malloc'd */
    size_t size;
    uint64_t hash;
} vkc__cache_key;
/* Key of a compiled module: everything that decides the SPIR-V (source,
 * preamble of defines, entry, compiler version, target), and the device
 * and driver (deviceUUID, driverUUID). Returns false when out of memory. */
bool vkc__spv_cache_key(const vkc_context *ctx, const char *source, const char *preamble,
                        const char *entry, const char *compiler, const char *target,
                        vkc__cache_key *key);
void vkc__cache_key_free(vkc__cache_key *key);
/* Look a module up in memory, then on disk. Returns a vkc__malloc'd copy.
 * A disk entry made from another key, or cut short, is ignored with a
 * warning (VKC_LOG_ID_CACHE). */
bool vkc__spv_cache_get(vkc_context *ctx, vkc__cache *c, const vkc__cache_key *key,
                        uint32_t **words, size_t *size);
/* Keep a module in memory and, with persist, on disk (over any old file). */
void vkc__spv_cache_put(vkc_context *ctx, vkc__cache *c, const vkc__cache_key *key,
                        const uint32_t *words, size_t size, bool persist);

/* ---- run-time GLSL (glsl.c) ---- */

/* Drop the context's glslang process reference (vkc__kernel_finish). */
void vkc__glsl_release(vkc__kstate *ks);

/* ------------------------------------------------------------------------ */
/* Dispatch (sequences, immediate mode)                                     */
/* ------------------------------------------------------------------------ */

typedef struct vkc__imm vkc__imm;

vkc_result vkc__dispatch_init(vkc_context *ctx);
void vkc__dispatch_finish(vkc_context *ctx);
/* vkc_context_destroy: destroy the sequences the caller left alive. */
void vkc__dispatch_drop(vkc_context *ctx);
/* The sequence's resource set retains o until the sequence is recorded
 * again and its submissions completed (fusion: the graph whose name and
 * temporaries its commands use). The error is latched. */
vkc_result vkc__seq_hold(vkc_seq *s, vkc__obj *o);
/* Create the completion marker's buffer and kernel (VKC_WAIT_SPIN_MARKER);
 * immediate.c, after dispatch's init. */
vkc_result vkc__marker_init(vkc_context *ctx);
vkc_result vkc__marker_rebuild(vkc_context *ctx);
/* Device-loss recovery: every sequence gives its recording units back (they
 * die with the pool) and must be recorded again before its next submit;
 * after the new device is up, the immediate-mode ring starts empty. */
vkc_result vkc__dispatch_lose(vkc_context *ctx);
vkc_result vkc__dispatch_rebuild(vkc_context *ctx);

/* Device-loss recovery of kernels: destroy each kernel's pipeline objects on
 * the old device; create them again from the SPIR-V it keeps. */
void vkc__kernel_lose(vkc_context *ctx);
vkc_result vkc__kernel_rebuild(vkc_context *ctx);

/* Resident kernels (resident.c): destroy those the caller left alive
 * (vkc_context_destroy), free the module state; on device loss, drop their
 * Vulkan objects (they must be created again). */
void vkc__resident_drop(vkc_context *ctx);
void vkc__resident_finish(vkc_context *ctx);
vkc_result vkc__resident_lose(vkc_context *ctx);
/* Test hook: resident kernels created after `on` may launch on vkc's own
 * queue where the family has no second one (lavapipe), so the resident
 * path runs there; ordinary work then waits behind the kernel until it
 * goes idle. */
void vkc__resident_share_queue(vkc_context *ctx, bool on);
/* Test hook: the self-test of acks in host memory never sees one (it falls
 * back to acks in the ring). */
void vkc__resident_hide_host_ack(vkc_context *ctx, bool on);
/* The embedded text of shaders/include/vkc_resident.glsl (glsl.c's
 * includer). */
extern const char vkc__resident_glsl[];

/* Create the VkDevice on ctx->phys (device.c; shared with recovery). */
vkc_result vkc__open_device(vkc_context *ctx, bool use_timeline, bool use_push);

/* ------------------------------------------------------------------------ */
/* Fusion                                                                   */
/* ------------------------------------------------------------------------ */

#define VKC_MAGIC_FUSE 0x564b4346u /* "VKCF" */

/* The graph of a vkc_fuse (fuse.c builds it; fuse_glsl.c generates its
 * shader; fuse_record.c records it). */
#define VKC__FUSE_OP_CAST ((uint8_t)VKC_OP_COUNT_)

enum { VKC__FN_INPUT = 1, VKC__FN_SCALAR, VKC__FN_CONST, VKC__FN_OP };

typedef struct vkc__fnode {
    uint8_t kind;
    uint8_t op;     /* vkc_fuse_opcode or VKC__FUSE_OP_CAST */
    uint8_t type;   /* value type: F32, I32, U32, BOOL */
    uint8_t stype;  /* inputs: storage type (F16 loads as F32; BOOL = uint 0/1) */
    uint32_t index; /* input / scalar index */
    uint32_t period;
    uint32_t arg[3]; /* node indices */
    uint32_t narg;
    uint32_t bits; /* constants */
} vkc__fnode;

typedef struct vkc__foutput {
    uint32_t node;
    uint8_t stype; /* storage type */
} vkc__foutput;

typedef struct vkc__fgraph {
    vkc__fnode *nodes;
    uint32_t count, cap;
    vkc__foutput *outs;
    uint32_t out_count, out_cap;
    uint32_t inputs, scalars, constants, ops;
    int64_t reduce_node; /* -1: none */
    uint8_t reduce_op;
} vkc__fgraph;

struct vkc_fuse {
    vkc__obj obj;    /* first: the handle is its header */
    uint32_t serial; /* tells this graph's value ids from others' (fuse.c) */
    vkc__fgraph g;
    vkc_result error;      /* first graph-building error, latched */
    char first_error[512]; /* its message */
    char name[64];
    vkc_toggle vectorize;
    uint32_t workgroup_size;
    bool built;
    bool vectorizable;
    char *source[2];
    vkc_kernel *kernel[2];
    vkc_buffer **temps;
    uint32_t temp_count, temp_cap;
    uint64_t builds, compiles, unfused_kernels;
    uint64_t hash;
    char *debug_extra; /* test hook: appended to the generated sources */
};

#define VKC_CHECK_FUSE(f)                                                                          \
    do {                                                                                           \
        if (VKC_UNLIKELY(!(f) || (f)->obj.magic != VKC_MAGIC_FUSE))                                \
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_fuse handle");            \
    } while (0)

/* Bytes of one element in a buffer of storage type stype. */
static inline uint32_t vkc__fuse_storage_size(uint8_t stype)
{
    return stype == VKC_DTYPE_F16 ? 2u : 4u;
}

/* fuse.c */
void vkc__fgraph_free(vkc__fgraph *g);
bool vkc__fgraph_push_node(vkc__fgraph *g, const vkc__fnode *n);
bool vkc__fgraph_push_out(vkc__fgraph *g, uint32_t node, uint8_t stype);
/* Generate the graph's sources (once; the latched building error first). */
vkc_result vkc__fuse_prepare(vkc_fuse *f);
/* The kernel of source, from the context's fusion cache or compiled now;
 * fused counts it in the graph's builds / compiles. */
vkc_result vkc__fuse_kernel(vkc_fuse *f, const char *source, const char *name, bool fused,
                            vkc_kernel **out);

/* fuse_glsl.c: the shader of graph g at width w (1 or 4), vkc__malloc'd;
 * NULL when out of memory. Bindings: inputs in order, then outputs, then
 * the reduction result. */
char *vkc__fuse_glsl(const vkc__fgraph *g, int w, const char *name);
/* Whether a vec4 variant can be generated (no F16 buffer, no broadcast). */
bool vkc__fuse_vectorizable(const vkc__fgraph *g);

/* Destroy the graphs still alive and the fusion kernel cache (its kernels are
 * in ctx->kernels). Called by vkc_context_destroy after the sequences and
 * before the kernels and buffers are destroyed. */
void vkc__fuse_finish(vkc_context *ctx);
/* Test hook: text appended to every source the graph generates from now on
 * (NULL removes it); lets a test reach the VKC_ERROR_COMPILE path. */
vkc_result vkc__fuse_debug_append(vkc_fuse *fuse, const char *glsl);

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

/* The profile module's hooks (profile.c sets them at init; NULL before).
 * Lower modules reach profiling only through them, and only for a unit
 * recorded with queries or a context with profiling on. */
typedef struct vkc__profile_hooks {
    /* A profiled unit was submitted (after the queue lock is released). */
    void (*submitted)(vkc_context *ctx, vkc__cmd *unit);
    /* A unit whose results are unread is about to be reset, submitted
     * again or destroyed: wait for its submission and read them. */
    void (*reuse)(vkc_context *ctx, vkc__cmd *unit);
    /* A CPU interval of the calling thread (VKC__CPU_*). */
    void (*cpu)(vkc_context *ctx, int kind, uint64_t t0, uint64_t t1, uint64_t value);
    /* Profiling failed (the message is the context's last error); the
     * work goes on unprofiled. */
    void (*failed)(vkc_context *ctx, vkc_result r);
} vkc__profile_hooks;

enum { VKC__CPU_WAIT = 1 };

/* CLOCK_MONOTONIC in ns: the host clock of every profile event. */
uint64_t vkc__clock_ns(void);
/* A small id of the calling thread (1, 2, ... in order of first use). */
uint32_t vkc__thread_id(void);

/* Profile module (profile.c), the top row of the module table. */
vkc_result vkc__profile_init(vkc_context *ctx);
void vkc__profile_drop(vkc_context *ctx);
void vkc__profile_finish(vkc_context *ctx);
vkc_result vkc__profile_lose(vkc_context *ctx);
vkc_result vkc__profile_rebuild(vkc_context *ctx);
/* Nearest-rank percentile p (0..100] of n sorted values: the smallest
 * value with at least p% of the values at or below it; 0 for n = 0. */
uint64_t vkc__percentile(const uint64_t *sorted, size_t n, double p);
/* Test hook: ignore VK_EXT_calibrated_timestamps (the correlation
 * fallback) in contexts created after `on`. */
void vkc__profile_force_correlation(bool on);
/* Queues of its own that resident kernels may use (beside vkc's). */
#define VKC_MAX_RESIDENT_QUEUES 3

/* Host semaphore waits one submit can carry (vkc_wait_host_semaphore). */
#define VKC_MAX_HOST_WAITS 16

struct vkc_context {
    uint32_t magic;
    uint64_t id; /* unique in the process; tickets carry it */

    void *loader;
    vkc__itable vki;
    struct VolkDeviceTable vk;

    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    bool own_instance;
    bool own_device;
    bool debug_utils;  /* VK_EXT_debug_utils available: names and labels */
    bool debug_labels; /* label every command (VKC_DEBUG_LABELS=1 or validation on) */
    /* VKC_COOPERATIVE=off: cooperative dispatches always take the fallback. */
    bool cooperative_off;
    /* Test-only: drop the barriers between levels, to prove on a GPU that
     * overlaps dispatches that the hazard tests catch a missing barrier. */
    bool test_drop_barriers;
    const VkAllocationCallbacks *alloc;
    vkc_logger logger;

    vkc_device_info info;
    vkc_context_features features;
    VkPhysicalDeviceMemoryProperties mem_props;
    /* Moves when a mapped DEVICE buffer starts being read by the host
     * (vkc__buffer_host_reads): sequences recorded before look again. */
    atomic_uint map_epoch;
    uint32_t api_version; /* enabled on the device */
    bool maintenance4;    /* enabled: SPIR-V may use LocalSizeId (local_size_x_id in 1.6) */

    /* Errors. */
    pthread_mutex_t error_lock;
    char last_error[2048];
    VkResult last_vk;
    atomic_bool lost; /* device loss is latched once */

    /* Submission: the queue lock, or the host's lock callbacks. */
    pthread_mutex_t queue_lock;
    void (*queue_lock_fn)(void *user);
    void (*queue_unlock_fn)(void *user);
    void *queue_lock_user;
    VkSemaphore timeline;
    uint64_t next_value;                  /* guarded by queue_lock */
    atomic_uint_fast64_t submitted_value; /* last value handed out */
    atomic_uint_fast64_t completed_value; /* cached lower bound */
    /* Where the trusted marker tells the host that results are visible, a
     * submit signals the timeline only every signal_every values or when
     * something needs it (see vkc__submit). Guarded by queue_lock. */
    atomic_uint_fast64_t signalled_value; /* the highest value a submit signals */
    uint32_t signal_every;                /* VKC_SIGNAL_EVERY, or its override */
    /* A recording's first submit signals (VKC_FIRST_SIGNAL; immediate mode
     * turns it off and on where VKC_SIGNAL_ADAPT is on: immediate.c). */
    atomic_bool first_signals;
    bool first_signal_fixed;    /* VKC_FIRST_SIGNAL was set */
    uint8_t cb_plain;           /* VKC__PLAIN_*: which copies go without SIMULTANEOUS_USE */
    atomic_bool signal_asked;   /* the pool wants units back: signal the next submit */
    atomic_bool marker_trusted; /* the self-test passed: sparse signals allowed */
    /* The last values that submits signalled, oldest first from
     * signal_ring_n % VKC_SIGNAL_RING: a blocking wait names one of them
     * (the validation layer of 1.3.239 loses track of a wait on a value no
     * submit signals exactly). Guarded by queue_lock. */
    uint64_t signal_ring[VKC_SIGNAL_RING];
    uint32_t signal_ring_n;
    /* Fence fallback: one fence per in-flight value, in a ring. */
    VkFence *fences;
    uint64_t *fence_values;
    uint32_t fence_cap, fence_head, fence_count;

    vkc__pool pool;

    /* VKC_WAIT_SPIN_MARKER: the count of completed submissions, written by a
     * one-invocation dispatch at the end of every submission. */
    vkc_buffer *marker_buf;   /* host-visible: the count the host reads */
    vkc_buffer *marker_count; /* device-local: the count the marker adds to */
    vkc_kernel *marker_kernel;
    atomic_bool marker_on; /* cleared for good if a submission lacks the marker */
    /* Submissions left without the marker (only onto an idle queue: every
     * earlier value was complete then): how many since the count was reset,
     * and the last one's value. The count then trails the timeline by
     * marker_skew; the skipped value itself completes on the timeline (its
     * submit signals). Written under queue_lock, skip before skew. */
    atomic_uint_fast64_t marker_skip, marker_skew;
    volatile uint32_t *marker;
    /* VKC_MARKER_FORM (experiments): "lean" drops the barrier after the
     * marker, "atomic" adds to the host word instead of storing to it. */
    bool marker_lean, marker_atomic;
    bool wait_auto; /* wait_mode was DEFAULT: the self-test decides */
    /* A wait past its spin budget (wait.c, vkc__wait_long: the marker's,
     * VKC_WAIT_SPIN_THEN_BLOCK's): how long the last such wait took from
     * its start, 0 before one finished (VKC_WAIT_PREDICT=0: never set). */
    atomic_uint_fast64_t wait_long_ns;
    bool wait_predict;
    /* Test-only: a CPU device's waits take the GPU's long path. */
    bool test_wait_long;
    /* Test-only: the marker's barriers are recorded, its dispatch is not (the
     * count never moves), to prove the self-test catches it. */
    bool test_marker_mute;
    char wait_reason[96];
    /* The completion epilogue (epilogue.c): GLSL kernels are built with it
     * (epi_build: bufferDeviceAddress and not VKC_EPILOGUE=0), and its
     * self-test passed (epi_on), else epi_reason says why not. The spec
     * values: on, then the addresses of marker_count and marker_buf. */
    bool epi_build;
    atomic_bool epi_on;
    bool epi_mapped; /* results in host-visible memory were seen with the count */
    /* VKC_EPILOGUE_FORM (experiments) */
    bool epi_xchg, epi_barrier, epi_scoped;
    uint32_t epi_values[5];
    char epi_reason[96];
    /* Test-only: the epilogue pipelines are made with the publish off (the
     * count never moves), to prove the self-test catches it. */
    bool test_epi_mute;

    /* Armed submission (pool.c, arm.c). arm_on: the self-test passed and
     * sequences may be armed (else arm_reason says why not). The gate is a
     * timeline semaphore the host signals; gate_value its last value. The
     * predicate words (one per unit that has a slot) are host-visible and
     * coherent; 1 except while a cancelled copy has not completed. */
    bool conditional_rendering; /* VK_EXT_conditional_rendering enabled on the device */
    bool arm_on;
    char arm_reason[96];
    VkSemaphore gate;
    uint64_t gate_value; /* guarded by queue_lock */
    vkc_buffer *arm_pred_buf;
    volatile uint32_t *arm_pred;
    atomic_uint arm_pred_next; /* slots handed out */
    uint32_t arm_pred_cap;
    /* The armed copies (a ring of VKC_ARM_DEPTH_MAX, arm_len from
     * arm_head), the unit of the oldest (NULL: none), the sequence they
     * belong to and the last of them that signals the timeline (0: none);
     * guarded by queue_lock (arm_len and armed_cmd read without it).
     * arm_depth_max: VKC_ARM_DEPTH. */
    vkc__armed *arm_q;
    uint32_t arm_head;
    atomic_uint arm_len;
    uint64_t arm_sig_value;
    uint32_t arm_depth_max;
    VkSubmitInfo *arm_sub; /* the arming submit's, VKC_ARM_DEPTH_MAX of each */
    vkc__arm_wait *arm_waits;
    _Atomic(vkc__cmd *) armed_cmd;
    /* The unit of the last submission (armed ones included): a sequence
     * arms only when its own submit followed its own (a repeat). */
    _Atomic(vkc__cmd *) last_submit;
    void *armed_owner;
    /* Test-only: a cancel leaves the predicate word alone, to prove that the
     * self-test catches a cancel that is not seen. */
    bool test_arm_blind;

    /* Objects not yet freed (live, or destroyed and still referenced),
     * freed with the context if the caller did not. Recursive: recovery
     * holds it while objects whose last reference goes unlink themselves. */
    pthread_mutex_t objects_lock;
    vkc__node buffers, kernels, seqs, fuses, images;
    /* The bound of every wait vkc makes on its own (vkc_finish, the
     * blocking transfers, a full batch ring, vkc_context_destroy). */
    uint64_t wait_timeout_ns;
    /* Resource sets whose last reference went, kept for reuse (object.c;
     * guarded by objects_lock). */
    struct vkc__rset *spare_sets;
    uint32_t spare_set_count;

    /* On-disk caches (kernel module). cache_dir starts as the desc's (or "")
     * and is resolved by vkc__kernel_init (env VKC_CACHE_DIR, XDG, HOME). */
    char cache_dir[512];
    bool disk_cache;
    /* A pipeline cache that belongs to the host: used, never saved or
     * destroyed by vkc. VK_NULL_HANDLE = vkc's own, persisted on disk. */
    VkPipelineCache host_pipeline_cache;

    /* Module state. */
    void *memory_state;
    void *image_state; /* image.c: the sampler cache */
    void *kernel_state;
    void *fuse_state; /* fuse.c: kernel cache by structure, live graphs */
    vkc__imm *imm;
    /* Set by dispatch's init: submit the open immediate-mode batch. The one
     * way a module below dispatch (memory's blocking calls) gets queued
     * immediate work ordered before its own; NULL until dispatch is up. */
    vkc_result (*flush_immediate)(vkc_context *ctx);
    /* Set by dispatch's init: buffer or kernel obj is being destroyed, so
     * the immediate batches kept for repeats that name it let go. */
    void (*forget_immediate)(vkc_context *ctx, const void *obj);
    uint32_t seq_ring; /* recorded copies each sequence uses in turn */
    bool seq_ring_env; /* VKC_SEQ_RING set it: long sequences keep it too */

    /* Profiling: on for every sequence (desc or VKC_PROFILE), the module's
     * hooks (NULL until its init) and state. */
    bool profiling;
    bool kernel_statistics;        /* pipelines capture executable statistics */
    bool calibrated_timestamps;    /* VK_EXT_calibrated_timestamps enabled */
    bool pipeline_executable_info; /* the feature is enabled */
    uint32_t profile_capacity;
    const vkc__profile_hooks *profile;
    void *profile_state;
    atomic_bool profile_waits; /* a profiled submission was made: time vkc_wait */

    vkc__stats stats;

    /* Embedding (interop.c). */
    /* Host semaphores the next submit waits on; guarded by queue_lock. */
    struct vkc__host_wait {
        VkSemaphore semaphore;
        uint64_t value;
    } host_waits[VKC_MAX_HOST_WAITS];
    uint32_t host_wait_count;

    /* Resident kernels (resident.c). Queues 1.. of the family, asked for
     * when the context owns its device and the family has them. */
    VkQueue resident_queues[VKC_MAX_RESIDENT_QUEUES];
    uint32_t resident_queue_count;
    void *resident_state;
    /* Items posted to resident kernels, and that count when the last
     * ordinary submit had waited for all of them: vkc__submit calls
     * resident_order only while they differ (one compare otherwise). */
    atomic_uint_fast64_t resident_posts;
    atomic_uint_fast64_t resident_ordered;
    /* Set by resident.c: wait for every posted item (before an ordinary
     * submit), and the wait / poll of a resident ticket (vkc_wait,
     * vkc_poll; timeout 0 with poll = true polls). */
    vkc_result (*resident_order)(vkc_context *ctx);
    vkc_result (*resident_wait)(vkc_context *ctx, vkc_ticket t, uint64_t timeout_ns, bool poll);
};

/* A resident kernel's ticket: this bit set in the value, the kernel's id in
 * the bits above VKC__TICKET_ID_SHIFT, the item number below. */
#define VKC__TICKET_RESIDENT (1ull << 63)
#define VKC__TICKET_ID_SHIFT 40

/* Before an ordinary submission: items posted to resident kernels complete
 * first (their buffers are unknown to vkc). */
static inline vkc_result vkc__resident_order(vkc_context *ctx)
{
    if (VKC_LIKELY(atomic_load_explicit(&ctx->resident_posts, memory_order_relaxed) ==
                   atomic_load_explicit(&ctx->resident_ordered, memory_order_relaxed)))
        return VKC_SUCCESS;
    return ctx->resident_order ? ctx->resident_order(ctx) : VKC_SUCCESS;
}

static inline vkc_result vkc__flush_immediate(vkc_context *ctx)
{
    return ctx->flush_immediate ? ctx->flush_immediate(ctx) : VKC_SUCCESS;
}

static inline void vkc__forget_immediate(vkc_context *ctx, const void *obj)
{
    if (ctx->forget_immediate)
        ctx->forget_immediate(ctx, obj);
}

/* ------------------------------------------------------------------------ */
/* Environment variables (env.c)                                            */
/* ------------------------------------------------------------------------ */

/* The value of name; NULL when unset or empty (empty means unset). */
const char *vkc__env_string(const char *name);
/* Warn that name=value is not recognised (expected says what would be)
 * and that fallback (the default, in words) is used instead. */
void vkc__env_ignored(vkc_context *ctx, const char *name, const char *value, const char *expected,
                      const char *fallback);
/* A flag (1/0, on/off, true/false, yes/no, any case) into *out. Returns
 * false, *out untouched, when unset or not recognised (with a warning that
 * fallback is used). */
bool vkc__env_flag(vkc_context *ctx, const char *name, const char *fallback, bool *out);
/* A decimal integer in [min, max] into *out; the same contract. */
bool vkc__env_uint(vkc_context *ctx, const char *name, uint32_t min, uint32_t max,
                   const char *fallback, uint32_t *out);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Record a failure (message, VkResult), log it, and return r. A
 * VK_ERROR_DEVICE_LOST latches the context as lost. ctx may be NULL. */
vkc_result vkc__fail(vkc_context *ctx, vkc_result r, VkResult vr, const char *file, int line,
                     const char *fmt, ...) VKC_PRINTF(6, 7);
/* A copy of the context's last error message (under its lock). */
void vkc__last_error_copy(vkc_context *ctx, char *out, size_t size);
/* Map a failed VkResult to a vkc_result and record it with "what". */
vkc_result vkc__vk_fail(vkc_context *ctx, VkResult vr, const char *what, const char *file,
                        int line);
vkc_result vkc__result_from_vk(VkResult vr);
void vkc__log(vkc_context *ctx, vkc_log_level level, vkc_log_id id, const char *fmt, ...)
    VKC_PRINTF(4, 5);

#define VKC_FAIL(ctx, r, ...) vkc__fail((ctx), (r), VK_SUCCESS, __FILE__, __LINE__, __VA_ARGS__)
#define VKC_RETURN_IF(cond, ctx, r, ...)                                                           \
    do {                                                                                           \
        if (VKC_UNLIKELY(cond))                                                                    \
            return VKC_FAIL(ctx, r, __VA_ARGS__);                                                  \
    } while (0)
/* vr is a VkResult expression; on failure return the mapped vkc_result. */
#define VKC_RETURN_IF_VK(ctx, vr_expr, what)                                                       \
    do {                                                                                           \
        VkResult vkc__vr = (vr_expr);                                                              \
        if (VKC_UNLIKELY(vkc__vr < 0))                                                             \
            return vkc__vk_fail((ctx), vkc__vr, (what), __FILE__, __LINE__);                       \
    } while (0)
/* Forward anything but VKC_SUCCESS (VKC_TIMEOUT too: the work is not done). */
#define VKC_FORWARD_DONE(expr)                                                                     \
    do {                                                                                           \
        vkc_result vkc__r = (expr);                                                                \
        if (VKC_UNLIKELY(vkc__r != VKC_SUCCESS))                                                   \
            return vkc__r;                                                                         \
    } while (0)
#define VKC_FORWARD(expr)                                                                          \
    do {                                                                                           \
        vkc_result vkc__r = (expr);                                                                \
        if (VKC_UNLIKELY(vkc__r < 0))                                                              \
            return vkc__r;                                                                         \
    } while (0)

/* Entry checks. A lost device answers every later call at once. */
#define VKC_CHECK_CONTEXT(ctx)                                                                     \
    do {                                                                                           \
        if (VKC_UNLIKELY(!(ctx) || (ctx)->magic != VKC_MAGIC_CONTEXT))                             \
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_context handle");         \
        if (VKC_UNLIKELY(atomic_load_explicit(&(ctx)->lost, memory_order_relaxed)))                \
            return VKC_FAIL((ctx), VKC_ERROR_DEVICE_LOST, "the device was lost earlier");          \
    } while (0)

/* Pieces of context creation shared with vkc_context_wrap (interop.c). */
vkc_context *vkc__context_alloc(const vkc_logger *logger, const VkAllocationCallbacks *a);
/* Fill info from a physical device (no device needed). Fails only when the
 * extension list cannot be read (out of host memory). */
vkc_result vkc__read_device_info(const vkc__itable *t, VkPhysicalDevice pd, vkc_device_info *info);
/* Whether a context profiles: the desc's toggle, else VKC_PROFILE set. */
bool vkc__profiling_wanted(vkc_toggle profile);
/* Resolve device-dependent defaults into ctx->features. */
void vkc__resolve_defaults(vkc_context *ctx, const vkc_context_desc *desc);
/* Module state on top of a device: context.c's module table, walked
 * forwards (pool, memory, image, kernel, fuse, dispatch, marker). */
vkc_result vkc__context_init_modules(vkc_context *ctx);
/* Device-loss recovery through the same table: on the old device, every
 * module's lose backwards, then the renewed modules' finish; on the new one,
 * forwards, each module's init (renewed ones) and rebuild. Caller holds
 * objects_lock. Stops at the first failure. */
vkc_result vkc__modules_lose(vkc_context *ctx);
vkc_result vkc__modules_rebuild(vkc_context *ctx);
/* Pieces of vkc_context_create (device.c): the instance with validation and
 * messenger, then the physical device, queue family and VkDevice. */
vkc_result vkc__create_instance(vkc_context *ctx, const vkc_context_desc *desc);
vkc_result vkc__create_device(vkc_context *ctx, const vkc_context_desc *desc);
/* The calling thread's message of its last failed context creation
 * (vkc_last_create_error). */
extern _Thread_local char vkc__create_error[1024];

/* Debug-utils object name (no-op without the extension). */
void vkc__set_name(vkc_context *ctx, VkObjectType type, uint64_t handle, const char *name);

#endif /* VKC_INTERNAL_H */
