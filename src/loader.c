/* Loading Vulkan: dlopen of the loader, instance-level function table.
 *
 * Owns: the loader handle, vkc__itable. Calls: nothing of vkc. */
#include "vkc_internal.h"

#include <dlfcn.h>
#include <stdio.h>

/* A library that exports vkGetInstanceProcAddr, or NULL. */
static void *vkc__loader_try(const char *name, void **sym)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    *sym = h ? dlsym(h, "vkGetInstanceProcAddr") : NULL;
    if (h && !*sym) {
        dlclose(h);
        h = NULL;
    }
    return h;
}

vkc_result vkc__loader_open(void **out_handle, vkc__itable *t, char *path, size_t path_size)
{
    static const char *const names[] = {"libvulkan.so.1", "libvulkan.so"};
    void *h = NULL, *sym = NULL;
    const char *name = NULL;
    memset(t, 0, sizeof(*t));
    *out_handle = NULL;
    /* A VKC_LOADER that does not open falls back to the usual names; the
     * caller compares path with it and warns (the context's logger is not
     * this module's to call). */
    const char *env = getenv("VKC_LOADER");
    if (env && *env) {
        h = vkc__loader_try(env, &sym);
        name = env;
    }
    for (size_t i = 0; !h && i < VKC_ARRAY_COUNT(names); ++i) {
        h = vkc__loader_try(names[i], &sym);
        name = names[i];
    }
    if (!h)
        return VKC_ERROR_NO_LOADER;
    /* dlsym returns void *; converting it to a function pointer is what POSIX
     * requires to work. */
    memcpy(&t->vkGetInstanceProcAddr, &sym, sizeof(sym));
    if (path)
        snprintf(path, path_size, "%s", name);
    vkc__itable_load_instance(t, VK_NULL_HANDLE);
    *out_handle = h;
    return VKC_SUCCESS;
}

void vkc__loader_close(void *handle)
{
    if (handle)
        dlclose(handle);
}

#define VKC_LOAD(t, inst, fn) (t)->fn = (PFN_##fn)(t)->vkGetInstanceProcAddr(inst, #fn)

void vkc__itable_load_instance(vkc__itable *t, VkInstance instance)
{
    if (!instance) {
        VKC_LOAD(t, NULL, vkEnumerateInstanceVersion);
        VKC_LOAD(t, NULL, vkEnumerateInstanceLayerProperties);
        VKC_LOAD(t, NULL, vkEnumerateInstanceExtensionProperties);
        VKC_LOAD(t, NULL, vkCreateInstance);
        return;
    }
    VKC_LOAD(t, instance, vkDestroyInstance);
    VKC_LOAD(t, instance, vkEnumeratePhysicalDevices);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceProperties);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceProperties2);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceFeatures2);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceQueueFamilyProperties);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceMemoryProperties);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceFormatProperties);
    VKC_LOAD(t, instance, vkGetPhysicalDeviceImageFormatProperties);
    VKC_LOAD(t, instance, vkEnumerateDeviceExtensionProperties);
    VKC_LOAD(t, instance, vkCreateDevice);
    VKC_LOAD(t, instance, vkGetDeviceProcAddr);
    VKC_LOAD(t, instance, vkCreateDebugUtilsMessengerEXT);
    VKC_LOAD(t, instance, vkDestroyDebugUtilsMessengerEXT);
    VKC_LOAD(t, instance, vkSetDebugUtilsObjectNameEXT);
    VKC_LOAD(t, instance, vkCmdBeginDebugUtilsLabelEXT);
    VKC_LOAD(t, instance, vkCmdEndDebugUtilsLabelEXT);
}

/* ---- fault injection ------------------------------------------------------ */

_Thread_local vkc__fault_state vkc__fault;

bool vkc__fault_tick(const char *call, const void *site)
{
    bool host = call[0] == 'm'; /* "malloc"; every Vulkan call starts with "vk" */
    if ((vkc__fault.only == VKC__FAULT_VK && host) || (vkc__fault.only == VKC__FAULT_HOST && !host))
        return false;
    if (vkc__fault.only_call && strcmp(call, vkc__fault.only_call) != 0)
        return false;
    vkc__fault.calls++;
    if (vkc__fault.trace && vkc__fault.calls <= vkc__fault.trace_cap)
        vkc__fault.trace[vkc__fault.calls - 1] = site;
    if (vkc__fault.fail_at && vkc__fault.calls == vkc__fault.fail_at) {
        vkc__fault.failed_call = call;
        return true;
    }
    return false;
}

bool vkc__fault_tick_site(const char *call, const char *site)
{
    bool fail = vkc__fault_tick(call, site);
    if (fail) {
        const char *base = strrchr(site, '/');
        vkc__fault.failed_site = base ? base + 1 : site;
    }
    return fail;
}

/* Error codes each call may legally return (Vulkan spec, "Return Codes"). */
VkResult vkc__fault_result(const char *call)
{
    if (vkc__fault.forced != VK_SUCCESS)
        return vkc__fault.forced;
    if (!strcmp(call, "vkQueueSubmit") || !strcmp(call, "vkQueueSubmit2") ||
        !strcmp(call, "vkWaitSemaphores") || !strcmp(call, "vkWaitForFences") ||
        !strcmp(call, "vkGetSemaphoreCounterValue") || !strcmp(call, "vkGetFenceStatus") ||
        !strcmp(call, "vkDeviceWaitIdle") || !strcmp(call, "vkQueueWaitIdle"))
        return VK_ERROR_DEVICE_LOST;
    if (!strcmp(call, "vkAllocateDescriptorSets"))
        return VK_ERROR_OUT_OF_POOL_MEMORY;
    if (!strcmp(call, "vkAllocateMemory") || !strcmp(call, "vkMapMemory"))
        return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    if (!strcmp(call, "vkCreateInstance") || !strcmp(call, "vkCreateDevice"))
        return VK_ERROR_INITIALIZATION_FAILED;
    return VK_ERROR_OUT_OF_HOST_MEMORY;
}

/* ---- host allocations --------------------------------------------------- */

#if defined(__GNUC__)
#define VKC_CALLER() __builtin_extract_return_addr(__builtin_return_address(0))
#else
#define VKC_CALLER() NULL
#endif

/* A host allocation made from `caller` fails here (armed, its turn). */
static bool vkc__alloc_fails(void *caller)
{
    if (VKC_UNLIKELY(vkc__fault.armed) && vkc__fault_tick("malloc", caller)) {
        vkc__fault.failed_caller = caller;
        return true;
    }
    return false;
}

void *vkc__malloc(size_t size)
{
    return vkc__alloc_fails(VKC_CALLER()) ? NULL : malloc(size ? size : 1);
}
void *vkc__calloc(size_t count, size_t size)
{
    return vkc__alloc_fails(VKC_CALLER()) ? NULL : calloc(count ? count : 1, size ? size : 1);
}
void *vkc__realloc(void *p, size_t size)
{
    return vkc__alloc_fails(VKC_CALLER()) ? NULL : realloc(p, size ? size : 1);
}
void vkc__free(void *p)
{
    free(p);
}
char *vkc__strdup(const char *s)
{
    if (!s)
        return NULL;
    /* Its caller is the site (each strdup fails apart from the others). */
    if (vkc__alloc_fails(VKC_CALLER()))
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
