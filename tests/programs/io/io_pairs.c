/* Writes a file and reads it back, once per read/write protocol pair: file
 * pair.<rank>.<i>.dat for i < IO_PAIRS, each written in uneven pieces (1 byte,
 * 5000 bytes, 70000 bytes) with write(2), then read back whole with pread
 * and in 3000-byte steps with read(2). The test's configuration maps each
 * file to one pair of protocols, so the program checks that an application
 * reads back its own data under every pair.
 *
 * Usage: IO_PAIRS=COUNT io_pairs SHARED_DIR LOCAL_DIR */
#include "io.h"

#define TOTAL (1 + 5000 + 70000)

int main(int argc, char **argv) {
    int rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR (IO_PAIRS=COUNT)");
    const char *count_text = getenv("IO_PAIRS");
    int count = count_text ? atoi(count_text) : 1;
    static unsigned char data[TOTAL], back[TOTAL];
    const long pieces[] = {1, 5000, 70000};
    tag = "shared";
    for (int i = 0; i < count; i++) {
        char name[64], path[4096];
        snprintf(name, sizeof name, "pair.%d.%d.dat", rank, i);
        join(path, argv[1], name);
        fill(data, TOTAL, 17u + (unsigned)(rank * 31 + i), 0);
        int fd = FD("open", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
        long at = 0;
        for (int p = 0; p < 3; p++) {
            DO("write piece", write(fd, data + at, pieces[p]));
            at += pieces[p];
        }
        memset(back, 0, sizeof back);
        long got = READ("pread whole", pread(fd, back, TOTAL, 0), back);
        say("pair %d: pread %s", i, got == TOTAL && memcmp(back, data, TOTAL) == 0 ? "matches" : "DIFFERS");
        DO("rewind", lseek(fd, 0, SEEK_SET));
        long n, total = 0;
        int same = 1;
        while ((n = read(fd, back, 3000)) > 0) {
            same &= memcmp(back, data + total, (size_t)n) == 0;
            total += n;
        }
        say("pair %d: read in steps %ld bytes, %s", i, total, same && total == TOTAL ? "matches" : "DIFFERS");
        DO("close", close(fd));
    }
    MPI_Finalize();
    return 0;
}
