/* MPI_Abort: rank 1 aborts with code 7 while the others wait in a barrier. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d passed the barrier\n", rank);
    MPI_Finalize();
    return 0;
}
