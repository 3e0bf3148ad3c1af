/* Oversubscription benchmark: world rank 0 computes a fixed amount of work
 * and reports its compute time; all other ranks go straight to
 * MPI_Finalize and wait there, or, with "barrier", wait in MPI_Barrier
 * first (where MPICH busy-polls). Usage: busy ITERATIONS [barrier] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 200000000L;
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        double start = now();
        volatile double x = 0.0;
        for (long i = 0; i < iterations; i++) x += (double)(i % 7) * 0.5;
        printf("compute_seconds %.4f (x=%g)\n", now() - start, (double)x);
        fflush(stdout);
    }
    if (argc > 2 && strcmp(argv[2], "barrier") == 0) MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
