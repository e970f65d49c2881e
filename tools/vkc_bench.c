/* vkc-bench: the submission path measured, vkc beside raw Vulkan (and, through
 * bench/run_h200.sh, beside CUDA).
 *
 *   vkc-bench [--quick] [--scenario NAME[,NAME...]]... [--json FILE] [--plot DIR]
 *             [--device NAME|INDEX] [--validation] [--scale X] [--strict] [--list]
 *
 * Every scenario checks its results against a CPU reference and reports ok.
 * Timings are p50/p95/p99 over many iterations after a warm-up. The table's
 * ratio column divides by the scenario's baseline variant (raw naive for the
 * round trips, the raw Vulkan variant elsewhere): for times < 1 is faster,
 * for GB/s > 1 is faster.
 *
 * --validation turns the Khronos validation layer (with synchronization
 * validation) on for every context; the default is off, whatever the build.
 *
 * Exit status: 0 when the benchmark ran (failed scenarios show ok = no), 1
 * with --strict when any scenario failed or validation reported anything, 2
 * on bad usage, no device, or output that could not be written. */
#include "bench.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
/* Under AddressSanitizer only: keep the loader, driver and layer mapped after
 * they are closed so LeakSanitizer can name the module of a driver-owned leak
 * and tests/lsan.supp can match it (as the test harness does). */
__attribute__((constructor)) static void bench_pin_modules(void)
{
    static const char *const libs[] = {"libvulkan.so.1", "libvulkan_lvp.so",
                                       "libVkLayer_khronos_validation.so"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); ++i)
        (void)dlopen(libs[i], RTLD_NOW | RTLD_NODELETE | RTLD_GLOBAL);
}
#endif

static const struct {
    const char *name;
    bench_fn fn;
    const char *what;
} scenarios[] = {
#define BENCH_SCEN_ENTRY(name, what) {#name, scen_##name, what},
    BENCH_SCENARIOS(BENCH_SCEN_ENTRY)
#undef BENCH_SCEN_ENTRY
};
#define SCENARIO_COUNT (sizeof(scenarios) / sizeof(scenarios[0]))

/* ---- small utilities ------------------------------------------------------ */

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t bench_n(const bench *b, uint32_t quick, uint32_t full)
{
    double n = (b->opt.quick ? quick : full) * b->opt.scale;
    return n < 1 ? 1 : (uint32_t)n;
}

const char *bench_vkc_err(vkc_context *ctx, vkc_result r, const char *what, char *buf, size_t n)
{
    /* the context's message already names the result */
    const char *detail = ctx ? vkc_context_last_error(ctx) : vkc_last_create_error();
    int name_len = (int)strcspn(what, "(");
    snprintf(buf, n, "%.*s: %s", name_len, what, detail && *detail ? detail : vkc_result_string(r));
    return buf;
}

/* Validation warnings and errors seen (--strict fails on any). */
static int validation_messages;

static void log_func(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    if (level >= VKC_LOG_WARN && (id == VKC_LOG_ID_VALIDATION || id == VKC_LOG_ID_PERFORMANCE))
        ++validation_messages;
    (void)user;
    /* failed calls (VKC_LOG_ID_ERROR) are reported in the table instead */
    if ((level >= VKC_LOG_WARN && id != VKC_LOG_ID_ERROR) ||
        strncmp(msg, "VKC_TIME_CALLS", 14) == 0) /* the report VKC_TIME_CALLS=1 asks for */
        fprintf(stderr, "vkc: %s\n", msg);
}

bool bench_row_wanted(const char *name)
{
    const char *rows = getenv("VKC_BENCH_ROWS");
    if (!rows || !*rows)
        return true;
    size_t n = strlen(name);
    for (const char *p = rows; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

vkc_result bench_context(bench *b, vkc_context_desc *desc, vkc_context **out)
{
    desc->device = b->opt.device;
    desc->validation = b->opt.validation ? VKC_ON : VKC_OFF;
    desc->logger.func = log_func;
    return vkc_context_create(desc, out);
}

static void twin_lock(void *base)
{
    vkc_queue_lock(base);
}
static void twin_unlock(void *base)
{
    vkc_queue_unlock(base);
}

vkc_result bench_twin(bench *b, vkc_context **out)
{
    *out = NULL;
    vkc_vk_handles h;
    vkc_context_features f;
    vkc_result r = vkc_context_vk(b->ctx, &h);
    if (r == VKC_SUCCESS)
        r = vkc_context_features_get(b->ctx, &f);
    if (r != VKC_SUCCESS)
        return r;
    const vkc_device_info *d = vkc_context_device(b->ctx);
    /* What vkc enabled on its device (device.c): every optional feature
     * present, the timeline and push descriptors as the context reports. */
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDeviceVulkan11Features f11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features f13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    f2.features.shaderInt64 = d->shader_int64;
    f2.features.shaderFloat64 = d->shader_float64;
    f2.features.shaderStorageImageReadWithoutFormat = d->storage_image_read_without_format;
    f2.features.shaderStorageImageWriteWithoutFormat = d->storage_image_write_without_format;
    if (h.api_version >= VK_API_VERSION_1_2) {
        f2.pNext = &f11;
        f11.pNext = &f12;
        f11.storageBuffer16BitAccess = d->storage_buffer_16bit;
        f12.storageBuffer8BitAccess = d->storage_buffer_8bit;
        f12.shaderFloat16 = d->shader_float16;
        f12.shaderInt8 = d->shader_int8;
        f12.timelineSemaphore = f.timeline_semaphores;
        f12.bufferDeviceAddress = f.buffer_device_address;
    }
    if (h.api_version >= VK_API_VERSION_1_3) {
        f12.pNext = &f13;
        f13.synchronization2 = f.synchronization2;
        f13.subgroupSizeControl = f13.computeFullSubgroups = d->subgroup_size_control;
        f13.maintenance4 = VK_TRUE;
    }
    const char *ext[1];
    uint32_t n_ext = 0;
    if (f.push_descriptors)
        ext[n_ext++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    vkc_wrap_desc w = {.instance = h.instance,
                       .physical_device = h.physical_device,
                       .device = h.device,
                       .get_instance_proc_addr = h.get_instance_proc_addr,
                       .api_version = h.api_version,
                       .device_extensions = ext,
                       .device_extension_count = n_ext,
                       .device_features = &f2,
                       .queue_family = h.queue_family,
                       .queue_index = 0,
                       .queue_lock = twin_lock,
                       .queue_unlock = twin_unlock,
                       .queue_lock_user = b->ctx,
                       .logger.func = log_func};
    return vkc_context_wrap(&w, out);
}

/* bench_twin for row `row`: on failure the row gets a failed record and
 * NULL. The batch rows use it so that every row meets the device
 * raw-record-submit and vkc-immediate run on: until the twenty-third
 * session each had a device of its own, and NVIDIA's slow and fast modes
 * belong to a device (job Z36). */
vkc_context *bench_twin_row(bench *b, const char *row)
{
    vkc_context *c = NULL;
    vkc_result res = bench_twin(b, &c);
    if (res == VKC_SUCCESS)
        return c;
    char err[512];
    bench_vkc_err(NULL, res, "vkc_context_wrap", err, sizeof(err));
    bench_fail(b, row, "%s", err);
    return NULL;
}

/* The same with environment variable name set to value, which is then as it
 * was (a job may export it for every context: job Z41 exported
 * VKC_SIGNAL_ADAPT=1). */
vkc_context *bench_twin_env(bench *b, const char *name, const char *value, const char *row)
{
    const char *was = getenv(name);
    char keep[64] = "";
    if (was)
        snprintf(keep, sizeof(keep), "%s", was);
    setenv(name, value, 1);
    vkc_context *c = bench_twin_row(b, row);
    if (was)
        setenv(name, keep, 1);
    else
        unsetenv(name);
    return c;
}

bench_rec bench_rec_init(const bench *b, const char *variant, const char *baseline)
{
    bench_rec r;
    memset(&r, 0, sizeof(r));
    snprintf(r.scenario, sizeof(r.scenario), "%s", b->scenario_name);
    snprintf(r.variant, sizeof(r.variant), "%s", variant);
    snprintf(r.baseline, sizeof(r.baseline), "%s", baseline ? baseline : "");
    r.per_dispatch_ns = r.gpu_per_dispatch_ns = r.gbps = r.x = -1;
    r.per_dispatch_p95_ns = r.per_dispatch_p99_ns = -1;
    r.barriers = r.expected_barriers = -1;
    r.p50_us = r.p95_us = r.p99_us = r.mean_us = r.min_us = r.max_us = -1;
    r.ok = true;
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted data. */
static double percentile(const double *s, uint32_t n, double p)
{
    if (n == 0)
        return -1;
    double rank = ceil(p / 100.0 * n);
    uint32_t i = rank < 1 ? 0 : (uint32_t)rank - 1;
    return s[i >= n ? n - 1 : i];
}

double bench_median(const double *v, uint32_t n)
{
    if (n == 0)
        return -1;
    double *c = malloc(n * sizeof(double));
    if (!c)
        return -1;
    memcpy(c, v, n * sizeof(double));
    qsort(c, n, sizeof(double), cmp_double);
    double m = percentile(c, n, 50);
    free(c);
    return m;
}

void bench_rec_stats(bench_rec *r, double *ns, uint32_t n, bool keep)
{
    if (n == 0)
        return;
    qsort(ns, n, sizeof(double), cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; ++i)
        sum += ns[i];
    r->iterations = n;
    r->p50_us = percentile(ns, n, 50) / 1e3;
    r->p95_us = percentile(ns, n, 95) / 1e3;
    r->p99_us = percentile(ns, n, 99) / 1e3;
    r->mean_us = sum / n / 1e3;
    r->min_us = ns[0] / 1e3;
    r->max_us = ns[n - 1] / 1e3;
    if (keep) {
        uint32_t m = n < BENCH_MAX_SAMPLES_KEPT ? n : BENCH_MAX_SAMPLES_KEPT;
        r->samples = malloc(m * sizeof(float));
        if (r->samples) {
            /* evenly spaced through the sorted samples: the distribution is kept */
            for (uint32_t i = 0; i < m; ++i)
                r->samples[i] = (float)(ns[(uint64_t)i * n / m] / 1e3);
            r->sample_count = m;
        }
    }
}

void bench_progress(bench *b, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K[%d/%d] %s: %s", b->scenario_index + 1, b->scenario_total,
                b->scenario_name, msg);
    else
        fprintf(stderr, "[%d/%d] %s: %s\n", b->scenario_index + 1, b->scenario_total,
                b->scenario_name, msg);
    fflush(stderr);
}

void bench_add(bench *b, bench_rec *r)
{
    if (b->rec_count == b->rec_cap) {
        size_t cap = b->rec_cap ? b->rec_cap * 2 : 64;
        bench_rec *n = realloc(b->recs, cap * sizeof(*n));
        if (!n) {
            free(r->samples);
            return;
        }
        b->recs = n;
        b->rec_cap = cap;
    }
    if (r->expected_barriers >= 0 && r->barriers >= 0 && r->barriers > r->expected_barriers &&
        !r->note[0])
        snprintf(r->note, sizeof(r->note), "barriers %lld > expected %lld", (long long)r->barriers,
                 (long long)r->expected_barriers);
    b->recs[b->rec_count++] = *r;
    if (r->skipped)
        bench_progress(b, "%s skipped (%s)", r->variant, r->note);
    else if (!r->ok)
        bench_progress(b, "%s FAILED: %s", r->variant, r->note);
    else if (r->p50_us >= 0)
        bench_progress(b, "%s p50 %.2f us", r->variant, r->p50_us);
    else
        bench_progress(b, "%s %.0f ns per dispatch", r->variant, r->per_dispatch_ns);
}

void bench_fail(bench *b, const char *variant, const char *fmt, ...)
{
    bench_rec r = bench_rec_init(b, variant, NULL);
    r.ok = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.note, sizeof(r.note), fmt, ap);
    va_end(ap);
    bench_add(b, &r);
}

/* ---- table ---------------------------------------------------------------- */

static const bench_rec *find_rec(const bench *b, const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return NULL;
    size_t sl = (size_t)(slash - key);
    for (size_t i = 0; i < b->rec_count; ++i) {
        const bench_rec *r = &b->recs[i];
        if (strlen(r->scenario) == sl && !strncmp(r->scenario, key, sl) &&
            !strcmp(r->variant, slash + 1))
            return r;
    }
    return NULL;
}

/* Ratio against the baseline: GB/s when both have it, else ns per dispatch,
 * else p50. Returns < 0 when it does not apply. */
static double ratio(const bench_rec *r, const bench_rec *base)
{
    if (!base || !base->ok || !r->ok || r->skipped || base->skipped)
        return -1;
    if (r->gbps > 0 && base->gbps > 0)
        return r->gbps / base->gbps;
    if (r->per_dispatch_ns > 0 && base->per_dispatch_ns > 0)
        return r->per_dispatch_ns / base->per_dispatch_ns;
    if (r->p50_us > 0 && base->p50_us > 0)
        return r->p50_us / base->p50_us;
    return -1;
}

static void fmt_num(char *out, size_t n, double v, const char *f)
{
    if (v < 0)
        snprintf(out, n, "-");
    else
        snprintf(out, n, f, v);
}

static void print_table(const bench *b)
{
    printf("\n| scenario | variant | iters | p50 us | p95 us | p99 us | ns/dispatch | GPU "
           "ns/disp | GB/s | barriers | ratio | ok | note |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
    for (size_t i = 0; i < b->rec_count; ++i) {
        const bench_rec *r = &b->recs[i];
        char p50[32], p95[32], p99[32], pd[64], gpd[32], gb[32], ra[48], bar[48];
        fmt_num(p50, sizeof(p50), r->p50_us, "%.2f");
        fmt_num(p95, sizeof(p95), r->p95_us, "%.2f");
        fmt_num(p99, sizeof(p99), r->p99_us, "%.2f");
        fmt_num(pd, sizeof(pd), r->per_dispatch_ns, "%.0f");
        if (r->per_dispatch_ns >= 0 && r->per_dispatch_p95_ns >= 0)
            snprintf(pd, sizeof(pd), "%.0f (p95 %.0f, p99 %.0f)", r->per_dispatch_ns,
                     r->per_dispatch_p95_ns, r->per_dispatch_p99_ns);
        fmt_num(gpd, sizeof(gpd), r->gpu_per_dispatch_ns, "%.0f");
        fmt_num(gb, sizeof(gb), r->gbps, "%.1f");
        const bench_rec *base = r->baseline[0] ? find_rec(b, r->baseline) : NULL;
        double q = ratio(r, base);
        if (base == r)
            snprintf(ra, sizeof(ra), "1 (base)");
        else if (q < 0)
            snprintf(ra, sizeof(ra), "-");
        else
            snprintf(ra, sizeof(ra), "%.2fx", q);
        if (r->barriers < 0)
            snprintf(bar, sizeof(bar), "-");
        else if (r->expected_barriers >= 0)
            snprintf(bar, sizeof(bar), "%lld (max %lld)", (long long)r->barriers,
                     (long long)r->expected_barriers);
        else
            snprintf(bar, sizeof(bar), "%lld", (long long)r->barriers);
        printf("| %s | %s | %u | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->scenario,
               r->variant, r->iterations, p50, p95, p99, pd, gpd, gb, bar, ra,
               r->skipped ? "skip" : (r->ok ? "yes" : "NO"), r->note);
    }
    printf("\nratio: against the row named in each record's baseline (the raw Vulkan variant; "
           "raw naive for round trips): times < 1 are faster, GB/s > 1 are faster.\n");
}

/* ---- JSON ----------------------------------------------------------------- */

/* vkc-bench's "does not apply" values are negative: null in the JSON. */
static void json_opt_num(json_w *w, const char *key, double v)
{
    json_key(w, key);
    if (v < 0)
        json_null(w);
    else
        json_num(w, v);
}

static bool write_json(const bench *b, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "vkc-bench: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    json_w w;
    json_init(&w, f, 1); /* one record a line */
    json_arr_begin(&w);
    for (size_t i = 0; i < b->rec_count; ++i) {
        const bench_rec *r = &b->recs[i];
        json_obj_begin(&w);
        json_kstr(&w, "source", "vkc-bench");
        json_kstr(&w, "scenario", r->scenario);
        json_kstr(&w, "variant", r->variant);
        json_kstr(&w, "baseline", r->baseline);
        json_kstr(&w, "device", b->device_name);
        json_kstr(&w, "driver", b->driver);
        json_kstr(&w, "vkc_version", VKC_VERSION_STRING);
        json_kbool(&w, "quick", b->opt.quick);
        json_kuint(&w, "iterations", r->iterations);
        json_opt_num(&w, "p50_us", r->p50_us);
        json_opt_num(&w, "p95_us", r->p95_us);
        json_opt_num(&w, "p99_us", r->p99_us);
        json_opt_num(&w, "mean_us", r->mean_us);
        json_opt_num(&w, "min_us", r->min_us);
        json_opt_num(&w, "max_us", r->max_us);
        json_opt_num(&w, "per_dispatch_ns", r->per_dispatch_ns);
        json_opt_num(&w, "per_dispatch_p95_ns", r->per_dispatch_p95_ns);
        json_opt_num(&w, "per_dispatch_p99_ns", r->per_dispatch_p99_ns);
        json_opt_num(&w, "gpu_per_dispatch_ns", r->gpu_per_dispatch_ns);
        json_opt_num(&w, "gbps", r->gbps);
        json_opt_num(&w, "x", r->x);
        json_kstr(&w, "x_name", r->x_name);
        json_opt_num(&w, "barriers", (double)r->barriers);
        json_opt_num(&w, "expected_barriers", (double)r->expected_barriers);
        json_kbool(&w, "ok", r->ok);
        json_kbool(&w, "skipped", r->skipped);
        json_kstr(&w, "note", r->note);
        json_obj_end(&w);
    }
    json_arr_end(&w);
    bool ok = json_finish(&w);
    if (fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "vkc-bench: writing %s failed\n", path);
    return ok;
}

/* ---- SVG plots ------------------------------------------------------------ */

typedef struct series {
    char name[64];
    double x[256], y[256];
    int n;
} series;

static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static double axis_map(double v, double lo, double hi, bool logv, double p0, double p1)
{
    if (logv) {
        v = log10(v > 0 ? v : 1e-9);
        lo = log10(lo);
        hi = log10(hi);
    }
    double t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    return p0 + t * (p1 - p0);
}

static void nice_range(double *lo, double *hi, bool logv)
{
    if (logv) {
        *lo = pow(10, floor(log10(*lo)));
        *hi = pow(10, ceil(log10(*hi)));
        if (*hi <= *lo)
            *hi = *lo * 10;
    } else {
        if (*lo > 0)
            *lo = 0;
        if (*hi <= *lo)
            *hi = *lo + 1;
        *hi *= 1.05;
    }
}

/* Text with the XML specials escaped (device names may hold any of them). */
static void svg_text(FILE *f, const char *s)
{
    for (; *s; ++s) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A line chart with markers. logx/logy pick the scales. The subtitle names
 * the device and driver: a plot read on its own says where it was measured. */
static bool svg_chart(const bench *b, const char *path, const char *title, const char *xlabel,
                      const char *ylabel, series *s, int ns, bool logx, bool logy)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    int points = 0;
    for (int i = 0; i < ns; ++i)
        for (int j = 0; j < s[i].n; ++j) {
            if ((logx && s[i].x[j] <= 0) || (logy && s[i].y[j] <= 0))
                continue;
            xlo = fmin(xlo, s[i].x[j]);
            xhi = fmax(xhi, s[i].x[j]);
            ylo = fmin(ylo, s[i].y[j]);
            yhi = fmax(yhi, s[i].y[j]);
            ++points;
        }
    if (points == 0)
        return true; /* nothing to draw */
    nice_range(&xlo, &xhi, logx);
    nice_range(&ylo, &yhi, logy);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "vkc-bench: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    const double W = 760, H = 480, L = 80, R = 200, T = 56, B = 60;
    double px0 = L, px1 = W - R, py0 = H - B, py1 = T;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%.0f\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">",
            W, H, W / 2);
    svg_text(f, title);
    fprintf(f,
            "</text>\n<text x=\"%.0f\" y=\"40\" font-size=\"11\" fill=\"#555\" "
            "text-anchor=\"middle\">",
            W / 2);
    svg_text(f, b->device_name);
    fputs(" \xe2\x80\x94 ", f); /* an em dash */
    svg_text(f, b->driver);
    fputs("</text>\n", f);
    /* grid and ticks */
    for (int axis = 0; axis < 2; ++axis) {
        bool lg = axis == 0 ? logx : logy;
        double lo = axis == 0 ? xlo : ylo, hi = axis == 0 ? xhi : yhi;
        double ticks[64];
        int nt = 0;
        if (lg) {
            for (double v = lo; v <= hi * 1.0001 && nt < 64; v *= 10)
                ticks[nt++] = v;
        } else {
            double step = pow(10, floor(log10((hi - lo) / 5)));
            if ((hi - lo) / step > 10)
                step *= 2;
            if ((hi - lo) / step > 10)
                step *= 2.5;
            for (double v = ceil(lo / step) * step; v <= hi && nt < 64; v += step)
                ticks[nt++] = v;
        }
        for (int i = 0; i < nt; ++i) {
            if (axis == 0) {
                double x = axis_map(ticks[i], xlo, xhi, logx, px0, px1);
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                        x, py0, x, py1, x, py0 + 16, ticks[i]);
            } else {
                double y = axis_map(ticks[i], ylo, yhi, logy, py0, py1);
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                        px0, y, px1, y, px0 - 6, y + 4, ticks[i]);
            }
        }
    }
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
            "stroke=\"black\"/>\n"
            "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
            "<text transform=\"translate(18 %.0f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
            px0, py1, px1 - px0, py0 - py1, (px0 + px1) / 2, H - 16, xlabel, (py0 + py1) / 2,
            ylabel);
    for (int i = 0; i < ns; ++i) {
        const char *c = colors[i % 10];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"", c);
        for (int j = 0; j < s[i].n; ++j) {
            if ((logx && s[i].x[j] <= 0) || (logy && s[i].y[j] <= 0))
                continue;
            fprintf(f, "%.1f,%.1f ", axis_map(s[i].x[j], xlo, xhi, logx, px0, px1),
                    axis_map(s[i].y[j], ylo, yhi, logy, py0, py1));
        }
        fprintf(f, "\"/>\n");
        if (s[i].n <= 64)
            for (int j = 0; j < s[i].n; ++j) {
                if ((logx && s[i].x[j] <= 0) || (logy && s[i].y[j] <= 0))
                    continue;
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                        axis_map(s[i].x[j], xlo, xhi, logx, px0, px1),
                        axis_map(s[i].y[j], ylo, yhi, logy, py0, py1), c);
            }
        fprintf(f,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                px1 + 12, py1 + 18.0 * i, c, px1 + 30, py1 + 18.0 * i + 10, s[i].name);
    }
    fprintf(f, "</svg>\n");
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    return ok;
}

/* Series name: the variant up to the first space (sweep variants are "name K=n"). */
static void series_name(const bench_rec *r, char *out, size_t n)
{
    snprintf(out, n, "%s", r->variant);
    char *sp = strchr(out, ' ');
    if (sp)
        *sp = '\0';
}

/* Records of one scenario with x >= 0, grouped into series by name. */
static int collect_sweep(const bench *b, const char *scenario, bool gpu, series *s, int max)
{
    int ns = 0;
    for (size_t i = 0; i < b->rec_count; ++i) {
        const bench_rec *r = &b->recs[i];
        if (strcmp(r->scenario, scenario) || r->x < 0 || !r->ok || r->skipped)
            continue;
        double y = r->gbps > 0 ? r->gbps
                               : (gpu && r->gpu_per_dispatch_ns > 0 ? r->gpu_per_dispatch_ns
                                                                    : r->per_dispatch_ns);
        if (y <= 0 && r->p50_us > 0)
            y = r->p50_us;
        char name[64];
        series_name(r, name, sizeof(name));
        int k = 0;
        while (k < ns && strcmp(s[k].name, name))
            ++k;
        if (k == ns) {
            if (ns == max)
                continue;
            memset(&s[ns], 0, sizeof(s[ns]));
            snprintf(s[ns].name, sizeof(s[ns].name), "%s", name);
            ++ns;
        }
        if (s[k].n < 256) {
            s[k].x[s[k].n] = r->x;
            s[k].y[s[k].n] = y;
            s[k].n++;
        }
    }
    return ns;
}

static bool write_plots(const bench *b, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "vkc-bench: cannot create %s: %s\n", dir, strerror(errno));
        return false;
    }
    static series s[10];
    char path[1024];
    bool ok = true;

    /* Latency distribution (CDF) of every round-trip variant. */
    const char *rt[] = {"naive", "reuse", "family"};
    for (int k = 0; k < 3; ++k) {
        int ns = 0;
        for (size_t i = 0; i < b->rec_count && ns < 10; ++i) {
            const bench_rec *r = &b->recs[i];
            if (strcmp(r->scenario, rt[k]) || !r->sample_count)
                continue;
            memset(&s[ns], 0, sizeof(s[ns]));
            snprintf(s[ns].name, sizeof(s[ns].name), "%s", r->variant);
            uint32_t step = r->sample_count / 200 + 1;
            for (uint32_t j = 0; j < r->sample_count && s[ns].n < 256; j += step) {
                s[ns].x[s[ns].n] = r->samples[j];
                s[ns].y[s[ns].n] = 100.0 * (j + 1) / r->sample_count;
                s[ns].n++;
            }
            ++ns;
        }
        if (ns == 0)
            continue;
        char title[128];
        snprintf(title, sizeof(title), "%s: round-trip latency distribution", rt[k]);
        snprintf(path, sizeof(path), "%s/latency_%s.svg", dir, rt[k]);
        ok &= svg_chart(b, path, title, "round trip (us, log)", "percentile", s, ns, true, false);
    }
    int ns = collect_sweep(b, "batch", false, s, 10);
    snprintf(path, sizeof(path), "%s/batch.svg", dir);
    ok &= svg_chart(b, path, "immediate mode: time per dispatch vs batch size",
                    "dispatches per submit", "ns per dispatch (log)", s, ns, true, true);
    ns = collect_sweep(b, "fusion", false, s, 10);
    snprintf(path, sizeof(path), "%s/fusion.svg", dir);
    ok &= svg_chart(b, path, "fused vs unfused elementwise chain", "chain length (steps)",
                    "time per chain (us, log)", s, ns, true, true);
    ns = collect_sweep(b, "bandwidth", false, s, 10);
    snprintf(path, sizeof(path), "%s/bandwidth.svg", dir);
    ok &= svg_chart(b, path, "bandwidth vs workgroups per SM (grid-stride)", "workgroups per SM",
                    "GB/s (read + written)", s, ns, true, false);
    ns = collect_sweep(b, "chain", true, s, 10);
    snprintf(path, sizeof(path), "%s/chain.svg", dir);
    ok &= svg_chart(b, path, "dependent chain: ns per dispatch", "chain length", "ns per dispatch",
                    s, ns, true, true);
    return ok;
}

/* ---- main ----------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: vkc-bench [--quick] [--scenario NAME[,NAME...]]... [--json FILE] "
               "[--plot DIR]\n"
               "                 [--device NAME|INDEX] [--validation] [--scale X] [--strict] "
               "[--list]\n\nscenarios:\n");
    for (size_t i = 0; i < SCENARIO_COUNT; ++i)
        fprintf(f, "  %-12s %s\n", scenarios[i].name, scenarios[i].what);
}

static bool add_scenarios(bench_opts *o, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        bool known = false;
        for (size_t i = 0; i < SCENARIO_COUNT; ++i)
            known |= !strcmp(scenarios[i].name, tok);
        if (!known) {
            fprintf(stderr, "vkc-bench: unknown scenario '%s'\n", tok);
            return false;
        }
        if (o->scenario_count < 32)
            snprintf(o->scenarios[o->scenario_count++], sizeof(o->scenarios[0]), "%s", tok);
    }
    return true;
}

static bool selected(const bench_opts *o, const char *name)
{
    if (o->scenario_count == 0)
        return true;
    for (int i = 0; i < o->scenario_count; ++i)
        if (!strcmp(o->scenarios[i], name))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    static bench b;
    b.opt.scale = 1.0;
    bool strict = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            b.opt.quick = true;
        } else if (!strcmp(a, "--strict")) {
            strict = true;
        } else if (!strcmp(a, "--validation")) {
            b.opt.validation = true;
        } else if (!strcmp(a, "--list")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (next && !strcmp(a, "--scenario")) {
            if (!add_scenarios(&b.opt, next))
                return 2;
            ++i;
        } else if (next && !strcmp(a, "--json")) {
            b.opt.json_path = next;
            ++i;
        } else if (next && !strcmp(a, "--plot")) {
            b.opt.plot_dir = next;
            ++i;
        } else if (next && !strcmp(a, "--device")) {
            b.opt.device = next;
            ++i;
        } else if (next && !strcmp(a, "--scale")) {
            b.opt.scale = atof(next);
            if (!(b.opt.scale > 0)) {
                fprintf(stderr, "vkc-bench: --scale wants a positive number\n");
                return 2;
            }
            ++i;
        } else {
            fprintf(stderr, "vkc-bench: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    vkc_context_desc desc = {0};
    vkc_result res = bench_context(&b, &desc, &b.ctx);
    if (res != VKC_SUCCESS) {
        fprintf(stderr, "vkc-bench: no context: %s: %s\n", vkc_result_string(res),
                vkc_last_create_error());
        return 2;
    }
    b.dev = vkc_context_device(b.ctx);
    vkc_context_features_get(b.ctx, &b.feat);
    snprintf(b.device_name, sizeof(b.device_name), "%s", b.dev->name);
    snprintf(b.driver, sizeof(b.driver), "%s %s", b.dev->driver_name, b.dev->driver_info);
    printf("vkc-bench %s (%s)\ndevice: %s\ndriver: %s\nVulkan %u.%u.%u, queue family %u (%s), "
           "subgroup %u, SMs %u%s, timestamps %s, push descriptors %s, sync2 %s, validation %s\n",
           VKC_VERSION_STRING, b.opt.quick ? "quick" : "full", b.device_name, b.driver,
           VK_API_VERSION_MAJOR(b.dev->api_version), VK_API_VERSION_MINOR(b.dev->api_version),
           VK_API_VERSION_PATCH(b.dev->api_version), b.dev->queue_family,
           vkc_queue_reason_string(b.dev->queue_reason), b.dev->subgroup_size, b.dev->sm_count,
           b.dev->sm_count ? "" : " (unknown)", b.dev->timestamps ? "yes" : "no",
           b.feat.push_descriptors ? "yes" : "no", b.feat.synchronization2 ? "yes" : "no",
           b.feat.validation ? (b.feat.sync_validation ? "on (+sync)" : "on") : "off");
    fflush(stdout);

    static raw r;
    bool raw_ok_ = raw_init(&r, b.ctx);
    if (!raw_ok_)
        fprintf(stderr, "vkc-bench: raw Vulkan setup failed: %s\n", r.err);

    for (size_t i = 0; i < SCENARIO_COUNT; ++i)
        b.scenario_total += selected(&b.opt, scenarios[i].name);
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < SCENARIO_COUNT; ++i) {
        if (!selected(&b.opt, scenarios[i].name))
            continue;
        b.scenario_name = scenarios[i].name;
        bench_progress(&b, "running");
        if (!raw_ok_)
            bench_fail(&b, "raw", "raw Vulkan setup failed: %s", r.err);
        scenarios[i].fn(&b, raw_ok_ ? &r : NULL);
        ++b.scenario_index;
    }
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "vkc-bench: %d scenarios in %.1f s\n", b.scenario_total,
            (bench_now_ns() - t0) / 1e9);

    print_table(&b);
    int failed = 0;
    for (size_t i = 0; i < b.rec_count; ++i)
        failed += !b.recs[i].ok;
    printf("\n%zu records, %d failed\n", b.rec_count, failed);
    int status = 0;
    if (b.opt.json_path && !write_json(&b, b.opt.json_path))
        status = 2;
    if (b.opt.plot_dir && !write_plots(&b, b.opt.plot_dir))
        status = 2;
    if (validation_messages)
        printf("%d validation messages (see stderr)\n", validation_messages);
    if (strict && (failed || validation_messages))
        status = 1;

    if (raw_ok_)
        raw_finish(&r);
    vkc_context_destroy(b.ctx);
    for (size_t i = 0; i < b.rec_count; ++i)
        free(b.recs[i].samples);
    free(b.recs);
    return status;
}
