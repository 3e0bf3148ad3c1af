/* Ping-pong between world ranks 0 and 1: for each message size, the
 * round-trip time and the bandwidth it implies. Used by
 * benches/ucx_transports.sh to measure what a UCX transport setting costs
 * the application's own communication. Output: one line per size,
 * "SIZE_BYTES ROUND_TRIP_US BANDWIDTH_MBS". The message buffer is
 * page-aligned (issue 20); REDIO_BENCH_ALLOC=malloc uses plain malloc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const long sizes[] = {8, 1024, 65536, 262144, 1048576, 8388608};
    const int count = sizeof sizes / sizeof sizes[0];
    const char *how = getenv("REDIO_BENCH_ALLOC");
    char *buf = NULL;
    if (how && strcmp(how, "malloc") == 0) {
        buf = malloc(sizes[count - 1]);
    } else if (posix_memalign((void **)&buf, 4096, sizes[count - 1]) != 0) {
        buf = NULL;
    }
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, rank, sizes[count - 1]);
    for (int s = 0; s < count; s++) {
        long size = sizes[s];
        /* About 128 MiB per direction per size, at least 20 round trips. */
        long iterations = (128L << 20) / size;
        if (iterations < 20) iterations = 20;
        if (iterations > 20000) iterations = 20000;
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (long i = 0; i < iterations; i++) {
            if (rank == 0) {
                MPI_Send(buf, (int)size, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)size, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)size, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)size, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        double elapsed = MPI_Wtime() - start;
        if (rank == 0) {
            double round_trip = elapsed / iterations;
            printf("%ld %.2f %.1f\n", size, round_trip * 1e6, 2.0 * size / round_trip / 1e6);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
