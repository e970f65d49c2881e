#version 450
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 64) in;
layout(constant_id = 1) const float SCALE = 1.0;
layout(set = 0, binding = 0) uniform U { vec4 bias; mat4 m; } u;
layout(set = 0, binding = 1) buffer S { float v[]; } s;
layout(set = 0, binding = 2) buffer O { float total; float parts[]; } o;
shared float tile[64];
void main() {
  uint i = gl_GlobalInvocationID.x;
  tile[gl_LocalInvocationID.x] = s.v[i] * SCALE + u.bias.x;
  barrier();
  float t = subgroupAdd(tile[gl_LocalInvocationID.x]);
  if (subgroupElect()) o.parts[gl_WorkGroupID.x] = t;
}
