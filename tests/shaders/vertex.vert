#version 450
// A vertex shader: kernels must reject it (not a compute shader).
layout(location = 0) in vec4 pos;
void main()
{
    gl_Position = pos;
}
