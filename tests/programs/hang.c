/* A job that hangs: rank 0 sleeps in its own function forever, the other
 * ranks wait for it in MPI_Barrier. For the test harness's report of a
 * hung job (tests/common/hang.rs). */
#include <mpi.h>
#include <unistd.h>

/* Not inlined, so that the stack names it. */
__attribute__((noinline)) static void sleep_forever(void) {
    for (;;) sleep(1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) sleep_forever();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
