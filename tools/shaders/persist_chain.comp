#version 450
// The raw persistent-kernel reference of the cooperative chain: K steps of
// dst[i] = src[(i + 1) % n] + 1 (ping-pong between a and b) in one dispatch,
// a grid-wide spin barrier between steps (thread 0 of each workgroup does
// device-scope release/acquire), as the H200 probe measured. The grid must be
// resident at once. The counters are back at zero after a complete dispatch
// (the generations only grow), so the state is zeroed once.
//
// Spec constant 1 picks the barrier (issue 13, bench scenario gridbar), in
// its low byte: 0 today's (arrived in word 0, generation in word 1, acquire
// spin); bit 1 the generation at word 32, on its own 128-byte line; bit 2
// relaxed spin loads and one acquire fence after; bit 4 a two-level arrival
// (fan-in workgroups per leaf counter, leaf l at word 64 + 32 l, the last of
// each leaf on word 0), which implies 1 and 2; bit 8 control barriers that
// order memory at workgroup scope only, thread 0's device-scope atomics
// carrying the others' writes on (the CUDA grid.sync form); bit 16 one
// atomic per arrival and nothing after it: workgroup 0 adds 2^31 - (groups
// - 1), every other adds 1, so word 0's top bit flips when the last one
// arrives and its low bits are back where they were (zero); the others spin
// until the top bit differs from the value their own add returned (bits 1
// and 4 then do nothing; no reset, wraps for ever); bit 32, with 16, the
// last arrival (its own add flipped the bit) goes on without spinning. The fan-in is
// the constant's bits 8 and up (0: 8). The state needs 64 + 32 * leaves
// words. Constant branches: the driver compiles each variant as if written
// alone.
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint VARIANT = 0u;
layout(set = 0, binding = 0) buffer S { uint w[]; };
layout(set = 0, binding = 1) coherent buffer A { uint a[]; };
layout(set = 0, binding = 2) coherent buffer B { uint b[]; };
layout(push_constant) uniform P { uint n; uint steps; } pc;

// Constant arguments only, hence the branch.
void workgroup_barrier(bool wg_scope)
{
    if (wg_scope)
        controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer,
                       gl_SemanticsAcquireRelease);
    else
        controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                       gl_SemanticsAcquireRelease);
}

void grid_barrier()
{
    const bool tree = (VARIANT & 4u) != 0u;
    const bool split = (VARIANT & 5u) != 0u;
    const bool relaxed = (VARIANT & 6u) != 0u;
    const bool wg_scope = (VARIANT & 8u) != 0u;
    const bool flip = (VARIANT & 16u) != 0u;
    const bool last_skips = (VARIANT & 32u) != 0u;
    uint fanin = VARIANT >> 8;
    if (fanin == 0u)
        fanin = 8u;
    uint gw = split ? 32u : 1u;
    workgroup_barrier(wg_scope);
    if (gl_LocalInvocationIndex == 0u && flip) {
        uint inc = gl_WorkGroupID.x == 0u ? 0x80000000u - (gl_NumWorkGroups.x - 1u) : 1u;
        uint old = atomicAdd(w[0], inc, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsAcquireRelease);
        // With 32 the last arrival, whose add flipped the bit, does not spin:
        // its acquire-release add already read every other arrival's release.
        if (last_skips && ((old ^ (old + inc)) & 0x80000000u) != 0u) {
        } else if (relaxed) {
            while (((atomicLoad(w[0], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                gl_SemanticsRelaxed) ^ old) & 0x80000000u) == 0u) {
            }
            memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
        } else {
            while (((atomicLoad(w[0], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                gl_SemanticsAcquire) ^ old) & 0x80000000u) == 0u) {
            }
        }
    } else if (gl_LocalInvocationIndex == 0u) {
        // Relaxed is enough for the first load: the arrival after it
        // releases, so the generation moves after this load.
        uint gen;
        if (relaxed)
            gen = atomicLoad(w[gw], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsRelaxed);
        else
            gen = atomicLoad(w[gw], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsAcquire);
        bool last;
        if (tree) {
            uint leaf = gl_WorkGroupID.x / fanin;
            uint members = min(fanin, gl_NumWorkGroups.x - leaf * fanin);
            uint at = 64u + 32u * leaf;
            last = atomicAdd(w[at], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsAcquireRelease) == members - 1u;
            if (last) {
                // Ordered before the generation moves by the top arrival's
                // release, like word 0's reset.
                atomicStore(w[at], 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                            gl_SemanticsRelaxed);
                uint leaves = (gl_NumWorkGroups.x + fanin - 1u) / fanin;
                last = atomicAdd(w[0], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                 gl_SemanticsAcquireRelease) == leaves - 1u;
            }
        } else {
            last = atomicAdd(w[0], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsAcquireRelease) == gl_NumWorkGroups.x - 1u;
        }
        if (last) {
            atomicStore(w[0], 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
            atomicAdd(w[gw], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
        } else if (relaxed) {
            while (atomicLoad(w[gw], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                              gl_SemanticsRelaxed) == gen) {
            }
            memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
        } else {
            while (atomicLoad(w[gw], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                              gl_SemanticsAcquire) == gen) {
            }
        }
    }
    workgroup_barrier(wg_scope);
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
