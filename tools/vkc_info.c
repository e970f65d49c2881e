/* vkc-info: what Vulkan sees on this machine and what vkc will use.
 *
 *   vkc-info          readable report
 *   vkc-info --json   the same as one JSON object
 *   vkc-info --kernel FILE [--json]
 *                     one kernel's statistics and occupancy (SPIR-V or GLSL)
 *   vkc-info --help   usage
 *
 * Exit status 0 when a usable compute device exists (and for --help), 1
 * otherwise, 2 on bad usage or when the JSON could not be written. */
#include "json.h"

#include <vkc/vkc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(vkc_device_type t)
{
    switch (t) {
    case VKC_DEVICE_TYPE_DISCRETE:
        return "discrete";
    case VKC_DEVICE_TYPE_INTEGRATED:
        return "integrated";
    case VKC_DEVICE_TYPE_VIRTUAL:
        return "virtual";
    case VKC_DEVICE_TYPE_CPU:
        return "cpu";
    default:
        return "other";
    }
}

static void flags_string(uint32_t f, char *out, size_t n)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{VK_QUEUE_GRAPHICS_BIT, "GRAPHICS"},
                 {VK_QUEUE_COMPUTE_BIT, "COMPUTE"},
                 {VK_QUEUE_TRANSFER_BIT, "TRANSFER"},
                 {VK_QUEUE_SPARSE_BINDING_BIT, "SPARSE"},
                 {VK_QUEUE_PROTECTED_BIT, "PROTECTED"},
                 {0x20u, "VIDEO_DECODE"},
                 {0x40u, "VIDEO_ENCODE"},
                 {0x100u, "OPTICAL_FLOW"}};
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        if (f & names[i].bit) {
            if (out[0])
                strncat(out, "|", n - strlen(out) - 1);
            strncat(out, names[i].name, n - strlen(out) - 1);
        }
    }
    if (!out[0])
        snprintf(out, n, "0x%x", f);
}

static void print_version(uint32_t v)
{
    printf("%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

/* The completion path vkc_wait uses (after the marker's self-test). */
static const char *wait_mode_name(vkc_wait_mode m)
{
    switch (m) {
    case VKC_WAIT_SPIN_MARKER:
        return "the completion marker in host memory (spin)";
    case VKC_WAIT_BLOCK:
        return "blocking on the timeline";
    case VKC_WAIT_SPIN:
        return "spinning on the timeline";
    default:
        return "spin-then-block on the timeline";
    }
}

static void json_version(json_w *w, const char *key, uint32_t v)
{
    char s[32];
    snprintf(s, sizeof(s), "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
             VK_API_VERSION_PATCH(v));
    json_kstr(w, key, s);
}

/* 0 means unknown for these: written as null. */
static void json_known(json_w *w, const char *key, uint32_t v)
{
    json_key(w, key);
    if (v)
        json_uint(w, v);
    else
        json_null(w);
}

static void json_uint3(json_w *w, const char *key, const uint32_t v[3])
{
    json_key(w, key);
    json_arr_begin(w);
    for (int i = 0; i < 3; ++i)
        json_uint(w, v[i]);
    json_arr_end(w);
}

/* What a resident kernel gets on vkc's device (vkc_resident_create's
 * self-test): filled while main's context exists. */
static vkc_resident_info g_res;
static bool g_have_res;
/* Where the default placed the acks in the ring: the same asking for host
 * memory (VKC_RESIDENT_ACK_HOST), for the reason it cannot. */
static vkc_resident_info g_res_host;
static bool g_have_res_host;

static void probe_resident(vkc_context *ctx)
{
    static const char *src = "#version 450\n"
                             "#include \"vkc_resident.glsl\"\n"
                             "layout(local_size_x = 1) in;\n"
                             "void main() {\n"
                             "  vkc_item it;\n"
                             "  while (vkc_resident_next(it)) vkc_resident_done(it);\n"
                             "}\n";
    vkc_resident *r = NULL;
    if (vkc_resident_create(ctx, &(vkc_resident_desc){.glsl = src, .name = "vkc-info"}, &r) ==
        VKC_SUCCESS)
        g_have_res = vkc_resident_info_get(r, &g_res) == VKC_SUCCESS;
    vkc_resident_destroy(r);
    r = NULL;
    if (g_have_res && g_res.resident && !g_res.host_ack &&
        vkc_resident_create(
            ctx,
            &(vkc_resident_desc){.glsl = src, .name = "vkc-info", .ack = VKC_RESIDENT_ACK_HOST},
            &r) == VKC_SUCCESS)
        g_have_res_host = vkc_resident_info_get(r, &g_res_host) == VKC_SUCCESS;
    vkc_resident_destroy(r);
}

/* The chosen device's extensions, through the context's own Vulkan
 * handles (vkc-info links no loader of its own). Among them
 * VK_AMD_buffer_marker, a pipelined write after the commands before it,
 * which could publish a submission's completion without the marker's
 * barrier and dispatch (issue 13): the text report says whether the
 * driver offers it. */
#define MAX_EXTS 1024
static char g_ext[MAX_EXTS][VK_MAX_EXTENSION_NAME_SIZE];
static uint32_t g_ext_count;
static bool g_have_ext;

static void probe_extensions(vkc_context *ctx)
{
    vkc_vk_handles h;
    if (vkc_context_vk(ctx, &h) != VKC_SUCCESS || !h.get_instance_proc_addr)
        return;
    PFN_vkEnumerateDeviceExtensionProperties enumerate =
        (PFN_vkEnumerateDeviceExtensionProperties)h.get_instance_proc_addr(
            h.instance, "vkEnumerateDeviceExtensionProperties");
    uint32_t n = 0;
    if (!enumerate || enumerate(h.physical_device, NULL, &n, NULL) != VK_SUCCESS)
        return;
    VkExtensionProperties *props = calloc(n ? n : 1, sizeof(*props));
    if (!props)
        return;
    VkResult vr = enumerate(h.physical_device, NULL, &n, props);
    if (vr == VK_SUCCESS || vr == VK_INCOMPLETE) {
        g_ext_count = n < MAX_EXTS ? n : MAX_EXTS;
        for (uint32_t i = 0; i < g_ext_count; ++i)
            snprintf(g_ext[i], sizeof(g_ext[i]), "%s", props[i].extensionName);
        g_have_ext = true;
    }
    free(props);
}

static bool has_ext(const char *name)
{
    for (uint32_t i = 0; i < g_ext_count; ++i)
        if (!strcmp(g_ext[i], name))
            return true;
    return false;
}

/* The image formats on vkc's device: filled while main's context exists. */
static vkc_format_support g_fmt[VKC_FORMAT_COUNT_];
static bool g_have_fmt;

static void probe_formats(vkc_context *ctx)
{
    g_have_fmt = true;
    for (int f = 1; f < VKC_FORMAT_COUNT_; ++f)
        if (vkc_format_support_get(ctx, (vkc_format)f, &g_fmt[f]) != VKC_SUCCESS)
            g_have_fmt = false;
}

/* "storage sampled linear" (what vkc can do with the format), or "-". */
static const char *format_uses(const vkc_format_support *fs, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s", fs->usage & VKC_IMAGE_USAGE_STORAGE ? " storage" : "",
             fs->usage & VKC_IMAGE_USAGE_SAMPLED ? " sampled" : "",
             fs->linear_filter ? " linear-filter" : "",
             fs->usage & VKC_IMAGE_USAGE_COLOR_ATTACHMENT ? " attachment" : "");
    return buf[0] ? buf + 1 : "- (not even copies: vkc_image_create says UNSUPPORTED)";
}

static void json_formats(json_w *w)
{
    json_key(w, "image_formats");
    json_arr_begin(w);
    for (int f = 1; f < VKC_FORMAT_COUNT_; ++f) {
        const vkc_format_support *fs = &g_fmt[f];
        json_obj_begin(w);
        json_kstr(w, "format", vkc_format_name((vkc_format)f));
        json_kuint(w, "vk_format", (uint32_t)vkc_format_vk((vkc_format)f));
        json_kbool(w, "images", fs->usage != 0);
        json_kbool(w, "storage", fs->usage & VKC_IMAGE_USAGE_STORAGE);
        json_kbool(w, "sampled", fs->usage & VKC_IMAGE_USAGE_SAMPLED);
        json_kbool(w, "linear_filter", fs->linear_filter);
        json_kbool(w, "color_attachment", fs->usage & VKC_IMAGE_USAGE_COLOR_ATTACHMENT);
        json_obj_end(w);
    }
    json_arr_end(w);
}

static void json_device(json_w *w, const vkc_device_info *d, uint32_t i,
                        const vkc_context_features *f)
{
    json_obj_begin(w);
    json_kuint(w, "index", i);
    json_kstr(w, "name", d->name);
    json_kstr(w, "type", type_name(d->type));
    json_kstr(w, "driver", d->driver_name);
    json_kstr(w, "driver_info", d->driver_info);
    json_kuint(w, "vendor_id", d->vendor_id);
    json_version(w, "api_version", d->api_version);
    json_key(w, "queue_families");
    json_arr_begin(w);
    for (uint32_t q = 0; q < d->queue_family_count; ++q) {
        char fl[128];
        flags_string(d->queue_families[q].flags, fl, sizeof(fl));
        json_obj_begin(w);
        json_kuint(w, "index", q);
        json_kstr(w, "flags", fl);
        json_kuint(w, "flag_bits", d->queue_families[q].flags);
        json_kuint(w, "count", d->queue_families[q].count);
        json_kuint(w, "timestamp_valid_bits", d->queue_families[q].timestamp_valid_bits);
        json_obj_end(w);
    }
    json_arr_end(w);
    bool ok = d->queue_family != UINT32_MAX;
    json_key(w, "selected_queue_family");
    if (ok)
        json_uint(w, d->queue_family);
    else
        json_null(w);
    json_kstr(w, "selection_reason", vkc_queue_reason_string(d->queue_reason));
    json_kbool(w, "compute_only",
               ok && !(d->queue_families[d->queue_family].flags & VK_QUEUE_GRAPHICS_BIT));
    json_kuint(w, "subgroup_size", d->subgroup_size);
    json_known(w, "sm_count", d->sm_count);
    json_known(w, "warps_per_sm", d->warps_per_sm);
    json_kstr(w, "sm_source", d->sm_source);
    json_kuint(w, "max_workgroup_invocations", d->max_workgroup_invocations);
    json_uint3(w, "max_workgroup_size", d->max_workgroup_size);
    json_uint3(w, "max_workgroup_count", d->max_workgroup_count);
    json_kuint(w, "max_shared_memory", d->max_shared_memory);
    json_kuint(w, "max_storage_buffer_range", d->max_storage_buffer_range);
    json_kuint(w, "max_memory_allocation_size", d->max_memory_allocation_size);
    json_kuint(w, "min_storage_buffer_offset_alignment", d->min_storage_buffer_offset_alignment);
    json_knum(w, "timestamp_period_ns", d->timestamp_period);
    json_kbool(w, "timestamps", d->timestamps);
    json_key(w, "features");
    json_obj_begin(w);
    json_kbool(w, "timeline_semaphore", d->timeline_semaphore);
    json_kbool(w, "synchronization2", d->synchronization2);
    json_kbool(w, "push_descriptor", d->push_descriptor);
    json_kbool(w, "subgroup_size_control", d->subgroup_size_control);
    json_kbool(w, "storage_buffer_8bit", d->storage_buffer_8bit);
    json_kbool(w, "storage_buffer_16bit", d->storage_buffer_16bit);
    json_kbool(w, "shader_float16", d->shader_float16);
    json_kbool(w, "shader_int8", d->shader_int8);
    json_kbool(w, "shader_int64", d->shader_int64);
    json_kbool(w, "shader_float64", d->shader_float64);
    json_obj_end(w);
    if (f) {
        json_key(w, "vkc_uses");
        json_obj_begin(w);
        json_kbool(w, "timeline_semaphores", f->timeline_semaphores);
        json_kbool(w, "push_descriptors", f->push_descriptors);
        json_kbool(w, "synchronization2", f->synchronization2);
        json_kuint(w, "default_workgroup_size", f->default_workgroup_size);
        json_kuint(w, "max_grid_groups", f->max_grid_groups);
        json_kstr(w, "wait_mode", wait_mode_name(f->wait_mode));
        json_kstr(w, "wait_reason", f->wait_reason ? f->wait_reason : "");
        json_kbool(w, "cooperative", f->cooperative);
        json_kstr(w, "cooperative_reason", f->cooperative_reason ? f->cooperative_reason : "");
        json_kbool(w, "armed_submits", f->armed_submits);
        json_kstr(w, "armed_reason", f->armed_reason ? f->armed_reason : "");
        json_kbool(w, "completion_epilogue", f->completion_epilogue);
        json_kstr(w, "epilogue_reason", f->epilogue_reason ? f->epilogue_reason : "");
        if (g_have_res) {
            json_key(w, "resident_kernels");
            json_obj_begin(w);
            json_kbool(w, "resident", g_res.resident);
            json_kstr(w, "fallback_reason", g_res.reason);
            json_kuint(w, "queue_index", g_res.queue_index);
            json_kuint(w, "memory_type", g_res.memory_type);
            json_kbool(w, "device_local", g_res.device_local);
            json_kuint(w, "poll_ns", (uint32_t)(g_res.poll_ns + 0.5));
            json_kbool(w, "host_ack", g_res.host_ack);
            json_kuint(w, "ack_memory_type", g_res.ack_memory_type);
            json_kstr(w, "ack_reason", g_res.ack_reason);
            if (g_have_res_host) {
                json_kbool(w, "host_ack_usable", g_res_host.host_ack);
                json_kuint(w, "host_ack_memory_type", g_res_host.ack_memory_type);
                json_kstr(w, "host_ack_reason", g_res_host.ack_reason);
            }
            json_obj_end(w);
        }
        if (g_have_fmt)
            json_formats(w);
        json_obj_end(w);
    }
    json_obj_end(w);
}

static bool print_json(const vkc_system_info *si, const vkc_context_features *f, vkc_result r)
{
    json_w w;
    /* the device objects on lines of their own, their fields too */
    json_init(&w, stdout, 3);
    json_obj_begin(&w);
    json_kstr(&w, "vkc_version", VKC_VERSION_STRING);
    json_kbool(&w, "loader_found", si->loader_found);
    json_version(&w, "instance_version", si->instance_version);
    json_kbool(&w, "validation_available", si->validation_available);
    json_key(&w, "layers");
    json_arr_begin(&w);
    for (uint32_t i = 0; i < si->layer_count; ++i)
        json_str(&w, si->layers[i]);
    json_arr_end(&w);
    json_key(&w, "best_device");
    json_int(&w, si->best_device);
    json_kstr(&w, "problem", si->problem);
    json_kbool(&w, "usable", r == VKC_SUCCESS);
    json_key(&w, "devices");
    json_arr_begin(&w);
    for (uint32_t i = 0; i < si->device_count; ++i)
        json_device(&w, &si->devices[i], i, (int32_t)i == si->best_device ? f : NULL);
    json_arr_end(&w);
    if (g_have_ext) {
        json_key(&w, "device_extensions"); /* the best device's */
        json_arr_begin(&w);
        for (uint32_t i = 0; i < g_ext_count; ++i)
            json_str(&w, g_ext[i]);
        json_arr_end(&w);
    }
    json_key(&w, "device_groups");
    json_arr_begin(&w);
    for (uint32_t g = 0; g < si->group_count; ++g) {
        json_obj_begin(&w);
        json_key(&w, "members");
        json_arr_begin(&w);
        for (uint32_t m = 0; m < si->groups[g].member_count; ++m)
            json_uint(&w, si->groups[g].members[m]);
        json_arr_end(&w);
        json_kbool(&w, "subset_allocation", si->groups[g].subset_allocation);
        json_obj_end(&w);
    }
    json_arr_end(&w);
    json_obj_end(&w);
    return json_finish(&w);
}

static void print_text(const vkc_system_info *si, const vkc_context_features *f)
{
    printf("vkc %s\n", VKC_VERSION_STRING);
    printf("Vulkan loader: %s", si->loader_found ? si->loader_path : "NOT FOUND");
    if (si->loader_found) {
        printf(", instance version ");
        print_version(si->instance_version);
    }
    printf("\nLayers (%u):", si->layer_count);
    for (uint32_t i = 0; i < si->layer_count; ++i)
        printf(" %s", si->layers[i]);
    printf("\nValidation layer: %s\n",
           si->validation_available
               ? "installed (VK_LAYER_KHRONOS_validation)"
               : "NOT installed (apt-get install vulkan-validationlayers to debug with it)");
    for (uint32_t i = 0; i < si->device_count; ++i) {
        const vkc_device_info *d = &si->devices[i];
        printf("\nDevice %u%s: %s\n", i, (int32_t)i == si->best_device ? " (vkc's choice)" : "",
               d->name);
        printf("  type %s, vendor 0x%04x, device 0x%04x, Vulkan ", type_name(d->type), d->vendor_id,
               d->device_id);
        print_version(d->api_version);
        printf("\n  driver: %s (%s)\n", d->driver_name, d->driver_info);
        printf("  queue families:\n");
        for (uint32_t q = 0; q < d->queue_family_count; ++q) {
            char fl[128];
            flags_string(d->queue_families[q].flags, fl, sizeof(fl));
            printf("    %u: %-40s x%-3u timestamp bits %u%s\n", q, fl, d->queue_families[q].count,
                   d->queue_families[q].timestamp_valid_bits,
                   q == d->queue_family ? "   <- vkc uses this" : "");
        }
        if (d->queue_family != UINT32_MAX)
            printf("  vkc picks family %u: %s\n", d->queue_family,
                   vkc_queue_reason_string(d->queue_reason));
        else
            printf("  NO queue family with compute: vkc cannot use this device\n");
        printf("  subgroup size %u (%u..%u)\n", d->subgroup_size, d->min_subgroup_size,
               d->max_subgroup_size);
        if (d->sm_count)
            printf("  SMs/CUs: %u (%u subgroups resident each; from %s)\n", d->sm_count,
                   d->warps_per_sm, d->sm_source);
        else
            printf("  SMs/CUs: unknown (no VK_NV_shader_sm_builtins or "
                   "VK_AMD_shader_core_properties)\n");
        printf("  limits: workgroup size %u x %u x %u (%u invocations), workgroup count %u x %u x "
               "%u\n",
               d->max_workgroup_size[0], d->max_workgroup_size[1], d->max_workgroup_size[2],
               d->max_workgroup_invocations, d->max_workgroup_count[0], d->max_workgroup_count[1],
               d->max_workgroup_count[2]);
        printf("          shared memory %u B, push constants %u B, storage buffer range %llu B\n",
               d->max_shared_memory, d->max_push_constants_size,
               (unsigned long long)d->max_storage_buffer_range);
        printf("          max allocation %llu B, storage offset alignment %llu B, timestamp "
               "period %g ns (%s on vkc's family)\n",
               (unsigned long long)d->max_memory_allocation_size,
               (unsigned long long)d->min_storage_buffer_offset_alignment, d->timestamp_period,
               d->timestamps ? "available" : "not available");
        printf("  features: timeline semaphores %s, synchronization2 %s, push descriptors %s, "
               "subgroup size control %s\n",
               d->timeline_semaphore ? "yes" : "no", d->synchronization2 ? "yes" : "no",
               d->push_descriptor ? "yes" : "no", d->subgroup_size_control ? "yes" : "no");
        printf("            8-bit storage %s, 16-bit storage %s, float16 %s, int8 %s, int64 %s, "
               "float64 %s\n",
               d->storage_buffer_8bit ? "yes" : "no", d->storage_buffer_16bit ? "yes" : "no",
               d->shader_float16 ? "yes" : "no", d->shader_int8 ? "yes" : "no",
               d->shader_int64 ? "yes" : "no", d->shader_float64 ? "yes" : "no");
        if ((int32_t)i == si->best_device && f) {
            printf("  vkc will use: %s for tickets, %s for bindings, %s barriers, workgroup %u, "
                   "grids of up to %u groups (%s), grid-stride loops beyond\n",
                   f->timeline_semaphores ? "a timeline semaphore" : "fences (fallback)",
                   f->push_descriptors ? "push descriptors"
                                       : "recycled descriptor pools (fallback)",
                   f->synchronization2 ? "synchronization2" : "classic (fallback)",
                   f->default_workgroup_size, f->max_grid_groups,
                   f->groups_per_sm ? "capped at SMs x VKC_GROUPS_PER_SM"
                                    : "one invocation per element up to the device limit");
            printf("  vkc waits with: %s (%s)\n", wait_mode_name(f->wait_mode),
                   f->wait_reason ? f->wait_reason : "-");
            printf("  cooperative dispatch: %s (%s)\n",
                   f->cooperative ? "one launch, device-wide barriers"
                                  : "one dispatch per step (fallback)",
                   f->cooperative_reason ? f->cooperative_reason : "-");
            printf("  armed submission: %s (%s)\n",
                   f->armed_submits ? "on: a round trip's resubmit opens a copy submitted ahead"
                                    : "off: every submit calls vkQueueSubmit",
                   f->armed_reason ? f->armed_reason : "-");
            printf("  completion epilogue: %s (%s)\n",
                   f->completion_epilogue
                       ? "on: the last workgroup of a kernel (GLSL, or SPIR-V spliced) publishes "
                         "its submission's completion"
                       : "off: submissions end with the completion marker",
                   f->epilogue_reason ? f->epilogue_reason : "-");
            if (g_have_res && g_res.resident)
                printf("  resident kernels: yes, on queue %u of family %u, ring in memory type "
                       "%u (%s), one poll about %.0f ns\n",
                       g_res.queue_index, g_res.queue_family, g_res.memory_type,
                       g_res.device_local ? "device-local" : "system memory", g_res.poll_ns);
            else if (g_have_res)
                printf("  resident kernels: ordinary submits (fallback): %s\n", g_res.reason);
            if (g_have_res && g_res.resident && g_res.host_ack)
                printf("  resident acks: in host memory, memory type %u\n", g_res.ack_memory_type);
            else if (g_have_res && g_res.resident)
                printf("  resident acks: in the ring: %s\n",
                       g_res.ack_reason[0] ? g_res.ack_reason
                       : g_have_res_host && !g_res_host.host_ack
                           ? g_res_host.ack_reason
                           : "asked for (VKC_RESIDENT_ACK=bar)");
            if (g_have_ext) {
                printf("  device extensions: %u (--json lists them); pipelined buffer-marker "
                       "writes (VK_AMD_buffer_marker): %s\n",
                       g_ext_count, has_ext("VK_AMD_buffer_marker") ? "yes" : "no");
            }
            if (g_have_fmt) {
                printf("  image formats (what vkc images of each can be):\n");
                for (int fm = 1; fm < VKC_FORMAT_COUNT_; ++fm) {
                    char buf[96];
                    printf("    %-12s %s\n", vkc_format_name((vkc_format)fm),
                           format_uses(&g_fmt[fm], buf, sizeof(buf)));
                }
                printf("  storage images without a format qualifier: read %s, write %s\n",
                       d->storage_image_read_without_format ? "yes" : "no",
                       d->storage_image_write_without_format ? "yes" : "no");
            }
        }
    }
    /* Several devices in one group could be driven by one VkDevice; vkc
     * uses one context per device instead (vkc_split). */
    for (uint32_t g = 0; g < si->group_count; ++g) {
        printf("%sDevice group %u:", g ? "" : "\n", g);
        for (uint32_t m = 0; m < si->groups[g].member_count; ++m)
            printf(" device %u", si->groups[g].members[m]);
        printf("%s\n", si->groups[g].member_count > 1
                           ? (si->groups[g].subset_allocation ? " (subset allocation)" : "")
                           : " (alone)");
    }
    if (si->problem[0])
        printf("\nProblem: %s\n", si->problem);
}

/* Read a whole file; NUL-terminated so GLSL can be passed as a string. */
static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *p = realloc(buf, 2 * cap + 1);
        if (!p) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = p;
        cap *= 2;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *size = n;
    return buf;
}

/* vkc-info --kernel FILE: build the kernel with the driver's statistics
 * captured (where the device has them) and print them with the occupancy. */
static int kernel_report(const char *path, bool json)
{
    size_t size = 0;
    char *data = read_file(path, &size);
    if (!data) {
        fprintf(stderr, "vkc-info: cannot read %s\n", path);
        return 2;
    }
    vkc_context *ctx = NULL;
    vkc_context_desc desc = {.validation = VKC_OFF, .kernel_statistics = VKC_ON};
    vkc_result r = vkc_context_create(&desc, &ctx);
    if (r < 0) {
        fprintf(stderr, "vkc-info: no context: %s: %s\n", vkc_result_string(r),
                vkc_last_create_error());
        free(data);
        return 1;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    vkc_kernel *k = NULL;
    uint32_t magic = 0;
    if (size >= 4)
        memcpy(&magic, data, 4);
    const bool spirv = magic == 0x07230203u || magic == 0x03022307u;
    if (spirv)
        r = vkc_kernel_create(ctx,
                              &(vkc_kernel_desc){.spirv = (const uint32_t *)(void *)data,
                                                 .spirv_size = size,
                                                 .name = base},
                              &k);
    else
        r = vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = data, .name = base}, &k);
    free(data);
    vkc_kernel_stats ks;
    if (r >= 0)
        r = vkc_kernel_stats_get(k, &ks);
    if (r < 0) {
        fprintf(stderr, "vkc-info: %s: %s\n", path, vkc_context_last_error(ctx));
        vkc_context_destroy(ctx);
        return 1;
    }
    const vkc_device_info *di = vkc_context_device(ctx);
    if (json) {
        json_w w;
        json_init(&w, stdout, 1);
        json_obj_begin(&w);
        json_kstr(&w, "kernel", path);
        json_kstr(&w, "format", spirv ? "spirv" : "glsl");
        json_kstr(&w, "device", di->name);
        json_kstr(&w, "source",
                  ks.from_driver ? "VK_KHR_pipeline_executable_properties"
                                 : "reflection (the device lacks "
                                   "VK_KHR_pipeline_executable_properties)");
        json_kstr(&w, "executable", ks.executable);
        json_uint3(&w, "workgroup_size", ks.workgroup_size);
        json_kuint(&w, "workgroup_invocations", ks.workgroup_invocations);
        json_kuint(&w, "subgroup_size", ks.subgroup_size);
        json_kuint(&w, "subgroups_per_workgroup", ks.subgroups_per_workgroup);
        json_kuint(&w, "shared_memory_bytes", ks.shared_memory);
        json_known(&w, "registers", ks.registers);
        json_kuint(&w, "spills", ks.spills);
        json_known(&w, "max_subgroups_per_sm", ks.max_subgroups_per_sm);
        json_known(&w, "occupancy_subgroups_per_sm", ks.occupancy);
        json_kstr(&w, "limit", ks.limit);
        json_key(&w, "driver_statistics");
        json_obj_begin(&w);
        for (uint32_t i = 0; i < ks.stat_count; ++i)
            json_kstr(&w, ks.stats[i].name, ks.stats[i].value);
        json_obj_end(&w);
        json_obj_end(&w);
        if (!json_finish(&w)) {
            vkc_context_destroy(ctx);
            return 2;
        }
    } else {
        printf("kernel %s (%s) on %s\n", path, spirv ? "SPIR-V" : "GLSL", di->name);
        printf("  statistics from: %s\n", ks.from_driver
                                              ? "the driver (VK_KHR_pipeline_executable_properties)"
                                              : "reflection only (the device lacks "
                                                "VK_KHR_pipeline_executable_properties)");
        if (ks.executable[0])
            printf("  executable: %s\n", ks.executable);
        printf("  workgroup: %u x %u x %u = %u invocations, subgroup %u: %u subgroups\n",
               ks.workgroup_size[0], ks.workgroup_size[1], ks.workgroup_size[2],
               ks.workgroup_invocations, ks.subgroup_size, ks.subgroups_per_workgroup);
        printf("  shared memory: %u bytes per workgroup\n", ks.shared_memory);
        if (ks.registers)
            printf("  registers: %u per invocation\n", ks.registers);
        else
            printf("  registers: unknown\n");
        printf("  spills: %u%s\n", ks.spills, ks.from_driver ? "" : " (unknown)");
        printf("  occupancy: %s\n", ks.limit);
        for (uint32_t i = 0; i < ks.stat_count; ++i)
            printf("    %-40s %s\n", ks.stats[i].name, ks.stats[i].value);
    }
    vkc_context_destroy(ctx);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: vkc-info [--json] [--kernel FILE]\n\n"
               "What Vulkan sees on this machine and what vkc will use.\n"
               "  --json         the same report as one JSON object\n"
               "  --kernel FILE  one kernel (SPIR-V or GLSL compute shader): registers, shared\n"
               "                 memory, spills, subgroup size, theoretical occupancy\n"
               "  --help         this text\n\n"
               "Exit status 0 when a usable compute device exists, 1 otherwise, 2 on bad "
               "usage.\n");
}

int main(int argc, char **argv)
{
    bool json = false;
    const char *kernel = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            kernel = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "vkc-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (kernel)
        return kernel_report(kernel, json);
    static vkc_system_info si;
    vkc_result r = vkc_system_query(&si);
    /* Creating a context shows what vkc will really use (fallbacks). */
    vkc_context_features f;
    bool have_f = false;
    char wait_reason[256], coop_reason[256], arm_reason[256], epi_reason[256];
    if (r == VKC_SUCCESS) {
        vkc_context *ctx = NULL;
        char dev[16];
        snprintf(dev, sizeof(dev), "%d", si.best_device);
        vkc_context_desc desc = {.device = dev, .validation = VKC_OFF};
        vkc_result cr = vkc_context_create(&desc, &ctx);
        if (cr == VKC_SUCCESS) {
            have_f = vkc_context_features_get(ctx, &f) == VKC_SUCCESS;
            /* The reasons live as long as the context: copied, since the
             * report is printed after it is gone. */
            if (have_f) {
                snprintf(wait_reason, sizeof(wait_reason), "%s",
                         f.wait_reason ? f.wait_reason : "-");
                snprintf(coop_reason, sizeof(coop_reason), "%s",
                         f.cooperative_reason ? f.cooperative_reason : "-");
                snprintf(arm_reason, sizeof(arm_reason), "%s",
                         f.armed_reason ? f.armed_reason : "-");
                f.wait_reason = wait_reason;
                f.cooperative_reason = coop_reason;
                f.armed_reason = arm_reason;
                snprintf(epi_reason, sizeof(epi_reason), "%s",
                         f.epilogue_reason ? f.epilogue_reason : "-");
                f.epilogue_reason = epi_reason;
            }
            probe_resident(ctx);
            probe_formats(ctx);
            probe_extensions(ctx);
            vkc_context_destroy(ctx);
        } else {
            snprintf(si.problem, sizeof(si.problem), "creating a device failed: %s: %s",
                     vkc_result_string(cr), vkc_last_create_error());
            r = cr;
        }
    }
    if (json) {
        if (!print_json(&si, have_f ? &f : NULL, r))
            return 2;
    } else
        print_text(&si, have_f ? &f : NULL);
    return r == VKC_SUCCESS ? 0 : 1;
}
