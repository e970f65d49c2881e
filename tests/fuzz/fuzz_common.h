/* Shared by the fuzz targets: one real context (lavapipe or whatever the
 * loader finds), created on the first input and kept for the process. */
#ifndef VKC_FUZZ_COMMON_H
#define VKC_FUZZ_COMMON_H

#include "vkc/vkc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* Keep the loader, driver and layer mapped after vkc closes them, so
 * LeakSanitizer can name a driver's module and tests/lsan.supp can match it
 * (as tests/vkc_test.c does). */
__attribute__((constructor)) static void vkc_fuzz_pin_modules(void)
{
    static const char *const libs[] = {"libvulkan.so.1", "libvulkan_lvp.so"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); ++i)
        (void)dlopen(libs[i], RTLD_NOW | RTLD_NODELETE | RTLD_GLOBAL);
}

static vkc_context *vkc_fuzz_ctx;

static void vkc_fuzz_destroy(void)
{
    vkc_context_destroy(vkc_fuzz_ctx);
    vkc_fuzz_ctx = NULL;
}

/* Validation off (speed; the target checks vkc, not the driver), no disk
 * cache (inputs must not leave files behind), no logger (silence). */
static vkc_context *vkc_fuzz_context(void)
{
    if (vkc_fuzz_ctx)
        return vkc_fuzz_ctx;
    vkc_context_desc d = {0};
    d.validation = VKC_OFF;
    d.disk_cache = VKC_OFF;
    vkc_result r = vkc_context_create(&d, &vkc_fuzz_ctx);
    if (r != VKC_SUCCESS) {
        fprintf(stderr, "fuzz: no context: %s: %s\n", vkc_result_string(r),
                vkc_last_create_error());
        abort();
    }
    atexit(vkc_fuzz_destroy);
    return vkc_fuzz_ctx;
}

#endif
