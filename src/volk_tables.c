/* volk, compiled into vkc. volk.c is included here (not linked) so that its
 * generated device-table loader can be called with vkc's own
 * vkGetDeviceProcAddr: vkc never reads or writes volk's global function
 * pointers, so a host that uses volk keeps its own state untouched. */
#define VK_NO_PROTOTYPES
#include <volk.c>

#include "vkc_internal.h"

typedef struct vkc__gdpa_ctx {
    VkDevice device;
    PFN_vkGetDeviceProcAddr gdpa;
} vkc__gdpa_ctx;

static PFN_vkVoidFunction vkc__gdpa_load(void *p, const char *name)
{
    vkc__gdpa_ctx *c = p;
    return c->gdpa(c->device, name);
}

void vkc__load_device_table(struct VolkDeviceTable *table, VkDevice device,
                            PFN_vkGetDeviceProcAddr gdpa)
{
    vkc__gdpa_ctx c = {device, gdpa};
    memset(table, 0, sizeof(*table));
    volkGenLoadDeviceTable(table, &c, vkc__gdpa_load);
}
