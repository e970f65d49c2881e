#version 450
// Write each texel's address into an R32UI 2D array (one layer per z):
// base + layer * 1000000 + y * 1000 + x.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform writeonly uimage2DArray img;
layout(push_constant) uniform Push { uint base; } pc;
void main()
{
    ivec3 p = ivec3(gl_GlobalInvocationID);
    if (any(greaterThanEqual(p, imageSize(img))))
        return;
    imageStore(img, p, uvec4(pc.base + uint(p.z) * 1000000u + uint(p.y) * 1000u + uint(p.x)));
}
