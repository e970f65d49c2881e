/* Fusion recording: a built graph into a sequence, fused (one dispatch of
 * the generated kernel, vec4 where the arguments allow) or unfused (one
 * dispatch per operation through temporaries: the oracle the fused kernel
 * is checked against), after checking the arguments against the graph.
 *
 * Owns the graphs' temporaries (vkc_fuse.temps). Calls fuse.c (sources and
 * kernels), fuse_glsl.c (the unfused steps' shaders) and the public
 * sequence and buffer functions. */
#include "vkc_internal.h"

#include <stdio.h>

typedef struct range {
    vkc_buffer *buf;
    uint64_t lo, hi;
} range;

static bool overlap(range a, range b)
{
    return a.buf == b.buf && a.lo < b.hi && b.lo < a.hi;
}

/* Check the args against the graph; pick the width (4 for a count that is
 * not a multiple of 4 only when the caller records a scalar tail: tail_ok). */
static vkc_result check_args(vkc_fuse *f, const vkc_fuse_args *a, bool tail_ok, int *out_w)
{
    vkc_context *ctx = f->obj.ctx;
    const vkc__fgraph *g = &f->g;
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
    /* A count that is not a multiple of 4 still runs as vec4, with a scalar
     * tail (vkc_fuse_record); reductions (they divide by their own count)
     * and dropout (its mask follows the element index, which restarts at 0
     * in the tail's dispatch) stay scalar then. */
    bool index_free = g->reduce_node < 0;
    for (uint32_t k = 0; k < g->count && index_free; k++)
        index_free = !(g->nodes[k].kind == VKC__FN_OP && g->nodes[k].op == VKC_OP_DROPOUT);
    bool vec = f->vectorizable && (a->count % 4 == 0 || (tail_ok && a->count >= 4 && index_free));
    uint32_t nr = g->inputs + g->out_count + 1;
    range *rs = vkc__calloc(nr, sizeof *rs);
    VKC_RETURN_IF(!rs, ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion record");
    uint32_t ri = 0;
    vkc_result r = VKC_SUCCESS;
    for (uint32_t k = 0; k < g->count && r == VKC_SUCCESS; k++) {
        const vkc__fnode *n = &g->nodes[k];
        if (n->kind != VKC__FN_INPUT)
            continue;
        const vkc_arg *arg = &a->inputs[n->index];
        uint64_t elems = n->period ? n->period : a->count;
        uint64_t need = elems * vkc__fuse_storage_size(n->stype);
        if (!arg->buffer || arg->buffer->obj.magic != VKC_MAGIC_BUFFER) {
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
        uint64_t need = isred ? 4 : a->count * vkc__fuse_storage_size(g->outs[o].stype);
        if (!arg->buffer || arg->buffer->obj.magic != VKC_MAGIC_BUFFER) {
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
            const vkc__fnode *n = &g->nodes[k];
            if (n->kind != VKC__FN_INPUT || !overlap(me, rs[n->index]))
                continue;
            bool exact = !isred && !n->period && rs[n->index].lo == me.lo &&
                         rs[n->index].hi == me.hi && vkc__fuse_storage_size(n->stype) == 4 &&
                         vkc__fuse_storage_size(g->outs[o].stype) == 4;
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
    VKC_FORWARD(vkc_seq_dispatch(seq, &d));
    /* The command's label may be the graph's name: the sequence keeps the
     * graph (and so its name and temporaries) while it needs them. */
    return vkc__seq_hold(seq, &f->obj);
}

static const uint32_t reduce_identity[] = {
    [VKC_REDUCE_SUM] = 0u,
    [VKC_REDUCE_MEAN] = 0u,
    [VKC_REDUCE_MIN] = 0x7f800000u,
    [VKC_REDUCE_MAX] = 0xff800000u,
};

vkc_result vkc_fuse_record(vkc_seq *seq, vkc_fuse *f, const vkc_fuse_args *a)
{
    VKC_CHECK_FUSE(f);
    VKC_RETURN_IF(!seq, f->obj.ctx, VKC_ERROR_INVALID_HANDLE, "vkc_fuse_record: seq is NULL");
    VKC_FORWARD(vkc_fuse_build(f));
    int w = 1;
    VKC_FORWARD(check_args(f, a, true, &w));
    const vkc__fgraph *g = &f->g;
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
    for (uint32_t s = 0; s < g->scalars; s++)
        push[1 + s] = a->scalars[s].u32;
    const char *label = a->label ? a->label : f->name;
    const uint64_t tail = w == 4 ? a->count % 4 : 0, body = a->count - tail;
    const uint64_t align = f->obj.ctx->info.min_storage_buffer_offset_alignment;
    if (tail && (body * 4) % (align ? align : 1)) {
        w = 1; /* the tail's offsets would break the device's alignment */
    } else if (tail) {
        /* The vec4 kernel over the first body elements, the scalar one over
         * the last 1-3: disjoint ranges of every buffer (all 32-bit, none
         * broadcast), so both land in one level without a barrier. */
        vkc_arg targs[VKC_MAX_BINDINGS];
        for (uint32_t i = 0; i < n; i++) {
            targs[i] = args[i];
            targs[i].offset += body * 4;
            targs[i].size = tail * 4;
            args[i].size = body * 4;
        }
        push[0] = (uint32_t)(body / 4);
        VKC_FORWARD(
            record_kernel(seq, f, f->kernel[1], args, n, push, 1 + g->scalars, body / 4, label));
        push[0] = (uint32_t)tail;
        return record_kernel(seq, f, f->kernel[0], targs, n, push, 1 + g->scalars, tail, label);
    }
    uint64_t units = w == 4 ? a->count / 4 : a->count;
    push[0] = (uint32_t)units;
    return record_kernel(seq, f, f->kernel[w == 4 ? 1 : 0], args, n, push, 1 + g->scalars, units,
                         label);
}

/* ---- unfused ------------------------------------------------------------------ */

static vkc_result temp_alloc(vkc_fuse *f, uint64_t bytes, vkc_buffer **out)
{
    if (f->temp_count == f->temp_cap) {
        uint32_t cap = f->temp_cap ? f->temp_cap * 2 : 8;
        vkc_buffer **p = vkc__realloc(f->temps, cap * sizeof *p);
        VKC_RETURN_IF(!p, f->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion temporaries");
        f->temps = p;
        f->temp_cap = cap;
    }
    char name[80];
    snprintf(name, sizeof name, "%s.tmp%u", f->name, f->temp_count);
    VKC_FORWARD(
        vkc_buffer_create(f->obj.ctx, &(vkc_buffer_desc){.size = bytes, .name = name}, out));
    f->temps[f->temp_count++] = *out;
    return VKC_SUCCESS;
}

/* One step of the unfused run: a mini graph with its bindings and pushes. */
typedef struct step {
    vkc__fgraph g;
    vkc_arg args[VKC_MAX_BINDINGS];
    uint32_t nargs;
    uint32_t push[1 + VKC_FUSE_MAX_SCALARS];
    uint32_t npush;
    uint32_t map[3], mapped_from[3], nmap; /* operand node -> mini node */
} step;

/* Bring node k of the big graph into the step as a value; returns its mini
 * node index through *out. */
static bool step_operand(step *s, const vkc__fgraph *big, uint32_t k, vkc_buffer *const *temps,
                         const vkc_fuse_args *a, uint32_t *out)
{
    for (uint32_t i = 0; i < s->nmap; i++)
        if (s->mapped_from[i] == k) {
            *out = s->map[i];
            return true;
        }
    const vkc__fnode *n = &big->nodes[k];
    vkc__fnode m = *n;
    if (n->kind == VKC__FN_INPUT || n->kind == VKC__FN_OP) {
        m.kind = VKC__FN_INPUT;
        m.index = s->g.inputs++;
        if (n->kind == VKC__FN_OP) {
            m.stype = n->type; /* BOOL temporaries hold uint 0/1 */
            m.period = 0;
            s->args[s->nargs++] = (vkc_arg){.buffer = temps[k], .access = VKC_ACCESS_READ};
        } else {
            s->args[s->nargs] = a->inputs[n->index];
            s->args[s->nargs++].access = VKC_ACCESS_READ;
        }
    } else if (n->kind == VKC__FN_SCALAR) {
        m.index = s->g.scalars++;
        s->push[s->npush++] = a->scalars[n->index].u32;
    } else {
        s->g.constants++;
    }
    m.narg = 0;
    if (!vkc__fgraph_push_node(&s->g, &m))
        return false;
    *out = s->g.count - 1;
    s->mapped_from[s->nmap] = k;
    s->map[s->nmap++] = *out;
    return true;
}

vkc_result vkc_fuse_record_unfused(vkc_seq *seq, vkc_fuse *f, const vkc_fuse_args *a)
{
    VKC_CHECK_FUSE(f);
    vkc_context *ctx = f->obj.ctx;
    VKC_RETURN_IF(!seq, ctx, VKC_ERROR_INVALID_HANDLE, "vkc_fuse_record_unfused: seq is NULL");
    VKC_FORWARD(vkc__fuse_prepare(f));
    int w = 1;
    VKC_FORWARD(check_args(f, a, false, &w));
    const vkc__fgraph *g = &f->g;

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
        if (g->nodes[k].kind == VKC__FN_OP)
            for (uint32_t i = 0; i < g->nodes[k].narg; i++)
                needed[g->nodes[k].arg[i]] = true;
    for (uint32_t k = 0; k < g->count && r == VKC_SUCCESS; k++)
        if (needed[k] && g->nodes[k].kind == VKC__FN_OP)
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
        if (!tail && g->nodes[k].kind != VKC__FN_OP)
            continue;
        vkc__fgraph_free(&s->g); /* the previous step's, whichever way it ended */
        memset(s, 0, sizeof *s);
        s->g.reduce_node = -1;
        s->npush = 1;
        bool any = false;
        uint32_t value = 0;
        if (!tail && g->nodes[k].kind == VKC__FN_OP) {
            const vkc__fnode *n = &g->nodes[k];
            vkc__fnode m = *n;
            for (uint32_t i = 0; i < n->narg; i++)
                if (!step_operand(s, g, n->arg[i], temps, a, &m.arg[i])) {
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                    break;
                }
            if (r < 0 || !vkc__fgraph_push_node(&s->g, &m)) {
                if (r == VKC_SUCCESS)
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                break;
            }
            s->g.ops = 1;
            value = s->g.count - 1;
            if (needed[k]) {
                vkc__fgraph_push_out(&s->g, value, n->type);
                s->args[s->nargs++] = (vkc_arg){.buffer = temps[k], .access = VKC_ACCESS_WRITE};
            }
        }
        /* outputs of node k (or, in the tail step, of non-op nodes one by one) */
        for (uint32_t o = 0; o < g->out_count && r == VKC_SUCCESS; o++) {
            uint32_t src = g->outs[o].node;
            bool mine = tail ? g->nodes[src].kind != VKC__FN_OP : src == k;
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
                    !vkc__fgraph_push_out(&c->g, v, g->outs[o].stype)) {
                    vkc__fgraph_free(&c->g);
                    vkc__free(c);
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion step");
                    break;
                }
                c->args[c->nargs] = alias[o] ? (vkc_arg){.buffer = alias[o]} : a->outputs[o];
                c->args[c->nargs++].access = VKC_ACCESS_WRITE;
                char *src_text = vkc__fuse_glsl(&c->g, w, f->name);
                vkc_kernel *kern = NULL;
                if (!src_text)
                    r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
                else
                    r = vkc__fuse_kernel(f, src_text, f->name, false, &kern);
                if (r == VKC_SUCCESS) {
                    f->unfused_kernels++;
                    c->push[0] = (uint32_t)(w == 4 ? a->count / 4 : a->count);
                    r = record_kernel(seq, f, kern, c->args, c->nargs, c->push, c->npush,
                                      c->push[0], a->label ? a->label : f->name);
                }
                vkc__free(src_text);
                vkc__fgraph_free(&c->g);
                vkc__free(c);
                continue;
            }
            vkc__fgraph_push_out(&s->g, value, g->outs[o].stype);
            s->args[s->nargs] = alias[o] ? (vkc_arg){.buffer = alias[o]} : a->outputs[o];
            s->args[s->nargs++].access = VKC_ACCESS_WRITE;
            any = true;
        }
        if (r < 0)
            break;
        bool red_here = g->reduce_node >= 0 && (tail ? g->nodes[g->reduce_node].kind != VKC__FN_OP
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
        if ((tail && !any) || (!tail && g->nodes[k].kind != VKC__FN_OP))
            continue;
        if (!tail && !any && !needed[k])
            continue; /* dead op: nothing reads or outputs it */
        if (s->g.out_count + s->g.inputs == 0 && s->g.reduce_node < 0)
            continue;
        /* inputs come first in the binding order: move the output args after
         * the input args (step_operand appended inputs as it met them, and
         * outputs were appended after all operands, so the order holds) */
        char *src_text = vkc__fuse_glsl(&s->g, w, f->name);
        vkc_kernel *kern = NULL;
        if (!src_text) {
            r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "fusion source");
            break;
        }
        r = vkc__fuse_kernel(f, src_text, f->name, false, &kern);
        vkc__free(src_text);
        if (r < 0)
            break;
        f->unfused_kernels++;
        s->push[0] = (uint32_t)(w == 4 ? a->count / 4 : a->count);
        r = record_kernel(seq, f, kern, s->args, s->nargs, s->push, s->npush, s->push[0],
                          a->label ? a->label : f->name);
        vkc__fgraph_free(&s->g);
    }
    for (uint32_t o = 0; o < g->out_count && r == VKC_SUCCESS; o++)
        if (alias[o])
            r = vkc_seq_copy(seq, a->outputs[o].buffer, a->outputs[o].offset, alias[o], 0,
                             a->count * 4);
done:
    if (s)
        vkc__fgraph_free(&s->g);
    vkc__free(s);
    vkc__free(needed);
    vkc__free(temps);
    vkc__free(alias);
    return r;
}
