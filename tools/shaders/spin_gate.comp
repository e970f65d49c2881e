#version 450
// The spin-gated copy's first dispatch (bench_latency.c, raw_eventpoll's
// spin forms): one invocation takes the next ticket from a device counter
// and spins until the host's open count (a word in device-local
// host-visible memory) reaches it, or for at most `bound` polls (0: no
// bound), then passes the ticket on. The copies run in order (a barrier
// follows each gate), so the counter needs no atomics.
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) coherent buffer Bell { uint opens; };
layout(set = 0, binding = 1) buffer Dev { uint passed; };
layout(push_constant) uniform Push { uint bound; } pc;
void main()
{
    uint t = passed + 1u;
    uint n = 0u;
    while (int(atomicLoad(opens, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed) -
               t) < 0) {
        if (pc.bound != 0u && ++n >= pc.bound)
            break;
    }
    passed = t;
}
