#version 450
// Scan pass 1 (and 2): each workgroup scans one tile of `tile` uints in
// place (inclusive) and writes the tile's total to sums[group]. Each of the
// 256 invocations scans a contiguous run of tile/256 elements serially in
// registers; the runs' totals are scanned across the subgroup with
// subgroupInclusiveAdd, the subgroups' totals in shared memory; then each
// invocation adds its offset to its run.
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Data { uint data[]; };
layout(set = 0, binding = 1) writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Push {
    uint n;    // elements in data
    uint tile; // elements per workgroup, a multiple of 256
} pc;

shared uint subgroup_total[256];

void main()
{
    uint run = pc.tile / gl_WorkGroupSize.x;
    uint base = gl_WorkGroupID.x * pc.tile + gl_LocalInvocationIndex * run;
    uint total = 0;
    for (uint i = 0; i < run; ++i) {
        uint j = base + i;
        if (j < pc.n) {
            total += data[j];
            data[j] = total;
        }
    }
    // Offset of this run inside the subgroup, then inside the workgroup.
    uint incl = subgroupInclusiveAdd(total);
    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1)
        subgroup_total[gl_SubgroupID] = incl;
    barrier();
    if (gl_LocalInvocationIndex == 0) {
        uint acc = 0;
        for (uint k = 0; k < gl_NumSubgroups; ++k) {
            uint v = subgroup_total[k];
            subgroup_total[k] = acc; // exclusive
            acc += v;
        }
        sums[gl_WorkGroupID.x] = acc;
    }
    barrier();
    uint offset = subgroup_total[gl_SubgroupID] + incl - total;
    for (uint i = 0; i < run; ++i) {
        uint j = base + i;
        if (j < pc.n)
            data[j] += offset;
    }
}
