#version 450
// dst = src * a + b per texel of two RGBA32F storage images (8x8 tiles).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba32f) uniform readonly image2D src;
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D dst;
layout(push_constant) uniform Push { float a; float b; } pc;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(dst))))
        return;
    imageStore(dst, p, imageLoad(src, p) * pc.a + pc.b);
}
