#version 450
// Read one field of 32-byte records stored as an array of structures: each
// invocation touches a 32-byte record to use 4 bytes of it, so 7/8 of every
// memory transaction is wasted.
layout(local_size_x_id = 0) in;
struct Particle { float x, y, z, mass, vx, vy, vz, charge; }; // 32 bytes
layout(set = 0, binding = 0) readonly buffer Records { Particle p[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_mass[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        out_mass[i] = 2.0 * p[i].mass;
}
