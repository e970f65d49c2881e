/* Dispatch module: sequences, hazards, grid sizing, submit, immediate mode. (Being written.) */
#include "vkc_internal.h"

struct vkc_seq {
    uint32_t magic;
    vkc_context *ctx;
    vkc__node node;
};
size_t vkc__seq_node_offset(void)
{
    return offsetof(struct vkc_seq, node);
}
vkc_result vkc__dispatch_init(vkc_context *ctx)
{
    return VKC_SUCCESS;
}
void vkc__dispatch_finish(vkc_context *ctx) {}
void vkc_seq_destroy(vkc_seq *seq) {}
vkc_result vkc__imm_flush(vkc_context *ctx, vkc_ticket *out)
{
    (void)ctx;
    if (out)
        memset(out, 0, sizeof *out);
    return VKC_SUCCESS;
}
