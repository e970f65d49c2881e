/* The insides of the profile module, shared by its files only
 * (profile.c, profile_export.c): the state, its events and the clock. */
#ifndef VKC_PROFILE_H
#define VKC_PROFILE_H

#include "vkc_internal.h"

/* Calibrated clocks are read again after this much profiled time, to
 * follow the drift between the two clocks. */
#define VKC_RECALIBRATE_NS 100000000ull
/* Lanes of the trace and the picture: GPU lanes have fixed ids above any
 * thread id. */
#define VKC_LANE_GPU 100000u

typedef struct vkc__pevent {
    uint64_t t0, t1;
    uint64_t value;
    uint32_t label;
    uint32_t thread;
    uint8_t kind; /* vkc_profile_kind */
} vkc__pevent;

typedef struct vkc__pending {
    vkc__cmd *unit;
    uint64_t value;
} vkc__pending;

/* The GPU clock on the host's: host = cal_host + (ticks - cal_gpu) * period. */
typedef struct vkc__pclock {
    vkc_profile_clock clock;
    double period;
    uint64_t mask;
    uint64_t cal_gpu, cal_host, cal_error;
    PFN_vkGetCalibratedTimestampsEXT get_calibrated;
} vkc__pclock;

typedef struct vkc__pstate {
    pthread_mutex_t lock;
    vkc__pevent *ev;
    uint32_t count, cap;
    uint64_t dropped;
    vkc_result status;
    char message[256];

    /* Interned labels: strings live until the context is destroyed, so
     * events and stats can hand out plain pointers. */
    char **labels;
    uint32_t label_count, label_cap;
    uint32_t *slots; /* open addressing: label index + 1, 0 = empty */
    uint32_t slot_cap;

    vkc__pending *pend;
    uint32_t pend_count, pend_cap;
    uint64_t *scratch;
    uint32_t scratch_cap;

    atomic_bool clock_ready;
    vkc__pclock clk;

    char trace_path[512]; /* VKC_PROFILE: written at destroy */
} vkc__pstate;

#define VKC_CHECK_PROFILE(ctx, st)                                                                 \
    VKC_CHECK_CONTEXT(ctx);                                                                        \
    vkc__pstate *st = (ctx)->profile_state;                                                        \
    VKC_RETURN_IF(!st, ctx, VKC_ERROR_INVALID_STATE, "the context has no profile state")

static inline bool vkc__kind_gpu(uint8_t kind)
{
    return kind >= VKC_PROFILE_SUBMISSION && kind <= VKC_PROFILE_BARRIER;
}

/* profile.c */
uint64_t vkc__label_hash(const char *s);
/* Caller holds the lock: read what is done (waiting for the rest), oldest first. */
void vkc__settle_locked(vkc_context *ctx, vkc__pstate *st);
/* Caller holds the lock; events sorted. */
void vkc__info_locked(vkc_context *ctx, vkc__pstate *st, vkc_profile_info *info);
/* Caller holds the lock. All rows, largest total first (vkc__free them). */
vkc_result vkc__stats_locked(vkc_context *ctx, vkc__pstate *st, vkc_profile_stat **out,
                             uint32_t *n_out);

/* profile_export.c: the trace at json_path and the picture beside it. */
vkc_result vkc__write_both(vkc_context *ctx, const char *json_path);

#endif
