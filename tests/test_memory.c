/* Memory module: round trips of every kind and size against the data sent,
 * the staging path (forced), fill and copy against a CPU reference,
 * sub-allocation and dedicated blocks, steady state, limits and bad input. */
/* The private header first: it brings volk (no prototypes) before vulkan_core.h. */
#include "seq.h" /* the sequence's writes_mapped */

#include "vkc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* vkc's own buffers (the completion marker's), alive with the context. */
static uint64_t internal_buffers(const vkc_context *ctx)
{
    return (ctx->marker_buf != NULL) + (ctx->marker_count != NULL) + (ctx->arm_pred_buf != NULL);
}

#define MiB (1ull << 20)
/* Above half of any sub-allocation block (64 MiB at most): a dedicated
 * allocation on every device. */
#define DEDICATED_SIZE (48 * MiB)

static const vkc_memory kinds[] = {VKC_MEMORY_DEVICE, VKC_MEMORY_UPLOAD, VKC_MEMORY_READBACK};
static const char *kind_names[] = {"device", "upload", "readback"};

static void fill_random(uint8_t *p, uint64_t n, uint64_t seed)
{
    uint64_t s = seed | 1;
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = vkc_test_rand(&s);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; ++i)
        p[i] = (uint8_t)vkc_test_rand(&s);
}

static vkc_stats stats(vkc_context *ctx)
{
    vkc_stats st;
    assert_int_equal(vkc_context_stats(ctx, &st), VKC_SUCCESS);
    return st;
}

static vkc_buffer *make(vkc_context *ctx, uint64_t size, vkc_memory kind)
{
    vkc_buffer *b = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = size, .memory = kind}, &b);
    if (r != VKC_SUCCESS)
        fail_msg("buffer of %llu bytes: %s (%s)", (unsigned long long)size, vkc_result_string(r),
                 vkc_context_last_error(ctx));
    assert_non_null(b);
    assert_int_equal(vkc_buffer_size(b), size);
    return b;
}

/* Upload random data, download it into a poisoned array, compare. */
static void round_trip(vkc_context *ctx, vkc_buffer *b, uint64_t size, uint64_t seed)
{
    uint8_t *in = malloc(size), *out = malloc(size);
    assert_non_null(in);
    assert_non_null(out);
    fill_random(in, size, seed);
    memset(out, 0xcd, size);
    assert_int_equal(vkc_buffer_upload(b, 0, in, size), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(b, 0, out, size), VKC_SUCCESS);
    assert_memory_equal(in, out, size);
    /* A mapping, where there is one, holds the same bytes. The CPU reads
     * an uncached mapping (DEVICE memory behind a BAR) one bus round trip
     * at a time, and assert_memory_equal reads bytewise: copy a window at
     * each end out in bulk and compare that only. */
    const uint8_t *map = vkc_buffer_map(b);
    if (map && b->host_cached) {
        assert_memory_equal(map, in, size);
    } else if (map) {
        const uint64_t w = VKC_MIN(size, 4096);
        memcpy(out, map, w);
        assert_memory_equal(out, in, w);
        memcpy(out, map + size - w, w);
        assert_memory_equal(out, in + size - w, w);
    }
    free(in);
    free(out);
    (void)ctx;
}

static void test_round_trip(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint64_t sizes[] = {4, 1000, MiB, 64 * MiB};
    for (size_t k = 0; k < VKC_ARRAY_COUNT(kinds); ++k) {
        for (size_t i = 0; i < VKC_ARRAY_COUNT(sizes); ++i) {
            vkc_buffer *b = make(ctx, sizes[i], kinds[k]);
            if (kinds[k] != VKC_MEMORY_DEVICE)
                assert_non_null(vkc_buffer_map(b));
            VkBuffer vb = VK_NULL_HANDLE;
            VkDeviceSize off = 1;
            assert_int_equal(vkc_buffer_vk(b, &vb, &off), VKC_SUCCESS);
            assert_true(vb != VK_NULL_HANDLE);
            assert_int_equal(off, 0);
            round_trip(ctx, b, sizes[i], 1 + k * 16 + i);
            printf("%s %llu bytes: %s\n", kind_names[k], (unsigned long long)sizes[i],
                   !vkc_buffer_map(b) ? "staged"
                   : b->host_cached   ? "mapped"
                                      : "mapped (uncached: large downloads staged)");
            vkc_buffer_destroy(b);
        }
    }
    vkc_stats st = stats(ctx);
    assert_int_equal(st.buffers, internal_buffers(ctx));
    vkc_test_context_destroy(ctx);
}

/* DEVICE buffers that are not mapped: transfers go through the staging
 * ring in chunks, at unaligned offsets, and agree with a CPU copy. */
static void test_staged(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc__memory_force_staging(ctx, true);
    const uint64_t size = 2 * VKC_STAGING_RING_SIZE + 12345;
    vkc_buffer *b = make(ctx, size, VKC_MEMORY_DEVICE);
    assert_null(vkc_buffer_map(b));
    uint8_t *ref = malloc(size), *tmp = malloc(size), *out = malloc(size);
    assert_non_null(ref);
    assert_non_null(tmp);
    assert_non_null(out);
    fill_random(ref, size, 77);
    assert_int_equal(vkc_buffer_upload(b, 0, ref, size), VKC_SUCCESS);
    memset(out, 0, size);
    assert_int_equal(vkc_buffer_download(b, 0, out, size), VKC_SUCCESS);
    assert_memory_equal(ref, out, size);

    /* Partial transfers, each bigger than the ring or odd-sized, at odd
     * offsets. */
    const struct {
        uint64_t offset, size;
    } parts[] = {
        {3, VKC_STAGING_RING_SIZE + 1001},
        {VKC_STAGING_RING_SIZE / 2 + 7, VKC_STAGING_RING_SIZE + VKC_STAGING_RING_SIZE / 2 + 3},
        {size - 5, 5},
        {1, 1},
        {12345, VKC_STAGING_RING_SIZE / 2},
    };
    for (size_t i = 0; i < VKC_ARRAY_COUNT(parts); ++i) {
        uint64_t o = parts[i].offset, n = parts[i].size;
        fill_random(tmp, n, 100 + i);
        memcpy(ref + o, tmp, n);
        assert_int_equal(vkc_buffer_upload(b, o, tmp, n), VKC_SUCCESS);
        /* Read back a window larger than what was written. */
        uint64_t ro = o > 11 ? o - 11 : 0;
        uint64_t rn = VKC_MIN(size - ro, n + 22);
        memset(out, 0xab, rn);
        assert_int_equal(vkc_buffer_download(b, ro, out, rn), VKC_SUCCESS);
        assert_memory_equal(ref + ro, out, rn);
    }
    memset(out, 0, size);
    assert_int_equal(vkc_buffer_download(b, 0, out, size), VKC_SUCCESS);
    assert_memory_equal(ref, out, size);
    vkc_stats st = stats(ctx);
    assert_int_equal(st.staging_blocks, 2);

    /* A small staged buffer of an odd size too. */
    vkc_buffer *s = make(ctx, 1000, VKC_MEMORY_DEVICE);
    assert_null(vkc_buffer_map(s));
    round_trip(ctx, s, 1000, 5);
    vkc_buffer_destroy(s);

    free(ref);
    free(tmp);
    free(out);
    vkc_buffer_destroy(b);
    vkc_test_context_destroy(ctx);
}

static void check_words(vkc_buffer *b, const uint32_t *ref, uint64_t size)
{
    uint8_t *out = malloc(size);
    assert_non_null(out);
    memset(out, 0x5a, size);
    assert_int_equal(vkc_buffer_download(b, 0, out, size), VKC_SUCCESS);
    assert_memory_equal(ref, out, size);
    free(out);
}

static void fill_case(vkc_context *ctx, vkc_memory kind)
{
    const uint64_t n = 4096 + 13; /* words */
    const uint64_t size = n * 4;
    vkc_buffer *b = make(ctx, size, kind);
    uint32_t *ref = malloc(size);
    assert_non_null(ref);
    fill_random((uint8_t *)ref, size, 9);
    assert_int_equal(vkc_buffer_upload(b, 0, ref, size), VKC_SUCCESS);
    const struct {
        uint64_t word, count;
        uint32_t value;
    } fills[] = {
        {0, n, 0xdeadbeefu}, {1, 1, 0x01020304u},       {7, 1000, 0u},
        {n - 3, 3, ~0u},     {2048, 1025, 0x3f800000u}, {5, 0, 0x12345678u},
    };
    for (size_t i = 0; i < VKC_ARRAY_COUNT(fills); ++i) {
        for (uint64_t w = 0; w < fills[i].count; ++w)
            ref[fills[i].word + w] = fills[i].value;
        assert_int_equal(vkc_buffer_fill(b, fills[i].word * 4, fills[i].count * 4, fills[i].value),
                         VKC_SUCCESS);
        check_words(b, ref, size);
    }
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_buffer_fill(b, 2, 8, 0), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_fill(b, 0, 6, 0), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_fill(b, 4, size, 0), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_fill(b, UINT64_MAX - 3, 8, 0), VKC_ERROR_INVALID_ARGUMENT);
    vkc_test_quiet_errors(0);
    check_words(b, ref, size); /* untouched by the refused calls */
    free(ref);
    vkc_buffer_destroy(b);
}

static void test_fill(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    for (size_t k = 0; k < VKC_ARRAY_COUNT(kinds); ++k)
        fill_case(ctx, kinds[k]);
    vkc__memory_force_staging(ctx, true);
    fill_case(ctx, VKC_MEMORY_DEVICE);
    vkc_test_context_destroy(ctx);
}

static void test_copy(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const uint64_t size = 300000 + 7;
    uint8_t *ref[4], *tmp = malloc(size);
    assert_non_null(tmp);
    vkc_buffer *b[4];
    /* Every kind, and one staged DEVICE buffer. */
    for (int i = 0; i < 4; ++i) {
        if (i == 3)
            vkc__memory_force_staging(ctx, true);
        b[i] = make(ctx, size, i < 3 ? kinds[i] : VKC_MEMORY_DEVICE);
        ref[i] = malloc(size);
        assert_non_null(ref[i]);
        fill_random(ref[i], size, 200 + (uint64_t)i);
        assert_int_equal(vkc_buffer_upload(b[i], 0, ref[i], size), VKC_SUCCESS);
    }
    uint64_t s = 4242;
    for (int d = 0; d < 4; ++d) {
        for (int src = 0; src < 4; ++src) {
            if (src == d)
                continue;
            uint64_t n = 1 + vkc_test_rand(&s) % (size / 2);
            uint64_t so = vkc_test_rand(&s) % (size - n + 1);
            uint64_t dO = vkc_test_rand(&s) % (size - n + 1);
            assert_int_equal(vkc_buffer_copy(b[d], dO, b[src], so, n), VKC_SUCCESS);
            memcpy(ref[d] + dO, ref[src] + so, n);
            assert_int_equal(vkc_buffer_download(b[d], 0, tmp, size), VKC_SUCCESS);
            assert_memory_equal(ref[d], tmp, size);
        }
    }
    /* Within one buffer: disjoint ranges work, overlapping ones are refused. */
    assert_int_equal(vkc_buffer_copy(b[0], 1000, b[0], 0, 1000), VKC_SUCCESS);
    memcpy(ref[0] + 1000, ref[0], 1000);
    vkc_test_quiet_errors(1);
    assert_int_equal(vkc_buffer_copy(b[0], 1000, b[0], 1, 1000), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_copy(b[0], 0, b[0], 999, 1000), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_copy(b[0], 0, b[1], 1, size), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_copy(b[0], 1, b[1], 0, size), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_copy(b[0], UINT64_MAX, b[1], 0, 2), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_copy(b[0], 0, b[1], 2, UINT64_MAX), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_copy(NULL, 0, b[1], 0, 4), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_buffer_copy(b[0], 0, NULL, 0, 4), VKC_ERROR_INVALID_HANDLE);
    vkc_test_quiet_errors(0);
    assert_int_equal(vkc_buffer_download(b[0], 0, tmp, size), VKC_SUCCESS);
    assert_memory_equal(ref[0], tmp, size);
    for (int i = 0; i < 4; ++i) {
        vkc_buffer_destroy(b[i]);
        free(ref[i]);
    }
    free(tmp);
    vkc_test_context_destroy(ctx);
}

/* 1000 small buffers share a few blocks and never overlap. */
static void test_many_small(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    enum { N = 1000, SIZE = 4096 };
    vkc_stats before = stats(ctx);
    vkc_buffer **b = calloc(N, sizeof(*b));
    assert_non_null(b);
    uint32_t *words = malloc(SIZE);
    assert_non_null(words);
    for (uint32_t i = 0; i < N; ++i) {
        b[i] = make(ctx, SIZE, kinds[i % 3]);
        for (uint32_t w = 0; w < SIZE / 4; ++w)
            words[w] = i * 7919u + w;
        assert_int_equal(vkc_buffer_upload(b[i], 0, words, SIZE), VKC_SUCCESS);
    }
    vkc_stats mid = stats(ctx);
    assert_int_equal(mid.buffers - before.buffers, N);
    /* At most one block per kind's memory type, plus one spare each. */
    printf("1000 x 4 KiB: %llu block(s), %llu bytes\n",
           (unsigned long long)(mid.memory_blocks - before.memory_blocks),
           (unsigned long long)(mid.memory_bytes - before.memory_bytes));
    assert_true(mid.memory_blocks - before.memory_blocks <= 6);
    for (uint32_t i = 0; i < N; ++i) {
        assert_int_equal(vkc_buffer_download(b[i], 0, words, SIZE), VKC_SUCCESS);
        for (uint32_t w = 0; w < SIZE / 4; ++w)
            assert_int_equal(words[w], i * 7919u + w);
    }
    for (uint32_t i = 0; i < N; ++i)
        vkc_buffer_destroy(b[i]);
    vkc_stats after = stats(ctx);
    assert_int_equal(after.buffers, before.buffers);
    /* Empty blocks: at most one kept per memory type. */
    assert_true(after.memory_blocks <= before.memory_blocks + 3);
    free(words);
    free(b);
    vkc_test_context_destroy(ctx);
}

/* A large buffer gets a block of its own, given back on destroy. With
 * `uncached`, DEVICE mappings are treated as on a GPU whose device-local
 * memory the host sees through the BAR: the large download is staged. */
static void dedicated_case(bool uncached)
{
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc__memory_force_uncached(ctx, uncached);
    /* Warm: a small buffer keeps its block, and the staging rings of both
     * directions exist. (A large download from an uncached mapping creates
     * the download ring, in READBACK memory: a block of a memory type of
     * its own on a discrete GPU.) */
    vkc_buffer *small = make(ctx, 256, VKC_MEMORY_DEVICE);
    vkc__memory_force_staging(ctx, true);
    vkc_buffer *staged = make(ctx, 256, VKC_MEMORY_DEVICE);
    round_trip(ctx, staged, 256, 30);
    vkc_buffer_destroy(staged);
    vkc__memory_force_staging(ctx, false);
    vkc_stats before = stats(ctx);
    assert_int_equal(before.staging_blocks, 2);

    const uint64_t size = DEDICATED_SIZE + 4;
    vkc_buffer *big = make(ctx, size, VKC_MEMORY_DEVICE);
    vkc_stats mid = stats(ctx);
    /* One allocation of the buffer's own (rounded up by the driver at
     * most to its alignment), not a whole block. */
    assert_int_equal(mid.memory_blocks, before.memory_blocks + 1);
    assert_int_equal(mid.memory_bytes - before.memory_bytes, big->alloc_size);
    assert_true(big->alloc_size >= size);
    assert_true(big->alloc_size < size + 4 * MiB);
    round_trip(ctx, big, size, 31);
    vkc_stats used = stats(ctx);
    assert_int_equal(used.memory_blocks, mid.memory_blocks);
    assert_int_equal(used.staging_blocks, before.staging_blocks);
    vkc_buffer_destroy(big);
    vkc_stats after = stats(ctx);
    assert_int_equal(after.memory_blocks, before.memory_blocks);
    assert_int_equal(after.memory_bytes, before.memory_bytes);
    vkc_buffer_destroy(small);
    vkc_test_context_destroy(ctx);
}

static void test_dedicated(void **state)
{
    (void)state;
    dedicated_case(false);
    dedicated_case(true);
}

/* Mapped but uncached (forced: as DEVICE and UPLOAD memory behind the BAR
 * of a discrete GPU): small downloads read the mapping, larger ones go
 * through the cached staging ring; the data agree either way. */
static void test_uncached(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc__memory_force_uncached(ctx, true);
    const uint64_t size = VKC_STAGING_RING_SIZE + VKC_STAGING_RING_SIZE / 2 + 333;
    vkc_buffer *d = make(ctx, size, VKC_MEMORY_DEVICE);
    vkc_buffer *u = make(ctx, 10000, VKC_MEMORY_UPLOAD);
    vkc_buffer *rb = make(ctx, 10000, VKC_MEMORY_READBACK);
    vkc_buffer *bufs[] = {d, u, rb};
    uint8_t *ref[3];
    for (int i = 0; i < 3; ++i) {
        if (i < 2)
            assert_false(bufs[i]->host_cached);
        uint64_t n = vkc_buffer_size(bufs[i]);
        ref[i] = malloc(n);
        assert_non_null(ref[i]);
        fill_random(ref[i], n, 60 + (uint64_t)i);
        /* Uploads write through the mapping when there is one. */
        assert_int_equal(vkc_buffer_upload(bufs[i], 0, ref[i], n), VKC_SUCCESS);
    }
    uint8_t *out = malloc(size);
    assert_non_null(out);
    /* Staging only pays where the download ring's memory is cached. */
    uint32_t rt[VK_MAX_MEMORY_TYPES];
    bool cached_ring =
        vkc__memory_pick_types(&ctx->mem_props, VKC_MEMORY_READBACK, UINT32_MAX, rt) &&
        (ctx->mem_props.memoryTypes[rt[0]].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    bool check_path = vkc_buffer_map(d) && cached_ring;
    if (!check_path) {
        printf("skipped path checks: DEVICE memory not host-visible or no cached memory\n");
    } else {
        /* Small reads and reads of cached memory: straight from the mapping. */
        const uint64_t small = VKC_UNCACHED_READ_MAX;
        assert_int_equal(vkc_buffer_download(d, 7, out, small), VKC_SUCCESS);
        assert_memory_equal(out, ref[0] + 7, small);
        assert_int_equal(vkc_buffer_download(u, 10000 - small, out, small), VKC_SUCCESS);
        assert_memory_equal(out, ref[1] + 10000 - small, small);
        assert_int_equal(vkc_buffer_download(rb, 0, out, 10000), VKC_SUCCESS);
        assert_memory_equal(out, ref[2], 10000);
        assert_int_equal(stats(ctx).staging_blocks, 0);
        /* One byte more from an uncached mapping: staged. */
        assert_int_equal(vkc_buffer_download(u, 3, out, small + 1), VKC_SUCCESS);
        assert_memory_equal(out, ref[1] + 3, small + 1);
        assert_int_equal(stats(ctx).staging_blocks, 1);
    }
    /* GPU writes (fill, copy) read back in chunks across the ring's halves. */
    const uint64_t fo = 4 * 1001, fn = 4 * 5000;
    assert_int_equal(vkc_buffer_fill(d, fo, fn, 0xa5a5a5a5u), VKC_SUCCESS);
    memset(ref[0] + fo, 0xa5, fn);
    assert_int_equal(vkc_buffer_copy(d, size - 9000, u, 1000, 9000), VKC_SUCCESS);
    memcpy(ref[0] + size - 9000, ref[1] + 1000, 9000);
    memset(out, 0, size);
    assert_int_equal(vkc_buffer_download(d, 0, out, size), VKC_SUCCESS);
    assert_memory_equal(out, ref[0], size);
    const uint64_t o = VKC_STAGING_RING_SIZE / 2 - 12345, n = VKC_STAGING_RING_SIZE / 2 + 54321;
    memset(out, 0, n);
    assert_int_equal(vkc_buffer_download(d, o, out, n), VKC_SUCCESS);
    assert_memory_equal(out, ref[0] + o, n);
    if (check_path) {
        /* Only the download ring was needed. */
        assert_int_equal(stats(ctx).staging_blocks, 1);
    }
    for (int i = 0; i < 3; ++i) {
        vkc_buffer_destroy(bufs[i]);
        free(ref[i]);
    }
    free(out);
    vkc_test_context_destroy(ctx);
}

/* Steady state: create/destroy cycles and staged transfers allocate no new
 * memory or staging blocks once warm. */
static void test_steady_state(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    uint64_t s = 99;
    /* Warm-up: every kind once, and the staging ring of both directions. */
    for (size_t k = 0; k < VKC_ARRAY_COUNT(kinds); ++k)
        vkc_buffer_destroy(make(ctx, 4096, kinds[k]));
    vkc__memory_force_staging(ctx, true);
    vkc_buffer *st = make(ctx, 4096, VKC_MEMORY_DEVICE);
    uint8_t in[4096], out[4096];
    fill_random(in, sizeof(in), 1);
    assert_int_equal(vkc_buffer_upload(st, 0, in, sizeof(in)), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(st, 0, out, sizeof(out)), VKC_SUCCESS);
    vkc_stats warm = stats(ctx);
    assert_int_equal(warm.staging_blocks, 2);

    for (int i = 0; i < 1000; ++i) {
        uint64_t size = 4 + vkc_test_rand(&s) % 65536;
        vkc_buffer *b = make(ctx, size, kinds[i % 3]);
        vkc_buffer_destroy(b);
    }
    vkc_stats a = stats(ctx);
    assert_int_equal(a.memory_blocks, warm.memory_blocks);
    assert_int_equal(a.memory_bytes, warm.memory_bytes);
    assert_int_equal(a.buffers, warm.buffers);

    for (int i = 0; i < 1000; ++i) {
        uint64_t o = vkc_test_rand(&s) % 2048;
        uint64_t n = 1 + vkc_test_rand(&s) % 2048;
        fill_random(in, n, (uint64_t)i);
        assert_int_equal(vkc_buffer_upload(st, o, in, n), VKC_SUCCESS);
        if (i % 100 == 0) {
            assert_int_equal(vkc_buffer_download(st, o, out, n), VKC_SUCCESS);
            assert_memory_equal(in, out, n);
        }
    }
    vkc_stats c = stats(ctx);
    assert_int_equal(c.memory_blocks, warm.memory_blocks);
    assert_int_equal(c.staging_blocks, warm.staging_blocks);
    assert_true(c.command_buffers <= warm.command_buffers + 2);
    vkc_buffer_destroy(st);
    vkc_test_context_destroy(ctx);
}

/* Bigger than one storage binding may be: created, copied, round-tripped. */
static void test_beyond_storage_range(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const vkc_device_info *d = vkc_context_device(ctx);
    uint64_t size = d->max_storage_buffer_range + 4;
    if (size > d->max_memory_allocation_size || size > 1024 * MiB) {
        printf("skipped: maxStorageBufferRange is %llu bytes\n",
               (unsigned long long)d->max_storage_buffer_range);
        vkc_test_context_destroy(ctx);
        return;
    }
    vkc_buffer *b = make(ctx, size, VKC_MEMORY_DEVICE);
    round_trip(ctx, b, size, 4444);
    vkc_buffer_destroy(b);
    vkc_test_context_destroy(ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    const vkc_device_info *d = vkc_context_device(ctx);
    vkc_test_quiet_errors(1);
    vkc_buffer *b = (vkc_buffer *)&b; /* must be cleared on failure */
    vkc_buffer_desc desc = {.size = 64};
    assert_int_equal(vkc_buffer_create(NULL, &desc, &b), VKC_ERROR_INVALID_HANDLE);
    assert_null(b);
    assert_int_equal(vkc_buffer_create(ctx, NULL, &b), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_create(ctx, &desc, NULL), VKC_ERROR_INVALID_ARGUMENT);
    b = (vkc_buffer *)&b;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 0}, &b),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_null(b);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 4, .memory = 7}, &b),
                     VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(
        vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = d->max_memory_allocation_size + 1}, &b),
        VKC_ERROR_LIMIT);
    assert_non_null(strstr(vkc_context_last_error(ctx), "maxMemoryAllocationSize"));
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = UINT64_MAX}, &b),
                     VKC_ERROR_LIMIT);
    assert_null(b);

    /* Ranges. */
    b = make(ctx, 1000, VKC_MEMORY_DEVICE);
    uint8_t data[1000] = {0};
    assert_int_equal(vkc_buffer_upload(b, 0, data, 1001), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_upload(b, 1, data, 1000), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_upload(b, 1001, data, 0), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_upload(b, UINT64_MAX, data, 2), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_upload(b, 2, data, UINT64_MAX), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_download(b, UINT64_MAX, data, 2), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_download(b, 999, data, 2), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_upload(b, 0, NULL, 4), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_download(b, 0, NULL, 4), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_fill(b, 0, 1004, 0), VKC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkc_buffer_fill(b, 1, 4, 0), VKC_ERROR_INVALID_ARGUMENT);
    /* Empty transfers at the end are fine. */
    assert_int_equal(vkc_buffer_upload(b, 1000, NULL, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_download(b, 1000, NULL, 0), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_vk(b, NULL, NULL), VKC_ERROR_INVALID_ARGUMENT);
    vkc_buffer_destroy(b);

    /* A non-mapped buffer has no mapping. */
    vkc__memory_force_staging(ctx, true);
    b = make(ctx, 64, VKC_MEMORY_DEVICE);
    assert_null(vkc_buffer_map(b));
    vkc_buffer_destroy(b);
    vkc__memory_force_staging(ctx, false);

    /* Foreign handles: a struct that is not a live buffer. */
    struct vkc_buffer fake;
    memset(&fake, 0, sizeof(fake));
    fake.obj.ctx = ctx;
    fake.size = 64;
    assert_int_equal(vkc_buffer_upload(&fake, 0, data, 4), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_buffer_download(&fake, 0, data, 4), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_buffer_fill(&fake, 0, 4, 0), VKC_ERROR_INVALID_HANDLE);
    VkBuffer vb = (VkBuffer)(uintptr_t)1;
    assert_int_equal(vkc_buffer_vk(&fake, &vb, NULL), VKC_ERROR_INVALID_HANDLE);
    assert_true(vb == VK_NULL_HANDLE);
    assert_null(vkc_buffer_map(&fake));
    assert_int_equal(vkc_buffer_size(&fake), 0);
    vkc_buffer_destroy(&fake); /* ignored */
    fake.obj.magic = VKC_MAGIC_KERNEL;
    assert_int_equal(vkc_buffer_upload(&fake, 0, data, 4), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_buffer_upload(NULL, 0, data, 4), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_buffer_download(NULL, 0, data, 4), VKC_ERROR_INVALID_HANDLE);
    assert_int_equal(vkc_buffer_fill(NULL, 0, 4, 0), VKC_ERROR_INVALID_HANDLE);
    assert_null(vkc_buffer_map(NULL));
    assert_int_equal(vkc_buffer_size(NULL), 0);
    vkc_buffer_destroy(NULL);
    vkc_test_quiet_errors(0);

    /* The context is still usable. */
    b = make(ctx, 16, VKC_MEMORY_UPLOAD);
    round_trip(ctx, b, 16, 3);
    vkc_buffer_destroy(b);
    vkc_stats st = stats(ctx);
    assert_int_equal(st.buffers, internal_buffers(ctx));
    vkc_test_context_destroy(ctx);
}

/* Buffers left alive are destroyed with the context (no leak, no message). */
static void test_destroyed_with_context(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    for (size_t k = 0; k < VKC_ARRAY_COUNT(kinds); ++k)
        (void)make(ctx, 1000 + k, kinds[k]);
    (void)make(ctx, DEDICATED_SIZE, VKC_MEMORY_DEVICE);
    vkc_test_context_destroy(ctx);
}

/* ---- fault injection: every fallible call of a staged round trip fails once ---- */

static void blocking_wait(vkc_context_desc *d)
{
    /* One driver wait per wait, so call counts do not depend on timing. */
    d->wait_mode = VKC_WAIT_BLOCK;
}

static vkc_result fault_sequence(vkc_context *ctx, const uint8_t *in, uint8_t *out, uint64_t n)
{
    vkc_buffer *a = NULL, *b = NULL;
    vkc_result r = vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n}, &a);
    if (r >= 0)
        r = vkc_buffer_create(
            ctx, &(vkc_buffer_desc){.size = DEDICATED_SIZE, .memory = VKC_MEMORY_UPLOAD}, &b);
    if (r >= 0)
        r = vkc_buffer_upload(a, 0, in, n);
    if (r >= 0)
        r = vkc_buffer_fill(b, 0, 64, 0x11111111u);
    if (r >= 0)
        r = vkc_buffer_copy(b, 4, a, 0, n);
    if (r >= 0)
        r = vkc_buffer_download(a, 0, out, n);
    if (r >= 0)
        assert_memory_equal(in, out, n);
    if (r >= 0)
        r = vkc_buffer_download(b, 4, out, n);
    if (r >= 0)
        assert_memory_equal(in, out, n);
    if (!a || !b)
        assert_true(r < 0);
    vkc_buffer_destroy(a);
    vkc_buffer_destroy(b);
    return r;
}

static void test_faults(void **state)
{
    (void)state;
    const uint64_t n = VKC_STAGING_RING_SIZE / 2 + 100; /* two chunks */
    uint8_t *in = malloc(n), *out = malloc(n);
    assert_non_null(in);
    assert_non_null(out);
    fill_random(in, n, 8);
    vkc_context *ctx = vkc_test_context_create(blocking_wait);
    vkc__memory_force_staging(ctx, true);
    vkc__memory_force_uncached(ctx, true); /* b: staged download, as on a GPU */
    unsigned failures = 0, lost = 0;
    for (uint64_t k = 1; k < 10000; ++k) {
        vkc_test_quiet_errors(1);
        vkc__fault = (vkc__fault_state){.armed = true, .fail_at = k};
        vkc_result r = fault_sequence(ctx, in, out, n);
        const char *failed = vkc__fault.failed_call;
        vkc__fault = (vkc__fault_state){0};
        vkc_test_quiet_errors(0);
        vkc_stats st = stats(ctx);
        assert_int_equal(st.buffers, 0);
        if (!failed) {
            assert_int_equal(r, VKC_SUCCESS);
            break;
        }
        failures++;
        if (atomic_load(&ctx->lost)) {
            /* A wait or submit reported device loss: start again. */
            lost++;
            vkc_test_context_destroy(ctx);
            ctx = vkc_test_context_create(blocking_wait);
            vkc__memory_force_staging(ctx, true);
            vkc__memory_force_uncached(ctx, true);
        }
    }
    printf("%u injected failures (%u latched device loss)\n", failures, lost);
    assert_true(failures > 10);
    /* Still works. */
    assert_int_equal(fault_sequence(ctx, in, out, n), VKC_SUCCESS);
    vkc_test_context_destroy(ctx);
    free(in);
    free(out);
}

/* ---- memory type choice on tables of real devices (pure) ------------------- */

#define DL VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
#define HV VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
#define HC VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
#define CA VK_MEMORY_PROPERTY_HOST_CACHED_BIT
#define GiB (1ull << 30)

static VkPhysicalDeviceMemoryProperties mem_table(const VkDeviceSize *heaps, uint32_t nheaps,
                                                  const VkMemoryPropertyFlags *flags,
                                                  const uint32_t *heap_of, uint32_t ntypes)
{
    VkPhysicalDeviceMemoryProperties mp;
    memset(&mp, 0, sizeof(mp));
    mp.memoryHeapCount = nheaps;
    for (uint32_t h = 0; h < nheaps; ++h) {
        mp.memoryHeaps[h].size = heaps[h] & ~1ull;
        /* odd size marks a device-local heap */
        mp.memoryHeaps[h].flags = (heaps[h] & 1) ? VK_MEMORY_HEAP_DEVICE_LOCAL_BIT : 0;
    }
    mp.memoryTypeCount = ntypes;
    for (uint32_t t = 0; t < ntypes; ++t) {
        mp.memoryTypes[t].propertyFlags = flags[t];
        mp.memoryTypes[t].heapIndex = heap_of[t];
    }
    return mp;
}

static uint32_t best(const VkPhysicalDeviceMemoryProperties *mp, vkc_memory kind, uint32_t bits)
{
    uint32_t out[VK_MAX_MEMORY_TYPES];
    uint32_t n = vkc__memory_pick_types(mp, kind, bits, out);
    return n ? out[0] : UINT32_MAX;
}

/* A DEVICE buffer in host-visible memory (resizable BAR, unified memory,
 * lavapipe) is the host's to read only once vkc_buffer_map or a download
 * says so: until then the work writing it ends without a host barrier;
 * from then on a sequence recorded before records again with it, and the
 * host reads every result (against the count kept here). */
static void test_host_reads(void **state)
{
    (void)state;
    vkc_context *ctx = vkc_test_context_create(NULL);
    vkc_kernel *k;
    vkc_buffer *x;
    vkc_seq *s;
    const uint32_t n = 64;
    assert_int_equal(vkc_kernel_create_glsl(
                         ctx, &(vkc_glsl_desc){.source = vkc_test_inc_glsl, .name = "inc"}, &k),
                     VKC_SUCCESS);
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &x), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(x, 0, n * 4, 0), VKC_SUCCESS);
    assert_int_equal(vkc_seq_create(ctx, &(vkc_seq_desc){.name = "host reads"}, &s), VKC_SUCCESS);
    vkc_arg a = {.buffer = x, .access = VKC_ACCESS_READ_WRITE};
    assert_int_equal(
        vkc_seq_dispatch(
            s,
            &(vkc_dispatch_desc){
                .kernel = k, .args = &a, .arg_count = 1, .push = &n, .push_size = 4, .count = n}),
        VKC_SUCCESS);
    assert_int_equal(vkc_seq_end(s), VKC_SUCCESS);
    uint32_t count = 0;
    for (int i = 0; i < 3; ++i, ++count) {
        vkc_ticket t;
        assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
        assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
    }
    assert_false(s->writes_mapped);
    assert_false(atomic_load(&x->host_read));
    const uint32_t epoch = atomic_load(&ctx->map_epoch);
    const volatile uint32_t *m = vkc_buffer_map(x);
    if (!m) { /* not host-visible here: nothing to read through */
        print_message("      skipped: DEVICE memory is not host-visible on this device\n");
    } else {
        assert_true(atomic_load(&x->host_read));
        assert_int_equal(atomic_load(&ctx->map_epoch), epoch + 1);
        for (uint32_t i = 0; i < n; ++i)
            assert_int_equal(m[i], count);
        for (int i = 0; i < 3; ++i, ++count) {
            vkc_ticket t;
            assert_int_equal(vkc_seq_submit(s, &t), VKC_SUCCESS);
            assert_true(s->writes_mapped);
            assert_int_equal(vkc_wait(ctx, t, UINT64_MAX), VKC_SUCCESS);
            for (uint32_t j = 0; j < n; ++j)
                assert_int_equal(m[j], count + 1);
        }
        /* A second map moves nothing. */
        assert_ptr_equal(vkc_buffer_map(x), m);
        assert_int_equal(atomic_load(&ctx->map_epoch), epoch + 1);
    }
    /* A download of a second buffer says the same (where it reads the
     * mapping directly). */
    vkc_buffer *y;
    assert_int_equal(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = n * 4}, &y), VKC_SUCCESS);
    assert_int_equal(vkc_buffer_fill(y, 0, n * 4, 7), VKC_SUCCESS);
    uint32_t got[64];
    assert_int_equal(vkc_buffer_download(y, 0, got, sizeof(got)), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(got[i], 7u);
    /* 256 bytes: below VKC_UNCACHED_READ_MAX, read through any mapping. */
    _Static_assert(sizeof(got) <= VKC_UNCACHED_READ_MAX, "a direct read");
    if (y->mapped)
        assert_true(atomic_load(&y->host_read));
    uint32_t want[64];
    assert_int_equal(vkc_buffer_download(x, 0, want, sizeof(want)), VKC_SUCCESS);
    for (uint32_t i = 0; i < n; ++i)
        assert_int_equal(want[i], count);
    vkc_buffer_destroy(y);
    vkc_seq_destroy(s);
    vkc_buffer_destroy(x);
    vkc_kernel_destroy(k);
    vkc_test_context_destroy(ctx);
}

static void test_type_choice(void **state)
{
    (void)state;
    /* NVIDIA H200 (driver 580, resizable BAR over all of VRAM). */
    {
        const VkDeviceSize heaps[] = {140 * GiB + 1, 94 * GiB};
        const VkMemoryPropertyFlags f[] = {0, DL, HV | HC, HV | HC | CA, DL | HV | HC};
        const uint32_t h[] = {1, 0, 1, 1, 0};
        VkPhysicalDeviceMemoryProperties mp = mem_table(heaps, 2, f, h, 5);
        assert_int_equal(best(&mp, VKC_MEMORY_DEVICE, 0x1f), 4);
        assert_int_equal(best(&mp, VKC_MEMORY_UPLOAD, 0x1f), 4);
        assert_int_equal(best(&mp, VKC_MEMORY_READBACK, 0x1f), 3);
        /* Falling back: the next candidate of DEVICE is plain VRAM. */
        uint32_t out[VK_MAX_MEMORY_TYPES];
        uint32_t n = vkc__memory_pick_types(&mp, VKC_MEMORY_DEVICE, 0x1f, out);
        assert_true(n >= 2);
        assert_int_equal(out[1], 1);
        /* memoryTypeBits restrict the choice. */
        assert_int_equal(best(&mp, VKC_MEMORY_DEVICE, 0x0f), 1);
        assert_int_equal(best(&mp, VKC_MEMORY_UPLOAD, 0x0f), 2);
        assert_int_equal(best(&mp, VKC_MEMORY_READBACK, 0x04), 2);
        assert_int_equal(best(&mp, VKC_MEMORY_UPLOAD, 0x02), UINT32_MAX);
    }
    /* Discrete GPU with the classic 256 MiB BAR as a heap of its own. */
    {
        const VkDeviceSize heaps[] = {24 * GiB + 1, 64 * GiB, (256ull << 20) + 1};
        const VkMemoryPropertyFlags f[] = {DL, HV | HC, HV | HC | CA, DL | HV | HC};
        const uint32_t h[] = {0, 1, 1, 2};
        VkPhysicalDeviceMemoryProperties mp = mem_table(heaps, 3, f, h, 4);
        assert_int_equal(best(&mp, VKC_MEMORY_DEVICE, 0xf), 0);
        assert_int_equal(best(&mp, VKC_MEMORY_UPLOAD, 0xf), 1);
        assert_int_equal(best(&mp, VKC_MEMORY_READBACK, 0xf), 2);
    }
    /* Integrated GPU: one heap, everything device-local. */
    {
        const VkDeviceSize heaps[] = {16 * GiB + 1};
        const VkMemoryPropertyFlags f[] = {DL, DL | HV | HC, DL | HV | HC | CA};
        const uint32_t h[] = {0, 0, 0};
        VkPhysicalDeviceMemoryProperties mp = mem_table(heaps, 1, f, h, 3);
        assert_int_equal(best(&mp, VKC_MEMORY_DEVICE, 0x7), 2);
        assert_int_equal(best(&mp, VKC_MEMORY_UPLOAD, 0x7), 1);
        assert_int_equal(best(&mp, VKC_MEMORY_READBACK, 0x7), 2);
    }
    /* lavapipe: a single all-purpose type. */
    {
        const VkDeviceSize heaps[] = {2 * GiB + 1};
        const VkMemoryPropertyFlags f[] = {DL | HV | HC | CA};
        const uint32_t h[] = {0};
        VkPhysicalDeviceMemoryProperties mp = mem_table(heaps, 1, f, h, 1);
        for (size_t k = 0; k < VKC_ARRAY_COUNT(kinds); ++k)
            assert_int_equal(best(&mp, kinds[k], 0x1), 0);
    }
    /* Non-coherent host memory is still usable (flushed by vkc); protected
     * memory never. */
    {
        const VkDeviceSize heaps[] = {8 * GiB + 1, 8 * GiB};
        const VkMemoryPropertyFlags f[] = {DL | VK_MEMORY_PROPERTY_PROTECTED_BIT, HV | CA, DL};
        const uint32_t h[] = {0, 1, 0};
        VkPhysicalDeviceMemoryProperties mp = mem_table(heaps, 2, f, h, 3);
        assert_int_equal(best(&mp, VKC_MEMORY_DEVICE, 0x7), 2);
        assert_int_equal(best(&mp, VKC_MEMORY_DEVICE, 0x1), UINT32_MAX);
        assert_int_equal(best(&mp, VKC_MEMORY_UPLOAD, 0x7), 1);
        assert_int_equal(best(&mp, VKC_MEMORY_READBACK, 0x7), 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_staged),
        cmocka_unit_test(test_uncached),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_many_small),
        cmocka_unit_test(test_dedicated),
        cmocka_unit_test(test_steady_state),
        cmocka_unit_test(test_beyond_storage_range),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_destroyed_with_context),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_type_choice),
        cmocka_unit_test(test_host_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
