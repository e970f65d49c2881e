/* libFuzzer target: the fusion graph builder on DAGs decoded from bytes,
 * then vkc_fuse_build (validation, GLSL generation in src/fuse_glsl.c,
 * run-time compilation, pipeline creation) and the generated source. Any result code is fine; a
 * crash, a sanitizer report, a leak, a hang, or generated GLSL that does not
 * compile (VKC_ERROR_COMPILE: a vkc bug by the API's own words) is not.
 *
 * Encoding: a stream of steps, each one byte of kind followed by its
 * operands; operands that name values are indexes into the values made so
 * far (or, with the top bit set, a raw id: dangling, foreign, not yet made). */
#include "fuzz_common.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t next(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

#define MAX_VALUES 64

static vkc_value pick(reader *r, const vkc_value *vals, uint32_t count)
{
    uint8_t b = next(r);
    if (b & 0x80 || !count)
        return (vkc_value)b * 0x100000001u; /* a raw id: serial and index b */
    return vals[b % count];
}

static vkc_dtype dtype(uint8_t b)
{
    return (vkc_dtype)(b % 6);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned runs;
    /* The context keeps every kernel it built in its cache: start a new one
     * now and then so memory stays bounded. */
    if (++runs % 500 == 0)
        vkc_fuzz_destroy();
    vkc_context *ctx = vkc_fuzz_context();
    reader r = {data, size};
    vkc_fuse *g = NULL;
    uint8_t flags = next(&r);
    vkc_fuse_desc desc = {.name = "fuzz", .vectorize = (flags & 1) ? VKC_OFF : VKC_DEFAULT};
    if (vkc_fuse_create(ctx, &desc, &g) != VKC_SUCCESS)
        abort();
    vkc_value vals[MAX_VALUES];
    uint32_t count = 0;
    for (int steps = 0; r.n && steps < 48; ++steps) {
        uint8_t kind = next(&r) % 8;
        vkc_value v = 0;
        vkc_result res = VKC_SUCCESS;
        switch (kind) {
        case 0:
            res = vkc_fuse_input_ex(
                g, &(vkc_fuse_input_desc){.type = dtype(next(&r)), .period = next(&r) % 5}, &v);
            break;
        case 1:
            res = vkc_fuse_scalar(g, dtype(next(&r)), &v);
            break;
        case 2: {
            uint8_t t = next(&r);
            int8_t val = (int8_t)next(&r);
            res = vkc_fuse_constant(g, dtype(t), (double)val / 4.0, &v);
            break;
        }
        case 3: {
            vkc_fuse_opcode op = (vkc_fuse_opcode)(next(&r) % (VKC_OP_COUNT_ + 1));
            uint32_t argc = next(&r) % 4;
            vkc_value args[3];
            for (uint32_t i = 0; i < argc; ++i)
                args[i] = pick(&r, vals, count);
            res = vkc_fuse_op(g, op, args, argc, &v);
            break;
        }
        case 4:
            res = vkc_fuse_cast(g, pick(&r, vals, count), dtype(next(&r)), &v);
            break;
        case 5:
            res = vkc_fuse_output(g, pick(&r, vals, count), NULL);
            break;
        case 6:
            res = vkc_fuse_output_as(g, pick(&r, vals, count), dtype(next(&r)), NULL);
            break;
        case 7:
            res = vkc_fuse_reduce(g, pick(&r, vals, count), (vkc_reduce_op)(next(&r) % 6));
            break;
        }
        if (res == VKC_SUCCESS && v && count < MAX_VALUES)
            vals[count++] = v;
    }
    vkc_result res = vkc_fuse_build(g);
    if (res == VKC_ERROR_COMPILE) {
        fprintf(stderr, "generated GLSL does not compile: %s\n%s\n", vkc_context_last_error(ctx),
                vkc_fuse_source(g, false) ? vkc_fuse_source(g, false) : "(no source)");
        abort();
    }
    if (res == VKC_SUCCESS) {
        const char *src = vkc_fuse_source(g, false);
        if (!src || !strstr(src, "void main"))
            abort();
        vkc_fuse_info info;
        if (vkc_fuse_info_get(g, &info) != VKC_SUCCESS)
            abort();
    }
    vkc_fuse_destroy(g);
    return 0;
}
