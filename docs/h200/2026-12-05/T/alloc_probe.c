/* Does a memory-bound kernel's speed follow its allocation? (issue 13's
 * fusion rows: some 1 GiB buffers copied 2.4x slower than others.) Raw
 * Vulkan: pairs of buffers of SIZE bytes, each its own VkDeviceMemory, in
 * four ways (device-local only or device-local + host-visible, with or
 * without VkMemoryDedicatedAllocateInfo); a vec4 copy (one invocation per
 * vec4) timed by GPU timestamps, REPS times per pair, p50. Phase 1: on a
 * fresh device. Phase 2: after churn (allocations of many sizes, half of
 * them freed). Phase 3: phase 1's pairs again, to tell whether a slow pair
 * stays slow. Each copy's first and last vec4 are checked.
 *
 *   glslangValidator -V --vn copy4_spv -o copy4_spv.h copy4.comp
 *   gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L alloc_probe.c -o alloc_probe -lvulkan
 *   ./alloc_probe [SIZE_MIB] [ROUNDS]       (default 1024 4) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "copy4_spv.h"

#define CK(x)                                                                                      \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS) {                                                                    \
            fprintf(stderr, "%s: %d (line %d)\n", #x, r_, __LINE__);                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
enum { REPS = 15, NSTRAT = 4, MAXPAIRS = 64, CHURN = 240 };
static const char *strat_names[NSTRAT] = {"device-local", "device-local dedicated",
                                          "device-local+host-visible",
                                          "device-local+host-visible dedicated"};

static VkDevice dev;
static VkPhysicalDeviceMemoryProperties mp;
static int32_t type_dl = -1, type_bar = -1, type_host = -1;

typedef struct buf {
    VkBuffer b;
    VkDeviceMemory m;
} buf;
typedef struct pair {
    buf src, dst;
    int strat;
    VkDescriptorSet set;
    VkDeviceSize align, offset_hint;
} pair;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static buf buf_new(VkDeviceSize size, int32_t type, int dedicated, VkDeviceSize *align)
{
    buf o = {0};
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    CK(vkCreateBuffer(dev, &bci, NULL, &o.b));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, o.b, &mr);
    if (align)
        *align = mr.alignment;
    VkMemoryDedicatedAllocateInfo di = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    di.buffer = o.b;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.pNext = dedicated ? &di : NULL;
    mai.allocationSize = mr.size;
    mai.memoryTypeIndex = (uint32_t)type;
    CK(vkAllocateMemory(dev, &mai, NULL, &o.m));
    CK(vkBindBufferMemory(dev, o.b, o.m, 0));
    return o;
}

static void buf_free(buf *o)
{
    vkDestroyBuffer(dev, o->b, NULL);
    vkFreeMemory(dev, o->m, NULL);
    memset(o, 0, sizeof(*o));
}

int main(int argc, char **argv)
{
    const VkDeviceSize size = (VkDeviceSize)(argc > 1 ? atoi(argv[1]) : 1024) << 20;
    const int rounds = argc > 2 ? atoi(argv[2]) : 4;
    const uint32_t nvec = (uint32_t)(size / 16);
    VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    ai.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &ai;
    VkInstance inst;
    CK(vkCreateInstance(&ici, NULL, &inst));
    uint32_t n = 1;
    VkPhysicalDevice pd;
    vkEnumeratePhysicalDevices(inst, &n, &pd);
    VkPhysicalDeviceProperties pp;
    vkGetPhysicalDeviceProperties(pd, &pp);
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t qn = 0;
    VkQueueFamilyProperties qf[16];
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, NULL);
    qn = qn > 16 ? 16 : qn;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf);
    uint32_t fam = UINT32_MAX;
    for (uint32_t i = 0; i < qn && fam == UINT32_MAX; ++i)
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            fam = i;
    for (uint32_t i = 0; i < qn && fam == UINT32_MAX; ++i)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            fam = i;
    const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t t = 0; t < mp.memoryTypeCount; ++t) {
        VkMemoryPropertyFlags f = mp.memoryTypes[t].propertyFlags;
        printf("memory type %u: flags 0x%x heap %u (%.1f GiB)\n", t, f, mp.memoryTypes[t].heapIndex,
               mp.memoryHeaps[mp.memoryTypes[t].heapIndex].size / 1073741824.0);
        if (type_dl < 0 && (f & DL) && !(f & HV))
            type_dl = (int32_t)t;
        if (type_bar < 0 && (f & DL) && (f & HV) == HV)
            type_bar = (int32_t)t;
        if (type_host < 0 && (f & HV) == HV && !(f & DL))
            type_host = (int32_t)t;
    }
    if (type_dl < 0)
        type_dl = type_bar;
    if (type_bar < 0)
        type_bar = type_dl;
    if (type_host < 0)
        type_host = type_bar;
    printf("device: %s, driver 0x%x, queue family %u, types: device-local %d, bar %d, host %d; "
           "%u MiB per buffer, timestamp period %.3f ns\n",
           pp.deviceName, pp.driverVersion, fam, type_dl, type_bar, type_host,
           (unsigned)(size >> 20), pp.limits.timestampPeriod);
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = fam;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkPhysicalDeviceVulkan13Features f13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    f13.synchronization2 = VK_TRUE;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f13;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    CK(vkCreateDevice(pd, &dci, NULL, &dev));
    VkQueue q;
    vkGetDeviceQueue(dev, fam, 0, &q);

    VkDescriptorSetLayoutBinding bs[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
    VkDescriptorSetLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = 2;
    lci.pBindings = bs;
    VkDescriptorSetLayout dsl;
    CK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &dsl));
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &dsl;
    plci.pushConstantRangeCount = 1;
    plci.pPushConstantRanges = &pcr;
    VkPipelineLayout pl;
    CK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
    VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = sizeof(copy4_spv);
    smci.pCode = copy4_spv;
    VkShaderModule sm;
    CK(vkCreateShaderModule(dev, &smci, NULL, &sm));
    VkComputePipelineCreateInfo cpci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpci.stage =
        (VkPipelineShaderStageCreateInfo){VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                          NULL,
                                          0,
                                          VK_SHADER_STAGE_COMPUTE_BIT,
                                          sm,
                                          "main",
                                          NULL};
    cpci.layout = pl;
    VkPipeline pipe;
    CK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * MAXPAIRS};
    VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = MAXPAIRS;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VkDescriptorPool dp;
    CK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = fam;
    VkCommandPool cp;
    CK(vkCreateCommandPool(dev, &cpi, NULL, &cp));
    VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbai.commandPool = cp;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cb;
    CK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CK(vkCreateFence(dev, &fci, NULL, &fence));
    VkQueryPoolCreateInfo qpci = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = 2 * REPS;
    VkQueryPool qp;
    CK(vkCreateQueryPool(dev, &qpci, NULL, &qp));
    /* 32 bytes the host reads: the copy's first and last vec4. */
    buf rb = buf_new(64, type_host, 0, NULL);
    float *rmap;
    CK(vkMapMemory(dev, rb.m, 0, 64, 0, (void **)&rmap));

    static pair pairs[MAXPAIRS];
    int npairs = 0;
    uint32_t pattern = 0x3f800000u; /* 1.0f, then 2.0f, ... per measurement */

    /* Measures pair p: fill src, REPS copies each between timestamps, read
     * back the ends. Returns the p50 in us; *ok whether the ends match. */
#define MEASURE(p, p50, ok)                                                                        \
    do {                                                                                           \
        pattern += 0x00010000u;                                                                    \
        CK(vkResetCommandBuffer(cb, 0));                                                           \
        VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};               \
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;                                    \
        CK(vkBeginCommandBuffer(cb, &bi));                                                         \
        vkCmdResetQueryPool(cb, qp, 0, 2 * REPS);                                                  \
        vkCmdFillBuffer(cb, (p)->src.b, 0, VK_WHOLE_SIZE, pattern);                                \
        VkMemoryBarrier2 mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,                                 \
                               NULL,                                                               \
                               VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,                               \
                               VK_ACCESS_2_MEMORY_WRITE_BIT,                                       \
                               VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,                               \
                               VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT};        \
        VkDependencyInfo dep = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};                                \
        dep.memoryBarrierCount = 1;                                                                \
        dep.pMemoryBarriers = &mb;                                                                 \
        vkCmdPipelineBarrier2(cb, &dep);                                                           \
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);                               \
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &(p)->set, 0, NULL); \
        vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &nvec);                      \
        for (int r_ = 0; r_ < REPS; ++r_) {                                                        \
            vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, qp, 2 * r_);            \
            vkCmdDispatch(cb, (nvec + 255) / 256, 1, 1);                                           \
            vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, qp, 2 * r_ + 1);        \
            vkCmdPipelineBarrier2(cb, &dep);                                                       \
        }                                                                                          \
        VkBufferCopy c2[2] = {{0, 0, 16}, {size - 16, 16, 16}};                                    \
        vkCmdCopyBuffer(cb, (p)->dst.b, rb.b, 2, c2);                                              \
        VkMemoryBarrier2 hb = {                                                                    \
            VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,   NULL,                                            \
            VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,                  \
            VK_PIPELINE_STAGE_2_HOST_BIT,         VK_ACCESS_2_HOST_READ_BIT};                      \
        dep.pMemoryBarriers = &hb;                                                                 \
        vkCmdPipelineBarrier2(cb, &dep);                                                           \
        CK(vkEndCommandBuffer(cb));                                                                \
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};                                         \
        si.commandBufferCount = 1;                                                                 \
        si.pCommandBuffers = &cb;                                                                  \
        CK(vkQueueSubmit(q, 1, &si, fence));                                                       \
        CK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));                                  \
        CK(vkResetFences(dev, 1, &fence));                                                         \
        uint64_t ts[2 * REPS];                                                                     \
        CK(vkGetQueryPoolResults(dev, qp, 0, 2 * REPS, sizeof(ts), ts, 8,                          \
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));              \
        double d_[REPS];                                                                           \
        for (int r_ = 0; r_ < REPS; ++r_)                                                          \
            d_[r_] = (double)(ts[2 * r_ + 1] - ts[2 * r_]) * pp.limits.timestampPeriod / 1e3;      \
        qsort(d_, REPS, sizeof(double), cmpd);                                                     \
        p50 = d_[REPS / 2];                                                                        \
        float want;                                                                                \
        memcpy(&want, &pattern, 4);                                                                \
        ok = 1;                                                                                    \
        for (int k_ = 0; k_ < 8; ++k_)                                                             \
            ok &= rmap[k_] == want;                                                                \
    } while (0)

    const double gib = (double)size * 2 / 1e9; /* GB read + written per copy */
    int bad = 0;
    for (int phase = 1; phase <= 3; ++phase) {
        static buf churn[CHURN];
        if (phase == 2) {
            /* Churn: CHURN allocations of 1..256 MiB (a fixed sequence), every
             * other one freed, so later allocations land among holes. */
            uint32_t x = 12345;
            VkDeviceSize kept = 0;
            for (int i = 0; i < CHURN; ++i) {
                x = x * 1103515245u + 12345u;
                VkDeviceSize sz = (VkDeviceSize)(1 + (x >> 16) % 256) << 20;
                churn[i] = buf_new(sz, i % 3 ? type_dl : type_bar, 0, NULL);
                if (i & 1)
                    buf_free(&churn[i]);
                else
                    kept += sz;
            }
            printf("churn: %d allocations, %.1f GiB kept\n", CHURN, kept / 1073741824.0);
        }
        const int first = phase == 3 ? 0 : npairs;
        const int count = rounds * NSTRAT;
        printf("phase %d (%s)\n", phase,
               phase == 1   ? "fresh device"
               : phase == 2 ? "after churn"
                            : "phase 1's pairs again");
        for (int i = 0; i < count; ++i) {
            pair *p;
            if (phase == 3) {
                p = &pairs[first + i];
            } else {
                if (npairs == MAXPAIRS)
                    break;
                p = &pairs[npairs++];
                p->strat = i % NSTRAT;
                int32_t t = p->strat < 2 ? type_dl : type_bar;
                int ded = p->strat & 1;
                p->src = buf_new(size, t, ded, &p->align);
                p->dst = buf_new(size, t, ded, NULL);
                VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
                dsai.descriptorPool = dp;
                dsai.descriptorSetCount = 1;
                dsai.pSetLayouts = &dsl;
                CK(vkAllocateDescriptorSets(dev, &dsai, &p->set));
                VkDescriptorBufferInfo dbi[2] = {{p->src.b, 0, VK_WHOLE_SIZE},
                                                 {p->dst.b, 0, VK_WHOLE_SIZE}};
                VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
                w.dstSet = p->set;
                w.descriptorCount = 2;
                w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
                w.pBufferInfo = dbi;
                vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
            }
            double p50;
            int ok;
            MEASURE(p, p50, ok);
            bad += !ok;
            printf("  pair %2d  %-36s  p50 %8.1f us  %7.1f GB/s  alignment %llu  %s\n",
                   (int)(p - pairs), strat_names[p->strat], p50, gib / (p50 * 1e-6),
                   (unsigned long long)p->align, ok ? "ok" : "WRONG");
            fflush(stdout);
        }
        if (phase == 2)
            for (int i = 0; i < CHURN; i += 2)
                buf_free(&churn[i]);
    }
    for (int i = 0; i < npairs; ++i) {
        buf_free(&pairs[i].src);
        buf_free(&pairs[i].dst);
    }
    buf_free(&rb);
    vkDestroyQueryPool(dev, qp, NULL);
    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, cp, NULL);
    vkDestroyDescriptorPool(dev, dp, NULL);
    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyShaderModule(dev, sm, NULL);
    vkDestroyPipelineLayout(dev, pl, NULL);
    vkDestroyDescriptorSetLayout(dev, dsl, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    printf("%s\n", bad ? "CHECK FAILED" : "all copies checked");
    return bad != 0;
}
