#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 1) writeonly buffer B { vec4 b[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() { uint i = gl_GlobalInvocationID.x; if (i < pc.n) b[i] = a[i]; }
