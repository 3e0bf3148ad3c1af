/* Locks on a file every rank opens, on SHARED_DIR and then on LOCAL_DIR:
 * fcntl record locks (F_SETLK, F_SETLKW, F_GETLK), open-file-description
 * locks (F_OFD_SETLK, F_OFD_SETLKW, F_OFD_GETLK), flock and lockf, with
 * conflicts between ranks (rank 0 holds, rank 1 tries: EAGAIN,
 * EWOULDBLOCK, EACCES), a rank that waits in F_SETLKW until the holder
 * unlocks, and a lock on a file of its own (what serial HDF5 does at
 * H5Fcreate: flock(LOCK_EX | LOCK_NB)).
 *
 * Usage: io_locks SHARED_DIR LOCAL_DIR
 *
 * Needs at least 2 ranks; ranks >= 2 only take part in the barriers. Every
 * line is deterministic (no pids: F_GETLK reports type, start and length).
 * Under redio a replica set takes a lock on a shared file once (its
 * leader); node-local files pass through, and every replica's own copy of
 * the local directory sees the same sequence as the plain run. */
#include "io.h"
#include <sys/file.h>

static int rank;

static void turn(void) { MPI_Barrier(MPI_COMM_WORLD); }

static struct flock region(short type, off_t start, off_t len) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    return fl;
}

static const char *type_name(short type) {
    switch (type) {
    case F_RDLCK: return "F_RDLCK";
    case F_WRLCK: return "F_WRLCK";
    case F_UNLCK: return "F_UNLCK";
    default: return "?";
    }
}

/* F_GETLK / F_OFD_GETLK of [start, start+len) for a write lock. */
static void query(const char *what, int fd, int cmd, off_t start, off_t len) {
    struct flock fl = region(F_WRLCK, start, len);
    errno = 0;
    int rc = fcntl(fd, cmd, &fl);
    int e = errno;
    if (rc < 0)
        say("%s %s: %d %s", tag, what, rc, errname(e));
    else if (fl.l_type == F_UNLCK)
        say("%s %s: %d F_UNLCK", tag, what, rc);
    else
        say("%s %s: %d %s start %lld len %lld", tag, what, rc, type_name(fl.l_type),
            (long long)fl.l_start, (long long)fl.l_len);
}

#define SETLK(what, fd, cmd, type, start, len)               \
    ({                                                       \
        struct flock fl_ = region((type), (start), (len));   \
        DO(what, fcntl((fd), (cmd), &fl_));                  \
    })

static void locks(const char *dir) {
    char path[4096], mine[4096], name[64];
    join(path, dir, "locks.dat");
    /* Rank 0 creates the file, then everybody opens it. */
    if (rank == 0) {
        int fd = FD("create locks.dat", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
        DO("write", write(fd, "0123456789abcdefghij", 20));
        DO("close", close(fd));
    }
    turn();
    int fd = FD("open locks.dat", open(path, O_RDWR));
    turn();

    /* Record locks. */
    if (rank == 0) SETLK("F_SETLK wr [0,100)", fd, F_SETLK, F_WRLCK, 0, 100);
    turn();
    if (rank == 1) {
        SETLK("F_SETLK wr [0,100) held by 0", fd, F_SETLK, F_WRLCK, 0, 100);
        SETLK("F_SETLK rd [50,10) held by 0", fd, F_SETLK, F_RDLCK, 50, 10);
        query("F_GETLK [0,100)", fd, F_GETLK, 0, 100);
        query("F_GETLK [200,10)", fd, F_GETLK, 200, 10);
        SETLK("F_SETLK wr [200,100)", fd, F_SETLK, F_WRLCK, 200, 100);
    }
    turn();
    if (rank == 0) {
        query("F_GETLK [250,1)", fd, F_GETLK, 250, 1);
        SETLK("F_SETLK unlock [0,100)", fd, F_SETLK, F_UNLCK, 0, 100);
    }
    turn();
    if (rank == 1) {
        SETLK("F_SETLKW wr [0,100) now free", fd, F_SETLKW, F_WRLCK, 0, 100);
        SETLK("F_SETLK unlock all", fd, F_SETLK, F_UNLCK, 0, 0);
    }
    turn();

    /* A rank that waits: rank 0 holds, rank 1 blocks in F_SETLKW until
     * rank 0 has written under the lock and unlocked. */
    if (rank == 0) SETLK("F_SETLK wr [0,20) before the wait", fd, F_SETLK, F_WRLCK, 0, 20);
    turn();
    if (rank == 0) {
        usleep(300000);
        DO("pwrite under the lock", pwrite(fd, "ABCDEFGHIJ", 10, 0));
        SETLK("F_SETLK unlock [0,20)", fd, F_SETLK, F_UNLCK, 0, 20);
    } else if (rank == 1) {
        SETLK("F_SETLKW wr [0,20) waits for 0", fd, F_SETLKW, F_WRLCK, 0, 20);
        char buffer[20];
        READ("pread after the wait", pread(fd, buffer, 20, 0), buffer);
        SETLK("F_SETLK unlock [0,20)", fd, F_SETLK, F_UNLCK, 0, 20);
    }
    turn();

    /* Open file description locks. */
    if (rank == 0) SETLK("F_OFD_SETLK wr [0,10)", fd, F_OFD_SETLK, F_WRLCK, 0, 10);
    turn();
    if (rank == 1) {
        SETLK("F_OFD_SETLK wr [0,10) held by 0", fd, F_OFD_SETLK, F_WRLCK, 0, 10);
        query("F_OFD_GETLK [5,1)", fd, F_OFD_GETLK, 5, 1);
        SETLK("F_OFD_SETLK rd [10,10)", fd, F_OFD_SETLK, F_RDLCK, 10, 10);
    }
    turn();
    if (rank == 0) {
        query("F_OFD_GETLK [10,10)", fd, F_OFD_GETLK, 10, 10);
        SETLK("F_OFD_SETLK unlock [0,10)", fd, F_OFD_SETLK, F_UNLCK, 0, 10);
    }
    turn();
    if (rank == 1) {
        SETLK("F_OFD_SETLKW wr [0,10) now free", fd, F_OFD_SETLKW, F_WRLCK, 0, 10);
        SETLK("F_OFD_SETLK unlock all", fd, F_OFD_SETLK, F_UNLCK, 0, 0);
    }
    turn();

    /* flock */
    if (rank == 0) DO("flock LOCK_EX|LOCK_NB", flock(fd, LOCK_EX | LOCK_NB));
    turn();
    if (rank == 1) {
        DO("flock LOCK_SH|LOCK_NB held by 0", flock(fd, LOCK_SH | LOCK_NB));
        DO("flock LOCK_EX|LOCK_NB held by 0", flock(fd, LOCK_EX | LOCK_NB));
    }
    turn();
    if (rank == 0) DO("flock LOCK_UN", flock(fd, LOCK_UN));
    turn();
    if (rank == 1) {
        DO("flock LOCK_EX now free", flock(fd, LOCK_EX));
        DO("flock LOCK_UN", flock(fd, LOCK_UN));
    }
    turn();
    if (rank < 2) {
        DO("flock LOCK_SH|LOCK_NB together", flock(fd, LOCK_SH | LOCK_NB));
    }
    turn();
    if (rank < 2) DO("flock LOCK_UN", flock(fd, LOCK_UN));
    turn();

    /* A region relative to the file offset (l_whence = SEEK_CUR). */
    if (rank == 0) {
        DO("lseek 8", lseek(fd, 8, SEEK_SET));
        struct flock fl = region(F_WRLCK, 2, 3);
        fl.l_whence = SEEK_CUR;
        DO("F_SETLK wr SEEK_CUR+2 len 3", fcntl(fd, F_SETLK, &fl));
    }
    turn();
    if (rank == 1) {
        query("F_GETLK [0,10)", fd, F_GETLK, 0, 10);
        query("F_GETLK [12,1)", fd, F_GETLK, 12, 1);
    }
    turn();
    if (rank == 0) SETLK("F_SETLK unlock all", fd, F_SETLK, F_UNLCK, 0, 0);
    turn();

    /* lockf: from the file offset, 0 = to the end. */
    DO("lseek 5", lseek(fd, 5, SEEK_SET));
    if (rank == 0) DO("lockf F_TLOCK", lockf(fd, F_TLOCK, 0));
    turn();
    if (rank == 1) {
        query("F_GETLK [0,5) after lockf", fd, F_GETLK, 0, 5);
        query("F_GETLK [5,1) after lockf", fd, F_GETLK, 5, 1);
        DO("lockf F_TEST held by 0", lockf(fd, F_TEST, 0));
        DO("lockf F_TLOCK held by 0", lockf(fd, F_TLOCK, 0));
    }
    turn();
    if (rank == 0) {
        DO("lockf F_TEST own lock", lockf(fd, F_TEST, 0));
        DO("lockf F_ULOCK", lockf(fd, F_ULOCK, 0));
    }
    turn();
    if (rank == 1) {
        DO("lockf F_LOCK now free", lockf(fd, F_LOCK, 0));
        DO("lockf F_ULOCK", lockf(fd, F_ULOCK, 0));
    }
    turn();
    DO("close locks.dat", close(fd));

    /* A file of its own, locked the way serial HDF5 locks at H5Fcreate. */
    snprintf(name, sizeof name, "own.%d.dat", rank);
    join(mine, dir, name);
    int own = FD("create own", open(mine, O_RDWR | O_CREAT | O_TRUNC, 0644));
    DO("flock own LOCK_EX|LOCK_NB", flock(own, LOCK_EX | LOCK_NB));
    SETLK("F_SETLK own wr", own, F_SETLK, F_WRLCK, 0, 0);
    DO("write own", write(own, "mine\n", 5));
    DO("flock own LOCK_UN", flock(own, LOCK_UN));
    DO("close own", close(own));
    turn();
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    say("io_locks rank %d", rank);
    const char *dirs[2] = {argv[1], argv[2]};
    const char *tags[2] = {"shared", "local"};
    for (int i = 0; i < 2; i++) {
        tag = tags[i];
        locks(dirs[i]);
    }
    say("io_locks rank %d done", rank);
    MPI_Finalize();
    return 0;
}
