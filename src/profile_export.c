/* Profile output: the Chrome trace (JSON) and its SVG picture, written from
 * the profile state's events and per-label statistics.
 *
 * Owns: lanes of the trace and the picture, the JSON and SVG writers,
 * vkc_profile_write_trace/svg and the VKC_PROFILE pair (vkc__write_both).
 * Calls: profile.c through profile.h (settle, info, stats, label hash), the
 * context (errors); nothing else. */
#include "profile.h"

#include <inttypes.h>
#include <stdio.h>

/* ---- trace and picture ----------------------------------------------------------------------- */

/* Lanes: CPU events on their thread, GPU events on their kind's lane; an
 * event that overlaps an earlier one of its lane (commands of one level run
 * concurrently) goes to the next sub-lane, so that a lane holds disjoint
 * events only. */
#define VKC_SUBLANES 16u

static uint32_t vkc__lane_base(const vkc__pevent *e)
{
    switch (e->kind) {
    case VKC_PROFILE_SUBMISSION:
        return VKC_LANE_GPU;
    case VKC_PROFILE_DISPATCH:
        return VKC_LANE_GPU + VKC_SUBLANES;
    case VKC_PROFILE_COPY:
    case VKC_PROFILE_FILL:
    case VKC_PROFILE_OWNERSHIP:
        return VKC_LANE_GPU + 2 * VKC_SUBLANES;
    case VKC_PROFILE_BARRIER:
        return VKC_LANE_GPU + 3 * VKC_SUBLANES;
    default:
        return e->thread * VKC_SUBLANES;
    }
}

static const char *const vkc__gpu_lane_names[4] = {"gpu submissions", "gpu dispatch", "gpu copy",
                                                   "gpu barrier"};

static void vkc__lane_name(uint32_t lane, char *out, size_t size)
{
    uint32_t sub = lane % VKC_SUBLANES;
    char extra[16] = "";
    if (sub)
        snprintf(extra, sizeof(extra), " (%u)", sub + 1);
    if (lane >= VKC_LANE_GPU)
        snprintf(out, size, "%s%s", vkc__gpu_lane_names[((lane - VKC_LANE_GPU) / VKC_SUBLANES) & 3],
                 extra);
    else
        snprintf(out, size, "cpu thread %u%s", lane / VKC_SUBLANES, extra);
}

typedef struct vkc__lanes {
    uint32_t *of;   /* lane of each event */
    uint32_t *used; /* distinct lanes, sorted */
    uint32_t used_count;
} vkc__lanes;

static int vkc__cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Caller holds the lock; events sorted by start. */
static bool vkc__assign_lanes(const vkc__pstate *st, vkc__lanes *l)
{
    memset(l, 0, sizeof(*l));
    l->of = vkc__malloc(((size_t)st->count + 1) * sizeof(uint32_t));
    l->used = vkc__malloc(((size_t)st->count + 1) * sizeof(uint32_t));
    /* The end of the last event of each lane, by (base, sub) in a small
     * table keyed by base. */
    typedef struct {
        uint32_t base;
        uint64_t end[VKC_SUBLANES];
    } slot;
    uint32_t cap = 64, n = 0;
    slot *slots = vkc__calloc(cap, sizeof(*slots));
    if (!l->of || !l->used || !slots) {
        vkc__free(slots);
        return false;
    }
    for (uint32_t i = 0; i < st->count; ++i) {
        const vkc__pevent *e = &st->ev[i];
        uint32_t base = vkc__lane_base(e), s = 0;
        while (s < n && slots[s].base != base)
            ++s;
        if (s == n) {
            if (n == cap) {
                slot *p = vkc__realloc(slots, 2 * cap * sizeof(*p));
                if (!p) {
                    vkc__free(slots);
                    return false;
                }
                slots = p;
                cap *= 2;
            }
            memset(&slots[n], 0, sizeof(slots[n]));
            slots[n++].base = base;
        }
        uint32_t sub = 0;
        while (sub < VKC_SUBLANES - 1 && e->t0 < slots[s].end[sub])
            ++sub;
        if (e->t1 > slots[s].end[sub])
            slots[s].end[sub] = e->t1;
        l->of[i] = base + sub;
        l->used[i] = base + sub;
    }
    vkc__free(slots);
    qsort(l->used, st->count, sizeof(uint32_t), vkc__cmp_u32);
    for (uint32_t i = 0; i < st->count; ++i)
        if (!l->used_count || l->used[l->used_count - 1] != l->used[i])
            l->used[l->used_count++] = l->used[i];
    return true;
}

static void vkc__lanes_free(vkc__lanes *l)
{
    vkc__free(l->of);
    vkc__free(l->used);
}

static void vkc__json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static const char *vkc__clock_name(vkc_profile_clock c)
{
    return c == VKC_PROFILE_CLOCK_CALIBRATED   ? "calibrated (VK_EXT_calibrated_timestamps)"
           : c == VKC_PROFILE_CLOCK_CORRELATED ? "correlated (one submitted timestamp)"
                                               : "none";
}

/* Caller holds the lock; events sorted. */
static vkc_result vkc__write_trace_locked(vkc_context *ctx, vkc__pstate *st, const char *path)
{
    vkc__lanes l;
    vkc_profile_stat *rows = NULL;
    uint32_t nrows = 0;
    if (!vkc__assign_lanes(st, &l)) {
        vkc__lanes_free(&l);
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "trace lanes");
    }
    vkc_result r = vkc__stats_locked(ctx, st, &rows, &nrows);
    if (r < 0) {
        vkc__lanes_free(&l);
        return r;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        vkc__lanes_free(&l);
        vkc__free(rows);
        return VKC_FAIL(ctx, VKC_ERROR_IO, "profile trace: cannot open \"%s\" for writing", path);
    }
    vkc_profile_info info;
    vkc__info_locked(ctx, st, &info);
    const uint64_t origin = st->count ? st->ev[0].t0 : 0;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    char pname[300];
    snprintf(pname, sizeof(pname), "vkc on %s", ctx->info.name);
    vkc__json_string(f, pname);
    fprintf(f, "}}");
    for (uint32_t i = 0; i < l.used_count; ++i) {
        char name[64];
        vkc__lane_name(l.used[i], name, sizeof(name));
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{"
                "\"name\":\"%s\"}}",
                l.used[i], name);
        fprintf(f,
                ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{"
                "\"sort_index\":%u}}",
                l.used[i], i);
    }
    for (uint32_t i = 0; i < st->count; ++i) {
        const vkc__pevent *e = &st->ev[i];
        fprintf(f, ",\n{\"name\":");
        vkc__json_string(f, st->labels[e->label]);
        fprintf(f,
                ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                "\"args\":{\"submission\":%" PRIu64 ",\"gpu\":%s,\"start_ns\":%" PRIu64 "}}",
                vkc_profile_kind_string(e->kind), l.of[i], (double)(e->t0 - origin) / 1000.0,
                (double)(e->t1 - e->t0) / 1000.0, e->value,
                vkc__kind_gpu(e->kind) ? "true" : "false", e->t0);
    }
    fprintf(f, "\n],\n\"otherData\":{\"vkc_version\":\"%s\",\"device\":", VKC_VERSION_STRING);
    vkc__json_string(f, ctx->info.name);
    fprintf(f,
            ",\"clock\":\"%s\",\"clock_error_ns\":%" PRIu64 ",\"origin_ns\":%" PRIu64
            ",\"events\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"submissions\":%" PRIu64
            ",\"window_ns\":%" PRIu64 ",\"gpu_busy_ns\":%" PRIu64 ",\"utilisation\":%.6f,"
            "\"status\":\"%s\"},\n\"vkcStats\":[",
            vkc__clock_name(info.clock), info.clock_error_ns, origin, info.events, info.dropped,
            info.submissions, info.window_ns, info.gpu_busy_ns, info.utilisation,
            vkc_result_string(info.status));
    for (uint32_t i = 0; i < nrows; ++i) {
        const vkc_profile_stat *s = &rows[i];
        fprintf(f, "%s\n{\"kind\":\"%s\",\"label\":", i ? "," : "",
                vkc_profile_kind_string(s->kind));
        vkc__json_string(f, s->label);
        fprintf(f,
                ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
                ",\"max_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64 ",\"p95_ns\":%" PRIu64
                ",\"p99_ns\":%" PRIu64 "}",
                s->count, s->total_ns, s->min_ns, s->max_ns, s->p50_ns, s->p95_ns, s->p99_ns);
    }
    fprintf(f, "]}\n");
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    vkc__lanes_free(&l);
    vkc__free(rows);
    if (bad)
        return VKC_FAIL(ctx, VKC_ERROR_IO, "profile trace: writing \"%s\" failed", path);
    return VKC_SUCCESS;
}

static void vkc__xml_string(FILE *f, const char *s)
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
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
    }
}

/* A step of 1, 2 or 5 x 10^k ns giving at most about `ticks` ticks. */
static uint64_t vkc__nice_step(uint64_t span, unsigned ticks)
{
    uint64_t step = 1;
    for (;;) {
        static const uint64_t m[3] = {1, 2, 5};
        for (int i = 0; i < 3; ++i)
            if (span / (step * m[i]) <= ticks)
                return step * m[i];
        step *= 10;
    }
}

static void vkc__fmt_ns(char *out, size_t size, uint64_t ns)
{
    if (ns >= 1000000000ull)
        snprintf(out, size, "%.3g s", (double)ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(out, size, "%.3g ms", (double)ns / 1e6);
    else if (ns >= 1000ull)
        snprintf(out, size, "%.3g us", (double)ns / 1e3);
    else
        snprintf(out, size, "%" PRIu64 " ns", ns);
}

/* Caller holds the lock; events sorted. */
static vkc_result vkc__write_svg_locked(vkc_context *ctx, vkc__pstate *st, const char *path)
{
    vkc__lanes l;
    if (!vkc__assign_lanes(st, &l)) {
        vkc__lanes_free(&l);
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "picture lanes");
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        vkc__lanes_free(&l);
        return VKC_FAIL(ctx, VKC_ERROR_IO, "profile picture: cannot open \"%s\" for writing", path);
    }
    vkc_profile_info info;
    vkc__info_locked(ctx, st, &info);
    const double left = 170, plot = 1400, row = 22, top = 50;
    uint64_t lo = st->count ? st->ev[0].t0 : 0, hi = lo;
    for (uint32_t i = 0; i < st->count; ++i)
        hi = VKC_MAX(hi, st->ev[i].t1);
    const uint64_t span = hi > lo ? hi - lo : 1;
    const double height = top + row * l.used_count + 40;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            left + plot + 20, height);
    char wnd[32], busy[32];
    vkc__fmt_ns(wnd, sizeof(wnd), info.window_ns);
    vkc__fmt_ns(busy, sizeof(busy), info.gpu_busy_ns);
    fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\">vkc profile: ");
    vkc__xml_string(f, ctx->info.name);
    fprintf(f,
            " &#8212; %" PRIu64 " events, %" PRIu64 " submissions, GPU busy %s of %s "
            "(utilisation %.1f%%), clock %s</text>\n",
            info.events, info.submissions, busy, wnd, 100.0 * info.utilisation,
            info.clock == VKC_PROFILE_CLOCK_CALIBRATED   ? "calibrated"
            : info.clock == VKC_PROFILE_CLOCK_CORRELATED ? "correlated"
                                                         : "none");
    /* Time axis. */
    const uint64_t step = vkc__nice_step(span, 10);
    for (uint64_t t = 0; t <= span; t += step) {
        double x = left + plot * (double)t / (double)span;
        char lab[32];
        vkc__fmt_ns(lab, sizeof(lab), t);
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                "<text x=\"%.2f\" y=\"%.0f\" fill=\"#666\">%s</text>\n",
                x, top - 8, x, top + row * l.used_count, x + 2, top - 12, lab);
    }
    for (uint32_t i = 0; i < l.used_count; ++i) {
        char name[64];
        vkc__lane_name(l.used[i], name, sizeof(name));
        fprintf(f, "<text x=\"10\" y=\"%.1f\">%s</text>\n", top + row * i + row * 0.7, name);
    }
    for (uint32_t i = 0; i < st->count; ++i) {
        const vkc__pevent *e = &st->ev[i];
        uint32_t r = 0;
        while (r < l.used_count && l.used[r] != l.of[i])
            ++r;
        double x = left + plot * (double)(e->t0 - lo) / (double)span;
        double w = plot * (double)(e->t1 - e->t0) / (double)span;
        const char *label = st->labels[e->label];
        unsigned hue = (unsigned)(vkc__label_hash(label) % 360);
        char dur[32];
        vkc__fmt_ns(dur, sizeof(dur), e->t1 - e->t0);
        fprintf(f,
                "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                "fill=\"hsl(%u,60%%,%s)\" stroke=\"#333\" stroke-width=\"0.3\"><title>%s ",
                x, top + row * r + 2, w < 0.5 ? 0.5 : w, row - 4, hue,
                e->kind == VKC_PROFILE_SUBMISSION ? "85%" : "60%",
                vkc_profile_kind_string(e->kind));
        vkc__xml_string(f, label);
        fprintf(f, ": %s (submission %" PRIu64 ")</title></rect>\n", dur, e->value);
        if (w > 60) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"9\">", x + 2,
                    top + row * r + row * 0.65);
            vkc__xml_string(f, label);
            fprintf(f, "</text>\n");
        }
    }
    fprintf(f, "</svg>\n");
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    vkc__lanes_free(&l);
    if (bad)
        return VKC_FAIL(ctx, VKC_ERROR_IO, "profile picture: writing \"%s\" failed", path);
    return VKC_SUCCESS;
}

/* Settle what is pending, then write one export, under the profile lock. */
static vkc_result vkc__write_export(vkc_context *ctx, const char *path, const char *what,
                                    vkc_result (*write)(vkc_context *, vkc__pstate *, const char *))
{
    VKC_CHECK_PROFILE(ctx, st);
    VKC_RETURN_IF(!path, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: path is NULL", what);
    pthread_mutex_lock(&st->lock);
    vkc__settle_locked(ctx, st);
    vkc_result r = write(ctx, st, path);
    pthread_mutex_unlock(&st->lock);
    return r;
}

vkc_result vkc_profile_write_trace(vkc_context *ctx, const char *path)
{
    return vkc__write_export(ctx, path, "vkc_profile_write_trace", vkc__write_trace_locked);
}

vkc_result vkc_profile_write_svg(vkc_context *ctx, const char *path)
{
    return vkc__write_export(ctx, path, "vkc_profile_write_svg", vkc__write_svg_locked);
}

/* The trace at json_path and the picture beside it (.json -> .svg). */
vkc_result vkc__write_both(vkc_context *ctx, const char *json_path)
{
    vkc__pstate *st = ctx->profile_state;
    char svg[640];
    size_t len = strlen(json_path);
    bool json = len > 5 && !strcmp(json_path + len - 5, ".json");
    snprintf(svg, sizeof(svg), "%.*s.svg", (int)(json ? len - 5 : len), json_path);
    pthread_mutex_lock(&st->lock);
    vkc__settle_locked(ctx, st);
    vkc_result r = vkc__write_trace_locked(ctx, st, json_path);
    if (r >= 0)
        r = vkc__write_svg_locked(ctx, st, svg);
    pthread_mutex_unlock(&st->lock);
    return r;
}
