#version 450
// The same through a separate texture and sampler, from layer `layer` of
// a 2D array.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform texture2DArray tex;
layout(set = 0, binding = 1) uniform sampler smp;
layout(set = 0, binding = 2) readonly buffer Coords { vec2 coords[]; };
layout(set = 0, binding = 3) writeonly buffer Out { vec4 o[]; };
layout(push_constant) uniform Push { uint n; float layer; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        o[i] = textureLod(sampler2DArray(tex, smp), vec3(coords[i], pc.layer), 0.0);
}
