/* Shared helpers of the I/O interposition test programs (tests/interposition/).
 *
 * Every program takes SHARED_DIR LOCAL_DIR [extra] and names its files by
 * logical rank, so ranks never collide and every replica of a rank works on
 * the same names. Output is a deterministic log, one line per operation:
 * return values, errno names and checksums of what was read; never fd
 * numbers, inode numbers, times or full paths (they differ between runs). */
#ifndef IO_H
#define IO_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "line.h"

/* Not every program uses every helper. */
#pragma GCC diagnostic ignored "-Wunused-function"

/* "shared" or "local": the first word of every line about a file. */
static const char *tag = "";

/* ENOENT, EIO, ENOTSUP (glibc >= 2.32). ENOTSUP == EOPNOTSUPP on Linux. */
static const char *errname(int e) {
    if (e == ENOTSUP) return "ENOTSUP"; /* strerrorname_np says EOPNOTSUPP (the same number) */
    const char *name = strerrorname_np(e);
    return name ? name : "E?";
}

/* FNV-1a, 32 bits: a checksum to print for data that was read. */
static uint32_t crc(const void *data, long n) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t h = 2166136261u;
    for (long i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Deterministic bytes for (seed, position in file). */
static void fill(void *buffer, size_t n, unsigned seed, size_t offset) {
    unsigned char *p = (unsigned char *)buffer;
    for (size_t i = 0; i < n; i++) {
        size_t at = offset + i;
        p[i] = (unsigned char)(seed * 131u + at * 7u + (at >> 8) * 13u + 1u);
    }
}

/* Values the compiler cannot see through, so that _FORTIFY_SOURCE picks the
 * checking entry points (__open_2, __read_chk, __fread_chk, ...). */
static size_t opaque(size_t x) {
    volatile size_t v = x;
    return v;
}
static int opaque_int(int x) {
    volatile int v = x;
    return v;
}

/* DIR/NAME into out (PATH_MAX-sized). */
static void join(char *out, const char *dir, const char *name) {
    snprintf(out, 4096, "%s/%s", dir, name);
}

/* Prints "TAG WHAT: RC" or "TAG WHAT: -1 ENAME" and yields RC. errno is
 * read right after the call. */
static long show(const char *what, long rc, int e) {
    if (rc < 0)
        say("%s %s: %ld %s", tag, what, rc, errname(e));
    else
        say("%s %s: %ld", tag, what, rc);
    return rc;
}
#define DO(what, expr)                 \
    ({                                 \
        errno = 0;                     \
        long rc_ = (long)(expr);       \
        int e_ = errno;                \
        show(what, rc_, e_);           \
    })

/* For calls returning an fd: prints "ok" instead of the number. */
static int show_fd(const char *what, int fd, int e) {
    if (fd >= 0)
        say("%s %s: ok", tag, what);
    else
        say("%s %s: -1 %s", tag, what, errname(e));
    return fd;
}
#define FD(what, expr)                 \
    ({                                 \
        errno = 0;                     \
        int fd_ = (int)(expr);         \
        int e_ = errno;                \
        show_fd(what, fd_, e_);        \
    })

/* For reads: the count and the checksum of the bytes read. */
static long show_read(const char *what, long rc, int e, const void *buffer) {
    if (rc < 0)
        say("%s %s: %ld %s", tag, what, rc, errname(e));
    else
        say("%s %s: %ld crc %08x", tag, what, rc, crc(buffer, rc));
    return rc;
}
#define READ(what, expr, buffer)               \
    ({                                         \
        errno = 0;                             \
        long rc_ = (long)(expr);               \
        int e_ = errno;                        \
        show_read(what, rc_, e_, buffer);      \
    })

/* For FILE* results. */
static FILE *show_stream(const char *what, FILE *fp, int e) {
    if (fp)
        say("%s %s: ok", tag, what);
    else
        say("%s %s: NULL %s", tag, what, errname(e));
    return fp;
}
#define STREAM(what, expr)             \
    ({                                 \
        errno = 0;                     \
        FILE *fp_ = (expr);            \
        int e_ = errno;                \
        show_stream(what, fp_, e_);    \
    })

/* The stat fields that are the same in every run: type, permissions, size. */
static void show_stat(const char *what, int rc, int e, unsigned mode, long long size) {
    if (rc < 0)
        say("%s %s: %d %s", tag, what, rc, errname(e));
    else if (!S_ISREG(mode)) /* a directory's size depends on the file system */
        say("%s %s: %d %s mode %03o", tag, what, rc, S_ISDIR(mode) ? "dir" : "other", mode & 0777);
    else
        say("%s %s: %d file mode %03o size %lld", tag, what, rc, mode & 0777, size);
}
/* st: any of struct stat, struct stat64 (the same fields). */
#define STAT(what, expr, st)                                                        \
    do {                                                                            \
        memset((st), 0, sizeof *(st));                                             \
        errno = 0;                                                                  \
        int rc_ = (int)(expr);                                                      \
        int e_ = errno;                                                             \
        show_stat(what, rc_, e_, (unsigned)(st)->st_mode, (long long)(st)->st_size); \
    } while (0)

/* Starts MPI and returns the logical rank; checks the arguments. */
static int start(int *argc, char ***argv, int needed, const char *usage) {
    MPI_Init(argc, argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (*argc < needed + 1) {
        fprintf(stderr, "usage: %s %s\n", (*argv)[0], usage);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return rank;
}
#endif
