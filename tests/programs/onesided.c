/* One-sided: Win_create + Put + Fence. Every rank puts its rank into slot
 * `rank` of the next rank's window. */
#include <mpi.h>
#include <stdio.h>
#include "line.h"
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int *slots = calloc(size, sizeof(int));
    for (int i = 0; i < size; i++) slots[i] = -1;
    MPI_Win win;
    MPI_Win_create(slots, sizeof(int) * size, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    int value = 7 * rank + 1;
    MPI_Put(&value, 1, MPI_INT, (rank + 1) % size, rank, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    add("window:");
    for (int i = 0; i < size; i++) add(" %d", slots[i]);
    end_line();
    MPI_Win_free(&win);
    free(slots);
    MPI_Finalize();
    return 0;
}
