#version 450
// y = a * x + y over n floats. Grid-stride: the grid vkc picks may be smaller
// than n / workgroup size, so every invocation walks the array with a stride
// of the whole grid.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n; float a; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        y[i] = pc.a * x[i] + y[i];
}
