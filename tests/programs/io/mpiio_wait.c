/* A collective MPI-IO write that rank 0 enters 2 s before the other ranks,
 * so that it waits inside the MPI library's collective (ROMIO first
 * gathers every rank's offsets). Rank 0 prints the wall-clock and CPU
 * seconds (user and system, all threads) it spent in the call:
 * "waited W cpu C". MPICH spins while it waits, so a plain run's C is
 * about W when the rank has a core; under redio at r > 1 ROMIO's waits are
 * polled (docs/io-stacks.md), and C stays a small part of W.
 *
 * Usage: mpiio_wait SHARED_DIR LOCAL_DIR */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: %s SHARED_DIR LOCAL_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/wait.dat", argv[1]);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))
        MPI_Abort(MPI_COMM_WORLD, 3);
    char block[4096];
    memset(block, 'a' + rank, sizeof block);
    if (rank != 0) sleep(2);
    double wall = MPI_Wtime(), cpu = cpu_seconds();
    if (MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof block, block, sizeof block, MPI_BYTE,
                              MPI_STATUS_IGNORE))
        MPI_Abort(MPI_COMM_WORLD, 4);
    wall = MPI_Wtime() - wall;
    cpu = cpu_seconds() - cpu;
    MPI_File_close(&fh);
    if (rank == 0) printf("waited %.3f cpu %.3f\n", wall, cpu);
    MPI_Finalize();
    return 0;
}
