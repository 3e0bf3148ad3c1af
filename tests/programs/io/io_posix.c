/* POSIX file I/O, on SHARED_DIR and then on LOCAL_DIR: the open family,
 * data transfer, seek / dup / fcntl, sync / truncate / stat / names.
 *
 * Usage: io_posix SHARED_DIR LOCAL_DIR
 *
 * Compiled in several flavours (tests/interposition/): -O0 links the plain
 * names (open, pread, fstat, ...); -O2 -D_FORTIFY_SOURCE=2 adds __open_2,
 * __openat_2, __read_chk, __pread_chk, __pread64_chk; with
 * -D_FILE_OFFSET_BITS=64 the plain names become open64, pread64, fstat64,
 * fcntl64, preadv64, __open64_2, __openat64_2, ... The 64 variants are also
 * called by name, so every flavour links them.
 *
 * glibc >= 2.33 programs no longer link the stat compatibility entry points,
 * so they are looked up at run time (tests/interposition/coverage.rs reads
 * this list):
 * DLSYM("__xstat") DLSYM("__lxstat") DLSYM("__fxstat")
 * DLSYM("__xstat64") DLSYM("__lxstat64") DLSYM("__fxstat64")
 * DLSYM("__fxstatat") DLSYM("__fxstatat64")
 *
 * Every byte of a data file is written exactly once (no overlapping writes),
 * except trunc.<rank>.dat, which is written, truncated by O_TRUNC and written
 * again. */
#include "io.h"
#include <dlfcn.h>
#include <redio.h>
#include <sys/uio.h>

#pragma weak redio_replica_info

#if defined(__x86_64__)
#define STAT_VER 1 /* _STAT_VER_LINUX */
#else
#define STAT_VER 0
#endif

static int rank;
static unsigned seed;
static unsigned char out[8192], in[8192];

/* [0, 4100): written by write, writev, pwrite, pwrite64, pwritev, pwritev2,
 * through dup / dup2 / dup3 / F_DUPFD / F_DUPFD_CLOEXEC copies, and in
 * O_APPEND mode; then truncated up and down, and read back every way. */
static void data_file(const char *dir) {
    char name[64], path[4096];
    snprintf(name, sizeof name, "posix.%d.dat", rank);
    join(path, dir, name);

    int fd = FD("open rdwr|creat|trunc", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    if (fd < 0) return;
    unsigned char a[300], b[300];
    struct iovec iov[2];

    fill(out, 1000, seed, 0);
    DO("write 1000", write(fd, out, 1000));
    fill(a, 300, seed, 1000);
    fill(b, 200, seed, 1300);
    iov[0] = (struct iovec){a, 300};
    iov[1] = (struct iovec){b, 200};
    DO("writev 300+200", writev(fd, iov, 2));
    fill(out, 500, seed, 1500);
    DO("pwrite 500 at 1500", pwrite(fd, out, 500, 1500));
    DO("lseek cur after pwrite", lseek(fd, 0, SEEK_CUR));
    fill(out, 500, seed, 2000);
    DO("pwrite64 500 at 2000", pwrite64(fd, out, 500, 2000));
    fill(a, 250, seed, 2500);
    fill(b, 250, seed, 2750);
    iov[0] = (struct iovec){a, 250};
    iov[1] = (struct iovec){b, 250};
    DO("pwritev 250+250 at 2500", pwritev(fd, iov, 2, 2500));
    fill(a, 300, seed, 3000);
    fill(b, 200, seed, 3300);
    iov[0] = (struct iovec){a, 300};
    iov[1] = (struct iovec){b, 200};
    DO("pwritev2 300+200 at 3000", pwritev2(fd, iov, 2, 3000, 0));
    DO("lseek end", lseek(fd, 0, SEEK_END));
    DO("lseek64 cur", lseek64(fd, 0, SEEK_CUR));

    /* Copies of the descriptor share its offset: 100 bytes each, 3500..4000. */
    int d = FD("dup", dup(fd));
    fill(out, 100, seed, 3500);
    DO("write via dup", write(d, out, 100));
    DO("close dup", close(d));
    DO("dup2 to 500", dup2(fd, 500));
    fill(out, 100, seed, 3600);
    DO("write via dup2", write(500, out, 100));
    DO("dup3 to 501 cloexec", dup3(fd, 501, O_CLOEXEC));
    DO("fcntl getfd 501", fcntl(501, F_GETFD));
    fill(out, 100, seed, 3700);
    DO("write via dup3", write(501, out, 100));
    int d1 = fcntl(fd, F_DUPFD, 502);
    say("%s fcntl dupfd >= 502: %s", tag, d1 >= 502 ? "yes" : "no");
    DO("fcntl getfd dupfd", fcntl(d1, F_GETFD));
    fill(out, 100, seed, 3800);
    DO("write via dupfd", write(d1, out, 100));
    int d2 = fcntl(fd, F_DUPFD_CLOEXEC, 502);
    say("%s fcntl dupfd_cloexec >= 502: %s", tag, d2 >= 502 ? "yes" : "no");
    DO("fcntl getfd dupfd_cloexec", fcntl(d2, F_GETFD));
    fill(out, 100, seed, 3900);
    DO("write via dupfd_cloexec", write(d2, out, 100));
    DO("lseek cur after copies", lseek(fd, 0, SEEK_CUR));
    DO("close_range 500..", close_range(500, (unsigned)(d1 > d2 ? d1 : d2), 0));
    DO("fcntl getfd 500 after close_range", fcntl(500, F_GETFD));
    DO("fcntl getfd 501 after close_range", fcntl(501, F_GETFD));
    DO("fcntl getfd dupfd after close_range", fcntl(d1, F_GETFD));
    DO("fcntl getfd dupfd_cloexec after close_range", fcntl(d2, F_GETFD));

    /* O_APPEND through F_SETFL: the write goes to the end whatever the offset. */
    int flags = fcntl(fd, F_GETFL);
    say("%s fcntl getfl: %s%s", tag,
        (flags & O_ACCMODE) == O_RDWR ? "O_RDWR" : (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDONLY",
        flags & O_APPEND ? "|O_APPEND" : "");
    DO("fcntl setfl append", fcntl(fd, F_SETFL, flags | O_APPEND));
    flags = fcntl(fd, F_GETFL);
    say("%s fcntl getfl: %s%s", tag, (flags & O_ACCMODE) == O_RDWR ? "O_RDWR" : "other",
        flags & O_APPEND ? "|O_APPEND" : "");
    DO("lseek set 0", lseek(fd, 0, SEEK_SET));
    fill(out, 100, seed, 4000);
    DO("write appended 100", write(fd, out, 100));
    DO("lseek cur after append", lseek(fd, 0, SEEK_CUR));
    DO("fcntl setfl no append", fcntl(fd, F_SETFL, flags & ~O_APPEND));

    DO("fsync", fsync(fd));
    DO("fdatasync", fdatasync(fd));
    struct stat st;
    struct stat64 st64;
    DO("ftruncate 5000", ftruncate(fd, 5000));
    STAT("fstat", fstat(fd, &st), &st);
    DO("ftruncate64 4100", ftruncate64(fd, 4100));
    STAT("fstat64", fstat64(fd, &st64), &st64);

    /* Read it back every way. Length arguments are opaque, so the fortified
     * flavours call __read_chk / __pread_chk / __pread64_chk. */
    DO("lseek set 0", lseek(fd, 0, SEEK_SET));
    READ("read 1000", read(fd, in, opaque(1000)), in);
    iov[0] = (struct iovec){in, 300};
    iov[1] = (struct iovec){in + 300, 200};
    READ("readv 300+200", readv(fd, iov, 2), in);
    READ("pread 500 at 1500", pread(fd, in, opaque(500), 1500), in);
    READ("pread64 500 at 2000", pread64(fd, in, opaque(500), 2000), in);
    iov[0] = (struct iovec){in, 250};
    iov[1] = (struct iovec){in + 250, 250};
    READ("preadv 250+250 at 2500", preadv(fd, iov, 2, 2500), in);
    iov[0] = (struct iovec){in, 100};
    iov[1] = (struct iovec){in + 100, 400};
    READ("preadv2 100+400 at 3000", preadv2(fd, iov, 2, 3000, 0), in);
    DO("lseek cur after preads", lseek(fd, 0, SEEK_CUR));
    DO("lseek64 set 3500", lseek64(fd, 3500, SEEK_SET));
    READ("read rest", read(fd, in, opaque(sizeof in)), in);
    READ("read at eof", read(fd, in, opaque(sizeof in)), in);
    READ("pread past eof", pread(fd, in, opaque(100), 10000), in);
    DO("close", close(fd));
    DO("close again", close(fd));

    /* The whole file, through a fresh descriptor (non-constant flags: the
     * fortified flavours call __open_2 / __open64_2). */
    fd = FD("open rdonly (opaque flags)", open(path, opaque_int(O_RDONLY)));
    READ("read whole", read(fd, in, opaque(sizeof in)), in);
    DO("write to rdonly", write(fd, in, 10));
    DO("close", close(fd));
    fd = FD("open64 rdonly (opaque flags)", open64(path, opaque_int(O_RDONLY)));
    READ("pread64 whole", pread64(fd, in, opaque(sizeof in), 0), in);
    DO("close", close(fd));
}

/* open64 / openat / openat64 / creat / creat64, O_EXCL, O_TRUNC, ENOENT. */
static void open_family(const char *dir) {
    char name[64], path[4096], path2[4096];
    int fd;

    int dirfd = FD("open directory", open(dir, O_RDONLY | O_DIRECTORY));
    snprintf(name, sizeof name, "openat.%d.dat", rank);
    fd = FD("openat dirfd creat", openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0640));
    fill(out, 64, seed, 0);
    DO("write 64", write(fd, out, 64));
    DO("close", close(fd));
    fd = FD("openat dirfd rdonly (opaque flags)", openat(dirfd, name, opaque_int(O_RDONLY)));
    READ("read", read(fd, in, opaque(sizeof in)), in);
    DO("close", close(fd));
    join(path, dir, name);
    fd = FD("openat64 cwd rdonly", openat64(AT_FDCWD, path, O_RDONLY));
    READ("read", read(fd, in, opaque(sizeof in)), in);
    DO("close", close(fd));
    fd = FD("openat64 dirfd rdonly (opaque flags)", openat64(dirfd, name, opaque_int(O_RDONLY)));
    READ("pread 32 at 16", pread(fd, in, opaque(32), 16), in);
    DO("close", close(fd));

    snprintf(name, sizeof name, "open64.%d.dat", rank);
    join(path, dir, name);
    fd = FD("open64 creat", open64(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
    fill(out, 48, seed, 0);
    DO("write 48", write(fd, out, 48));
    DO("close", close(fd));

    snprintf(name, sizeof name, "creat.%d.dat", rank);
    join(path, dir, name);
    fd = FD("creat", creat(path, 0644));
    fill(out, 32, seed, 0);
    DO("write 32", write(fd, out, 32));
    DO("read from creat fd", read(fd, in, opaque(10)));
    DO("close", close(fd));
    snprintf(name, sizeof name, "creat64.%d.dat", rank);
    join(path2, dir, name);
    fd = FD("creat64", creat64(path2, 0644));
    fill(out, 40, seed, 0);
    DO("write 40", write(fd, out, 40));
    DO("close", close(fd));

    DO("open excl existing", open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
    snprintf(name, sizeof name, "missing.%d.dat", rank);
    join(path2, dir, name);
    DO("open missing", open(path2, O_RDONLY));
    DO("open64 missing", open64(path2, O_RDONLY));
    DO("openat missing", openat(dirfd, name, O_RDONLY));

    /* O_TRUNC on a file with content: truncated, once. */
    snprintf(name, sizeof name, "trunc.%d.dat", rank);
    join(path, dir, name);
    fd = FD("open creat", open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    fill(out, 100, seed, 0);
    DO("write 100", write(fd, out, 100));
    DO("close", close(fd));
    fd = FD("open trunc existing", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    struct stat st;
    STAT("fstat after trunc", fstat(fd, &st), &st);
    fill(out, 50, seed + 1, 0);
    DO("write 50", write(fd, out, 50));
    READ("pread 100 at 0", pread(fd, in, opaque(100), 0), in);
    DO("close", close(fd));
    DO("close dirfd", close(dirfd));
}

typedef int (*xstat_fn)(int, const char *, struct stat *);
typedef int (*fxstat_fn)(int, int, struct stat *);
typedef int (*xstat64_fn)(int, const char *, struct stat64 *);
typedef int (*fxstat64_fn)(int, int, struct stat64 *);
typedef int (*fxstatat_fn)(int, int, const char *, struct stat *, int);
typedef int (*fxstatat64_fn)(int, int, const char *, struct stat64 *, int);

/* The compatibility entry point NAME: under redio, libredio.so's (an
 * unversioned definition, first in the search order); in a plain run glibc's
 * versioned compat symbol, which an unversioned dlsym does not return. */
static void *compat(const char *name) {
    void *fn = dlsym(RTLD_DEFAULT, name);
    if (fn) return fn;
    if (redio_replica_info) say("%s: not exported by libredio.so", name);
    return dlvsym(RTLD_DEFAULT, name, "GLIBC_2.2.5");
}
#define DLSYM(name) compat(name)

/* stat family, rename, unlink. */
static void names(const char *dir) {
    char name[64], path[4096], path2[4096];
    struct stat st;
    struct stat64 st64;
    struct statx stx;

    snprintf(name, sizeof name, "posix.%d.dat", rank);
    join(path, dir, name);
    STAT("stat dir", stat(dir, &st), &st);
    STAT("stat", stat(path, &st), &st);
    STAT("stat64", stat64(path, &st64), &st64);
    STAT("lstat", lstat(path, &st), &st);
    STAT("lstat64", lstat64(path, &st64), &st64);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    STAT("fstatat dirfd", fstatat(dirfd, name, &st, 0), &st);
    STAT("fstatat64 dirfd", fstatat64(dirfd, name, &st64, AT_SYMLINK_NOFOLLOW), &st64);
    STAT("fstatat cwd", fstatat(AT_FDCWD, path, &st, 0), &st);
    memset(&stx, 0, sizeof stx);
    errno = 0;
    int rc = statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx);
    show_stat("statx", rc, errno, stx.stx_mode, (long long)stx.stx_size);
    memset(&stx, 0, sizeof stx);
    errno = 0;
    rc = statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_SIZE | STATX_TYPE | STATX_MODE, &stx);
    show_stat("statx dirfd", rc, errno, stx.stx_mode, (long long)stx.stx_size);

    xstat_fn xstat = (xstat_fn)DLSYM("__xstat");
    xstat_fn lxstat = (xstat_fn)DLSYM("__lxstat");
    fxstat_fn fxstat = (fxstat_fn)DLSYM("__fxstat");
    xstat64_fn xstat64 = (xstat64_fn)DLSYM("__xstat64");
    xstat64_fn lxstat64 = (xstat64_fn)DLSYM("__lxstat64");
    fxstat64_fn fxstat64 = (fxstat64_fn)DLSYM("__fxstat64");
    fxstatat_fn fxstatat = (fxstatat_fn)DLSYM("__fxstatat");
    fxstatat64_fn fxstatat64 = (fxstatat64_fn)DLSYM("__fxstatat64");
    if (xstat && lxstat && fxstat && xstat64 && lxstat64 && fxstat64 && fxstatat && fxstatat64) {
        STAT("__xstat", xstat(STAT_VER, path, &st), &st);
        STAT("__lxstat", lxstat(STAT_VER, path, &st), &st);
        STAT("__xstat64", xstat64(STAT_VER, path, &st64), &st64);
        STAT("__lxstat64", lxstat64(STAT_VER, path, &st64), &st64);
        int fd = open(path, O_RDONLY);
        STAT("__fxstat", fxstat(STAT_VER, fd, &st), &st);
        STAT("__fxstat64", fxstat64(STAT_VER, fd, &st64), &st64);
        close(fd);
        STAT("__fxstatat dirfd", fxstatat(STAT_VER, dirfd, name, &st, 0), &st);
        STAT("__fxstatat64 cwd", fxstatat64(STAT_VER, AT_FDCWD, path, &st64, 0), &st64);
        snprintf(name, sizeof name, "missing.%d.dat", rank);
        join(path2, dir, name);
        STAT("__xstat missing", xstat(STAT_VER, path2, &st), &st);
    } else {
        say("%s compat stat entry points: not found", tag);
    }

    snprintf(name, sizeof name, "missing.%d.dat", rank);
    join(path2, dir, name);
    STAT("stat missing", stat(path2, &st), &st);
    STAT("lstat64 missing", lstat64(path2, &st64), &st64);

    snprintf(name, sizeof name, "creat.%d.dat", rank);
    join(path, dir, name);
    snprintf(name, sizeof name, "renamed.%d.dat", rank);
    join(path2, dir, name);
    DO("rename", rename(path, path2));
    STAT("stat old name", stat(path, &st), &st);
    STAT("stat new name", stat(path2, &st), &st);
    DO("rename missing", rename(path, path2));
    snprintf(name, sizeof name, "creat64.%d.dat", rank);
    join(path, dir, name);
    DO("unlink", unlink(path));
    DO("unlink again", unlink(path));
    STAT("stat unlinked", stat(path, &st), &st);
    close(dirfd);
}

/* A managed fd number, once closed, is reused for a node-local file: the
 * bytes must reach the node-local file only. */
static void fd_reuse(const char *shared, const char *local) {
    char name[64], path[4096];
    tag = "reuse";
    snprintf(name, sizeof name, "reuse.%d.dat", rank);
    join(path, shared, name);
    int fd = FD("open shared", open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    DO("write shared", write(fd, "shared\n", 7));
    DO("close shared", close(fd));
    join(path, local, name);
    fd = FD("open local", open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    DO("write local", write(fd, "local, same fd number\n", 22));
    DO("close local", close(fd));
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    seed = 17u + (unsigned)rank;
    say("io_posix rank %d", rank);
    const char *dirs[2] = {argv[1], argv[2]};
    const char *tags[2] = {"shared", "local"};
    for (int i = 0; i < 2; i++) {
        tag = tags[i];
        data_file(dirs[i]);
        open_family(dirs[i]);
        names(dirs[i]);
    }
    fd_reuse(argv[1], argv[2]);
    say("io_posix rank %d done", rank);
    MPI_Finalize();
    return 0;
}
