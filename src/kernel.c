/* Kernel module: SPIR-V validation and reflection, pipelines, the on-disk
 * pipeline cache, run-time GLSL compilation and its SPIR-V cache.
 *
 * Untrusted SPIR-V goes through the SPIRV-Tools validator before anything
 * else looks at it: the driver (and the validation layer) may hang or crash
 * on a malformed module. Reflection is a small parser of our own that reads
 * only what vkc needs: the compute entry point, its workgroup size, the
 * buffer bindings of set 0 with their access and sizes, the push-constant
 * block and the capabilities. */
#include "vkc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <glslang/build_info.h>
#include <spirv-tools/libspirv.h>

#define VKC_NONE UINT32_MAX
/* Largest module or cache file vkc reads. */
#define VKC_MAX_FILE_BYTES (256u << 20)
#define VKC_MAX_SPEC_CONSTANTS 256

/* ---- SPIR-V numbers (from the SPIR-V specification, unified1) ------------- */

enum {
    SPV_MAGIC = 0x07230203u,
    SPV_MAGIC_SWAPPED = 0x03022307u,

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
    SC_PUSH_CONSTANT = 9,
    SC_STORAGE_BUFFER = 12,

    EXEC_MODEL_GLCOMPUTE = 5,
    EXEC_MODE_LOCAL_SIZE = 17,
    EXEC_MODE_LOCAL_SIZE_ID = 38,
};

/* ---- module state ----------------------------------------------------------- */

typedef struct vkc__spv_entry {
    uint64_t hash;
    uint32_t *words;
    size_t size; /* bytes */
} vkc__spv_entry;

typedef struct vkc__kstate {
    pthread_mutex_t lock; /* guards the SPIR-V memory cache and glslang_ref */
    vkc__spv_entry *spv;
    uint32_t spv_count, spv_cap;
    bool glslang_ref; /* this context holds a glslang process reference */

    VkPipelineCache cache; /* vkc's own or the host's */
    bool own_cache;
    atomic_bool cache_used; /* a pipeline was created through it */
    char cache_path[1024];  /* "" = not persisted */

    uint32_t subgroup_ops; /* VkSubgroupFeatureFlags usable in compute */
} vkc__kstate;

/* glslang's process state is global: one reference per context that has
 * compiled, and compiles serialised (its C interface makes no promise about
 * concurrent use). */
static pthread_mutex_t vkc__glslang_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned vkc__glslang_refs;

static atomic_uint_fast64_t vkc__tmp_counter;

/* ---- small helpers -------------------------------------------------------------- */

static uint64_t vkc__fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Hash a length-prefixed field so ("ab","c") and ("a","bc") differ. */
static uint64_t vkc__hash_field(uint64_t h, const char *s)
{
    uint64_t n = s ? strlen(s) + 1 : 0;
    h = vkc__fnv1a(h, &n, sizeof(n));
    return s ? vkc__fnv1a(h, s, n) : h;
}

/* Read a whole file. Returns 0 or an errno value. */
static int vkc__read_file(const char *path, void **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno ? errno : EIO;
    int err = 0;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        err = errno ? errno : EIO;
        goto done;
    }
    if ((unsigned long)len > VKC_MAX_FILE_BYTES) {
        err = EFBIG;
        goto done;
    }
    unsigned char *buf = vkc__malloc((size_t)len + 4);
    if (!buf) {
        err = ENOMEM;
        goto done;
    }
    if (len && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        err = ferror(f) ? EIO : ENODATA;
        vkc__free(buf);
        goto done;
    }
    *out = buf;
    *out_size = (size_t)len;
done:
    fclose(f);
    return err;
}

/* mkdir -p. Returns 0 or an errno value. */
static int vkc__mkdirs(const char *dir)
{
    char tmp[1024];
    int n = snprintf(tmp, sizeof(tmp), "%s", dir);
    if (n <= 0 || (size_t)n >= sizeof(tmp))
        return ENAMETOOLONG;
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return errno;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return errno;
    return 0;
}

/* Write head+body to a temporary file beside path, then rename it over path,
 * so a reader never sees a half-written file. Returns 0 or an errno value. */
static int vkc__write_file_atomic(const char *path, const void *head, size_t head_size,
                                  const void *body, size_t body_size)
{
    char tmp[1100];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%llu", path, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&vkc__tmp_counter, 1));
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return errno ? errno : EIO;
    bool ok = (!head_size || fwrite(head, 1, head_size, f) == head_size) &&
              (!body_size || fwrite(body, 1, body_size, f) == body_size);
    int err = ok ? 0 : (errno ? errno : EIO);
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err && rename(tmp, path) != 0)
        err = errno ? errno : EIO;
    if (err)
        remove(tmp);
    return err;
}

static spv_target_env vkc__spv_env(const vkc_context *ctx)
{
    if (ctx->api_version >= VK_API_VERSION_1_3)
        return SPV_ENV_VULKAN_1_3;
    if (ctx->api_version >= VK_API_VERSION_1_2)
        return SPV_ENV_VULKAN_1_2;
    if (ctx->api_version >= VK_API_VERSION_1_1)
        return SPV_ENV_VULKAN_1_1;
    return SPV_ENV_VULKAN_1_0;
}

/* Run the SPIRV-Tools validator. On failure the validator's message is
 * written to msg and false returned. */
static bool vkc__spv_validate(const vkc_context *ctx, const uint32_t *words, size_t count,
                              char *msg, size_t msg_size)
{
    spv_context sc = spvContextCreate(vkc__spv_env(ctx));
    if (!sc) {
        snprintf(msg, msg_size, "the SPIR-V validator could not be created");
        return false;
    }
    spv_diagnostic diag = NULL;
    spv_result_t r = spvValidateBinary(sc, words, count, &diag);
    if (r != SPV_SUCCESS) {
        if (diag && diag->error)
            snprintf(msg, msg_size, "%s (at word %zu)", diag->error, diag->position.index);
        else
            snprintf(msg, msg_size, "the validator rejected the module (code %d)", (int)r);
    }
    spvDiagnosticDestroy(diag);
    spvContextDestroy(sc);
    return r == SPV_SUCCESS;
}

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

typedef struct vkc__refl {
    vkc_binding_info bindings[VKC_MAX_BINDINGS];
    uint32_t binding_count;
    uint32_t push_size;
    uint32_t wg[3];
    uint32_t wg_spec[3]; /* spec ids, VKC_NONE when fixed */
} vkc__refl;

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

/* Buffer bindings of set 0 and the push-constant block. */
static vkc_result vkc__reflect_bindings(vkc_context *ctx, const char *name, const vkc__spv *s,
                                        vkc__refl *r)
{
    bool present[VKC_MAX_BINDINGS] = {false};
    uint32_t max_binding = 0;
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
        if (sc == SC_UNIFORM_CONSTANT)
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: binding %u is an image, sampler or acceleration structure; vkc "
                            "binds buffers only",
                            name, binding);
        if (td && (vkc__op(td) == OP_TYPE_ARRAY || vkc__op(td) == OP_TYPE_RUNTIME_ARRAY))
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED,
                            "%s: binding %u is an array of descriptors; vkc binds one buffer per "
                            "binding",
                            name, binding);
        if (!td || vkc__op(td) != OP_TYPE_STRUCT)
            return VKC_FAIL(ctx, VKC_ERROR_UNSUPPORTED, "%s: binding %u is not a buffer block",
                            name, binding);
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
    {5347, "PhysicalStorageBufferAddresses", "bufferDeviceAddress (not enabled by vkc)"},
};

static bool vkc__cap_ok(const vkc_context *ctx, const vkc__kstate *ks, uint32_t cap)
{
    const vkc_device_info *d = &ctx->info;
    switch (cap) {
    case 0:
    case 1:
        return true;
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
    default:
        if (cap >= 61 && cap <= 68)
            return (ks->subgroup_ops >> (cap - 61)) & 1u;
        return false;
    }
}

static vkc_result vkc__check_caps(vkc_context *ctx, const vkc__kstate *ks, const char *name,
                                  const vkc__spv *s)
{
    for (uint32_t i = 0; i < s->cap_count; ++i) {
        uint32_t cap = s->caps[i];
        if (vkc__cap_ok(ctx, ks, cap))
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

/* ---- pipeline cache ----------------------------------------------------------------- */

/* vkc's own header in front of the driver's data: catches truncated and
 * corrupted files before the driver sees them. */
typedef struct vkc__cache_file_header {
    char magic[8]; /* "VKCPIPE1" */
    uint64_t size; /* of the driver data that follows */
    uint64_t hash; /* FNV-1a of that data */
    uint64_t reserved;
} vkc__cache_file_header;

static const char vkc__cache_magic[8] = {'V', 'K', 'C', 'P', 'I', 'P', 'E', '1'};

static void vkc__hex(char *out, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Check a driver cache blob against this device (VkPipelineCacheHeaderVersionOne).
 * Returns NULL when fine, else why not. */
static const char *vkc__cache_data_check(const vkc_context *ctx, const uint8_t *data, size_t size)
{
    VkPipelineCacheHeaderVersionOne h;
    if (size < sizeof(h))
        return "truncated (shorter than the Vulkan header)";
    memcpy(&h, data, sizeof(h));
    if (h.headerSize < sizeof(h) || h.headerSize > size)
        return "bad header length";
    if (h.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
        return "unknown header version";
    if (h.vendorID != ctx->info.vendor_id || h.deviceID != ctx->info.device_id)
        return "written for another device";
    if (memcmp(h.pipelineCacheUUID, ctx->info.pipeline_cache_uuid, VK_UUID_SIZE) != 0)
        return "written by another driver version (pipelineCacheUUID differs)";
    return NULL;
}

static vkc_result vkc__pipeline_cache_init(vkc_context *ctx, vkc__kstate *ks)
{
    if (ctx->host_pipeline_cache) {
        ks->cache = ctx->host_pipeline_cache;
        return VKC_SUCCESS;
    }
    void *file = NULL;
    size_t file_size = 0;
    const uint8_t *data = NULL;
    size_t data_size = 0;
    if (ctx->disk_cache) {
        char uuid[33], dev[33];
        vkc__hex(uuid, ctx->info.pipeline_cache_uuid, 16);
        vkc__hex(dev, ctx->info.device_uuid, 16);
        snprintf(ks->cache_path, sizeof(ks->cache_path), "%s/pipelines-%08x-%08x-%08x-%s-%s.bin",
                 ctx->cache_dir, ctx->info.vendor_id, ctx->info.device_id, ctx->info.driver_version,
                 uuid, dev);
        int err = vkc__read_file(ks->cache_path, &file, &file_size);
        const char *why = NULL;
        if (err == 0) {
            vkc__cache_file_header h;
            if (file_size < sizeof(h)) {
                why = "truncated (shorter than vkc's header)";
            } else {
                memcpy(&h, file, sizeof(h));
                const uint8_t *body = (const uint8_t *)file + sizeof(h);
                if (memcmp(h.magic, vkc__cache_magic, 8) != 0)
                    why = "not a vkc pipeline cache (bad magic)";
                else if (h.size != file_size - sizeof(h))
                    why = "truncated or padded (size mismatch)";
                else if (h.hash != vkc__fnv1a(0xcbf29ce484222325ull, body, (size_t)h.size))
                    why = "corrupt (checksum mismatch)";
                else if (!(why = vkc__cache_data_check(ctx, body, (size_t)h.size))) {
                    data = body;
                    data_size = (size_t)h.size;
                }
            }
        } else if (err != ENOENT) {
            why = strerror(err);
        }
        if (why)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE,
                     "pipeline cache %s ignored: %s; starting empty", ks->cache_path, why);
    }
    VkPipelineCacheCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    ci.initialDataSize = data_size;
    ci.pInitialData = data;
    VkResult vr = VKC_VK(vkCreatePipelineCache,
                         ctx->vk.vkCreatePipelineCache(ctx->device, &ci, ctx->alloc, &ks->cache));
    vkc__free(file);
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkCreatePipelineCache", __FILE__, __LINE__);
    ks->own_cache = true;
    vkc__set_name(ctx, VK_OBJECT_TYPE_PIPELINE_CACHE, (uint64_t)ks->cache, "vkc pipeline cache");
    if (data_size) {
        VKC_STAT_ADD(ctx, pipeline_cache_hits, 1);
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_CACHE, "pipeline cache loaded: %s (%zu bytes)",
                 ks->cache_path, data_size);
    }
    return VKC_SUCCESS;
}

static void vkc__pipeline_cache_save(vkc_context *ctx, vkc__kstate *ks)
{
    if (!ks->own_cache || !ks->cache || !ks->cache_path[0] || !atomic_load(&ks->cache_used))
        return;
    size_t size = 0;
    VkResult vr = VKC_VK(vkGetPipelineCacheData,
                         ctx->vk.vkGetPipelineCacheData(ctx->device, ks->cache, &size, NULL));
    if (vr < 0 || !size)
        return;
    void *data = vkc__malloc(size);
    if (!data)
        return;
    vr = VKC_VK(vkGetPipelineCacheData,
                ctx->vk.vkGetPipelineCacheData(ctx->device, ks->cache, &size, data));
    if (vr == VK_SUCCESS && !vkc__cache_data_check(ctx, data, size)) {
        vkc__cache_file_header h;
        memset(&h, 0, sizeof(h));
        memcpy(h.magic, vkc__cache_magic, 8);
        h.size = size;
        h.hash = vkc__fnv1a(0xcbf29ce484222325ull, data, size);
        int err = vkc__mkdirs(ctx->cache_dir);
        if (!err)
            err = vkc__write_file_atomic(ks->cache_path, &h, sizeof(h), data, size);
        if (err)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "pipeline cache %s not saved: %s",
                     ks->cache_path, strerror(err));
        else
            vkc__log(ctx, VKC_LOG_DEBUG, VKC_LOG_ID_CACHE, "pipeline cache saved: %s (%zu bytes)",
                     ks->cache_path, size);
    }
    vkc__free(data);
}

/* ---- module init / finish --------------------------------------------------------- */

static void vkc__resolve_cache_dir(vkc_context *ctx)
{
    if (!ctx->disk_cache || ctx->cache_dir[0])
        return;
    const char *env = getenv("VKC_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s", env);
    else if (xdg && *xdg)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s/vkc", xdg);
    else if (home && *home)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s/.cache/vkc", home);
    else {
        ctx->disk_cache = false;
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_CACHE,
                 "no cache directory (VKC_CACHE_DIR, XDG_CACHE_HOME and HOME unset): caches "
                 "are kept in memory only");
    }
}

vkc_result vkc__kernel_init(vkc_context *ctx)
{
    vkc__kstate *ks = vkc__calloc(1, sizeof(*ks));
    if (!ks)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "kernel module state");
    pthread_mutex_init(&ks->lock, NULL);
    atomic_init(&ks->cache_used, false);
    ctx->kernel_state = ks;
    vkc__resolve_cache_dir(ctx);
    if (ctx->api_version >= VK_API_VERSION_1_1 && ctx->vki.vkGetPhysicalDeviceProperties2) {
        VkPhysicalDeviceSubgroupProperties sg = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        p2.pNext = &sg;
        ctx->vki.vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
        if (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
            ks->subgroup_ops = sg.supportedOperations;
    }
    return vkc__pipeline_cache_init(ctx, ks);
}

void vkc__kernel_finish(vkc_context *ctx)
{
    vkc__kstate *ks = ctx->kernel_state;
    if (!ks)
        return;
    vkc__pipeline_cache_save(ctx, ks);
    if (ks->own_cache && ks->cache)
        ctx->vk.vkDestroyPipelineCache(ctx->device, ks->cache, ctx->alloc);
    for (uint32_t i = 0; i < ks->spv_count; ++i)
        vkc__free(ks->spv[i].words);
    vkc__free(ks->spv);
    if (ks->glslang_ref) {
        pthread_mutex_lock(&vkc__glslang_lock);
        if (--vkc__glslang_refs == 0)
            glslang_finalize_process();
        pthread_mutex_unlock(&vkc__glslang_lock);
    }
    pthread_mutex_destroy(&ks->lock);
    vkc__free(ks);
    ctx->kernel_state = NULL;
}

/* ---- kernel creation ----------------------------------------------------------------- */

static void vkc__kernel_free_vk(vkc_context *ctx, vkc_kernel *k)
{
    if (k->pipeline) {
        ctx->vk.vkDestroyPipeline(ctx->device, k->pipeline, ctx->alloc);
        VKC_STAT_SUB(ctx, pipelines, 1);
    }
    if (k->layout)
        ctx->vk.vkDestroyPipelineLayout(ctx->device, k->layout, ctx->alloc);
    if (k->set_layout)
        ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, k->set_layout, ctx->alloc);
    k->pipeline = VK_NULL_HANDLE;
    k->layout = VK_NULL_HANDLE;
    k->set_layout = VK_NULL_HANDLE;
}

/* Resolve the workgroup size and build the specialization data. */
static vkc_result vkc__workgroup(vkc_context *ctx, const char *name, const vkc__spv *s,
                                 const vkc__refl *r, uint32_t want, const vkc_spec_constant *spec,
                                 uint32_t spec_count, VkSpecializationMapEntry *entries,
                                 uint32_t *values, uint32_t *entry_count, uint32_t wg[3])
{
    VKC_RETURN_IF(spec_count && !spec, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: spec_constant_count is %u but spec_constants is NULL", name, spec_count);
    VKC_RETURN_IF(spec_count > VKC_MAX_SPEC_CONSTANTS, ctx, VKC_ERROR_LIMIT,
                  "%s: %u spec constants (at most %u)", name, spec_count, VKC_MAX_SPEC_CONSTANTS);
    uint32_t n = 0;
    for (uint32_t i = 0; i < spec_count; ++i) {
        for (uint32_t j = 0; j < i; ++j)
            VKC_RETURN_IF(spec[j].id == spec[i].id, ctx, VKC_ERROR_INVALID_ARGUMENT,
                          "%s: spec constant %u given twice", name, spec[i].id);
        VKC_RETURN_IF(r->wg_spec[0] != VKC_NONE && spec[i].id == r->wg_spec[0], ctx,
                      VKC_ERROR_INVALID_ARGUMENT,
                      "%s: spec constant %u is the workgroup size x (local_size_x_id); set it "
                      "with workgroup_size",
                      name, spec[i].id);
        /* A spec constant declared in the shader must be 32 bits wide (the
         * map entries are 4 bytes). */
        for (uint32_t id = 1; id < s->bound; ++id) {
            if (s->ids[id].spec_id != spec[i].id)
                continue;
            const uint32_t *in = vkc__def(s, id);
            if (in && vkc__op(in) == OP_SPEC_CONSTANT) {
                const uint32_t *t = vkc__def(s, in[1]);
                VKC_RETURN_IF(t && vkc__wc(t) >= 3 && vkc__op(t) != OP_TYPE_BOOL && t[2] != 32, ctx,
                              VKC_ERROR_INVALID_ARGUMENT,
                              "%s: spec constant %u is %u bits wide; vkc sets 32-bit ones only",
                              name, spec[i].id, t[2]);
            }
        }
        entries[n] = (VkSpecializationMapEntry){spec[i].id, n * 4u, 4};
        values[n] = spec[i].value;
        ++n;
    }
    for (int i = 0; i < 3; ++i)
        wg[i] = r->wg[i];
    /* y and z follow the user's spec constants when they are specialisable. */
    for (int i = 1; i < 3; ++i)
        for (uint32_t j = 0; j < spec_count; ++j)
            if (r->wg_spec[i] != VKC_NONE && spec[j].id == r->wg_spec[i])
                wg[i] = spec[j].value;
    if (r->wg_spec[0] != VKC_NONE) {
        uint32_t x = want;
        if (!x) {
            x = ctx->features.default_workgroup_size;
            uint64_t yz = (uint64_t)VKC_MAX(wg[1], 1u) * VKC_MAX(wg[2], 1u);
            while (x > 1 && (uint64_t)x * yz > ctx->info.max_workgroup_invocations)
                x /= 2;
        }
        wg[0] = x;
        entries[n] = (VkSpecializationMapEntry){r->wg_spec[0], n * 4u, 4};
        values[n] = x;
        ++n;
    } else {
        VKC_RETURN_IF(want && want != r->wg[0], ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: the shader fixes local_size_x = %u, so workgroup_size %u cannot be "
                      "applied (declare layout(local_size_x_id = N) in; to make it settable)",
                      name, r->wg[0], want);
    }
    *entry_count = n;
    const vkc_device_info *d = &ctx->info;
    for (int i = 0; i < 3; ++i) {
        VKC_RETURN_IF(wg[i] == 0, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: workgroup size %c is 0",
                      name, "xyz"[i]);
        VKC_RETURN_IF(wg[i] > d->max_workgroup_size[i], ctx, VKC_ERROR_LIMIT,
                      "%s: workgroup size %c = %u exceeds maxComputeWorkGroupSize[%d] = %u", name,
                      "xyz"[i], wg[i], i, d -> max_workgroup_size[i]);
    }
    uint64_t inv = (uint64_t)wg[0] * wg[1] * wg[2];
    VKC_RETURN_IF(inv > d->max_workgroup_invocations, ctx, VKC_ERROR_LIMIT,
                  "%s: workgroup %ux%ux%u = %llu invocations exceeds "
                  "maxComputeWorkGroupInvocations = %u",
                  name, wg[0], wg[1], wg[2], (unsigned long long)inv, d->max_workgroup_invocations);
    return VKC_SUCCESS;
}

static vkc_result vkc__kernel_build(vkc_context *ctx, vkc__kstate *ks, vkc_kernel *k,
                                    const uint32_t *words, size_t size, const char *entry,
                                    uint32_t want_wg, const vkc_spec_constant *spec,
                                    uint32_t spec_count)
{
    const char *name = k->name;
    /* The header first, for clearer messages than the validator's. */
    VKC_RETURN_IF(size < 20, ctx, VKC_ERROR_INVALID_SPIRV,
                  "%s: %zu bytes is shorter than the SPIR-V header (20 bytes)", name, size);
    VKC_RETURN_IF(words[0] != SPV_MAGIC, ctx, VKC_ERROR_INVALID_SPIRV,
                  "%s: bad magic number 0x%08x (SPIR-V starts with 0x07230203)", name, words[0]);
    uint32_t max_version = vkc__spv_env(ctx) == SPV_ENV_VULKAN_1_3   ? 0x00010600u
                           : vkc__spv_env(ctx) == SPV_ENV_VULKAN_1_2 ? 0x00010500u
                           : vkc__spv_env(ctx) == SPV_ENV_VULKAN_1_1 ? 0x00010300u
                                                                     : 0x00010000u;
    VKC_RETURN_IF((words[1] & 0xff0000ffu) || words[1] < 0x00010000u || words[1] > max_version, ctx,
                  VKC_ERROR_INVALID_SPIRV,
                  "%s: SPIR-V version %u.%u (word 0x%08x) is not accepted: the device's Vulkan "
                  "%u.%u takes SPIR-V 1.0 to 1.%u",
                  name, (words[1] >> 16) & 0xffu, (words[1] >> 8) & 0xffu, words[1],
                  VK_API_VERSION_MAJOR(ctx->api_version), VK_API_VERSION_MINOR(ctx->api_version),
                  (max_version >> 8) & 0xffu);
    char msg[1024];
    if (!vkc__spv_validate(ctx, words, size / 4, msg, sizeof(msg)))
        return VKC_FAIL(ctx, VKC_ERROR_INVALID_SPIRV, "%s: %s", name, msg);

    vkc__spv s;
    vkc__refl r;
    memset(&r, 0, sizeof(r));
    vkc_result res = vkc__spv_parse(ctx, name, words, size / 4, &s);
    if (res >= 0)
        res = vkc__reflect_entry(ctx, name, &s, entry, &r);
    if (res >= 0)
        res = vkc__reflect_bindings(ctx, name, &s, &r);
    if (res >= 0)
        res = vkc__check_caps(ctx, ks, name, &s);
    VkSpecializationMapEntry map[VKC_MAX_SPEC_CONSTANTS + 1];
    uint32_t values[VKC_MAX_SPEC_CONSTANTS + 1];
    uint32_t map_count = 0;
    uint32_t wg[3] = {1, 1, 1};
    if (res >= 0)
        res = vkc__workgroup(ctx, name, &s, &r, want_wg, spec, spec_count, map, values, &map_count,
                             wg);
    vkc__spv_free(&s);
    if (res < 0)
        return res;
    if (r.push_size > ctx->info.max_push_constants_size)
        return VKC_FAIL(ctx, VKC_ERROR_LIMIT,
                        "%s: push constants of %u bytes exceed maxPushConstantsSize = %u", name,
                        r.push_size, ctx->info.max_push_constants_size);

    k->info.binding_count = r.binding_count;
    memcpy(k->info.bindings, r.bindings, sizeof(r.bindings));
    k->info.push_constant_size = r.push_size;
    memcpy(k->info.workgroup_size, wg, sizeof(wg));
    k->info.name = k->name;
    k->local_size_x_id = r.wg_spec[0];

    VkDescriptorSetLayoutBinding b[VKC_MAX_BINDINGS];
    for (uint32_t i = 0; i < r.binding_count; ++i)
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = r.bindings[i].uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                    : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dci.flags = ctx->features.push_descriptors
                    ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR
                    : 0;
    dci.bindingCount = r.binding_count;
    dci.pBindings = b;
    VKC_RETURN_IF_VK(
        ctx,
        VKC_VK(vkCreateDescriptorSetLayout,
               ctx->vk.vkCreateDescriptorSetLayout(ctx->device, &dci, ctx->alloc, &k->set_layout)),
        "vkCreateDescriptorSetLayout");
    vkc__set_name(ctx, VK_OBJECT_TYPE_DESCRIPTOR_SET_LAYOUT, (uint64_t)k->set_layout, name);

    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, r.push_size};
    VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    lci.setLayoutCount = 1;
    lci.pSetLayouts = &k->set_layout;
    lci.pushConstantRangeCount = r.push_size ? 1 : 0;
    lci.pPushConstantRanges = &pcr;
    VKC_RETURN_IF_VK(ctx,
                     VKC_VK(vkCreatePipelineLayout, ctx->vk.vkCreatePipelineLayout(
                                                        ctx->device, &lci, ctx->alloc, &k->layout)),
                     "vkCreatePipelineLayout");
    vkc__set_name(ctx, VK_OBJECT_TYPE_PIPELINE_LAYOUT, (uint64_t)k->layout, name);

    VkShaderModuleCreateInfo mci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mci.codeSize = size;
    mci.pCode = words;
    VkShaderModule module = VK_NULL_HANDLE;
    VKC_RETURN_IF_VK(ctx,
                     VKC_VK(vkCreateShaderModule,
                            ctx->vk.vkCreateShaderModule(ctx->device, &mci, ctx->alloc, &module)),
                     "vkCreateShaderModule");
    VkSpecializationInfo si = {map_count, map, map_count * sizeof(uint32_t), values};
    VkComputePipelineCreateInfo pci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pci.stage.module = module;
    pci.stage.pName = entry;
    pci.stage.pSpecializationInfo = map_count ? &si : NULL;
    pci.layout = k->layout;
    VkResult vr = VKC_VK(vkCreateComputePipelines,
                         ctx->vk.vkCreateComputePipelines(ctx->device, ks->cache, 1, &pci,
                                                          ctx->alloc, &k->pipeline));
    ctx->vk.vkDestroyShaderModule(ctx->device, module, ctx->alloc);
    if (vr < 0) {
        k->pipeline = VK_NULL_HANDLE;
        return vkc__vk_fail(ctx, vr, "vkCreateComputePipelines", __FILE__, __LINE__);
    }
    VKC_STAT_ADD(ctx, pipelines, 1);
    atomic_store(&ks->cache_used, true);
    vkc__set_name(ctx, VK_OBJECT_TYPE_PIPELINE, (uint64_t)k->pipeline, name);
    return VKC_SUCCESS;
}

static void vkc__kernel_name(char *out, size_t size, const char *name, const char *path)
{
    if (name && *name) {
        snprintf(out, size, "%s", name);
    } else if (path && *path) {
        const char *base = strrchr(path, '/');
        snprintf(out, size, "%s", base ? base + 1 : path);
    } else {
        snprintf(out, size, "kernel");
    }
}

/* Create a kernel from words already in memory (owned by the caller). */
static vkc_result vkc__kernel_create_words(vkc_context *ctx, const char *name,
                                           const uint32_t *words, size_t size, const char *entry,
                                           uint32_t wg, const vkc_spec_constant *spec,
                                           uint32_t spec_count, vkc_kernel **out)
{
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks, ctx, VKC_ERROR_INVALID_STATE, "the kernel module is not initialised");
    vkc_kernel *k = vkc__calloc(1, sizeof(*k));
    if (!k)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "kernel allocation");
    k->ctx = ctx;
    snprintf(k->name, sizeof(k->name), "%s", name);
    vkc_result r =
        vkc__kernel_build(ctx, ks, k, words, size, entry ? entry : "main", wg, spec, spec_count);
    if (r >= 0) {
        /* Kept for device-loss recovery. */
        k->spirv = vkc__malloc(size);
        k->entry = vkc__strdup(entry ? entry : "main");
        k->spec = spec_count ? vkc__calloc(spec_count, sizeof(*spec)) : NULL;
        if (!k->spirv || !k->entry || (spec_count && !k->spec)) {
            r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: copy of the SPIR-V", name);
        } else {
            memcpy(k->spirv, words, size);
            k->spirv_size = size;
            k->want_workgroup_size = wg;
            if (spec_count)
                memcpy(k->spec, spec, spec_count * sizeof(*spec));
            k->spec_count = spec_count;
        }
    }
    if (r < 0) {
        vkc__kernel_free_vk(ctx, k);
        vkc__free(k->spirv);
        vkc__free(k->entry);
        vkc__free(k->spec);
        vkc__free(k);
        return r;
    }
    k->magic = VKC_MAGIC_KERNEL;
    pthread_mutex_lock(&ctx->objects_lock);
    vkc__list_push(&ctx->kernels, &k->node);
    pthread_mutex_unlock(&ctx->objects_lock);
    *out = k;
    return VKC_SUCCESS;
}

/* Bring untrusted bytes into aligned words of native byte order. Frees
 * nothing; *owned is set when a copy was made. */
static vkc_result vkc__spirv_words(vkc_context *ctx, const char *name, const void *bytes,
                                   size_t size, const uint32_t **words, uint32_t **owned)
{
    *owned = NULL;
    *words = NULL;
    VKC_RETURN_IF(size == 0, ctx, VKC_ERROR_INVALID_SPIRV, "%s: the SPIR-V module is empty", name);
    VKC_RETURN_IF(size % 4, ctx, VKC_ERROR_INVALID_SPIRV,
                  "%s: the size (%zu bytes) is not a multiple of 4", name, size);
    VKC_RETURN_IF(size > VKC_MAX_FILE_BYTES, ctx, VKC_ERROR_LIMIT,
                  "%s: the SPIR-V module is %zu bytes (vkc's limit is %u)", name, size,
                  VKC_MAX_FILE_BYTES);
    uint32_t first;
    memcpy(&first, bytes, 4);
    bool swapped = first == SPV_MAGIC_SWAPPED;
    if (!swapped && ((uintptr_t)bytes & 3u) == 0) {
        *words = bytes;
        return VKC_SUCCESS;
    }
    uint32_t *copy = vkc__malloc(size);
    if (!copy)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "SPIR-V copy");
    memcpy(copy, bytes, size);
    if (swapped)
        for (size_t i = 0; i < size / 4; ++i)
            copy[i] = __builtin_bswap32(copy[i]);
    *words = copy;
    *owned = copy;
    return VKC_SUCCESS;
}

vkc_result vkc_kernel_create(vkc_context *ctx, const vkc_kernel_desc *desc, vkc_kernel **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!desc || !out, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_kernel_create: desc and out must not be NULL");
    char name[64];
    vkc__kernel_name(name, sizeof(name), desc->name, desc->path);
    void *file = NULL;
    const void *bytes = desc->spirv;
    size_t size = desc->spirv_size;
    if (!bytes) {
        VKC_RETURN_IF(!desc->path, ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: give SPIR-V words (spirv, spirv_size) or a file (path)", name);
        int err = vkc__read_file(desc->path, &file, &size);
        VKC_RETURN_IF(err, ctx, VKC_ERROR_IO, "%s: cannot read SPIR-V file \"%s\": %s", name,
                      desc->path, strerror(err));
        bytes = file;
    } else {
        VKC_RETURN_IF(desc->path, ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: give either spirv or path, not both", name);
    }
    const uint32_t *words = NULL;
    uint32_t *owned = NULL;
    vkc_result r = vkc__spirv_words(ctx, name, bytes, size, &words, &owned);
    if (r >= 0)
        r = vkc__kernel_create_words(ctx, name, words, size, desc->entry, desc->workgroup_size,
                                     desc->spec_constants, desc->spec_constant_count, out);
    vkc__free(owned);
    vkc__free(file);
    return r;
}

/* ---- GLSL ----------------------------------------------------------------------------- */

static bool vkc__is_identifier(const char *s)
{
    if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static void vkc__glslang_targets(const vkc_context *ctx, glslang_target_client_version_t *client,
                                 glslang_target_language_version_t *spv, const char **label)
{
    /* SPIR-V 1.6 expresses local_size_x_id as LocalSizeId, which needs
     * maintenance4; without it, target Vulkan 1.2 / SPIR-V 1.5. */
    if (ctx->api_version >= VK_API_VERSION_1_3 && ctx->maintenance4) {
        *client = GLSLANG_TARGET_VULKAN_1_3;
        *spv = GLSLANG_TARGET_SPV_1_6;
        *label = "vulkan1.3/spv1.6";
    } else if (ctx->api_version >= VK_API_VERSION_1_2) {
        *client = GLSLANG_TARGET_VULKAN_1_2;
        *spv = GLSLANG_TARGET_SPV_1_5;
        *label = "vulkan1.2/spv1.5";
    } else {
        *client = GLSLANG_TARGET_VULKAN_1_1;
        *spv = GLSLANG_TARGET_SPV_1_3;
        *label = "vulkan1.1/spv1.3";
    }
}

#define VKC__STR2(x) #x
#define VKC__STR(x) VKC__STR2(x)
#define VKC_GLSLANG_VERSION                                                                        \
    VKC__STR(GLSLANG_VERSION_MAJOR)                                                                \
    "." VKC__STR(GLSLANG_VERSION_MINOR) "." VKC__STR(GLSLANG_VERSION_PATCH) GLSLANG_VERSION_FLAVOR

/* Look the hash up in memory, then on disk. Returns a copy of the words. */
static bool vkc__spv_cache_get(vkc_context *ctx, vkc__kstate *ks, uint64_t hash, uint32_t **words,
                               size_t *size, char *disk_path, size_t disk_path_size)
{
    pthread_mutex_lock(&ks->lock);
    for (uint32_t i = 0; i < ks->spv_count; ++i) {
        if (ks->spv[i].hash != hash)
            continue;
        uint32_t *copy = vkc__malloc(ks->spv[i].size);
        if (copy) {
            memcpy(copy, ks->spv[i].words, ks->spv[i].size);
            *words = copy;
            *size = ks->spv[i].size;
        }
        pthread_mutex_unlock(&ks->lock);
        return copy != NULL;
    }
    pthread_mutex_unlock(&ks->lock);
    disk_path[0] = '\0';
    if (!ctx->disk_cache)
        return false;
    snprintf(disk_path, disk_path_size, "%s/spirv/%016llx.spv", ctx->cache_dir,
             (unsigned long long)hash);
    void *file = NULL;
    size_t fsize = 0;
    int err = vkc__read_file(disk_path, &file, &fsize);
    if (err) {
        if (err != ENOENT)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "SPIR-V cache %s unreadable: %s",
                     disk_path, strerror(err));
        return false;
    }
    char msg[512];
    uint32_t first = 0;
    if (fsize >= 20 && fsize % 4 == 0)
        memcpy(&first, file, 4);
    if (first != SPV_MAGIC || !vkc__spv_validate(ctx, file, fsize / 4, msg, sizeof(msg))) {
        if (first != SPV_MAGIC)
            snprintf(msg, sizeof(msg), "not a SPIR-V module");
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE,
                 "SPIR-V cache %s ignored (%s); compiling again", disk_path, msg);
        vkc__free(file);
        return false;
    }
    *words = file;
    *size = fsize;
    return true;
}

static void vkc__spv_cache_put(vkc_context *ctx, vkc__kstate *ks, uint64_t hash,
                               const uint32_t *words, size_t size)
{
    uint32_t *copy = vkc__malloc(size);
    if (!copy)
        return;
    memcpy(copy, words, size);
    pthread_mutex_lock(&ks->lock);
    for (uint32_t i = 0; i < ks->spv_count; ++i) {
        if (ks->spv[i].hash == hash) { /* another thread was first */
            pthread_mutex_unlock(&ks->lock);
            vkc__free(copy);
            return;
        }
    }
    if (ks->spv_count == ks->spv_cap) {
        uint32_t cap = ks->spv_cap ? 2 * ks->spv_cap : 16;
        vkc__spv_entry *p = vkc__realloc(ks->spv, cap * sizeof(*p));
        if (!p) {
            pthread_mutex_unlock(&ks->lock);
            vkc__free(copy);
            return;
        }
        ks->spv = p;
        ks->spv_cap = cap;
    }
    ks->spv[ks->spv_count++] = (vkc__spv_entry){hash, copy, size};
    pthread_mutex_unlock(&ks->lock);
}

/* Compile with glslang. On success *words is vkc__malloc'd. */
static vkc_result vkc__glsl_compile(vkc_context *ctx, vkc__kstate *ks, const char *name,
                                    const char *source, const char *preamble, uint32_t **words,
                                    size_t *size)
{
    glslang_input_t in;
    memset(&in, 0, sizeof(in));
    const char *label;
    vkc__glslang_targets(ctx, &in.client_version, &in.target_language_version, &label);
    in.language = GLSLANG_SOURCE_GLSL;
    in.stage = GLSLANG_STAGE_COMPUTE;
    in.client = GLSLANG_CLIENT_VULKAN;
    in.target_language = GLSLANG_TARGET_SPV;
    in.code = source;
    in.default_version = 450;
    in.default_profile = GLSLANG_NO_PROFILE;
    in.messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT;
    in.resource = glslang_default_resource();

    pthread_mutex_lock(&vkc__glslang_lock);
    pthread_mutex_lock(&ks->lock);
    if (!ks->glslang_ref) {
        if (vkc__glslang_refs == 0 && !glslang_initialize_process()) {
            pthread_mutex_unlock(&ks->lock);
            pthread_mutex_unlock(&vkc__glslang_lock);
            return VKC_FAIL(ctx, VKC_ERROR_INITIALIZATION_FAILED,
                            "%s: glslang_initialize_process failed", name);
        }
        vkc__glslang_refs++;
        ks->glslang_ref = true;
    }
    pthread_mutex_unlock(&ks->lock);

    vkc_result r = VKC_SUCCESS;
    glslang_program_t *prog = NULL;
    glslang_shader_t *sh = glslang_shader_create(&in);
    if (!sh) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: glslang_shader_create", name);
        goto done;
    }
    if (preamble && *preamble)
        glslang_shader_set_preamble(sh, preamble);
    if (!glslang_shader_preprocess(sh, &in) || !glslang_shader_parse(sh, &in)) {
        r = VKC_FAIL(ctx, VKC_ERROR_COMPILE, "%s: GLSL compilation failed:\n%s", name,
                     glslang_shader_get_info_log(sh));
        goto done;
    }
    prog = glslang_program_create();
    if (!prog) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: glslang_program_create", name);
        goto done;
    }
    glslang_program_add_shader(prog, sh);
    if (!glslang_program_link(prog, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
        r = VKC_FAIL(ctx, VKC_ERROR_COMPILE, "%s: GLSL link failed:\n%s", name,
                     glslang_program_get_info_log(prog));
        goto done;
    }
    glslang_program_SPIRV_generate(prog, GLSLANG_STAGE_COMPUTE);
    size_t n = glslang_program_SPIRV_get_size(prog);
    const char *spv_msg = glslang_program_SPIRV_get_messages(prog);
    if (!n) {
        r = VKC_FAIL(ctx, VKC_ERROR_COMPILE, "%s: SPIR-V generation failed: %s", name,
                     spv_msg ? spv_msg : "no output");
        goto done;
    }
    uint32_t *w = vkc__malloc(n * 4);
    if (!w) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: SPIR-V buffer", name);
        goto done;
    }
    glslang_program_SPIRV_get(prog, w);
    *words = w;
    *size = n * 4;
    VKC_STAT_ADD(ctx, shader_compiles, 1);
    vkc__log(ctx, VKC_LOG_DEBUG, VKC_LOG_ID_CACHE, "%s: compiled GLSL (%s, %zu bytes)", name, label,
             n * 4);
done:
    if (prog)
        glslang_program_delete(prog);
    if (sh)
        glslang_shader_delete(sh);
    pthread_mutex_unlock(&vkc__glslang_lock);
    return r;
}

vkc_result vkc_kernel_create_glsl(vkc_context *ctx, const vkc_glsl_desc *desc, vkc_kernel **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!desc || !out, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_kernel_create_glsl: desc and out must not be NULL");
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks, ctx, VKC_ERROR_INVALID_STATE, "the kernel module is not initialised");
    char name[64];
    vkc__kernel_name(name, sizeof(name), desc->name && *desc->name ? desc->name : "glsl", NULL);
    VKC_RETURN_IF(!desc->source, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: source is NULL", name);
    VKC_RETURN_IF(desc->define_count && !desc->defines, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: define_count is %u but defines is NULL", name, desc->define_count);
    const char *entry = desc->entry && *desc->entry ? desc->entry : "main";
    VKC_RETURN_IF(!vkc__is_identifier(entry), ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: entry \"%s\" is not a GLSL identifier", name, entry);

    /* Defines become a preamble, which glslang places after #version (line
     * numbers of the source stay as written). An entry other than main is
     * renamed to main the same way. */
    size_t pre_len = 1;
    for (uint32_t i = 0; i < desc->define_count; ++i) {
        const char *d = desc->defines[i];
        VKC_RETURN_IF(!d || !*d || strchr(d, '\n'), ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: define %u is empty or has a newline", name, i);
        pre_len += strlen(d) + 10;
    }
    pre_len += strlen(entry) + 20;
    char *preamble = vkc__malloc(pre_len);
    if (!preamble)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "GLSL preamble");
    size_t at = 0;
    preamble[0] = '\0';
    for (uint32_t i = 0; i < desc->define_count; ++i) {
        const char *d = desc->defines[i];
        const char *eq = strchr(d, '=');
        int k = eq ? snprintf(preamble + at, pre_len - at, "#define %.*s %s\n", (int)(eq - d), d,
                              eq + 1)
                   : snprintf(preamble + at, pre_len - at, "#define %s\n", d);
        at += (size_t)(k > 0 ? k : 0);
    }
    if (strcmp(entry, "main") != 0)
        snprintf(preamble + at, pre_len - at, "#define %s main\n", entry);

    glslang_target_client_version_t cv;
    glslang_target_language_version_t lv;
    const char *label;
    vkc__glslang_targets(ctx, &cv, &lv, &label);
    uint64_t h = 0xcbf29ce484222325ull;
    h = vkc__hash_field(h, desc->source);
    h = vkc__hash_field(h, preamble);
    h = vkc__hash_field(h, entry);
    h = vkc__hash_field(h, VKC_GLSLANG_VERSION);
    h = vkc__hash_field(h, label);

    uint32_t *words = NULL;
    size_t size = 0;
    char disk_path[1100];
    vkc_result r = VKC_SUCCESS;
    if (vkc__spv_cache_get(ctx, ks, h, &words, &size, disk_path, sizeof(disk_path))) {
        VKC_STAT_ADD(ctx, spirv_cache_hits, 1);
        vkc__spv_cache_put(ctx, ks, h, words, size);
    } else {
        r = vkc__glsl_compile(ctx, ks, name, desc->source, preamble, &words, &size);
        if (r >= 0) {
            vkc__spv_cache_put(ctx, ks, h, words, size);
            if (ctx->disk_cache && disk_path[0]) {
                char dir[1100];
                snprintf(dir, sizeof(dir), "%s/spirv", ctx->cache_dir);
                int err = vkc__mkdirs(dir);
                if (!err)
                    err = vkc__write_file_atomic(disk_path, NULL, 0, words, size);
                if (err)
                    vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "SPIR-V cache %s not saved: %s",
                             disk_path, strerror(err));
            }
        }
    }
    vkc__free(preamble);
    if (r >= 0)
        r = vkc__kernel_create_words(ctx, name, words, size, "main", desc->workgroup_size,
                                     desc->spec_constants, desc->spec_constant_count, out);
    vkc__free(words);
    return r;
}

/* ---- queries and destruction ------------------------------------------------------------ */

void vkc_kernel_destroy(vkc_kernel *kernel)
{
    if (!kernel || kernel->magic != VKC_MAGIC_KERNEL)
        return;
    vkc_context *ctx = kernel->ctx;
    pthread_mutex_lock(&ctx->objects_lock);
    vkc__list_remove(&kernel->node);
    pthread_mutex_unlock(&ctx->objects_lock);
    kernel->magic = 0;
    vkc__kernel_free_vk(ctx, kernel);
    vkc__free(kernel->spirv);
    vkc__free(kernel->entry);
    vkc__free(kernel->spec);
    vkc__free(kernel);
}

vkc_result vkc_kernel_info_get(const vkc_kernel *kernel, vkc_kernel_info *out)
{
    if (!kernel || kernel->magic != VKC_MAGIC_KERNEL)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_kernel handle");
    if (!out)
        return VKC_FAIL(kernel->ctx, VKC_ERROR_INVALID_ARGUMENT,
                        "vkc_kernel_info_get: out is NULL");
    *out = kernel->info;
    out->name = kernel->name;
    return VKC_SUCCESS;
}

vkc_result vkc_kernel_vk(const vkc_kernel *kernel, VkPipeline *pipeline, VkPipelineLayout *layout,
                         VkDescriptorSetLayout *set_layout)
{
    if (!kernel || kernel->magic != VKC_MAGIC_KERNEL)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_kernel handle");
    if (pipeline)
        *pipeline = kernel->pipeline;
    if (layout)
        *layout = kernel->layout;
    if (set_layout)
        *set_layout = kernel->set_layout;
    return VKC_SUCCESS;
}
/* ---- device-loss recovery ---------------------------------------------------------------- */

void vkc__kernel_lose(vkc_context *ctx)
{
    for (vkc__node *n = ctx->kernels.next; n != &ctx->kernels; n = n->next)
        vkc__kernel_free_vk(ctx, (vkc_kernel *)((char *)n - offsetof(vkc_kernel, node)));
}

vkc_result vkc__kernel_rebuild(vkc_context *ctx)
{
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks, ctx, VKC_ERROR_INVALID_STATE, "the kernel module is not initialised");
    for (vkc__node *n = ctx->kernels.next; n != &ctx->kernels; n = n->next) {
        vkc_kernel *k = (vkc_kernel *)((char *)n - offsetof(vkc_kernel, node));
        if (k->pipeline)
            continue;
        vkc_result r = vkc__kernel_build(ctx, ks, k, k->spirv, k->spirv_size, k->entry,
                                         k->want_workgroup_size, k->spec, k->spec_count);
        if (r < 0) {
            vkc__kernel_free_vk(ctx, k);
            return r;
        }
    }
    return VKC_SUCCESS;
}
