/* Many dispatches per submit: chain, independent, levels, descriptors, record. */
#include "bench.h"
#include "bench_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- chain ------------------------------------------------------------------- */

typedef enum { BAR_MEMORY, BAR_BUFFER, BAR_SYNC2, BAR_COUNT } bar_kind;
static const char *bar_names[] = {"raw-barrier-memory", "raw-barrier-buffer", "raw-barrier-sync2"};

static void cmd_bar(raw *r, VkCommandBuffer cb, bar_kind kind, VkBuffer buf)
{
    if (kind == BAR_MEMORY) {
        raw_cmd_barrier(r, cb);
    } else if (kind == BAR_BUFFER) {
        VkBufferMemoryBarrier bb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                    .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                    .dstAccessMask =
                                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                                    .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                    .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                    .buffer = buf,
                                    .size = VK_WHOLE_SIZE};
        r->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, 1, &bb, 0, NULL);
    } else {
        VkMemoryBarrier2 mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                               .srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                               .srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                               .dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                               .dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
        VkDependencyInfo di = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                               .memoryBarrierCount = 1,
                               .pMemoryBarriers = &mb};
        r->vkCmdPipelineBarrier2(cb, &di);
    }
}

typedef struct chain_rec {
    raw_tiny *t;
    bar_kind kind;
    uint32_t K;
    bool bound; /* pipeline, descriptors and constants once: then barrier + dispatch */
} chain_rec;

static void record_chain(raw *r, VkCommandBuffer cb, void *user)
{
    const chain_rec *c = user;
    for (uint32_t j = 0; j < c->K; ++j) {
        if (j)
            cmd_bar(r, cb, c->kind, c->t->x.buf);
        if (j && c->bound)
            r->vkCmdDispatch(cb, 1, 1, 1);
        else
            raw_cmd_dispatch(r, cb, &c->t->p, &c->t->a, c->t->push, 1, 1);
    }
}

/* GPU time of a recorded vkc sequence per submit, as raw_time_replay's:
 * a TOP_OF_PIPE timestamp in a raw submission just before it and a
 * BOTTOM_OF_PIPE one just after (r shares vctx's queue), median over n
 * submits, apart from the timed ones. The two submission boundaries are in
 * it too. false where r has no timestamps. */
static bool vkc_seq_gpu(raw *r, vkc_context *vctx, vkc_seq *s, uint32_t n, double *out_ns,
                        uint32_t *submits)
{
    *submits = 0;
    VkCommandBuffer cb[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    VkFence fence = VK_NULL_HANDLE;
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    double *ns = calloc(n, sizeof(double));
    bool ok = r->queries && ns && raw_new_cb(r, &cb[0]) && raw_new_cb(r, &cb[1]) &&
              raw_ok(r, r->vkCreateFence(r->dev, &fci, NULL, &fence), "vkCreateFence");
    for (int k = 0; ok && k < 2; ++k) {
        ok = raw_ok(r, r->vkBeginCommandBuffer(cb[k], &bi), "vkBeginCommandBuffer");
        if (ok && k == 0)
            raw_cmd_ts_begin(r, cb[k]);
        else if (ok)
            raw_cmd_ts_end(r, cb[k]);
        ok = ok && raw_ok(r, r->vkEndCommandBuffer(cb[k]), "vkEndCommandBuffer");
    }
    for (uint32_t i = 0; ok && i < n; ++i) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb[0]};
        vkc_queue_lock(vctx);
        VkResult vr = r->vkQueueSubmit(r->h.queue, 1, &si, VK_NULL_HANDLE);
        vkc_queue_unlock(vctx);
        vkc_ticket t;
        ok = raw_ok(r, vr, "vkQueueSubmit") && vkc_seq_submit(s, &t) >= 0;
        *submits += ok;
        ok = ok && raw_submit_wait(r, cb[1], fence, true) && vkc_wait(vctx, t, UINT64_MAX) >= 0 &&
             raw_ts_read(r, &ns[i]);
    }
    if (ok)
        *out_ns = bench_median(ns, n);
    if (fence)
        r->vkDestroyFence(r->dev, fence, NULL);
    for (int k = 0; k < 2; ++k)
        if (cb[k])
            r->vkFreeCommandBuffers(r->dev, r->pool, 1, &cb[k]);
    free(ns);
    return ok;
}

/* One row of the chain scenario at one K: a raw barrier form (ctx NULL),
 * recorded once and replayed, its fence spun on, or a vkc sequence of the
 * same K dispatches (x += 1 each) on ctx. The rows of one K take turns in
 * chunks (bench_turns), so that a drift of the GPU's clocks or a burst of
 * other load over a row's seconds is shared by all of them.
 *
 * Each row has `places` fixtures (its own buffer, kernel or pipeline and
 * recording each), its chunks going round them. On the H100 one fixture's
 * K = 10000 chain ran at one of a few levels 2-4% apart, the same GPU
 * work included (vkc-seq against vkc-seq-spinning), and which row got the
 * fast one changed from run to run (BENCHMARKS.md, twenty-seventh
 * session): a row of one fixture measures where its memory landed as much
 * as its barrier. VKC_BENCH_CHAIN_PLACES sets how many (1 to
 * CHAIN_PLACES_MAX, default CHAIN_PLACES). */
#define CHAIN_PLACES 4u
#define CHAIN_PLACES_MAX 8u
typedef struct chain_row {
    const char *name;
    const char *variant, *base; /* vkc: the record's names, where not "name K=" */
    bar_kind kind;              /* raw */
    vkc_context *ctx;           /* NULL: raw */
    bench_rec rec;
    bench_times tm;
    uint32_t places, chunks;        /* fixtures; chunks run (the next one's fixture) */
    raw_tiny rt[CHAIN_PLACES_MAX];  /* raw: each cb a recording, timestamps either side */
    bench_tiny t[CHAIN_PLACES_MAX]; /* vkc: each with its sequence s */
    vkc_seq *s[CHAIN_PLACES_MAX];
    uint32_t ran_at[CHAIN_PLACES_MAX]; /* iterations each fixture ran (warm-ups included) */
    uint8_t *place_of;                 /* each kept sample's fixture */
    vkc_seq_info info;
    uint32_t kept;     /* samples kept */
    double *submit_ns; /* vkc: each kept round's vkc_seq_submit call */
    uint64_t spare0;   /* vkc: the context's spare_submits before the rounds */
    bool skipped;      /* the form does not apply here (err says why) */
    char err[512];     /* non-empty: the row failed or is skipped (its chunks stop) */
} chain_row;

/* VKC_BENCH_CHAIN_PLACES, else CHAIN_PLACES (said once on stderr where it
 * is set to something else than 1 to CHAIN_PLACES_MAX). */
static uint32_t chain_places(void)
{
    const char *v = getenv("VKC_BENCH_CHAIN_PLACES");
    char *end = NULL;
    const long n = v ? strtol(v, &end, 10) : 0;
    static bool said;
    if (v && (end == v || *end || n < 1 || n > (long)CHAIN_PLACES_MAX)) {
        if (!said)
            fprintf(stderr, "vkc-bench: VKC_BENCH_CHAIN_PLACES=%s is not 1 to %u: %u fixtures\n", v,
                    CHAIN_PLACES_MAX, CHAIN_PLACES);
        said = true;
        return CHAIN_PLACES;
    }
    return v ? (uint32_t)n : CHAIN_PLACES;
}

static void chain_open(bench *b, raw *r, chain_row *row, uint32_t K, uint32_t iters)
{
    char err[512] = "", variant[64], base[96];
    row->places = chain_places();
    vkc_context *vctx = row->ctx;
    snprintf(variant, sizeof(variant), "%s K=%u", vctx ? row->name : bar_names[row->kind], K);
    snprintf(base, sizeof(base), "chain/%s K=%u", bar_names[0], K);
    row->rec =
        bench_rec_init(b, row->variant ? row->variant : variant, row->base ? row->base : base);
    bench_rec_sweep(&row->rec, K, "K");
    MTRY(bench_times_init(&row->tm, 0, iters));
    MTRY(row->place_of = calloc(iters, 1));
    if (vctx)
        MTRY(row->submit_ns = calloc(iters, sizeof(double)));
    if (!vctx) {
        if (row->kind == BAR_SYNC2 && !r->vkCmdPipelineBarrier2) {
            snprintf(row->err, sizeof(row->err), "synchronization2 not enabled");
            row->skipped = true;
            return;
        }
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        for (uint32_t p = 0; p < row->places; ++p) {
            raw_tiny *t = &row->rt[p];
            RTRY(raw_tiny_init(r, t, 0) &&
                 raw_ok(r, r->vkBeginCommandBuffer(t->cb, &bi), "vkBeginCommandBuffer"));
            raw_cmd_ts_begin(r, t->cb);
            record_chain(r, t->cb, &(chain_rec){t, row->kind, K, false});
            raw_cmd_ts_end(r, t->cb);
            RTRY(raw_ok(r, r->vkEndCommandBuffer(t->cb), "vkEndCommandBuffer"));
        }
        row->tm.has_gpu = r->queries != VK_NULL_HANDLE;
        row->rec.barriers = K - 1;
    } else {
        for (uint32_t p = 0; p < row->places; ++p) {
            VTRY(bench_tiny_init(vctx, &row->t[p], 0));
            VTRY(bench_seq_record(vctx, &row->t[p].d, 1, K, &row->s[p]));
        }
        VTRY(vkc_seq_info_get(row->s[0], &row->info));
        row->rec.barriers = row->info.barriers;
        vkc_stats st;
        VTRY(vkc_context_stats(vctx, &st));
        row->spare0 = st.spare_submits;
    }
    return;
fail:
    snprintf(row->err, sizeof(row->err), "%s", err);
}

/* A chunk on the row's next fixture: one warm-up replay (the row before it
 * ran other work), then n timed ones, each submitted and waited. */
static void chain_chunk(void *user, void *p, uint32_t n)
{
    raw *r = user;
    chain_row *row = p;
    char err[512] = "";
    vkc_context *vctx = row->ctx;
    if (row->err[0])
        return;
    const uint32_t at = row->chunks++ % row->places;
    for (uint32_t i = 0; i <= n && row->kept < row->tm.iters; ++i, ++row->ran_at[at]) {
        const uint64_t t0 = bench_now_ns();
        uint64_t ts = t0;
        if (!vctx) {
            RTRY(raw_submit_wait(r, row->rt[at].cb, row->rt[at].fence, true));
        } else {
            vkc_ticket tk;
            VTRY(vkc_seq_submit(row->s[at], &tk));
            ts = bench_now_ns();
            VTRY(vkc_wait(vctx, tk, UINT64_MAX));
        }
        const uint64_t t1 = bench_now_ns();
        if (!i)
            continue;
        if (vctx)
            row->submit_ns[row->kept] = (double)(ts - t0);
        if (row->tm.has_gpu && !raw_ts_read(r, &row->tm.gpu[row->kept]))
            row->tm.has_gpu = false;
        row->place_of[row->kept] = (uint8_t)at;
        row->tm.wall[row->kept++] = (double)(t1 - t0);
    }
    return;
fail:
    snprintf(row->err, sizeof(row->err), "%s", err);
}

/* Notes each fixture's p50 wall ns per dispatch, where there are several. */
static void chain_note_places(chain_row *row, uint32_t K)
{
    char list[8 * (CHAIN_PLACES_MAX + 1)] = "";
    double *ns = row->places > 1 ? malloc(row->kept * sizeof(double)) : NULL;
    for (uint32_t p = 0; ns && p < row->places; ++p) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < row->kept; ++i)
            if (row->place_of[i] == p)
                ns[m++] = row->tm.wall[i];
        const size_t len = strlen(list);
        snprintf(list + len, sizeof(list) - len, "%s%.0f", p ? " " : "",
                 m ? bench_median(ns, m) / K : 0.0);
    }
    if (ns)
        bench_note(&row->rec, "%u fixtures, p50 ns/dispatch each: %s", row->places, list);
    free(ns);
}

/* The row's checks (x = K per replay), its record (noting the chunks it
 * took turns in, turns > 0), its fixture freed; a vkc row on the raw
 * context's queue also gets its GPU time from raw timestamps either side
 * of more submits (vkc_seq_gpu). */
static void chain_close(bench *b, raw *r, chain_row *row, uint32_t K, uint32_t turns)
{
    char err[512] = "";
    vkc_context *vctx = row->ctx;
    bench_rec *rec = &row->rec;
    if (row->skipped) {
        bench_skip(b, rec->variant, row->err);
        goto done;
    }
    if (row->err[0]) {
        snprintf(err, sizeof(err), "%s", row->err);
        goto fail;
    }
    row->tm.iters = row->kept;
    uint32_t ran = 0; /* iterations run, warm-ups included */
    for (uint32_t p = 0; p < row->places; ++p)
        ran += row->ran_at[p];
    /* Each fixture holds what it ran; the first wrong one's note stays. */
    for (uint32_t p = 0; p < row->places && rec->ok; ++p) {
        if (!vctx)
            RTRY(raw_tiny_check(r, &row->rt[p], row->ran_at[p] * K, rec));
        else
            VTRY(bench_tiny_check(&row->t[p], row->ran_at[p] * K, rec));
    }
    if (vctx) {
        /* Round trips: a long sequence's plain copy is done before the next
         * submit, which then never takes the spare (vkc__seq_plain). */
        vkc_stats st;
        VTRY(vkc_context_stats(vctx, &st));
        bench_note(rec, "%llu of %u submits took the spare",
                   (unsigned long long)(st.spare_submits - row->spare0), ran);
        if (rec->ok && row->info.barriers < K - 1) {
            rec->ok = false;
            snprintf(rec->note, sizeof(rec->note), "only %u barriers for %u dependent dispatches",
                     row->info.barriers, K);
        }
        if (r && rec->ok && vctx == r->ctx) {
            double gpu_ns = 0;
            uint32_t more = 0;
            const uint32_t gpu_n = bench_n(b, 5, 20);
            bool got = vkc_seq_gpu(r, vctx, row->s[0], gpu_n, &gpu_ns, &more);
            VTRY(vkc_finish(vctx));
            if (got)
                rec->gpu_per_dispatch_ns = gpu_ns / K;
            /* each extra submit added K more, on the first fixture */
            VTRY(bench_tiny_check(&row->t[0], (row->ran_at[0] + more) * K, rec));
            if (got)
                bench_note(rec, "GPU ns: timestamps in raw submits either side, %u more submits",
                           gpu_n);
        }
    }
    bench_times_rec(&row->tm, rec, K);
    if (vctx) /* where the wall time beyond the GPU's goes: the submit call or the wait */
        bench_note(rec, "submit call p50 %.1f us", bench_median(row->submit_ns, row->kept) / 1e3);
    if (turns)
        bench_note(rec, "rows take turns: %u chunks", turns);
    chain_note_places(row, K);
fail:
    bench_emit(b, rec, err);
done:
    bench_times_free(&row->tm);
    free(row->submit_ns);
    free(row->place_of);
    for (uint32_t p = 0; p < row->places; ++p) {
        if (!vctx) {
            raw_tiny_finish(r, &row->rt[p]);
        } else {
            vkc_seq_destroy(row->s[p]);
            bench_tiny_finish(&row->t[p]);
        }
    }
}

/* The rows of one K: opened, their chunks taking turns (bench_turns),
 * closed in the table's order. */
static void chain_rows(bench *b, raw *r, chain_row *rows, uint32_t n, uint32_t K, uint32_t iters)
{
    for (uint32_t i = 0; i < n; ++i)
        chain_open(b, r, &rows[i], K, iters);
    const uint32_t rounds = bench_turns(rows, sizeof(*rows), n, iters, chain_chunk, r);
    for (uint32_t i = 0; i < n; ++i)
        chain_close(b, r, &rows[i], K, n > 1 ? rounds : 0);
}

/* The cooperative chain: K dependent steps in one vkc_seq_dispatch_cooperative,
 * step s writing dst[i] = src[(i + 1) % n] + 1 from the other buffer, so
 * each step reads a neighbouring workgroup's result of the step before. n
 * is TINY_N per SM (one workgroup of TINY_WG per SM, the grid of the raw
 * persistent-kernel probe); TINY_N where the SM count is unknown. */
static const char *coop_chain_glsl =
    "#version 450\n"
    "#include \"vkc_grid.glsl\"\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 1) coherent buffer A { uint a[]; };\n"
    "layout(set = 0, binding = 2) coherent buffer B { uint b[]; };\n"
    "layout(push_constant) uniform P { uint n; };\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  VKC_GRID_STEPS(s) {\n"
    "    for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {\n"
    "      uint j = (i + 1u) % n;\n"
    "      if ((s & 1u) == 0u) b[i] = a[j] + 1u; else a[i] = b[j] + 1u;\n"
    "    }\n"
    "    vkc_grid_barrier();\n"
    "  }\n"
    "}\n";

/* The barrier variants that scenario gridbar measures (issue 13): the
 * row's suffix, the raw kernel's spec constant 1 (persist_chain.comp) and
 * the same barrier's defines for vkc_grid.glsl (src/glsl.c). */
typedef struct gridbar_variant {
    const char *suffix;
    uint32_t raw_spec;
    const char *defines[2];
} gridbar_variant;
static const gridbar_variant gridbar_variants[] = {
    {"", 0, {"VKC_GRID_BARRIER=0", NULL}}, /* the first barrier; vkc's default is 56 */
    {"+split-lines", 1, {"VKC_GRID_BARRIER=1", NULL}},
    {"+relaxed-spin", 2, {"VKC_GRID_BARRIER=2", NULL}},
    {"+both", 3, {"VKC_GRID_BARRIER=3", NULL}},
    {"+tree", 7, {"VKC_GRID_BARRIER=7", NULL}},
    {"+tree16", 7 | 16u << 8, {"VKC_GRID_BARRIER=7", "VKC_GRID_FANIN=16u"}},
    {"+wg-scope", 8, {"VKC_GRID_BARRIER=8", NULL}},
    {"+both+wg-scope", 11, {"VKC_GRID_BARRIER=11", NULL}},
    {"+tree+wg-scope", 15, {"VKC_GRID_BARRIER=15", NULL}},
    {"+flip", 16, {"VKC_GRID_BARRIER=16", NULL}},
    {"+flip+relaxed", 18, {"VKC_GRID_BARRIER=18", NULL}},
    {"+flip+wg-scope", 24, {"VKC_GRID_BARRIER=24", NULL}},
    {"+flip+relaxed+wg-scope", 26, {"VKC_GRID_BARRIER=26", NULL}},
    {"+flip+wg-scope+last-goes", 56, {"VKC_GRID_BARRIER=56", NULL}},
    {"+flip+relaxed+wg-scope+last-goes", 58, {"VKC_GRID_BARRIER=58", NULL}},
};

static uint32_t gridbar_define_count(const gridbar_variant *v)
{
    return v->defines[0] ? (v->defines[1] ? 2 : 1) : 0;
}

static void bench_vkc_coop_chain(bench *b, uint32_t K, uint32_t iters, const char *baseline,
                                 const gridbar_variant *gv)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "vkc-cooperative%s K=%u", gv->suffix, K);
    bench_times tm = {0};
    vkc_kernel *k = NULL;
    vkc_buffer *buf[2] = {NULL, NULL};
    vkc_seq *s = NULL;
    uint32_t *host = NULL;
    bench_rec rec = bench_rec_init(b, variant, baseline);
    /* Even K: every submission ends in a, where the next one starts. */
    K += K & 1;
    const uint32_t n = TINY_N * (b->dev->sm_count ? b->dev->sm_count : 1);
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), iters));
    MTRY(host = malloc((size_t)n * 4));
    VTRY(vkc_kernel_create_glsl(vctx,
                                &(vkc_glsl_desc){.source = coop_chain_glsl,
                                                 .name = "coop-chain",
                                                 .workgroup_size = TINY_WG,
                                                 .defines = gv->defines,
                                                 .define_count = gridbar_define_count(gv)},
                                &k));
    for (int i = 0; i < 2; ++i)
        VTRY(bench_buffer(vctx, (uint64_t)n * 4, i ? "b" : "a", &buf[i]));
    VTRY(vkc_seq_create(vctx, &(vkc_seq_desc){.name = "coop-chain"}, &s));
    vkc_arg args[2] = {{.buffer = buf[0], .access = VKC_ACCESS_READ_WRITE},
                       {.buffer = buf[1], .access = VKC_ACCESS_READ_WRITE}};
    vkc_coop_info info;
    VTRY(vkc_seq_dispatch_cooperative(
        s,
        &(vkc_dispatch_desc){
            .kernel = k, .args = args, .arg_count = 2, .push = &n, .push_size = 4, .count = n},
        &(vkc_coop_desc){.steps = K}, &info));
    VTRY(vkc_seq_end(s));
    for (uint32_t i = 0; i < tm.warm + tm.iters; ++i) {
        vkc_ticket tk;
        uint64_t t0 = bench_now_ns();
        VTRY(vkc_seq_submit(s, &tk));
        VTRY(vkc_wait(vctx, tk, UINT64_MAX));
        bench_times_put(&tm, i, (double)(bench_now_ns() - t0));
    }
    bench_rec_sweep(&rec, K, "K");
    vkc_seq_info si;
    VTRY(vkc_seq_info_get(s, &si));
    rec.barriers = si.barriers;
    VTRY(vkc_buffer_download(buf[0], 0, host, (uint64_t)n * 4));
    rec.ok = bench_check_all(host, n, (tm.warm + tm.iters) * K, rec.note, sizeof(rec.note));
    bench_note(&rec, "%s form, %u workgroups of %u, %u elements (%s)",
               info.cooperative ? "cooperative" : "FALLBACK", info.groups[0], TINY_WG, n,
               info.reason);
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(buf[1]);
    vkc_buffer_destroy(buf[0]);
    vkc_kernel_destroy(k);
    free(host);
}

typedef struct persist_rec {
    raw_pipe *p;
    raw_args *a;
    uint32_t push[2], groups;
} persist_rec;

static void record_persist(raw *r, VkCommandBuffer cb, void *user)
{
    const persist_rec *c = user;
    raw_cmd_dispatch(r, cb, c->p, c->a, c->push, c->groups, 1);
}

/* The raw persistent kernel: the same K steps in one dispatch of one
 * workgroup of TINY_WG per SM. Where the SM count is unknown (lavapipe) one
 * workgroup of TINY_N, one element per invocation, to check it: lavapipe
 * ends an invocation's loops after 65535 iterations in all, which K=10000
 * steps of eight elements each (a workgroup of 8) ran past. */
static void raw_persist_chain(bench *b, raw *r, uint32_t K, uint32_t iters, const char *baseline,
                              const gridbar_variant *gv)
{
    char err[512] = "", variant[64];
    snprintf(variant, sizeof(variant), "raw-persistent%s K=%u", gv->suffix, K);
    bench_times tm = {0};
    raw_pipe p = {0};
    raw_buf st = {0}, buf[2] = {{0}, {0}};
    uint32_t *host = NULL;
    bench_rec rec = bench_rec_init(b, variant, baseline);
    K += K & 1; /* even: every submission ends in a, where the next one starts */
    const uint32_t sms = b->dev->sm_count;
    const uint32_t n = TINY_N * (sms ? sms : 1);
    uint32_t wg = sms ? TINY_WG : TINY_N, groups = sms ? sms : 1;
    /* VKC_GRIDBAR_WG (experiments, where the SM count is known): the same
     * elements over fewer, wider workgroups, i.e. fewer arrivals. */
    const char *wide = getenv("VKC_GRIDBAR_WG");
    if (sms && wide && atoi(wide) > 0 && (uint32_t)atoi(wide) <= b->dev->max_workgroup_size[0]) {
        wg = (uint32_t)atoi(wide);
        groups = (n + wg - 1) / wg;
    }
    /* Room for any variant's lines: at most one leaf per workgroup. */
    const uint32_t state_words = 64 + 32 * groups;
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), iters));
    MTRY(host = calloc(n > state_words ? n : state_words, 4));
    RTRY(raw_pipe_create(r, BENCH_SPV(persist_chain), 3, 8, wg, gv->raw_spec, &p));
    RTRY(raw_buf_create(r, state_words * 4, false, &st) &&
         raw_upload(r, &st, 0, host, state_words * 4));
    for (int i = 0; i < 2; ++i)
        RTRY(raw_buf_create(r, (uint64_t)n * 4, false, &buf[i]) &&
             raw_upload(r, &buf[i], 0, host, (uint64_t)n * 4));
    raw_args a = {.b = {{st.buf, 0, VK_WHOLE_SIZE},
                        {buf[0].buf, 0, VK_WHOLE_SIZE},
                        {buf[1].buf, 0, VK_WHOLE_SIZE}},
                  .n = 3};
    RTRY(raw_prepare(r, &p, &a));
    RTRY(raw_time_replay(r, record_persist, &(persist_rec){&p, &a, {n, K}, groups}, &tm));
    bench_rec_sweep(&rec, K, "K");
    rec.barriers = 0;
    RTRY(raw_download(r, &buf[0], 0, host, (uint64_t)n * 4));
    rec.ok = bench_check_all(host, n, (tm.warm + tm.iters) * K, rec.note, sizeof(rec.note));
    bench_note(&rec, "%u workgroups of %u, %u elements%s", groups, wg, n,
               sms ? "" : " (no SM count: one workgroup)");
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    raw_buf_destroy(r, &buf[1]);
    raw_buf_destroy(r, &buf[0]);
    raw_buf_destroy(r, &st);
    raw_pipe_destroy(r, &p);
    free(host);
}

void bench_vkc_chain(bench *b, vkc_context *vctx, const char *variant, uint32_t K,
                     const char *baseline)
{
    chain_row row = {.ctx = vctx, .variant = variant, .base = baseline};
    chain_rows(b, NULL, &row, 1, K, bench_n(b, 20, 200));
}

/* The long chain as vkc recorded it before the one-copy rule for long
 * sequences: eight recorded copies in turn (VKC_SEQ_RING=8), so the H200
 * shows what the copies cost beside vkc-seq. */
static void vkc_chain_ring8(bench *b, uint32_t K)
{
    char v[64], base[96];
    snprintf(v, sizeof(v), "vkc-ring8 K=%u", K);
    snprintf(base, sizeof(base), "chain/%s K=%u", bar_names[0], K);
    setenv("VKC_SEQ_RING", "8", 1);
    vkc_context *c = bench_context_or_fail(b, &(vkc_context_desc){0}, v, NULL);
    unsetenv("VKC_SEQ_RING");
    if (!c)
        return;
    bench_vkc_chain(b, c, v, K, base);
    vkc_context_destroy(c);
}

/* The chain scenario's cooperative rows: vkc's default barrier (no define)
 * and the raw kernel with the same barrier (spec 56). */
static const gridbar_variant chain_barrier = {"", 56, {NULL, NULL}};

/* A context whose waits spin for up to a second, for row `name`, made
 * with the knob `var` set to `value` (none: NULL); NULL where the row is
 * not wanted or the context failed (its record says so). */
static vkc_context *chain_spinning_with(bench *b, const char *name, const char *var,
                                        const char *value)
{
    if (!bench_row_wanted(name))
        return NULL;
    if (var)
        setenv(var, value, 1);
    vkc_context *c =
        bench_context_or_fail(b, &(vkc_context_desc){.spin_ns = 1000000000ull}, name, NULL);
    if (var)
        unsetenv(var);
    return c;
}

void scen_chain(bench *b, raw *r)
{
    uint32_t ks[2] = {bench_n(b, 16, 100), bench_n(b, 256, 10000)};
    /* The raw rows spin on their fence however long the chain runs; vkc's
     * default wait blocks after 50 spin_ns (10 ms), and a blocked wait wakes
     * up late. The same wait spinning throughout is the chain's like for
     * like. */
    vkc_context *spinning = chain_spinning_with(b, "vkc-seq-spinning", NULL, NULL);
    /* The same with every copy begun with SIMULTANEOUS_USE (as vkc did
     * before: by default a long sequence's copy has no flag, as raw's
     * command buffers; with the flag the K=10000 chain took 3-4% longer on
     * the H200, BENCHMARKS.md, twentieth session), and without the
     * completion epilogue. */
    vkc_context *simul =
        chain_spinning_with(b, "vkc-seq-spinning-simul", "VKC_SIMULTANEOUS_USE", "1");
    vkc_context *noepi = chain_spinning_with(b, "vkc-seq-spinning-noepilogue", "VKC_EPILOGUE", "0");
    for (int i = 0; i < 2; ++i) {
        char base[96];
        snprintf(base, sizeof(base), "chain/%s K=%u", bar_names[0], ks[i]);
        chain_row rows[BAR_COUNT + 4];
        uint32_t n = 0;
        for (int kind = 0; r && kind < BAR_COUNT; ++kind)
            if (bench_row_wanted(bar_names[kind]))
                rows[n++] = (chain_row){.kind = (bar_kind)kind};
        if (bench_row_wanted("vkc-seq"))
            rows[n++] = (chain_row){.name = "vkc-seq", .ctx = b->ctx};
        if (spinning)
            rows[n++] = (chain_row){.name = "vkc-seq-spinning", .ctx = spinning};
        if (simul)
            rows[n++] = (chain_row){.name = "vkc-seq-spinning-simul", .ctx = simul};
        if (noepi)
            rows[n++] = (chain_row){.name = "vkc-seq-spinning-noepilogue", .ctx = noepi};
        if (n)
            chain_rows(b, r, rows, n, ks[i], bench_n(b, 20, 200));
        if (bench_row_wanted("vkc-cooperative"))
            bench_vkc_coop_chain(b, ks[i], bench_n(b, 20, 200), base, &chain_barrier);
        if (r && bench_row_wanted("raw-persistent"))
            raw_persist_chain(b, r, ks[i], bench_n(b, 20, 200), base, &chain_barrier);
    }
    if (bench_row_wanted("vkc-ring8"))
        vkc_chain_ring8(b, ks[1]);
    vkc_context_destroy(spinning);
    vkc_context_destroy(simul);
    vkc_context_destroy(noepi);
}

/* Issue 13: the grid barrier's variants, each a row of the raw persistent
 * kernel and of vkc's cooperative dispatch on the same grid and K, each
 * checking its own chain's result; ratios against today's barrier of the
 * same kind (bench/h200_gridbar.sh tabulates several passes). */
/* Whether row `kind` + `suffix` is to run: not named in VKC_GRIDBAR_SKIP
 * (comma-separated rows without K, which bench/h200_gridbar.sh sets for a
 * row that hung an earlier pass). Says on stdout which row starts, so that
 * the script can tell which one hangs. */
static bool gridbar_row(bench *b, const char *kind, const gridbar_variant *gv, uint32_t K)
{
    char row[64], v[80];
    snprintf(row, sizeof(row), "%s%s", kind, gv->suffix);
    const char *skip = getenv("VKC_GRIDBAR_SKIP");
    const size_t len = strlen(row);
    for (const char *p = skip; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strcspn(p, ",") == len && !strncmp(p, row, len)) {
            snprintf(v, sizeof(v), "%s K=%u", row, K + (K & 1));
            bench_skip(b, v, "named in VKC_GRIDBAR_SKIP (it hung in an earlier pass)");
            return false;
        }
    }
    printf("gridbar row: %s\n", row);
    fflush(stdout);
    return true;
}

void scen_gridbar(bench *b, raw *r)
{
    const uint32_t K = bench_n(b, 64, 10000), iters = bench_n(b, 10, 100);
    const size_t nv = sizeof(gridbar_variants) / sizeof(gridbar_variants[0]);
    char raw_base[96], vkc_base[96];
    snprintf(raw_base, sizeof(raw_base), "gridbar/raw-persistent K=%u", K + (K & 1));
    snprintf(vkc_base, sizeof(vkc_base), "gridbar/vkc-cooperative K=%u", K + (K & 1));
    /* Interleaved, so that a drift of the clocks over the pass touches the
     * two kinds of one variant alike. */
    for (size_t v = 0; v < nv; ++v) {
        const gridbar_variant *gv = &gridbar_variants[v];
        if (r && gridbar_row(b, "raw-persistent", gv, K))
            raw_persist_chain(b, r, K, iters, v ? raw_base : NULL, gv);
        if (gridbar_row(b, "vkc-cooperative", gv, K))
            bench_vkc_coop_chain(b, K, iters, v ? vkc_base : raw_base, gv);
    }
}

/* ---- levels: W ranges of one buffer, D levels; level d runs x_w += 1 on every w -- */

static void check_levels(const uint32_t *host, uint32_t W, uint64_t stride, uint32_t want,
                         bench_rec *rec)
{
    for (uint32_t w = 0; w < W; ++w)
        for (uint32_t i = 0; i < TINY_N; ++i)
            if (host[w * stride / 4 + i] != want) {
                rec->ok = false;
                snprintf(rec->note, sizeof(rec->note), "range %u [%u] = %u, want %u", w, i,
                         host[w * stride / 4 + i], want);
                return;
            }
}

typedef struct levels_rec {
    raw_tiny *t;
    raw_args *args;
    uint32_t W, D;
} levels_rec;

static void record_levels(raw *r, VkCommandBuffer cb, void *user)
{
    const levels_rec *l = user;
    for (uint32_t d = 0; d < l->D; ++d) {
        if (d)
            raw_cmd_barrier(r, cb);
        for (uint32_t w = 0; w < l->W; ++w)
            raw_cmd_dispatch(r, cb, &l->t->p, &l->args[w], l->t->push, 1, 1);
    }
}

static void raw_levels(bench *b, raw *r, const char *variant, const char *baseline, uint32_t W,
                       uint32_t D)
{
    char err[512] = "";
    uint64_t stride = bench_range_stride(b);
    raw_tiny t = {0};
    bench_times tm = {0};
    raw_args *args = calloc(W, sizeof(raw_args));
    uint32_t *host = calloc(W * stride / 4, 4);
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), bench_n(b, 20, 200)) && args && host);
    RTRY(raw_tiny_init(r, &t, W * stride));
    for (uint32_t w = 0; w < W; ++w) {
        args[w] = (raw_args){.b = {{t.x.buf, w * stride, TINY_N * 4}}, .n = 1};
        RTRY(raw_prepare(r, &t.p, &args[w]));
    }
    RTRY(raw_time_replay(r, record_levels, &(levels_rec){&t, args, W, D}, &tm));
    RTRY(raw_download(r, &t.x, 0, host, W * stride));
    rec.barriers = D - 1;
    check_levels(host, W, stride, (tm.warm + tm.iters) * D, &rec);
    bench_times_rec(&tm, &rec, W * D);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    free(args);
    free(host);
    raw_tiny_finish(r, &t);
}

static void vkc_levels(bench *b, const char *variant, const char *baseline, uint32_t W, uint32_t D)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    uint64_t stride = bench_range_stride(b);
    bench_tiny t = {0};
    bench_times tm = {0};
    vkc_seq_info info = {0};
    bench_range_arg *store = calloc(W, sizeof(*store));
    vkc_dispatch_desc *descs = calloc(W, sizeof(*descs));
    uint32_t *host = calloc(W * stride / 4, 4);
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), bench_n(b, 20, 200)) && store && descs && host);
    VTRY(bench_tiny_init(vctx, &t, W * stride));
    for (uint32_t w = 0; w < W; ++w) {
        store[w].args[0] = (vkc_arg){.buffer = t.x, .offset = w * stride, .size = TINY_N * 4};
        descs[w] = t.d;
        descs[w].args = store[w].args;
    }
    VTRY(bench_seq_time(vctx, descs, W, W * D, &tm, &info));
    VTRY(vkc_buffer_download(t.x, 0, host, W * stride));
    rec.barriers = info.barriers;
    rec.expected_barriers = D;
    check_levels(host, W, stride, (tm.warm + tm.iters) * D, &rec);
    bench_times_rec(&tm, &rec, W * D);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    free(store);
    free(descs);
    free(host);
    bench_tiny_finish(&t);
}

void scen_levels(bench *b, raw *r)
{
    uint32_t D = bench_n(b, 8, 64);
    uint32_t ws[2] = {bench_n(b, 4, 8), bench_n(b, 16, 32)};
    for (int i = 0; i < 2; ++i) {
        char rv[64], vv[64], base[96];
        snprintf(rv, sizeof(rv), "raw-level-barriers W=%u", ws[i]);
        snprintf(vv, sizeof(vv), "vkc-seq W=%u", ws[i]);
        snprintf(base, sizeof(base), "levels/%s", rv);
        if (r)
            raw_levels(b, r, rv, base, ws[i], D);
        vkc_levels(b, vv, base, ws[i], D);
    }
}

/* ---- independent: K dispatches, dispatch k writes range k of dst = src + k ------ */

typedef struct ranges_rec {
    raw_ranges *rr;
    uint32_t n;
} ranges_rec;

static void record_ranges(raw *r, VkCommandBuffer cb, void *user)
{
    const ranges_rec *g = user;
    for (uint32_t k = 0; k < g->n; ++k) {
        uint32_t push[2] = {TINY_N, k};
        raw_cmd_dispatch(r, cb, &g->rr->p, &g->rr->args[k], push, 1, 1);
    }
}

static void raw_independent(bench *b, raw *r, uint32_t K)
{
    char err[512] = "", variant[64], base[96];
    snprintf(variant, sizeof(variant), "raw-no-barriers K=%u", K);
    snprintf(base, sizeof(base), "independent/%s", variant);
    bench_ranges g = {0};
    raw_ranges rr = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, base);
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), bench_n(b, 20, 200)) &&
         bench_ranges_host(b, &g, K, 7));
    RTRY(raw_ranges_init(r, &g, true, &rr));
    RTRY(raw_time_replay(r, record_ranges, &(ranges_rec){&rr, K}, &tm));
    bench_rec_sweep(&rec, K, "K");
    rec.barriers = 0;
    RTRY(raw_ranges_download_check(r, &rr, &g, 0, &rec));
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    raw_ranges_finish(r, &rr);
    bench_ranges_finish(&g);
}

static void vkc_independent(bench *b, uint32_t K)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "", variant[64], base[96];
    snprintf(variant, sizeof(variant), "vkc-seq K=%u", K);
    snprintf(base, sizeof(base), "independent/raw-no-barriers K=%u", K);
    bench_ranges g = {0};
    bench_times tm = {0};
    vkc_seq_info info = {0};
    bench_rec rec = bench_rec_init(b, variant, base);
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), bench_n(b, 20, 200)));
    VTRY(bench_ranges_init(b, vctx, &g, K, 7));
    VTRY(bench_seq_time(vctx, g.descs, K, K, &tm, &info));
    bench_rec_sweep(&rec, K, "K");
    rec.barriers = info.barriers;
    rec.expected_barriers = 0;
    VTRY(bench_ranges_download_check(&g, 0, &rec));
    bench_times_rec(&tm, &rec, K);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    bench_ranges_finish(&g);
}

void scen_independent(bench *b, raw *r)
{
    uint32_t K = bench_n(b, 256, 10000);
    if (r)
        raw_independent(b, r, K);
    vkc_independent(b, K);
}

/* ---- descriptors and record: CPU cost per dispatch -------------------------------- */

typedef enum { DS_FRESH_POOL, DS_RESET_POOL, DS_PUSH } ds_kind;

/* N independent dispatches recorded, submitted and waited for per iteration;
 * the descriptor work is what differs. */
static void raw_descriptors(bench *b, raw *r, ds_kind kind, uint32_t N)
{
    static const char *names[] = {"raw-fresh-pool", "raw-reset-pool", "raw-push"};
    char err[512] = "";
    const char *variant = names[kind];
    if (kind == DS_PUSH && !r->vkCmdPushDescriptorSetKHR) {
        bench_skip(b, variant, "push descriptors not enabled");
        return;
    }
    bench_ranges g = {0};
    raw_ranges rr = {0};
    bench_times tm = {0};
    VkDescriptorPool pool = VK_NULL_HANDLE;
    bench_rec rec = bench_rec_init(b, variant, "descriptors/raw-fresh-pool");
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), bench_n(b, 10, 200)) &&
         bench_ranges_host(b, &g, N, 11));
    RTRY(raw_ranges_init(r, &g, false, &rr));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * N};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = N,
                                      .poolSizeCount = 1,
                                      .pPoolSizes = &ps};
    if (kind == DS_RESET_POOL)
        RTRY(raw_ok(r, r->vkCreateDescriptorPool(r->dev, &dpi, NULL, &pool),
                    "vkCreateDescriptorPool"));
    for (uint32_t it = 0; it < tm.warm + tm.iters; ++it) {
        uint64_t t0 = bench_now_ns();
        if (kind == DS_FRESH_POOL)
            RTRY(raw_ok(r, r->vkCreateDescriptorPool(r->dev, &dpi, NULL, &pool),
                        "vkCreateDescriptorPool"));
        else if (kind == DS_RESET_POOL)
            RTRY(raw_ok(r, r->vkResetDescriptorPool(r->dev, pool, 0), "vkResetDescriptorPool"));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        RTRY(raw_ok(r, r->vkBeginCommandBuffer(rr.cb, &bi), "vkBeginCommandBuffer"));
        for (uint32_t k = 0; k < N; ++k) {
            raw_args a = rr.args[k];
            if (kind != DS_PUSH)
                RTRY(raw_args_set(r, &rr.p, pool, &a));
            uint32_t push[2] = {TINY_N, k + it};
            raw_cmd_dispatch(r, rr.cb, &rr.p, &a, push, 1, 1);
        }
        RTRY(raw_ok(r, r->vkEndCommandBuffer(rr.cb), "vkEndCommandBuffer"));
        RTRY(raw_submit_wait(r, rr.cb, rr.fence, true));
        if (kind == DS_FRESH_POOL) {
            r->vkDestroyDescriptorPool(r->dev, pool, NULL);
            pool = VK_NULL_HANDLE;
        }
        bench_times_put(&tm, it, (double)(bench_now_ns() - t0));
    }
    /* the last iteration added k + (warm + iters - 1) */
    RTRY(raw_ranges_download_check(r, &rr, &g, tm.warm + tm.iters - 1, &rec));
    bench_times_rec(&tm, &rec, N);
fail:
    bench_emit(b, &rec, err);
    if (pool)
        r->vkDestroyDescriptorPool(r->dev, pool, NULL);
    bench_times_free(&tm);
    raw_ranges_finish(r, &rr);
    bench_ranges_finish(&g);
}

typedef enum { VD_SEQ, VD_IMMEDIATE } vd_kind;

/* N dispatches over the ranges (range j = src + j + add) into s, or enqueued. */
static vkc_result vkc_ranges_record(vkc_context *vctx, const bench_ranges *g, vkc_seq *s,
                                    uint32_t add)
{
    vkc_result res = VKC_SUCCESS;
    for (uint32_t j = 0; res >= 0 && j < g->n; ++j) {
        vkc_arg args[2];
        uint32_t push[2];
        vkc_dispatch_desc d = bench_ranges_desc(g, j, add, args, push);
        res = s ? vkc_seq_dispatch(s, &d) : vkc_dispatch(vctx, &d);
    }
    return res;
}

/* The same through vkc: re-record a sequence or enqueue immediately. */
static void vkc_descriptors(bench *b, vkc_context *vctx, const char *variant, vd_kind kind,
                            uint32_t N, const char *baseline)
{
    char err[512] = "";
    bench_ranges g = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, baseline);
    MTRY(bench_times_init(&tm, bench_n(b, 2, 10), bench_n(b, 10, 200)));
    VTRY(bench_ranges_init(b, vctx, &g, N, 11));
    vkc_seq *s = kind == VD_SEQ ? g.seq : NULL;
    for (uint32_t it = 0; it < tm.warm + tm.iters; ++it) {
        uint64_t t0 = bench_now_ns();
        if (kind == VD_SEQ && it > 0)
            VTRY(vkc_seq_begin(s));
        VTRY(vkc_ranges_record(vctx, &g, s, it));
        vkc_ticket t;
        if (kind == VD_SEQ) {
            VTRY(vkc_seq_end(s));
            VTRY(vkc_seq_submit(s, &t));
        } else {
            VTRY(vkc_flush(vctx, &t));
        }
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
        bench_times_put(&tm, it, (double)(bench_now_ns() - t0));
    }
    VTRY(bench_ranges_download_check(&g, tm.warm + tm.iters - 1, &rec));
    bench_times_rec(&tm, &rec, N);
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    bench_ranges_finish(&g);
}

void scen_descriptors(bench *b, raw *r)
{
    uint32_t N = bench_n(b, 128, 1024);
    const char *base = "descriptors/raw-fresh-pool";
    if (r)
        for (int kind = 0; kind < 3; ++kind)
            raw_descriptors(b, r, (ds_kind)kind, N);
    vkc_descriptors(b, b->ctx, "vkc-seq-rerecord", VD_SEQ, N, base);
    vkc_descriptors(b, b->ctx, "vkc-immediate", VD_IMMEDIATE, N, base);
    vkc_context_desc desc = {.push_descriptors = VKC_OFF};
    vkc_context *c = bench_context_or_fail(b, &desc, "vkc-seq-rerecord(pools)", NULL);
    if (!c)
        return;
    vkc_descriptors(b, c, "vkc-seq-rerecord(pools)", VD_SEQ, N, base);
    vkc_context_destroy(c);
}

/* record: the samples are ns per recorded dispatch, reported as such: the
 * p50 in per_dispatch_ns, the p95 and p99 beside it (the round-trip columns,
 * in us per round, do not apply). */
static void record_timing(bench_times *tm, bench_rec *rec)
{
    bench_times_rec(tm, rec, 1);
    rec->per_dispatch_p95_ns = rec->p95_us * 1e3;
    rec->per_dispatch_p99_ns = rec->p99_us * 1e3;
    rec->p50_us = rec->p95_us = rec->p99_us = rec->mean_us = rec->min_us = rec->max_us = -1;
}

static void vkc_record_as(bench *b, vd_kind kind, uint32_t N, vkc_context *vctx,
                          const char *variant)
{
    char err[512] = "";
    bench_ranges g = {0};
    bench_times tm = {0};
    bench_rec rec = bench_rec_init(b, variant, "record/raw-record");
    MTRY(bench_times_init(&tm, bench_n(b, 3, 20), bench_n(b, 20, 500)));
    VTRY(bench_ranges_init(b, vctx, &g, N, 13));
    vkc_seq *s = kind == VD_SEQ ? g.seq : NULL;
    for (uint32_t it = 0; it < tm.warm + tm.iters; ++it) {
        if (kind == VD_SEQ && it > 0)
            VTRY(vkc_seq_begin(s));
        uint64_t t0 = bench_now_ns();
        VTRY(vkc_ranges_record(vctx, &g, s, 0));
        if (kind == VD_SEQ)
            VTRY(vkc_seq_end(s));
        uint64_t t1 = bench_now_ns();
        if (kind == VD_IMMEDIATE) {
            vkc_ticket t;
            VTRY(vkc_flush(vctx, &t));
            VTRY(vkc_wait(vctx, t, UINT64_MAX));
        }
        bench_times_put(&tm, it, (double)(t1 - t0) / N);
    }
    if (kind == VD_SEQ) {
        vkc_ticket t;
        VTRY(vkc_seq_submit(s, &t));
        VTRY(vkc_wait(vctx, t, UINT64_MAX));
    }
    VTRY(bench_ranges_download_check(&g, 0, &rec));
    record_timing(&tm, &rec);
    if (kind == VD_IMMEDIATE)
        bench_note(&rec, "enqueue only: the flush is outside the timed loop");
fail:
    bench_emit(b, &rec, err);
    bench_times_free(&tm);
    bench_ranges_finish(&g);
}

static void vkc_record(bench *b, vd_kind kind, uint32_t N, vkc_context *vctx)
{
    vkc_record_as(b, kind, N, vctx, kind == VD_SEQ ? "vkc-seq-dispatch" : "vkc-immediate-enqueue");
}

/* The same recording while another sequence of the context keeps copies
 * armed behind the gate (its round trips came last): what they cost the
 * host's other work while they wait. */
static void vkc_record_armed(bench *b, uint32_t N)
{
    vkc_context *vctx = b->ctx;
    char err[512] = "";
    bench_tiny t = {0};
    vkc_seq *s = NULL;
    VTRY(bench_tiny_init_from(vctx, &t, 0, true));
    VTRY(bench_seq_record(vctx, &t.d, 1, 1, &s));
    for (uint32_t i = 0; i < 300; ++i) {
        vkc_ticket tk;
        VTRY(vkc_seq_submit(s, &tk));
        VTRY(vkc_wait(vctx, tk, UINT64_MAX));
    }
    vkc_record_as(b, VD_SEQ, N, vctx, "vkc-seq-dispatch-armed");
fail:
    if (err[0])
        fprintf(stderr, "vkc-seq-dispatch-armed: %s\n", err);
    vkc_seq_destroy(s); /* cancels what is still armed */
    bench_tiny_finish(&t);
}

/* record, a chain: N dependent dispatches of one kernel on one buffer with
 * the same constants (x += 1, a barrier before each but the first), CPU ns
 * per dispatch of recording. Raw pushes the descriptors and constants for
 * every dispatch, as a plain recording loop does; vkc finds them bound
 * (src/record.c) and pays for its hazard tracking. Beside it, what vkc's
 * own calls cost the driver: the barrier in synchronization2's form (vkc's
 * where the device has it) and the state bound once (barrier + dispatch
 * after the first), each form alone and both.
 *
 * The rows of one kind (N independent dispatches, raw-record and
 * vkc-seq-dispatch; the chain's five) take turns in chunks (bench_turns,
 * one untimed recording opening each chunk), so that a burst of other load
 * touches them alike; the last recording of each row is submitted once and
 * checked (the ranges' copies; x = N for the chain). */
typedef struct rrow {
    bool vkc, chain, bound, skipped, begun;
    bar_kind kind;
    uint32_t N, kept;
    vkc_context *ctx; /* vkc's rows */
    raw_tiny rt;      /* raw chain */
    bench_tiny t;     /* vkc chain */
    bench_ranges g;   /* independent: both */
    raw_ranges rr;    /* raw independent */
    vkc_seq *s;       /* vkc's rows */
    bench_times tm;
    bench_rec rec;
    char variant[64], err[512];
} rrow;

static void rrow_open(bench *b, raw *r, rrow *row, uint32_t N, uint32_t iters)
{
    char err[512] = "";
    vkc_context *vctx = b->ctx;
    row->N = N;
    row->ctx = vctx;
    if (!row->chain)
        snprintf(row->variant, sizeof(row->variant), row->vkc ? "vkc-seq-dispatch" : "raw-record");
    else if (row->vkc)
        snprintf(row->variant, sizeof(row->variant), "vkc-seq-dispatch-chain");
    else
        snprintf(row->variant, sizeof(row->variant), "raw-record-chain%s%s",
                 row->bound ? "-bound" : "", row->kind == BAR_SYNC2 ? "-sync2" : "");
    row->rec = bench_rec_init(b, row->variant,
                              row->chain ? "record/raw-record-chain" : "record/raw-record");
    if (!row->vkc && row->kind == BAR_SYNC2 && !r->vkCmdPipelineBarrier2) {
        row->skipped = true;
        snprintf(row->err, sizeof(row->err), "synchronization2 not enabled");
        return;
    }
    MTRY(bench_times_init(&row->tm, 0, iters));
    if (row->chain && row->vkc) {
        VTRY(bench_tiny_init_from(vctx, &row->t, 0, true));
        VTRY(vkc_seq_create(vctx, NULL, &row->s));
    } else if (row->chain) {
        RTRY(raw_tiny_init(r, &row->rt, 0));
    } else if (row->vkc) {
        VTRY(bench_ranges_init(b, vctx, &row->g, N, 13));
        row->s = row->g.seq;
    } else {
        MTRY(bench_ranges_host(b, &row->g, N, 13));
        RTRY(raw_ranges_init(r, &row->g, true, &row->rr));
    }
    return;
fail:
    snprintf(row->err, sizeof(row->err), "%s", err);
}

/* m timed recordings after one untimed, each left ended. */
static void rrow_chunk(void *user, void *p, uint32_t m)
{
    raw *r = user;
    rrow *row = p;
    char err[512] = "";
    vkc_context *vctx = row->ctx;
    if (row->err[0])
        return;
    for (uint32_t i = 0; i <= m; ++i) {
        uint64_t t0, t1;
        if (row->vkc) {
            if (row->begun)
                VTRY(vkc_seq_begin(row->s));
            row->begun = true;
            t0 = bench_now_ns();
            if (row->chain)
                for (uint32_t j = 0; j < row->N; ++j)
                    VTRY(vkc_seq_dispatch(row->s, &row->t.d));
            else
                VTRY(vkc_ranges_record(vctx, &row->g, row->s, 0));
            VTRY(vkc_seq_end(row->s));
            t1 = bench_now_ns();
        } else {
            VkCommandBuffer cb = row->chain ? row->rt.cb : row->rr.cb;
            VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                           .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
            RTRY(raw_ok(r, r->vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer") &&
                 raw_ok(r, r->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer"));
            t0 = bench_now_ns();
            if (row->chain)
                record_chain(r, cb, &(chain_rec){&row->rt, row->kind, row->N, row->bound});
            else
                record_ranges(r, cb, &(ranges_rec){&row->rr, row->N});
            t1 = bench_now_ns();
            RTRY(raw_ok(r, r->vkEndCommandBuffer(cb), "vkEndCommandBuffer"));
        }
        if (i && row->kept < row->tm.iters)
            row->tm.wall[row->kept++] = (double)(t1 - t0) / row->N; /* ns per dispatch */
    }
    return;
fail:
    snprintf(row->err, sizeof(row->err), "%s", err);
}

static void rrow_close(bench *b, raw *r, rrow *row, uint32_t turns)
{
    char err[512] = "";
    vkc_context *vctx = row->ctx;
    if (row->skipped) {
        bench_skip(b, row->variant, row->err);
        goto done;
    }
    if (row->err[0]) {
        snprintf(err, sizeof(err), "%s", row->err);
        goto fail;
    }
    row->tm.iters = row->kept;
    if (row->vkc) {
        vkc_ticket tk;
        VTRY(vkc_seq_submit(row->s, &tk));
        VTRY(vkc_wait(vctx, tk, UINT64_MAX));
        if (row->chain) {
            VTRY(bench_tiny_check(&row->t, row->N, &row->rec));
            bench_note(&row->rec,
                       "vkc_seq_dispatch + vkc_seq_end: hazards, levels and the recording");
        } else {
            VTRY(bench_ranges_download_check(&row->g, 0, &row->rec));
        }
    } else if (row->chain) {
        RTRY(raw_submit_wait(r, row->rt.cb, row->rt.fence, false));
        RTRY(raw_tiny_check(r, &row->rt, row->N, &row->rec));
        bench_note(&row->rec,
                   row->bound ? "%s barrier + dispatch, the state bound by the first dispatch"
                              : "%s barrier + push descriptors + push constants + dispatch",
                   row->kind == BAR_SYNC2 ? "synchronization2" : "vkCmdPipelineBarrier");
    } else {
        RTRY(raw_submit_wait(r, row->rr.cb, row->rr.fence, false));
        RTRY(raw_ranges_download_check(r, &row->rr, &row->g, 0, &row->rec));
        bench_note(&row->rec, "bind+push descriptors+push constants+dispatch");
    }
    record_timing(&row->tm, &row->rec);
    bench_note(&row->rec, "rows take turns: %u chunks", turns);
fail:
    bench_emit(b, &row->rec, err);
done:
    bench_times_free(&row->tm);
    if (row->chain && row->vkc) {
        vkc_seq_destroy(row->s);
        bench_tiny_finish(&row->t);
    } else if (row->chain) {
        raw_tiny_finish(r, &row->rt);
    } else {
        if (!row->vkc)
            raw_ranges_finish(r, &row->rr);
        bench_ranges_finish(&row->g);
    }
}

/* Rows of one kind, opened, taking turns, closed in the table's order. */
static void rrow_run(bench *b, raw *r, rrow *rows, uint32_t n, uint32_t N, uint32_t iters)
{
    for (uint32_t i = 0; i < n; ++i)
        rrow_open(b, r, &rows[i], N, iters);
    const uint32_t turns = bench_turns(rows, sizeof(*rows), n, iters, rrow_chunk, r);
    for (uint32_t i = 0; i < n; ++i)
        rrow_close(b, r, &rows[i], turns);
}

void scen_record(bench *b, raw *r)
{
    const uint32_t N = bench_n(b, 256, 4096);
    rrow rows[5] = {{0}};
    uint32_t n = 0;
    if (r)
        rows[n++] = (rrow){0};
    rows[n++] = (rrow){.vkc = true};
    rrow_run(b, r, rows, n, N, bench_n(b, 20, 500));
    vkc_record_armed(b, N);
    n = 0;
    for (int i = 0; r && i < 4; ++i)
        rows[n++] = (rrow){.chain = true, .kind = i & 1 ? BAR_SYNC2 : BAR_MEMORY, .bound = i >= 2};
    rows[n++] = (rrow){.chain = true, .vkc = true};
    rrow_run(b, r, rows, n, N, bench_n(b, 20, 200));
    /* The enqueue itself: a batch larger than N, so no flush (record +
     * submit) and no wait for a free batch happens inside the timed loop. */
    vkc_context_desc desc = {.batch_size = N + 1};
    /* Nor an early flush to the idle GPU (the default policy submits an open
     * batch once it is 10 us old when nothing runs): the fixed-count policy
     * keeps every submit outside the timed loop, as the row's note says. */
    setenv("VKC_IMM_FIXED", "1", 1);
    vkc_context *c = bench_context_or_fail(b, &desc, "vkc-immediate-enqueue", NULL);
    unsetenv("VKC_IMM_FIXED");
    if (!c)
        return;
    vkc_record(b, VD_IMMEDIATE, N, c);
    vkc_context_destroy(c);
}
