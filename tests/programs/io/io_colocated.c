/* Node-local files of co-located replicas, with no configuration
 * (tests/interposition/colocated.rs): every replica of a rank runs on this
 * machine, and DIR is on a node-local file system that no configuration
 * names. The calls below go wrong when each replica makes them on the one
 * file (O_EXCL fails on all but one, O_TRUNC cuts what another wrote,
 * O_APPEND appends twice, unlink finds nothing); redio must coordinate
 * them so that the log and the files are the plain run's. A temporary
 * file named after the process id is each replica's own, renamed over a
 * common name (how Python writes its .pyc files).
 *
 *   io_colocated DIR [LOCAL_DIR]    (LOCAL_DIR: ignored, io.h's convention)
 */
#include "io.h"

#define CHUNK (64 * 1024)
#define CHUNKS 16

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: io_colocated DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tag = "local";
    const char *dir = argv[1];
    char path[4096], name[256], other[4096];
    static unsigned char buffer[CHUNK], back[CHUNK * CHUNKS];

    /* A file created exclusively: one creation, as in the plain run. */
    snprintf(name, sizeof name, "excl.%d", rank);
    join(path, dir, name);
    int fd = FD("open(O_CREAT|O_EXCL) excl", open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
    if (fd >= 0) {
        DO("write excl", write(fd, "exclusive\n", 10));
        DO("close excl", close(fd));
    }

    /* Written in chunks after O_TRUNC, then read back whole. */
    snprintf(name, sizeof name, "data.%d", rank);
    join(path, dir, name);
    fd = FD("open(O_TRUNC) data", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    for (int i = 0; i < CHUNKS && fd >= 0; i++) {
        fill(buffer, CHUNK, (unsigned)rank, (size_t)i * CHUNK);
        errno = 0;
        long rc = write(fd, buffer, CHUNK);
        if (rc != CHUNK) show("write data chunk", rc, errno);
    }
    if (fd >= 0) {
        DO("lseek data", lseek(fd, 0, SEEK_SET));
        READ("read data", read(fd, back, sizeof back), back);
        DO("close data", close(fd));
    }

    /* Appended to: once. */
    fd = FD("open(O_APPEND) data", open(path, O_WRONLY | O_APPEND));
    if (fd >= 0) {
        DO("append data", write(fd, "appended line\n", 14));
        DO("close appended", close(fd));
    }
    struct stat st;
    DO("stat data", stat(path, &st));
    say("local size data: %ld", (long)st.st_size);

    /* A stat-then-create race: the plain run creates once. */
    snprintf(name, sizeof name, "flag.%d", rank);
    join(path, dir, name);
    if (access(path, F_OK) != 0) {
        fd = FD("open flag", open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
        if (fd >= 0) DO("close flag", close(fd));
    }
    DO("unlink flag", unlink(path));

    /* Directories. */
    snprintf(name, sizeof name, "sub.%d", rank);
    join(path, dir, name);
    DO("mkdir sub", mkdir(path, 0755));
    DO("rmdir sub", rmdir(path));

    /* A temporary file named after this process, renamed over a common
     * name: each replica writes and renames its own. */
    snprintf(name, sizeof name, "tmp.%d.%d", rank, (int)getpid());
    join(path, dir, name);
    snprintf(name, sizeof name, "final.%d", rank);
    join(other, dir, name);
    fd = FD("open tmp", open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
    if (fd >= 0) {
        DO("write tmp", write(fd, "renamed into place\n", 19));
        DO("close tmp", close(fd));
    }
    DO("rename tmp final", rename(path, other));
    fd = FD("open final", open(other, O_RDONLY));
    if (fd >= 0) {
        READ("read final", read(fd, back, sizeof back), back);
        DO("close final", close(fd));
    }
    say("rank %d done", rank);
    MPI_Finalize();
    return 0;
}
