/* Fusion graphs: vkc_fuse create / destroy, values (inputs, scalars,
 * constants, ops, casts), outputs and the reduction with their type
 * checks, build, source and info, and the context's cache of fusion
 * kernels by generated source.
 *
 * Owns the graphs (struct vkc_fuse, vkc__fgraph) and ctx->fuse_state. Calls
 * fuse_glsl.c (generation) and vkc_kernel_create_glsl; fuse_record.c
 * records what is built here. */
#include "vkc_internal.h"

#include <math.h>
#include <stdio.h>

/* Ids: (graph serial << 32) | (node index + 1); 0 is never an id. The
 * serial tells graphs apart so an id of another graph, of this context or
 * another, is caught as foreign rather than read as ours. It is counted
 * per process and repeats only after 2^32 - 1 graphs were created (a
 * 12-bit one repeated after 4,095, short enough for a long-running
 * program to meet). */
#define FUSE_MAX_NODES ((1u << 20) - 2u)
static atomic_uint_least32_t fuse_serial;

typedef struct fcache_entry {
    struct fcache_entry *next;
    uint64_t hash;
    char *source;
    vkc_kernel *kernel;
} fcache_entry;

typedef struct fuse_state {
    pthread_mutex_t lock;
    fcache_entry *cache;
} fuse_state;

/* ---- small helpers ---------------------------------------------------------- */

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

/* ---- graph storage ---------------------------------------------------------- */

void vkc__fgraph_free(vkc__fgraph *g)
{
    vkc__free(g->nodes);
    vkc__free(g->outs);
    memset(g, 0, sizeof *g);
    g->reduce_node = -1;
}

bool vkc__fgraph_push_node(vkc__fgraph *g, const vkc__fnode *n)
{
    if (g->count == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 16;
        vkc__fnode *p = vkc__realloc(g->nodes, cap * sizeof *p);
        if (!p)
            return false;
        g->nodes = p;
        g->cap = cap;
    }
    g->nodes[g->count++] = *n;
    return true;
}

bool vkc__fgraph_push_out(vkc__fgraph *g, uint32_t node, uint8_t stype)
{
    if (g->out_count == g->out_cap) {
        uint32_t cap = g->out_cap ? g->out_cap * 2 : 4;
        vkc__foutput *p = vkc__realloc(g->outs, cap * sizeof *p);
        if (!p)
            return false;
        g->outs = p;
        g->out_cap = cap;
    }
    g->outs[g->out_count++] = (vkc__foutput){node, stype};
    return true;
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
            ctx->fuse_state = s;
        }
    }
    pthread_mutex_unlock(&ctx->objects_lock);
    return s;
}

vkc_result vkc__fuse_kernel(vkc_fuse *f, const char *source, const char *name, bool fused,
                            vkc_kernel **out)
{
    vkc_context *ctx = f->obj.ctx;
    fuse_state *s = ctx->fuse_state;
    uint64_t h = vkc__hash64(VKC_HASH_SEED, source, strlen(source));
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

/* Latch the first graph-building error with its message (the context's,
 * just set), which build and record restate. */
static vkc_result fuse_error(vkc_fuse *f, vkc_result r)
{
    if (f->error == VKC_SUCCESS && r < 0) {
        f->error = r;
        vkc__last_error_copy(f->obj.ctx, f->first_error, sizeof f->first_error);
    }
    return r;
}

#define GRAPH_FAIL(f, ...)                                                                         \
    fuse_error((f), VKC_FAIL((f)->obj.ctx, VKC_ERROR_INVALID_GRAPH, __VA_ARGS__))

static void fuse_free(vkc__obj *o);

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
    f->obj.ctx = ctx;
    f->g.reduce_node = -1;
    f->vectorize = d.vectorize;
    f->workgroup_size = d.workgroup_size;
    snprintf(f->name, sizeof f->name, "%s", d.name ? d.name : "vkc_fuse");
    /* the name goes into a GLSL comment: keep it to one printable line */
    for (char *c = f->name; *c; c++)
        if (*c < 0x20 || *c > 0x7e || *c == '\\')
            *c = '_';
    pthread_mutex_lock(&s->lock);
    do
        f->serial = (uint32_t)atomic_fetch_add(&fuse_serial, 1) + 1u;
    while (f->serial == 0);
    pthread_mutex_unlock(&s->lock);
    vkc__obj_init(&f->obj, VKC_MAGIC_FUSE, ctx, f->name, fuse_free, &ctx->fuses);
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

/* The graph's free function: its temporaries and the fused kernels (the
 * cache's) are referenced by every sequence that recorded them; the
 * graph's own references go here. */
static void fuse_free(vkc__obj *o)
{
    vkc_fuse *f = (vkc_fuse *)o;
    for (uint32_t i = 0; i < f->temp_count; i++)
        vkc_buffer_destroy(f->temps[i]);
    vkc__free(f->temps);
    fuse_invalidate(f);
    vkc__fgraph_free(&f->g);
    vkc__free(f->debug_extra);
    vkc__free(f);
}

void vkc_fuse_destroy(vkc_fuse *f)
{
    vkc__obj_kill(f ? &f->obj : NULL, VKC_MAGIC_FUSE);
}

void vkc__fuse_finish(vkc_context *ctx)
{
    for (vkc__node *n = ctx->fuses.next, *next; n && n != &ctx->fuses; n = next) {
        next = n->next; /* a destroy frees this one (and temporaries, on another list) */
        vkc_fuse_destroy((vkc_fuse *)VKC_OBJ_OF(n));
    }
    fuse_state *s = ctx->fuse_state;
    if (!s)
        return;
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

/* Resolve a value id of this graph into its node and index; the error
 * latched and returned if it is not one. */
static vkc_result resolve(vkc_fuse *f, vkc_value v, const char *what, uint32_t *out_index,
                          const vkc__fnode **out_node)
{
    uint32_t serial = (uint32_t)(v >> 32), idx = (uint32_t)v;
    if (serial != 0 && serial != f->serial)
        /* Not a graph error: the caller mixed up its graphs. (Serial 0 is
         * no graph's: such an id was never handed out.) */
        return fuse_error(f, VKC_FAIL(f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                                      "fusion graph \"%s\": %s: value id 0x%llx belongs to "
                                      "another graph (serial %u; this one is %u)",
                                      f->name, what, (unsigned long long)v, serial, f->serial));
    if (v == 0 || idx == 0 || idx > f->g.count)
        return GRAPH_FAIL(f,
                          "fusion graph \"%s\": %s: value id 0x%llx is not a value of this "
                          "graph (dangling or not created yet; ids can only name earlier "
                          "values, so a graph cannot have a cycle)",
                          f->name, what, (unsigned long long)v);
    *out_index = idx - 1;
    if (out_node)
        *out_node = &f->g.nodes[idx - 1];
    return VKC_SUCCESS;
}

static vkc_result add_node(vkc_fuse *f, const vkc__fnode *n, vkc_value *out)
{
    if (f->g.count >= FUSE_MAX_NODES)
        return fuse_error(f,
                          VKC_FAIL(f->obj.ctx, VKC_ERROR_LIMIT, "fusion graph: too many values"));
    if (!vkc__fgraph_push_node(&f->g, n))
        return fuse_error(f,
                          VKC_FAIL(f->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion graph node"));
    fuse_invalidate(f);
    *out = ((vkc_value)f->serial << 32) | f->g.count;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_input_ex(vkc_fuse *f, const vkc_fuse_input_desc *desc, vkc_value *out)
{
    VKC_CHECK_FUSE(f);
    VKC_RETURN_IF(!desc || !out, f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_fuse_input: desc or out is NULL");
    *out = 0;
    uint8_t t = desc->type ? (uint8_t)desc->type : VKC_DTYPE_F32;
    if (!(is_number(t) || t == VKC_DTYPE_F16))
        return GRAPH_FAIL(f, "fusion graph \"%s\": an input cannot have type %s", f->name,
                          dtype_name(t));
    if (t == VKC_DTYPE_F16 && !f->obj.ctx->info.storage_buffer_16bit)
        return fuse_error(f, VKC_FAIL(f->obj.ctx, VKC_ERROR_UNSUPPORTED,
                                      "fusion graph \"%s\": F16 buffers need "
                                      "storageBuffer16BitAccess, which the device lacks",
                                      f->name));
    if (f->g.inputs + f->g.out_count + 1 > VKC_MAX_BINDINGS - 1)
        return fuse_error(f, VKC_FAIL(f->obj.ctx, VKC_ERROR_LIMIT,
                                      "fusion graph \"%s\": too many buffers (max %d)", f->name,
                                      VKC_MAX_BINDINGS - 1));
    vkc__fnode n = {.kind = VKC__FN_INPUT,
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
    VKC_CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_scalar: out is NULL");
    *out = 0;
    uint8_t t = type ? (uint8_t)type : VKC_DTYPE_F32;
    if (!is_number(t))
        return GRAPH_FAIL(f, "fusion graph \"%s\": a scalar must be f32, i32 or u32, not %s",
                          f->name, dtype_name(t));
    VKC_RETURN_IF(f->g.scalars >= VKC_FUSE_MAX_SCALARS, f->obj.ctx, fuse_error(f, VKC_ERROR_LIMIT),
                  "fusion graph: more than %d scalars", VKC_FUSE_MAX_SCALARS);
    vkc__fnode n = {.kind = VKC__FN_SCALAR, .type = t, .stype = t, .index = f->g.scalars};
    VKC_FORWARD(add_node(f, &n, out));
    f->g.scalars++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_constant(vkc_fuse *f, vkc_dtype type, double value, vkc_value *out)
{
    VKC_CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_constant: out is NULL");
    *out = 0;
    uint8_t t = type ? (uint8_t)type : VKC_DTYPE_F32;
    vkc__fnode n = {.kind = VKC__FN_CONST, .type = t, .stype = t};
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
    VKC_CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_op: out is NULL");
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
    vkc__fnode n = {.kind = VKC__FN_OP, .op = (uint8_t)op, .narg = ar};
    uint8_t t[3] = {0};
    for (uint32_t i = 0; i < ar; i++) {
        const vkc__fnode *a = NULL;
        VKC_FORWARD(resolve(f, argv[i], on, &n.arg[i], &a));
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
    VKC_CHECK_FUSE(f);
    VKC_RETURN_IF(!out, f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_cast: out is NULL");
    *out = 0;
    uint8_t t = to ? (uint8_t)to : VKC_DTYPE_F32;
    if (!(is_number(t) || t == VKC_DTYPE_BOOL))
        return GRAPH_FAIL(f,
                          "fusion graph \"%s\": cannot cast to %s (F16 is a storage type: "
                          "use vkc_fuse_output_as)",
                          f->name, dtype_name(t));
    vkc__fnode n = {.kind = VKC__FN_OP, .op = VKC__FUSE_OP_CAST, .narg = 1, .type = t, .stype = t};
    VKC_FORWARD(resolve(f, value, "cast", &n.arg[0], NULL));
    VKC_FORWARD(add_node(f, &n, out));
    f->g.ops++;
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_output_as(vkc_fuse *f, vkc_value value, vkc_dtype type, uint32_t *out_index)
{
    VKC_CHECK_FUSE(f);
    uint32_t idx = 0;
    const vkc__fnode *n = NULL;
    VKC_FORWARD(resolve(f, value, "output", &idx, &n));
    uint8_t st = type ? (uint8_t)type : n->type;
    if (st == VKC_DTYPE_F16) {
        if (n->type != VKC_DTYPE_F32)
            return GRAPH_FAIL(f, "fusion graph \"%s\": an f16 output needs an f32 value, got %s",
                              f->name, dtype_name(n->type));
        if (!f->obj.ctx->info.storage_buffer_16bit)
            return fuse_error(f, VKC_FAIL(f->obj.ctx, VKC_ERROR_UNSUPPORTED,
                                          "fusion graph \"%s\": F16 buffers need "
                                          "storageBuffer16BitAccess, which the device lacks",
                                          f->name));
    } else if (st != n->type) {
        return GRAPH_FAIL(f, "fusion graph \"%s\": output of type %s for a %s value (cast first)",
                          f->name, dtype_name(st), dtype_name(n->type));
    }
    if (f->g.inputs + f->g.out_count + 1 > VKC_MAX_BINDINGS - 1)
        return fuse_error(f, VKC_FAIL(f->obj.ctx, VKC_ERROR_LIMIT,
                                      "fusion graph \"%s\": too many buffers (max %d)", f->name,
                                      VKC_MAX_BINDINGS - 1));
    if (!vkc__fgraph_push_out(&f->g, idx, st))
        return fuse_error(f, VKC_FAIL(f->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion output"));
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
    VKC_CHECK_FUSE(f);
    uint32_t idx = 0;
    const vkc__fnode *n = NULL;
    VKC_FORWARD(resolve(f, value, "reduce", &idx, &n));
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

vkc_result vkc__fuse_prepare(vkc_fuse *f)
{
    if (f->error < 0)
        return VKC_FAIL(f->obj.ctx, VKC_ERROR_INVALID_GRAPH,
                        "fusion graph \"%s\": an earlier call building it failed: %s", f->name,
                        f->first_error);
    if (f->g.out_count == 0 && f->g.reduce_node < 0)
        return VKC_FAIL(f->obj.ctx, VKC_ERROR_INVALID_GRAPH,
                        "fusion graph \"%s\": no output and no reduction", f->name);
    f->vectorizable = f->vectorize != VKC_OFF && vkc__fuse_vectorizable(&f->g);
    for (int w = 0; w < 2; w++) {
        if (f->source[w] || (w == 1 && !f->vectorizable))
            continue;
        f->source[w] = vkc__fuse_glsl(&f->g, w ? 4 : 1, f->name);
        VKC_RETURN_IF(!f->source[w], f->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
        if (f->debug_extra) {
            size_t la = strlen(f->source[w]), lb = strlen(f->debug_extra);
            char *p = vkc__realloc(f->source[w], la + lb + 1);
            VKC_RETURN_IF(!p, f->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
            memcpy(p + la, f->debug_extra, lb + 1);
            f->source[w] = p;
        }
    }
    f->hash = vkc__hash64(VKC_HASH_SEED, f->source[0], strlen(f->source[0]));
    return VKC_SUCCESS;
}

vkc_result vkc_fuse_build(vkc_fuse *f)
{
    VKC_CHECK_FUSE(f);
    if (f->built)
        return VKC_SUCCESS;
    VKC_FORWARD(vkc__fuse_prepare(f));
    for (int w = 0; w < 2; w++) {
        if (!f->source[w])
            continue;
        char name[80];
        snprintf(name, sizeof name, "%s%s", f->name, w ? ".vec4" : "");
        VKC_FORWARD(vkc__fuse_kernel(f, f->source[w], name, true, &f->kernel[w]));
    }
    f->built = true;
    return VKC_SUCCESS;
}

const char *vkc_fuse_source(vkc_fuse *f, bool vec4)
{
    if (!f || f->obj.magic != VKC_MAGIC_FUSE)
        return NULL;
    if (vkc__fuse_prepare(f) < 0)
        return NULL;
    if (vec4 && !f->source[1]) {
        VKC_FAIL(f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT,
                 "fusion graph \"%s\": no vec4 variant (F16 or broadcast buffers, or "
                 "vectorize off)",
                 f->name);
        return NULL;
    }
    return f->source[vec4 ? 1 : 0];
}

vkc_result vkc_fuse_info_get(const vkc_fuse *f, vkc_fuse_info *out)
{
    if (!f || f->obj.magic != VKC_MAGIC_FUSE)
        return VKC_FAIL(NULL, VKC_ERROR_INVALID_HANDLE, "invalid vkc_fuse handle");
    VKC_RETURN_IF(!out, f->obj.ctx, VKC_ERROR_INVALID_ARGUMENT, "vkc_fuse_info_get: out is NULL");
    *out = (vkc_fuse_info){
        .inputs = f->g.inputs,
        .scalars = f->g.scalars,
        .constants = f->g.constants,
        .ops = f->g.ops,
        .outputs = f->g.out_count,
        .reduce = f->g.reduce_node >= 0,
        .vectorizable = f->vectorize != VKC_OFF && vkc__fuse_vectorizable(&f->g),
        .builds = f->builds,
        .compiles = f->compiles,
        .unfused_kernels = f->unfused_kernels,
        .structure_hash =
            f->source[0] ? vkc__hash64(VKC_HASH_SEED, f->source[0], strlen(f->source[0])) : 0,
    };
    return VKC_SUCCESS;
}

vkc_result vkc__fuse_debug_append(vkc_fuse *f, const char *glsl)
{
    VKC_CHECK_FUSE(f);
    char *copy = glsl ? vkc__strdup(glsl) : NULL;
    VKC_RETURN_IF(glsl && !copy, f->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "debug text");
    vkc__free(f->debug_extra);
    f->debug_extra = copy;
    fuse_invalidate(f);
    return VKC_SUCCESS;
}
