/* A program at its descriptor limit (issue 44, item 6):
 * tests/interposition/limits.rs.
 *
 * Sets its soft RLIMIT_NOFILE to LIMIT (default 1024; the hard limit stays)
 * before MPI_Init, as `ulimit -Sn LIMIT` would, then opens shared files
 * until an open fails, and prints how many it opened and the failure.
 * Then it closes one, opens another in its place (which must succeed),
 * writes to it, and closes everything. A plain run and every replica must
 * fail with the same errno at the same call; the count differs from the
 * plain run's only by the MPI library's own descriptors (more processes,
 * more connections). The program also prints how many of its descriptors
 * sit at or above the limit (never the MPI library's or its own: only
 * what the runtime moved there).
 *
 *   io_fdlimit SHARED_DIR [LOCAL_DIR [LIMIT]]    (LOCAL_DIR: ignored)
 */
#include "io.h"
#include <dirent.h>
#include <sys/resource.h>

#define MAX_FILES 65536

int main(int argc, char **argv) {
    long limit = argc > 3 ? atol(argv[3]) : 1024;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max != RLIM_INFINITY && (rlim_t)limit > rl.rlim_max) limit = (long)rl.rlim_max;
    rl.rlim_cur = (rlim_t)limit;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        perror("setrlimit");
        return 2;
    }
    int rank = start(&argc, &argv, 1, "SHARED_DIR [LOCAL_DIR [LIMIT]]");
    tag = "shared";
    static int fds[MAX_FILES];
    char path[4096], name[64];
    int opened = 0, e = 0;
    while (opened < MAX_FILES) {
        snprintf(name, sizeof name, "fd.%d.%d", rank, opened);
        join(path, argv[1], name);
        errno = 0;
        int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
        e = errno;
        if (fd < 0) break;
        fds[opened++] = fd;
    }
    say("%s soft limit %ld: opened %d files, then open: -1 %s", tag, limit, opened,
        errname(e));
    /* Counted with one descriptor freed for the listing itself. */
    if (opened > 0) {
        close(fds[--opened]);
        int above = 0;
        DIR *d = opendir("/proc/self/fd");
        for (struct dirent *de; d && (de = readdir(d));)
            above += de->d_name[0] != '.' && atol(de->d_name) >= limit;
        if (d) closedir(d);
        say("descriptors at or above the limit: %d", above);
        /* Back at the limit: the file closed for the listing, again. */
        snprintf(name, sizeof name, "fd.%d.%d", rank, opened);
        join(path, argv[1], name);
        fds[opened] = open(path, O_RDWR);
        if (fds[opened] >= 0) opened++;
    }
    /* The call right after the failure, too: a second open fails alike. */
    snprintf(name, sizeof name, "fd.%d.again", rank);
    join(path, argv[1], name);
    FD("open again at the limit", open(path, O_CREAT | O_RDWR, 0644));
    STREAM("fopen at the limit", fopen(path, "w"));
    if (opened > 0) {
        DO("close one", close(fds[--opened]));
        int fd = FD("open in its place", open(path, O_CREAT | O_RDWR | O_TRUNC, 0644));
        if (fd >= 0) {
            DO("write", write(fd, "at the limit\n", 13));
            fds[opened++] = fd;
        }
    }
    int failed = 0;
    for (int i = 0; i < opened; i++) failed += close(fds[i]) != 0;
    say("%s closed every file, %d failed", tag, failed);
    MPI_Barrier(MPI_COMM_WORLD);
    say("rank %d done", rank);
    MPI_Finalize();
    return 0;
}
