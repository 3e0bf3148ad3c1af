/* Point-to-point: ring send/recv, Isend/Irecv/Waitall, MPI_ANY_SOURCE with
 * status.MPI_SOURCE, Sendrecv. Prints a deterministic line per check. */
#include <mpi.h>
#include <stdio.h>
#include "line.h"

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    say("rank %d of %d", rank, size);

    /* Ring: pass a token around once, each rank adds its rank * 10. */
    int token = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        token = 1;
        MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank * 10;
        MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
    }
    say("ring token at rank %d: %d", rank, token);

    /* Nonblocking exchange with both neighbours. */
    int out[2] = {rank * 100 + 1, rank * 100 + 2}, in[2] = {-1, -1};
    MPI_Request requests[4];
    MPI_Irecv(&in[0], 1, MPI_INT, prev, 11, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, next, 12, MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(&out[0], 1, MPI_INT, next, 11, MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(&out[1], 1, MPI_INT, prev, 12, MPI_COMM_WORLD, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    say("nonblocking from prev %d from next %d", in[0], in[1]);

    /* Rank 0 collects one message from every other rank, in arrival order,
     * and reports the sources sorted (arrival order is not deterministic). */
    if (rank == 0) {
        int seen[1024] = {0}, sum = 0;
        for (int i = 1; i < size; i++) {
            int value;
            MPI_Status status;
            MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &status);
            if (value != status.MPI_SOURCE * 3) say("BAD any-source value %d from %d", value, status.MPI_SOURCE);
            seen[status.MPI_SOURCE] = 1;
            sum += value;
        }
        add("any-source sum %d sources:", sum);
        for (int i = 0; i < size; i++) if (seen[i]) add(" %d", i);
        end_line();
    } else {
        int value = rank * 3;
        MPI_Send(&value, 1, MPI_INT, 0, 21, MPI_COMM_WORLD);
    }

    /* Sendrecv shift by one. */
    int mine = rank * rank, got = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, next, 31, &got, 1, MPI_INT, prev, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("sendrecv got %d", got);

    MPI_Finalize();
    return 0;
}
