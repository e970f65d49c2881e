#version 450
// The renderer's scene: boxes whose 36 vertices come from gl_VertexIndex, so
// the sample needs no vertex buffer. Push constants carry the object.
layout(push_constant) uniform Object {
    mat4 mvp;
    vec4 model[3]; // rows of the 3x4 model matrix: world = model * vec4(p, 1)
    vec4 color;    // rgb albedo, a: emitted radiance (0 = lit surface)
} obj;
layout(location = 0) out vec3 world_pos;
layout(location = 1) out vec3 world_normal;

void main()
{
    int face = gl_VertexIndex / 6, corner = gl_VertexIndex % 6;
    int axis = face / 2;
    float side = (face & 1) == 1 ? 1.0 : -1.0;
    // Two triangles per face: corners (0,0) (1,0) (1,1) (0,0) (1,1) (0,1).
    const ivec2 quad[6] = ivec2[6](ivec2(0, 0), ivec2(1, 0), ivec2(1, 1), ivec2(0, 0),
                                   ivec2(1, 1), ivec2(0, 1));
    vec2 uv = vec2(quad[corner]) * 2.0 - 1.0;
    vec3 p, n = vec3(0.0);
    p[axis] = side;
    p[(axis + 1) % 3] = uv.x;
    p[(axis + 2) % 3] = uv.y;
    n[axis] = side;
    vec4 p4 = vec4(p, 1.0);
    world_pos = vec3(dot(obj.model[0], p4), dot(obj.model[1], p4), dot(obj.model[2], p4));
    // Boxes are scaled along their own axes, so the scaled face normal keeps
    // its direction: no inverse-transpose needed.
    world_normal = vec3(dot(obj.model[0].xyz, n), dot(obj.model[1].xyz, n),
                        dot(obj.model[2].xyz, n));
    gl_Position = obj.mvp * p4;
}
