#version 450
// x[i] += add over n uints within ONE workgroup, then, when count != 0,
// invocation 0 adds 1 to a host-visible word: the raw probe of a submission
// whose own last dispatch publishes its completion (with n = 0 it is a bare
// completion marker).
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(set = 0, binding = 1) coherent buffer Seq { uint seq; };
layout(push_constant) uniform Push { uint n; uint add; uint count; } pc;
void main()
{
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += gl_WorkGroupSize.x)
        x[i] += pc.add;
    // Every invocation's writes are done before the count moves.
    memoryBarrierBuffer();
    barrier();
    if (pc.count != 0u && gl_LocalInvocationID.x == 0u)
        atomicAdd(seq, 1u);
}
