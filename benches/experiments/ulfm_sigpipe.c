/* Open MPI 5 with ULFM: does a process waiting in a barrier survive the
 * deaths of two processes that are not in its communicator? Ranks {0,1}
 * and {2,3} split MPI_COMM_WORLD; rank 3 exits with 1 after 0.5 s, rank 2
 * kills itself (SIGKILL) after 1.2 s, rank 1 joins the barrier of {0,1}
 * after 2.5 s. Rank 0 writes fate.0: "done" after its barrier, or the
 * signal that killed it. With a second argument, SIGPIPE is ignored.
 * No redio involved. See run.sh. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int me = -1;

static void note(const char *what) {
    char name[32];
    snprintf(name, sizeof name, "fate.%d", me);
    FILE *out = fopen(name, "a");
    if (out) {
        fprintf(out, "%s\n", what);
        fclose(out);
    }
}

static void on_signal(int signal) {
    char what[32];
    snprintf(what, sizeof what, "signal %d", signal);
    note(what);
    _exit(128 + signal);
}

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    me = rank;
    for (int s = 1; s < 32; s++)
        if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD) signal(s, on_signal);
    if (argc > 1) signal(SIGPIPE, SIG_IGN);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &half);
    if (rank == 3) {
        usleep(500000);
        _exit(1);
    }
    if (rank == 2) {
        usleep(1200000);
        kill(getpid(), SIGKILL);
    }
    if (rank == 1) usleep(2500000);
    MPI_Barrier(half);
    note("done");
    _exit(0);
}
