/* Writing until the file system is full (issue 44, item 12):
 * tests/interposition/limits.rs.
 *
 * Rank 0 writes blocks of 64 KiB to SHARED_DIR/full.dat (a small file
 * system of its own) until a write fails or comes back short, then
 * fsyncs and closes it, reopens it and checks that every byte a write
 * acknowledged is in the file. The other ranks only wait. The log says
 * how the first failing write failed, what fsync and close returned, and
 * whether the acknowledged bytes are there; the number of blocks written
 * goes on a line of its own ("blocks written: N").
 *
 *   io_fullfs SHARED_DIR [LOCAL_DIR]    (LOCAL_DIR: ignored)
 */
#include "io.h"

#define BLOCK (64 * 1024)
#define MAX_BLOCKS 4096

int main(int argc, char **argv) {
    int rank = start(&argc, &argv, 1, "SHARED_DIR [LOCAL_DIR]");
    tag = "shared";
    if (rank == 0) {
        static char block[BLOCK], back[BLOCK];
        char path[4096];
        join(path, argv[1], "full.dat");
        int fd = FD("open", open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644));
        if (fd < 0) return 1;
        long acknowledged = 0, rc = 0;
        int e = 0, blocks = 0;
        for (; blocks < MAX_BLOCKS; blocks++) {
            fill(block, BLOCK, 7, (size_t)acknowledged);
            errno = 0;
            rc = write(fd, block, BLOCK);
            e = errno;
            if (rc > 0) acknowledged += rc;
            if (rc != BLOCK) break;
        }
        say("blocks written: %d", blocks);
        if (rc < 0)
            say("%s the first failing write: -1 %s", tag, errname(e));
        else
            say("%s the first failing write: short", tag);
        DO("fsync", fsync(fd));
        DO("close", close(fd));
        fd = FD("reopen", open(path, O_RDONLY));
        long present = 0;
        for (long at = 0; at < acknowledged;) {
            long want = acknowledged - at < BLOCK ? acknowledged - at : BLOCK;
            long n = pread(fd, back, want, at);
            if (n <= 0) break;
            fill(block, n, 7, (size_t)at);
            if (memcmp(block, back, n) != 0) break;
            present += n;
            at += n;
        }
        say("%s every acknowledged byte is in the file: %s", tag,
            present == acknowledged ? "yes" : "NO");
        struct stat st;
        fstat(fd, &st);
        say("%s the file ends after the acknowledged bytes: %s", tag,
            st.st_size == acknowledged ? "yes" : "NO");
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    say("rank %d done", rank);
    MPI_Finalize();
    return 0;
}
