/* A renderer-like host: its own volk, instance and device; its own glslang
 * (glsl.cpp) and SPIRV-Tools (the C API here, whose header also defines a
 * global kDefaultMaxIdBound, as vkc's own copy once did). vkc wraps the
 * host's device and runs two kernels on it: one compiled by the host's
 * glslang, one by vkc's. The result is checked against the CPU. */
#include <volk.h>

#include <spirv-tools/libspirv.h>
#include <vkc/vkc.h>

#include <stdio.h>
#include <stdlib.h>

int host_compile_glsl(const char *source, uint32_t **words, size_t *count);

#define VK(call)                                                                                   \
    do {                                                                                           \
        VkResult r_ = (call);                                                                      \
        if (r_ < 0) {                                                                              \
            fprintf(stderr, "%s: VkResult %d\n", #call, (int)r_);                                  \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Compiled twice: plain by the host's glslang (v *= 2), with PLUS_ONE by
 * vkc's (v += 1). */
static const char *shader = "#version 450\n"
                            "layout(local_size_x_id = 0) in;\n"
                            "layout(set = 0, binding = 0) buffer B { float v[]; };\n"
                            "layout(push_constant) uniform P { uint n; } pc;\n"
                            "void main() {\n"
                            "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
                            "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)\n"
                            "#ifdef PLUS_ONE\n"
                            "    v[i] = v[i] + 1.0;\n"
                            "#else\n"
                            "    v[i] = 2.0 * v[i];\n"
                            "#endif\n"
                            "}\n";

static int run_vkc(vkc_context *ctx, const uint32_t *spirv, size_t words)
{
    enum { N = 5000 };
    static float v[N];
    for (uint32_t i = 0; i < N; ++i)
        v[i] = (float)i;
    uint32_t n = N;
    vkc_buffer *buf = NULL;
    vkc_kernel *k1 = NULL, *k2 = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = sizeof v}, &buf);
    if (r >= 0)
        r = vkc_buffer_upload(buf, 0, v, sizeof v);
    if (r >= 0)
        r = vkc_kernel_create(ctx, &(vkc_kernel_desc){.spirv = spirv, .spirv_size = words * 4},
                              &k1);
    if (r >= 0)
        r = vkc_kernel_create_glsl(ctx,
                                   &(vkc_glsl_desc){.source = shader,
                                                    .name = "plus_one",
                                                    .defines = (const char *const[]){"PLUS_ONE"},
                                                    .define_count = 1},
                                   &k2);
    vkc_arg arg = {.buffer = buf};
    for (int pass = 0; pass < 2 && r >= 0; ++pass)
        r = vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = pass ? k2 : k1,
                                                   .args = &arg,
                                                   .arg_count = 1,
                                                   .push = &n,
                                                   .push_size = sizeof n,
                                                   .count = n});
    if (r >= 0)
        r = vkc_buffer_download(buf, 0, v, sizeof v);
    int bad = r < 0;
    if (r < 0)
        fprintf(stderr, "%s: %s\n", vkc_result_string(r), vkc_context_last_error(ctx));
    for (uint32_t i = 0; i < N && !bad; ++i)
        if (v[i] != 2.0f * (float)i + 1.0f) {
            fprintf(stderr, "v[%u] = %g, want %g\n", i, v[i], 2.0f * (float)i + 1.0f);
            bad = 1;
        }
    vkc_kernel_destroy(k1);
    vkc_kernel_destroy(k2);
    vkc_buffer_destroy(buf);
    return bad;
}

int main(void)
{
    VK(volkInitialize());
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "host",
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstance inst;
    VK(vkCreateInstance(&(VkInstanceCreateInfo){.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                                .pApplicationInfo = &app},
                        NULL, &inst));
    volkLoadInstanceOnly(inst);

    VkPhysicalDevice pds[16];
    uint32_t np = 16;
    VK(vkEnumeratePhysicalDevices(inst, &np, pds));
    VkPhysicalDevice pd = VK_NULL_HANDLE;
    uint32_t family = 0;
    for (uint32_t d = 0; d < np && !pd; ++d) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(pds[d], &props);
        if (props.apiVersion < VK_API_VERSION_1_2)
            continue;
        VkQueueFamilyProperties qf[16];
        uint32_t nq = 16;
        vkGetPhysicalDeviceQueueFamilyProperties(pds[d], &nq, qf);
        for (uint32_t q = 0; q < nq && !pd; ++q)
            if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
                pd = pds[d];
                family = q;
                printf("host: device %s, family %u\n", props.deviceName, q);
            }
    }
    if (!pd) {
        fprintf(stderr, "host: no Vulkan 1.2 device with compute\n");
        return 1;
    }
    VkPhysicalDeviceVulkan12Features have12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    vkGetPhysicalDeviceFeatures2(
        pd, &(VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                         .pNext = &have12});
    VkPhysicalDeviceVulkan12Features use12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .timelineSemaphore = have12.timelineSemaphore};
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDevice dev;
    VK(vkCreateDevice(pd,
                      &(VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                            .pNext = &use12,
                                            .queueCreateInfoCount = 1,
                                            .pQueueCreateInfos = &qci},
                      NULL, &dev));
    volkLoadDevice(dev);

    /* The host's glslang and SPIRV-Tools. */
    uint32_t *spirv = NULL;
    size_t words = 0;
    if (host_compile_glsl(shader, &spirv, &words))
        return 1;
    spv_context sc = spvContextCreate(SPV_ENV_VULKAN_1_1);
    spv_diagnostic diag = NULL;
    spv_result_t sr = spvValidateBinary(sc, spirv, words, &diag);
    if (sr != SPV_SUCCESS || kDefaultMaxIdBound != 0x3FFFFF) {
        fprintf(stderr, "host SPIRV-Tools: %s\n", diag ? diag->error : "bad kDefaultMaxIdBound");
        return 1;
    }
    spvDiagnosticDestroy(diag);
    spvContextDestroy(sc);

    vkc_context *ctx;
    vkc_result r =
        vkc_context_wrap(&(vkc_wrap_desc){.instance = inst,
                                          .physical_device = pd,
                                          .device = dev,
                                          .get_instance_proc_addr = vkGetInstanceProcAddr,
                                          .api_version = VK_API_VERSION_1_2,
                                          .device_features = &use12,
                                          .queue_family = family,
                                          .disk_cache = VKC_OFF},
                         &ctx);
    if (r < 0) {
        fprintf(stderr, "vkc_context_wrap: %s\n", vkc_last_create_error());
        return 1;
    }
    int bad = run_vkc(ctx, spirv, words);
    vkc_context_destroy(ctx);
    free(spirv);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    printf("host_volk_glslang: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
