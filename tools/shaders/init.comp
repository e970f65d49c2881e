#version 450
// x[i] = i * 0x9E3779B1 + seed over n uints: a pattern the CPU can recompute.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) writeonly buffer X { uint x[]; };
layout(push_constant) uniform Push { uint n; uint seed; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x * gl_NumWorkGroups.y;
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (; i < pc.n; i += stride)
        x[i] = i * 0x9E3779B1u + pc.seed;
}
