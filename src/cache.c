/* Caches: the SPIR-V cache of run-time compiled GLSL (in memory, and on
 * disk under <cache_dir>/spirv/) and the Vulkan pipeline cache (on disk as
 * <cache_dir>/pipelines-<vendor>-<device>-<driver>-<uuids>.bin), with the
 * file helpers both use: whole-file reads, mkdir -p, atomic writes, and
 * vkc's entry (header, key, body). An entry is used only when the key stored
 * inside it equals, byte for byte, the key of what is asked for: a file name
 * is a 64-bit hash, too weak for identity, and a file can be swapped, copied
 * from another machine or cut short.
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
    vkc__cache_key key; /* owned copy */
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
    vkc__cache_key key;     /* of the pipeline cache file */
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

/* ---- keys and entries ---------------------------------------------------------------- */

/* Bump when the key material or the entry layout changes: older entries
 * then fail the key comparison (or the magic) and are rebuilt. */
#define VKC_CACHE_FORMAT "vkc cache format 2"

typedef struct vkc__field {
    const void *p;
    size_t n;
} vkc__field;

/* A key from fields, each length-prefixed so ("ab","c") and ("a","bc")
 * differ, behind the cache-format version. Returns false when out of memory. */
static bool vkc__key_make(const vkc__field *f, uint32_t count, vkc__cache_key *key)
{
    static const char format[] = VKC_CACHE_FORMAT;
    size_t size = sizeof(format);
    for (uint32_t i = 0; i < count; ++i)
        size += sizeof(uint64_t) + f[i].n;
    memset(key, 0, sizeof(*key));
    uint8_t *b = vkc__malloc(size);
    if (!b)
        return false;
    memcpy(b, format, sizeof(format));
    size_t at = sizeof(format);
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t n = f[i].n;
        memcpy(b + at, &n, sizeof(n));
        at += sizeof(n);
        if (f[i].n)
            memcpy(b + at, f[i].p, f[i].n);
        at += f[i].n;
    }
    key->bytes = b;
    key->size = size;
    key->hash = vkc__hash64(VKC_HASH_SEED, b, size);
    return true;
}

void vkc__cache_key_free(vkc__cache_key *key)
{
    vkc__free(key->bytes);
    memset(key, 0, sizeof(*key));
}

static bool vkc__key_equal(const vkc__cache_key *a, const vkc__cache_key *b)
{
    return a->hash == b->hash && a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

/* What a cache file holds: this header, the key the body was made from,
 * the body. The checksum catches truncated and corrupted files before
 * anyone parses the body; the key catches swapped and foreign ones. */
typedef struct vkc__entry_header {
    char magic[8];     /* which kind of entry, and its format version */
    uint64_t size;     /* of the body */
    uint64_t hash;     /* FNV-1a of key and body */
    uint64_t key_size; /* of the key, which follows this header */
} vkc__entry_header;

static uint64_t vkc__entry_hash(const uint8_t *key, size_t key_size, const uint8_t *body,
                                size_t body_size)
{
    return vkc__hash64(vkc__hash64(VKC_HASH_SEED, key, key_size), body, body_size);
}

/* The body of a file read whole, if it is an entry of this kind made from
 * key; NULL when fine, else why not. */
static const char *vkc__entry_open(const void *file, size_t file_size, const char magic[8],
                                   const vkc__cache_key *key, const uint8_t **body,
                                   size_t *body_size)
{
    vkc__entry_header h;
    if (file_size < sizeof(h))
        return "truncated (shorter than vkc's header)";
    memcpy(&h, file, sizeof(h));
    const uint8_t *k = (const uint8_t *)file + sizeof(h);
    size_t rest = file_size - sizeof(h);
    if (memcmp(h.magic, magic, 8) != 0)
        return "not a vkc cache entry of this kind and format (bad magic)";
    if (h.key_size > rest || h.size != rest - h.key_size)
        return "truncated or padded (size mismatch)";
    const uint8_t *b = k + h.key_size;
    if (h.hash != vkc__entry_hash(k, (size_t)h.key_size, b, (size_t)h.size))
        return "corrupt (checksum mismatch)";
    if (h.key_size != key->size || memcmp(k, key->bytes, key->size) != 0)
        return "made from another key (a swapped or foreign file, or another compiler, "
               "device, driver or cache format)";
    *body = b;
    *body_size = (size_t)h.size;
    return NULL;
}

/* Write an entry (header, key, body) to path, creating dir. Returns 0 or
 * an errno value. */
static int vkc__entry_write(const char *dir, const char *path, const char magic[8],
                            const vkc__cache_key *key, const void *body, size_t size)
{
    vkc__entry_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, magic, 8);
    h.size = size;
    h.key_size = key->size;
    h.hash = vkc__entry_hash(key->bytes, key->size, body, size);
    size_t head_size = sizeof(h) + key->size;
    uint8_t *head = vkc__malloc(head_size);
    if (!head)
        return ENOMEM;
    memcpy(head, &h, sizeof(h));
    memcpy(head + sizeof(h), key->bytes, key->size);
    int err = vkc__mkdirs(dir);
    if (!err)
        err = vkc__write_file_atomic(path, head, head_size, body, size);
    vkc__free(head);
    return err;
}

/* ---- pipeline cache ----------------------------------------------------------------- */

static const char vkc__cache_magic[8] = {'V', 'K', 'C', 'P', 'I', 'P', 'E', '2'};

/* The pipeline cache's key: the device and the driver build. */
static bool vkc__pipeline_key(const vkc_context *ctx, vkc__cache_key *key)
{
    const vkc_device_info *i = &ctx->info;
    const vkc__field f[] = {
        {"pipelines", 10},
        {&i->vendor_id, sizeof(i->vendor_id)},
        {&i->device_id, sizeof(i->device_id)},
        {&i->driver_version, sizeof(i->driver_version)},
        {i->pipeline_cache_uuid, sizeof(i->pipeline_cache_uuid)},
        {i->device_uuid, sizeof(i->device_uuid)},
        {i->driver_uuid, sizeof(i->driver_uuid)},
    };
    return vkc__key_make(f, VKC_ARRAY_COUNT(f), key);
}

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
        if (!vkc__pipeline_key(ctx, &c->key))
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "pipeline cache key");
        int err = vkc__read_file(c->cache_path, &file, &file_size);
        const char *why = NULL;
        if (err == 0) {
            const uint8_t *body = NULL;
            size_t body_size = 0;
            why = vkc__entry_open(file, file_size, vkc__cache_magic, &c->key, &body, &body_size);
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
    if (!c->own_cache || !c->cache || !c->cache_path[0] || !c->key.bytes ||
        !atomic_load(&c->cache_used))
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
        int err =
            vkc__entry_write(ctx->cache_dir, c->cache_path, vkc__cache_magic, &c->key, data, size);
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
    const char *env = vkc__env_string("VKC_CACHE_DIR");
    const char *xdg = vkc__env_string("XDG_CACHE_HOME");
    const char *home = vkc__env_string("HOME");
    /* Room in cache_dir (512) for the longest name under it (the pipeline cache's). */
    if (env && strlen(env) > 350) {
        vkc__env_ignored(ctx, "VKC_CACHE_DIR", env, "a directory path of at most 350 bytes",
                         "the default: $XDG_CACHE_HOME/vkc or ~/.cache/vkc");
        env = NULL;
    }
    if (env)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s", env);
    else if (xdg)
        snprintf(ctx->cache_dir, sizeof(ctx->cache_dir), "%s/vkc", xdg);
    else if (home)
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
    for (uint32_t i = 0; i < c->spv_count; ++i) {
        vkc__free(c->spv[i].words);
        vkc__cache_key_free(&c->spv[i].key);
    }
    vkc__free(c->spv);
    vkc__cache_key_free(&c->key);
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

static const char vkc__spv_magic[8] = {'V', 'K', 'C', 'S', 'P', 'I', 'R', '2'};

bool vkc__spv_cache_key(const vkc_context *ctx, const char *source, const char *preamble,
                        const char *entry, const char *compiler, const char *target,
                        vkc__cache_key *key)
{
    /* The strings with their terminators, so NULL (size 0) and "" differ. */
#define VKC__STRING_FIELD(x)                                                                       \
    {                                                                                              \
        (x), (x) ? strlen(x) + 1 : 0                                                               \
    }
    const vkc_device_info *i = &ctx->info;
    const vkc__field f[] = {
        {"spirv", 6},
        VKC__STRING_FIELD(source),
        VKC__STRING_FIELD(preamble),
        VKC__STRING_FIELD(entry),
        VKC__STRING_FIELD(compiler),
        VKC__STRING_FIELD(target),
        {i->device_uuid, sizeof(i->device_uuid)},
        {i->driver_uuid, sizeof(i->driver_uuid)},
    };
#undef VKC__STRING_FIELD
    return vkc__key_make(f, VKC_ARRAY_COUNT(f), key);
}

static void vkc__spv_path(const vkc_context *ctx, const vkc__cache_key *key, char *path,
                          size_t size)
{
    snprintf(path, size, "%s/spirv/%016llx.spv", ctx->cache_dir, (unsigned long long)key->hash);
}

/* The module of key read from disk; NULL (with a warning where a file was
 * there but unusable) when there is none to use. */
static void *vkc__spv_disk_get(vkc_context *ctx, const vkc__cache_key *key, size_t *size)
{
    char path[1100];
    vkc__spv_path(ctx, key, path, sizeof(path));
    void *file = NULL;
    size_t fsize = 0;
    int err = vkc__read_file(path, &file, &fsize);
    if (err) {
        if (err != ENOENT)
            vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE,
                     "SPIR-V cache %s unreadable (%s); compiling again", path, strerror(err));
        return NULL;
    }
    const uint8_t *body = NULL;
    size_t body_size = 0;
    char msg[512];
    const char *why = vkc__entry_open(file, fsize, vkc__spv_magic, key, &body, &body_size);
    /* Copied out before validating: the body follows the key, unaligned. */
    uint32_t *words = why ? NULL : vkc__malloc(body_size ? body_size : 1);
    if (words) {
        memcpy(words, body, body_size);
        /* A file is untrusted input: a key that matches does not make the
         * body a valid module. */
        if (!vkc__spirv_file_ok(ctx, words, body_size, msg, sizeof(msg))) {
            why = msg;
            vkc__free(words);
            words = NULL;
        }
    }
    if (why)
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE,
                 "SPIR-V cache %s ignored: %s; compiling again", path, why);
    else if (words)
        *size = body_size;
    vkc__free(file);
    return words;
}

bool vkc__spv_cache_get(vkc_context *ctx, vkc__cache *c, const vkc__cache_key *key,
                        uint32_t **words, size_t *size)
{
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < c->spv_count; ++i) {
        if (!vkc__key_equal(&c->spv[i].key, key))
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
    *words = vkc__spv_disk_get(ctx, key, size);
    return *words != NULL;
}

static void vkc__spv_memory_put(vkc__cache *c, const vkc__cache_key *key, const uint32_t *words,
                                size_t size)
{
    uint32_t *copy = vkc__malloc(size);
    uint8_t *key_copy = vkc__malloc(key->size);
    if (!copy || !key_copy) {
        vkc__free(copy);
        vkc__free(key_copy);
        return;
    }
    memcpy(copy, words, size);
    memcpy(key_copy, key->bytes, key->size);
    pthread_mutex_lock(&c->lock);
    bool keep = true;
    for (uint32_t i = 0; keep && i < c->spv_count; ++i)
        keep = !vkc__key_equal(&c->spv[i].key, key); /* else another thread was first */
    if (keep && c->spv_count == c->spv_cap) {
        uint32_t cap = c->spv_cap ? 2 * c->spv_cap : 16;
        vkc__spv_entry *p = vkc__realloc(c->spv, cap * sizeof(*p));
        if (p) {
            c->spv = p;
            c->spv_cap = cap;
        }
        keep = p != NULL;
    }
    if (keep)
        c->spv[c->spv_count++] = (vkc__spv_entry){{key_copy, key->size, key->hash}, copy, size};
    pthread_mutex_unlock(&c->lock);
    if (!keep) {
        vkc__free(copy);
        vkc__free(key_copy);
    }
}

void vkc__spv_cache_put(vkc_context *ctx, vkc__cache *c, const vkc__cache_key *key,
                        const uint32_t *words, size_t size, bool persist)
{
    vkc__spv_memory_put(c, key, words, size);
    if (!persist || !ctx->disk_cache)
        return;
    char dir[1100], path[1100];
    snprintf(dir, sizeof(dir), "%s/spirv", ctx->cache_dir);
    vkc__spv_path(ctx, key, path, sizeof(path));
    int err = vkc__entry_write(dir, path, vkc__spv_magic, key, words, size);
    if (err)
        vkc__log(ctx, VKC_LOG_WARN, VKC_LOG_ID_CACHE, "SPIR-V cache %s not saved: %s", path,
                 strerror(err));
}
