#version 450
// Horizontal pass of a separable Gaussian blur with shared-memory tiling.
// A workgroup owns 256 pixels of one row; it loads them plus RADIUS pixels
// of halo on each side into shared memory once (clamped at the image
// edges), then each invocation reads its 2*RADIUS+1 neighbours from shared
// memory instead of from global memory.
#define RADIUS 6
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };  // RGBA8 pixels
layout(set = 0, binding = 1) writeonly buffer Dst { vec4 dst[]; }; // float RGBA
layout(set = 0, binding = 2) readonly buffer Weights { float w[]; }; // 2*RADIUS+1
layout(push_constant) uniform Push { uint width, height; } pc;

shared vec4 tile[256 + 2 * RADIUS];

void main()
{
    uint y = gl_WorkGroupID.y;
    int x0 = int(gl_WorkGroupID.x * 256u);
    int lx = int(gl_LocalInvocationID.x);
    int wmax = int(pc.width) - 1;
    for (int i = lx; i < 256 + 2 * RADIUS; i += 256) {
        int x = clamp(x0 + i - RADIUS, 0, wmax);
        tile[i] = unpackUnorm4x8(src[y * pc.width + uint(x)]);
    }
    barrier();
    int x = x0 + lx;
    if (x > wmax)
        return;
    vec4 acc = vec4(0.0);
    for (int k = -RADIUS; k <= RADIUS; ++k)
        acc += w[k + RADIUS] * tile[lx + RADIUS + k];
    dst[y * pc.width + uint(x)] = acc;
}
