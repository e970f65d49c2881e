/* Profiling: GPU timestamps per command and submission, CPU times, the
 * clock placement (calibrated and the correlation fallback), statistics,
 * the trace and its picture, device loss, and failures (no query pool, a
 * full buffer) that leave the work itself running and correct.
 *
 * Tolerance of "a GPU event lies inside its submission's CPU interval"
 * (from the start of the vkQueueSubmit call to the end of the vkc_wait
 * that saw it complete): the clock's own error bound (clock_error_ns) plus
 * 1 ms. lavapipe takes its timestamps on its own threads and may take the
 * last ones after it signals the submission's completion (seen: up to
 * 0.3 ms on a loaded machine). */
#define _POSIX_C_SOURCE 200809L
#include "vkc_internal.h"

#include "test_shaders.h"
#include "vkc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOL_NS 1000000ull

static const char *SCALE_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint n; uint a; uint b; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) x[i] = x[i] * pc.a + pc.b;\n"
    "}\n";

/* A known amount of work: each invocation iterates pc.iters times
 * (below 65535: llvmpipe ends longer loops early). */
static const char *SPIN_GLSL =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(set = 0, binding = 0) readonly buffer T { uint t[64]; };\n"
    "layout(set = 0, binding = 1) writeonly buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint iters; } pc;\n"
    "void main() {\n"
    "  uint v = gl_GlobalInvocationID.x;\n"
    "  for (uint i = 0; i < pc.iters; ++i) v = v * 1664525u + t[(v >> 26) ^ (i & 63u)];\n"
    "  x[gl_GlobalInvocationID.x] = v;\n"
    "}\n";

static const char *SHARED_GLSL = "#version 450\n"
                                 "layout(local_size_x = 128) in;\n"
                                 "layout(set = 0, binding = 0) buffer X { float x[]; };\n"
                                 "shared float tile[256];\n"
                                 "shared uint flags[16];\n"
                                 "void main() {\n"
                                 "  uint i = gl_LocalInvocationID.x;\n"
                                 "  tile[i] = x[i]; tile[i + 128] = 0.0; flags[i & 15] = i;\n"
                                 "  barrier();\n"
                                 "  x[i] = tile[255 - i] + float(flags[i & 15]);\n"
                                 "}\n";

#define N 4096u

typedef struct push3 {
    uint32_t n, a, b;
} push3;

static void profile_on(vkc_context_desc *d)
{
    d->profile = VKC_ON;
}

static uint32_t small_capacity;
static void profile_small(vkc_context_desc *d)
{
    d->profile = VKC_ON;
    d->profile_capacity = small_capacity;
}

static void profile_off(vkc_context_desc *d)
{
    d->profile = VKC_OFF;
}

static vkc_kernel *glsl(vkc_context *ctx, const char *src, const char *name)
{
    vkc_kernel *k = NULL;
    vkc_result r = vkc_kernel_create_glsl(ctx, &(vkc_glsl_desc){.source = src, .name = name}, &k);
    if (r != VKC_SUCCESS)
        fail_msg("%s: %s", name, vkc_context_last_error(ctx));
    return k;
}

/* x = ((x * 3 + 1) * 5 + 2), copied to y, then y filled at its end: three
 * levels of dispatches, a copy and a fill. */
typedef struct world {
    vkc_context *ctx;
    vkc_kernel *scale;
    vkc_buffer *x, *y;
    vkc_seq *seq;
} world;

static void make_world(world *w, void (*tweak)(vkc_context_desc *), vkc_toggle seq_profile)
{
    w->ctx = vkc_test_context_create(tweak);
    w->scale = glsl(w->ctx, SCALE_GLSL, "scale");
    assert_int_equal(
        vkc_buffer_create(w->ctx, &(vkc_buffer_desc){.size = N * 4, .name = "x"}, &w->x),
        VKC_SUCCESS);
    assert_int_equal(
        vkc_buffer_create(
            w->ctx,
            &(vkc_buffer_desc){.size = N * 4 + 64, .memory = VKC_MEMORY_READBACK, .name = "y"},
            &w->y),
        VKC_SUCCESS);
    assert_int_equal(
        vkc_seq_create(w->ctx, &(vkc_seq_desc){.name = "work", .profile = seq_profile}, &w->seq),
        VKC_SUCCESS);
}

static vkc_result record(world *w)
{
    vkc_arg x = {.buffer = w->x};
    push3 p1 = {N, 3, 1}, p2 = {N, 5, 2};
    VKC_FORWARD(vkc_seq_begin(w->seq));
    VKC_FORWARD(vkc_seq_dispatch(w->seq, &(vkc_dispatch_desc){.kernel = w->scale,
                                                              .args = &x,
                                                              .arg_count = 1,
                                                              .push = &p1,
                                                              .push_size = sizeof(p1),
                                                              .count = N,
                                                              .label = "scale 3x+1"}));
    VKC_FORWARD(vkc_seq_dispatch(w->seq, &(vkc_dispatch_desc){.kernel = w->scale,
                                                              .args = &x,
                                                              .arg_count = 1,
                                                              .push = &p2,
                                                              .push_size = sizeof(p2),
                                                              .count = N}));
    VKC_FORWARD(vkc_seq_copy(w->seq, w->y, 0, w->x, 0, N * 4));
    VKC_FORWARD(vkc_seq_fill(w->seq, w->y, N * 4, 64, 7));
    return vkc_seq_end(w->seq);
}

/* Upload fresh x, run the sequence `times` times (each waited for), check
 * y against the CPU after the last. */
static void run_and_check(world *w, int times)
{
    uint32_t *h = malloc(N * 4);
    assert_non_null(h);
    for (uint32_t i = 0; i < N; ++i)
        h[i] = i;
    assert_int_equal(vkc_buffer_upload(w->x, 0, h, N * 4), VKC_SUCCESS);
    for (int t = 0; t < times; ++t) {
        vkc_ticket tk;
        assert_int_equal(vkc_seq_submit(w->seq, &tk), VKC_SUCCESS);
        assert_int_equal(vkc_wait(w->ctx, tk, UINT64_MAX), VKC_SUCCESS);
    }
    const uint32_t *y = vkc_buffer_map(w->y);
    assert_non_null(y);
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t v = i;
        for (int t = 0; t < times; ++t)
            v = (v * 3 + 1) * 5 + 2;
        if (y[i] != v)
            fail_msg("y[%u] = %u, want %u", i, y[i], v);
    }
    for (uint32_t i = 0; i < 16; ++i)
        assert_int_equal(y[N + i], 7);
    free(h);
}

static vkc_profile_event *get_events(vkc_context *ctx, vkc_profile_info *info, uint32_t *n)
{
    assert_int_equal(vkc_profile_get(ctx, info, NULL, 0, n), VKC_SUCCESS);
    vkc_profile_event *ev = calloc(*n + 1, sizeof(*ev));
    assert_non_null(ev);
    uint32_t m = 0;
    assert_int_equal(vkc_profile_get(ctx, NULL, ev, *n, &m), VKC_SUCCESS);
    assert_int_equal(m, *n);
    return ev;
}

static const vkc_profile_event *find(const vkc_profile_event *ev, uint32_t n, vkc_profile_kind k,
                                     uint64_t value)
{
    for (uint32_t i = 0; i < n; ++i)
        if (ev[i].kind == k && ev[i].submission == value)
            return &ev[i];
    return NULL;
}

/* Monotonic and nested: each GPU event inside its submission, the
 * submissions in ticket order and one after the other, and each inside its
 * CPU interval (submit call start to the wait's end), within TOL_NS plus
 * the clock's bound. Returns the number of submissions checked. */
static uint32_t check_nesting(const vkc_profile_event *ev, uint32_t n, const vkc_profile_info *info)
{
    const uint64_t tol = TOL_NS + info->clock_error_ns;
    uint32_t subs = 0;
    uint64_t last_value = 0, last_end = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const vkc_profile_event *e = &ev[i];
        assert_true(e->start_ns <= e->end_ns);
        assert_non_null(e->label);
        if (e->kind == VKC_PROFILE_SUBMISSION) {
            /* Events come sorted by start: submissions in ticket order. */
            assert_true(e->submission > last_value);
            assert_true(e->start_ns + tol >= last_end);
            last_value = e->submission;
            last_end = e->end_ns;
            subs++;
            const vkc_profile_event *s = find(ev, n, VKC_PROFILE_SUBMIT, e->submission);
            const vkc_profile_event *w = find(ev, n, VKC_PROFILE_WAIT, e->submission);
            assert_non_null(s);
            if (e->start_ns + tol < s->start_ns)
                fail_msg("submission %llu starts %llu ns before its vkQueueSubmit call",
                         (unsigned long long)e->submission,
                         (unsigned long long)(s->start_ns - e->start_ns));
            if (w && e->end_ns > w->end_ns + tol)
                fail_msg("submission %llu ends %llu ns after its wait returned",
                         (unsigned long long)e->submission,
                         (unsigned long long)(e->end_ns - w->end_ns));
        } else if (e->kind >= VKC_PROFILE_DISPATCH && e->kind <= VKC_PROFILE_BARRIER) {
            const vkc_profile_event *s = find(ev, n, VKC_PROFILE_SUBMISSION, e->submission);
            assert_non_null(s);
            if (e->start_ns < s->start_ns || e->end_ns > s->end_ns)
                fail_msg("%s \"%s\" [%llu, %llu] outside its submission [%llu, %llu]",
                         vkc_profile_kind_string(e->kind), e->label,
                         (unsigned long long)e->start_ns, (unsigned long long)e->end_ns,
                         (unsigned long long)s->start_ns, (unsigned long long)s->end_ns);
        } else {
            assert_true(e->kind >= VKC_PROFILE_RECORD && e->kind <= VKC_PROFILE_WAIT);
            assert_true(e->thread >= 1);
        }
    }
    return subs;
}

static const vkc_profile_stat *stat_of(const vkc_profile_stat *st, uint32_t n, vkc_profile_kind k,
                                       const char *label)
{
    for (uint32_t i = 0; i < n; ++i)
        if (st[i].kind == k && !strcmp(st[i].label, label))
            return &st[i];
    return NULL;
}

static void test_percentiles(void **state)
{
    (void)state;
    /* Nearest rank over 1..20: p50 -> 10th value, p95 -> 19th, p99 -> 20th. */
    uint64_t v[20];
    for (int i = 0; i < 20; ++i)
        v[i] = (uint64_t)(i + 1) * 10;
    assert_int_equal(vkc__percentile(v, 20, 50), 100);
    assert_int_equal(vkc__percentile(v, 20, 95), 190);
    assert_int_equal(vkc__percentile(v, 20, 99), 200);
    assert_int_equal(vkc__percentile(v, 20, 100), 200);
    assert_int_equal(vkc__percentile(v, 20, 5), 10);
    assert_int_equal(vkc__percentile(v, 20, 0), 10);
    uint64_t one = 42;
    assert_int_equal(vkc__percentile(&one, 1, 50), 42);
    assert_int_equal(vkc__percentile(&one, 1, 99), 42);
    assert_int_equal(vkc__percentile(NULL, 0, 50), 0);
    /* 1..100: pX is X exactly. */
    uint64_t h[100];
    for (int i = 0; i < 100; ++i)
        h[i] = (uint64_t)i + 1;
    assert_int_equal(vkc__percentile(h, 100, 50), 50);
    assert_int_equal(vkc__percentile(h, 100, 95), 95);
    assert_int_equal(vkc__percentile(h, 100, 99), 99);
    /* Three values: p50 is the middle one, p95/p99 the largest. */
    uint64_t t[3] = {1, 5, 9};
    assert_int_equal(vkc__percentile(t, 3, 50), 5);
    assert_int_equal(vkc__percentile(t, 3, 95), 9);
}

static void profile_fallbacks(vkc_context_desc *d)
{
    d->profile = VKC_ON;
    d->timeline_semaphores = VKC_OFF; /* fences */
    d->push_descriptors = VKC_OFF;    /* descriptor pools */
    d->wait_mode = VKC_WAIT_SPIN_MARKER;
}

static void nested_run_with(void (*tweak)(vkc_context_desc *), bool correlate,
                            vkc_profile_clock want)
{
    world w;
    /* The fallback is chosen at context creation. */
    vkc__profile_force_correlation(correlate);
    make_world(&w, tweak, VKC_DEFAULT);
    vkc__profile_force_correlation(false);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 5);
    vkc_profile_info info;
    uint32_t n;
    vkc_profile_event *ev = get_events(w.ctx, &info, &n);
    assert_int_equal(info.status, VKC_SUCCESS);
    assert_true(info.on);
    assert_int_equal(info.clock, want);
    assert_int_equal(info.dropped, 0);
    /* 5 submissions of the sequence (uploads are not profiled). */
    assert_int_equal(check_nesting(ev, n, &info), 5);
    assert_int_equal(info.submissions, 5);
    assert_true(info.window_ns > 0);
    assert_true(info.gpu_busy_ns > 0 && info.gpu_busy_ns <= info.window_ns);
    assert_true(info.utilisation > 0 && info.utilisation <= 1.0);

    vkc_profile_stat st[64];
    uint32_t ns = 0;
    assert_int_equal(vkc_profile_stats(w.ctx, st, 64, &ns), VKC_SUCCESS);
    assert_true(ns > 0 && ns <= 64);
    const vkc_profile_stat *d1 = stat_of(st, ns, VKC_PROFILE_DISPATCH, "scale 3x+1");
    const vkc_profile_stat *d2 = stat_of(st, ns, VKC_PROFILE_DISPATCH, "scale");
    const vkc_profile_stat *cp = stat_of(st, ns, VKC_PROFILE_COPY, "vkc copy");
    const vkc_profile_stat *fl = stat_of(st, ns, VKC_PROFILE_FILL, "vkc fill");
    const vkc_profile_stat *sb = stat_of(st, ns, VKC_PROFILE_SUBMISSION, "work");
    const vkc_profile_stat *su = stat_of(st, ns, VKC_PROFILE_SUBMIT, "work");
    const vkc_profile_stat *rc = stat_of(st, ns, VKC_PROFILE_RECORD, "work");
    const vkc_profile_stat *br = stat_of(st, ns, VKC_PROFILE_BARRIER, "barrier");
    assert_non_null(d1);
    assert_non_null(d2);
    assert_non_null(cp);
    assert_non_null(fl);
    assert_non_null(sb);
    assert_non_null(su);
    assert_non_null(rc);
    assert_non_null(br);
    assert_int_equal(d1->count, 5);
    assert_int_equal(d2->count, 5);
    assert_int_equal(cp->count, 5);
    assert_int_equal(fl->count, 5);
    assert_int_equal(sb->count, 5);
    assert_int_equal(su->count, 5);
    /* Recorded once per copy of the ring (2; 8 with the completion
     * marker), not per submission. */
    assert_true(rc->count >= 1 && rc->count <= 5);
    /* One barrier before each level, per submission. */
    vkc_seq_info si;
    assert_int_equal(vkc_seq_info_get(w.seq, &si), VKC_SUCCESS);
    assert_int_equal(si.levels, 3); /* the fill does not touch what the others do */
    assert_int_equal(br->count, 5 * si.levels);
    for (uint32_t i = 0; i < ns; ++i) {
        assert_true(st[i].min_ns <= st[i].p50_ns && st[i].p50_ns <= st[i].p95_ns);
        assert_true(st[i].p95_ns <= st[i].p99_ns && st[i].p99_ns <= st[i].max_ns);
        assert_true(st[i].total_ns >= st[i].max_ns);
        if (i)
            assert_true(st[i - 1].total_ns >= st[i].total_ns);
    }
    free(ev);
    vkc_test_context_destroy(w.ctx);
}

static void nested_run(bool correlate, vkc_profile_clock want)
{
    nested_run_with(profile_on, correlate, want);
}

static void test_nested_calibrated(void **state)
{
    (void)state;
    const vkc_device_info *di = NULL;
    vkc_context *probe = vkc_test_context_create(NULL);
    di = vkc_context_device(probe);
    bool cal = di->calibrated_timestamps;
    vkc_test_context_destroy(probe);
    nested_run(false, cal ? VKC_PROFILE_CLOCK_CALIBRATED : VKC_PROFILE_CLOCK_CORRELATED);
}

static void test_nested_correlated(void **state)
{
    (void)state;
    nested_run(true, VKC_PROFILE_CLOCK_CORRELATED);
}

/* Fences instead of a timeline, descriptor pools instead of push
 * descriptors, the completion marker (a ring of 8 copies). */
static void test_nested_fallbacks(void **state)
{
    (void)state;
    nested_run_with(profile_fallbacks, true, VKC_PROFILE_CLOCK_CORRELATED);
}

/* Durations in proportion to the work: the same kernel at 1x and 4x the
 * iterations, the median of several runs each; a loose bound, no time. */
static void test_proportional(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(profile_on);
    vkc_kernel *k = glsl(ctx, SPIN_GLSL, "spin");
    vkc_buffer *t, *x;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 64 * 4}, &t), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 16 * 64 * 4}, &x),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(t, 0, 64 * 4, 12345), VKC_SUCCESS);
    const char *labels[2] = {"spin 1x", "spin 4x"};
    const uint32_t iters[2] = {4000, 16000};
    vkc_arg a[2] = {{.buffer = t}, {.buffer = x}};
    for (int rep = 0; rep < 7; ++rep) {
        for (int v = 0; v < 2; ++v) {
            vkc_ticket tk;
            assert_int_equal(vkc_dispatch(ctx, &(vkc_dispatch_desc){.kernel = k,
                                                                    .args = a,
                                                                    .arg_count = 2,
                                                                    .push = &iters[v],
                                                                    .push_size = 4,
                                                                    .groups = {16, 1, 1},
                                                                    .label = labels[v]}),
                             VKC_SUCCESS);
            assert_int_equal(vkc_flush(ctx, &tk), VKC_SUCCESS);
            assert_int_equal(vkc_wait(ctx, tk, UINT64_MAX), VKC_SUCCESS);
        }
    }
    vkc_profile_stat st[32];
    uint32_t ns = 0;
    assert_int_equal(vkc_profile_stats(ctx, st, 32, &ns), VKC_SUCCESS);
    /* The last run iterated iters[1] times: x[0] against the CPU. */
    uint32_t x0 = 0, want = 0;
    assert_int_equal(vkc_buffer_download(x, 0, &x0, 4), VKC_SUCCESS);
    for (uint32_t i = 0; i < iters[1]; ++i)
        want = want * 1664525u + 12345u;
    assert_int_equal(x0, want);
    const vkc_profile_stat *s1 = stat_of(st, ns, VKC_PROFILE_DISPATCH, labels[0]);
    const vkc_profile_stat *s4 = stat_of(st, ns, VKC_PROFILE_DISPATCH, labels[1]);
    assert_non_null(s1);
    assert_non_null(s4);
    assert_int_equal(s1->count, 7);
    assert_int_equal(s4->count, 7);
    double ratio = (double)s4->p50_ns / (double)(s1->p50_ns ? s1->p50_ns : 1);
    fprintf(stderr, "spin: 1x p50 %llu ns, 4x p50 %llu ns, ratio %.2f\n",
            (unsigned long long)s1->p50_ns, (unsigned long long)s4->p50_ns, ratio);
    if (ratio < 1.5 || ratio > 16.0)
        fail_msg("4x the work took %.2fx the time (want 1.5..16)", ratio);
    vkc_test_context_destroy(ctx);
}

/* The trace: written by the API and by VKC_PROFILE at destroy; the JSON
 * is checked by check_trace.py (ctest test_profile_trace). */
static void test_trace_files(void **state)
{
    (void)state;
    world w;
    make_world(&w, profile_on, VKC_DEFAULT);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 3);
    assert_int_equal(vkc_profile_write_trace(w.ctx, "test_profile_api.json"), VKC_SUCCESS);
    assert_int_equal(vkc_profile_write_svg(w.ctx, "test_profile_api.svg"), VKC_SUCCESS);
    assert_int_equal(vkc_profile_write_trace(w.ctx, "/nonexistent-dir/x.json"), VKC_ERROR_IO);
    assert_non_null(strstr(vkc_context_last_error(w.ctx), "/nonexistent-dir/x.json"));
    vkc_test_context_destroy(w.ctx);

    /* VKC_PROFILE turns profiling on without code changes. */
    unlink("test_profile_env.json");
    unlink("test_profile_env.svg");
    setenv("VKC_PROFILE", "test_profile_env.json", 1);
    make_world(&w, NULL, VKC_DEFAULT);
    vkc_profile_info info;
    assert_int_equal(vkc_profile_get(w.ctx, &info, NULL, 0, NULL), VKC_SUCCESS);
    assert_true(info.on);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 4);
    vkc_test_context_destroy(w.ctx);
    unsetenv("VKC_PROFILE");
    FILE *f = fopen("test_profile_env.json", "r");
    assert_non_null(f);
    fclose(f);
    f = fopen("test_profile_env.svg", "r");
    assert_non_null(f);
    char head[64] = {0};
    assert_true(fread(head, 1, sizeof(head) - 1, f) > 0);
    assert_non_null(strstr(head, "<svg"));
    fclose(f);
}

/* Off: nothing is recorded; a sequence may turn it on by itself. */
static void test_off_and_per_sequence(void **state)
{
    (void)state;
    world w;
    make_world(&w, profile_off, VKC_DEFAULT);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 2);
    vkc_profile_info info;
    uint32_t n = 99;
    assert_int_equal(vkc_profile_get(w.ctx, &info, NULL, 0, &n), VKC_SUCCESS);
    assert_false(info.on);
    assert_int_equal(n, 0);
    vkc_stats before, after;
    assert_int_equal(vkc_context_stats(w.ctx, &before), VKC_SUCCESS);

    /* The same context, one sequence profiled. */
    vkc_seq *p;
    assert_int_equal(
        vkc_seq_create(w.ctx, &(vkc_seq_desc){.name = "profiled", .profile = VKC_ON}, &p),
        VKC_SUCCESS);
    vkc_seq *old = w.seq;
    w.seq = p;
    /* record() names the sequence w.seq. */
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 3);
    vkc_profile_event *ev = get_events(w.ctx, &info, &n);
    assert_int_equal(check_nesting(ev, n, &info), 3);
    for (uint32_t i = 0; i < n; ++i)
        if (ev[i].kind == VKC_PROFILE_SUBMISSION)
            assert_string_equal(ev[i].label, "profiled");
    free(ev);
    /* Steady state (every copy of the ring recorded, at most 8): submitting
     * again makes no new command buffer or query pool. */
    run_and_check(&w, 8);
    assert_int_equal(vkc_context_stats(w.ctx, &after), VKC_SUCCESS);
    run_and_check(&w, 8);
    vkc_stats again;
    assert_int_equal(vkc_context_stats(w.ctx, &again), VKC_SUCCESS);
    assert_int_equal(again.command_buffers, after.command_buffers);
    (void)old;
    (void)before;
    vkc_test_context_destroy(w.ctx);
}

/* Query-pool creation fails: a clear error in the profile, and the work is
 * recorded and runs without profiling. */
static void test_fault_query_pool(void **state)
{
    (void)state;
    world w;
    make_world(&w, profile_on, VKC_DEFAULT);
    vkc_test_quiet_errors(1);
    vkc__fault = (vkc__fault_state){.armed = true,
                                    .fail_at = 1,
                                    .only = VKC__FAULT_VK,
                                    .only_call = "vkCreateQueryPool",
                                    .forced = VK_ERROR_OUT_OF_DEVICE_MEMORY};
    vkc_result r = record(&w);
    const char *failed = vkc__fault.failed_call;
    vkc__fault = (vkc__fault_state){0};
    vkc_test_quiet_errors(0);
    assert_int_equal(r, VKC_SUCCESS);
    assert_non_null(failed);
    assert_string_equal(failed, "vkCreateQueryPool");
    run_and_check(&w, 2);
    vkc_profile_info info;
    uint32_t n;
    vkc_profile_event *ev = get_events(w.ctx, &info, &n);
    assert_int_equal(info.status, VKC_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(info.message, "vkCreateQueryPool"));
    /* The copy recorded without queries ran unprofiled; the ring's second
     * copy, recorded at the second submit, got its queries. */
    uint32_t subs = 0;
    for (uint32_t i = 0; i < n; ++i)
        subs += ev[i].kind == VKC_PROFILE_SUBMISSION;
    assert_int_equal(subs, 1);
    free(ev);
    /* Recording again gets its queries: profiling resumes. */
    assert_int_equal(vkc_profile_reset(w.ctx), VKC_SUCCESS);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 2);
    ev = get_events(w.ctx, &info, &n);
    assert_int_equal(info.status, VKC_SUCCESS);
    assert_true(check_nesting(ev, n, &info) >= 1);
    free(ev);
    vkc_test_context_destroy(w.ctx);
}

/* A full buffer: later events dropped and counted, a clear status, the
 * work still right; a reset starts over. */
static void test_full_buffer(void **state)
{
    (void)state;
    small_capacity = 40;
    world w;
    make_world(&w, profile_small, VKC_DEFAULT);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 6);
    vkc_profile_info info;
    uint32_t n;
    vkc_profile_event *ev = get_events(w.ctx, &info, &n);
    assert_int_equal(n, 40);
    assert_int_equal(info.capacity, 40);
    assert_true(info.dropped > 0);
    assert_int_equal(info.status, VKC_ERROR_LIMIT);
    assert_non_null(strstr(info.message, "full"));
    free(ev);
    assert_int_equal(vkc_profile_reset(w.ctx), VKC_SUCCESS);
    run_and_check(&w, 1);
    ev = get_events(w.ctx, &info, &n);
    assert_int_equal(info.status, VKC_SUCCESS);
    assert_int_equal(info.dropped, 0);
    assert_int_equal(check_nesting(ev, n, &info), 1);
    free(ev);
    vkc_test_context_destroy(w.ctx);
}

/* Through device loss (injected at a submit) and recovery. */
static void test_device_loss(void **state)
{
    (void)state;
    world w;
    make_world(&w, profile_on, VKC_DEFAULT);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 2);
    vkc_test_quiet_errors(1);
    vkc__fault = (vkc__fault_state){
        .armed = true, .fail_at = 1, .only = VKC__FAULT_VK, .forced = VK_ERROR_DEVICE_LOST};
    vkc_ticket t;
    vkc_result r = vkc_seq_submit(w.seq, &t);
    vkc__fault = (vkc__fault_state){0};
    assert_int_equal(r, VKC_ERROR_DEVICE_LOST);
    assert_int_equal(vkc_profile_get(w.ctx, NULL, NULL, 0, NULL), VKC_ERROR_DEVICE_LOST);
    vkc_test_quiet_errors(0);
    r = vkc_context_recover(w.ctx);
    assert_true(r >= 0);
    assert_int_equal(record(&w), VKC_SUCCESS);
    run_and_check(&w, 3);
    vkc_profile_info info;
    uint32_t n;
    vkc_profile_event *ev = get_events(w.ctx, &info, &n);
    assert_int_equal(info.status, VKC_SUCCESS);
    /* Two before the loss, three after. */
    assert_int_equal(check_nesting(ev, n, &info), 5);
    free(ev);
    assert_int_equal(vkc_profile_write_trace(w.ctx, "test_profile_recover.json"), VKC_SUCCESS);
    vkc_test_context_destroy(w.ctx);
}

/* Kernel statistics: lavapipe lacks VK_KHR_pipeline_executable_properties,
 * so they come from reflection (workgroup size, shared memory). */
static void test_kernel_stats(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(profile_on);
    vkc_kernel *k = glsl(ctx, SHARED_GLSL, "tile");
    vkc_kernel_stats ks;
    assert_int_equal(vkc_kernel_stats_get(k, &ks), VKC_SUCCESS);
    assert_int_equal(ks.workgroup_size[0], 128);
    assert_int_equal(ks.workgroup_size[1], 1);
    assert_int_equal(ks.workgroup_invocations, 128);
    const vkc_device_info *di = vkc_context_device(ctx);
    if (!ks.from_driver) {
        assert_int_equal(ks.shared_memory, 256 * 4 + 16 * 4);
        assert_int_equal(ks.registers, 0);
    }
    assert_true(ks.subgroup_size >= 1);
    assert_int_equal(ks.subgroups_per_workgroup, (128 + ks.subgroup_size - 1) / ks.subgroup_size);
    if (!di->warps_per_sm) {
        assert_int_equal(ks.occupancy, 0);
        assert_non_null(strstr(ks.limit, "unknown"));
    } else {
        assert_true(ks.occupancy > 0 && ks.occupancy <= di->warps_per_sm);
    }
    assert_int_equal(vkc_kernel_stats_get(NULL, &ks), VKC_ERROR_INVALID_HANDLE);
    vkc_test_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles),          cmocka_unit_test(test_nested_calibrated),
        cmocka_unit_test(test_nested_correlated),    cmocka_unit_test(test_nested_fallbacks),
        cmocka_unit_test(test_proportional),         cmocka_unit_test(test_trace_files),
        cmocka_unit_test(test_off_and_per_sequence), cmocka_unit_test(test_fault_query_pool),
        cmocka_unit_test(test_full_buffer),          cmocka_unit_test(test_device_loss),
        cmocka_unit_test(test_kernel_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
