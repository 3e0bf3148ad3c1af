/* Several ranks write disjoint regions of ONE shared file (issue 18).
 *
 * Usage: shared_writers DIR MIB [keep]
 *
 * Rank 0 creates DIR/shared.dat (O_TRUNC, unless "keep" is given) and
 * writes the first piece of its region; after a barrier every other rank
 * opens the file and all write their regions of MIB MiB each with pwrite
 * in 256 KiB pieces, interleaved in time with the other ranks' (a barrier
 * after every 4 pieces), so that every rank's parts are live while the
 * others open, write and join. After the last close and a barrier, rank 0
 * reads the whole file back and prints its size and checksum; every rank
 * prints the checksum of its region. The data of rank r at offset o is a
 * function of (r, o): a region that lost data or got another rank's shows
 * in the checksums. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIECE (256 * 1024)

static uint32_t fnv(const unsigned char *p, size_t n, uint32_t h) {
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static void fill(unsigned char *p, size_t n, int rank, size_t offset) {
    for (size_t i = 0; i < n; i++) {
        size_t at = offset + i;
        p[i] = (unsigned char)(rank * 97u + at * 7u + (at >> 12) * 31u + 1u);
    }
}

static void die(const char *what) {
    printf("error: %s: %s\n", what, strerror(errno));
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: shared_writers DIR MIB [keep]\n");
        MPI_Finalize();
        return 2;
    }
    int keep = argc > 3 && strcmp(argv[3], "keep") == 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    size_t region = (size_t)atoi(argv[2]) * 1024 * 1024;
    size_t start = (size_t)rank * region;
    size_t pieces = region / PIECE;
    unsigned char *buf = malloc(PIECE);

    int fd = -1;
    size_t done = 0;
    if (rank == 0) {
        fd = open(path, O_WRONLY | O_CREAT | (keep ? 0 : O_TRUNC), 0644);
        if (fd < 0) die("open (rank 0)");
        fill(buf, PIECE, rank, start);
        if (pwrite(fd, buf, PIECE, (off_t)start) != PIECE) die("pwrite");
        done = 1;
    }
    /* Rank 0's part exists (live) when the others open. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        fd = open(path, O_WRONLY);
        if (fd < 0) die("open");
    }
    for (size_t i = done; i < pieces + 1; i++) {
        if (i < pieces) {
            size_t at = start + i * PIECE;
            fill(buf, PIECE, rank, at);
            if (pwrite(fd, buf, PIECE, (off_t)at) != PIECE) die("pwrite");
        }
        if (i % 4 == 3) MPI_Barrier(MPI_COMM_WORLD);
    }
    if (close(fd) != 0) die("close");
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every rank's region, as the file holds it after every close. */
    fd = open(path, O_RDONLY);
    if (fd < 0) die("open for reading");
    uint32_t mine = 2166136261u;
    for (size_t i = 0; i < pieces; i++) {
        ssize_t n = pread(fd, buf, PIECE, (off_t)(start + i * PIECE));
        if (n != PIECE) die("pread");
        mine = fnv(buf, PIECE, mine);
    }
    printf("rank %d of %d: region of %zu bytes at %zu: checksum %08x\n", rank, size, region,
           start, mine);
    if (rank == 0) {
        uint32_t all = 2166136261u;
        size_t total = 0;
        ssize_t n;
        while ((n = pread(fd, buf, PIECE, (off_t)total)) > 0) {
            all = fnv(buf, (size_t)n, all);
            total += (size_t)n;
        }
        printf("file: %zu bytes, checksum %08x\n", total, all);
    }
    close(fd);
    free(buf);
    MPI_Finalize();
    return 0;
}
