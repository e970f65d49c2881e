#version 450
// dst[i] = src[i] over n uvec4. Grid-stride over a 1D or 2D grid: launched with one
// thread per element it runs the loop body once.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint stride = width * gl_NumWorkGroups.y;
    for (uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * width; i < pc.n; i += stride)
        dst[i] = src[i];
}
