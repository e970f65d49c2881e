/* libFuzzer target: src/spirv.c and src/spirv_reflect.c on arbitrary bytes, through
 * vkc_kernel_create: vkc__spirv_words (byte order, alignment),
 * vkc__spirv_check (header, SPIRV-Tools validator) and vkc__spirv_reflect
 * (entry point, workgroup size, bindings, push constants, capabilities).
 * Any result code is fine; a crash, a sanitizer report, a leak or a hang is
 * not. A module that passes vkc's checks is also built into a pipeline by
 * the driver (src/kernel.c), and then destroyed. */
#include "fuzz_common.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vkc_context *ctx = vkc_fuzz_context();
    vkc_kernel *k = NULL;
    /* The first byte picks the entry point name, so that mismatches are
     * explored too. */
    static const char *const entries[] = {NULL, "main", "nope", ""};
    const char *entry = NULL;
    if (size >= 1 && (size & 3) == 1) {
        entry = entries[data[0] & 3];
        data++;
        size--;
    }
    vkc_result r =
        vkc_kernel_create(ctx,
                          &(vkc_kernel_desc){.spirv = (const uint32_t *)(const void *)data,
                                             .spirv_size = size,
                                             .entry = entry,
                                             .name = "fuzz"},
                          &k);
    if (r == VKC_SUCCESS) {
        vkc_kernel_info info;
        if (vkc_kernel_info_get(k, &info) != VKC_SUCCESS || info.binding_count > VKC_MAX_BINDINGS)
            abort();
        vkc_kernel_destroy(k);
    } else if (k) {
        abort(); /* outputs are NULL on failure */
    }
    return 0;
}
