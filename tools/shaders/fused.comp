#version 450
// STEPS elementwise steps x = x * 3 + s in one pass (s = step number + 1).
// Unfused, each step is one bench_inc-like dispatch; fused, one read and one write.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint STEPS = 1;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        uint v = x[i];
        for (uint s = 0; s < STEPS; ++s)
            v = v * 3u + (s + 1u);
        x[i] = v;
    }
}
