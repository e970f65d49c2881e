/* SPIR-V reflection: a small parser of our own over a module the validator
 * (spirv.c) already accepted, reading only what vkc needs: the compute entry
 * point, its workgroup size, the buffer and image bindings of set 0 with
 * their access and sizes, the push-constant block, the capabilities (checked
 * against the device's features) and the spec constants' widths.
 *
 * Owns no state. Calls only vkc_internal.h's basics (allocation, errors) and
 * reads the context's features; no Vulkan object is created here. */
#include "vkc_internal.h"

#include <stdio.h>

/* ---- SPIR-V numbers (from the SPIR-V specification, unified1) ------------- */

enum {
    OP_ENTRY_POINT = 15,
    OP_EXECUTION_MODE = 16,
    OP_CAPABILITY = 17,
    OP_TYPE_BOOL = 20,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_MATRIX = 24,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_RUNTIME_ARRAY = 29,
    OP_TYPE_IMAGE = 25,
    OP_TYPE_SAMPLER = 26,
    OP_TYPE_SAMPLED_IMAGE = 27,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_CONSTANT_TRUE = 41,
    OP_CONSTANT_FALSE = 42,
    OP_CONSTANT = 43,
    OP_CONSTANT_COMPOSITE = 44,
    OP_SPEC_CONSTANT_TRUE = 48,
    OP_SPEC_CONSTANT_FALSE = 49,
    OP_SPEC_CONSTANT = 50,
    OP_SPEC_CONSTANT_COMPOSITE = 51,
    OP_VARIABLE = 59,
    OP_DECORATE = 71,
    OP_MEMBER_DECORATE = 72,
    OP_EXECUTION_MODE_ID = 331,

    DEC_SPEC_ID = 1,
    DEC_BLOCK = 2,
    DEC_BUFFER_BLOCK = 3,
    DEC_ROW_MAJOR = 4,
    DEC_ARRAY_STRIDE = 6,
    DEC_MATRIX_STRIDE = 7,
    DEC_BUILTIN = 11,
    DEC_NON_WRITABLE = 24,
    DEC_NON_READABLE = 25,
    DEC_BINDING = 33,
    DEC_DESCRIPTOR_SET = 34,
    DEC_OFFSET = 35,

    BUILTIN_WORKGROUP_SIZE = 25,

    SC_UNIFORM_CONSTANT = 0,
    SC_UNIFORM = 2,
    SC_WORKGROUP = 4,
    SC_PUSH_CONSTANT = 9,
    SC_STORAGE_BUFFER = 12,

    EXEC_MODEL_GLCOMPUTE = 5,
    EXEC_MODE_LOCAL_SIZE = 17,
    EXEC_MODE_LOCAL_SIZE_ID = 38,
};

/* ---- reflection ------------------------------------------------------------------ */

enum {
    VKC__D_BLOCK = 1,
    VKC__D_BUFFER_BLOCK = 2,
    VKC__D_NON_WRITABLE = 4,
    VKC__D_NON_READABLE = 8,
};

typedef struct vkc__spv_id {
    uint32_t def; /* word index of the defining instruction; 0 = none */
    uint32_t set, binding, spec_id, builtin, array_stride; /* VKC_NONE when absent */
    uint32_t flags;
} vkc__spv_id;

typedef struct vkc__spv {
    const uint32_t *w;
    size_t n;
    uint32_t bound;
    vkc__spv_id *ids;
    uint32_t *mdec; /* word indices of OpMemberDecorate */
    uint32_t mdec_count;
    uint32_t *vars; /* ids of module-scope OpVariable */
    uint32_t var_count;
    uint32_t *caps;
    uint32_t cap_count;
} vkc__spv;

static void vkc__spv_free(vkc__spv *s)
{
    vkc__free(s->ids);
    vkc__free(s->mdec);
    vkc__free(s->vars);
    vkc__free(s->caps);
    memset(s, 0, sizeof(*s));
}

static bool vkc__push_u32(uint32_t **arr, uint32_t *count, uint32_t v)
{
    uint32_t c = *count;
    if ((c & (c - 1)) == 0) { /* grow at powers of two */
        uint32_t *p = vkc__realloc(*arr, sizeof(uint32_t) * (c ? 2 * c : 8));
        if (!p)
            return false;
        *arr = p;
    }
    (*arr)[c] = v;
    *count = c + 1;
    return true;
}

static inline uint32_t vkc__op(const uint32_t *in)
{
    return in[0] & 0xffffu;
}
static inline uint32_t vkc__wc(const uint32_t *in)
{
    return in[0] >> 16;
}

/* The defining instruction of id, or NULL. */
static const uint32_t *vkc__def(const vkc__spv *s, uint32_t id)
{
    if (id >= s->bound || !s->ids[id].def)
        return NULL;
    return s->w + s->ids[id].def;
}

/* Index every id's definition and decorations. The module is validated. */
static vkc_result vkc__spv_parse(vkc_context *ctx, const char *name, const uint32_t *w, size_t n,
                                 vkc__spv *s)
{
    memset(s, 0, sizeof(*s));
    s->w = w;
    s->n = n;
    s->bound = w[3];
    if (s->bound == 0 || s->bound > (1u << 22))
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV, "%s: id bound %u out of range", name,
                        s->bound);
    s->ids = vkc__calloc(s->bound, sizeof(*s->ids));
    if (!s->ids)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "SPIR-V reflection tables");
    for (uint32_t i = 0; i < s->bound; ++i) {
        vkc__spv_id *d = &s->ids[i];
        d->set = d->binding = d->spec_id = d->builtin = d->array_stride = VKC_NONE;
    }
    bool oom = false;
    for (size_t pos = 5; pos < n;) {
        const uint32_t *in = w + pos;
        uint32_t wc = vkc__wc(in), op = vkc__op(in);
        if (wc == 0 || pos + wc > n)
            return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV, "%s: truncated instruction at word %zu",
                            name, pos);
        uint32_t result = VKC_NONE;
        switch (op) {
        case OP_CAPABILITY:
            if (wc >= 2)
                oom |= !vkc__push_u32(&s->caps, &s->cap_count, in[1]);
            break;
        case OP_TYPE_BOOL:
        case OP_TYPE_INT:
        case OP_TYPE_FLOAT:
        case OP_TYPE_VECTOR:
        case OP_TYPE_MATRIX:
        case OP_TYPE_ARRAY:
        case OP_TYPE_RUNTIME_ARRAY:
        case OP_TYPE_STRUCT:
        case OP_TYPE_POINTER:
        case OP_TYPE_IMAGE:
        case OP_TYPE_SAMPLER:
        case OP_TYPE_SAMPLED_IMAGE:
            result = wc >= 2 ? in[1] : VKC_NONE;
            break;
        case OP_CONSTANT_TRUE:
        case OP_CONSTANT_FALSE:
        case OP_CONSTANT:
        case OP_CONSTANT_COMPOSITE:
        case OP_SPEC_CONSTANT_TRUE:
        case OP_SPEC_CONSTANT_FALSE:
        case OP_SPEC_CONSTANT:
        case OP_SPEC_CONSTANT_COMPOSITE:
            result = wc >= 3 ? in[2] : VKC_NONE;
            break;
        case OP_VARIABLE:
            /* Only module-scope variables matter: storage classes other than
             * Function (7). */
            if (wc >= 4 && in[3] != 7) {
                result = in[2];
                oom |= !vkc__push_u32(&s->vars, &s->var_count, in[2]);
            }
            break;
        case OP_DECORATE:
            if (wc >= 3 && in[1] < s->bound) {
                vkc__spv_id *d = &s->ids[in[1]];
                uint32_t v = wc >= 4 ? in[3] : 0;
                switch (in[2]) {
                case DEC_SPEC_ID:
                    d->spec_id = v;
                    break;
                case DEC_BLOCK:
                    d->flags |= VKC__D_BLOCK;
                    break;
                case DEC_BUFFER_BLOCK:
                    d->flags |= VKC__D_BUFFER_BLOCK;
                    break;
                case DEC_ARRAY_STRIDE:
                    d->array_stride = v;
                    break;
                case DEC_BUILTIN:
                    d->builtin = v;
                    break;
                case DEC_NON_WRITABLE:
                    d->flags |= VKC__D_NON_WRITABLE;
                    break;
                case DEC_NON_READABLE:
                    d->flags |= VKC__D_NON_READABLE;
                    break;
                case DEC_BINDING:
                    d->binding = v;
                    break;
                case DEC_DESCRIPTOR_SET:
                    d->set = v;
                    break;
                default:
                    break;
                }
            }
            break;
        case OP_MEMBER_DECORATE:
            if (wc >= 4)
                oom |= !vkc__push_u32(&s->mdec, &s->mdec_count, (uint32_t)pos);
            break;
        default:
            break;
        }
        if (result != VKC_NONE && result < s->bound)
            s->ids[result].def = (uint32_t)pos;
        pos += wc;
    }
    if (oom)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "SPIR-V reflection tables");
    return VKC_SUCCESS;
}

/* Value of a member decoration; false when absent. */
static bool vkc__member_dec(const vkc__spv *s, uint32_t type, uint32_t member, uint32_t dec,
                            uint32_t *value)
{
    for (uint32_t i = 0; i < s->mdec_count; ++i) {
        const uint32_t *in = s->w + s->mdec[i];
        if (in[1] == type && in[2] == member && in[3] == dec) {
            if (value)
                *value = vkc__wc(in) >= 5 ? in[4] : 0;
            return true;
        }
    }
    return false;
}

/* Scalar value of a constant or the default of a spec constant. */
static bool vkc__const_value(const vkc__spv *s, uint32_t id, uint32_t *value)
{
    const uint32_t *in = vkc__def(s, id);
    if (!in)
        return false;
    switch (vkc__op(in)) {
    case OP_CONSTANT:
    case OP_SPEC_CONSTANT:
        if (vkc__wc(in) < 4)
            return false;
        *value = in[3];
        return true;
    case OP_CONSTANT_TRUE:
    case OP_SPEC_CONSTANT_TRUE:
        *value = 1;
        return true;
    case OP_CONSTANT_FALSE:
    case OP_SPEC_CONSTANT_FALSE:
        *value = 0;
        return true;
    default:
        return false;
    }
}

static uint64_t vkc__struct_size(const vkc__spv *s, uint32_t type, int depth,
                                 uint64_t *runtime_stride);

/* Bytes a type occupies in a buffer block (explicit layout): the tight
 * extent, i.e. the offset of its last byte + 1. Matrices use the member's
 * MatrixStride. Runtime arrays count 0. */
static uint64_t vkc__type_size(const vkc__spv *s, uint32_t type, uint32_t mstride, bool row_major,
                               int depth)
{
    const uint32_t *in = vkc__def(s, type);
    if (!in || depth > 16)
        return 0;
    uint32_t wc = vkc__wc(in);
    switch (vkc__op(in)) {
    case OP_TYPE_BOOL:
        return 4;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
        return wc >= 3 ? in[2] / 8 : 0;
    case OP_TYPE_VECTOR:
        return wc >= 4 ? (uint64_t)in[3] * vkc__type_size(s, in[2], 0, false, depth + 1) : 0;
    case OP_TYPE_MATRIX: {
        if (wc < 4)
            return 0;
        uint32_t cols = in[3];
        const uint32_t *col = vkc__def(s, in[2]);
        if (!col || vkc__op(col) != OP_TYPE_VECTOR || vkc__wc(col) < 4)
            return 0;
        uint32_t rows = col[3];
        uint64_t comp = vkc__type_size(s, col[2], 0, false, depth + 1);
        if (!mstride)
            return (uint64_t)cols * rows * comp;
        if (row_major)
            return (uint64_t)(rows - 1) * mstride + cols * comp;
        return (uint64_t)(cols - 1) * mstride + rows * comp;
    }
    case OP_TYPE_ARRAY: {
        uint32_t len = 0;
        if (wc < 4 || !vkc__const_value(s, in[3], &len) || !len)
            return 0;
        uint64_t elem = vkc__type_size(s, in[2], mstride, row_major, depth + 1);
        uint32_t stride = s->ids[type].array_stride;
        if (stride == VKC_NONE)
            return (uint64_t)len * elem;
        return (uint64_t)(len - 1) * stride + elem;
    }
    case OP_TYPE_STRUCT:
        return vkc__struct_size(s, type, depth + 1, NULL);
    case OP_TYPE_POINTER:
        return 8;
    default:
        return 0;
    }
}

/* The fixed part of a struct: max(Offset + size) over its members other
 * than a trailing runtime array, whose ArrayStride goes to *runtime_stride. */
static uint64_t vkc__struct_size(const vkc__spv *s, uint32_t type, int depth,
                                 uint64_t *runtime_stride)
{
    const uint32_t *in = vkc__def(s, type);
    if (!in || vkc__op(in) != OP_TYPE_STRUCT || depth > 16)
        return 0;
    uint32_t members = vkc__wc(in) - 2;
    uint64_t end = 0;
    for (uint32_t m = 0; m < members; ++m) {
        uint32_t mt = in[2 + m];
        const uint32_t *md = vkc__def(s, mt);
        if (md && vkc__op(md) == OP_TYPE_RUNTIME_ARRAY) {
            if (runtime_stride) {
                uint32_t st = s->ids[mt].array_stride;
                *runtime_stride = st == VKC_NONE ? 0 : st;
            }
            continue;
        }
        uint32_t off = 0, ms = 0;
        vkc__member_dec(s, type, m, DEC_OFFSET, &off);
        vkc__member_dec(s, type, m, DEC_MATRIX_STRIDE, &ms);
        bool rm = vkc__member_dec(s, type, m, DEC_ROW_MAJOR, NULL);
        end = VKC_MAX(end, (uint64_t)off + vkc__type_size(s, mt, ms, rm, depth + 1));
    }
    return end;
}

/* True when every member of the struct carries the decoration. */
static bool vkc__all_members(const vkc__spv *s, uint32_t type, uint32_t dec)
{
    const uint32_t *in = vkc__def(s, type);
    if (!in || vkc__op(in) != OP_TYPE_STRUCT || vkc__wc(in) <= 2)
        return false;
    for (uint32_t m = 0; m < vkc__wc(in) - 2; ++m)
        if (!vkc__member_dec(s, type, m, dec, NULL))
            return false;
    return true;
}

static const char *vkc__model_name(uint32_t model)
{
    switch (model) {
    case 0:
        return "vertex";
    case 1:
        return "tessellation control";
    case 2:
        return "tessellation evaluation";
    case 3:
        return "geometry";
    case 4:
        return "fragment";
    case 5:
        return "compute";
    case 6:
        return "OpenCL kernel";
    case 5267:
    case 5364:
        return "task";
    case 5268:
    case 5365:
        return "mesh";
    default:
        return "non-compute";
    }
}

/* Find the entry point and its workgroup size. */
static vkc_result vkc__reflect_entry(vkc_context *ctx, const char *name, const vkc__spv *s,
                                     const char *entry, vkc__refl *r)
{
    const uint32_t *w = s->w;
    uint32_t entry_id = VKC_NONE;
    char others[256] = "";
    size_t others_len = 0;
    for (size_t pos = 5; pos < s->n; pos += vkc__wc(w + pos)) {
        const uint32_t *in = w + pos;
        if (vkc__op(in) != OP_ENTRY_POINT || vkc__wc(in) < 4)
            continue;
        const char *ep = (const char *)(in + 3);
        size_t max = (vkc__wc(in) - 3) * 4;
        if (strnlen(ep, max) == max)
            continue;
        if (!strcmp(ep, entry)) {
            if (in[1] != EXEC_MODEL_GLCOMPUTE)
                return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV,
                                "%s: entry point \"%s\" is a %s shader, not a compute shader "
                                "(GLCompute)",
                                name, entry, vkc__model_name(in[1]));
            entry_id = in[2];
            break;
        }
        int k = snprintf(others + others_len, sizeof(others) - others_len, "%s\"%s\" (%s)",
                         others_len ? ", " : "", ep, vkc__model_name(in[1]));
        if (k > 0)
            others_len = VKC_MIN(sizeof(others) - 1, others_len + (size_t)k);
    }
    if (entry_id == VKC_NONE)
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV,
                        "%s: no entry point named \"%s\"; the module has: %s", name, entry,
                        others_len ? others : "none");

    /* Workgroup size: LocalSize literals, or LocalSizeId constants, both
     * overridden by a constant decorated BuiltIn WorkgroupSize. */
    uint32_t src_ids[3] = {VKC_NONE, VKC_NONE, VKC_NONE};
    bool found = false;
    for (size_t pos = 5; pos < s->n; pos += vkc__wc(w + pos)) {
        const uint32_t *in = w + pos;
        uint32_t op = vkc__op(in);
        if ((op != OP_EXECUTION_MODE && op != OP_EXECUTION_MODE_ID) || vkc__wc(in) < 6 ||
            in[1] != entry_id)
            continue;
        if (in[2] == EXEC_MODE_LOCAL_SIZE) {
            for (int i = 0; i < 3; ++i)
                r->wg[i] = in[3 + i];
            found = true;
        } else if (in[2] == EXEC_MODE_LOCAL_SIZE_ID) {
            /* LocalSizeId needs maintenance4: vkc enables it on its own
             * Vulkan 1.3 devices; a host's device may not have. */
            if (!ctx->maintenance4)
                return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                                "%s: the LocalSizeId execution mode needs maintenance4 "
                                "(Vulkan 1.3); compile for SPIR-V 1.5 or older",
                                name);
            for (int i = 0; i < 3; ++i)
                src_ids[i] = in[3 + i];
            found = true;
        }
    }
    for (uint32_t id = 1; id < s->bound; ++id) {
        if (s->ids[id].builtin != BUILTIN_WORKGROUP_SIZE)
            continue;
        const uint32_t *in = vkc__def(s, id);
        if (in &&
            (vkc__op(in) == OP_CONSTANT_COMPOSITE || vkc__op(in) == OP_SPEC_CONSTANT_COMPOSITE) &&
            vkc__wc(in) >= 6) {
            for (int i = 0; i < 3; ++i)
                src_ids[i] = in[3 + i];
            found = true;
        }
    }
    if (!found)
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV,
                        "%s: entry point \"%s\" declares no workgroup size (LocalSize)", name,
                        entry);
    for (int i = 0; i < 3; ++i) {
        r->wg_spec[i] = VKC_NONE;
        if (src_ids[i] == VKC_NONE)
            continue;
        uint32_t v = 0;
        if (!vkc__const_value(s, src_ids[i], &v))
            return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV,
                            "%s: workgroup size %c is not a scalar constant", name, "xyz"[i]);
        r->wg[i] = v;
        const uint32_t *in = vkc__def(s, src_ids[i]);
        if (vkc__op(in) == OP_SPEC_CONSTANT)
            r->wg_spec[i] = s->ids[src_ids[i]].spec_id;
    }
    return VKC_SUCCESS;
}

/* The vkc format of a storage image's format qualifier (SPIR-V Image
 * Format numbers); DEFAULT for Unknown and formats vkc does not name. */
static vkc_format vkc__spv_format(uint32_t f)
{
    switch (f) {
    case 1:
        return VKC_FORMAT_RGBA32F;
    case 2:
        return VKC_FORMAT_RGBA16F;
    case 3:
        return VKC_FORMAT_R32F;
    case 4:
        return VKC_FORMAT_RGBA8_UNORM;
    case 6:
        return VKC_FORMAT_RG32F;
    case 9:
        return VKC_FORMAT_R16F;
    case 13:
        return VKC_FORMAT_RG8_UNORM;
    case 15:
        return VKC_FORMAT_R8_UNORM;
    case 24:
        return VKC_FORMAT_R32I;
    case 33:
        return VKC_FORMAT_R32UI;
    default:
        return VKC_FORMAT_DEFAULT;
    }
}

/* An image, sampled image or sampler binding (UniformConstant). td is the
 * pointee type. */
static vkc_result vkc__reflect_image(vkc_context *ctx, const char *name, const vkc__spv *s,
                                     uint32_t binding, const uint32_t *td, vkc_binding_info *b)
{
    memset(b, 0, sizeof(*b));
    if (td && vkc__op(td) == OP_TYPE_SAMPLER) {
        b->kind = VKC_BINDING_SAMPLER;
        return VKC_SUCCESS;
    }
    const uint32_t *it = td;
    if (td && vkc__op(td) == OP_TYPE_SAMPLED_IMAGE) {
        b->kind = VKC_BINDING_COMBINED_IMAGE_SAMPLER;
        it = vkc__wc(td) >= 3 ? vkc__def(s, td[2]) : NULL;
    }
    if (!it || vkc__op(it) != OP_TYPE_IMAGE || vkc__wc(it) < 9)
        return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                        "%s: binding %u is an opaque object vkc does not bind (not an image, "
                        "sampled image or sampler)",
                        name, binding);
    /* OpTypeImage: result, sampled type, Dim, Depth, Arrayed, MS, Sampled,
     * Image Format. */
    uint32_t dim = it[3], arrayed = it[5], ms = it[6], sampled = it[7];
    if (ms || (dim != 1 && dim != 2) || (dim == 2 && arrayed))
        return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                        "%s: binding %u is an image of a kind vkc does not bind (%s); vkc binds "
                        "2D, 2D array and 3D images",
                        name, binding,
                        ms         ? "multisampled"
                        : dim == 0 ? "1D"
                        : dim == 3 ? "cube"
                        : dim == 5 ? "texel buffer"
                        : dim == 6 ? "subpass input"
                        : dim == 2 ? "3D array"
                                   : "rect");
    b->image_type = dim == 2 ? VKC_IMAGE_3D : arrayed ? VKC_IMAGE_2D_ARRAY : VKC_IMAGE_2D;
    if (b->kind == VKC_BINDING_COMBINED_IMAGE_SAMPLER)
        return VKC_SUCCESS;
    if (sampled == 2) {
        b->kind = VKC_BINDING_STORAGE_IMAGE;
        b->format = vkc__spv_format(it[8]);
    } else {
        b->kind = VKC_BINDING_SAMPLED_IMAGE;
    }
    return VKC_SUCCESS;
}

/* Buffer bindings of set 0 and the push-constant block. */
static vkc_result vkc__reflect_bindings(vkc_context *ctx, const char *name, const vkc__spv *s,
                                        vkc__refl *r)
{
    bool present[VKC_MAX_BINDINGS] = {false};
    uint32_t max_binding = 0;
    vkc_binding_info img;
    for (uint32_t v = 0; v < s->var_count; ++v) {
        uint32_t var = s->vars[v];
        const uint32_t *in = vkc__def(s, var);
        const vkc__spv_id *vd = &s->ids[var];
        if (!in)
            continue;
        uint32_t sc = in[3];
        const uint32_t *ptr = vkc__def(s, in[1]);
        if (!ptr || vkc__op(ptr) != OP_TYPE_POINTER || vkc__wc(ptr) < 4)
            continue;
        uint32_t type = ptr[3];
        const uint32_t *td = vkc__def(s, type);
        if (sc == SC_WORKGROUP) {
            /* Shared memory (kernel statistics): arrays at their default
             * lengths; a struct without Offsets counts 0. */
            uint64_t size = vkc__type_size(s, type, 0, false, 0);
            r->shared_bytes = (uint32_t)VKC_MIN(r->shared_bytes + size, UINT32_MAX);
            continue;
        }
        if (sc == SC_PUSH_CONSTANT) {
            uint64_t size = vkc__struct_size(s, type, 0, NULL);
            size = (size + 3) & ~3ull;
            r->push_size = (uint32_t)VKC_MAX((uint64_t)r->push_size, VKC_MIN(size, UINT32_MAX));
            continue;
        }
        if (sc != SC_UNIFORM && sc != SC_STORAGE_BUFFER && sc != SC_UNIFORM_CONSTANT)
            continue;
        if (vd->set == VKC_NONE && vd->binding == VKC_NONE)
            continue;
        uint32_t set = vd->set == VKC_NONE ? 0 : vd->set;
        uint32_t binding = vd->binding == VKC_NONE ? 0 : vd->binding;
        if (set != 0)
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: binding %u is in descriptor set %u; vkc binds set 0 only", name,
                            binding, set);
        if (td && (vkc__op(td) == OP_TYPE_ARRAY || vkc__op(td) == OP_TYPE_RUNTIME_ARRAY))
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: binding %u is an array of descriptors; vkc binds one buffer per "
                            "binding",
                            name, binding);
        if (sc == SC_UNIFORM_CONSTANT) {
            VKC_FORWARD(vkc__reflect_image(ctx, name, s, binding, td, &img));
        } else if (!td || vkc__op(td) != OP_TYPE_STRUCT) {
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED, "%s: binding %u is not a buffer block",
                            name, binding);
        }
        if (binding >= VKC_MAX_BINDINGS)
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: binding %u: vkc supports bindings 0..%u", name, binding,
                            VKC_MAX_BINDINGS - 1);
        if (present[binding])
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: binding %u is declared twice (aliased buffers)", name, binding);
        present[binding] = true;
        max_binding = VKC_MAX(max_binding, binding);

        vkc_binding_info *b = &r->bindings[binding];
        b->binding = binding;
        if (sc == SC_UNIFORM_CONSTANT) {
            bool nw = vd->flags & VKC__D_NON_WRITABLE, nr = vd->flags & VKC__D_NON_READABLE;
            *b = img;
            b->binding = binding;
            if (b->kind != VKC_BINDING_STORAGE_IMAGE || (nw && !nr) || (nw && nr))
                b->access = VKC_ACCESS_READ;
            else if (nr)
                b->access = VKC_ACCESS_WRITE;
            else
                b->access = VKC_ACCESS_READ_WRITE;
            r->binding_count = max_binding + 1;
            continue;
        }
        b->uniform = sc == SC_UNIFORM && !(s->ids[type].flags & VKC__D_BUFFER_BLOCK);
        uint64_t stride = 0;
        b->min_size = vkc__struct_size(s, type, 0, &stride);
        b->array_stride = stride;
        bool nw = (vd->flags & VKC__D_NON_WRITABLE) || vkc__all_members(s, type, DEC_NON_WRITABLE);
        bool nr = (vd->flags & VKC__D_NON_READABLE) || vkc__all_members(s, type, DEC_NON_READABLE);
        if (b->uniform || (nw && !nr))
            b->access = VKC_ACCESS_READ;
        else if (nr && !nw)
            b->access = VKC_ACCESS_WRITE;
        else if (nr && nw)
            b->access = VKC_ACCESS_READ; /* declared but neither read nor written */
        else
            b->access = VKC_ACCESS_READ_WRITE;
        r->binding_count = max_binding + 1;
    }
    for (uint32_t i = 0; i < r->binding_count; ++i)
        if (!present[i])
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: bindings of set 0 must be 0..%u without gaps; binding %u is "
                            "missing",
                            name, r->binding_count - 1, i);
    return VKC_SUCCESS;
}

/* ---- capabilities ----------------------------------------------------------------- */

typedef struct vkc__cap_rule {
    uint32_t cap;
    const char *name;
    const char *feature; /* what the device (as vkc sets it up) must have */
} vkc__cap_rule;

static const vkc__cap_rule vkc__cap_rules[] = {
    {0, "Matrix", NULL},
    {1, "Shader", NULL},
    {9, "Float16", "shaderFloat16"},
    {10, "Float64", "shaderFloat64"},
    {11, "Int64", "shaderInt64"},
    {12, "Int64Atomics", "shaderBufferInt64Atomics (not enabled by vkc)"},
    {22, "Int16", "shaderInt16 (not enabled by vkc)"},
    {39, "Int8", "shaderInt8"},
    {61, "GroupNonUniform", "subgroup operations (basic) in compute"},
    {62, "GroupNonUniformVote", "subgroup operations (vote) in compute"},
    {63, "GroupNonUniformArithmetic", "subgroup operations (arithmetic) in compute"},
    {64, "GroupNonUniformBallot", "subgroup operations (ballot) in compute"},
    {65, "GroupNonUniformShuffle", "subgroup operations (shuffle) in compute"},
    {66, "GroupNonUniformShuffleRelative", "subgroup operations (shuffle relative) in compute"},
    {67, "GroupNonUniformClustered", "subgroup operations (clustered) in compute"},
    {68, "GroupNonUniformQuad", "subgroup operations (quad) in compute"},
    {55, "StorageImageReadWithoutFormat",
     "shaderStorageImageReadWithoutFormat (or give the image a format qualifier)"},
    {56, "StorageImageWriteWithoutFormat",
     "shaderStorageImageWriteWithoutFormat (or give the image a format qualifier)"},
    {4433, "StorageBuffer16BitAccess", "storageBuffer16BitAccess"},
    {4434, "UniformAndStorageBuffer16BitAccess",
     "uniformAndStorageBuffer16BitAccess (not enabled by vkc)"},
    {4435, "StoragePushConstant16", "storagePushConstant16 (not enabled by vkc)"},
    {4441, "VariablePointersStorageBuffer", "variablePointers (not enabled by vkc)"},
    {4442, "VariablePointers", "variablePointers (not enabled by vkc)"},
    {4448, "StorageBuffer8BitAccess", "storageBuffer8BitAccess"},
    {4449, "UniformAndStorageBuffer8BitAccess",
     "uniformAndStorageBuffer8BitAccess (not enabled by vkc)"},
    {4450, "StoragePushConstant8", "storagePushConstant8 (not enabled by vkc)"},
    {5345, "VulkanMemoryModel", "vulkanMemoryModel (not enabled by vkc)"},
    {5347, "PhysicalStorageBufferAddresses", "bufferDeviceAddress"},
};

static bool vkc__cap_ok(const vkc_context *ctx, uint32_t subgroup_ops, uint32_t cap)
{
    const vkc_device_info *d = &ctx->info;
    switch (cap) {
    case 0:
    case 1:
    case 49: /* StorageImageExtendedFormats: the format features are checked per image */
    case 50: /* ImageQuery */
        return true;
    case 55:
        return d->storage_image_read_without_format;
    case 56:
        return d->storage_image_write_without_format;
    case 9:
        return d->shader_float16;
    case 10:
        return d->shader_float64;
    case 11:
        return d->shader_int64;
    case 39:
        return d->shader_int8;
    case 4433:
        return d->storage_buffer_16bit;
    case 4448:
        return d->storage_buffer_8bit;
    case 5347:
        return ctx->features.buffer_device_address;
    default:
        if (cap >= 61 && cap <= 68)
            return (subgroup_ops >> (cap - 61)) & 1u;
        return false;
    }
}

static vkc_result vkc__check_caps(vkc_context *ctx, uint32_t subgroup_ops, const char *name,
                                  const vkc__spv *s)
{
    for (uint32_t i = 0; i < s->cap_count; ++i) {
        uint32_t cap = s->caps[i];
        if (vkc__cap_ok(ctx, subgroup_ops, cap))
            continue;
        for (size_t k = 0; k < VKC_ARRAY_COUNT(vkc__cap_rules); ++k)
            if (vkc__cap_rules[k].cap == cap)
                return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                                "%s: the shader needs capability %s, which needs %s; the device "
                                "\"%s\" does not provide it",
                                name, vkc__cap_rules[k].name, vkc__cap_rules[k].feature,
                                ctx->info.name);
        return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                        "%s: the shader needs SPIR-V capability %u, which vkc does not enable on "
                        "the device",
                        name, cap);
    }
    return VKC_SUCCESS;
}

/* The declared width of a spec constant that is not 32 bits wide (the map
 * entries vkc builds are 4 bytes); 0 when it is fine or not declared. */
static uint32_t vkc__spec_bits(const vkc__spv *s, uint32_t spec_id)
{
    for (uint32_t id = 1; id < s->bound; ++id) {
        if (s->ids[id].spec_id != spec_id)
            continue;
        const uint32_t *in = vkc__def(s, id);
        if (in && vkc__op(in) == OP_SPEC_CONSTANT) {
            const uint32_t *t = vkc__def(s, in[1]);
            if (t && vkc__wc(t) >= 3 && vkc__op(t) != OP_TYPE_BOOL && t[2] != 32)
                return t[2];
        }
    }
    return 0;
}

vkc_result vkc__spirv_reflect(vkc_context *ctx, const char *name, const uint32_t *words,
                              size_t size, const char *entry, uint32_t subgroup_ops,
                              const vkc_spec_constant *spec, uint32_t spec_count, vkc__refl *r)
{
    vkc__spv s;
    memset(r, 0, sizeof(*r));
    vkc_result res = vkc__spv_parse(ctx, name, words, size / 4, &s);
    if (res >= 0)
        res = vkc__reflect_entry(ctx, name, &s, entry, r);
    if (res >= 0)
        res = vkc__reflect_bindings(ctx, name, &s, r);
    if (res >= 0)
        res = vkc__check_caps(ctx, subgroup_ops, name, &s);
    for (uint32_t i = 0; res >= 0 && spec && i < spec_count && i < VKC_MAX_SPEC_CONSTANTS; ++i)
        r->spec_bits[i] = vkc__spec_bits(&s, spec[i].id);
    vkc__spv_free(&s);
    return res;
}
