/* Replicas that deliberately issue different operations: after writing the
 * same block, replica 1 reads where the others write. redio must detect the
 * divergence before any protocol runs, report both sides' calls, and fail
 * the operation with the same errno on every replica (no hang, no mixed
 * data). Without redio (no replicas) every process writes.
 *
 * IO_DIVERGE_MODE picks the divergence (replica 1 is always the odd one):
 *   swap  (default) a read where the others write, then back in step;
 *   extra           one write more than the others, before the close;
 *   skip            one read fewer than the others, before the close.
 * After `extra` or `skip` the odd replica is one call off until the end:
 * it meets the others' MPI_Finalize with a call of its own (or the other
 * way round), which must end the job instead of hanging it.
 *
 * Usage: io_diverge SHARED_DIR LOCAL_DIR */
#include "io.h"
#include <redio.h>

#pragma weak redio_replica_info

#define BLOCK 4096

int main(int argc, char **argv) {
    int rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    int replica = 0, logical = rank, degree = 1;
    if (redio_replica_info) redio_replica_info(&replica, &logical, &degree);
    static unsigned char data[BLOCK], back[BLOCK];
    char name[64], path[4096];
    snprintf(name, sizeof name, "diverge.%d.dat", rank);
    join(path, argv[1], name);
    tag = "shared";
    fill(data, BLOCK, 7u + (unsigned)rank, 0);
    int fd = FD("open", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    const char *mode = getenv("IO_DIVERGE_MODE");
    mode = mode ? mode : "swap";
    DO("write block", pwrite(fd, data, BLOCK, 0));
    if (strcmp(mode, "swap") == 0) {
        if (replica == 1)
            READ("diverging step", pread(fd, back, 100, 0), back);
        else
            DO("diverging step", pwrite(fd, data, 100, 0));
    }
    if (strcmp(mode, "extra") == 0 && replica == 1)
        DO("extra write", pwrite(fd, data, 100, BLOCK));
    /* Back in step (swap): the next operation is coordinated again. */
    if (strcmp(mode, "skip") != 0 || replica != 1)
        READ("read block", pread(fd, back, BLOCK, 0), back);
    DO("close", close(fd));
    MPI_Finalize();
    return 0;
}
