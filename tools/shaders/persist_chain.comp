#version 450
// The raw persistent-kernel reference of the cooperative chain: K steps of
// dst[i] = src[(i + 1) % n] + 1 (ping-pong between a and b) in one dispatch,
// a grid-wide spin barrier between steps (thread 0 of each workgroup does
// device-scope release/acquire), as the H200 probe measured. The grid must be
// resident at once. The state (arrived, generation) is back at (0, g) after a
// complete dispatch, so it is zeroed once.
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer S { uint arrived; uint generation; };
layout(set = 0, binding = 1) coherent buffer A { uint a[]; };
layout(set = 0, binding = 2) coherent buffer B { uint b[]; };
layout(push_constant) uniform P { uint n; uint steps; } pc;

void grid_barrier()
{
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                   gl_SemanticsAcquireRelease);
    if (gl_LocalInvocationIndex == 0u) {
        uint gen = atomicLoad(generation, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                              gl_SemanticsAcquire);
        if (atomicAdd(arrived, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                      gl_SemanticsAcquireRelease) == gl_NumWorkGroups.x - 1u) {
            atomicStore(arrived, 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                        gl_SemanticsRelaxed);
            atomicAdd(generation, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                      gl_SemanticsRelease);
        } else {
            while (atomicLoad(generation, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                              gl_SemanticsAcquire) == gen) {
            }
        }
    }
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                   gl_SemanticsAcquireRelease);
}

void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint s = 0u; s < pc.steps; ++s) {
        for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
            uint j = (i + 1u) % pc.n;
            if ((s & 1u) == 0u) b[i] = a[j] + 1u; else a[i] = b[j] + 1u;
        }
        grid_barrier();
    }
}
