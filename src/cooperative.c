/* Cooperative dispatch (vkc_seq_dispatch_cooperative): the steps of a
 * kernel built with vkc_grid.glsl, either as ONE dispatch whose workgroups
 * are all resident at once and pass device-wide barriers between steps, or
 * (where vkc cannot promise co-residency) as one ordinary dispatch per step
 * with vkc's hazard barriers between them. One shader serves both: the
 * include reads which steps to run, and whether its barrier is real, from a
 * small state block that vkc binds.
 *
 * Owns: one state buffer per recorded cooperative dispatch (the recording
 * sequence holds it; this file drops its own reference at once). Calls the
 * sequence's public recording calls, the kernel statistics (occupancy) and
 * the buffer module. */
#include "seq.h"

#include <stdio.h>
#include <stdlib.h>

/* The include's state block (vkc_grid_state): arrived, generation, first,
 * count, cooperative, three reserved words; then, with a barrier variant
 * (VKC_GRID_BARRIER in src/glsl.c), the lines it uses, which only the
 * cooperative form touches. vkc takes the block's size from the kernel. */
#define VKC__GRID_BYTES 32u
enum { GS_FIRST = 2, GS_COUNT = 3, GS_COOPERATIVE = 4 };
/* The fallback records one dispatch per step and one state entry each. */
#define VKC__GRID_MAX_STEPS (1u << 20)
#define VKC__VENDOR_NVIDIA 0x10deu

/* SPIR-V numbers (the specification, unified1). */
#define VKC__OP_DECORATE 71u
#define VKC__OP_SPEC_CONSTANT 50u
#define VKC__DECORATION_SPEC_ID 1u

bool vkc__kernel_grid_binding(const vkc_kernel *k, uint32_t *binding)
{
    const uint32_t *w = k->spirv;
    const size_t n = k->spirv_size / 4;
    uint32_t target = 0;
    /* The SpecId decoration comes before the constant it decorates (the
     * module's layout rules), so one pass finds both. */
    for (size_t i = 5; w && i < n;) {
        const uint32_t op = w[i] & 0xffffu, wc = w[i] >> 16;
        if (!wc || i + wc > n)
            return false;
        if (op == VKC__OP_DECORATE && wc >= 4 && w[i + 2] == VKC__DECORATION_SPEC_ID &&
            w[i + 3] == VKC_GRID_SPEC_ID)
            target = w[i + 1];
        else if (op == VKC__OP_SPEC_CONSTANT && wc >= 4 && target && w[i + 2] == target) {
            *binding = w[i + 3];
            return true;
        }
        i += wc;
    }
    return false;
}

/* Workgroups of k that are resident at once on the whole device, 0 when
 * vkc cannot say (no SM count). Registers decide occupancy on NVIDIA and
 * are known only from the driver's statistics (kernel_statistics on); where
 * they are not, vkc counts one workgroup per SM, which any kernel that can
 * launch at all gets. */
static uint32_t vkc__grid_capacity(vkc_kernel *k, uint32_t *per_sm, char *why, size_t why_size)
{
    const vkc_device_info *di = &k->obj.ctx->info;
    *per_sm = 0;
    if (!di->sm_count) {
        snprintf(why, why_size, "the device reports no SM or CU count");
        return 0;
    }
    vkc_kernel_stats ks;
    uint32_t n = 1;
    if (vkc_kernel_stats_get(k, &ks) < 0 || !ks.occupancy || !ks.subgroups_per_workgroup) {
        snprintf(why, why_size, "occupancy unknown: one workgroup per SM");
    } else if (!ks.registers || di->vendor_id != VKC__VENDOR_NVIDIA) {
        snprintf(why, why_size,
                 "registers unknown (kernel_statistics off or not NVIDIA): one workgroup per SM");
    } else {
        /* The occupancy counts registers at NVIDIA's allocation
         * granularity (profile_kernel.c), so it is what fits at once. */
        n = VKC_MAX(1u, ks.occupancy / ks.subgroups_per_workgroup);
        snprintf(why, why_size, "%u workgroups per SM (%s; %u registers per invocation)", n,
                 ks.limit, ks.registers);
    }
    *per_sm = n;
    uint64_t cap = (uint64_t)di->sm_count * n;
    return (uint32_t)VKC_MIN(cap, (uint64_t)di->max_workgroup_count[0]);
}

/* The grid the caller asks for, as workgroup counts. */
static vkc_result vkc__coop_grid(vkc_seq *s, const vkc_dispatch_desc *d, uint32_t g[3])
{
    const vkc_context *ctx = s->obj.ctx;
    if (d->groups[0] || d->groups[1] || d->groups[2]) {
        for (int i = 0; i < 3; ++i) {
            if (!d->groups[i])
                return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                                    "cooperative dispatch: groups[%d] is 0 while others are not",
                                    i);
            g[i] = d->groups[i];
        }
        return VKC_SUCCESS;
    }
    if (d->count > UINT32_MAX)
        return VKC_SEQ_FAIL(s, VKC_ERROR_LIMIT,
                            "cooperative dispatch: count %llu exceeds 2^32-1; split the work",
                            (unsigned long long)d->count);
    const uint32_t wg = d->kernel->info.workgroup_size[0];
    uint64_t need = (d->count + wg - 1) / wg;
    g[0] = (uint32_t)VKC_MIN(need, (uint64_t)ctx->features.max_grid_groups);
    g[1] = g[2] = 1;
    return VKC_SUCCESS;
}

/* Whether the cooperative form runs, with the reason in info. */
static bool vkc__coop_form(const vkc_context *ctx, const vkc_coop_desc *c, uint32_t capacity,
                           const char *cap_why, vkc_coop_info *info)
{
    if (c->form == VKC_COOP_FALLBACK) {
        snprintf(info->reason, sizeof(info->reason), "fallback: asked for");
        return false;
    }
    if (ctx->cooperative_off) {
        snprintf(info->reason, sizeof(info->reason), "fallback: VKC_COOPERATIVE=off");
        return false;
    }
    if (!capacity && c->form != VKC_COOP_FORCE) {
        snprintf(info->reason, sizeof(info->reason), "fallback: %s", cap_why);
        return false;
    }
    snprintf(info->reason, sizeof(info->reason), "cooperative%s: %s",
             c->form == VKC_COOP_FORCE ? " (forced)" : "",
             capacity ? cap_why : "the caller's grid");
    return true;
}

/* Fit the grid into capacity (clamping x: kernels are grid-strided), or
 * refuse when the caller wants the exact grid. */
static vkc_result vkc__coop_fit(vkc_seq *s, const char *name, const vkc_coop_desc *c,
                                uint32_t capacity, uint32_t g[3])
{
    const uint64_t total = (uint64_t)g[0] * g[1] * g[2];
    if (!capacity || total <= capacity)
        return VKC_SUCCESS;
    const uint64_t yz = (uint64_t)g[1] * g[2];
    if (c->exact_grid || yz > capacity)
        return VKC_SEQ_FAIL(s, VKC_ERROR_LIMIT,
                            "cooperative dispatch of \"%s\": a grid of %llu workgroups (%u x %u x "
                            "%u) does not fit the %u that are resident at once on this device%s",
                            name, (unsigned long long)total, g[0], g[1], g[2], capacity,
                            c->exact_grid ? " (exact_grid: not clamped)" : "");
    g[0] = (uint32_t)(capacity / yz);
    return VKC_SUCCESS;
}

/* The state entries of `bytes` each: one for the cooperative form, one per
 * step (`stride` apart, the storage-buffer offset alignment) for the
 * fallback, where the entries overlap when a variant's lines make the
 * block longer than the stride: the fallback reads only the first words. */
static vkc_result vkc__coop_state(vkc_seq *s, const char *name, bool coop, uint32_t steps,
                                  uint64_t stride, uint64_t bytes, vkc_buffer **out)
{
    vkc_context *ctx = s->obj.ctx;
    const uint32_t entries = coop ? 1 : steps;
    const uint64_t size = stride * (entries - 1) + bytes;
    uint32_t *host = calloc(1, (size_t)size);
    if (!host)
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "cooperative dispatch: state");
    for (uint32_t e = 0; e < entries; ++e) {
        uint32_t *w = host + e * (stride / 4);
        w[GS_FIRST] = coop ? 0 : e;
        w[GS_COUNT] = coop ? steps : 1;
        w[GS_COOPERATIVE] = coop;
    }
    char label[80];
    snprintf(label, sizeof(label), "%s grid state", name);
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = size, .name = label}, out);
    if (r >= 0)
        r = vkc_buffer_upload(*out, 0, host, size);
    free(host);
    if (r < 0) {
        vkc_buffer_destroy(*out);
        *out = NULL;
        return vkc__latch(s, r);
    }
    return VKC_SUCCESS;
}

vkc_result vkc_seq_dispatch_cooperative(vkc_seq *s, const vkc_dispatch_desc *d,
                                        const vkc_coop_desc *c, vkc_coop_info *out_info)
{
    vkc_coop_info scratch;
    vkc_coop_info *info = out_info ? out_info : &scratch;
    memset(info, 0, sizeof(*info));
    VKC_CHECK_SEQ(s);
    VKC_FORWARD(vkc__check_recording(s, "vkc_seq_dispatch_cooperative"));
    vkc_context *ctx = s->obj.ctx;
    if (!d || !c)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "vkc_seq_dispatch_cooperative: desc and coop must not be NULL");
    vkc_kernel *k = d->kernel;
    if (VKC_UNLIKELY(!vkc__obj_is(k, VKC_MAGIC_KERNEL)))
        return vkc__latch(s, vkc__obj_check(ctx, k, VKC_MAGIC_KERNEL, "cooperative dispatch"));
    if (k->obj.ctx != ctx)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_HANDLE,
                            "cooperative dispatch: kernel of another context");
    uint32_t gb = 0;
    if (!vkc__kernel_grid_binding(k, &gb) || gb >= k->info.binding_count)
        return VKC_SEQ_FAIL(s, VKC_ERROR_MISMATCH,
                            "cooperative dispatch: kernel \"%s\" does not use vkc_grid.glsl (no "
                            "spec constant %u naming a binding of set 0)",
                            k->name, VKC_GRID_SPEC_ID);
    if (!c->steps)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "cooperative dispatch of \"%s\": steps is 0", k->name);
    if (c->steps > VKC__GRID_MAX_STEPS)
        return VKC_SEQ_FAIL(s, VKC_ERROR_LIMIT,
                            "cooperative dispatch of \"%s\": %u steps exceed %u", k->name, c->steps,
                            VKC__GRID_MAX_STEPS);
    if ((uint32_t)c->form > VKC_COOP_FORCE)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                            "cooperative dispatch of \"%s\": unknown form %d", k->name,
                            (int)c->form);
    const uint32_t nb = k->info.binding_count;
    if (d->arg_count != nb - 1)
        return VKC_SEQ_FAIL(s, VKC_ERROR_MISMATCH,
                            "cooperative dispatch: kernel \"%s\" has %u bindings, binding %u of "
                            "them vkc's grid state, so it takes %u args, not %u",
                            k->name, nb, gb, nb - 1, d->arg_count);
    if (d->arg_count && !d->args)
        return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT, "cooperative dispatch: args is NULL");

    uint32_t g[3] = {0, 0, 0};
    VKC_FORWARD(vkc__coop_grid(s, d, g));
    if (!g[0])
        return VKC_SUCCESS; /* an empty input is not an error, as for vkc_seq_dispatch */
    char cap_why[128];
    const uint32_t capacity = vkc__grid_capacity(k, &info->groups_per_sm, cap_why, sizeof(cap_why));
    const bool coop = vkc__coop_form(ctx, c, capacity, cap_why, info);
    if (coop)
        VKC_FORWARD(vkc__coop_fit(s, k->name, c, capacity, g));

    uint64_t stride = VKC__GRID_BYTES;
    const uint64_t align = ctx->info.min_storage_buffer_offset_alignment;
    if (align > 1)
        stride = (stride + align - 1) / align * align;
    const uint64_t bytes = VKC_MAX((uint64_t)VKC__GRID_BYTES, k->info.bindings[gb].min_size);
    vkc_buffer *state = NULL;
    VKC_FORWARD(vkc__coop_state(s, k->name, coop, c->steps, stride, bytes, &state));

    /* The caller's args fill the other bindings, in order. */
    vkc_arg args[VKC_MAX_BINDINGS];
    for (uint32_t b = 0, a = 0; b < nb; ++b)
        if (b != gb)
            args[b] = d->args[a++];
    vkc_dispatch_desc one = *d;
    one.args = args;
    one.arg_count = nb;
    vkc_result r = VKC_SUCCESS;
    if (coop) {
        /* Nothing else of this sequence shares the device with it: two
         * cooperative grids side by side could each wait for the other's
         * workgroups to leave. */
        r = vkc_seq_barrier(s);
        args[gb] = (vkc_arg){.buffer = state, .size = bytes, .access = VKC_ACCESS_READ_WRITE};
        memcpy(one.groups, g, sizeof(one.groups));
        one.count = 0;
        if (r >= 0)
            r = vkc_seq_dispatch(s, &one);
        info->commands = r >= 0;
    } else {
        /* Each step reads its own entry: read-only, so the entries add no
         * hazards; the caller's buffers order the steps. */
        for (uint32_t st = 0; st < c->steps && r >= 0; ++st) {
            args[gb] = (vkc_arg){
                .buffer = state, .offset = st * stride, .size = bytes, .access = VKC_ACCESS_READ};
            r = vkc_seq_dispatch(s, &one);
            info->commands += r >= 0;
        }
    }
    vkc_buffer_destroy(state); /* the sequence holds it while it needs it */
    if (r < 0)
        return r;
    info->cooperative = coop;
    info->capacity = capacity;
    memcpy(info->groups, coop ? g : s->cmds[s->cmd_count - 1].groups, sizeof(info->groups));
    return VKC_SUCCESS;
}
