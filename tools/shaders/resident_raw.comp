#version 450
// The raw resident probe (bench_resident.c): one workgroup polls a doorbell
// word, does the item (x[i] = x[i] * a + b + i over n uints, as the vkc
// resident bench kernel) and release-stores an ack. No vkc include, no ring:
// one slot, the fewest device-side loads and fences an item can take. The ack
// goes to binding 2: the doorbell page's RB_ACK word (bound there), or a
// word in host memory ("+hostack").
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x_id = 0) in;

// Word layout shared with bench_resident.c (RB_*): each group on its own
// 64-byte line, so the host's stores never share a line with the kernel's.
#define RB_SEQ 0u    // host: the item's number (the doorbell)
#define RB_A 1u      // host: the payload
#define RB_B 2u
#define RB_ACK 16u   // kernel: the last item done (without "+hostack")
#define RB_BASE 32u  // host: the first item of this launch
#define RB_STOP 33u  // host: end now
#define RB_ENDED 34u // kernel: 1 when the launch has ended
#define RB_BOUND 35u // host: polls + 16 per item before the launch ends; 0: none
layout(set = 0, binding = 0) coherent buffer Bell { uint w[]; };
layout(set = 0, binding = 1) coherent buffer X { uint x[]; };
layout(set = 0, binding = 2) coherent buffer Ack { uint acks[]; };
layout(push_constant) uniform Push { uint n; uint ack; } pc;

shared uint s_go, s_a, s_b;

void main()
{
    uint i = gl_LocalInvocationIndex;
    uint next = w[RB_BASE];
    uint bound = w[RB_BOUND];
    uint count = 0u;
    for (;;) {
        if (i == 0u) {
            uint go = 0u;
            for (;;) {
                uint s = atomicLoad(w[RB_SEQ], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                    gl_SemanticsRelaxed);
                if (s == next) {
                    go = 1u;
                    break;
                }
                // lavapipe ends an invocation's loops after 65535 iterations in all.
                if (++count >= bound && bound != 0u)
                    break;
                if ((count & 63u) == 63u &&
                    atomicLoad(w[RB_STOP], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                               gl_SemanticsRelaxed) != 0u)
                    break;
            }
            if (go != 0u) {
                memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
                s_a = w[RB_A];
                s_b = w[RB_B];
                count += 16u;
            }
            s_go = go;
        }
        barrier();
        if (s_go == 0u)
            break;
        uint a = s_a, b = s_b;
        for (uint j = i; j < pc.n; j += gl_WorkGroupSize.x)
            x[j] = x[j] * a + b + j;
        // Every invocation's writes before the ack; the shared words are
        // read before invocation 0 writes them again.
        controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                       gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                       gl_SemanticsAcquireRelease);
        if (i == 0u)
            atomicStore(acks[pc.ack], next, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                        gl_SemanticsRelease);
        next++;
    }
    if (i == 0u)
        atomicStore(w[RB_ENDED], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                    gl_SemanticsRelease);
}
