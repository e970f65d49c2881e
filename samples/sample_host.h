/* The host side of the embedding samples (particles, renderer): a headless
 * "renderer" that owns its Vulkan instance and device and uses volk's global
 * function pointers, as many engines do, and hands its device to vkc with
 * vkc_context_wrap(). Include after <volk.h>; link volk.c.
 *
 * Errors in the host's own Vulkan calls exit (VK()): it is scaffolding. */
#ifndef VKC_SAMPLE_HOST_H
#define VKC_SAMPLE_HOST_H

#include <png.h> /* before sample_common.h: sample_write_png */
#include <pthread.h>

#include "sample_common.h"

#include <stdbool.h>
#include <string.h>

#define VK(call)                                                                                   \
    do {                                                                                           \
        VkResult vr_ = (call);                                                                     \
        if (vr_ != VK_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)vr_);              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct renderer {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkPhysicalDeviceMemoryProperties mem;
    VkDevice device;
    uint32_t api_version;
    uint32_t gfx_family, compute_family; /* equal: the device has no compute-only family */
    VkQueue gfx_queue;
    pthread_mutex_t queue_lock; /* guards gfx_queue: the renderer and (if shared) vkc */
    const char *inst_exts[2];
    uint32_t inst_ext_count;
    VkPhysicalDeviceFeatures2 f2;
    VkPhysicalDeviceVulkan12Features f12;
    VkPhysicalDeviceVulkan13Features f13;
} renderer;

static unsigned renderer_validation_messages;

static VkBool32 VKAPI_PTR on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                     const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    (void)user;
    if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
        renderer_validation_messages++;
        fprintf(stderr, "vkc validation (renderer's messenger): %s\n", data->pMessage);
    }
    return VK_FALSE;
}

static inline void lock_queue(void *user)
{
    pthread_mutex_lock(&((renderer *)user)->queue_lock);
}

static inline void unlock_queue(void *user)
{
    pthread_mutex_unlock(&((renderer *)user)->queue_lock);
}

/* VKC_VALIDATION=1 and the layer installed: validation on, with
 * synchronization validation when the layer offers VK_EXT_validation_features. */
static inline bool want_validation(bool *sync)
{
    *sync = false;
    const char *v = getenv("VKC_VALIDATION");
    if (!v || v[0] != '1')
        return false;
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, NULL);
    VkLayerProperties *l = calloc(n ? n : 1, sizeof(*l));
    vkEnumerateInstanceLayerProperties(&n, l);
    bool found = false;
    for (uint32_t i = 0; i < n; ++i)
        found |= !strcmp(l[i].layerName, "VK_LAYER_KHRONOS_validation");
    free(l);
    if (!found)
        return false;
    n = 0;
    vkEnumerateInstanceExtensionProperties("VK_LAYER_KHRONOS_validation", &n, NULL);
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof(*e));
    vkEnumerateInstanceExtensionProperties("VK_LAYER_KHRONOS_validation", &n, e);
    for (uint32_t i = 0; i < n; ++i)
        *sync |= !strcmp(e[i].extensionName, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    free(e);
    return true;
}

/* The host's instance (validation as VKC_VALIDATION asks, through its own
 * messenger), the first device with a graphics queue, a compute-only family
 * if it has one, and the device with one queue of each. Exits on failure:
 * the host is the sample's scaffolding, not what it teaches. */
static inline void renderer_create(renderer *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->queue_lock, NULL);
    VK(volkInitialize());
    r->api_version = volkGetInstanceVersion() >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3
                                                                    : volkGetInstanceVersion();
    bool sync = false, validation = want_validation(&sync);
    const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char *exts[3];
    uint32_t n_ext = 0;
    if (validation)
        r->inst_exts[r->inst_ext_count++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (sync)
        r->inst_exts[r->inst_ext_count++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    for (uint32_t i = 0; i < r->inst_ext_count; ++i)
        exts[n_ext++] = r->inst_exts[i];
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkc renderer sample";
    app.apiVersion = r->api_version;
    VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT vf = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    vf.enabledValidationFeatureCount = 1;
    vf.pEnabledValidationFeatures = enables;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pNext = sync ? &vf : NULL;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = validation ? 1 : 0;
    ici.ppEnabledLayerNames = layers;
    ici.enabledExtensionCount = n_ext;
    ici.ppEnabledExtensionNames = exts;
    VK(vkCreateInstance(&ici, NULL, &r->instance));
    volkLoadInstance(r->instance);
    if (validation) {
        VkDebugUtilsMessengerCreateInfoEXT mci = {
            VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        mci.pfnUserCallback = on_message;
        VK(vkCreateDebugUtilsMessengerEXT(r->instance, &mci, NULL, &r->messenger));
    }
    printf("renderer: validation %s\n", !validation ? "off"
                                        : sync      ? "on (core + synchronization)"
                                                    : "on (core only)");

    /* The first device with a graphics queue; a compute-only family if any. */
    VkPhysicalDevice pds[16];
    uint32_t n = 16;
    vkEnumeratePhysicalDevices(r->instance, &n, pds);
    VkQueueFamilyProperties qf[16];
    for (uint32_t d = 0; d < n && !r->phys; ++d) {
        uint32_t nq = 16;
        vkGetPhysicalDeviceQueueFamilyProperties(pds[d], &nq, qf);
        for (uint32_t i = 0; i < nq; ++i)
            if (qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) {
                r->phys = pds[d];
                r->gfx_family = r->compute_family = i;
                break;
            }
        if (r->phys)
            for (uint32_t i = 0; i < nq; ++i)
                if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
                    !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
                    r->compute_family = i;
                    break;
                }
    }
    if (!r->phys) {
        fprintf(stderr, "no device with a graphics queue\n");
        exit(1);
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(r->phys, &props);
    printf("renderer device: %s\n", props.deviceName);
    if (props.apiVersion < r->api_version)
        r->api_version = props.apiVersion;
    vkGetPhysicalDeviceMemoryProperties(r->phys, &r->mem);
    VkPhysicalDeviceVulkan13Features have13 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features have12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 have = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    have.pNext = &have12;
    if (r->api_version >= VK_API_VERSION_1_3)
        have12.pNext = &have13;
    vkGetPhysicalDeviceFeatures2(r->phys, &have);
    if (r->api_version < VK_API_VERSION_1_2 || !have12.timelineSemaphore) {
        fprintf(stderr, "this sample needs Vulkan 1.2 timeline semaphores\n");
        exit(1);
    }
    /* The renderer enables what it needs; vkc uses only this. */
    r->f13 =
        (VkPhysicalDeviceVulkan13Features){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    r->f13.synchronization2 = have13.synchronization2;
    r->f12 =
        (VkPhysicalDeviceVulkan12Features){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    r->f12.timelineSemaphore = VK_TRUE;
    if (r->api_version >= VK_API_VERSION_1_3)
        r->f12.pNext = &r->f13;
    r->f2 = (VkPhysicalDeviceFeatures2){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    r->f2.pNext = &r->f12;

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci[2] = {{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO},
                                      {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO}};
    qci[0].queueFamilyIndex = r->gfx_family;
    qci[0].queueCount = 1;
    qci[0].pQueuePriorities = &prio;
    qci[1].queueFamilyIndex = r->compute_family;
    qci[1].queueCount = 1;
    qci[1].pQueuePriorities = &prio;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &r->f2;
    dci.queueCreateInfoCount = r->compute_family != r->gfx_family ? 2 : 1;
    dci.pQueueCreateInfos = qci;
    VK(vkCreateDevice(r->phys, &dci, NULL, &r->device));
    volkLoadDevice(r->device);
    vkGetDeviceQueue(r->device, r->gfx_family, 0, &r->gfx_queue);
}

static inline VkDeviceMemory bind_memory(renderer *r, VkMemoryRequirements req,
                                         VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < r->mem.memoryTypeCount; ++i)
        if ((req.memoryTypeBits & (1u << i)) &&
            (r->mem.memoryTypes[i].propertyFlags & want) == want) {
            VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            mai.allocationSize = req.size;
            mai.memoryTypeIndex = i;
            VkDeviceMemory m;
            VK(vkAllocateMemory(r->device, &mai, NULL, &m));
            return m;
        }
    fprintf(stderr, "no suitable memory type\n");
    exit(1);
}

static inline VkShaderModule shader(renderer *r, const uint32_t *words, size_t size)
{
    VkShaderModuleCreateInfo ci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = size;
    ci.pCode = words;
    VkShaderModule m;
    VK(vkCreateShaderModule(r->device, &ci, NULL, &m));
    return m;
}

/* A device-local 2D image (one mip, one layer) with its memory and a view. */
typedef struct gpu_image {
    VkImage image;
    VkDeviceMemory mem;
    VkImageView view;
} gpu_image;

static inline gpu_image image_create(renderer *r, VkFormat format, uint32_t w, uint32_t h,
                                     VkImageUsageFlags usage, VkImageAspectFlags aspect)
{
    gpu_image g;
    VkImageCreateInfo ii = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = format;
    ii.extent = (VkExtent3D){w, h, 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = usage;
    VK(vkCreateImage(r->device, &ii, NULL, &g.image));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(r->device, g.image, &req);
    g.mem = bind_memory(r, req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VK(vkBindImageMemory(r->device, g.image, g.mem, 0));
    VkImageViewCreateInfo vi = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = g.image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = format;
    vi.subresourceRange = (VkImageSubresourceRange){aspect, 0, 1, 0, 1};
    VK(vkCreateImageView(r->device, &vi, NULL, &g.view));
    return g;
}

static inline void image_destroy(renderer *r, gpu_image *g)
{
    vkDestroyImageView(r->device, g->view, NULL);
    vkDestroyImage(r->device, g->image, NULL);
    vkFreeMemory(r->device, g->mem, NULL);
}

/* A host-visible, coherent buffer, mapped, for copies out of the device. */
typedef struct host_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map;
} host_buffer;

static inline host_buffer readback_create(renderer *r, VkDeviceSize size)
{
    host_buffer b;
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VK(vkCreateBuffer(r->device, &bci, NULL, &b.buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(r->device, b.buf, &req);
    b.mem = bind_memory(r, req,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VK(vkBindBufferMemory(r->device, b.buf, b.mem, 0));
    VK(vkMapMemory(r->device, b.mem, 0, VK_WHOLE_SIZE, 0, &b.map));
    return b;
}

static inline void readback_destroy(renderer *r, host_buffer *b)
{
    vkDestroyBuffer(r->device, b->buf, NULL);
    vkFreeMemory(r->device, b->mem, NULL);
}

/* A graphics pipeline of the samples' kind: vertex + fragment shader
 * ("main"), a w x h viewport, filled polygons without culling, one colour
 * attachment without blending, and (depth) a LESS depth test that writes. */
typedef struct renderer_pipeline_desc {
    VkShaderModule vs, fs;
    const VkPipelineVertexInputStateCreateInfo *vertex_input; /* NULL: no vertex buffers */
    VkPrimitiveTopology topology;
    uint32_t w, h;
    bool depth;
    VkPipelineLayout layout;
    VkRenderPass pass;
} renderer_pipeline_desc;

static inline VkPipeline renderer_pipeline(renderer *r, const renderer_pipeline_desc *d)
{
    VkPipelineShaderStageCreateInfo stages[2] = {
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = d->vs;
    stages[0].pName = "main";
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = d->fs;
    stages[1].pName = "main";
    VkPipelineVertexInputStateCreateInfo none = {
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo ia = {
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    ia.topology = d->topology;
    VkViewport viewport = {0, 0, (float)d->w, (float)d->h, 0, 1};
    VkRect2D scissor = {{0, 0}, {d->w, d->h}};
    VkPipelineViewportStateCreateInfo vp = {VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    vp.viewportCount = 1;
    vp.pViewports = &viewport;
    vp.scissorCount = 1;
    vp.pScissors = &scissor;
    VkPipelineRasterizationStateCreateInfo rs = {
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    rs.polygonMode = VK_POLYGON_MODE_FILL;
    rs.cullMode = VK_CULL_MODE_NONE;
    rs.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo ms = {
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineDepthStencilStateCreateInfo ds = {
        VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
    ds.depthTestEnable = VK_TRUE;
    ds.depthWriteEnable = VK_TRUE;
    ds.depthCompareOp = VK_COMPARE_OP_LESS;
    VkPipelineColorBlendAttachmentState cba = {0};
    cba.colorWriteMask = 0xF;
    VkPipelineColorBlendStateCreateInfo cb = {
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    cb.attachmentCount = 1;
    cb.pAttachments = &cba;
    VkGraphicsPipelineCreateInfo gpi = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    gpi.stageCount = 2;
    gpi.pStages = stages;
    gpi.pVertexInputState = d->vertex_input ? d->vertex_input : &none;
    gpi.pInputAssemblyState = &ia;
    gpi.pViewportState = &vp;
    gpi.pRasterizationState = &rs;
    gpi.pMultisampleState = &ms;
    gpi.pDepthStencilState = d->depth ? &ds : NULL;
    gpi.pColorBlendState = &cb;
    gpi.layout = d->layout;
    gpi.renderPass = d->pass;
    VkPipeline pipe;
    VK(vkCreateGraphicsPipelines(r->device, VK_NULL_HANDLE, 1, &gpi, NULL, &pipe));
    return pipe;
}

/* vkc on the host's device: the compute-only family's queue when there is
 * one (then vkc never takes the host's lock), else the host's own graphics
 * queue, shared through the lock callbacks. Exits on failure. */
static inline vkc_context *renderer_wrap_vkc(renderer *r)
{
    bool shared = r->compute_family == r->gfx_family;
    vkc_wrap_desc wd = {0};
    wd.instance = r->instance;
    wd.physical_device = r->phys;
    wd.device = r->device;
    wd.get_instance_proc_addr = vkGetInstanceProcAddr;
    wd.api_version = r->api_version;
    wd.device_features = &r->f2;
    wd.instance_extensions = r->inst_exts;
    wd.instance_extension_count = r->inst_ext_count;
    wd.queue_family = r->compute_family;
    wd.queue_index = 0;
    if (shared) {
        wd.queue_lock = lock_queue;
        wd.queue_unlock = unlock_queue;
        wd.queue_lock_user = r;
    }
    wd.logger.func = sample_log;
    vkc_context *ctx;
    vkc_result cr = vkc_context_wrap(&wd, &ctx);
    if (cr < 0) {
        fprintf(stderr, "vkc_context_wrap: %s\n  %s\n", vkc_result_string(cr),
                vkc_last_create_error());
        exit(1);
    }
    sample_ctx = ctx;
    printf("vkc computes on queue family %u (%s); the renderer draws on family %u\n",
           r->compute_family, shared ? "shared with the renderer, through its lock" : "its own",
           r->gfx_family);
    return ctx;
}

/* After everything made on the device is gone. */
static inline void renderer_destroy(renderer *r)
{
    vkDestroyDevice(r->device, NULL);
    if (r->messenger)
        vkDestroyDebugUtilsMessengerEXT(r->instance, r->messenger, NULL);
    vkDestroyInstance(r->instance, NULL);
    pthread_mutex_destroy(&r->queue_lock);
}

/* 0 when neither the host's messenger nor vkc's logger saw a validation
 * message. */
static inline int renderer_validation_status(void)
{
    return sample_validation_status() || renderer_validation_messages;
}

#endif
