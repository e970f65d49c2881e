#version 450
// Completion marker: every submission of a context in VKC_WAIT_SPIN_MARKER
// mode ends with this one-invocation dispatch, after a barrier that makes all
// earlier writes available to the host. The count of completed submissions
// then equals the context's timeline value, readable without a driver call.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) coherent buffer Marker { uint count; } m;
void main()
{
    atomicAdd(m.count, 1u);
}
