/* How a job ends, for tests/outcome.rs. `OUTCOME_MODE` says what happens:
 *
 *   status      logical rank 0 returns $OUTCOME_STATUS after MPI_Finalize
 *               (every other process returns 0)
 *   no-finalize every process returns 0 without MPI_Finalize
 *   segv        both replicas of logical rank 1 crash (SIGSEGV) right after
 *               MPI_Init, outside any coordinated operation; the others
 *               wait in a barrier
 *   exit-early  world rank 0 returns $OUTCOME_STATUS right after MPI_Init,
 *               without MPI_Finalize; the others wait in a barrier
 *   pre-init    every process returns 7 before MPI_Init (as a Python
 *               program that fails at import would)
 *   hold-init   the process of launcher rank $OUTCOME_VICTIM writes its pid
 *               to $OUTCOME_DIR/pid.<launcher rank> and waits as `hold`
 *               does, before MPI_Init: the test kills it there
 *   diverge     after MPI_Init, every process writes its launcher rank to
 *               $OUTCOME_DIR/diverge.<rank>: the replicas of a rank write
 *               different data (at r=2 redio fails the write with EIO),
 *               and the program ignores the error and returns 0
 *   hold        every process writes its pid file after MPI_Init and
 *               waits for $OUTCOME_DIR/go (at most 120 s): the test kills
 *               the launcher, or a process and then creates `go`
 *
 * In every mode, a process that finds MPI_Finalized false after
 * MPI_Finalize returns 91.
 */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int launcher_rank(void) {
    const char *r = getenv("PMI_RANK");
    if (!r) r = getenv("OMPI_COMM_WORLD_RANK");
    return r ? atoi(r) : -1;
}

/* Writes this process's pid to $OUTCOME_DIR/pid.<launcher rank>, atomically. */
static void write_pid(void) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/pid.%d", getenv("OUTCOME_DIR"), launcher_rank());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) exit(90);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(tmp, path);
}

/* Writes this process's launcher rank to $OUTCOME_DIR/diverge.<rank>,
 * ignoring any error. */
static void write_diverging(int rank) {
    char path[4096], data[64];
    snprintf(path, sizeof path, "%s/diverge.%d", getenv("OUTCOME_DIR"), rank);
    int n = snprintf(data, sizeof data, "written by launcher rank %d\n", launcher_rank());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    ssize_t written = write(fd, data, (size_t)n);
    (void)written;
    close(fd);
}

/* Waits until $OUTCOME_DIR/go exists (at most 120 s). */
static void hold(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/go", getenv("OUTCOME_DIR"));
    for (int i = 0; i < 2400 && access(path, F_OK) != 0; i++) usleep(50000);
}

int main(int argc, char **argv) {
    const char *mode = getenv("OUTCOME_MODE");
    if (!mode) mode = "status";
    if (!strcmp(mode, "pre-init")) return 7;
    if (!strcmp(mode, "hold-init") && launcher_rank() == atoi(getenv("OUTCOME_VICTIM"))) {
        write_pid();
        hold();
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!strcmp(mode, "segv") && rank == 1) raise(SIGSEGV);
    if (!strcmp(mode, "exit-early") && rank == 0) return atoi(getenv("OUTCOME_STATUS"));
    if (!strcmp(mode, "diverge")) write_diverging(rank);
    if (!strcmp(mode, "hold")) {
        write_pid();
        hold();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done\n", rank);
    if (!strcmp(mode, "no-finalize")) return 0;
    MPI_Finalize();
    /* Also when redio left without the real MPI_Finalize. */
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) return 91;
    if (!strcmp(mode, "status") && rank == 0) return atoi(getenv("OUTCOME_STATUS"));
    return 0;
}
