/* libFuzzer target: run-time GLSL compilation (vkc_kernel_create_glsl,
 * src/glsl.c) on arbitrary text, then validation (src/spirv.c), reflection (src/spirv_reflect.c)
 * and pipeline creation of what compiles. Any result code is fine; a crash, a sanitizer report, a
 * leak or a hang is not. */
#include "fuzz_common.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vkc_context *ctx = vkc_fuzz_context();
    char *src = malloc(size + 1);
    if (!src)
        return 0;
    memcpy(src, data, size);
    src[size] = '\0';
    vkc_kernel *k = NULL;
    vkc_result r =
        vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = src, .name = "fuzz.comp"}, &k);
    if (r == VKC_SUCCESS)
        vkc_kernel_destroy(k);
    else if (k)
        abort(); /* outputs are NULL on failure */
    free(src);
    return 0;
}
