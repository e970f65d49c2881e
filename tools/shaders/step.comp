#version 450
// One unfused step: x = x * 3 + s.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Push { uint n; uint s; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        x[i] = x[i] * 3u + pc.s;
}
