#version 450
// Grid-stride fill of 32-bit words. Used by tests and as the smallest kernel.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; } dst;
layout(push_constant) uniform Push { uint count; uint value; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride)
        dst.data[i] = pc.value;
}
