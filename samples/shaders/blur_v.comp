#version 450
// Vertical pass: the same tiling along a column segment of 256 pixels.
#define RADIUS 6
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Src { vec4 src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; }; // RGBA8 pixels
layout(set = 0, binding = 2) readonly buffer Weights { float w[]; };
layout(push_constant) uniform Push { uint width, height; } pc;

shared vec4 tile[256 + 2 * RADIUS];

void main()
{
    uint x = gl_WorkGroupID.y;
    int y0 = int(gl_WorkGroupID.x * 256u);
    int ly = int(gl_LocalInvocationID.x);
    int hmax = int(pc.height) - 1;
    for (int i = ly; i < 256 + 2 * RADIUS; i += 256) {
        int y = clamp(y0 + i - RADIUS, 0, hmax);
        tile[i] = src[uint(y) * pc.width + x];
    }
    barrier();
    int y = y0 + ly;
    if (y > hmax)
        return;
    vec4 acc = vec4(0.0);
    for (int k = -RADIUS; k <= RADIUS; ++k)
        acc += w[k + RADIUS] * tile[ly + RADIUS + k];
    dst[uint(y) * pc.width + x] = packUnorm4x8(acc);
}
