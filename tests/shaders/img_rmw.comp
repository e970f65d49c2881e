#version 450
// In place: img = img * a + b (uint, wrapping) per texel of an R32UI image.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D img;
layout(push_constant) uniform Push { uint a; uint b; } pc;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(img))))
        return;
    imageStore(img, p, imageLoad(img, p) * pc.a + pc.b);
}
