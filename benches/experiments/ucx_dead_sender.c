/* Does a receiver survive a sender that vanishes in the middle of a large
 * message? Rank 0 sends SIZE-byte messages to rank 1 for LIFE seconds and
 * then exits in the middle of one; rank 1 keeps receiving (polling with
 * MPI_Test) and reports how many arrived. Under MPICH 4.0.2 with UCX's
 * defaults rank 1 sometimes dies of a UCX fatal error in process_vm_readv.
 * No redio involved. Usage: ucx_dead_sender SIZE LIFE. See run.sh. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = (size_t)atol(argv[1]);
    double life = atof(argv[2]);
    char *buf = calloc(n, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (rank == 0) {
        for (;;) {
            MPI_Request r;
            MPI_Isend(buf, (int)n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &r);
            int flag = 0;
            while (!flag) {
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                if (now() - t0 > life) _exit(0);
            }
        }
    } else if (rank == 1) {
        long got = 0;
        for (;;) {
            MPI_Request r;
            MPI_Irecv(buf, (int)n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &r);
            int flag = 0;
            while (!flag && now() - t0 < life + 2) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            if (!flag) break;
            got++;
        }
        fprintf(stderr, "rank 1 alive, %ld received\n", got);
    }
    _exit(0);
}
