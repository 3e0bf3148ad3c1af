/* I/O loop benchmark: every rank writes or reads TOTAL bytes in BLOCK-sized
 * calls to DIR/bench.<rank> and reports the loop's own wall time, close
 * included (MPI start-up excluded). The read mode reads the file a previous write run left.
 * Usage: io_loop write|read DIR BLOCK TOTAL
 *
 * The I/O buffer is page-aligned (posix_memalign 4096), as a real
 * application's large buffers should be: malloc returns blocks 16 bytes past
 * a page boundary, and the kernel's page-cache copies into such a buffer are
 * slower (issue 20). REDIO_BENCH_ALLOC=malloc uses plain malloc instead, to
 * measure the difference. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The measured loop, in its own function so that `valgrind --tool=callgrind
 * --toggle-collect=io_loop` counts its instructions alone. */
__attribute__((noinline)) static size_t io_loop(int fd, int writing, char *buffer, size_t block, size_t total) {
    size_t done = 0;
    while (done < total) {
        ssize_t n = writing ? write(fd, buffer, block) : read(fd, buffer, block);
        if (n <= 0) {
            perror(writing ? "write" : "read");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        done += (size_t)n;
    }
    return done;
}

/* The I/O buffer: page-aligned unless REDIO_BENCH_ALLOC=malloc. */
static char *alloc_buffer(size_t bytes) {
    const char *how = getenv("REDIO_BENCH_ALLOC");
    if (how && strcmp(how, "malloc") == 0) return malloc(bytes);
    void *p = NULL;
    return posix_memalign(&p, 4096, bytes) == 0 ? p : NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: io_loop write|read DIR BLOCK TOTAL\n");
        return 2;
    }
    int writing = strcmp(argv[1], "write") == 0;
    size_t block = strtoull(argv[3], NULL, 10), total = strtoull(argv[4], NULL, 10);
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/bench.%d", argv[2], rank);
    char *buffer = alloc_buffer(block);
    if (!buffer) {
        fprintf(stderr, "io_loop: cannot allocate %zu bytes\n", block);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < block; i++) buffer[i] = (char)(i * 7 + rank);
    int fd = writing ? open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644) : open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    io_loop(fd, writing, buffer, block, total);
    /* close is timed too: Distributed Separate Write joins its parts there. */
    close(fd);
    double seconds = now() - start;
    double slowest = 0;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("seconds %.6f\n", slowest);
    free(buffer);
    MPI_Finalize();
    return 0;
}
