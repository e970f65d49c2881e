/* The insides of a sequence, shared by the files of the dispatch module
 * only (dispatch.c, record.c, seq_image.c, hazard.c, immediate.c): nothing
 * below dispatch sees them. */
#ifndef VKC_SEQ_H
#define VKC_SEQ_H

#include "vkc_internal.h"

#define VKC_ACC_R 1u
#define VKC_ACC_W 2u
/* Recorded copies of a sequence used in turn: re-submitting the command buffer
 * that was just submitted can stall in some drivers (measured on the H200),
 * a second copy avoids it. */
#define VKC_SEQ_RING 2
/* In VKC_WAIT_SPIN_MARKER mode a round trip can finish well before the
 * driver retires the command buffer, so more copies are kept in turn. */
#define VKC_SEQ_RING_MAX 8
/* Sequences of more commands than this keep one recorded copy (see
 * vkc__seq_ring_of in dispatch.c). */
#define VKC_SEQ_RING_LONG 1024u

typedef enum vkc__cmd_kind {
    VKC_CMD_DISPATCH,
    VKC_CMD_COPY,
    VKC_CMD_FILL,
    VKC_CMD_ACQUIRE, /* queue-family ownership: value = the other family */
    VKC_CMD_RELEASE,
    /* Images: value = index into vkc_seq.aux (copies, clears) or the other
     * family (acquire, release). */
    VKC_CMD_COPY_IMAGE,
    VKC_CMD_COPY_BUFFER_TO_IMAGE,
    VKC_CMD_COPY_IMAGE_TO_BUFFER,
    VKC_CMD_CLEAR_IMAGE,
    VKC_CMD_ACQUIRE_IMAGE,
    VKC_CMD_RELEASE_IMAGE,
} vkc__cmd_kind;

enum { VKC__USE_PLAIN = 0, VKC__USE_ACQUIRE, VKC__USE_RELEASE };

/* One buffer range or image subresource range a command touches (args of a
 * dispatch; src/dst of copies). A buffer use has buffer and the buffer
 * half; an image use has image and the image half (view for a kernel
 * binding); a sampler-only binding has neither pointer, only sampler. The
 * halves share storage: every dispatch appends one use per argument, so
 * the record stays at 48 bytes (a recording of 4,096 two-argument
 * dispatches writes 384 KiB of uses, not the 768 KiB of separate fields).
 * Layers fit 16 bits (vkc__resolve_shape refuses more). */
typedef struct vkc__use {
    vkc_buffer *buffer;
    vkc_image *image;
    union {
        struct {
            VkBuffer vk;
            uint64_t offset; /* inside vk */
            uint64_t size;
        };
        struct {
            VkImageView view;
            vkc_sampler *sampler;
            uint8_t mip, mips;
            uint16_t layer, layers;
        };
    };
    VkImageLayout layout; /* the layout the command needs */
    uint8_t access;       /* VKC_ACC_* */
    uint8_t op;           /* VKC__USE_*: ownership halves move no layout */
} vkc__use;
_Static_assert(sizeof(vkc__use) == 48, "vkc__use grew: every recorded argument pays for it");

/* The regions of image copies and clears. */
typedef union vkc__aux {
    VkImageCopy image;
    VkBufferImageCopy buffer;
    struct {
        VkClearColorValue value;
        VkImageSubresourceRange range;
    } clear;
} vkc__aux;

typedef struct vkc__command {
    uint8_t kind;
    bool images; /* some use is an image: the image rules apply (vkc__append) */
    uint32_t level;
    vkc_kernel *kernel;
    uint32_t groups[3];
    uint32_t use_first, use_count;
    uint32_t push_offset, push_size;
    uint32_t value; /* fill */
    uint32_t epoch; /* explicit barriers recorded before it */
    uint64_t count; /* elements of a count-sized dispatch; 0 for explicit groups */
    const char *label;
} vkc__command;

/* Hazard tracking: for each VkBuffer, its distinct ranges sorted by offset,
 * each with the highest levels of writes and reads so far, plus a summary
 * (extent, longest range, highest levels) that settles most queries without
 * looking at the ranges. Arrays are kept across vkc_seq_begin. */
typedef struct vkc__range {
    uint64_t off, end;
    int32_t wl, rl;
} vkc__range;

typedef struct vkc__bufrec {
    VkBuffer vk;
    uint64_t lo, hi, max_len;
    int32_t wl, rl;
    vkc__range *r;
    uint32_t n, cap;
} vkc__bufrec;

/* Hazard tracking of one image: per subresource (mip-major), the highest
 * levels of writes and reads, the level whose barrier last moved its
 * layout, and its layout after the commands so far; cur is the layout
 * while recording into Vulkan. */
typedef struct vkc__sub {
    int32_t wl, rl, tl;
    VkImageLayout layout, cur;
} vkc__sub;

typedef struct vkc__imgrec {
    vkc_image *image;
    uint32_t mips, layers;
    vkc__sub *sub;
    uint32_t sub_cap;
    bool used;     /* some command names it */
    bool released; /* a release ends its use in this sequence */
    bool cur_released;
} vkc__imgrec;

struct vkc_seq {
    vkc__obj obj; /* first: the handle is its header */
    char name[64];

    vkc__command *cmds;
    uint32_t cmd_count, cmd_cap;
    vkc__use *uses;
    uint32_t use_count, use_cap;
    uint8_t *push;
    uint32_t push_len, push_cap;
    vkc__bufrec *bufs;
    uint32_t buf_count, buf_cap, buf_last, buf_prev;
    uint32_t *order; /* emission order (by level) */
    uint32_t order_cap;
    vkc__imgrec *imgs;
    uint32_t img_count, img_cap;
    vkc__aux *aux;
    uint32_t aux_count, aux_cap;
    VkImageMemoryBarrier2 *ibar; /* scratch of vkc__record */
    uint32_t ibar_cap;

    uint32_t level_floor; /* explicit barriers raise it */
    uint32_t max_level;
    uint32_t dispatches;
    uint32_t explicit_barriers;
    /* A write to a buffer the host reads through its mapping: end with a
     * host barrier. map_epoch: the context's when it was worked out. */
    bool writes_mapped;
    uint32_t map_epoch;
    bool recording;
    bool lost;        /* recorded before a device loss: record again */
    vkc_result error; /* first recording error, latched */
    /* Its message, naming the call, for end and submit to restate; valid
     * while error < 0. call is the recording call under way. */
    char first_error[512];
    const char *call;

    /* Recorded copies; generation says whether a copy matches the commands. */
    vkc__cmd *units[VKC_SEQ_RING_MAX];
    uint64_t unit_gen[VKC_SEQ_RING_MAX];
    uint64_t gen;
    uint32_t next_unit;
    uint32_t ring; /* recorded copies used in turn: VKC_SEQ_RING, 1 for batches */
    /* An immediate batch for an idle queue: recorded without the completion
     * marker's dispatch (a last kernel that carries the epilogue keeps that:
     * vkc__record), which its submit adds only if the queue got busy
     * meanwhile. */
    bool marker_optional;
    /* An immediate batch's piece: its recording's first submit leaves the
     * timeline signal to the rest of its batch (vkc__cmd.signal_later). */
    bool signal_later;
    /* An immediate batch: buffer-only commands get their levels at
     * vkc_seq_end (vkc__relevel, all at once), so that an enqueue only
     * checks and copies its command; commands with images are tracked as
     * they come, since their rules are checked against what came before. */
    bool defer_levels;
    bool levels_pending; /* some command of this recording was deferred */
    /* vkc_seq_desc.completion_marker as given; vkc__record resolves
     * DEFAULT from the commands. */
    vkc_toggle marker_choice;
    uint64_t submits;
    bool profile; /* recorded with timestamps (vkc_seq_desc.profile, the context's) */

    /* Everything the commands name, retained once; each recorded copy
     * holds one reference on it. NULL until the first command. */
    vkc__rset *set;
    /* set's tag (vkc__rset_tag), UINT64_MAX while there is no set: an
     * object whose held field equals it is in the set already. */
    uint64_t hold_tag;
    /* vkc_seq_submit in progress: a second thread is refused, not raced. */
    atomic_bool busy;
    /* Armed submission (arm.c): its copies are recorded for it, and how
     * often an armed copy was cancelled since the last one opened (the
     * canceller counts; the sequence stops arming while it is high). */
    bool armable;
    atomic_uint arm_misses;
    uint32_t arm_quiet; /* submits left before arming is tried again */
    /* How many copies it keeps armed, opens in a row at that depth, the
     * last submit's time (vkc__seq_arm_next), and the units of one arming
     * (arm_depth_max of them, made on its first). */
    uint32_t arm_depth, arm_streak;
    uint64_t arm_last_ns;
    vkc__cmd **arm_units;
};

/* Growth helpers (only while a sequence grows; steady state reuses). */
static inline bool vkc__grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    uint32_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = vkc__realloc(*p, (size_t)n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

/* Keep the context's message of the failure just latched (dispatch.c). */
void vkc__seq_keep_error(vkc_seq *s);

static inline vkc_result vkc__latch(vkc_seq *s, vkc_result r)
{
    if (r < 0 && s->error >= 0) {
        s->error = r;
        vkc__seq_keep_error(s);
    }
    return r;
}

#define VKC_CHECK_SEQ(s)                                                                           \
    do {                                                                                           \
        if (VKC_UNLIKELY(!(s) || (s)->obj.magic != VKC_MAGIC_SEQ))                                 \
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_seq handle");             \
        VKC_CHECK_CONTEXT((s)->obj.ctx);                                                           \
    } while (0)

#define VKC_SEQ_FAIL(s, code, ...) vkc__latch((s), VKC_FAIL((s)->obj.ctx, (code), __VA_ARGS__))

static inline bool vkc__overlap(uint64_t a, uint64_t as, uint64_t b, uint64_t bs)
{
    return a < b + bs && b < a + as;
}

/* hazard.c: append a command whose uses are already at
 * s->uses[c->use_first..], at the level its hazards put it; compute every
 * level again (after an argument was replaced). */
vkc_result vkc__append(vkc_seq *s, vkc__command *c);
vkc_result vkc__relevel(vkc_seq *s);
/* A buffer it writes became the host's to read since s->map_epoch: work
 * out writes_mapped again and, where it changed, record again (at the
 * submit that called this, its own thread). */
void vkc__seq_host_reads(vkc_seq *s);
/* The hazard record of an image named by the sequence, or NULL. */
vkc__imgrec *vkc__find_img(vkc_seq *s, const vkc_image *img);
/* Subresource (mip, layer) of a record. */
static inline vkc__sub *vkc__sub_at(vkc__imgrec *r, uint32_t mip, uint32_t layer)
{
    return &r->sub[mip * r->layers + layer];
}

/* dispatch.c: fails (not latched) when the sequence has ended; call names
 * the recording call for a latched error's message. */
vkc_result vkc__check_recording(vkc_seq *s, const char *call);
/* dispatch.c: a buffer handle of this context; a range inside it (latched). */
vkc_result vkc__seq_check_buffer(vkc_seq *s, const vkc_buffer *b, const char *what);
vkc_result vkc__seq_check_range(vkc_seq *s, const vkc_buffer *b, uint64_t offset, uint64_t size,
                                const char *what);

/* dispatch.c: a queue family the device has (latched); append a command
 * with uses u[0..n) (its use_first / use_count are set here; nothing is
 * kept on failure). */
vkc_result vkc__seq_check_family(vkc_seq *s, uint32_t family, const char *what);
/* vkc__seq_hold for the recording path: an object the set holds already
 * (nearly always: a loop names the same kernel and buffers again) costs
 * one load and a compare. */
static inline vkc_result vkc__seq_keep(vkc_seq *s, vkc__obj *o)
{
    if (VKC_LIKELY(atomic_load_explicit(&o->held, memory_order_relaxed) == s->hold_tag))
        return VKC_SUCCESS;
    return vkc__seq_hold(s, o);
}
/* The set changed (new, cleared or let go): the tag follows it. */
static inline void vkc__seq_sync_tag(vkc_seq *s)
{
    s->hold_tag = s->set ? vkc__rset_tag(s->set) : UINT64_MAX;
}

vkc_result vkc__append_uses(vkc_seq *s, vkc__command *c, const vkc__use *u, uint32_t n);

/* dispatch.c: give the recording units back and mark the sequence to be
 * recorded again (device loss). */
void vkc__seq_lose(vkc_seq *s);
/* dispatch.c: give the recording units and the resource set back
 * (vkc_context_destroy, for the immediate-mode batches). */
void vkc__seq_let_go(vkc_seq *s);

/* record.c: record the commands, level by level, into a fresh unit. A
 * failure is one of resources, returned but not latched. */
vkc_result vkc__record(vkc_seq *s, bool plain, vkc__cmd **out);

/* arm.c: whether the sequence's copies can be armed (dispatches only, the
 * completion marker, no timestamps, a context whose self-test passed);
 * record.c wraps such a copy's dispatches in conditional rendering on the
 * unit's predicate word (false where no word is left). After a submit of
 * s (its ticket value; opened: it opened an armed copy) whose earlier work
 * was all complete (a round trip on an idle queue), arm its next copies:
 * as many as its depth wants, once half of them opened. */
bool vkc__seq_armable(const vkc_seq *s);
/* dispatch.c: recorded copies used in turn; make copy i match the commands. */
uint32_t vkc__seq_ring_of(const vkc_seq *s);
vkc_result vkc__seq_ensure_unit(vkc_seq *s, uint32_t i);
/* The unit's predicate word (false: none left, the copy is not armable),
 * then the block of its dispatches under it. */
bool vkc__arm_slot(vkc_seq *s, vkc__cmd *unit);
void vkc__arm_block(vkc_seq *s, vkc__cmd *unit);
void vkc__arm_end(vkc_seq *s, vkc__cmd *unit);
/* A copy that ends with the completion epilogue: the marker's dispatch
 * under the inverted predicate, so that a cancelled copy (its dispatches,
 * the epilogue's among them, skipped) still counts; outside the block,
 * after the first barrier (an opened copy's count then comes after its
 * last read of the word: a cancel may zero it once the count is seen). */
void vkc__arm_inverted_marker(vkc_seq *s, vkc__cmd *unit);
vkc_result vkc__seq_arm_next(vkc_seq *s, uint64_t value, bool opened);

#endif /* VKC_SEQ_H */
