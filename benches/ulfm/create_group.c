/* Can anything free an Open MPI 5 process blocked in MPI_Comm_create_group
 * whose partner never joins? (docs/fault-tolerance.md, "What survivors
 * see"; the reason for ft/spares.rs.)
 *
 * Usage: create_group revoke|kill   (3 processes)
 *   rank 0 creates the communicator of {0, 1} out of a dup of the world;
 *   rank 1 never joins: after 2 s it revokes the parent (revoke), or
 *   rank 2 SIGKILLs itself after 1 s (kill). Rank 0 prints what the call
 *   returned, if it returns; the job hangs otherwise. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int revoke = argc > 1 && strcmp(argv[1], "revoke") == 0;
    MPI_Comm parent;
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    MPI_Group all, pair;
    MPI_Comm_group(parent, &all);
    int ranks[2] = {0, 1};
    MPI_Group_incl(all, 2, ranks, &pair);
    double start = MPI_Wtime();
    if (rank == 0) {
        MPI_Comm made;
        int rc = MPI_Comm_create_group(parent, pair, 77, &made);
        printf("create_group returned %d after %.1f s\n", rc, MPI_Wtime() - start);
    } else if (rank == 1) {
        sleep(2);
        if (revoke) {
            int rc = MPIX_Comm_revoke(parent);
            printf("rank 1 revoked the parent: %d\n", rc);
        }
    } else {
        sleep(1);
        if (!revoke) {
            raise(SIGKILL);
        }
    }
    fflush(stdout);
    sleep(3);
    _exit(0);
}
