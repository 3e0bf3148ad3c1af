/* Replicas that deliberately issue different operations: after writing the
 * same block, replica 1 reads where the others write. redio must detect the
 * divergence before any protocol runs, report both sides' calls, and fail
 * the operation with the same errno on every replica (no hang, no mixed
 * data). Without redio (no replicas) every process writes.
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
    DO("write block", pwrite(fd, data, BLOCK, 0));
    if (replica == 1)
        READ("diverging step", pread(fd, back, 100, 0), back);
    else
        DO("diverging step", pwrite(fd, data, 100, 0));
    /* Back in step: the next operation is coordinated again. */
    READ("read block", pread(fd, back, BLOCK, 0), back);
    DO("close", close(fd));
    MPI_Finalize();
    return 0;
}
