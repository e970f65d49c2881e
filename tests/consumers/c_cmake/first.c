/* A first vkc program: double 1000 floats on the GPU and check them. */
#include <stdio.h>
#include <vkc/vkc.h>

#include "first_shaders.h" /* from vkc_add_shaders: first_twice, first_twice_size */

int main(void)
{
    float v[1000];
    uint32_t n = 1000;
    for (uint32_t i = 0; i < n; ++i)
        v[i] = (float)i;
    vkc_context *ctx;
    if (vkc_context_create(NULL, &ctx) < 0) /* NULL desc: defaults, the best device */
        return fprintf(stderr, "no context: %s\n", vkc_last_create_error()), 1;
    vkc_buffer *buf = NULL;
    vkc_kernel *k = NULL;
    vkc_kernel_desc kd = {.spirv = first_twice, .spirv_size = first_twice_size};
    int bad = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = sizeof v}, &buf) < 0 ||
              vkc_buffer_upload(buf, 0, v, sizeof v) < 0 || vkc_kernel_create(ctx, &kd, &k) < 0;
    vkc_arg arg = {.buffer = buf};
    vkc_dispatch_desc dd = {.kernel = k, .args = &arg, .arg_count = 1, .push = &n, .push_size = 4};
    dd.count = n; /* elements: vkc sizes the grid */
    bad = bad || vkc_dispatch(ctx, &dd) < 0 || vkc_buffer_download(buf, 0, v, sizeof v) < 0;
    for (uint32_t i = 0; i < n && !bad; ++i) /* the download waited for the dispatch */
        bad = v[i] != 2.0f * (float)i;
    printf("%s %s\n", bad ? "FAILED" : "ok: 1000 floats doubled", vkc_context_last_error(ctx));
    vkc_context_destroy(ctx); /* and the buffer and kernel with it */
    return bad;
}
