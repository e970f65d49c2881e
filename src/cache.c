/* Caches: the SPIR-V cache of run-time compiled GLSL (in memory, and on
 * disk under <cache_dir>/spirv/) and the Vulkan pipeline cache (on disk as
 * <cache_dir>/pipelines-<vendor>-<device>-<driver>-<uuids>.bin), with the
 * file helpers both use: whole-file reads, mkdir -p, atomic writes, and
 * vkc's entry header (magic, size, checksum) in front of what a file holds.
 * Also the one hash function (FNV-1a) of keys, checksums and fusion.
 *
 * Owns struct vkc__cache (vkc__kstate.cache) and the cache files. Calls
 * the device's pipeline-cache functions and spirv.c's validator (a SPIR-V
 * file is untrusted input); nothing else of vkc's. */
#include "vkc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct vkc__spv_entry {
    uint64_t hash;
    uint32_t *words;
    size_t size; /* bytes */
} vkc__spv_entry;

struct vkc__cache {
    pthread_mutex_t lock; /* guards the SPIR-V memory cache */
    vkc__spv_entry *spv;
    uint32_t spv_count, spv_cap;

    VkPipelineCache cache; /* vkc's own or the host's */
    bool own_cache;
    atomic_bool cache_used; /* a pipeline was created through it */
    char cache_path[1024];  /* "" = not persisted */
};

static atomic_uint_fast64_t vkc__tmp_counter;

/* ---- hashing -------------------------------------------------------------------- */

uint64_t vkc__hash64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t vkc__hash_field(uint64_t h, const char *s)
{
    uint64_t n = s ? strlen(s) + 1 : 0;
    h = vkc__hash64(h, &n, sizeof(n));
    return s ? vkc__hash64(h, s, n) : h;
}

int vkc__read_file(const char *path, void **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno ? errno : EIO;
    int err = 0;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        err = errno ? errno : EIO;
        goto done;
    }
    if ((unsigned long)len > VKC_MAX_FILE_BYTES) {
        err = EFBIG;
        goto done;
    }
    unsigned char *buf = vkc__malloc((size_t)len + 4);
    if (!buf) {
        err = ENOMEM;
        goto done;
    }
    if (len && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        err = ferror(f) ? EIO : ENODATA;
        vkc__free(buf);
        goto done;
    }
    *out = buf;
    *out_size = (size_t)len;
done:
    fclose(f);
    return err;
}

/* mkdir -p. Returns 0 or an errno value. */
static int vkc__mkdirs(const char *dir)
{
    char tmp[1024];
    int n = snprintf(tmp, sizeof(tmp), "%s", dir);
    if (n <= 0 || (size_t)n >= sizeof(tmp))
        return ENAMETOOLONG;
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return errno;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return errno;
    return 0;
}

/* Write head+body to a temporary file beside path, then rename it over path,
 * so a reader never sees a half-written file. Returns 0 or an errno value. */
static int vkc__write_file_atomic(const char *path, const void *head, size_t head_size,
                                  const void *body, size_t body_size)
{
    char tmp[1100];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%llu", path, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&vkc__tmp_counter, 1));
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return errno ? errno : EIO;
    bool ok = (!head_size || fwrite(head, 1, head_size, f) == head_size) &&
              (!body_size || fwrite(body, 1, body_size, f) == body_size);
    int err = ok ? 0 : (errno ? errno : EIO);
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err && rename(tmp, path) != 0)
        err = errno ? errno : EIO;
    if (err)
        remove(tmp);
    return err;
}

/* ---- entries: vkc's header in front of a file's body ------------------------------ */

/* Catches truncated and corrupted files before anyone parses the body.
 * reserved is 0; a stronger key (what the body was made from) can take its
 * place, and be checked here, without a second file format. */
typedef struct vkc__entry_header {
    char magic[8]; /* which kind of entry, and its format version */
    uint64_t size; /* of the body that follows */
    uint64_t hash; /* FNV-1a of the body */
    uint64_t reserved;
} vkc__entry_header;

/* The body of a file read whole; NULL when fine, else why not. */
static const char *vkc__entry_open(const void *file, size_t file_size, const char magic[8],
                                   const uint8_t **body, size_t *body_size)
{
    vkc__entry_header h;
    if (file_size < sizeof(h))
        return "truncated (shorter than vkc's header)";
    memcpy(&h, file, sizeof(h));
    const uint8_t *b = (const uint8_t *)file + sizeof(h);
    if (memcmp(h.magic, magic, 8) != 0)
        return "not a vkc pipeline cache (bad magic)";
    if (h.size != file_size - sizeof(h))
        return "truncated or padded (size mismatch)";
    if (h.hash != vkc__hash64(VKC_HASH_SEED, b, (size_t)h.size))
        return "corrupt (checksum mismatch)";
    *body = b;
    *body_size = (size_t)h.size;
    return NULL;
}

/* Write header (when magic is not NULL) and body to path, creating dir.
 * Returns 0 or an errno value. */
static int vkc__entry_write(const char *dir, const char *path, const char *magic, const void *body,
                            size_t size)
{
    vkc__entry_header h;
    memset(&h, 0, sizeof(h));
    if (magic) {
        memcpy(h.magic, magic, 8);
        h.size = size;
        h.hash = vkc__hash64(VKC_HASH_SEED, body, size);
    }
    int err = vkc__mkdirs(dir);
    if (!err)
        err = vkc__write_file_atomic(path, &h, magic ? sizeof(h) : 0, body, size);
    return err;
}

/* ---- pipeline cache ----------------------------------------------------------------- */

/* ---- pipeline cache ----------------------------------------------------------------- */

static const char vkc__cache_magic[8] = {'V', 'K', 'C', 'P', 'I', 'P', 'E', '1'};

static void vkc__hex(char *out, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Check a driver cache blob against this device (VkPipelineCacheHeaderVersionOne).
 * Returns NULL when fine, else why not. */
static const char *vkc__cache_data_check(const vkc_context *ctx, const uint8_t *data, size_t size)
{
    VkPipelineCacheHeaderVersionOne h;
    if (size < sizeof(h))
        return "truncated (shorter than the Vulkan header)";
    memcpy(&h, data, sizeof(h));
    if (h.headerSize < sizeof(h) || h.headerSize > size)
        return "bad header length";
    if (h.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
        return "unknown header version";
    if (h.vendorID != ctx->info.vendor_id || h.deviceID != ctx->info.device_id)
        return "written for another device";
    if (memcmp(h.pipelineCacheUUID, ctx->info.pipeline_cache_uuid, VK_UUID_SIZE) != 0)
        return "written by another driver version (pipelineCacheUUID differs)";
    return NULL;
}

static vkc_result vkc__pipeline_cache_init(vkc_context *ctx, vkc__cache *c)
{
    if (ctx->host_pipeline_cache) {
        c->cache = ctx->host_pipeline_cache;
        return VKC_SUCCESS;
    }
    void *file = NULL;
    size_t file_size = 0;
    const uint8_t *data = NULL;
    size_t data_size = 0;
    if (ctx->disk_cache) {
        char uuid[33], dev[33];
        vkc__hex(uuid, ctx->info.pipeline_cache_uuid, 16);
        vkc__hex(dev, ctx->info.device_uuid, 16);
        snprintf(c->cache_path, sizeof(c->cache_path), "%s/pipelines-%08x-%08x-%08x-%s-%s.bin",
                 ctx->cache_dir, ctx->info.vendor_id, ctx->info.device_id, ctx->info.driver_version,
                 uuid, dev);
        int err = vkc__read_file(c->cache_path, &file, &file_size);
        const char *why = NULL;
        if (err == 0) {
            const uint8_t *body = NULL;
            size_t body_size = 0;
            why = vkc__entry_open(file, file_size, vkc__cache_magic, &body, &body_size);
            if (!why && !(why = vkc__cache_data_check(ctx, body, body_size))) {
                data = body;
                data_size = body_size;
            }
        } else if (err != ENOENT) {
            why = strerror(err);
        }
        if (why)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE,
                     "pipeline cache %s ignored: %s; starting empty", c->cache_path, why);
    }
    VkPipelineCacheCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    ci.initialDataSize = data_size;
    ci.pInitialData = data;
    VkResult vr = VKC_VK(vkCreatePipelineCache,
                         ctx->vk.vkCreatePipelineCache(ctx->device, &ci, ctx->alloc, &c->cache));
    vkc__free(file);
    if (vr < 0)
        return vkc__vk_fail(ctx, vr, "vkCreatePipelineCache", __FILE__, __LINE__);
    c->own_cache = true;
    vkc__set_name(ctx, VK_OBJECT_TYPE_PIPELINE_CACHE, (uint64_t)c->cache, "vkc pipeline cache");
    if (data_size) {
        VKC_STAT_ADD(ctx, pipeline_cache_hits, 1);
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_CACHE, "pipeline cache loaded: %s (%zu bytes)",
                 c->cache_path, data_size);
    }
    return VKC_SUCCESS;
}

static void vkc__pipeline_cache_save(vkc_context *ctx, vkc__cache *c)
{
    if (!c->own_cache || !c->cache || !c->cache_path[0] || !atomic_load(&c->cache_used))
        return;
    size_t size = 0;
    VkResult vr = VKC_VK(vkGetPipelineCacheData,
                         ctx->vk.vkGetPipelineCacheData(ctx->device, c->cache, &size, NULL));
    if (vr < 0 || !size)
        return;
    void *data = vkc__malloc(size);
    if (!data)
        return;
    vr = VKC_VK(vkGetPipelineCacheData,
                ctx->vk.vkGetPipelineCacheData(ctx->device, c->cache, &size, data));
    if (vr == VK_SUCCESS && !vkc__cache_data_check(ctx, data, size)) {
        int err = vkc__entry_write(ctx->cache_dir, c->cache_path, vkc__cache_magic, data, size);
        if (err)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "pipeline cache %s not saved: %s",
                     c->cache_path, strerror(err));
        else
            vkc__log(ctx, VKC_LOG_DEBUG, VKC_LOG_ID_CACHE, "pipeline cache saved: %s (%zu bytes)",
                     c->cache_path, size);
    }
    vkc__free(data);
}

static void vkc__resolve_cache_dir(vkc_context *ctx)
{
    if (!ctx->disk_cache || ctx->cache_dir[0])
        return;
    const char *env = getenv("VKC_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s", env);
    else if (xdg && *xdg)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s/vkc", xdg);
    else if (home && *home)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s/.cache/vkc", home);
    else {
        ctx->disk_cache = false;
        vkc__log(ctx, VKC_LOG_INFO, VKC_LOG_ID_CACHE,
                 "no cache directory (VKC_CACHE_DIR, XDG_CACHE_HOME and HOME unset): caches "
                 "are kept in memory only");
    }
}

vkc_result vkc__cache_init(vkc_context *ctx, vkc__cache **out)
{
    vkc__cache *c = vkc__calloc(1, sizeof(*c));
    *out = c;
    if (!c)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "cache state");
    pthread_mutex_init(&c->lock, NULL);
    atomic_init(&c->cache_used, false);
    vkc__resolve_cache_dir(ctx);
    return vkc__pipeline_cache_init(ctx, c);
}

void vkc__cache_finish(vkc_context *ctx, vkc__cache *c)
{
    if (!c)
        return;
    vkc__pipeline_cache_save(ctx, c);
    if (c->own_cache && c->cache)
        ctx->vk.vkDestroyPipelineCache(ctx->device, c->cache, ctx->alloc);
    for (uint32_t i = 0; i < c->spv_count; ++i)
        vkc__free(c->spv[i].words);
    vkc__free(c->spv);
    pthread_mutex_destroy(&c->lock);
    vkc__free(c);
}

VkPipelineCache vkc__cache_pipelines(const vkc__cache *c)
{
    return c->cache;
}

void vkc__cache_pipeline_used(vkc__cache *c)
{
    atomic_store(&c->cache_used, true);
}

/* ---- SPIR-V cache ------------------------------------------------------------------- */

uint64_t vkc__spv_cache_key(const char *source, const char *preamble, const char *entry,
                            const char *compiler, const char *target)
{
    uint64_t h = VKC_HASH_SEED;
    h = vkc__hash_field(h, source);
    h = vkc__hash_field(h, preamble);
    h = vkc__hash_field(h, entry);
    h = vkc__hash_field(h, compiler);
    return vkc__hash_field(h, target);
}

static void vkc__spv_path(const vkc_context *ctx, uint64_t key, char *path, size_t size)
{
    snprintf(path, size, "%s/spirv/%016llx.spv", ctx->cache_dir, (unsigned long long)key);
}

bool vkc__spv_cache_get(vkc_context *ctx, vkc__cache *c, uint64_t key, uint32_t **words,
                        size_t *size)
{
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < c->spv_count; ++i) {
        if (c->spv[i].hash != key)
            continue;
        uint32_t *copy = vkc__malloc(c->spv[i].size);
        if (copy) {
            memcpy(copy, c->spv[i].words, c->spv[i].size);
            *words = copy;
            *size = c->spv[i].size;
        }
        pthread_mutex_unlock(&c->lock);
        return copy != NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (!ctx->disk_cache)
        return false;
    char path[1100];
    vkc__spv_path(ctx, key, path, sizeof(path));
    void *file = NULL;
    size_t fsize = 0;
    int err = vkc__read_file(path, &file, &fsize);
    if (err) {
        if (err != ENOENT)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "SPIR-V cache %s unreadable: %s", path,
                     strerror(err));
        return false;
    }
    char msg[512];
    if (!vkc__spirv_file_ok(ctx, file, fsize, msg, sizeof(msg))) {
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE,
                 "SPIR-V cache %s ignored (%s); compiling again", path, msg);
        vkc__free(file);
        return false;
    }
    *words = file;
    *size = fsize;
    return true;
}

static void vkc__spv_memory_put(vkc__cache *c, uint64_t key, const uint32_t *words, size_t size)
{
    uint32_t *copy = vkc__malloc(size);
    if (!copy)
        return;
    memcpy(copy, words, size);
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < c->spv_count; ++i) {
        if (c->spv[i].hash == key) { /* another thread was first */
            pthread_mutex_unlock(&c->lock);
            vkc__free(copy);
            return;
        }
    }
    if (c->spv_count == c->spv_cap) {
        uint32_t cap = c->spv_cap ? 2 * c->spv_cap : 16;
        vkc__spv_entry *p = vkc__realloc(c->spv, cap * sizeof(*p));
        if (!p) {
            pthread_mutex_unlock(&c->lock);
            vkc__free(copy);
            return;
        }
        c->spv = p;
        c->spv_cap = cap;
    }
    c->spv[c->spv_count++] = (vkc__spv_entry){key, copy, size};
    pthread_mutex_unlock(&c->lock);
}

void vkc__spv_cache_put(vkc_context *ctx, vkc__cache *c, uint64_t key, const uint32_t *words,
                        size_t size, bool persist)
{
    vkc__spv_memory_put(c, key, words, size);
    if (!persist || !ctx->disk_cache)
        return;
    /* Raw SPIR-V, no entry header: the file is checked by the validator
     * when read back. */
    char dir[1100], path[1100];
    snprintf(dir, sizeof(dir), "%s/spirv", ctx->cache_dir);
    vkc__spv_path(ctx, key, path, sizeof(path));
    int err = vkc__entry_write(dir, path, NULL, words, size);
    if (err)
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "SPIR-V cache %s not saved: %s", path,
                 strerror(err));
}
