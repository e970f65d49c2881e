/* The completion epilogue: the submission's own last dispatch publishes its
 * completion to the host, instead of the completion marker after it.
 *
 * The marker (wait.c) is a barrier, a one-invocation dispatch and a host
 * barrier at the end of each submission. On the H200 that costs about 4 us
 * of a 12 us round trip (vkc-bench reuse, job P of the fifth session:
 * raw-seqpoll-gated-arm 8.0-8.2 us, raw-marker-gated-arm 11.9-12.2 us).
 * Kernels vkc builds from GLSL carry shaders/include/vkc_epilogue.glsl
 * after their own main, off by a specialization constant; their second
 * pipeline has it on. A submission whose last dispatch runs alone after a
 * barrier (so everything before it is done when it is) binds that pipeline
 * for it: every workgroup adds to an arrival word when all of its
 * invocations are done, and the last one to arrive publishes the count the
 * marker would have. No barrier, no extra dispatch.
 *
 * Kernels from SPIR-V have no source to append to: spirv_epilogue.c
 * splices the same code into a copy of their module when the pipeline is
 * first wanted (k->epi_splice), and validates the result.
 *
 * Not for: profiled sequences (their end timestamp follows the last
 * dispatch), sequences with images (their layouts go back after the last
 * dispatch), a last level of several commands. Those keep the marker.
 *
 * Nor for grids of more than VKC_EPILOGUE_GROUPS workgroups: every
 * workgroup's arrival is an atomic on one word, and on the H200 262,144 of
 * them cost 650 us against a marker's 4 (vkc-bench fusion, job S of
 * 2026-12-02: vkc-fused 1485 us against 830). A dispatch that large is not
 * latency-bound anyway.
 *
 * Detected, not assumed: a self-test at context creation runs the
 * epilogue over grids of 1 to VKC_EPILOGUE_GROUPS workgroups whose
 * invocations write host-visible memory (readback memory, and device
 * memory where that is mapped), and requires every count to be seen (no later than the
 * timeline says the work is done, give or take a grace) and to be exact;
 * else the epilogue is off and vkc_context_features.epilogue_reason says
 * why. Vulkan orders a shader's writes before the host's reads only
 * through a host barrier, which is what the marker's barrier before the
 * count is; so where the self-test saw a count before every result it had
 * waited for (ctx->epi_mapped false), sequences that write host-visible
 * memory keep the marker.
 *
 * Owns: ctx->epi_* and the kernels' epilogue pipelines. Calls: kernel
 * (vkc__kernel_variant), pool (one-shot units, vkc__submit), memory (the
 * marker buffers' addresses), wait.c (the marker's count). record.c and
 * glsl.c call it. */
#include "vkc_internal.h"

#include "vkc_builtin_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* vkc's specialization constants (VKC_EPILOGUE_SPEC_ID, vkc.h). */
#define VKC_EPI_SPECS 5u
/* Self-test rounds and their grids (64 invocations a workgroup). */
#define VKC_EPI_ROUNDS VKC_EPI_SELFTEST_SUBMITS

/* The extensions the epilogue uses and main renamed, right after #version
 * (glslang takes no #extension from a preamble before the source's
 * #version, and its parse keeps a preamble's macro past an #undef). */
static const char vkc__epi_extensions[] = "#extension GL_EXT_buffer_reference : require\n"
                                          "#extension GL_EXT_buffer_reference_uvec2 : require\n"
                                          "#extension GL_KHR_memory_scope_semantics : require\n"
                                          "#define main vkc_kernel_main_\n";

char *vkc__epilogue_wrap(const char *src, bool *skip)
{
    /* After the line of #version (or before the first line without one),
     * then the line numbers of the source as written. */
    size_t at = 0;
    unsigned line = 1;
    *skip = false;
    for (const char *p = src; *p; ++line) {
        const char *q = p + strspn(p, " \t");
        const char *eol = strchr(p, '\n');
        if (*q == '#' && strncmp(q + 1 + strspn(q + 1, " \t"), "version", 7) == 0) {
            /* The extensions need desktop GLSL 4.50 or later (glslang's
             * default without a #version): others go without. */
            const char *v = q + 1 + strspn(q + 1, " \t") + 7;
            char *end = NULL;
            const long version = strtol(v, &end, 10);
            const char *rest = end + strspn(end, " \t");
            if (version < 450 || (*rest != '\n' && *rest != '\r' && *rest != '\0' &&
                                  strncmp(rest, "core", 4) != 0)) {
                *skip = true;
                return NULL;
            }
            at = eol ? (size_t)(eol - src) + 1 : strlen(src);
            break;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    const bool found = at > 0;
    char mark[32];
    snprintf(mark, sizeof(mark), "#line %u\n", found ? line + 1 : 1);
    const size_t n = strlen(src), e = strlen(vkc__epi_extensions), m = strlen(mark),
                 g = strlen(vkc__epilogue_glsl);
    char *out = vkc__malloc(n + e + m + g + 3);
    if (!out)
        return NULL;
    char *w = out;
    memcpy(w, src, at);
    w += at;
    if (found && (at == 0 || src[at - 1] != '\n'))
        *w++ = '\n';
    memcpy(w, vkc__epi_extensions, e);
    w += e;
    memcpy(w, mark, m);
    w += m;
    memcpy(w, src + at, n - at);
    w += n - at;
    *w++ = '\n';
    memcpy(w, vkc__epilogue_glsl, g + 1);
    return out;
}

static void vkc__epi_off(vkc_context *ctx, const char *why)
{
    atomic_store(&ctx->epi_on, false);
    snprintf(ctx->epi_reason, sizeof(ctx->epi_reason), "%s", why);
}

/* The spec values: the form (0 where a test mutes it), then the count
 * block's and the host word's device addresses. */
static vkc_result vkc__epi_values(vkc_context *ctx)
{
    uint64_t dev = 0, host = 0;
    VKC_FORWARD(vkc_buffer_address(ctx->marker_count, &dev));
    VKC_FORWARD(vkc_buffer_address(ctx->marker_buf, &host));
    ctx->epi_values[0] = 1u | (ctx->epi_xchg ? 2u : 0u) | (ctx->epi_scoped ? 4u : 0u);
    ctx->epi_values[1] = (uint32_t)dev;
    ctx->epi_values[2] = (uint32_t)(dev >> 32);
    ctx->epi_values[3] = (uint32_t)host;
    ctx->epi_values[4] = (uint32_t)(host >> 32);
    return VKC_SUCCESS;
}

static vkc_result vkc__epi_make(vkc_context *ctx, const vkc_kernel *k, VkPipeline *out)
{
    *out = VK_NULL_HANDLE;
    for (uint32_t i = 0; i < k->spec_count; ++i)
        if (k->spec[i].id >= VKC_EPILOGUE_SPEC_ID &&
            k->spec[i].id < VKC_EPILOGUE_SPEC_ID + VKC_EPI_SPECS)
            return VKC_ERROR_INVALID_ARGUMENT; /* the kernel's own: the marker stays */
    VkSpecializationMapEntry e[VKC_EPI_SPECS];
    uint32_t v[VKC_EPI_SPECS];
    for (uint32_t i = 0; i < VKC_EPI_SPECS; ++i) {
        e[i] = (VkSpecializationMapEntry){VKC_EPILOGUE_SPEC_ID + i, 0, 4};
        v[i] = ctx->epi_values[i];
    }
    if (ctx->test_epi_mute)
        v[0] = 0;
    if (!k->epi_splice)
        return vkc__kernel_variant(ctx, k, NULL, 0, e, v, VKC_EPI_SPECS, out);
    /* Spliced into a copy of the module, which is validated as every
     * module vkc takes is: one the splice got wrong keeps the marker. */
    uint32_t *words = NULL;
    size_t size = 0;
    char msg[256];
    const char *why = vkc__spirv_splice_epilogue(k->spirv, k->spirv_size, k->entry, &words, &size);
    if (!why && !vkc__spirv_file_ok(ctx, words, size, msg, sizeof(msg)))
        why = msg;
    if (why) {
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL, "%s: the epilogue cannot be spliced (%s)",
                 k->name, why);
        vkc__free(words);
        return VKC_ERROR_UNSUPPORTED;
    }
    vkc_result r = vkc__kernel_variant(ctx, k, words, size, e, v, VKC_EPI_SPECS, out);
    vkc__free(words);
    return r;
}

void vkc__epilogue_splice_mark(vkc_context *ctx, vkc_kernel *k)
{
    uint32_t binding;
    if (!ctx->epi_build || vkc__kernel_grid_binding(k, &binding))
        return;
    const char *why = vkc__spirv_splice_check(k->spirv, k->spirv_size, k->entry);
    if (why) {
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
                 "%s: no completion epilogue (%s); its submissions end with the completion marker",
                 k->name, why);
        return;
    }
    k->epilogue = k->epi_splice = true;
}

VkPipeline vkc__epilogue_pipeline(vkc_context *ctx, vkc_kernel *k)
{
    if (!k->epilogue || !atomic_load_explicit(&ctx->epi_on, memory_order_relaxed))
        return VK_NULL_HANDLE;
    int st = atomic_load_explicit(&k->epi_state, memory_order_acquire);
    if (VKC_LIKELY(st == VKC_EPI_READY))
        return k->epi_pipeline;
    int none = VKC_EPI_NONE;
    /* One thread makes it; a recording that finds it in the making takes
     * the marker this once. */
    if (st != VKC_EPI_NONE ||
        !atomic_compare_exchange_strong(&k->epi_state, &none, VKC_EPI_BUILDING))
        return VK_NULL_HANDLE;
    VkPipeline p = VK_NULL_HANDLE;
    if (vkc__epi_make(ctx, k, &p) < 0) {
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
                 "%s: no epilogue pipeline; its submissions end with the completion marker",
                 k->name);
        atomic_store_explicit(&k->epi_state, VKC_EPI_FAILED, memory_order_release);
        return VK_NULL_HANDLE;
    }
    k->epi_pipeline = p;
    atomic_store_explicit(&k->epi_state, VKC_EPI_READY, memory_order_release);
    return p;
}

void vkc__epilogue_drop(vkc_context *ctx, vkc_kernel *k)
{
    if (k->epi_pipeline) {
        ctx->vk.vkDestroyPipeline(ctx->device, k->epi_pipeline, ctx->alloc);
        VKC_STAT_SUB(ctx, pipelines, 1);
        k->epi_again = true; /* device loss: made again with the others */
    }
    k->epi_pipeline = VK_NULL_HANDLE;
    atomic_store(&k->epi_state, VKC_EPI_NONE);
}

/* ---- the self-test ------------------------------------------------------------------ */

/* One round: `groups` workgroups write pattern + index to out (mapped),
 * and the last one publishes the count. Sets *why (static text) on a
 * failure, *early where the count was seen before all the results. */
static vkc_result vkc__epi_round(vkc_context *ctx, vkc_kernel *k, VkPipeline p, vkc_buffer *out,
                                 uint32_t groups, uint32_t pattern, const char **why, bool *early)
{
    volatile uint32_t *m = ctx->marker;
    volatile uint32_t *w = out->mapped;
    const uint32_t n = groups * 64u;
    *why = NULL;
    if (m[0] != (uint32_t)vkc__submitted_value(ctx)) {
        *why = "self-test: the count is not the timeline's value before a submit";
        return VKC_SUCCESS;
    }
    for (uint32_t i = 0; i < n; ++i)
        w[i] = 0; /* before the submit, which makes them visible to the device */
    vkc__cmd *cmd;
    VKC_FORWARD(vkc__oneshot_begin(ctx, &cmd)); /* after everything before */
    VkCommandBuffer cb = cmd->cb;
    ctx->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    const VkDescriptorBufferInfo bi = {out->buffer, out->offset, 4ull * n};
    vkc_result r = vkc__cmd_bind_buffers(ctx, cmd, k, &bi, 1);
    ctx->vk.vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &pattern);
    ctx->vk.vkCmdDispatch(cb, groups, 1, 1);
    /* Formal availability for the check after the wait below. */
    vkc__cmd_barrier(ctx, cb, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    cmd->has_marker = true; /* its last dispatch counts */
    cmd->needs_signal = true;
    uint64_t value = 0;
    if (r >= 0) {
        VkResult vr = VKC_VK(vkEndCommandBuffer, ctx->vk.vkEndCommandBuffer(cb));
        r = vr < 0 ? vkc__vk_fail(ctx, vr, "vkEndCommandBuffer", __FILE__, __LINE__)
                   : vkc__submit(ctx, cmd, &value);
    }
    vkc__cmd_release(ctx, cmd);
    VKC_FORWARD(r);
    /* The results are read the moment the count is seen. */
    const bool seen = vkc__marker_seen(ctx, value);
    for (uint32_t i = 0; seen && i < n && !*early; ++i)
        *early = w[i] != pattern + i;
    r = vkc__wait_value(ctx, value, 5000000000ull, VKC_WAIT_BLOCK);
    if (r == VKC_TIMEOUT) {
        *why = "self-test: the timeline did not reach a submission within 5 s";
        return VKC_SUCCESS;
    }
    VKC_FORWARD(r);
    if (!seen)
        *why = "self-test: the count was not seen after the timeline signalled";
    else if (m[0] != (uint32_t)value)
        *why = "self-test: the count is not the number of submissions made";
    for (uint32_t i = 0; i < n && !*why; ++i)
        if (w[i] != pattern + i)
            *why = "self-test: a workgroup's results are wrong";
    return VKC_SUCCESS;
}

/* The rounds write, in turn, readback memory and device memory where that
 * is mapped too (integrated GPUs, lavapipe, a resizable BAR). */
static vkc_result vkc__epi_check(vkc_context *ctx, const char **why, bool *early)
{
    vkc_kernel *k = NULL;
    vkc_buffer *out[2] = {NULL, NULL};
    *why = NULL;
    *early = false;
    vkc_result r =
        vkc__kernel_create_words(ctx, "vkc epilogue self-test", vkc_builtin_epilogue_check,
                                 vkc_builtin_epilogue_check_size, "main", 0, NULL, 0, &k);
    for (int i = 0; i < 2 && r >= 0; ++i)
        r = vkc_buffer_create(
            ctx,
            &(vkc_buffer_desc){.size = 4ull * 64 * VKC_EPILOGUE_GROUPS,
                               .memory = i ? VKC_MEMORY_DEVICE : VKC_MEMORY_READBACK,
                               .name = "vkc epilogue self-test"},
            &out[i]);
    if (r >= 0 && (!out[0]->mapped || !out[0]->host_coherent))
        *why = "no host-visible coherent memory for the self-test";
    VkPipeline p = VK_NULL_HANDLE;
    if (r >= 0 && !*why) {
        k->epilogue = true;
        p = vkc__epilogue_pipeline(ctx, k);
        if (!p)
            *why = "self-test: the epilogue pipeline could not be made";
    }
    /* Read by the host through its mapping, as a caller's would be; no
     * barrier is owed for earlier writes (there were none). */
    if (r >= 0 && out[1]->mapped)
        atomic_store(&out[1]->host_read, true);
    const bool device_mapped = r >= 0 && out[1]->mapped && out[1]->host_coherent;
    static const uint32_t grids[VKC_EPI_ROUNDS] = {1, 64, VKC_EPILOGUE_GROUPS,
                                                   1, 7,  VKC_EPILOGUE_GROUPS};
    for (uint32_t i = 0; r >= 0 && !*why && i < VKC_EPI_ROUNDS; ++i)
        r = vkc__epi_round(ctx, k, p, out[device_mapped ? i & 1 : 0], grids[i],
                           0x0e910000u + (i << 20), why, early);
    vkc_buffer_destroy(out[1]);
    vkc_buffer_destroy(out[0]);
    vkc_kernel_destroy(k);
    return r;
}

vkc_result vkc__epilogue_selftest(vkc_context *ctx, const char **why, bool *early)
{
    const bool on = atomic_load(&ctx->epi_on);
    atomic_store(&ctx->epi_on, true);
    vkc_result r = vkc__epi_check(ctx, why, early);
    atomic_store(&ctx->epi_on, on);
    /* A round that failed may have left the count off the timeline (one
     * that never moved, or moved twice): both counts start again. */
    if (r >= 0 && *why && vkc__marker_on(ctx))
        r = vkc__marker_reset(ctx);
    return r;
}

/* VKC_EPILOGUE_FORM (experiments, measured side by side by vkc-bench
 * reuse), comma-separated: "xchg" publishes the count with an atomic
 * exchange; "barrier" keeps the host barrier after the last dispatch also
 * where the sequence writes no host-visible memory; "scoped" uses acquire-release atomics at device
 * scope and a control barrier instead of memoryBarrierBuffer, barrier and plain atomics. "store" is
 * the default. */
static void vkc__epi_form(vkc_context *ctx)
{
    static const char *const names[] = {"store", "xchg", "barrier", "scoped"};
    ctx->epi_xchg = ctx->epi_barrier = ctx->epi_scoped = false;
    const char *form = vkc__env_string("VKC_EPILOGUE_FORM");
    for (const char *p = form; p && *p;) {
        size_t n = strcspn(p, ",");
        size_t i = 0;
        while (i < VKC_ARRAY_COUNT(names) && (strlen(names[i]) != n || strncmp(p, names[i], n)))
            ++i;
        if (i == VKC_ARRAY_COUNT(names)) {
            vkc__env_ignored(ctx, "VKC_EPILOGUE_FORM", form,
                             "store, xchg, barrier, scoped, comma-separated", "the default form");
            ctx->epi_xchg = ctx->epi_barrier = ctx->epi_scoped = false;
            return;
        }
        ctx->epi_xchg |= i == 1;
        ctx->epi_barrier |= i == 2;
        ctx->epi_scoped |= i == 3;
        p += n + (p[n] == ',');
    }
}

vkc_result vkc__epilogue_init(vkc_context *ctx)
{
    atomic_store(&ctx->epi_on, false);
    ctx->epi_build = false;
    const char *why = NULL;
    bool want = true; /* VKC_EPILOGUE=0: for experiments, the marker only */
    if (vkc__env_flag(ctx, "VKC_EPILOGUE", "the default: on", &want) && !want)
        why = "VKC_EPILOGUE=0";
    else if (!ctx->features.buffer_device_address)
        why = "no bufferDeviceAddress";
    else if (!vkc__marker_on(ctx) ||
             !atomic_load_explicit(&ctx->marker_trusted, memory_order_relaxed))
        why = "the completion marker is not used";
    else if (ctx->marker_atomic) /* the count lives in the host word: not the epilogue's form */
        why = "VKC_MARKER_FORM=atomic";
    bool early = false;
    if (!why) {
        vkc__epi_form(ctx);
        VKC_FORWARD(vkc__epi_values(ctx));
        VKC_FORWARD(vkc__epilogue_selftest(ctx, &why, &early));
    }
    if (why) {
        vkc__epi_off(ctx, why);
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL, "completion epilogue not used (%s)", why);
        return VKC_SUCCESS;
    }
    ctx->epi_build = true;
    ctx->epi_mapped = !early;
    atomic_store(&ctx->epi_on, true);
    snprintf(ctx->epi_reason, sizeof(ctx->epi_reason), "%s",
             early ? "self-test passed; results in host-visible memory were seen after the "
                     "count: sequences that write such memory keep the marker"
                   : "self-test passed");
    return VKC_SUCCESS;
}

/* After device-loss recovery the marker's buffers have new addresses; the
 * kernels' epilogue pipelines went with the old device and are made again
 * here, with the new ones (a kernel the recovery rebuilt has the pipelines
 * it had). */
vkc_result vkc__epilogue_rebuild(vkc_context *ctx)
{
    if (atomic_load(&ctx->epi_on) && !vkc__marker_on(ctx))
        vkc__epi_off(ctx, "the completion marker is not used after recovery");
    if (atomic_load(&ctx->epi_on))
        VKC_FORWARD(vkc__epi_values(ctx));
    for (vkc__node *n = ctx->kernels.next; n != &ctx->kernels; n = n->next) {
        vkc_kernel *k = (vkc_kernel *)VKC_OBJ_OF(n);
        if (k->epi_again && k->pipeline)
            (void)vkc__epilogue_pipeline(ctx, k); /* else: the marker, as on a failure */
        k->epi_again = false;
    }
    return VKC_SUCCESS;
}
