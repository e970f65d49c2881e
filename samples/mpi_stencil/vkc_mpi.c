/* vkc_mpi: one rank per GPU, agreement on failures, row blocks and halo
 * exchange. See vkc_mpi.h. */
#include "vkc_mpi.h"

#include <stdio.h>
#include <string.h>

static void note(vkc_mpi *m, const char *what, vkc_result r)
{
    snprintf(m->error, sizeof(m->error), "rank %d: %s: %s: %s", m->rank, what, vkc_result_string(r),
             m->ctx ? vkc_context_last_error(m->ctx) : vkc_last_create_error());
}

vkc_result vkc_mpi_init(vkc_mpi *m, MPI_Comm comm, const vkc_context_desc *base,
                        const char *force_device)
{
    memset(m, 0, sizeof(*m));
    m->comm = comm;
    m->timeout_ns = 10000000000ull;
    MPI_Comm_rank(comm, &m->rank);
    MPI_Comm_size(comm, &m->size);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &m->local_rank);
    MPI_Comm_free(&node);

    /* Devices are counted without a device being opened. */
    static vkc_system_info sys;
    vkc_result r = vkc_system_query(&sys);
    m->device_count = r == VKC_SUCCESS ? (int)sys.device_count : 0;
    m->device_index = m->device_count ? m->local_rank % m->device_count : -1;
    char name[32];
    snprintf(name, sizeof(name), "%d", m->device_index);
    vkc_context_desc d = {0};
    if (base)
        d = *base;
    d.device = force_device ? force_device : name;
    if (r == VKC_SUCCESS)
        r = vkc_context_create(&d, &m->ctx);
    if (r < 0) {
        m->ctx = NULL;
        note(m, "opening its device", r);
    }
    int failed = vkc_mpi_agree(m, r);
    if (failed < 0)
        return VKC_SUCCESS;
    vkc_context_destroy(m->ctx);
    m->ctx = NULL;
    return r < 0 ? r : VKC_ERROR_DEVICE_LOST;
}

void vkc_mpi_finish(vkc_mpi *m)
{
    vkc_context_destroy(m->ctx);
    m->ctx = NULL;
}

int vkc_mpi_agree(vkc_mpi *m, vkc_result r)
{
    /* The lowest failing rank, or size when none failed. */
    int mine = r < 0 ? m->rank : m->size, lowest = m->size;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, m->comm);
    if (lowest == m->size)
        return -1;
    /* Everyone learns why, in the failing rank's words. */
    char why[sizeof(m->error)];
    snprintf(why, sizeof(why), "%s", m->error);
    MPI_Bcast(why, (int)sizeof(why), MPI_CHAR, lowest, m->comm);
    if (r >= 0) /* a rank that failed itself keeps its own message */
        snprintf(m->error, sizeof(m->error), "rank %d: stopped because %.400s", m->rank, why);
    return lowest;
}

void vkc_mpi_rows(int rows, int size, int rank, int *first, int *count)
{
    /* The first rows % size ranks take one row more. */
    int base = rows / size, extra = rows % size;
    *first = rank * base + (rank < extra ? rank : extra);
    *count = base + (rank < extra ? 1 : 0);
}

vkc_result vkc_mpi_halo_exchange(vkc_mpi *m, vkc_result status, vkc_buffer *grid, int cols,
                                 int local_rows, float *scratch)
{
    uint64_t row = (uint64_t)cols * sizeof(float);
    int up = m->rank > 0 ? m->rank - 1 : MPI_PROC_NULL;
    int down = m->rank + 1 < m->size ? m->rank + 1 : MPI_PROC_NULL;
    float *send_up = scratch, *send_down = scratch + cols;
    float *recv_up = scratch + 2 * cols, *recv_down = scratch + 3 * cols;
    /* Own rows 1 and local_rows (the download waits for earlier work). */
    vkc_result r = status;
    if (r >= 0)
        r = vkc_buffer_download(grid, row, send_up, row);
    if (r >= 0)
        r = vkc_buffer_download(grid, row * (uint64_t)local_rows, send_down, row);
    if (r < 0 && status >= 0)
        note(m, "downloading its edge rows", r);
    /* Agree before the blocking exchange: a rank that failed must not leave
     * its neighbours waiting for rows it will never send. */
    int failed = vkc_mpi_agree(m, r);
    if (failed >= 0)
        return r < 0 ? r : VKC_ERROR_DEVICE_LOST;
    MPI_Sendrecv(send_up, cols, MPI_FLOAT, up, 0, recv_down, cols, MPI_FLOAT, down, 0, m->comm,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(send_down, cols, MPI_FLOAT, down, 1, recv_up, cols, MPI_FLOAT, up, 1, m->comm,
                 MPI_STATUS_IGNORE);
    if (up != MPI_PROC_NULL)
        r = vkc_buffer_upload(grid, 0, recv_up, row);
    if (r >= 0 && down != MPI_PROC_NULL)
        r = vkc_buffer_upload(grid, row * (uint64_t)(local_rows + 1), recv_down, row);
    if (r < 0)
        note(m, "uploading its halo rows", r);
    return r;
}

vkc_result vkc_mpi_run(vkc_mpi *m, const vkc_dispatch_desc *d)
{
    vkc_ticket t;
    vkc_result r = vkc_dispatch(m->ctx, d);
    if (r >= 0)
        r = vkc_flush(m->ctx, &t);
    if (r >= 0)
        r = vkc_wait(m->ctx, t, m->timeout_ns);
    if (r == VKC_TIMEOUT)
        r = VKC_ERROR_DEVICE_LOST; /* a device that stops answering counts as failed */
    if (r < 0)
        note(m, "running a step", r);
    return r;
}
