/* Profiling: GPU timestamps per dispatch, copy and barrier group, CPU times
 * per submission, the GPU clock placed on the host's, per-label statistics,
 * utilisation. The Chrome trace and its SVG picture are profile_export.c's;
 * kernel statistics and occupancy are profile_kernel.c's.
 *
 * The recorder (record.c) writes the timestamps into the recording unit's
 * query pool (pool.c owns it and recycles it with the unit); this module
 * reads them once the submission has completed, through the hooks it sets
 * in ctx->profile (pool.c calls them for profiled units only).
 *
 * Owns: the profile state (ctx->profile_state), its events and labels.
 * Calls: pool (one-shot units and waits, for the correlation fallback), the
 * context (errors); reads the recording units' queries and spans. */
#include "profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static atomic_bool vkc__no_calibration;
static atomic_uint vkc__traces_written;

void vkc__profile_force_correlation(bool on)
{
    atomic_store(&vkc__no_calibration, on);
}

static const char *const vkc__kind_names[VKC_PROFILE_KIND_COUNT_] = {
    "none",      "submission", "dispatch", "copy",   "fill",
    "ownership", "barrier",    "record",   "submit", "wait"};

const char *vkc_profile_kind_string(vkc_profile_kind kind)
{
    return (unsigned)kind < VKC_PROFILE_KIND_COUNT_ ? vkc__kind_names[kind] : "?";
}

uint64_t vkc__percentile(const uint64_t *sorted, size_t n, double p)
{
    if (!n)
        return 0;
    if (p <= 0)
        return sorted[0];
    double rank = ceil(p / 100.0 * (double)n);
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    return sorted[i < n ? i : n - 1];
}

/* ---- state ------------------------------------------------------------------------------- */

/* Caller holds the lock. Latch the first failure; the work goes on. */
static void vkc__prof_status(vkc__pstate *st, vkc_result r, const char *msg)
{
    if (st->status < 0)
        return;
    st->status = r;
    snprintf(st->message, sizeof(st->message), "%s", msg);
}

uint64_t vkc__label_hash(const char *s)
{
    return vkc__hash64(VKC_HASH_SEED, s, strlen(s));
}

/* Caller holds the lock. The label's index; UINT32_MAX when out of memory. */
static uint32_t vkc__intern(vkc__pstate *st, const char *s)
{
    if (st->label_count * 2 >= st->slot_cap) {
        uint32_t cap = st->slot_cap ? st->slot_cap * 2 : 64;
        uint32_t *slots = vkc__calloc(cap, sizeof(*slots));
        if (!slots)
            return UINT32_MAX;
        for (uint32_t i = 0; i < st->label_count; ++i) {
            uint32_t h = (uint32_t)vkc__label_hash(st->labels[i]) & (cap - 1);
            while (slots[h])
                h = (h + 1) & (cap - 1);
            slots[h] = i + 1;
        }
        vkc__free(st->slots);
        st->slots = slots;
        st->slot_cap = cap;
    }
    uint32_t h = (uint32_t)vkc__label_hash(s) & (st->slot_cap - 1);
    for (; st->slots[h]; h = (h + 1) & (st->slot_cap - 1))
        if (!strcmp(st->labels[st->slots[h] - 1], s))
            return st->slots[h] - 1;
    if (st->label_count == st->label_cap) {
        uint32_t cap = st->label_cap ? st->label_cap * 2 : 64;
        char **l = vkc__realloc(st->labels, cap * sizeof(*l));
        if (!l)
            return UINT32_MAX;
        st->labels = l;
        st->label_cap = cap;
    }
    char *copy = vkc__strdup(s);
    if (!copy)
        return UINT32_MAX;
    st->labels[st->label_count] = copy;
    st->slots[h] = ++st->label_count;
    return st->label_count - 1;
}

/* Caller holds the lock. */
static void vkc__push(vkc__pstate *st, uint8_t kind, const char *label, uint64_t t0, uint64_t t1,
                      uint64_t value, uint32_t thread)
{
    if (VKC_UNLIKELY(!st->ev)) {
        /* A context without profiling of its own makes the buffer at its
         * first profiled sequence's first results. */
        st->ev = vkc__malloc((size_t)st->cap * sizeof(*st->ev));
        if (!st->ev) {
            vkc__prof_status(st, VKC_ERROR_OUT_OF_HOST_MEMORY,
                             "out of host memory for the "
                             "profile buffer");
            st->dropped++;
            return;
        }
    }
    if (st->count == st->cap) {
        if (!st->dropped) {
            char msg[160];
            snprintf(msg, sizeof(msg),
                     "the profile buffer is full (%u events): later events are dropped; call "
                     "vkc_profile_reset or raise vkc_context_desc.profile_capacity",
                     st->cap);
            vkc__prof_status(st, VKC_ERROR_LIMIT, msg);
        }
        st->dropped++;
        return;
    }
    uint32_t id = vkc__intern(st, label && *label ? label : "?");
    if (id == UINT32_MAX) {
        vkc__prof_status(st, VKC_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a label");
        st->dropped++;
        return;
    }
    st->ev[st->count++] = (vkc__pevent){t0, t1 < t0 ? t0 : t1, value, id, thread, kind};
}

/* ---- the GPU clock ---------------------------------------------------------------------- */

static uint64_t vkc__to_host(const vkc__pclock *c, uint64_t ticks)
{
    uint64_t d = (ticks - c->cal_gpu) & c->mask;
    double ns;
    if (d > c->mask / 2) /* before the calibration point */
        ns = -(double)((c->mask - d) + 1) * c->period;
    else
        ns = (double)d * c->period;
    double host = (double)c->cal_host + ns;
    return host < 0 ? 0 : (uint64_t)llround(host);
}

/* Read both clocks at once (VK_EXT_calibrated_timestamps). */
static bool vkc__calibrate_ext(vkc_context *ctx, vkc__pclock *c)
{
    if (!c->get_calibrated)
        return false;
    VkCalibratedTimestampInfoEXT ci[2] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_DEVICE_EXT},
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
         VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
    uint64_t ts[2] = {0, 0}, dev = 0;
    VkResult vr =
        VKC_VK(vkGetCalibratedTimestampsEXT, c->get_calibrated(ctx->device, 2, ci, ts, &dev));
    if (vr < 0)
        return false;
    c->cal_gpu = ts[0] & c->mask;
    c->cal_host = ts[1];
    c->cal_error = dev;
    c->clock = VKC_PROFILE_CLOCK_CALIBRATED;
    return true;
}

/* The fallback: one submitted timestamp against the host clock when its
 * completion is seen. The timestamp was written between the submit and
 * that moment, so the placement error is at most the round trip. */
static vkc_result vkc__correlate(vkc_context *ctx, vkc__pclock *c)
{
    VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 1;
    VkQueryPool qp = VK_NULL_HANDLE;
    VKC_RETURN_IF_VK(
        ctx,
        VKC_VK(vkCreateQueryPool, ctx->vk.vkCreateQueryPool(ctx->device, &qi, ctx->alloc, &qp)),
        "vkCreateQueryPool(clock correlation)");
    vkc__cmd *cmd = NULL;
    vkc_result r = vkc__oneshot_begin(ctx, &cmd);
    uint64_t t0 = 0, t1 = 0, ticks = 0;
    if (r >= 0) {
        ctx->vk.vkCmdResetQueryPool(cmd->cb, qp, 0, 1);
        ctx->vk.vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 0);
        t0 = vkc__clock_ns();
        r = vkc__oneshot_end_wait(ctx, cmd);
        t1 = vkc__clock_ns();
    }
    if (r >= 0) {
        VkResult vr = VKC_VK(vkGetQueryPoolResults,
                             ctx->vk.vkGetQueryPoolResults(
                                 ctx->device, qp, 0, 1, sizeof(ticks), &ticks, sizeof(ticks),
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (vr < 0)
            r = vkc__vk_fail(ctx, vr, "vkGetQueryPoolResults(clock correlation)", __FILE__,
                             __LINE__);
    }
    ctx->vk.vkDestroyQueryPool(ctx->device, qp, ctx->alloc);
    if (r < 0)
        return r;
    c->cal_gpu = ticks & c->mask;
    c->cal_host = t1;
    c->cal_error = t1 - t0;
    c->clock = VKC_PROFILE_CLOCK_CORRELATED;
    return VKC_SUCCESS;
}

/* Make the clock usable (once per device). Not under the lock: the
 * correlation submits work, whose unit may hand results over. */
static void vkc__clock_setup(vkc_context *ctx, vkc__pstate *st)
{
    if (atomic_load_explicit(&st->clock_ready, memory_order_acquire))
        return;
    vkc__pclock tmp = st->clk;
    vkc_result r = VKC_SUCCESS;
    if (!vkc__calibrate_ext(ctx, &tmp))
        r = vkc__correlate(ctx, &tmp);
    pthread_mutex_lock(&st->lock);
    if (r < 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), "the GPU clock could not be placed on the host's: %s",
                 vkc_context_last_error(ctx));
        vkc__prof_status(st, r, msg);
    } else if (!atomic_load(&st->clock_ready)) {
        st->clk = tmp;
    }
    atomic_store_explicit(&st->clock_ready, true, memory_order_release);
    pthread_mutex_unlock(&st->lock);
}

/* ---- reading a unit's results ----------------------------------------------------------- */

static uint8_t vkc__kind_of_span(uint8_t span)
{
    switch (span) {
    case VKC__SPAN_SUBMISSION:
        return VKC_PROFILE_SUBMISSION;
    case VKC__SPAN_BARRIER:
        return VKC_PROFILE_BARRIER;
    case VKC__SPAN_DISPATCH:
        return VKC_PROFILE_DISPATCH;
    case VKC__SPAN_COPY:
        return VKC_PROFILE_COPY;
    case VKC__SPAN_FILL:
        return VKC_PROFILE_FILL;
    default:
        return VKC_PROFILE_OWNERSHIP;
    }
}

/* Caller holds the lock; the unit's submission `value` has completed. */
static void vkc__read_unit(vkc_context *ctx, vkc__pstate *st, vkc__cmd *u, uint64_t value)
{
    const char *name = u->span_count ? u->spans[0].label : "vkc_seq";
    if (u->record_ns[0]) {
        vkc__push(st, VKC_PROFILE_RECORD, name, u->record_ns[0], u->record_ns[1], 0, u->record_tid);
        u->record_ns[0] = 0;
    }
    vkc__push(st, VKC_PROFILE_SUBMIT, name, u->submit_ns[0], u->submit_ns[1], value, u->submit_tid);
    uint32_t n = u->span_count * 2;
    if (!n || st->clk.clock == VKC_PROFILE_CLOCK_NONE)
        return;
    if (n > st->scratch_cap) {
        uint64_t *p = vkc__realloc(st->scratch, n * sizeof(*p));
        if (!p) {
            vkc__prof_status(st, VKC_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for results");
            return;
        }
        st->scratch = p;
        st->scratch_cap = n;
    }
    VkResult vr = VKC_VK(vkGetQueryPoolResults,
                         ctx->vk.vkGetQueryPoolResults(
                             ctx->device, u->queries, 0, n, n * sizeof(uint64_t), st->scratch,
                             sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    if (vr < 0) {
        /* After device loss the results are simply gone. */
        if (vr != VK_ERROR_DEVICE_LOST) {
            char msg[128];
            snprintf(msg, sizeof(msg), "vkGetQueryPoolResults failed (%d): results dropped",
                     (int)vr);
            vkc__prof_status(st, vkc__result_from_vk(vr), msg);
        }
        return;
    }
    if (st->clk.clock == VKC_PROFILE_CLOCK_CALIBRATED &&
        u->submit_ns[1] > st->clk.cal_host + VKC_RECALIBRATE_NS) {
        /* Place this submission with a calibration taken after it. */
        vkc__calibrate_ext(ctx, &st->clk);
    }
    for (uint32_t i = 0; i < u->span_count; ++i) {
        uint64_t b = vkc__to_host(&st->clk, st->scratch[2 * i] & st->clk.mask);
        uint64_t e = vkc__to_host(&st->clk, st->scratch[2 * i + 1] & st->clk.mask);
        vkc__push(st, vkc__kind_of_span(u->spans[i].kind), u->spans[i].label, b, e, value, 0);
    }
}

/* Caller holds the lock. Read unit's results if they are still unread. */
static void vkc__collect_locked(vkc_context *ctx, vkc__pstate *st, vkc__cmd *u)
{
    uint64_t value = atomic_load_explicit(&u->prof_value, memory_order_acquire);
    for (uint32_t i = 0; i < st->pend_count; ++i) {
        if (st->pend[i].unit == u) {
            st->pend[i] = st->pend[--st->pend_count];
            break;
        }
    }
    if (!value)
        return;
    atomic_store_explicit(&u->prof_value, 0, memory_order_release);
    vkc__read_unit(ctx, st, u, value);
}

/* Caller holds the lock. Read every pending unit whose submission is done;
 * with wait, wait for the others first. */
static void vkc__collect_all_locked(vkc_context *ctx, vkc__pstate *st, bool wait)
{
    uint64_t done = vkc__completed_value(ctx);
    for (uint32_t i = 0; i < st->pend_count;) {
        vkc__pending p = st->pend[i];
        if (p.value > done && wait && !atomic_load(&ctx->lost)) {
            if (vkc__wait_value(ctx, p.value, UINT64_MAX, VKC_WAIT_BLOCK) >= 0)
                done = VKC_MAX(done, p.value);
        }
        if (p.value <= done && !atomic_load(&ctx->lost)) {
            vkc__collect_locked(ctx, st, p.unit); /* removes entry i */
            continue;
        }
        ++i;
    }
}

/* ---- hooks ---------------------------------------------------------------------------------- */

static void vkc__hook_submitted(vkc_context *ctx, vkc__cmd *u)
{
    vkc__pstate *st = ctx->profile_state;
    vkc__clock_setup(ctx, st);
    if (!atomic_load_explicit(&ctx->profile_waits, memory_order_relaxed))
        atomic_store(&ctx->profile_waits, true);
    pthread_mutex_lock(&st->lock);
    vkc__collect_all_locked(ctx, st, false);
    uint64_t value = atomic_load_explicit(&u->prof_value, memory_order_acquire);
    if (value) {
        if (st->pend_count == st->pend_cap) {
            uint32_t cap = st->pend_cap ? st->pend_cap * 2 : 16;
            vkc__pending *p = vkc__realloc(st->pend, cap * sizeof(*p));
            if (!p) {
                /* Read it at once instead: slower, never lost. */
                pthread_mutex_unlock(&st->lock);
                vkc__wait_value(ctx, value, UINT64_MAX, VKC_WAIT_BLOCK);
                pthread_mutex_lock(&st->lock);
                vkc__collect_locked(ctx, st, u);
                pthread_mutex_unlock(&st->lock);
                return;
            }
            st->pend = p;
            st->pend_cap = cap;
        }
        st->pend[st->pend_count++] = (vkc__pending){u, value};
    }
    pthread_mutex_unlock(&st->lock);
}

static void vkc__hook_reuse(vkc_context *ctx, vkc__cmd *u)
{
    vkc__pstate *st = ctx->profile_state;
    uint64_t value = atomic_load_explicit(&u->prof_value, memory_order_acquire);
    if (!value)
        return;
    if (atomic_load(&ctx->lost) || vkc__wait_value(ctx, value, UINT64_MAX, VKC_WAIT_BLOCK) < 0) {
        /* Lost with the device: nothing to read. */
        pthread_mutex_lock(&st->lock);
        for (uint32_t i = 0; i < st->pend_count; ++i)
            if (st->pend[i].unit == u)
                st->pend[i] = st->pend[--st->pend_count];
        atomic_store(&u->prof_value, 0);
        pthread_mutex_unlock(&st->lock);
        return;
    }
    pthread_mutex_lock(&st->lock);
    vkc__collect_locked(ctx, st, u);
    pthread_mutex_unlock(&st->lock);
}

static void vkc__hook_cpu(vkc_context *ctx, int kind, uint64_t t0, uint64_t t1, uint64_t value)
{
    vkc__pstate *st = ctx->profile_state;
    (void)kind; /* VKC__CPU_WAIT is the only one */
    pthread_mutex_lock(&st->lock);
    vkc__push(st, VKC_PROFILE_WAIT, "vkc_wait", t0, t1, value, vkc__thread_id());
    pthread_mutex_unlock(&st->lock);
}

static void vkc__hook_failed(vkc_context *ctx, vkc_result r)
{
    vkc__pstate *st = ctx->profile_state;
    char msg[256];
    snprintf(msg, sizeof(msg), "profiling off for a recording: %s", vkc_context_last_error(ctx));
    pthread_mutex_lock(&st->lock);
    vkc__prof_status(st, r, msg);
    pthread_mutex_unlock(&st->lock);
    vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL, "%s", msg);
}

static const vkc__profile_hooks vkc__hooks = {vkc__hook_submitted, vkc__hook_reuse, vkc__hook_cpu,
                                              vkc__hook_failed};

/* ---- module hooks ------------------------------------------------------------------------- */

vkc_result vkc__profile_init(vkc_context *ctx)
{
    vkc__pstate *st = vkc__calloc(1, sizeof(*st));
    if (!st)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "profile state");
    pthread_mutex_init(&st->lock, NULL);
    ctx->profile_state = st;
    st->cap = ctx->profile_capacity ? ctx->profile_capacity : 65536;
    /* The buffer is made once, here or at the first profiled results,
     * never in steady state. */
    if (ctx->profiling) {
        st->ev = vkc__malloc((size_t)st->cap * sizeof(*st->ev));
        if (!st->ev)
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "profile buffer of %u events",
                            st->cap);
    }
    const char *path = vkc__env_string("VKC_PROFILE");
    if (ctx->profiling && path)
        snprintf(st->trace_path, sizeof(st->trace_path), "%s", path);
    uint32_t bits = ctx->info.queue_family < VKC_MAX_QUEUE_FAMILIES
                        ? ctx->info.queue_families[ctx->info.queue_family].timestamp_valid_bits
                        : 0;
    st->clk.mask = bits >= 64 || !bits ? UINT64_MAX : (1ull << bits) - 1;
    st->clk.period = ctx->info.timestamp_period;
    if (!ctx->info.timestamps) {
        vkc__prof_status(st, VKC_ERROR_UNSUPPORTED,
                         "the queue family has no timestamps: nothing is profiled");
    } else if (ctx->calibrated_timestamps && !atomic_load(&vkc__no_calibration)) {
        /* Only with the host's CLOCK_MONOTONIC among the domains. */
        PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT domains =
            (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)ctx->vki.vkGetInstanceProcAddr(
                ctx->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
        VkTimeDomainEXT d[8];
        uint32_t n = 8;
        bool dev = false, mono = false;
        if (domains && domains(ctx->phys, &n, d) >= 0) {
            for (uint32_t i = 0; i < n; ++i) {
                dev |= d[i] == VK_TIME_DOMAIN_DEVICE_EXT;
                mono |= d[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
            }
        }
        if (dev && mono)
            st->clk.get_calibrated = ctx->vk.vkGetCalibratedTimestampsEXT;
    }
    ctx->profile = &vkc__hooks;
    if (ctx->profiling && ctx->info.timestamps)
        vkc__clock_setup(ctx, st);
    return VKC_SUCCESS;
}

void vkc__profile_drop(vkc_context *ctx)
{
    vkc__pstate *st = ctx->profile_state;
    if (!st)
        return;
    pthread_mutex_lock(&st->lock);
    vkc__collect_all_locked(ctx, st, true);
    pthread_mutex_unlock(&st->lock);
    if (!st->trace_path[0])
        return;
    /* The first context writes the path given; later ones number theirs. */
    unsigned n = atomic_fetch_add(&vkc__traces_written, 1) + 1;
    char path[600];
    if (n == 1) {
        snprintf(path, sizeof(path), "%s", st->trace_path);
    } else {
        size_t len = strlen(st->trace_path);
        bool json = len > 5 && !strcmp(st->trace_path + len - 5, ".json");
        snprintf(path, sizeof(path), "%.*s.%u%s", (int)(json ? len - 5 : len), st->trace_path, n,
                 json ? ".json" : "");
    }
    if (vkc__write_both(ctx, path) < 0)
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL, "VKC_PROFILE: %s",
                 vkc_context_last_error(ctx));
    else
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL, "VKC_PROFILE: trace written to %s", path);
}

void vkc__profile_finish(vkc_context *ctx)
{
    vkc__pstate *st = ctx->profile_state;
    ctx->profile = NULL;
    if (!st)
        return;
    for (uint32_t i = 0; i < st->pend_count; ++i)
        atomic_store(&st->pend[i].unit->prof_value, 0);
    for (uint32_t i = 0; i < st->label_count; ++i)
        vkc__free(st->labels[i]);
    vkc__free(st->labels);
    vkc__free(st->slots);
    vkc__free(st->pend);
    vkc__free(st->scratch);
    vkc__free(st->ev);
    pthread_mutex_destroy(&st->lock);
    vkc__free(st);
    ctx->profile_state = NULL;
}

vkc_result vkc__profile_lose(vkc_context *ctx)
{
    vkc__pstate *st = ctx->profile_state;
    if (!st)
        return VKC_SUCCESS;
    pthread_mutex_lock(&st->lock);
    /* What completed before the loss may still be readable; the
     * submissions in flight died with the device: their units go with the
     * pool, unread. */
    const uint64_t done = atomic_load(&ctx->completed_value);
    for (uint32_t i = 0; i < st->pend_count;) {
        const uint64_t v = st->pend[i].value;
        /* Seen complete through the timeline, or through the marker (the
         * default wait: the timeline's cached value may lag behind it). */
        if (v <= done || (vkc__marker_on(ctx) && vkc__marker_done(ctx, v))) {
            vkc__collect_locked(ctx, st, st->pend[i].unit); /* removes entry i */
            continue;
        }
        ++i;
    }
    for (uint32_t i = 0; i < st->pend_count; ++i)
        atomic_store(&st->pend[i].unit->prof_value, 0);
    st->pend_count = 0;
    atomic_store(&st->clock_ready, false); /* a new device, a new clock */
    st->clk.clock = VKC_PROFILE_CLOCK_NONE;
    pthread_mutex_unlock(&st->lock);
    return VKC_SUCCESS;
}

vkc_result vkc__profile_rebuild(vkc_context *ctx)
{
    vkc__pstate *st = ctx->profile_state;
    if (st && st->clk.get_calibrated)
        st->clk.get_calibrated = ctx->vk.vkGetCalibratedTimestampsEXT; /* the new device's table */
    if (st && ctx->profiling && ctx->info.timestamps)
        vkc__clock_setup(ctx, st);
    return VKC_SUCCESS;
}

/* ---- results ------------------------------------------------------------------------------ */

static int vkc__cmp_event(const void *a, const void *b)
{
    const vkc__pevent *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    /* Enclosing spans first (a submission before its first dispatch). */
    if (x->t1 != y->t1)
        return x->t1 > y->t1 ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

/* Caller holds the lock: read what is done (waiting for the rest), oldest
 * first. */
void vkc__settle_locked(vkc_context *ctx, vkc__pstate *st)
{
    vkc__collect_all_locked(ctx, st, true);
    if (st->count) /* the buffer may not exist yet */
        qsort(st->ev, st->count, sizeof(*st->ev), vkc__cmp_event);
}

/* Caller holds the lock; events sorted. */
void vkc__info_locked(vkc_context *ctx, vkc__pstate *st, vkc_profile_info *info)
{
    memset(info, 0, sizeof(*info));
    info->on = ctx->profiling;
    info->status = st->status;
    snprintf(info->message, sizeof(info->message), "%s", st->message);
    info->clock = st->clk.clock;
    info->clock_error_ns = st->clk.cal_error;
    info->events = st->count;
    info->dropped = st->dropped;
    info->capacity = st->cap;
    uint64_t lo = UINT64_MAX, hi = 0, busy = 0, cover = 0;
    for (uint32_t i = 0; i < st->count; ++i) {
        const vkc__pevent *e = &st->ev[i];
        if (e->kind != VKC_PROFILE_SUBMISSION)
            continue;
        info->submissions++;
        /* Sorted by start: the union grows at its end only. */
        if (e->t0 > cover || lo == UINT64_MAX) {
            busy += e->t1 - e->t0;
            cover = e->t1;
        } else if (e->t1 > cover) {
            busy += e->t1 - cover;
            cover = e->t1;
        }
        lo = VKC_MIN(lo, e->t0);
        hi = VKC_MAX(hi, e->t1);
    }
    if (info->submissions) {
        info->window_ns = hi - lo;
        info->gpu_busy_ns = busy;
        info->utilisation = info->window_ns ? (double)busy / (double)info->window_ns : 1.0;
    }
}

vkc_result vkc_profile_get(vkc_context *ctx, vkc_profile_info *info, vkc_profile_event *events,
                           uint32_t capacity, uint32_t *out_count)
{
    if (out_count)
        *out_count = 0;
    VKC_CHECK_PROFILE(ctx, st);
    pthread_mutex_lock(&st->lock);
    vkc__settle_locked(ctx, st);
    if (info)
        vkc__info_locked(ctx, st, info);
    for (uint32_t i = 0; events && i < capacity && i < st->count; ++i) {
        const vkc__pevent *e = &st->ev[i];
        events[i] = (vkc_profile_event){
            (vkc_profile_kind)e->kind, st->labels[e->label], e->t0, e->t1, e->value, e->thread};
    }
    if (out_count)
        *out_count = st->count;
    pthread_mutex_unlock(&st->lock);
    return VKC_SUCCESS;
}

vkc_result vkc_profile_reset(vkc_context *ctx)
{
    VKC_CHECK_PROFILE(ctx, st);
    pthread_mutex_lock(&st->lock);
    /* Results of work submitted before the reset belong to the old window. */
    vkc__collect_all_locked(ctx, st, true);
    st->count = 0;
    st->dropped = 0;
    st->status = ctx->info.timestamps ? VKC_SUCCESS : st->status;
    if (ctx->info.timestamps)
        st->message[0] = '\0';
    pthread_mutex_unlock(&st->lock);
    return VKC_SUCCESS;
}

typedef struct vkc__key {
    uint64_t group; /* kind << 32 | label */
    uint64_t dur;
} vkc__key;

static int vkc__cmp_key(const void *a, const void *b)
{
    const vkc__key *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->dur < y->dur ? -1 : x->dur > y->dur;
}

static int vkc__cmp_stat(const void *a, const void *b)
{
    const vkc_profile_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* Caller holds the lock. All rows, largest total first (vkc__free them). */
vkc_result vkc__stats_locked(vkc_context *ctx, vkc__pstate *st, vkc_profile_stat **out,
                             uint32_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!st->count)
        return VKC_SUCCESS;
    vkc__key *k = vkc__malloc(st->count * sizeof(*k));
    uint64_t *d = vkc__malloc(st->count * sizeof(*d));
    vkc_profile_stat *rows = vkc__calloc(st->count, sizeof(*rows));
    if (!k || !d || !rows) {
        vkc__free(k);
        vkc__free(d);
        vkc__free(rows);
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "profile statistics");
    }
    for (uint32_t i = 0; i < st->count; ++i)
        k[i] = (vkc__key){(uint64_t)st->ev[i].kind << 32 | st->ev[i].label,
                          st->ev[i].t1 - st->ev[i].t0};
    qsort(k, st->count, sizeof(*k), vkc__cmp_key);
    uint32_t n = 0;
    for (uint32_t i = 0; i < st->count;) {
        uint32_t j = i;
        uint64_t total = 0;
        for (; j < st->count && k[j].group == k[i].group; ++j) {
            d[j - i] = k[j].dur;
            total += k[j].dur;
        }
        size_t m = j - i;
        rows[n++] = (vkc_profile_stat){(vkc_profile_kind)(k[i].group >> 32),
                                       st->labels[(uint32_t)k[i].group],
                                       m,
                                       total,
                                       d[0],
                                       d[m - 1],
                                       vkc__percentile(d, m, 50),
                                       vkc__percentile(d, m, 95),
                                       vkc__percentile(d, m, 99)};
        i = j;
    }
    vkc__free(k);
    vkc__free(d);
    qsort(rows, n, sizeof(*rows), vkc__cmp_stat);
    *out = rows;
    *n_out = n;
    return VKC_SUCCESS;
}

vkc_result vkc_profile_stats(vkc_context *ctx, vkc_profile_stat *out, uint32_t capacity,
                             uint32_t *out_count)
{
    if (out_count)
        *out_count = 0;
    VKC_CHECK_PROFILE(ctx, st);
    pthread_mutex_lock(&st->lock);
    vkc__settle_locked(ctx, st);
    vkc_profile_stat *rows;
    uint32_t n;
    vkc_result r = vkc__stats_locked(ctx, st, &rows, &n);
    pthread_mutex_unlock(&st->lock);
    VKC_FORWARD(r);
    for (uint32_t i = 0; out && i < n && i < capacity; ++i)
        out[i] = rows[i];
    if (out_count)
        *out_count = n;
    vkc__free(rows);
    return VKC_SUCCESS;
}
