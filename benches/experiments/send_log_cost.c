/* Per-rank survival (issue 41): what would the design's two fault-free
 * costs cost the application's communication? The design in
 * docs/per-rank-survival.md (1) keeps a copy of every message a process
 * sends until every replica of its destination has it, and (2) turns each
 * blocking call into the nonblocking one plus a polled wait, so that a
 * death can interrupt it.
 *
 * Ping-pong between world ranks 0 and 1 (run with 2 processes, no redio),
 * for each size, alternating plain rounds, logged rounds (each send first
 * copies the message into a 64 MiB ring, as the log would) and polled
 * rounds (MPI_Isend/MPI_Irecv, then MPI_Test in a loop that also reads an
 * atomic flag, as redio's interruptible wait would), 7 rounds each, and
 * prints the median round trip of each and the ratios:
 * "SIZE plain_us logged_us polled_us logged/plain polled/plain". Run it with
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

enum mode { PLAIN, LOGGED, POLLED };

/* What the watchdog would set when the world changed. */
static volatile int world_changed;

static void polled_wait(MPI_Request *req) {
    int done = 0;
    while (!done && !world_changed) MPI_Test(req, &done, MPI_STATUS_IGNORE);
}

static void send(char *buf, long size, int peer, enum mode mode) {
    if (mode == LOGGED) log_copy(buf, size);
    if (mode == POLLED) {
        MPI_Request req;
        MPI_Isend(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
        polled_wait(&req);
    } else {
        MPI_Send(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
}

static void recv(char *buf, long size, int peer, enum mode mode) {
    if (mode == POLLED) {
        MPI_Request req;
        MPI_Irecv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
        polled_wait(&req);
    } else {
        MPI_Recv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static double round_trips(char *buf, long size, long iterations, int rank, enum mode mode) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < iterations; i++) {
        if (rank == 0) {
            send(buf, size, 1, mode);
            recv(buf, size, 1, mode);
        } else {
            recv(buf, size, 0, mode);
            send(buf, size, 0, mode);
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
    if (rank == 0) printf("size_bytes plain_us logged_us polled_us logged/plain polled/plain\n");
    for (int s = 0; s < count; s++) {
        long size = sizes[s];
        long iterations = (32L << 20) / size;
        if (iterations < 20) iterations = 20;
        if (iterations > 20000) iterations = 20000;
        double plain[ROUNDS], logged[ROUNDS], polled[ROUNDS];
        round_trips(buf, size, iterations / 4 + 1, rank, PLAIN); /* warm-up */
        for (int r = 0; r < ROUNDS; r++) {
            plain[r] = round_trips(buf, size, iterations, rank, PLAIN);
            logged[r] = round_trips(buf, size, iterations, rank, LOGGED);
            polled[r] = round_trips(buf, size, iterations, rank, POLLED);
        }
        qsort(plain, ROUNDS, sizeof(double), by_value);
        qsort(logged, ROUNDS, sizeof(double), by_value);
        qsort(polled, ROUNDS, sizeof(double), by_value);
        double p = plain[ROUNDS / 2], l = logged[ROUNDS / 2], q = polled[ROUNDS / 2];
        if (rank == 0) {
            printf("%ld %.2f %.2f %.2f %.3f %.3f\n", size, p, l, q, l / p, q / p);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
