/* renderer: vkc post-processing a real renderer's frames.
 *
 * Teaches: compute on a host's images. A headless renderer (its own
 * instance and device, volk's globals, a graphics pipeline with a depth
 * buffer) draws a small moving scene - lit boxes spinning on a floor, two
 * glowing emitters - into an offscreen RGBA16F image on the graphics
 * family. vkc, given the device with vkc_context_wrap on the compute-only
 * family where there is one, runs a post-process chain on that image
 * (postfx.h: bright pass at half resolution, a separable Gaussian blur
 * through shared memory, composite, ACES tone map into an RGBA8 image the
 * renderer owns). The images change hands through queue-family ownership
 * transfers (vkc_seq_acquire_image / vkc_seq_release_image) and semaphores
 * (vkc_wait_host_semaphore, vkc_ticket_export); the renderer copies the
 * tone-mapped image out and writes frame_NNN.png with libpng.
 *
 * Check mode (--check, run by ctest): each frame's HDR input and output
 * are read back; the output must match the CPU reference of the chain run
 * on that input (postfx.h) and must differ from the previous frame's
 * reference, so a missing or stale result fails.
 *
 * Usage: renderer [--check] [--frames N] [--size WxH] [--out DIR] [--stale K]
 *        (default 8 frames of 640x360 into out/renderer; --stale K leaves
 *        frame K's composite out, which --check must call stale) */
#define _POSIX_C_SOURCE 200809L
#include <volk.h> /* the renderer uses volk; vkc keeps its own tables */

#include "sample_host.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include "embed_shaders.h"
#include "postfx.h"

/* ---- a little linear algebra (column-major, as GLSL) ------------------------ */

typedef struct mat4 {
    float m[16]; /* m[col * 4 + row] */
} mat4;

static mat4 mat4_mul(const mat4 *a, const mat4 *b)
{
    mat4 r;
    for (int c = 0; c < 4; ++c)
        for (int row = 0; row < 4; ++row) {
            float s = 0;
            for (int k = 0; k < 4; ++k)
                s += a->m[k * 4 + row] * b->m[c * 4 + k];
            r.m[c * 4 + row] = s;
        }
    return r;
}

/* Vulkan clip space: y down, depth 0..1. */
static mat4 perspective(float fovy, float aspect, float znear, float zfar)
{
    float f = 1.0f / tanf(fovy * 0.5f);
    mat4 p = {{0}};
    p.m[0] = f / aspect;
    p.m[5] = -f;
    p.m[10] = zfar / (znear - zfar);
    p.m[11] = -1.0f;
    p.m[14] = znear * zfar / (znear - zfar);
    return p;
}

static void normalize3(float *v)
{
    float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; ++i)
        v[i] /= l;
}

static mat4 look_at(const float *eye, const float *at)
{
    float f[3] = {at[0] - eye[0], at[1] - eye[1], at[2] - eye[2]};
    normalize3(f);
    float s[3] = {-f[2], 0, f[0]}; /* f x (0, 1, 0) */
    normalize3(s);
    float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
    mat4 v = {{0}};
    for (int i = 0; i < 3; ++i) {
        v.m[i * 4 + 0] = s[i];
        v.m[i * 4 + 1] = u[i];
        v.m[i * 4 + 2] = -f[i];
    }
    v.m[12] = -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]);
    v.m[13] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
    v.m[14] = f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2];
    v.m[15] = 1.0f;
    return v;
}

/* Rotation about y by a, then about x by b, scaled by s, moved to t. */
static mat4 model_matrix(float a, float b, const float *s, const float *t)
{
    float ca = cosf(a), sa = sinf(a), cb = cosf(b), sb = sinf(b);
    /* R = Ry(a) * Rx(b), columns scaled by s */
    float r[9] = {ca, 0, -sa, sa * sb, cb, ca * sb, sa * cb, -sb, ca * cb}; /* column-major */
    mat4 m = {{0}};
    for (int c = 0; c < 3; ++c)
        for (int row = 0; row < 3; ++row)
            m.m[c * 4 + row] = r[c * 3 + row] * s[c];
    m.m[12] = t[0];
    m.m[13] = t[1];
    m.m[14] = t[2];
    m.m[15] = 1.0f;
    return m;
}

/* ---- the scene --------------------------------------------------------------- */

typedef struct object_push { /* as in shaders/renderer_vs.vert */
    float mvp[16];
    float model[12]; /* rows of the 3x4 model matrix */
    float color[4];  /* rgb albedo, a: emitted radiance */
} object_push;

#define OBJECTS 6
static const float EYE[3] = {0.0f, 2.2f, 6.0f}; /* as in renderer_fs.frag */

/* The scene at time t: a floor, three boxes circling and tumbling, two
 * emitters bobbing between them. */
static void scene(float t, float aspect, object_push out[OBJECTS])
{
    const float at[3] = {0.0f, -0.2f, 0.0f};
    mat4 view = look_at(EYE, at), proj = perspective(0.85f, aspect, 0.1f, 50.0f);
    mat4 vp = mat4_mul(&proj, &view);
    for (int i = 0; i < OBJECTS; ++i) {
        float s[3], p[3], a = 0, b = 0, color[4];
        if (i == 0) { /* the floor */
            s[0] = 5.0f, s[1] = 0.08f, s[2] = 5.0f;
            p[0] = 0.0f, p[1] = -1.1f, p[2] = 0.0f;
            color[0] = 0.16f, color[1] = 0.15f, color[2] = 0.15f, color[3] = 0.0f;
        } else if (i <= 3) { /* three boxes on a circle */
            static const float albedo[3][3] = {
                {0.85f, 0.22f, 0.16f}, {0.15f, 0.65f, 0.60f}, {0.90f, 0.70f, 0.20f}};
            float ang = 0.6f * t + (float)(i - 1) * 2.0943951f;
            s[0] = s[1] = s[2] = 0.55f;
            p[0] = 1.9f * cosf(ang), p[1] = -0.45f + 0.15f * sinf(1.7f * t + (float)i);
            p[2] = 1.9f * sinf(ang);
            a = t * (0.9f + 0.35f * (float)i), b = t * (0.5f + 0.2f * (float)i);
            memcpy(color, albedo[i - 1], sizeof(albedo[0]));
            color[3] = 0.0f;
        } else { /* emitters: warm and cold */
            float ang = 1.3f * t * (i == 4 ? 1.0f : -1.0f) + (i == 4 ? 0.0f : 3.1415926f);
            s[0] = s[1] = s[2] = 0.16f;
            p[0] = 0.8f * cosf(ang), p[1] = 0.35f + 0.35f * sinf(2.1f * t + (float)i);
            p[2] = 0.8f * sinf(ang);
            a = 2.0f * t, b = 1.3f * t;
            if (i == 4)
                color[0] = 1.0f, color[1] = 0.55f, color[2] = 0.2f, color[3] = 14.0f;
            else
                color[0] = 0.3f, color[1] = 0.55f, color[2] = 1.0f, color[3] = 10.0f;
        }
        mat4 m = model_matrix(a, b, s, p);
        mat4 mvp = mat4_mul(&vp, &m);
        memcpy(out[i].mvp, mvp.m, sizeof(mvp.m));
        for (int row = 0; row < 3; ++row)
            for (int c = 0; c < 4; ++c)
                out[i].model[row * 4 + c] = m.m[c * 4 + row];
        memcpy(out[i].color, color, sizeof(color));
    }
}

/* ---- the frame: pass, pipeline --------------------------------------------------- */

typedef struct frame_pass {
    VkRenderPass pass;
    VkFramebuffer fb;
    VkPipelineLayout layout;
    VkPipeline pipe;
    VkShaderModule vs, fs;
} frame_pass;

/* A pass that clears and draws into color and depth. Color is left in
 * TRANSFER_SRC_OPTIMAL: the check copies it out, and vkc takes it from
 * there into GENERAL for its storage-image loads. */
static frame_pass frame_pass_create(renderer *r, const gpu_image *color, VkFormat color_format,
                                    const gpu_image *depth, VkFormat depth_format, uint32_t w,
                                    uint32_t h)
{
    frame_pass fp;
    VkAttachmentDescription att[2] = {{0}, {0}};
    att[0].format = color_format;
    att[0].samples = VK_SAMPLE_COUNT_1_BIT;
    att[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att[0].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att[0].finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    att[1] = att[0];
    att[1].format = depth_format;
    att[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
    VkAttachmentReference cref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkAttachmentReference dref = {1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
    VkSubpassDescription sub = {0};
    sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    sub.colorAttachmentCount = 1;
    sub.pColorAttachments = &cref;
    sub.pDepthStencilAttachment = &dref;
    VkSubpassDependency deps[2] = {{0}, {0}};
    /* Before: the last frame's depth writes, its copy and vkc's reads of the
     * color image (ordered by the semaphore this submit waits on). */
    deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    deps[0].dstSubpass = 0;
    deps[0].srcStageMask = VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT |
                           VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    deps[0].srcAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
    deps[0].dstStageMask = VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                           VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT |
                           VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[0].dstAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                            VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
                            VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    /* After: the copy out and vkc's compute read the color image. */
    deps[1].srcSubpass = 0;
    deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
    deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_READ_BIT;
    VkRenderPassCreateInfo rpi = {VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rpi.attachmentCount = 2;
    rpi.pAttachments = att;
    rpi.subpassCount = 1;
    rpi.pSubpasses = &sub;
    rpi.dependencyCount = 2;
    rpi.pDependencies = deps;
    VK(vkCreateRenderPass(r->device, &rpi, NULL, &fp.pass));
    VkImageView views[2] = {color->view, depth->view};
    VkFramebufferCreateInfo fbi = {VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fbi.renderPass = fp.pass;
    fbi.attachmentCount = 2;
    fbi.pAttachments = views;
    fbi.width = w;
    fbi.height = h;
    fbi.layers = 1;
    VK(vkCreateFramebuffer(r->device, &fbi, NULL, &fp.fb));

    fp.vs = shader(r, embed_shaders_renderer_vs, embed_shaders_renderer_vs_size);
    fp.fs = shader(r, embed_shaders_renderer_fs, embed_shaders_renderer_fs_size);
    VkPushConstantRange pcr = {VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                               sizeof(object_push)};
    VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    VK(vkCreatePipelineLayout(r->device, &pli, NULL, &fp.layout));
    /* Faces come from gl_VertexIndex, not wound consistently: no culling. */
    fp.pipe = renderer_pipeline(
        r, &(renderer_pipeline_desc){.vs = fp.vs,
                                     .fs = fp.fs,
                                     .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
                                     .w = w,
                                     .h = h,
                                     .depth = true,
                                     .layout = fp.layout,
                                     .pass = fp.pass});
    return fp;
}

static void frame_pass_destroy(renderer *r, frame_pass *fp)
{
    vkDestroyPipeline(r->device, fp->pipe, NULL);
    vkDestroyPipelineLayout(r->device, fp->layout, NULL);
    vkDestroyShaderModule(r->device, fp->vs, NULL);
    vkDestroyShaderModule(r->device, fp->fs, NULL);
    vkDestroyFramebuffer(r->device, fp->fb, NULL);
    vkDestroyRenderPass(r->device, fp->pass, NULL);
}

static VkFormat depth_format(renderer *r)
{
    const VkFormat want[] = {VK_FORMAT_D32_SFLOAT, VK_FORMAT_D16_UNORM};
    for (int i = 0; i < 2; ++i) {
        VkFormatProperties fp;
        vkGetPhysicalDeviceFormatProperties(r->phys, want[i], &fp);
        if (fp.optimalTilingFeatures & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT)
            return want[i];
    }
    fprintf(stderr, "no depth format\n");
    exit(1);
}

static int make_dirs(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST)
                return 0;
            *p = '/';
        }
    return !mkdir(buf, 0755) || errno == EEXIST;
}

/* Record frame f's draw into cmd (reset by the caller). */
static void record_draw(const frame_pass *fp, VkCommandBuffer cmd, uint32_t w, uint32_t h, float t)
{
    object_push objs[OBJECTS];
    scene(t, (float)w / (float)h, objs);
    VkClearValue clear[2] = {{.color = {{0.012f, 0.014f, 0.024f, 1.0f}}},
                             {.depthStencil = {1.0f, 0}}};
    VkRenderPassBeginInfo rbegin = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rbegin.renderPass = fp->pass;
    rbegin.framebuffer = fp->fb;
    rbegin.renderArea = (VkRect2D){{0, 0}, {w, h}};
    rbegin.clearValueCount = 2;
    rbegin.pClearValues = clear;
    vkCmdBeginRenderPass(cmd, &rbegin, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, fp->pipe);
    for (int i = 0; i < OBJECTS; ++i) {
        vkCmdPushConstants(cmd, fp->layout,
                           VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                           sizeof(object_push), &objs[i]);
        vkCmdDraw(cmd, 36, 1, 0, 0);
    }
    vkCmdEndRenderPass(cmd);
}

static void copy_to_buffer(VkCommandBuffer cmd, VkImage image, VkImageLayout layout, VkBuffer buf,
                           uint32_t w, uint32_t h)
{
    VkBufferImageCopy region = {0};
    region.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = (VkExtent3D){w, h, 1};
    vkCmdCopyImageToBuffer(cmd, image, layout, buf, 1, &region);
}

static void host_read_barrier(VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                         0, NULL, 0, NULL);
}

/* One image barrier (synchronization 1): a layout change, or half of a
 * queue-family ownership transfer when the families differ. */
static void image_barrier(VkCommandBuffer cmd, VkImage image, uint32_t src_family,
                          uint32_t dst_family, VkImageLayout from, VkImageLayout to,
                          VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                          VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
    VkImageMemoryBarrier b = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    b.srcAccessMask = src_access;
    b.dstAccessMask = dst_access;
    b.oldLayout = from;
    b.newLayout = to;
    b.srcQueueFamilyIndex = src_family == dst_family ? VK_QUEUE_FAMILY_IGNORED : src_family;
    b.dstQueueFamilyIndex = src_family == dst_family ? VK_QUEUE_FAMILY_IGNORED : dst_family;
    b.image = image;
    b.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

typedef struct sem_value {
    VkSemaphore sem;
    uint64_t value;
} sem_value;

/* Submit cmd on the graphics queue: wait (on every stage) for the waits,
 * signal the renderer's timeline to signal.value; fence may be null. */
static void submit(renderer *r, VkCommandBuffer cmd, const sem_value *waits, uint32_t n_waits,
                   sem_value signal, VkFence fence)
{
    VkSemaphore wsem[2];
    uint64_t wval[2];
    VkPipelineStageFlags wstage[2];
    for (uint32_t i = 0; i < n_waits; ++i) {
        wsem[i] = waits[i].sem;
        wval[i] = waits[i].value;
        wstage[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    }
    VkTimelineSemaphoreSubmitInfo tsi = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    tsi.waitSemaphoreValueCount = n_waits;
    tsi.pWaitSemaphoreValues = wval;
    tsi.signalSemaphoreValueCount = 1;
    tsi.pSignalSemaphoreValues = &signal.value;
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &tsi;
    si.waitSemaphoreCount = n_waits;
    si.pWaitSemaphores = wsem;
    si.pWaitDstStageMask = wstage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &signal.sem;
    lock_queue(r);
    VkResult vr = vkQueueSubmit(r->gfx_queue, 1, &si, fence);
    unlock_queue(r);
    VK(vr);
}

static void begin(VkCommandBuffer cmd)
{
    VK(vkResetCommandBuffer(cmd, 0));
    VkCommandBufferBeginInfo cbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK(vkBeginCommandBuffer(cmd, &cbi));
}

/* ---- vkc: the post-process chain on the renderer's images ----------------------- */

typedef struct post {
    vkc_context *ctx;
    vkc_image *hdr, *ldr;       /* the renderer's, wrapped */
    vkc_image *half_a, *half_b; /* vkc's: half-resolution bright pass and blur */
    vkc_kernel *bright, *blur, *composite;
    vkc_seq *seq;
    vkc_seq *stale; /* --stale: the chain without its composite */
} post;

/* Both wrapped images rest in TRANSFER_SRC_OPTIMAL, owned by the graphics
 * family: the renderer copies them out there, and each submission of the
 * sequence acquires them in it and releases them back in it. */
static const VkImageLayout HANDOVER = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;

static vkc_kernel *post_kernel(vkc_context *ctx, const uint32_t *spirv, size_t size,
                               const char *name)
{
    vkc_kernel *k;
    CHECK(vkc_kernel_create(
        ctx, &(vkc_kernel_desc){.spirv = spirv, .spirv_size = size, .name = name}, &k));
    return k;
}

static vkc_image *post_wrap(vkc_context *ctx, renderer *r, VkImage image, vkc_format format,
                            VkImageUsageFlags usage, uint32_t w, uint32_t h, const char *name)
{
    vkc_image *img;
    CHECK(vkc_image_wrap(ctx,
                         &(vkc_image_wrap_desc){.image = image,
                                                .format = format,
                                                .width = w,
                                                .height = h,
                                                .usage = usage,
                                                .layout = HANDOVER,
                                                .queue_family = r->gfx_family,
                                                .sharing_mode = VK_SHARING_MODE_EXCLUSIVE,
                                                .name = name},
                         &img));
    return img;
}

/* vkc on the renderer's device (the compute-only family's queue, or the
 * renderer's own through its lock), the chain recorded once. */
static void post_create(post *p, renderer *r, VkImage hdr, VkImageUsageFlags hdr_usage, VkImage ldr,
                        VkImageUsageFlags ldr_usage, const postfx_params *pp, bool stale)
{
    memset(p, 0, sizeof(*p));
    p->ctx = renderer_wrap_vkc(r);
    vkc_context *ctx = p->ctx;

    p->hdr = post_wrap(ctx, r, hdr, VKC_FORMAT_RGBA16F, hdr_usage, pp->w, pp->h, "hdr");
    p->ldr = post_wrap(ctx, r, ldr, VKC_FORMAT_RGBA8_UNORM, ldr_usage, pp->w, pp->h, "ldr");
    vkc_image_desc hd = {.format = VKC_FORMAT_RGBA16F,
                         .width = pp->half_w,
                         .height = pp->half_h,
                         .usage = VKC_IMAGE_USAGE_STORAGE};
    hd.name = "bloom_a";
    CHECK(vkc_image_create(ctx, &hd, &p->half_a));
    hd.name = "bloom_b";
    CHECK(vkc_image_create(ctx, &hd, &p->half_b));
    p->bright = post_kernel(ctx, embed_shaders_postfx_bright, embed_shaders_postfx_bright_size,
                            "postfx_bright");
    p->blur =
        post_kernel(ctx, embed_shaders_postfx_blur, embed_shaders_postfx_blur_size, "postfx_blur");
    p->composite = post_kernel(ctx, embed_shaders_postfx_composite,
                               embed_shaders_postfx_composite_size, "postfx_composite");

    /* Recorded once; the stale variant leaves the composite out. */
    postfx_vkc c = {p->bright, p->blur, p->composite, p->hdr, p->half_a, p->half_b, p->ldr};
    vkc_seq **seqs[2] = {&p->seq, &p->stale};
    for (int i = 0; i < (stale ? 2 : 1); ++i) {
        CHECK(vkc_seq_create(ctx, &(vkc_seq_desc){.name = i ? "postfx_stale" : "postfx"}, seqs[i]));
        vkc_seq *s = *seqs[i];
        CHECK(vkc_seq_acquire_image(s, p->hdr, r->gfx_family, HANDOVER));
        CHECK(vkc_seq_acquire_image(s, p->ldr, r->gfx_family, HANDOVER));
        CHECK(postfx_vkc_record(s, &c, pp, i ? 3 : 4));
        CHECK(vkc_seq_release_image(s, p->hdr, r->gfx_family, HANDOVER));
        CHECK(vkc_seq_release_image(s, p->ldr, r->gfx_family, HANDOVER));
        CHECK(vkc_seq_end(s));
    }
}

static void post_destroy(post *p)
{
    vkc_seq_destroy(p->seq);
    vkc_seq_destroy(p->stale);
    vkc_kernel_destroy(p->bright);
    vkc_kernel_destroy(p->blur);
    vkc_kernel_destroy(p->composite);
    vkc_image_destroy(p->half_a);
    vkc_image_destroy(p->half_b);
    vkc_image_destroy(p->hdr);
    vkc_image_destroy(p->ldr);
    vkc_context_destroy(p->ctx);
}

/* ---- the check ------------------------------------------------------------------ */

typedef struct options {
    bool check;
    uint32_t frames, w, h;
    uint32_t stale; /* > 0: frame `stale` skips the composite (the check must catch it) */
    const char *out;
} options;

static options parse(int argc, char **argv)
{
    options o = {false, 8, 640, 360, 0, "out/renderer"};
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--check"))
            o.check = true;
        else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            o.frames = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%ux%u", &o.w, &o.h) == 2)
            ++i;
        else if (!strcmp(argv[i], "--stale") && i + 1 < argc)
            o.stale = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            o.out = argv[++i];
        else {
            fprintf(stderr, "usage: renderer [--check] [--frames N] [--size WxH] [--out DIR] "
                            "[--stale K]\n");
            exit(2);
        }
    }
    if (o.frames < 2 || o.w < 16 || o.h < 16 || o.w > 8192 || o.h > 8192) {
        fprintf(stderr, "renderer: at least 2 frames, sizes 16..8192\n");
        exit(2);
    }
    return o;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    const uint32_t W = o.w, H = o.h;
    renderer r;
    renderer_create(&r);
    if (!make_dirs(o.out)) {
        fprintf(stderr, "cannot create %s\n", o.out);
        return 1;
    }
    bool split = r.compute_family != r.gfx_family; /* ownership transfers needed */

    /* ---- the renderer's images and pass ---- */
    const VkFormat hdr_format = VK_FORMAT_R16G16B16A16_SFLOAT;
    const VkImageUsageFlags hdr_usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                        VK_IMAGE_USAGE_STORAGE_BIT |
                                        VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    const VkImageUsageFlags ldr_usage =
        VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    VkFormat dformat = depth_format(&r);
    gpu_image hdr = image_create(&r, hdr_format, W, H, hdr_usage, VK_IMAGE_ASPECT_COLOR_BIT);
    gpu_image ldr =
        image_create(&r, VK_FORMAT_R8G8B8A8_UNORM, W, H, ldr_usage, VK_IMAGE_ASPECT_COLOR_BIT);
    gpu_image depth = image_create(&r, dformat, W, H, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                   VK_IMAGE_ASPECT_DEPTH_BIT);
    frame_pass fp = frame_pass_create(&r, &hdr, hdr_format, &depth, dformat, W, H);
    host_buffer hdr_rb = readback_create(&r, (VkDeviceSize)W * H * 8);
    host_buffer ldr_rb = readback_create(&r, (VkDeviceSize)W * H * 4);

    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = r.gfx_family;
    VkCommandPool cpool;
    VK(vkCreateCommandPool(r.device, &cpi, NULL, &cpool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cpool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 2;
    VkCommandBuffer cmds[2]; /* 0: draw, 1: take the result back */
    VK(vkAllocateCommandBuffers(r.device, &cai, cmds));
    VkSemaphoreTypeCreateInfo sti = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    sti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &sti;
    VkSemaphore timeline; /* the renderer's: 1 setup, 2f + 2 frame f drawn, 2f + 3 taken back */
    VK(vkCreateSemaphore(r.device, &sci, NULL, &timeline));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK(vkCreateFence(r.device, &fci, NULL, &fence));

    postfx_params pp = postfx_defaults(W, H);
    post p;
    post_create(&p, &r, hdr.image, hdr_usage, ldr.image, ldr_usage, &pp, o.stale > 0);

    /* Setup: the LDR image into its handover layout, given to vkc's family
     * like the HDR image will be after each draw. */
    begin(cmds[0]);
    image_barrier(cmds[0], ldr.image, r.gfx_family, r.gfx_family, VK_IMAGE_LAYOUT_UNDEFINED,
                  HANDOVER, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  0);
    if (split)
        image_barrier(cmds[0], ldr.image, r.gfx_family, r.compute_family, HANDOVER, HANDOVER,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0);
    VK(vkEndCommandBuffer(cmds[0]));
    submit(&r, cmds[0], NULL, 0, (sem_value){timeline, 1}, fence);
    VK(vkWaitForFences(r.device, 1, &fence, VK_TRUE, UINT64_MAX));
    VK(vkResetFences(r.device, 1, &fence));

    float *hdr_f = malloc((size_t)W * H * 16);
    uint8_t *ref = malloc((size_t)W * H * 4), *prev_ref = malloc((size_t)W * H * 4);
    int ok = hdr_f && ref && prev_ref;
    sem_value computed = {VK_NULL_HANDLE, 0}; /* vkc's ticket of the last frame */
    double t0 = sample_now();
    for (uint32_t f = 0; ok && f < o.frames; ++f) {
        /* 1. Draw: after vkc is done reading the last frame's HDR image
         *    (taken back from vkc's family), then give it to vkc. */
        begin(cmds[0]);
        if (split && f > 0)
            image_barrier(cmds[0], hdr.image, r.compute_family, r.gfx_family, HANDOVER, HANDOVER,
                          VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0,
                          VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                          VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
        record_draw(&fp, cmds[0], W, H, 0.35f * (float)f);
        if (o.check) {
            copy_to_buffer(cmds[0], hdr.image, HANDOVER, hdr_rb.buf, W, H);
            host_read_barrier(cmds[0]);
        }
        if (split)
            image_barrier(
                cmds[0], hdr.image, r.gfx_family, r.compute_family, HANDOVER, HANDOVER,
                VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0);
        VK(vkEndCommandBuffer(cmds[0]));
        submit(&r, cmds[0], &computed, f > 0 ? 1 : 0, (sem_value){timeline, 2 * f + 2},
               VK_NULL_HANDLE);

        /* 2. vkc: wait for the draw on the GPU, run the chain. */
        CHECK(vkc_wait_host_semaphore(p.ctx, timeline, 2 * f + 2));
        vkc_ticket t;
        CHECK(vkc_seq_submit(o.stale && f == o.stale ? p.stale : p.seq, &t));
        CHECK(vkc_ticket_export(p.ctx, t, &computed.sem, &computed.value));

        /* 3. Take the tone-mapped image back (waiting for vkc's ticket),
         *    copy it out and give it back to vkc's family for the next frame. */
        begin(cmds[1]);
        if (split)
            image_barrier(cmds[1], ldr.image, r.compute_family, r.gfx_family, HANDOVER, HANDOVER,
                          VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_TRANSFER_READ_BIT);
        copy_to_buffer(cmds[1], ldr.image, HANDOVER, ldr_rb.buf, W, H);
        host_read_barrier(cmds[1]);
        if (split)
            image_barrier(cmds[1], ldr.image, r.gfx_family, r.compute_family, HANDOVER, HANDOVER,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                          0);
        VK(vkEndCommandBuffer(cmds[1]));
        submit(&r, cmds[1], &computed, 1, (sem_value){timeline, 2 * f + 3}, fence);
        VK(vkWaitForFences(r.device, 1, &fence, VK_TRUE, UINT64_MAX));
        VK(vkResetFences(r.device, 1, &fence));

        char name[600];
        snprintf(name, sizeof(name), "%s/frame_%03u.png", o.out, f);
        ok &= sample_write_png(name, ldr_rb.map, W, H);
        if (!o.check) {
            printf("frame %u: %s\n", f, name);
            continue;
        }
        /* The check: frame f against the CPU on frame f's input, and unlike
         * the reference of frame f - 1 (a stale or missing result fails). */
        const uint16_t *h16 = hdr_rb.map;
        for (size_t i = 0; i < (size_t)W * H * 4; ++i)
            hdr_f[i] = postfx_half_to_float(h16[i]);
        ok &= postfx_cpu(&pp, hdr_f, ref);
        postfx_diff d = postfx_compare(ldr_rb.map, ref, (size_t)W * H);
        printf("frame %u: %s, max |vkc - cpu| = %u/255, %u pixels over %u/255", f, name, d.max,
               d.over, POSTFX_TOLERANCE);
        postfx_diff s = {0, 1};
        if (f > 0) {
            s = postfx_compare(ldr_rb.map, prev_ref, (size_t)W * H);
            printf("; %u pixels differ from frame %u's reference", s.over, f - 1);
        }
        printf("\n");
        if (s.over == 0)
            printf("frame %u: STALE: it matches frame %u's reference, not its own\n", f, f - 1);
        else if (d.over)
            printf("frame %u: WRONG: %u pixels off the CPU reference\n", f, d.over);
        ok &= d.over == 0 && s.over > 0;
        memcpy(prev_ref, ref, (size_t)W * H * 4);
    }
    double elapsed = sample_now() - t0;
    VK(vkQueueWaitIdle(r.gfx_queue));
    printf("%u frames of %ux%u in %.3f s; frames in %s/\n", o.frames, W, H, elapsed, o.out);

    /* ---- teardown: vkc first; it destroys only what it created ---- */
    post_destroy(&p);
    free(hdr_f);
    free(ref);
    free(prev_ref);
    vkDestroyFence(r.device, fence, NULL);
    vkDestroySemaphore(r.device, timeline, NULL);
    vkDestroyCommandPool(r.device, cpool, NULL);
    readback_destroy(&r, &hdr_rb);
    readback_destroy(&r, &ldr_rb);
    frame_pass_destroy(&r, &fp);
    image_destroy(&r, &depth);
    image_destroy(&r, &ldr);
    image_destroy(&r, &hdr);
    renderer_destroy(&r);
    printf("renderer: %s\n",
           ok ? (o.check ? "ok (every frame matches the CPU, none is stale)" : "ok")
              : "FAILED (see above)");
    return !ok || renderer_validation_status();
}
