/* particles: vkc inside a renderer.
 *
 * Teaches: embedding. A small headless "renderer" owns its Vulkan instance
 * and device (with a graphics queue and an offscreen image) and uses volk's
 * global function pointers, as many engines do. It wraps its device with
 * vkc_context_wrap() and hands vkc a queue: the compute-only family's when
 * the device has one (then vkc never takes the renderer's lock), else the
 * renderer's own graphics queue, shared through lock callbacks. The
 * particle buffer is the renderer's (vkc_buffer_wrap), concurrent-shared
 * between the two families. Each frame:
 *   1. vkc advances 100k particles (4 steps, one recorded sequence) after
 *      waiting on the renderer's timeline: the previous frame's draw has
 *      read the buffer (vkc_wait_host_semaphore);
 *   2. the renderer waits on vkc's exported ticket (vkc_ticket_export) in
 *      its own vkQueueSubmit, draws the particles as points and copies the
 *      image out;
 *   3. the frame is written as particles_N.png.
 * Checks: the positions equal a CPU simulation of the same steps, and the
 * particles (and so the pictures) move from frame to frame.
 *
 * Usage: particles [frames [particles]]   (default 8 frames, 100000) */
#define _POSIX_C_SOURCE 200809L
#include <volk.h> /* the renderer uses volk; vkc keeps its own tables */

#include "sample_host.h"

#include <math.h>

#include "embed_shaders.h"

#define W 256
#define H 256
#define STEPS_PER_FRAME 4
#define DT 0.02f
#define GRAVITY 0.6f

typedef struct particle {
    float x, y, vx, vy;
} particle;

/* The same step as shaders/particles.comp. */
static void step_cpu(particle *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        float vx = p[i].vx, vy = p[i].vy - GRAVITY * DT;
        float x = p[i].x + vx * DT, y = p[i].y + vy * DT;
        if (x < -1.0f) {
            x = -2.0f - x;
            vx = -vx;
        }
        if (x > 1.0f) {
            x = 2.0f - x;
            vx = -vx;
        }
        if (y < -1.0f) {
            y = -2.0f - y;
            vy = -vy;
        }
        if (y > 1.0f) {
            y = 2.0f - y;
            vy = -vy;
        }
        p[i] = (particle){x, y, vx, vy};
    }
}

int main(int argc, char **argv)
{
    uint32_t frames = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 8;
    uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 100000;
    renderer r;
    renderer_create(&r);
    bool shared = r.compute_family == r.gfx_family;

    /* ---- vkc, on the renderer's device ---- */
    vkc_context *ctx = renderer_wrap_vkc(&r);

    /* ---- the particle buffer: the renderer's, used by both ---- */
    uint32_t families[2] = {r.gfx_family, r.compute_family};
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = (VkDeviceSize)n * sizeof(particle);
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT |
                VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (!shared) { /* no ownership transfers: both families may use it */
        bci.sharingMode = VK_SHARING_MODE_CONCURRENT;
        bci.queueFamilyIndexCount = 2;
        bci.pQueueFamilyIndices = families;
    }
    VkBuffer pbuf;
    VK(vkCreateBuffer(r.device, &bci, NULL, &pbuf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(r.device, pbuf, &req);
    VkDeviceMemory pmem = bind_memory(&r, req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VK(vkBindBufferMemory(r.device, pbuf, pmem, 0));
    vkc_buffer *particles;
    CHECK(vkc_buffer_wrap(ctx, pbuf, 0, bci.size, &particles));

    particle *p = malloc(n * sizeof(particle)), *gpu = malloc(n * sizeof(particle));
    uint32_t s = 2024;
    for (uint32_t i = 0; i < n; ++i) {
        float f[4];
        for (int k = 0; k < 4; ++k) {
            s = s * 1664525u + 1013904223u;
            f[k] = (float)(s >> 8) / 16777216.0f; /* [0, 1) */
        }
        /* A fountain: start near the bottom centre, shoot upwards. */
        float a = 1.2f + 0.75f * (f[0] - 0.5f), speed = 0.6f + 0.9f * f[1];
        p[i] =
            (particle){(f[2] - 0.5f) * 0.2f, -0.8f + 0.1f * f[3], speed * cosf(a), speed * sinf(a)};
    }
    CHECK(vkc_buffer_upload(particles, 0, p, bci.size));

    vkc_kernel *k;
    CHECK(vkc_kernel_create(ctx,
                            &(vkc_kernel_desc){.spirv = embed_shaders_particles_step,
                                               .spirv_size = embed_shaders_particles_step_size,
                                               .name = "particles_step"},
                            &k));
    struct {
        uint32_t n;
        float dt, gravity;
    } push = {n, DT, GRAVITY};
    vkc_seq *seq;
    CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "particles"}, &seq));
    vkc_arg arg = {.buffer = particles};
    for (int i = 0; i < STEPS_PER_FRAME; ++i)
        CHECK(vkc_seq_dispatch(seq, &(vkc_dispatch_desc){.kernel = k,
                                                         .args = &arg,
                                                         .arg_count = 1,
                                                         .push = &push,
                                                         .push_size = sizeof(push),
                                                         .count = n}));
    CHECK(vkc_seq_end(seq));

    /* ---- the renderer's frame: image, pass, pipeline, readback ---- */
    const VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    gpu_image color = image_create(
        &r, format, W, H, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
        VK_IMAGE_ASPECT_COLOR_BIT);
    VkImage image = color.image;
    VkImageView view = color.view;

    VkAttachmentDescription att = {0};
    att.format = format;
    att.samples = VK_SAMPLE_COUNT_1_BIT;
    att.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkAttachmentReference ref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription sub = {0};
    sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    sub.colorAttachmentCount = 1;
    sub.pColorAttachments = &ref;
    VkSubpassDependency deps[2] = {{0}};
    /* The previous frame's copy read the image: finish it before clearing. */
    deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    deps[0].dstSubpass = 0;
    deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[0].srcAccessMask = 0;
    deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    /* The copy after the pass reads what the pass wrote. */
    deps[1].srcSubpass = 0;
    deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
    deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    VkRenderPassCreateInfo rpi = {VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rpi.attachmentCount = 1;
    rpi.pAttachments = &att;
    rpi.subpassCount = 1;
    rpi.pSubpasses = &sub;
    rpi.dependencyCount = 2;
    rpi.pDependencies = deps;
    VkRenderPass pass;
    VK(vkCreateRenderPass(r.device, &rpi, NULL, &pass));
    VkFramebufferCreateInfo fbi = {VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fbi.renderPass = pass;
    fbi.attachmentCount = 1;
    fbi.pAttachments = &view;
    fbi.width = W;
    fbi.height = H;
    fbi.layers = 1;
    VkFramebuffer fb;
    VK(vkCreateFramebuffer(r.device, &fbi, NULL, &fb));

    VkShaderModule vs = shader(&r, embed_shaders_particles_vs, embed_shaders_particles_vs_size);
    VkShaderModule fs = shader(&r, embed_shaders_particles_fs, embed_shaders_particles_fs_size);
    VkVertexInputBindingDescription vb = {0, sizeof(particle), VK_VERTEX_INPUT_RATE_VERTEX};
    VkVertexInputAttributeDescription va[2] = {{0, 0, VK_FORMAT_R32G32_SFLOAT, 0},
                                               {1, 0, VK_FORMAT_R32G32_SFLOAT, 8}};
    VkPipelineVertexInputStateCreateInfo vin = {
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    vin.vertexBindingDescriptionCount = 1;
    vin.pVertexBindingDescriptions = &vb;
    vin.vertexAttributeDescriptionCount = 2;
    vin.pVertexAttributeDescriptions = va;
    VkRect2D scissor = {{0, 0}, {W, H}};
    VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    VkPipelineLayout layout;
    VK(vkCreatePipelineLayout(r.device, &pli, NULL, &layout));
    VkPipeline pipe = renderer_pipeline(
        &r, &(renderer_pipeline_desc){.vs = vs,
                                      .fs = fs,
                                      .vertex_input = &vin,
                                      .topology = VK_PRIMITIVE_TOPOLOGY_POINT_LIST,
                                      .w = W,
                                      .h = H,
                                      .layout = layout,
                                      .pass = pass});

    host_buffer readback = readback_create(&r, (VkDeviceSize)W * H * 4);
    void *pixels = readback.map;

    /* The frame's commands never change: record them once. */
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = r.gfx_family;
    VkCommandPool cpool;
    VK(vkCreateCommandPool(r.device, &cpi, NULL, &cpool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cpool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    VK(vkAllocateCommandBuffers(r.device, &cai, &cmd));
    VkCommandBufferBeginInfo cbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cmd, &cbi));
    VkClearValue clear = {.color = {{0.02f, 0.02f, 0.05f, 1.0f}}};
    VkRenderPassBeginInfo rbegin = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rbegin.renderPass = pass;
    rbegin.framebuffer = fb;
    rbegin.renderArea = scissor;
    rbegin.clearValueCount = 1;
    rbegin.pClearValues = &clear;
    vkCmdBeginRenderPass(cmd, &rbegin, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipe);
    VkDeviceSize zero = 0;
    vkCmdBindVertexBuffers(cmd, 0, 1, &pbuf, &zero);
    vkCmdDraw(cmd, n, 1, 0, 0);
    vkCmdEndRenderPass(cmd);
    VkBufferImageCopy region = {0};
    region.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = (VkExtent3D){W, H, 1};
    vkCmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.buf, 1,
                           &region);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                         0, NULL, 0, NULL);
    VK(vkEndCommandBuffer(cmd));

    /* The renderer's timeline: value f = frame f's draw is done with the
     * particle buffer. */
    VkSemaphoreTypeCreateInfo sti = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    sti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &sti;
    VkSemaphore drawn;
    VK(vkCreateSemaphore(r.device, &sci, NULL, &drawn));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK(vkCreateFence(r.device, &fci, NULL, &fence));

    /* ---- the frames ---- */
    uint8_t *prev = calloc(W * H, 4);
    int ok = 1;
    uint32_t far_off = 0;
    for (uint32_t f = 1; f <= frames; ++f) {
        /* 1. vkc: wait until the last draw has read the particles, step. */
        if (f > 1)
            CHECK(vkc_wait_host_semaphore(ctx, drawn, f - 1));
        vkc_ticket t;
        CHECK(vkc_seq_submit(seq, &t));
        VkSemaphore computed;
        uint64_t computed_value;
        CHECK(vkc_ticket_export(ctx, t, &computed, &computed_value));

        /* 2. The renderer: wait for vkc's value on the GPU, draw, copy out. */
        VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_VERTEX_INPUT_BIT;
        uint64_t drawn_value = f;
        VkTimelineSemaphoreSubmitInfo tsi = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        tsi.waitSemaphoreValueCount = 1;
        tsi.pWaitSemaphoreValues = &computed_value;
        tsi.signalSemaphoreValueCount = 1;
        tsi.pSignalSemaphoreValues = &drawn_value;
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.pNext = &tsi;
        si.waitSemaphoreCount = 1;
        si.pWaitSemaphores = &computed;
        si.pWaitDstStageMask = &wait_stage;
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cmd;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &drawn;
        lock_queue(&r);
        VkResult vr = vkQueueSubmit(r.gfx_queue, 1, &si, fence);
        unlock_queue(&r);
        VK(vr);
        VK(vkWaitForFences(r.device, 1, &fence, VK_TRUE, UINT64_MAX));
        VK(vkResetFences(r.device, 1, &fence));

        /* 3. Write the frame. */
        char name[64];
        snprintf(name, sizeof(name), "particles_%u.png", f - 1);
        ok &= sample_write_png(name, pixels, W, H);

        /* Check: the positions match the CPU's steps ... */
        for (int i = 0; i < STEPS_PER_FRAME; ++i)
            step_cpu(p, n);
        CHECK(vkc_buffer_download(particles, 0, gpu, bci.size));
        uint32_t off = 0;
        for (uint32_t i = 0; i < n; ++i)
            if (fabsf(gpu[i].x - p[i].x) > 1e-3f || fabsf(gpu[i].y - p[i].y) > 1e-3f)
                off++;
        far_off = off > far_off ? off : far_off;
        /* ... and the picture changed since the last frame. */
        uint32_t lit = 0, changed = 0;
        const uint8_t *px = pixels;
        for (uint32_t i = 0; i < W * H; ++i) {
            lit += px[4 * i + 0] > 40 || px[4 * i + 2] > 80;
            changed += memcmp(px + 4 * i, prev + 4 * i, 4) != 0;
        }
        memcpy(prev, pixels, W * H * 4);
        printf("frame %u: %s, %u pixels lit, %u changed, %u of %u particles off the CPU's\n", f - 1,
               name, lit, changed, off, n);
        if (lit == 0 || changed == 0)
            ok = 0;
    }
    /* A bounce decided on the other side of a wall by float rounding sends a
     * particle elsewhere: allow a handful in 100k, no more. */
    if (far_off > n / 10000 + 2)
        ok = 0;
    VK(vkQueueWaitIdle(r.gfx_queue));

    /* ---- teardown: vkc first; it destroys only what it created ---- */
    vkc_seq_destroy(seq);
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(particles);
    vkc_context_destroy(ctx);
    vkDestroyFence(r.device, fence, NULL);
    vkDestroySemaphore(r.device, drawn, NULL);
    vkDestroyCommandPool(r.device, cpool, NULL);
    readback_destroy(&r, &readback);
    vkDestroyPipeline(r.device, pipe, NULL);
    vkDestroyPipelineLayout(r.device, layout, NULL);
    vkDestroyShaderModule(r.device, vs, NULL);
    vkDestroyShaderModule(r.device, fs, NULL);
    vkDestroyFramebuffer(r.device, fb, NULL);
    vkDestroyRenderPass(r.device, pass, NULL);
    image_destroy(&r, &color);
    vkDestroyBuffer(r.device, pbuf, NULL);
    vkFreeMemory(r.device, pmem, NULL);
    renderer_destroy(&r);
    free(p);
    free(gpu);
    free(prev);
    printf("particles: %s\n", ok ? "ok (they move, and match the CPU)" : "WRONG");
    return !ok || renderer_validation_status();
}
