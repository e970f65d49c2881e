/* Run-time GLSL: vkc_kernel_create_glsl compiles compute GLSL to SPIR-V
 * with glslang's C interface (defines and entry renaming through a
 * preamble, the SPIR-V target for the device) and hands the words to
 * kernel.c.
 *
 * Owns glslang's process state (one reference per context that compiled,
 * vkc__kstate.glslang_ref). Calls glslang, cache.c (the SPIR-V cache) and
 * kernel.c (vkc__kernel_create_words). */
#include "vkc_internal.h"

#include <stdio.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <glslang/build_info.h>

#define VKC__STR2(x) #x
#define VKC__STR(x) VKC__STR2(x)

/* glslang's process state is global: one reference per context that has
 * compiled, and compiles serialised (its C interface makes no promise about
 * concurrent use). The lock also guards every vkc__kstate.glslang_ref. */
static pthread_mutex_t vkc__glslang_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned vkc__glslang_refs;

/* `#include "vkc_grid.glsl"`: the steps of a cooperative dispatch
 * (vkc_seq_dispatch_cooperative) and the device-wide barrier between them.
 * The state is a storage block at binding VKC_GRID_BINDING of set 0
 * (default 0), which vkc binds itself: the steps this dispatch runs
 * [first, first + count) and whether it is the cooperative form (one
 * dispatch, real barriers) or one dispatch of the fallback (one step each,
 * vkc's pipeline barrier between them, vkc_grid_barrier() a no-op). The
 * spec constant VKC_GRID_SPEC_ID marks the kernel as a grid kernel and
 * tells vkc the binding (its default value), also for SPIR-V compiled
 * elsewhere. The barrier (the default, VKC_GRID_BARRIER 56): the
 * workgroup's invocations meet in a control barrier that orders memory at
 * workgroup scope, then thread 0 makes one device-scope atomic add to the
 * arrival word: workgroup 0 adds 2^31 - (groups - 1), every other 1, so
 * the word's top bit flips when the last one arrives and its low bits are
 * zero again; thread 0 spins (acquire) until the top bit differs from the
 * value its own add returned (the last arrival, whose add flipped it, goes
 * on at once: its acquire-release add read every other arrival's release),
 * and a second workgroup-scope control barrier lets the others go. No reset and no second word: it
 * can be passed any number of times. Writes cross it by transitivity: an invocation's write happens
 * before its workgroup's control barrier, which happens before thread 0's release add, which the
 * other workgroups' acquire spins read (the form of CUDA's grid.sync). So data that crosses the
 * barrier must live in coherent buffers (each access then available and visible at device scope by
 * itself). The arrival word is touched only by device-scope atomics, so the block is not coherent
 * and the step words are read once per invocation. Include it before any code (it brings an
 * #extension).
 *
 * VKC_GRID_BARRIER picks another barrier (issue 13's bench scenario
 * gridbar measures them on the H200; BENCHMARKS.md), bits: 16 the flip
 * above, else a counter that the last arrival resets and a generation
 * word it moves on, which the others spin on; 1 the generation on its own
 * 128-byte line, away from the counter; 2 the spin loads relaxed, one
 * acquire fence once the word moved; 4 a two-level arrival (VKC_GRID_FANIN
 * workgroups, default 8, per leaf counter on its own line, the last of
 * each leaf on the top counter), which implies 1 and 2; 8 the control
 * barriers at workgroup memory scope (without it at device scope: every
 * invocation's writes made visible by the barrier itself); 32, with 16,
 * the last arrival goes on without spinning (its acquire-release add read
 * every other arrival's release). 0 is the first
 * barrier vkc shipped. With bit 1 or 4 the lines are a fixed array after
 * the first 32 bytes (a runtime array would make vkc check its length
 * against the dispatch's count), room for VKC_GRID_LEAVES leaves (default
 * 32; the fan-in grows where a grid has more than fan-in x leaves
 * workgroups); vkc sizes the state from the block's size
 * (src/cooperative.c). */
/* clang-format off */
static const char vkc__grid_glsl[] =
    "#extension GL_KHR_memory_scope_semantics : require\n"
    "#ifndef VKC_GRID_BINDING\n"
    "#define VKC_GRID_BINDING 0\n"
    "#endif\n"
    "#ifndef VKC_GRID_BARRIER\n"
    "#define VKC_GRID_BARRIER 56\n"
    "#endif\n"
    "#ifndef VKC_GRID_FANIN\n"
    "#define VKC_GRID_FANIN 8u\n"
    "#endif\n"
    "#ifndef VKC_GRID_LEAVES\n"
    "#define VKC_GRID_LEAVES 32u\n"
    "#endif\n"
    "layout(constant_id = " VKC__STR(VKC_GRID_SPEC_ID) ") const uint vkc_grid_binding_id = VKC_GRID_BINDING;\n"
    "layout(set = 0, binding = VKC_GRID_BINDING) buffer vkc_grid_state {\n"
    " uint vkc_grid_arrived;\n"
    " uint vkc_grid_generation;\n"
    " uint vkc_grid_first;\n"
    " uint vkc_grid_count;\n"
    " uint vkc_grid_cooperative;\n"
    " uint vkc_grid_reserved[3];\n"
    "#if (VKC_GRID_BARRIER & 5) != 0\n"
    /* From byte 32: [24 + 32 k] is byte 128 (k + 1), the generation's line
     * then each leaf's, up to byte 256 + 128 VKC_GRID_LEAVES. */
    " uint vkc_grid_line[24u + 32u * (VKC_GRID_LEAVES + 1u)];\n"
    "#endif\n"
    "};\n"
    "#if (VKC_GRID_BARRIER & 5) != 0\n"
    "#define VKC_GRID_GEN vkc_grid_line[24]\n"
    "#else\n"
    "#define VKC_GRID_GEN vkc_grid_generation\n"
    "#endif\n"
    "#if (VKC_GRID_BARRIER & 8) != 0\n"
    "#define VKC_GRID_CB_SCOPE gl_ScopeWorkgroup\n"
    "#else\n"
    "#define VKC_GRID_CB_SCOPE gl_ScopeDevice\n"
    "#endif\n"
    "#if (VKC_GRID_BARRIER & 6) != 0\n"
    "#define VKC_GRID_SPIN_SEM gl_SemanticsRelaxed\n"
    "#else\n"
    "#define VKC_GRID_SPIN_SEM gl_SemanticsAcquire\n"
    "#endif\n"
    "uint vkc_grid_step_begin() { return vkc_grid_first; }\n"
    "uint vkc_grid_step_end() { return vkc_grid_first + vkc_grid_count; }\n"
    "#define VKC_GRID_STEPS(s) for (uint s = vkc_grid_step_begin(), vkc_end_##s = vkc_grid_step_end(); s < vkc_end_##s; ++s)\n"
    "uint vkc_grid_coop = 2u;\n"
    "void vkc_grid_barrier() {\n"
    " if (vkc_grid_coop == 2u) vkc_grid_coop = vkc_grid_cooperative;\n"
    " if (vkc_grid_coop == 0u) return;\n"
    " controlBarrier(gl_ScopeWorkgroup, VKC_GRID_CB_SCOPE, gl_StorageSemanticsBuffer,\n"
    "        gl_SemanticsAcquireRelease);\n"
    " if (gl_LocalInvocationIndex == 0u) {\n"
    "  uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;\n"
    "  uint id = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y +\n"
    "       gl_NumWorkGroups.y * gl_WorkGroupID.z);\n"
    "#if (VKC_GRID_BARRIER & 16) != 0\n"
    "  uint inc = id == 0u ? 0x80000000u - (groups - 1u) : 1u;\n"
    "  uint old = atomicAdd(vkc_grid_arrived, inc, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "            gl_SemanticsAcquireRelease);\n"
    "#if (VKC_GRID_BARRIER & 32) != 0\n"
    "  if (((old ^ (old + inc)) & 0x80000000u) == 0u)\n"
    "#endif\n"
    "  while (((atomicLoad(vkc_grid_arrived, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "            VKC_GRID_SPIN_SEM) ^ old) & 0x80000000u) == 0u) {\n"
    "  }\n"
    "#if (VKC_GRID_BARRIER & 6) != 0\n"
    "  memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);\n"
    "#endif\n"
    "#else\n"
    /* Where the spins are relaxed this load is too, which is enough: the
     * arrival after it releases, so the last arrival (and the generation
     * it moves) happens after this load. */
    "  uint gen = atomicLoad(VKC_GRID_GEN, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "             VKC_GRID_SPIN_SEM);\n"
    "#if (VKC_GRID_BARRIER & 4) != 0\n"
    "  uint fanin = max(VKC_GRID_FANIN, (groups + VKC_GRID_LEAVES - 1u) / VKC_GRID_LEAVES);\n"
    "  uint leaf = id / fanin;\n"
    "  uint members = min(fanin, groups - leaf * fanin);\n"
    "  bool last = atomicAdd(vkc_grid_line[56u + 32u * leaf], 1u, gl_ScopeDevice,\n"
    "             gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease) == members - 1u;\n"
    /* The leaf's reset is ordered before the generation moves by the top
     * arrival's release, as the top counter's reset is. */
    "  if (last) {\n"
    "   atomicStore(vkc_grid_line[56u + 32u * leaf], 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "         gl_SemanticsRelaxed);\n"
    "   uint leaves = (groups + fanin - 1u) / fanin;\n"
    "   last = atomicAdd(vkc_grid_arrived, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "           gl_SemanticsAcquireRelease) == leaves - 1u;\n"
    "  }\n"
    "#else\n"
    "  bool last = atomicAdd(vkc_grid_arrived, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "             gl_SemanticsAcquireRelease) == groups - 1u;\n"
    "#endif\n"
    "  if (last) {\n"
    "   atomicStore(vkc_grid_arrived, 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "         gl_SemanticsRelaxed);\n"
    "   atomicAdd(VKC_GRID_GEN, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "        gl_SemanticsRelease);\n"
    "  } else {\n"
    "   while (atomicLoad(VKC_GRID_GEN, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "            VKC_GRID_SPIN_SEM) == gen) {\n"
    "   }\n"
    "#if (VKC_GRID_BARRIER & 6) != 0\n"
    "   memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);\n"
    "#endif\n"
    "  }\n"
    "#endif\n"
    " }\n"
    " controlBarrier(gl_ScopeWorkgroup, VKC_GRID_CB_SCOPE, gl_StorageSemanticsBuffer,\n"
    "        gl_SemanticsAcquireRelease);\n"
    "}\n";
/* clang-format on */

static bool vkc__is_identifier(const char *s)
{
    if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* The includes vkc serves, by the name a source names them. */
static const struct {
    const char *name; /* as in "NAME", <NAME>, "vkc/NAME" or <vkc/NAME> */
    const char *text;
} vkc__includes[] = {{"vkc_resident.glsl", vkc__resident_glsl}, {"vkc_grid.glsl", vkc__grid_glsl}};

/* The include a directive's file part names, or NULL. */
static const char *vkc__include_text(const char *f)
{
    const char open = *f;
    if (open != '"' && open != '<')
        return NULL;
    const char close = open == '"' ? '"' : '>';
    f++;
    if (strncmp(f, "vkc/", 4) == 0)
        f += 4;
    for (size_t i = 0; i < VKC_ARRAY_COUNT(vkc__includes); ++i) {
        size_t len = strlen(vkc__includes[i].name);
        if (strncmp(f, vkc__includes[i].name, len) == 0 && f[len] == close)
            return vkc__includes[i].text;
    }
    return NULL;
}

/* glslang's C interface here has no include callbacks, so a line
 * `#include "vkc_resident.glsl"` (or <...>, or "vkc/vkc_resident.glsl"; the
 * same for vkc_grid.glsl) is replaced by the text, followed by a #line that
 * keeps the source's own line numbers in messages. Other #include lines
 * stay (and fail to compile). Returns NULL (nothing to expand) or a
 * vkc__malloc'd source; *oom on allocation failure. */
static char *vkc__glsl_expand(const char *src, bool address, bool *oom)
{
    *oom = false;
    bool any = false;
    for (size_t i = 0; i < VKC_ARRAY_COUNT(vkc__includes); ++i)
        any = any || strstr(src, vkc__includes[i].name);
    if (!any)
        return NULL;
    size_t cap = strlen(src) + 1, n = 0;
    char *out = NULL;
    unsigned line = 1;
    for (const char *p = src; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        const char *ours = NULL;
        if (len > 8 && strncmp(q, "#", 1) == 0) {
            const char *d = q + 1;
            while (*d == ' ' || *d == '\t')
                d++;
            if (strncmp(d, "include", 7) == 0) {
                const char *f = d + 7;
                while (*f == ' ' || *f == '\t')
                    f++;
                ours = vkc__include_text(f);
            }
        }
        /* The resident include writes acks to host memory through a device
         * address only where the context can give one. */
        const char *pre =
            ours == vkc__resident_glsl && address ? "#define VKC_BUFFER_ADDRESS 1\n" : "";
        size_t need = ours ? strlen(pre) + strlen(ours) + 32 : len;
        if (!out || n + need + 1 > cap) {
            cap = (n + need + 1) * 2;
            char *grown = vkc__realloc(out, cap);
            if (!grown) {
                vkc__free(out);
                *oom = true;
                return NULL;
            }
            out = grown;
        }
        if (ours) {
            size_t pre_len = strlen(pre), inc_len = strlen(ours);
            memcpy(out + n, pre, pre_len);
            n += pre_len;
            memcpy(out + n, ours, inc_len);
            n += inc_len;
            n += (size_t)snprintf(out + n, cap - n, "\n#line %u\n", line + 1);
        } else {
            memcpy(out + n, p, len);
            n += len;
        }
        out[n] = '\0';
        line++;
        p += len;
    }
    return out;
}

static void vkc__glslang_targets(const vkc_context *ctx, glslang_target_client_version_t *client,
                                 glslang_target_language_version_t *spv, const char **label)
{
    /* SPIR-V 1.6 expresses local_size_x_id as LocalSizeId, which needs
     * maintenance4; without it, target Vulkan 1.2 / SPIR-V 1.5. */
    if (ctx->api_version >= VK_API_VERSION_1_3 && ctx->maintenance4) {
        *client = GLSLANG_TARGET_VULKAN_1_3;
        *spv = GLSLANG_TARGET_SPV_1_6;
        *label = "vulkan1.3/spv1.6";
    } else if (ctx->api_version >= VK_API_VERSION_1_2) {
        *client = GLSLANG_TARGET_VULKAN_1_2;
        *spv = GLSLANG_TARGET_SPV_1_5;
        *label = "vulkan1.2/spv1.5";
    } else {
        *client = GLSLANG_TARGET_VULKAN_1_1;
        *spv = GLSLANG_TARGET_SPV_1_3;
        *label = "vulkan1.1/spv1.3";
    }
}

#define VKC_GLSLANG_VERSION                                                                        \
    VKC__STR(GLSLANG_VERSION_MAJOR)                                                                \
    "." VKC__STR(GLSLANG_VERSION_MINOR) "." VKC__STR(GLSLANG_VERSION_PATCH) GLSLANG_VERSION_FLAVOR

static vkc_result vkc__glsl_compile(vkc_context *ctx, vkc__kstate *ks, const char *name,
                                    const char *source, const char *preamble, uint32_t **words,
                                    size_t *size)
{
    glslang_input_t in;
    memset(&in, 0, sizeof(in));
    const char *label;
    vkc__glslang_targets(ctx, &in.client_version, &in.target_language_version, &label);
    in.language = GLSLANG_SOURCE_GLSL;
    in.stage = GLSLANG_STAGE_COMPUTE;
    in.client = GLSLANG_CLIENT_VULKAN;
    in.target_language = GLSLANG_TARGET_SPV;
    in.code = source;
    in.default_version = 450;
    in.default_profile = GLSLANG_NO_PROFILE;
    in.messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT;
    in.resource = glslang_default_resource();

    pthread_mutex_lock(&vkc__glslang_lock);
    if (!ks->glslang_ref) {
        if (vkc__glslang_refs == 0 && !glslang_initialize_process()) {
            pthread_mutex_unlock(&vkc__glslang_lock);
            return VKC_FAIL(ctx, VKC_ERROR_INITIALIZATION_FAILED,
                            "%s: glslang_initialize_process failed", name);
        }
        vkc__glslang_refs++;
        ks->glslang_ref = true;
    }

    vkc_result r = VKC_SUCCESS;
    glslang_program_t *prog = NULL;
    glslang_shader_t *sh = glslang_shader_create(&in);
    if (!sh) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: glslang_shader_create", name);
        goto done;
    }
    if (preamble && *preamble)
        glslang_shader_set_preamble(sh, preamble);
    if (!glslang_shader_preprocess(sh, &in) || !glslang_shader_parse(sh, &in)) {
        r = VKC_FAIL(ctx, VKC_ERROR_COMPILE, "%s: GLSL compilation failed:\n%s", name,
                     glslang_shader_get_info_log(sh));
        goto done;
    }
    prog = glslang_program_create();
    if (!prog) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: glslang_program_create", name);
        goto done;
    }
    glslang_program_add_shader(prog, sh);
    if (!glslang_program_link(prog, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
        r = VKC_FAIL(ctx, VKC_ERROR_COMPILE, "%s: GLSL link failed:\n%s", name,
                     glslang_program_get_info_log(prog));
        goto done;
    }
    glslang_program_SPIRV_generate(prog, GLSLANG_STAGE_COMPUTE);
    size_t n = glslang_program_SPIRV_get_size(prog);
    const char *spv_msg = glslang_program_SPIRV_get_messages(prog);
    if (!n) {
        r = VKC_FAIL(ctx, VKC_ERROR_COMPILE, "%s: SPIR-V generation failed: %s", name,
                     spv_msg ? spv_msg : "no output");
        goto done;
    }
    uint32_t *w = vkc__malloc(n * 4);
    if (!w) {
        r = VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: SPIR-V buffer", name);
        goto done;
    }
    glslang_program_SPIRV_get(prog, w);
    *words = w;
    *size = n * 4;
    VKC_STAT_ADD(ctx, shader_compiles, 1);
    vkc__log(ctx, VKC_LOG_DEBUG, VKC_LOG_ID_CACHE, "%s: compiled GLSL (%s, %zu bytes)", name, label,
             n * 4);
done:
    if (prog)
        glslang_program_delete(prog);
    if (sh)
        glslang_shader_delete(sh);
    pthread_mutex_unlock(&vkc__glslang_lock);
    return r;
}

vkc_result vkc_kernel_create_glsl(vkc_context *ctx, const vkc_glsl_desc *desc, vkc_kernel **out)
{
    if (out)
        *out = NULL;
    VKC_CHECK_CONTEXT(ctx);
    VKC_RETURN_IF(!desc || !out, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "vkc_kernel_create_glsl: desc and out must not be NULL");
    vkc__kstate *ks = ctx->kernel_state;
    VKC_RETURN_IF(!ks, ctx, VKC_ERROR_INVALID_STATE, "the kernel module is not initialised");
    char name[64];
    vkc__kernel_name(name, sizeof(name), desc->name && *desc->name ? desc->name : "glsl", NULL);
    VKC_RETURN_IF(!desc->source, ctx, VKC_ERROR_INVALID_ARGUMENT, "%s: source is NULL", name);
    VKC_RETURN_IF(desc->define_count && !desc->defines, ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: define_count is %u but defines is NULL", name, desc->define_count);
    const char *entry = desc->entry && *desc->entry ? desc->entry : "main";
    VKC_RETURN_IF(!vkc__is_identifier(entry), ctx, VKC_ERROR_INVALID_ARGUMENT,
                  "%s: entry \"%s\" is not a GLSL identifier", name, entry);

    /* Defines become a preamble, which glslang places after #version (line
     * numbers of the source stay as written). An entry other than main is
     * renamed to main the same way. */
    size_t pre_len = 1;
    for (uint32_t i = 0; i < desc->define_count; ++i) {
        const char *d = desc->defines[i];
        VKC_RETURN_IF(!d || !*d || strchr(d, '\n'), ctx, VKC_ERROR_INVALID_ARGUMENT,
                      "%s: define %u is empty or has a newline", name, i);
        pre_len += strlen(d) + 10;
    }
    pre_len += strlen(entry) + 20;
    /* The completion epilogue (epilogue.c) goes after the source, main
     * renamed; not into kernels built on vkc's includes (a cooperative
     * grid is sized by its pipeline, a resident kernel never ends). */
    bool epi = ctx->epi_build;
    for (size_t i = 0; epi && i < VKC_ARRAY_COUNT(vkc__includes); ++i)
        if (strstr(desc->source, vkc__includes[i].name))
            epi = false;
    char *preamble = vkc__malloc(pre_len);
    if (!preamble)
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "GLSL preamble");
    size_t at = 0;
    preamble[0] = '\0';
    for (uint32_t i = 0; i < desc->define_count; ++i) {
        const char *d = desc->defines[i];
        const char *eq = strchr(d, '=');
        int k = eq ? snprintf(preamble + at, pre_len - at, "#define %.*s %s\n", (int)(eq - d), d,
                              eq + 1)
                   : snprintf(preamble + at, pre_len - at, "#define %s\n", d);
        at += (size_t)(k > 0 ? k : 0);
    }
    if (strcmp(entry, "main") != 0)
        snprintf(preamble + at, pre_len - at, "#define %s main\n", entry);

    glslang_target_client_version_t cv;
    glslang_target_language_version_t lv;
    const char *label;
    vkc__glslang_targets(ctx, &cv, &lv, &label);
    bool oom;
    char *expanded = vkc__glsl_expand(desc->source, ctx->features.buffer_device_address, &oom);
    if (oom) {
        vkc__free(preamble);
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: GLSL include", name);
    }
    const char *source = expanded ? expanded : desc->source;
    char *wrapped = NULL;
    bool skip = false, splice = false;
    if (epi && !(wrapped = vkc__epilogue_wrap(source, &skip)) && skip) {
        epi = false;
        splice = true; /* a #version the source epilogue cannot go with */
    }
    if (epi) {
        if (!wrapped) {
            vkc__free(preamble);
            vkc__free(expanded);
            return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: GLSL epilogue", name);
        }
        source = wrapped;
    }
    vkc__cache_key key;
    if (!vkc__spv_cache_key(ctx, source, preamble, entry, VKC_GLSLANG_VERSION, label, &key)) {
        vkc__free(preamble);
        vkc__free(expanded);
        vkc__free(wrapped);
        return VKC_FAIL(ctx, VKC_ERROR_OUT_OF_HOST_MEMORY, "%s: SPIR-V cache key", name);
    }

    uint32_t *words = NULL;
    size_t size = 0;
    vkc_result r = VKC_SUCCESS;
    if (vkc__spv_cache_get(ctx, ks->cache, &key, &words, &size)) {
        VKC_STAT_ADD(ctx, spirv_cache_hits, 1);
        vkc__spv_cache_put(ctx, ks->cache, &key, words, size, false);
    } else {
        r = vkc__glsl_compile(ctx, ks, name, source, preamble, &words, &size);
        if (r >= 0)
            vkc__spv_cache_put(ctx, ks->cache, &key, words, size, true);
    }
    vkc__cache_key_free(&key);
    vkc__free(preamble);
    vkc__free(expanded);
    vkc__free(wrapped);
    if (r >= 0)
        r = vkc__kernel_create_words(ctx, name, words, size, "main", desc->workgroup_size,
                                     desc->spec_constants, desc->spec_constant_count, out);
    if (r >= 0 && epi)
        (*out)->epilogue = true;
    else if (r >= 0 && splice)
        vkc__epilogue_splice_mark(ctx, *out);
    vkc__free(words);
    return r;
}

void vkc__glsl_release(vkc__kstate *ks)
{
    pthread_mutex_lock(&vkc__glslang_lock);
    if (ks->glslang_ref && --vkc__glslang_refs == 0)
        glslang_finalize_process();
    ks->glslang_ref = false;
    pthread_mutex_unlock(&vkc__glslang_lock);
}
