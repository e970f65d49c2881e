/* Split dispatches across two contexts (two instances on lavapipe's one
 * device, or two devices), checked against the CPU: element-count
 * dispatches, fusion graphs, calibrated and given weights, bad input, a
 * part whose device fails (fault injection) and a part that never finishes
 * (a host semaphore never signalled): clear errors, bounded waits. */
#include "vkc_internal.h"

#include "vkc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y[i] = global index of element i: needs the part's first element. */
static const char *IOTA_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) writeonly buffer Y { uint y[]; };\n"
    "layout(push_constant) uniform P { uint n; uint first; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) y[i] = pc.first + i;\n"
    "}\n";

#define N 100003u /* odd: the last part is not a multiple of the granularity */

typedef struct push3 {
    uint32_t n, a, b;
} push3;

typedef struct fx {
    vkc_context *ctx[2];
    vkc_kernel *axpb[2], *iota[2];
    /* Host arrays of N elements, 4 bytes each, for any test. */
    uint32_t *host, *got;
    float *fa, *fb, *fz;
} fx;

static int setup(void **state)
{
    vkc_test_validation_reset();
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    f->host = malloc(N * 4);
    f->got = malloc(N * 4);
    f->fa = malloc(N * 4);
    f->fb = malloc(N * 4);
    f->fz = malloc(N * 4);
    assert_true(f->host && f->got && f->fa && f->fb && f->fz);
    for (int i = 0; i < 2; ++i) {
        f->ctx[i] = vkc_test_context_create(NULL);
        assert_int_equal(
            vkc_kernel_create_glsl(f->ctx[i],
                                   &(vkc_glsl_desc){.source = vkc_test_axpb_glsl, .name = "axpb"},
                                   &f->axpb[i]),
            VKC_SUCCESS);
        assert_int_equal(
            vkc_kernel_create_glsl(f->ctx[i], &(vkc_glsl_desc){.source = IOTA_GLSL, .name = "iota"},
                                   &f->iota[i]),
            VKC_SUCCESS);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    vkc_context_destroy(f->ctx[1]);
    vkc_context_destroy(f->ctx[0]);
    free(f->host);
    free(f->got);
    free(f->fa);
    free(f->fb);
    free(f->fz);
    free(f);
    if (vkc_test_validation_count()) {
        fprintf(stderr, "%u validation message(s) in this group\n", vkc_test_validation_count());
        return -1;
    }
    return 0;
}

/* x = x * p->a + p->b over count elements of split buffer *x. */
static vkc_split_dispatch_desc axpb_desc(fx *f, vkc_split_buffer **x, const push3 *p,
                                         uint64_t count)
{
    return (vkc_split_dispatch_desc){.kernels = f->axpb,
                                     .args = x,
                                     .arg_count = 1,
                                     .push = p,
                                     .push_size = sizeof(*p),
                                     .count_in_push = true,
                                     .count = count};
}

static vkc_split *make_split(fx *f, const double *weights, vkc_toggle calibrate)
{
    vkc_split *sp = NULL;
    vkc_result r = vkc_split_create(&(vkc_split_desc){.contexts = f->ctx,
                                                      .context_count = 2,
                                                      .weights = weights,
                                                      .calibrate = calibrate,
                                                      .calibrate_count = 1u << 16},
                                    &sp);
    if (r != VKC_SUCCESS)
        fail_msg("vkc_split_create: %s: %s", vkc_result_string(r), vkc_last_create_error());
    return sp;
}

/* x = x * a + b over N elements split in two, then y = index. */
static void run_axpb(fx *f, vkc_split *sp, uint32_t *host, uint32_t *got)
{
    vkc_split_buffer *x = NULL, *y = NULL;
    assert_int_equal(
        vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = N, .name = "x"}, &x),
        VKC_SUCCESS);
    assert_int_equal(
        vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = N, .name = "y"}, &y),
        VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        host[i] = i * 2654435761u;
    assert_int_equal(vkc_split_scatter(x, host), VKC_SUCCESS);
    push3 p = {0, 5, 11};
    vkc_split_dispatch_desc d = axpb_desc(f, &x, &p, N);
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_SUCCESS);
    /* Again, through tickets. */
    vkc_ticket t[2];
    assert_int_equal(vkc_split_dispatch(sp, &d, t), VKC_SUCCESS);
    assert_int_equal(vkc_split_wait(sp, t), VKC_SUCCESS);
    memset(got, 0, N * 4);
    assert_int_equal(vkc_split_gather(x, got), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t e = (host[i] * 5u + 11u) * 5u + 11u;
        if (got[i] != e)
            fail_msg("x[%u] = %u, expected %u", i, got[i], e);
    }
    uint32_t pi[2] = {0, 0};
    assert_int_equal(vkc_split_dispatch(sp,
                                        &(vkc_split_dispatch_desc){.kernels = f->iota,
                                                                   .args = &y,
                                                                   .arg_count = 1,
                                                                   .push = pi,
                                                                   .push_size = sizeof(pi),
                                                                   .count_in_push = true,
                                                                   .first_in_push = true,
                                                                   .first_offset = 4,
                                                                   .count = N},
                                        NULL),
                     VKC_SUCCESS);
    assert_int_equal(vkc_split_gather(y, got), VKC_SUCCESS);
    for (uint32_t i = 0; i < N; ++i)
        if (got[i] != i)
            fail_msg("y[%u] = %u, expected %u", i, got[i], i);
    vkc_split_buffer_destroy(y);
    vkc_split_buffer_destroy(x);
}

static void test_dispatch_calibrated(void **state)
{
    fx *f = *state;
    uint32_t *host = f->host, *got = f->got;
    vkc_split *sp = make_split(f, NULL, VKC_DEFAULT);
    vkc_split_info info;
    assert_int_equal(vkc_split_info_get(sp, &info), VKC_SUCCESS);
    assert_true(info.calibrated);
    assert_int_equal(info.context_count, 2);
    assert_true(info.weights[0] > 0 && info.weights[1] > 0);
    assert_true(info.weights[0] + info.weights[1] > 0.999999 &&
                info.weights[0] + info.weights[1] < 1.000001);
    assert_true(info.calibrate_ns[0] > 0 && info.calibrate_ns[1] > 0);
    printf("calibration: %.3f / %.3f (%llu / %llu ns)\n", info.weights[0], info.weights[1],
           (unsigned long long)info.calibrate_ns[0], (unsigned long long)info.calibrate_ns[1]);
    /* The ranges tile [0, N). */
    uint64_t first[2], count[2];
    assert_int_equal(vkc_split_ranges(sp, N, first, count), VKC_SUCCESS);
    assert_int_equal(first[0], 0);
    assert_int_equal(first[1], count[0]);
    assert_int_equal(count[0] + count[1], N);
    assert_int_equal(count[0] % 256, 0);
    run_axpb(f, sp, host, got);
    vkc_split_destroy(sp);
}

static void test_dispatch_weighted(void **state)
{
    fx *f = *state;
    uint32_t *host = f->host, *got = f->got;
    /* 3 : 1 in units of 256 elements: round(0.75 * ceil(N / 256)) * 256. */
    vkc_split *sp = make_split(f, (double[]){3.0, 1.0}, VKC_DEFAULT);
    uint64_t first[2], count[2];
    assert_int_equal(vkc_split_ranges(sp, N, first, count), VKC_SUCCESS);
    uint64_t units = (N + 255) / 256;
    assert_int_equal(count[0], (uint64_t)(0.75 * (double)units + 0.5) * 256);
    assert_int_equal(count[1], N - count[0]);
    /* A count smaller than one unit leaves part 1 empty. */
    assert_int_equal(vkc_split_ranges(sp, 100, first, count), VKC_SUCCESS);
    assert_int_equal(count[0], 100);
    assert_int_equal(count[1], 0);
    run_axpb(f, sp, host, got);
    /* All on one side: a buffer and dispatch with an empty part. */
    vkc_split_buffer *x;
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = 100}, &x),
                     VKC_SUCCESS);
    vkc_buffer *part1 = (vkc_buffer *)1;
    assert_int_equal(vkc_split_buffer_part(x, 1, &part1, first, count), VKC_SUCCESS);
    assert_null(part1);
    assert_int_equal(count[0], 0);
    for (uint32_t i = 0; i < 100; ++i)
        host[i] = i;
    assert_int_equal(vkc_split_scatter(x, host), VKC_SUCCESS);
    push3 p = {0, 2, 1};
    vkc_split_dispatch_desc d = axpb_desc(f, &x, &p, 100);
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_SUCCESS);
    assert_int_equal(vkc_split_gather(x, got), VKC_SUCCESS);
    for (uint32_t i = 0; i < 100; ++i)
        assert_int_equal(got[i], 2 * i + 1);
    /* Left alive on purpose: vkc_split_destroy frees it. */
    vkc_split_destroy(sp);
}

/* Scatter and gather of 8 MiB: the parts' transfers run on threads. */
static void test_large_transfer(void **state)
{
    fx *f = *state;
    const uint32_t n = 2u << 20;
    uint32_t *h = malloc(n * 4), *g = malloc(n * 4);
    assert_non_null(h);
    assert_non_null(g);
    for (uint32_t i = 0; i < n; ++i)
        h[i] = i ^ 0x5a5a5a5au;
    vkc_split *sp = make_split(f, (double[]){1.0, 1.0}, VKC_DEFAULT);
    vkc_split_buffer *x;
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = n}, &x),
                     VKC_SUCCESS);
    assert_int_equal(vkc_split_scatter(x, h), VKC_SUCCESS);
    push3 p = {0, 3, 5};
    vkc_split_dispatch_desc d = axpb_desc(f, &x, &p, n);
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_SUCCESS);
    assert_int_equal(vkc_split_gather(x, g), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        if (g[i] != h[i] * 3u + 5u)
            fail_msg("x[%u] = %u, expected %u", i, g[i], h[i] * 3u + 5u);
    vkc_split_destroy(sp);
    free(g);
    free(h);
}

/* z = a * s + b (F32), the same graph built on each context. */
static void build_graph(vkc_fuse *f, int variant)
{
    vkc_value a, b, s, y;
    vkc_fuse_input_desc in = {.type = VKC_DTYPE_F32, .period = variant == 2 ? 16u : 0u};
    assert_int_equal(vkc_fuse_input_ex(f, &in, &a), VKC_SUCCESS);
    assert_int_equal(vkc_fuse_input(f, VKC_DTYPE_F32, &b), VKC_SUCCESS);
    assert_int_equal(vkc_fuse_scalar(f, VKC_DTYPE_F32, &s), VKC_SUCCESS);
    assert_int_equal(vkc_fuse_op(f, variant == 1 ? VKC_OP_ADD : VKC_OP_FMA, (vkc_value[]){a, s, b},
                                 variant == 1 ? 2 : 3, &y),
                     VKC_SUCCESS);
    if (variant == 3) {
        vkc_value p, seed;
        assert_int_equal(vkc_fuse_constant(f, VKC_DTYPE_F32, 0.5, &p), VKC_SUCCESS);
        assert_int_equal(vkc_fuse_constant(f, VKC_DTYPE_U32, 7, &seed), VKC_SUCCESS);
        assert_int_equal(vkc_fuse_op(f, VKC_OP_DROPOUT, (vkc_value[]){y, p, seed}, 3, &y),
                         VKC_SUCCESS);
    }
    if (variant >= 4) /* 4 + a vkc_reduce_op */
        assert_int_equal(vkc_fuse_reduce(f, y, (vkc_reduce_op)(variant - 4)), VKC_SUCCESS);
    else
        assert_int_equal(vkc_fuse_output(f, y, NULL), VKC_SUCCESS);
}

static void test_fuse(void **state)
{
    fx *f = *state;
    vkc_split *sp = make_split(f, (double[]){1.0, 2.0}, VKC_DEFAULT);
    float *ha = f->fa, *hb = f->fb, *got = f->fz;
    for (uint32_t i = 0; i < N; ++i) {
        ha[i] = (float)(i % 1000) * 0.25f;
        hb[i] = (float)(i % 77) - 30.0f;
    }
    vkc_split_buffer *a, *b, *z;
    vkc_split_buffer_desc bd = {.count = N};
    assert_int_equal(vkc_split_buffer_create(sp, &bd, &a), VKC_SUCCESS);
    assert_int_equal(vkc_split_buffer_create(sp, &bd, &b), VKC_SUCCESS);
    assert_int_equal(vkc_split_buffer_create(sp, &bd, &z), VKC_SUCCESS);
    assert_int_equal(vkc_split_scatter(a, ha), VKC_SUCCESS);
    assert_int_equal(vkc_split_scatter(b, hb), VKC_SUCCESS);
    vkc_fuse *g[2];
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(vkc_fuse_create(f->ctx[i], &(vkc_fuse_desc){.name = "split fma"}, &g[i]),
                         VKC_SUCCESS);
        build_graph(g[i], 0);
    }
    vkc_scalar s = {.f32 = 3.0f};
    vkc_split_fuse_args args = {.inputs = (vkc_split_buffer *[]){a, b},
                                .input_count = 2,
                                .outputs = &z,
                                .output_count = 1,
                                .scalars = &s,
                                .scalar_count = 1,
                                .count = N};
    /* Twice: the second run re-records the parts' sequences. */
    for (int it = 0; it < 2; ++it) {
        s.f32 = 3.0f + (float)it;
        vkc_ticket t[2];
        assert_int_equal(vkc_split_fuse(sp, g, &args, it ? t : NULL), VKC_SUCCESS);
        if (it)
            assert_int_equal(vkc_split_wait(sp, t), VKC_SUCCESS);
        assert_int_equal(vkc_split_gather(z, got), VKC_SUCCESS);
        for (uint32_t i = 0; i < N; ++i) {
            float e = ha[i] * s.f32 + hb[i];
            /* fma may or may not round the product: within 1 ulp of e. */
            float d = got[i] - e;
            if (d < 0)
                d = -d;
            if (d > 1e-6f * (e < 0 ? -e : e) + 1e-6f)
                fail_msg("z[%u] = %g, expected %g", i, (double)got[i], (double)e);
        }
    }

    /* Graphs a split refuses, and mismatched graphs. */
    vkc_test_quiet_errors(1);
    for (int variant = 1; variant <= 3; ++variant) {
        vkc_fuse *h[2];
        for (int i = 0; i < 2; ++i) {
            assert_int_equal(vkc_fuse_create(f->ctx[i], NULL, &h[i]), VKC_SUCCESS);
            build_graph(h[i], i == 1 || variant != 1 ? variant : 0);
        }
        vkc_result want = variant == 1 ? VKC_ERROR_MISMATCH : VKC_ERROR_UNSUPPORTED;
        assert_int_equal(vkc_split_fuse(sp, h, &args, NULL), want);
        const char *e = vkc_split_last_error(sp);
        const char *key[] = {"", "not the same graph", "broadcast", "dropout"};
        if (!strstr(e, key[variant]))
            fail_msg("variant %d: \"%s\" lacks \"%s\"", variant, e, key[variant]);
        vkc_fuse_destroy(h[0]);
        vkc_fuse_destroy(h[1]);
    }
    /* Reductions: each part reduces its range, the split combines them. */
    for (int op = VKC_REDUCE_SUM; op <= VKC_REDUCE_MEAN; ++op) {
        vkc_fuse *h[2];
        for (int i = 0; i < 2; ++i) {
            assert_int_equal(vkc_fuse_create(f->ctx[i], NULL, &h[i]), VKC_SUCCESS);
            build_graph(h[i], 4 + op);
        }
        double sum = 0, abs_sum = 0, lo = INFINITY, hi = -INFINITY;
        for (uint32_t i = 0; i < N; ++i) {
            double y = (double)ha[i] * s.f32 + hb[i];
            sum += y;
            abs_sum += fabs(y);
            lo = y < lo ? y : lo;
            hi = y > hi ? y : hi;
        }
        double want = op == VKC_REDUCE_SUM   ? sum
                      : op == VKC_REDUCE_MIN ? lo
                      : op == VKC_REDUCE_MAX ? hi
                                             : sum / N;
        double tol = op == VKC_REDUCE_SUM    ? 1e-5 * abs_sum
                     : op == VKC_REDUCE_MEAN ? 1e-5 * abs_sum / N
                                             : 1e-6 * fabs(want);
        float got_r = NAN;
        vkc_split_fuse_args ra = {.inputs = args.inputs,
                                  .input_count = 2,
                                  .scalars = &s,
                                  .scalar_count = 1,
                                  .count = N,
                                  .reduce_result = &got_r};
        assert_int_equal(vkc_split_fuse(sp, h, &ra, NULL), VKC_SUCCESS);
        if (!(fabs((double)got_r - want) <= tol))
            fail_msg("reduce op %d: %.9g, expected %.9g (tolerance %.3g)", op, (double)got_r, want,
                     tol);
        /* Asynchronously, or without a place for the result: refused. */
        vkc_ticket t[2];
        assert_int_equal(vkc_split_fuse(sp, h, &ra, t), VKC_ERROR_INVALID_ARGUMENT);
        ra.reduce_result = NULL;
        assert_int_equal(vkc_split_fuse(sp, h, &ra, NULL), VKC_ERROR_INVALID_ARGUMENT);
        vkc_fuse_destroy(h[0]);
        vkc_fuse_destroy(h[1]);
    }
    float stray;
    args.reduce_result = &stray;
    assert_int_equal(vkc_split_fuse(sp, g, &args, NULL), VKC_ERROR_INVALID_ARGUMENT);
    args.reduce_result = NULL;
    /* A graph of the wrong context, in both places. */
    assert_int_equal(vkc_split_fuse(sp, (vkc_fuse *[]){g[1], g[0]}, &args, NULL),
                     VKC_ERROR_MISMATCH);
    vkc_test_quiet_errors(0);
    vkc_fuse_destroy(g[0]);
    vkc_fuse_destroy(g[1]);
    vkc_split_destroy(sp);
}

static void test_bad_input(void **state)
{
    fx *f = *state;
    vkc_test_quiet_errors(1);
    vkc_split *sp = (vkc_split *)1;
    /* Zero contexts. */
    assert_int_equal(vkc_split_create(&(vkc_split_desc){.contexts = f->ctx}, &sp),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_null(sp);
    assert_non_null(strstr(vkc_last_create_error(), "no contexts"));
    assert_int_equal(vkc_split_create(NULL, &sp), VKC_ERROR_INVALID_ARGUMENT);
    /* The same context twice. */
    assert_int_equal(
        vkc_split_create(&(vkc_split_desc){.contexts = (vkc_context *[]){f->ctx[0], f->ctx[0]},
                                           .context_count = 2},
                         &sp),
        VKC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkc_last_create_error(), "same context"));
    /* Two contexts on one VkDevice: a wrap of context 0's device. */
    vkc_vk_handles h;
    assert_int_equal(vkc_context_vk(f->ctx[0], &h), VKC_SUCCESS);
    vkc_context *wrap = NULL;
    assert_int_equal(
        vkc_context_wrap(&(vkc_wrap_desc){.instance = h.instance,
                                          .physical_device = h.physical_device,
                                          .device = h.device,
                                          .get_instance_proc_addr = h.get_instance_proc_addr,
                                          .api_version = h.api_version,
                                          .queue_family = h.queue_family,
                                          .logger = {vkc_test_log, NULL},
                                          .disk_cache = VKC_OFF},
                         &wrap),
        VKC_SUCCESS);
    assert_int_equal(
        vkc_split_create(
            &(vkc_split_desc){.contexts = (vkc_context *[]){f->ctx[0], wrap}, .context_count = 2},
            &sp),
        VKC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkc_last_create_error(), "same VkDevice"));
    vkc_context_destroy(wrap);
    /* Bad weights, weights with calibration, too many contexts. */
    assert_int_equal(vkc_split_create(&(vkc_split_desc){.contexts = f->ctx,
                                                        .context_count = 2,
                                                        .weights = (double[]){1.0, 0.0}},
                                      &sp),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_split_create(&(vkc_split_desc){.contexts = f->ctx,
                                                        .context_count = 2,
                                                        .weights = (double[]){1.0, 1.0},
                                                        .calibrate = VKC_ON},
                                      &sp),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(
        vkc_split_create(&(vkc_split_desc){.contexts = f->ctx, .context_count = VKC_MAX_SPLIT + 1},
                         &sp),
        VKC_ERROR_INVALID_ARGUMENT);

    sp = make_split(f, NULL, VKC_OFF);
    vkc_split *other = make_split(f, NULL, VKC_OFF);
    vkc_split_buffer *x, *y, *w;
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = 0}, &x),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_null(x);
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = 4096}, &x),
                     VKC_SUCCESS);
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = 4000}, &y),
                     VKC_SUCCESS);
    assert_int_equal(vkc_split_buffer_create(other, &(vkc_split_buffer_desc){.count = 4096}, &w),
                     VKC_SUCCESS);
    push3 p = {0, 1, 1};
    vkc_split_dispatch_desc d = axpb_desc(f, &x, &p, 4096);
    /* Mismatched sizes: a buffer of 4000 elements in a 4096-element call. */
    d.args = &y;
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_MISMATCH);
    assert_non_null(strstr(vkc_split_last_error(sp), "4000 elements"));
    /* A buffer of another split. */
    d.args = &w;
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkc_split_last_error(sp), "another split"));
    d.args = &x;
    /* Kernels swapped between contexts. */
    d.kernels = (vkc_kernel *[]){f->axpb[1], f->axpb[0]};
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_MISMATCH);
    d.kernels = f->axpb;
    /* The count field past the push constants; count 0. */
    d.count_offset = 10;
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_INVALID_ARGUMENT);
    d.count_offset = 0;
    d.count = 0;
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_LIMIT);
    d.count = 4096;
    /* A part's own check fails (push size of the kernel): named, and part 0
     * (which is checked first) leaves nothing running. */
    d.push_size = 8;
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_MISMATCH);
    assert_non_null(strstr(vkc_split_last_error(sp), "split part 0"));
    d.push_size = sizeof(p);
    assert_int_equal(vkc_split_dispatch(NULL, &d, NULL), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_split_scatter(x, NULL), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_split_gather(NULL, &p), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_split_buffer_part(x, 2, NULL, NULL, NULL), VKC_ERROR_INVALID_ARGUMENT);
    /* And the good call still works. */
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_SUCCESS);
    vkc_split_destroy(other);
    vkc_split_destroy(sp);
    vkc_split_destroy(NULL);
    vkc_split_buffer_destroy(NULL);
    vkc_test_quiet_errors(0);
}

/* Part 1's device is lost at its submission (fault injection): the call
 * returns VKC_ERROR_DEVICE_LOST naming part 1, part 0's result is right,
 * later calls fail at once, and after recovery the split works again. */
static void test_device_fails(void **state)
{
    fx *f = *state;
    vkc_split *sp = make_split(f, NULL, VKC_OFF);
    vkc_split_buffer *x;
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = 8192}, &x),
                     VKC_SUCCESS);
    uint32_t *host = f->host, *got = f->got;
    for (uint32_t i = 0; i < 8192; ++i)
        host[i] = i;
    assert_int_equal(vkc_split_scatter(x, host), VKC_SUCCESS);
    push3 p = {0, 3, 1};
    vkc_split_dispatch_desc d = axpb_desc(f, &x, &p, 8192);
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(f->ctx[1], &feat), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    /* The second submission of the call is part 1's. */
    vkc__fault =
        (vkc__fault_state){.armed = true,
                           .fail_at = 2,
                           .only = VKC__FAULT_VK,
                           .only_call = feat.synchronization2 ? "vkQueueSubmit2" : "vkQueueSubmit",
                           .forced = VK_ERROR_DEVICE_LOST};
    vkc_result r = vkc_split_dispatch(sp, &d, NULL);
    vkc__fault = (vkc__fault_state){0};
    assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
    assert_non_null(strstr(vkc_split_last_error(sp), "split part 1"));
    vkc_buffer *b0;
    uint64_t n0;
    assert_int_equal(vkc_split_buffer_part(x, 0, &b0, NULL, &n0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(b0, 0, got, n0 * 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < n0; ++i)
        assert_int_equal(got[i], 3 * i + 1);
    /* Latched: at once, before any part runs. */
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_ERROR_DEVICE_LOST);
    assert_non_null(strstr(vkc_split_last_error(sp), "lost earlier"));
    assert_int_equal(vkc_split_gather(x, got), VKC_ERROR_DEVICE_LOST);
    vkc_test_quiet_errors(0);
    assert_int_equal(vkc_context_recover(f->ctx[1]), VKC_CONTENTS_LOST);
    /* Part 1 lost its contents; part 0 kept the first run. */
    assert_int_equal(vkc_split_scatter(x, host), VKC_SUCCESS);
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_SUCCESS);
    assert_int_equal(vkc_split_gather(x, got), VKC_SUCCESS);
    for (uint32_t i = 0; i < 8192; ++i)
        assert_int_equal(got[i], 3 * i + 1);
    vkc_split_destroy(sp);
}

/* Part 1 waits on a host semaphore nobody signals: the call returns
 * VKC_TIMEOUT after the split's timeout, naming part 1. */
static void test_part_never_finishes(void **state)
{
    fx *f = *state;
    vkc_context *c1 = f->ctx[1];
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(c1, &feat), VKC_SUCCESS);
    if (!feat.timeline_semaphores)
        skip();
    vkc_split *sp = NULL;
    assert_int_equal(vkc_split_create(&(vkc_split_desc){.contexts = f->ctx,
                                                        .context_count = 2,
                                                        .calibrate = VKC_OFF,
                                                        .timeout_ns = 200000000ull},
                                      &sp),
                     VKC_SUCCESS);
    vkc_split_buffer *x;
    assert_int_equal(vkc_split_buffer_create(sp, &(vkc_split_buffer_desc){.count = 4096}, &x),
                     VKC_SUCCESS);
    assert_int_equal(vkc_split_scatter(x, (uint32_t[4096]){0}), VKC_SUCCESS);
    VkSemaphoreTypeCreateInfo ti = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL,
                                    VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti, 0};
    VkSemaphore sem;
    assert_int_equal(c1->vk.vkCreateSemaphore(c1->device, &si, NULL, &sem), VK_SUCCESS);
    assert_int_equal(vkc_wait_host_semaphore(c1, sem, 1), VKC_SUCCESS);
    push3 p = {0, 1, 7};
    vkc_split_dispatch_desc d = axpb_desc(f, &x, &p, 4096);
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_split_dispatch(sp, &d, NULL), VKC_TIMEOUT);
    vkc_test_quiet_errors(0);
    assert_non_null(strstr(vkc_split_last_error(sp), "split part 1"));
    assert_non_null(strstr(vkc_split_last_error(sp), "timeout"));
    /* Release it; then everything completes and the data is right. */
    VkSemaphoreSignalInfo sig = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, sem, 1};
    assert_int_equal(c1->vk.vkSignalSemaphore(c1->device, &sig), VK_SUCCESS);
    assert_int_equal(vkc_finish(c1), VKC_SUCCESS);
    uint32_t got[4096];
    assert_int_equal(vkc_split_gather(x, got), VKC_SUCCESS);
    for (uint32_t i = 0; i < 4096; ++i)
        assert_int_equal(got[i], 7);
    c1->vk.vkDestroySemaphore(c1->device, sem, NULL);
    vkc_split_destroy(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch_calibrated), cmocka_unit_test(test_dispatch_weighted),
        cmocka_unit_test(test_large_transfer),      cmocka_unit_test(test_fuse),
        cmocka_unit_test(test_bad_input),           cmocka_unit_test(test_device_fails),
        cmocka_unit_test(test_part_never_finishes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
