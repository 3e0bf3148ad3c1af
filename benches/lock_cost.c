/* Cost of a lock call on a shared file (issue 18): every rank takes and
 * drops a write lock on its own region of DIR/locks.dat COUNT times (one
 * F_SETLK lock + one F_SETLK unlock per iteration, or flock LOCK_EX|LOCK_NB
 * + LOCK_UN with `flock`) and rank 0 prints the loop's wall time per call.
 * Under redio each call is one coordinated operation: announced, run by
 * the leader, its reply sent to the followers.
 *
 * Usage: lock_cost fcntl|flock DIR COUNT
 * (docs/interposition.md, "Locks", has the numbers and the commands.) */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        fprintf(stderr, "usage: %s fcntl|flock DIR COUNT\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int use_flock = strcmp(argv[1], "flock") == 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/locks.%d.dat", argv[2], use_flock ? rank : 0);
    long count = atol(argv[3]);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) {
        perror("open");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    for (long i = 0; i < count; i++) {
        int rc;
        if (use_flock) {
            rc = flock(fd, LOCK_EX | LOCK_NB) | flock(fd, LOCK_UN);
        } else {
            struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = rank * 100, .l_len = 100};
            rc = fcntl(fd, F_SETLK, &fl);
            fl.l_type = F_UNLCK;
            rc |= fcntl(fd, F_SETLK, &fl);
        }
        if (rc != 0) {
            perror("lock");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    double elapsed = now() - start;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %.2f us per call (%ld calls)\n", argv[1], elapsed / (2.0 * count) * 1e6, 2 * count);
    close(fd);
    MPI_Finalize();
    return 0;
}
