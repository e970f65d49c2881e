#version 450
// The renderer reads vkc's particle buffer directly as a vertex buffer.
layout(location = 0) in vec2 pos;
layout(location = 1) in vec2 vel;
layout(location = 0) out vec3 color;
void main()
{
    gl_Position = vec4(pos.x, -pos.y, 0.0, 1.0); // y up
    gl_PointSize = 1.0;
    float s = clamp(length(vel) * 0.8, 0.0, 1.0);
    color = mix(vec3(0.15, 0.35, 1.0), vec3(1.0, 0.55, 0.1), s); // slow blue, fast orange
}
