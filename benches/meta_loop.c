/* Metadata-heavy loops on node-local files, as a Python program on one
 * machine makes them (imports, small files, os.stat), timed with
 * MPI_Wtime. Every logical rank works on its own files in DIR:
 *
 * - create: open(O_CREAT|O_WRONLY), write 100 bytes, close, stat (4 calls
 *   per iteration; no O_TRUNC: on ext4 a truncate of a written file makes
 *   its close start writeback, which would be all that is measured);
 * - stat: stat of an existing file (1 call);
 * - read: open(O_RDONLY), read 4 KiB, close of a 4 KiB file (3 calls).
 *
 * Usage: meta_loop DIR ITERATIONS same|pid
 * "same": the files are named after the logical rank only, so every
 * replica of a rank names the same path; "pid": the names also hold the
 * process id, so the replicas of a rank name different paths.
 * Each loop runs ITERATIONS / 10 times untimed first. Prints one line per
 * loop from rank 0: "LOOP US_PER_ITERATION calls N", the slowest rank's
 * time (MPI_MAX). benches/colocated.py runs it. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what, const char *path) {
    perror(what);
    fprintf(stderr, "meta_loop: %s %s failed\n", what, path);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void create_once(const char *path, const char *data, size_t len) {
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd < 0) die("open", path);
    if (write(fd, data, len) != (ssize_t)len) die("write", path);
    if (close(fd) != 0) die("close", path);
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size != (off_t)len) die("stat", path);
}

static void stat_once(const char *path, const char *unused, size_t len) {
    (void)unused;
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size != (off_t)len) die("stat", path);
}

static void read_once(const char *path, const char *unused, size_t len) {
    (void)unused;
    static char back[4096];
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("open", path);
    if (read(fd, back, len) != (ssize_t)len) die("read", path);
    if (close(fd) != 0) die("close", path);
}

typedef void (*step)(const char *, const char *, size_t);

/* Microseconds per iteration of STEP, the slowest rank's (on rank 0). */
static double timed(step one, const char *path, const char *data, size_t len, long iterations) {
    for (long i = 0; i < iterations / 10; i++) one(path, data, len);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < iterations; i++) one(path, data, len);
    double us = (MPI_Wtime() - start) * 1e6 / (double)iterations, slowest = 0;
    MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4 || (strcmp(argv[3], "same") && strcmp(argv[3], "pid"))) {
        if (rank == 0) fprintf(stderr, "usage: %s DIR ITERATIONS same|pid\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iterations = atol(argv[2]);
    char small[4096], page[4096], tag[32] = "";
    if (strcmp(argv[3], "pid") == 0) snprintf(tag, sizeof tag, "-%ld", (long)getpid());
    snprintf(small, sizeof small, "%s/small-%d%s", argv[1], rank, tag);
    snprintf(page, sizeof page, "%s/page-%d%s", argv[1], rank, tag);
    char data[4096];
    for (int i = 0; i < 4096; i++) data[i] = (char)('a' + (rank + i) % 26);

    double create = timed(create_once, small, data, 100, iterations);
    double st = timed(stat_once, small, data, 100, iterations);
    create_once(page, data, 4096);
    double rd = timed(read_once, page, data, 4096, iterations);
    if (rank == 0) {
        printf("create %.3f calls 4\n", create);
        printf("stat %.3f calls 1\n", st);
        printf("read %.3f calls 3\n", rd);
    }
    unlink(small);
    unlink(page);
    MPI_Finalize();
    return 0;
}
