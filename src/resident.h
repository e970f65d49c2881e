/* The insides of the resident module, shared by its files only
 * (resident.c, resident_launch.c): the ring's word layout (shared with
 * shaders/include/vkc_resident.glsl), vkc_resident and the ring's accessors. */
#ifndef VKC_RESIDENT_H
#define VKC_RESIDENT_H

#include "vkc_internal.h"

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define VKC_MAGIC_RESIDENT 0x564b4352u /* "VKCR" */

/* Header words (vkc_resident.glsl: VKC_RH_*). */
enum {
    RH_STATE = 0,
    RH_ALIVE = 1,
    RH_BASE = 2,
    RH_SPINS = 3,
    RH_STOP = 4,
    RH_SLOTS = 5,
    RH_STRIDE = 6,
    RH_TAKEN = 7,
    RH_LAUNCH = 8,
    RH_PROBE = 9,
    RH_CLAIM = 10,
    RH_ACK_LO = 11, /* the host-memory ack array's device address; 0: acks in the ring */
    RH_ACK_HI = 12,
    RH_WORDS = 16,
};
/* Slot words (VKC_RS_*). */
enum { RS_SEQ = 0, RS_ACK = 1, RS_COUNT = 2, RS_SIZE = 3, RS_PAYLOAD = 4 };
#define R_STATE_RUNNING 1u
#define R_STATE_STOPPED 2u
/* RH_ALIVE's value from a kernel that writes its acks to host memory. */
#define R_ALIVE_HOST_ACK 3u
/* Words per slot in the host-memory ack array: one 64-byte line each, so
 * the host's spin on one ack shares no line with the GPU's write of another. */
#define VKC__ACK_STRIDE 16u
/* How long after a probe's ack shows in the ring its copy in host memory may
 * take to show (the self-test of the host placement). */
#define VKC__ACK_BOUND_NS 50000000ull

/* Resident kernels alive in one context (ticket ids index the table). */
#define VKC__RESIDENT_TABLE 64
#define VKC__RESIDENT_MAX_PAYLOAD 4096u
/* The include's push-constant block: mode, slot, two spare words. */
#define VKC__RESIDENT_PUSH 16u
/* Widest grid where the device does not report its SM count: small enough
 * to stay co-resident on anything that runs resident kernels at all. */
#define VKC__RESIDENT_GRID_UNKNOWN 8u
#define VKC__RESIDENT_GRID_MAX 64u
/* Polls of the self-test's launch before it ends: below lavapipe's loop
 * limit (65535), and tens of milliseconds on a GPU. */
#define VKC__PROBE_POLLS 50000u

typedef struct vkc__rstate {
    pthread_mutex_t lock; /* the table, the queues in use, next_id */
    vkc_resident *table[VKC__RESIDENT_TABLE];
    uint32_t next_id;
    uint32_t queues_used; /* bit i: ctx->resident_queues[i] */
    bool share_queue;     /* test hook */
    bool hide_host_ack;   /* test hook: the self-test never sees a host-memory ack */
} vkc__rstate;

struct vkc_resident {
    uint32_t magic;
    vkc_context *ctx;
    uint32_t id;
    char name[64];
    vkc_kernel *kernel;
    bool own_kernel;
    vkc_arg *args; /* [0] is the ring; then the caller's */
    uint32_t arg_count;
    uint32_t slots, payload_size, stride; /* stride in words */
    uint32_t grid;                        /* workgroups */
    uint64_t idle_ns, timeout_ns;
    uint64_t coarse_ns; /* the coarse clock's tick, when post's idle check uses it; 0: not */

    VkBuffer vkbuf;
    VkDeviceMemory mem;
    uint32_t mem_type;
    bool device_local;
    volatile uint32_t *ring;
    vkc_buffer *ring_buf; /* vkbuf wrapped, for the fallback's dispatches */

    /* Acks in host memory (VKC_RESIDENT_ACK=host, desc.ack): the kernel
     * writes them through a device address, so the host's spin reads its
     * own memory, not the BAR across the bus. */
    bool host_ack; /* in use (asked for and the self-test passed) */
    bool ack_bad;  /* the self-test found it unusable (ack_reason says why) */
    VkBuffer ack_vkbuf;
    VkDeviceMemory ack_mem;
    uint32_t ack_mem_type;
    volatile uint32_t *ack; /* VKC__ACK_STRIDE words per slot */
    char ack_reason[256];

    bool resident;
    char reason[256];
    VkQueue queue;
    int32_t queue_slot; /* index into ctx->resident_queues; -1: vkc's queue */
    uint32_t queue_index;
    VkCommandPool cpool;
    VkCommandBuffer cb;
    VkFence fence;
    VkDescriptorPool dpool;
    /* A launch was submitted and its fence not yet waited (written under
     * launch_lock; post reads it without). */
    atomic_bool launched;
    uint32_t idle_polls;
    uint32_t launch_polls; /* bound of one launch (CPU drivers), 0: none */
    double poll_ns;

    vkc_seq **seqs;        /* fallback: one per slot (slot 0's also checks the args) */
    vkc_ticket *slot_tick; /* fallback: the last submit of each slot */

    pthread_mutex_t post_lock;      /* next_seq, the slots */
    pthread_mutex_t launch_lock;    /* launches, the fence */
    atomic_uint_fast64_t next_seq;  /* the next item's number, from 1; written under post_lock */
    atomic_uint_fast64_t done_hint; /* every item up to it is acknowledged */
    atomic_uint_fast64_t last_post_ns;
    atomic_uint_fast64_t launches;
    uint32_t probes; /* items the self-test posted */
    bool stopped;    /* vkc_resident_stop */
    bool lost;
};

/* The host's payload stores reach a write-combined BAR mapping in any
 * order: the fence drains them before the doorbell, and again after it so
 * the doorbell leaves at once. On x86 sfence is all that takes (ordinary
 * stores are ordered already, and no load after it needs ordering: a stale
 * ack read only spins once more); an mfence (seq_cst) would add ~30-100
 * cycles per fence to each post. */
static inline void vkc__store_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_sfence();
    atomic_signal_fence(memory_order_seq_cst);
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* CLOCK_MONOTONIC_COARSE (Linux) and its tick; 0 where there is none. */
static inline uint64_t vkc__coarse_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#else
    return 0;
#endif
}

static inline uint64_t vkc__coarse_tick_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) == 0)
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
    return 0;
}

static inline volatile uint32_t *vkc__slot(vkc_resident *r, uint64_t seq)
{
    return r->ring + RH_WORDS + (size_t)(seq % r->slots) * r->stride;
}

/* The word the kernel acknowledges item seq in: its slot's, or its copy in
 * host memory. */
static inline volatile uint32_t *vkc__ack_word(vkc_resident *r, uint64_t seq)
{
    return r->host_ack ? r->ack + (size_t)(seq % r->slots) * VKC__ACK_STRIDE
                       : vkc__slot(r, seq) + RS_ACK;
}

/* Item seq (already posted) is acknowledged. A slot is reused only after its
 * item's ack, so an ack at or after seq (32-bit wrap-around order) means
 * done. */
static inline bool vkc__acked(vkc_resident *r, uint64_t seq)
{
    if (seq <= atomic_load_explicit(&r->done_hint, memory_order_acquire))
        return true;
    uint32_t a = *vkc__ack_word(r, seq);
    if ((int32_t)(a - (uint32_t)seq) < 0)
        return false;
    atomic_thread_fence(memory_order_acquire);
    uint64_t cur = atomic_load_explicit(&r->done_hint, memory_order_relaxed);
    while (seq > cur && !atomic_compare_exchange_weak(&r->done_hint, &cur, seq)) {
    }
    return true;
}

/* From now on the kernel acks in the ring (the header's address cleared;
 * the host-memory acks stay allocated until the Vulkan objects go). */
static inline void vkc__resident_ack_in_ring(vkc_resident *r)
{
    r->host_ack = false;
    if (r->ring) {
        r->ring[RH_ACK_LO] = 0;
        r->ring[RH_ACK_HI] = 0;
    }
}

/* resident_launch.c */
/* The launch's command pool, buffer, fence and descriptor set, and its
 * recording (the kernel with the ring bound). */
vkc_result vkc__resident_record(vkc_resident *r);
/* How long a launch may take to end once it has no reason to run. */
uint64_t vkc__resident_end_bound(const vkc_resident *r);
/* Wait (bounded) for the current launch's fence. Caller holds launch_lock. */
vkc_result vkc__resident_join(vkc_resident *r, uint64_t timeout_ns);
/* Relaunch when the kernel has ended while items may wait. */
vkc_result vkc__resident_revive(vkc_resident *r);
/* Spin until item seq is acknowledged; relaunch an ended kernel on the way.
 * timeout 0 with poll: one look (VKC_NOT_READY). */
vkc_result vkc__resident_wait_item(vkc_resident *r, uint64_t seq, uint64_t timeout_ns, bool poll);
/* Write an item into its slot, the sequence word (the doorbell) last. */
void vkc__resident_write_item(vkc_resident *r, uint64_t seq, const void *payload, uint32_t size);
/* The self-test: *ok false with r->reason set when the resident path cannot
 * be used. */
vkc_result vkc__resident_selftest(vkc_resident *r, bool *ok);

#endif
