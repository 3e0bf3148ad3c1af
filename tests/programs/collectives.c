/* Collectives: Bcast, Reduce, Allreduce, Allgather, Alltoall, Scan,
 * Reduce_scatter, Ibarrier. */
#include <mpi.h>
#include <stdio.h>
#include "line.h"
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int value = rank == 0 ? 4242 : -1;
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    say("bcast %d", value);

    int sum = -1, mine = rank + 1;
    MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
    say("reduce at last rank %d", rank == size - 1 ? sum : -1);

    double dmax = 0.0, dmine = 1.5 * rank;
    MPI_Allreduce(&dmine, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    say("allreduce max %.2f", dmax);

    int *all = malloc(sizeof(int) * size);
    int square = rank * rank;
    MPI_Allgather(&square, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    add("allgather");
    for (int i = 0; i < size; i++) add(" %d", all[i]);
    end_line();

    int *send = malloc(sizeof(int) * size), *recv = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) send[i] = rank * 1000 + i;
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    add("alltoall");
    for (int i = 0; i < size; i++) add(" %d", recv[i]);
    end_line();

    int prefix = 0;
    MPI_Scan(&mine, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    say("scan %d", prefix);

    int *counts = malloc(sizeof(int) * size), piece = -1;
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        send[i] = rank + i;
    }
    MPI_Reduce_scatter(send, &piece, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    say("reduce_scatter %d", piece);

    MPI_Request request;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    say("ibarrier done %d", done);

    free(all); free(send); free(recv); free(counts);
    MPI_Finalize();
    return 0;
}
