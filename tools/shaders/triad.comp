#version 450
// d[i] = a[i] * b[i] + c[i] over n uvec4 (wrapping integer arithmetic: exact on the CPU).
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer B { uvec4 b[]; };
layout(set = 0, binding = 2) readonly buffer C { uvec4 c[]; };
layout(set = 0, binding = 3) writeonly buffer D { uvec4 d[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint stride = width * gl_NumWorkGroups.y;
    for (uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * width; i < pc.n; i += stride)
        d[i] = a[i] * b[i] + c[i];
}
