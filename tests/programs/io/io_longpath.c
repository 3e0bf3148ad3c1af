/* A shared file whose path is PATH_MAX - 1 bytes long (issue 44, item 5):
 * tests/interposition/limits.rs.
 *
 * Each rank builds SHARED_DIR/l<rank>aaaa…/aaaa…/…/file of exactly
 * PATH_MAX - 1 bytes (components of at most NAME_MAX bytes), creates the
 * directories, then writes, reads back, stats, renames and unlinks the
 * file, and prints one line per call. Nothing in the log depends on the
 * length of SHARED_DIR, so the plain run and every replica print the same.
 *
 *   io_longpath SHARED_DIR [LOCAL_DIR]    (LOCAL_DIR: ignored)
 */
#include "io.h"
#include <limits.h>

int main(int argc, char **argv) {
    int rank = start(&argc, &argv, 1, "SHARED_DIR [LOCAL_DIR]");
    tag = "shared";
    static char path[PATH_MAX], renamed[PATH_MAX], buf[4096];
    int n = snprintf(path, sizeof path, "%s/l%d", argv[1], rank);
    /* Directories of up to 200 bytes until the last component (the file
     * name, at most NAME_MAX) completes PATH_MAX - 1 bytes. */
    int dirs = 0;
    while (PATH_MAX - 1 - n > NAME_MAX + 1) {
        if (DO("mkdir", mkdir(path, 0755)) < 0) return 1;
        int room = PATH_MAX - 1 - n - (NAME_MAX + 1);
        int len = room < 200 ? room : 200;
        if (len < 1) break;
        path[n++] = '/';
        memset(path + n, 'a' + dirs % 26, len - 1);
        n += len - 1;
        path[n] = 0;
        dirs++;
    }
    if (DO("mkdir", mkdir(path, 0755)) < 0) return 1;
    path[n++] = '/';
    memset(path + n, 'f', PATH_MAX - 1 - n);
    n = PATH_MAX - 1;
    path[n] = 0;
    say("%s path length %zu (PATH_MAX - 1) under %d directories", tag, strlen(path), dirs + 1);

    int fd = FD("open", open(path, O_CREAT | O_RDWR | O_TRUNC, 0644));
    if (fd < 0) return 1;
    fill(buf, sizeof buf, rank, 0);
    DO("write", write(fd, buf, sizeof buf));
    DO("lseek", lseek(fd, 0, SEEK_SET));
    memset(buf, 0, sizeof buf);
    READ("read", read(fd, buf, sizeof buf), buf);
    struct stat st;
    STAT("fstat", fstat(fd, &st), &st);
    DO("fsync", fsync(fd));
    DO("close", close(fd));
    STAT("stat", stat(path, &st), &st);
    DO("access", access(path, R_OK | W_OK));
    FILE *fp = STREAM("fopen", fopen(path, "r"));
    if (fp) {
        READ("fread", (long)fread(buf, 1, sizeof buf, fp), buf);
        DO("fclose", fclose(fp));
    }
    /* A second name as long as the first: the last byte differs. */
    strcpy(renamed, path);
    renamed[n - 1] = 'g';
    DO("rename", rename(path, renamed));
    DO("unlink", unlink(renamed));
    STAT("stat after unlink", stat(renamed, &st), &st);
    MPI_Barrier(MPI_COMM_WORLD);
    say("rank %d done", rank);
    MPI_Finalize();
    return 0;
}
