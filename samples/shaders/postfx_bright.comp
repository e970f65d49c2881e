#version 450
// Post-process pass 1 (postfx.h): a 2x2 box downsample of the HDR frame to
// half resolution, then a soft bright-pass threshold on luminance.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba16f) uniform readonly image2D src;  // w x h
layout(set = 0, binding = 1, rgba16f) uniform writeonly image2D dst; // half_w x half_h
layout(push_constant) uniform Push {
    uint src_w, src_h, dst_w, dst_h;
    float threshold;
} pc;

void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= int(pc.dst_w) || p.y >= int(pc.dst_h))
        return;
    ivec2 last = ivec2(pc.src_w, pc.src_h) - 1;
    vec3 c = vec3(0.0);
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i)
            c += imageLoad(src, min(2 * p + ivec2(i, j), last)).rgb;
    c *= 0.25;
    float l = dot(c, vec3(0.2126, 0.7152, 0.0722));
    float s = max(l - pc.threshold, 0.0) / max(l, 1e-4);
    imageStore(dst, p, vec4(c * s, 1.0));
}
