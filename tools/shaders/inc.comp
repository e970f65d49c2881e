#version 450
// x[i] += add over n uints, grid-stride. The tiny dispatch of the latency scenarios
// and the step of dependent chains.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Push { uint n; uint add; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        x[i] += pc.add;
}
