/* Hazard tracking of a sequence: per-buffer range tables and dependency
 * levels.
 *
 * Each command gets a dependency level: one more than the highest level of
 * any earlier command it has a hazard with (read-after-write,
 * write-after-read, write-after-write on overlapping ranges of the same
 * VkBuffer). record.c emits commands level by level with one barrier
 * between levels, so independent commands share a level and overlap, and W
 * interleaved chains of depth D cost D barriers, not W*D.
 *
 * Images are tracked per subresource (vkc__imgrec), with their layouts.
 *
 * Owns: the range tables (vkc__bufrec, vkc__imgrec), levels. Calls: nothing but host
 * memory (vkc__realloc) and the error latch. */
#include "seq.h"

/* The two buffers found last are tried first: a dispatch usually reads one
 * buffer and writes another, so the lookups alternate between two. */
static vkc__bufrec *vkc__find_buf(vkc_seq *s, VkBuffer vk)
{
    if (s->buf_last < s->buf_count && s->bufs[s->buf_last].vk == vk)
        return &s->bufs[s->buf_last];
    if (s->buf_prev < s->buf_count && s->bufs[s->buf_prev].vk == vk) {
        uint32_t i = s->buf_prev;
        s->buf_prev = s->buf_last;
        s->buf_last = i;
        return &s->bufs[i];
    }
    for (uint32_t i = 0; i < s->buf_count; ++i) {
        if (s->bufs[i].vk == vk) {
            s->buf_prev = s->buf_last;
            s->buf_last = i;
            return &s->bufs[i];
        }
    }
    return NULL;
}

/* First range whose offset is >= off. Ranges recorded in increasing order
 * (a loop over the slices of a buffer) land after the last one, and the
 * hazard query of such a range starts at the last one: no search. */
static uint32_t vkc__lower_bound(const vkc__range *r, uint32_t n, uint64_t off)
{
    if (n == 0 || r[n - 1].off < off)
        return n;
    if (n == 1 || r[n - 2].off < off)
        return n - 1;
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- images ---------------------------------------------------------------------------- */

vkc__imgrec *vkc__find_img(vkc_seq *s, const vkc_image *img)
{
    for (uint32_t i = 0; i < s->img_count; ++i)
        if (s->imgs[i].image == img)
            return &s->imgs[i];
    return NULL;
}

/* Images follow buffers with one more rule: a use that needs another layout
 * than the subresource's current one moves it in the barrier before its
 * level, which acts as a write (after every earlier access); and every use
 * comes at or after the level whose barrier last moved the layout, so the
 * emission order by level sees the layouts in recording order. */
static int32_t vkc__image_level(vkc_seq *s, const vkc__use *u, int32_t level)
{
    vkc__imgrec *r = vkc__find_img(s, u->image);
    if (!r)
        return level;
    const bool w = u->access & VKC_ACC_W;
    for (uint32_t m = u->mip; m < u->mip + u->mips; ++m) {
        for (uint32_t l = u->layer; l < u->layer + u->layers; ++l) {
            const vkc__sub *sb = vkc__sub_at(r, m, l);
            int32_t after = sb->wl;
            if (w || u->op != VKC__USE_PLAIN || sb->layout != u->layout)
                after = VKC_MAX(after, sb->rl);
            if (after + 1 > level)
                level = after + 1;
            if (sb->tl > level)
                level = sb->tl;
        }
    }
    return level;
}

static vkc_result vkc__track_image(vkc_seq *s, const vkc__use *u, int32_t lv)
{
    vkc_image *img = u->image;
    vkc__imgrec *r = vkc__find_img(s, img);
    if (!r) {
        uint32_t old = s->img_cap;
        if (!vkc__grow((void **)&s->imgs, &s->img_cap, s->img_count + 1, sizeof(*r)))
            return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "image hazard table");
        memset(s->imgs + old, 0, (s->img_cap - old) * sizeof(*r));
        r = &s->imgs[s->img_count++];
        uint32_t n = img->mips * img->layers;
        if (!vkc__grow((void **)&r->sub, &r->sub_cap, n, sizeof(vkc__sub)))
            return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "image hazard table");
        r->image = img; /* keeps r->sub and r->sub_cap from an earlier recording */
        r->mips = img->mips;
        r->layers = img->layers;
        r->released = false;
        for (uint32_t i = 0; i < n; ++i)
            r->sub[i] = (vkc__sub){-1, -1, -1, img->resting, img->resting};
    }
    const bool w = u->access & VKC_ACC_W, rd = u->access & VKC_ACC_R;
    for (uint32_t m = u->mip; m < u->mip + u->mips; ++m) {
        for (uint32_t l = u->layer; l < u->layer + u->layers; ++l) {
            vkc__sub *sb = vkc__sub_at(r, m, l);
            if (sb->layout != u->layout || u->op != VKC__USE_PLAIN)
                sb->tl = lv;
            sb->layout = u->layout;
            if (w && lv > sb->wl)
                sb->wl = lv;
            if (rd && lv > sb->rl)
                sb->rl = lv;
        }
    }
    if (u->op == VKC__USE_RELEASE)
        r->released = true;
    return VKC_SUCCESS;
}

/* What recording order forbids: a use of an image after its release, an
 * image another family owns used before its acquire, an acquire after other
 * uses, and one command needing two layouts of one subresource. */
static vkc_result vkc__check_image_uses(vkc_seq *s, const vkc__use *uses, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        const vkc__use *u = &uses[i];
        if (!u->image)
            continue;
        const vkc__imgrec *r = vkc__find_img(s, u->image);
        if (r && r->released)
            return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_STATE,
                                "image \"%s\" is used after vkc_seq_release_image in sequence "
                                "\"%s\"",
                                u->image->name, s->name);
        if (u->op == VKC__USE_ACQUIRE && r)
            return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_STATE,
                                "vkc_seq_acquire_image of image \"%s\" must come before its "
                                "other uses in sequence \"%s\"",
                                u->image->name, s->name);
        if (!r && u->op != VKC__USE_ACQUIRE && u->image->foreign)
            return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_STATE,
                                "image \"%s\" is owned by another queue family: record "
                                "vkc_seq_acquire_image before using it",
                                u->image->name);
        for (uint32_t j = 0; j < i; ++j) {
            const vkc__use *v = &uses[j];
            if (v->image == u->image && v->layout != u->layout &&
                vkc__overlap(u->mip, u->mips, v->mip, v->mips) &&
                vkc__overlap(u->layer, u->layers, v->layer, v->layers))
                return VKC_SEQ_FAIL(s, VKC_ERROR_INVALID_ARGUMENT,
                                    "image \"%s\" is bound twice in one command with different "
                                    "layouts (storage and sampled, or copy source and "
                                    "destination) on the same mip levels and layers",
                                    u->image->name);
        }
    }
    return VKC_SUCCESS;
}

/* A use of a buffer the host reads through its mapping: a write to it ends
 * the submission with a host barrier. */
static bool vkc__use_host_read(const vkc__use *u)
{
    return u->buffer && u->buffer->mapped &&
           atomic_load_explicit(&u->buffer->host_read, memory_order_relaxed);
}

/* Level of a command touching uses[0..n): after every conflicting access. */
static uint32_t vkc__level_of(vkc_seq *s, const vkc__use *uses, uint32_t n)
{
    int32_t level = (int32_t)s->level_floor;
    for (uint32_t i = 0; i < n; ++i) {
        const vkc__use *u = &uses[i];
        if (!u->buffer) {
            if (u->image)
                level = vkc__image_level(s, u, level);
            continue;
        }
        const bool w = u->access & VKC_ACC_W;
        const uint64_t end = u->offset + u->size;
        const vkc__bufrec *b = vkc__find_buf(s, u->vk);
        if (!b || end <= b->lo || u->offset >= b->hi)
            continue;
        /* Nothing in this buffer could raise the level: skip the ranges. */
        int32_t most = w && b->rl > b->wl ? b->rl : b->wl;
        if (most < level)
            continue;
        /* A range starting before offset - max_len ends before offset. */
        uint64_t from = u->offset > b->max_len ? u->offset - b->max_len : 0;
        for (uint32_t k = vkc__lower_bound(b->r, b->n, from); k < b->n && b->r[k].off < end; ++k) {
            const vkc__range *r = &b->r[k];
            if (r->end <= u->offset)
                continue;
            int32_t after = r->wl; /* RAW, WAW */
            if (w && r->rl > after)
                after = r->rl; /* WAR */
            if (after + 1 > level)
                level = after + 1;
        }
    }
    return (uint32_t)level;
}

static vkc_result vkc__track_uses(vkc_seq *s, const vkc__use *uses, uint32_t n, uint32_t level)
{
    const int32_t lv = (int32_t)level;
    for (uint32_t i = 0; i < n; ++i) {
        const vkc__use *u = &uses[i];
        if (!u->buffer) {
            if (u->image)
                VKC_FORWARD(vkc__track_image(s, u, lv));
            continue;
        }
        const bool w = u->access & VKC_ACC_W, rd = u->access & VKC_ACC_R;
        const uint64_t end = u->offset + u->size;
        vkc__bufrec *b = vkc__find_buf(s, u->vk);
        if (!b) {
            uint32_t old = s->buf_cap;
            if (!vkc__grow((void **)&s->bufs, &s->buf_cap, s->buf_count + 1, sizeof(*b)))
                return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "hazard table");
            memset(s->bufs + old, 0, (s->buf_cap - old) * sizeof(*b));
            b = &s->bufs[s->buf_count];
            s->buf_prev = s->buf_last;
            s->buf_last = s->buf_count++;
            b->vk = u->vk; /* keeps b->r and b->cap from an earlier recording */
            b->n = 0;
            b->lo = u->offset;
            b->hi = end;
            b->max_len = 0;
            b->wl = b->rl = -1;
        }
        b->lo = VKC_MIN(b->lo, u->offset);
        b->hi = VKC_MAX(b->hi, end);
        b->max_len = VKC_MAX(b->max_len, u->size);
        uint32_t k = vkc__lower_bound(b->r, b->n, u->offset);
        uint32_t at = k;
        while (at < b->n && b->r[at].off == u->offset && b->r[at].end != end)
            ++at;
        if (at == b->n || b->r[at].off != u->offset) {
            if (!vkc__grow((void **)&b->r, &b->cap, b->n + 1, sizeof(vkc__range)))
                return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "hazard table");
            if (k < b->n)
                memmove(&b->r[k + 1], &b->r[k], (b->n - k) * sizeof(vkc__range));
            b->r[k] = (vkc__range){u->offset, end, -1, -1};
            b->n++;
            at = k;
        }
        vkc__range *r = &b->r[at];
        if (w && lv > r->wl)
            r->wl = lv;
        if (rd && lv > r->rl)
            r->rl = lv;
        if (w && lv > b->wl)
            b->wl = lv;
        if (rd && lv > b->rl)
            b->rl = lv;
        if (w && vkc__use_host_read(u))
            s->writes_mapped = true;
    }
    return VKC_SUCCESS;
}

void vkc__seq_host_reads(vkc_seq *s)
{
    s->map_epoch = atomic_load_explicit(&s->obj.ctx->map_epoch, memory_order_acquire);
    bool wm = false;
    for (uint32_t i = 0; i < s->use_count && !wm; ++i)
        wm = (s->uses[i].access & VKC_ACC_W) && vkc__use_host_read(&s->uses[i]);
    if (wm != s->writes_mapped) {
        s->writes_mapped = wm;
        s->gen++;
    }
}

/* Compute every command's level again from scratch (after an argument was
 * replaced), keeping explicit barriers as level boundaries. */
vkc_result vkc__relevel(vkc_seq *s)
{
    s->levels_pending = false;
    s->buf_count = 0;
    s->img_count = 0;
    s->max_level = 0;
    s->level_floor = 0;
    s->writes_mapped = false;
    s->map_epoch = atomic_load_explicit(&s->obj.ctx->map_epoch, memory_order_acquire);
    uint32_t epoch = 0;
    for (uint32_t i = 0; i < s->cmd_count; ++i) {
        vkc__command *c = &s->cmds[i];
        if (c->epoch != epoch) {
            s->level_floor = s->max_level + 1;
            epoch = c->epoch;
        }
        if (c->images)
            VKC_FORWARD(vkc__check_image_uses(s, &s->uses[c->use_first], c->use_count));
        c->level = vkc__level_of(s, &s->uses[c->use_first], c->use_count);
        VKC_FORWARD(vkc__track_uses(s, &s->uses[c->use_first], c->use_count, c->level));
        if (c->level > s->max_level)
            s->max_level = c->level;
    }
    if (s->cmd_count && s->explicit_barriers != epoch)
        s->level_floor = s->max_level + 1;
    return VKC_SUCCESS;
}

/* Append a command whose uses are already at s->uses[use_first..]. */
vkc_result vkc__append(vkc_seq *s, vkc__command *c)
{
    const vkc__use *uses = &s->uses[c->use_first];
    c->epoch = s->explicit_barriers;
    if (c->images) /* buffer-only commands: none of the image rules apply */
        VKC_FORWARD(vkc__check_image_uses(s, uses, c->use_count));
    if (s->defer_levels && !c->images) {
        c->level = 0; /* vkc_seq_end levels the batch */
        s->levels_pending = true;
    } else {
        c->level = vkc__level_of(s, uses, c->use_count);
        VKC_FORWARD(vkc__track_uses(s, uses, c->use_count, c->level));
    }
    if (!vkc__grow((void **)&s->cmds, &s->cmd_cap, s->cmd_count + 1, sizeof(*c)))
        return VKC_SEQ_FAIL(s, VKC_ERROR_OUT_OF_HOST_MEMORY, "command list");
    s->cmds[s->cmd_count++] = *c;
    if (c->level > s->max_level)
        s->max_level = c->level;
    s->gen++;
    return VKC_SUCCESS;
}
