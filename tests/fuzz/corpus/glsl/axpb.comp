#version 450
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P { uint n; uint a; uint b; } pc;
void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) y[i] = pc.a * x[i] + pc.b;
}
