#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { uint x[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < 64u) x[i] += 1u; }
