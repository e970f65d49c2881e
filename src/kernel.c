/* Kernels: pipelines from SPIR-V (descriptor set and pipeline layouts,
 * specialization constants, the workgroup size), vkc_kernel's create /
 * destroy / queries, and device-loss recovery (lose, rebuild); the kernel
 * module state (vkc__kstate) and its init / finish.
 *
 * Calls spirv.c (validation, reflection), cache.c (the pipeline cache, file
 * reads) and glsl.c (its release at finish); glsl.c calls back into
 * vkc__kernel_create_words. */
#include "vkc_internal.h"

#include <stdio.h>

/* ---- module init / finish --------------------------------------------------------- */

vkc_result vkc__kernel_init(vkc_context *ctx)
{
    vkc__kstate *ks = vkc__calloc(1, sizeof(*ks));
    if (!ks)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "kernel module state");
    ctx->kernel_state = ks;
    if (ctx->api_version >= VK_API_VERSION_1_1 && ctx->vki.vkGetPhysicalDeviceProperties2) {
        VkPhysicalDeviceSubgroupProperties sg = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        p2.pNext = &sg;
        ctx->vki.vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
        if (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
            ks->subgroup_ops = sg.supportedOperations;
    }
    return vkc__cache_init(ctx, &ks->cache);
}

void vkc__kernel_finish(vkc_context *ctx)
{
    vkc__kstate *ks = ctx->kernel_state;
    if (!ks)
        return;
    vkc__cache_finish(ctx, ks->cache);
    vkc__glsl_release(ks);
    vkc__free(ks);
    ctx->kernel_state = NULL;
}

/* ---- kernel creation ----------------------------------------------------------------- */

static void vkc__kernel_free_vk(vkc_context *ctx, vkc_kernel *k);

static void vkc__kernel_obj_free(vkc__obj *o)
{
    vkc_kernel *k = (vkc_kernel *)o;
    vkc__kernel_free_vk(o->ctx, k);
    vkc__free(k->spirv);
    vkc__free(k->entry);
    vkc__free(k->spec);
    vkc__free(k);
}

static void vkc__kernel_free_vk(vkc_context *ctx, vkc_kernel *k)
{
    vkc__epilogue_drop(ctx, k);
    if (k->pipeline) {
        ctx->vk.vkDestroyPipeline(ctx->device, k->pipeline, ctx->alloc);
        VKC_STAT_SUB(ctx, pipelines, 1);
    }
    if (k->layout)
        ctx->vk.vkDestroyPipelineLayout(ctx->device, k->layout, ctx->alloc);
    if (k->set_layout)
        ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, k->set_layout, ctx->alloc);
    k->pipeline = VK_NULL_HANDLE;
    k->layout = VK_NULL_HANDLE;
    k->set_layout = VK_NULL_HANDLE;
}

/* Resolve the workgroup size and build the specialization data. */
static vkc_result vkc__workgroup(vkc_context *ctx, const char *name, const vkc__refl *r,
                                 uint32_t want, const vkc_spec_constant *spec, uint32_t spec_count,
                                 VkSpecializationMapEntry *entries, uint32_t *values,
                                 uint32_t *entry_count, uint32_t wg[3])
{
    VKC_RETURN_IF(spec_count && !spec, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: spec_constant_count is %u but spec_constants is NULL", name, spec_count);
    VKC_RETURN_IF(spec_count > VKC_MAX_SPEC_CONSTANTS, ctx, VKC_ERROR_LIMIT,
                  "%s: %u spec constants (at most %u)", name, spec_count, VKC_MAX_SPEC_CONSTANTS);
    uint32_t n = 0;
    for (uint32_t i = 0; i < spec_count; ++i) {
        for (uint32_t j = 0; j < i; ++j)
            VKC_RETURN_IF(spec[j].id == spec[i].id, ctx, VKC_ERROR_INVALID_ARGUMENT,
                          "%s: spec constant %u given twice", name, spec[i].id);
        VKC_RETURN_IF(r->wg_spec[0] != VKC_NONE && spec[i].id == r->wg_spec[0], ctx,
                      VKC_ERROR_INVALID_ARGUMENT,
                      "%s: spec constant %u is the workgroup size x (local_size_x_id); set it "
                      "with workgroup_size",
                      name, spec[i].id);
        /* A spec constant declared in the shader must be 32 bits wide (the
         * map entries are 4 bytes). */
        VKC_RETURN_IF(r->spec_bits[i], ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: spec constant %u is %u bits wide; vkc sets 32-bit ones only", name,
                      spec[i].id, r->spec_bits[i]);
        entries[n] = (VkSpecializationMapEntry){spec[i].id, n * 4u, 4};
        values[n] = spec[i].value;
        ++n;
    }
    for (int i = 0; i < 3; ++i)
        wg[i] = r->wg[i];
    /* y and z follow the user's spec constants when they are specialisable. */
    for (int i = 1; i < 3; ++i)
        for (uint32_t j = 0; j < spec_count; ++j)
            if (r->wg_spec[i] != VKC_NONE && spec[j].id == r->wg_spec[i])
                wg[i] = spec[j].value;
    if (r->wg_spec[0] != VKC_NONE) {
        uint32_t x = want;
        if (!x) {
            x = ctx->features.default_workgroup_size;
            uint64_t yz = (uint64_t)VKC_MAX(wg[1], 1u) * VKC_MAX(wg[2], 1u);
            while (x > 1 && (uint64_t)x * yz > ctx->info.max_workgroup_invocations)
                x /= 2;
        }
        wg[0] = x;
        entries[n] = (VkSpecializationMapEntry){r->wg_spec[0], n * 4u, 4};
        values[n] = x;
        ++n;
    } else {
        VKC_RETURN_IF(want && want != r->wg[0], ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: the shader fixes local_size_x = %u, so workgroup_size %u cannot be "
                      "applied (declare layout(local_size_x_id = N) in; to make it settable)",
                      name, r->wg[0], want);
    }
    *entry_count = n;
    const vkc_device_info *d = &ctx->info;
    for (int i = 0; i < 3; ++i) {
        VKC_RETURN_IF(wg[i] == 0, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: workgroup size %c is 0",
                      name, "xyz"[i]);
        VKC_RETURN_IF(wg[i] > d->max_workgroup_size[i], ctx, VKC_ERROR_LIMIT,
                      "%s: workgroup size %c = %u exceeds maxComputeWorkGroupSize[%d] = %u", name,
                      "xyz"[i], wg[i], i, d -> max_workgroup_size[i]);
    }
    uint64_t inv = (uint64_t)wg[0] * wg[1] * wg[2];
    VKC_RETURN_IF(inv > d->max_workgroup_invocations, ctx, VKC_ERROR_LIMIT,
                  "%s: workgroup %ux%ux%u = %llu invocations exceeds "
                  "maxComputeWorkGroupInvocations = %u",
                  name, wg[0], wg[1], wg[2], (unsigned long long)inv, d->max_workgroup_invocations);
    return VKC_SUCCESS;
}

static vkc_result vkc__kernel_pipeline(vkc_context *ctx, vkc__kstate *ks, const vkc_kernel *k,
                                       const uint32_t *words, size_t size, const char *entry,
                                       const VkSpecializationMapEntry *map, const uint32_t *values,
                                       uint32_t map_count, VkPipeline *out);

static vkc_result vkc__kernel_build(vkc_context *ctx, vkc__kstate *ks, vkc_kernel *k,
                                    const uint32_t *words, size_t size, const char *entry,
                                    uint32_t want_wg, const vkc_spec_constant *spec,
                                    uint32_t spec_count)
{
    const char *name = k->name;
    VKC_FORWARD(vkc__spirv_check(ctx, name, words, size));
    vkc__refl r;
    vkc_result res =
        vkc__spirv_reflect(ctx, name, words, size, entry, ks->subgroup_ops, spec, spec_count, &r);
    VkSpecializationMapEntry map[VKC_MAX_SPEC_CONSTANTS + 1];
    uint32_t values[VKC_MAX_SPEC_CONSTANTS + 1];
    uint32_t map_count = 0;
    uint32_t wg[3] = {1, 1, 1};
    if (res >= 0)
        res = vkc__workgroup(ctx, name, &r, want_wg, spec, spec_count, map, values, &map_count, wg);
    if (res < 0)
        return res;
    if (r.push_size > ctx->info.max_push_constants_size)
        return VKC_FAIL(ctx, VKC_ERROR_LIMIT,
                        "%s: push constants of %u bytes exceed maxPushConstantsSize = %u", name,
                        r.push_size, ctx->info.max_push_constants_size);

    k->info.binding_count = r.binding_count;
    memcpy(k->info.bindings, r.bindings, sizeof(r.bindings));
    k->has_images = false;
    for (uint32_t i = 0; i < r.binding_count; ++i)
        k->has_images |= r.bindings[i].kind != VKC_BINDING_BUFFER;
    k->info.push_constant_size = r.push_size;
    memcpy(k->info.workgroup_size, wg, sizeof(wg));
    k->info.name = k->name;
    k->local_size_x_id = r.wg_spec[0];
    k->shared_bytes = r.shared_bytes;

    VkDescriptorSetLayoutBinding b[VKC_MAX_BINDINGS];
    for (uint32_t i = 0; i < r.binding_count; ++i)
        b[i] =
            (VkDescriptorSetLayoutBinding){.binding = i,
                                           .descriptorType = vkc__descriptor_type(&r.bindings[i]),
                                           .descriptorCount = 1,
                                           .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dci.flags = ctx->features.push_descriptors
                    ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR
                    : 0;
    dci.bindingCount = r.binding_count;
    dci.pBindings = b;
    VKC_RETURN_IF_VK(
        ctx,
        VKC_VK(vkCreateDescriptorSetLayout,
               ctx->vk.vkCreateDescriptorSetLayout(ctx->device, &dci, ctx->alloc, &k->set_layout)),
        "vkCreateDescriptorSetLayout");
    vkc__set_name(ctx, VK_OBJECT_TYPE_DESCRIPTOR_SET_LAYOUT, (uint64_t)k->set_layout, name);

    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, r.push_size};
    VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    lci.setLayoutCount = 1;
    lci.pSetLayouts = &k->set_layout;
    lci.pushConstantRangeCount = r.push_size ? 1 : 0;
    lci.pPushConstantRanges = &pcr;
    VKC_RETURN_IF_VK(ctx,
                     VKC_VK(vkCreatePipelineLayout, ctx->vk.vkCreatePipelineLayout(
                                                        ctx->device, &lci, ctx->alloc, &k->layout)),
                     "vkCreatePipelineLayout");
    vkc__set_name(ctx, VK_OBJECT_TYPE_PIPELINE_LAYOUT, (uint64_t)k->layout, name);

    return vkc__kernel_pipeline(ctx, ks, k, words, size, entry, map, values, map_count,
                                &k->pipeline);
}

/* A compute pipeline of k's SPIR-V on k's layout, with the given
 * specialization; named after k. */
static vkc_result vkc__kernel_pipeline(vkc_context *ctx, vkc__kstate *ks, const vkc_kernel *k,
                                       const uint32_t *words, size_t size, const char *entry,
                                       const VkSpecializationMapEntry *map, const uint32_t *values,
                                       uint32_t map_count, VkPipeline *out)
{
    *out = VK_NULL_HANDLE;
    VkShaderModuleCreateInfo mci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mci.codeSize = size;
    mci.pCode = words;
    VkShaderModule module = VK_NULL_HANDLE;
    VKC_RETURN_IF_VK(ctx,
                     VKC_VK(vkCreateShaderModule,
                            ctx->vk.vkCreateShaderModule(ctx->device, &mci, ctx->alloc, &module)),
                     "vkCreateShaderModule");
    VkSpecializationInfo si = {map_count, map, map_count * sizeof(uint32_t), values};
    VkComputePipelineCreateInfo pci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    if (ctx->pipeline_executable_info) /* vkc_kernel_stats_get reads them */
        pci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    pci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pci.stage.module = module;
    pci.stage.pName = entry;
    pci.stage.pSpecializationInfo = map_count ? &si : NULL;
    pci.layout = k->layout;
    VkResult vr =
        VKC_VK(vkCreateComputePipelines,
               ctx->vk.vkCreateComputePipelines(ctx->device, vkc__cache_pipelines(ks->cache), 1,
                                                &pci, ctx->alloc, out));
    ctx->vk.vkDestroyShaderModule(ctx->device, module, ctx->alloc);
    if (vr < 0) {
        *out = VK_NULL_HANDLE;
        return vkc__vk_fail(ctx, vr, "vkCreateComputePipelines", __FILE__, __LINE__);
    }
    VKC_STAT_ADD(ctx, pipelines, 1);
    vkc__cache_pipeline_used(ks->cache);
    vkc__set_name(ctx, VK_OBJECT_TYPE_PIPELINE, (uint64_t)*out, k->name);
    return VKC_SUCCESS;
}

vkc_result vkc__kernel_variant(vkc_context *ctx, const vkc_kernel *k, const uint32_t *words,
                               size_t size, const VkSpecializationMapEntry *extra,
                               const uint32_t *extra_values, uint32_t extra_count, VkPipeline *out)
{
    *out = VK_NULL_HANDLE;
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks || !k->layout || extra_count > VKC_KERNEL_VARIANT_SPECS, ctx,
                  VKC_ERROR_INVALID_STATE, "%s: no pipeline variant can be made", k->name);
    vkc__refl r;
    VkSpecializationMapEntry map[VKC_MAX_SPEC_CONSTANTS + 1 + VKC_KERNEL_VARIANT_SPECS];
    uint32_t values[VKC_MAX_SPEC_CONSTANTS + 1 + VKC_KERNEL_VARIANT_SPECS];
    uint32_t n = 0;
    uint32_t wg[3] = {1, 1, 1};
    VKC_FORWARD(vkc__spirv_reflect(ctx, k->name, k->spirv, k->spirv_size, k->entry,
                                   ks->subgroup_ops, k->spec, k->spec_count, &r));
    VKC_FORWARD(vkc__workgroup(ctx, k->name, &r, k->want_workgroup_size, k->spec, k->spec_count,
                               map, values, &n, wg));
    for (uint32_t i = 0; i < extra_count; ++i, ++n) {
        map[n] = (VkSpecializationMapEntry){extra[i].constantID, n * 4u, 4};
        values[n] = extra_values[i];
    }
    return vkc__kernel_pipeline(ctx, ks, k, words ? words : k->spirv, words ? size : k->spirv_size,
                                k->entry, map, values, n, out);
}

void vkc__kernel_name(char *out, size_t size, const char *name, const char *path)
{
    if (name && *name) {
        snprintf(out, size, "%s", name);
    } else if (path && *path) {
        const char *base = strrchr(path, '/');
        snprintf(out, size, "%s", base ? base + 1 : path);
    } else {
        snprintf(out, size, "kernel");
    }
}

vkc_result vkc__kernel_create_words(vkc_context *ctx, const char *name, const uint32_t *words,
                                    size_t size, const char *entry, uint32_t wg,
                                    const vkc_spec_constant *spec, uint32_t spec_count,
                                    vkc_kernel **out)
{
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks, ctx, VKC_ERROR_INVALID_STATE, "the kernel module is not initialised");
    vkc_kernel *k = vkc__calloc(1, sizeof(*k));
    if (!k)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "kernel allocation");
    k->obj.ctx = ctx;
    snprintf(k->name, sizeof(k->name), "%s", name);
    vkc_result r =
        vkc__kernel_build(ctx, ks, k, words, size, entry ? entry : "main", wg, spec, spec_count);
    if (r >= 0) {
        /* Kept for device-loss recovery. */
        k->spirv = vkc__malloc(size);
        k->entry = vkc__strdup(entry ? entry : "main");
        k->spec = spec_count ? vkc__calloc(spec_count, sizeof(*spec)) : NULL;
        if (!k->spirv || !k->entry || (spec_count && !k->spec)) {
            r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: copy of the SPIR-V", name);
        } else {
            memcpy(k->spirv, words, size);
            k->spirv_size = size;
            k->want_workgroup_size = wg;
            if (spec_count)
                memcpy(k->spec, spec, spec_count * sizeof(*spec));
            k->spec_count = spec_count;
        }
    }
    if (r < 0) {
        vkc__kernel_free_vk(ctx, k);
        vkc__free(k->spirv);
        vkc__free(k->entry);
        vkc__free(k->spec);
        vkc__free(k);
        return r;
    }
    vkc__obj_init(&k->obj, VKC_MAGIC_KERNEL, ctx, k->name, vkc__kernel_obj_free, &ctx->kernels);
    *out = k;
    return VKC_SUCCESS;
}

vkc_result vkc_kernel_create(vkc_context *ctx, const vkc_kernel_desc *desc, vkc_kernel **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!desc || !out, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_kernel_create: desc and out must not be NULL");
    char name[64];
    vkc__kernel_name(name, sizeof(name), desc->name, desc->path);
    void *file = NULL;
    const void *bytes = desc->spirv;
    size_t size = desc->spirv_size;
    if (!bytes) {
        VKC_RETURN_IF(!desc->path, ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: give SPIR-V words (spirv, spirv_size) or a file (path)", name);
        int err = vkc__read_file(desc->path, &file, &size);
        VKC_RETURN_IF(err, ctx, VKC_ERROR_IO, "%s: cannot read SPIR-V file \"%s\": %s", name,
                      desc->path, strerror(err));
        bytes = file;
    } else {
        VKC_RETURN_IF(desc->path, ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: give either spirv or path, not both", name);
    }
    const uint32_t *words = NULL;
    uint32_t *owned = NULL;
    vkc_result r = vkc__spirv_words(ctx, name, bytes, size, &words, &owned);
    if (r >= 0)
        r = vkc__kernel_create_words(ctx, name, words, size, desc->entry, desc->workgroup_size,
                                     desc->spec_constants, desc->spec_constant_count, out);
    if (r >= 0)
        vkc__epilogue_splice_mark(ctx, *out);
    vkc__free(owned);
    vkc__free(file);
    return r;
}

/* ---- queries and destruction ------------------------------------------------------------ */

void vkc_kernel_destroy(vkc_kernel *kernel)
{
    /* The pipeline goes with the last reference: sequences that recorded
     * it, and work in flight, still hold theirs (not the immediate batches
     * kept for repeats: those that name it let go). */
    if (vkc__obj_is(kernel, VKC_MAGIC_KERNEL))
        vkc__forget_immediate(kernel->obj.ctx, kernel);
    vkc__obj_kill(kernel ? &kernel->obj : NULL, VKC_MAGIC_KERNEL);
}

void vkc__kernel_drop(vkc_context *ctx)
{
    for (vkc__node *n = ctx->kernels.next, *next; n && n != &ctx->kernels; n = next) {
        next = n->next; /* a destroy frees this one at most */
        vkc_kernel_destroy((vkc_kernel *)VKC_OBJ_OF(n));
    }
}

vkc_result vkc_kernel_info_get(const vkc_kernel *kernel, vkc_kernel_info *out)
{
    VKC_FORWARD(vkc__obj_check(NULL, kernel, VKC_MAGIC_KERNEL, "vkc_kernel_info_get"));
    if (!out)
        return VKC_FAIL(kernel->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_kernel_info_get: out is NULL");
    *out = kernel->info;
    out->name = kernel->name;
    return VKC_SUCCESS;
}

vkc_result vkc_kernel_vk(const vkc_kernel *kernel, VkPipeline *pipeline, VkPipelineLayout *layout,
                         VkDescriptorSetLayout *set_layout)
{
    VKC_FORWARD(vkc__obj_check(NULL, kernel, VKC_MAGIC_KERNEL, "vkc_kernel_vk"));
    if (pipeline)
        *pipeline = kernel->pipeline;
    if (layout)
        *layout = kernel->layout;
    if (set_layout)
        *set_layout = kernel->set_layout;
    return VKC_SUCCESS;
}
/* ---- device-loss recovery ---------------------------------------------------------------- */

void vkc__kernel_lose(vkc_context *ctx)
{
    for (vkc__node *n = ctx->kernels.next; n != &ctx->kernels; n = n->next)
        vkc__kernel_free_vk(ctx, (vkc_kernel *)VKC_OBJ_OF(n));
}

vkc_result vkc__kernel_rebuild(vkc_context *ctx)
{
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks, ctx, VKC_ERROR_INVALID_STATE, "the kernel module is not initialised");
    for (vkc__node *n = ctx->kernels.next; n != &ctx->kernels; n = n->next) {
        vkc_kernel *k = (vkc_kernel *)VKC_OBJ_OF(n);
        if (k->pipeline)
            continue;
        vkc_result r = vkc__kernel_build(ctx, ks, k, k->spirv, k->spirv_size, k->entry,
                                         k->want_workgroup_size, k->spec, k->spec_count);
        if (r < 0) {
            vkc__kernel_free_vk(ctx, k);
            return r;
        }
    }
    return VKC_SUCCESS;
}
