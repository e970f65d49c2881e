/* Cooperative dispatch and vkc's GLSL include "vkc_grid.glsl": a multi-step
 * kernel whose every step reads what neighbouring workgroups wrote in the
 * step before, run through vkc_seq_dispatch_cooperative and checked against
 * the same steps on the CPU, in both forms.
 *
 * Lavapipe (Mesa 22.3 here) reports no SM count, so the default form there
 * is the fallback (one dispatch per step). It runs the workgroups of a
 * small dispatch one after another, so the cooperative form is only safe
 * with a grid of ONE workgroup (two would spin in the first barrier until
 * lavapipe's loop limit, 65,535 iterations, ends the spin), which is what
 * the forced test uses; spin loops also misbehave there with workgroups
 * wider than 8, hence local_size_x = 8. */
#define _GNU_SOURCE
/* The private header first: it brings Vulkan in without prototypes (volk). */
#include "vkc_internal.h"

#include "vkc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Step s reads one buffer and writes the other: dst[i] = src[(i + 1) % n] *
 * 3 + s, grid-strided. Element i + 1 belongs to the next workgroup at a
 * group's edge: a missing barrier shows. */
static const char *STEPS_GLSL =
    "#version 450\n"
    "#include \"vkc_grid.glsl\"\n"
    "layout(local_size_x = 8) in;\n"
    "layout(set = 0, binding = 1) coherent buffer A { uint a[]; };\n"
    "layout(set = 0, binding = 2) coherent buffer B { uint b[]; };\n"
    "layout(push_constant) uniform P { uint n; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  VKC_GRID_STEPS(s) {\n"
    "    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {\n"
    "      uint j = (i + 1u) % pc.n;\n"
    "      if ((s & 1u) == 0u) b[i] = a[j] * 3u + s; else a[i] = b[j] * 3u + s;\n"
    "    }\n"
    "    vkc_grid_barrier();\n"
    "  }\n"
    "}\n";

/* The same with the state at binding 1 (VKC_GRID_BINDING), between the
 * caller's buffers in the binding order. */
static const char *STEPS_GLSL_B2 =
    "#version 450\n"
    "#define VKC_GRID_BINDING 1\n"
    "#include \"vkc_grid.glsl\"\n"
    "layout(local_size_x = 8) in;\n"
    "layout(set = 0, binding = 0) coherent buffer A { uint a[]; };\n"
    "layout(set = 0, binding = 2) coherent buffer B { uint b[]; };\n"
    "layout(push_constant) uniform P { uint n; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint s = vkc_grid_step_begin(); s < vkc_grid_step_end(); ++s) {\n"
    "    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {\n"
    "      uint j = (i + 1u) % pc.n;\n"
    "      if ((s & 1u) == 0u) b[i] = a[j] * 3u + s; else a[i] = b[j] * 3u + s;\n"
    "    }\n"
    "    vkc_grid_barrier();\n"
    "  }\n"
    "}\n";

typedef struct fixture {
    vkc_context *ctx;
    vkc_kernel *k;
    vkc_buffer *a, *b;
    vkc_arg args[2]; /* a and b, read and written: the steps' hazards */
    uint32_t n;
    uint32_t *ref, *tmp, *got;
} fixture;

/* The kernel compiled from src with the defines given (may be none). */
static void fixture_init_defines(fixture *f, vkc_context *ctx, const char *src,
                                 const char *const *defines, uint32_t define_count, uint32_t n)
{
    memset(f, 0, sizeof(*f));
    f->ctx = ctx;
    f->n = n;
    assert_int_equal(vkc_kernel_create_glsl(ctx,
                                            &(vkc_glsl_desc){.source = src,
                                                             .name = "steps",
                                                             .defines = defines,
                                                             .define_count = define_count},
                                            &f->k),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &f->a), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &f->b), VKC_SUCCESS);
    f->args[0] = (vkc_arg){.buffer = f->a, .access = VKC_ACCESS_READ_WRITE};
    f->args[1] = (vkc_arg){.buffer = f->b, .access = VKC_ACCESS_READ_WRITE};
    f->ref = calloc(n, 4);
    f->tmp = calloc(n, 4);
    f->got = calloc(n, 4);
    assert_non_null(f->ref);
    assert_non_null(f->tmp);
    assert_non_null(f->got);
    for (uint32_t i = 0; i < n; ++i)
        f->ref[i] = i * 7 + 1;
    assert_int_equal(vkc_buffer_upload(f->a, 0, f->ref, n * 4), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(f->b, 0, n * 4, 0), VKC_SUCCESS);
}

static void fixture_init(fixture *f, vkc_context *ctx, const char *src, uint32_t n)
{
    fixture_init_defines(f, ctx, src, NULL, 0, n);
}

static void fixture_finish(fixture *f)
{
    free(f->ref);
    free(f->tmp);
    free(f->got);
    vkc_buffer_destroy(f->b);
    vkc_buffer_destroy(f->a);
    vkc_kernel_destroy(f->k);
}

/* The CPU's steps [0, steps) from ref, into ref. */
static void reference_steps(fixture *f, uint32_t steps)
{
    for (uint32_t st = 0; st < steps; ++st) {
        for (uint32_t i = 0; i < f->n; ++i)
            f->tmp[i] = f->ref[(i + 1) % f->n] * 3u + st;
        memcpy(f->ref, f->tmp, f->n * 4);
    }
}

/* Record the steps with `coop` and grid `groups` (or a count), submit the
 * sequence twice (each time from the previous result) and compare with the
 * CPU. */
static void run_steps(fixture *f, const vkc_coop_desc *coop, const uint32_t groups[3],
                      uint64_t count, vkc_coop_info *info)
{
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(f->ctx, NULL, &s), VKC_SUCCESS);
    vkc_dispatch_desc d = {.kernel = f->k,
                           .args = f->args,
                           .arg_count = 2,
                           .push = &f->n,
                           .push_size = 4,
                           .count = count};
    if (groups)
        memcpy(d.groups, groups, sizeof(d.groups));
    assert_int_equal(vkc_seq_dispatch_cooperative(s, &d, coop, info), VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    const uint32_t steps = coop->steps;
    for (int round = 0; round < 2; ++round) {
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(f->ctx, t, UINT64_MAX), VKC_SUCCESS);
        reference_steps(f, steps);
        /* An odd count ends in b: the next round starts from a again. */
        vkc_buffer *last = steps & 1 ? f->b : f->a;
        assert_int_equal(vkc_buffer_download(last, 0, f->got, f->n * 4), VKC_SUCCESS);
        for (uint32_t i = 0; i < f->n; ++i)
            if (f->got[i] != f->ref[i])
                fail_msg("round %d, element %u: %u, expected %u (%s)", round, i, f->got[i],
                         f->ref[i], info->reason);
        if (steps & 1)
            assert_int_equal(vkc_buffer_upload(f->a, 0, f->got, f->n * 4), VKC_SUCCESS);
    }
    vkc_seq_destroy(s);
}

/* The default form on a device without an SM count: one dispatch per step,
 * several workgroups, the results of the CPU. */
static void test_fallback(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_init(&f, ctx, STEPS_GLSL, 40);
    vkc_coop_info info;
    /* VKC_COOPERATIVE=off (bench/run_coop_h200.sh runs this file so) turns
     * every form into the fallback. */
    const bool off = ctx->cooperative_off;
    const bool cooperative = vkc_context_device(ctx)->sm_count != 0 && !off;
    for (uint32_t steps = 1; steps <= 21; steps += 10) {
        run_steps(&f, &(vkc_coop_desc){.steps = steps, .form = VKC_COOP_FALLBACK},
                  (uint32_t[3]){5, 1, 1}, 0, &info);
        assert_false(info.cooperative);
        assert_int_equal(info.commands, steps);
        assert_int_equal(info.groups[0], 5);
        assert_non_null(strstr(info.reason, "fallback"));
        /* The default form: the fallback where the SM count is unknown,
         * else one cooperative dispatch (5 groups fit any device). */
        run_steps(&f, &(vkc_coop_desc){.steps = steps}, NULL, f.n, &info);
        assert_int_equal(info.cooperative, cooperative);
        assert_int_equal(info.groups[0], 5); /* a count of 40 in groups of 8 */
        if (!cooperative)
            assert_non_null(strstr(info.reason, off ? "VKC_COOPERATIVE=off" : "no SM or CU count"));
    }
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(ctx, &feat), VKC_SUCCESS);
    assert_int_equal(feat.cooperative, cooperative);
    assert_non_null(feat.cooperative_reason);
    fixture_finish(&f);
    vkc_test_assert_clean();
}

/* The cooperative form forced with a grid of one workgroup: one dispatch,
 * real barriers, the CPU's results, twice (the state is back where it was
 * after a complete dispatch). */
static void test_forced_one_group(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_init(&f, ctx, STEPS_GLSL, 24);
    vkc_coop_info info;
    const bool on = !ctx->cooperative_off; /* VKC_COOPERATIVE=off outranks the force */
    run_steps(&f, &(vkc_coop_desc){.steps = 20, .form = VKC_COOP_FORCE}, (uint32_t[3]){1, 1, 1}, 0,
              &info);
    assert_int_equal(info.cooperative, on);
    assert_int_equal(info.commands, on ? 1 : 20);
    assert_int_equal(info.groups[0], 1);
    assert_non_null(strstr(info.reason, on ? "cooperative" : "VKC_COOPERATIVE=off"));
    run_steps(&f, &(vkc_coop_desc){.steps = 7, .form = VKC_COOP_FORCE}, (uint32_t[3]){1, 1, 1}, 0,
              &info);
    assert_int_equal(info.cooperative, on);
    fixture_finish(&f);
    vkc_test_assert_clean();
}

/* Where the device reports its SM count (not lavapipe): the grid clamped
 * to every workgroup the device keeps resident at once, submitted and
 * checked, with the kernel's statistics on and off (registers known or
 * not). */
static void full_grid(vkc_context *ctx)
{
    fixture f;
    fixture_init(&f, ctx, STEPS_GLSL, 1u << 16);
    vkc_coop_info info;
    run_steps(&f, &(vkc_coop_desc){.steps = 101}, (uint32_t[3]){1u << 20, 1, 1}, 0, &info);
    assert_true(info.cooperative);
    assert_int_equal(info.groups[0], info.capacity);
    print_message("cooperative grid: %u workgroups (%s)\n", info.groups[0], info.reason);
    fixture_finish(&f);
}

static void statistics_on(vkc_context_desc *d)
{
    d->kernel_statistics = VKC_ON;
}

static void test_full_grid(void **state)
{
    vkc_context *ctx = *state;
    if (!vkc_context_device(ctx)->sm_count) {
        print_message("skipped: the device reports no SM count (lavapipe)\n");
        return;
    }
    full_grid(ctx);
    vkc_context *stats = vkc_test_context_create(statistics_on);
    full_grid(stats);
    vkc_test_context_destroy(stats);
    vkc_test_assert_clean();
}

/* Every barrier variant of the include (VKC_GRID_BARRIER, issue 13) gives
 * the CPU's results in both forms: the fallback, and the cooperative form
 * forced with one workgroup (lavapipe) or clamped to the device's full
 * grid where the SM count is known, where the spins and the tree's leaves
 * are exercised. A fan-in of 2 gives the tree many leaves and a short
 * last one. */
static void test_barrier_variants(void **state)
{
    vkc_context *ctx = *state;
    static const char *const variants[][2] = {
        {"VKC_GRID_BARRIER=1", NULL},  {"VKC_GRID_BARRIER=2", NULL},
        {"VKC_GRID_BARRIER=3", NULL},  {"VKC_GRID_BARRIER=7", NULL},
        {"VKC_GRID_BARRIER=8", NULL},  {"VKC_GRID_BARRIER=11", NULL},
        {"VKC_GRID_BARRIER=15", NULL}, {"VKC_GRID_BARRIER=4", "VKC_GRID_FANIN=2u"},
        {"VKC_GRID_BARRIER=16", NULL}, {"VKC_GRID_BARRIER=18", NULL},
        {"VKC_GRID_BARRIER=24", NULL}, {"VKC_GRID_BARRIER=26", NULL},
        {"VKC_GRID_BARRIER=56", NULL}, {"VKC_GRID_BARRIER=58", NULL}};
    const bool sms = vkc_context_device(ctx)->sm_count != 0;
    vkc_context_features feat;
    assert_int_equal(vkc_context_features_get(ctx, &feat), VKC_SUCCESS);
    for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); ++v) {
        const uint32_t nd = variants[v][1] ? 2 : 1;
        fixture f;
        fixture_init_defines(&f, ctx, STEPS_GLSL, variants[v], nd, sms ? 1u << 16 : 40);
        vkc_coop_info info;
        run_steps(&f, &(vkc_coop_desc){.steps = 11, .form = VKC_COOP_FALLBACK},
                  (uint32_t[3]){5, 1, 1}, 0, &info);
        assert_false(info.cooperative);
        /* A count: the variant's lines are no array that vkc checks against it. */
        run_steps(&f, &(vkc_coop_desc){.steps = 3}, NULL, f.n, &info);
        assert_int_equal(info.cooperative, feat.cooperative);
        if (sms)
            run_steps(&f, &(vkc_coop_desc){.steps = 101}, (uint32_t[3]){1u << 20, 1, 1}, 0, &info);
        else
            run_steps(&f, &(vkc_coop_desc){.steps = 20, .form = VKC_COOP_FORCE},
                      (uint32_t[3]){1, 1, 1}, 0, &info);
        assert_int_equal(info.cooperative, !ctx->cooperative_off); /* VKC_COOPERATIVE */
        print_message("%s%s%s: %s, %u workgroups\n", variants[v][0], nd > 1 ? " " : "",
                      nd > 1 ? variants[v][1] : "", info.cooperative ? "cooperative" : "fallback",
                      info.groups[0]);
        fixture_finish(&f);
    }
    vkc_test_assert_clean();
}

/* The state at a binding between the caller's: args fill the others in
 * order, in both forms. */
static void test_binding_between(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_init(&f, ctx, STEPS_GLSL_B2, 16);
    vkc_coop_info info;
    run_steps(&f, &(vkc_coop_desc){.steps = 6, .form = VKC_COOP_FALLBACK}, (uint32_t[3]){2, 1, 1},
              0, &info);
    assert_false(info.cooperative);
    run_steps(&f, &(vkc_coop_desc){.steps = 5, .form = VKC_COOP_FORCE}, (uint32_t[3]){1, 1, 1}, 0,
              &info);
    assert_int_equal(info.cooperative, !ctx->cooperative_off);
    fixture_finish(&f);
    vkc_test_assert_clean();
}

/* With an SM count the grid is clamped to what is resident at once, or
 * refused with exact_grid. Lavapipe has none: the test lends it one (two
 * SMs, registers unknown: one workgroup each) and records without
 * submitting (two workgroups would not be resident together there). */
static void test_grid_fit(void **state)
{
    vkc_context *ctx = *state;
    if (ctx->cooperative_off)
        skip(); /* no cooperative form to fit a grid for */
    fixture f;
    fixture_init(&f, ctx, STEPS_GLSL, 64);
    const vkc_device_info saved = ctx->info;
    if (!ctx->info.sm_count) {
        ctx->info.sm_count = 2;
        ctx->info.warps_per_sm = 16;
    }
    const uint32_t sms = ctx->info.sm_count;
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    vkc_dispatch_desc d = {.kernel = f.k,
                           .args = f.args,
                           .arg_count = 2,
                           .push = &f.n,
                           .push_size = 4,
                           .groups = {sms * 64 + 1, 1, 1}};
    vkc_coop_info info;
    assert_int_equal(vkc_seq_dispatch_cooperative(s, &d, &(vkc_coop_desc){.steps = 3}, &info),
                     VKC_SUCCESS);
    assert_true(info.cooperative);
    assert_true(info.capacity >= sms);
    assert_int_equal(info.capacity, sms * info.groups_per_sm);
    assert_int_equal(info.groups[0], info.capacity);
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_seq_dispatch_cooperative(
        s, &d, &(vkc_coop_desc){.steps = 3, .exact_grid = true}, &info);
    vkc_test_quiet_errors(0);
    assert_int_equal(r, VKC_ERROR_LIMIT);
    assert_non_null(strstr(vkc_context_last_error(ctx), "resident at once"));
    ctx->info = saved;
    vkc_seq_destroy(s);
    fixture_finish(&f);
    vkc_test_assert_clean();
}

/* Bad input: clear errors, latched by the sequence. */
static void expect_error(vkc_context *ctx, const vkc_dispatch_desc *d, const vkc_coop_desc *c,
                         vkc_result want, const char *words)
{
    vkc_seq *s = NULL;
    assert_int_equal(vkc_seq_create(ctx, NULL, &s), VKC_SUCCESS);
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_seq_dispatch_cooperative(s, d, c, NULL);
    const bool has = strstr(vkc_context_last_error(ctx), words) != NULL;
    vkc_result end = vkc_seq_end(s);
    vkc_test_quiet_errors(0);
    if (r != want || !has)
        fail_msg("expected %s with \"%s\"; got %s: %s", vkc_result_string(want), words,
                 vkc_result_string(r), vkc_context_last_error(ctx));
    assert_int_equal(end, want);
    vkc_seq_destroy(s);
}

static void test_bad_input(void **state)
{
    vkc_context *ctx = *state;
    fixture f;
    fixture_init(&f, ctx, STEPS_GLSL, 16);
    vkc_arg args[2] = {{.buffer = f.a}, {.buffer = f.b}};
    vkc_dispatch_desc d = {
        .kernel = f.k, .args = args, .arg_count = 2, .push = &f.n, .push_size = 4, .count = 16};
    expect_error(ctx, &d, &(vkc_coop_desc){.steps = 0}, VKC_ERROR_INVALID_ARGUMENT, "steps is 0");
    expect_error(ctx, &d, NULL, VKC_ERROR_INVALID_ARGUMENT, "must not be NULL");
    expect_error(ctx, &d, &(vkc_coop_desc){.steps = (1u << 20) + 1}, VKC_ERROR_LIMIT, "exceed");
    expect_error(ctx, &d, &(vkc_coop_desc){.steps = 2, .form = (vkc_coop_form)7},
                 VKC_ERROR_INVALID_ARGUMENT, "unknown form");
    vkc_dispatch_desc three = d;
    three.arg_count = 3;
    expect_error(ctx, &three, &(vkc_coop_desc){.steps = 2}, VKC_ERROR_MISMATCH, "takes 2 args");

    /* A kernel without the include. */
    vkc_kernel *plain = NULL;
    assert_int_equal(
        vkc_kernel_create_glsl(
            ctx,
            &(vkc_glsl_desc){.source = "#version 450\nlayout(local_size_x = 8) in;\n"
                                       "layout(set = 0, binding = 0) buffer A { uint a[]; };\n"
                                       "void main() { a[gl_GlobalInvocationID.x] += 1u; }\n",
                             .name = "plain"},
            &plain),
        VKC_SUCCESS);
    vkc_dispatch_desc p = {.kernel = plain, .args = args, .arg_count = 1, .count = 16};
    expect_error(ctx, &p, &(vkc_coop_desc){.steps = 2}, VKC_ERROR_MISMATCH,
                 "does not use vkc_grid.glsl");
    vkc_kernel_destroy(plain);

    /* Immediate mode has no cooperative form: the binding count error says
     * where to go. */
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_dispatch(ctx, &d);
    vkc_test_quiet_errors(0);
    assert_int_equal(r, VKC_ERROR_MISMATCH);
    assert_non_null(strstr(vkc_context_last_error(ctx), "vkc_seq_dispatch_cooperative"));
    assert_int_equal(vkc_finish(ctx), VKC_SUCCESS);
    fixture_finish(&f);
    vkc_test_assert_clean();
}

/* VKC_COOPERATIVE: "off" forces the fallback even for a forced form; an
 * unknown value warns and keeps the default. */
static char g_warnings[2048];

static void capture_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    if (id == VKC_LOG_ID_GENERAL && level == VKC_LOG_WARN) {
        size_t at = strlen(g_warnings);
        snprintf(g_warnings + at, sizeof(g_warnings) - at, "%s\n", msg);
        return;
    }
    vkc_test_log(user, level, id, msg);
}

static void capture(vkc_context_desc *d)
{
    d->logger.func = capture_log;
}

static void test_env(void **state)
{
    (void)state;
    const char *old = getenv("VKC_COOPERATIVE");
    char saved[256];
    snprintf(saved, sizeof(saved), "%s", old ? old : "");
    static const struct {
        const char *value;
        bool off, warns;
    } cases[] = {{"off", true, false}, {"0", true, false},  {"no", true, false},
                 {"on", false, false}, {"1", false, false}, {"maybe", false, true},
                 {"2", false, true}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        assert_int_equal(setenv("VKC_COOPERATIVE", cases[c].value, 1), 0);
        g_warnings[0] = '\0';
        vkc_context *ctx = vkc_test_context_create(capture);
        const bool warned = strstr(g_warnings, "VKC_COOPERATIVE") != NULL;
        if (warned != cases[c].warns)
            fail_msg("VKC_COOPERATIVE=%s: warning %d, expected %d: %s", cases[c].value, warned,
                     cases[c].warns, g_warnings);
        vkc_context_features feat;
        assert_int_equal(vkc_context_features_get(ctx, &feat), VKC_SUCCESS);
        if (cases[c].off) {
            assert_false(feat.cooperative);
            assert_string_equal(feat.cooperative_reason, "VKC_COOPERATIVE=off");
        }
        fixture f;
        fixture_init(&f, ctx, STEPS_GLSL, 8);
        vkc_coop_info info;
        run_steps(&f, &(vkc_coop_desc){.steps = 4, .form = VKC_COOP_FORCE}, (uint32_t[3]){1, 1, 1},
                  0, &info);
        assert_int_equal(info.cooperative, !cases[c].off);
        if (cases[c].off)
            assert_non_null(strstr(info.reason, "VKC_COOPERATIVE=off"));
        fixture_finish(&f);
        vkc_test_context_destroy(ctx);
    }
    if (old)
        setenv("VKC_COOPERATIVE", saved, 1);
    else
        unsetenv("VKC_COOPERATIVE");
}

/* The include keeps the caller's line numbers in compiler messages. */
static void test_line_numbers(void **state)
{
    vkc_context *ctx = *state;
    vkc_kernel *k = NULL;
    vkc_test_quiet_errors(1);
    vkc_result r = vkc_kernel_create_glsl(
        ctx,
        &(vkc_glsl_desc){.source = "#version 450\n#include \"vkc_grid.glsl\"\n"
                                   "layout(local_size_x = 1) in;\nvoid main() { oops; }\n",
                         .name = "bad"},
        &k);
    vkc_test_quiet_errors(0);
    assert_int_equal(r, VKC_ERROR_COMPILE);
    assert_non_null(strstr(vkc_context_last_error(ctx), ":4:"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, vkc_test_setup, vkc_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* clang-format off */
        T(test_fallback),
        T(test_forced_one_group),
        T(test_binding_between),
        T(test_full_grid),
        T(test_barrier_variants),
        T(test_grid_fit),
        T(test_bad_input),
        cmocka_unit_test(test_env),
        T(test_line_numbers),
        /* clang-format on */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
