/* A first vkc program: double 1000 floats on the GPU and check them. */
#include <stdio.h>
#include <vkc/vkc.h>

#include "first_shaders.h" /* from vkc_add_shaders: first_twice, first_twice_size */

int main(void)
{
    float data[1000];
    uint32_t n = 1000;
    for (uint32_t i = 0; i < n; ++i)
        data[i] = (float)i;
    vkc_context *ctx;
    if (vkc_context_create(NULL, &ctx) < 0) /* NULL desc: defaults, best device */
        return fprintf(stderr, "no context: %s\n", vkc_last_create_error()), 1;
    vkc_buffer *buf;
    vkc_kernel *k;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = sizeof data}, &buf);
    if (r >= 0 && (r = vkc_buffer_upload(buf, 0, data, sizeof data)) >= 0)
        r = vkc_kernel_create(ctx, &(vkc_kernel_desc){.spirv = first_twice, .spirv_size = first_twice_size}, &k);
    if (r >= 0)
        r = vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k, .args = &(vkc_arg){.buffer = buf},
                                                  .arg_count = 1, .push = &n, .push_size = 4, .count = n});
    if (r >= 0) /* waits for the dispatch */
        r = vkc_buffer_download(buf, 0, data, sizeof data);
    int bad = r < 0;
    for (uint32_t i = 0; i < n && !bad; ++i)
        bad = data[i] != 2.0f * (float)i;
    printf("%s\n", r < 0 ? vkc_context_last_error(ctx) : bad ? "WRONG" : "ok: 1000 floats doubled");
    vkc_context_destroy(ctx); /* and the buffer and kernel with it */
    return bad;
}
