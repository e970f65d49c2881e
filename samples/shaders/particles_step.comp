#version 450
// One time step of the particles: gravity, motion, and elastic bounces off
// the walls of the [-1, 1] box. Grid-stride over n particles.
layout(local_size_x_id = 0) in;
struct Particle { vec2 pos; vec2 vel; };
layout(set = 0, binding = 0) buffer Particles { Particle p[]; };
layout(push_constant) uniform Push { uint n; float dt; float gravity; } pc;
void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        vec2 v = p[i].vel;
        v.y -= pc.gravity * pc.dt;
        vec2 x = p[i].pos + v * pc.dt;
        if (x.x < -1.0) { x.x = -2.0 - x.x; v.x = -v.x; }
        if (x.x > 1.0) { x.x = 2.0 - x.x; v.x = -v.x; }
        if (x.y < -1.0) { x.y = -2.0 - x.y; v.y = -v.y; }
        if (x.y > 1.0) { x.y = 2.0 - x.y; v.y = -v.y; }
        p[i].pos = x;
        p[i].vel = v;
    }
}
