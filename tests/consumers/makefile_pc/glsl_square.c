/* GLSL compiled at run time by vkc (its own glslang, inside libvkc.so):
 * square 10000 uints and check them. */
#include <stdio.h>
#include <stdlib.h>
#include <vkc/vkc.h>

static const char *source = "#version 450\n"
                            "layout(local_size_x_id = 0) in;\n"
                            "layout(set = 0, binding = 0) buffer B { uint v[]; };\n"
                            "layout(push_constant) uniform P { uint n; } pc;\n"
                            "void main() {\n"
                            "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
                            "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)\n"
                            "    v[i] = v[i] * v[i];\n"
                            "}\n";

int main(void)
{
    uint32_t n = 10000;
    uint32_t *v = malloc(n * sizeof *v);
    for (uint32_t i = 0; i < n; ++i)
        v[i] = i;
    vkc_context *ctx;
    if (vkc_context_create(&(vkc_context_desc){.disk_cache = VKC_OFF}, &ctx) < 0) {
        fprintf(stderr, "no context: %s\n", vkc_last_create_error());
        return 1;
    }
    vkc_buffer *buf = NULL;
    vkc_kernel *k = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4ull}, &buf);
    if (r >= 0)
        r = vkc_buffer_upload(buf, 0, v, n * 4ull);
    if (r >= 0)
        r = vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = source, .name = "square"}, &k);
    if (r >= 0)
        r = vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                                   .args = &(vkc_arg){.buffer = buf},
                                                   .arg_count = 1,
                                                   .push = &n,
                                                   .push_size = sizeof n,
                                                   .count = n});
    if (r >= 0)
        r = vkc_buffer_download(buf, 0, v, n * 4ull);
    int bad = r < 0;
    if (r < 0)
        fprintf(stderr, "%s: %s\n", vkc_result_string(r), vkc_context_last_error(ctx));
    for (uint32_t i = 0; i < n && !bad; ++i)
        if (v[i] != i * i) {
            fprintf(stderr, "v[%u] = %u, want %u\n", i, v[i], i * i);
            bad = 1;
        }
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(buf);
    vkc_context_destroy(ctx);
    free(v);
    printf("makefile_pc: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
