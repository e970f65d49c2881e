/* Kernel module: SPIR-V validation and reflection, pipelines, caches. (Being written.) */
#include "vkc_internal.h"

vkc_result vkc__kernel_init(vkc_context *ctx)
{
    return VKC_SUCCESS;
}
void vkc__kernel_finish(vkc_context *ctx) {}
vkc_result vkc_kernel_create(vkc_context *ctx, const vkc_kernel_desc *desc, vkc_kernel **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED, "kernels are not implemented yet");
}
vkc_result vkc_kernel_create_glsl(vkc_context *ctx, const vkc_glsl_desc *desc, vkc_kernel **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED, "kernels are not implemented yet");
}
void vkc_kernel_destroy(vkc_kernel *kernel) {}
vkc_result vkc_kernel_info_get(const vkc_kernel *kernel, vkc_kernel_info *out)
{
    return VKC_ERROR_UNSUPPORTED;
}
vkc_result vkc_kernel_vk(const vkc_kernel *k, VkPipeline *p, VkPipelineLayout *l,
                         VkDescriptorSetLayout *s)
{
    return VKC_ERROR_UNSUPPORTED;
}
void vkc__kernel_lose(vkc_context *ctx) {}
vkc_result vkc__kernel_rebuild(vkc_context *ctx)
{
    return VKC_SUCCESS;
}
