/* Fusion code generation: GLSL compute shaders from a fusion graph (one
 * grid-strided loop over the elements, scalar or vec4), with the helper
 * functions the ops need and an optional subgroup reduction.
 *
 * Owns no state: pure functions of the graph. Calls only vkc_internal.h's
 * allocation. fuse.c and fuse_record.c call vkc__fuse_glsl. */
#include "vkc_internal.h"

#include <stdio.h>

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) VKC_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *q = vkc__realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* ---- GLSL generation -------------------------------------------------------- */

/* GLSL type of a value type at width w (1 or 4). */
static const char *gl_type(uint8_t t, int w)
{
    switch (t) {
    case VKC_DTYPE_I32:
        return w == 4 ? "ivec4" : "int";
    case VKC_DTYPE_U32:
        return w == 4 ? "uvec4" : "uint";
    case VKC_DTYPE_BOOL:
        return w == 4 ? "bvec4" : "bool";
    default:
        return w == 4 ? "vec4" : "float";
    }
}

/* GLSL type of a buffer element. */
static const char *gl_storage_type(uint8_t st, int w)
{
    switch (st) {
    case VKC_DTYPE_F16:
        return "float16_t";
    case VKC_DTYPE_BOOL:
    case VKC_DTYPE_U32:
        return w == 4 ? "uvec4" : "uint";
    case VKC_DTYPE_I32:
        return w == 4 ? "ivec4" : "int";
    default:
        return w == 4 ? "vec4" : "float";
    }
}

static void gen_constant(sbuf *b, const vkc__fnode *n, int w)
{
    const char *t = gl_type(n->type, w);
    switch (n->type) {
    case VKC_DTYPE_F32:
        sb_printf(b, "%s(uintBitsToFloat(0x%08xu))", t, n->bits);
        break;
    case VKC_DTYPE_I32:
        sb_printf(b, "%s(int(0x%08xu))", t, n->bits);
        break;
    case VKC_DTYPE_U32:
        sb_printf(b, "%s(0x%08xu)", t, n->bits);
        break;
    default:
        sb_printf(b, "%s(%s)", t, n->bits ? "true" : "false");
        break;
    }
}

static const char *const helpers =
    "uint vkc_pcg(uint v)\n"
    "{\n"
    "    uint s = v * 747796405u + 2891336453u;\n"
    "    uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;\n"
    "    return (w >> 22u) ^ w;\n"
    "}\n"
    /* Every helper keeps its exp() argument finite and its divisors in
     * [1, 2], where Vulkan defines the precision of OpFDiv ([2^-126,
     * 2^126]), so any non-NaN x gives a defined result (also +-inf). */
    "float vkc_tanh(float x)\n"
    "{\n"
    /* not min(): that may drop a NaN */
    "    float e = exp(-2.0 * (abs(x) > 20.0 ? 20.0 : abs(x)));\n"
    "    return abs(x) < 1e-4 ? x : sign(x) * ((1.0 - e) / (1.0 + e));\n"
    "}\n"
    "vec4 vkc_tanh(vec4 x)\n"
    "{\n"
    "    return vec4(vkc_tanh(x.x), vkc_tanh(x.y), vkc_tanh(x.z), vkc_tanh(x.w));\n"
    "}\n"
    "float vkc_sigmoid(float x)\n"
    "{\n"
    "    float e = exp(-abs(x));\n"
    "    float s = 1.0 / (1.0 + e);\n"
    "    return x >= 0.0 ? s : e * s;\n"
    "}\n"
    "vec4 vkc_sigmoid(vec4 x)\n"
    "{\n"
    "    return vec4(vkc_sigmoid(x.x), vkc_sigmoid(x.y), vkc_sigmoid(x.z), vkc_sigmoid(x.w));\n"
    "}\n"
    /* tanh(u) rounds to 1 for |u| > 9.1, reached at |x| = 10: the cube is
     * taken of x clamped to [-10, 10] so it never overflows */
    "float vkc_gelu(float x)\n"
    "{\n"
    "    float c = clamp(x, -10.0, 10.0);\n"
    "    return 0.5 * x * (1.0 + vkc_tanh(0.7978845608028654 * (c + 0.044715 * c * c * c)));\n"
    "}\n"
    "vec4 vkc_gelu(vec4 x) { return vec4(vkc_gelu(x.x), vkc_gelu(x.y), vkc_gelu(x.z), "
    "vkc_gelu(x.w)); }\n"
    "float vkc_dropout(float x, float p, uint seed, uint idx)\n"
    "{\n"
    "    uint h = vkc_pcg(idx + vkc_pcg(seed));\n"
    "    float u = float(h >> 8u) * (1.0 / 16777216.0);\n"
    "    return u < p ? x * (1.0 / p) : 0.0;\n"
    "}\n"
    "vec4 vkc_dropout(vec4 x, vec4 p, uvec4 seed, uvec4 idx)\n"
    "{\n"
    "    return vec4(vkc_dropout(x.x, p.x, seed.x, idx.x), vkc_dropout(x.y, p.y, seed.y, idx.y),\n"
    "                vkc_dropout(x.z, p.z, seed.z, idx.z), vkc_dropout(x.w, p.w, seed.w, "
    "idx.w));\n"
    "}\n";

static void gen_op(sbuf *b, const vkc__fnode *n, int w)
{
    uint32_t a = n->arg[0], c1 = n->arg[1], c2 = n->arg[2];
    const char *t = gl_type(n->type, w);
    static const char *const cmp_sym[] = {"<", "<=", ">", ">=", "==", "!="};
    static const char *const cmp_fn[] = {"lessThan",         "lessThanEqual", "greaterThan",
                                         "greaterThanEqual", "equal",         "notEqual"};
    switch (n->op) {
    case VKC_OP_ADD:
        sb_printf(b, "v%u + v%u", a, c1);
        break;
    case VKC_OP_SUB:
        sb_printf(b, "v%u - v%u", a, c1);
        break;
    case VKC_OP_MUL:
        sb_printf(b, "v%u * v%u", a, c1);
        break;
    case VKC_OP_DIV:
        sb_printf(b, "v%u / v%u", a, c1);
        break;
    case VKC_OP_MIN:
        sb_printf(b, "min(v%u, v%u)", a, c1);
        break;
    case VKC_OP_MAX:
        sb_printf(b, "max(v%u, v%u)", a, c1);
        break;
    case VKC_OP_FMA:
        if (n->type == VKC_DTYPE_F32)
            sb_printf(b, "fma(v%u, v%u, v%u)", a, c1, c2);
        else
            sb_printf(b, "v%u * v%u + v%u", a, c1, c2);
        break;
    case VKC_OP_ABS:
        if (n->type == VKC_DTYPE_U32)
            sb_printf(b, "v%u", a);
        else
            sb_printf(b, "abs(v%u)", a);
        break;
    case VKC_OP_NEG:
        if (n->type == VKC_DTYPE_U32)
            sb_printf(b, "%s(0u) - v%u", t, a);
        else
            sb_printf(b, "-v%u", a);
        break;
    case VKC_OP_SQRT:
        sb_printf(b, "sqrt(v%u)", a);
        break;
    case VKC_OP_RSQRT:
        sb_printf(b, "inversesqrt(v%u)", a);
        break;
    case VKC_OP_EXP:
        sb_printf(b, "exp(v%u)", a);
        break;
    case VKC_OP_LOG:
        sb_printf(b, "log(v%u)", a);
        break;
    case VKC_OP_TANH:
        sb_printf(b, "vkc_tanh(v%u)", a);
        break;
    case VKC_OP_SIGMOID:
        sb_printf(b, "vkc_sigmoid(v%u)", a);
        break;
    case VKC_OP_GELU:
        sb_printf(b, "vkc_gelu(v%u)", a);
        break;
    case VKC_OP_RELU:
        sb_printf(b, "max(v%u, %s(0))", a, t);
        break;
    case VKC_OP_CLAMP:
        sb_printf(b, "clamp(v%u, v%u, v%u)", a, c1, c2);
        break;
    case VKC_OP_LT:
    case VKC_OP_LE:
    case VKC_OP_GT:
    case VKC_OP_GE:
    case VKC_OP_EQ:
    case VKC_OP_NE:
        if (w == 4)
            sb_printf(b, "%s(v%u, v%u)", cmp_fn[n->op - VKC_OP_LT], a, c1);
        else
            sb_printf(b, "v%u %s v%u", a, cmp_sym[n->op - VKC_OP_LT], c1);
        break;
    case VKC_OP_SELECT:
        if (w == 4)
            sb_printf(b, "mix(v%u, v%u, v%u)", c2, c1, a);
        else
            sb_printf(b, "v%u ? v%u : v%u", a, c1, c2);
        break;
    case VKC_OP_DROPOUT:
        sb_printf(b, "vkc_dropout(v%u, v%u, v%u, vkc_idx)", a, c1, c2);
        break;
    case VKC__FUSE_OP_CAST:
        sb_printf(b, "%s(v%u)", t, a);
        break;
    default:
        sb_printf(b, "/* bad op */ v%u", a);
        break;
    }
}

static bool graph_uses_op(const vkc__fgraph *g, uint32_t op)
{
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == VKC__FN_OP && g->nodes[k].op == op)
            return true;
    return false;
}

char *vkc__fuse_glsl(const vkc__fgraph *g, int w, const char *name)
{
    sbuf b = {0};
    bool f16 = false;
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == VKC__FN_INPUT && g->nodes[k].stype == VKC_DTYPE_F16)
            f16 = true;
    for (uint32_t o = 0; o < g->out_count; o++)
        if (g->outs[o].stype == VKC_DTYPE_F16)
            f16 = true;
    bool red = g->reduce_node >= 0;

    sb_printf(&b,
              "#version 450\n// vkc fused kernel \"%s\": %u inputs, %u scalars, %u ops, %u "
              "outputs%s, %s\n",
              name, g->inputs, g->scalars, g->ops, g->out_count, red ? ", reduction" : "",
              w == 4 ? "vec4" : "scalar");
    if (f16)
        sb_printf(&b, "#extension GL_EXT_shader_16bit_storage : require\n"
                      "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n");
    if (red)
        sb_printf(&b, "#extension GL_KHR_shader_subgroup_basic : require\n"
                      "#extension GL_KHR_shader_subgroup_arithmetic : require\n");
    sb_printf(&b, "layout(local_size_x_id = 0) in;\n");
    uint32_t binding = 0;
    for (uint32_t k = 0; k < g->count; k++) {
        const vkc__fnode *n = &g->nodes[k];
        if (n->kind != VKC__FN_INPUT)
            continue;
        /* a broadcast input is a fixed-size array: the sequence checks its
         * size against the block, not against the element count */
        char plen[16];
        snprintf(plen, sizeof plen, "%u", n->period);
        sb_printf(&b,
                  "layout(std430, set = 0, binding = %u) readonly buffer In%u { %s d[%s]; } "
                  "in%u;\n",
                  binding++, n->index, gl_storage_type(n->stype, w), n->period ? plen : "",
                  n->index);
    }
    for (uint32_t o = 0; o < g->out_count; o++)
        sb_printf(&b,
                  "layout(std430, set = 0, binding = %u) writeonly buffer Out%u { %s d[]; } "
                  "out%u;\n",
                  binding++, o, gl_storage_type(g->outs[o].stype, w), o);
    if (red)
        sb_printf(&b,
                  "layout(std430, set = 0, binding = %u) buffer Red { uint d; } red;\n"
                  "shared float vkc_part[256];\n",
                  binding++);
    sb_printf(&b, "layout(push_constant) uniform Push {\n    uint n;\n");
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == VKC__FN_SCALAR)
            sb_printf(&b, "    %s s%u;\n", gl_type(g->nodes[k].type, 1), g->nodes[k].index);
    sb_printf(&b, "} pc;\n");
    bool dropout = graph_uses_op(g, VKC_OP_DROPOUT);
    if (dropout || graph_uses_op(g, VKC_OP_TANH) || graph_uses_op(g, VKC_OP_SIGMOID) ||
        graph_uses_op(g, VKC_OP_GELU))
        sb_printf(&b, "%s", helpers);

    static const char *const ident[] = {[VKC_REDUCE_SUM] = "0.0",
                                        [VKC_REDUCE_MEAN] = "0.0",
                                        [VKC_REDUCE_MIN] = "uintBitsToFloat(0x7f800000u)",
                                        [VKC_REDUCE_MAX] = "uintBitsToFloat(0xff800000u)"};
    sb_printf(&b, "void main()\n{\n    uint n = pc.n;\n"
                  "    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n");
    if (red)
        sb_printf(&b, "    float acc = %s;\n", ident[g->reduce_op]);
    sb_printf(&b, "    for (uint i = gl_GlobalInvocationID.x; i < n;) {\n");
    if (dropout)
        sb_printf(&b, "        %s vkc_idx = %s;\n", w == 4 ? "uvec4" : "uint",
                  w == 4 ? "uvec4(i * 4u) + uvec4(0u, 1u, 2u, 3u)" : "i");
    for (uint32_t k = 0; k < g->count; k++) {
        const vkc__fnode *n = &g->nodes[k];
        /* precise: no contraction, so fused and unfused runs round alike */
        sb_printf(&b, "        %s%s v%u = ", n->type == VKC_DTYPE_F32 ? "precise " : "",
                  gl_type(n->type, w), k);
        switch (n->kind) {
        case VKC__FN_INPUT: {
            char idx[32];
            if (n->period)
                snprintf(idx, sizeof idx, "i %% %uu", n->period);
            else
                snprintf(idx, sizeof idx, "i");
            if (n->stype == VKC_DTYPE_F16)
                sb_printf(&b, "float(in%u.d[%s])", n->index, idx);
            else if (n->stype == VKC_DTYPE_BOOL)
                sb_printf(&b, "%s(in%u.d[%s])", gl_type(VKC_DTYPE_BOOL, w), n->index, idx);
            else
                sb_printf(&b, "in%u.d[%s]", n->index, idx);
            break;
        }
        case VKC__FN_SCALAR:
            if (w == 4)
                sb_printf(&b, "%s(pc.s%u)", gl_type(n->type, w), n->index);
            else
                sb_printf(&b, "pc.s%u", n->index);
            break;
        case VKC__FN_CONST:
            gen_constant(&b, n, w);
            break;
        default:
            gen_op(&b, n, w);
            break;
        }
        sb_printf(&b, ";\n");
    }
    for (uint32_t o = 0; o < g->out_count; o++) {
        const vkc__foutput *out = &g->outs[o];
        uint8_t vt = g->nodes[out->node].type;
        if (out->stype == VKC_DTYPE_F16)
            sb_printf(&b, "        out%u.d[i] = float16_t(v%u);\n", o, out->node);
        else if (vt == VKC_DTYPE_BOOL)
            sb_printf(&b, "        out%u.d[i] = %s(v%u);\n", o, gl_storage_type(VKC_DTYPE_U32, w),
                      out->node);
        else
            sb_printf(&b, "        out%u.d[i] = v%u;\n", o, out->node);
    }
    if (red) {
        uint32_t r = (uint32_t)g->reduce_node;
        const char *comb = g->reduce_op == VKC_REDUCE_MIN   ? "min"
                           : g->reduce_op == VKC_REDUCE_MAX ? "max"
                                                            : "";
        if (w == 4) {
            if (*comb)
                sb_printf(&b, "        acc = %s(acc, %s(%s(v%u.x, v%u.y), %s(v%u.z, v%u.w)));\n",
                          comb, comb, comb, r, r, comb, r, r);
            else
                sb_printf(&b, "        acc += (v%u.x + v%u.y) + (v%u.z + v%u.w);\n", r, r, r, r);
        } else {
            if (*comb)
                sb_printf(&b, "        acc = %s(acc, v%u);\n", comb, r);
            else
                sb_printf(&b, "        acc += v%u;\n", r);
        }
    }
    sb_printf(&b,
              "        if (n - i <= stride)\n            break;\n        i += stride;\n    }\n");
    if (red) {
        const char *sg = g->reduce_op == VKC_REDUCE_MIN   ? "subgroupMin"
                         : g->reduce_op == VKC_REDUCE_MAX ? "subgroupMax"
                                                          : "subgroupAdd";
        const char *comb = g->reduce_op == VKC_REDUCE_MIN   ? "min(t, vkc_part[k])"
                           : g->reduce_op == VKC_REDUCE_MAX ? "max(t, vkc_part[k])"
                                                            : "t + vkc_part[k]";
        const char *fin = g->reduce_op == VKC_REDUCE_MIN   ? "min(uintBitsToFloat(old), t)"
                          : g->reduce_op == VKC_REDUCE_MAX ? "max(uintBitsToFloat(old), t)"
                                                           : "uintBitsToFloat(old) + t";
        sb_printf(&b,
                  "    float r = %s(acc);\n"
                  "    if (subgroupElect())\n"
                  "        vkc_part[gl_SubgroupID] = r;\n"
                  "    memoryBarrierShared();\n"
                  "    barrier();\n"
                  "    if (gl_LocalInvocationIndex == 0u) {\n"
                  "        float t = vkc_part[0];\n"
                  "        for (uint k = 1u; k < gl_NumSubgroups; k++)\n"
                  "            t = %s;\n",
                  sg, comb);
        if (g->reduce_op == VKC_REDUCE_MEAN)
            sb_printf(&b, "        t = t / (float(n) * %s);\n", w == 4 ? "4.0" : "1.0");
        sb_printf(&b,
                  "        uint old = red.d;\n"
                  "        for (;;) {\n"
                  "            uint want = floatBitsToUint(%s);\n"
                  "            uint seen = atomicCompSwap(red.d, old, want);\n"
                  "            if (seen == old)\n"
                  "                break;\n"
                  "            old = seen;\n"
                  "        }\n"
                  "    }\n",
                  fin);
    }
    sb_printf(&b, "}\n");
    if (b.oom) {
        vkc__free(b.p);
        return NULL;
    }
    return b.p;
}

bool vkc__fuse_vectorizable(const vkc__fgraph *g)
{
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == VKC__FN_INPUT &&
            (g->nodes[k].stype == VKC_DTYPE_F16 || g->nodes[k].period))
            return false;
    for (uint32_t o = 0; o < g->out_count; o++)
        if (g->outs[o].stype == VKC_DTYPE_F16)
            return false;
    return true;
}
