// Usage: cxx_consumer [on|off]: the validation state expected (default: on
// without NDEBUG, off with it, as vkc.h documents). With a second argument
// "desc-off", the desc asks for validation off, which overrides everything.
#include <vkc/vkc.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "cxx_shaders.h"

int main(int argc, char **argv)
{
#ifdef NDEBUG
    bool expect = false;
#else
    bool expect = true;
#endif
    if (argc > 1)
        expect = std::strcmp(argv[1], "on") == 0;
    vkc_context_desc desc = {};
    if (argc > 2 && std::strcmp(argv[2], "desc-off") == 0)
        desc.validation = VKC_OFF;
    vkc_context *ctx = nullptr;
    if (vkc_context_create(&desc, &ctx) < 0) {
        std::fprintf(stderr, "no context: %s\n", vkc_last_create_error());
        return 1;
    }
    vkc_context_features f{};
    vkc_context_features_get(ctx, &f);
    std::printf("validation %s (expected %s)\n", f.validation ? "on" : "off",
                expect ? "on" : "off");
    int bad = f.validation != expect;

    uint32_t n = 4096;
    std::vector<float> v(n);
    for (uint32_t i = 0; i < n; ++i)
        v[i] = float(i) - 100.0f;
    vkc_buffer_desc bd{};
    bd.size = n * sizeof(float);
    vkc_buffer *buf = nullptr;
    vkc_kernel *k = nullptr;
    vkc_kernel_desc kd{};
    kd.spirv = cxx_twice;
    kd.spirv_size = cxx_twice_size;
    vkc_result r = vkc_buffer_create(ctx, &bd, &buf);
    if (r >= 0)
        r = vkc_buffer_upload(buf, 0, v.data(), bd.size);
    if (r >= 0)
        r = vkc_kernel_create(ctx, &kd, &k);
    vkc_arg arg{};
    arg.buffer = buf;
    vkc_dispatch_desc dd{};
    dd.kernel = k;
    dd.args = &arg;
    dd.arg_count = 1;
    dd.push = &n;
    dd.push_size = sizeof n;
    dd.count = n;
    if (r >= 0)
        r = vkc_dispatch(ctx, &dd);
    if (r >= 0)
        r = vkc_buffer_download(buf, 0, v.data(), bd.size);
    if (r < 0) {
        std::fprintf(stderr, "%s: %s\n", vkc_result_string(r), vkc_context_last_error(ctx));
        bad = 1;
    }
    for (uint32_t i = 0; i < n && r >= 0; ++i)
        if (v[i] != 2.0f * (float(i) - 100.0f)) {
            std::fprintf(stderr, "v[%u] = %g, want %g\n", i, v[i], 2.0f * (float(i) - 100.0f));
            bad = 1;
            break;
        }
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(buf);
    vkc_context_destroy(ctx);
    std::printf("cxx_consumer: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
