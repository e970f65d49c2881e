#version 450
// The same field stored as a structure of arrays: neighbouring invocations
// read neighbouring floats, every byte fetched is used.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer Mass { float mass[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_mass[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        out_mass[i] = 2.0 * mass[i];
}
