#version 450
// out[i] = textureLod(tex, coords[i], lod) for n coordinates.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1) readonly buffer Coords { vec2 coords[]; };
layout(set = 0, binding = 2) writeonly buffer Out { vec4 o[]; };
layout(push_constant) uniform Push { uint n; float lod; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        o[i] = textureLod(tex, coords[i], pc.lod);
}
