/* Per-rank survival (issue 41): what can the survivors of a replicated job
 * still do with MPI after a death, without ULFM's repair calls? The facts
 * the design in docs/per-rank-survival.md rests on. No redio involved.
 *
 * 4 processes = 2 ranks x 2 replicas (block): replica worlds {0,1} and
 * {2,3}, built with MPI_Comm_create_group as redio builds them. World
 * rank 0 (rank 0 of replica 0) SIGKILLs itself (argument 2 "exit":
 * leaves with _exit) 1 s in, while world rank 1
 * is blocked (in a polled wait) on an MPI_Irecv from it and, with argument
 * "coll", also in an MPI_Iallreduce on replica world 0. World rank 1
 * abandons those requests after 3 s, then the three survivors try, each
 * step printed with its outcome and time:
 *   A  point-to-point between world ranks 1 and 2 (across the replica
 *      worlds) on MPI_COMM_WORLD: 8 bytes and 4 MiB, both ways;
 *   B  MPI_Comm_create_group of {2, 1} (the "mixed world": rank 0 served
 *      by replica 1's process, rank 1 by replica 0's) among those two only,
 *      then an MPI_Allreduce and 4 MiB each way on it;
 *   C  an MPI_Allreduce on replica world 1 ({2,3}), untouched by the death;
 *   D  MPI_Comm_create_group of the three survivors {1,2,3} and an
 *      MPI_Allreduce on it.
 * Every survivor then leaves with _exit(0) (a finalize would wait for the
 * dead). Run by cross_replica.sh under MPICH, Open MPI 4.1 and Open MPI 5. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double t0;
static int world;

static void say(const char *step, const char *what, int rc) {
    printf("rank %d: %-2s %-44s rc=%d at %.2f s\n", world, step, what, rc, MPI_Wtime() - t0);
    fflush(stdout);
}

/* Waits for a request by polling, like redio's waits; gives up after
 * `seconds` and says so. Returns 1 when it completed. */
static int wait_polled(MPI_Request *req, double seconds) {
    double start = MPI_Wtime();
    int done = 0;
    while (!done && MPI_Wtime() - start < seconds) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (!done) usleep(1000);
    }
    return done;
}

static MPI_Comm group_comm(const int *members, int n, int tag) {
    MPI_Group all, some;
    MPI_Comm_group(MPI_COMM_WORLD, &all);
    MPI_Group_incl(all, n, members, &some);
    MPI_Comm made = MPI_COMM_NULL;
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, some, tag, &made);
    char what[64];
    snprintf(what, sizeof what, "create_group of %d processes", n);
    say(n == 2 && members[0] == 2 && members[1] == 1 ? "B" : (n == 3 ? "D" : "-"), what, rc);
    return made;
}

static void exchange(MPI_Comm comm, int peer, size_t bytes, const char *step) {
    char *out = malloc(bytes), *in = malloc(bytes);
    memset(out, world, bytes);
    MPI_Request reqs[2];
    MPI_Irecv(in, (int)bytes, MPI_BYTE, peer, 5, comm, &reqs[0]);
    MPI_Isend(out, (int)bytes, MPI_BYTE, peer, 5, comm, &reqs[1]);
    int ok = wait_polled(&reqs[0], 10.0) && wait_polled(&reqs[1], 10.0);
    char what[64];
    snprintf(what, sizeof what, "%zu bytes each way with peer %d: %s", bytes, peer,
             ok ? "done" : "TIMED OUT");
    say(step, what, ok ? 0 : -1);
    free(out);
    free(in);
}

static void allreduce(MPI_Comm comm, const char *step, int expected) {
    int mine = 1, sum = 0;
    MPI_Request req;
    MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm, &req);
    int ok = wait_polled(&req, 10.0);
    char what[64];
    snprintf(what, sizeof what, "allreduce: %s, sum %d (expected %d)", ok ? "done" : "TIMED OUT",
             sum, expected);
    say(step, what, ok && sum == expected ? 0 : -1);
}

int main(int argc, char **argv) {
    /* Hydra (-disable-auto-cleanup) tells survivors of a death by SIGUSR1. */
    signal(SIGUSR1, SIG_IGN);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    t0 = MPI_Wtime();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int coll = argc > 1 && strcmp(argv[1], "coll") == 0;
    int replica0[2] = {0, 1}, replica1[2] = {2, 3};
    MPI_Comm mine = group_comm(world < 2 ? replica0 : replica1, 2, world < 2 ? 10 : 11);
    MPI_Comm_set_errhandler(mine, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();

    if (world == 0) {
        sleep(1);
        /* Under MPICH the death is an exit: Hydra SIGKILLs every process
         * of a node when one was killed by a signal, which redio's
         * supervisor (src/cli/supervise.rs) turns into an exit too. */
        if (argc > 2 && strcmp(argv[2], "exit") == 0) _exit(137);
        raise(SIGKILL);
    }
    if (world == 1) {
        int value;
        MPI_Request recv, red = MPI_REQUEST_NULL;
        MPI_Irecv(&value, 1, MPI_INT, 0, 1, mine, &recv);
        int one = 1, sum;
        if (coll) MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, mine, &red);
        int done = wait_polled(&recv, 3.0);
        say("-", done ? "receive from the dead completed?!" : "receive from the dead abandoned", 0);
        int rc = MPI_Cancel(&recv);
        say("-", "MPI_Cancel of that receive", rc);
        if (coll) say("-", "allreduce on the broken world abandoned", 0);
    } else {
        sleep(3);
    }

    if (world == 1 || world == 2) {
        exchange(MPI_COMM_WORLD, world == 1 ? 2 : 1, 8, "A");
        exchange(MPI_COMM_WORLD, world == 1 ? 2 : 1, 4 << 20, "A");
        int mixed[2] = {2, 1};
        MPI_Comm m = group_comm(mixed, 2, 12);
        if (m != MPI_COMM_NULL) {
            MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
            allreduce(m, "B", 2);
            exchange(m, world == 2 ? 1 : 0, 4 << 20, "B");
        }
    }
    if (world >= 2) allreduce(mine, "C", 2);
    int survivors[3] = {1, 2, 3};
    MPI_Comm s = group_comm(survivors, 3, 13);
    if (s != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
        allreduce(s, "D", 3);
    }
    say("-", "leaving with _exit(0)", 0);
    _exit(0);
}
