#version 450
// c[i] = a[i] + b[i] over n uints, grid-stride.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer C { uint c[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        c[i] = a[i] + b[i];
}
