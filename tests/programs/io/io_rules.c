/* Three files, three rules: each rank writes 4 KiB to rules.<rank>.a, .b and
 * .c in 1 KiB writes, then reads .a and .b back and prints their checksums.
 * The test's configuration sends each file through different protocols; .c
 * gets protocol none, where every replica truncates and writes the file on
 * its own, so reading it back would race with the other replicas.
 * Usage: io_rules SHARED_DIR LOCAL_DIR */
#include "io.h"

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *suffixes[] = {"a", "b", "c"};
    for (int f = 0; f < 3; f++) {
        char path[4096], block[1024], back[4096];
        snprintf(path, sizeof path, "%s/rules.%d.%s", argv[1], rank, suffixes[f]);
        int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
        for (int i = 0; i < 4; i++) {
            for (size_t j = 0; j < sizeof block; j++) block[j] = (char)(j * 31 + i * 7 + f + rank);
            if (write(fd, block, sizeof block) != (ssize_t)sizeof block) perror("write");
        }
        if (f == 2) {
            say("%s: written", suffixes[f]);
            close(fd);
            continue;
        }
        ssize_t n = pread(fd, back, sizeof back, 0);
        unsigned long sum = 0;
        for (ssize_t j = 0; j < n; j++) sum = sum * 131 + (unsigned char)back[j];
        say("%s: read %zd checksum %lx", suffixes[f], n, sum);
        close(fd);
    }
    say("rules done");
    MPI_Finalize();
    return 0;
}
