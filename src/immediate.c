/* Immediate mode (vkc_dispatch, vkc_copy and the image copies, vkc_flush,
 * vkc_finish) and the dispatch module's lifecycle hooks.
 *
 * Immediate commands go into a ring of sequences (batches); a batch is
 * submitted when it holds batch_size commands, at a flush, or, when the GPU
 * is idle, once it has waited VKC_IMM_IDLE_NS. Being the top
 * of the dispatch module, this file also holds the module's hooks in the
 * context's module table: init (sequence ring depth, the batch ring, the
 * flush hook memory uses, the completion marker), drop, finish, lose,
 * rebuild.
 *
 * Owns: vkc__imm, ctx->flush_immediate. Calls: dispatch.c (sequences),
 * pool (waits), memory and kernel (the marker's buffer and kernel). */
#include "seq.h"
#include "signal_adapt.h"

#include "vkc_builtin_shaders.h"

#include <stdio.h>
#include <time.h>

/* Recorded batches kept for repeats: enough for a few batches that take
 * turns (a frame's flushes), few enough that a batch that repeats none of
 * them costs little to compare. */
#define VKC_IMM_KEPT 8

typedef struct vkc__imm_kept {
    vkc_seq *seq;   /* owned; recorded and holding what it names when live */
    uint64_t value; /* ticket of its last submit */
    uint64_t used;  /* m->clock at its last submit */
    bool live;
} vkc__imm_kept;

struct vkc__imm {
    pthread_mutex_t lock;
    uint32_t count; /* batches in the ring */
    uint32_t cur;
    vkc_seq **batches;
    uint64_t *values;  /* ticket of each batch's last submit */
    uint32_t pending;  /* commands in the open batch */
    bool fixed;        /* VKC_IMM_FIXED=1 (experiments): flush at batch_size only */
    bool marker;       /* VKC_IMM_MARKER=1 (experiments): every batch carries the marker */
    bool mark_repeats; /* kept batches carry it (VKC_IMM_MARKER=0: not; vkc__imm_unmarked) */
    uint32_t pieces;   /* at most this many pieces (vkc__imm_pieces), at most count */
    /* The driver's slow mode (NVIDIA's, at times for minutes), where
     * pieces lose. Where pieces are on, each fresh batch's submit is
     * timed; one that took slow_ns or more (VKC_IMM_SLOW_US) sends the rest
     * whole and the next batches whole until one takes less. Only slow
     * submits show here, not the rest of the slow mode's price (see
     * vkc__dispatch_init). */
    uint64_t slow_ns;
    bool slow;
    /* Whether a fresh batch's submit signals the timeline, chosen from what
     * the driver does (VKC_SIGNAL_ADAPT; signal_adapt.c). */
    vkc__signal_adapt adapt;
    uint64_t opened_ns; /* when the open batch got its first command */
    uint64_t hold_ns;   /* VKC_IMM_HOLD_NS: vkc__imm_held's pace per command */
    /* Batches kept recorded after their submit (not let go), so that a
     * batch of the same commands submits one of them again instead of
     * recording its own: up to VKC_IMM_KEPT, the least recently used goes
     * first. An entry's seq is its own, outside the ring: a batch that is
     * kept trades places with an entry's seq (live or spare). VKC_IMM_REUSE=0
     * (experiments) keeps none. forget: a buffer or kernel was destroyed
     * while the lock was held (the next holder lets every kept batch go). */
    vkc__imm_kept kept[VKC_IMM_KEPT];
    uint64_t clock; /* stamps kept[].used */
    bool reuse;
    atomic_bool forget;
    /* The tickets of the last `count` submits, batches and repeats, oldest
     * at flight_next: at most that many are in flight. */
    uint64_t *flights;
    uint32_t flight_next;
};

static bool vkc__imm_queue_idle(vkc_context *ctx);

/* Caller holds m->lock. Kept batch e lets go of what it names (its
 * objects go once it completes, as every other batch's do); its seq stays,
 * a spare. */
static void vkc__imm_drop(vkc__imm_kept *e)
{
    if (e->live)
        vkc__seq_let_go(e->seq);
    e->live = false;
}

/* Caller holds m->lock. Every kept batch lets go. */
static void vkc__imm_drop_kept(vkc__imm *m)
{
    atomic_store_explicit(&m->forget, false, memory_order_relaxed);
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i)
        vkc__imm_drop(&m->kept[i]);
}

/* A batch that can be submitted again as recorded: dispatches and copies
 * on buffers only (images move layouts, which depend on what came before). */
static bool vkc__imm_reusable(const vkc_seq *s)
{
    if (!s->cmd_count || s->img_count || s->lost)
        return false;
    for (uint32_t i = 0; i < s->cmd_count; ++i)
        if ((s->cmds[i].kind != VKC_CMD_DISPATCH && s->cmds[i].kind != VKC_CMD_COPY) ||
            s->cmds[i].images)
            return false;
    return true;
}

/* Whether the first n commands of open batch b are exactly kept batch a's
 * commands (n = b->cmd_count: the whole batch): kinds, kernels, grids,
 * constants and every argument's or copy's buffer, range and access.
 * Levels are not compared: they follow from the rest. b's levels (and
 * image table) may not be computed yet, so its images show in its
 * commands' flags. Constants and buffers first: batches of one shape
 * differ there. (Commands are stored in order, their uses and constants
 * too: a's push_len bytes are b's first n commands' if the commands
 * match.) */
static bool vkc__imm_same(const vkc_seq *a, const vkc_seq *b, uint32_t n)
{
    const bool whole = n == b->cmd_count;
    const uint32_t uses = whole ? b->use_count : b->cmds[n].use_first;
    if (a->cmd_count != n || a->use_count != uses || b->img_count ||
        (whole ? a->push_len != b->push_len || a->dispatches != b->dispatches
               : a->push_len > b->push_len))
        return false;
    if (a->push_len && memcmp(a->push, b->push, a->push_len))
        return false;
    for (uint32_t i = 0; i < a->use_count; ++i) {
        const vkc__use *x = &a->uses[i], *y = &b->uses[i];
        if (!y->buffer || x->buffer != y->buffer || x->vk != y->vk || x->offset != y->offset ||
            x->size != y->size || x->access != y->access || x->op != y->op)
            return false;
    }
    for (uint32_t i = 0; i < a->cmd_count; ++i) {
        const vkc__command *x = &a->cmds[i], *y = &b->cmds[i];
        if (x->kind != y->kind || y->images || x->kernel != y->kernel || x->count != y->count ||
            memcmp(x->groups, y->groups, sizeof(x->groups)) || x->use_first != y->use_first ||
            x->use_count != y->use_count || x->push_offset != y->push_offset ||
            x->push_size != y->push_size || x->epoch != y->epoch || x->label != y->label ||
            x->value != y->value)
            return false;
    }
    return true;
}

/* Whether batch s names obj (a buffer or a kernel). */
static bool vkc__imm_names(const vkc_seq *s, const void *obj)
{
    for (uint32_t i = 0; i < s->use_count; ++i)
        if ((const void *)s->uses[i].buffer == obj)
            return true;
    for (uint32_t i = 0; i < s->cmd_count; ++i)
        if ((const void *)s->cmds[i].kernel == obj)
            return true;
    return false;
}

/* Caller holds m->lock. The live kept batch of the same commands as the
 * first n of s, or NULL. */
static vkc__imm_kept *vkc__imm_find_first(vkc__imm *m, const vkc_seq *s, uint32_t n)
{
    if (!m->reuse)
        return NULL;
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i)
        if (m->kept[i].live && vkc__imm_same(m->kept[i].seq, s, n))
            return &m->kept[i];
    return NULL;
}

/* Caller holds m->lock. The live kept batch of the same commands as s, or
 * NULL. */
static vkc__imm_kept *vkc__imm_find(vkc__imm *m, const vkc_seq *s)
{
    return vkc__imm_find_first(m, s, s->cmd_count);
}

/* Whether kept batch k was recorded without the completion marker (for an
 * idle queue, its last dispatch a kernel from SPIR-V or a copy: no
 * epilogue): submitted again onto an idle queue, it would complete on the
 * timeline only, its submit signalling every time. */
static bool vkc__imm_unmarked(const vkc__imm_kept *k)
{
    const vkc__cmd *u = k->seq->units[0];
    return u && !u->has_marker && u->marker_optional;
}

/* Caller holds m->lock and m->reuse is on (every entry has its seq). The
 * entry a newly kept batch takes: a spare, else the least recently used
 * (which lets go). */
static vkc__imm_kept *vkc__imm_victim(vkc__imm *m)
{
    vkc__imm_kept *v = &m->kept[0];
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i) {
        vkc__imm_kept *e = &m->kept[i];
        if (!e->live)
            return e;
        if (e->used < v->used)
            v = e;
    }
    vkc__imm_drop(v);
    return v;
}

/* Caller holds m->lock. Room for one more submit in flight: the oldest of
 * the last `count` has completed. */
static vkc_result vkc__imm_flight(vkc_context *ctx, vkc__imm *m)
{
    const uint64_t oldest = m->flights[m->flight_next];
    return oldest ? vkc__wait_results_bounded(ctx, oldest, "immediate mode (all batches in flight)")
                  : VKC_SUCCESS;
}

/* Caller holds m->lock. Submit t went: count it in flight. */
static void vkc__imm_flown(vkc__imm *m, uint64_t value)
{
    m->flights[m->flight_next] = value;
    m->flight_next = (m->flight_next + 1) % m->count;
}

/* Caller holds m->lock. Empty slot j's batch to take commands, once its
 * previous batch is done (its commands are replaced, and its units go back
 * to the pool only then anyway). */
static vkc_result vkc__imm_slot_begin(vkc_context *ctx, vkc__imm *m, uint32_t j)
{
    if (m->values[j])
        VKC_FORWARD_DONE(
            vkc__wait_results_bounded(ctx, m->values[j], "immediate mode (a ring slot's batch)"));
    return vkc_seq_begin(m->batches[j]);
}

/* Caller holds m->lock and has made room in flight (vkc__imm_flight).
 * Submit slot j's batch: where it repeats kept batch k, k again (no
 * recording; the slot's batch empties and *used stays false); else
 * recorded, and kept where it can be. busy: work submitted before it is
 * still running (else the queue is asked). piece: a piece of a batch whose
 * rest is submitted right after it, which signals the timeline for both.
 * marked: recorded with the completion marker whatever the queue does. */
static vkc_result vkc__imm_send(vkc_context *ctx, vkc__imm *m, uint32_t j, vkc__imm_kept *k,
                                bool busy, bool piece, bool marked, bool *used)
{
    vkc_seq *s = m->batches[j];
    vkc_ticket t = {0};
    *used = !k;
    if (k) {
        /* The open batch's copy of the commands goes (and what it holds). */
        vkc_result r = vkc_seq_begin(s);
        if (r >= 0)
            r = vkc_seq_submit(k->seq, &t);
        if (r < 0) {
            vkc__imm_drop(k);
            return r;
        }
        VKC_STAT_ADD(ctx, immediate_repeats, 1);
        k->value = t.value;
        k->used = ++m->clock;
        vkc__imm_flown(m, t.value);
        return VKC_SUCCESS;
    }
    /* A batch for an idle queue goes without the completion marker: a
     * second, dependent dispatch the GPU would run after the batch's own
     * (what raw Vulkan's record + submit of the same batch does not have);
     * its ticket completes on the timeline, which its submit signals. */
    s->marker_optional = !m->marker && !marked && !m->adapt.quiet && vkc__marker_on(ctx) && !busy &&
                         vkc__imm_queue_idle(ctx);
    /* A piece leaves the timeline signal that a fresh recording's submit
     * makes to its rest: one signal per batch, as whole. In NVIDIA's slow
     * mode each signal cost 17-40 us (raw-seqpoll+timeline against
     * raw-seqpoll); its pieces' signals made a batch of 16 take 124 us
     * against 106 whole (BENCHMARKS.md, 2026-12-06, job Z5). */
    s->signal_later = piece;
    vkc_result r = vkc_seq_end(s);
    const uint64_t t0 = m->pieces > 1 && r >= 0 ? vkc__now_ns() : 0;
    if (r >= 0)
        r = vkc_seq_submit(s, &t);
    m->values[j] = t.value;
    if (r >= 0) {
        if (t0) {
            m->slow = vkc__now_ns() - t0 >= m->slow_ns;
            if (m->slow)
                VKC_STAT_ADD(ctx, immediate_slow_submits, 1);
        }
        vkc__imm_flown(m, t.value);
        /* This batch is kept for a repeat where it can be: it trades places
         * with a kept entry's seq, which the slot waits for before it takes
         * commands. Else its unit goes to the pool now with the one
         * reference on what the batch names, so those objects go as soon as
         * the batch completes, not when its slot comes round again. */
        vkc__imm_kept *v = m->reuse && vkc__imm_reusable(s) ? vkc__imm_victim(m) : NULL;
        if (v) {
            m->batches[j] = v->seq;
            m->values[j] = v->value;
            *v = (vkc__imm_kept){.seq = s, .value = t.value, .used = ++m->clock, .live = true};
        } else {
            vkc__seq_let_go(s);
        }
    }
    return r;
}

/* The smallest piece: a piece's submit costs the host about what
 * recording a few dispatches does (on an H100, 5 us; a batch of 16 in
 * pieces of 1, 2, 4 and 9 took 75 us, in 5 and 11 64 us, whole 67 us). */
#define VKC_IMM_PIECE_MIN 4u

/* Caller holds m->lock. The size of open batch s's first piece where it
 * goes in pieces (vkc__imm_pieces), else 0: buffer-only dispatches and
 * copies (levelled all at once at its end, so that its commands move as
 * they are), no explicit barrier, room for a first piece and a rest twice
 * its size, a first piece that repeats no kept batch, and the last fresh
 * batch's submit not slow (m->slow). A batch whose first piece was kept
 * went in pieces before: this time it goes whole (recorded once more, then
 * kept and repeated whole: one submit, where its pieces would take one
 * each). */
static uint32_t vkc__imm_first_piece(vkc__imm *m, const vkc_seq *s)
{
    if (m->pieces < 2 || m->slow || s->explicit_barriers || !vkc__imm_reusable(s))
        return 0;
    uint32_t c = s->cmd_count / ((1u << m->pieces) - 1u);
    if (c < VKC_IMM_PIECE_MIN)
        c = VKC_IMM_PIECE_MIN;
    if (s->cmd_count < 3 * c || vkc__imm_find_first(m, s, c))
        return 0;
    return c;
}

/* Move the first c commands of batch s into the empty, open batch t, which
 * holds what they name (s holds it too until it completes). Nothing in s
 * changes on failure. */
static vkc_result vkc__imm_take(vkc_seq *t, vkc_seq *s, uint32_t c)
{
    for (uint32_t i = 0; i < c; ++i) {
        const vkc__command *x = &s->cmds[i];
        vkc__command y = *x;
        if (x->kernel)
            VKC_FORWARD(vkc__seq_keep(t, &x->kernel->obj));
        if (x->push_size) {
            if (!vkc__grow((void **)&t->push, &t->push_cap, t->push_len + x->push_size, 1))
                return VKC_SEQ_FAIL(t, VKC_ERROR_OUT_OF_HOST_MEMORY, "push constants");
            memcpy(t->push + t->push_len, s->push + x->push_offset, x->push_size);
            y.push_offset = t->push_len;
            t->push_len += x->push_size;
        }
        VKC_FORWARD(vkc__append_uses(t, &y, &s->uses[x->use_first], x->use_count));
        t->dispatches += x->kind == VKC_CMD_DISPATCH;
    }
    /* s keeps commands c.. (uses and constants are stored in command order) */
    const uint32_t n = s->cmd_count, u0 = s->cmds[c].use_first;
    uint32_t p0 = s->push_len;
    for (uint32_t i = c; i < n && p0 == s->push_len; ++i)
        if (s->cmds[i].push_size)
            p0 = s->cmds[i].push_offset;
    for (uint32_t i = 0; i < c; ++i)
        s->dispatches -= s->cmds[i].kind == VKC_CMD_DISPATCH;
    memmove(s->cmds, s->cmds + c, (size_t)(n - c) * sizeof(*s->cmds));
    memmove(s->uses, s->uses + u0, (size_t)(s->use_count - u0) * sizeof(*s->uses));
    memmove(s->push, s->push + p0, s->push_len - p0);
    for (uint32_t i = 0; i < n - c; ++i) {
        s->cmds[i].use_first -= u0;
        s->cmds[i].push_offset -= s->cmds[i].push_size ? p0 : 0;
    }
    s->cmd_count = n - c;
    s->use_count -= u0;
    s->push_len -= p0;
    s->gen++;
    return VKC_SUCCESS;
}

/* Caller holds m->lock and has made room in flight; the open batch (slot
 * cur) goes in pieces, the first of c commands (vkc__imm_first_piece). Its
 * first commands go ahead in pieces from the slots after it, each twice
 * the one before while what is left is at least twice the piece, so that
 * the GPU starts on them while the rest is recorded; what is left goes last, from its own slot
 * (the caller's vkc__imm_send). For m->pieces = 4 and n commands, from
 * n = 60: n/15, 2n/15, 4n/15 and the rest. A piece that cannot be made
 * leaves its commands in the batch; after a piece whose submit was slow
 * the rest goes whole. */
static vkc_result vkc__imm_pieces(vkc_context *ctx, vkc__imm *m, uint32_t c)
{
    vkc_seq *s = m->batches[m->cur];
    for (uint32_t p = 1; p < m->pieces && s->cmd_count >= 3 * c && !m->slow; ++p, c *= 2) {
        const uint32_t j = (m->cur + p) % m->count;
        vkc_seq *t = m->batches[j];
        VKC_FORWARD(vkc__imm_slot_begin(ctx, m, j));
        vkc_result r = vkc__imm_take(t, s, c);
        if (r < 0) {
            t->error = VKC_SUCCESS;
            vkc_seq_begin(t);
            return r == VKC_ERROR_OUT_OF_HOST_MEMORY ? VKC_SUCCESS : r; /* the rest goes whole */
        }
        bool used;
        VKC_FORWARD(vkc__imm_send(ctx, m, j, vkc__imm_find(m, t), p > 1, true, false, &used));
        if (p == 1)
            VKC_STAT_ADD(ctx, immediate_splits, 1);
        VKC_FORWARD(vkc__imm_flight(ctx, m)); /* room for the next piece or the rest */
    }
    return VKC_SUCCESS;
}

/* Caller holds m->lock. Submit the open batch and move to the next slot;
 * where it repeats a kept batch, submit that one again instead (no
 * recording) and keep the slot; where it goes to an idle queue, maybe in
 * pieces (vkc__imm_pieces). */
static vkc_result vkc__imm_submit_body(vkc_context *ctx, vkc__imm *m)
{
    vkc_seq *s = m->batches[m->cur];
    if (atomic_load_explicit(&m->forget, memory_order_relaxed))
        vkc__imm_drop_kept(m);
    vkc_result r = vkc__imm_flight(ctx, m);
    if (r != VKC_SUCCESS)
        return r; /* still open: a later flush submits it */
    m->pending = 0;
    vkc__imm_kept *k = vkc__imm_find(m, s);
    bool busy = false, used;
    /* A batch that repeats one kept without the marker is recorded once
     * more, with it, whole, and kept in its place: from then on it repeats
     * without a timeline signal. A fresh recording's first submit signals
     * anyway (for the pool), so only repeats gain from the marker, and a
     * batch that never repeats does not pay its dispatch. In NVIDIA's slow
     * mode each signal cost 17-40 us: batches of 1, 16 and 64 (a kernel
     * from SPIR-V) that repeated without the marker took 54.2, 92.6 and
     * 218.8 us on an H100, with it 13.9, 52.1 and 178.7; in the fast mode
     * the marker's dispatch cost +0.4-0.6 us at K=1 there, +1.1-1.6 on the
     * H200, still below raw record + submit (BENCHMARKS.md, 2026-12-06,
     * thirteenth session). */
    const bool remark = k && m->mark_repeats && vkc__imm_unmarked(k) && vkc__marker_on(ctx);
    if (remark) {
        vkc__imm_drop(k); /* its entry is the spare the new recording takes */
        k = NULL;
    }
    const uint32_t c = k || remark ? 0 : vkc__imm_first_piece(m, s);
    if (c && vkc__imm_queue_idle(ctx)) {
        r = vkc__imm_pieces(ctx, m, c);
        if (r != VKC_SUCCESS) {
            m->pending = s->cmd_count; /* still open: a later flush submits the rest */
            return r;
        }
        k = vkc__imm_find(m, s); /* the rest may repeat a kept piece */
        busy = true;             /* the pieces before it run */
    }
    r = vkc__imm_send(ctx, m, m->cur, k, busy, false, remark, &used);
    if (used)
        m->cur = (m->cur + 1) % m->count;
    return r;
}

/* Caller holds m->lock. vkc__imm_submit_body, its flush timed where the
 * signal is chosen (signal_adapt.c). */
static vkc_result vkc__imm_submit_locked(vkc_context *ctx, vkc__imm *m)
{
    if (!m->adapt.on)
        return vkc__imm_submit_body(ctx, m);
    vkc__signal_mark mark;
    vkc__signal_adapt_begin(ctx, m->batches[m->cur]->cmd_count, &mark);
    const vkc_result r = vkc__imm_submit_body(ctx, m);
    if (r == VKC_SUCCESS)
        vkc__signal_adapt_end(ctx, &m->adapt, &mark);
    return r;
}

/* Caller holds m->lock. Make the current slot ready to take commands. */
static vkc_result vkc__imm_open_locked(vkc_context *ctx, vkc__imm *m)
{
    if (m->pending)
        return VKC_SUCCESS;
    if (atomic_load_explicit(&m->forget, memory_order_relaxed))
        vkc__imm_drop_kept(m);
    return vkc__imm_slot_begin(ctx, m, m->cur);
}

/* Submit the open batch if it holds anything. */
static vkc_result vkc__imm_flush(vkc_context *ctx, vkc_ticket *out)
{
    if (out)
        memset(out, 0, sizeof(*out));
    vkc__imm *m = ctx->imm;
    if (!m)
        return VKC_SUCCESS;
    pthread_mutex_lock(&m->lock);
    vkc_result r = m->pending ? vkc__imm_submit_locked(ctx, m) : VKC_SUCCESS;
    pthread_mutex_unlock(&m->lock);
    if (out && r >= 0) {
        out->value = vkc__submitted_value(ctx);
        out->context_id = out->value ? ctx->id : 0;
    }
    return r;
}

/* ctx->flush_immediate: memory's blocking transfers call it through the
 * context, so that memory never calls up into dispatch. */
static vkc_result vkc__imm_flush_hook(vkc_context *ctx)
{
    return vkc__imm_flush(ctx, NULL);
}

/* ctx->forget_immediate: buffer or kernel obj is being destroyed. The kept
 * batches that name it let go at once where the lock is free; else
 * (another thread is in immediate mode, or this one is, inside vkc) the
 * next holder lets every kept batch go. */
static void vkc__imm_forget_hook(vkc_context *ctx, const void *obj)
{
    vkc__imm *m = ctx->imm;
    if (!m)
        return;
    if (pthread_mutex_trylock(&m->lock) != 0) {
        atomic_store_explicit(&m->forget, true, memory_order_relaxed);
        return;
    }
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i)
        if (m->kept[i].live && vkc__imm_names(m->kept[i].seq, obj))
            vkc__imm_drop(&m->kept[i]);
    pthread_mutex_unlock(&m->lock);
}

/* An open batch older than this goes to an idle GPU (at an enqueue that
 * brings its count to a power of two: vkc__imm_due). A burst of enqueues
 * (60-90 ns each on the H200's host) followed by a flush stays one submission,
 * as fast as recording it by hand; work that trickles in while the GPU has
 * nothing to do does not wait for batch_size or a flush. */
#define VKC_IMM_IDLE_NS 10000u

static uint64_t vkc__imm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Nothing submitted is still running (vkc__queue_idle). */
static bool vkc__imm_queue_idle(vkc_context *ctx)
{
    return vkc__queue_idle(ctx, vkc__submitted_value(ctx));
}

/* Caller holds m->lock; the open batch holds m->pending commands and has
 * waited `age` ns for an idle GPU. It stays open (held) where its commands
 * are the start of a kept batch, or all of one, and came in as a burst: at
 * most hold_ns apart on average (VKC_IMM_HOLD_NS, default 1 us; 0: never
 * held). Cut there, it would go as one batch and the rest of the burst as
 * another, where whole it repeats the kept batch: one submit, no recording.
 * A burst cut each time where a kept batch ends is held there too, so that
 * it is recorded whole once and repeated whole from then on; one that ends
 * there goes at its flush. In NVIDIA's slow mode, bursts of 256 dispatches
 * taking turns with another 256 were cut at their 128th, at 10 us of age,
 * most of the time: 653 of 789 went as fresh recordings in pieces
 * (vkc-immediate-alternate K=256, 1.155 x a CUDA stream on an H100, job
 * Z26). Held, that row took 0.70-0.72 of its time never held in the slow
 * mode and 0.98-1.03 in the fast mode (H100, jobs Z33 and Z34; BENCHMARKS.md,
 * twenty-first session). Work that trickles in, further apart, goes as
 * before. The comparison runs only where the batch would otherwise go, at
 * a power-of-two count. */
static bool vkc__imm_held(vkc__imm *m, uint64_t age)
{
    if (!m->reuse || age >= (uint64_t)m->pending * m->hold_ns)
        return false;
    const vkc_seq *s = m->batches[m->cur];
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i) {
        const vkc_seq *k = m->kept[i].seq;
        if (m->kept[i].live && k->cmd_count >= s->cmd_count && vkc__imm_same(s, k, s->cmd_count))
            return true;
    }
    return false;
}

/* Caller holds m->lock; the open batch holds m->pending commands. A busy GPU
 * gets it at batch_size commands (or a flush), an idle one once it has
 * waited VKC_IMM_IDLE_NS, so batches grow only while the GPU has work. The
 * age is looked at when the batch's count reaches a power of two (work
 * that trickles in goes at its second command, or by the time its count
 * doubles), not at every command: a clock read costs 44 ns on the H200's
 * host (tsc, docs/h200/2026-12-04/N), half of the rest of an enqueue. */
static bool vkc__imm_due(vkc_context *ctx, vkc__imm *m)
{
    if (m->pending >= ctx->features.batch_size)
        return true;
    if (m->fixed || (m->pending & (m->pending - 1)))
        return false;
    if (m->pending == 1) {
        m->opened_ns = vkc__imm_now_ns();
        return false;
    }
    const uint64_t age = vkc__imm_now_ns() - m->opened_ns;
    return age >= VKC_IMM_IDLE_NS && vkc__imm_queue_idle(ctx) && !vkc__imm_held(m, age);
}

/* One immediate command other than a dispatch: what to record into the
 * open batch. (A dispatch, the hot path, is passed as its own desc: no
 * struct to fill.) */
typedef struct vkc__imm_op {
    uint8_t kind; /* VKC_CMD_COPY, _COPY_IMAGE, _COPY_BUFFER_TO_IMAGE, _TO_BUFFER */
    vkc_buffer *buf, *buf2;
    uint64_t offset, offset2, size;
    vkc_image *img, *img2;
    const vkc_image_region *region, *region2;
} vkc__imm_op;

static vkc_result vkc__imm_record(vkc_seq *s, const vkc__imm_op *o)
{
    switch (o->kind) {
    case VKC_CMD_COPY:
        return vkc_seq_copy(s, o->buf, o->offset, o->buf2, o->offset2, o->size);
    case VKC_CMD_COPY_IMAGE:
        return vkc_seq_copy_image(s, o->img, o->region, o->img2, o->region2);
    case VKC_CMD_COPY_BUFFER_TO_IMAGE:
        return vkc_seq_copy_buffer_to_image(s, o->img, o->region, o->buf, o->offset);
    default:
        return vkc_seq_copy_image_to_buffer(s, o->buf, o->offset, o->img, o->region);
    }
}

/* Record dispatch d, or else command o, into the open batch. */
static vkc_result vkc__imm_enqueue(vkc_context *ctx, const vkc_dispatch_desc *d,
                                   const vkc__imm_op *o)
{
    vkc__imm *m = ctx->imm;
    pthread_mutex_lock(&m->lock);
    vkc_result r = vkc__imm_open_locked(ctx, m);
    if (r == VKC_SUCCESS) {
        vkc_seq *s = m->batches[m->cur];
        r = d ? vkc_seq_dispatch(s, d) : vkc__imm_record(s, o);
        if (r < 0) {
            /* A rejected command must not poison the batch for the next one. */
            s->error = VKC_SUCCESS;
        } else {
            m->pending = s->cmd_count;
            if (vkc__imm_due(ctx, m))
                r = vkc__imm_submit_locked(ctx, m);
        }
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

vkc_result vkc_dispatch(vkc_context *ctx, const vkc_dispatch_desc *d)
{
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!d, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_dispatch: desc is NULL");
    return vkc__imm_enqueue(ctx, d, NULL);
}

vkc_result vkc_copy(vkc_context *ctx, vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                    uint64_t src_offset, uint64_t size)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_enqueue(ctx, NULL,
                            &(vkc__imm_op){.kind = VKC_CMD_COPY,
                                           .buf = dst,
                                           .offset = dst_offset,
                                           .buf2 = src,
                                           .offset2 = src_offset,
                                           .size = size});
}

vkc_result vkc_copy_image(vkc_context *ctx, vkc_image *dst, const vkc_image_region *dst_region,
                          vkc_image *src, const vkc_image_region *src_region)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_enqueue(ctx, NULL,
                            &(vkc__imm_op){.kind = VKC_CMD_COPY_IMAGE,
                                           .img = dst,
                                           .region = dst_region,
                                           .img2 = src,
                                           .region2 = src_region});
}

vkc_result vkc_copy_buffer_to_image(vkc_context *ctx, vkc_image *dst,
                                    const vkc_image_region *region, vkc_buffer *src,
                                    uint64_t src_offset)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_enqueue(ctx, NULL,
                            &(vkc__imm_op){.kind = VKC_CMD_COPY_BUFFER_TO_IMAGE,
                                           .img = dst,
                                           .region = region,
                                           .buf = src,
                                           .offset = src_offset});
}

vkc_result vkc_copy_image_to_buffer(vkc_context *ctx, vkc_buffer *dst, uint64_t dst_offset,
                                    vkc_image *src, const vkc_image_region *region)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_enqueue(ctx, NULL,
                            &(vkc__imm_op){.kind = VKC_CMD_COPY_IMAGE_TO_BUFFER,
                                           .img = src,
                                           .region = region,
                                           .buf = dst,
                                           .offset = dst_offset});
}

vkc_result vkc_flush(vkc_context *ctx, vkc_ticket *out)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__imm_flush(ctx, out);
}

vkc_result vkc_finish(vkc_context *ctx)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__drain(ctx);
}

vkc_result vkc_finish_timeout(vkc_context *ctx, uint64_t timeout_ns)
{
    VKC_CHECK_CONTEXT(ctx);
    return vkc__drain_timeout(ctx, timeout_ns);
}

/* ---- module hooks ---------------------------------------------------------------------------- */

/* One batch of the ring or of the kept entries, owned by the module. */
static vkc_result vkc__imm_batch_create(vkc_context *ctx, vkc_seq **out)
{
    vkc_seq_desc d = {"vkc immediate batch"};
    VKC_FORWARD(vkc_seq_create(ctx, &d, out));
    (*out)->ring = 1; /* recorded once per submit: one copy is enough */
    (*out)->defer_levels = true;
    /* Owned by the module, not by the caller's list of live objects. */
    pthread_mutex_lock(&ctx->objects_lock);
    vkc__list_remove(&(*out)->obj.node);
    pthread_mutex_unlock(&ctx->objects_lock);
    return VKC_SUCCESS;
}

vkc_result vkc__dispatch_init(vkc_context *ctx)
{
    vkc__imm *m = vkc__calloc(1, sizeof(*m));
    if (!m)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "immediate mode");
    pthread_mutex_init(&m->lock, NULL);
    ctx->imm = m;
    ctx->flush_immediate = vkc__imm_flush_hook;
    ctx->forget_immediate = vkc__imm_forget_hook;
    bool reuse = true; /* for experiments: every batch recorded, none kept */
    m->reuse = !vkc__env_flag(ctx, "VKC_IMM_REUSE", "the default: on", &reuse) || reuse;
    bool fixed = false; /* for experiments: the fixed-count flush only */
    m->fixed = vkc__env_flag(ctx, "VKC_IMM_FIXED", "the default: off", &fixed) && fixed;
    /* The completion marker: on repeated batches (vkc__imm_submit_locked)
     * by default; VKC_IMM_MARKER=1 on every batch, as before batches for an
     * idle queue went without it; =0 on none of those (experiments). */
    bool marker = false;
    const bool set =
        vkc__env_flag(ctx, "VKC_IMM_MARKER", "the default: on repeated batches", &marker);
    m->marker = set && marker;
    m->mark_repeats = !set || marker;
    m->count = ctx->features.batches_in_flight;
    /* Pieces pay where the GPU runs beside the host: on an H100, batches
     * recorded every time took 12-23% less from 64 to 1024 dispatches
     * (BENCHMARKS.md, 2026-12-06). On a CPU device (lavapipe) the device's
     * threads and the recording share the cores and each piece's submit
     * costs: a batch of 16 took 163 us in pieces, 119 us whole (vkc-bench
     * batch, 2 cores). VKC_IMM_SPLIT sets the count (1: whole). */
    m->pieces = ctx->info.type == VKC_DEVICE_TYPE_CPU ? 1 : 4;
    vkc__env_uint(ctx, "VKC_IMM_SPLIT", 1, 8, "the default: 4, 1 on a CPU device", &m->pieces);
    if (m->pieces > m->count)
        m->pieces = m->count; /* each piece but the rest takes a slot of its own */
    /* A fresh batch's submit took about 5 us on an H100 in the driver's
     * fast mode. In its slow mode 1-60% of those of batches of one took
     * 15 us or more, and under 5% of those of batches in pieces, which
     * lost 14-36% there all the same: in the one slow pass measured,
     * pieces that left their timeline signals to the rest stopped losing,
     * so most of the price seems to be in those signals (BENCHMARKS.md,
     * 2026-12-06, jobs Z5 and Z6; that change is in since e397f26). */
    uint32_t slow_us = 15;
    vkc__env_uint(ctx, "VKC_IMM_SLOW_US", 0, 1000000, "the default: 15", &slow_us);
    m->slow_ns = (uint64_t)slow_us * 1000u;
    vkc__signal_adapt_init(ctx, &m->adapt);
    uint32_t hold_ns = 1000; /* a burst: 60-90 ns an enqueue on the H200's host */
    vkc__env_uint(ctx, "VKC_IMM_HOLD_NS", 0, 10000000, "the default: 1000", &hold_ns);
    m->hold_ns = hold_ns;
    m->batches = vkc__calloc(m->count, sizeof(*m->batches));
    m->values = vkc__calloc(m->count, sizeof(*m->values));
    m->flights = vkc__calloc(m->count, sizeof(*m->flights));
    if (!m->batches || !m->values || !m->flights)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "immediate mode ring");
    for (uint32_t i = 0; i < m->count; ++i)
        VKC_FORWARD(vkc__imm_batch_create(ctx, &m->batches[i]));
    /* The kept entries' seqs now, so that no enqueue allocates one. */
    for (uint32_t i = 0; m->reuse && i < VKC_IMM_KEPT; ++i)
        VKC_FORWARD(vkc__imm_batch_create(ctx, &m->kept[i].seq));
    return VKC_SUCCESS;
}

void vkc__dispatch_finish(vkc_context *ctx)
{
    vkc__imm *m = ctx->imm;
    if (!m)
        return;
    for (uint32_t i = 0; m->batches && i < m->count; ++i)
        vkc_seq_destroy(m->batches[i]);
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i)
        vkc_seq_destroy(m->kept[i].seq);
    vkc__free(m->batches);
    vkc__free(m->values);
    vkc__free(m->flights);
    pthread_mutex_destroy(&m->lock);
    vkc__free(m);
    ctx->imm = NULL;
    ctx->flush_immediate = NULL;
    ctx->forget_immediate = NULL;
}

void vkc__dispatch_drop(vkc_context *ctx)
{
    for (vkc__node *n = ctx->seqs.next, *next; n && n != &ctx->seqs; n = next) {
        next = n->next; /* a destroy frees this one only */
        vkc_seq_destroy((vkc_seq *)VKC_OBJ_OF(n));
    }
    /* The batches let go of what they recorded before the objects go; the
     * ring itself goes with the module (vkc__dispatch_finish). */
    vkc__imm *m = ctx->imm;
    for (uint32_t i = 0; m && i < VKC_IMM_KEPT; ++i)
        vkc__imm_drop(&m->kept[i]);
    for (uint32_t i = 0; m && m->batches && i < m->count; ++i)
        if (m->batches[i])
            vkc__seq_let_go(m->batches[i]);
}

vkc_result vkc__dispatch_lose(vkc_context *ctx)
{
    for (vkc__node *n = ctx->seqs.next; n != &ctx->seqs; n = n->next)
        vkc__seq_lose((vkc_seq *)VKC_OBJ_OF(n));
    vkc__imm *m = ctx->imm;
    /* Kept batches were recorded before the loss: never submitted again. */
    for (uint32_t i = 0; m && i < VKC_IMM_KEPT; ++i) {
        if (m->kept[i].seq)
            vkc__seq_lose(m->kept[i].seq);
        m->kept[i].live = false;
    }
    for (uint32_t i = 0; m && m->batches && i < m->count; ++i)
        if (m->batches[i])
            vkc__seq_lose(m->batches[i]);
    return VKC_SUCCESS;
}

vkc_result vkc__dispatch_rebuild(vkc_context *ctx)
{
    vkc__imm *m = ctx->imm;
    if (!m)
        return VKC_SUCCESS;
    /* No m->lock: vkc_context_recover runs alone on its context (vkc.h,
     * thread safety) and holds objects_lock, which an enqueue takes inside
     * m->lock (a new resource set): taking m->lock here inverts that order. */
    m->cur = 0;
    m->pending = 0;
    m->flight_next = 0;
    vkc__signal_adapt_restart(ctx, &m->adapt);
    vkc_result r = VKC_SUCCESS;
    for (uint32_t i = 0; i < m->count; ++i) {
        m->values[i] = m->flights[i] = 0;
        if (r >= 0)
            r = vkc_seq_begin(m->batches[i]);
    }
    for (uint32_t i = 0; i < VKC_IMM_KEPT; ++i) {
        m->kept[i].value = 0;
        if (r >= 0 && m->kept[i].seq)
            r = vkc_seq_begin(m->kept[i].seq);
    }
    return r;
}

/* Recorded copies each sequence uses in turn, once the wait mode is known. */
static void vkc__seq_ring_resolve(vkc_context *ctx)
{
    ctx->seq_ring = vkc__marker_on(ctx) ? VKC_SEQ_RING_MAX : VKC_SEQ_RING;
    char fallback[48];
    snprintf(fallback, sizeof(fallback), "the default: %u", ctx->seq_ring);
    /* for experiments */
    ctx->seq_ring_env =
        vkc__env_uint(ctx, "VKC_SEQ_RING", 1, VKC_SEQ_RING_MAX, fallback, &ctx->seq_ring);
}

/* VKC_MARKER_FORM (experiments): "lean", "atomic" or both, comma-separated. */
static void vkc__marker_form(vkc_context *ctx)
{
    static const struct {
        const char *name;
        bool lean, atomic;
    } forms[] = {{"lean", true, false},
                 {"atomic", false, true},
                 {"atomic,lean", true, true},
                 {"lean,atomic", true, true}};
    const char *form = vkc__env_string("VKC_MARKER_FORM");
    if (!form)
        return;
    for (size_t i = 0; i < VKC_ARRAY_COUNT(forms); ++i) {
        if (strcmp(form, forms[i].name) == 0) {
            ctx->marker_lean = forms[i].lean;
            ctx->marker_atomic = forms[i].atomic;
            return;
        }
    }
    vkc__env_ignored(ctx, "VKC_MARKER_FORM", form, "lean, atomic or atomic,lean",
                     "the default form");
}

/* Back to the timeline: the marker is not used on this context. */
static void vkc__marker_off(vkc_context *ctx, const char *why)
{
    atomic_store(&ctx->marker_on, false);
    ctx->features.wait_mode = VKC_WAIT_SPIN_THEN_BLOCK;
    snprintf(ctx->wait_reason, sizeof(ctx->wait_reason), "%s", why);
}

/* The completion marker (VKC_WAIT_SPIN_MARKER): pool.c records and reads it;
 * it is made here, where buffers and kernels can be created, and checked on
 * the device before it is trusted (the default wait mode uses it only then;
 * an explicit request that fails the check falls back the same way, with a
 * warning). */
vkc_result vkc__marker_init(vkc_context *ctx)
{
    if (ctx->features.wait_mode != VKC_WAIT_SPIN_MARKER) {
        vkc__seq_ring_resolve(ctx);
        return VKC_SUCCESS;
    }
    const vkc_log_level level = ctx->wait_auto ? VKC_LOG_INFO : VKC_LOG_WARN;
    if (!ctx->features.timeline_semaphores) {
        /* The fence fallback keeps its own completion tracking. */
        vkc__marker_off(ctx, "no timeline semaphores");
        vkc__log(ctx, level, VKC_LOG_ID_GENERAL,
                 "VKC_WAIT_SPIN_MARKER needs timeline semaphores; using spin-then-block");
        vkc__seq_ring_resolve(ctx);
        return VKC_SUCCESS;
    }
    VKC_FORWARD(vkc_buffer_create(
        ctx, &(vkc_buffer_desc){.size = 64, .memory = VKC_MEMORY_READBACK, .name = "vkc marker"},
        &ctx->marker_buf));
    ctx->marker = vkc_buffer_map(ctx->marker_buf);
    if (!ctx->marker || !ctx->marker_buf->host_coherent) {
        vkc__marker_off(ctx, "no host-visible coherent memory for the marker");
        vkc__log(ctx, level, VKC_LOG_ID_GENERAL,
                 "VKC_WAIT_SPIN_MARKER needs host-visible coherent memory; using spin-then-block");
        vkc__seq_ring_resolve(ctx);
        return VKC_SUCCESS;
    }
    /* The count, then (byte 64) the completion epilogue's arrival word. */
    VKC_FORWARD(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 128, .name = "vkc marker count"},
                                  &ctx->marker_count));
    VKC_FORWARD(vkc_kernel_create(ctx,
                                  &(vkc_kernel_desc){.spirv = vkc_builtin_marker,
                                                     .spirv_size = vkc_builtin_marker_size,
                                                     .name = "vkc completion marker"},
                                  &ctx->marker_kernel));
    vkc__marker_form(ctx);
    /* The count equals the timeline value from here on. */
    VKC_FORWARD(vkc__marker_reset(ctx));
    bool ok = false;
    VKC_FORWARD(vkc__marker_check(ctx, &ok));
    if (ok) {
        if (ctx->wait_auto)
            snprintf(ctx->wait_reason, sizeof(ctx->wait_reason), "self-test passed");
    } else {
        ctx->features.wait_mode = VKC_WAIT_SPIN_THEN_BLOCK;
        vkc__log(ctx, level, VKC_LOG_ID_GENERAL,
                 "completion marker not used (%s); waits use the timeline", ctx->wait_reason);
    }
    vkc__seq_ring_resolve(ctx);
    return VKC_SUCCESS;
}

/* After device-loss recovery the marker's buffers have new memory: map the
 * host one again and start both counts where the new timeline is. */
vkc_result vkc__marker_rebuild(vkc_context *ctx)
{
    if (!ctx->marker_buf || !vkc__marker_on(ctx))
        return VKC_SUCCESS;
    ctx->marker = vkc_buffer_map(ctx->marker_buf);
    if (!ctx->marker) {
        vkc__marker_off(ctx, "marker memory lost in recovery");
        return VKC_SUCCESS;
    }
    return vkc__marker_reset(ctx);
}
