/* A small I/O job whose coordinated operations are numbered, so that a test
 * can kill a replica in any one of them (REDIO_TEST_DIE=<world rank>:<n>).
 * Per logical rank, the coordinated operations are:
 *
 *   0      open out.<rank>.dat with O_CREAT|O_TRUNC
 *   1..4   write 4 blocks of BLOCK bytes (deterministic data)
 *          close (local: not numbered)
 *   5      open out.<rank>.dat read-only
 *   6..9   read the 4 blocks back (checked against the data written)
 *   10     read at the end of the file (returns 0)
 *          close, then MPI_Barrier on MPI_COMM_WORLD (an application
 *          collective: a retired replica's processes are waiting in it)
 *   11     fopen sum.<rank>.txt for writing (stdio, O_TRUNC)
 *   12     its buffered fprintf reaches the file at fclose
 *
 * Usage: io_failover SHARED_DIR BLOCK */
#include "io.h"

int main(int argc, char **argv) {
    int rank = start(&argc, &argv, 2, "SHARED_DIR BLOCK");
    long block = atol(argv[2]);
    unsigned char *data = malloc((size_t)block), *back = malloc((size_t)block);
    char path[4096], name[64];
    tag = "shared";
    snprintf(name, sizeof name, "out.%d.dat", rank);
    join(path, argv[1], name);

    int fd = FD("open for writing", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    for (int b = 0; b < 4; b++) {
        fill(data, (size_t)block, 7u + (unsigned)rank, (size_t)(b * block));
        DO("write block", write(fd, data, (size_t)block));
    }
    DO("close", close(fd));

    fd = FD("open for reading", open(path, O_RDONLY));
    uint32_t sum = 0;
    int same = 1;
    for (int b = 0; b < 4; b++) {
        fill(data, (size_t)block, 7u + (unsigned)rank, (size_t)(b * block));
        long got = READ("read block", read(fd, back, (size_t)block), back);
        same &= got == block && memcmp(back, data, (size_t)block) == 0;
        sum ^= crc(back, got > 0 ? got : 0);
    }
    DO("read at the end", read(fd, back, 1));
    DO("close", close(fd));
    say("read back %s", same ? "matches" : "DIFFERS");

    MPI_Barrier(MPI_COMM_WORLD);

    snprintf(name, sizeof name, "sum.%d.txt", rank);
    join(path, argv[1], name);
    FILE *fp = STREAM("fopen", fopen(path, "w"));
    if (fp) {
        fprintf(fp, "rank %d read %s, checksum %08x\n", rank, same ? "matches" : "DIFFERS", sum);
        DO("fclose", fclose(fp));
    }
    free(data);
    free(back);
    MPI_Finalize();
    say("done");
    return 0;
}
