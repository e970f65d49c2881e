#version 450
// x[i] += K over n uints; K's spec id is one of the completion epilogue's
// (VKC_EPILOGUE_SPEC_ID), so vkc keeps the marker for it (test_epilogue).
layout(local_size_x = 64) in;
layout(constant_id = 2030) const uint K = 3u;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform P { uint n; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        x[i] += K;
}
