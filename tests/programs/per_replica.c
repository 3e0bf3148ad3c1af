/* Writes one file per rank, DIR/copy.<rank>, of SIZE bytes in BLOCK-sized
 * write calls, with a pattern that is never zero (so that a hole cannot be
 * mistaken for data): byte i is 1 + (i * 131 + i / 251 + rank) % 255.
 * MODE "trunc" opens with O_CREAT | O_TRUNC, "excl" with O_CREAT | O_EXCL.
 * Usage: per_replica DIR SIZE BLOCK trunc|excl */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: per_replica DIR SIZE BLOCK trunc|excl\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t size = strtoull(argv[2], NULL, 10), block = strtoull(argv[3], NULL, 10);
    int flags = O_WRONLY | O_CREAT | (strcmp(argv[4], "excl") == 0 ? O_EXCL : O_TRUNC);
    char path[4096];
    snprintf(path, sizeof path, "%s/copy.%d", argv[1], rank);
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        /* Every replica must see the same failure: report it and end
         * normally (no abort, which could cut the others' reports short). */
        fprintf(stderr, "open %s: %s\n", path, strerror(errno));
        MPI_Finalize();
        return 3;
    }
    char *buffer = malloc(block);
    for (size_t at = 0; at < size; at += block) {
        size_t n = size - at < block ? size - at : block;
        for (size_t j = 0; j < n; j++) {
            size_t i = at + j;
            buffer[j] = (char)(1 + (i * 131 + i / 251 + (size_t)rank) % 255);
        }
        if (write(fd, buffer, n) != (ssize_t)n) {
            fprintf(stderr, "write %s: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (close(fd) != 0) {
        fprintf(stderr, "close %s: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
