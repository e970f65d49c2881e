/* Environment variables: each VKC_* variable with a value it does not
 * recognise gives a warning through the logger that names the variable and
 * the value, and the documented default is used; a recognised value takes
 * effect. The variable is set with setenv here and restored after. */
#define _GNU_SOURCE
/* vkc's private headers first (volk before vulkan.h): the test reads the
 * settings the variables decide, which the API does not all report. */
#include "seq.h"
#include "vkc_internal.h"

#include "vkc_test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_warnings[8192]; /* every GENERAL warning, one per line */
static unsigned g_warning_count;

static void capture_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    if (id == VKC_LOG_ID_GENERAL && level == VKC_LOG_WARN) {
        size_t at = strlen(g_warnings);
        snprintf(g_warnings + at, sizeof(g_warnings) - at, "%s\n", msg);
        g_warning_count++;
        return;
    }
    vkc_test_log(user, level, id, msg);
}

/* The variable's value before the test (ctest sets some), to restore. */
static char g_saved[1024];
static bool g_was_set;

static void env_set(const char *name, const char *value)
{
    const char *old = getenv(name);
    g_was_set = old != NULL;
    snprintf(g_saved, sizeof(g_saved), "%s", old ? old : "");
    assert_int_equal(setenv(name, value, 1), 0);
}

static void env_restore(const char *name)
{
    if (g_was_set)
        setenv(name, g_saved, 1);
    else
        unsetenv(name);
}

static vkc_toggle g_validation = VKC_ON;

static vkc_context *create(void)
{
    g_warnings[0] = '\0';
    g_warning_count = 0;
    vkc_context_desc d = vkc_test_desc();
    d.logger.func = capture_log;
    d.validation = g_validation;
    vkc_context *ctx = NULL;
    vkc_result r = vkc_context_create(&d, &ctx);
    if (r != VKC_SUCCESS)
        fail_msg("vkc_context_create: %s: %s", vkc_result_string(r), vkc_last_create_error());
    return ctx;
}

/* One warning that names the variable and its value, and says the default. */
static void expect_warning(const char *name, const char *value, const char *fallback)
{
    char want[1200];
    snprintf(want, sizeof(want), "%s=\"%s\" is not recognised", name, value);
    if (g_warning_count != 1 || !strstr(g_warnings, want) || !strstr(g_warnings, fallback))
        fail_msg("expected one warning with \"%s\" and \"%s\"; got %u:\n%s", want, fallback,
                 g_warning_count, g_warnings);
}

static void expect_no_warning(void)
{
    if (g_warning_count)
        fail_msg("expected no warning; got:\n%s", g_warnings);
}

static bool validation_of(vkc_context *ctx)
{
    vkc_context_features f;
    assert_int_equal(vkc_context_features_get(ctx, &f), VKC_SUCCESS);
    return f.validation;
}

static void test_validation(void **state)
{
    (void)state;
#ifdef NDEBUG
    const bool build_default = false;
#else
    const bool build_default = true;
#endif
    g_validation = VKC_DEFAULT; /* the desc would override the variable */
    static const struct {
        const char *value;
        int want; /* 1 on, 0 off, -1 not recognised: the build default */
    } cases[] = {{"banana", -1}, {"2", -1}, {"onn", -1}, {"0", 0},    {"off", 0}, {"FALSE", 0},
                 {"no", 0},      {"1", 1},  {"On", 1},   {"true", 1}, {"yes", 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        env_set("VKC_VALIDATION", cases[i].value);
        vkc_context *ctx = create();
        if (cases[i].want < 0)
            expect_warning("VKC_VALIDATION", cases[i].value, "the build's default");
        else
            expect_no_warning();
        bool want = cases[i].want < 0 ? build_default : cases[i].want == 1;
        if (validation_of(ctx) != want)
            fail_msg("VKC_VALIDATION=%s: validation %d, expected %d", cases[i].value,
                     validation_of(ctx), want);
        vkc_context_destroy(ctx);
        env_restore("VKC_VALIDATION");
    }
    g_validation = VKC_ON;
    vkc_test_assert_clean();
}

static void test_debug_labels(void **state)
{
    (void)state;
    env_set("VKC_DEBUG_LABELS", "maybe");
    vkc_context *ctx = create();
    expect_warning("VKC_DEBUG_LABELS", "maybe", "the default: off");
    assert_false(ctx->debug_labels);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_DEBUG_LABELS");

    env_set("VKC_DEBUG_LABELS", "1");
    ctx = create();
    expect_no_warning();
    assert_true(ctx->debug_labels);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_DEBUG_LABELS");
}

static void test_groups_per_sm(void **state)
{
    (void)state;
    static const char *const bad[] = {"lots", "-1", "4x", "99999999999", "65537"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        env_set("VKC_GROUPS_PER_SM", bad[i]);
        vkc_context *ctx = create();
        expect_warning("VKC_GROUPS_PER_SM", bad[i], "the default: no cap");
        assert_int_equal(ctx->features.groups_per_sm, 0);
        assert_int_equal(ctx->features.max_grid_groups, ctx->info.max_workgroup_count[0]);
        vkc_test_context_destroy(ctx);
        env_restore("VKC_GROUPS_PER_SM");
    }
    /* A good value caps grids where the SM count is known; elsewhere (as on
     * lavapipe) it is ignored with a warning that says why. */
    env_set("VKC_GROUPS_PER_SM", "4");
    vkc_context *ctx = create();
    if (ctx->info.sm_count) {
        expect_no_warning();
        assert_int_equal(ctx->features.groups_per_sm, 4);
    } else {
        assert_int_equal(g_warning_count, 1);
        assert_non_null(strstr(g_warnings, "VKC_GROUPS_PER_SM=4 ignored"));
        assert_int_equal(ctx->features.groups_per_sm, 0);
    }
    vkc_test_context_destroy(ctx);
    env_restore("VKC_GROUPS_PER_SM");
}

static void test_seq_ring(void **state)
{
    (void)state;
    static const char *const bad[] = {"0", "9", "x", "2.5", " 2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        env_set("VKC_SEQ_RING", bad[i]);
        vkc_context *ctx = create();
        /* more copies where the completion marker is in use (the default
         * wait, where its self-test passes) */
        const uint32_t def = vkc__marker_on(ctx) ? VKC_SEQ_RING_MAX : VKC_SEQ_RING;
        char fallback[32];
        snprintf(fallback, sizeof(fallback), "the default: %u", def);
        expect_warning("VKC_SEQ_RING", bad[i], fallback);
        assert_int_equal(ctx->seq_ring, def);
        vkc_test_context_destroy(ctx);
        env_restore("VKC_SEQ_RING");
    }
    env_set("VKC_SEQ_RING", "5");
    vkc_context *ctx = create();
    expect_no_warning();
    assert_int_equal(ctx->seq_ring, 5);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_SEQ_RING");
}

/* The sparse timeline signals' period (pool.c, an experiment's switch). */
static void test_signal_every(void **state)
{
    (void)state;
    static const char *const bad[] = {"0", "x", "2097152", "-3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        env_set("VKC_SIGNAL_EVERY", bad[i]);
        vkc_context *ctx = create();
        if (ctx->features.timeline_semaphores) { /* read only with a timeline */
            expect_warning("VKC_SIGNAL_EVERY", bad[i], "the default: 128");
            assert_int_equal(ctx->signal_every, 128);
        }
        vkc_test_context_destroy(ctx);
        env_restore("VKC_SIGNAL_EVERY");
    }
    env_set("VKC_SIGNAL_EVERY", "16");
    vkc_context *ctx = create();
    expect_no_warning();
    if (ctx->features.timeline_semaphores)
        assert_int_equal(ctx->signal_every, 16);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_SIGNAL_EVERY");
}

/* The resident kernel's variables are read at vkc_resident_create: a bad
 * value warns and leaves vkc's choice (memory) or the resident path. */
static void test_resident_vars(void **state)
{
    (void)state;
    static const char *GLSL = "#version 450\n"
                              "#include \"vkc_resident.glsl\"\n"
                              "layout(local_size_x = 1) in;\n"
                              "layout(set = 0, binding = 1) coherent buffer D { uint d[]; };\n"
                              "void main() {\n"
                              "  vkc_item it;\n"
                              "  while (vkc_resident_next(it)) {\n"
                              "    d[0] += vkc_resident_word(it, 0u);\n"
                              "    vkc_resident_done(it);\n"
                              "  }\n"
                              "}\n";
    static const struct {
        const char *name, *value, *fallback;
    } bad[] = {{"VKC_RESIDENT", "banana", "the resident path"},
               {"VKC_RESIDENT_MEMORY", "banana", "vkc's choice"},
               {"VKC_RESIDENT_MEMORY", "99", "vkc's choice"},
               {"VKC_RESIDENT_ACK", "banana", "the default ("}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        vkc_context *ctx = create();
        vkc_buffer *d = NULL;
        assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 64}, &d), VKC_SUCCESS);
        assert_int_equal(vkc_buffer_fill(d, 0, 64, 0), VKC_SUCCESS);
        g_warnings[0] = '\0';
        g_warning_count = 0;
        env_set(bad[i].name, bad[i].value);
        vkc_resident *r = NULL;
        vkc_arg a = {.buffer = d};
        vkc_result res = vkc_resident_create(
            ctx,
            &(vkc_resident_desc){
                .glsl = GLSL, .args = &a, .arg_count = 1, .slots = 4, .payload_size = 4},
            &r);
        env_restore(bad[i].name);
        assert_int_equal(res, VKC_SUCCESS);
        char want[256];
        snprintf(want, sizeof(want), "%s=\"%s\" is not recognised", bad[i].name, bad[i].value);
        if (!strstr(g_warnings, want) || !strstr(g_warnings, bad[i].fallback))
            fail_msg("expected a warning with \"%s\" and \"%s\"; got %u:\n%s", want,
                     bad[i].fallback, g_warning_count, g_warnings);
        /* The default still works: one item, checked. */
        uint32_t w = 5, got = 0;
        vkc_ticket t;
        assert_int_equal(vkc_resident_post(r, &w, sizeof(w), 0, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, 10000000000ull), VKC_SUCCESS);
        vkc_resident_destroy(r);
        assert_int_equal(vkc_buffer_download(d, 0, &got, 4), VKC_SUCCESS);
        assert_int_equal(got, 5);
        vkc_buffer_destroy(d);
        vkc_test_context_destroy(ctx);
    }
}

/* An immediate-mode variable set to a value it does not take: the warning
 * names the value and what is used instead, and the context is made (with
 * its immediate mode, where imm). */
static void imm_bad_value(const char *name, const char *value, const char *fallback, bool imm)
{
    env_set(name, value);
    vkc_context *ctx = create();
    expect_warning(name, value, fallback);
    if (imm)
        assert_true(ctx->imm != NULL);
    vkc_test_context_destroy(ctx);
    env_restore(name);
}

/* The completion marker's form and the immediate-mode policy (experiments). */
static void test_marker_form_and_imm_fixed(void **state)
{
    (void)state;
    static const char *const good[] = {"lean", "atomic", "atomic,lean"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); ++i) {
        env_set("VKC_MARKER_FORM", good[i]);
        vkc_context *ctx = create();
        expect_no_warning();
        if (ctx->marker_kernel) { /* read only where the marker is set up */
            assert_int_equal(ctx->marker_lean, i != 1);
            assert_int_equal(ctx->marker_atomic, i != 0);
        }
        vkc_test_context_destroy(ctx);
        env_restore("VKC_MARKER_FORM");
    }
    env_set("VKC_MARKER_FORM", "fast");
    vkc_context *ctx = create();
    if (ctx->marker_kernel)
        expect_warning("VKC_MARKER_FORM", "fast", "the default form");
    assert_false(ctx->marker_lean || ctx->marker_atomic);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_MARKER_FORM");
    imm_bad_value("VKC_IMM_FIXED", "sometimes", "the default: off", false);
    imm_bad_value("VKC_IMM_MARKER", "maybe", "the default: on repeated batches", false);
    imm_bad_value("VKC_IMM_REUSE", "never", "the default: on", true);
    imm_bad_value("VKC_IMM_SPLIT", "9", "the default: 4, 1 on a CPU device", true);
    imm_bad_value("VKC_IMM_SLOW_US", "2000000", "the default: 15", true);
    /* The completion epilogue's form (read where its self-test runs) and
     * its switch. */
    static const char *const forms[] = {"store", "xchg,barrier", "barrier,scoped"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); ++i) {
        env_set("VKC_EPILOGUE_FORM", forms[i]);
        ctx = create();
        expect_no_warning();
        if (ctx->epi_build) {
            assert_int_equal(ctx->epi_xchg, i == 1);
            assert_int_equal(ctx->epi_barrier, i >= 1);
            assert_int_equal(ctx->epi_scoped, i == 2);
        }
        vkc_test_context_destroy(ctx);
        env_restore("VKC_EPILOGUE_FORM");
    }
    env_set("VKC_EPILOGUE_FORM", "xchg,fast");
    ctx = create();
    if (ctx->epi_build)
        expect_warning("VKC_EPILOGUE_FORM", "xchg,fast", "the default form");
    assert_false(ctx->epi_xchg || ctx->epi_barrier || ctx->epi_scoped);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_EPILOGUE_FORM");
    env_set("VKC_EPILOGUE", "perhaps");
    ctx = create();
    expect_warning("VKC_EPILOGUE", "perhaps", "the default: on");
    vkc_test_context_destroy(ctx);
    env_restore("VKC_EPILOGUE");
    /* The armed queue's depth (read where arming's self-test runs): one
     * copy by default on a CPU device or with validation (so here), 256 on
     * a GPU without it. */
    env_set("VKC_ARM_DEPTH", "1");
    unsetenv("VKC_ARM_DEPTH");
    ctx = create();
    if (ctx->arm_on)
        assert_int_equal(ctx->arm_depth_max, 1u);
    vkc_test_context_destroy(ctx);
    setenv("VKC_ARM_DEPTH", "64", 1);
    ctx = create();
    expect_no_warning();
    if (ctx->arm_on)
        assert_int_equal(ctx->arm_depth_max, 64u);
    vkc_test_context_destroy(ctx);
    setenv("VKC_ARM_DEPTH", "2000", 1);
    ctx = create();
    if (ctx->arm_on) {
        expect_warning("VKC_ARM_DEPTH", "2000",
                       "the default on a CPU device or with validation: 1");
        assert_int_equal(ctx->arm_depth_max, 1u);
    }
    vkc_test_context_destroy(ctx);
    env_restore("VKC_ARM_DEPTH");
}

static void test_device(void **state)
{
    (void)state;
    vkc_context *ctx = create();
    char best[256];
    snprintf(best, sizeof(best), "%s", vkc_context_device(ctx)->name);
    vkc_test_context_destroy(ctx);

    env_set("VKC_DEVICE", "no-such-device-anywhere");
    ctx = create();
    expect_warning("VKC_DEVICE", "no-such-device-anywhere", "the best device");
    assert_string_equal(vkc_context_device(ctx)->name, best);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_DEVICE");

    env_set("VKC_DEVICE", "0");
    ctx = create();
    expect_no_warning();
    vkc_test_context_destroy(ctx);
    env_restore("VKC_DEVICE");

    /* The desc's own choice is no environment default: nothing matching
     * still fails creation. */
    env_set("VKC_DEVICE", "0");
    vkc_context_desc d = vkc_test_desc();
    d.device = "no-such-device-anywhere";
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_context_create(&d, &ctx), VKC_ERROR_NO_DEVICE);
    vkc_test_quiet_errors(0);
    assert_null(ctx);
    assert_non_null(strstr(vkc_last_create_error(), "no-such-device-anywhere"));
    env_restore("VKC_DEVICE");
}

static void test_loader(void **state)
{
    (void)state;
    env_set("VKC_LOADER", "/nonexistent/libvulkan.so.1");
    vkc_context *ctx = create();
    expect_warning("VKC_LOADER", "/nonexistent/libvulkan.so.1", "libvulkan.so");
    vkc_test_context_destroy(ctx);
    env_restore("VKC_LOADER");

    env_set("VKC_LOADER", "libvulkan.so.1");
    ctx = create();
    expect_no_warning();
    vkc_test_context_destroy(ctx);
    env_restore("VKC_LOADER");
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void test_cache_dir(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/vkc_test_env_XXXXXX");
    assert_non_null(mkdtemp(dir));

    env_set("VKC_CACHE_DIR", dir);
    vkc_context *ctx = create();
    expect_no_warning();
    assert_string_equal(ctx->cache_dir, dir);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_CACHE_DIR");

    /* Too long to hold the cache's file names: the default, under
     * XDG_CACHE_HOME (pointed at the temporary directory). */
    char xdg_saved[1024];
    const char *xdg = getenv("XDG_CACHE_HOME");
    bool xdg_set = xdg != NULL;
    snprintf(xdg_saved, sizeof(xdg_saved), "%s", xdg ? xdg : "");
    setenv("XDG_CACHE_HOME", dir, 1);
    char longer[420];
    memset(longer, 'd', sizeof(longer) - 1);
    longer[0] = '/';
    longer[sizeof(longer) - 1] = '\0';
    env_set("VKC_CACHE_DIR", longer);
    ctx = create();
    expect_warning("VKC_CACHE_DIR", longer, "the default");
    char want[128];
    snprintf(want, sizeof(want), "%s/vkc", dir);
    assert_string_equal(ctx->cache_dir, want);
    vkc_test_context_destroy(ctx);
    env_restore("VKC_CACHE_DIR");
    if (xdg_set)
        setenv("XDG_CACHE_HOME", xdg_saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),    cmocka_unit_test(test_debug_labels),
        cmocka_unit_test(test_groups_per_sm), cmocka_unit_test(test_seq_ring),
        cmocka_unit_test(test_device),        cmocka_unit_test(test_loader),
        cmocka_unit_test(test_cache_dir),     cmocka_unit_test(test_marker_form_and_imm_fixed),
        cmocka_unit_test(test_signal_every),  cmocka_unit_test(test_resident_vars),
    };
    return cmocka_run_group_tests_name("environment variables", tests, NULL, NULL);
}
