#version 450
// One reduction pass: each workgroup reduces its share of the input to one
// (sum, max) pair. Inside a workgroup: each invocation accumulates a
// grid-stride slice in registers, the subgroup combines with one
// subgroupAdd / subgroupMax (no shared memory, no barrier), and the
// subgroups meet in shared memory. Run twice: floats -> one pair per
// workgroup -> one pair.
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer In { float src[]; };
layout(set = 0, binding = 1) writeonly buffer Out { vec2 partial[]; }; // (sum, max) per group
layout(push_constant) uniform Push {
    uint n;     // elements (floats, or pairs when pairs != 0)
    uint pairs; // 0: src holds floats; 1: src holds (sum, max) pairs of a first pass
} pc;

shared vec2 subgroup_result[256]; // one per subgroup; 256 covers subgroups of size 1

void main()
{
    float s = 0.0;
    float m = -1.0 / 0.0; // -inf: the identity of max
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        if (pc.pairs != 0) {
            s += src[2 * i];
            m = max(m, src[2 * i + 1]);
        } else {
            float v = src[i];
            s += v;
            m = max(m, v);
        }
    }
    s = subgroupAdd(s);
    m = subgroupMax(m);
    if (subgroupElect())
        subgroup_result[gl_SubgroupID] = vec2(s, m);
    barrier();
    if (gl_LocalInvocationIndex == 0) {
        vec2 r = subgroup_result[0];
        for (uint k = 1; k < gl_NumSubgroups; ++k)
            r = vec2(r.x + subgroup_result[k].x, max(r.y, subgroup_result[k].y));
        partial[gl_WorkGroupID.x] = r;
    }
}
