/* The insides of a sequence, shared by the files of the dispatch module
 * only (dispatch.c, hazard.c, immediate.c): nothing below dispatch sees
 * them. */
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

typedef enum vkc__cmd_kind {
    VKC_CMD_DISPATCH,
    VKC_CMD_COPY,
    VKC_CMD_FILL,
    VKC_CMD_ACQUIRE, /* queue-family ownership: value = the other family */
    VKC_CMD_RELEASE,
} vkc__cmd_kind;

/* One buffer range a command touches (args of a dispatch; src/dst of copies). */
typedef struct vkc__use {
    vkc_buffer *buffer;
    VkBuffer vk;
    uint64_t offset; /* inside vk */
    uint64_t size;
    uint32_t access;
} vkc__use;

typedef struct vkc__command {
    uint8_t kind;
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
    uint32_t buf_count, buf_cap, buf_last;
    uint32_t *order; /* emission order (by level) */
    uint32_t order_cap;

    uint32_t level_floor; /* explicit barriers raise it */
    uint32_t max_level;
    uint32_t dispatches;
    uint32_t explicit_barriers;
    bool writes_mapped; /* a write to host-visible memory: end with a host barrier */
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
    uint64_t submits;

    /* Everything the commands name, retained once; each recorded copy
     * holds one reference on it. NULL until the first command. */
    vkc__rset *set;
    /* vkc_seq_submit in progress: a second thread is refused, not raced. */
    atomic_bool busy;
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

/* dispatch.c: give the recording units back and mark the sequence to be
 * recorded again (device loss). */
void vkc__seq_lose(vkc_seq *s);
/* dispatch.c: give the recording units and the resource set back
 * (vkc_context_destroy, for the immediate-mode batches). */
void vkc__seq_let_go(vkc_seq *s);

#endif /* VKC_SEQ_H */
