#version 450
// dst(x, y) = (x, y, 200, 255) / 255 through a storage image declared
// without a format qualifier (for formats GLSL cannot name, BGRA8).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform writeonly image2D dst;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(dst))))
        return;
    imageStore(dst, p, vec4(float(p.x), float(p.y), 200.0, 255.0) / 255.0);
}
