#version 450
// v[i] *= 2 over n floats; grid-stride, since vkc sizes the grid for the device.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Data { float v[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)
        v[i] *= 2.0;
}
