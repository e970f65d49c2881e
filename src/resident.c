/* Resident kernels: a kernel launched once on a queue of its own that takes
 * work items from a ring in memory the host and the device both see (the
 * manual's "Resident kernels" chapter says how and when it is safe).
 *
 * Owns: vkc_resident, the ring (its own VkBuffer and VkDeviceMemory, so the
 * memory type is chosen here: device-local host-visible first), the launch
 * command buffer and fence (resident_launch.c records, launches and
 * self-tests), the fallback's sequences, and the
 * context's hooks resident_order (ordinary submits wait for posted items)
 * and resident_wait (vkc_wait / vkc_poll of a resident ticket).
 * Calls: everything below it (dispatch's public sequences for the fallback,
 * kernels, vkc_buffer_wrap). Word layout (resident.h) shared with
 * shaders/include/vkc_resident.glsl. */
#include "resident.h"

#include <stdio.h>

static vkc__rstate *vkc__rstate_get(vkc_context *ctx);
static vkc_result vkc__resident_wait_hook(vkc_context *ctx, vkc_ticket t, uint64_t timeout_ns,
                                          bool poll);
static vkc_result vkc__resident_order_hook(vkc_context *ctx);

/* ---- creation -------------------------------------------------------------------------- */

/* The best host-visible coherent type in bits: for the ring, device-local
 * (the BAR: the probe on the H200 saw host writes there) and uncached
 * first; for the acks in host memory, not device-local (system RAM, where
 * the host's spin reads its own cache until the GPU's write lands) and
 * cached first. -1: none. */
static int32_t vkc__resident_best_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits,
                                       bool acks)
{
    int32_t best = -1;
    int best_score = -1;
    for (uint32_t i = 0; i < mp->memoryTypeCount; ++i) {
        VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
        if (!(bits >> i & 1) || !(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ||
            !(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
            continue;
        bool dl = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
        bool cached = (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
        int score = (dl != acks ? 4 : 0) + (cached == acks ? 2 : 0);
        if (score > best_score) {
            best_score = score;
            best = (int32_t)i;
        }
    }
    return best;
}

/* The ring's type (above). VKC_RESIDENT_MEMORY=N forces type N (to
 * reproduce a placement that fails the self-test). */
static int32_t vkc__resident_pick_memory(vkc_context *ctx, uint32_t bits)
{
    const VkPhysicalDeviceMemoryProperties *mp = &ctx->mem_props;
    uint32_t t;
    if (vkc__env_uint(ctx, "VKC_RESIDENT_MEMORY", 0, VK_MAX_MEMORY_TYPES - 1, "vkc's choice", &t)) {
        const VkMemoryPropertyFlags need =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        if (t < mp->memoryTypeCount && (bits >> t & 1) &&
            (mp->memoryTypes[t].propertyFlags & need) == need)
            return (int32_t)t;
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
                 "VKC_RESIDENT_MEMORY=%u: not a host-visible coherent type the ring can use; "
                 "using vkc's choice",
                 t);
    }
    return vkc__resident_best_type(mp, bits, false);
}

/* A buffer of its own, mapped and zeroed: the ring, or the acks in host
 * memory (address: the kernel reaches them by device address). */
static vkc_result vkc__resident_alloc(vkc_resident *r, VkDeviceSize size, bool address,
                                      const char *what, VkBuffer *buf, VkDeviceMemory *mem,
                                      uint32_t *type, volatile uint32_t **map)
{
    vkc_context *ctx = r->ctx;
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                (address ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0);
    VKC_RETURN_IF_VK(
        ctx, VKC_VK(vkCreateBuffer, ctx->vk.vkCreateBuffer(ctx->device, &bci, ctx->alloc, buf)),
        "vkCreateBuffer (resident ring or acks)");
    VkMemoryRequirements req;
    ctx->vk.vkGetBufferMemoryRequirements(ctx->device, *buf, &req);
    int32_t t = address ? vkc__resident_best_type(&ctx->mem_props, req.memoryTypeBits, true)
                        : vkc__resident_pick_memory(ctx, req.memoryTypeBits);
    VKC_RETURN_IF(t < 0, ctx, VKC_ERROR_OUT_OF_DEVICE_MEMORY,
                  "resident kernel \"%s\": no host-visible coherent memory type for the %s",
                  r->name, what);
    *type = (uint32_t)t;
    VkMemoryAllocateFlagsInfo fi = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    fi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.pNext = address ? &fi : NULL;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = (uint32_t)t;
    VKC_RETURN_IF_VK(
        ctx, VKC_VK(vkAllocateMemory, ctx->vk.vkAllocateMemory(ctx->device, &mai, ctx->alloc, mem)),
        "vkAllocateMemory (resident ring or acks)");
    VKC_RETURN_IF_VK(
        ctx, VKC_VK(vkBindBufferMemory, ctx->vk.vkBindBufferMemory(ctx->device, *buf, *mem, 0)),
        "vkBindBufferMemory (resident ring or acks)");
    void *p = NULL;
    VKC_RETURN_IF_VK(
        ctx, VKC_VK(vkMapMemory, ctx->vk.vkMapMemory(ctx->device, *mem, 0, VK_WHOLE_SIZE, 0, &p)),
        "vkMapMemory (resident ring or acks)");
    memset(p, 0, (size_t)size);
    *map = p;
    vkc__set_name(ctx, VK_OBJECT_TYPE_BUFFER, (uint64_t)*buf, r->name);
    return VKC_SUCCESS;
}

/* desc.ack, else VKC_RESIDENT_ACK, else host memory where the kernel can
 * write there (device addresses, a kernel vkc builds from GLSL: one built
 * from the caller's SPIR-V is caught by the self-test), else the ring. On
 * the H200 the host-memory ack measured 0.80x the BAR's round trip
 * (BENCHMARKS.md, issue 17). */
static vkc_resident_ack vkc__resident_ack_place(vkc_context *ctx, const vkc_resident_desc *d)
{
    if (d->ack != VKC_RESIDENT_ACK_DEFAULT)
        return d->ack;
    const vkc_resident_ack def = ctx->features.buffer_device_address && !d->spirv
                                     ? VKC_RESIDENT_ACK_HOST
                                     : VKC_RESIDENT_ACK_BAR;
    const char *v = vkc__env_string("VKC_RESIDENT_ACK");
    if (!v)
        return def;
    if (strcmp(v, "host") == 0)
        return VKC_RESIDENT_ACK_HOST;
    if (strcmp(v, "bar") == 0)
        return VKC_RESIDENT_ACK_BAR;
    vkc__env_ignored(ctx, "VKC_RESIDENT_ACK", v, "\"bar\" or \"host\"",
                     def == VKC_RESIDENT_ACK_HOST ? "the default (host memory)"
                                                  : "the default (the ring)");
    return def;
}

static vkc_result vkc__resident_ring(vkc_resident *r)
{
    vkc_context *ctx = r->ctx;
    VkDeviceSize size = ((VkDeviceSize)RH_WORDS + (VkDeviceSize)r->slots * r->stride) * 4;
    VKC_FORWARD(
        vkc__resident_alloc(r, size, false, "ring", &r->vkbuf, &r->mem, &r->mem_type, &r->ring));
    r->device_local = (ctx->mem_props.memoryTypes[r->mem_type].propertyFlags &
                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
    r->ring[RH_SLOTS] = r->slots;
    r->ring[RH_STRIDE] = r->stride;
    return vkc_buffer_wrap(ctx, r->vkbuf, 0, size, &r->ring_buf);
}

/* The acks in host memory, their address in the ring's header. Sets
 * ack_reason instead where the context cannot give a device address. */
static vkc_result vkc__resident_ack_buffer(vkc_resident *r)
{
    vkc_context *ctx = r->ctx;
    if (!ctx->features.buffer_device_address) {
        r->ack_bad = true;
        snprintf(r->ack_reason, sizeof(r->ack_reason),
                 "acks in host memory need bufferDeviceAddress, which the context lacks");
        return VKC_SUCCESS;
    }
    VkDeviceSize size = (VkDeviceSize)r->slots * VKC__ACK_STRIDE * 4;
    VKC_FORWARD(vkc__resident_alloc(r, size, true, "acks", &r->ack_vkbuf, &r->ack_mem,
                                    &r->ack_mem_type, &r->ack));
    VkBufferDeviceAddressInfo ai = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = r->ack_vkbuf;
    uint64_t a = ctx->vk.vkGetBufferDeviceAddress(ctx->device, &ai);
    r->ring[RH_ACK_LO] = (uint32_t)a;
    r->ring[RH_ACK_HI] = (uint32_t)(a >> 32);
    r->host_ack = true;
    return VKC_SUCCESS;
}

/* The include's interface: binding 0 a storage buffer of uints, a 16-byte
 * push-constant block; the caller's args match bindings 1... */
static vkc_result vkc__resident_check_kernel(vkc_resident *r, const vkc_resident_desc *d)
{
    vkc_context *ctx = r->ctx;
    const vkc_kernel_info *ki = &r->kernel->info;
    VKC_RETURN_IF(ki->binding_count < 1 || ki->bindings[0].uniform ||
                      ki->bindings[0].array_stride != 4 || ki->bindings[0].min_size != 0 ||
                      ki->push_constant_size != VKC__RESIDENT_PUSH,
                  ctx, VKC_ERROR_MISMATCH,
                  "resident kernel \"%s\": the kernel does not use vkc_resident.glsl (binding 0 "
                  "must be its ring and its push constants the include's 16 bytes)",
                  r->name);
    VKC_RETURN_IF(d->arg_count != ki->binding_count - 1, ctx, VKC_ERROR_MISMATCH,
                  "resident kernel \"%s\": %u args given for bindings 1..%u (%u)", r->name,
                  d->arg_count, ki->binding_count - 1, ki->binding_count - 1);
    VKC_RETURN_IF(d->arg_count && !d->args, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "resident kernel \"%s\": arg_count %u but args is NULL", r->name, d->arg_count);
    return VKC_SUCCESS;
}

/* Fallback: slot i's sequence dispatches the kernel in one-item mode. */
static vkc_result vkc__resident_slot_seq(vkc_resident *r, uint32_t slot, vkc_seq **out)
{
    if (r->seqs[slot]) {
        *out = r->seqs[slot];
        return VKC_SUCCESS;
    }
    vkc_seq *s;
    VKC_FORWARD(vkc_seq_create(r->ctx, &(vkc_seq_desc){.name = r->name}, &s));
    uint32_t push[4] = {1, slot, 0, 0};
    vkc_result res = vkc_seq_dispatch(s, &(vkc_dispatch_desc){.kernel = r->kernel,
                                                              .args = r->args,
                                                              .arg_count = r->arg_count,
                                                              .push = push,
                                                              .push_size = sizeof(push),
                                                              .groups = {r->grid, 1, 1},
                                                              .label = r->name});
    if (res >= 0)
        res = vkc_seq_end(s);
    if (res < 0) {
        vkc_seq_destroy(s);
        return res;
    }
    *out = r->seqs[slot] = s;
    return VKC_SUCCESS;
}

static void vkc__resident_fall_back(vkc_resident *r, const char *why)
{
    r->resident = false;
    /* The fallback's one-item dispatches ack in the ring (tickets wait). */
    vkc__resident_ack_in_ring(r);
    if (why)
        snprintf(r->reason, sizeof(r->reason), "%s", why);
    vkc__log(r->ctx, VKC_LOG_INFO, VKC_LOG_ID_GENERAL,
             "resident kernel \"%s\" uses ordinary submits: %s", r->name, r->reason);
}

/* Take a queue of its own (or, with the test hook, vkc's). Sets the reason
 * when there is none. */
static bool vkc__resident_take_queue(vkc_resident *r, vkc__rstate *st, bool share)
{
    vkc_context *ctx = r->ctx;
    for (uint32_t i = 0; i < ctx->resident_queue_count; ++i)
        if (!(st->queues_used >> i & 1)) {
            st->queues_used |= 1u << i;
            r->queue_slot = (int32_t)i;
            r->queue = ctx->resident_queues[i];
            r->queue_index = i + 1;
            return true;
        }
    if (st->share_queue || share) {
        r->queue_slot = -1;
        r->queue = ctx->queue;
        r->queue_index = 0;
        return true;
    }
    if (!ctx->own_device)
        snprintf(r->reason, sizeof(r->reason),
                 "the context wraps the host's device: no queue of its own for the kernel");
    else if (ctx->info.queue_count < 2)
        snprintf(r->reason, sizeof(r->reason),
                 "queue family %u has %u queue(s): none of its own for the kernel",
                 ctx->info.queue_family, ctx->info.queue_count);
    else
        snprintf(r->reason, sizeof(r->reason),
                 "all %u spare queues of family %u are taken by other resident kernels",
                 ctx->resident_queue_count, ctx->info.queue_family);
    return false;
}

static void vkc__resident_free(vkc_resident *r);

vkc_result vkc_resident_create(vkc_context *ctx, const vkc_resident_desc *d, vkc_resident **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!d || !out, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_resident_create: desc and out must not be NULL");
    int sources = (d->kernel != NULL) + (d->glsl != NULL) + (d->spirv != NULL);
    VKC_RETURN_IF(sources != 1, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_resident_create: give exactly one of kernel, glsl and spirv (%d given)",
                  sources);
    uint32_t payload = d->payload_size ? d->payload_size : 64;
    VKC_RETURN_IF(payload % 4 || payload > VKC__RESIDENT_MAX_PAYLOAD, ctx,
                  VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_resident_create: payload_size %u must be a multiple of 4, at most %u",
                  payload, VKC__RESIDENT_MAX_PAYLOAD);
    VKC_RETURN_IF((unsigned)d->ack > VKC_RESIDENT_ACK_HOST, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_resident_create: ack %u is not a vkc_resident_ack", (unsigned)d->ack);
    /* Every workgroup of the grid spins while it waits for the others: all
     * must run at once, so at most one per SM. */
    uint32_t grid_cap = ctx->info.sm_count ? ctx->info.sm_count : VKC__RESIDENT_GRID_UNKNOWN;
    grid_cap = VKC_MIN(grid_cap, VKC__RESIDENT_GRID_MAX);
    VKC_RETURN_IF(d->grid > grid_cap, ctx, VKC_ERROR_LIMIT,
                  "vkc_resident_create: grid %u: at most %u workgroups stay co-resident here (%s)",
                  d->grid, grid_cap, ctx->info.sm_count ? "one per SM" : "SM count unknown");
    uint32_t slots = d->slots ? d->slots : 64;
    VKC_RETURN_IF(slots > 65536, ctx, VKC_ERROR_LIMIT,
                  "vkc_resident_create: %u slots (at most 65536)", slots);
    vkc__rstate *st = vkc__rstate_get(ctx);
    VKC_RETURN_IF(!st, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "resident module state");

    vkc_resident *r = vkc__calloc(1, sizeof(*r));
    VKC_RETURN_IF(!r, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "vkc_resident");
    r->magic = VKC_MAGIC_RESIDENT;
    r->ctx = ctx;
    r->queue_slot = -2; /* none taken */
    pthread_mutex_init(&r->post_lock, NULL);
    pthread_mutex_init(&r->launch_lock, NULL);
    snprintf(r->name, sizeof(r->name), "%s", d->name && *d->name ? d->name : "resident");
    r->slots = slots;
    r->grid = d->grid ? d->grid : 1;
    r->payload_size = payload;
    /* Slots on 64-byte lines: the host's stores to one never share a line
     * with the kernel's ack of another. */
    r->stride = (RS_PAYLOAD + payload / 4 + 15) & ~15u;
    r->idle_ns = d->idle_timeout_ns ? d->idle_timeout_ns : 20000000ull;
    r->timeout_ns = d->timeout_ns ? d->timeout_ns : 1000000000ull;
    uint64_t tick = vkc__coarse_tick_ns();
    r->coarse_ns = tick && tick * 4 <= r->idle_ns ? tick : 0;
    atomic_init(&r->next_seq, 1);
    /* lavapipe ends every loop of an invocation after 65535 iterations in
     * all: launches there end themselves well before (the user's loops
     * count too). */
    if (ctx->info.type == VKC_DEVICE_TYPE_CPU)
        r->launch_polls = 30000;
    atomic_init(&r->done_hint, 0);
    atomic_init(&r->last_post_ns, 0);
    atomic_init(&r->launches, 0);

    vkc_result res = VKC_SUCCESS;
    if (d->kernel) {
        if (!vkc__obj_is(d->kernel, VKC_MAGIC_KERNEL) || d->kernel->obj.ctx != ctx) {
            res = VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE, "vkc_resident_create: invalid kernel");
            goto fail;
        }
        r->kernel = d->kernel;
    } else {
        r->own_kernel = true;
        uint32_t wg = d->workgroup_size;
        res = d->glsl
                  ? vkc_kernel_create_glsl(
                        ctx,
                        &(vkc_glsl_desc){.source = d->glsl, .name = r->name, .workgroup_size = wg},
                        &r->kernel)
                  : vkc_kernel_create(ctx,
                                      &(vkc_kernel_desc){.spirv = d->spirv,
                                                         .spirv_size = d->spirv_size,
                                                         .name = r->name,
                                                         .workgroup_size = wg},
                                      &r->kernel);
        if (res < 0)
            goto fail;
    }
    res = vkc__resident_check_kernel(r, d);
    if (res < 0)
        goto fail;
    r->seqs = vkc__calloc(slots, sizeof(*r->seqs));
    r->slot_tick = vkc__calloc(slots, sizeof(*r->slot_tick));
    r->arg_count = d->arg_count + 1;
    r->args = vkc__calloc(r->arg_count, sizeof(*r->args));
    if (!r->seqs || !r->slot_tick || !r->args) {
        res = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "vkc_resident");
        goto fail;
    }
    res = vkc__resident_ring(r);
    if (res >= 0 && vkc__resident_ack_place(ctx, d) == VKC_RESIDENT_ACK_HOST)
        res = vkc__resident_ack_buffer(r);
    if (res < 0)
        goto fail;
    r->args[0] = (vkc_arg){.buffer = r->ring_buf, .access = VKC_ACCESS_READ_WRITE};
    for (uint32_t i = 0; i < d->arg_count; ++i)
        r->args[i + 1] = d->args[i];
    /* The fallback's sequence of slot 0 checks the args against the kernel
     * like any dispatch, whichever mode runs. */
    vkc_seq *s0;
    res = vkc__resident_slot_seq(r, 0, &s0);
    if (res < 0)
        goto fail;

    pthread_mutex_lock(&st->lock);
    uint32_t id = 0;
    for (uint32_t n = 0; n < VKC__RESIDENT_TABLE && !id; ++n) {
        uint32_t c = st->next_id++ & ((1u << 23) - 1);
        if (c && !st->table[c % VKC__RESIDENT_TABLE])
            id = c;
    }
    if (id) {
        r->id = id;
        st->table[id % VKC__RESIDENT_TABLE] = r;
    }
    const char *env = vkc__env_string("VKC_RESIDENT");
    bool env_fallback = env && strcmp(env, "fallback") == 0;
    /* Lets vkc-bench time the resident path on a device whose family has
     * one queue (lavapipe): ordinary submits end the kernel first anyway. */
    bool env_share = env && strcmp(env, "shared-queue") == 0;
    if (env && !env_fallback && !env_share)
        vkc__env_ignored(ctx, "VKC_RESIDENT", env, "\"fallback\" or \"shared-queue\"",
                         "the resident path");
    bool forced = d->fallback == VKC_ON || env_fallback;
    bool queue = !forced && id && vkc__resident_take_queue(r, st, env_share);
    pthread_mutex_unlock(&st->lock);
    if (!id) {
        res = VKC_FAIL(ctx, VKC_ERROR_LIMIT, "more than %d resident kernels in one context",
                       VKC__RESIDENT_TABLE);
        goto fail;
    }

    if (forced)
        vkc__resident_fall_back(r, d->fallback == VKC_ON ? "forced by the desc (fallback = ON)"
                                                         : "forced by VKC_RESIDENT=fallback");
    else if (!queue)
        vkc__resident_fall_back(r, NULL);
    else {
        res = vkc__resident_record(r);
        bool ok = false;
        if (res >= 0)
            res = vkc__resident_selftest(r, &ok);
        if (res < 0)
            goto fail;
        r->resident = ok;
        if (!ok) {
            vkc__resident_fall_back(r, NULL);
            /* Its queue may serve another resident kernel. */
            pthread_mutex_lock(&st->lock);
            if (r->queue_slot >= 0)
                st->queues_used &= ~(1u << r->queue_slot);
            r->queue_slot = -2;
            pthread_mutex_unlock(&st->lock);
        }
    }
    /* The fallback's sequences up front: no recording on the first post to
     * each slot. */
    for (uint32_t i = 1; i < r->slots && !r->resident && res >= 0; ++i) {
        vkc_seq *s;
        res = vkc__resident_slot_seq(r, i, &s);
    }
    if (res < 0)
        goto fail;
    *out = r;
    return VKC_SUCCESS;
fail:
    vkc__resident_free(r);
    return res;
}

/* ---- posting --------------------------------------------------------------------------- */

static vkc_result vkc__resident_post_fallback(vkc_resident *r, const void *payload, uint32_t size,
                                              uint32_t flags, vkc_ticket *out)
{
    vkc_context *ctx = r->ctx;
    uint64_t seq = r->next_seq;
    uint32_t slot = (uint32_t)(seq % r->slots);
    if (r->slot_tick[slot].value) {
        vkc_result w = (flags & VKC_RESIDENT_POST_NO_WAIT)
                           ? vkc_poll(ctx, r->slot_tick[slot])
                           : vkc_wait(ctx, r->slot_tick[slot], r->timeout_ns);
        if (w != VKC_SUCCESS)
            return w;
    }
    vkc_seq *s;
    VKC_FORWARD(vkc__resident_slot_seq(r, slot, &s));
    vkc__resident_write_item(r, seq, payload, size);
    vkc_ticket t;
    VKC_FORWARD(vkc_seq_submit(s, &t));
    r->slot_tick[slot] = t;
    r->next_seq++;
    atomic_fetch_add(&r->launches, 1);
    *out = t;
    return VKC_SUCCESS;
}

vkc_result vkc_resident_post(vkc_resident *r, const void *payload, uint32_t size, uint32_t flags,
                             vkc_ticket *ticket)
{
    if (ticket)
        memset(ticket, 0, sizeof(*ticket));
    if (VKC_UNLIKELY(!r || r->magic != VKC_MAGIC_RESIDENT))
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_resident handle");
    vkc_context *ctx = r->ctx;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(size > r->payload_size, ctx, VKC_ERROR_LIMIT,
                  "resident kernel \"%s\": payload of %u bytes (at most %u)", r->name, size,
                  r->payload_size);
    VKC_RETURN_IF(size && !payload, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "resident kernel \"%s\": payload is NULL", r->name);
    VKC_RETURN_IF(r->lost, ctx, VKC_ERROR_INVALID_STATE,
                  "resident kernel \"%s\" was created before device loss: create it again",
                  r->name);
    VKC_RETURN_IF(r->stopped, ctx, VKC_ERROR_INVALID_STATE,
                  "resident kernel \"%s\" was stopped (vkc_resident_stop)", r->name);
    vkc_ticket t = {0};
    vkc_result res = VKC_SUCCESS;
    pthread_mutex_lock(&r->post_lock);
    if (!r->resident) {
        res = vkc__resident_post_fallback(r, payload, size, flags, &t);
        pthread_mutex_unlock(&r->post_lock);
        if (res == VKC_SUCCESS && ticket)
            *ticket = t;
        return res;
    }
    /* Relaxed: post_lock orders writers; readers outside it (a ticket's
     * check) need no more than the value. */
    uint64_t seq = atomic_load_explicit(&r->next_seq, memory_order_relaxed);
    if (seq > r->slots && !vkc__acked(r, seq - r->slots)) {
        /* Full: the slot's item is not acknowledged yet. */
        res = vkc__resident_wait_item(r, seq - r->slots,
                                      (flags & VKC_RESIDENT_POST_NO_WAIT) ? 0 : r->timeout_ns,
                                      (flags & VKC_RESIDENT_POST_NO_WAIT) != 0);
        if (res != VKC_SUCCESS)
            goto out;
    }
    /* Ordinary work submitted earlier may use the payload's buffers. */
    if (!(flags & VKC_RESIDENT_POST_UNORDERED) &&
        atomic_load_explicit(&ctx->completed_value, memory_order_acquire) <
            vkc__submitted_value(ctx)) {
        res =
            vkc__wait_value(ctx, vkc__submitted_value(ctx), r->timeout_ns, ctx->features.wait_mode);
        if (res != VKC_SUCCESS)
            goto out;
    }
    vkc__resident_write_item(r, seq, payload, size);
    atomic_store_explicit(&r->next_seq, seq + 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ctx->resident_posts, 1, memory_order_relaxed);
out:
    pthread_mutex_unlock(&r->post_lock);
    if (res != VKC_SUCCESS)
        return res;
    /* The kernel may have gone idle: look (a driver call) only when no
     * post came for half the idle time; a wait catches the rest. The clock
     * is the coarse one where its tick is small against the idle time: it
     * reads the kernel's tick time (a few ns), where the precise clock's
     * source can cost a system call (some virtual machines). The tick is
     * added so a coarse reading never makes the look late. */
    uint64_t now = r->coarse_ns ? vkc__coarse_ns() : vkc__now_ns();
    /* A plain load and store (no locked exchange): two posters racing here
     * at worst both look, and revive is idempotent. */
    uint64_t last = atomic_load_explicit(&r->last_post_ns, memory_order_relaxed);
    atomic_store_explicit(&r->last_post_ns, now, memory_order_relaxed);
    if (!atomic_load_explicit(&r->launched, memory_order_relaxed) ||
        now - last + r->coarse_ns > r->idle_ns / 2)
        VKC_FORWARD(vkc__resident_revive(r));
    if (ticket) {
        ticket->value = VKC__TICKET_RESIDENT | (uint64_t)r->id << VKC__TICKET_ID_SHIFT |
                        (seq & ((1ull << VKC__TICKET_ID_SHIFT) - 1));
        ticket->context_id = ctx->id;
    }
    return VKC_SUCCESS;
}

/* ---- the context's hooks --------------------------------------------------------------- */

static vkc_result vkc__resident_wait_hook(vkc_context *ctx, vkc_ticket t, uint64_t timeout_ns,
                                          bool poll)
{
    vkc__rstate *st = ctx->resident_state;
    uint32_t id = (uint32_t)((t.value & ~VKC__TICKET_RESIDENT) >> VKC__TICKET_ID_SHIFT);
    uint64_t seq = t.value & ((1ull << VKC__TICKET_ID_SHIFT) - 1);
    vkc_resident *r = st ? st->table[id % VKC__RESIDENT_TABLE] : NULL;
    if (!r || r->id != id || seq == 0)
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE,
                        "resident ticket of a destroyed resident kernel (id %u)", id);
    /* Item numbers of one kernel fit in 40 bits for 2^40 posts. */
    if (seq >= atomic_load_explicit(&r->next_seq, memory_order_relaxed))
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE, "resident ticket %llu was never issued",
                        (unsigned long long)seq);
    return vkc__resident_wait_item(r, seq, timeout_ns, poll);
}

/* Before ordinary work: the posted items complete and the kernel ends (its
 * fence waited), so what it wrote is ordered before that work in Vulkan's
 * terms too, and a shared queue is free. The next post launches it again. */
static vkc_result vkc__resident_quiesce(vkc_resident *r)
{
    vkc_result res = VKC_SUCCESS;
    if (r->next_seq > 1)
        res = vkc__resident_wait_item(r, r->next_seq - 1, r->timeout_ns, false);
    if (res != VKC_SUCCESS)
        return res;
    pthread_mutex_lock(&r->launch_lock);
    if (r->launched) {
        r->ring[RH_STOP] = 1;
        vkc__store_fence();
        res = vkc__resident_join(r, vkc__resident_end_bound(r));
        r->ring[RH_STOP] = 0;
        vkc__store_fence();
    }
    pthread_mutex_unlock(&r->launch_lock);
    return res;
}

static vkc_result vkc__resident_order_hook(vkc_context *ctx)
{
    vkc__rstate *st = ctx->resident_state;
    uint64_t posts = atomic_load(&ctx->resident_posts);
    pthread_mutex_lock(&st->lock);
    vkc_result res = VKC_SUCCESS;
    for (uint32_t i = 0; i < VKC__RESIDENT_TABLE && res == VKC_SUCCESS; ++i) {
        vkc_resident *r = st->table[i];
        if (r && r->resident && !r->lost && !r->stopped)
            res = vkc__resident_quiesce(r);
    }
    pthread_mutex_unlock(&st->lock);
    if (res != VKC_SUCCESS)
        return res;
    atomic_store(&ctx->resident_ordered, posts);
    return VKC_SUCCESS;
}

static vkc__rstate *vkc__rstate_get(vkc_context *ctx)
{
    /* Made on first use under the objects lock; the hooks go live with it. */
    pthread_mutex_lock(&ctx->objects_lock);
    vkc__rstate *st = ctx->resident_state;
    if (!st) {
        st = vkc__calloc(1, sizeof(*st));
        if (st) {
            pthread_mutex_init(&st->lock, NULL);
            st->next_id = 1;
            ctx->resident_state = st;
            ctx->resident_wait = vkc__resident_wait_hook;
            ctx->resident_order = vkc__resident_order_hook;
        }
    }
    pthread_mutex_unlock(&ctx->objects_lock);
    return st;
}

void vkc__resident_hide_host_ack(vkc_context *ctx, bool on)
{
    vkc__rstate *st = vkc__rstate_get(ctx);
    if (st)
        st->hide_host_ack = on;
}

void vkc__resident_share_queue(vkc_context *ctx, bool on)
{
    vkc__rstate *st = vkc__rstate_get(ctx);
    if (st)
        st->share_queue = on;
}

/* ---- stop, destroy, info --------------------------------------------------------------- */

/* Let the posted items finish, then end the kernel (bounded). */
static vkc_result vkc__resident_drain(vkc_resident *r)
{
    vkc_result res = VKC_SUCCESS;
    if (r->lost)
        return VKC_SUCCESS;
    pthread_mutex_lock(&r->post_lock);
    if (r->resident) {
        /* The kernel sees the stop only when no item waits: it drains the
         * ring first. An ended kernel with items left is launched again. */
        r->ring[RH_STOP] = 1;
        vkc__store_fence();
        if (r->next_seq > 1)
            res = vkc__resident_wait_item(r, r->next_seq - 1, r->timeout_ns, false);
        pthread_mutex_lock(&r->launch_lock);
        vkc_result j = vkc__resident_join(r, vkc__resident_end_bound(r));
        pthread_mutex_unlock(&r->launch_lock);
        if (res == VKC_SUCCESS)
            res = j;
    } else {
        for (uint32_t i = 0; i < r->slots; ++i)
            if (r->slot_tick[i].value) {
                vkc_result w = vkc_wait(r->ctx, r->slot_tick[i], r->timeout_ns);
                if (res == VKC_SUCCESS)
                    res = w;
                r->slot_tick[i] = (vkc_ticket){0};
            }
    }
    pthread_mutex_unlock(&r->post_lock);
    return res;
}

vkc_result vkc_resident_stop(vkc_resident *r)
{
    if (!r || r->magic != VKC_MAGIC_RESIDENT)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_resident handle");
    vkc_result res = vkc__resident_drain(r);
    r->stopped = true;
    return res;
}

/* The Vulkan objects of the ring and the launch (the kernel has ended).
 * Memory goes with its mapping. */
static void vkc__resident_drop_vk(vkc_resident *r)
{
    vkc_context *ctx = r->ctx;
    if (r->fence)
        ctx->vk.vkDestroyFence(ctx->device, r->fence, ctx->alloc);
    if (r->dpool)
        ctx->vk.vkDestroyDescriptorPool(ctx->device, r->dpool, ctx->alloc);
    if (r->cpool)
        ctx->vk.vkDestroyCommandPool(ctx->device, r->cpool, ctx->alloc);
    if (r->vkbuf)
        ctx->vk.vkDestroyBuffer(ctx->device, r->vkbuf, ctx->alloc);
    if (r->mem)
        ctx->vk.vkFreeMemory(ctx->device, r->mem, ctx->alloc);
    if (r->ack_vkbuf)
        ctx->vk.vkDestroyBuffer(ctx->device, r->ack_vkbuf, ctx->alloc);
    if (r->ack_mem)
        ctx->vk.vkFreeMemory(ctx->device, r->ack_mem, ctx->alloc);
    r->ack_vkbuf = VK_NULL_HANDLE;
    r->ack_mem = VK_NULL_HANDLE;
    r->ack = NULL;
    r->host_ack = false;
    r->fence = VK_NULL_HANDLE;
    r->dpool = VK_NULL_HANDLE;
    r->cpool = VK_NULL_HANDLE;
    r->vkbuf = VK_NULL_HANDLE;
    r->mem = VK_NULL_HANDLE;
    r->ring = NULL;
}

/* Free everything (the kernel has ended or was never launched). */
static void vkc__resident_free(vkc_resident *r)
{
    vkc_context *ctx = r->ctx;
    if (r->launched && !r->lost)
        /* Still running past every bound (its own code does not return):
         * freeing the ring under it is not an option. */
        ctx->vk.vkWaitForFences(ctx->device, 1, &r->fence, VK_TRUE, UINT64_MAX);
    vkc__rstate *st = ctx->resident_state;
    if (st) {
        pthread_mutex_lock(&st->lock);
        if (r->id && st->table[r->id % VKC__RESIDENT_TABLE] == r)
            st->table[r->id % VKC__RESIDENT_TABLE] = NULL;
        if (r->queue_slot >= 0)
            st->queues_used &= ~(1u << r->queue_slot);
        pthread_mutex_unlock(&st->lock);
    }
    if (r->seqs)
        for (uint32_t i = 0; i < r->slots; ++i)
            vkc_seq_destroy(r->seqs[i]);
    vkc_buffer_destroy(r->ring_buf);
    vkc__resident_drop_vk(r);
    if (r->own_kernel)
        vkc_kernel_destroy(r->kernel);
    pthread_mutex_destroy(&r->post_lock);
    pthread_mutex_destroy(&r->launch_lock);
    vkc__free(r->seqs);
    vkc__free(r->slot_tick);
    vkc__free(r->args);
    r->magic = 0;
    vkc__free(r);
}

void vkc_resident_destroy(vkc_resident *r)
{
    if (!r || r->magic != VKC_MAGIC_RESIDENT)
        return;
    vkc_result res = vkc__resident_drain(r);
    if (res != VKC_SUCCESS)
        vkc__log(r->ctx, VKC_LOG_WARN, VKC_LOG_ID_GENERAL,
                 "resident kernel \"%s\" destroyed with work unfinished: %s", r->name,
                 vkc_result_string(res));
    vkc__resident_free(r);
}

vkc_result vkc_resident_info_get(vkc_resident *r, vkc_resident_info *out)
{
    if (!r || r->magic != VKC_MAGIC_RESIDENT)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_resident handle");
    VKC_RETURN_IF(!out, r->ctx, VKC_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof(*out));
    out->resident = r->resident;
    snprintf(out->reason, sizeof(out->reason), "%s", r->resident ? "" : r->reason);
    out->memory_type = r->mem_type;
    out->device_local = r->device_local;
    out->host_ack = r->host_ack;
    out->ack_memory_type = r->host_ack ? r->ack_mem_type : r->mem_type;
    snprintf(out->ack_reason, sizeof(out->ack_reason), "%s", r->ack_bad ? r->ack_reason : "");
    out->queue_family = r->ctx->info.queue_family;
    out->queue_index = r->resident ? r->queue_index : 0;
    out->slots = r->slots;
    out->grid = r->grid;
    out->payload_size = r->payload_size;
    out->idle_timeout_ns = r->idle_ns;
    out->idle_polls = r->idle_polls;
    out->poll_ns = r->poll_ns;
    out->launches = atomic_load(&r->launches);
    pthread_mutex_lock(&r->post_lock);
    out->posted = r->next_seq - 1;
    uint64_t done = 0;
    if (r->resident) {
        /* The self-test's probe is item 1 and not the caller's. */
        uint64_t probes = r->probes;
        out->posted -= probes;
        done = atomic_load(&r->done_hint);
        out->completed = done > probes ? done - probes : 0;
    } else {
        out->posted -= r->probes;
        out->completed = out->posted;
        for (uint32_t i = 0; i < r->slots; ++i)
            if (r->slot_tick[i].value && vkc_poll(r->ctx, r->slot_tick[i]) != VKC_SUCCESS)
                out->completed--;
    }
    pthread_mutex_unlock(&r->post_lock);
    return VKC_SUCCESS;
}

/* ---- the module's rows ----------------------------------------------------------------- */

void vkc__resident_drop(vkc_context *ctx)
{
    vkc__rstate *st = ctx->resident_state;
    if (!st)
        return;
    for (uint32_t i = 0; i < VKC__RESIDENT_TABLE; ++i)
        if (st->table[i])
            vkc_resident_destroy(st->table[i]);
}

void vkc__resident_finish(vkc_context *ctx)
{
    vkc__rstate *st = ctx->resident_state;
    if (!st)
        return;
    ctx->resident_wait = NULL;
    ctx->resident_order = NULL;
    pthread_mutex_destroy(&st->lock);
    vkc__free(st);
    ctx->resident_state = NULL;
}

vkc_result vkc__resident_lose(vkc_context *ctx)
{
    vkc__rstate *st = ctx->resident_state;
    if (!st)
        return VKC_SUCCESS;
    for (uint32_t i = 0; i < VKC__RESIDENT_TABLE; ++i) {
        vkc_resident *r = st->table[i];
        if (!r || r->lost)
            continue;
        /* A loss seen by vkc may leave the kernel running (a fault in
         * another call): end it before its ring goes. A lost device answers
         * the wait at once. */
        if (r->launched) {
            r->ring[RH_STOP] = 1;
            vkc__store_fence();
            (void)ctx->vk.vkWaitForFences(ctx->device, 1, &r->fence, VK_TRUE, r->timeout_ns);
        }
        vkc__resident_drop_vk(r);
        r->launched = false;
        r->lost = true;
        /* The ring's wrapper would stop memory's recovery (a wrapped
         * VkBuffer cannot be rebuilt): out of the list (the caller holds
         * objects_lock), freed with the resident kernel. */
        if (r->ring_buf)
            vkc__list_remove(&r->ring_buf->obj.node);
    }
    /* Posted items died with the device: ordinary submits need not wait. */
    atomic_store(&ctx->resident_ordered, atomic_load(&ctx->resident_posts));
    return VKC_SUCCESS;
}
