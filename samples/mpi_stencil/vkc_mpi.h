/* vkc_mpi: a small helper layer between MPI and vkc for the mpi_stencil
 * sample. It is NOT part of libvkc (libvkc has no MPI dependency): copy it
 * into a program that wants one rank per GPU.
 *
 * What it does:
 * - one rank per GPU: each rank opens a vkc context on device
 *   (local rank modulo device count), the local rank being the rank among
 *   the processes of its node (MPI_COMM_TYPE_SHARED);
 * - agreement: every rank reports whether its last piece of work succeeded
 *   and all learn whether any failed (one MPI_Allreduce), so a rank whose
 *   device fails stops every rank at the same step instead of leaving the
 *   others blocked in a send that is never matched;
 * - rows: a 2-D grid split into contiguous row blocks, one per rank;
 * - halos: a rank's block is stored with one halo row above and one below;
 *   vkc_mpi_halo_exchange downloads the first and last own rows, swaps them
 *   with the neighbours (MPI_Sendrecv) and uploads what arrived into the
 *   halo rows.
 *
 * Every vkc wait it makes is bounded (timeout_ns). MPI calls are blocking:
 * agreement before each exchange is what keeps them from waiting on a rank
 * that has stopped. */
#ifndef VKC_MPI_H
#define VKC_MPI_H

#include <mpi.h>
#include <vkc/vkc.h>

typedef struct vkc_mpi {
    MPI_Comm comm;
    int rank, size;
    int local_rank;      /* among the ranks of this node */
    int device_index;    /* the vkc device this rank uses */
    int device_count;    /* devices this node has */
    vkc_context *ctx;    /* NULL when this rank's device could not be opened */
    uint64_t timeout_ns; /* bound on vkc waits; 10 s by default */
    char error[512];     /* this rank's last failure, "" if none */
} vkc_mpi;

/* Open this rank's device. base (may be NULL) is copied and its device
 * field replaced by the rank's index unless force_device is given (a test
 * uses it to make one rank fail). Returns VKC_SUCCESS on every rank when
 * all ranks succeeded, else the local error (or VKC_ERROR_DEVICE_LOST on a
 * rank whose own device was fine, standing for "another rank failed"); the
 * context is NULL then, and m->error says what happened. */
vkc_result vkc_mpi_init(vkc_mpi *m, MPI_Comm comm, const vkc_context_desc *base,
                        const char *force_device);
void vkc_mpi_finish(vkc_mpi *m);

/* All ranks learn whether any rank's r is an error. Returns -1 when all
 * succeeded, else the lowest failing rank (on every rank); the other ranks'
 * m->error then reads "rank N: stopped because <that rank's m->error>". */
int vkc_mpi_agree(vkc_mpi *m, vkc_result r);

/* Rows [*first, *first + *count) of a grid of rows rows, for rank. */
void vkc_mpi_rows(int rows, int size, int rank, int *first, int *count);

/* The halo exchange of a block of local_rows rows of cols floats stored as
 * local_rows + 2 rows (halo, own rows, halo) in grid. scratch holds 4 * cols
 * floats. The grid's top halo of rank 0 and bottom halo of the last rank
 * are left alone. status is this rank's result so far: an error skips the
 * transfers but still takes part in the agreement, so every rank returns
 * an error at the same step (VKC_ERROR_DEVICE_LOST on ranks that did not
 * fail themselves, with m->error naming the rank that did). */
vkc_result vkc_mpi_halo_exchange(vkc_mpi *m, vkc_result status, vkc_buffer *grid, int cols,
                                 int local_rows, float *scratch);

/* A dispatch's flush and bounded wait (immediate mode). */
vkc_result vkc_mpi_run(vkc_mpi *m, const vkc_dispatch_desc *d);

#endif
