/* Host cost of recording a dependent dispatch chain with each barrier form,
 * and the round trip (record + submit + fence wait), raw Vulkan. Forms run
 * round-robin so drift hits them alike. Checks the buffer's final values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "inc_spv.h" /* glslangValidator -V --vn inc_spv (needs stdint.h first) */

#define CK(x)                                                                                      \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS) {                                                                    \
            fprintf(stderr, "%s: %d\n", #x, r_);                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
enum { NFORM = 5, REPS = 400 };
static const char *names[NFORM] = {"none", "v2-memory (vkc)", "v1-memory", "v2-buffer",
                                   "v1-exec-only"};
int main(void)
{
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
    uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, NULL);
    VkQueueFamilyProperties qf[16];
    if (qn > 16)
        qn = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf);
    uint32_t fam = UINT32_MAX;
    for (uint32_t i = 0; i < qn; ++i)
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
            fam = i;
            break;
        }
    for (uint32_t i = 0; fam == UINT32_MAX && i < qn; ++i)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            fam = i;
    printf("device: %s, driver 0x%x, queue family %u\n", pp.deviceName, pp.driverVersion, fam);
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
    VkDevice dev;
    CK(vkCreateDevice(pd, &dci, NULL, &dev));
    VkQueue q;
    vkGetDeviceQueue(dev, fam, 0, &q);
    /* host-visible buffer of 64 uints */
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = 512;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buf;
    CK(vkCreateBuffer(dev, &bci, NULL, &buf));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, buf, &mr);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t mt = 0;
    for (; mt < mp.memoryTypeCount; ++mt)
        if ((mr.memoryTypeBits >> mt & 1) &&
            (mp.memoryTypes[mt].propertyFlags &
             (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) ==
                (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
            break;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = mr.size;
    mai.memoryTypeIndex = mt;
    VkDeviceMemory mem;
    CK(vkAllocateMemory(dev, &mai, NULL, &mem));
    CK(vkBindBufferMemory(dev, buf, mem, 0));
    uint32_t *map;
    CK(vkMapMemory(dev, mem, 0, 512, 0, (void **)&map));
    memset(map, 0, 512);
    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                      VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = 1;
    lci.pBindings = &b;
    VkDescriptorSetLayout dsl;
    CK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &dsl));
    VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &dsl;
    VkPipelineLayout pl;
    CK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
    VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = sizeof(inc_spv);
    smci.pCode = inc_spv;
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
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 2;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VkDescriptorPool dp;
    CK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
    VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dsai.descriptorPool = dp;
    dsai.descriptorSetCount = 1;
    dsai.pSetLayouts = &dsl;
    /* Set 0: the barriered forms (checked); set 1 at offset 256: the forms
     * without a memory barrier, racy by design (not checked). */
    VkDescriptorSet dsets[2];
    for (int i = 0; i < 2; ++i) {
        CK(vkAllocateDescriptorSets(dev, &dsai, &dsets[i]));
        VkDescriptorBufferInfo dbi = {buf, 256u * i, 256};
        VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = dsets[i];
        w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w.pBufferInfo = &dbi;
        vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
    }
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
    const uint32_t Ks[2] = {16, 64};
    static double rec[2][NFORM][REPS], rt[2][NFORM][REPS];
    uint64_t expect = 0;
    for (int rep = -20; rep < REPS; ++rep)
        for (int ki = 0; ki < 2; ++ki)
            for (int form = 0; form < NFORM; ++form) {
                uint32_t K = Ks[ki];
                double t0 = now_ns();
                vkResetCommandBuffer(cb, 0);
                VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
                bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
                vkBeginCommandBuffer(cb, &bi);
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
                vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1,
                                        &dsets[form == 0 || form == 4], 0, NULL);
                for (uint32_t k = 0; k < K; ++k) {
                    if (k) {
                        if (form == 1) {
                            VkMemoryBarrier2 mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                                                   NULL,
                                                   VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                                   VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                                                   VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                                   VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                                       VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
                            VkDependencyInfo di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
                            di.memoryBarrierCount = 1;
                            di.pMemoryBarriers = &mb;
                            vkCmdPipelineBarrier2(cb, &di);
                        } else if (form == 2) {
                            VkMemoryBarrier mb = {
                                VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT,
                                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
                            vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                                                 NULL, 0, NULL);
                        } else if (form == 3) {
                            VkBufferMemoryBarrier2 bb = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2,
                                                         NULL,
                                                         VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                                         VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                                                         VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                                         VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                                             VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                                                         VK_QUEUE_FAMILY_IGNORED,
                                                         VK_QUEUE_FAMILY_IGNORED,
                                                         buf,
                                                         0,
                                                         VK_WHOLE_SIZE};
                            VkDependencyInfo di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
                            di.bufferMemoryBarrierCount = 1;
                            di.pBufferMemoryBarriers = &bb;
                            vkCmdPipelineBarrier2(cb, &di);
                        } else if (form == 4) {
                            vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL,
                                                 0, NULL, 0, NULL);
                        }
                    }
                    vkCmdDispatch(cb, 1, 1, 1);
                }
                vkEndCommandBuffer(cb);
                double t1 = now_ns();
                VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
                si.commandBufferCount = 1;
                si.pCommandBuffers = &cb;
                CK(vkQueueSubmit(q, 1, &si, fence));
                while (vkGetFenceStatus(dev, fence) == VK_NOT_READY) {
                }
                double t2 = now_ns();
                vkResetFences(dev, 1, &fence);
                if (form != 0 && form != 4)
                    expect += K;
                if (rep >= 0) {
                    rec[ki][form][rep] = (t1 - t0) / K;
                    rt[ki][form][rep] = t2 - t0;
                }
            }
    int bad = 0;
    for (int i = 0; i < 64; ++i)
        bad += map[i] != (uint32_t)expect;
    printf("check (barriered forms): %s (%u, want %llu)\n", bad ? "FAILED" : "ok", map[0],
           (unsigned long long)expect);
    printf("| K | form | record ns/step p50 | p95 | round trip us p50 | p95 | p99 | rt ratio vs "
           "v2-memory |\n|--:|---|--:|--:|--:|--:|--:|--:|\n");
    for (int ki = 0; ki < 2; ++ki) {
        double base = 0;
        for (int form = 0; form < NFORM; ++form) {
            qsort(rec[ki][form], REPS, sizeof(double), cmpd);
            qsort(rt[ki][form], REPS, sizeof(double), cmpd);
        }
        base = rt[ki][1][REPS / 2];
        for (int form = 0; form < NFORM; ++form)
            printf("| %u | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.3f |\n", Ks[ki], names[form],
                   rec[ki][form][REPS / 2], rec[ki][form][REPS * 95 / 100],
                   rt[ki][form][REPS / 2] / 1e3, rt[ki][form][REPS * 95 / 100] / 1e3,
                   rt[ki][form][REPS * 99 / 100] / 1e3, rt[ki][form][REPS / 2] / base);
    }
    return bad != 0;
}
