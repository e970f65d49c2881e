#version 450
// x[i] = (the mirror of i in its workgroup, if below n, else 0) + ADD * 2,
// for i < n, through workgroup memory: a barrier, and invocations that
// return early. Declares neither gl_LocalInvocationIndex nor
// gl_NumWorkGroups (test_epilogue: the splice adds both).
layout(local_size_x = 64) in;
layout(constant_id = 7) const uint ADD = 1u;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform P { uint n; } pc;
shared uint tile[64];
void main()
{
    uint i = gl_GlobalInvocationID.x;
    tile[gl_LocalInvocationID.x] = i < pc.n ? x[i] : 0u;
    barrier();
    if (i >= pc.n)
        return;
    x[i] = tile[63u - gl_LocalInvocationID.x] + ADD * 2u;
}
