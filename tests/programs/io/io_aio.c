/* POSIX asynchronous I/O and file-system queries, on SHARED_DIR and then on
 * LOCAL_DIR: aio_write / aio_read with aio_error, aio_return and
 * aio_suspend; lio_listio (LIO_WAIT and LIO_NOWAIT); aio_fsync (O_SYNC and
 * O_DSYNC); aio_cancel of a completed request; a SIGEV_SIGNAL completion
 * notification (SIGUSR2); statfs and statvfs of both directories.
 *
 * Usage: io_aio SHARED_DIR LOCAL_DIR
 *
 * Compiled -O0 (aio_read, lio_listio, statfs, ...) and with
 * -D_FILE_OFFSET_BITS=64, which links the 64 variants (aio_read64,
 * lio_listio64, statfs64, statvfs64, ...) in their place
 * (tests/interposition/coverage.rs).
 *
 * Under redio a request on a shared file is done at submission and its
 * completion signal is queued with sigqueue (si_code SI_QUEUE, not
 * SI_ASYNCIO): the log shows the signal count and whether si_value was the
 * request's, never si_code. Every byte of aio.<rank>.dat is written exactly
 * once. */
#include "io.h"
#include <aio.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>

#define BLOCK 1000
#define BLOCKS 4

static int rank;
static unsigned seed;
static unsigned char out[8 * BLOCK], in[8 * BLOCK];

/* SIGUSR2 deliveries, and those whose si_value was not the expected one. */
static volatile sig_atomic_t delivered, wrong_value;
static void on_signal(int signo, siginfo_t *info, void *context) {
    (void)context;
    if (signo == SIGUSR2) {
        delivered++;
        if (info->si_value.sival_int != 4242) wrong_value++;
    }
}

/* Waits until the request is done; prints the final aio_error result. */
static int wait_done(const char *what, struct aiocb *cb) {
    int e;
    for (int i = 0; i < 100000 && (e = aio_error(cb)) == EINPROGRESS; i++) {
        const struct aiocb *list[1] = {cb};
        aio_suspend(list, 1, NULL);
    }
    e = aio_error(cb);
    if (e == 0)
        say("%s %s aio_error: 0", tag, what);
    else
        say("%s %s aio_error: %s", tag, what, e == EINPROGRESS ? "EINPROGRESS" : errname(e));
    return e;
}

static void setup(struct aiocb *cb, int fd, void *buffer, size_t n, off_t offset, int opcode) {
    memset(cb, 0, sizeof *cb);
    cb->aio_fildes = fd;
    cb->aio_buf = buffer;
    cb->aio_nbytes = n;
    cb->aio_offset = offset;
    cb->aio_lio_opcode = opcode;
    cb->aio_sigevent.sigev_notify = SIGEV_NONE;
}

/* aio.<rank>.dat: [0, 4000) by aio_write, [4000, 6000) by lio_listio
 * (LIO_WAIT), [6000, 7000) by lio_listio (LIO_NOWAIT), [7000, 8000) by a
 * request with a completion signal; read back every way. */
static void data_file(const char *dir) {
    char name[64], path[4096];
    snprintf(name, sizeof name, "aio.%d.dat", rank);
    join(path, dir, name);
    int fd = FD("open rdwr|creat|trunc", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    if (fd < 0) return;

    /* Several blocks in flight at once, then collected one by one. */
    struct aiocb cbs[BLOCKS];
    const struct aiocb *list[BLOCKS];
    fill(out, sizeof out, seed, 0);
    for (int i = 0; i < BLOCKS; i++) {
        setup(&cbs[i], fd, out + i * BLOCK, BLOCK, i * BLOCK, LIO_WRITE);
        list[i] = &cbs[i];
        char what[64];
        snprintf(what, sizeof what, "aio_write block %d", i);
        DO(what, aio_write(&cbs[i]));
    }
    DO("aio_suspend 4 writes", aio_suspend(list, BLOCKS, NULL));
    for (int i = 0; i < BLOCKS; i++) {
        char what[64];
        snprintf(what, sizeof what, "write block %d", i);
        if (wait_done(what, &cbs[i]) == 0) {
            snprintf(what, sizeof what, "aio_return write block %d", i);
            DO(what, aio_return(&cbs[i]));
        }
    }

    /* Read back in two requests. */
    memset(in, 0, sizeof in);
    struct aiocb r1, r2;
    setup(&r1, fd, in, 2500, 0, LIO_READ);
    setup(&r2, fd, in + 2500, 1500, 2500, LIO_READ);
    DO("aio_read [0,2500)", aio_read(&r1));
    DO("aio_read [2500,4000)", aio_read(&r2));
    const struct aiocb *reads[2] = {&r1, &r2};
    DO("aio_suspend 2 reads", aio_suspend(reads, 2, NULL));
    if (wait_done("read 1", &r1) == 0) DO("aio_return read 1", aio_return(&r1));
    if (wait_done("read 2", &r2) == 0) DO("aio_return read 2", aio_return(&r2));
    say("%s aio_read back: crc %08x, %s", tag, crc(in, 4000),
        memcmp(in, out, 4000) == 0 ? "same as written" : "DIFFERENT");

    /* lio_listio, waiting: two writes and a read of the first blocks. */
    struct aiocb w1, w2, r3;
    unsigned char back[1200];
    setup(&w1, fd, out + 4000, 1000, 4000, LIO_WRITE);
    setup(&w2, fd, out + 5000, 1000, 5000, LIO_WRITE);
    setup(&r3, fd, back, 1200, 100, LIO_READ);
    struct aiocb *wait_list[3] = {&w1, &w2, &r3};
    DO("lio_listio LIO_WAIT 2 writes + read", lio_listio(LIO_WAIT, wait_list, 3, NULL));
    DO("aio_error lio write 1", aio_error(&w1));
    DO("aio_error lio write 2", aio_error(&w2));
    DO("aio_error lio read", aio_error(&r3));
    DO("aio_return lio write 1", aio_return(&w1));
    DO("aio_return lio write 2", aio_return(&w2));
    READ("aio_return lio read", aio_return(&r3), back);
    say("%s lio read: %s", tag, memcmp(back, out + 100, 1200) == 0 ? "same as written" : "DIFFERENT");

    /* lio_listio, not waiting, then aio_suspend. */
    struct aiocb w3, nop;
    setup(&w3, fd, out + 6000, 1000, 6000, LIO_WRITE);
    setup(&nop, fd, NULL, 0, 0, LIO_NOP);
    struct aiocb *nowait_list[2] = {&w3, &nop};
    DO("lio_listio LIO_NOWAIT write + nop", lio_listio(LIO_NOWAIT, nowait_list, 2, NULL));
    const struct aiocb *pending[1] = {&w3};
    struct timespec five = {5, 0};
    DO("aio_suspend nowait write", aio_suspend(pending, 1, &five));
    if (wait_done("lio nowait write", &w3) == 0) DO("aio_return lio nowait write", aio_return(&w3));

    /* A completion signal: SIGUSR2 with a value. */
    struct aiocb sig;
    setup(&sig, fd, out + 7000, 1000, 7000, LIO_WRITE);
    sig.aio_sigevent.sigev_notify = SIGEV_SIGNAL;
    sig.aio_sigevent.sigev_signo = SIGUSR2;
    sig.aio_sigevent.sigev_value.sival_int = 4242;
    delivered = 0;
    wrong_value = 0;
    DO("aio_write with SIGEV_SIGNAL", aio_write(&sig));
    if (wait_done("signalled write", &sig) == 0) {
        /* aio_cancel of a request that is done: AIO_ALLDONE. */
        int c = aio_cancel(fd, &sig);
        say("%s aio_cancel done request: %s", tag,
            c == AIO_ALLDONE ? "AIO_ALLDONE" : c == AIO_CANCELED ? "AIO_CANCELED" : "other");
        DO("aio_return signalled write", aio_return(&sig));
    }
    /* glibc signals after the result is visible: give it time to arrive. */
    for (int i = 0; i < 5000 && delivered == 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    say("%s SIGUSR2 deliveries: %d, with another si_value: %d", tag, (int)delivered,
        (int)wrong_value);

    /* The whole file, front to back. */
    memset(in, 0, sizeof in);
    struct aiocb all;
    setup(&all, fd, in, sizeof in, 0, LIO_READ);
    DO("aio_read all", aio_read(&all));
    if (wait_done("read all", &all) == 0) READ("aio_return read all", aio_return(&all), in);
    say("%s whole file: %s", tag, memcmp(in, out, sizeof out) == 0 ? "same as written" : "DIFFERENT");

    /* aio_fsync, both kinds. */
    struct aiocb sync;
    setup(&sync, fd, NULL, 0, 0, LIO_NOP);
    DO("aio_fsync O_SYNC", aio_fsync(O_SYNC, &sync));
    if (wait_done("fsync", &sync) == 0) DO("aio_return fsync", aio_return(&sync));
    setup(&sync, fd, NULL, 0, 0, LIO_NOP);
    DO("aio_fsync O_DSYNC", aio_fsync(O_DSYNC, &sync));
    if (wait_done("fdatasync", &sync) == 0) DO("aio_return fdatasync", aio_return(&sync));

    DO("close", close(fd));
}

/* statfs and statvfs of both directories: the return values, and whether
 * both directories are on the same kind of file system (the same answer
 * plain and under redio, whose local directory is remapped beside it). */
static void file_systems(const char *shared, const char *local) {
    tag = "fs";
    struct statfs a, b;
    struct statvfs va, vb;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    DO("statfs shared", statfs(shared, &a));
    DO("statfs local", statfs(local, &b));
    say("fs statfs same f_type: %s", a.f_type == b.f_type ? "yes" : "no");
    DO("statvfs shared", statvfs(shared, &va));
    DO("statvfs local", statvfs(local, &vb));
    char path[4096];
    join(path, shared, "no-such-dir");
    DO("statfs missing", statfs(path, &a));
    DO("statvfs missing", statvfs(path, &va));
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    seed = 29u + (unsigned)rank;
    say("io_aio rank %d", rank);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR2, &action, NULL);
    const char *dirs[2] = {argv[1], argv[2]};
    const char *tags[2] = {"shared", "local"};
    for (int i = 0; i < 2; i++) {
        tag = tags[i];
        data_file(dirs[i]);
    }
    file_systems(argv[1], argv[2]);
    say("io_aio rank %d done", rank);
    MPI_Finalize();
    return 0;
}
