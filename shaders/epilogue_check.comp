#version 450
// The completion epilogue's self-test kernel (src/epilogue.c): every
// invocation writes pattern + its index to host-visible memory; the build
// appends shaders/include/vkc_epilogue.glsl, as vkc_kernel_create_glsl does.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_KHR_memory_scope_semantics : require
#define main vkc_kernel_main_
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint w[]; };
layout(push_constant) uniform Push { uint pattern; } pc;
void main()
{
    w[gl_GlobalInvocationID.x] = pc.pattern + gl_GlobalInvocationID.x;
}
