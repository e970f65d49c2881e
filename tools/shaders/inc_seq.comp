#version 450
// x[i] += add over n uints within ONE workgroup, then invocation 0 publishes
// the dispatch's completion in a host-visible word: count 1 adds 1 to that
// word (an atomic across the bus on a discrete GPU), count 2 adds 1 to a
// device-local counter and stores the result to the word, count 0 does
// neither. The raw probe of a submission whose own last dispatch publishes
// its completion; with n = 0 it is a bare completion marker.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(set = 0, binding = 1) coherent buffer Seq { uint seq; };
layout(set = 0, binding = 2) buffer Dev { uint dev; };
layout(push_constant) uniform Push { uint n; uint add; uint count; } pc;
void main()
{
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += gl_WorkGroupSize.x)
        x[i] += pc.add;
    // Every invocation's writes are done before the count moves.
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationID.x != 0u)
        return;
    if (pc.count == 1u)
        atomicAdd(seq, 1u);
    else if (pc.count == 2u)
        seq = atomicAdd(dev, 1u) + 1u;
}
