/* Devices: the instance (validation layer and messenger), physical device
 * enumeration and choice, what a device can do (vkc__read_device_info), the
 * queue family, the VkDevice, the device-dependent defaults, and
 * vkc_system_query.
 *
 * Owns: ctx->instance, messenger, phys, device, queue, info, features.
 * Calls: the loader and error.c; nothing above the context. */
#include "vkc_internal.h"

#include <stdio.h>
#include <strings.h>

/* ---- queue family choice --------------------------------------------------- */

vkc_result vkc_choose_queue_family(const vkc_queue_family_info *families, uint32_t count,
                                   int32_t override_family, uint32_t *out_family,
                                   vkc_queue_reason *out_reason)
{
    if (!families || !out_family || !out_reason)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_choose_queue_family: families, out_family and out_reason must not "
                        "be NULL");
    *out_family = UINT32_MAX;
    *out_reason = VKC_QUEUE_REASON_NONE;
    if (override_family >= 0) {
        if ((uint32_t)override_family >= count ||
            !(families[override_family].flags & VK_QUEUE_COMPUTE_BIT) ||
            families[override_family].count == 0)
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                            "vkc_choose_queue_family: family %d does not exist (%u families), "
                            "lacks compute or has no queue",
                            override_family, count);
        *out_family = (uint32_t)override_family;
        *out_reason = VKC_QUEUE_REASON_OVERRIDE;
        return VKC_SUCCESS;
    }
    int32_t best_only = -1, best_any = -1;
    for (uint32_t i = 0; i < count; ++i) {
        const vkc_queue_family_info *f = &families[i];
        if (!(f->flags & VK_QUEUE_COMPUTE_BIT) || f->count == 0)
            continue;
        if (!(f->flags & VK_QUEUE_GRAPHICS_BIT)) {
            if (best_only < 0 || f->count > families[best_only].count)
                best_only = (int32_t)i;
        }
        if (best_any < 0 || f->count > families[best_any].count)
            best_any = (int32_t)i;
    }
    if (best_only >= 0) {
        *out_family = (uint32_t)best_only;
        *out_reason = VKC_QUEUE_REASON_COMPUTE_ONLY;
        return VKC_SUCCESS;
    }
    if (best_any >= 0) {
        *out_family = (uint32_t)best_any;
        *out_reason = VKC_QUEUE_REASON_NO_COMPUTE_ONLY;
        return VKC_SUCCESS;
    }
    return VKC_FAIL(NULL, VKC_ERROR_NO_COMPUTE_QUEUE,
                    "vkc_choose_queue_family: none of the %u families has compute", count);
}

/* ---- physical devices ------------------------------------------------------ */

static bool vkc__has_ext(const VkExtensionProperties *exts, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; ++i)
        if (!strcmp(exts[i].extensionName, name))
            return true;
    return false;
}

static vkc_device_type vkc__device_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return VKC_DEVICE_TYPE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return VKC_DEVICE_TYPE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return VKC_DEVICE_TYPE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return VKC_DEVICE_TYPE_CPU;
    default:
        return VKC_DEVICE_TYPE_OTHER;
    }
}

/* discrete > integrated > virtual > CPU > other */
static int vkc__type_rank(vkc_device_type t)
{
    switch (t) {
    case VKC_DEVICE_TYPE_DISCRETE:
        return 4;
    case VKC_DEVICE_TYPE_INTEGRATED:
        return 3;
    case VKC_DEVICE_TYPE_VIRTUAL:
        return 2;
    case VKC_DEVICE_TYPE_CPU:
        return 1;
    default:
        return 0;
    }
}

/* Fill info from a physical device (no device needed). Fails only when the
 * extension list cannot be read (out of host memory). */
vkc_result vkc__read_device_info(const vkc__itable *t, VkPhysicalDevice pd, vkc_device_info *info)
{
    memset(info, 0, sizeof(*info));
    VkPhysicalDeviceProperties props;
    t->vkGetPhysicalDeviceProperties(pd, &props);
    uint32_t n_ext = 0;
    VkResult evr = VKC_VK(vkEnumerateDeviceExtensionProperties,
                          t->vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, NULL));
    if (evr < 0)
        return vkc__vk_fail(NULL, evr, "vkEnumerateDeviceExtensionProperties", __FILE__, __LINE__);
    VkExtensionProperties *exts = vkc__calloc(n_ext ? n_ext : 1, sizeof(*exts));
    if (!exts)
        return VKC_FAIL(NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "device extension list");
    evr = VKC_VK(vkEnumerateDeviceExtensionProperties,
                 t->vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, exts));
    if (evr < 0) {
        vkc__free(exts);
        return vkc__vk_fail(NULL, evr, "vkEnumerateDeviceExtensionProperties", __FILE__, __LINE__);
    }
    bool v11 = props.apiVersion >= VK_API_VERSION_1_1;
    bool v12 = props.apiVersion >= VK_API_VERSION_1_2;
    bool v13 = props.apiVersion >= VK_API_VERSION_1_3;
    bool has_nv_sm = vkc__has_ext(exts, n_ext, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    bool has_amd = vkc__has_ext(exts, n_ext, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
    bool has_ssc = v13 || vkc__has_ext(exts, n_ext, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    info->push_descriptor = vkc__has_ext(exts, n_ext, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    info->calibrated_timestamps =
        vkc__has_ext(exts, n_ext, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    info->pipeline_executable_info =
        vkc__has_ext(exts, n_ext, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    const bool has_cond = vkc__has_ext(exts, n_ext, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME);

    snprintf(info->name, sizeof(info->name), "%s", props.deviceName);
    info->vendor_id = props.vendorID;
    info->device_id = props.deviceID;
    info->driver_version = props.driverVersion;
    info->api_version = props.apiVersion;
    info->type = vkc__device_type(props.deviceType);
    memcpy(info->pipeline_cache_uuid, props.pipelineCacheUUID, 16);
    const VkPhysicalDeviceLimits *l = &props.limits;
    for (int i = 0; i < 3; ++i) {
        info->max_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
        info->max_workgroup_count[i] = l->maxComputeWorkGroupCount[i];
    }
    info->max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
    info->max_shared_memory = l->maxComputeSharedMemorySize;
    info->max_push_constants_size = l->maxPushConstantsSize;
    info->max_storage_buffer_range = l->maxStorageBufferRange;
    info->min_storage_buffer_offset_alignment = l->minStorageBufferOffsetAlignment;
    info->timestamp_period = l->timestampPeriod;
    info->max_memory_allocation_size = 1ull << 30; /* the spec's minimum */
    info->subgroup_size = 1;

    if (v11 && t->vkGetPhysicalDeviceProperties2) {
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        VkPhysicalDeviceSubgroupProperties sg = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceMaintenance3Properties m3 = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
        VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceDriverProperties drv = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
        VkPhysicalDeviceSubgroupSizeControlProperties ssc = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
        VkPhysicalDeviceShaderSMBuiltinsPropertiesNV nv = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
        VkPhysicalDeviceShaderCorePropertiesAMD amd = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
        void **next = &p2.pNext;
#define VKC_CHAIN(s)                                                                               \
    do {                                                                                           \
        *next = &(s);                                                                              \
        next = &(s).pNext;                                                                         \
    } while (0)
        VKC_CHAIN(sg);
        VKC_CHAIN(m3);
        VKC_CHAIN(id);
        if (v12 || vkc__has_ext(exts, n_ext, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME))
            VKC_CHAIN(drv);
        if (has_ssc)
            VKC_CHAIN(ssc);
        if (has_nv_sm)
            VKC_CHAIN(nv);
        if (has_amd)
            VKC_CHAIN(amd);
        t->vkGetPhysicalDeviceProperties2(pd, &p2);
        info->subgroup_size = sg.subgroupSize ? sg.subgroupSize : 1;
        info->max_memory_allocation_size = m3.maxMemoryAllocationSize;
        memcpy(info->device_uuid, id.deviceUUID, 16);
        memcpy(info->driver_uuid, id.driverUUID, 16);
        snprintf(info->driver_name, sizeof(info->driver_name), "%s", drv.driverName);
        snprintf(info->driver_info, sizeof(info->driver_info), "%s", drv.driverInfo);
        if (has_ssc) {
            info->min_subgroup_size = ssc.minSubgroupSize;
            info->max_subgroup_size = ssc.maxSubgroupSize;
        }
        if (has_nv_sm && nv.shaderSMCount) {
            info->sm_count = nv.shaderSMCount;
            info->warps_per_sm = nv.shaderWarpsPerSM;
            info->sm_source = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
        } else if (has_amd && amd.shaderEngineCount) {
            info->sm_count = amd.shaderEngineCount * amd.shaderArraysPerEngineCount *
                             amd.computeUnitsPerShaderArray;
            info->warps_per_sm = amd.simdPerComputeUnit * amd.wavefrontsPerSimd;
            info->sm_source = VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME;
        }

        VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        VkPhysicalDeviceVulkan11Features f11 = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
        VkPhysicalDeviceVulkan12Features f12 = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceVulkan13Features f13 = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
        VkPhysicalDeviceConditionalRenderingFeaturesEXT cr = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
        next = &f2.pNext;
        if (v12) {
            VKC_CHAIN(f11);
            VKC_CHAIN(f12);
        }
        if (v13)
            VKC_CHAIN(f13);
        if (has_cond)
            VKC_CHAIN(cr);
#undef VKC_CHAIN
        t->vkGetPhysicalDeviceFeatures2(pd, &f2);
        info->shader_int64 = f2.features.shaderInt64;
        info->shader_float64 = f2.features.shaderFloat64;
        info->storage_image_read_without_format = f2.features.shaderStorageImageReadWithoutFormat;
        info->storage_image_write_without_format = f2.features.shaderStorageImageWriteWithoutFormat;
        if (v12) {
            info->timeline_semaphore = f12.timelineSemaphore;
            info->storage_buffer_8bit = f12.storageBuffer8BitAccess;
            info->storage_buffer_16bit = f11.storageBuffer16BitAccess;
            info->shader_float16 = f12.shaderFloat16;
            info->shader_int8 = f12.shaderInt8;
            info->buffer_device_address = f12.bufferDeviceAddress;
        }
        if (v13) {
            info->synchronization2 = f13.synchronization2;
            info->subgroup_size_control = f13.subgroupSizeControl && f13.computeFullSubgroups;
        }
        info->conditional_rendering = has_cond && cr.conditionalRendering;
    }
    vkc__free(exts);

    uint32_t nq = 0;
    t->vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    VkQueueFamilyProperties qf[VKC_MAX_QUEUE_FAMILIES];
    nq = VKC_MIN(nq, VKC_MAX_QUEUE_FAMILIES);
    t->vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    info->queue_family_count = nq;
    for (uint32_t i = 0; i < nq; ++i) {
        info->queue_families[i].flags = qf[i].queueFlags;
        info->queue_families[i].count = qf[i].queueCount;
        info->queue_families[i].timestamp_valid_bits = qf[i].timestampValidBits;
    }
    info->queue_family = UINT32_MAX;
    if (vkc_choose_queue_family(info->queue_families, nq, -1, &info->queue_family,
                                &info->queue_reason) == VKC_SUCCESS) {
        info->queue_count = qf[info->queue_family].queueCount;
        info->timestamps = qf[info->queue_family].timestampValidBits > 0 && l->timestampPeriod > 0;
    }
    return VKC_SUCCESS;
}

static bool vkc__contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return true;
    for (; *hay; ++hay)
        if (!strncasecmp(hay, needle, n))
            return true;
    return false;
}

/* Index of the device to use: `want` is NULL/"" (best), a number, or a name
 * substring. Returns -1 when nothing matches. */
static int32_t vkc__pick_device(const vkc_device_info *devs, uint32_t n, const char *want)
{
    if (want && *want) {
        char *end = NULL;
        long idx = strtol(want, &end, 10);
        if (end && *end == '\0')
            return (idx >= 0 && (uint32_t)idx < n) ? (int32_t)idx : -1;
        for (uint32_t i = 0; i < n; ++i)
            if (vkc__contains_nocase(devs[i].name, want))
                return (int32_t)i;
        return -1;
    }
    int32_t best = -1;
    for (uint32_t i = 0; i < n; ++i) {
        if (devs[i].queue_family == UINT32_MAX)
            continue; /* cannot compute */
        if (best < 0)
            best = (int32_t)i;
        else {
            int ra = vkc__type_rank(devs[i].type), rb = vkc__type_rank(devs[best].type);
            if (ra > rb || (ra == rb && devs[i].api_version > devs[best].api_version))
                best = (int32_t)i;
        }
    }
    return best;
}

/* ---- instance ------------------------------------------------------------- */

static bool vkc__want_validation(vkc_context *ctx, const vkc_context_desc *desc)
{
    if (desc->validation == VKC_ON)
        return true;
    if (desc->validation == VKC_OFF)
        return false;
    /* The caller's build (vkc.h passes its NDEBUG), not vkc's own. */
    bool v = desc->validation_default == VKC_ON;
    vkc__env_flag(ctx, "VKC_VALIDATION",
                  v ? "the build's default: on (debug build)"
                    : "the build's default: off (NDEBUG build)",
                  &v);
    return v;
}

static VkBool32 VKAPI_PTR vkc__messenger_cb(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                            VkDebugUtilsMessageTypeFlagsEXT types,
                                            const VkDebugUtilsMessengerCallbackDataEXT *data,
                                            void *user)
{
    vkc_context *ctx = user;
    vkc_log_level level = VKC_LOG_DEBUG;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        level = VKC_LOG_ERROR;
    else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        level = VKC_LOG_WARN;
    else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
        level = VKC_LOG_INFO;
    vkc_log_id id = VKC_LOG_ID_LAYER;
    if (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)
        id = VKC_LOG_ID_VALIDATION;
    else if (types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
        id = VKC_LOG_ID_PERFORMANCE;
    const char *msg = data && data->pMessage ? data->pMessage : "(no message)";
    /* VUID-VkSemaphoreSignalInfo-value-03259 on the armed-submission gate
     * (gate.c) is the layer's mistake (1.3.239): it takes a host signal
     * whose waiting submission it has not seen finish for a pending signal
     * operation, and reports the next host signal past it. The gate has no
     * device signals at all, so no signal of it is ever pending. */
    if (data && data->messageIdNumber == (int32_t)0x492e86d1 && data->objectCount >= 1 &&
        ctx->gate && data->pObjects[0].objectHandle == (uint64_t)ctx->gate) {
        level = VKC_LOG_DEBUG;
        id = VKC_LOG_ID_LAYER;
    }
    if (ctx->logger.func)
        ctx->logger.func(ctx->logger.user_data, level, id, msg);
    else if (level >= VKC_LOG_WARN)
        /* Validation was asked for but no logger given: the messages must not
         * vanish, so they go to stderr (ctest fails a sample that prints one). */
        fprintf(stderr, "vkc validation %s: %s\n", level == VKC_LOG_ERROR ? "error" : "warning",
                msg);
    return VK_FALSE;
}

/* Whether a layer is installed. Out of memory while asking is an error (not
 * "absent"): the caller would otherwise silently lose validation. */
static vkc_result vkc__layer_present(const vkc__itable *t, const char *name, bool *found)
{
    *found = false;
    uint32_t n = 0;
    if (!t->vkEnumerateInstanceLayerProperties)
        return VKC_SUCCESS;
    VkResult vr =
        VKC_VK(vkEnumerateInstanceLayerProperties, t->vkEnumerateInstanceLayerProperties(&n, NULL));
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkEnumerateInstanceLayerProperties", __FILE__, __LINE__);
    if (!n)
        return VKC_SUCCESS;
    VkLayerProperties *l = vkc__calloc(n, sizeof(*l));
    if (!l)
        return VKC_FAIL(NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "layer list");
    vr = VKC_VK(vkEnumerateInstanceLayerProperties, t->vkEnumerateInstanceLayerProperties(&n, l));
    if (vr >= 0)
        for (uint32_t i = 0; i < n; ++i)
            if (!strcmp(l[i].layerName, name))
                *found = true;
    vkc__free(l);
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkEnumerateInstanceLayerProperties", __FILE__, __LINE__);
    return VKC_SUCCESS;
}

static vkc_result vkc__instance_ext_present(const vkc__itable *t, const char *layer,
                                            const char *name, bool *found)
{
    *found = false;
    uint32_t n = 0;
    VkResult vr = VKC_VK(vkEnumerateInstanceExtensionProperties,
                         t->vkEnumerateInstanceExtensionProperties(layer, &n, NULL));
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkEnumerateInstanceExtensionProperties", __FILE__, __LINE__);
    if (!n)
        return VKC_SUCCESS;
    VkExtensionProperties *e = vkc__calloc(n, sizeof(*e));
    if (!e)
        return VKC_FAIL(NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "instance extension list");
    vr = VKC_VK(vkEnumerateInstanceExtensionProperties,
                t->vkEnumerateInstanceExtensionProperties(layer, &n, e));
    *found = vr >= 0 && vkc__has_ext(e, n, name);
    vkc__free(e);
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkEnumerateInstanceExtensionProperties", __FILE__, __LINE__);
    return VKC_SUCCESS;
}

#define VKC_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

vkc_result vkc__create_instance(vkc_context *ctx, const vkc_context_desc *desc)
{
    const vkc__itable *t = &ctx->vki;
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (t->vkEnumerateInstanceVersion) {
        VkResult vvr =
            VKC_VK(vkEnumerateInstanceVersion, t->vkEnumerateInstanceVersion(&loader_version));
        if (vvr < 0)
            return vkc__vk_fail(NULL, vvr, "vkEnumerateInstanceVersion", __FILE__, __LINE__);
    }
    uint32_t api = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : loader_version;

    bool want_val = vkc__want_validation(ctx, desc);
    bool have_val = false;
    if (want_val)
        VKC_FORWARD(vkc__layer_present(t, VKC_VALIDATION_LAYER, &have_val));
    if (want_val && !have_val)
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
                 "validation requested but %s is not installed (Debian: apt-get install "
                 "vulkan-validationlayers); continuing without validation",
                 VKC_VALIDATION_LAYER);
    bool val_features = false, du_loader = false, du_layer = false;
    if (have_val) {
        VKC_FORWARD(vkc__instance_ext_present(
            t, VKC_VALIDATION_LAYER, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME, &val_features));
        VKC_FORWARD(vkc__instance_ext_present(t, VKC_VALIDATION_LAYER,
                                              VK_EXT_DEBUG_UTILS_EXTENSION_NAME, &du_layer));
    }
    VKC_FORWARD(vkc__instance_ext_present(t, NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME, &du_loader));
    ctx->debug_utils = du_loader || du_layer;
    const char *exts[4];
    uint32_t n_ext = 0;
    if (ctx->debug_utils)
        exts[n_ext++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (val_features)
        exts[n_ext++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    const char *layers[] = {VKC_VALIDATION_LAYER};

    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkc";
    app.pEngineName = "vkc";
    app.engineVersion =
        VK_MAKE_API_VERSION(0, VKC_VERSION_MAJOR, VKC_VERSION_MINOR, VKC_VERSION_PATCH);
    app.apiVersion = api;

    VkDebugUtilsMessengerCreateInfoEXT mci = {
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = vkc__messenger_cb;
    mci.pUserData = ctx;

    VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT vf = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    vf.enabledValidationFeatureCount = 1;
    vf.pEnabledValidationFeatures = enables;

    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    ici.enabledExtensionCount = n_ext;
    ici.ppEnabledExtensionNames = exts;
    if (have_val) {
        ici.enabledLayerCount = 1;
        ici.ppEnabledLayerNames = layers;
    }
    const void **next = &ici.pNext;
    if (ctx->debug_utils && have_val) {
        *next = &mci;
        next = (const void **)&mci.pNext;
    }
    if (val_features)
        *next = &vf;

    VkResult vr = VKC_VK(vkCreateInstance, t->vkCreateInstance(&ici, ctx->alloc, &ctx->instance));
    if (vr == VK_ERROR_INCOMPATIBLE_DRIVER)
        return vkc__fail(NULL, VKC_ERROR_NO_DEVICE, vr, __FILE__, __LINE__,
                         "vkCreateInstance: no Vulkan driver (ICD) found; install one (Debian: "
                         "mesa-vulkan-drivers for lavapipe) or set VK_DRIVER_FILES");
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkCreateInstance", __FILE__, __LINE__);
    ctx->own_instance = true;
    vkc__itable_load_instance(&ctx->vki, ctx->instance);
    ctx->features.validation = have_val;
    ctx->features.sync_validation = val_features;
    if (ctx->debug_utils && have_val && ctx->vki.vkCreateDebugUtilsMessengerEXT) {
        mci.pNext = NULL; /* it was chained to the validation features above */
        vr = VKC_VK(vkCreateDebugUtilsMessengerEXT,
                    ctx->vki.vkCreateDebugUtilsMessengerEXT(ctx->instance, &mci, ctx->alloc,
                                                            &ctx->messenger));
        if (vr < 0)
            return vkc__vk_fail(NULL, vr, "vkCreateDebugUtilsMessengerEXT", __FILE__, __LINE__);
    }
    return VKC_SUCCESS;
}

/* ---- device ----------------------------------------------------------------- */

static vkc_result vkc__enumerate(const vkc__itable *t, VkInstance inst, VkPhysicalDevice *pds,
                                 vkc_device_info *infos, uint32_t *count)
{
    uint32_t n = 0;
    VkResult vr = VKC_VK(vkEnumeratePhysicalDevices, t->vkEnumeratePhysicalDevices(inst, &n, NULL));
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
    VkPhysicalDevice all[64];
    n = VKC_MIN(n, 64u);
    vr = VKC_VK(vkEnumeratePhysicalDevices, t->vkEnumeratePhysicalDevices(inst, &n, all));
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
    n = VKC_MIN(n, (uint32_t)VKC_MAX_DEVICES);
    for (uint32_t i = 0; i < n; ++i) {
        if (pds)
            pds[i] = all[i];
        VKC_FORWARD(vkc__read_device_info(t, all[i], &infos[i]));
    }
    *count = n;
    return VKC_SUCCESS;
}

vkc_result vkc__create_device(vkc_context *ctx, const vkc_context_desc *desc)
{
    const vkc__itable *t = &ctx->vki;
    VkPhysicalDevice pds[VKC_MAX_DEVICES];
    vkc_device_info *infos = vkc__calloc(VKC_MAX_DEVICES, sizeof(*infos));
    if (!infos)
        return VKC_FAIL(NULL, VKC_ERROR_OUT_OF_HOST_MEMORY, "device list");
    uint32_t n = 0;
    vkc_result r = vkc__enumerate(t, ctx->instance, pds, infos, &n);
    if (r < 0) {
        vkc__free(infos);
        return r;
    }
    if (!n) {
        vkc__free(infos);
        return VKC_FAIL(
            NULL, VKC_ERROR_NO_DEVICE,
            "the Vulkan loader found no physical device: no driver (ICD) installed "
            "(Debian: apt-get install mesa-vulkan-drivers) or VK_DRIVER_FILES is wrong");
    }
    const char *want = desc->device;
    int32_t idx = vkc__pick_device(infos, n, want);
    const char *env = want ? NULL : vkc__env_string("VKC_DEVICE");
    if (env) {
        /* The desc's choice fails creation when nothing matches; the
         * environment's falls back to the best device, as unset would. */
        idx = vkc__pick_device(infos, n, env);
        if (idx < 0) {
            vkc__env_ignored(ctx, "VKC_DEVICE", env,
                             "a device index or a name substring; run vkc-info to list them",
                             "the best device");
            idx = vkc__pick_device(infos, n, NULL);
        }
    }
    if (idx < 0) {
        vkc__free(infos);
        if (want && *want)
            return VKC_FAIL(NULL, VKC_ERROR_NO_DEVICE,
                            "no device matches \"%s\" (%u present; run vkc-info to list them)",
                            want, n);
        return VKC_FAIL(NULL, VKC_ERROR_NO_COMPUTE_QUEUE, "no device has a compute queue");
    }
    ctx->phys = pds[idx];
    ctx->info = infos[idx];
    vkc__free(infos);
    vkc_device_info *info = &ctx->info;

    if (desc->queue_family_override) {
        r = vkc_choose_queue_family(info->queue_families, info->queue_family_count,
                                    (int32_t)desc->queue_family, &info->queue_family,
                                    &info->queue_reason);
        if (r < 0)
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT,
                            "queue family %u cannot be used: it does not exist or lacks compute",
                            desc->queue_family);
        info->queue_count = info->queue_families[info->queue_family].count;
        info->timestamps = info->queue_families[info->queue_family].timestamp_valid_bits > 0 &&
                           info->timestamp_period > 0;
    }
    if (info->queue_family == UINT32_MAX)
        return VKC_FAIL(NULL, VKC_ERROR_NO_COMPUTE_QUEUE,
                        "device \"%s\" has no queue family with compute", info->name);
    if (info->api_version < VK_API_VERSION_1_1)
        return VKC_FAIL(NULL, VKC_ERROR_UNSUPPORTED,
                        "device \"%s\" supports Vulkan %u.%u; vkc needs 1.1 or later", info->name,
                        VK_API_VERSION_MAJOR(info->api_version),
                        VK_API_VERSION_MINOR(info->api_version));

    /* What to enable: everything optional that is present, unless turned off. */
    bool use_timeline = info->timeline_semaphore && desc->timeline_semaphores != VKC_OFF;
    bool use_push = info->push_descriptor && desc->push_descriptors != VKC_OFF;
    if (desc->timeline_semaphores == VKC_ON && !info->timeline_semaphore)
        return VKC_FAIL(NULL, VKC_ERROR_UNSUPPORTED, "timeline semaphores asked for but missing");
    if (desc->push_descriptors == VKC_ON && !info->push_descriptor)
        return VKC_FAIL(NULL, VKC_ERROR_UNSUPPORTED, "push descriptors asked for but missing");
    /* The driver's pipeline statistics cost compile time: only when asked
     * for, or with profiling. */
    const bool profiling = vkc__profiling_wanted(desc->profile);
    ctx->kernel_statistics =
        info->pipeline_executable_info && (desc->kernel_statistics == VKC_ON ||
                                           (desc->kernel_statistics == VKC_DEFAULT && profiling));
    return vkc__open_device(ctx, use_timeline, use_push);
}

/* Create the VkDevice on ctx->phys with what ctx->info says is present (and
 * the two toggles allow), load its table and get the queue. Also used by
 * vkc_context_recover(). Failures are recorded as creation errors. */
vkc_result vkc__open_device(vkc_context *ctx, bool use_timeline, bool use_push)
{
    const vkc__itable *t = &ctx->vki;
    vkc_device_info *info = &ctx->info;
    bool v12 = info->api_version >= VK_API_VERSION_1_2;
    bool v13 = info->api_version >= VK_API_VERSION_1_3;
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDeviceVulkan11Features f11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features f13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    f2.features.shaderInt64 = info->shader_int64;
    f2.features.shaderFloat64 = info->shader_float64;
    f2.features.shaderStorageImageReadWithoutFormat = info->storage_image_read_without_format;
    f2.features.shaderStorageImageWriteWithoutFormat = info->storage_image_write_without_format;
    if (v12) {
        f2.pNext = &f11;
        f11.pNext = &f12;
        f11.storageBuffer16BitAccess = info->storage_buffer_16bit;
        f12.storageBuffer8BitAccess = info->storage_buffer_8bit;
        f12.shaderFloat16 = info->shader_float16;
        f12.shaderInt8 = info->shader_int8;
        f12.timelineSemaphore = use_timeline;
        f12.bufferDeviceAddress = info->buffer_device_address;
    }
    if (v13) {
        f12.pNext = &f13;
        f13.synchronization2 = info->synchronization2;
        f13.subgroupSizeControl = info->subgroup_size_control;
        f13.computeFullSubgroups = info->subgroup_size_control;
        /* Required by Vulkan 1.3; glslang uses LocalSizeId (which needs it) for
         * local_size_x_id when it targets SPIR-V 1.6. */
        f13.maintenance4 = VK_TRUE;
    }
    const char *exts[5];
    uint32_t n_ext = 0;
    if (use_push)
        exts[n_ext++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    /* Calibration only reads clocks: enabled wherever present. */
    if (info->calibrated_timestamps)
        exts[n_ext++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    if (ctx->kernel_statistics) {
        exts[n_ext++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        pe.pipelineExecutableInfo = VK_TRUE;
        pe.pNext = f2.pNext;
        f2.pNext = &pe;
    }
    /* Armed submission (arm.c) skips a cancelled copy's dispatches with it. */
    VkPhysicalDeviceConditionalRenderingFeaturesEXT cr = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
    if (info->conditional_rendering) {
        exts[n_ext++] = VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME;
        cr.conditionalRendering = VK_TRUE;
        cr.pNext = f2.pNext;
        f2.pNext = &cr;
    }

    /* Queues 1.. of the family are for resident kernels (resident.c), which
     * must never sit in front of ordinary work on queue 0. */
    float prio[1 + VKC_MAX_RESIDENT_QUEUES] = {1.0f, 1.0f, 1.0f, 1.0f};
    uint32_t queues =
        VKC_MIN(info->queue_families[info->queue_family].count, (uint32_t)VKC_ARRAY_COUNT(prio));
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = info->queue_family;
    qci.queueCount = queues ? queues : 1;
    qci.pQueuePriorities = prio;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = n_ext;
    dci.ppEnabledExtensionNames = exts;
    VkResult vr =
        VKC_VK(vkCreateDevice, t->vkCreateDevice(ctx->phys, &dci, ctx->alloc, &ctx->device));
    if (vr < 0)
        return vkc__vk_fail(NULL, vr, "vkCreateDevice", __FILE__, __LINE__);
    ctx->own_device = true;
    ctx->api_version =
        info->api_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : info->api_version;
    vkc__load_device_table(&ctx->vk, ctx->device, t->vkGetDeviceProcAddr);
    ctx->vk.vkGetDeviceQueue(ctx->device, info->queue_family, 0, &ctx->queue);
    ctx->resident_queue_count = qci.queueCount - 1;
    for (uint32_t i = 1; i < qci.queueCount; ++i)
        ctx->vk.vkGetDeviceQueue(ctx->device, info->queue_family, i, &ctx->resident_queues[i - 1]);
    ctx->features.timeline_semaphores = use_timeline;
    ctx->features.push_descriptors = use_push;
    ctx->features.synchronization2 = v13 && info->synchronization2;
    ctx->features.buffer_device_address = v12 && info->buffer_device_address;
    ctx->maintenance4 = v13; /* required by Vulkan 1.3, enabled above */
    ctx->calibrated_timestamps = info->calibrated_timestamps;
    ctx->pipeline_executable_info = ctx->kernel_statistics;
    ctx->conditional_rendering =
        info->conditional_rendering && ctx->vk.vkCmdBeginConditionalRenderingEXT &&
        ctx->vk.vkCmdEndConditionalRenderingEXT && ctx->vk.vkSignalSemaphore;
    t->vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->mem_props);
    return VKC_SUCCESS;
}

/* Defaults that depend on the device, resolved in one place. */
void vkc__resolve_defaults(vkc_context *ctx, const vkc_context_desc *desc)
{
    vkc_context_features *f = &ctx->features;
    const vkc_device_info *info = &ctx->info;
    /* DEFAULT: the completion marker, if its self-test passes at init
     * (vkc__marker_init), else spin-then-block on the timeline. */
    ctx->wait_auto = desc->wait_mode == VKC_WAIT_DEFAULT;
    f->wait_mode = desc->wait_mode ? desc->wait_mode : VKC_WAIT_SPIN_MARKER;
    snprintf(ctx->wait_reason, sizeof(ctx->wait_reason), "%s",
             ctx->wait_auto ? "default" : "asked");
    f->wait_reason = ctx->wait_reason;
    bool labels = false;
    vkc__env_flag(ctx, "VKC_DEBUG_LABELS",
                  "the default: off (labels are on anyway while validation is)", &labels);
    ctx->debug_labels = labels;
    f->spin_ns = desc->spin_ns ? desc->spin_ns : 200000;
    bool predict = true;
    vkc__env_flag(ctx, "VKC_WAIT_PREDICT", "the default: on", &predict);
    ctx->wait_predict = predict;
    /* Measured on the H200 (vkc-bench batch): 4.6 us per tiny dispatch at 64
     * per submit, 2.7 us at 256, 2.4 us at 4096. */
    f->batch_size = desc->batch_size ? desc->batch_size : 256;
    f->batches_in_flight = desc->batches_in_flight ? desc->batches_in_flight : 4;
    ctx->wait_timeout_ns =
        desc->wait_timeout_ns ? desc->wait_timeout_ns : VKC_DEFAULT_WAIT_TIMEOUT_NS;
    /* 256 invocations (a multiple of every common subgroup size) unless the
     * device cannot do that many. */
    uint32_t wg = 256;
    while (wg > info->max_workgroup_invocations || wg > info->max_workgroup_size[0])
        wg /= 2;
    if (info->subgroup_size > wg && info->subgroup_size <= info->max_workgroup_size[0])
        wg = info->subgroup_size;
    f->default_workgroup_size = wg ? wg : 1;
    /* Grid sizing for element counts. Measured on the H200 (vkc-bench
     * bandwidth, 1 GiB copy and triad): a grid capped at G groups of 256 per
     * SM lost 4-8% against one invocation per element for every G from 1 to
     * 32, so by default the grid covers the work (one invocation per element)
     * up to maxComputeWorkGroupCount, and the shaders' grid-stride loop takes
     * the rest. VKC_GROUPS_PER_SM=G caps the grid at SMs x G where the SM
     * count is known (for experiments). */
    f->groups_per_sm = 0;
    uint64_t max_groups = info->max_workgroup_count[0];
    uint32_t g = 0;
    if (vkc__env_uint(ctx, "VKC_GROUPS_PER_SM", 0, 1u << 16, "the default: no cap", &g) && g) {
        if (info->sm_count) {
            f->groups_per_sm = g;
            max_groups = (uint64_t)info->sm_count * g;
        } else {
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
                     "VKC_GROUPS_PER_SM=%u ignored: the device does not report its SM or CU "
                     "count; no cap",
                     g);
        }
    }
    max_groups = VKC_MIN(max_groups, (uint64_t)info->max_workgroup_count[0]);
    f->max_grid_groups = (uint32_t)max_groups;
    /* Cooperative dispatch needs the SM count to size a co-resident grid. */
    bool coop_on = true;
    vkc__env_flag(ctx, "VKC_COOPERATIVE", "the default: on where the SM count is known", &coop_on);
    ctx->cooperative_off = !coop_on;
    f->cooperative = coop_on && info->sm_count;
    if (!coop_on)
        f->cooperative_reason = "VKC_COOPERATIVE=off";
    else if (!info->sm_count)
        f->cooperative_reason = "the device reports no SM or CU count";
    else
        f->cooperative_reason = info->sm_source ? info->sm_source : "the SM count is known";
    ctx->profiling = vkc__profiling_wanted(desc->profile);
    ctx->profile_capacity = desc->profile_capacity ? desc->profile_capacity : 65536;
}

bool vkc__profiling_wanted(vkc_toggle profile)
{
    if (profile != VKC_DEFAULT)
        return profile == VKC_ON;
    return vkc__env_string("VKC_PROFILE") != NULL;
}

/* ---- system query -------------------------------------------------------------- */

/* Device groups, as indices into the enumerated devices; for diagnosis
 * only, so a failure leaves group_count 0. */
static void vkc__query_groups(const vkc__itable *t, VkInstance inst, const VkPhysicalDevice *pds,
                              uint32_t n, vkc_system_info *out)
{
    PFN_vkEnumeratePhysicalDeviceGroups enum_groups =
        (PFN_vkEnumeratePhysicalDeviceGroups)t->vkGetInstanceProcAddr(
            inst, "vkEnumeratePhysicalDeviceGroups");
    if (!enum_groups)
        return;
    VkPhysicalDeviceGroupProperties g[VKC_MAX_DEVICES];
    uint32_t count = VKC_MAX_DEVICES;
    for (uint32_t i = 0; i < count; ++i)
        g[i] =
            (VkPhysicalDeviceGroupProperties){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_GROUP_PROPERTIES};
    if (enum_groups(inst, &count, g) < 0)
        return;
    for (uint32_t i = 0; i < count; ++i) {
        struct vkc_device_group *dg = &out->groups[out->group_count];
        for (uint32_t m = 0; m < g[i].physicalDeviceCount; ++m)
            for (uint32_t d = 0; d < n; ++d)
                if (pds[d] == g[i].physicalDevices[m] && dg->member_count < VKC_MAX_DEVICES)
                    dg->members[dg->member_count++] = d;
        dg->subset_allocation = g[i].subsetAllocation;
        out->group_count++;
    }
}

vkc_result vkc_system_query(vkc_system_info *out)
{
    if (!out)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_ARGUMENT, "vkc_system_query: out is NULL");
    memset(out, 0, sizeof(*out));
    out->best_device = -1;
    void *h = NULL;
    vkc__itable t;
    if (vkc__loader_open(&h, &t, out->loader_path, sizeof(out->loader_path)) < 0) {
        snprintf(out->problem, sizeof(out->problem),
                 "no Vulkan loader: libvulkan.so.1 could not be opened. Install it (Debian: "
                 "apt-get install libvulkan1) or set LD_LIBRARY_PATH / VKC_LOADER.");
        return VKC_FAIL(NULL, VKC_ERROR_NO_LOADER, "vkc_system_query: %s", out->problem);
    }
    out->loader_found = true;
    out->instance_version = VK_API_VERSION_1_0;
    if (t.vkEnumerateInstanceVersion)
        t.vkEnumerateInstanceVersion(&out->instance_version);
    uint32_t nl = 0;
    if (t.vkEnumerateInstanceLayerProperties(&nl, NULL) >= 0 && nl) {
        VkLayerProperties *l = calloc(nl, sizeof(*l));
        if (l && t.vkEnumerateInstanceLayerProperties(&nl, l) >= 0) {
            for (uint32_t i = 0; i < nl && i < VKC_MAX_LAYERS; ++i) {
                snprintf(out->layers[i], sizeof(out->layers[i]), "%s", l[i].layerName);
                if (!strcmp(l[i].layerName, VKC_VALIDATION_LAYER))
                    out->validation_available = true;
            }
            out->layer_count = VKC_MIN(nl, (uint32_t)VKC_MAX_LAYERS);
        }
        free(l);
    }
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkc-query";
    app.apiVersion =
        out->instance_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : out->instance_version;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance inst = VK_NULL_HANDLE;
    VkResult vr = t.vkCreateInstance(&ici, NULL, &inst);
    vkc_result r = VKC_SUCCESS;
    if (vr < 0) {
        snprintf(out->problem, sizeof(out->problem),
                 "vkCreateInstance failed (%d): no Vulkan driver (ICD) found. Install one "
                 "(Debian: apt-get install mesa-vulkan-drivers gives lavapipe, a CPU device) "
                 "or point VK_DRIVER_FILES at your driver's ICD json.",
                 (int)vr);
        r = VKC_ERROR_NO_DEVICE;
        goto done;
    }
    vkc__itable_load_instance(&t, inst);
    uint32_t n = 0;
    VkPhysicalDevice pds[VKC_MAX_DEVICES];
    r = vkc__enumerate(&t, inst, pds, out->devices, &n);
    out->device_count = n;
    if (r >= 0 && out->instance_version >= VK_API_VERSION_1_1)
        vkc__query_groups(&t, inst, pds, n, out);
    t.vkDestroyInstance(inst, NULL);
    if (r < 0)
        goto done;
    if (!n) {
        snprintf(out->problem, sizeof(out->problem),
                 "the loader found no physical device: no driver (ICD) is installed or it "
                 "failed to load. Install one (Debian: apt-get install mesa-vulkan-drivers) or "
                 "check VK_DRIVER_FILES / VK_ICD_FILENAMES.");
        r = VKC_ERROR_NO_DEVICE;
        goto done;
    }
    const char *env = vkc__env_string("VKC_DEVICE");
    out->best_device = vkc__pick_device(out->devices, n, env);
    if (env && out->best_device < 0) {
        /* As vkc_context_create does: the best device instead. */
        out->best_device = vkc__pick_device(out->devices, n, NULL);
        snprintf(out->problem, sizeof(out->problem),
                 "VKC_DEVICE=\"%s\" matches no device (an index or a name substring); "
                 "contexts use the best device instead.",
                 env);
    }
    if (out->best_device < 0) {
        snprintf(out->problem, sizeof(out->problem), "no device can compute.");
        r = VKC_ERROR_NO_DEVICE;
    } else if (out->devices[out->best_device].type == VKC_DEVICE_TYPE_CPU) {
        snprintf(out->problem, sizeof(out->problem),
                 "only a CPU device (%s) is present: it works, but slowly. For a GPU, install "
                 "its Vulkan driver (NVIDIA: the proprietary driver's Vulkan ICD; AMD/Intel: "
                 "mesa-vulkan-drivers).",
                 out->devices[out->best_device].name);
    }
done:
    vkc__loader_close(h);
    /* The problem is also the thread's last creation error. */
    if (r < 0)
        VKC_FAIL(NULL, r, "vkc_system_query: %s", out->problem);
    return r;
}
