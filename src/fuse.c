/* Fusion module: graphs of elementwise operations -> one grid-strided GLSL
 * compute shader, compiled at run time and cached by structure; the same
 * graph run unfused (one dispatch per operation) as the oracle. */
#include "vkc_internal.h"

#include <math.h>
#include <stdio.h>

#define VKC_MAGIC_FUSE 0x564b4346u /* "VKCF" */

/* Ids: (tag << 20) | (node index + 1). The tag tells graphs apart so an id
 * of another graph is caught as foreign rather than read as ours. */
#define FUSE_ID_BITS 20u
#define FUSE_MAX_NODES ((1u << FUSE_ID_BITS) - 2u)
#define FUSE_OP_CAST ((uint8_t)VKC_OP_COUNT_)

enum { N_INPUT = 1, N_SCALAR, N_CONST, N_OP };

typedef struct fnode {
    uint8_t kind;
    uint8_t op;     /* vkc_fuse_opcode or FUSE_OP_CAST */
    uint8_t type;   /* value type: F32, I32, U32, BOOL */
    uint8_t stype;  /* inputs: storage type (F16 loads as F32; BOOL = uint 0/1) */
    uint32_t index; /* input / scalar index */
    uint32_t period;
    uint32_t arg[3]; /* node indices */
    uint32_t narg;
    uint32_t bits; /* constants */
} fnode;

typedef struct foutput {
    uint32_t node;
    uint8_t stype; /* storage type */
} foutput;

typedef struct fgraph {
    fnode *nodes;
    uint32_t count, cap;
    foutput *outs;
    uint32_t out_count, out_cap;
    uint32_t inputs, scalars, constants, ops;
    int64_t reduce_node; /* -1: none */
    uint8_t reduce_op;
} fgraph;

typedef struct fcache_entry {
    struct fcache_entry *next;
    uint64_t hash;
    char *source;
    vkc_kernel *kernel;
} fcache_entry;

typedef struct fuse_state {
    pthread_mutex_t lock;
    fcache_entry *cache;
    vkc__node fuses;
    uint32_t next_tag;
} fuse_state;

struct vkc_fuse {
    uint32_t magic;
    vkc_context *ctx;
    vkc__node node;
    uint32_t tag;
    fgraph g;
    vkc_result error; /* first graph-building error, latched */
    char name[64];
    vkc_toggle vectorize;
    uint32_t workgroup_size;
    bool built;
    bool vectorizable;
    char *source[2];
    vkc_kernel *kernel[2];
    vkc_buffer **temps;
    uint32_t temp_count, temp_cap;
    uint64_t builds, compiles, unfused_kernels;
    uint64_t hash;
    char *debug_extra; /* test hook: appended to the generated sources */
};

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 1099511628211ull;
    }
    return h;
}

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

static bool is_number(uint8_t t)
{
    return t == VKC_DTYPE_F32 || t == VKC_DTYPE_I32 || t == VKC_DTYPE_U32;
}

static const char *dtype_name(uint8_t t)
{
    switch (t) {
    case VKC_DTYPE_F32:
        return "f32";
    case VKC_DTYPE_I32:
        return "i32";
    case VKC_DTYPE_U32:
        return "u32";
    case VKC_DTYPE_F16:
        return "f16";
    case VKC_DTYPE_BOOL:
        return "bool";
    default:
        return "?";
    }
}

static const char *const op_names[] = {
    [VKC_OP_NONE] = "none",       [VKC_OP_ADD] = "add",       [VKC_OP_SUB] = "sub",
    [VKC_OP_MUL] = "mul",         [VKC_OP_DIV] = "div",       [VKC_OP_MIN] = "min",
    [VKC_OP_MAX] = "max",         [VKC_OP_FMA] = "fma",       [VKC_OP_ABS] = "abs",
    [VKC_OP_NEG] = "neg",         [VKC_OP_SQRT] = "sqrt",     [VKC_OP_RSQRT] = "rsqrt",
    [VKC_OP_EXP] = "exp",         [VKC_OP_LOG] = "log",       [VKC_OP_TANH] = "tanh",
    [VKC_OP_SIGMOID] = "sigmoid", [VKC_OP_RELU] = "relu",     [VKC_OP_GELU] = "gelu",
    [VKC_OP_CLAMP] = "clamp",     [VKC_OP_LT] = "lt",         [VKC_OP_LE] = "le",
    [VKC_OP_GT] = "gt",           [VKC_OP_GE] = "ge",         [VKC_OP_EQ] = "eq",
    [VKC_OP_NE] = "ne",           [VKC_OP_SELECT] = "select", [VKC_OP_DROPOUT] = "dropout",
    [VKC_OP_COUNT_] = "cast",
};

static uint32_t op_arity(uint32_t op)
{
    switch (op) {
    case VKC_OP_ADD:
    case VKC_OP_SUB:
    case VKC_OP_MUL:
    case VKC_OP_DIV:
    case VKC_OP_MIN:
    case VKC_OP_MAX:
    case VKC_OP_LT:
    case VKC_OP_LE:
    case VKC_OP_GT:
    case VKC_OP_GE:
    case VKC_OP_EQ:
    case VKC_OP_NE:
        return 2;
    case VKC_OP_FMA:
    case VKC_OP_CLAMP:
    case VKC_OP_SELECT:
    case VKC_OP_DROPOUT:
        return 3;
    case VKC_OP_ABS:
    case VKC_OP_NEG:
    case VKC_OP_SQRT:
    case VKC_OP_RSQRT:
    case VKC_OP_EXP:
    case VKC_OP_LOG:
    case VKC_OP_TANH:
    case VKC_OP_SIGMOID:
    case VKC_OP_RELU:
    case VKC_OP_GELU:
        return 1;
    default:
        return 0;
    }
}

static uint32_t storage_size(uint8_t stype)
{
    return stype == VKC_DTYPE_F16 ? 2u : 4u;
}

/* ---- graph storage ---------------------------------------------------------- */

static void graph_free(fgraph *g)
{
    vkc__free(g->nodes);
    vkc__free(g->outs);
    memset(g, 0, sizeof *g);
    g->reduce_node = -1;
}

static bool graph_push_node(fgraph *g, const fnode *n)
{
    if (g->count == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 16;
        fnode *p = vkc__realloc(g->nodes, cap * sizeof *p);
        if (!p)
            return false;
        g->nodes = p;
        g->cap = cap;
    }
    g->nodes[g->count++] = *n;
    return true;
}

static bool graph_push_out(fgraph *g, uint32_t node, uint8_t stype)
{
    if (g->out_count == g->out_cap) {
        uint32_t cap = g->out_cap ? g->out_cap * 2 : 4;
        foutput *p = vkc__realloc(g->outs, cap * sizeof *p);
        if (!p)
            return false;
        g->outs = p;
        g->out_cap = cap;
    }
    g->outs[g->out_count++] = (foutput){node, stype};
    return true;
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

static void gen_constant(sbuf *b, const fnode *n, int w)
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

static void gen_op(sbuf *b, const fnode *n, int w)
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
    case FUSE_OP_CAST:
        sb_printf(b, "%s(v%u)", t, a);
        break;
    default:
        sb_printf(b, "/* bad op */ v%u", a);
        break;
    }
}

static bool graph_uses_op(const fgraph *g, uint32_t op)
{
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == N_OP && g->nodes[k].op == op)
            return true;
    return false;
}

/* Generate the shader of graph g at width w. Bindings: inputs in order, then
 * outputs, then the reduction result. */
static char *generate(const fgraph *g, int w, const char *name)
{
    sbuf b = {0};
    bool f16 = false;
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == N_INPUT && g->nodes[k].stype == VKC_DTYPE_F16)
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
        const fnode *n = &g->nodes[k];
        if (n->kind != N_INPUT)
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
        if (g->nodes[k].kind == N_SCALAR)
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
        const fnode *n = &g->nodes[k];
        /* precise: no contraction, so fused and unfused runs round alike */
        sb_printf(&b, "        %s%s v%u = ", n->type == VKC_DTYPE_F32 ? "precise " : "",
                  gl_type(n->type, w), k);
        switch (n->kind) {
        case N_INPUT: {
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
        case N_SCALAR:
            if (w == 4)
                sb_printf(&b, "%s(pc.s%u)", gl_type(n->type, w), n->index);
            else
                sb_printf(&b, "pc.s%u", n->index);
            break;
        case N_CONST:
            gen_constant(&b, n, w);
            break;
        default:
            gen_op(&b, n, w);
            break;
        }
        sb_printf(&b, ";\n");
    }
    for (uint32_t o = 0; o < g->out_count; o++) {
        const foutput *out = &g->outs[o];
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

/* ---- context state and cache ------------------------------------------------ */

static fuse_state *state_get(vkc_context *ctx)
{
    pthread_mutex_lock(&ctx->objects_lock);
    fuse_state *s = ctx->fuse_state;
    if (!s) {
        s = vkc__calloc(1, sizeof *s);
        if (s) {
            pthread_mutex_init(&s->lock, NULL);
            vkc__list_init(&s->fuses);
            ctx->fuse_state = s;
        }
    }
    pthread_mutex_unlock(&ctx->objects_lock);
    return s;
}

/* The kernel of `source`, from the context's cache or compiled now. */
static vkc_result cache_get(vkc_fuse *f, const char *source, const char *name, bool fused,
                            vkc_kernel **out)
{
    vkc_context *ctx = f->ctx;
    fuse_state *s = ctx->fuse_state;
    uint64_t h = fnv1a(source);
    *out = NULL;
    pthread_mutex_lock(&s->lock);
    for (fcache_entry *e = s->cache; e; e = e->next) {
        if (e->hash == h && strcmp(e->source, source) == 0) {
            *out = e->kernel;
            pthread_mutex_unlock(&s->lock);
            f->builds += fused;
            return VKC_SUCCESS;
        }
    }
    fcache_entry *e = vkc__calloc(1, sizeof *e);
    char *copy = vkc__strdup(source);
    if (!e || !copy) {
        pthread_mutex_unlock(&s->lock);
        vkc__free(e);
        vkc__free(copy);
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion cache entry");
    }
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(
        ctx, &(vkc_glsl_desc){.source = source, .name = name, .workgroup_size = f->workgroup_size},
        &k);
    if (r < 0) {
        pthread_mutex_unlock(&s->lock);
        vkc__free(e);
        vkc__free(copy);
        if (r == VKC_ERROR_COMPILE)
            return VKC_FAIL(ctx, VKC_ERROR_COMPILE,
                            "fusion graph \"%s\": the generated GLSL does not compile: %s", name,
                            vkc_context_last_error(ctx));
        return r;
    }
    e->hash = h;
    e->source = copy;
    e->kernel = k;
    e->next = s->cache;
    s->cache = e;
    pthread_mutex_unlock(&s->lock);
    f->builds += fused;
    f->compiles += fused;
    *out = k;
    return VKC_SUCCESS;
}

/* ---- public: graph building -------------------------------------------------- */

#define CHECK_FUSE(f)                                                                              \
    do {                                                                                           \
        if (VKC_UNLIKELY(!(f) || (f)->magic != VKC_MAGIC_FUSE))                                    \
            return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_fuse handle");            \
    } while (0)

static vkc_result fuse_error(vkc_fuse *f, vkc_result r)
{
    if (f->error == VKC_SUCCESS)
        f->error = r;
    return r;
}

#define GRAPH_FAIL(f, ...) fuse_error((f), VKC_FAIL((f)->ctx, VKC_ERROR_INVALID_GRAPH, __VA_ARGS__))

vkc_result vkc_fuse_create(vkc_context *ctx, const vkc_fuse_desc *desc, vkc_fuse **out)
{
    VKC_RETURN_IF(!out, ctx && ctx->magic == VKC_MAGIC_CONTEXT ? ctx : NULL,
                  VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_create: out is NULL");
    *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    vkc_fuse_desc d = desc ? *desc : (vkc_fuse_desc){0};
    fuse_state *s = state_get(ctx);
    VKC_RETURN_IF(!s, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "vkc_fuse_create: fusion state");
    vkc_fuse *f = vkc__calloc(1, sizeof *f);
    VKC_RETURN_IF(!f, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "vkc_fuse_create");
    f->magic = VKC_MAGIC_FUSE;
    f->ctx = ctx;
    f->g.reduce_node = -1;
    f->vectorize = d.vectorize;
    f->workgroup_size = d.workgroup_size;
    snprintf(f->name, sizeof f->name, "%s", d.name ? d.name : "vkc_fuse");
    /* the name goes into a GLSL comment: keep it to one printable line */
    for (char *c = f->name; *c; c++)
        if (*c < 0x20 || *c > 0x7e || *c == '\\')
            *c = '_';
    pthread_mutex_lock(&s->lock);
    f->tag = (++s->next_tag) & 0xfffu;
    if (f->tag == 0)
        f->tag = s->next_tag = 1;
    vkc__list_push(&s->fuses, &f->node);
    pthread_mutex_unlock(&s->lock);
    *out = f;
    return VKC_SUCCESS;
}

static void fuse_invalidate(vkc_fuse *f)
{
    f->built = false;
    for (int w = 0; w < 2; w++) {
        vkc__free(f->source[w]);
        f->source[w] = NULL;
        f->kernel[w] = NULL; /* owned by the cache */
    }
}

static void fuse_free(vkc_fuse *f)
{
    for (uint32_t i = 0; i < f->temp_count; i++)
        vkc_buffer_destroy(f->temps[i]);
    vkc__free(f->temps);
    fuse_invalidate(f);
    graph_free(&f->g);
    vkc__free(f->debug_extra);
    f->magic = 0;
    vkc__free(f);
}

void vkc_fuse_destroy(vkc_fuse *f)
{
    if (!f || f->magic != VKC_MAGIC_FUSE)
        return;
    fuse_state *s = f->ctx->fuse_state;
    pthread_mutex_lock(&s->lock);
    vkc__list_remove(&f->node);
    pthread_mutex_unlock(&s->lock);
    fuse_free(f);
}

void vkc__fuse_finish(vkc_context *ctx)
{
    fuse_state *s = ctx->fuse_state;
    if (!s)
        return;
    while (s->fuses.next != &s->fuses) {
        vkc__node *n = s->fuses.next;
        vkc__list_remove(n);
        fuse_free((vkc_fuse *)((char *)n - offsetof(vkc_fuse, node)));
    }
    while (s->cache) {
        fcache_entry *e = s->cache;
        s->cache = e->next;
        vkc_kernel_destroy(e->kernel);
        vkc__free(e->source);
        vkc__free(e);
    }
    pthread_mutex_destroy(&s->lock);
    vkc__free(s);
    ctx->fuse_state = NULL;
}

/* Resolve a value id of this graph; NULL (and the error latched) if it is
 * not one. */
static const fnode *resolve(vkc_fuse *f, vkc_value v, const char *what, uint32_t *out_index)
{
    uint32_t tag = v >> FUSE_ID_BITS, idx = v & ((1u << FUSE_ID_BITS) - 1u);
    if (v == 0 || tag != f->tag || idx == 0 || idx > f->g.count) {
        GRAPH_FAIL(f,
                   "fusion graph \"%s\": %s: value id 0x%x is not a value of this graph "
                   "(dangling, foreign, or not created yet; ids can only name earlier values, "
                   "so a graph cannot have a cycle)",
                   f->name, what, v);
        return NULL;
    }
    *out_index = idx - 1;
    return &f->g.nodes[idx - 1];
}

static vkc_result add_node(vkc_fuse *f, const fnode *n, vkc_value *out)
{
    if (f->g.count >= FUSE_MAX_NODES)
        return fuse_error(f, VKC_FAIL(f->ctx, VKC_ERROR_LIMIT, "fusion graph: too many values"));
    if (!graph_push_node(&f->g, n))
        return fuse_error(f, VKC_FAIL(f->ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion graph node"));
    fuse_invalidate(f);
    *out = (f->tag << FUSE_ID_BITS) | f->g.count;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_input_ex(vkc_fuse *f, const vkc_fuse_input_desc *desc, vkc_value *out)
{
    CHECK_FUSE(f);
    VKC_RETURN_IF(!desc || !out, f->ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_fuse_input: desc or out is NULL");
    *out = 0;
    uint8_t t = desc->type ? (uint8_t)desc->type : VKC_DTYPE_F32;
    if (!(is_number(t) || t == VKC_DTYPE_F16))
        return GRAPH_FAIL(f, "fusion graph \"%s\": an input cannot have type %s", f->name,
                          dtype_name(t));
    if (t == VKC_DTYPE_F16 && !f->ctx->info.storage_buffer_16bit)
        return fuse_error(f, VKC_FAIL(f->ctx, VKC_ERROR_UNSUPPORTED,
                                      "fusion graph \"%s\": F16 buffers need "
                                      "storageBuffer16BitAccess, which the device lacks",
                                      f->name));
    VKC_RETURN_IF(f->g.inputs + f->g.out_count + 1 > VKC_MAX_BINDINGS - 1, f->ctx,
                  fuse_error(f, VKC_ERROR_LIMIT), "fusion graph: too many buffers (max %d)",
                  VKC_MAX_BINDINGS - 1);
    fnode n = {.kind = N_INPUT,
               .type = t == VKC_DTYPE_F16 ? VKC_DTYPE_F32 : t,
               .stype = t,
               .index = f->g.inputs,
               .period = desc->period};
    VKC_FORWARD(add_node(f, &n, out));
    f->g.inputs++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_input(vkc_fuse *f, vkc_dtype type, vkc_value *out)
{
    return vkc_fuse_input_ex(f, &(vkc_fuse_input_desc){.type = type}, out);
}

vkc_result vkc_fuse_scalar(vkc_fuse *f, vkc_dtype type, vkc_value *out)
{
    CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_scalar: out is NULL");
    *out = 0;
    uint8_t t = type ? (uint8_t)type : VKC_DTYPE_F32;
    if (!is_number(t))
        return GRAPH_FAIL(f, "fusion graph \"%s\": a scalar must be f32, i32 or u32, not %s",
                          f->name, dtype_name(t));
    VKC_RETURN_IF(f->g.scalars >= VKC_FUSE_MAX_SCALARS, f->ctx, fuse_error(f, VKC_ERROR_LIMIT),
                  "fusion graph: more than %d scalars", VKC_FUSE_MAX_SCALARS);
    fnode n = {.kind = N_SCALAR, .type = t, .stype = t, .index = f->g.scalars};
    VKC_FORWARD(add_node(f, &n, out));
    f->g.scalars++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_constant(vkc_fuse *f, vkc_dtype type, double value, vkc_value *out)
{
    CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_constant: out is NULL");
    *out = 0;
    uint8_t t = type ? (uint8_t)type : VKC_DTYPE_F32;
    fnode n = {.kind = N_CONST, .type = t, .stype = t};
    switch (t) {
    case VKC_DTYPE_F32: {
        float x = (float)value;
        memcpy(&n.bits, &x, 4);
        break;
    }
    case VKC_DTYPE_I32:
        if (!(value >= -2147483648.0 && value <= 2147483647.0))
            return GRAPH_FAIL(f, "fusion graph \"%s\": constant %g out of range for i32", f->name,
                              value);
        n.bits = (uint32_t)(int32_t)value;
        break;
    case VKC_DTYPE_U32:
        if (!(value >= 0.0 && value <= 4294967295.0))
            return GRAPH_FAIL(f, "fusion graph \"%s\": constant %g out of range for u32", f->name,
                              value);
        n.bits = (uint32_t)value;
        break;
    case VKC_DTYPE_BOOL:
        n.bits = value != 0.0;
        break;
    default:
        return GRAPH_FAIL(f, "fusion graph \"%s\": a constant cannot have type %s", f->name,
                          dtype_name(t));
    }
    VKC_FORWARD(add_node(f, &n, out));
    f->g.constants++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_op(vkc_fuse *f, vkc_fuse_opcode op, const vkc_value *args, uint32_t arg_count,
                       vkc_value *out)
{
    CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_op: out is NULL");
    /* args may point at *out (x = op(x)): read them before clearing it */
    vkc_value argv[3] = {0};
    for (uint32_t i = 0; args && i < arg_count && i < 3; i++)
        argv[i] = args[i];
    *out = 0;
    uint32_t ar = op_arity((uint32_t)op);
    if (ar == 0)
        return GRAPH_FAIL(f, "fusion graph \"%s\": unknown operation %d", f->name, (int)op);
    const char *on = op_names[op];
    if (arg_count != ar || !args)
        return GRAPH_FAIL(f, "fusion graph \"%s\": %s takes %u operands, got %u", f->name, on, ar,
                          args ? arg_count : 0);
    fnode n = {.kind = N_OP, .op = (uint8_t)op, .narg = ar};
    uint8_t t[3] = {0};
    for (uint32_t i = 0; i < ar; i++) {
        const fnode *a = resolve(f, argv[i], on, &n.arg[i]);
        if (!a)
            return VKC_ERROR_INVALID_GRAPH;
        t[i] = a->type;
    }
    switch (op) {
    case VKC_OP_ADD:
    case VKC_OP_SUB:
    case VKC_OP_MUL:
    case VKC_OP_DIV:
    case VKC_OP_MIN:
    case VKC_OP_MAX:
    case VKC_OP_FMA:
    case VKC_OP_CLAMP:
    case VKC_OP_LT:
    case VKC_OP_LE:
    case VKC_OP_GT:
    case VKC_OP_GE:
        for (uint32_t i = 0; i < ar; i++)
            if (!is_number(t[i]) || t[i] != t[0])
                return GRAPH_FAIL(f,
                                  "fusion graph \"%s\": %s needs operands of one number type, "
                                  "got %s and %s (cast explicitly)",
                                  f->name, on, dtype_name(t[0]), dtype_name(t[i]));
        n.type = op >= VKC_OP_LT ? VKC_DTYPE_BOOL : t[0];
        break;
    case VKC_OP_EQ:
    case VKC_OP_NE:
        if (t[0] != t[1])
            return GRAPH_FAIL(f,
                              "fusion graph \"%s\": %s needs operands of one type, got %s and "
                              "%s (cast explicitly)",
                              f->name, on, dtype_name(t[0]), dtype_name(t[1]));
        n.type = VKC_DTYPE_BOOL;
        break;
    case VKC_OP_ABS:
    case VKC_OP_NEG:
    case VKC_OP_RELU:
        if (!is_number(t[0]))
            return GRAPH_FAIL(f, "fusion graph \"%s\": %s needs a number, got %s", f->name, on,
                              dtype_name(t[0]));
        n.type = t[0];
        break;
    case VKC_OP_SQRT:
    case VKC_OP_RSQRT:
    case VKC_OP_EXP:
    case VKC_OP_LOG:
    case VKC_OP_TANH:
    case VKC_OP_SIGMOID:
    case VKC_OP_GELU:
        if (t[0] != VKC_DTYPE_F32)
            return GRAPH_FAIL(f,
                              "fusion graph \"%s\": %s needs an f32 operand, got %s (cast "
                              "explicitly)",
                              f->name, on, dtype_name(t[0]));
        n.type = VKC_DTYPE_F32;
        break;
    case VKC_OP_SELECT:
        if (t[0] != VKC_DTYPE_BOOL || t[1] != t[2])
            return GRAPH_FAIL(f,
                              "fusion graph \"%s\": select needs a bool condition and two "
                              "operands of one type, got %s, %s, %s",
                              f->name, dtype_name(t[0]), dtype_name(t[1]), dtype_name(t[2]));
        n.type = t[1];
        break;
    case VKC_OP_DROPOUT:
        if (t[0] != VKC_DTYPE_F32 || t[1] != VKC_DTYPE_F32 || t[2] != VKC_DTYPE_U32)
            return GRAPH_FAIL(f,
                              "fusion graph \"%s\": dropout needs (f32 x, f32 keep probability, "
                              "u32 seed), got %s, %s, %s",
                              f->name, dtype_name(t[0]), dtype_name(t[1]), dtype_name(t[2]));
        n.type = VKC_DTYPE_F32;
        break;
    default:
        return GRAPH_FAIL(f, "fusion graph \"%s\": unknown operation %d", f->name, (int)op);
    }
    n.stype = n.type;
    VKC_FORWARD(add_node(f, &n, out));
    f->g.ops++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_cast(vkc_fuse *f, vkc_value value, vkc_dtype to, vkc_value *out)
{
    CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_cast: out is NULL");
    *out = 0;
    uint8_t t = to ? (uint8_t)to : VKC_DTYPE_F32;
    if (!(is_number(t) || t == VKC_DTYPE_BOOL))
        return GRAPH_FAIL(f,
                          "fusion graph \"%s\": cannot cast to %s (F16 is a storage type: "
                          "use vkc_fuse_output_as)",
                          f->name, dtype_name(t));
    fnode n = {.kind = N_OP, .op = FUSE_OP_CAST, .narg = 1, .type = t, .stype = t};
    if (!resolve(f, value, "cast", &n.arg[0]))
        return VKC_ERROR_INVALID_GRAPH;
    VKC_FORWARD(add_node(f, &n, out));
    f->g.ops++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_output_as(vkc_fuse *f, vkc_value value, vkc_dtype type, uint32_t *out_index)
{
    CHECK_FUSE(f);
    uint32_t idx;
    const fnode *n = resolve(f, value, "output", &idx);
    if (!n)
        return VKC_ERROR_INVALID_GRAPH;
    uint8_t st = type ? (uint8_t)type : n->type;
    if (st == VKC_DTYPE_F16) {
        if (n->type != VKC_DTYPE_F32)
            return GRAPH_FAIL(f, "fusion graph \"%s\": an f16 output needs an f32 value, got %s",
                              f->name, dtype_name(n->type));
        if (!f->ctx->info.storage_buffer_16bit)
            return fuse_error(f, VKC_FAIL(f->ctx, VKC_ERROR_UNSUPPORTED,
                                          "fusion graph \"%s\": F16 buffers need "
                                          "storageBuffer16BitAccess, which the device lacks",
                                          f->name));
    } else if (st != n->type) {
        return GRAPH_FAIL(f, "fusion graph \"%s\": output of type %s for a %s value (cast first)",
                          f->name, dtype_name(st), dtype_name(n->type));
    }
    VKC_RETURN_IF(f->g.inputs + f->g.out_count + 1 > VKC_MAX_BINDINGS - 1, f->ctx,
                  fuse_error(f, VKC_ERROR_LIMIT), "fusion graph: too many buffers (max %d)",
                  VKC_MAX_BINDINGS - 1);
    if (!graph_push_out(&f->g, idx, st))
        return fuse_error(f, VKC_FAIL(f->ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion output"));
    fuse_invalidate(f);
    if (out_index)
        *out_index = f->g.out_count - 1;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_output(vkc_fuse *f, vkc_value value, uint32_t *out_index)
{
    return vkc_fuse_output_as(f, value, VKC_DTYPE_DEFAULT, out_index);
}

vkc_result vkc_fuse_reduce(vkc_fuse *f, vkc_value value, vkc_reduce_op op)
{
    CHECK_FUSE(f);
    uint32_t idx;
    const fnode *n = resolve(f, value, "reduce", &idx);
    if (!n)
        return VKC_ERROR_INVALID_GRAPH;
    if (op < VKC_REDUCE_SUM || op > VKC_REDUCE_MEAN)
        return GRAPH_FAIL(f, "fusion graph \"%s\": unknown reduction %d", f->name, (int)op);
    if (n->type != VKC_DTYPE_F32)
        return GRAPH_FAIL(f, "fusion graph \"%s\": reductions take f32 values, got %s", f->name,
                          dtype_name(n->type));
    if (f->g.reduce_node >= 0)
        return GRAPH_FAIL(f, "fusion graph \"%s\": only one reduction per graph", f->name);
    f->g.reduce_node = idx;
    f->g.reduce_op = (uint8_t)op;
    fuse_invalidate(f);
    return VKC_SUCCESS;
}

/* ---- build ------------------------------------------------------------------- */

static bool graph_vectorizable(const fgraph *g)
{
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == N_INPUT &&
            (g->nodes[k].stype == VKC_DTYPE_F16 || g->nodes[k].period))
            return false;
    for (uint32_t o = 0; o < g->out_count; o++)
        if (g->outs[o].stype == VKC_DTYPE_F16)
            return false;
    return true;
}

static vkc_result fuse_generate(vkc_fuse *f)
{
    if (f->error < 0)
        return VKC_FAIL(f->ctx, VKC_ERROR_INVALID_GRAPH,
                        "fusion graph \"%s\": an earlier call building it failed (%s)", f->name,
                        vkc_result_string(f->error));
    if (f->g.out_count == 0 && f->g.reduce_node < 0)
        return VKC_FAIL(f->ctx, VKC_ERROR_INVALID_GRAPH,
                        "fusion graph \"%s\": no output and no reduction", f->name);
    f->vectorizable = f->vectorize != VKC_OFF && graph_vectorizable(&f->g);
    for (int w = 0; w < 2; w++) {
        if (f->source[w] || (w == 1 && !f->vectorizable))
            continue;
        f->source[w] = generate(&f->g, w ? 4 : 1, f->name);
        VKC_RETURN_IF(!f->source[w], f->ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
        if (f->debug_extra) {
            size_t la = strlen(f->source[w]), lb = strlen(f->debug_extra);
            char *p = vkc__realloc(f->source[w], la + lb + 1);
            VKC_RETURN_IF(!p, f->ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
            memcpy(p + la, f->debug_extra, lb + 1);
            f->source[w] = p;
        }
    }
    f->hash = fnv1a(f->source[0]);
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_build(vkc_fuse *f)
{
    CHECK_FUSE(f);
    if (f->built)
        return VKC_SUCCESS;
    VKC_FORWARD(fuse_generate(f));
    for (int w = 0; w < 2; w++) {
        if (!f->source[w])
            continue;
        char name[80];
        snprintf(name, sizeof name, "%s%s", f->name, w ? ".vec4" : "");
        VKC_FORWARD(cache_get(f, f->source[w], name, true, &f->kernel[w]));
    }
    f->built = true;
    return VKC_SUCCESS;
}

const char *vkc_fuse_source(vkc_fuse *f, bool vec4)
{
    if (!f || f->magic != VKC_MAGIC_FUSE)
        return NULL;
    if (fuse_generate(f) < 0)
        return NULL;
    if (vec4 && !f->source[1]) {
        VKC_FAIL(f->ctx, VKC_ERROR_INVALID_ARGUMENT,
                 "fusion graph \"%s\": no vec4 variant (F16 or broadcast buffers, or "
                 "vectorize off)",
                 f->name);
        return NULL;
    }
    return f->source[vec4 ? 1 : 0];
}

vkc_result vkc_fuse_info_get(const vkc_fuse *f, vkc_fuse_info *out)
{
    if (!f || f->magic != VKC_MAGIC_FUSE)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_fuse handle");
    VKC_RETURN_IF(!out, f->ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_info_get: out is NULL");
    *out = (vkc_fuse_info){
        .inputs = f->g.inputs,
        .scalars = f->g.scalars,
        .constants = f->g.constants,
        .ops = f->g.ops,
        .outputs = f->g.out_count,
        .reduce = f->g.reduce_node >= 0,
        .vectorizable = f->vectorize != VKC_OFF && graph_vectorizable(&f->g),
        .builds = f->builds,
        .compiles = f->compiles,
        .unfused_kernels = f->unfused_kernels,
        .structure_hash = f->source[0] ? fnv1a(f->source[0]) : 0,
    };
    return VKC_SUCCESS;
}

/* ---- recording ---------------------------------------------------------------- */

typedef struct range {
    vkc_buffer *buf;
    uint64_t lo, hi;
} range;

static bool overlap(range a, range b)
{
    return a.buf == b.buf && a.lo < b.hi && b.lo < a.hi;
}

/* Check the args against the graph; pick the width. */
static vkc_result check_args(vkc_fuse *f, const vkc_fuse_args *a, int *out_w)
{
    vkc_context *ctx = f->ctx;
    const fgraph *g = &f->g;
    VKC_RETURN_IF(!a, ctx, VKC_ERROR_INVALID_ARGUMENT, "fusion record: args is NULL");
    VKC_RETURN_IF(a->count == 0 || a->count > UINT32_MAX, ctx, VKC_ERROR_LIMIT,
                  "fusion record \"%s\": count %llu outside 1..2^32-1", f->name,
                  (unsigned long long)a->count);
    VKC_RETURN_IF(a->input_count != g->inputs || (g->inputs && !a->inputs), ctx, VKC_ERROR_MISMATCH,
                  "fusion record \"%s\": %u inputs given, the graph has %u", f->name,
                  a->input_count, g->inputs);
    VKC_RETURN_IF(a->output_count != g->out_count || (g->out_count && !a->outputs), ctx,
                  VKC_ERROR_MISMATCH, "fusion record \"%s\": %u outputs given, the graph has %u",
                  f->name, a->output_count, g->out_count);
    VKC_RETURN_IF(a->scalar_count != g->scalars || (g->scalars && !a->scalars), ctx,
                  VKC_ERROR_MISMATCH, "fusion record \"%s\": %u scalars given, the graph has %u",
                  f->name, a->scalar_count, g->scalars);
    VKC_RETURN_IF((g->reduce_node >= 0) != (a->reduce.buffer != NULL), ctx, VKC_ERROR_MISMATCH,
                  "fusion record \"%s\": %s", f->name,
                  g->reduce_node >= 0 ? "the graph has a reduction: args.reduce is needed"
                                      : "args.reduce given but the graph has no reduction");
    bool vec = f->vectorizable && a->count % 4 == 0;
    uint32_t nr = g->inputs + g->out_count + 1;
    range *rs = vkc__calloc(nr, sizeof *rs);
    VKC_RETURN_IF(!rs, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion record");
    uint32_t ri = 0;
    vkc_result r = VKC_SUCCESS;
    for (uint32_t k = 0; k < g->count && r == VKC_SUCCESS; k++) {
        const fnode *n = &g->nodes[k];
        if (n->kind != N_INPUT)
            continue;
        const vkc_arg *arg = &a->inputs[n->index];
        uint64_t elems = n->period ? n->period : a->count;
        uint64_t need = elems * storage_size(n->stype);
        if (!arg->buffer || arg->buffer->magic != VKC_MAGIC_BUFFER) {
            r = VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE,
                         "fusion record \"%s\": input %u: bad buffer", f->name, n->index);
            break;
        }
        uint64_t have =
            arg->size ? arg->size
                      : (arg->offset < arg->buffer->size ? arg->buffer->size - arg->offset : 0);
        if (have < need || arg->offset + have > arg->buffer->size) {
            r = VKC_FAIL(ctx, VKC_ERROR_MISMATCH,
                         "fusion record \"%s\": input %u holds %llu bytes at offset %llu, %llu "
                         "needed",
                         f->name, n->index, (unsigned long long)have,
                         (unsigned long long)arg->offset, (unsigned long long)need);
            break;
        }
        if (arg->offset % 16)
            vec = false;
        rs[n->index] = (range){arg->buffer, arg->offset, arg->offset + need};
        ri++;
    }
    for (uint32_t o = 0; o < g->out_count + (a->reduce.buffer ? 1u : 0u) && r == VKC_SUCCESS; o++) {
        bool isred = o == g->out_count;
        const vkc_arg *arg = isred ? &a->reduce : &a->outputs[o];
        uint64_t need = isred ? 4 : a->count * storage_size(g->outs[o].stype);
        if (!arg->buffer || arg->buffer->magic != VKC_MAGIC_BUFFER) {
            r = VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE, "fusion record \"%s\": %s: bad buffer",
                         f->name, isred ? "reduce" : "output");
            break;
        }
        uint64_t have =
            arg->size ? arg->size
                      : (arg->offset < arg->buffer->size ? arg->buffer->size - arg->offset : 0);
        if (have < need || arg->offset + have > arg->buffer->size) {
            r = VKC_FAIL(ctx, VKC_ERROR_MISMATCH,
                         "fusion record \"%s\": %s %u holds %llu bytes, %llu needed", f->name,
                         isred ? "reduce" : "output", o, (unsigned long long)have,
                         (unsigned long long)need);
            break;
        }
        if (!isred && arg->offset % 16)
            vec = false;
        range me = {arg->buffer, arg->offset, arg->offset + need};
        /* outputs against inputs: only an exact in-place alias */
        for (uint32_t k = 0; k < g->count && r == VKC_SUCCESS; k++) {
            const fnode *n = &g->nodes[k];
            if (n->kind != N_INPUT || !overlap(me, rs[n->index]))
                continue;
            bool exact = !isred && !n->period && rs[n->index].lo == me.lo &&
                         rs[n->index].hi == me.hi && storage_size(n->stype) == 4 &&
                         storage_size(g->outs[o].stype) == 4;
            if (!exact)
                r = VKC_FAIL(ctx, VKC_ERROR_INVALID_ARGUMENT,
                             "fusion record \"%s\": %s %u overlaps input %u; an output may "
                             "alias an input only exactly (same buffer, offset and 32-bit "
                             "type, not broadcast)",
                             f->name, isred ? "reduce" : "output", o, n->index);
        }
        for (uint32_t p = 0; p < o && r == VKC_SUCCESS; p++)
            if (overlap(me, rs[g->inputs + p]))
                r = VKC_FAIL(ctx, VKC_ERROR_INVALID_ARGUMENT,
                             "fusion record \"%s\": outputs %u and %u overlap", f->name, p, o);
        rs[g->inputs + o] = me;
    }
    vkc__free(rs);
    (void)ri;
    if (r < 0)
        return r;
    *out_w = vec ? 4 : 1;
    return VKC_SUCCESS;
}

static vkc_result record_kernel(vkc_seq *seq, vkc_fuse *f, vkc_kernel *k, const vkc_arg *args,
                                uint32_t nargs, const uint32_t *push, uint32_t push_words,
                                uint64_t count, const char *label)
{
    vkc_dispatch_desc d = {.kernel = k,
                           .args = args,
                           .arg_count = nargs,
                           .push = push,
                           .push_size = push_words * 4u,
                           .count = count,
                           .label = label};
    return vkc_seq_dispatch(seq, &d);
}

static const uint32_t reduce_identity[] = {
    [VKC_REDUCE_SUM] = 0u,
    [VKC_REDUCE_MEAN] = 0u,
    [VKC_REDUCE_MIN] = 0x7f800000u,
    [VKC_REDUCE_MAX] = 0xff800000u,
};

vkc_result vkc_fuse_record(vkc_seq *seq, vkc_fuse *f, const vkc_fuse_args *a)
{
    CHECK_FUSE(f);
    VKC_RETURN_IF(!seq, f->ctx, VKC_ERROR_INVALID_HANDLE, "vkc_fuse_record: seq is NULL");
    VKC_FORWARD(vkc_fuse_build(f));
    int w = 1;
    VKC_FORWARD(check_args(f, a, &w));
    const fgraph *g = &f->g;
    vkc_arg args[VKC_MAX_BINDINGS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->inputs; i++) {
        args[n] = a->inputs[i];
        args[n++].access = VKC_ACCESS_READ;
    }
    for (uint32_t o = 0; o < g->out_count; o++) {
        args[n] = a->outputs[o];
        args[n++].access = VKC_ACCESS_WRITE;
    }
    if (g->reduce_node >= 0) {
        args[n] = a->reduce;
        args[n++].access = VKC_ACCESS_READ_WRITE;
        VKC_FORWARD(vkc_seq_fill(seq, a->reduce.buffer, a->reduce.offset, 4,
                                 reduce_identity[g->reduce_op]));
    }
    uint32_t push[1 + VKC_FUSE_MAX_SCALARS];
    uint64_t units = w == 4 ? a->count / 4 : a->count;
    push[0] = (uint32_t)units;
    for (uint32_t s = 0; s < g->scalars; s++)
        push[1 + s] = a->scalars[s].u32;
    return record_kernel(seq, f, f->kernel[w == 4 ? 1 : 0], args, n, push, 1 + g->scalars, units,
                         a->label ? a->label : f->name);
}

/* ---- unfused ------------------------------------------------------------------ */

static vkc_result temp_alloc(vkc_fuse *f, uint64_t bytes, vkc_buffer **out)
{
    if (f->temp_count == f->temp_cap) {
        uint32_t cap = f->temp_cap ? f->temp_cap * 2 : 8;
        vkc_buffer **p = vkc__realloc(f->temps, cap * sizeof *p);
        VKC_RETURN_IF(!p, f->ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion temporaries");
        f->temps = p;
        f->temp_cap = cap;
    }
    char name[80];
    snprintf(name, sizeof name, "%s.tmp%u", f->name, f->temp_count);
    VKC_FORWARD(vkc_buffer_create(f->ctx, &(vkc_buffer_desc){.size = bytes, .name = name}, out));
    f->temps[f->temp_count++] = *out;
    return VKC_SUCCESS;
}

/* One step of the unfused run: a mini graph with its bindings and pushes. */
typedef struct step {
    fgraph g;
    vkc_arg args[VKC_MAX_BINDINGS];
    uint32_t nargs;
    uint32_t push[1 + VKC_FUSE_MAX_SCALARS];
    uint32_t npush;
    uint32_t map[3], mapped_from[3], nmap; /* operand node -> mini node */
} step;

/* Bring node k of the big graph into the step as a value; returns its mini
 * node index through *out. */
static bool step_operand(step *s, const fgraph *big, uint32_t k, vkc_buffer *const *temps,
                         const vkc_fuse_args *a, uint32_t *out)
{
    for (uint32_t i = 0; i < s->nmap; i++)
        if (s->mapped_from[i] == k) {
            *out = s->map[i];
            return true;
        }
    const fnode *n = &big->nodes[k];
    fnode m = *n;
    if (n->kind == N_INPUT || n->kind == N_OP) {
        m.kind = N_INPUT;
        m.index = s->g.inputs++;
        if (n->kind == N_OP) {
            m.stype = n->type; /* BOOL temporaries hold uint 0/1 */
            m.period = 0;
            s->args[s->nargs++] = (vkc_arg){.buffer = temps[k], .access = VKC_ACCESS_READ};
        } else {
            s->args[s->nargs] = a->inputs[n->index];
            s->args[s->nargs++].access = VKC_ACCESS_READ;
        }
    } else if (n->kind == N_SCALAR) {
        m.index = s->g.scalars++;
        s->push[s->npush++] = a->scalars[n->index].u32;
    } else {
        s->g.constants++;
    }
    m.narg = 0;
    if (!graph_push_node(&s->g, &m))
        return false;
    *out = s->g.count - 1;
    s->mapped_from[s->nmap] = k;
    s->map[s->nmap++] = *out;
    return true;
}

vkc_result vkc_fuse_record_unfused(vkc_seq *seq, vkc_fuse *f, const vkc_fuse_args *a)
{
    CHECK_FUSE(f);
    vkc_context *ctx = f->ctx;
    VKC_RETURN_IF(!seq, ctx, VKC_ERROR_INVALID_HANDLE, "vkc_fuse_record_unfused: seq is NULL");
    VKC_FORWARD(fuse_generate(f));
    int w = 1;
    VKC_FORWARD(check_args(f, a, &w));
    const fgraph *g = &f->g;

    /* Which op results are read by later ops, and which outputs alias an
     * input (they go through a temporary and a copy at the end). */
    bool *needed = vkc__calloc(g->count + 1, sizeof *needed);
    vkc_buffer **temps = vkc__calloc(g->count + 1, sizeof *temps);
    vkc_buffer **alias = vkc__calloc(g->out_count + 1, sizeof *alias);
    step *s = vkc__calloc(1, sizeof *s);
    vkc_result r = VKC_SUCCESS;
    if (!needed || !temps || !alias || !s) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion unfused record");
        goto done;
    }
    for (uint32_t k = 0; k < g->count; k++)
        if (g->nodes[k].kind == N_OP)
            for (uint32_t i = 0; i < g->nodes[k].narg; i++)
                needed[g->nodes[k].arg[i]] = true;
    for (uint32_t k = 0; k < g->count && r == VKC_SUCCESS; k++)
        if (needed[k] && g->nodes[k].kind == N_OP)
            r = temp_alloc(f, a->count * 4, &temps[k]);
    for (uint32_t o = 0; o < g->out_count && r == VKC_SUCCESS; o++) {
        const vkc_arg *out = &a->outputs[o];
        for (uint32_t i = 0; i < g->inputs; i++)
            if (a->inputs[i].buffer == out->buffer && a->inputs[i].offset == out->offset) {
                r = temp_alloc(f, a->count * 4, &alias[o]);
                break;
            }
    }

    /* One step per op node, plus one per output or reduction of a non-op
     * value (a copy). Steps run in node order, so every operand is ready. */
    for (uint32_t k = 0; k <= g->count && r == VKC_SUCCESS; k++) {
        bool tail = k == g->count;
        if (!tail && g->nodes[k].kind != N_OP)
            continue;
        graph_free(&s->g); /* the previous step's, whichever way it ended */
        memset(s, 0, sizeof *s);
        s->g.reduce_node = -1;
        s->npush = 1;
        bool any = false;
        uint32_t value = 0;
        if (!tail && g->nodes[k].kind == N_OP) {
            const fnode *n = &g->nodes[k];
            fnode m = *n;
            for (uint32_t i = 0; i < n->narg; i++)
                if (!step_operand(s, g, n->arg[i], temps, a, &m.arg[i])) {
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                    break;
                }
            if (r < 0 || !graph_push_node(&s->g, &m)) {
                if (r == VKC_SUCCESS)
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                break;
            }
            s->g.ops = 1;
            value = s->g.count - 1;
            if (needed[k]) {
                graph_push_out(&s->g, value, n->type);
                s->args[s->nargs++] = (vkc_arg){.buffer = temps[k], .access = VKC_ACCESS_WRITE};
            }
        }
        /* outputs of node k (or, in the tail step, of non-op nodes one by one) */
        for (uint32_t o = 0; o < g->out_count && r == VKC_SUCCESS; o++) {
            uint32_t src = g->outs[o].node;
            bool mine = tail ? g->nodes[src].kind != N_OP : src == k;
            if (!mine)
                continue;
            if (tail) {
                /* a copy step of its own */
                step *c = vkc__calloc(1, sizeof *c);
                if (!c) {
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                    break;
                }
                c->g.reduce_node = -1;
                c->npush = 1;
                uint32_t v;
                if (!step_operand(c, g, src, temps, a, &v) ||
                    !graph_push_out(&c->g, v, g->outs[o].stype)) {
                    graph_free(&c->g);
                    vkc__free(c);
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                    break;
                }
                c->args[c->nargs] = alias[o] ? (vkc_arg){.buffer = alias[o]} : a->outputs[o];
                c->args[c->nargs++].access = VKC_ACCESS_WRITE;
                char *src_text = generate(&c->g, w, f->name);
                vkc_kernel *kern = NULL;
                if (!src_text)
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
                else
                    r = cache_get(f, src_text, f->name, false, &kern);
                if (r == VKC_SUCCESS) {
                    f->unfused_kernels++;
                    c->push[0] = (uint32_t)(w == 4 ? a->count / 4 : a->count);
                    r = record_kernel(seq, f, kern, c->args, c->nargs, c->push, c->npush,
                                      c->push[0], a->label ? a->label : f->name);
                }
                vkc__free(src_text);
                graph_free(&c->g);
                vkc__free(c);
                continue;
            }
            graph_push_out(&s->g, value, g->outs[o].stype);
            s->args[s->nargs] = alias[o] ? (vkc_arg){.buffer = alias[o]} : a->outputs[o];
            s->args[s->nargs++].access = VKC_ACCESS_WRITE;
            any = true;
        }
        if (r < 0)
            break;
        bool red_here = g->reduce_node >= 0 && (tail ? g->nodes[g->reduce_node].kind != N_OP
                                                     : (int64_t)k == g->reduce_node);
        if (red_here) {
            if (tail) {
                s->g.reduce_node = -1;
                uint32_t v;
                if (!step_operand(s, g, (uint32_t)g->reduce_node, temps, a, &v)) {
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                    break;
                }
                value = v;
            }
            s->g.reduce_node = value;
            s->g.reduce_op = g->reduce_op;
            s->args[s->nargs] = a->reduce;
            s->args[s->nargs++].access = VKC_ACCESS_READ_WRITE;
            r = vkc_seq_fill(seq, a->reduce.buffer, a->reduce.offset, 4,
                             reduce_identity[g->reduce_op]);
            any = true;
        }
        if (r < 0)
            break;
        if ((tail && !any) || (!tail && g->nodes[k].kind != N_OP))
            continue;
        if (!tail && !any && !needed[k])
            continue; /* dead op: nothing reads or outputs it */
        if (s->g.out_count + s->g.inputs == 0 && s->g.reduce_node < 0)
            continue;
        /* inputs come first in the binding order: move the output args after
         * the input args (step_operand appended inputs as it met them, and
         * outputs were appended after all operands, so the order holds) */
        char *src_text = generate(&s->g, w, f->name);
        vkc_kernel *kern = NULL;
        if (!src_text) {
            r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
            break;
        }
        r = cache_get(f, src_text, f->name, false, &kern);
        vkc__free(src_text);
        if (r < 0)
            break;
        f->unfused_kernels++;
        s->push[0] = (uint32_t)(w == 4 ? a->count / 4 : a->count);
        r = record_kernel(seq, f, kern, s->args, s->nargs, s->push, s->npush, s->push[0],
                          a->label ? a->label : f->name);
        graph_free(&s->g);
    }
    for (uint32_t o = 0; o < g->out_count && r == VKC_SUCCESS; o++)
        if (alias[o])
            r = vkc_seq_copy(seq, a->outputs[o].buffer, a->outputs[o].offset, alias[o], 0,
                             a->count * 4);
done:
    if (s)
        graph_free(&s->g);
    vkc__free(s);
    vkc__free(needed);
    vkc__free(temps);
    vkc__free(alias);
    return r;
}

vkc_result vkc__fuse_debug_append(vkc_fuse *f, const char *glsl)
{
    CHECK_FUSE(f);
    char *copy = glsl ? vkc__strdup(glsl) : NULL;
    VKC_RETURN_IF(glsl && !copy, f->ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "debug text");
    vkc__free(f->debug_extra);
    f->debug_extra = copy;
    fuse_invalidate(f);
    return VKC_SUCCESS;
}
