/* Locks across a fail-over (tests/interposition/stacks.rs, docs/
 * interposition.md "Locks"): rank 0 takes two locks on a shared file,
 * rank 1 then tries both. Run with REDIO_TEST_DIE to kill rank 0's leader
 * (world rank 0) in a chosen coordinated operation of rank 0:
 *
 *   0 open, 1 F_SETLK [0,10), 2 fstat, 3 F_SETLK [100,10), 4 fstat,
 *   5 close
 *
 * A leader that dies in operation 3 after its lock call (0:3:exit:1): the
 * new leader runs the call again and holds [100,10), but [0,10), taken
 * in operation 1 by the dead leader, died with its descriptor.
 *
 * Usage: io_lockfail SHARED_DIR LOCAL_DIR (2 ranks) */
#include "io.h"

static int rank;

#define SETLK(what, fd, type, start, len)                                         \
    ({                                                                            \
        struct flock fl_ = {.l_type = (type), .l_whence = SEEK_SET,               \
                            .l_start = (start), .l_len = (len)};                  \
        DO(what, fcntl((fd), F_SETLK, &fl_));                                     \
    })

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    tag = "shared";
    char path[4096];
    join(path, argv[1], "lockfail.dat");
    struct stat st;
    int fd = -1;
    say("io_lockfail rank %d", rank);
    if (rank == 0) fd = FD("open", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) fd = FD("open", open(path, O_RDWR));
    if (rank == 0) {
        SETLK("F_SETLK [0,10)", fd, F_WRLCK, 0, 10);
        STAT("fstat", fstat(fd, &st), &st);
        SETLK("F_SETLK [100,10)", fd, F_WRLCK, 100, 10);
        STAT("fstat", fstat(fd, &st), &st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        SETLK("F_SETLK [0,10) held by rank 0", fd, F_WRLCK, 0, 10);
        SETLK("F_SETLK [100,10) held by rank 0", fd, F_WRLCK, 100, 10);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    DO("close", close(fd));
    say("io_lockfail rank %d done", rank);
    MPI_Finalize();
    return 0;
}
