/* mpi_stencil: a 2-D Jacobi stencil on several GPUs, one MPI rank per GPU.
 *
 *   mpirun -np 2 samples/mpi_stencil [rows cols steps] [--no-check]
 *                                    [--fail-rank R [--fail-step S]]
 *
 * The grid (rows x cols floats, fixed edges) is split into row blocks
 * (vkc_mpi_rows); each rank keeps its block with one halo row above and
 * below in device memory and runs the 5-point average on its own rows;
 * after every step the ranks swap edge rows (vkc_mpi_halo_exchange:
 * download, MPI_Sendrecv, upload). At the end rank 0 gathers the grid and
 * compares it with the same stencil run on the CPU. Rank 0 prints the time
 * per step (the scaling script bench/run_multi.sh reads it).
 *
 * --fail-rank R makes rank R fail: at start-up (it asks for a device that
 * does not exist) or, with --fail-step S, at step S (it reports its device
 * lost). Every rank must then stop at the same point with a message naming
 * rank R, and none may hang. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in sample_common.h; mpi.h includes time.h */
#include "vkc_mpi.h"

#include "../sample_common.h"

#include <math.h>
#include <string.h>

static const char *STENCIL_GLSL =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) readonly buffer A { float a[]; };\n"
    "layout(set = 0, binding = 1) writeonly buffer B { float b[]; };\n"
    "layout(push_constant) uniform P { uint n; uint cols; uint first_row; uint rows; } pc;\n"
    "void main() {\n"
    "  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "  for (uint k = gl_GlobalInvocationID.x; k < pc.n; k += stride) {\n"
    "    uint r = k / pc.cols + 1u, c = k % pc.cols;\n" /* local row, past the top halo */
    "    uint g = pc.first_row + r - 1u;\n"
    "    uint i = r * pc.cols + c;\n"
    "    if (g == 0u || g == pc.rows - 1u || c == 0u || c == pc.cols - 1u) b[i] = a[i];\n"
    "    else b[i] = (((a[i - pc.cols] + a[i + pc.cols]) + a[i - 1u]) + a[i + 1u]) * 0.25;\n"
    "  }\n"
    "}\n";

static float initial(int r, int c, int rows)
{
    if (r == 0)
        return 1.0f; /* a hot top edge */
    if (r == rows - 1)
        return -0.5f;
    return (float)((r * 31 + c * 17) % 101) / 101.0f;
}

/* The same stencil on the CPU, in the same order of operations. */
static void cpu_stencil(float *a, float *b, int rows, int cols, int steps)
{
    for (int s = 0; s < steps; ++s) {
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                size_t i = (size_t)r * cols + c;
                if (r == 0 || r == rows - 1 || c == 0 || c == cols - 1)
                    b[i] = a[i];
                else
                    b[i] = (((a[i - cols] + a[i + cols]) + a[i - 1]) + a[i + 1]) * 0.25f;
            }
        float *t = a;
        a = b;
        b = t;
    }
    if (steps % 2)
        memcpy(b, a, sizeof(float) * (size_t)rows * cols); /* the result in the first array */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rows = 256, cols = 256, steps = 20, pos = 0, fail_rank = -1, fail_step = -1;
    bool check = true;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--no-check"))
            check = false;
        else if (!strcmp(argv[i], "--fail-rank") && i + 1 < argc)
            fail_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fail-step") && i + 1 < argc)
            fail_step = atoi(argv[++i]);
        else if (pos < 3)
            *(pos == 0 ? &rows : pos == 1 ? &cols : &steps) = atoi(argv[i]), pos++;
    }
    vkc_mpi m;
    vkc_context_desc desc = {0};
    desc.logger.func = sample_log;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rows < 3 || cols < 3 || steps < 1 || rows < size) {
        if (rank == 0)
            fprintf(stderr, "mpi_stencil: need rows >= 3 and >= ranks, cols >= 3, steps >= 1\n");
        MPI_Finalize();
        return 2;
    }
    bool fail_at_start = rank == fail_rank && fail_step < 0;
    vkc_result r = vkc_mpi_init(&m, MPI_COMM_WORLD, &desc,
                                fail_at_start ? "no such device (--fail-rank)" : NULL);
    if (r < 0) {
        fprintf(stderr, "%s\n", m.error);
        if (rank == 0)
            printf("mpi_stencil: all ranks stopped at start-up: %s\n", m.error);
        MPI_Finalize();
        return 1;
    }
    sample_ctx = m.ctx;
    int first, count;
    vkc_mpi_rows(rows, size, rank, &first, &count);
    printf("rank %d/%d: device %d of %d (%s), rows %d..%d\n", rank, size, m.device_index,
           m.device_count, vkc_context_device(m.ctx)->name, first, first + count - 1);

    /* Own rows plus one halo row above and one below. */
    size_t local = (size_t)(count + 2) * cols;
    float *host = calloc(local, sizeof(float)), *scratch = malloc(sizeof(float) * 4 * cols);
    if (!host || !scratch) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int lr = 0; lr < count + 2; ++lr) {
        int g = first + lr - 1;
        if (g >= 0 && g < rows)
            for (int c = 0; c < cols; ++c)
                host[(size_t)lr * cols + c] = initial(g, c, rows);
    }
    /* Set-up errors are agreed on too, so no rank is left waiting. */
    vkc_buffer *buf[2] = {NULL, NULL};
    vkc_kernel *k = NULL;
    r = vkc_buffer_create(m.ctx, &(vkc_buffer_desc){.size = local * 4, .name = "grid a"}, &buf[0]);
    if (r >= 0)
        r = vkc_buffer_create(m.ctx, &(vkc_buffer_desc){.size = local * 4, .name = "grid b"},
                              &buf[1]);
    for (int i = 0; i < 2 && r >= 0; ++i)
        r = vkc_buffer_upload(buf[i], 0, host, local * 4);
    if (r >= 0)
        r = vkc_kernel_create_glsl(m.ctx,
                                   &(vkc_glsl_desc){.source = STENCIL_GLSL, .name = "stencil"}, &k);
    if (r < 0)
        fprintf(stderr, "rank %d: set-up: %s: %s\n", rank, vkc_result_string(r),
                vkc_context_last_error(m.ctx));
    int failed = vkc_mpi_agree(&m, r);
    if (failed >= 0) {
        if (rank == 0)
            printf("mpi_stencil: all ranks stopped at set-up: rank %d failed\n", failed);
        vkc_mpi_finish(&m); /* destroys the buffers and kernel too */
        MPI_Finalize();
        return 1;
    }

    struct {
        uint32_t n, cols, first_row, rows;
    } push = {(uint32_t)count * (uint32_t)cols, (uint32_t)cols, (uint32_t)first, (uint32_t)rows};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int cur = 0;
    r = VKC_SUCCESS;
    for (int s = 0; s < steps; ++s) {
        vkc_arg args[2] = {{.buffer = buf[cur]}, {.buffer = buf[cur ^ 1]}};
        if (r >= 0)
            r = vkc_mpi_run(&m, &(vkc_dispatch_desc){.kernel = k,
                                                     .args = args,
                                                     .arg_count = 2,
                                                     .push = &push,
                                                     .push_size = sizeof(push),
                                                     .count = push.n});
        if (r >= 0 && rank == fail_rank && s == fail_step) {
            r = VKC_ERROR_DEVICE_LOST;
            snprintf(m.error, sizeof(m.error), "rank %d: device lost at step %d (--fail-step)",
                     rank, s);
        }
        cur ^= 1;
        r = vkc_mpi_halo_exchange(&m, r, buf[cur], cols, count, scratch);
        if (r < 0) {
            fprintf(stderr, "%s\n", m.error);
            if (rank == 0)
                printf("mpi_stencil: all ranks stopped at step %d: %s\n", s, m.error);
            break;
        }
    }
    double t1 = MPI_Wtime();
    int ok = r >= 0;
    if (ok && rank == 0) {
        double per_step = (t1 - t0) / steps;
        /* Bytes a step moves at the least: read and write the grid once. */
        double gbs = 2.0 * 4.0 * rows * (double)cols / per_step / 1e9;
        printf("mpi_stencil: ranks %d, grid %dx%d, steps %d, %.3f ms, %.1f us/step, %.2f GB/s\n",
               size, rows, cols, steps, (t1 - t0) * 1e3, per_step * 1e6, gbs);
    }
    if (ok) {
        /* Gather the own rows on rank 0. */
        if (vkc_buffer_download(buf[cur], 0, host, local * 4) < 0) {
            fprintf(stderr, "rank %d: download: %s\n", rank, vkc_context_last_error(m.ctx));
            ok = 0;
        }
        ok = vkc_mpi_agree(&m, ok ? VKC_SUCCESS : VKC_ERROR_VULKAN) < 0;
    }
    if (ok && check) {
        int *counts = NULL, *displs = NULL;
        float *all = NULL, *ref = NULL, *tmp = NULL;
        if (rank == 0) {
            counts = malloc(sizeof(int) * size);
            displs = malloc(sizeof(int) * size);
            all = malloc(sizeof(float) * (size_t)rows * cols);
            ref = malloc(sizeof(float) * (size_t)rows * cols);
            tmp = malloc(sizeof(float) * (size_t)rows * cols);
            if (!counts || !displs || !all || !ref || !tmp)
                MPI_Abort(MPI_COMM_WORLD, 1);
            for (int i = 0; i < size; ++i) {
                int f, c;
                vkc_mpi_rows(rows, size, i, &f, &c);
                counts[i] = c * cols;
                displs[i] = f * cols;
            }
        }
        MPI_Gatherv(host + cols, count * cols, MPI_FLOAT, all, counts, displs, MPI_FLOAT, 0,
                    MPI_COMM_WORLD);
        if (rank == 0) {
            for (int rr = 0; rr < rows; ++rr)
                for (int c = 0; c < cols; ++c)
                    ref[(size_t)rr * cols + c] = initial(rr, c, rows);
            cpu_stencil(ref, tmp, rows, cols, steps);
            size_t bad = 0;
            double worst = 0;
            for (size_t i = 0; i < (size_t)rows * cols; ++i) {
                double d = fabs((double)all[i] - (double)ref[i]);
                if (d > worst)
                    worst = d;
                if (d > 1e-5)
                    bad++;
            }
            printf("mpi_stencil: %s against the CPU (%zu cells off, worst %.3g)\n",
                   bad ? "MISMATCH" : "ok", bad, worst);
            ok = bad == 0;
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        free(counts);
        free(displs);
        free(all);
        free(ref);
        free(tmp);
    }
    vkc_kernel_destroy(k);
    vkc_buffer_destroy(buf[0]);
    vkc_buffer_destroy(buf[1]);
    vkc_mpi_finish(&m);
    free(host);
    free(scratch);
    MPI_Finalize();
    if (sample_validation_messages)
        return 1;
    return ok ? 0 : 1;
}
