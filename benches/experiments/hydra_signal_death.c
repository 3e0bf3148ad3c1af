/* Does Hydra (MPICH's mpiexec) keep the other ranks alive when one is
 * killed by a signal? Every rank writes done.RANK in the current directory
 * after 6 s; with argv[1] = 1, rank 1 prints a line 3 s in. The caller
 * SIGKILLs rank 0 (its pid is on stderr) in between and counts the files.
 * No redio involved. See run.sh. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int talk = argc > 1 ? atoi(argv[1]) : 0;
    if (rank == 0) {
        fprintf(stderr, "rank0 pid %d\n", getpid());
        fflush(stderr);
    }
    sleep(3);
    if (talk && rank == 1) {
        printf("rank 1 speaks after the death\n");
        fflush(stdout);
    }
    sleep(3);
    char name[64];
    snprintf(name, sizeof name, "done.%d", rank);
    close(open(name, O_CREAT | O_WRONLY, 0644));
    _exit(0);
}
