#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 8, local_size_y = 8) in;
struct P { vec3 pos; float w; ivec2 cell; };
layout(std430, binding = 0) buffer A { P items[4]; uint count; double d[]; } a;
layout(std140, binding = 1) uniform B { ivec4 k[3]; } b;
void main() {
  uint j = gl_GlobalInvocationID.y * 8u + gl_GlobalInvocationID.x;
  if (j < a.count) a.d[j] = double(a.items[j & 3u].w) + double(b.k[j % 3u].x);
  atomicAdd(a.count, 0u);
}
