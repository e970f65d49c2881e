#version 450
// The hand-written counterpart of torch_ref.py's fusion chain: y = x, then
// STEPS times y = y * 0.5 + (s + 1), float, out of place, one vec4 per
// invocation (grid-stride over a 1D or 2D grid beyond that).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint STEPS = 1;
layout(set = 0, binding = 0) readonly buffer X { vec4 x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { vec4 y[]; };
layout(push_constant) uniform Push { uint n; } pc; // vec4s
void main()
{
    uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint stride = width * gl_NumWorkGroups.y;
    for (uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * width; i < pc.n; i += stride) {
        vec4 v = x[i];
        for (uint s = 0u; s < STEPS; ++s)
            v = v * 0.5 + float(s + 1u);
        y[i] = v;
    }
}
