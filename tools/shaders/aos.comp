#version 450
// out[i] = rec[i].f[2] * 3 + 1: one 4-byte field of a 32-byte record.
layout(local_size_x_id = 0) in;
struct Rec { uint f[8]; };
layout(set = 0, binding = 0) readonly buffer In { Rec rec[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        o[i] = rec[i].f[2] * 3u + 1u;
}
