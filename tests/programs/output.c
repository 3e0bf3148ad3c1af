/* Output under replication (tests/output.rs). argv[1] chooses:
 *
 *   lines N      every rank prints N numbered stdout lines (and every 10th
 *                a stderr line), with a barrier now and then; stdio's own
 *                buffering, written in pieces (no fflush per line)
 *   diverge      like "lines 5", but replica 1 of rank 1 changes line 3
 *   long         rank 0 prints a 100000-byte line, then a last line
 *                without a newline; the others nothing (so that the
 *                launcher has no other line to put between the pieces)
 *   stdin        rank 0 echoes every stdin line as "got: LINE"
 *   die N K [buffered]
 *                N lines per rank, one per 20 ms, flushed, with a barrier
 *                after each; replica 0 of rank 0 SIGKILLs itself after
 *                its line K (a fail-over of the printing replica).
 *                "buffered": 100-byte lines in a 4096-byte stdio buffer,
 *                never flushed (the pipe gets blocks that end mid-line,
 *                and the victim's last block is lost with it)
 *   crash        3 lines per rank; replica 1 of rank 0 writes a message
 *                on stderr and aborts after its line 2
 */
#include <mpi.h>
#include <redio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma weak redio_replica_info

static int replica(void) {
    int replica = 0, logical, degree;
    if (redio_replica_info) redio_replica_info(&replica, &logical, &degree);
    return replica;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "lines";
    if (strcmp(mode, "lines") == 0 || strcmp(mode, "diverge") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 5;
        int odd = strcmp(mode, "diverge") == 0 && rank == 1 && replica() == 1;
        for (int i = 1; i <= n; i++) {
            if (odd && i == 3)
                printf("rank %d line %d: something else\n", rank, i);
            else {
                /* In pieces: the line must still come out whole. */
                printf("rank %d ", rank);
                fflush(stdout);
                printf("line %d of %d\n", i, n);
            }
            if (i % 10 == 0) fprintf(stderr, "rank %d: err %d\n", rank, i);
            if (i % 50 == 0) MPI_Barrier(MPI_COMM_WORLD);
        }
    } else if (strcmp(mode, "long") == 0) {
        if (rank == 0) {
            static char line[100001];
            for (int i = 0; i < 100000; i++) line[i] = 'a' + i % 26;
            line[100000] = '\n';
            fwrite(line, 1, sizeof line, stdout);
            printf("rank 0 last line without newline");
            fflush(stdout);
        }
    } else if (strcmp(mode, "stdin") == 0) {
        if (rank == 0) {
            char buf[256];
            while (fgets(buf, sizeof buf, stdin)) printf("got: %s", buf);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "die") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 20;
        int k = argc > 3 ? atoi(argv[3]) : 10;
        int victim = rank == 0 && replica() == 0;
        int buffered = argc > 4 && strcmp(argv[4], "buffered") == 0;
        /* Fully buffered whatever stdout is (MPICH's processes flush at
         * every line, Open MPI's write to a terminal). */
        if (buffered) setvbuf(stdout, NULL, _IOFBF, 4096);
        for (int i = 1; i <= n; i++) {
            if (buffered)
                printf("rank %d line %d %0*d\n", rank, i, 80, i);
            else
                printf("rank %d line %d\n", rank, i);
            if (!buffered) fflush(stdout);
            if (victim && i == k) raise(SIGKILL);
            usleep(buffered ? 2000 : 20000);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else if (strcmp(mode, "crash") == 0) {
        int victim = rank == 0 && replica() == 1;
        for (int i = 1; i <= 3; i++) {
            printf("rank %d line %d\n", rank, i);
            fflush(stdout);
            if (victim && i == 2) {
                fprintf(stderr, "rank 0: replica 1 crashes here\n");
                abort();
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
