/* Kernel statistics and occupancy (vkc_kernel_stats_get): the driver's
 * pipeline-executable statistics where the device has them, and the
 * theoretical occupancy from the kernel's workgroup size, shared memory and
 * registers against the device's limits.
 *
 * Owns: nothing beyond the call. Calls: the kernel's pipeline (read only),
 * the device tables, the context (errors); no profile state. */
#include "vkc_internal.h"

#include <inttypes.h>
#include <stdio.h>

/* ---- kernel statistics and occupancy ------------------------------------------------------------
 */

/* Assumed where Vulkan does not say: resident workgroups per SM (the
 * common hardware limit on NVIDIA since Volta is 32) and, on NVIDIA, a
 * register file of 65536 32-bit registers per SM (every architecture since
 * Kepler). */
#define VKC_WORKGROUPS_PER_SM 32u
#define VKC_NV_REGISTERS_PER_SM 65536u
#define VKC_VENDOR_NVIDIA 0x10deu

static bool vkc__has_word(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] && (hay[i] | 32) == (needle[i] | 32))
            ++i;
        if (i == n)
            return true;
    }
    return false;
}

static uint64_t vkc__stat_u64(const VkPipelineExecutableStatisticKHR *s)
{
    switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        return s->value.b32;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        return s->value.i64 < 0 ? 0 : (uint64_t)s->value.i64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        return s->value.u64;
    default:
        return s->value.f64 < 0 ? 0 : (uint64_t)s->value.f64;
    }
}

/* The driver's statistics of the compute executable. */
static vkc_result vkc__driver_stats(vkc_context *ctx, const vkc_kernel *k, vkc_kernel_stats *out)
{
    VkPipelineInfoKHR pi = {VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = k->pipeline;
    uint32_t n = 0;
    VKC_RETURN_IF_VK(
        ctx,
        VKC_VK(vkGetPipelineExecutablePropertiesKHR,
               ctx->vk.vkGetPipelineExecutablePropertiesKHR(ctx->device, &pi, &n, NULL)),
        "vkGetPipelineExecutablePropertiesKHR");
    if (!n)
        return VKC_SUCCESS;
    VkPipelineExecutablePropertiesKHR props[4];
    for (uint32_t i = 0; i < 4; ++i)
        props[i] = (VkPipelineExecutablePropertiesKHR){
            VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
    n = VKC_MIN(n, 4u);
    VkResult vr = VKC_VK(vkGetPipelineExecutablePropertiesKHR,
                         ctx->vk.vkGetPipelineExecutablePropertiesKHR(ctx->device, &pi, &n, props));
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkGetPipelineExecutablePropertiesKHR", __FILE__, __LINE__);
    /* A compute pipeline has one executable that matters: the first with
     * the compute stage. */
    uint32_t x = 0;
    while (x + 1 < n && !(props[x].stages & VK_SHADER_STAGE_COMPUTE_BIT))
        ++x;
    out->from_driver = true;
    snprintf(out->executable, sizeof(out->executable), "%s", props[x].name);
    if (props[x].subgroupSize)
        out->subgroup_size = props[x].subgroupSize;
    VkPipelineExecutableInfoKHR ei = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = k->pipeline;
    ei.executableIndex = x;
    uint32_t ns = 0;
    VKC_RETURN_IF_VK(
        ctx,
        VKC_VK(vkGetPipelineExecutableStatisticsKHR,
               ctx->vk.vkGetPipelineExecutableStatisticsKHR(ctx->device, &ei, &ns, NULL)),
        "vkGetPipelineExecutableStatisticsKHR");
    VkPipelineExecutableStatisticKHR st[VKC_MAX_KERNEL_STATS];
    for (uint32_t i = 0; i < VKC_MAX_KERNEL_STATS; ++i)
        st[i] =
            (VkPipelineExecutableStatisticKHR){VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    ns = VKC_MIN(ns, (uint32_t)VKC_MAX_KERNEL_STATS);
    vr = VKC_VK(vkGetPipelineExecutableStatisticsKHR,
                ctx->vk.vkGetPipelineExecutableStatisticsKHR(ctx->device, &ei, &ns, st));
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkGetPipelineExecutableStatisticsKHR", __FILE__, __LINE__);
    for (uint32_t i = 0; i < ns; ++i) {
        vkc_kernel_stat *o = &out->stats[out->stat_count++];
        snprintf(o->name, sizeof(o->name), "%s", st[i].name);
        if (st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR)
            snprintf(o->value, sizeof(o->value), "%g", st[i].value.f64);
        else if (st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR)
            snprintf(o->value, sizeof(o->value), "%" PRId64, st[i].value.i64);
        else
            snprintf(o->value, sizeof(o->value), "%" PRIu64, vkc__stat_u64(&st[i]));
        /* Names differ between drivers ("Register Count", "VGPRs",
         * "Spilled VGPRs", "LDS size", "Shared Memory Size", "Subgroup
         * size", "Scratch Memory Size"): matched by their words. */
        const char *nm = st[i].name;
        uint64_t v = vkc__stat_u64(&st[i]);
        /* Not "Local Memory Size": NVIDIA reports 64 GiB there for every
         * kernel on the H200 (a reservation, not spilled bytes). */
        bool spill = vkc__has_word(nm, "spill") || vkc__has_word(nm, "scratch");
        if (spill)
            out->spills = (uint32_t)VKC_MIN(out->spills + v, UINT32_MAX);
        else if (vkc__has_word(nm, "register") || vkc__has_word(nm, "vgpr"))
            out->registers = (uint32_t)VKC_MAX((uint64_t)out->registers, VKC_MIN(v, UINT32_MAX));
        else if (vkc__has_word(nm, "shared") || vkc__has_word(nm, "lds") ||
                 vkc__has_word(nm, "workgroup memory"))
            out->shared_memory =
                (uint32_t)VKC_MAX((uint64_t)out->shared_memory, VKC_MIN(v, UINT32_MAX));
        else if (vkc__has_word(nm, "subgroup size") && v)
            out->subgroup_size = (uint32_t)v;
    }
    return VKC_SUCCESS;
}

vkc_result vkc_kernel_stats_get(vkc_kernel *k, vkc_kernel_stats *out)
{
    if (out)
        memset(out, 0, sizeof(*out));
    if (!vkc__obj_is(k, VKC_MAGIC_KERNEL))
        return vkc__obj_check(NULL, k, VKC_MAGIC_KERNEL, "vkc_kernel_stats_get");
    vkc_context *ctx = k->obj.ctx;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_kernel_stats_get: out is NULL");
    const vkc_device_info *di = &ctx->info;
    memcpy(out->workgroup_size, k->info.workgroup_size, sizeof(out->workgroup_size));
    out->workgroup_invocations =
        k->info.workgroup_size[0] * k->info.workgroup_size[1] * k->info.workgroup_size[2];
    out->subgroup_size = di->subgroup_size ? di->subgroup_size : 1;
    out->shared_memory = k->shared_bytes;
    if (ctx->pipeline_executable_info && ctx->vk.vkGetPipelineExecutableStatisticsKHR)
        VKC_FORWARD(vkc__driver_stats(ctx, k, out));

    /* Theoretical occupancy: resident subgroups per SM each resource
     * allows; the smallest wins. */
    const uint32_t sg = out->subgroup_size;
    const uint32_t per_wg = (out->workgroup_invocations + sg - 1) / sg;
    out->subgroups_per_workgroup = per_wg;
    out->max_subgroups_per_sm = di->warps_per_sm;
    if (!di->warps_per_sm || !per_wg) {
        snprintf(out->limit, sizeof(out->limit),
                 "unknown: the device does not report its subgroups per SM");
        return VKC_SUCCESS;
    }
    const uint32_t max = di->warps_per_sm;
    uint32_t best = (max / per_wg) * per_wg;
    const char *why = "subgroups";
    uint32_t by_wg = VKC_WORKGROUPS_PER_SM * per_wg;
    if (by_wg < best) {
        best = by_wg;
        why = "workgroups";
    }
    if (out->registers && di->vendor_id == VKC_VENDOR_NVIDIA) {
        /* NVIDIA allocates registers per warp in units of 256 (8 per
         * invocation): a count just above a multiple of 8 holds fewer warps
         * than it says. Cooperative grids are sized from this figure, and
         * one workgroup too many never passes its first barrier. */
        const uint64_t regs = ((uint64_t)out->registers + 7u) / 8u * 8u;
        uint64_t per_sg = regs * sg;
        uint32_t wgs = (uint32_t)(VKC_NV_REGISTERS_PER_SM / (per_sg * per_wg));
        if (wgs * per_wg < best) {
            best = wgs * per_wg;
            why = "registers";
        }
    }
    if (out->shared_memory && di->max_shared_memory) {
        uint32_t wgs = di->max_shared_memory / out->shared_memory;
        if (wgs * per_wg < best) {
            best = wgs * per_wg;
            why = "shared memory";
        }
    }
    out->occupancy = best;
    snprintf(out->limit, sizeof(out->limit), "%s: %u of %u subgroups per SM", why, best, max);
    return VKC_SUCCESS;
}
