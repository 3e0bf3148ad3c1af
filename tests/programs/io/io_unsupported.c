/* Calls redio does not coordinate: mmap of a file, sendfile,
 * copy_file_range, splice. On node-local files they work as usual; on a
 * managed (shared) file redio refuses them with ENOTSUP. The shared results
 * are printed on lines starting with "[refusable]": in a plain run they
 * report success, under redio they must end in "-1 ENOTSUP". The test
 * rewrites the plain lines accordingly before comparing.
 *
 * Usage: io_unsupported SHARED_DIR LOCAL_DIR
 *
 * With -D_FILE_OFFSET_BITS=64, mmap and sendfile become mmap64 and
 * sendfile64. Files named *.scratch receive what the refused calls would
 * have written; the test does not compare them. */
#include "io.h"
#include <sys/mman.h>
#include <sys/sendfile.h>

static int rank;

/* Prints "[refusable] TAG WHAT: RESULT" for a shared file, "TAG WHAT:
 * RESULT" for a local one. */
static int shared_pass;
static void result(const char *what, long rc, int e, const char *extra) {
    add("%s%s %s: ", shared_pass ? "[refusable] " : "", tag, what);
    if (rc < 0)
        add("%ld %s", rc, errname(e));
    else
        add("%ld%s", rc, extra);
    end_line();
}
#define TRY(what, expr)              \
    do {                             \
        errno = 0;                   \
        long rc_ = (long)(expr);     \
        int e_ = errno;              \
        result(what, rc_, e_, "");   \
    } while (0)

static void run(const char *dir, const char *local) {
    char name[64], path[4096], sink[4096];
    static unsigned char data[8192];
    snprintf(name, sizeof name, "unsupported.%d.dat", rank);
    join(path, dir, name);
    int fd = FD("open", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    fill(data, sizeof data, 3u + (unsigned)rank, 0);
    DO("write 8192", write(fd, data, sizeof data));

    /* mmap, shared and private mappings. */
    for (int i = 0; i < 2; i++) {
        errno = 0;
        void *map = mmap(NULL, 8192, PROT_READ, i == 0 ? MAP_SHARED : MAP_PRIVATE, fd, 0);
        int e = errno;
        const char *what = i == 0 ? "mmap shared" : "mmap private";
        if (map == MAP_FAILED) {
            result(what, -1, e, "");
        } else {
            char extra[64];
            snprintf(extra, sizeof extra, " crc %08x", crc(map, 8192));
            result(what, 0, 0, extra);
            munmap(map, 8192);
        }
    }

    /* The other end of each transfer is a node-local scratch file. */
    snprintf(name, sizeof name, "sink.%d.scratch", rank);
    join(sink, local, name);
    int other = open(sink, O_RDWR | O_CREAT | O_TRUNC, 0644);
    off_t offset = 0;
    TRY("sendfile from it", sendfile(other, fd, &offset, 1000));
    offset = 0;
    TRY("copy_file_range from it", copy_file_range(fd, &offset, other, NULL, 1000, 0));
    int pipes[2];
    if (pipe(pipes) != 0) say("pipe failed");
    offset = 0;
    TRY("splice from it", splice(fd, &offset, pipes[1], NULL, 1000, 0));
    close(pipes[0]);
    close(pipes[1]);

    /* And into it: a second managed fd as the destination. */
    snprintf(name, sizeof name, "target.%d.scratch", rank);
    char target[4096];
    join(target, dir, name);
    int into = open(target, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (write(other, data, 1000) != 1000) say("write to the scratch file failed");
    offset = 0;
    TRY("sendfile into it", sendfile(into, other, &offset, 1000));
    off_t offset_out = 0;
    offset = 0;
    TRY("copy_file_range into it", copy_file_range(other, &offset, into, &offset_out, 1000, 0));
    if (pipe(pipes) != 0) say("pipe failed");
    if (write(pipes[1], data, 1000) != 1000) say("write to the pipe failed");
    offset_out = 0;
    TRY("splice into it", splice(pipes[0], NULL, into, &offset_out, 1000, 0));
    close(pipes[0]);
    close(pipes[1]);
    close(into);
    close(other);

    /* The fd still works for ordinary I/O afterwards. */
    static unsigned char back[8192];
    READ("pread after", pread(fd, back, sizeof back, 0), back);
    DO("close", close(fd));
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    say("io_unsupported rank %d", rank);
    tag = "shared";
    shared_pass = 1;
    run(argv[1], argv[2]);
    tag = "local";
    shared_pass = 0;
    run(argv[2], argv[2]);
    say("io_unsupported rank %d done", rank);
    MPI_Finalize();
    return 0;
}
