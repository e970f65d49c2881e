/* Immediate mode's choice of a fresh batch's timeline signal: signalled and
 * quiet windows of flushes compared, and stretches on the verdict (see
 * signal_adapt.h).
 *
 * Owns: nothing (immediate.c holds the state, under its lock). Calls: the
 * context's counters, ctx->first_signals, the marker's state. */
#include "signal_adapt.h"

#define VKC_SIGNAL_ADAPT_CMDS 16u
#define VKC_SIGNAL_SPAN_MIN 256u
#define VKC_SIGNAL_SPAN_MAX 4096u
#define VKC_SIGNAL_NO_SAMPLE UINT64_MAX /* recorded into a new unit */
#define VKC_SIGNAL_TOO_BIG (UINT64_MAX - 1)
/* Units the pool keeps where quiet batches end: every fresh batch
 * signalling kept 2-7 on an H100 (job Z43), up to 4096 commands a batch. */
#define VKC_SIGNAL_KEEP_UNITS 8u
enum { VKC_SIGNAL_MEASURE, VKC_SIGNAL_MEASURE_QUIET, VKC_SIGNAL_STRETCH };

void vkc__signal_adapt_init(vkc_context *ctx, vkc__signal_adapt *a)
{
    *a = (vkc__signal_adapt){.span_signal = VKC_SIGNAL_SPAN_MIN, .span_quiet = VKC_SIGNAL_SPAN_MIN};
    /* On by default on a GPU: with the pool bounded (ea0a4c4), 24 passes on
     * an H100 (job Z43; BENCHMARKS.md, twenty-fourth session) took a fresh
     * batch of one from 44-45 us to 13.4-14.1 in NVIDIA's slow mode and
     * stayed within 0.97-1.01 of always signalling in the fast mode; the
     * slow mode's loss from 256 commands is in signal_adapt.h. Off on a CPU
     * device, whose signals cost nothing. */
    bool on = ctx->info.type != VKC_DEVICE_TYPE_CPU;
    vkc__env_flag(ctx, "VKC_SIGNAL_ADAPT", "the default: on, off on a CPU device", &on);
    a->on = on && ctx->features.timeline_semaphores && !ctx->first_signal_fixed;
    /* The slow mode's signal cost 40-45 us a fresh batch on an H100 (job
     * Z36); in the fast mode the marker of a quiet batch costs 0.4-1.6 us
     * (thirteenth session). */
    uint32_t us = 10;
    vkc__env_uint(ctx, "VKC_SIGNAL_SLOW_US", 0, 1000000, "the default: 10", &us);
    a->threshold_ns = (uint64_t)us * 1000u;
}

void vkc__signal_adapt_begin(vkc_context *ctx, uint32_t commands, vkc__signal_mark *mark)
{
    mark->small = commands <= VKC_SIGNAL_ADAPT_CMDS;
    mark->units = atomic_load_explicit(&ctx->stats.command_buffers, memory_order_relaxed);
    mark->repeats = atomic_load_explicit(&ctx->stats.immediate_repeats, memory_order_relaxed);
    mark->t0 = vkc__now_ns();
}

/* Fresh batches go quiet or signal from now on. Where quiet ones end, the
 * pool shrinks back to what signalled ones keep (vkc__pool_trim). */
static void vkc__signal_phase(vkc_context *ctx, vkc__signal_adapt *a, uint8_t phase, bool quiet)
{
    if (a->quiet && !quiet)
        vkc__pool_trim(ctx, VKC_SIGNAL_KEEP_UNITS);
    a->phase = phase;
    a->quiet = quiet;
    a->samples = a->tries = 0;
    atomic_store_explicit(&ctx->first_signals, !quiet, memory_order_relaxed);
}

void vkc__signal_adapt_restart(vkc_context *ctx, vkc__signal_adapt *a)
{
    if (!a->on)
        return;
    *a = (vkc__signal_adapt){.on = true,
                             .threshold_ns = a->threshold_ns,
                             .span_signal = VKC_SIGNAL_SPAN_MIN,
                             .span_quiet = VKC_SIGNAL_SPAN_MIN};
    vkc__signal_phase(ctx, a, VKC_SIGNAL_MEASURE, false);
}

/* The median of a window's samples (sorted in place). */
static uint64_t vkc__signal_median(uint64_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; ++i)
        for (uint32_t j = i; j && v[j - 1] > v[j]; --j) {
            const uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

/* A fresh batch was flushed: its flush took `took` ns, or it was
 * VKC_SIGNAL_NO_SAMPLE or VKC_SIGNAL_TOO_BIG. */
static void vkc__signal_count(vkc_context *ctx, vkc__signal_adapt *a, uint64_t took)
{
    if (a->quiet)
        VKC_STAT_ADD(ctx, immediate_quiet_batches, 1);
    if (a->phase == VKC_SIGNAL_STRETCH) {
        if (!--a->left)
            vkc__signal_phase(ctx, a, VKC_SIGNAL_MEASURE, false);
        return;
    }
    if (took < VKC_SIGNAL_TOO_BIG)
        a->sample[a->samples++] = took;
    if (a->samples < VKC_SIGNAL_WINDOW) {
        /* Too few small fresh batches to tell: they signal, as before. */
        if (took == VKC_SIGNAL_TOO_BIG && ++a->tries >= VKC_SIGNAL_WINDOW) {
            a->left = a->span_signal;
            vkc__signal_phase(ctx, a, VKC_SIGNAL_STRETCH, false);
        }
        return;
    }
    const uint64_t median = vkc__signal_median(a->sample, VKC_SIGNAL_WINDOW);
    if (a->phase == VKC_SIGNAL_MEASURE) {
        a->median_signal = median;
        vkc__signal_phase(ctx, a, VKC_SIGNAL_MEASURE_QUIET, true);
        return;
    }
    const bool quiet = (!a->threshold_ns || a->median_signal >= median + a->threshold_ns) &&
                       vkc__marker_on(ctx) &&
                       atomic_load_explicit(&ctx->marker_trusted, memory_order_relaxed);
    if (quiet) {
        a->left = a->span_quiet;
        a->span_quiet = VKC_MIN(2 * a->span_quiet, VKC_SIGNAL_SPAN_MAX);
        a->span_signal = VKC_SIGNAL_SPAN_MIN;
    } else {
        a->left = a->span_signal;
        a->span_signal = VKC_MIN(2 * a->span_signal, VKC_SIGNAL_SPAN_MAX);
        a->span_quiet = VKC_SIGNAL_SPAN_MIN;
    }
    vkc__signal_phase(ctx, a, VKC_SIGNAL_STRETCH, quiet);
}

void vkc__signal_adapt_end(vkc_context *ctx, vkc__signal_adapt *a, const vkc__signal_mark *mark)
{
    /* A repeat of a kept batch records nothing and is not counted. */
    if (atomic_load_explicit(&ctx->stats.immediate_repeats, memory_order_relaxed) != mark->repeats)
        return;
    const uint64_t took =
        !mark->small ? VKC_SIGNAL_TOO_BIG
        : atomic_load_explicit(&ctx->stats.command_buffers, memory_order_relaxed) != mark->units
            ? VKC_SIGNAL_NO_SAMPLE
            : vkc__now_ns() - mark->t0;
    vkc__signal_count(ctx, a, took);
}
