/* Fusion module: every operation against a CPU reference, special values,
 * fused == unfused on random graphs, the structural kernel cache, bad input.
 *
 * Tolerances (Vulkan's precision rules for SPIR-V, plus our formulas):
 * - exact: add, sub, mul, neg, abs, min, max, relu, clamp, compare, select,
 *   cast and every integer operation;
 * - div <= 3 ulp; sqrt, rsqrt <= 6 ulp; exp <= 3 + 2|x| ulp; log <= 3 ulp,
 *   or 2^-21 absolute for x in [0.5, 2]; fma: within 2 ulp of the fused or
 *   the unfused (multiply, round, add) result;
 * - tanh, sigmoid, gelu (tanh approximation): 2e-6 + 2e-5 |ref| absolute;
 * - dropout: the mask exactly, kept values within 4 ulp of x * (1/p);
 * - NaN in the reference needs NaN from the device, infinities must match;
 *   denormal inputs and results may be flushed to zero (either is accepted).
 * - log of a denormal: -inf or within [-104, -87] (llvmpipe gives about
 *   log(FLT_MIN));
 * - float division is checked only for divisors of magnitude 2^-126 ..
 *   2^126: Vulkan ("Precision and Operation of SPIR-V Instructions") gives
 *   OpFDiv's precision (2.5 ulp) only there, and conformant devices differ
 *   outside it (NVIDIA: x / FLT_MAX = 0 and inf / FLT_MAX = NaN, as PTX
 *   div.approx; x / 0 and x / denormal are undefined too);
 * - fused vs unfused: float values are `precise` in the generated code, so
 *   they must agree to 1e-5 relative (in practice bit for bit); reductions
 *   to 1e-5 * sum(|x|). The random graphs keep every value inside what
 *   Vulkan defines (see random_graph_once), so NaN or inf on either side is
 *   a failure. */
#include "vkc_internal.h"
#include "vkc_test.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef union tv {
    float f;
    int32_t i;
    uint32_t u;
} tv;

static bool kernels_available(vkc_context *ctx)
{
    vkc_kernel *k = NULL;
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_kernel_create_glsl(
        ctx,
        &(vkc_glsl_desc){.source = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
                         .name = "probe"},
        &k);
    vkc_test_quiet_errors(0);
    vkc_kernel_destroy(k);
    return r == VKC_SUCCESS;
}

/* Every device test needs run-time GLSL: say so clearly if it is missing. */
#define NEED_KERNELS(ctx)                                                                          \
    do {                                                                                           \
        if (!kernels_available(ctx))                                                               \
            fail_msg("vkc_kernel_create_glsl does not work: %s", vkc_context_last_error(ctx));     \
    } while (0)

static vkc_buffer *mkbuf(vkc_context *ctx, uint64_t bytes)
{
    vkc_buffer *b = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = bytes}, &b);
    if (r != VKC_SUCCESS)
        fail_msg("buffer: %s: %s", vkc_result_string(r), vkc_context_last_error(ctx));
    return b;
}

#define OK(ctx, expr)                                                                              \
    do {                                                                                           \
        vkc_result r_ = (expr);                                                                    \
        if (r_ != VKC_SUCCESS)                                                                     \
            fail_msg("%s: %s: %s", #expr, vkc_result_string(r_), vkc_context_last_error(ctx));     \
    } while (0)

/* One run of a graph, fused and/or unfused, over host arrays of 32-bit
 * elements. */
typedef struct run_io {
    uint32_t n_in, n_out, n_sc;
    const tv *in[4];
    uint32_t in_len[4]; /* elements; 0 = count */
    const vkc_scalar *sc;
    uint64_t count;
    tv *fused[4], *unfused[4];
    bool reduce;
    float red_fused, red_unfused;
} run_io;

static void run_graph(vkc_context *ctx, vkc_fuse *f, run_io *io)
{
    vkc_buffer *in[4] = {0}, *of[4] = {0}, *ou[4] = {0}, *rf = NULL, *ru = NULL;
    vkc_arg ain[4] = {0}, aof[4] = {0}, aou[4] = {0};
    for (uint32_t i = 0; i < io->n_in; i++) {
        uint64_t len = io->in_len[i] ? io->in_len[i] : io->count;
        in[i] = mkbuf(ctx, len * 4);
        OK(ctx, vkc_buffer_upload(in[i], 0, io->in[i], len * 4));
        ain[i].buffer = in[i];
    }
    for (uint32_t o = 0; o < io->n_out; o++) {
        if (io->fused[o])
            aof[o].buffer = of[o] = mkbuf(ctx, io->count * 4);
        if (io->unfused[o])
            aou[o].buffer = ou[o] = mkbuf(ctx, io->count * 4);
    }
    if (io->reduce) {
        rf = mkbuf(ctx, 4);
        ru = mkbuf(ctx, 4);
    }
    vkc_seq *s = NULL;
    OK(ctx, vkc_seq_create(ctx, NULL, &s));
    vkc_fuse_args a = {.inputs = ain,
                       .input_count = io->n_in,
                       .output_count = io->n_out,
                       .scalars = io->sc,
                       .scalar_count = io->n_sc,
                       .count = io->count};
    if (io->n_out == 0 || io->fused[0]) {
        a.outputs = aof;
        a.reduce = (vkc_arg){.buffer = rf};
        OK(ctx, vkc_fuse_record(s, f, &a));
    }
    if (io->n_out == 0 || io->unfused[0]) {
        a.outputs = aou;
        a.reduce = (vkc_arg){.buffer = ru};
        OK(ctx, vkc_fuse_record_unfused(s, f, &a));
    }
    OK(ctx, vkc_seq_end(s));
    vkc_ticket t;
    OK(ctx, vkc_seq_submit(s, &t));
    OK(ctx, vkc_wait(ctx, t, UINT64_MAX));
    for (uint32_t o = 0; o < io->n_out; o++) {
        if (of[o])
            OK(ctx, vkc_buffer_download(of[o], 0, io->fused[o], io->count * 4));
        if (ou[o])
            OK(ctx, vkc_buffer_download(ou[o], 0, io->unfused[o], io->count * 4));
    }
    if (rf)
        OK(ctx, vkc_buffer_download(rf, 0, &io->red_fused, 4));
    if (ru)
        OK(ctx, vkc_buffer_download(ru, 0, &io->red_unfused, 4));
    vkc_seq_destroy(s);
    for (uint32_t i = 0; i < 4; i++) {
        vkc_buffer_destroy(in[i]);
        vkc_buffer_destroy(of[i]);
        vkc_buffer_destroy(ou[i]);
    }
    vkc_buffer_destroy(rf);
    vkc_buffer_destroy(ru);
}

static const char *op_name(int op)
{
    static const char *const names[] = {
        [VKC_OP_ADD] = "add",       [VKC_OP_SUB] = "sub",        [VKC_OP_MUL] = "mul",
        [VKC_OP_DIV] = "div",       [VKC_OP_MIN] = "min",        [VKC_OP_MAX] = "max",
        [VKC_OP_FMA] = "fma",       [VKC_OP_ABS] = "abs",        [VKC_OP_NEG] = "neg",
        [VKC_OP_SQRT] = "sqrt",     [VKC_OP_RSQRT] = "rsqrt",    [VKC_OP_EXP] = "exp",
        [VKC_OP_LOG] = "log",       [VKC_OP_TANH] = "tanh",      [VKC_OP_SIGMOID] = "sigmoid",
        [VKC_OP_RELU] = "relu",     [VKC_OP_GELU] = "gelu",      [VKC_OP_CLAMP] = "clamp",
        [VKC_OP_LT] = "lt",         [VKC_OP_LE] = "le",          [VKC_OP_GT] = "gt",
        [VKC_OP_GE] = "ge",         [VKC_OP_EQ] = "eq",          [VKC_OP_NE] = "ne",
        [VKC_OP_SELECT] = "select", [VKC_OP_DROPOUT] = "dropout"};
    return op > 0 && op < (int)VKC_ARRAY_COUNT(names) && names[op] ? names[op] : "?";
}

static const char *dtype_name(vkc_dtype t)
{
    return t == VKC_DTYPE_F32   ? "f32"
           : t == VKC_DTYPE_I32 ? "i32"
           : t == VKC_DTYPE_U32 ? "u32"
                                : "bool";
}

/* ---- CPU reference ------------------------------------------------------------ */

static uint32_t pcg(uint32_t v)
{
    uint32_t s = v * 747796405u + 2891336453u;
    uint32_t w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

static float ftz(float x)
{
    return (x != 0.0f && fabsf(x) < FLT_MIN) ? 0.0f * x : x;
}

/* op on operands of type t; compare gives u32 0/1; select's a is a u32. */
static tv ref_op(int op, vkc_dtype t, tv a, tv b, tv c, uint32_t idx)
{
    tv r = {0};
    bool F = t == VKC_DTYPE_F32, I = t == VKC_DTYPE_I32;
    switch (op) {
    case VKC_OP_ADD:
        if (F)
            r.f = a.f + b.f;
        else
            r.u = a.u + b.u;
        break;
    case VKC_OP_SUB:
        if (F)
            r.f = a.f - b.f;
        else
            r.u = a.u - b.u;
        break;
    case VKC_OP_MUL:
        if (F)
            r.f = a.f * b.f;
        else
            r.u = a.u * b.u;
        break;
    case VKC_OP_DIV:
        if (F)
            r.f = a.f / b.f;
        else if (I)
            r.i = a.i / b.i;
        else
            r.u = a.u / b.u;
        break;
    case VKC_OP_MIN:
        if (F)
            r.f = fminf(a.f, b.f);
        else if (I)
            r.i = a.i < b.i ? a.i : b.i;
        else
            r.u = a.u < b.u ? a.u : b.u;
        break;
    case VKC_OP_MAX:
        if (F)
            r.f = fmaxf(a.f, b.f);
        else if (I)
            r.i = a.i > b.i ? a.i : b.i;
        else
            r.u = a.u > b.u ? a.u : b.u;
        break;
    case VKC_OP_FMA:
        if (F)
            r.f = fmaf(a.f, b.f, c.f);
        else
            r.u = a.u * b.u + c.u;
        break;
    case VKC_OP_ABS:
        if (F)
            r.f = fabsf(a.f);
        else if (I)
            r.u = a.i < 0 ? 0u - a.u : a.u;
        else
            r.u = a.u;
        break;
    case VKC_OP_NEG:
        if (F)
            r.f = -a.f;
        else
            r.u = 0u - a.u;
        break;
    case VKC_OP_SQRT:
        r.f = (float)sqrt(a.f);
        break;
    case VKC_OP_RSQRT:
        r.f = (float)(1.0 / sqrt(a.f));
        break;
    case VKC_OP_EXP:
        r.f = (float)exp(a.f);
        break;
    case VKC_OP_LOG:
        r.f = (float)log(a.f);
        break;
    case VKC_OP_TANH:
        r.f = (float)tanh(a.f);
        break;
    case VKC_OP_SIGMOID:
        r.f = (float)(1.0 / (1.0 + exp(-(double)a.f)));
        break;
    case VKC_OP_GELU: {
        double x = a.f;
        r.f = (float)(0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
        break;
    }
    case VKC_OP_RELU:
        if (F)
            r.f = a.f > 0 ? a.f : 0.0f;
        else if (I)
            r.i = a.i > 0 ? a.i : 0;
        else
            r.u = a.u;
        break;
    case VKC_OP_CLAMP:
        if (F)
            r.f = fminf(fmaxf(a.f, b.f), c.f);
        else if (I)
            r.i = a.i < b.i ? b.i : a.i > c.i ? c.i : a.i;
        else
            r.u = a.u < b.u ? b.u : a.u > c.u ? c.u : a.u;
        break;
#define CMP(sym)                                                                                   \
    r.u = F ? (a.f sym b.f) : I ? (a.i sym b.i) : (a.u sym b.u);                                   \
    break
    case VKC_OP_LT:
        CMP(<);
    case VKC_OP_LE:
        CMP(<=);
    case VKC_OP_GT:
        CMP(>);
    case VKC_OP_GE:
        CMP(>=);
    case VKC_OP_EQ:
        CMP(==);
    case VKC_OP_NE:
        CMP(!=);
#undef CMP
    case VKC_OP_SELECT:
        r = a.u ? b : c;
        break;
    case VKC_OP_DROPOUT: {
        uint32_t h = pcg(idx + pcg(c.u));
        float u = (float)(h >> 8) * (1.0f / 16777216.0f);
        r.f = u < b.f ? a.f * (1.0f / b.f) : 0.0f;
        break;
    }
    }
    return r;
}

static double ulps(float a, float b)
{
    if (a == b)
        return 0;
    double d = fabs((double)a - (double)b);
    float m = fmaxf(fabsf(a), fabsf(b));
    int e;
    frexpf(m, &e);
    double ulp = ldexp(1.0, (e - 24) < -149 ? -149 : e - 24);
    return d / ulp;
}

/* Does the device's g match the reference w for op with first operand x? */
static bool close_f(int op, float g, float w, float x)
{
    if (isnan(w))
        return isnan(g);
    if (isinf(w))
        return g == w;
    if (isnan(g) || isinf(g))
        return false;
    g = ftz(g);
    w = ftz(w);
    switch (op) {
    case VKC_OP_DIV:
        return ulps(g, w) <= 3;
    case VKC_OP_SQRT:
    case VKC_OP_RSQRT:
        return ulps(g, w) <= 6;
    case VKC_OP_EXP:
        return ulps(g, w) <= 3 + 2 * fabs(x);
    case VKC_OP_LOG:
        /* log of a denormal: llvmpipe answers about log(FLT_MIN) */
        if (x > 0 && x < FLT_MIN)
            return g == -INFINITY || (g <= -87.0f && g >= -104.0f);
        if (x >= 0.5f && x <= 2.0f)
            return fabs((double)g - w) <= ldexp(1.0, -21);
        return ulps(g, w) <= 3;
    case VKC_OP_TANH:
    case VKC_OP_SIGMOID:
    case VKC_OP_GELU:
        return fabs((double)g - w) <= 2e-6 + 2e-5 * fabs(w);
    case VKC_OP_DROPOUT:
        return (g == 0) == (w == 0) && ulps(g, w) <= 4;
    default:
        return g == w;
    }
}

/* Does Vulkan define op's result for these operands? Float division: only
 * for |b| in [2^-126, 2^126] (OpFDiv's precision is given for that range
 * only; a denormal b may also be flushed to zero). */
static bool op_defined(int op, vkc_dtype t, tv b)
{
    if (op == VKC_OP_DIV && t == VKC_DTYPE_F32)
        return !isnan(b.f) && fabsf(b.f) >= 0x1p-126f && fabsf(b.f) <= 0x1p126f;
    return true;
}

/* ---- per-operation tests --------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static uint32_t rnd(void)
{
    return (uint32_t)(vkc_test_rand(&rng_state) >> 32);
}
static float rndf(float lo, float hi)
{
    return lo + (hi - lo) * (float)(rnd() >> 8) * (1.0f / 16777216.0f);
}

typedef struct optest {
    int op;
    vkc_dtype t;
} optest;

static tv random_value(int op, vkc_dtype t, int which)
{
    tv v;
    if (t == VKC_DTYPE_F32) {
        if (op == VKC_OP_SQRT || op == VKC_OP_RSQRT || op == VKC_OP_LOG)
            v.f = rndf(1e-3f, 100.0f);
        else if (op == VKC_OP_EXP)
            v.f = rndf(-80.0f, 80.0f);
        else if (op == VKC_OP_DIV && which == 1)
            v.f = (rnd() & 1 ? 1 : -1) * rndf(0.01f, 10.0f);
        else
            v.f = rndf(-8.0f, 8.0f);
    } else if (t == VKC_DTYPE_I32) {
        v.i = (int32_t)rnd();
        if (op == VKC_OP_DIV && which == 1)
            v.i = (int32_t)(rnd() % 2000) - 1000;
        if (op == VKC_OP_DIV && which == 1 && (v.i == 0 || v.i == -1))
            v.i = 7;
    } else {
        v.u = rnd();
        if (op == VKC_OP_DIV && which == 1)
            v.u = 1 + rnd() % 5000;
    }
    return v;
}

/* Build x op y (op z) over inputs of type t; run fused and unfused; check
 * both against ref_op on every element. `special` uses the given values. */
static void check_op(vkc_context *ctx, int op, vkc_dtype t, uint64_t count, const tv *const *given,
                     const char *what)
{
    vkc_fuse *f = NULL;
    OK(ctx, vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "op"}, &f));
    vkc_value v[3], out;
    uint32_t arity = op == VKC_OP_FMA || op == VKC_OP_CLAMP || op == VKC_OP_SELECT     ? 3
                     : (op >= VKC_OP_ABS && op <= VKC_OP_GELU) || op == VKC_OP_DROPOUT ? 1
                                                                                       : 2;
    tv *in[3] = {0};
    vkc_scalar sc[2] = {{.f32 = 0.7f}, {.u32 = 12345u}};
    uint32_t n_sc = 0;
    for (uint32_t i = 0; i < arity; i++) {
        vkc_dtype it = op == VKC_OP_SELECT && i == 0 ? VKC_DTYPE_U32 : t;
        OK(ctx, vkc_fuse_input(f, it, &v[i]));
        in[i] = malloc(count * sizeof(tv));
        for (uint64_t k = 0; k < count; k++)
            in[i][k] = given ? given[i][k] : random_value(op, it, (int)i);
        if (op == VKC_OP_SELECT && i == 0 && !given)
            for (uint64_t k = 0; k < count; k++)
                in[0][k].u = rnd() % 3 == 0 ? 0 : rnd();
    }
    if (op == VKC_OP_CLAMP && !given) /* lo <= hi */
        for (uint64_t k = 0; k < count; k++) {
            tv lo = in[1][k], hi = in[2][k];
            bool swap = t == VKC_DTYPE_F32   ? lo.f > hi.f
                        : t == VKC_DTYPE_I32 ? lo.i > hi.i
                                             : lo.u > hi.u;
            if (swap) {
                in[1][k] = hi;
                in[2][k] = lo;
            }
        }
    if (op == VKC_OP_SELECT) {
        vkc_value z;
        OK(ctx, vkc_fuse_constant(f, VKC_DTYPE_U32, 0, &z));
        OK(ctx, vkc_fuse_op(f, VKC_OP_NE, (vkc_value[]){v[0], z}, 2, &v[0]));
    }
    if (op == VKC_OP_DROPOUT) {
        OK(ctx, vkc_fuse_scalar(f, VKC_DTYPE_F32, &v[1]));
        OK(ctx, vkc_fuse_scalar(f, VKC_DTYPE_U32, &v[2]));
        n_sc = 2;
        arity = 3;
    }
    OK(ctx, vkc_fuse_op(f, op, v, arity, &out));
    OK(ctx, vkc_fuse_output(f, out, NULL));
    tv *gf = malloc(count * sizeof(tv)), *gu = malloc(count * sizeof(tv));
    run_io io = {.n_in = op == VKC_OP_DROPOUT ? 1 : arity,
                 .n_out = 1,
                 .n_sc = n_sc,
                 .in = {in[0], in[1], in[2]},
                 .sc = sc,
                 .count = count,
                 .fused = {gf},
                 .unfused = {gu}};
    run_graph(ctx, f, &io);
    bool cmp_out = op >= VKC_OP_LT && op <= VKC_OP_NE;
    unsigned bad = 0, skipped = 0;
    for (uint64_t k = 0; k < count; k++) {
        tv a = in[0][k], b = in[1] ? in[1][k] : (tv){0}, c = in[2] ? in[2][k] : (tv){0};
        if (op == VKC_OP_DROPOUT) {
            b.f = sc[0].f32;
            c.u = sc[1].u32;
        }
        if (!op_defined(op, t, b)) {
            skipped++;
            continue;
        }
        tv w = ref_op(op, t, a, b, c, (uint32_t)k);
        tv wz = w;
        if (t == VKC_DTYPE_F32) { /* the device may flush denormal inputs */
            tv fa = a, fb = b, fc = c;
            if (op != VKC_OP_SELECT) /* a is the u32 condition */
                fa.f = ftz(a.f);
            if (op != VKC_OP_DROPOUT) { /* b, c: probability and seed */
                fb.f = ftz(b.f);
                fc.f = ftz(c.f);
            }
            wz = ref_op(op, t, fa, fb, fc, (uint32_t)k);
        }
        for (int m = 0; m < 2; m++) {
            tv g = m ? gu[k] : gf[k];
            bool good;
            if (t == VKC_DTYPE_F32 && !cmp_out) {
                if (op == VKC_OP_FMA) {
                    tv w2 = {.f = a.f * b.f + c.f};
                    /* fused or not: fma(FLT_MAX, 88, -inf) is -inf or NaN */
                    /* with a denormal flushed to 0, inf * b is inf * 0 = NaN (H200) */
                    good = ((isnan(w.f) || isnan(w2.f) || isnan(wz.f)) && isnan(g.f)) ||
                           (!isnan(g.f) &&
                            (ulps(ftz(g.f), ftz(w.f)) <= 2 || ulps(ftz(g.f), ftz(w2.f)) <= 2 ||
                             ulps(ftz(g.f), ftz(wz.f)) <= 2));
                } else {
                    good = close_f(op, g.f, w.f, a.f) || close_f(op, g.f, wz.f, ftz(a.f));
                }
            } else {
                good = g.u == w.u || g.u == wz.u;
            }
            if (!good && bad++ < 8)
                print_message("%s (%s %s, %s) element %llu: a=%08x (%.9g) b=%08x (%.9g) "
                              "c=%08x (%.9g) -> got %08x (%.9g / %d), want %08x (%.9g / %d)\n",
                              what, dtype_name(t), op_name(op), m ? "unfused" : "fused",
                              (unsigned long long)k, a.u, a.f, b.u, b.f, c.u, c.f, g.u, g.f, g.i,
                              w.u, w.f, w.i);
        }
    }
    if (bad)
        fail_msg("%s (%s %s): %u mismatches over fused + unfused (%u elements undefined in "
                 "Vulkan not checked; first mismatches above)",
                 what, dtype_name(t), op_name(op), bad, skipped);
    free(gf);
    free(gu);
    for (int i = 0; i < 3; i++)
        free(in[i]);
    vkc_fuse_destroy(f);
}

static void test_every_op(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    static const int fops[] = {
        VKC_OP_ADD,    VKC_OP_SUB,    VKC_OP_MUL,     VKC_OP_DIV,  VKC_OP_MIN,   VKC_OP_MAX,
        VKC_OP_FMA,    VKC_OP_ABS,    VKC_OP_NEG,     VKC_OP_SQRT, VKC_OP_RSQRT, VKC_OP_EXP,
        VKC_OP_LOG,    VKC_OP_TANH,   VKC_OP_SIGMOID, VKC_OP_RELU, VKC_OP_GELU,  VKC_OP_CLAMP,
        VKC_OP_LT,     VKC_OP_LE,     VKC_OP_GT,      VKC_OP_GE,   VKC_OP_EQ,    VKC_OP_NE,
        VKC_OP_SELECT, VKC_OP_DROPOUT};
    static const int iops[] = {VKC_OP_ADD,   VKC_OP_SUB, VKC_OP_MUL,   VKC_OP_DIV, VKC_OP_MIN,
                               VKC_OP_MAX,   VKC_OP_FMA, VKC_OP_ABS,   VKC_OP_NEG, VKC_OP_RELU,
                               VKC_OP_CLAMP, VKC_OP_LT,  VKC_OP_LE,    VKC_OP_GT,  VKC_OP_GE,
                               VKC_OP_EQ,    VKC_OP_NE,  VKC_OP_SELECT};
    char what[64];
    for (size_t i = 0; i < VKC_ARRAY_COUNT(fops); i++) {
        snprintf(what, sizeof what, "f32 op %d", fops[i]);
        /* 1000: the vec4 variant; 1001: the scalar one */
        check_op(ctx, fops[i], VKC_DTYPE_F32, 1000, NULL, what);
        check_op(ctx, fops[i], VKC_DTYPE_F32, 1001, NULL, what);
    }
    for (size_t i = 0; i < VKC_ARRAY_COUNT(iops); i++) {
        snprintf(what, sizeof what, "i32 op %d", iops[i]);
        check_op(ctx, iops[i], VKC_DTYPE_I32, 1000, NULL, what);
        snprintf(what, sizeof what, "u32 op %d", iops[i]);
        check_op(ctx, iops[i], VKC_DTYPE_U32, 1001, NULL, what);
    }
}

/* Every pair of special values through each float op where they matter. */
static void test_special_values(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    const float sp[] = {0.0f,   -0.0f,   1.0f,   -1.0f,   INFINITY, -INFINITY,
                        NAN,    FLT_MIN, 1e-40f, -1e-40f, FLT_MAX,  -FLT_MAX,
                        1e-30f, 88.0f,   89.0f,  -104.0f, 0.5f,     3.0f};
    const uint32_t ns = VKC_ARRAY_COUNT(sp);
    const uint32_t count = ns * ns;
    tv *a = malloc(count * sizeof(tv)), *b = malloc(count * sizeof(tv)),
       *c = malloc(count * sizeof(tv));
    static const int ops[] = {VKC_OP_ADD, VKC_OP_SUB,  VKC_OP_MUL,     VKC_OP_DIV,   VKC_OP_FMA,
                              VKC_OP_ABS, VKC_OP_NEG,  VKC_OP_SQRT,    VKC_OP_RSQRT, VKC_OP_EXP,
                              VKC_OP_LOG, VKC_OP_TANH, VKC_OP_SIGMOID, VKC_OP_GELU,  VKC_OP_LT,
                              VKC_OP_GE,  VKC_OP_EQ,   VKC_OP_DROPOUT};
    /* min/max/clamp/relu of NaN are undefined in GLSL: checked without NaN */
    static const int nonan_ops[] = {VKC_OP_MIN, VKC_OP_MAX, VKC_OP_RELU};
    char what[64];
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t j = 0; j < ns; j++) {
                float x = sp[i], y = sp[j];
                if (pass == 1) {
                    if (isnan(x))
                        x = 2.0f;
                    if (isnan(y))
                        y = -2.0f;
                }
                a[i * ns + j].f = x;
                b[i * ns + j].f = y;
                c[i * ns + j].f = sp[(i + j) % ns];
            }
        const tv *g[3] = {a, b, c};
        const int *list = pass ? nonan_ops : ops;
        size_t n = pass ? VKC_ARRAY_COUNT(nonan_ops) : VKC_ARRAY_COUNT(ops);
        for (size_t k = 0; k < n; k++) {
            snprintf(what, sizeof what, "special f32 op %d", list[k]);
            check_op(ctx, list[k], VKC_DTYPE_F32, count, g, what);
        }
    }
    free(a);
    free(b);
    free(c);
}

/* Casts between all types, with values that have defined results. */
static void test_casts(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    const uint32_t count = 1003;
    tv *fi = malloc(count * sizeof(tv)), *ii = malloc(count * sizeof(tv)),
       *ui = malloc(count * sizeof(tv));
    for (uint32_t k = 0; k < count; k++) {
        fi[k].f = k % 7 == 0 ? 0.0f : rndf(0.0f, 100000.0f) * (k % 2 ? 1.0f : -1.0f);
        ii[k].i = k % 5 == 0 ? 0 : (int32_t)rnd();
        ui[k].u = k % 5 == 0 ? 0 : rnd();
    }
    tv *gf[8], *gu[8];
    /* run_io holds 4 outputs: run twice with the outputs split */
    for (int half = 0; half < 2; half++) {
        vkc_fuse *h = NULL;
        OK(ctx, vkc_fuse_create(ctx, NULL, &h));
        vkc_value hx, hi, hu, ho[8];
        OK(ctx, vkc_fuse_input(h, VKC_DTYPE_F32, &hx));
        OK(ctx, vkc_fuse_input(h, VKC_DTYPE_I32, &hi));
        OK(ctx, vkc_fuse_input(h, VKC_DTYPE_U32, &hu));
        OK(ctx, vkc_fuse_cast(h, hx, VKC_DTYPE_I32, &ho[0]));
        OK(ctx, vkc_fuse_cast(h, hi, VKC_DTYPE_F32, &ho[1]));
        OK(ctx, vkc_fuse_cast(h, hu, VKC_DTYPE_F32, &ho[2]));
        OK(ctx, vkc_fuse_cast(h, hi, VKC_DTYPE_U32, &ho[3]));
        OK(ctx, vkc_fuse_cast(h, hu, VKC_DTYPE_I32, &ho[4]));
        OK(ctx, vkc_fuse_cast(h, hx, VKC_DTYPE_BOOL, &ho[5]));
        OK(ctx, vkc_fuse_cast(h, ho[5], VKC_DTYPE_F32, &ho[6]));
        vkc_value hax;
        OK(ctx, vkc_fuse_op(h, VKC_OP_ABS, &hx, 1, &hax));
        OK(ctx, vkc_fuse_cast(h, hax, VKC_DTYPE_U32, &ho[7]));
        for (int k = 0; k < 4; k++)
            OK(ctx, vkc_fuse_output(h, ho[half * 4 + k], NULL));
        run_io io = {.n_in = 3, .n_out = 4, .in = {fi, ii, ui}, .count = count};
        for (int k = 0; k < 4; k++) {
            io.fused[k] = gf[half * 4 + k] = malloc(count * sizeof(tv));
            io.unfused[k] = gu[half * 4 + k] = malloc(count * sizeof(tv));
        }
        run_graph(ctx, h, &io);
        vkc_fuse_destroy(h);
    }
    for (uint32_t k = 0; k < count; k++) {
        tv w[8];
        w[0].i = (int32_t)fi[k].f;
        w[1].f = (float)ii[k].i;
        w[2].f = (float)ui[k].u;
        w[3].u = ii[k].u;
        w[4].u = ui[k].u;
        w[5].u = fi[k].f != 0.0f;
        w[6].f = fi[k].f != 0.0f ? 1.0f : 0.0f;
        w[7].u = (uint32_t)fabsf(fi[k].f);
        for (int j = 0; j < 8; j++) {
            if (gf[j][k].u != w[j].u || gu[j][k].u != w[j].u)
                fail_msg("cast %d element %u: fused %08x unfused %08x want %08x", j, k, gf[j][k].u,
                         gu[j][k].u, w[j].u);
        }
    }
    for (int j = 0; j < 8; j++) {
        free(gf[j]);
        free(gu[j]);
    }
    free(fi);
    free(ii);
    free(ui);
}

/* Reductions against a double-precision CPU sum/min/max/mean. */
static void test_reductions(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    const uint64_t counts[] = {1, 7, 1000, 4099, 20000};
    for (size_t ci = 0; ci < VKC_ARRAY_COUNT(counts); ci++) {
        uint64_t count = counts[ci];
        tv *x = malloc(count * sizeof(tv));
        for (uint64_t k = 0; k < count; k++)
            x[k].f = rndf(-4.0f, 4.0f);
        for (int op = VKC_REDUCE_SUM; op <= VKC_REDUCE_MEAN; op++) {
            vkc_fuse *f = NULL;
            OK(ctx, vkc_fuse_create(ctx, NULL, &f));
            vkc_value v, s, y;
            OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &v));
            OK(ctx, vkc_fuse_scalar(f, VKC_DTYPE_F32, &s));
            OK(ctx, vkc_fuse_op(f, VKC_OP_MUL, (vkc_value[]){v, s}, 2, &y));
            OK(ctx, vkc_fuse_reduce(f, y, (vkc_reduce_op)op));
            vkc_scalar sc = {.f32 = 0.5f};
            run_io io = {
                .n_in = 1, .n_sc = 1, .in = {x}, .sc = &sc, .count = count, .reduce = true};
            run_graph(ctx, f, &io);
            double sum = 0, asum = 0, mn = INFINITY, mx = -INFINITY;
            for (uint64_t k = 0; k < count; k++) {
                double y2 = x[k].f * 0.5f;
                sum += y2;
                asum += fabs(y2);
                mn = fmin(mn, y2);
                mx = fmax(mx, y2);
            }
            double want = op == VKC_REDUCE_SUM   ? sum
                          : op == VKC_REDUCE_MIN ? mn
                          : op == VKC_REDUCE_MAX ? mx
                                                 : sum / (double)count;
            double tol = op == VKC_REDUCE_SUM    ? 1e-6 * asum + 1e-6
                         : op == VKC_REDUCE_MEAN ? (1e-6 * asum + 1e-6) / (double)count
                                                 : 0;
            if (fabs(io.red_fused - want) > tol || fabs(io.red_unfused - want) > tol)
                fail_msg("reduce %d over %llu: fused %.9g unfused %.9g want %.9g (tol %g)", op,
                         (unsigned long long)count, io.red_fused, io.red_unfused, want, tol);
            vkc_fuse_destroy(f);
        }
        free(x);
    }
}

/* ---- random graphs: fused == unfused ------------------------------------------ */

/* The random graphs stay inside what Vulkan defines ("Precision and
 * Operation of SPIR-V Instructions"), so fused and unfused runs must agree:
 * - without SignedZeroInfNanPreserve an operation that would make a NaN
 *   gives an undefined value, and whatever is computed from it is
 *   undefined too: the compiler may fold x == x to true and min/max/clamp
 *   of a NaN may return either operand, so a NaN cannot be filtered out
 *   in the graph (on the H200 the old generator's "NaN-safe" cast of
 *   sqrt(negative) gave int(-1e6) * int(-1e6) fused and 0 unfused);
 *   sqrt, rsqrt and log therefore take |a| + 0.5, and a / b divides by
 *   |b| + 0.5 (OpFDiv is defined for |b| in [2^-126, 2^126] only);
 * - every float value carries a bound on its magnitude (rval.mag): an
 *   operation whose result could pass 1e30 clamps its float operands to
 *   +-1e3 first and exp clamps its argument to +-60, so nothing overflows,
 *   no inf or NaN is made and every divisor is in [0.5, 2^126];
 * - float -> int casts (undefined out of range) clamp to +-1e6 (0 .. 1e6
 *   for u32) first. */
#define RG_LIMIT 1e30

typedef struct rval {
    vkc_value id;
    vkc_dtype t;
    double mag; /* F32: |value| <= mag for every element */
} rval;

/* What each value is, to print the graph with CPU values on a failure. */
enum { RN_INPUT, RN_SCALAR, RN_CONST, RN_OP, RN_CAST };
typedef struct rnode {
    vkc_value id, arg[3];
    uint32_t kind, n, index;
    int op;
    vkc_dtype t, at; /* result type, operand type */
    double c;
} rnode;

typedef struct rgraph {
    vkc_fuse *f;
    rval v[128];
    rnode nd[256];
    uint32_t nv, nnd, ops, nin, nsc;
    vkc_dtype in_t[4];
    vkc_scalar sc[VKC_FUSE_MAX_SCALARS];
    vkc_context *ctx;
} rgraph;

static void rnote(rgraph *g, rnode n)
{
    if (g->nnd < VKC_ARRAY_COUNT(g->nd))
        g->nd[g->nnd++] = n;
}

static rval radd(rgraph *g, vkc_value id, vkc_dtype t, double mag)
{
    rval r = {id, t, t == VKC_DTYPE_F32 ? mag : 0};
    g->v[g->nv++] = r;
    return r;
}

static rval rop(rgraph *g, int op, rval a, rval b, rval c, uint32_t n, vkc_dtype t, double mag)
{
    vkc_value out;
    OK(g->ctx, vkc_fuse_op(g->f, op, (vkc_value[]){a.id, b.id, c.id}, n, &out));
    g->ops++;
    rnote(g, (rnode){.id = out,
                     .arg = {a.id, b.id, c.id},
                     .kind = RN_OP,
                     .n = n,
                     .op = op,
                     .t = t,
                     .at = op == VKC_OP_SELECT ? b.t : a.t});
    return radd(g, out, t, mag);
}

static rval rconst(rgraph *g, vkc_dtype t, double x)
{
    vkc_value out;
    OK(g->ctx, vkc_fuse_constant(g->f, t, x, &out));
    rnote(g, (rnode){.id = out, .kind = RN_CONST, .t = t, .c = x});
    return radd(g, out, t, fabs(x));
}

static rval rscalar(rgraph *g, vkc_dtype t, vkc_scalar value, bool pool)
{
    vkc_value id;
    OK(g->ctx, vkc_fuse_scalar(g->f, t, &id));
    rnote(g, (rnode){.id = id, .kind = RN_SCALAR, .t = t, .index = g->nsc});
    g->sc[g->nsc++] = value;
    rval r = {id, t, t == VKC_DTYPE_F32 ? fabs(value.f32) : 0};
    return pool ? radd(g, id, t, r.mag) : r;
}

/* x, or x clamped to [-lim, lim] if its bound is above lim */
static rval rguard(rgraph *g, rval x, double lim)
{
    if (x.t != VKC_DTYPE_F32 || x.mag <= lim)
        return x;
    rval lo = rconst(g, VKC_DTYPE_F32, -lim), hi = rconst(g, VKC_DTYPE_F32, lim);
    return rop(g, VKC_OP_CLAMP, x, lo, hi, 3, VKC_DTYPE_F32, lim);
}

/* |a| + 0.5: a positive operand (>= 0.5), for division, sqrt, rsqrt, log */
static rval rpositive(rgraph *g, rval a)
{
    rval ab = rop(g, VKC_OP_ABS, a, a, a, 1, VKC_DTYPE_F32, a.mag);
    rval h = rconst(g, VKC_DTYPE_F32, 0.5);
    return rop(g, VKC_OP_ADD, ab, h, h, 2, VKC_DTYPE_F32, a.mag + 0.5);
}

/* A value of type t: an existing one, or one converted from an existing one
 * (float -> int through a clamp, so the cast is defined). */
static rval rpick(rgraph *g, vkc_dtype t)
{
    uint32_t idx[128], n = 0;
    for (uint32_t i = 0; i < g->nv; i++)
        if (g->v[i].t == t)
            idx[n++] = i;
    if (n && rnd() % 4 != 0)
        return g->v[idx[rnd() % n]];
    rval src = g->v[rnd() % g->nv];
    if (src.t == t)
        return src;
    if (src.t == VKC_DTYPE_F32 && t != VKC_DTYPE_BOOL) {
        rval lo = rconst(g, VKC_DTYPE_F32, t == VKC_DTYPE_U32 ? 0.0 : -1e6);
        rval hi = rconst(g, VKC_DTYPE_F32, 1e6);
        src = rop(g, VKC_OP_CLAMP, src, lo, hi, 3, VKC_DTYPE_F32, 1e6);
    }
    vkc_value out;
    OK(g->ctx, vkc_fuse_cast(g->f, src.id, t, &out));
    g->ops++;
    rnote(g, (rnode){.id = out, .arg = {src.id}, .kind = RN_CAST, .n = 1, .t = t, .at = src.t});
    return radd(g, out, t, src.t == VKC_DTYPE_F32 ? src.mag : 4294967296.0);
}

/* Bound of |op(a, b, c)| for a float op from the operands' bounds. */
static double rbound(int op, double a, double b, double c)
{
    switch (op) {
    case VKC_OP_ADD:
    case VKC_OP_SUB:
        return a + b;
    case VKC_OP_MUL:
        return a * b;
    case VKC_OP_FMA:
        return a * b + c;
    case VKC_OP_MIN:
    case VKC_OP_MAX:
        return fmax(a, b);
    case VKC_OP_TANH:
    case VKC_OP_SIGMOID:
        return 1;
    default: /* abs, neg, relu, gelu */
        return a;
    }
}

/* The CPU value of every node at element k (diagnostics only). */
static void reval(const rgraph *g, tv *const *in, uint64_t k, tv *val)
{
    for (uint32_t j = 0; j < g->nnd; j++) {
        const rnode *n = &g->nd[j];
        tv a[3] = {{0}};
        for (uint32_t x = 0; x < n->n; x++)
            for (uint32_t m = 0; m < j; m++)
                if (g->nd[m].id == n->arg[x])
                    a[x] = val[m];
        tv r = {0};
        switch (n->kind) {
        case RN_INPUT:
            r = in[n->index][k];
            break;
        case RN_SCALAR:
            r.u = g->sc[n->index].u32;
            break;
        case RN_CONST:
            if (n->t == VKC_DTYPE_F32)
                r.f = (float)n->c;
            else if (n->t == VKC_DTYPE_I32)
                r.i = (int32_t)n->c;
            else if (n->t == VKC_DTYPE_U32)
                r.u = (uint32_t)n->c;
            else
                r.u = n->c != 0;
            break;
        case RN_OP:
            r = ref_op(n->op, n->at, a[0], a[1], a[2], (uint32_t)k);
            break;
        default: /* cast */
            if (n->t == VKC_DTYPE_BOOL)
                r.u = n->at == VKC_DTYPE_F32 ? a[0].f != 0 : a[0].u != 0;
            else if (n->t == VKC_DTYPE_F32)
                r.f = n->at == VKC_DTYPE_I32   ? (float)a[0].i
                      : n->at == VKC_DTYPE_F32 ? a[0].f
                                               : (float)a[0].u;
            else if (n->at == VKC_DTYPE_F32)
                r.i = fabsf(a[0].f) < 2147483520.0f ? (int32_t)a[0].f
                                                    : 0; /* out of range: undefined */
            else
                r = a[0];
            break;
        }
        val[j] = r;
    }
}

static void fmt_tv(char *buf, size_t size, tv x, vkc_dtype t)
{
    if (t == VKC_DTYPE_F32)
        snprintf(buf, size, "%.9g (%08x)", x.f, x.u);
    else if (t == VKC_DTYPE_I32)
        snprintf(buf, size, "%d", x.i);
    else
        snprintf(buf, size, "%u", x.u);
}

/* Print the graph with the CPU values at element k. */
static void rprint(const rgraph *g, tv *const *in, uint64_t k)
{
    tv *val = calloc(g->nnd, sizeof(tv));
    reval(g, in, k, val);
    for (uint32_t j = 0; j < g->nnd; j++) {
        const rnode *n = &g->nd[j];
        char args[96] = "", v[48];
        for (uint32_t x = 0; x < n->n; x++)
            for (uint32_t m = 0; m < j; m++)
                if (g->nd[m].id == n->arg[x]) {
                    size_t l = strlen(args);
                    snprintf(args + l, sizeof args - l, "%sv%u", x ? ", " : "", m);
                }
        fmt_tv(v, sizeof v, val[j], n->t);
        if (n->kind == RN_OP || n->kind == RN_CAST)
            print_message("  v%u = %s %s(%s) = %s\n", j, dtype_name(n->t),
                          n->kind == RN_CAST ? "cast" : op_name(n->op), args, v);
        else if (n->kind == RN_CONST)
            print_message("  v%u = %s constant = %s\n", j, dtype_name(n->t), v);
        else
            print_message("  v%u = %s %s %u = %s\n", j, dtype_name(n->t),
                          n->kind == RN_INPUT ? "input" : "scalar", n->index, v);
    }
    free(val);
}

static void random_graph_once(vkc_context *ctx, uint64_t seed)
{
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    rgraph *g = calloc(1, sizeof *g);
    g->ctx = ctx;
    OK(ctx, vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "random"}, &g->f));
    g->nin = 1 + rnd() % 4;
    for (uint32_t i = 0; i < g->nin; i++) {
        uint32_t r = rnd() % 10;
        g->in_t[i] = r < 6 ? VKC_DTYPE_F32 : r < 8 ? VKC_DTYPE_I32 : VKC_DTYPE_U32;
        vkc_value id;
        OK(ctx, vkc_fuse_input(g->f, g->in_t[i], &id));
        rnote(g, (rnode){.id = id, .kind = RN_INPUT, .t = g->in_t[i], .index = i});
        radd(g, id, g->in_t[i], 3.0); /* inputs: floats in [-3, 3] */
    }
    if (rnd() % 2)
        rscalar(g, VKC_DTYPE_F32, (vkc_scalar){.f32 = rndf(-2.0f, 2.0f)}, true);
    uint32_t target = 1 + rnd() % 16;
    static const int ops[] = {
        VKC_OP_ADD,     VKC_OP_SUB,  VKC_OP_MUL,   VKC_OP_DIV,  VKC_OP_MIN,
        VKC_OP_MAX,     VKC_OP_FMA,  VKC_OP_ABS,   VKC_OP_NEG,  VKC_OP_SQRT,
        VKC_OP_RSQRT,   VKC_OP_EXP,  VKC_OP_LOG,   VKC_OP_TANH, VKC_OP_SIGMOID,
        VKC_OP_RELU,    VKC_OP_GELU, VKC_OP_CLAMP, VKC_OP_LT,   VKC_OP_LE,
        VKC_OP_GT,      VKC_OP_GE,   VKC_OP_EQ,    VKC_OP_NE,   VKC_OP_SELECT,
        VKC_OP_DROPOUT, -1 /* cast */};
    while (g->ops < target && g->nv < 100) {
        int op = ops[rnd() % VKC_ARRAY_COUNT(ops)];
        if (op == -1) {
            static const vkc_dtype ts[] = {VKC_DTYPE_F32, VKC_DTYPE_I32, VKC_DTYPE_U32};
            rpick(g, ts[rnd() % 3]);
            continue;
        }
        vkc_dtype t = VKC_DTYPE_F32;
        bool float_only = (op >= VKC_OP_SQRT && op <= VKC_OP_GELU && op != VKC_OP_RELU) ||
                          op == VKC_OP_DIV || op == VKC_OP_DROPOUT;
        if (!float_only && rnd() % 3 == 0)
            t = rnd() % 2 ? VKC_DTYPE_I32 : VKC_DTYPE_U32;
        if (op == VKC_OP_SELECT) {
            rval c = rpick(g, VKC_DTYPE_BOOL);
            rval a = rpick(g, t), b = rpick(g, t);
            rop(g, op, c, a, b, 3, t, fmax(a.mag, b.mag));
        } else if (op == VKC_OP_DROPOUT) {
            rval x = rguard(g, rpick(g, VKC_DTYPE_F32), 1e3);
            rval p = rscalar(g, VKC_DTYPE_F32, (vkc_scalar){.f32 = rndf(0.2f, 0.9f)}, false);
            rval s = rscalar(g, VKC_DTYPE_U32, (vkc_scalar){.u32 = rnd()}, false);
            rop(g, op, x, p, s, 3, VKC_DTYPE_F32, x.mag * 5.01); /* x * (1 / p) */
        } else if (op == VKC_OP_CLAMP) {
            rval x = rpick(g, t);
            rval lo = rconst(g, t, t == VKC_DTYPE_F32 ? -1.5 : 3.0);
            rval hi = rconst(g, t, t == VKC_DTYPE_F32 ? 1.5 : 500.0);
            rop(g, op, x, lo, hi, 3, t, 1.5);
        } else if (op == VKC_OP_DIV) {
            rval a = rpick(g, t), b = rpick(g, t);
            rval d = rpositive(g, b); /* in [0.5, 1e30 + 0.5] */
            a = rguard(g, a, 1e3);
            rop(g, op, a, d, d, 2, t, 2 * a.mag);
        } else if (op == VKC_OP_SQRT || op == VKC_OP_RSQRT || op == VKC_OP_LOG) {
            rval d = rpositive(g, rpick(g, t));
            double m = op == VKC_OP_SQRT ? sqrt(d.mag) : op == VKC_OP_RSQRT ? 1.5 : log(d.mag) + 1;
            rop(g, op, d, d, d, 1, t, m);
        } else if (op == VKC_OP_EXP) {
            rval a = rguard(g, rpick(g, t), 60);
            rop(g, op, a, a, a, 1, t, exp(a.mag));
        } else {
            uint32_t ar = op == VKC_OP_FMA ? 3 : (op >= VKC_OP_ABS && op <= VKC_OP_GELU) ? 1 : 2;
            rval a = rpick(g, t), b = ar > 1 ? rpick(g, t) : a, c = ar > 2 ? rpick(g, t) : a;
            if (t == VKC_DTYPE_F32 && rbound(op, a.mag, b.mag, c.mag) > RG_LIMIT) {
                a = rguard(g, a, 1e3);
                b = ar > 1 ? rguard(g, b, 1e3) : a;
                c = ar > 2 ? rguard(g, c, 1e3) : a;
            }
            bool cmp = op >= VKC_OP_LT && op <= VKC_OP_NE;
            rop(g, op, a, b, c, ar, cmp ? VKC_DTYPE_BOOL : t,
                cmp ? 0 : rbound(op, a.mag, b.mag, c.mag));
        }
        if (g->nsc + 2 > VKC_FUSE_MAX_SCALARS)
            break;
    }
    /* outputs: the last value and up to two others; maybe a reduction */
    uint32_t nout = 1 + rnd() % 3;
    rval outs[3];
    outs[0] = g->v[g->nv - 1];
    for (uint32_t o = 1; o < nout; o++)
        outs[o] = g->v[rnd() % g->nv];
    for (uint32_t o = 0; o < nout; o++)
        OK(ctx, vkc_fuse_output(g->f, outs[o].id, NULL));
    bool red = false;
    uint32_t red_out = 0;
    if (rnd() % 4 == 0) {
        for (uint32_t o = 0; o < nout && !red; o++)
            if (outs[o].t == VKC_DTYPE_F32) {
                red = true;
                red_out = o;
            }
        if (red)
            OK(ctx, vkc_fuse_reduce(g->f, outs[red_out].id, (vkc_reduce_op)(1 + rnd() % 4)));
    }
    uint64_t count = 1000 + rnd() % 4001;
    if (rnd() % 2)
        count &= ~3ull; /* the vec4 variant */
    tv *in[4] = {0};
    for (uint32_t i = 0; i < g->nin; i++) {
        in[i] = malloc(count * sizeof(tv));
        for (uint64_t k = 0; k < count; k++) {
            if (g->in_t[i] == VKC_DTYPE_F32)
                in[i][k].f = rndf(-3.0f, 3.0f);
            else if (g->in_t[i] == VKC_DTYPE_I32)
                in[i][k].i = (int32_t)(rnd() % 2001) - 1000;
            else
                in[i][k].u = rnd() % 2001;
        }
    }
    run_io io = {
        .n_in = g->nin, .n_out = nout, .n_sc = g->nsc, .sc = g->sc, .count = count, .reduce = red};
    for (uint32_t i = 0; i < g->nin; i++)
        io.in[i] = in[i];
    for (uint32_t o = 0; o < nout; o++) {
        io.fused[o] = malloc(count * sizeof(tv));
        io.unfused[o] = malloc(count * sizeof(tv));
    }
    run_graph(ctx, g->f, &io);
    for (uint32_t o = 0; o < nout; o++) {
        vkc_dtype t = outs[o].t;
        for (uint64_t k = 0; k < count; k++) {
            tv a = io.fused[o][k], b = io.unfused[o][k];
            bool same = a.u == b.u;
            /* every value is finite by construction: NaN or inf is a bug */
            if (!same && t == VKC_DTYPE_F32)
                same = isfinite(a.f) && isfinite(b.f) &&
                       fabs((double)a.f - b.f) <= 1e-5 * fmax(1.0, fabs(b.f));
            if (!same) {
                FILE *dump = fopen("test_fuse_failed.comp", "w");
                if (dump) {
                    fputs(vkc_fuse_source(g->f, count % 4 == 0), dump);
                    fclose(dump);
                }
                char fa[48], fb[48];
                fmt_tv(fa, sizeof fa, a, t);
                fmt_tv(fb, sizeof fb, b, t);
                uint32_t node = 0;
                for (uint32_t j = 0; j < g->nnd; j++)
                    if (g->nd[j].id == outs[o].id)
                        node = j;
                print_message("seed %llu: the graph with its CPU values at element %llu "
                              "(output %u is v%u; GLSL in test_fuse_failed.comp):\n",
                              (unsigned long long)seed, (unsigned long long)k, o, node);
                rprint(g, in, k);
                fail_msg("seed %llu (%u ops, %u inputs, count %llu): output %u (%s) element "
                         "%llu: fused %s unfused %s",
                         (unsigned long long)seed, g->ops, g->nin, (unsigned long long)count, o,
                         dtype_name(t), (unsigned long long)k, fa, fb);
            }
        }
    }
    if (red) {
        double asum = 0;
        for (uint64_t k = 0; k < count; k++)
            asum += fabs(io.fused[red_out][k].f);
        double d = fabs((double)io.red_fused - io.red_unfused);
        if (!(d <= 1e-5 * asum + 1e-6))
            fail_msg("seed %llu: reduction fused %.9g unfused %.9g (sum |x| %g)",
                     (unsigned long long)seed, io.red_fused, io.red_unfused, asum);
    }
    for (uint32_t o = 0; o < nout; o++) {
        free(io.fused[o]);
        free(io.unfused[o]);
    }
    for (uint32_t i = 0; i < 4; i++)
        free(in[i]);
    vkc_fuse_destroy(g->f);
    free(g);
}

static void test_random_graphs(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    for (uint64_t seed = 1; seed <= 200; seed++)
        random_graph_once(ctx, seed);
}

/* ---- cache ------------------------------------------------------------------ */

/* y = a_k * y + b_k, k = 1..8 */
static vkc_fuse *chain8(vkc_context *ctx)
{
    vkc_fuse *f = NULL;
    OK(ctx, vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "chain8"}, &f));
    vkc_value y;
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &y));
    for (int k = 0; k < 8; k++) {
        vkc_value a, b;
        OK(ctx, vkc_fuse_scalar(f, VKC_DTYPE_F32, &a));
        OK(ctx, vkc_fuse_scalar(f, VKC_DTYPE_F32, &b));
        OK(ctx, vkc_fuse_op(f, VKC_OP_FMA, (vkc_value[]){a, y, b}, 3, &y));
    }
    OK(ctx, vkc_fuse_output(f, y, NULL));
    return f;
}

static void check_chain(vkc_context *ctx, vkc_fuse *f, float scale)
{
    const uint64_t count = 4096;
    tv *x = malloc(count * sizeof(tv)), *gf = malloc(count * sizeof(tv)),
       *gu = malloc(count * sizeof(tv));
    vkc_scalar sc[16];
    for (int k = 0; k < 16; k++)
        sc[k].f32 = scale * (k % 2 ? 0.25f * (float)k : 1.0f - 0.05f * (float)k);
    for (uint64_t k = 0; k < count; k++)
        x[k].f = rndf(-1.0f, 1.0f);
    run_io io = {.n_in = 1,
                 .n_out = 1,
                 .n_sc = 16,
                 .in = {x},
                 .sc = sc,
                 .count = count,
                 .fused = {gf},
                 .unfused = {gu}};
    run_graph(ctx, f, &io);
    for (uint64_t k = 0; k < count; k++) {
        float y = x[k].f;
        for (int s = 0; s < 8; s++)
            y = fmaf(sc[2 * s].f32, y, sc[2 * s + 1].f32);
        /* 8 roundings, amplified by the later a_k: 1e-5 relative */
        double tol = 1e-5 * fmax(1.0, fabs(y));
        if (fabs(gf[k].f - y) > tol || fabs(gu[k].f - y) > tol)
            fail_msg("chain element %llu: fused %g unfused %g want %g", (unsigned long long)k,
                     gf[k].f, gu[k].f, y);
    }
    free(x);
    free(gf);
    free(gu);
}

static uint64_t compiles(vkc_context *ctx)
{
    vkc_stats st;
    OK(ctx, vkc_context_stats(ctx, &st));
    return st.shader_compiles;
}

static void test_cache(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    /* a fresh structure (a constant no other test uses), built twice */
    vkc_fuse *f1 = chain8(ctx);
    vkc_value k;
    uint64_t c0 = compiles(ctx);
    OK(ctx, vkc_fuse_build(f1));
    uint64_t c1 = compiles(ctx);
    vkc_fuse_info i1;
    OK(ctx, vkc_fuse_info_get(f1, &i1));
    assert_true(i1.vectorizable);
    assert_int_equal(i1.builds, 2); /* scalar and vec4 variants */
    vkc_fuse *f2 = chain8(ctx);
    OK(ctx, vkc_fuse_build(f2));
    vkc_fuse_info i2;
    OK(ctx, vkc_fuse_info_get(f2, &i2));
    assert_int_equal(i2.builds, 2);
    assert_int_equal(i2.compiles, 0);
    assert_int_equal(compiles(ctx), c1);
    assert_true(i1.structure_hash == i2.structure_hash);
    assert_string_equal(vkc_fuse_source(f1, true), vkc_fuse_source(f2, true));
    (void)c0;
    /* new scalar values: no compile, right results */
    uint64_t c2 = compiles(ctx);
    check_chain(ctx, f2, 1.0f);
    check_chain(ctx, f2, -0.5f);
    check_chain(ctx, f1, 2.0f);
    OK(ctx, vkc_fuse_info_get(f2, &i2));
    assert_int_equal(i2.compiles, 0);
    /* the unfused run compiles its per-op kernel once, then reuses it */
    uint64_t c3 = compiles(ctx);
    assert_true(c3 - c2 <= 2);
    check_chain(ctx, f2, 3.0f);
    assert_int_equal(compiles(ctx), c3);
    /* a structural change does compile */
    OK(ctx, vkc_fuse_constant(f2, VKC_DTYPE_F32, 1.25, &k));
    OK(ctx, vkc_fuse_output(f2, k, NULL));
    OK(ctx, vkc_fuse_build(f2));
    OK(ctx, vkc_fuse_info_get(f2, &i2));
    assert_true(i2.compiles >= 1);
    assert_true(i2.structure_hash != i1.structure_hash);
    vkc_fuse_destroy(f1);
    vkc_fuse_destroy(f2);
}

/* A second context with the same cache dir compiles nothing (the kernel
 * module's disk SPIR-V cache). */
static void test_disk_cache(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    vkc_fuse *f = chain8(ctx);
    OK(ctx, vkc_fuse_build(f));
    vkc_fuse_destroy(f);
    vkc_context *ctx2 = vkc_test_context_create(NULL);
    f = chain8(ctx2);
    OK(ctx2, vkc_fuse_build(f));
    vkc_stats st;
    OK(ctx2, vkc_context_stats(ctx2, &st));
    assert_int_equal(st.shader_compiles, 0);
    assert_true(st.spirv_cache_hits >= 2);
    check_chain(ctx2, f, 1.5f);
    vkc_fuse_destroy(f);
    vkc_test_context_destroy(ctx2);
}

/* ---- generated source (no device work) -------------------------------------- */

static void test_source(void **state)
{
    vkc_context *ctx = *state;
    vkc_fuse *f = chain8(ctx);
    const char *s = vkc_fuse_source(f, false);
    assert_non_null(s);
    assert_non_null(strstr(s, "fma(v1, v0, v2)"));
    assert_non_null(strstr(s, "if (n - i <= stride)")); /* wrap-safe grid stride */
    assert_null(strstr(s, "vec4"));
    const char *v = vkc_fuse_source(f, true);
    assert_non_null(v);
    assert_non_null(strstr(v, "vec4 d[]"));
    /* scalars are push constants, never literals in the source */
    assert_non_null(strstr(v, "float s15;"));
    vkc_fuse_destroy(f);
    /* a broadcast input: no vec4 variant */
    OK(ctx, vkc_fuse_create(ctx, NULL, &f));
    vkc_value x, b, y;
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &x));
    OK(ctx, vkc_fuse_input_ex(f, &(vkc_fuse_input_desc){.type = VKC_DTYPE_F32, .period = 7}, &b));
    OK(ctx, vkc_fuse_op(f, VKC_OP_ADD, (vkc_value[]){x, b}, 2, &y));
    OK(ctx, vkc_fuse_output(f, y, NULL));
    assert_non_null(strstr(vkc_fuse_source(f, false), "in1.d[i % 7u]"));
    vkc_test_quiet_errors(1);
    assert_null(vkc_fuse_source(f, true));
    vkc_test_quiet_errors(0);
    vkc_fuse_destroy(f);
}

/* Broadcast input (bias over rows), run on the device. */
static void test_broadcast(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    const uint32_t cols = 37, rows = 50, count = rows * cols;
    vkc_fuse *f = NULL;
    OK(ctx, vkc_fuse_create(ctx, NULL, &f));
    vkc_value x, b, y;
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &x));
    OK(ctx,
       vkc_fuse_input_ex(f, &(vkc_fuse_input_desc){.type = VKC_DTYPE_F32, .period = cols}, &b));
    OK(ctx, vkc_fuse_op(f, VKC_OP_ADD, (vkc_value[]){x, b}, 2, &y));
    OK(ctx, vkc_fuse_op(f, VKC_OP_RELU, &y, 1, &y));
    OK(ctx, vkc_fuse_output(f, y, NULL));
    tv *xs = malloc(count * sizeof(tv)), *bs = malloc(cols * sizeof(tv)),
       *gf = malloc(count * sizeof(tv)), *gu = malloc(count * sizeof(tv));
    for (uint32_t k = 0; k < count; k++)
        xs[k].f = rndf(-1, 1);
    for (uint32_t k = 0; k < cols; k++)
        bs[k].f = rndf(-1, 1);
    run_io io = {.n_in = 2,
                 .n_out = 1,
                 .in = {xs, bs},
                 .in_len = {0, cols},
                 .count = count,
                 .fused = {gf},
                 .unfused = {gu}};
    run_graph(ctx, f, &io);
    for (uint32_t k = 0; k < count; k++) {
        float w = xs[k].f + bs[k % cols].f;
        w = w > 0 ? w : 0;
        if (gf[k].f != w || gu[k].f != w)
            fail_msg("broadcast element %u: %g %g want %g", k, gf[k].f, gu[k].f, w);
    }
    free(xs);
    free(bs);
    free(gf);
    free(gu);
    vkc_fuse_destroy(f);
}

/* In place: y = 2y + 1 with the output bound to the input, fused and
 * unfused (which goes through a temporary and a copy). */
static void test_in_place(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    const uint64_t count = 2000;
    vkc_fuse *f = NULL;
    OK(ctx, vkc_fuse_create(ctx, NULL, &f));
    vkc_value y, two, one, z, w;
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &y));
    OK(ctx, vkc_fuse_constant(f, VKC_DTYPE_F32, 2.0, &two));
    OK(ctx, vkc_fuse_constant(f, VKC_DTYPE_F32, 1.0, &one));
    OK(ctx, vkc_fuse_op(f, VKC_OP_FMA, (vkc_value[]){two, y, one}, 3, &z));
    OK(ctx, vkc_fuse_op(f, VKC_OP_MUL, (vkc_value[]){y, y}, 2, &w)); /* reads y after z */
    OK(ctx, vkc_fuse_output(f, z, NULL));
    OK(ctx, vkc_fuse_output(f, w, NULL));
    float *h = malloc(count * 4), *r = malloc(count * 4), *sq = malloc(count * 4);
    for (uint64_t k = 0; k < count; k++)
        h[k] = (float)k * 0.5f;
    for (int mode = 0; mode < 2; mode++) {
        vkc_buffer *b = mkbuf(ctx, count * 4), *o2 = mkbuf(ctx, count * 4);
        OK(ctx, vkc_buffer_upload(b, 0, h, count * 4));
        vkc_seq *s = NULL;
        OK(ctx, vkc_seq_create(ctx, NULL, &s));
        vkc_arg in = {.buffer = b}, outs[2] = {{.buffer = b}, {.buffer = o2}};
        vkc_fuse_args a = {
            .inputs = &in, .input_count = 1, .outputs = outs, .output_count = 2, .count = count};
        OK(ctx, mode ? vkc_fuse_record_unfused(s, f, &a) : vkc_fuse_record(s, f, &a));
        OK(ctx, vkc_seq_end(s));
        vkc_ticket t;
        OK(ctx, vkc_seq_submit(s, &t));
        OK(ctx, vkc_wait(ctx, t, UINT64_MAX));
        OK(ctx, vkc_buffer_download(b, 0, r, count * 4));
        OK(ctx, vkc_buffer_download(o2, 0, sq, count * 4));
        for (uint64_t k = 0; k < count; k++)
            if (r[k] != 2.0f * h[k] + 1.0f || sq[k] != h[k] * h[k])
                fail_msg("in place (%s) element %llu: %g %g", mode ? "unfused" : "fused",
                         (unsigned long long)k, r[k], sq[k]);
        vkc_seq_destroy(s);
        vkc_buffer_destroy(b);
        vkc_buffer_destroy(o2);
    }
    free(h);
    free(r);
    free(sq);
    vkc_fuse_destroy(f);
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_bad_graphs(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    vkc_fuse *f = NULL, *g = NULL;
    OK(ctx, vkc_fuse_create(ctx, NULL, &f));
    OK(ctx, vkc_fuse_create(ctx, NULL, &g));
    vkc_value x, i, u, y, gx, out = 99;
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &x));
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_I32, &i));
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_U32, &u));
    OK(ctx, vkc_fuse_input(g, VKC_DTYPE_F32, &gx));
    /* dangling: 0, an id not created yet (what a cycle would need), a
     * foreign id */
    assert_int_equal(vkc_fuse_op(f, VKC_OP_ABS, (vkc_value[]){0}, 1, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(out, 0);
    assert_int_equal(vkc_fuse_op(f, VKC_OP_ABS, (vkc_value[]){u + 1}, 1, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_non_null(strstr(vkc_context_last_error(ctx), "cycle"));
    assert_int_equal(vkc_fuse_op(f, VKC_OP_ABS, (vkc_value[]){gx}, 1, &out),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkc_context_last_error(ctx), "another graph"));
    assert_int_equal(vkc_fuse_output(f, 12345, NULL), VKC_ERROR_INVALID_GRAPH);
    /* type mismatches */
    assert_int_equal(vkc_fuse_op(f, VKC_OP_ADD, (vkc_value[]){x, i}, 2, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_non_null(strstr(vkc_context_last_error(ctx), "cast"));
    assert_int_equal(vkc_fuse_op(f, VKC_OP_SQRT, &i, 1, &out), VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_op(f, VKC_OP_SELECT, (vkc_value[]){x, x, x}, 3, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_op(f, VKC_OP_DROPOUT, (vkc_value[]){x, x, i}, 3, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_op(f, VKC_OP_ADD, (vkc_value[]){x}, 1, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_op(f, (vkc_fuse_opcode)999, (vkc_value[]){x}, 1, &out),
                     VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_output_as(f, i, VKC_DTYPE_F32, NULL), VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_reduce(f, i, VKC_REDUCE_SUM), VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_scalar(f, VKC_DTYPE_BOOL, &out), VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_input(f, VKC_DTYPE_BOOL, &out), VKC_ERROR_INVALID_GRAPH);
    assert_int_equal(vkc_fuse_constant(f, VKC_DTYPE_U32, -1.0, &out), VKC_ERROR_INVALID_GRAPH);
    /* the first error is latched: building fails even though later calls
     * were fine */
    OK(ctx, vkc_fuse_op(f, VKC_OP_NEG, &x, 1, &y));
    OK(ctx, vkc_fuse_output(f, y, NULL));
    assert_int_equal(vkc_fuse_build(f), VKC_ERROR_INVALID_GRAPH);
    assert_null(vkc_fuse_source(f, false));
    /* no output */
    assert_int_equal(vkc_fuse_build(g), VKC_ERROR_INVALID_GRAPH);
    /* bad handles */
    assert_int_equal(vkc_fuse_build(NULL), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_fuse_create(ctx, NULL, NULL), VKC_ERROR_INVALID_ARGUMENT);
    vkc_fuse_destroy(NULL);
    vkc_fuse_destroy(f);
    vkc_fuse_destroy(g);
    vkc_test_quiet_errors(0);
}

/* Value ids name their graph for good: with a 12-bit graph tag, the
 * 4,096th graph after A took A's tag and accepted A's ids as its own. */
static void test_foreign_ids_many_graphs(void **state)
{
    vkc_context *ctx = *state;
    vkc_test_quiet_errors(1);
    vkc_fuse *a = NULL, *b = NULL;
    OK(ctx, vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "A"}, &a));
    vkc_value ax, ay;
    OK(ctx, vkc_fuse_input(a, VKC_DTYPE_F32, &ax));
    OK(ctx, vkc_fuse_op(a, VKC_OP_NEG, &ax, 1, &ay));
    for (int i = 0; i < 4200; i++) {
        vkc_fuse *t = NULL;
        OK(ctx, vkc_fuse_create(ctx, NULL, &t));
        vkc_value v;
        OK(ctx, vkc_fuse_input(t, VKC_DTYPE_F32, &v));
        /* every graph between refuses A's ids, not only the 4,096th */
        vkc_value out = 99;
        assert_int_equal(vkc_fuse_op(t, VKC_OP_ABS, &ax, 1, &out), VKC_ERROR_INVALID_ARGUMENT);
        assert_int_equal(out, 0);
        vkc_fuse_destroy(t);
    }
    OK(ctx, vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "B"}, &b));
    vkc_value bx, by = 99;
    OK(ctx, vkc_fuse_input(b, VKC_DTYPE_F32, &bx));
    assert_true(bx != ax); /* the same position in its graph, another id */
    assert_int_equal(vkc_fuse_op(b, VKC_OP_ABS, &ay, 1, &by), VKC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkc_context_last_error(ctx), "fusion graph \"B\""));
    assert_non_null(strstr(vkc_context_last_error(ctx), "another graph"));
    assert_int_equal(vkc_fuse_output(b, ax, NULL), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_fuse_reduce(b, ax, VKC_REDUCE_SUM), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_fuse_cast(b, ax, VKC_DTYPE_I32, &by), VKC_ERROR_INVALID_ARGUMENT);
    /* latched: B does not build */
    OK(ctx, vkc_fuse_output(b, bx, NULL));
    assert_int_equal(vkc_fuse_build(b), VKC_ERROR_INVALID_GRAPH);
    /* A's ids still work in A */
    OK(ctx, vkc_fuse_output(a, ay, NULL));
    OK(ctx, vkc_fuse_build(a));
    vkc_fuse_destroy(a);
    vkc_fuse_destroy(b);
    vkc_test_quiet_errors(0);
}

static void test_bad_records(void **state)
{
    vkc_context *ctx = *state;
    NEED_KERNELS(ctx);
    vkc_test_quiet_errors(1);
    vkc_fuse *f = NULL;
    OK(ctx, vkc_fuse_create(ctx, NULL, &f));
    vkc_value x, y, z;
    OK(ctx, vkc_fuse_input(f, VKC_DTYPE_F32, &x));
    OK(ctx, vkc_fuse_op(f, VKC_OP_EXP, &x, 1, &y));
    OK(ctx, vkc_fuse_op(f, VKC_OP_NEG, &y, 1, &z));
    OK(ctx, vkc_fuse_output(f, y, NULL));
    OK(ctx, vkc_fuse_output(f, z, NULL));
    vkc_buffer *b = mkbuf(ctx, 4096), *c = mkbuf(ctx, 4096), *small = mkbuf(ctx, 64);
    vkc_seq *s = NULL;
    OK(ctx, vkc_seq_create(ctx, NULL, &s));
    vkc_arg in = {.buffer = b};
    vkc_arg outs[2] = {{.buffer = c}, {.buffer = c, .offset = 2048}};
    vkc_fuse_args a = {
        .inputs = &in, .input_count = 1, .outputs = outs, .output_count = 2, .count = 512};
    OK(ctx, vkc_fuse_record(s, f, &a));
    /* partial overlap of an output with the input */
    vkc_arg bad[2] = {{.buffer = b, .offset = 16}, {.buffer = c}};
    a.outputs = bad;
    assert_int_equal(vkc_fuse_record(s, f, &a), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_fuse_record_unfused(s, f, &a), VKC_ERROR_INVALID_ARGUMENT);
    /* two outputs overlapping */
    vkc_arg both[2] = {{.buffer = c}, {.buffer = c, .offset = 1024}};
    a.outputs = both;
    assert_int_equal(vkc_fuse_record(s, f, &a), VKC_ERROR_INVALID_ARGUMENT);
    /* too small, wrong counts, no scalars where needed, count 0 */
    vkc_arg tiny[2] = {{.buffer = small}, {.buffer = c}};
    a.outputs = tiny;
    assert_int_equal(vkc_fuse_record(s, f, &a), VKC_ERROR_MISMATCH);
    a.outputs = outs;
    a.output_count = 1;
    assert_int_equal(vkc_fuse_record(s, f, &a), VKC_ERROR_MISMATCH);
    a.output_count = 2;
    a.count = 0;
    assert_int_equal(vkc_fuse_record(s, f, &a), VKC_ERROR_LIMIT);
    a.count = 512;
    a.reduce.buffer = small;
    assert_int_equal(vkc_fuse_record(s, f, &a), VKC_ERROR_MISMATCH);
    a.reduce.buffer = NULL;
    /* the sequence still works after the rejected calls */
    OK(ctx, vkc_seq_end(s));
    vkc_ticket t;
    OK(ctx, vkc_seq_submit(s, &t));
    OK(ctx, vkc_wait(ctx, t, UINT64_MAX));
    vkc_seq_destroy(s);
    /* GLSL that does not compile: COMPILE with the compiler's message,
     * nothing cached, the graph usable again once the text is gone */
    vkc_fuse *g = NULL;
    OK(ctx, vkc_fuse_create(ctx, &(vkc_fuse_desc){.name = "broken"}, &g));
    OK(ctx, vkc_fuse_input(g, VKC_DTYPE_F32, &x));
    OK(ctx, vkc_fuse_output(g, x, NULL));
    OK(ctx, vkc__fuse_debug_append(g, "this is not glsl;\n"));
    assert_int_equal(vkc_fuse_build(g), VKC_ERROR_COMPILE);
    assert_non_null(strstr(vkc_context_last_error(ctx), "broken"));
    OK(ctx, vkc__fuse_debug_append(g, NULL));
    OK(ctx, vkc_fuse_build(g));
    vkc_fuse_destroy(g);
    vkc_buffer_destroy(b);
    vkc_buffer_destroy(c);
    vkc_buffer_destroy(small);
    vkc_fuse_destroy(f);
    vkc_test_quiet_errors(0);
}

/* A graph left alive is destroyed with its context (LSan checks). */
static void test_leftover(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_fuse *f = chain8(ctx);
    (void)f;
    vkc_test_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source),
        cmocka_unit_test(test_bad_graphs),
        cmocka_unit_test(test_foreign_ids_many_graphs),
        cmocka_unit_test(test_every_op),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_casts),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_disk_cache),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_random_graphs),
        cmocka_unit_test(test_leftover),
    };
    return cmocka_run_group_tests(tests, vkc_test_setup, vkc_test_teardown);
}
