/* SPIR-V: validation (SPIRV-Tools) and reflection (spirv_reflect.c), for
 * kernel.c and the SPIR-V cache in cache.c; the unit tests/fuzz/fuzz_spirv.c
 * targets (through vkc_kernel_create: vkc__spirv_words, vkc__spirv_check,
 * vkc__spirv_reflect).
 *
 * Untrusted SPIR-V goes through the SPIRV-Tools validator before anything
 * else looks at it: the driver (and the validation layer) may hang or crash
 * on a malformed module. Reflection is a small parser of our own that reads
 * only what vkc needs: the compute entry point, its workgroup size, the
 * buffer bindings of set 0 with their access and sizes, the push-constant
 * block, the capabilities and the spec constants' widths.
 *
 * Owns no state. Calls only SPIRV-Tools and vkc_internal.h's basics
 * (allocation, errors); no Vulkan object is created here. */
#include "vkc_internal.h"

#include <stdio.h>

#include <spirv-tools/libspirv.h>

/* The module's first word, in either byte order. */
enum { SPV_MAGIC = 0x07230203u, SPV_MAGIC_SWAPPED = 0x03022307u };

static spv_target_env vkc__spv_env(const vkc_context *ctx)
{
    if (ctx->api_version >= VK_API_VERSION_1_3)
        return SPV_ENV_VULKAN_1_3;
    if (ctx->api_version >= VK_API_VERSION_1_2)
        return SPV_ENV_VULKAN_1_2;
    if (ctx->api_version >= VK_API_VERSION_1_1)
        return SPV_ENV_VULKAN_1_1;
    return SPV_ENV_VULKAN_1_0;
}

/* Run the SPIRV-Tools validator. On failure the validator's message is
 * written to msg and false returned. */
static bool vkc__spv_validate(const vkc_context *ctx, const uint32_t *words, size_t count,
                              char *msg, size_t msg_size)
{
    spv_context sc = spvContextCreate(vkc__spv_env(ctx));
    if (!sc) {
        snprintf(msg, msg_size, "the SPIR-V validator could not be created");
        return false;
    }
    spv_diagnostic diag = NULL;
    spv_result_t r = spvValidateBinary(sc, words, count, &diag);
    if (r != SPV_SUCCESS) {
        if (diag && diag->error)
            snprintf(msg, msg_size, "%s (at word %zu)", diag->error, diag->position.index);
        else
            snprintf(msg, msg_size, "the validator rejected the module (code %d)", (int)r);
    }
    spvDiagnosticDestroy(diag);
    spvContextDestroy(sc);
    return r == SPV_SUCCESS;
}

vkc_result vkc__spirv_check(vkc_context *ctx, const char *name, const uint32_t *words, size_t size)
{
    /* The header first, for clearer messages than the validator's. */
    VKC_RETURN_IF(size < 20, ctx, VKC_ERROR_INVALID_SPIRV,
                  "%s: %zu bytes is shorter than the SPIR-V header (20 bytes)", name, size);
    VKC_RETURN_IF(words[0] != SPV_MAGIC, ctx, VKC_ERROR_INVALID_SPIRV,
                  "%s: bad magic number 0x%08x (SPIR-V starts with 0x07230203)", name, words[0]);
    uint32_t max_version = vkc__spv_env(ctx) == SPV_ENV_VULKAN_1_3   ? 0x00010600u
                           : vkc__spv_env(ctx) == SPV_ENV_VULKAN_1_2 ? 0x00010500u
                           : vkc__spv_env(ctx) == SPV_ENV_VULKAN_1_1 ? 0x00010300u
                                                                     : 0x00010000u;
    VKC_RETURN_IF((words[1] & 0xff0000ffu) || words[1] < 0x00010000u || words[1] > max_version, ctx,
                  VKC_ERROR_INVALID_SPIRV,
                  "%s: SPIR-V version %u.%u (word 0x%08x) is not accepted: the device's Vulkan "
                  "%u.%u takes SPIR-V 1.0 to 1.%u",
                  name, (words[1] >> 16) & 0xffu, (words[1] >> 8) & 0xffu, words[1],
                  VK_API_VERSION_MAJOR(ctx->api_version), VK_API_VERSION_MINOR(ctx->api_version),
                  (max_version >> 8) & 0xffu);
    char msg[1024];
    if (!vkc__spv_validate(ctx, words, size / 4, msg, sizeof(msg)))
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV, "%s: %s", name, msg);
    return VKC_SUCCESS;
}

bool vkc__spirv_file_ok(const vkc_context *ctx, const void *data, size_t size, char *msg,
                        size_t msg_size)
{
    uint32_t first = 0;
    if (size >= 20 && size % 4 == 0)
        memcpy(&first, data, 4);
    if (first != SPV_MAGIC) {
        snprintf(msg, msg_size, "not a SPIR-V module");
        return false;
    }
    return vkc__spv_validate(ctx, data, size / 4, msg, msg_size);
}

vkc_result vkc__spirv_words(vkc_context *ctx, const char *name, const void *bytes, size_t size,
                            const uint32_t **words, uint32_t **owned)
{
    *owned = NULL;
    *words = NULL;
    VKC_RETURN_IF(size == 0, ctx, VKC_ERROR_INVALID_SPIRV, "%s: the SPIR-V module is empty", name);
    VKC_RETURN_IF(size % 4, ctx, VKC_ERROR_INVALID_SPIRV,
                  "%s: the size (%zu bytes) is not a multiple of 4", name, size);
    VKC_RETURN_IF(size > VKC_MAX_FILE_BYTES, ctx, VKC_ERROR_LIMIT,
                  "%s: the SPIR-V module is %zu bytes (vkc's limit is %u)", name, size,
                  VKC_MAX_FILE_BYTES);
    uint32_t first;
    memcpy(&first, bytes, 4);
    bool swapped = first == SPV_MAGIC_SWAPPED;
    if (!swapped && ((uintptr_t)bytes & 3u) == 0) {
        *words = bytes;
        return VKC_SUCCESS;
    }
    uint32_t *copy = vkc__malloc(size);
    if (!copy)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "SPIR-V copy");
    memcpy(copy, bytes, size);
    if (swapped)
        for (size_t i = 0; i < size / 4; ++i)
            copy[i] = __builtin_bswap32(copy[i]);
    *words = copy;
    *owned = copy;
    return VKC_SUCCESS;
}
