/* Directories and name calls, on SHARED_DIR and then on LOCAL_DIR: a
 * `mkdir -p` race of every rank on the same nested tree (as Python's
 * os.makedirs(exist_ok=True) does it: mkdir, and on EEXIST stat), then stat,
 * a file created inside, a directory listing, rmdir of an empty directory,
 * and the other name and attribute calls (access, faccessat, eaccess,
 * mknod, mkfifo, remove, symlink, link, chmod, chown, utime, utimensat,
 * truncate, unlinkat, renameat, renameat2, fdopendir).
 *
 * Usage: io_dirs SHARED_DIR LOCAL_DIR
 *
 * Every line is deterministic, except lines starting with "race": which
 * rank wins a mkdir depends on timing in a plain run, so the test compares
 * those lines among the replicas of one rank only (they must take the same
 * turn), and all other lines with the plain run. */
#include "io.h"
#include <dirent.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <utime.h>

static int rank, size;

/* mkdir -p PATH, the way os.makedirs(exist_ok=True) does it: every
 * component is made with mkdir; EEXIST is fine when stat says directory.
 * The raw outcome of each mkdir goes on a "race" line. */
static int mkdir_p(const char *path) {
    char partial[4096];
    size_t n = strlen(path);
    int ok = 1;
    add("race %s mkdir -p:", tag);
    for (size_t i = 1; i <= n && ok; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        memcpy(partial, path, i);
        partial[i] = 0;
        errno = 0;
        int rc = mkdir(partial, 0755);
        int e = errno;
        if (rc == 0) {
            add(" made");
        } else if (e == EEXIST) {
            struct stat st;
            ok = stat(partial, &st) == 0 && S_ISDIR(st.st_mode);
            add(" %s", ok ? "existed" : "not-a-dir");
        } else {
            add(" %s", errname(e));
            ok = 0;
        }
    }
    end_line();
    return ok ? 0 : -1;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in DIR: sorted on a deterministic line, in readdir order on a
 * "race" line (the order is the file system's). */
static void list(const char *what, const char *dir) {
    errno = 0;
    DIR *d = opendir(dir);
    if (!d) {
        say("%s %s: opendir -1 %s", tag, what, errname(errno));
        return;
    }
    char *names[256];
    int count = 0;
    struct dirent *entry;
    add("race %s %s in readdir order:", tag, what);
    while ((entry = readdir(d)) != NULL && count < 256) {
        names[count++] = strdup(entry->d_name);
        add(" %s", entry->d_name);
    }
    end_line();
    qsort(names, count, sizeof names[0], by_name);
    add("%s %s: %d entries:", tag, what, count);
    for (int i = 0; i < count; i++) {
        add(" %s", names[i]);
        free(names[i]);
    }
    end_line();
    rewinddir(d);
    int again = 0;
    while (readdir(d) != NULL) again++;
    say("%s %s: %d entries after rewinddir", tag, what, again);
    DO("closedir", closedir(d));
}

/* The same listing through a descriptor (fdopendir, as Python's
 * os.scandir(fd) and shutil.rmtree do). */
static void list_fd(const char *what, const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    errno = 0;
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        say("%s %s: fdopendir -1 %s", tag, what, errname(errno));
        if (fd >= 0) close(fd);
        return;
    }
    int count = 0, files = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        count++;
        files += entry->d_type == DT_REG;
    }
    say("%s %s: %d entries, %d regular files", tag, what, count, files);
    DO("closedir", closedir(d));
}

static void directories(const char *root) {
    char tree[2048], path[4096], name[64];
    struct stat st;
    snprintf(tree, sizeof tree, "%s/tree/a/b/c", root);

    /* Everybody at once: the race. */
    MPI_Barrier(MPI_COMM_WORLD);
    say("%s mkdir -p tree/a/b/c: %d", tag, mkdir_p(tree));
    STAT("stat tree/a/b/c", stat(tree, &st), &st);
    MPI_Barrier(MPI_COMM_WORLD);

    /* In turn: rank 0 first, so every outcome is known. */
    join(path, root, "turns");
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/turns/sub", root);
            DO("mkdir turns", mkdir(path, 0755));
            DO("mkdirat turns/sub", mkdirat(AT_FDCWD, sub, 0755));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* A file inside, written and read back. */
    snprintf(path, sizeof path, "%s/f.%d", tree, rank);
    int fd = FD("open tree/a/b/c/f", open(path, O_RDWR | O_CREAT | O_EXCL, 0640));
    if (fd >= 0) {
        DO("write", write(fd, "inside\n", 7));
        DO("close", close(fd));
    }
    STAT("stat f", stat(path, &st), &st);
    MPI_Barrier(MPI_COMM_WORLD);
    list("listing tree/a/b/c", tree);
    list_fd("fdopendir tree/a/b/c", tree);
    MPI_Barrier(MPI_COMM_WORLD);

    /* rmdir of an empty directory, twice, and of a non-empty one. */
    snprintf(path, sizeof path, "%s/tree/empty.%d", root, rank);
    DO("mkdir empty", mkdir(path, 0700));
    STAT("stat empty", stat(path, &st), &st);
    DO("rmdir empty", rmdir(path));
    DO("rmdir empty again", rmdir(path));
    STAT("stat empty after rmdir", stat(path, &st), &st);
    snprintf(path, sizeof path, "%s/tree/a/b", root);
    DO("rmdir non-empty", rmdir(path));

    /* access */
    snprintf(path, sizeof path, "%s/f.%d", tree, rank);
    DO("access F_OK", access(path, F_OK));
    DO("access W_OK", access(path, W_OK));
    DO("access X_OK dir", access(tree, X_OK));
    snprintf(name, sizeof name, "missing.%d", rank);
    join(path, root, name);
    DO("access missing file", access(path, R_OK));
    DO("faccessat", faccessat(AT_FDCWD, path, F_OK, 0));
    DO("eaccess", eaccess(tree, R_OK | X_OK));
    DO("euidaccess", euidaccess(path, F_OK));

    /* Names: mknod (a FIFO), symlink, link, renameat, unlinkat. */
    char fifo[4096], sym[4096], hard[4096], moved[4096], file[4096];
    snprintf(file, sizeof file, "%s/f.%d", tree, rank);
    snprintf(fifo, sizeof fifo, "%s/fifo.%d", root, rank);
    snprintf(sym, sizeof sym, "%s/sym.%d", root, rank);
    snprintf(hard, sizeof hard, "%s/hard.%d", root, rank);
    snprintf(moved, sizeof moved, "%s/moved.%d", root, rank);
    DO("mknod fifo", mknod(fifo, S_IFIFO | 0600, 0));
    DO("mknod fifo again", mknod(fifo, S_IFIFO | 0600, 0));
    DO("mknodat", mknodat(AT_FDCWD, fifo, S_IFIFO | 0600, 0));
    STAT("lstat fifo", lstat(fifo, &st), &st);
    DO("symlink", symlink("tree/a/b/c", sym));
    DO("symlink again", symlink("tree/a/b/c", sym));
    DO("symlinkat", symlinkat("x", AT_FDCWD, sym));
    STAT("stat through symlink", stat(sym, &st), &st);
    DO("link", link(file, hard));
    DO("link again", link(file, hard));
    DO("linkat", linkat(AT_FDCWD, file, AT_FDCWD, hard, 0));
    STAT("stat link", stat(hard, &st), &st);
    DO("renameat", renameat(AT_FDCWD, hard, AT_FDCWD, moved));
    DO("renameat again", renameat(AT_FDCWD, hard, AT_FDCWD, moved));
    DO("renameat2 noreplace back", renameat2(AT_FDCWD, moved, AT_FDCWD, hard, RENAME_NOREPLACE));
    DO("link again for renameat2", link(file, moved));
    DO("renameat2 noreplace onto existing",
       renameat2(AT_FDCWD, hard, AT_FDCWD, moved, RENAME_NOREPLACE));
    DO("unlink hard", unlink(hard));
    DO("unlinkat moved", unlinkat(AT_FDCWD, moved, 0));
    DO("unlinkat moved again", unlinkat(AT_FDCWD, moved, 0));
    DO("unlink fifo", unlink(fifo));
    DO("mkfifo", mkfifo(fifo, 0600));
    DO("mkfifo again", mkfifo(fifo, 0600));
    DO("mkfifoat", mkfifoat(AT_FDCWD, fifo, 0600));
    DO("remove fifo", remove(fifo));
    DO("remove fifo again", remove(fifo));
    DO("unlink sym", unlink(sym));

    /* Attributes: chmod, fchmod, fchmodat, chown, lchown, fchown,
     * fchownat (to our own ids: always allowed), utime, utimes, utimensat,
     * futimens, truncate, truncate64. */
    DO("chmod 600", chmod(file, 0600));
    STAT("stat after chmod", stat(file, &st), &st);
    DO("fchmodat 640", fchmodat(AT_FDCWD, file, 0640, 0));
    DO("chown self", chown(file, getuid(), getgid()));
    DO("lchown self", lchown(file, getuid(), getgid()));
    DO("fchownat self", fchownat(AT_FDCWD, file, getuid(), getgid(), 0));
    DO("chmod missing", chmod(path, 0600));
    struct utimbuf ub = {.actime = 1000000000, .modtime = 1000000000};
    DO("utime", utime(file, &ub));
    struct timeval tv[2] = {{1100000000, 0}, {1100000000, 0}};
    DO("utimes", utimes(file, tv));
    struct timespec ts[2] = {{1200000000, 0}, {1200000000, 0}};
    DO("utimensat", utimensat(AT_FDCWD, file, ts, 0));
    STAT("stat after utimensat", stat(file, &st), &st);
    say("%s mtime %lld", tag, (long long)st.st_mtime);
    DO("truncate 3", truncate(file, 3));
    DO("truncate64 5", truncate64(file, 5));
    STAT("stat after truncate", stat(file, &st), &st);
    DO("truncate missing", truncate(path, 0));
    fd = FD("open f", open(file, O_RDWR));
    if (fd >= 0) {
        DO("fchmod 604", fchmod(fd, 0604));
        DO("fchown self", fchown(fd, getuid(), getgid()));
        struct timespec later[2] = {{1300000000, 0}, {1300000000, 0}};
        DO("ftruncate 2", ftruncate(fd, 2));
        DO("futimens", futimens(fd, later));
        DO("close f", close(fd));
    }
    STAT("stat after fchmod", stat(file, &st), &st);
    say("%s mtime %lld", tag, (long long)st.st_mtime);

    /* Clean up this rank's file; the last rank removes the tree. */
    MPI_Barrier(MPI_COMM_WORLD);
    DO("unlink f", unlink(file));
    MPI_Barrier(MPI_COMM_WORLD);
    list("listing tree/a/b/c after unlink", tree);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        snprintf(path, sizeof path, "%s/turns/sub", root);
        DO("rmdir turns/sub", rmdir(path));
        join(path, root, "turns");
        DO("unlinkat turns AT_REMOVEDIR", unlinkat(AT_FDCWD, path, AT_REMOVEDIR));
        DO("unlinkat turns again", unlinkat(AT_FDCWD, path, AT_REMOVEDIR));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    (void)name;
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    say("io_dirs rank %d", rank);
    const char *dirs[2] = {argv[1], argv[2]};
    const char *tags[2] = {"shared", "local"};
    for (int i = 0; i < 2; i++) {
        tag = tags[i];
        directories(dirs[i]);
    }
    say("io_dirs rank %d done", rank);
    MPI_Finalize();
    return 0;
}
