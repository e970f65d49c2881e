#version 450
// dst[i] = src[i] + k over n uints, grid-stride. Independent dispatches each write
// their own range of dst and only read src.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint n; uint k; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        dst[i] = src[i] + pc.k;
}
