/* The completion epilogue spliced into a kernel given as SPIR-V.
 *
 * A GLSL kernel gets the epilogue as source (shaders/include/
 * vkc_epilogue.glsl, glsl.c); a kernel from SPIR-V has no source to append
 * to, so its submissions ended with the completion marker: a barrier and a
 * one-invocation dispatch, about 3 us of its round trip on an H100 (8.17 us
 * against GLSL's 5.18, vkc-bench reuse, job Z16 of 2026-12-06). This file
 * writes the same epilogue into the module itself, for its second pipeline:
 *
 *   - the entry point's function keeps its <id> but becomes a new function
 *     that calls the kernel's own body (given a fresh <id>), then runs the
 *     epilogue: so OpEntryPoint, OpExecutionMode and OpName need no change,
 *     and every return of the body comes back to it;
 *   - the epilogue is the GLSL one instruction for instruction: the five
 *     spec constants 2030..2034 (form, the count block's and the host
 *     word's device addresses), the workgroup barrier, the arrival word,
 *     the count; the address model becomes PhysicalStorageBuffer64 (the
 *     capability and, before SPIR-V 1.5, its extension added) so the
 *     addresses can be followed, which changes nothing for the code that
 *     was there;
 *   - gl_LocalInvocationIndex and gl_NumWorkGroups are the module's own
 *     variables where it has them, else new ones, added to the entry
 *     point's interface; types that SPIR-V allows once (void, bool, uint,
 *     uvec2, uvec3) are the module's where it declares them.
 *
 * Not for (the marker stays, and the reason goes to the log): the Vulkan
 * memory model (Coherent is not allowed there), another address model than
 * Logical or PhysicalStorageBuffer64, the Kernel capability, modules with
 * the debug-info instruction sets (their function definitions name the
 * entry's <id>), a module that already uses spec ids 2030..2034, or
 * built-ins of other types than the ones above. The result is validated
 * (SPIRV-Tools, as every module vkc takes is) before any pipeline is made
 * from it; one that fails keeps the marker too: checked, not assumed.
 *
 * Owns no state; pure function of the words. epilogue.c calls it. */
#include "vkc_internal.h"

#include <stdarg.h>
#include <string.h>

enum {
    SPV_OP_EXTENSION = 10,
    SPV_OP_EXT_INST_IMPORT = 11,
    SPV_OP_MEMORY_MODEL = 14,
    SPV_OP_ENTRY_POINT = 15,
    SPV_OP_CAPABILITY = 17,
    SPV_OP_TYPE_VOID = 19,
    SPV_OP_TYPE_BOOL = 20,
    SPV_OP_TYPE_INT = 21,
    SPV_OP_TYPE_VECTOR = 23,
    SPV_OP_TYPE_STRUCT = 30,
    SPV_OP_TYPE_POINTER = 32,
    SPV_OP_CONSTANT = 43,
    SPV_OP_SPEC_CONSTANT = 50,
    SPV_OP_SPEC_CONSTANT_COMPOSITE = 51,
    SPV_OP_FUNCTION = 54,
    SPV_OP_FUNCTION_END = 56,
    SPV_OP_FUNCTION_CALL = 57,
    SPV_OP_VARIABLE = 59,
    SPV_OP_LOAD = 61,
    SPV_OP_STORE = 62,
    SPV_OP_ACCESS_CHAIN = 65,
    SPV_OP_DECORATE = 71,
    SPV_OP_MEMBER_DECORATE = 72,
    SPV_OP_COMPOSITE_EXTRACT = 81,
    SPV_OP_BITCAST = 124,
    SPV_OP_IADD = 128,
    SPV_OP_IMUL = 132,
    SPV_OP_IEQUAL = 170,
    SPV_OP_INOT_EQUAL = 171,
    SPV_OP_BITWISE_AND = 199,
    SPV_OP_CONTROL_BARRIER = 224,
    SPV_OP_MEMORY_BARRIER = 225,
    SPV_OP_ATOMIC_STORE = 228,
    SPV_OP_ATOMIC_EXCHANGE = 229,
    SPV_OP_ATOMIC_IADD = 234,
    SPV_OP_PHI = 245,
    SPV_OP_SELECTION_MERGE = 247,
    SPV_OP_LABEL = 248,
    SPV_OP_BRANCH = 249,
    SPV_OP_BRANCH_CONDITIONAL = 250,
    SPV_OP_RETURN = 253,
};
enum {
    SPV_CAP_KERNEL = 6,
    SPV_CAP_PSB = 5347, /* PhysicalStorageBufferAddresses */
    SPV_ADDR_LOGICAL = 0,
    SPV_ADDR_PSB64 = 5348,
    SPV_MODEL_VULKAN = 3,
    SPV_EXEC_GLCOMPUTE = 5,
    SPV_SC_INPUT = 1,
    SPV_SC_PSB = 5349,
    SPV_DEC_SPEC_ID = 1,
    SPV_DEC_BLOCK = 2,
    SPV_DEC_BUILTIN = 11,
    SPV_DEC_COHERENT = 23,
    SPV_DEC_OFFSET = 35,
    SPV_BI_NUM_WORKGROUPS = 24,
    SPV_BI_LOCAL_INDEX = 29,
    /* Memory semantics, as glslang writes the GLSL epilogue's (its scopes
     * are the constants 1, Device, and 2, Workgroup). */
    SPV_SEM_ACQREL_UNIFORM = 0x48,      /* AcquireRelease | UniformMemory */
    SPV_SEM_ACQREL_UNIFORM_IMG = 0x848, /* ... | ImageMemory */
    SPV_SEM_ACQREL_WORKGROUP = 0x108,   /* AcquireRelease | WorkgroupMemory */
    SPV_SEM_UNIFORM = 0x40,
    SPV_MEM_ALIGNED = 2,
};

/* The growing output. */
typedef struct {
    uint32_t *w;
    size_t n, cap;
    bool oom;
} vkc__words;

static void vkc__put(vkc__words *o, uint32_t v)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 256;
        uint32_t *p = o->oom ? NULL : vkc__realloc(o->w, cap * sizeof(*p));
        if (!p) {
            o->oom = true;
            return;
        }
        o->w = p;
        o->cap = cap;
    }
    o->w[o->n++] = v;
}

/* One instruction: opcode, then `count` operand words. */
static void vkc__inst(vkc__words *o, uint32_t op, uint32_t count, ...)
{
    va_list ap;
    va_start(ap, count);
    vkc__put(o, ((count + 1u) << 16) | op);
    for (uint32_t i = 0; i < count; ++i)
        vkc__put(o, va_arg(ap, uint32_t));
    va_end(ap);
}

static void vkc__copy(vkc__words *o, const uint32_t *in, uint32_t wc)
{
    for (uint32_t i = 0; i < wc; ++i)
        vkc__put(o, in[i]);
}

/* What the scan finds. */
typedef struct {
    size_t ep, first_decl, first_fn; /* word offsets: our entry point; end of the annotations */
    uint32_t fn, fn_void, fn_type;   /* the entry's function, its return and function types */
    uint32_t t_void, t_uint, t_bool, t_v2, t_v3;
    uint32_t lii, nwg; /* the built-in variables, where declared */
    bool lii_listed, nwg_listed, cap_psb, ext_psb;
} vkc__splice_scan;

/* The string operand at in[i] equals s (nul-padded words). */
static bool vkc__str_is(const uint32_t *in, uint32_t i, uint32_t wc, const char *s)
{
    const size_t len = strlen(s);
    if ((size_t)(wc - i) * 4 < len + 1)
        return false;
    return memcmp(&in[i], s, len) == 0 && ((const char *)&in[i])[len] == '\0';
}

/* The variable v's pointee type is `type`, in the Input class. */
static bool vkc__input_of(const uint32_t *w, size_t n, uint32_t v, uint32_t type)
{
    uint32_t ptr = 0;
    for (size_t i = 5; i < n; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == SPV_OP_VARIABLE && w[i + 2] == v)
            ptr = w[i + 1];
    for (size_t i = 5; ptr && i < n; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == SPV_OP_TYPE_POINTER && w[i + 1] == ptr)
            return w[i + 2] == SPV_SC_INPUT && w[i + 3] == type;
    return false;
}

static bool vkc__annotation(uint32_t op)
{
    /* The preamble, debug and annotation sections: everything before the
     * first type (OpSourceContinued 2 .. OpString 7 but OpUndef, module
     * processed, decorations and their groups, the string / id forms). */
    return (op <= 7 && op != 1) || op == 10 || op == 11 || (op >= 14 && op <= 17) || op == 330 ||
           op == 331 || (op >= 71 && op <= 75) || op == 332 || op == 5632 || op == 5633;
}

static const char *vkc__splice_scan_module(const uint32_t *w, size_t n, const char *entry,
                                           vkc__splice_scan *s)
{
    memset(s, 0, sizeof(*s));
    const uint32_t version = w[1];
    bool have_decl = false;
    for (size_t i = 5; i < n;) {
        const uint32_t op = w[i] & 0xffffu, wc = w[i] >> 16;
        if (!wc || i + wc > n)
            return "malformed instruction stream";
        const uint32_t *in = &w[i];
        if (!have_decl && !vkc__annotation(op)) {
            s->first_decl = i;
            have_decl = true;
        }
        switch (op) {
        case SPV_OP_CAPABILITY:
            if (in[1] == SPV_CAP_KERNEL)
                return "a Kernel module";
            s->cap_psb |= in[1] == SPV_CAP_PSB;
            break;
        case SPV_OP_EXTENSION:
            s->ext_psb |= vkc__str_is(in, 1, wc, "SPV_KHR_physical_storage_buffer") ||
                          vkc__str_is(in, 1, wc, "SPV_EXT_physical_storage_buffer");
            break;
        case SPV_OP_EXT_INST_IMPORT:
            if (vkc__str_is(in, 2, wc, "OpenCL.DebugInfo.100") ||
                vkc__str_is(in, 2, wc, "NonSemantic.Shader.DebugInfo.100"))
                return "debug-info instructions";
            break;
        case SPV_OP_MEMORY_MODEL:
            if (in[1] != SPV_ADDR_LOGICAL && in[1] != SPV_ADDR_PSB64)
                return "a physical address model";
            if (in[2] == SPV_MODEL_VULKAN)
                return "the Vulkan memory model";
            break;
        case SPV_OP_ENTRY_POINT:
            if (in[1] == SPV_EXEC_GLCOMPUTE && vkc__str_is(in, 3, wc, entry)) {
                s->ep = i;
                s->fn = in[2];
            }
            break;
        case SPV_OP_DECORATE:
            if (wc >= 4 && in[2] == SPV_DEC_SPEC_ID && in[3] >= VKC_EPILOGUE_SPEC_ID &&
                in[3] < VKC_EPILOGUE_SPEC_ID + 5u)
                return "spec ids 2030..2034 are the module's own";
            if (wc >= 4 && in[2] == SPV_DEC_BUILTIN && in[3] == SPV_BI_LOCAL_INDEX)
                s->lii = in[1];
            if (wc >= 4 && in[2] == SPV_DEC_BUILTIN && in[3] == SPV_BI_NUM_WORKGROUPS)
                s->nwg = in[1];
            break;
        case SPV_OP_TYPE_VOID:
            s->t_void = in[1];
            break;
        case SPV_OP_TYPE_BOOL:
            s->t_bool = in[1];
            break;
        case SPV_OP_TYPE_INT:
            if (in[2] == 32 && in[3] == 0)
                s->t_uint = in[1];
            break;
        case SPV_OP_TYPE_VECTOR:
            if (s->t_uint && in[2] == s->t_uint && in[3] == 2)
                s->t_v2 = in[1];
            if (s->t_uint && in[2] == s->t_uint && in[3] == 3)
                s->t_v3 = in[1];
            break;
        case SPV_OP_FUNCTION:
            if (!s->first_fn)
                s->first_fn = i;
            if (in[2] == s->fn && s->fn) {
                s->fn_void = in[1];
                s->fn_type = in[4];
            }
            break;
        default:
            break;
        }
        i += wc;
    }
    if (!s->ep)
        return "no GLCompute entry point of that name";
    if (!s->fn_void || !s->first_fn || !s->first_decl)
        return "the entry point's function is not defined";
    if (s->fn_void != s->t_void)
        return "the entry point's function does not return void";
    if (version < 0x00010000u || version > 0x00010600u)
        return "an unknown SPIR-V version";
    /* The built-ins already declared: the epilogue reads them as uint and
     * uvec3. */
    if (s->lii && (!s->t_uint || !vkc__input_of(w, n, s->lii, s->t_uint)))
        return "gl_LocalInvocationIndex of another type";
    if (s->nwg && (!s->t_v3 || !vkc__input_of(w, n, s->nwg, s->t_v3)))
        return "gl_NumWorkGroups of another type";
    /* The interface follows the name, which the scan matched to `entry`:
     * its bytes and a nul, padded to words. */
    const uint32_t *ep = &w[s->ep];
    for (size_t i = 3 + strlen(entry) / 4 + 1; i < (ep[0] >> 16); ++i) {
        s->lii_listed |= s->lii && ep[i] == s->lii;
        s->nwg_listed |= s->nwg && ep[i] == s->nwg;
    }
    return NULL;
}

/* The ids the splice adds, from the module's bound up. */
typedef struct {
    uint32_t body; /* the kernel's own function, renamed */
    uint32_t t_uint, t_bool, t_v2, t_v3, p_in_uint, p_in_v3, lii, nwg;
    uint32_t t_dev, t_host, p_dev, p_host, p_uint;
    uint32_t c0, c1, c2, c4, c64, c_acqrel, c_acqrel_img, c_acqrel_wg;
    uint32_t form, dev_lo, dev_hi, host_lo, host_hi, dev, host;
} vkc__splice_ids;

/* Decorations, after the module's own. */
static void vkc__splice_decorations(vkc__words *o, const vkc__splice_scan *s,
                                    const vkc__splice_ids *d)
{
    if (!s->lii)
        vkc__inst(o, SPV_OP_DECORATE, 3, d->lii, SPV_DEC_BUILTIN, SPV_BI_LOCAL_INDEX);
    if (!s->nwg)
        vkc__inst(o, SPV_OP_DECORATE, 3, d->nwg, SPV_DEC_BUILTIN, SPV_BI_NUM_WORKGROUPS);
    /* The count block: the count (word 0) and the arrival word (word 16, a
     * line away); the host word, coherent. */
    vkc__inst(o, SPV_OP_MEMBER_DECORATE, 4, d->t_dev, 0u, SPV_DEC_OFFSET, 0u);
    vkc__inst(o, SPV_OP_MEMBER_DECORATE, 4, d->t_dev, 1u, SPV_DEC_OFFSET, 64u);
    vkc__inst(o, SPV_OP_DECORATE, 2, d->t_dev, SPV_DEC_BLOCK);
    vkc__inst(o, SPV_OP_MEMBER_DECORATE, 4, d->t_host, 0u, SPV_DEC_OFFSET, 0u);
    vkc__inst(o, SPV_OP_MEMBER_DECORATE, 3, d->t_host, 0u, SPV_DEC_COHERENT);
    vkc__inst(o, SPV_OP_DECORATE, 2, d->t_host, SPV_DEC_BLOCK);
    const uint32_t spec[5] = {d->form, d->dev_lo, d->dev_hi, d->host_lo, d->host_hi};
    for (uint32_t i = 0; i < 5; ++i)
        vkc__inst(o, SPV_OP_DECORATE, 3, spec[i], SPV_DEC_SPEC_ID, VKC_EPILOGUE_SPEC_ID + i);
}

/* Types, constants and variables, after the module's own. */
static void vkc__splice_declarations(vkc__words *o, const vkc__splice_scan *s,
                                     const vkc__splice_ids *d)
{
    if (!s->t_uint)
        vkc__inst(o, SPV_OP_TYPE_INT, 3, d->t_uint, 32u, 0u);
    if (!s->t_bool)
        vkc__inst(o, SPV_OP_TYPE_BOOL, 1, d->t_bool);
    if (!s->t_v2)
        vkc__inst(o, SPV_OP_TYPE_VECTOR, 3, d->t_v2, d->t_uint, 2u);
    if (!s->t_v3)
        vkc__inst(o, SPV_OP_TYPE_VECTOR, 3, d->t_v3, d->t_uint, 3u);
    if (!s->lii) {
        vkc__inst(o, SPV_OP_TYPE_POINTER, 3, d->p_in_uint, SPV_SC_INPUT, d->t_uint);
        vkc__inst(o, SPV_OP_VARIABLE, 3, d->p_in_uint, d->lii, SPV_SC_INPUT);
    }
    if (!s->nwg) {
        vkc__inst(o, SPV_OP_TYPE_POINTER, 3, d->p_in_v3, SPV_SC_INPUT, d->t_v3);
        vkc__inst(o, SPV_OP_VARIABLE, 3, d->p_in_v3, d->nwg, SPV_SC_INPUT);
    }
    vkc__inst(o, SPV_OP_TYPE_STRUCT, 3, d->t_dev, d->t_uint, d->t_uint);
    vkc__inst(o, SPV_OP_TYPE_STRUCT, 2, d->t_host, d->t_uint);
    vkc__inst(o, SPV_OP_TYPE_POINTER, 3, d->p_dev, SPV_SC_PSB, d->t_dev);
    vkc__inst(o, SPV_OP_TYPE_POINTER, 3, d->p_host, SPV_SC_PSB, d->t_host);
    vkc__inst(o, SPV_OP_TYPE_POINTER, 3, d->p_uint, SPV_SC_PSB, d->t_uint);
    const uint32_t cid[8] = {d->c0,  d->c1,       d->c2,           d->c4,
                             d->c64, d->c_acqrel, d->c_acqrel_img, d->c_acqrel_wg};
    const uint32_t cval[8] = {0u,
                              1u,
                              2u,
                              4u,
                              SPV_SEM_UNIFORM,
                              SPV_SEM_ACQREL_UNIFORM,
                              SPV_SEM_ACQREL_UNIFORM_IMG,
                              SPV_SEM_ACQREL_WORKGROUP};
    for (uint32_t i = 0; i < 8; ++i)
        vkc__inst(o, SPV_OP_CONSTANT, 3, d->t_uint, cid[i], cval[i]);
    const uint32_t spec[5] = {d->form, d->dev_lo, d->dev_hi, d->host_lo, d->host_hi};
    for (uint32_t i = 0; i < 5; ++i)
        vkc__inst(o, SPV_OP_SPEC_CONSTANT, 3, d->t_uint, spec[i], 0u);
    vkc__inst(o, SPV_OP_SPEC_CONSTANT_COMPOSITE, 4, d->t_v2, d->dev, d->dev_lo, d->dev_hi);
    vkc__inst(o, SPV_OP_SPEC_CONSTANT_COMPOSITE, 4, d->t_v2, d->host, d->host_lo, d->host_hi);
}

/* if (cond) return; then the block `next`. */
static void vkc__return_if(vkc__words *o, uint32_t cond, uint32_t *id)
{
    const uint32_t ret = (*id)++, next = (*id)++;
    vkc__inst(o, SPV_OP_SELECTION_MERGE, 2, next, 0u);
    vkc__inst(o, SPV_OP_BRANCH_CONDITIONAL, 3, cond, ret, next);
    vkc__inst(o, SPV_OP_LABEL, 1, ret);
    vkc__inst(o, SPV_OP_RETURN, 0);
    vkc__inst(o, SPV_OP_LABEL, 1, next);
}

/* r = scoped ? atomicAdd(p, 1, device, acquire-release) : atomicAdd(p, 1):
 * two blocks and a phi, ending in the block after them. */
static uint32_t vkc__add_one(vkc__words *o, const vkc__splice_ids *d, uint32_t scoped, uint32_t p,
                             uint32_t *id)
{
    const uint32_t a = (*id)++, b = (*id)++, merge = (*id)++, ra = (*id)++, rb = (*id)++,
                   r = (*id)++;
    vkc__inst(o, SPV_OP_SELECTION_MERGE, 2, merge, 0u);
    vkc__inst(o, SPV_OP_BRANCH_CONDITIONAL, 3, scoped, a, b);
    vkc__inst(o, SPV_OP_LABEL, 1, a);
    vkc__inst(o, SPV_OP_ATOMIC_IADD, 6, d->t_uint, ra, p, d->c1, d->c_acqrel, d->c1);
    vkc__inst(o, SPV_OP_BRANCH, 1, merge);
    vkc__inst(o, SPV_OP_LABEL, 1, b);
    vkc__inst(o, SPV_OP_ATOMIC_IADD, 6, d->t_uint, rb, p, d->c1, d->c0, d->c1);
    vkc__inst(o, SPV_OP_BRANCH, 1, merge);
    vkc__inst(o, SPV_OP_LABEL, 1, merge);
    vkc__inst(o, SPV_OP_PHI, 6, d->t_uint, r, ra, a, rb, b);
    return r;
}

/* The entry point's new function (shaders/include/vkc_epilogue.glsl's
 * main, in the same order). */
static void vkc__splice_function(vkc__words *o, const vkc__splice_scan *s, const vkc__splice_ids *d,
                                 uint32_t *id)
{
    const uint32_t u = d->t_uint, b = d->t_bool;
    vkc__inst(o, SPV_OP_FUNCTION, 4, s->t_void, s->fn, 0u, s->fn_type);
    vkc__inst(o, SPV_OP_LABEL, 1, (*id)++);
    vkc__inst(o, SPV_OP_FUNCTION_CALL, 3, s->t_void, (*id)++, d->body);
    const uint32_t off = (*id)++;
    vkc__inst(o, SPV_OP_IEQUAL, 4, b, off, d->form, d->c0);
    vkc__return_if(o, off, id);
    /* Every invocation of the workgroup is done before its arrival. */
    const uint32_t f4 = (*id)++, scoped = (*id)++, bs = (*id)++, bp = (*id)++, joined = (*id)++;
    vkc__inst(o, SPV_OP_BITWISE_AND, 4, u, f4, d->form, d->c4);
    vkc__inst(o, SPV_OP_INOT_EQUAL, 4, b, scoped, f4, d->c0);
    vkc__inst(o, SPV_OP_SELECTION_MERGE, 2, joined, 0u);
    vkc__inst(o, SPV_OP_BRANCH_CONDITIONAL, 3, scoped, bs, bp);
    vkc__inst(o, SPV_OP_LABEL, 1, bs);
    vkc__inst(o, SPV_OP_CONTROL_BARRIER, 3, d->c2, d->c2, d->c_acqrel_img);
    vkc__inst(o, SPV_OP_BRANCH, 1, joined);
    vkc__inst(o, SPV_OP_LABEL, 1, bp);
    vkc__inst(o, SPV_OP_MEMORY_BARRIER, 2, d->c1, d->c_acqrel);
    vkc__inst(o, SPV_OP_CONTROL_BARRIER, 3, d->c2, d->c2, d->c_acqrel_wg);
    vkc__inst(o, SPV_OP_BRANCH, 1, joined);
    vkc__inst(o, SPV_OP_LABEL, 1, joined);
    const uint32_t li = (*id)++, not_first = (*id)++;
    vkc__inst(o, SPV_OP_LOAD, 3, u, li, d->lii);
    vkc__inst(o, SPV_OP_INOT_EQUAL, 4, b, not_first, li, d->c0);
    vkc__return_if(o, not_first, id);
    /* The group count; one workgroup is the last by itself. */
    const uint32_t dev = (*id)++, nw = (*id)++, gx = (*id)++, gy = (*id)++, gz = (*id)++,
                   gxy = (*id)++, groups = (*id)++, several = (*id)++, arrivals = (*id)++,
                   many = (*id)++, counted = (*id)++;
    vkc__inst(o, SPV_OP_BITCAST, 3, d->p_dev, dev, d->dev);
    vkc__inst(o, SPV_OP_LOAD, 3, d->t_v3, nw, d->nwg);
    vkc__inst(o, SPV_OP_COMPOSITE_EXTRACT, 4, u, gx, nw, 0u);
    vkc__inst(o, SPV_OP_COMPOSITE_EXTRACT, 4, u, gy, nw, 1u);
    vkc__inst(o, SPV_OP_COMPOSITE_EXTRACT, 4, u, gz, nw, 2u);
    vkc__inst(o, SPV_OP_IMUL, 4, u, gxy, gx, gy);
    vkc__inst(o, SPV_OP_IMUL, 4, u, groups, gxy, gz);
    vkc__inst(o, SPV_OP_INOT_EQUAL, 4, b, several, groups, d->c1);
    vkc__inst(o, SPV_OP_ACCESS_CHAIN, 4, d->p_uint, arrivals, dev, d->c1);
    vkc__inst(o, SPV_OP_SELECTION_MERGE, 2, counted, 0u);
    vkc__inst(o, SPV_OP_BRANCH_CONDITIONAL, 3, several, many, counted);
    vkc__inst(o, SPV_OP_LABEL, 1, many);
    const uint32_t a = vkc__add_one(o, d, scoped, arrivals, id);
    const uint32_t a1 = (*id)++, not_last = (*id)++;
    vkc__inst(o, SPV_OP_IADD, 4, u, a1, a, d->c1);
    vkc__inst(o, SPV_OP_INOT_EQUAL, 4, b, not_last, a1, groups);
    vkc__return_if(o, not_last, id);
    /* The last arrival: every other workgroup's add came before its own. */
    vkc__inst(o, SPV_OP_ATOMIC_STORE, 4, arrivals, d->c1, d->c64, d->c0);
    vkc__inst(o, SPV_OP_BRANCH, 1, counted);
    vkc__inst(o, SPV_OP_LABEL, 1, counted);
    /* The count, published to the host word. */
    const uint32_t np = (*id)++;
    vkc__inst(o, SPV_OP_ACCESS_CHAIN, 4, d->p_uint, np, dev, d->c0);
    const uint32_t before = vkc__add_one(o, d, scoped, np, id);
    const uint32_t c = (*id)++, host = (*id)++, hp = (*id)++, f2 = (*id)++, xchg = (*id)++,
                   bx = (*id)++, bw = (*id)++, done = (*id)++;
    vkc__inst(o, SPV_OP_IADD, 4, u, c, before, d->c1);
    vkc__inst(o, SPV_OP_BITCAST, 3, d->p_host, host, d->host);
    vkc__inst(o, SPV_OP_ACCESS_CHAIN, 4, d->p_uint, hp, host, d->c0);
    vkc__inst(o, SPV_OP_BITWISE_AND, 4, u, f2, d->form, d->c2);
    vkc__inst(o, SPV_OP_INOT_EQUAL, 4, b, xchg, f2, d->c0);
    vkc__inst(o, SPV_OP_SELECTION_MERGE, 2, done, 0u);
    vkc__inst(o, SPV_OP_BRANCH_CONDITIONAL, 3, xchg, bx, bw);
    vkc__inst(o, SPV_OP_LABEL, 1, bx);
    vkc__inst(o, SPV_OP_ATOMIC_EXCHANGE, 6, u, (*id)++, hp, d->c1, d->c0, c);
    vkc__inst(o, SPV_OP_BRANCH, 1, done);
    vkc__inst(o, SPV_OP_LABEL, 1, bw);
    vkc__inst(o, SPV_OP_STORE, 4, hp, c, (uint32_t)SPV_MEM_ALIGNED, 4u);
    vkc__inst(o, SPV_OP_BRANCH, 1, done);
    vkc__inst(o, SPV_OP_LABEL, 1, done);
    vkc__inst(o, SPV_OP_RETURN, 0);
    vkc__inst(o, SPV_OP_FUNCTION_END, 0);
}

static const char *vkc__splice_scan_words(const uint32_t *w, size_t size, const char *entry,
                                          vkc__splice_scan *s)
{
    if (size < 20 || size % 4 || w[0] != 0x07230203u)
        return "not a SPIR-V module";
    return vkc__splice_scan_module(w, size / 4, entry, s);
}

const char *vkc__spirv_splice_check(const uint32_t *w, size_t size, const char *entry)
{
    vkc__splice_scan s;
    return vkc__splice_scan_words(w, size, entry, &s);
}

const char *vkc__spirv_splice_epilogue(const uint32_t *w, size_t size, const char *entry,
                                       uint32_t **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    const size_t n = size / 4;
    vkc__splice_scan s;
    const char *why = vkc__splice_scan_words(w, size, entry, &s);
    if (why)
        return why;
    uint32_t id = w[3];
    vkc__splice_ids d; /* uint32_t fields only: each a fresh id */
    uint32_t *fields = (uint32_t *)&d;
    for (size_t i = 0; i < sizeof(d) / sizeof(uint32_t); ++i)
        fields[i] = id++;
    /* The module's own where it has them. */
    d.t_uint = s.t_uint ? s.t_uint : d.t_uint;
    d.t_bool = s.t_bool ? s.t_bool : d.t_bool;
    d.t_v2 = s.t_v2 ? s.t_v2 : d.t_v2;
    d.t_v3 = s.t_v3 ? s.t_v3 : d.t_v3;
    d.lii = s.lii ? s.lii : d.lii;
    d.nwg = s.nwg ? s.nwg : d.nwg;

    vkc__words o = {0};
    vkc__copy(&o, w, 5);
    bool caps_done = false;
    for (size_t i = 5; i < n;) {
        const uint32_t op = w[i] & 0xffffu, wc = w[i] >> 16;
        if (!caps_done && op != SPV_OP_CAPABILITY) {
            caps_done = true;
            if (!s.cap_psb)
                vkc__inst(&o, SPV_OP_CAPABILITY, 1, (uint32_t)SPV_CAP_PSB);
            if (!s.ext_psb && w[1] < 0x00010500u) {
                static const char ext[32] = "SPV_KHR_physical_storage_buffer";
                vkc__put(&o, (9u << 16) | SPV_OP_EXTENSION);
                for (uint32_t k = 0; k < 8; ++k) {
                    uint32_t v;
                    memcpy(&v, ext + 4 * k, 4);
                    vkc__put(&o, v);
                }
            }
        }
        if (i == s.first_decl)
            vkc__splice_decorations(&o, &s, &d);
        if (i == s.first_fn)
            vkc__splice_declarations(&o, &s, &d);
        if (op == SPV_OP_MEMORY_MODEL) {
            vkc__inst(&o, op, 2, (uint32_t)SPV_ADDR_PSB64, w[i + 2]);
        } else if (i == s.ep) {
            /* The interface gains the built-ins it did not list. */
            const uint32_t more = (uint32_t)!s.lii_listed + (uint32_t)!s.nwg_listed;
            vkc__put(&o, ((wc + more) << 16) | op);
            vkc__copy(&o, &w[i + 1], wc - 1);
            if (!s.lii_listed)
                vkc__put(&o, d.lii);
            if (!s.nwg_listed)
                vkc__put(&o, d.nwg);
        } else if (op == SPV_OP_FUNCTION && w[i + 2] == s.fn) {
            vkc__inst(&o, op, 4, w[i + 1], d.body, w[i + 3], w[i + 4]);
        } else {
            vkc__copy(&o, &w[i], wc);
        }
        i += wc;
    }
    vkc__splice_function(&o, &s, &d, &id);
    if (o.oom) {
        vkc__free(o.w);
        return "out of host memory";
    }
    o.w[3] = id;
    *out = o.w;
    *out_size = o.n * 4;
    return NULL;
}
