#version 450
// out[i] = field[i] * 3 + 1: the same field stored as its own array.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer In { uint field[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        o[i] = field[i] * 3u + 1u;
}
