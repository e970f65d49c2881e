#version 450
// Scan pass 3: add the scanned total of all earlier tiles to every element
// of a tile. Grid-stride over the elements of tiles 1..n-1.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Data { uint data[]; };
layout(set = 0, binding = 1) readonly buffer Sums { uint sums[]; }; // inclusive scan of totals
layout(push_constant) uniform Push { uint n; uint tile; } pc;

void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint j = pc.tile + gl_GlobalInvocationID.x; j < pc.n; j += stride)
        data[j] += sums[j / pc.tile - 1];
}
