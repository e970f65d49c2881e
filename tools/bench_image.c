/* Image scenarios: the renderer sample's post-process chain (samples/postfx.h)
 * through vkc and through raw Vulkan with hand-placed barriers.
 *
 * One frame = bright pass (full -> half resolution), horizontal and vertical
 * blur at half resolution, composite + tone map (full resolution, RGBA8):
 * four dispatches on four images. vkc places its barriers and layout
 * transitions itself; the raw baseline records three global memory barriers
 * between the passes by hand, all images in GENERAL. Both run the same SPIR-V
 * on equal images (created the same, the same HDR input) and are checked
 * against the CPU reference and each other.
 *
 * Per frame: CPU time (submit + wait, the sequence or command buffer recorded
 * once) and GPU time, from timestamps written by two command buffers that
 * bracket the frame's submission on the same queue (the same method for both;
 * see "the GPU-time bracket" for why it is gated). Two more raw recordings
 * add, one step at a time, what vkc records beyond raw, so that the GPU rows
 * say what each costs. vkc runs twice: as recorded by default, and with
 * the completion marker left out (vkc-marker-off), as the renderer's
 * sequence that hands its frame back to graphics goes. */
#include "bench.h"
#include "bench_shaders.h"
#include "postfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POSTFX_PASSES 4

/* A synthetic HDR frame: a dim gradient, bright discs of several sizes (the
 * bloom's sources) and a thin bright line. */
static void make_frame(uint32_t w, uint32_t h, uint16_t *hdr16, float *hdr)
{
    static const float disc[5][6] = {/* x, y (fractions), radius (fraction of h), r, g, b */
                                     {0.25f, 0.30f, 0.06f, 9.0f, 6.0f, 2.5f},
                                     {0.70f, 0.35f, 0.03f, 2.0f, 4.0f, 12.0f},
                                     {0.55f, 0.70f, 0.10f, 3.0f, 2.2f, 1.6f},
                                     {0.12f, 0.80f, 0.015f, 20.0f, 20.0f, 20.0f},
                                     {0.88f, 0.75f, 0.05f, 1.4f, 1.3f, 1.2f}};
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            float fx = (float)x / (float)w, fy = (float)y / (float)h;
            float c[3] = {0.05f + 0.4f * fx, 0.08f + 0.3f * fy, 0.15f + 0.2f * fx * fy};
            for (int d = 0; d < 5; ++d) {
                float dx = ((float)x - disc[d][0] * (float)w) / (float)h;
                float dy = ((float)y - disc[d][1] * (float)h) / (float)h;
                if (dx * dx + dy * dy < disc[d][2] * disc[d][2])
                    for (int k = 0; k < 3; ++k)
                        c[k] = disc[d][3 + k];
            }
            if (y == h / 2 && x > w / 8 && x < w / 2)
                c[0] = c[1] = c[2] = 6.0f;
            for (int k = 0; k < 4; ++k) {
                size_t i = ((size_t)y * w + x) * 4 + (size_t)k;
                hdr16[i] = postfx_half_bits(k < 3 ? c[k] : 1.0f);
                hdr[i] = postfx_half_to_float(hdr16[i]);
            }
        }
}

typedef struct frame_groups {
    uint32_t g[POSTFX_PASSES][3];
} frame_groups;

static frame_groups groups_for(const postfx_params *p)
{
    frame_groups f;
    for (int i = 0; i < POSTFX_PASSES; ++i)
        postfx_groups(p, i, f.g[i]);
    return f;
}

/* The push constants of the four passes. */
typedef struct frame_push {
    postfx_bright_push bright;
    postfx_blur_push blur_h, blur_v;
    postfx_composite_push comp;
} frame_push;

static frame_push push_for(const postfx_params *p)
{
    return (frame_push){postfx_bright_args(p), postfx_blur_args(p, 0), postfx_blur_args(p, 1),
                        postfx_composite_args(p)};
}

/* ---- the GPU-time bracket -------------------------------------------------- */

/* Two command buffers with a timestamp each, submitted before and after the
 * frame's submission on the same queue (vkc's own command buffers cannot
 * carry the bench's queries).
 *
 * Gated (the figure compared): the begin bracket waits on a timeline
 * semaphore that the host signals only once the frame and the end bracket
 * are queued behind it, so the GPU finds the whole frame queued when it
 * writes the first timestamp. The frame itself carries no wait: a wait
 * would change vkc's submission (a submit with host waits also signals
 * vkc's timeline, which a resubmitted sequence does not). That relies on
 * the queue running its batches in submission order, as lavapipe's queue
 * thread and NVIDIA's channel do; a frame run before the gate opened would
 * show as a GPU time of about nothing. Ungated (the method before; kept as a row of its own),
 * the first timestamp is written as soon as the begin bracket arrives and
 * the GPU then idles until the frame's submission is made: the interval
 * holds the host's submit call, which is not GPU time and differs between
 * vkc (vkc_seq_submit: its bookkeeping, vkQueueSubmit2 with a timeline
 * signal) and raw (one vkQueueSubmit). */
typedef struct bracket {
    VkCommandBuffer begin, end;
    VkFence fence;
    VkSemaphore gate; /* VK_NULL_HANDLE without timeline semaphores: ungated only */
    uint64_t gate_value;
    PFN_vkSignalSemaphore signal;
} bracket;

static bool bracket_init(raw *r, bracket *k)
{
    memset(k, 0, sizeof(*k));
    if (!r->queries)
        return true; /* no timestamps: CPU time only */
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (!raw_new_cb(r, &k->begin) || !raw_new_cb(r, &k->end) ||
        !raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &k->fence), "vkCreateFence") ||
        !raw_ok(r, r->vkBeginCommandBuffer(k->begin, &bi), "vkBeginCommandBuffer"))
        return false;
    raw_cmd_ts_begin(r, k->begin);
    if (!raw_ok(r, r->vkEndCommandBuffer(k->begin), "vkEndCommandBuffer") ||
        !raw_ok(r, r->vkBeginCommandBuffer(k->end, &bi), "vkBeginCommandBuffer"))
        return false;
    raw_cmd_ts_end(r, k->end);
    if (!raw_ok(r, r->vkEndCommandBuffer(k->end), "vkEndCommandBuffer"))
        return false;
    if (r->vkGetSemaphoreCounterValue)
        k->signal = (PFN_vkSignalSemaphore)r->h.get_device_proc_addr(r->dev, "vkSignalSemaphore");
    if (!k->signal)
        return true;
    VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
    return raw_ok(r, r->vkCreateSemaphore(r->dev, &sci, NULL, &k->gate), "vkCreateSemaphore");
}

static void bracket_finish(raw *r, bracket *k)
{
    if (k->gate)
        r->vkDestroySemaphore(r->dev, k->gate, NULL);
    if (k->fence)
        r->vkDestroyFence(r->dev, k->fence, NULL);
    VkCommandBuffer cbs[2] = {k->begin, k->end};
    for (int i = 0; i < 2; ++i)
        if (cbs[i])
            r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cbs[i]);
}

/* Submit cb, waiting (on every stage) for gate to reach value when gate is
 * given. */
static bool queue_submit(raw *r, VkCommandBuffer cb, VkFence fence, VkSemaphore gate,
                         uint64_t value)
{
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                        .waitSemaphoreValueCount = 1,
                                        .pWaitSemaphoreValues = &value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .pNext = gate ? &ts : NULL,
                       .waitSemaphoreCount = gate ? 1 : 0,
                       .pWaitSemaphores = &gate,
                       .pWaitDstStageMask = &stage,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    vkc_queue_lock(r->ctx);
    VkResult res = r->vkQueueSubmit(r->h.queue, 1, &si, fence);
    vkc_queue_unlock(r->ctx);
    return raw_ok(r, res, "vkQueueSubmit");
}

/* Submit one frame's work between the bracket's timestamps. */
typedef bool (*frame_fn)(void *user);

/* GPU ns of warm + n frames into gpu[0..n), gated or not; *has false
 * without timestamps (or, gated, without timeline semaphores). */
static bool bracket_time(raw *r, bracket *k, frame_fn frame, void *user, bool gated, uint32_t warm,
                         uint32_t n, double *gpu, bool *has)
{
    *has = r->queries != VK_NULL_HANDLE && (!gated || k->gate);
    for (uint32_t i = 0; *has && i < warm + n; ++i) {
        VkSemaphore gate = gated ? k->gate : VK_NULL_HANDLE;
        uint64_t value = gated ? ++k->gate_value : 0;
        VkSemaphoreSignalInfo open = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = gate, .value = value};
        double ns;
        if (!queue_submit(r, k->begin, VK_NULL_HANDLE, gate, value) || !frame(user) ||
            !queue_submit(r, k->end, k->fence, VK_NULL_HANDLE, 0) ||
            (gated && !raw_ok(r, k->signal(r->dev, &open), "vkSignalSemaphore")) ||
            !raw_ok(r, r->vkWaitForFences(r->dev, 1, &k->fence, VK_TRUE, UINT64_MAX),
                    "vkWaitForFences") ||
            !raw_ok(r, r->vkResetFences(r->dev, 1, &k->fence), "vkResetFences"))
            return false;
        if (!raw_ts_read(r, &ns))
            *has = false;
        else if (i >= warm)
            gpu[i - warm] = ns;
    }
    return true;
}

/* One variant's samples: CPU time per frame (t.wall), GPU time gated
 * (t.gpu) and ungated (ungated). */
typedef struct frame_times {
    bench_times t;
    double *ungated;
    bool has_ungated;
} frame_times;

static bool frame_times_init(frame_times *f, uint32_t warm, uint32_t iters)
{
    f->ungated = calloc(iters, sizeof(double));
    return bench_times_init(&f->t, warm, iters) && f->ungated;
}

static void frame_times_free(frame_times *f)
{
    bench_times_free(&f->t);
    free(f->ungated);
    f->ungated = NULL;
}

/* Both GPU figures of a frame function. */
static bool frame_times_gpu(raw *r, bracket *k, frame_fn frame, void *user, frame_times *f)
{
    return bracket_time(r, k, frame, user, true, f->t.warm, f->t.iters, f->t.gpu, &f->t.has_gpu) &&
           bracket_time(r, k, frame, user, false, f->t.warm, f->t.iters, f->ungated,
                        &f->has_ungated);
}

#define GATED_NOTE                                                                                 \
    "GPU: timestamps around the frame, the GPU gated until the frame and both brackets are "       \
    "queued (host submit time left out)"
#define UNGATED_NOTE                                                                               \
    "GPU: timestamps bracketing the frame's submission, ungated: includes the host's submit call"

/* A GPU record "<variant><suffix>" from n samples (skipped without them). */
static void emit_gpu(bench *b, const char *variant, const char *suffix, double *gpu, uint32_t n,
                     bool has, bool baseline, bool ok, int64_t barriers, const char *note)
{
    char name[64], base[64];
    snprintf(name, sizeof(name), "%s%s", variant, suffix);
    if (!has) {
        bench_skip(b, name, "no timestamps (or, gated, no timeline semaphores) on this queue");
        return;
    }
    snprintf(base, sizeof(base), "postfx/raw%s", suffix);
    bench_rec g = bench_rec_init(b, name, baseline ? base : NULL);
    bench_rec_stats(&g, gpu, n, false);
    g.gpu_per_dispatch_ns = g.p50_us * 1e3 / POSTFX_PASSES;
    g.ok = ok;
    g.barriers = barriers;
    bench_note(&g, "%s", note);
    bench_add(b, &g);
}

/* Records of one variant: CPU time per frame and GPU time per frame, gated
 * and ungated, each with its percentiles; against raw's when baseline. */
static void emit_times(bench *b, frame_times *f, const char *variant, bool baseline, bool ok,
                       const char *note, int64_t barriers)
{
    bench_rec rec = bench_rec_init(b, variant, baseline ? "postfx/raw" : NULL);
    bench_times_rec(&f->t, &rec, POSTFX_PASSES);
    rec.ok = ok;
    rec.barriers = barriers;
    bench_note(&rec, "CPU: submit + wait per frame; %s", note);
    bench_add(b, &rec);
    emit_gpu(b, variant, " gpu", f->t.gpu, f->t.iters, f->t.has_gpu, baseline, ok, barriers,
             GATED_NOTE);
    emit_gpu(b, variant, " gpu-ungated", f->ungated, f->t.iters, f->has_ungated, baseline, ok,
             barriers, UNGATED_NOTE);
}

/* Compare an output with the reference (and the other variant's, when
 * given); the verdict and the figures go into note. */
static bool check_out(const uint8_t *got, const uint8_t *ref, const uint8_t *other,
                      const postfx_params *p, char *note, size_t n)
{
    size_t px = (size_t)p->w * p->h;
    postfx_diff d = postfx_compare(got, ref, px);
    int len = snprintf(note, n, "%ux%u; max |gpu - cpu| %u/255 (tolerance %u), %u pixels over",
                       p->w, p->h, d.max, POSTFX_TOLERANCE, d.over);
    if (other && len > 0 && (size_t)len < n) {
        postfx_diff o = postfx_compare(got, other, px);
        snprintf(note + len, n - (size_t)len, "; max |vkc - raw| %u/255", o.max);
        return d.over == 0 && o.over == 0;
    }
    return d.over == 0;
}

/* ---- raw Vulkan ------------------------------------------------------------ */

/* What a raw recording holds besides the chain, so that the H200 can price
 * what vkc records beyond raw (the command streams differ in these only;
 * descriptors, push constants, workgroup counts and layouts are equal). */
enum {
    RAW_PLAIN = 0,
    /* vkc's barriers: a leading one (after earlier submissions) and, as
     * vkc records them, synchronization2 with COMPUTE|TRANSFER sources */
    RAW_VKC_BARRIERS = 1,
    /* and vkc's completion marker: a barrier, a one-workgroup dispatch
     * that counts the submission, a barrier to the host */
    RAW_VKC_MARKER = 2,
    RAW_FORMS = 3
};
static const char *const raw_form_name[RAW_FORMS] = {"raw", "raw+vkc-barriers",
                                                     "raw+vkc-barriers+marker"};

typedef struct raw_chain {
    raw *r;
    raw_pipe bright, blur, comp, mark;
    raw_img hdr, a, b, ldr;
    raw_buf mx, mseq, mdev; /* the marker's buffers */
    raw_args args[POSTFX_PASSES], margs;
    frame_push push;
    frame_groups g;
    VkCommandBuffer cb[RAW_FORMS];
    VkFence fence;
} raw_chain;

static VkDescriptorImageInfo storage(const raw_img *img)
{
    return (VkDescriptorImageInfo){VK_NULL_HANDLE, img->view, VK_IMAGE_LAYOUT_GENERAL};
}

/* A memory barrier as vkc records it (synchronization2 where enabled). */
static void vkc_like_barrier(raw *r, VkCommandBuffer cb, VkPipelineStageFlags2 src,
                             VkAccessFlags2 sa, VkPipelineStageFlags2 dst, VkAccessFlags2 da)
{
    if (r->vkCmdPipelineBarrier2) {
        VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                               .srcStageMask = src,
                               .srcAccessMask = sa,
                               .dstStageMask = dst,
                               .dstAccessMask = da};
        VkDependencyInfo di = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                               .memoryBarrierCount = 1,
                               .pMemoryBarriers = &mb};
        r->vkCmdPipelineBarrier2(cb, &di);
        return;
    }
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = (VkAccessFlags)sa,
                          .dstAccessMask = (VkAccessFlags)da};
    r->vkCmdPipelineBarrier(cb, (VkPipelineStageFlags)src, (VkPipelineStageFlags)dst, 0, 1, &mb, 0,
                            NULL, 0, NULL);
}

/* vkc's barrier between levels (and before the first: after earlier
 * submissions' compute and transfer work). */
static void vkc_level_barrier(raw *r, VkCommandBuffer cb)
{
    vkc_like_barrier(r, cb,
                     VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT,
                     VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                     VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
}

static void raw_chain_record(raw *r, VkCommandBuffer cb, raw_chain *c, int form)
{
    const void *push[POSTFX_PASSES] = {&c->push.bright, &c->push.blur_h, &c->push.blur_v,
                                       &c->push.comp};
    raw_pipe *pipes[POSTFX_PASSES] = {&c->bright, &c->blur, &c->blur, &c->comp};
    /* Between passes: a (bright wrote it, blur_h reads it); b (written, then
     * read) and a (read, then written); a (blur_v wrote it, composite reads
     * it). */
    for (int i = 0; i < POSTFX_PASSES; ++i) {
        if (form != RAW_PLAIN)
            vkc_level_barrier(r, cb);
        else if (i > 0)
            raw_cmd_barrier(r, cb);
        raw_cmd_dispatch(r, cb, pipes[i], &c->args[i], push[i], c->g.g[i][0], c->g.g[i][1]);
    }
    if (form == RAW_VKC_MARKER) {
        const uint32_t mark[3] = {0, 0, 2}; /* count in device memory, store to the word */
        vkc_level_barrier(r, cb);
        raw_cmd_dispatch(r, cb, &c->mark, &c->margs, mark, 1, 1);
        vkc_like_barrier(r, cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                         VK_ACCESS_2_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                         VK_ACCESS_2_HOST_READ_BIT);
    }
}

/* One raw form's frame for the bracket. */
typedef struct raw_frame {
    raw *r;
    VkCommandBuffer cb;
} raw_frame;

static bool raw_chain_frame(void *user)
{
    raw_frame *f = user;
    return queue_submit(f->r, f->cb, VK_NULL_HANDLE, VK_NULL_HANDLE, 0);
}

static bool raw_chain_init(raw *r, raw_chain *c, const postfx_params *p, const uint16_t *hdr16)
{
    memset(c, 0, sizeof(*c));
    c->r = r;
    c->push = push_for(p);
    c->g = groups_for(p);
    const VkFormat f16 = VK_FORMAT_R16G16B16A16_SFLOAT;
    if (!raw_pipe_create_images(r, BENCH_SPV(postfx_bright), 2, 3, sizeof(postfx_bright_push),
                                &c->bright) ||
        !raw_pipe_create_images(r, BENCH_SPV(postfx_blur), 2, 3, sizeof(postfx_blur_push),
                                &c->blur) ||
        !raw_pipe_create_images(r, BENCH_SPV(postfx_composite), 3, 7, sizeof(postfx_composite_push),
                                &c->comp) ||
        !raw_pipe_create(r, BENCH_SPV(inc_seq), 3, 12, TINY_WG, 0, &c->mark) ||
        !raw_img_create(r, f16, 8, p->w, p->h, &c->hdr) ||
        !raw_img_create(r, f16, 8, p->half_w, p->half_h, &c->a) ||
        !raw_img_create(r, f16, 8, p->half_w, p->half_h, &c->b) ||
        !raw_img_create(r, VK_FORMAT_R8G8B8A8_UNORM, 4, p->w, p->h, &c->ldr) ||
        !raw_img_upload(r, &c->hdr, hdr16) || !raw_buf_create(r, TINY_N * 4, false, &c->mx) ||
        !raw_buf_create(r, 64, true, &c->mseq) || !raw_buf_create(r, 64, false, &c->mdev))
        return false;
    c->args[0] = (raw_args){.img = {storage(&c->hdr), storage(&c->a)}, .n = 2};
    c->args[1] = (raw_args){.img = {storage(&c->a), storage(&c->b)}, .n = 2};
    c->args[2] = (raw_args){.img = {storage(&c->b), storage(&c->a)}, .n = 2};
    c->args[3] = (raw_args){.img = {storage(&c->hdr), storage(&c->a), storage(&c->ldr)}, .n = 3};
    c->margs = (raw_args){.b = {{c->mx.buf, 0, VK_WHOLE_SIZE},
                                {c->mseq.buf, 0, VK_WHOLE_SIZE},
                                {c->mdev.buf, 0, VK_WHOLE_SIZE}},
                          .n = 3};
    raw_pipe *pipes[POSTFX_PASSES] = {&c->bright, &c->blur, &c->blur, &c->comp};
    for (int i = 0; i < POSTFX_PASSES; ++i)
        if (!raw_prepare(r, pipes[i], &c->args[i]))
            return false;
    if (!raw_prepare(r, &c->mark, &c->margs))
        return false;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (int f = 0; f < RAW_FORMS; ++f) {
        if (!raw_new_cb(r, &c->cb[f]) ||
            !raw_ok(r, r->vkBeginCommandBuffer(c->cb[f], &bi), "vkBeginCommandBuffer"))
            return false;
        raw_chain_record(r, c->cb[f], c, f);
        if (!raw_ok(r, r->vkEndCommandBuffer(c->cb[f]), "vkEndCommandBuffer"))
            return false;
    }
    return raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &c->fence), "vkCreateFence");
}

static void raw_chain_finish(raw *r, raw_chain *c)
{
    if (r->dev)
        r->vkDeviceWaitIdle(r->dev);
    if (c->fence)
        r->vkDestroyFence(r->dev, c->fence, NULL);
    for (int f = 0; f < RAW_FORMS; ++f)
        if (c->cb[f])
            r->vkFreeCommandBuffers(r->dev, r->pool, 1, &c->cb[f]);
    raw_img *imgs[4] = {&c->hdr, &c->a, &c->b, &c->ldr};
    for (int i = 0; i < 4; ++i)
        raw_img_destroy(r, imgs[i]);
    raw_buf *bufs[3] = {&c->mx, &c->mseq, &c->mdev};
    for (int i = 0; i < 3; ++i)
        raw_buf_destroy(r, bufs[i]);
    raw_pipe_destroy(r, &c->bright);
    raw_pipe_destroy(r, &c->blur);
    raw_pipe_destroy(r, &c->comp);
    raw_pipe_destroy(r, &c->mark);
}

/* ---- vkc ------------------------------------------------------------------- */

/* The chain in two sequences: as recorded by default, and without the
 * completion marker (vkc_seq_desc.completion_marker OFF), as a renderer
 * records work whose frame its graphics queue takes back (the renderer
 * sample releases its images, which leaves the marker out by default). */
enum { VKC_SEQ_DEFAULT = 0, VKC_SEQ_MARKER_OFF = 1, VKC_SEQS = 2 };
static const char *const vkc_seq_variant[VKC_SEQS] = {"vkc", "vkc-marker-off"};

typedef struct vkc_chain {
    vkc_context *ctx;
    postfx_vkc c;
    vkc_seq *seq[VKC_SEQS];
} vkc_chain;

/* user: the vkc_seq of the frame. */
static bool vkc_chain_frame(void *user)
{
    vkc_ticket t;
    return vkc_seq_submit(user, &t) >= 0;
}

static vkc_result chain_kernel(vkc_context *ctx, const uint32_t *spirv, size_t size,
                               const char *name, vkc_kernel **out)
{
    return vkc_kernel_create(
        ctx, &(vkc_kernel_desc){.spirv = spirv, .spirv_size = size, .name = name}, out);
}

static vkc_result chain_image(vkc_context *ctx, vkc_format f, uint32_t w, uint32_t h,
                              const char *name, vkc_image **out)
{
    return vkc_image_create(
        ctx,
        &(vkc_image_desc){
            .format = f, .width = w, .height = h, .usage = VKC_IMAGE_USAGE_STORAGE, .name = name},
        out);
}

static vkc_result vkc_chain_init(vkc_context *ctx, vkc_chain *c, const postfx_params *p,
                                 const uint16_t *hdr16)
{
    memset(c, 0, sizeof(*c));
    c->ctx = ctx;
    vkc_result res = chain_kernel(ctx, BENCH_SPV(postfx_bright), "postfx_bright", &c->c.bright);
    if (res >= 0)
        res = chain_kernel(ctx, BENCH_SPV(postfx_blur), "postfx_blur", &c->c.blur);
    if (res >= 0)
        res = chain_kernel(ctx, BENCH_SPV(postfx_composite), "postfx_composite", &c->c.composite);
    if (res >= 0)
        res = chain_image(ctx, VKC_FORMAT_RGBA16F, p->w, p->h, "hdr", &c->c.hdr);
    if (res >= 0)
        res = chain_image(ctx, VKC_FORMAT_RGBA16F, p->half_w, p->half_h, "bloom_a", &c->c.a);
    if (res >= 0)
        res = chain_image(ctx, VKC_FORMAT_RGBA16F, p->half_w, p->half_h, "bloom_b", &c->c.b);
    if (res >= 0)
        res = chain_image(ctx, VKC_FORMAT_RGBA8_UNORM, p->w, p->h, "ldr", &c->c.ldr);
    if (res >= 0)
        res = vkc_image_upload(c->c.hdr, NULL, hdr16, (uint64_t)p->w * p->h * 8);
    for (int i = 0; res >= 0 && i < VKC_SEQS; ++i) {
        res = vkc_seq_create(ctx,
                             &(vkc_seq_desc){.name = i ? "postfx-marker-off" : "postfx",
                                             .completion_marker = i ? VKC_OFF : VKC_DEFAULT},
                             &c->seq[i]);
        if (res >= 0)
            res = postfx_vkc_record(c->seq[i], &c->c, p, POSTFX_PASSES);
        if (res >= 0)
            res = vkc_seq_end(c->seq[i]);
    }
    return res;
}

static void vkc_chain_finish(vkc_chain *c)
{
    for (int i = 0; i < VKC_SEQS; ++i)
        vkc_seq_destroy(c->seq[i]);
    vkc_image_destroy(c->c.hdr);
    vkc_image_destroy(c->c.a);
    vkc_image_destroy(c->c.b);
    vkc_image_destroy(c->c.ldr);
    vkc_kernel_destroy(c->c.bright);
    vkc_kernel_destroy(c->c.blur);
    vkc_kernel_destroy(c->c.composite);
}

/* ---- the scenario ------------------------------------------------------------ */

void scen_postfx(bench *b, raw *r)
{
    uint32_t w = b->opt.quick ? 640 : 1920, h = b->opt.quick ? 360 : 1080;
    postfx_params p = postfx_defaults(w, h);
    size_t px = (size_t)w * h;
    char err[256] = "", note[256] = "";
    vkc_context *vctx = b->ctx;
    uint16_t *hdr16 = malloc(px * 8);
    float *hdr = malloc(px * 16);
    uint8_t *ref = malloc(px * 4), *out_raw = malloc(px * 4), *out_vkc = malloc(px * 4);
    frame_times tr = {0}, tv[VKC_SEQS], tx[RAW_FORMS] = {0};
    raw_chain rc;
    vkc_chain vc;
    bracket k;
    memset(tv, 0, sizeof(tv));
    memset(&rc, 0, sizeof(rc));
    memset(&vc, 0, sizeof(vc));
    memset(&k, 0, sizeof(k));
    bool have_raw = false;
    MTRY(hdr16 && hdr && ref && out_raw && out_vkc);
    make_frame(w, h, hdr16, hdr);
    MTRY(postfx_cpu(&p, hdr, ref));
    uint32_t warm = bench_n(b, 2, 10), iters = bench_n(b, 10, 200);
    MTRY(frame_times_init(&tr, warm, iters));
    for (int i = 0; i < VKC_SEQS; ++i)
        MTRY(frame_times_init(&tv[i], warm, iters));
    for (int f = 1; f < RAW_FORMS; ++f)
        MTRY(frame_times_init(&tx[f], warm, iters));

    /* raw Vulkan, hand-placed barriers; then the same recorded with what
     * vkc records beyond it (GPU time only) */
    if (!r) {
        bench_skip(b, "raw", "raw Vulkan could not be set up");
    } else {
        have_raw = raw_chain_init(r, &rc, &p, hdr16) && bracket_init(r, &k);
        bool ok = have_raw;
        for (uint32_t i = 0; ok && i < warm + iters; ++i) {
            uint64_t t0 = bench_now_ns();
            ok = raw_submit_wait(r, rc.cb[RAW_PLAIN], rc.fence, true);
            bench_times_put(&tr.t, i, (double)(bench_now_ns() - t0));
        }
        raw_frame fr = {r, rc.cb[RAW_PLAIN]};
        ok = ok && frame_times_gpu(r, &k, raw_chain_frame, &fr, &tr) &&
             raw_img_download(r, &rc.ldr, out_raw);
        for (int f = 1; ok && f < RAW_FORMS; ++f) {
            fr.cb = rc.cb[f];
            ok = bracket_time(r, &k, raw_chain_frame, &fr, true, warm, iters, tx[f].t.gpu,
                              &tx[f].t.has_gpu);
        }
        if (!ok) {
            bench_fail(b, "raw", "%s", r->err);
            have_raw = false;
        } else {
            bool good = check_out(out_raw, ref, NULL, &p, note, sizeof(note));
            emit_times(b, &tr, "raw", false, good, note, 3);
            for (int f = 1; f < RAW_FORMS; ++f)
                emit_gpu(b, raw_form_name[f], " gpu", tx[f].t.gpu, iters, tx[f].t.has_gpu, true,
                         good, 3,
                         f == RAW_VKC_BARRIERS
                             ? "GPU, gated: raw with vkc's barriers (a leading one; sync2, "
                               "COMPUTE|TRANSFER sources)"
                             : "GPU, gated: raw with vkc's barriers and its completion marker "
                               "(barrier, one-workgroup dispatch, host barrier)");
        }
    }

    /* vkc: the same chain in a sequence recorded once; then recorded
     * without the completion marker. The output image is cleared before
     * each, so that each variant's check sees its own frames. */
    VTRY(vkc_chain_init(vctx, &vc, &p, hdr16));
    vkc_seq_info info = {0};
    VTRY(vkc_seq_info_get(vc.seq[VKC_SEQ_DEFAULT], &info));
    if (r && !k.fence && !bracket_init(r, &k)) {
        snprintf(err, sizeof(err), "%s", r->err);
        goto fail;
    }
    for (int s = 0; s < VKC_SEQS; ++s) {
        VTRY(vkc_image_clear(vc.c.ldr, NULL, &(vkc_clear_value){{0}}));
        for (uint32_t i = 0; i < warm + iters; ++i) {
            vkc_ticket t;
            uint64_t t0 = bench_now_ns();
            VTRY(vkc_seq_submit(vc.seq[s], &t));
            VTRY(vkc_wait(vctx, t, UINT64_MAX));
            bench_times_put(&tv[s].t, i, (double)(bench_now_ns() - t0));
        }
        if (r && !frame_times_gpu(r, &k, vkc_chain_frame, vc.seq[s], &tv[s])) {
            snprintf(err, sizeof(err), "%s", r->err);
            goto fail;
        }
        VTRY(vkc_image_download(vc.c.ldr, NULL, out_vkc, px * 4));
        bool good = check_out(out_vkc, ref, have_raw ? out_raw : NULL, &p, note, sizeof(note));
        emit_times(b, &tv[s], vkc_seq_variant[s], have_raw, good, note, (int64_t)info.barriers);
    }

fail:
    if (err[0])
        bench_fail(b, "vkc", "%s", err);
    vkc_chain_finish(&vc);
    if (r) {
        raw_chain_finish(r, &rc);
        bracket_finish(r, &k);
    }
    frame_times_free(&tr);
    for (int i = 0; i < VKC_SEQS; ++i)
        frame_times_free(&tv[i]);
    for (int f = 1; f < RAW_FORMS; ++f)
        frame_times_free(&tx[f]);
    free(hdr16);
    free(hdr);
    free(ref);
    free(out_raw);
    free(out_vkc);
}
