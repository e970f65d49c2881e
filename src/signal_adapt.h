/* Immediate mode's choice of a fresh batch's timeline signal
 * (VKC_SIGNAL_ADAPT, on by default on a GPU): shared by immediate.c and
 * signal_adapt.c only. */
#ifndef VKC_SIGNAL_ADAPT_H
#define VKC_SIGNAL_ADAPT_H

#include "vkc_internal.h"

#define VKC_SIGNAL_WINDOW 16u

/* In NVIDIA's slow mode each fresh batch's timeline signal cost 40-45 us (a
 * batch of one recorded every time: 60.8 us with it, 15.0 without, on an
 * H100, job Z36; in its fast mode 14.6 with, 15.1 without). The flush of a
 * fresh batch of at most VKC_SIGNAL_ADAPT_CMDS commands is a sample (not
 * one recorded into a new unit: that times the unit's creation). A window
 * of VKC_SIGNAL_WINDOW samples that signal is set against the next
 * window's, quiet: each batch (and piece) with the completion marker, its
 * submit signalling nothing (ctx->first_signals off; the pool asks for a
 * signal when it needs units back). Where the quiet median is threshold_ns
 * or more below the signalled one, the next `left` fresh batches go quiet,
 * else they signal; then the two windows are measured again, and the same
 * verdict in a row doubles the stretch, up to VKC_SIGNAL_SPAN_MAX.
 * Adjacent windows of the same work differ in the signal only: recording
 * time, the host's and the GPU's speed cancel out. The first forms
 * (absolute thresholds over a window) went quiet in the fast mode and on
 * lavapipe. This one took a fresh batch of one from 63.3 to 14.8 us in an
 * H100's slow mode and stayed within 0.93-1.07 in the fast mode, but lost
 * 6-14% from 256 commands in its one slow pass (job Z39; BENCHMARKS.md,
 * twenty-second session). With both rows on one device and the pool
 * bounded (pool.c, VKC_ASK_PENDING), 24 passes (job Z43, twenty-fourth
 * session) gave 0.30-0.31 at one command and 0.66-0.67 at 16 in the slow
 * mode, 0.97-1.01 everywhere in the fast mode, but still 1.08-1.09 at 256
 * and 1.02-1.03 at 1024 in the slow mode: on by default on a GPU since.
 * Where quiet batches end, the pool shrinks back to 8 units
 * (vkc__pool_trim). In the fast mode that still left 8 units going round
 * where always signalling kept 2-6, and 1.003-1.057 of its time (job Z44,
 * twenty-fifth session); so the pool now retires a unit the marker has
 * seen run before it pops a free one (vkc__pending_seen_locked), which
 * keeps the units in use few. Neither has met the slow mode on a GPU. The
 * second changed nothing measurable in the fast mode: new against old
 * 0.99-1.00 from 16 commands up, ranges of about 20% below (eight passes
 * each on an H100, job Z45, twenty-seventh session). Under validation the
 * layer's time joins the signalled window's. Guarded by the immediate
 * mode's lock. */
typedef struct vkc__signal_adapt {
    bool on;
    bool quiet;    /* fresh batches carry the marker, their submits no signal */
    uint8_t phase; /* measuring the signalled window, the quiet one, or a stretch */
    uint32_t left; /* fresh batches left in the stretch */
    uint32_t span_signal, span_quiet;
    uint32_t samples, tries;
    uint64_t threshold_ns; /* VKC_SIGNAL_SLOW_US; 0 (tests): every verdict quiet */
    uint64_t sample[VKC_SIGNAL_WINDOW];
    uint64_t median_signal;
} vkc__signal_adapt;

/* What a flush looked like before it ran. */
typedef struct vkc__signal_mark {
    uint64_t t0, units, repeats;
    bool small;
} vkc__signal_mark;

/* VKC_SIGNAL_ADAPT and VKC_SIGNAL_SLOW_US; on only with timelines and
 * where VKC_FIRST_SIGNAL is not set. */
void vkc__signal_adapt_init(vkc_context *ctx, vkc__signal_adapt *a);
/* After device-loss recovery: measure again from the signalled window, as
 * a new context does (the pool's new state signals every first submit). */
void vkc__signal_adapt_restart(vkc_context *ctx, vkc__signal_adapt *a);
/* Before a flush of an open batch of `commands` commands. */
void vkc__signal_adapt_begin(vkc_context *ctx, uint32_t commands, vkc__signal_mark *mark);
/* After it went: where it was a fresh batch (not a repeat of a kept one),
 * it counts, and may be a sample. */
void vkc__signal_adapt_end(vkc_context *ctx, vkc__signal_adapt *a, const vkc__signal_mark *mark);

#endif
