/* Call timing (VKC_TIME_CALLS=1, a diagnostic): how long each Vulkan call
 * site and each of vkc's internal waits took, for finding where host time
 * goes inside a vkc call (issue 13: in NVIDIA's slow mode a batch recorded
 * every time cost ~40 us more, and no public call's timing said which
 * driver call or wait took them).
 *
 * One process-wide table, keyed by call site, filled by every thread; each
 * vkc_context_destroy writes it to the context's logger (VKC_LOG_INFO) and
 * empties it, so a program that makes one context at a time reads one
 * report per context. Off, it costs VKC_VK one more predictable branch (on
 * a global flag beside the fault injector's thread-local one); once a
 * context has turned it on it stays on for the process.
 *
 * Owns: the table. Calls: the clock, the context's logger. */
#include "vkc_internal.h"

#include <stdio.h>

atomic_bool vkc__timing;

#define VKC__TIME_SITES 256u
/* Upper bounds of the histogram's buckets, in ns; the last is open. */
static const uint64_t vkc__time_bounds[VKC__TIME_BUCKETS - 1] = {2000, 10000, 30000};

typedef struct vkc__time_site {
    /* The strings' addresses (GCC 12 warns of a dangling pointer where
     * strrchr reads a pointer loaded atomically). */
    atomic_uintptr_t site; /* "file.c:line" or a wait's what; 0: free */
    atomic_uintptr_t call; /* written by the thread that claimed the site */
    atomic_uint_fast64_t n, ns, max_ns, bucket[VKC__TIME_BUCKETS];
} vkc__time_site;

static vkc__time_site vkc__time_sites[VKC__TIME_SITES];
static atomic_uint_fast64_t vkc__time_lost; /* calls that found the table full */
static _Thread_local uint64_t vkc__time_t0;

void vkc__timing_enable(vkc_context *ctx)
{
    bool on = false;
    if (vkc__env_flag(ctx, "VKC_TIME_CALLS", "off", &on) && on)
        atomic_store_explicit(&vkc__timing, true, memory_order_relaxed);
}

void vkc__time_add(const char *call, const char *site, uint64_t ns)
{
    uint32_t h = (uint32_t)(((uintptr_t)site >> 3) * 2654435761u) % VKC__TIME_SITES;
    for (uint32_t i = 0; i < VKC__TIME_SITES; ++i, h = (h + 1) % VKC__TIME_SITES) {
        vkc__time_site *s = &vkc__time_sites[h];
        uintptr_t cur = atomic_load_explicit(&s->site, memory_order_acquire);
        if (!cur) {
            /* Claim it. The claimer names the call after; a report that
             * comes between reads no name yet. */
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(&s->site, &expected, (uintptr_t)site,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire)) {
                atomic_store_explicit(&s->call, (uintptr_t)call, memory_order_release);
                cur = (uintptr_t)site;
            } else {
                cur = expected;
            }
        }
        if (cur != (uintptr_t)site)
            continue;
        atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->ns, ns, memory_order_relaxed);
        uint64_t max = atomic_load_explicit(&s->max_ns, memory_order_relaxed);
        while (ns > max && !atomic_compare_exchange_weak_explicit(
                               &s->max_ns, &max, ns, memory_order_relaxed, memory_order_relaxed)) {
        }
        uint32_t b = 0;
        while (b < VKC__TIME_BUCKETS - 1 && ns >= vkc__time_bounds[b])
            ++b;
        atomic_fetch_add_explicit(&s->bucket[b], 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&vkc__time_lost, 1, memory_order_relaxed);
}

bool vkc__vk_pre(const char *call, const char *site)
{
    if (vkc__fault.armed && vkc__fault_tick_site(call, site))
        return true;
    vkc__time_t0 = atomic_load_explicit(&vkc__timing, memory_order_relaxed) ? vkc__now_ns() : 0;
    return false;
}

VkResult vkc__vk_post(const char *call, const char *site, VkResult r)
{
    if (vkc__time_t0) /* 0: timing was off when the call began */
        vkc__time_add(call, site, vkc__now_ns() - vkc__time_t0);
    vkc__time_t0 = 0;
    return r;
}

static int vkc__time_by_total(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? 1 : x > y ? -1 : 0;
}

void vkc__timing_report(vkc_context *ctx)
{
    if (!atomic_load_explicit(&vkc__timing, memory_order_relaxed))
        return;
    /* Sort (total ns, index) pairs; read and empty each site. A call still
     * running on another thread may land in the next report. Every line
     * starts with the variable's name, for a logger to pick them out. */
    uint64_t order[VKC__TIME_SITES][2];
    uint32_t used = 0;
    for (uint32_t i = 0; i < VKC__TIME_SITES; ++i) {
        if (!atomic_load_explicit(&vkc__time_sites[i].site, memory_order_acquire))
            continue;
        order[used][0] = atomic_load_explicit(&vkc__time_sites[i].ns, memory_order_relaxed);
        order[used++][1] = i;
    }
    qsort(order, used, sizeof(order[0]), vkc__time_by_total);
    vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
             "VKC_TIME_CALLS: %u call sites since the last report (%llu calls not kept: table "
             "full); by total time:",
             used, (unsigned long long)atomic_exchange(&vkc__time_lost, 0));
    for (uint32_t k = 0; k < used; ++k) {
        vkc__time_site *s = &vkc__time_sites[order[k][1]];
        const char *site = (const char *)atomic_load_explicit(&s->site, memory_order_acquire);
        const char *base = strrchr(site, '/');
        uint64_t n = atomic_exchange(&s->n, 0), ns = atomic_exchange(&s->ns, 0);
        uint64_t max = atomic_exchange(&s->max_ns, 0), bk[VKC__TIME_BUCKETS];
        for (uint32_t b = 0; b < VKC__TIME_BUCKETS; ++b)
            bk[b] = atomic_exchange(&s->bucket[b], 0);
        if (!n)
            continue;
        const char *call = (const char *)atomic_load_explicit(&s->call, memory_order_acquire);
        vkc__log(
            ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
            "VKC_TIME_CALLS:   %s at %s: %llu calls, %.1f us in all, mean %.2f us, max %.1f us; "
            "<2 us %llu, 2-10 us %llu, 10-30 us %llu, >=30 us %llu",
            call ? call : "?", base ? base + 1 : site, (unsigned long long)n, ns / 1e3,
            ns / 1e3 / (double)n, max / 1e3, (unsigned long long)bk[0], (unsigned long long)bk[1],
            (unsigned long long)bk[2], (unsigned long long)bk[3]);
    }
}
