/* Sequences: recording, barriers between hazard levels, grid-stride
 * sizing, replay, submit and tickets. Recording a sequence into Vulkan
 * command buffers is record.c's.
 *
 * A sequence keeps its commands on the CPU (levels from hazard.c) and
 * records them into Vulkan command buffers at vkc_seq_end (and again only
 * when something changed), one barrier between levels.
 *
 * Owns: vkc_seq. Calls: hazard.c, pool (recording units, submit, waits),
 * kernel and memory structs (read only). Immediate mode (immediate.c) sits
 * on top of it. */
#include "seq.h"

#include <stdio.h>

/* ---- lifetime ------------------------------------------------------------------ */

static void vkc__seq_release_units(vkc_seq *s)
{
    vkc__arm_cancel(s->obj.ctx, &s->arm_misses); /* an armed copy of it runs empty */
    for (int i = 0; i < VKC_SEQ_RING_MAX; ++i) {
        vkc__cmd_release(s->obj.ctx, s->units[i]);
        s->units[i] = NULL;
    }
}

/* Units in flight go to the pending list with their hold on the set; the
 * objects go when the last of them retires. */
void vkc__seq_let_go(vkc_seq *s)
{
    vkc__seq_release_units(s);
    if (s->set)
        vkc__obj_release(vkc__rset_obj(s->set));
    s->set = NULL;
    vkc__seq_sync_tag(s);
}

static void vkc__seq_free(vkc__obj *o)
{
    vkc_seq *s = (vkc_seq *)o;
    vkc__seq_let_go(s);
    vkc__free(s->cmds);
    vkc__free(s->arm_units);
    vkc__free(s->uses);
    vkc__free(s->push);
    for (uint32_t i = 0; i < s->buf_cap; ++i)
        vkc__free(s->bufs[i].r);
    vkc__free(s->bufs);
    for (uint32_t i = 0; i < s->img_cap; ++i)
        vkc__free(s->imgs[i].sub);
    vkc__free(s->imgs);
    vkc__free(s->aux);
    vkc__free(s->ibar);
    vkc__free(s->order);
    vkc__free(s);
}

vkc_result vkc_seq_create(vkc_context *ctx, const vkc_seq_desc *desc, vkc_seq **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!out, ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_seq_create: out is NULL");
    vkc_seq *s = vkc__calloc(1, sizeof(*s));
    VKC_RETURN_IF(!s, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "sequence");
    snprintf(s->name, sizeof(s->name), "%s", desc && desc->name ? desc->name : "vkc_seq");
    s->recording = true;
    s->ring = ctx->seq_ring ? ctx->seq_ring : VKC_SEQ_RING; /* resolved at init */
    vkc_toggle prof = desc ? desc->profile : VKC_DEFAULT;
    s->profile =
        ctx->info.timestamps && (prof == VKC_ON || (prof == VKC_DEFAULT && ctx->profiling));
    s->marker_choice = desc ? desc->completion_marker : VKC_DEFAULT;
    atomic_init(&s->busy, false);
    s->hold_tag = UINT64_MAX; /* no set yet */
    vkc__obj_init(&s->obj, VKC_MAGIC_SEQ, ctx, s->name, vkc__seq_free, &ctx->seqs);
    *out = s;
    return VKC_SUCCESS;
}

void vkc_seq_destroy(vkc_seq *s)
{
    vkc__obj_kill(s ? &s->obj : NULL, VKC_MAGIC_SEQ);
}

vkc_result vkc_seq_begin(vkc_seq *s)
{
    VKC_CHECK_SEQ(s);
    /* The recorded copies can never be submitted again: back to the pool
     * (reused once their last submit completed). The set is reused when
     * none of them holds it any more, else a new one is started (the old
     * goes with its last unit). */
    vkc__seq_release_units(s);
    if (s->set && vkc__rset_exclusive(s->set)) {
        vkc__rset_clear(s->set);
    } else if (s->set) {
        vkc__obj_release(vkc__rset_obj(s->set));
        s->set = NULL;
    }
    vkc__seq_sync_tag(s);
    s->cmd_count = s->use_count = s->push_len = s->buf_count = 0;
    s->img_count = s->aux_count = 0;
    s->level_floor = s->max_level = 0;
    s->dispatches = s->explicit_barriers = 0;
    s->writes_mapped = s->levels_pending = false;
    s->map_epoch = atomic_load_explicit(&s->obj.ctx->map_epoch, memory_order_acquire);
    s->recording = true;
    s->lost = false;
    s->error = VKC_SUCCESS;
    s->gen++;
    return VKC_SUCCESS;
}

void vkc__seq_keep_error(vkc_seq *s)
{
    char msg[sizeof(s->first_error)];
    vkc__last_error_copy(s->obj.ctx, msg, sizeof(msg));
    snprintf(s->first_error, sizeof(s->first_error), "%s (command %u): %s",
             s->call ? s->call : "recording", s->cmd_count, msg);
}

/* call names the recording call, for a latched error's message. */
vkc_result vkc__check_recording(vkc_seq *s, const char *call)
{
    s->call = call;
    if (!s->recording) /* not latched: the recorded sequence stays usable */
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_STATE,
                        "sequence \"%s\" has ended; call vkc_seq_begin to record again", s->name);
    return VKC_SUCCESS;
}

/* Retain o in the sequence's set (once per set): the one place recorded
 * commands take their references. */
vkc_result vkc__seq_hold(vkc_seq *s, vkc__obj *o)
{
    if (VKC_UNLIKELY(!s->set)) {
        VKC_FORWARD(vkc__latch(s, vkc__rset_new(s->obj.ctx, &s->set)));
        vkc__seq_sync_tag(s);
    }
    return vkc__latch(s, vkc__rset_add(s->set, o));
}

/* Append command c (a copy, fill, image command or ownership transfer:
 * no kernel) after retaining the buffers and images it names. Dispatches
 * retain theirs while their arguments are checked (vkc__prepare_dispatch),
 * where each object is at hand, and append directly. */
static vkc_result vkc__push(vkc_seq *s, vkc__command *c)
{
    for (uint32_t i = 0; i < c->use_count; ++i) {
        const vkc__use *u = &s->uses[c->use_first + i];
        /* Samplers are the context's (never destroyed before it): not held. */
        if (u->buffer)
            VKC_FORWARD(vkc__seq_keep(s, &u->buffer->obj));
        if (u->image)
            VKC_FORWARD(vkc__seq_keep(s, &u->image->obj));
    }
    return vkc__append(s, c);
}

vkc_result vkc__seq_check_buffer(vkc_seq *s, const vkc_buffer *b, const char *what)
{
    if (VKC_UNLIKELY(!vkc__obj_is(b, VKC_MAGIC_BUFFER)))
        return vkc__latch(s, vkc__obj_check(s->obj.ctx, b, VKC_MAGIC_BUFFER, what));
    if (b->obj.ctx != s->obj.ctx)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_HANDLE, "%s: buffer belongs to another context",
                            what);
    return VKC_SUCCESS;
}

vkc_result vkc__seq_check_range(vkc_seq *s, const vkc_buffer *b, uint64_t offset, uint64_t size,
                                const char *what)
{
    if (offset > b->size || size > b->size - offset)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "%s: range [%llu, +%llu) is outside buffer \"%s\" of %llu bytes", what,
                            (unsigned long long)offset, (unsigned long long)size, b->name,
                            (unsigned long long)b->size);
    return VKC_SUCCESS;
}

/* ---- recording commands ---------------------------------------------------------------- */

static uint32_t vkc__grid_groups(const vkc_context *ctx, uint64_t count, uint32_t wg)
{
    /* Workgroup sizes are nearly always powers of two: a shift then. */
    uint64_t need =
        (wg & (wg - 1)) ? (count + wg - 1) / wg : (count + wg - 1) >> (unsigned)__builtin_ctz(wg);
    uint64_t cap = ctx->features.max_grid_groups;
    return (uint32_t)(need < cap ? need : cap);
}

/* A failure about argument i of kernel k (the message is only built here, never
 * on the success path). */
static vkc_result vkc__arg_fail(vkc_seq *s, vkc_result code, const vkc_kernel *k, uint32_t i,
                                const char *fmt, ...) VKC_PRINTF(5, 6);
static vkc_result vkc__arg_fail(vkc_seq *s, vkc_result code, const vkc_kernel *k, uint32_t i,
                                const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return VKC_SEQ_FAIL(s, code, "kernel \"%s\" arg %u: %s", k->name, i, msg);
}

/* Check argument i of kernel k against the shader and the device, and fill
 * its use: the one place recording (vkc_seq_dispatch) and replacing
 * (vkc_seq_set_arg) an argument validate it. count: the elements the
 * dispatch covers (0 for explicit groups). */
static const char *vkc__kind_name(vkc_binding_kind kind)
{
    switch (kind) {
    case VKC_BINDING_STORAGE_IMAGE:
        return "a storage image";
    case VKC_BINDING_SAMPLED_IMAGE:
        return "a sampled image";
    case VKC_BINDING_COMBINED_IMAGE_SAMPLER:
        return "a combined image sampler";
    case VKC_BINDING_SAMPLER:
        return "a sampler";
    default:
        return "a buffer";
    }
}

static const char *vkc__type_name(vkc_image_type t)
{
    return t == VKC_IMAGE_3D ? "3D" : t == VKC_IMAGE_2D_ARRAY ? "2D array" : "2D";
}

static vkc_result vkc__check_sampler(vkc_seq *s, const vkc_kernel *k, uint32_t i,
                                     const vkc_sampler *sm)
{
    if (!sm || sm->magic != VKC_MAGIC_SAMPLER || sm->ctx != s->obj.ctx)
        return vkc__arg_fail(s, sm ? VKC_ERROR_INVALID_HANDLE : VKC_ERROR_MISMATCH, k, i, "%s",
                             sm ? "invalid vkc_sampler handle"
                                : "the kernel expects a sampler: set vkc_arg.sampler");
    return VKC_SUCCESS;
}

/* An image (or sampler) argument: the kind, type, format, usage and range
 * checked against the binding; the use names the view and the layout. */
static vkc_result vkc__bind_image(vkc_seq *s, const vkc_kernel *k, uint32_t i, const vkc_arg *a,
                                  vkc__use *u)
{
    const vkc_binding_info *bi = &k->info.bindings[i];
    const vkc_binding_kind kind = bi->kind;
    if (a->buffer)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "the kernel expects %s but the arg names a buffer",
                             vkc__kind_name(kind));
    *u = (vkc__use){0};
    if (kind == VKC_BINDING_SAMPLER) {
        if (a->image)
            return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                                 "the kernel expects a sampler but the arg names an image");
        VKC_FORWARD(vkc__check_sampler(s, k, i, a->sampler));
        u->sampler = a->sampler;
        return VKC_SUCCESS;
    }
    vkc_image *img = a->image;
    if (img && !vkc__obj_is(img, VKC_MAGIC_IMAGE) &&
        ((const vkc__obj *)img)->kind == VKC_MAGIC_IMAGE)
        return vkc__arg_fail(s, VKC_ERROR_INVALID_HANDLE, k, i,
                             "image \"%s\" was destroyed "
                             "(work recorded before keeps it alive; new uses are refused)",
                             img->name);
    if (!img || img->obj.magic != VKC_MAGIC_IMAGE || img->obj.ctx != s->obj.ctx || img->dead)
        return vkc__arg_fail(s, img ? VKC_ERROR_INVALID_HANDLE : VKC_ERROR_MISMATCH, k, i, "%s",
                             !img ? "the kernel expects an image: set vkc_arg.image"
                             : img->obj.magic != VKC_MAGIC_IMAGE ? "invalid vkc_image handle"
                             : img->obj.ctx != s->obj.ctx
                                 ? "the image belongs to another context"
                                 : "the image wrapped a VkImage of a lost device");
    const bool storage = kind == VKC_BINDING_STORAGE_IMAGE;
    if (kind == VKC_BINDING_COMBINED_IMAGE_SAMPLER)
        VKC_FORWARD(vkc__check_sampler(s, k, i, a->sampler));
    else if (a->sampler)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "the kernel expects %s (no sampler) but the arg names a sampler",
                             vkc__kind_name(kind));
    const VkImageUsageFlags need =
        storage ? VK_IMAGE_USAGE_STORAGE_BIT : VK_IMAGE_USAGE_SAMPLED_BIT;
    if (!(img->vk_usage & need))
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "image \"%s\" was not created with %s usage", img->name,
                             storage ? "storage" : "sampled");
    if (storage && bi->format != VKC_FORMAT_DEFAULT && bi->format != img->format)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "the kernel declares a %s storage image but image \"%s\" is %s",
                             vkc_format_name(bi->format), img->name, vkc_format_name(img->format));
    /* The view's type follows the kernel's declaration. */
    bool type_ok =
        bi->image_type == VKC_IMAGE_3D ? img->type == VKC_IMAGE_3D : img->type != VKC_IMAGE_3D;
    if (!type_ok)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "the kernel declares a %s image but image \"%s\" is %s",
                             vkc__type_name(bi->image_type), img->name, vkc__type_name(img->type));
    const vkc_image_range *rg = &a->range;
    if (rg->base_mip >= img->mips || rg->mip_count > img->mips - rg->base_mip ||
        rg->base_layer >= img->layers || rg->layer_count > img->layers - rg->base_layer)
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "mips [%u, +%u) / layers [%u, +%u) are out of range: image \"%s\" "
                             "has %u mip level(s) and %u layer(s)",
                             rg->base_mip, rg->mip_count, rg->base_layer, rg->layer_count,
                             img->name, img->mips, img->layers);
    u->mip = rg->base_mip;
    u->mips = rg->mip_count ? rg->mip_count : storage ? 1 : img->mips - rg->base_mip;
    u->layer = rg->base_layer;
    u->layers = rg->layer_count ? rg->layer_count : img->layers - rg->base_layer;
    if (storage && u->mips != 1)
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "a storage image binding sees one mip level (mip_count %u)", u->mips);
    if (bi->image_type == VKC_IMAGE_2D && u->layers != 1)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "the kernel declares a 2D image but the arg covers %u layers of "
                             "\"%s\": set range.layer_count = 1 (or declare an array)",
                             u->layers, img->name);
    if (kind == VKC_BINDING_COMBINED_IMAGE_SAMPLER &&
        (a->sampler->desc.filter == VKC_FILTER_LINEAR ||
         a->sampler->desc.mipmap_mode == VKC_FILTER_LINEAR) &&
        !(img->features & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT))
        return vkc__arg_fail(s, VKC_ERROR_UNSUPPORTED, k, i,
                             "the device cannot filter %s images linearly (image \"%s\"): use a "
                             "NEAREST sampler",
                             vkc_format_name(img->format), img->name);
    if (kind == VKC_BINDING_COMBINED_IMAGE_SAMPLER && a->sampler->desc.unnormalized &&
        (u->mips != 1 || u->layers != 1 || bi->image_type != VKC_IMAGE_2D))
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "a sampler with unnormalized coordinates needs one mip level of "
                             "one layer of a 2D image");
    uint32_t acc = storage ? (a->access ? (uint32_t)a->access : (uint32_t)bi->access) : VKC_ACC_R;
    if (!storage && (a->access & VKC_ACCESS_WRITE))
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "a sampled image cannot be written");
    VkImageViewType vt = bi->image_type == VKC_IMAGE_3D         ? VK_IMAGE_VIEW_TYPE_3D
                         : bi->image_type == VKC_IMAGE_2D_ARRAY ? VK_IMAGE_VIEW_TYPE_2D_ARRAY
                                                                : VK_IMAGE_VIEW_TYPE_2D;
    VkImageView view;
    vkc_result r = vkc__image_view(img, vt, u->mip, u->mips, u->layer, u->layers, &view);
    if (r < 0)
        return vkc__latch(s, r);
    VKC_FORWARD(vkc__seq_keep(s, &img->obj));
    u->image = img;
    u->view = view;
    u->sampler = kind == VKC_BINDING_COMBINED_IMAGE_SAMPLER ? a->sampler : NULL;
    u->layout = storage ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    u->access = acc ? acc : VKC_ACC_R | VKC_ACC_W;
    return VKC_SUCCESS;
}

static vkc_result vkc__bind_arg(vkc_seq *s, const vkc_kernel *k, uint32_t i, const vkc_arg *a,
                                uint64_t count, vkc__use *u)
{
    const vkc_context *ctx = s->obj.ctx;
    const vkc_binding_info *bi = &k->info.bindings[i];
    if (bi->kind != VKC_BINDING_BUFFER)
        return vkc__bind_image(s, k, i, a, u);
    if (a->image || (!a->buffer && a->sampler))
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "the kernel expects a buffer but the arg names %s",
                             a->image ? "an image" : "a sampler");
    const vkc_buffer *b = a->buffer;
    if (!b || b->obj.magic != VKC_MAGIC_BUFFER || b->obj.ctx != ctx) {
        if (b && b->obj.magic == VKC_MAGIC_DEAD && b->obj.kind == VKC_MAGIC_BUFFER)
            return vkc__arg_fail(s, VKC_ERROR_INVALID_HANDLE, k, i,
                                 "vkc_buffer \"%s\" was destroyed", b->name);
        return vkc__arg_fail(s, VKC_ERROR_INVALID_HANDLE, k, i, "%s",
                             b && b->obj.magic == VKC_MAGIC_BUFFER
                                 ? "the buffer belongs to another context"
                                 : "invalid vkc_buffer handle");
    }
    if (a->offset > b->size)
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "offset %llu beyond the buffer's %llu bytes",
                             (unsigned long long)a->offset, (unsigned long long)b->size);
    uint64_t size = a->size ? a->size : b->size - a->offset;
    if (size > b->size - a->offset)
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "range [%llu, +%llu) is outside buffer \"%s\" of %llu bytes",
                             (unsigned long long)a->offset, (unsigned long long)size, b->name,
                             (unsigned long long)b->size);
    /* A power of two (the limit's definition): a mask, not a division. */
    const uint64_t align = ctx->info.min_storage_buffer_offset_alignment;
    if (align > 1 && ((a->offset + b->offset) & (align - 1)))
        return vkc__arg_fail(s, VKC_ERROR_INVALID_ARGUMENT, k, i,
                             "offset %llu is not a multiple of "
                             "minStorageBufferOffsetAlignment %llu",
                             (unsigned long long)a->offset, (unsigned long long)align);
    if (size > ctx->info.max_storage_buffer_range)
        return vkc__arg_fail(s, VKC_ERROR_LIMIT, k, i,
                             "binding range %llu exceeds maxStorageBufferRange %llu; bind "
                             "smaller ranges (offset/size) and dispatch per range",
                             (unsigned long long)size,
                             (unsigned long long)ctx->info.max_storage_buffer_range);
    if (size < bi->min_size)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "range of %llu bytes does not fit the shader's block (%llu bytes)",
                             (unsigned long long)size, (unsigned long long)bi->min_size);
    /* floor(x / stride) < count <=> x < count * stride, which fits 64 bits
     * (count < 2^32, stride < 2^32): no division on the recording path. */
    if (count && bi->array_stride && size - bi->min_size < count * bi->array_stride)
        return vkc__arg_fail(s, VKC_ERROR_MISMATCH, k, i,
                             "buffer holds %llu elements of %llu bytes, which does not fit the "
                             "%llu elements the dispatch covers",
                             (unsigned long long)((size - bi->min_size) / bi->array_stride),
                             (unsigned long long)bi->array_stride, (unsigned long long)count);
    VKC_FORWARD(vkc__seq_keep(s, &a->buffer->obj));
    uint32_t acc = a->access ? (uint32_t)a->access : (uint32_t)bi->access;
    *u = (vkc__use){.buffer = a->buffer,
                    .vk = b->buffer,
                    .offset = b->offset + a->offset,
                    .size = size,
                    .access = acc ? acc : VKC_ACC_R | VKC_ACC_W};
    return VKC_SUCCESS;
}

/* Validate a dispatch against its kernel and append its uses; on success the
 * uses are at s->uses[*first .. *first + arg_count). */
static vkc_result vkc__prepare_dispatch(vkc_seq *s, const vkc_dispatch_desc *d, vkc__command *c)
{
    vkc_context *ctx = s->obj.ctx;
    if (!d)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT, "dispatch desc is NULL");
    const vkc_kernel *k = d->kernel;
    if (VKC_UNLIKELY(!vkc__obj_is(k, VKC_MAGIC_KERNEL)))
        return vkc__latch(s, vkc__obj_check(ctx, k, VKC_MAGIC_KERNEL, "dispatch"));
    if (k->obj.ctx != ctx)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_HANDLE, "dispatch: kernel of another context");
    VKC_FORWARD(vkc__seq_keep(s, (vkc__obj *)&k->obj));
    const vkc_kernel_info *ki = &k->info;
    uint32_t grid_binding;
    if (d->arg_count != ki->binding_count)
        return VKC_SEQ_FAIL(s, VKC_ERROR_MISMATCH,
                            "kernel \"%s\" has %u bindings but the dispatch passes %u args%s",
                            k->name, ki->binding_count, d->arg_count,
                            vkc__kernel_grid_binding(k, &grid_binding)
                                ? " (it uses vkc_grid.glsl: record it with "
                                  "vkc_seq_dispatch_cooperative, which binds the grid state; "
                                  "immediate mode has no cooperative form)"
                                : "");
    if (d->arg_count && !d->args)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT, "dispatch: args is NULL");
    if (d->push_size != ki->push_constant_size)
        return VKC_SEQ_FAIL(s, VKC_ERROR_MISMATCH,
                            "kernel \"%s\" takes %u bytes of push constants but the dispatch "
                            "passes %u",
                            k->name, ki->push_constant_size, d->push_size);
    if (d->push_size && !d->push)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT, "dispatch: push is NULL");

    bool explicit_groups = d->groups[0] || d->groups[1] || d->groups[2];
    if (explicit_groups) {
        for (int i = 0; i < 3; ++i) {
            if (d->groups[i] == 0)
                return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                                    "dispatch: groups[%d] is 0 while others are not", i);
            if (d->groups[i] > ctx->info.max_workgroup_count[i])
                return VKC_SEQ_FAIL(s, VKC_ERROR_LIMIT,
                                    "dispatch: groups[%d] = %u exceeds maxComputeWorkGroupCount "
                                    "%u",
                                    i, d->groups[i], ctx->info.max_workgroup_count[i]);
            c->groups[i] = d->groups[i];
        }
    } else {
        if (d->count > UINT32_MAX)
            return VKC_SEQ_FAIL(s, VKC_ERROR_LIMIT,
                                "dispatch: count %llu exceeds 2^32-1 (shaders index with 32-bit "
                                "invocation ids); split the work",
                                (unsigned long long)d->count);
        c->groups[0] = vkc__grid_groups(ctx, d->count, ki->workgroup_size[0]);
        c->groups[1] = c->groups[2] = 1;
    }

    if (!vkc__grow((void **)&s->uses, &s->use_cap, s->use_count + d->arg_count, sizeof(vkc__use)))
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "argument list");
    for (uint32_t i = 0; i < d->arg_count; ++i)
        VKC_FORWARD(vkc__bind_arg(s, k, i, &d->args[i], explicit_groups ? 0 : d->count,
                                  &s->uses[s->use_count + i]));
    c->kind = VKC_CMD_DISPATCH;
    c->images = k->has_images;
    c->count = explicit_groups ? 0 : d->count;
    c->kernel = d->kernel;
    c->use_first = s->use_count;
    c->use_count = d->arg_count;
    c->label = d->label ? d->label : k->name;
    if (d->push_size) {
        if (!vkc__grow((void **)&s->push, &s->push_cap, s->push_len + d->push_size, 1))
            return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "push constants");
        memcpy(s->push + s->push_len, d->push, d->push_size);
        c->push_offset = s->push_len;
        c->push_size = d->push_size;
    }
    return VKC_SUCCESS;
}

vkc_result vkc_seq_dispatch(vkc_seq *s, const vkc_dispatch_desc *d)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_dispatch"));
    vkc__command c = {0};
    uint32_t push_len = s->push_len;
    vkc_result r = vkc__prepare_dispatch(s, d, &c);
    if (r < 0) {
        s->push_len = push_len;
        return r;
    }
    if (!d->groups[0] && !d->groups[1] && !d->groups[2] && d->count == 0)
        return VKC_SUCCESS; /* nothing to do: an empty input is not an error */
    s->use_count += c.use_count;
    s->push_len += c.push_size;
    VKC_FORWARD(vkc__append(s, &c)); /* what it names is held: vkc__prepare_dispatch */
    s->dispatches++;                 /* the context's count takes them at vkc_seq_end */
    return VKC_SUCCESS;
}

vkc_result vkc_seq_copy(vkc_seq *s, vkc_buffer *dst, uint64_t dst_offset, vkc_buffer *src,
                        uint64_t src_offset, uint64_t size)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_copy"));
    VKC_FORWARD(vkc__seq_check_buffer(s, dst, "copy dst"));
    VKC_FORWARD(vkc__seq_check_buffer(s, src, "copy src"));
    VKC_FORWARD(vkc__seq_check_range(s, dst, dst_offset, size, "copy dst"));
    VKC_FORWARD(vkc__seq_check_range(s, src, src_offset, size, "copy src"));
    if (size == 0)
        return VKC_SUCCESS;
    if (dst->buffer == src->buffer &&
        vkc__overlap(dst->offset + dst_offset, size, src->offset + src_offset, size))
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT, "copy: source and destination overlap");
    if (!vkc__grow((void **)&s->uses, &s->use_cap, s->use_count + 2, sizeof(vkc__use)))
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "argument list");
    vkc__use *u = &s->uses[s->use_count];
    u[0] = (vkc__use){.buffer = src,
                      .vk = src->buffer,
                      .offset = src->offset + src_offset,
                      .size = size,
                      .access = VKC_ACC_R};
    u[1] = (vkc__use){.buffer = dst,
                      .vk = dst->buffer,
                      .offset = dst->offset + dst_offset,
                      .size = size,
                      .access = VKC_ACC_W};
    vkc__command c = {
        .kind = VKC_CMD_COPY, .use_first = s->use_count, .use_count = 2, .label = "vkc copy"};
    s->use_count += 2;
    return vkc__push(s, &c);
}

vkc_result vkc_seq_fill(vkc_seq *s, vkc_buffer *buf, uint64_t offset, uint64_t size, uint32_t value)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_fill"));
    VKC_FORWARD(vkc__seq_check_buffer(s, buf, "fill"));
    VKC_FORWARD(vkc__seq_check_range(s, buf, offset, size, "fill"));
    if ((offset | size) & 3)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "fill: offset and size must be multiples of 4");
    if (size == 0)
        return VKC_SUCCESS;
    if (!vkc__grow((void **)&s->uses, &s->use_cap, s->use_count + 1, sizeof(vkc__use)))
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "argument list");
    s->uses[s->use_count] = (vkc__use){.buffer = buf,
                                       .vk = buf->buffer,
                                       .offset = buf->offset + offset,
                                       .size = size,
                                       .access = VKC_ACC_W};
    vkc__command c = {.kind = VKC_CMD_FILL,
                      .use_first = s->use_count,
                      .use_count = 1,
                      .value = value,
                      .label = "vkc fill"};
    s->use_count += 1;
    return vkc__push(s, &c);
}

vkc_result vkc__seq_check_family(vkc_seq *s, uint32_t family, const char *what)
{
    if (family >= s->obj.ctx->info.queue_family_count)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "%s: queue family %u does not exist (the device has %u)", what, family,
                            s->obj.ctx->info.queue_family_count);
    return VKC_SUCCESS;
}

vkc_result vkc__append_uses(vkc_seq *s, vkc__command *c, const vkc__use *u, uint32_t n)
{
    if (!vkc__grow((void **)&s->uses, &s->use_cap, s->use_count + n, sizeof(vkc__use)))
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "argument list");
    memcpy(&s->uses[s->use_count], u, n * sizeof(*u));
    for (uint32_t i = 0; i < n; ++i)
        c->images |= u[i].image != NULL;
    c->use_first = s->use_count;
    c->use_count = n;
    s->use_count += n;
    vkc_result r = vkc__push(s, c);
    if (r < 0)
        s->use_count -= n;
    return r;
}

static vkc_result vkc__seq_ownership(vkc_seq *s, vkc_buffer *buf, uint32_t family, bool acquire)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, acquire ? "vkc_seq_acquire" : "vkc_seq_release"));
    const char *what = acquire ? "acquire" : "release";
    VKC_FORWARD(vkc__seq_check_buffer(s, buf, what));
    VKC_FORWARD(vkc__seq_check_family(s, family, what));
    if (family == s->obj.ctx->info.queue_family)
        return VKC_SUCCESS; /* same family: nothing to transfer */
    /* A write of the whole range: ordered after every earlier use (release)
     * and before every later one (acquire). */
    vkc__use u = {.buffer = buf,
                  .vk = buf->buffer,
                  .offset = buf->offset,
                  .size = buf->size,
                  .access = VKC_ACC_W};
    vkc__command c = {.kind = acquire ? VKC_CMD_ACQUIRE : VKC_CMD_RELEASE,
                      .value = family,
                      .label = acquire ? "vkc acquire" : "vkc release"};
    return vkc__append_uses(s, &c, &u, 1);
}

vkc_result vkc_seq_acquire(vkc_seq *s, vkc_buffer *buf, uint32_t src_family)
{
    return vkc__seq_ownership(s, buf, src_family, true);
}

vkc_result vkc_seq_release(vkc_seq *s, vkc_buffer *buf, uint32_t dst_family)
{
    return vkc__seq_ownership(s, buf, dst_family, false);
}

vkc_result vkc_seq_barrier(vkc_seq *s)
{
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_barrier"));
    if (s->cmd_count) {
        s->level_floor = s->max_level + 1;
        s->explicit_barriers++;
        s->gen++;
    }
    return VKC_SUCCESS;
}

/* The recorded copies a submit takes in turn. More than one spares a tiny
 * round trip the driver's stall on re-submitting the command buffer it has
 * not retired yet; a long sequence has nothing to gain from that, and each
 * copy costs a recording and, on the GPU, command memory: on the H200 a
 * chain of 10,000 dependent dispatches in eight copies ran 8% slower per
 * dispatch than one re-submitted command buffer (tools/bench_dispatch.c,
 * chain). An explicit VKC_SEQ_RING is kept as given (experiments). */
uint32_t vkc__seq_ring_of(const vkc_seq *s)
{
    if (s->cmd_count > VKC_SEQ_RING_LONG && !s->obj.ctx->seq_ring_env)
        return 1;
    return s->ring;
}

/* A copy of a long sequence (one copy: vkc__seq_ring_of) is begun without
 * SIMULTANEOUS_USE, as raw Vulkan's command buffers are: with the flag a
 * chain of 10,000 dependent dispatches took 3-4% longer a round trip on
 * the H200, 0.3-1.6% on an H100 (BENCHMARKS.md, twentieth session). Such a
 * copy is never submitted again while an earlier submit of it is pending:
 * vkc_seq_submit takes the spare then. The spare itself, and short
 * sequences' copies (submitted again while pending in the tiny round
 * trips that matter), keep the flag. */
static bool vkc__seq_plain(const vkc_seq *s)
{
    const vkc_context *ctx = s->obj.ctx;
    if (ctx->cb_plain == VKC__PLAIN_NONE)
        return false;
    return ctx->cb_plain == VKC__PLAIN_ALL ||
           (s->cmd_count > VKC_SEQ_RING_LONG && vkc__seq_ring_of(s) < VKC_SEQ_RING_MAX);
}

/* Whether an earlier submit of copy u may still be pending, as the
 * timeline says (the validation layer learns a command buffer's end from
 * the host's semaphore queries, not from the completion count). */
static bool vkc__unit_pending(vkc_context *ctx, const vkc__cmd *u)
{
    if (!u->last_value ||
        u->last_value <= atomic_load_explicit(&ctx->completed_value, memory_order_acquire))
        return false;
    return vkc__completed_value(ctx) < u->last_value;
}

/* Make unit slot `i` match the current commands. */
vkc_result vkc__seq_ensure_unit(vkc_seq *s, uint32_t i)
{
    if (s->units[i] && s->unit_gen[i] == s->gen)
        return VKC_SUCCESS;
    /* The old copy goes back first (reused at once if its last submit is
     * done, else once it is; an armed one runs empty first), then the
     * commands are recorded again. */
    if (s->units[i])
        vkc__arm_cancel(s->obj.ctx, &s->arm_misses);
    vkc__cmd_release(s->obj.ctx, s->units[i]);
    s->units[i] = NULL;
    vkc__cmd *unit;
    /* The spare (the slot after the ring, vkc_seq_submit) has the flag. */
    VKC_FORWARD(vkc__record(s, i < vkc__seq_ring_of(s) && vkc__seq_plain(s), &unit));
    s->units[i] = unit;
    s->unit_gen[i] = s->gen;
    return VKC_SUCCESS;
}

/* A latched error restated, so the message of end or submit says what
 * failed rather than leaving an unrelated later one. */
static vkc_result vkc__seq_latched(vkc_seq *s, const char *call)
{
    return VKC_FAIL(s->obj.ctx, s->error, "%s: sequence \"%s\": recording failed earlier, at %s",
                    call, s->name, s->first_error);
}

vkc_result vkc_seq_end(vkc_seq *s)
{
    VKC_CHECK_SEQ(s);
    if (s->error < 0)
        return vkc__seq_latched(s, "vkc_seq_end");
    if (!s->recording)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_STATE, "sequence \"%s\" has already ended",
                        s->name);
    s->recording = false;
    /* An immediate batch: the levels of its buffer-only commands, all at
     * once (commands with images alone were levelled as they came). */
    if (s->levels_pending)
        VKC_FORWARD(vkc__relevel(s));
    /* One atomic add per recording, not per dispatch: on the enqueue path
     * it was one of three locked instructions. */
    VKC_STAT_ADD(s->obj.ctx, dispatches, s->dispatches);
    return vkc__seq_ensure_unit(s, s->next_unit);
}

vkc_result vkc_seq_set_push(vkc_seq *s, uint32_t index, const void *data, uint32_t size)
{
    VKC_CHECK_SEQ(s);
    if (index >= s->cmd_count || s->cmds[index].kind != VKC_CMD_DISPATCH)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                        "set_push: command %u is not a dispatch of sequence \"%s\" (%u commands)",
                        index, s->name, s->cmd_count);
    vkc__command *c = &s->cmds[index];
    if (size != c->push_size || (size && !data))
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_MISMATCH,
                        "set_push: kernel \"%s\" takes %u bytes of push constants, got %u",
                        c->kernel->name, c->push_size, size);
    if (memcmp(s->push + c->push_offset, data, size)) {
        memcpy(s->push + c->push_offset, data, size);
        s->gen++;
    }
    return VKC_SUCCESS;
}

vkc_result vkc_seq_set_arg(vkc_seq *s, uint32_t index, uint32_t arg, const vkc_arg *value)
{
    VKC_CHECK_SEQ(s);
    if (index >= s->cmd_count || s->cmds[index].kind != VKC_CMD_DISPATCH)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                        "set_arg: command %u is not a dispatch of sequence \"%s\"", index, s->name);
    vkc__command *c = &s->cmds[index];
    if (arg >= c->use_count || !value)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "set_arg: arg %u out of range (%u)",
                        arg, c->use_count);
    vkc__use *u = &s->uses[c->use_first + arg];
    vkc__use next;
    vkc_result latched = s->error;
    /* The replacement is held like a recorded argument (vkc__bind_arg). */
    vkc_result r = vkc__bind_arg(s, c->kernel, arg, value, c->count, &next);
    if (r < 0) {
        s->error = latched; /* a rejected replacement leaves the recording as it was */
        return r;
    }
    if (!value->access) /* keep the access the dispatch was recorded with */
        next.access = u->access;
    *u = next;
    /* The new buffer may create or remove hazards: level everything again. */
    VKC_FORWARD(vkc__relevel(s));
    s->gen++;
    return VKC_SUCCESS;
}

vkc_result vkc_seq_info_get(const vkc_seq *s, vkc_seq_info *out)
{
    VKC_FORWARD(vkc__obj_check(NULL, s, VKC_MAGIC_SEQ, "vkc_seq_info_get"));
    if (!out)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "out is NULL");
    out->commands = s->cmd_count;
    out->dispatches = s->dispatches;
    out->levels = s->cmd_count ? s->max_level + 1 : 0;
    /* Barriers between levels (the leading one orders after earlier
     * submissions and is not counted as a hazard barrier). */
    out->barriers = out->levels ? out->levels - 1 : 0;
    out->submits = s->submits;
    return VKC_SUCCESS;
}

/* ---- submit ------------------------------------------------------------------------------------
 */

vkc_result vkc_seq_submit(vkc_seq *s, vkc_ticket *out)
{
    if (out)
        memset(out, 0, sizeof(*out));
    VKC_CHECK_SEQ(s);
    if (s->lost)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_STATE,
                        "sequence \"%s\" was recorded before the device was lost and recovered: "
                        "record it again (vkc_seq_begin ... vkc_seq_end)",
                        s->name);
    if (s->error < 0)
        return vkc__seq_latched(s, "vkc_seq_submit");
    if (s->recording)
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_STATE,
                        "sequence \"%s\" is still being recorded: call vkc_seq_end first", s->name);
    /* One thread at a time: the ring index and the recorded copies are the
     * sequence's own. One atomic exchange refuses a second thread. */
    if (VKC_UNLIKELY(atomic_exchange_explicit(&s->busy, true, memory_order_acquire)))
        return VKC_FAIL(s->obj.ctx, VKC_ERROR_INVALID_STATE,
                        "sequence \"%s\" is being submitted by another thread: a sequence is "
                        "submitted by one thread at a time",
                        s->name);
    vkc_context *ctx = s->obj.ctx;
    if (VKC_UNLIKELY(s->map_epoch != atomic_load_explicit(&ctx->map_epoch, memory_order_relaxed)))
        vkc__seq_host_reads(s);
    const uint32_t ring = vkc__seq_ring_of(s);
    uint32_t i = s->next_unit < ring ? s->next_unit : 0;
    uint64_t value = 0;
    /* A repeat: the queue's last submission was one of this sequence's. */
    const vkc__cmd *prev = atomic_load_explicit(&ctx->last_submit, memory_order_relaxed);
    bool repeat = false;
    for (uint32_t k = 0; k < ring && s->armable; ++k)
        repeat |= s->units[k] && s->units[k] == prev;
    vkc_result r = vkc__seq_ensure_unit(s, i);
    /* Armed (arm.c): the host opens its gate instead of submitting. */
    bool opened = false;
    if (r >= 0)
        r = vkc__arm_open(ctx, s->units[i], &value, &opened);
    if (r >= 0 && !opened) {
        /* A copy cancelled but not run yet is not submitted again: the slot
         * gets a fresh recording (rare: other work came between). */
        if (!vkc__arm_restore(ctx, s->units[i])) {
            s->unit_gen[i] = s->gen - 1;
            r = vkc__seq_ensure_unit(s, i);
        }
        /* A copy begun without SIMULTANEOUS_USE (vkc__seq_plain) goes
         * again only once its earlier submit is seen complete on the
         * timeline: the completion count says the work ran, not that the
         * command buffer left the pending state (its submits signal, so
         * that a round trip's next submit sees that at once). While the
         * GPU still runs it the spare goes instead, recorded on the first
         * such submit with the flag (two submits queued at once: the GPU
         * never idles between them). Where the count says it ran and only
         * the timeline's signal lags (microseconds), and without a spare
         * slot, a wait. */
        uint32_t slot = i;
        vkc__cmd *u = r >= 0 ? s->units[i] : NULL;
        if (u && VKC_UNLIKELY(!u->simultaneous) && vkc__unit_pending(ctx, u)) {
            if (ctx->cb_plain == VKC__PLAIN_LONG && ring < VKC_SEQ_RING_MAX &&
                !(vkc__marker_on(ctx) && vkc__marker_done(ctx, u->last_value))) {
                slot = ring;
                r = vkc__seq_ensure_unit(s, slot);
                if (r >= 0)
                    VKC_STAT_ADD(ctx, spare_submits, 1);
            } else {
                r = vkc__wait_bounded(
                    ctx, u->last_value,
                    "the sequence's earlier submit of this copy (not simultaneous-use)");
            }
        }
        if (r >= 0)
            r = vkc__submit(ctx, s->units[slot], &value);
    }
    if (r >= 0) {
        s->next_unit = (i + 1) % ring;
        s->submits++;
        /* Best effort: the submit itself is done. Only a lost device, found
         * by the arming submit, is this submit's error too. */
        if (s->armable && repeat && vkc__seq_arm_next(s, value, opened) == VKC_ERROR_DEVICE_LOST)
            r = VKC_ERROR_DEVICE_LOST;
    }
    atomic_store_explicit(&s->busy, false, memory_order_release);
    if (r < 0)
        return r;
    if (out) {
        out->value = value;
        out->context_id = s->obj.ctx->id;
    }
    return VKC_SUCCESS;
}

static vkc_result vkc__check_ticket(vkc_context *ctx, vkc_ticket t)
{
    if (t.value == 0)
        return VKC_SUCCESS;
    if (t.context_id != ctx->id)
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE,
                        "ticket belongs to another context (id %llu, this is %llu)",
                        (unsigned long long)t.context_id, (unsigned long long)ctx->id);
    if (t.value > vkc__submitted_value(ctx))
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE, "ticket %llu was never issued",
                        (unsigned long long)t.value);
    return VKC_SUCCESS;
}

/* A resident kernel's ticket goes to resident.c through the context's
 * hook (it is not a timeline value). */
static vkc_result vkc__resident_ticket(vkc_context *ctx, vkc_ticket t, uint64_t timeout_ns,
                                       bool poll)
{
    if (t.context_id != ctx->id || !ctx->resident_wait)
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE,
                        "resident ticket of another context or of no resident kernel");
    return ctx->resident_wait(ctx, t, timeout_ns, poll);
}

vkc_result vkc_wait(vkc_context *ctx, vkc_ticket t, uint64_t timeout_ns)
{
    VKC_CHECK_CONTEXT(ctx);
    if (VKC_UNLIKELY(t.value & VKC__TICKET_RESIDENT))
        return vkc__resident_ticket(ctx, t, timeout_ns, false);
    VKC_FORWARD(vkc__check_ticket(ctx, t));
    if (t.value == 0)
        return VKC_SUCCESS;
    if (VKC_LIKELY(!VKC__PROFILED(atomic_load_explicit(&ctx->profile_waits, memory_order_relaxed))))
        return vkc__wait_results(ctx, t.value, timeout_ns);
    const uint64_t t0 = vkc__clock_ns();
    vkc_result r = vkc__wait_results(ctx, t.value, timeout_ns);
    if (ctx->profile)
        ctx->profile->cpu(ctx, VKC__CPU_WAIT, t0, vkc__clock_ns(), t.value);
    return r;
}

vkc_result vkc_poll(vkc_context *ctx, vkc_ticket t)
{
    VKC_CHECK_CONTEXT(ctx);
    if (VKC_UNLIKELY(t.value & VKC__TICKET_RESIDENT))
        return vkc__resident_ticket(ctx, t, 0, true);
    VKC_FORWARD(vkc__check_ticket(ctx, t));
    if (t.value <= atomic_load_explicit(&ctx->completed_value, memory_order_acquire))
        return VKC_SUCCESS;
    if (vkc__marker_on(ctx) && vkc__marker_done(ctx, t.value))
        return VKC_SUCCESS;
    vkc_result r = vkc__wait_value(ctx, t.value, 0, VKC_WAIT_SPIN);
    return r == VKC_TIMEOUT ? VKC_NOT_READY : r;
}

/* ---- device-loss recovery ----------------------------------------------------------------- */

void vkc__seq_lose(vkc_seq *s)
{
    vkc__seq_release_units(s);
    for (int i = 0; i < VKC_SEQ_RING_MAX; ++i)
        s->unit_gen[i] = 0;
    s->lost = true;
}
