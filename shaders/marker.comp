#version 450
// Completion marker: every submission of a context in VKC_WAIT_SPIN_MARKER
// mode ends with this one-invocation dispatch, after a barrier that orders it
// after all earlier work. The count of completed submissions then equals the
// context's timeline value, readable in host memory without a driver call.
//
// form 0 (default): the count lives in device memory, where an atomic is
// cheap, and a plain store publishes it to the host word; form 1: an atomic
// on the host word itself (a read-modify-write across the bus on a discrete
// GPU). VKC_MARKER_FORM=atomic picks form 1, for measurements.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) coherent buffer Marker { uint count; } m;
layout(set = 0, binding = 1) buffer Count { uint n; } c;
layout(push_constant) uniform Push { uint form; } pc;
void main()
{
    if (pc.form == 1u)
        atomicAdd(m.count, 1u);
    else
        m.count = atomicAdd(c.n, 1u) + 1u;
}
