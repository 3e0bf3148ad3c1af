/* Writes 4 blocks to a shared file and reads them back, printing every
 * result, and stops at the first error. A node-local copy is written first
 * (never coordinated, so never affected by the fault switches).
 *
 * Usage: io_faults SHARED_DIR LOCAL_DIR [write:ERRNO | read:ERRNO]
 *
 * Under redio the faults come from the test-only switches
 * REDIO_TEST_FLIP_WRITE, REDIO_TEST_FLIP_READ and REDIO_TEST_WRITE_ERRNO.
 * The optional third argument makes a plain run print what a run with a
 * detected fault must print: "write:EIO" fails the first shared write with
 * EIO (and writes nothing), "read:EIO" the first shared read;
 * "write:ENOSPC" likewise. */
#include "io.h"
#include <sys/uio.h>

#define BLOCKS 4
#define BLOCK 4096

static int rank;
static int fail_write, fail_read; /* simulated errno of the first shared write / read */

static long do_write(int fd, int b, const unsigned char *data) {
    if (fail_write) {
        errno = fail_write;
        return -1;
    }
    off_t at = (off_t)b * BLOCK;
    switch (b) {
    case 0: return write(fd, data, BLOCK);
    case 1: return pwrite(fd, data, BLOCK, at);
    case 2: {
        lseek(fd, at, SEEK_SET);
        struct iovec iov[2] = {{(void *)data, 1000}, {(void *)(data + 1000), BLOCK - 1000}};
        return writev(fd, iov, 2);
    }
    default: return pwrite64(fd, data, BLOCK, at);
    }
}

static long do_read(int fd, int b, unsigned char *data) {
    if (fail_read) {
        errno = fail_read;
        return -1;
    }
    off_t at = (off_t)b * BLOCK;
    switch (b) {
    case 0: return read(fd, data, BLOCK);
    case 1: return pread(fd, data, BLOCK, at);
    case 2: {
        lseek(fd, at, SEEK_SET);
        struct iovec iov[2] = {{data, 3000}, {data + 3000, BLOCK - 3000}};
        return readv(fd, iov, 2);
    }
    default: return pread64(fd, data, BLOCK, at);
    }
}

static int errno_by_name(const char *name) {
    if (strcmp(name, "EIO") == 0) return EIO;
    if (strcmp(name, "ENOSPC") == 0) return ENOSPC;
    return EINVAL;
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR [write:ERRNO|read:ERRNO]");
    if (argc > 3 && strncmp(argv[3], "write:", 6) == 0) fail_write = errno_by_name(argv[3] + 6);
    if (argc > 3 && strncmp(argv[3], "read:", 5) == 0) fail_read = errno_by_name(argv[3] + 5);
    say("io_faults rank %d", rank);
    static unsigned char data[BLOCK], back[BLOCK];
    char name[64], path[4096];
    snprintf(name, sizeof name, "faults.%d.dat", rank);

    tag = "local";
    join(path, argv[2], name);
    int fd = FD("open", open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    for (int b = 0; b < BLOCKS; b++) {
        fill(data, BLOCK, 61u + (unsigned)rank, (size_t)b * BLOCK);
        DO("write block", write(fd, data, BLOCK));
    }
    DO("close", close(fd));

    tag = "shared";
    join(path, argv[1], name);
    fd = FD("open", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    int b;
    for (b = 0; b < BLOCKS; b++) {
        fill(data, BLOCK, 61u + (unsigned)rank, (size_t)b * BLOCK);
        errno = 0;
        long rc = do_write(fd, b, data);
        int e = errno;
        say("shared write block %d: %ld%s%s", b, rc, rc < 0 ? " " : "", rc < 0 ? errname(e) : "");
        if (rc != BLOCK) {
            say("shared writes stopped at block %d", b);
            break;
        }
    }
    if (b == BLOCKS) say("shared writes done");
    DO("close", close(fd));

    fd = FD("open for reading", open(path, O_RDONLY));
    for (b = 0; b <= BLOCKS; b++) {
        errno = 0;
        long rc = do_read(fd, b, back);
        int e = errno;
        if (rc < 0)
            say("shared read block %d: %ld %s", b, rc, errname(e));
        else
            say("shared read block %d: %ld crc %08x", b, rc, crc(back, rc));
        if (rc <= 0) {
            say("shared reads stopped at block %d", b);
            break;
        }
    }
    DO("close", close(fd));
    say("io_faults rank %d done", rank);
    MPI_Finalize();
    return 0;
}
