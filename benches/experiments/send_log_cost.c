/* Per-rank survival (issue 41): what would a log of recent sends cost the
 * application's communication while nothing fails? The design in
 * docs/per-rank-survival.md keeps a copy of every message a process sends
 * until every replica of its destination has it; this measures that copy.
 *
 * Ping-pong between world ranks 0 and 1 (run with 2 processes, no redio),
 * for each size, alternating plain rounds and logged rounds (each send
 * first copies the message into a 64 MiB ring, as the log would), 7 rounds
 * each, and prints the median round trip of each and their ratio:
 * "SIZE plain_us logged_us ratio". Run it with
 *   mpicc.mpich -O2 -o /tmp/slc benches/experiments/send_log_cost.c &&
 *   mpiexec.mpich -n 2 /tmp/slc
 * (or mpicc.openmpi / mpirun.openmpi --oversubscribe --allow-run-as-root). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (64L << 20)
#define ROUNDS 7

static char *ring;
static long ring_at;

static void log_copy(const char *buf, long size) {
    if (ring_at + size > RING) ring_at = 0;
    memcpy(ring + ring_at, buf, (size_t)size);
    ring_at += size;
}

static double round_trips(char *buf, long size, long iterations, int rank, int logged) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < iterations; i++) {
        if (rank == 0) {
            if (logged) log_copy(buf, size);
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (logged) log_copy(buf, size);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - start) / (double)iterations * 1e6;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const long sizes[] = {8, 1024, 65536, 1048576, 8388608};
    const int count = sizeof sizes / sizeof sizes[0];
    char *buf = malloc((size_t)sizes[count - 1]);
    ring = malloc(RING);
    memset(buf, rank, (size_t)sizes[count - 1]);
    memset(ring, 0, RING);
    if (rank == 0) printf("size_bytes plain_us logged_us logged/plain\n");
    for (int s = 0; s < count; s++) {
        long size = sizes[s];
        long iterations = (32L << 20) / size;
        if (iterations < 20) iterations = 20;
        if (iterations > 20000) iterations = 20000;
        double plain[ROUNDS], logged[ROUNDS];
        round_trips(buf, size, iterations / 4 + 1, rank, 0); /* warm-up */
        for (int r = 0; r < ROUNDS; r++) {
            plain[r] = round_trips(buf, size, iterations, rank, 0);
            logged[r] = round_trips(buf, size, iterations, rank, 1);
        }
        qsort(plain, ROUNDS, sizeof(double), by_value);
        qsort(logged, ROUNDS, sizeof(double), by_value);
        if (rank == 0) {
            printf("%ld %.2f %.2f %.3f\n", size, plain[ROUNDS / 2], logged[ROUNDS / 2],
                   logged[ROUNDS / 2] / plain[ROUNDS / 2]);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
