/* Keep the loader, the driver and the layer mapped after they are closed, so
 * LeakSanitizer can name the module of a driver-owned leak at exit and the
 * suppressions in lsan.supp can match it. Linked into tests, and into the
 * samples of sanitizer builds. Test-only. */
#include <dlfcn.h>
#include <stddef.h>

__attribute__((constructor)) static void vkc_test_pin_modules(void)
{
    static const char *const libs[] = {"libvulkan.so.1", "libvulkan_lvp.so",
                                       "libVkLayer_khronos_validation.so"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); ++i)
        (void)dlopen(libs[i], RTLD_NOW | RTLD_NODELETE | RTLD_GLOBAL);
}
