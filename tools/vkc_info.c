/* vkc-info: what Vulkan sees on this machine and what vkc will use.
 *
 *   vkc-info          readable report
 *   vkc-info --json   the same as one JSON object
 *
 * Exit status 0 when a usable compute device exists, 1 otherwise. */
#include <vkc/vkc.h>

#include <stdio.h>
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

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void print_version(uint32_t v)
{
    printf("%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static void print_json(const vkc_system_info *si, const vkc_context_features *f, vkc_result r)
{
    printf("{\n  \"vkc_version\": \"%s\",\n  \"loader_found\": %s,\n", VKC_VERSION_STRING,
           si->loader_found ? "true" : "false");
    printf("  \"instance_version\": \"%u.%u.%u\",\n", VK_API_VERSION_MAJOR(si->instance_version),
           VK_API_VERSION_MINOR(si->instance_version), VK_API_VERSION_PATCH(si->instance_version));
    printf("  \"validation_available\": %s,\n  \"layers\": [",
           si->validation_available ? "true" : "false");
    for (uint32_t i = 0; i < si->layer_count; ++i) {
        printf(i ? ", " : "");
        json_str(si->layers[i]);
    }
    printf("],\n  \"best_device\": %d,\n  \"problem\": ", si->best_device);
    json_str(si->problem);
    printf(",\n  \"usable\": %s,\n  \"devices\": [\n", r == VKC_SUCCESS ? "true" : "false");
    for (uint32_t i = 0; i < si->device_count; ++i) {
        const vkc_device_info *d = &si->devices[i];
        printf("    {\n      \"index\": %u,\n      \"name\": ", i);
        json_str(d->name);
        printf(",\n      \"type\": \"%s\",\n      \"driver\": ", type_name(d->type));
        json_str(d->driver_name);
        printf(",\n      \"driver_info\": ");
        json_str(d->driver_info);
        printf(",\n      \"vendor_id\": %u,\n      \"api_version\": \"%u.%u.%u\",\n", d->vendor_id,
               VK_API_VERSION_MAJOR(d->api_version), VK_API_VERSION_MINOR(d->api_version),
               VK_API_VERSION_PATCH(d->api_version));
        printf("      \"queue_families\": [");
        for (uint32_t q = 0; q < d->queue_family_count; ++q) {
            char fl[128];
            flags_string(d->queue_families[q].flags, fl, sizeof(fl));
            printf(
                "%s\n        {\"index\": %u, \"flags\": \"%s\", \"flag_bits\": %u, \"count\": %u, "
                "\"timestamp_valid_bits\": %u}",
                q ? "," : "", q, fl, d->queue_families[q].flags, d->queue_families[q].count,
                d->queue_families[q].timestamp_valid_bits);
        }
        bool ok = d->queue_family != UINT32_MAX;
        printf("\n      ],\n      \"selected_queue_family\": ");
        if (ok)
            printf("%u", d->queue_family);
        else
            printf("null");
        printf(",\n      \"selection_reason\": ");
        json_str(vkc_queue_reason_string(d->queue_reason));
        printf(",\n      \"compute_only\": %s,\n",
               ok && !(d->queue_families[d->queue_family].flags & VK_QUEUE_GRAPHICS_BIT) ? "true"
                                                                                         : "false");
        printf("      \"subgroup_size\": %u,\n      \"sm_count\": ", d->subgroup_size);
        if (d->sm_count)
            printf("%u", d->sm_count);
        else
            printf("null");
        printf(",\n      \"warps_per_sm\": ");
        if (d->warps_per_sm)
            printf("%u", d->warps_per_sm);
        else
            printf("null");
        printf(",\n      \"sm_source\": ");
        if (d->sm_source)
            json_str(d->sm_source);
        else
            printf("null");
        printf(",\n      \"max_workgroup_invocations\": %u,\n", d->max_workgroup_invocations);
        printf("      \"max_workgroup_size\": [%u, %u, %u],\n", d->max_workgroup_size[0],
               d->max_workgroup_size[1], d->max_workgroup_size[2]);
        printf("      \"max_workgroup_count\": [%u, %u, %u],\n", d->max_workgroup_count[0],
               d->max_workgroup_count[1], d->max_workgroup_count[2]);
        printf("      \"max_shared_memory\": %u,\n", d->max_shared_memory);
        printf("      \"max_storage_buffer_range\": %llu,\n",
               (unsigned long long)d->max_storage_buffer_range);
        printf("      \"max_memory_allocation_size\": %llu,\n",
               (unsigned long long)d->max_memory_allocation_size);
        printf("      \"min_storage_buffer_offset_alignment\": %llu,\n",
               (unsigned long long)d->min_storage_buffer_offset_alignment);
        printf("      \"timestamp_period_ns\": %g,\n      \"timestamps\": %s,\n",
               d->timestamp_period, d->timestamps ? "true" : "false");
        printf(
            "      \"features\": {\"timeline_semaphore\": %s, \"synchronization2\": %s, "
            "\"push_descriptor\": %s, \"subgroup_size_control\": %s, \"storage_buffer_8bit\": %s, "
            "\"storage_buffer_16bit\": %s, \"shader_float16\": %s, \"shader_int8\": %s, "
            "\"shader_int64\": %s, \"shader_float64\": %s}",
            d->timeline_semaphore ? "true" : "false", d->synchronization2 ? "true" : "false",
            d->push_descriptor ? "true" : "false", d->subgroup_size_control ? "true" : "false",
            d->storage_buffer_8bit ? "true" : "false", d->storage_buffer_16bit ? "true" : "false",
            d->shader_float16 ? "true" : "false", d->shader_int8 ? "true" : "false",
            d->shader_int64 ? "true" : "false", d->shader_float64 ? "true" : "false");
        if ((int32_t)i == si->best_device && f) {
            printf(",\n      \"vkc_uses\": {\"timeline_semaphores\": %s, \"push_descriptors\": %s, "
                   "\"synchronization2\": %s, \"default_workgroup_size\": %u, "
                   "\"max_grid_groups\": %u}",
                   f->timeline_semaphores ? "true" : "false",
                   f->push_descriptors ? "true" : "false", f->synchronization2 ? "true" : "false",
                   f->default_workgroup_size, f->max_grid_groups);
        }
        printf("\n    }%s\n", i + 1 < si->device_count ? "," : "");
    }
    printf("  ]\n}\n");
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
        }
    }
    if (si->problem[0])
        printf("\nProblem: %s\n", si->problem);
}

int main(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else {
            fprintf(stderr, "usage: %s [--json]\n", argv[0]);
            return 2;
        }
    }
    static vkc_system_info si;
    vkc_result r = vkc_system_query(&si);
    /* Creating a context shows what vkc will really use (fallbacks). */
    vkc_context_features f;
    bool have_f = false;
    if (r == VKC_SUCCESS) {
        vkc_context *ctx = NULL;
        char dev[16];
        snprintf(dev, sizeof(dev), "%d", si.best_device);
        vkc_context_desc desc = {.device = dev, .validation = VKC_OFF};
        vkc_result cr = vkc_context_create(&desc, &ctx);
        if (cr == VKC_SUCCESS) {
            have_f = vkc_context_features_get(ctx, &f) == VKC_SUCCESS;
            vkc_context_destroy(ctx);
        } else {
            snprintf(si.problem, sizeof(si.problem), "creating a device failed: %s: %s",
                     vkc_result_string(cr), vkc_last_create_error());
            r = cr;
        }
    }
    if (json)
        print_json(&si, have_f ? &f : NULL, r);
    else
        print_text(&si, have_f ? &f : NULL);
    return r == VKC_SUCCESS ? 0 : 1;
}
