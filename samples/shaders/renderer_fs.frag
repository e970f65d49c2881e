#version 450
// Lit boxes in linear HDR: a warm key light with a sharp specular highlight
// (values well above 1, which the bright pass keeps) and a dim blue fill.
layout(push_constant) uniform Object {
    mat4 mvp;
    vec4 model[3];
    vec4 color;
} obj;
layout(location = 0) in vec3 world_pos;
layout(location = 1) in vec3 world_normal;
layout(location = 0) out vec4 out_color;

const vec3 EYE = vec3(0.0, 2.2, 6.0);   // as in renderer.c
const vec3 KEY = vec3(2.5, 4.0, 3.0);   // key light position
const vec3 KEY_RGB = vec3(9.0, 7.5, 5.5);
const vec3 FILL_DIR = vec3(-0.6, 0.3, -0.7);
const vec3 FILL_RGB = vec3(0.10, 0.14, 0.25);

void main()
{
    if (obj.color.a > 0.0) { // an emitter: flat, bright
        out_color = vec4(obj.color.rgb * obj.color.a, 1.0);
        return;
    }
    vec3 n = normalize(world_normal);
    vec3 to_light = KEY - world_pos;
    float d2 = dot(to_light, to_light);
    vec3 l = to_light * inversesqrt(d2);
    vec3 v = normalize(EYE - world_pos);
    vec3 h = normalize(l + v);
    float diffuse = max(dot(n, l), 0.0);
    float spec = diffuse > 0.0 ? pow(max(dot(n, h), 0.0), 64.0) : 0.0;
    vec3 key = KEY_RGB * (12.0 / (d2 + 1.0)) * 0.25;
    vec3 rgb = obj.color.rgb * (key * diffuse + FILL_RGB * max(dot(n, normalize(FILL_DIR)), 0.0) +
                                0.03) +
               key * spec * 1.5;
    out_color = vec4(rgb, 1.0);
}
