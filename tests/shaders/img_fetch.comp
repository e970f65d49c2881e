#version 450
// dst = texelFetch(src) * a + b: src sampled (combined sampler), dst storage.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform usampler2D src;
layout(set = 0, binding = 1, r32ui) uniform writeonly uimage2D dst;
layout(push_constant) uniform Push { uint a; uint b; } pc;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(dst))))
        return;
    imageStore(dst, p, texelFetch(src, p, 0) * pc.a + pc.b);
}
