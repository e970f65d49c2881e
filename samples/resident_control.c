/* resident_control: many tiny dependent steps driven by the CPU.
 *
 * A cloud of 64 particles (integer fixed point) is pushed by a thrust the
 * CPU chooses every step: the GPU integrates one step and writes the
 * cloud's centroid; the CPU reads it and decides the next thrust (a
 * controller steering the centroid to a target that jumps every 500 steps).
 * Nothing can be batched: each input depends on the last result. That is
 * what a resident kernel is for: the step is posted to a kernel already
 * running on the GPU instead of submitted. The same kernel runs both ways
 * (resident, then forced to ordinary submits) and the trajectories are
 * checked against each other and against the CPU.
 *
 * Usage: resident_control [steps] */
#include "sample_common.h"

#include <string.h>

#define PARTICLES 64

/* Item: thrust. d[0..63] positions, d[64..127] velocities, d[128] the
 * centroid (all int). */
static const char *STEP =
    "#version 450\n"
    "#include \"vkc_resident.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "layout(set = 0, binding = 1) coherent buffer S { int d[]; };\n"
    "void main() {\n"
    "  uint i = gl_LocalInvocationIndex;\n"
    "  vkc_item it;\n"
    "  while (vkc_resident_next(it)) {\n"
    "    int thrust = int(vkc_resident_word(it, 0u));\n"
    "    int v = d[64u + i];\n"
    "    v += thrust + int(i & 3u) - 1 - (v >> 3);\n"
    "    d[64u + i] = v;\n"
    "    d[i] += v;\n"
    "    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,\n"
    "                   gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);\n"
    "    if (i == 0u) {\n"
    "      int s = 0;\n"
    "      for (uint k = 0u; k < 64u; ++k) s += d[k];\n"
    "      d[128] = s / 64;\n"
    "    }\n"
    "    vkc_resident_done(it);\n"
    "  }\n"
    "}\n";

typedef struct sim {
    int32_t pos[PARTICLES], vel[PARTICLES], centroid;
} sim;

/* The CPU's copy of the step (the reference). */
static void cpu_step(sim *s, int32_t thrust)
{
    int32_t sum = 0;
    for (int i = 0; i < PARTICLES; ++i) {
        int32_t v = s->vel[i];
        v += thrust + (i & 3) - 1 - (v >> 3);
        s->vel[i] = v;
        s->pos[i] += v;
        sum += s->pos[i];
    }
    s->centroid = sum / PARTICLES;
}

/* The controller: thrust from the error and the last move. */
static int32_t decide(int step, int32_t centroid, int32_t last)
{
    int32_t target = (step / 500) % 2 ? -20000 : 30000;
    int32_t t = (target - centroid) / 64 - (centroid - last) / 2;
    return t > 400 ? 400 : t < -400 ? -400 : t;
}

/* Run the loop; returns the seconds per step, fills trace[] with the
 * centroids. */
static double run(vkc_context *ctx, bool fallback, int steps, int32_t *trace, bool *resident)
{
    vkc_buffer *state;
    CHECK(vkc_buffer_create(ctx, &(vkc_buffer_desc){.size = 129 * 4, .name = "state"}, &state));
    CHECK(vkc_buffer_fill(state, 0, 129 * 4, 0));
    vkc_resident *r;
    vkc_arg a = {.buffer = state};
    CHECK(vkc_resident_create(ctx,
                              &(vkc_resident_desc){.glsl = STEP,
                                                   .name = "control-step",
                                                   .args = &a,
                                                   .arg_count = 1,
                                                   .payload_size = 4,
                                                   .fallback = fallback ? VKC_ON : VKC_DEFAULT},
                              &r));
    vkc_resident_info info;
    CHECK(vkc_resident_info_get(r, &info));
    *resident = info.resident;
    printf("  %s%s\n", info.resident ? "resident" : "ordinary submits: ", info.reason);
    /* The centroid through the mapping when the buffer is host-visible (a
     * few bytes read across the bus); otherwise a download. */
    const volatile int32_t *map = vkc_buffer_map(state);
    int32_t centroid = 0, last = 0;
    double t0 = sample_now();
    for (int s = 0; s < steps; ++s) {
        int32_t thrust = decide(s, centroid, last);
        vkc_ticket t;
        CHECK(vkc_resident_post(r, &thrust, 4, 0, &t));
        CHECK(vkc_wait(ctx, t, UINT64_MAX));
        last = centroid;
        if (map)
            centroid = map[128];
        else
            CHECK(vkc_buffer_download(state, 128 * 4, &centroid, 4));
        trace[s] = centroid;
    }
    double per_step = (sample_now() - t0) / steps;
    vkc_resident_destroy(r);
    vkc_buffer_destroy(state);
    return per_step;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 300;
    if (steps < 1)
        steps = 1;
    vkc_context *ctx = sample_context();
    int32_t *a = calloc((size_t)steps, 4), *b = calloc((size_t)steps, 4);
    if (!a || !b)
        return 1;
    bool res_a, res_b;
    double ta = run(ctx, false, steps, a, &res_a);
    double tb = run(ctx, true, steps, b, &res_b);

    /* The CPU flies the same loop. */
    sim s;
    memset(&s, 0, sizeof(s));
    int32_t last = 0;
    int bad = 0;
    for (int i = 0; i < steps && !bad; ++i) {
        int32_t c = s.centroid;
        cpu_step(&s, decide(i, c, last));
        last = c;
        if (a[i] != s.centroid || b[i] != s.centroid) {
            fprintf(stderr, "step %d: centroid %d (first run) %d (second), CPU %d\n", i, a[i], b[i],
                    s.centroid);
            bad = 1;
        }
    }
    printf("%d dependent steps: %.2f us per step %s, %.2f us per step through ordinary "
           "submits (%.1fx)\n",
           steps, ta * 1e6, res_a ? "resident" : "(fell back)", tb * 1e6, tb / ta);
    printf("final centroid %d (target %d)\n", a[steps - 1],
           ((steps - 1) / 500) % 2 ? -20000 : 30000);
    free(a);
    free(b);
    vkc_context_destroy(ctx);
    if (bad)
        return 1;
    printf("ok\n");
    return sample_validation_status();
}
