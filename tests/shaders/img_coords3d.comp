#version 450
// The same for a 3D R32F image: z * 10000 + y * 100 + x.
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
layout(set = 0, binding = 0, r32f) uniform writeonly image3D img;
void main()
{
    ivec3 p = ivec3(gl_GlobalInvocationID);
    if (any(greaterThanEqual(p, imageSize(img))))
        return;
    imageStore(img, p, vec4(float(p.z * 10000 + p.y * 100 + p.x)));
}
