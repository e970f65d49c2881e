/* Splits: one element-count dispatch or fusion graph across several
 * contexts by element range, weighted by each device's throughput, with
 * data scattered and gathered through the host.
 *
 * Owns: vkc_split, vkc_split_buffer, the calibration. Calls only public
 * functions of the layers below (buffers, kernels, immediate mode,
 * sequences, fusion), so each part obeys its own context's rules; it reads
 * contexts' and graphs' structs for checks only. Every call runs in the
 * caller's thread, part after part (submissions are asynchronous, so the
 * devices still work at once); waits are bounded by the split's timeout. */
#include "vkc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#define VKC_MAGIC_SPLIT 0x564b4358u        /* "VKCX" */
#define VKC_MAGIC_SPLIT_BUFFER 0x564b4359u /* "VKCY" */

struct vkc_split {
    uint32_t magic;
    uint32_t n;
    vkc_context *ctx[VKC_MAX_SPLIT];
    double weight[VKC_MAX_SPLIT]; /* normalised */
    bool calibrated;
    uint64_t calibrate_ns[VKC_MAX_SPLIT];
    uint32_t granularity;
    uint64_t timeout_ns;
    /* vkc_split_fuse records into these, one per context, created on first
     * use; pending is the last submission of each (waited before the next
     * re-recording and at destroy). */
    vkc_seq *seq[VKC_MAX_SPLIT];
    vkc_ticket pending[VKC_MAX_SPLIT];
    vkc_buffer *partial[VKC_MAX_SPLIT]; /* each part's reduction result, one float */
    vkc__node buffers;
    char last_error[1024];
};

struct vkc_split_buffer {
    uint32_t magic;
    vkc_split *split;
    vkc__node node;
    uint64_t count;
    uint32_t element_size;
    uint64_t first[VKC_MAX_SPLIT], part[VKC_MAX_SPLIT];
    vkc_buffer *buf[VKC_MAX_SPLIT];
};

static uint64_t vkc__split_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Record a failure of a split call: on ctx (the failing part's context, or
 * the first one for a split-level error) and in the split. */
VKC_PRINTF(5, 6)
static vkc_result vkc__split_fail(vkc_split *sp, vkc_context *ctx, vkc_result r, int line,
                                  const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(sp->last_error, sizeof(sp->last_error), "%s", msg);
    return vkc__fail(ctx, r, VK_SUCCESS, __FILE__, line, "%s", msg);
}
#define SPLIT_FAIL(sp, ctx, r, ...) vkc__split_fail((sp), (ctx), (r), __LINE__, __VA_ARGS__)

/* Keep a part's own error (already on its context) as the split's, with
 * the part named. */
static vkc_result vkc__split_part_error(vkc_split *sp, uint32_t i, vkc_result r, const char *what)
{
    snprintf(sp->last_error, sizeof(sp->last_error), "split part %u (device \"%s\"): %s: %s: %s", i,
             sp->ctx[i]->info.name, what, vkc_result_string(r), vkc_context_last_error(sp->ctx[i]));
    return r;
}

#define VKC_CHECK_SPLIT(sp)                                                                        \
    do {                                                                                           \
        if (VKC_UNLIKELY(!(sp) || (sp)->magic != VKC_MAGIC_SPLIT))                                 \
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_split handle");           \
    } while (0)

/* ---- ranges -------------------------------------------------------------- */

static void vkc__split_ranges(const vkc_split *sp, uint64_t count, uint64_t *first, uint64_t *part)
{
    /* Boundaries at rounded cumulative weights, in units of granularity, so
     * rounding errors never add up and the last part ends at count. */
    uint64_t g = sp->granularity;
    uint64_t units = (count + g - 1) / g;
    double cum = 0;
    uint64_t lo = 0;
    for (uint32_t i = 0; i < sp->n; ++i) {
        cum += sp->weight[i];
        uint64_t hi = i + 1 == sp->n ? count : (uint64_t)(cum * (double)units + 0.5) * g;
        hi = VKC_MIN(VKC_MAX(hi, lo), count);
        first[i] = lo;
        part[i] = hi - lo;
        lo = hi;
    }
}

/* ---- calibration --------------------------------------------------------- */

static const char *vkc__split_triad_glsl =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) readonly buffer A { float a[]; };\n"
    "layout(set = 0, binding = 1) readonly buffer B { float b[]; };\n"
    "layout(set = 0, binding = 2) writeonly buffer C { float c[]; };\n"
    "layout(push_constant) uniform P { uint n; float s; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) c[i] = a[i] + pc.s * b[i];\n"
    "}\n";

/* Best of a few timed triads (after one warm-up) on one context, ns. */
static vkc_result vkc__split_calibrate_one(vkc_split *sp, uint32_t i, uint64_t count,
                                           uint64_t *out_ns)
{
    vkc_context *ctx = sp->ctx[i];
    vkc_kernel *k = NULL;
    vkc_buffer *b[3] = {NULL, NULL, NULL};
    vkc_result r = vkc_kernel_create_glsl(
        ctx, &(vkc_glsl_desc){.source = vkc__split_triad_glsl, .name = "vkc split calibration"},
        &k);
    for (int j = 0; j < 3 && r >= 0; ++j)
        r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = count * 4, .name = "vkc calibration"},
                              &b[j]);
    for (int j = 0; j < 2 && r >= 0; ++j)
        r = vkc_buffer_fill(b[j], 0, count * 4, 0x3f800000u); /* 1.0f */
    struct {
        uint32_t n;
        float s;
    } push = {(uint32_t)count, 2.0f};
    vkc_arg args[3] = {{.buffer = b[0]}, {.buffer = b[1]}, {.buffer = b[2]}};
    vkc_dispatch_desc d = {.kernel = k,
                           .args = args,
                           .arg_count = 3,
                           .push = &push,
                           .push_size = sizeof(push),
                           .count = count,
                           .label = "vkc split calibration"};
    uint64_t best = UINT64_MAX;
    for (int it = 0; it < 4 && r >= 0; ++it) {
        uint64_t t0 = vkc__split_now();
        vkc_ticket t;
        r = vkc_dispatch(ctx, &d);
        if (r >= 0)
            r = vkc_flush(ctx, &t);
        if (r >= 0)
            r = vkc_wait(ctx, t, sp->timeout_ns);
        if (r == VKC_TIMEOUT)
            r = VKC_FAIL(ctx, VKC_TIMEOUT, "calibration triad did not finish within %llu ms",
                         (unsigned long long)(sp->timeout_ns / 1000000));
        uint64_t dt = vkc__split_now() - t0;
        if (r >= 0 && it > 0)
            best = VKC_MIN(best, dt);
    }
    /* Destroying waits for the context's work; the triad is done or failed. */
    for (int j = 0; j < 3; ++j)
        vkc_buffer_destroy(b[j]);
    vkc_kernel_destroy(k);
    *out_ns = best ? best : 1;
    return r;
}

/* ---- create / destroy ---------------------------------------------------- */

static vkc_result vkc__split_check_desc(const vkc_split_desc *d)
{
    VKC_RETURN_IF(!d, NULL, VKC_ERROR_INVALID_ARGUMENT, "split: desc is NULL");
    VKC_RETURN_IF(d->context_count == 0 || !d->contexts, NULL, VKC_ERROR_INVALID_ARGUMENT,
                  "split: no contexts (context_count is 0 or contexts is NULL)");
    VKC_RETURN_IF(d->context_count > VKC_MAX_SPLIT, NULL, VKC_ERROR_INVALID_ARGUMENT,
                  "split: %u contexts, at most %u", d->context_count, VKC_MAX_SPLIT);
    for (uint32_t i = 0; i < d->context_count; ++i) {
        const vkc_context *c = d->contexts[i];
        VKC_RETURN_IF(!c || c->magic != VKC_MAGIC_CONTEXT, NULL, VKC_ERROR_INVALID_HANDLE,
                      "split: contexts[%u] is not a valid vkc_context", i);
        VKC_RETURN_IF(atomic_load(&c->lost), NULL, VKC_ERROR_DEVICE_LOST,
                      "split: contexts[%u] (\"%s\") has lost its device", i, c->info.name);
        for (uint32_t j = 0; j < i; ++j) {
            VKC_RETURN_IF(d->contexts[j] == c, NULL, VKC_ERROR_INVALID_ARGUMENT,
                          "split: contexts[%u] and contexts[%u] are the same context", j, i);
            /* Two wraps of one host device share a queue and memory: the
             * split would count one device twice. */
            VKC_RETURN_IF(d->contexts[j]->device == c->device, NULL, VKC_ERROR_INVALID_ARGUMENT,
                          "split: contexts[%u] and contexts[%u] are on the same VkDevice", j, i);
        }
        if (d->weights)
            VKC_RETURN_IF(!(d->weights[i] > 0) || d->weights[i] > 1e300, NULL,
                          VKC_ERROR_INVALID_ARGUMENT, "split: weights[%u] = %g is not > 0", i,
                          d->weights[i]);
    }
    VKC_RETURN_IF(d->weights && d->calibrate == VKC_ON, NULL, VKC_ERROR_INVALID_ARGUMENT,
                  "split: weights given and calibration asked for; choose one");
    VKC_RETURN_IF(d->calibrate_count > UINT32_MAX, NULL, VKC_ERROR_LIMIT,
                  "split: calibrate_count %llu above 2^32-1",
                  (unsigned long long)d->calibrate_count);
    return VKC_SUCCESS;
}

vkc_result vkc_split_create(const vkc_split_desc *desc, vkc_split **out)
{
    VKC_RETURN_IF(!out, NULL, VKC_ERROR_INVALID_ARGUMENT, "split: out is NULL");
    *out = NULL;
    VKC_FORWARD(vkc__split_check_desc(desc));
    vkc_split *sp = vkc__calloc(1, sizeof(*sp));
    VKC_RETURN_IF(!sp, NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "split: out of host memory");
    sp->magic = VKC_MAGIC_SPLIT;
    sp->n = desc->context_count;
    sp->granularity = desc->granularity ? desc->granularity : 256;
    sp->timeout_ns = desc->timeout_ns ? desc->timeout_ns : 10000000000ull;
    vkc__list_init(&sp->buffers);
    for (uint32_t i = 0; i < sp->n; ++i) {
        sp->ctx[i] = desc->contexts[i];
        sp->weight[i] = desc->weights ? desc->weights[i] : 1.0;
    }
    if (!desc->weights && desc->calibrate != VKC_OFF) {
        uint64_t count = desc->calibrate_count ? desc->calibrate_count : (1u << 22);
        for (uint32_t i = 0; i < sp->n; ++i) {
            vkc_result r = vkc__split_calibrate_one(sp, i, count, &sp->calibrate_ns[i]);
            if (r < 0) {
                snprintf(vkc__create_error, sizeof(vkc__create_error),
                         "split: calibration on contexts[%u] (\"%s\"): %s: %s", i,
                         sp->ctx[i]->info.name, vkc_result_string(r),
                         vkc_context_last_error(sp->ctx[i]));
                sp->magic = 0;
                vkc__free(sp);
                return r;
            }
            sp->weight[i] = 1.0 / (double)sp->calibrate_ns[i];
        }
        sp->calibrated = true;
    }
    double sum = 0;
    for (uint32_t i = 0; i < sp->n; ++i)
        sum += sp->weight[i];
    for (uint32_t i = 0; i < sp->n; ++i)
        sp->weight[i] /= sum;
    *out = sp;
    return VKC_SUCCESS;
}

void vkc_split_destroy(vkc_split *sp)
{
    if (!sp || sp->magic != VKC_MAGIC_SPLIT)
        return;
    while (sp->buffers.next != &sp->buffers)
        vkc_split_buffer_destroy(
            (vkc_split_buffer *)((char *)sp->buffers.next - offsetof(vkc_split_buffer, node)));
    for (uint32_t i = 0; i < sp->n; ++i) {
        if (sp->seq[i] && !atomic_load(&sp->ctx[i]->lost))
            (void)vkc_wait(sp->ctx[i], sp->pending[i], sp->timeout_ns);
        vkc_seq_destroy(sp->seq[i]);
        vkc_buffer_destroy(sp->partial[i]);
    }
    sp->magic = 0;
    vkc__free(sp);
}

vkc_result vkc_split_info_get(const vkc_split *sp, vkc_split_info *out)
{
    VKC_CHECK_SPLIT(sp);
    VKC_RETURN_IF(!out, NULL, VKC_ERROR_INVALID_ARGUMENT, "split info: out is NULL");
    memset(out, 0, sizeof(*out));
    out->context_count = sp->n;
    out->calibrated = sp->calibrated;
    for (uint32_t i = 0; i < sp->n; ++i) {
        out->weights[i] = sp->weight[i];
        out->calibrate_ns[i] = sp->calibrate_ns[i];
    }
    return VKC_SUCCESS;
}

vkc_result vkc_split_ranges(const vkc_split *sp, uint64_t count, uint64_t *first, uint64_t *counts)
{
    VKC_CHECK_SPLIT(sp);
    VKC_RETURN_IF(!first || !counts, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                  "split ranges: first or counts is NULL");
    vkc__split_ranges(sp, count, first, counts);
    return VKC_SUCCESS;
}

const char *vkc_split_last_error(const vkc_split *sp)
{
    return sp && sp->magic == VKC_MAGIC_SPLIT ? sp->last_error : "";
}

/* ---- buffers ------------------------------------------------------------- */

vkc_result vkc_split_buffer_create(vkc_split *sp, const vkc_split_buffer_desc *desc,
                                   vkc_split_buffer **out)
{
    VKC_CHECK_SPLIT(sp);
    VKC_RETURN_IF(!out, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT, "split buffer: out is NULL");
    *out = NULL;
    if (!desc || desc->count == 0)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT, "split buffer: %s",
                          desc ? "count is 0" : "desc is NULL");
    uint32_t es = desc->element_size ? desc->element_size : 4;
    if (desc->count > UINT64_MAX / es)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_LIMIT,
                          "split buffer: %llu elements of %u bytes overflow",
                          (unsigned long long)desc->count, es);
    vkc_split_buffer *b = vkc__calloc(1, sizeof(*b));
    if (!b)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_OUT_OF_HOST_MEMORY,
                          "split buffer: out of host memory");
    b->magic = VKC_MAGIC_SPLIT_BUFFER;
    b->split = sp;
    b->count = desc->count;
    b->element_size = es;
    vkc__split_ranges(sp, desc->count, b->first, b->part);
    vkc__list_push(&sp->buffers, &b->node);
    for (uint32_t i = 0; i < sp->n; ++i) {
        if (!b->part[i])
            continue;
        vkc_result r = vkc_buffer_create(
            sp->ctx[i],
            &(vkc_buffer_desc){.size = b->part[i] * es, .memory = desc->memory, .name = desc->name},
            &b->buf[i]);
        if (r < 0) {
            vkc__split_part_error(sp, i, r, "vkc_buffer_create");
            vkc_split_buffer_destroy(b);
            return r;
        }
    }
    *out = b;
    return VKC_SUCCESS;
}

void vkc_split_buffer_destroy(vkc_split_buffer *b)
{
    if (!b || b->magic != VKC_MAGIC_SPLIT_BUFFER)
        return;
    for (uint32_t i = 0; i < b->split->n; ++i)
        vkc_buffer_destroy(b->buf[i]);
    vkc__list_remove(&b->node);
    b->magic = 0;
    vkc__free(b);
}

vkc_result vkc_split_buffer_part(const vkc_split_buffer *b, uint32_t index, vkc_buffer **out_buffer,
                                 uint64_t *out_first, uint64_t *out_count)
{
    VKC_RETURN_IF(!b || b->magic != VKC_MAGIC_SPLIT_BUFFER, NULL, VKC_ERROR_INVALID_HANDLE,
                  "invalid vkc_split_buffer handle");
    VKC_RETURN_IF(index >= b->split->n, b->split->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                  "split buffer part %u of %u", index, b->split->n);
    if (out_buffer)
        *out_buffer = b->buf[index];
    if (out_first)
        *out_first = b->first[index];
    if (out_count)
        *out_count = b->part[index];
    return VKC_SUCCESS;
}

/* One part's transfer, run by the caller or a helper thread. */
typedef struct vkc__split_job {
    vkc_buffer *buf;
    const void *src;
    void *dst;
    uint64_t size;
    vkc_result r;
} vkc__split_job;

static void *vkc__split_job_run(void *arg)
{
    vkc__split_job *j = arg;
    j->r = j->src ? vkc_buffer_upload(j->buf, 0, j->src, j->size)
                  : vkc_buffer_download(j->buf, 0, j->dst, j->size);
    return NULL;
}

/* Below this many bytes in all, a thread per part costs more than the
 * parts' transfers overlapping saves. */
#define VKC__SPLIT_THREAD_BYTES (4u << 20)

/* Scatter (src given) or gather (dst given). Large transfers run one
 * thread per part beyond the first, so that devices on separate links copy
 * at once (vkc_buffer_upload / download are thread-safe); small ones, part
 * after part in the caller's thread. */
static vkc_result vkc__split_transfer(vkc_split_buffer *b, const void *src, void *dst)
{
    VKC_RETURN_IF(!b || b->magic != VKC_MAGIC_SPLIT_BUFFER, NULL, VKC_ERROR_INVALID_HANDLE,
                  "invalid vkc_split_buffer handle");
    vkc_split *sp = b->split;
    const char *what = src ? "scatter" : "gather";
    if (!src && !dst)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT, "split %s: data is NULL",
                          what);
    vkc__split_job job[VKC_MAX_SPLIT];
    pthread_t th[VKC_MAX_SPLIT];
    bool threaded[VKC_MAX_SPLIT] = {false};
    uint32_t parts = 0;
    for (uint32_t i = 0; i < sp->n; ++i) {
        uint64_t at = b->first[i] * b->element_size;
        job[i] = (vkc__split_job){.buf = b->buf[i],
                                  .src = src ? (const char *)src + at : NULL,
                                  .dst = dst ? (char *)dst + at : NULL,
                                  .size = b->part[i] * b->element_size};
        parts += b->part[i] != 0;
    }
    bool threads = parts > 1 && b->count * b->element_size >= VKC__SPLIT_THREAD_BYTES;
    bool first = true;
    for (uint32_t i = 0; i < sp->n && threads; ++i) {
        if (!b->part[i])
            continue;
        /* The first part stays in this thread; a thread that cannot be
         * started leaves its part to this thread too. */
        if (!first)
            threaded[i] = pthread_create(&th[i], NULL, vkc__split_job_run, &job[i]) == 0;
        first = false;
    }
    for (uint32_t i = 0; i < sp->n; ++i)
        if (b->part[i] && !threaded[i])
            vkc__split_job_run(&job[i]);
    for (uint32_t i = 0; i < sp->n; ++i)
        if (threaded[i])
            pthread_join(th[i], NULL);
    for (uint32_t i = 0; i < sp->n; ++i)
        if (b->part[i] && job[i].r < 0)
            return vkc__split_part_error(sp, i, job[i].r, what);
    return VKC_SUCCESS;
}

vkc_result vkc_split_scatter(vkc_split_buffer *b, const void *data)
{
    if (!data && b && b->magic == VKC_MAGIC_SPLIT_BUFFER)
        return SPLIT_FAIL(b->split, b->split->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split scatter: data is NULL");
    return vkc__split_transfer(b, data, NULL);
}

vkc_result vkc_split_gather(vkc_split_buffer *b, void *data)
{
    return vkc__split_transfer(b, NULL, data);
}

/* ---- waiting ------------------------------------------------------------- */

/* Wait for every part within one deadline; the first failure is returned
 * after all parts were waited for, so no part's work is left running when
 * the call returns an error that it did not time out on. */
static vkc_result vkc__split_wait_all(vkc_split *sp, const vkc_ticket *t, vkc_result first_error)
{
    uint64_t deadline = vkc__split_now() + sp->timeout_ns;
    vkc_result result = first_error;
    for (uint32_t i = 0; i < sp->n; ++i) {
        if (!t[i].value)
            continue;
        uint64_t now = vkc__split_now();
        uint64_t left = now < deadline ? deadline - now : 0;
        vkc_result r = vkc_wait(sp->ctx[i], t[i], left);
        if (r == VKC_TIMEOUT) {
            r = vkc__fail(sp->ctx[i], VKC_TIMEOUT, VK_SUCCESS, __FILE__, __LINE__,
                          "split part %u did not finish within the split's timeout (%llu ms)", i,
                          (unsigned long long)(sp->timeout_ns / 1000000));
        }
        if (r != VKC_SUCCESS && result >= 0) {
            vkc__split_part_error(sp, i, r, "wait");
            result = r;
        }
    }
    return result;
}

vkc_result vkc_split_wait(vkc_split *sp, const vkc_ticket *tickets)
{
    VKC_CHECK_SPLIT(sp);
    if (!tickets)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split wait: tickets is NULL");
    return vkc__split_wait_all(sp, tickets, VKC_SUCCESS);
}

/* After submitting parts [0, i) and failing part i (or a check): wait for
 * what was submitted (bounded), give the tickets back if asked, return r. */
static vkc_result vkc__split_finish(vkc_split *sp, vkc_ticket *t, vkc_result r,
                                    vkc_ticket *out_tickets)
{
    if (out_tickets && r >= 0) {
        memcpy(out_tickets, t, sizeof(*t) * sp->n);
        return r;
    }
    r = vkc__split_wait_all(sp, t, r);
    if (out_tickets)
        memset(out_tickets, 0, sizeof(*t) * sp->n);
    return r;
}

/* Arguments belong to this split and hold count elements. */
static vkc_result vkc__split_check_args(vkc_split *sp, vkc_split_buffer *const *a, uint32_t n,
                                        uint64_t count, const char *what)
{
    if (n && !a)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT, "split %s: %u but NULL", what,
                          n);
    for (uint32_t j = 0; j < n; ++j) {
        const vkc_split_buffer *b = a[j];
        if (!b || b->magic != VKC_MAGIC_SPLIT_BUFFER)
            return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_HANDLE,
                              "split %s[%u]: invalid vkc_split_buffer handle", what, j);
        if (b->split != sp)
            return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                              "split %s[%u]: the buffer belongs to another split", what, j);
        if (b->count != count)
            return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_MISMATCH,
                              "split %s[%u]: the buffer holds %llu elements, the call runs %llu",
                              what, j, (unsigned long long)b->count, (unsigned long long)count);
    }
    return VKC_SUCCESS;
}

static vkc_result vkc__split_check_count(vkc_split *sp, uint64_t count, const char *what)
{
    if (count == 0 || count > UINT32_MAX)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_LIMIT, "split %s: count %llu outside 1..2^32-1",
                          what, (unsigned long long)count);
    for (uint32_t i = 0; i < sp->n; ++i)
        if (atomic_load(&sp->ctx[i]->lost))
            return SPLIT_FAIL(sp, sp->ctx[i], VKC_ERROR_DEVICE_LOST,
                              "split %s: part %u (device \"%s\") was lost earlier", what, i,
                              sp->ctx[i]->info.name);
    return VKC_SUCCESS;
}

/* One per-context object of a split call (a kernel, a graph): valid, and
 * made on the part's own context. */
static vkc_result vkc__split_check_part(vkc_split *sp, bool valid, const vkc_context *owner,
                                        uint32_t i, const char *what)
{
    if (!valid)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_HANDLE, "split: %s[%u] is not valid",
                          what, i);
    if (owner != sp->ctx[i])
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_MISMATCH,
                          "split: %s[%u] was not created on contexts[%u]", what, i, i);
    return VKC_SUCCESS;
}

/* ---- dispatch ------------------------------------------------------------ */

vkc_result vkc_split_dispatch(vkc_split *sp, const vkc_split_dispatch_desc *d,
                              vkc_ticket *out_tickets)
{
    VKC_CHECK_SPLIT(sp);
    if (!d)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split dispatch: desc is NULL");
    VKC_FORWARD(vkc__split_check_count(sp, d->count, "dispatch"));
    if (!d->kernels)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split dispatch: kernels is NULL (one per context)");
    for (uint32_t i = 0; i < sp->n; ++i) {
        const vkc_kernel *k = d->kernels[i];
        bool valid = vkc__obj_is(k, VKC_MAGIC_KERNEL);
        VKC_FORWARD(vkc__split_check_part(sp, valid, valid ? k->obj.ctx : NULL, i, "kernels"));
    }
    VKC_FORWARD(vkc__split_check_args(sp, d->args, d->arg_count, d->count, "dispatch arg"));
    if (d->arg_count > VKC_MAX_BINDINGS)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_LIMIT, "split dispatch: %u args, at most %u",
                          d->arg_count, VKC_MAX_BINDINGS);
    uint8_t push[256];
    if (d->push_size > sizeof(push) || (d->push_size && !d->push))
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split dispatch: push of %u bytes (at most %zu, not NULL)", d->push_size,
                          sizeof(push));
    if ((d->count_in_push &&
         (d->count_offset > d->push_size || d->push_size - d->count_offset < 4)) ||
        (d->first_in_push &&
         (d->first_offset > d->push_size || d->push_size - d->first_offset < 4)))
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split dispatch: the count or first field lies outside the %u push bytes",
                          d->push_size);

    vkc_ticket t[VKC_MAX_SPLIT] = {{0}};
    vkc_arg args[VKC_MAX_BINDINGS];
    uint64_t first[VKC_MAX_SPLIT], part[VKC_MAX_SPLIT];
    vkc__split_ranges(sp, d->count, first, part);
    vkc_result r = VKC_SUCCESS;
    for (uint32_t i = 0; i < sp->n && r >= 0; ++i) {
        if (!part[i])
            continue;
        for (uint32_t j = 0; j < d->arg_count; ++j)
            args[j] = (vkc_arg){.buffer = d->args[j]->buf[i]};
        if (d->push_size)
            memcpy(push, d->push, d->push_size);
        uint32_t n = (uint32_t)part[i], f = (uint32_t)first[i];
        if (d->count_in_push)
            memcpy(push + d->count_offset, &n, 4);
        if (d->first_in_push)
            memcpy(push + d->first_offset, &f, 4);
        r = vkc_dispatch(sp->ctx[i], &(vkc_dispatch_desc){.kernel = d->kernels[i],
                                                          .args = args,
                                                          .arg_count = d->arg_count,
                                                          .push = d->push_size ? push : NULL,
                                                          .push_size = d->push_size,
                                                          .count = part[i],
                                                          .label = d->label});
        if (r >= 0)
            r = vkc_flush(sp->ctx[i], &t[i]);
        if (r < 0)
            vkc__split_part_error(sp, i, r, "dispatch");
    }
    return vkc__split_finish(sp, t, r, out_tickets);
}

/* ---- fusion -------------------------------------------------------------- */

static vkc_result vkc__split_check_graph(vkc_split *sp, vkc_fuse *const *fuses)
{
    if (!fuses)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split fuse: fuses is NULL (one graph per context)");
    uint64_t hash = 0;
    for (uint32_t i = 0; i < sp->n; ++i) {
        vkc_fuse *f = fuses[i];
        bool valid = vkc__obj_is(f, VKC_MAGIC_FUSE);
        VKC_FORWARD(vkc__split_check_part(sp, valid, valid ? f->obj.ctx : NULL, i, "fuses"));
        vkc_result r = vkc_fuse_build(f);
        if (r < 0)
            return vkc__split_part_error(sp, i, r, "vkc_fuse_build");
        const vkc__fgraph *g = &f->g;
        for (uint32_t n = 0; n < g->count; ++n) {
            const vkc__fnode *nd = &g->nodes[n];
            if (nd->kind == VKC__FN_INPUT && nd->period)
                return SPLIT_FAIL(sp, sp->ctx[i], VKC_ERROR_UNSUPPORTED,
                                  "split fuse: graph \"%s\" input %u is broadcast (period %u): "
                                  "its index spans the whole range",
                                  f->name, nd->index, nd->period);
            if (nd->kind == VKC__FN_OP && nd->op == VKC_OP_DROPOUT)
                return SPLIT_FAIL(sp, sp->ctx[i], VKC_ERROR_UNSUPPORTED,
                                  "split fuse: graph \"%s\" has dropout: its mask is drawn from "
                                  "the element index, which a split renumbers",
                                  f->name);
        }
        vkc_fuse_info info;
        VKC_FORWARD(vkc_fuse_info_get(f, &info));
        if (i == 0)
            hash = info.structure_hash;
        else if (info.structure_hash != hash)
            return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_MISMATCH,
                              "split fuse: fuses[%u] is not the same graph as fuses[0]", i);
    }
    return VKC_SUCCESS;
}

/* The parts' reductions, waited for, combined into one on the host. */
static vkc_result vkc__split_combine(vkc_split *sp, uint8_t op, uint64_t count,
                                     const uint64_t *part, float *out)
{
    double acc = 0;
    bool any = false;
    for (uint32_t i = 0; i < sp->n; ++i) {
        if (!part[i])
            continue;
        float v;
        vkc_result r = vkc_buffer_download(sp->partial[i], 0, &v, sizeof(v));
        if (r < 0)
            return vkc__split_part_error(sp, i, r, "reading its reduction");
        if (op == VKC_REDUCE_MEAN)
            acc += (double)v * (double)part[i] / (double)count;
        else if (!any || op == VKC_REDUCE_SUM)
            acc = any ? acc + v : v;
        else
            acc = op == VKC_REDUCE_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
        any = true;
    }
    *out = (float)acc;
    return VKC_SUCCESS;
}

vkc_result vkc_split_fuse(vkc_split *sp, vkc_fuse *const *fuses, const vkc_split_fuse_args *a,
                          vkc_ticket *out_tickets)
{
    VKC_CHECK_SPLIT(sp);
    if (!a)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT, "split fuse: args is NULL");
    VKC_FORWARD(vkc__split_check_count(sp, a->count, "fuse"));
    VKC_FORWARD(vkc__split_check_graph(sp, fuses));
    bool reduce = fuses[0]->g.reduce_node >= 0;
    if (reduce && (!a->reduce_result || out_tickets))
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split fuse: graph \"%s\" has a reduction: give args.reduce_result "
                          "and no out_tickets (the parts' results are combined on the host)",
                          fuses[0]->name);
    if (!reduce && a->reduce_result)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_INVALID_ARGUMENT,
                          "split fuse: args.reduce_result given but graph \"%s\" has no reduction",
                          fuses[0]->name);
    VKC_FORWARD(vkc__split_check_args(sp, a->inputs, a->input_count, a->count, "fuse input"));
    VKC_FORWARD(vkc__split_check_args(sp, a->outputs, a->output_count, a->count, "fuse output"));
    if (a->input_count > VKC_MAX_BINDINGS || a->output_count > VKC_MAX_BINDINGS)
        return SPLIT_FAIL(sp, sp->ctx[0], VKC_ERROR_LIMIT, "split fuse: more than %u buffers",
                          VKC_MAX_BINDINGS);

    vkc_ticket t[VKC_MAX_SPLIT] = {{0}};
    vkc_arg in[VKC_MAX_BINDINGS], out[VKC_MAX_BINDINGS];
    uint64_t first[VKC_MAX_SPLIT], part[VKC_MAX_SPLIT];
    vkc__split_ranges(sp, a->count, first, part);
    vkc_result r = VKC_SUCCESS;
    for (uint32_t i = 0; i < sp->n && r >= 0; ++i) {
        if (!part[i])
            continue;
        vkc_context *ctx = sp->ctx[i];
        /* The sequence's last submission must be done before it is recorded
         * again (bounded, like every wait here). */
        if (sp->pending[i].value) {
            r = vkc_wait(ctx, sp->pending[i], sp->timeout_ns);
            if (r == VKC_TIMEOUT)
                r = VKC_FAIL(ctx, VKC_TIMEOUT, "split part %u: the previous run did not finish", i);
            if (r < 0) {
                vkc__split_part_error(sp, i, r, "wait for the previous run");
                break;
            }
            sp->pending[i] = (vkc_ticket){0};
        }
        if (!sp->seq[i])
            r = vkc_seq_create(ctx, &(vkc_seq_desc){"vkc split"}, &sp->seq[i]);
        else
            r = vkc_seq_begin(sp->seq[i]);
        for (uint32_t j = 0; j < a->input_count; ++j)
            in[j] = (vkc_arg){.buffer = a->inputs[j]->buf[i]};
        for (uint32_t j = 0; j < a->output_count; ++j)
            out[j] = (vkc_arg){.buffer = a->outputs[j]->buf[i]};
        if (r >= 0 && reduce && !sp->partial[i])
            r = vkc_buffer_create(ctx,
                                  &(vkc_buffer_desc){.size = 4,
                                                     .memory = VKC_MEMORY_READBACK,
                                                     .name = "vkc split partial"},
                                  &sp->partial[i]);
        if (r >= 0)
            r = vkc_fuse_record(
                sp->seq[i], fuses[i],
                &(vkc_fuse_args){.inputs = in,
                                 .input_count = a->input_count,
                                 .outputs = out,
                                 .output_count = a->output_count,
                                 .scalars = a->scalars,
                                 .scalar_count = a->scalar_count,
                                 .reduce = {.buffer = reduce ? sp->partial[i] : NULL},
                                 .count = part[i],
                                 .label = a->label});
        if (r >= 0)
            r = vkc_seq_end(sp->seq[i]);
        if (r >= 0)
            r = vkc_seq_submit(sp->seq[i], &t[i]);
        if (r >= 0)
            sp->pending[i] = t[i];
        else
            vkc__split_part_error(sp, i, r, "fuse");
    }
    r = vkc__split_finish(sp, t, r, out_tickets);
    if (r < 0 || !reduce)
        return r;
    return vkc__split_combine(sp, fuses[0]->g.reduce_op, a->count, part, a->reduce_result);
}
