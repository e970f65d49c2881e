#version 450
// vkc fused kernel "random": 3 inputs, 2 scalars, 5 ops, 3 outputs, scalar
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer In0 { float d[]; } in0;
layout(std430, set = 0, binding = 1) readonly buffer In1 { float d[]; } in1;
layout(std430, set = 0, binding = 2) readonly buffer In2 { float d[]; } in2;
layout(std430, set = 0, binding = 3) writeonly buffer Out0 { float d[]; } out0;
layout(std430, set = 0, binding = 4) writeonly buffer Out1 { float d[]; } out1;
layout(std430, set = 0, binding = 5) writeonly buffer Out2 { float d[]; } out2;
layout(push_constant) uniform Push {
    uint n;
    float s0;
    uint s1;
} pc;
uint vkc_pcg(uint v)
{
    uint s = v * 747796405u + 2891336453u;
    uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}
float vkc_tanh(float x)
{
    float e = exp(-2.0 * (abs(x) > 20.0 ? 20.0 : abs(x)));
    return abs(x) < 1e-4 ? x : sign(x) * ((1.0 - e) / (1.0 + e));
}
vec4 vkc_tanh(vec4 x)
{
    return vec4(vkc_tanh(x.x), vkc_tanh(x.y), vkc_tanh(x.z), vkc_tanh(x.w));
}
float vkc_sigmoid(float x)
{
    float e = exp(-abs(x));
    float s = 1.0 / (1.0 + e);
    return x >= 0.0 ? s : e * s;
}
vec4 vkc_sigmoid(vec4 x)
{
    return vec4(vkc_sigmoid(x.x), vkc_sigmoid(x.y), vkc_sigmoid(x.z), vkc_sigmoid(x.w));
}
float vkc_gelu(float x)
{
    float c = clamp(x, -10.0, 10.0);
    return 0.5 * x * (1.0 + vkc_tanh(0.7978845608028654 * (c + 0.044715 * c * c * c)));
}
vec4 vkc_gelu(vec4 x) { return vec4(vkc_gelu(x.x), vkc_gelu(x.y), vkc_gelu(x.z), vkc_gelu(x.w)); }
float vkc_dropout(float x, float p, uint seed, uint idx)
{
    uint h = vkc_pcg(idx + vkc_pcg(seed));
    float u = float(h >> 8u) * (1.0 / 16777216.0);
    return u < p ? x * (1.0 / p) : 0.0;
}
vec4 vkc_dropout(vec4 x, vec4 p, uvec4 seed, uvec4 idx)
{
    return vec4(vkc_dropout(x.x, p.x, seed.x, idx.x), vkc_dropout(x.y, p.y, seed.y, idx.y),
                vkc_dropout(x.z, p.z, seed.z, idx.z), vkc_dropout(x.w, p.w, seed.w, idx.w));
}
void main()
{
    uint n = pc.n;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n;) {
        uint vkc_idx = i;
        precise float v0 = in0.d[i];
        precise float v1 = in1.d[i];
        precise float v2 = in2.d[i];
        precise float v3 = float(uintBitsToFloat(0x00000000u));
        precise float v4 = float(uintBitsToFloat(0x49742400u));
        precise float v5 = clamp(v2, v3, v4);
        uint v6 = uint(v5);
        uint v7 = v6 * v6 + v6;
        precise float v8 = vkc_tanh(v3);
        precise float v9 = pc.s0;
        uint v10 = pc.s1;
        precise float v11 = vkc_dropout(v1, v9, v10, vkc_idx);
        out0.d[i] = v11;
        out1.d[i] = v1;
        out2.d[i] = v8;
        if (n - i <= stride)
            break;
        i += stride;
    }
}
