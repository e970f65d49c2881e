/* Recording a sequence into Vulkan: its commands sorted by level into a
 * fresh recording unit, one barrier between levels (buffer hazards and the
 * image layout transitions the next level needs), queue-family ownership
 * halves of images, profile spans and debug labels.
 *
 * Owns: vkc__record and the sequence's barrier scratch (s->ibar). Calls:
 * pool (recording units, barriers, queries and spans, the marker), hazard.c's
 * image records, kernel, memory and image structs (read only); dispatch.c
 * calls it when a sequence changed. */
#include "seq.h"

/* ---- recording into Vulkan ---------------------------------------------------------------- */

static VkPipelineStageFlags2 vkc__stage_of(const vkc__command *c)
{
    if (c->kind == VKC_CMD_ACQUIRE || c->kind == VKC_CMD_RELEASE ||
        c->kind == VKC_CMD_ACQUIRE_IMAGE || c->kind == VKC_CMD_RELEASE_IMAGE)
        return VKC_WORK_STAGES;
    return c->kind == VKC_CMD_DISPATCH ? VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT
                                       : VK_PIPELINE_STAGE_2_TRANSFER_BIT;
}

static uint8_t vkc__span_of(const vkc__command *c)
{
    switch (c->kind) {
    case VKC_CMD_DISPATCH:
        return VKC__SPAN_DISPATCH;
    case VKC_CMD_COPY:
        return VKC__SPAN_COPY;
    case VKC_CMD_COPY_IMAGE:
    case VKC_CMD_COPY_BUFFER_TO_IMAGE:
    case VKC_CMD_COPY_IMAGE_TO_BUFFER:
        return VKC__SPAN_COPY;
    case VKC_CMD_FILL:
    case VKC_CMD_CLEAR_IMAGE:
        return VKC__SPAN_FILL;
    default:
        return VKC__SPAN_OWNERSHIP;
    }
}

/* ---- image layouts while recording ------------------------------------------------------- */

static bool vkc__push_ibar(vkc_seq *s, uint32_t *n, const VkImageMemoryBarrier2 *b)
{
    if (!vkc__grow((void **)&s->ibar, &s->ibar_cap, *n + 1, sizeof(*b)))
        return false;
    s->ibar[(*n)++] = *b;
    return true;
}

/* Move subresources [layer, layer + layers) of one mip of r to `to`, one
 * barrier per run of layers that share their current layout. */
static bool vkc__move_layers(vkc_seq *s, vkc__imgrec *r, uint32_t mip, uint32_t layer,
                             uint32_t layers, VkImageLayout to, VkPipelineStageFlags2 src,
                             VkPipelineStageFlags2 dst, uint32_t *n)
{
    for (uint32_t l = layer, end = layer + layers; l < end;) {
        VkImageLayout from = vkc__sub_at(r, mip, l)->cur;
        if (from == to) {
            ++l;
            continue;
        }
        uint32_t l0 = l;
        while (l < end && vkc__sub_at(r, mip, l)->cur == from)
            vkc__sub_at(r, mip, l++)->cur = to;
        VkImageMemoryBarrier2 b =
            vkc__image_barrier(r->image, from, to, src, dst, mip, 1, l0, l - l0);
        if (!vkc__push_ibar(s, n, &b))
            return false;
    }
    return true;
}

/* The layout transitions the commands order[from..to) (one level) need,
 * into s->ibar[0..*n). */
static vkc_result vkc__level_transitions(vkc_seq *s, uint32_t from, uint32_t to,
                                         VkPipelineStageFlags2 src, VkPipelineStageFlags2 dst,
                                         uint32_t *n)
{
    *n = 0;
    for (uint32_t i = from; i < to; ++i) {
        const vkc__command *c = &s->cmds[s->order[i]];
        for (uint32_t k = 0; k < c->use_count; ++k) {
            const vkc__use *u = &s->uses[c->use_first + k];
            if (!u->image || u->op == VKC__USE_ACQUIRE)
                continue;
            vkc__imgrec *r = vkc__find_img(s, u->image);
            for (uint32_t m = u->mip; r && m < u->mip + u->mips; ++m)
                if (!vkc__move_layers(s, r, m, u->layer, u->layers, u->layout, src, dst, n))
                    return VKC_FAIL(s->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image barriers");
        }
    }
    return VKC_SUCCESS;
}

/* The ownership half of an image: the acquire (from `other`, the layout
 * unchanged, before later work) or the release (to `other`, after earlier
 * work). Nothing to transfer for CONCURRENT images or vkc's own family. */
static void vkc__image_ownership(vkc_seq *s, VkCommandBuffer cb, const vkc__command *c,
                                 const vkc__use *u)
{
    vkc_context *ctx = s->obj.ctx;
    vkc__imgrec *r = vkc__find_img(s, u->image);
    const bool acquire = c->kind == VKC_CMD_ACQUIRE_IMAGE;
    const uint32_t own = ctx->info.queue_family;
    if (r) {
        for (uint32_t i = 0; i < r->mips * r->layers; ++i)
            r->sub[i].cur = u->layout;
        r->cur_released = !acquire;
    }
    if (u->image->concurrent || c->value == own)
        return;
    VkImageMemoryBarrier2 b = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    /* The other half's stage and access masks are ignored by Vulkan. */
    b.srcStageMask = acquire ? VK_PIPELINE_STAGE_2_NONE : VKC_WORK_STAGES;
    b.srcAccessMask = acquire ? 0 : vkc__writes_of(VKC_WORK_STAGES);
    b.dstStageMask = acquire ? VKC_WORK_STAGES : VK_PIPELINE_STAGE_2_NONE;
    b.dstAccessMask = acquire ? vkc__accesses_of(VKC_WORK_STAGES) : 0;
    b.oldLayout = b.newLayout = u->layout;
    b.srcQueueFamilyIndex = acquire ? c->value : own;
    b.dstQueueFamilyIndex = acquire ? own : c->value;
    b.image = u->image->image;
    b.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, u->image->mips, 0,
                                                   u->image->layers};
    vkc__cmd_barrier2(ctx, cb, NULL, &b, 1);
}

/* The image copies and clears. */
static void vkc__emit_image_op(vkc_seq *s, VkCommandBuffer cb, const vkc__command *c,
                               const vkc__use *u)
{
    vkc_context *ctx = s->obj.ctx;
    const vkc__aux *a = &s->aux[c->value];
    switch (c->kind) {
    case VKC_CMD_COPY_IMAGE:
        ctx->vk.vkCmdCopyImage(cb, u[0].image->image, u[0].layout, u[1].image->image, u[1].layout,
                               1, &a->image);
        break;
    case VKC_CMD_COPY_BUFFER_TO_IMAGE:
        ctx->vk.vkCmdCopyBufferToImage(cb, u[0].vk, u[1].image->image, u[1].layout, 1, &a->buffer);
        break;
    case VKC_CMD_COPY_IMAGE_TO_BUFFER:
        ctx->vk.vkCmdCopyImageToBuffer(cb, u[1].image->image, u[1].layout, u[0].vk, 1, &a->buffer);
        break;
    default: /* VKC_CMD_CLEAR_IMAGE */
        ctx->vk.vkCmdClearColorImage(cb, u[0].image->image, u[0].layout, &a->clear.value, 1,
                                     &a->clear.range);
        break;
    }
}

static bool vkc__labels_on(const vkc_context *ctx)
{
    return ctx->debug_utils && ctx->vki.vkCmdBeginDebugUtilsLabelEXT &&
           (ctx->features.validation || ctx->debug_labels);
}

/* Whether the recorded copies go without the completion count: work whose
 * completion the host's GPU takes (a release hands its results to another
 * queue, which waits on the timeline, not on the count). An immediate
 * batch meant for an idle queue (s->marker_optional) is decided in
 * vkc__record. */
static bool vkc__seq_uncounted(const vkc_seq *s)
{
    if (s->marker_choice == VKC_OFF)
        return true;
    if (s->marker_choice == VKC_ON)
        return false;
    for (uint32_t i = 0; i < s->cmd_count; ++i)
        if (s->cmds[i].kind == VKC_CMD_RELEASE || s->cmds[i].kind == VKC_CMD_RELEASE_IMAGE)
            return true;
    return false;
}

/* The command whose epilogue pipeline ends the copies, or NULL: a dispatch
 * alone in the last level (so the barrier before it orders it after
 * everything else, this submission's work and the ones before), of a
 * kernel that carries the epilogue, with 1 to VKC_EPILOGUE_GROUPS
 * workgroups (each one's arrival is an atomic on one word); not where
 * the marker's barrier serves more than the count (images going back to
 * their layouts, the end timestamp; host-visible writes where the
 * self-test saw them late). */
static const vkc__command *vkc__epilogue_cmd(const vkc_seq *s, bool marker, bool prof)
{
    vkc_context *ctx = s->obj.ctx;
    if (!marker || prof || s->img_count || (s->writes_mapped && !ctx->epi_mapped) ||
        !s->cmd_count || ctx->test_drop_barriers ||
        !atomic_load_explicit(&ctx->epi_on, memory_order_relaxed))
        return NULL;
    const vkc__command *c = &s->cmds[s->order[s->cmd_count - 1]];
    if (c->kind != VKC_CMD_DISPATCH || !c->kernel->epilogue ||
        (s->cmd_count > 1 && s->cmds[s->order[s->cmd_count - 2]].level == c->level))
        return NULL;
    const uint64_t groups = (uint64_t)c->groups[0] * c->groups[1] * c->groups[2];
    return groups && groups <= VKC_EPILOGUE_GROUPS ? c : NULL;
}

/* Whether command c binds exactly the buffers of the uses `pushed` (the
 * descriptors bound last, under c's layout): buffers only, so the
 * descriptors hold nothing else. */
static bool vkc__same_buffers(const vkc__use *pushed, const vkc__use *u, const vkc__command *c)
{
    if (!pushed || c->images)
        return false;
    for (uint32_t b = 0; b < c->use_count; ++b)
        if (pushed[b].vk != u[b].vk || pushed[b].offset != u[b].offset ||
            pushed[b].size != u[b].size)
            return false;
    return true;
}

/* Record the commands, level by level, into a fresh unit, begun without
 * SIMULTANEOUS_USE where `plain` (unless the copy may be armed). A failure
 * here is one of resources (memory, a recording unit), not of the
 * commands: it is returned but not latched, so the next submit records
 * again. */
vkc_result vkc__record(vkc_seq *s, bool plain, vkc__cmd **out)
{
    vkc_context *ctx = s->obj.ctx;
    *out = NULL;
    /* Counting sort of the commands by level (stable). */
    uint32_t nlev = s->cmd_count ? s->max_level + 1 : 0;
    if (!vkc__grow((void **)&s->order, &s->order_cap, s->cmd_count + nlev + 1, sizeof(uint32_t)))
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "emission order");
    uint32_t *start = s->order + s->cmd_count; /* nlev + 1 counters after the order */
    memset(start, 0, (nlev + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < s->cmd_count; ++i)
        start[s->cmds[i].level + 1]++;
    for (uint32_t l = 0; l < nlev; ++l)
        start[l + 1] += start[l];
    for (uint32_t i = 0; i < s->cmd_count; ++i)
        s->order[start[s->cmds[i].level]++] = i;

    const bool prof = VKC__PROFILED(s->profile);
    const uint64_t record_start = prof ? vkc__clock_ns() : 0;
    vkc__cmd *unit;
    /* A copy that may be armed waits behind the gate while queued again:
     * SIMULTANEOUS_USE whatever the context says. (vkc__seq_armable looks
     * at every command: asked once.) */
    const bool may_arm = !prof && vkc__seq_armable(s);
    VKC_FORWARD(vkc__cmd_acquire_as(ctx, may_arm || !plain, &unit));
    /* One reference on the whole set per recorded copy, none per object. */
    if (s->set) {
        unit->hold[0] = vkc__rset_obj(s->set);
        vkc__obj_retain(unit->hold[0]);
    }
    VkCommandBuffer cb = unit->cb;
    const bool labels = vkc__labels_on(ctx);
    /* Whether the copies count their completion: decided once. The last
     * dispatch publishes the count itself where it can (epilogue.c): no
     * marker after it. */
    bool marker = vkc__marker_on(ctx) && !vkc__seq_uncounted(s);
    const vkc__command *epi_cmd = vkc__epilogue_cmd(s, marker, prof);
    const VkPipeline epi_pipe =
        epi_cmd ? vkc__epilogue_pipeline(ctx, epi_cmd->kernel) : VK_NULL_HANDLE;
    if (!epi_pipe)
        epi_cmd = NULL;
    /* An immediate batch for an idle queue goes without the marker's
     * dispatch (its value then completes on the timeline), but not without
     * the epilogue, which adds none: its waits then poll the count (1-6%
     * less than the timeline on the H200, BENCHMARKS.md 2026-12-04). */
    if (s->marker_optional && !epi_cmd)
        marker = false;
    /* Armable (arm.c): the dispatches under conditional rendering on the
     * unit's predicate word, so that a cancelled armed copy runs empty;
     * its barriers and the marker run whatever the word says. */
    s->armable = may_arm && marker && vkc__arm_slot(s, unit);
    /* An armed copy that ends with the epilogue counts a cancel through the
     * marker under the inverted predicate, right after the first barrier:
     * an opened copy reads its word for the last time before its count
     * moves (a cancel zeroes the word once that count is seen, gate.c), a
     * cancelled one after (its restore waits for the next value). */
    const bool inv_first = s->armable && epi_cmd;
    unit->count_first = inv_first;
    if (s->armable && !inv_first)
        vkc__arm_block(s, unit);
    if (prof) {
        /* Spans: the submission, one per level's barrier, one per command.
         * Without queries the recording goes on unprofiled. */
        vkc_result pr = vkc__cmd_queries(ctx, unit, 1 + nlev + s->cmd_count);
        if (pr < 0 && ctx->profile)
            ctx->profile->failed(ctx, pr);
        vkc__cmd_span_begin(ctx, unit, VKC__SPAN_SUBMISSION, s->name);
    }
    VkPipelineStageFlags2 before = VKC_WORK_STAGES; /* earlier submissions */
    /* The level barriers wait on the level just before them only: each one
     * chains after the barrier before that level (Vulkan's execution
     * dependency chains), whose availability operation already covered the
     * older writes, and the next barrier's visibility operation reaches
     * everything available. A source scope of every stage used so far made
     * each barrier of a compute chain wait on transfer work too, which the
     * H200 charged on every dependent step. */
    VkPipelineStageFlags2 last = VKC_WORK_STAGES;
    VkPipeline bound = VK_NULL_HANDLE;
    /* The descriptor writes depend on the kernel alone (each points at its
     * own info slot): filled when the kernel changes, only the infos per
     * dispatch. */
    VkDescriptorBufferInfo infos[VKC_MAX_BINDINGS];
    VkDescriptorImageInfo iinfos[VKC_MAX_BINDINGS];
    VkWriteDescriptorSet writes[VKC_MAX_BINDINGS];
    const vkc_kernel *written = NULL;
    /* What the last dispatch left in the command buffer's state: a
     * dispatch with the same pipeline layout and the same buffers or push
     * constants finds them in place (Vulkan keeps both across dispatches
     * and pipeline binds of one layout), so a batch of the same kernel on
     * the same buffers pushes them once, not per dispatch. Images are
     * pushed every time. */
    VkPipelineLayout state_layout = VK_NULL_HANDLE;
    const vkc__use *pushed = NULL; /* the uses whose descriptors are bound */
    const vkc__command *pushed_pc = NULL;
    uint32_t i = 0;
    vkc_result r = VKC_SUCCESS;
    /* Every submission finds each image in its resting layout. */
    for (uint32_t k = 0; k < s->img_count; ++k) {
        vkc__imgrec *ir = &s->imgs[k];
        ir->cur_released = false;
        for (uint32_t j = 0; j < ir->mips * ir->layers; ++j)
            ir->sub[j].cur = ir->image->resting;
    }
    while (i < s->cmd_count && r >= 0) {
        uint32_t level = s->cmds[s->order[i]].level;
        uint32_t end = i;
        VkPipelineStageFlags2 stages = 0;
        while (end < s->cmd_count && s->cmds[s->order[end]].level == level)
            stages |= vkc__stage_of(&s->cmds[s->order[end++]]);
        /* One barrier before each level: after everything earlier (the first
         * one orders this submission after the previous ones), with the
         * layout transitions of the level's images. */
        uint32_t nib = 0;
        r = s->img_count ? vkc__level_transitions(s, i, end, before, stages, &nib) : VKC_SUCCESS;
        if (r < 0)
            break;
        if (!(ctx->test_drop_barriers && i > 0)) {
            const uint32_t span = unit->span_count;
            if (prof)
                vkc__cmd_span_begin(ctx, unit, VKC__SPAN_BARRIER, "barrier");
            if (nib) {
                VkMemoryBarrier2 mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
                mb.srcStageMask = before;
                mb.srcAccessMask = vkc__writes_of(before);
                mb.dstStageMask = stages;
                mb.dstAccessMask = vkc__accesses_of(stages);
                vkc__cmd_barrier2(ctx, cb, &mb, s->ibar, nib);
            } else {
                vkc__cmd_barrier(ctx, cb, last, vkc__writes_of(last), stages,
                                 vkc__accesses_of(stages));
            }
            if (prof)
                vkc__cmd_span_end(ctx, unit, span);
        }
        if (inv_first && i == 0) {
            vkc__arm_inverted_marker(s, unit);
            if (!unit->has_marker)
                r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_DEVICE_MEMORY, "completion marker");
            vkc__arm_block(s, unit);
        }
        before |= stages;
        last = stages;
        for (; i < end; ++i) {
            const vkc__command *c = &s->cmds[s->order[i]];
            const vkc__use *u = &s->uses[c->use_first];
            if (labels) {
                VkDebugUtilsLabelEXT lb = {VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
                lb.pLabelName = c->label;
                ctx->vki.vkCmdBeginDebugUtilsLabelEXT(cb, &lb);
            }
            const uint32_t span = unit->span_count;
            if (prof)
                vkc__cmd_span_begin(ctx, unit, vkc__span_of(c), c->label);
            if (c->kind == VKC_CMD_COPY) {
                VkBufferCopy region = {u[0].offset, u[1].offset, u[0].size};
                ctx->vk.vkCmdCopyBuffer(cb, u[0].vk, u[1].vk, 1, &region);
            } else if (c->kind == VKC_CMD_FILL) {
                ctx->vk.vkCmdFillBuffer(cb, u[0].vk, u[0].offset, u[0].size, c->value);
            } else if (c->kind == VKC_CMD_ACQUIRE || c->kind == VKC_CMD_RELEASE) {
                vkc__cmd_ownership(ctx, cb, u[0].vk, u[0].offset, u[0].size,
                                   c->kind == VKC_CMD_ACQUIRE, c->value);
            } else if (c->kind == VKC_CMD_ACQUIRE_IMAGE || c->kind == VKC_CMD_RELEASE_IMAGE) {
                vkc__image_ownership(s, cb, c, u);
            } else if (c->kind != VKC_CMD_DISPATCH) {
                vkc__emit_image_op(s, cb, c, u);
            } else {
                const vkc_kernel *k = c->kernel;
                const VkPipeline pipe = c == epi_cmd ? epi_pipe : k->pipeline;
                if (pipe != bound) {
                    ctx->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
                    bound = pipe;
                }
                if (k->layout != state_layout) {
                    state_layout = k->layout;
                    pushed = NULL;
                    pushed_pc = NULL;
                }
                if (c->use_count && !vkc__same_buffers(pushed, u, c)) {
                    if (k != written) {
                        /* A binding's kind fixes whether its use is a buffer
                         * (vkc__bind_arg refuses the other). */
                        for (uint32_t b = 0; b < c->use_count; ++b) {
                            const vkc_binding_info *bi = &k->info.bindings[b];
                            writes[b] =
                                (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
                            writes[b].dstBinding = b;
                            writes[b].descriptorCount = 1;
                            writes[b].descriptorType = vkc__descriptor_type(bi);
                            if (bi->kind == VKC_BINDING_BUFFER)
                                writes[b].pBufferInfo = &infos[b];
                            else
                                writes[b].pImageInfo = &iinfos[b];
                        }
                        written = k;
                    }
                    for (uint32_t b = 0; b < c->use_count; ++b) {
                        if (u[b].buffer)
                            infos[b] = (VkDescriptorBufferInfo){u[b].vk, u[b].offset, u[b].size};
                        else
                            iinfos[b] = (VkDescriptorImageInfo){
                                u[b].sampler ? u[b].sampler->sampler : VK_NULL_HANDLE, u[b].view,
                                u[b].image ? u[b].layout : VK_IMAGE_LAYOUT_UNDEFINED};
                    }
                    if (ctx->features.push_descriptors) {
                        ctx->vk.vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
                                                          k->layout, 0, c->use_count, writes);
                    } else {
                        VkDescriptorSet set;
                        r = vkc__cmd_alloc_set(ctx, unit, k->set_layout, &set);
                        if (r < 0)
                            break;
                        for (uint32_t b = 0; b < c->use_count; ++b)
                            writes[b].dstSet = set;
                        ctx->vk.vkUpdateDescriptorSets(ctx->device, c->use_count, writes, 0, NULL);
                        ctx->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
                                                        k->layout, 0, 1, &set, 0, NULL);
                    }
                    pushed = u; /* never matched by a command with images */
                }
                if (c->push_size && !(pushed_pc && pushed_pc->push_size == c->push_size &&
                                      memcmp(s->push + pushed_pc->push_offset,
                                             s->push + c->push_offset, c->push_size) == 0)) {
                    ctx->vk.vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                               c->push_size, s->push + c->push_offset);
                    pushed_pc = c;
                }
                ctx->vk.vkCmdDispatch(cb, c->groups[0], c->groups[1], c->groups[2]);
            }
            if (prof)
                vkc__cmd_span_end(ctx, unit, span);
            if (labels)
                ctx->vki.vkCmdEndDebugUtilsLabelEXT(cb);
        }
    }
    if (r >= 0 && s->img_count) {
        /* Back to the resting layouts, so the next submission (of this
         * sequence or another) and the blocking transfers find them there;
         * released images are the host's now. */
        uint32_t n = 0;
        for (uint32_t k = 0; k < s->img_count && r >= 0; ++k) {
            vkc__imgrec *ir = &s->imgs[k];
            for (uint32_t m = 0; !ir->cur_released && m < ir->mips; ++m)
                if (!vkc__move_layers(s, ir, m, 0, ir->layers, ir->image->resting, before,
                                      VKC_WORK_STAGES, &n))
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "image barriers");
        }
        if (r >= 0 && n)
            vkc__cmd_barrier2(ctx, cb, NULL, s->ibar, n);
    }
    if (s->armable)
        vkc__arm_end(s, unit);
    if (r >= 0 && s->writes_mapped && !marker) {
        /* The host reads mapped memory after waiting on the ticket. */
        vkc__cmd_barrier(ctx, cb, last, vkc__writes_of(last), VK_PIPELINE_STAGE_2_HOST_BIT,
                         VK_ACCESS_2_HOST_READ_BIT);
    }
    /* The submission's span ends before the completion marker: a wait that
     * sees the marker may return before anything after it is written. */
    if (prof)
        vkc__cmd_span_end(ctx, unit, 0);
    if (r >= 0 && epi_cmd) {
        unit->has_marker = true;
        /* Host-visible results made available to the host by the end of the
         * submission, as after the marker (nothing else on the host reads
         * this submission's writes: its count is read as the marker's). */
        if (s->writes_mapped || ctx->epi_barrier)
            vkc__cmd_barrier(ctx, cb, last, vkc__writes_of(last), VK_PIPELINE_STAGE_2_HOST_BIT,
                             VK_ACCESS_2_HOST_READ_BIT);
        VKC_STAT_ADD(ctx, epilogue_records, 1);
    } else if (r >= 0 && marker) {
        vkc__cmd_marker(ctx, unit, last, s->writes_mapped); /* covers host reads too */
    }
    unit->marker_optional = !marker && vkc__marker_on(ctx);
    unit->signal_later = s->signal_later;
    if (prof) {
        unit->record_ns[0] = record_start;
        unit->record_ns[1] = vkc__clock_ns();
        unit->record_tid = vkc__thread_id();
    }
    if (r >= 0) {
        VkResult vr = VKC_VK(vkEndCommandBuffer, ctx->vk.vkEndCommandBuffer(cb));
        if (vr < 0)
            r = vkc__vk_fail(ctx, vr, "vkEndCommandBuffer", __FILE__, __LINE__);
    }
    if (r < 0) {
        vkc__cmd_release(ctx, unit);
        return r;
    }
    *out = unit;
    return VKC_SUCCESS;
}
