#version 450
// Post-process pass 2 (postfx.h): one direction of a separable Gaussian at
// half resolution. A workgroup owns TILE texels of one line (a row for
// dir 0, a column for dir 1); it loads them and RADIUS texels of halo on
// each side into shared memory once (clamped at the edges), so each texel
// is read from the image once instead of 2 * RADIUS + 1 times.
#define RADIUS 8  // POSTFX_RADIUS
#define TILE 128  // POSTFX_TILE
layout(local_size_x = TILE) in;
layout(set = 0, binding = 0, rgba16f) uniform readonly image2D src;
layout(set = 0, binding = 1, rgba16f) uniform writeonly image2D dst;
layout(push_constant) uniform Push {
    uint w, h, dir;
    float weights[RADIUS + 1]; // centre first
} pc;

shared vec3 line[TILE + 2 * RADIUS];

ivec2 at(int t, int l)
{
    return pc.dir == 0u ? ivec2(t, l) : ivec2(l, t);
}

void main()
{
    int len = int(pc.dir == 0u ? pc.w : pc.h);
    int l = int(gl_WorkGroupID.y);
    int base = int(gl_WorkGroupID.x) * TILE;
    int lx = int(gl_LocalInvocationID.x);
    for (int i = lx; i < TILE + 2 * RADIUS; i += TILE)
        line[i] = imageLoad(src, at(clamp(base + i - RADIUS, 0, len - 1), l)).rgb;
    barrier();
    int t = base + lx;
    if (t >= len)
        return;
    vec3 acc = pc.weights[0] * line[lx + RADIUS];
    for (int k = 1; k <= RADIUS; ++k)
        acc += pc.weights[k] * (line[lx + RADIUS - k] + line[lx + RADIUS + k]);
    imageStore(dst, at(t, l), vec4(acc, 1.0));
}
