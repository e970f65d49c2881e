/* Objects: the one lifetime rule of every kind, and resource sets.
 *
 * Every object (buffer, kernel, sequence, fusion graph, resource set)
 * starts with a vkc__obj. The user's handle is one reference; a resource
 * set holds one per object it names; the object is freed when the last
 * goes. So a destroy never waits for the GPU and never frees what a
 * recorded command or in-flight work still names: the references of a
 * sequence's set go when the sequence is recorded again or destroyed and
 * every recording unit recorded from it has retired (its last submit's
 * timeline value completed). Replays take no reference: the set was
 * retained at record time.
 *
 * Owns: vkc__obj, vkc__rset. Calls: context (objects_lock, errors) and
 * each kind's free function; nothing else. */
#include "vkc_internal.h"

void vkc__obj_init(vkc__obj *o, uint32_t magic, vkc_context *ctx, const char *name,
                   void (*free_fn)(vkc__obj *o), vkc__node *list)
{
    o->magic = magic;
    o->kind = magic;
    atomic_init(&o->refs, 1);
    atomic_init(&o->held, 0);
    o->ctx = ctx;
    o->name = name;
    o->free = free_fn;
    o->node.prev = o->node.next = NULL;
    if (list) {
        pthread_mutex_lock(&ctx->objects_lock);
        vkc__list_push(list, &o->node);
        pthread_mutex_unlock(&ctx->objects_lock);
    }
}

static void vkc__obj_free(vkc__obj *o)
{
    /* Under the lock even to see whether it is listed: removing a
     * neighbour writes this node's links. */
    pthread_mutex_lock(&o->ctx->objects_lock);
    vkc__list_remove(&o->node);
    pthread_mutex_unlock(&o->ctx->objects_lock);
    o->magic = 0;
    o->free(o);
}

void vkc__obj_release(vkc__obj *o)
{
    if (!o)
        return;
    /* Release order: every earlier use by the dropping thread happens
     * before the free, which an acquire of the count orders after them all
     * (every drop is in its release sequence). An acquire load rather than
     * a fence: ThreadSanitizer does not model fences and would report the
     * free as racing with other threads' drops. */
    if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_release) != 1)
        return;
    (void)atomic_load_explicit(&o->refs, memory_order_acquire);
    vkc__obj_free(o);
}

void vkc__obj_kill(vkc__obj *o, uint32_t magic)
{
    if (!o || o->magic != magic)
        return;
    o->magic = VKC_MAGIC_DEAD;
    vkc__obj_release(o);
}

void vkc__obj_free_list(vkc_context *ctx, vkc__node *list)
{
    (void)ctx;
    while (list->next && list->next != list) {
        vkc__obj *o = VKC_OBJ_OF(list->next);
        vkc__obj_free(o);
    }
}

static const char *vkc__kind_name(uint32_t magic)
{
    switch (magic) {
    case VKC_MAGIC_BUFFER:
        return "vkc_buffer";
    case VKC_MAGIC_KERNEL:
        return "vkc_kernel";
    case VKC_MAGIC_SEQ:
        return "vkc_seq";
    case VKC_MAGIC_FUSE:
        return "vkc_fuse";
    case VKC_MAGIC_IMAGE:
        return "vkc_image";
    default:
        return "vkc object";
    }
}

vkc_result vkc__obj_check(vkc_context *ctx, const void *handle, uint32_t magic, const char *what)
{
    const vkc__obj *o = handle;
    if (VKC_LIKELY(o && o->magic == magic))
        return VKC_SUCCESS;
    if (o && o->magic == VKC_MAGIC_DEAD && o->kind == magic)
        return VKC_FAIL(ctx ? ctx : o->ctx, VKC_ERROR_INVALID_HANDLE,
                        "%s: %s \"%s\" was destroyed (work recorded before keeps it alive; new "
                        "uses are refused)",
                        what, vkc__kind_name(magic), o->name ? o->name : "");
    return VKC_FAIL(ctx, VKC_ERROR_INVALID_HANDLE, "%s: invalid %s handle", what,
                    vkc__kind_name(magic));
}

/* ---- resource sets ------------------------------------------------------------------ */

#define VKC_MAGIC_RSET 0x564b4352u /* "VKCR" */

/* Open addressing on the pointers; at most half full. */
struct vkc__rset {
    vkc__obj obj;
    vkc__obj **slots;
    uint32_t cap, count;
    uint64_t tag; /* vkc__rset_tag */
    vkc__rset *next_spare;
};

/* Tags of sets, across contexts: a new one for every new or cleared set. */
static atomic_uint_fast64_t vkc__rset_tags = 1;

static uint64_t vkc__new_tag(void)
{
    return atomic_fetch_add_explicit(&vkc__rset_tags, 1, memory_order_relaxed);
}

uint64_t vkc__rset_tag(const vkc__rset *s)
{
    return s->tag;
}

/* Spare sets kept per context: a sequence recorded again while its last
 * recording is in flight, and every immediate-mode batch, take a fresh set;
 * the spares make that allocation-free in steady state. */
#define VKC_SPARE_SETS 64

static void vkc__rset_destroy(vkc__rset *s)
{
    vkc__free(s->slots);
    vkc__free(s);
}

/* The last reference went (a unit retired, or the sequence let go). */
static void vkc__rset_free(vkc__obj *o)
{
    vkc__rset *s = (vkc__rset *)o;
    vkc_context *ctx = o->ctx;
    vkc__rset_clear(s);
    pthread_mutex_lock(&ctx->objects_lock);
    bool keep = ctx->spare_set_count < VKC_SPARE_SETS;
    if (keep) {
        s->next_spare = ctx->spare_sets;
        ctx->spare_sets = s;
        ctx->spare_set_count++;
    }
    pthread_mutex_unlock(&ctx->objects_lock);
    if (!keep)
        vkc__rset_destroy(s);
}

vkc_result vkc__rset_new(vkc_context *ctx, vkc__rset **out)
{
    pthread_mutex_lock(&ctx->objects_lock);
    vkc__rset *s = ctx->spare_sets;
    if (s) {
        ctx->spare_sets = s->next_spare;
        ctx->spare_set_count--;
    }
    pthread_mutex_unlock(&ctx->objects_lock);
    if (!s) {
        s = vkc__calloc(1, sizeof(*s));
        if (!s)
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "resource set");
    }
    s->next_spare = NULL;
    s->tag = vkc__new_tag();
    vkc__obj_init(&s->obj, VKC_MAGIC_RSET, ctx, "resource set", vkc__rset_free, NULL);
    *out = s;
    return VKC_SUCCESS;
}

void vkc__rset_trim(vkc_context *ctx)
{
    pthread_mutex_lock(&ctx->objects_lock);
    vkc__rset *s = ctx->spare_sets;
    ctx->spare_sets = NULL;
    ctx->spare_set_count = 0;
    pthread_mutex_unlock(&ctx->objects_lock);
    while (s) {
        vkc__rset *next = s->next_spare;
        vkc__rset_destroy(s);
        s = next;
    }
}

static uint32_t vkc__slot_of(const vkc__obj *o, uint32_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)o * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (cap - 1);
}

static void vkc__rset_put(vkc__obj **slots, uint32_t cap, vkc__obj *o)
{
    uint32_t i = vkc__slot_of(o, cap);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = o;
}

vkc_result vkc__rset_add(vkc__rset *s, vkc__obj *o)
{
    if (atomic_load_explicit(&o->held, memory_order_relaxed) == s->tag)
        return VKC_SUCCESS;
    if (s->cap) {
        for (uint32_t i = vkc__slot_of(o, s->cap); s->slots[i]; i = (i + 1) & (s->cap - 1)) {
            if (s->slots[i] == o) {
                atomic_store_explicit(&o->held, s->tag, memory_order_relaxed);
                return VKC_SUCCESS;
            }
        }
    }
    if (2 * (s->count + 1) > s->cap) {
        uint32_t cap = s->cap ? 2 * s->cap : 16;
        vkc__obj **slots = vkc__calloc(cap, sizeof(*slots));
        if (!slots)
            return VKC_FAIL(s->obj.ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "resource set of %u objects",
                            s->count + 1);
        for (uint32_t i = 0; i < s->cap; ++i)
            if (s->slots[i])
                vkc__rset_put(slots, cap, s->slots[i]);
        vkc__free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    vkc__obj_retain(o);
    vkc__rset_put(s->slots, s->cap, o);
    s->count++;
    atomic_store_explicit(&o->held, s->tag, memory_order_relaxed);
    return VKC_SUCCESS;
}

bool vkc__rset_exclusive(vkc__rset *s)
{
    /* Acquire: a unit's release of the set happened before its reuse. */
    return atomic_load_explicit(&s->obj.refs, memory_order_acquire) == 1;
}

void vkc__rset_clear(vkc__rset *s)
{
    s->tag = vkc__new_tag(); /* what the objects carry no longer says "held" */
    if (!s->count)
        return;
    for (uint32_t i = 0; i < s->cap; ++i) {
        vkc__obj *o = s->slots[i];
        s->slots[i] = NULL;
        vkc__obj_release(o);
    }
    s->count = 0;
}
