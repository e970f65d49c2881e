#version 450
// Post-process pass 3 (postfx.h): the bloom upsampled bilinearly from half
// resolution (by hand, with loads: the CPU reference follows it exactly),
// added to the frame, exposed, tone mapped (ACES fit), gamma 1/2.2, stored
// as RGBA8.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba16f) uniform readonly image2D hdr;   // w x h
layout(set = 0, binding = 1, rgba16f) uniform readonly image2D bloom; // half_w x half_h
layout(set = 0, binding = 2, rgba8) uniform writeonly image2D ldr;    // w x h
layout(push_constant) uniform Push {
    uint w, h, half_w, half_h;
    float bloom, exposure;
} pc;

vec3 aces(vec3 x)
{
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
}

void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= int(pc.w) || p.y >= int(pc.h))
        return;
    vec2 u = (vec2(p) + 0.5) * 0.5 - 0.5;
    vec2 f = floor(u);
    vec2 a = u - f;
    ivec2 last = ivec2(pc.half_w, pc.half_h) - 1;
    ivec2 i0 = clamp(ivec2(f), ivec2(0), last), i1 = clamp(ivec2(f) + 1, ivec2(0), last);
    vec3 c00 = imageLoad(bloom, ivec2(i0.x, i0.y)).rgb, c10 = imageLoad(bloom, ivec2(i1.x, i0.y)).rgb;
    vec3 c01 = imageLoad(bloom, ivec2(i0.x, i1.y)).rgb, c11 = imageLoad(bloom, ivec2(i1.x, i1.y)).rgb;
    vec3 top = c00 * (1.0 - a.x) + c10 * a.x;
    vec3 bot = c01 * (1.0 - a.x) + c11 * a.x;
    vec3 b = top * (1.0 - a.y) + bot * a.y;
    vec3 c = pc.exposure * (imageLoad(hdr, p).rgb + pc.bloom * b);
    imageStore(ldr, p, vec4(pow(aces(c), vec3(1.0 / 2.2)), 1.0));
}
